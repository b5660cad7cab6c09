//! What a run uses: the resolved scenario, validated, every default filled in. Engines read only
//! this.
//!
//! Its JSON form (`Serialize`) is what `lossync validate` prints and `summary.json` records. It
//! reads back (`Deserialize`, through `scenario::from_json`, which then writes it as a scenario
//! file and resolves that again, so every check applies); quantities derived from others
//! (`capacity_pps`, `reverse_of`, `ack_path`, `logical`) are recomputed, not read.

use super::file::{fields, tagged, NoFields};
use crate::cc::CcParams;
use serde::{Deserialize, Deserializer, Serialize};

/// The engine a scenario names. The core runs its own ([`crate::ENGINES`]); any other name is an
/// engine of a front end (the Python package's registry), which the core carries without
/// interpreting it: the core names no engine it does not run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Engine {
    Fluid,
    Packet,
    /// An engine outside the core, by name (a checked identifier, see [`Engine::from_name`]).
    External(String),
}

impl Engine {
    /// The engine of a name: a core engine's, or an outside one's if it is an identifier
    /// (letters, digits, `-` and `_`, starting with a letter); `None` otherwise.
    pub fn from_name(name: &str) -> Option<Engine> {
        match name {
            "fluid" => Some(Engine::Fluid),
            "packet" => Some(Engine::Packet),
            _ if name.starts_with(|c: char| c.is_ascii_alphabetic())
                && name
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_') =>
            {
                Some(Engine::External(name.to_string()))
            }
            _ => None,
        }
    }

    pub fn name(&self) -> &str {
        match self {
            Engine::Fluid => "fluid",
            Engine::Packet => "packet",
            Engine::External(name) => name,
        }
    }
}

// As its name, the form scenario files and results write.
impl Serialize for Engine {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

impl<'de> Deserialize<'de> for Engine {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        let name = String::deserialize(d)?;
        Engine::from_name(&name)
            .ok_or_else(|| serde::de::Error::custom(format!("{name:?} is not an engine name")))
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    pub name: String,
    pub engine: Engine,
    pub links: Vec<Link>,
    pub flows: Vec<Flow>,
    pub loss: LossModel,
    pub run: Run,
}

impl Scenario {
    /// Whether flow `f` is an L4S sender (ECT(1)) that crosses no L4S-aware queue: it then
    /// answers marks as classic ECN, as RFC 9331 §4.3 asks of an L4S sender behind a classic
    /// bottleneck, and the run says so. One definition for every engine and the metrics.
    pub fn l4s_falls_back(&self, f: &Flow) -> bool {
        f.ecn
            && matches!(f.cc.ecn(), crate::cc::EcnUse::Scalable { l4s: true })
            && !f.path.iter().any(|&l| self.links[l].queue.l4s())
    }

    /// How flow `f`'s sender answers ECN in every engine: its law's way, but classic for an L4S
    /// sender behind no L4S-aware queue ([`Scenario::l4s_falls_back`]).
    pub fn ecn_use(&self, f: &Flow) -> crate::cc::EcnUse {
        if self.l4s_falls_back(f) {
            crate::cc::EcnUse::Classic
        } else {
            f.cc.ecn()
        }
    }

