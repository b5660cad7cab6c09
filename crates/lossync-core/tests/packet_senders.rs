//! Packet engine, its senders and nodes against numbers from outside the code: pacing spreads a
//! window over the RTT, a parallel flow takes k shares (Hacker, Athey, Noble 2002), XCP converges
//! to a fair full link without loss (Katabi, Handley, Rohrs 2002), and nodes of the route walk.
//! (The engine's closed forms, conservation and events are in packet.rs.)

mod common;

use common::{assert_near, reno_closed_form, run};
use lossync_core::metrics::Summary;

fn pacing_case(
    cc: &str,
    pacing: &str,
    buffer: &str,
    count: u32,
    rwnd: &str,
    warmup: &str,
) -> Summary {
    let text = format!(
        r#"
engine = "packet"
[dumbbell]
capacity = "100Mbps"
buffer = {buffer}
[[flows]]
count = {count}
cc = "{cc}"
rtt = "100ms"
slow_start = true
pacing = {pacing}
{rwnd}
[run]
duration = "120s"
warmup = "{warmup}"
"#
    );
    run(&text).summary
}

#[test]
fn pacing_spreads_a_window_over_the_rtt() {
    // One flow capped at 100 packets by its receive window on an idle 100 Mb/s link (8,333 pkt/s).
    // Unpaced, slow start sends two packets per ACK back to back on the 1 Gb/s access link and they
    // queue at the bottleneck (later, ACK clocking smooths the flow). Paced at srtt/(ratio·cwnd)
    // (≥ 0.5 ms per packet, slower than the 0.12 ms service time) the queue never holds more than
    // the packet in service and the next one. Statistics from t = 0, to include slow start.
    // Every window-based variant is paced the same way: Reno and gHSTCP here.
    let rwnd = "rwnd = { packets = 100 }";
    for cc in ["reno", "ghstcp"] {
        let unpaced = pacing_case(cc, "false", "{ packets = 1000 }", 1, rwnd, "0s");
        let paced = pacing_case(cc, "true", "{ packets = 1000 }", 1, rwnd, "0s");
        // The last slow-start round (cwnd 64 → 100) sends its extra ~36 packets at the access rate,
        // ten times the bottleneck's: most of them queue.
        assert!(
            unpaced.links[0].max_queue_pkts > 20.0,
            "{}",
            unpaced.links[0].max_queue_pkts
        );
        assert!(
            paced.links[0].max_queue_pkts <= 2.0,
            "{}",
            paced.links[0].max_queue_pkts
        );
        // Both deliver the window-limited rate of 100 packets per 100 ms RTT (after slow start).
        for s in [
            &pacing_case(cc, "false", "{ packets = 1000 }", 1, rwnd, "20s"),
            &pacing_case(cc, "true", "{ packets = 1000 }", 1, rwnd, "20s"),
        ] {
            assert_near(s.flows[0].throughput_pps, 1000.0, 30.0, "throughput");
        }
    }
}

#[test]
fn paced_flows_fill_a_small_buffer_better() {
    // Enachescu et al. (INFOCOM 2006): paced flows need only O(log W) buffering. Ten Reno flows and
    // a 20-packet buffer (2.4% of the 833-packet BDP).
    let unpaced = pacing_case("reno", "false", "{ packets = 20 }", 10, "", "20s");
    let paced = pacing_case("reno", "true", "{ packets = 20 }", 10, "", "20s");
    assert!(
        paced.utilization > unpaced.utilization + 0.05,
        "paced {} vs unpaced {}",
        paced.utilization,
        unpaced.utilization
    );
}

/// A parallel flow of k Reno connections against one Reno flow, equal RTTs: each connection
/// gets an equal share, so the parallel flow takes k/(k+1) (Hacker, Athey, Noble, IPDPS 2002),
/// reported as one flow; three synchronized Reno connections at ρ = 0.25 fill the link as the
/// closed form says.
#[test]
fn packet_parallel_flow_takes_k_shares_and_counts_as_one() {
    for engine in ["packet", "fluid"] {
        let text = format!(
            r#"
engine = "{engine}"
[dumbbell]
capacity = "100Mbps"
buffer = {{ bdp_fraction = 0.25 }}
[[flows]]
cc = "reno"
rtt = "100ms"
parallel = 2
[[flows]]
cc = "reno"
rtt = "100ms"
[run]
duration = "600s"
warmup = "100s"
"#
        );
        let r = run(&text);
        let s = &r.summary;
        assert_eq!(s.flows.len(), 2, "{engine}");
        assert_eq!(s.flows[0].connections, 2);
        let share =
            s.flows[0].throughput_pps / (s.flows[0].throughput_pps + s.flows[1].throughput_pps);
        assert_near(share, 2.0 / 3.0, 0.02, format_args!("{engine}: share"));
        assert_near(
            s.utilization,
            reno_closed_form(0.25),
            0.02,
            format_args!("{engine}: U"),
        );
        assert!(r.series.get("cwnd_pkts.1").is_some() && r.series.get("cwnd_pkts.2").is_none());
    }
}

