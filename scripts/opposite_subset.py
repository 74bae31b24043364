#!/usr/bin/python3
"""The labelled pairs whose two texts differ by an opposite that one F5 file's
lexicon sees and another's does not, chosen from the texts alone (no score is
read), to check a lexicon change on real pairs. A file sees a pair of forms its
LEXA section holds when the tokenizer keeps both forms whole or the file's LEXS
section spells the split ones; a form counts as split when either file spells
it (both files come from one encoder), so a file without spellings sees no
split form. Words are matched lower-cased,
in the simple inflections the lexicon pairs by position (open/opened/opening
against closed/closed/closing; a final "e" dropped before -ing): the texts are
read word by word, not as the tokenizer's pieces, so a word the tokenizer
splits is counted here although the lexicon cannot see it.

Usage: scripts/opposite_subset.py NEW.valn OLD.valn OUT_DIR PAIRS.jsonl [PAIRS.jsonl ...]
  NEW, OLD   F5 verifier files (VALN); their LEXA sections give the opposites
  OUT_DIR    gets fires.jsonl: the pairs where the new opposites fire the
             polarity feature (one text holds a form, the other its opposite's
             form; either may hold both), and differ.jsonl: those of them where
             neither text holds both (a clean swap); each line with "file" and
             "line" added
Prints one JSON object: the opposites only NEW sees (pairs, or pairs of forms
where a file spells), and per input file and
in all, the pairs of each subset and how many of them are labelled same-meaning.
"""
import json
import os
import re
import struct
import sys



def sections(path, tags=("LEXA", "LEXS")):
    """The word-list sections of a VALN file (docs/FORMATS.md) among `tags`, by tag, as text."""
    with open(path, "rb") as f:
        data = f.read()
    if data[:4] != b"VALN":
        sys.exit(f"{path}: not an F5 verifier file (magic {data[:4]!r})")
    out, pos = {}, 16
    while pos + 16 <= len(data):
        tag, _crc, length = struct.unpack_from("<4sIQ", data, pos)
        start = (pos + 16 + 63) // 64 * 64
        if tag == b"END.":
            break
        if tag.decode("ascii") in tags:  # the word lists; other sections are binary
            out[tag.decode("ascii")] = data[start:start + length].decode("utf-8")
        pos = start + length
    return out


def lexicon_pairs(path):
    """The antonym pairs of a VALN file's LEXA section."""
    text = sections(path).get("LEXA")
    if text is None:
        sys.exit(f"{path}: no LEXA section (a verifier without the lexicon input)")
    return {tuple(sorted(line.split("\t"))) for line in text.splitlines() if "\t" in line}


def spelled_forms(path):
    """The lower-case forms a VALN file's LEXS section spells (empty without one)."""
    text = sections(path).get("LEXS", "")
    return {line.split("\t")[0] for line in text.splitlines() if line[:1].islower()}


def words(text):
    return set(re.findall(r"[a-z]+", text.lower()))


def inflections(word):
    """verify's inflections(): the same six forms, in the same order, so a pair's forms pair by position."""
    e = word.endswith("e")
    stem = word[:-1] if e else word
    return [word, word + "s", word + ("d" if e else "ed"), stem + "ing", word + ("r" if e else "er"),
            word + ("st" if e else "est")]


def opposite_forms(opposites):
    """(form, its opposite's form) for every position of every pair, both ways round."""
    out = set()
    for x, y in opposites:
        for fx, fy in zip(inflections(x), inflections(y)):
            if fx != fy:
                out.add((fx, fy))
                out.add((fy, fx))
    return out


def main(argv):
    if len(argv) < 5:
        sys.exit(__doc__)
    new, old = lexicon_pairs(argv[1]), lexicon_pairs(argv[2])
    new_spelled, old_spelled = spelled_forms(argv[1]), spelled_forms(argv[2])
    if not new_spelled and not old_spelled:
        opposites = sorted(new - old)
        pairs_of_forms = opposite_forms(opposites)
    else:
        split = new_spelled | old_spelled

        def seen(pairs, spelled):
            return {(x, y) for x, y in opposite_forms(pairs)
                    if all(f not in split or f in spelled for f in (x, y))}

        pairs_of_forms = seen(new, new_spelled) - seen(old, old_spelled)
        opposites = sorted({tuple(sorted(p)) for p in pairs_of_forms})
    if not opposites:
        sys.exit(f"{argv[1]} sees no opposite that {argv[2]} does not")
    def kinds(pair, a, b):
        met = [(x, y) for x, y in pairs_of_forms if x in a and y in b]
        if not met:
            return []
        return ["fires", "differ"] if any(y not in a and x not in b for x, y in met) else ["fires"]

    write_subsets(argv[4:], argv[3], kinds, {"opposites": len(opposites)})


def write_subsets(paths, out_dir, kinds, report):
    """Writes OUT_DIR/fires.jsonl and differ.jsonl: each labelled pair of `paths` that
    kinds(pair, words of a, words of b) puts in them, with "file" and "line" added; prints
    `report` with per file and in all each subset's pairs and same-meaning count."""
    os.makedirs(out_dir, exist_ok=True)
    report = {**report, "files": {}}
    totals = {"fires": [0, 0], "differ": [0, 0]}
    with open(os.path.join(out_dir, "fires.jsonl"), "w", encoding="utf-8") as fires, \
            open(os.path.join(out_dir, "differ.jsonl"), "w", encoding="utf-8") as differ:
        outputs = {"fires": fires, "differ": differ}
        for path in paths:
            counts = {"fires": [0, 0], "differ": [0, 0]}
            with open(path, encoding="utf-8") as f:
                for n, line in enumerate(f, 1):
                    if not line.strip():
                        continue
                    try:
                        pair = json.loads(line)
                        a, b, label = words(pair["a"]), words(pair["b"]), int(pair["label"])
                    except (ValueError, KeyError, TypeError, AttributeError) as e:
                        sys.exit(f"{path}:{n}: not a labelled pair ({e})")
                    row = json.dumps({**pair, "file": path, "line": n}) + "\n"
                    for kind in kinds(pair, a, b):
                        outputs[kind].write(row)
                        counts[kind][0] += 1
                        counts[kind][1] += label == 1
            report["files"][path] = {k: {"pairs": c[0], "same_meaning": c[1]} for k, c in counts.items()}
            for k in totals:
                totals[k][0] += counts[k][0]
                totals[k][1] += counts[k][1]
    report.update({k: {"pairs": c[0], "same_meaning": c[1]} for k, c in totals.items()})
    json.dump(report, sys.stdout, indent=1)
    print()


if __name__ == "__main__":
    main(sys.argv)
