//! The `prizes` table: an award of an event, overall (`track_id` null) or within a track,
//! at a ranking position (0 = a special award), with the winner organizers assigned, if any.
use sea_orm::entity::prelude::*;

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "prizes")]
pub struct Model {
    #[sea_orm(primary_key)]
    pub id: i64,
    pub public_id: String,
    pub event_id: i64,
    pub track_id: Option<i64>,
    pub name: String,
    pub description: String,
    pub position: i32,
    pub winner_project_id: Option<i64>,
    pub created_at: DateTimeUtc,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
