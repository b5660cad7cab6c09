//! The scenario format shared by every engine: what a scenario file says ([`ScenarioSpec`], read
//! from TOML or JSON), and what a run uses ([`Scenario`], resolved and validated, every default
//! filled in). Field by field documentation: docs/scenario.md.

use crate::cc;
use crate::error::{Error, Result};
use crate::units::{Bytes, Rate, Time};
use serde::de::{self, Deserializer, MapAccess, SeqAccess, Visitor};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};

// ---------------------------------------------------------------------------------------------
// What a file says.

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScenarioSpec {
    pub name: Option<String>,
    pub engine: Option<String>,
    /// Shorthand for one link named "bottleneck" that every flow group crosses by default.
    pub dumbbell: Option<LinkSpec>,
    #[serde(default)]
    pub links: Vec<LinkSpec>,
    #[serde(default)]
    pub flows: Vec<FlowGroupSpec>,
    #[serde(default)]
    pub loss: LossSpec,
    #[serde(default)]
    pub run: RunSpec,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LinkSpec {
    pub name: Option<String>,
    pub capacity: Rate,
    pub packet_size: Option<Bytes>,
    pub buffer: BufferSpec,
    pub queue: Option<QueueSpec>,
    /// One-way propagation delay of the link (counted in the base RTT of the flows crossing it).
    pub delay: Option<Time>,
    /// Probability that a packet arriving at the link is lost at random (before the queue).
    pub loss_rate: Option<f64>,
    /// Model the link's other direction as a queue of its own (ACKs and reverse flows queue
    /// there); without it the way back is a pure delay.
    pub reverse: Option<ReverseSpec>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BufferSpec {
    pub packets: Option<f64>,
    pub bytes: Option<Bytes>,
    pub bdp_fraction: Option<f64>,
    /// The RTT of the bandwidth-delay product; default: the mean base RTT of the flows crossing
    /// the link.
    pub reference_rtt: Option<Time>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(tag = "discipline", rename_all = "snake_case", deny_unknown_fields)]
pub enum QueueSpec {
    Droptail,
    Red {
        min_th: f64,
        max_th: f64,
        max_p: Option<f64>,
        weight: Option<f64>,
        gentle: Option<bool>,
    },
    /// XCP's router (drop-tail when the buffer is full).
    Xcp {
        preset: Option<String>,
        alpha: Option<f64>,
        beta: Option<f64>,
        gamma: Option<f64>,
        target: Option<f64>,
        count_acks: Option<bool>,
    },
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FlowGroupSpec {
    pub name: Option<String>,
    pub count: Option<i64>,
    pub cc: CcSpec,
    pub rtt: RttSpec,
    pub start: Option<StartSpec>,
    pub rwnd: Option<WindowSpec>,
    pub path: Option<Vec<String>>,
    pub slow_start: Option<bool>,
    pub initial_window: Option<f64>,
    pub pacing: Option<PacingSpec>,
    /// "forward" (default) or "reverse": the flows send along the reverse direction of their
    /// path's links (two-way traffic).
    pub direction: Option<String>,
    pub delayed_ack: Option<DelayedAckSpec>,
    pub ack_size: Option<Bytes>,
    /// Capacity of each flow's access link; default 10x the first link of its path.
    pub access_capacity: Option<Rate>,
    /// Each flow of the group is this many parallel connections (each with the group's
    /// congestion control and rwnd), reported as one flow.
    pub parallel: Option<i64>,
}

/// `true`, `false`, or a table of settings (each missing setting takes its default).
#[derive(Debug, Clone)]
pub enum BoolOr<T> {
    Bool(bool),
    Table(T),
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for BoolOr<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        struct V<T>(std::marker::PhantomData<T>);
        impl<'de, T: Deserialize<'de>> Visitor<'de> for V<T> {
            type Value = BoolOr<T>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("true, false, or a table of settings")
            }
            fn visit_bool<E: de::Error>(self, v: bool) -> std::result::Result<BoolOr<T>, E> {
                Ok(BoolOr::Bool(v))
            }
            fn visit_map<A: MapAccess<'de>>(
                self,
                m: A,
            ) -> std::result::Result<BoolOr<T>, A::Error> {
                T::deserialize(de::value::MapAccessDeserializer::new(m)).map(BoolOr::Table)
            }
        }
        d.deserialize_any(V(std::marker::PhantomData))
    }
}

/// `pacing = true`, or `pacing = { ss_ratio = 2.0, ca_ratio = 1.2 }`.
pub type PacingSpec = BoolOr<PacingRatios>;

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PacingRatios {
    pub ss_ratio: Option<f64>,
    pub ca_ratio: Option<f64>,
}

/// `reverse = true` (the link's other direction mirrors it), or a table overriding some of it.
pub type ReverseSpec = BoolOr<ReverseLinkSpec>;

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReverseLinkSpec {
    pub capacity: Option<Rate>,
    pub buffer: Option<BufferSpec>,
    pub queue: Option<QueueSpec>,
}

