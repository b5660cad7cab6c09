//! The recovery pause of the fluid engine's rate models (`loss.recovery_pause`, docs/fluid.md):
//! a sender that cuts its window from W to W' is silent for (1 − W'/W)·RTT, until its data in
//! flight have fallen to W'. Checked against the closed forms of docs/model.md §4.2, which are
//! window models: the queue is W − P, so a synchronized cut drains it at once. And the packet
//! sender's recovery options, which the fluid engine does not model, said in a warning.

mod common;

use common::{assert_near, reno_closed_form, run};
use lossync_core::metrics::Summary;

/// The seed's Fig. 4: two Scalable flows, 1 Gb/s, RTT 120 ms, buffer 0.1 BDP, the second
/// starting 10 s after the first; measured after both flows' first congestion events (the
/// first comes at about 75 s without slow start).
fn fig4(sync: &str, recovery_pause: bool) -> Summary {
    run(&format!(
        "[dumbbell]\ncapacity = \"1Gbps\"\nbuffer = {{ bdp_fraction = 0.1 }}\n\
         [[flows]]\ncc = \"scalable\"\nrtt = \"120ms\"\nslow_start = false\n\
         [[flows]]\ncc = \"scalable\"\nrtt = \"120ms\"\nslow_start = false\nstart = \"10s\"\n\
         [loss]\nmodel = \"sync\"\nsync = {sync}\nrecovery_pause = {recovery_pause}\n\
         [run]\nduration = \"600s\"\nwarmup = \"150s\"\n"
    ))
    .summary
}

/// docs/model.md §4.2's MIMD closed form: U = (1 − g + ρ)/(ln(1/g) + ρ), g = 0.875·(1 + ρ).
fn mimd_closed_form(rho: f64) -> f64 {
    let g: f64 = 0.875 * (1.0 + rho);
    (1.0 - g + rho) / ((1.0 / g).ln() + rho)
}

#[test]
fn fig4_full_synchronization_drains_the_queue_as_the_closed_form_says() {
    let full = fig4("{ kind = \"all\" }", true);
    let want = mimd_closed_form(0.1);
    assert!(
        (want - 0.9948).abs() < 1e-4,
        "the closed form at ρ = 0.1: {want}"
    );
    assert!(
        full.congestion_events >= 20,
        "{} events",
        full.congestion_events
    );
    assert_eq!(full.sync_rate_mean, 1.0, "every flow loses in every event");
    assert_near(
        full.utilization,
        want,
        0.01,
        "full synchronization, ρ = 0.1: U",
    );
    assert!(
        full.utilization < 0.999,
        "the queue drains and the link idles: U = {}",
        full.utilization
    );
}

#[test]
fn fig4_one_flow_per_event_keeps_the_queue_and_the_link_busier_than_full_synchronization() {
    let full = fig4("{ kind = \"all\" }", true);
    let one = fig4("{ kind = \"fixed\", m = 1 }", true);
    // One flow's cut of 12.5% of its window takes about half as much from the aggregate: the
    // queue (0.1 BDP) absorbs it.
    assert!(
        one.utilization > full.utilization,
        "m = 1: U {} against full synchronization's {}",
        one.utilization,
        full.utilization
    );
    // Its queue never empties: the link is busy throughout (U = 1 to rounding), and holds more
    // on average than under full synchronization.
    assert!(one.utilization > 0.9999, "m = 1: U {}", one.utilization);
    assert!(
        one.mean_queue_pkts > full.mean_queue_pkts,
        "mean queue {} against {}",
        one.mean_queue_pkts,
        full.mean_queue_pkts
    );
}

/// `count` identical flows of `cc` with the pause, fully synchronized, at buffer ρ·BDP (100 Mb/s,
/// 100 ms), 4000 s measured after 400 s: the closed forms' setting (tests/fluid.rs).
fn synchronized_with_pause(cc: &str, count: usize, rho: f64) -> f64 {
    run(&format!(
        "[dumbbell]\ncapacity = \"100Mbps\"\nbuffer = {{ bdp_fraction = {rho} }}\n[[flows]]\ncount = {count}\n\
         cc = \"{cc}\"\nrtt = \"100ms\"\ninitial_window = {w0}\n[loss]\nmodel = \"sync\"\nsync = {{ kind = \"all\" }}\n\
         recovery_pause = true\n[run]\nduration = \"4000s\"\nwarmup = \"400s\"\n",
        w0 = 400 / count
    ))
    .summary
    .utilization
}

#[test]
fn the_pause_leaves_synchronized_reno_on_its_closed_form() {
    for rho in [0.0, 0.1, 0.5, 1.0] {
        let u = synchronized_with_pause("reno", 4, rho);
        assert_near(u, reno_closed_form(rho), 0.01, format_args!("ρ={rho}: U"));
    }
}

#[test]
fn scalable_with_the_pause_matches_the_mimd_closed_form_at_small_buffers() {
    // Without the pause the rate model's queue lags the window: U = 0.987 against 0.974 at
    // ρ = 0.05 (tests/fluid.rs, scalable_matches_the_mimd_closed_form).
    for rho in [0.0, 0.05, 0.1] {
        let u = synchronized_with_pause("scalable", 1, rho);
        assert_near(u, mimd_closed_form(rho), 0.01, format_args!("ρ={rho}: U"));
    }
}

#[test]
fn the_pause_is_the_sync_models_and_refused_elsewhere_naming_the_field() {
    for model in ["tcp", "proportional"] {
        let text = format!(
            "[dumbbell]\ncapacity = \"100Mbps\"\nbuffer = {{ packets = 50 }}\n[[flows]]\ncc = \"reno\"\nrtt = \"50ms\"\n\
             [loss]\nmodel = \"{model}\"\nrecovery_pause = true\n"
        );
        let e = lossync_core::scenario::from_toml(&text, std::path::Path::new(".")).unwrap_err();
        assert!(
            e.to_string()
                .starts_with("loss.recovery_pause: only applies to model = \"sync\""),
            "{e}"
        );
    }
}

#[test]
fn the_packet_senders_recovery_options_say_the_fluid_engine_does_not_model_them() {
    // `recovery = "prr"`, `loss_detection = "rack-tlp"` and `undo = true` ran in the fluid engine
    // without a word, as if they had been modelled (only `hystart` warned).
    let doc = |extra: &str| {
        format!(
            "engine = \"fluid\"\n[dumbbell]\ncapacity = \"100Mbps\"\nbuffer = {{ bdp_fraction = 0.2 }}\n\
             [[flows]]\ncount = 2\ncc = \"reno\"\nrtt = \"40ms\"\n{extra}\n[run]\nduration = \"5s\"\n"
        )
    };
    let said = |extra: &str| -> Vec<String> {
        (run(&doc(extra)).summary.warnings.into_iter())
            .filter(|w| w.contains("act in the packet engine only"))
            .collect()
    };
    let w = said("recovery = \"prr\"\nloss_detection = \"rack-tlp\"\nundo = true");
    assert!(
        w.len() == 1
            && w[0].starts_with(
                "flows[0]: recovery = \"prr\", loss_detection = \"rack-tlp\", undo = true act"
            ),
        "{w:?}"
    );
    assert!(said("").is_empty());
}
