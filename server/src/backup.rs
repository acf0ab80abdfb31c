//! Backups (issue 13): `verdict backup FILE` and `verdict restore FILE`.
//!
//! ## SQLite
//!
//! A backup is `VACUUM INTO` through an ordinary connection: one read transaction, so the
//! copy is the database as of one commit, taken while servers keep writing (in WAL mode the
//! writer and readers do not wait for each other). It is written to a temporary file beside
//! FILE, its audit chain is verified ([`audit::verify`], what `verdict audit verify` runs),
//! and only then is it linked in under FILE, which must not exist: a backup never
//! overwrites a file, and an interrupted one leaves a `.partial` file, never a FILE that
//! looks complete. A copy whose chain is broken is still linked in, as evidence of the
//! live database's fault, and the command says so and exits 1.
//!
//! A restore goes into an empty database only: the file `--database-url` names must not
//! exist yet or hold no tables. FILE is copied to a temporary file beside it and checked
//! there: a SQLite database with Verdict's migrations table, no migration this binary does
//! not know, an audit chain that verifies. Then the pending migrations run on the copy and
//! it is renamed into place. Nothing is put in place before every check passed.
//!
//! ## PostgreSQL
//!
//! Verdict runs the PostgreSQL client tools rather than copying rows itself: `pg_dump
//! --format=custom` is the format PostgreSQL operators already keep and restore, it copies
//! every object (triggers, functions, constraints) faithfully, and it is online. The dump
//! reads the snapshot of a transaction Verdict holds open (`--snapshot`), in which it
//! verified the chain, so the head it prints is exactly the dump's. Without `pg_dump` on
//! PATH the command is refused with the exact command to run instead.
//!
//! A restore reads the archive's migrations and audit rows first (`pg_restore --data-only
//! --table`, COPY text) and checks them as for SQLite, with the same chain walk
//! ([`audit::ChainWalk`]); only then does `pg_restore --single-transaction --exit-on-error`
//! load it into the empty database, so a refused or failed restore leaves it empty.

use std::ffi::OsString;
use std::io::{ErrorKind, Read};
use std::path::{Path, PathBuf};

use entity::{audit_event, audit_head};
use migration::{Migrator, MigratorTrait};
use sea_orm::{
    ConnectOptions, ConnectionTrait, Database, DatabaseConnection, DbBackend, Statement,
};

use crate::audit::{self, ChainWalk, Verification};
use crate::db::Db;
use crate::error::{AppError, AppResult};

/// What `backup` wrote.
#[derive(Debug)]
pub struct Backup {
    pub file: PathBuf,
    pub bytes: u64,
    /// The copy's audit chain, verified after it was written.
    pub chain: Verification,
}

/// What `restore` put in place.
#[derive(Debug)]
pub struct Restore {
    /// The database restored into: a file, or a PostgreSQL URL without its password.
    pub target: String,
    pub bytes: u64,
    /// The head of the restored chain.
    pub seq: i64,
    pub hash: String,
    /// Migrations this binary applied on top of the backup's.
    pub migrated: usize,
}

/// `verdict backup FILE`: an online, consistent copy of the database at `url`.
pub async fn backup(url: &str, file: &Path) -> AppResult<Backup> {
    refuse_existing(file)?;
    if is_postgres(url) {
        pg_backup(url, file).await
    } else {
        sqlite_backup(url, file).await
    }
}

/// `verdict restore FILE`: a backup into the empty database at `url`.
pub async fn restore(url: &str, file: &Path) -> AppResult<Restore> {
    if is_postgres(url) {
        pg_restore(url, file).await
    } else {
        sqlite_restore(url, file).await
    }
}

fn is_postgres(url: &str) -> bool {
    url.starts_with("postgres")
}

// ---- SQLite ----------------------------------------------------------------------------

