//! Builds the GraphiQL playground bundle (`web/graphiql`, an npm project) and hands it to
//! `src/web.rs` through `OUT_DIR/graphiql.{js,css}`.
//!
//! - `web/graphiql/dist/` is rebuilt (`npm ci` when the lockfile changed, then `npm run
//!   build`) only when it is missing or older than the npm project's inputs.
//! - Without npm, when npm fails, or with `VERDICT_SKIP_GRAPHIQL=1`, empty files are written
//!   instead and the server falls back to its minimal hand-written playground. npm never
//!   fails the cargo build.
//! - After a failed or skipped npm step, `touch web/graphiql/package.json` (or unset
//!   `VERDICT_SKIP_GRAPHIQL`) to try again.

use std::env;
use std::fs;
use std::io::ErrorKind;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::SystemTime;

const ASSETS: [&str; 2] = ["graphiql.js", "graphiql.css"];

fn main() {
    let manifest_dir =
        PathBuf::from(env::var_os("CARGO_MANIFEST_DIR").expect("CARGO_MANIFEST_DIR"));
    let out_dir = PathBuf::from(env::var_os("OUT_DIR").expect("OUT_DIR"));
    let project = manifest_dir.join("../web/graphiql");
    let dist = project.join("dist");

    println!("cargo:rerun-if-changed=build.rs");
    for input in ["package.json", "package-lock.json", "build.mjs", "src"] {
        println!("cargo:rerun-if-changed={}", project.join(input).display());
    }
    println!("cargo:rerun-if-env-changed=VERDICT_SKIP_GRAPHIQL");

    let result = if env::var_os("VERDICT_SKIP_GRAPHIQL").is_some_and(|v| !v.is_empty() && v != "0")
    {
        Err("VERDICT_SKIP_GRAPHIQL is set".to_owned())
    } else {
        ensure_dist(&project, &dist)
    };
    let result = result.and_then(|()| {
        for name in ASSETS {
            fs::copy(dist.join(name), out_dir.join(name))
                .map_err(|e| format!("copying dist/{name}: {e}"))?;
        }
        Ok(())
    });
    if let Err(why) = result {
        println!(
            "cargo:warning=GraphiQL assets unavailable ({why}): serving the minimal playground"
        );
        for name in ASSETS {
            fs::write(out_dir.join(name), b"").expect("writing an empty asset to OUT_DIR");
        }
    }
}

/// Makes `dist/` current, running npm only when it is stale.
fn ensure_dist(project: &Path, dist: &Path) -> Result<(), String> {
    let lock = project.join("package-lock.json");
    let inputs = newest_mtime(&[
        project.join("package.json"),
        lock.clone(),
        project.join("build.mjs"),
        project.join("src"),
    ]);
    let built = ASSETS
        .iter()
        .map(|name| mtime(&dist.join(name)))
        .min()
        .flatten();
    if matches!((built, inputs), (Some(b), Some(i)) if b >= i) {
        return Ok(()); // fresh: no npm at all
    }

    let npm = if cfg!(windows) { "npm.cmd" } else { "npm" };
    match Command::new(npm).arg("--version").output() {
        Ok(o) if o.status.success() => {}
        Ok(_) => return Err("`npm --version` failed".to_owned()),
        Err(e) if e.kind() == ErrorKind::NotFound => return Err("npm is not on PATH".to_owned()),
        Err(e) => return Err(format!("cannot run npm: {e}")),
    }

    // `npm ci` wipes and reinstalls node_modules: only when the lockfile is newer than the
    // install (npm records the install in node_modules/.package-lock.json).
    let installed = mtime(&project.join("node_modules/.package-lock.json"));
    let manifests = newest_mtime(&[project.join("package.json"), lock]);
    if !matches!((installed, manifests), (Some(i), Some(m)) if i >= m) {
        // --ignore-scripts: no dependency runs code at install time (esbuild finds its
        // platform binary without its postinstall step).
        run(
            project,
            npm,
            &["ci", "--no-audit", "--no-fund", "--ignore-scripts"],
        )?;
    }
    run(project, npm, &["run", "build"])?;
    for name in ASSETS {
        if mtime(&dist.join(name)).is_none() {
            return Err(format!("`npm run build` produced no dist/{name}"));
        }
    }
    Ok(())
}

/// Runs npm in `dir`; on failure, its output becomes cargo warnings.
fn run(dir: &Path, npm: &str, args: &[&str]) -> Result<(), String> {
    let what = format!("npm {}", args.join(" "));
    let out = Command::new(npm)
        .args(args)
        .current_dir(dir)
        .output()
        .map_err(|e| format!("{what}: {e}"))?;
    if out.status.success() {
        return Ok(());
    }
    let text =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    for line in &lines[lines.len().saturating_sub(30)..] {
        println!("cargo:warning={what}: {line}");
    }
    Err(format!("`{what}` failed with {}", out.status))
}

fn mtime(path: &Path) -> Option<SystemTime> {
    fs::metadata(path).and_then(|m| m.modified()).ok()
}

/// The newest modification time among these files and everything below these folders.
fn newest_mtime(paths: &[PathBuf]) -> Option<SystemTime> {
    let mut newest = None;
    let mut stack: Vec<PathBuf> = paths.to_vec();
    while let Some(p) = stack.pop() {
        let Ok(meta) = fs::metadata(&p) else { continue };
        if let Ok(t) = meta.modified() {
            newest = newest.max(Some(t));
        }
        if meta.is_dir()
            && let Ok(entries) = fs::read_dir(&p)
        {
            stack.extend(entries.flatten().map(|e| e.path()));
        }
    }
    newest
}
