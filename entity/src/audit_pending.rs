//! The `audit_pending` table: audit entries committed with their write and not yet given
//! their place on the chain (`server/src/audit/sequencer.rs`).
use sea_orm::entity::prelude::*;

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "audit_pending")]
pub struct Model {
    #[sea_orm(primary_key)]
    pub id: i64,
    /// The committing process (`Db::origin`), announced with the entry once sequenced.
    pub origin: String,
    pub occurred_at: String,
    pub actor: String,
    pub event: String,
    pub action: String,
    pub object_type: String,
    pub object_id: String,
    pub payload: String,
    pub payload_hash: String,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
