"""Every reproduction runs with --quick and writes data, a figure and a claim-by-claim report."""

import subprocess
import sys

import pytest

from lossync.studies import STUDIES, reproduce

EXPECTED = ["fig2", "fig3", "fig4", "fig8", "fig9", "fig10", "fig11", "fig12", "testbed", "ghstcp", "xcp-stability", "buffer-requirements"]


def test_list_names_every_study():
    r = subprocess.run([sys.executable, "-m", "lossync.cli", "reproduce", "--list"], capture_output=True, text=True)
    assert r.returncode == 0
    assert [line.split()[0] for line in r.stdout.splitlines()] == EXPECTED
    assert list(STUDIES) == EXPECTED


@pytest.mark.parametrize("name", EXPECTED)
def test_quick_reproduction_writes_data_figure_and_report(tmp_path, name):
    report = reproduce(name, tmp_path, quick=True)
    assert (tmp_path / "figure.png").read_bytes()[:4] == b"\x89PNG"
    assert list(tmp_path.glob("*.parquet")) or list(tmp_path.glob("*.csv"))
    text = report.read_text()
    rows = [line for line in text.splitlines() if line.startswith("| ") and not line.startswith("| paper")]
    assert len(rows) == len(STUDIES[name].claims) >= 1
    assert all(line.rstrip().endswith(("| yes |", "| **no** |", "| n/a |")) for line in rows)


def test_unknown_study_is_a_clear_error():
    r = subprocess.run([sys.executable, "-m", "lossync.cli", "reproduce", "fig99"], capture_output=True, text=True)
    assert r.returncode == 2 and "unknown study 'fig99'" in r.stderr
