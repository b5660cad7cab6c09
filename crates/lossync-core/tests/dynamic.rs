//! Dynamic traffic in the packet engine (issue 12 item 4): flows arriving as a Poisson process
//! with Pareto sizes (seed 002: 50 flows/s, 40 KB minimum, 700 KB mean), sending their size and
//! finishing in a bounded pool of slots. Checked against numbers from outside the code: the
//! Poisson count's standard error, the Pareto mean and variance in closed form, slow start's
//! doubling per RTT on an idle link, and packet conservation.

mod common;

use common::{run, scenario, scenario_error};
use lossync_core::metrics::CompletionRecord;
use lossync_core::scenario::{from_toml, write::to_toml};
use std::path::Path;

/// A dumbbell of `capacity` and `buffer` packets with one dynamic Reno group.
fn dyn_toml(capacity: &str, buffer: u32, arrivals: &str, duration_s: f64, extra: &str) -> String {
    format!(
        r#"
engine = "packet"
[dumbbell]
capacity = "{capacity}"
buffer = {{ packets = {buffer} }}
[[flows]]
name = "web"
cc = "reno"
rtt = "20ms"
arrivals = {arrivals}
{extra}
[run]
duration = "{duration_s}s"
warmup = "0s"
seed = 11
"#
    )
}

/// (a) The number of arrivals in T seconds is Poisson with mean λT and standard deviation
/// sqrt(λT): the count is within 3 of those of λT.
#[test]
fn arrivals_count_within_three_standard_errors_of_the_rate() {
    let (rate, t) = (200.0, 50.0);
    let r = run(&dyn_toml(
        "10Gbps",
        10_000,
        &format!("{{ rate = {rate}, shape = 3, min_size = \"15KB\", max_active = 1000 }}"),
        t,
        "",
    ));
    let d = &r.summary.dynamic[0];
    let expected = rate * t;
    let se = expected.sqrt();
    let n = d.arrivals as f64;
    eprintln!("arrivals {n}, expected {expected} ± {se}");
    assert!(
        (n - expected).abs() < 3.0 * se,
        "{n} arrivals, expected {expected} ± {se}"
    );
    assert_eq!(d.refused, 0);
    assert!((d.arrival_rate_per_s - n / t).abs() < 1e-12);
    // Little's law as a sanity bound: few flows of about 10 packets at 10 Gb/s are active.
    assert!(d.active_mean < 20.0, "{}", d.active_mean);
}

/// (b) Pareto sizes with shape α = 3 (finite variance): the mean of the sizes is within 3
/// standard errors of α·x_m/(α−1), with Var = x_m²·α/((α−1)²(α−2)); none is below x_m, and each
/// is sent as ceil(size / packet size) packets.
#[test]
fn pareto_sizes_match_the_closed_form_mean_and_respect_the_minimum() {
    let (alpha, xm, t): (f64, f64, f64) = (3.0, 40e3, 60.0);
    let r = run(&dyn_toml(
        "10Gbps",
        10_000,
        &format!("{{ rate = 100, shape = {alpha}, min_size = \"{xm}B\", max_active = 1000 }}"),
        t,
        "",
    ));
    // Flows arriving before T − 1 s have all finished on this idle link (their FCTs are tens of
    // ms), so their sizes are an unbiased sample (a cut at completion would favour short ones).
    let sizes: Vec<f64> = r
        .completions
        .iter()
        .filter(|c| c.start_s < t - 1.0)
        .map(|c| c.size_bytes)
        .collect();
    let n = sizes.len() as f64;
    assert!(n > 5000.0, "{n}");
    let mean = alpha * xm / (alpha - 1.0);
    let sd = (xm * xm * alpha / ((alpha - 1.0).powi(2) * (alpha - 2.0))).sqrt();
    let m = sizes.iter().sum::<f64>() / n;
    eprintln!("{n} sizes: mean {m}, expected {mean} ± {}", sd / n.sqrt());
    assert!(
        (m - mean).abs() < 3.0 * sd / n.sqrt(),
        "mean {m}, expected {mean} ± {}",
        sd / n.sqrt()
    );
    assert!(sizes.iter().all(|&s| s >= xm));
    for c in &r.completions {
        assert_eq!(c.size_pkts, (c.size_bytes / 1500.0).ceil() as u64);
    }
}

/// Seed 002's sizes (40 KB minimum, 700 KB mean) resolve to α = 700/(700 − 40) ≈ 1.0606.
#[test]
fn seed_002_sizes_give_the_pareto_shape() {
    let sc = scenario(&dyn_toml(
        "1Gbps",
        1000,
        "{ rate = 50, min_size = \"40KB\", mean_size = \"700KB\" }",
        1.0,
        "",
    ));
    let a = sc.flows[0].arrivals.unwrap();
    assert!((a.shape - 700.0 / 660.0).abs() < 1e-12);
    assert!((a.mean_size_bytes() - 700e3).abs() < 1e-6);
    assert_eq!(sc.flows.len(), 1000, "the default pool");
    assert!(
        sc.flows[0].slow_start,
        "a new connection slow-starts (RFC 5681)"
    );
}

