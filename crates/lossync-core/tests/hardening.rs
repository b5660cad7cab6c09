//! Inputs users reported as accepted or mishandled, by class: a step longer than the RTT, fields a
//! tagged table does not use, numbers no network has (and NaN), errors naming the wrong field,
//! packet-engine runs the machine cannot hold, and packet-engine utilization above 1. Each test
//! failed before its fix.

mod common;

use common::scenario;
use lossync_core::scenario::{from_json, from_toml};
use lossync_core::Scenario;
use std::path::Path;

fn parse(text: &str) -> Result<Scenario, String> {
    from_toml(text, Path::new(".")).map_err(|e| e.to_string())
}

/// The error a scenario is refused with (panics if it is accepted).
#[track_caller]
fn refused(text: &str) -> String {
    match parse(text) {
        Ok(_) => panic!("accepted:\n{text}"),
        Err(e) => e,
    }
}

#[track_caller]
fn assert_refused(text: &str, want: &str) {
    let err = refused(text);
    assert!(err.starts_with(want), "{err}\nwanted: {want}\n{text}");
}

const LINK: &str = "[dumbbell]\ncapacity = \"1Gbps\"\nbuffer = { packets = 500 }\n";
const FLOW: &str = "[[flows]]\ncc = \"reno\"\nrtt = \"100ms\"\n";

#[test]
fn every_tagged_table_refuses_fields_it_does_not_use() {
    let with_queue = |q: &str| format!("{LINK}queue = {q}\n{FLOW}");
    let with_sync = |s: &str| format!("{LINK}{FLOW}[loss]\nmodel = \"sync\"\nsync = {s}\n");
    let cases = [
        (
            with_queue("{ discipline = \"droptail\", max_th = 5 }"),
            "dumbbell.queue.max_th: unknown field",
        ),
        (
            with_queue("{ discipline = \"red\", min_th = 5, max_th = 50, foo = 1 }"),
            "dumbbell.queue.foo: unknown field",
        ),
        (
            with_queue("{ discipline = \"red\", min_th = 5, max_th = 50, alpha = 0.4 }"),
            "dumbbell.queue.alpha: unknown field",
        ),
        (
            with_queue("{ discipline = \"xcp\", min_th = 5 }"),
            "dumbbell.queue.min_th: unknown field",
        ),
        (
            with_queue("{ min_th = 5, max_th = 50 }"),
            "dumbbell.queue: missing field `discipline`",
        ),
        (
            with_queue("{ discipline = \"codel\" }"),
            "dumbbell.queue.discipline: unknown discipline \"codel\"",
        ),
        (
            format!(
                "{LINK}reverse = {{ queue = {{ discipline = \"droptail\", weight = 0.1 }} }}\n{FLOW}"
            ),
            "dumbbell.reverse.queue.weight: unknown field",
        ),
        (
            with_sync("{ kind = \"all\", x = 0.3 }"),
            "loss.sync.x: unknown field",
        ),
        (
            with_sync("{ kind = \"fixed\", m = 1, x = 0.3 }"),
            "loss.sync.x: unknown field",
        ),
        (
            with_sync("{ kind = \"normal\", x = 0.3, m = 2 }"),
            "loss.sync.m: unknown field",
        ),
        (
            with_sync("{ kind = \"empirical\", probabilities = [[1, 1.0]], std = 1 }"),
            "loss.sync.std: unknown field",
        ),
        (
            format!("{LINK}{FLOW}start = {{ uniform = [\"0s\", \"1s\"], to = 2 }}\n"),
            "flows[0].start.to: unknown field",
        ),
    ];
    for (text, want) in cases {
        assert_refused(&text, want);
    }
}

/// A resolved scenario (JSON) is read as strictly.
#[test]
fn a_resolved_scenario_refuses_fields_it_does_not_use() {
    let sc = scenario(&format!(
        "{LINK}{FLOW}[loss]\nmodel = \"sync\"\nsync = {{ kind = \"all\" }}\n"
    ));
    let good = serde_json::to_value(&sc).unwrap();
    let bad = |edit: &dyn Fn(&mut serde_json::Value)| {
        let mut v = good.clone();
        edit(&mut v);
        from_json(&v.to_string(), Path::new("."))
            .unwrap_err()
            .to_string()
    };
    type Edit<'a> = &'a dyn Fn(&mut serde_json::Value);
    let cases: [(Edit, &str); 4] = [
        (
            &|v| v["links"][0]["queue"]["max_th"] = 5.into(),
            "links[0].queue.max_th: unknown field",
        ),
        (
            &|v| v["loss"]["sync"]["x"] = 0.3.into(),
            "loss.sync.x: unknown field",
        ),
        (
            &|v| v["loss"] = serde_json::json!({"model": "tcp", "policy": "random"}),
            "loss.policy: unknown field",
        ),
        (
            &|v| v["flows"][0]["zzz"] = 1.into(),
            "flows[0].zzz: unknown field",
        ),
    ];
    for (edit, want) in cases {
        let err = bad(edit);
        assert!(err.starts_with(want), "{err}\nwanted: {want}");
    }
    // Unchanged, it reads back.
    assert_eq!(from_json(&good.to_string(), Path::new(".")).unwrap(), sc);
}
