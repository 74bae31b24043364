"""scripts/question_word_probe.py: on hand-made runs where the question-word flag
decides the label, the flag lifts the cross-validated AUC; where it says nothing,
it does not; and its errors."""
import json
import random
import subprocess
import sys

from conftest import ROOT, write_pairs_eval_run as write_run

SCRIPT = ROOT / "scripts" / "question_word_probe.py"


def run(*args):
    return subprocess.run([sys.executable, str(SCRIPT), *map(str, args)], capture_output=True, text=True)


def toy(tmp_path, flag_decides):
    rng = random.Random(3)
    pairs, scores = [], []
    for i in range(200):
        differ = i % 2 == 1
        label = int(not differ) if flag_decides else rng.randint(0, 1)
        b = "Why is the sky blue?" if differ else "How is the sky blue?"
        pairs.append({"a": "How is the sky blue?", "b": b, "label": label})
        scores.append({"file": "toy", "line": i + 1, "label": label, "scorer": "default", "score": rng.uniform(0.05, 0.95)})
    return write_run(tmp_path, pairs, scores)


def test_the_flag_lifts_the_auc_only_where_it_carries_the_label(tmp_path):
    r = run(*toy(tmp_path, flag_decides=True))
    assert r.returncode == 0, r.stderr
    toy_file = json.loads(r.stdout)["toy"]
    assert toy_file["pairs"] == 200 and toy_file["question_words_differ"] == 0.5
    assert toy_file["same_share_where_they_differ"] == 0.0
    assert toy_file["auc_logit_and_flag_cv"] > 0.95 > toy_file["auc_logit_cv"]
    r = run(*toy(tmp_path, flag_decides=False))
    assert r.returncode == 0, r.stderr
    toy_file = json.loads(r.stdout)["toy"]
    assert abs(toy_file["auc_logit_and_flag_cv"] - toy_file["auc_logit_cv"]) < 0.1


def test_errors(tmp_path):
    report, rows = toy(tmp_path, flag_decides=True)
    r = run(report, rows, "nosuch")
    assert r.returncode != 0 and "nosuch" in r.stderr
    rows.write_text('{"file": "toy"}\n')
    r = run(report, rows)
    assert r.returncode != 0 and "scores.jsonl:1" in r.stderr
    rows.write_text(json.dumps({"file": "toy", "line": 999, "label": 1, "scorer": "default", "score": 0.5}) + "\n")
    r = run(report, rows)
    assert r.returncode != 0 and "toy line 999" in r.stderr
    rows.write_text(json.dumps({"file": "other", "line": 1, "label": 1, "scorer": "default", "score": 0.5}) + "\n")
    r = run(report, rows)
    assert r.returncode != 0 and "other" in r.stderr
