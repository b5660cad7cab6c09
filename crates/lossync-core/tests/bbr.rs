//! BBR v1 in the packet engine against numbers from outside the code: the path's own rate and
//! RTT (the bandwidth and min-RTT estimates), the gain cycle's bound on the queue, startup's
//! round count and probe-RTT's period and window (draft-cardwell-iccrg-bbr-congestion-control,
//! tcp_bbr.c), and Hock, Bless & Zitterbart (ICNP 2017) for several flows in a deep buffer.

mod common;

use common::{packet_engine as engine, run, scenario};
use lossync_core::cc::bbr::{Bbr, Mode};
use lossync_core::PacketEngine;

/// 100 Mb/s in 1500-byte packets, and the BDP at 40 ms.
const C_PPS: f64 = 1e8 / 12_000.0;
const BDP: f64 = C_PPS * 0.04;

fn bbr(e: &PacketEngine, f: usize) -> &Bbr {
    e.sender(f)
        .law()
        .as_any()
        .and_then(|a| a.downcast_ref::<Bbr>())
        .expect("a BBR flow")
}

/// `flows` BBR flows at 40 ms on a 100 Mb/s dumbbell with a buffer of `buffer_bdp` BDPs.
fn dumbbell(flows: usize, buffer_bdp: f64, duration_s: f64, extra: &str) -> String {
    format!(
        r#"
engine = "packet"
[dumbbell]
capacity = "100Mbps"
buffer = {{ bdp_fraction = {buffer_bdp} }}
[[flows]]
cc = "bbr"
count = {flows}
rtt = "40ms"
{extra}
[run]
duration = "{duration_s}s"
warmup = "5s"
"#
    )
}

/// One flow, 1 BDP of buffer: startup ends within log2(BDP) + 3 rounds (draft §4.3.1: the rate
/// doubles per round until the pipe is full, then 3 rounds without 25% growth), and in
/// probe-bandwidth the flow keeps the link busy with the bottleneck's rate and the path's RTT
/// as its estimates, and a queue bounded by the gain cycle.
#[test]
fn one_flow_fills_the_pipe_and_keeps_the_queue_small() {
    let mut e = engine(&dumbbell(1, 1.0, 30.0, ""));
    e.advance(5.0);
    let share = fill(&mut e, 1, 30.0);
    let b = bbr(&e, 0);
    let (bw, min_rtt, exit) = (b.max_bw_pps(), b.min_rtt_s(), b.startup_exit_round);
    assert_eq!(b.mode(), Mode::ProbeBw);
    let s = e.finish().summary;
    println!(
        "U={:.4} bw={bw:.1} pkt/s (C={C_PPS:.1}) min_rtt={min_rtt:.6} s, startup exit round \
         {exit:?}, mean queue {:.1} pkts (BDP {BDP:.1}), loss {:.2e}",
        s.utilization, s.mean_queue_pkts, s.loss_rate
    );
    assert!(s.utilization > 0.95, "U = {}", s.utilization);
    assert!((bw / C_PPS - 1.0).abs() < 0.05, "bw {bw} vs {C_PPS}");
    assert!((min_rtt - 0.04).abs() < 1e-3, "min RTT {min_rtt}");
    // From an initial window of 10 the pipe is full after log2(BDP/10) ≈ 5 rounds, and the
    // plateau takes 3 more: no earlier than that, no later than log2(BDP) + 3.
    let exit = exit.expect("startup ended") as f64;
    assert!(
        exit >= (BDP / 10.0).log2().floor() + 3.0 && exit <= (BDP.log2() + 3.0).ceil(),
        "startup ended in round {exit}"
    );
    // The queue is built only in the 5/4 phase, at most (5/4 − 1) BDP over one min RTT, and the
    // 3/4 phase drains it (draft §4.3.3): its mean is well under a quarter of a BDP.
    assert!(
        s.mean_queue_pkts < 0.25 * BDP,
        "mean queue {}",
        s.mean_queue_pkts
    );
    assert_eq!(s.loss_rate, 0.0);
    // Alone, it is paced, with window to spare (cwnd 2 BDP, in flight about 1): the contrast of
    // the several flows below.
    println!("in flight / cwnd {share:.3}");
    assert!(share < 0.7, "in flight / cwnd {share}");
}

