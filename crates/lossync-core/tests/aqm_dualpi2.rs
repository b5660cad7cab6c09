//! DualPI2 (RFC 9332) in the packet engine: a scalable L4S flow (Prague, ECT(1)) and a classic
//! one (CUBIC) of equal base RTT share the link within a factor of two (RFC 9332 §2.1: k = 2
//! couples p_CL = k·p' and p_C = p'² so that DCTCP-like and Reno-like flows get about the same
//! window), and the L queue's 99th-percentile sojourn time stays under 2 ms (its step is at
//! 1 ms). Run with `--nocapture` to see the figures.
//!
//! Prague gets the larger share: k = 2 equalizes windows, not rates, and the classic flow's RTT
//! carries the C queue (about 13 ms of its 15 ms target here) while Prague's carries well
//! under 0.1 ms, so at 20 ms of base RTT the classic flow's RTT is about 1.6 times Prague's.
//! Measured with seeds 1–4 (Prague/CUBIC): 1.42, 1.63, 1.34, 1.56 with a Not-ECT CUBIC;
//! 1.69, 1.92, 2.09, 1.76 with an ECN CUBIC. The second case sits at the edge of the factor
//! of two (seed 3 is past it); the test runs seed 1. L queue p99: 0.22–0.23 ms throughout.
//!
//! The fluid engine's DualPI2 (`fluid/dual.rs`, the coupled PI of De Schepper et al., CoNEXT
//! 2016) against the packet engine with one packet time of send jitter, its reference: the same
//! classic delay, the same coupling.

mod common;

use common::run;
use lossync_core::metrics::Summary;

/// One Prague flow and one CUBIC flow (`cubic_ecn`: as a classic ECN flow, ECT(0)), 20 ms each,
/// through 100 Mb/s with DualPI2 and a buffer of 3 BDPs (500 packets), 60 s, the first 20 s
/// of them warm-up.
fn prague_and_cubic(cubic_ecn: bool) -> Summary {
    run(&format!(
        r#"
engine = "packet"
[dumbbell]
capacity = "100Mbps"
buffer = {{ packets = 500 }}
queue = {{ discipline = "dualpi2" }}
[[flows]]
name = "prague"
cc = "prague"
rtt = "20ms"
slow_start = true
[[flows]]
name = "cubic"
cc = "cubic"
rtt = "20ms"
slow_start = true
ecn = {cubic_ecn}
[run]
duration = "60s"
warmup = "20s"
seed = 1
"#
    ))
    .summary
}

fn check(cubic_ecn: bool) {
    let s = prague_and_cubic(cubic_ecn);
    let (p, c) = (&s.flows[0], &s.flows[1]);
    let l = &s.links[0];
    let ratio = p.throughput_bps / c.throughput_bps;
    eprintln!(
        "cubic ecn={cubic_ecn}: Prague {:.2} Mb/s, CUBIC {:.2} Mb/s, ratio {ratio:.3}; \
         utilization {:.4}; L sojourn mean {:.3} ms p99 {:.3} ms; all packets mean {:.3} ms \
         p99 {:.3} ms; mark rate {:.4} (Prague {:.4}, CUBIC {:.4}), early drops {:.2e}, \
         overflow drops {:.2e}",
        p.throughput_bps / 1e6,
        c.throughput_bps / 1e6,
        s.utilization,
        l.sojourn_l4s_mean_s * 1e3,
        l.sojourn_l4s_p99_s * 1e3,
        l.sojourn_mean_s * 1e3,
        l.sojourn_p99_s * 1e3,
        l.mark_rate,
        p.mark_rate,
        c.mark_rate,
        l.early_drop_rate,
        l.overflow_drop_rate,
    );
    assert!(
        (0.5..=2.0).contains(&ratio),
        "Prague/CUBIC throughput ratio {ratio} (cubic ecn={cubic_ecn})"
    );
    assert!(
        l.sojourn_l4s_p99_s < 0.002,
        "L queue p99 sojourn {} s (cubic ecn={cubic_ecn})",
        l.sojourn_l4s_p99_s
    );
}

#[test]
fn prague_and_cubic_share_the_link_and_the_l_queue_stays_short() {
    check(false);
}

#[test]
fn prague_and_a_classic_ecn_cubic_share_the_link_too() {
    check(true);
}

/// `groups` (TOML flow tables) through 100 Mb/s with DualPI2 and a buffer of `buffer` packets,
/// 60 s of which 20 s warm-up, in `engine`; the packet engine with one packet time (120 µs) of
/// send jitter.
fn dualpi2(engine: &str, buffer: u32, groups: &str) -> Summary {
    let jitter = if engine == "packet" { 120e-6 } else { 0.0 };
    let groups = groups.replace("[[flows]]", &format!("[[flows]]\nsend_jitter = {jitter}"));
    run(&format!(
        r#"
engine = "{engine}"
[dumbbell]
capacity = "100Mbps"
buffer = {{ packets = {buffer} }}
queue = {{ discipline = "dualpi2" }}
{groups}
[run]
duration = "60s"
warmup = "20s"
seed = 1
"#
    ))
    .summary
}

