#!/usr/bin/python3
"""The labelled pairs whose two texts differ by an opposite that one F5 file's
lexicon holds and another's does not: one text has a word, the other its
opposite, and neither has both. Chosen from the texts alone (no score is read),
to check a lexicon change on real pairs.

Usage: scripts/opposite_subset.py NEW.valn OLD.valn OUT_DIR PAIRS.jsonl [PAIRS.jsonl ...]
  NEW, OLD   F5 verifier files (VALN); their LEXA sections give the opposites
  OUT_DIR    gets differ.jsonl (the pairs, each with "file" and "line" added)
Prints one JSON object: the opposites only NEW holds, and per input file the
pairs chosen and how many of them are labelled same-meaning.
"""
import json
import os
import re
import struct
import sys

SUFFIXES = ("", "s", "es", "ed", "d", "ing", "er", "est")  # as the lexicon's simple inflections


def lexicon_pairs(path):
    """The antonym pairs of a VALN file's LEXA section (docs/FORMATS.md)."""
    with open(path, "rb") as f:
        data = f.read()
    if data[:4] != b"VALN":
        sys.exit(f"{path}: not an F5 verifier file (magic {data[:4]!r})")
    pos = 16
    while pos + 16 <= len(data):
        tag, _crc, length = struct.unpack_from("<4sIQ", data, pos)
        start = (pos + 16 + 63) // 64 * 64
        if tag == b"END.":
            break
        if tag == b"LEXA":
            text = data[start:start + length].decode("utf-8")
            return {tuple(sorted(line.split("\t"))) for line in text.splitlines() if "\t" in line}
        pos = start + length
    sys.exit(f"{path}: no LEXA section (a verifier without the lexicon input)")


def words(text):
    return set(re.findall(r"[a-z]+", text.lower()))


def forms(word):
    return {word + s for s in SUFFIXES}


def main(argv):
    if len(argv) < 5:
        sys.exit(__doc__)
    new, old = lexicon_pairs(argv[1]), lexicon_pairs(argv[2])
    opposites = sorted(new - old)
    if not opposites:
        sys.exit(f"{argv[1]} holds no opposite that {argv[2]} lacks")
    os.makedirs(argv[3], exist_ok=True)
    report = {"opposites": len(opposites), "files": {}}
    with open(os.path.join(argv[3], "differ.jsonl"), "w", encoding="utf-8") as out:
        for path in argv[4:]:
            chosen = same = 0
            with open(path, encoding="utf-8") as f:
                for n, line in enumerate(f, 1):
                    try:
                        pair = json.loads(line)
                        a, b, label = words(pair["a"]), words(pair["b"]), int(pair["label"])
                    except (ValueError, KeyError, TypeError) as e:
                        sys.exit(f"{path}:{n}: not a labelled pair ({e})")
                    for x, y in opposites:
                        fx, fy = forms(x), forms(y)
                        if any(s & fx and t & fy and not s & fy and not t & fx for s, t in ((a, b), (b, a))):
                            out.write(json.dumps({**pair, "file": path, "line": n}) + "\n")
                            chosen += 1
                            same += label == 1
                            break
            report["files"][path] = {"pairs": chosen, "same_meaning": same}
    report["pairs"] = sum(v["pairs"] for v in report["files"].values())
    report["same_meaning"] = sum(v["same_meaning"] for v in report["files"].values())
    json.dump(report, sys.stdout, indent=1)
    print()


if __name__ == "__main__":
    main(sys.argv)
