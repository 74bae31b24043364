"""scripts/compare_scores.py: its counts and its errors on hand-made score files."""
import json
import subprocess
import sys

from conftest import ROOT

SCRIPT = ROOT / "scripts" / "compare_scores.py"


def write(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def row(line, label, score, scorer="default", file="toy"):
    return {"file": file, "line": line, "label": label, "scorer": scorer, "score": score}


def run(*args):
    return subprocess.run([sys.executable, str(SCRIPT), *map(str, args)], capture_output=True, text=True)


def test_counts_changes_and_crossings(tmp_path):
    before = write(tmp_path / "before.jsonl", [
        row(1, 1, 0.30), row(2, 1, 0.60), row(3, 0, 0.60), row(4, 0, 0.10), row(5, 1, 0.80),
        row(1, 1, 0.99, scorer="cosine"),  # another scorer is ignored
    ])
    after = write(tmp_path / "after.jsonl", [
        row(1, 1, 0.90), row(2, 1, 0.60), row(3, 0, 0.40), row(4, 0, 0.20), row(5, 1, 0.8000001),
        row(1, 1, 0.10, scorer="cosine"),
    ])
    out = run(before, after)
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout)
    assert result["scorer"] == "default" and result["threshold"] == 0.49
    same = result["groups"]["toy label 1"]
    assert same == {"pairs": 3, "changed": 1, "raised": 1, "mean_change": 0.6, "now_accepted": 1, "now_rejected": 0}
    different = result["groups"]["toy label 0"]
    assert different == {"pairs": 2, "changed": 2, "raised": 1, "mean_change": -0.05, "now_accepted": 0,
                         "now_rejected": 1}
    assert result["groups"]["all label 0"] == different
    # Another scorer and threshold: cosine fell from 0.99 to 0.10, below 0.5.
    cosine = json.loads(run(before, after, "cosine", 0.5).stdout)["groups"]["toy label 1"]
    assert cosine["now_rejected"] == 1 and cosine["mean_change"] == -0.89


def test_errors_name_the_file_and_line(tmp_path):
    good = write(tmp_path / "good.jsonl", [row(1, 1, 0.3)])
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps(row(1, 1, 0.3)) + "\n{\"file\": \"toy\"}\n")
    out = run(good, bad)
    assert out.returncode != 0 and f"{bad}:2: not a pairs-eval score row" in out.stderr
    other = write(tmp_path / "other.jsonl", [row(2, 1, 0.3)])
    out = run(good, other)
    assert out.returncode != 0 and "score different pairs" in out.stderr
    relabelled = write(tmp_path / "relabelled.jsonl", [row(1, 0, 0.3)])
    assert "label 1 before, 0 after" in run(good, relabelled).stderr
    assert "no scores of 'f5'" in run(good, good, "f5").stderr
    assert "is not a number" in run(good, good, "default", "high").stderr
    twice = write(tmp_path / "twice.jsonl", [row(1, 1, 0.3), row(1, 1, 0.4)])
    assert f"{twice}:2: a second score" in run(twice, good).stderr
