//! Prizes (issue 12): an event's awards, overall or within a track, each at a position of
//! the ranking (1, 2, 3 ...) or 0 for a special award, optionally with a winner the
//! organizers assigned. The track and the winner belong to the prize's event (composite
//! foreign keys); the podium is derived from the published run, never stored.

use sea_orm_migration::prelude::*;

use crate::sql::execute;

pub struct Migration;

impl MigrationName for Migration {
    fn name(&self) -> &str {
        "m20261201_000005_prizes"
    }
}

const DDL: &[&str] = &[
    r#"CREATE TABLE prizes (
        id {pk},
        public_id TEXT NOT NULL UNIQUE,
        event_id BIGINT NOT NULL REFERENCES events(id),
        track_id BIGINT,
        name TEXT NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
        description TEXT NOT NULL CHECK (length(description) <= 2000),
        position INTEGER NOT NULL CHECK (position BETWEEN 0 AND 100),
        winner_project_id BIGINT,
        created_at {ts} NOT NULL,
        FOREIGN KEY (event_id, track_id) REFERENCES tracks(event_id, id),
        FOREIGN KEY (event_id, winner_project_id) REFERENCES projects(event_id, id)
    )"#,
    "CREATE INDEX prizes_event ON prizes(event_id, id)",
];

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        execute(manager, DDL).await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .get_connection()
            .execute_unprepared("DROP TABLE prizes")
            .await?;
        Ok(())
    }
}
