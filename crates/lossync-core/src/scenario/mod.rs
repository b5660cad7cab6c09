//! The scenario format shared by every engine: what a scenario file says
//! ([`file`](mod@file): [`ScenarioSpec`], read from TOML or JSON), what a run uses ([`model`]:
//! [`Scenario`], validated, every default filled in), the step between them (`resolve`), and the
//! way back ([`write`](mod@write): [`to_toml`], a scenario file that resolves to the same
//! scenario). Field by field documentation: docs/scenario.md.

pub mod calibration;
pub mod empirical;
pub mod file;
pub mod limits;
pub mod model;
pub mod resolve;
pub mod write;

pub use empirical::read_m_distribution;
pub use file::*;
pub use model::*;
pub use resolve::resolve;
pub use write::to_toml;

use crate::error::{Error, Result};
use serde_json::Value;
use std::path::Path;

/// Reads a scenario from TOML text. `base_dir` resolves relative file names (empirical CSVs).
pub fn from_toml(text: &str, base_dir: &Path) -> Result<Scenario> {
    let value: Value = toml::from_str(text).map_err(|e| {
        let msg = e.message().to_string();
        let line = e
            .span()
            .map(|s| text[..s.start.min(text.len())].lines().count().max(1));
        match line {
            Some(l) => Error::field(format!("line {l}"), msg),
            None => Error::field("scenario", msg),
        }
    })?;
    // JSON has no NaN or infinity: converted to JSON, TOML's `nan` and `inf` would become `null`,
    // which an optional field reads as "not given" (its default). Refused here, by name.
    if let Ok(table) = toml::from_str::<toml::Table>(text) {
        for (key, v) in &table {
            non_finite(key, v)?;
        }
    }
    from_value(value, base_dir)
}

/// Refuses a float that is NaN or infinite anywhere under `v` (at `path`).
fn non_finite(path: &str, v: &toml::Value) -> Result<()> {
    match v {
        toml::Value::Float(x) if !x.is_finite() => Err(Error::field(
            path,
            format!("{x} is not a number a scenario can use (give a finite number)"),
        )),
        toml::Value::Array(a) => a
            .iter()
            .enumerate()
            .try_for_each(|(i, v)| non_finite(&format!("{path}[{i}]"), v)),
        toml::Value::Table(t) => t
            .iter()
            .try_for_each(|(k, v)| non_finite(&format!("{path}.{k}"), v)),
        _ => Ok(()),
    }
}

/// Reads a scenario from JSON text (what the Python front end sends after applying overrides):
/// a scenario file's structure, or a resolved scenario (the JSON `lossync validate` prints and
/// `summary.json` records).
pub fn from_json(text: &str, base_dir: &Path) -> Result<Scenario> {
    let value: Value =
        serde_json::from_str(text).map_err(|e| Error::field("scenario", e.to_string()))?;
    from_value(value, base_dir)
}

/// Reads a scenario from a JSON value: a scenario file's structure, or a resolved scenario, which
/// is written as a scenario file ([`to_toml`]) and resolved again, so every check applies (errors
/// then name the fields of that file: `flows[i]` is the i-th group it writes).
pub fn from_value(value: Value, base_dir: &Path) -> Result<Scenario> {
    if is_resolved(&value) {
        let sc: Scenario = serde_path_to_error::deserialize(value).map_err(field_error)?;
        return from_toml(&to_toml(&sc), base_dir);
    }
    let spec: ScenarioSpec = serde_path_to_error::deserialize(value).map_err(field_error)?;
    resolve(&spec, base_dir)
}

/// A resolved scenario's links have `capacity_bps`, a field no scenario file has.
fn is_resolved(value: &Value) -> bool {
    value
        .get("links")
        .and_then(Value::as_array)
        .and_then(|l| l.first())
        .is_some_and(|l| l.get("capacity_bps").is_some())
}

