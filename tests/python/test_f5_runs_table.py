"""scripts/f5_runs_table.py: per-variant means over seeds from hand-made train-verifier summaries."""
import json
import subprocess
import sys

from conftest import ROOT

SCRIPT = ROOT / "scripts" / "f5_runs_table.py"


def summary(macro, qqp, negation, threshold, accuracy, best_accuracy, epoch=2, parameters=17269):
    return {
        "best_epoch": epoch,
        "best_dev_macro_auc": macro,
        "parameters": parameters,
        "calibration": {"threshold": threshold},
        "dev_nearmiss_pairwise_acc": {"negation": negation, "numeric": 1.0},
        "dev": {"qqp": {"accuracy": accuracy, "best_accuracy": best_accuracy},
                "nearmiss": {"accuracy": 0.98, "best_accuracy": 0.99}},
        "epoch_log": [{"epoch": 1, "dev_auc": {"qqp": 0.1, "nearmiss": 0.1}},
                      {"epoch": epoch, "dev_auc": {"qqp": qqp, "nearmiss": 0.99}}],
    }


def run(*args):
    return subprocess.run([sys.executable, str(SCRIPT), *map(str, args)], capture_output=True, text=True)


def test_means_over_seeds_per_variant(tmp_path):
    runs = {"base-s1": summary(0.80, 0.70, 0.90, 0.40, 0.70, 0.72),
            "base-s2": summary(0.84, 0.74, 1.00, 0.50, 0.70, 0.80),
            "head-s1": summary(0.90, 0.80, 0.95, 0.45, 0.75, 0.76, parameters=21629)}
    paths = []
    for name, run_summary in runs.items():
        path = tmp_path / f"{name}.json"
        path.write_text(json.dumps(run_summary))
        paths.append(path)
    out = run("--json", *paths)
    assert out.returncode == 0, out.stderr
    report = json.loads(out.stdout)
    assert set(report) == {"base", "head"}
    base = report["base"]
    assert base["seeds"] == 2 and base["parameters"] == 17269
    assert abs(base["macro"][0] - 0.82) < 1e-9 and abs(base["macro"][1] - 0.0282843) < 1e-6  # sample std
    assert abs(base["auc"]["qqp"][0] - 0.72) < 1e-9  # the kept epoch's, not the first
    assert abs(base["nearmiss_pairwise"]["negation"][0] - 0.95) < 1e-9
    assert base["within_0.03"] == ["2 of 2", "1 of 2"]  # seed 2's qqp verdicts are 0.10 under its best
    assert report["head"]["parameters"] == 21629 and report["head"]["macro"][1] == 0.0
    table = run(*paths)
    assert table.returncode == 0, table.stderr
    assert "| base | 2 | 17,269 |" in table.stdout and "0.820 ± 0.028" in table.stdout


def test_a_file_that_is_no_summary_is_named(tmp_path):
    bad = tmp_path / "x-s1.json"
    bad.write_text(json.dumps({"best_epoch": 1}))
    out = run(bad)
    assert out.returncode != 0
    assert "x-s1.json" in out.stderr and "not a train-verifier" in out.stderr
