//! PIE (RFC 8033) on the packet engine: long-lived Reno flows through a deep buffer, which PIE
//! should hold near its 15 ms latency target (RFC 8033 §4.2, QDELAY_REF) at full utilization,
//! and which with ECN it should control by marks alone (RFC 8033 §5.1: marks while p ≤ 10%).

mod common;

use common::run;
use lossync_core::metrics::LinkSummary;

/// 10 Reno flows with slow start, 100 Mb/s, RTT 20..100 ms, 2000 packets of buffer (240 ms at
/// 8333 packets/s, 4× the BDP at the mean RTT), PIE with defaults; `queue` and `flow` add
/// parameters to the queue and lines to the flow group.
fn ten_reno_through_pie(queue: &str, flow: &str) -> LinkSummary {
    let text = format!(
        r#"
engine = "packet"
[dumbbell]
capacity = "100Mbps"
buffer = {{ packets = 2000 }}
queue = {{ discipline = "pie"{queue} }}
[[flows]]
count = 10
cc = "reno"
rtt = "20ms..100ms"
slow_start = true
{flow}
[run]
duration = "60s"
warmup = "10s"
"#
    );
    let s = run(&text).summary;
    let l = s.links[0].clone();
    println!(
        "pie{queue}: sojourn mean {:.2} ms, p50 {:.2} ms, p99 {:.2} ms; utilization {:.4}; \
         early drops {:.3e}, marks {:.3e}, overflow {:.3e}",
        l.sojourn_mean_s * 1e3,
        l.sojourn_p50_s * 1e3,
        l.sojourn_p99_s * 1e3,
        l.utilization,
        l.early_drop_rate,
        l.mark_rate,
        l.overflow_drop_rate
    );
    l
}

#[test]
fn pie_holds_the_delay_near_its_15_ms_target_at_full_utilization() {
    let l = ten_reno_through_pie("", "");
    assert!(
        (l.sojourn_mean_s - 0.015).abs() <= 0.005,
        "mean sojourn {:.2} ms, want 15 ± 5 ms",
        l.sojourn_mean_s * 1e3
    );
    assert!(l.utilization >= 0.95, "utilization {}", l.utilization);
    // Drop-tail would fill 2000 packets (240 ms); PIE drops early instead.
    assert!(l.early_drop_rate > 0.0);
    assert_eq!(l.overflow_drop_rate, 0.0);
    assert_eq!(l.mark_rate, 0.0);
}

#[test]
fn pie_with_ecn_marks_instead_of_dropping() {
    let l = ten_reno_through_pie(", ecn = true", "ecn = true");
    assert!(l.mark_rate > 0.0, "no marks");
    assert_eq!(l.early_drop_rate, 0.0);
    assert_eq!(l.overflow_drop_rate, 0.0);
    assert!(
        (l.sojourn_mean_s - 0.015).abs() <= 0.005,
        "mean sojourn {:.2} ms, want 15 ± 5 ms",
        l.sojourn_mean_s * 1e3
    );
    assert!(l.utilization >= 0.95, "utilization {}", l.utilization);
}
