//! Runs a scenario file on the engine it names and prints the summary as JSON: a Rust-only entry
//! point for profiling (`perf record target/release/examples/run_scenario FILE`, or valgrind's
//! callgrind). `run_scenario FILE LINK OUT.pcap` also traces LINK (packet engine) into OUT.pcap.

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let (Some(path), trace) = (args.get(1), args.get(2).zip(args.get(3))) else {
        eprintln!("usage: run_scenario SCENARIO.toml [LINK OUT.pcap]");
        std::process::exit(2);
    };
    let text = std::fs::read_to_string(path).expect("readable scenario file");
    let base = std::path::Path::new(path)
        .parent()
        .unwrap_or(std::path::Path::new("."));
    let run = || -> lossync_core::Result<lossync_core::RunResult> {
        let sc = lossync_core::scenario::from_toml(&text, base)?;
        let mut sim = lossync_core::Simulation::new(&sc)?;
        if let Some((link, _)) = trace {
            sim.trace_link(link, usize::MAX)?;
        }
        sim.advance(f64::INFINITY);
        if let (Some((_, out)), Some(t)) = (trace, sim.trace()) {
            let mut file = std::fs::File::create(out).expect("a writable pcap file");
            t.write_pcap(&mut file).expect("the pcap written");
        }
        Ok(sim.finish())
    };
    match run() {
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
