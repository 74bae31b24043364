"""scripts/conditional_calibration_probe.py: where the text length decides where each set's best
threshold lies, a calibration that sees the length holds both sets' verdicts near their best while
the logit alone cannot; and its errors."""
import json
import random
import subprocess
import sys

from conftest import ROOT

SCRIPT = ROOT / "scripts" / "conditional_calibration_probe.py"


def run(*args):
    return subprocess.run([sys.executable, str(SCRIPT), *map(str, args)], capture_output=True, text=True)


def toy(tmp_path):
    """Two sets: short pairs are the same meaning only above 0.8, long pairs already above 0.2."""
    rng = random.Random(5)
    rows = []
    for name, words, cut in (("short", 3, 0.8), ("long", 30, 0.2)):
        (tmp_path / "pairs" / name).mkdir(parents=True)
        pairs = []
        for i in range(300):
            score = rng.uniform(0.02, 0.98)
            label = int(score > cut)
            text = " ".join(f"w{rng.randrange(1000)}" for _ in range(words))
            pairs.append({"a": text, "b": text, "label": label})
            for scorer, value in (("default", score), ("cosine", rng.uniform(0.5, 1.0))):
                rows.append({"file": f"{name}/dev", "line": i + 1, "label": label, "scorer": scorer, "score": value})
        (tmp_path / "pairs" / name / "dev.jsonl").write_text("".join(json.dumps(p) + "\n" for p in pairs))
    scores = tmp_path / "scores.jsonl"
    scores.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return scores, tmp_path / "pairs"


def test_the_length_moves_each_sets_threshold(tmp_path):
    scores, pairs = toy(tmp_path)
    r = run(scores, "--pairs-dir", pairs, "--threshold", 0.5)
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["pairs"] == 600
    # one threshold for both sets misses one of them by far
    assert out["scorer_verdicts"]["worst_gap"] > 0.15
    assert out["logit"]["cross_validated"]["worst_gap"] > 0.1
    # with the length as a side input both sets sit near their best threshold
    with_length = out["logit+length+overlap"]["cross_validated"]
    assert with_length["within_0.03"] == 2 and with_length["worst_gap"] < 0.03
    assert set(with_length["by_set"]) == {"short", "long"}


def test_errors(tmp_path):
    scores, pairs = toy(tmp_path)
    r = run(scores, "--pairs-dir", tmp_path / "nowhere")
    assert r.returncode != 0 and "nowhere" in r.stderr
    r = run(scores, "--pairs-dir", pairs, "--scorer", "f5")
    assert r.returncode != 0 and "'f5'" in r.stderr
    lines = scores.read_text().splitlines()
    scores.write_text("\n".join(lines[:3] + ['{"file": "short/dev"}']) + "\n")
    r = run(scores, "--pairs-dir", pairs)
    assert r.returncode != 0 and "scores.jsonl:4" in r.stderr
    scores.write_text(json.dumps({"file": "short/dev", "line": 999, "label": 1, "scorer": "default", "score": 0.5}) + "\n"
                      + json.dumps({"file": "short/dev", "line": 999, "label": 1, "scorer": "cosine", "score": 0.5}) + "\n")
    r = run(scores, "--pairs-dir", pairs)
    assert r.returncode != 0 and "no line 999" in r.stderr
