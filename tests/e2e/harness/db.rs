//! The database behind one test: a fresh SQLite file in a temporary directory, or a fresh
//! PostgreSQL database created on the server named by `VERDICT_TEST_PG_URL` (default
//! `postgres://postgres@127.0.0.1:5432/postgres`; when it is unreachable the test is
//! skipped, unless `CI=true`).
//!
//! Shared by two test targets: the end-to-end tests hand [`TestDb::url`] to the binary,
//! the in-process tests (`server/tests/inprocess/`, which includes this file by path)
//! [`TestDb::connect`] to it. So this file depends on nothing else of the harness.

use std::{
    path::{Path, PathBuf},
    sync::atomic::{AtomicU64, Ordering},
    time::{Duration, SystemTime, UNIX_EPOCH},
};

use sea_orm::{ConnectOptions, ConnectionTrait, Database, DatabaseConnection};

/// Which database a test runs on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Backend {
    Sqlite,
    Postgres,
}

impl Backend {
    /// `sqlite` or `postgres`, for messages.
    #[allow(
        dead_code,
        reason = "the in-process tests name their backend, e2e tests do not"
    )]
    pub fn name(self) -> &'static str {
        match self {
            Backend::Sqlite => "sqlite",
            Backend::Postgres => "postgres",
        }
    }
}

static COUNTER: AtomicU64 = AtomicU64::new(0);

/// A short unique suffix for names (databases, slugs, emails).
pub fn unique() -> String {
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    format!(
        "{:x}{:x}{:x}",
        std::process::id(),
        nanos & 0xff_ffff_ffff,
        n
    )
}

/// A fresh, empty database and a temporary directory beside it (for the SQLite file, the
/// signing key and whatever else a test writes).
pub struct TestDb {
    backend: Backend,
    url: String,
    dir: tempfile::TempDir,
    pg: Option<(String, String)>, // (base url, database name)
}

impl TestDb {
    /// `None` when PostgreSQL is unreachable and the run is not CI (the test is skipped).
    pub async fn create(backend: Backend) -> Option<TestDb> {
        let dir = tempfile::tempdir().expect("tempdir");
        match backend {
            Backend::Sqlite => {
                let url = format!("sqlite://{}/verdict.db?mode=rwc", dir.path().display());
                Some(TestDb {
                    backend,
                    url,
                    dir,
                    pg: None,
                })
            }
            Backend::Postgres => {
                let base = pg_base_url();
                let conn = match pg_connect(&base).await {
                    Ok(c) => c,
                    Err(e) => {
                        if std::env::var("CI").as_deref() == Ok("true") {
                            panic!("PostgreSQL unreachable at {base} (CI=true): {e}");
                        }
                        announce_skipped_postgres(&base, &e.to_string());
                        return None;
                    }
                };
                let name = format!("verdict_test_{}", unique());
                conn.execute_unprepared(&format!("CREATE DATABASE {name}"))
                    .await
                    .unwrap_or_else(|e| panic!("CREATE DATABASE {name}: {e}"));
                let _ = conn.close().await;
                let url = replace_db_name(&base, &name);
                Some(TestDb {
                    backend,
                    url,
                    dir,
                    pg: Some((base, name)),
                })
            }
        }
    }

    /// The database at `url` as it is (a private PostgreSQL cluster's, a SQLite file on a
    /// file system a test made): nothing is created, and nothing dropped afterwards. The
    /// key file goes in a temporary directory of its own.
    #[allow(dead_code, reason = "used by the e2e tests, not the in-process ones")]
    pub fn at(backend: Backend, url: String) -> TestDb {
        TestDb {
            backend,
            url,
            dir: tempfile::tempdir().expect("tempdir"),
            pg: None,
        }
    }

    #[allow(dead_code, reason = "used by the e2e tests, not the in-process ones")]
    pub fn backend(&self) -> Backend {
        self.backend
    }

    /// The connection URL, as the binary's `--database-url` takes it.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// The test's temporary directory.
    #[allow(dead_code, reason = "used by the e2e tests, not the in-process ones")]
    pub fn dir(&self) -> &Path {
        self.dir.path()
    }

