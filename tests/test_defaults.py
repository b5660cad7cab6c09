"""Defaults as a TCP user expects them (issue: `slow_start = false` was the default, so a bare
scenario at 100 Gb/s crept up by one packet per RTT and never met congestion)."""

import math
import re
from pathlib import Path

import pytest

import lossync

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"

CAPACITY_BPS, RTT_S, FLOWS, PACKET_BYTES = 100e9, 0.010, 10, 1500


def bare(engine: str) -> dict:
    """A scenario that says nothing about start-up: no `slow_start`, no `initial_window`."""
    return {
        "engine": engine,
        "dumbbell": {"capacity": "100Gbps", "buffer": {"bdp_fraction": 0.25}},
        "flows": [{"count": FLOWS, "cc": "cubic", "rtt": "10ms"}],
        "run": {"duration": "0.5s", "warmup": "0s", "from_first_congestion": True},
    }


def slow_start_rounds() -> int:
    """Round trips for slow start (RFC 5681 §3.1: the window doubles each RTT without delayed
    ACKs) from the initial window of RFC 6928, 10 packets per flow, to fill the pipe and the
    buffer: log2((BDP + B) / (N · IW))."""
    bdp_pkts = CAPACITY_BPS * RTT_S / (8 * PACKET_BYTES)
    return math.ceil(math.log2(1.25 * bdp_pkts / (FLOWS * 10)))


@pytest.mark.parametrize("engine", ["fluid", "packet"])
def test_a_bare_scenario_slow_starts_into_congestion(engine):
    r = lossync.run(bare(engine), warn=False)
    flow = r.scenario["flows"][0]
    assert flow["slow_start"] is True and flow["initial_window_pkts"] == 10
    # The first congestion event (the window's start) within the closed form's rounds, plus two
    # RTTs for the queue's own delay and the loss's detection; without slow start it takes
    # ~(BDP/N)·RTT = 8 minutes.
    first_s = r.summary["measured_from_s"]
    assert 0 < first_s <= (slow_start_rounds() + 2) * RTT_S, (first_s, slow_start_rounds())
    assert r.summary["congestion_events"] >= 1


def test_every_shipped_example_states_its_start_up():
    """The seed paper's setups have no slow start; each example that follows them says so."""
    for path in sorted(EXAMPLES.glob("*.toml")):
        text = path.read_text()
        groups = text.count("[[flows]]")
        if groups == 0:
            continue  # a sweep: its base is an example
        stated = len(re.findall(r"^slow_start = (true|false)", text, re.M))
        assert stated == groups, f"{path.name}: {stated} of {groups} flow groups state slow_start"
