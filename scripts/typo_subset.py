#!/usr/bin/python3
"""Selects, from labelled pair files, the pairs whose two texts are the same
on the surface but for one word: both words of five or more letters, one
edit apart (a letter added, dropped or changed, or two neighbours swapped):
"misson" / "mission", "system" / "systems", and also "adapt" / "adopt". The
surface is a word-level reading of text::surface_text (NFKC, case folded,
apostrophes dropped, sentence punctuation read as a space). The subset is
chosen from the texts alone, never from scores; score it with pairs-eval.

Usage: scripts/typo_subset.py OUT_DIR PAIRS.jsonl [PAIRS.jsonl ...]
Writes OUT_DIR/typo.jsonl (every such pair, with its file as "source" when
it has none) and OUT_DIR/typo-same.jsonl (its same-meaning pairs alone:
accuracy there is the share served); prints the counts as one JSON object.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from subset_files import labelled_pairs, one_word_changed, write_subsets  # noqa: E402

def one_edit(x, y):
    """Levenshtein distance 1, or one swap of neighbouring letters."""
    if x == y or abs(len(x) - len(y)) > 1:
        return False
    if len(x) == len(y):
        diff = [i for i in range(len(x)) if x[i] != y[i]]
        return len(diff) == 1 or (len(diff) == 2 and diff[1] == diff[0] + 1
                                  and x[diff[0]] == y[diff[1]] and x[diff[1]] == y[diff[0]])
    shorter, longer = sorted((x, y), key=len)
    return any(longer[:i] + longer[i + 1:] == shorter for i in range(len(longer)))


def one_typo(a, b):
    changed = one_word_changed(a, b)
    if changed is None:
        return False
    x, y = changed
    return min(len(x), len(y)) >= 5 and x.isalpha() and y.isalpha() and one_edit(x, y)


def main(out_dir, paths):
    chosen = [pair for pair in labelled_pairs(paths) if one_typo(pair["a"], pair["b"])]
    subsets = {"typo": chosen, "typo-same": [p for p in chosen if p["label"] == 1]}
    write_subsets(out_dir, subsets)


if __name__ == "__main__":
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2:])
