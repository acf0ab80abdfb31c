//! The layers point down: a module of the library may use only modules on floors below its
//! own. The floors are the table below (the same table as `lib.rs`'s doc); this test reads
//! every file of `server/src` that belongs to the library, finds the modules it names
//! (`use crate::x::...`, `crate::{x, y}`, `crate::x::f(...)` in code, and a `super::` chain
//! that climbs out to the crate root), and fails on any name of a module on its own floor
//! or above. Comments are not read: a doc link up is not a dependency.
//!
//! The binary (`main.rs` and the modules it declares: `cli/`, the command line) is the top
//! floor and may use everything, through the library's public path (`verdict::...`); its
//! own `crate::` names only its own modules. A module that `lib.rs` declares but the table
//! does not place fails the test too, so a new module is given its floor when it is added,
//! and so does a file under `server/src` that belongs to neither the library nor the
//! binary.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The floors, lowest first: each module of the library, and why it stands there.
const FLOORS: &[(&[&str], &str)] = &[
    (
        &["calibrate", "config", "error", "html", "memo"],
        "nothing of the app: the estimator, the parsed configuration, the error type, \
         HTML escaping, the shared memo",
    ),
    (
        &["crypto", "planner"],
        "crypto returns the error type; the planner shares the estimator's helpers",
    ),
    (&["db"], "connections and transactions"),
    (&["audit"], "the hash-chained log every write appends to"),
    (
        &["mail", "metrics", "webhooks"],
        "services beside the rules: the outbox and delivery workers, the metric recorder and \
         its gauges, the webhook address gate; they read tables and know no rule",
    ),
    (&["domain"], "the business rules"),
    (
        &["backup", "bundle", "demo", "event_bundle"],
        "the command line's tools, built on the rules",
    ),
    (&["graphql"], "the schema, its policies and resolvers"),
    (&["http"], "the router, the handlers, the client's assets"),
    (
        &["fuzz"],
        "fuzz targets (tests only), free to reach any floor",
    ),
];

/// Known exceptions: (file under `server/src`, module it may name although above it, why).
/// Empty: every upward import was removed rather than listed.
const EXCEPTIONS: &[(&str, &str, &str)] = &[];

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("read {}: {e}", dir.display()))
        .map(|e| e.expect("a directory entry").path())
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

/// The text of `source` without comments and string literals (so that neither a doc link
/// nor a message mentioning `crate::x` counts as a use).
fn code_of(source: &str) -> String {
    let b = source.as_bytes();
    let mut out = String::with_capacity(source.len());
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'/' if b.get(i + 1) == Some(&b'/') => {
                while i < b.len() && b[i] != b'\n' {
                    i += 1;
                }
            }
            b'/' if b.get(i + 1) == Some(&b'*') => {
                let mut depth = 0;
                while i < b.len() {
                    if b[i] == b'/' && b.get(i + 1) == Some(&b'*') {
                        depth += 1;
                        i += 2;
                    } else if b[i] == b'*' && b.get(i + 1) == Some(&b'/') {
                        depth -= 1;
                        i += 2;
                        if depth == 0 {
                            break;
                        }
                    } else {
                        i += 1;
                    }
                }
            }
            b'r' if matches!(b.get(i + 1), Some(b'"') | Some(b'#'))
                && (i == 0 || !(b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_')) =>
            {
                // A raw string: r"...", r#"..."#.
                let mut j = i + 1;
                let mut hashes = 0;
                while b.get(j) == Some(&b'#') {
                    hashes += 1;
                    j += 1;
                }
                if b.get(j) != Some(&b'"') {
                    out.push('r');
                    i += 1;
                    continue;
                }
                j += 1;
                let close: Vec<u8> = std::iter::once(b'"')
                    .chain(std::iter::repeat_n(b'#', hashes))
                    .collect();
                while j < b.len() && !b[j..].starts_with(&close) {
                    j += 1;
                }
                i = j + close.len();
                out.push_str("\"\"");
            }
            b'"' => {
                i += 1;
                while i < b.len() && b[i] != b'"' {
                    if b[i] == b'\\' {
                        i += 1;
                    }
                    i += 1;
                }
                i += 1;
                out.push_str("\"\"");
            }
            b'\'' => {
                // A char literal ('x', '\n', '"') is skipped; a lifetime ('a) is kept.
                let lit = if b.get(i + 1) == Some(&b'\\') {
                    b.get(i + 3..)
                        .and_then(|r| r.iter().position(|&c| c == b'\''))
                        .map(|p| i + 4 + p)
                } else if b.get(i + 2) == Some(&b'\'') {
                    Some(i + 3)
                } else {
                    None
                };
                match lit {
                    Some(end) => {
                        out.push_str("' '");
                        i = end;
                    }
                    None => {
                        out.push('\'');
                        i += 1;
                    }
                }
            }
            c => {
                out.push(c as char);
                i += 1;
            }
        }
    }
    out
}

