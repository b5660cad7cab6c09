"""The ns-3 engine (python/lossync/engines/ns3/): the same dumbbell in ns-3 agrees with the packet engine, holds
exactly B packets at the bottleneck, and refuses what it cannot translate. Skipped when the
optional `ns3` wheel is not installed (pip install 'lossync[ns3]')."""

import re
import subprocess
import sys

import numpy as np
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
    # The same columns, but the delay series, which only the core's engines record.
    delays = ("queueing_delay_s.", "rtt_s.")
    assert list(ns3.series.columns) == [c for c in packet.series.columns if not c.startswith(delays)]
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
        ({"cc": "reno", "rtt": "100ms", "hystart": "linux"}, r"^flows\[0\]\.hystart: ns-3 runs HyStart in TcpCubic only"),
        ({"cc": "cubic", "rtt": "100ms", "hystart": "rfc9406"}, r"^flows\[0\]\.hystart: ns-3 has no 'rfc9406'"),
        ({"cc": "reno", "rtt": "100ms", "undo": True}, r"^flows\[0\]\.undo: "),
        ({"cc": "reno", "rtt": "100ms", "loss_detection": "rack-tlp"}, r"^flows\[0\]\.loss_detection: "),
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


def test_hystart_is_tcp_cubics_at_linux_constants():
    from lossync.engines.ns3 import _resolve, translate

    def cubic(hystart):
        doc = {"dumbbell": {"capacity": "10Mbps", "buffer": {"packets": 20}},
               "flows": [{"cc": "cubic", "rtt": "100ms", "hystart": hystart}]}
        return translate(_resolve(doc, (), None))

    # tcp_cubic.c (Linux 6.1): low window 16, 8 samples, ACK gap 2 ms, threshold within 4-16 ms.
    on = cubic("linux")
    for attr in ("HyStart=true", "HyStartLowWindow=16", "HyStartMinSamples=8", "HyStartAckDelta=0.002s",
                 "HyStartDelayMin=0.004s", "HyStartDelayMax=0.016s"):
        assert attr in on, on
    assert "HyStart=false" in cubic("off")


def test_cubics_slope_switch_runs_as_tcp_cubic_runs_it_and_says_so():
    # ns-3's TcpCubic keeps 3(1 - beta)/(1 + beta) (an integer tcp_cwnd estimate, no cwnd_prior):
    # both values run; the RFC 9438 switch, lossync's default, is a warning.
    def cubic(**cc):
        doc = {"dumbbell": {"capacity": "10Mbps", "buffer": {"packets": 20}},
               "flows": [{"cc": {"variant": "cubic", **cc}, "rtt": "100ms"}], "run": {"duration": "3s"}}
        return [w for w in run_ns3(doc).summary["warnings"] if "Reno-friendly slope" in w]
    assert cubic() and cubic()[0].startswith("ns3 engine: ns-3's TcpCubic keeps its Reno-friendly slope")
    assert cubic(alpha_switch=False) == []
    # Without the Reno-friendly region (TcpFriendliness off) the switch acts on nothing: no
    # warning (main warned).
    assert cubic(reno_friendly=False) == []


def test_a_wall_time_limit_stops_the_run_and_reports_how_far_it_got():
    r, st = run_ns3_with_stats(reno({"packets": 20}, duration="100000s", warmup="0s"), wall_limit_s=2)
    assert 0 < st.sim_s < 100000 and st.wall_s < 60
    assert r.summary["duration_s"] == pytest.approx(st.sim_s)


# --- AQM and ECN ----------------------------------------------------------------------------


def aqm(queue, cc="reno", count=10, capacity="100Mbps", buffer=None, duration="20s", warmup="5s", **flow):
    return {
        "dumbbell": {"capacity": capacity, "buffer": buffer or {"bdp_fraction": 1.0}, "queue": queue},
        "flows": [{"count": count, "cc": cc, "rtt": "20ms..100ms", "slow_start": True, **flow}],
        "run": {"duration": duration, "warmup": warmup},
    }


