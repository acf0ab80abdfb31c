//! The `reviews` table.
use sea_orm::entity::prelude::*;

#[derive(Clone, Debug, PartialEq, DeriveEntityModel)]
#[sea_orm(table_name = "reviews")]
pub struct Model {
    #[sea_orm(primary_key)]
    pub id: i64,
    pub public_id: String,
    pub event_id: i64,
    pub assignment_id: i64,
    pub judge_id: i64,
    pub project_id: i64,
    /// JSON object: criterion key to integer score.
    pub scores: String,
    pub comment: String,
    pub submitted: bool,
    pub submitted_at: Option<DateTimeUtc>,
    pub version: i32,
    pub created_at: DateTimeUtc,
    pub updated_at: DateTimeUtc,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
