"""One read and one resolution per run (issue: "Python parses a scenario twice per run, and a sweep
resolves each run at least twice"), the typed records of the engines outside the core, and the
per-run statistics the studies took from the series themselves, now the metrics module's."""

import pickle
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import lossync
from lossync import _core
from lossync import scenario as scenario_module
from lossync.errors import LossyncError
from lossync.scenario import prepare

EXAMPLES = Path(__file__).resolve().parent.parent / "python" / "lossync" / "examples"
SHORT = ["run.duration=3", "run.warmup=1"]


@pytest.fixture
def counted(monkeypatch):
    """Counts the scenario files read and the core's parse-and-resolve calls (`_core.Scenario`,
    the only one), wherever in the package they happen."""
    counts = {"read": 0, "resolve": 0}
    read, core_scenario = scenario_module.read_document, _core.Scenario

    def counting_read(*a, **k):
        counts["read"] += 1
        return read(*a, **k)

    def counting_scenario(*a, **k):
        counts["resolve"] += 1
        return core_scenario(*a, **k)

    monkeypatch.setattr(scenario_module, "read_document", counting_read)
    monkeypatch.setattr(_core, "Scenario", counting_scenario)
    return counts


def test_the_command_line_reads_and_resolves_a_run_once(counted, tmp_path):
    # Before: `lossync run FILE --out DIR` read the file three times and resolved it four times
    # (the estimate, the capability check, the engine, the scenario.toml written).
    from lossync.cli import main

    with pytest.raises(SystemExit) as done:
        main(["run", "dumbbell-reno", *[a for s in SHORT for a in ("--set", s)], "--out", str(tmp_path), "--no-figure"])
    assert done.value.code in (0, None)
    assert (tmp_path / "scenario.toml").is_file()
    assert counted == {"read": 1, "resolve": 1}


@pytest.mark.parametrize("engine", ["fluid", "packet"])
def test_the_api_reads_and_resolves_a_run_once(counted, engine):
    r = lossync.run("dumbbell-reno", [*SHORT, f'engine="{engine}"'], warn=False)
    r.scenario_toml()  # from the run's own resolution
    assert counted == {"read": 1, "resolve": 1}


def test_a_sweep_resolves_each_point_once_and_its_worker_runs_it_as_resolved(counted):
    # The sweep resolves a point for its key (the files it names are part of its identity) and
    # hands the run that resolution; a worker process receives it pickled, read back without
    # resolving it again.
    from lossync.sweeps.runner import point_document, run_key, run_point

    base = scenario_module.load_scenario("dumbbell-reno")
    counted["read"] = 0
    rows = []
    for buffer in (0.1, 0.3):
        point = {"dumbbell.buffer.bdp_fraction": buffer}
        _, error, prepared = run_key(point_document(base, SHORT, point, 1), str(EXAMPLES))
        assert error is None
        shipped = pickle.loads(pickle.dumps(prepared))
        rows.append(run_point(base, str(EXAMPLES), SHORT, point, 1, prepared=shipped))
    assert [r["status"] for r in rows] == ["ok", "ok"], rows
    assert counted == {"read": 0, "resolve": 2}
    # The same rows as runs that resolve their own scenario.
    again = [run_point(base, str(EXAMPLES), SHORT, {"dumbbell.buffer.bdp_fraction": b}, 1) for b in (0.1, 0.3)]
    assert [r["utilization"] for r in rows] == [r["utilization"] for r in again]


def test_a_pickled_scenario_runs_bit_identically():
    p = prepare("paper-10g", ["run.duration=20", "run.warmup=5", 'engine="packet"'])
    back = pickle.loads(pickle.dumps(p))
    assert back.core.json == p.core.json and back.doc == p.doc
    one, two = lossync.run(p, warn=False), lossync.run(back, warn=False)
    assert one.summary == two.summary
    assert one.series.equals(two.series)


def test_an_error_of_a_prepared_scenario_names_the_field_the_user_wrote():
    with pytest.raises(lossync.ScenarioError, match=r"^dumbbell\.capacity"):
        prepare("dumbbell-reno", ["dumbbell.capacity=-1Mbps"])


# ---------------------------------------------------------------------------------------------
# The typed records of the ns-3 and kernel drivers


