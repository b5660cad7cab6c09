//! BBRv3 (draft-ietf-ccwg-bbr-06, "BBR Congestion Control", Cardwell, Swett, Beshay, July 2026;
//! Linux's version is Google's `v3` branch of tcp_bbr.c): BBR v1's model of the path (a windowed
//! maximum delivery rate and a windowed minimum RTT), bounded by what losses say.
//!
//! - **States** (§5.3): Startup paces at 4 ln 2 ≈ 2.77 × bw with a window of 2 BDP, and ends on a
//!   bandwidth plateau (three rounds under 25% growth) or on high loss (§5.3.1.3); Drain paces at
//!   0.5 until in flight is one BDP (at most three rounds); ProbeBW cycles DOWN (0.90, until in
//!   flight is below the BDP and the headroom), CRUISE (1.0, until 2–3 s or a Reno-like number of
//!   rounds have passed, §5.3.3.8), REFILL (1.0, one round, the short-term bounds reset) and UP
//!   (1.25 with a window gain of 2.25, until the bandwidth plateaus or a round loses more than
//!   2%); ProbeRTT caps the window at half a BDP for 200 ms and a round when the min-RTT sample
//!   of the last 5 s is stale.
//! - **Bounds from losses** (§5.5.10): the long-term `inflight_longterm` (Linux's `inflight_hi`)
//!   is set to the in-flight volume at which a probe's round lost more than `loss_thresh` (2%), at
//!   least β = 0.7 of the target, and grows again in UP by 1, 2, 4, … packets per round; the
//!   short-term `bw_shortterm` and `inflight_shortterm` (`bw_lo`, `inflight_lo`) fall to
//!   max(latest, 0.7 × bound) at the end of each lossy round while not probing. CRUISE and
//!   ProbeRTT leave 15% of `inflight_longterm` free (the headroom).
//! - **The window** (§5.6.4) is `cwnd_gain × BDP` plus the offload budget (3 send quanta of 1 ms
//!   each, at most 64 KB), reached by adding the packets ACKed, at least 4 packets, then capped by
//!   the bounds of the state (§5.6.4.7). Entering recovery saves it and leaving restores it; a
//!   timeout starts from one packet (the engine's).
//!
//! Not modelled, as in [`super::bbr`]: the ACK-aggregation allowance `extra_acked` (§5.5.9; the
//! engines neither aggregate nor thin ACKs beyond a receiver's delayed ACKs), restarts from idle
//! (§5.4: flows are never idle while they have data), and the undo of a spurious recovery
//! (§5.5.11: the engine tells a law nothing of undos). Per-packet loss accounting (§5.5.10.2's
//! `HandleLostPacket`) is done per ACK, as Linux's `bbr_adapt_upper_bounds` also does, from the
//! rate sample's `tx_in_flight` and the losses since its packet was sent.
//!
//! ECN: the draft specifies no response to ECN (§3.7) and asks a flow that sends ECT to treat CE
//! as congestion; `bbr3` sends Not-ECT, as BBRv3 in Linux does unless told otherwise.

use super::{CcContext, CongestionControl, LawParams, Params, RateSample, RecoveryState};
use crate::error::Result;
use crate::rng::Rng;
use serde::Serialize;

mod cycle;

/// v1's: C.InitialCwnd of TCP (RFC 6928), the window before any RTT sample (§5.6.4.1), and the
/// RTT assumed for the first pacing rate, 1 ms (§5.6.2 `InitPacingRate`).
use super::bbr::{INIT_CWND, NOMINAL_RTT_S};
/// §5.6.3: the send quantum is 1 ms of data at the pacing rate, between 2 packets and 64 KB
/// (43 packets of 1500 bytes; a law knows no packet size, and 1500 is Ethernet's MTU).
const QUANTUM_S: f64 = 1e-3;
const MAX_QUANTUM_PKTS: f64 = 43.0;
/// §5.3.3.8: the Reno-coexistence bound on the rounds between bandwidth probes.
const MAX_RENO_ROUNDS: f64 = 63.0;
/// §5.3.3.9 `RaiseInflightLongtermSlope`: the growth doubles for at most 30 rounds.
const MAX_PROBE_UP_ROUNDS: u32 = 30;
/// §5.3.1.3 BBRStartupFullLossCnt: loss events in a round of recovery that end Startup.
const STARTUP_FULL_LOSS_COUNT: u32 = 6;
/// §5.3.2: Drain gives up waiting for the queue after this many rounds.
const MAX_DRAIN_ROUNDS: u64 = 3;

