//! The `review_revisions` table.
use sea_orm::entity::prelude::*;

#[derive(Clone, Debug, PartialEq, DeriveEntityModel)]
#[sea_orm(table_name = "review_revisions")]
pub struct Model {
    #[sea_orm(primary_key)]
    pub id: i64,
    pub review_id: i64,
    pub version: i32,
    pub scores: String,
    pub comment: String,
    pub submitted: bool,
    pub created_at: DateTimeUtc,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
