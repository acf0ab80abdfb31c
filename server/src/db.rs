//! Connecting, migrating, and the one way to open a write transaction.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use migration::{Migrator, MigratorTrait};
use sea_orm::{
    ConnectOptions, Database, DatabaseConnection, DatabaseTransaction, DbBackend, DbErr,
    SqliteTransactionMode, TransactionOptions, TransactionTrait,
};

/// The database handle shared by the whole process.
#[derive(Clone)]
pub struct Db {
    pub conn: DatabaseConnection,
    statements: Arc<AtomicU64>,
}

impl Db {
    /// Connects and applies pending migrations.
    pub async fn connect(url: &str) -> Result<Db, DbErr> {
        let mut opts = ConnectOptions::new(url.to_owned());
        opts.sqlx_logging(false)
            .acquire_timeout(Duration::from_secs(30))
            .max_connections(if url.starts_with("sqlite:") { 8 } else { 16 })
            .map_sqlx_sqlite_opts(|o| {
                o.journal_mode(sea_orm::sqlx::sqlite::SqliteJournalMode::Wal)
                    .busy_timeout(Duration::from_secs(30))
                    .foreign_keys(true)
            });
        let mut conn = Database::connect(opts).await?;
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
        Ok(Db { conn, statements })
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
}