def test_sojourn_bins_follow_the_core():
    from lossync.engines.ns3 import sojourn_bins, sojourn_histogram

    # metrics/sojourn.rs: exact below 32 ps, then 16 bins per octave; its bin_of(u64::MAX) is the
    # last of 976 (2^63 - 1 is the largest int64: the octave below, sub-bin 15).
    ps = np.array([0, 1, 31, 32, 33, 34, 63, 64, 100, 5_000_000_000, 2**40, 2**63 - 1])
    assert sojourn_bins(ps).tolist() == [0, 1, 31, 32, 32, 33, 47, 48, 57, 32 + 27 * 16 + 2, 32 + 35 * 16, 975 - 16]

    # Each bin's middle (mid_ps) is within 1/32 of every value in it.
    def mid(i):
        if i < 32:
            return float(i)
        e, sub = (i - 32) // 16 + 5, (i - 32) % 16
        w = 2 ** (e - 4)
        return (16 + sub) * w + w / 2

    rng = np.random.default_rng(1)
    xs = rng.integers(32, 10**13, 2000)
    for x, b in zip(xs, sojourn_bins(xs)):
        assert abs(mid(int(b)) - x) <= x / 32
    h = sojourn_histogram(np.array([5, 5, 40]))
    assert h == {"count": 3, "sum_ps": 50, "bins": [[5, 2], [36, 1]]}


@pytest.mark.parametrize("discipline", ["codel", "pie", "fq_codel"])
def test_aqm_sojourn_matches_the_packet_engine(discipline):
    doc = aqm({"discipline": discipline})
    try:
        lossync.resolve(dict(doc, engine="packet"))
    except lossync.ScenarioError:
        pytest.skip(f"the core has no {discipline} yet")
    r, stats = run_ns3_with_stats(doc)
    packet = lossync.run(dict(doc, engine="packet")).summary
    link = r.summary["links"][0]
    assert stats.other_drops == 0 and link["max_queue_pkts"] <= link["buffer_pkts"]
    # CoDel keeps the standing queue near its 5 ms target, PIE near 15 ms, FQ-CoDel (each flow
    # in its own queue) lower, in both engines (measured, ns-3 and packet: CoDel 6.9 and 7.1 ms,
    # PIE 17.4 and 17.1 ms; FQ-CoDel at 0.5 and 2 BDP 3.4 and 3.0 ms).
    assert link["sojourn_mean_s"] == pytest.approx(packet["links"][0]["sojourn_mean_s"], abs=0.003)
    assert link["sojourn_p50_s"] <= link["sojourn_p99_s"] < 0.1
    assert link["early_drop_rate"] > 0 and link["mark_rate"] == 0
    assert link["early_drop_rate"] + link["overflow_drop_rate"] == pytest.approx(link["loss_rate"], rel=1e-9)
    assert r.summary["utilization"] == pytest.approx(packet["utilization"], abs=0.03)
    # Packet conservation with drops after acceptance (CoDel drops at dequeue).
    assert link["arrivals_pkts"] == link["departures_pkts"] + link["drops_pkts"] + link["queue_end_pkts"] - link["queue_start_pkts"]


def test_dctcp_behind_red_ecn_is_marked_not_dropped():
    # DCTCP's step marking (RFC 8257 §3.1): instantaneous queue (weight 1), K = 20 packets.
    red = {"discipline": "red", "min_th": 20, "max_th": 21, "max_p": 1.0, "weight": 1.0, "gentle": False, "ecn": True}
    doc = aqm(red, cc="dctcp", count=4, capacity="50Mbps", buffer={"packets": 200}, duration="10s", warmup="3s")
    r, stats = run_ns3_with_stats(doc)
    link, flows = r.summary["links"][0], r.summary["flows"]
    assert stats.other_drops == 0
    assert link["mark_rate"] > 0.01 and link["drops_pkts"] == 0
    assert all(f["mark_rate"] > 0 for f in flows)
    assert r.summary["utilization"] > 0.9
    # The queue stays near K (the thresholds hold in the queue disc, 2 below the system's).
    assert link["sojourn_mean_s"] < 30 * 1500 * 8 / 50e6


