//! The audit chain: one event per successful mutation, none per refused one, and a chain
//! that `verdict audit verify` accepts after a concurrent burst and rejects once tampered.

use futures_util::{StreamExt, stream};
use serde_json::{Value, json};

use crate::harness::{App, PASSWORD, error_code, str_at, tiny_fixture, unique};

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
    out.sort_by_key(|n| n["seq"].as_u64().or_else(|| n["seq"].as_str().and_then(|s| s.parse().ok())));
    out
}

fn seq_of(n: &Value) -> u64 {
    n["seq"]
        .as_u64()
        .or_else(|| n["seq"].as_str().and_then(|s| s.parse().ok()))
        .unwrap_or_else(|| panic!("seq is not a number: {n}"))
}

/// Run one mutation and check the audit head moved by exactly `delta`.
async fn step(app: &App, label: &str, token: Option<&str>, query: &str, vars: Value, succeeds: bool) -> Value {
    let before = app.audit_head().await;
    let r = app.gql_opt(token, query, vars).await;
    if succeeds {
        assert!(error_code(&r).is_none() && r.get("errors").is_none(), "{label} should succeed: {r}");
    } else {
        assert!(error_code(&r).is_some(), "{label} should be refused: {r}");
    }
    let after = app.audit_head().await;
    let delta = if succeeds { 1 } else { 0 };
    assert_eq!(after, before + delta, "{label}: audit head {before} -> {after}, expected +{delta}");
    r
}

