"""Every library error reaches Python as verity.Error / ConfigError / FormatError
with the library's message."""
import pytest

import verity
from conftest import TINY_BEIR


def test_error_hierarchy():
    assert issubclass(verity.ConfigError, verity.Error)
    assert issubclass(verity.ConfigError, ValueError)
    assert issubclass(verity.FormatError, verity.Error)
    assert issubclass(verity.Error, RuntimeError)
    assert not issubclass(verity.FormatError, verity.ConfigError)
    assert verity.Error.__module__ == "verity"


def test_unknown_stage1_lists_the_valid_ones(bm25_index):
    with pytest.raises(verity.ConfigError, match=r"unknown stage1 'bogus' \(valid: bm25, dense, hybrid, auto\)"):
        verity.Pipeline(str(bm25_index), stage1="bogus", verifier="none")


def test_missing_part_is_named(bm25_index):
    with pytest.raises(verity.Error, match="dense"):
        verity.Pipeline(str(bm25_index), stage1="dense", verifier="none")


def test_bad_k(bm25_index):
    p = verity.Pipeline(str(bm25_index), stage1="bm25", verifier="none")
    with pytest.raises(verity.ConfigError, match="k must be positive"):
        p.search("cat", k=0)


def test_k_above_candidates_is_refused_not_cut_short(bm25_index):
    p = verity.Pipeline(str(bm25_index), stage1="bm25", verifier="none", candidates=2)
    with pytest.raises(verity.ConfigError, match=r"k=3 is above the pipeline's candidates=2"):
        p.search("cat", k=3)
    assert len(p.search("cat", k=2)) <= 2


def test_options_the_pipeline_does_not_read_are_refused(bm25_index, full_index):
    with pytest.raises(verity.ConfigError, match=r"fusion applies to stage1=\"hybrid\" only.*bm25"):
        verity.Pipeline(str(bm25_index), stage1="bm25", verifier="none", fusion="rrf")
    with pytest.raises(verity.ConfigError, match="combine applies to a stage 2"):
        verity.Pipeline(str(bm25_index), verifier="none", combine="rerank")
    with pytest.raises(verity.ConfigError, match=r"rrf_k applies to fusion=\"rrf\""):
        verity.Pipeline(str(full_index), fusion="weighted", rrf_k=30)
    with pytest.raises(verity.ConfigError, match=r"penalty_beta applies to combine=\"penalty\""):
        verity.Pipeline(str(full_index), penalty_beta=0.3)
    # Options in their scope, auto resolved first: hybrid on an index with a dense part.
    p = verity.Pipeline(str(full_index), fusion="rrf", rrf_k=30, combine="penalty", penalty_beta=0.3)
    assert "rrf" in p.describe() and "penalty" in p.describe()


def test_damaged_corpus_names_file_and_line(tmp_path):
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text('{"_id": "a", "text": "fine"}\n{"_id": "b", "text": \n')
    with pytest.raises(verity.FormatError, match=r"corpus\.jsonl:2"):
        verity.build_index(str(corpus), str(tmp_path / "idx"))
    assert not (tmp_path / "idx").exists()


def test_missing_index_is_an_error(tmp_path):
    with pytest.raises(verity.Error, match=str(tmp_path / "nowhere")):
        verity.Pipeline(str(tmp_path / "nowhere"), stage1="bm25", verifier="none")


def test_unknown_encoder_and_verifier():
    with pytest.raises(verity.ConfigError):
        verity.Encoder("no-such-encoder-kind:/nonexistent")
    with pytest.raises(verity.ConfigError, match="none"):
        verity.Verifier("none")
    with pytest.raises(verity.ConfigError, match="bogus"):
        verity.Verifier("bogus")


def test_bad_metric_and_fields():
    with pytest.raises(verity.ConfigError, match="title\\+text"):
        verity.evaluate(str(TINY_BEIR), fields="body")
    with pytest.raises(verity.ConfigError):
        verity.evaluate(str(TINY_BEIR), metrics="ndcg@x")


def test_wrong_argument_types_stay_type_errors(bm25_index):
    p = verity.Pipeline(str(bm25_index), stage1="bm25", verifier="none")
    with pytest.raises(TypeError):
        p.search(42)
