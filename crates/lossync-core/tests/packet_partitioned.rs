//! The packet engine's partitioned scheduler (`run.scheduler = "partitioned"`,
//! `packet/partitioned.rs`): the network and the hosts run as partitions between exchanges one
//! lookahead apart. Its result is bit-identical for every thread count, and is exactly what one
//! event list computes with the same order of simultaneous events: the serial engine with
//! canonical ties. A partition that acted on what it does not own, or a packet handed over late
//! or lost between partitions, would break the second (a mutation check: delivering each window's
//! messages one window late made it fail).

mod common;

use common::{fingerprint, scenario};
use lossync_core::{PacketEngine, RunResult, Simulation};

/// `text` on the partitioned scheduler and `threads` threads, advanced in `steps` equal steps as a
/// progress bar drives it (the windows then end where the steps do).
fn partitioned(text: &str, threads: usize, steps: usize) -> RunResult {
    let text = text.replace(
        "[run]",
        &format!("[run]\nscheduler = \"partitioned\"\nthreads = {threads}"),
    );
    let mut sim = Simulation::new(&scenario(&text)).expect("runs");
    let Simulation::Partitioned(p) = &sim else {
        panic!("the partitioned scheduler runs it");
    };
    // A partition per thread, or per group with work (a host, a router) when there are fewer.
    assert!(
        p.partitions() == threads || (p.partitions() < threads && p.partitions() > 1),
        "{} partitions on {threads} threads",
        p.partitions()
    );
    if threads > 1 {
        assert!(
            p.lookahead_s() > 0.0 && p.lookahead_s() < 1.0,
            "{}",
            p.lookahead_s()
        );
    }
    let end = sim.duration_s();
    for k in 1..=steps {
        sim.advance(end * k as f64 / steps as f64);
    }
    assert!(sim.is_done());
    sim.finish()
}

/// The partitioned result on 1, 2 and 3 threads, each against the serial engine with canonical
/// ties; returns that serial result.
fn same_as_one_event_list(text: &str) -> RunResult {
    let serial = PacketEngine::new(&scenario(text))
        .expect("runs")
        .with_canonical_ties()
        .run();
    let want = fingerprint(&serial);
    for threads in [1, 2, 3] {
        let got = fingerprint(&partitioned(text, threads, 7));
        assert!(got == want, "{threads} threads differ from one event list");
    }
    serial
}

#[test]
fn a_dumbbell_is_one_event_lists_run_on_every_thread_count() {
    // Unequal RTTs and staggered starts, a shallow buffer (drops, fast recovery, timeouts),
    // delayed ACKs (the receivers' timers are the network's), PRR and RACK-TLP on one group,
    // send jitter (the hosts' random draws), a paced CUBIC group and BBR (its pacing timers).
    let r = same_as_one_event_list(
        r#"
        engine = "packet"
        [dumbbell]
        capacity = "100Mbps"
        buffer = { bdp_fraction = 0.1 }
        [[flows]]
        count = 8
        cc = "reno"
        rtt = "20ms..80ms"
        start = { uniform = ["0s", "1s"] }
        delayed_ack = { count = 2, timeout = "40ms" }
        send_jitter = "120us"
        [[flows]]
        count = 4
        cc = "cubic"
        rtt = "30ms..60ms"
        recovery = "prr"
        loss_detection = "rack-tlp"
        pacing = { ca_ratio = 1.2 }
        [[flows]]
        count = 2
        cc = "bbr"
        rtt = "50ms"
        parallel = 2
        [run]
        duration = "8s"
        warmup = "2s"
        "#,
    );
    assert!(r.summary.utilization > 0.8, "{}", r.summary.utilization);
    assert!(r.summary.loss_rate > 0.0, "the run saw losses");
}

#[test]
fn a_network_with_two_way_traffic_and_aqm_is_one_event_lists_run() {
    // Three links in a row, a long flow and cross traffic, the middle link two-way (ACKs queue
    // behind reverse data), CoDel marking ECN for DCTCP-free classic ECN flows, RED elsewhere.
    same_as_one_event_list(
        r#"
        engine = "packet"
        [[links]]
        name = "a"
        capacity = "100Mbps"
        delay = "2ms"
        buffer = { packets = 60 }
        queue = { discipline = "red", min_th = 10, max_th = 40 }
        [[links]]
        name = "b"
        capacity = "80Mbps"
        delay = "3ms"
        buffer = { packets = 60 }
        queue = { discipline = "codel" }
        reverse = true
        [[links]]
        name = "c"
        capacity = "100Mbps"
        delay = "2ms"
        buffer = { packets = 40 }
        [[flows]]
        count = 3
        cc = "reno"
        rtt = "40ms..60ms"
        path = ["a", "b", "c"]
        ecn = true
        [[flows]]
        count = 3
        cc = "cubic"
        rtt = "30ms"
        path = ["b"]
        [[flows]]
        count = 2
        cc = "reno"
        rtt = "35ms"
        path = ["b"]
        direction = "reverse"
        [run]
        duration = "6s"
        warmup = "1s"
        "#,
    );
}

