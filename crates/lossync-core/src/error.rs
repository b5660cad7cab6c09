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

/// Marks the field an error is about inside a table read whole: serde's path ends at the table,
/// so the rest of the path travels at the front of the message, between two marks, and
/// `scenario::from_value` moves it into the error's field.
pub const FIELD_MARK: char = '\u{1f}';

/// An error about `path` (relative to the table being read, e.g. `max_th`).
pub fn field_err<E: serde::de::Error>(path: &str, reason: impl std::fmt::Display) -> E {
    E::custom(format_args!("{FIELD_MARK}{path}{FIELD_MARK}{reason}"))
}

/// Splits a message made by [`field_err`] into the relative path and the reason.
pub fn split_field_error(msg: &str) -> Option<(&str, &str)> {
    msg.strip_prefix(FIELD_MARK)?.split_once(FIELD_MARK)
}

/// Joins a path and a relative path (`a.b` + `c[0]` = `a.b.c[0]`; `a` + `[1]` = `a[1]`).
pub fn join_path(base: &str, rel: &str) -> String {
    match (base, rel) {
        ("" | ".", r) => r.to_string(),
        (b, "" | ".") => b.to_string(),
        (b, r) if r.starts_with('[') => format!("{b}{r}"),
        (b, r) => format!("{b}.{r}"),
    }
}

pub type Result<T, E = Error> = std::result::Result<T, E>;
