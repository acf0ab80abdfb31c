//! Connecting, migrating, the one way to open a write transaction, read-only snapshots, the
//! one clock ([`now`]), whether the database answers ([`Availability`], [`watch`]), and the
//! turn of this process's audit sequencer runs ([`Runs`]).

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use chrono::{DateTime, NaiveDateTime, Utc};
use migration::{Migrator, MigratorTrait};
use sea_orm::{
    AccessMode, ConnectOptions, ConnectionTrait, Database, DatabaseConnection, DatabaseTransaction,
    DbBackend, DbErr, IsolationLevel, SqliteTransactionMode, Statement, TransactionOptions,
    TransactionTrait,
};

/// The database handle shared by the whole process.
#[derive(Clone)]
pub struct Db {
    pub conn: DatabaseConnection,
    statements: Arc<AtomicU64>,
    /// This process's name on PostgreSQL (`application_name` of its connections): the audit
    /// announcements carry it, so the relay tells this process's commits from others'.
    origin: Arc<str>,
    /// Whether the database answers, as [`watch`] last found it.
    availability: Availability,
    /// This process's audit sequencer runs (`audit::sequencer::settle`).
    runs: Arc<Runs>,
}

/// The audit sequencer runs of one process (`audit::sequencer::settle`): one at a time
/// (`turn`), numbered in the order they start.
#[derive(Default)]
pub struct Runs {
    pub turn: tokio::sync::Mutex<()>,
    /// Runs started so far (the number of the latest).
    pub started: AtomicU64,
    /// The number of the latest run that ended well.
    pub done: AtomicU64,
    /// The runs' own connection (PostgreSQL; `None`: the pool's).
    pub conn: Option<DatabaseConnection>,
}

/// Whether the database answers, as this process last found it: kept by [`watch`] on
/// PostgreSQL, always "up" on SQLite (which runs inside the process; whether it can
/// write is found by each write). While the database is down, requests are refused at once
/// with UNAVAILABLE instead of each waiting the pool's 30 s for a connection (and those
/// already waiting when it went down are answered so then), `/readyz` answers 503, and the
/// background workers wait for it instead of retrying in a loop.
#[derive(Clone)]
pub struct Availability(Arc<tokio::sync::watch::Sender<bool>>);

impl Default for Availability {
    fn default() -> Self {
        Availability(Arc::new(tokio::sync::watch::channel(true).0))
    }
}

impl Availability {
    /// Whether the database answered the last probe.
    pub fn is_up(&self) -> bool {
        *self.0.borrow()
    }

    /// Resolves once the database answers (at once when it does).
    pub async fn up(&self) {
        let mut rx = self.0.subscribe();
        // Err: the sender is gone, which it never is while `self` holds it.
        let _ = rx.wait_for(|up| *up).await;
    }

    /// Resolves once the database is found not to answer (at once when it is so now):
    /// what a request waiting for it races against.
    pub async fn down(&self) {
        let mut rx = self.0.subscribe();
        if rx.wait_for(|up| !*up).await.is_err() {
            // The sender is gone with the process; nobody is told "down" for it.
            std::future::pending::<()>().await;
        }
    }

    /// Records the probe's finding; whether it changed.
    pub(crate) fn set(&self, up: bool) -> bool {
        self.0
            .send_if_modified(|now| std::mem::replace(now, up) != up)
    }
}

