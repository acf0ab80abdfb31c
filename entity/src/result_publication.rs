//! The `result_publications` table.
use sea_orm::entity::prelude::*;

#[derive(Clone, Debug, PartialEq, DeriveEntityModel)]
#[sea_orm(table_name = "result_publications")]
pub struct Model {
    #[sea_orm(primary_key)]
    pub id: i64,
    pub public_id: String,
    pub event_id: i64,
    pub run_id: i64,
    pub version: i32,
    pub is_final: bool,
    pub published_at: DateTimeUtc,
    pub published_by: String,
    pub signature: String,
    pub audit_seq: i64,
    /// The RFC 6962 root (hex) over the run's per-project entries, signed with the
    /// publication (`verdict.publication.v2`); None on a `verdict.publication.v1` one.
    pub merkle_root: Option<String>,
    /// How many entries that tree has; None with `merkle_root`.
    pub merkle_size: Option<i64>,
    /// How the tree's entries spell their reviews: None for plain hashes (a v2 publication,
    /// or none on a v1), 2 for salted commitments (`verdict.publication.v3`).
    pub entry_format: Option<i32>,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
