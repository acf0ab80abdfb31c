//! The web client in a real browser: the stories in `web/app/e2e/*.spec.ts`, run by
//! Playwright Test in Debian's Chromium against this binary on a fresh database, once per
//! backend (a participant, a judge on a phone, an organizer watching judging live, an
//! anonymous visitor reading the results, each page checked with axe-core).
//!
//! They need Node.js with `web/app`'s npm packages (`build.rs` installs them while
//! building the client), the client compiled into the binary, and `/usr/bin/chromium`
//! (`apt-get install -y chromium`; `.ci/run` installs it; `VERDICT_CHROMIUM` names another).
//! When one is missing the test says so past the output capture and passes, except under
//! `CI=true`, where it fails: a run that never opened a browser must not look like one that
//! did.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::harness::{ADMIN_EMAIL, App};

e2e! {
    // The organizer's webhook story registers a receiver on 127.0.0.1 (port 9, nothing
    // listening) rather than making the server contact a public address.
    browser_stories ["--allow-loopback-webhooks"],
    browser_demo ["--demo"],
    browser_setup,
}

/// Said past the harness's output capture, on a line `.ci/run` can find.
fn say(what: &str) {
    let _ = writeln!(std::io::stderr(), "*** browser tests: {what}");
}

fn web_app() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../web/app")
}

/// What is missing for the browser tests, if anything.
async fn missing(app: &App, chromium: &Path) -> Vec<String> {
    let mut missing = Vec::new();
    if !chromium.exists() {
        missing.push(format!(
            "no browser at {} (apt-get install -y chromium)",
            chromium.display()
        ));
    }
    if !web_app().join("node_modules/.bin/playwright").exists() {
        missing.push(
            "web/app/node_modules (npm ci in web/app; build.rs runs it when npm is on PATH)".into(),
        );
    }
    let index = app.get("/").await.text;
    if !index.contains("<div id=\"app\">") {
        missing.push(
            "the web client in the binary (built without npm or with VERDICT_SKIP_WEB)".into(),
        );
    }
    missing
}

async fn browser_stories(app: App) {
    let (_, password) = app.site_admin_as(ADMIN_EMAIL).await;
    playwright(
        &app,
        "stories",
        &[],
        &[
            ("VERDICT_ADMIN_EMAIL".to_owned(), ADMIN_EMAIL.to_owned()),
            ("VERDICT_ADMIN_PASSWORD".to_owned(), password),
        ],
    )
    .await;
}

/// `serve --demo` in the browser: `e2e/demo.spec.ts` with the demo accounts, whose
/// passwords the operator's `verdict user reset-password` gives.
async fn browser_demo(app: App) {
    let mut env = vec![("VERDICT_DEMO".to_owned(), "1".to_owned())];
    for role in ["admin", "organizer", "judge", "participant"] {
        let email = format!("{role}@demo.verdict.local");
        let out = app
            .cli(&["user", "reset-password", "--email", &email])
            .await;
        assert!(out.success(), "{out:?}");
        let var = format!("VERDICT_DEMO_{}_PASSWORD", role.to_uppercase());
        env.push((var, out.stdout.trim().to_owned()));
    }
    playwright(&app, "demo", &["e2e/demo.spec.ts"], &env).await;
}

/// A fresh deployment in the browser: `e2e/setup.spec.ts` follows the setup link the
/// server printed (no account exists yet) and creates an event as the new site admin.
async fn browser_setup(app: App) {
    let link = crate::setup::printed_setup_link(&app).expect("a fresh server prints a setup link");
    let env = [("VERDICT_SETUP_LINK".to_owned(), link)];
    playwright(&app, "setup", &["e2e/setup.spec.ts"], &env).await;
}

/// Runs Playwright Test in `web/app` against `app` (unless something it needs is missing:
/// then it says so, and fails under `CI=true`).
async fn playwright(app: &App, what: &str, args: &[&str], env: &[(String, String)]) {
    let backend = app.backend().name();
    // Debian's headless shell where it is installed (as playwright.config.ts chooses).
    let chromium = std::env::var_os("VERDICT_CHROMIUM")
        .map(PathBuf::from)
        .or_else(|| {
            ["/usr/bin/chromium-headless-shell", "/usr/bin/chromium"]
                .map(PathBuf::from)
                .into_iter()
                .find(|p| p.exists())
        })
        .unwrap_or_else(|| PathBuf::from("/usr/bin/chromium"));
    let missing = missing(app, &chromium).await;
    if !missing.is_empty() {
        let why = missing.join("; ");
        if std::env::var("CI").as_deref() == Ok("true") {
            panic!("CI=true requires the browser tests, but: {why}");
        }
        say(&format!(
            "SKIPPED {what} on {backend}, nothing was checked in a browser: {why}"
        ));
        return;
    }

    let artifacts =
        Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("browser-{what}-{backend}"));
    let mut cmd = tokio::process::Command::new(web_app().join("node_modules/.bin/playwright"));
    cmd.arg("test")
        .args(args)
        .current_dir(web_app())
        .env("VERDICT_URL", &app.base)
        .env("VERDICT_ARTIFACTS", &artifacts)
        .env("VERDICT_CHROMIUM", &chromium)
        .kill_on_drop(true);
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = tokio::time::timeout(Duration::from_secs(15 * 60), cmd.output())
        .await
        .expect("the browser tests finish within 15 minutes")
        .expect("playwright runs");
    let text =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    // Playwright's closing lines: "  12 passed (48.1s)", "  1 failed", ...
    let summary: Vec<&str> = text
        .lines()
        .map(str::trim)
        .filter(|l| {
            ["passed", "failed", "flaky", "skipped", "did not run"]
                .iter()
                .any(|w| l.split(" (").next().is_some_and(|h| h.ends_with(w)))
                && l.chars().next().is_some_and(|c| c.is_ascii_digit())
        })
        .collect();
    say(&format!(
        "{what} on {backend} in {}: {} (what failed left its screenshots in {})",
        chromium.display(),
        summary.join(", "),
        artifacts.display()
    ));
    assert!(
        out.status.success(),
        "the browser {what} failed on {backend}:\n{text}"
    );
}
