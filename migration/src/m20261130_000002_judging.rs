//! Judging: the rubric, assignments, recusals, private reviews with their immutable
//! revisions, calibration runs and result publications (the last three append-only).

use sea_orm_migration::prelude::*;

use crate::sql::{append_only, execute};

pub struct Migration;

impl MigrationName for Migration {
    fn name(&self) -> &str {
        "m20261130_000002_judging"
    }
}

const DDL: &[&str] = &[
    // Parent keys for the same-event composite foreign keys below.
    "CREATE UNIQUE INDEX projects_event_id_id ON projects(event_id, id)",
    "CREATE UNIQUE INDEX memberships_event_id_id ON memberships(event_id, id)",
    // Whether teams read the comments on their own project once results are published.
    "ALTER TABLE events ADD COLUMN comments_to_teams BOOLEAN NOT NULL DEFAULT FALSE",
    r#"CREATE TABLE criteria (
        id {pk},
        public_id TEXT NOT NULL UNIQUE,
        event_id BIGINT NOT NULL REFERENCES events(id),
        key TEXT NOT NULL CHECK (length(key) BETWEEN 1 AND 32),
        name TEXT NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
        weight {real} NOT NULL CHECK (weight > 0),
        min_score INTEGER NOT NULL,
        max_score INTEGER NOT NULL,
        position INTEGER NOT NULL,
        CHECK (min_score < max_score),
        UNIQUE (event_id, key)
    )"#,
    r#"CREATE TABLE recusals (
        id {pk},
        public_id TEXT NOT NULL UNIQUE,
        event_id BIGINT NOT NULL,
        judge_id BIGINT NOT NULL,
        team_id BIGINT NOT NULL,
        reason TEXT NOT NULL DEFAULT '' CHECK (length(reason) <= 500),
        created_at {ts} NOT NULL,
        UNIQUE (judge_id, team_id),
        FOREIGN KEY (event_id, judge_id) REFERENCES memberships(event_id, id),
        FOREIGN KEY (event_id, team_id) REFERENCES teams(event_id, id)
    )"#,
    r#"CREATE TABLE assignments (
        id {pk},
        public_id TEXT NOT NULL UNIQUE,
        event_id BIGINT NOT NULL,
        judge_id BIGINT NOT NULL,
        project_id BIGINT NOT NULL,
        status TEXT NOT NULL CHECK (status IN ('pending', 'done', 'recused')),
        source TEXT NOT NULL CHECK (source IN ('import', 'auto', 'manual')),
        created_at {ts} NOT NULL,
        UNIQUE (judge_id, project_id),
        UNIQUE (id, judge_id, project_id),
        UNIQUE (event_id, id),
        FOREIGN KEY (event_id, judge_id) REFERENCES memberships(event_id, id),
        FOREIGN KEY (event_id, project_id) REFERENCES projects(event_id, id)
    )"#,
    r#"CREATE TABLE reviews (
        id {pk},
        public_id TEXT NOT NULL UNIQUE,
        event_id BIGINT NOT NULL,
        assignment_id BIGINT NOT NULL UNIQUE,
        judge_id BIGINT NOT NULL,
        project_id BIGINT NOT NULL,
        scores TEXT NOT NULL,
        comment TEXT NOT NULL DEFAULT '' CHECK (length(comment) <= 4000),
        submitted BOOLEAN NOT NULL,
        submitted_at {ts},
        version INTEGER NOT NULL CHECK (version >= 1),
        created_at {ts} NOT NULL,
        updated_at {ts} NOT NULL,
        CHECK (submitted = (submitted_at IS NOT NULL)),
        FOREIGN KEY (event_id, assignment_id) REFERENCES assignments(event_id, id),
        FOREIGN KEY (assignment_id, judge_id, project_id) REFERENCES assignments(id, judge_id, project_id)
    )"#,
    r#"CREATE TABLE review_revisions (
        id {pk},
        review_id BIGINT NOT NULL REFERENCES reviews(id),
        version INTEGER NOT NULL CHECK (version >= 1),
        scores TEXT NOT NULL,
        comment TEXT NOT NULL,
        submitted BOOLEAN NOT NULL,
        created_at {ts} NOT NULL,
        UNIQUE (review_id, version)
    )"#,
    r#"CREATE TABLE calibration_runs (
        id {pk},
        public_id TEXT NOT NULL UNIQUE,
        event_id BIGINT NOT NULL REFERENCES events(id),
        created_at {ts} NOT NULL,
        created_by TEXT NOT NULL,
        seed BIGINT NOT NULL,
        bootstrap INTEGER NOT NULL CHECK (bootstrap >= 0),
        lambda {real} NOT NULL,
        engine_version TEXT NOT NULL,
        params TEXT NOT NULL,
        inputs TEXT NOT NULL,
        inputs_hash TEXT NOT NULL CHECK (length(inputs_hash) = 64),
        result TEXT NOT NULL,
        result_hash TEXT NOT NULL CHECK (length(result_hash) = 64),
        connected BOOLEAN NOT NULL,
        signature TEXT NOT NULL,
        key_fingerprint TEXT NOT NULL,
        audit_seq BIGINT NOT NULL,
        UNIQUE (event_id, id)
    )"#,
    r#"CREATE TABLE result_publications (
        id {pk},
        public_id TEXT NOT NULL UNIQUE,
        event_id BIGINT NOT NULL,
        run_id BIGINT NOT NULL,
        version INTEGER NOT NULL CHECK (version >= 1),
        is_final BOOLEAN NOT NULL,
        published_at {ts} NOT NULL,
        published_by TEXT NOT NULL,
        signature TEXT NOT NULL,
        audit_seq BIGINT NOT NULL,
        UNIQUE (event_id, version),
        FOREIGN KEY (event_id, run_id) REFERENCES calibration_runs(event_id, id)
    )"#,
    "CREATE INDEX assignments_project ON assignments(project_id)",
    "CREATE INDEX reviews_project ON reviews(project_id)",
    "CREATE INDEX reviews_judge ON reviews(judge_id)",
    "CREATE INDEX calibration_runs_event ON calibration_runs(event_id)",
];

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        let backend = manager.get_database_backend();
        let db = manager.get_connection();
        execute(manager, DDL).await?;
        for table in [
            "review_revisions",
            "calibration_runs",
            "result_publications",
        ] {
            for ddl in append_only(backend, table) {
                db.execute_unprepared(&ddl).await?;
            }
        }
        Ok(())
    }

    async fn down(&self, _manager: &SchemaManager) -> Result<(), DbErr> {
        Err(DbErr::Migration(
            "judging history (revisions, runs, publications) cannot be rolled back".into(),
        ))
    }
}
