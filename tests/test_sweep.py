"""Sweeps: rows per (point, seed), failures recorded, resume after interruption, Dask = local pool."""

import json
import math
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest

import lossync
from lossync.stats import t975

ROOT = Path(__file__).resolve().parent.parent


def spec(**extra):
    return {
        "base": str(ROOT / "examples" / "paper-10g.toml"),
        "seeds": 2,
        "set": ["run.duration=120", "run.from_first_congestion=false", "dumbbell.capacity=1Gbps", "flows.0.count=4"],
        "axes": {"dumbbell.buffer.bdp_fraction": [0.05, 0.2], "loss.sync.x": [0.3, 1.0]},
        **extra,
    }


def test_rows_per_point_and_seed_and_confidence_intervals(tmp_path):
    rows = lossync.sweep(spec(), tmp_path / "out", workers=2)
    assert len(rows) == 8 and (rows["status"] == "ok").all()
    assert sorted(set(rows["seed"])) == [1, 2]
    assert {"dumbbell.buffer.bdp_fraction", "loss.sync.x", "utilization", "jain", "scenario_hash", "lossync_version"} <= set(rows.columns)
    # Random m_k (X = 0.3): seeds differ; X = 1: every flow loses at every event.
    x1 = rows[rows["loss.sync.x"] == 1.0]
    assert (x1["sync_rate_mean"] == 1.0).all()
    table = lossync.summarize(rows, ["utilization"])
    cell = rows[(rows["loss.sync.x"] == 0.3) & (rows["dumbbell.buffer.bdp_fraction"] == 0.05)]["utilization"]
    got = table.loc[(0.05, 0.3)]
    assert got[("mean", "utilization")] == pytest.approx(cell.mean())
    # Half-width t_{0.975,1}·s/√2 with t = 12.706 (two seeds).
    assert got[("ci95", "utilization")] == pytest.approx(12.706 * cell.std(ddof=1) / math.sqrt(2), rel=5e-5)


def test_t_quantiles_are_scipys_and_agree_with_the_printed_tables():
    from scipy.stats import t

    # Standard tables to three decimals (NIST/SEMATECH e-Handbook, §1.3.6.7.2), within and beyond
    # the 30 rows the hand-kept table once had.
    for df, printed in [(1, 12.706), (2, 4.303), (4, 2.776), (9, 2.262), (30, 2.042), (60, 2.000), (120, 1.980)]:
        assert t975(df) == pytest.approx(printed, abs=5e-4), df
        assert t975(df) == t.ppf(0.975, df)
    assert math.isnan(t975(0))
    assert "_T975" not in vars(lossync.stats)


def test_confidence_intervals_say_what_they_are():
    from lossync.stats import ci_label

    assert ci_label(5) == "95% CI (t, n=5)"
    assert ci_label({3, 5, 4}) == "95% CI (t, n=3..5)"


def cli(*args, **kw):
    return subprocess.run([sys.executable, "-m", "lossync", *args], capture_output=True, text=True, timeout=600, **kw)


def write_spec(tmp_path, **extra):
    f = tmp_path / "sweep.toml"
    doc = spec(**extra)
    lines = [f'base = "{doc["base"]}"', f'seeds = {doc["seeds"]}', f"set = {json.dumps(doc['set'])}", "[axes]"]
    lines += [f'"{k}" = {json.dumps(v)}' for k, v in doc["axes"].items()]
    f.write_text("\n".join(lines) + "\n")
    return f


def test_an_invalid_axis_value_is_reported_and_the_rest_complete(tmp_path):
    f = write_spec(tmp_path)
    f.write_text(f.read_text().replace('"loss.sync.x" = [0.3, 1.0]', '"loss.sync.x" = [0.3, 1.5]'))
    r = cli("sweep", str(f), "--out", str(tmp_path / "out"), "--workers", "2")
    assert r.returncode == 1
    assert "4 of 8 runs succeeded" in r.stdout
    assert "4 failed" in r.stderr and "loss.sync.x: must be in (0, 1], got 1.5" in r.stderr
    rows = lossync.load_results(tmp_path / "out")
    assert len(rows) == 8 and (rows["status"] == "ok").sum() == 4
    # summarize leaves the failed point out of its table, and said nothing of it.
    r = cli("summarize", str(tmp_path / "out"))
    assert r.returncode == 0 and "lossync: warning: 4 of 8 runs failed and are not in the table" in r.stderr, r.stderr
    # The Python summarize names an unknown metric (it raised pandas' KeyError).
    with pytest.raises(lossync.ScenarioError, match="metrics: 'utilisation' is not a column"):
        lossync.summarize(rows, ["utilisation"])


