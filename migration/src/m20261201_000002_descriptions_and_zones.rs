//! What the web client shows people: an event's time zone (its deadlines are stored in
//! UTC and shown in the viewer's zone with the event's beside them) and a description for
//! each criterion of the rubric (what a judge should look for).

use sea_orm_migration::prelude::*;

use crate::sql::execute;

pub struct Migration;

impl MigrationName for Migration {
    fn name(&self) -> &str {
        "m20261201_000002_descriptions_and_zones"
    }
}

const DDL: &[&str] = &[
    // An IANA zone name, checked by the server against the tz database; existing events
    // keep showing UTC.
    "ALTER TABLE events ADD COLUMN time_zone TEXT NOT NULL DEFAULT 'UTC' \
     CHECK (length(time_zone) BETWEEN 1 AND 64)",
    "ALTER TABLE criteria ADD COLUMN description TEXT NOT NULL DEFAULT '' \
     CHECK (length(description) <= 2000)",
];

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        execute(manager, DDL).await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        let db = manager.get_connection();
        db.execute_unprepared("ALTER TABLE criteria DROP COLUMN description")
            .await?;
        db.execute_unprepared("ALTER TABLE events DROP COLUMN time_zone")
            .await?;
        Ok(())
    }
}