fn ident_at(s: &str) -> Option<&str> {
    let end = s
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .unwrap_or(s.len());
    (end > 0).then(|| &s[..end])
}

/// The first segment of every item of a `{...}` group starting at `s` (after the brace),
/// for `crate::{a::b, c}`.
fn group_heads(s: &str) -> Vec<&str> {
    let mut heads = vec![];
    let mut depth = 1;
    let mut start = 0;
    for (i, c) in s.char_indices() {
        match c {
            '{' => depth += 1,
            '}' | ',' if depth == 1 => {
                heads.extend(ident_at(s[start..i].trim_start()));
                start = i + 1;
                if c == '}' {
                    break;
                }
            }
            '}' => depth -= 1,
            _ => {}
        }
    }
    heads
}

/// The crate-level names `code` uses: after `crate::`, and after a chain of `super::` at
/// least `depth` long (the file's depth below the crate root).
fn crate_names(code: &str, depth: usize) -> BTreeSet<String> {
    let mut names = BTreeSet::new();
    let word_start = |i: usize| {
        i == 0 || {
            let p = code.as_bytes()[i - 1];
            !(p.is_ascii_alphanumeric() || p == b'_')
        }
    };
    let mut add = |rest: &str| {
        if let Some(group) = rest.strip_prefix('{') {
            names.extend(group_heads(group).into_iter().map(str::to_owned));
        } else if let Some(id) = ident_at(rest) {
            names.insert(id.to_owned());
        }
    };
    for (i, _) in code.match_indices("crate::") {
        if word_start(i) {
            add(code[i + "crate::".len()..].trim_start());
        }
    }
    for (i, _) in code.match_indices("super::") {
        if !word_start(i) || code[..i].ends_with("super::") {
            continue;
        }
        let mut rest = &code[i..];
        let mut climbs = 0;
        while let Some(r) = rest.strip_prefix("super::") {
            climbs += 1;
            rest = r;
        }
        if climbs >= depth {
            add(rest.trim_start());
        }
    }
    names
}

/// The modules `lib.rs` declares.
fn library_modules(lib: &str) -> BTreeSet<String> {
    code_of(lib)
        .lines()
        .filter_map(|l| {
            let l = l.trim();
            let l = l
                .strip_prefix("pub(crate) ")
                .or_else(|| l.strip_prefix("pub "))
                .unwrap_or(l);
            let name = l.strip_prefix("mod ")?.strip_suffix(';')?;
            Some(name.trim().to_owned())
        })
        .collect()
}

fn floor_of() -> BTreeMap<&'static str, usize> {
    let mut floors = BTreeMap::new();
    for (n, (modules, _)) in FLOORS.iter().enumerate() {
        for m in *modules {
            assert!(floors.insert(*m, n).is_none(), "{m} is on two floors");
        }
    }
    floors
}

#[test]
fn every_module_uses_only_floors_below_its_own() {
    let root = src();
    let lib = std::fs::read_to_string(root.join("lib.rs")).expect("read lib.rs");
    let declared = library_modules(&lib);
    let floors = floor_of();
    let placed: BTreeSet<String> = floors.keys().map(|m| m.to_string()).collect();
    assert_eq!(
        declared, placed,
        "lib.rs declares the modules on the left; FLOORS places those on the right: give \
         each module of lib.rs one floor"
    );

    let main = std::fs::read_to_string(root.join("main.rs")).expect("read main.rs");
    let binary = library_modules(&main);
    let mut files = vec![];
    rust_files(&root, &mut files);
    let mut checked = 0;
    let mut upward = vec![];
    for path in files {
        let rel = path.strip_prefix(&root).expect("under src");
        let parts: Vec<String> = rel
            .iter()
            .map(|p| p.to_string_lossy().trim_end_matches(".rs").to_owned())
            .collect();
        let top = parts[0].as_str();
        // lib.rs is the root; main.rs and the modules it declares are the binary.
        let Some(&floor) = floors.get(top) else {
            continue;
        };
        assert!(
            !binary.contains(top),
            "`{top}` is declared by both lib.rs and main.rs"
        );
        let depth = parts.len() - usize::from(parts.last().is_some_and(|p| p == "mod"));
        let source = std::fs::read_to_string(&path).expect("read a source file");
        checked += 1;
        for name in crate_names(&code_of(&source), depth) {
            let Some(&to) = floors.get(name.as_str()) else {
                continue;
            };
            let file = rel.to_string_lossy().replace('\\', "/");
            let excused = EXCEPTIONS.iter().any(|(f, m, _)| *f == file && *m == name);
            if name != top && to >= floor && !excused {
                upward.push(format!(
                    "server/src/{file}: `{top}` (floor {floor}) uses `{name}` (floor {to})"
                ));
            }
        }
    }
    assert!(checked > 50, "only {checked} files were read");
    assert!(
        upward.is_empty(),
        "imports that do not point down (move the code, or list an exception with its \
         reason):\n{}",
        upward.join("\n")
    );
}

