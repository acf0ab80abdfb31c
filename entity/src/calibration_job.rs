//! The `calibration_jobs` table: a calibration computing in the background. Running while
//! `finished_at` is null; then either `run_id` (the run it stored) or `error` is set.
use sea_orm::entity::prelude::*;

#[derive(Clone, Debug, PartialEq, DeriveEntityModel)]
#[sea_orm(table_name = "calibration_jobs")]
pub struct Model {
    #[sea_orm(primary_key)]
    pub id: i64,
    pub public_id: String,
    pub event_id: i64,
    /// The organizer who started it (public id); the run is stored in their name.
    pub requested_by: String,
    pub seed: i64,
    pub bootstrap: i32,
    /// The server process computing it (`Db::origin`).
    pub origin: String,
    pub created_at: DateTimeUtc,
    pub finished_at: Option<DateTimeUtc>,
    pub run_id: Option<i64>,
    pub error: Option<String>,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