def test_existing_results_need_resume(tmp_path):
    f = write_spec(tmp_path, seeds=1)
    assert cli("sweep", str(f), "--out", str(tmp_path / "out")).returncode == 0
    r = cli("sweep", str(f), "--out", str(tmp_path / "out"))
    assert r.returncode == 2 and "--resume" in r.stderr


def _runs(out: Path) -> int:
    return len(list((out / "runs").glob("*.parquet"))) if (out / "runs").exists() else 0


def _start_long_sweep(tmp_path, workers):
    # 48 runs of about 0.1 s each: long enough to interrupt midway.
    long_runs = ["run.duration=2000", "run.from_first_congestion=false", "dumbbell.capacity=1Gbps", "flows.0.count=4"]
    f = write_spec(tmp_path, seeds=12, set=long_runs)
    out = tmp_path / "out"
    proc = subprocess.Popen([sys.executable, "-m", "lossync", "sweep", str(f), "--out", str(out), "--workers", str(workers)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.time() + 120
    while _runs(out) < 3 and time.time() < deadline and proc.poll() is None:
        time.sleep(0.05)
    assert proc.poll() is None, "the sweep finished before it could be interrupted"
    return f, out, proc


def _assert_complete_after_resume(f, out, total):
    r = cli("sweep", str(f), "--out", str(out), "--resume", "--workers", "2")
    assert r.returncode == 0, r.stderr
    rows = lossync.load_results(out)
    assert len(rows) == total and rows["key"].is_unique and (rows["status"] == "ok").all()
    points = rows[["dumbbell.buffer.bdp_fraction", "loss.sync.x", "seed"]].drop_duplicates()
    assert len(points) == total


def test_sigint_then_resume_runs_each_point_exactly_once(tmp_path):
    f, out, proc = _start_long_sweep(tmp_path, workers=1)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, err
    assert "--resume" in err
    finished = _runs(out)
    assert 3 <= finished < 48
    _assert_complete_after_resume(f, out, 48)


def test_killed_worker_then_resume_runs_each_point_exactly_once(tmp_path):
    f, out, proc = _start_long_sweep(tmp_path, workers=2)
    children = subprocess.run(["pgrep", "-P", str(proc.pid), "-f", "spawn_main"], capture_output=True, text=True).stdout.split()
    assert children, "no worker process found"
    os.kill(int(children[0]), signal.SIGKILL)
    _, err = proc.communicate(timeout=300)
    assert proc.returncode == 1, err  # the runs the dead worker took down are listed as failed
    assert "failed" in err
    _assert_complete_after_resume(f, out, 48)


@pytest.mark.filterwarnings("ignore::DeprecationWarning")
@pytest.mark.filterwarnings("ignore::ResourceWarning")
@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")
def test_dask_cluster_gives_the_same_rows_as_the_local_pool(tmp_path):
    distributed = pytest.importorskip("distributed")
    local = lossync.sweep(spec(), tmp_path / "local", workers=2)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster:
        remote = lossync.sweep(spec(), tmp_path / "dask", scheduler=cluster.scheduler_address)
    drop = ["wall_s"]
    a = local.drop(columns=drop).sort_values("key").reset_index(drop=True)
    b = remote.drop(columns=drop).sort_values("key").reset_index(drop=True)
    pd.testing.assert_frame_equal(a, b)


def test_a_scheduler_that_cannot_be_reached_leaves_no_results_folder(tmp_path):
    pytest.importorskip("distributed")
    # The folder (.lock, sweep.json, runs/) was made before the scheduler was tried.
    with pytest.raises(lossync.LossyncError, match="--scheduler bogus: cannot reach"):
        lossync.sweep(spec(), tmp_path / "out", scheduler="bogus")
    assert not (tmp_path / "out").exists()


def test_a_second_sweep_into_a_busy_folder_is_refused_and_the_first_completes(tmp_path):
    f, out, proc = _start_long_sweep(tmp_path, workers=1)
    (tmp_path / "other").mkdir()
    other = write_spec(tmp_path / "other", seeds=1)
    r = cli("sweep", str(other), "--out", str(out), "--resume", "--workers", "1")
    assert r.returncode == 2 and "another sweep" in r.stderr and r.stderr.count("\n") == 1, r.stderr
    proc.send_signal(signal.SIGINT)
    proc.communicate(timeout=120)
    _assert_complete_after_resume(f, out, 48)


def test_runs_are_keyed_by_their_whole_scenario(tmp_path):
    # Two sweeps with the same axes and seeds but different fixed settings share no run key
    # (the key once ignored `base` and `set`, so one sweep's rows stood for the other's).
    a = lossync.sweep(spec(seeds=1), tmp_path / "a", workers=2)
    b = lossync.sweep(spec(seeds=1, set=[*spec()["set"], "flows.0.count=2"]), tmp_path / "b", workers=2)
    assert not set(a["key"]) & set(b["key"])
    # The same sweep again, resumed, runs nothing new and returns the same rows.
    again = lossync.sweep(spec(seeds=1), tmp_path / "a", workers=2, resume=True)
    pd.testing.assert_frame_equal(a.sort_values("key").reset_index(drop=True), again.sort_values("key").reset_index(drop=True))


def test_no_process_outlives_a_killed_sweep(tmp_path):
    f, out, proc = _start_long_sweep(tmp_path, workers=2)
    children = subprocess.run(["pgrep", "-P", str(proc.pid)], capture_output=True, text=True).stdout.split()
    assert len(children) >= 2, "expected the pool's workers (and the resource tracker)"
    proc.kill()
    proc.communicate(timeout=60)
    deadline = time.time() + 10
    alive = children
    while alive and time.time() < deadline:
        time.sleep(0.1)
        alive = [c for c in children if Path(f"/proc/{c}").exists() and "Z" not in Path(f"/proc/{c}/stat").read_text().split()[2]]
    assert not alive, f"still running after the sweep was killed: {alive}"
    # Resumed, it completes, with nothing of the killed sweep left beside its rows (such as a row
    # it was writing when killed).
    (out / "runs" / ".0123abcd.parquet.x1y2.tmp").write_bytes(b"PAR1")
    _assert_complete_after_resume(f, out, 48)
    assert [p.name for p in (out / "runs").iterdir() if p.suffix != ".parquet" or p.name.startswith(".")] == []


def test_extra_columns_come_from_each_result_and_belong_to_the_sweep(tmp_path):
    from lossync.errors import LossyncError
    from lossync.studies.obs import aggregate_columns

    obs = {"base": str(ROOT / "examples" / "obs-dumbbell.toml"), "seeds": 1,
           "set": ["run.duration=20", "run.warmup=5", "run.aggregate_interval=0.7"],
           "axes": {"links.0.assembler.policy": ["per_flow", "mixed"]}}
    rows = lossync.sweep(obs, tmp_path / "out", workers=1, progress=False, columns=aggregate_columns).set_index(
        "links.0.assembler.policy")
    # Each row carries what the function read from its own run: per-flow bursts hold one flow.
    assert rows.loc["per_flow", "mean_flows_per_lost_burst"] == 1.0
    assert rows.loc["mixed", "mean_flows_per_lost_burst"] > 1.0
    assert len(rows.loc["mixed", "aggregate_rate_pps"]) == pytest.approx(20 / 0.7, abs=1)
    # Resuming without the function would mix rows with and without its columns: refused.
    with pytest.raises(LossyncError, match="different sweep"):
        lossync.sweep(obs, tmp_path / "out", workers=1, progress=False, resume=True)


def test_resume_reruns_a_point_whose_named_file_changed(tmp_path):
    # The run key covers what the scenario resolves to, so a file it names (here an m
    # distribution) is part of the run: editing it and resuming reruns, instead of keeping rows
    # computed from the old file.
    (tmp_path / "m.csv").write_text("m,count\n1,1\n")
    base = {"dumbbell": {"capacity": "100Mbps", "buffer": {"bdp_fraction": 0.2}},
            "flows": [{"count": 4, "cc": "reno", "rtt": "50ms"}],
            "loss": {"model": "sync", "sync": {"kind": "empirical", "file": "m.csv"}},
            "run": {"duration": "60s", "warmup": "10s"}}
    spec = {"base": base, "seeds": 1, "axes": {"dumbbell.buffer.bdp_fraction": [0.2]}}
    first = lossync.sweep(spec, tmp_path / "out", workers=1, progress=False, base_dir=tmp_path)
    (tmp_path / "m.csv").write_text("m,count\n4,1\n")
    second = lossync.sweep(spec, tmp_path / "out", workers=1, progress=False, base_dir=tmp_path, resume=True)
    assert first["scenario_hash"].iloc[0] != second["scenario_hash"].iloc[0]
    assert second["sync_rate_mean"].iloc[0] == pytest.approx(1.0)
    assert first["sync_rate_mean"].iloc[0] == pytest.approx(0.25)


def _cli(*args, **kw):
    return subprocess.run([sys.executable, "-m", "lossync", *args], capture_output=True, text=True, timeout=600, **kw)


SMALL = 'base = "{base}"\nseeds = 2\nset = ["run.duration=5", "run.warmup=0"]\n[axes]\n"flows.0.count" = [{counts}]\n'


@pytest.mark.skipif(os.geteuid() != 0 or not sys.platform.startswith("linux"), reason="mounting a small tmpfs needs root on Linux")
def test_a_full_disk_is_one_line_naming_the_folder_and_resume_then_completes(tmp_path):
    # Before: a 61-line pyarrow traceback with exit status 0.
    disk = tmp_path / "disk"
    disk.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(disk)], check=True)
    try:
        f = tmp_path / "sweep.toml"
        f.write_text(SMALL.format(base=ROOT / "examples" / "dumbbell-reno.toml", counts=", ".join(map(str, range(1, 21)))))
        r = _cli("sweep", str(f), "--out", str(disk / "res"), "--workers", "2")
        assert r.returncode == 2, r.stderr
        errors = [line for line in r.stderr.splitlines() if line.startswith("lossync: error:")]
        assert errors == [f"lossync: error: {disk / 'res' / 'runs'}: no space left on device"], r.stderr
        assert "Traceback" not in r.stderr
        subprocess.run(["mount", "-o", "remount,size=16m", str(disk)], check=True)
        r = _cli("sweep", str(f), "--out", str(disk / "res"), "--resume")
        assert r.returncode == 0, r.stderr
        assert len(lossync.load_results(disk / "res")) == 40
    finally:
        subprocess.run(["umount", str(disk)], check=True)


