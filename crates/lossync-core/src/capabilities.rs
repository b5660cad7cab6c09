//! What an engine can run, declared once per engine ([`Capabilities`]), and the one checker that
//! refuses a scenario asking for more ([`refuse_beyond`]). The core's engines declare theirs in
//! the core's registry (`registry::engines`); the engines of the Python front end declare
//! the same fields and reach this checker through the binding, so every engine refuses a missing
//! capability with the same field and the same words, naming the engines that have it.
//!
//! This module knows no engine: it reads a scenario and a list of declarations.

use crate::error::{Error, Result};
use crate::scenario::{LossModel, Queue, Scenario, Scheduler};
use serde::{Deserialize, Serialize};

/// The networks an engine builds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Topology {
    /// One bottleneck link (a `[dumbbell]`, or one `[[links]]`).
    Dumbbell,
    /// Any graph of links, each flow on its own path.
    Graph,
}

/// What an engine runs. A scenario that needs a capability its engine lacks is refused by
/// [`refuse_beyond`]; what an engine cannot run for another reason (a memory bound, a parameter
/// it cannot translate) stays in that engine's own check.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Capabilities {
    pub topology: Topology,
    /// A modelled reverse direction: ACKs and reverse flows queue on the way back.
    pub two_way: bool,
    /// The queue disciplines it runs (`droptail`, `red`, `xcp`: an XCP router).
    pub queues: Vec<String>,
    /// The loss models (`loss.model`) it applies. An engine with none makes its own drops and
    /// ignores the field (not refused: every scenario has a loss model, by default `tcp`).
    pub loss_models: Vec<String>,
    /// Flow groups with `arrivals` (flows that arrive and finish).
    pub dynamic_traffic: bool,
    /// Optical burst assembly at a link (`assembler`, `burst_loss`).
    pub burst_assembly: bool,
    /// Wavelength contention at a burst assembler (`contention`).
    pub wavelength_contention: bool,
    /// A maximum burst size (`assembler.max_burst`).
    pub max_burst: bool,
    /// ECN end to end: ECN-capable flows (`ecn`), CE marks and their echo.
    #[serde(default)]
    pub ecn: bool,
    /// One run on several threads with one result for every thread count (`run.scheduler =
    /// "partitioned"`, the packet engine's; docs/packet.md, "One run on every core").
    #[serde(default)]
    pub partitioned_scheduler: bool,
    /// Why a queue discipline it lacks is missing, where that is the machine's and not the
    /// engine's (the kernel engine: "this machine's kernel has no codel qdisc").
    #[serde(default)]
    pub missing_queues: std::collections::BTreeMap<String, String>,
}

/// An engine as the registry lists it: its name (the scenario's `engine`), one line about it,
/// and its capabilities.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct EngineInfo {
    pub name: String,
    pub about: String,
    pub capabilities: Capabilities,
}

/// The name of a queue discipline, as the scenario file writes it.
pub fn queue_name(q: &Queue) -> &'static str {
    q.name()
}

/// The name of a loss model, as the scenario file writes it.
pub fn loss_model_name(l: &LossModel) -> &'static str {
    match l {
        LossModel::Proportional => "proportional",
        LossModel::Sync { .. } => "sync",
        LossModel::Tcp { .. } => "tcp",
    }
}

