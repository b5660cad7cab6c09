//! BBRv3's Startup and Drain exits, its ProbeBW cycle and its loss bounds (draft-ietf-ccwg-bbr-06
//! §5.3.1–5.3.3, §5.5.10): the state machine's steps that [`super::Bbr3::on_rate_sample`] runs per
//! ACK.

use super::{
    AckPhase, Bbr3, State, MAX_DRAIN_ROUNDS, MAX_PROBE_UP_ROUNDS, MAX_RENO_ROUNDS,
    STARTUP_FULL_LOSS_COUNT,
};
use crate::cc::{RateSample, RecoveryState};

impl Bbr3 {
    // --- Startup and Drain (§5.3.1–5.3.2) ---

    pub(super) fn reset_full_bw(&mut self) {
        self.full_bw = 0.0;
        self.full_bw_count = 0;
        self.full_bw_now = false;
    }

    /// §5.3.1.2 CheckFullBWReached.
    pub(super) fn check_full_bw_reached(&mut self, rs: &RateSample, rate: f64) {
        if self.full_bw_now || !self.round_start || rs.is_app_limited {
            return;
        }
        if rate >= self.full_bw * 1.25 {
            self.reset_full_bw();
            self.full_bw = rate;
            return;
        }
        self.full_bw_count += 1;
        self.full_bw_now = self.full_bw_count >= 3;
        self.full_bw_reached |= self.full_bw_now;
    }

    /// §5.3.1.3 CheckStartupHighLoss, as Linux's `bbr_check_loss_too_high_in_startup`: at the
    /// end of a round of fast recovery with at least 6 loss events and more than 2% lost, the
    /// pipe is full and inflight_longterm = max(BDP, what the round delivered).
    pub(super) fn check_startup_high_loss(&mut self, rs: &RateSample) {
        if self.full_bw_reached {
            return;
        }
        if rs.lost_pkts > 0.0 {
            self.loss_events_in_round += 1;
        }
        if self.loss_round_start
            && rs.recovery == RecoveryState::Fast
            && self.loss_events_in_round >= STARTUP_FULL_LOSS_COUNT
            && self.inflight_too_high(rs)
        {
            self.full_bw_reached = true;
            self.inflight_longterm = self.bdp_multiple(self.bw, 1.0).max(self.inflight_latest);
        }
        if self.loss_round_start {
            self.loss_events_in_round = 0;
        }
    }

    pub(super) fn check_startup_done(&mut self, rs: &RateSample) {
        self.check_startup_high_loss(rs);
        if self.state == State::Startup && self.full_bw_reached {
            self.enter(State::Drain);
            self.drain_start_round = self.round_count;
        }
    }

    /// §5.3.2 CheckDrainDone.
    pub(super) fn check_drain_done(&mut self, now_s: f64, rs: &RateSample) {
        if self.state == State::Drain
            && (rs.inflight_pkts <= self.inflight(self.bw, 1.0)
                || self.round_count > self.drain_start_round + MAX_DRAIN_ROUNDS)
        {
            self.start_down(now_s, rs);
        }
    }

    // --- ProbeBW (§5.3.3.9) ---

    pub(super) fn start_down(&mut self, now_s: f64, rs: &RateSample) {
        self.reset_congestion_signals();
        self.probe_up_acked_per_inc = f64::INFINITY;
        // PickProbeWait: 0 or 1 rounds already counted, and 2–3 s of wall clock.
        self.rounds_since_probe_up = self.rng.below(2) as u64;
        self.bw_probe_wait_s = 2.0 + self.rng.uniform();
        self.cycle_stamp_s = now_s;
        self.ack_phase = AckPhase::ProbeStopping;
        self.start_round(rs);
        self.enter(State::ProbeBwDown);
    }

    pub(super) fn start_refill(&mut self, rs: &RateSample) {
        self.reset_short_term_model();
        self.bw_probe_up_rounds = 0;
        self.bw_probe_up_acked = 0.0;
        self.prev_probe_precautionary = false;
        self.ack_phase = AckPhase::Refilling;
        self.start_round(rs);
        self.enter(State::ProbeBwRefill);
    }

    pub(super) fn start_up(&mut self, rs: &RateSample, rate: f64, cwnd: f64) {
        self.ack_phase = AckPhase::ProbeStarting;
        self.start_round(rs);
        self.reset_full_bw();
        self.full_bw = rate;
        self.enter(State::ProbeBwUp);
        self.raise_longterm_slope(cwnd);
    }

