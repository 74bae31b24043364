"""verity.Cache: put, lookup (hit, refused near-miss, miss), replace, remove,
clear, stats, TTL, metadata, errors, reopen and threads."""
import threading
import time

import pytest

import verity
from conftest import require_model


@pytest.fixture
def cache(tmp_path):
    require_model("use-lite")
    with verity.Cache(str(tmp_path / "c.sqlite")) as c:
        yield c


def test_paraphrase_hits_and_negation_is_refused(cache):
    entry = cache.put("Is port 6379 open by default?", "Yes, Redis listens on 6379.", namespace="n",
                      metadata={"model": "m1"})
    assert isinstance(entry, int)
    exact = cache.lookup("Is port 6379 open by default?", namespace="n")
    assert exact.hit and exact.reason == "exact" and exact.id == entry
    assert exact.response == "Yes, Redis listens on 6379."
    assert exact.prompt == "Is port 6379 open by default?"
    assert exact.metadata == {"model": "m1"}
    assert exact.probability == pytest.approx(1.0)

    refused = cache.lookup("Is port 6379 not open by default?", namespace="n")
    assert not refused.hit and not refused
    assert refused.id is None and refused.response is None and refused.prompt is None
    assert refused.reason in ("below_threshold", "below_cosine_floor")
    if refused.reason == "below_threshold":
        assert refused.probability < refused.threshold
        assert refused.best["id"] == entry
    assert refused.threshold_source == "verifier"
    assert set(refused.latency_ms) >= {"encode", "ann", "verify", "total"}
    d = refused.to_dict()
    assert d["hit"] is False and d["response"] is None


def test_a_swapped_relation_word_is_refused(cache):
    # "after" for "before": a cosine near 0.98, which the default's relation
    # opposites (its lexicon beside WordNet's antonyms) turn into a refusal.
    entry = cache.put("Should I eat before a workout?", "A light snack an hour before helps.", namespace="r")
    refused = cache.lookup("Should I eat after a workout?", namespace="r")
    assert not refused.hit
    assert refused.reason == "below_threshold"
    assert refused.best["id"] == entry and refused.best["similarity"] > 0.9
    assert refused.probability < refused.threshold
    assert cache.lookup("Should I eat before a workout?", namespace="r").hit


def test_contracted_negation_is_refused_and_matches_its_spelled_out_form(cache):
    # "isn't" reaches the tokenizer as "isn ' t": the verifier's lexicon reads
    # the clitic after the apostrophe as a negator.
    cache.put("The drug is effective against the virus.", "Yes.", namespace="plain")
    refused = cache.lookup("The drug isn't effective against the virus.", namespace="plain")
    assert not refused.hit and refused.reason in ("below_threshold", "below_cosine_floor")
    cache.put("The drug isn't effective against the virus.", "Right, it is not.", namespace="negated")
    served = cache.lookup("The drug is not effective against the virus.", namespace="negated")
    assert served.hit and served.reason == "verified", served.to_dict()
    assert served.response == "Right, it is not."


def test_min_probability_overrides_the_threshold(cache):
    cache.put("how do I reset my router", "Hold the reset button for 10 s.")
    r = cache.lookup("how can I reset my router", min_probability=0.0)
    assert r.hit and r.reason == "verified" and r.threshold == 0.0 and r.threshold_source == "request"
    never = cache.lookup("how can I reset my router", min_probability=1.01)
    assert not never.hit


def test_namespaces_replace_remove_clear_and_stats(cache):
    a = cache.put("what is the capital of France", "Paris", namespace="geo")
    again = cache.put("what is the capital of France", "Paris (updated)", namespace="geo")
    assert again != a or cache.get(a)["response"] == "Paris (updated)"
    assert cache.lookup("what is the capital of France", namespace="geo").response == "Paris (updated)"
    assert not cache.lookup("what is the capital of France", namespace="other").hit
    assert cache.lookup("what is the capital of France", namespace="other").reason == "empty"
    # to_dict is the object of POST /cache/lookup, namespace included
    assert cache.lookup("what is the capital of France", namespace="geo").to_dict()["namespace"] == "geo"
    b = cache.put("who wrote Hamlet", "Shakespeare", namespace="geo")
    assert cache.get(b)["namespace"] == "geo"
    assert cache.remove(b) is True and cache.remove(b) is False and cache.get(b) is None
    ids = cache.put_many([("one", "1"), ("two", "2"), ("three", "3")], namespace="nums")
    assert len(ids) == 3 and len(set(ids)) == 3
    s = cache.stats()
    assert s["entries"] == 4
    assert s["counters"]["reused_vectors"] == 1  # the repeated prompt was not encoded again
    assert {name: n["entries"] for name, n in s["namespaces"].items()} == {"geo": 1, "nums": 3}
    assert cache.clear("nums") == 3
    assert cache.stats()["entries"] == 1


def test_expired_entries_are_never_served(cache):
    cache.put("ephemeral question", "answer", ttl_s=0.05)
    time.sleep(0.2)
    assert not cache.lookup("ephemeral question").hit


def test_errors_name_the_field(tmp_path, cache):
    with pytest.raises(verity.ConfigError, match="metadata"):
        cache.put("p", "r", metadata=["not", "a", "dict"])
    for blank in ("   ", "?!"):  # nothing to match: refused, never served
        with pytest.raises(verity.ConfigError, match="prompt"):
            cache.put(blank, "r")
        with pytest.raises(verity.ConfigError, match="prompt"):
            cache.lookup(blank)
    with pytest.raises(verity.ConfigError):
        verity.Cache(str(tmp_path / "x.sqlite"), durability="sometimes")
    with pytest.raises(verity.Error):
        verity.Cache(str(tmp_path / "missing.sqlite"), create=False)
    bad = tmp_path / "bad.sqlite"
    bad.write_bytes(b"this is not a database" * 100)
    with pytest.raises(verity.Error):
        verity.Cache(str(bad))


def test_close_and_reopen_keeps_entries(tmp_path):
    require_model("use-lite")
    path = str(tmp_path / "c.sqlite")
    c = verity.Cache(path)
    entry = c.put("is the museum open on mondays", "No.")
    c.close()
    assert c.closed
    with pytest.raises(verity.Error, match="closed"):
        c.lookup("is the museum open on mondays")
    with verity.Cache(path) as again:
        assert again.get(entry)["response"] == "No."
        assert again.lookup("is the museum open on mondays").hit


def test_lookups_from_many_threads(cache):
    prompts = [f"question number {i} about topic {i * 7}" for i in range(16)]
    ids = cache.put_many([(p, f"answer {i}") for i, p in enumerate(prompts)])
    errors, results = [], {}

    def worker(k):
        try:
            for i in range(k, len(prompts), 4):
                results[i] = cache.lookup(prompts[i])
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=worker, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert all(results[i].hit and results[i].id == ids[i] for i in range(len(prompts)))
