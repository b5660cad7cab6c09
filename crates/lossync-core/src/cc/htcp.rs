//! H-TCP: per ACK `w += α/w`, per loss `w ← β·w`, where the increase grows with the time `Δ`
//! since the flow's last congestion event and the backoff adapts to the RTT range:
//!
//! ```text
//! α_raw(Δ) = 1                                   Δ ≤ Δ_L
//!          = 1 + 10(Δ − Δ_L) + ((Δ − Δ_L)/2)²     Δ > Δ_L            (Δ_L = 1 s)
//! β        = clamp(RTT_min/RTT_max, 0.5, 0.8)     adaptive backoff (else 0.5)
//! α        = 2(1 − β)·max(1, α_raw·ρ),  ρ = clamp(RTT_min/0.1 s, 0.1, 2)  (ρ = 1 without RTT scaling)
//! ```
//!
//! Sources: D. Leith, R. Shorten, "H-TCP: TCP for high-speed and long-distance networks",
//! PFLDnet 2004; draft-leith-tcp-htcp-06; Linux `net/ipv4/tcp_htcp.c`; FreeBSD
//! `sys/netinet/cc/cc_htcp.c`; docs/model.md §3.5.
//!
//! Details taken from Linux: β is computed at the loss from the RTT_min/RTT_max seen so far, then
//! `RTT_max` fades to `RTT_min + 0.95·(RTT_max − RTT_min)` (`htcp_param_update`); RTT scaling uses
//! RTT_min and is floored so that `α_raw·ρ ≥ 1` (Linux `if (!factor) factor = 1`; FreeBSD also
//! floors α at 1), so scaling never slows H-TCP below its low-speed mode. Not modelled: Linux's
//! bandwidth switch (β = 0.5 when the achieved throughput moved by > 20 %), its use of β = 0.5 at
//! the very first congestion event and when RTT_min ≤ 10 ms. Also from Linux (`measure_rtt`): RTT_max
//! starts at RTT_min and accepts a sample at most 20 ms above itself. RTT_min and RTT_max come from
//! `ctx.rtt_s` in `on_ack`, which the packet engine calls outside fast recovery only (Linux measures
//! RTT_max in the Open state).

use super::{CcContext, CongestionControl, LawParams, Params};
use crate::error::Result;
use serde::Serialize;

/// draft-leith-tcp-htcp-06 / Linux `HZ` / FreeBSD `HTCP_DELTA_L`: low-speed period, 1 s.
pub const DELTA_L: f64 = 1.0;
/// Linux `BETA_MIN` (64/128) / FreeBSD `HTCP_MINBETA`: 0.5.
pub const BETA_MIN: f64 = 0.5;
/// Linux `BETA_MAX` (102/128 ≈ 0.797) / FreeBSD `HTCP_MAXBETA` (204/256): 0.8 in the draft.
pub const BETA_MAX: f64 = 0.8;
/// FreeBSD `HTCP_RTT_REF` = 100 ms; Linux `(HZ<<3)/(10·minRTT)` is the same 0.1 s reference.
pub const RTT_REF_S: f64 = 0.1;
/// FreeBSD `HTCP_MINROWE`/`HTCP_MAXROWE`, Linux scale clamp [0.5, 10] inverted: ρ ∈ [0.1, 2].
const RHO_MIN: f64 = 0.1;
const RHO_MAX: f64 = 2.0;
/// Linux `htcp_param_update`: `maxRTT = minRTT + (maxRTT − minRTT)·95/100` at each event.
const MAX_RTT_FADE: f64 = 0.95;
/// Linux `measure_rtt`: a sample raises RTT_max only if at most `msecs_to_jiffies(20)` above it.
const MAX_RTT_STEP_S: f64 = 0.020;

/// H-TCP's parameters.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct HtcpParams {
    /// `Δ_L`, the low-speed period after a congestion event, seconds.
    pub delta_l: f64,
    /// β = clamp(RTT_min/RTT_max, 0.5, 0.8) (else 0.5).
    pub adaptive_backoff: bool,
    /// α scaled by ρ = clamp(RTT_min/0.1 s, 0.1, 2) (else ρ = 1).
    pub rtt_scaling: bool,
}

impl LawParams for HtcpParams {
    const NAME: &'static str = "htcp";
    const ABOUT: &'static str =
        "H-TCP (Leith–Shorten 2004): α grows with time since loss; β = RTTmin/RTTmax ∈ [0.5, 0.8]";

