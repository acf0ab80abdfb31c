//! Comments (issue 12): a thread under each submitted project. A comment belongs to its
//! project's event (composite foreign key, so a row cannot name a project of another
//! event) and to its author; its body is 1 to 2,000 characters, already trimmed, stored
//! verbatim. Organizers hide a comment with a reason (1 to 500 characters); hiding is soft:
//! the hidden_* columns are set together or not at all, and triggers refuse to delete a
//! comment or to change what was posted (body, author, project, time), so the row stays
//! beside its audit event.

use sea_orm_migration::prelude::*;
use sea_orm_migration::sea_orm::DbBackend;

use crate::sql::execute;

pub struct Migration;

impl MigrationName for Migration {
    fn name(&self) -> &str {
        "m20261202_000002_comments"
    }
}

const DDL: &[&str] = &[
    r#"CREATE TABLE comments (
        id {pk},
        public_id TEXT NOT NULL UNIQUE,
        event_id BIGINT NOT NULL REFERENCES events(id),
        project_id BIGINT NOT NULL,
        author_id BIGINT NOT NULL REFERENCES users(id),
        body TEXT NOT NULL CHECK (length(body) BETWEEN 1 AND 2000 AND length(trim(body)) > 0),
        created_at {ts} NOT NULL,
        hidden_at {ts},
        hidden_reason TEXT,
        hidden_by BIGINT REFERENCES users(id),
        FOREIGN KEY (event_id, project_id) REFERENCES projects(event_id, id),
        CHECK (
            (hidden_at IS NULL AND hidden_reason IS NULL AND hidden_by IS NULL)
            OR (hidden_at IS NOT NULL AND hidden_by IS NOT NULL
                AND hidden_reason IS NOT NULL AND length(hidden_reason) BETWEEN 1 AND 500)
        )
    )"#,
    // A thread is read in posting order, a page at a time.
    "CREATE INDEX comments_project ON comments(project_id, id)",
];

/// What was posted never changes and no comment is ever deleted.
const PG_TRIGGERS: &[&str] = &[
    r#"CREATE FUNCTION verdict_comment_refuse() RETURNS trigger LANGUAGE plpgsql AS $$
       BEGIN RAISE EXCEPTION 'verdict: a comment is never deleted and what was posted never changes'; END $$"#,
    "CREATE TRIGGER comments_posted_fixed BEFORE UPDATE OF public_id, event_id, project_id, author_id, body, created_at ON comments FOR EACH ROW EXECUTE FUNCTION verdict_comment_refuse()",
    "CREATE TRIGGER comments_no_delete BEFORE DELETE ON comments FOR EACH ROW EXECUTE FUNCTION verdict_comment_refuse()",
    "CREATE TRIGGER comments_no_truncate BEFORE TRUNCATE ON comments FOR EACH STATEMENT EXECUTE FUNCTION verdict_comment_refuse()",
];

const SQLITE_TRIGGERS: &[&str] = &[
    r#"CREATE TRIGGER comments_posted_fixed BEFORE UPDATE OF public_id, event_id, project_id, author_id, body, created_at ON comments
       BEGIN SELECT RAISE(ABORT, 'verdict: what a comment posted never changes'); END"#,
    r#"CREATE TRIGGER comments_no_delete BEFORE DELETE ON comments
       BEGIN SELECT RAISE(ABORT, 'verdict: a comment is never deleted'); END"#,
];

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        execute(manager, DDL).await?;
        match manager.get_database_backend() {
            DbBackend::Postgres => execute(manager, PG_TRIGGERS).await,
            _ => execute(manager, SQLITE_TRIGGERS).await,
        }
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        let db = manager.get_connection();
        db.execute_unprepared("DROP TABLE comments").await?;
        if manager.get_database_backend() == DbBackend::Postgres {
            db.execute_unprepared("DROP FUNCTION verdict_comment_refuse()")
                .await?;
        }
        Ok(())
    }
}