/// Probe-RTT: when the min RTT has not been refreshed for 10 s the flow caps its window at 4
/// packets for at least 200 ms and a round (tcp_bbr.c `bbr_update_min_rtt`; draft §4.3.4), so a
/// 35 s run has 3 episodes, about 10.2–10.5 s apart. A host's send jitter (one packet time,
/// Floyd & Jacobson 1992) makes the RTT samples vary as a real host's do; without it a single
/// paced flow sees exactly its min RTT whenever the 3/4 phase empties the queue, which
/// refreshes the estimate (`rtt <= min_rtt`), and it never needs to probe.
#[test]
fn probe_rtt_comes_every_ten_seconds_at_four_packets() {
    let mut e = engine(&dumbbell(1, 1.0, 35.0, "send_jitter = \"120us\""));
    let (mut t, mut starts, mut in_probe) = (0.0, Vec::new(), false);
    let mut max_cwnd_settled: f64 = 0.0;
    let mut probe_since = 0.0;
    while t < 35.0 {
        t += 1e-3;
        e.advance(t);
        let probing = bbr(&e, 0).mode() == Mode::ProbeRtt;
        if probing && !in_probe {
            starts.push(t);
            probe_since = t;
        }
        // Once the window has been cut (the first ACKs of the episode), it stays at 4.
        if probing && t - probe_since > 2e-3 {
            max_cwnd_settled = max_cwnd_settled.max(e.sender(0).cwnd_pkts());
        }
        in_probe = probing;
    }
    println!("probe-RTT episodes start at {starts:?}; window in them at most {max_cwnd_settled}");
    assert_eq!(starts.len(), 3, "{starts:?}");
    for w in starts.windows(2) {
        let gap = w[1] - w[0];
        assert!((10.0..10.8).contains(&gap), "{starts:?}");
    }
    assert!(starts[0] > 10.0 && starts[0] < 10.8, "{starts:?}");
    assert_eq!(max_cwnd_settled, 4.0);

    let mut e = engine(&dumbbell(1, 1.0, 35.0, ""));
    e.advance(35.0);
    assert_eq!(bbr(&e, 0).probe_rtt_episodes, 0);
}

/// Several BBR flows in a deep buffer are window-limited: each one's bandwidth estimate holds
/// its share plus the others' queue, so together they keep 2 BDP in flight and 1 BDP queued
/// (Hock, Bless & Zitterbart, "Experimental evaluation of BBR congestion control", ICNP 2017,
/// §IV-B). Tolerance: the windows add tcp_bbr.c's quantization budget, 3 send quanta of 2
/// packets and rounding per flow (about 0.1 BDP for 4 flows here), and the probe-RTT
/// episodes empty the queue for a few hundred ms: [0.8, 1.3] BDP.
#[test]
fn several_flows_in_a_deep_buffer_are_window_limited_with_a_bdp_of_queue() {
    let mut e = engine(&dumbbell(4, 10.0, 30.0, ""));
    let share = fill(&mut e, 4, 30.0);
    let s = e.finish().summary;
    println!(
        "U={:.4} mean queue {:.1} pkts = {:.2} BDP; in flight / cwnd {:.1}%; \
         Jain {:.4}; loss {:.2e}",
        s.utilization,
        s.mean_queue_pkts,
        s.mean_queue_pkts / BDP,
        100.0 * share,
        s.jain,
        s.loss_rate
    );
    assert_eq!(s.loss_rate, 0.0);
    assert!(s.utilization > 0.95, "U = {}", s.utilization);
    let q = s.mean_queue_pkts / BDP;
    assert!((0.8..1.3).contains(&q), "queue {q} BDP");
    // Window-limited: the data in flight is the window (paced flows have window to spare).
    assert!(share > 0.9, "in flight / cwnd {share}");
    assert!(s.jain > 0.95, "Jain {}", s.jain);
}

