//! Congestion-control laws: one file per variant, one trait, one registry.
//!
//! A law is written once, per acknowledged packet and per loss event, and serves both engines:
//! the packet engine calls [`CongestionControl::on_ack`] with `acked = 1` for every ACK, the fluid
//! engine calls it every step with the fluid ACK count `acked = W/R·Δ`. A per-ACK increment of
//! `a(W)/W` per packet thus becomes `dW/dt = a(W)/R` in the fluid engine (docs/model.md §3,
//! "fluid translation rule"). Slow start is written once for both engines ([`slow_start`]); a law
//! only sees congestion avoidance.
//!
//! Per-flow state (CUBIC's `W_max` and epoch, H-TCP's time since the last congestion, BIC's
//! `W_max`) changes only in `on_loss`, which the engines call only for the flow's own losses: a flow
//! the drop policy skips does not learn of a congestion event (docs/model.md §2.3).
//!
//! A variant's parameters are typed: each file declares a parameter struct implementing
//! [`LawParams`] (its name, its description, how each parameter is read with its default and
//! range, and how the law is built from them). A scenario resolves them once, with every default
//! filled in, into [`CcParams`]; engines build laws from that.
//!
//! Adding a variant: write `cc/name.rs` with its law and its `LawParams` type, and add one line to
//! the `registry!` list below.

use crate::error::{Error, Result};
use serde::Serialize;
use serde_json::Value;
use std::collections::BTreeMap;

pub mod bbr;
pub mod bbr3;
pub mod bic;
pub mod cubic;
pub mod dctcp;
pub mod ghstcp;
pub mod highspeed;
pub mod htcp;
pub mod prague;
pub mod reno;
pub mod scalable;
pub mod slow_start;
pub mod xcp;

pub use crate::params::Params;
pub use slow_start::{initial_ssthresh, on_ack as grow_window};

/// Random stream `LAW_STREAM + connection` (the packet engine adds `arrival << 32` for a dynamic
/// slot's later flows): each connection's law draws from its own (BBR's first gain phase), the
/// same in both engines.
pub const LAW_STREAM: u64 = 8_000_000;

/// TCP's largest window: a 16-bit window field scaled by at most 2^14 (RFC 7323 §2.2–2.3),
/// 65,535 · 2^14 bytes, about 2^30. Receive windows and initial windows are bounded by it.
pub const MAX_WINDOW_BYTES: f64 = 65_535.0 * 16_384.0;

/// The largest window in packets a law's parameter may name (a threshold, an increase per RTT):
/// [`MAX_WINDOW_BYTES`] in the smallest packets a scenario allows, 40 bytes of IPv4 and TCP
/// headers (RFC 791, RFC 9293). A law knows no packet size, so its bounds use this one.
pub const MAX_WINDOW_PKTS: f64 = MAX_WINDOW_BYTES / 40.0;

/// The registry: every variant a scenario can name, one line each (its [`CcParams`] case and its
/// parameter type), in the order `lossync variants` lists them.
macro_rules! registry {
    ($($case:ident($ty:ty)),* $(,)?) => {
        /// A flow's congestion-control variant with its parameters, typed, every default filled in.
        /// Serializes as `{ "variant": name, "params": { every parameter } }`.
        #[derive(Debug, Clone, PartialEq)]
        pub enum CcParams {
            $($case($ty)),*
        }

        /// Every variant a scenario can name.
        pub const VARIANTS: &[Variant] = &[
            $(Variant {
                name: <$ty as LawParams>::NAME,
                about: <$ty as LawParams>::ABOUT,
                ecn: <$ty as LawParams>::ECN,
                read: |p| Ok(CcParams::$case(<$ty as LawParams>::read(p)?)),
            }),*
        ];

        impl CcParams {
            /// The variant's name, as scenarios and summaries spell it.
            pub fn name(&self) -> &'static str {
                match self {
                    $(CcParams::$case(_) => <$ty as LawParams>::NAME),*
                }
            }

            /// How the law uses ECN.
            pub fn ecn(&self) -> EcnUse {
                match self {
                    $(CcParams::$case(_) => <$ty as LawParams>::ECN),*
                }
            }

            /// A law with these parameters, in its initial state.
            pub fn build(&self) -> Box<dyn CongestionControl> {
                match self {
                    $(CcParams::$case(p) => p.build()),*
                }
            }

            /// Every parameter by name, as a scenario writes them.
            pub fn values(&self) -> BTreeMap<String, Value> {
                match self {
                    $(CcParams::$case(p) => to_map(p)),*
                }
            }
        }
    };
}

