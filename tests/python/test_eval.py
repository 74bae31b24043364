"""verity.evaluate returns the dict `verity eval --json` prints."""
import pytest

import verity
from conftest import TINY_BEIR, run_cli


def test_evaluate_matches_the_cli(tmp_path):
    r = verity.evaluate(str(TINY_BEIR), retriever="bm25", split="test", k=10, cache_dir=str(tmp_path))
    cli = run_cli("eval", "--dataset", str(TINY_BEIR), "--retriever", "bm25", "--k", "10",
                  "--cache-dir", str(tmp_path))
    assert set(r) == set(cli)
    for key in ("ndcg@10", "acc@1", "recall@100", "mrr@10", "map@100", "queries",
                "queries_skipped_no_relevant", "docs", "dataset", "retriever", "verifier", "split", "k",
                "pipeline", "index_dir"):
        assert r[key] == cli[key], key
    assert r["dataset"] == "tiny_beir" and r["queries"] == 3 and r["docs"] == 5
    assert 0 < r["ndcg@10"] <= 1
    assert cli["index_from_cache"] is True  # the Python run built the shared cache entry


def test_evaluate_options(tmp_path):
    run = tmp_path / "run.trec"
    r = verity.evaluate(str(TINY_BEIR), k=5, metrics="ndcg@3,recall@5", use_cache=False, run=str(run),
                        threads=2)
    assert {"ndcg@3", "recall@5"} <= set(r) and "ndcg@10" not in r
    assert r["threads"] == 2 and "latency_ms_p50" not in r  # latency only with one thread
    lines = run.read_text().splitlines()
    assert lines and all(len(line.split()) == 6 for line in lines)


def test_evaluate_two_stage(tmp_path, use_lite):
    r = verity.evaluate(str(TINY_BEIR), retriever="hybrid", verifier="f1", k=5, cache_dir=str(tmp_path))
    assert r["retriever"] == "hybrid" and r["verifier"] == "f1"
    assert "verifier=f1" in r["pipeline"]
    assert r["stage2_latency_ms_p50"] > 0


def test_missing_split_is_named(tmp_path):
    with pytest.raises(verity.Error, match="train"):
        verity.evaluate(str(TINY_BEIR), split="train", cache_dir=str(tmp_path))