/// `delayed_ack = true`, or `delayed_ack = { count = 2, timeout = "200ms" }`.
pub type DelayedAckSpec = BoolOr<DelayedAckParams>;

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DelayedAckParams {
    pub count: Option<i64>,
    pub timeout: Option<Time>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WindowSpec {
    pub packets: Option<f64>,
    pub bytes: Option<Bytes>,
}

/// A variant name, or a table `{ variant = "cubic", beta = 0.8 }`.
#[derive(Debug, Clone)]
pub struct CcSpec {
    pub variant: String,
    pub params: BTreeMap<String, Value>,
}

/// A single RTT, a list (one per flow), or `"80ms..260ms"` spread evenly across the group.
#[derive(Debug, Clone)]
pub enum RttSpec {
    One(f64),
    List(Vec<f64>),
    Range(f64, f64),
}

/// A start time, a list, or `{ uniform = ["0s", "10s"] }` drawn per flow.
#[derive(Debug, Clone)]
pub enum StartSpec {
    At(f64),
    List(Vec<f64>),
    Uniform(f64, f64),
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LossSpec {
    pub model: Option<String>,
    pub sync: Option<SyncSpec>,
    pub policy: Option<String>,
    pub reductions_per_event: Option<f64>,
    pub holdoff: Option<Time>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum SyncSpec {
    All,
    Fixed {
        m: i64,
    },
    Normal {
        x: f64,
        mean: Option<f64>,
        std: Option<f64>,
    },
    Empirical {
        file: String,
    },
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RunSpec {
    pub duration: Option<Time>,
    pub warmup: Option<Time>,
    pub from_first_congestion: Option<bool>,
    pub step: Option<Time>,
    pub seed: Option<u64>,
    pub record_interval: Option<Time>,
}

impl<'de> Deserialize<'de> for CcSpec {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = CcSpec;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a variant name or a table with `variant` and its parameters")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> std::result::Result<CcSpec, E> {
                Ok(CcSpec {
                    variant: v.to_string(),
                    params: BTreeMap::new(),
                })
            }
            fn visit_map<A: MapAccess<'de>>(
                self,
                mut m: A,
            ) -> std::result::Result<CcSpec, A::Error> {
                let mut params = BTreeMap::new();
                while let Some((k, v)) = m.next_entry::<String, Value>()? {
                    params.insert(k, v);
                }
                let variant = match params.remove("variant") {
                    Some(Value::String(s)) => s,
                    Some(_) => return Err(de::Error::custom("`variant` must be a string")),
                    None => return Err(de::Error::missing_field("variant")),
                };
                Ok(CcSpec { variant, params })
            }
        }
        d.deserialize_any(V)
    }
}

/// `visit_f64`/`visit_i64`/`visit_u64` for a visitor whose plain number means one time, in seconds.
macro_rules! visit_seconds {
    ($ty:ident :: $variant:ident) => {
        fn visit_f64<E: de::Error>(self, v: f64) -> std::result::Result<$ty, E> {
            Ok($ty::$variant(v))
        }
        fn visit_i64<E: de::Error>(self, v: i64) -> std::result::Result<$ty, E> {
            Ok($ty::$variant(v as f64))
        }
        fn visit_u64<E: de::Error>(self, v: u64) -> std::result::Result<$ty, E> {
            Ok($ty::$variant(v as f64))
        }
    };
}

fn time_list<'de, A: SeqAccess<'de>>(mut s: A) -> std::result::Result<Vec<f64>, A::Error> {
    let mut v = Vec::new();
    while let Some(t) = s.next_element::<Time>()? {
        v.push(t.0);
    }
    Ok(v)
}

impl<'de> Deserialize<'de> for RttSpec {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = RttSpec;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a time, a list of times, or a range \"80ms..260ms\"")
            }
            visit_seconds!(RttSpec::One);
            fn visit_str<E: de::Error>(self, v: &str) -> std::result::Result<RttSpec, E> {
                let t = |s: &str| crate::units::parse_time_s(s).map_err(E::custom);
                match v.split_once("..") {
                    Some((a, b)) => Ok(RttSpec::Range(t(a)?, t(b)?)),
                    None => Ok(RttSpec::One(t(v)?)),
                }
            }
            fn visit_seq<A: SeqAccess<'de>>(self, s: A) -> std::result::Result<RttSpec, A::Error> {
                time_list(s).map(RttSpec::List)
            }
        }
        d.deserialize_any(V)
    }
}

impl<'de> Deserialize<'de> for StartSpec {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = StartSpec;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a time, a list of times, or { uniform = [from, to] }")
            }
            visit_seconds!(StartSpec::At);
            fn visit_str<E: de::Error>(self, v: &str) -> std::result::Result<StartSpec, E> {
                crate::units::parse_time_s(v)
                    .map(StartSpec::At)
                    .map_err(E::custom)
            }
            fn visit_seq<A: SeqAccess<'de>>(
                self,
                s: A,
            ) -> std::result::Result<StartSpec, A::Error> {
                time_list(s).map(StartSpec::List)
            }
            fn visit_map<A: MapAccess<'de>>(
                self,
                mut m: A,
            ) -> std::result::Result<StartSpec, A::Error> {
                let key: Option<String> = m.next_key()?;
                match key.as_deref() {
                    Some("uniform") => {
                        let v: Vec<Time> = m.next_value()?;
                        if v.len() != 2 {
                            return Err(de::Error::custom("uniform takes [from, to]"));
                        }
                        if m.next_key::<String>()?.is_some() {
                            return Err(de::Error::custom("only `uniform` is allowed here"));
                        }
                        Ok(StartSpec::Uniform(v[0].0, v[1].0))
                    }
                    Some(k) => Err(de::Error::unknown_field(k, &["uniform"])),
                    None => Err(de::Error::missing_field("uniform")),
                }
            }
        }
        d.deserialize_any(V)
    }
}

// ---------------------------------------------------------------------------------------------
// What a run uses.

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Engine {
    Fluid,
    Packet,
    Ns3,
}

#[derive(Debug, Clone, Serialize)]
pub struct Scenario {
    pub name: String,
    pub engine: Engine,
    pub links: Vec<Link>,
    pub flows: Vec<Flow>,
    pub loss: LossModel,
    pub run: Run,
}

#[derive(Debug, Clone, Serialize)]
pub struct Link {
    pub name: String,
    pub capacity_bps: f64,
    pub packet_size_bytes: f64,
    /// Capacity in packets per second.
    pub capacity_pps: f64,
    pub buffer_pkts: f64,
    pub delay_s: f64,
    pub queue: Queue,
    pub loss_rate: f64,
    /// This link is the other direction of that link (`reverse = ...` on it).
    pub reverse_of: Option<usize>,
}

#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(tag = "discipline", rename_all = "snake_case")]
pub enum Queue {
    Droptail,
    /// Floyd & Jacobson, "Random Early Detection Gateways", IEEE/ACM ToN 1993.
    Red {
        min_th: f64,
        max_th: f64,
        max_p: f64,
        weight: f64,
        gentle: bool,
    },
    /// Katabi, Handley, Rohrs, SIGCOMM 2002: the buffer is drop-tail; the router writes
    /// feedback into the congestion header of every data packet.
    Xcp(crate::queue::xcp::XcpParams),
}

