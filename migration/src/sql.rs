//! The few places where SQLite and PostgreSQL spell DDL differently.

use sea_orm_migration::prelude::{DbErr, SchemaManager};
use sea_orm_migration::sea_orm::{ConnectionTrait, DbBackend};

/// Runs each statement, [`render`]ed for the manager's backend, in order: the body of
/// every migration step's `up`.
pub async fn execute<S: AsRef<str>>(
    manager: &SchemaManager<'_>,
    statements: impl IntoIterator<Item = S>,
) -> Result<(), DbErr> {
    let backend = manager.get_database_backend();
    let db = manager.get_connection();
    for ddl in statements {
        db.execute_unprepared(&render(backend, ddl.as_ref()))
            .await?;
    }
    Ok(())
}

/// Column types that differ between the backends, substituted into the DDL text:
/// `{pk}` a surrogate 64-bit primary key, `{ts}` a UTC timestamp, `{real}` a double.
pub fn render(backend: DbBackend, ddl: &str) -> String {
    let (pk, ts, real) = match backend {
        DbBackend::Postgres => ("BIGSERIAL PRIMARY KEY", "TIMESTAMPTZ", "DOUBLE PRECISION"),
        _ => ("INTEGER PRIMARY KEY AUTOINCREMENT", "TEXT", "REAL"),
    };
    ddl.replace("{pk}", pk)
        .replace("{ts}", ts)
        .replace("{real}", real)
}

/// Statements that make `table` append-only: rows can be inserted, never updated or
/// deleted. `verdict_audit_refuse()` is created by the core migration on PostgreSQL.
pub fn append_only(backend: DbBackend, table: &str) -> Vec<String> {
    match backend {
        DbBackend::Postgres => vec![
            format!(
                "CREATE TRIGGER {table}_append_only BEFORE UPDATE OR DELETE ON {table} FOR EACH ROW EXECUTE FUNCTION verdict_audit_refuse()"
            ),
            format!(
                "CREATE TRIGGER {table}_no_truncate BEFORE TRUNCATE ON {table} FOR EACH STATEMENT EXECUTE FUNCTION verdict_audit_refuse()"
            ),
        ],
        _ => vec![
            format!(
                "CREATE TRIGGER {table}_no_update BEFORE UPDATE ON {table} BEGIN SELECT RAISE(ABORT, 'verdict: {table} is append-only'); END"
            ),
            format!(
                "CREATE TRIGGER {table}_no_delete BEFORE DELETE ON {table} BEGIN SELECT RAISE(ABORT, 'verdict: {table} is append-only'); END"
            ),
        ],
    }
}