impl Db {
    /// Connects and applies pending migrations.
    pub async fn connect(url: &str) -> Result<Db, DbErr> {
        let origin: Arc<str> = format!("verdict-{}", crate::crypto::random_string(12)).into();
        let application_name = origin.clone();
        let mut opts = ConnectOptions::new(url.to_owned());
        opts.sqlx_logging(false)
            .acquire_timeout(Duration::from_secs(30))
            .max_connections(if url.starts_with("sqlite:") { 8 } else { 16 })
            .map_sqlx_sqlite_opts(|o| {
                o.journal_mode(sea_orm::sqlx::sqlite::SqliteJournalMode::Wal)
                    .busy_timeout(Duration::from_secs(30))
                    .foreign_keys(true)
            })
            .map_sqlx_postgres_opts(move |o| o.application_name(&application_name))
            .map_sqlx_sqlite_pool_opts(|o| o.after_release(reusable_sqlite))
            .map_sqlx_postgres_pool_opts(|o| o.after_release(reusable_postgres));
        if url.starts_with("postgres") {
            probe_postgres(url).await?;
        }
        // The sequencer's runs go one at a time on a connection of their own, so a run never
        // queues for the pool behind the writes it is to answer.
        let sequencer = if url.starts_with("postgres") {
            let mut one = opts.clone();
            one.max_connections(1).min_connections(0);
            Some(Database::connect(one).await?)
        } else {
            None
        };
        let mut conn = Database::connect(opts).await.map_err(|e| explain(url, e))?;
        if url.starts_with("sqlite:") {
            // Opening is lazy: read the schema once so a corrupt file is named here.
            use sea_orm::ConnectionTrait;
            conn.execute_unprepared("SELECT count(*) FROM sqlite_master")
                .await
                .map_err(|e| explain(url, e))?;
        }
        let statements = Arc::new(AtomicU64::new(0));
        let count = |conn: &mut DatabaseConnection| {
            let counter = statements.clone();
            conn.set_metric_callback(move |info| {
                counter.fetch_add(1, Ordering::Relaxed);
                // Off unless asked for: `RUST_LOG=verdict::sql=debug`.
                tracing::debug!(
                    target: "verdict::sql",
                    elapsed = ?info.elapsed,
                    "{}",
                    info.statement.sql
                );
            });
        };
        count(&mut conn);
        let sequencer = sequencer.map(|mut c| {
            count(&mut c);
            c
        });
        Ok(Db {
            conn,
            statements,
            origin,
            availability: Availability::default(),
            runs: Arc::new(Runs {
                conn: sequencer,
                ..Default::default()
            }),
        })
    }

    /// This process's audit sequencer runs.
    pub fn runs(&self) -> &Runs {
        &self.runs
    }

    /// Whether the database answers (see [`Availability`]).
    pub fn availability(&self) -> &Availability {
        &self.availability
    }

    pub async fn migrate(&self) -> Result<(), DbErr> {
        Migrator::up(&self.conn, None).await
    }

    /// Whether every migration this binary knows has been applied (readiness).
    pub async fn is_ready(&self) -> bool {
        matches!(Migrator::get_pending_migrations(&self.conn).await, Ok(p) if p.is_empty())
    }

    pub fn backend(&self) -> DbBackend {
        self.conn.get_database_backend()
    }

    /// This process's name on the database (see the field).
    pub fn origin(&self) -> &str {
        &self.origin
    }

    /// Statements executed through this handle so far (for the N+1 tests and benchmarks).
    pub fn statement_count(&self) -> u64 {
        self.statements.load(Ordering::Relaxed)
    }

    /// Opens a write transaction. On SQLite it is `BEGIN IMMEDIATE`, so writers queue for
    /// the single write lock up front instead of failing when a read lock must upgrade; on
    /// PostgreSQL the rows a rule depends on are locked explicitly (`FOR UPDATE`).
    pub async fn write(&self) -> Result<DatabaseTransaction, DbErr> {
        self.conn
            .begin_with_options(TransactionOptions {
                sqlite_transaction_mode: Some(SqliteTransactionMode::Immediate),
                ..Default::default()
            })
            .await
    }

    /// Opens a read-only snapshot: every read in it sees the database as of one moment, and
    /// it takes no write lock, so writers go on while it is open. On SQLite it is a deferred
    /// `BEGIN` (in WAL mode the snapshot is fixed by its first read); on PostgreSQL it is
    /// `REPEATABLE READ, READ ONLY`.
    pub async fn read(&self) -> Result<DatabaseTransaction, DbErr> {
        let postgres = self.backend() == DbBackend::Postgres;
        self.conn
            .begin_with_options(TransactionOptions {
                isolation_level: postgres.then_some(IsolationLevel::RepeatableRead),
                access_mode: postgres.then_some(AccessMode::ReadOnly),
                ..Default::default()
            })
            .await
    }
}

/// Whether a connection handed back to the pool may serve again: not while its driver still
/// counts an open transaction, which happens when ending one failed. SQLite rolls a
/// transaction back by itself on some errors (`SQLITE_FULL`, `SQLITE_IOERR`, `SQLITE_BUSY`),
/// so the driver's own ROLLBACK fails and it keeps counting one; the next `begin` on that
/// connection then opens a SAVEPOINT instead of `BEGIN IMMEDIATE`: on SQLite a deferred
/// transaction, which a later failed request's `ROLLBACK TO` leaves open, so that every
/// "commit" after it on that connection commits nothing while the client is told it did (a
/// full disk showed it: `database_faults`); on PostgreSQL an error at every `begin`. Such a
/// connection is closed instead (closing ends whatever it still holds) and the pool opens a
/// fresh one.
fn outside_transaction<C: sea_orm::sqlx::Connection>(conn: &C) -> bool {
    let clean = !conn.is_in_transaction();
    if !clean {
        tracing::warn!("a database connection came back inside a transaction; closing it");
    }
    clean
}