    /// §5.3.3.8 IsTimeToProbeBW: 2–3 s, or min(target in packets, 63) rounds, since DOWN began.
    pub(super) fn time_to_probe(&mut self, now_s: f64, rs: &RateSample, cwnd: f64) -> bool {
        let reno_rounds = self.target_inflight(cwnd).min(MAX_RENO_ROUNDS);
        if now_s > self.cycle_stamp_s + self.bw_probe_wait_s
            || self.rounds_since_probe_up as f64 >= reno_rounds
        {
            self.start_refill(rs);
            return true;
        }
        false
    }

    /// §5.3.3.9 IsTimeToCruise.
    pub(super) fn time_to_cruise(&self, inflight: f64) -> bool {
        inflight <= self.inflight_with_headroom() && inflight <= self.inflight(self.max_bw, 1.0)
    }

    /// §5.3.3.9 IsTimeToGoDown.
    pub(super) fn time_to_go_down(&mut self, inflight: f64, rate: f64, cwnd: f64) -> bool {
        if self.prev_probe_too_high && inflight >= self.inflight_longterm {
            self.prev_probe_precautionary = true;
            return true;
        }
        if self.is_cwnd_limited() && cwnd >= self.inflight_longterm {
            self.reset_full_bw();
            self.full_bw = rate;
        } else if self.full_bw_now {
            return true;
        }
        false
    }

    pub(super) fn is_cwnd_limited(&self) -> bool {
        self.cwnd_limited_now || self.cwnd_limited_last
    }

    /// §5.3.3.9 RaiseInflightLongtermSlope: 1, 2, 4, … packets more per round.
    pub(super) fn raise_longterm_slope(&mut self, cwnd: f64) {
        let growth = (1u64 << self.bw_probe_up_rounds) as f64;
        self.bw_probe_up_rounds = (self.bw_probe_up_rounds + 1).min(MAX_PROBE_UP_ROUNDS);
        self.probe_up_acked_per_inc = (cwnd / growth).max(1.0);
    }

    /// §5.3.3.9 ProbeInflightLongtermUpward.
    pub(super) fn probe_longterm_upward(&mut self, rs: &RateSample, cwnd: f64) {
        if !self.is_cwnd_limited() || cwnd < self.inflight_longterm {
            return;
        }
        self.bw_probe_up_acked += rs.acked_pkts;
        if self.bw_probe_up_acked >= self.probe_up_acked_per_inc {
            let delta = (self.bw_probe_up_acked / self.probe_up_acked_per_inc).floor();
            self.bw_probe_up_acked -= delta * self.probe_up_acked_per_inc;
            self.inflight_longterm += delta;
        }
        if self.round_start {
            self.raise_longterm_slope(cwnd);
        }
    }

    /// §5.3.3.9 AdaptLongTermModel; true if it decided a transition.
    pub(super) fn adapt_long_term_model(&mut self, rs: &RateSample, cwnd: f64) -> bool {
        if self.ack_phase == AckPhase::ProbeStarting && self.round_start {
            self.ack_phase = AckPhase::ProbeFeedback;
        }
        if self.ack_phase == AckPhase::ProbeStopping && self.round_start {
            self.is_bw_probe_sample = false;
            self.ack_phase = AckPhase::Init;
            if self.state.is_probe_bw() && !rs.is_app_limited {
                self.advance_max_bw_filter();
            }
            if self.state.is_probe_bw()
                && self.prev_probe_precautionary
                && !self.prev_probe_too_high
            {
                self.start_refill(rs);
                return true;
            }
        }
        if !self.inflight_too_high(rs) && self.inflight_longterm.is_finite() {
            if rs.tx_in_flight_pkts > self.inflight_longterm {
                self.inflight_longterm = rs.tx_in_flight_pkts;
            }
            if self.state == State::ProbeBwUp {
                self.probe_longterm_upward(rs, cwnd);
            }
        }
        false
    }

    /// §5.3.3.9 UpdateProbeBWCyclePhase.
    pub(super) fn update_probe_bw_cycle_phase(
        &mut self,
        now_s: f64,
        rs: &RateSample,
        rate: f64,
        cwnd: f64,
    ) {
        if !self.full_bw_reached || self.adapt_long_term_model(rs, cwnd) {
            return;
        }
        let inflight = rs.inflight_pkts;
        match self.state {
            // DOWN and CRUISE: time to probe (to REFILL)? DOWN: else time to cruise?
            State::ProbeBwDown | State::ProbeBwCruise => {
                let down = self.state == State::ProbeBwDown;
                if !self.time_to_probe(now_s, rs, cwnd) && down && self.time_to_cruise(inflight) {
                    self.enter(State::ProbeBwCruise);
                }
            }
            // REFILL: one round, then UP.
            State::ProbeBwRefill if self.round_start => {
                self.is_bw_probe_sample = true;
                self.start_up(rs, rate, cwnd);
            }
            State::ProbeBwUp => {
                let down = self.time_to_go_down(inflight, rate, cwnd);
                if down {
                    self.prev_probe_too_high = false;
                    self.start_down(now_s, rs);
                }
            }
            _ => {}
        }
    }

