//! Starting and stopping the binary: a lost signing key, databases that cannot be opened,
//! and SIGTERM (requests in flight finish, websockets close with 1001, exit 0).

use std::time::Duration;

use sea_orm::{ConnectOptions, ConnectionTrait, Database};
use serde_json::json;

use crate::harness::{App, Backend, PASSWORD, str_at, unique, verdict};

e2e! {
    a_lost_signing_key_is_refused_unless_new_key ["--demo"],
    sigterm_finishes_requests_closes_websockets_and_exits_0,
}

/// `serve` that must refuse to start: its output (it must exit within 60 s).
async fn serve_refused(database_url: &str, key_file: &str, extra: &[&str]) -> (i32, String) {
    let mut args = vec!["serve", "--addr", "127.0.0.1:0"];
    args.extend_from_slice(extra);
    let env = [
        ("VERDICT_DATABASE_URL", database_url),
        ("VERDICT_KEY_FILE", key_file),
    ];
    let out = verdict(&args, &env, Duration::from_secs(60)).await;
    let code = out.code.unwrap_or(-1);
    assert_ne!(code, 0, "serve must refuse to start: {out:?}");
    assert!(
        !out.stdout.contains("listening"),
        "it never listens: {out:?}"
    );
    (code, out.stderr)
}

async fn fingerprint(app: &App) -> String {
    let r = app.get("/.well-known/verdict-signing-key").await;
    assert_eq!(r.status, 200, "{}", r.text);
    r.header("x-signing-key-fingerprint")
        .filter(|f| f.len() == 64)
        .unwrap_or_else(|| panic!("a fingerprint header: {:?}", r.headers))
}

async fn a_lost_signing_key_is_refused_unless_new_key(mut app: App) {
    // `--demo` seeded published results, signed with this deployment's key.
    let old = fingerprint(&app).await;
    app.terminate();
    assert_eq!(app.wait_exit(Duration::from_secs(30)).await, Some(0));
    let key_file = app.db.key_file();
    std::fs::remove_file(&key_file).expect("remove the key file");

    // Started again without it: refused, saying which key is missing and what to do.
    let key = key_file.to_str().expect("utf-8 path");
    let (_, stderr) = serve_refused(app.db.url(), key, &[]).await;
    for needle in [key, old.as_str(), "--new-key"] {
        assert!(
            stderr.contains(needle),
            "the refusal names {needle:?}: {stderr}"
        );
    }
    assert!(
        !key_file.exists(),
        "no new key is created silently: {}",
        key_file.display()
    );

    // With --new-key it starts, signing with a new key from now on, and keeps that key.
    let renewed = app.sibling(&["--new-key"]).await;
    let new = fingerprint(&renewed).await;
    assert_ne!(new, old, "a new key");
    assert!(key_file.exists(), "the new key is saved");
    drop(renewed);
    let again = app.sibling(&[]).await;
    assert_eq!(
        fingerprint(&again).await,
        new,
        "the next start uses the new key"
    );
}

/// Holds the database's write lock (SQLite) or the audit head (PostgreSQL, where a
/// mutation's audit append waits for it) until dropped or released.
struct WriteLock {
    conn: sea_orm::DatabaseConnection,
}

impl WriteLock {
    async fn take(app: &App) -> WriteLock {
        let mut opts = ConnectOptions::new(app.db.url().to_owned());
        opts.max_connections(1)
            .min_connections(1)
            .sqlx_logging(false);
        let conn = Database::connect(opts).await.expect("connect");
        let lock = match app.backend() {
            Backend::Sqlite => "BEGIN IMMEDIATE",
            Backend::Postgres => "BEGIN; LOCK TABLE audit_head IN EXCLUSIVE MODE",
        };
        conn.execute_unprepared(lock).await.expect("take the lock");
        WriteLock { conn }
    }

    async fn release(self) {
        self.conn
            .execute_unprepared("ROLLBACK")
            .await
            .expect("release the lock");
        let _ = self.conn.close().await;
    }
}

