//! The `vote_campaigns` table: an event's community vote (at most one), its mode and its
//! quadratic budget. The window is the event's voting window; the tally is published once,
//! after it closed.
use sea_orm::entity::prelude::*;

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "vote_campaigns")]
pub struct Model {
    #[sea_orm(primary_key)]
    pub id: i64,
    pub public_id: String,
    pub event_id: i64,
    pub mode: VotingMode,
    /// Vote credits per voter: n votes on one project cost n².
    pub credits: i32,
    pub tally_published_at: Option<DateTimeUtc>,
    /// The published tally (JSON rows), written once with `tally_published_at`.
    pub tally: Option<String>,
    pub created_at: DateTimeUtc,
    pub updated_at: DateTimeUtc,
}

/// Who may vote. Stored as TEXT with these values (the migration's CHECK lists the same).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, EnumIter, DeriveActiveEnum)]
#[sea_orm(rs_type = "String", db_type = "Text")]
pub enum VotingMode {
    /// Signed-in accounts.
    #[sea_orm(string_value = "account")]
    Account,
    /// Anyone who confirms an email address.
    #[sea_orm(string_value = "email")]
    Email,
    /// Only the addresses the organizers listed, once confirmed.
    #[sea_orm(string_value = "email_allowlist")]
    EmailAllowlist,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
