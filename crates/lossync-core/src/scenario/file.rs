//! What a scenario file says: the TOML/JSON format, read with serde, every table closed to
//! unknown fields (tagged tables too: [`tagged`]). Nothing here is validated beyond its shape; `super::resolve` checks values
//! and fills defaults. Field by field documentation: docs/scenario.md.

use crate::error::{field_err, join_path, split_field_error};
use crate::units::{Bytes, Rate, Time};
use serde::de::{self, Deserializer, MapAccess, SeqAccess, Visitor};
use serde::Deserialize;
use serde_json::Value;
use std::collections::BTreeMap;
use std::fmt;

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
    /// The nodes the link leaves and reaches, to check that paths are connected: every link
    /// names both or none does.
    pub from: Option<String>,
    pub to: Option<String>,
    /// Probability that a packet arriving at the link is lost at random (before the queue).
    pub loss_rate: Option<f64>,
    /// Model the link's other direction as a queue of its own (ACKs and reverse flows queue
    /// there); without it the way back is a pure delay.
    pub reverse: Option<ReverseSpec>,
    /// An optical burst assembler at the link's ingress (packet engine only).
    pub assembler: Option<AssemblerSpec>,
    /// Probability that a burst the link's assembler releases is lost whole (packet engine
    /// only; needs `assembler`).
    pub burst_loss: Option<f64>,
    /// Bursts lost by wavelength contention in the core instead of at random (packet engine
    /// only; needs `assembler`; not with `burst_loss`).
    pub contention: Option<ContentionSpec>,
}

/// `contention = { wavelengths = 1, fdls = 2, fdl_delay = "20us", background = 0.02,
/// background_burst = "14us" }`: a bufferless OBS core (docs/packet.md, "Optical burst
/// switching").
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ContentionSpec {
    pub wavelengths: Option<i64>,
    pub fdls: Option<i64>,
    pub fdl_delay: Option<Time>,
    /// The other edges' bursts: offered load in erlangs, and their mean holding time.
    pub background: Option<f64>,
    pub background_burst: Option<Time>,
}

/// `assembler = { timer = "1ms", policy = "mixed", queues = 1, max_burst = 100 }`, or
/// `{ policy = "window", timers = ["1ms", "5ms", "10ms"], thresholds = [16, 64] }`: timer-based
/// burst assembly (docs/packet.md, "Optical burst switching").
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AssemblerSpec {
    pub timer: Option<Time>,
    pub policy: Option<String>,
    pub queues: Option<i64>,
    pub max_burst: Option<i64>,
    /// The `window` policy: one timer per queue, and the window thresholds between them.
    pub timers: Option<Vec<Time>>,
    pub thresholds: Option<Vec<f64>>,
    /// The fluid engine: a CSV of m and its probability (the form `--sync-out` writes) from
    /// which a lost burst draws the number of flows it holds.
    pub m_distribution: Option<String>,
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

/// A queue discipline as the file gives it: `{ discipline = "red", min_th = 20, ... }`, its
/// parameters read by the discipline's own type at resolution ([`crate::queue::read`]).
#[derive(Debug, Clone)]
pub struct QueueSpec {
    pub discipline: String,
    pub params: std::collections::BTreeMap<String, Value>,
}

/// The fields of a variant that takes none.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct NoFields {}

impl<'de> Deserialize<'de> for QueueSpec {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        let (discipline, rest) = tagged(d, "discipline", &crate::queue::names())?;
        let Value::Object(params) = rest else {
            unreachable!("tagged returns the table's other fields")
        };
        Ok(QueueSpec {
            discipline,
            params: params.into_iter().collect(),
        })
    }
}

/// Reads an internally tagged table whole and returns its tag and the other fields. Serde's own
/// tagged enums accept fields no variant uses (`deny_unknown_fields` does not reach them) and
/// lose the path of an error inside the table; with [`fields`], each variant reads exactly its
/// fields and an error names the one it is about.
pub(crate) fn tagged<'de, D: Deserializer<'de>>(
    d: D,
    tag: &'static str,
    known: &[&str],
) -> std::result::Result<(String, Value), D::Error> {
    let Value::Object(mut table) = Value::deserialize(d)? else {
        return Err(de::Error::custom(format_args!(
            "expected a table with `{tag}` ({})",
            known.join(", ")
        )));
    };
    let kind = match table.remove(tag) {
        None => return Err(de::Error::missing_field(tag)),
        Some(Value::String(s)) => s,
        Some(other) => {
            return Err(field_err(
                tag,
                format_args!("must be a string ({}), got {other}", known.join(", ")),
            ))
        }
    };
    if !known.contains(&kind.as_str()) {
        return Err(field_err(
            tag,
            format_args!("unknown {tag} {kind:?} (known: {})", known.join(", ")),
        ));
    }
    Ok((kind, Value::Object(table)))
}

