//! Resolving the links: the link table and its end nodes, packet sizes, the reverse directions,
//! buffers, queue disciplines, and optical burst switching (assemblers, contention).

use super::validate::*;
use crate::error::{Error, Result};
use crate::queue::Site;
use crate::scenario::empirical::read_m_distribution;
use crate::scenario::file::*;
use crate::scenario::limits::*;
use crate::scenario::model::*;
use crate::units::short;
use std::path::Path;

/// The links as written, each with its field path (`dumbbell` or `links[i]`), and their names:
/// the dumbbell shorthand or a named list, not both.
#[allow(clippy::type_complexity)]
pub(super) fn link_table(spec: &ScenarioSpec) -> Result<(Vec<(String, &LinkSpec)>, Vec<String>)> {
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

/// Each link names both its end nodes (two different ones) or neither, and every link does or
/// none does: paths are checked to be connected when they do (`flow_path`).
pub(super) fn check_endpoints(link_specs: &[(String, &LinkSpec)]) -> Result<()> {
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

/// A link's packet size in bytes (1500 by default); `field` is the link's.
pub(super) fn link_packet_size(field: &str, l: &LinkSpec) -> Result<f64> {
    let f = format!("{field}.packet_size");
    let bytes = in_range(
        &f,
        l.packet_size.map_or(1500.0, |b| b.0),
        PACKET_BYTES,
        "bytes: at least the IPv4 and TCP headers, at most the largest IPv4 datagram",
    )?;
    // A packet on the wire is whole bytes (a trace wrote 1500.5 as 1501).
    if bytes.fract() != 0.0 {
        return Err(Error::field(
            f,
            format!("must be a whole number of bytes, got {bytes}"),
        ));
    }
    Ok(bytes)
}

/// Windows and queues count packets, so every link must use one packet size.
pub(super) fn check_packet_sizes(links: &[Link], link_specs: &[(String, &LinkSpec)]) -> Result<()> {
    let sizes: Vec<f64> = links.iter().map(|l| l.packet_size_bytes).collect();
    if let Some(i) = sizes.iter().position(|&s| s != sizes[0]) {
        return Err(Error::field(
            format!("{}.packet_size", link_specs[i].0),
            "all links must use the same packet size (windows and queues count packets)",
        ));
    }
    Ok(())
}

/// The links as given, then the reverse directions (asked for with `reverse`, or needed by a
/// flow with `direction = "reverse"`), each named `<link>-reverse`. Moves reverse flows onto
/// those and fills every flow's ACK path.
pub(super) fn resolve_links(
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
        // The reverse direction's name must not be a link of the scenario's own: the summary,
        // the series and `--pcap` name links by their names.
        let reverse_name = format!("{}-reverse", names[i]);
        if let Some(j) = names.iter().position(|n| *n == reverse_name) {
            return Err(Error::field(
                format!("{}.name", link_specs[j].0),
                format!(
                    "{reverse_name:?} is also the name of {field}'s reverse direction; rename one"
                ),
            ));
        }
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
            &reverse_name,
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
    match queue {
        None => Ok(Queue::default()),
        Some(q) => crate::queue::read(&q.discipline, &q.params, qf, Site { buffer_pkts }),
    }
}

/// The most wavelengths and fibre delay lines of a link, and the longest FDL delay.
const WAVELENGTHS_MAX: i64 = 1 << 12;
const FDLS_MAX: i64 = 1 << 12;
const FDL_DELAY_MAX_S: f64 = 1.0;
/// The most background load (a busy core's hundreds of wavelengths), and the range of its
/// bursts' mean holding time: from 100 ns (a dozen 1000-byte segments at 1 Tb/s) to a second.
const BACKGROUND_ERLANGS_MAX: f64 = 4096.0;
const BACKGROUND_BURST_S: (f64, f64) = (1e-7, 1.0);

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
        (_, Some(d)) => up_to(&df, d.0, FDL_DELAY_MAX_S, "seconds")?,
    };
    let bf = format!("{field}.background_burst");
    let (background_erlangs, background_burst_s) = match (c.background, c.background_burst) {
        (None, None) => (0.0, 0.0),
        (None, Some(_)) => {
            return Err(Error::field(bf, "needs `background` (its load in erlangs)"))
        }
        (Some(a), b) => {
            let af = format!("{field}.background");
            let a = in_range(
                &af,
                a,
                (0.0, BACKGROUND_ERLANGS_MAX),
                "erlangs of offered load",
            )?;
            let b = match b {
                Some(d) => in_range(&bf, d.0, BACKGROUND_BURST_S, "seconds")?,
                None if a > 0.0 => return Err(Error::field(
                    bf,
                    "needed with `background`: the mean holding time of its bursts, e.g. \"14us\"",
                )),
                None => 0.0,
            };
            // A zero load has no bursts for a holding time to describe.
            if a > 0.0 {
                (a, b)
            } else {
                (0.0, 0.0)
            }
        }
    };
    Ok(Contention {
        wavelengths,
        fdls,
        fdl_delay_s,
        background_erlangs,
        background_burst_s,
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
