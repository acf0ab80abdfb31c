//! Deleting an event (issue 13): `deleteEvent` archives it. `archived_at` is set once and
//! never cleared; an archived event is hidden from every query and mutation (they find no
//! event by its slug, and no object of it by id), and its slug is freed for a new event.
//!
//! Why an archive and not a delete: an event's calibration runs, publications and review
//! revisions are append-only (their triggers refuse deletes, and exported bundles and the
//! audit chain name them), and its audit rows must stay for the chain to verify. Deleting
//! the rest would leave history pointing at rows that no longer exist; hiding the event
//! keeps every reference whole and removes it from every reader.

use sea_orm_migration::prelude::*;

use crate::sql::execute;

pub struct Migration;

impl MigrationName for Migration {
    fn name(&self) -> &str {
        "m20261203_000002_archived_events"
    }
}

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        execute(manager, ["ALTER TABLE events ADD COLUMN archived_at {ts}"]).await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .get_connection()
            .execute_unprepared("ALTER TABLE events DROP COLUMN archived_at")
            .await?;
        Ok(())
    }
}
