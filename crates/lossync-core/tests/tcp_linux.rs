//! The packet sender's Linux mechanisms against closed forms: RACK-TLP loss detection and the
//! undo of a spurious timeout (`loss_detection`, `undo`, at the end), delayed ACKs and the RTT a
//! law sees (at the end), and slow start's exit on a rising RTT (`hystart`). For the latter, one
//! Reno or CUBIC flow from an initial window of 10 through 100 Mb/s at a base RTT of 100 ms
//! (P = 833.3 packets of pipe) and a buffer B of 1 or 10 BDPs.
//!
//! - **Without HyStart** slow start ends at the first loss. The window passes P + B during a
//!   round and keeps doubling until the loss is seen one RTT later; in that RTT the full queue
//!   drops one packet of the two sent per ACK, P + B packets in all.
//! - **Linux CUBIC's HyStart**: slow start's rounds are 10·2^k packets sent as bursts at twice
//!   the link's rate, so a round's ACKs come back as a train at the link's rate. The train
//!   outlasts half the minimum RTT in the first round of at least P/2 packets (W = 640), after
//!   P/2 of its ACKs: slow start ends at cwnd = W + P/2 = 1057, with no loss for B ≥ 0.27 P.
//! - **HyStart++**: a round's minimum RTT rises only when the last round's window exceeded P,
//!   and CSS begins once it has risen by 12.5 ms (100 ms / 8, RFC 9406 §4.2): after the round of
//!   1280 (> P + 104), at the eighth ACK of the round of E = 2560. CSS then multiplies the
//!   window by 1.25 a round; the fifth round boundary ends it, at E · 1.25^5 = 7812.5 packets
//!   (the entry round counts as one). With B = 10 P that fits (no loss). With B = P the round
//!   of 2560 has already overflowed P + B before CSS begins: CSS only slows the overshoot.

mod common;

use common::packet_engine;

const PIPE: f64 = 833.333;

struct Start {
    /// cwnd when slow start ended (ssthresh fell below the receive window; sampled each 1 ms).
    exit_cwnd_pkts: f64,
    /// Packets the bottleneck dropped in the first 5 s.
    dropped: usize,
}

fn slow_start(variant: &str, hystart: &str, buffer_bdp: f64) -> Start {
    let mut e = packet_engine(&format!(
        r#"
engine = "packet"
[dumbbell]
capacity = "100Mbps"
buffer = {{ bdp_fraction = {buffer_bdp} }}
[[flows]]
cc = "{variant}"
rtt = "100ms"
hystart = "{hystart}"
[run]
duration = "5s"
"#
    ));
    let mut exit = None;
    let (mut t, mut last_cwnd) = (0.0, 0.0);
    while t < 5.0 {
        t += 0.001;
        e.advance(t);
        let s = e.sender(0);
        if exit.is_none() && s.ssthresh_pkts() < 1e6 {
            exit = Some(last_cwnd);
        }
        last_cwnd = s.cwnd_pkts();
    }
    let s = Start {
        exit_cwnd_pkts: exit.expect("slow start never ended"),
        dropped: e.drop_log().len(),
    };
    eprintln!(
        "{variant}, hystart {hystart}, buffer {buffer_bdp} BDP: slow start ended at cwnd {:.0}, {} dropped",
        s.exit_cwnd_pkts, s.dropped
    );
    s
}

#[test]
fn without_hystart_the_last_round_drops_the_pipe_plus_the_buffer() {
    for b in [1.0, 10.0] {
        let s = slow_start("reno", "off", b);
        let expect = PIPE * (1.0 + b);
        let err = s.dropped as f64 / expect - 1.0;
        assert!(
            err.abs() < 0.01,
            "{} dropped, P + B = {expect:.0}",
            s.dropped
        );
    }
}

