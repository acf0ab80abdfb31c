//! The `invitations` table: a single-use link for one person to take one role in one event.
use sea_orm::entity::prelude::*;

use crate::membership::Role;

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "invitations")]
pub struct Model {
    #[sea_orm(primary_key)]
    pub id: i64,
    pub public_id: String,
    pub event_id: i64,
    pub email: String,
    pub role: Role,
    /// SHA-256 (hex) of the link's token; the token itself is never stored.
    pub token_hash: String,
    /// The public id of the organizer who invited (empty for the command line).
    pub created_by: String,
    pub created_at: DateTimeUtc,
    pub expires_at: DateTimeUtc,
    pub redeemed_at: Option<DateTimeUtc>,
    pub redeemed_by: Option<i64>,
    pub revoked_at: Option<DateTimeUtc>,
    /// For a team's invitation (a participant's link to join one team): the team.
    pub team_id: Option<i64>,
}

/// Where an invitation is in its life, at a given time.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum InvitationStatus {
    Pending,
    Redeemed,
    Expired,
    Revoked,
}

impl InvitationStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            InvitationStatus::Pending => "pending",
            InvitationStatus::Redeemed => "redeemed",
            InvitationStatus::Expired => "expired",
            InvitationStatus::Revoked => "revoked",
        }
    }
}

impl Model {
    /// The invitation's status at `now`.
    pub fn status(&self, now: DateTimeUtc) -> InvitationStatus {
        if self.redeemed_at.is_some() {
            InvitationStatus::Redeemed
        } else if self.revoked_at.is_some() {
            InvitationStatus::Revoked
        } else if self.expires_at <= now {
            InvitationStatus::Expired
        } else {
            InvitationStatus::Pending
        }
    }
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
