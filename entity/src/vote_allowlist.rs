//! The `vote_allowlist` table: the normalized addresses that may vote in an
//! `email_allowlist` campaign.
use sea_orm::entity::prelude::*;

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "vote_allowlist")]
pub struct Model {
    #[sea_orm(primary_key, auto_increment = false)]
    pub campaign_id: i64,
    #[sea_orm(primary_key, auto_increment = false)]
    pub email: String,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
