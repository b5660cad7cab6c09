"""Dynamic traffic through the front end: `Result.fct` (one row per finished flow), the summary's
`dynamic` section and `active_flows` series, fct.parquet in a result folder, and bad input as
one-line errors (exit 2) naming the field."""

import math
import subprocess
import sys
import tomllib

import pandas as pd
import pytest

import lossync
from lossync.results import FCT_COLUMNS
from lossync.summary_text import summary_table


def cli(*args):
    return subprocess.run([sys.executable, "-m", "lossync", *args], capture_output=True, text=True, timeout=300)


def test_the_example_gives_a_flow_table_and_fct_percentiles(examples, tmp_path):
    r = lossync.run(examples / "dynamic-dumbbell.toml", ["run.duration=20", "run.warmup=2"])
    fct = r.fct
    assert list(fct.columns) == FCT_COLUMNS and len(fct) > 500
    # Seed 002's sizes: none below the 40 KB minimum; packets = ceil(bytes / 1500).
    assert (fct["size_bytes"] >= 40e3).all()
    assert (fct["size_pkts"] == (fct["size_bytes"] / 1500).apply(math.ceil)).all()
    # A flow cannot finish faster than one base RTT (20 ms).
    assert (fct["fct_s"] >= 0.02 - 1e-12).all()
    d = r.summary["dynamic"][0]
    assert d["group"] == "web" and d["rate_per_s"] == 50
    # The summary's percentiles are the table's (flows arriving after the warm-up), computed by
    # numpy's default (linear) quantile.
    window = fct[fct["start_s"] >= r.summary["measured_from_s"]]
    overall = d["fct"][0]
    assert overall["class"] == "all" and overall["flows"] == len(window)
    assert overall["fct_p50_s"] == pytest.approx(window["fct_s"].quantile(0.5), rel=1e-12)
    assert overall["fct_p99_s"] == pytest.approx(window["fct_s"].quantile(0.99), rel=1e-12)
    short = window[window["size_bytes"] < 1e5]
    assert d["fct"][1]["class"] == "<100KB" and d["fct"][1]["flows"] == len(short)
    assert "active_flows.web" in r.series.columns
    assert r.series["active_flows.web"].max() <= 200


def test_dynamic_flows_are_summarised_by_size_class_not_by_pool_slot(examples):
    """The example used to print a "no congestion event" warning, Jain's index over its pool
    slots (0.05: slots idle between transfers look starved) and one all-zero row per idle slot.
    Its link is uncongested by design (50 transfers/s of 700 KB: 280 Mb/s on 1 Gb/s)."""
    out = cli("run", str(examples / "dynamic-dumbbell.toml"), "--set", "run.duration=10", "--set", "run.warmup=2")
    assert out.returncode == 0, out.stderr
    assert "warning" not in out.stderr
    assert "Jain's index       n/a" in out.stdout
    assert "FCT <100KB" in out.stdout
    assert not [line for line in out.stdout.splitlines() if line.split()[:2] and line.split()[1:2] == ["reno"]]
    # A persistent group beside it keeps its rows and its index (over the persistent flows only).
    doc = tomllib.loads((examples / "dynamic-dumbbell.toml").read_text())
    doc["flows"].append({"name": "bulk", "cc": "cubic", "rtt": "20ms", "count": 2})
    r = lossync.run(doc, ["run.duration=10", "run.warmup=2"], base_dir=examples, warn=False)
    bulk = [f["throughput_pps"] for f in r.summary["flows"] if f["group"] == "bulk"]
    assert len(bulk) == 2 and min(bulk) > 0
    assert r.summary["jain"] == pytest.approx(sum(bulk) ** 2 / (2 * sum(t * t for t in bulk)), rel=1e-12)
    text = summary_table(r.summary)
    assert text.count(" cubic ") == 2


def test_the_flow_table_is_written_and_read_back(examples, tmp_path):
    r = lossync.run(examples / "dynamic-dumbbell.toml", ["run.duration=5", "run.warmup=1"])
    r.write(tmp_path / "out", figure=False)
    assert (tmp_path / "out" / "fct.parquet").is_file()
    back = lossync.Result.read(tmp_path / "out")
    pd.testing.assert_frame_equal(back.fct.reset_index(drop=True), r.fct.reset_index(drop=True))


def test_runs_without_dynamic_traffic_have_an_empty_flow_table(examples, tmp_path):
    r = lossync.run(examples / "dumbbell-reno.toml", ["run.duration=20", "run.warmup=5"])
    assert r.fct.empty and "dynamic" not in r.summary
    r.write(tmp_path / "out", figure=False)
    assert not (tmp_path / "out" / "fct.parquet").exists()


@pytest.mark.parametrize(("arrivals", "field"), [
    ('{rate=0, shape=2, min_size="40KB"}', "flows[0].arrivals.rate"),
    ('{rate=50, shape=1, mean_size="700KB"}', "flows[0].arrivals.shape"),
    ('{rate=50, min_size="40KB", mean_size="10KB"}', "flows[0].arrivals.mean_size"),
    ('{rate=50, shape=2, min_size="0B"}', "flows[0].arrivals.min_size"),
    ('{rate=50, shape=2}', "flows[0].arrivals"),
])
def test_bad_arrivals_are_one_line_errors_naming_the_field(examples, arrivals, field):
    r = cli("validate", str(examples / "dynamic-dumbbell.toml"), "--set", f"flows.0.arrivals={arrivals}")
    assert r.returncode == 2, r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in r.stderr, r.stderr
    assert lines[0].removeprefix("lossync: error: ").split(": ", 1)[0] == field, lines[0]


def test_the_fluid_engine_refuses_arrivals(examples, tmp_path):
    r = cli("run", str(examples / "dynamic-dumbbell.toml"), "--engine", "fluid", "--out", str(tmp_path / "o"))
    assert r.returncode == 2, r.stderr
    assert r.stderr.strip().startswith("lossync: error: flows[0].arrivals:"), r.stderr
    with pytest.raises(lossync.LossyncError) as info:
        lossync.run(examples / "dynamic-dumbbell.toml", ['engine="fluid"'])
    assert info.value.field == "flows[0].arrivals"
