//! The resolved-scenario round trip (issue 9 item 4): a resolved scenario written as a scenario
//! file (`scenario::to_toml`) resolves to exactly the same scenario, and so does its JSON
//! (`from_json` reads a resolved scenario). Checked on every shipped example, on hand-written
//! scenarios that use every option, and on randomly assembled ones.

use lossync_core::rng::Rng;
use lossync_core::scenario::{self, Scenario};
use std::path::{Path, PathBuf};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .expect("the repository")
}

/// parse → resolve → to_toml → parse → resolve gives the same scenario and the same JSON; the
/// resolved JSON reads back to it too; writing it again gives the same text.
fn assert_round_trip(sc: &Scenario, base: &Path, what: &str) {
    let text = scenario::to_toml(sc);
    let back = scenario::from_toml(&text, base)
        .unwrap_or_else(|e| panic!("{what}: the written scenario does not read: {e}\n{text}"));
    let json = serde_json::to_string(sc).unwrap();
    assert_eq!(
        serde_json::to_string(&back).unwrap(),
        json,
        "{what}\n{text}"
    );
    assert_eq!(&back, sc, "{what}\n{text}");
    assert_eq!(scenario::to_toml(&back), text, "{what}: not a fixed point");
    let from_json = scenario::from_json(&json, base)
        .unwrap_or_else(|e| panic!("{what}: the resolved JSON does not read: {e}\n{json}"));
    assert_eq!(&from_json, sc, "{what}: from the resolved JSON");
    assert_eq!(serde_json::to_string(&from_json).unwrap(), json, "{what}");
}

fn files(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            p.extension().is_some_and(|e| e == "toml")
                && !p
                    .file_name()
                    .unwrap()
                    .to_str()
                    .unwrap()
                    .starts_with("sweep-")
        })
        .collect();
    v.sort();
    v
}

#[test]
fn every_shipped_scenario_round_trips() {
    let root = repo();
    let mut all = files(&root.join("examples"));
    all.extend(files(&root.join("python/lossync/scenarios")));
    assert!(all.len() >= 7, "{all:?}");
    for path in all {
        let base = path.parent().unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        let sc =
            scenario::from_toml(&text, base).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        assert_round_trip(&sc, base, &path.display().to_string());
    }
}

/// Every option at once: named links in series, a modelled reverse direction with overrides,
/// reverse flows, parallel connections, pacing, delayed ACKs, RED, random loss, receive windows,
/// access links, start times, every variant with parameters, and the sync module in full.
const EVERYTHING: &str = r#"
name = "every \"option\" — ü"
engine = "packet"

[[links]]
name = "a"
capacity = "1Gbps"
packet_size = "1KB"
delay = "3ms"
loss_rate = 1e-6
buffer = { bdp_fraction = 0.37 }
queue = { discipline = "red", min_th = 20, max_th = 300, max_p = 0.05, gentle = false }
reverse = { capacity = "400Mbps", buffer = { bytes = "500KB" }, queue = { discipline = "droptail" } }

[[links]]
name = "b"
capacity = 2.5e9
packet_size = 1000
buffer = { packets = 777.7 }
reverse = true

[[flows]]
name = "fwd"
count = 4
cc = { variant = "cubic", beta = 0.75, fast_convergence = false }
rtt = "33.3ms..217.1ms"
start = { uniform = ["0s", "7s"] }
path = ["a", "b"]
parallel = 3
pacing = { ca_ratio = 1.3 }
delayed_ack = { count = 3, timeout = "40ms" }
rwnd = { bytes = "1MB" }
access_capacity = "3.3Gbps"
slow_start = true
initial_window = 4
hystart = "linux"
undo = true

[[flows]]
name = "back"
direction = "reverse"
count = 3
cc = { variant = "htcp", delta_l = 0.7, rtt_scaling = false }
rtt = [0.1, 0.15, 0.3]
start = ["0s", "1s", "1.5s"]
path = ["b", "a"]
pacing = true
delayed_ack = true
ack_size = "52B"
hystart = "rfc9406"

