//! Erasure (issue 13): the three append-only guards that stood between a person and their
//! erasure are relaxed to allow exactly redaction, nothing more. The update guards keep
//! their names (`audit_events_no_update`, `comments_posted_fixed`, and on SQLite
//! `review_revisions_no_update`); on PostgreSQL, where one trigger guarded both update and
//! delete, the delete guard becomes a trigger of its own.
//!
//! - `audit_events`: a row may be updated only in its `payload`, and only to a redacted
//!   payload (one that names what was redacted under `"redacted"`). Every column the row
//!   hash covers (`seq`, `occurred_at`, `actor`, `event`, `action`, `object_type`,
//!   `object_id`, `payload_hash`) and both hashes stay as they are, so the chain still
//!   recomputes; the row hash commits to the payload only through `payload_hash`. Rows are
//!   still never deleted.
//! - `comments`: what was posted still never changes, except that the body may become the
//!   erasure marker `[erased]`. Comments are still never deleted.
//! - `review_revisions`: a revision may be updated only in its `comment`, and only to the
//!   erasure marker. Scores, versions and times stay; revisions are still never deleted.

use sea_orm_migration::prelude::*;
use sea_orm_migration::sea_orm::DbBackend;

use crate::sql::execute;

pub struct Migration;

impl MigrationName for Migration {
    fn name(&self) -> &str {
        "m20261203_000001_erasure"
    }
}

const PG_UP: &[&str] = &[
    "DROP TRIGGER audit_events_no_update ON audit_events",
    "CREATE TRIGGER audit_events_no_delete BEFORE DELETE ON audit_events FOR EACH ROW EXECUTE FUNCTION verdict_audit_refuse()",
    r#"CREATE FUNCTION verdict_audit_redact_only() RETURNS trigger LANGUAGE plpgsql AS $$
       BEGIN
         IF NEW.seq <> OLD.seq OR NEW.occurred_at <> OLD.occurred_at OR NEW.actor <> OLD.actor
            OR NEW.event <> OLD.event OR NEW.action <> OLD.action
            OR NEW.object_type <> OLD.object_type OR NEW.object_id <> OLD.object_id
            OR NEW.payload_hash <> OLD.payload_hash OR NEW.prev_hash <> OLD.prev_hash
            OR NEW.row_hash <> OLD.row_hash
            OR strpos(NEW.payload, '"redacted":[') = 0 THEN
           RAISE EXCEPTION 'verdict: an audit row may only have its payload redacted';
         END IF;
         RETURN NEW;
       END $$"#,
    "CREATE TRIGGER audit_events_no_update BEFORE UPDATE ON audit_events FOR EACH ROW EXECUTE FUNCTION verdict_audit_redact_only()",
    "DROP TRIGGER comments_posted_fixed ON comments",
    r#"CREATE FUNCTION verdict_comment_erase_only() RETURNS trigger LANGUAGE plpgsql AS $$
       BEGIN
         IF NEW.public_id <> OLD.public_id OR NEW.event_id <> OLD.event_id
            OR NEW.project_id <> OLD.project_id OR NEW.author_id <> OLD.author_id
            OR NEW.created_at <> OLD.created_at
            OR (NEW.body <> OLD.body AND NEW.body <> '[erased]') THEN
           RAISE EXCEPTION 'verdict: what a comment posted never changes, except to be erased';
         END IF;
         RETURN NEW;
       END $$"#,
    "CREATE TRIGGER comments_posted_fixed BEFORE UPDATE ON comments FOR EACH ROW EXECUTE FUNCTION verdict_comment_erase_only()",
    "DROP TRIGGER review_revisions_append_only ON review_revisions",
    "CREATE TRIGGER review_revisions_no_delete BEFORE DELETE ON review_revisions FOR EACH ROW EXECUTE FUNCTION verdict_audit_refuse()",
    r#"CREATE FUNCTION verdict_revision_erase_only() RETURNS trigger LANGUAGE plpgsql AS $$
       BEGIN
         IF NEW.id <> OLD.id OR NEW.review_id <> OLD.review_id OR NEW.version <> OLD.version
            OR NEW.scores <> OLD.scores OR NEW.submitted <> OLD.submitted
            OR NEW.created_at <> OLD.created_at OR NEW.comment <> '[erased]' THEN
           RAISE EXCEPTION 'verdict: a review revision may only have its comment erased';
         END IF;
         RETURN NEW;
       END $$"#,
    "CREATE TRIGGER review_revisions_erase_only BEFORE UPDATE ON review_revisions FOR EACH ROW EXECUTE FUNCTION verdict_revision_erase_only()",
];

/// Each guard is dropped and created again in one statement batch: SQLite's migration
/// connection would otherwise still see the dropped trigger's name.
const SQLITE_UP: &[&str] = &[
    r#"DROP TRIGGER audit_events_no_update;
       CREATE TRIGGER audit_events_no_update BEFORE UPDATE ON audit_events
       WHEN NEW.seq IS NOT OLD.seq OR NEW.occurred_at IS NOT OLD.occurred_at
         OR NEW.actor IS NOT OLD.actor OR NEW.event IS NOT OLD.event
         OR NEW.action IS NOT OLD.action OR NEW.object_type IS NOT OLD.object_type
         OR NEW.object_id IS NOT OLD.object_id OR NEW.payload_hash IS NOT OLD.payload_hash
         OR NEW.prev_hash IS NOT OLD.prev_hash OR NEW.row_hash IS NOT OLD.row_hash
         OR instr(NEW.payload, '"redacted":[') = 0
       BEGIN SELECT RAISE(ABORT, 'verdict: an audit row may only have its payload redacted'); END"#,
    r#"DROP TRIGGER comments_posted_fixed;
       CREATE TRIGGER comments_posted_fixed BEFORE UPDATE ON comments
       WHEN NEW.public_id IS NOT OLD.public_id OR NEW.event_id IS NOT OLD.event_id
         OR NEW.project_id IS NOT OLD.project_id OR NEW.author_id IS NOT OLD.author_id
         OR NEW.created_at IS NOT OLD.created_at
         OR (NEW.body IS NOT OLD.body AND NEW.body IS NOT '[erased]')
       BEGIN SELECT RAISE(ABORT, 'verdict: what a comment posted never changes, except to be erased'); END"#,
    r#"DROP TRIGGER review_revisions_no_update;
       CREATE TRIGGER review_revisions_no_update BEFORE UPDATE ON review_revisions
       WHEN NEW.id IS NOT OLD.id OR NEW.review_id IS NOT OLD.review_id
         OR NEW.version IS NOT OLD.version OR NEW.scores IS NOT OLD.scores
         OR NEW.submitted IS NOT OLD.submitted OR NEW.created_at IS NOT OLD.created_at
         OR NEW.comment IS NOT '[erased]'
       BEGIN SELECT RAISE(ABORT, 'verdict: a review revision may only have its comment erased'); END"#,
];

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        match manager.get_database_backend() {
            DbBackend::Postgres => execute(manager, PG_UP).await,
            _ => execute(manager, SQLITE_UP).await,
        }
    }

    async fn down(&self, _manager: &SchemaManager) -> Result<(), DbErr> {
        // Once a row was redacted the strict guards could be put back, but what was erased
        // is gone either way; like the core schema, this step is not rolled back.
        Err(DbErr::Migration(
            "the erasure guards cannot be rolled back to the strict ones".into(),
        ))
    }
}
