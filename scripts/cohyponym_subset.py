#!/usr/bin/python3
"""Selects, from labelled pair files, the pairs whose two texts are the same
on the surface but for one common word swapped for a WordNet co-hyponym: a
noun of the same kind that is neither a synonym nor a broader or narrower
word ("cats" / "dogs", "football" / "cricket", "blue" / "brown", and also
"town" / "city", "benefits" / "advantages"). It asks whether a cap on such
swaps could hold: how many of them are same-meaning. Chosen from the texts
alone, never from scores; score the subsets with pairs-eval.

The two words (surface_words, case folded) are letters alone, not stop words,
not near spellings, and not a name swap (the name cap's), each as
scripts/name_swap_subset.py reads them. Read as nouns through WordNet 3.0's files (Debian
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
from name_swap_subset import near_spelling, swapped_names, swapped_word  # noqa: E402
from subset_files import labelled_pairs, write_subsets  # noqa: E402

WORDNET = "/usr/share/wordnet"
# Function words, which WordNet also files as nouns ("can", "will") but a swap of which is no noun's.
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
        """The synset and its hypernyms up to `depth` steps above it."""
        seen, frontier = {synset}, [synset]
        for _ in range(depth):
            frontier = [p for s in frontier for p in self.parents.get(s, []) if p not in seen]
            seen.update(frontier)
        return seen

    def cohyponyms(self, x, y, depth, senses):
        lx, ly = self.lemma(x), self.lemma(y)
        if not lx or not ly or lx == ly or set(self.senses[lx]) & set(self.senses[ly]):
            return False
        sx, sy = self.senses[lx], self.senses[ly]
        above_x = set().union(*(self.ancestors(a, 30) for a in sx))
        above_y = set().union(*(self.ancestors(b, 30) for b in sy))
        if above_x & set(sy) or above_y & set(sx):
            return False  # one is the broader word
        near_x = [self.ancestors(a, depth) for a in sx[:senses]]
        near_y = [self.ancestors(b, depth) for b in sy[:senses]]
        return any(ax & by for ax in near_x for by in near_y)


def swap(pair, nouns, depth, senses):
    found = swapped_word(pair["a"], pair["b"])
    if found is None or swapped_names(pair["a"], pair["b"]):
        return None  # not one word, or a name swap (the name cap's)
    x, y = found[1].casefold(), found[2].casefold()
    if not (x.isalpha() and y.isalpha()) or x in STOP_WORDS or y in STOP_WORDS or near_spelling(x, y):
        return None
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
