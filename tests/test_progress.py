"""Progress and wall-time limits on the long paths (issue 32, item 3): a run stopped by
`timeout_s` / `--timeout` is the part simulated, marked partial, and equal to a run that long;
`compare` prints the engines that finished and marks the rest; a sweep keeps a stopped run as a
partial row and reruns it on resume; `calibrate` keeps the closest fit it reached. The ns-3 and
kernel engines' limits are in tests/test_ns3.py and tests/test_kernel.py, the notebook's bar in
tests/test_notebook.py."""

import importlib
import json
import subprocess
import sys

import pytest

import lossync
from lossync.comparison import compare
from lossync.progress import Deadline, RunTimeout, duration_text
from lossync.stats import axes_of

#: A packet run of minutes at 100 Mb/s (about 700 simulated seconds per wall second): four Reno
#: flows that congest the link within seconds.
LONG = {
    "engine": "packet",
    "dumbbell": {"capacity": "100Mbps", "buffer": {"bdp_fraction": 0.25}},
    "flows": [{"count": 4, "cc": "reno", "rtt": "40ms..80ms", "slow_start": True}],
    "run": {"duration": 100000, "warmup": "5s"},
}


def cli(*args, timeout=120):
    return subprocess.run([sys.executable, "-m", "lossync", *map(str, args)], capture_output=True, text=True, timeout=timeout)


def toml(doc: dict) -> str:
    """The scenarios here as TOML (flat enough for this)."""
    def value(v):
        return json.dumps(v) if not isinstance(v, dict) else "{ " + ", ".join(f"{k} = {value(x)}" for k, x in v.items()) + " }"

    lines = [f"engine = {value(doc['engine'])}"] if "engine" in doc else []
    for table in ("dumbbell", "run"):
        lines += [f"[{table}]"] + [f"{k} = {value(v)}" for k, v in doc[table].items()]
    for group in doc["flows"]:
        lines += ["[[flows]]"] + [f"{k} = {value(v)}" for k, v in group.items()]
    return "\n".join(lines) + "\n"


def test_a_timeout_returns_the_part_simulated_equal_to_a_run_that_long():
    s = lossync.run(LONG, timeout_s=1.0, warn=False).summary
    assert s["partial"] is True and 5 < s["duration_s"] < 100000
    stop = [w for w in s["warnings"] if w.startswith("timeout:")]
    assert len(stop) == 1 and f"at {s['duration_s']:.6g} s of 100000 s simulated" in stop[0], stop
    # The packet engine is deterministic for a seed, and where a run is cut does not matter: the
    # part simulated is the run of that duration.
    whole = lossync.run({**LONG, "run": {**LONG["run"], "duration": s["duration_s"]}}, warn=False).summary
    assert whole["partial"] is False and whole["congestion_events"] > 0
    for m in ("utilization", "loss_rate", "jain", "congestion_events", "mean_queue_pkts"):
        assert s[m] == whole[m], m


def test_run_timeout_on_the_command_line(tmp_path):
    f = tmp_path / "long.toml"
    f.write_text(toml(LONG))
    r = cli("run", f, "--timeout", "1", "--json")
    assert r.returncode == 0, r.stderr
    s = json.loads(r.stdout)
    assert s["partial"] is True and s["duration_s"] < 100000
    # Said before the run (it is long), and after it (how far it got).
    assert r.stderr.index("lossync: estimated") < r.stderr.index("lossync: warning: timeout: stopped by the wall-time limit"), r.stderr
    # A limit that leaves nothing simulated is GNU timeout's status, in one line.
    r = cli("run", f, "--timeout", "1e-9")
    assert r.returncode == 124 and r.stderr.splitlines()[-1].startswith("lossync: error: timeout:"), r.stderr
    r = cli("run", f, "--timeout", "0")
    assert r.returncode == 2 and r.stderr.startswith("lossync: error: --timeout: "), r.stderr
    with pytest.raises(lossync.ScenarioError, match="timeout"):
        lossync.run(LONG, timeout_s=-1)


#: Fast in the fluid engine, minutes in the packet engine (10 Gb/s).
FAST_FLUID = {
    "dumbbell": {"capacity": "10Gbps", "buffer": {"bdp_fraction": 0.25}},
    "flows": [{"count": 2, "cc": "cubic", "rtt": "20ms"}],
    "run": {"duration": "300s", "warmup": "100s"},
}


