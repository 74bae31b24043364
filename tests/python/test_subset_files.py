"""scripts/subset_files.py, through the subset scripts that read labelled
pairs with it: a bad line ends the run naming its file and line, and nothing
is written."""
import subprocess
import sys

import pytest

from conftest import ROOT


@pytest.mark.parametrize("script", ["typo_subset.py", "name_swap_subset.py"])
@pytest.mark.parametrize("bad", ['{"b": "y", "label": 0}', '{"a": "x", "b": "y", "label": "same"}', "not json"])
def test_a_bad_line_names_the_file_and_line(tmp_path, script, bad):
    pairs = tmp_path / "pairs.jsonl"
    pairs.write_text('{"a": "x", "b": "y", "label": 1}\n' + bad + "\n")
    out = tmp_path / "out"
    r = subprocess.run([sys.executable, str(ROOT / "scripts" / script), str(out), str(pairs)],
                       capture_output=True, text=True)
    assert r.returncode != 0
    assert f"{pairs}:2: not a labelled pair" in r.stderr
    assert r.stdout == "" and not out.exists()
