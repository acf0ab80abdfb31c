//! The `calibration_runs` table.
use sea_orm::entity::prelude::*;

#[derive(Clone, Debug, PartialEq, DeriveEntityModel)]
#[sea_orm(table_name = "calibration_runs")]
pub struct Model {
    #[sea_orm(primary_key)]
    pub id: i64,
    pub public_id: String,
    pub event_id: i64,
    pub created_at: DateTimeUtc,
    pub created_by: String,
    pub seed: i64,
    pub bootstrap: i32,
    pub lambda: f64,
    pub engine_version: String,
    pub params: String,
    pub inputs: String,
    pub inputs_hash: String,
    pub result: String,
    pub result_hash: String,
    pub connected: bool,
    pub signature: String,
    pub key_fingerprint: String,
    pub audit_seq: i64,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
