//! Packet engine against numbers from outside the code: the closed form of docs/model.md §4.2 for a
//! single Reno flow, exact packet conservation, determinism, and fairness between identical flows.
//! The speed measurement is an ignored test:
//! `cargo test --release --test packet -- --ignored --nocapture packet_speed`.

mod common;

// `run` runs on the engine the scenario names: every scenario here names the packet engine (but
// the tests that run both on purpose).
use common::{
    assert_near, packet_10_reno_toml, packet_engine as engine, reno_closed_form, run, scenario,
};
use lossync_core::{metrics::Summary, PacketEngine};

/// One Reno flow, 100 Mb/s, 100 ms, 1500 B: BDP = 8333.3 pkt/s × 0.1 s = 833.3 packets.
fn single_reno(buffer_pkts: f64, duration_s: f64, warmup_s: f64) -> Summary {
    single_reno_with(buffer_pkts, duration_s, warmup_s, "", "")
}

/// `single_reno` with extra lines for the dumbbell and the flow group.
fn single_reno_with(
    buffer_pkts: f64,
    duration_s: f64,
    warmup_s: f64,
    dumbbell: &str,
    flow: &str,
) -> Summary {
    run(&format!(
        r#"
engine = "packet"
[dumbbell]
capacity = "100Mbps"
buffer = {{ packets = {buffer_pkts} }}
{dumbbell}
[[flows]]
cc = "reno"
rtt = "100ms"
slow_start = true
{flow}
[run]
duration = "{duration_s}s"
warmup = "{warmup_s}s"
"#
    ))
    .summary
}

#[test]
fn packet_single_reno_flow_matches_the_closed_form() {
    let mut report = Vec::new();
    for rho in [0.1, 0.25, 0.5, 1.0] {
        let b = (rho * 833.0_f64).round();
        let s = single_reno(b, 600.0, 60.0);
        let want = reno_closed_form(rho);
        let f = &s.flows[0];
        report.push(format!(
            "ρ={rho} B={b}: U={:.4} closed form {want:.4}; events {}, reductions {}, loss {:.2e}",
            s.utilization, s.congestion_events, f.reductions, s.loss_rate
        ));
        // A sawtooth period is P(1+ρ)/2 RTTs of 0.1..0.1(1+ρ) s, 46–125 s: at least 3 in 540 s.
        assert!(
            s.congestion_events >= 3,
            "ρ={rho}: only {} events",
            s.congestion_events
        );
        // One window reduction per congestion event (RFC 6675), no timeouts to add more.
        assert_eq!(f.reductions, s.congestion_events as f64, "ρ={rho}");
        assert_near(
            s.utilization,
            want,
            0.02,
            format_args!("ρ={rho}: U\n{}", report.join("\n")),
        );
    }
    println!("{}", report.join("\n"));
}

/// Delayed ACKs halve the ACKs, but with byte counting (RFC 3465) the window still grows by one
/// packet per RTT; ACKs serialized on a modelled reverse direction are part of the base RTT. The
/// closed form holds in both cases.
#[test]
fn packet_closed_form_holds_with_delayed_acks_and_a_reverse_direction() {
    for (label, dumbbell, flow) in [
        ("delayed ACKs", "", "delayed_ack = true"),
        ("reverse direction", "reverse = true", ""),
    ] {
        for rho in [0.25, 1.0] {
            let b = (rho * 833.0_f64).round();
            let s = single_reno_with(b, 600.0, 60.0, dumbbell, flow);
            let want = reno_closed_form(rho);
            assert!(s.congestion_events >= 3, "{label} ρ={rho}");
            assert_near(
                s.utilization,
                want,
                0.02,
                format_args!("{label} ρ={rho}: U"),
            );
        }
    }
}

