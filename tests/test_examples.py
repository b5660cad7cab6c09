"""Every shipped example runs (shortened), as ns-3 runs its examples as tests, and is checked against
something outside the engine that ran it: conservation of packets at every link, in the fluid and
the packet engine; the closed form where one exists; the CSV an empirical run must follow."""

from pathlib import Path

import pytest

import lossync

EXAMPLES = sorted(p for p in (Path(__file__).resolve().parent.parent / "examples").glob("*.toml") if not p.name.startswith("sweep-"))
SHORT = ["run.duration=40", "run.warmup=0", "run.from_first_congestion=false"]


def _conservation(result):
    """Per link, over the whole run: arrivals = departures + drops + (queue at end - at start).
    The fluid engine integrates rates (tolerance: rounding of ~1e7 packet sums); the packet engine
    counts packets (exact)."""
    for link in result.summary["links"]:
        arrived, departed, dropped = link["arrivals_pkts"], link["departures_pkts"], link["drops_pkts"]
        stored = link["queue_end_pkts"] - link["queue_start_pkts"]
        assert arrived > 0, link["name"]
        assert arrived == pytest.approx(departed + dropped + stored, rel=1e-9, abs=1e-6), link["name"]
        assert link["max_queue_pkts"] <= link["buffer_pkts"] + 1 + 1e-9, link["name"]


def _deliveries_match_departures(result):
    """At a link that is the last hop of every flow crossing it, the flows' deliveries equal the
    link's departures, up to the packets still between the link and the receivers (at most one
    RTT's worth at capacity)."""
    sc, s = result.scenario, result.summary
    span = s["duration_s"] - s["measured_from_s"]
    for index, link in enumerate(sc["links"]):
        crossing = [f for f in sc["flows"] if index in f["path"]]
        if not crossing or any(f["path"][-1] != index for f in crossing):
            continue
        logical = {f["logical"] for f in crossing}  # parallel connections report as one flow
        delivered = sum(s["flows"][i]["throughput_pps"] for i in logical) * span
        departed = s["links"][index]["utilization"] * link["capacity_pps"] * span
        in_flight = link["capacity_pps"] * max(f["rtt_s"] for f in crossing) + 10
        assert abs(delivered - departed) <= in_flight, (link["name"], delivered, departed)


@pytest.mark.parametrize("engine", ["fluid", "packet"])
@pytest.mark.parametrize("path", EXAMPLES, ids=[p.stem for p in EXAMPLES])
def test_example_conserves_packets(path, engine):
    overrides = [*SHORT, f'engine="{engine}"']
    bursts = [i for i, link in enumerate(lossync.resolve(path)["links"]) if "assembler" in link]
    dynamic = [f["group"] for f in lossync.resolve(path)["flows"] if f.get("arrivals")]
    if engine == "fluid" and dynamic:
        # Dynamic traffic (flows that arrive and finish) is the packet engine's alone too.
        with pytest.raises(lossync.LossyncError) as info:
            lossync.run(path, overrides)
        assert info.value.field == f"flows[{dynamic[0]}].arrivals"
        return
    if engine == "packet" and lossync.resolve(path)["links"][0]["capacity_bps"] > 1e9:
        overrides.append('dumbbell.capacity="1Gbps"')  # the 10 Gb/s cases: same shape, fewer packets
        overrides.append("run.duration=10")
    r = lossync.run(path, overrides)
    _conservation(r)
    _deliveries_match_departures(r)
    for i in bursts if engine == "packet" else []:  # the fluid's bursts have no packets to count
        b = r.summary["links"][i]["bursts"]
        assert b["arrivals_pkts"] == b["forwarded_pkts"] + b["lost_pkts"] + b["held_end_pkts"] - b["held_start_pkts"]
        assert b["bursts"] > 0
    assert 0 < r.summary["utilization"] <= 1
    if dynamic and len(dynamic) == len(lossync.resolve(path)["flows"]):
        assert r.summary["jain"] is None  # pool slots only: their measure is the FCT, not Jain's index
    else:
        assert 0 < r.summary["jain"] <= 1


@pytest.mark.parametrize("engine", ["fluid", "packet"])
def test_single_reno_flow_meets_the_closed_form(engine):
    # One Reno flow, synchronized by construction, buffer ρ = 0.1 BDP: the sawtooth between
    # (1+ρ)P/2 and (1+ρ)P gives U = 3/4 (1+ρ)²/(1+ρ+ρ²) (docs/model.md §4.2).
    rho = 0.1
    closed = 0.75 * (1 + rho) ** 2 / (1 + rho + rho * rho)
    r = lossync.run(EXAMPLES[0].parent / "dumbbell-reno.toml", [f'engine="{engine}"'])
    assert r.summary["utilization"] == pytest.approx(closed, abs=0.005)


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


@pytest.mark.parametrize("name", ["parking-lot", "parking-lot-4"])
def test_parking_lot_long_flow_gets_less_and_the_engines_agree_on_the_links(name):
    # The long flow meets every hop's loss and queueing delay: it gets less than each short flow
    # (Floyd 1991). At 100 Mb/s the runs reach steady state in a test's time.
    path = EXAMPLES[0].parent / f"{name}.toml"
    links = lossync.resolve(path)["links"]
    overrides = [*(f'links.{i}.capacity="100Mbps"' for i in range(len(links))), "run.duration=200", "run.warmup=40"]
    runs = {engine: lossync.run(path, [*overrides, f'engine="{engine}"']).summary for engine in ["fluid", "packet"]}
    for engine, s in runs.items():
        long, *short = (f["throughput_pps"] for f in s["flows"])
        assert all(long < x for x in short), (engine, long, short)
    for f, p in zip(runs["fluid"]["links"], runs["packet"]["links"]):
        assert p["utilization"] == pytest.approx(f["utilization"], abs=0.03), f["name"]


def test_nsfnet_runs_in_both_engines_and_they_agree_on_every_link():
    # 41 one-way links, 20 flows of 2 to 5 hops, RED at the access (docs/packet.md, phase effects):
    # every flow gets its share in both engines, and each link's use agrees within 3 points. At the
    # example's own length (120 s, 4 s of CPU): over a 40 s window the half-loaded links, whose
    # flows are bottlenecked elsewhere, were up to 4.6 points apart, from 1.7 at 120 s.
    path = EXAMPLES[0].parent / "nsfnet.toml"
    runs = {engine: lossync.run(path, [f'engine="{engine}"']).summary for engine in ["fluid", "packet"]}
    for engine, s in runs.items():
        assert len(s["links"]) == 41
        assert min(f["throughput_bps"] for f in s["flows"]) > 5e6, engine
    for f, p in zip(runs["fluid"]["links"], runs["packet"]["links"]):
        assert p["utilization"] == pytest.approx(f["utilization"], abs=0.03), f["name"]


def test_each_examples_description_is_a_sentence_or_says_it_is_cut():
    # On main each was its comment's first line, cut mid-sentence ("each behind its own").
    from lossync.scenario import examples

    for name, about in examples():
        assert about.endswith(".") or about.endswith(" …"), (name, about)
        assert len(about) <= 102, (name, about)
