//! The `judge_sign_ins` table: a judge's standing sign-in link and short code, per judge
//! membership. Only hashes are stored; a reissue revokes the old row and inserts a new one.
use sea_orm::entity::prelude::*;

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "judge_sign_ins")]
pub struct Model {
    #[sea_orm(primary_key)]
    pub id: i64,
    pub event_id: i64,
    /// The judge membership it signs in as; no foreign key, so the row outlives a removed
    /// role and its link can say why it stopped working.
    pub membership_id: i64,
    pub user_id: i64,
    /// SHA-256 (hex) of the link's token.
    pub token_hash: String,
    /// SHA-256 (hex) of the short code, normalized (upper case, no separators).
    pub code_hash: String,
    pub created_at: DateTimeUtc,
    pub last_used_at: Option<DateTimeUtc>,
    pub revoked_at: Option<DateTimeUtc>,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
