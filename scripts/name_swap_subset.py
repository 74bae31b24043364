#!/usr/bin/python3
"""Selects, from labelled pair files, the pairs whose two texts are the same
but for one capitalized word inside the text, swapped for another: "install
Python on Windows" / "install Java on Windows", "weather in Canada" /
"weather in Germany". Words are read by subset_files.surface_words (NFKC,
apostrophes dropped, sentence punctuation read as a space) keeping their
case, and compared ignoring case, but the swapped pair must both be written
as names (a capital first, or a small letter first and a capital after it:
"iPhone", "eBay") and must not be the text's first word (a sentence's capital
says nothing). The subset is chosen from the texts alone, never from scores;
score it with pairs-eval.

Swaps of a near spelling ("Willi" / "Willy", "West" / "Western": at most two
edits apart ignoring case, or one word the start of the other) are kept
apart: they are mostly the same name.

Usage: scripts/name_swap_subset.py OUT_DIR PAIRS.jsonl [PAIRS.jsonl ...]
Writes OUT_DIR/name-swap.jsonl (every other swap, with its file as "source"
when it has none), OUT_DIR/name-swap-same.jsonl (its same-meaning pairs
alone), OUT_DIR/name-swap-near.jsonl (the near spellings) and
OUT_DIR/name-swap-first-word.jsonl (pairs differing in their first word alone,
both written with a capital after the first letter: no swap, counted apart);
prints the counts as one JSON object.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from subset_files import labelled_pairs, surface_words, write_subsets  # noqa: E402

def edits(x, y):
    """Levenshtein distance."""
    row = list(range(len(y) + 1))
    for i, cx in enumerate(x, 1):
        prev, row[0] = row[0], i
        for j, cy in enumerate(y, 1):
            prev, row[j] = row[j], min(row[j] + 1, row[j - 1] + 1, prev + (cx != cy))
    return row[-1]


def swapped_word(a, b):
    """(position, word of a, word of b) when the texts differ, ignoring case, in one word alone."""
    wa, wb = surface_words(a, fold_case=False), surface_words(b, fold_case=False)
    if len(wa) != len(wb):
        return None
    diff = [i for i in range(len(wa)) if wa[i].casefold() != wb[i].casefold()]
    return (diff[0], wa[diff[0]], wb[diff[0]]) if len(diff) == 1 else None


def swapped_names(a, b):
    """The two capitalized words swapped, or None when the pair is no such swap."""
    found = swapped_word(a, b)
    if found is None or found[0] == 0:
        return None
    _, x, y = found
    return (x, y) if written_as_name(x) and written_as_name(y) else None


def first_word_names(a, b):
    """True when the texts differ in their first word alone and both are written with a capital
    after the first letter ("iPhone", "NASA"): not a swap, counted on its own."""
    found = swapped_word(a, b)
    return found is not None and found[0] == 0 and capital_inside(found[1]) and capital_inside(found[2])


def capital_inside(word):
    return word[0].isalpha() and any(c.isupper() for c in word[1:])


def written_as_name(word):
    """A capital first ("Python"), or a small letter first and a capital after it ("iPhone")."""
    return word[0].isupper() or (word[0].islower() and any(c.isupper() for c in word[1:]))


def near_spelling(x, y):
    x, y = x.casefold(), y.casefold()
    return edits(x, y) <= 2 or x.startswith(y) or y.startswith(x)


def main(out_dir, paths):
    far, near, first = [], [], []
    for pair in labelled_pairs(paths):
        names = swapped_names(pair["a"], pair["b"])
        if names is not None:
            (near if near_spelling(*names) else far).append(pair)
        elif first_word_names(pair["a"], pair["b"]):
            first.append(pair)
    write_subsets(out_dir, {"name-swap": far, "name-swap-same": [p for p in far if p["label"] == 1],
                            "name-swap-near": near, "name-swap-first-word": first})


if __name__ == "__main__":
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2:])
