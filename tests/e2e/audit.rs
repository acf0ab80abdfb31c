//! The audit chain: one event per successful mutation, none per refused one, and a chain
//! that `verdict audit verify` accepts after a concurrent burst and rejects once tampered.

use futures_util::{StreamExt, stream};
use serde_json::{Value, json};

use crate::harness::{App, PASSWORD, error_code, op, str_at, tiny_fixture, unique};

e2e! {
    every_mutation_appends_exactly_one_audit_event,
    concurrent_burst_keeps_the_chain_intact,
    tampering_is_detected,
}

/// Every audit event of an event, oldest first, paging through `auditLog`.
pub async fn audit_log(app: &App, organizer: &str, event: &str) -> Vec<Value> {
    let mut out = vec![];
    let mut after: Option<String> = None;
    loop {
        let d = app
            .ok(
                Some(organizer),
                "query($e: String!, $after: String) { event(slug: $e) { auditLog(first: 100, after: $after) {
                    edges { node { seq occurredAt action objectType objectId payload prevHash rowHash actor } }
                    pageInfo { hasNextPage endCursor } } } }",
                json!({ "e": event, "after": after }),
            )
            .await;
        let log = &d["event"]["auditLog"];
        for e in log["edges"].as_array().expect("edges") {
            out.push(e["node"].clone());
        }
        if log["pageInfo"]["hasNextPage"] != true {
            break;
        }
        after = Some(str_at(log, "/pageInfo/endCursor"));
    }
    out.sort_by_key(|n| {
        n["seq"]
            .as_u64()
            .or_else(|| n["seq"].as_str().and_then(|s| s.parse().ok()))
    });
    out
}

fn seq_of(n: &Value) -> u64 {
    n["seq"]
        .as_u64()
        .or_else(|| n["seq"].as_str().and_then(|s| s.parse().ok()))
        .unwrap_or_else(|| panic!("seq is not a number: {n}"))
}

/// Whether a step's mutation should go through.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Outcome {
    Succeeds,
    Refused,
}
use Outcome::{Refused, Succeeds};

/// Run one mutation and check the audit head moved by exactly one (or not at all when it
/// is refused).
async fn step(
    app: &App,
    outcome: Outcome,
    label: &str,
    token: Option<&str>,
    query: &str,
    vars: Value,
) -> Value {
    let before = app.audit_head().await;
    let r = app.gql_opt(token, query, vars).await;
    let delta = match outcome {
        Succeeds => {
            assert!(r.get("errors").is_none(), "{label} should succeed: {r}");
            1
        }
        Refused => {
            assert!(error_code(&r).is_some(), "{label} should be refused: {r}");
            0
        }
    };
    let after = app.audit_head().await;
    assert_eq!(
        after,
        before + delta,
        "{label}: audit head {before} -> {after}"
    );
    r
}

