//! "Nothing was written", read from the database itself: a [`Snapshot`] holds, for every
//! table of the schema, its row count and a digest of its rows, so that an insert, a
//! delete or an update anywhere (the audit chain included) shows up as a changed table.
//!
//! A few tables change on their own, without any request: the mail worker updates its
//! outbox rows, the webhook worker its deliveries and their attempts, a calibration job its
//! progress, and an API token its last use (to the minute). Of those only the row count is
//! compared (`webhook_attempts`, which the worker inserts into, not even that); a write to
//! them by a request is still caught by the audit chain, which every write appends to.

use std::collections::BTreeMap;

use sea_orm::{ConnectionTrait, Database, DatabaseConnection, DbBackend, Statement};
use sha2::{Digest, Sha256};

use super::App;

/// Tables whose rows background workers update: only their row count is compared.
const COUNT_ONLY: &[&str] = &[
    "outbox_messages",
    "webhook_deliveries",
    "calibration_jobs",
    "api_tokens",
];

/// Tables a background worker inserts into: not compared at all.
const IGNORED: &[&str] = &["webhook_attempts", "seaql_migrations"];

/// Every table's row count and (unless [`COUNT_ONLY`]) the digest of its rows.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Snapshot {
    tables: BTreeMap<String, (i64, Option<String>)>,
}

impl Snapshot {
    /// The tables that differ from `before`, each with its row counts, except `allowed`.
    pub fn changed_since(&self, before: &Snapshot, allowed: &[&str]) -> Vec<String> {
        let names: std::collections::BTreeSet<&String> =
            self.tables.keys().chain(before.tables.keys()).collect();
        names
            .into_iter()
            .filter(|name| !allowed.contains(&name.as_str()))
            .filter_map(|name| {
                let (old, new) = (before.tables.get(name), self.tables.get(name));
                (old != new).then(|| {
                    let count = |t: Option<&(i64, Option<String>)>| t.map_or(-1, |(n, _)| *n);
                    format!("{name} ({} -> {} rows)", count(old), count(new))
                })
            })
            .collect()
    }
}

/// A connection of the test's own to the server's database, for snapshots.
pub struct Probe {
    conn: DatabaseConnection,
}

impl App {
    /// Opens a [`Probe`] on this app's database.
    pub async fn probe(&self) -> Probe {
        let mut opt = sea_orm::ConnectOptions::new(self.db.url().to_string());
        opt.max_connections(1).sqlx_logging(false);
        let conn = Database::connect(opt)
            .await
            .unwrap_or_else(|e| panic!("connect to {}: {e}", self.db.url()));
        Probe { conn }
    }
}

impl Probe {
    fn backend(&self) -> DbBackend {
        self.conn.get_database_backend()
    }

    async fn texts(&self, sql: String) -> Vec<String> {
        let rows = self
            .conn
            .query_all_raw(Statement::from_string(self.backend(), sql.clone()))
            .await
            .unwrap_or_else(|e| panic!("{sql}: {e}"));
        rows.iter()
            .map(|r| {
                r.try_get_by_index::<Option<String>>(0)
                    .unwrap_or_else(|e| panic!("{sql}: {e}"))
                    .unwrap_or_default()
            })
            .collect()
    }

    /// Runs `sql` (a test's own change to the database, such as a trigger that fails).
    pub async fn execute(&self, sql: &str) {
        self.conn
            .execute_unprepared(sql)
            .await
            .unwrap_or_else(|e| panic!("{sql}: {e}"));
    }

    /// Every table of the schema, now.
    pub async fn snapshot(&self) -> Snapshot {
        let list = match self.backend() {
            DbBackend::Postgres => {
                "SELECT tablename::text FROM pg_tables WHERE schemaname = 'public' ORDER BY 1"
            }
            _ => {
                "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY 1"
            }
        };
        let mut tables = BTreeMap::new();
        for name in self.texts(list.to_string()).await {
            if IGNORED.contains(&name.as_str()) {
                continue;
            }
            let rows = self.rows(&name).await;
            let digest = (!COUNT_ONLY.contains(&name.as_str())).then(|| {
                let mut sorted = rows.clone();
                sorted.sort();
                hex::encode(Sha256::digest(sorted.join("\n").as_bytes()))
            });
            tables.insert(name, (rows.len() as i64, digest));
        }
        assert!(
            tables.len() >= 25,
            "the snapshot found too few tables: {:?}",
            tables.keys()
        );
        Snapshot { tables }
    }

    /// The rows of `table`, each as one text.
    async fn rows(&self, table: &str) -> Vec<String> {
        match self.backend() {
            DbBackend::Postgres => {
                self.texts(format!("SELECT t::text FROM \"{table}\" t"))
                    .await
            }
            _ => {
                let columns = self
                    .texts(format!("SELECT name FROM pragma_table_info('{table}')"))
                    .await;
                let row = columns
                    .iter()
                    .map(|c| format!("quote(\"{c}\")"))
                    .collect::<Vec<_>>()
                    .join(" || ',' || ");
                self.texts(format!("SELECT {row} FROM \"{table}\"")).await
            }
        }
    }

    /// The tables of the schema (but [`IGNORED`]) any of whose rows holds `needle`, each
    /// with how many rows do: where a value that should be gone is still stored.
    pub async fn tables_holding(&self, needle: &str) -> Vec<String> {
        let list = match self.backend() {
            DbBackend::Postgres => {
                "SELECT tablename::text FROM pg_tables WHERE schemaname = 'public' ORDER BY 1"
            }
            _ => {
                "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY 1"
            }
        };
        let mut found = Vec::new();
        for name in self.texts(list.to_string()).await {
            if IGNORED.contains(&name.as_str()) {
                continue;
            }
            let n = self
                .rows(&name)
                .await
                .iter()
                .filter(|r| r.contains(needle))
                .count();
            if n > 0 {
                found.push(format!("{name} ({n} rows)"));
            }
        }
        found
    }

    /// Takes a snapshot and asserts that nothing but `allowed` tables changed since
    /// `before`; returns the new snapshot.
    pub async fn nothing_written_since(
        &self,
        before: &Snapshot,
        allowed: &[&str],
        what: &str,
    ) -> Snapshot {
        let after = self.snapshot().await;
        let changed = after.changed_since(before, allowed);
        assert!(changed.is_empty(), "{what} wrote to {changed:?}");
        after
    }
}
