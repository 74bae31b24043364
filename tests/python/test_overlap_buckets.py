"""scripts/overlap_buckets.py: its AUC, its buckets and its errors on hand-made pair and score files."""
import importlib.util
import json
import subprocess
import sys

from conftest import ROOT, write_pairs_eval_run as write_run

SCRIPT = ROOT / "scripts" / "overlap_buckets.py"
spec = importlib.util.spec_from_file_location("overlap_buckets", SCRIPT)
overlap_buckets = importlib.util.module_from_spec(spec)
spec.loader.exec_module(overlap_buckets)


def test_roc_auc_counts_ties_half():
    assert overlap_buckets.roc_auc([0, 0, 1, 1], [0.1, 0.2, 0.3, 0.4]) == 1.0
    assert overlap_buckets.roc_auc([1, 1, 0, 0], [0.1, 0.2, 0.3, 0.4]) == 0.0
    assert overlap_buckets.roc_auc([0, 1], [0.5, 0.5]) == 0.5
    assert overlap_buckets.roc_auc([0, 1, 0, 1], [0.1, 0.2, 0.3, 0.4]) == 0.75
    assert overlap_buckets.roc_auc([1, 1], [0.1, 0.2]) is None


def run(*args):
    return subprocess.run([sys.executable, str(SCRIPT), *map(str, args)], capture_output=True, text=True)


def test_buckets_and_extremes(tmp_path):
    # 40 near-copies (overlap 1.0) and 40 pairs sharing no word; scorer "x" ranks the
    # copies perfectly and the others backwards, "y" the reverse.
    pairs, scores = [], []
    for i in range(80):
        copy = i < 40
        label = i % 2
        pairs.append({"a": f"alpha beta {i}", "b": f"alpha beta {i}" if copy else f"gamma delta {i + 1000}",
                      "label": label})
        high, low = 0.6 + i / 1000, i / 1000  # every high above every low
        good, bad = (high, low) if label else (low, high)
        scores.append({"file": "toy", "line": i + 1, "label": label, "scorer": "x", "score": good if copy else bad})
        scores.append({"file": "toy", "line": i + 1, "label": label, "scorer": "y", "score": bad if copy else good})
    report, rows = write_run(tmp_path, pairs, scores)
    out = run(report, rows, 3)
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout)
    assert result["scorers"] == ["x", "y"]
    toy = result["files"]["toy"]
    assert toy["all"]["pairs"] == 80 and toy["all"]["same_share"] == 0.5
    assert toy["jaccard"]["0.8-1.01"] == {"pairs": 40, "same_share": 0.5, "x": 1.0, "y": 0.0}
    assert toy["jaccard"]["0.0-0.2"] == {"pairs": 40, "same_share": 0.5, "x": 0.0, "y": 1.0}
    assert toy["digits_differ"]["true"]["pairs"] == 40
    below = toy["extremes"]["same_ranked_below"]
    assert len(below) == 3 and all(pairs[r["line"] - 1]["label"] == 1 for r in below)
    assert all(r["line"] > 40 and r["rank_gap"] > 0 for r in below)  # x ranks the disjoint positives low
    above = toy["extremes"]["different_ranked_above"]
    assert len(above) == 3 and all(r["line"] > 40 and r["rank_gap"] < 0 for r in above)


def test_bad_score_row_names_file_and_line(tmp_path):
    report, rows = write_run(tmp_path, [{"a": "a", "b": "b", "label": 1}],
                             [{"file": "toy", "line": 1, "label": 1, "scorer": "x", "score": 0.5}, {"file": "toy"}])
    out = run(report, rows)
    assert out.returncode != 0 and f"{rows}:2:" in out.stderr


def test_missing_scorer_is_refused(tmp_path):
    report, rows = write_run(tmp_path, [{"a": "a", "b": "b", "label": 1}, {"a": "c", "b": "d", "label": 0}],
                             [{"file": "toy", "line": 1, "label": 1, "scorer": "x", "score": 0.5},
                              {"file": "toy", "line": 1, "label": 1, "scorer": "y", "score": 0.5},
                              {"file": "toy", "line": 2, "label": 0, "scorer": "x", "score": 0.5}])
    out = run(report, rows)
    assert out.returncode != 0 and "line 2 lacks a score" in out.stderr