e2e! {
    async fn every_mutation_appends_exactly_one_audit_event(app: App) {
        let admin = app.site_admin().await;
        let t = unique();
        let event = format!("audited-{t}");
        let now = chrono::Utc::now();
        let d = |days: i64| crate::harness::rfc3339(now + chrono::Duration::days(days));

        step(&app, "createEvent", Some(&admin),
            "mutation($i: CreateEventInput!) { createEvent(input: $i) { id } }",
            json!({ "i": { "slug": event, "name": "Audited", "submissionsOpen": d(-1), "submissionsClose": d(1),
                           "judgingOpen": d(2), "judgingClose": d(3), "reviewsPerProject": 3, "maxTeamSize": 3 } }), true).await;
        let org_email = format!("org-{t}@example.org");
        let r = step(&app, "signUp", None,
            "mutation($e: String!, $p: String!) { signUp(email: $e, password: $p, displayName: \"Org\") { token } }",
            json!({ "e": org_email, "p": PASSWORD }), true).await;
        let org = str_at(&r, "/data/signUp/token");
        step(&app, "signUp (duplicate email)", None,
            "mutation($e: String!, $p: String!) { signUp(email: $e, password: $p, displayName: \"Org\") { token } }",
            json!({ "e": org_email, "p": PASSWORD }), false).await;
        step(&app, "grantRole", Some(&admin),
            "mutation($ev: String!, $e: String!) { grantRole(event: $ev, email: $e, role: ORGANIZER) { id } }",
            json!({ "ev": event, "e": org_email }), true).await;
        step(&app, "grantRole (again)", Some(&admin),
            "mutation($ev: String!, $e: String!) { grantRole(event: $ev, email: $e, role: ORGANIZER) { id } }",
            json!({ "ev": event, "e": org_email }), false).await;
        let judge_email = format!("judge-{t}@example.org");
        app.sign_up(&judge_email).await;
        step(&app, "grantRole judge", Some(&org),
            "mutation($ev: String!, $e: String!) { grantRole(event: $ev, email: $e, role: JUDGE) { id } }",
            json!({ "ev": event, "e": judge_email }), true).await;
        step(&app, "updateEvent", Some(&org),
            "mutation($ev: String!) { updateEvent(event: $ev, input: { name: \"Audited!\" }) { id } }",
            json!({ "ev": event }), true).await;
        let r = step(&app, "createTrack", Some(&org),
            "mutation($ev: String!) { createTrack(event: $ev, name: \"Main\") { id } }",
            json!({ "ev": event }), true).await;
        let track = str_at(&r, "/data/createTrack/id");

        let p_email = format!("p-{t}@example.org");
        let r = step(&app, "signUp participant", None,
            "mutation($e: String!, $p: String!) { signUp(email: $e, password: $p, displayName: \"P\") { token } }",
            json!({ "e": p_email, "p": PASSWORD }), true).await;
        let first_session = str_at(&r, "/data/signUp/token");
        let r = step(&app, "logIn", None,
            "mutation($e: String!, $p: String!) { logIn(email: $e, password: $p) { token } }",
            json!({ "e": p_email, "p": PASSWORD }), true).await;
        let p = str_at(&r, "/data/logIn/token");
        step(&app, "logIn (bad password)", None,
            "mutation($e: String!) { logIn(email: $e, password: \"wrong wrong wrong\") { token } }",
            json!({ "e": p_email }), false).await;
        step(&app, "logOut", Some(&first_session), "mutation { logOut }", json!({}), true).await;
        let r = step(&app, "createApiToken", Some(&p),
            "mutation { createApiToken(label: \"ci\") { token apiToken { id } } }", json!({}), true).await;
        let token_id = str_at(&r, "/data/createApiToken/apiToken/id");
        step(&app, "revokeApiToken", Some(&p),
            "mutation($id: ID!) { revokeApiToken(id: $id) { id } }", json!({ "id": token_id }), true).await;
        step(&app, "registerForEvent", Some(&p),
            "mutation($ev: String!) { registerForEvent(event: $ev) { id } }", json!({ "ev": event }), true).await;
        let r = step(&app, "createTeam", Some(&p),
            "mutation($ev: String!) { createTeam(event: $ev, name: \"T\") { id inviteCode } }", json!({ "ev": event }), true).await;
        let team = str_at(&r, "/data/createTeam/id");
        let code = str_at(&r, "/data/createTeam/inviteCode");

        let q_email = format!("q-{t}@example.org");
        let q = app.sign_up(&q_email).await;
        app.register(&q, &event).await;
        step(&app, "joinTeam", Some(&q),
            "mutation($c: String!) { joinTeam(inviteCode: $c) { id } }", json!({ "c": code }), true).await;
        let r_email = format!("r-{t}@example.org");
        let r_tok = app.sign_up(&r_email).await;
        app.register(&r_tok, &event).await;
        step(&app, "addTeamMember", Some(&org),
            "mutation($t: ID!, $e: String!) { addTeamMember(team: $t, email: $e) { id } }", json!({ "t": team, "e": r_email }), true).await;
        step(&app, "joinTeam (full)", Some(&org),
            "mutation($c: String!) { joinTeam(inviteCode: $c) { id } }", json!({ "c": code }), false).await;

        let r = step(&app, "createProject", Some(&p),
            "mutation($ev: String!, $tr: ID!) { createProject(event: $ev, input: { title: \"Audited project\", track: $tr }) { id } }",
            json!({ "ev": event, "tr": track }), true).await;
        let project = str_at(&r, "/data/createProject/id");
        step(&app, "createProject (no title)", Some(&p),
            "mutation($ev: String!, $tr: ID!) { createProject(event: $ev, input: { track: $tr }) { id } }",
            json!({ "ev": event, "tr": track }), false).await;
        step(&app, "updateProject", Some(&p),
            "mutation($id: ID!) { updateProject(id: $id, input: { tagline: \"now with a tagline\" }) { id } }",
            json!({ "id": project }), true).await;
        step(&app, "submitProject", Some(&p),
            "mutation($id: ID!) { submitProject(id: $id) { id } }", json!({ "id": project }), true).await;
        step(&app, "withdrawProject", Some(&p),
            "mutation($id: ID!) { withdrawProject(id: $id) { id } }", json!({ "id": project }), true).await;
        step(&app, "importEvent", Some(&admin),
            "mutation($f: JSON!) { importEvent(fixture: $f) { inserted } }", json!({ "f": tiny_fixture(&t) }), true).await;
        step(&app, "revokeRole", Some(&org),
            "mutation($ev: String!, $e: String!) { revokeRole(event: $ev, email: $e, role: JUDGE) }",
            json!({ "ev": event, "e": judge_email }), true).await;
        step(&app, "revokeRole (no longer held)", Some(&org),
            "mutation($ev: String!, $e: String!) { revokeRole(event: $ev, email: $e, role: JUDGE) }",
            json!({ "ev": event, "e": judge_email }), false).await;

        // The event's log names what happened, in the convention noun.verb_past.
        let log = audit_log(&app, &org, &event).await;
        let actions: Vec<&str> = log.iter().filter_map(|n| n["action"].as_str()).collect();
        for want in ["project.submitted", "project.withdrawn", "track.created"] {
            assert!(actions.contains(&want), "{want} in the event's audit log: {actions:?}");
        }
        // Each row links to the previous one in the global chain when seqs are adjacent.
        for w in log.windows(2) {
            if seq_of(&w[1]) == seq_of(&w[0]) + 1 {
                assert_eq!(w[1]["prevHash"], w[0]["rowHash"], "chain link {} -> {}", seq_of(&w[0]), seq_of(&w[1]));
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
                            "mutation($id: ID!, $t: String!) { updateProject(id: $id, input: { tagline: $t }) { id } }",
                            json!({ "id": s.draft, "t": format!("revision {i}") }),
                        )
                        .await
                    } else {
                        app.gql_as(
                            &s.organizer_a,
                            "mutation($e: String!, $n: String!) { createTrack(event: $e, name: $n) { id } }",
                            json!({ "e": s.event_a, "n": format!("Track {i}") }),
                        )
                        .await
                    }
                }
            })
            .buffer_unordered(16)
            .collect()
            .await;
        let failed: Vec<&Value> = results.iter().filter(|r| error_code(r).is_some() || r.get("errors").is_some()).collect();
        assert!(failed.is_empty(), "{} of {N} concurrent mutations failed, e.g. {:?}", failed.len(), failed.iter().take(3).collect::<Vec<_>>());

        // `audit verify` passes, and its head moved by exactly the number of mutations.
        let head_after = app.audit_head().await;
        assert_eq!(head_after, head_before + N as u64, "one audit event per mutation");
        assert_eq!(app.audit_count(&s.organizer_a, &s.event_a).await, event_before + N as i64);

        // The burst is contiguous in the chain (nothing else wrote meanwhile) and linked.
        let log = audit_log(&app, &s.organizer_a, &s.event_a).await;
        let burst: Vec<&Value> = log.iter().filter(|n| seq_of(n) > head_before).collect();
        assert_eq!(burst.len(), N);
        for (i, w) in burst.windows(2).enumerate() {
            assert_eq!(seq_of(w[1]), seq_of(w[0]) + 1, "seqs are gapless at {i}");
            assert_eq!(w[1]["prevHash"], w[0]["rowHash"], "chain link at seq {}", seq_of(w[1]));
        }
        assert_eq!(seq_of(burst[N - 1]), head_after);
        let tracks = app
            .ok(None, "query($e: String!) { event(slug: $e) { tracks { id } } }", json!({ "e": s.event_a }))
            .await;
        assert_eq!(tracks["event"]["tracks"].as_array().map(Vec::len), Some(1 + N / 2));
    }

    async fn tampering_is_detected(app: App) {
        use sea_orm::{ConnectionTrait, Database, DbBackend, Statement};
        app.scenario().await;
        let head = app.audit_head().await;
        assert!(head >= 5, "the scenario wrote several audit events");
        let victim = head / 2;
        let db = Database::connect(app.db.url.clone()).await.expect("connect to the test database");

        // The database itself refuses to rewrite or delete history.
        let tamper = format!("UPDATE audit_events SET payload = '{{\"tampered\":true}}' WHERE seq = {victim}");
        assert!(db.execute_unprepared(&tamper).await.is_err(), "an audit row cannot be updated");
        let delete = format!("DELETE FROM audit_events WHERE seq = {victim}");
        assert!(db.execute_unprepared(&delete).await.is_err(), "an audit row cannot be deleted");
        assert_eq!(app.audit_head().await, head);

        // Someone with DDL rights removes the guard and edits one row: verify names it.
        match app.backend() {
            crate::harness::Backend::Postgres => {
                db.execute_unprepared("ALTER TABLE audit_events DISABLE TRIGGER USER").await.expect("disable triggers");
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
                    db.execute_unprepared(&format!("DROP TRIGGER {name}")).await.expect("drop trigger");
                }
            }
        }
        let res = db.execute_unprepared(&tamper).await.expect("tamper with the audit table");
        assert_eq!(res.rows_affected(), 1, "one audit row changed");
        let _ = db.close().await;

        let out = app.cli(&["audit", "verify"]).await;
        assert_eq!(out.code, Some(1), "audit verify fails on a tampered chain: {out:?}");
        let text = format!("{}{}", out.stdout, out.stderr);
        let numbers: Vec<u64> = text
            .split(|c: char| !c.is_ascii_digit())
            .filter_map(|w| w.parse().ok())
            .collect();
        assert!(numbers.contains(&victim), "audit verify names seq {victim}: {text}");
        assert!(!numbers.iter().any(|n| *n > 0 && *n < victim && text.contains(&format!("seq {n}"))), "no earlier seq is blamed: {text}");
    }
}
