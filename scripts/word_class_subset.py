#!/usr/bin/python3
"""Selects, from labelled pair files, the pairs whose two texts are the same
on the surface but for one word, the two words of different classes of one
group: "today" / "tomorrow", "during" / "after", "always" / "often". The
surface is that of scripts/typo_subset.py (text::surface_text read as
words). The subset is chosen from the texts alone, never from scores; score
it with pairs-eval, or read its labels.

Usage: scripts/word_class_subset.py GROUPS OUT_DIR PAIRS.jsonl [PAIRS.jsonl ...]
GROUPS: groups split by ';', classes by '|', words by ','. For the day
shifts of verify::day_shift_words():
  'yesterday|today,tonight|tomorrow;before|during|after'
Writes OUT_DIR/word-class.jsonl (every such pair, with its file as "source"
when it has none) and OUT_DIR/word-class-same.jsonl (its same-meaning pairs
alone); prints the counts as one JSON object.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from subset_files import labelled_pairs, one_word_changed, write_subsets  # noqa: E402


def parse_groups(spec):
    """word -> (group, class) for every word of the spec."""
    classes = {}
    for g, group in enumerate(filter(None, spec.split(";"))):
        for c, words in enumerate(group.split("|")):
            for word in filter(None, (w.strip().lower() for w in words.split(","))):
                if word in classes:
                    sys.exit(f"word_class_subset: '{word}' is listed twice in GROUPS")
                classes[word] = (g, c)
    if not classes:
        sys.exit("word_class_subset: GROUPS holds no word")
    return classes


def changes_class(a, b, classes):
    changed = one_word_changed(a, b)
    if changed is None:
        return False
    x, y = classes.get(changed[0]), classes.get(changed[1])
    return x is not None and y is not None and x[0] == y[0] and x[1] != y[1]


def main(spec, out_dir, paths):
    classes = parse_groups(spec)
    chosen = [pair for pair in labelled_pairs(paths) if changes_class(pair["a"], pair["b"], classes)]
    write_subsets(out_dir, {"word-class": chosen, "word-class-same": [p for p in chosen if p["label"] == 1]})


if __name__ == "__main__":
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2], sys.argv[3:])
