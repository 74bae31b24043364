"""verity.build_index, verity.Pipeline and Hit on the tiny fixture corpus."""
import concurrent.futures
import json

import pytest

import verity
from conftest import TINY_BEIR, run_cli


def test_build_index_reports_what_the_cli_reports(tmp_path, bm25_index):
    report = verity.build_index(str(TINY_BEIR / "corpus.jsonl"), str(tmp_path / "idx"))
    cli = run_cli("index", "--corpus", str(TINY_BEIR), "--out", str(tmp_path / "cli"))
    assert set(report) == set(cli)
    assert report["docs"] == cli["docs"] == 5
    assert report["parts"] == cli["parts"] == ["bm25"]
    assert report["index"] == str(tmp_path / "idx")
    manifest = json.loads((tmp_path / "idx" / "manifest.json").read_text())
    assert set(manifest["parts"]) == {"docs", "bm25"}


def test_bm25_search_ranks_and_fills_hits(bm25_index):
    p = verity.Pipeline(str(bm25_index), stage1="bm25", verifier="none")
    assert len(p) == 5
    hits = p.search("measles vaccine mortality", k=3)
    assert 1 <= len(hits) <= 3
    top = hits[0]
    assert isinstance(top, verity.Hit)
    assert (top.id, top.title) == ("d3", "Vaccines")
    assert top.text.startswith("Measles vaccination")
    assert top.verifier_score is None and top.verdict is None
    assert top.score == top.stage1_score > 0
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
    for blank in ("", "  ?  "):
        with pytest.raises(verity.ConfigError, match="query"):
            p.search(blank)


def test_search_matches_the_cli(bm25_index):
    p = verity.Pipeline(str(bm25_index), stage1="bm25", verifier="none")
    cli = run_cli("search", "--index", str(bm25_index), "--query", "dogs and cats", "--k", "5")
    hits = p.search("dogs and cats", k=5)
    assert [(h.id, h.title, h.text) for h in hits] == [(r["id"], r["title"], r["text"]) for r in cli["results"]]
    assert [h.score for h in hits] == pytest.approx([r["score"] for r in cli["results"]], rel=1e-12)
    assert p.describe() == cli["pipeline"]


def test_two_stage_defaults_verify_candidates(full_index, bm25_index):
    p = verity.Pipeline(str(full_index))  # auto: hybrid stage 1, the default verifier (calibrated)
    assert (p.stage1, p.verifier) == ("hybrid", "default")
    assert p.describe().startswith("stage1=hybrid") and "verifier=default" in p.describe()
    assert 0.0 < p.threshold < 1.0
    hits = p.search("where did the cat sit", k=5)
    assert hits[0].id == "d1"
    for h in hits:
        assert 0.0 <= h.verifier_score <= 1.0
        assert h.verdict == ("match" if h.verifier_score >= p.threshold else "near-miss")
    bare = verity.Pipeline(str(bm25_index))  # no dense part, no token vectors
    assert (bare.stage1, bare.verifier, bare.threshold) == ("bm25", "none", None)
    f1 = verity.Pipeline(str(full_index), verifier="f1")
    assert f1.threshold is None and all(h.verdict is None for h in f1.search("where did the cat sit", k=5))
    judged = verity.Pipeline(str(full_index), verifier="f1", reject_below=0.5).search("where did the cat sit", k=5)
    assert {h.verdict for h in judged} <= {"match", "near-miss"}
    assert all((h.verdict == "match") == (h.verifier_score >= 0.5) for h in judged)


def test_pipeline_verify_scores_texts(full_index):
    p = verity.Pipeline(str(full_index), stage1="bm25", verifier="f1", reject_below=0.9)
    texts = ["the cat sat on the mat", "quarterly revenue grew"]
    v = p.verify("the cat sat on the mat", texts)
    assert len(v) == 2 and all(isinstance(x, verity.Verification) for x in v)
    assert v[0].probability == pytest.approx(1.0, abs=1e-2)
    assert v[0].probability > v[1].probability
    assert v[0].verdict == "match" and v[1].verdict == "near-miss"
    assert p.verify("anything", []) == []


def test_search_from_many_threads_matches_serial(full_index):
    p = verity.Pipeline(str(full_index))
    queries = ["where did the cat sit", "measles vaccine mortality", "spring flooding of rivers",
               "dogs and cats", "a dog chased a ball"] * 8
    serial = [[(h.id, h.score) for h in p.search(q, k=5)] for q in queries]
    with concurrent.futures.ThreadPoolExecutor(max_workers=4) as pool:
        threaded = list(pool.map(lambda q: [(h.id, h.score) for h in p.search(q, k=5)], queries))
    assert threaded == serial


def test_hits_outlive_their_pipeline(bm25_index):
    hits = verity.Pipeline(str(bm25_index), stage1="bm25", verifier="none").search("river", k=1)
    assert hits[0].title == "Rivers"
