"""scripts/heldout.py: the held-out cells cover the scenario space issue 34 asks for, from a seed,
and every one is a scenario both engines accept."""

import importlib.util
import sys
from pathlib import Path

import numpy as np

from lossync.comparison import with_send_jitter
from lossync.engines import check

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))
_spec = importlib.util.spec_from_file_location("heldout", ROOT / "scripts" / "heldout.py")
heldout = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(heldout)


def test_a_seed_draws_the_same_cells_and_another_seed_other_cells():
    rng = lambda s: np.random.default_rng(s)  # noqa: E731
    a = [heldout.draw_cell(rng(5)) for _ in range(3)]
    assert a == [heldout.draw_cell(rng(5)) for _ in range(3)]
    assert heldout.draw_cell(rng(5)) != heldout.draw_cell(rng(6))


def test_the_draws_span_the_issues_ranges():
    # Issue 34, build item 3: every variant, delayed ACKs on and off, slow start or not, access
    # links, start spreads, 2-200 flows, 10 Mb/s - 100 Gb/s, 1-200% BDP, RTT spreads to 1:20.
    rng = np.random.default_rng(1)
    cells = [heldout.draw_cell(rng) for _ in range(2000)]
    variants = {v for c in cells for v in c["variant"].split("+")}
    assert variants == set(heldout.VARIANTS)
    assert {c["delayed_ack"] for c in cells} == {True, False}
    assert {c["slow_start"] for c in cells} == {True, False}
    assert any(c["access_share"] is not None for c in cells) and any(c["access_share"] is None for c in cells)
    assert any(c["start_spread_rtts"] > 0 for c in cells) and any(c["start_spread_rtts"] == 0 for c in cells)
    flows = [c["flows"] for c in cells]
    assert min(flows) == 2 and 190 <= max(flows) <= 200
    cap = [c["capacity_bps"] for c in cells]
    assert 1e7 <= min(cap) < 1.5e7 and 7e10 < max(cap) <= 1e11
    buf = [c["buffer"] for c in cells]
    assert min(buf) < 0.012 and 1.8 < max(buf) <= 2.0
    ratio = [c["rtt_ms"][1] / c["rtt_ms"][0] for c in cells]
    assert min(ratio) == 1.0 and 15 < max(ratio) <= 20.0
    assert any(c["params"][0] for c in cells) and any(not c["params"][0] for c in cells)


def test_every_drawn_cell_is_a_scenario_both_engines_accept():
    cells, redrawn = heldout.draw(3, 40, budget_s=20.0)
    assert len(cells) == 40
    for _, doc in cells:
        check(dict(doc, engine="fluid"))
        check(dict(with_send_jitter(doc), engine="packet"))
        run = doc["run"]
        assert float(run["duration"][:-1]) > float(run["warmup"][:-1]) > 0


def test_two_small_cells_run_in_both_engines_and_are_scored():
    rng = np.random.default_rng(11)
    cell = dict(heldout.draw_cell(rng), variant="reno", params=[{}], flows=4, capacity_bps=2e7, rtt_ms=[20.0, 40.0],
                rtt="spread", buffer=0.5, access_share=None, start_spread_rtts=0.0, slow_start=True, index=0)
    doc = heldout.cell_doc(cell)
    doc["run"] = {"duration": "20s", "warmup": "5s", "record_interval": "1s"}
    rows = heldout.run_cell(cell, doc, heldout.ENGINES)
    assert [r["engine"] for r in rows] == heldout.ENGINES and not [r for r in rows if "error" in r]
    df = heldout.frame(rows)
    assert len(df) == 1 and abs(df["du"].iloc[0]) < 0.05
    text = "\n".join(heldout.section(0, rows, {}))
    assert "dU within 3 pt" in text and "| 0 | reno |" in text


def test_cells_with_a_few_packets_per_flow_run_long_enough_for_their_timeouts():
    # 41 Reno flows share 10.6 packets of pipe and 2 of buffer: 0.3 packets each. Their losses end
    # in timeouts, and their start in the initial 1 s RTO (RFC 6298 §2.1), backed off: the run
    # used to be 0.84 s long, all of it that transient (the packet engine's U 0.17 then, 0.39
    # after 31 s).
    cell = {"variant": "reno", "params": [{}], "flows": 41, "capacity_bps": 3.19e7, "rtt_ms": [4.08, 4.08],
            "rtt": "equal", "buffer": 0.184, "delayed_ack": True, "slow_start": True, "initial_window": 14,
            "access_share": None, "start_spread_rtts": 0.0}
    assert heldout.fair_window_pkts(cell) < heldout.TIMEOUT_WINDOW_PKTS
    run = heldout.cell_doc(cell)["run"]
    warmup_s, duration_s = float(run["warmup"][:-1]), float(run["duration"][:-1])
    assert warmup_s >= 1 + 2 + 4 + 8 + 16
    assert duration_s - warmup_s >= 50 * (0.2 + 4.08e-3)
    # Windows of tens of packets keep the runs their epochs give them.
    big = dict(cell, flows=2, capacity_bps=1e9)
    assert heldout.fair_window_pkts(big) > heldout.TIMEOUT_WINDOW_PKTS
    assert float(heldout.cell_doc(big)["run"]["warmup"][:-1]) < 1
