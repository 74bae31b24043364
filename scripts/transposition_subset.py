#!/usr/bin/python3
"""Selects, from labelled pair files, the pairs whose two texts are the same
but for two words that trade places: "flights from Boston to Denver" /
"flights from Denver to Boston", "Are foxes afraid of badgers?" / "Are badgers
afraid of foxes?". Words are read by subset_files.surface_words (case folded).
Left out, as by text::transposed_words: two stop words, and a coordination
read the other way round (the last word before the second of the two,
articles, possessives and a preposition that also leads the first aside, is
"and", "or", "nor", "&", "vs", "versus" or "plus"). Two neighbours that
trade places ("chess fast online" / "chess online fast") are kept apart.
The transpositions with a word of a symmetric relation before the second of
the two ("How far is Lisbon from Madrid?") are also written on their own: the
cap takes them, and this subset is how an exemption for them was judged
(docs/RESULTS.md, "Transpositions"). The
subset is chosen from the texts alone, never from scores; score it with
pairs-eval.

Usage: scripts/transposition_subset.py OUT_DIR PAIRS.jsonl [PAIRS.jsonl ...]
Writes OUT_DIR/transposition.jsonl (with its file as "source" when it has
none), OUT_DIR/transposition-same.jsonl (its same-meaning pairs alone) and
OUT_DIR/transposition-neighbours.jsonl and
OUT_DIR/transposition-symmetric.jsonl; prints the counts as one JSON object.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from subset_files import changed_words, labelled_pairs, write_subsets  # noqa: E402

STOP_WORDS = set("a an and are as at be but by for if in into is it no not of on or such that the their then "
                 "there these they this to was will with".split())  # text::english_stopwords
COORDINATORS = {"and", "or", "nor", "&", "vs", "versus", "plus"}
DETERMINERS = {"a", "an", "the", "my", "your", "his", "her", "its", "our", "their", "this", "that"}
PREPOSITIONS = {"by", "in", "on", "at", "to", "for", "from", "with", "of", "into", "over", "under", "about",
                "through", "as"}
SYMMETRIC = set("far distance distances miles mile kilometers kilometres km apart near nearby adjacent border borders "
                "bordering neighbour neighbours neighbor neighbors differ differs difference differences similar "
                "similarity alike equal equals equivalent compare compared comparison related relation relationship "
                "married marry friends meet met".split())


def traded_places(a, b):
    """(i, j, words of a) when the texts differ only by words i < j trading places, else None."""
    changed = changed_words(a, b)
    if changed is None or len(changed[0]) != 2:
        return None
    (i, j), wa, wb = changed
    if wa[i] != wb[j] or wa[j] != wb[i]:
        return None
    return i, j, wa


def coordinated(words, i, j):
    lead = words[i - 1] if i > 0 else None
    k = j
    while k > i + 1 and (words[k - 1] in DETERMINERS or (words[k - 1] == lead and lead in PREPOSITIONS)):
        k -= 1
    return k > i + 1 and words[k - 1] in COORDINATORS


def symmetric_relation(words, i, j):
    return any(words[k] in SYMMETRIC for k in range(j) if k != i)


def main(out_dir, paths):
    far, neighbours, symmetric = [], [], []
    for pair in labelled_pairs(paths):
        found = traded_places(pair["a"], pair["b"])
        if found is None:
            continue
        i, j, words = found
        if (words[i] in STOP_WORDS and words[j] in STOP_WORDS) or coordinated(words, i, j):
            continue
        if j == i + 1:
            neighbours.append(pair)
            continue
        far.append(pair)
        if symmetric_relation(words, i, j):
            symmetric.append(pair)
    write_subsets(out_dir, {"transposition": far, "transposition-same": [p for p in far if p["label"] == 1],
                            "transposition-neighbours": neighbours, "transposition-symmetric": symmetric})


if __name__ == "__main__":
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2:])
