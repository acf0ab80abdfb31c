//! The core schema: accounts, events and their people, teams, projects, the audit chain,
//! idempotency keys and the shared log-in throttle.
//!
//! Every rule that must hold whichever code path writes a row is a constraint here; the
//! service checks the same rules first so that clients get a clear error code.

use sea_orm_migration::prelude::*;
use sea_orm_migration::sea_orm::DbBackend;

use crate::sql::execute;

pub struct Migration;

impl MigrationName for Migration {
    fn name(&self) -> &str {
        "m20261130_000001_core"
    }
}

/// Tables, in dependency order. `{pk}` and `{ts}` are filled in per backend.
const TABLES: &[&str] = &[
    r#"CREATE TABLE users (
        id {pk},
        public_id TEXT NOT NULL UNIQUE,
        email TEXT NOT NULL UNIQUE CHECK (email = lower(email) AND length(email) BETWEEN 3 AND 254),
        display_name TEXT NOT NULL CHECK (length(display_name) BETWEEN 1 AND 100),
        password_hash TEXT,
        is_site_admin BOOLEAN NOT NULL DEFAULT FALSE,
        created_at {ts} NOT NULL
    )"#,
    r#"CREATE TABLE sessions (
        id {pk},
        user_id BIGINT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
        token_hash TEXT NOT NULL UNIQUE,
        created_at {ts} NOT NULL,
        expires_at {ts} NOT NULL,
        revoked_at {ts},
        CHECK (expires_at > created_at)
    )"#,
    r#"CREATE TABLE api_tokens (
        id {pk},
        public_id TEXT NOT NULL UNIQUE,
        user_id BIGINT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
        label TEXT NOT NULL CHECK (length(label) BETWEEN 1 AND 100),
        prefix TEXT NOT NULL,
        token_hash TEXT NOT NULL UNIQUE,
        created_at {ts} NOT NULL,
        last_used_at {ts},
        revoked_at {ts}
    )"#,
    r#"CREATE TABLE events (
        id {pk},
        public_id TEXT NOT NULL UNIQUE,
        external_id TEXT NOT NULL UNIQUE,
        slug TEXT NOT NULL UNIQUE CHECK (length(slug) BETWEEN 1 AND 64),
        name TEXT NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
        submissions_open {ts} NOT NULL,
        submissions_close {ts} NOT NULL,
        judging_open {ts},
        judging_close {ts},
        voting_open {ts},
        voting_close {ts},
        reviews_per_project INTEGER NOT NULL CHECK (reviews_per_project >= 1),
        max_team_size INTEGER NOT NULL CHECK (max_team_size >= 1),
        created_at {ts} NOT NULL,
        CHECK (submissions_open < submissions_close),
        CHECK ((judging_open IS NULL) = (judging_close IS NULL)),
        CHECK (judging_open IS NULL OR judging_open < judging_close),
        CHECK ((voting_open IS NULL) = (voting_close IS NULL)),
        CHECK (voting_open IS NULL OR voting_open < voting_close)
    )"#,
    r#"CREATE TABLE tracks (
        id {pk},
        public_id TEXT NOT NULL UNIQUE,
        event_id BIGINT NOT NULL REFERENCES events(id),
        external_id TEXT NOT NULL,
        name TEXT NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
        UNIQUE (event_id, external_id),
        UNIQUE (event_id, id)
    )"#,
    r#"CREATE TABLE memberships (
        id {pk},
        public_id TEXT NOT NULL UNIQUE,
        user_id BIGINT NOT NULL REFERENCES users(id),
        event_id BIGINT NOT NULL REFERENCES events(id),
        role TEXT NOT NULL CHECK (role IN ('participant', 'judge', 'organizer')),
        external_id TEXT,
        judge_tracks TEXT NOT NULL DEFAULT '[]',
        created_at {ts} NOT NULL,
        UNIQUE (user_id, event_id, role),
        UNIQUE (event_id, role, external_id)
    )"#,
    r#"CREATE TABLE teams (
        id {pk},
        public_id TEXT NOT NULL UNIQUE,
        event_id BIGINT NOT NULL REFERENCES events(id),
        external_id TEXT NOT NULL,
        name TEXT NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
        invite_code TEXT NOT NULL UNIQUE,
        created_at {ts} NOT NULL,
        UNIQUE (event_id, external_id),
        UNIQUE (event_id, id)
    )"#,
    r#"CREATE TABLE team_members (
        id {pk},
        event_id BIGINT NOT NULL,
        team_id BIGINT NOT NULL,
        user_id BIGINT NOT NULL REFERENCES users(id),
        created_at {ts} NOT NULL,
        UNIQUE (event_id, user_id),
        FOREIGN KEY (event_id, team_id) REFERENCES teams(event_id, id)
    )"#,
    r#"CREATE TABLE projects (
        id {pk},
        public_id TEXT NOT NULL UNIQUE,
        event_id BIGINT NOT NULL REFERENCES events(id),
        team_id BIGINT NOT NULL,
        track_id BIGINT NOT NULL,
        external_id TEXT NOT NULL,
        title TEXT NOT NULL CHECK (length(title) BETWEEN 1 AND 200),
        tagline TEXT NOT NULL DEFAULT '' CHECK (length(tagline) <= 200),
        summary TEXT NOT NULL DEFAULT '' CHECK (length(summary) <= 2000),
        description TEXT NOT NULL DEFAULT '' CHECK (length(description) <= 20000),
        repo_url TEXT NOT NULL DEFAULT '' CHECK (repo_url = '' OR repo_url LIKE 'http://%' OR repo_url LIKE 'https://%'),
        demo_url TEXT NOT NULL DEFAULT '' CHECK (demo_url = '' OR demo_url LIKE 'http://%' OR demo_url LIKE 'https://%'),
        tags TEXT NOT NULL DEFAULT '[]',
        status TEXT NOT NULL CHECK (status IN ('draft', 'submitted', 'withdrawn')),
        submitted_at {ts},
        duplicate_of BIGINT REFERENCES projects(id),
        created_at {ts} NOT NULL,
        updated_at {ts} NOT NULL,
        UNIQUE (event_id, external_id),
        CHECK (status <> 'submitted' OR submitted_at IS NOT NULL),
        CHECK (status <> 'draft' OR submitted_at IS NULL),
        CHECK (duplicate_of IS NULL OR duplicate_of <> id),
        FOREIGN KEY (event_id, team_id) REFERENCES teams(event_id, id),
        FOREIGN KEY (event_id, track_id) REFERENCES tracks(event_id, id)
    )"#,
    r#"CREATE TABLE audit_head (
        id INTEGER PRIMARY KEY CHECK (id = 1),
        seq BIGINT NOT NULL CHECK (seq >= 0),
        head_hash TEXT NOT NULL CHECK (length(head_hash) = 64)
    )"#,
    r#"CREATE TABLE audit_events (
        seq BIGINT PRIMARY KEY CHECK (seq >= 1),
        occurred_at TEXT NOT NULL,
        actor TEXT NOT NULL,
        event TEXT NOT NULL,
        action TEXT NOT NULL CHECK (length(action) >= 3),
        object_type TEXT NOT NULL,
        object_id TEXT NOT NULL,
        payload TEXT NOT NULL,
        payload_hash TEXT NOT NULL CHECK (length(payload_hash) = 64),
        prev_hash TEXT NOT NULL CHECK (length(prev_hash) = 64),
        row_hash TEXT NOT NULL UNIQUE CHECK (length(row_hash) = 64)
    )"#,
    r#"CREATE TABLE idempotency_keys (
        id {pk},
        actor_user_id BIGINT NOT NULL REFERENCES users(id),
        key TEXT NOT NULL CHECK (length(key) BETWEEN 1 AND 200),
        operation TEXT NOT NULL,
        request_digest TEXT NOT NULL,
        response TEXT NOT NULL,
        created_at {ts} NOT NULL,
        UNIQUE (actor_user_id, key)
    )"#,
    r#"CREATE TABLE login_throttle (
        bucket TEXT PRIMARY KEY,
        window_start {ts} NOT NULL,
        failures INTEGER NOT NULL CHECK (failures >= 0)
    )"#,
];

