//! The `comparison_skips` table: a project a judge passed over on their pairwise route,
//! with why ("not at the table"); at most one per judge and project.
use sea_orm::entity::prelude::*;

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "comparison_skips")]
pub struct Model {
    #[sea_orm(primary_key)]
    pub id: i64,
    pub public_id: String,
    pub event_id: i64,
    /// The judge's membership (its role is `judge`; the database holds that).
    pub judge_id: i64,
    pub project_id: i64,
    /// The judge's words, 1 to 200 characters.
    pub reason: String,
    pub created_at: DateTimeUtc,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
