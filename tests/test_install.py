"""What `pip install .` puts on a machine is enough outside the checkout: the shipped examples,
found by name, and the command line (README: install and run)."""

import importlib.metadata
import json
import subprocess
import sys
from pathlib import Path

import pytest

import lossync

ROOT = Path(__file__).resolve().parent.parent


def installed_as_a_user_would():
    dist = importlib.metadata.distribution("lossync")
    direct = json.loads(dist.read_text("direct_url.json") or "{}")
    return dist, not direct.get("dir_info", {}).get("editable", False)


def test_examples_are_installed_and_run_outside_the_checkout(tmp_path):
    dist, plain = installed_as_a_user_would()
    if not plain:
        pytest.skip("lossync is installed editable (pip install -e), so its files are the checkout's; "
                    "./scripts/test.sh installs it as a user does (pip install .)")
    assert not Path(lossync.__file__).resolve().is_relative_to(ROOT), "imported from the checkout, not the installed package"
    shipped = {Path(str(f)).name for f in dist.files if str(f).startswith("lossync/examples/")}
    in_checkout = {p.name for p in (ROOT / "examples").iterdir() if p.is_file()}
    assert in_checkout and in_checkout <= shipped, f"not installed: {sorted(in_checkout - shipped)}"

    def cli(*args):
        return subprocess.run([sys.executable, "-m", "lossync", *args], cwd=tmp_path, capture_output=True, text=True, timeout=300)

    listed = cli("examples")
    assert listed.returncode == 0 and "dumbbell-reno" in listed.stdout, listed.stderr
    run = cli("run", "dumbbell-reno", "--set", "run.duration=120", "--set", "run.warmup=20", "--out", "out", "--no-figure")
    assert run.returncode == 0, run.stderr
    assert lossync.Result.read(tmp_path / "out").summary["utilization"] > 0


def test_short_commands_import_neither_numpy_nor_pandas(tmp_path):
    # `lossync validate` and `--help` imported pandas and numpy (0.4 s of the 0.5-0.7 s they took,
    # issue 30 item 4): they are imported on first use (lossync/lazy.py).
    probe = ("import sys, runpy\nsys.argv = ['lossync', *sys.argv[1:]]\n"
             "try:\n    runpy.run_module('lossync', run_name='__main__')\nexcept SystemExit:\n    pass\n"
             "print('LOADED', sorted(m for m in ('numpy', 'pandas') if m in sys.modules), file=sys.stderr)\n")
    for args, loaded in ((["validate", "dumbbell-reno"], "[]"), (["--help"], "[]"), (["run", "--help"], "[]"),
                         # A run's arrays come from the core as numpy arrays; its tables are pandas
                         # DataFrames made when first read (writing them, here).
                         (["run", "dumbbell-reno", "--duration", "1s", "--set", "run.warmup=0"], "['numpy']"),
                         (["run", "dumbbell-reno", "--duration", "1s", "--set", "run.warmup=0", "--out", "o", "--no-figure"],
                          "['numpy', 'pandas']")):
        r = subprocess.run([sys.executable, "-c", probe, *args], capture_output=True, text=True, cwd=tmp_path)
        said = [line for line in r.stderr.splitlines() if line.startswith("LOADED")]
        assert said == [f"LOADED {loaded}"], (args, r.stderr[-2000:])
