//! The crate's dependency rules, checked on the source text of `src/` and on `Cargo.toml` /
//! `Cargo.lock` (issue 9, item 7):
//!
//! - the congestion-control laws (`cc/`), the metrics (`metrics`) and the queue disciplines
//!   (`queue`) use no engine: every engine shares them;
//! - an engine uses no other engine;
//! - the core depends on no Python crate (PyO3, numpy), directly or through another crate;
//! - the engine registry and the capability checker (`registry`, `capabilities`) use no engine;
//! - the core names no engine of the Python front end (ns-3, the kernel): not in code, not in a
//!   string (comments may cite ns-3 as a reference).
//!
//! A "use" is any path in code (not in comments or strings) that resolves to an engine module:
//! `crate::fluid`, `$crate::fluid`, `crate::{cc, fluid::X}`, `super::super::fluid` (resolved from
//! the file's module and any inline `mod` it sits in), or a crate-root name that lib.rs imports
//! from an engine (`crate::FluidEngine`) or that drives the engines (`crate::run`).
//!
//! The rules read the crate at `CARGO_MANIFEST_DIR`, or at `LOSSYNC_ARCH_CRATE_DIR` if set: to
//! check that a rule fails, break a copy of the workspace and point the variable at its crate.

mod source;

use source::*;
use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};

/// The engine modules, as paths from the crate root (`"engines::fluid"` would do for a nested
/// one). A new engine is one line here.
const ENGINES: &[&str] = &["fluid", "packet"];

/// Items defined in lib.rs that run the engines: reaching them is reaching every engine.
const ROOT_ENGINE_DRIVERS: &[&str] = &["Simulation", "run"];

/// The Python binding's crates; `pyo3-*` (pyo3-ffi, pyo3-build-config, ...) counts as PyO3.
const PYTHON_CRATES: &[&str] = &["pyo3", "numpy"];

// ---------------------------------------------------------------------------------------------
// The rules.

#[test]
fn cc_uses_no_engine() {
    check_rule(
        "cc/ (the congestion-control laws) must not use an engine: every engine shares them",
        &["cc"],
        ENGINES,
    );
}

#[test]
fn engines_do_not_use_each_other() {
    let mut found = String::new();
    for engine in ENGINES {
        let others: Vec<&str> = ENGINES.iter().copied().filter(|e| e != engine).collect();
        found += &violations(&[engine], &others);
    }
    assert!(
        found.is_empty(),
        "an engine must not use another engine; found:{found}"
    );
}

#[test]
fn metrics_use_no_engine() {
    check_rule(
        "metrics must not use an engine: engines emit records, metrics read records",
        &["metrics"],
        ENGINES,
    );
}

/// What an engine hands to the metrics is built in its `records.rs`: raw counts and integrals,
/// never a ratio (docs/architecture.md). Grep-level: no division there by a span, an interval or
/// a capacity. (An engine's physics may divide by a capacity, e.g. a queueing delay; its
/// measurements may not.)
#[test]
fn engines_hand_over_counts_not_ratios() {
    let mut bad = String::new();
    for engine in ENGINES {
        let file = crate_dir().join("src").join(engine).join("records.rs");
        let text = fs::read_to_string(&file).expect("each engine builds its records in records.rs");
        for (i, line) in code_only(&text).lines().enumerate() {
            if measurement_division(line) {
                let _ = write!(
                    bad,
                    "\n  src/{engine}/records.rs:{}: {}",
                    i + 1,
                    line.trim()
                );
            }
        }
    }
    assert!(
        bad.is_empty(),
        "only metrics/ turns counts into rates and ratios; move these there:{bad}"
    );
}

/// A line dividing by a span, an interval or a capacity.
fn measurement_division(line: &str) -> bool {
    line.split('/').skip(1).any(|after| {
        let divisor: String = after.chars().take(40).collect();
        let mut tokens = divisor.split(|c: char| !c.is_alphanumeric() && c != '_');
        tokens.any(|t| {
            t == "dt"
                || ["span", "interval", "capacity"]
                    .iter()
                    .any(|w| t.contains(w))
        })
    })
}

