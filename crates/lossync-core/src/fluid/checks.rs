//! What the fluid engine refuses in a valid scenario (what it has no form for, what would not fit
//! in memory), and where it warns that its numbers may be off (the fidelity matrix's region).

use crate::capabilities::refuse_beyond;
use crate::error::{Error, Result};
use crate::registry;
use crate::scenario::{smallest_buffer_pkts, LossModel, Scenario};

/// Optical burst assembly has a fluid form under the `tcp` loss model ([`obs`]): bursts as a
/// rate, their losses as events of the flows they held. Wavelength contention and a maximum
/// burst size depend on individual bursts: capabilities the fluid engine lacks (`registry`).
///
/// [`obs`]: super::obs
fn check_bursts(sc: &Scenario) -> Result<()> {
    if matches!(sc.loss, LossModel::Tcp { .. }) {
        return Ok(());
    }
    match sc.links.iter().position(|l| l.assembler.is_some()) {
        Some(i) => Err(Error::field(
            format!("links[{i}].assembler"),
            "optical burst assembly has a fluid form under loss.model = \"tcp\" only; \
             otherwise it runs in the packet engine (engine = \"packet\")",
        )),
        None => Ok(()),
    }
}

/// Refuses model-based laws (BBR) outside the `tcp` loss model: their delivery-rate samples come
/// from its ACK clock (fluid/rate.rs).
fn check_model_laws(sc: &Scenario) -> Result<()> {
    if matches!(sc.loss, LossModel::Tcp { .. }) {
        return Ok(());
    }
    match sc.flows.iter().find(|f| f.cc.build().wants_rate_samples()) {
        Some(f) => Err(Error::field(
            "loss.model",
            format!(
                "variant {:?} (flows[{}].cc) has a fluid form under loss.model = \"tcp\" (the \
                 default) only: its delivery-rate samples come from that model's ACK clock",
                f.cc.name(),
                f.group
            ),
        )),
        None => Ok(()),
    }
}

/// Refuses ECN outside the `tcp` loss model: a mark is answered once per window of data from
/// the flow's own ACK clock (fluid/link.rs `mark`), which only that model has.
fn check_ecn(sc: &Scenario) -> Result<()> {
    if matches!(sc.loss, LossModel::Tcp { .. }) {
        return Ok(());
    }
    if let Some(i) = sc.links.iter().position(|l| l.queue.dual()) {
        return Err(Error::field(
            format!("links[{i}].queue"),
            format!(
                "{}'s two queues have a fluid form under loss.model = \"tcp\" (the default) only",
                sc.links[i].queue.name()
            ),
        ));
    }
    match sc.flows.iter().find(|f| f.ecn) {
        Some(f) => Err(Error::field(
            format!("flows[{}].ecn", f.group),
            "ECN has a fluid form under loss.model = \"tcp\" (the default) only",
        )),
        None => Ok(()),
    }
}

/// What the fluid engine refuses in a valid scenario (what it has no form for, what would not
/// fit in memory), checked without building anything: `FluidEngine::new` and `lossync validate`.
pub fn check(sc: &Scenario) -> Result<()> {
    // What it lacks a capability for (dynamic traffic, wavelength contention, ...), in the
    // words every engine uses; then what it refuses for its own reasons.
    refuse_beyond("fluid", &registry::engines(), sc)?;
    check_bursts(sc)?;
    check_model_laws(sc)?;
    check_ecn(sc)?;
    check_memory(sc, (sc.run.duration_s / sc.run.step_s).round() as u64)
}