/// Two-way traffic (Zhang, Shenker, Clark, "Observations on the dynamics of a congestion
/// control algorithm: the effects of two-way traffic", SIGCOMM 1991): ACKs queued behind data
/// arrive in bursts (ACK compression) and utilization falls below the one-way case. The
/// dumbbell is symmetric, so both directions must come out alike; packets are conserved per
/// direction.
#[test]
fn packet_two_way_traffic_compresses_acks_and_costs_utilization() {
    let doc = |reverse_flows: &str| {
        format!(
            r#"
engine = "packet"
[dumbbell]
capacity = "100Mbps"
buffer = {{ bdp_fraction = 0.5 }}
[[flows]]
count = 4
cc = "reno"
rtt = "80ms..140ms"
{reverse_flows}
[run]
duration = "300s"
warmup = "60s"
"#
        )
    };
    let one_way = run(&doc("")).summary;
    let two_way = run(&doc(
        "[[flows]]\ncount = 4\ncc = \"reno\"\nrtt = \"80ms..140ms\"\ndirection = \"reverse\"",
    ))
    .summary;
    let (fwd, rev) = (&two_way.links[0], &two_way.links[1]);
    assert_eq!(rev.name, "bottleneck-reverse");
    assert!(
        two_way.utilization < one_way.utilization - 0.03,
        "two-way U={} one-way U={}",
        two_way.utilization,
        one_way.utilization
    );
    assert_near(
        fwd.utilization,
        rev.utilization,
        0.03,
        "forward vs reverse utilization",
    );
    // Each direction carries its own flows' data: deliveries per second match departures.
    let goodput = |range: std::ops::Range<usize>| -> f64 {
        two_way.flows[range].iter().map(|f| f.throughput_pps).sum()
    };
    let cap = 1e8 / 12_000.0;
    for (link, range) in [(fwd, 0..4), (rev, 4..8)] {
        let delivered = goodput(range);
        assert_near(
            delivered,
            link.utilization * cap,
            0.01 * cap,
            format_args!("{}: goodput vs departures", link.name),
        );
    }
}

const TWO_FLOWS: &str = r#"
engine = "packet"
[dumbbell]
capacity = "100Mbps"
buffer = { bdp_fraction = 0.25 }
[[flows]]
count = 2
cc = "reno"
rtt = "50ms"
slow_start = true
start = [0, 20]
[run]
duration = "600s"
warmup = "60s"
record_interval = "1s"
"#;

#[test]
fn packet_identical_flows_share_fairly() {
    let r = run(TWO_FLOWS);
    let s = &r.summary;
    println!(
        "two Reno flows: J = {:.4}, U = {:.4}, throughputs {:.1} / {:.1} pkt/s, events {}, sync {:.3}",
        s.jain,
        s.utilization,
        s.flows[0].throughput_pps,
        s.flows[1].throughput_pps,
        s.congestion_events,
        s.sync_rate_mean
    );
    assert!(s.jain > 0.95, "J = {}", s.jain);
    assert!(s.congestion_events > 10);
    // Each event is 1 or 2 flows losing: the fraction is in [1/2, 1].
    assert!((0.5..=1.0).contains(&s.sync_rate_mean));
    assert_eq!(s.links[0].sync_histogram[0], 0);
    // The second flow started 20 s late with a fresh slow start, yet converged.
    // One sample per second, from 0 to 600 s.
    assert_eq!(r.series.get("time_s").unwrap().len(), 601);
    assert_eq!(r.series.get("cwnd_pkts.1").unwrap().len(), 601);
}

#[test]
fn packet_same_seed_same_summary() {
    // Randomness in every place the engine draws: RED, random loss, uniform start times.
    let text = |seed: u64| {
        format!(
            r#"
engine = "packet"
[dumbbell]
capacity = "100Mbps"
buffer = {{ packets = 200 }}
queue = {{ discipline = "red", min_th = 30, max_th = 120 }}
loss_rate = 1e-4
[[flows]]
count = 4
cc = "cubic"
rtt = "30ms..90ms"
slow_start = true
start = {{ uniform = ["0s", "3s"] }}
[run]
duration = "60s"
warmup = "10s"
seed = {seed}
"#
        )
    };
    let json = |seed| serde_json::to_string(&run(&text(seed)).summary).unwrap();
    assert_eq!(json(7), json(7));
    assert_ne!(json(7), json(8));
}

