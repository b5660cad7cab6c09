//! From what a file says to what a run uses: validation with errors that name their field, and
//! every default.

use super::empirical::read_m_distribution;
use super::file::*;
use super::limits::*;
use super::model::*;
use crate::cc::{self, CcParams};
use crate::error::{Error, Result};
use crate::units::{short, Bytes};
use std::path::Path;

fn positive(field: &str, v: f64) -> Result<f64> {
    if v.is_finite() && v > 0.0 {
        Ok(v)
    } else {
        Err(Error::field(
            field,
            format!("must be a positive number, got {v}"),
        ))
    }
}

fn non_negative(field: &str, v: f64) -> Result<f64> {
    if v.is_finite() && v >= 0.0 {
        Ok(v)
    } else {
        Err(Error::field(
            field,
            format!("must be a number ≥ 0, got {v}"),
        ))
    }
}

fn probability(field: &str, v: f64) -> Result<f64> {
    if v.is_finite() && (0.0..=1.0).contains(&v) {
        Ok(v)
    } else {
        Err(Error::field(
            field,
            format!("must be a probability in [0, 1], got {v}"),
        ))
    }
}

/// A number in `[lo, hi]`, refused otherwise with the range and `why` it is that.
fn in_range(field: &str, v: f64, (lo, hi): (f64, f64), why: &str) -> Result<f64> {
    if v.is_finite() && (lo..=hi).contains(&v) {
        Ok(v)
    } else {
        Err(Error::field(
            field,
            format!(
                "{} is out of range: must be in [{}, {}] ({why})",
                short(v),
                short(lo),
                short(hi)
            ),
        ))
    }
}

/// Validates a spec and fills every default.
pub fn resolve(spec: &ScenarioSpec, base_dir: &Path) -> Result<Scenario> {
    let engine = resolve_engine(spec.engine.as_deref())?;
    let mut run = resolve_run(&spec.run)?;
    let (link_specs, names) = link_table(spec)?;
    check_endpoints(&link_specs)?;
    // Flow groups read the packet size of the first link (windows in bytes, ACK sizes): checked
    // first, so that a bad one is blamed on itself.
    for (field, l) in &link_specs {
        link_packet_size(field, l)?;
    }
    let mut flows = resolve_flows(spec, &names, &link_specs, run.seed)?;
    if flows.is_empty() {
        return Err(Error::field(
            "flows",
            "no flows: give at least one [[flows]] group",
        ));
    }
    resolve_step(&spec.run, &mut run, &flows)?;
    let links = resolve_links(&link_specs, &names, &mut flows, base_dir)?;
    step_resolves_timers(&spec.run, &mut run, &links)?;
    check_packet_sizes(&links, &link_specs)?;
    check_rtts_cover_paths(&links, &flows)?;
    check_xcp_flows_meet_xcp_routers(&links, &flows)?;
    let loss = resolve_loss(&spec.loss, &links, &flows, base_dir)?;
    let name = spec.name.clone().unwrap_or_else(|| "scenario".to_string());
    Ok(Scenario {
        name,
        engine,
        links,
        flows,
        loss,
        run,
    })
}

fn resolve_engine(engine: Option<&str>) -> Result<Engine> {
    match engine.unwrap_or("fluid") {
        "fluid" => Ok(Engine::Fluid),
        "packet" => Ok(Engine::Packet),
        "ns3" => Ok(Engine::Ns3),
        "kernel" => Ok(Engine::Kernel),
        other => Err(Error::field(
            "engine",
            format!("unknown engine {other:?} (known: fluid, packet, ns3, kernel)"),
        )),
    }
}

/// The links as written, each with its field path (`dumbbell` or `links[i]`), and their names:
/// the dumbbell shorthand or a named list, not both.
#[allow(clippy::type_complexity)]
fn link_table(spec: &ScenarioSpec) -> Result<(Vec<(String, &LinkSpec)>, Vec<String>)> {
    let link_specs: Vec<(String, &LinkSpec)> = match (&spec.dumbbell, spec.links.is_empty()) {
        (Some(_), false) => {
            return Err(Error::field(
                "links",
                "give either `dumbbell` or `links`, not both",
            ))
        }
        (Some(d), true) => vec![("dumbbell".to_string(), d)],
        (None, false) => spec
            .links
            .iter()
            .enumerate()
            .map(|(i, l)| (format!("links[{i}]"), l))
            .collect(),
        (None, true) => return Err(Error::field("links", "no link: give `dumbbell` or `links`")),
    };
    let mut names: Vec<String> = Vec::new();
    for (field, l) in &link_specs {
        let name = match (&l.name, spec.dumbbell.is_some()) {
            (Some(n), _) => n.clone(),
            (None, true) => "bottleneck".to_string(),
            (None, false) => {
                return Err(Error::field(
                    format!("{field}.name"),
                    "every link needs a name",
                ))
            }
        };
        if name.trim().is_empty() {
            // Paths and messages name links; a blank one reads as nothing ("links: , b").
            return Err(Error::field(
                format!("{field}.name"),
                "a link's name cannot be empty",
            ));
        }
        if names.contains(&name) {
            return Err(Error::field(
                format!("{field}.name"),
                format!("duplicate link name {name:?}"),
            ));
        }
        names.push(name);
    }
    Ok((link_specs, names))
}

/// Windows and queues count packets, so every link must use one packet size.
fn check_packet_sizes(links: &[Link], link_specs: &[(String, &LinkSpec)]) -> Result<()> {
    let sizes: Vec<f64> = links.iter().map(|l| l.packet_size_bytes).collect();
    if let Some(i) = sizes.iter().position(|&s| s != sizes[0]) {
        return Err(Error::field(
            format!("{}.packet_size", link_specs[i].0),
            "all links must use the same packet size (windows and queues count packets)",
        ));
    }
    Ok(())
}

/// A flow's base RTT includes the propagation delay of its path, there and back.
fn check_rtts_cover_paths(links: &[Link], flows: &[Flow]) -> Result<()> {
    for f in flows {
        let prop: f64 = f.path.iter().map(|&l| 2.0 * links[l].delay_s).sum();
        if f.rtt_s < prop - 1e-12 {
            return Err(Error::field(
                format!("flows[{}].rtt", f.group),
                format!(
                    "an RTT of {} s is shorter than twice the propagation delay of its path ({} s)",
                    f.rtt_s, prop
                ),
            ));
        }
    }
    Ok(())
}

/// An XCP sender has no probing of its own: without an XCP router it would never slow down.
fn check_xcp_flows_meet_xcp_routers(links: &[Link], flows: &[Flow]) -> Result<()> {
    if let Some(f) = flows.iter().find(|f| {
        matches!(f.cc, CcParams::Xcp(_))
            && !f
                .path
                .iter()
                .any(|&l| matches!(links[l].queue, Queue::Xcp(_)))
    }) {
        return Err(Error::field(
            format!("flows[{}].cc", f.group),
            "an xcp flow must cross a link with queue = { discipline = \"xcp\" }",
        ));
    }
    Ok(())
}

/// The run's length, warm-up and seed; the step and the record interval follow from the flows
/// ([`resolve_step`]).
fn resolve_run(r: &RunSpec) -> Result<Run> {
    let duration_s = positive("run.duration", r.duration.map_or(100.0, |t| t.0))?;
    in_range(
        "run.duration",
        duration_s,
        (0.0, MAX_DURATION_S),
        "116 days; the packet engine's 64-bit picosecond clock ends at 213",
    )?;
    let warmup_s = non_negative("run.warmup", r.warmup.map_or(0.0, |t| t.0))?;
    if warmup_s >= duration_s {
        return Err(Error::field(
            "run.warmup",
            format!("{warmup_s} s must be shorter than run.duration ({duration_s} s)"),
        ));
    }
    Ok(Run {
        duration_s,
        warmup_s,
        from_first_congestion: r.from_first_congestion.unwrap_or(false),
        step_s: f64::NAN,
        seed: r.seed.unwrap_or(1),
        record_interval_s: f64::NAN,
        aggregate_interval_s: 0.0,
    })
}

