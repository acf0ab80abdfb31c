//! The database behind one test: a fresh SQLite file in a temporary directory, or a fresh
//! PostgreSQL database created on the server named by `VERDICT_TEST_PG_URL` (default
//! `postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable`: see `.ci/run` on TLS; when it is unreachable the test is
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
        TestDb::make(backend, false).await
    }

    /// A fresh database with every migration applied, as the binary leaves a new one: a
    /// copy of a template migrated once per test process ([`template`]). Most tests start a
    /// server on it, which finds nothing to migrate; starting on an empty database (the
    /// migrations themselves) is what [`TestDb::create`]'s tests and the setup, backup and
    /// startup tests do. `None` as for [`TestDb::create`].
    #[allow(dead_code, reason = "used by the e2e tests, not the in-process ones")]
    pub async fn create_migrated(backend: Backend) -> Option<TestDb> {
        TestDb::make(backend, true).await
    }

    async fn make(backend: Backend, migrated: bool) -> Option<TestDb> {
        let dir = tempfile::tempdir().expect("tempdir");
        match backend {
            Backend::Sqlite => {
                let file = dir.path().join("verdict.db");
                if migrated {
                    let template = template::sqlite().await;
                    std::fs::copy(template, &file)
                        .unwrap_or_else(|e| panic!("copy {}: {e}", template.display()));
                }
                Some(TestDb {
                    backend,
                    url: format!("sqlite://{}?mode=rwc", file.display()),
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
                let create = if migrated {
                    format!(
                        "CREATE DATABASE {name} TEMPLATE {}",
                        template::postgres(&base).await
                    )
                } else {
                    format!("CREATE DATABASE {name}")
                };
                conn.execute_unprepared(&create)
                    .await
                    .unwrap_or_else(|e| panic!("{create}: {e}"));
                let _ = conn.close().await;
                Some(TestDb {
                    backend,
                    url: replace_db_name(&base, &name),
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

    /// Recomputes the audit chain from genesis as `verdict audit verify` does, with the same
    /// function (one snapshot), on connections of its own that are closed again: the head
    /// seq once every committed entry is on the chain, or why the chain does not verify.
    /// In process, because the tests check the chain after nearly every step: starting the
    /// CLI (a process, its pools, its migration check) for each check took most of the
    /// longest tests' time on PostgreSQL.
    #[allow(dead_code, reason = "used by the e2e tests, not the in-process ones")]
    pub async fn verify_audit_chain(&self) -> Result<u64, String> {
        // A task of its own: polled from the runtime's root rather than from inside a test
        // body, whose frames in a debug build leave too little of a thread's stack for it.
        tokio::spawn(verify_audit_chain_at(self.url.clone()))
            .await
            .map_err(|e| format!("audit verify: {e}"))?
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
    std::env::var("VERDICT_TEST_PG_URL").unwrap_or_else(|_| {
        "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable".to_string()
    })
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

/// See [`TestDb::verify_audit_chain`].
#[allow(dead_code, reason = "used by the e2e tests, not the in-process ones")]
async fn verify_audit_chain_at(url: String) -> Result<u64, String> {
    use verdict::audit::{Verification, verify_snapshot};
    let db = verdict::db::Db::connect(&url)
        .await
        .map_err(|e| format!("audit verify: connect to {url}: {e}"))?;
    // Entries committed but not yet on the chain are left only by a process that died
    // between a write's commit and its sequencing; a running server appends them within a
    // second (`audit::sequencer`), and the chain is only whole once it has.
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    let out = loop {
        match verify_snapshot(&db).await {
            Ok(Verification::Intact { pending, .. })
                if pending > 0 && tokio::time::Instant::now() < deadline =>
            {
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
            out => break out,
        }
    };
    let _ = db.conn.close().await;
    match out.map_err(|e| format!("audit verify failed: {e}"))? {
        Verification::Intact {
            pending: 0, seq, ..
        } => u64::try_from(seq).map_err(|_| format!("audit verify: head seq {seq}")),
        Verification::Intact { pending, seq, .. } => Err(format!(
            "audit verify: head seq {seq}, and {pending} entries still not on the chain after 10 s"
        )),
        Verification::Broken { seq, reason } => {
            Err(format!("audit chain broken at seq {seq}: {reason}"))
        }
    }
}

/// The migrated templates of [`TestDb::create_migrated`]: made once per test process, on
/// first use, with the migrations the binary runs (the `migration` crate, in process).
/// Named by the process id, so concurrent test processes (other checkouts, other test
/// binaries) never share one; those left by processes that are gone are removed when the
/// next one is made.
#[allow(dead_code, reason = "used by the e2e tests, not the in-process ones")]
mod template {
    use std::path::{Path, PathBuf};

    use migration::MigratorTrait;
    use sea_orm::ConnectionTrait;
    use tokio::sync::OnceCell;

    use super::{pg_connect, replace_db_name};

    const PREFIX: &str = "verdict_template_";

    fn alive(pid: &str) -> bool {
        Path::new("/proc").join(pid).exists()
    }

    /// The SQLite file every test's database is copied from.
    pub async fn sqlite() -> &'static Path {
        static FILE: OnceCell<PathBuf> = OnceCell::const_new();
        FILE.get_or_init(|| async {
            let root = std::env::temp_dir();
            if let Ok(entries) = std::fs::read_dir(&root) {
                for e in entries.flatten() {
                    let name = e.file_name().to_string_lossy().into_owned();
                    if let Some(pid) = name.strip_prefix(PREFIX)
                        && !alive(pid)
                    {
                        let _ = std::fs::remove_dir_all(e.path());
                    }
                }
            }
            let dir = root.join(format!("{PREFIX}{}", std::process::id()));
            std::fs::create_dir_all(&dir).expect("the template's directory");
            // Migrated by the binary's own connection (its pragmas), then copied out whole
            // (`VACUUM INTO`: one file, nothing left in a journal beside it).
            let build = dir.join("build.db");
            let file = dir.join("verdict.db");
            let _ = std::fs::remove_file(&build);
            let _ = std::fs::remove_file(&file);
            let url = format!("sqlite://{}?mode=rwc", build.display());
            let db = verdict::db::Db::connect(&url)
                .await
                .unwrap_or_else(|e| panic!("connect to {url}: {e}"));
            db.migrate().await.expect("migrate the template");
            db.conn
                .execute_unprepared(&format!("VACUUM INTO '{}'", file.display()))
                .await
                .expect("VACUUM INTO the template");
            db.conn.close().await.expect("close the template");
            file
        })
        .await
    }

    /// The PostgreSQL database every test's database is created from (`CREATE DATABASE ...
    /// TEMPLATE`, which needs nobody connected to it: the connection that migrated it is
    /// closed before it is used).
    pub async fn postgres(base: &str) -> &'static str {
        static NAME: OnceCell<String> = OnceCell::const_new();
        NAME.get_or_init(|| async {
            let conn = pg_connect(base).await.expect("PostgreSQL");
            let rows = conn
                .query_all_raw(sea_orm::Statement::from_string(
                    conn.get_database_backend(),
                    format!("SELECT datname FROM pg_database WHERE datname LIKE '{PREFIX}%'"),
                ))
                .await
                .expect("list the templates");
            for row in rows {
                let Ok(name) = row.try_get_by_index::<String>(0) else {
                    continue;
                };
                if name.strip_prefix(PREFIX).is_some_and(|pid| !alive(pid)) {
                    let _ = conn
                        .execute_unprepared(&format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)"))
                        .await;
                }
            }
            let name = format!("{PREFIX}{}", std::process::id());
            let _ = conn
                .execute_unprepared(&format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)"))
                .await;
            conn.execute_unprepared(&format!("CREATE DATABASE {name}"))
                .await
                .unwrap_or_else(|e| panic!("CREATE DATABASE {name}: {e}"));
            let _ = conn.close().await;
            let url = replace_db_name(base, &name);
            let conn = pg_connect(&url).await.expect("the template");
            migration::Migrator::up(&conn, None)
                .await
                .expect("migrate the template");
            conn.close().await.expect("close the template");
            name
        })
        .await
    }
}