[[flows]]
count = 2
cc = { variant = "bic", max_increment = 20, beta = 0.8 }
rtt = "120ms"
start = "2s"
path = ["a"]
rwnd = { packets = 5000 }

[[flows]]
cc = { variant = "highspeed", low_window = 50, high_p = 2e-7 }
rtt = 0.2
path = ["b"]

[[flows]]
cc = { variant = "scalable", a = 0.02, low_window = 0 }
rtt = 0.09
path = ["a"]

[[flows]]
cc = { variant = "ghstcp", decrease_by_mode = false }
rtt = 0.11
path = ["b"]

[[flows]]
cc = { variant = "reno", a = 2, b = 0.3 }
rtt = 0.13
path = ["a", "b"]

[loss]
model = "sync"
sync = { kind = "normal", x = 0.35, mean = 2.5, std = 0.7 }
policy = "round_robin"
reductions_per_event = 1.5
holdoff = "25ms"
recovery_pause = true

[run]
duration = "123.4s"
warmup = "12.5s"
from_first_congestion = true
step = "0.4ms"
seed = 987654321
record_interval = "0.35s"
"#;

#[test]
fn a_scenario_with_every_option_round_trips() {
    let sc = scenario::from_toml(EVERYTHING, Path::new("/")).unwrap();
    // The things the writer must not lose are there to lose.
    assert_eq!(sc.links.len(), 4);
    assert_eq!(sc.links[2].name, "a-reverse");
    assert!(sc.flows.iter().any(|f| f.reverse && !f.ack_path.is_empty()));
    assert_eq!(sc.flows.iter().filter(|f| f.group == 0).count(), 12);
    assert_round_trip(&sc, Path::new("/"), "every option");
}

#[test]
fn xcp_routers_proportional_loss_and_fixed_sync_round_trip() {
    let xcp = r#"
[dumbbell]
capacity = "622Mbps"
buffer = { bdp_fraction = 1.0 }
queue = { discipline = "xcp", preset = "conservative", alpha = 0.3, count_acks = false }
reverse = true
[[flows]]
count = 2
cc = "xcp"
rtt = "100ms"
[[flows]]
direction = "reverse"
cc = "XCP"
rtt = "80ms"
"#;
    let sc = scenario::from_toml(xcp, Path::new("/")).unwrap();
    assert_round_trip(&sc, Path::new("/"), "xcp");
    let fixed = "[dumbbell]\ncapacity = \"1Gbps\"\nbuffer = { packets = 100 }\n\
                 [[flows]]\ncount = 5\ncc = \"reno\"\nrtt = 0.1\n\
                 [loss]\nmodel = \"sync\"\nsync = { kind = \"fixed\", m = 3 }\npolicy = \"random\"\n";
    let sc = scenario::from_toml(fixed, Path::new("/")).unwrap();
    assert_round_trip(&sc, Path::new("/"), "fixed sync");
}

#[test]
fn burst_assemblers_round_trip() {
    for assembler in [
        "{ timer = \"1ms\" }",
        "{ timer = \"5ms\", policy = \"per_flow\", max_burst = 64 }",
        "{ timer = 0.01, policy = \"random\", queues = 4 }",
        "{ policy = \"window\", timers = [\"1ms\", \"5ms\", 0.01], thresholds = [16, 64.5] }",
    ] {
        let text = format!(
            "engine = \"packet\"\n[dumbbell]\ncapacity = \"1Gbps\"\nbuffer = {{ packets = 100 }}\n\
             assembler = {assembler}\nburst_loss = 0.02\n[[flows]]\ncount = 3\ncc = \"reno\"\nrtt = 0.05\n"
        );
        let sc = scenario::from_toml(&text, Path::new("/")).unwrap();
        assert!(sc.links[0].assembler.is_some() && sc.links[0].burst_loss == 0.02);
        assert_round_trip(&sc, Path::new("/"), assembler);
    }
}

