//! One fluid run on several threads (`run.threads`): the result is bit-identical for every
//! thread count, since each flow's update reads only the step before and the sums and random
//! draws keep their one-thread order (`fluid/workers.rs`).

mod common;

use common::{fingerprint, scenario};
use lossync_core::{FluidEngine, RunResult};

fn run_on(text: &str, threads: usize) -> RunResult {
    let text = text.replace("[run]", &format!("[run]\nthreads = {threads}"));
    let engine = FluidEngine::new(&scenario(&text)).expect("runs");
    assert_eq!(
        engine.threads(),
        threads,
        "the run steps on the threads asked for"
    );
    engine.run()
}

/// Runs `text` on 1, 2 and 3 threads and checks the three agree to the bit; returns the
/// one-thread result.
fn same_on_every_thread_count(text: &str) -> RunResult {
    let one = run_on(text, 1);
    let want = fingerprint(&one);
    for threads in [2, 3] {
        let got = fingerprint(&run_on(text, threads));
        assert!(got == want, "{threads} threads differ from one");
    }
    one
}

#[test]
fn a_dumbbell_of_many_flows_is_the_same_on_every_thread_count() {
    // Enough flows for the threaded loops (8,192 at least; chunks of 1,025 flows on two threads,
    // 684 on three), with what touches each of their branches: flows starting through the run
    // (the threshold draws in flow order), mixed laws (BBR's rate samples and pacing, CUBIC,
    // Reno), RTTs 40–200 ms, slow start into a shallow buffer (overflow, the loss events'
    // draws, timeouts), random loss (early drops).
    let text = r#"
        engine = "fluid"
        [dumbbell]
        capacity = "2Gbps"
        buffer = { bdp_fraction = 0.05, reference_rtt = "100ms" }
        loss_rate = 0.0001
        [[flows]]
        count = 5000
        cc = "reno"
        rtt = "40ms..200ms"
        start = { uniform = ["0s", "0.2s"] }
        [[flows]]
        count = 3000
        cc = "cubic"
        rtt = "50ms"
        [[flows]]
        count = 200
        cc = "bbr"
        rtt = "40ms..80ms"
        start = "0.1s"
        [run]
        duration = "0.6s"
        record_interval = "0.1s"
    "#;
    let r = same_on_every_thread_count(text);
    let s = &r.summary;
    assert!(s.congestion_events > 0 && s.loss_rate > 0.0, "{s:?}");
    assert_eq!(r.summary.flows.len(), 8200);
}

#[test]
fn multi_hop_paths_and_ecn_are_the_same_on_every_thread_count() {
    // Links whose members are not every flow (the parking lot's: their departures stay on one
    // thread, and so do the arrivals at "a", where RED marks), ECN senders behind RED marking,
    // and at "b" 8,300 members whose arrivals are threaded.
    let text = r#"
        engine = "fluid"
        [[links]]
        name = "a"
        capacity = "1Gbps"
        buffer = { bdp_fraction = 0.1, reference_rtt = "50ms" }
        queue = { discipline = "red", min_th = 100, max_th = 300, ecn = true }
        [[links]]
        name = "b"
        capacity = "1Gbps"
        buffer = { bdp_fraction = 0.1, reference_rtt = "50ms" }
        [[flows]]
        count = 5000
        cc = "reno"
        ecn = true
        rtt = "40ms..80ms"
        path = ["a", "b"]
        [[flows]]
        count = 2000
        cc = "cubic"
        rtt = "50ms"
        path = ["a"]
        [[flows]]
        count = 3300
        cc = "reno"
        rtt = "40ms"
        path = ["b"]
        [run]
        duration = "0.5s"
        record_interval = "0.1s"
    "#;
    let r = same_on_every_thread_count(text);
    assert!(
        r.summary.links.iter().any(|l| l.mark_rate > 0.0),
        "no marks"
    );
    assert!(r.summary.congestion_events > 0, "no congestion");
}

#[test]
fn threads_out_of_range_are_refused_by_name() {
    for bad in ["0", "1025", "-1"] {
        let e = common::scenario_error(&format!(
            "engine = \"fluid\"\n[dumbbell]\ncapacity = \"1Gbps\"\nbuffer = {{ packets = 100 }}\n[[flows]]\ncc = \"reno\"\n\
             rtt = \"50ms\"\n[run]\nthreads = {bad}"
        ));
        assert!(e.starts_with("run.threads:"), "{e}");
    }
}
