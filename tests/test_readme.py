"""Every README snippet runs as written, in a fresh folder: the Python block as a script, and each
`lossync` command of the shell blocks in order, except the few listed in SLOW (with the test that
covers them instead)."""

import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

README = (Path(__file__).resolve().parent.parent / "README.md").read_text()
BLOCKS = re.findall(r"```(\w+)\n(.*?)```", README, re.S)

#: Commands not run here, each covered elsewhere or needing what CI lacks.
SLOW = {
    "lossync bench": "times engines for minutes; speed is measured in benchmarks, never in tests",
    "lossync size-buffer": "bisection over dozens of 3000 s runs; tests/test_advisor.py runs it small",
    "--scheduler": "needs a Dask scheduler; tests/test_sweep.py runs one on a LocalCluster",
    "pip install": "the install itself (the test suite runs installed)",
    "./scripts/test.sh": "the test suite itself",
}


def _commands():
    for lang, body in BLOCKS:
        if lang != "sh":
            continue
        for line in body.splitlines():
            cmd = line.split("  #")[0].strip()
            if cmd and not cmd.startswith("#"):
                yield cmd


COMMANDS = list(_commands())


def test_the_readme_has_the_snippets_this_test_reads():
    assert any(lang == "python" for lang, _ in BLOCKS)
    assert sum(c.startswith("lossync ") for c in COMMANDS) >= 15


def test_shell_snippets_run_as_written(tmp_path):
    ran = 0
    for cmd in COMMANDS:
        if any(key in cmd for key in SLOW):
            continue
        argv = shlex.split(cmd)
        assert argv[0] == "lossync", cmd
        r = subprocess.run([sys.executable, "-m", "lossync", *argv[1:]], cwd=tmp_path, capture_output=True, text=True, timeout=600)
        assert r.returncode == 0, f"{cmd}\n{r.stderr}"
        assert "Traceback" not in r.stderr, cmd
        ran += 1
    assert ran >= 15


@pytest.mark.filterwarnings("ignore")
def test_python_snippet_runs_as_a_script(tmp_path):
    code = next(body for lang, body in BLOCKS if lang == "python")
    script = tmp_path / "snippet.py"
    script.write_text(code)
    r = subprocess.run([sys.executable, str(script)], cwd=tmp_path, capture_output=True, text=True, timeout=900)
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "paper-cubic" / "summary.json").exists() and (tmp_path / "res" / "runs").is_dir()
