#!/usr/bin/python3
"""The labelled pairs where a number word that an F5 file spells (one its
tokenizer splits into pieces: "sixty" as "▁six ty") stands in one text and not
in the other, chosen from the texts alone (no score is read), to check the
spelled number words on real pairs. Words are matched lower-cased, word by word.

Usage: scripts/number_subset.py FILE.valn OUT_DIR PAIRS.jsonl [PAIRS.jsonl ...]
  FILE     an F5 verifier file (VALN) whose LEXS section spells number words and
           whose LEXW section lists them
  OUT_DIR  gets fires.jsonl: those pairs, and differ.jsonl: those of them where
           the other text holds another number word or a number in digits (a
           changed number); each line with "file" and "line" added
Prints one JSON object: the spelled number words, and per input file and in
all, the pairs of each subset and how many of them are labelled same-meaning.
"""
import re
import sys

from opposite_subset import sections, write_subsets


def main(argv):
    if len(argv) < 4:
        sys.exit(__doc__)
    lists = sections(argv[1], ("LEXW", "LEXS"))
    numbers = {line.split("\t")[1] for line in lists.get("LEXW", "").splitlines() if line.startswith("number\t")}
    spelled = {line.split("\t")[0] for line in lists.get("LEXS", "").splitlines()} & numbers
    if not spelled:
        sys.exit(f"{argv[1]} spells no number word")

    def kinds(pair, a, b):
        only_a, only_b = (a - b) & spelled, (b - a) & spelled
        if not only_a and not only_b:
            return []
        digits = [bool(re.search(r"\d", pair[k])) for k in ("a", "b")]
        changed = (only_a and ((b - a) & numbers or digits[1])) or (only_b and ((a - b) & numbers or digits[0]))
        return ["fires", "differ"] if changed else ["fires"]

    write_subsets(argv[3:], argv[2], kinds, {"spelled_number_words": sorted(spelled)})


if __name__ == "__main__":
    main(sys.argv)