/// XCP (Katabi, Handley, Rohrs 2002): 10 flows converge to a fair share (Jain > 0.99) at the
/// target utilization with a near-empty queue and no loss, with equal RTTs and with RTTs from
/// 40 to 200 ms (XCP's fairness does not depend on the RTT), in both engines; original
/// parameters aim at 100% of the link, the conservative ones of seed 004 at 90%.
#[test]
fn xcp_converges_to_fair_full_use_without_loss() {
    // The packet engine also paced (at 2·cwnd/srtt): XCP honours pacing like any variant.
    let paced = "{ ss_ratio = 2.0, ca_ratio = 2.0 }";
    for (engine, pacing) in [("packet", "false"), ("packet", paced), ("fluid", "false")] {
        for (preset, target) in [("original", 1.0), ("conservative", 0.9)] {
            for rtt in ["\"100ms\"", "\"40ms..200ms\""] {
                let text = format!(
                    r#"
engine = "{engine}"
[dumbbell]
capacity = "100Mbps"
buffer = {{ bdp_fraction = 1.0, reference_rtt = "100ms" }}
queue = {{ discipline = "xcp", preset = "{preset}" }}
[[flows]]
count = 10
cc = "xcp"
rtt = {rtt}
initial_window = 2
pacing = {pacing}
start = {{ uniform = ["0s", "2s"] }}
[run]
duration = "60s"
warmup = "30s"
"#
                );
                let s = run(&text).summary;
                let case = format!("{engine} {preset} rtt {rtt} pacing {pacing}");
                assert!(s.jain > 0.99, "{case}: Jain {}", s.jain);
                assert_near(s.utilization, target, 0.02, format_args!("{case}: U"));
                // "Near-empty": under 1% of the 833-packet BDP on average.
                assert!(
                    s.mean_queue_pkts < 8.3,
                    "{case}: queue {}",
                    s.mean_queue_pkts
                );
                assert!(s.loss_rate < 1e-9, "{case}: loss {}", s.loss_rate);
            }
        }
    }
}

/// Node types plug into routes: a node that passes every packet on at once changes nothing (the
/// same events in the same order), a node that drops every 100th data packet costs its flow 1% of
/// its packets and nothing at the port, and a node that holds ACKs for 50 ms with its own timers
/// lengthens the RTT of a window-limited flow by that much.
mod nodes {
    use super::common::scenario;
    use lossync_core::packet::node::{Actions, Node};
    use lossync_core::packet::route::Pkt;
    use lossync_core::packet::topology::{build, Topology};
    use lossync_core::{PacketEngine, RunResult, Scenario};
    use std::collections::VecDeque;

    struct PassThrough;
    impl Node for PassThrough {
        fn receive(&mut self, _now_ps: u64, pkt: Pkt, out: &mut Actions) {
            out.forward(pkt);
        }
        fn timer(&mut self, _: u64, _: u32, _: &mut Actions) {
            unreachable!("sets none")
        }
    }

    struct DropEvery(u64, u64);
    impl Node for DropEvery {
        fn receive(&mut self, _now_ps: u64, pkt: Pkt, out: &mut Actions) {
            self.1 += 1;
            if self.1.is_multiple_of(self.0) {
                out.drop(pkt);
            } else {
                out.forward(pkt);
            }
        }
        fn timer(&mut self, _: u64, _: u32, _: &mut Actions) {}
    }

    /// Holds each packet `delay_ps`, one timer per packet (token: nothing to say).
    struct Hold {
        delay_ps: u64,
        held: VecDeque<Pkt>,
    }
    impl Node for Hold {
        fn receive(&mut self, now_ps: u64, pkt: Pkt, out: &mut Actions) {
            self.held.push_back(pkt);
            out.timer(now_ps + self.delay_ps, 0);
        }
        fn timer(&mut self, _now_ps: u64, _: u32, out: &mut Actions) {
            out.forward(self.held.pop_front().expect("one held per timer"));
        }
    }

    /// Runs `sc` with `node()` inserted at position `at` of every flow's data route (`ack`
    /// false) or ACK route.
    fn with_node(
        sc: &Scenario,
        ack: bool,
        at: usize,
        node: &dyn Fn() -> Box<dyn Node>,
    ) -> RunResult {
        let mut t: Topology = build(sc).unwrap();
        for f in 0..t.routes.len() {
            let hop = t.add_node(node());
            let r = &mut t.routes[f];
            if ack {
                r.ack.insert(at, hop)
            } else {
                r.data.insert(at, hop)
            }
        }
        PacketEngine::with_topology(sc, t).unwrap().run()
    }