#[test]
fn wavelength_contention_round_trips() {
    for contention in [
        "{}",
        "{ wavelengths = 4 }",
        "{ wavelengths = 2, fdls = 3, fdl_delay = \"20us\" }",
        "{ wavelengths = 1, background = 0.0204, background_burst = \"14us\" }",
    ] {
        let text = format!(
            "engine = \"packet\"\n[dumbbell]\ncapacity = \"1Gbps\"\nbuffer = {{ packets = 100 }}\n\
             assembler = {{ timer = \"1ms\" }}\ncontention = {contention}\n\
             [[flows]]\ncount = 3\ncc = \"reno\"\nrtt = 0.05\n"
        );
        let sc = scenario::from_toml(&text, Path::new("/")).unwrap();
        assert!(sc.links[0].contention.is_some());
        assert_round_trip(&sc, Path::new("/"), contention);
    }
}

#[test]
fn aggregate_interval_round_trips() {
    let text = "[dumbbell]\ncapacity = \"1Gbps\"\nbuffer = { packets = 100 }\n\
                [[flows]]\ncc = \"reno\"\nrtt = 0.05\n[run]\naggregate_interval = \"0.7s\"\n";
    let sc = scenario::from_toml(text, Path::new("/")).unwrap();
    assert_eq!(sc.run.aggregate_interval_s, 0.7);
    assert_round_trip(&sc, Path::new("/"), "aggregate_interval");
}

#[test]
fn an_empirical_distribution_is_written_inline() {
    let root = repo();
    let examples = root.join("examples");
    let text = std::fs::read_to_string(examples.join("empirical-sync.toml")).unwrap();
    let sc = scenario::from_toml(&text, &examples).unwrap();
    let written = scenario::to_toml(&sc);
    assert!(
        written.contains("\nprobabilities = [[2, 0.1") && written.contains("[8, 0.05"),
        "{written}"
    );
    // It reads back anywhere: the CSV is recorded, not read again.
    let elsewhere = scenario::from_toml(&written, Path::new("/nonexistent")).unwrap();
    assert_eq!(elsewhere, sc);
    // Inline probabilities must add up to 1.
    let bad = written.replace("[2, 0.1", "[2, 0.2");
    let err = scenario::from_toml(&bad, &examples)
        .unwrap_err()
        .to_string();
    assert!(
        err.starts_with("loss.sync.probabilities: must add up to 1"),
        "{err}"
    );
}

#[test]
fn a_resolved_scenario_reads_back_as_json_and_is_checked_again() {
    let sc = scenario::from_toml(EVERYTHING, Path::new("/")).unwrap();
    let mut json: serde_json::Value = serde_json::to_value(&sc).unwrap();
    json["flows"][0]["params"]["beta"] = 1.5.into();
    let err = scenario::from_json(&json.to_string(), Path::new("/"))
        .unwrap_err()
        .to_string();
    assert!(err.contains("beta: 1.5 is out of range"), "{err}");
    json["flows"][0]["params"]["beta"] = 0.75.into();
    json["links"][0]["speed"] = 1.into();
    let err = scenario::from_json(&json.to_string(), Path::new("/"))
        .unwrap_err()
        .to_string();
    assert!(
        err.starts_with("links[0].speed: unknown field `speed`"),
        "{err}"
    );
}

// ---------------------------------------------------------------------------------------------
// Randomly assembled scenarios.

struct Pick(Rng);

impl Pick {
    fn one<'a>(&mut self, options: &[&'a str]) -> &'a str {
        options[self.0.below(options.len())]
    }
    fn chance(&mut self, p: f64) -> bool {
        self.0.uniform() < p
    }
    fn within(&mut self, a: f64, b: f64) -> f64 {
        a + (b - a) * self.0.uniform()
    }
    fn below(&mut self, n: usize) -> usize {
        self.0.below(n)
    }
}

