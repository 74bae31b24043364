"""scripts/transposition_subset.py: the pairs it chooses (two words trading
places, the rest the same) and the kinds it leaves out or keeps apart."""
import json
import subprocess
import sys

from conftest import ROOT

SCRIPT = ROOT / "scripts" / "transposition_subset.py"


def read(path):
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_chooses_two_words_trading_places(tmp_path):
    pairs = tmp_path / "paws" / "dev.jsonl"
    pairs.parent.mkdir()
    rows = [
        {"a": "flights from Boston to Denver", "b": "Flights from DENVER to Boston?", "label": 0},
        {"a": "Are foxes afraid of badgers?", "b": "Are badgers afraid of foxes?", "label": 0},
        {"a": "How far is Lisbon from Madrid?", "b": "How far is Madrid from Lisbon?", "label": 1},
        {"a": "How can I learn chess fast online?", "b": "How can I learn chess online fast?", "label": 1},  # neighbours
        {"a": "Python or Java first?", "b": "Java or Python first?", "label": 1},                # a coordination
        {"a": "between a virus and a bacterium", "b": "between a bacterium and a virus", "label": 1},  # articles aside
        {"a": "by value or by reference", "b": "by reference or by value", "label": 1},      # a preposition aside
        {"a": "so it is in the box", "b": "so in is it the box", "label": 0},                # two stop words
        {"a": "flights from Boston to Denver", "b": "flights from Denver to Chicago", "label": 0},  # not a trade
        {"a": "flights from Boston to Denver", "b": "cheap flights from Denver to Boston", "label": 0},  # a word more
    ]
    pairs.write_text("".join(json.dumps(r) + "\n" for r in rows))
    out = tmp_path / "out"
    r = subprocess.run([sys.executable, str(SCRIPT), str(out), str(pairs)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout) == {"transposition": 3, "transposition-same": 1, "transposition-neighbours": 1,
                                    "transposition-symmetric": 1}
    assert [p["a"] for p in read(out / "transposition-symmetric.jsonl")] == [rows[2]["a"]]  # "How far"
    assert [p["a"] for p in read(out / "transposition.jsonl")] == [rows[i]["a"] for i in (0, 1, 2)]
    assert [p["a"] for p in read(out / "transposition-neighbours.jsonl")] == [rows[3]["a"]]
    assert {p["source"] for p in read(out / "transposition.jsonl")} == {"paws"}


def test_usage_without_files():
    r = subprocess.run([sys.executable, str(SCRIPT), "out"], capture_output=True, text=True)
    assert r.returncode != 0
    assert "Usage" in r.stderr
