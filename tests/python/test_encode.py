"""verity.Encoder / Encoded / similarity_map: shapes, dtypes and zero-copy views."""
import numpy as np
import pytest

import verity
from conftest import require_model


def test_encode_shapes_and_dtypes(use_lite):
    texts = ["a cat sat on the mat", "dogs", ""]
    out = use_lite.encode(texts)
    assert len(out) == 3 and out.dim == use_lite.dim
    assert out.pooled.dtype == np.float32 and out.pooled.shape == (3, use_lite.dim)
    assert len(out.tokens) == 3 and len(out.token_strings) == 3
    for t, strings, n in zip(out.tokens, out.token_strings, out.lengths):
        assert t.dtype == np.float32 and t.shape == (n, use_lite.dim) and len(strings) == n
        assert t.flags.c_contiguous
    assert out.lengths[0] > out.lengths[1] > 0 and out.lengths[2] == 0
    assert np.allclose(np.linalg.norm(out.pooled[:2], axis=1), 1.0, atol=1e-5)


def test_encode_returns_views_not_copies(use_lite):
    out = use_lite.encode(["the river floods the valley", "a dog"])
    pooled, tokens = out.pooled, out.tokens
    assert not pooled.flags.owndata and not tokens[0].flags.owndata
    assert np.shares_memory(pooled, out.pooled)          # every access views one buffer
    assert np.shares_memory(tokens[1], out.tokens[1])
    del out
    assert np.isfinite(pooled).all() and np.isfinite(tokens[0]).all()  # the views keep it alive


def test_encode_is_deterministic_and_options_apply(use_lite):
    a = use_lite.encode(["measles vaccination"], tokens=False)
    b = use_lite.encode(["measles vaccination"])
    assert a.tokens == [] and a.token_strings == []
    assert np.array_equal(a.pooled, b.pooled)
    raw = use_lite.encode(["measles vaccination"], normalize=False)
    assert not np.allclose(np.linalg.norm(raw.pooled), 1.0)
    cut = use_lite.encode(["one two three four five six seven"], max_length=3)
    assert cut.lengths == [3]


def test_glove_encoder():
    require_model("glove")
    enc = verity.Encoder("glove")
    out = enc.encode(["cats and dogs"])
    assert out.pooled.shape == (1, enc.dim) and out.tokens[0].shape[1] == enc.dim
    assert enc.spec.startswith("glove")


def test_similarity_map_is_the_cosine_matrix():
    rng = np.random.default_rng(7)
    q, d = rng.standard_normal((4, 16)), rng.standard_normal((6, 16))
    m = verity.similarity_map(q, d)
    expect = (q / np.linalg.norm(q, axis=1, keepdims=True)) @ (d / np.linalg.norm(d, axis=1, keepdims=True)).T
    assert m.dtype == np.float32 and m.shape == (4, 6)
    assert np.allclose(m, expect, atol=1e-5)
    assert not m.flags.owndata


def test_similarity_map_of_encoded_tokens(use_lite):
    out = use_lite.encode(["the cat sat", "the cat sat"])
    m = verity.similarity_map(out.tokens[0], out.tokens[1])
    assert m.shape == (out.lengths[0], out.lengths[1])
    assert np.allclose(np.diag(m), 1.0, atol=1e-4)


def test_similarity_map_checks_shapes():
    with pytest.raises(verity.ConfigError, match=r"query must be a 2-D array .*got shape \(3,\)"):
        verity.similarity_map(np.zeros(3, np.float32), np.zeros((2, 3), np.float32))
    with pytest.raises(verity.ConfigError, match="query has dim 3, candidate has dim 4"):
        verity.similarity_map(np.zeros((2, 3), np.float32), np.zeros((2, 4), np.float32))
    with pytest.raises(verity.ConfigError, match="finite"):
        verity.similarity_map(np.full((1, 3), np.nan, np.float32), np.ones((2, 3), np.float32))
