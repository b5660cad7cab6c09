"""lossync.compare: one scenario in several engines, side by side."""


import pytest

from lossync.compare import compare, relative_share_error

DOC = {
    "dumbbell": {"capacity": "100Mbps", "buffer": {"bdp_fraction": 0.25}},
    "flows": [{"count": 2, "cc": "reno", "rtt": "40ms"}, {"count": 2, "cc": "cubic", "rtt": "40ms"}],
    "run": {"duration": "60s", "warmup": "20s"},
}


def test_rows_per_engine_and_differences_from_the_packet_engine():
    df = compare(DOC, ["fluid:tcp", "packet", "fluid:proportional"])
    assert list(df.index) == ["fluid:tcp", "packet", "fluid:proportional"]
    assert df.loc["packet", "d.utilization"] == 0.0
    for e in df.index:
        assert df.loc[e, "d.utilization"] == pytest.approx(df.loc[e, "utilization"] - df.loc["packet", "utilization"])
        # Shares of the two variants add up to one.
        assert df.loc[e, "share.reno"] + df.loc[e, "share.cubic"] == pytest.approx(1.0)
    assert relative_share_error(df.loc["packet"], df.loc["packet"]) == 0.0


def test_unknown_fluid_model_is_refused_by_name():
    with pytest.raises(ValueError, match="unknown fluid loss model 'nope'"):
        compare(DOC, ["packet", "fluid:nope"])
