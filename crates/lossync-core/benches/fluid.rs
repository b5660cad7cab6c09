//! The fluid engine on the paper's 10 Gbps case (10 flows, RTT 80..260 ms, buffer 10% of BDP,
//! sync X = 0.6), 300 simulated seconds per iteration, one variant per benchmark; and the same
//! case under the `tcp` loss model (its cost per flow-update against sync's).
//! `cargo bench -p lossync-core --features bench`; compare runs with `-- --save-baseline NAME` /
//! `--baseline NAME`.

#[path = "../tests/common/mod.rs"]
mod common;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use lossync_core::{FluidEngine, Scenario};

fn paper_case(variant: &str) -> Scenario {
    paper_case_with(
        variant,
        "model = \"sync\"\nsync = { kind = \"normal\", x = 0.6 }",
    )
}

fn paper_case_with(variant: &str, loss: &str) -> Scenario {
    common::scenario(&common::paper_10g_toml(
        variant,
        loss,
        "duration = \"300s\"\nrecord_interval = \"1s\"",
    ))
}

fn fluid(c: &mut Criterion) {
    let mut g = c.benchmark_group("fluid_10g_10flows_300s");
    g.sample_size(10);
    for variant in ["reno", "highspeed", "scalable", "cubic", "htcp", "bic"] {
        let sc = paper_case(variant);
        let updates = (sc.run.duration_s / sc.run.step_s).round() as u64 * sc.flows.len() as u64;
        g.throughput(Throughput::Elements(updates));
        g.bench_function(variant, |b| {
            b.iter(|| FluidEngine::new(&sc).unwrap().run().summary.utilization)
        });
    }
    g.finish();
}

fn fluid_tcp(c: &mut Criterion) {
    let mut g = c.benchmark_group("fluid_10g_10flows_300s_tcp");
    g.sample_size(10);
    for variant in ["reno", "cubic"] {
        let sc = paper_case_with(variant, "model = \"tcp\"");
        let updates = (sc.run.duration_s / sc.run.step_s).round() as u64 * sc.flows.len() as u64;
        g.throughput(Throughput::Elements(updates));
        g.bench_function(variant, |b| {
            b.iter(|| FluidEngine::new(&sc).unwrap().run().summary.utilization)
        });
    }
    g.finish();
}

criterion_group!(benches, fluid, fluid_tcp);
criterion_main!(benches);