/// Refuses what the engine `name` lacks a capability for, naming the field and the engines of
/// `registry` that have it (in its order). Checked in this order: burst assembly, dynamic
/// traffic, two-way traffic, the topology, the queue disciplines.
pub fn refuse_beyond(name: &str, registry: &[EngineInfo], sc: &Scenario) -> Result<()> {
    let Some(me) = registry.iter().find(|e| e.name == name) else {
        return Ok(()); // an engine the registry lacks is the caller's to refuse
    };
    let caps = &me.capabilities;
    // "runs in the packet engine only (engine = "packet")", from the engines that have it.
    let only = |has: &dyn Fn(&Capabilities) -> bool| {
        let names: Vec<&str> = registry
            .iter()
            .filter(|e| has(&e.capabilities))
            .map(|e| e.name.as_str())
            .collect();
        let quoted: Vec<String> = names.iter().map(|n| format!("{n:?}")).collect();
        match names.len() {
            0 => "runs in no engine".to_string(),
            1 => format!(
                "runs in the {} engine only (engine = {})",
                names[0], quoted[0]
            ),
            _ => format!(
                "runs in the {} engines only (engine = {})",
                join(&names, "and"),
                join(&quoted, "or")
            ),
        }
    };
    for (i, l) in sc.links.iter().enumerate() {
        if !caps.burst_assembly {
            let field = if l.assembler.is_some() {
                Some("assembler")
            } else if l.burst_loss > 0.0 {
                Some("burst_loss")
            } else {
                None
            };
            if let Some(field) = field {
                return Err(Error::field(
                    format!("links[{i}].{field}"),
                    format!("optical burst assembly {}", only(&|c| c.burst_assembly)),
                ));
            }
        }
        let Some(a) = &l.assembler else { continue };
        if l.contention.is_some() && !caps.wavelength_contention {
            return Err(Error::field(
                format!("links[{i}].contention"),
                format!(
                    "wavelength contention {}",
                    only(&|c| c.wavelength_contention)
                ),
            ));
        }
        if a.max_burst_pkts > 0 && !caps.max_burst {
            return Err(Error::field(
                format!("links[{i}].assembler.max_burst"),
                format!("a maximum burst size {}", only(&|c| c.max_burst)),
            ));
        }
    }
    if !caps.dynamic_traffic {
        if let Some(f) = sc.flows.iter().find(|f| f.arrivals.is_some()) {
            return Err(Error::field(
                format!("flows[{}].arrivals", f.group),
                format!("dynamic traffic {}", only(&|c| c.dynamic_traffic)),
            ));
        }
    }
    let reverse = sc.links.iter().position(|l| l.reverse_of.is_some());
    if let (false, Some(r)) = (caps.two_way, reverse) {
        // A dumbbell's reverse direction is `dumbbell.reverse` in its file (the engines outside
        // the core raise errors in resolved terms, and this one no front end can map back).
        let of = sc.links[r].reverse_of.unwrap_or(r);
        let field = if of == 0 && sc.links.len() == 2 {
            "dumbbell.reverse".to_string()
        } else {
            format!("links[{of}].reverse")
        };
        return Err(Error::field(
            field,
            format!(
                "the {name} engine models no queue on the way back (two-way traffic) in this version"
            ),
        ));
    }
    if caps.topology == Topology::Dumbbell && sc.links.len() != 1 {
        return Err(Error::field(
            "links",
            format!("the {name} engine supports one bottleneck link (a dumbbell) in this version"),
        ));
    }
    for (i, l) in sc.links.iter().enumerate() {
        let q = queue_name(&l.queue);
        if !caps.queues.iter().any(|c| c == q) {
            let others = only(&|c| c.queues.iter().any(|c| c == q));
            let why = match caps.missing_queues.get(q) {
                Some(why) => format!(": {why}"),
                None => format!(" (it runs: {})", caps.queues.join(", ")),
            };
            return Err(Error::field(
                format!("links[{i}].queue"),
                format!("the {name} engine has no {q:?} queue{why}; {q} {others}"),
            ));
        }
    }
    if sc.run.scheduler == Scheduler::Partitioned && !caps.partitioned_scheduler {
        return Err(Error::field(
            "run.scheduler",
            format!(
                "the partitioned scheduler {}",
                only(&|c| c.partitioned_scheduler)
            ),
        ));
    }
    if !caps.ecn {
        if let Some(f) = sc.flows.iter().find(|f| f.ecn) {
            return Err(Error::field(
                format!("flows[{}].ecn", f.group),
                format!("ECN (marks and their echo) {}", only(&|c| c.ecn)),
            ));
        }
    }
    Ok(())
}

/// "a", "a and b", "a, b and c".
fn join<S: AsRef<str>>(items: &[S], last: &str) -> String {
    let items: Vec<&str> = items.iter().map(AsRef::as_ref).collect();
    match items.split_last() {
        Some((tail, head)) if !head.is_empty() => format!("{} {last} {tail}", head.join(", ")),
        Some((tail, _)) => tail.to_string(),
        None => String::new(),
    }
}
