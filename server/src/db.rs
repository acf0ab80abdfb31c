//! Connecting, migrating, the one way to open a write transaction, read-only snapshots, and
//! the one clock ([`now`]).

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
            .map_sqlx_postgres_opts(move |o| o.application_name(&application_name));
        if url.starts_with("postgres") {
            probe_postgres(url).await?;
        }
        let mut conn = Database::connect(opts).await.map_err(|e| explain(url, e))?;
        if url.starts_with("sqlite:") {
            // Opening is lazy: read the schema once so a corrupt file is named here.
            use sea_orm::ConnectionTrait;
            conn.execute_unprepared("SELECT count(*) FROM sqlite_master")
                .await
                .map_err(|e| explain(url, e))?;
        }
        let statements = Arc::new(AtomicU64::new(0));
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
        Ok(Db {
            conn,
            statements,
            origin,
        })
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
    let sql = match backend {
        DbBackend::Sqlite => "SELECT strftime('%Y-%m-%d %H:%M:%f', 'now')",
        _ => "SELECT CURRENT_TIMESTAMP",
    };
    let row = db
        .query_one_raw(Statement::from_string(backend, sql))
        .await?
        .ok_or_else(|| DbErr::Custom("the database did not tell the time".into()))?;
    match backend {
        DbBackend::Sqlite => {
            let text: String = row.try_get_by_index(0)?;
            parse_sqlite_time(&text)
        }
        _ => row.try_get_by_index::<DateTime<Utc>>(0),
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sqlite_time_is_read_as_utc_to_the_millisecond() {
        let t = parse_sqlite_time("2026-03-15 22:53:00.125").unwrap();
        assert_eq!(t.to_rfc3339(), "2026-03-15T22:53:00.125+00:00");
        assert!(parse_sqlite_time("2026-03-15T22:53:00Z").is_err());
    }
}
