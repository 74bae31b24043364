"""scripts/loso_share_probe.py: on a hand-made held-out loop, the tables come out
for every set; a loosened gate serves near-misses the network was unsure of,
and the guard keeps them refused where the texts differ by a negator; and its
errors."""
import json
import random
import subprocess
import sys

from conftest import ROOT

SCRIPT = ROOT / "scripts" / "loso_share_probe.py"
SETS = ["paws", "qqp", "sick", "mrpc", "apt", "stsb"]
LEXICON = ROOT / "assets" / "verifiers" / "default.valn"


def run(*args):
    return subprocess.run([sys.executable, str(SCRIPT), *map(str, args)], capture_output=True, text=True)


def toy_loop(tmp_path):
    """Six held-out networks, six dev sets and near-miss pairs whose negatives
    (a negator added) the networks score just under their threshold."""
    rng = random.Random(5)
    loso = tmp_path / "loso"
    loso.mkdir()
    files = {}
    for s in SETS:
        (loso / f"{s}.json").write_text(json.dumps({"calibration": {"pooled_term": "none", "threshold": 0.5}}))
        pairs = []
        for i in range(60):
            label = i % 2
            pairs.append({"a": f"what is item {i} made of", "b": f"what is thing {i} built from", "label": label})
        files[f"{s}/dev"] = pairs
    files["probe/dev_nearmiss"] = [
        {"a": f"is door {i} open", "b": f"is door {i} open now" if i % 2 == 0 else f"is door {i} not open",
         "label": int(i % 2 == 0)} for i in range(40)]
    paths, rows = [], []
    for key, pairs in files.items():
        folder, stem = key.split("/")
        path = tmp_path / folder / f"{stem}.jsonl"
        path.parent.mkdir(exist_ok=True)
        path.write_text("".join(json.dumps(p) + "\n" for p in pairs))
        paths.append(path)
        for n, p in enumerate(pairs, 1):
            nearmiss = key.startswith("probe")
            cosine = 0.97 if nearmiss else min(0.99, rng.uniform(0.5, 0.85) + 0.1 * p["label"])
            rows.append({"scorer": "cosine", "file": key, "line": n, "label": p["label"], "score": cosine})
            for s in SETS:
                if nearmiss:
                    prob = 0.9 if p["label"] else 0.45  # the negatives: unsure, under 0.5
                else:
                    prob = min(0.99, max(0.01, rng.uniform(0.2, 0.7) + 0.2 * p["label"]))
                rows.append({"scorer": f"f5:{loso}/{s}.valn", "file": key, "line": n, "label": p["label"],
                             "score": prob})
    scores = tmp_path / "scores.jsonl"
    scores.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return scores, loso, paths


def test_the_guard_keeps_refusing_what_the_texts_flag(tmp_path):
    scores, loso, paths = toy_loop(tmp_path)
    r = run(scores, loso, "--guard", LEXICON, *paths)
    assert r.returncode == 0, r.stderr
    report = json.loads(r.stdout.splitlines()[-1])
    assert set(report["sets"]) == set(SETS)
    assert all(0 <= report["sets"][s]["calibrate_auc"] <= 1 for s in SETS)
    bands = {(b["band"], b["guard"]): b for b in report["bands"]}
    assert bands[(0.0, False)]["nearmiss_served"] == 0.0  # the gate: all under the threshold
    assert bands[(0.1, False)]["nearmiss_served"] == 1.0  # loosened: the cosine serves them all
    assert bands[(0.1, True)]["nearmiss_served"] == 0.0   # guarded: "not" keeps the gate
    r = run(scores, loso)  # without --guard: no guarded rows
    assert r.returncode == 0, r.stderr
    assert not any(b["guard"] for b in json.loads(r.stdout.splitlines()[-1])["bands"])


def test_errors(tmp_path):
    scores, loso, paths = toy_loop(tmp_path)
    r = run(scores, loso, "--guard", LEXICON, *paths[:-1])  # the near-miss pairs left out
    assert r.returncode != 0 and "probe/dev_nearmiss" in r.stderr
    r = run(scores, loso, "--guard")
    assert r.returncode == 2
    (loso / "qqp.json").write_text(json.dumps({"calibration": {"pooled_term": "gated", "threshold": 0.5}}))
    r = run(scores, loso)
    assert r.returncode != 0 and "qqp.json" in r.stderr
    scores.write_text('{"file": "x"}\n')
    r = run(scores, loso)
    assert r.returncode != 0 and "scores.jsonl:1" in r.stderr
