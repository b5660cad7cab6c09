//! What a run uses: the resolved scenario, validated, every default filled in. Engines read only
//! this.

use crate::cc::CcParams;
use serde::Serialize;

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
    Xcp(crate::xcp::XcpParams),
}

#[derive(Debug, Clone, Serialize)]
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