async fn sqlite_backup(url: &str, file: &Path) -> AppResult<Backup> {
    let source = sqlite_file(url)?;
    if !source.exists() {
        return Err(AppError::bad_input(
            "database-url",
            format!("there is no database at {}", source.display()),
        ));
    }
    let partial = Partial::beside(file)?;
    let db = Db::connect(url).await?;
    let into = Statement::from_sql_and_values(
        DbBackend::Sqlite,
        "VACUUM INTO ?",
        [partial.path.to_string_lossy().into_owned().into()],
    );
    let copied = db.conn.execute_raw(into).await;
    db.conn.close().await?;
    copied?;
    let copy = open_read_only(&partial.path).await?;
    let chain = audit::verify(&copy).await;
    copy.close().await?;
    let chain = chain?;
    put_in_place(&partial.path, file, chain)
}

async fn sqlite_restore(url: &str, file: &Path) -> AppResult<Restore> {
    let target = sqlite_file(url)?;
    require_empty_sqlite(&target).await?;
    match magic(file)? {
        Magic::Sqlite => {}
        Magic::PgDump => {
            return Err(AppError::bad_input(
                "FILE",
                format!(
                    "{} is a pg_dump archive: restore it with a postgres:// --database-url",
                    file.display()
                ),
            ));
        }
        Magic::Other => {
            return Err(AppError::bad_input(
                "FILE",
                format!("{} is not a SQLite database", file.display()),
            ));
        }
    }
    let partial = Partial::beside(&target)?;
    std::fs::copy(file, &partial.path).map_err(|e| {
        AppError::Internal(format!(
            "cannot copy {} beside the database: {e}",
            file.display()
        ))
    })?;
    let copy_url = format!("sqlite://{}?mode=rw", partial.path.display());
    let copy = Db::connect(&copy_url).await.map_err(|e| {
        AppError::bad_input("FILE", format!("{} cannot be opened: {e}", file.display()))
    })?;
    let checked = check_sqlite_copy(&copy, file).await;
    let (migrated, seq, hash) = match checked {
        Ok(v) => v,
        Err(e) => {
            copy.conn.close().await?;
            return Err(e);
        }
    };
    copy.conn.close().await?;
    // Closing the last connection checkpoints the WAL into the file and removes it; a
    // leftover one would hold rows the renamed file lacks.
    if with_suffix(&partial.path, "-wal").exists() {
        return Err(AppError::Internal(format!(
            "{} kept a write-ahead log after closing; nothing restored",
            partial.path.display()
        )));
    }
    let bytes = size(&partial.path)?;
    // Checked again just before the rename: a process may have created it meanwhile.
    require_empty_sqlite(&target).await?;
    std::fs::rename(&partial.path, &target).map_err(|e| {
        AppError::Internal(format!("cannot move the restored database into place: {e}"))
    })?;
    Ok(Restore {
        target: target.display().to_string(),
        bytes,
        seq,
        hash,
        migrated,
    })
}

/// Checks the copy of a backup (see the module doc), then migrates it. Returns the
/// migrations applied and the chain's head.
async fn check_sqlite_copy(copy: &Db, file: &Path) -> AppResult<(usize, i64, String)> {
    let has_migrations = count(
        &copy.conn,
        "SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name = 'seaql_migrations'",
    )
    .await?;
    if has_migrations == 0 {
        return Err(not_verdict(file));
    }
    let applied = strings(&copy.conn, "SELECT version FROM seaql_migrations").await?;
    let pending = check_migrations(&applied, file)?;
    let (seq, hash) = intact(audit::verify(&copy.conn).await?, file)?;
    copy.migrate().await?;
    Ok((pending, seq, hash))
}

/// The SQLite file a URL names; an in-memory database has none to back up or restore.
fn sqlite_file(url: &str) -> AppResult<PathBuf> {
    let path = crate::db::sqlite_path(url);
    if path.is_empty() || path == ":memory:" || url.contains("mode=memory") {
        return Err(AppError::bad_input(
            "database-url",
            "an in-memory database cannot be backed up or restored",
        ));
    }
    Ok(PathBuf::from(path))
}

