#!/usr/bin/python3
"""Python overhead of verity.Pipeline.search against the CLI's own eval loop.

For each pipeline (default: bm25 alone, and hybrid + F1 two-stage), runs
`verity eval --json --threads 1` on a BEIR dataset's test queries, then opens
the same cached index with verity.Pipeline (the same options) and searches the
same queries from a Python loop. Rounds alternate CLI and Python so load on a
shared machine hits both alike; the per-query time of each is the median over
rounds of (search wall time / queries). Also checks that Encoder.encode's
arrays are views of the C++ buffers (no copy).

Prints one JSON object (argv, git SHA, build type, hardware, figures).

  PYTHONPATH=build/python nice -n 10 /usr/bin/python3 bench/python_search_bench.py \
      --dataset ../shared/data/beir/scifact [--rounds 3] [--pipelines bm25:none,hybrid:f1]
"""
import argparse
import datetime
import json
import os
import pathlib
import platform
import statistics
import subprocess
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]


def test_queries(dataset, split):
    """Queries with at least one qrels row in the split, in file order (BEIR's rule, as verity eval)."""
    judged = set()
    with open(dataset / "qrels" / f"{split}.tsv") as f:
        next(f)
        for line in f:
            if line.strip():
                judged.add(line.split("\t")[0])
    out = []
    with open(dataset / "queries.jsonl") as f:
        for line in f:
            q = json.loads(line)
            if q["_id"] in judged:
                out.append(q["text"])
    return out


def cli_eval(binary, dataset, split, k, stage1, verifier):
    cmd = [str(binary), "eval", "--dataset", str(dataset), "--split", split, "--retriever", stage1,
           "--verifier", verifier, "--k", str(k), "--threads", "1", "--json", "--quiet"]
    return json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True).stdout)


def python_search(verity, index_dir, queries, k, stage1, verifier):
    p = verity.Pipeline(index_dir, stage1=stage1, verifier=verifier, candidates=max(100, k))
    p.search(queries[0], k=k)  # warm-up, as the CLI's index open + first query
    latencies = []
    start = time.perf_counter()
    for q in queries:
        t = time.perf_counter()
        p.search(q, k=k)
        latencies.append((time.perf_counter() - t) * 1e3)
    total = time.perf_counter() - start
    return total / len(queries) * 1e3, statistics.median(latencies), p.describe()


def encode_is_zero_copy(verity):
    import numpy as np
    out = verity.Encoder("use-lite").encode(["zero copy check", "second text"])
    return bool(not out.pooled.flags.owndata and np.shares_memory(out.pooled, out.pooled)
                and all(not t.flags.owndata for t in out.tokens))


def main():
    # libgomp reads OMP_WAIT_POLICY at load time: re-exec once so this process
    # and the CLI both wait passively (as the C++ benches do).
    if "OMP_WAIT_POLICY" not in os.environ:
        os.environ["OMP_WAIT_POLICY"] = "passive"
        os.execv(sys.executable, [sys.executable] + sys.argv)
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dataset", default=str(ROOT.parent / "shared" / "data" / "beir" / "scifact"))
    ap.add_argument("--split", default="test")
    ap.add_argument("--k", type=int, default=100)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--pipelines", default="bm25:none,hybrid:f1", help="stage1:verifier,...")
    ap.add_argument("--binary", default=str(ROOT / "build" / "verity"))
    args = ap.parse_args()

    import verity
    verity.set_quiet(True)
    dataset = pathlib.Path(args.dataset)
    queries = test_queries(dataset, args.split)
    results = []
    for spec in args.pipelines.split(","):
        stage1, verifier = spec.split(":")
        cli_eval(args.binary, dataset, args.split, args.k, stage1, verifier)  # builds/warms the cached index
        cli_ms, cli_p50, py_ms, py_p50 = [], [], [], []
        for _ in range(args.rounds):
            r = cli_eval(args.binary, dataset, args.split, args.k, stage1, verifier)
            assert r["queries"] == len(queries), (r["queries"], len(queries))
            cli_ms.append(r["search_seconds"] / r["queries"] * 1e3)
            cli_p50.append(r["latency_ms_p50"])
            mean, p50, describe = python_search(verity, r["index_dir"], queries, args.k, stage1, verifier)
            assert describe == r["pipeline"], (describe, r["pipeline"])
            py_ms.append(mean)
            py_p50.append(p50)
        cli, py = statistics.median(cli_ms), statistics.median(py_ms)
        results.append({"pipeline": r["pipeline"], "queries": len(queries), "k": args.k,
                        "cli_ms_per_query": cli, "python_ms_per_query": py,
                        "cli_p50_ms": statistics.median(cli_p50), "python_p50_ms": statistics.median(py_p50),
                        "python_over_cli": py / cli - 1.0,
                        "rounds": {"cli_ms": cli_ms, "python_ms": py_ms}})

    sha = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "HEAD"], capture_output=True, text=True).stdout.strip()
    cache = ROOT / "build" / "CMakeCache.txt"
    build_type = next((l.split("=", 1)[1] for l in cache.read_text().splitlines()
                       if l.startswith("CMAKE_BUILD_TYPE:")), "unknown") if cache.exists() else "unknown"
    cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "?")
    flags = next((l.split(":", 1)[1].split() for l in open("/proc/cpuinfo") if l.startswith("flags")), [])
    print(json.dumps({
        "bench": "python_search", "argv": sys.argv, "git_sha": sha, "build_type": build_type,
        "date": datetime.datetime.utcnow().strftime("%Y-%m-%dT%H:%M:%SZ"),
        "hardware": {"cpu": cpu, "cores": os.cpu_count(), "avx2": "avx2" in flags,
                     "avx512f": "avx512f" in flags, "loadavg": os.getloadavg()},
        "python": platform.python_version(), "omp_wait_policy": os.environ.get("OMP_WAIT_POLICY"),
        "dataset": str(dataset), "split": args.split,
        "results": results, "encode_zero_copy": encode_is_zero_copy(verity),
    }, indent=2))


if __name__ == "__main__":
    main()