/// [`outside_transaction`] for SQLite, once the rollback a dropped transaction queued has run
/// on the connection's worker thread (a ping runs after it).
fn reusable_sqlite(
    conn: &mut sea_orm::sqlx::SqliteConnection,
    _: sea_orm::sqlx::pool::PoolConnectionMetadata,
) -> futures_util::future::BoxFuture<'_, Result<bool, sea_orm::sqlx::Error>> {
    use sea_orm::sqlx::Connection;
    Box::pin(async move {
        conn.ping().await?;
        Ok(outside_transaction(conn))
    })
}

/// [`outside_transaction`] for PostgreSQL (the driver counts a queued rollback at once).
fn reusable_postgres(
    conn: &mut sea_orm::sqlx::PgConnection,
    _: sea_orm::sqlx::pool::PoolConnectionMetadata,
) -> futures_util::future::BoxFuture<'_, Result<bool, sea_orm::sqlx::Error>> {
    Box::pin(std::future::ready(Ok(outside_transaction(conn))))
}

/// The current time by the database's clock: the one clock Verdict judges deadlines and
/// windows by and stamps what it writes with. Every window check and every timestamp a
/// mutation writes (including the audit entry's `occurred_at`) reads it through `db`, the
/// mutation's own transaction, so that several server processes sharing one database agree
/// on whether a deadline has passed even when their hosts' clocks drift apart.
///
/// - PostgreSQL: `CURRENT_TIMESTAMP`, the time the transaction began (microseconds). One
///   mutation therefore sees one instant however often it asks: its window checks and its
///   `created_at`/`updated_at` agree, and a request whose transaction began before a
///   deadline is judged as made before it. Outside a transaction, each statement is its
///   own transaction, so it is simply "now".
/// - SQLite: `strftime('%Y-%m-%d %H:%M:%f', 'now')`. SQLite runs inside the server process,
///   so its clock is the host's clock, read at millisecond precision (the precision SQLite
///   keeps); processes sharing one SQLite file share one host and so one clock.
pub async fn now<C: ConnectionTrait>(db: &C) -> Result<DateTime<Utc>, DbErr> {
    let backend = db.get_database_backend();
    let sql = format!("SELECT {} AS {NOW_COLUMN}", now_sql(backend));
    let row = db
        .query_one_raw(Statement::from_string(backend, sql))
        .await?
        .ok_or_else(|| DbErr::Custom("the database did not tell the time".into()))?;
    read_now(&row, backend)
}

/// The column a statement reads [`now_sql`] into, beside its rows ([`read_now`] reads it).
pub const NOW_COLUMN: &str = "verdict_db_now";

/// The SQL expression of the database's clock, as [`now`] reads it: a statement that
/// selects it as [`NOW_COLUMN`] beside its rows reads the clock without a statement of
/// its own (authentication does, on every signed-in request).
pub fn now_sql(backend: DbBackend) -> &'static str {
    match backend {
        DbBackend::Sqlite => "strftime('%Y-%m-%d %H:%M:%f', 'now')",
        _ => "CURRENT_TIMESTAMP",
    }
}

/// The time in the [`NOW_COLUMN`] of `row` (selected as [`now_sql`]).
pub fn read_now(row: &sea_orm::QueryResult, backend: DbBackend) -> Result<DateTime<Utc>, DbErr> {
    match backend {
        DbBackend::Sqlite => {
            let text: String = row.try_get("", NOW_COLUMN)?;
            parse_sqlite_time(&text)
        }
        _ => row.try_get::<DateTime<Utc>>("", NOW_COLUMN),
    }
}

/// Reads SQLite's `strftime('%Y-%m-%d %H:%M:%f', ...)` text (UTC) as a time.
fn parse_sqlite_time(text: &str) -> Result<DateTime<Utc>, DbErr> {
    NaiveDateTime::parse_from_str(text, "%Y-%m-%d %H:%M:%S%.f")
        .map(|t| t.and_utc())
        .map_err(|e| DbErr::Custom(format!("unreadable SQLite time {text:?}: {e}")))
}

