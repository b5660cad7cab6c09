//! A resolved scenario written back as a scenario file: [`to_toml`] gives TOML that resolves to
//! exactly the same [`Scenario`] (same values, bit for bit).
//!
//! - Links are written as an explicit `[[links]]` list (the dumbbell is its one-link case) with
//!   the buffer in packets; a modelled reverse direction as `reverse = { capacity, buffer, queue }`
//!   on its link.
//! - Flow groups are rebuilt from the flows: consecutive flows of one group with the same settings
//!   are one `[[flows]]` group, each logical flow's connections its `parallel`, RTTs and start
//!   times one value when all agree, else a list (a range or uniform start draws become the values
//!   they gave). Every setting is written, defaults included, except those whose default is "none"
//!   (`rwnd`, `access_capacity`, the normal controller's `mean` and `std`, `holdoff`).
//! - Every congestion-control parameter is written in `cc`.
//! - An empirical m_k distribution is written inline (`probabilities`), with the CSV it was read
//!   from as `file` (recorded, not read again): the file is self-contained.
//! - Numbers are written in Rust's shortest form that reads back to the same `f64`.
//!
//! The seed is written as an integer; one above 2^63 − 1 (possible from JSON) reads back here, but
//! is beyond TOML's integers for other readers.

use super::model::*;
use serde_json::Value;
use std::fmt::Write as _;

/// The scenario as a TOML scenario file that resolves to the same scenario.
pub fn to_toml(sc: &Scenario) -> String {
    let mut out = String::new();
    let o = &mut out;
    o.push_str(
        "# A resolved scenario: every default written out (run.threads and run.series_flows\n\
         # where set: they change no number of the summary). Running it reproduces the run it\n\
         # came from (docs/scenario.md, \"Resolved scenarios\").\n",
    );
    line(o, "name", &string(&sc.name));
    line(o, "engine", &string(sc.engine.name()));
    for (i, l) in sc.links.iter().enumerate() {
        if l.reverse_of.is_none() {
            let reverse = sc.links.iter().find(|r| r.reverse_of == Some(i));
            write_link(o, l, reverse);
        }
    }
    for group in flow_groups(&sc.flows) {
        write_group(o, sc, &group);
    }
    write_loss(o, &sc.loss);
    let r = &sc.run;
    o.push_str("\n[run]\n");
    line(o, "duration", &num(r.duration_s));
    line(o, "warmup", &num(r.warmup_s));
    line(
        o,
        "from_first_congestion",
        &r.from_first_congestion.to_string(),
    );
    line(o, "step", &num(r.step_s));
    line(o, "seed", &r.seed.to_string());
    line(o, "record_interval", &num(r.record_interval_s));
    if r.aggregate_interval_s > 0.0 {
        line(o, "aggregate_interval", &num(r.aggregate_interval_s));
    }
    if r.threads > 0 {
        line(o, "threads", &r.threads.to_string());
    }
    line(
        o,
        "scheduler",
        if r.scheduler == super::model::Scheduler::Partitioned {
            "\"partitioned\""
        } else {
            "\"serial\""
        },
    );
    if r.series_flows != super::model::DEFAULT_SERIES_FLOWS {
        line(o, "series_flows", &r.series_flows.to_string());
    }
    out
}

fn line(o: &mut String, key: &str, value: &str) {
    let _ = writeln!(o, "{key} = {value}");
}

/// Shortest decimal that reads back to the same `f64` (Rust's `Debug` form: always with a `.` or
/// an exponent, so TOML reads a float).
fn num(x: f64) -> String {
    if x.is_nan() {
        "nan".into()
    } else if x.is_infinite() {
        if x > 0.0 { "inf" } else { "-inf" }.into()
    } else {
        format!("{x:?}")
    }
}

/// A TOML basic string.
fn string(s: &str) -> String {
    let mut q = String::with_capacity(s.len() + 2);
    q.push('"');
    for c in s.chars() {
        match c {
            '"' => q.push_str("\\\""),
            '\\' => q.push_str("\\\\"),
            '\n' => q.push_str("\\n"),
            '\t' => q.push_str("\\t"),
            '\r' => q.push_str("\\r"),
            c if (c as u32) < 0x20 || c as u32 == 0x7f => {
                let _ = write!(q, "\\u{:04X}", c as u32);
            }
            c => q.push(c),
        }
    }
    q.push('"');
    q
}

