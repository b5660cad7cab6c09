//! Step 1 of the `tcp` loss model: each ACK-clocked sender takes this step's ACKs, detected
//! losses and reductions, then sends what its window allows. A flow's update reads the links'
//! state of the step before and writes only its own, so the flows are split among the run's
//! threads (`fluid/workers.rs`).

use super::flow::{grow_window, path_feedback, path_rtt, reduce_window, FlowState};
use super::link::LinkState;
use super::tcp::{EcnDue, TcpDue, TcpFlow};
use super::workers::Workers;
use crate::cc::CcContext;
use rayon::prelude::*;

/// What every sender reads besides its own state (shared by the threads).
pub(super) struct SendStep<'a> {
    pub(super) links: &'a [LinkState],
    pub(super) path_links: &'a [usize],
    pub(super) ack_links: &'a [usize],
    /// Each link's (and L queue's) queueing delay at the start of the step.
    pub(super) delays: &'a [f64],
    pub(super) path_slots: &'a [usize],
    pub(super) step_index: u64,
    pub(super) t: f64,
    pub(super) dt: f64,
    pub(super) has_xcp: bool,
    pub(super) has_obs: bool,
}

/// Every started sender's step, on `workers`' threads when the run has them; `due`: the rings'
/// rows due now.
pub(super) fn senders<const ECN: bool>(
    workers: Option<&Workers>,
    s: &SendStep,
    flows: &mut [FlowState],
    tfs: &mut [TcpFlow],
    due: Due,
) {
    let Some(w) = workers else {
        return senders_chunk::<ECN>(s, flows, tfs, due);
    };
    let c = w.chunk(flows.len());
    let chunks = flows
        .par_chunks_mut(c)
        .zip(tfs.par_chunks_mut(c))
        .zip(due.acks.par_chunks_mut(c))
        .zip(due.events.par_chunks_mut(c));
    if ECN {
        chunks
            .zip(due.ecn.par_chunks_mut(c))
            .for_each(|((((f, tf), acks), events), ecn)| {
                senders_chunk::<ECN>(s, f, tf, Due { acks, events, ecn })
            });
    } else {
        chunks.for_each(|(((f, tf), acks), events)| {
            senders_chunk::<ECN>(
                s,
                f,
                tf,
                Due {
                    acks,
                    events,
                    ecn: &mut [],
                },
            )
        });
    }
}

/// The rings' rows due now, of every flow or of a chunk's: ACKs and losses detected, loss
/// events, and ECN's (`ecn` empty unless some flow is ECN-capable).
pub(super) struct Due<'a> {
    pub(super) acks: &'a mut [TcpDue],
    pub(super) events: &'a mut [u8],
    pub(super) ecn: &'a mut [EcnDue],
}