/// BBRv3's parameters, with the draft's constants as defaults (§2.5–2.16, §5.6.1's table).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Bbr3Params {
    /// Startup's pacing gain (BBR.StartupPacingGain).
    pub startup_pacing_gain: f64,
    /// Drain's pacing gain (BBR.DrainPacingGain).
    pub drain_pacing_gain: f64,
    /// The window gain everywhere but ProbeBW_UP and ProbeRTT (BBR.DefaultCwndGain).
    pub cwnd_gain: f64,
    /// ProbeBW_UP's pacing and window gains.
    pub up_pacing_gain: f64,
    pub up_cwnd_gain: f64,
    /// ProbeBW_DOWN's pacing gain.
    pub down_pacing_gain: f64,
    /// The most a probing round may lose before it is too high (BBR.LossThresh).
    pub loss_thresh: f64,
    /// The multiplicative decrease of the bounds per lossy round (BBR.Beta).
    pub beta: f64,
    /// The fraction of inflight_longterm left free in CRUISE and ProbeRTT (BBR.Headroom).
    pub headroom: f64,
    /// The smallest window, packets (BBR.MinPipeCwnd).
    pub min_cwnd: f64,
    /// ProbeRTT: its window gain, its least duration (s) and the interval after which a stale
    /// min-RTT sample calls for it (s).
    pub probe_rtt_cwnd_gain: f64,
    pub probe_rtt_duration: f64,
    pub probe_rtt_interval: f64,
    /// Length of the min-RTT filter, seconds (BBR.MinRTTFilterLen).
    pub min_rtt_window: f64,
    /// Pacing below the estimate by this fraction (BBR.PacingMarginPercent).
    pub pacing_margin: f64,
}

impl LawParams for Bbr3Params {
    // §3.7: no ECN response is specified; its flows are Not-ECT.
    const ECN: super::EcnUse = super::EcnUse::Incapable;
    const NAME: &'static str = "bbr3";
    const ABOUT: &'static str =
        "BBRv3: BBR's model bounded by loss (inflight_hi/lo, 2% per round) (draft-ietf-ccwg-bbr)";

    fn read(p: &mut Params) -> Result<Self> {
        let gain = |v: f64| v > 0.0 && v <= 100.0;
        let fraction = |v: f64| v > 0.0 && v < 1.0;
        Ok(Bbr3Params {
            // §2.5: 4 ln 2, the least gain that doubles the sending rate each round.
            startup_pacing_gain: p.f64(
                "startup_pacing_gain",
                4.0 * std::f64::consts::LN_2,
                gain,
                "in (0, 100]",
            )?,
            // §2.5: 0.5 (any value at or below 1 / DefaultCwndGain drains in a round).
            drain_pacing_gain: p.f64("drain_pacing_gain", 0.5, gain, "in (0, 100]")?,
            // §2.6.
            cwnd_gain: p.f64("cwnd_gain", 2.0, gain, "in (0, 100]")?,
            // §5.3.3.5.
            up_pacing_gain: p.f64(
                "up_pacing_gain",
                1.25,
                |v| v > 1.0 && v <= 100.0,
                "in (1, 100]",
            )?,
            up_cwnd_gain: p.f64("up_cwnd_gain", 2.25, gain, "in (0, 100]")?,
            // §5.3.3.1.
            down_pacing_gain: p.f64("down_pacing_gain", 0.9, fraction, "in (0, 1)")?,
            // §2.8.
            loss_thresh: p.f64("loss_thresh", 0.02, fraction, "in (0, 1)")?,
            beta: p.f64("beta", 0.7, fraction, "in (0, 1)")?,
            headroom: p.f64("headroom", 0.15, |v| (0.0..1.0).contains(&v), "in [0, 1)")?,
            min_cwnd: p.f64("min_cwnd", 4.0, |v| v >= 1.0, ">= 1 packet")?,
            // §2.16.2.
            probe_rtt_cwnd_gain: p.f64("probe_rtt_cwnd_gain", 0.5, gain, "in (0, 100]")?,
            probe_rtt_duration: p.f64("probe_rtt_duration", 0.2, |v| v >= 0.0, ">= 0 seconds")?,
            probe_rtt_interval: p.f64("probe_rtt_interval", 5.0, |v| v > 0.0, "> 0 seconds")?,
            // §2.16.1.
            min_rtt_window: p.f64("min_rtt_window", 10.0, |v| v > 0.0, "> 0 seconds")?,
            // §2.5.
            pacing_margin: p.f64(
                "pacing_margin",
                0.01,
                |v| (0.0..0.5).contains(&v),
                "in [0, 0.5)",
            )?,
        })
    }