/// Refuses a scenario whose engine state would not fit in memory, before allocating it: the loss
/// ring (one slot per step of the longest RTT, full buffers included, per connection), the time
/// series and the per-connection and per-hop state.
fn check_memory(sc: &Scenario, total_steps: u64) -> Result<()> {
    let dt = sc.run.step_s;
    let n = sc.flows.len() as f64;
    let (mut max_rtt, mut rtt_field, mut buffer_blame) = (0.0f64, "flows".to_string(), false);
    for f in &sc.flows {
        let queueing: f64 = f
            .path
            .iter()
            .chain(&f.ack_path)
            .map(|&l| sc.links[l].buffer_pkts / sc.links[l].capacity_pps)
            .sum();
        if f.rtt_s + queueing > max_rtt {
            max_rtt = f.rtt_s + queueing;
            buffer_blame = queueing > f.rtt_s;
            rtt_field = format!("flows[{}].rtt", f.group);
        }
    }
    // Per slot and flow: the loss ring's 8 bytes, or with the `tcp` loss model its ACKs and
    // detected losses (8 bytes each) and its loss events (a byte).
    let slot_bytes = if matches!(sc.loss, LossModel::Tcp { .. }) {
        17.0
    } else {
        8.0
    };
    let ring = slot_bytes * ((max_rtt / dt).ceil() + 3.0) * n;
    let record_every = (sc.run.record_interval_s / dt).round().max(1.0);
    // Per link its queue, utilization and delay (two); per connection its window, rate and RTT.
    let columns = 1.0 + 4.0 * sc.links.len() as f64 + 3.0 * n;
    let series = ((total_steps as f64 / record_every).floor() + 1.0) * columns * 8.0;
    let hops: usize = sc
        .flows
        .iter()
        .map(|f| f.path.len() + f.ack_path.len())
        .sum();
    // A dual-queue link's classic FIFO, 8 bytes per step of its longest wait (fluid/dual.rs).
    let fifo = |l: &crate::scenario::Link| {
        8.0 * super::dual::fifo_steps(l.buffer_pkts, l.capacity_pps, 0.0, dt) as f64
    };
    let duals = || sc.links.iter().enumerate().filter(|(_, l)| l.queue.dual());
    let fifos: f64 = duals().map(|(_, l)| fifo(l)).sum();
    // FlowState with its law, and per hop a link member's eight scratch numbers.
    let state = n * 512.0 + hops as f64 * 80.0;
    let (field, what) = if fifos > series && fifos > ring && fifos > state {
        let (l, _) = duals()
            .max_by(|a, b| fifo(a.1).total_cmp(&fifo(b.1)))
            .expect("some link is dual");
        (
            format!("links[{l}].buffer"),
            "a dual queue's classic wait line, one entry per step of its longest wait",
        )
    } else if series > ring && series > state {
        ("run.record_interval".to_string(), "the time series")
    } else if ring > state && buffer_blame {
        let l = sc
            .links
            .iter()
            .enumerate()
            .max_by(|a, b| {
                let d = |l: &crate::scenario::Link| l.buffer_pkts / l.capacity_pps;
                d(a.1).total_cmp(&d(b.1))
            })
            .map_or(0, |(i, _)| i);
        (
            format!("links[{l}].buffer"),
            "a loss ring as long as the buffers' queueing delay",
        )
    } else if ring > state {
        (
            rtt_field,
            "a loss ring as long as the largest RTT, per flow",
        )
    } else {
        ("flows".to_string(), "per-flow state")
    };
    crate::memory::check("fluid", ring + series + state + fifos, &field, what)
}

/// The smallest window that can draw three duplicate ACKs after a loss (RFC 5681 §3.2): the
/// lost packet and three behind it.
const MIN_FAST_RETRANSMIT_WINDOW_PKTS: f64 = 4.0;

/// The shortest queue the fluid engine's answers hold for: 4 flows at 100 Mb/s and 40 ms agreed
/// with the jittered packet engine within 2 points from 5 packets of buffer up (CUBIC and BBR,
/// 2026-11-28), and were 27 to 96 points apart at 0 and 2.
const SMALLEST_FLUID_BUFFER_PKTS: f64 = 4.0;