def test_compare_prints_the_engines_finished_within_the_limit_and_marks_the_rest(tmp_path):
    df = compare(FAST_FLUID, ["fluid", "packet", "fluid:proportional"], timeout_s=2.0)
    assert list(df["finished"]) == [True, False, False]
    assert df.loc["packet", "status"].startswith("not finished: stopped at ")
    assert df.loc["fluid:proportional", "status"] == "not finished: not started (the wall-time limit ran out)"
    assert df.loc["fluid", "utilization"] > 0.5 and df[["utilization"]].loc[["packet", "fluid:proportional"]].isna().all().all()
    f = tmp_path / "s.toml"
    f.write_text(toml(FAST_FLUID))
    r = cli("compare", f, "--engines", "fluid,packet", "--timeout", "2")
    assert r.returncode == 0, r.stderr
    head = r.stdout.splitlines()[1]  # utilization: the fluid engine's number, then the packet engine's mark
    assert head.split()[0] == "utilization" and float(head.split()[1]) == pytest.approx(df.loc["fluid", "utilization"], abs=1e-4)
    assert head.split()[2:] == ["not", "finished"]
    assert "no differences: the reference, packet, did not finish" in r.stdout
    assert r.stdout.splitlines()[-1].startswith("packet: not finished: stopped at ")
    # Before the runs, what they will take; before each, which one runs.
    assert "lossync: compare: 2 engines, 300 s simulated each; estimated " in r.stderr
    assert "lossync: compare: [2/2] packet, estimated " in r.stderr


def test_a_sweep_keeps_a_stopped_run_as_a_partial_row_and_resume_reruns_it(tmp_path):
    spec = {"base": {**LONG, "run": {"duration": 20.0, "warmup": "5s"}}, "axes": {"run.duration": [20.0, 100000.0]}}
    rows = lossync.sweep(spec, tmp_path / "res", workers=1, progress=False, timeout_s=1.0)
    rows = rows.sort_values("run.duration").reset_index(drop=True)
    assert list(rows["status"]) == ["ok", "ok"] and list(rows["partial"]) == [False, True]
    assert not any(w.startswith("timeout:") for w in rows.loc[0, "warnings"])
    assert any(w.startswith("timeout: stopped") for w in rows.loc[1, "warnings"])
    said = []
    lossync.sweep(spec, tmp_path / "res", workers=1, progress=False, timeout_s=1.0, resume=True, announce=said.append)
    assert "sweep: 1 runs finished before; running the other 1" in said, said
    assert "partial" not in axes_of(rows)
    # The command line counts the stopped run among those that succeeded, and says it stopped.
    f = tmp_path / "sweep.json"
    f.write_text(json.dumps(spec))
    r = cli("sweep", str(f), "--out", str(tmp_path / "res2"), "--timeout", "1", "--workers", "1")
    assert "2 of 2 runs succeeded, 1 of them stopped by the time limit (partial: rerun with --resume)" in r.stdout, r.stdout


def test_calibrate_stopped_by_its_limit_keeps_the_closest_fit(monkeypatch, tmp_path):
    # The fluid evaluations stand in for runs: U falls with the headroom c (0.95 without, 0.80 at
    # its bound), and the limit runs out at the fourth, mid-bisection. The fit then is the closest
    # of the three tried to the reference's 0.90, and says it is partial.
    cal = importlib.import_module("lossync.calibration")

    def fake_seed_means(doc, seeds, base_dir, deadline=None, bars=False):
        if len(calls) == 3:
            raise cal._OutOfTime
        c = doc["loss"].get("burst_per_sqrt_buffer")
        calls.append(c)
        return (0.95 if not c else 0.80), 0.3

    calls: list = []
    monkeypatch.setattr(cal, "seed_means", fake_seed_means)
    doc = {"dumbbell": {"capacity": "100Mbps", "buffer": {"bdp_fraction": 0.05}}, "flows": [{"count": 2, "cc": "reno", "rtt": "40ms"}]}
    out = tmp_path / "cal.toml"
    result = cal.calibrate(doc, out, reference_utilization=0.90, timeout_s=3600)
    f = result["fitted"]
    assert len(calls) == 3 and f["partial"] is True and "stopped by the 3600 s wall-time limit after 3 fluid evaluations" in f["note"]
    assert f["fluid_utilization_calibrated"] == 0.95 and result["burst_per_sqrt_buffer"] is None
    assert "partial = true" in out.read_text()


