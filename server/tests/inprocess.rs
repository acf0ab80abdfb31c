//! In-process tests of the rules that live below the HTTP layer: statement counts of list
//! queries, audit atomicity under an injected failure, and the database's own constraints
//! and triggers. Each runs on SQLite and, when reachable (required under CI=true), on a
//! fresh PostgreSQL database.

use std::sync::Arc;

use sea_orm::{ConnectionTrait, EntityTrait, PaginatorTrait, TransactionTrait};
use verdict::audit::{self, Verification};
use verdict::config::Limits;
use verdict::db::Db;
use verdict::domain::{Actor, Write, accounts};
use verdict::graphql::{self, RequestCtx, Services};

/// The fresh databases, shared with the end-to-end harness.
#[path = "../../tests/e2e/harness/db.rs"]
mod test_db;

#[path = "../../tests/support/in_process.rs"]
mod in_process;
#[path = "../../tests/support/spring_hack.rs"]
mod spring_hack;

use in_process::site_admin;
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
    in_process::import_committed(db, fixture()).await;
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
    // A long batching window makes batches deterministic on a busy machine, so the
    // statement counts below measure the loaders' structure, not the scheduler.
    // The query-cost limits are lifted: these tests count statements for queries
    // far larger than a client may send (the e2e limits tests check the refusal).
    let limits = Limits {
        loader_batch_ms: 25,
        max_complexity: usize::MAX,
        max_complexity_anonymous: usize::MAX,
        max_fields: usize::MAX,
        ..Limits::default()
    };
    in_process::services(db, limits, signer)
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
        let w = Write::begin(&t.db, Some(admin.clone())).await.unwrap();
        let e = w.event("spring-hack-2026").await.unwrap();
        verdict::domain::events::create_track(&w, w.organizer(&e).await.unwrap(), name, None)
            .await
            .unwrap();
        w.commit().await.unwrap();
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
        let w = Write::begin(&t.db, Some(admin.clone())).await.unwrap();
        let f = verdict::domain::events::EventFields {
            slug: Some("other".into()),
            name: Some("Other".into()),
            submissions_open: Some(chrono::Utc::now()),
            submissions_close: Some(chrono::Utc::now() + chrono::Duration::days(1)),
            ..Default::default()
        };
        let other = verdict::domain::events::create_event(&w, f).await.unwrap();
        let org = w.organizer(&other).await.unwrap();
        let foreign = verdict::domain::events::create_track(&w, org, "Foreign", None)
            .await
            .unwrap();
        w.commit().await.unwrap();
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

/// Row counts of every table of the schema, by name, and the audit head.
async fn snapshot(db: &Db) -> (Vec<(String, i64)>, i64) {
    let list = match db.backend() {
        sea_orm::DbBackend::Postgres => {
            "SELECT tablename AS name FROM pg_tables WHERE schemaname = 'public' ORDER BY 1"
        }
        _ => {
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY 1"
        }
    };
    let rows = db
        .conn
        .query_all_raw(sea_orm::Statement::from_string(db.backend(), list))
        .await
        .expect("table list");
    let mut counts = vec![];
    for r in rows {
        let name: String = r.try_get("", "name").expect("table name");
        let c = db
            .conn
            .query_one_raw(sea_orm::Statement::from_string(
                db.backend(),
                format!("SELECT count(*) AS n FROM {name}"),
            ))
            .await
            .expect("count")
            .expect("a row");
        let n: i64 = c.try_get("", "n").expect("count value");
        counts.push((name, n));
    }
    assert!(
        counts.len() >= 15,
        "the walk found too few tables: {counts:?}"
    );
    let head = match audit::verify(&db.conn).await.expect("verify") {
        Verification::Intact { seq, .. } => seq,
        other => panic!("audit chain: {other:?}"),
    };
    (counts, head)
}

