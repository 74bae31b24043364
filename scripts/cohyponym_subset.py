#!/usr/bin/python3
"""Selects, from labelled pair files, the pairs whose two texts are the same
on the surface but for one common word swapped for a WordNet co-hyponym: a
noun of the same kind that is neither a synonym nor a broader or narrower
word ("cats" / "dogs", "football" / "cricket", "blue" / "brown", and also
"town" / "city", "benefits" / "advantages"). It asks whether a cap on such
swaps could hold: how many of them are same-meaning. Chosen from the texts
alone, never from scores; score the subsets with pairs-eval.

The two words (surface_words, case folded) are letters alone, not stop words,
not near spellings (at most two edits apart, or one the start of the other),
and not a name swap (both written with a capital inside the text, which the
name cap reads). Read as nouns through WordNet 3.0's files (Debian
wordnet-base, /usr/share/wordnet; plural forms through noun.exc and the
regular endings), they share no synset, neither is a hypernym of the other
(any depth, any sense), and one of the first SENSES senses of each has a
hypernym within DEPTH steps in common with the other's.

Usage: scripts/cohyponym_subset.py OUT_DIR DEPTH SENSES PAIRS.jsonl [...]
Writes OUT_DIR/cohyponym.jsonl (the swaps, with "swap": [word, word]) and
OUT_DIR/cohyponym-same.jsonl (their same-meaning pairs); prints the counts as
one JSON object, then the counts per source and label on stderr.
"""
import collections
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from subset_files import labelled_pairs, surface_words, write_subsets  # noqa: E402

WORDNET = "/usr/share/wordnet"
STOP_WORDS = set("""a an the i me my we our you your he him his she her it its they them their what which
who whom this that these those am is are was were be been being have has had do does did doing and but if
or because as until while of at by for with about against between into through during before after above
below to from up down in out on off over under again further then once here there when where why how all
any both each few more most other some such no nor not only own same so than too very s t can will just
don should now""".split())


class Nouns:
    def __init__(self, root):
        self.parents, self.senses, self.irregular = {}, {}, {}
        with open(os.path.join(root, "data.noun"), encoding="latin-1") as f:
            for line in f:
                if line.startswith("  "):
                    continue
                fields = line.split()
                words = int(fields[3], 16)
                at = 4 + 2 * words
                pointers = int(fields[at])
                parents = []
                for k in range(pointers):
                    symbol, offset, pos = fields[at + 1 + 4 * k: at + 4 + 4 * k]
                    if symbol in ("@", "@i") and pos == "n":
                        parents.append(offset)
                self.parents[fields[0]] = parents
        with open(os.path.join(root, "index.noun"), encoding="latin-1") as f:
            for line in f:
                if line.startswith("  "):
                    continue
                fields = line.split()
                count = int(fields[2])
                self.senses[fields[0]] = fields[-count:]
        with open(os.path.join(root, "noun.exc"), encoding="latin-1") as f:
            for line in f:
                inflected, base = line.split()[:2]
                self.irregular[inflected] = base

    def lemma(self, word):
        if word in self.senses:
            return word
        if word in self.irregular:
            return self.irregular[word]
        for ending, base in (("ies", "y"), ("ses", "s"), ("xes", "x"), ("ches", "ch"), ("shes", "sh"), ("s", "")):
            if word.endswith(ending) and word[: -len(ending)] + base in self.senses:
                return word[: -len(ending)] + base
        return None

    def ancestors(self, synset, depth):
        seen, frontier = {synset: 0}, [synset]
        for step in range(1, depth + 1):
            frontier = [p for s in frontier for p in self.parents.get(s, []) if p not in seen]
            for p in frontier:
                seen[p] = step
        return seen

    def cohyponyms(self, x, y, depth, senses):
        lx, ly = self.lemma(x), self.lemma(y)
        if not lx or not ly or lx == ly or set(self.senses[lx]) & set(self.senses[ly]):
            return False
        for a in self.senses[lx]:
            if any(b in self.ancestors(a, 30) for b in self.senses[ly]):
                return False
        for b in self.senses[ly]:
            if any(a in self.ancestors(b, 30) for a in self.senses[lx]):
                return False
        return any(set(self.ancestors(a, depth)) & set(self.ancestors(b, depth))
                   for a in self.senses[lx][:senses] for b in self.senses[ly][:senses])


def near_spelling(x, y):
    if x.startswith(y) or y.startswith(x):
        return True
    row = list(range(len(y) + 1))
    for i, cx in enumerate(x, 1):
        prev, row[0] = row[0], i
        for j, cy in enumerate(y, 1):
            prev, row[j] = row[j], min(row[j] + 1, row[j - 1] + 1, prev + (cx != cy))
    return row[-1] <= 2


def swap(pair, nouns, depth, senses):
    wa, wb = surface_words(pair["a"]), surface_words(pair["b"])
    if len(wa) != len(wb):
        return None
    diff = [i for i in range(len(wa)) if wa[i] != wb[i]]
    if len(diff) != 1:
        return None
    i = diff[0]
    x, y = wa[i], wb[i]
    if not (x.isalpha() and y.isalpha()) or x in STOP_WORDS or y in STOP_WORDS or near_spelling(x, y):
        return None
    ca, cb = surface_words(pair["a"], fold_case=False), surface_words(pair["b"], fold_case=False)
    if i > 0 and len(ca) == len(wa) and len(cb) == len(wb) and ca[i][:1].isupper() and cb[i][:1].isupper():
        return None  # a name swap
    return [x, y] if nouns.cohyponyms(x, y, depth, senses) else None


def main(out_dir, depth, senses, paths):
    nouns = Nouns(WORDNET)
    chosen = []
    for pair in labelled_pairs(paths):
        words = swap(pair, nouns, depth, senses)
        if words:
            chosen.append(dict(pair, swap=words))
    counts = collections.Counter((p["source"], p["label"]) for p in chosen)
    for source in sorted({s for s, _ in counts}):
        print(f"{source}: {counts[(source, 0)]} different, {counts[(source, 1)]} same", file=sys.stderr)
    write_subsets(out_dir, {"cohyponym": chosen, "cohyponym-same": [p for p in chosen if p["label"] == 1]})


if __name__ == "__main__":
    if len(sys.argv) < 5:
        sys.exit(__doc__)
    main(sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4:])
