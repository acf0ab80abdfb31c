//! Pairwise judging (issue 26): an event's judging mode, the judges' comparisons of two
//! projects, and the projects a judge skipped on their route.
//!
//! - `events.judging_mode`: `scores` (the rubric only; every event so far), `pairwise`
//!   (comparisons only) or `both`.
//! - `comparisons`: one row per judge and unordered pair of projects, whichever way round
//!   it was compared (a unique index on the pair's smaller and larger id); a revision
//!   turns the row round and counts its `version` up. `current_id` is the project the judge
//!   was at when comparing (the other one is the project they saw before), one of the two.
//! - `comparison_skips`: a project the judge passed over on their route ("not at the
//!   table"), with the judge's reason; at most one per judge and project.
//!
//! What the database holds, so no code path can break it: both projects and the judge are
//! of the comparison's event (composite foreign keys, as for assignments), the judge's
//! membership has the judge role (`judge_role` is always `judge` and is part of the
//! foreign key to `memberships(event_id, id, role)`), better != worse, the current project
//! is one of the two, a version is at least 1, one row per judge and unordered pair, and a
//! skip's reason is 1 to 200 characters. Whether the judge may judge the projects (own
//! team, recusal, track) and whether judging is open are rules of the write
//! (`domain::judging::pairwise`), read in its transaction under the event's lock.

use sea_orm_migration::prelude::*;
use sea_orm_migration::sea_orm::DbBackend;

use crate::sql::execute;

pub struct Migration;

impl MigrationName for Migration {
    fn name(&self) -> &str {
        "m20261205_000101_pairwise"
    }
}

const DDL: &[&str] = &[
    "ALTER TABLE events ADD COLUMN judging_mode TEXT NOT NULL DEFAULT 'scores' \
     CHECK (judging_mode IN ('scores', 'pairwise', 'both'))",
    // The parent key for "a judge's membership" below.
    "CREATE UNIQUE INDEX memberships_event_id_id_role ON memberships(event_id, id, role)",
    r#"CREATE TABLE comparisons (
        id {pk},
        public_id TEXT NOT NULL UNIQUE,
        event_id BIGINT NOT NULL,
        judge_id BIGINT NOT NULL,
        judge_role TEXT NOT NULL DEFAULT 'judge' CHECK (judge_role = 'judge'),
        better_id BIGINT NOT NULL,
        worse_id BIGINT NOT NULL,
        current_id BIGINT NOT NULL,
        version INTEGER NOT NULL CHECK (version >= 1),
        created_at {ts} NOT NULL,
        updated_at {ts} NOT NULL,
        CHECK (better_id <> worse_id),
        CHECK (current_id = better_id OR current_id = worse_id),
        FOREIGN KEY (event_id, judge_id, judge_role) REFERENCES memberships(event_id, id, role),
        FOREIGN KEY (event_id, better_id) REFERENCES projects(event_id, id),
        FOREIGN KEY (event_id, worse_id) REFERENCES projects(event_id, id)
    )"#,
    "CREATE INDEX comparisons_event ON comparisons(event_id)",
    r#"CREATE TABLE comparison_skips (
        id {pk},
        public_id TEXT NOT NULL UNIQUE,
        event_id BIGINT NOT NULL,
        judge_id BIGINT NOT NULL,
        judge_role TEXT NOT NULL DEFAULT 'judge' CHECK (judge_role = 'judge'),
        project_id BIGINT NOT NULL,
        reason TEXT NOT NULL CHECK (length(reason) BETWEEN 1 AND 200),
        created_at {ts} NOT NULL,
        UNIQUE (judge_id, project_id),
        FOREIGN KEY (event_id, judge_id, judge_role) REFERENCES memberships(event_id, id, role),
        FOREIGN KEY (event_id, project_id) REFERENCES projects(event_id, id)
    )"#,
];

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        execute(manager, DDL).await?;
        // One row per judge and unordered pair: the pair's smaller and larger id, spelled
        // per backend.
        let (low, high) = match manager.get_database_backend() {
            DbBackend::Postgres => ("LEAST", "GREATEST"),
            _ => ("min", "max"),
        };
        execute(
            manager,
            [format!(
                "CREATE UNIQUE INDEX comparisons_judge_pair ON comparisons \
                 (judge_id, {low}(better_id, worse_id), {high}(better_id, worse_id))"
            )],
        )
        .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        let db = manager.get_connection();
        for ddl in [
            "DROP TABLE comparison_skips",
            "DROP TABLE comparisons",
            "DROP INDEX memberships_event_id_id_role",
            "ALTER TABLE events DROP COLUMN judging_mode",
        ] {
            db.execute_unprepared(ddl).await?;
        }
        Ok(())
    }
}
