//! The `result_publications` table.
use sea_orm::entity::prelude::*;

#[derive(Clone, Debug, PartialEq, DeriveEntityModel)]
#[sea_orm(table_name = "result_publications")]
pub struct Model {
    #[sea_orm(primary_key)]
    pub id: i64,
    pub public_id: String,
    pub event_id: i64,
    pub run_id: i64,
    pub version: i32,
    pub is_final: bool,
    pub published_at: DateTimeUtc,
    pub published_by: String,
    pub signature: String,
    pub audit_seq: i64,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
