"""Measurements within physics, one definition for every engine (docs/model.md §5). Each case
here printed a wrong number with exit status 0 before: a flow above its link's capacity, a
synchronization fraction of 41.5, a loss of 0 beside flows losing everything, Jain's index 1 for
no data at all; or gave each engine its own congestion-event window."""

from pathlib import Path

import pytest

import lossync

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
SHORT = ["run.duration=2", "run.warmup=1", "run.from_first_congestion=false"]


def _worst_link_share(r) -> float:
    """The largest, over links, of the throughput of the flows crossing a link over its capacity."""
    sc, s = r.scenario, r.summary
    worst = 0.0
    for li, link in enumerate(sc["links"]):
        logical = {f["logical"] for f in sc["flows"] if li in f["path"]}  # parallel connections report as one
        worst = max(worst, sum(s["flows"][i]["throughput_pps"] for i in logical) / link["capacity_pps"])
    return worst


# Before: flow 0 at 12.06 Mb/s on a 10 Mb/s link (RED, 1 s window); the shipped examples' flows
# summed to 1.07-1.11 times a link's capacity in short runs. A retransmission that filled a hole
# counted the packets behind it, which had crossed before the window.
RED = ["dumbbell.capacity=10Mbps", "dumbbell.buffer={packets=35}",
       'dumbbell.queue={discipline="red", min_th=20, max_th=30, max_p=1.0, gentle=true}',
       "run.duration=2", "run.warmup=1", "run.seed=806"]


@pytest.mark.parametrize("engine", ["packet", "fluid"])
@pytest.mark.parametrize(("example", "extra"), [("dumbbell-reno", RED), ("ghstcp-vs-reno", SHORT), ("nsfnet", SHORT),
                                                 ("parking-lot", SHORT), ("parking-lot-4", SHORT)])
def test_the_flows_crossing_a_link_never_sum_above_its_capacity(example, extra, engine):
    r = lossync.run(EXAMPLES / f"{example}.toml", [*extra, f'engine="{engine}"'])
    assert _worst_link_share(r) <= 1 + 1e-9


def test_a_flow_counts_each_packet_once_whatever_the_seed():
    # The class, not one seed: short RED runs of ten seeds.
    for seed in range(10):
        r = lossync.run(EXAMPLES / "dumbbell-reno.toml", [*RED[:-1], f"run.seed={seed}", 'engine="packet"'])
        assert _worst_link_share(r) <= 1 + 1e-9, seed


DYNAMIC = ["dumbbell.capacity=10Mbps", "dumbbell.buffer={packets=3}", "run.seed=996"]


def test_dynamic_traffic_synchronization_is_a_fraction():
    # Before: sync_rate_mean 41.5. Flows that started during an event are its candidates too.
    r = lossync.run(EXAMPLES / "dynamic-dumbbell.toml", [*DYNAMIC, "run.duration=2", "run.warmup=0"])
    s = r.summary
    assert s["congestion_events"] >= 1
    assert 0 < s["sync_rate_mean"] <= 1
    for e in r.events.itertuples():
        assert e.lost <= e.candidates


def test_drops_that_never_pause_are_said_to_be_one_event_not_an_idle_link():
    # Before: 52% loss, congestion_events 0 and a warning that the link was uncongested.
    r = lossync.run(EXAMPLES / "dynamic-dumbbell.toml", [*DYNAMIC, "run.duration=30", "run.warmup=5"])
    s = r.summary
    assert s["loss_rate"] > 0.3 and s["congestion_events"] == 0
    said = [w for w in s["warnings"] if "never paused" in w]
    assert len(said) == 1 and "one congestion event spans the whole window" in said[0]
    assert not any("uncongested" in w for w in s["warnings"]), s["warnings"]


@pytest.mark.parametrize("engine", ["fluid", "packet"])
def test_a_lost_burst_is_the_links_loss_and_the_headlines(engine):
    # Before: headline loss_rate 0.0 while every flow's was 1.0, and 0 with the shipped 2%.
    r = lossync.run(EXAMPLES / "obs-dumbbell.toml", ["links.0.burst_loss=1.0", "run.duration=20", "run.warmup=2", f'engine="{engine}"'])
    assert r.summary["loss_rate"] == pytest.approx(1.0)
    assert all(f["loss_rate"] == pytest.approx(1.0) for f in r.summary["flows"])
    s = lossync.run(EXAMPLES / "obs-dumbbell.toml", ["run.duration=40", f'engine="{engine}"']).summary
    burst = s["links"][0]["bursts"]["loss_rate"]  # the shipped burst loss is 2%
    assert s["loss_rate"] >= burst * 0.9 and 0.01 < s["loss_rate"] < 0.05


