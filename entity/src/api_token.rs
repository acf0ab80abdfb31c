//! The `api_tokens` table.
use sea_orm::entity::prelude::*;

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "api_tokens")]
pub struct Model {
    #[sea_orm(primary_key)]
    pub id: i64,
    pub public_id: String,
    pub user_id: i64,
    pub label: String,
    pub prefix: String,
    pub token_hash: String,
    pub created_at: DateTimeUtc,
    pub last_used_at: Option<DateTimeUtc>,
    pub revoked_at: Option<DateTimeUtc>,
    pub scope: TokenScope,
    /// When the token stops working; never when null.
    pub expires_at: Option<DateTimeUtc>,
}

/// What a personal API token may do. Stored as TEXT with these values (the people
/// migration's CHECK lists the same two).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, EnumIter, DeriveActiveEnum)]
#[sea_orm(rs_type = "String", db_type = "Text")]
pub enum TokenScope {
    /// Queries and subscriptions only: a dashboard's token.
    #[sea_orm(string_value = "read")]
    Read,
    /// Everything its owner may do.
    #[sea_orm(string_value = "write")]
    Write,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
