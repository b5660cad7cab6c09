"""The Python API: scenarios as dicts or files, results as DataFrames."""

import json

import pytest

import lossync


def scenario(**run):
    return {
        "dumbbell": {"capacity": "100Mbps", "buffer": {"bdp_fraction": 0.25}},
        "flows": [{"count": 3, "cc": "reno", "rtt": "60ms..140ms"}],
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
    assert r["run"]["step_s"] == 0.001 and r["run"]["seed"] == 1
    assert r["links"][0]["buffer_pkts"] == pytest.approx(0.25 * 100e6 / 12000 * 0.1)


def test_write_is_complete_and_leaves_no_temporary_files(tmp_path):
    r = lossync.run(scenario())
    r.write(tmp_path)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["events.csv", "figure.png", "series.parquet", "summary.json"]
    doc = json.loads((tmp_path / "summary.json").read_text())
    assert doc["provenance"]["seed"] == 1


def test_variants_are_listed():
    names = [n for n, _ in lossync.variants()]
    assert names == ["reno", "highspeed", "scalable", "cubic", "htcp", "bic", "ghstcp", "xcp"]