    fn build(&self) -> Box<dyn CongestionControl> {
        Box::new(Bbr3::new(*self))
    }
}

/// BBRv3's states (§5.1.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum State {
    Startup,
    Drain,
    ProbeBwDown,
    ProbeBwCruise,
    ProbeBwRefill,
    ProbeBwUp,
    ProbeRtt,
}

impl State {
    pub fn is_probe_bw(self) -> bool {
        matches!(
            self,
            State::ProbeBwDown | State::ProbeBwCruise | State::ProbeBwRefill | State::ProbeBwUp
        )
    }

    /// §5.3.3.9 `IsProbingBW`: the accelerating states, where losses set the long-term bound
    /// and leave the short-term one alone.
    fn is_probing(self) -> bool {
        matches!(
            self,
            State::Startup | State::ProbeBwRefill | State::ProbeBwUp
        )
    }
}

/// What the ACKs now arriving say about bandwidth probing (§2.14 BBR.ack_phase).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum AckPhase {
    Init,
    Refilling,
    ProbeStarting,
    ProbeFeedback,
    ProbeStopping,
}

/// BBRv3's state; see the module doc. Volumes in packets, rates in packets per second.
#[derive(Debug, Clone)]
pub struct Bbr3 {
    p: Bbr3Params,
    state: State,
    pacing_gain: f64,
    cwnd_gain: f64,
    pacing_rate_pps: f64,
    has_seen_rtt: bool,
    // Rounds (§5.5.1).
    round_count: u64,
    round_start: bool,
    next_round_delivered: u64,
    // max_bw over the current and the previous ProbeBW cycle (§5.5.3–5.5.6): slot by parity.
    bw_slots: [f64; 2],
    cycle_count: u64,
    max_bw: f64,
    bw: f64,
    // min_rtt and ProbeRTT's schedule (§5.3.4.3).
    min_rtt_s: f64,
    min_rtt_stamp_s: f64,
    probe_rtt_min_delay_s: f64,
    probe_rtt_min_stamp_s: f64,
    probe_rtt_expired: bool,
    probe_rtt_done_s: Option<f64>,
    probe_rtt_round_done: bool,
    prior_cwnd: f64,
    prev_recovery: RecoveryState,
    // Startup (§5.3.1).
    full_bw: f64,
    full_bw_count: u32,
    full_bw_now: bool,
    full_bw_reached: bool,
    drain_start_round: u64,
    loss_events_in_round: u32,
    // The long- and short-term bounds (§2.9) and the signals that move them (§2.10).
    inflight_longterm: f64,
    bw_shortterm: f64,
    inflight_shortterm: f64,
    bw_latest: f64,
    inflight_latest: f64,
    is_loss_in_round: bool,
    loss_round_delivered: u64,
    loss_round_start: bool,
    // ProbeBW (§2.14).
    ack_phase: AckPhase,
    is_bw_probe_sample: bool,
    bw_probe_up_acked: f64,
    probe_up_acked_per_inc: f64,
    bw_probe_up_rounds: u32,
    rounds_since_probe_up: u64,
    bw_probe_wait_s: f64,
    cycle_stamp_s: f64,
    prev_probe_too_high: bool,
    prev_probe_precautionary: bool,
    /// C.is_cwnd_limited (§2.2): the window was full at some ACK of this round or the last.
    cwnd_limited_now: bool,
    cwnd_limited_last: bool,
    rng: Rng,
    /// Observations for tests and reports: the states entered, in order (the last 64), ProbeRTT
    /// episodes with their start times, and each cut of `inflight_longterm` for a lossy round.
    pub history: Vec<State>,
    pub probe_rtt_starts_s: Vec<f64>,
    pub longterm_cuts: u64,
}