async fn every_mutation_appends_exactly_one_audit_event(app: App) {
    let admin = app.site_admin().await;
    let admin = Some(admin.as_str());
    let t = unique();
    let event = format!("audited-{t}");
    let now = chrono::Utc::now();
    let d = |days: i64| crate::harness::rfc3339(now + chrono::Duration::days(days));
    let input = json!({ "slug": event, "name": "Audited",
        "submissionsOpen": d(-1), "submissionsClose": d(1), "judgingOpen": d(2), "judgingClose": d(3),
        "reviewsPerProject": 3, "maxTeamSize": 3 });
    step(
        &app,
        Succeeds,
        "createEvent",
        admin,
        op("CreateEvent"),
        json!({ "input": input }),
    )
    .await;

    // Accounts and sessions.
    let org_email = format!("org-{t}@example.org");
    let vars = json!({ "email": org_email, "password": PASSWORD, "displayName": "Someone" });
    let r = step(&app, Succeeds, "signUp", None, op("SignUp"), vars.clone()).await;
    let org_token = str_at(&r, "/data/signUp/token");
    let org = Some(org_token.as_str());
    step(
        &app,
        Refused,
        "signUp (taken email)",
        None,
        op("SignUp"),
        vars.clone(),
    )
    .await;
    let log_in = json!({ "email": org_email, "password": PASSWORD });
    let first_session = str_at(
        &step(&app, Succeeds, "logIn", None, op("LogIn"), log_in).await,
        "/data/logIn/token",
    );
    let wrong = json!({ "email": org_email, "password": "wrong wrong wrong" });
    step(
        &app,
        Refused,
        "logIn (bad password)",
        None,
        op("LogIn"),
        wrong,
    )
    .await;
    step(
        &app,
        Succeeds,
        "logOut",
        Some(&first_session),
        op("LogOut"),
        json!({}),
    )
    .await;
    step(
        &app,
        Refused,
        "logOut (again)",
        Some(&first_session),
        op("LogOut"),
        json!({}),
    )
    .await;

    // Roles.
    let grant = json!({ "event": event, "email": org_email, "role": "ORGANIZER" });
    step(
        &app,
        Succeeds,
        "grantRole",
        admin,
        op("GrantRole"),
        grant.clone(),
    )
    .await;
    step(
        &app,
        Refused,
        "grantRole (held already)",
        admin,
        op("GrantRole"),
        grant,
    )
    .await;
    let judge_email = format!("judge-{t}@example.org");
    app.sign_up(&judge_email).await;
    let judge = json!({ "event": event, "email": judge_email, "role": "JUDGE" });
    step(
        &app,
        Succeeds,
        "grantRole judge",
        org,
        op("GrantRole"),
        judge.clone(),
    )
    .await;
    step(
        &app,
        Succeeds,
        "revokeRole",
        org,
        op("RevokeRole"),
        judge.clone(),
    )
    .await;
    step(
        &app,
        Refused,
        "revokeRole (not held)",
        org,
        op("RevokeRole"),
        judge,
    )
    .await;

    // The event and its tracks.
    step(
        &app,
        Succeeds,
        "updateEvent",
        org,
        op("UpdateEvent"),
        json!({ "event": event, "input": { "name": "Audited!" } }),
    )
    .await;
    let r = step(
        &app,
        Succeeds,
        "createTrack",
        org,
        op("CreateTrack"),
        json!({ "event": event, "name": "Main" }),
    )
    .await;
    let track = str_at(&r, "/data/createTrack/id");

    // API tokens.
    let p = app.sign_up(&format!("p-{t}@example.org")).await;
    let p = Some(p.as_str());
    let ci = json!({ "label": "ci" });
    let r = step(
        &app,
        Succeeds,
        "createApiToken",
        p,
        op("CreateApiToken"),
        ci,
    )
    .await;
    let id = json!({ "id": str_at(&r, "/data/createApiToken/apiToken/id") });
    step(
        &app,
        Succeeds,
        "revokeApiToken",
        p,
        op("RevokeApiToken"),
        id.clone(),
    )
    .await;
    step(
        &app,
        Refused,
        "revokeApiToken (again)",
        p,
        op("RevokeApiToken"),
        id,
    )
    .await;

    // Teams.
    step(
        &app,
        Succeeds,
        "registerForEvent",
        p,
        op("RegisterForEvent"),
        json!({ "event": event }),
    )
    .await;
    step(
        &app,
        Refused,
        "registerForEvent (again)",
        p,
        op("RegisterForEvent"),
        json!({ "event": event }),
    )
    .await;
    let r = step(
        &app,
        Succeeds,
        "createTeam",
        p,
        op("CreateTeam"),
        json!({ "event": event, "name": "T" }),
    )
    .await;
    let team = str_at(&r, "/data/createTeam/id");
    let code = json!({ "inviteCode": str_at(&r, "/data/createTeam/inviteCode") });
    let q = app.sign_up(&format!("q-{t}@example.org")).await;
    app.register(&q, &event).await;
    step(
        &app,
        Succeeds,
        "joinTeam",
        Some(&q),
        op("JoinTeam"),
        code.clone(),
    )
    .await;
    let r_email = format!("r-{t}@example.org");
    app.sign_up(&r_email).await;
    let add = json!({ "team": team, "email": r_email });
    step(
        &app,
        Succeeds,
        "addTeamMember",
        org,
        op("AddTeamMember"),
        add,
    )
    .await;
    let s_tok = app.sign_up(&format!("s-{t}@example.org")).await;
    app.register(&s_tok, &event).await;
    step(
        &app,
        Refused,
        "joinTeam (full)",
        Some(&s_tok),
        op("JoinTeam"),
        code,
    )
    .await;

    // Projects.
    let new = json!({ "event": event, "input": { "title": "Audited project", "track": track } });
    let r = step(&app, Succeeds, "createProject", p, op("CreateProject"), new).await;
    let project = str_at(&r, "/data/createProject/id");
    let untitled = json!({ "event": event, "input": { "track": track } });
    step(
        &app,
        Refused,
        "createProject (no title)",
        p,
        op("CreateProject"),
        untitled,
    )
    .await;
    let edit = json!({ "id": project, "input": { "tagline": "now with a tagline" } });
    step(
        &app,
        Succeeds,
        "updateProject",
        p,
        op("UpdateProject"),
        edit,
    )
    .await;
    let bad = json!({ "id": project, "input": { "repoUrl": "javascript:alert(1)" } });
    step(
        &app,
        Refused,
        "updateProject (bad URL)",
        p,
        op("UpdateProject"),
        bad,
    )
    .await;
    let id = json!({ "id": project });
    step(
        &app,
        Succeeds,
        "submitProject",
        p,
        op("SubmitProject"),
        id.clone(),
    )
    .await;
    step(
        &app,
        Refused,
        "submitProject (again)",
        p,
        op("SubmitProject"),
        id.clone(),
    )
    .await;
    step(
        &app,
        Succeeds,
        "withdrawProject",
        p,
        op("WithdrawProject"),
        id.clone(),
    )
    .await;
    step(
        &app,
        Refused,
        "withdrawProject (again)",
        p,
        op("WithdrawProject"),
        id,
    )
    .await;

    // Import.
    let fixture = json!({ "fixture": tiny_fixture(&t) });
    step(
        &app,
        Succeeds,
        "importEvent",
        admin,
        op("ImportEvent"),
        fixture.clone(),
    )
    .await;
    step(
        &app,
        Refused,
        "importEvent (not an admin)",
        org,
        op("ImportEvent"),
        fixture,
    )
    .await;

    // The event's log names what happened, in the convention noun.verb_past.
    let log = audit_log(&app, &org_token, &event).await;
    let actions: Vec<&str> = log.iter().filter_map(|n| n["action"].as_str()).collect();
    for want in ["project.submitted", "project.withdrawn", "track.created"] {
        assert!(
            actions.contains(&want),
            "{want} in the event's audit log: {actions:?}"
        );
    }
    // Each row links to the previous one in the global chain when seqs are adjacent.
    for w in log.windows(2) {
        let (a, b) = (seq_of(&w[0]), seq_of(&w[1]));
        if b == a + 1 {
            assert_eq!(w[1]["prevHash"], w[0]["rowHash"], "chain link {a} -> {b}");
        }
    }
}

