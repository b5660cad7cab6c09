//! Resolving the flow groups: counts, RTTs, starts, receive windows, paths, pacing, delayed
//! ACKs, dynamic arrivals and parallel connections, and the checks of flows against links.

use super::validate::*;
use crate::cc::{self, CcParams, EcnUse};
use crate::error::{Error, Result};
use crate::scenario::file::*;
use crate::scenario::limits::*;
use crate::scenario::model::*;
use crate::units::Bytes;

/// Every flow group, expanded to one [`Flow`] per connection (ACK paths are filled in by
/// [`resolve_links`]).
///
/// [`resolve_links`]: super::links::resolve_links
pub(super) fn resolve_flows(
    spec: &ScenarioSpec,
    names: &[String],
    link_specs: &[(String, &LinkSpec)],
    seed: u64,
) -> Result<Vec<Flow>> {
    let packet_size = link_specs[0].1.packet_size.map_or(1500.0, |b| b.0);
    let mut flows = Vec::new();
    let mut group_names: Vec<String> = Vec::with_capacity(spec.flows.len());
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
        let ecn = flow_ecn(fs.ecn, &cc, &field)?;
        // An L4S sender paces (draft-briscoe-iccrg-prague-congestion-control-04), at Linux's
        // ratios unless the group says otherwise.
        let l4s_default = matches!(cc.ecn(), EcnUse::Scalable { l4s: true }) && fs.pacing.is_none();
        let pacing = if l4s_default {
            flow_pacing(Some(&BoolOr::Bool(true)), &field)?
        } else {
            flow_pacing(fs.pacing.as_ref(), &field)?
        };
        let reverse = flow_direction(fs.direction.as_deref(), &field)?;
        let delayed_ack = flow_delayed_ack(fs.delayed_ack.as_ref(), &field)?;
        let recovery = match fs.recovery.as_deref() {
            None | Some("rfc6675") => LossRecovery::Rfc6675,
            Some("prr") => LossRecovery::Prr,
            Some(other) => {
                return Err(Error::field(
                    format!("{field}.recovery"),
                    format!("unknown fast recovery {other:?} (known: rfc6675, prr)"),
                ))
            }
        };
        let loss_detection = named_option(
            fs.loss_detection.as_deref(),
            &LossDetection::NAMES,
            LossDetection::from_name,
            format!("{field}.loss_detection"),
            "loss detection",
        )?;
        let hystart = named_option(
            fs.hystart.as_deref(),
            &Hystart::NAMES,
            Hystart::from_name,
            format!("{field}.hystart"),
            "slow-start exit",
        )?;
        if hystart != Hystart::Off {
            let law = cc.build();
            if !law.slow_starts() || law.wants_rate_samples() {
                return Err(Error::field(
                    format!("{field}.hystart"),
                    format!(
                        "{} sets its own window: HyStart only ends a window law's slow start",
                        cc.name()
                    ),
                ));
            }
        }
        let ack_size_bytes = flow_ack_size(fs.ack_size, packet_size, &field)?;
        let access_capacity_bps = fs
            .access_capacity
            .map(|r| rate(&format!("{field}.access_capacity"), r.0))
            .transpose()?;
        let parallel = flow_parallel(fs.parallel, &field)?;
        // A connection starts in slow start (RFC 5681 §3.1) from an initial window of 10 (RFC
        // 6928), as a TCP user expects; the seed paper's fluid runs have none and say so.
        let slow_start = fs.slow_start.unwrap_or(true);
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
        // A group's name keys its rows of the results (compare's group columns, the summaries'
        // `group`): two groups of one name were merged there.
        if let Some(h) = group_names.iter().position(|x| *x == group_name) {
            return Err(Error::field(
                format!("{field}.name"),
                format!("{group_name:?} names flows[{h}] too; each group needs a name of its own"),
            ));
        }
        group_names.push(group_name.clone());
        if flows.len() + n * parallel > MAX_FLOWS {
            return Err(Error::field(
                format!("{field}.count"),
                format!(
                    "would bring the scenario to {} connections, more than {MAX_FLOWS} in all",
                    flows.len() + n * parallel
                ),
            ));
        }
        flows.reserve(n * parallel);
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
                ecn,
                ack_path: Vec::new(),
                reverse,
                delayed_ack,
                ack_size_bytes,
                access_capacity_bps,
                logical,
                send_jitter_s,
                arrivals,
                recovery,
                loss_detection,
                hystart,
                undo: fs.undo.unwrap_or(false),
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
    let rate_per_s = up_to(
        &format!("{af}.rate"),
        a.rate,
        MAX_ARRIVAL_RATE_PER_S,
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
        .map(|s| up_to(&format!("{af}.shape"), s, 1e3, "the Pareto shape α"))
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
    if !(1..=MAX_FLOWS as i64).contains(&count) {
        return Err(Error::field(
            format!("{field}.count"),
            format!("must be in 1..={MAX_FLOWS}, got {count}"),
        ));
    }
    Ok(count as usize)
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
            if n == 1 && b > a {
                // Which RTT of the range one flow should have is anyone's guess: say it.
                return Err(Error::field(
                    rf,
                    "a range spreads the RTTs of two or more flows; give one flow one RTT",
                ));
            }
            (0..n)
                .map(|k| a + (b - a) * k as f64 / (n - 1).max(1) as f64)
                .collect()
        }
    })
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

/// Whether the group's flows are ECN-capable: by default when ECN is the law's signal.
fn flow_ecn(ecn: Option<bool>, cc: &CcParams, field: &str) -> Result<bool> {
    match (ecn, cc.ecn()) {
        (Some(true), EcnUse::Incapable) => Err(Error::field(
            format!("{field}.ecn"),
            format!("{} does not use ECN (its packets are Not-ECT)", cc.name()),
        )),
        (Some(on), _) => Ok(on),
        (None, use_) => Ok(matches!(use_, EcnUse::Scalable { .. })),
    }
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
                up_to(&f, v, MAX_PACING_RATIO, "Linux allows 0 to 1000 percent")
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
                    up_to(
                        &f,
                        d.timeout.map_or(0.2, |t| t.0),
                        MAX_DELACK_TIMEOUT_S,
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

/// A flow's base RTT includes the propagation delay of its path, there and back.
pub(super) fn check_rtts_cover_paths(links: &[Link], flows: &[Flow]) -> Result<()> {
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
pub(super) fn check_xcp_flows_meet_xcp_routers(links: &[Link], flows: &[Flow]) -> Result<()> {
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

/// A flow group's named option: its default when absent, else one of `names`.
fn named_option<T: Default>(
    given: Option<&str>,
    names: &[&str],
    from_name: impl Fn(&str) -> Option<T>,
    field: String,
    what: &str,
) -> Result<T> {
    match given {
        None => Ok(T::default()),
        Some(name) => from_name(name).ok_or_else(|| {
            Error::field(
                field,
                format!("unknown {what} {name:?} (known: {})", names.join(", ")),
            )
        }),
    }
}