/// One query per field reachable from `Query`, each reached by its shortest path, with the
/// required arguments filled from the fixture. Returns (field, query) pairs.
fn every_query_field() -> Vec<(String, String)> {
    use async_graphql::parser::types::{BaseType, TypeKind, TypeSystemDefinition};
    use std::collections::{HashMap, HashSet, VecDeque};

    let doc = async_graphql::parser::parse_schema(graphql::sdl()).expect("the SDL parses");
    // Per object type: (field, [(argument, its named type, required)], the field's type).
    type Field = (String, Vec<(String, String, bool)>, String);
    let mut objects: HashMap<String, Vec<Field>> = HashMap::new();
    let mut enums: HashMap<String, String> = HashMap::new();
    for def in &doc.definitions {
        let TypeSystemDefinition::Type(t) = def else {
            continue;
        };
        let name = t.node.name.node.to_string();
        match &t.node.kind {
            TypeKind::Object(o) => {
                let fields = o
                    .fields
                    .iter()
                    .map(|f| {
                        let args = f
                            .node
                            .arguments
                            .iter()
                            .map(|a| {
                                let ty = &a.node.ty.node;
                                let base = match &ty.base {
                                    BaseType::Named(n) => n.to_string(),
                                    BaseType::List(_) => "List".to_owned(),
                                };
                                (a.node.name.node.to_string(), base, !ty.nullable)
                            })
                            .collect();
                        let mut ty = &f.node.ty.node;
                        while let BaseType::List(inner) = &ty.base {
                            ty = inner;
                        }
                        let BaseType::Named(out) = &ty.base else {
                            unreachable!()
                        };
                        (f.node.name.node.to_string(), args, out.to_string())
                    })
                    .collect();
                objects.insert(name, fields);
            }
            TypeKind::Enum(e) => {
                if let Some(v) = e.values.first() {
                    enums.insert(name, v.node.value.node.to_string());
                }
            }
            _ => {}
        }
    }
    let arg_value = |field: &str, arg: &str, ty: &str| -> String {
        match (ty, arg) {
            ("String", "event" | "slug") => format!("\"{}\"", spring_hack::SLUG),
            ("String", _) => "\"x\"".to_owned(),
            ("ID", _) if field == "project" || arg == "project" => "\"prj_001\"".to_owned(),
            ("ID", "team") => "\"tm_001\"".to_owned(),
            ("ID", "track") => "\"trk_01\"".to_owned(),
            ("ID", "judge") => "\"jdg_01\"".to_owned(),
            ("ID", _) => "\"prj_001\"".to_owned(),
            ("Int", _) => "5".to_owned(),
            ("Float", _) => "1.0".to_owned(),
            ("Boolean", _) => "false".to_owned(),
            (other, _) => enums
                .get(other)
                .cloned()
                .unwrap_or_else(|| panic!("no test value for {field}({arg}: {other})")),
        }
    };
    // Breadth first from Query: each (type, field) once, by its shortest path.
    let mut seen: HashSet<(String, String)> = HashSet::new();
    let mut queue: VecDeque<(String, Vec<String>)> = VecDeque::from([("Query".to_owned(), vec![])]);
    let mut visited_types: HashSet<String> = HashSet::new();
    let mut out = vec![];
    while let Some((ty, path)) = queue.pop_front() {
        if !visited_types.insert(ty.clone()) {
            continue;
        }
        let Some(fields) = objects.get(&ty) else {
            continue;
        };
        for (name, args, out_ty) in fields {
            if !seen.insert((ty.clone(), name.clone())) {
                continue;
            }
            let given: Vec<String> = args
                .iter()
                .filter(|(_, _, required)| *required)
                .map(|(a, t, _)| format!("{a}: {}", arg_value(name, a, t)))
                .collect();
            let call = if given.is_empty() {
                name.clone()
            } else {
                format!("{name}({})", given.join(", "))
            };
            let leaf = if objects.contains_key(out_ty) {
                format!("{call} {{ __typename }}")
            } else {
                call.clone()
            };
            let mut q = leaf;
            for outer in path.iter().rev() {
                q = format!("{outer} {{ {q} }}");
            }
            out.push((format!("{ty}.{name}"), format!("{{ {q} }}")));
            if objects.contains_key(out_ty) {
                let mut next = path.clone();
                next.push(call);
                queue.push_back((out_ty.clone(), next));
            }
        }
    }
    out
}