def test_a_sweep_says_its_size_before_any_work_and_its_progress_as_it_runs(tmp_path):
    f = tmp_path / "sweep.toml"
    f.write_text(SMALL.format(base=ROOT / "examples" / "dumbbell-reno.toml", counts="1, 2, 3, 4, 5"))
    r = _cli("sweep", str(f), "--out", str(tmp_path / "res"), "--workers", "2")
    lines = r.stderr.splitlines()
    assert lines[0] == "sweep: 10 runs (5 points × 2 seeds)", r.stderr
    assert lines[-1] == "sweep: 10 of 10 runs finished (0 failed)"
    # A million points (the most a sweep may hold): its size is the first thing said, at once;
    # before, nothing was said for over two minutes while every point was checked.
    f.write_text(SMALL.format(base=ROOT / "examples" / "dumbbell-reno.toml", counts="1, 2")
                 + '"dumbbell.buffer.bdp_fraction" = { from = 0.01, to = 1, num = 250000 }\n')
    p = subprocess.Popen([sys.executable, "-m", "lossync", "sweep", str(f), "--out", str(tmp_path / "big")],
                         stderr=subprocess.PIPE, text=True)
    try:
        assert p.stderr.readline().strip() == "sweep: 1,000,000 runs (500,000 points × 2 seeds); checking each scenario"
    finally:
        p.kill()
        p.communicate()
    assert not (tmp_path / "big").exists(), "nothing is written before every point is checked"


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="RLIMIT_AS as Linux counts it")
def test_under_an_address_space_limit_an_oversized_point_is_refused_and_the_others_complete(tmp_path):
    # Under `ulimit -v 4G` an oversized point passed the memory check (which read only the
    # machine's available memory), aborted its worker in the allocator and took innocent runs with
    # it, again at every --resume. The check now counts what the address-space limit leaves: here
    # 3 GiB less a worker's own 1.4 GiB or so, below the 3.6 GiB the point needs (and below what
    # any machine running this has available, so the old check let it through). The series: 1.6
    # million samples of 304 columns of 8 bytes (time; each flow's cwnd, rate and RTT; the link's
    # queue, utilization and queueing delay) = 3.6 GiB.
    import resource

    f = tmp_path / "sweep.toml"
    f.write_text(f'base = "{ROOT / "examples" / "dumbbell-reno.toml"}"\nseeds = 1\n'
                 'set = ["run.warmup=0", "flows.0.count=100", "run.record_interval=\\"1ms\\""]\n'
                 '[axes]\n"run.duration" = [5, 6, 7, 8, 1600]\n')  # 1600 s: a 3.6 GiB time series

    def limit():
        resource.setrlimit(resource.RLIMIT_AS, (3 << 30, resource.RLIM_INFINITY))

    r = subprocess.run([sys.executable, "-m", "lossync", "sweep", str(f), "--out", str(tmp_path / "res"), "--workers", "2"],
                       capture_output=True, text=True, timeout=600, preexec_fn=limit)
    assert "4 of 5 runs succeeded" in r.stdout, (r.stdout, r.stderr)
    assert "run.duration=1600, seed=1: run.record_interval: the fluid engine would need about 3.6 GiB" in r.stderr, r.stderr
    rows = lossync.load_results(tmp_path / "res")
    assert sorted(rows[rows["status"] == "ok"]["run.duration"]) == [5, 6, 7, 8]


