//! What the packet engine refuses before it builds anything ([`check`]): a scenario it cannot
//! model, or a run whose packet slots or memory ([`memory_estimate`]) would exceed the bounds.

use super::access::Access;
use super::event::SimTime;
use super::flows::FlowState;
use super::pipe::Pipe;
use super::records::FlowAcc;
use super::route::{Hop, Pkt};
use super::{sender, topology, DROP_LOG_LIMIT};
use crate::capabilities::refuse_beyond;
use crate::cc::CcParams;
use crate::error::{Error, Result};
use crate::metrics::{self, CompletionRecord};
use crate::queue::Buffer;
use crate::registry;
use crate::scenario::Scenario;

/// Refuse runs whose buffers plus largest plausible windows exceed this many packet slots.
const MAX_PACKET_SLOTS: f64 = (1u64 << 27) as f64;

/// What the packet engine refuses in a valid scenario, checked without building anything:
/// `PacketEngine::new` and `lossync validate`.
pub fn check(sc: &Scenario) -> Result<()> {
    refuse_beyond("packet", &registry::engines(), sc)?;
    check_no_imposed_m(sc)?;
    check_slots(sc)?;
    check_memory(sc)
}

/// A lost burst here holds the flows whose segments it carries: a distribution of them to draw
/// from (`assembler.m_distribution`) is the fluid engine's stand-in for that, refused here.
fn check_no_imposed_m(sc: &Scenario) -> Result<()> {
    match sc
        .links
        .iter()
        .position(|l| l.assembler.as_ref().is_some_and(|a| a.m_file.is_some()))
    {
        Some(i) => Err(Error::field(
            format!("links[{i}].assembler.m_distribution"),
            "the fluid engine's (engine = \"fluid\"): the packet engine's bursts hold the flows \
             whose segments they carry",
        )),
        None => Ok(()),
    }
}

/// Refuses a run whose buffers and packets in flight would need more than
/// [`MAX_PACKET_SLOTS`], naming the field to change.
fn check_slots(sc: &Scenario) -> Result<()> {
    let slots = Slots::of(sc);
    let all_buffers: f64 = slots.buffers.iter().sum();
    let total = all_buffers + slots.in_flight;
    if total > MAX_PACKET_SLOTS {
        let field = if all_buffers > MAX_PACKET_SLOTS / 2.0 {
            format!("links[{}].buffer", largest_buffer(sc, &slots))
        } else {
            let g = sc
                .flows
                .iter()
                .max_by(|a, b| slots.of_flow(sc, a).total_cmp(&slots.of_flow(sc, b)))
                .map_or(0, |f| f.group);
            format!("flows[{g}].rwnd")
        };
        return Err(Error::field(
            field,
            format!(
                "the packet engine would need about {total:.3e} packet slots (the buffer plus \
                 up to 2·(C·RTT + B) in flight), more than 2^27: lower the capacity, RTT or \
                 buffer, or cap the windows with rwnd"
            ),
        ));
    }
    Ok(())
}

/// The given link (not a reverse direction) with the largest buffer, the first of equals.
fn largest_buffer(sc: &Scenario, slots: &Slots) -> usize {
    (0..slots.buffers.len())
        .filter(|&l| sc.links[l].reverse_of.is_none())
        .fold(0, |a, l| {
            if slots.buffers[l] > slots.buffers[a] {
                l
            } else {
                a
            }
        })
}

/// Packets a run may hold: each link's buffer (its slots), and the packets in flight.
struct Slots {
    /// Per link, its buffer in whole packets (in floating point: a buffer of 10^13 packets
    /// must not overflow a sum).
    buffers: Vec<f64>,
    /// Packets in flight, all flows together: each flow at most twice its link's capacity in
    /// flight plus the buffer (a slow-start overshoot) plus its initial window, and never more
    /// than its receive window; all of them at most twice each link's pipe and buffer at the
    /// largest RTT plus the initial windows.
    in_flight: f64,
}

impl Slots {
    fn of(sc: &Scenario) -> Slots {
        let buffers: Vec<f64> = sc
            .links
            .iter()
            .map(|l| Buffer::new(l.buffer_pkts).slots as f64)
            .collect();
        let mut slots = Slots {
            buffers,
            in_flight: 0.0,
        };
        let max_rtt_s = sc.flows.iter().map(|f| f.rtt_s).fold(0.0, f64::max);
        let iw_sum: f64 = sc.flows.iter().map(|f| f.initial_window_pkts).sum();
        let pipe_limit: f64 = sc
            .links
            .iter()
            .zip(&slots.buffers)
            .map(|(l, &b)| 2.0 * (l.capacity_pps * max_rtt_s + b))
            .sum();
        slots.in_flight = sc
            .flows
            .iter()
            .map(|f| slots.of_flow(sc, f))
            .sum::<f64>()
            .min(pipe_limit + iw_sum);
        slots
    }