#[derive(Debug, Clone, Serialize)]
pub struct Flow {
    pub group: usize,
    pub group_name: String,
    pub variant: String,
    pub params: BTreeMap<String, Value>,
    /// Two-way propagation delay (the RTT with empty queues).
    pub rtt_s: f64,
    pub start_s: f64,
    pub rwnd_pkts: f64,
    /// Link indices the data crosses, in order.
    pub path: Vec<usize>,
    /// Link indices the ACKs cross, in order: the reverse directions of the path's links that
    /// are modelled as queues (empty: the way back is a pure delay).
    pub ack_path: Vec<usize>,
    /// The flow sends along the reverse direction of the links it names.
    pub reverse: bool,
    /// Packet engine: the receiver ACKs every `count` in-order packets or after `timeout_s`.
    pub delayed_ack: Option<DelayedAck>,
    pub ack_size_bytes: f64,
    /// Packet engine: the sender's access link (`None`: 10x the first link of the path).
    pub access_capacity_bps: Option<f64>,
    /// The logical flow this connection belongs to (its own index unless the group is
    /// `parallel`); metrics report logical flows.
    pub logical: usize,
    pub slow_start: bool,
    pub initial_window_pkts: f64,
    /// Packet engine: pace sending at ratio × cwnd / srtt (slow start, congestion avoidance).
    /// The fluid engine is paced by nature and ignores it.
    pub pacing: Option<Pacing>,
}

/// Delayed ACKs (RFC 5681 §4.2; RFC 1122 §4.2.3.2).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct DelayedAck {
    pub count: u32,
    pub timeout_s: f64,
}

/// Pacing ratios; Linux's defaults `tcp_pacing_ss_ratio = 200` and `tcp_pacing_ca_ratio = 120`
/// (percent, net/ipv4/tcp_ipv4.c; Documentation/networking/ip-sysctl.rst).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Pacing {
    pub ss_ratio: f64,
    pub ca_ratio: f64,
}

#[derive(Debug, Clone, Serialize)]
#[serde(tag = "model", rename_all = "snake_case")]
pub enum LossModel {
    /// The classic fluid model (models.md §1): overflow loss split among all flows by rate, and
    /// every lost packet signals its sender (continuous loss indication).
    Proportional,
    /// Losses as TCP meets them (docs/fluid.md, "The tcp loss model"): senders are ACK-clocked
    /// (a window cut pauses sending until the data in flight fall below it), a flow loses in an
    /// overflow episode with the probability that at least one of its packets was dropped, and
    /// reacts at most once per RTT, as SACK and NewReno react once per loss event.
    Tcp,
    /// The loss-synchronization module (models.md §2).
    Sync {
        sync: Sync,
        policy: DropPolicy,
        reductions_per_event: f64,
        /// `None`: one average base RTT of the flows crossing the link.
        holdoff_s: Option<f64>,
    },
}

#[derive(Debug, Clone, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Sync {
    All,
    Fixed {
        m: usize,
    },
    /// m = clamp(round(Z), ceil(X·N), N), Z ~ Normal(mean, std) (models.md §2.2 eq. 4).
    /// `None` mean/std: the defaults (⌈XN⌉+N)/2 and (N−⌈XN⌉)/4, per link's N.
    Normal {
        x: f64,
        mean: Option<f64>,
        std: Option<f64>,
    },
    /// P(m = k) from a CSV file with columns `m,probability` (or `m,count`).
    Empirical {
        file: String,
        probabilities: Vec<(usize, f64)>,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum DropPolicy {
    HighestRate,
    LargestWindow,
    Random,
    RoundRobin,
}

#[derive(Debug, Clone, Serialize)]
pub struct Run {
    pub duration_s: f64,
    pub warmup_s: f64,
    pub from_first_congestion: bool,
    pub step_s: f64,
    pub seed: u64,
    pub record_interval_s: f64,
}

// ---------------------------------------------------------------------------------------------
// Reading and validation.

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
    from_value(value, base_dir)
}

/// Reads a scenario from JSON text (what the Python front end sends after applying overrides).
pub fn from_json(text: &str, base_dir: &Path) -> Result<Scenario> {
    let value: Value =
        serde_json::from_str(text).map_err(|e| Error::field("scenario", e.to_string()))?;
    from_value(value, base_dir)
}

pub fn from_value(value: Value, base_dir: &Path) -> Result<Scenario> {
    let spec: ScenarioSpec = serde_path_to_error::deserialize(value).map_err(|e| {
        let path = e.path().to_string();
        let field = if path == "." {
            "scenario".to_string()
        } else {
            path
        };
        Error::field(field, e.into_inner().to_string())
    })?;
    resolve(&spec, base_dir)
}

fn positive(field: &str, v: f64) -> Result<f64> {
    if v.is_finite() && v > 0.0 {
        Ok(v)
    } else {
        Err(Error::field(
            field,
            format!("must be a positive number, got {v}"),
        ))
    }
}

fn non_negative(field: &str, v: f64) -> Result<f64> {
    if v.is_finite() && v >= 0.0 {
        Ok(v)
    } else {
        Err(Error::field(
            field,
            format!("must be a number ≥ 0, got {v}"),
        ))
    }
}

fn probability(field: &str, v: f64) -> Result<f64> {
    if v.is_finite() && (0.0..=1.0).contains(&v) {
        Ok(v)
    } else {
        Err(Error::field(
            field,
            format!("must be a probability in [0, 1], got {v}"),
        ))
    }
}

