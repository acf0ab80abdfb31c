//! The one clock is the database's, read in the mutation's transaction.

use super::*;

/// Verdict's one clock is the database's (`verdict::db::now`): a mutation's window checks
/// and the timestamps it writes come from it, read in the mutation's transaction, so that
/// server processes sharing one PostgreSQL agree however their hosts' clocks drift.
#[tokio::test]
async fn the_clock_is_the_databases_read_in_the_transaction() {
    use chrono::{DateTime, Utc};
    use sea_orm::{DbBackend, QueryOrder, Statement};
    for t in backends().await {
        let w = verdict::domain::Write::begin(&t.db, None)
            .await
            .expect("begin");
        let txn = w.txn();
        if t.db.backend() == DbBackend::Postgres {
            // The transaction's time as PostgreSQL states it, read directly.
            let direct: DateTime<Utc> = txn
                .query_one_raw(Statement::from_string(
                    DbBackend::Postgres,
                    "SELECT CURRENT_TIMESTAMP",
                ))
                .await
                .expect("select")
                .expect("a row")
                .try_get_by_index(0)
                .expect("a timestamptz");
            // The host's clock moves on; the transaction's does not. Reading the host's
            // clock here would give a time at least this much later than `direct`.
            tokio::time::sleep(std::time::Duration::from_millis(200)).await;
            let clock = verdict::db::now(txn).await.expect("clock");
            assert_eq!(
                clock, direct,
                "{}: the database's time, not the host's",
                t.name
            );
            assert_eq!(verdict::domain::clock(txn).await.expect("clock"), direct);
            assert_eq!(w.now(), direct, "{}: the write's one reading", t.name);
            // What a mutation writes in this transaction carries that same instant: a
            // user's created_at and its audit entry's occurred_at (the entry waits in
            // `audit_pending`, committed with the write, for its place on the chain).
            accounts::admin_create(&w, "clock@example.org")
                .await
                .expect("admin");
            let user = verdict::domain::user_by_email(txn, "clock@example.org")
                .await
                .expect("read")
                .expect("the user");
            assert_eq!(user.created_at, direct, "{}: created_at", t.name);
            let last = entity::audit_pending::Entity::find()
                .order_by_desc(entity::audit_pending::Column::Id)
                .one(txn)
                .await
                .expect("read")
                .expect("the write's audit entry");
            assert_eq!(
                last.occurred_at,
                audit::canonical_time(direct),
                "{}",
                t.name
            );
        } else {
            // SQLite runs in this process: its clock is the host's, to the millisecond.
            let before = Utc::now();
            let clock = verdict::db::now(txn).await.expect("clock");
            let after = Utc::now();
            assert_eq!(clock.timestamp_subsec_nanos() % 1_000_000, 0, "{clock}");
            assert!(
                before - chrono::Duration::milliseconds(1) <= clock && clock <= after,
                "{}: {before} <= {clock} <= {after}",
                t.name
            );
        }
        w.rollback().await;
    }
}