def test_a_sweeps_base_may_name_a_shipped_example(tmp_path):
    f = tmp_path / "by-name.toml"
    f.write_text('base = "dumbbell-reno"\nseeds = 1\nset = ["run.duration=5", "run.warmup=0"]\n[axes]\n"flows.0.count" = [1, 2]\n')
    rows = lossync.sweep(f, tmp_path / "out", workers=1, progress=False)
    assert len(rows) == 2 and (rows["status"] == "ok").all(), rows["error"].tolist()
    # The same runs as with the file named by its path.
    g = tmp_path / "by-path.toml"
    g.write_text(f.read_text().replace('"dumbbell-reno"', f'"{ROOT / "examples" / "dumbbell-reno.toml"}"'))
    same = lossync.sweep(g, tmp_path / "out2", workers=1, progress=False)
    assert rows["utilization"].tolist() == same["utilization"].tolist()
    # A file beside the sweep comes first: a shipped name is the fallback, never a silent override.
    (tmp_path / "dumbbell-reno").write_text((ROOT / "examples" / "dumbbell-reno.toml").read_text().replace("count = 2", "count = 3"))
    from lossync.sweeps.spec import base_path

    assert base_path("dumbbell-reno", tmp_path) == tmp_path / "dumbbell-reno"
    # The shipped one: the installed package's (site-packages in CI, the source tree when editable).
    assert base_path("paper-10g.toml", tmp_path) == Path(lossync.__file__).parent / "examples" / "paper-10g.toml"