    /// §5.5.6 AdvanceMaxBwFilter: a new cycle's slot replaces the one of two cycles ago.
    pub(super) fn advance_max_bw_filter(&mut self) {
        self.cycle_count += 1;
        self.bw_slots[(self.cycle_count % 2) as usize] = 0.0;
        self.max_bw = self.bw_slots[0].max(self.bw_slots[1]);
    }

    // --- Losses (§5.5.10) ---

    /// §5.5.10.2 HandleInflightTooHigh.
    pub(super) fn handle_inflight_too_high(&mut self, now_s: f64, rs: &RateSample, cwnd: f64) {
        self.prev_probe_too_high = true;
        self.is_bw_probe_sample = false;
        if !rs.is_app_limited {
            self.inflight_longterm = rs
                .tx_in_flight_pkts
                .max(self.target_inflight(cwnd) * self.p.beta);
            self.longterm_cuts += 1;
        }
        if self.state == State::ProbeBwUp {
            self.start_down(now_s, rs);
        }
    }

    /// §5.5.10.2 NoteLoss (with SaveStateUponLoss's SaveCwnd).
    pub(super) fn note_loss(&mut self, rs: &RateSample, cwnd: f64) {
        if !self.is_loss_in_round {
            self.loss_round_delivered = rs.delivered;
            self.save_cwnd(cwnd);
        }
        self.is_loss_in_round = true;
    }

    pub(super) fn reset_congestion_signals(&mut self) {
        self.is_loss_in_round = false;
        self.bw_latest = 0.0;
        self.inflight_latest = 0.0;
    }

    pub(super) fn reset_short_term_model(&mut self) {
        self.bw_shortterm = f64::INFINITY;
        self.inflight_shortterm = f64::INFINITY;
    }

    /// §5.5.10.3 UpdateLatestDeliverySignals.
    pub(super) fn update_latest_delivery_signals(&mut self, rs: &RateSample, rate: f64) {
        self.loss_round_start = false;
        self.bw_latest = self.bw_latest.max(rate);
        self.inflight_latest = self.inflight_latest.max(delivered_since_sent(rs));
        if rs.prior_delivered >= self.loss_round_delivered {
            self.loss_round_delivered = rs.delivered;
            self.loss_round_start = true;
        }
    }

    /// §5.5.10.3 UpdateCongestionSignals, with §5.5.5 UpdateMaxBw and §5.5.1 UpdateRound.
    pub(super) fn update_congestion_signals(&mut self, rs: &RateSample, rate: f64, cwnd: f64) {
        self.round_start = false;
        if rs.interval_s > 0.0 {
            if rs.prior_delivered >= self.next_round_delivered {
                self.start_round(rs);
                self.round_count += 1;
                self.rounds_since_probe_up += 1;
                self.round_start = true;
                self.cwnd_limited_last = std::mem::take(&mut self.cwnd_limited_now);
            }
            if rate > 0.0 && (rate >= self.max_bw || !rs.is_app_limited) {
                let slot = &mut self.bw_slots[(self.cycle_count % 2) as usize];
                *slot = slot.max(rate);
                self.max_bw = self.bw_slots[0].max(self.bw_slots[1]);
            }
        }
        if !self.loss_round_start {
            return;
        }
        // AdaptLowerBoundsFromCongestion, once per round.
        if !self.state.is_probing() && self.is_loss_in_round {
            if self.bw_shortterm.is_infinite() {
                self.bw_shortterm = self.max_bw;
            }
            if self.inflight_shortterm.is_infinite() {
                self.inflight_shortterm = cwnd;
            }
            self.bw_shortterm = self.bw_latest.max(self.p.beta * self.bw_shortterm);
            self.inflight_shortterm = self
                .inflight_latest
                .max(self.p.beta * self.inflight_shortterm);
        }
        self.is_loss_in_round = false;
    }

    /// §5.5.10.3 AdvanceLatestDeliverySignals.
    pub(super) fn advance_latest_delivery_signals(&mut self, rs: &RateSample, rate: f64) {
        if self.loss_round_start {
            self.bw_latest = rate;
            self.inflight_latest = delivered_since_sent(rs);
        }
    }
}

/// §2.3 RS.delivered: the packets delivered between the sending of the sampled packet and this
/// ACK, also where the rate sample's interval is too short to give a rate (Linux's
/// `tcp_rate_gen` keeps it then). In the fluid engine's samples, one RTT's deliveries.
fn delivered_since_sent(rs: &RateSample) -> f64 {
    if rs.acked_pkts > 0.0 {
        rs.delivered.saturating_sub(rs.prior_delivered) as f64
    } else {
        0.0
    }
}