/// `{ k = v, ... }`.
fn inline(pairs: &[(&str, String)]) -> String {
    let body: Vec<String> = pairs.iter().map(|(k, v)| format!("{k} = {v}")).collect();
    format!("{{ {} }}", body.join(", "))
}

/// An array, ten values a line when long.
fn array(values: &[String]) -> String {
    if values.len() <= 10 {
        return format!("[{}]", values.join(", "));
    }
    let lines: Vec<String> = values
        .chunks(10)
        .map(|c| format!("  {},", c.join(", ")))
        .collect();
    format!("[\n{}\n]", lines.join("\n"))
}

/// A parameter's value (a law's or a discipline's): a number, a boolean or a name.
fn value(v: &Value) -> String {
    match v {
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => num(n.as_f64().unwrap_or(f64::NAN)),
        Value::String(s) => string(s),
        other => unreachable!("a parameter is a number, a boolean or a name, got {other}"),
    }
}

fn queue(q: &Queue) -> String {
    let values = q.values();
    let mut pairs = vec![("discipline", string(q.name()))];
    pairs.extend(values.iter().map(|(k, v)| (k.as_str(), value(v))));
    inline(&pairs)
}

fn buffer(pkts: f64) -> String {
    inline(&[("packets", num(pkts))])
}

fn write_link(o: &mut String, l: &Link, reverse: Option<&Link>) {
    o.push_str("\n[[links]]\n");
    line(o, "name", &string(&l.name));
    line(o, "capacity", &num(l.capacity_bps));
    line(o, "packet_size", &num(l.packet_size_bytes));
    line(o, "buffer", &buffer(l.buffer_pkts));
    line(o, "queue", &queue(&l.queue));
    line(o, "delay", &num(l.delay_s));
    if let (Some(from), Some(to)) = (&l.from, &l.to) {
        line(o, "from", &string(from));
        line(o, "to", &string(to));
    }
    line(o, "loss_rate", &num(l.loss_rate));
    if let Some(a) = &l.assembler {
        let list = |v: &[f64]| {
            let items: Vec<String> = v.iter().map(|&x| num(x)).collect();
            format!("[{}]", items.join(", "))
        };
        let mut fields = vec![("policy", string(a.policy.name()))];
        if a.policy == AssemblyPolicy::Window {
            fields.push(("timers", list(&a.timers_s)));
            fields.push(("thresholds", list(&a.thresholds_pkts)));
        } else {
            fields.push(("timer", num(a.timer_s)));
        }
        if a.policy == AssemblyPolicy::Random {
            fields.push(("queues", a.queues.to_string()));
        }
        if a.max_burst_pkts > 0 {
            fields.push(("max_burst", a.max_burst_pkts.to_string()));
        }
        if let Some(file) = &a.m_file {
            fields.push(("m_distribution", string(file)));
        }
        line(o, "assembler", &inline(&fields));
    }
    if l.burst_loss > 0.0 {
        line(o, "burst_loss", &num(l.burst_loss));
    }
    if let Some(c) = &l.contention {
        let mut fields = vec![("wavelengths", c.wavelengths.to_string())];
        if c.fdls > 0 {
            fields.push(("fdls", c.fdls.to_string()));
            fields.push(("fdl_delay", num(c.fdl_delay_s)));
        }
        if c.background_erlangs > 0.0 {
            fields.push(("background", num(c.background_erlangs)));
            fields.push(("background_burst", num(c.background_burst_s)));
        }
        line(o, "contention", &inline(&fields));
    }
    match reverse {
        None => line(o, "reverse", "false"),
        Some(r) => line(
            o,
            "reverse",
            &inline(&[
                ("capacity", num(r.capacity_bps)),
                ("buffer", buffer(r.buffer_pkts)),
                ("queue", queue(&r.queue)),
            ]),
        ),
    }
}

/// A logical flow: its first connection and how many connections it has.
type Logical<'a> = (&'a Flow, usize);