/// The fluid engine's step: at least [`STEPS_PER_RTT`] per base RTT (docs/model.md §1.4). By
/// default 1 ms, or the shortest base RTT / 80 rounded down to the 1-2-5 series when that is shorter (so a scenario whose RTTs
/// are all at least 80 ms keeps 1 ms exactly); a given step must satisfy the rule. Then the
/// record interval, at least one step.
/// The largest of 1, 0.5, 0.2, 0.1, 0.05, ... ms not above `step`: a round step divides round
/// durations and record intervals into whole steps (60 ms / 80 = 0.75 ms left a 200 s run
/// 0.05 s short of its end), and the rule holds all the more.
fn round_step_down(step: f64) -> f64 {
    let decade = 10f64.powf(step.log10().floor());
    let mantissa = [5.0, 2.0, 1.0]
        .into_iter()
        .find(|&m| m * decade <= step * (1.0 + 1e-12))
        .unwrap_or(1.0);
    mantissa * decade
}

/// The fluid step must resolve the shortest burst-assembly timer too: the default step shrinks
/// to a quarter of it, and a step given longer than that is refused.
fn step_resolves_timers(r: &RunSpec, run: &mut Run, links: &[Link]) -> Result<()> {
    let timers = links.iter().enumerate().filter_map(|(i, l)| {
        let a = l.assembler.as_ref()?;
        Some((a.timers_s.iter().copied().fold(a.timer_s, f64::min), i))
    });
    let Some((shortest, i)) = timers.fold(None, |a: Option<(f64, usize)>, b| match a {
        Some(a) if a.0 <= b.0 => Some(a),
        _ => Some(b),
    }) else {
        return Ok(());
    };
    let largest = shortest / STEPS_PER_TIMER;
    if run.step_s <= largest * (1.0 + 1e-9) {
        return Ok(());
    }
    if r.step.is_some() {
        return Err(Error::field(
            "run.step",
            format!(
                "{} s is too long for the shortest assembly timer, {shortest} s \
                 (links[{i}].assembler): the fluid engine needs at least {STEPS_PER_TIMER} \
                 steps per timer; use a step of at most {largest} s, or leave run.step out",
                run.step_s
            ),
        ));
    }
    run.step_s = round_step_down(largest);
    Ok(())
}

fn resolve_step(r: &RunSpec, run: &mut Run, flows: &[Flow]) -> Result<()> {
    let (shortest, g) = flows
        .iter()
        .map(|f| (f.rtt_s, f.group))
        .fold((f64::INFINITY, 0), |a, b| if b.0 < a.0 { b } else { a });
    let largest = shortest / STEPS_PER_RTT;
    // Within a rounding of the rule: 80 ms / 1 ms passes whatever the last bit of the quotient.
    let fits = |step: f64| shortest / step >= STEPS_PER_RTT * (1.0 - 1e-9);
    let step_s = match r.step {
        None if fits(DEFAULT_STEP_S) => DEFAULT_STEP_S,
        None => round_step_down(largest),
        Some(t) => {
            let step = positive("run.step", t.0)?;
            if step < MIN_STEP_S {
                return Err(Error::field(
                    "run.step",
                    format!("{step} s is shorter than 1 ns, shorter than anything a network does"),
                ));
            }
            if step > run.duration_s / 10.0 {
                return Err(Error::field(
                    "run.step",
                    "must be at most a tenth of run.duration",
                ));
            }
            if !fits(step) {
                return Err(Error::field(
                    "run.step",
                    format!(
                        "{step} s is too long for the shortest base RTT, {shortest} s \
                         (flows[{g}].rtt): the fluid engine needs at least 80 steps per RTT \
                         (docs/model.md §1.4); use a step of at most {largest} s, or leave \
                         run.step out to get that"
                    ),
                ));
            }
            step
        }
    };
    if step_s > run.duration_s / 10.0 {
        return Err(Error::field(
            "run.step",
            "must be at most a tenth of run.duration",
        ));
    }
    let record_interval_s = positive(
        "run.record_interval",
        r.record_interval.map_or(0.1, |t| t.0),
    )?;
    if record_interval_s < step_s {
        return Err(Error::field(
            "run.record_interval",
            format!("must be at least one step ({step_s} s)"),
        ));
    }
    if run.duration_s / record_interval_s > 1e7 {
        return Err(Error::field(
            "run.record_interval",
            "would record more than 10^7 samples",
        ));
    }
    if let Some(t) = r.aggregate_interval {
        let f = "run.aggregate_interval";
        let a = positive(f, t.0)?;
        if a < step_s {
            return Err(Error::field(
                f,
                format!("must be at least one step ({step_s} s)"),
            ));
        }
        if run.duration_s / a > 1e7 {
            return Err(Error::field(f, "would take more than 10^7 samples"));
        }
        run.aggregate_interval_s = a;
    }
    run.step_s = step_s;
    run.record_interval_s = record_interval_s;
    Ok(())
}

/// A link's packet size in bytes (1500 by default); `field` is the link's.
fn link_packet_size(field: &str, l: &LinkSpec) -> Result<f64> {
    in_range(
        &format!("{field}.packet_size"),
        l.packet_size.map_or(1500.0, |b| b.0),
        PACKET_BYTES,
        "bytes: at least the IPv4 and TCP headers, at most the largest IPv4 datagram",
    )
}

/// The links as given, then the reverse directions (asked for with `reverse`, or needed by a
/// flow with `direction = "reverse"`), each named `<link>-reverse`. Moves reverse flows onto
/// those and fills every flow's ACK path.
fn resolve_links(
    link_specs: &[(String, &LinkSpec)],
    names: &[String],
    flows: &mut [Flow],
    base_dir: &Path,
) -> Result<Vec<Link>> {
    let n = link_specs.len();
    let mut rev_index: Vec<Option<usize>> = vec![None; n];
    let mut next = n;
    for (i, (field, l)) in link_specs.iter().enumerate() {
        let asked = match &l.reverse {
            None => None,
            Some(BoolOr::Bool(b)) => Some(*b),
            Some(BoolOr::Table(_)) => Some(true),
        };
        if let Some(f) = flows.iter().find(|f| f.reverse && f.path.contains(&i)) {
            if asked == Some(false) {
                return Err(Error::field(
                    format!("{field}.reverse"),
                    format!(
                        "is false, but flows[{}] (direction = \"reverse\") crosses the link",
                        f.group
                    ),
                ));
            }
            rev_index[i] = Some(next);
            next += 1;
        } else if asked == Some(true) {
            rev_index[i] = Some(next);
            next += 1;
        }
    }

    let mut links = Vec::with_capacity(next);
    for (i, (field, l)) in link_specs.iter().enumerate() {
        // The BDP of a link's buffer: the flows whose data cross it in that direction.
        let mut crossing: Vec<&Flow> = flows
            .iter()
            .filter(|f| !f.reverse && f.path.contains(&i))
            .collect();
        if crossing.is_empty() {
            crossing = flows.iter().filter(|f| f.path.contains(&i)).collect();
        }
        links.push(resolve_link(field, &names[i], l, &crossing, base_dir)?);
    }
    for (i, (field, l)) in link_specs.iter().enumerate() {
        let Some(ri) = rev_index[i] else { continue };
        let over = match &l.reverse {
            Some(BoolOr::Table(t)) => t.clone(),
            _ => ReverseLinkSpec {
                capacity: None,
                buffer: None,
                queue: None,
            },
        };
        let spec = LinkSpec {
            name: None,
            capacity: over.capacity.unwrap_or(l.capacity),
            packet_size: l.packet_size,
            buffer: over.buffer.clone().unwrap_or_else(|| l.buffer.clone()),
            queue: over.queue.clone().or_else(|| l.queue.clone()),
            delay: l.delay,
            from: l.to.clone(),
            to: l.from.clone(),
            loss_rate: l.loss_rate,
            reverse: None,
            // ACKs are not assembled: the other direction has no assembler.
            assembler: None,
            burst_loss: None,
            contention: None,
        };
        let mut crossing: Vec<&Flow> = flows
            .iter()
            .filter(|f| f.reverse && f.path.contains(&i))
            .collect();
        if crossing.is_empty() {
            crossing = flows.iter().filter(|f| f.path.contains(&i)).collect();
        }
        let mut link = resolve_link(
            &format!("{field}.reverse"),
            &format!("{}-reverse", names[i]),
            &spec,
            &crossing,
            base_dir,
        )?;
        if over.buffer.is_none() {
            link.buffer_pkts = links[i].buffer_pkts; // a mirror holds as many packets
        }
        link.reverse_of = Some(i);
        debug_assert_eq!(links.len(), ri);
        links.push(link);
    }

    for f in flows.iter_mut() {
        let there_and_back: Vec<usize> =
            f.path.iter().rev().filter_map(|&l| rev_index[l]).collect();
        if f.reverse {
            f.ack_path = std::mem::replace(&mut f.path, there_and_back);
        } else {
            f.ack_path = there_and_back;
        }
    }
    Ok(links)
}

