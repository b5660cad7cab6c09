//! Resolving the loss model: `proportional`, `tcp` (burst headroom, calibration files) and
//! `sync` (the m-distribution and the drop policy).

use super::validate::*;
use crate::cc::CcParams;
use crate::error::{Error, Result};
use crate::scenario::empirical::read_m_distribution;
use crate::scenario::file::*;
use crate::scenario::limits::*;
use crate::scenario::model::*;
use std::path::Path;

/// The loss model; `sync`, `policy`, `reductions_per_event`, `holdoff` and `recovery_pause` only with `sync`
/// (errors with `proportional` and `tcp`).
pub(super) fn resolve_loss(
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
    let own: [(&str, &str, bool); 11] = [
        ("sync", "sync", l.sync.is_some()),
        ("policy", "sync", l.policy.is_some()),
        (
            "reductions_per_event",
            "sync",
            l.reductions_per_event.is_some(),
        ),
        ("holdoff", "sync", l.holdoff.is_some()),
        ("recovery_pause", "sync", l.recovery_pause.is_some()),
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
                recovery_pause: l.recovery_pause.unwrap_or(false),
            })
        }
        other => Err(Error::field(
            "loss.model",
            format!("unknown loss model {other:?} (known: proportional, tcp, sync)"),
        )),
    }
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
            let cal = crate::scenario::calibration::read(&path)?;
            (cal, Some(path.display().to_string()))
        }
        None => (
            crate::scenario::calibration::Calibration {
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
            crate::scenario::limits::FITTED_BUFFER_PKTS,
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
                up_to("loss.sync.mean", m, n_max as f64, why)?;
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