#[test]
fn the_ratio_rule_sees_a_division_by_a_span_or_capacity() {
    assert!(measurement_division("push(busy as f64 / span_ps as f64);"));
    assert!(measurement_division(
        "l.interval_departed / (l.capacity_pps * span)"
    ));
    assert!(!measurement_division(
        "push(s_from_ps(busy) * port.capacity_pps);"
    ));
    assert!(!measurement_division("let span = end - from;"));
    assert!(!measurement_division("x / bandwidth")); // "dt" only as a name of its own
}

#[test]
fn queue_disciplines_use_no_engine() {
    check_rule(
        "queue/ (the queue disciplines) must not use an engine: both engines share them",
        &["queue"],
        ENGINES,
    );
}

#[test]
fn registry_and_capabilities_use_no_engine() {
    check_rule(
        "registry and capabilities must not use an engine: every engine reads them",
        &["registry", "capabilities"],
        ENGINES,
    );
}

/// Names of the Python front end's engines, lower-cased; a code line (comments dropped, strings
/// kept) of the core or its binding must contain none.
const PYTHON_ENGINE_NAMES: &[&str] = &["ns3", "ns-3", "ns_3", "kernel"];

#[test]
fn core_names_no_python_engine() {
    let dir = crate_dir();
    let mut files = Vec::new();
    rust_files(&dir.join("src"), &mut files);
    let binding = dir.join("../lossync-py/src");
    if binding.is_dir() {
        rust_files(&binding, &mut files);
    }
    let mut found = String::new();
    for file in &files {
        let text = fs::read_to_string(file).unwrap();
        for (line, name) in python_engine_names(&text) {
            let _ = write!(found, "\n  {}:{line}: {name}", file.display());
        }
    }
    assert!(
        found.is_empty(),
        "the core must not name an engine of the Python front end (it reads any other engine \
         name as an outside one: scenario::Engine::External); found:{found}"
    );
}

/// (line, name) of each name of [`PYTHON_ENGINE_NAMES`] in the code of `text` (comments
/// dropped, string literals kept: `"ns3"` is a name).
fn python_engine_names(text: &str) -> Vec<(usize, &'static str)> {
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let code = line.split("//").next().unwrap_or("").to_lowercase();
        for name in PYTHON_ENGINE_NAMES {
            if code.contains(name) {
                out.push((i + 1, *name));
            }
        }
    }
    out
}

#[test]
fn checker_finds_python_engine_names_in_code_and_strings_only() {
    let text = "// as in ns-3\nEngine::Ns3 => \"ns3\",\nlet k = 1; // the kernel reports\n\
                if name == \"kernel\" {}\n";
    assert_eq!(
        python_engine_names(text),
        [(2, "ns3"), (4, "kernel")],
        "{text}"
    );
}

#[test]
fn core_does_not_depend_on_python_crates() {
    let dir = crate_dir();
    let mut bad = python_deps_in_manifest(&fs::read_to_string(dir.join("Cargo.toml")).unwrap());
    let lock = dir
        .ancestors()
        .map(|d| d.join("Cargo.lock"))
        .find(|p| p.exists())
        .expect("a Cargo.lock above the crate (cargo test writes one)");
    let text = fs::read_to_string(&lock).unwrap();
    bad.extend(
        python_deps_in_lock(&text, "lossync-core")
            .into_iter()
            .map(|chain| format!("{}: lossync-core reaches it: {chain}", lock.display())),
    );
    assert!(
        bad.is_empty(),
        "lossync-core must not depend on PyO3 or numpy (the bindings live in lossync-py):\n  {}",
        bad.join("\n  ")
    );
}

// ---------------------------------------------------------------------------------------------
// Each kind of use is caught, and what is not a use is not (the checker on made-up files).

