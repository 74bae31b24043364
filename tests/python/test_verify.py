"""verity.verify / verity.Verifier: index-free stage 2."""
import pytest

import verity

QUERY = "the dog bit the man"
TEXTS = ["the dog bit the man", "the man bit the dog", "stock prices fell sharply on monday"]


def test_default_verifier(use_lite, full_index):
    v = verity.verify(QUERY, TEXTS)
    assert len(v) == 3 and all(isinstance(x, verity.Verification) for x in v)
    assert all(isinstance(x.probability, float) for x in v)
    # One library path: the pipeline's stage 2 on texts scores them alike.
    p = verity.Pipeline(str(full_index), stage1="bm25", verifier="default")
    assert [x.probability for x in p.verify(QUERY, TEXTS)] == [x.probability for x in v]
    threshold = verity.Verifier("default").threshold
    if threshold is None:  # an uncalibrated default: no verdicts unless asked
        assert all(x.verdict is None for x in v)
    else:
        assert all(x.verdict == ("match" if x.probability >= threshold else "near-miss") for x in v)


def test_text_without_a_word_matches_nothing(use_lite):
    for blank in ("", "   ", "."):
        with pytest.raises(verity.ConfigError, match="query"):
            verity.verify(blank, TEXTS)
    v = verity.verify(QUERY, ["  ", "?", QUERY])
    assert [x.probability for x in v[:2]] == [0.0, 0.0]
    assert v[2].probability > 0.5


def test_default_refuses_an_opposite_in_a_short_text(use_lite):
    # Its network, trained on sentence pairs, accepted these; the calibration's flip cap refuses
    # a pair that differs only by an opposite or a negator.
    v = verity.Verifier("default")
    cap = 0.01
    for a, b in [("increase volume", "decrease volume"), ("cheap flights", "expensive flights"),
                 ("hot", "cold"), ("is the store open", "is the store closed")]:
        (r,) = v.verify(a, [b])
        assert r.probability <= cap and r.verdict == "near-miss", (a, b, r)
    # A rewording is no flip, and a negator with an opposite cancel out: the network decides.
    (same,) = v.verify("cheap flights", ["low cost flights"])
    assert same.verdict == "match"
    (cancel,) = v.verify("is the store not open", ["is the store closed"])
    assert cancel.probability > cap


def test_threshold_keyword_gives_verdicts(use_lite):
    v = verity.verify(QUERY, TEXTS, verifier="f1", threshold=0.99)
    assert v[0].verdict == "match"
    assert v[2].verdict == "near-miss"
    assert all(x.verdict == ("match" if x.probability >= 0.99 else "near-miss") for x in v)


def test_f1_scores_identity_at_one_and_matches_the_pipeline(use_lite, full_index):
    v = verity.verify(QUERY, TEXTS, verifier="f1")
    assert v[0].probability == pytest.approx(1.0, abs=1e-2)
    assert all(x.verdict is None for x in v)  # F1 has no calibrated threshold
    p = verity.Pipeline(str(full_index), stage1="bm25", verifier="f1")
    assert [x.probability for x in p.verify(QUERY, TEXTS)] == [x.probability for x in v]


def test_verifier_object_reuse_and_describe(use_lite):
    verifier = verity.Verifier("f2", threshold=0.5)
    assert verifier.threshold == 0.5
    assert "verifier=f2" in verifier.describe() and "encoder=use-lite" in verifier.describe()
    assert verifier.verify(QUERY, []) == []
    first = [x.probability for x in verifier.verify(QUERY, TEXTS)]
    assert [x.probability for x in verifier.verify(QUERY, TEXTS)] == first


def test_verify_accepts_any_sequence(use_lite):
    assert len(verity.verify(QUERY, tuple(TEXTS), verifier="f0")) == 3


def test_default_reads_a_swapped_list_in_one_order(use_lite):
    # Swapping the two sides of an "or" keeps the meaning; a role swap does not.
    a, b = "Is salt or sugar worse for your heart?", "Is sugar or salt worse for your heart?"
    forward, backward = verity.verify(a, [b])[0], verity.verify(b, [a])[0]
    assert forward.verdict == "match" and backward.verdict == "match"
    assert forward.probability == pytest.approx(backward.probability, abs=1e-3)
    assert verity.verify("The dog bit the man.", ["The man bit the dog."])[0].verdict == "near-miss"
