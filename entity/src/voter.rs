//! The `voters` table: one per (campaign, account) and per (campaign, normalized address).
//! An account voter has `user_id`; an email voter proves the address with a single-use
//! link (`confirm_token_hash`) and then votes with a key (`key_hash`). Tokens and keys are
//! stored only as hashes.
use sea_orm::entity::prelude::*;

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "voters")]
pub struct Model {
    #[sea_orm(primary_key)]
    pub id: i64,
    pub public_id: String,
    pub campaign_id: i64,
    pub user_id: Option<i64>,
    /// The normalized address (see `domain::voting::normalize_email`): the identity.
    pub email: String,
    /// The address as given (lowercased): where the confirmation goes.
    pub address: String,
    pub confirm_token_hash: Option<String>,
    pub confirm_expires_at: Option<DateTimeUtc>,
    pub key_hash: Option<String>,
    pub confirmed_at: Option<DateTimeUtc>,
    /// The budget, copied from the campaign (the schema holds `spent <= credits`).
    pub credits: i32,
    pub spent: i32,
    pub created_at: DateTimeUtc,
    pub updated_at: DateTimeUtc,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
