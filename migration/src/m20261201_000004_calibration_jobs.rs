//! Calibration as a background job (`startCalibration`): a large event's run takes seconds
//! to minutes, longer than a request should wait. A job is running until it ends with
//! either the run it stored or the reason it failed; at most one runs per event. `origin`
//! names the server process computing it (its PostgreSQL `application_name`), so that a job
//! whose process stopped can be told from one still running.

use sea_orm_migration::prelude::*;

use crate::sql::execute;

pub struct Migration;

impl MigrationName for Migration {
    fn name(&self) -> &str {
        "m20261201_000004_calibration_jobs"
    }
}

const DDL: &[&str] = &[
    r#"CREATE TABLE calibration_jobs (
        id {pk},
        public_id TEXT NOT NULL UNIQUE,
        event_id BIGINT NOT NULL REFERENCES events(id),
        requested_by TEXT NOT NULL,
        seed BIGINT NOT NULL CHECK (seed >= 0),
        bootstrap INTEGER NOT NULL CHECK (bootstrap BETWEEN 0 AND 2000),
        origin TEXT NOT NULL,
        created_at {ts} NOT NULL,
        finished_at {ts},
        run_id BIGINT,
        error TEXT CHECK (length(error) <= 1000),
        FOREIGN KEY (event_id, run_id) REFERENCES calibration_runs(event_id, id),
        CHECK ((finished_at IS NULL AND run_id IS NULL AND error IS NULL)
            OR (finished_at IS NOT NULL AND (run_id IS NULL) <> (error IS NULL)))
    )"#,
    "CREATE UNIQUE INDEX calibration_jobs_one_running ON calibration_jobs(event_id) \
     WHERE finished_at IS NULL",
    "CREATE INDEX calibration_jobs_event ON calibration_jobs(event_id, id)",
];

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        execute(manager, DDL).await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .get_connection()
            .execute_unprepared("DROP TABLE calibration_jobs")
            .await?;
        Ok(())
    }
}
