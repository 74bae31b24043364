"""scripts/word_class_subset.py: the pairs it chooses (one word changed for a
word of another class of its group, the rest the same on the surface) and
its errors on a bad GROUPS spec."""
import json
import subprocess
import sys

from conftest import ROOT

SCRIPT = ROOT / "scripts" / "word_class_subset.py"
DAYS = "yesterday|today,tonight|tomorrow;before|during|after"


def run(*args):
    return subprocess.run([sys.executable, str(SCRIPT), *map(str, args)], capture_output=True, text=True)


def test_chooses_a_word_of_another_class_of_its_group(tmp_path):
    pairs = tmp_path / "qqp" / "dev.jsonl"
    pairs.parent.mkdir()
    rows = [
        {"a": "What is the weather today?", "b": "What is the weather tomorrow?", "label": 0},  # two classes
        {"a": "Eat during a workout", "b": "Eat after a workout", "label": 0},                  # second group
        {"a": "Today it rains.", "b": "tomorrow it rains", "label": 1},                         # case, punctuation aside
        {"a": "Is it open today?", "b": "Is it open tonight?", "label": 1},                     # one class
        {"a": "Is it open today?", "b": "Is it open after?", "label": 0},                       # two groups
        {"a": "Is it open today?", "b": "Is it still open tomorrow?", "label": 0},              # a word more
        {"a": "Is it open today?", "b": "Is it shut tomorrow?", "label": 0},                    # two words differ
    ]
    pairs.write_text("".join(json.dumps(r) + "\n" for r in rows))
    out = tmp_path / "out"
    r = run(DAYS, out, pairs)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout) == {"word-class": 3, "word-class-same": 1}
    chosen = [json.loads(l) for l in (out / "word-class.jsonl").read_text().splitlines()]
    assert [p["a"] for p in chosen] == [rows[i]["a"] for i in (0, 1, 2)]
    assert {p["source"] for p in chosen} == {"qqp"}


def test_a_bad_groups_spec_is_refused(tmp_path):
    pairs = tmp_path / "p.jsonl"
    pairs.write_text(json.dumps({"a": "x", "b": "y", "label": 1}) + "\n")
    r = run("today|today", tmp_path / "out", pairs)
    assert r.returncode != 0 and "'today' is listed twice" in r.stderr
    r = run(";|", tmp_path / "out", pairs)
    assert r.returncode != 0 and "holds no word" in r.stderr
