//! Queue disciplines, one abstraction for both engines. A discipline owns a link direction's
//! buffer and decides what becomes of traffic:
//! - packet face: each arrival gets a [`Verdict`] ([`Discipline::enqueue`]: queue, mark CE or
//!   drop), and so does each packet as it leaves the queue for the wire, told how long it waited
//!   ([`Discipline::dequeue`]: CoDel's sojourn time); a discipline may keep several sub-queues in
//!   the port and choose which one is served next ([`Discipline::classify`],
//!   [`Discipline::next_queue`]: flow queuing, DualPI2's two queues);
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

/// Why a packet was dropped at a port.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DropReason {
    /// The buffer was full.
    Overflow,
    /// Active queue management: the discipline dropped it with room left (RED, CoDel, PIE).
    Early,
    /// The link's random loss, before the queue (not the discipline's).
    Wire,
}

/// What becomes of a packet offered to a discipline, at enqueue or at dequeue.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    Queued,
    /// Forwarded with its codepoint set to CE (only ever given to an ECN-capable packet).
    Marked,
    Dropped(DropReason),
}

/// The ECN field of a packet's IP header (RFC 3168 §5): not ECN-capable, ECT(1) (the L4S
/// identifier, RFC 9331 §4), ECT(0), or CE (congestion experienced). The values are the bits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[repr(u8)]
pub enum Ecn {
    #[default]
    NotEct = 0,
    Ect1 = 1,
    Ect0 = 2,
    Ce = 3,
}

impl Ecn {
    pub fn from_bits(bits: u8) -> Ecn {
        match bits & 3 {
            0 => Ecn::NotEct,
            1 => Ecn::Ect1,
            2 => Ecn::Ect0,
            _ => Ecn::Ce,
        }
    }

    /// Whether a router may mark it instead of dropping it (RFC 3168 §5: ECT or already CE).
    pub fn capable(self) -> bool {
        self != Ecn::NotEct
    }

    /// Whether it belongs in an L4S queue: ECT(1) or CE (RFC 9331 §5.1).
    pub fn l4s(self) -> bool {
        matches!(self, Ecn::Ect1 | Ecn::Ce)
    }
}

/// An AQM's congestion signal to one packet: a CE mark if the discipline marks (`ecn`) and the
/// packet is ECN-capable, a drop otherwise (RFC 3168 §7; RFC 8289 §5; RFC 8033 §5.1).
pub fn signal(ecn: bool, packet: Ecn) -> Verdict {
    if ecn && packet.capable() {
        Verdict::Marked
    } else {
        Verdict::Dropped(DropReason::Early)
    }
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
pub struct Arrival<'a> {
    pub flow: u32,
    /// The sub-queue [`Discipline::classify`] chose for it.
    pub sub: usize,
    pub ecn: Ecn,
    /// Its size in packets of the link's size (1 for data; an ACK's bytes over a data packet's).
    pub size_pkts: f64,
    /// A data packet's XCP header, which a router may cut; `None` for an ACK.
    pub header: Option<&'a mut Header>,
}

impl Arrival<'_> {
    /// An ACK of `flow`, in sub-queue 0 (for tests).
    pub fn ack(flow: u32, size_pkts: f64) -> Arrival<'static> {
        Arrival {
            flow,
            sub: 0,
            ecn: Ecn::NotEct,
            size_pkts,
            header: None,
        }
    }
}

/// A packet leaving its sub-queue for the wire.
#[derive(Debug, Clone, Copy)]
pub struct Departure {
    pub flow: u32,
    pub sub: usize,
    pub ecn: Ecn,
    /// Its size in packets of the link's size, as it arrived ([`Arrival::size_pkts`]).
    pub size_pkts: f64,
    pub is_ack: bool,
    /// How long it waited, from its enqueue to now (RFC 8289 §4.2's sojourn time).
    pub sojourn_ps: u64,
}

/// The link a discipline serves.
#[derive(Debug, Clone, Copy)]
pub struct LinkContext {
    pub buffer: Buffer,
    pub capacity_pps: f64,
    /// Nominal service time of a data packet, in picoseconds.
    pub packet_time_ps: u64,
    /// A data packet's size in bytes: what a discipline counting bytes (FQ-CoDel's DRR quantum)
    /// multiplies the packets' sizes in data packets ([`Arrival::size_pkts`]) by.
    pub packet_size_bytes: f64,
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

    /// Packet face: the sub-queues the port keeps for this discipline (1: one FIFO).
    fn queues(&self) -> usize {
        1
    }

    /// Packet face: the sub-queue a packet of `flow` (`is_ack`, codepoint `ecn`) joins.
    fn classify(&mut self, _flow: u32, _is_ack: bool, _ecn: Ecn) -> usize {
        0
    }

