//! The `comments` table: one comment in a project's thread, by its author, with the
//! organizers' soft hide (`hidden_at`, `hidden_reason` and `hidden_by` set together).
use sea_orm::entity::prelude::*;

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "comments")]
pub struct Model {
    #[sea_orm(primary_key)]
    pub id: i64,
    pub public_id: String,
    pub event_id: i64,
    pub project_id: i64,
    pub author_id: i64,
    /// Trimmed, 1 to 2,000 characters, stored verbatim: plain text, never markup.
    pub body: String,
    pub created_at: DateTimeUtc,
    /// When an organizer hid it; null while it is shown.
    pub hidden_at: Option<DateTimeUtc>,
    /// Why it was hidden (1 to 500 characters); null while it is shown.
    pub hidden_reason: Option<String>,
    /// The user who hid it; null while it is shown.
    pub hidden_by: Option<i64>,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}

impl Model {
    /// Whether an organizer hid it.
    pub fn is_hidden(&self) -> bool {
        self.hidden_at.is_some()
    }
}