    /// The mean base RTT of the flows whose data cross link `link` (of every flow if none does):
    /// a link's time scale, one definition for every engine. It is the link's congestion-event
    /// window τ (`metrics::events::event_window_s`, docs/model.md §5.3) and XCP's first control
    /// interval there (Katabi et al. 2002, §3.5: the control interval is the mean RTT).
    pub fn mean_base_rtt_s(&self, link: usize) -> f64 {
        let crossing = || self.flows.iter().filter(|f| f.path.contains(&link));
        let (sum, n) = match crossing().count() {
            0 => (
                self.flows.iter().map(|f| f.rtt_s).sum::<f64>(),
                self.flows.len(),
            ),
            n => (crossing().map(|f| f.rtt_s).sum::<f64>(), n),
        };
        sum / n.max(1) as f64
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Link {
    pub name: String,
    pub capacity_bps: f64,
    pub packet_size_bytes: f64,
    /// Capacity in packets per second.
    pub capacity_pps: f64,
    pub buffer_pkts: f64,
    pub delay_s: f64,
    /// The nodes it leaves and reaches, if the scenario names them (paths are checked to be
    /// connected then); a reverse direction's are swapped.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub from: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub to: Option<String>,
    pub queue: Queue,
    pub loss_rate: f64,
    /// This link is the other direction of that link (`reverse = ...` on it).
    pub reverse_of: Option<usize>,
    /// An optical burst assembler at the link's ingress (packet engine only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub assembler: Option<Assembler>,
    /// Probability that a burst assembled at the link's ingress is lost whole.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub burst_loss: f64,
    /// Bursts lost by wavelength contention in the core (instead of `burst_loss`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub contention: Option<Contention>,
}

impl Link {
    /// One packet's transmission time at the link's rate, in picoseconds: `1/capacity_pps`
    /// (1500 B at 10 Gb/s: 1.2 µs). The time unit of RED's idle-queue decay (Floyd & Jacobson
    /// 1993, §11: the packets that could have been sent while idle).
    pub fn packet_time_ps(&self) -> u64 {
        (1e12 / self.capacity_pps).round() as u64
    }
}

/// A bufferless OBS core at the link (docs/packet.md, "Optical burst switching"): `wavelengths`
/// wavelengths sharing the link's capacity, `fdls` fibre delay lines of `fdl_delay_s`, and the
/// other edges' bursts: Poisson, `background_erlangs` of offered load, exponential holding times
/// of mean `background_burst_s`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Contention {
    pub wavelengths: u32,
    pub fdls: u32,
    pub fdl_delay_s: f64,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub background_erlangs: f64,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub background_burst_s: f64,
}

/// Timer-based burst assembly at a link's ingress (docs/packet.md, "Optical burst switching";
/// Vlachos, "Burstification effect on the TCP synchronization and congestion window mechanism").
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Assembler {
    /// The assembly timer: a queue's burst leaves this long after its first segment (`window`:
    /// the first queue's, the shortest).
    pub timer_s: f64,
    pub policy: AssemblyPolicy,
    /// Assembly queues (`mixed`: 1; `per_flow`: one per flow, 0 here; `random`: Q).
    pub queues: u32,
    /// A queue holding this many packets leaves at once (0: no limit).
    pub max_burst_pkts: u32,
    /// `window`: each queue's timer, and the congestion-window thresholds (packets, ascending,
    /// one fewer) between queues: a segment sent with a window w joins the queue of the
    /// thresholds ≤ w counted.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub timers_s: Vec<f64>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub thresholds_pkts: Vec<f64>,
    /// Fluid engine: the distribution of the flows a lost burst holds (from `m_file`, a
    /// `--sync-out` CSV), instead of the flows the fluid puts in it; empty: the fluid's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub m_file: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub m_probabilities: Vec<(usize, f64)>,
}

/// Which assembly queue a segment joins.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AssemblyPolicy {
    /// One queue for all flows (the seed's mixed-flow assembly).
    Mixed,
    /// One queue per flow.
    PerFlow,
    /// Each flow joins one of Q queues, drawn with equal probability, kept until that queue's
    /// burst leaves, drawn again for its next segment.
    Random,
    /// A queue per window class, each with its own timer: the segment's congestion window (as
    /// its sender signalled it in the packet) against the thresholds picks the queue.
    Window,
}

impl AssemblyPolicy {
    pub fn name(self) -> &'static str {
        match self {
            AssemblyPolicy::Mixed => "mixed",
            AssemblyPolicy::PerFlow => "per_flow",
            AssemblyPolicy::Random => "random",
            AssemblyPolicy::Window => "window",
        }
    }
}

/// A link direction's queue discipline, typed: the registry of [`crate::queue`].
pub use crate::queue::Queue;

