//! A sender's state and its per-step pieces: its path's RTT and XCP feedback, and the window's
//! reductions and growth by its law.

use super::link::LinkState;
use crate::cc::{self, CcContext, CongestionControl};

#[derive(Debug, Clone, Copy, Default)]
pub(super) struct FlowAcc {
    pub(super) sent: f64,
    pub(super) delivered: f64,
    pub(super) dropped: f64,
    pub(super) cwnd_integral: f64,
    pub(super) reductions: f64,
    /// Fluid marked CE on its path (ECN-capable flows).
    pub(super) marked: f64,
    /// Retransmission timeouts that fired (`tcp`).
    pub(super) timeouts: f64,
}

#[derive(Debug)]
pub(super) struct FlowState {
    pub(super) cc: Box<dyn CongestionControl>,
    pub(super) w: f64,
    pub(super) ssthresh: f64,
    pub(super) rtt_s: f64,
    pub(super) x: f64,
    /// Sending time left in a recovery pause (`loss.recovery_pause`), in seconds.
    pub(super) pause_s: f64,
    pub(super) started: bool,
    pub(super) start_s: f64,
    pub(super) base_rtt_s: f64,
    pub(super) rwnd: f64,
    /// The access link's capacity caps the sending rate (infinite unless the scenario sets it).
    pub(super) access_pps: f64,
    /// This flow's hops are `hop_off..hop_off + hops` in `hop_in` and `path_links`.
    pub(super) hop_off: usize,
    pub(super) hops: usize,
    /// The links its ACKs queue in (two-way traffic) are `ack_off..ack_off + ack_hops` in
    /// `ack_links`.
    pub(super) ack_off: usize,
    pub(super) ack_hops: usize,
    pub(super) acc: FlowAcc,
    /// `acc.delivered` at the last sample of the series.
    pub(super) delivered_at_record: f64,
}

/// XCP: the smallest feedback of the XCP routers on the path, per packet acked (the fluid model
/// applies it at once, without the RTT a header takes to come back); 0 without one.
pub(super) fn path_feedback(f: &FlowState, links: &[LinkState], path_links: &[usize]) -> f64 {
    let mut feedback_pkts = f64::INFINITY;
    for &l in &path_links[f.hop_off..f.hop_off + f.hops] {
        if let Some(fb) = links[l].discipline.feedback() {
            feedback_pkts = feedback_pkts.min(fb.per_packet(f.w, f.rtt_s));
        }
    }
    if feedback_pkts.is_finite() {
        feedback_pkts
    } else {
        0.0
    }
}

/// A sender's RTT: propagation plus the queueing delays (`delays`) of its path (at its hops'
/// `path_slots`: a link's, or at a dual-queue link an L4S flow's queue's) and of the links its
/// ACKs queue in.
#[inline]
pub(super) fn path_rtt(
    f: &FlowState,
    delays: &[f64],
    path_slots: &[usize],
    ack_links: &[usize],
) -> f64 {
    let mut rtt = f.base_rtt_s;
    for &l in &path_slots[f.hop_off..f.hop_off + f.hops] {
        rtt += delays[l];
    }
    for &l in &ack_links[f.ack_off..f.ack_off + f.ack_hops] {
        rtt += delays[l];
    }
    rtt
}

/// A sender applies `reductions` that reach it now, then grows by `acked` packets: slow start
/// below ssthresh (RFC 5681 §3.1), else its law.
#[inline]
pub(super) fn update_window(f: &mut FlowState, ctx: &CcContext, reductions: f64, acked: f64) {
    reduce_window(f, ctx, reductions);
    grow_window(f, ctx, acked);
}

pub(super) fn reduce_window(f: &mut FlowState, ctx: &CcContext, reductions: f64) {
    if reductions > 0.0 {
        f.w = f.cc.on_loss(ctx, f.w, reductions).max(1.0);
        f.ssthresh = f.w;
        f.acc.reductions += reductions;
    }
}

pub(super) fn grow_window(f: &mut FlowState, ctx: &CcContext, acked: f64) {
    // Fluid ACKs have no boundaries: no byte-counting limit.
    f.w = cc::grow_window(
        f.cc.as_mut(),
        ctx,
        f.w,
        f.ssthresh,
        acked,
        f64::INFINITY,
        f.rwnd,
    );
}
