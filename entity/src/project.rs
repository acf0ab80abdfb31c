//! The `projects` table, its status, and the finder for the projects anyone may see.
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
    pub status: ProjectStatus,
    pub submitted_at: Option<DateTimeUtc>,
    pub duplicate_of: Option<i64>,
    pub created_at: DateTimeUtc,
    pub updated_at: DateTimeUtc,
    /// Why the organizers hid it (it left the gallery); null when not hidden.
    pub hidden_reason: Option<String>,
    /// Why the organizers disqualified it (it left the ranking); null when not.
    pub disqualified_reason: Option<String>,
    /// Where the project stands on the expo floor (1 to 16 characters, unique per event
    /// regardless of case); null when it has no table.
    pub expo_table: Option<String>,
}

/// Where a project is in its life. Stored as TEXT with these values (the migration's CHECK
/// lists the same three).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, EnumIter, DeriveActiveEnum)]
#[sea_orm(rs_type = "String", db_type = "Text")]
pub enum ProjectStatus {
    /// Being written; visible to its team and the organizers.
    #[sea_orm(string_value = "draft")]
    Draft,
    /// Submitted for judging; public.
    #[sea_orm(string_value = "submitted")]
    Submitted,
    /// Taken back by its team; visible to its team and the organizers.
    #[sea_orm(string_value = "withdrawn")]
    Withdrawn,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}

impl Entity {
    /// The submitted projects of `event_id`: judging works on them; [`Model::is_public`] is
    /// the same rule for one row.
    pub fn find_public(event_id: i64) -> Select<Entity> {
        Self::find()
            .filter(Column::EventId.eq(event_id))
            .filter(Column::Status.eq(ProjectStatus::Submitted))
    }

    /// The projects of `event_id` that anyone may see in the gallery: the submitted ones
    /// the organizers neither hid nor marked as a duplicate ([`Model::in_gallery`]).
    pub fn find_gallery(event_id: i64) -> Select<Entity> {
        Self::find_public(event_id)
            .filter(Column::HiddenReason.is_null())
            .filter(Column::DuplicateOf.is_null())
    }
}

impl Model {
    /// Whether the project is submitted (see [`Entity::find_public`]).
    pub fn is_public(&self) -> bool {
        self.status == ProjectStatus::Submitted
    }

    /// Whether anyone may see the project (see [`Entity::find_gallery`]).
    pub fn in_gallery(&self) -> bool {
        self.is_public() && self.hidden_reason.is_none() && self.duplicate_of.is_none()
    }
}
