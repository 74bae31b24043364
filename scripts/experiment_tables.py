#!/usr/bin/env python3
"""Markdown tables for docs/RESULTS.md from the summaries that `verity experiment`
writes (out/exp/<name>/summary.json). Usage: experiment_tables.py SUMMARY.json [...]"""
import json
import sys


def pm(m, digits=4):
    return f"{m['mean']:.{digits}f} ± {m['std']:.{digits}f}"


def tradeoff(s):
    out = []
    for backbone, b in s["backbones"].items():
        out.append(f"**{backbone}** ({s['triples_per_model']} triples per model, structural ratio "
                   f"{s['structural_ratio']}, seeds {s['seeds']})\n")
        out.append("| metric | pretrained | Model A | Model B | B vs A (relative) |")
        out.append("|---|---|---|---|---|")
        for name, v in b.items():
            if not isinstance(v, dict) or "A" not in v or "relative_change_B_vs_A" not in v:
                continue
            pre = "–" if v["pretrained"] is None else f"{v['pretrained']:.4f}"
            rel = v["relative_change_B_vs_A"]
            out.append(f"| {name} | {pre} | {pm(v['A'])} | {pm(v['B'])} | "
                       f"{100 * rel['mean']:+.1f}% ± {100 * rel['std']:.1f}% |")
        out.append("")
        out.append("| edit type | cos(q, edited q) pretrained | Model A | Model B |")
        out.append("|---|---|---|---|")
        for t, v in b["cos_edit_by_type"].items():
            out.append(f"| {t} | {v['pretrained']:.4f} | {pm(v['A'])} | {pm(v['B'])} |")
        out.append("")
        out.append(f"Training: {pm(b['train_examples_per_second'], 1)} examples/s, peak RSS "
                   f"{pm(b['train_peak_rss_mb'], 0)} MB (all A and B runs).\n")
    return "\n".join(out)


def transfer(s):
    names = ["lexical_residuality", "noncoverage", "cos_qn", "cos_pn", "margin", "ambiguity_rate",
             "mnrl_loss", "rho", "eta", "w", "eci_sem", "eci_sem_linear"]
    target = list(next(iter(s["observed"].values())).keys())[0]
    out = [f"Observed transfer ({s['transfer_metric']}, {s['backbone']}, seeds {s['seeds']}) and the "
           f"frozen-{s['backbone']} diagnostics of each source (s0 = {s['s0']:.4f}):\n"]
    out.append("| source | n | " + " | ".join(names) + f" | {target} nDCG@10 | {target} Acc@1 |")
    out.append("|---" * (len(names) + 4) + "|")
    order = sorted(s["observed"], key=lambda k: -s["observed"][k][target]["ndcg@10"]["mean"])
    for src in order:
        d = s["diagnostics"][src]
        o = s["observed"][src][target]
        out.append(f"| {src} | {d['count']} | " + " | ".join(f"{d[n]:.4f}" for n in names) +
                   f" | {pm(o['ndcg@10'])} | {pm(o['acc@1'])} |")
    out.append("")
    out.append(f"Agreement with the observed ordering (bootstrap {s['bootstrap']} resamples of each "
               "source's triples; 95% percentile CI):\n")
    out.append("| diagnostic | Kendall τ_b [95% CI] | Spearman ρ [95% CI] |")
    out.append("|---|---|---|")

    def iv(x):
        if x["value"] is None:
            return "undefined"
        return f"{x['value']:+.3f} [{x['ci_low']:+.3f}, {x['ci_high']:+.3f}]"

    for n in names:
        a = s["agreement"][n]
        out.append(f"| {n} | {iv(a['kendall_tau_b'])} | {iv(a['spearman_rho'])} |")
    out.append("")
    if s["matched"]:
        out.append("Matched on ψ (mean τ_b over repetitions / share recovering the observed order exactly):\n")
        diags = list(s["matched"][0]["diagnostics"].keys())
        out.append("| bins (triples per source) | " + " | ".join(diags) + " |")
        out.append("|---" * (len(diags) + 1) + "|")
        for m in s["matched"]:
            cells = []
            for n in diags:
                x = m["diagnostics"][n]
                t = "–" if x["mean_kendall_tau_b"] is None else f"{x['mean_kendall_tau_b']:+.2f}"
                cells.append(f"{t} / {x['recovered_rate']:.2f}")
            out.append(f"| {m['bins']} ({m['matched_per_source']:.0f}) | " + " | ".join(cells) + " |")
    return "\n".join(out)


for path in sys.argv[1:]:
    s = json.load(open(path))
    print(tradeoff(s) if s["experiment"] == "tradeoff" else transfer(s))
    print()