/// The binary's modules (`main.rs` declares them) hold the command line: the library is
/// theirs to use, but only through `verdict::`, as any other program would; `crate::`
/// in them names the binary's own modules. Every file under `server/src` is the library's
/// or the binary's.
#[test]
fn the_binary_stands_on_top_and_every_file_belongs_to_a_crate() {
    let root = src();
    let lib = library_modules(&std::fs::read_to_string(root.join("lib.rs")).expect("lib.rs"));
    let main = std::fs::read_to_string(root.join("main.rs")).expect("read main.rs");
    let binary = library_modules(&main);
    assert!(
        binary.contains("cli"),
        "main.rs declares the command line's module, cli: {binary:?}"
    );
    let mut files = vec![];
    rust_files(&root, &mut files);
    let mut strays = vec![];
    let mut reaching = vec![];
    let mut commands = 0;
    for path in files {
        let rel = path.strip_prefix(&root).expect("under src");
        let parts: Vec<String> = rel
            .iter()
            .map(|p| p.to_string_lossy().trim_end_matches(".rs").to_owned())
            .collect();
        let top = parts[0].as_str();
        let file = rel.to_string_lossy().replace('\\', "/");
        if top == "lib" || lib.contains(top) {
            continue;
        }
        if top != "main" && !binary.contains(top) {
            strays.push(file);
            continue;
        }
        commands += 1;
        let source = std::fs::read_to_string(&path).expect("read a source file");
        let depth = parts.len() - usize::from(parts.last().is_some_and(|p| p == "mod"));
        for name in crate_names(&code_of(&source), depth) {
            if !binary.contains(&name) {
                reaching.push(format!("server/src/{file}: crate::{name}"));
            }
        }
    }
    assert!(
        strays.is_empty(),
        "files that neither lib.rs nor main.rs declares: {strays:?}"
    );
    assert!(
        commands > 5,
        "only {commands} files of the binary were read"
    );
    assert!(
        reaching.is_empty(),
        "the binary names the library as verdict::, never crate:: (a `mod` of a library \
         file in main.rs would compile it twice):\n{}",
        reaching.join("\n")
    );
}

#[test]
fn every_exception_is_still_needed() {
    let root = src();
    let floors = floor_of();
    for (file, name, why) in EXCEPTIONS {
        assert!(!why.is_empty(), "{file}: an exception without a reason");
        let source = std::fs::read_to_string(root.join(file)).expect("an excepted file");
        let depth = file.split('/').count();
        assert!(
            crate_names(&code_of(&source), depth).contains(*name) && floors.contains_key(name),
            "{file} no longer uses {name}: drop its exception"
        );
    }
}

#[test]
fn the_reader_finds_what_code_uses_and_not_what_comments_say() {
    let code = code_of(
        "//! See [`crate::http`].\n\
         use crate::{audit::{self, Entry}, error::AppError};\n\
         use super::super::graphql::x;\n\
         let s = \"crate::web\"; let r = r#\"crate::mail\"#; let q = '\"';\n\
         /* crate::metrics */ fn f() { crate::db::now(); }\n",
    );
    let names = crate_names(&code, 2);
    let expected: BTreeSet<String> = ["audit", "db", "error", "graphql"]
        .into_iter()
        .map(str::to_owned)
        .collect();
    assert_eq!(names, expected, "{code}");
    assert!(crate_names("use super::x;", 2).is_empty());
    assert_eq!(
        library_modules("pub mod a;\nmod b;\n#[cfg(test)]\nmod c;\n// mod d;\n"),
        ["a", "b", "c"].into_iter().map(str::to_owned).collect()
    );
}
