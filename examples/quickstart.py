#!/usr/bin/python3
"""verity from Python: build an index, search it, verify texts, use the cache.

Runs on SciFact from the shared data by default (any BEIR directory works):

    PYTHONPATH=build/python /usr/bin/python3 examples/quickstart.py \
        [--dataset ../shared/data/beir/scifact] [--index out/quickstart-index]

The index (BM25 + dense + token vectors from USE-lite) is built once, then
reused; building SciFact's 5,183 documents takes a few minutes on two cores.
"""
import argparse
import pathlib
import tempfile

import verity

ROOT = pathlib.Path(__file__).resolve().parents[1]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dataset", default=str(ROOT.parent / "shared" / "data" / "beir" / "scifact"))
    ap.add_argument("--index", default=str(ROOT / "out" / "quickstart-index"))
    args = ap.parse_args()

    # 1. Index: every part, so both stages can run.
    index = pathlib.Path(args.index)
    if not (index / "manifest.json").exists():
        report = verity.build_index(args.dataset, str(index), bm25=True, dense=True, tokens=True)
        print(f"indexed {report['docs']} documents ({', '.join(report['parts'])}) in {report['seconds']:.1f} s")

    # 2. Search with the two-stage default: hybrid stage 1, then the default verifier scores the
    #    100 candidates (a calibrated P(same meaning) and a verdict for each).
    pipeline = verity.Pipeline(str(index), candidates=100)
    query = "Measles vaccination reduces childhood mortality."
    print(f"\n{pipeline.describe()}\nquery: {query}")
    for rank, hit in enumerate(pipeline.search(query, k=5), 1):
        print(f"{rank}. {hit.id:>10}  score {hit.score:.3f}  (stage 1 {hit.stage1_score:.3f}, "
              f"verifier {hit.verifier_score:.3f}, {hit.verdict})  {hit.title[:70]}")

    # 3. Verify without an index: does each text say the same as the claim?
    claim = "The vaccine reduced mortality in children."
    texts = ["The vaccine lowered child mortality.",
             "The vaccine did not reduce mortality in children.",
             "Mortality in children reduced the vaccine."]
    print(f"\nverify: {claim}   (default verifier; F1 MaxSim beside it)")
    default = verity.verify(claim, texts, verifier="default")
    maxsim = verity.verify(claim, texts, verifier="f1")
    for text, v, f1 in zip(texts, default, maxsim):
        verdict = v.verdict or "no calibrated threshold"
        print(f"  {v.probability:<10.3g} {verdict:<24} f1 {f1.probability:.3f}  {text}")

    # 4. The verified semantic cache: a paraphrase hits, a near-miss does not.
    print("\ncache: one answer cached; a paraphrase should hit, the opposite question should not")
    with tempfile.TemporaryDirectory() as tmp, verity.Cache(str(pathlib.Path(tmp) / "cache.sqlite")) as cache:
        cache.put("Does measles vaccination reduce child mortality?", "Yes, by a large margin.", namespace="qa")
        for prompt in ["Is child mortality reduced by measles vaccination?",
                       "Does measles vaccination increase child mortality?",
                       "Does measles vaccination not reduce child mortality?"]:
            r = cache.lookup(prompt, namespace="qa")
            p = "unverified" if r.probability is None else f"p={r.probability:.3f}"
            print(f"  {'hit ' if r.hit else 'miss'} {p} ({r.reason}, threshold {r.threshold:.2f})  {prompt}")


if __name__ == "__main__":
    main()