impl Bbr3 {
    pub fn new(p: Bbr3Params) -> Self {
        let mut b = Bbr3 {
            p,
            state: State::Startup,
            pacing_gain: p.startup_pacing_gain,
            cwnd_gain: p.cwnd_gain,
            // §5.6.2 InitPacingRate: StartupPacingGain × InitialCwnd / 1 ms until an RTT sample.
            pacing_rate_pps: p.startup_pacing_gain * INIT_CWND / NOMINAL_RTT_S,
            has_seen_rtt: false,
            round_count: 0,
            round_start: false,
            next_round_delivered: 0,
            bw_slots: [0.0; 2],
            cycle_count: 0,
            max_bw: 0.0,
            bw: 0.0,
            min_rtt_s: f64::INFINITY,
            min_rtt_stamp_s: f64::NAN,
            probe_rtt_min_delay_s: f64::INFINITY,
            probe_rtt_min_stamp_s: f64::NAN,
            probe_rtt_expired: false,
            probe_rtt_done_s: None,
            probe_rtt_round_done: false,
            prior_cwnd: 0.0,
            prev_recovery: RecoveryState::Open,
            full_bw: 0.0,
            full_bw_count: 0,
            full_bw_now: false,
            full_bw_reached: false,
            drain_start_round: 0,
            loss_events_in_round: 0,
            inflight_longterm: f64::INFINITY,
            bw_shortterm: f64::INFINITY,
            inflight_shortterm: f64::INFINITY,
            bw_latest: 0.0,
            inflight_latest: 0.0,
            is_loss_in_round: false,
            loss_round_delivered: 0,
            loss_round_start: false,
            ack_phase: AckPhase::Init,
            is_bw_probe_sample: false,
            bw_probe_up_acked: 0.0,
            probe_up_acked_per_inc: f64::INFINITY,
            bw_probe_up_rounds: 0,
            rounds_since_probe_up: 0,
            bw_probe_wait_s: 0.0,
            cycle_stamp_s: 0.0,
            prev_probe_too_high: false,
            prev_probe_precautionary: false,
            cwnd_limited_now: false,
            cwnd_limited_last: false,
            rng: Rng::new(0, 0),
            history: Vec::with_capacity(64),
            probe_rtt_starts_s: Vec::new(),
            longterm_cuts: 0,
        };
        b.enter(State::Startup);
        b
    }

    pub fn state(&self) -> State {
        self.state
    }

    pub fn max_bw_pps(&self) -> f64 {
        self.max_bw
    }

    /// BBR.bw: max_bw bounded by the short-term bound, what the pacing rate is a gain of.
    pub fn bw_pps(&self) -> f64 {
        self.bw
    }

    pub fn min_rtt_s(&self) -> f64 {
        self.min_rtt_s
    }

    /// When BBR.probe_rtt_min_delay was last refreshed, seconds (NaN before the first sample).
    pub fn probe_rtt_min_stamp_s(&self) -> f64 {
        self.probe_rtt_min_stamp_s
    }

    /// BBR.inflight_longterm (Linux's inflight_hi), packets; infinite until a probe lost too much.
    pub fn inflight_longterm(&self) -> f64 {
        self.inflight_longterm
    }

    pub fn inflight_shortterm(&self) -> f64 {
        self.inflight_shortterm
    }

    pub fn full_bw_reached(&self) -> bool {
        self.full_bw_reached
    }

    pub fn gains(&self) -> (f64, f64) {
        (self.pacing_gain, self.cwnd_gain)
    }

    /// Enters `state` with its gains (§5.6.1's table).
    fn enter(&mut self, state: State) {
        let p = &self.p;
        (self.pacing_gain, self.cwnd_gain) = match state {
            State::Startup => (p.startup_pacing_gain, p.cwnd_gain),
            State::Drain => (p.drain_pacing_gain, p.cwnd_gain),
            State::ProbeBwDown => (p.down_pacing_gain, p.cwnd_gain),
            State::ProbeBwCruise | State::ProbeBwRefill => (1.0, p.cwnd_gain),
            State::ProbeBwUp => (p.up_pacing_gain, p.up_cwnd_gain),
            State::ProbeRtt => (1.0, p.probe_rtt_cwnd_gain),
        };
        self.state = state;
        if self.history.len() == 64 {
            self.history.remove(0);
        }
        self.history.push(state);
    }

