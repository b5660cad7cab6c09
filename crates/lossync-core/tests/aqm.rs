//! Active queue management and ECN in the packet engine against numbers from outside the code:
//! CoDel holds its 5 ms target (RFC 8289 §4.3), DCTCP fills the link once its marking threshold
//! K reaches C·RTT/7 and keeps the queue near K (Alizadeh et al., SIGCOMM 2010, §3.3), classic
//! ECN replaces drops by marks (RFC 3168), and the fluid engine refuses what it has no law for,
//! by name. (PIE, FQ-CoDel and DualPI2 have files of their own; the fluid engine's AQM laws
//! are checked in aqm_fluid.rs.)

mod common;

use common::{run, scenario_error};

/// 10 flows of `cc` (slow start on) over a dumbbell with `queue`, in the packet engine.
fn dumbbell(
    capacity: &str,
    buffer: u32,
    queue: &str,
    cc: &str,
    rtt: &str,
    run_s: (u32, u32),
) -> String {
    common::aqm_dumbbell("packet", capacity, buffer, queue, cc, rtt, 0.0, run_s)
}

#[test]
fn codel_holds_the_standing_sojourn_time_at_its_target() {
    // 10 long Reno flows, RTTs 20–100 ms, a buffer far above what CoDel lets stand: the mean
    // sojourn time is CoDel's 5 ms target within 2 ms, at 100 Mb/s and at 1 Gb/s, with the link
    // full. (Drop-tail with the same buffer would hold a queue of hundreds of milliseconds.)
    for (capacity, buffer) in [("100Mbps", 2000), ("1Gbps", 20000)] {
        let r = run(&dumbbell(
            capacity,
            buffer,
            r#"{ discipline = "codel" }"#,
            r#"cc = "reno""#,
            "20ms..100ms",
            (60, 10),
        ));
        let l = &r.summary.links[0];
        assert!(
            (l.sojourn_mean_s - 0.005).abs() <= 0.002,
            "{capacity}: mean sojourn {} s",
            l.sojourn_mean_s
        );
        assert!(
            r.summary.utilization > 0.98,
            "{capacity}: {}",
            r.summary.utilization
        );
        assert!(
            l.early_drop_rate > 0.0 && l.overflow_drop_rate == 0.0,
            "{l:?}"
        );
    }
}

#[test]
fn classic_ecn_behind_codel_marks_instead_of_dropping() {
    let r = run(&dumbbell(
        "100Mbps",
        2000,
        r#"{ discipline = "codel", ecn = true }"#,
        "cc = \"reno\"\necn = true",
        "20ms..100ms",
        (60, 10),
    ));
    let l = &r.summary.links[0];
    assert!(l.mark_rate > 0.0, "{l:?}");
    assert_eq!(l.drops_pkts, 0.0, "every AQM signal is a mark");
    // ns-3 3.44's CoDelQueueDisc with UseEcn on this very scenario: 6.61 ms mean sojourn
    // (docs/validation.md §5, scripts/aqm_grid.py's extra cells); within 20%.
    assert!(
        (l.sojourn_mean_s / 0.00661 - 1.0).abs() <= 0.2,
        "{}",
        l.sojourn_mean_s
    );
    assert!(r.summary.utilization > 0.97);
    // A mark reduces the window once per RTT, as a loss would: flows do back off.
    assert!(r
        .summary
        .flows
        .iter()
        .all(|f| f.reductions > 0.0 && f.mark_rate > 0.0));
    assert!(r.summary.warnings.is_empty(), "{:?}", r.summary.warnings);
}

#[test]
fn packets_a_queue_marks_at_enqueue_stay_classic_in_its_sojourn_times() {
    // RED marks classic ECT(0) packets CE as they arrive. The L4S sojourn (ECT(1) or CE on
    // arrival, RFC 9331 §5.1) read the codepoint after that mark, and reported 3.3 ms of L4S
    // sojourn where no flow sends ECT(1).
    let r = run(&dumbbell(
        "100Mbps",
        200,
        r#"{ discipline = "red", min_th = 20, max_th = 60, ecn = true }"#,
        "cc = \"reno\"\necn = true",
        "20ms..100ms",
        (20, 5),
    ));
    let l = &r.summary.links[0];
    assert!(l.mark_rate > 0.0 && l.sojourn_mean_s > 0.0, "{l:?}");
    assert!(l.sojourn_l4s_mean_s.is_nan(), "{l:?}");
}

