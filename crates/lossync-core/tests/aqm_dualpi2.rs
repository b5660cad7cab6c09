//! DualPI2 (RFC 9332) in the packet engine against the RFC's two headline claims: a scalable L4S
//! flow (Prague, ECT(1)) and a classic one (CUBIC) of equal RTT share the link about equally
//! (§2.1: k = 2 makes the coupled p_CL = k·p' and p_C = p'² give DCTCP-like and Reno-like flows
//! about the same rate), and the L4S queue's delay stays around its 1 ms step (§1.1: "a
//! 99th percentile [queuing delay] around 1 ms" for L4S). Run with `--nocapture` to see the
//! figures.

mod common;

use common::run;
use lossync_core::metrics::Summary;

/// One Prague flow and one CUBIC flow (`cubic_ecn`: as a classic ECN flow, ECT(0)), 20 ms each,
/// through 100 Mb/s with DualPI2 and a buffer of 3 BDPs (500 packets), 60 s, the first 20 s
/// of them warm-up.
fn prague_and_cubic(cubic_ecn: bool) -> Summary {
    run(&format!(
        r#"
engine = "packet"
[dumbbell]
capacity = "100Mbps"
buffer = {{ packets = 500 }}
queue = {{ discipline = "dualpi2" }}
[[flows]]
name = "prague"
cc = "prague"
rtt = "20ms"
slow_start = true
[[flows]]
name = "cubic"
cc = "cubic"
rtt = "20ms"
slow_start = true
ecn = {cubic_ecn}
[run]
duration = "60s"
warmup = "20s"
seed = 1
"#
    ))
    .summary
}

fn check(cubic_ecn: bool) {
    let s = prague_and_cubic(cubic_ecn);
    let (p, c) = (&s.flows[0], &s.flows[1]);
    let l = &s.links[0];
    let ratio = p.throughput_bps / c.throughput_bps;
    eprintln!(
        "cubic ecn={cubic_ecn}: Prague {:.2} Mb/s, CUBIC {:.2} Mb/s, ratio {ratio:.3}; \
         utilization {:.4}; L sojourn mean {:.3} ms p99 {:.3} ms; all packets mean {:.3} ms \
         p99 {:.3} ms; mark rate {:.4} (Prague {:.4}, CUBIC {:.4}), early drops {:.2e}, \
         overflow drops {:.2e}",
        p.throughput_bps / 1e6,
        c.throughput_bps / 1e6,
        s.utilization,
        l.sojourn_l4s_mean_s * 1e3,
        l.sojourn_l4s_p99_s * 1e3,
        l.sojourn_mean_s * 1e3,
        l.sojourn_p99_s * 1e3,
        l.mark_rate,
        p.mark_rate,
        c.mark_rate,
        l.early_drop_rate,
        l.overflow_drop_rate,
    );
    assert!(
        (0.5..=2.0).contains(&ratio),
        "Prague/CUBIC throughput ratio {ratio} (cubic ecn={cubic_ecn})"
    );
    assert!(
        l.sojourn_l4s_p99_s < 0.002,
        "L queue p99 sojourn {} s (cubic ecn={cubic_ecn})",
        l.sojourn_l4s_p99_s
    );
}

#[test]
fn prague_and_cubic_share_the_link_and_the_l_queue_stays_short() {
    check(false);
}

#[test]
fn prague_and_a_classic_ecn_cubic_share_the_link_too() {
    check(true);
}