/// One connection. (`deny_unknown_fields` cannot go with the flattened `cc`; [`CcParams`]'s
/// reader refuses keys other than `variant` and `params` instead.)
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Flow {
    pub group: usize,
    pub group_name: String,
    /// The variant and its parameters, every default filled in; serialized as `variant` (its
    /// name) and `params` (every parameter).
    #[serde(flatten)]
    pub cc: CcParams,
    /// Two-way propagation delay (the RTT with empty queues).
    pub rtt_s: f64,
    pub start_s: f64,
    /// Infinite without a receive window (`null` in JSON).
    #[serde(deserialize_with = "infinite_if_null")]
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
    /// Packet engine: the flow's packets are ECN-capable (ECT(1) for an L4S law, ECT(0)
    /// otherwise) and its sender answers ECN echoes ([`crate::cc::EcnUse`]).
    #[serde(default)]
    pub ecn: bool,
    /// Packet engine: each packet waits a random time, uniform in [0, send_jitter_s], before it
    /// enters the access link (ns-2's TCP `overhead_`; Floyd & Jacobson 1992 add such a random
    /// processing time to break phase effects). A fluid has no phases and ignores it.
    #[serde(default)]
    pub send_jitter_s: f64,
    /// Dynamic traffic (packet engine): this connection is one slot of a pool that carries
    /// flows arriving at random and finishing ([`Arrivals`]); `None` for a persistent flow.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arrivals: Option<Arrivals>,
    /// Packet engine: how fast recovery sends ([`LossRecovery`]).
    #[serde(default)]
    pub recovery: LossRecovery,
    /// Packet engine: how losses are found ([`LossDetection`]).
    #[serde(default, skip_serializing_if = "LossDetection::is_default")]
    pub loss_detection: LossDetection,
    /// Packet engine: how slow start may end before the first loss ([`Hystart`]).
    #[serde(default, skip_serializing_if = "Hystart::is_off")]
    pub hystart: Hystart,
    /// Packet engine: a timeout whose retransmission was not needed (the ACK that advances
    /// echoes the original transmission's timestamp: Eifel detection, RFC 3522 §3) is undone,
    /// cwnd and ssthresh restored, as Linux's `tcp_try_undo_loss` does.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub undo: bool,
}

/// Leaving the initial slow start on a rise of the RTT, before the overshoot's losses: not at
/// all (RFC 5681 §3.1), HyStart++ (RFC 9406, the IETF's), or the HyStart of Linux's CUBIC
/// (Ha & Rhee 2011: an ACK train and a delay increase; `tcp_cubic.c` as of Linux 6.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Hystart {
    #[default]
    Off,
    Rfc9406,
    Linux,
}

impl Hystart {
    pub const NAMES: [&'static str; 3] = ["off", "rfc9406", "linux"];

    pub fn name(self) -> &'static str {
        Self::NAMES[self as usize]
    }

    pub fn from_name(name: &str) -> Option<Self> {
        [Hystart::Off, Hystart::Rfc9406, Hystart::Linux]
            .into_iter()
            .find(|h| h.name() == name)
    }

    pub fn is_off(&self) -> bool {
        *self == Hystart::Off
    }
}

/// How a SACK sender finds its losses: RFC 6675's duplicate threshold (three packets SACKed
/// above a hole), or RACK-TLP (RFC 8985: by send time, with tail loss probes), Linux's default
/// since 4.18.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub enum LossDetection {
    #[default]
    #[serde(rename = "dupthresh")]
    DupThresh,
    #[serde(rename = "rack-tlp")]
    RackTlp,
}

impl LossDetection {
    pub const NAMES: [&'static str; 2] = ["dupthresh", "rack-tlp"];

    pub fn name(self) -> &'static str {
        Self::NAMES[self as usize]
    }

    pub fn from_name(name: &str) -> Option<Self> {
        [LossDetection::DupThresh, LossDetection::RackTlp]
            .into_iter()
            .find(|d| d.name() == name)
    }

    pub fn is_default(&self) -> bool {
        *self == LossDetection::DupThresh
    }
}

