"""Every shipped example runs (shortened), as ns-3 runs its examples as tests."""

from pathlib import Path

import pytest

import lossync

EXAMPLES = sorted(p for p in (Path(__file__).resolve().parent.parent / "examples").glob("*.toml") if not p.name.startswith("sweep-"))


@pytest.mark.parametrize("path", EXAMPLES, ids=[p.stem for p in EXAMPLES])
def test_example_runs(path):
    r = lossync.run(path, ["run.duration=120", "run.warmup=0", "run.from_first_congestion=false"])
    assert 0 < r.summary["utilization"] <= 1 + 1e-9
    assert 0 < r.summary["jain"] <= 1 + 1e-9


def test_default_scenario_is_the_papers_case():
    sc = lossync.resolve(lossync.default_scenario_path())
    link = sc["links"][0]
    assert link["capacity_bps"] == 10e9
    # BDP 141,667 packets of 1500 B at 170 ms (docs/model.md §4.5); buffer 10% of it.
    assert link["buffer_pkts"] == pytest.approx(14166.67, rel=1e-4)
    assert [round(f["rtt_s"], 3) for f in sc["flows"]] == [round(0.08 + 0.02 * k, 3) for k in range(10)]


def test_empirical_synchronization_follows_the_csv():
    # Every event's number of losing flows is one of the CSV's m values.
    r = lossync.run(EXAMPLES[0].parent / "empirical-sync.toml")
    hist = r.summary["links"][0]["sync_histogram"]
    assert sum(hist) == r.summary["congestion_events"] > 5
    assert {m for m, n in enumerate(hist) if n} <= {2, 3, 4, 5, 6, 8}
