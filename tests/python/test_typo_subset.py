"""scripts/typo_subset.py: the pairs it chooses (one word one edit apart, the
rest the same on the surface). Its errors: test_subset_files.py."""
import json
import subprocess
import sys

from conftest import ROOT

SCRIPT = ROOT / "scripts" / "typo_subset.py"


def run(*args):
    return subprocess.run([sys.executable, str(SCRIPT), *map(str, args)], capture_output=True, text=True)


def test_chooses_one_word_one_edit_apart(tmp_path):
    pairs = tmp_path / "qqp" / "dev.jsonl"
    pairs.parent.mkdir()
    rows = [
        {"a": "What is Verity's misson?", "b": "What is Verity's mission?", "label": 1},      # a letter dropped
        {"a": "What is a compiled languages?", "b": "What is a compiled language", "label": 1},  # added, case aside
        {"a": "How do I adapt a child?", "b": "How do I adopt a child?", "label": 0},          # changed
        {"a": "Is it quite here?", "b": "Is it quiet here?", "label": 1},                       # neighbours swapped
        {"a": "What is a cat?", "b": "What is a car?", "label": 0},                             # under five letters
        {"a": "Best laptop deals", "b": "Best laptop offers", "label": 1},                      # more than one edit
        {"a": "Senator Craig spoke", "b": "Senstor Craig spoke today", "label": 1},             # a word more
        {"a": "Order 12345 shipped", "b": "Order 12346 shipped", "label": 0},                   # not letters
        {"a": "The same text.", "b": "the same text", "label": 1},                              # no word differs
    ]
    pairs.write_text("".join(json.dumps(r) + "\n" for r in rows))
    out = tmp_path / "out"
    r = run(out, pairs)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout) == {"typo": 4, "typo-same": 3}
    chosen = [json.loads(l) for l in (out / "typo.jsonl").read_text().splitlines()]
    assert [p["a"] for p in chosen] == [rows[i]["a"] for i in (0, 1, 2, 3)]
    assert {p["source"] for p in chosen} == {"qqp"}
    same = [json.loads(l) for l in (out / "typo-same.jsonl").read_text().splitlines()]
    assert all(p["label"] == 1 for p in same) and len(same) == 3

