//! Several server processes on one PostgreSQL database: each committed audit entry is
//! announced on the channel `verdict_audit` as JSON (`seq`, `action`, `event`, `object`:
//! short identifiers, never the payload; and `origin`, the committing connection's
//! `application_name`, which names the process), so that every process
//! relays what any process committed into its own subscriptions (`server::relay`).
//! `pg_notify` inside the inserting transaction is delivered only when it commits, in
//! commit order, and never for a rollback. SQLite is one process: nothing to announce.

use sea_orm_migration::prelude::*;
use sea_orm_migration::sea_orm::{ConnectionTrait, DbBackend};

pub struct Migration;

impl MigrationName for Migration {
    fn name(&self) -> &str {
        "m20261201_000003_audit_notify"
    }
}

const POSTGRES: &[&str] = &[
    r#"CREATE FUNCTION verdict_audit_notify() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        PERFORM pg_notify('verdict_audit', json_build_object(
            'seq', NEW.seq, 'action', NEW.action, 'event', NEW.event, 'object', NEW.object_id,
            'origin', current_setting('application_name', true)
        )::text);
        RETURN NULL;
    END $$"#,
    "CREATE TRIGGER audit_events_notify AFTER INSERT ON audit_events FOR EACH ROW EXECUTE FUNCTION verdict_audit_notify()",
];

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        if manager.get_database_backend() != DbBackend::Postgres {
            return Ok(());
        }
        crate::sql::execute(manager, POSTGRES).await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        if manager.get_database_backend() != DbBackend::Postgres {
            return Ok(());
        }
        let db = manager.get_connection();
        db.execute_unprepared("DROP TRIGGER audit_events_notify ON audit_events")
            .await?;
        db.execute_unprepared("DROP FUNCTION verdict_audit_notify()")
            .await?;
        Ok(())
    }
}