def test_a_shipped_sweep_copied_elsewhere_finds_its_base(tmp_path):
    assert cli("examples", "--copy", "sweep-buffer-sync", str(tmp_path / "mine")).returncode == 0
    spec_file = tmp_path / "mine" / "sweep-buffer-sync.toml"
    # Its 75 runs of 600 s cut to one short run: the base is what is checked.
    text = spec_file.read_text().replace('set = ["run.duration=600"]', 'set = ["run.duration=5", "run.warmup=0", "dumbbell.capacity=100Mbps"]')
    text = text.replace("seeds = 5", "seeds = 1").split("[axes]")[0] + '[axes]\n"loss.sync.x" = [0.6]\n'
    spec_file.write_text(text)
    # Run from another folder: the base is found by name, not beside the working folder.
    r = cli("sweep", str(spec_file), "--out", str(tmp_path / "res"), "--workers", "1", cwd=tmp_path / "mine")
    assert r.returncode == 0, r.stderr
    assert "1 of 1 runs succeeded" in r.stdout


def test_a_base_that_is_neither_a_file_nor_a_shipped_example_is_one_line(tmp_path):
    f = tmp_path / "sweep.toml"
    f.write_text('base = "no-such-example"\nseeds = 1\n[axes]\n"flows.0.count" = [1]\n')
    r = cli("sweep", str(f), "--out", str(tmp_path / "res"))
    assert r.returncode == 2 and r.stderr.count("\n") == 1, r.stderr
    assert r.stderr.startswith("lossync: error: sweep.base: 'no-such-example': no such scenario file in"), r.stderr
    assert "dumbbell-reno" in r.stderr and not (tmp_path / "res").exists()