#[test]
fn a_step_threshold_at_the_whole_buffer_says_it_never_marks() {
    // K = the buffer: no packet can queue above it, so the link only overflows (mark rate 0),
    // and until 2026-11-28 nothing said so.
    let warned = |k: u32| {
        let r = run(&dumbbell(
            "1Gbps",
            50,
            &format!("{{ discipline = \"step\", threshold = {k} }}"),
            r#"cc = "dctcp""#,
            "1ms",
            (2, 1),
        ));
        let l = &r.summary.links[0];
        let said = (r.summary.warnings.iter()).any(|w| w.starts_with("links[0].queue.threshold"));
        (said, l.mark_rate)
    };
    let (said, marks) = warned(50);
    assert!(said && marks == 0.0, "{said} {marks}");
    let (said, marks) = warned(20);
    assert!(!said && marks > 0.0, "{said} {marks}");
}

#[test]
fn dctcp_fills_the_link_once_k_reaches_a_seventh_of_the_bdp() {
    // 1 Gb/s, RTT 1 ms: C·RTT = 83.3 packets, C·RTT/7 = 11.9. 10 DCTCP flows behind step
    // marking at K: the paper's U ≥ 0.99 holds from K = 14; the queue stays near K. At the
    // rule's own K = 12 it misses by 0.1 point (U 0.989, seeds and one packet time of send
    // jitter 0.988): there the synchronized sawtooth of the paper's §3.3 bottoms out at
    // Q_min = K + N − ½·√(2N(C·RTT + K)) = 0.17 packets, so a window a packet off the fluid
    // law's empties the queue. ns-3 3.44's TcpDctcp on the same scenario gives U 0.964 at
    // K = 12, 0.977 at 16, 0.988 at 20. That miss is reported (docs/queues.md), not asserted
    // away with a lower floor.
    let at = |k: u32| {
        let q = format!(r#"{{ discipline = "step", threshold = {k} }}"#);
        run(&dumbbell(
            "1Gbps",
            500,
            &q,
            r#"cc = "dctcp""#,
            "1ms",
            (5, 1),
        ))
        .summary
    };
    for k in [12, 14, 20, 40] {
        let s = at(k);
        if k >= 14 {
            assert!(s.utilization >= 0.99, "K = {k}: U = {}", s.utilization);
        }
        assert!(s.loss_rate == 0.0 && s.links[0].mark_rate > 0.0);
        let q = s.mean_queue_pkts;
        assert!(
            q > 0.5 * k as f64 && q < 1.2 * k as f64,
            "K = {k}: mean queue {q}"
        );
    }
    // Below the rule the queue underflows (Q_min < 0: −9.5 packets at K = 1, −7.8 at K = 3):
    // U falls short of 0.96 at a quarter of C·RTT/7 and of 0.95 at one packet.
    let (quarter, one) = (at(3), at(1));
    assert!(
        quarter.utilization < 0.96,
        "K = 3: U = {}",
        quarter.utilization
    );
    assert!(one.utilization < 0.95, "K = 1: U = {}", one.utilization);
}

#[test]
fn the_fluid_engine_refuses_what_it_has_no_law_for_by_name() {
    let fluid = |q: &str, cc: &str| {
        let text = dumbbell("100Mbps", 200, q, cc, "50ms", (10, 1))
            .replace("engine = \"packet\"", "engine = \"fluid\"");
        let sc = lossync_core::scenario::from_toml(&text, std::path::Path::new(".")).unwrap();
        lossync_core::run(&sc).unwrap_err().to_string()
    };
    let err = fluid(r#"{ discipline = "codel" }"#, r#"cc = "reno""#);
    assert!(
        err.starts_with("links[0].queue: the fluid engine has no \"codel\" queue")
            && err.contains("runs in the packet engine only"),
        "{err}"
    );
    // CoDel's relative has no fluid law either.
    let err = fluid(r#"{ discipline = "fq_codel" }"#, r#"cc = "reno""#);
    assert!(
        err.starts_with("links[0].queue: the fluid engine has no \"fq_codel\" queue"),
        "{err}"
    );
    // DualPI2's two queues, and ECN, have a fluid form under the `tcp` loss model only.
    let proportional = |queue: &str, flows: &str| {
        let text = dumbbell("100Mbps", 200, queue, flows, "50ms", (10, 1))
            .replace("engine = \"packet\"", "engine = \"fluid\"")
            .replace("[run]", "[loss]\nmodel = \"proportional\"\n[run]");
        let sc = lossync_core::scenario::from_toml(&text, std::path::Path::new(".")).unwrap();
        lossync_core::run(&sc).unwrap_err().to_string()
    };
    let err = proportional(r#"{ discipline = "dualpi2" }"#, r#"cc = "reno""#);
    assert!(
        err.starts_with(
            "links[0].queue: dualpi2's two queues have a fluid form under loss.model = \"tcp\""
        ),
        "{err}"
    );
    let err = proportional(
        r#"{ discipline = "red", min_th = 20, max_th = 80, ecn = true }"#,
        "cc = \"reno\"\necn = true",
    );
    assert!(
        err.starts_with("flows[0].ecn: ECN has a fluid form under loss.model = \"tcp\""),
        "{err}"
    );
}

#[test]
fn ecn_is_refused_where_it_cannot_work() {
    let err = scenario_error(&dumbbell(
        "100Mbps",
        200,
        r#"{ discipline = "droptail" }"#,
        "cc = \"bbr\"\necn = true",
        "50ms",
        (10, 1),
    ));
    assert!(
        err.starts_with("flows[0].ecn: bbr does not use ECN"),
        "{err}"
    );
    let err = scenario_error(&dumbbell(
        "100Mbps",
        200,
        r#"{ discipline = "droptail", ecn = true }"#,
        r#"cc = "reno""#,
        "50ms",
        (10, 1),
    ));
    assert!(
        err.starts_with("dumbbell.queue.ecn: unknown parameter (this discipline takes none)"),
        "{err}"
    );
    let err = scenario_error(&dumbbell(
        "100Mbps",
        200,
        r#"{ discipline = "codel", target = "200ms" }"#,
        r#"cc = "reno""#,
        "50ms",
        (10, 1),
    ));
    assert!(
        err.starts_with("dumbbell.queue.target: must be below the interval"),
        "{err}"
    );
    let err = scenario_error(&dumbbell(
        "100Mbps",
        200,
        r#"{ discipline = "step", threshold = 500 }"#,
        r#"cc = "dctcp""#,
        "50ms",
        (10, 1),
    ));
    assert!(
        err.starts_with("dumbbell.queue.threshold: must not exceed the buffer"),
        "{err}"
    );
}

#[test]
fn prague_behind_a_classic_queue_runs_as_classic_ecn_and_says_so() {
    // RFC 9331 §4.3: an L4S sender behind a queue that is not L4S-aware falls back to classic
    // ECN. Behind CoDel with ECN it halves per marked window, and the run warns; behind step
    // marking (L4S-aware) it keeps DCTCP's α/2 and does not warn.
    let prague = |q: &str| {
        let text = dumbbell("100Mbps", 500, q, r#"cc = "prague""#, "20ms", (30, 10));
        run(&text).summary
    };
    let classic = prague(r#"{ discipline = "codel", ecn = true }"#);
    assert!(
        classic
            .warnings
            .iter()
            .any(|w| w
                .starts_with("flows[0].ecn: prague sends ECT(1) but crosses no L4S-aware queue")),
        "{:?}",
        classic.warnings
    );
    assert!(classic.links[0].mark_rate > 0.0 && classic.loss_rate == 0.0);
    let l4s = prague(r#"{ discipline = "step", threshold = 20 }"#);
    assert!(l4s.warnings.is_empty(), "{:?}", l4s.warnings);
    // Scalable marking: many more marks than the classic fall-back sees, and a full link.
    assert!(l4s.links[0].mark_rate > 10.0 * classic.links[0].mark_rate);
    assert!(l4s.utilization > 0.99, "{}", l4s.utilization);
}
