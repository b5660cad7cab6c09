//! Helpers shared by the integration tests (`mod common;`) and the benches
//! (`#[path = "../tests/common/mod.rs"] mod common;`): parsing and running scenario text, the
//! closed form the tests compare against, the scenarios used by more than one file, and one
//! tolerance assertion. Each test binary uses a part of it.
#![allow(dead_code)]

use lossync_core::{scenario, PacketEngine, RunResult, Scenario};
use std::fmt::Display;
use std::path::Path;

/// Parses a scenario (relative paths from the working directory); a bad one panics with the
/// error and the text.
pub fn scenario(text: &str) -> Scenario {
    scenario::from_toml(text, Path::new(".")).unwrap_or_else(|e| panic!("{e}\n{text}"))
}

/// The error a scenario is refused with.
pub fn scenario_error(text: &str) -> String {
    match scenario::from_toml(text, Path::new(".")) {
        Ok(_) => panic!("accepted:\n{text}"),
        Err(e) => e.to_string(),
    }
}

/// Runs a scenario to the end on the engine it names.
pub fn run(text: &str) -> RunResult {
    lossync_core::run(&scenario(text)).unwrap_or_else(|e| panic!("{e}\n{text}"))
}

/// A packet engine for the scenario, to be driven step by step (`advance`, `drop_log`,
/// `finish`) whatever engine the scenario names.
pub fn packet_engine(text: &str) -> PacketEngine {
    PacketEngine::new(&scenario(text)).unwrap_or_else(|e| panic!("{e}\n{text}"))
}

/// Everything a run reports, as text: summary, series, events (a difference in any bit of any
/// number shows).
pub fn fingerprint(r: &RunResult) -> String {
    let mut s = serde_json::to_string(&r.summary).expect("serializable");
    for (name, column) in &r.series.columns {
        let bits: Vec<u64> = column.iter().map(|x| x.to_bits()).collect();
        s += &format!("\n{name}: {bits:?}");
    }
    s + &serde_json::to_string(&r.events).expect("serializable")
}

/// docs/model.md §4.2: U = ¾(1+ρ)²/(1+ρ+ρ²) for synchronized Reno (γ = ½).
pub fn reno_closed_form(rho: f64) -> f64 {
    0.75 * (1.0 + rho).powi(2) / (1.0 + rho + rho * rho)
}

/// Asserts `|got − want| < tol` (strictly; a NaN fails), naming the case: `what: got vs want`.
#[track_caller]
pub fn assert_near(got: f64, want: f64, tol: f64, what: impl Display) {
    assert!(
        (got - want).abs() < tol,
        "{what}: {got} vs {want} (tolerance {tol})"
    );
}

/// The paper's 10 Gbps case on the fluid engine (docs/model.md §4.4): 10 flows of `variant`, RTT
/// 80..260 ms, buffer 10% of the BDP at 170 ms, no slow start (as the paper); `loss` and `run`
/// are the bodies of the `[loss]` and `[run]` tables.
pub fn paper_10g_toml(variant: &str, loss: &str, run: &str) -> String {
    format!(
        r#"
[dumbbell]
capacity = "10Gbps"
buffer = {{ bdp_fraction = 0.1, reference_rtt = "170ms" }}
[[flows]]
count = 10
cc = "{variant}"
rtt = "80ms..260ms"
slow_start = false
[loss]
{loss}
[run]
{run}
"#
    )
}

/// The packet engine's speed case: 10 Reno flows with slow start, RTT 80..260 ms, buffer 25% of
/// the mean-RTT BDP, at `capacity`; `run` is the body of the `[run]` table.
pub fn packet_10_reno_toml(capacity: &str, run: &str) -> String {
    format!(
        r#"
engine = "packet"
[dumbbell]
capacity = "{capacity}"
buffer = {{ bdp_fraction = 0.25 }}
[[flows]]
count = 10
cc = "reno"
rtt = "80ms..260ms"
slow_start = true
[run]
{run}
"#
    )
}

/// The AQM tests' dumbbell (aqm*.rs): 10 flows of `flows` (its `cc` line and any more; slow start
/// on, send jitter `jitter_s`) over a bottleneck with `queue`, in `engine`.
#[allow(clippy::too_many_arguments)]
pub fn aqm_dumbbell(
    engine: &str,
    capacity: &str,
    buffer: u32,
    queue: &str,
    flows: &str,
    rtt: &str,
    jitter_s: f64,
    run_s: (u32, u32),
) -> String {
    format!(
        r#"
engine = "{engine}"
[dumbbell]
capacity = "{capacity}"
buffer = {{ packets = {buffer} }}
queue = {queue}
[[flows]]
count = 10
{flows}
rtt = "{rtt}"
slow_start = true
send_jitter = {jitter_s}
[run]
duration = "{}s"
warmup = "{}s"
"#,
        run_s.0, run_s.1
    )
}