/// The closed form of a lone flow's FCT on an idle link in slow start (an ACK per packet, so
/// the window doubles each RTT from IW): it needs n = ceil(log2(S/IW + 1)) rounds, the last
/// one holding m = S − IW·(2^(n−1) − 1) packets that leave the bottleneck back to back. The
/// base RTT includes one packet's serialization at the bottleneck (the packet engine's RTT
/// budget, docs/packet.md), so the first of them is ACKed n·RTT after the start and the last
/// (m − 1)/C later.
fn slow_start_fct_s(size_pkts: u64, iw: f64, rtt_s: f64, capacity_pps: f64) -> (f64, u32) {
    let s = size_pkts as f64;
    let n = (s / iw + 1.0).log2().ceil().max(1.0);
    let m = s - iw * (2f64.powf(n - 1.0) - 1.0);
    (n * rtt_s + (m - 1.0) / capacity_pps, n as u32)
}

/// (c) A single flow of known size on an idle link finishes in about slow-start rounds × RTT
/// plus its last round's packets at the bottleneck's rate. Tolerance: one bottleneck packet time
/// per round (84 µs for 7 rounds at 1 Gb/s, under 0.1% of the FCT): the closed form ignores the
/// ACK clock's offset of about a packet time per round and the access link's serialization
/// (1.2 µs per packet at the default 10 Gb/s). The window stays below the BDP (1667 packets)
/// and the buffer, so nothing is lost.
#[test]
fn a_lone_flow_finishes_in_slow_start_rounds_times_rtt_plus_its_last_round() {
    let capacity_pps = 1e9 / (1500.0 * 8.0);
    for min_bytes in [1000.0, 15_000.0, 16_500.0, 450_000.0, 1_500_000.0] {
        // Nearly fixed sizes (α = 1000: sizes within 1% of the minimum with probability 1−e^−10),
        // 0.2 flows/s: each flow is alone unless two arrive within a second (checked).
        let r = run(&dyn_toml(
            "1Gbps",
            4000,
            &format!("{{ rate = 0.2, shape = 1000, min_size = \"{min_bytes}B\", max_active = 4 }}"),
            100.0,
            "",
        ));
        let cs = &r.completions;
        assert!(cs.len() >= 5, "{}", cs.len());
        let alone = |c: &CompletionRecord| {
            cs.iter()
                .all(|o| std::ptr::eq(o, c) || (o.start_s - c.start_s).abs() > 1.0)
        };
        let mut checked = 0;
        for c in cs.iter().filter(|c| alone(c)) {
            let (fct, rounds) = slow_start_fct_s(c.size_pkts, 10.0, 0.02, capacity_pps);
            let tol = rounds as f64 / capacity_pps;
            eprintln!(
                "{} packets: FCT {} s, closed form {fct} s",
                c.size_pkts, c.fct_s
            );
            assert!(
                (c.fct_s - fct).abs() <= tol,
                "{} packets: FCT {} s, closed form {fct} s ± {tol}",
                c.size_pkts,
                c.fct_s
            );
            assert_eq!(c.dropped_pkts, 0);
            checked += 1;
        }
        assert!(checked >= 3, "{checked}");
    }
}

/// (d) Conservation, on a congested link (a 100 Mb/s bottleneck with a 30-packet buffer, offered
/// 90% of its capacity): a finished flow whose packets have all left the network sent exactly
/// as many as reached its receiver plus those dropped, and delivered its size, each packet once;
/// retransmissions are the excess of sends over the size.
#[test]
fn packets_of_finished_flows_are_conserved() {
    // Load = rate · mean size · 8 / C = 25 · 450 KB · 8 / 100 Mb/s = 0.9.
    let r = run(&dyn_toml(
        "100Mbps",
        30,
        "{ rate = 25, shape = 1.5, mean_size = \"450KB\", max_active = 2000 }",
        40.0,
        "",
    ));
    let done: Vec<&CompletionRecord> = r.completions.iter().filter(|c| c.drained).collect();
    assert!(done.len() > 500, "{}", done.len());
    let dropped: u64 = done.iter().map(|c| c.dropped_pkts).sum();
    assert!(dropped > 100, "the test needs losses: {dropped}");
    for c in &done {
        assert_eq!(c.sent_pkts, c.received_pkts + c.dropped_pkts, "{c:?}");
        assert_eq!(c.delivered_pkts, c.size_pkts, "{c:?}");
        assert!(c.sent_pkts >= c.size_pkts + c.dropped_pkts.min(1), "{c:?}");
    }
    // Every drop at the link is a drop of some flow: the link's count bounds the flows'.
    let link_drops = r.summary.links[0].drops_pkts;
    assert!(dropped as f64 <= link_drops, "{dropped} > {link_drops}");
    // The summary's FCT counts are those of the size classes together.
    let fct = &r.summary.dynamic[0].fct;
    assert_eq!(
        fct[0].flows,
        fct[1..].iter().map(|c| c.flows).sum::<usize>()
    );
    assert!(fct[0].fct_p50_s <= fct[0].fct_p90_s && fct[0].fct_p90_s <= fct[0].fct_p99_s);
}

