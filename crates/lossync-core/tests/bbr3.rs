//! BBRv3 in the packet engine against draft-ietf-ccwg-bbr-06: the ProbeBW cycle's order and each
//! state's gains (§5.3.3, §5.6.1's table), ProbeRTT's period and window (§5.3.4), and the
//! draft's motivation (§1) on a shallow buffer shared with CUBIC: far fewer losses than BBR v1.

mod common;

use common::{packet_engine as engine, run};
use lossync_core::cc::bbr3::{Bbr3, State};
use lossync_core::metrics::Summary;
use lossync_core::PacketEngine;

/// 100 Mb/s in 1500-byte packets, and the BDP at 40 ms.
const C_PPS: f64 = 1e8 / 12_000.0;
const BDP: f64 = C_PPS * 0.04;

fn law(e: &PacketEngine, f: usize) -> &Bbr3 {
    e.sender(f)
        .law()
        .as_any()
        .and_then(|a| a.downcast_ref::<Bbr3>())
        .expect("a BBRv3 flow")
}

/// Groups of `(variant, count)` at 40 ms on a 100 Mb/s dumbbell with a buffer of `buffer_bdp`.
fn dumbbell(groups: &[(&str, usize)], buffer_bdp: f64, duration_s: f64, extra: &str) -> String {
    let flows: String = groups
        .iter()
        .map(|(cc, n)| format!("[[flows]]\ncc = \"{cc}\"\ncount = {n}\nrtt = \"40ms\"\n{extra}\n"))
        .collect();
    format!(
        "engine = \"packet\"\n[dumbbell]\ncapacity = \"100Mbps\"\nbuffer = {{ bdp_fraction = \
         {buffer_bdp} }}\n{flows}[run]\nduration = \"{duration_s}s\"\nwarmup = \"10s\"\n"
    )
}

/// A variant's share of the throughput.
fn share(s: &Summary, variant: &str) -> f64 {
    let total: f64 = s.flows.iter().map(|f| f.throughput_pps).sum();
    let of: f64 = s
        .flows
        .iter()
        .filter(|f| f.variant == variant)
        .map(|f| f.throughput_pps)
        .sum();
    of / total
}

/// The draft's table (§5.6.1): each state's pacing and window gains.
fn table(s: State) -> (f64, f64) {
    match s {
        State::Startup => (4.0 * std::f64::consts::LN_2, 2.0),
        State::Drain => (0.5, 2.0),
        State::ProbeBwDown => (0.9, 2.0),
        State::ProbeBwCruise | State::ProbeBwRefill => (1.0, 2.0),
        State::ProbeBwUp => (1.25, 2.25),
        State::ProbeRtt => (1.0, 0.5),
    }
}

/// One flow with a host's send jitter (one packet time, as the BBR v1 tests: RTT samples vary
/// as a real host's do). Sampled every millisecond for 31 s:
/// - the states come in the draft's order: Startup, Drain, then ProbeBW cycles of DOWN, CRUISE
///   (or straight on when it is time to probe), REFILL, UP and DOWN again; ProbeRTT interrupts
///   and returns through DOWN to CRUISE (§5.3.4.4);
/// - in every state after Startup the pacing rate is the table's gain × bw × 0.99 (§5.6.2);
/// - ProbeRTT starts 5 s after the last refresh of the min RTT (§5.3.4.4: a sample at or below
///   it refreshes it, so episodes are at least 5 s plus their 200 ms apart, more when the flow
///   saw its min RTT in between), and holds the window at half the BDP (§5.3.4.1), where v1
///   held 4 packets.
#[test]
fn the_states_cycle_in_the_drafts_order_with_its_gains() {
    let mut e = engine(&dumbbell(
        &[("bbr3", 1)],
        1.0,
        31.0,
        "send_jitter = \"120us\"",
    ));
    let (mut t, mut last, mut probe_rtt_starts) = (0.0, State::Startup, Vec::new());
    let mut probe_rtt_cwnd: f64 = 0.0;
    let mut gain_checks = 0;
    let (mut refreshed, mut since_refresh) = (f64::NAN, Vec::new());
    while t < 31.0 {
        t += 1e-3;
        e.advance(t);
        let b = law(&e, 0);
        let s = b.state();
        if s == State::ProbeRtt && last != State::ProbeRtt {
            probe_rtt_starts.push(t);
            since_refresh.push(t - refreshed);
        }
        refreshed = b.probe_rtt_min_stamp_s();
        last = s;
        if s != State::Startup && b.bw_pps() > 0.0 {
            use lossync_core::cc::CongestionControl;
            let gain = b.pacing_rate_pps().unwrap() / (b.bw_pps() * 0.99);
            assert!(
                (gain - table(s).0).abs() < 1e-9,
                "{s:?} at {t:.3} s: gain {gain}"
            );
            assert_eq!(b.gains(), table(s), "{s:?}");
            gain_checks += 1;
        }
        if s == State::ProbeRtt {
            probe_rtt_cwnd = probe_rtt_cwnd.max(e.sender(0).cwnd_pkts());
        }
    }
    // Every state entered, in order (sampling can miss one left on the ACK that entered it).
    let states = &law(&e, 0).history;
    println!("states: {states:?}\nProbeRTT at {probe_rtt_starts:?}, window in it {probe_rtt_cwnd}");
    assert!(states.len() < 64, "the law keeps the last 64");
    assert_eq!(
        &states[..3],
        &[State::Startup, State::Drain, State::ProbeBwDown]
    );
    let allowed = |a: State, b: State| {
        use State::*;
        matches!(
            (a, b),
            (ProbeBwDown, ProbeBwCruise)
                | (ProbeBwDown, ProbeBwRefill)
                | (ProbeBwCruise, ProbeBwRefill)
                | (ProbeBwRefill, ProbeBwUp)
                | (ProbeBwUp, ProbeBwDown)
                | (ProbeRtt, ProbeBwDown)
        ) || (b == ProbeRtt && a.is_probe_bw())
    };
    for w in states[2..].windows(2) {
        assert!(
            allowed(w[0], w[1]),
            "{:?} -> {:?} in {states:?}",
            w[0],
            w[1]
        );
    }
    let ups = states.iter().filter(|&&s| s == State::ProbeBwUp).count();
    assert!(ups >= 8, "{ups} bandwidth probes in 31 s: {states:?}");
    assert!(gain_checks > 25_000);
    // ProbeRTT: the first 5 s after the flow's first RTT sample, each 5 s after the last
    // refresh (within the millisecond sampled), so never less than 5.2 s apart.
    println!("seconds since the refresh at each ProbeRTT: {since_refresh:?}");
    assert!(probe_rtt_starts.len() >= 3, "{probe_rtt_starts:?}");
    assert!(
        (5.0..5.5).contains(&probe_rtt_starts[0]),
        "{probe_rtt_starts:?}"
    );
    for d in &since_refresh {
        assert!((5.0..5.0 + 2e-3).contains(d), "{since_refresh:?}");
    }
    for w in probe_rtt_starts.windows(2) {
        assert!(w[1] - w[0] >= 5.2, "{probe_rtt_starts:?}");
    }
    assert!(
        (probe_rtt_cwnd / (0.5 * BDP) - 1.0).abs() < 0.05,
        "ProbeRTT window {probe_rtt_cwnd} against half a BDP {}",
        0.5 * BDP
    );
}

