//! The `events` table.
use sea_orm::entity::prelude::*;

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "events")]
pub struct Model {
    #[sea_orm(primary_key)]
    pub id: i64,
    pub public_id: String,
    pub external_id: String,
    pub slug: String,
    pub name: String,
    pub submissions_open: DateTimeUtc,
    pub submissions_close: DateTimeUtc,
    pub judging_open: Option<DateTimeUtc>,
    pub judging_close: Option<DateTimeUtc>,
    pub voting_open: Option<DateTimeUtc>,
    pub voting_close: Option<DateTimeUtc>,
    pub reviews_per_project: i32,
    pub max_team_size: i32,
    pub created_at: DateTimeUtc,
    pub comments_to_teams: bool,
    pub registration: Registration,
    /// An IANA time zone name (`Europe/Berlin`); deadlines are stored in UTC.
    pub time_zone: String,
    /// When the event was deleted (`deleteEvent`): an archived event is hidden from every
    /// query and mutation, and its slug was freed.
    pub archived_at: Option<DateTimeUtc>,
    /// How judges judge: by rubric scores, by comparing pairs of projects, or both. Fixed
    /// once judging opens.
    pub judging_mode: JudgingMode,
}

/// How an event's judges judge (`Event.judgingMode`). Stored as TEXT with these values (the
/// pairwise migration's CHECK lists the same three); new events judge by scores.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, EnumIter, DeriveActiveEnum)]
#[sea_orm(rs_type = "String", db_type = "Text")]
pub enum JudgingMode {
    /// Rubric scores only (`saveReview`).
    #[sea_orm(string_value = "scores")]
    Scores,
    /// Comparisons of two projects only (`compareProjects`).
    #[sea_orm(string_value = "pairwise")]
    Pairwise,
    /// Both scores and comparisons.
    #[sea_orm(string_value = "both")]
    Both,
}

/// Who may register for an event as a participant (`registerForEvent`). Stored as TEXT with
/// these values (the people migration's CHECK lists the same three).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, EnumIter, DeriveActiveEnum)]
#[sea_orm(rs_type = "String", db_type = "Text")]
pub enum Registration {
    #[sea_orm(string_value = "open")]
    Open,
    #[sea_orm(string_value = "invite_only")]
    InviteOnly,
    #[sea_orm(string_value = "closed")]
    Closed,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