fn delay_s(s: &Summary) -> f64 {
    s.links[0].mean_queueing_delay_s
}

#[test]
fn the_fluid_pi_holds_the_classic_queue_at_its_target_as_the_packet_engine() {
    // 10 CUBIC flows, RTTs 20–100 ms, a buffer far above the target: the PI controller holds
    // the classic queue at 15 ms (RFC 9332 Appendix A.1). Measured: fluid 14.80 ms, packet
    // with jitter 15.11 ms; drop rates 7.4e-4 and 6.6e-4 (without jitter).
    let groups = "[[flows]]\ncount = 10\ncc = \"cubic\"\nrtt = \"20ms..100ms\"\nslow_start = true";
    let (fluid, packet) = (
        dualpi2("fluid", 2000, groups),
        dualpi2("packet", 2000, groups),
    );
    eprintln!(
        "classic: delay fluid {:.2} ms, packet {:.2} ms; U {:.4} / {:.4}",
        delay_s(&fluid) * 1e3,
        delay_s(&packet) * 1e3,
        fluid.utilization,
        packet.utilization
    );
    assert!(
        (delay_s(&fluid) - 0.015).abs() < 0.003,
        "{}",
        delay_s(&fluid)
    );
    assert!((delay_s(&fluid) / delay_s(&packet) - 1.0).abs() < 0.2);
    assert!((fluid.utilization - packet.utilization).abs() < 0.03);
    assert!(fluid.links[0].early_drop_rate > 0.0 && fluid.links[0].mark_rate == 0.0);
}

#[test]
fn the_fluid_coupling_shares_the_link_as_the_packet_engine() {
    // One Prague and one CUBIC flow of 20 ms (the packet test above). Measured: Prague/CUBIC
    // fluid 1.63, packet with jitter 1.65 (seeds 2, 3: fluid 1.57, 1.52; packet 1.38, 1.46);
    // mean delay 4.89 and 5.16 ms; marks 0.0127 and 0.0125 of the packets.
    let groups =
        "[[flows]]\nname = \"prague\"\ncc = \"prague\"\nrtt = \"20ms\"\nslow_start = true\n\
                  [[flows]]\nname = \"cubic\"\ncc = \"cubic\"\nrtt = \"20ms\"\nslow_start = true";
    let (fluid, packet) = (
        dualpi2("fluid", 500, groups),
        dualpi2("packet", 500, groups),
    );
    let ratio = |s: &Summary| s.flows[0].throughput_bps / s.flows[1].throughput_bps;
    eprintln!(
        "coupled: Prague/CUBIC fluid {:.3}, packet {:.3}; delay {:.2} / {:.2} ms; marks {:.4} / {:.4}",
        ratio(&fluid),
        ratio(&packet),
        delay_s(&fluid) * 1e3,
        delay_s(&packet) * 1e3,
        fluid.links[0].mark_rate,
        packet.links[0].mark_rate
    );
    assert!((0.5..=2.0).contains(&ratio(&fluid)), "{}", ratio(&fluid));
    assert!((ratio(&fluid) / ratio(&packet) - 1.0).abs() < 0.25);
    assert!((delay_s(&fluid) / delay_s(&packet) - 1.0).abs() < 0.2);
    assert!((fluid.links[0].mark_rate / packet.links[0].mark_rate - 1.0).abs() < 0.25);
    // Prague alone sits in the L queue: under its 1 ms step (fluid 0.67 ms, packet 0.85 ms).
    let alone = dualpi2(
        "fluid",
        500,
        groups.split("[[flows]]\nname = \"cubic\"").next().unwrap(),
    );
    assert!(delay_s(&alone) < 0.001, "{}", delay_s(&alone));
}

#[test]
fn dual_queues_the_machine_cannot_hold_are_refused_naming_the_buffer() {
    // Each dual-queue link keeps its classic queue's wait line, a step per entry, up to 32 MiB:
    // 20,000 of them with deep buffers would need 640 GiB, refused before anything is allocated.
    let links: String = (0..20_000)
        .map(|i| {
            format!(
                "[[links]]\nname = \"l{i}\"\ncapacity = \"10Mbps\"\ndelay = \"1ms\"\n\
                 buffer = {{ packets = 1000000 }}\nqueue = {{ discipline = \"dualpi2\" }}\n"
            )
        })
        .collect();
    let text = format!(
        "engine = \"fluid\"\n{links}[[flows]]\ncc = \"prague\"\npath = [\"l0\"]\nrtt = \"20ms\"\n\
         [run]\nduration = \"1s\"\n"
    );
    let sc = lossync_core::scenario::from_toml(&text, std::path::Path::new(".")).unwrap();
    let e = lossync_core::FluidEngine::new(&sc)
        .err()
        .expect("refused")
        .to_string();
    assert!(
        e.starts_with("links[") && e.contains("].buffer: the fluid engine would need"),
        "{e}"
    );
    assert!(e.contains("dual queue"), "{e}");
}