/// Reads the fields of variant `kind` (of a table tagged `tag`) from `rest`; an error names its
/// field ([`field_err`]), and an unknown field says which variant it is unknown to.
pub(crate) fn fields<T: de::DeserializeOwned, E: de::Error>(
    rest: Value,
    tag: &str,
    kind: &str,
) -> std::result::Result<T, E> {
    serde_path_to_error::deserialize(rest).map_err(|e| {
        let path = e.path().to_string();
        let msg = e.into_inner().to_string();
        let (path, msg) = match split_field_error(&msg) {
            Some((rel, reason)) => (join_path(&path, rel), reason.to_string()),
            None => (path, msg),
        };
        let msg = if msg.starts_with("unknown field") {
            format!("{msg} (with {tag} = {kind:?})")
        } else {
            msg
        };
        if path == "." || path.is_empty() {
            E::custom(msg)
        } else {
            field_err(&path, msg)
        }
    })
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
    /// ECN-capable transport (RFC 3168): on by default for laws whose signal it is (DCTCP,
    /// Prague), off otherwise.
    pub ecn: Option<bool>,
    /// "forward" (default) or "reverse": the flows send along the reverse direction of their
    /// path's links (two-way traffic).
    pub direction: Option<String>,
    pub delayed_ack: Option<DelayedAckSpec>,
    /// Fast recovery's sending: "rfc6675" (default) or "prr" (RFC 9937, as Linux).
    pub recovery: Option<String>,
    /// Loss detection: "dupthresh" (default, RFC 6675) or "rack-tlp" (RFC 8985, as Linux).
    pub loss_detection: Option<String>,
    /// Slow start's exit on a rising RTT: "off" (default), "rfc9406" (HyStart++) or "linux"
    /// (the HyStart of Linux's CUBIC).
    pub hystart: Option<String>,
    /// Undo a timeout that the timestamp echo shows was spurious (Eifel, RFC 3522; Linux).
    pub undo: Option<bool>,
    pub ack_size: Option<Bytes>,
    /// Capacity of each flow's access link; default 10x the first link of its path.
    pub access_capacity: Option<Rate>,
    /// Packet engine: a random delay, uniform in [0, send_jitter], before each packet enters the
    /// access link (ns-2's TCP `overhead_`), against drop-tail phase effects.
    pub send_jitter: Option<Time>,
    /// Each flow of the group is this many parallel connections (each with the group's
    /// congestion control and rwnd), reported as one flow.
    pub parallel: Option<i64>,
    /// Dynamic traffic (packet engine only): flows arrive at random and finish.
    pub arrivals: Option<ArrivalsSpec>,
}

/// `arrivals = { rate = 50, min_size = "40KB", mean_size = "700KB", max_active = 1000 }`: Poisson
/// arrivals of `rate` flows/s, Pareto sizes given by two of `shape`, `min_size`, `mean_size`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ArrivalsSpec {
    pub rate: f64,
    pub shape: Option<f64>,
    pub min_size: Option<Bytes>,
    pub mean_size: Option<Bytes>,
    pub max_active: Option<i64>,
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
    pub recovery_pause: Option<bool>,
    pub burst_pkts: Option<f64>,
    pub burst_per_sqrt_buffer: Option<f64>,
    pub event_threshold: Option<f64>,
    pub growth_share: Option<f64>,
    pub calibration: Option<String>,
    /// The smallest buffer the given parameters were fitted at (a resolved scenario writes it
    /// for a calibrated run, so a rerun still warns at another buffer).
    pub fitted_buffer_pkts: Option<f64>,
}

/// The synchronization controller: `{ kind = "all" }`, `"fixed"`, `"normal"` or `"empirical"`,
/// each with only its own fields ([`tagged`]).
#[derive(Debug, Clone)]
pub enum SyncSpec {
    All,
    /// `m` as written (a whole number is checked when resolved).
    Fixed {
        m: f64,
    },
    Normal {
        x: f64,
        mean: Option<f64>,
        std: Option<f64>,
    },
    /// P(m = k) from a CSV file (`file`), or inline (`probabilities = [[m, p], ...]`, adding
    /// up to 1, used as given; with them, `file` only records where they came from).
    Empirical {
        file: Option<String>,
        probabilities: Option<Vec<(usize, f64)>>,
    },
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FixedFields {
    m: f64,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct NormalFields {
    x: f64,
    mean: Option<f64>,
    std: Option<f64>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct EmpiricalFields {
    file: Option<String>,
    probabilities: Option<Vec<(usize, f64)>>,
}

impl<'de> Deserialize<'de> for SyncSpec {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        const TAG: &str = "kind";
        let (kind, rest) = tagged(d, TAG, &["all", "fixed", "normal", "empirical"])?;
        Ok(match kind.as_str() {
            "all" => {
                let NoFields {} = fields(rest, TAG, &kind)?;
                SyncSpec::All
            }
            "fixed" => {
                let f: FixedFields = fields(rest, TAG, &kind)?;
                SyncSpec::Fixed { m: f.m }
            }
            "normal" => {
                let f: NormalFields = fields(rest, TAG, &kind)?;
                SyncSpec::Normal {
                    x: f.x,
                    mean: f.mean,
                    std: f.std,
                }
            }
            _ => {
                let f: EmpiricalFields = fields(rest, TAG, &kind)?;
                SyncSpec::Empirical {
                    file: f.file,
                    probabilities: f.probabilities,
                }
            }
        })
    }
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
    /// Sample the aggregate Σ cwnd/RTT of the flows this often (off without it).
    pub aggregate_interval: Option<Time>,
    /// Threads for one run (default: every core); the results do not depend on it.
    pub threads: Option<i64>,
    /// The packet engine's scheduler (default: serial).
    pub scheduler: Option<super::model::Scheduler>,
    /// Flows whose windows, rates and RTTs the time series records (default 1,000).
    pub series_flows: Option<i64>,
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
                        if let Some(k) = m.next_key::<String>()? {
                            return Err(field_err(
                                &k,
                                "unknown field (a start table takes only `uniform`)",
                            ));
                        }
                        Ok(StartSpec::Uniform(v[0].0, v[1].0))
                    }
                    Some(k) => Err(field_err(
                        k,
                        "unknown field (a start table takes only `uniform`)",
                    )),
                    None => Err(de::Error::missing_field("uniform")),
                }
            }
        }
        d.deserialize_any(V)
    }
}
