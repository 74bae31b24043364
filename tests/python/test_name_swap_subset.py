"""scripts/name_swap_subset.py: the pairs it chooses (one capitalized word
inside the text swapped for another, the rest the same ignoring case) and
the near spellings it keeps apart. Its errors: test_subset_files.py."""
import json
import subprocess
import sys

from conftest import ROOT

SCRIPT = ROOT / "scripts" / "name_swap_subset.py"


def run(*args):
    return subprocess.run([sys.executable, str(SCRIPT), *map(str, args)], capture_output=True, text=True)


def read(path):
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_chooses_one_capitalized_word_swapped(tmp_path):
    pairs = tmp_path / "qqp" / "dev.jsonl"
    pairs.parent.mkdir()
    rows = [
        {"a": "How do I install Python on Windows?", "b": "How do I install Java on Windows?", "label": 0},
        {"a": "what is the weather in Canada", "b": "What is the weather in Germany?", "label": 0},  # case aside
        {"a": "Do you tip your Deliveroo courier?", "b": "Do you tip your Glovo courier?", "label": 1},
        {"a": "He studied with Willi Muenzenberg.", "b": "He studied with Willy Muenzenberg.", "label": 1},  # near
        {"a": "The West Zhou state", "b": "The Western Zhou state", "label": 1},                        # a start
        {"a": "Python is fun", "b": "Java is fun", "label": 0},                           # the first word
        {"a": "How do I install python?", "b": "How do I install java?", "label": 0},     # not capitalized
        {"a": "Is Paris in France?", "b": "Is Paris in Europe today?", "label": 0},       # a word more
        {"a": "Is Paris near Lyon?", "b": "Is Rome near Milan?", "label": 0},             # two words swapped
        {"a": "Is it Open?", "b": "Is it open?", "label": 1},                             # only case differs
        {"a": "How do I reset my iPhone?", "b": "How do I reset my iPad?", "label": 0},   # names in small letters
        {"a": "Is 16GB of RAM enough?", "b": "Is 8GB of RAM enough?", "label": 0},       # a number's unit
        {"a": "iPhone batteries wear out", "b": "iPad batteries wear out", "label": 0},   # the first word
    ]
    pairs.write_text("".join(json.dumps(r) + "\n" for r in rows))
    out = tmp_path / "out"
    r = run(out, pairs)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout) == {"name-swap": 4, "name-swap-same": 1, "name-swap-near": 2,
                                    "name-swap-first-word": 1}
    assert [p["a"] for p in read(out / "name-swap-first-word.jsonl")] == [rows[12]["a"]]
    assert [p["a"] for p in read(out / "name-swap.jsonl")] == [rows[i]["a"] for i in (0, 1, 2, 10)]
    assert [p["a"] for p in read(out / "name-swap-near.jsonl")] == [rows[i]["a"] for i in (3, 4)]
    assert {p["source"] for p in read(out / "name-swap.jsonl")} == {"qqp"}
    assert [p["label"] for p in read(out / "name-swap-same.jsonl")] == [1]