#[test]
fn packet_a_trace_holds_every_departure_and_changes_nothing() {
    // Both directions of the link (ACKs cross the reverse one), RED and random loss.
    let text = r#"
engine = "packet"
[dumbbell]
capacity = "10Mbps"
buffer = { packets = 40 }
queue = { discipline = "red", min_th = 10, max_th = 30 }
loss_rate = 1e-3
reverse = true
[[flows]]
count = 3
cc = "cubic"
rtt = "20ms..60ms"
slow_start = true
[run]
duration = "5s"
warmup = "0s"
"#;
    let traced = |max_packets: usize| {
        let mut e = engine(text);
        e.trace_link(0, max_packets).unwrap();
        e.advance(f64::INFINITY);
        let trace = e.trace().unwrap().clone();
        (e.finish(), trace)
    };
    let (r, trace) = traced(usize::MAX);
    let plain = run(text);
    let json = |s| serde_json::to_string(s).unwrap();
    assert_eq!(json(&r.summary), json(&plain.summary));
    let l = &r.summary.links[0];
    let data = trace.records.iter().filter(|t| !t.is_ack).count();
    assert_eq!(data as f64, l.departures_pkts);
    assert!(l.drops_pkts > 10.0 && trace.records.len() > data + 1000);
    assert_eq!(trace.seen, trace.records.len() as u64);
    assert!(!trace.capped());
    assert!(trace
        .records
        .windows(2)
        .all(|w| w[0].time_ps <= w[1].time_ps));
    let (_, capped) = traced(100);
    assert_eq!(capped.records[..], trace.records[..100]);
    assert!(capped.capped() && capped.seen == trace.seen);
}

#[test]
fn packet_conservation_is_exact() {
    // Stop in the middle of busy periods, with drop-tail and with RED plus random loss.
    for queue in [
        "",
        "queue = { discipline = \"red\", min_th = 20, max_th = 60 }\nloss_rate = 0.001\n",
    ] {
        let text = format!(
            r#"
engine = "packet"
[dumbbell]
capacity = "100Mbps"
buffer = {{ packets = 100 }}
{queue}
[[flows]]
count = 3
cc = "cubic"
rtt = "20ms..60ms"
slow_start = true
[run]
duration = "30.0001234s"
"#
        );
        let mut e = engine(&text);
        e.advance(15.000_003);
        let drops_so_far = e.drop_log().len();
        let r = e.finish();
        let l = &r.summary.links[0];
        println!("{queue:?}: {l:?}");
        assert!(l.drops_pkts > 0.0 && l.departures_pkts > 5e4);
        assert!(l.queue_end_pkts > 0.0, "stopped while the queue is busy");
        assert_eq!(
            l.arrivals_pkts,
            l.departures_pkts + l.drops_pkts + l.queue_end_pkts - l.queue_start_pkts
        );
        assert_eq!(drops_so_far as f64, l.drops_pkts);
        assert!(l.max_queue_pkts <= 100.0);
        // Goodput never exceeds what the link carried.
        let delivered: f64 = r.summary.flows.iter().map(|f| f.throughput_pps).sum();
        assert!(delivered <= l.utilization * 8333.34, "{delivered}");
    }
}

/// Three links in a row, each modelled both ways, with flows entering and leaving mid-path in
/// both directions, RED and random loss on one link: every port's count is exact, forward and
/// reverse, stopped in the middle of busy periods.
#[test]
fn packet_conservation_is_exact_on_every_link_of_a_network() {
    let text = r#"
engine = "packet"
[[links]]
name = "a"
capacity = "100Mbps"
buffer = { packets = 80 }
delay = "5ms"
reverse = true
[[links]]
name = "b"
capacity = "60Mbps"
buffer = { packets = 50 }
delay = "2ms"
queue = { discipline = "red", min_th = 10, max_th = 40 }
loss_rate = 0.0005
reverse = { capacity = "60Mbps", buffer = { packets = 50 }, queue = { discipline = "droptail" } }
[[links]]
name = "c"
capacity = "80Mbps"
buffer = { packets = 60 }
delay = "3ms"
reverse = true
[[flows]]
name = "long"
count = 2
cc = "cubic"
rtt = "40ms..60ms"
path = ["a", "b", "c"]
slow_start = true
[[flows]]
name = "ab"
cc = "reno"
rtt = "30ms"
path = ["a", "b"]
delayed_ack = true
[[flows]]
name = "bc"
cc = "htcp"
rtt = "35ms"
path = ["b", "c"]
pacing = true
[[flows]]
name = "back"
count = 2
cc = "reno"
rtt = "50ms"
path = ["a", "b", "c"]
direction = "reverse"
slow_start = true
[run]
duration = "20.0000777s"
"#;
    let mut e = engine(text);
    e.advance(12.000_001);
    let drops_so_far = e.drop_log().len();
    let r = e.finish();
    let s = &r.summary;
    assert_eq!(s.links.len(), 6);
    let mut drops = 0.0;
    for l in &s.links {
        println!("{l:?}");
        assert!(l.arrivals_pkts > 1e4, "{}", l.name);
        assert_eq!(
            l.arrivals_pkts,
            l.departures_pkts + l.drops_pkts + l.queue_end_pkts - l.queue_start_pkts,
            "{}",
            l.name
        );
        drops += l.drops_pkts;
    }
    assert!(
        s.links.iter().any(|l| l.queue_end_pkts > 0.0),
        "stopped while busy"
    );
    assert_eq!(drops_so_far as f64, drops, "every data drop is at a port");
    assert!(s.flows.iter().all(|f| f.throughput_pps > 0.0));
}