    /// §5.6.3 SetSendQuantum, and §5.5.8.1's offload budget of three quanta.
    fn offload_budget(&self) -> f64 {
        3.0 * (self.pacing_rate_pps * QUANTUM_S).clamp(2.0, MAX_QUANTUM_PKTS)
    }

    /// §5.6.4.2 BDPMultiple: `gain × bw × min_rtt`; the initial window before any RTT.
    fn bdp_multiple(&self, bw: f64, gain: f64) -> f64 {
        if !self.min_rtt_s.is_finite() {
            return INIT_CWND;
        }
        gain * bw * self.min_rtt_s
    }

    /// §5.6.4.2 QuantizationBudget.
    fn quantization_budget(&self, cap: f64) -> f64 {
        let cap = cap.max(self.offload_budget()).max(self.p.min_cwnd);
        if self.state == State::ProbeBwUp {
            cap + 2.0
        } else {
            cap
        }
    }

    /// §5.6.4.2 Inflight(bw, gain).
    fn inflight(&self, bw: f64, gain: f64) -> f64 {
        self.quantization_budget(self.bdp_multiple(bw, gain))
    }

    /// §5.3.3.8 TargetInflight: the BDP, unless congestion cut the window.
    fn target_inflight(&self, cwnd: f64) -> f64 {
        self.bdp_multiple(self.bw, 1.0).min(cwnd)
    }

    /// §5.3.3.9 InflightWithHeadroom.
    fn inflight_with_headroom(&self) -> f64 {
        if self.inflight_longterm.is_infinite() {
            return f64::INFINITY;
        }
        let headroom = (self.p.headroom * self.inflight_longterm).max(1.0);
        (self.inflight_longterm - headroom).max(self.p.min_cwnd)
    }

    /// §5.5.10.2 IsInflightTooHigh: the losses since the sampled packet was sent are over
    /// `loss_thresh` of what was in flight when it was.
    fn inflight_too_high(&self, rs: &RateSample) -> bool {
        rs.lost_since_sent_pkts > rs.tx_in_flight_pkts * self.p.loss_thresh
    }

    fn start_round(&mut self, rs: &RateSample) {
        self.next_round_delivered = rs.delivered;
    }

    /// §5.6.4.4 SaveCwnd.
    fn save_cwnd(&mut self, cwnd: f64) {
        self.prior_cwnd =
            if self.prev_recovery == RecoveryState::Open && self.state != State::ProbeRtt {
                cwnd
            } else {
                self.prior_cwnd.max(cwnd)
            };
    }

    // --- ProbeRTT (§5.3.4) ---

    /// §5.3.4.3 UpdateMinRTT.
    fn update_min_rtt(&mut self, now_s: f64, rs: &RateSample) {
        if self.probe_rtt_min_stamp_s.is_nan() {
            // The filters start with the connection's first sample (it may start at any time).
            self.probe_rtt_min_stamp_s = now_s;
            self.min_rtt_stamp_s = now_s;
        }
        self.probe_rtt_expired = now_s > self.probe_rtt_min_stamp_s + self.p.probe_rtt_interval;
        if rs.rtt_s > 0.0 && (rs.rtt_s < self.probe_rtt_min_delay_s || self.probe_rtt_expired) {
            self.probe_rtt_min_delay_s = rs.rtt_s;
            self.probe_rtt_min_stamp_s = now_s;
        }
        let expired = now_s > self.min_rtt_stamp_s + self.p.min_rtt_window;
        if self.probe_rtt_min_delay_s < self.min_rtt_s || expired {
            self.min_rtt_s = self.probe_rtt_min_delay_s;
            self.min_rtt_stamp_s = self.probe_rtt_min_stamp_s;
        }
    }