    /// Packet face: a packet arrives at `now_ps` to a queue of `backlog` packets (the one in
    /// service included). `rng` is the link's random stream. A discipline with one sub-queue
    /// refuses an arrival to a full buffer ([`tail`]); one with several is asked for a
    /// [victim](Discipline::overflow_victim) instead.
    fn enqueue(
        &mut self,
        now_ps: u64,
        backlog: usize,
        arrival: Arrival<'_>,
        rng: &mut Rng,
    ) -> Verdict;

    /// Packet face, several sub-queues: the buffer overflowed after an arrival; the sub-queue
    /// whose head is dropped (RFC 8290 §4.1: the fattest).
    fn overflow_victim(&mut self) -> usize {
        0
    }

    /// Packet face: which non-empty sub-queue sends next; `head_enqueued_ps(k)` is when the head
    /// of sub-queue `k` arrived (`None`: empty).
    fn next_queue(
        &mut self,
        _now_ps: u64,
        _head_enqueued_ps: &dyn Fn(usize) -> Option<u64>,
    ) -> usize {
        0
    }

    /// Packet face: whether [`Discipline::dequeue`] and [`Discipline::departed`] do anything
    /// (a discipline that acts only at enqueue says no, and the port skips both calls per
    /// packet). Asked once, when the port is built.
    fn acts_after_enqueue(&self) -> bool {
        true
    }

    /// Packet face: a packet leaves its sub-queue for the wire at `now_ps`, `backlog` packets
    /// remain queued (not counting it). The discipline may still drop it (it then takes no
    /// time on the wire) or mark it.
    fn dequeue(
        &mut self,
        _now_ps: u64,
        _backlog: usize,
        _d: &Departure,
        _rng: &mut Rng,
    ) -> Verdict {
        Verdict::Queued
    }

    /// Packet face: a packet of `sub`, dropped from the queue ([`Discipline::overflow_victim`])
    /// after it was accepted, is gone: a discipline counting its sub-queues forgets it.
    fn pushed_out(&mut self, _sub: usize, _size_pkts: f64) {}

    /// Packet face: a transmission ends at `now_ps` with `backlog` packets left, the one
    /// starting next included.
    fn departed(&mut self, _now_ps: u64, _backlog: usize) {}

    /// Fluid face: probability that fluid arriving during the next `dt` seconds is dropped
    /// (or, see [`Discipline::fluid_marks`], marked) before the buffer, given the backlog
    /// `q_pkts` now.
    fn early_drop_probability(&mut self, _q_pkts: f64, _dt: f64, _capacity_pps: f64) -> f64 {
        0.0
    }

    /// Fluid face: whether the early signal of probability `p` just returned marks the
    /// ECN-capable fluid CE instead of dropping it, as the packet face would (RFC 3168 §5).
    fn fluid_marks(&self, _p: f64) -> bool {
        false
    }

    /// Fluid face, dual-queue disciplines (RFC 9332): the signals for the fluid arriving in the
    /// step from `now_s`, given the classic and the L queue's delays and the whole backlog in
    /// packets. `None` (every other discipline): one queue, signalled through
    /// [`Discipline::early_drop_probability`].
    fn fluid_dual(
        &mut self,
        _now_s: f64,
        _delay_c_s: f64,
        _delay_l_s: f64,
        _backlog_pkts: f64,
    ) -> Option<DualSignals> {
        None
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

/// What a dual-queue discipline (RFC 9332) does to the fluid arriving in a step, and how it
/// shares the link between its two queues ([`Discipline::fluid_dual`]).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct DualSignals {
    /// The classic queue's signal probability (p_C = p'²): a mark for ECN-capable fluid, a drop
    /// for the rest or on overload.
    pub p_c: f64,
    /// The L queue's mark probability: the coupled k·p', or 1 where its native AQM (a step on
    /// its delay) marks.
    pub p_l: f64,
    /// Overload (RFC 9332 §4.2.3): the L queue's fluid is dropped with p_C first, then marked.
    pub overload: bool,
    /// The classic queue's guaranteed share of the capacity while both queues wait.
    pub c_share: f64,
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
    /// Whether it is L4S-aware (RFC 9331 §5): it gives ECT(1) packets the immediate, frequent
    /// marks a scalable sender expects. Behind none, an L4S sender falls back to classic ECN.
    const L4S: bool = false;
    /// Whether it keeps two queues in the fluid engine ([`Discipline::fluid_dual`]), which then
    /// runs it under the `tcp` loss model only.
    const DUAL: bool = false;
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

            /// Whether it is L4S-aware ([`QueueParams::L4S`]).
            pub fn l4s(&self) -> bool {
                match self {
                    $(Queue::$case(_) => <$ty as QueueParams>::L4S),*
                }
            }

            /// Whether it keeps two queues in the fluid engine ([`QueueParams::DUAL`]).
            pub fn dual(&self) -> bool {
                match self {
                    $(Queue::$case(_) => <$ty as QueueParams>::DUAL),*
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
    Codel(codel::CodelParams),
    Pie(pie::PieParams),
    FqCodel(fq_codel::FqCodelParams),
    DualPi2(dualpi2::DualPi2Params),
    Step(step::StepParams),
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
