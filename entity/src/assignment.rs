//! The `assignments` table: one judge on one project, with where it came from and how far
//! the judge has got.
use sea_orm::entity::prelude::*;

#[derive(Clone, Debug, PartialEq, DeriveEntityModel)]
#[sea_orm(table_name = "assignments")]
pub struct Model {
    #[sea_orm(primary_key)]
    pub id: i64,
    pub public_id: String,
    pub event_id: i64,
    /// The judge's membership.
    pub judge_id: i64,
    pub project_id: i64,
    pub status: AssignmentStatus,
    pub source: AssignmentSource,
    pub created_at: DateTimeUtc,
}

/// How far the judge has got. Stored as TEXT with these values (the migration's CHECK lists
/// the same three).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, EnumIter, DeriveActiveEnum)]
#[sea_orm(rs_type = "String", db_type = "Text")]
pub enum AssignmentStatus {
    /// Not reviewed yet (a saved draft review still counts as pending).
    #[sea_orm(string_value = "pending")]
    Pending,
    /// The judge submitted their review.
    #[sea_orm(string_value = "done")]
    Done,
    /// The judge is recused from the project's team; the assignment no longer counts.
    #[sea_orm(string_value = "recused")]
    Recused,
}

/// Who made the assignment. Stored as TEXT with these values (the migration's CHECK lists
/// the same three).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, EnumIter, DeriveActiveEnum)]
#[sea_orm(rs_type = "String", db_type = "Text")]
pub enum AssignmentSource {
    /// A review that arrived with an imported fixture.
    #[sea_orm(string_value = "import")]
    Import,
    /// The assignment planner.
    #[sea_orm(string_value = "auto")]
    Auto,
    /// An organizer, one judge to one project.
    #[sea_orm(string_value = "manual")]
    Manual,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