/// BBR sends as Linux does: each pacing step one TSO/GSO send of `tcp_tso_autosize` packets
/// (8 at 100 Mb/s: 12,500,000 B/s >> 10 = 12,207 B), the next `size / rate` later (EDT pacing,
/// tcp_output.c `tcp_update_skb_after_send`). One flow alone is paced, not window-limited, so
/// every send is whole: sampled every microsecond for 50 ms, the packets leave in groups of
/// the law's quantum at the same instant, one group per `quantum / pacing rate`.
#[test]
fn paced_packets_leave_in_linux_sized_sends() {
    let mut e = engine(&dumbbell(1, 1.0, 10.0, ""));
    e.advance(5.0);
    let (mut t, mut last_sent) = (5.0, e.sender(0).snd_nxt());
    let retransmitted = e.sender(0).counters().retransmitted_pkts;
    let mut groups: Vec<(f64, u64, u32, f64)> = Vec::new();
    while t < 5.05 {
        t += 1e-6;
        e.advance(t);
        let s = e.sender(0);
        // New data only: past startup, a lone flow in a 1 BDP buffer loses nothing.
        let sent = s.snd_nxt() - last_sent;
        last_sent = s.snd_nxt();
        if sent > 0 {
            let rate = s.law_pacing_rate_pps().unwrap();
            groups.push((t, sent, s.law_send_quantum_pkts(), rate));
        }
    }
    assert_eq!(e.sender(0).counters().retransmitted_pkts, retransmitted);
    let sizes: Vec<u64> = groups.iter().map(|g| g.1).collect();
    println!("{} sends in 50 ms, sizes {sizes:?}", groups.len());
    // 50 ms at about 8,250 packets/s in sends of 6-10 packets (the 3/4 and 5/4 phases).
    assert!(groups.len() > 35, "{}", groups.len());
    for &(_, sent, quantum, _) in &groups {
        assert_eq!(sent, quantum as u64, "{groups:?}");
        assert!((6..=10).contains(&quantum), "{groups:?}");
    }
    // The next send waits the last one's size at the pacing rate (rate changes only between
    // sends, on an ACK: the bound takes the faster of the two).
    for w in groups.windows(2) {
        let gap = w[1].0 - w[0].0;
        let want = w[0].1 as f64 / w[0].3.max(w[1].3);
        assert!(gap >= want - 1e-6, "gap {gap} s after {:?}", w[0]);
    }
}

/// Ten BBR flows in a shallow buffer (10% of the BDP at 200 Mb/s, 50 ms) share the link about
/// evenly, at BBR v1's high loss rate: ns-3.44's TcpBbr on the same scenario gives Jain 0.877,
/// loss 11.0%, the largest flow 15% of the throughput. Sends of one packet each, paced exactly,
/// phase-lock here (Floyd & Jacobson 1992): the fastest flow's packets find the freed slots,
/// and before Linux-sized sends this run gave Jain 0.44, its largest flow 43% at 6.6% loss
/// against 12% for the others.
#[test]
fn ten_flows_share_a_shallow_buffer_as_in_ns3() {
    let text = dumbbell(10, 0.1, 15.0, "slow_start = true")
        .replace("100Mbps", "200Mbps")
        .replace("40ms", "50ms");
    let s = run(&text).summary;
    let total: f64 = s.flows.iter().map(|f| f.throughput_pps).sum();
    let largest = s.flows.iter().map(|f| f.throughput_pps).fold(0.0, f64::max) / total;
    println!(
        "Jain {:.3} (ns-3 0.877), loss {:.3} (0.110), largest share {largest:.3} (0.15), U {:.3}",
        s.jain, s.loss_rate, s.utilization
    );
    assert!(s.jain > 0.8, "Jain {}", s.jain);
    assert!(largest < 0.2, "largest share {largest}");
    assert!((s.loss_rate - 0.110).abs() < 0.03, "loss {}", s.loss_rate);
}

