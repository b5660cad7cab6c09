//! A calibration file (`loss = { model = "tcp", calibration = "cal.toml" }`), as `lossync
//! calibrate` writes it: the fitted `burst_pkts` and `event_threshold`, and a `[fitted]` table that records what it was
//! fitted on (read by people, not by the engines).
//!
//! ```toml
//! burst_pkts = 4.25
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
    /// Absent: the default headroom.
    burst_pkts: Option<f64>,
    event_threshold: f64,
    #[allow(dead_code)] // provenance for the reader
    fitted: Option<toml::Table>,
}

/// The `burst_pkts` (absent: the default) and `event_threshold` of a calibration file; every
/// error names `loss.calibration` and the file (ranges are checked by the caller).
pub fn read(path: &Path) -> Result<(Option<f64>, f64)> {
    let field = "loss.calibration";
    let text = std::fs::read_to_string(path).map_err(|e| Error::Io {
        path: path.display().to_string(),
        reason: format!("{field}: cannot read: {e}"),
    })?;
    let file: CalibrationFile = toml::from_str(&text).map_err(|e| {
        let why = e.message().to_string();
        Error::field(field, format!("{}: {why}", path.display()))
    })?;
    Ok((file.burst_pkts, file.event_threshold))
}