/// The restore target must not exist or hold no tables (opened read-only to look).
async fn require_empty_sqlite(target: &Path) -> AppResult<()> {
    if target.symlink_metadata().is_err() {
        return Ok(());
    }
    let conn = open_read_only(target).await?;
    let tables = count(
        &conn,
        "SELECT COUNT(*) FROM sqlite_master WHERE type = 'table'",
    )
    .await;
    conn.close().await?;
    let tables = tables?;
    if tables > 0 {
        return Err(AppError::conflict(format!(
            "{} is not empty ({tables} tables): restore only into a new database \
             (point --database-url at a file that does not exist yet); nothing restored",
            target.display()
        )));
    }
    if with_suffix(target, "-wal").exists() {
        return Err(AppError::conflict(format!(
            "{} has a write-ahead log beside it: is a server running on it? nothing restored",
            target.display()
        )));
    }
    Ok(())
}

/// A connection to a SQLite file that can neither change it nor create it.
async fn open_read_only(path: &Path) -> AppResult<DatabaseConnection> {
    // The file name set as a path, not parsed out of a URL (which `?` or `%` would bend).
    let file = path.to_owned();
    let mut opts = ConnectOptions::new("sqlite://placeholder?mode=ro".to_owned());
    opts.sqlx_logging(false)
        .max_connections(1)
        .map_sqlx_sqlite_opts(move |o| o.filename(&file).read_only(true));
    Database::connect(opts).await.map_err(|e| {
        AppError::bad_input(
            "FILE",
            format!("{} cannot be read as SQLite: {e}", path.display()),
        )
    })
}

// ---- PostgreSQL ------------------------------------------------------------------------

async fn pg_backup(url: &str, file: &Path) -> AppResult<Backup> {
    let partial = Partial::beside(file)?;
    let db = Db::connect(url).await?;
    // The dump reads this transaction's snapshot: what was verified is what is dumped.
    let txn = db.read().await?;
    let snapshot = strings(&txn, "SELECT pg_export_snapshot()")
        .await?
        .pop()
        .ok_or_else(|| AppError::Internal("no snapshot was exported".into()))?;
    let chain = audit::verify(&txn).await?;
    let mut args: Vec<OsString> = vec![
        "--format=custom".into(),
        format!("--snapshot={snapshot}").into(),
        "--file".into(),
    ];
    args.push(partial.path.clone().into());
    args.extend(["--dbname".into(), url.into()]);
    let hint = format!(
        "pg_dump --format=custom --file={} '{}'",
        file.display(),
        without_password(url)
    );
    let dumped = tool("pg_dump", &args, &hint).await;
    txn.commit().await?;
    dumped?;
    put_in_place(&partial.path, file, chain)
}

async fn pg_restore(url: &str, file: &Path) -> AppResult<Restore> {
    let shown = without_password(url);
    let db = Db::connect(url).await?;
    let tables = count(
        &db.conn,
        "SELECT COUNT(*) FROM pg_catalog.pg_tables \
         WHERE schemaname NOT IN ('pg_catalog', 'information_schema')",
    )
    .await?;
    if tables > 0 {
        return Err(AppError::conflict(format!(
            "the database {shown} is not empty ({tables} tables): restore only into a new, \
             empty database (CREATE DATABASE ...); nothing restored"
        )));
    }
    match magic(file)? {
        Magic::PgDump => {}
        Magic::Sqlite => {
            return Err(AppError::bad_input(
                "FILE",
                format!(
                    "{} is a SQLite database: restore it with a sqlite:// --database-url",
                    file.display()
                ),
            ));
        }
        Magic::Other => {
            return Err(AppError::bad_input(
                "FILE",
                format!(
                    "{} is not a pg_dump archive (verdict backup writes --format=custom)",
                    file.display()
                ),
            ));
        }
    }
    let hint = format!(
        "pg_restore --single-transaction --exit-on-error --no-owner --no-privileges --dbname='{shown}' {}",
        file.display()
    );
    let migrations = archive_table(file, "seaql_migrations", &hint)
        .await?
        .ok_or_else(|| not_verdict(file))?;
    let applied = migrations
        .rows
        .iter()
        .map(|r| migrations.get(r, "version"))
        .collect::<AppResult<Vec<_>>>()?;
    let pending = check_migrations(&applied, file)?;
    intact(archive_chain(file, &hint).await?, file)?;

    let mut args: Vec<OsString> = [
        "--single-transaction",
        "--exit-on-error",
        "--no-owner",
        "--no-privileges",
        "--dbname",
        url,
    ]
    .map(OsString::from)
    .to_vec();
    args.push(file.into());
    tool("pg_restore", &args, &hint).await?;
    db.migrate().await?;
    let (seq, hash) = intact(audit::verify(&db.conn).await?, file)?;
    Ok(Restore {
        target: shown,
        bytes: size(file)?,
        seq,
        hash,
        migrated: pending,
    })
}

