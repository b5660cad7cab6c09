"""The packet engine through the front end, and the loop it closes: synchronization measured in
packets drives the fluid model's empirical m_k controller (seed 001's future work)."""

import subprocess
import sys

import pandas as pd
import pytest

import lossync


def test_packet_engine_runs_the_reno_example_near_the_closed_form(examples):
    r = lossync.run(examples / "dumbbell-reno.toml", ["engine=\"packet\"", "flows.0.slow_start=true"])
    assert r.summary["engine"] == "packet"
    # docs/model.md §4.2: ¾(1+ρ)²/(1+ρ+ρ²) = 0.8176 at ρ = 0.1.
    assert r.summary["utilization"] == pytest.approx(0.8176, abs=0.02)
    assert len(r.drops) > 0 and set(r.drops["flow"]) == {0}


def test_measured_synchronization_drives_the_fluid_model(tmp_path):
    scenario = {
        "engine": "packet",
        "dumbbell": {"capacity": "100Mbps", "buffer": {"bdp_fraction": 0.25}},
        "flows": [{"count": 10, "cc": "reno", "rtt": "80ms..260ms", "slow_start": True}],
        "run": {"duration": "300s", "warmup": "60s"},
    }
    f = tmp_path / "s.toml"
    f.write_text("\n".join([
        'engine = "packet"',
        "[dumbbell]", 'capacity = "100Mbps"', "buffer = { bdp_fraction = 0.25 }",
        "[[flows]]", "count = 10", 'cc = "reno"', 'rtt = "80ms..260ms"', "slow_start = true",
        "[run]", 'duration = "300s"', 'warmup = "60s"',
    ]) + "\n")
    m_csv, drops_csv = tmp_path / "m.csv", tmp_path / "drops.csv"
    r = subprocess.run([sys.executable, "-m", "lossync", "run", str(f), "--sync-out", str(m_csv), "--drops", str(drops_csv)],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    measured = pd.read_csv(m_csv)
    assert list(measured.columns) == ["m", "count"] and measured["count"].sum() > 5
    drops = pd.read_csv(drops_csv)
    assert list(drops.columns) == ["time_s", "flow"] and len(drops) >= measured["count"].sum()
    # The fluid model driven by that distribution draws m_k only from the measured support.
    fluid = dict(scenario, engine="fluid", loss={"model": "sync", "sync": {"kind": "empirical", "file": str(m_csv)}})
    fluid["run"] = {"duration": "600s", "from_first_congestion": True}
    out = lossync.run(fluid)
    hist = out.summary["links"][0]["sync_histogram"]
    assert {m for m, n in enumerate(hist) if n} <= set(measured["m"])


def test_send_jitter_breaks_drop_tail_phase_effects():
    # Floyd & Jacobson 1992: a deterministic drop-tail simulation can lock flows into phases that
    # decide who loses; a random processing time of about one bottleneck packet time before each
    # send removes the bias. 10 CUBIC flows, RTTs 25..75 ms, 1 Gb/s, 1 BDP: without jitter one
    # flow takes most of the link (Jain 0.58); with 12 us (one packet time) the shares follow the
    # laws (Jain above 0.9), every seed its own run, each deterministic.
    base = {"engine": "packet", "dumbbell": {"capacity": "1Gbps", "buffer": {"bdp_fraction": 1}},
            "flows": [{"count": 10, "cc": "cubic", "rtt": "25ms..75ms", "slow_start": True}],
            "run": {"duration": "120s", "warmup": "40s", "record_interval": "1s"}}
    plain = lossync.run(base).summary
    zero = lossync.run({**base, "flows": [{**base["flows"][0], "send_jitter": 0}]}).summary
    assert zero["flows"] == plain["flows"] and plain["jain"] < 0.7
    jittered = {**base, "flows": [{**base["flows"][0], "send_jitter": "12us"}]}
    runs = [lossync.run({**jittered, "run": {**base["run"], "seed": s}}).summary for s in (1, 2, 1)]
    assert runs[0]["flows"] == runs[2]["flows"] and runs[0]["flows"] != runs[1]["flows"]
    assert min(r["jain"] for r in runs) > 0.9 and min(r["utilization"] for r in runs) > 0.99


def test_the_partitioned_scheduler_gives_one_result_for_every_thread_count():
    # Through the Python layer, as `lossync run --threads N --set run.scheduler='"partitioned"'`
    # runs it: summary, series and drop log the same on 1 and 2 threads (the core's tests check
    # it against one event list, crates/lossync-core/tests/packet_partitioned.rs).
    doc = {"engine": "packet", "dumbbell": {"capacity": "50Mbps", "buffer": {"bdp_fraction": 0.1}},
           "flows": [{"count": 6, "cc": "reno", "rtt": "20ms..80ms", "start": {"uniform": ["0s", "1s"]}}],
           "run": {"duration": "10s", "warmup": "2s", "scheduler": "partitioned"}}
    one, two = (lossync.run(doc, [f"run.threads={t}"]) for t in (1, 2))
    assert one.summary == two.summary
    pd.testing.assert_frame_equal(one.series, two.series)
    pd.testing.assert_frame_equal(one.drops, two.drops)
    assert len(one.drops) > 0 and one.drops["time_s"].is_monotonic_increasing