/// Validates a spec and fills every default.
pub fn resolve(spec: &ScenarioSpec, base_dir: &Path) -> Result<Scenario> {
    let engine = match spec.engine.as_deref().unwrap_or("fluid") {
        "fluid" => Engine::Fluid,
        "packet" => Engine::Packet,
        "ns3" => Engine::Ns3,
        other => {
            return Err(Error::field(
                "engine",
                format!("unknown engine {other:?} (known: fluid, packet, ns3)"),
            ))
        }
    };
    let run = resolve_run(&spec.run)?;

    // Links: the dumbbell shorthand or a named list, not both.
    let link_specs: Vec<(String, &LinkSpec)> = match (&spec.dumbbell, spec.links.is_empty()) {
        (Some(_), false) => {
            return Err(Error::field(
                "links",
                "give either `dumbbell` or `links`, not both",
            ))
        }
        (Some(d), true) => vec![("dumbbell".to_string(), d)],
        (None, false) => spec
            .links
            .iter()
            .enumerate()
            .map(|(i, l)| (format!("links[{i}]"), l))
            .collect(),
        (None, true) => return Err(Error::field("links", "no link: give `dumbbell` or `links`")),
    };
    let mut names: Vec<String> = Vec::new();
    for (field, l) in &link_specs {
        let name = match (&l.name, spec.dumbbell.is_some()) {
            (Some(n), _) => n.clone(),
            (None, true) => "bottleneck".to_string(),
            (None, false) => {
                return Err(Error::field(
                    format!("{field}.name"),
                    "every link needs a name",
                ))
            }
        };
        if names.contains(&name) {
            return Err(Error::field(
                format!("{field}.name"),
                format!("duplicate link name {name:?}"),
            ));
        }
        names.push(name);
    }

    let flows = resolve_flows(spec, &names, &link_specs, run.seed)?;
    if flows.is_empty() {
        return Err(Error::field(
            "flows",
            "no flows: give at least one [[flows]] group",
        ));
    }

    let mut flows = flows;
    let links = resolve_links(&link_specs, &names, &mut flows)?;
    let sizes: Vec<f64> = links.iter().map(|l| l.packet_size_bytes).collect();
    if let Some(i) = sizes.iter().position(|&s| s != sizes[0]) {
        return Err(Error::field(
            format!("{}.packet_size", link_specs[i].0),
            "all links must use the same packet size (windows and queues count packets)",
        ));
    }
    for f in &flows {
        let prop: f64 = f.path.iter().map(|&l| 2.0 * links[l].delay_s).sum();
        if f.rtt_s < prop - 1e-12 {
            return Err(Error::field(
                format!("flows[{}].rtt", f.group),
                format!(
                    "an RTT of {} s is shorter than twice the propagation delay of its path ({} s)",
                    f.rtt_s, prop
                ),
            ));
        }
    }

    // An XCP sender has no probing of its own: without an XCP router it would never slow down.
    if let Some(f) = flows.iter().find(|f| {
        f.variant == "xcp"
            && !f
                .path
                .iter()
                .any(|&l| matches!(links[l].queue, Queue::Xcp(_)))
    }) {
        return Err(Error::field(
            format!("flows[{}].cc", f.group),
            "an xcp flow must cross a link with queue = { discipline = \"xcp\" }",
        ));
    }
    let loss = resolve_loss(&spec.loss, &links, &flows, base_dir)?;
    let name = spec.name.clone().unwrap_or_else(|| "scenario".to_string());
    Ok(Scenario {
        name,
        engine,
        links,
        flows,
        loss,
        run,
    })
}

fn resolve_run(r: &RunSpec) -> Result<Run> {
    let duration_s = positive("run.duration", r.duration.map_or(100.0, |t| t.0))?;
    let warmup_s = non_negative("run.warmup", r.warmup.map_or(0.0, |t| t.0))?;
    if warmup_s >= duration_s {
        return Err(Error::field(
            "run.warmup",
            "must be shorter than run.duration",
        ));
    }
    // Default step 1 ms: RTT/Δ ≥ 80 for the paper's 80–260 ms flows (models.md §1.4).
    let step_s = positive("run.step", r.step.map_or(1e-3, |t| t.0))?;
    if step_s > duration_s / 10.0 {
        return Err(Error::field(
            "run.step",
            "must be at most a tenth of run.duration",
        ));
    }
    let record_interval_s = positive(
        "run.record_interval",
        r.record_interval.map_or(0.1, |t| t.0),
    )?;
    if record_interval_s < step_s {
        return Err(Error::field(
            "run.record_interval",
            "must be at least one step",
        ));
    }
    if duration_s / record_interval_s > 1e7 {
        return Err(Error::field(
            "run.record_interval",
            "would record more than 10^7 samples",
        ));
    }
    Ok(Run {
        duration_s,
        warmup_s,
        from_first_congestion: r.from_first_congestion.unwrap_or(false),
        step_s,
        seed: r.seed.unwrap_or(1),
        record_interval_s,
    })
}

/// The links as given, then the reverse directions (asked for with `reverse`, or needed by a
/// flow with `direction = "reverse"`), each named `<link>-reverse`. Moves reverse flows onto
/// those and fills every flow's ACK path.
fn resolve_links(
    link_specs: &[(String, &LinkSpec)],
    names: &[String],
    flows: &mut [Flow],
) -> Result<Vec<Link>> {
    let n = link_specs.len();
    let mut rev_index: Vec<Option<usize>> = vec![None; n];
    let mut next = n;
    for (i, (field, l)) in link_specs.iter().enumerate() {
        let asked = match &l.reverse {
            None => None,
            Some(BoolOr::Bool(b)) => Some(*b),
            Some(BoolOr::Table(_)) => Some(true),
        };
        if let Some(f) = flows.iter().find(|f| f.reverse && f.path.contains(&i)) {
            if asked == Some(false) {
                return Err(Error::field(
                    format!("{field}.reverse"),
                    format!(
                        "is false, but flows[{}] (direction = \"reverse\") crosses the link",
                        f.group
                    ),
                ));
            }
            rev_index[i] = Some(next);
            next += 1;
        } else if asked == Some(true) {
            rev_index[i] = Some(next);
            next += 1;
        }
    }

    let mut links = Vec::with_capacity(next);
    for (i, (field, l)) in link_specs.iter().enumerate() {
        // The BDP of a link's buffer: the flows whose data cross it in that direction.
        let mut crossing: Vec<&Flow> = flows
            .iter()
            .filter(|f| !f.reverse && f.path.contains(&i))
            .collect();
        if crossing.is_empty() {
            crossing = flows.iter().filter(|f| f.path.contains(&i)).collect();
        }
        links.push(resolve_link(field, &names[i], l, &crossing)?);
    }
    for (i, (field, l)) in link_specs.iter().enumerate() {
        let Some(ri) = rev_index[i] else { continue };
        let over = match &l.reverse {
            Some(BoolOr::Table(t)) => t.clone(),
            _ => ReverseLinkSpec {
                capacity: None,
                buffer: None,
                queue: None,
            },
        };
        let spec = LinkSpec {
            name: None,
            capacity: over.capacity.unwrap_or(l.capacity),
            packet_size: l.packet_size,
            buffer: over.buffer.clone().unwrap_or_else(|| l.buffer.clone()),
            queue: over.queue.clone().or_else(|| l.queue.clone()),
            delay: l.delay,
            loss_rate: l.loss_rate,
            reverse: None,
        };
        let mut crossing: Vec<&Flow> = flows
            .iter()
            .filter(|f| f.reverse && f.path.contains(&i))
            .collect();
        if crossing.is_empty() {
            crossing = flows.iter().filter(|f| f.path.contains(&i)).collect();
        }
        let mut link = resolve_link(
            &format!("{field}.reverse"),
            &format!("{}-reverse", names[i]),
            &spec,
            &crossing,
        )?;
        if over.buffer.is_none() {
            link.buffer_pkts = links[i].buffer_pkts; // a mirror holds as many packets
        }
        link.reverse_of = Some(i);
        debug_assert_eq!(links.len(), ri);
        links.push(link);
    }

    for f in flows.iter_mut() {
        let there_and_back: Vec<usize> =
            f.path.iter().rev().filter_map(|&l| rev_index[l]).collect();
        if f.reverse {
            f.ack_path = std::mem::replace(&mut f.path, there_and_back);
        } else {
            f.ack_path = there_and_back;
        }
    }
    Ok(links)
}