def _records(**link_over):
    from lossync.engines.records import FlowCounts, LinkCounts, RunRecords

    link = dict(buffer_pkts=20, arrived_pkts=1000, departed_pkts=990, dropped_pkts=5, queue_integral=10.0, queue_integral_span=1.0,
                max_queue_pkts=20, departures_pkts=990, queue_start_pkts=3, queue_end_pkts=8)
    link.update(link_over)
    flow = FlowCounts(sent_pkts=1000, delivered_pkts=990, dropped_pkts=5, cwnd_integral_pkt_s=30.0, reductions=2)
    return RunRecords(engine="ns3", duration_s=2.0, measured_from_s=1.0, span_s=1.0, flow_updates=1, links=[LinkCounts(**link)],
                      flows=[flow])


def _dumbbell():
    return prepare({"engine": "ns3", "dumbbell": {"capacity": "12Mbps", "buffer": {"packets": 20}},
                    "flows": [{"cc": "reno", "rtt": "20ms"}], "run": {"duration": "2s", "warmup": "1s"}})


def test_the_records_builder_names_only_fields_the_core_knows():
    # Every field of the typed records is one of the core's (which refuses any other), and the
    # counts become the metrics' rates: 990 packets in 1 s on a 1000-packet/s link.
    from lossync.engines.records import DropLog, Samples, summarize

    t = np.arange(0.1, 2.05, 0.1)
    samples = Samples(time_s=t, queue_pkts=np.full_like(t, 4.0), link_sent_pkts=np.full_like(t, 99.0))
    samples.add_flow(np.full_like(t, 15.0), np.full_like(t, 99.0))
    s = summarize(_dumbbell(), _records(), samples, DropLog.empty()).summary
    assert s["utilization"] == pytest.approx(0.99)
    assert s["links"][0]["mean_queue_pkts"] == pytest.approx(10.0)
    assert s["flows"][0]["mean_cwnd_pkts"] == pytest.approx(30.0)
    assert s["links"][0]["queue_std_pkts"] == 0.0


@pytest.mark.parametrize(("field", "value"), [("dropped_pkts", -1.0), ("arrived_pkts", float("nan")), ("queue_integral", float("inf"))])
def test_a_driver_count_outside_physics_is_refused_naming_it(field, value):
    from lossync.engines.records import DropLog, Samples, summarize

    t = np.arange(0.1, 2.05, 0.1)
    samples = Samples(time_s=t, queue_pkts=t, link_sent_pkts=t)
    samples.add_flow(t, t)
    with pytest.raises(LossyncError, match=rf"^engine ns3: records\.links\[0\]\.{field}: "):
        summarize(_dumbbell(), _records(**{field: value}), samples, DropLog.empty())


# ---------------------------------------------------------------------------------------------
# The studies' statistics, now the metrics module's


@pytest.mark.parametrize("engine", ["fluid", "packet"])
def test_the_spread_of_a_links_series_is_numpys_over_the_window(engine):
    # xcp-stability's queue oscillation and obs-sync's variability of the traffic leaving the
    # edge were computed by the studies from the series; they are the summary's now, the same
    # numbers numpy gives on the window's samples (standard deviation, n - 1).
    doc = {"engine": engine, "dumbbell": {"capacity": "100Mbps", "buffer": {"bdp_fraction": 0.5}},
           "flows": [{"cc": "reno", "rtt": "50ms", "count": 4, "slow_start": False}],
           "run": {"duration": "40s", "warmup": "10s", "from_first_congestion": False}}
    r = lossync.run(doc, warn=False)
    assert r.summary["congestion_events"] > 3
    link = r.summary["links"][0]
    window = r.series[r.series["time_s"] >= r.summary["measured_from_s"]]
    assert link["queue_std_pkts"] == pytest.approx(np.nanstd(window["queue_pkts.bottleneck"], ddof=1), rel=1e-12)
    assert link["utilization_std"] == pytest.approx(np.nanstd(window["utilization.bottleneck"], ddof=1), rel=1e-12)
    assert link["queue_std_pkts"] > 1  # a saw-tooth, not an idle queue


def test_the_spread_of_finished_transfers_is_pandas_over_the_window():
    r = lossync.run("dynamic-dumbbell", ["run.duration=20", "run.warmup=5"], warn=False)
    fct = r.fct[r.fct["start_s"] >= r.summary["measured_from_s"]]
    bps = pd.Series(fct["size_bytes"] * 8 / fct["fct_s"])
    groups = r.summary["dynamic"]
    assert len(groups) == 1 and len(fct) > 10
    assert groups[0]["flow_goodput_mean_bps"] == pytest.approx(bps.mean(), rel=1e-12)
    assert groups[0]["flow_goodput_var_bps2"] == pytest.approx(bps.var(), rel=1e-12)
