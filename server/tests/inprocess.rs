//! In-process tests of the rules that live below the HTTP layer: statement counts of list
//! queries, audit atomicity under an injected failure, and the database's own constraints
//! and triggers. Each runs on SQLite and, when reachable (required under CI=true), on a
//! fresh PostgreSQL database.

use std::sync::Arc;

use sea_orm::{ConnectionTrait, EntityTrait, PaginatorTrait, TransactionTrait};
use verdict::audit::{self, Verification};
use verdict::config::Limits;
use verdict::db::Db;
use verdict::domain::{Actor, accounts, import};
use verdict::graphql::{self, RequestCtx, Services, bus::Bus};

/// The fresh databases, shared with the end-to-end harness.
#[path = "../../tests/e2e/harness/db.rs"]
mod test_db;

#[path = "../../tests/support/spring_hack.rs"]
mod spring_hack;

use test_db::{Backend, TestDb};

/// A fresh, migrated database of one backend, connected in process.
struct InProcess {
    db: Db,
    name: &'static str,
    /// Owns the database: its directory (SQLite) lives as long as the test does.
    _test_db: TestDb,
}

async fn connect(backend: Backend) -> Option<InProcess> {
    let fresh = TestDb::create(backend).await?;
    Some(InProcess {
        db: fresh.connect().await,
        name: backend.name(),
        _test_db: fresh,
    })
}

async fn sqlite() -> InProcess {
    connect(Backend::Sqlite)
        .await
        .expect("SQLite is always there")
}

/// SQLite, and PostgreSQL when reachable (required under CI=true).
async fn backends() -> Vec<InProcess> {
    let mut v = vec![sqlite().await];
    v.extend(connect(Backend::Postgres).await);
    v
}

/// The generated `spring-hack-2026` event (the repository's own fixture).
fn fixture() -> serde_json::Value {
    spring_hack::fixture()
}

async fn import_fixture(db: &Db) {
    let f = import::parse(fixture()).expect("fixture parses");
    let txn = db.write().await.expect("begin");
    import::import(&txn, "", &f).await.expect("import");
    txn.commit().await.expect("commit");
}

async fn site_admin(db: &Db) -> Actor {
    let txn = db.write().await.expect("begin");
    accounts::admin_create(&txn, "root@example.org")
        .await
        .expect("admin");
    txn.commit().await.expect("commit");
    let user = verdict::domain::user_by_email(&db.conn, "root@example.org")
        .await
        .unwrap()
        .unwrap();
    Actor { user }
}

fn services(db: &Db) -> Services {
    static KEY: std::sync::OnceLock<Arc<verdict::crypto::signing::Signer25519>> =
        std::sync::OnceLock::new();
    let signer = KEY
        .get_or_init(|| {
            let dir = std::env::temp_dir().join(format!("verdict-it-{}", std::process::id()));
            std::fs::create_dir_all(&dir).expect("key dir");
            Arc::new(
                verdict::crypto::signing::Signer25519::load_or_create(&dir.join("signing.key"))
                    .expect("key"),
            )
        })
        .clone();
    Services {
        db: db.clone(),
        bus: Bus::new(),
        // A long batching window makes batches deterministic on a busy machine, so the
        // statement counts below measure the loaders' structure, not the scheduler.
        limits: Limits {
            loader_batch_ms: 25,
            ..Limits::default()
        },
        tls_cookies: false,
        signer,
    }
}

async fn execute(db: &Db, actor: Option<&Actor>, query: &str) -> async_graphql::Response {
    let s = services(db);
    let schema = graphql::schema(s.clone(), true);
    let caller = actor.map(|a| (a.user.clone(), accounts::Credential::Session { id: 0 }));
    let rc = Arc::new(RequestCtx::new("test".into(), "127.0.0.1".into(), caller));
    let mut req = async_graphql::Request::new(query);
    req.data = graphql::request_data(&s, rc);
    schema.execute(req).await
}

