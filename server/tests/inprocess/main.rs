//! In-process tests of the rules that live below the HTTP layer: statement counts of list
//! queries, audit atomicity under an injected failure, and the database's own constraints
//! and triggers. Each runs on SQLite and, when reachable (required under CI=true), on a
//! fresh PostgreSQL database.

use std::sync::Arc;

use sea_orm::{ConnectionTrait, EntityTrait, PaginatorTrait, TransactionTrait};
use verdict::audit::{self, Verification};
use verdict::config::Limits;
use verdict::db::Db;
use verdict::domain::{Actor, Write, accounts};
use verdict::graphql::{self, RequestCtx, Services};

/// The fresh databases, shared with the end-to-end harness.
#[path = "../../../tests/e2e/harness/db.rs"]
mod test_db;

#[path = "../../../tests/support/in_process.rs"]
mod in_process;
#[path = "../../../tests/support/spring_hack.rs"]
mod spring_hack;

use in_process::site_admin;
use test_db::{Backend, TestDb};

/// A fresh, migrated database of one backend, connected in process.
struct InProcess {
    db: Db,
    name: &'static str,
    /// Owns the database: its directory (SQLite) lives as long as the test does.
    _test_db: TestDb,
}

async fn connect(backend: Backend) -> Option<InProcess> {
    let fresh = TestDb::create(backend).await?;
    Some(InProcess {
        db: fresh.connect().await,
        name: backend.name(),
        _test_db: fresh,
    })
}

async fn sqlite() -> InProcess {
    connect(Backend::Sqlite)
        .await
        .expect("SQLite is always there")
}

/// SQLite, and PostgreSQL when reachable (required under CI=true).
async fn backends() -> Vec<InProcess> {
    let mut v = vec![sqlite().await];
    v.extend(connect(Backend::Postgres).await);
    v
}

/// The generated `spring-hack-2026` event (the repository's own fixture).
fn fixture() -> serde_json::Value {
    spring_hack::fixture()
}

async fn import_fixture(db: &Db) {
    in_process::import_committed(db, fixture()).await;
}

fn services(db: &Db) -> Services {
    services_batching(db, 25)
}

/// [`services`] whose data loaders wait `window_ms` for a batch to fill.
fn services_batching(db: &Db, window_ms: u64) -> Services {
    static KEY: std::sync::OnceLock<Arc<verdict::crypto::signing::Signer25519>> =
        std::sync::OnceLock::new();
    let signer = KEY
        .get_or_init(|| {
            let dir = std::env::temp_dir().join(format!("verdict-it-{}", std::process::id()));
            std::fs::create_dir_all(&dir).expect("key dir");
            Arc::new(
                verdict::crypto::signing::Signer25519::load_or_create(&dir.join("signing.key"))
                    .expect("key"),
            )
        })
        .clone();
    // A long batching window makes batches deterministic on a busy machine, so that
    // statement counts measure the loaders' structure, not the scheduler: 25 ms by default,
    // more where the counts are the subject (statements.rs).
    // The query-cost limits are lifted: these tests count statements for queries
    // far larger than a client may send (the e2e limits tests check the refusal).
    let limits = Limits {
        loader_batch_ms: window_ms,
        max_complexity: usize::MAX,
        max_complexity_anonymous: usize::MAX,
        max_fields: usize::MAX,
        ..Limits::default()
    };
    in_process::services(db, limits, signer)
}

async fn execute(db: &Db, actor: Option<&Actor>, query: &str) -> async_graphql::Response {
    let s = services(db);
    let schema = graphql::schema(s.clone(), true);
    let caller = actor.map(|a| (a.user.clone(), accounts::Credential::Session { id: 0 }));
    let rc = Arc::new(RequestCtx::new("test".into(), "127.0.0.1".into(), caller));
    let mut req = async_graphql::Request::new(query);
    req.data = graphql::request_data(&s, rc);
    schema.execute(req).await
}

mod audit_chain;
mod clock;
mod constraints;
mod feeds;
mod reads;
mod statements;

async fn execute_with(s: &Services, actor: Option<&Actor>, query: &str) -> async_graphql::Response {
    let schema = graphql::schema(s.clone(), true);
    let caller = actor.map(|a| (a.user.clone(), accounts::Credential::Session { id: 0 }));
    let rc = Arc::new(RequestCtx::new("test".into(), "127.0.0.1".into(), caller));
    let mut req = async_graphql::Request::new(query);
    req.data = graphql::request_data(s, rc);
    schema.execute(req).await
}
