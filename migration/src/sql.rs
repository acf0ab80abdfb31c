//! The few places where SQLite and PostgreSQL spell DDL differently.

use sea_orm_migration::sea_orm::DbBackend;

/// Column types that differ between the backends, substituted into the DDL text:
/// `{pk}` a surrogate 64-bit primary key, `{ts}` a UTC timestamp.
pub fn render(backend: DbBackend, ddl: &str) -> String {
    let (pk, ts) = match backend {
        DbBackend::Postgres => ("BIGSERIAL PRIMARY KEY", "TIMESTAMPTZ"),
        _ => ("INTEGER PRIMARY KEY AUTOINCREMENT", "TEXT"),
    };
    ddl.replace("{pk}", pk).replace("{ts}", ts)
}