    /// Where the server keeps its signing key.
    #[allow(dead_code, reason = "used by the e2e tests, not the in-process ones")]
    pub fn key_file(&self) -> PathBuf {
        self.dir.path().join("signing.key")
    }

    /// Marks `email`'s address confirmed, straight in the database: what using the mailed
    /// link does, for tests whose subject is something else.
    #[allow(dead_code, reason = "used by the e2e tests, not the in-process ones")]
    pub async fn confirm_email(&self, email: &str) {
        use entity::user;
        use sea_orm::{ColumnTrait, EntityTrait, QueryFilter, sea_query::Expr};
        let conn = sea_orm::Database::connect(self.url())
            .await
            .unwrap_or_else(|e| panic!("connect to {}: {e}", self.url()));
        user::Entity::update_many()
            .col_expr(
                user::Column::EmailConfirmedAt,
                Expr::col(user::Column::CreatedAt),
            )
            .filter(user::Column::Email.eq(email.trim().to_lowercase()))
            .exec(&conn)
            .await
            .expect("confirm the address");
        let _ = conn.close().await;
    }

    /// Connect in process and run the migrations (the binary does both itself on start).
    #[allow(dead_code, reason = "used by the in-process tests, not the e2e ones")]
    pub async fn connect(&self) -> verdict::db::Db {
        let url = self.url();
        let db = verdict::db::Db::connect(url)
            .await
            .unwrap_or_else(|e| panic!("connect to {url}: {e}"));
        db.migrate().await.expect("migrate");
        db
    }
}

/// Drops the PostgreSQL database when the test is done with it, passed or failed (a SQLite
/// file goes with the directory). Runs on its own thread and runtime, so it works whether
/// or not the dropping thread is inside one.
impl Drop for TestDb {
    fn drop(&mut self) {
        let Some((base, name)) = self.pg.take() else {
            return;
        };
        let dropped = std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .ok()?;
            rt.block_on(async {
                let conn = pg_connect(&base).await.ok()?;
                let _ = conn
                    .execute_unprepared(&format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)"))
                    .await;
                conn.close().await.ok()
            })
        });
        let _ = dropped.join();
    }
}

fn pg_base_url() -> String {
    std::env::var("VERDICT_TEST_PG_URL")
        .unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/postgres".to_string())
}

async fn pg_connect(url: &str) -> Result<DatabaseConnection, sea_orm::DbErr> {
    let mut opt = ConnectOptions::new(url.to_string());
    opt.connect_timeout(Duration::from_secs(5))
        .acquire_timeout(Duration::from_secs(5))
        .max_connections(1)
        .sqlx_logging(false);
    Database::connect(opt).await
}

/// `postgres://u@h:p/db?x` with the database name replaced.
fn replace_db_name(base: &str, name: &str) -> String {
    let (head, query) = match base.split_once('?') {
        Some((h, q)) => (h, Some(q)),
        None => (base, None),
    };
    let scheme_end = head.find("://").map(|i| i + 3).unwrap_or(0);
    let authority_end = head[scheme_end..]
        .find('/')
        .map(|i| scheme_end + i)
        .unwrap_or(head.len());
    let mut url = format!("{}/{}", &head[..authority_end], name);
    if let Some(q) = query {
        url.push('?');
        url.push_str(q);
    }
    url
}

/// Says once per test process, past the test harness's output capture (a direct write to
/// stderr, not `eprintln!`), that the PostgreSQL variants pass without running, so a run
/// on a machine without PostgreSQL is never mistaken for a run on both backends.
fn announce_skipped_postgres(base: &str, error: &str) {
    use std::io::Write;
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let _ = writeln!(
            std::io::stderr(),
            "\n*** PostgreSQL is unreachable at {base} ({error}):\n*** the `::postgres` tests \
             pass WITHOUT RUNNING. Start PostgreSQL or set VERDICT_TEST_PG_URL; CI=true requires it.\n"
        );
    });
}
