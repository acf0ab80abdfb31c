//! Backups (issue 13): `verdict backup FILE` copies the database while servers keep
//! writing (SQLite: `VACUUM INTO`; PostgreSQL: `pg_dump --format=custom`), `verdict restore
//! FILE` puts it into an empty database after checking it is a Verdict database no newer
//! than the binary whose audit chain verifies; both refuse with nothing written otherwise.

use std::{
    path::{Path, PathBuf},
    sync::{
        Arc, Mutex,
        atomic::{AtomicBool, AtomicI64, Ordering},
    },
    time::Duration,
};

use sea_orm::{ConnectionTrait, Database, DatabaseConnection, Statement};
use serde_json::{Value, json};

use crate::harness::{App, Backend, CliOutput, TestDb, op, unique, verdict};

e2e! {
    a_backup_under_write_load_restores_a_consistent_prefix,
    backup_and_restore_refuse_and_write_nothing,
}

/// Writers of each kind: editors retitle their own project again and again, creators add
/// new projects to their team.
const WRITERS: usize = 3;

/// `verdict ARGS` against `db` (its database and key file), as `App::cli` runs it.
async fn cli_on(db: &TestDb, args: &[&str]) -> CliOutput {
    let key_file = db.key_file();
    let env = [
        ("VERDICT_DATABASE_URL", db.url()),
        ("VERDICT_KEY_FILE", key_file.to_str().expect("utf-8 path")),
    ];
    verdict(args, &env, Duration::from_secs(120)).await
}

async fn connect(url: &str) -> DatabaseConnection {
    Database::connect(url)
        .await
        .unwrap_or_else(|e| panic!("connect to {url}: {e}"))
}

async fn rows(db: &DatabaseConnection, sql: &str) -> Vec<sea_orm::QueryResult> {
    db.query_all_raw(Statement::from_string(db.get_database_backend(), sql))
        .await
        .unwrap_or_else(|e| panic!("{sql}: {e}"))
}

async fn count(db: &DatabaseConnection, sql: &str) -> i64 {
    rows(db, sql).await[0]
        .try_get_by_index::<i64>(0)
        .expect("a count")
}

/// Tables in a database (a SQLite file that does not exist has none).
async fn tables(db: &TestDb) -> i64 {
    let sql = match db.backend() {
        Backend::Sqlite => {
            let file = db.dir().join("verdict.db");
            if !file.exists() {
                return 0;
            }
            "SELECT COUNT(*) FROM sqlite_master WHERE type = 'table'"
        }
        Backend::Postgres => {
            "SELECT COUNT(*) FROM pg_catalog.pg_tables \
             WHERE schemaname NOT IN ('pg_catalog', 'information_schema')"
        }
    };
    let conn = connect(db.url()).await;
    let n = count(&conn, sql).await;
    let _ = conn.close().await;
    n
}

/// The head seq `backup` or `restore` printed ("... head seq N ...").
fn printed_seq(out: &CliOutput) -> i64 {
    let rest = out
        .stdout
        .split("head seq ")
        .nth(1)
        .unwrap_or_else(|| panic!("no head seq printed: {out:?}"));
    rest.split_whitespace()
        .next()
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no head seq printed: {out:?}"))
}

/// What the writers had acknowledged at one moment.
#[derive(Clone, Debug, Default)]
struct Acked {
    /// Per editor, the last version of its title the server acknowledged.
    edits: Vec<i64>,
    /// Titles of the projects creators were told were created.
    created: Vec<String>,
}

struct Load {
    stop: AtomicBool,
    edits: Vec<AtomicI64>,
    created: Mutex<Vec<String>>,
}

impl Load {
    fn acked(&self) -> Acked {
        Acked {
            edits: self
                .edits
                .iter()
                .map(|e| e.load(Ordering::SeqCst))
                .collect(),
            created: self.created.lock().expect("lock").clone(),
        }
    }

    fn total(&self) -> usize {
        let a = self.acked();
        a.edits.iter().sum::<i64>() as usize + a.created.len()
    }
}