const INDEXES: &[&str] = &[
    "CREATE INDEX sessions_user ON sessions(user_id)",
    "CREATE INDEX api_tokens_user ON api_tokens(user_id)",
    "CREATE INDEX memberships_event ON memberships(event_id, role)",
    "CREATE INDEX memberships_user ON memberships(user_id)",
    "CREATE INDEX team_members_team ON team_members(team_id)",
    "CREATE INDEX projects_event_status ON projects(event_id, status, track_id)",
    "CREATE INDEX projects_team ON projects(team_id)",
    "CREATE INDEX audit_events_event ON audit_events(event, seq)",
    "INSERT INTO audit_head (id, seq, head_hash) VALUES (1, 0, '0000000000000000000000000000000000000000000000000000000000000000')",
];

/// The audit chain is append-only, enforced by the database on both backends:
/// an audit row is never updated or deleted, a new row must extend the head, and the
/// head only advances one step at a time onto the row just appended.
const PG_AUDIT_TRIGGERS: &[&str] = &[
    r#"CREATE FUNCTION verdict_audit_refuse() RETURNS trigger LANGUAGE plpgsql AS $$
       BEGIN RAISE EXCEPTION 'verdict: audit tables are append-only'; END $$"#,
    r#"CREATE FUNCTION verdict_audit_check_append() RETURNS trigger LANGUAGE plpgsql AS $$
       DECLARE h audit_head%ROWTYPE;
       BEGIN
         SELECT * INTO h FROM audit_head WHERE id = 1;
         IF NEW.seq <> h.seq + 1 OR NEW.prev_hash <> h.head_hash THEN
           RAISE EXCEPTION 'verdict: audit append does not extend the head';
         END IF;
         RETURN NEW;
       END $$"#,
    r#"CREATE FUNCTION verdict_audit_check_head() RETURNS trigger LANGUAGE plpgsql AS $$
       BEGIN
         IF NEW.id <> OLD.id OR NEW.seq <> OLD.seq + 1
            OR NEW.head_hash IS DISTINCT FROM (SELECT row_hash FROM audit_events WHERE seq = NEW.seq) THEN
           RAISE EXCEPTION 'verdict: audit head may only advance onto the appended row';
         END IF;
         RETURN NEW;
       END $$"#,
    "CREATE TRIGGER audit_events_no_update BEFORE UPDATE OR DELETE ON audit_events FOR EACH ROW EXECUTE FUNCTION verdict_audit_refuse()",
    "CREATE TRIGGER audit_events_no_truncate BEFORE TRUNCATE ON audit_events FOR EACH STATEMENT EXECUTE FUNCTION verdict_audit_refuse()",
    "CREATE TRIGGER audit_events_append BEFORE INSERT ON audit_events FOR EACH ROW EXECUTE FUNCTION verdict_audit_check_append()",
    "CREATE TRIGGER audit_head_advance BEFORE UPDATE ON audit_head FOR EACH ROW EXECUTE FUNCTION verdict_audit_check_head()",
    "CREATE TRIGGER audit_head_no_delete BEFORE DELETE ON audit_head FOR EACH ROW EXECUTE FUNCTION verdict_audit_refuse()",
    "CREATE TRIGGER audit_head_no_truncate BEFORE TRUNCATE ON audit_head FOR EACH STATEMENT EXECUTE FUNCTION verdict_audit_refuse()",
];

