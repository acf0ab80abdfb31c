//! Signed event bundles (issue 12): `verdict event export` writes an event's structure and
//! people (no reviews, scores, tallies or passwords) as one signed document; `verdict event
//! import` checks the signature before writing anything, brings the event in as a new one
//! (never overwriting: CONFLICT), invite-only, with nothing published.

use std::time::Duration;

use sea_orm::{ConnectionTrait, Statement};
use serde_json::{Value, json};

use crate::harness::{App, TestDb, assert_code, judged_fixture, rfc3339, unique, verdict};

e2e! {
    event_bundles_round_trip_refuse_tampering_and_never_overwrite,
}

const EVENT: &str = "query($e: String!) { event(slug: $e) { name registration reviewsPerProject
    tracks { name } rubric { key } prizes { name position } voting { mode credits }
    results { version } publications { version } projects(first: 100) { totalCount } } }";

/// One number from `sql` against `db`.
async fn count(db: &verdict::db::Db, sql: &str) -> i64 {
    let backend = db.conn.get_database_backend();
    let row = db
        .conn
        .query_one_raw(Statement::from_string(backend, sql.to_owned()))
        .await
        .expect("query")
        .expect("a row");
    row.try_get_by_index::<i64>(0).expect("a count")
}

fn reviews_of(slug: &str) -> String {
    format!(
        "SELECT COUNT(*) FROM reviews r JOIN events e ON e.id = r.event_id WHERE e.slug = '{slug}'"
    )
}