/// The draft's motivation (§1: BBR v1 "can cause high loss" in shallow buffers; BBRv3's loss
/// bounds): 2 BBR and 2 CUBIC flows in a buffer of 10% of the BDP. BBR v1 keeps about 2 BDP in
/// flight whatever it loses, while BBRv3 caps its in-flight data at the volume where a round
/// lost more than 2%: its flows' loss rate is a small fraction of v1's, and CUBIC keeps a share.
#[test]
fn on_a_shallow_buffer_bbr3_loses_far_less_than_bbr_v1_against_cubic() {
    let mix = |bbr: &str| run(&dumbbell(&[(bbr, 2), ("cubic", 2)], 0.1, 60.0, "")).summary;
    let (v1, v3) = (mix("bbr"), mix("bbr3"));
    let loss = |s: &Summary, v: &str| {
        let f: Vec<_> = s.flows.iter().filter(|f| f.variant == v).collect();
        f.iter().map(|f| f.loss_rate).sum::<f64>() / f.len() as f64
    };
    let cubic_share = |s: &Summary| share(s, "cubic");
    println!(
        "10% BDP, 2 BBR + 2 CUBIC: link loss v1 {:.4} v3 {:.4}; BBR flows' loss v1 {:.4} v3 \
         {:.4}; CUBIC's share v1 {:.3} v3 {:.3}; U v1 {:.3} v3 {:.3}",
        v1.loss_rate,
        v3.loss_rate,
        loss(&v1, "bbr"),
        loss(&v3, "bbr3"),
        cubic_share(&v1),
        cubic_share(&v3),
        v1.utilization,
        v3.utilization
    );
    assert!(loss(&v3, "bbr3") < 0.1 * loss(&v1, "bbr"));
    assert!(v3.loss_rate < 0.1 * v1.loss_rate);
    assert!(cubic_share(&v1) < 0.05 && cubic_share(&v3) > 0.1);
    assert!(v3.utilization > 0.95);
}

/// The loss bound engages on that shallow buffer: each BBRv3 flow has set inflight_longterm
/// below 2 BDP (what v1 would keep in flight), from rounds that lost more than 2%.
#[test]
fn the_loss_bound_is_set_on_a_shallow_buffer() {
    let mut e = engine(&dumbbell(&[("bbr3", 2), ("cubic", 2)], 0.1, 30.0, ""));
    e.advance(30.0);
    for f in 0..2 {
        let b = law(&e, f);
        println!(
            "flow {f}: inflight_longterm {:.1} ({} cuts), BDP {BDP:.1}",
            b.inflight_longterm(),
            b.longterm_cuts
        );
        assert!(b.longterm_cuts > 0 && b.inflight_longterm() < 2.0 * BDP);
    }
}

/// The fluid engine runs the same law on its ACK clock (docs/fluid.md, "BBR"): on the shallow
/// mix above its utilization and BBRv3's share are those of the packet engine with one packet
/// time of send jitter (the fluid engine's packet reference) within 3 points and 0.05, and its
/// summary says that its bbr3 is checked on a few cells only.
#[test]
fn the_fluid_engine_follows_the_packet_engine_on_the_shallow_mix() {
    let text = dumbbell(
        &[("bbr3", 2), ("cubic", 2)],
        0.1,
        60.0,
        "send_jitter = \"120us\"",
    );
    let p = run(&text).summary;
    let f = run(&text.replace("engine = \"packet\"", "engine = \"fluid\"")).summary;
    let share = |s: &Summary| share(s, "bbr3");
    println!(
        "fluid U {:.3} share {:.3}; packet U {:.3} share {:.3}",
        f.utilization,
        share(&f),
        p.utilization,
        share(&p)
    );
    assert!((f.utilization - p.utilization).abs() < 0.03);
    assert!((share(&f) - share(&p)).abs() < 0.05);
    assert!(f
        .warnings
        .iter()
        .any(|w| w.starts_with("flows[0].cc: bbr3's fluid form")));
    assert!(!p.warnings.iter().any(|w| w.contains("bbr3")));
}
