"""A result set is whole or visibly not there: interrupting `run --out` anywhere, by an exception
at every step of the write or by SIGKILL / SIGINT at random moments of the process, never leaves a
folder that `Result.read` accepts with files of two runs, and leaves no process or debris behind."""

import errno
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest

import lossync
from lossync import io
from lossync.errors import InputFileError


def scenario(seed):
    return {
        "dumbbell": {"capacity": "100Mbps", "buffer": {"bdp_fraction": 0.25}},
        "flows": [{"count": 3, "cc": "reno", "rtt": "60ms..140ms"}],
        "run": {"duration": "100s", "record_interval": "1s", "seed": seed},
    }


def assert_whole(folder, seeds):
    """`folder` holds no result, or one complete result of one of `seeds` (all its files)."""
    try:
        r = lossync.Result.read(folder)
    except InputFileError:
        assert not (Path(folder) / "summary.json").exists() or pytest.fail("summary.json present but unreadable")
        return None
    assert r.summary["seed"] in seeds
    assert r.scenario["run"]["seed"] == r.summary["seed"]
    assert f"seed = {r.summary['seed']}" in (Path(folder) / "scenario.toml").read_text()
    return r.summary["seed"]


def test_read_gives_back_what_write_wrote(tmp_path):
    r = lossync.run(scenario(1))
    r.write(tmp_path, figure=False)
    back = lossync.Result.read(tmp_path)
    assert back.summary == json.loads(json.dumps(r.summary))
    pd.testing.assert_frame_equal(back.series, r.series)
    pd.testing.assert_frame_equal(back.events, r.events, check_dtype=False)
    assert back.scenario == json.loads(json.dumps(r.scenario))


def test_read_refuses_a_set_with_another_runs_file(tmp_path):
    lossync.run(scenario(1)).write(tmp_path / "a", figure=False)
    lossync.run(scenario(2)).write(tmp_path / "b", figure=False)
    shutil.copy(tmp_path / "b" / "series.parquet", tmp_path / "a" / "series.parquet")
    with pytest.raises(InputFileError, match="series.parquet: does not match its summary"):
        lossync.Result.read(tmp_path / "a")
    (tmp_path / "b" / "events.csv").unlink()
    with pytest.raises(InputFileError, match="events.csv: missing"):
        lossync.Result.read(tmp_path / "b")


def test_a_file_that_cannot_be_replaced_is_named_as_the_users_file_and_the_folder_reads_as_no_result(tmp_path):
    # It named the staging copy (out/.partial-PID-xyz/series.parquet) and did not say that the old
    # result was gone. A folder in a file's place stands for any file that cannot be replaced
    # (read-only, immutable) without needing root.
    out = tmp_path / "Results" / "Run1"  # capitals: the message gave the path lowercased
    lossync.run(scenario(1)).write(out, figure=False)
    (out / "series.parquet").unlink()
    (out / "series.parquet").mkdir()
    (out / "series.parquet" / "keep").write_text("")
    doc = tmp_path / "s.toml"
    doc.write_text(lossync.run(scenario(2)).scenario_toml())
    r = subprocess.run([sys.executable, "-m", "lossync", "run", str(doc), "--out", str(out), "--no-figure"],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 2 and "Traceback" not in r.stderr, r.stderr
    error = [line for line in r.stderr.splitlines() if line.startswith("lossync: error:")]
    assert error == [f"lossync: error: {out / 'series.parquet'}: is a directory; {out} holds no complete result now"], r.stderr
    assert assert_whole(out, {1, 2}) is None
    assert not list(out.glob(".partial-*")), "staging left behind"


def test_a_write_that_fails_names_the_users_file_and_leaves_the_old_result(tmp_path, monkeypatch):
    # A full disk while the set is staged: the error named the staging copy, and said nothing of
    # the old result, which is still whole. A full disk is the folder's fault: it names the folder.
    out = tmp_path / "out"
    lossync.run(scenario(1)).write(out, figure=False)
    new = lossync.run(scenario(2))

    def no_space(self, *a, **k):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(self))

    monkeypatch.setattr(Path, "write_text", no_space)
    with pytest.raises(OSError) as info:
        new.write(out, figure=False)
    assert Path(info.value.filename) == out and ".partial" not in info.value.filename, info.value
    assert "untouched" in info.value.strerror, info.value
    monkeypatch.undo()
    assert assert_whole(out, {1, 2}) == 1


