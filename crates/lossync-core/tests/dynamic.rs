//! Dynamic traffic (packet engine): Poisson arrivals, Pareto sizes, flows that finish, and their
//! metrics, checked against closed forms.

mod common;
use common::*;

#[test]
fn debug_single() {
    let r = run(r#"
engine = "packet"
[dumbbell]
capacity = "1Gbps"
buffer = { packets = 4000 }
[[flows]]
cc = "reno"
rtt = "20ms"
arrivals = { rate = 0.5, shape = 1000, min_size = "1500000B", max_active = 10 }
[run]
duration = "10s"
warmup = "0s"
"#);
    for c in &r.completions {
        println!("{c:?}");
    }
}

#[test]
fn debug_example() {
    let text = std::fs::read_to_string("../../examples/dynamic-dumbbell.toml").unwrap();
    let r = run(&text);
    let mut c = r.completions.clone();
    c.sort_by(|a, b| (b.fct_s / b.size_pkts as f64).total_cmp(&(a.fct_s / a.size_pkts as f64)));
    for c in c.iter().take(15) {
        println!("{c:?}");
    }
    let s = r.series.get("active_flows.web").unwrap();
    println!("{:?}", &s[..60]);
}
