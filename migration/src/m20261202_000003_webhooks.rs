//! Webhooks (issue 12): an event's endpoints (URL, the secret deliveries are signed with,
//! an action filter, an active flag), the deliveries the audit append writes for them in
//! the business transaction, and every attempt the worker made at one.
//!
//! A delivery is claimed by one worker at a time with a lease (`lease_until`), so several
//! server processes on one database never send it twice at once.

use sea_orm_migration::prelude::*;

use crate::sql::execute;

pub struct Migration;

impl MigrationName for Migration {
    fn name(&self) -> &str {
        "m20261202_000003_webhooks"
    }
}

const DDL: &[&str] = &[
    r#"CREATE TABLE webhooks (
        id {pk},
        public_id TEXT NOT NULL UNIQUE,
        event_id BIGINT NOT NULL REFERENCES events(id),
        url TEXT NOT NULL CHECK (length(url) BETWEEN 8 AND 2000),
        secret TEXT NOT NULL CHECK (length(secret) >= 64),
        actions TEXT NOT NULL,
        active BOOLEAN NOT NULL,
        created_by BIGINT REFERENCES users(id),
        created_at {ts} NOT NULL,
        updated_at {ts} NOT NULL
    )"#,
    "CREATE INDEX webhooks_event ON webhooks(event_id, active)",
    r#"CREATE TABLE webhook_deliveries (
        id {pk},
        public_id TEXT NOT NULL UNIQUE,
        webhook_id BIGINT NOT NULL REFERENCES webhooks(id),
        seq BIGINT NOT NULL,
        action TEXT NOT NULL,
        body TEXT NOT NULL,
        status TEXT NOT NULL CHECK (status IN ('pending', 'delivered', 'failed')),
        attempts INTEGER NOT NULL CHECK (attempts >= 0),
        next_attempt_at {ts} NOT NULL,
        lease_until {ts},
        last_status INTEGER,
        last_error TEXT,
        created_at {ts} NOT NULL,
        delivered_at {ts},
        UNIQUE (webhook_id, seq)
    )"#,
    "CREATE INDEX webhook_deliveries_due ON webhook_deliveries(status, next_attempt_at)",
    r#"CREATE TABLE webhook_attempts (
        id {pk},
        delivery_id BIGINT NOT NULL REFERENCES webhook_deliveries(id),
        attempt INTEGER NOT NULL CHECK (attempt >= 1),
        started_at {ts} NOT NULL,
        duration_ms BIGINT NOT NULL,
        status_code INTEGER,
        error TEXT,
        UNIQUE (delivery_id, attempt)
    )"#,
];

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        execute(manager, DDL).await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        for table in ["webhook_attempts", "webhook_deliveries", "webhooks"] {
            manager
                .get_connection()
                .execute_unprepared(&format!("DROP TABLE {table}"))
                .await?;
        }
        Ok(())
    }
}