/// A rate in bits/s within [`RATE_BPS`].
fn rate(field: &str, bps: f64) -> Result<f64> {
    positive(field, bps)?;
    in_range(field, bps, RATE_BPS, "bits/s: at most 1 Pb/s")
}

fn resolve_link(
    field: &str,
    name: &str,
    l: &LinkSpec,
    crossing: &[&Flow],
    base_dir: &Path,
) -> Result<Link> {
    let capacity_bps = rate(&format!("{field}.capacity"), l.capacity.0)?;
    let packet_size_bytes = link_packet_size(field, l)?;
    let capacity_pps = capacity_bps / (8.0 * packet_size_bytes);
    let delay_s = non_negative(&format!("{field}.delay"), l.delay.map_or(0.0, |t| t.0))?;
    in_range(
        &format!("{field}.delay"),
        delay_s,
        (0.0, RTT_S.1 / 2.0),
        "seconds: half the longest base RTT, 60 s",
    )?;
    let (from, to) = (l.from.clone(), l.to.clone()); // checked by `check_endpoints`
    let loss_rate = probability(&format!("{field}.loss_rate"), l.loss_rate.unwrap_or(0.0))?;
    if loss_rate >= 1.0 {
        return Err(Error::field(
            format!("{field}.loss_rate"),
            "must be below 1",
        ));
    }

    let buffer_pkts = resolve_buffer(
        &l.buffer,
        &format!("{field}.buffer"),
        capacity_pps,
        packet_size_bytes,
        crossing,
    )?;
    let queue = resolve_queue(l.queue.as_ref(), &format!("{field}.queue"), buffer_pkts)?;
    let assembler = l
        .assembler
        .as_ref()
        .map(|a| resolve_assembler(&format!("{field}.assembler"), a, crossing.len(), base_dir))
        .transpose()?;
    let burst_loss = match l.burst_loss {
        None => 0.0,
        Some(p) => {
            let f = format!("{field}.burst_loss");
            let p = probability(&f, p)?;
            if assembler.is_none() {
                return Err(Error::field(
                    f,
                    "needs an `assembler` on the link: only assembled bursts can be lost whole",
                ));
            }
            p
        }
    };
    let contention = l
        .contention
        .as_ref()
        .map(|c| {
            let f = format!("{field}.contention");
            if assembler.is_none() {
                return Err(Error::field(
                    f,
                    "needs an `assembler` on the link: only assembled bursts contend",
                ));
            }
            if l.burst_loss.is_some_and(|p| p != 0.0) {
                return Err(Error::field(
                    f,
                    "not with `burst_loss`: bursts are lost either at random or by contention",
                ));
            }
            resolve_contention(&f, c)
        })
        .transpose()?;
    Ok(Link {
        name: name.to_string(),
        capacity_bps,
        packet_size_bytes,
        capacity_pps,
        buffer_pkts,
        delay_s,
        from,
        to,
        queue,
        loss_rate,
        reverse_of: None,
        assembler,
        burst_loss,
        contention,
    })
}

/// The most wavelengths and fibre delay lines of a link, and the longest FDL delay.
const WAVELENGTHS_MAX: i64 = 1 << 12;
const FDLS_MAX: i64 = 1 << 12;
const FDL_DELAY_MAX_S: f64 = 1.0;

fn resolve_contention(field: &str, c: &ContentionSpec) -> Result<Contention> {
    let count = |name: &str, v: Option<i64>, default: i64, (lo, hi): (i64, i64)| match v {
        None => Ok(default as u32),
        Some(n) if (lo..=hi).contains(&n) => Ok(n as u32),
        Some(n) => Err(Error::field(
            format!("{field}.{name}"),
            format!("{n} is out of range: must be an integer in [{lo}, {hi}]"),
        )),
    };
    let wavelengths = count("wavelengths", c.wavelengths, 1, (1, WAVELENGTHS_MAX))?;
    let fdls = count("fdls", c.fdls, 0, (0, FDLS_MAX))?;
    let df = format!("{field}.fdl_delay");
    let fdl_delay_s = match (fdls, c.fdl_delay) {
        (0, None) => 0.0,
        (0, Some(_)) => return Err(Error::field(df, "needs `fdls` (how many delay lines)")),
        (_, None) => {
            return Err(Error::field(
                df,
                "needed with `fdls`: the delay of each line, e.g. \"20us\"",
            ))
        }
        (_, Some(d)) => {
            positive(&df, d.0)?;
            in_range(&df, d.0, (0.0, FDL_DELAY_MAX_S), "seconds")?
        }
    };
    Ok(Contention {
        wavelengths,
        fdls,
        fdl_delay_s,
    })
}

/// The longest assembly timer, in seconds.
const ASSEMBLY_TIMER_MAX_S: f64 = 10.0;
/// The most assembly queues of the `random` policy, and the largest `max_burst`.
const ASSEMBLY_QUEUES_MAX: i64 = 1 << 16;
const MAX_BURST_MAX: i64 = 1 << 24;