/// Where the fidelity matrix (docs/validation/fidelity.md: 486 cells against the packet engine,
/// 100 Mb/s to 10 Gb/s, 2 to 50 flows, buffers of 2% to 100% of the BDP) says this scenario's
/// numbers may be off: one sentence per reason, with the matrix's figure.
pub(super) fn region_warnings(sc: &Scenario) -> Vec<String> {
    let mut out = Vec::new();
    for (i, l) in sc.links.iter().enumerate() {
        if let Some(a) = &l.assembler {
            out.push(if a.policy == crate::scenario::AssemblyPolicy::Window {
                format!(
                    "links[{i}].assembler: the fluid form of the window policy is not validated \
                     (obs-dumbbell: utilization 0.26 against the packet engine's 0.17, a third of \
                     its bursts); compare with --engine packet"
                )
            } else {
                format!(
                    "links[{i}].assembler: the fluid form of burst assembly gave 1.00-1.22 times \
                     the packet engine's per-flow throughput on 16 cells (docs/validation/obs.md)"
                )
            });
        }
    }
    let mut groups = sc.flows.iter().filter(|f| !f.hystart.is_off());
    if let Some(f) = groups.next() {
        out.push(format!(
            "flows[{}].hystart: the fluid engine has no per-ACK RTT samples and slow-starts until \
             its first loss, as without HyStart; compare the start with --engine packet",
            f.group
        ));
    }
    // The packet sender's recovery options: the fluid's loss events carry a recovery of their
    // own (docs/fluid.md, "Loss models") and no per-packet loss detection or undo.
    let mut said = std::collections::BTreeSet::new();
    for f in &sc.flows {
        let mut set = Vec::new();
        if f.recovery != crate::scenario::LossRecovery::default() {
            set.push(format!("recovery = {:?}", f.recovery.name()));
        }
        if !f.loss_detection.is_default() {
            set.push(format!("loss_detection = {:?}", f.loss_detection.name()));
        }
        if f.undo {
            set.push("undo = true".to_string());
        }
        if !set.is_empty() && said.insert(f.group) {
            out.push(format!(
                "flows[{}]: {} act in the packet engine only; the fluid engine's loss events have \
                 a recovery of their own and no per-packet loss detection or undo \
                 (docs/fluid.md); compare with --engine packet",
                f.group,
                set.join(", ")
            ));
        }
    }
    if let Some(f) = sc.flows.iter().find(|f| f.cc.name() == "bbr3") {
        out.push(format!(
            "flows[{}].cc: bbr3's fluid form is checked against the packet engine (with send \
             jitter) only on the cells of docs/validation/bbr3.md; compare with --engine packet",
            f.group
        ));
    }
    let xcp = sc.flows.iter().any(|f| f.cc.name() == "xcp");
    match &sc.loss {
        LossModel::Proportional if xcp => out.push(
            "XCP senders: the fluid engine's XCP (rate model) is checked against the packet \
             engine on a few cases only (docs/fluid.md); compare with --engine packet"
                .to_string(),
        ),
        LossModel::Proportional => out.push(
            "loss.model = \"proportional\": its utilization was within 3 points of the packet \
             engine in 32% of the fidelity matrix's cells (tcp: 93%; docs/validation/fidelity.md)"
                .to_string(),
        ),
        LossModel::Sync { .. } => out.push(
            "loss.model = \"sync\": imposed synchronization; its utilization was within 3 points \
             of the packet engine in 73-82% of the fidelity matrix's cells (tcp: 93%)"
                .to_string(),
        ),
        LossModel::Tcp {
            burst_pkts,
            burst_per_sqrt_buffer,
            event_threshold,
            calibration,
            fitted_buffer_pkts,
            ..
        } if burst_pkts.is_some()
            || burst_per_sqrt_buffer.is_some()
            || *event_threshold != 1.0
            || calibration.is_some()
            || fitted_buffer_pkts.is_some() =>
        {
            let burst = match (burst_pkts, burst_per_sqrt_buffer) {
                (Some(b), _) => format!("loss.burst_pkts = {b}"),
                (None, Some(c)) => format!("loss.burst_per_sqrt_buffer = {c}"),
                (None, None) => "loss.burst_pkts = default".to_string(),
            };
            let from = match (calibration, fitted_buffer_pkts) {
                (Some(file), _) => {
                    format!("calibrated against packet runs of one scenario ({file})")
                }
                (None, Some(_)) => "calibrated against packet runs of one scenario".to_string(),
                (None, None) => "set by hand or calibrated against packet runs of one scenario \
                                 (lossync calibrate)"
                    .to_string(),
            };
            out.push(format!(
                "{burst}, loss.event_threshold = {event_threshold}: {from}; trust it near that \
                 scenario, and check others with --engine packet"
            ));
            let smallest = smallest_buffer_pkts(&sc.links).unwrap_or(0.0);
            // 10%: further than a rounding of the buffer to whole packets at small BDPs.
            if let Some(fitted) = fitted_buffer_pkts.filter(|&f| (smallest - f).abs() > 0.1 * f) {
                out.push(format!(
                    "loss.calibration: fitted at a smallest buffer of {fitted:.1} packets, used at \
                     {smallest:.1} ({:.2} times it); calibrations used at twice their buffer were \
                     within 2 points of the packet engine (with send jitter) in 94% of \
                     docs/validation/calibration.md's cells, up to 3.6 points off, and further \
                     from it are not measured: fit at the buffer you use",
                    smallest / fitted
                ));
            }
        }
        LossModel::Tcp { .. } => {}
    }
    for (i, l) in sc.links.iter().enumerate() {
        let crossing: Vec<&crate::scenario::Flow> =
            sc.flows.iter().filter(|f| f.path.contains(&i)).collect();
        if crossing.is_empty() {
            continue;
        }
        let mean_rtt = crossing.iter().map(|f| f.rtt_s).sum::<f64>() / crossing.len() as f64;
        let bdp = l.capacity_pps * mean_rtt;
        let (lo, hi) = crossing
            .iter()
            .fold((f64::INFINITY, 0.0f64), |(lo, hi), f| {
                (lo.min(f.rtt_s), hi.max(f.rtt_s))
            });
        // Small buffers are outside the validated region with unequal RTTs only: there the
        // matrix's cells below 10% BDP were within 3 points in 62%, with equal RTTs in 96%.
        if matches!(sc.loss, LossModel::Tcp { burst_pkts: None, burst_per_sqrt_buffer: None, event_threshold, .. } if event_threshold == 1.0)
            && l.buffer_pkts < 0.1 * bdp
            && hi > lo * 1.01
        {
            out.push(format!(
                "links[{i}].buffer: {:.1}% of the BDP with unequal RTTs; there, below 10%, the default \
                 loss model was within 3 points of the packet engine in 62% of the fidelity \
                 matrix's cells (96% with equal RTTs, 98-99% from 10% up): check with --engine packet",
                100.0 * l.buffer_pkts / bdp
            ));
        }
        if matches!(sc.loss, LossModel::Tcp { .. }) && hi > lo * 1.01 {
            out.push(format!(
                "links[{i}]: flows of unequal RTTs ({:.0}-{:.0} ms); there the default loss model's \
                 fairness matched the packet engine (with send jitter) in 77% of the fidelity \
                 matrix's cells for Jain's index (within 0.05) and 72% for variant shares (within \
                 25%), against 93% and 90% with equal RTTs",
                lo * 1e3,
                hi * 1e3
            ));
        }
        // Morris, "TCP behavior with many flows" (ICNP 1997): with a few packets per flow,
        // losses end in retransmission timeouts, which no fluid loss model has.
        let window_pkts = (bdp + l.buffer_pkts) / crossing.len() as f64;
        if window_pkts < MIN_FAST_RETRANSMIT_WINDOW_PKTS {
            out.push(format!(
                "links[{i}]: about {window_pkts:.1} packets of window per flow (pipe and buffer \
                 over {} flows); below 4 a loss cannot draw three duplicate ACKs (RFC 5681 §3.2) \
                 and TCP repairs it by a retransmission timeout, which the fluid engine does not \
                 model: on the held-out cells with such windows it was within 3 points of the \
                 packet engine in 52 of 103, and above it in the other 51 \
                 (docs/validation/heldout.md); check with --engine packet",
                crossing.len()
            ));
        }
        // A packet queue this short overflows on bursts the fluid does not have: an ACK-clocked
        // sender's pairs of packets, BBR's TSO sends (docs/packet.md, "BBR"). (An optical link
        // is bufferless by design: its assembler's warning speaks for it.)
        if l.buffer_pkts < SMALLEST_FLUID_BUFFER_PKTS && l.assembler.is_none() {
            out.push(format!(
                "links[{i}].buffer: {:.1} packets, fewer than {SMALLEST_FLUID_BUFFER_PKTS}: such a \
                 queue overflows on the packet bursts a fluid does not have (an ACK clock's pairs, \
                 BBR's TSO sends), and the engines part: 4 flows at 100 Mb/s and 40 ms with 0 and \
                 2 packets of buffer, utilization 0.04 and 0.40 in the packet engine with send \
                 jitter against 1.00 in the fluid engine (BBR), 0.01 and 0.07 against 0.03 and \
                 0.34 (CUBIC); from 5 packets within 2 points: check with --engine packet",
                l.buffer_pkts
            ));
        }
        aqm_warnings(i, l, bdp, &mut out);
        if !(99e6..=10.1e9).contains(&l.capacity_bps) {
            out.push(format!(
                "links[{i}].capacity: {:.3e} b/s is outside the fidelity matrix (100 Mb/s to \
                 10 Gb/s); the fluid engine is extrapolating",
                l.capacity_bps
            ));
        }
        if crossing.len() > 50 {
            out.push(format!(
                "links[{i}]: {} flows, more than the fidelity matrix's 50",
                crossing.len()
            ));
        }
    }
    multi_bottleneck_warnings(sc, &mut out);
    out
}

