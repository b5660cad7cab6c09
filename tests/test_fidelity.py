"""The fidelity matrix's CI slice (scripts/fidelity.py QUICK: a dozen short cells): the default
fluid loss model against the packet engine, with issue 11's tolerances."""

import importlib.util
from pathlib import Path

import pytest

import lossync
from lossync.compare import compare

ROOT = Path(__file__).resolve().parent.parent
_spec = importlib.util.spec_from_file_location("fidelity", ROOT / "scripts" / "fidelity.py")
fidelity = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(fidelity)


@pytest.fixture(scope="module")
def slice_frame():
    rows = []
    for key, doc in fidelity.cells(quick=True):
        rows += fidelity.run_cell(key, doc, ["packet", "fluid:tcp", "fluid:proportional"])
    assert not [r for r in rows if "error" in r]
    return fidelity.frame(rows)


def test_default_model_is_closer_to_the_packet_engine_than_proportional(slice_frame):
    ad = slice_frame.assign(ad=slice_frame["du"].abs()).pivot_table(index=["variant", "buffer", "capacity", "flows", "rtt"], columns="model", values="ad")
    assert len(ad) == 12
    # The old default misses by 8 points in the median cell (15 at the 1 ms step that ignored
    # these 25-75 ms RTTs); the new one by under one.
    assert ad["tcp"].median() < 0.01 < 0.05 < ad["proportional"].median()
    assert (ad["tcp"] <= ad["proportional"] + 0.01).mean() >= 0.9


def test_issue_11_tolerances_on_the_slice(slice_frame):
    # Within 3 points in 90% of the cells, within 5 in every cell of 10% BDP or more. (Met since
    # the default burst headroom; the 10-Reno, 100 Mb/s, 25-75 ms, 10% cell was 7 points off.)
    tcp = slice_frame[slice_frame["model"] == "tcp"]
    ad = tcp["du"].abs()
    assert (ad <= 0.03).mean() >= 0.9
    assert (ad[tcp["buffer"] >= 0.1] <= 0.05).all()


DUMBBELLS = [p.stem for p in sorted((ROOT / "examples").glob("*.toml"))
             if not p.name.startswith("sweep-") and "dumbbell" in lossync.load_scenario(p)]


@pytest.mark.parametrize("name", DUMBBELLS)
def test_every_shipped_dumbbell_default_fluid_is_within_3_points_of_the_packet_engine(name):
    # Issue 11 acceptance 4: the example with the default (faithful) loss model, shortened for CI
    # (10 Gb/s: 120 s, otherwise 300 s; statistics after the first third).
    fast = lossync.resolve(name)["links"][0]["capacity_bps"] >= 10e9
    duration = 120 if fast else 300
    table = compare(name, ["fluid:tcp", "packet"], [f"run.duration={duration}", f"run.warmup={duration // 3}",
                                                    "run.from_first_congestion=false"])
    u = table["utilization"]
    assert abs(u["fluid:tcp"] - u["packet"]) <= 0.03, u.to_dict()


def test_a_calibration_carries_to_longer_runs_it_was_not_fitted_on(tmp_path):
    # Issue 11 acceptance 3 on a cell where the default model is about 5 points too low: 5 Reno
    # and 5 CUBIC flows, 100 Mb/s, RTTs 25..75 ms, 10% BDP. Fitted on 60 s runs, checked on 120 s
    # runs of other seeds (the packet engine is the reference, within 2 points).
    flows = [{"count": 5, "cc": cc, "rtt": "25ms..75ms", "slow_start": True} for cc in ("reno", "cubic")]
    doc = {"dumbbell": {"capacity": "100Mbps", "buffer": {"bdp_fraction": 0.1}}, "flows": flows,
           "run": {"duration": "60s", "warmup": "20s", "record_interval": "1s"}}
    cal = lossync.calibrate(doc, tmp_path / "cal.toml", seeds=2)
    assert cal["event_threshold"] > 1
    longer = {**doc, "run": {"duration": "120s", "warmup": "40s", "record_interval": "1s"}}

    def u(d):
        return sum(lossync.run({**d, "run": {**d["run"], "seed": s}}).summary["utilization"] for s in (3, 4)) / 2

    packet = u({**longer, "engine": "packet"})
    uncalibrated = u(longer)
    calibrated = u({**longer, "loss": {"model": "tcp", "calibration": str(tmp_path / "cal.toml")}})
    assert abs(uncalibrated - packet) > 0.03 and abs(calibrated - packet) <= 0.02, (packet, uncalibrated, calibrated)


def test_burst_headroom_holds_the_fluid_queue_below_the_buffer_and_conserves_packets():
    doc = {"dumbbell": {"capacity": "100Mbps", "buffer": {"packets": 40}},
           "flows": [{"count": 4, "cc": "reno", "rtt": "50ms"}],
           "loss": {"model": "tcp", "burst_pkts": 15}, "run": {"duration": "60s"}}
    r = lossync.run(doc)
    link = r.summary["links"][0]
    assert 24 < link["max_queue_pkts"] <= 25 + 1e-9  # 40 - 15 packets, reached
    stored = link["queue_end_pkts"] - link["queue_start_pkts"]
    assert link["arrivals_pkts"] == pytest.approx(link["departures_pkts"] + link["drops_pkts"] + stored, rel=1e-9)
    # It round-trips through the resolved scenario (the written scenario.toml re-runs to it).
    assert r.scenario["loss"] == {"model": "tcp", "burst_pkts": 15.0}
    assert "burst_pkts = 15.0" in r.scenario_toml()


def test_losses_during_recovery_do_not_cut_the_window_again():
    # 10 Reno flows, 10 Gb/s, 50 ms, 0.5 BDP: slow start overshoots and loses for more than one
    # RTT. The packet engine cuts once (its SACK recovery, RFC 6675 §5, absorbs the losses it
    # detects before the recovery ends) and keeps the link full; the fluid engine cut a second
    # time on the overshoot's later drops (U 0.745 against 1.000) until a loss event's drops were
    # counted for two RTTs instead of one.
    doc = {"dumbbell": {"capacity": "10Gbps", "buffer": {"bdp_fraction": 0.5}},
           "flows": [{"count": 10, "cc": "reno", "rtt": "50ms", "slow_start": True}],
           "run": {"duration": "20s", "warmup": "5s", "record_interval": "1s"}}
    table = compare(doc, ["fluid:tcp", "packet"])
    u = table["utilization"]
    assert u["packet"] > 0.99 and abs(u["fluid:tcp"] - u["packet"]) <= 0.03, u.to_dict()
