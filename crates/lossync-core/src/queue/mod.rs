//! Queue disciplines, one abstraction for both engines. A discipline owns a link direction's
//! buffer and decides what becomes of traffic:
//! - packet face: each arrival gets a [`Verdict`] ([`Discipline::enqueue`]), and a departure may
//!   still be dropped ([`Discipline::dequeue`], room for sojourn-time disciplines such as CoDel);
//! - fluid face: a probability of early drop for the next step
//!   ([`Discipline::early_drop_probability`]); the fluid engine tail-drops what overflows
//!   [`Discipline::buffer`];
//! - router feedback (XCP): a discipline may also account the traffic it sees and hand senders
//!   feedback ([`Discipline::feedback`]), once per control interval.
//!
//! A link's random loss is not the discipline's: it is a property of the wire, applied before.
//!
//! A new discipline is one file here, declaring its typed parameters ([`QueueParams`]: name,
//! defaults, ranges, which engines have a face for it) and its [`Discipline`], plus one line in
//! the `registry!` list below; nothing else names it.

use crate::error::{Error, Result};
use crate::params::Params;
use crate::rng::Rng;
use serde::Serialize;
use serde_json::Value;
use std::collections::BTreeMap;

/// Why a discipline dropped a packet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DropReason {
    /// The buffer was full.
    Overflow,
    /// An active queue management drop before the buffer was full (RED).
    Early,
}

/// What becomes of a packet offered to a discipline.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    Queued,
    Dropped(DropReason),
}

/// A link direction's buffer: `pkts` as the scenario sizes it (the fluid engine's limit), and
/// `slots`, the whole packets the packet engine holds, the one in service included.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Buffer {
    pub pkts: f64,
    pub slots: usize,
}

impl Buffer {
    /// A bufferless link still holds the packet it is serving: at least one slot.
    pub fn new(pkts: f64) -> Self {
        Buffer {
            pkts,
            slots: (pkts.round() as usize).max(1),
        }
    }
}

/// The tail-drop rule every discipline ends with: a full buffer refuses the arrival.
pub fn tail(backlog: usize, buffer: Buffer) -> Verdict {
    if backlog >= buffer.slots {
        Verdict::Dropped(DropReason::Overflow)
    } else {
        Verdict::Queued
    }
}

/// XCP's congestion header (Katabi et al. 2002 §3.1) as it travels in a packet: the sender's
/// window and RTT, and the feedback the routers on the path ask for.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Header {
    pub cwnd_pkts: f32,
    pub rtt_s: f32,
    pub feedback_pkts: f32,
}

/// A packet offered to a discipline.
#[derive(Debug)]
pub enum Arrival<'a> {
    /// A data packet; a router may cut the feedback in its header.
    Data(&'a mut Header),
    /// An ACK, of this many data packets' worth of bytes.
    Ack { size_pkts: f64 },
}

/// The link a discipline serves.
#[derive(Debug, Clone, Copy)]
pub struct LinkContext {
    pub buffer: Buffer,
    pub capacity_pps: f64,
    /// Nominal service time of a data packet, in picoseconds.
    pub packet_time_ps: u64,
    /// The first control interval of a router with feedback (later: measured).
    pub first_interval_s: f64,
}

/// A feedback router's per-packet coefficients for its next control interval (XCP, Katabi et
/// al. 2002 §3.5): a packet of a flow with window `w`
/// and RTT `r` gets `ξ_p·r²/w − ξ_n·r` packets of window change.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Feedback {
    pub xi_p: f64,
    pub xi_n: f64,
}

impl Feedback {
    pub fn per_packet(&self, cwnd_pkts: f64, rtt_s: f64) -> f64 {
        if rtt_s <= 0.0 || cwnd_pkts <= 0.0 {
            return 0.0;
        }
        self.xi_p * rtt_s * rtt_s / cwnd_pkts - self.xi_n * rtt_s
    }
}

pub trait Discipline: Send + Sync + std::fmt::Debug {
    fn buffer(&self) -> Buffer;

