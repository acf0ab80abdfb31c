//! The `audit_events` table.
use sea_orm::entity::prelude::*;

/// Serializable: result bundles carry audit rows as they are stored.
#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel, serde::Serialize, serde::Deserialize)]
#[sea_orm(table_name = "audit_events")]
pub struct Model {
    #[sea_orm(primary_key, auto_increment = false)]
    pub seq: i64,
    pub occurred_at: String,
    pub actor: String,
    pub event: String,
    pub action: String,
    pub object_type: String,
    pub object_id: String,
    pub payload: String,
    pub payload_hash: String,
    pub prev_hash: String,
    pub row_hash: String,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
