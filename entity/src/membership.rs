//! The `memberships` table: a person's role in one event, and the finders for the holders
//! of a role.
use sea_orm::entity::prelude::*;

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "memberships")]
pub struct Model {
    #[sea_orm(primary_key)]
    pub id: i64,
    pub public_id: String,
    pub user_id: i64,
    pub event_id: i64,
    pub role: Role,
    pub external_id: Option<String>,
    /// JSON array of track ids (internal) this judge covers; empty means any track.
    pub judge_tracks: String,
    pub created_at: DateTimeUtc,
}

/// A person's role in one event. Roles are per event; the only global role is site admin.
/// Stored as TEXT with these values (the migration's CHECK lists the same three).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, EnumIter, DeriveActiveEnum)]
#[sea_orm(rs_type = "String", db_type = "Text")]
pub enum Role {
    #[sea_orm(string_value = "participant")]
    Participant,
    #[sea_orm(string_value = "judge")]
    Judge,
    #[sea_orm(string_value = "organizer")]
    Organizer,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}

impl Entity {
    /// The memberships holding `role` in `event_id`.
    pub fn find_in_role(event_id: i64, role: Role) -> Select<Entity> {
        Self::find()
            .filter(Column::EventId.eq(event_id))
            .filter(Column::Role.eq(role))
    }

    /// The judges of `event_id`.
    pub fn find_judges(event_id: i64) -> Select<Entity> {
        Self::find_in_role(event_id, Role::Judge)
    }

    /// The organizers of `event_id`.
    pub fn find_organizers(event_id: i64) -> Select<Entity> {
        Self::find_in_role(event_id, Role::Organizer)
    }
}