    /// §5.6.4.5 ProbeRTTCwnd.
    fn probe_rtt_cwnd(&self) -> f64 {
        self.bdp_multiple(self.bw, self.p.probe_rtt_cwnd_gain)
            .max(self.p.min_cwnd)
    }

    /// §5.3.4.3 CheckProbeRTT and HandleProbeRTT.
    fn check_probe_rtt(&mut self, now_s: f64, rs: &RateSample, cwnd: &mut f64) {
        if self.state != State::ProbeRtt
            && self.probe_rtt_expired
            && self.p.probe_rtt_duration > 0.0
        {
            self.enter(State::ProbeRtt);
            self.probe_rtt_starts_s.push(now_s);
            self.save_cwnd(*cwnd);
            self.probe_rtt_done_s = None;
            self.ack_phase = AckPhase::ProbeStopping;
            self.start_round(rs);
        }
        if self.state != State::ProbeRtt {
            return;
        }
        match self.probe_rtt_done_s {
            None if rs.inflight_pkts <= self.probe_rtt_cwnd() => {
                self.probe_rtt_done_s = Some(now_s + self.p.probe_rtt_duration);
                self.probe_rtt_round_done = false;
                self.start_round(rs);
            }
            None => {}
            Some(done) => {
                self.probe_rtt_round_done |= self.round_start;
                if self.probe_rtt_round_done && now_s > done {
                    // CheckProbeRTTDone: schedule the next one, restore, ExitProbeRTT.
                    self.probe_rtt_min_stamp_s = now_s;
                    *cwnd = cwnd.max(self.prior_cwnd);
                    self.reset_short_term_model();
                    if self.full_bw_reached {
                        self.start_down(now_s, rs);
                        self.enter(State::ProbeBwCruise);
                    } else {
                        self.enter(State::Startup);
                    }
                }
            }
        }
    }

    // --- Control parameters (§5.6) ---

    /// §5.6.2 SetPacingRate: gain × bw less the margin; in Startup it only rises.
    fn set_pacing_rate(&mut self, rs: &RateSample, srtt_s: f64, cwnd: f64) {
        if !self.has_seen_rtt && rs.rtt_s > 0.0 {
            self.has_seen_rtt = true;
            self.pacing_rate_pps = self.p.startup_pacing_gain * cwnd / srtt_s.max(1e-6);
        }
        let rate = self.pacing_gain * self.bw * (1.0 - self.p.pacing_margin);
        if self.full_bw_reached || rate > self.pacing_rate_pps {
            self.pacing_rate_pps = rate;
        }
    }

    /// §5.6.4.6 SetCwnd with §5.6.4.4's recovery, §5.6.4.5 and §5.6.4.7's bounds.
    fn set_cwnd(&mut self, rs: &RateSample, mut cwnd: f64) -> f64 {
        if rs.recovery == RecoveryState::Open && self.prev_recovery != RecoveryState::Open {
            cwnd = cwnd.max(self.prior_cwnd); // RestoreCwnd on leaving recovery
        }
        self.prev_recovery = rs.recovery;
        let max_inflight = self.quantization_budget(self.bdp_multiple(self.bw, self.cwnd_gain));
        if self.full_bw_reached {
            cwnd = (cwnd + rs.acked_pkts).min(max_inflight);
        } else if cwnd < max_inflight || (rs.delivered as f64) < INIT_CWND {
            cwnd += rs.acked_pkts;
        }
        cwnd = cwnd.max(self.p.min_cwnd);
        if self.state == State::ProbeRtt {
            cwnd = cwnd.min(self.probe_rtt_cwnd());
        }
        let mut cap = f64::INFINITY;
        if self.state.is_probe_bw() && self.state != State::ProbeBwCruise {
            cap = self.inflight_longterm;
        } else if matches!(self.state, State::ProbeRtt | State::ProbeBwCruise) {
            cap = self.inflight_with_headroom();
        }
        cap = cap.min(self.inflight_shortterm).max(self.p.min_cwnd);
        cwnd.min(cap)
    }
}

impl CongestionControl for Bbr3 {
    /// Not called: BBRv3 sets its window per rate sample.
    fn on_ack(&mut self, _ctx: &CcContext, cwnd: f64, _acked: f64) -> f64 {
        cwnd
    }