/// A lib.rs for the checks of the checker.
const LIB_RS: &str = "
pub mod fluid;
pub mod packet;
pub use error::{Error, Result};
pub use fluid::{sync::Sync as LossSync, FluidEngine};
pub use packet::PacketEngine;
";

fn uses_in(file: &str, text: &str, forbidden: &[&str]) -> Vec<String> {
    let module = module_of(Path::new(file));
    let roots = root_aliases(LIB_RS);
    forbidden_uses(text, &module, &forbidden_set(forbidden, &roots))
        .into_iter()
        .map(|(line, path)| format!("{line}: {path}"))
        .collect()
}

#[test]
fn checker_catches_every_spelling_of_an_engine_path() {
    // (file under src/, its text, the forbidden modules, what must be found)
    let cases: &[(&str, &str, &[&str], &[&str])] = &[
        (
            "cc/reno.rs",
            "use crate::fluid::FluidEngine;",
            ENGINES,
            &["1: crate::fluid::FluidEngine"],
        ),
        (
            "cc/mod.rs",
            "use crate::{\n  scenario,\n  packet::{port, Port},\n};",
            ENGINES,
            &["3: crate::packet::port", "3: crate::packet::Port"],
        ),
        (
            "cc/reno.rs",
            "fn f() { super::super::fluid::step(); }",
            ENGINES,
            &["1: super::super::fluid::step"],
        ),
        // From cc/mod.rs one `super` is the crate root; from a test module in cc/reno.rs, three.
        (
            "cc/mod.rs",
            "use super::packet;",
            ENGINES,
            &["1: super::packet"],
        ),
        (
            "cc/reno.rs",
            "mod tests {\n    use super::super::super::fluid::FluidEngine;\n}",
            ENGINES,
            &["2: super::super::super::fluid::FluidEngine"],
        ),
        (
            "metrics/mod.rs",
            "macro_rules! m { () => { $crate::packet::X } }",
            ENGINES,
            &["1: $crate::packet::X"],
        ),
        // Names lib.rs imports from an engine, and the engine drivers.
        (
            "queue/red.rs",
            "fn f(_: crate::FluidEngine) {}",
            ENGINES,
            &["1: crate::FluidEngine"],
        ),
        (
            "cc/bic.rs",
            "use crate::LossSync;\nuse crate::Result;",
            ENGINES,
            &["1: crate::LossSync"],
        ),
        (
            "metrics.rs",
            "let r = crate::run(&sc);",
            ENGINES,
            &["1: crate::run"],
        ),
        (
            "fluid/sync.rs",
            "use crate::packet::*;",
            &["packet"],
            &["1: crate::packet::*"],
        ),
    ];
    for (file, text, forbidden, want) in cases {
        assert_eq!(uses_in(file, text, forbidden), *want, "{file}: {text}");
    }
}

#[test]
fn checker_passes_what_is_not_an_engine_path() {
    let text = r##"
//! Unlike crate::fluid, this module ... (doc comments are not uses)
use super::fluid;            // cc/reno.rs: super is cc, so this is cc::fluid
use crate::queue::red::Red;  /* crate::packet in a block comment */
const S: &str = "crate::packet::Port";
const R: &str = r#"use crate::fluid;"#;
const C: char = '"';
fn f<'a>(packet: &'a str) -> &'a str { let fluid = packet; fluid }
"##;
    assert!(uses_in("cc/reno.rs", text, ENGINES).is_empty());
    // Another engine's module may be used by an engine module it is not.
    assert!(uses_in("fluid/mod.rs", "use crate::fluid::sync;", &["packet"]).is_empty());
}

