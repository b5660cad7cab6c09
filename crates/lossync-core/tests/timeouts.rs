//! The packet engine's retransmission timeouts against a closed form, and the per-flow count of
//! them. A flow whose window holds one packet has nothing behind a loss to draw SACKs: every loss
//! is found by the timer. Behind random loss `p`, a packet is delivered after k losses in a row
//! with probability p^k (1 − p), and the k-th costs the RTO doubled k − 1 times (RFC 6298 §5.5),
//! so the mean time per packet delivered is `RTT + RTO · Σ p^k 2^(k−1) = RTT + RTO · p / (1 − 2p)`
//! (p < ½; the series of the timeout sequence of Padhye, Firoiu, Towsley and Kurose, SIGCOMM 1998,
//! §2.2, f(p) = 1 + p + 2p² + 4p³ + …). The RTO is the sender's SRTT + 200 ms (Linux's floor on
//! the variance term). The fluid engine has no such timeouts (docs/fluid.md, "Known gaps").

mod common;

use common::run;
use lossync_core::metrics::FlowSummary;

const RTT_S: f64 = 0.05;

fn packet_flows(text: &str) -> Vec<FlowSummary> {
    run(&format!("engine = \"packet\"\n{text}")).summary.flows
}

#[test]
fn a_one_packet_window_waits_out_each_loss_with_backoff() {
    for p in [0.05, 0.2] {
        let f = &packet_flows(&format!(
            "[dumbbell]\ncapacity = \"100Mbps\"\nbuffer = {{ packets = 100 }}\nloss_rate = {p}\n\
             [[flows]]\ncc = \"reno\"\nrtt = \"{RTT_S}s\"\nrwnd = {{ packets = 1 }}\n\
             [run]\nduration = \"2000s\"\nwarmup = \"10s\"\n"
        ))[0];
        let want = 1.0 / (RTT_S + (RTT_S + 0.2) * p / (1.0 - 2.0 * p));
        assert!(
            (f.throughput_pps / want - 1.0).abs() < 0.02,
            "p {p}: {} pps against {want}",
            f.throughput_pps
        );
        // Every loss is a timeout: about p per packet sent, (1 − p)⁻¹ packets sent per delivery.
        let timeouts = f.timeouts.expect("the packet engine counts timeouts");
        let losses = p / (1.0 - p) * f.throughput_pps * 1990.0;
        assert!(
            (timeouts / losses - 1.0).abs() < 0.1,
            "{timeouts} vs {losses}"
        );
    }
}

#[test]
fn sack_recovery_leaves_large_windows_without_timeouts() {
    // Ten Reno flows at 1 Gb/s, 50 ms, half a BDP: windows of about 60 packets, each loss found
    // by three SACKs. Every flow cuts its window; none times out.
    let flows = packet_flows(
        "[dumbbell]\ncapacity = \"1Gbps\"\nbuffer = { bdp_fraction = 0.5 }\n\
         [[flows]]\ncount = 10\ncc = \"reno\"\nrtt = \"50ms\"\nslow_start = false\n\
         [run]\nduration = \"200s\"\nwarmup = \"50s\"\n",
    );
    assert!(flows.iter().all(|f| f.reductions > 0.0));
    assert!(flows.iter().all(|f| f.timeouts == Some(0.0)), "{flows:?}");
}