#[test]
fn linux_hystart_ends_slow_start_at_the_ack_train_without_loss() {
    let expect = 640.0 + PIPE / 2.0;
    for v in ["reno", "cubic"] {
        for b in [1.0, 10.0] {
            let s = slow_start(v, "linux", b);
            assert_eq!(s.dropped, 0);
            let err = s.exit_cwnd_pkts / expect - 1.0;
            assert!(
                err.abs() < 0.05,
                "exit at {:.0}, expected {expect:.0}",
                s.exit_cwnd_pkts
            );
        }
    }
}

#[test]
fn hystart_pp_ends_after_five_rounds_of_css_or_slows_the_overshoot() {
    for v in ["reno", "cubic"] {
        let deep = slow_start(v, "rfc9406", 10.0);
        assert_eq!(deep.dropped, 0);
        let expect = 2560.0 * 1.25f64.powi(5);
        let err = deep.exit_cwnd_pkts / expect - 1.0;
        assert!(
            err.abs() < 0.02,
            "exit at {:.0}, expected {expect:.0}",
            deep.exit_cwnd_pkts
        );
        let (shallow, plain) = (slow_start(v, "rfc9406", 1.0), slow_start(v, "off", 1.0));
        assert!(
            shallow.dropped > 0 && (shallow.dropped as f64) < 0.75 * plain.dropped as f64,
            "{} dropped with HyStart++, {} without",
            shallow.dropped,
            plain.dropped
        );
    }
}

#[test]
fn the_fluid_engine_says_it_runs_no_hystart() {
    let r = common::run(
        r#"
engine = "fluid"
[dumbbell]
capacity = "100Mbps"
buffer = { bdp_fraction = 1.0 }
[[flows]]
cc = "reno"
rtt = "100ms"
[[flows]]
cc = "cubic"
rtt = "100ms"
hystart = "rfc9406"
[run]
duration = "5s"
"#,
    );
    let said: Vec<_> = r
        .summary
        .warnings
        .iter()
        .filter(|w| w.contains("hystart"))
        .collect();
    assert_eq!(said.len(), 1, "{:?}", r.summary.warnings);
    assert!(said[0].starts_with("flows[1].hystart: "), "{said:?}");
}

/// A steady Reno flow (a window of 2, RTT 20 ms, so an RTO of about 0.22 s) on 10 Mb/s, and at
/// 5 s a burst of 2000 packets from a second flow through a 1 Gb/s access link into a buffer of
/// 3000: within 24 ms the steady flow's next packets queue behind 2.4 s of data. Nothing is
/// lost, but its timer fires, and fires again as it backs off, each time resending the first
/// unacknowledged packet. The ACK of the original then echoes a send time from before the first
/// retransmission (RFC 3522 §3.2). With `undo` the timeout is undone: the only retransmissions
/// are the timer's probes, one per timeout, and the window is back at 2. Without it the sender
/// slow-starts from one packet and resends a packet that was never lost.
#[test]
fn a_spurious_timeout_is_undone_and_resends_nothing_more() {
    for undo in [true, false] {
        let mut e = packet_engine(&format!(
            r#"
engine = "packet"
[dumbbell]
capacity = "10Mbps"
buffer = {{ packets = 3000 }}
[[flows]]
name = "steady"
cc = "reno"
rtt = "20ms"
rwnd = {{ packets = 2 }}
undo = {undo}
[[flows]]
name = "burst"
cc = "reno"
rtt = "20ms"
start = "5s"
initial_window = 2000
rwnd = {{ packets = 2000 }}
access_capacity = "1Gbps"
[run]
duration = "10s"
"#
        ));
        e.advance(10.0);
        assert!(e.drop_log().is_empty(), "nothing is lost");
        let st = e.sender(0).counters();
        eprintln!(
            "undo {undo}: {} timeouts, {} undone, {} retransmitted",
            st.timeouts, st.spurious_timeouts, st.retransmitted_pkts
        );
        assert!(st.timeouts >= 2, "{st:?}");
        if undo {
            assert_eq!(st.spurious_timeouts, 1, "{st:?}");
            assert_eq!(st.retransmitted_pkts, st.timeouts, "{st:?}");
            assert_eq!(e.sender(0).cwnd_pkts(), 2.0);
        } else {
            assert_eq!(st.spurious_timeouts, 0, "{st:?}");
            assert!(st.retransmitted_pkts > st.timeouts, "{st:?}");
        }
    }
}

