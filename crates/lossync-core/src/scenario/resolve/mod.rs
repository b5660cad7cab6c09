//! From what a file says to what a run uses: validation with errors that name their field, and
//! every default. Here the entry, [`resolve`], and the run and its step; the links, the flows and
//! the loss model each have a file, on the field checkers of `validate`.

mod flows;
mod links;
mod loss;
mod validate;

pub use flows::{DEFAULT_MAX_ACTIVE, MAX_ARRIVAL_RATE_PER_S};

use super::file::*;
use super::limits::*;
use super::model::*;
use crate::error::{Error, Result};
use flows::{check_rtts_cover_paths, check_xcp_flows_meet_xcp_routers, resolve_flows};
use links::{check_endpoints, check_packet_sizes, link_packet_size, link_table, resolve_links};
use loss::resolve_loss;
use std::path::Path;
use validate::{non_negative, positive, up_to};

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

/// The engine's name: the core's engines, or one outside it (the front end's registry refuses a
/// name it lacks). Only its spelling is checked here.
fn resolve_engine(engine: Option<&str>) -> Result<Engine> {
    let name = engine.unwrap_or("fluid");
    Engine::from_name(name).ok_or_else(|| {
        Error::field(
            "engine",
            format!(
                "{name:?} is not an engine name (letters, digits, - and _, starting with a letter)"
            ),
        )
    })
}

/// The run's length, warm-up and seed; the step and the record interval follow from the flows
/// ([`resolve_step`]).
fn resolve_run(r: &RunSpec) -> Result<Run> {
    let duration_s = up_to(
        "run.duration",
        r.duration.map_or(100.0, |t| t.0),
        MAX_DURATION_S,
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
        threads: match r.threads {
            None => 0,
            Some(n) if (1..=MAX_THREADS).contains(&n) => n as usize,
            Some(n) => {
                return Err(Error::field(
                    "run.threads",
                    format!("must be in 1..={MAX_THREADS}, got {n}"),
                ))
            }
        },
        scheduler: r.scheduler.unwrap_or_default(),
        series_flows: match r.series_flows {
            None => DEFAULT_SERIES_FLOWS,
            Some(n) if (0..=MAX_FLOWS as i64).contains(&n) => n as usize,
            Some(n) => {
                return Err(Error::field(
                    "run.series_flows",
                    format!("must be a whole number of flows in 0..={MAX_FLOWS}, got {n}"),
                ))
            }
        },
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
            format!(
                "must be at least one step (run.step, {step_s} s; a shorter run.step allows a \
                 finer series)"
            ),
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
                format!("must be at least one step (run.step, {step_s} s)"),
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
