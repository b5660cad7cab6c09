"""The Python API: scenarios as dicts or files, results as DataFrames."""

import json
import os
import pickle
import signal
import stat
import subprocess
import sys
import time
import warnings
from pathlib import Path

import pandas as pd
import pytest

import lossync

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


def scenario(**run):
    return {
        "dumbbell": {"capacity": "100Mbps", "buffer": {"bdp_fraction": 0.25}},
        # No slow start: its overshoot's cuts, close together, would cluster into events of two.
        "flows": [{"count": 3, "cc": "reno", "rtt": "60ms..140ms", "slow_start": False}],
        "loss": {"model": "sync", "sync": {"kind": "fixed", "m": 1}},
        "run": {"duration": "200s", "record_interval": "1s", **run},
    }


def test_run_a_dict():
    r = lossync.run(scenario())
    assert 0 < r.summary["utilization"] <= 1
    assert list(r.flows.index) == [0, 1, 2]
    assert len(r.series) == 201  # every second from 0 to 200 s inclusive
    assert r.series["time_s"].iloc[-1] == pytest.approx(200.0)
    assert r.scenario["flows"][1]["rtt_s"] == pytest.approx(0.1)
    # m = 1: exactly one flow loses per congestion event.
    assert r.summary["sync_rate_mean"] == pytest.approx(1 / 3)


def test_errors_are_python_exceptions_not_panics():
    bad = scenario()
    bad["dumbbell"]["capacity"] = float("nan")
    with pytest.raises(lossync.ScenarioError, match="dumbbell.capacity"):
        lossync.run(bad)
    with pytest.raises(lossync.LossyncError):
        lossync.run({"flows": []})
    with pytest.raises(lossync.InputFileError):
        lossync.run("/nonexistent/scenario.toml")


def test_resolve_fills_defaults():
    r = lossync.resolve(scenario())
    # The step: the largest of 1, 0.5, 0.2 ms, ... with 80 steps in the shortest RTT (60 ms).
    assert r["run"]["step_s"] == 0.0005 and r["run"]["seed"] == 1
    assert r["links"][0]["buffer_pkts"] == pytest.approx(0.25 * 100e6 / 12000 * 0.1)


def test_write_is_complete_and_leaves_no_temporary_files(tmp_path):
    r = lossync.run(scenario())
    r.write(tmp_path)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["events.csv", "figure.png", "scenario.toml", "series.parquet", "summary.json"]
    doc = json.loads((tmp_path / "summary.json").read_text())
    assert doc["provenance"]["seed"] == 1


def test_written_files_get_the_umask_mode(tmp_path):
    old = os.umask(0o027)
    try:
        lossync.run(scenario()).write(tmp_path, figure=False)
    finally:
        os.umask(old)
    modes = {p.name: stat.S_IMODE(p.stat().st_mode) for p in tmp_path.iterdir()}
    assert set(modes.values()) == {0o640}, modes


def test_a_rewrite_never_leaves_an_earlier_runs_files_beside_the_new_summary(tmp_path):
    lossync.run(scenario()).write(tmp_path)
    assert (tmp_path / "figure.png").exists()
    lossync.report(tmp_path)  # report.html, of this run
    lossync.run(scenario(seed=2)).write(tmp_path, figure=False)
    assert not (tmp_path / "figure.png").exists()
    assert json.loads((tmp_path / "summary.json").read_text())["seed"] == 2
    # The page showed the run this one replaced (its title, its numbers) beside the new summary.
    assert not (tmp_path / "report.html").exists()


def test_an_interrupted_write_leaves_no_summary_and_no_temporary_file(tmp_path):
    r = lossync.run(scenario())
    r.write(tmp_path, figure=False)

    def broken(*_a, **_k):
        raise KeyboardInterrupt

    r.events.to_csv = broken  # fails after scenario.toml and series.parquet are written
    with pytest.raises(KeyboardInterrupt):
        r.write(tmp_path, figure=False)
    # The earlier result is still whole: nothing was renamed in before every file existed.
    assert sorted(p.name for p in tmp_path.iterdir()) == ["events.csv", "scenario.toml", "series.parquet", "summary.json"]


def test_scenario_errors_carry_field_and_reason_and_are_value_errors():
    bad = scenario()
    bad["dumbbell"]["buffer"] = {"bdp_fraction": -1}
    with pytest.raises(ValueError) as info:
        lossync.run(bad)
    e = info.value
    assert isinstance(e, lossync.ScenarioError) and isinstance(e, lossync.LossyncError)
    assert e.field == "dumbbell.buffer.bdp_fraction" and "-1" in e.reason
    # Errors found in Python (an override's path) are the same class.
    with pytest.raises(lossync.ScenarioError) as info:
        lossync.run(scenario(), ["flows.5.count=3"])
    assert info.value.field == "flows.5"
    with pytest.raises(OSError) as info:
        lossync.run("/nonexistent/scenario.toml")
    assert isinstance(info.value, lossync.InputFileError) and info.value.field == "/nonexistent/scenario.toml"
    # They survive a process pool's pickling.
    again = pickle.loads(pickle.dumps(e))
    assert (type(again), again.field, again.reason) == (type(e), e.field, e.reason)


