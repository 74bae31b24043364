#!/usr/bin/env python3
"""Encoder-training triples (query, positive, negative) from labelled pair sets.

Reads the train parts of pair sets ({"a", "b", "label"} JSONL, label 1 = same
meaning) and writes triples for `verity train-encoder` (MNRL), so that a
fine-tuned encoder's pooled cosine separates what the labels separate:

* a same-meaning pair (a, b) gives (a, b, n) and (b, a, n'), where the negative
  is a labelled different-meaning partner of the query when the set has one,
  else the text sharing the most words with the query among a seeded sample of
  the set's different-meaning pairs (a mined hard negative);
* a different-meaning pair (a, c) whose a has no same-meaning partner gives
  (a, a, c): the positive is the query itself, so the loss only pushes c away.

Each set contributes at most --max-pairs pairs (a seeded sample), so the larger
sets do not drown the smaller ones. Only train parts are meant to be read here.

Usage: pair_triples.py OUT.jsonl TRAIN.jsonl [TRAIN.jsonl ...] [--max-pairs N] [--seed S]
"""
import argparse
import collections
import json
import os
import random
import re
import sys

WORD = re.compile(r"[a-z0-9]+")


def words(text):
    return set(WORD.findall(text.lower()))


def read_pairs(path):
    pairs = []
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                r = json.loads(line)
                a, b, label = r["a"], r["b"], int(r["label"])
            except (ValueError, KeyError, TypeError) as e:
                sys.exit(f"{path}:{number}: not a pair line ({e})")
            if label not in (0, 1) or not a.strip() or not b.strip():
                sys.exit(f"{path}:{number}: a pair needs non-empty a and b and a label of 0 or 1")
            pairs.append((a, b, label))
    return pairs


def triples_of(pairs, rng, candidates):
    """The triples of one set's (sampled) pairs; candidates: mined negatives per query."""
    partners = collections.defaultdict(lambda: ([], []))  # text -> (same, different)
    for a, b, label in pairs:
        partners[a][1 - label].append(b)
        partners[b][1 - label].append(a)
    negatives = [(a, b) for a, b, label in pairs if label == 0]
    out = []

    def negative_for(query):
        labelled = partners[query][1]
        if labelled:
            return rng.choice(labelled), "labelled"
        if not negatives:
            return None, None
        q = words(query)
        best, best_overlap = None, -1.0
        for a, b in rng.sample(negatives, min(candidates, len(negatives))):
            for text in (a, b):
                if text == query:
                    continue
                w = words(text)
                overlap = len(q & w) / max(1, len(q | w))
                if overlap > best_overlap:
                    best, best_overlap = text, overlap
        return best, "mined"

    counts = collections.Counter()
    for a, b, label in pairs:
        if label == 1:
            for query, positive in ((a, b), (b, a)):
                negative, kind = negative_for(query)
                if negative is not None and negative != positive:
                    out.append({"query": query, "positive": positive, "negative": negative})
                    counts[kind] += 1
        elif not partners[a][0]:
            out.append({"query": a, "positive": a, "negative": b})
            counts["self"] += 1
    return out, counts


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out")
    ap.add_argument("train", nargs="+")
    ap.add_argument("--max-pairs", type=int, default=8000, help="pairs per set (0: all)")
    ap.add_argument("--candidates", type=int, default=300, help="different-meaning pairs searched per mined negative")
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    rng = random.Random(args.seed)
    triples = []
    for path in args.train:
        pairs = read_pairs(path)
        if args.max_pairs and len(pairs) > args.max_pairs:
            pairs = rng.sample(pairs, args.max_pairs)
        got, counts = triples_of(pairs, rng, args.candidates)
        print(f"{path}: {len(pairs)} pairs -> {len(got)} triples {dict(counts)}", file=sys.stderr)
        triples += got
    rng.shuffle(triples)
    tmp = f"{args.out}.tmp.{os.getpid()}"
    with open(tmp, "w", encoding="utf-8") as f:
        for t in triples:
            f.write(json.dumps(t, ensure_ascii=False) + "\n")
    os.replace(tmp, args.out)
    print(f"wrote {len(triples)} triples to {args.out}", file=sys.stderr)


if __name__ == "__main__":
    main()