async fn sigterm_finishes_requests_closes_websockets_and_exits_0(mut app: App) {
    let admin = app.site_admin().await;
    let mut ws = app
        .ws(json!({ "authorization": format!("Bearer {admin}") }))
        .await;

    // A mutation in flight: it waits for a lock the test holds.
    let lock = WriteLock::take(&app).await;
    let email = format!("late-{}@example.org", unique());
    let request = {
        let http = app.http.clone();
        let url = app.url("/graphql");
        let body = json!({
            "query": "mutation($e: String!, $p: String!) { signUp(email: $e, password: $p, displayName: \"Late\") { token } }",
            "variables": { "e": email, "p": PASSWORD },
        });
        tokio::spawn(async move {
            let resp = http.post(url).json(&body).send().await?;
            let status = resp.status().as_u16();
            Ok::<_, reqwest::Error>((status, resp.json::<serde_json::Value>().await?))
        })
    };
    tokio::time::sleep(Duration::from_secs(1)).await;
    assert!(!request.is_finished(), "the mutation waits for the lock");

    app.terminate();
    // The websocket is told at once, while the request is still running.
    let (_, code) = ws.until_closed(Duration::from_secs(10)).await;
    assert_eq!(code, Some(1001), "websockets close with 1001 (going away)");
    assert!(!request.is_finished(), "the mutation is still in flight");
    assert!(!app.has_exited(), "the server waits for it");

    lock.release().await;
    let (status, body) = tokio::time::timeout(Duration::from_secs(30), request)
        .await
        .expect("the request finishes")
        .expect("the request task")
        .expect("an HTTP response, not a dropped connection");
    assert_eq!(status, 200, "{body}");
    str_at(&body, "/data/signUp/token");
    assert_eq!(
        app.wait_exit(Duration::from_secs(30)).await,
        Some(0),
        "a clean exit"
    );
    // What it answered was committed.
    let out = app.cli(&["audit", "verify"]).await;
    assert!(out.success(), "{out:?}");
    let relogin = app
        .sibling(&[])
        .await
        .gql(
            "mutation($e: String!, $p: String!) { logIn(email: $e, password: $p) { token } }",
            json!({ "e": email, "p": PASSWORD }),
        )
        .await;
    str_at(&relogin, "/data/logIn/token");
}

// ---- databases that cannot be opened (no test database needed) ----------------------

#[tokio::test(flavor = "multi_thread")]
async fn a_missing_sqlite_file_is_named_with_the_mode_rwc_hint() {
    let dir = tempfile::tempdir().expect("tempdir");
    let key = dir.path().join("signing.key");
    let key = key.to_str().expect("utf-8 path");
    let file = dir.path().join("missing.db");
    let url = format!("sqlite://{}", file.display());
    let (_, stderr) = serve_refused(&url, key, &[]).await;
    assert!(
        stderr.contains(&file.display().to_string()) && stderr.contains("?mode=rwc"),
        "names the file and hints ?mode=rwc: {stderr}"
    );

    // With mode=rwc, a directory that does not exist is named too.
    let file = dir.path().join("no-such-dir").join("verdict.db");
    let url = format!("sqlite://{}?mode=rwc", file.display());
    let (_, stderr) = serve_refused(&url, key, &[]).await;
    assert!(
        stderr.contains(&file.display().to_string()) && stderr.contains("directory"),
        "names the file and its directory: {stderr}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_corrupt_sqlite_file_is_named() {
    let dir = tempfile::tempdir().expect("tempdir");
    let key = dir.path().join("signing.key");
    let file = dir.path().join("verdict.db");
    std::fs::write(&file, "this is not a database ".repeat(400)).expect("write");
    let url = format!("sqlite://{}?mode=rwc", file.display());
    let (_, stderr) = serve_refused(&url, key.to_str().expect("utf-8 path"), &[]).await;
    assert!(
        stderr.contains(&file.display().to_string()) && stderr.contains("corrupt"),
        "names the file and says it is corrupt: {stderr}"
    );
    assert_eq!(
        std::fs::read(&file).expect("read").len(),
        "this is not a database ".len() * 400,
        "the file is left alone"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn unreachable_postgresql_is_reported_at_once() {
    let dir = tempfile::tempdir().expect("tempdir");
    let key = dir.path().join("signing.key");
    let started = std::time::Instant::now();
    let (_, stderr) = serve_refused(
        "postgres://postgres@127.0.0.1:1/verdict",
        key.to_str().expect("utf-8 path"),
        &[],
    )
    .await;
    let took = started.elapsed();
    assert!(
        stderr.contains("127.0.0.1:1") && stderr.to_lowercase().contains("connection refused"),
        "names the server and says the connection was refused: {stderr}"
    );
    assert!(
        took < Duration::from_secs(10),
        "at once, not after a pool time-out: {took:?}"
    );
}