    fn of_flow(&self, sc: &Scenario, f: &crate::scenario::Flow) -> f64 {
        let l = &sc.links[f.path[0]];
        (2.0 * (l.capacity_pps * f.rtt_s + self.buffers[f.path[0]]) + f.initial_window_pkts)
            .min(f.rwnd_pkts)
    }
}

/// The most a law adds to a window in one RTT beyond doubling it (the overshoot the bound of
/// [`Slots`] allows), with the parameter that sets it: Reno's `a` packets per RTT, BIC's
/// `s_max`. The other laws grow by at most the window per RTT (CUBIC's target is at most
/// 1.5·cwnd, Scalable's `a` ≤ 1 per ACK, HighSpeed's a(w) < w).
fn law_burst(cc: &CcParams) -> (f64, &'static str) {
    match cc {
        CcParams::Reno(p) => (p.a, "a"),
        CcParams::Bic(p) => (p.s_max, "s_max"),
        _ => (0.0, ""),
    }
}

/// Bytes of a law's state, boxed (the largest, gHSTCP's, with its round statistics).
const LAW_BYTES: f64 = 512.0;

/// What a packet-engine run would allocate, estimated from its scenario before anything is, and
/// the field that would change it most.
#[derive(Debug, Clone, PartialEq)]
pub struct MemoryEstimate {
    pub bytes: f64,
    pub field: String,
    /// What the largest part is.
    pub what: String,
}

