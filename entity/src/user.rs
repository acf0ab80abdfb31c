//! The `users` table.
use sea_orm::entity::prelude::*;

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "users")]
pub struct Model {
    #[sea_orm(primary_key)]
    pub id: i64,
    pub public_id: String,
    pub email: String,
    pub display_name: String,
    pub password_hash: Option<String>,
    pub is_site_admin: bool,
    pub created_at: DateTimeUtc,
    /// When the owner proved the address is theirs (a link sent to it); null until then.
    /// Unconfirmed accounts can sign in, but no role is granted to them by email.
    pub email_confirmed_at: Option<DateTimeUtc>,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