/// The archive's audit chain, walked as `audit verify` walks the database's.
async fn archive_chain(file: &Path, hint: &str) -> AppResult<Verification> {
    let missing = || not_verdict(file);
    let events = archive_table(file, "audit_events", hint)
        .await?
        .ok_or_else(missing)?;
    let heads = archive_table(file, "audit_head", hint)
        .await?
        .ok_or_else(missing)?;
    let head = heads.rows.first().ok_or_else(missing)?;
    let head = audit_head::Model {
        id: 1,
        seq: number(&heads.get(head, "seq")?)?,
        head_hash: heads.get(head, "head_hash")?,
    };
    let mut rows = events
        .rows
        .iter()
        .map(|r| {
            Ok(audit_event::Model {
                seq: number(&events.get(r, "seq")?)?,
                occurred_at: events.get(r, "occurred_at")?,
                actor: events.get(r, "actor")?,
                event: events.get(r, "event")?,
                action: events.get(r, "action")?,
                object_type: events.get(r, "object_type")?,
                object_id: events.get(r, "object_id")?,
                payload: events.get(r, "payload")?,
                payload_hash: events.get(r, "payload_hash")?,
                prev_hash: events.get(r, "prev_hash")?,
                row_hash: events.get(r, "row_hash")?,
            })
        })
        .collect::<AppResult<Vec<_>>>()?;
    rows.sort_by_key(|r| r.seq);
    let mut walk = ChainWalk::new();
    for r in &rows {
        if let Err(broken) = walk.push(r) {
            return Ok(broken);
        }
    }
    Ok(walk.finish(&head))
}

/// One table's rows in a pg_dump archive, as `pg_restore --data-only` prints them (COPY
/// text format), with the column names of its `COPY` line.
struct CopyRows {
    columns: Vec<String>,
    rows: Vec<Vec<Option<String>>>,
}

impl CopyRows {
    fn get(&self, row: &[Option<String>], column: &str) -> AppResult<String> {
        self.columns
            .iter()
            .position(|c| c == column)
            .and_then(|i| row.get(i).cloned().flatten())
            .ok_or_else(|| AppError::Internal(format!("the archive has no value for {column}")))
    }
}

/// `None` when the archive holds no data of `table`.
async fn archive_table(file: &Path, table: &str, hint: &str) -> AppResult<Option<CopyRows>> {
    let args: Vec<OsString> = vec![
        "--data-only".into(),
        "--table".into(),
        table.into(),
        "--file".into(),
        "-".into(),
        file.into(),
    ];
    let out = tool("pg_restore", &args, hint).await?;
    let text = String::from_utf8_lossy(&out);
    let mut lines = text.lines();
    let Some(header) = lines
        .by_ref()
        .find(|l| l.starts_with("COPY ") && l.ends_with("FROM stdin;"))
    else {
        return Ok(None);
    };
    let columns = header
        .split_once('(')
        .and_then(|(_, rest)| rest.rsplit_once(')'))
        .map(|(cols, _)| {
            cols.split(',')
                .map(|c| c.trim().trim_matches('"').to_owned())
                .collect()
        })
        .unwrap_or_default();
    let rows = lines
        .take_while(|l| *l != "\\.")
        .map(|l| {
            l.split('\t')
                .map(|f| (f != "\\N").then(|| unescape_copy(f)))
                .collect()
        })
        .collect();
    Ok(Some(CopyRows { columns, rows }))
}

