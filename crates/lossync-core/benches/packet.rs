//! The packet engine's event loop in steady state: 10 Reno flows (RTT 80..260 ms, buffer 25% of
//! BDP, slow start) at 100 Mb/s, 1 Gb/s and 10 Gb/s. Each iteration takes an engine already run
//! through a warm-up (untimed) and times the next simulated seconds; throughput is in events
//! (about three per data packet). `cargo bench -p lossync-core --features bench --bench packet`.

#[path = "../tests/common/mod.rs"]
mod common;

use criterion::{criterion_group, criterion_main, BatchSize, Criterion, Throughput};
use lossync_core::{PacketEngine, Scenario};

const WARMUP_S: f64 = 20.0;

fn dumbbell(capacity: &str) -> Scenario {
    common::scenario(&common::packet_10_reno_toml(
        capacity,
        "duration = \"60s\"\nrecord_interval = \"1s\"",
    ))
}

fn warmed(sc: &Scenario) -> PacketEngine {
    let mut e = PacketEngine::new(sc).unwrap();
    e.advance(WARMUP_S);
    e
}

fn packet(c: &mut Criterion) {
    let mut g = c.benchmark_group("packet_10flows_steady");
    g.sample_size(10);
    for (capacity, span_s) in [("100Mbps", 20.0), ("1Gbps", 5.0), ("10Gbps", 1.0)] {
        let sc = dumbbell(capacity);
        // The run is deterministic: count the span's events once.
        let mut probe = warmed(&sc);
        let before = probe.events_processed();
        probe.advance(WARMUP_S + span_s);
        g.throughput(Throughput::Elements(probe.events_processed() - before));
        g.bench_function(format!("{capacity}_{span_s}s"), |b| {
            b.iter_batched(
                || warmed(&sc),
                |mut e| {
                    e.advance(WARMUP_S + span_s);
                    e.events_processed()
                },
                BatchSize::PerIteration,
            )
        });
    }
    g.finish();
}

criterion_group!(benches, packet);
criterion_main!(benches);