/// The SQLite file a `sqlite:` URL names.
pub fn sqlite_path(url: &str) -> &str {
    let rest = url.trim_start_matches("sqlite:").trim_start_matches("//");
    rest.split('?').next().unwrap_or(rest)
}

/// A connection error that says what to do: which file could not be opened and why, or
/// that PostgreSQL refused the connection.
fn explain(url: &str, e: DbErr) -> DbErr {
    let say = |msg: String| DbErr::Conn(sea_orm::RuntimeErr::Internal(msg));
    if !url.starts_with("sqlite:") {
        return e;
    }
    let path = sqlite_path(url);
    match sqlite_code(&e) {
        Some(SQLITE_CANTOPEN) => {
            let hint = if url.contains("mode=rwc") {
                "check that its directory exists and is writable"
            } else {
                "it does not exist: add ?mode=rwc to create it (sqlite://FILE?mode=rwc)"
            };
            say(format!("cannot open the SQLite database {path}: {hint}"))
        }
        Some(SQLITE_CORRUPT | SQLITE_NOTADB) => say(format!(
            "{path} is not a Verdict SQLite database, or it is corrupt ({e})"
        )),
        _ => e,
    }
}

const SQLITE_CORRUPT: i64 = 11;
const SQLITE_CANTOPEN: i64 = 14;
const SQLITE_NOTADB: i64 = 26;

/// SQLite's primary result code behind a database error, read from the driver's error
/// rather than from its message.
fn sqlite_code(e: &DbErr) -> Option<i64> {
    use sea_orm::RuntimeErr::SqlxError;
    let (DbErr::Conn(SqlxError(e)) | DbErr::Exec(SqlxError(e)) | DbErr::Query(SqlxError(e))) = e
    else {
        return None;
    };
    let sea_orm::sqlx::Error::Database(d) = e.as_ref() else {
        return None;
    };
    // Extended result codes keep the primary code in their low byte.
    d.code()?.parse::<i64>().ok().map(|c| c & 0xff)
}

/// Connects to PostgreSQL once, directly, so that an unreachable server is reported at
/// once with its reason ("connection refused") instead of as a pool time-out 30 s later.
async fn probe_postgres(url: &str) -> Result<(), DbErr> {
    use sea_orm::sqlx::Connection;
    let attempt = tokio::time::timeout(
        Duration::from_secs(10),
        sea_orm::sqlx::PgConnection::connect(url),
    )
    .await;
    let reason = match attempt {
        Ok(Ok(c)) => {
            let _ = c.close().await;
            return Ok(());
        }
        Ok(Err(e)) => e.to_string(),
        Err(_) => "no answer within 10 s".to_owned(),
    };
    let target = url.rsplit('@').next().unwrap_or(url);
    Err(DbErr::Conn(sea_orm::RuntimeErr::Internal(format!(
        "cannot connect to PostgreSQL at {target}: {reason}"
    ))))
}

/// How often [`watch`] asks PostgreSQL whether it answers.
const PROBE_EVERY: Duration = Duration::from_secs(1);

/// How long a probe may take before the database counts as not answering. PostgreSQL
/// answers a ping in a millisecond even under load; a probe this slow means it is gone
/// (or the network to it is).
const PROBE_TIMEOUT: Duration = Duration::from_secs(5);