/// Where the fluid engine's AQM laws left their validated region (docs/validation.md §6: the
/// grid of 100 Mb/s to 10 Gb/s at buffers of 0.5 and 2 BDP, and random cells of 0.25-3 BDP,
/// against the packet engine with send jitter): above 1 Gb/s, where RED, PIE and DualPI2 met
/// the utilization and delay targets in 14 of 31 converged cells at 10 Gb/s (100 Mb/s and
/// 1 Gb/s: 104 of 111), and buffers outside 0.25-3 BDP.
fn aqm_warnings(i: usize, l: &crate::scenario::Link, bdp_pkts: f64, out: &mut Vec<String>) {
    let queue = l.queue.name();
    // The step (DCTCP's K) met both at every rate (10 of 10), so only its buffer is checked.
    let met_at_10g = match queue {
        "red" => Some("6 of 10"),
        "pie" => Some("6 of 11"),
        "dualpi2" => Some("2 of 10"),
        "step" => None,
        _ => return,
    };
    if let Some(met_at_10g) = met_at_10g.filter(|_| l.capacity_bps > 1.5e9) {
        out.push(format!(
            "links[{i}].queue: the fluid engine's {queue} law met the utilization (3 points) and \
             delay (20%) targets against the packet engine (with send jitter) in {met_at_10g} \
             converged cells at 10 Gb/s, against 104 of 111 at 100 Mb/s and 1 Gb/s; above \
             1 Gb/s slow start's overshoot and the queue's bursts set the outcome \
             (docs/validation.md §6): check with --engine packet"
        ));
    }
    let fraction = l.buffer_pkts / bdp_pkts;
    if !(0.24..=3.01).contains(&fraction) {
        out.push(format!(
            "links[{i}].buffer: {fraction:.2} BDP behind {queue}; the fluid engine's AQM laws \
             were checked against the packet engine at buffers of 0.25-3 BDP only \
             (docs/validation.md §6): check with --engine packet"
        ));
    }
}