fn random_cc(p: &mut Pick) -> String {
    let variant = p.one(&[
        "reno",
        "highspeed",
        "scalable",
        "cubic",
        "htcp",
        "bic",
        "ghstcp",
    ]);
    let params: &[(&str, f64, f64)] = match variant {
        "reno" => &[("a", 0.5, 3.0), ("b", 0.1, 0.9)],
        "highspeed" => &[("low_window", 10.0, 100.0), ("high_decrease", 0.05, 0.4)],
        "scalable" => &[
            ("a", 0.001, 0.1),
            ("b", 0.05, 0.5),
            ("low_window", 0.0, 40.0),
        ],
        "cubic" => &[("c", 0.1, 2.0), ("beta", 0.5, 0.9)],
        "htcp" => &[("delta_l", 0.0, 3.0)],
        "bic" => &[
            ("s_max", 4.0, 64.0),
            ("beta", 0.5, 0.9),
            ("smooth_part", 5.0, 40.0),
        ],
        _ => &[],
    };
    let mut fields = vec![format!("variant = \"{variant}\"")];
    for &(name, a, b) in params {
        if p.chance(0.5) {
            fields.push(format!("{name} = {}", p.within(a, b)));
        }
    }
    format!("{{ {} }}", fields.join(", "))
}

fn random_scenario(seed: u64) -> String {
    let mut p = Pick(Rng::new(seed, 77));
    let mut t = String::new();
    t += &format!("engine = \"{}\"\n", p.one(&["fluid", "packet", "outside"]));
    let n_links = 1 + p.below(3);
    let packet_size = p.one(&["1500", "1000", "\"9KB\""]);
    let mut xcp_links = Vec::new();
    for i in 0..n_links {
        t += &format!("[[links]]\nname = \"l{i}\"\npacket_size = {packet_size}\n");
        t += &format!(
            "capacity = {}\n",
            p.one(&["\"100Mbps\"", "\"1Gbps\"", "1234567890.123", "\"10Gbps\""])
        );
        t += &format!("delay = {}\n", p.within(0.0, 0.01));
        if p.chance(0.3) {
            t += &format!("loss_rate = {}\n", p.within(0.0, 1e-4));
        }
        t += &format!(
            "buffer = {}\n",
            match p.below(3) {
                0 => format!("{{ packets = {} }}", p.within(300.0, 3000.0)),
                1 => format!(
                    "{{ bdp_fraction = {}, reference_rtt = \"{}ms\" }}",
                    p.within(0.5, 2.0),
                    p.within(100.0, 300.0)
                ),
                _ => "{ bytes = \"5MB\" }".to_string(),
            }
        );
        match p.below(3) {
            0 => {}
            1 => {
                t += &format!(
                    "queue = {{ discipline = \"red\", min_th = {}, max_th = {} }}\n",
                    p.within(5.0, 50.0),
                    p.within(100.0, 250.0)
                )
            }
            _ => {
                xcp_links.push(format!("l{i}"));
                t += &format!(
                    "queue = {{ discipline = \"xcp\", preset = \"{}\", gamma = {} }}\n",
                    p.one(&["original", "conservative"]),
                    p.within(0.01, 0.2)
                )
            }
        }
        match p.below(3) {
            0 => {}
            1 => t += "reverse = true\n",
            _ => {
                t += &format!(
                    "reverse = {{ capacity = {}, buffer = {{ packets = {} }} }}\n",
                    p.within(1e8, 1e9),
                    p.within(300.0, 900.0)
                )
            }
        }
    }
    let groups = 1 + p.below(4);

    for _ in 0..groups {
        let count = 1 + p.below(5);
        // A random path: a rotation of the links, cut at a random length.
        let first = p.below(n_links);
        let len = 1 + p.below(n_links);
        let path: Vec<String> = (0..len)
            .map(|k| format!("\"l{}\"", (first + k) % n_links))
            .collect();
        t += &format!("[[flows]]\ncount = {count}\npath = [{}]\n", path.join(", "));
        let through_xcp = path.iter().any(|l| xcp_links.contains(&l.replace('"', "")));
        t += &format!(
            "cc = {}\n",
            if through_xcp && p.chance(0.5) {
                "\"xcp\"".to_string()
            } else {
                random_cc(&mut p)
            }
        );
        t += &match p.below(3) {
            0 => format!("rtt = {}\n", p.within(0.07, 0.3)),
            1 => format!(
                "rtt = \"{}ms..{}ms\"\n",
                p.within(70.0, 100.0),
                p.within(100.0, 300.0)
            ),
            _ => format!(
                "rtt = [{}]\n",
                (0..count)
                    .map(|_| p.within(0.07, 0.3).to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        };
        t += &match p.below(3) {
            0 => String::new(),
            1 => format!("start = {}\n", p.within(0.0, 5.0)),
            _ => format!(
                "start = {{ uniform = [\"0s\", \"{}s\"] }}\n",
                p.within(0.0, 5.0)
            ),
        };
        if p.chance(0.3) {
            t += "direction = \"reverse\"\n";
        }
        if p.chance(0.3) {
            t += &format!("parallel = {}\n", 1 + p.below(4));
        }
        if p.chance(0.3) {
            t += &format!("rwnd = {{ packets = {} }}\n", p.within(10.0, 1e4));
        }
        if p.chance(0.5) {
            t += "slow_start = true\n";
        }
        if p.chance(0.5) {
            t += &format!("initial_window = {}\n", p.within(1.0, 50.0));
        }
        t += p.one(&["", "pacing = true\n", "pacing = { ss_ratio = 1.7 }\n"]);
        t += p.one(&["", "delayed_ack = true\n", "delayed_ack = { count = 4 }\n"]);
        if p.chance(0.3) {
            t += &format!("access_capacity = {}\n", p.within(1e8, 1e10));
        }
        if p.chance(0.3) {
            t += "ack_size = \"64B\"\n";
        }
    }
    t += "[loss]\n";
    if p.chance(0.7) {
        t += "model = \"sync\"\n";
        t += &format!(
            "policy = \"{}\"\n",
            p.one(&["highest_rate", "largest_window", "random", "round_robin"])
        );
        t += &match p.below(4) {
            0 => "sync = { kind = \"all\" }\n".to_string(),
            1 => "sync = { kind = \"fixed\", m = 1 }\n".to_string(),
            2 => format!(
                "sync = {{ kind = \"normal\", x = {} }}\n",
                p.within(0.05, 1.0)
            ),
            _ => "sync = { kind = \"empirical\", probabilities = [[1, 0.25], [1, 0.75]] }\n"
                .to_string(),
        };
        if p.chance(0.3) {
            t += &format!("holdoff = {}\n", p.within(0.0, 0.2));
        }
        if p.chance(0.3) {
            t += &format!("reductions_per_event = {}\n", p.within(0.1, 4.0));
        }
        if p.chance(0.3) {
            t += &format!("recovery_pause = {}\n", p.chance(0.5));
        }
    } else if p.chance(0.5) {
        t += "model = \"tcp\"\n";
    }
    let duration = p.within(10.0, 1000.0);
    t += &format!(
        "[run]\nduration = {duration}\nwarmup = {}\nseed = {}\nstep = {}\nrecord_interval = {}\n",
        p.within(0.0, duration / 2.0),
        p.0.next_u64() >> 1,
        p.within(1e-4, 1e-3),
        p.within(1e-3, 1.0),
    );
    t
}

#[test]
fn randomly_assembled_scenarios_round_trip() {
    let (mut ok, mut refused) = (0, Vec::new());
    for seed in 0..300 {
        let text = random_scenario(seed);
        match scenario::from_toml(&text, Path::new("/")) {
            Ok(sc) => {
                assert_round_trip(&sc, Path::new("/"), &format!("random scenario {seed}"));
                ok += 1;
            }
            Err(e) => refused.push(e.to_string()),
        }
    }
    // Most assemblies are valid; the rest are refused for a reason the format states.
    assert!(ok >= 200, "{ok} valid; refused: {refused:#?}");
}