fn resolve_link(field: &str, name: &str, l: &LinkSpec, crossing: &[&Flow]) -> Result<Link> {
    let capacity_bps = positive(&format!("{field}.capacity"), l.capacity.0)?;
    let packet_size_bytes = positive(
        &format!("{field}.packet_size"),
        l.packet_size.map_or(1500.0, |b| b.0),
    )?;
    let capacity_pps = capacity_bps / (8.0 * packet_size_bytes);
    let delay_s = non_negative(&format!("{field}.delay"), l.delay.map_or(0.0, |t| t.0))?;
    let loss_rate = probability(&format!("{field}.loss_rate"), l.loss_rate.unwrap_or(0.0))?;
    if loss_rate >= 1.0 {
        return Err(Error::field(
            format!("{field}.loss_rate"),
            "must be below 1",
        ));
    }

    let b = &l.buffer;
    let bf = format!("{field}.buffer");
    let given = [
        b.packets.is_some(),
        b.bytes.is_some(),
        b.bdp_fraction.is_some(),
    ];
    if given.iter().filter(|&&g| g).count() != 1 {
        return Err(Error::field(
            &bf,
            "give exactly one of packets, bytes, bdp_fraction",
        ));
    }
    if b.reference_rtt.is_some() && b.bdp_fraction.is_none() {
        return Err(Error::field(
            format!("{bf}.reference_rtt"),
            "only goes with bdp_fraction",
        ));
    }
    let buffer_pkts = if let Some(p) = b.packets {
        non_negative(&format!("{bf}.packets"), p)?
    } else if let Some(by) = b.bytes {
        non_negative(&format!("{bf}.bytes"), by.0)? / packet_size_bytes
    } else {
        let frac = non_negative(&format!("{bf}.bdp_fraction"), b.bdp_fraction.unwrap_or(0.0))?;
        let rtt = match b.reference_rtt {
            Some(t) => positive(&format!("{bf}.reference_rtt"), t.0)?,
            None if crossing.is_empty() => {
                return Err(Error::field(
                    format!("{bf}.reference_rtt"),
                    "needed: no flow crosses this link to take a mean RTT from",
                ))
            }
            None => crossing.iter().map(|f| f.rtt_s).sum::<f64>() / crossing.len() as f64,
        };
        frac * capacity_pps * rtt
    };
    // A buffer of 0 is the bufferless link of the closed forms (models.md §4.2, ρ = 0); anything
    // between 0 and one packet cannot hold a packet and is almost surely a unit mistake.
    if buffer_pkts > 0.0 && buffer_pkts < 1.0 {
        return Err(Error::field(
            &bf,
            format!("{buffer_pkts:.3} packets is less than one packet (use 0 for no buffer)"),
        ));
    }

    let queue = match &l.queue {
        None | Some(QueueSpec::Droptail) => Queue::Droptail,
        Some(QueueSpec::Red {
            min_th,
            max_th,
            max_p,
            weight,
            gentle,
        }) => {
            let qf = format!("{field}.queue");
            let min_th = non_negative(&format!("{qf}.min_th"), *min_th)?;
            let max_th = positive(&format!("{qf}.max_th"), *max_th)?;
            if max_th <= min_th {
                return Err(Error::field(format!("{qf}.max_th"), "must exceed min_th"));
            }
            if max_th > buffer_pkts {
                return Err(Error::field(
                    format!("{qf}.max_th"),
                    "must not exceed the buffer",
                ));
            }
            // max_p 0.1 and w_q 0.002: Floyd & Jacobson 1993 §11 and Floyd's RED page defaults.
            let max_p = probability(&format!("{qf}.max_p"), max_p.unwrap_or(0.1))?;
            let weight = weight.unwrap_or(0.002);
            if !(weight > 0.0 && weight <= 1.0) {
                return Err(Error::field(format!("{qf}.weight"), "must be in (0, 1]"));
            }
            Queue::Red {
                min_th,
                max_th,
                max_p,
                weight,
                gentle: gentle.unwrap_or(true),
            }
        }
        Some(QueueSpec::Xcp {
            preset,
            alpha,
            beta,
            gamma,
            target,
            count_acks,
        }) => {
            let qf = format!("{field}.queue");
            let base = match preset.as_deref().unwrap_or("original") {
                "original" => crate::queue::xcp::XcpParams::ORIGINAL,
                "conservative" => crate::queue::xcp::XcpParams::CONSERVATIVE,
                other => {
                    return Err(Error::field(
                        format!("{qf}.preset"),
                        format!("unknown preset {other:?} (original, conservative)"),
                    ))
                }
            };
            let p = crate::queue::xcp::XcpParams {
                alpha: positive(&format!("{qf}.alpha"), alpha.unwrap_or(base.alpha))?,
                beta: positive(&format!("{qf}.beta"), beta.unwrap_or(base.beta))?,
                gamma: probability(&format!("{qf}.gamma"), gamma.unwrap_or(base.gamma))?,
                target: positive(&format!("{qf}.target"), target.unwrap_or(base.target))?,
                count_acks: count_acks.unwrap_or(true),
            };
            if p.target > 1.0 {
                return Err(Error::field(format!("{qf}.target"), "must be at most 1"));
            }
            Queue::Xcp(p)
        }
    };
    Ok(Link {
        name: name.to_string(),
        capacity_bps,
        packet_size_bytes,
        capacity_pps,
        buffer_pkts,
        delay_s,
        queue,
        loss_rate,
        reverse_of: None,
    })
}

