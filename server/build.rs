//! Builds the two npm projects the binary embeds, so `cargo build` alone sets everything up:
//!
//! - `web/graphiql`: the GraphiQL playground, handed to `src/web.rs` as
//!   `OUT_DIR/graphiql.{js,css}`;
//! - `web/app`: the web client (Vite, Preact, gql.tada), whose `dist/` is copied to
//!   `OUT_DIR/app/` and listed in `OUT_DIR/app_assets.rs` for `include_bytes!`.
//!
//! Each `dist/` is rebuilt (`npm ci` when the lockfile changed, then `npm run build`) only
//! when it is missing or older than its project's inputs. The client's build type-checks
//! every operation against `schema.graphql`, so a schema change that breaks the client
//! fails its build.
//!
//! Without npm, when npm fails, or with `VERDICT_SKIP_GRAPHIQL=1` / `VERDICT_SKIP_WEB=1`,
//! empty assets are written instead and the server falls back to its minimal hand-written
//! pages (`web/playground.html`, `web/index.html`, `web/invite.html`). npm never fails the
//! cargo build; after a failed or skipped npm step, `touch web/<project>/package.json` (or
//! unset the variable) to try again.

use std::env;
use std::fmt::Write as _;
use std::fs;
use std::io::ErrorKind;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::SystemTime;

const GRAPHIQL_ASSETS: [&str; 2] = ["graphiql.js", "graphiql.css"];

fn main() {
    let manifest_dir =
        PathBuf::from(env::var_os("CARGO_MANIFEST_DIR").expect("CARGO_MANIFEST_DIR"));
    let out_dir = PathBuf::from(env::var_os("OUT_DIR").expect("OUT_DIR"));
    println!("cargo:rerun-if-changed=build.rs");
    graphiql(&manifest_dir.join("../web/graphiql"), &out_dir);
    client(
        &manifest_dir.join("../web/app"),
        &manifest_dir.join("../schema.graphql"),
        &out_dir,
    );
}

fn skipped(var: &str) -> bool {
    println!("cargo:rerun-if-env-changed={var}");
    env::var_os(var).is_some_and(|v| !v.is_empty() && v != "0")
}

fn graphiql(project: &Path, out_dir: &Path) {
    let dist = project.join("dist");
    let inputs: Vec<PathBuf> = ["package.json", "package-lock.json", "build.mjs", "src"]
        .iter()
        .map(|i| project.join(i))
        .collect();
    for input in &inputs {
        println!("cargo:rerun-if-changed={}", input.display());
    }
    let outputs: Vec<PathBuf> = GRAPHIQL_ASSETS.iter().map(|n| dist.join(n)).collect();
    let result = if skipped("VERDICT_SKIP_GRAPHIQL") {
        Err("VERDICT_SKIP_GRAPHIQL is set".to_owned())
    } else {
        ensure_dist(project, &inputs, &outputs)
    };
    let result = result.and_then(|()| {
        for name in GRAPHIQL_ASSETS {
            fs::copy(dist.join(name), out_dir.join(name))
                .map_err(|e| format!("copying dist/{name}: {e}"))?;
        }
        Ok(())
    });
    if let Err(why) = result {
        println!(
            "cargo:warning=GraphiQL assets unavailable ({why}): serving the minimal playground"
        );
        for name in GRAPHIQL_ASSETS {
            fs::write(out_dir.join(name), b"").expect("writing an empty asset to OUT_DIR");
        }
    }
}

/// The web client: `dist/` copied under `OUT_DIR/app/`, and `app_assets.rs` listing each
/// file as `(path, bytes)`, e.g. `("/assets/index-XzLCjAWN.js", include_bytes!(...))`.
fn client(project: &Path, schema: &Path, out_dir: &Path) {
    let dist = project.join("dist");
    let mut inputs: Vec<PathBuf> = [
        "package.json",
        "package-lock.json",
        "index.html",
        "vite.config.ts",
        "tsconfig.json",
        "src",
    ]
    .iter()
    .map(|i| project.join(i))
    .collect();
    inputs.push(schema.to_path_buf());
    for input in &inputs {
        println!("cargo:rerun-if-changed={}", input.display());
    }
    let target = out_dir.join("app");
    let _ = fs::remove_dir_all(&target);
    let result = if skipped("VERDICT_SKIP_WEB") {
        Err("VERDICT_SKIP_WEB is set".to_owned())
    } else {
        ensure_dist(project, &inputs, &[dist.join("index.html")])
    };
    let files = result.and_then(|()| copy_tree(&dist, &target));
    let files = files.unwrap_or_else(|why| {
        println!("cargo:warning=web client unavailable ({why}): serving the placeholder pages");
        Vec::new()
    });
    let mut list = String::from("&[\n");
    for rel in files {
        let full = target.join(&rel);
        let _ = writeln!(
            list,
            "    (\"/{}\", include_bytes!({:?}) as &[u8]),",
            rel.replace('\\', "/"),
            full.display().to_string()
        );
    }
    list.push(']');
    fs::write(out_dir.join("app_assets.rs"), list).expect("writing app_assets.rs");
}

/// Copies `from` to `to` recursively; returns the files' paths relative to `from`, sorted.
fn copy_tree(from: &Path, to: &Path) -> Result<Vec<String>, String> {
    let mut files = Vec::new();
    let mut stack = vec![PathBuf::new()];
    while let Some(rel) = stack.pop() {
        let dir = from.join(&rel);
        fs::create_dir_all(to.join(&rel)).map_err(|e| format!("creating {rel:?}: {e}"))?;
        for entry in fs::read_dir(&dir).map_err(|e| format!("reading {}: {e}", dir.display()))? {
            let entry = entry.map_err(|e| e.to_string())?;
            let child = rel.join(entry.file_name());
            if entry.path().is_dir() {
                stack.push(child);
            } else {
                fs::copy(entry.path(), to.join(&child))
                    .map_err(|e| format!("copying {child:?}: {e}"))?;
                files.push(child.to_string_lossy().into_owned());
            }
        }
    }
    files.sort();
    Ok(files)
}

/// Makes `dist/` current, running npm only when an output is missing or older than an
/// input.
fn ensure_dist(project: &Path, inputs: &[PathBuf], outputs: &[PathBuf]) -> Result<(), String> {
    let lock = project.join("package-lock.json");
    let newest_input = newest_mtime(inputs);
    let built = outputs.iter().map(|o| mtime(o)).min().flatten();
    if matches!((built, newest_input), (Some(b), Some(i)) if b >= i) {
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
    for output in outputs {
        if mtime(output).is_none() {
            return Err(format!("`npm run build` produced no {}", output.display()));
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
