//! The checker behind the rules in main.rs: reading the crate's source as text (comments and
//! strings blanked), the paths its code uses resolved to modules, and the Python crates in its
//! manifest and lock file.

use super::{PYTHON_CRATES, ROOT_ENGINE_DRIVERS};
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};

pub fn crate_dir() -> PathBuf {
    std::env::var_os("LOSSYNC_ARCH_CRATE_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")))
}

pub fn segments(module: &str) -> Vec<String> {
    module.split("::").map(str::to_string).collect()
}

/// Fails, listing file:line and path, if a file of the modules `owners` uses a module of
/// `forbidden` (paths from the crate root).
pub fn check_rule(rule: &str, owners: &[&str], forbidden: &[&str]) {
    let found = violations(owners, forbidden);
    assert!(found.is_empty(), "{rule}; found:{found}");
}

/// One line (`\n  src/FILE:LINE: PATH`) for each use of a module of `forbidden` in a file of the
/// modules `owners`; panics if `owners` has no file (a renamed module must not pass unseen).
pub fn violations(owners: &[&str], forbidden: &[&str]) -> String {
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

pub fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
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
pub fn module_of(rel: &Path) -> Vec<String> {
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
pub fn forbidden_set(modules: &[&str], roots: &BTreeMap<String, Vec<String>>) -> Vec<Vec<String>> {
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
pub fn root_aliases(lib_rs: &str) -> BTreeMap<String, Vec<String>> {
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
pub fn forbidden_uses(
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
pub fn resolve(path: &[String], here: &[String]) -> Vec<String> {
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
pub enum Kind {
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
pub struct Token {
    kind: Kind,
    text: String,
    line: usize,
}

/// Parses the path starting at `tokens[i]` (an identifier), expanding `{...}` groups; pushes
/// (segments, `as` alias, line of the last segment) for each leaf onto `out`; returns the index
/// after the path.
pub fn parse_path(
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

pub fn tokenize(code: &str) -> Vec<Token> {
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
pub fn code_only(src: &str) -> String {
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

pub fn is_python_crate(name: &str) -> bool {
    PYTHON_CRATES.contains(&name) || name.starts_with("pyo3-")
}

/// Dependencies on Python crates in a manifest, in any dependency table (also target-specific
/// and renamed ones).
pub fn python_deps_in_manifest(text: &str) -> Vec<String> {
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
pub fn python_deps_in_lock(text: &str, root: &str) -> Vec<String> {
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
