"""The delay series, `queueing_delay_s.<link>` and `rtt_s.<flow>` (fluid and packet engines),
against the closed form of a window-limited flow: with W packets always in flight over a link of
C packets a second that never idles, RTT = W/C and every packet waits W/C - RTT_base in the queue
(Little's law)."""

import math

import pytest

import lossync

WINDOW_LIMITED = """
[dumbbell]
capacity = "10Mbps"
buffer = { packets = 200 }
[[flows]]
cc = "reno"
rtt = "100ms"
rwnd = { packets = 120 }
slow_start = true
[run]
duration = "10s"
"""


@pytest.mark.parametrize("engine", ["packet", "fluid"])
def test_the_delay_series_of_a_window_limited_flow_are_its_closed_form(tmp_path, engine):
    # 120 packets always in flight over a 10 Mb/s link (833.3 packets/s) and a 100 ms base RTT,
    # with room for them all in the buffer: RTT = 144 ms and a wait of 44 ms in the queue.
    sc = tmp_path / "s.toml"
    sc.write_text(WINDOW_LIMITED)
    r = lossync.run(sc, [f'engine="{engine}"'], progress=False, warn=False)
    s = r.series[r.series["time_s"] >= 5]
    rate_pps = 10e6 / (8 * 1500)
    assert s["rtt_s.0"].to_numpy() == pytest.approx(120 / rate_pps, rel=0.01)
    assert s["queueing_delay_s.bottleneck"].to_numpy() == pytest.approx(120 / rate_pps - 0.1, rel=0.03)
    # The same sampling as the other series: one row per record_interval; the first closes no
    # interval, so it has no queueing delay.
    assert len(r.series) == 101 and math.isnan(r.series["queueing_delay_s.bottleneck"].iloc[0])


def test_a_parallel_flow_s_rtt_is_its_connections_mean(tmp_path):
    sc = tmp_path / "s.toml"
    sc.write_text(WINDOW_LIMITED.replace('rwnd = { packets = 120 }', 'rwnd = { packets = 60 }\nparallel = 2'))
    r = lossync.run(sc, ['engine="packet"'], progress=False, warn=False)
    assert [c for c in r.series.columns if c.startswith("rtt_s.")] == ["rtt_s.0"]
    assert r.series[r.series["time_s"] >= 5]["rtt_s.0"].to_numpy() == pytest.approx(0.144, rel=0.01)


def test_delay_columns_are_written_and_read_back(tmp_path):
    sc = tmp_path / "s.toml"
    sc.write_text(WINDOW_LIMITED)
    r = lossync.run(sc, progress=False, warn=False)
    r.write(tmp_path / "out", figure=False)
    back = lossync.Result.read(tmp_path / "out")
    assert {"queueing_delay_s.bottleneck", "rtt_s.0"} <= set(back.series.columns)
    assert back.series.equals(r.series)
