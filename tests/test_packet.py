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
