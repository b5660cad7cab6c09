//! Runs a scenario file on the fluid engine and prints the summary as JSON: a Rust-only entry
//! point for profiling (`perf record target/release/examples/run_scenario FILE`).

fn main() {
    let path = std::env::args()
        .nth(1)
        .expect("usage: run_scenario SCENARIO.toml");
    let text = std::fs::read_to_string(&path).expect("readable scenario file");
    let base = std::path::Path::new(&path)
        .parent()
        .unwrap_or(std::path::Path::new("."));
    match lossync_core::scenario::from_toml(&text, base).and_then(|sc| lossync_core::run(&sc)) {
        Ok(r) => println!(
            "{}",
            serde_json::to_string_pretty(&r.summary).expect("serializable")
        ),
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(2);
        }
    }
}
