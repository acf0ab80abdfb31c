//! A judge's standing sign-in (issue 28): per judge membership, a link
//! `{public-url}/judge-sign-in/{token}` and a short code typed with the event's slug, both
//! stored as SHA-256 hashes only. Organizers issue, reissue (the old row is revoked, a new
//! one inserted) and revoke them; at most one live row per membership.
//!
//! `membership_id` has no foreign key on purpose: removing a judge's role deletes the
//! membership row, and the sign-in row stays so its link can say why it stopped working.
//!
//! `sessions.judge_membership_id` marks a session started by such a link or code: it acts
//! only as that judge in that event, and no account-level change (password, email, API
//! tokens) runs on it.

use sea_orm_migration::prelude::*;

use crate::sql::execute;

pub struct Migration;

impl MigrationName for Migration {
    fn name(&self) -> &str {
        "m20261204_190101_judge_sign_ins"
    }
}

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        execute(
            manager,
            [
                "CREATE TABLE judge_sign_ins (
                    id {pk},
                    event_id BIGINT NOT NULL REFERENCES events(id) ON DELETE CASCADE,
                    membership_id BIGINT NOT NULL,
                    user_id BIGINT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                    token_hash TEXT NOT NULL UNIQUE,
                    code_hash TEXT NOT NULL,
                    created_at {ts} NOT NULL,
                    last_used_at {ts},
                    revoked_at {ts}
                )",
                "CREATE UNIQUE INDEX judge_sign_ins_event_code ON judge_sign_ins (event_id, code_hash)",
                "CREATE INDEX judge_sign_ins_membership ON judge_sign_ins (membership_id)",
                "ALTER TABLE sessions ADD COLUMN judge_membership_id BIGINT",
                "CREATE INDEX sessions_judge_membership ON sessions (judge_membership_id)",
            ],
        )
        .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        let db = manager.get_connection();
        db.execute_unprepared("DROP INDEX sessions_judge_membership")
            .await?;
        db.execute_unprepared("ALTER TABLE sessions DROP COLUMN judge_membership_id")
            .await?;
        db.execute_unprepared("DROP TABLE judge_sign_ins").await?;
        Ok(())
    }
}