fn resolve_assembler(
    field: &str,
    a: &AssemblerSpec,
    flows: usize,
    base_dir: &Path,
) -> Result<Assembler> {
    let timer = |f: String, t: f64| -> Result<f64> {
        positive(&f, t)?;
        if t > ASSEMBLY_TIMER_MAX_S {
            return Err(Error::field(
                f,
                format!(
                    "{} s is out of range: must be in (0, {ASSEMBLY_TIMER_MAX_S}] seconds",
                    short(t)
                ),
            ));
        }
        Ok(t)
    };
    let policy = match a.policy.as_deref().unwrap_or("mixed") {
        "mixed" => AssemblyPolicy::Mixed,
        "per_flow" => AssemblyPolicy::PerFlow,
        "random" => AssemblyPolicy::Random,
        "window" => AssemblyPolicy::Window,
        other => {
            return Err(Error::field(
                format!("{field}.policy"),
                format!("unknown policy {other:?} (known: mixed, per_flow, random, window)"),
            ))
        }
    };
    let (mut timers_s, mut thresholds_pkts) = (Vec::new(), Vec::new());
    let timer_s = if policy == AssemblyPolicy::Window {
        if a.timer.is_some() {
            return Err(Error::field(
                format!("{field}.timer"),
                "not used by the window policy: give a timer per queue in `timers`",
            ));
        }
        let tf = format!("{field}.timers");
        let Some(ts) = a.timers.as_ref().filter(|t| !t.is_empty()) else {
            return Err(Error::field(
                tf,
                "needed by the window policy: a timer per queue, e.g. [\"1ms\", \"5ms\", \"10ms\"]",
            ));
        };
        if ts.len() as i64 > ASSEMBLY_QUEUES_MAX {
            return Err(Error::field(
                tf,
                format!("at most {ASSEMBLY_QUEUES_MAX} queues"),
            ));
        }
        for (i, t) in ts.iter().enumerate() {
            timers_s.push(timer(format!("{tf}[{i}]"), t.0)?);
        }
        let hf = format!("{field}.thresholds");
        let hs = a.thresholds.clone().unwrap_or_default();
        if hs.len() + 1 != ts.len() {
            return Err(Error::field(
                hf,
                format!(
                    "{} thresholds for {} timers: give one fewer (windows below the first \
                     threshold take the first timer)",
                    hs.len(),
                    ts.len()
                ),
            ));
        }
        for (i, &h) in hs.iter().enumerate() {
            let f = format!("{hf}[{i}]");
            positive(&f, h)?;
            if i > 0 && h <= hs[i - 1] {
                return Err(Error::field(
                    f,
                    format!("{h} is not above the threshold before it: they must increase"),
                ));
            }
        }
        thresholds_pkts = hs;
        timers_s[0]
    } else {
        for (given, name) in [
            (a.timers.is_some(), "timers"),
            (a.thresholds.is_some(), "thresholds"),
        ] {
            if given {
                return Err(Error::field(
                    format!("{field}.{name}"),
                    "only for policy = \"window\"",
                ));
            }
        }
        let Some(t) = a.timer else {
            return Err(Error::field(
                format!("{field}.timer"),
                "needed: the assembly timer, e.g. \"1ms\"",
            ));
        };
        timer(format!("{field}.timer"), t.0)?
    };
    let qf = format!("{field}.queues");
    let queues = match (policy, a.queues) {
        (AssemblyPolicy::Mixed, None | Some(1)) => 1,
        (AssemblyPolicy::Mixed, Some(q)) => {
            return Err(Error::field(
                qf,
                format!("is {q}: the mixed policy has one queue (use policy = \"random\")"),
            ))
        }
        (AssemblyPolicy::PerFlow, None) => 0,
        (AssemblyPolicy::PerFlow, Some(_)) => {
            return Err(Error::field(
                qf,
                "not used by the per_flow policy (one queue per flow)",
            ))
        }
        (AssemblyPolicy::Random, None) => 2,
        (AssemblyPolicy::Random, Some(q)) if (1..=ASSEMBLY_QUEUES_MAX).contains(&q) => q as u32,
        (AssemblyPolicy::Random, Some(q)) => {
            return Err(Error::field(
                qf,
                format!("{q} is out of range: must be in [1, {ASSEMBLY_QUEUES_MAX}]"),
            ))
        }
        (AssemblyPolicy::Window, None) => timers_s.len() as u32,
        (AssemblyPolicy::Window, Some(q)) if q == timers_s.len() as i64 => q as u32,
        (AssemblyPolicy::Window, Some(q)) => {
            return Err(Error::field(
                qf,
                format!(
                    "is {q}: the window policy has one queue per timer ({})",
                    timers_s.len()
                ),
            ))
        }
    };
    let max_burst_pkts = match a.max_burst {
        None => 0,
        Some(m) if (1..=MAX_BURST_MAX).contains(&m) => m as u32,
        Some(m) => {
            return Err(Error::field(
                format!("{field}.max_burst"),
                format!("{m} is out of range: must be in [1, {MAX_BURST_MAX}] packets"),
            ))
        }
    };
    // The flows a lost burst holds, drawn from a measured distribution (fluid engine).
    let (m_file, m_probabilities) = match &a.m_distribution {
        None => (None, Vec::new()),
        Some(_) if policy == AssemblyPolicy::PerFlow => {
            return Err(Error::field(
                format!("{field}.m_distribution"),
                "not with policy = \"per_flow\": a per-flow burst holds one flow",
            ))
        }
        Some(file) => {
            let mf = format!("{field}.m_distribution");
            let path = base_dir.join(file);
            let probabilities = read_m_distribution(&path, &mf)?;
            if let Some(&(m, _)) = probabilities.iter().find(|&&(m, _)| m > flows) {
                return Err(Error::field(
                    mf,
                    format!(
                        "{}: m = {m} exceeds the {flows} flows at the link",
                        path.display()
                    ),
                ));
            }
            (Some(path.display().to_string()), probabilities)
        }
    };
    Ok(Assembler {
        timer_s,
        policy,
        queues,
        max_burst_pkts,
        timers_s,
        thresholds_pkts,
        m_file,
        m_probabilities,
    })
}

/// Each link names both its end nodes (two different ones) or neither, and every link does or
/// none does: paths are checked to be connected when they do ([`flow_path`]).
fn check_endpoints(link_specs: &[(String, &LinkSpec)]) -> Result<()> {
    for (field, l) in link_specs {
        link_endpoints(field, l)?;
    }
    let named = |l: &LinkSpec| l.from.is_some();
    if let Some((with, _)) = link_specs.iter().find(|(_, l)| named(l)) {
        if let Some((field, _)) = link_specs.iter().find(|(_, l)| !named(l)) {
            return Err(Error::field(
                format!("{field}.from"),
                format!("needed: {with} names its end nodes, so every link must"),
            ));
        }
    }
    Ok(())
}

/// A link's end nodes, both or neither, and two different ones.
fn link_endpoints(field: &str, l: &LinkSpec) -> Result<()> {
    match (&l.from, &l.to) {
        (None, None) => Ok(()),
        (Some(_), None) => Err(Error::field(
            format!("{field}.to"),
            "needed with `from`: a link names both its end nodes or neither",
        )),
        (None, Some(_)) => Err(Error::field(
            format!("{field}.from"),
            "needed with `to`: a link names both its end nodes or neither",
        )),
        (Some(a), Some(b)) if a == b => Err(Error::field(
            format!("{field}.to"),
            format!("{b:?} is also `from`: a link joins two different nodes"),
        )),
        (Some(_), Some(_)) => Ok(()),
    }
}

/// The buffer in packets; `bf` is its field. With `bdp_fraction`, the BDP is the capacity times
/// `reference_rtt`, by default the mean base RTT of the flows `crossing` the link.
fn resolve_buffer(
    b: &BufferSpec,
    bf: &str,
    capacity_pps: f64,
    packet_size_bytes: f64,
    crossing: &[&Flow],
) -> Result<f64> {
    let given = [
        b.packets.is_some(),
        b.bytes.is_some(),
        b.bdp_fraction.is_some(),
    ];
    if given.iter().filter(|&&g| g).count() != 1 {
        return Err(Error::field(
            bf,
            "give exactly one of packets, bytes, bdp_fraction",
        ));
    }
    if b.reference_rtt.is_some() && b.bdp_fraction.is_none() {
        return Err(Error::field(
            format!("{bf}.reference_rtt"),
            "only goes with bdp_fraction",
        ));
    }
    let why = "at most 2^64 bytes";
    let buffer_pkts = if let Some(p) = b.packets {
        let f = format!("{bf}.packets");
        let max = MAX_BUFFER_BYTES / packet_size_bytes;
        in_range(&f, non_negative(&f, p)?, (0.0, max), why)?
    } else if let Some(by) = b.bytes {
        let f = format!("{bf}.bytes");
        in_range(&f, non_negative(&f, by.0)?, (0.0, MAX_BUFFER_BYTES), why)? / packet_size_bytes
    } else {
        let f = format!("{bf}.bdp_fraction");
        let frac = non_negative(&f, b.bdp_fraction.unwrap_or(0.0))?;
        in_range(
            &f,
            frac,
            (0.0, MAX_BDP_FRACTION),
            "bandwidth-delay products: buffers hold seconds of traffic at most",
        )?;
        let rtt = match b.reference_rtt {
            Some(t) => {
                let f = format!("{bf}.reference_rtt");
                in_range(&f, positive(&f, t.0)?, RTT_S, RTT_WHY)?
            }
            None if crossing.is_empty() => {
                return Err(Error::field(
                    format!("{bf}.reference_rtt"),
                    "needed: no flow crosses this link to take a mean RTT from",
                ))
            }
            None => crossing.iter().map(|f| f.rtt_s).sum::<f64>() / crossing.len() as f64,
        };
        frac * capacity_pps * rtt
    };
    // A buffer of 0 is the bufferless link of the closed forms (docs/model.md §4.2, ρ = 0); anything
    // between 0 and one packet cannot hold a packet and is almost surely a unit mistake.
    if buffer_pkts > 0.0 && buffer_pkts < 1.0 {
        return Err(Error::field(
            bf,
            format!("{buffer_pkts:.3} packets is less than one packet (use 0 for no buffer)"),
        ));
    }
    Ok(buffer_pkts)
}

