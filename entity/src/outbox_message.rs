//! The `outbox_messages` table: every message Verdict sends, written in the transaction of
//! the change that causes it, delivered after commit by the mail worker.
use sea_orm::entity::prelude::*;

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "outbox_messages")]
pub struct Model {
    #[sea_orm(primary_key)]
    pub id: i64,
    pub public_id: String,
    pub kind: Kind,
    pub event_id: Option<i64>,
    pub invitation_id: Option<i64>,
    pub to_email: String,
    pub subject: String,
    pub body_text: String,
    pub body_html: String,
    pub status: Status,
    pub attempts: i32,
    pub last_error: Option<String>,
    pub next_attempt_at: DateTimeUtc,
    pub created_at: DateTimeUtc,
    pub sent_at: Option<DateTimeUtc>,
}

/// What a message is. Invitations are readable by their event's organizers; the others
/// carry someone else's secret and are read only by the operator on the server machine.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, EnumIter, DeriveActiveEnum)]
#[sea_orm(rs_type = "String", db_type = "Text")]
pub enum Kind {
    #[sea_orm(string_value = "invitation")]
    Invitation,
    #[sea_orm(string_value = "password_reset")]
    PasswordReset,
    #[sea_orm(string_value = "email_confirmation")]
    EmailConfirmation,
    /// The notice to an account's old address that its email was changed.
    #[sea_orm(string_value = "email_changed")]
    EmailChanged,
}

/// Where a message is in its delivery.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, EnumIter, DeriveActiveEnum)]
#[sea_orm(rs_type = "String", db_type = "Text")]
pub enum Status {
    /// Waiting for the worker (or for someone to copy its link, without SMTP).
    #[sea_orm(string_value = "pending")]
    Pending,
    /// Accepted by the SMTP server.
    #[sea_orm(string_value = "sent")]
    Sent,
    /// Given up on after the last attempt; `last_error` says why.
    #[sea_orm(string_value = "failed")]
    Failed,
    /// No longer to be sent: its invitation was revoked or renewed.
    #[sea_orm(string_value = "cancelled")]
    Cancelled,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