/// A flow group whose path crosses two or more links that can each be its bottleneck (their
/// flows could send more than their capacity, each flow at most at the slowest link of its own
/// path) and that do not run RED: the shipped parking lots, where the fluid engine's per-flow
/// throughput left the packet engine's, not NSFNet's RED access links, where it stayed within
/// 8% (docs/validation/topologies.md). Said once per group.
fn multi_bottleneck_warnings(sc: &Scenario, out: &mut Vec<String>) {
    let slowest: Vec<f64> = sc
        .flows
        .iter()
        .map(|f| {
            f.path
                .iter()
                .map(|&l| sc.links[l].capacity_bps)
                .fold(f64::INFINITY, f64::min)
        })
        .collect();
    let can_congest: Vec<bool> = (0..sc.links.len())
        .map(|i| {
            let demand: f64 = (sc.flows.iter().zip(&slowest))
                .filter(|(f, _)| f.path.contains(&i))
                .map(|(_, &s)| s)
                .sum();
            sc.links[i].queue.name() != "red" && demand > sc.links[i].capacity_bps * (1.0 + 1e-9)
        })
        .collect();
    let mut said = std::collections::BTreeSet::new();
    for f in &sc.flows {
        let hops: Vec<&str> = f
            .path
            .iter()
            .filter(|&&l| can_congest[l])
            .map(|&l| sc.links[l].name.as_str())
            .collect();
        if hops.len() >= 2 && said.insert(f.group) {
            out.push(format!(
                "flows[{}] ({}): its path crosses {} links that can each be its bottleneck ({}); \
                 there the fluid engine's per-flow throughput is outside its validated region: \
                 on the shipped parking lots, with drop-tail queues, the long flow got 1.12 (two \
                 such links) and 1.74 (four) times the packet engine's with send jitter (means \
                 over 4 seeds), while every link's utilization stayed within 3 points \
                 (docs/validation/topologies.md); check with lossync compare",
                f.group,
                f.group_name,
                hops.len(),
                hops.join(", ")
            ));
        }
    }
}