#[tokio::test]
async fn gallery_page_of_50_costs_a_constant_number_of_statements() {
    for t in backends().await {
        import_fixture(&t.db).await;
        let admin = site_admin(&t.db).await;
        let mut used = vec![];
        for n in [5, 50] {
            let q = format!(
                r#"{{ event(slug: "spring-hack-2026") {{ projects(first: {n}) {{ totalCount edges {{ node {{
                title status track {{ name }} team {{ name members {{ displayName }} projects {{ title }} }}
                event {{ name }} }} }} }} }} }}"#
            );
            let before = t.db.statement_count();
            let resp = execute(&t.db, Some(&admin), &q).await;
            used.push(t.db.statement_count() - before);
            assert!(resp.errors.is_empty(), "{}: {:?}", t.name, resp.errors);
            let data = resp.data.into_json().unwrap();
            let edges = data["event"]["projects"]["edges"].as_array().unwrap().len();
            assert_eq!(edges, n, "{}", t.name);
        }
        println!(
            "{}: gallery with tracks, teams, members, team projects, events: {} statements for 5 projects, {} for 50",
            t.name, used[0], used[1]
        );
        // One statement per hop and batch: event, count, page, tracks, teams, team members
        // (links + users), team projects, events, the caller's access. Ten times the page
        // costs (almost) nothing more; one query per project would be hundreds.
        // A batch may split in two when a busy machine outlasts the batching window, so
        // the bounds allow one split per hop; one query per item would be hundreds.
        assert!(
            used[1] <= 22,
            "{}: {} statements for one gallery page of 50",
            t.name,
            used[1]
        );
        assert!(
            used[1] <= 2 * used[0],
            "{}: statements grow with the page: {used:?}",
            t.name
        );
    }
}

#[tokio::test]
async fn judging_lists_cost_a_constant_number_of_statements() {
    let t = sqlite().await;
    import_fixture(&t.db).await;
    let admin = site_admin(&t.db).await;
    let mut used = vec![];
    for n in [10, 100] {
        let q = format!(
            r#"{{ event(slug: "spring-hack-2026") {{ assignments(first: {n}) {{ edges {{ node {{
            status project {{ title team {{ name }} }} judge {{ externalId user {{ displayName }} }}
            review {{ version scores {{ criterion value }} }} }} }} }} }} }}"#
        );
        let before = t.db.statement_count();
        let resp = execute(&t.db, Some(&admin), &q).await;
        used.push(t.db.statement_count() - before);
        assert!(resp.errors.is_empty(), "{:?}", resp.errors);
        let data = resp.data.into_json().unwrap();
        assert_eq!(
            data["event"]["assignments"]["edges"]
                .as_array()
                .unwrap()
                .len(),
            n
        );
    }
    println!(
        "assignments with projects, teams, judges, users, reviews: {} statements for 10, {} for 100",
        used[0], used[1]
    );
    // As above: room for one split batch per hop, nowhere near one query per assignment.
    assert!(used[1] <= 18, "{} statements for 100 assignments", used[1]);
    assert!(
        used[1] <= 2 * used[0],
        "statements grow with the page: {used:?}"
    );
}

#[tokio::test]
async fn a_failing_audit_append_rolls_back_the_business_write() {
    for t in backends().await {
        import_fixture(&t.db).await;
        let admin = site_admin(&t.db).await;
        let fail = match t.name {
            "postgres" => vec![
                "CREATE FUNCTION inject_failure() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'injected'; END $$",
                "CREATE TRIGGER inject BEFORE INSERT ON audit_events FOR EACH ROW EXECUTE FUNCTION inject_failure()",
            ],
            _ => vec![
                "CREATE TRIGGER inject BEFORE INSERT ON audit_events BEGIN SELECT RAISE(ABORT, 'injected'); END",
            ],
        };
        for sql in fail {
            t.db.conn.execute_unprepared(sql).await.unwrap();
        }
        let tracks_before = entity::track::Entity::find()
            .count(&t.db.conn)
            .await
            .unwrap();
        let resp = execute(
            &t.db,
            Some(&admin),
            r#"mutation { createTrack(event: "spring-hack-2026", name: "Robotics") { id } }"#,
        )
        .await;
        assert_eq!(resp.errors.len(), 1, "{}", t.name);
        let err = &resp.errors[0];
        assert!(
            !err.message.contains("injected"),
            "{}: internal detail leaked: {}",
            t.name,
            err.message
        );
        let tracks_after = entity::track::Entity::find()
            .count(&t.db.conn)
            .await
            .unwrap();
        assert_eq!(
            tracks_before, tracks_after,
            "{}: the track was written without its audit entry",
            t.name
        );
    }
}

