//! The `votes` table: a voter's votes on one project of the campaign's event (1 to 100;
//! a project with none has no row). Replaced whole on every cast.
use sea_orm::entity::prelude::*;

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "votes")]
pub struct Model {
    #[sea_orm(primary_key, auto_increment = false)]
    pub voter_id: i64,
    pub event_id: i64,
    #[sea_orm(primary_key, auto_increment = false)]
    pub project_id: i64,
    pub votes: i32,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
