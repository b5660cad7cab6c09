//! What a run may allocate. Engines estimate their memory from the resolved scenario before
//! allocating anything and refuse, naming the field to change, rather than let the allocator
//! abort the process (in a sweep that would kill a worker and every run queued on it).

/// The budget when the machine's available memory cannot be read.
const FALLBACK_LIMIT_BYTES: f64 = 8.0 * GIB;
const GIB: f64 = (1u64 << 30) as f64;

/// The bytes a run may use: the least of what the kernel reports available now (`MemAvailable`
/// in /proc/meminfo), what the process's address-space limit leaves (`ulimit -v`, RLIMIT_AS,
/// getrlimit(2): the limit less the address space in use) and what its memory cgroup leaves
/// (v2 `memory.max` − `memory.current`, v1 `memory.limit_in_bytes` − `memory.usage_in_bytes`);
/// 8 GiB if none can be read. A run past any of these would abort in the allocator.
pub fn limit_bytes() -> f64 {
    let read = |p: &str| std::fs::read_to_string(p).ok();
    let available = read("/proc/meminfo").and_then(|m| kib_field(&m, "MemAvailable:"));
    let address_space = match (read("/proc/self/limits"), read("/proc/self/status")) {
        (Some(limits), Some(status)) => address_space_left(&limits, &status),
        _ => None,
    };
    let cgroup = cgroup_dirs()
        .into_iter()
        .filter_map(|(dir, limit, usage)| {
            cgroup_left(
                &read(&format!("{dir}/{limit}"))?,
                &read(&format!("{dir}/{usage}"))?,
            )
        })
        .reduce(f64::min);
    [available, address_space, cgroup]
        .into_iter()
        .flatten()
        .reduce(f64::min)
        .unwrap_or(FALLBACK_LIMIT_BYTES)
}

/// A `Name:   123 kB` field of /proc/meminfo or /proc/self/status, in bytes.
fn kib_field(text: &str, name: &str) -> Option<f64> {
    let line = text.lines().find(|l| l.starts_with(name))?;
    let kib: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024.0)
}

/// The address space RLIMIT_AS still allows: its soft limit ("Max address space" in
/// /proc/self/limits, proc(5)) less the process's address space now (`VmSize`); None if unlimited.
fn address_space_left(limits: &str, status: &str) -> Option<f64> {
    let line = limits
        .lines()
        .find(|l| l.starts_with("Max address space"))?;
    let soft: f64 = line["Max address space".len()..]
        .split_whitespace()
        .next()?
        .parse()
        .ok()?; // "unlimited" does not parse
    Some((soft - kib_field(status, "VmSize:")?).max(0.0))
}

/// A memory cgroup's limit less its usage (both in bytes); None where it has no limit ("max" in
/// v2, a number near 2^63 in v1).
fn cgroup_left(limit: &str, usage: &str) -> Option<f64> {
    let limit: f64 = limit.trim().parse().ok()?;
    let usage: f64 = usage.trim().parse().ok()?;
    (limit < (1u64 << 60) as f64).then(|| (limit - usage).max(0.0))
}

/// The folders of the process's memory cgroup (and of the mount's root, which is the cgroup
/// itself inside a container's cgroup namespace), with the names of their limit and usage files.
fn cgroup_dirs() -> Vec<(String, &'static str, &'static str)> {
    let Ok(own) = std::fs::read_to_string("/proc/self/cgroup") else {
        return Vec::new();
    };
    let mut dirs = Vec::new();
    for line in own.lines() {
        let mut parts = line.splitn(3, ':');
        let (_, controllers, path) = match (parts.next(), parts.next(), parts.next()) {
            (Some(id), Some(c), Some(p)) => (id, c, p),
            _ => continue,
        };
        let (mount, limit, usage) = if controllers.is_empty() {
            ("/sys/fs/cgroup", "memory.max", "memory.current")
        } else if controllers.split(',').any(|c| c == "memory") {
            (
                "/sys/fs/cgroup/memory",
                "memory.limit_in_bytes",
                "memory.usage_in_bytes",
            )
        } else {
            continue;
        };
        dirs.push((format!("{mount}{path}"), limit, usage));
        dirs.push((mount.to_string(), limit, usage));
    }
    dirs
}

/// Refuses an estimate above the limit, blaming `field`, which `what` explains.
pub fn check(engine: &str, bytes: f64, field: &str, what: &str) -> crate::Result<()> {
    let limit = limit_bytes();
    if bytes.is_finite() && bytes <= limit {
        return Ok(());
    }
    Err(crate::Error::field(
        field,
        format!(
            "the {engine} engine would need about {} GiB ({what}), more than the {:.1} GiB \
             available",
            if bytes / GIB < 1e4 {
                format!("{:.1}", bytes / GIB)
            } else {
                format!("{:.1e}", bytes / GIB)
            },
            limit / GIB
        ),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refuses_what_the_machine_cannot_hold_and_names_the_field() {
        assert!(check("fluid", 1e6, "run.duration", "x").is_ok());
        let e = check("fluid", 1e30, "links[0].buffer", "a loss ring").unwrap_err();
        assert!(e
            .to_string()
            .starts_with("links[0].buffer: the fluid engine would need"));
        assert!(check("fluid", f64::NAN, "run.step", "x").is_err());
    }

    #[test]
    fn an_address_space_limit_leaves_the_limit_less_what_is_in_use() {
        // As `ulimit -v 4194304` (4 GiB) shows in /proc/self/limits, with 1 GiB mapped.
        let limits = "Limit                     Soft Limit           Hard Limit           Units\n\
                      Max address space         4294967296           unlimited            bytes\n";
        let status = "Name:\tpython3\nVmPeak:\t 2000000 kB\nVmSize:\t 1048576 kB\n";
        assert_eq!(address_space_left(limits, status), Some(3.0 * GIB));
        let unlimited = limits.replace("4294967296", "unlimited");
        assert_eq!(address_space_left(&unlimited, status), None);
    }

    #[test]
    fn a_cgroup_leaves_its_limit_less_its_usage_and_no_limit_is_none() {
        assert_eq!(cgroup_left("4294967296\n", "1073741824\n"), Some(3.0 * GIB));
        assert_eq!(cgroup_left("max\n", "1073741824\n"), None); // v2
        assert_eq!(cgroup_left("9223372036854771712", "8642891776"), None); // v1
        assert_eq!(cgroup_left("100", "200"), Some(0.0));
    }
}