def test_queue_discs_translate_their_parameters():
    from lossync.engines.ns3 import _queue_disc

    link = {"capacity_bps": 1e8, "queue": {"discipline": "pie", "target": 0.015, "t_update": 0.015, "alpha": 0.125,
                                           "beta": 1.25, "max_burst": 0.15, "ecn": True, "mark_ecnth": 0.1}}
    type_id, attrs, _ = _queue_disc(link, 100, 1500)
    assert type_id == "ns3::PieQueueDisc"
    assert ("MaxSize", "98p") in attrs and ("UseDequeueRateEstimator", "false") in attrs
    assert {("QueueDelayReference", "0.015s"), ("Tupdate", "0.015s"), ("A", "0.125"), ("B", "1.25"),
            ("MaxBurstAllowance", "0.15s"), ("UseEcn", "true"), ("MarkEcnThreshold", "0.1")} <= set(attrs)
    link["queue"] = {"discipline": "fq_codel", "flows": 1024, "quantum": 1514, "target": 0.005, "interval": 0.1, "ecn": False}
    type_id, attrs, defaults = _queue_disc(link, 100, 1500)
    assert type_id == "ns3::FqCoDelQueueDisc" and ("ns3::CoDelQueueDisc::MinBytes", "1500") in defaults
    assert {("Flows", "1024"), ("@quantum", "1514"), ("Target", "0.005s"), ("Interval", "0.1s"), ("UseEcn", "false"),
            ("DropBatchSize", "1")} <= set(attrs)
    link["queue"] = {"discipline": "step", "threshold": 20, "ecn": True}
    type_id, attrs, _ = _queue_disc(link, 100, 1500)
    assert type_id == "ns3::RedQueueDisc"
    assert {("QW", "1.0"), ("MinTh", "19.0"), ("MaxTh", "19.0"), ("Gentle", "false"), ("UseEcn", "true"), ("UseHardDrop", "false")} <= set(attrs)
    link["queue"] = {"discipline": "step", "threshold": 2, "ecn": True}
    with pytest.raises(lossync.ScenarioError, match=r"^links\[0\]\.queue\.threshold: "):
        _queue_disc(link, 100, 1500)
    for q in ({"discipline": "dualpi2"}, {"discipline": "xcp"}):
        link["queue"] = q
        with pytest.raises(lossync.ScenarioError, match=r"^links\[0\]\.queue: .*ns-3 3\.44 has no such queue disc"):
            _queue_disc(link, 100, 1500)
    link["queue"] = {"discipline": "pie", "derandomize": True}
    with pytest.raises(lossync.ScenarioError, match=r"^links\[0\]\.queue\.derandomize: "):
        _queue_disc(link, 100, 1500)


def test_dctcp_behind_step_marking_matches_the_packet_engine():
    # Step marking at K = 20 (ns-3: RED on the instantaneous queue); measured: mark rate 0.118
    # and 0.116, sojourn 3.0 and 3.1 ms (ns-3, packet).
    doc = aqm({"discipline": "step", "threshold": 20}, cc="dctcp", count=4, capacity="50Mbps", buffer={"packets": 200},
              duration="10s", warmup="3s")
    r, stats = run_ns3_with_stats(doc)
    packet = lossync.run(dict(doc, engine="packet")).summary
    link, plink = r.summary["links"][0], packet["links"][0]
    assert stats.other_drops == 0 and link["drops_pkts"] == 0
    assert link["mark_rate"] == pytest.approx(plink["mark_rate"], rel=0.25)
    assert link["sojourn_mean_s"] == pytest.approx(plink["sojourn_mean_s"], rel=0.2)
    assert r.summary["utilization"] == pytest.approx(packet["utilization"], abs=0.03)


@pytest.mark.parametrize("queue", [{"discipline": "dualpi2"}])
def test_disciplines_ns3_lacks_are_refused_naming_the_queue(queue):
    doc = aqm(queue, cc="prague", buffer={"packets": 100})
    try:
        lossync.resolve(dict(doc, engine="packet"))
    except lossync.ScenarioError:
        pytest.skip(f"the core has no {queue['discipline']} yet")
    for run in (run_ns3, lambda d: lossync.run(dict(d, engine="ns3"))):
        with pytest.raises(lossync.ScenarioError, match=r"^(links\[0\]|dumbbell)\.queue: the ns3 engine has no"):
            run(doc)


@pytest.mark.parametrize(
    ("flow", "field"),
    [
        ({"cc": "prague"}, r"^flows\[0\]\.cc: .*no TCP Prague"),
        ({"cc": "bbr3"}, r"^flows\[0\]\.cc: .*BBR v1 only"),
        ({"cc": "dctcp", "ecn": False}, r"^flows\[0\]\.ecn: "),
        ({"cc": {"variant": "bbr", "cwnd_gain": 3}}, r"^flows\[0\]\.cc\.cwnd_gain: "),
        ({"cc": {"variant": "bbr", "drain_gain": 0.5}}, r"^flows\[0\]\.cc\.drain_gain: "),
    ],
)
def test_variants_ns3_lacks_are_refused(flow, field):
    doc = {"dumbbell": {"capacity": "10Mbps", "buffer": {"packets": 20}, "queue": {"discipline": "codel"}},
           "flows": [{"rtt": "100ms", **flow}]}
    with pytest.raises(lossync.ScenarioError, match=field):
        run_ns3(doc)


