"""The ns-3 engine (python/lossync/engines/ns3/): the same dumbbell in ns-3 agrees with the packet engine, holds
exactly B packets at the bottleneck, and refuses what it cannot translate. Skipped when the
optional `ns3` wheel is not installed (pip install 'lossync[ns3]')."""

import pytest

pytest.importorskip("ns3")

import lossync
from lossync.engines.ns3 import run_ns3, run_ns3_with_stats


def reno(buffer, count=1, duration="70s", warmup="10s", **link):
    return {
        "dumbbell": {"capacity": "10Mbps", "buffer": buffer, **link},
        "flows": [{"count": count, "cc": "reno", "rtt": "100ms", "slow_start": True}],
        "run": {"duration": duration, "warmup": warmup},
    }


def test_one_reno_flow_matches_the_packet_engine():
    doc = reno({"bdp_fraction": 0.25})
    ns3, stats = run_ns3_with_stats(doc)
    packet = lossync.run(dict(doc, engine="packet"))
    s = ns3.summary
    assert s["engine"] == "ns3" and s["measured_from_s"] == 10.0
    # Same keys as the packet engine, at every level.
    assert s.keys() == packet.summary.keys()
    assert s["links"][0].keys() == packet.summary["links"][0].keys()
    assert s["flows"][0].keys() == packet.summary["flows"][0].keys()
    assert list(ns3.series.columns) == list(packet.series.columns)
    assert list(ns3.events.columns) == list(packet.events.columns)
    assert s["congestion_events"] > 3 and len(ns3.drops) > 0
    assert s["utilization"] == pytest.approx(packet.summary["utilization"], abs=0.03)
    # IP packets are packet_size bytes (+2 of PPP on the wire), and nothing drops elsewhere.
    assert stats.max_wire_bytes == 1502 and stats.other_drops == 0
    # Whole-run packet conservation at the bottleneck.
    link = s["links"][0]
    assert link["arrivals_pkts"] == link["departures_pkts"] + link["drops_pkts"] + link["queue_end_pkts"] - link["queue_start_pkts"]


def test_exactly_b_packets_at_the_bottleneck():
    r, stats = run_ns3_with_stats(reno({"packets": 7}, count=3, duration="15s", warmup="0s"))
    link = r.summary["links"][0]
    assert link["drops_pkts"] > 0 and stats.other_drops == 0
    assert link["max_queue_pkts"] == 7
    assert r.series["queue_pkts.bottleneck"].max() <= 7


def test_red_runs_within_the_buffer():
    doc = reno({"packets": 60}, count=3, duration="15s", warmup="0s",
               queue={"discipline": "red", "min_th": 10, "max_th": 30})
    r, stats = run_ns3_with_stats(doc)
    link = r.summary["links"][0]
    assert stats.other_drops == 0 and link["drops_pkts"] > 0
    assert link["max_queue_pkts"] <= 60


@pytest.mark.parametrize("pacing", [False, True])
def test_pacing_translates(pacing):
    # Four Reno flows through a 5-packet buffer: unpaced slow-start and ACK-clocked bursts
    # overflow it (U ≈ 0.4 in both engines); paced, utilization roughly doubles in both.
    doc = {
        "dumbbell": {"capacity": "10Mbps", "buffer": {"packets": 5}},
        "flows": [{"count": 4, "cc": "reno", "rtt": "80ms..140ms", "slow_start": True, "pacing": pacing}],
        "run": {"duration": "40s", "warmup": "10s"},
    }
    ns3 = run_ns3(doc).summary["utilization"]
    packet = lossync.run(dict(doc, engine="packet")).summary["utilization"]
    assert ns3 == pytest.approx(packet, abs=0.06)
    assert (ns3 > 0.75) == pacing


def test_two_links_are_refused_naming_the_field():
    doc = {
        "links": [
            {"name": "a", "capacity": "10Mbps", "buffer": {"packets": 20}},
            {"name": "b", "capacity": "10Mbps", "buffer": {"packets": 20}},
        ],
        "flows": [{"cc": "reno", "rtt": "100ms", "path": ["a", "b"]}],
    }
    with pytest.raises(lossync.ScenarioError, match=r"^links: "):
        run_ns3(doc)


@pytest.mark.parametrize(
    ("flow", "field"),
    [
        ({"cc": "reno", "rtt": "100ms", "rwnd": {"packets": 30}}, r"^flows\[0\]\.rwnd: "),
        ({"cc": {"variant": "reno", "a": 2}, "rtt": "100ms"}, r"^flows\[0\]\.cc\.a: "),
        ({"cc": {"variant": "scalable", "a": 0.03}, "rtt": "100ms"}, r"^flows\[0\]\.cc\.a: "),
        ({"cc": "reno", "rtt": "100ms", "pacing": {"ss_ratio": 1.2345}}, r"^flows\[0\]\.pacing\.ss_ratio: "),
        ({"cc": "reno", "rtt": "100ms", "parallel": 2}, r"^flows\[0\]\.parallel: "),
        ({"cc": "reno", "rtt": "100ms", "direction": "reverse"}, r"^dumbbell\.reverse: "),
        ({"cc": "ghstcp", "rtt": "100ms"}, r"^flows\[0\]\.cc: "),
    ],
)
def test_untranslatable_fields_are_refused(flow, field):
    doc = {"dumbbell": {"capacity": "10Mbps", "buffer": {"packets": 20}}, "flows": [flow]}
    with pytest.raises(lossync.ScenarioError, match=field):
        run_ns3(doc)


def test_aggregate_sampling_is_refused_not_left_empty():
    doc = {"dumbbell": {"capacity": "10Mbps", "buffer": {"packets": 20}}, "flows": [{"cc": "reno", "rtt": "100ms"}],
           "run": {"aggregate_interval": "0.7s"}}
    with pytest.raises(lossync.ScenarioError, match=r"^run\.aggregate_interval: "):
        run_ns3(doc)


def test_an_xcp_router_is_refused():
    doc = {"dumbbell": {"capacity": "10Mbps", "buffer": {"packets": 20}, "queue": {"discipline": "xcp"}},
           "flows": [{"cc": "xcp", "rtt": "100ms"}]}
    with pytest.raises(lossync.ScenarioError, match=r"^links\[0\]\.queue: "):
        run_ns3(doc)


def test_delayed_acks_and_access_rates_translate():
    from lossync.engines.ns3 import _resolve, translate

    doc = {"dumbbell": {"capacity": "10Mbps", "buffer": {"packets": 20}},
           "flows": [{"cc": "reno", "rtt": "100ms", "delayed_ack": {"count": 2, "timeout": "40ms"}, "access_capacity": "5Mbps"}]}
    params = translate(_resolve(doc, (), None))
    assert "delack_count 2\n" in params and "delack_timeout 0.04\n" in params
    assert "@access_bps=5000000.0" in params


def test_a_wall_time_limit_stops_the_run_and_reports_how_far_it_got():
    r, st = run_ns3_with_stats(reno({"packets": 20}, duration="100000s", warmup="0s"), wall_limit_s=2)
    assert 0 < st.sim_s < 100000 and st.wall_s < 60
    assert r.summary["duration_s"] == pytest.approx(st.sim_s)