registry! {
    Reno(reno::RenoParams),
    HighSpeed(highspeed::HighSpeedParams),
    Scalable(scalable::ScalableParams),
    Cubic(cubic::CubicParams),
    Htcp(htcp::HtcpParams),
    Bic(bic::BicParams),
    GHsTcp(ghstcp::GHsTcpParams),
    Xcp(xcp::XcpSenderParams),
    Bbr(bbr::BbrParams),
    Bbr3(bbr3::Bbr3Params),
    Dctcp(dctcp::DctcpParams),
    Prague(prague::PragueParams),
}

/// A variant's parameters: each file declares one type with every parameter of its law.
pub trait LawParams: Clone + PartialEq + std::fmt::Debug + Serialize + Send + Sync {
    /// The name scenarios use.
    const NAME: &'static str;
    /// One line for `lossync variants`.
    const ABOUT: &'static str;
    /// How it uses ECN: a classic law reacts to an ECN echo as to a loss (RFC 3168 §6.1.2);
    /// most laws can, none must.
    const ECN: EcnUse = EcnUse::Classic;
    /// Reads the parameters a scenario gives: a missing one takes its default, a given one is
    /// checked against its range; `p` names the field in errors and rejects unknown names.
    fn read(p: &mut Params) -> Result<Self>;
    /// A law with these parameters, in its initial state.
    fn build(&self) -> Box<dyn CongestionControl>;
}

fn to_map<T: Serialize>(params: &T) -> BTreeMap<String, Value> {
    match serde_json::to_value(params) {
        Ok(Value::Object(m)) => m.into_iter().collect(),
        other => unreachable!("parameters serialize as a table, got {other:?}"),
    }
}

/// Reads `{ "variant": name, "params": { ... } }` (the resolved JSON form), checking the
/// parameters as a scenario's; any other key is an error.
impl<'de> serde::Deserialize<'de> for CcParams {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        use serde::de::{self, MapAccess, Visitor};
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = CcParams;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("`variant` and `params`")
            }
            fn visit_map<A: MapAccess<'de>>(
                self,
                mut m: A,
            ) -> std::result::Result<CcParams, A::Error> {
                let (mut variant, mut params) = (None::<String>, None);
                while let Some(k) = m.next_key::<String>()? {
                    match k.as_str() {
                        "variant" => variant = Some(m.next_value()?),
                        "params" => params = Some(m.next_value::<BTreeMap<String, Value>>()?),
                        other => {
                            return Err(crate::error::field_err(
                                other,
                                "unknown field, expected `variant` or `params`",
                            ))
                        }
                    }
                }
                let variant = variant.ok_or_else(|| de::Error::missing_field("variant"))?;
                // Errors name the JSON's fields: `params.beta`, `variant`.
                read(&variant, &params.unwrap_or_default(), "params").map_err(|e| match e {
                    Error::Scenario { field, reason } => {
                        let field = if field == "params.variant" {
                            "variant"
                        } else {
                            &field
                        };
                        crate::error::field_err(field, reason)
                    }
                    other => de::Error::custom(other),
                })
            }
        }
        d.deserialize_map(V)
    }
}