/// A field of COPY's text format. Its output escapes only backslash, the control
/// characters `\b \f \n \r \t \v`; a backslash before anything else stands for that
/// character.
fn unescape_copy(field: &str) -> String {
    let mut out = String::with_capacity(field.len());
    let mut chars = field.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('b') => out.push('\u{8}'),
            Some('f') => out.push('\u{c}'),
            Some('n') => out.push('\n'),
            Some('r') => out.push('\r'),
            Some('t') => out.push('\t'),
            Some('v') => out.push('\u{b}'),
            Some(other) => out.push(other),
            None => out.push('\\'),
        }
    }
    out
}

fn number(text: &str) -> AppResult<i64> {
    text.parse()
        .map_err(|_| AppError::Internal(format!("the archive holds {text:?} for a seq")))
}

/// Runs a PostgreSQL client tool; its standard output. Not on PATH: refused with the
/// command to run by hand.
async fn tool(program: &str, args: &[OsString], hint: &str) -> AppResult<Vec<u8>> {
    let out = tokio::process::Command::new(program)
        .args(args)
        .stdin(std::process::Stdio::null())
        .output()
        .await
        .map_err(|e| match e.kind() {
            ErrorKind::NotFound => AppError::conflict(format!(
                "{program} is not on PATH: install the PostgreSQL client tools (the same \
                 major version as the server or newer), or run it yourself: {hint}"
            )),
            _ => AppError::Internal(format!("cannot run {program}: {e}")),
        })?;
    if !out.status.success() {
        return Err(AppError::Internal(format!(
            "{program} failed ({}): {}",
            out.status,
            String::from_utf8_lossy(&out.stderr).trim()
        )));
    }
    Ok(out.stdout)
}

/// The URL to show: its password left out.
fn without_password(url: &str) -> String {
    match url::Url::parse(url) {
        Ok(mut u) => {
            let _ = u.set_password(None);
            u.to_string()
        }
        Err(_) => "postgres://...".into(),
    }
}

// ---- shared ------------------------------------------------------------------------------

/// Every migration the backup applied must be one this binary knows; returns how many of
/// this binary's are still to apply.
fn check_migrations(applied: &[String], file: &Path) -> AppResult<usize> {
    let known: Vec<String> = Migrator::migrations()
        .iter()
        .map(|m| m.name().to_owned())
        .collect();
    if applied.is_empty() {
        return Err(not_verdict(file));
    }
    if let Some(newer) = applied.iter().find(|v| !known.contains(v)) {
        return Err(AppError::bad_input(
            "FILE",
            format!(
                "{} was written by a newer Verdict: its migration {newer} is unknown to this \
                 binary; restore it with that version or newer; nothing restored",
                file.display()
            ),
        ));
    }
    Ok(known.iter().filter(|k| !applied.contains(k)).count())
}

/// The chain's head, or the refusal naming the first bad seq.
fn intact(v: Verification, file: &Path) -> AppResult<(i64, String)> {
    match v {
        Verification::Intact { seq, hash, .. } => Ok((seq, hash)),
        Verification::Broken { seq, reason } => Err(AppError::bad_input(
            "FILE",
            format!(
                "the audit chain of {} is broken at seq {seq}: {reason}; nothing restored",
                file.display()
            ),
        )),
    }
}

fn not_verdict(file: &Path) -> AppError {
    AppError::bad_input(
        "FILE",
        format!(
            "{} is not a Verdict database (it has no Verdict migrations and audit chain); \
             nothing restored",
            file.display()
        ),
    )
}

fn refuse_existing(file: &Path) -> AppResult<()> {
    if file.symlink_metadata().is_ok() {
        return Err(AppError::conflict(format!(
            "{} already exists: a backup never overwrites a file; name a new one",
            file.display()
        )));
    }
    Ok(())
}

