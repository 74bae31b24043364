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
