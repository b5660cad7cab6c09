//! A calibration file (`loss = { model = "tcp", calibration = "cal.toml" }`), as `lossync
//! calibrate` writes it: the fitted headroom (`burst_per_sqrt_buffer`, or `burst_pkts` in files
//! of lossync 0.x before it) and `event_threshold`, and a `[fitted]` table that records what it
//! was fitted on (read by people, not by the engines).
//!
//! ```toml
//! burst_per_sqrt_buffer = 1.96
//! event_threshold = 1.0
//! [fitted]
//! scenario = "small-buffer.toml"
//! ```

use crate::error::{Error, Result};
use serde::Deserialize;
use std::path::Path;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CalibrationFile {
    /// Both absent: the default headroom.
    burst_pkts: Option<f64>,
    burst_per_sqrt_buffer: Option<f64>,
    /// Absent: 1, as in a scenario.
    event_threshold: Option<f64>,
    /// Provenance for the reader; of it the engines read only `smallest_buffer_pkts`.
    fitted: Option<toml::Table>,
}

/// What a calibration file sets (ranges are checked by the caller).
pub struct Calibration {
    pub burst_pkts: Option<f64>,
    pub burst_per_sqrt_buffer: Option<f64>,
    pub event_threshold: f64,
    /// The smallest buffer it was fitted at (`[fitted] smallest_buffer_pkts`), if recorded.
    pub fitted_buffer_pkts: Option<f64>,
}

/// Reads a calibration file; every error names `loss.calibration` and the file.
pub fn read(path: &Path) -> Result<Calibration> {
    let field = "loss.calibration";
    let text = super::limits::read_input_file(field, path)?;
    let file: CalibrationFile = toml::from_str(&text).map_err(|e| {
        let why = e.message().to_string();
        Error::field(field, format!("{}: {why}", path.display()))
    })?;
    // The one provenance entry the engines read: a positive number of packets, if given.
    let fitted_buffer_pkts = match file
        .fitted
        .as_ref()
        .and_then(|t| t.get("smallest_buffer_pkts"))
    {
        None => None,
        Some(v) => match v.as_float().or_else(|| v.as_integer().map(|i| i as f64)) {
            // 0: fitted on bufferless links only, nothing to compare a buffer with.
            Some(0.0) => None,
            Some(b)
                if (super::limits::FITTED_BUFFER_PKTS.0..=super::limits::FITTED_BUFFER_PKTS.1)
                    .contains(&b) =>
            {
                Some(b)
            }
            _ => {
                return Err(Error::field(
                    field,
                    format!(
                        "{}: fitted.smallest_buffer_pkts must be 0 (no buffered link) or a number of packets in [1, 1e12], got {v}",
                        path.display()
                    ),
                ))
            }
        },
    };
    if file.burst_pkts.is_none()
        && file.burst_per_sqrt_buffer.is_none()
        && file.event_threshold.is_none()
    {
        // `lossync calibrate` always writes event_threshold; a file that sets nothing would
        // run the default model under a "calibrated" warning.
        return Err(Error::field(
            field,
            format!(
                "{}: sets nothing (no burst_per_sqrt_buffer, burst_pkts or event_threshold)",
                path.display()
            ),
        ));
    }
    Ok(Calibration {
        burst_pkts: file.burst_pkts,
        burst_per_sqrt_buffer: file.burst_per_sqrt_buffer,
        event_threshold: file.event_threshold.unwrap_or(1.0),
        fitted_buffer_pkts,
    })
}