/// The queue discipline (drop-tail by default); `qf` is its field.
fn resolve_queue(queue: Option<&QueueSpec>, qf: &str, buffer_pkts: f64) -> Result<Queue> {
    Ok(match queue {
        None | Some(QueueSpec::Droptail) => Queue::Droptail,
        Some(QueueSpec::Red {
            min_th,
            max_th,
            max_p,
            weight,
            gentle,
        }) => {
            let min_th = non_negative(&format!("{qf}.min_th"), *min_th)?;
            let max_th = positive(&format!("{qf}.max_th"), *max_th)?;
            if max_th <= min_th {
                return Err(Error::field(format!("{qf}.max_th"), "must exceed min_th"));
            }
            if max_th > buffer_pkts {
                return Err(Error::field(
                    format!("{qf}.max_th"),
                    "must not exceed the buffer",
                ));
            }
            // max_p 0.1 and w_q 0.002: Floyd & Jacobson 1993 §11 and Floyd's RED page defaults.
            let max_p = probability(&format!("{qf}.max_p"), max_p.unwrap_or(0.1))?;
            let weight = weight.unwrap_or(0.002);
            if !(weight > 0.0 && weight <= 1.0) {
                return Err(Error::field(format!("{qf}.weight"), "must be in (0, 1]"));
            }
            Queue::Red {
                min_th,
                max_th,
                max_p,
                weight,
                gentle: gentle.unwrap_or(true),
            }
        }
        Some(QueueSpec::Xcp {
            preset,
            alpha,
            beta,
            gamma,
            target,
            count_acks,
        }) => {
            let base = match preset.as_deref().unwrap_or("original") {
                "original" => crate::queue::xcp::XcpParams::ORIGINAL,
                "conservative" => crate::queue::xcp::XcpParams::CONSERVATIVE,
                other => {
                    return Err(Error::field(
                        format!("{qf}.preset"),
                        format!("unknown preset {other:?} (original, conservative)"),
                    ))
                }
            };
            let p = crate::queue::xcp::XcpParams {
                alpha: xcp_gain(&format!("{qf}.alpha"), alpha.unwrap_or(base.alpha))?,
                beta: xcp_gain(&format!("{qf}.beta"), beta.unwrap_or(base.beta))?,
                gamma: probability(&format!("{qf}.gamma"), gamma.unwrap_or(base.gamma))?,
                target: positive(&format!("{qf}.target"), target.unwrap_or(base.target))?,
                count_acks: count_acks.unwrap_or(true),
            };
            if p.target > 1.0 {
                return Err(Error::field(format!("{qf}.target"), "must be at most 1"));
            }
            Queue::Xcp(p)
        }
    })
}

/// XCP's gain α or β, in (0, [`MAX_XCP_GAIN`]].
fn xcp_gain(field: &str, v: f64) -> Result<f64> {
    in_range(
        field,
        positive(field, v)?,
        (0.0, MAX_XCP_GAIN),
        "a fraction of the spare bandwidth or of the queue per control interval",
    )
}

const RTT_WHY: &str = "seconds: from 1 µs to the 60 s upper bound of TCP's retransmission timer";

/// A window in packets, in (0, [`MAX_WINDOW_BYTES`] / packet size].
fn window(field: &str, pkts: f64, packet_size: f64) -> Result<f64> {
    positive(field, pkts)?;
    in_range(
        field,
        pkts,
        (0.0, MAX_WINDOW_BYTES / packet_size),
        "packets: TCP's largest window is 65535·2^14 bytes, RFC 7323",
    )
}

/// Every flow group, expanded to one [`Flow`] per connection (ACK paths are filled in by
/// [`resolve_links`]).
fn resolve_flows(
    spec: &ScenarioSpec,
    names: &[String],
    link_specs: &[(String, &LinkSpec)],
    seed: u64,
) -> Result<Vec<Flow>> {
    let packet_size = link_specs[0].1.packet_size.map_or(1500.0, |b| b.0);
    let mut flows = Vec::new();
    for (g, fs) in spec.flows.iter().enumerate() {
        let field = format!("flows[{g}]");
        let arrivals = fs
            .arrivals
            .as_ref()
            .map(|a| flow_arrivals(a, fs, &field))
            .transpose()?;
        let n = match arrivals {
            Some(a) => a.max_active,
            None => flow_count(fs.count, &field)?,
        };
        let cc = cc::read(&fs.cc.variant, &fs.cc.params, &format!("{field}.cc"))?;
        let rtts = flow_rtts(&fs.rtt, n, &format!("{field}.rtt"))?;
        let starts = flow_starts(fs.start.as_ref(), n, &format!("{field}.start"), seed, g)?;
        let rwnd_pkts = flow_rwnd(fs.rwnd.as_ref(), packet_size, &field)?;
        let path = flow_path(
            fs.path.as_deref(),
            spec.dumbbell.is_some(),
            names,
            link_specs,
            &field,
        )?;
        let initial_window_pkts = window(
            &format!("{field}.initial_window"),
            fs.initial_window.unwrap_or(10.0),
            packet_size,
        )?;
        let pacing = flow_pacing(fs.pacing.as_ref(), &field)?;
        let reverse = flow_direction(fs.direction.as_deref(), &field)?;
        let delayed_ack = flow_delayed_ack(fs.delayed_ack.as_ref(), &field)?;
        let ack_size_bytes = flow_ack_size(fs.ack_size, packet_size, &field)?;
        let access_capacity_bps = fs
            .access_capacity
            .map(|r| rate(&format!("{field}.access_capacity"), r.0))
            .transpose()?;
        let parallel = flow_parallel(fs.parallel, &field)?;
        // A new connection starts in slow start (RFC 5681 §3.1): the default of dynamic flows.
        let slow_start = fs.slow_start.unwrap_or(arrivals.is_some());
        let send_jitter_s = match fs.send_jitter {
            Some(t) => in_range(
                &format!("{field}.send_jitter"),
                t.0,
                (0.0, 1.0),
                "a random delay per packet, at most 1 s",
            )?,
            None => 0.0,
        };
        let group_name = fs
            .name
            .clone()
            .unwrap_or_else(|| format!("{}{g}", cc.name()));
        let base = flows.last().map_or(0, |f: &Flow| f.logical + 1);
        for k in (0..n).flat_map(|k| std::iter::repeat_n(k, parallel)) {
            // Each slot of a dynamic group is a host of its own (its own access link, as each
            // source of seed 002 has).
            let logical = base + k;
            flows.push(Flow {
                group: g,
                group_name: group_name.clone(),
                cc: cc.clone(),
                rtt_s: rtts[k],
                start_s: starts[k],
                rwnd_pkts,
                path: path.clone(),
                slow_start,
                initial_window_pkts,
                pacing,
                ack_path: Vec::new(),
                reverse,
                delayed_ack,
                ack_size_bytes,
                access_capacity_bps,
                logical,
                send_jitter_s,
                arrivals,
            });
        }
    }
    Ok(flows)
}

/// Default pool of a dynamic group: more than the 600–800 flows active at once in seed 002's
/// NSFnet runs (Vlachos, §III).
pub const DEFAULT_MAX_ACTIVE: usize = 1000;
/// The fastest arrival process accepted (flows/s): 10^6 is 20 000 times seed 002's 50 flows/s.
pub const MAX_ARRIVAL_RATE_PER_S: f64 = 1e6;