fn resolve_flows(
    spec: &ScenarioSpec,
    names: &[String],
    link_specs: &[(String, &LinkSpec)],
    seed: u64,
) -> Result<Vec<Flow>> {
    let packet_size = link_specs[0].1.packet_size.map_or(1500.0, |b| b.0);
    let mut flows = Vec::new();
    for (g, fs) in spec.flows.iter().enumerate() {
        let field = format!("flows[{g}]");
        let count = fs.count.unwrap_or(1);
        if !(1..=100_000).contains(&count) {
            return Err(Error::field(
                format!("{field}.count"),
                format!("must be in 1..=100000, got {count}"),
            ));
        }
        let n = count as usize;
        // Validates the variant and its parameters now, so a bad one fails before the run.
        cc::build(&fs.cc.variant, &fs.cc.params, &format!("{field}.cc"))?;
        let variant = cc::find(&fs.cc.variant).map(|v| v.name).unwrap_or_default();

        let rf = format!("{field}.rtt");
        let rtts: Vec<f64> = match &fs.rtt {
            RttSpec::One(r) => vec![positive(&rf, *r)?; n],
            RttSpec::List(v) => {
                if v.len() != n {
                    return Err(Error::field(
                        &rf,
                        format!("lists {} RTTs for {n} flows", v.len()),
                    ));
                }
                v.iter().map(|&r| positive(&rf, r)).collect::<Result<_>>()?
            }
            RttSpec::Range(a, b) => {
                let (a, b) = (positive(&rf, *a)?, positive(&rf, *b)?);
                if b < a {
                    return Err(Error::field(&rf, "range must go from low to high"));
                }
                (0..n)
                    .map(|k| {
                        if n == 1 {
                            a
                        } else {
                            a + (b - a) * k as f64 / (n - 1) as f64
                        }
                    })
                    .collect()
            }
        };
        let sf = format!("{field}.start");
        let starts: Vec<f64> = match &fs.start {
            None => vec![0.0; n],
            Some(StartSpec::At(t)) => vec![non_negative(&sf, *t)?; n],
            Some(StartSpec::List(v)) => {
                if v.len() != n {
                    return Err(Error::field(
                        &sf,
                        format!("lists {} start times for {n} flows", v.len()),
                    ));
                }
                v.iter()
                    .map(|&t| non_negative(&sf, t))
                    .collect::<Result<_>>()?
            }
            Some(StartSpec::Uniform(a, b)) => {
                let (a, b) = (non_negative(&sf, *a)?, non_negative(&sf, *b)?);
                if b < a {
                    return Err(Error::field(
                        &sf,
                        "uniform interval must go from low to high",
                    ));
                }
                // Stream 1000 + group: start draws do not depend on other groups.
                let mut rng = crate::rng::Rng::new(seed, 1000 + g as u64);
                (0..n).map(|_| a + (b - a) * rng.uniform()).collect()
            }
        };
        let rwnd_pkts = match &fs.rwnd {
            None => f64::INFINITY,
            Some(w) => match (w.packets, w.bytes) {
                (Some(p), None) => positive(&format!("{field}.rwnd.packets"), p)?,
                (None, Some(b)) => positive(&format!("{field}.rwnd.bytes"), b.0)? / packet_size,
                _ => {
                    return Err(Error::field(
                        format!("{field}.rwnd"),
                        "give exactly one of packets, bytes",
                    ))
                }
            },
        };
        if rwnd_pkts < 1.0 {
            return Err(Error::field(
                format!("{field}.rwnd"),
                "must allow at least one packet",
            ));
        }
        let path: Vec<usize> = match &fs.path {
            None if spec.dumbbell.is_some() => vec![0],
            None => {
                return Err(Error::field(
                    format!("{field}.path"),
                    "needed when links are named",
                ))
            }
            Some(p) if p.is_empty() => {
                return Err(Error::field(
                    format!("{field}.path"),
                    "must name at least one link",
                ))
            }
            Some(p) => p
                .iter()
                .map(|name| {
                    names.iter().position(|n| n == name).ok_or_else(|| {
                        Error::field(format!("{field}.path"), format!("unknown link {name:?}"))
                    })
                })
                .collect::<Result<_>>()?,
        };
        let mut seen = path.clone();
        seen.sort_unstable();
        seen.dedup();
        if seen.len() != path.len() {
            return Err(Error::field(format!("{field}.path"), "names a link twice"));
        }
        let initial_window_pkts = positive(
            &format!("{field}.initial_window"),
            fs.initial_window.unwrap_or(10.0),
        )?;
        let pacing = match &fs.pacing {
            None | Some(BoolOr::Bool(false)) => None,
            Some(BoolOr::Bool(true)) => Some(Pacing {
                ss_ratio: 2.0,
                ca_ratio: 1.2,
            }),
            Some(BoolOr::Table(r)) => Some(Pacing {
                ss_ratio: positive(
                    &format!("{field}.pacing.ss_ratio"),
                    r.ss_ratio.unwrap_or(2.0),
                )?,
                ca_ratio: positive(
                    &format!("{field}.pacing.ca_ratio"),
                    r.ca_ratio.unwrap_or(1.2),
                )?,
            }),
        };
        let reverse = match fs.direction.as_deref().unwrap_or("forward") {
            "forward" => false,
            "reverse" => true,
            other => {
                return Err(Error::field(
                    format!("{field}.direction"),
                    format!("unknown direction {other:?} (forward, reverse)"),
                ))
            }
        };
        // RFC 5681 §4.2: an ACK for at least every second full-sized segment; RFC 1122 §4.2.3.2:
        // within 0.5 s. 200 ms is ns-3's DelAckTimeout default (Linux adapts between 40 and 200).
        let delayed_ack = match &fs.delayed_ack {
            None | Some(BoolOr::Bool(false)) => None,
            Some(BoolOr::Bool(true)) => Some(DelayedAck {
                count: 2,
                timeout_s: 0.2,
            }),
            Some(BoolOr::Table(d)) => {
                let count = d.count.unwrap_or(2);
                if !(1..=64).contains(&count) {
                    return Err(Error::field(
                        format!("{field}.delayed_ack.count"),
                        format!("must be in 1..=64, got {count}"),
                    ));
                }
                Some(DelayedAck {
                    count: count as u32,
                    timeout_s: positive(
                        &format!("{field}.delayed_ack.timeout"),
                        d.timeout.map_or(0.2, |t| t.0),
                    )?,
                })
            }
        };
        // 40 B: IPv4 and TCP headers without options (RFC 791, RFC 9293).
        let ack_size_bytes = positive(
            &format!("{field}.ack_size"),
            fs.ack_size.map_or(40.0, |b| b.0),
        )?;
        if ack_size_bytes > packet_size {
            return Err(Error::field(
                format!("{field}.ack_size"),
                format!("{ack_size_bytes} B is larger than a data packet ({packet_size} B)"),
            ));
        }
        let access_capacity_bps = fs
            .access_capacity
            .map(|r| positive(&format!("{field}.access_capacity"), r.0))
            .transpose()?;
        let parallel = fs.parallel.unwrap_or(1);
        if !(1..=64).contains(&parallel) {
            return Err(Error::field(
                format!("{field}.parallel"),
                format!("must be in 1..=64 connections, got {parallel}"),
            ));
        }
        let group_name = fs.name.clone().unwrap_or_else(|| format!("{variant}{g}"));
        let base = flows.last().map_or(0, |f: &Flow| f.logical + 1);
        for k in (0..n).flat_map(|k| std::iter::repeat_n(k, parallel as usize)) {
            flows.push(Flow {
                group: g,
                group_name: group_name.clone(),
                variant: variant.to_string(),
                params: fs.cc.params.clone(),
                rtt_s: rtts[k],
                start_s: starts[k],
                rwnd_pkts,
                path: path.clone(),
                slow_start: fs.slow_start.unwrap_or(false),
                initial_window_pkts,
                pacing,
                ack_path: Vec::new(),
                reverse,
                delayed_ack,
                ack_size_bytes,
                access_capacity_bps,
                logical: base + k,
            });
        }
    }
    Ok(flows)
}

