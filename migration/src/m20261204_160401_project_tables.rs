//! Expo table numbers (issue 24): `projects.expo_table`, where a project stands on the expo
//! floor so a judge finds it. Null until the team, an organizer or an import sets it.
//!
//! Unique per event, case-insensitively, when set: two projects at one table would send a
//! judge to the wrong one, and organizers hand out a table to one team. The index ignores
//! NULLs on both backends (NULLs are distinct in a unique index), so any number of
//! projects can be without a table.

use sea_orm_migration::prelude::*;

use crate::sql::execute;

pub struct Migration;

impl MigrationName for Migration {
    fn name(&self) -> &str {
        "m20261204_160401_project_tables"
    }
}

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        execute(
            manager,
            [
                "ALTER TABLE projects ADD COLUMN expo_table TEXT \
                 CHECK (expo_table IS NULL OR (length(expo_table) BETWEEN 1 AND 16))",
                "CREATE UNIQUE INDEX projects_event_expo_table ON projects (event_id, lower(expo_table))",
            ],
        )
        .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        let db = manager.get_connection();
        db.execute_unprepared("DROP INDEX projects_event_expo_table")
            .await?;
        db.execute_unprepared("ALTER TABLE projects DROP COLUMN expo_table")
            .await?;
        Ok(())
    }
}