/// BBR's fluid form shares a shallow buffer between unequal RTTs as the packet engine does: two
/// flows at 25 and 75 ms, 100 Mb/s, 10% of the BDP at 50 ms. The packet engine (with one
/// packet time of send jitter, the fluid engine's reference) gives them Jain 1.000. The fluid
/// `tcp` model once charged the overflow to the RTT class with the smaller share of the
/// arrivals, as for ACK-clocked flows, and the 75 ms flow lost its estimate: Jain 0.56.
#[test]
fn the_fluid_form_shares_a_shallow_buffer_between_unequal_rtts() {
    let text = dumbbell(2, 0.1, 60.0, "slow_start = true")
        .replace("40ms", "25ms..75ms")
        .replace("5s\"", "20s\"");
    let jittered = text.replace(
        "slow_start = true",
        "slow_start = true\nsend_jitter = \"120us\"",
    );
    let p = run(&jittered).summary;
    let f = run(&text.replace("engine = \"packet\"", "engine = \"fluid\"")).summary;
    let tput = |s: &lossync_core::metrics::Summary| -> Vec<f64> {
        s.flows.iter().map(|f| f.throughput_pps.round()).collect()
    };
    println!(
        "Jain: packet {:.3} {:?}, fluid {:.3} {:?}",
        p.jain,
        tput(&p),
        f.jain,
        tput(&f)
    );
    assert!(p.jain > 0.95, "packet Jain {}", p.jain);
    assert!(
        (f.jain - p.jain).abs() < 0.05,
        "fluid {} packet {}",
        f.jain,
        p.jain
    );
}

/// Samples every flow every 10 ms after the warm-up up to `until_s`: the mean of its data in
/// flight over its window.
fn fill(e: &mut PacketEngine, flows: usize, until_s: f64) -> f64 {
    let (mut sum, mut samples, mut t) = (0.0, 0, 5.0);
    while t < until_s {
        t += 0.01;
        e.advance(t);
        for f in 0..flows {
            let s = e.sender(f);
            samples += 1;
            sum += s.pipe_pkts() as f64 / s.cwnd_pkts();
        }
    }
    sum / samples as f64
}

/// A flow that starts late (or a dynamic flow) has its own 10 s min-RTT window from its start,
/// not from the run's: no probe-RTT in its first 10 s.
#[test]
fn a_late_flow_does_not_probe_rtt_at_once() {
    let mut e = engine(&dumbbell(
        1,
        1.0,
        21.0,
        "start = \"12s\"\nsend_jitter = \"120us\"",
    ));
    e.advance(21.0);
    assert_eq!(bbr(&e, 0).probe_rtt_episodes, 0);
    assert_eq!(bbr(&e, 0).mode(), Mode::ProbeBw);
}

/// The first gain-cycle phase is drawn from each connection's own stream: a run is the same for
/// a seed, and another seed changes it.
#[test]
fn runs_are_deterministic_per_seed() {
    let text =
        |seed: u64| dumbbell(4, 1.0, 10.0, "").replace("[run]", &format!("[run]\nseed = {seed}"));
    let a = run(&text(1)).summary;
    let b = run(&text(1)).summary;
    let c = run(&text(2)).summary;
    let tput = |s: &lossync_core::metrics::Summary| -> Vec<f64> {
        s.flows.iter().map(|f| f.throughput_pps).collect()
    };
    assert_eq!(tput(&a), tput(&b));
    assert_ne!(tput(&a), tput(&c));
}

