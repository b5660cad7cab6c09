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

use std::collections::{BTreeMap, BTreeSet};
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

// ---------------------------------------------------------------------------------------------
// The checker.

fn crate_dir() -> PathBuf {
    std::env::var_os("LOSSYNC_ARCH_CRATE_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")))
}

fn segments(module: &str) -> Vec<String> {
    module.split("::").map(str::to_string).collect()
}

/// Fails, listing file:line and path, if a file of the modules `owners` uses a module of
/// `forbidden` (paths from the crate root).
fn check_rule(rule: &str, owners: &[&str], forbidden: &[&str]) {
    let found = violations(owners, forbidden);
    assert!(found.is_empty(), "{rule}; found:{found}");
}

/// One line (`\n  src/FILE:LINE: PATH`) for each use of a module of `forbidden` in a file of the
/// modules `owners`; panics if `owners` has no file (a renamed module must not pass unseen).
fn violations(owners: &[&str], forbidden: &[&str]) -> String {
    let src = crate_dir().join("src");
    let roots = root_aliases(&fs::read_to_string(src.join("lib.rs")).expect("src/lib.rs"));
    let forbidden = forbidden_set(forbidden, &roots);
    let owners: Vec<Vec<String>> = owners.iter().map(|o| segments(o)).collect();
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let mut bad = String::new();
    let mut checked = 0;
    for file in files {
        let rel = file.strip_prefix(&src).unwrap();
        let module = module_of(rel);
        if !owners.iter().any(|o| module.starts_with(o)) {
            continue;
        }
        checked += 1;
        let text = fs::read_to_string(&file).unwrap();
        for (line, path) in forbidden_uses(&text, &module, &forbidden) {
            let _ = write!(bad, "\n  src/{}:{line}: {path}", rel.display());
        }
    }
    assert!(
        checked > 0,
        "no file of the modules {owners:?} under {src:?}"
    );
    bad
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<PathBuf> = fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// The module a file under src/ defines: `lib.rs` the root, `a/mod.rs` and `a.rs` `a`, `a/b.rs`
/// `a::b`.
fn module_of(rel: &Path) -> Vec<String> {
    let mut parts: Vec<String> = rel
        .iter()
        .map(|p| p.to_string_lossy().into_owned())
        .collect();
    let last = parts.pop().unwrap();
    let stem = last.strip_suffix(".rs").unwrap_or(&last);
    if !(stem == "mod" || (parts.is_empty() && (stem == "lib" || stem == "main"))) {
        parts.push(stem.to_string());
    }
    parts
}

/// Module paths (from the crate root) whose use is forbidden: the modules themselves, the names
/// lib.rs imports from them, and the engine drivers.
fn forbidden_set(modules: &[&str], roots: &BTreeMap<String, Vec<String>>) -> Vec<Vec<String>> {
    let modules: Vec<Vec<String>> = modules.iter().map(|m| segments(m)).collect();
    let mut out = modules.clone();
    for (name, target) in roots {
        if modules.iter().any(|m| target.starts_with(m)) {
            out.push(vec![name.clone()]);
        }
    }
    out.extend(ROOT_ENGINE_DRIVERS.iter().map(|d| vec![d.to_string()]));
    out
}

/// Names lib.rs brings into the crate root by `use` (`pub use fluid::FluidEngine` makes
/// `crate::FluidEngine`), with the path they stand for.
fn root_aliases(lib_rs: &str) -> BTreeMap<String, Vec<String>> {
    let tokens = tokenize(&code_only(lib_rs));
    let mut out = BTreeMap::new();
    for (i, t) in tokens.iter().enumerate() {
        if t.text != "use" {
            continue;
        }
        let Some(next) = tokens.get(i + 1) else {
            continue;
        };
        if next.kind != Kind::Ident {
            continue;
        }
        let mut paths = Vec::new();
        parse_path(&tokens, i + 1, Vec::new(), &mut paths);
        for (path, alias, _) in paths {
            let resolved = resolve(&path, &[]);
            let name = alias.or_else(|| resolved.last().cloned());
            if let Some(name) = name.filter(|n| n != "*" && n != "self") {
                out.insert(name, resolved);
            }
        }
    }
    out
}

/// (line, path as written) of every path in `text` (the source of `module`) that resolves into
/// one of `forbidden`.
fn forbidden_uses(
    text: &str,
    module: &[String],
    forbidden: &[Vec<String>],
) -> Vec<(usize, String)> {
    let tokens = tokenize(&code_only(text));
    let mut out = Vec::new();
    let mut depth = 0usize;
    // Inline modules (`mod tests { ... }`): name and the brace depth inside them.
    let mut inline: Vec<(String, usize)> = Vec::new();
    let mut i = 0;
    while i < tokens.len() {
        let t = &tokens[i];
        match t.kind {
            Kind::Open => depth += 1,
            Kind::Close => {
                depth = depth.saturating_sub(1);
                while inline.last().is_some_and(|(_, d)| *d > depth) {
                    inline.pop();
                }
            }
            Kind::Ident if t.text == "mod" => {
                if let (Some(name), Some(open)) = (tokens.get(i + 1), tokens.get(i + 2)) {
                    if name.kind == Kind::Ident && open.kind == Kind::Open {
                        depth += 1;
                        inline.push((name.text.clone(), depth));
                        i += 3;
                        continue;
                    }
                }
            }
            Kind::Ident if i == 0 || tokens[i - 1].kind != Kind::Sep => {
                let mut paths = Vec::new();
                let end = parse_path(&tokens, i, Vec::new(), &mut paths);
                let here: Vec<String> = module
                    .iter()
                    .cloned()
                    .chain(inline.iter().map(|(n, _)| n.clone()))
                    .collect();
                for (path, _, line) in paths {
                    let resolved = resolve(&path, &here);
                    if forbidden.iter().any(|f| resolved.starts_with(f)) {
                        out.push((line, path.join("::")));
                    }
                }
                i = end;
                continue;
            }
            _ => {}
        }
        i += 1;
    }
    out
}

/// The path from the crate root that `path`, written in module `here`, stands for.
fn resolve(path: &[String], here: &[String]) -> Vec<String> {
    match path[0].as_str() {
        "crate" | "$crate" | "lossync_core" => path[1..].to_vec(),
        "self" => here.iter().chain(&path[1..]).cloned().collect(),
        "super" => {
            let ups = path.iter().take_while(|s| *s == "super").count();
            let base = &here[..here.len().saturating_sub(ups)];
            base.iter().chain(&path[ups..]).cloned().collect()
        }
        // A bare path starts at the current module (or names an outside crate or a local).
        _ => here.iter().chain(path).cloned().collect(),
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Ident,
    /// `::`
    Sep,
    Open,
    Close,
    Comma,
    Star,
    Other,
}

#[derive(Debug)]
struct Token {
    kind: Kind,
    text: String,
    line: usize,
}

/// Parses the path starting at `tokens[i]` (an identifier), expanding `{...}` groups; pushes
/// (segments, `as` alias, line of the last segment) for each leaf onto `out`; returns the index
/// after the path.
fn parse_path(
    tokens: &[Token],
    mut i: usize,
    mut prefix: Vec<String>,
    out: &mut Vec<(Vec<String>, Option<String>, usize)>,
) -> usize {
    prefix.push(tokens[i].text.clone());
    let mut line = tokens[i].line;
    i += 1;
    while i + 1 < tokens.len() && tokens[i].kind == Kind::Sep {
        let next = &tokens[i + 1];
        match next.kind {
            Kind::Ident => {
                prefix.push(next.text.clone());
                line = next.line;
                i += 2;
            }
            Kind::Star => {
                prefix.push("*".into());
                out.push((prefix, None, next.line));
                return i + 2;
            }
            Kind::Open => {
                i += 2;
                while i < tokens.len() && tokens[i].kind != Kind::Close {
                    match tokens[i].kind {
                        Kind::Ident if tokens[i].text == "self" => {
                            out.push((prefix.clone(), None, tokens[i].line));
                            i += 1;
                        }
                        Kind::Ident => i = parse_path(tokens, i, prefix.clone(), out),
                        Kind::Star => {
                            let mut p = prefix.clone();
                            p.push("*".into());
                            out.push((p, None, tokens[i].line));
                            i += 1;
                        }
                        _ => i += 1,
                    }
                }
                return i + 1;
            }
            _ => break, // `::<` (turbofish) and the like
        }
    }
    let mut alias = None;
    if tokens.get(i).is_some_and(|t| t.text == "as") {
        if let Some(a) = tokens.get(i + 1).filter(|t| t.kind == Kind::Ident) {
            alias = Some(a.text.clone());
            i += 2;
        }
    }
    out.push((prefix, alias, line));
    i
}

fn tokenize(code: &str) -> Vec<Token> {
    let chars: Vec<char> = code.chars().collect();
    let mut out = Vec::new();
    let (mut i, mut line) = (0, 1);
    while i < chars.len() {
        let c = chars[i];
        let start = i;
        let kind = if c == '\n' {
            line += 1;
            i += 1;
            continue;
        } else if c.is_whitespace() {
            i += 1;
            continue;
        } else if c.is_alphanumeric() || c == '_' || c == '$' {
            if c == 'r' && chars.get(i + 1) == Some(&'#') {
                i += 1; // a raw identifier, r#name
            }
            i += 1;
            while i < chars.len() && (chars[i].is_alphanumeric() || chars[i] == '_') {
                i += 1;
            }
            Kind::Ident
        } else if c == ':' && chars.get(i + 1) == Some(&':') {
            i += 2;
            Kind::Sep
        } else {
            i += 1;
            match c {
                '{' => Kind::Open,
                '}' => Kind::Close,
                ',' => Kind::Comma,
                '*' => Kind::Star,
                _ => Kind::Other,
            }
        };
        let text: String = chars[start..i].iter().collect();
        let text = text.strip_prefix("r#").unwrap_or(&text).to_string();
        out.push(Token { kind, text, line });
    }
    out
}

/// The source with comments and the contents of string and character literals blanked (newlines
/// kept, so lines still count).
fn code_only(src: &str) -> String {
    let c: Vec<char> = src.chars().collect();
    let mut out = String::with_capacity(src.len());
    let blank = |out: &mut String, s: &[char]| {
        out.extend(s.iter().map(|&ch| if ch == '\n' { '\n' } else { ' ' }));
    };
    let mut i = 0;
    while i < c.len() {
        let at = |k: usize| c.get(i + k).copied().unwrap_or('\0');
        let prev_ident = i > 0 && (c[i - 1].is_alphanumeric() || c[i - 1] == '_');
        if at(0) == '/' && at(1) == '/' {
            let end = (i..c.len()).find(|&k| c[k] == '\n').unwrap_or(c.len());
            blank(&mut out, &c[i..end]);
            i = end;
        } else if at(0) == '/' && at(1) == '*' {
            let (mut k, mut nest) = (i + 2, 1);
            while k < c.len() && nest > 0 {
                if c[k] == '/' && c.get(k + 1) == Some(&'*') {
                    nest += 1;
                    k += 2;
                } else if c[k] == '*' && c.get(k + 1) == Some(&'/') {
                    nest -= 1;
                    k += 2;
                } else {
                    k += 1;
                }
            }
            blank(&mut out, &c[i..k]);
            i = k;
        } else if !prev_ident && (at(0) == 'r' || (at(0) == 'b' && at(1) == 'r')) && {
            let k = i + if at(0) == 'b' { 2 } else { 1 };
            let hashes = (k..c.len()).take_while(|&j| c[j] == '#').count();
            c.get(k + hashes) == Some(&'"')
        } {
            // Raw string: r"..." r#"..."# br##"..."##
            let k = i + if at(0) == 'b' { 2 } else { 1 };
            let hashes = (k..c.len()).take_while(|&j| c[j] == '#').count();
            let body = k + hashes + 1;
            let close: Vec<char> = std::iter::once('"')
                .chain(std::iter::repeat_n('#', hashes))
                .collect();
            let end = (body..c.len())
                .find(|&j| c[j..].starts_with(&close))
                .map_or(c.len(), |j| j + close.len());
            out.push('"');
            blank(&mut out, &c[i + 1..end - 1]);
            out.push('"');
            i = end;
        } else if at(0) == '"' {
            let mut k = i + 1;
            while k < c.len() && c[k] != '"' {
                k += if c[k] == '\\' { 2 } else { 1 };
            }
            let k = k.min(c.len());
            out.push('"');
            blank(&mut out, &c[i + 1..k]);
            if k < c.len() {
                out.push('"');
            }
            i = k + 1;
        } else if at(0) == '\'' && (at(1) == '\\' || (at(1) != '\0' && at(2) == '\'')) {
            // A character literal ('x', '\n', '\'', '\u{..}'); otherwise a lifetime or label.
            let mut k = i + 1;
            while k < c.len() && c[k] != '\'' {
                k += if c[k] == '\\' { 2 } else { 1 };
            }
            let end = (k + 1).min(c.len());
            blank(&mut out, &c[i..end]);
            i = end;
        } else {
            out.push(c[i]);
            i += 1;
        }
    }
    out
}

fn is_python_crate(name: &str) -> bool {
    PYTHON_CRATES.contains(&name) || name.starts_with("pyo3-")
}

/// Dependencies on Python crates in a manifest, in any dependency table (also target-specific
/// and renamed ones).
fn python_deps_in_manifest(text: &str) -> Vec<String> {
    let doc: toml::Table = text.parse().expect("Cargo.toml parses");
    let kinds = ["dependencies", "dev-dependencies", "build-dependencies"];
    let mut tables: Vec<(String, &toml::Table)> = Vec::new();
    for kind in kinds {
        if let Some(t) = doc.get(kind).and_then(|v| v.as_table()) {
            tables.push((kind.to_string(), t));
        }
    }
    if let Some(targets) = doc.get("target").and_then(|v| v.as_table()) {
        for (cfg, t) in targets {
            for kind in kinds {
                if let Some(t) = t.get(kind).and_then(|v| v.as_table()) {
                    tables.push((format!("target.{cfg}.{kind}"), t));
                }
            }
        }
    }
    let mut out = Vec::new();
    for (where_, table) in tables {
        for (key, spec) in table {
            let package = spec.get("package").and_then(|p| p.as_str());
            let name = package.unwrap_or(key);
            if is_python_crate(name) {
                out.push(match package {
                    Some(p) => format!("Cargo.toml [{where_}]: {key} (package {p})"),
                    None => format!("Cargo.toml [{where_}]: {key}"),
                });
            }
        }
    }
    out
}

/// Chains from `root` to a Python crate through the packages of a Cargo.lock (all of a package's
/// dependencies, dev-dependencies included).
fn python_deps_in_lock(text: &str, root: &str) -> Vec<String> {
    let doc: toml::Table = text.parse().expect("Cargo.lock parses");
    let packages = doc.get("package").and_then(|p| p.as_array());
    // Lock entries name dependencies as "name", "name version" or "name version (source)".
    let mut deps: BTreeMap<(String, String), Vec<String>> = BTreeMap::new();
    for p in packages.into_iter().flatten() {
        let field = |k: &str| p.get(k).and_then(|v| v.as_str()).unwrap_or("").to_string();
        let list = p.get("dependencies").and_then(|d| d.as_array());
        let names = list
            .into_iter()
            .flatten()
            .filter_map(|d| d.as_str())
            .map(|d| d.to_string())
            .collect();
        deps.insert((field("name"), field("version")), names);
    }
    let find = |spec: &str| -> Option<(String, String)> {
        let mut words = spec.split_whitespace();
        let name = words.next()?;
        let version = words.next();
        deps.keys()
            .find(|(n, v)| n == name && version.is_none_or(|w| w == v))
            .cloned()
    };
    let mut out = Vec::new();
    let mut seen = BTreeSet::new();
    let mut stack: Vec<((String, String), String)> = deps
        .keys()
        .filter(|(n, _)| n == root)
        .map(|k| (k.clone(), k.0.clone()))
        .collect();
    while let Some((key, chain)) = stack.pop() {
        if !seen.insert(key.clone()) {
            continue;
        }
        for spec in &deps[&key] {
            let name = spec.split_whitespace().next().unwrap_or("");
            if is_python_crate(name) {
                out.push(format!("{chain} -> {name}"));
            } else if let Some(next) = find(spec) {
                let chain = format!("{chain} -> {}", next.0);
                stack.push((next, chain));
            }
        }
    }
    out.sort();
    out
}