    fn read(p: &mut Params) -> Result<Self> {
        Ok(HtcpParams {
            // A low-speed period longer than the longest run (10^7 s, scenario::limits) never ends.
            delta_l: p.f64(
                "delta_l",
                DELTA_L,
                |v| (0.0..=1e7).contains(&v),
                "in [0, 1e7] seconds (the longest run)",
            )?,
            adaptive_backoff: p.bool("adaptive_backoff", true)?,
            rtt_scaling: p.bool("rtt_scaling", true)?,
        })
    }

    fn build(&self) -> Box<dyn CongestionControl> {
        Box::new(Htcp::new(
            self.delta_l,
            self.adaptive_backoff,
            self.rtt_scaling,
        ))
    }
}

/// `α_raw(Δ)`: 1 up to `Δ_L`, then `1 + 10u + (u/2)²` with `u = Δ − Δ_L` (seconds).
#[inline]
pub fn alpha_raw(delta_s: f64, delta_l: f64) -> f64 {
    let u = delta_s - delta_l;
    if u <= 0.0 {
        1.0
    } else {
        1.0 + 10.0 * u + 0.25 * u * u
    }
}

/// Adaptive backoff factor `clamp(RTT_min/RTT_max, 0.5, 0.8)`; 0.5 without RTT samples.
#[inline]
pub fn adaptive_beta(rtt_min: f64, rtt_max: f64) -> f64 {
    if rtt_max > 0.0 && rtt_min > 0.0 {
        (rtt_min / rtt_max).clamp(BETA_MIN, BETA_MAX)
    } else {
        BETA_MIN
    }
}

/// RTT scaling factor `ρ = clamp(RTT_min/0.1 s, 0.1, 2)`.
#[inline]
pub fn rtt_scale(rtt_min: f64) -> f64 {
    (rtt_min / RTT_REF_S).clamp(RHO_MIN, RHO_MAX)
}

#[derive(Debug, Clone)]
pub struct Htcp {
    events: super::EventCounter,
    delta_l: f64,
    adaptive_backoff: bool,
    rtt_scaling: bool,
    /// Time of the last congestion event (or of the first ACK); `None` before either.
    t_last: Option<f64>,
    /// Backoff factor in use since the last event (0.5 before the first).
    beta: f64,
    /// Smallest and largest RTT samples seen (0 before the first sample).
    rtt_min: f64,
    rtt_max: f64,
    /// `ρ` for the current `rtt_min`, or 1 when RTT scaling is off.
    rho: f64,
}

impl Htcp {
    pub fn new(delta_l: f64, adaptive_backoff: bool, rtt_scaling: bool) -> Self {
        Htcp {
            events: Default::default(),
            delta_l,
            adaptive_backoff,
            rtt_scaling,
            t_last: None,
            beta: BETA_MIN,
            rtt_min: 0.0,
            rtt_max: 0.0,
            rho: 1.0,
        }
    }

    /// Increase per RTT at time `now_s` with the current state.
    pub fn alpha(&self, now_s: f64) -> f64 {
        let delta = now_s - self.t_last.unwrap_or(now_s);
        2.0 * (1.0 - self.beta) * (alpha_raw(delta, self.delta_l) * self.rho).max(1.0)
    }
}

impl CongestionControl for Htcp {
    fn on_ack(&mut self, ctx: &CcContext, cwnd: f64, acked: f64) -> f64 {
        if self.t_last.is_none() {
            self.t_last = Some(ctx.now_s);
        }
        let rtt = ctx.rtt_s;
        if rtt > 0.0 {
            if self.rtt_min == 0.0 || rtt < self.rtt_min {
                self.rtt_min = rtt;
                if self.rtt_scaling {
                    self.rho = rtt_scale(rtt);
                }
            }
            // Linux `measure_rtt`: RTT_max starts at RTT_min and takes a sample only within
            // 20 ms above it, so that one inflated sample (a receiver's delayed-ACK timer holds
            // its ACK up to 200 ms, RFC 5681 §4.2) cannot take β to its floor.
            if self.rtt_max < self.rtt_min {
                self.rtt_max = self.rtt_min;
            }
            if rtt > self.rtt_max && rtt <= self.rtt_max + MAX_RTT_STEP_S {
                self.rtt_max = rtt;
            }
        }
        cwnd + self.alpha(ctx.now_s) * acked / cwnd
    }