/// The parking lot (Floyd 1991, "Connections with multiple congested gateways in packet-switched
/// networks"): a flow crossing two congested links gets less than the flows crossing one of them
/// each, and the engines agree on the links' use.
#[test]
fn packet_parking_lot_long_flow_gets_less() {
    let text = r#"
[[links]]
name = "a"
capacity = "100Mbps"
delay = "10ms"
buffer = { bdp_fraction = 0.25, reference_rtt = "100ms" }
[[links]]
name = "b"
capacity = "100Mbps"
delay = "10ms"
buffer = { bdp_fraction = 0.25, reference_rtt = "100ms" }
[[flows]]
name = "long"
cc = "reno"
rtt = "100ms"
path = ["a", "b"]
[[flows]]
name = "short-a"
cc = "reno"
rtt = "100ms"
path = ["a"]
[[flows]]
name = "short-b"
cc = "reno"
rtt = "100ms"
path = ["b"]
[run]
duration = "200s"
warmup = "20s"
"#;
    let packet = run(&format!("engine = \"packet\"\n{text}")).summary;
    let fluid = run(text).summary;
    let [long, a, b] = [0, 1, 2].map(|i| packet.flows[i].throughput_pps);
    assert!(long < 0.8 * a && long < 0.8 * b, "{long} {a} {b}");
    for (p, f) in packet.links.iter().zip(&fluid.links) {
        assert_near(p.utilization, f.utilization, 0.03, &p.name);
    }
}

/// Congestion events recounted from the drop log, independently of the engine's online
/// clustering: drops closer than the mean base RTT belong to one event (docs/model.md §5.3).
#[test]
fn packet_events_agree_with_the_drop_log() {
    let text = r#"
engine = "packet"
[dumbbell]
capacity = "100Mbps"
buffer = { bdp_fraction = 0.1 }
[[flows]]
count = 4
cc = "reno"
rtt = "40ms..100ms"
slow_start = true
start = [0, 1, 2, 3]
[run]
duration = "300s"
warmup = "30s"
"#;
    let mut e = engine(text);
    e.advance(300.0);
    assert!(
        e.pending_events() < 4 * 4 + 8,
        "{} pending",
        e.pending_events()
    );
    let drops = e.drop_log().to_vec();
    let r = e.finish();
    let tau = (0.04 + 0.06 + 0.08 + 0.1) / 4.0;
    let mut hist = [0u64; 5];
    let mut sync_sum = 0.0;
    let mut k = 0;
    while k < drops.len() {
        let start = drops[k].0;
        let mut lost = [false; 4];
        lost[drops[k].1] = true;
        while k + 1 < drops.len() && drops[k + 1].0 - drops[k].0 < tau - 1e-9 {
            k += 1;
            lost[drops[k].1] = true;
        }
        k += 1;
        if start >= 30.0 {
            let n = lost.iter().filter(|&&b| b).count();
            hist[n] += 1;
            sync_sum += n as f64 / 4.0;
        }
    }
    let l = &r.summary.links[0];
    assert_eq!(l.sync_histogram, hist.to_vec());
    let events: u64 = hist.iter().sum();
    assert_eq!(l.congestion_events, events);
    assert!(events > 20);
    assert!((l.sync_rate_mean - sync_sum / events as f64).abs() < 1e-12);
    assert_eq!(r.events.len() as u64, events);
    assert!(r
        .events
        .iter()
        .all(|e| e.candidates == 4 && e.signalled == 0));
}