/// A dynamic group's arrivals: a Poisson rate and Pareto sizes from two of shape, minimum and
/// mean. `count`, `start` and `parallel` belong to persistent groups and are refused.
fn flow_arrivals(a: &ArrivalsSpec, fs: &FlowGroupSpec, field: &str) -> Result<Arrivals> {
    let af = format!("{field}.arrivals");
    for (name, given) in [
        ("count", fs.count.is_some()),
        ("start", fs.start.is_some()),
        ("parallel", fs.parallel.is_some_and(|p| p != 1)),
    ] {
        if given {
            return Err(Error::field(
                format!("{field}.{name}"),
                "a group with arrivals has none: its flows arrive at random (the pool's size \
                 is arrivals.max_active)",
            ));
        }
    }
    if !matches!(fs.rtt, RttSpec::One(_)) {
        return Err(Error::field(
            format!("{field}.rtt"),
            "a group with arrivals takes one RTT for all its flows",
        ));
    }
    let rate_per_s = in_range(
        &format!("{af}.rate"),
        positive(&format!("{af}.rate"), a.rate)?,
        (0.0, MAX_ARRIVAL_RATE_PER_S),
        "flows per second",
    )?;
    let size = |name: &str, b: Option<Bytes>| -> Result<Option<f64>> {
        b.map(|b| {
            let f = format!("{af}.{name}");
            in_range(&f, positive(&f, b.0)?, (1.0, 1e15), "bytes")
        })
        .transpose()
    };
    let min = size("min_size", a.min_size)?;
    let mean = size("mean_size", a.mean_size)?;
    let shape = a
        .shape
        .map(|s| {
            in_range(
                &format!("{af}.shape"),
                positive(&format!("{af}.shape"), s)?,
                (0.0, 1e3),
                "the Pareto shape α",
            )
        })
        .transpose()?;
    let (shape, min_size_bytes) = match (shape, min, mean) {
        (Some(s), Some(m), None) => (s, m),
        (Some(s), None, Some(mean)) => {
            if s <= 1.0 {
                return Err(Error::field(
                    format!("{af}.shape"),
                    format!("must be > 1 with a mean_size (a Pareto mean is finite only for α > 1), got {s}"),
                ));
            }
            (s, mean * (s - 1.0) / s)
        }
        (None, Some(m), Some(mean)) => {
            if mean <= m {
                return Err(Error::field(
                    format!("{af}.mean_size"),
                    format!("must exceed min_size ({m} bytes), got {mean} bytes"),
                ));
            }
            // mean = α·m/(α−1) solved for α.
            (mean / (mean - m), m)
        }
        _ => {
            return Err(Error::field(
                af,
                "give exactly two of shape, min_size and mean_size (Pareto sizes)",
            ))
        }
    };
    let max_active = match a.max_active {
        None => DEFAULT_MAX_ACTIVE,
        Some(n) if (1..=100_000).contains(&n) => n as usize,
        Some(n) => {
            return Err(Error::field(
                format!("{af}.max_active"),
                format!("must be in 1..=100000, got {n}"),
            ))
        }
    };
    Ok(Arrivals {
        rate_per_s,
        shape,
        min_size_bytes,
        max_active,
    })
}

fn flow_count(count: Option<i64>, field: &str) -> Result<usize> {
    let count = count.unwrap_or(1);
    if !(1..=100_000).contains(&count) {
        return Err(Error::field(
            format!("{field}.count"),
            format!("must be in 1..=100000, got {count}"),
        ));
    }
    Ok(count as usize)
}

/// A base RTT within [`RTT_S`].
fn rtt(field: &str, v: f64) -> Result<f64> {
    in_range(field, positive(field, v)?, RTT_S, RTT_WHY)
}

/// One RTT per flow of the group; `field` is the group's `rtt`.
fn flow_rtts(rtt_spec: &RttSpec, n: usize, rf: &str) -> Result<Vec<f64>> {
    Ok(match rtt_spec {
        RttSpec::One(r) => vec![rtt(rf, *r)?; n],
        RttSpec::List(v) => {
            if v.len() != n {
                return Err(Error::field(
                    rf,
                    format!("lists {} RTTs for {n} flows", v.len()),
                ));
            }
            v.iter()
                .enumerate()
                .map(|(i, &r)| rtt(&format!("{rf}[{i}]"), r))
                .collect::<Result<_>>()?
        }
        RttSpec::Range(a, b) => {
            let (a, b) = (rtt(rf, *a)?, rtt(rf, *b)?);
            if b < a {
                return Err(Error::field(rf, "range must go from low to high"));
            }
            (0..n)
                .map(|k| {
                    if n == 1 {
                        a
                    } else {
                        a + (b - a) * k as f64 / (n - 1) as f64
                    }
                })
                .collect()
        }
    })
}

/// A start time, within the longest run.
fn start_time(field: &str, t: f64) -> Result<f64> {
    in_range(
        field,
        non_negative(field, t)?,
        (0.0, MAX_DURATION_S),
        "seconds: the longest run",
    )
}

/// One start time per flow of group `g`; `sf` is the group's `start`. Uniform draws use stream
/// 1000 + g of the run's seed, so they do not depend on other groups.
fn flow_starts(
    start: Option<&StartSpec>,
    n: usize,
    sf: &str,
    seed: u64,
    g: usize,
) -> Result<Vec<f64>> {
    Ok(match start {
        None => vec![0.0; n],
        Some(StartSpec::At(t)) => vec![start_time(sf, *t)?; n],
        Some(StartSpec::List(v)) => {
            if v.len() != n {
                return Err(Error::field(
                    sf,
                    format!("lists {} start times for {n} flows", v.len()),
                ));
            }
            v.iter()
                .enumerate()
                .map(|(i, &t)| start_time(&format!("{sf}[{i}]"), t))
                .collect::<Result<_>>()?
        }
        Some(StartSpec::Uniform(a, b)) => {
            let (a, b) = (start_time(sf, *a)?, start_time(sf, *b)?);
            if b < a {
                return Err(Error::field(
                    sf,
                    "uniform interval must go from low to high",
                ));
            }
            let mut rng = crate::rng::Rng::new(seed, 1000 + g as u64);
            (0..n).map(|_| a + (b - a) * rng.uniform()).collect()
        }
    })
}

/// The receive window in packets (infinite without `rwnd`).
fn flow_rwnd(rwnd: Option<&WindowSpec>, packet_size: f64, field: &str) -> Result<f64> {
    let rwnd_pkts = match rwnd {
        None => f64::INFINITY,
        Some(w) => match (w.packets, w.bytes) {
            (Some(p), None) => window(&format!("{field}.rwnd.packets"), p, packet_size)?,
            (None, Some(b)) => {
                let f = format!("{field}.rwnd.bytes");
                window(&f, positive(&f, b.0)? / packet_size, packet_size)?
            }
            _ => {
                return Err(Error::field(
                    format!("{field}.rwnd"),
                    "give exactly one of packets, bytes",
                ))
            }
        },
    };
    if rwnd_pkts < 1.0 {
        return Err(Error::field(
            format!("{field}.rwnd"),
            "must allow at least one packet",
        ));
    }
    Ok(rwnd_pkts)
}

/// Link indices of the path (the dumbbell's one link by default). A path crosses each link at
/// most once, and when links name their end nodes it is connected (each link starts where the
/// one before it ends) and passes no node twice. Errors name the element: `flows[g].path[i]`.
fn flow_path(
    path: Option<&[String]>,
    dumbbell: bool,
    names: &[String],
    link_specs: &[(String, &LinkSpec)],
    field: &str,
) -> Result<Vec<usize>> {
    let path: &[String] = match path {
        None if dumbbell => return Ok(vec![0]),
        None => {
            return Err(Error::field(
                format!("{field}.path"),
                "needed when links are named",
            ))
        }
        Some([]) => {
            return Err(Error::field(
                format!("{field}.path"),
                "must name at least one link",
            ))
        }
        Some(p) => p,
    };
    let mut links: Vec<usize> = Vec::with_capacity(path.len());
    for (i, name) in path.iter().enumerate() {
        let at = format!("{field}.path[{i}]");
        let Some(l) = names.iter().position(|n| n == name) else {
            return Err(Error::field(
                at,
                format!("unknown link {name:?} (links: {})", names.join(", ")),
            ));
        };
        if let Some(j) = links.iter().position(|&k| k == l) {
            return Err(Error::field(
                at,
                format!("link {name:?} again (path[{j}]): a path crosses a link once, no loop"),
            ));
        }
        if let Some(&prev) = links.last() {
            let (a, b) = (link_specs[prev].1, link_specs[l].1);
            if let (Some(end), Some(start)) = (&a.to, &b.from) {
                if end != start {
                    return Err(Error::field(
                        at,
                        format!(
                            "link {name:?} starts at node {start:?}, not at {end:?} where \
                             path[{}] ({:?}) ends: a path must be connected",
                            i - 1,
                            path[i - 1]
                        ),
                    ));
                }
            }
            // Connected so far: a loop comes back to a node the path has left.
            if let Some(to) = &b.to {
                let first = link_specs[links[0]].1.from.as_ref();
                let left = links.iter().map(|&k| link_specs[k].1.to.as_ref());
                if std::iter::once(first).chain(left).any(|n| n == Some(to)) {
                    return Err(Error::field(
                        at,
                        format!("link {name:?} returns to node {to:?}: a path has no loop"),
                    ));
                }
            }
        }
        links.push(l);
    }
    Ok(links)
}