async fn concurrent_burst_keeps_the_chain_intact(app: App) {
    let s = app.scenario().await;
    let head_before = app.audit_head().await;
    let event_before = app.audit_count(&s.organizer_a, &s.event_a).await;

    const N: usize = 500;
    let results: Vec<Value> = stream::iter(0..N)
        .map(|i| {
            let app = &app;
            let s = &s;
            async move {
                if i % 2 == 0 {
                    app.gql_as(
                        &s.participant_a,
                        op("UpdateProject"),
                        json!({ "id": s.draft, "input": { "tagline": format!("revision {i}") } }),
                    )
                    .await
                } else {
                    app.gql_as(
                        &s.organizer_a,
                        op("CreateTrack"),
                        json!({ "event": s.event_a, "name": format!("Track {i}") }),
                    )
                    .await
                }
            }
        })
        .buffer_unordered(16)
        .collect()
        .await;
    let failed: Vec<&Value> = results
        .iter()
        .filter(|r| error_code(r).is_some() || r.get("errors").is_some())
        .collect();
    assert!(
        failed.is_empty(),
        "{} of {N} concurrent mutations failed, e.g. {:?}",
        failed.len(),
        failed.iter().take(3).collect::<Vec<_>>()
    );

    // `audit verify` passes, and its head moved by exactly the number of mutations.
    let head_after = app.audit_head().await;
    assert_eq!(
        head_after,
        head_before + N as u64,
        "one audit event per mutation"
    );
    assert_eq!(
        app.audit_count(&s.organizer_a, &s.event_a).await,
        event_before + N as i64
    );

    // The burst is contiguous in the chain (nothing else wrote meanwhile) and linked.
    let log = audit_log(&app, &s.organizer_a, &s.event_a).await;
    let burst: Vec<&Value> = log.iter().filter(|n| seq_of(n) > head_before).collect();
    assert_eq!(burst.len(), N);
    for (i, w) in burst.windows(2).enumerate() {
        assert_eq!(seq_of(w[1]), seq_of(w[0]) + 1, "seqs are gapless at {i}");
        assert_eq!(
            w[1]["prevHash"],
            w[0]["rowHash"],
            "chain link at seq {}",
            seq_of(w[1])
        );
    }
    assert_eq!(seq_of(burst[N - 1]), head_after);
    let tracks = app
        .ok(
            None,
            "query($e: String!) { event(slug: $e) { tracks { id } } }",
            json!({ "e": s.event_a }),
        )
        .await;
    assert_eq!(
        tracks["event"]["tracks"].as_array().map(Vec::len),
        Some(1 + N / 2)
    );
}

