//! A calibration file (`loss = { model = "tcp", calibration = "cal.toml" }`), as `lossync
//! calibrate` writes it: the fitted `burst_pkts`, and a `[fitted]` table that records what it was
//! fitted on (read by people, not by the engines).
//!
//! ```toml
//! burst_pkts = 4.25
//! [fitted]
//! scenario = "small-buffer.toml"
//! ```

use crate::error::{Error, Result};
use serde::Deserialize;
use std::path::Path;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CalibrationFile {
    burst_pkts: f64,
    #[allow(dead_code)] // provenance for the reader
    fitted: Option<toml::Table>,
}

/// The `burst_pkts` of a calibration file; every error names `loss.calibration` and the file.
pub fn read_burst_pkts(path: &Path) -> Result<f64> {
    let field = "loss.calibration";
    let text = std::fs::read_to_string(path).map_err(|e| Error::Io {
        path: path.display().to_string(),
        reason: format!("{field}: cannot read: {e}"),
    })?;
    let file: CalibrationFile = toml::from_str(&text).map_err(|e| {
        let why = e.message().to_string();
        Error::field(field, format!("{}: {why}", path.display()))
    })?;
    if !(file.burst_pkts.is_finite() && file.burst_pkts >= 0.0) {
        return Err(Error::field(
            field,
            format!(
                "{}: burst_pkts must be a number ≥ 0, got {}",
                path.display(),
                file.burst_pkts
            ),
        ));
    }
    Ok(file.burst_pkts)
}