def test_jain_is_undefined_when_no_flow_delivered_anything():
    # Before: Jain 1.0 for 0/0. RTT 60 s in a 20 s run: no packet reaches a receiver.
    r = lossync.run(EXAMPLES / "dumbbell-reno.toml", ['engine="packet"', 'flows.0.rtt="60s"', "flows.0.count=2",
                                                      "run.duration=20", "run.warmup=0", "run.from_first_congestion=false"])
    assert any("Jain's index is undefined" in w for w in r.summary["warnings"])
    assert r.summary["jain"] is None or r.summary["jain"] != r.summary["jain"]  # NaN (null in JSON)


def _mean_rtt_crossing(sc, li) -> float:
    rtts = [f["rtt_s"] for f in sc["flows"] if li in f["path"]] or [f["rtt_s"] for f in sc["flows"]]
    return sum(rtts) / len(rtts)


UNEQUAL = ["flows.0.rtt=0.2", "flows.1.rtt=0.03", "flows.2.rtt=0.06"]  # the long flow's RTT 2-7 times the others'


@pytest.mark.parametrize("engine", ["fluid", "packet"])
@pytest.mark.parametrize(("example", "extra"), [("nsfnet", ["run.duration=60"]), ("parking-lot", ["run.duration=120", *UNEQUAL])])
def test_every_engine_uses_each_links_own_congestion_event_window(example, extra, engine):
    """τ on a link is the mean base RTT of the flows crossing it (docs/model.md §5.3), in every
    engine: consecutive events on a link start at least τ apart. Before, the packet engine and
    the ns-3 and kernel drivers took the mean over every flow of the network, so on a link whose
    flows have long RTTs events closer than its τ were counted apart."""
    r = lossync.run(EXAMPLES / f"{example}.toml", [*extra, "run.warmup=0", "run.from_first_congestion=false", f'engine="{engine}"'])
    sc, events = r.scenario, r.events
    checked = 0
    for li in range(len(sc["links"])):
        starts = sorted(events[events["link"] == li]["start_s"])
        if len(starts) < 2:
            continue
        tau = _mean_rtt_crossing(sc, li)
        assert min(b - a for a, b in zip(starts, starts[1:])) >= tau - 1e-9, (sc["links"][li]["name"], tau)
        checked += 1
    assert checked >= 2


@pytest.mark.parametrize(("buffer", "whole"), [(10.4, 10), (0, 1)])
def test_the_summary_reports_the_buffer_each_engine_held(buffer, whole):
    # Before: every engine reported the scenario's fractional buffer; the packet engine held
    # round(B) packets (at least the one in service), ns-3 the same by its own code, the kernel
    # round(B), refusing the bufferless link. Now one rule (the core's), and the summary says
    # what was held.
    over = [f"dumbbell.buffer={{packets={buffer}}}", "run.duration=5", "run.warmup=0"]
    packet = lossync.run(EXAMPLES / "dumbbell-reno.toml", [*over, 'engine="packet"']).summary
    fluid = lossync.run(EXAMPLES / "dumbbell-reno.toml", [*over, 'engine="fluid"']).summary
    assert packet["links"][0]["buffer_pkts"] == whole
    assert fluid["links"][0]["buffer_pkts"] == pytest.approx(buffer)
    from lossync.engines.kernel.translate import plan

    sc = lossync.resolve(EXAMPLES / "dumbbell-reno.toml", [*over, 'dumbbell.capacity="10Mbps"', 'flows.0.cc="reno"'])
    assert plan(sc, force=False).buffer_pkts == whole


@pytest.mark.parametrize("engine", ["fluid", "packet"])
def test_every_counter_a_summary_shows_covers_the_measurement_window(engine):
    # Before: a link's arrivals, departures and drops covered the whole run (warm-up included)
    # beside a loss rate and utilization over the window, so they did not divide into each other.
    s = lossync.run(EXAMPLES / "dumbbell-reno.toml", ["run.duration=60", "run.warmup=20", "run.from_first_congestion=false",
                                                       f'engine="{engine}"']).summary
    link = s["links"][0]
    assert s["measured_from_s"] == 20
    assert link["loss_rate"] == pytest.approx(link["drops_pkts"] / link["arrivals_pkts"], rel=1e-12)
    stored = link["queue_end_pkts"] - link["queue_start_pkts"]
    assert link["arrivals_pkts"] == pytest.approx(link["departures_pkts"] + link["drops_pkts"] + stored, rel=1e-9)
    # What left the queue in the window is what the link sent in it, within the packet in service
    # at each edge.
    span = s["duration_s"] - s["measured_from_s"]
    sent = link["utilization"] * link["capacity_bps"] / (8 * 1500) * span
    assert abs(link["departures_pkts"] - sent) <= 2
