//! A judging mode per track (issue 26): an expo track judged on the floor by comparisons
//! beside tracks judged by rubric scores. `tracks.judging_mode` is NULL when the track is
//! judged as its event is (`events.judging_mode`), else `scores`, `pairwise` or `both`
//! (the same CHECK as the event's column).

use sea_orm_migration::prelude::*;

use crate::sql::execute;

pub struct Migration;

impl MigrationName for Migration {
    fn name(&self) -> &str {
        "m20261205_000201_track_judging_mode"
    }
}

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        execute(
            manager,
            ["ALTER TABLE tracks ADD COLUMN judging_mode TEXT \
                 CHECK (judging_mode IS NULL OR judging_mode IN ('scores', 'pairwise', 'both'))"],
        )
        .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .get_connection()
            .execute_unprepared("ALTER TABLE tracks DROP COLUMN judging_mode")
            .await?;
        Ok(())
    }
}