    /// Packet face: a packet arrives at `now_ps` to a queue of `backlog` packets (the one in
    /// service included). `rng` is the link's random stream.
    fn enqueue(
        &mut self,
        now_ps: u64,
        backlog: usize,
        arrival: Arrival<'_>,
        rng: &mut Rng,
    ) -> Verdict;

    /// Packet face: the head packet leaves at `now_ps`, `backlog` packets remain. A discipline
    /// may drop it here instead of forwarding it.
    fn dequeue(&mut self, _now_ps: u64, _backlog: usize) -> Verdict {
        Verdict::Queued
    }

    /// Fluid face: probability that fluid arriving during the next `dt` seconds is dropped
    /// before the buffer, given the backlog `q_pkts` now.
    fn early_drop_probability(&mut self, _q_pkts: f64, _dt: f64, _capacity_pps: f64) -> f64 {
        0.0
    }

    /// Router feedback in force (XCP), if this discipline gives any.
    fn feedback(&self) -> Option<&Feedback> {
        None
    }

    /// Packet face, routers with feedback: the control interval ends; returns the length of
    /// the next one in seconds (`None`: no control intervals).
    fn end_interval(&mut self, _backlog: usize) -> Option<f64> {
        None
    }

    /// Fluid face, routers with feedback: `pkts` packets arrived this step from a flow with
    /// window `cwnd_pkts` and RTT `rtt_s`.
    fn fluid_arrivals(&mut self, _pkts: f64, _rtt_s: f64, _cwnd_pkts: f64) {}

    /// Fluid face, routers with feedback: the step ends at `t_end_s` with backlog `q_pkts`.
    fn fluid_step_end(&mut self, _q_pkts: f64, _t_end_s: f64, _capacity_pps: f64) {}
}

/// What a discipline's parameters are checked against: the link it serves as the scenario sizes
/// it (infinite where unknown, as when a resolved scenario is read back).
#[derive(Debug, Clone, Copy)]
pub struct Site {
    pub buffer_pkts: f64,
}

impl Site {
    pub const UNKNOWN: Site = Site {
        buffer_pkts: f64::INFINITY,
    };
}

/// A discipline's parameters: each file declares one type with every parameter, its defaults and
/// ranges, and how the discipline is built from them.
pub trait QueueParams: Clone + PartialEq + std::fmt::Debug + Serialize + Send + Sync {
    /// The name scenarios use (`queue = { discipline = NAME, ... }`).
    const NAME: &'static str;
    /// One line for `lossync disciplines`.
    const ABOUT: &'static str;
    /// Whether the fluid engine has a law for it (its fluid face,
    /// [`Discipline::early_drop_probability`]); the fluid engine refuses the others by name.
    const FLUID: bool;
    /// Reads the parameters a scenario gives: a missing one takes its default, a given one is
    /// checked against its range and the `site`.
    fn read(p: &mut Params, site: Site) -> Result<Self>;
    /// The discipline, in its initial state, serving `link`.
    fn build(&self, link: LinkContext) -> Box<dyn Discipline>;
}

/// A registry entry.
pub struct DisciplineInfo {
    pub name: &'static str,
    pub about: &'static str,
    pub fluid: bool,
    read: fn(&mut Params, Site) -> Result<Queue>,
}