fn resolve_loss(
    l: &LossSpec,
    links: &[Link],
    flows: &[Flow],
    base_dir: &Path,
) -> Result<LossModel> {
    // The default is `tcp`, validated against the packet engine (docs/validation/fidelity.md);
    // XCP senders, whose fluid form was validated under the rate model only, keep `proportional`.
    let default = if flows.iter().any(|f| f.variant == "xcp") {
        "proportional"
    } else {
        "tcp"
    };
    match l.model.as_deref().unwrap_or(default) {
        "proportional" => {
            for (name, given) in [
                ("sync", l.sync.is_some()),
                ("policy", l.policy.is_some()),
                ("reductions_per_event", l.reductions_per_event.is_some()),
                ("holdoff", l.holdoff.is_some()),
            ] {
                if given {
                    return Err(Error::field(
                        format!("loss.{name}"),
                        "only applies to model = \"sync\"",
                    ));
                }
            }
            Ok(LossModel::Proportional)
        }
        "tcp" => {
            for (name, given) in [
                ("sync", l.sync.is_some()),
                ("policy", l.policy.is_some()),
                ("reductions_per_event", l.reductions_per_event.is_some()),
                ("holdoff", l.holdoff.is_some()),
            ] {
                if given {
                    return Err(Error::field(
                        format!("loss.{name}"),
                        "only applies to model = \"sync\"",
                    ));
                }
            }
            Ok(LossModel::Tcp)
        }
        "sync" => {
            // The smallest number of flows on any link bounds a fixed m.
            let n_min = (0..links.len())
                .map(|i| flows.iter().filter(|f| f.path.contains(&i)).count())
                .filter(|&n| n > 0)
                .min()
                .unwrap_or(0);
            let sync = match l.sync.clone().unwrap_or(SyncSpec::All) {
                SyncSpec::All => Sync::All,
                SyncSpec::Fixed { m } => {
                    if m < 1 || m as usize > n_min {
                        return Err(Error::field(
                            "loss.sync.m",
                            format!(
                                "must be in 1..={n_min} (the number of flows at the link), got {m}"
                            ),
                        ));
                    }
                    Sync::Fixed { m: m as usize }
                }
                SyncSpec::Normal { x, mean, std } => {
                    if !(x.is_finite() && x > 0.0 && x <= 1.0) {
                        return Err(Error::field(
                            "loss.sync.x",
                            format!("must be in (0, 1], got {x}"),
                        ));
                    }
                    if let Some(m) = mean {
                        positive("loss.sync.mean", m)?;
                    }
                    if let Some(s) = std {
                        non_negative("loss.sync.std", s)?;
                    }
                    Sync::Normal { x, mean, std }
                }
                SyncSpec::Empirical { file } => {
                    let path = base_dir.join(&file);
                    let probabilities = read_m_distribution(&path)?;
                    if let Some(&(m, _)) = probabilities.iter().find(|&&(m, _)| m > n_min) {
                        return Err(Error::field(
                            "loss.sync.file",
                            format!(
                                "{}: m = {m} exceeds the {n_min} flows at the link",
                                path.display()
                            ),
                        ));
                    }
                    Sync::Empirical {
                        file: path.display().to_string(),
                        probabilities,
                    }
                }
            };
            let policy = match l.policy.as_deref().unwrap_or("highest_rate") {
                "highest_rate" => DropPolicy::HighestRate,
                "largest_window" => DropPolicy::LargestWindow,
                "random" => DropPolicy::Random,
                "round_robin" => DropPolicy::RoundRobin,
                other => {
                    return Err(Error::field(
                        "loss.policy",
                        format!("unknown policy {other:?} (known: highest_rate, largest_window, random, round_robin)"),
                    ))
                }
            };
            let reductions_per_event = l.reductions_per_event.unwrap_or(1.0);
            if !(reductions_per_event.is_finite()
                && reductions_per_event > 0.0
                && reductions_per_event <= 64.0)
            {
                return Err(Error::field(
                    "loss.reductions_per_event",
                    "must be in (0, 64]",
                ));
            }
            let holdoff_s = match l.holdoff {
                None => None,
                Some(t) => Some(non_negative("loss.holdoff", t.0)?),
            };
            Ok(LossModel::Sync {
                sync,
                policy,
                reductions_per_event,
                holdoff_s,
            })
        }
        other => Err(Error::field(
            "loss.model",
            format!("unknown loss model {other:?} (known: proportional, tcp, sync)"),
        )),
    }
}