/// Linux's pacing ratios by default: `tcp_pacing_ss_ratio = 200`, `tcp_pacing_ca_ratio = 120`.
fn flow_pacing(pacing: Option<&PacingSpec>, field: &str) -> Result<Option<Pacing>> {
    Ok(match pacing {
        None | Some(BoolOr::Bool(false)) => None,
        Some(BoolOr::Bool(true)) => Some(Pacing {
            ss_ratio: 2.0,
            ca_ratio: 1.2,
        }),
        Some(BoolOr::Table(r)) => {
            let ratio = |name: &str, v: f64| {
                let f = format!("{field}.pacing.{name}");
                in_range(
                    &f,
                    positive(&f, v)?,
                    (0.0, MAX_PACING_RATIO),
                    "Linux allows 0 to 1000 percent",
                )
            };
            Some(Pacing {
                ss_ratio: ratio("ss_ratio", r.ss_ratio.unwrap_or(2.0))?,
                ca_ratio: ratio("ca_ratio", r.ca_ratio.unwrap_or(1.2))?,
            })
        }
    })
}

/// Whether the group sends along the reverse direction of its path.
fn flow_direction(direction: Option<&str>, field: &str) -> Result<bool> {
    match direction.unwrap_or("forward") {
        "forward" => Ok(false),
        "reverse" => Ok(true),
        other => Err(Error::field(
            format!("{field}.direction"),
            format!("unknown direction {other:?} (forward, reverse)"),
        )),
    }
}

/// RFC 5681 §4.2: an ACK for at least every second full-sized segment; RFC 1122 §4.2.3.2: within
/// 0.5 s. 200 ms is ns-3's DelAckTimeout default (Linux adapts between 40 and 200).
fn flow_delayed_ack(d: Option<&DelayedAckSpec>, field: &str) -> Result<Option<DelayedAck>> {
    Ok(match d {
        None | Some(BoolOr::Bool(false)) => None,
        Some(BoolOr::Bool(true)) => Some(DelayedAck {
            count: 2,
            timeout_s: 0.2,
        }),
        Some(BoolOr::Table(d)) => {
            let count = d.count.unwrap_or(2);
            if !(1..=64).contains(&count) {
                return Err(Error::field(
                    format!("{field}.delayed_ack.count"),
                    format!("must be in 1..=64, got {count}"),
                ));
            }
            Some(DelayedAck {
                count: count as u32,
                timeout_s: {
                    let f = format!("{field}.delayed_ack.timeout");
                    in_range(
                        &f,
                        positive(&f, d.timeout.map_or(0.2, |t| t.0))?,
                        (0.0, MAX_DELACK_TIMEOUT_S),
                        "seconds: an ACK is due within 500 ms, RFC 1122 §4.2.3.2",
                    )?
                },
            })
        }
    })
}

/// 40 B by default: IPv4 and TCP headers without options (RFC 791, RFC 9293).
fn flow_ack_size(ack_size: Option<Bytes>, packet_size: f64, field: &str) -> Result<f64> {
    let f = format!("{field}.ack_size");
    let ack_size_bytes = positive(&f, ack_size.map_or(40.0, |b| b.0))?;
    if ack_size_bytes < PACKET_BYTES.0 {
        return Err(Error::field(
            f,
            format!("{ack_size_bytes} B is less than the IPv4 and TCP headers (40 B)"),
        ));
    }
    if ack_size_bytes > packet_size {
        return Err(Error::field(
            format!("{field}.ack_size"),
            format!("{ack_size_bytes} B is larger than a data packet ({packet_size} B)"),
        ));
    }
    Ok(ack_size_bytes)
}

/// Connections per flow of the group.
fn flow_parallel(parallel: Option<i64>, field: &str) -> Result<usize> {
    let parallel = parallel.unwrap_or(1);
    if !(1..=64).contains(&parallel) {
        return Err(Error::field(
            format!("{field}.parallel"),
            format!("must be in 1..=64 connections, got {parallel}"),
        ));
    }
    Ok(parallel as usize)
}

/// The `tcp` model's burst headroom and drops per loss event: given (`burst_pkts` or
/// `burst_per_sqrt_buffer`, `event_threshold`), read from a calibration file (`calibration`,
/// written by `lossync calibrate`), or the defaults. The headroom stays below every buffer, since
/// a queue must hold at least one packet.
fn resolve_tcp(l: &LossSpec, links: &[Link], base_dir: &Path) -> Result<LossModel> {
    let given = [
        ("loss.burst_pkts", l.burst_pkts.is_some()),
        (
            "loss.burst_per_sqrt_buffer",
            l.burst_per_sqrt_buffer.is_some(),
        ),
        ("loss.event_threshold", l.event_threshold.is_some()),
        ("loss.fitted_buffer_pkts", l.fitted_buffer_pkts.is_some()),
    ];
    let (cal, calibration) = match &l.calibration {
        Some(file) => {
            if let Some((name, _)) = given.iter().find(|(_, g)| *g) {
                return Err(Error::field(
                    *name,
                    "give the parameters or a calibration file, not both",
                ));
            }
            let path = base_dir.join(file);
            let cal = super::calibration::read(&path)?;
            (cal, Some(path.display().to_string()))
        }
        None => (
            super::calibration::Calibration {
                burst_pkts: l.burst_pkts,
                burst_per_sqrt_buffer: l.burst_per_sqrt_buffer,
                event_threshold: l.event_threshold.unwrap_or(1.0),
                fitted_buffer_pkts: l.fitted_buffer_pkts,
            },
            None,
        ),
    };
    // A value from a calibration file names the file, as its parse errors do.
    let name = |own: &str| match &calibration {
        Some(path) => format!("loss.calibration: {path}: {own}"),
        None => own.to_string(),
    };
    if cal.burst_pkts.is_some() && cal.burst_per_sqrt_buffer.is_some() {
        return Err(Error::field(
            name("loss.burst_per_sqrt_buffer"),
            "give burst_pkts or burst_per_sqrt_buffer, not both",
        ));
    }
    in_range(
        &name("loss.event_threshold"),
        cal.event_threshold,
        (0.01, 100.0),
        "a scale of the drops per loss event, 1 by default",
    )?;
    if let Some(b) = cal.burst_pkts {
        non_negative(&name("loss.burst_pkts"), b)?;
        // Below every buffered link's buffer; a bufferless link takes no headroom.
        let smallest = smallest_buffer_pkts(links).unwrap_or(f64::INFINITY);
        if b > 0.0 && b >= smallest {
            return Err(Error::field(
                name("loss.burst_pkts"),
                format!("{b} packets of burst headroom is not below the smallest buffer ({smallest} packets)"),
            ));
        }
    }
    if let Some(c) = cal.burst_per_sqrt_buffer {
        non_negative(&name("loss.burst_per_sqrt_buffer"), c)?;
        // c·√B < B on every buffered link (B > c²: the smallest decides).
        if let Some(buffered) =
            smallest_buffer_pkts(links).filter(|&b| c > 0.0 && c * b.sqrt() >= b)
        {
            return Err(Error::field(
                name("loss.burst_per_sqrt_buffer"),
                format!(
                    "{c}·√B = {:.3} packets of burst headroom is not below the smallest buffer ({buffered} packets)",
                    c * buffered.sqrt()
                ),
            ));
        }
    }
    if let Some(b) = l.fitted_buffer_pkts {
        in_range(
            "loss.fitted_buffer_pkts",
            b,
            super::limits::FITTED_BUFFER_PKTS,
            "the smallest buffer the parameters were fitted at, in packets",
        )?;
    }
    if let Some(g) = l.growth_share {
        in_range(
            "loss.growth_share",
            g,
            (0.0, 1.0),
            "the fraction of overflow drops charged to window growth",
        )?;
    }
    Ok(LossModel::Tcp {
        burst_pkts: cal.burst_pkts,
        burst_per_sqrt_buffer: cal.burst_per_sqrt_buffer,
        event_threshold: cal.event_threshold,
        growth_share: l.growth_share,
        calibration,
        fitted_buffer_pkts: cal.fitted_buffer_pkts,
    })
}