/// Keeps `db`'s [`Availability`] for as long as the process runs (PostgreSQL only): pings
/// the database every second over a connection of its own (so a busy pool never delays
/// it, and the statement counter does not see it), and when that fails, connects anew.
/// When neither answers the database is down: said once in the log, with the reason, and
/// again, with how long it lasted, when it answers again. The pool's connections need no
/// help: each is tested before use and replaced when it broke.
pub async fn watch(db: Db, url: String) {
    use sea_orm::sqlx::{ConnectOptions as _, Connection as _, postgres::PgConnectOptions};
    let options = match url.parse::<PgConnectOptions>() {
        Ok(o) => o.application_name(db.origin()).disable_statement_logging(),
        Err(e) => {
            tracing::error!("cannot watch the database, its URL does not parse: {e}");
            return;
        }
    };
    let mut conn = None;
    let mut down_since: Option<std::time::Instant> = None;
    loop {
        let mut reason = String::new();
        if let Some(c) = conn.as_mut() {
            match tokio::time::timeout(PROBE_TIMEOUT, sea_orm::sqlx::PgConnection::ping(c)).await {
                Ok(Ok(())) => {}
                Ok(Err(e)) => reason = e.to_string(),
                Err(_) => reason = format!("no answer to a ping within {PROBE_TIMEOUT:?}"),
            }
            if !reason.is_empty() {
                conn = None;
            }
        }
        if conn.is_none() {
            match tokio::time::timeout(PROBE_TIMEOUT, options.connect()).await {
                Ok(Ok(c)) => conn = Some(c),
                Ok(Err(e)) => reason = e.to_string(),
                Err(_) => reason = format!("no connection within {PROBE_TIMEOUT:?}"),
            }
        }
        let up = conn.is_some();
        if db.availability.set(up) {
            match (up, down_since.take()) {
                (false, _) => {
                    down_since = Some(std::time::Instant::now());
                    tracing::error!(
                        reason,
                        "the database does not answer; requests are refused with UNAVAILABLE \
                         and /readyz answers 503 until it does"
                    );
                }
                (true, since) => tracing::warn!(
                    down_for_ms = since.map_or(0, |t| t.elapsed().as_millis() as u64),
                    "the database answers again"
                ),
            }
        }
        tokio::time::sleep(PROBE_EVERY).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// SQLite ends a transaction by itself on some errors (a full disk): the connection must
    /// not serve again while its driver still counts that transaction, or the next writes on
    /// it "commit" inside a transaction nobody ends.
    #[tokio::test]
    async fn a_connection_whose_transaction_ended_behind_the_driver_is_not_reused() {
        let dir = tempfile::tempdir().expect("tempdir");
        let url = format!("sqlite://{}/t.db?mode=rwc", dir.path().display());
        let db = Db::connect(&url).await.expect("connect");
        db.conn
            .execute_unprepared("CREATE TABLE t (x INTEGER)")
            .await
            .expect("create");
        // Each connection goes back to the pool in a task of its own: let it, so that the
        // next transaction takes that same connection (the only idle one).
        let settle = || tokio::time::sleep(Duration::from_millis(100));
        for round in 0..3 {
            // What SQLite does on SQLITE_FULL: the transaction ends under the driver.
            let txn = db.write().await.expect("begin");
            txn.execute_unprepared("ROLLBACK").await.expect("rollback");
            assert!(txn.commit().await.is_err(), "nothing left to commit");
            settle().await;
            // A write that is refused, then one that commits.
            let txn = db.write().await.expect("begin");
            txn.execute_unprepared(&format!("INSERT INTO t VALUES ({})", 100 + round))
                .await
                .expect("insert");
            txn.rollback().await.expect("rollback");
            settle().await;
            let txn = db.write().await.expect("begin");
            txn.execute_unprepared(&format!("INSERT INTO t VALUES ({round})"))
                .await
                .expect("insert");
            txn.commit().await.expect("commit");
            settle().await;
        }
        // Another connection sees exactly the three commits.
        let other = Database::connect(&url).await.expect("connect");
        let rows = other
            .query_all_raw(Statement::from_string(
                DbBackend::Sqlite,
                "SELECT x FROM t ORDER BY x",
            ))
            .await
            .expect("read");
        let xs: Vec<i64> = rows
            .iter()
            .map(|r| r.try_get_by_index(0).expect("x"))
            .collect();
        assert_eq!(xs, [0, 1, 2]);
    }

    #[tokio::test]
    async fn availability_is_up_until_told_and_wakes_who_waits() {
        let a = Availability::default();
        assert!(a.is_up());
        a.up().await;
        assert!(a.set(false));
        assert!(!a.set(false), "no change");
        assert!(!a.is_up());
        tokio::time::timeout(Duration::from_secs(5), a.down())
            .await
            .expect("down at once");
        let waiter = tokio::spawn({
            let a = a.clone();
            async move { a.up().await }
        });
        tokio::time::sleep(Duration::from_millis(20)).await;
        assert!(!waiter.is_finished());
        assert!(a.set(true));
        tokio::time::timeout(Duration::from_secs(5), waiter)
            .await
            .expect("woken")
            .expect("joined");
    }

    #[test]
    fn sqlite_time_is_read_as_utc_to_the_millisecond() {
        let t = parse_sqlite_time("2026-03-15 22:53:00.125").unwrap();
        assert_eq!(t.to_rfc3339(), "2026-03-15T22:53:00.125+00:00");
        assert!(parse_sqlite_time("2026-03-15T22:53:00Z").is_err());
    }
}