async fn tampering_is_detected(app: App) {
    use sea_orm::{ConnectionTrait, Database, DbBackend, Statement};
    app.scenario().await;
    let head = app.audit_head().await;
    assert!(head >= 5, "the scenario wrote several audit events");
    let victim = head / 2;
    let db = Database::connect(app.db.url())
        .await
        .expect("connect to the test database");

    // The database itself refuses to rewrite or delete history.
    let tamper =
        format!("UPDATE audit_events SET payload = '{{\"tampered\":true}}' WHERE seq = {victim}");
    assert!(
        db.execute_unprepared(&tamper).await.is_err(),
        "an audit row cannot be updated"
    );
    let delete = format!("DELETE FROM audit_events WHERE seq = {victim}");
    assert!(
        db.execute_unprepared(&delete).await.is_err(),
        "an audit row cannot be deleted"
    );
    assert_eq!(app.audit_head().await, head);

    // Someone with DDL rights removes the guard and edits one row: verify names it.
    match app.backend() {
        crate::harness::Backend::Postgres => {
            db.execute_unprepared("ALTER TABLE audit_events DISABLE TRIGGER USER")
                .await
                .expect("disable triggers");
        }
        crate::harness::Backend::Sqlite => {
            let rows = db
                .query_all_raw(Statement::from_string(
                    DbBackend::Sqlite,
                    "SELECT name FROM sqlite_master WHERE type = 'trigger' AND tbl_name = 'audit_events'",
                ))
                .await
                .expect("list triggers");
            for r in rows {
                let name: String = r.try_get_by_index(0).expect("trigger name");
                db.execute_unprepared(&format!("DROP TRIGGER {name}"))
                    .await
                    .expect("drop trigger");
            }
        }
    }
    let res = db
        .execute_unprepared(&tamper)
        .await
        .expect("tamper with the audit table");
    assert_eq!(res.rows_affected(), 1, "one audit row changed");
    let _ = db.close().await;

    let out = app.cli(&["audit", "verify"]).await;
    assert_eq!(
        out.code,
        Some(1),
        "audit verify fails on a tampered chain: {out:?}"
    );
    let text = format!("{}{}", out.stdout, out.stderr);
    let numbers: Vec<u64> = text
        .split(|c: char| !c.is_ascii_digit())
        .filter_map(|w| w.parse().ok())
        .collect();
    assert!(
        numbers.contains(&victim),
        "audit verify names seq {victim}: {text}"
    );
    assert!(
        !numbers
            .iter()
            .any(|n| *n > 0 && *n < victim && text.contains(&format!("seq {n}"))),
        "no earlier seq is blamed: {text}"
    );
}
