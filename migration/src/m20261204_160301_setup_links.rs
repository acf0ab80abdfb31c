//! The first-run setup link (issue 24): on a deployment with no account, `serve` prints a
//! one-time link that makes the first account the site admin. Only the SHA-256 of its token
//! is kept; a restart while there is still no account replaces the row (the old link stops
//! working), and using it sets `used_at` once.

use sea_orm_migration::prelude::*;

use crate::sql::execute;

pub struct Migration;

impl MigrationName for Migration {
    fn name(&self) -> &str {
        "m20261204_160301_setup_links"
    }
}

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        execute(
            manager,
            ["CREATE TABLE setup_links (
                id {pk},
                token_hash TEXT NOT NULL UNIQUE,
                created_at {ts} NOT NULL,
                expires_at {ts} NOT NULL,
                used_at {ts}
            )"],
        )
        .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .get_connection()
            .execute_unprepared("DROP TABLE setup_links")
            .await?;
        Ok(())
    }
}