/// The flows as file groups: logical flows are runs of identical connections with one `logical`
/// index; a group is a run of logical flows of one group index with the same group settings.
fn flow_groups(flows: &[Flow]) -> Vec<Vec<Logical<'_>>> {
    let mut logicals: Vec<Logical> = Vec::new();
    for f in flows {
        match logicals.last_mut() {
            Some((first, n)) if *first == f => *n += 1,
            _ => logicals.push((f, 1)),
        }
    }
    let mut groups: Vec<Vec<Logical>> = Vec::new();
    for l in logicals {
        match groups.last_mut() {
            Some(g) if same_group(g[0], l) => g.push(l),
            _ => groups.push(vec![l]),
        }
    }
    groups
}

/// Whether two logical flows can be written in one group (everything but RTT, start time and
/// logical index agrees).
fn same_group((a, na): Logical, (b, nb): Logical) -> bool {
    na == nb
        && a.group == b.group
        && a.group_name == b.group_name
        && a.cc == b.cc
        && a.rwnd_pkts.to_bits() == b.rwnd_pkts.to_bits()
        && a.path == b.path
        && a.ack_path == b.ack_path
        && a.reverse == b.reverse
        && a.delayed_ack == b.delayed_ack
        && a.ack_size_bytes.to_bits() == b.ack_size_bytes.to_bits()
        && a.access_capacity_bps.map(f64::to_bits) == b.access_capacity_bps.map(f64::to_bits)
        && a.slow_start == b.slow_start
        && a.initial_window_pkts.to_bits() == b.initial_window_pkts.to_bits()
        && a.pacing == b.pacing
        && a.ecn == b.ecn
        && a.send_jitter_s.to_bits() == b.send_jitter_s.to_bits()
        && a.arrivals == b.arrivals
        && a.recovery == b.recovery
        && a.loss_detection == b.loss_detection
        && a.hystart == b.hystart
        && a.undo == b.undo
}

/// One value if all are the same bits, else a list.
fn one_or_list(values: &[f64]) -> String {
    if values.iter().all(|v| v.to_bits() == values[0].to_bits()) {
        num(values[0])
    } else {
        array(&values.iter().map(|&v| num(v)).collect::<Vec<_>>())
    }
}

fn write_group(o: &mut String, sc: &Scenario, group: &[Logical]) {
    let (f, connections) = group[0];
    o.push_str("\n[[flows]]\n");
    line(o, "name", &string(&f.group_name));
    if let Some(a) = f.arrivals {
        // The pool is the group's connections; `count`, `start` and `parallel` do not apply.
        line(
            o,
            "arrivals",
            &inline(&[
                ("rate", num(a.rate_per_s)),
                ("shape", num(a.shape)),
                ("min_size", num(a.min_size_bytes)),
                ("max_active", a.max_active.to_string()),
            ]),
        );
    } else {
        line(o, "count", &group.len().to_string());
    }
    let mut cc = vec![("variant", string(f.cc.name()))];
    let values = f.cc.values();
    cc.extend(values.iter().map(|(k, v)| (k.as_str(), value(v))));
    line(o, "cc", &inline(&cc));
    let rtts: Vec<f64> = group.iter().map(|(f, _)| f.rtt_s).collect();
    let starts: Vec<f64> = group.iter().map(|(f, _)| f.start_s).collect();
    line(o, "rtt", &one_or_list(&rtts));
    if f.arrivals.is_none() {
        line(o, "start", &one_or_list(&starts));
    }
    // The file names the links of the forward direction; a reverse flow's ACKs take those.
    let named = if f.reverse { &f.ack_path } else { &f.path };
    let names: Vec<String> = named.iter().map(|&l| string(&sc.links[l].name)).collect();
    line(o, "path", &array(&names));
    line(
        o,
        "direction",
        &string(if f.reverse { "reverse" } else { "forward" }),
    );
    if f.arrivals.is_none() {
        line(o, "parallel", &connections.to_string());
    }
    line(o, "slow_start", &f.slow_start.to_string());
    line(o, "initial_window", &num(f.initial_window_pkts));
    line(o, "ecn", &f.ecn.to_string());
    match f.pacing {
        None => line(o, "pacing", "false"),
        Some(p) => line(
            o,
            "pacing",
            &inline(&[("ss_ratio", num(p.ss_ratio)), ("ca_ratio", num(p.ca_ratio))]),
        ),
    }
    match f.delayed_ack {
        None => line(o, "delayed_ack", "false"),
        Some(d) => line(
            o,
            "delayed_ack",
            &inline(&[
                ("count", d.count.to_string()),
                ("timeout", num(d.timeout_s)),
            ]),
        ),
    }
    // Written at their defaults too: the packet sender's defaults are to follow Linux's
    // (issue 34), and a file written today must run the sender it ran when they do.
    line(o, "recovery", &format!("{:?}", f.recovery.name()));
    line(o, "loss_detection", &string(f.loss_detection.name()));
    line(o, "hystart", &string(f.hystart.name()));
    line(o, "undo", &f.undo.to_string());
    line(o, "ack_size", &num(f.ack_size_bytes));
    if f.rwnd_pkts.is_finite() {
        line(o, "rwnd", &inline(&[("packets", num(f.rwnd_pkts))]));
    } else {
        o.push_str("# rwnd: none\n");
    }
    match f.access_capacity_bps {
        Some(bps) => line(o, "access_capacity", &num(bps)),
        None => o.push_str("# access_capacity: 10 × the first link of the path\n"),
    }
    line(o, "send_jitter", &num(f.send_jitter_s));
}

