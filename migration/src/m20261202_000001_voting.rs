//! Community voting (issue 12): one campaign per event with its mode and quadratic budget
//! (its window is the event's voting window), the organizer's allowlist, the voters and
//! their allocations. Identity is accounted for by the schema: one voter per (campaign,
//! account) and per (campaign, normalized address); a voter never spends more than their
//! budget; a vote names a project of the campaign's event. The tally is stored once, when
//! it is published.

use sea_orm_migration::prelude::*;

use crate::sql::execute;

pub struct Migration;

impl MigrationName for Migration {
    fn name(&self) -> &str {
        "m20261202_000001_voting"
    }
}

const DDL: &[&str] = &[
    r#"CREATE TABLE vote_campaigns (
        id {pk},
        public_id TEXT NOT NULL UNIQUE,
        event_id BIGINT NOT NULL UNIQUE REFERENCES events(id),
        mode TEXT NOT NULL CHECK (mode IN ('account', 'email', 'email_allowlist')),
        credits INTEGER NOT NULL CHECK (credits BETWEEN 1 AND 10000),
        tally_published_at {ts},
        tally TEXT,
        created_at {ts} NOT NULL,
        updated_at {ts} NOT NULL,
        CHECK ((tally IS NULL) = (tally_published_at IS NULL))
    )"#,
    r#"CREATE TABLE vote_allowlist (
        campaign_id BIGINT NOT NULL REFERENCES vote_campaigns(id),
        email TEXT NOT NULL CHECK (length(email) BETWEEN 3 AND 320),
        PRIMARY KEY (campaign_id, email)
    )"#,
    r#"CREATE TABLE voters (
        id {pk},
        public_id TEXT NOT NULL UNIQUE,
        campaign_id BIGINT NOT NULL REFERENCES vote_campaigns(id),
        user_id BIGINT REFERENCES users(id),
        email TEXT NOT NULL CHECK (length(email) BETWEEN 3 AND 320),
        address TEXT NOT NULL CHECK (length(address) BETWEEN 3 AND 320),
        confirm_token_hash TEXT UNIQUE,
        confirm_expires_at {ts},
        key_hash TEXT UNIQUE,
        confirmed_at {ts},
        credits INTEGER NOT NULL CHECK (credits >= 1),
        spent INTEGER NOT NULL CHECK (spent >= 0 AND spent <= credits),
        created_at {ts} NOT NULL,
        updated_at {ts} NOT NULL,
        UNIQUE (campaign_id, email),
        UNIQUE (campaign_id, user_id),
        CHECK (user_id IS NOT NULL OR confirmed_at IS NOT NULL OR confirm_token_hash IS NOT NULL),
        CHECK (key_hash IS NULL OR confirmed_at IS NOT NULL)
    )"#,
    r#"CREATE TABLE votes (
        voter_id BIGINT NOT NULL REFERENCES voters(id),
        event_id BIGINT NOT NULL,
        project_id BIGINT NOT NULL,
        votes INTEGER NOT NULL CHECK (votes BETWEEN 1 AND 100),
        PRIMARY KEY (voter_id, project_id),
        FOREIGN KEY (event_id, project_id) REFERENCES projects(event_id, id)
    )"#,
    "CREATE INDEX votes_event ON votes(event_id, project_id)",
];

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        execute(manager, DDL).await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        for table in ["votes", "voters", "vote_allowlist", "vote_campaigns"] {
            manager
                .get_connection()
                .execute_unprepared(&format!("DROP TABLE {table}"))
                .await?;
        }
        Ok(())
    }
}