    /// §5.6.4.4 OnEnterFastRecovery / OnEnterRTO: the window is saved, not cut (the engine cuts
    /// it to one packet on a timeout).
    fn on_loss(&mut self, _ctx: &CcContext, cwnd: f64, _reductions: f64) -> f64 {
        self.save_cwnd(cwnd);
        cwnd
    }

    fn slow_starts(&self) -> bool {
        false
    }

    fn grows_until_loss(&self) -> bool {
        false
    }

    fn wants_rate_samples(&self) -> bool {
        true
    }

    /// §5.2.3 UpdateOnACK: the model and the state, then the control parameters.
    fn on_rate_sample(&mut self, ctx: &CcContext, rs: &RateSample, cwnd: f64) -> f64 {
        let now = ctx.now_s;
        let mut cwnd = cwnd;
        let rate = if rs.interval_s > 0.0 {
            rs.delivered_pkts / rs.interval_s
        } else {
            0.0
        };
        if rs.prior_inflight_pkts + 1.0 >= cwnd.floor() {
            self.cwnd_limited_now = true;
        }
        // §5.2.4 per-loss steps, before the ACK's own (the transport marks losses first). A
        // loss counts when the sender is recovering from it: in the packet engine, a marked loss
        // (which opens fast recovery); in the fluid engine, whose fractional drops reach every
        // flow, the loss events its loss-synchronization module gives this flow (each opens
        // recovery for a round trip).
        if rs.lost_pkts > 0.0 && rs.recovery != RecoveryState::Open {
            self.note_loss(rs, cwnd);
            if self.is_bw_probe_sample && self.inflight_too_high(rs) {
                self.handle_inflight_too_high(now, rs, cwnd);
            }
        }
        self.update_latest_delivery_signals(rs, rate);
        self.update_congestion_signals(rs, rate, cwnd);
        self.check_full_bw_reached(rs, rate);
        self.check_startup_done(rs);
        self.check_drain_done(now, rs);
        self.update_probe_bw_cycle_phase(now, rs, rate, cwnd);
        self.update_min_rtt(now, rs);
        self.check_probe_rtt(now, rs, &mut cwnd);
        self.advance_latest_delivery_signals(rs, rate);
        self.bw = self.max_bw.min(self.bw_shortterm);
        self.set_pacing_rate(rs, ctx.rtt_s, cwnd);
        self.set_cwnd(rs, cwnd)
    }

    fn pacing_rate_pps(&self) -> Option<f64> {
        Some(self.pacing_rate_pps)
    }

    fn send_quantum_pkts(&self) -> u32 {
        super::tso_autosize_pkts(self.pacing_rate_pps, self.min_rtt_s)
    }

    /// §5.3.4.3 HandleProbeRTT: MarkConnectionAppLimited.
    fn marks_app_limited(&self) -> bool {
        self.state == State::ProbeRtt
    }

    fn seed(&mut self, rng: Rng) {
        self.rng = rng;
    }