    fn on_loss(&mut self, ctx: &CcContext, cwnd: f64, reductions: f64) -> f64 {
        if self.events.new_event(reductions) {
            self.beta = if self.adaptive_backoff {
                adaptive_beta(self.rtt_min, self.rtt_max)
            } else {
                BETA_MIN
            };
            if self.rtt_max > self.rtt_min {
                self.rtt_max = self.rtt_min + MAX_RTT_FADE * (self.rtt_max - self.rtt_min);
            }
            self.t_last = Some(ctx.now_s);
        }
        cwnd * super::retained(self.beta, reductions)
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::*;
    use super::*;
    use serde_json::Value;

    #[test]
    fn alpha_raw_by_hand() {
        // Δ ≤ Δ_L = 1 s: 1. Δ = 2: u = 1, 1 + 10 + 0.25 = 11.25. Δ = 3: u = 2, 1 + 20 + 1 = 22.
        assert_eq!(alpha_raw(0.5, 1.0), 1.0);
        assert_eq!(alpha_raw(1.0, 1.0), 1.0);
        assert_eq!(alpha_raw(2.0, 1.0), 11.25);
        assert_eq!(alpha_raw(3.0, 1.0), 22.0);
        // Δ = 11: u = 10, 1 + 100 + 25 = 126.
        assert_eq!(alpha_raw(11.0, 1.0), 126.0);
    }

    #[test]
    fn beta_is_clamped_to_linux_bounds() {
        // RTT ratio 0.3 → 0.5 (BETA_MIN), 0.7 → 0.7, 0.95 → 0.8 (BETA_MAX).
        assert_eq!(adaptive_beta(0.03, 0.1), 0.5);
        assert!((adaptive_beta(0.07, 0.1) - 0.7).abs() < 1e-12);
        assert_eq!(adaptive_beta(0.095, 0.1), 0.8);
        assert_eq!(adaptive_beta(0.0, 0.0), 0.5);
    }

    #[test]
    fn rtt_scaling_factor() {
        // ρ = RTT_min/0.1 clamped to [0.1, 2]: 50 ms → 0.5, 100 ms → 1, 5 ms → 0.1, 300 ms → 2.
        assert!((rtt_scale(0.05) - 0.5).abs() < 1e-12);
        assert!((rtt_scale(0.1) - 1.0).abs() < 1e-12);
        assert_eq!(rtt_scale(0.005), 0.1);
        assert_eq!(rtt_scale(0.3), 2.0);
        // In the law: RTT_min 50 ms, Δ = 3 s, β = 0.5: α = 2·0.5·22·0.5 = 11, so at cwnd 100
        // one ACK adds 0.11.
        let mut cc = default_law("htcp");
        cc.on_ack(&ctx(0.0, 0.05), 100.0, 1.0);
        let w = cc.on_ack(&ctx(3.0, 0.05), 100.0, 1.0);
        assert!((w - 100.11).abs() < 1e-9, "{w}");
        // RTT_min 20 ms (ρ = 0.2): Δ = 0.5 → max(1, 0.2) = 1, α = 1; Δ = 3 → 22·0.2 = 4.4.
        let mut cc = default_law("htcp");
        let w = cc.on_ack(&ctx(0.0, 0.02), 100.0, 1.0);
        assert!((w - 100.01).abs() < 1e-9, "{w}");
        let w = cc.on_ack(&ctx(0.5, 0.02), 100.0, 1.0);
        assert!((w - 100.01).abs() < 1e-9, "{w}");
        let w = cc.on_ack(&ctx(3.0, 0.02), 100.0, 1.0);
        assert!((w - 100.044).abs() < 1e-9, "{w}");
        // Without RTT scaling the same flow gets α = 22 at Δ = 3.
        let mut cc = law_with("htcp", &[("rtt_scaling", Value::from(false))]);
        cc.on_ack(&ctx(0.0, 0.02), 100.0, 1.0);
        let w = cc.on_ack(&ctx(3.0, 0.02), 100.0, 1.0);
        assert!((w - 100.22).abs() < 1e-9, "{w}");
    }

    #[test]
    fn scripted_cycle() {
        let mut cc = default_law("htcp");
        // First ACK at t = 0 sets the reference; RTT 0.1 s → ρ = 1; β = 0.5 before any loss:
        // α = 2·0.5·1 = 1 → 100 + 1/100 = 100.01.
        let w = cc.on_ack(&ctx(0.0, 0.1), 100.0, 1.0);
        assert!((w - 100.01).abs() < 1e-12, "{w}");
        // The RTT rises in steps of at most 20 ms (Linux's window for RTT_max), to 0.14 s at t = 3
        // (Δ = 3): α = 2·0.5·22 = 22 → 100.22.
        cc.on_ack(&ctx(1.0, 0.115), 100.0, 1.0);
        cc.on_ack(&ctx(2.0, 0.13), 100.0, 1.0);
        let w = cc.on_ack(&ctx(3.0, 0.14), 100.0, 1.0);
        assert!((w - 100.22).abs() < 1e-9, "{w}");
        // Loss at t = 3.5: β = 0.1/0.14 = 0.714286 → 100·β = 71.4286;
        // RTT_max fades to 0.1 + 0.95·0.04 = 0.138.
        let w = cc.on_loss(&ctx(3.5, 0.14), 100.0, 1.0);
        assert!((w - 71.428571).abs() < 1e-5, "{w}");
        // t = 4 (Δ = 0.5): α = 2·(1 − 0.714286)·1 = 0.571429 → 70 + 0.571429/70 = 70.008163.
        let w = cc.on_ack(&ctx(4.0, 0.1), 70.0, 1.0);
        assert!((w - 70.008163).abs() < 1e-6, "{w}");
        // t = 5.5 (Δ = 2): α = 0.571429·11.25 = 6.428571 → 70 + 6.428571/70 = 70.091837.
        let w = cc.on_ack(&ctx(5.5, 0.1), 70.0, 1.0);
        assert!((w - 70.091837).abs() < 1e-6, "{w}");
        // Loss at t = 6 with no new maximum: β = 0.1/0.138 = 0.724638 → 72.4638.
        let w = cc.on_loss(&ctx(6.0, 0.1), 100.0, 1.0);
        assert!((w - 72.463768).abs() < 1e-5, "{w}");
        // Δ restarts at the loss: at t = 6.5, α = 2·(1 − 0.724638) = 0.550725 → 100.00550725.
        let w = cc.on_ack(&ctx(6.5, 0.1), 100.0, 1.0);
        assert!((w - 100.0055072).abs() < 1e-6, "{w}");
        // Two reductions at once: no new maximum, RTT_max has faded to 0.1 + 0.95·0.038 = 0.1361,
        // so β = 0.1/0.1361 = 0.734754 and 100·0.734754² = 53.9864.
        let w = cc.on_loss(&ctx(7.0, 0.1), 100.0, 2.0);
        assert!((w - 53.9864).abs() < 1e-3, "{w}");
    }

    /// Linux `measure_rtt`: a sample more than 20 ms above RTT_max is not taken. A receiver's
    /// delayed-ACK timer (up to 200 ms, RFC 5681 §4.2) inflates one sample: 80 ms, then 280 ms,
    /// then a loss keeps β at its ceiling 0.8 (taken, 0.08/0.28 would floor β at 0.5). A rise in
    /// steps of 15 ms is followed: 0.08/0.11 = 0.727.
    #[test]
    fn one_inflated_rtt_sample_does_not_set_rtt_max() {
        let mut cc = default_law("htcp");
        cc.on_ack(&ctx(0.0, 0.08), 100.0, 1.0);
        cc.on_ack(&ctx(0.5, 0.28), 100.0, 1.0);
        assert!((cc.on_loss(&ctx(1.0, 0.08), 100.0, 1.0) - 80.0).abs() < 1e-9);
        let mut cc = default_law("htcp");
        for (t, rtt) in [(0.0, 0.08), (0.5, 0.095), (0.7, 0.11)] {
            cc.on_ack(&ctx(t, rtt), 100.0, 1.0);
        }
        let w = cc.on_loss(&ctx(1.0, 0.08), 100.0, 1.0);
        assert!((w - 100.0 * 0.08 / 0.11).abs() < 1e-9, "{w}");
    }

    #[test]
    fn fixed_backoff() {
        let mut cc = law_with("htcp", &[("adaptive_backoff", Value::from(false))]);
        cc.on_ack(&ctx(0.0, 0.1), 100.0, 1.0);
        cc.on_ack(&ctx(0.5, 0.12), 100.0, 1.0);
        // RTT ratio 0.1/0.12 = 0.83 (adaptive β would be 0.8) is ignored: β = 0.5, 100 → 50,
        // and α = 2·0.5·α_raw = α_raw.
        assert_eq!(cc.on_loss(&ctx(1.0, 0.1), 100.0, 1.0), 50.0);
        let w = cc.on_ack(&ctx(3.0, 0.1), 100.0, 1.0);
        // Δ = 2 → α = 11.25 → 100.1125.
        assert!((w - 100.1125).abs() < 1e-9, "{w}");
    }
}