fn write_loss(o: &mut String, loss: &LossModel) {
    o.push_str("\n[loss]\n");
    let (sync, policy, reductions_per_event, holdoff_s, recovery_pause) = match loss {
        LossModel::Proportional => return line(o, "model", &string("proportional")),
        LossModel::Tcp {
            burst_pkts,
            burst_per_sqrt_buffer,
            event_threshold,
            growth_share,
            calibration,
            fitted_buffer_pkts,
        } => {
            line(o, "model", &string("tcp"));
            match (burst_pkts, burst_per_sqrt_buffer) {
                (Some(b), _) => line(o, "burst_pkts", &num(*b)),
                (None, Some(c)) => line(o, "burst_per_sqrt_buffer", &num(*c)),
                (None, None) => o.push_str(
                    "# burst_pkts: per drop-tail link, the default (docs/fluid.md, \"Burst headroom\")\n",
                ),
            }
            if *event_threshold != 1.0 {
                line(o, "event_threshold", &num(*event_threshold));
            }
            if let Some(g) = growth_share {
                line(o, "growth_share", &num(*g));
            }
            // What a calibration file set is written out, with the buffer it was fitted at, so
            // the rerun keeps its values and its warning at another buffer.
            if let Some(b) = fitted_buffer_pkts {
                line(o, "fitted_buffer_pkts", &num(*b));
            }
            if let Some(c) = calibration {
                let _ = writeln!(o, "# from the calibration file {c}");
            }
            return;
        }
        LossModel::Sync {
            sync,
            policy,
            reductions_per_event,
            holdoff_s,
            recovery_pause,
        } => (
            sync,
            policy,
            reductions_per_event,
            holdoff_s,
            recovery_pause,
        ),
    };
    line(o, "model", &string("sync"));
    let policy = serde_json::to_value(policy).expect("a policy serializes");
    line(
        o,
        "policy",
        &string(policy.as_str().expect("a policy is a name")),
    );
    line(o, "reductions_per_event", &num(*reductions_per_event));
    match holdoff_s {
        Some(h) => line(o, "holdoff", &num(*h)),
        None => o.push_str("# holdoff: the slowest signalled flow's current RTT\n"),
    }
    if *recovery_pause {
        line(o, "recovery_pause", "true");
    }
    o.push_str("\n[loss.sync]\n");
    match sync {
        Sync::All => line(o, "kind", &string("all")),
        Sync::Fixed { m } => {
            line(o, "kind", &string("fixed"));
            line(o, "m", &m.to_string());
        }
        Sync::Normal { x, mean, std } => {
            line(o, "kind", &string("normal"));
            line(o, "x", &num(*x));
            match mean {
                Some(m) => line(o, "mean", &num(*m)),
                None => o.push_str("# mean: (⌈XN⌉ + N)/2 at each link\n"),
            }
            match std {
                Some(s) => line(o, "std", &num(*s)),
                None => o.push_str("# std: (N − ⌈XN⌉)/4 at each link\n"),
            }
        }
        Sync::Empirical {
            file,
            probabilities,
        } => {
            line(o, "kind", &string("empirical"));
            if let Some(f) = file {
                line(o, "file", &string(f));
            }
            let pairs: Vec<String> = probabilities
                .iter()
                .map(|&(m, p)| format!("[{m}, {}]", num(p)))
                .collect();
            line(o, "probabilities", &array(&pairs));
        }
    }
}
