//! Congestion-control laws: one file per variant, one trait, one registry.
//!
//! A law is written once, per acknowledged packet and per loss event, and serves both engines:
//! the packet engine calls [`CongestionControl::on_ack`] with `acked = 1` for every ACK, the fluid
//! engine calls it every step with the fluid ACK count `acked = W/R·Δ`. A per-ACK increment of
//! `a(W)/W` per packet thus becomes `dW/dt = a(W)/R` in the fluid engine (models.md §3,
//! "fluid translation rule"). Slow start is the engine's job; a law only sees congestion avoidance.
//!
//! Per-flow state (CUBIC's `W_max` and epoch, H-TCP's time since the last congestion, BIC's
//! `W_max`) changes only in `on_loss`, which the engines call only for the flow's own losses: a flow
//! the drop policy skips does not learn of a congestion event (models.md §2.3).
//!
//! Adding a variant: write `cc/name.rs` with a `pub const VARIANT: Variant`, and add one line to
//! [`VARIANTS`].

use crate::error::{Error, Result};
use serde_json::Value;
use std::collections::BTreeMap;

pub mod bic;
pub mod cubic;
pub mod ghstcp;
pub mod highspeed;
pub mod htcp;
pub mod reno;
pub mod scalable;
pub mod xcp;

/// Every variant a scenario can name. One line per variant.
pub const VARIANTS: &[Variant] = &[
    reno::VARIANT,
    highspeed::VARIANT,
    scalable::VARIANT,
    cubic::VARIANT,
    htcp::VARIANT,
    bic::VARIANT,
    ghstcp::VARIANT,
    xcp::VARIANT,
];

/// What a law may read at a call. Times in seconds.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CcContext {
    /// Simulation time now.
    pub now_s: f64,
    /// The latest RTT sample (fluid: the current `R = d + q/C`).
    pub rtt_s: f64,
    /// XCP: the window change per acknowledged packet the routers on the path asked for (the
    /// echoed congestion header; 0 where no XCP router is on the path).
    pub feedback_pkts: f64,
}

/// A congestion-control law. Windows are in packets.
pub trait CongestionControl: Send + Sync + std::fmt::Debug {
    /// `acked` packets were acknowledged in congestion avoidance (1 per ACK in the packet engine,
    /// fractional in the fluid engine). Returns the new congestion window.
    fn on_ack(&mut self, ctx: &CcContext, cwnd: f64, acked: f64) -> f64;

    /// `reductions` window reductions reach this flow now (1 per loss event in the packet engine;
    /// in the fluid engine's continuous mode the expected number of losses in a step, possibly
    /// fractional). Updates the law's own state and returns the window to continue with, which is
    /// also the new slow-start threshold.
    fn on_loss(&mut self, ctx: &CcContext, cwnd: f64, reductions: f64) -> f64;

    /// Whether the engine's slow start applies below ssthresh (false for laws that set the
    /// window themselves, like XCP's, which would otherwise slow-start whenever feedback takes
    /// the window under the ssthresh of its last loss).
    fn slow_starts(&self) -> bool {
        true
    }
}

/// The fraction of the window kept after `reductions` decreases that each keep `gamma`. Whole
/// reductions multiply (`gamma^k`); a fractional part `f` keeps `1 − (1 − gamma)·f`, the linear
/// decrease `dW = −b·W·λ·dt` of the fluid model (models.md §1.2 eq. 1), so the continuous-loss
/// mode has Misra et al.'s fixed points (W* = sqrt(2/p) for Reno) and stays positive.
pub fn retained(gamma: f64, reductions: f64) -> f64 {
    if reductions == 1.0 {
        return gamma;
    }
    let whole = reductions.floor();
    let frac = reductions - whole;
    gamma.powi(whole as i32) * (1.0 - (1.0 - gamma) * frac)
}

/// Tells stateful laws (CUBIC, H-TCP, BIC) when a loss is a new congestion event. The packet
/// engine signals whole events (1 reduction); the fluid engine's continuous mode signals the
/// expected losses of a step, often a small fraction. The multiplicative decrease applies at once
/// in both cases, but the per-event state (W_max, epoch, time since congestion) is reset only when
/// the signalled losses since the last reset add up to one event.
#[derive(Debug, Clone, Copy, Default)]
pub struct EventCounter {
    pending: f64,
}

impl EventCounter {
    pub fn new_event(&mut self, reductions: f64) -> bool {
        self.pending += reductions;
        if self.pending >= 1.0 - 1e-9 {
            self.pending = 0.0;
            true
        } else {
            false
        }
    }
}

/// A registry entry: the name scenarios use, a one-line description, and a constructor that
/// reads the variant's parameters.
pub struct Variant {
    pub name: &'static str,
    pub about: &'static str,
    pub build: fn(&mut Params) -> Result<Box<dyn CongestionControl>>,
}

/// Looks a variant up by name (case-insensitive; `-` and `_` ignored, so `HighSpeed`, `high-speed`
/// and `highspeed` are the same).
pub fn find(name: &str) -> Option<&'static Variant> {
    let key = |s: &str| s.to_ascii_lowercase().replace(['-', '_'], "");
    VARIANTS.iter().find(|v| key(v.name) == key(name))
}