/// The error's field is serde's path, extended by the field a table read whole names
/// ([`crate::error::field_err`]).
fn field_error(e: serde_path_to_error::Error<serde_json::Error>) -> Error {
    let path = e.path().to_string();
    let msg = e.into_inner().to_string();
    let (path, msg) = match crate::error::split_field_error(&msg) {
        Some((rel, reason)) => (crate::error::join_path(&path, rel), reason.to_string()),
        None => (path, msg),
    };
    let field = if path == "." || path.is_empty() {
        "scenario".to_string()
    } else {
        path
    };
    Error::field(field, msg)
}
#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<Scenario> {
        from_toml(text, Path::new("."))
    }

    const LINK: &str = "[dumbbell]\ncapacity = \"1Gbps\"\nbuffer = { bdp_fraction = 0.5 }\n";
    const XY: &str = "from = \"x\"\nto = \"y\"\n";
    const YZ: &str = "from = \"y\"\nto = \"z\"\n";

    /// Links `a` and `b` with extra lines each, and one Reno flow over `path`.
    fn two(a: &str, b: &str, path: &str) -> String {
        format!(
            "[[links]]\nname = \"a\"\ncapacity = \"1Gbps\"\nbuffer = {{ packets = 10 }}\n{a}\
             [[links]]\nname = \"b\"\ncapacity = \"1Gbps\"\nbuffer = {{ packets = 10 }}\n{b}\
             [[flows]]\ncc = \"reno\"\nrtt = 0.1\npath = {path}\n"
        )
    }

    #[test]
    fn a_packet_time_is_one_packet_at_the_links_rate() {
        // 1500 B at 10 Gb/s: 12,000 bits / 1e10 b/s = 1.2 µs. (The fluid engine handed its
        // queue disciplines 8 × 1500 times that.)
        let sc = parse(
            "[dumbbell]\ncapacity = \"10Gbps\"\nbuffer = { packets = 10 }\n\
             [[flows]]\ncc = \"reno\"\nrtt = 0.1\n",
        )
        .unwrap();
        assert_eq!(sc.links[0].packet_time_ps(), 1_200_000);
    }

    #[test]
    fn rtt_range_spreads_evenly_and_buffer_uses_the_mean_rtt() {
        let sc = parse(&format!(
            "{LINK}[[flows]]\ncount = 5\ncc = \"reno\"\nrtt = \"100ms..300ms\"\n"
        ))
        .unwrap();
        let rtts: Vec<f64> = sc.flows.iter().map(|f| (f.rtt_s * 1e3).round()).collect();
        assert_eq!(rtts, vec![100.0, 150.0, 200.0, 250.0, 300.0]);
        // 0.5 × (1e9 / 12,000 pkt/s) × 0.2 s mean RTT = 8,333.3 packets.
        assert!((sc.links[0].buffer_pkts - 0.5 * 1e9 / 12_000.0 * 0.2).abs() < 1e-9);
    }

    #[test]
    fn an_rtt_range_for_one_flow_is_refused_naming_the_field() {
        let e = parse(&format!(
            "{LINK}[[flows]]\ncc = \"reno\"\nrtt = \"10ms..50ms\"\n"
        ))
        .unwrap_err()
        .to_string();
        assert!(e.starts_with("flows[0].rtt:"), "{e}");
        // A range of one value is one RTT.
        let sc = parse(&format!(
            "{LINK}[[flows]]\ncc = \"reno\"\nrtt = \"10ms..10ms\"\n"
        ))
        .unwrap();
        assert_eq!(sc.flows[0].rtt_s, 0.01);
    }

    #[test]
    fn two_groups_of_one_name_are_refused_naming_the_second() {
        let group = |name: &str, cc: &str| {
            format!("[[flows]]\nname = \"{name}\"\ncc = \"{cc}\"\nrtt = \"10ms\"\n")
        };
        let e = parse(&format!(
            "{LINK}{}{}",
            group("a", "cubic"),
            group("a", "reno")
        ))
        .unwrap_err()
        .to_string();
        assert!(
            e.starts_with("flows[1].name: \"a\" names flows[0] too"),
            "{e}"
        );
        // Unnamed groups are named by variant and index: two CUBIC groups stay apart.
        let two = "[[flows]]\ncc = \"cubic\"\nrtt = \"10ms\"\n".repeat(2);
        assert!(parse(&format!("{LINK}{two}")).is_ok());
    }

    #[test]
    fn uniform_starts_are_seeded_and_in_range() {
        let text = format!("{LINK}[[flows]]\ncount = 50\ncc = \"reno\"\nrtt = 0.1\nstart = {{ uniform = [\"1s\", \"3s\"] }}\n");
        let a = parse(&text).unwrap();
        let b = parse(&text).unwrap();
        let starts: Vec<f64> = a.flows.iter().map(|f| f.start_s).collect();
        assert!(starts.iter().all(|&s| (1.0..3.0).contains(&s)));
        assert_eq!(
            starts,
            b.flows.iter().map(|f| f.start_s).collect::<Vec<_>>()
        );
        let c = parse(&format!("{text}[run]\nseed = 2\n")).unwrap();
        assert_ne!(
            starts,
            c.flows.iter().map(|f| f.start_s).collect::<Vec<_>>()
        );
    }

    #[test]
    fn sizes_in_bytes_become_packets() {
        let sc = parse(
            "[dumbbell]\ncapacity = \"100Mbps\"\npacket_size = \"1KB\"\nbuffer = { bytes = \"200KB\" }\n\
             [[flows]]\ncc = \"reno\"\nrtt = \"23ms\"\nrwnd = { bytes = \"64KB\" }\n",
        )
        .unwrap();
        assert_eq!(sc.links[0].buffer_pkts, 200.0);
        assert_eq!(sc.flows[0].rwnd_pkts, 64.0);
        assert_eq!(sc.links[0].capacity_pps, 12_500.0);
    }

    #[test]
    fn reverse_flows_cross_the_mirror_and_acks_cross_back() {
        let sc = parse(&format!(
            "{LINK}[[flows]]\ncc = \"reno\"\nrtt = 0.1\n[[flows]]\ncc = \"reno\"\nrtt = 0.1\ndirection = \"reverse\"\n"
        ))
        .unwrap();
        assert_eq!(sc.links.len(), 2);
        assert_eq!(sc.links[1].name, "bottleneck-reverse");
        assert_eq!(sc.links[1].reverse_of, Some(0));
        assert_eq!(sc.links[1].buffer_pkts, sc.links[0].buffer_pkts);
        assert_eq!(
            (sc.flows[0].path.clone(), sc.flows[0].ack_path.clone()),
            (vec![0], vec![1])
        );
        assert_eq!(
            (sc.flows[1].path.clone(), sc.flows[1].ack_path.clone()),
            (vec![1], vec![0])
        );
        // Without `reverse`, ACKs take no link.
        let one = parse(&format!("{LINK}[[flows]]\ncc = \"reno\"\nrtt = 0.1\n")).unwrap();
        assert!(one.flows[0].ack_path.is_empty() && one.links.len() == 1);
    }

    #[test]
    fn congestion_control_parameters_resolve_with_their_defaults() {
        let sc = parse(&format!(
            "{LINK}[[flows]]\ncc = {{ variant = \"HighSpeed\", high_decrease = 0.2 }}\nrtt = 0.1\n"
        ))
        .unwrap();
        assert_eq!(
            sc.flows[0].cc,
            crate::cc::CcParams::HighSpeed(crate::cc::highspeed::HighSpeedParams {
                low_window: 38.0,
                high_window: 83000.0,
                high_p: 1e-7,
                high_decrease: 0.2,
            })
        );
        let json = serde_json::to_value(&sc).unwrap();
        assert_eq!(json["flows"][0]["variant"], "highspeed");
        assert_eq!(json["flows"][0]["params"]["low_window"], 38.0);
        assert_eq!(sc.flows[0].group_name, "highspeed0");
    }

    #[test]
    fn errors_name_their_field() {
        let cases = [
            (format!("{LINK}[[flows]]\ncount = 3\ncc = \"reno\"\nrtt = [0.1, 0.2]\n"), "flows[0].rtt: lists 2 RTTs for 3 flows"),
            (format!("{LINK}[[flows]]\ncc = \"reno\"\nrtt = 0.1\npath = [\"nowhere\"]\n"), "flows[0].path[0]: unknown link \"nowhere\""),
            (format!("{LINK}[[flows]]\ncc = \"reno\"\nrtt = 0.1\n[loss]\npolicy = \"random\"\n"), "loss.policy: only applies to model = \"sync\""),
            (format!("{LINK}[[flows]]\ncc = \"reno\"\nrtt = 0.1\n[run]\nstep = \"1s\"\nduration = \"5s\"\n"), "run.step: must be at most a tenth of run.duration"),
            ("[dumbbell]\ncapacity = \"1Gbps\"\nbuffer = { packets = 10, bytes = 100 }\n[[flows]]\ncc = \"reno\"\nrtt = 0.1\n".to_string(), "dumbbell.buffer: give exactly one of packets, bytes, bdp_fraction"),
            ("engine = \"warp drive\"\n".to_string() + LINK, "engine: \"warp drive\" is not an engine name"),
            (format!("{LINK}[[flows]]\ncc = \"reno\"\nrtt = 0.1\ndirection = \"sideways\"\n"), "flows[0].direction: unknown direction \"sideways\""),
            (format!("{LINK}reverse = false\n[[flows]]\ncc = \"reno\"\nrtt = 0.1\ndirection = \"reverse\"\n"), "dumbbell.reverse: is false, but flows[0]"),
            (format!("{LINK}[[flows]]\ncc = \"reno\"\nrtt = 0.1\nack_size = \"2KB\"\n"), "flows[0].ack_size: 2000 B is larger than a data packet"),
            (format!("{LINK}[[flows]]\ncc = \"reno\"\nrtt = 0.1\ndelayed_ack = {{ count = 0 }}\n"), "flows[0].delayed_ack.count: must be in 1..=64"),
            (format!("{LINK}[[flows]]\ncc = \"reno\"\nrtt = 0.1\nrecovery = \"newreno\"\n"), "flows[0].recovery: unknown fast recovery \"newreno\" (known: rfc6675, prr)"),
            (format!("{LINK}[[flows]]\ncc = \"reno\"\nrtt = 0.1\nhystart = \"hystart++\"\n"), "flows[0].hystart: unknown slow-start exit \"hystart++\" (known: off, rfc9406, linux)"),
            (format!("{LINK}[[flows]]\ncc = \"bbr\"\nrtt = 0.1\nhystart = \"linux\"\n"), "flows[0].hystart: bbr sets its own window: HyStart only ends a window law's slow start"),
            (format!("{LINK}[[flows]]\ncc = \"reno\"\nrtt = 0.1\nloss_detection = \"rack\"\n"), "flows[0].loss_detection: unknown loss detection \"rack\" (known: dupthresh, rack-tlp)"),
            (format!("{LINK}reverse = {{ speed = 1 }}\n[[flows]]\ncc = \"reno\"\nrtt = 0.1\n"), "dumbbell.reverse.speed: unknown field `speed`"),
            (format!("{LINK}[[flows]]\ncc = {{ variant = \"cubic\", beta = 1.5 }}\nrtt = 0.1\n"), "flows[0].cc.beta: 1.5 is out of range: must be in (0, 1)"),
            (format!("{LINK}[[flows]]\ncc = \"reno\"\nrtt = 0.1\n[[flows]]\ncc = {{ variant = \"reno\", c = 1 }}\nrtt = 0.1\n"), "flows[1].cc.c: unknown parameter (this variant takes: a, b)"),
            (format!("{LINK}[[flows]]\ncc = \"vegas\"\nrtt = 0.1\n"), "flows[0].cc.variant: unknown variant \"vegas\""),
            // Tagged tables whose kind takes no fields refuse fields too (they were ignored).
            (format!("{LINK}queue = {{ discipline = \"droptail\", max_th = 5 }}\n[[flows]]\ncc = \"reno\"\nrtt = 0.1\n"), "dumbbell.queue.max_th: unknown parameter (this discipline takes none)"),
            (format!("{LINK}[[flows]]\ncc = \"reno\"\nrtt = 0.1\n[loss]\nmodel = \"sync\"\nsync = {{ kind = \"all\", x = 0.3 }}\n"), "loss.sync.x: unknown field `x`"),
            // The field at fault, not a later one that trips over it.
            ("[dumbbell]\ncapacity = \"1Gbps\"\npacket_size = 0\nbuffer = { packets = 10 }\n[[flows]]\ncc = \"reno\"\nrtt = 0.1\n".to_string(), "dumbbell.packet_size: 0 is out of range"),
            ("[dumbbell]\ncapacity = \"1Gbps\"\npacket_size = 1500.5\nbuffer = { packets = 10 }\n[[flows]]\ncc = \"reno\"\nrtt = 0.1\n".to_string(), "dumbbell.packet_size: must be a whole number of bytes, got 1500.5"),
            (format!("{LINK}[[flows]]\ncount = 3\ncc = \"reno\"\nrtt = 0.1\n[loss]\nmodel = \"sync\"\nsync = {{ kind = \"fixed\", m = 2.5 }}\n"), "loss.sync.m: must be a whole number"),
            (format!("{LINK}[[flows]]\ncc = \"reno\"\nrtt = 0.1\ninitial_window = 1e300\n"), "flows[0].initial_window: 1e300 is out of range"),
            // A positive field's range is open at 0, and a value just past a bound is not
            // rounded onto it ("1e7 is out of range: must be in [0, 1e7]" said 10000001).
            (format!("{LINK}[[flows]]\ncc = \"reno\"\nrtt = 0.1\n[run]\nduration = 10000001\n"), "run.duration: 10000001 is out of range: must be in (0, 1e7]"),
            (format!("{LINK}[[flows]]\ncc = \"reno\"\nrtt = 0.1\ninitial_window = 1e300\n"), "flows[0].initial_window: 1e300 is out of range: must be in (0, "),
            // Paths over named links: no unknown link, no loop; connected when links name
            // their end nodes.
            (two("", "", "[\"a\", \"c\"]"), "flows[0].path[1]: unknown link \"c\" (links: a, b)"),
            (two("", "", "[\"a\", \"b\", \"a\"]"), "flows[0].path[2]: link \"a\" again (path[0])"),
            (two(XY, YZ, "[\"b\", \"a\"]"), "flows[0].path[1]: link \"a\" starts at node \"x\", not at \"z\" where path[0] (\"b\") ends"),
            (two(XY, "from = \"y\"\nto = \"x\"\n", "[\"a\", \"b\"]"), "flows[0].path[1]: link \"b\" returns to node \"x\""),
            (two("", YZ, "[\"a\"]"), "links[0].from: needed: links[1] names its end nodes"),
            (two("", "from = \"y\"\n", "[\"a\"]"), "links[1].to: needed with `from`"),
            (two("", "from = \"y\"\nto = \"y\"\n", "[\"a\"]"), "links[1].to: \"y\" is also `from`"),
        ];
        for (text, want) in cases {
            let err = parse(&text).unwrap_err().to_string();
            assert!(err.starts_with(want), "{err}\nwanted: {want}");
        }
    }
}