/// No query writes: every field reachable from `Query`, run as a site admin on an event
/// with reviews, a calibration run and a publication, leaves every table's row count and
/// the audit head as they were. (`Event.export`, a query that appended an audit entry, was
/// the case that made this a class to close.)
#[tokio::test]
async fn no_query_writes() {
    for t in backends().await {
        import_fixture(&t.db).await;
        let admin = site_admin(&t.db).await;
        let event = verdict::domain::event_by_slug(&t.db.conn, spring_hack::SLUG)
            .await
            .expect("event");
        let signer = services(&t.db).signer.clone();
        let run = verdict::domain::results::run_calibration(
            &t.db,
            &admin,
            &event,
            &signer,
            Some(1),
            Some(20),
        )
        .await
        .expect("run");
        let w = Write::begin(&t.db, Some(admin.clone()))
            .await
            .expect("begin");
        let org = w.organizer(&event).await.expect("organizer");
        verdict::domain::results::publish(&w, org, &signer, &run.public_id, false)
            .await
            .expect("publish");
        w.commit().await.expect("commit");

        let before = snapshot(&t.db).await;
        let queries = every_query_field();
        assert!(queries.len() > 200, "too few fields: {}", queries.len());
        eprintln!("{}: {} fields reachable from Query", t.name, queries.len());
        let mut answered = 0;
        for (field, q) in &queries {
            let r = execute(&t.db, Some(&admin), q).await;
            if r.errors.is_empty() {
                answered += 1;
            } else {
                eprintln!("{}: {field}: {:?}", t.name, r.errors[0].message);
            }
        }
        assert!(
            answered * 10 >= queries.len() * 9,
            "{}: most fields answer for a site admin: {answered} of {}",
            t.name,
            queries.len()
        );
        assert_eq!(
            snapshot(&t.db).await,
            before,
            "{}: a query changed a table or the audit log",
            t.name
        );
    }
}

/// Verdict's one clock is the database's (`verdict::db::now`): a mutation's window checks
/// and the timestamps it writes come from it, read in the mutation's transaction, so that
/// server processes sharing one PostgreSQL agree however their hosts' clocks drift.
#[tokio::test]
async fn the_clock_is_the_databases_read_in_the_transaction() {
    use chrono::{DateTime, Utc};
    use sea_orm::{DbBackend, QueryOrder, Statement};
    for t in backends().await {
        let w = verdict::domain::Write::begin(&t.db, None)
            .await
            .expect("begin");
        let txn = w.txn();
        if t.db.backend() == DbBackend::Postgres {
            // The transaction's time as PostgreSQL states it, read directly.
            let direct: DateTime<Utc> = txn
                .query_one_raw(Statement::from_string(
                    DbBackend::Postgres,
                    "SELECT CURRENT_TIMESTAMP",
                ))
                .await
                .expect("select")
                .expect("a row")
                .try_get_by_index(0)
                .expect("a timestamptz");
            // The host's clock moves on; the transaction's does not. Reading the host's
            // clock here would give a time at least this much later than `direct`.
            tokio::time::sleep(std::time::Duration::from_millis(200)).await;
            let clock = verdict::db::now(txn).await.expect("clock");
            assert_eq!(
                clock, direct,
                "{}: the database's time, not the host's",
                t.name
            );
            assert_eq!(verdict::domain::clock(txn).await.expect("clock"), direct);
            assert_eq!(w.now(), direct, "{}: the write's one reading", t.name);
            // What a mutation writes in this transaction carries that same instant: a
            // user's created_at and its audit entry's occurred_at.
            accounts::admin_create(&w, "clock@example.org")
                .await
                .expect("admin");
            let user = verdict::domain::user_by_email(txn, "clock@example.org")
                .await
                .expect("read")
                .expect("the user");
            assert_eq!(user.created_at, direct, "{}: created_at", t.name);
            let last = entity::audit_event::Entity::find()
                .order_by_desc(entity::audit_event::Column::Seq)
                .one(txn)
                .await
                .expect("read")
                .expect("an audit row");
            assert_eq!(
                last.occurred_at,
                audit::canonical_time(direct),
                "{}",
                t.name
            );
        } else {
            // SQLite runs in this process: its clock is the host's, to the millisecond.
            let before = Utc::now();
            let clock = verdict::db::now(txn).await.expect("clock");
            let after = Utc::now();
            assert_eq!(clock.timestamp_subsec_nanos() % 1_000_000, 0, "{clock}");
            assert!(
                before - chrono::Duration::milliseconds(1) <= clock && clock <= after,
                "{}: {before} <= {clock} <= {after}",
                t.name
            );
        }
        w.rollback().await;
    }
}