/// How a sender in SACK fast recovery decides what to send: RFC 6675's rule (send while the
/// pipe is below the reduced window: silence until it falls there), or Proportional Rate
/// Reduction (RFC 9937, Linux's since 3.2: in proportion to what is delivered).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LossRecovery {
    #[default]
    Rfc6675,
    Prr,
}

impl LossRecovery {
    pub fn name(self) -> &'static str {
        match self {
            LossRecovery::Rfc6675 => "rfc6675",
            LossRecovery::Prr => "prr",
        }
    }
}

/// A flow group whose flows arrive as a Poisson process with Pareto sizes, each sending its
/// size and finishing (seed 002: 50 flows/s, sizes Pareto with a 40 KB minimum and a 700 KB
/// mean). The group's connections are the slots of a bounded pool: an arrival takes a free slot
/// and a finished flow frees it; an arrival that finds none is refused and counted.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Arrivals {
    pub rate_per_s: f64,
    /// Pareto shape α (> 0; the mean is finite for α > 1, the variance for α > 2).
    pub shape: f64,
    /// Pareto scale: the smallest size.
    pub min_size_bytes: f64,
    /// The pool's size (the group's connections).
    pub max_active: usize,
}

impl Arrivals {
    /// The Pareto mean α·x_m/(α−1) (infinite for α ≤ 1).
    pub fn mean_size_bytes(&self) -> f64 {
        if self.shape > 1.0 {
            self.shape * self.min_size_bytes / (self.shape - 1.0)
        } else {
            f64::INFINITY
        }
    }
}

/// JSON has no infinity: serde_json writes it as `null`.
fn infinite_if_null<'de, D: Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
    Ok(Option::<f64>::deserialize(d)?.unwrap_or(f64::INFINITY))
}

/// Delayed ACKs (RFC 5681 §4.2; RFC 1122 §4.2.3.2).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DelayedAck {
    pub count: u32,
    pub timeout_s: f64,
}

/// Pacing ratios; Linux's defaults `tcp_pacing_ss_ratio = 200` and `tcp_pacing_ca_ratio = 120`
/// (percent, net/ipv4/tcp_ipv4.c; Documentation/networking/ip-sysctl.rst).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Pacing {
    pub ss_ratio: f64,
    pub ca_ratio: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "model", rename_all = "snake_case")]
