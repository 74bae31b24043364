#!/usr/bin/python3
"""Would choosing the gated term's share on sets held out help a set never seen?

The gated calibration (docs/TRAINING.md, `calibrate --pooled-term gated`) picks
the pooled cosine's share by the dev macro AUC of the sets it is fitted on. For
each network of the held-out loop (scripts/f5_leave_one_out.sh: trained without
one set), this refits the gated probability at every share on the other five
sets' dev parts and the near-miss dev pairs, as calibrate does (Platt scaling of
the standardized sum, the network's own calibration as the gate), and scores the
held-out set's dev part at each share. It then compares the share calibrate
picks with one picked by the other held-out networks' held-out AUC (nested: the
set scored never helps choose its share). A second table loosens the gate: within
a band of the network's probability around its threshold the gated probability
is replaced by the plain linear one, so the cosine may turn the verdict of a pair
the network is unsure of; for each band width the share is calibrate's pick, and
the near-miss dev negatives at or over the threshold are counted. With --guard,
a third table keeps the gate on every pair where an identity rule has something
to say, read from the texts alone: the numbers (digits or number words) differ,
the negators differ in count, an opposite of the file's lexicon faces its
partner (scripts/opposite_subset.py's forms), or the same words come in another
order.

Usage: scripts/loso_share_probe.py SCORES.jsonl LOSO_DIR [--guard FILE.valn PAIRS.jsonl ...]
  SCORES.jsonl  pairs-eval --scores-out over the six dev parts and the near-miss
                dev pairs (scripts/pooled_share_table.py pairs), with --verifier
                cosine and --verifier f5:LOSO_DIR/SET.valn for each set
  LOSO_DIR      the loop's files: SET.valn and its summary SET.json
  --guard       an F5 file whose lexicon (LEXA, LEXW) the guard reads, and the
                pair files scored, each named as pairs-eval names it (its
                folder and stem: "paws/dev")
Prints a table per held-out set and one JSON object on the last line. Needs
numpy (Debian's python3-numpy).
"""
import collections
import json
import math
import os
import re
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from opposite_subset import lexicon_pairs, opposite_forms, sections  # noqa: E402
from pooled_share_table import auc, platt  # noqa: E402

SETS = ["paws", "qqp", "sick", "mrpc", "apt", "stsb"]
SHARES = [k / 10 for k in range(11)]
BANDS = [0.0, 0.05, 0.1, 0.15, 0.2, 0.3]


def read_scores(path):
    rows = collections.defaultdict(dict)
    with open(path) as f:
        for n, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                r = json.loads(line)
                rows[(r["scorer"], r["file"])][r["line"]] = (r["score"], r["label"])
            except (json.JSONDecodeError, KeyError) as e:
                sys.exit(f"{path}:{n}: not a pairs-eval score line ({e})")
    return rows


def column(rows, scorer, file):
    r = rows.get((scorer, file))
    if not r:
        sys.exit(f"no scores of {scorer} on {file}")
    keys = sorted(r)
    return np.array([r[k][0] for k in keys], float), np.array([r[k][1] for k in keys])


def logit(p):
    p = np.clip(p, 1e-7, 1 - 1e-7)
    return np.log(p / (1 - p))