/// Estimates the memory of a run on the scenario's network ([`PacketEngine::new`]): per
/// connection its state, its law, its pipes' rings, scoreboard and receive bitmap as pre-sized
/// ([`topology::ring_hint`]); every port's queue as large as its buffer, and its pipe's ring
/// as pre-sized; the packets in flight
/// (a pipe ring slot each way, a scoreboard byte and a bitmap bit); the time series; the drop
/// log.
///
/// [`PacketEngine::new`]: super::PacketEngine::new
pub fn memory_estimate(sc: &Scenario) -> MemoryEstimate {
    use std::mem::size_of;
    let n = sc.flows.len() as f64;
    let ring_slot = size_of::<(SimTime, Pkt)>() as f64;
    // Per connection: its state and snapshots, its law, the retransmission FIFO (64 entries),
    // its routes' hops and pipes, its events (a few in the heap), its mark in each port's drop
    // clusters.
    let per_connection = size_of::<FlowState>() as f64
        + LAW_BYTES
        + 64.0 * size_of::<(u64, u64)>() as f64
        + 2.0 * size_of::<FlowAcc>() as f64
        + 16.0 * size_of::<Hop>() as f64
        + 2.0 * size_of::<Pipe>() as f64
        + size_of::<Access>() as f64
        + 8.0 * 32.0
        + sc.links.len() as f64 * (size_of::<bool>() + size_of::<u32>()) as f64;
    let rings: f64 = sc
        .flows
        .iter()
        .map(|f| {
            let hint = topology::ring_hint(sc, f).max(64);
            let pow2 = hint.next_power_of_two() as f64;
            // A model-based law's sender stamps every outstanding packet (sender::TxStamp), and
            // its state (BBR's, with its filters) is larger than LAW_BYTES.
            let law = f.cc.build();
            let stamps = if law.wants_rate_samples() {
                pow2 * sender::TX_STAMP_BYTES as f64
                    + std::mem::size_of_val(&*law).saturating_sub(LAW_BYTES as usize) as f64
            } else {
                0.0
            };
            2.0 * hint as f64 * ring_slot + pow2 + pow2 / 8.0 + stamps
        })
        .sum();
    let connections = n * per_connection + rings;
    // A pipe per link, pre-sized to the link's packets in flight over its delay.
    let link_pipes: f64 = sc
        .links
        .iter()
        .map(|l| {
            let hint =
                ((l.capacity_pps * l.delay_s) as usize).clamp(64, topology::RING_PRESIZE_LIMIT);
            size_of::<Pipe>() as f64 + hint as f64 * ring_slot
        })
        .sum();

    let slots = Slots::of(sc);
    let buffers: f64 = slots.buffers.iter().sum::<f64>() * size_of::<Pkt>() as f64;

    // In flight, with one RTT of the laws' own increase on top.
    let bursts: Vec<f64> = sc
        .flows
        .iter()
        .map(|f| law_burst(&f.cc).0.min(f.rwnd_pkts))
        .collect();
    let burst_sum: f64 = bursts.iter().sum();
    let in_flight_pkts = slots.in_flight + burst_sum;
    let in_flight = in_flight_pkts * (2.0 * ring_slot + 2.0 + 0.25);

    let n_records = (sc.run.duration_s / sc.run.record_interval_s).floor() + 1.0;
    // Per link its queue, utilization and delay (two); per connection its window, rate and RTT.
    let n_cols = 1.0 + 4.0 * sc.links.len() as f64 + 3.0 * n;
    let series = n_records * n_cols * 8.0;
    let drop_log = DROP_LOG_LIMIT as f64 * size_of::<(f64, usize)>() as f64;

    // Dynamic traffic: a record per finished flow.
    let completions = expected_arrivals(sc) * size_of::<CompletionRecord>() as f64;
    let bytes = connections + link_pipes + buffers + in_flight + series + drop_log + completions;
    let largest = connections
        .max(buffers)
        .max(in_flight)
        .max(series)
        .max(completions);
    let (field, what) = if largest == completions {
        let g = metrics::dynamic_groups(sc)
            .first()
            .map_or(0, |&i| sc.flows[i].group);
        (
            format!("flows[{g}].arrivals.rate"),
            format!("records of {:.3e} finished flows", expected_arrivals(sc)),
        )
    } else if largest == series {
        (
            "run.record_interval".to_string(),
            format!("a time series of {n_records} samples of {n_cols} columns"),
        )
    } else if largest == connections {
        // The group with the most connections, and the setting that multiplies them.
        let groups = sc.flows.last().map_or(0, |f| f.group + 1);
        let mut conns = vec![0usize; groups];
        let mut logical = vec![0usize; groups];
        for (i, f) in sc.flows.iter().enumerate() {
            conns[f.group] += 1;
            if i == 0 || sc.flows[i - 1].logical != f.logical {
                logical[f.group] += 1;
            }
        }
        let g = (0..groups)
            .max_by_key(|&g| (conns[g], usize::MAX - g))
            .unwrap_or(0);
        let dynamic = sc
            .flows
            .iter()
            .any(|f| f.group == g && f.arrivals.is_some());
        let setting = if dynamic {
            "arrivals.max_active"
        } else if conns[g] > logical[g] {
            "parallel"
        } else {
            "count"
        };
        (
            format!("flows[{g}].{setting}"),
            format!("the state of {n} connections ({} in flows[{g}])", conns[g]),
        )
    } else if largest == buffers {
        let l = (0..slots.buffers.len())
            .max_by(|&a, &b| slots.buffers[a].total_cmp(&slots.buffers[b]))
            .unwrap_or(0);
        (
            format!("links[{l}].buffer"),
            format!(
                "queues for {:.3e} packets of buffer",
                slots.buffers.iter().sum::<f64>()
            ),
        )
    } else if burst_sum > slots.in_flight {
        let i = (0..bursts.len())
            .max_by(|&a, &b| bursts[a].total_cmp(&bursts[b]))
            .unwrap_or(0);
        let f = &sc.flows[i];
        (
            format!("flows[{}].cc.{}", f.group, law_burst(&f.cc).1),
            format!(
                "{in_flight_pkts:.3e} packets in flight: the law may add {:.3e} packets per RTT",
                bursts[i]
            ),
        )
    } else {
        let all_buffers: f64 = slots.buffers.iter().sum();
        let field = if all_buffers > slots.in_flight / 2.0 {
            let l = (0..slots.buffers.len())
                .max_by(|&a, &b| slots.buffers[a].total_cmp(&slots.buffers[b]))
                .unwrap_or(0);
            format!("links[{l}].buffer")
        } else {
            let g = sc
                .flows
                .iter()
                .max_by(|a, b| slots.of_flow(sc, a).total_cmp(&slots.of_flow(sc, b)))
                .map_or(0, |f| f.group);
            format!("flows[{g}].rwnd")
        };
        (
            field,
            format!("{in_flight_pkts:.3e} packets in flight, up to 2·(C·RTT + B) per link"),
        )
    };
    MemoryEstimate { bytes, field, what }
}

/// Flows a run's dynamic groups are expected to start: a Poisson count, mean plus 5σ.
pub(super) fn expected_arrivals(sc: &Scenario) -> f64 {
    let mean: f64 = metrics::dynamic_groups(sc)
        .iter()
        .filter_map(|&i| sc.flows[i].arrivals)
        .map(|a| a.rate_per_s * sc.run.duration_s)
        .sum();
    mean + 5.0 * mean.sqrt()
}

/// Refuses a run whose [`memory_estimate`] exceeds the memory available ([`crate::memory`]).
pub(super) fn check_memory(sc: &Scenario) -> Result<()> {
    let e = memory_estimate(sc);
    crate::memory::check("packet", e.bytes, &e.field, &e.what)
}