@pytest.mark.parametrize("where, values, named", [
    ("seeds", [3, 1, 3], "sweep.seeds: seeds lists 3 twice"),
    ("axes", {"loss.sync.x": [0.3, 1.0, 0.3]}, "sweep.axes: axis 'loss.sync.x' lists 0.3 twice"),
    ("axes", {"flows.0.cc": [{"variant": "cubic", "beta": 0.7}, {"beta": 0.7, "variant": "cubic"}]}, "lists {\"beta\": 0.7"),
])
def test_a_value_listed_twice_is_refused_not_collapsed(tmp_path, where, values, named):
    # On main `seeds = [1, 1]` announced "2 runs (1 points × 2 seeds)", ran one and stored one row.
    with pytest.raises(lossync.ScenarioError, match=named.replace("{", r"\{")):
        lossync.sweep(spec(**{where: values}), tmp_path / "out")
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("value", ["abc", "-5", "0", "1025", "2.5"])
def test_a_bad_worker_count_from_the_environment_is_one_line_and_writes_nothing(tmp_path, value):
    # On main: a traceback (int('abc'), or the pool's "max_workers must be greater than 0") after
    # the results folder was made, and 100000 workers were accepted.
    f = write_spec(tmp_path, seeds=1)
    r = cli("sweep", str(f), "--out", str(tmp_path / "out"), env={**os.environ, "LOSSYNC_WORKERS": value})
    assert r.returncode == 2 and "Traceback" not in r.stderr, r.stderr
    assert r.stderr.splitlines() == [f"lossync: error: LOSSYNC_WORKERS: must be a whole number of processes from 1 to 1024, got {value!r}"]
    assert not (tmp_path / "out").exists()


def test_a_sweep_into_a_runs_results_folder_is_refused(tmp_path):
    # On main `sweep --out RUN_FOLDER --resume` added runs/ and sweep.json beside the run's files.
    run_dir = tmp_path / "run"
    assert cli("run", str(ROOT / "examples" / "paper-10g.toml"), "--out", str(run_dir), "--duration", "20").returncode == 0
    before = sorted(p.name for p in run_dir.iterdir())
    r = cli("sweep", str(write_spec(tmp_path, seeds=1)), "--out", str(run_dir), "--resume")
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "holds a run's results" in r.stderr, r.stderr
    assert sorted(p.name for p in run_dir.iterdir()) == before


def test_the_rows_warnings_are_python_warnings_too(tmp_path):
    # On main lossync.sweep and lossync.compare emitted none: a caller who read only the numbers
    # never heard that no run saw a congestion event.
    quiet = spec(seeds=1, set=["run.duration=0.5", "run.from_first_congestion=false", "dumbbell.capacity=1Gbps", "flows.0.count=4"])
    with pytest.warns(lossync.LossyncWarning) as caught:
        rows = lossync.sweep(quiet, tmp_path / "out")
    said = [str(w.message) for w in caught if issubclass(w.category, lossync.LossyncWarning)]
    warned = {w for ws in rows["warnings"] for w in ws}
    assert warned and len(said) == len(warned)
    for w in warned:
        n = sum(w in list(ws) for ws in rows["warnings"])
        assert f"{n} of 4 runs: {w}" in said
    assert all(c.filename == __file__ for c in caught)  # blamed on the caller's line
    from lossync.comparison import compare

    with pytest.warns(lossync.LossyncWarning, match="^fluid: .*no congestion event"):
        compare(str(ROOT / "examples" / "paper-10g.toml"), ["fluid"], ["run.duration=0.5", "run.from_first_congestion=false"])


def test_a_zipped_axis_may_repeat_a_value_the_other_axes_tell_apart(tmp_path):
    # A study's zipped sweep labels several cells alike on one axis (aqm-buffers' `name`, one
    # per buffer): only the same values at two indices are one point twice.
    zipped = {"dumbbell.buffer.bdp_fraction": [0.05, 0.05], "loss.sync.x": [0.3, 1.0]}
    rows = lossync.sweep(spec(seeds=1, mode="zip", axes=zipped), tmp_path / "out")
    assert len(rows) == 2 and (rows["status"] == "ok").all()
    with pytest.raises(lossync.ScenarioError, match='^sweep.axes: mode = "zip" lists the point'):
        lossync.sweep(spec(seeds=1, mode="zip", axes={**zipped, "loss.sync.x": [0.3, 0.3]}), tmp_path / "twice")


