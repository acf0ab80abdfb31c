//! The `webhook_deliveries` table: one audit event for one webhook, written by the audit
//! append in the business transaction and sent by the webhook worker after commit. `body`
//! is the exact JSON that is signed and sent.
use sea_orm::entity::prelude::*;

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "webhook_deliveries")]
pub struct Model {
    #[sea_orm(primary_key)]
    pub id: i64,
    pub public_id: String,
    pub webhook_id: i64,
    pub seq: i64,
    pub action: String,
    pub body: String,
    pub status: DeliveryStatus,
    pub attempts: i32,
    pub next_attempt_at: DateTimeUtc,
    /// Set while a worker holds the delivery; another worker leaves it until then.
    pub lease_until: Option<DateTimeUtc>,
    pub last_status: Option<i32>,
    pub last_error: Option<String>,
    pub created_at: DateTimeUtc,
    pub delivered_at: Option<DateTimeUtc>,
}

/// Where a delivery is.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, EnumIter, DeriveActiveEnum)]
#[sea_orm(rs_type = "String", db_type = "Text")]
pub enum DeliveryStatus {
    /// Waiting for its next attempt.
    #[sea_orm(string_value = "pending")]
    Pending,
    /// The receiver answered 2xx.
    #[sea_orm(string_value = "delivered")]
    Delivered,
    /// Given up on after the last attempt (an organizer may retry it).
    #[sea_orm(string_value = "failed")]
    Failed,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
