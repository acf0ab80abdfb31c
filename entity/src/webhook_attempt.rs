//! The `webhook_attempts` table: each attempt at a delivery, with the receiver's status
//! code or the error (truncated).
use sea_orm::entity::prelude::*;

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "webhook_attempts")]
pub struct Model {
    #[sea_orm(primary_key)]
    pub id: i64,
    pub delivery_id: i64,
    pub attempt: i32,
    pub started_at: DateTimeUtc,
    pub duration_ms: i64,
    pub status_code: Option<i32>,
    pub error: Option<String>,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