async fn execute_with(s: &Services, actor: Option<&Actor>, query: &str) -> async_graphql::Response {
    let schema = graphql::schema(s.clone(), true);
    let caller = actor.map(|a| (a.user.clone(), accounts::Credential::Session { id: 0 }));
    let rc = Arc::new(RequestCtx::new("test".into(), "127.0.0.1".into(), caller));
    let mut req = async_graphql::Request::new(query);
    req.data = graphql::request_data(s, rc);
    schema.execute(req).await
}

/// Rankings read through many aliases (the published ranking, a run's projects and judges)
/// cost what one does: the run's result is parsed once and the event's projects and judges
/// are loaded once, not once per field.
#[tokio::test]
async fn aliased_rankings_parse_the_run_once_and_load_the_roster_once() {
    for t in backends().await {
        import_fixture(&t.db).await;
        let admin = site_admin(&t.db).await;
        let event = verdict::domain::event_by_slug(&t.db.conn, spring_hack::SLUG)
            .await
            .expect("event");
        let s = services(&t.db);
        let run = verdict::domain::results::run_calibration(
            &t.db,
            &admin,
            &event,
            &s.signer,
            Some(1),
            Some(20),
        )
        .await
        .expect("run");
        let w = Write::begin(&t.db, Some(admin.clone()))
            .await
            .expect("begin");
        let org = w.organizer(&event).await.expect("organizer");
        verdict::domain::results::publish(&w, org, &s.signer, &run.public_id, false)
            .await
            .expect("publish");
        w.commit().await.expect("commit");

        let mut used = vec![];
        for n in [1, 10] {
            let fields: String = (0..n)
                .map(|i| {
                    format!(
                        "r{i}: results {{ ranking {{ rank project {{ title }} }} }} \
                         c{i}: calibrationRuns {{ projects {{ rank projectExternalId }} judges {{ flag judge {{ externalId }} }} }} "
                    )
                })
                .collect();
            let q = format!(
                r#"{{ event(slug: "{}") {{ {fields} }} }}"#,
                spring_hack::SLUG
            );
            let before = t.db.statement_count();
            let resp = execute_with(&s, Some(&admin), &q).await;
            used.push(t.db.statement_count() - before);
            assert!(resp.errors.is_empty(), "{}: {:?}", t.name, resp.errors);
            let data = resp.data.into_json().unwrap();
            assert_eq!(
                data["event"][format!("r{}", n - 1)]["ranking"]
                    .as_array()
                    .map(Vec::len),
                Some(55),
                "{}: every submitted project is in the published ranking",
                t.name
            );
        }
        println!(
            "{}: rankings: {} statements for 1 alias of each, {} for 10",
            t.name, used[0], used[1]
        );
        // Ten aliases of each add the statements of the aliased lists themselves (runs,
        // publications: one per alias, as any list), not the roster's two per field.
        assert!(
            used[1] <= used[0] + 2 * 9 + 4,
            "{}: statements per alias: {used:?}",
            t.name
        );
        assert_eq!(
            s.parsed_runs.parses(),
            1,
            "{}: the run's result is parsed once, for every field and request",
            t.name
        );
    }
}