/// Reads an empirical distribution of m_k: a CSV with a header naming `m` and `probability`
/// (or `count`). Probabilities are normalised. This is the form `--sync-out` writes.
pub fn read_m_distribution(path: &Path) -> Result<Vec<(usize, f64)>> {
    let field = "loss.sync.file";
    let text = std::fs::read_to_string(path).map_err(|e| Error::Io {
        path: PathBuf::from(path).display().to_string(),
        reason: format!("{field}: cannot read: {e}"),
    })?;
    let bad =
        |line: usize, why: &str| Error::field(field, format!("{}:{line}: {why}", path.display()));
    let mut lines = text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty() && !l.starts_with('#'));
    let (_, header) = lines.next().ok_or_else(|| bad(1, "empty file"))?;
    let cols: Vec<String> = header
        .split(',')
        .map(|c| c.trim().to_ascii_lowercase())
        .collect();
    let mi = cols
        .iter()
        .position(|c| c == "m")
        .ok_or_else(|| bad(1, "no `m` column"))?;
    let pi = cols
        .iter()
        .position(|c| c == "probability" || c == "count")
        .ok_or_else(|| bad(1, "no `probability` or `count` column"))?;
    let mut out: Vec<(usize, f64)> = Vec::new();
    for (i, line) in lines {
        let cells: Vec<&str> = line.split(',').map(str::trim).collect();
        let m: usize = cells
            .get(mi)
            .and_then(|c| c.parse().ok())
            .ok_or_else(|| bad(i + 1, "m must be a whole number ≥ 1"))?;
        let p: f64 = cells
            .get(pi)
            .and_then(|c| c.parse().ok())
            .ok_or_else(|| bad(i + 1, "weight must be a number"))?;
        if m == 0 || !(p.is_finite() && p >= 0.0) {
            return Err(bad(i + 1, "m must be ≥ 1 and the weight ≥ 0"));
        }
        out.push((m, p));
    }
    let total: f64 = out.iter().map(|&(_, p)| p).sum();
    if total <= 0.0 {
        return Err(bad(1, "the weights add up to zero"));
    }
    for (_, p) in &mut out {
        *p /= total;
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<Scenario> {
        from_toml(text, Path::new("."))
    }

    const LINK: &str = "[dumbbell]\ncapacity = \"1Gbps\"\nbuffer = { bdp_fraction = 0.5 }\n";

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
    fn errors_name_their_field() {
        let cases = [
            (format!("{LINK}[[flows]]\ncount = 3\ncc = \"reno\"\nrtt = [0.1, 0.2]\n"), "flows[0].rtt: lists 2 RTTs for 3 flows"),
            (format!("{LINK}[[flows]]\ncc = \"reno\"\nrtt = 0.1\npath = [\"nowhere\"]\n"), "flows[0].path: unknown link \"nowhere\""),
            (format!("{LINK}[[flows]]\ncc = \"reno\"\nrtt = 0.1\n[loss]\npolicy = \"random\"\n"), "loss.policy: only applies to model = \"sync\""),
            (format!("{LINK}[[flows]]\ncc = \"reno\"\nrtt = 0.1\n[run]\nstep = \"1s\"\nduration = \"5s\"\n"), "run.step: must be at most a tenth of run.duration"),
            ("[dumbbell]\ncapacity = \"1Gbps\"\nbuffer = { packets = 10, bytes = 100 }\n[[flows]]\ncc = \"reno\"\nrtt = 0.1\n".to_string(), "dumbbell.buffer: give exactly one of packets, bytes, bdp_fraction"),
            ("engine = \"warp\"\n".to_string() + LINK, "engine: unknown engine \"warp\""),
            (format!("{LINK}[[flows]]\ncc = \"reno\"\nrtt = 0.1\ndirection = \"sideways\"\n"), "flows[0].direction: unknown direction \"sideways\""),
            (format!("{LINK}reverse = false\n[[flows]]\ncc = \"reno\"\nrtt = 0.1\ndirection = \"reverse\"\n"), "dumbbell.reverse: is false, but flows[0]"),
            (format!("{LINK}[[flows]]\ncc = \"reno\"\nrtt = 0.1\nack_size = \"2KB\"\n"), "flows[0].ack_size: 2000 B is larger than a data packet"),
            (format!("{LINK}[[flows]]\ncc = \"reno\"\nrtt = 0.1\ndelayed_ack = {{ count = 0 }}\n"), "flows[0].delayed_ack.count: must be in 1..=64"),
            (format!("{LINK}reverse = {{ speed = 1 }}\n[[flows]]\ncc = \"reno\"\nrtt = 0.1\n"), "dumbbell.reverse.speed: unknown field `speed`"),
        ];
        for (text, want) in cases {
            let err = parse(&text).unwrap_err().to_string();
            assert!(err.starts_with(want), "{err}\nwanted: {want}");
        }
    }
}
