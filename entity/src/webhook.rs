//! The `webhooks` table: an event's endpoint. `secret` signs every delivery (HMAC-SHA256),
//! so it is stored to be used, and shown to the organizers only once, when registered.
//! `actions` is a JSON array of action prefixes (empty: every action).
use sea_orm::entity::prelude::*;

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "webhooks")]
pub struct Model {
    #[sea_orm(primary_key)]
    pub id: i64,
    pub public_id: String,
    pub event_id: i64,
    pub url: String,
    pub secret: String,
    pub actions: String,
    pub active: bool,
    pub created_by: Option<i64>,
    pub created_at: DateTimeUtc,
    pub updated_at: DateTimeUtc,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