/// The active-flows series counts flows sending: never more than the pool, and its mean is
/// the summary's.
#[test]
fn active_flows_series_is_recorded() {
    let r = run(&dyn_toml(
        "100Mbps",
        100,
        "{ rate = 20, shape = 1.5, mean_size = \"300KB\", max_active = 50 }",
        20.0,
        "",
    ));
    let a = r.series.get("active_flows.web").expect("the column");
    assert_eq!(a.len(), r.series.get("time_s").unwrap().len());
    assert!(a.iter().all(|&x| (0.0..=50.0).contains(&x)));
    let mean = a.iter().sum::<f64>() / a.len() as f64;
    assert!((mean - r.summary.dynamic[0].active_mean).abs() < 1e-9);
}

/// A pool too small for the arrivals refuses some and says so, naming the field to raise.
#[test]
fn a_full_pool_refuses_arrivals_with_a_warning() {
    let r = run(&dyn_toml(
        "10Mbps",
        50,
        "{ rate = 50, shape = 1.5, mean_size = \"300KB\", max_active = 2 }",
        10.0,
        "",
    ));
    let d = &r.summary.dynamic[0];
    assert!(d.refused > 0);
    assert!(r
        .summary
        .warnings
        .iter()
        .any(|w| w.starts_with("flows[0].arrivals.max_active")));
}

/// Same seed, same flows; the resolved scenario round-trips through the writer.
#[test]
fn dynamic_runs_are_deterministic_and_round_trip() {
    let text = dyn_toml(
        "100Mbps",
        100,
        "{ rate = 30, min_size = \"40KB\", mean_size = \"700KB\", max_active = 100 }",
        10.0,
        "",
    );
    let (a, b) = (run(&text), run(&text));
    assert_eq!(a.completions, b.completions);
    assert!(!a.completions.is_empty());
    let sc = scenario(&text);
    let back = from_toml(&to_toml(&sc), Path::new(".")).unwrap();
    assert_eq!(sc, back);
}

/// (e) Bad input: one-line errors naming the field.
#[test]
fn bad_arrivals_are_refused_naming_the_field() {
    let bad =
        |arrivals: &str, extra: &str| scenario_error(&dyn_toml("1Gbps", 100, arrivals, 1.0, extra));
    let cases = [
        (
            "{ rate = 0, shape = 2, min_size = \"40KB\" }",
            "",
            "flows[0].arrivals.rate",
        ),
        (
            "{ rate = -5, shape = 2, min_size = \"40KB\" }",
            "",
            "flows[0].arrivals.rate",
        ),
        (
            "{ rate = 50, shape = 1, mean_size = \"700KB\" }",
            "",
            "flows[0].arrivals.shape",
        ),
        (
            "{ rate = 50, shape = 0.5, mean_size = \"700KB\" }",
            "",
            "flows[0].arrivals.shape",
        ),
        (
            "{ rate = 50, shape = 0, min_size = \"40KB\" }",
            "",
            "flows[0].arrivals.shape",
        ),
        (
            "{ rate = 50, shape = 2, min_size = \"0B\" }",
            "",
            "flows[0].arrivals.min_size",
        ),
        (
            "{ rate = 50, shape = 2, mean_size = \"-1KB\" }",
            "",
            "flows[0].arrivals.mean_size",
        ),
        (
            "{ rate = 50, min_size = \"700KB\", mean_size = \"40KB\" }",
            "",
            "flows[0].arrivals.mean_size",
        ),
        (
            "{ rate = 50, shape = 2, min_size = \"40KB\", mean_size = \"700KB\" }",
            "",
            "flows[0].arrivals",
        ),
        ("{ rate = 50, shape = 2 }", "", "flows[0].arrivals"),
        (
            "{ rate = 50, shape = 2, min_size = \"40KB\", max_active = 0 }",
            "",
            "flows[0].arrivals.max_active",
        ),
        (
            "{ rate = 50, shape = 2, min_size = \"40KB\" }",
            "count = 3",
            "flows[0].count",
        ),
        (
            "{ rate = 50, shape = 2, min_size = \"40KB\" }",
            "start = 1.0",
            "flows[0].start",
        ),
        (
            "{ rate = 50, shape = 2, min_size = \"40KB\", size = 3 }",
            "",
            "size",
        ),
    ];
    for (arrivals, extra, field) in cases {
        let e = bad(arrivals, extra);
        assert!(e.contains(field), "{arrivals} {extra}: {e}");
        assert!(!e.contains('\n'), "{e}");
    }
    // The fluid engine has no dynamic traffic.
    let sc = scenario(
        &dyn_toml(
            "1Gbps",
            100,
            "{ rate = 5, shape = 2, min_size = \"40KB\" }",
            1.0,
            "",
        )
        .replace("engine = \"packet\"", "engine = \"fluid\""),
    );
    let e = lossync_core::run(&sc).expect_err("refused").to_string();
    assert!(e.starts_with("flows[0].arrivals"), "{e}");
}