/// The live leaderboard is computed once per burst of changes and event, however many
/// organizers follow it, and every one of them receives that computation.
#[tokio::test]
async fn leaderboard_is_computed_once_per_burst_for_every_subscriber() {
    use verdict::graphql::bus::BusEvent;

    let t = sqlite().await;
    import_fixture(&t.db).await;
    let caller = signed_in_admin(&t.db).await;
    let event = verdict::domain::event_by_slug(&t.db.conn, spring_hack::SLUG)
        .await
        .expect("event");
    let s = services(&t.db);

    const SUBSCRIBERS: usize = 3;
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let query = format!(
        r#"subscription {{ leaderboardUpdated(event: "{}") {{ computedAt projects {{ rank }} }} }}"#,
        spring_hack::SLUG
    );
    let tasks = subscribers(&s, Some(caller), &query, SUBSCRIBERS, &tx);
    let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(10);
    while s.leaderboards.followers(event.id) < SUBSCRIBERS {
        assert!(
            tokio::time::Instant::now() < deadline,
            "subscribers register"
        );
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }

    for burst in 1..=2u64 {
        // A burst of changes, as fifty saved reviews publish them (and noise from another
        // event, which must not count).
        for _ in 0..50 {
            s.bus
                .publish(BusEvent::JudgingChanged { event_id: event.id });
            s.bus.publish(BusEvent::JudgingChanged {
                event_id: event.id + 1000,
            });
        }
        let mut got = vec![];
        while got.len() < SUBSCRIBERS {
            let msg = tokio::time::timeout(std::time::Duration::from_secs(30), rx.recv())
                .await
                .expect("every subscriber receives the leaderboard")
                .expect("open");
            got.push(msg);
        }
        // Nothing more follows the burst.
        tokio::time::sleep(
            <verdict::graphql::feed::Leaderboards as verdict::graphql::feed::Kind>::QUIET * 3,
        )
        .await;
        assert!(
            rx.try_recv().is_err(),
            "one message per subscriber and burst"
        );
        let mut who: Vec<usize> = got.iter().map(|(i, _)| *i).collect();
        who.sort();
        assert_eq!(who, (0..SUBSCRIBERS).collect::<Vec<_>>());
        let at = |data: &serde_json::Value| data["leaderboardUpdated"]["computedAt"].clone();
        assert!(
            got.iter().all(|(_, data)| at(data) == at(&got[0].1)),
            "all receive the same computation: {got:?}"
        );
        assert_eq!(
            s.leaderboards.computations(),
            burst,
            "one computation per burst, not per subscriber or change"
        );
    }

    // The feed ends with its last subscriber; changes then compute nothing.
    for task in tasks {
        task.abort();
    }
    let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(10);
    while s.leaderboards.running() > 0 {
        assert!(tokio::time::Instant::now() < deadline, "the feed ends");
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    s.bus
        .publish(BusEvent::JudgingChanged { event_id: event.id });
    tokio::time::sleep(
        <verdict::graphql::feed::Leaderboards as verdict::graphql::feed::Kind>::QUIET * 3,
    )
    .await;
    assert_eq!(s.leaderboards.computations(), 2);
}

/// A `projectSubmitted` subscriber that reads nothing while far more is published than the
/// bus holds costs the server no more than the bus's fixed ring: the bus never holds more
/// than its capacity, and when the subscriber reads again it is told how many messages it
/// missed (an error, not silence) and then gets the newest ones, after which the ring is
/// empty.
#[tokio::test]
async fn a_lagging_subscriber_is_told_what_it_missed_and_the_bus_stays_bounded() {
    use futures_util::StreamExt;
    use sea_orm::{ColumnTrait, QueryFilter};
    use std::time::Duration;
    use verdict::graphql::bus::{BusEvent, CAPACITY};

    let t = sqlite().await;
    import_fixture(&t.db).await;
    let event = verdict::domain::event_by_slug(&t.db.conn, spring_hack::SLUG)
        .await
        .expect("event");
    let project = Arc::new(
        entity::project::Entity::find()
            .filter(entity::project::Column::EventId.eq(event.id))
            .one(&t.db.conn)
            .await
            .expect("read")
            .expect("the fixture has projects"),
    );
    let submitted = || BusEvent::ProjectSubmitted {
        event_id: event.id,
        project: project.clone(),
    };
    let s = services(&t.db);
    let schema = graphql::schema(s.clone(), true);
    let rc = Arc::new(RequestCtx::new("test".into(), "127.0.0.1".into(), None).long_lived());
    let mut req = async_graphql::Request::new(format!(
        r#"subscription {{ projectSubmitted(event: "{}") {{ id }} }}"#,
        spring_hack::SLUG
    ));
    req.data = graphql::request_data(&s, rc);
    let mut stream = schema.execute_stream(req);

    // Live once a submission published now reaches it; then nothing is left to read.
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    loop {
        s.bus.publish(submitted());
        if let Ok(first) = tokio::time::timeout(Duration::from_millis(100), stream.next()).await {
            assert!(first.is_some_and(|r| r.errors.is_empty()));
            break;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "the subscription starts"
        );
    }
    while tokio::time::timeout(Duration::from_millis(200), stream.next())
        .await
        .is_ok()
    {}
    assert_eq!(s.bus.held(), 0);

    let published = 3 * CAPACITY;
    for _ in 0..published {
        s.bus.publish(submitted());
        assert!(s.bus.held() <= CAPACITY, "{} held", s.bus.held());
    }
    assert_eq!(
        s.bus.held(),
        CAPACITY,
        "the newest events wait for the subscriber"
    );

    let wait = Duration::from_secs(10);
    let told = tokio::time::timeout(wait, stream.next())
        .await
        .expect("a message")
        .expect("the stream goes on");
    let missed = format!("missed {} messages", published - CAPACITY);
    assert!(
        told.errors
            .first()
            .is_some_and(|e| e.message.contains(&missed)),
        "the subscriber is told it {missed}: {:?}",
        told.errors
    );
    for i in 0..CAPACITY {
        let r = tokio::time::timeout(wait, stream.next())
            .await
            .expect("a message")
            .expect("the stream goes on");
        assert!(
            r.errors.is_empty(),
            "message {i} after the gap: {:?}",
            r.errors
        );
    }
    assert_eq!(s.bus.held(), 0, "read, the ring lets everything go");
    assert!(
        tokio::time::timeout(Duration::from_millis(200), stream.next())
            .await
            .is_err(),
        "nothing more than the newest {CAPACITY}"
    );
}

/// A site admin signed in with a real session, as a websocket caller is.
async fn signed_in_admin(db: &Db) -> (entity::user::Model, accounts::Credential) {
    let email = "root@example.org";
    let w = verdict::domain::Write::begin(db, None)
        .await
        .expect("begin");
    let password = accounts::admin_create(&w, email).await.expect("admin");
    w.commit().await.expect("commit");
    let (_, token) = accounts::log_in(db, email, &password, "test", 100)
        .await
        .expect("log in");
    accounts::authenticate(&db.conn, &token)
        .await
        .expect("authenticate")
        .expect("a live session")
}

/// Subscribes `n` callers to `query` and returns their tasks and what they receive: the
/// subscriber's number and the message's data.
fn subscribers(
    s: &Services,
    caller: Option<(entity::user::Model, accounts::Credential)>,
    query: &str,
    n: usize,
    tx: &tokio::sync::mpsc::UnboundedSender<(usize, serde_json::Value)>,
) -> Vec<tokio::task::JoinHandle<()>> {
    use futures_util::StreamExt;
    let schema = graphql::schema(s.clone(), true);
    (0..n)
        .map(|i| {
            let rc = Arc::new(
                RequestCtx::new("test".into(), "127.0.0.1".into(), caller.clone()).long_lived(),
            );
            let mut req = async_graphql::Request::new(query);
            req.data = graphql::request_data(s, rc);
            let mut stream = schema.execute_stream(req);
            let tx = tx.clone();
            tokio::spawn(async move {
                while let Some(resp) = stream.next().await {
                    assert!(resp.errors.is_empty(), "{:?}", resp.errors);
                    let _ = tx.send((i, resp.data.into_json().unwrap()));
                }
            })
        })
        .collect()
}

/// Statements one change costs its subscribers: `n` of them follow `query`, `change` is
/// published once, and every subscriber must receive one message (checked by `check`).
#[allow(clippy::too_many_arguments)]
async fn statements_per_change(
    t: &InProcess,
    s: &Services,
    caller: Option<(entity::user::Model, accounts::Credential)>,
    query: &str,
    n: usize,
    followers: impl Fn() -> usize,
    change: verdict::graphql::bus::BusEvent,
    check: impl Fn(&serde_json::Value),
) -> u64 {
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let tasks = subscribers(s, caller, query, n, &tx);
    let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(20);
    while followers() < n {
        assert!(
            tokio::time::Instant::now() < deadline,
            "subscribers register"
        );
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    let before = t.db.statement_count();
    s.bus.publish(change);
    let mut who = vec![];
    while who.len() < n {
        let (i, data) = tokio::time::timeout(std::time::Duration::from_secs(30), rx.recv())
            .await
            .expect("every subscriber receives the change")
            .expect("open");
        check(&data);
        who.push(i);
    }
    let used = t.db.statement_count() - before;
    who.sort();
    assert_eq!(who, (0..n).collect::<Vec<_>>(), "{}", t.name);
    for task in tasks {
        task.abort();
    }
    used
}

/// Judging progress and published results are computed once per change and event, and
/// every follower's credential and role are checked in a few statements for all of them:
/// what a change costs does not grow with the number of subscribers.
#[tokio::test]
async fn progress_and_publications_cost_the_same_for_one_subscriber_or_fifty() {
    use verdict::graphql::bus::BusEvent;
    for t in backends().await {
        import_fixture(&t.db).await;
        let caller = signed_in_admin(&t.db).await;
        let admin = Actor {
            user: caller.0.clone(),
        };
        let event = verdict::domain::event_by_slug(&t.db.conn, spring_hack::SLUG)
            .await
            .expect("event");
        let s = services(&t.db);

        let progress = format!(
            r#"subscription {{ judgingProgress(event: "{}") {{ assignments done }} }}"#,
            spring_hack::SLUG
        );
        let mut used = vec![];
        for n in [1, 50] {
            used.push(
                statements_per_change(
                    &t,
                    &s,
                    Some(caller.clone()),
                    &progress,
                    n,
                    || s.progress.followers(event.id),
                    BusEvent::JudgingChanged { event_id: event.id },
                    |d| assert!(d["judgingProgress"]["assignments"].as_i64() > Some(0)),
                )
                .await,
            );
        }
        println!(
            "{}: judgingProgress: {} statements per change for 1 subscriber, {} for 50",
            t.name, used[0], used[1]
        );
        assert_eq!(used[0], used[1], "{}: {used:?}", t.name);
        assert_eq!(s.progress.computations(), 2, "{}", t.name);

        let run = verdict::domain::results::run_calibration(
            &t.db,
            &admin,
            &event,
            &s.signer,
            Some(1),
            Some(20),
        )
        .await
        .expect("run");
        let w = Write::begin(&t.db, Some(admin.clone()))
            .await
            .expect("begin");
        let org = w.organizer(&event).await.expect("organizer");
        let (publication, _) =
            verdict::domain::results::publish(&w, org, &s.signer, &run.public_id, false)
                .await
                .expect("publish");
        w.commit().await.expect("commit");
        let published = format!(
            r#"subscription {{ resultsPublished(event: "{}") {{ version results {{ rankingPage(first: 5) {{ totalCount }} }} }} }}"#,
            spring_hack::SLUG
        );
        let mut used = vec![];
        for n in [1, 50] {
            used.push(
                statements_per_change(
                    &t,
                    &s,
                    None,
                    &published,
                    n,
                    || s.publications.followers(event.id),
                    BusEvent::ResultsPublished {
                        event_id: event.id,
                        publication_id: publication.id,
                    },
                    |d| assert_eq!(d["resultsPublished"]["version"], 1),
                )
                .await,
            );
        }
        println!(
            "{}: resultsPublished: {} statements per publication for 1 subscriber, {} for 50",
            t.name, used[0], used[1]
        );
        // The first reads the run once; later ones find it in memory.
        assert!(used[1] <= used[0], "{}: {used:?}", t.name);
    }
}

#[tokio::test]
async fn the_database_keeps_comments_as_posted_and_hides_them_only_softly() {
    use entity::{comment, project};
    use sea_orm::{ColumnTrait, QueryFilter};
    use verdict::domain::comments;
    for t in backends().await {
        import_fixture(&t.db).await;
        let admin = site_admin(&t.db).await;
        let p = project::Entity::find()
            .filter(project::Column::Status.eq(project::ProjectStatus::Submitted))
            .one(&t.db.conn)
            .await
            .unwrap()
            .unwrap();
        let w = Write::begin(&t.db, Some(admin.clone())).await.unwrap();
        let f = verdict::domain::events::EventFields {
            slug: Some("elsewhere".into()),
            name: Some("Elsewhere".into()),
            submissions_open: Some(chrono::Utc::now()),
            submissions_close: Some(chrono::Utc::now() + chrono::Duration::days(1)),
            ..Default::default()
        };
        let other = verdict::domain::events::create_event(&w, f).await.unwrap();
        let posted = comments::post_comment(&w, &p.public_id, "  As posted.  ")
            .await
            .unwrap();
        w.commit().await.unwrap();
        assert_eq!(posted.body, "As posted.", "{}", t.name);
        let c = &t.db.conn;
        let refused = [
            (
                format!(
                    "UPDATE comments SET body = 'Rewritten.' WHERE id = {}",
                    posted.id
                ),
                "what was posted changed",
            ),
            (
                format!(
                    "UPDATE comments SET author_id = \
                     (SELECT MIN(id) FROM users WHERE id <> comments.author_id) WHERE id = {}",
                    posted.id
                ),
                "the author was reassigned",
            ),
            (
                format!("DELETE FROM comments WHERE id = {}", posted.id),
                "a comment was deleted",
            ),
            (
                format!(
                    "UPDATE comments SET hidden_at = created_at WHERE id = {}",
                    posted.id
                ),
                "hidden without a reason",
            ),
            (
                format!(
                    "INSERT INTO comments (public_id, event_id, project_id, author_id, body, created_at) \
                     SELECT 'cmt_long', event_id, project_id, author_id, '{}', created_at FROM comments WHERE id = {}",
                    "x".repeat(2_001),
                    posted.id
                ),
                "a body of 2,001 characters",
            ),
            (
                format!(
                    "INSERT INTO comments (public_id, event_id, project_id, author_id, body, created_at) \
                     SELECT 'cmt_blank', event_id, project_id, author_id, '   ', created_at FROM comments WHERE id = {}",
                    posted.id
                ),
                "a blank body",
            ),
            (
                format!(
                    "INSERT INTO comments (public_id, event_id, project_id, author_id, body, created_at) \
                     SELECT 'cmt_cross', {}, project_id, author_id, body, created_at FROM comments WHERE id = {}",
                    other.id, posted.id
                ),
                "a comment in another event than its project's",
            ),
        ];
        for (sql, what) in refused {
            assert!(
                c.execute_unprepared(&sql).await.is_err(),
                "{}: {what}",
                t.name
            );
        }
        // Hiding keeps the row and what it said.
        let w = Write::begin(&t.db, Some(admin.clone())).await.unwrap();
        comments::hide_comment(&w, &posted.public_id, "Off-topic")
            .await
            .unwrap();
        w.commit().await.unwrap();
        let row = comment::Entity::find_by_id(posted.id)
            .one(c)
            .await
            .unwrap()
            .expect("the hidden comment stays");
        assert_eq!(row.body, "As posted.", "{}", t.name);
        assert_eq!(
            row.hidden_reason.as_deref(),
            Some("Off-topic"),
            "{}",
            t.name
        );
    }
}