/// The step of the senders of one chunk (`due.ecn` as long as the others, or empty unless `ECN`).
#[inline]
fn senders_chunk<const ECN: bool>(
    s: &SendStep,
    flows: &mut [FlowState],
    tfs: &mut [TcpFlow],
    due: Due,
) {
    let Due {
        acks,
        events,
        ecn: ecn_due,
    } = due;
    let (t, dt) = (s.t, s.dt);
    // Only the RTT (and XCP's feedback) change per flow.
    let mut ctx = CcContext {
        now_s: t,
        rtt_s: 0.0,
        feedback_pkts: 0.0,
    };
    let rows = acks.iter_mut().zip(events);
    for (i, ((f, tf), (due, events))) in flows.iter_mut().zip(tfs).zip(rows).enumerate() {
        if !f.started {
            continue; // flows start in `FluidEngine::step_senders_tcp`
        }
        let rtt = path_rtt(f, s.delays, s.path_slots, s.ack_links);
        f.rtt_s = rtt;
        if s.has_obs {
            tf.assembly_wait_s = s.path_links[f.hop_off..f.hop_off + f.hops]
                .iter()
                .map(|&l| s.links[l].assembly_wait_s)
                .sum();
        }
        let TcpDue { acked, lost } = std::mem::take(due);
        let r = f64::from(std::mem::take(events));
        let prior_inflight = tf.inflight;
        tf.inflight = (tf.inflight - acked - lost).max(0.0);
        ctx.rtt_s = rtt;
        if s.has_xcp {
            ctx.feedback_pkts = path_feedback(f, s.links, s.path_links);
        }
        if t >= tf.rto_at_s {
            // The timeout: one reduction (ssthresh), then a loss window of one packet
            // and slow start (RFC 5681 §3.1); what was in flight is presumed lost.
            tf.rto_at_s = f64::INFINITY;
            f.acc.timeouts += 1.0;
            reduce_window(f, &ctx, 1.0);
            f.w = 1.0;
            tf.inflight = 0.0;
            if let Some(clock) = &mut tf.rate {
                clock.timeout(t, rtt);
            }
        }
        reduce_window(f, &ctx, r);
        if r > 0.0 {
            // Fast recovery lasts until the data sent before the cut are acknowledged,
            // one RTT; the window does not grow meanwhile (RFC 6675 §5, as the packet
            // engine's sender).
            tf.recovery_until_s = t + rtt;
            if let Some(clock) = &mut tf.rate {
                clock.loss_event(t, rtt);
            }
        }
        if ECN && tf.ecn {
            let EcnDue { marked, echoes } = std::mem::take(&mut ecn_due[i]);
            if tf.scalable {
                f.cc.on_ce_counts(&ctx, f.w, acked, marked);
            }
            // An echo is answered outside loss recovery and timeouts (RFC 3168 §6.1.2), at
            // once, and the window then holds for a round trip, as after a loss (the packet
            // engine's sender, Linux's CWR state; an L4S law keeps growing); ssthresh stays
            // at least 2 packets (RFC 5681 §3.1).
            if echoes > 0.0 && t >= tf.recovery_until_s && !tf.rto_at_s.is_finite() {
                let w = if tf.scalable {
                    f.cc.on_ecn(&ctx, f.w)
                } else {
                    f.cc.on_loss(&ctx, f.w, 1.0)
                };
                f.w = w.max(2.0).min(f.rwnd);
                f.ssthresh = f.w;
                f.acc.reductions += 1.0;
                if tf.hold_after_echo {
                    tf.recovery_until_s = t + rtt;
                }
            }
        }
        if let Some(clock) = &mut tf.rate {
            // A model-based law sets its window from this step's delivery-rate sample.
            let sample = clock.sample(
                s.step_index,
                t,
                dt,
                rtt,
                acked,
                lost,
                prior_inflight,
                tf.inflight,
            );
            f.w = f.cc.on_rate_sample(&ctx, &sample, f.w).clamp(1.0, f.rwnd);
        } else if t >= tf.recovery_until_s {
            grow_window(f, &ctx, acked);
        }
        // The ACK clock: send what the window allows beyond the data in flight, at
        // most what the access link carries in a step.
        let mut send = (f.w - tf.inflight).max(0.0).min(f.access_pps * dt);
        if tf.rto_at_s.is_finite() {
            send = 0.0; // waiting for the retransmission timer
        }
        tf.excess = (send - acked - lost).max(0.0);
        if let Some(rate_pps) = tf.law_paced.then(|| f.cc.pacing_rate_pps()).flatten() {
            // A law's own pacing rate (BBR's gain × bandwidth): no burst, no excess.
            send = send.min(rate_pps * dt);
            tf.excess = 0.0;
            if let Some(clock) = tf.rate.as_mut().filter(|_| f.cc.marks_app_limited()) {
                clock.app_limited(t, rtt);
            }
        } else if let Some(p) = tf.pacing {
            // A paced sender spreads its window over the RTT: no burst, so its growth
            // meets a full queue like any other arrival (no excess to charge first).
            let ratio = if f.w < f.ssthresh {
                p.ss_ratio
            } else {
                p.ca_ratio
            };
            send = send.min(ratio * f.w / rtt * dt);
            tf.excess = 0.0;
        }
        tf.inflight += send;
        f.x = send / dt;
        // The window is final for this step (nothing below changes it under `tcp`).
        f.acc.cwnd_integral += f.w * dt;
    }
}
