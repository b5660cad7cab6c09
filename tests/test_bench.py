"""`lossync bench --suite`'s parts: each case is a valid scenario, and a case measured in a
process of its own reports the work its scenario implies."""

import subprocess
import sys

from lossync.bench import fluid_cases, fluid_dumbbell, measure, packet_cases
from lossync.engines import check


def test_a_case_is_measured_in_a_process_of_its_own():
    m = measure(fluid_dumbbell(100, 1.0))
    # 1 s in steps of 1 ms (the default step for a 100 ms RTT, docs/scenario.md), 100 flows.
    assert m["flow_updates"] == 100 * 1000 and m["flows"] == 100
    assert m["setup_s"] > 0 and m["simulate_s"] > 0 and m["summary_s"] > 0
    # Python, numpy, pandas and the library: tens of MB, not the parent's memory.
    assert 20e6 < m["max_rss_bytes"] < 1e9


def test_every_suite_case_is_a_scenario_its_engine_accepts():
    cases = [doc for _, doc in packet_cases(quick=True)] + [doc for _, doc in fluid_cases(quick=True)]
    for doc in cases:
        check(doc)
    # 10 Reno flows whose windows sum to 1.2 BDP: 1 Gb/s, 100 ms, 1500 B is 8,333 packets.
    loaded = packet_cases(quick=True)[0][1]["flows"][0]
    assert loaded["rwnd"] == {"packets": 1000} and loaded["initial_window"] == 1000


def test_suite_options_go_with_suite():
    r = subprocess.run([sys.executable, "-m", "lossync", "bench", "--quick"], capture_output=True, text=True)
    assert r.returncode == 2 and r.stderr.strip() == "lossync: error: --quick: goes with --suite"