impl Serialize for CcParams {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut m = s.serialize_map(Some(2))?;
        m.serialize_entry("variant", self.name())?;
        m.serialize_entry("params", &self.values())?;
        m.end()
    }
}

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

    /// An ECN echo reaches this flow (at most once per window of data, RFC 3168 §6.1.2): the
    /// window to continue with, which is also the new ssthresh. A classic law reduces as for a
    /// loss; a scalable law by its own measure of the marking (DCTCP's α/2).
    fn on_ecn(&mut self, ctx: &CcContext, cwnd: f64) -> f64 {
        self.on_loss(ctx, cwnd, 1.0)
    }

    /// Scalable laws: an ACK newly delivered `delivered` packets, `marked` of them CE-marked
    /// (RFC 8257 §3.3's counts), with the window `cwnd` now.
    fn on_ce_counts(&mut self, _ctx: &CcContext, _cwnd: f64, _delivered: f64, _marked: f64) {}

    /// Whether the engine's slow start applies below ssthresh (false for laws that set the
    /// window themselves, like XCP's, which would otherwise slow-start whenever feedback takes
    /// the window under the ssthresh of its last loss).
    fn slow_starts(&self) -> bool {
        true
    }

    /// Whether the window grows until a loss says stop (every law but the model-based and
    /// explicit-feedback ones): a run with such flows on its bottleneck that saw no congestion
    /// event measured a transient or an idle link, and its summary says so.
    fn grows_until_loss(&self) -> bool {
        true
    }

    /// Whether the law is model-based: it wants a [`RateSample`] on every ACK and sets the
    /// window itself there ([`CongestionControl::on_rate_sample`]), in recovery too; the engine's
    /// slow start and congestion-avoidance growth (`on_ack`) do not apply to it. Only the packet
    /// engine has rate samples (the fluid engine refuses such a law).
    fn wants_rate_samples(&self) -> bool {
        false
    }

    /// The packet engine's per-ACK delivery-rate sample, for laws that
    /// [want them](CongestionControl::wants_rate_samples). Returns the new congestion window.
    fn on_rate_sample(&mut self, _ctx: &CcContext, _rs: &RateSample, cwnd: f64) -> f64 {
        cwnd
    }

    /// The rate the law paces its packets at, in packets per second: `Some` overrides the flow's
    /// ratio pacing (`pacing` in the scenario); `None` (the default) leaves it as configured.
    fn pacing_rate_pps(&self) -> Option<f64> {
        None
    }

    /// Packets the law's pacing releases back to back at each pacing step (one TSO/GSO send; see
    /// [`tso_autosize_pkts`]): 1 (the default) paces packet by packet.
    fn send_quantum_pkts(&self) -> u32 {
        1
    }

    /// Whether the law asks the sender to mark the data in flight as application-limited (BBR in
    /// probe-RTT, tcp_bbr.c `bbr_update_min_rtt`): rate samples of it are then flagged.
    fn marks_app_limited(&self) -> bool {
        false
    }

    /// Gives the law its own random stream (derived from the run's seed and the connection), for
    /// laws that draw (BBR's first gain-cycle phase); others ignore it.
    fn seed(&mut self, _rng: crate::rng::Rng) {}

    /// The law as `Any`, for tests and reports that read a law's own state (BBR's estimates);
    /// `None` for laws with nothing to show.
    fn as_any(&self) -> Option<&dyn std::any::Any> {
        None
    }
}

/// The packets of one TSO/GSO send of a paced Linux flow (tcp_output.c `tcp_tso_autosize`,
/// Linux 5.18 and later; BBR v1 supplies its minimum through `min_tso_segs`, BBRv3's
/// `bbr_tso_segs` computes the same sum): the data of 1/1024 s at the pacing rate
/// (`sk_pacing_shift` 10), plus 64 KB >> (min RTT in µs >> 9) on short paths (`tcp_tso_rtt_log`
/// 9: 32 KB at 1 ms, nothing from about 16 ms up), at most one 64 KB GSO packet
/// (`GSO_LEGACY_MAX_SIZE`, 43 packets of 1500 bytes; a law knows no packet size, and 1500 is
/// Ethernet's MTU), at least 2 packets, or 1 below 1.2 Mb/s (tcp_bbr.c `bbr_min_tso_segs`).
/// Linux paces each send as a whole (EDT, Linux 4.20 and later: the next may leave `size / rate`
/// after it), so such a flow's packets reach the line in bursts of this many, not one by one.
pub fn tso_autosize_pkts(pacing_rate_pps: f64, min_rtt_s: f64) -> u32 {
    const GSO_PKTS: f64 = 65_536.0 / 1500.0;
    let min = if pacing_rate_pps < 100.0 { 1.0 } else { 2.0 };
    let mut pkts = pacing_rate_pps / 1024.0;
    if min_rtt_s.is_finite() {
        let shift = (min_rtt_s * 1e6) as u64 >> 9;
        if shift < 32 {
            pkts += GSO_PKTS / (1u64 << shift) as f64;
        }
    }
    pkts.min(GSO_PKTS).floor().max(min) as u32
}