#[tokio::test]
async fn the_database_refuses_to_rewrite_or_fork_the_audit_chain() {
    for t in backends().await {
        import_fixture(&t.db).await;
        let c = &t.db.conn;
        for sql in [
            "UPDATE audit_events SET action = 'x.forged' WHERE seq = 1",
            "DELETE FROM audit_events WHERE seq = 1",
            "DELETE FROM audit_head",
            "UPDATE audit_head SET seq = 5",
            "INSERT INTO audit_events (seq, occurred_at, actor, event, action, object_type, object_id, payload, payload_hash, prev_hash, row_hash)
             VALUES (9, 't', '', '', 'x.forged', 'x', 'x', '{}', repeat('a', 64), repeat('b', 64), repeat('c', 64))",
        ] {
            let sql = if t.name == "sqlite" { sql.replace("repeat('a', 64)", "'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa'")
                .replace("repeat('b', 64)", "'bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb'")
                .replace("repeat('c', 64)", "'cccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccc'") } else { sql.to_owned() };
            assert!(c.execute_unprepared(&sql).await.is_err(), "{}: the database accepted: {sql}", t.name);
        }
        assert!(
            matches!(
                audit::verify(c).await.unwrap(),
                Verification::Intact { seq: 1, .. }
            ),
            "{}",
            t.name
        );
    }
}

#[tokio::test]
async fn audit_verify_names_the_first_tampered_row() {
    // An attacker with raw database access can drop the triggers; verification still
    // catches the edit by recomputing the chain.
    let t = sqlite().await;
    let admin = site_admin(&t.db).await;
    import_fixture(&t.db).await;
    for name in ["x", "y", "z"] {
        let txn = t.db.write().await.unwrap();
        let e = verdict::domain::event_by_slug(&txn, "spring-hack-2026")
            .await
            .unwrap();
        verdict::domain::events::create_track(&txn, &admin, &e, name, None)
            .await
            .unwrap();
        txn.commit().await.unwrap();
    }
    assert!(matches!(
        audit::verify(&t.db.conn).await.unwrap(),
        Verification::Intact { seq: 5, .. }
    ));
    t.db.conn
        .execute_unprepared("DROP TRIGGER audit_events_no_update")
        .await
        .unwrap();
    t.db.conn
        .execute_unprepared(
            "UPDATE audit_events SET payload = '{\"name\":\"forged\"}' WHERE seq = 3",
        )
        .await
        .unwrap();
    match audit::verify(&t.db.conn).await.unwrap() {
        Verification::Broken { seq, .. } => assert_eq!(seq, 3),
        other => panic!("tampering went unnoticed: {other:?}"),
    }
}

#[tokio::test]
async fn the_database_enforces_same_event_tracks_and_the_submission_invariant() {
    for t in backends().await {
        import_fixture(&t.db).await;
        let admin = site_admin(&t.db).await;
        // A second event with its own track.
        let txn = t.db.write().await.unwrap();
        let f = verdict::domain::events::EventFields {
            slug: Some("other".into()),
            name: Some("Other".into()),
            submissions_open: Some(chrono::Utc::now()),
            submissions_close: Some(chrono::Utc::now() + chrono::Duration::days(1)),
            ..Default::default()
        };
        let other = verdict::domain::events::create_event(&txn, &admin, f)
            .await
            .unwrap();
        let foreign = verdict::domain::events::create_track(&txn, &admin, &other, "Foreign", None)
            .await
            .unwrap();
        txn.commit().await.unwrap();
        let p = verdict::domain::find_project(&t.db.conn, "prj_001", None)
            .await
            .unwrap()
            .unwrap();
        let c = &t.db.conn;
        let cross = format!(
            "UPDATE projects SET track_id = {} WHERE id = {}",
            foreign.id, p.id
        );
        assert!(
            c.execute_unprepared(&cross).await.is_err(),
            "{}: a project took another event's track",
            t.name
        );
        let unsubmitted = format!(
            "UPDATE projects SET submitted_at = NULL WHERE id = {}",
            p.id
        );
        assert!(
            c.execute_unprepared(&unsubmitted).await.is_err(),
            "{}: submitted without submitted_at",
            t.name
        );
        let bad_url = format!(
            "UPDATE projects SET repo_url = 'javascript:alert(1)' WHERE id = {}",
            p.id
        );
        assert!(
            c.execute_unprepared(&bad_url).await.is_err(),
            "{}: non-http URL stored",
            t.name
        );
        let upper = "UPDATE users SET email = 'Root@Example.org' WHERE email = 'root@example.org'";
        assert!(
            c.execute_unprepared(upper).await.is_err(),
            "{}: mixed-case email stored",
            t.name
        );
        let txn = t.db.conn.begin().await.unwrap();
        let m = entity::team_member::Entity::find()
            .one(&txn)
            .await
            .unwrap()
            .unwrap();
        let dup = format!(
            "INSERT INTO team_members (event_id, team_id, user_id, created_at) SELECT event_id, team_id, user_id, created_at FROM team_members WHERE id = {}",
            m.id
        );
        assert!(
            txn.execute_unprepared(&dup).await.is_err(),
            "{}: a person joined two teams",
            t.name
        );
    }
}