/// Puts the finished copy in place under `to`, failing if `to` exists (a hard link, never
/// a rename over it).
/// A complete, verified copy at `partial` becomes FILE (never overwriting it).
fn put_in_place(partial: &Path, file: &Path, chain: Verification) -> AppResult<Backup> {
    let bytes = size(partial)?;
    link_new(partial, file)?;
    Ok(Backup {
        file: file.to_owned(),
        bytes,
        chain,
    })
}

fn link_new(from: &Path, to: &Path) -> AppResult<()> {
    std::fs::hard_link(from, to).map_err(|e| match e.kind() {
        ErrorKind::AlreadyExists => AppError::conflict(format!(
            "{} already exists: a backup never overwrites a file; name a new one",
            to.display()
        )),
        _ => AppError::Internal(format!("cannot write {}: {e}", to.display())),
    })
}

enum Magic {
    Sqlite,
    PgDump,
    Other,
}

/// What kind of file FILE is, by its first bytes.
fn magic(file: &Path) -> AppResult<Magic> {
    let mut head = [0u8; 16];
    let mut f = std::fs::File::open(file)
        .map_err(|e| AppError::bad_input("FILE", format!("{}: {e}", file.display())))?;
    let n = f
        .read(&mut head)
        .map_err(|e| AppError::bad_input("FILE", format!("{}: {e}", file.display())))?;
    Ok(match &head[..n] {
        b"SQLite format 3\0" => Magic::Sqlite,
        h if h.starts_with(b"PGDMP") => Magic::PgDump,
        _ => Magic::Other,
    })
}

fn size(path: &Path) -> AppResult<u64> {
    std::fs::metadata(path)
        .map(|m| m.len())
        .map_err(|e| AppError::Internal(format!("{}: {e}", path.display())))
}

fn with_suffix(path: &Path, suffix: &str) -> PathBuf {
    let mut s = path.as_os_str().to_owned();
    s.push(suffix);
    PathBuf::from(s)
}

async fn count<C: ConnectionTrait>(db: &C, sql: &str) -> AppResult<i64> {
    let row = db
        .query_one_raw(Statement::from_string(db.get_database_backend(), sql))
        .await?
        .ok_or_else(|| AppError::Internal(format!("no row from {sql}")))?;
    Ok(row.try_get_by_index::<i64>(0)?)
}

async fn strings<C: ConnectionTrait>(db: &C, sql: &str) -> AppResult<Vec<String>> {
    db.query_all_raw(Statement::from_string(db.get_database_backend(), sql))
        .await?
        .iter()
        .map(|r| Ok(r.try_get_by_index::<String>(0)?))
        .collect()
}

/// A temporary file beside its destination (same directory, so it can be linked or renamed
/// into place), removed with SQLite's side files when dropped; after the rename there is
/// nothing left to remove.
struct Partial {
    path: PathBuf,
}

impl Partial {
    fn beside(dest: &Path) -> AppResult<Partial> {
        let name = dest
            .file_name()
            .ok_or_else(|| AppError::bad_input("FILE", "names no file"))?;
        let dir = match dest.parent() {
            Some(d) if !d.as_os_str().is_empty() => d,
            _ => Path::new("."),
        };
        let path = dir.join(format!(
            ".{}.partial-{}",
            name.to_string_lossy(),
            crate::crypto::random_string(8)
        ));
        Ok(Partial { path })
    }
}

impl Drop for Partial {
    fn drop(&mut self) {
        for suffix in ["", "-wal", "-shm", "-journal"] {
            let _ = std::fs::remove_file(with_suffix(&self.path, suffix));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn copy_text_fields_are_unescaped() {
        assert_eq!(unescape_copy(r#"{"a":"b\\"c"}"#), r#"{"a":"b\"c"}"#);
        assert_eq!(unescape_copy(r"one\ttwo\nthree\\"), "one\ttwo\nthree\\");
        assert_eq!(unescape_copy("plain"), "plain");
    }

    #[test]
    fn passwords_are_left_out_of_what_is_shown() {
        assert_eq!(
            without_password("postgres://verdict:s3cret@db:5432/verdict"),
            "postgres://verdict@db:5432/verdict"
        );
    }
}