/// The loss model; `sync`, `policy`, `reductions_per_event` and `holdoff` only with `sync`
/// (errors with `proportional` and `tcp`).
fn resolve_loss(
    l: &LossSpec,
    links: &[Link],
    flows: &[Flow],
    base_dir: &Path,
) -> Result<LossModel> {
    // The default is `tcp`, validated against the packet engine (docs/validation/fidelity.md);
    // XCP senders, whose fluid form was validated under the rate model only, keep `proportional`.
    let default = if flows.iter().any(|f| matches!(f.cc, CcParams::Xcp(_))) {
        "proportional"
    } else {
        "tcp"
    };
    let model = l.model.as_deref().unwrap_or(default);
    // Each model's own fields; another model's are refused, never silently ignored.
    let own: [(&str, &str, bool); 10] = [
        ("sync", "sync", l.sync.is_some()),
        ("policy", "sync", l.policy.is_some()),
        (
            "reductions_per_event",
            "sync",
            l.reductions_per_event.is_some(),
        ),
        ("holdoff", "sync", l.holdoff.is_some()),
        ("burst_pkts", "tcp", l.burst_pkts.is_some()),
        (
            "burst_per_sqrt_buffer",
            "tcp",
            l.burst_per_sqrt_buffer.is_some(),
        ),
        ("event_threshold", "tcp", l.event_threshold.is_some()),
        ("growth_share", "tcp", l.growth_share.is_some()),
        ("calibration", "tcp", l.calibration.is_some()),
        ("fitted_buffer_pkts", "tcp", l.fitted_buffer_pkts.is_some()),
    ];
    if matches!(model, "proportional" | "tcp" | "sync") {
        if let Some((name, owner, _)) = own.iter().find(|(_, o, given)| *given && *o != model) {
            return Err(Error::field(
                format!("loss.{name}"),
                format!("only applies to model = \"{owner}\""),
            ));
        }
    }
    match model {
        "proportional" => Ok(LossModel::Proportional),
        "tcp" => resolve_tcp(l, links, base_dir),
        "sync" => {
            // The smallest number of flows on any link bounds a fixed m.
            let at_links: Vec<usize> = (0..links.len())
                .map(|i| flows.iter().filter(|f| f.path.contains(&i)).count())
                .filter(|&n| n > 0)
                .collect();
            let n_min = at_links.iter().copied().min().unwrap_or(0);
            let n_max = at_links.iter().copied().max().unwrap_or(0);
            let sync = resolve_sync(
                l.sync.clone().unwrap_or(SyncSpec::All),
                (n_min, n_max),
                base_dir,
            )?;
            let policy = resolve_policy(l.policy.as_deref())?;
            let reductions_per_event = l.reductions_per_event.unwrap_or(1.0);
            if !(reductions_per_event.is_finite()
                && reductions_per_event > 0.0
                && reductions_per_event <= 64.0)
            {
                return Err(Error::field(
                    "loss.reductions_per_event",
                    "must be in (0, 64]",
                ));
            }
            let holdoff_s = match l.holdoff {
                None => None,
                Some(t) => Some(in_range(
                    "loss.holdoff",
                    non_negative("loss.holdoff", t.0)?,
                    (0.0, MAX_DURATION_S),
                    "seconds: the longest run",
                )?),
            };
            Ok(LossModel::Sync {
                sync,
                policy,
                reductions_per_event,
                holdoff_s,
            })
        }
        other => Err(Error::field(
            "loss.model",
            format!("unknown loss model {other:?} (known: proportional, tcp, sync)"),
        )),
    }
}

/// The synchronization controller; `n_min` and `n_max` are the fewest and the most flows at any
/// link (m is at most the first; a normal draw's mean and deviation, at most the second).
fn resolve_sync(sync: SyncSpec, (n_min, n_max): (usize, usize), base_dir: &Path) -> Result<Sync> {
    Ok(match sync {
        SyncSpec::All => Sync::All,
        SyncSpec::Fixed { m } => {
            if m.fract() != 0.0 {
                return Err(Error::field(
                    "loss.sync.m",
                    format!("must be a whole number of flows, got {m}"),
                ));
            }
            if !(1.0..=n_min as f64).contains(&m) {
                return Err(Error::field(
                    "loss.sync.m",
                    format!("must be in 1..={n_min} (the number of flows at the link), got {m}"),
                ));
            }
            Sync::Fixed { m: m as usize }
        }
        SyncSpec::Normal { x, mean, std } => {
            if !(x.is_finite() && x > 0.0 && x <= 1.0) {
                return Err(Error::field(
                    "loss.sync.x",
                    format!("must be in (0, 1], got {x}"),
                ));
            }
            // m is drawn in 1..=N: a mean or a deviation above N says nothing more.
            let why = "at most the number of flows at a link";
            if let Some(m) = mean {
                positive("loss.sync.mean", m)?;
                in_range("loss.sync.mean", m, (0.0, n_max as f64), why)?;
            }
            if let Some(s) = std {
                non_negative("loss.sync.std", s)?;
                in_range("loss.sync.std", s, (0.0, n_max as f64), why)?;
            }
            Sync::Normal { x, mean, std }
        }
        SyncSpec::Empirical {
            file,
            probabilities: None,
        } => {
            let Some(file) = file else {
                return Err(Error::field(
                    "loss.sync",
                    "give `file` (a CSV of m and its probability) or `probabilities`",
                ));
            };
            let path = base_dir.join(&file);
            let probabilities = read_m_distribution(&path, "loss.sync.file")?;
            if let Some(&(m, _)) = probabilities.iter().find(|&&(m, _)| m > n_min) {
                return Err(Error::field(
                    "loss.sync.file",
                    format!(
                        "{}: m = {m} exceeds the {n_min} flows at the link",
                        path.display()
                    ),
                ));
            }
            Sync::Empirical {
                file: Some(path.display().to_string()),
                probabilities,
            }
        }
        SyncSpec::Empirical {
            file,
            probabilities: Some(probabilities),
        } => Sync::Empirical {
            // Recorded, not read: the probabilities are given.
            file: file.map(|f| base_dir.join(f).display().to_string()),
            probabilities: inline_m_distribution(probabilities, n_min)?,
        },
    })
}

/// `probabilities = [[m, p], ...]`: each m in 1..=n_min, each p ≥ 0, adding up to 1 (within
/// 1e-9). Used as given, not normalised again, so a resolved scenario written out reads back
/// bit for bit.
fn inline_m_distribution(p: Vec<(usize, f64)>, n_min: usize) -> Result<Vec<(usize, f64)>> {
    let field = "loss.sync.probabilities";
    if p.is_empty() {
        return Err(Error::field(
            field,
            "must list at least one [m, probability]",
        ));
    }
    for (i, &(m, w)) in p.iter().enumerate() {
        if m == 0 || m > n_min {
            return Err(Error::field(
                format!("{field}[{i}]"),
                format!("m = {m} is not in 1..={n_min} (the number of flows at the link)"),
            ));
        }
        if !(w.is_finite() && w >= 0.0) {
            return Err(Error::field(
                format!("{field}[{i}]"),
                format!("must be a probability ≥ 0, got {w}"),
            ));
        }
    }
    let total: f64 = p.iter().map(|&(_, w)| w).sum();
    if (total - 1.0).abs() > 1e-9 {
        return Err(Error::field(
            field,
            format!("must add up to 1, they add up to {total}"),
        ));
    }
    Ok(p)
}

/// The drop policy (`highest_rate` by default, the paper's).
fn resolve_policy(policy: Option<&str>) -> Result<DropPolicy> {
    Ok(match policy.unwrap_or("highest_rate") {
        "highest_rate" => DropPolicy::HighestRate,
        "largest_window" => DropPolicy::LargestWindow,
        "random" => DropPolicy::Random,
        "round_robin" => DropPolicy::RoundRobin,
        other => {
            return Err(Error::field(
                "loss.policy",
                format!("unknown policy {other:?} (known: highest_rate, largest_window, random, round_robin)"),
            ))
        }
    })
}