#[test]
fn packet_statistics_start_at_the_first_drop_after_the_warm_up() {
    let text = format!("{TWO_FLOWS}from_first_congestion = true\n").replace("600s", "100s");
    let mut e = engine(&text);
    e.advance(100.0);
    let first = e
        .drop_log()
        .iter()
        .map(|&(t, _)| t)
        .find(|&t| t >= 60.0)
        .expect("a drop after the warm-up");
    let s = e.finish().summary;
    assert_eq!(s.measured_from_s, first);
}

/// Every variant, drop-tail and RED with random loss, staggered starts, small and large buffers:
/// runs to the end (in the test profile, with the engine's debug checks of the scoreboard) and
/// keeps its invariants.
#[test]
fn packet_every_variant_runs_and_keeps_its_invariants() {
    for variant in [
        "reno",
        "highspeed",
        "scalable",
        "cubic",
        "htcp",
        "bic",
        "ghstcp",
    ] {
        for (buffer, queue) in [
            ("{ packets = 5 }", ""),
            ("{ bdp_fraction = 0.5 }", ""),
            (
                "{ bdp_fraction = 0.5 }",
                "queue = { discipline = \"red\", min_th = 20, max_th = 100 }\nloss_rate = 1e-4\n",
            ),
        ] {
            let text = format!(
                r#"
engine = "packet"
[dumbbell]
capacity = "200Mbps"
buffer = {buffer}
{queue}
[[flows]]
count = 5
cc = "{variant}"
rtt = "10ms..150ms"
slow_start = true
start = {{ uniform = ["0s", "5s"] }}
[run]
duration = "40s"
warmup = "10s"
record_interval = "50ms"
"#
            );
            let r = run(&text);
            let s = &r.summary;
            let l = &s.links[0];
            let what = format!("{variant} {buffer} {queue}");
            assert_eq!(
                l.arrivals_pkts,
                l.departures_pkts + l.drops_pkts + l.queue_end_pkts - l.queue_start_pkts,
                "{what}"
            );
            // A 5-packet buffer with unpaced bursts at 10·C keeps Reno near its response function
            // (loss ≈ 0.6%, W ≈ 1.22/√p ≈ 15 packets against a BDP of 1333): U ≈ 0.27.
            assert!(
                s.utilization > 0.2 && s.utilization <= 1.0 + 1e-9,
                "{what}: U={}",
                s.utilization
            );
            assert!(s.flows.iter().all(|f| f.throughput_pps > 0.0), "{what}");
            assert!(l.max_queue_pkts <= l.buffer_pkts.round().max(1.0), "{what}");
        }
    }
}

#[test]
fn packet_engine_refuses_what_it_cannot_run() {
    let two_links = r#"
engine = "packet"
[[links]]
name = "a"
capacity = "1Mbps"
buffer = { packets = 100 }
delay = "20ms"
[[links]]
name = "b"
capacity = "1Mbps"
buffer = { packets = 100 }
[[flows]]
cc = "reno"
rtt = "40ms"
path = ["a", "b"]
"#;
    // 40 ms covers a's delay both ways (the scenario's check), but not a's delay between the
    // two ports plus 25.2 ms of serialization (1.2 ms access, 12 ms per link).
    let err = PacketEngine::new(&scenario(two_links))
        .err()
        .unwrap()
        .to_string();
    assert!(
        err.starts_with("flows[0].rtt: an RTT of 0.04 s is shorter than serializing"),
        "{err}"
    );
    assert!(PacketEngine::new(&scenario(&two_links.replace("40ms", "46ms"))).is_ok());

    let huge = r#"
engine = "packet"
[dumbbell]
capacity = "1Tbps"
buffer = { bdp_fraction = 1 }
[[flows]]
count = 10
cc = "reno"
rtt = "1s"
"#;
    let err = PacketEngine::new(&scenario(huge))
        .err()
        .unwrap()
        .to_string();
    assert!(
        err.starts_with("links[0].buffer: the packet engine would need"),
        "{err}"
    );
}