/// One Reno flow whose receive window holds 3 packets, on a path that loses 1% of data packets
/// at random. A hole at the left edge can be followed by only two packets, so the duplicate
/// threshold (three SACKed above it, RFC 6675) never fires: every loss waits for the RTO. RACK
/// (RFC 8985 §6.2) declares it lost min_RTT/4 after two SACKs, so nearly every loss is a fast
/// recovery; what remains for the timer are retransmissions lost again (1%) with no later
/// packet to reveal them.
#[test]
fn rack_recovers_what_the_duplicate_threshold_leaves_to_the_timer() {
    let run = |detection: &str| {
        let mut e = packet_engine(&format!(
            r#"
engine = "packet"
[dumbbell]
capacity = "10Mbps"
buffer = {{ packets = 100 }}
loss_rate = 0.01
[[flows]]
cc = "reno"
rtt = "20ms"
rwnd = {{ packets = 3 }}
loss_detection = "{detection}"
[run]
duration = "60s"
"#
        ));
        e.advance(60.0);
        let st = e.sender(0).counters();
        let lost = e.drop_log().len() as u64;
        eprintln!("{detection}: {lost} lost, {st:?}");
        (st, lost)
    };
    let (dup, lost) = run("dupthresh");
    assert!(lost > 40, "{lost}");
    assert_eq!(dup.fast_recoveries, 0);
    assert!(dup.timeouts as f64 >= 0.9 * lost as f64, "{dup:?} {lost}");
    let (rack, lost) = run("rack-tlp");
    assert!(
        rack.fast_recoveries as f64 >= 0.9 * lost as f64,
        "{rack:?} {lost}"
    );
    assert!(rack.timeouts as f64 <= 0.1 * lost as f64, "{rack:?} {lost}");
    assert!(rack.sent_pkts > dup.sent_pkts);
}

/// Delayed ACKs (RFC 5681 §4.2, every second packet or after 200 ms) do not change what H-TCP
/// makes of a 10% BDP buffer: 10 flows at 100 Mb/s with RTTs of 80–260 ms and one packet time of
/// send jitter, 200 s, keep their utilization within 3 points of the same without delayed ACKs,
/// as in ns-3 3.44 (TcpHtcp 0.889 without, 0.900 with, docs/validation.md). Before the law's RTT
/// sample came from the newest packet ACKed (Linux's `ca_rtt_us`) and RTT_max took samples only
/// 20 ms above itself (Linux's `measure_rtt`), each delayed ACK's wait entered RTT_max, β fell
/// to its floor of 0.5, and utilization fell from 0.961 to 0.748. The fluid engine, which has no
/// delayed ACKs, is within 3 points of the packet engine with them.
#[test]
fn delayed_acks_leave_htcp_its_utilization() {
    let cell = |engine: &str, delayed: bool| {
        let text = format!(
            "engine = \"{engine}\"\n[dumbbell]\ncapacity = \"100Mbps\"\nbuffer = {{ bdp_fraction = 0.1 }}\n\
             [[flows]]\ncount = 10\ncc = \"htcp\"\nrtt = \"80ms..260ms\"\nslow_start = true\n\
             delayed_ack = {delayed}\nsend_jitter = \"120us\"\n[run]\nduration = \"200s\"\nwarmup = \"50s\"\n"
        );
        common::run(&text).summary.utilization
    };
    let (with, without, fluid) = (
        cell("packet", true),
        cell("packet", false),
        cell("fluid", true),
    );
    println!("H-TCP, 10% BDP: packet {without:.4} without delayed ACKs, {with:.4} with; fluid {fluid:.4}");
    assert!((with - without).abs() <= 0.03, "{with} vs {without}");
    assert!(
        (fluid - with).abs() <= 0.03,
        "fluid {fluid} vs packet {with}"
    );
}
