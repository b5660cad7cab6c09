//! What a run may allocate. Engines estimate their memory from the resolved scenario before
//! allocating anything and refuse, naming the field to change, rather than let the allocator
//! abort the process (in a sweep that would kill a worker and every run queued on it).

/// The budget when the machine's available memory cannot be read.
const FALLBACK_LIMIT_BYTES: f64 = 8.0 * GIB;
const GIB: f64 = (1u64 << 30) as f64;

/// The bytes a run may use: the memory the kernel reports available now (`MemAvailable` in
/// /proc/meminfo), else 8 GiB.
pub fn limit_bytes() -> f64 {
    std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|m| {
            let line = m.lines().find(|l| l.starts_with("MemAvailable:"))?;
            let kib: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
            Some(kib * 1024.0)
        })
        .unwrap_or(FALLBACK_LIMIT_BYTES)
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
}
