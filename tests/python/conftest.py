"""Shared fixtures of the Python package tests (run under ctest with
PYTHONPATH=build/python; see python/CMakeLists.txt)."""
import os
import pathlib
import subprocess
import json

import pytest

import verity

ROOT = pathlib.Path(__file__).resolve().parents[2]
TINY_BEIR = ROOT / "tests" / "fixtures" / "tiny_beir"


def model_dir(name):
    root = os.environ.get("VERITY_MODEL_DIR") or str(ROOT / "models")
    return pathlib.Path(root) / name


def require_model(name):
    """Skips (or fails under VERITY_REQUIRE_MODELS) when a pretrained model is not converted."""
    if not (model_dir(name) / "verity.json").exists():
        message = f"models/{name} not converted (scripts/setup_models.sh)"
        if os.environ.get("VERITY_REQUIRE_MODELS"):
            pytest.fail(message)
        pytest.skip(message)


def run_cli(*args):
    """Runs the verity binary with --json and returns its one JSON object."""
    binary = os.environ.get("VERITY_BINARY") or str(ROOT / "build" / "verity")
    out = subprocess.run([binary, *args, "--json", "--quiet"], check=True, capture_output=True, text=True)
    return json.loads(out.stdout)


@pytest.fixture(autouse=True, scope="session")
def quiet_library():
    verity.set_quiet(True)


@pytest.fixture(scope="session")
def use_lite():
    require_model("use-lite")
    return verity.Encoder("use-lite")


@pytest.fixture(scope="session")
def full_index(tmp_path_factory, use_lite):
    """tiny_beir with every part (bm25, dense, tokens) from use-lite."""
    out = tmp_path_factory.mktemp("index") / "full"
    verity.build_index(str(TINY_BEIR), str(out), bm25=True, dense=True, tokens=True)
    return out


@pytest.fixture(scope="session")
def bm25_index(tmp_path_factory):
    """tiny_beir with the BM25 part only (needs no model)."""
    out = tmp_path_factory.mktemp("index") / "bm25"
    verity.build_index(str(TINY_BEIR), str(out))
    return out


def write_pairs_eval_run(tmp_path, pairs, scores):
    """A pairs-eval run as the scripts read it: one data file named "toy", the
    --json report naming it, and the --scores-out rows."""
    data = tmp_path / "pairs.jsonl"
    data.write_text("".join(json.dumps(p) + "\n" for p in pairs))
    report = tmp_path / "report.json"
    report.write_text(json.dumps({"data": [{"name": "toy", "path": str(data)}]}))
    rows = tmp_path / "scores.jsonl"
    rows.write_text("".join(json.dumps(r) + "\n" for r in scores))
    return report, rows