/// The registry: every discipline a scenario can name, one line each (its [`Queue`] case and its
/// parameter type), in the order they are listed.
macro_rules! registry {
    ($($case:ident($module:ident::$ty:ident)),* $(,)?) => {
        $(pub mod $module;)*
        use self::{$($module::$ty),*};

        /// A link direction's queue discipline with its parameters, typed, every default filled
        /// in. Serializes as `{ "discipline": name, every parameter }`.
        #[derive(Debug, Clone, PartialEq)]
        pub enum Queue {
            $($case($ty)),*
        }

        /// Every discipline a scenario can name.
        pub const DISCIPLINES: &[DisciplineInfo] = &[
            $(DisciplineInfo {
                name: <$ty as QueueParams>::NAME,
                about: <$ty as QueueParams>::ABOUT,
                fluid: <$ty as QueueParams>::FLUID,
                read: |p, site| Ok(Queue::$case(<$ty as QueueParams>::read(p, site)?)),
            }),*
        ];

        impl Queue {
            /// The discipline's name, as scenarios spell it.
            pub fn name(&self) -> &'static str {
                match self {
                    $(Queue::$case(_) => <$ty as QueueParams>::NAME),*
                }
            }

            /// Whether the fluid engine can run it.
            pub fn fluid(&self) -> bool {
                match self {
                    $(Queue::$case(_) => <$ty as QueueParams>::FLUID),*
                }
            }

            /// The discipline, in its initial state, serving `link`.
            pub fn build(&self, link: LinkContext) -> Box<dyn Discipline> {
                match self {
                    $(Queue::$case(p) => p.build(link)),*
                }
            }

            /// Every parameter by name, in alphabetical order.
            pub fn values(&self) -> Vec<(String, Value)> {
                match self {
                    $(Queue::$case(p) => to_pairs(p)),*
                }
            }
        }
    };
}

registry! {
    Droptail(droptail::DropTailParams),
    Red(red::RedParams),
    Xcp(xcp::XcpParams),
}

/// The registry's first discipline (drop-tail) with its defaults: a link's queue when the
/// scenario names none.
impl Default for Queue {
    fn default() -> Self {
        (DISCIPLINES[0].read)(
            &mut Params::of_discipline(&BTreeMap::new(), "queue"),
            Site::UNKNOWN,
        )
        .expect("the first discipline takes no required parameter")
    }
}

fn to_pairs<T: Serialize>(params: &T) -> Vec<(String, Value)> {
    let mut out = Vec::new();
    if let Ok(Value::Object(m)) = serde_json::to_value(params) {
        out.extend(m);
    }
    out
}

/// Looks a discipline up by name.
pub fn find(name: &str) -> Option<&'static DisciplineInfo> {
    DISCIPLINES.iter().find(|d| d.name == name)
}

/// Every discipline's name, in registry order.
pub fn names() -> Vec<&'static str> {
    DISCIPLINES.iter().map(|d| d.name).collect()
}

/// Reads discipline `name`'s parameters as a scenario gives them, every default filled in;
/// `field` is the queue's field (`links[0].queue`), errors name `field.parameter`.
pub fn read(
    name: &str,
    params: &BTreeMap<String, Value>,
    field: &str,
    site: Site,
) -> Result<Queue> {
    let info = find(name).ok_or_else(|| {
        Error::field(
            format!("{field}.discipline"),
            format!(
                "unknown discipline {name:?} (known: {})",
                names().join(", ")
            ),
        )
    })?;
    let mut p = Params::of_discipline(params, field);
    let q = (info.read)(&mut p, site)?;
    p.finish()?;
    Ok(q)
}

impl Serialize for Queue {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let values = self.values();
        let mut m = s.serialize_map(Some(values.len() + 1))?;
        m.serialize_entry("discipline", self.name())?;
        for (k, v) in &values {
            m.serialize_entry(k, v)?;
        }
        m.end()
    }
}

/// Reads a resolved queue (`{ "discipline": name, parameters }`), checking its parameters as a
/// scenario's (against an unknown site).
impl<'de> serde::Deserialize<'de> for Queue {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        let mut table = BTreeMap::<String, Value>::deserialize(d)?;
        let name = match table.remove("discipline") {
            Some(Value::String(s)) => s,
            Some(_) => return Err(crate::error::field_err("discipline", "must be a string")),
            None => return Err(serde::de::Error::missing_field("discipline")),
        };
        // Errors name the parameter (`max_th`); serde's path puts the queue's own field before it.
        read(&name, &table, "queue", Site::UNKNOWN).map_err(|e| match e {
            Error::Scenario { field, reason } => {
                crate::error::field_err(field.strip_prefix("queue.").unwrap_or(&field), reason)
            }
            other => serde::de::Error::custom(other),
        })
    }
}