def test_negative_list_indices_are_refused_not_read_from_the_end():
    with pytest.raises(lossync.ScenarioError) as info:
        lossync.run(scenario(), ["flows.-1.count=3"])
    assert info.value.field == "flows.-1"


@pytest.mark.parametrize("example", [p for p in sorted(EXAMPLES.glob("*.toml")) if not p.stem.startswith("sweep-")], ids=lambda p: p.stem)
def test_written_scenario_reruns_to_the_same_summary(example, tmp_path):
    short = ["run.duration=30", "run.warmup=5"]
    first = lossync.run(example, short)
    first.write(tmp_path, figure=False)
    again = lossync.run(tmp_path / "scenario.toml")
    assert again.scenario == first.scenario
    assert _without_wall(again.summary) == _without_wall(first.summary)
    pd.testing.assert_frame_equal(again.series, first.series)


def test_the_written_scenario_names_the_packet_senders_defaults(tmp_path):
    # "Every default written out", but the recovery options and the scheduler at their defaults
    # were left out: once those defaults follow Linux (issue 34), a file written before would run
    # another sender than the one it came from.
    lossync.run(EXAMPLES / "dumbbell-reno.toml", ["run.duration=2", "run.warmup=0"]).write(tmp_path, figure=False)
    text = (tmp_path / "scenario.toml").read_text()
    for line in ('recovery = "rfc6675"', 'loss_detection = "dupthresh"', 'hystart = "off"', "undo = false",
                 'scheduler = "serial"'):
        assert f"\n{line}\n" in text, line


def _without_wall(summary):
    return {k: v for k, v in summary.items() if "wall" not in k}


def test_variants_are_listed():
    names = [n for n, _ in lossync.variants()]
    assert names == ["reno", "highspeed", "scalable", "cubic", "htcp", "bic", "ghstcp", "xcp", "bbr", "bbr3", "dctcp", "prague"]


@pytest.mark.parametrize("example", ["dumbbell-reno", "paper-10g", "xcp-two-way", "parking-lot"])
def test_results_do_not_depend_on_where_the_run_is_cut(example):
    # Runs are advanced in chunks sized by wall time, which differs from machine to machine:
    # the result must not depend on the cuts.
    from lossync import _core
    from lossync.scenario import prepare

    def cut_at(fractions):
        sim = _core.Simulation(prepare(example, ["run.duration=60", "run.warmup=10"]).core)
        for f in [*fractions, 1.0]:
            sim.advance(sim.duration_s * f)
        summary, columns, events = sim.finish()
        return _without_wall(json.loads(summary)), [c.tobytes() for _, c in columns], events

    one = cut_at([])
    assert cut_at([0.001, 0.3337, 0.5, 0.91]) == one
    assert cut_at([k / 997 for k in range(1, 997)]) == one


def test_ctrl_c_stops_within_a_second_and_keeps_the_part_simulated(tmp_path):
    script = tmp_path / "long.py"
    out = tmp_path / "out"
    # A packet run of several minutes of wall time, interrupted after two seconds.
    script.write_text(
        "import sys\nfrom lossync.cli import main\n"
        f"sys.argv = ['lossync', 'run', 'paper-10g', '--engine', 'packet', '--set', 'run.duration=3000', '--set', 'run.warmup=0',"
        f" '--set', 'run.from_first_congestion=false', '--out', {str(out)!r}, '--no-figure']\nmain()\n")
    proc = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    time.sleep(3.0)
    sent = time.monotonic()
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert time.monotonic() - sent < 1.5, "took more than a second to stop"
    assert proc.returncode == 130, err
    summary = json.loads((out / "summary.json").read_text())
    assert summary["partial"] is True and 0 < summary["duration_s"] < 3000
    assert any(w.startswith("interrupted:") for w in summary["warnings"])
    assert "Traceback" not in err


#: Two Reno flows of 20 ms at 10 Gb/s without slow start need minutes to fill their window: in
#: 20 s they see no congestion event, and the summary warns so. At 100 Mb/s they congest at once.
UNCONGESTED = {"dumbbell": {"capacity": "10Gbps", "buffer": {"bdp_fraction": 0.1}},
               "flows": [{"count": 2, "cc": "reno", "rtt": "20ms", "slow_start": False}], "run": {"duration": "20s"}}


def test_a_run_that_warns_emits_lossync_warnings_as_well_as_result_warnings():
    with pytest.warns(lossync.LossyncWarning, match="no congestion event") as caught:
        r = lossync.run(UNCONGESTED)
    assert r.warnings and [str(w.message) for w in caught] == r.warnings == r.summary["warnings"]
    assert issubclass(lossync.LossyncWarning, UserWarning)
    assert {w.filename for w in caught} == {__file__}  # blamed on the caller's line, not lossync's
    with warnings.catch_warnings(record=True) as quiet:
        warnings.simplefilter("always")
        assert lossync.run(UNCONGESTED, warn=False).warnings == r.warnings  # for callers that report them themselves
        assert lossync.run(UNCONGESTED, ["dumbbell.capacity=100Mbps"]).warnings == []
    assert quiet == []