def structure_flags(valn, pair_paths, rows):
    """Per scored file, whether each scored pair (in line order) carries an identity signal."""
    forms = opposite_forms(lexicon_pairs(valn))
    words = sections(valn, ("LEXW",)).get("LEXW", "").splitlines()
    numbers = {w.split("\t")[1] for w in words if w.startswith("number\t")}
    negators = {w.split("\t")[1] for w in words if w.startswith("negator\t")} | {"n't"}

    def flag(a, b):
        ta, tb = (re.findall(r"[a-z]+|\d+(?:[.,]\d+)*|n't", t.lower()) for t in (a, b))
        nums = [sorted(x for x in t if x[0].isdigit() or x in numbers) for t in (ta, tb)]
        negs = [sum(x in negators for x in t) for t in (ta, tb)]
        opposite = any((x, y) in forms for x in set(ta) for y in set(tb) if x != y)
        reordered = sorted(ta) == sorted(tb) and ta != tb
        return nums[0] != nums[1] or negs[0] != negs[1] or opposite or reordered

    by_key = {}
    for path in pair_paths:
        key = f"{os.path.basename(os.path.dirname(os.path.abspath(path)))}/{os.path.splitext(os.path.basename(path))[0]}"
        with open(path) as f:
            by_key[key] = f.read().splitlines()
    flags = {}
    for (scorer, file), scored in rows.items():
        if file in flags or scorer != "cosine":
            continue
        if file not in by_key:
            sys.exit(f"--guard: no pair file named {file} (give its .jsonl)")
        lines = by_key[file]
        out = []
        for n in sorted(scored):
            pair = json.loads(lines[n - 1])
            out.append(flag(pair["a"], pair["b"]))
        flags[file] = np.array(out, bool)
    return flags


def held_out_curve(rows, loso_dir, held, nearmiss_file, band=0.0, flags=None):
    scorer = f"f5:{loso_dir}/{held}.valn"
    with open(os.path.join(loso_dir, f"{held}.json")) as f:
        cal = json.load(f)["calibration"]
    if cal["pooled_term"] != "none":
        sys.exit(f"{loso_dir}/{held}.json: the network's own calibration has a pooled term")
    threshold = cal["threshold"]
    groups = []
    files = [f"{s}/dev" for s in SETS if s != held] + [nearmiss_file]
    guarded = {f: (flags[f] if flags else None) for f in files + [f"{held}/dev"]}
    for file in files:
        p, y = column(rows, scorer, file)
        c, _ = column(rows, "cosine", file)
        groups.append((p, c, y, guarded[file]))
    # The file's probability is an affine map of the network's logit; the
    # standardized sum and Platt's refit make the map irrelevant.
    w = np.concatenate([np.full(len(g[0]), 1 / len(g[0])) for g in groups])
    z = np.concatenate([logit(g[0]) for g in groups])
    c = np.concatenate([g[1] for g in groups])
    y = np.concatenate([g[2] for g in groups])
    zm = (w * z).sum() / w.sum()
    zs = math.sqrt((w * z * z).sum() / w.sum() - zm * zm)
    cm = (w * c).sum() / w.sum()
    cs = math.sqrt((w * c * c).sum() / w.sum() - cm * cm)
    ph, yh = column(rows, scorer, f"{held}/dev")
    ch, _ = column(rows, "cosine", f"{held}/dev")
    curve = []
    for share in SHARES:
        if share > 0:  # else the network's own calibration
            a, b = platt((1 - share) * z / zs + share * (c - cm) / cs, y, w)

            def gated(p, cos, signal=None, a=a, b=b, share=share):
                q = 1 / (1 + np.exp(-(a * ((1 - share) * logit(p) / zs + share * (cos - cm) / cs) + b)))
                kept = np.where(p < threshold, np.minimum(q, p), np.maximum(q, threshold))
                loose = np.abs(p - threshold) < band
                if signal is not None:
                    loose &= ~signal
                return np.where(loose, q, kept)
        dev = float(np.mean([auc(gated(g[0], g[1], g[3]) if share else g[0], g[2]) for g in groups]))
        held_p = gated(ph, ch, guarded[f"{held}/dev"]) if share else ph
        nm_p, nm_y = (gated(groups[-1][0], groups[-1][1], groups[-1][3]) if share else groups[-1][0]), groups[-1][2]
        curve.append({"share": share, "dev_macro_auc": dev, "held_out_auc": float(auc(held_p, yh)),
                      "held_out_accuracy": float(((held_p >= threshold) == (yh == 1)).mean()),
                      "nearmiss_served": float((nm_p[nm_y == 0] >= threshold).mean())})
    return curve, float(auc(ch, yh))


def calibrate_pick(curve):
    inner = [k for k, _ in enumerate(SHARES) if 0 < SHARES[k] < 1]  # calibrate's grid
    return max(inner, key=lambda k: (curve[k]["dev_macro_auc"], -k))


