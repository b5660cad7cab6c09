"""Optical burst switching through the front end: the aggregate Σ cwnd/RTT samples
(`Result.aggregate`, aggregate.parquet, the summary table's line) and the seed-002 studies'
quick runs."""

import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

import lossync


def test_aggregate_samples_are_a_table_written_and_read_back(examples, tmp_path):
    r = lossync.run(examples / "obs-dumbbell.toml", ["run.duration=30", "run.warmup=10", "run.aggregate_interval=0.7"])
    a = r.aggregate
    assert list(a.columns) == ["time_s", "rate_pps"] and len(a) == pytest.approx(30 / 0.7, abs=1)
    assert np.diff(a["time_s"]).mean() == pytest.approx(0.7, rel=1e-9)
    # The summary's statistics are those of the samples after the warm-up (std with n − 1).
    s = r.summary["aggregate"]
    window = a[a["time_s"] >= r.summary["measured_from_s"]]["rate_pps"]
    assert s["samples"] == len(window)
    assert s["mean_pps"] == pytest.approx(window.mean(), rel=1e-12)
    assert s["cv"] == pytest.approx(window.std(ddof=1) / window.mean(), rel=1e-9)
    r.write(tmp_path / "out", figure=False)
    assert (tmp_path / "out" / "aggregate.parquet").is_file()
    pd.testing.assert_frame_equal(lossync.Result.read(tmp_path / "out").aggregate, a)


def test_the_cli_prints_the_aggregate_line(examples):
    p = subprocess.run([sys.executable, "-m", "lossync", "run", str(examples / "obs-dumbbell.toml"), "--set",
                        "run.duration=25", "--set", "run.warmup=5", "--set", "run.aggregate_interval=0.7"],
                       capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr
    assert "aggregate cwnd/RTT every 0.7 s" in p.stdout


def test_without_sampling_the_aggregate_is_empty(examples, tmp_path):
    r = lossync.run(examples / "dumbbell-reno.toml", ["run.duration=10", "run.warmup=2"])
    assert r.aggregate.empty and "aggregate" not in r.summary
    r.write(tmp_path / "out", figure=False)
    assert not (tmp_path / "out" / "aggregate.parquet").exists()


def test_sync_out_and_drops_into_a_new_folder_create_it(examples, tmp_path):
    # As --out does; before, the run finished and the write failed with a traceback.
    m_csv, drops = tmp_path / "new" / "m.csv", tmp_path / "other" / "d.csv"
    p = subprocess.run([sys.executable, "-m", "lossync", "run", str(examples / "obs-dumbbell.toml"), "--set",
                        "run.duration=25", "--set", "run.warmup=5", "--sync-out", str(m_csv), "--drops", str(drops)],
                       capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr
    assert pd.read_csv(m_csv).columns.tolist() == ["m", "count"] and len(pd.read_csv(drops)) > 0


def test_the_studies_contention_is_the_seeds_2_percent_on_one_wavelength():
    """obs-sync's and obs-multiqueue's contention runs: one 10 Gb/s wavelength (the seed's NSFnet
    links) whose background loses a sparse burst with Erlang B's A/(1+A) = the seed's 2%, held for
    NSFnet's mean 1 ms burst (17.6 segments of 1000 B at 10 Gb/s, obs-stats); measured in a short
    run of the study's scenario: about 2% of the edge's bursts lost, and the run's document holds
    contention in place of Bernoulli loss."""
    from lossync.studies.obs import CONTENTION, long_lived, obs_edge

    a = CONTENTION["background"]
    assert CONTENTION["wavelengths"] == 1 and a / (1 + a) == pytest.approx(0.02, rel=1e-12)
    assert CONTENTION["background_burst"] == f"{round(17.6 * 8000 / 10e9 * 1e6)}us"
    doc = obs_edge({"timer": "1ms", "policy": "per_flow"}, long_lived(10), 60.0, 20.0, loss="contention")
    link = doc["links"][0]
    assert "burst_loss" not in link and link["contention"] == CONTENTION
    b = next(x for x in lossync.run(doc).summary["links"] if x["name"] == "obs")["bursts"]
    # The edge's own bursts hold the wavelength part of the time and block some background.
    assert 0.015 < b["loss_rate"] < 0.02 + 3 * b["loss_rate_se"], b