const SQLITE_AUDIT_TRIGGERS: &[&str] = &[
    r#"CREATE TRIGGER audit_events_no_update BEFORE UPDATE ON audit_events
       BEGIN SELECT RAISE(ABORT, 'verdict: audit tables are append-only'); END"#,
    r#"CREATE TRIGGER audit_events_no_delete BEFORE DELETE ON audit_events
       BEGIN SELECT RAISE(ABORT, 'verdict: audit tables are append-only'); END"#,
    r#"CREATE TRIGGER audit_events_append BEFORE INSERT ON audit_events
       WHEN NEW.seq <> (SELECT seq + 1 FROM audit_head WHERE id = 1)
         OR NEW.prev_hash <> (SELECT head_hash FROM audit_head WHERE id = 1)
       BEGIN SELECT RAISE(ABORT, 'verdict: audit append does not extend the head'); END"#,
    r#"CREATE TRIGGER audit_head_advance BEFORE UPDATE ON audit_head
       WHEN NEW.id <> OLD.id OR NEW.seq <> OLD.seq + 1
         OR NEW.head_hash IS NOT (SELECT row_hash FROM audit_events WHERE seq = NEW.seq)
       BEGIN SELECT RAISE(ABORT, 'verdict: audit head may only advance onto the appended row'); END"#,
    r#"CREATE TRIGGER audit_head_no_delete BEFORE DELETE ON audit_head
       BEGIN SELECT RAISE(ABORT, 'verdict: audit tables are append-only'); END"#,
];

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        let triggers = match manager.get_database_backend() {
            DbBackend::Postgres => PG_AUDIT_TRIGGERS,
            _ => SQLITE_AUDIT_TRIGGERS,
        };
        let all: Vec<&str> = TABLES
            .iter()
            .chain(INDEXES)
            .chain(triggers)
            .copied()
            .collect();
        execute(manager, all).await
    }

    async fn down(&self, _manager: &SchemaManager) -> Result<(), DbErr> {
        // History is not reversible: the audit chain must never be dropped by a migration.
        Err(DbErr::Migration(
            "the core schema holds the audit chain and cannot be rolled back".into(),
        ))
    }
}
