#!/usr/bin/env python3
"""Reliability diagram (SVG) of calibrated scores from `verity pairs-eval --scores-out`.

Usage: scripts/reliability_diagram.py SCORES.jsonl OUT.svg [SCORER_PREFIX]
SCORER_PREFIX picks the scorer (pairs-eval names each by its --verifier spec);
without it, "default" and every spec starting with "f5:".
Ten equal-width bins of the score; each bar is the share of same-meaning pairs
among the bin's pairs, the diagonal is perfect calibration, the label under a
bin is its pair count. Standard library only.
"""
import json
import sys


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    path, out = sys.argv[1], sys.argv[2]
    prefixes = (sys.argv[3],) if len(sys.argv) > 3 else ("default", "f5:")
    bins = [[0, 0, 0.0] for _ in range(10)]  # count, positives, score sum
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            row = json.loads(line)
            if not row["scorer"].startswith(prefixes):
                continue
            s = min(max(float(row["score"]), 0.0), 1.0)
            b = bins[min(9, int(s * 10))]
            b[0] += 1
            b[1] += int(row["label"])
            b[2] += s
    total = sum(b[0] for b in bins)
    if total == 0:
        sys.exit(f"{path}: no scores of a scorer starting with {' or '.join(map(repr, prefixes))}")
    ece = sum(abs(b[2] - b[1]) for b in bins) / total
    W, H, L, T = 420, 420, 50, 30
    size = 320
    x = lambda v: L + v * size
    y = lambda v: T + (1 - v) * size
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" font-family="sans-serif" font-size="11">',
             f'<rect x="{L}" y="{T}" width="{size}" height="{size}" fill="none" stroke="#444"/>',
             f'<line x1="{x(0)}" y1="{y(0)}" x2="{x(1)}" y2="{y(1)}" stroke="#999" stroke-dasharray="4 3"/>']
    for i, (count, pos, ssum) in enumerate(bins):
        if not count:
            continue
        rate = pos / count
        parts.append(f'<rect x="{x(i / 10) + 2}" y="{y(rate)}" width="{size / 10 - 4}" height="{y(0) - y(rate)}" '
                     f'fill="#3b7dd8" fill-opacity="0.75"/>')
        parts.append(f'<circle cx="{x(ssum / count)}" cy="{y(rate)}" r="3" fill="#c0392b"/>')
        parts.append(f'<text x="{x(i / 10 + 0.05)}" y="{y(0) + 26}" text-anchor="middle" fill="#555">{count}</text>')
    for t in range(0, 11, 2):
        v = t / 10
        parts.append(f'<text x="{x(v)}" y="{y(0) + 13}" text-anchor="middle">{v:.1f}</text>')
        parts.append(f'<text x="{L - 6}" y="{y(v) + 4}" text-anchor="end">{v:.1f}</text>')
    parts.append(f'<text x="{W / 2}" y="{H - 4}" text-anchor="middle">P(same meaning), 10 bins (pairs per bin below)</text>')
    parts.append(f'<text x="{W / 2}" y="18" text-anchor="middle">observed share of same-meaning pairs; '
                 f'{total} pairs, ECE {ece:.3f}</text>')
    parts.append('</svg>')
    with open(out + ".tmp", "w", encoding="utf-8") as f:
        f.write("\n".join(parts) + "\n")
    import os
    os.replace(out + ".tmp", out)
    print(f"{out}: {total} pairs, ECE {ece:.3f}", file=sys.stderr)


if __name__ == "__main__":
    main()
