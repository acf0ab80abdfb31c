//! A change to an event that is under way: the test's own connection to the server's
//! database updates the event row in a transaction it keeps open ([`HeldChange`]), as an
//! organizer's `updateEvent` would between its write and its commit. A request sent
//! meanwhile must either wait for it and see it, or have been answered without it; the
//! test then lets the change commit ([`HeldChange::commit_when_waited_on`]).

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use chrono::{DateTime, Utc};
use entity::event;
use sea_orm::sea_query::Expr;
use sea_orm::{
    ColumnTrait, ConnectionTrait, Database, DatabaseConnection, DatabaseTransaction, EntityTrait,
    QueryFilter, QuerySelect, SqliteTransactionMode, Statement, TransactionOptions,
    TransactionTrait,
};

use super::{App, Backend};

/// An uncommitted update of one event row, holding that row (PostgreSQL) or the database's
/// write lock (SQLite) until [`HeldChange::commit_when_waited_on`].
pub struct HeldChange {
    conn: DatabaseConnection,
    txn: DatabaseTransaction,
    backend: Backend,
}

impl HeldChange {
    /// Begins setting `columns` of the event with `slug`, without committing.
    pub async fn set(app: &App, slug: &str, columns: &[(event::Column, DateTime<Utc>)]) -> Self {
        let conn = Database::connect(app.db.url())
            .await
            .unwrap_or_else(|e| panic!("connect to {}: {e}", app.db.url()));
        // SQLite: take the write lock now, as the server's writes do (`BEGIN IMMEDIATE`).
        let txn = conn
            .begin_with_options(TransactionOptions {
                sqlite_transaction_mode: Some(SqliteTransactionMode::Immediate),
                ..Default::default()
            })
            .await
            .expect("begin the change");
        let mut update = event::Entity::update_many();
        for (column, to) in columns {
            update = update.col_expr(*column, Expr::value(*to));
        }
        let changed = update
            .filter(event::Column::Slug.eq(slug))
            .exec(&txn)
            .await
            .expect("update the event")
            .rows_affected;
        assert_eq!(changed, 1, "no event {slug}");
        HeldChange {
            conn,
            txn,
            backend: app.db.backend(),
        }
    }

    /// Holds the event with `slug` as a judge's `saveReview` under way holds it: read and
    /// locked `FOR SHARE` in a transaction left open (PostgreSQL only: SQLite has one
    /// writer at a time whatever is locked).
    pub async fn share(app: &App, slug: &str) -> Self {
        assert_eq!(
            app.db.backend(),
            Backend::Postgres,
            "a shared row lock is PostgreSQL's"
        );
        let conn = Database::connect(app.db.url())
            .await
            .unwrap_or_else(|e| panic!("connect to {}: {e}", app.db.url()));
        let txn = conn.begin().await.expect("begin the hold");
        let held = event::Entity::find()
            .filter(event::Column::Slug.eq(slug))
            .lock_shared()
            .all(&txn)
            .await
            .expect("lock the event")
            .len();
        assert_eq!(held, 1, "no event {slug}");
        HeldChange {
            conn,
            txn,
            backend: Backend::Postgres,
        }
    }

    /// Whether a connection to this database waits for a lock now (PostgreSQL).
    pub async fn waited_on(&self) -> bool {
        self.someone_waits().await
    }

    /// Ends the hold without changing anything.
    pub async fn release(self) {
        self.txn.rollback().await.expect("roll back the hold");
        let _ = self.conn.close().await;
    }

    /// Commits once another connection waits for what this change holds, or once `done`
    /// (the request was answered without waiting), whichever is first.
    ///
    /// PostgreSQL says who waits for a lock (`pg_stat_activity`). SQLite does not: a writer
    /// waiting for its lock sleeps in its busy handler, so the change holds for a while
    /// after the request went out instead (the request takes nothing before it asks for the
    /// lock). Too short a wait could only let the request see the change without having
    /// waited for it, which the fixed code answers the same way: it cannot fail a correct
    /// server, only spare a faulty one.
    pub async fn commit_when_waited_on(self, done: &AtomicBool) {
        let deadline = tokio::time::Instant::now()
            + match self.backend {
                Backend::Postgres => Duration::from_secs(20),
                Backend::Sqlite => Duration::from_millis(750),
            };
        while !done.load(Ordering::SeqCst) && tokio::time::Instant::now() < deadline {
            if self.backend == Backend::Postgres && self.someone_waits().await {
                break;
            }
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
        self.txn.commit().await.expect("commit the change");
        let _ = self.conn.close().await;
    }

    /// Whether a connection to this database waits for a lock (PostgreSQL).
    async fn someone_waits(&self) -> bool {
        let row = self
            .conn
            .query_one_raw(Statement::from_string(
                sea_orm::DbBackend::Postgres,
                "SELECT count(*) FROM pg_stat_activity \
                 WHERE datname = current_database() AND wait_event_type = 'Lock'",
            ))
            .await
            .expect("read pg_stat_activity")
            .expect("a count");
        row.try_get_by_index::<i64>(0).expect("count") > 0
    }
}