@pytest.mark.parametrize("where", ["write", "replace", "unlink"])
def test_an_exception_at_any_step_of_a_rewrite_leaves_the_old_result_or_none(tmp_path, monkeypatch, where):
    old, new = lossync.run(scenario(1)), lossync.run(scenario(2))
    steps = 0
    while True:
        shutil.rmtree(tmp_path / "out", ignore_errors=True)
        old.write(tmp_path / "out")
        calls = 0

        def fail_after(real, limit=steps):
            def wrapped(*a, **k):
                nonlocal calls
                calls += 1
                if calls > limit:
                    raise KeyboardInterrupt
                return real(*a, **k)
            return wrapped

        with monkeypatch.context() as m:
            if where == "write":
                m.setattr(Path, "write_text", fail_after(Path.write_text))
            elif where == "replace":
                m.setattr(io.os, "replace", fail_after(os.replace))
            else:
                m.setattr(Path, "unlink", fail_after(Path.unlink))
            try:
                new.write(tmp_path / "out", figure=where != "unlink")  # without: the old figure is removed
                finished = True
            except KeyboardInterrupt:
                finished = False
        seed = assert_whole(tmp_path / "out", {1, 2})
        assert not list((tmp_path / "out").glob(".partial-*")), "staging left behind"
        assert seed == (2 if finished else seed)
        if finished:
            break
        steps += 1
    assert steps >= 2  # the failure was injected at several steps before the write went through


def run_cli(args):
    return subprocess.Popen([sys.executable, "-m", "lossync", *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def children_of(pid):
    out = subprocess.run(["pgrep", "-P", str(pid)], capture_output=True, text=True).stdout
    return [int(c) for c in out.split()]


@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGINT])
def test_killing_run_out_at_random_moments_never_leaves_a_mixed_result(tmp_path, sig):
    f = tmp_path / "s.toml"
    f.write_text('dumbbell = { capacity = "100Mbps", buffer = { bdp_fraction = 0.25 } }\n'
                 'flows = [{ count = 3, cc = "reno", rtt = "60ms..140ms" }]\n'
                 'run = { duration = "1200s", record_interval = "0.4s" }\n')
    out = tmp_path / "out"
    args = ["run", str(f), "--out", str(out)]
    started = time.monotonic()
    first = run_cli([*args, "--seed", "1"])
    assert first.communicate(timeout=120) and first.returncode == 0
    whole = time.monotonic() - started
    seen = set()
    seeds = [1]

    def kill_after(delay_s):
        seed_now = max(seeds) + 1
        seeds.append(seed_now)
        proc = run_cli([*args, "--seed", str(seed_now)])
        time.sleep(delay_s)
        kids = children_of(proc.pid)
        proc.send_signal(sig)
        _, err = proc.communicate(timeout=60)
        assert "Traceback" not in err, err
        assert all(not Path(f"/proc/{k}").exists() for k in kids), "a child outlived the run"
        seed = assert_whole(out, set(seeds))
        if seed is not None and seed == seed_now:
            # A result of this run is either the whole simulation, or says it is partial.
            s = lossync.Result.read(out).summary
            if s["partial"]:
                assert sig == signal.SIGINT and s["duration_s"] < 1200 and any(w.startswith("interrupted:") for w in s["warnings"])
            else:
                assert s["duration_s"] == 1200
        seen.add((proc.returncode, seed == seed_now))

    # Moments spread over the whole life of the process: start-up, simulation, writing (the run
    # is long enough for its simulation to be about a third of that life).
    for percent in sorted(random.Random(20261123).sample(range(1, 100), 10)):
        kill_after(whole * percent / 100)
    # Later runs can be slower than the first (a loaded machine; seen twice in full suites, every
    # kill before the result was written): then kill later, until a run has had time to finish.
    for factor in (1.5, 2.5, 4.0):
        if len(seen) >= 2:
            break
        kill_after(whole * factor)
    # A finished run afterwards removes what killed writers left (their staging folders).
    last = run_cli([*args, "--seed", "99"])
    assert last.communicate(timeout=120) and last.returncode == 0
    assert assert_whole(out, {99}) == 99
    assert not [p.name for p in out.iterdir() if p.name.startswith(".")], "debris left in the result folder"
    assert len(seen) >= 2, f"every kill landed in the same phase: {seen}"


