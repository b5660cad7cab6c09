//! What a scenario file says: the TOML/JSON format, read with serde, every table closed to
//! unknown fields. Nothing here is validated beyond its shape; `super::resolve` checks values
//! and fills defaults. Field by field documentation: docs/scenario.md.

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
    /// A struct variant, not a unit one: serde ignores unknown fields of a tagged unit variant.
    Droptail {},
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
    /// A struct variant, not a unit one: serde ignores unknown fields of a tagged unit variant.
    All {},
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