def test_calibrate_refuses_when_the_limit_leaves_no_reference():
    doc = {"dumbbell": {"capacity": "100Mbps", "buffer": {"bdp_fraction": 0.05}}, "flows": [{"count": 2, "cc": "reno", "rtt": "40ms"}]}
    with pytest.raises(RunTimeout, match="before the packet reference's first runs"):
        lossync.calibrate(doc, timeout_s=1e-9, duration_s=60)


def test_deadline_and_duration_text():
    assert Deadline(None).remaining_s() is None and not Deadline(None).expired()
    assert 0 < Deadline(10).remaining_s() <= 10
    assert Deadline(0).expired()
    for bad in (-1, float("nan"), float("inf"), "10"):
        with pytest.raises(lossync.ScenarioError, match="timeout"):
            Deadline(bad)
    assert [duration_text(x) for x in (0.04, 3.2, 42, 200, 7500)] == ["0.04 s", "3 s", "42 s", "3 min 20 s", "2 h 05 min"]


def test_the_packet_estimate_grows_with_the_connections():
    # On main the estimate of a 100 Mb/s dumbbell for 5 s was 6 ms for any number of flows: 10^5
    # flows took 4.2 s here (1.26 million arrivals, most of them dropped, at 3.3 µs each) and 10^6
    # ran past a minute with no estimate said first. Now within a factor 2 of the measured time,
    # and above the 10 s at which `run` says it before a run.
    def estimate(n, capacity="100Mbps"):
        doc = {"engine": "packet", "dumbbell": {"capacity": capacity, "buffer": {"bdp_fraction": 0.25}},
               "flows": [{"count": n, "cc": "reno", "rtt": "20ms..80ms"}], "run": {"duration": "5s", "warmup": "0s"}}
        return lossync.estimate_wall_s(doc)

    assert estimate(10) < 0.05
    assert 4.2 / 2 < estimate(10**5) < 4.2 * 2
    assert 14.0 / 2 < estimate(10**5, "10Gbps") < 14.0 * 2  # 6.6 million arrivals, measured 14 s
    assert estimate(10**6) > 10


def test_a_partial_runs_files_say_it_stopped_early_and_how_to_rerun_the_part(tmp_path):
    # On main a run stopped by --timeout wrote its scenario.toml with the whole duration under a
    # header saying that running it reproduces the run, and `lossync report` offered that file
    # as the command giving "the same summary".
    r = lossync.run(LONG, progress=False, warn=False, timeout_s=0.5)
    assert r.summary["partial"]
    done = r.summary["duration_s"]
    r.write(tmp_path / "out", figure=False)
    first = (tmp_path / "out" / "scenario.toml").read_text().splitlines()[0]
    assert first == (f"# PARTIAL: this run stopped at {done:.6g} s of the {r.scenario['run']['duration_s']:.6g} s below (a wall-time "
                     f"limit or Ctrl-C); `lossync run FILE --duration {done:.6g}s` reruns the part simulated.")
    page = cli("report", str(tmp_path / "out"))
    assert page.returncode == 0, page.stderr
    html = (tmp_path / "out" / "report.html").read_text()
    assert f"--duration {done:.6g}s" in html and "the same summary" not in html


def test_a_chunk_is_sized_for_a_cost_that_keeps_growing():
    # A packet run in slow start: each simulated second costs twice the last. On main the next
    # chunk was sized on the last one's speed alone, so it took twice the time aimed at; a
    # 0.5 s limit on paper-10g's packet run stopped after 1.1 s (the docs promise a quarter of a
    # second past it).
    from lossync.engines.core import CHUNK_WALL_S, next_chunk

    cost_of = lambda t: 1e-3 * 2 ** t  # wall seconds per simulated second at time t  # noqa: E731
    t, span, last = 0.0, 1.0, 0.0
    for _ in range(12):
        wall = cost_of(t + span) * span  # charged at the chunk's end rate: an upper bound
        t += span
        span, last = next_chunk(span, wall, last, None)
        assert cost_of(t) * span <= 2 * CHUNK_WALL_S + 1e-9, (t, span)
    # Near a limit the chunk aims at what is left of it (shrinking by at most 4 at a time).
    span, _ = next_chunk(10.0, 0.25, 0.025, left_s=0.1)
    assert span * 0.025 == pytest.approx(0.1)
