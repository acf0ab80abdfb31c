//! Writes in parallel (issue 25): a write's audit entry is committed with the write into
//! `audit_pending`, without its place on the chain, and a sequencer gives it its `seq` and
//! hashes in a short transaction of its own, many entries at a time
//! (`server/src/audit/sequencer.rs`).
//!
//! - `audit_pending`: one row per committed, not yet sequenced entry, in the order of `id`;
//!   rows are inserted by writes and deleted by the sequencer, never updated.
//! - PostgreSQL: the chain's triggers now let one transaction append several rows and then
//!   advance the head onto the last of them once (each row must still extend the last row,
//!   and the head may only move forward onto the chain's last row); and the announcement of
//!   each entry on `verdict_audit` is sent by the sequencer, which knows the process that
//!   committed the entry (`origin`), instead of by a trigger, which knew only the process
//!   that sequenced it.
//! - SQLite keeps appending in the write's own transaction (its writes are one at a time
//!   anyway): its triggers stay, and its `audit_pending` stays empty.

use sea_orm_migration::prelude::*;
use sea_orm_migration::sea_orm::DbBackend;

use crate::sql::execute;

pub struct Migration;

impl MigrationName for Migration {
    fn name(&self) -> &str {
        "m20261205_000001_audit_pending"
    }
}

const TABLE: &str = "CREATE TABLE audit_pending (
    id {pk},
    origin TEXT NOT NULL,
    occurred_at TEXT NOT NULL,
    actor TEXT NOT NULL,
    event TEXT NOT NULL,
    action TEXT NOT NULL CHECK (length(action) >= 3),
    object_type TEXT NOT NULL,
    object_id TEXT NOT NULL,
    payload TEXT NOT NULL,
    payload_hash TEXT NOT NULL CHECK (length(payload_hash) = 64)
)";

const POSTGRES: &[&str] = &[
    "CREATE TRIGGER audit_pending_no_update BEFORE UPDATE ON audit_pending FOR EACH ROW EXECUTE FUNCTION verdict_audit_refuse()",
    r#"CREATE OR REPLACE FUNCTION verdict_audit_check_append() RETURNS trigger LANGUAGE plpgsql AS $$
       DECLARE last_seq BIGINT; last_hash TEXT;
       BEGIN
         SELECT seq, row_hash INTO last_seq, last_hash FROM audit_events ORDER BY seq DESC LIMIT 1;
         IF last_seq IS NULL THEN
           last_seq := 0;
           last_hash := repeat('0', 64);
         END IF;
         IF NEW.seq <> last_seq + 1 OR NEW.prev_hash <> last_hash THEN
           RAISE EXCEPTION 'verdict: audit append does not extend the head';
         END IF;
         RETURN NEW;
       END $$"#,
    r#"CREATE OR REPLACE FUNCTION verdict_audit_check_head() RETURNS trigger LANGUAGE plpgsql AS $$
       BEGIN
         IF NEW.id <> OLD.id OR NEW.seq <= OLD.seq
            OR NEW.seq IS DISTINCT FROM (SELECT max(seq) FROM audit_events)
            OR NEW.head_hash IS DISTINCT FROM (SELECT row_hash FROM audit_events WHERE seq = NEW.seq) THEN
           RAISE EXCEPTION 'verdict: audit head may only advance onto the appended row';
         END IF;
         RETURN NEW;
       END $$"#,
    "DROP TRIGGER audit_events_notify ON audit_events",
    "DROP FUNCTION verdict_audit_notify()",
];

const SQLITE: &[&str] = &[
    r#"CREATE TRIGGER audit_pending_no_update BEFORE UPDATE ON audit_pending
       BEGIN SELECT RAISE(ABORT, 'verdict: audit tables are append-only'); END"#,
];

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        let rest = match manager.get_database_backend() {
            DbBackend::Postgres => POSTGRES,
            _ => SQLITE,
        };
        let mut all = vec![TABLE];
        all.extend_from_slice(rest);
        execute(manager, all).await
    }

    async fn down(&self, _manager: &SchemaManager) -> Result<(), DbErr> {
        Err(DbErr::Migration(
            "the audit chain's sequencing cannot be rolled back".into(),
        ))
    }
}