/// 10 Reno flows, RTT 80..260 ms, buffer 25% of the mean-RTT BDP, slow start on: simulated
/// seconds and packets per wall-clock second, on one core. Reno needs minutes to fill a fast link
/// after its slow-start overshoot, so the runs are long; U is measured over the second half.
#[test]
#[ignore]
fn packet_speed() {
    let only = std::env::var("PACKET_SPEED_ONLY").ok();
    for (cap, capacity_pps, dur) in [
        ("100Mbps", 8_333.3, 600.0),
        ("1Gbps", 83_333.3, 600.0),
        ("10Gbps", 833_333.3, 600.0),
    ] {
        if only.as_deref().is_some_and(|o| o != cap) {
            continue;
        }
        let run_table = format!("duration = \"{dur}s\"\nwarmup = \"{}s\"", dur / 2.0);
        let text = packet_10_reno_toml(cap, &run_table);
        let t0 = std::time::Instant::now();
        let (r, drops) = engine(&text).run_with_drops();
        let wall = t0.elapsed().as_secs_f64();
        let s = &r.summary;
        let departed = s.links[0].departures_pkts;
        let delivered: f64 = s.flows.iter().map(|f| f.throughput_pps).sum::<f64>() * dur / 2.0;
        println!(
            "{cap}: {dur} s simulated in {wall:.1} s wall = {:.2} sim s/s; {departed:.3e} packets \
             through the bottleneck = {:.3e} pkt/s ({:.0} ns/packet, {:.2} events/packet); \
             full-load equivalent {:.2} sim s/s; second half: U = {:.3}, goodput {delivered:.3e} \
             pkts, {} congestion events, sync {:.2}, J = {:.3}; {} drops in all",
            dur / wall,
            departed / wall,
            wall / departed * 1e9,
            s.flow_updates as f64 / departed,
            departed / wall / capacity_pps,
            s.utilization,
            s.congestion_events,
            s.sync_rate_mean,
            s.jain,
            drops.len()
        );
    }
}

/// The warnings of `toml` (its engine line first) containing `needle`, and its summary, per
/// engine.
fn warned_in_both_engines(toml: &str, needle: &str) -> Vec<(&'static str, Vec<String>, Summary)> {
    ["packet", "fluid"]
        .into_iter()
        .map(|engine| {
            let s = run(&format!("engine = \"{engine}\"\n{toml}")).summary;
            let said = (s.warnings.iter().filter(|w| w.contains(needle)).cloned()).collect();
            (engine, said, s)
        })
        .collect()
}

#[test]
fn a_link_no_flow_crosses_is_said_in_a_warning() {
    // Links a into b and c, and no path names c: it ran idle (utilization 0) without a word, in
    // both engines. Said for c, not for the links the flows cross.
    let toml = "[[links]]\nname = \"a\"\nfrom = \"r0\"\nto = \"r1\"\ncapacity = \"50Mbps\"\nbuffer = { packets = 50 }\n\
                [[links]]\nname = \"b\"\nfrom = \"r1\"\nto = \"r2\"\ncapacity = \"30Mbps\"\nbuffer = { packets = 50 }\n\
                [[links]]\nname = \"c\"\nfrom = \"r1\"\nto = \"r3\"\ncapacity = \"30Mbps\"\nbuffer = { packets = 50 }\n\
                [[flows]]\ncc = \"reno\"\nrtt = \"40ms\"\npath = [\"a\", \"b\"]\n[run]\nduration = \"2s\"\n";
    for (engine, idle, s) in warned_in_both_engines(toml, "no flow's path crosses it") {
        assert!(
            idle.len() == 1 && idle[0].starts_with("links[2] (c)"),
            "{engine}: {idle:?}"
        );
        assert_eq!(s.links[2].utilization, 0.0);
    }
}

#[test]
fn flows_that_start_after_the_run_ends_are_said_in_a_warning() {
    // One of two groups starts at 20 s in a 5 s run: its row was zeros, with only the generic
    // "no data" warning when no flow sent. Said per group, in both engines.
    let toml = "[dumbbell]\ncapacity = \"10Mbps\"\nbuffer = { packets = 20 }\n\
                [[flows]]\ncc = \"reno\"\nrtt = \"40ms\"\n\
                [[flows]]\ncount = 2\ncc = \"reno\"\nrtt = \"40ms\"\nstart = \"20s\"\n[run]\nduration = \"5s\"\n";
    for (engine, late, s) in warned_in_both_engines(toml, "start at or after the run's end") {
        assert!(
            late.len() == 1 && late[0].starts_with("flows[1].start: 2 of its 2 flows"),
            "{engine}: {late:?}"
        );
        assert_eq!(s.flows[1].throughput_pps, 0.0);
    }
}
