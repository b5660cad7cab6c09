//! Errors of the core. Every error is recoverable input trouble: the core never panics on user input.

/// An error from building or running a scenario.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum Error {
    /// A scenario field is missing, malformed or out of range. `field` is a dotted path such as
    /// `links[0].capacity` or `flows[1].cc.beta`.
    #[error("{field}: {reason}")]
    Scenario { field: String, reason: String },
    /// A file the scenario names cannot be read.
    #[error("{path}: {reason}")]
    Io { path: String, reason: String },
}

impl Error {
    pub fn field(field: impl Into<String>, reason: impl Into<String>) -> Self {
        Error::Scenario {
            field: field.into(),
            reason: reason.into(),
        }
    }
}

pub type Result<T, E = Error> = std::result::Result<T, E>;
