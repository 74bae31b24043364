"""scripts/opposite_subset.py: the pairs it chooses from hand-made verifier
files' lexicons, and its errors."""
import json
import struct
import subprocess
import sys

from conftest import ROOT

SCRIPT = ROOT / "scripts" / "opposite_subset.py"


def valn(path, antonyms, lexicon=True):
    """A file laid out as the section container (docs/FORMATS.md): header,
    sections whose payloads start 64-byte aligned, END."""
    body = bytearray(struct.pack("<4sIQ", b"VALN", 7, 0))

    def section(tag, payload):
        body.extend(struct.pack("<4sIQ", tag, 0, len(payload)))
        body.extend(b"\0" * (-len(body) % 64))
        body.extend(payload)

    section(b"CONF", b'{"kind": "f5"}')
    if lexicon:
        section(b"LEXA", "".join(f"{a}\t{b}\n" for a, b in antonyms).encode())
    section(b"END.", b"")
    path.write_bytes(bytes(body))
    return path


def run(*args):
    return subprocess.run([sys.executable, str(SCRIPT), *map(str, args)], capture_output=True, text=True)


def test_chooses_pairs_where_a_new_opposite_fires_and_the_clean_swaps(tmp_path):
    old = valn(tmp_path / "old.valn", [("closed", "open")])
    new = valn(tmp_path / "new.valn", [("closed", "open"), ("on", "under"), ("after", "before"), ("arrive", "depart")])
    pairs = tmp_path / "pairs.jsonl"
    rows = [
        {"a": "The cat is under the table.", "b": "The cat is on the table.", "label": 0},        # clean swap
        {"a": "Eat before running.", "b": "Eat after you run.", "label": 0},                       # clean swap
        {"a": "Is the port open?", "b": "Is the port closed?", "label": 0},                        # old opposite
        {"a": "A book on birds under the bed.", "b": "A bird book under the bed.", "label": 1},    # fires, not clean
        {"a": "Prices rose before lunch.", "b": "Prices climbed afterwards.", "label": 1},         # no form of "after"
        {"a": "Relax after dinner.", "b": "Rest before dinner.", "label": 1},                      # clean swap, same
        {"a": "The courier is arriving.", "b": "The courier is departing.", "label": 0},          # forms without the e
    ]
    pairs.write_text("".join(json.dumps(r) + "\n" for r in rows[:3]) + "\n" +  # a blank line is skipped
                     "".join(json.dumps(r) + "\n" for r in rows[3:]))
    r = run(new, old, tmp_path / "out", pairs)
    assert r.returncode == 0, r.stderr
    report = json.loads(r.stdout)
    assert report["opposites"] == 3
    assert report["fires"] == {"pairs": 5, "same_meaning": 2}
    assert report["differ"] == {"pairs": 4, "same_meaning": 1}
    assert report["files"][str(pairs)]["differ"] == report["differ"]
    def lines(name):
        return [json.loads(line)["line"] for line in (tmp_path / "out" / name).read_text().splitlines()]
    assert lines("fires.jsonl") == [1, 2, 5, 7, 8]  # physical lines: the blank one is line 4
    assert lines("differ.jsonl") == [1, 2, 7, 8]
    chosen = [json.loads(line) for line in (tmp_path / "out" / "fires.jsonl").read_text().splitlines()]
    assert all(c["file"] == str(pairs) for c in chosen)


def test_errors_name_the_file(tmp_path):
    old = valn(tmp_path / "old.valn", [("closed", "open")])
    pairs = tmp_path / "pairs.jsonl"
    pairs.write_text('{"a": "x", "b": "y", "label": 1}\n')
    r = run(old, old, tmp_path / "out", pairs)
    assert r.returncode != 0 and "no opposite" in r.stderr
    r = run(valn(tmp_path / "bare.valn", [], lexicon=False), old, tmp_path / "out", pairs)
    assert r.returncode != 0 and "bare.valn" in r.stderr and "LEXA" in r.stderr
    (tmp_path / "other.bin").write_bytes(b"VVRF" + b"\0" * 60)
    r = run(tmp_path / "other.bin", old, tmp_path / "out", pairs)
    assert r.returncode != 0 and "other.bin" in r.stderr
    new = valn(tmp_path / "new.valn", [("closed", "open"), ("on", "under")])
    pairs.write_text('{"a": "x", "b": "y", "label": 1}\n{"a": "x"}\n')
    r = run(new, old, tmp_path / "out", pairs)
    assert r.returncode != 0 and "pairs.jsonl:2" in r.stderr