/// BBR's fluid form (the `tcp` model's ACK clock feeding the law's rate samples, fluid/rate.rs)
/// against the closed forms the packet engine's checks use: one flow keeps the link busy at the
/// bottleneck's rate with the gain cycle's small queue; four flows in a deep buffer are
/// cwnd-limited at 2 BDP in flight, about one BDP queued (Hock, Bless & Zitterbart, ICNP 2017).
/// Other loss models refuse it, naming `loss.model`.
#[test]
fn the_fluid_engine_runs_bbr_under_its_tcp_model() {
    let fluid = |text: String| text.replace("engine = \"packet\"", "engine = \"fluid\"");
    let one = lossync_core::run(&scenario(&fluid(dumbbell(1, 1.0, 30.0, ""))))
        .unwrap()
        .summary;
    println!(
        "fluid, one flow: U={:.4} tput={:.1} pkt/s mean queue {:.1} pkts",
        one.utilization, one.flows[0].throughput_pps, one.mean_queue_pkts
    );
    assert!(one.utilization > 0.95, "{}", one.utilization);
    assert!((one.flows[0].throughput_pps / C_PPS - 1.0).abs() < 0.05);
    assert!(one.mean_queue_pkts < 0.25 * BDP && one.loss_rate == 0.0);
    let deep = lossync_core::run(&scenario(&fluid(dumbbell(4, 10.0, 40.0, ""))))
        .unwrap()
        .summary;
    println!(
        "fluid, four flows, 10 BDP: U={:.4} mean queue {:.2} BDP",
        deep.utilization,
        deep.mean_queue_pkts / BDP
    );
    assert!(deep.utilization > 0.95);
    assert!((0.8..1.3).contains(&(deep.mean_queue_pkts / BDP)));
    let sc = scenario(
        &fluid(dumbbell(1, 1.0, 10.0, ""))
            .replace("[run]", "[loss]\nmodel = \"proportional\"\n[run]"),
    );
    let err = lossync_core::run(&sc).unwrap_err().to_string();
    assert!(
        err.starts_with(
            "loss.model: variant \"bbr\" (flows[0].cc) has a fluid form under loss.model = \"tcp\""
        ),
        "{err}"
    );
}

/// A queue of a few packets overflows on the packet engine's TSO sends, which the fluid engine
/// does not have: 4 BBR flows on a bufferless 100 Mb/s link keep 4% of it busy in the jittered
/// packet engine and all of it in the fluid engine. The fluid run says so; from 5 packets the two
/// agree, and nothing is said.
#[test]
fn a_queue_shorter_than_the_packet_bursts_is_said_in_the_fluid_warnings() {
    let text = |engine: &str, buffer_pkts: u32, jitter_s: f64| {
        format!(
            "engine = \"{engine}\"\n[dumbbell]\ncapacity = \"100Mbps\"\n\
             buffer = {{ packets = {buffer_pkts} }}\n[[flows]]\ncount = 4\ncc = \"bbr\"\n\
             rtt = \"40ms\"\nslow_start = false\nsend_jitter = {jitter_s}\n\
             [run]\nduration = \"60s\"\n"
        )
    };
    let said = |r: &lossync_core::RunResult| {
        r.summary
            .warnings
            .iter()
            .any(|w| w.starts_with("links[0].buffer:") && w.contains("packet bursts"))
    };
    let (fluid, packet) = (
        run(&text("fluid", 0, 0.0)),
        run(&text("packet", 0, 0.00012)),
    );
    assert!(fluid.summary.utilization > 0.9 && packet.summary.utilization < 0.2);
    assert!(said(&fluid));
    let (fluid, packet) = (
        run(&text("fluid", 5, 0.0)),
        run(&text("packet", 5, 0.00012)),
    );
    assert!((fluid.summary.utilization - packet.summary.utilization).abs() < 0.03);
    assert!(!said(&fluid));
}