#: Rates as iperf, tc and ns-3 users write them, against bits per second worked out by hand.
RATES = [("10G", 10e9), ("10Gbit", 10e9), ("10gbps", 10e9), ("10Gb/s", 10e9), ("100M", 100e6), ("100mbit", 100e6),
         ("1.5Mbps", 1.5e6), ("10mbps", 10e6), ("1.25 GB/s", 10e9), ("5 MByte/s", 40e6), ("1 GiB/s", 8 * 2**30)]


@pytest.mark.parametrize(("text", "bps"), RATES)
def test_rates_are_read_as_iperf_and_tc_users_write_them(text, bps):
    resolved = lossync.resolve("dumbbell-reno", [f'dumbbell.capacity="{text}"', 'dumbbell.buffer={bytes="64KiB"}',
                                                 'flows.0.rtt="100MS"'])
    assert resolved["links"][0]["capacity_bps"] == bps
    assert resolved["links"][0]["buffer_pkts"] == 65536 / resolved["links"][0]["packet_size_bytes"]
    assert resolved["flows"][0]["rtt_s"] == pytest.approx(0.1, rel=1e-12)


def test_a_results_methods_refuse_what_they_cannot_take(tmp_path):
    # On main plot(max_flows=-1) drew 9 of 10 flows labelled "first -1 of 10", and write() into a
    # file raised Python's own FileExistsError, not a lossync error naming the argument.
    r = lossync.run(Path(__file__).resolve().parent.parent / "examples" / "dumbbell-reno.toml", ["run.duration=10", "run.warmup=1"],
                    progress=False, warn=False)
    for bad in (-1, 0, 2.5, True):
        with pytest.raises(lossync.ScenarioError, match="max_flows"):
            r.plot(max_flows=bad)
    (tmp_path / "afile").write_text("x")
    with pytest.raises(lossync.InputFileError, match="is a file, not a folder") as e:
        r.write(tmp_path / "afile")
    assert e.value.field == "out_dir" and (tmp_path / "afile").read_text() == "x"


def many_flows(flows: int, **run) -> dict:
    return {"dumbbell": {"capacity": "1Gbps", "buffer": {"bdp_fraction": 0.25}},
            "flows": [{"count": flows, "cc": "reno", "rtt": "20ms..200ms"}],
            "run": {"duration": "0.5s", "record_interval": "0.1s", **run}}


def test_the_series_records_series_flows_flows_spread_evenly_and_the_summary_every_flow(tmp_path):
    # docs/scenario.md, run.series_flows: beyond 1,000 flows (the default) the series records flow
    # ⌊j·n/1000⌋ for j = 0..999; here n = 1,500: 0, 1, 3, 4, 6, ... (at 10^5 flows the series of
    # every flow was 300,000 columns: 49 s and 3 GB to write, against 5 s of simulation).
    def recorded(r, prefix):
        return sorted(int(c[len(prefix):]) for c in r.series.columns if c.startswith(prefix))

    r = lossync.run(many_flows(1500))
    assert len(r.summary["flows"]) == 1500
    for prefix in ("cwnd_pkts.", "rate_pps.", "rtt_s."):
        assert recorded(r, prefix) == [j * 1500 // 1000 for j in range(1000)], prefix
    assert r.scenario["run"].get("series_flows", 1000) == 1000
    # Asked for more than there are: every flow; none: the links' columns only, and the run's
    # figure and files are still written.
    assert recorded(lossync.run(many_flows(1500, series_flows=2000)), "cwnd_pkts.") == list(range(1500))
    none = lossync.run(many_flows(1500, series_flows=0))
    assert recorded(none, "cwnd_pkts.") == [] and recorded(none, "rtt_s.") == []
    assert "utilization.bottleneck" in none.series
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        none.write(tmp_path / "none")
    back = lossync.Result.read(tmp_path / "none")
    assert back.scenario["run"]["series_flows"] == 0 and len(back.summary["flows"]) == 1500
    assert "series_flows = 0" in (tmp_path / "none" / "scenario.toml").read_text()


def test_every_public_name_is_what_its_module_defines_whatever_was_imported_first():
    # `lossync.calibrate` shares its name with a module: once something imported that module
    # (the command line, a test), Python set the package's attribute to the module, and
    # `lossync.calibrate(...)` raised "'module' object is not callable". In a fresh interpreter:
    # every submodule imported first, then every public name looked up.
    code = """
import importlib, pkgutil, sys
import lossync
for m in pkgutil.walk_packages(lossync.__path__, "lossync."):
    if m.name.split(".")[-1] in ("__main__", "program"):
        continue
    try:
        importlib.import_module(m.name)
    except ImportError:
        pass  # an optional dependency (ns-3, Dask) not installed
wrong = [n for n, mod in lossync._PUBLIC.items()
         if getattr(lossync, n) is not getattr(importlib.import_module("lossync." + mod), n)]
print(wrong)
sys.exit(1 if wrong else 0)
"""
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