    fn as_any(&self) -> Option<&dyn std::any::Any> {
        Some(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bbr3() -> Bbr3 {
        Bbr3::new(Bbr3Params::read(&mut Params::new(&Default::default(), "cc")).unwrap())
    }

    /// A law in ProbeBW_UP probing a path of 1000 packets/s and 100 ms (BDP 100), with a
    /// window of 250.
    fn probing_up() -> Bbr3 {
        let mut b = bbr3();
        b.full_bw_reached = true;
        b.min_rtt_s = 0.1;
        b.bw_slots = [1000.0, 0.0];
        (b.max_bw, b.bw) = (1000.0, 1000.0);
        b.enter(State::ProbeBwUp);
        b.is_bw_probe_sample = true;
        b
    }

    /// An ACK in fast recovery that newly marks a loss; its packet left with `tx_in_flight` in
    /// flight and `lost` packets were lost since.
    fn lossy_ack(tx_in_flight: f64, lost: f64) -> RateSample {
        RateSample {
            delivered_pkts: 100.0,
            interval_s: 0.1,
            rtt_s: 0.1,
            acked_pkts: 1.0,
            lost_pkts: 1.0,
            tx_in_flight_pkts: tx_in_flight,
            lost_since_sent_pkts: lost,
            prior_inflight_pkts: tx_in_flight,
            inflight_pkts: tx_in_flight - 2.0,
            prior_delivered: 1000,
            delivered: 1100,
            recovery: RecoveryState::Fast,
            ..RateSample::default()
        }
    }

    /// §5.5.10.2: a probe whose losses since its packet left exceed 2% of what was then in flight
    /// sets inflight_longterm to that in-flight volume (at least β = 0.7 of the target,
    /// min(BDP, cwnd)) and goes DOWN at once; 2% or less leaves the bound unset and the probe on.
    #[test]
    fn a_probe_losing_more_than_two_percent_sets_inflight_longterm_and_goes_down() {
        let ctx = super::super::testing::ctx(10.0, 0.1);
        // 3 of 125 (2.4%): too high.
        let mut b = probing_up();
        b.on_rate_sample(&ctx, &lossy_ack(125.0, 3.0), 250.0);
        assert_eq!(b.inflight_longterm(), 125.0);
        assert_eq!(b.state(), State::ProbeBwDown);
        assert!(b.prev_probe_too_high && b.longterm_cuts == 1);
        // 2.5 of 125 (2%): not over the threshold.
        let mut b = probing_up();
        b.on_rate_sample(&ctx, &lossy_ack(125.0, 2.5), 250.0);
        assert!(b.inflight_longterm().is_infinite());
        assert_eq!(b.state(), State::ProbeBwUp);
        // 6 of 50 (12%): the bound is 0.7 × min(BDP 100, cwnd 250) = 70, above 50.
        let mut b = probing_up();
        b.on_rate_sample(&ctx, &lossy_ack(50.0, 6.0), 250.0);
        assert!((b.inflight_longterm() - 70.0).abs() < 1e-9);
        // Only once per probe: the next lossy ACK of the same probe leaves the bound.
        b.on_rate_sample(&ctx, &lossy_ack(40.0, 8.0), 250.0);
        assert!((b.inflight_longterm() - 70.0).abs() < 1e-9 && b.longterm_cuts == 1);
    }

    /// §5.3.3.9 RaiseInflightLongtermSlope and ProbeInflightLongtermUpward: while the window is
    /// full at inflight_longterm, the bound grows by 1, 2, 4, 8 packets in successive rounds (one
    /// packet per cwnd / 2^k packets ACKed in round k).
    #[test]
    fn inflight_longterm_grows_by_doubling_steps_per_round_in_up() {
        let ctx = super::super::testing::ctx(10.0, 0.1);
        let mut b = probing_up();
        b.inflight_longterm = 100.0;
        let (mut growth, mut delivered, mut cwnd) = (Vec::new(), 1000, 100.0);
        for _round in 0..4 {
            let before = b.inflight_longterm();
            // One round: a window of ACKs, each of a packet sent with the window full; the window
            // follows the bound up as the law sets it.
            let n = cwnd as u64;
            for k in 0..n {
                let rs = RateSample {
                    delivered_pkts: 100.0,
                    interval_s: 0.1,
                    rtt_s: 0.1,
                    acked_pkts: 1.0,
                    tx_in_flight_pkts: cwnd,
                    prior_inflight_pkts: cwnd,
                    inflight_pkts: cwnd - 1.0,
                    prior_delivered: if k == 0 { delivered } else { delivered - n },
                    delivered: delivered + k + 1,
                    ..RateSample::default()
                };
                if k == 0 {
                    b.next_round_delivered = delivered;
                }
                cwnd = b.on_rate_sample(&ctx, &rs, cwnd);
                // Keep the phase (a plateau would end it; this test is about the bound).
                b.full_bw_now = false;
            }
            delivered += n;
            growth.push(b.inflight_longterm() - before);
        }
        assert_eq!(growth, [1.0, 2.0, 4.0, 8.0], "{growth:?}");
    }

    /// §5.6.4.5 ProbeRTTCwnd: half the BDP (v1's was 4 packets), at least MinPipeCwnd.
    #[test]
    fn probe_rtt_holds_half_a_bdp() {
        let mut b = probing_up();
        assert_eq!(b.probe_rtt_cwnd(), 50.0);
        b.bw = 10.0;
        assert_eq!(b.probe_rtt_cwnd(), 4.0);
    }
}
