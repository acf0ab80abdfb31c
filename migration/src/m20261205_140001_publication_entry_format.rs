//! Salted review commitments in inclusion proofs (issue 27).
//!
//! - `result_publications.entry_format`: how the entries under the publication's Merkle
//!   root spell their reviews. Null on every publication made before this step (a
//!   `verdict.publication.v1` one without a root, or a `verdict.publication.v2` one whose
//!   entries hold each review's plain SHA-256, which anyone who can guess a judge key and
//!   a score can test); 2 on the `verdict.publication.v3` ones made from now on, whose
//!   entries hold a commitment only the holders of the run's inputs can recompute
//!   (`domain::proofs`). Signed with the publication (the document's tag says it); set
//!   once at insert, like every column of this append-only table.

use sea_orm_migration::prelude::*;

use crate::sql::execute;

pub struct Migration;

impl MigrationName for Migration {
    fn name(&self) -> &str {
        "m20261205_140001_publication_entry_format"
    }
}

const DDL: &[&str] = &[
    "ALTER TABLE result_publications ADD COLUMN entry_format INTEGER \
     CHECK (entry_format IS NULL OR entry_format = 2)",
];

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        execute(manager, DDL).await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .get_connection()
            .execute_unprepared("ALTER TABLE result_publications DROP COLUMN entry_format")
            .await?;
        Ok(())
    }
}
