//! Several `verdict serve` processes on one PostgreSQL database: a subscriber on one
//! process hears what mutations on another caused, also after the connection that listens
//! for them was killed; and writes on several processes at once go on one audit chain.

use std::time::Duration;

use serde_json::{Value, json};

use crate::harness::{App, Ws, op, str_at};

e2e_postgres! {
    a_subscriber_hears_what_another_process_committed_also_after_its_listener_was_killed,
    writes_on_two_processes_at_once_keep_one_chain,
}

const PROGRESS: &str =
    "subscription($e: String!) { judgingProgress(event: $e) { assignments pending } }";
const PUBLISHED: &str = "subscription($e: String!) { resultsPublished(event: $e) { version } }";
const SUBMITTED: &str = "subscription($e: String!) { projectSubmitted(event: $e) { id } }";

/// Ends the listening connections of every process's relay, as a PostgreSQL restart or an
/// administrator would.
async fn kill_listeners(app: &App) -> u64 {
    use sea_orm::{ConnectionTrait, Statement};
    let conn = sea_orm::Database::connect(app.db.url())
        .await
        .expect("connect");
    let rows = conn
        .query_all_raw(Statement::from_string(
            sea_orm::DbBackend::Postgres,
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity \
             WHERE datname = current_database() AND query LIKE 'LISTEN %'",
        ))
        .await
        .expect("terminate the listeners");
    rows.len() as u64
}

/// Reads messages until one's data satisfies `done` (the feeds send snapshots: one that
/// was computed before the awaited change is a true state, just not the awaited one).
async fn until(ws: &mut Ws, what: &str, done: impl Fn(&Value) -> bool) -> Value {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    loop {
        let left = deadline.saturating_duration_since(tokio::time::Instant::now());
        let msg = ws
            .next_json(left)
            .await
            .unwrap_or_else(|| panic!("{what}: no such message within 20 s"));
        assert_eq!(msg["type"], "next", "{what}: {msg}");
        let data = msg["payload"]["data"].clone();
        if done(&data) {
            return data;
        }
    }
}

async fn a_subscriber_hears_what_another_process_committed_also_after_its_listener_was_killed(
    app: App,
) {
    let other = app.sibling(&[]).await;
    let s = app.scenario().await;
    let organizer = json!({ "authorization": format!("Bearer {}", s.organizer_a) });
    let mut progress = app.ws(organizer.clone()).await;
    progress
        .subscribe("p", PROGRESS, json!({ "e": s.event_a }))
        .await;
    let mut submitted = app.ws(json!({})).await;
    submitted
        .subscribe("s", SUBMITTED, json!({ "e": s.event_a }))
        .await;
    let mut results = app.ws(json!({})).await;
    results
        .subscribe("r", PUBLISHED, json!({ "e": s.event_a }))
        .await;
    let mut there = other.ws(organizer).await;
    there
        .subscribe("p", PROGRESS, json!({ "e": s.event_a }))
        .await;
    // Let the subscriptions register before the changes they should hear.
    tokio::time::sleep(Duration::from_millis(500)).await;

    // A change committed by the other process reaches this one's subscriber.
    let judge = other
        .ok(
            Some(&s.organizer_a),
            op("EventMembers"),
            json!({ "event": s.event_a, "role": "JUDGE", "first": 5 }),
        )
        .await;
    let judge_id = str_at(&judge, "/event/members/edges/0/node/id");
    other
        .ok(
            Some(&s.organizer_a),
            op("AssignJudge"),
            json!({ "event": s.event_a, "judge": judge_id, "project": s.submitted }),
        )
        .await;
    until(&mut progress, "an assignment on the other process", |d| {
        d["judgingProgress"]["assignments"] == 1
    })
    .await;
    // And the other way round.
    app.ok(
        Some(&s.organizer_a),
        "mutation($e: String!, $j: ID!, $t: ID!) { recuseJudge(event: $e, judge: $j, team: $t) { __typename } }",
        json!({ "e": s.event_a, "j": judge_id, "t": s.team_a }),
    )
    .await;
    until(&mut there, "a recusal on this process", |d| {
        d["judgingProgress"]["assignments"] == 1 && d["judgingProgress"]["pending"] == 0
    })
    .await;

    // The listening connections die; a project submitted right then is not lost: each
    // relay listens again and reads what it missed from the audit log.
    let killed = kill_listeners(&app).await;
    assert!(
        killed >= 2,
        "both processes listen: {killed} listeners ended"
    );
    other.submit_project(&s.participant_a, &s.draft).await;
    let data = until(
        &mut submitted,
        "a submission while the listener was down",
        |_| true,
    )
    .await;
    assert_eq!(
        data["projectSubmitted"]["id"],
        json!(s.draft),
        "the next submission heard is the one made while the listener was down: {data}"
    );

    // Anonymous followers of the results on one process hear a publication on the other.
    let run = other
        .ok(
            Some(&s.organizer_a),
            op("RunCalibration"),
            json!({ "event": s.event_a, "seed": 1, "bootstrap": 0 }),
        )
        .await;
    other
        .ok(
            Some(&s.organizer_a),
            op("PublishResults"),
            json!({ "event": s.event_a, "run": str_at(&run, "/runCalibration/id") }),
        )
        .await;
    let data = until(&mut results, "a publication on the other process", |_| true).await;
    assert_eq!(data["resultsPublished"]["version"], 1, "{data}");
}

