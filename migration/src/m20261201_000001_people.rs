//! People: who may register for an event, single-use invitation links, password resets,
//! and the outbox every message Verdict sends goes through.

use sea_orm_migration::prelude::*;

use crate::sql::execute;

pub struct Migration;

impl MigrationName for Migration {
    fn name(&self) -> &str {
        "m20261201_000001_people"
    }
}

const DDL: &[&str] = &[
    // Events made before this step keep working as they did (anyone may register); the
    // server gives new events `invite_only`.
    "ALTER TABLE events ADD COLUMN registration TEXT NOT NULL DEFAULT 'open' \
     CHECK (registration IN ('open', 'invite_only', 'closed'))",
    // A link for one person to take one role in one event. Only the token's SHA-256 is
    // stored. It is used once: redemption is a conditional update of `redeemed_at`.
    r#"CREATE TABLE invitations (
        id {pk},
        public_id TEXT NOT NULL UNIQUE,
        event_id BIGINT NOT NULL REFERENCES events(id),
        email TEXT NOT NULL CHECK (email = lower(email) AND length(email) BETWEEN 3 AND 254),
        role TEXT NOT NULL CHECK (role IN ('participant', 'judge', 'organizer')),
        token_hash TEXT NOT NULL UNIQUE CHECK (length(token_hash) = 64),
        created_by TEXT NOT NULL,
        created_at {ts} NOT NULL,
        expires_at {ts} NOT NULL,
        redeemed_at {ts},
        redeemed_by BIGINT REFERENCES users(id),
        revoked_at {ts},
        team_id BIGINT,
        CHECK (expires_at > created_at),
        CHECK (redeemed_at IS NULL OR revoked_at IS NULL),
        CHECK (team_id IS NULL OR role = 'participant'),
        FOREIGN KEY (event_id, team_id) REFERENCES teams(event_id, id),
        CHECK (redeemed_by IS NULL OR redeemed_at IS NOT NULL)
    )"#,
    // One open invitation per person and role in an event (and per team, for a team's
    // invitation): inviting again renews it.
    "CREATE UNIQUE INDEX invitations_one_open \
     ON invitations(event_id, email, role, COALESCE(team_id, 0)) \
     WHERE redeemed_at IS NULL AND revoked_at IS NULL",
    // A password-reset link: single use, short-lived, only its hash stored.
    r#"CREATE TABLE password_resets (
        id {pk},
        user_id BIGINT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
        token_hash TEXT NOT NULL UNIQUE CHECK (length(token_hash) = 64),
        created_at {ts} NOT NULL,
        expires_at {ts} NOT NULL,
        used_at {ts},
        CHECK (expires_at > created_at)
    )"#,
    // Every message Verdict sends, written in the transaction of the change that causes it
    // and delivered after commit by the mail worker (or read by organizers and operators).
    r#"CREATE TABLE outbox_messages (
        id {pk},
        public_id TEXT NOT NULL UNIQUE,
        kind TEXT NOT NULL CHECK (kind IN ('invitation', 'password_reset', 'email_confirmation', 'email_changed')),
        event_id BIGINT REFERENCES events(id),
        invitation_id BIGINT REFERENCES invitations(id),
        to_email TEXT NOT NULL CHECK (length(to_email) BETWEEN 3 AND 254),
        subject TEXT NOT NULL CHECK (length(subject) BETWEEN 1 AND 300),
        body_text TEXT NOT NULL,
        body_html TEXT NOT NULL,
        status TEXT NOT NULL CHECK (status IN ('pending', 'sent', 'failed', 'cancelled')),
        attempts INTEGER NOT NULL DEFAULT 0 CHECK (attempts >= 0),
        last_error TEXT,
        next_attempt_at {ts} NOT NULL,
        created_at {ts} NOT NULL,
        sent_at {ts},
        CHECK ((kind = 'invitation') = (invitation_id IS NOT NULL)),
        CHECK (invitation_id IS NULL OR event_id IS NOT NULL),
        CHECK ((status = 'sent') = (sent_at IS NOT NULL))
    )"#,
    // An address is confirmed by a link sent to it: the account's own on sign-up, or a new
    // one the account asked to change to. Accounts made before this step count as
    // confirmed (they were made by people, operators and imports Verdict already trusted).
    "ALTER TABLE users ADD COLUMN email_confirmed_at {ts}",
    "UPDATE users SET email_confirmed_at = created_at",
    r#"CREATE TABLE email_confirmations (
        id {pk},
        user_id BIGINT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
        email TEXT NOT NULL CHECK (email = lower(email) AND length(email) BETWEEN 3 AND 254),
        token_hash TEXT NOT NULL UNIQUE CHECK (length(token_hash) = 64),
        created_at {ts} NOT NULL,
        expires_at {ts} NOT NULL,
        used_at {ts},
        CHECK (expires_at > created_at)
    )"#,
    // A team's invite code expires (72 hours after it was made, or at the submission
    // deadline if that is sooner) and is replaced by `rotateInviteCode`. Codes made before
    // this step expire at their event's deadline.
    "ALTER TABLE teams ADD COLUMN invite_code_expires_at {ts}",
    "UPDATE teams SET invite_code_expires_at = \
     (SELECT submissions_close FROM events WHERE events.id = teams.event_id)",
    "CREATE INDEX outbox_messages_due ON outbox_messages(status, next_attempt_at)",
    "CREATE INDEX outbox_messages_event ON outbox_messages(event_id, id)",
    "CREATE INDEX invitations_event ON invitations(event_id, id)",
    // API tokens get a scope (tokens made before this step could write, and still can) and
    // an optional expiry.
    "ALTER TABLE api_tokens ADD COLUMN scope TEXT NOT NULL DEFAULT 'write' \
     CHECK (scope IN ('read', 'write'))",
    "ALTER TABLE api_tokens ADD COLUMN expires_at {ts}",
    // Organizer moderation: a hidden project leaves the gallery, a disqualified one the
    // ranking; each carries the reason its team is shown. (A duplicate is `duplicate_of`.)
    "ALTER TABLE projects ADD COLUMN hidden_reason TEXT \
     CHECK (hidden_reason IS NULL OR length(hidden_reason) BETWEEN 1 AND 500)",
    "ALTER TABLE projects ADD COLUMN disqualified_reason TEXT \
     CHECK (disqualified_reason IS NULL OR length(disqualified_reason) BETWEEN 1 AND 500)",
];

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        execute(manager, DDL).await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        let db = manager.get_connection();
        db.execute_unprepared("ALTER TABLE users DROP COLUMN email_confirmed_at")
            .await?;
        db.execute_unprepared("ALTER TABLE teams DROP COLUMN invite_code_expires_at")
            .await?;
        for table in [
            "outbox_messages",
            "email_confirmations",
            "password_resets",
            "invitations",
        ] {
            db.execute_unprepared(&format!("DROP TABLE {table}"))
                .await?;
        }
        db.execute_unprepared("ALTER TABLE events DROP COLUMN registration")
            .await?;
        for column in ["hidden_reason", "disqualified_reason"] {
            db.execute_unprepared(&format!("ALTER TABLE projects DROP COLUMN {column}"))
                .await?;
        }
        for column in ["scope", "expires_at"] {
            db.execute_unprepared(&format!("ALTER TABLE api_tokens DROP COLUMN {column}"))
                .await?;
        }
        Ok(())
    }
}
