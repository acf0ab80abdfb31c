//! The end-to-end harness: start the real `verdict` binary on port 0 against a fresh
//! database, talk to it over HTTP and websocket, and run its subcommands against the same
//! database.
//!
//! - `db`: the fresh database ([`TestDb`], shared with the in-process tests)
//! - `process`: the server process ([`App`]) and the CLI subcommands
//! - `client`: HTTP and GraphQL requests, signing up and logging in
//! - `ws`: the graphql-transport-ws client (`Ws`)
//! - `operations`: the shared GraphQL operations of `tests/e2e/operations/*.graphql`
//! - `scenario`: the shared event setups and the people in them ([`Scenario`])
//! - `fixture`: the event fixtures to import
//! - `smtp`: a mail receiver on 127.0.0.1 ([`SmtpSink`]) for the mail worker to deliver to
//! - `snapshot`: every table's rows, to assert that a refusal wrote nothing ([`Probe`])
//! - `cluster`: a PostgreSQL server of the test's own, to stop and start ([`Cluster`])
//! - `volume`: small file systems to fill up or turn read-only under SQLite ([`Volume`])
//! - `held`: a change to an event left uncommitted while a request races it ([`HeldChange`])
//! - `timing`: each test's duration, appended to `VERDICT_TEST_TIMES` ([`Timer`])
//!
//! This file holds the `e2e!` macro, [`run`] and the helpers that read a response.

use std::{future::Future, sync::Arc};

use chrono::{SecondsFormat, Utc};
use serde_json::Value;

mod client;
mod cluster;
mod db;
mod fixture;
mod held;
mod operations;
mod process;
mod scenario;
mod smtp;
mod snapshot;
mod timing;
mod volume;
mod ws;

pub use client::Resp;
pub use cluster::{Cluster, Stop};
pub use db::{Backend, TestDb, unique};
pub use fixture::{fixture_path, judged_fixture, load_fixture, tiny_fixture};
pub use held::HeldChange;
pub use operations::op;
pub use process::{App, CliOutput, verdict};
pub use scenario::{CALLERS, Caller, Scenario};
pub use smtp::SmtpSink;
pub use snapshot::{Probe, Snapshot};
pub use timing::Timer;
pub use volume::Volume;
pub use ws::{Ws, ws_code, ws_errors};

/// The site administrator `App::site_admin` creates.
pub const ADMIN_EMAIL: &str = "root@example.org";

/// A password every test user gets; long enough for any sane policy.
pub const PASSWORD: &str = "correct-horse-battery-staple-42";

/// For each `async fn name(app: App)` listed, two tests: `name::sqlite` and
/// `name::postgres`, each against a fresh database. Optional extra server flags in
/// brackets, e.g. `e2e! { throttled ["--login-attempts", "3"] }` (a flag the harness
/// sets by default is replaced).
macro_rules! e2e {
    ($($name:ident $([$($flag:literal),* $(,)?])?),* $(,)?) => {$(
        mod $name {
            const FLAGS: &[&str] = &[$($($flag),*)?];

            #[tokio::test(flavor = "multi_thread")]
            async fn sqlite() {
                $crate::harness::run($crate::harness::Backend::Sqlite, FLAGS, super::$name).await
            }

            #[tokio::test(flavor = "multi_thread")]
            async fn postgres() {
                $crate::harness::run($crate::harness::Backend::Postgres, FLAGS, super::$name).await
            }
        }
    )*};
}

/// Tests of what only PostgreSQL offers (several processes on one database): the same as
/// [`e2e!`], without the SQLite variant.
macro_rules! e2e_postgres {
    ($($name:ident $([$($flag:literal),* $(,)?])?),* $(,)?) => {$(
        mod $name {
            const FLAGS: &[&str] = &[$($($flag),*)?];

            #[tokio::test(flavor = "multi_thread")]
            async fn postgres() {
                $crate::harness::run($crate::harness::Backend::Postgres, FLAGS, super::$name).await
            }
        }
    )*};
}

/// Provision a database, start the server, run the test body, clean up (also when the
/// body panics; the panic is then resumed so the test fails with its own message).
pub async fn run<F, Fut>(backend: Backend, flags: &'static [&'static str], body: F)
where
    F: FnOnce(App) -> Fut + Send + 'static,
    Fut: Future<Output = ()> + Send + 'static,
{
    let _timer = Timer::start();
    let Some(db) = TestDb::create_migrated(backend).await else {
        return;
    };
    let db = Arc::new(db);
    let shared = db.clone();
    let outcome = tokio::spawn(async move { body(App::spawn_on(shared, flags).await).await }).await;
    // The body owned the app; it is gone (child killed) by now. Drop the database.
    drop(db);
    if let Err(e) = outcome {
        if e.is_panic() {
            std::panic::resume_unwind(e.into_panic());
        }
        panic!("test task failed: {e}");
    }
}

// ---- response helpers ----------------------------------------------------------------

/// `data` of a response that must have no errors.
pub fn data(resp: &Value) -> &Value {
    if resp["errors"].as_array().is_some_and(|a| !a.is_empty()) {
        panic!("unexpected errors: {resp}");
    }
    resp.get("data")
        .unwrap_or_else(|| panic!("no data: {resp}"))
}

/// `errors[0].extensions.code`.
pub fn error_code(resp: &Value) -> Option<String> {
    resp.pointer("/errors/0/extensions/code")
        .and_then(Value::as_str)
        .map(str::to_string)
}

/// `errors[0].message`.
pub fn error_message(resp: &Value) -> String {
    resp.pointer("/errors/0/message")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string()
}

/// Assert the first error's code.
#[track_caller]
pub fn assert_code(resp: &Value, code: &str) {
    assert_eq!(
        error_code(resp).as_deref(),
        Some(code),
        "expected {code}: {resp}"
    );
}

/// Assert BAD_USER_INPUT whose `extensions.field` names one of `fields` (a trailing
/// path segment match, so `input.title` names `title`).
#[track_caller]
pub fn assert_bad_input(resp: &Value, fields: &[&str]) {
    assert_code(resp, "BAD_USER_INPUT");
    let field = resp
        .pointer("/errors/0/extensions/field")
        .and_then(Value::as_str)
        .unwrap_or_else(|| panic!("BAD_USER_INPUT without extensions.field: {resp}"));
    let last = field.rsplit(['.', '/']).next().unwrap_or(field);
    assert!(
        fields.iter().any(|f| *f == field || *f == last),
        "extensions.field {field:?} should name one of {fields:?}: {resp}"
    );
}

#[track_caller]
pub fn str_at(v: &Value, pointer: &str) -> String {
    v.pointer(pointer)
        .and_then(Value::as_str)
        .unwrap_or_else(|| panic!("no string at {pointer} in {v}"))
        .to_string()
}

pub fn rfc3339(t: chrono::DateTime<Utc>) -> String {
    t.to_rfc3339_opts(SecondsFormat::Secs, true)
}