async fn event_bundles_round_trip_refuse_tampering_and_never_overwrite(app: App) {
    let admin = app.site_admin().await;
    let admin = Some(admin.as_str());
    let tag = unique();
    let slug = format!("csv-{tag}");
    app.ok(
        admin,
        "mutation($f: JSON!) { importEvent(fixture: $f) { inserted } }",
        json!({ "f": judged_fixture(&tag) }),
    )
    .await;
    // A prize, a vote that closed and whose tally is published, a hidden project.
    app.ok(
        admin,
        "mutation($e: String!) { createPrize(event: $e, input: { name: \"Grand prize\", position: 1 }) { id } }",
        json!({ "e": slug }),
    )
    .await;
    let now = chrono::Utc::now();
    app.ok(
        admin,
        "mutation($e: String!, $o: DateTime!, $c: DateTime!) { configureVoting(event: $e, \
         mode: ACCOUNT, credits: 9, opens: $o, closes: $c) { mode } }",
        json!({ "e": slug, "o": rfc3339(now - chrono::Duration::hours(2)),
                "c": rfc3339(now - chrono::Duration::seconds(1)) }),
    )
    .await;
    app.ok(
        admin,
        "mutation($e: String!) { publishVoteTally(event: $e) { rank } }",
        json!({ "e": slug }),
    )
    .await;
    app.ok(
        admin,
        "mutation($id: ID!) { hideProject(id: $id, reason: \"spam links\") { id } }",
        json!({ "id": format!("p2_{tag}") }),
    )
    .await;

    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("bundle.json");
    let path = file.to_str().expect("utf-8").to_owned();
    let out = app.cli(&["event", "export", "--event", &slug, &path]).await;
    assert!(out.success(), "export: {out:?}");
    let text = std::fs::read_to_string(&file).expect("the bundle");
    let doc: Value = serde_json::from_str(&text).expect("JSON");
    assert_eq!(doc["format"], "verdict.event-bundle.v1");
    let b = &doc["bundle"];
    assert_eq!(b["fixture"]["format"], "verdict.event.v1");
    assert_eq!(b["fixture"]["reviews"], json!([]));
    assert_eq!(b["fixture"]["projects"].as_array().map(Vec::len), Some(4));
    assert_eq!(b["fixture"]["judges"].as_array().map(Vec::len), Some(3));
    assert_eq!(b["prizes"][0]["name"], "Grand prize");
    assert_eq!(b["voting"]["mode"], "account");
    assert_eq!(b["moderation"][0]["hidden_reason"], "spam links");
    assert!(text.contains(&format!("csv-1-{tag}@example.org")), "people");
    // No reviews, comments, scores, tally, passwords or audit chain.
    for absent in [
        "HYPERLINK",
        "\"scores\"",
        "tally",
        "argon2",
        "password",
        "row_hash",
    ] {
        assert!(!text.contains(absent), "the bundle carries {absent:?}");
    }
    // Export never overwrites a file.
    let again = app.cli(&["event", "export", "--event", &slug, &path]).await;
    assert!(!again.success(), "export overwrote {path}");
    assert_eq!(std::fs::read_to_string(&file).expect("bundle"), text);

    let head = app.audit_head().await;
    // The event exists: CONFLICT, nothing written.
    let out = app.cli(&["event", "import", &path]).await;
    assert!(!out.success(), "re-import: {out:?}");
    assert!(out.stderr.contains("never overwrites"), "{out:?}");
    let out = app
        .cli(&["event", "import", &path, "--slug", &format!("copy-{tag}")])
        .await;
    assert!(!out.success(), "same external id, new slug: {out:?}");
    assert_eq!(
        app.audit_head().await,
        head,
        "a refused import writes nothing"
    );

    // Any changed byte, or another pinned key: refused before anything is written.
    let new_slug = format!("copy-{tag}");
    let new_id = format!("evt_copy_{tag}");
    let import_as = |f: &str| {
        vec![
            "event".to_owned(),
            "import".to_owned(),
            f.to_owned(),
            "--slug".to_owned(),
            new_slug.clone(),
            "--external-id".to_owned(),
            new_id.clone(),
        ]
    };
    let tampered = dir.path().join("tampered.json");
    std::fs::write(&tampered, text.replacen("Plain title", "Plain titlf", 1)).expect("write");
    let args = import_as(tampered.to_str().expect("utf-8"));
    let out = app
        .cli(&args.iter().map(String::as_str).collect::<Vec<_>>())
        .await;
    assert!(!out.success(), "a tampered bundle was imported: {out:?}");
    assert!(out.stderr.contains("signature"), "{out:?}");
    let mut pinned = import_as(&path);
    pinned.extend(["--key".to_owned(), "ab".repeat(32)]);
    let out = app
        .cli(&pinned.iter().map(String::as_str).collect::<Vec<_>>())
        .await;
    assert!(!out.success(), "another key was trusted: {out:?}");
    assert_eq!(app.audit_head().await, head, "refusals write nothing");
    let r = app.gql_opt(admin, EVENT, json!({ "e": new_slug })).await;
    assert_eq!(r["data"]["event"], Value::Null, "{r}");

    // Under a new slug and external id: the structure, nothing published, no reviews.
    let args = import_as(&path);
    let out = app
        .cli(&args.iter().map(String::as_str).collect::<Vec<_>>())
        .await;
    assert!(out.success(), "import: {out:?}");
    assert_eq!(app.audit_head().await, head + 1, "one event.imported entry");
    let d = app.ok(admin, EVENT, json!({ "e": new_slug })).await;
    let e = &d["event"];
    assert_eq!(e["name"], "CSV");
    assert_eq!(e["registration"], "INVITE_ONLY");
    assert_eq!(e["tracks"], json!([{ "name": "Only track" }]));
    assert_eq!(e["rubric"], json!([{ "key": "impact" }]));
    assert_eq!(
        e["prizes"],
        json!([{ "name": "Grand prize", "position": 1 }])
    );
    assert_eq!(e["voting"], json!({ "mode": "ACCOUNT", "credits": 9 }));
    assert_eq!(e["results"], Value::Null);
    assert_eq!(e["publications"], json!([]));
    assert_eq!(
        e["projects"]["totalCount"], 3,
        "the hidden project stays hidden"
    );
    let r = app
        .gql_opt(
            None,
            "query($e: String!) { event(slug: $e) { voteTally { rank } } }",
            json!({ "e": new_slug }),
        )
        .await;
    assert_code(&r, "NOT_FOUND");
    let db = app.db.connect().await;
    assert_eq!(count(&db, &reviews_of(&new_slug)).await, 0);
    assert!(
        count(&db, &reviews_of(&slug)).await > 0,
        "the source kept its reviews"
    );

    // Another deployment (a fresh database and key) imports it with the key pinned; nobody
    // arrives with a password.
    let fingerprint = app
        .get("/.well-known/verdict-signing-key")
        .await
        .header("x-signing-key-fingerprint")
        .expect("fingerprint");
    let other = TestDb::create(app.backend())
        .await
        .expect("a fresh database");
    let key_file = other.key_file();
    let env = [
        ("VERDICT_DATABASE_URL", other.url()),
        ("VERDICT_KEY_FILE", key_file.to_str().expect("utf-8")),
    ];
    let within = Duration::from_secs(120);
    let out = verdict(&["event", "import", &path], &env, within).await;
    assert!(
        !out.success(),
        "another deployment's key is not trusted unpinned: {out:?}"
    );
    let out = verdict(
        &["event", "import", &path, "--key", &fingerprint],
        &env,
        within,
    )
    .await;
    assert!(out.success(), "pinned import: {out:?}");
    let fresh = other.connect().await;
    assert_eq!(
        count(
            &fresh,
            "SELECT COUNT(*) FROM users WHERE password_hash IS NOT NULL"
        )
        .await,
        0,
        "no passwords minted"
    );
    assert_eq!(count(&fresh, "SELECT COUNT(*) FROM users").await, 5);
    assert_eq!(count(&fresh, &reviews_of(&slug)).await, 0);
}
