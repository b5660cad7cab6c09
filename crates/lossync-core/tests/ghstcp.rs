//! Seed 003's single-flow experiment in the packet engine: one gHSTCP flow alone on the
//! testbed's path (200 Mb/s, 23 ms each way, the router's 500 KB buffer), its window growing from
//! 10 packets below the BDP (767 packets) in congestion avoidance. The seed: with the original
//! gHSTCP "RTT's oscillations lead to unnecessary mode switching behavior" and a "lower ability
//! for catching bottleneck link bandwidth"; the refined gHSTCP "can catch the link bandwidth as
//! quickly as the original HSTCP" while cwnd < BDP.

mod common;

use common::run;

/// The flow's mean window over the first `duration_s` (10 s: its window stays below the BDP):
/// send jitter of one packet time gives its RTT samples the noise a real path has.
fn ramp_cwnd(cc: &str, duration_s: f64) -> f64 {
    run(&format!(
        "engine = \"packet\"\n[dumbbell]\ncapacity = \"200Mbps\"\nbuffer = {{ bytes = 500000 }}\n\
         [[flows]]\ncc = {cc}\nrtt = \"46ms\"\nslow_start = false\ninitial_window = 10\nsend_jitter = \"0.06ms\"\n\
         [run]\nduration = \"{duration_s}s\"\nwarmup = \"0s\"\n"
    ))
    .summary
    .flows[0]
    .mean_cwnd_pkts
}

#[test]
fn refined_ghstcp_ramps_as_quickly_as_hstcp_and_the_original_does_not() {
    let d = 10.0;
    let hstcp = ramp_cwnd("\"highspeed\"", d);
    let refined = ramp_cwnd("\"ghstcp\"", d);
    let original = ramp_cwnd("{ variant = \"ghstcp\", trend_only = true }", d);
    let reno = ramp_cwnd("\"reno\"", d);
    // Measured: HSTCP 215.0, refined 210.3, original 151.6, Reno 115.9 (at 5 s: 74.0, 74.0, 67.2,
    // 62.2). The refined rule still meets a trend band now and then, where a window increase
    // queues a few packets: within 5% is "as quickly".
    eprintln!("mean cwnd over 10 s: hstcp {hstcp:.1}, refined {refined:.1}, original {original:.1}, reno {reno:.1}");
    assert!(
        refined >= 0.95 * hstcp,
        "refined {refined} against HSTCP {hstcp}"
    );
    assert!(
        original < refined - 0.25 * (hstcp - reno),
        "original {original}: not slower than refined {refined} (HSTCP {hstcp}, Reno {reno})"
    );
}
