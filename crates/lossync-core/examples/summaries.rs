//! Bit-identity check for refactorings: runs scenarios on both core engines, shortened, and prints
//! one JSON line per (scenario, engine) with the summary and hashes of the series and events.
//! Run it before and after a change and compare the output byte for byte:
//!
//! ```sh
//! cargo run --release -p lossync-core --example summaries -- examples/*.toml > before.jsonl
//! ```
//!
//! Each scenario runs `--duration` simulated seconds (default 60; a warm-up that long or longer
//! becomes a third of it) on the fluid and the packet engine, plus a built-in set covering every
//! variant with slow start, delayed ACKs, RED, pacing, rwnd and parallel connections.

use lossync_core::scenario::{self, Engine, Scenario};
use std::path::Path;

/// FNV-1a over bytes.
fn fnv(bytes: impl IntoIterator<Item = u8>) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in bytes {
        h ^= b as u64;
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h
}

fn builtin() -> Vec<(String, String)> {
    let mut out = Vec::new();
    for v in [
        "reno",
        "highspeed",
        "scalable",
        "cubic",
        "htcp",
        "bic",
        "ghstcp",
    ] {
        out.push((
            format!("builtin-{v}-slow-start"),
            format!(
                r#"
[dumbbell]
capacity = "200Mbps"
buffer = {{ bdp_fraction = 0.3 }}
[[flows]]
count = 3
cc = "{v}"
rtt = "40ms..120ms"
slow_start = true
initial_window = 4
start = {{ uniform = ["0s", "2s"] }}
[[flows]]
cc = "{v}"
rtt = "60ms"
slow_start = true
delayed_ack = true
rwnd = {{ packets = 300 }}
[run]
duration = "30s"
"#
            ),
        ));
    }
    out.push((
        "builtin-tcp-loss".into(),
        r#"
[dumbbell]
capacity = "300Mbps"
buffer = { bdp_fraction = 0.2 }
loss_rate = 1e-6
[[flows]]
count = 4
cc = "cubic"
rtt = "50ms..150ms"
slow_start = true
[[flows]]
count = 2
cc = "htcp"
rtt = "90ms"
[loss]
model = "tcp"
[run]
duration = "30s"
"#
        .into(),
    ));
    out.push((
        "builtin-red-params".into(),
        r#"
[dumbbell]
capacity = "100Mbps"
buffer = { packets = 400 }
queue = { discipline = "red", min_th = 50, max_th = 300, max_p = 0.05, weight = 0.001 }
[[flows]]
count = 2
cc = { variant = "cubic", beta = 0.8, c = 0.5, fast_convergence = false }
rtt = "50ms"
slow_start = true
pacing = true
[[flows]]
cc = { variant = "reno", a = 2, b = 0.3 }
rtt = "80ms"
parallel = 3
delayed_ack = { count = 3, timeout = "40ms" }
[[flows]]
cc = { variant = "bic", max_increment = 32, low_window = 20 }
rtt = "70ms"
access_capacity = "150Mbps"
[loss]
model = "sync"
sync = { kind = "fixed", m = 2 }
policy = "largest_window"
reductions_per_event = 1.5
holdoff = "30ms"
[run]
duration = "30s"
seed = 7
"#
        .into(),
    ));
    out.push((
        "builtin-htcp-scalable".into(),
        r#"
[dumbbell]
capacity = "500Mbps"
buffer = { bytes = "2MB" }
delay = "5ms"
loss_rate = 1e-6
[[flows]]
cc = { variant = "htcp", delta_l = 0.5, adaptive_backoff = false }
rtt = "100ms"
slow_start = true
[[flows]]
cc = { variant = "scalable", a = 0.02, low_window = 0 }
rtt = [0.05, 0.15]
count = 2
start = ["0s", "3s"]
[[flows]]
cc = { variant = "highspeed", high_decrease = 0.2, low_window = 50 }
rtt = "90ms"
[loss]
model = "sync"
sync = { kind = "normal", x = 0.5, mean = 3, std = 1 }
policy = "random"
[run]
duration = "30s"
"#
        .into(),
    ));
    out
}

fn main() {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let mut duration = 60.0;
    if let Some(i) = args.iter().position(|a| a == "--duration") {
        duration = args[i + 1].parse().expect("--duration SECONDS");
        args.drain(i..i + 2);
    }
    let mut cases: Vec<(String, String, std::path::PathBuf)> = args
        .iter()
        .map(|p| {
            let path = Path::new(p);
            let text = std::fs::read_to_string(path).expect("readable scenario");
            let base = path.parent().unwrap_or(Path::new(".")).to_path_buf();
            (p.clone(), text, base)
        })
        .collect();
    for (name, text) in builtin() {
        cases.push((name, text, ".".into()));
    }
    for (name, text, base) in cases {
        let sc: Scenario = match scenario::from_toml(&text, &base) {
            Ok(sc) => sc,
            Err(e) => {
                println!("{{\"case\":{name:?},\"error\":{:?}}}", e.to_string());
                continue;
            }
        };
        for engine in [Engine::Fluid, Engine::Packet] {
            let mut sc = sc.clone();
            sc.engine = engine.clone();
            sc.run.duration_s = sc.run.duration_s.min(duration);
            if sc.run.warmup_s >= sc.run.duration_s {
                sc.run.warmup_s = sc.run.duration_s / 3.0;
            }
            let line = match lossync_core::run(&sc) {
                Err(e) => format!("{{\"error\":{:?}}}", e.to_string()),
                Ok(r) => {
                    let summary = serde_json::to_string(&r.summary).unwrap();
                    let series = fnv(r.series.columns.iter().flat_map(|(n, v)| {
                        n.bytes()
                            .chain(v.iter().flat_map(|x| x.to_bits().to_le_bytes()))
                            .collect::<Vec<u8>>()
                    }));
                    let events = fnv(serde_json::to_string(&r.events).unwrap().into_bytes());
                    format!(
                        "{{\"summary\":{summary},\"series_fnv\":\"{series:016x}\",\"events_fnv\":\"{events:016x}\"}}"
                    )
                }
            };
            println!("{{\"case\":{name:?},\"engine\":\"{engine:?}\",\"result\":{line}}}");
        }
    }
}