async fn a_backup_under_write_load_restores_a_consistent_prefix(app: App) {
    let app = Arc::new(app);
    let admin = app.site_admin().await;
    let tag = unique();
    let event = format!("backup-{tag}");
    app.create_event(&admin, &event, 4).await;
    let track = app.create_track(&admin, &event, "Main").await;
    let mut people = vec![];
    for k in 0..2 * WRITERS {
        let token = app.sign_up(&format!("w{k}-{tag}@example.org")).await;
        app.register(&token, &event).await;
        app.create_team(&token, &event, &format!("Team {k}")).await;
        let project = app
            .create_project(&token, &event, &format!("edit {k} v0"), &track)
            .await;
        people.push((token, project));
    }
    let load = Arc::new(Load {
        stop: AtomicBool::new(false),
        edits: (0..WRITERS).map(|_| AtomicI64::new(0)).collect(),
        created: Mutex::new(vec![]),
    });
    let mut tasks = vec![];
    for (k, (token, project)) in people.iter().take(WRITERS).enumerate() {
        let (app, load, token, project) =
            (app.clone(), load.clone(), token.clone(), project.clone());
        tasks.push(tokio::spawn(async move {
            let mut v = 0;
            while !load.stop.load(Ordering::SeqCst) {
                v += 1;
                let title = format!("edit {k} v{v}");
                let d = app
                    .ok(
                        Some(&token),
                        op("UpdateProject"),
                        json!({ "id": project, "input": { "title": title } }),
                    )
                    .await;
                assert_eq!(d["updateProject"]["title"], title.as_str());
                load.edits[k].store(v, Ordering::SeqCst);
            }
        }));
    }
    for (k, (token, _)) in people.iter().skip(WRITERS).enumerate() {
        let (app, load, token, event, track) = (
            app.clone(),
            load.clone(),
            token.clone(),
            event.clone(),
            track.clone(),
        );
        tasks.push(tokio::spawn(async move {
            let mut n = 0;
            while !load.stop.load(Ordering::SeqCst) {
                n += 1;
                let title = format!("new {k}-{n}");
                app.create_project(&token, &event, &title, &track).await;
                load.created.lock().expect("lock").push(title);
            }
        }));
    }
    // Every writer is under way before the backup starts.
    tokio::time::timeout(Duration::from_secs(60), async {
        loop {
            let a = load.acked();
            if a.edits.iter().all(|&v| v >= 3) && a.created.len() >= 3 * WRITERS {
                break;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await
    .expect("the writers got going");

    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("verdict.backup");
    let path = file.to_str().expect("utf-8").to_owned();
    let before = load.acked();
    let total_before = load.total();
    let out = app.cli(&["backup", &path]).await;
    let total_after = load.total();
    assert!(out.success(), "backup: {out:?}");
    assert!(
        total_after > total_before,
        "no write was acknowledged while the backup ran ({total_before} before, {total_after} after)"
    );
    let seq = printed_seq(&out);
    assert!(out.stdout.contains("bytes"), "the size is printed: {out:?}");
    tokio::time::sleep(Duration::from_millis(300)).await;
    load.stop.store(true, Ordering::SeqCst);
    for t in tasks {
        t.await.expect("a writer failed");
    }
    let source_head = app.audit_head().await as i64;
    assert!(
        seq < source_head,
        "the servers kept writing after the backup"
    );

    // Restored into a fresh database, with the deployment's key file beside it.
    let restored = Arc::new(
        TestDb::create(app.backend())
            .await
            .expect("a fresh database"),
    );
    std::fs::copy(app.db.key_file(), restored.key_file()).expect("copy the key file");
    let out = cli_on(&restored, &["restore", &path]).await;
    assert!(out.success(), "restore: {out:?}");
    assert_eq!(printed_seq(&out), seq, "restore prints the backup's head");
    // On PostgreSQL the backup may hold writes committed with their entries not yet on the
    // chain (`audit_pending`): the first server on the restored database appends them.
    let waiting = match app.backend() {
        crate::harness::Backend::Postgres => {
            count(
                &connect(restored.url()).await,
                "SELECT COUNT(*) FROM audit_pending",
            )
            .await
        }
        crate::harness::Backend::Sqlite => 0,
    };
    let copy = App::spawn_on(restored.clone(), &[]).await;
    let seq_restored = seq + waiting;
    let until = std::time::Instant::now() + Duration::from_secs(20);
    while (copy.audit_head().await as i64) < seq_restored && std::time::Instant::now() < until {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(
        copy.audit_head().await as i64,
        seq_restored,
        "audit verify passes, with every entry the backup held"
    );
    let d = copy
        .ok(
            Some(&people[0].0),
            "query($e: String!) { viewer { user { email } } event(slug: $e) { name } }",
            json!({ "e": event }),
        )
        .await;
    assert_eq!(d["event"]["name"], format!("Event {event}"));
    assert_eq!(
        d["viewer"]["user"]["email"],
        format!("w0-{tag}@example.org")
    );

    // The restore is exactly the live chain up to its head.
    let live = connect(app.db.url()).await;
    let db = connect(restored.url()).await;
    let hash_at = |seq: i64| format!("SELECT row_hash FROM audit_events WHERE seq = {seq}");
    let live_hash: String = rows(&live, &hash_at(seq)).await[0]
        .try_get_by_index(0)
        .expect("hash");
    let restored_hash: String = rows(&db, &hash_at(seq)).await[0]
        .try_get_by_index(0)
        .expect("hash");
    assert_eq!(
        restored_hash, live_hash,
        "the restore is a prefix of the live chain"
    );
    assert_eq!(
        count(&db, "SELECT COUNT(*) FROM audit_events").await,
        seq_restored
    );

    // Every acknowledged edit before the backup is there, and each title matches the
    // number of project.updated entries the restored chain holds for its project.
    for (k, (_, project)) in people.iter().take(WRITERS).enumerate() {
        let title: String = rows(
            &db,
            &format!("SELECT title FROM projects WHERE public_id = '{project}'"),
        )
        .await[0]
            .try_get_by_index(0)
            .expect("title");
        let version: i64 = title
            .strip_prefix(&format!("edit {k} v"))
            .and_then(|v| v.parse().ok())
            .unwrap_or_else(|| panic!("unexpected title {title:?}"));
        assert!(
            version >= before.edits[k],
            "editor {k}: v{} was acknowledged before the backup, the restore has {title:?}",
            before.edits[k]
        );
        let updates = count(
            &db,
            &format!(
                "SELECT COUNT(*) FROM audit_events \
                 WHERE action = 'project.updated' AND object_id = '{project}'"
            ),
        )
        .await;
        assert_eq!(updates, version, "editor {k}: the row and the chain agree");
    }

    // Every project created before the backup is there, and created rows and
    // project.created entries are the same set.
    let mut titles: Vec<String> = rows(&db, "SELECT title FROM projects WHERE title LIKE 'new %'")
        .await
        .iter()
        .map(|r| r.try_get_by_index(0).expect("title"))
        .collect();
    let mut audited: Vec<String> = rows(
        &db,
        "SELECT payload FROM audit_events WHERE action = 'project.created'",
    )
    .await
    .iter()
    .map(|r| {
        let payload: String = r.try_get_by_index(0).expect("payload");
        serde_json::from_str::<Value>(&payload).expect("JSON")["title"]
            .as_str()
            .expect("a title")
            .to_owned()
    })
    .filter(|t| t.starts_with("new "))
    .collect();
    titles.sort();
    audited.sort();
    assert_eq!(
        titles, audited,
        "every created row has its audit entry and back"
    );
    for t in &before.created {
        assert!(
            titles.contains(t),
            "{t:?} was acknowledged before the backup"
        );
    }
    let _ = (live.close().await, db.close().await);
}

/// `backup` into a copy of `backup` altered by `sql`: SQLite edits a copy of the file,
/// PostgreSQL restores the archive into a scratch database, alters it and dumps it again.
async fn altered(app: &App, backup: &Path, name: &str, sql: &[&str]) -> PathBuf {
    let out = backup.with_file_name(name);
    match app.backend() {
        Backend::Sqlite => {
            std::fs::copy(backup, &out).expect("copy the backup");
            let conn = connect(&format!("sqlite://{}?mode=rw", out.display())).await;
            for s in sql {
                conn.execute_unprepared(s).await.expect(s);
            }
            let _ = conn.close().await;
        }
        Backend::Postgres => {
            let scratch = TestDb::create(Backend::Postgres).await.expect("scratch");
            let run = |program: &str, args: Vec<&str>| {
                let status = std::process::Command::new(program)
                    .args(&args)
                    .status()
                    .unwrap_or_else(|e| panic!("{program}: {e}"));
                assert!(status.success(), "{program} {args:?}: {status}");
            };
            let from = backup.to_str().expect("utf-8");
            run(
                "pg_restore",
                vec!["--no-owner", "--dbname", scratch.url(), from],
            );
            let conn = connect(scratch.url()).await;
            for s in sql {
                conn.execute_unprepared(s).await.expect(s);
            }
            let _ = conn.close().await;
            let to = out.to_str().expect("utf-8");
            run(
                "pg_dump",
                vec!["--format=custom", "--file", to, scratch.url()],
            );
        }
    }
    out
}

async fn backup_and_restore_refuse_and_write_nothing(app: App) {
    let admin = app.site_admin().await;
    let event = format!("refusals-{}", unique());
    app.create_event(&admin, &event, 4).await;
    app.create_track(&admin, &event, "Main").await;
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("verdict.backup");
    let path = file.to_str().expect("utf-8").to_owned();
    let out = app.cli(&["backup", &path]).await;
    assert!(out.success(), "backup: {out:?}");

    // A backup never overwrites a file.
    let bytes = std::fs::read(&file).expect("the backup");
    let out = app.cli(&["backup", &path]).await;
    assert_eq!(out.code, Some(1), "backup over an existing file: {out:?}");
    assert!(out.stderr.contains("already exists"), "{out:?}");
    assert_eq!(std::fs::read(&file).expect("the backup"), bytes);

    // Without the PostgreSQL client tools on PATH: SQLite needs none; PostgreSQL refuses
    // and gives the exact pg_dump command instead.
    let bare = dir.path().join("no-tools.backup");
    let key_file = app.db.key_file();
    let env = [
        ("VERDICT_DATABASE_URL", app.db.url()),
        ("VERDICT_KEY_FILE", key_file.to_str().expect("utf-8")),
        ("PATH", "/nonexistent"),
    ];
    let bare_path = bare.to_str().expect("utf-8");
    let out = verdict(&["backup", bare_path], &env, Duration::from_secs(120)).await;
    match app.backend() {
        Backend::Sqlite => assert!(out.success() && bare.exists(), "{out:?}"),
        Backend::Postgres => {
            assert_eq!(out.code, Some(1), "{out:?}");
            let command = format!("pg_dump --format=custom --file={bare_path} 'postgres://");
            assert!(out.stderr.contains(&command), "{out:?}");
            assert!(!bare.exists(), "a refused backup wrote {bare:?}");
        }
    }

    // Never into a database that holds anything.
    let head = app.audit_head().await;
    let out = app.cli(&["restore", &path]).await;
    assert_eq!(out.code, Some(1), "restore into a live database: {out:?}");
    assert!(out.stderr.contains("not empty"), "{out:?}");
    assert_eq!(app.audit_head().await, head, "nothing changed");

    // Into a fresh database: each bad file is refused, and the database stays empty.
    let fresh = TestDb::create(app.backend())
        .await
        .expect("a fresh database");
    let text = dir.path().join("notes.txt");
    std::fs::write(&text, "not a database\n").expect("write");
    let foreign = match app.backend() {
        Backend::Sqlite => {
            let f = dir.path().join("other.sqlite");
            let conn = connect(&format!("sqlite://{}?mode=rwc", f.display())).await;
            conn.execute_unprepared("CREATE TABLE notes (body TEXT)")
                .await
                .expect("create");
            let _ = conn.close().await;
            f
        }
        Backend::Postgres => {
            let f = dir.path().join("other.dump");
            let empty = TestDb::create(Backend::Postgres).await.expect("a database");
            let conn = connect(empty.url()).await;
            conn.execute_unprepared("CREATE TABLE notes (body TEXT)")
                .await
                .expect("create");
            let _ = conn.close().await;
            let status = std::process::Command::new("pg_dump")
                .args(["--format=custom", "--file"])
                .arg(&f)
                .arg(empty.url())
                .status()
                .expect("pg_dump");
            assert!(status.success());
            f
        }
    };
    let (drop_guard, tamper) = match app.backend() {
        Backend::Sqlite => (
            "DROP TRIGGER audit_events_no_update",
            "UPDATE audit_events SET object_id = object_id || 'x' WHERE seq = 2",
        ),
        Backend::Postgres => (
            "ALTER TABLE audit_events DISABLE TRIGGER USER",
            "UPDATE audit_events SET object_id = object_id || 'x' WHERE seq = 2",
        ),
    };
    let tampered = altered(&app, &file, "tampered.backup", &[drop_guard, tamper]).await;
    let future = altered(
        &app,
        &file,
        "future.backup",
        &["INSERT INTO seaql_migrations (version, applied_at) \
           VALUES ('m29991231_000001_from_the_future', 0)"],
    )
    .await;
    let cases: [(&Path, &str); 4] = [
        (&text, "not a"),
        (&foreign, "not a Verdict database"),
        (&tampered, "broken at seq 2"),
        (&future, "newer Verdict"),
    ];
    for (bad, why) in cases {
        let out = cli_on(&fresh, &["restore", bad.to_str().expect("utf-8")]).await;
        assert_eq!(out.code, Some(1), "restore of {bad:?}: {out:?}");
        assert!(out.stderr.contains(why), "restore of {bad:?}: {out:?}");
        assert_eq!(tables(&fresh).await, 0, "{bad:?}: the database stays empty");
        if app.backend() == Backend::Sqlite {
            let left: Vec<_> = std::fs::read_dir(fresh.dir())
                .expect("read dir")
                .map(|e| e.expect("entry").file_name())
                .collect();
            assert!(left.is_empty(), "{bad:?}: a refused restore left {left:?}");
        }
    }

    // The good backup still restores there.
    let out = cli_on(&fresh, &["restore", &path]).await;
    assert!(out.success(), "restore: {out:?}");
    assert_eq!(printed_seq(&out), head as i64);
    let out = cli_on(&fresh, &["audit", "verify"]).await;
    assert!(out.success(), "audit verify on the restore: {out:?}");
}