pub enum LossModel {
    /// The classic fluid model (docs/model.md §1): overflow loss split among all flows by rate, and
    /// every lost packet signals its sender (continuous loss indication).
    Proportional,
    /// Losses as TCP meets them (docs/fluid.md, "The tcp loss model"): senders are ACK-clocked
    /// (a window cut pauses sending until the data in flight fall below it), a flow loses in an
    /// overflow episode with the probability that at least one of its packets was dropped, and
    /// reacts at most once per RTT, as SACK and NewReno react once per loss event.
    Tcp {
        /// Packets of burst headroom: a drop-tail queue fed by bursts overflows before its fluid
        /// average reaches the buffer, so the fluid queue is held `buffer - burst_pkts` (docs/
        /// fluid.md, "Burst headroom"). `None`: per drop-tail link, half a packet per flow whose
        /// bursts can coincide (one with equal RTTs) plus √B when RTTs differ, at most half its
        /// buffer (`fluid::headroom::default_burst_pkts`); given or calibrated otherwise.
        #[serde(skip_serializing_if = "Option::is_none")]
        burst_pkts: Option<f64>,
        /// The headroom as `c·√B` on every link of `B` packets of buffer (exclusive with
        /// `burst_pkts`): the form `lossync calibrate` fits, since the queue's swings grow as the
        /// square root of what it holds (`fluid::headroom::BURST_SQRT_BUFFER_PER_MIX`), so one fit carries to
        /// other buffers (docs/fluid.md, "Burst headroom and calibration").
        #[serde(skip_serializing_if = "Option::is_none")]
        burst_per_sqrt_buffer: Option<f64>,
        /// Scale of the drops a flow takes per loss event at a full queue (1: a loss event with
        /// probability min(1, D) for D expected drops). Above 1, fewer flows lose per overflow.
        /// 1 unless calibrated.
        #[serde(skip_serializing_if = "is_one")]
        event_threshold: f64,
        /// The fraction of a full queue's drops that fall on the packets the flows send beyond
        /// their ACK clock (their window growth); the rest fall on arrivals at random (docs/
        /// fluid.md, "Which packets a full queue drops"). `None`: no fixed split; growth and the
        /// packets out of their RTT class's order are refused alike.
        #[serde(skip_serializing_if = "Option::is_none")]
        growth_share: Option<f64>,
        /// The calibration file the parameters were read from, if any.
        #[serde(skip_serializing_if = "Option::is_none")]
        calibration: Option<String>,
        /// The smallest buffer that file was fitted at, to warn when this scenario's differs.
        #[serde(skip_serializing_if = "Option::is_none")]
        fitted_buffer_pkts: Option<f64>,
    },
    /// The loss-synchronization module (docs/model.md §2).
    Sync {
        sync: Sync,
        policy: DropPolicy,
        reductions_per_event: f64,
        /// `None`: one average base RTT of the flows crossing the link.
        holdoff_s: Option<f64>,
        /// After a window reduction from W to W', the sender is silent for (1 − W'/W) of its
        /// RTT, until its data in flight has fallen to the new window, as a TCP sender's ACK
        /// clock makes it (docs/fluid.md, "Recovery pause"); false: the rate W/RTT at once, the
        /// classic fluid model's (Misra, Gong, Towsley, SIGCOMM 2000), which drains the queue
        /// over about an RTT instead.
        #[serde(skip_serializing_if = "is_false")]
        recovery_pause: bool,
    },
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Sync {
    All,
    Fixed {
        m: usize,
    },
    /// m = clamp(round(Z), ceil(X·N), N), Z ~ Normal(mean, std) (docs/model.md §2.2 eq. 4).
    /// `None` mean/std: the defaults (⌈XN⌉+N)/2 and (N−⌈XN⌉)/4, per link's N.
    Normal {
        x: f64,
        mean: Option<f64>,
        std: Option<f64>,
    },
    /// P(m = k): read from a CSV file with columns `m,probability` (or `m,count`), or given
    /// inline.
    Empirical {
        /// The CSV file the probabilities come from (`None`: given inline).
        file: Option<String>,
        probabilities: Vec<(usize, f64)>,
    },
}

fn is_zero(x: &f64) -> bool {
    *x == 0.0
}

fn is_default<T: Default + PartialEq>(x: &T) -> bool {
    *x == T::default()
}

fn is_false(x: &bool) -> bool {
    !*x
}

fn is_one(x: &f64) -> bool {
    *x == 1.0
}

/// The smallest buffer among the links that have one (`None`: all bufferless): it bounds the
/// `tcp` model's headroom c·√B, which a bufferless link does not get, and `lossync calibrate`
/// records it as the buffer a calibration was fitted at.
pub fn smallest_buffer_pkts(links: &[Link]) -> Option<f64> {
    links
        .iter()
        .map(|l| l.buffer_pkts)
        .filter(|&b| b > 0.0)
        .min_by(f64::total_cmp)
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct TcpModelFields {
    burst_pkts: Option<f64>,
    burst_per_sqrt_buffer: Option<f64>,
    event_threshold: Option<f64>,
    growth_share: Option<f64>,
    calibration: Option<String>,
    fitted_buffer_pkts: Option<f64>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SyncModelFields {
    sync: Sync,
    policy: DropPolicy,
    reductions_per_event: f64,
    holdoff_s: Option<f64>,
    #[serde(default)]
    recovery_pause: bool,
}

impl<'de> Deserialize<'de> for LossModel {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        const TAG: &str = "model";
        let (kind, rest) = tagged(d, TAG, &["proportional", "tcp", "sync"])?;
        Ok(match kind.as_str() {
            "proportional" => {
                let NoFields {} = fields(rest, TAG, &kind)?;
                LossModel::Proportional
            }
            "tcp" => {
                let f: TcpModelFields = fields(rest, TAG, &kind)?;
                LossModel::Tcp {
                    burst_pkts: f.burst_pkts,
                    burst_per_sqrt_buffer: f.burst_per_sqrt_buffer,
                    event_threshold: f.event_threshold.unwrap_or(1.0),
                    growth_share: f.growth_share,
                    calibration: f.calibration,
                    fitted_buffer_pkts: f.fitted_buffer_pkts,
                }
            }
            _ => {
                let f: SyncModelFields = fields(rest, TAG, &kind)?;
                LossModel::Sync {
                    sync: f.sync,
                    policy: f.policy,
                    reductions_per_event: f.reductions_per_event,
                    holdoff_s: f.holdoff_s,
                    recovery_pause: f.recovery_pause,
                }
            }
        })
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FixedFields {
    m: usize,
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
    probabilities: Vec<(usize, f64)>,
}

impl<'de> Deserialize<'de> for Sync {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        const TAG: &str = "kind";
        let (kind, rest) = tagged(d, TAG, &["all", "fixed", "normal", "empirical"])?;
        Ok(match kind.as_str() {
            "all" => {
                let NoFields {} = fields(rest, TAG, &kind)?;
                Sync::All
            }
            "fixed" => {
                let f: FixedFields = fields(rest, TAG, &kind)?;
                Sync::Fixed { m: f.m }
            }
            "normal" => {
                let f: NormalFields = fields(rest, TAG, &kind)?;
                Sync::Normal {
                    x: f.x,
                    mean: f.mean,
                    std: f.std,
                }
            }
            _ => {
                let f: EmpiricalFields = fields(rest, TAG, &kind)?;
                Sync::Empirical {
                    file: f.file,
                    probabilities: f.probabilities,
                }
            }
        })
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DropPolicy {
    HighestRate,
    LargestWindow,
    Random,
    RoundRobin,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Run {
    pub duration_s: f64,
    pub warmup_s: f64,
    pub from_first_congestion: bool,
    pub step_s: f64,
    pub seed: u64,
    pub record_interval_s: f64,
    /// The aggregate Σ cwnd/RTT is sampled this often; 0: not sampled.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub aggregate_interval_s: f64,
    /// Threads one run may use; 0: every core. Results are bit-identical for every count (the
    /// fluid engine's `tcp` model uses them, and the packet engine's partitioned scheduler).
    #[serde(default, skip_serializing_if = "is_default")]
    pub threads: usize,
    /// How the packet engine orders and runs its events ([`Scheduler`]).
    #[serde(default, skip_serializing_if = "is_default")]
    pub scheduler: Scheduler,
    /// At most this many flows have time-series columns (windows, rates, RTTs), spread evenly
    /// over the flows ([`crate::metrics::Series`]); every flow keeps its row in the summary.
    #[serde(
        default = "default_series_flows",
        skip_serializing_if = "is_default_series_flows"
    )]
    pub series_flows: usize,
}

/// Flows in the time series unless `run.series_flows` says otherwise: a wide table of 3 columns
/// per flow took 49 s to write and 3 GB at 10^5 flows; 1,000 flows write in a fraction of a second.
pub const DEFAULT_SERIES_FLOWS: usize = 1000;

fn default_series_flows() -> usize {
    DEFAULT_SERIES_FLOWS
}

fn is_default_series_flows(n: &usize) -> bool {
    *n == DEFAULT_SERIES_FLOWS
}

/// The packet engine's scheduler (docs/packet.md, "The partitioned scheduler").
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Scheduler {
    /// One event list on one thread; events due at the same picosecond in the order they were
    /// scheduled.
    #[default]
    Serial,
    /// The network and the hosts as partitions that run in parallel between exchanges, one
    /// lookahead apart (conservative parallel simulation); events due at the same picosecond
    /// in an order named by the event. The same result for every thread count.
    Partitioned,
}