/// Writers on two processes at once, several tasks each, all committing in parallel: every
/// answered write has its one entry on the chain by the time it is answered, and the chain
/// verifies with nothing pending and no entry missing or doubled.
async fn writes_on_two_processes_at_once_keep_one_chain(app: App) {
    use sea_orm::{ConnectionTrait, Statement};
    const TASKS: usize = 8;
    const WRITES: usize = 12;
    let other = app.sibling(&[]).await;
    let mut writers = vec![];
    for i in 0..2 * TASKS {
        let email = format!("writer{i}-{}@example.org", crate::harness::unique());
        let token = app.sign_up(&email).await;
        let on = if i % 2 == 0 { &app } else { &other };
        writers.push((email, token, on.http.clone(), on.url("/graphql")));
    }
    let head = app.audit_head().await;
    let conn = sea_orm::Database::connect(app.db.url())
        .await
        .expect("connect");
    let tasks: Vec<_> = writers
        .into_iter()
        .map(|(email, token, http, url)| {
            let conn = conn.clone();
            tokio::spawn(async move {
                for k in 0..WRITES {
                    let body = json!({
                        "query": "mutation($n: String!) { updateProfile(displayName: $n) { displayName } }",
                        "variables": { "n": format!("{email} {k}") },
                    });
                    let answer: Value = http
                        .post(&url)
                        .bearer_auth(&token)
                        .json(&body)
                        .send()
                        .await
                        .expect("answered")
                        .json()
                        .await
                        .expect("json");
                    assert!(answer.get("errors").is_none(), "{answer}");
                    // Answered after its entry is on the chain.
                    let on_chain: i64 = conn
                        .query_one_raw(Statement::from_sql_and_values(
                            sea_orm::DbBackend::Postgres,
                            "SELECT COUNT(*) FROM audit_events a JOIN users u ON a.object_id = u.public_id \
                             WHERE u.email = $1 AND a.action = 'user.profile_updated'",
                            [email.clone().into()],
                        ))
                        .await
                        .expect("count")
                        .expect("a row")
                        .try_get_by_index(0)
                        .expect("count");
                    assert_eq!(on_chain, k as i64 + 1, "{email}: entries on the chain");
                }
            })
        })
        .collect();
    for t in tasks {
        t.await.expect("a writer");
    }
    assert_eq!(
        app.audit_head().await,
        head + (2 * TASKS * WRITES) as u64,
        "one entry per write"
    );
    let out = app.cli(&["audit", "verify"]).await;
    assert!(
        !out.stdout.contains("not yet on the chain"),
        "{}",
        out.stdout
    );
}