@pytest.mark.parametrize("keys", [{"utilization"}, "utilization", "extra"])
def test_load_results_names_the_keys_it_has_no_row_for_and_the_ones_it_has(tmp_path, keys):
    # On main keys that matched no row said "no sweep results here" of a folder full of them, and
    # one unknown among known keys was dropped without a word.
    rows = lossync.sweep(spec(seeds=1, axes={"loss.sync.x": [0.3, 1.0]}), tmp_path / "out", workers=2, warn=False)
    known = sorted(rows["key"])
    unknown = "nosuch" if keys == "extra" else "utilization"
    if keys == "extra":
        keys = {known[0], unknown}
    with pytest.raises(lossync.ScenarioError) as e:
        lossync.load_results(tmp_path / "out", keys)
    assert e.value.field == "keys" and f"'{unknown}'" in e.value.reason and "no sweep results" not in str(e.value), e.value
    assert all(k in e.value.reason for k in known), e.value  # what it accepts
    assert list(lossync.load_results(tmp_path / "out", {known[0]})["key"]) == [known[0]]
    assert list(lossync.load_results(tmp_path / "out", known[0])["key"]) == [known[0]]  # one key as a str


def test_sweep_rows_carry_the_queue_disciplines_signals_and_sojourn_times(tmp_path):
    # docs/queues.md says the marks, early and overflow drops and sojourn times appear in the
    # sweep rows; they did not, and `lossync plot --y mark_rate` was refused as no column.
    # CoDel with classic ECN behind 5 Reno flows: marks, no early drops, a sojourn near its 5 ms
    # target (RFC 8289 §4.3).
    spec = {"base": {"engine": "packet", "dumbbell": {"capacity": "100Mbps", "buffer": {"packets": 1000},
                                                      "queue": {"discipline": "codel", "ecn": True}},
                     "flows": [{"count": 5, "cc": "reno", "rtt": "20ms..60ms", "ecn": True}],
                     "run": {"duration": "10s", "warmup": "3s"}},
            "seeds": 1, "axes": {"dumbbell.queue.target": ["5ms", "20ms"]}}
    rows = lossync.sweep(spec, tmp_path / "out", workers=1, progress=False)
    assert (rows["status"] == "ok").all()
    assert (rows["mark_rate"] > 0).all() and (rows["early_drop_rate"] == 0).all(), rows.to_dict()
    assert rows["sojourn_l4s_mean_s"].isna().all()  # classic ECN: ECT(0), no L4S packet
    first = rows.iloc[0]
    assert first["sojourn_mean_s"] == pytest.approx(0.005, abs=0.003) and first["sojourn_p99_s"] >= first["sojourn_mean_s"]
    r = subprocess.run([sys.executable, "-m", "lossync", "plot", str(tmp_path / "out"), "--x", "dumbbell.queue.target",
                        "--y", "mark_rate", "--output", str(tmp_path / "p.png")], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr


@pytest.mark.parametrize("scale", ["linear", "log"])
def test_a_ranges_ends_are_the_values_the_sweep_file_writes(scale):
    # exp(log 0.01) is 0.010000000000000004: rows never equal the 0.01 of the sweep file, and
    # plot titles said "buffer = 0.010000000000000004".
    from lossync.sweeps.spec import Range

    values = Range.model_validate({"from": 0.01, "to": 0.2, "num": 3, "scale": scale}).values()
    assert values[0] == 0.01 and values[-1] == 0.2 and len(values) == 3


def test_a_resumed_sweep_keeps_the_command_that_started_it(tmp_path):
    # On main command.json held the last command only: a sweep resumed with --resume lost the line
    # that made it, and its report showed the resume as what made it.
    from lossync.reporting import _made_by

    out = tmp_path / "out"
    lossync.sweep(spec(seeds=1), out, workers=1, command="lossync sweep s.toml --out out")
    lossync.sweep(spec(seeds=1), out, workers=1, command="lossync sweep s.toml --out out --resume", resume=True)
    doc = json.loads((out / "command.json").read_text())
    assert doc["command"] == "lossync sweep s.toml --out out"
    assert [d["command"] for d in doc["resumed"]] == ["lossync sweep s.toml --out out --resume"]
    assert [label.split(" (")[0] for label, _ in _made_by(doc)] == ["Made by", "Resumed by"]