/// Where the sender is in loss recovery when a [`RateSample`] is taken (Linux's
/// `icsk_ca_state`, reduced to what a model-based law reads).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum RecoveryState {
    #[default]
    Open,
    /// SACK fast recovery (`TCP_CA_Recovery`).
    Fast,
    /// Retransmission after a timeout (`TCP_CA_Loss`).
    Timeout,
}

/// One ACK's delivery-rate sample (draft-cheng-iccrg-delivery-rate-estimation §3.3; Linux's
/// `struct rate_sample`). Packets, seconds.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct RateSample {
    /// Packets delivered over `interval_s` (0 with `interval_s` 0: no valid sample this ACK).
    pub delivered_pkts: f64,
    /// The sample's interval: the larger of its send and ACK phases (draft §3.3); 0 if invalid.
    pub interval_s: f64,
    /// The RTT sample of this ACK.
    pub rtt_s: f64,
    /// Whether the sampled packet was sent while the sender was application-limited.
    pub is_app_limited: bool,
    /// Packets delivered (SACKed or cumulatively ACKed for the first time) by this ACK.
    pub acked_pkts: f64,
    /// Packets newly presumed lost at this ACK.
    pub lost_pkts: f64,
    /// Packets in flight when the sampled packet was sent, it included (draft-ietf-ccwg-bbr §2.3
    /// `RS.tx_in_flight`).
    pub tx_in_flight_pkts: f64,
    /// Packets declared lost between the sampled packet's sending and this ACK (`RS.lost`).
    pub lost_since_sent_pkts: f64,
    /// Packets in flight (RFC 6675 `pipe`) before this ACK, and after it.
    pub prior_inflight_pkts: f64,
    pub inflight_pkts: f64,
    /// The flow's delivered count when the sampled packet was sent, and now (round counting).
    pub prior_delivered: u64,
    pub delivered: u64,
    pub recovery: RecoveryState,
}

/// The fraction of the window kept after `reductions` decreases that each keep `gamma`. Whole
/// reductions multiply (`gamma^k`); a fractional part `f` keeps `1 − (1 − gamma)·f`, the linear
/// decrease `dW = −b·W·λ·dt` of the fluid model (docs/model.md §1.2 eq. 1), so the continuous-loss
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

/// How a law uses Explicit Congestion Notification.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EcnUse {
    /// It cannot: its flows are never ECN-capable (model-based and explicit-feedback laws).
    Incapable,
    /// RFC 3168: ECT(0) when the flow group sets `ecn`; an ECN echo is a congestion event, one
    /// window reduction per RTT ([`CongestionControl::on_ecn`]).
    Classic,
    /// A scalable law that counts every CE mark (DCTCP, RFC 8257; Prague): ECN is its signal, on
    /// by default; `l4s` sends ECT(1) (RFC 9331 §4), otherwise ECT(0).
    Scalable { l4s: bool },
}

/// A registry entry: the name scenarios use, a one-line description, and the reader of the
/// variant's parameters.
pub struct Variant {
    pub name: &'static str,
    pub about: &'static str,
    pub ecn: EcnUse,
    pub read: fn(&mut Params) -> Result<CcParams>,
}

/// Looks a variant up by name (case-insensitive; `-` and `_` ignored, so `HighSpeed`, `high-speed`
/// and `highspeed` are the same).
pub fn find(name: &str) -> Option<&'static Variant> {
    let key = |s: &str| s.to_ascii_lowercase().replace(['-', '_'], "");
    VARIANTS.iter().find(|v| key(v.name) == key(name))
}

/// Reads a variant's parameters as a scenario gives them, every default filled in; `field`
/// prefixes error messages (`flows[0].cc.beta: 1.5 is out of range: must be in (0, 1)`).
pub fn read(name: &str, params: &BTreeMap<String, Value>, field: &str) -> Result<CcParams> {
    let variant = find(name).ok_or_else(|| {
        let known: Vec<&str> = VARIANTS.iter().map(|v| v.name).collect();
        Error::field(
            format!("{field}.variant"),
            format!("unknown variant {name:?} (known: {})", known.join(", ")),
        )
    })?;
    let mut p = Params::new(params, field);
    let cc = (variant.read)(&mut p)?;
    p.finish()?;
    Ok(cc)
}

