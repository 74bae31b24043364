"""scripts/pair_triples.py: the triples it writes from labelled pairs (labelled
negatives preferred, a mined one otherwise, the query itself as the positive of
a different-meaning pair with no paraphrase), the per-set cap, and its errors."""
import json
import subprocess
import sys

from conftest import ROOT

SCRIPT = ROOT / "scripts" / "pair_triples.py"


def run(*args):
    return subprocess.run([sys.executable, str(SCRIPT), *map(str, args)], capture_output=True, text=True)


def write(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_triples_follow_the_labels(tmp_path):
    pairs = write(tmp_path / "train.jsonl", [
        {"a": "how do I learn python", "b": "what is the best way to learn python", "label": 1},
        {"a": "how do I learn python", "b": "how do I learn java", "label": 0},
        {"a": "is the port open", "b": "is the port closed", "label": 0},
        {"a": "the cat sat on the mat", "b": "a cat was sitting on the mat", "label": 1},
    ])
    out = tmp_path / "triples.jsonl"
    r = run(out, pairs, "--seed", 3)
    assert r.returncode == 0, r.stderr
    triples = [json.loads(line) for line in out.read_text().splitlines()]
    by_query = {(t["query"], t["positive"]): t["negative"] for t in triples}
    # the labelled different-meaning partner is the negative of its query
    assert by_query[("how do I learn python", "what is the best way to learn python")] == "how do I learn java"
    # the other direction has no labelled negative: a mined text, never the positive or the query
    mined = by_query[("what is the best way to learn python", "how do I learn python")]
    assert mined not in ("what is the best way to learn python", "how do I learn python")
    # a different-meaning pair whose a has no paraphrase: the query is its own positive
    assert by_query[("is the port open", "is the port open")] == "is the port closed"
    # "how do I learn python" has a paraphrase, so its negative pair adds no self triple
    assert ("how do I learn python", "how do I learn python") not in by_query
    assert len(triples) == 5
    for t in triples:
        assert t["negative"] != t["positive"]


def test_the_cap_samples_each_set(tmp_path):
    rows = [{"a": f"question number {i}", "b": f"the question numbered {i}", "label": 1} for i in range(50)]
    rows += [{"a": f"question number {i}", "b": f"answer number {i}", "label": 0} for i in range(50)]
    pairs = write(tmp_path / "train.jsonl", rows)
    out = tmp_path / "triples.jsonl"
    r = run(out, pairs, "--max-pairs", 10)
    assert r.returncode == 0, r.stderr
    assert "10 pairs" in r.stderr
    assert 0 < len(out.read_text().splitlines()) <= 20


def test_errors(tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"a": "x", "b": "y", "label": 1}\n{"a": "x"}\n')
    out = tmp_path / "triples.jsonl"
    r = run(out, bad)
    assert r.returncode != 0 and "bad.jsonl:2" in r.stderr
    bad.write_text('{"a": "x", "b": "", "label": 1}\n')
    r = run(out, bad)
    assert r.returncode != 0 and "bad.jsonl:1" in r.stderr
    assert not out.exists()