def test_an_interrupt_a_c_extension_turns_into_another_error_still_exits_130():
    # Seen once in 10 random-moment SIGINTs: the interrupt landed in matplotlib's Agg renderer,
    # which raised "ValueError: Invalid bounding box" instead, and the CLI printed a traceback.
    code = (
        "import os, signal, sys\n"
        "from lossync import cli\n"
        "@cli.main.command('boom')\n"
        "def boom():\n"
        "    try:\n"
        "        os.kill(os.getpid(), signal.SIGINT)\n"
        "    except KeyboardInterrupt:\n"
        "        raise ValueError('Invalid bounding box')\n"
        "sys.argv = ['lossync', 'boom']\n"
        "cli.main()\n"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert r.returncode == 130 and "Traceback" not in r.stderr and r.stderr.strip() == "lossync: interrupted", r.stderr


def test_an_interrupt_while_the_interpreter_shuts_down_exits_130_without_a_traceback():
    # Seen once in a full suite: the SIGINT of the random-moment test above landed after the run
    # had written its result, in matplotlib's exit handler, and Python printed "Exception ignored
    # in atexit callback" with a traceback. An exit handler that interrupts itself stands in for it.
    code = (
        "import atexit, os, signal, sys, time\n"
        "from lossync import cli\n"
        "atexit.register(lambda: (os.kill(os.getpid(), signal.SIGINT), time.sleep(1)))\n"
        "@cli.main.command('done')\n"
        "def done():\n"
        "    pass\n"
        "sys.argv = ['lossync', 'done']\n"
        "cli.main()\n"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert r.returncode == 130 and "Traceback" not in r.stderr and r.stderr.strip() == "lossync: interrupted", (r.returncode, r.stderr)


@pytest.mark.parametrize("engine", ["fluid", "packet"])
def test_an_interrupt_after_the_last_step_keeps_the_result_whole(engine):
    # Under load, a SIGINT landed after the last chunk of simulation but before `run` returned: the
    # result was written marked "partial" with "interrupted: 1200 s of 1200 s simulated" (the
    # random-moments test above failed on it). What was simulated decides, not when Ctrl-C came.
    from lossync import _core
    from lossync.engines.core import _result_so_far
    from lossync.scenario import prepare

    for until, partial in ((50.0, True), (100.0, False)):
        p = prepare({**scenario(1), "engine": engine})
        sim = _core.Simulation(p.core)
        sim.advance(until)
        s = _result_so_far(p, sim, sim.duration_s).summary
        interrupted = [w for w in s["warnings"] if w.startswith("interrupted:")]
        assert (s["partial"], s["duration_s"], bool(interrupted)) == (partial, until, partial), s


def test_an_interrupt_swallowed_by_a_finalizer_ends_the_command_as_interrupted(tmp_path):
    # Ctrl-C can land while a weakref callback runs (matplotlib's, as a figure is drawn: seen in
    # CI's random-moment kills). Python cannot raise it there: it printed "Exception ignored"
    # with a traceback, and the command went on as if nothing had happened.
    f = tmp_path / "s.toml"
    f.write_text('dumbbell = { capacity = "100Mbps", buffer = { packets = 20 } }\n'
                 'flows = [{ count = 2, cc = "reno", rtt = "50ms" }]\n')
    code = (
        "import sys, weakref\n"
        "from lossync import cli\n"
        "real = cli.check_scenario\n"
        "def interrupted_in_a_callback(*a, **k):\n"
        "    class T: pass\n"
        "    t = T()\n"
        "    def callback(_):\n"
        "        raise KeyboardInterrupt\n"
        "    r = weakref.ref(t, callback)\n"
        "    del t\n"
        "    return real(*a, **k)\n"
        "cli.check_scenario = interrupted_in_a_callback\n"
        "cli.main(['validate', sys.argv[1]])\n"
    )
    p = subprocess.run([sys.executable, "-c", code, str(f)], capture_output=True, text=True, timeout=120)
    assert "Traceback" not in p.stderr, p.stderr
    assert p.returncode == 130 and p.stderr.strip().endswith("lossync: interrupted"), (p.returncode, p.stderr)