/// A variant's default parameters (`None`: no such variant).
pub fn defaults(name: &str) -> Option<CcParams> {
    find(name)?;
    read(name, &BTreeMap::new(), "cc").ok()
}

/// Builds a law from its variant name and parameters; `field` prefixes error messages.
pub fn build(
    name: &str,
    params: &BTreeMap<String, Value>,
    field: &str,
) -> Result<Box<dyn CongestionControl>> {
    Ok(read(name, params, field)?.build())
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

    /// tcp_tso_autosize by hand, in bytes as Linux counts them (1500-byte packets):
    /// - 100 Mb/s is 12,500,000 B/s, >> 10 = 12,207 B = 8 packets; at 40 ms (40,000 µs >> 9 =
    ///   78 ≥ 32) nothing is added, at 10 ms (19) 65,536 >> 19 = 0 B, at 100 µs (0) 64 KB,
    ///   which reaches the cap;
    /// - 1 Gb/s at 1 ms: 122,070 B + 32 KB, capped at 64 KB = 43 packets;
    /// - 1 Mb/s (below 1.2 Mb/s): 1 packet; 2 Mb/s: 244 B, raised to 2 packets.
    #[test]
    fn sends_are_sized_as_linux_autosizes_tso() {
        let pps = |bps: f64| bps / 12_000.0;
        assert_eq!(tso_autosize_pkts(pps(1e8), 0.04), 8);
        assert_eq!(tso_autosize_pkts(pps(1e9), 1e-3), 43);
        assert_eq!(tso_autosize_pkts(pps(1e8), 0.01), 8);
        assert_eq!(tso_autosize_pkts(pps(1e8), 1e-4), 43);
        assert_eq!(tso_autosize_pkts(pps(1e6), 0.04), 1);
        assert_eq!(tso_autosize_pkts(pps(2e6), 0.04), 2);
        // 10 Mb/s at 2 ms (3): 1,220 B + 8,192 B = 9,412 B = 6 packets of 1500 bytes.
        assert_eq!(tso_autosize_pkts(pps(1e7), 2e-3), 6);
        // Before any RTT sample: the rate alone.
        assert_eq!(tso_autosize_pkts(pps(1e8), f64::INFINITY), 8);
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
    fn parameters_resolve_typed_with_every_default() {
        let cc = read(
            "CUBIC",
            &BTreeMap::from([("beta".into(), Value::from(0.8))]),
            "cc",
        )
        .unwrap();
        assert_eq!(
            cc,
            CcParams::Cubic(cubic::CubicParams {
                c: 0.4,
                beta: 0.8,
                fast_convergence: true,
                reno_friendly: true,
                alpha_switch: true,
            })
        );
        assert_eq!(cc.name(), "cubic");
        assert_eq!(
            serde_json::to_string(&cc).unwrap(),
            r#"{"variant":"cubic","params":{"alpha_switch":true,"beta":0.8,"c":0.4,"fast_convergence":true,"reno_friendly":true}}"#
        );
        // Every variant's defaults read back as themselves.
        for v in VARIANTS {
            let d = defaults(v.name).unwrap();
            assert_eq!(d.name(), v.name);
            assert_eq!(read(v.name, &d.values(), "cc").unwrap(), d);
        }
        assert_eq!(defaults("vegas"), None);
        assert_eq!(
            defaults("bic").unwrap().values()["s_max"],
            Value::from(16.0)
        );
    }

    #[test]
    fn a_former_parameter_name_is_still_read() {
        let former = BTreeMap::from([("max_increment".into(), Value::from(32.0))]);
        let CcParams::Bic(p) = read("bic", &former, "cc").unwrap() else {
            panic!("not bic")
        };
        assert_eq!(p.s_max, 32.0);
        let both = BTreeMap::from([
            ("max_increment".into(), Value::from(32.0)),
            ("s_max".into(), Value::from(8.0)),
        ]);
        let err = read("bic", &both, "flows[1].cc").unwrap_err().to_string();
        assert!(err.starts_with("flows[1].cc.max_increment: is the former name of s_max"));
        let err = read("bic", &BTreeMap::from([("x".into(), Value::from(1))]), "cc")
            .unwrap_err()
            .to_string();
        assert!(err.ends_with(
            "(this variant takes: search_divisor, s_max, low_window, beta, smooth_part, fast_convergence)"
        ), "{err}");
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
