//! Typed parameters as scenarios give them: a table of values read one name at a time, each with
//! its default and its range, and any name nobody read refused. Congestion-control laws
//! ([`crate::cc`]) and queue disciplines ([`crate::queue`]) declare their parameters with it.

use crate::error::{Error, Result};
use serde_json::Value;
use std::collections::BTreeMap;

/// A variant's (or a discipline's) parameters, read with defaults and ranges; unknown names are
/// an error.
pub struct Params<'a> {
    values: &'a BTreeMap<String, Value>,
    field: &'a str,
    /// What takes the parameters, for errors: "variant", "discipline".
    owner: &'static str,
    used: Vec<&'static str>,
    /// Former names still accepted (not listed in errors).
    former: Vec<&'static str>,
}

impl<'a> Params<'a> {
    pub fn new(values: &'a BTreeMap<String, Value>, field: &'a str) -> Self {
        Params {
            values,
            field,
            owner: "variant",
            used: Vec::new(),
            former: Vec::new(),
        }
    }

    /// The same, for a discipline's parameters (errors say "this discipline takes").
    pub fn of_discipline(values: &'a BTreeMap<String, Value>, field: &'a str) -> Self {
        Params {
            owner: "discipline",
            ..Params::new(values, field)
        }
    }

    /// The field naming parameter `name`, for errors a reader raises itself.
    pub fn field(&self, name: &str) -> String {
        format!("{}.{name}", self.field)
    }

    /// Whether the scenario gave parameter `name`.
    pub fn given(&self, name: &str) -> bool {
        self.values.contains_key(name)
    }

    /// A number parameter without a default: the scenario must give it.
    pub fn required_f64(
        &mut self,
        name: &'static str,
        ok: fn(f64) -> bool,
        range: &str,
    ) -> Result<f64> {
        if !self.values.contains_key(name) {
            return Err(Error::field(self.field(name), "is required"));
        }
        self.f64(name, f64::NAN, ok, range)
    }

    /// A duration in seconds: a number of seconds or a string with a unit (`"5ms"`).
    pub fn seconds(
        &mut self,
        name: &'static str,
        default: f64,
        ok: fn(f64) -> bool,
        range: &str,
    ) -> Result<f64> {
        self.with_unit(name, default, ok, range, crate::units::parse_time_s)
    }

    /// A size in bytes: a number of bytes or a string with a unit (`"1514B"`, `"9KB"`), as sizes
    /// are written elsewhere in a scenario.
    pub fn bytes(
        &mut self,
        name: &'static str,
        default: f64,
        ok: fn(f64) -> bool,
        range: &str,
    ) -> Result<f64> {
        self.with_unit(name, default, ok, range, crate::units::parse_bytes)
    }

    /// A number in the base unit, or a string `parse` reads with its unit.
    fn with_unit(
        &mut self,
        name: &'static str,
        default: f64,
        ok: fn(f64) -> bool,
        range: &str,
        parse: fn(&str) -> std::result::Result<f64, String>,
    ) -> Result<f64> {
        if let Some(Value::String(text)) = self.values.get(name) {
            self.used.push(name);
            let v = parse(text).map_err(|e| Error::field(self.field(name), e))?;
            return self.check(name, v, ok, range);
        }
        self.f64(name, default, ok, range)
    }

    /// A string parameter, one of `choices` (the first is the default).
    pub fn choice(&mut self, name: &'static str, choices: &[&'static str]) -> Result<&'static str> {
        self.used.push(name);
        match self.values.get(name) {
            None => Ok(choices[0]),
            Some(Value::String(s)) => choices.iter().find(|c| **c == s).copied().ok_or_else(|| {
                Error::field(
                    self.field(name),
                    format!("unknown {name} {s:?} ({})", choices.join(", ")),
                )
            }),
            Some(_) => Err(Error::field(
                self.field(name),
                format!("must be a string ({})", choices.join(", ")),
            )),
        }
    }

    /// A number parameter that scenarios may also give under a former name.
    pub fn f64_or_former(
        &mut self,
        name: &'static str,
        former: &'static str,
        default: f64,
        ok: fn(f64) -> bool,
        range: &str,
    ) -> Result<f64> {
        self.former.push(former);
        match (
            self.values.contains_key(name),
            self.values.contains_key(former),
        ) {
            (true, true) => Err(Error::field(
                format!("{}.{former}", self.field),
                format!("is the former name of {name}: give one of them"),
            )),
            (false, true) => {
                self.used.push(name);
                self.number(former, default, ok, range)
            }
            _ => self.f64(name, default, ok, range),
        }
    }

    /// A number parameter with a default, accepted if `ok(value)`; `range` describes `ok`.
    pub fn f64(
        &mut self,
        name: &'static str,
        default: f64,
        ok: fn(f64) -> bool,
        range: &str,
    ) -> Result<f64> {
        self.used.push(name);
        self.number(name, default, ok, range)
    }

    fn number(&self, name: &str, default: f64, ok: fn(f64) -> bool, range: &str) -> Result<f64> {
        let v = match self.values.get(name) {
            None => return Ok(default),
            Some(v) => v.as_f64().ok_or_else(|| {
                Error::field(format!("{}.{name}", self.field), "must be a number")
            })?,
        };
        self.check(name, v, ok, range)
    }

    fn check(&self, name: &str, v: f64, ok: fn(f64) -> bool, range: &str) -> Result<f64> {
        if v.is_finite() && ok(v) {
            Ok(v)
        } else {
            Err(Error::field(
                format!("{}.{name}", self.field),
                format!(
                    "{} is out of range: must be {range}",
                    crate::units::short(v)
                ),
            ))
        }
    }

    pub fn bool(&mut self, name: &'static str, default: bool) -> Result<bool> {
        self.used.push(name);
        match self.values.get(name) {
            None => Ok(default),
            Some(v) => v.as_bool().ok_or_else(|| {
                Error::field(format!("{}.{name}", self.field), "must be true or false")
            }),
        }
    }

    /// Refuses any parameter nobody read.
    pub fn finish(&self) -> Result<()> {
        match self
            .values
            .keys()
            .find(|k| !self.used.contains(&k.as_str()) && !self.former.contains(&k.as_str()))
        {
            None => Ok(()),
            Some(k) => Err(Error::field(
                format!("{}.{k}", self.field),
                if self.used.is_empty() {
                    format!("unknown parameter (this {} takes none)", self.owner)
                } else {
                    format!(
                        "unknown parameter (this {} takes: {})",
                        self.owner,
                        self.used.join(", ")
                    )
                },
            )),
        }
    }
}