def main():
    if len(sys.argv) < 3 or (len(sys.argv) > 3 and (sys.argv[3] != "--guard" or len(sys.argv) < 6)):
        print(__doc__.strip(), file=sys.stderr)
        sys.exit(2)
    rows = read_scores(sys.argv[1])
    loso_dir = sys.argv[2].rstrip("/")
    nearmiss = sorted({f for (_, f) in rows if f not in {f"{s}/dev" for s in SETS}})
    if len(nearmiss) != 1:
        sys.exit(f"expected one near-miss pair file beside the six dev parts, found {nearmiss}")
    curves, cosine = {}, {}
    for held in SETS:
        curves[held], cosine[held] = held_out_curve(rows, loso_dir, held, nearmiss[0])
    report = {"sets": {}}
    print("| held-out set | pooled cosine | network alone | calibrate's share | its AUC | nested share | its AUC |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for held in SETS:
        inner = [k for k, _ in enumerate(SHARES) if 0 < SHARES[k] < 1]  # calibrate's grid
        own = calibrate_pick(curves[held])
        nested = max(inner, key=lambda k: (np.mean([curves[o][k]["held_out_auc"] for o in SETS if o != held]), -k))
        row = {"cosine": cosine[held], "network": curves[held][0]["held_out_auc"],
               "calibrate_share": SHARES[own], "calibrate_auc": curves[held][own]["held_out_auc"],
               "nested_share": SHARES[nested], "nested_auc": curves[held][nested]["held_out_auc"],
               "curve": curves[held]}
        report["sets"][held] = row
        print(f"| {held} | {row['cosine']:.3f} | {row['network']:.3f} | {row['calibrate_share']:.1f} | "
              f"{row['calibrate_auc']:.4f} | {row['nested_share']:.1f} | {row['nested_auc']:.4f} |")
    for key in ("cosine", "network", "calibrate_auc", "nested_auc"):
        report[f"macro_{key}"] = float(np.mean([report["sets"][h][key] for h in SETS]))
    print(f"| macro | {report['macro_cosine']:.4f} | {report['macro_network']:.4f} | | "
          f"{report['macro_calibrate_auc']:.4f} | | {report['macro_nested_auc']:.4f} |")
    print("| every set at one share: " + ", ".join(
        f"{s:.1f} {np.mean([curves[h][k]['held_out_auc'] for h in SETS]):.4f}" for k, s in enumerate(SHARES)) + " |")
    print()
    print("| band | held-out macro AUC | " + " | ".join(SETS) + " | held-out verdict accuracy | near-miss dev negatives served |")
    print("|---:|---:|" + "---:|" * len(SETS) + "---:|---:|")
    report["bands"] = []
    flags = structure_flags(sys.argv[4], sys.argv[5:], rows) if len(sys.argv) > 3 else None
    for guard, band in [(None, b) for b in BANDS] + ([(flags, b) for b in BANDS[1:]] if flags else []):
        picked = {}
        for held in SETS:
            curve = held_out_curve(rows, loso_dir, held, nearmiss[0], band, guard)[0] if band else curves[held]
            picked[held] = curve[calibrate_pick(curve)]
        row = {"band": band, "guard": guard is not None, "macro_auc": float(np.mean([picked[h]["held_out_auc"] for h in SETS])),
               "auc": {h: picked[h]["held_out_auc"] for h in SETS},
               "mean_accuracy": float(np.mean([picked[h]["held_out_accuracy"] for h in SETS])),
               "nearmiss_served": float(np.mean([picked[h]["nearmiss_served"] for h in SETS]))}
        report["bands"].append(row)
        print(f"| {band:.2f}{' guarded' if guard is not None else ''} | {row['macro_auc']:.4f} | " + " | ".join(f"{row['auc'][h]:.3f}" for h in SETS) +
              f" | {row['mean_accuracy']:.3f} | {row['nearmiss_served']:.3f} |")
    print(json.dumps(report))


if __name__ == "__main__":
    main()