/// Conservation holds whatever removes packets: RED, random loss, a burst assembler losing whole
/// bursts, a reverse port where ACKs queue and drop, delayed ACKs and pacing (slots are reused
/// only once their count of packets in the network is back to 0; a miscount would underflow
/// and panic in a debug build, or break the equality).
#[test]
fn conservation_holds_with_every_kind_of_drop() {
    let r = run(r#"
engine = "packet"
[[links]]
name = "a"
capacity = "100Mbps"
buffer = { packets = 60 }
queue = { discipline = "red", min_th = 10, max_th = 40 }
loss_rate = 0.001
reverse = { capacity = "10Mbps", buffer = { packets = 20 }, queue = { discipline = "droptail" } }
[[links]]
name = "b"
capacity = "100Mbps"
buffer = { packets = 60 }
assembler = { timer = "1ms", policy = "mixed" }
burst_loss = 0.01
[[flows]]
name = "paced"
cc = "cubic"
rtt = "30ms"
path = ["a", "b"]
pacing = true
delayed_ack = true
arrivals = { rate = 10, shape = 1.5, mean_size = "300KB", max_active = 100 }
[[flows]]
name = "plain"
cc = "reno"
rtt = "30ms"
path = ["a", "b"]
access_capacity = "20Mbps"
arrivals = { rate = 10, shape = 1.5, mean_size = "300KB", max_active = 100 }
[run]
duration = "30s"
warmup = "0s"
"#);
    for g in 0..2 {
        let done: Vec<&CompletionRecord> = r
            .completions
            .iter()
            .filter(|c| c.group == g && c.drained)
            .collect();
        assert!(done.len() > 100, "group {g}: {}", done.len());
        assert!(
            done.iter().map(|c| c.dropped_pkts).sum::<u64>() > 10,
            "group {g}"
        );
        for c in done {
            assert_eq!(c.sent_pkts, c.received_pkts + c.dropped_pkts, "{c:?}");
            assert_eq!(c.delivered_pkts, c.size_pkts, "{c:?}");
        }
    }
    assert_eq!(r.summary.dynamic.len(), 2);
    assert!(r.series.get("active_flows.paced").is_some());
    assert!(r.series.get("active_flows.plain").is_some());
}

/// The pool is counted in the packet engine's memory estimate, which names `max_active` as the
/// field to lower when the slots dominate; a run the machine cannot hold is refused before
/// anything is allocated (one line, naming the field).
#[test]
fn the_pool_is_in_the_memory_estimate() {
    let sc = scenario(&dyn_toml(
        "10Gbps",
        1000,
        "{ rate = 50, shape = 1.5, mean_size = \"700KB\", max_active = 100000 }",
        1.0,
        "",
    ));
    let e = lossync_core::packet::memory_estimate(&sc);
    assert_eq!(e.field, "flows[0].arrivals.max_active", "{e:?}");
    // Each slot holds a connection's state and pre-sized rings: kilobytes, not bytes.
    assert!(e.bytes > 100_000.0 * 1e3, "{e:?}");
    if e.bytes > lossync_core::memory::limit_bytes() {
        let err = lossync_core::PacketEngine::new(&sc)
            .err()
            .expect("refused")
            .to_string();
        assert!(err.starts_with("flows[0].arrivals.max_active"), "{err}");
        assert!(!err.contains('\n'));
    } // 10^6 flows/s for 10^5 s: 10^11 finished-flow records (terabytes) are refused up front.
    let many = scenario(&dyn_toml(
        "10Gbps",
        1000,
        "{ rate = 1e6, shape = 1.5, mean_size = \"1KB\", max_active = 10 }",
        1e5,
        "",
    ));
    let e = lossync_core::packet::memory_estimate(&many);
    assert_eq!(e.field, "flows[0].arrivals.rate", "{e:?}");
    let err = lossync_core::PacketEngine::new(&many)
        .err()
        .expect("refused")
        .to_string();
    assert!(err.starts_with("flows[0].arrivals.rate"), "{err}");
}
