//! The aggregate sampling metric (issue 12 item 5): Σ cwnd/RTT over the flows every
//! `run.aggregate_interval`, its variability, and the spread of throughput across flows.
//! Checked against numbers from outside the code: a window that keeps a link's queue from
//! emptying sends at the link's rate (cwnd/RTT = C by Little's law, RTT with the queueing
//! delay), and a single Reno flow with a buffer of one BDP keeps its link full (U = 1,
//! docs/model.md §4.2).

mod common;

use common::{run, scenario_error};

fn one_reno(engine: &str, extra_run: &str) -> String {
    format!(
        r#"
engine = "{engine}"
[dumbbell]
capacity = "100Mbps"
buffer = {{ bdp_fraction = 1.0 }}
[[flows]]
cc = "reno"
rtt = "50ms"
[run]
duration = "120s"
warmup = "20s"
{extra_run}
"#
    )
}

/// One Reno flow, buffer = BDP: the queue never empties, so cwnd/RTT is the link's rate at
/// every sample. The mean of the samples is within 2% of C (srtt lags the RTT by about 8
/// samples, the RFC 6298 gain 1/8), in both engines; the samples fall every 0.7 s.
#[test]
fn aggregate_of_a_full_link_is_its_capacity() {
    for engine in ["packet", "fluid"] {
        let r = run(&one_reno(engine, "aggregate_interval = \"0.7s\""));
        let a = r.summary.aggregate.as_ref().expect("aggregate sampled");
        let c_pps = 100e6 / (8.0 * 1500.0);
        println!(
            "{engine}: {} samples, mean {:.1} pps vs C {c_pps:.1}, CV {:.4}",
            a.samples, a.mean_pps, a.cv
        );
        assert!(
            (a.mean_pps / c_pps - 1.0).abs() < 0.02,
            "{engine}: {}",
            a.mean_pps
        );
        // 0, 0.7, …, 119.7 s: floor(120 / 0.7) + 1 samples; from 20 s on, 143.
        assert_eq!(a.time_s.len(), 172, "{engine}");
        assert!(
            (a.time_s[10] - 7.0).abs() < 1e-3,
            "{engine}: {}",
            a.time_s[10]
        );
        assert_eq!(a.samples, a.time_s.iter().filter(|&&t| t >= 20.0).count());
        // One flow: no spread across flows.
        assert_eq!(a.flow_throughput_var_pps2, 0.0);
    }
}

/// Without `aggregate_interval` nothing is sampled and the summary has no `aggregate` (the
/// results of existing scenarios do not change).
#[test]
fn aggregate_is_off_by_default() {
    let r = run(&one_reno("packet", ""));
    assert!(r.summary.aggregate.is_none());
    let json = serde_json::to_string(&r.summary).unwrap();
    assert!(!json.contains("aggregate"));
}

/// The spread across flows is the population variance of the summary's flow throughputs.
#[test]
fn flow_throughput_spread_matches_the_flows() {
    let text = one_reno("packet", "aggregate_interval = 1.0").replace(
        "cc = \"reno\"\nrtt = \"50ms\"",
        "count = 3\ncc = \"reno\"\nrtt = \"50ms\"\n[[flows]]\ncc = \"reno\"\nrtt = \"150ms\"",
    );
    let s = run(&text).summary;
    let a = s.aggregate.as_ref().unwrap();
    let t: Vec<f64> = s.flows.iter().map(|f| f.throughput_pps).collect();
    let m = t.iter().sum::<f64>() / t.len() as f64;
    let v = t.iter().map(|x| (x - m) * (x - m)).sum::<f64>() / t.len() as f64;
    assert!((a.flow_throughput_mean_pps - m).abs() < 1e-9 * m);
    assert!((a.flow_throughput_var_pps2 - v).abs() < 1e-9 * v.max(1.0));
    // The 150 ms flow gets less than the 50 ms ones (RTT unfairness): the variance is not 0.
    assert!(a.flow_throughput_cv > 0.05, "{}", a.flow_throughput_cv);
}

#[test]
fn aggregate_interval_is_validated() {
    for (v, want) in [
        ("0", "run.aggregate_interval"),
        ("\"-1s\"", "run.aggregate_interval"),
        ("1e-9", "run.aggregate_interval"),
    ] {
        let e = scenario_error(&one_reno("fluid", &format!("aggregate_interval = {v}")));
        println!("{v}: {e}");
        assert!(e.starts_with(want), "{v}: {e}");
        assert!(!e.contains('\n'));
    }
}

/// Dynamic traffic: only the pool's slots that carry a flow count. Before the first arrival the
/// aggregate is zero, and over the run it stays of the order of what the link carries (Little:
/// the sending flows' cwnd/RTT is their rate, at most about the link's rate plus what queues),
/// not the 200 slots' initial windows (200 × 10 / 20 ms = 100,000 packets/s).
#[test]
fn aggregate_of_dynamic_traffic_counts_the_flows_that_send() {
    let r = run(r#"
engine = "packet"
[dumbbell]
capacity = "1Gbps"
buffer = { bdp_fraction = 1.0, reference_rtt = "20ms" }
[[flows]]
name = "web"
cc = "reno"
rtt = "20ms"
access_capacity = "100Mbps"
arrivals = { rate = 50, min_size = "40KB", mean_size = "700KB", max_active = 200 }
[run]
duration = "20s"
warmup = "2s"
aggregate_interval = "0.1s"
"#);
    let a = r.summary.aggregate.as_ref().expect("aggregate sampled");
    assert_eq!(a.rate_pps[0], 0.0, "no flow sends at t = 0");
    let capacity_pps = 1e9 / 12000.0;
    assert!(a.mean_pps < 2.0 * capacity_pps, "mean {} pps", a.mean_pps);
}