/// Builds a law from its variant name and parameters; `field` prefixes error messages.
pub fn build(
    name: &str,
    params: &BTreeMap<String, Value>,
    field: &str,
) -> Result<Box<dyn CongestionControl>> {
    let variant = find(name).ok_or_else(|| {
        let known: Vec<&str> = VARIANTS.iter().map(|v| v.name).collect();
        Error::field(
            format!("{field}.variant"),
            format!("unknown variant {name:?} (known: {})", known.join(", ")),
        )
    })?;
    let mut p = Params::new(params, field);
    let cc = (variant.build)(&mut p)?;
    p.finish()?;
    Ok(cc)
}

/// A variant's parameters, read with defaults and ranges; unknown names are an error.
pub struct Params<'a> {
    values: &'a BTreeMap<String, Value>,
    field: &'a str,
    used: Vec<&'static str>,
}

impl<'a> Params<'a> {
    pub fn new(values: &'a BTreeMap<String, Value>, field: &'a str) -> Self {
        Params {
            values,
            field,
            used: Vec::new(),
        }
    }

    /// A number parameter with a default, accepted if `ok(value)`; `range` describes `ok`.
    pub fn f64(
        &mut self,
        name: &'static str,
        default: f64,
        ok: fn(f64) -> bool,
        range: &str,
    ) -> Result<f64> {
        self.used.push(name);
        let v = match self.values.get(name) {
            None => return Ok(default),
            Some(v) => v.as_f64().ok_or_else(|| {
                Error::field(format!("{}.{name}", self.field), "must be a number")
            })?,
        };
        if v.is_finite() && ok(v) {
            Ok(v)
        } else {
            Err(Error::field(
                format!("{}.{name}", self.field),
                format!("{v} is out of range: must be {range}"),
            ))
        }
    }

    pub fn bool(&mut self, name: &'static str, default: bool) -> Result<bool> {
        self.used.push(name);
        match self.values.get(name) {
            None => Ok(default),
            Some(v) => v.as_bool().ok_or_else(|| {
                Error::field(format!("{}.{name}", self.field), "must be true or false")
            }),
        }
    }

    fn finish(&self) -> Result<()> {
        match self
            .values
            .keys()
            .find(|k| !self.used.contains(&k.as_str()))
        {
            None => Ok(()),
            Some(k) => Err(Error::field(
                format!("{}.{k}", self.field),
                format!(
                    "unknown parameter (this variant takes: {})",
                    self.used.join(", ")
                ),
            )),
        }
    }
}

/// Test helpers shared by the variants' unit tests.
#[cfg(test)]
pub(crate) mod testing {
    use super::*;

    pub fn default_law(name: &str) -> Box<dyn CongestionControl> {
        build(name, &BTreeMap::new(), "cc").unwrap()
    }

    pub fn law_with(name: &str, params: &[(&str, Value)]) -> Box<dyn CongestionControl> {
        let map = params
            .iter()
            .map(|(k, v)| (k.to_string(), v.clone()))
            .collect();
        build(name, &map, "cc").unwrap()
    }

    pub fn ctx(now_s: f64, rtt_s: f64) -> CcContext {
        CcContext {
            now_s,
            rtt_s,
            feedback_pkts: 0.0,
        }
    }

    /// Feeds one RTT of per-packet ACKs (one per packet of the window at the round's start).
    pub fn one_rtt_of_acks(
        cc: &mut dyn CongestionControl,
        now_s: f64,
        rtt_s: f64,
        cwnd: f64,
    ) -> f64 {
        let mut w = cwnd;
        let n = cwnd.floor() as usize;
        for k in 0..n {
            let t = now_s + rtt_s * k as f64 / n as f64;
            w = cc.on_ack(&ctx(t, rtt_s), w, 1.0);
        }
        w
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retained_is_multiplicative_for_whole_and_linear_for_fractional_reductions() {
        assert_eq!(retained(0.5, 1.0), 0.5);
        assert_eq!(retained(0.5, 2.0), 0.25);
        // Misra's dW = −W/2·λ·dt with λ·dt = 0.1 keeps 0.95 of the window.
        assert!((retained(0.5, 0.1) - 0.95).abs() < 1e-15);
        assert!((retained(0.5, 2.5) - 0.25 * 0.75).abs() < 1e-15);
    }

    #[test]
    fn names_resolve_loosely_and_unknowns_are_named() {
        assert_eq!(find("HighSpeed").unwrap().name, "highspeed");
        assert_eq!(find("h-tcp").unwrap().name, "htcp");
        let err = build("vegas", &BTreeMap::new(), "flows[0].cc").unwrap_err();
        assert!(err
            .to_string()
            .starts_with("flows[0].cc.variant: unknown variant"));
    }

    #[test]
    fn unknown_and_out_of_range_parameters_are_named() {
        let mut p = BTreeMap::new();
        p.insert("gamma".to_string(), Value::from(0.5));
        let err = build("cubic", &p, "flows[2].cc").unwrap_err();
        assert!(
            err.to_string()
                .starts_with("flows[2].cc.gamma: unknown parameter"),
            "{err}"
        );
        let mut p = BTreeMap::new();
        p.insert("beta".to_string(), Value::from(1.5));
        let err = build("cubic", &p, "flows[2].cc").unwrap_err();
        assert!(
            err.to_string()
                .starts_with("flows[2].cc.beta: 1.5 is out of range"),
            "{err}"
        );
    }
}
