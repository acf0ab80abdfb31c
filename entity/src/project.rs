//! The `projects` table.
use sea_orm::entity::prelude::*;

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "projects")]
pub struct Model {
    #[sea_orm(primary_key)]
    pub id: i64,
    pub public_id: String,
    pub event_id: i64,
    pub team_id: i64,
    pub track_id: i64,
    pub external_id: String,
    pub title: String,
    pub tagline: String,
    pub summary: String,
    pub description: String,
    pub repo_url: String,
    pub demo_url: String,
    /// JSON array of strings.
    pub tags: String,
    pub status: String,
    pub submitted_at: Option<DateTimeUtc>,
    pub duplicate_of: Option<i64>,
    pub created_at: DateTimeUtc,
    pub updated_at: DateTimeUtc,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
