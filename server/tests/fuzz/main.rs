//! Fuzz targets that need a database or the schema, as property tests run by `cargo test`
//! (the pure ones are in `server/src/fuzz/`). Each target runs its committed seed corpus
//! (`server/tests/fuzz-corpus/<target>/`) and then a fixed number of random cases from a
//! fixed seed; `PROPTEST_CASES` and `PROPTEST_RNG_SEED` make a longer or another pass
//! (see `server/src/fuzz/support.rs`). SQLite only: the properties are about input, not
//! about the backend, and each case runs in a transaction that is rolled back or on a
//! database of its own test.
//!
//! - `fuzz_import_*`: the event fixture importer, on fixtures mutated from the README's
//!   example (fields, types, lengths, unicode, duplicates, cross references), never
//!   panics and either imports or refuses with BAD_USER_INPUT naming `fixture`.
//! - `fuzz_bundle_*`: a valid result bundle verifies; any changed byte, truncation,
//!   reordering or re-serialized edit does not; the verifier never panics.
//! - `fuzz_graphql_*`: arbitrary and mutated documents and variables, anonymous and as a
//!   site admin, through the schema with its default limits: no panic, every answer within
//!   a time bound, every error with a contract code and none INTERNAL.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use proptest::prelude::*;
use proptest::test_runner::TestCaseError;
use serde_json::{Value, json};
use verdict::config::Limits;
use verdict::db::Db;
use verdict::domain::{Actor, accounts, import};
use verdict::error::AppError;
use verdict::graphql::{self, RequestCtx, Services};

#[path = "../../src/fuzz/support.rs"]
#[allow(dead_code, reason = "string corpora are for the pure targets")]
mod support;

#[path = "../../../tests/support/in_process.rs"]
mod in_process;

/// The fresh databases, shared with the end-to-end harness.
#[path = "../../../tests/e2e/harness/db.rs"]
#[allow(dead_code, reason = "this target uses SQLite only")]
mod test_db;

use in_process::{import_committed, site_admin};
use test_db::{Backend, TestDb};

/// Random cases per CI run (each target also runs its whole corpus). The three together
/// take a few seconds in a debug build.
const IMPORT_CASES: u32 = 192;
const BUNDLE_CASES: u32 = 1_024;
const GRAPHQL_CASES: u32 = 1_024;

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime")
}

async fn sqlite() -> (TestDb, Db) {
    let t = TestDb::create(Backend::Sqlite)
        .await
        .expect("SQLite is always there");
    let db = t.connect().await;
    (t, db)
}

/// The README's example fixture: the seed every importer case is mutated from.
fn tiny_event() -> Value {
    let text = include_str!("../../../examples/tiny-event.json");
    serde_json::from_str(text).expect("examples/tiny-event.json is JSON")
}

/// `tiny_event` as another event with other people, for a second event in one database.
fn other_event(tag: &str) -> Value {
    let text = include_str!("../../../examples/tiny-event.json")
        .replace("evt_tiny", &format!("evt_{tag}"))
        .replace("tiny-hack", &format!("{tag}-hack"))
        .replace("@example.org", &format!("@{tag}.example.org"));
    serde_json::from_str(&text).expect("JSON")
}

fn signer(dir: &std::path::Path) -> Arc<verdict::crypto::signing::Signer25519> {
    Arc::new(
        verdict::crypto::signing::Signer25519::load_or_create(&dir.join("signing.key"))
            .expect("key"),
    )
}

/// The services `serve` builds, with the default limits.
fn services(db: &Db, dir: &std::path::Path) -> Services {
    in_process::services(db, Limits::default(), signer(dir))
}

/// One request through the schema, as `http::graphql` runs it.
async fn execute(
    s: &Services,
    schema: &graphql::VerdictSchema,
    actor: Option<&Actor>,
    req: async_graphql::Request,
) -> async_graphql::Response {
    let caller = actor.map(|a| (a.user.clone(), accounts::Credential::Session { id: 0 }));
    let rc = Arc::new(RequestCtx::new("fuzz".into(), "127.0.0.1".into(), caller));
    let mut req = req;
    req.data = graphql::request_data(s, rc);
    schema.execute(req).await
}

mod bundle;
mod importer;
mod request;