    const TWO_WAY: &str = r#"
engine = "packet"
[dumbbell]
capacity = "100Mbps"
buffer = { packets = 60 }
reverse = true
[[flows]]
count = 3
cc = "reno"
rtt = "40ms..80ms"
slow_start = true
[[flows]]
cc = "cubic"
rtt = "50ms"
direction = "reverse"
[run]
duration = "30s"
warmup = "5s"
"#;

    #[test]
    fn a_pass_through_node_changes_nothing() {
        let sc = scenario(TWO_WAY);
        let plain = PacketEngine::new(&sc).unwrap().run();
        let dump = |r: &RunResult| format!("{:?}{:?}{:?}", r.summary, r.series, r.events);
        // Between the pipe and the port on the way there, and behind the port on the way back.
        assert_eq!(
            dump(&with_node(&sc, false, 3, &|| Box::new(PassThrough))),
            dump(&plain)
        );
        assert_eq!(
            dump(&with_node(&sc, true, 2, &|| Box::new(PassThrough))),
            dump(&plain)
        );
    }

    #[test]
    fn a_node_drops_packets_and_their_flows_see_it() {
        let sc = scenario(
            r#"
engine = "packet"
[dumbbell]
capacity = "100Mbps"
buffer = { packets = 2000 }
[[flows]]
cc = "reno"
rtt = "50ms"
rwnd = { packets = 100 }
[run]
duration = "60s"
warmup = "10s"
"#,
        );
        let r = with_node(&sc, false, 3, &|| Box::new(DropEvery(100, 0)));
        let (l, f) = (&r.summary.links[0], &r.summary.flows[0]);
        assert_eq!(l.drops_pkts, 0.0, "the port never fills");
        assert_eq!(
            l.arrivals_pkts,
            l.departures_pkts + l.drops_pkts + l.queue_end_pkts - l.queue_start_pkts
        );
        assert!((f.loss_rate - 0.01).abs() < 5e-4, "loss {}", f.loss_rate);
        assert!(f.reductions > 10.0, "{} reductions", f.reductions);
    }

    #[test]
    fn a_node_with_timers_holds_packets() {
        // A window of 100 packets, never more (rwnd), over a 50 ms path: 2000 pkt/s; holding
        // every ACK 50 ms more halves it.
        let sc = scenario(
            r#"
engine = "packet"
[dumbbell]
capacity = "100Mbps"
buffer = { packets = 2000 }
[[flows]]
cc = "reno"
rtt = "50ms"
rwnd = { packets = 100 }
initial_window = 100
[run]
duration = "20s"
warmup = "5s"
"#,
        );
        let r = with_node(&sc, true, 1, &|| {
            Box::new(Hold {
                delay_ps: 50_000_000_000,
                held: VecDeque::new(),
            })
        });
        let f = &r.summary.flows[0];
        assert!(
            (f.throughput_pps - 1000.0).abs() < 10.0,
            "{}",
            f.throughput_pps
        );
        assert_eq!(f.loss_rate, 0.0);
    }
}

/// A link can carry at most its capacity over any window: a packet in service at the start or
/// end of the measurement counts for the part of it sent inside (it once counted whole at its
/// end, giving 1.0002 at 10 Mb/s over 1.66 s and 1.008 with 9000-byte packets at 1 Mb/s).
#[test]
fn utilization_never_exceeds_one_at_window_edges() {
    for (capacity, packet, duration, warmup) in [
        ("10Mbps", 1500, 2.21875, 0.5546875),
        ("1Mbps", 9000, 3.9, 0.5),
        ("1Mbps", 9000, 3.77, 0.31),
        ("10Mbps", 1500, 5.0, 1.0),
    ] {
        let r = run(&format!(
            r#"
engine = "packet"
[dumbbell]
capacity = "{capacity}"
packet_size = {packet}
buffer = {{ packets = 8 }}
[[flows]]
cc = "reno"
rtt = "{rtt}"
initial_window = 1
[run]
duration = {duration}
warmup = {warmup}
record_interval = {interval}
"#,
            interval = duration / 20.0,
            rtt = if packet > 1500 { "200ms" } else { "5ms" }
        ));
        let u = r.summary.utilization;
        assert!(u <= 1.0 + 1e-12, "{capacity} {packet} B: utilization {u}");
        assert!(
            u > 0.9,
            "{capacity} {packet} B: the link is busy, utilization {u}"
        );
        let (name, samples) = &r.series.columns[2];
        assert_eq!(name, "utilization.bottleneck");
        assert!(
            samples.iter().all(|&s| s.is_nan() || s <= 1.0 + 1e-9),
            "{capacity} {packet} B: a utilization sample above 1: {samples:?}"
        );
    }
}
