//! Errors of the core. Every error is recoverable input trouble: the core never panics on user input.

/// An error from building or running a scenario.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum Error {
    /// A scenario field is missing, malformed or out of range. `field` is a dotted path such as
    /// `links[0].capacity` or `flows[1].cc.beta`.
    #[error("{field}: {reason}")]
    Scenario { field: String, reason: String },
    /// A file the scenario names (in `field`) cannot be read.
    #[error("{field}: {path}: {reason}")]
    Io {
        field: String,
        path: String,
        reason: String,
    },
}

impl Error {
    /// An error about `field`; serde's wording for types (`expected f64`) is put in plain words.
    pub fn field(field: impl Into<String>, reason: impl Into<String>) -> Self {
        Error::Scenario {
            field: field.into(),
            reason: plain_words(&reason.into()),
        }
    }

    /// The file at `path`, named by scenario field `field`, could not be read.
    pub fn io(field: &str, path: &std::path::Path, e: &std::io::Error) -> Self {
        use std::io::ErrorKind::*;
        // The OS's own text ends in "(os error 2)"; a user needs what happened, in words.
        let reason = match e.kind() {
            NotFound => "no such file".to_string(),
            PermissionDenied => "permission denied".to_string(),
            IsADirectory => "is a directory, not a file".to_string(),
            InvalidData => "not a text file (it is not UTF-8)".to_string(),
            kind => format!("cannot read it ({kind})"),
        };
        Error::Io {
            field: field.to_string(),
            path: path.display().to_string(),
            reason,
        }
    }
}

/// serde names Rust types in its messages (`invalid type: string "x", expected f64`); the user
/// wrote TOML, so those names become the words of TOML.
pub fn plain_words(reason: &str) -> String {
    const WHOLE: [&str; 10] = [
        "i8", "i16", "i32", "i64", "isize", "u8", "u16", "u32", "u64", "usize",
    ];
    let reason = reason
        .replace("floating point `", "number `")
        .replace("invalid type: sequence", "invalid type: list")
        .replace("invalid type: map", "invalid type: table")
        .replace("expected a sequence", "expected a list")
        .replace("expected a map", "expected a table")
        .replace(
            "expected fewer elements in array",
            "expected fewer values in the list",
        )
        .replace(
            "expected a tuple of size ",
            "expected a list of this many values: ",
        );
    // An identifier at the start of `s`, and what follows it.
    let word = |s: &str| {
        let end = s
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(s.len());
        (s[..end].to_string(), end)
    };
    let (mut out, mut rest) = (String::with_capacity(reason.len()), reason.as_str());
    while let Some(at) = rest.find("expected ") {
        let after = at + "expected ".len();
        out.push_str(&rest[..after]);
        rest = &rest[after..];
        let (w, end) = word(rest);
        let plain = match w.as_str() {
            "f64" | "f32" => "a number",
            w if WHOLE.contains(&w) && w.starts_with('u') => "a whole number, 0 or more",
            w if WHOLE.contains(&w) => "a whole number",
            // "expected struct LinkSpec": the type's name is ours, not the user's.
            "struct" | "enum" => {
                let named = rest[end..].trim_start();
                let (_, name_end) = word(named);
                rest = &named[name_end..];
                out.push_str(if w == "struct" { "a table" } else { "a name" });
                continue;
            }
            _ => continue,
        };
        out.push_str(plain);
        rest = &rest[end..];
    }
    out.push_str(rest);
    out
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn serde_type_names_become_toml_words() {
        let cases = [
            (
                "invalid type: string \"x\", expected f64",
                "invalid type: string \"x\", expected a number",
            ),
            (
                "invalid type: floating point `2.5`, expected i64",
                "invalid type: number `2.5`, expected a whole number",
            ),
            (
                "invalid value: integer `-1`, expected u64",
                "invalid value: integer `-1`, expected a whole number, 0 or more",
            ),
            (
                "invalid type: sequence, expected usize",
                "invalid type: list, expected a whole number, 0 or more",
            ),
            (
                "invalid type: integer `3`, expected a sequence",
                "invalid type: integer `3`, expected a list",
            ),
            (
                "invalid type: integer `5`, expected struct LinkSpec",
                "invalid type: integer `5`, expected a table",
            ),
            (
                "invalid length 1, expected a tuple of size 2",
                "invalid length 1, expected a list of this many values: 2",
            ),
            // Our own words, and names that only start like a type, are left alone.
            ("expected a time in seconds", "expected a time in seconds"),
            (
                "unknown field `u8x`, expected one of `name`",
                "unknown field `u8x`, expected one of `name`",
            ),
            ("expected f64s", "expected f64s"),
        ];
        for (serde, plain) in cases {
            assert_eq!(plain_words(serde), plain, "{serde}");
        }
    }
}