#[test]
fn what_it_cannot_run_is_refused_by_field() {
    let base = r#"
        engine = "packet"
        [dumbbell]
        capacity = "10Mbps"
        buffer = { packets = 20 }
        [[flows]]
        cc = "reno"
        rtt = "50ms"
        EXTRA
        [run]
        duration = "2s"
        scheduler = "partitioned"
        RUN
    "#;
    for (extra, run, field) in [
        (
            "arrivals = { rate = 2, min_size = \"40KB\", mean_size = \"100KB\", max_active = 4 }",
            "",
            "flows[0].arrivals",
        ),
        (
            "",
            "from_first_congestion = true",
            "run.from_first_congestion",
        ),
        (
            "",
            "aggregate_interval = \"0.1s\"",
            "run.aggregate_interval",
        ),
    ] {
        let text = base.replace("EXTRA", extra).replace("RUN", run);
        let err = Simulation::new(&scenario(&text)).err().expect("refused");
        assert!(
            err.to_string().starts_with(&format!("{field}: ")),
            "{field}: {err}"
        );
        assert!(
            err.to_string().contains("run.scheduler = \"serial\""),
            "{err}"
        );
        let err = lossync_core::check(&scenario(&text)).expect_err("refused by check too");
        assert!(err.to_string().starts_with(&format!("{field}: ")), "{err}");
    }
    // The fluid engine has no such scheduler.
    let text = base
        .replace("engine = \"packet\"", "engine = \"fluid\"")
        .replace("EXTRA", "")
        .replace("RUN", "");
    let err = Simulation::new(&scenario(&text)).err().expect("refused");
    assert!(err.to_string().starts_with("run.scheduler: "), "{err}");
}

#[test]
fn no_more_partitions_than_groups_with_work() {
    // One flow: its host and the router, two groups, whatever run.threads asks.
    let text = r#"
        engine = "packet"
        [dumbbell]
        capacity = "10Mbps"
        buffer = { packets = 20 }
        [[flows]]
        cc = "reno"
        rtt = "50ms"
        [run]
        duration = "2s"
        scheduler = "partitioned"
        threads = 8
    "#;
    let sim = Simulation::new(&scenario(text)).expect("runs");
    let Simulation::Partitioned(p) = &sim else {
        panic!("the partitioned scheduler runs it");
    };
    assert_eq!(p.partitions(), 2);
    // Half the flow's own propagation (less its serializations) is the window.
    assert!(
        p.lookahead_s() > 0.02 && p.lookahead_s() < 0.025,
        "{}",
        p.lookahead_s()
    );
}

#[test]
fn an_ack_due_at_the_runs_last_instant_arrives_as_in_one_event_list() {
    // One flow of 50 ms at 10 Mb/s: access serialization 120 us, service 1.2 ms, its own
    // propagation 48.68 ms in two halves of 24.34 ms, the lookahead L. Started at 23.02 ms, its
    // first packet leaves the port at 23.02 + 0.12 + 24.34 + 1.2 = 48.68 ms = 2L, the start of
    // the third window, and its ACK reaches the sender at 3L = 73.02 ms, the run's last instant,
    // which one event list runs. The ACK crosses into the host's partition during the last
    // window itself: run in one piece, the partitions once lost it (the last window ran to its
    // end before the exchange that brings it).
    let text = r#"
        engine = "packet"
        [dumbbell]
        capacity = "10Mbps"
        buffer = { packets = 20 }
        [[flows]]
        cc = "reno"
        rtt = "50ms"
        start = "23.02ms"
        [run]
        duration = "73.02ms"
        warmup = "0s"
        record_interval = "1ms"
    "#;
    let want = fingerprint(
        &PacketEngine::new(&scenario(text))
            .expect("runs")
            .with_canonical_ties()
            .run(),
    );
    // In one piece: the windows then fall on multiples of L.
    for threads in [2, 3] {
        let got = fingerprint(&partitioned(text, threads, 1));
        assert!(got == want, "{threads} threads differ");
    }
}