def test_dctcp_and_bbr_translate():
    from lossync.engines.ns3 import _resolve, translate

    doc = {"dumbbell": {"capacity": "10Mbps", "buffer": {"packets": 20}, "queue": {"discipline": "codel", "ecn": True}},
           "flows": [{"cc": {"variant": "dctcp", "g": 0.125}, "rtt": "100ms"},
                     {"cc": {"variant": "bbr", "bw_window_rounds": 8}, "rtt": "100ms"},
                     {"cc": "cubic", "rtt": "100ms", "ecn": True}]}
    params = translate(_resolve(doc, (), None))
    flows = [line for line in params.splitlines() if line.startswith("flow ")]
    assert flows[0].startswith("flow ns3::TcpDctcp ") and "@ecn=On" in flows[0] and "DctcpShiftG=0.125" in flows[0]
    assert flows[1].startswith("flow ns3::TcpBbr ") and "@ecn=Off" in flows[1] and "BwWindowLength=8" in flows[1]
    assert " 1 200 120 " in flows[1]  # BBR paces
    assert flows[2].startswith("flow ns3::TcpCubic ") and "@ecn=On" in flows[2]
    assert "qdisc_type ns3::CoDelQueueDisc\n" in params and "qdisc_attr UseEcn true\n" in params


# --- Progress and wall-time limits (issue 32, item 3) ------------------------------------------


def test_the_progress_lines_change_nothing_in_the_run(capsys):
    # The program's progress checks are events of its own, left out of the event count: the run
    # with a bar is the run without one, to the last number.
    doc = reno({"bdp_fraction": 0.25}, count=2, duration="40s")
    quiet, _ = run_ns3_with_stats(doc, progress=False)
    assert "sim s" not in capsys.readouterr().err
    shown, _ = run_ns3_with_stats(doc, progress=True)
    assert re.search(r"ns-3: .*sim s", capsys.readouterr().err)
    assert shown.summary == quiet.summary


def test_a_timeout_stops_ns3_with_the_part_simulated_marked_partial():
    r, st = run_ns3_with_stats(reno({"packets": 20}, duration="100000s", warmup="5s"), timeout_s=2)
    s = r.summary
    assert s["partial"] is True and 5 < s["duration_s"] < 100000 and s["duration_s"] == pytest.approx(st.sim_s)
    assert any(w.startswith("timeout: stopped by the wall-time limit") and f"at {st.sim_s:.6g} s of 100000 s" in w for w in s["warnings"])


def test_compare_with_ns3_shows_progress_and_a_timeout_keeps_the_finished_engines(tmp_path):
    # Issue 32, acceptance 2: `compare --engines fluid,packet:jitter,ns3` says what the runs will
    # take before they start, shows ns-3's progress, and a limit prints the engines that finished,
    # the rest marked not finished. ns-3 takes minutes for 1000 s at 100 Mb/s; the others seconds.
    from lossync.engines.ns3 import build_program

    build_program()  # compiled once, outside the limit
    f = tmp_path / "b.toml"
    f.write_text('[dumbbell]\ncapacity = "100Mbps"\nbuffer = { bdp_fraction = 0.25 }\n'
                 '[[flows]]\ncount = 4\ncc = "reno"\nrtt = "40ms..80ms"\nslow_start = true\n'
                 '[run]\nduration = "1000s"\nwarmup = "10s"\n')
    r = subprocess.run([sys.executable, "-m", "lossync", "compare", str(f), "--engines", "fluid,packet:jitter,ns3", "--timeout", "12",
                        "--progress"], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    err = r.stderr
    estimate = re.search(r"lossync: compare: 3 engines, 1000 s simulated each; estimated (.*) in all \(fluid .*, packet:jitter .*, ns3 (.*);", err)
    assert estimate, err
    start = err.index("lossync: compare: [3/3] ns3, estimated")
    # tqdm's bar of ns-3's simulated seconds, redrawn as the program reports them.
    updates = re.findall(r"ns-3:\s+\d+%.*? ([\d.]+)/1000 \[", err[start:])
    assert len(updates) >= 2 and float(updates[-1]) > 0, err[start:]
    out = r.stdout.splitlines()
    assert out[0].split() == ["metric", "fluid", "packet:jitter", "ns3"]
    head = out[1].split()
    assert head[0] == "utilization" and 0.5 < float(head[1]) <= 1 and 0.5 < float(head[2]) <= 1 and head[3:] == ["not", "finished"]
    assert re.fullmatch(r"ns3: not finished: stopped at [\d.]+ of 1000 s simulated", out[-1]), out[-1]
