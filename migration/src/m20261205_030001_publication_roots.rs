//! Inclusion proofs (issue 27): a publication's Merkle root.
//!
//! - `result_publications.merkle_root`: the RFC 6962 root (lower-case hex SHA-256) over the
//!   published run's per-project entries, and `merkle_size` the number of entries. Both
//!   are signed with the publication (`verdict.publication.v2`). Both are null on a
//!   publication made before this step: its signature is the `verdict.publication.v1` one
//!   and it keeps verifying as that; it has no inclusion proofs. Set once at insert, like
//!   every column of this append-only table.

use sea_orm_migration::prelude::*;

use crate::sql::execute;

pub struct Migration;

impl MigrationName for Migration {
    fn name(&self) -> &str {
        "m20261205_030001_publication_roots"
    }
}

const DDL: &[&str] = &[
    "ALTER TABLE result_publications ADD COLUMN merkle_root TEXT \
     CHECK (merkle_root IS NULL OR length(merkle_root) = 64)",
    "ALTER TABLE result_publications ADD COLUMN merkle_size BIGINT \
     CHECK (merkle_size IS NULL OR merkle_size >= 0)",
];

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        execute(manager, DDL).await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        let db = manager.get_connection();
        for ddl in [
            "ALTER TABLE result_publications DROP COLUMN merkle_size",
            "ALTER TABLE result_publications DROP COLUMN merkle_root",
        ] {
            db.execute_unprepared(ddl).await?;
        }
        Ok(())
    }
}