#[test]
fn checker_catches_python_crates_in_any_dependency_table() {
    let manifest = r#"
[dependencies]
serde = "1"
py = { package = "pyo3", version = "0.30" }
[dev-dependencies]
numpy = "0.30"
[target.'cfg(unix)'.build-dependencies]
pyo3-build-config = "0.30"
"#;
    assert_eq!(
        python_deps_in_manifest(manifest),
        [
            "Cargo.toml [dependencies]: py (package pyo3)",
            "Cargo.toml [dev-dependencies]: numpy",
            "Cargo.toml [target.cfg(unix).build-dependencies]: pyo3-build-config",
        ]
    );
    let lock = r#"
version = 4
[[package]]
name = "lossync-core"
version = "0.1.0"
dependencies = ["helper", "serde"]
[[package]]
name = "helper"
version = "1.0.0"
dependencies = ["pyo3 0.30.0"]
[[package]]
name = "pyo3"
version = "0.30.0"
[[package]]
name = "serde"
version = "1.0.0"
"#;
    assert_eq!(
        python_deps_in_lock(lock, "lossync-core"),
        ["lossync-core -> helper -> pyo3"]
    );
    assert!(python_deps_in_lock(lock, "serde").is_empty());
}

/// A queue discipline is one file plus one registration line (issue 35, item 1): outside its own
/// file `queue/NAME.rs`, nothing in the crate names its module or its parameter type but its
/// line in `queue/mod.rs`'s `registry!` list (which also declares the module). Sibling
/// discipline files may share building blocks (FQ-CoDel runs CoDel per queue).
#[test]
fn a_discipline_is_one_file_and_one_registry_line() {
    let dir = crate_dir().join("src");
    let mut files = Vec::new();
    rust_files(&dir, &mut files);
    let texts: Vec<(PathBuf, String)> = files
        .iter()
        .map(|f| (f.clone(), code_only(&fs::read_to_string(f).unwrap())))
        .collect();
    let registry = dir.join("queue/mod.rs");
    let mut found = String::new();
    let mut disciplines = 0;
    for (file, text) in &texts {
        if file.parent() != Some(&dir.join("queue")) || file == &registry {
            continue;
        }
        let Some(ty) = text
            .split("impl QueueParams for ")
            .nth(1)
            .and_then(|rest| rest.split_whitespace().next())
        else {
            continue;
        };
        disciplines += 1;
        let module = file.file_stem().unwrap().to_str().unwrap();
        for (other, other_text) in &texts {
            let sibling = other.parent() == Some(&dir.join("queue")) && other != &registry;
            if other == file || sibling {
                continue;
            }
            // Inside queue/ the module is `name::` or `super::name::`; elsewhere `queue::name`.
            let path = if other.parent() == Some(&dir.join("queue")) {
                format!("{module}::")
            } else {
                format!("queue::{module}")
            };
            let names = [path, ty.to_string()];
            for (n, line) in other_text.lines().enumerate() {
                let named = names.iter().any(|name| contains_word(line, name));
                let registration = other == &registry
                    && line.trim() == format!("{}({module}::{ty}),", case_of(line));
                if named && !registration {
                    let _ = write!(found, "\n  {}:{}: {}", other.display(), n + 1, line.trim());
                }
            }
        }
        let lines = texts.iter().find(|(f, _)| f == &registry).map(|(_, t)| {
            t.lines()
                .filter(|l| l.contains(&format!("({module}::{ty})")))
                .count()
        });
        if lines != Some(1) {
            let _ = write!(found, "\n  {module}: {lines:?} registry lines, want 1");
        }
    }
    assert!(disciplines >= 3, "found only {disciplines} disciplines");
    assert!(
        found.is_empty(),
        "a discipline is its file plus its registry line; named elsewhere:{found}"
    );
}

/// The case name of a registry line `Case(module::Type),`.
fn case_of(line: &str) -> &str {
    line.trim().split('(').next().unwrap_or("")
}

/// Whether `line` contains `name` not inside a longer identifier.
fn contains_word(line: &str, name: &str) -> bool {
    let ident = |c: char| c.is_alphanumeric() || c == '_';
    line.match_indices(name).any(|(i, _)| {
        let before = line[..i].chars().next_back();
        let after = line[i + name.len()..].chars().next();
        !before.is_some_and(ident) && (name.ends_with("::") || !after.is_some_and(ident))
    })
}
