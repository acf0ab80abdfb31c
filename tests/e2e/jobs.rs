//! Calibration in the background (`startCalibration`): a run that takes longer than a
//! request may wait is started, followed over a subscription (its stages while it
//! computes, then the stored run), and stored exactly as `runCalibration` stores it. One
//! runs per event at a time; only the event's organizers see it; a job whose server process
//! stopped reads as failed and a new one replaces it; a job whose database went away for a
//! moment waits for it and stores its run.

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::harness::{App, Backend, Cluster, Stop, TestDb, error_code, op, str_at, unique};
use crate::results::panel_fixture;

e2e! {
    a_calibration_job_answers_at_once_then_reports_its_stages_and_stores_the_run,
}

e2e_postgres! {
    a_job_whose_process_stopped_reads_as_failed_and_a_new_one_replaces_it,
}

// Written out rather than listed: it brings a PostgreSQL cluster of its own to stop.
mod a_job_waits_out_a_database_outage_and_stores_its_run {
    #[tokio::test(flavor = "multi_thread")]
    async fn postgres() {
        let _timer = crate::harness::Timer::start();
        super::a_job_waits_out_a_database_outage_and_stores_its_run().await
    }
}

const START: &str = "mutation($e: String!, $b: Int) { startCalibration(event: $e, seed: 1, bootstrap: $b) { id state stage finishedAt run { id } error } }";
const FOLLOW: &str = "subscription($e: String!, $j: ID!) { calibrationJob(event: $e, job: $j) { id state stage stepsDone steps error run { id inputsHash } } }";
const JOB: &str = "query($e: String!, $j: ID!) { event(slug: $e) { calibrationJob(id: $j) { state error run { id } } calibrationJobs { id state } calibrationRuns { id } } }";

/// Imports a panel of `projects` projects through the CLI (a request this large would not
/// fit in a one-second budget), returning the event's slug and an organizer token.
async fn panel(app: &App, projects: usize) -> (String, String) {
    let tag = unique();
    let file = app.db.dir().join(format!("panel-{tag}.json"));
    let judges = projects / 10;
    std::fs::write(&file, panel_fixture(&tag, projects, judges, 5).to_string()).expect("write");
    let out = app
        .cli(&["import", file.to_str().expect("utf-8 path")])
        .await;
    assert!(out.success(), "import: {out:?}");
    let token = app
        .cli(&[
            "token",
            "mint",
            "--email",
            &format!("panel-o-{tag}@example.org"),
            "--name",
            "e2e",
        ])
        .await;
    assert!(token.success(), "token mint: {token:?}");
    (format!("panel-{tag}"), token.stdout.trim().to_string())
}

/// Every `next` payload of subscription `id` until it completes (on a timeout, the
/// panic shows what the server logged of the job, warnings and errors).
async fn follow_to_the_end(app: &App, ws: &mut crate::harness::Ws, within: Duration) -> Vec<Value> {
    let deadline = Instant::now() + within;
    let mut payloads = vec![];
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        let msg = ws.next_json(left).await.unwrap_or_else(|| {
            let logged: Vec<String> = app
                .log_lines()
                .into_iter()
                .filter(|l| l.contains("job") || l.contains("WARN") || l.contains("ERROR"))
                .collect();
            panic!("the job did not end within {within:?}: {payloads:?}\nserver log: {logged:#?}")
        });
        match msg["type"].as_str() {
            Some("next") => payloads.push(msg["payload"].clone()),
            Some("complete") => return payloads,
            _ => panic!("unexpected message {msg}; so far {payloads:?}"),
        }
    }
}

async fn a_calibration_job_answers_at_once_then_reports_its_stages_and_stores_the_run(app: App) {
    let (slug, organizer) = panel(&app, 3000).await;
    // About a second of computing here (3,000 projects, 2,000 replicates); the request
    // that starts it answers before the computing starts.
    let asked = Instant::now();
    let started = app
        .ok(Some(&organizer), START, json!({ "e": slug, "b": 2000 }))
        .await;
    let answered = asked.elapsed();
    let mut ws = app
        .ws(json!({ "authorization": format!("Bearer {organizer}") }))
        .await;
    let id = str_at(&started, "/startCalibration/id");
    ws.subscribe("j", FOLLOW, json!({ "e": slug, "j": id }))
        .await;
    let job = &started["startCalibration"];
    assert_eq!(job["state"], "RUNNING", "{started}");
    assert!(
        job["run"].is_null() && job["finishedAt"].is_null(),
        "{started}"
    );

    // One job per event at a time.
    let twice = app
        .gql_as(&organizer, START, json!({ "e": slug, "b": 0 }))
        .await;
    assert_eq!(error_code(&twice).as_deref(), Some("CONFLICT"), "{twice}");

    // A judge of the event may not follow it; nor may anyone anonymous.
    let judge = app
        .cli(&[
            "token",
            "mint",
            "--email",
            &format!("panel-0-{}@example.org", &slug["panel-".len()..]),
            "--name",
            "e2e",
        ])
        .await;
    assert!(judge.success(), "{judge:?}");
    for (who, payload) in [
        (
            "a judge",
            json!({ "authorization": format!("Bearer {}", judge.stdout.trim()) }),
        ),
        ("anonymous", json!({})),
    ] {
        let mut ws = app.ws(payload).await;
        ws.subscribe("j", FOLLOW, json!({ "e": slug, "j": id }))
            .await;
        let refused = ws
            .next_json(Duration::from_secs(30))
            .await
            .expect("an answer");
        assert!(refused["payload"]["data"].is_null(), "{who}: {refused}");
        let code = refused["payload"]["errors"][0]["extensions"]["code"].as_str();
        assert!(
            matches!(code, Some("FORBIDDEN" | "UNAUTHENTICATED")),
            "{who}: {refused}"
        );
    }

    let messages = follow_to_the_end(&app, &mut ws, Duration::from_secs(300)).await;
    let took = asked.elapsed();
    let jobs: Vec<&Value> = messages
        .iter()
        .map(|m| &m["data"]["calibrationJob"])
        .collect();
    let last = jobs.last().expect("at least one message");
    assert_eq!(last["state"], "DONE", "{messages:?}");
    assert!(last["error"].is_null() && last["stage"].is_null(), "{last}");
    assert!(
        jobs[..jobs.len() - 1]
            .iter()
            .all(|j| j["state"] == "RUNNING"),
        "{messages:?}"
    );
    // Its stages, in the order they run, with their steps.
    let order = [
        "READING",
        "WEIGHTING",
        "CROSS_VALIDATING",
        "FITTING",
        "BOOTSTRAPPING",
        "STORING",
    ];
    let seen: Vec<(usize, i64, i64)> = jobs
        .iter()
        .filter_map(|j| {
            let stage = order.iter().position(|s| j["stage"] == *s)?;
            Some((stage, j["stepsDone"].as_i64()?, j["steps"].as_i64()?))
        })
        .collect();
    assert!(
        !seen.is_empty(),
        "no progress reported in {took:?}: {messages:?}"
    );
    assert!(
        seen.windows(2).all(|w| w[0] <= w[1]) && seen.iter().all(|(_, d, t)| d < t),
        "stages and steps only move forward: {seen:?}"
    );
    eprintln!(
        "job answered after {answered:?}, done after {took:?}, {} messages, stages seen: {seen:?}",
        messages.len()
    );

    // The run is stored as runCalibration stores it, and the job points at it.
    let run = last["run"]["id"].as_str().expect("a run").to_string();
    let read = app
        .ok(Some(&organizer), JOB, json!({ "e": slug, "j": id }))
        .await;
    let event = &read["event"];
    assert_eq!(event["calibrationJob"]["state"], "DONE");
    assert_eq!(event["calibrationJob"]["run"]["id"], run.as_str());
    assert_eq!(event["calibrationRuns"], json!([{ "id": run }]), "{read}");
    assert_eq!(
        event["calibrationJobs"],
        json!([{ "id": id, "state": "DONE" }])
    );
    let audit = app
        .ok(
            Some(&organizer),
            "query($e: String!) { event(slug: $e) { auditLog(first: 10) { edges { node { action } } } } }",
            json!({ "e": slug }),
        )
        .await;
    let actions: Vec<&str> = audit["event"]["auditLog"]["edges"]
        .as_array()
        .expect("audit")
        .iter()
        .filter_map(|e| e["node"]["action"].as_str())
        .filter(|a| a.starts_with("calibration."))
        .collect();
    assert_eq!(
        actions
            .iter()
            .filter(|a| **a == "calibration.started")
            .count(),
        1,
        "{actions:?}"
    );
    assert_eq!(
        actions.iter().filter(|a| **a == "calibration.ran").count(),
        1,
        "{actions:?}"
    );
    // The bundle of a published job run verifies like any other.
    app.ok(
        Some(&organizer),
        op("PublishResults"),
        json!({ "event": slug, "run": run, "final": true }),
    )
    .await;
    app.audit_head().await;
}

async fn a_job_whose_process_stopped_reads_as_failed_and_a_new_one_replaces_it(app: App) {
    // Large enough that the job is still computing a few requests later on a fast machine
    // (with 600 projects it once finished before the second start, which then succeeded).
    let (slug, organizer) = panel(&app, 1500).await;
    let mut other = app.sibling(&[]).await;
    let started = other
        .ok(Some(&organizer), START, json!({ "e": slug, "b": 2000 }))
        .await;
    let id = str_at(&started, "/startCalibration/id");
    // Seen from this process, the other's job is running (no stage: only the process
    // computing it knows that) and blocks another.
    let read = app
        .ok(Some(&organizer), JOB, json!({ "e": slug, "j": id }))
        .await;
    assert_eq!(
        read["event"]["calibrationJob"]["state"], "RUNNING",
        "{read}"
    );
    let blocked = app
        .gql_as(&organizer, START, json!({ "e": slug, "b": 0 }))
        .await;
    assert_eq!(
        error_code(&blocked).as_deref(),
        Some("CONFLICT"),
        "{blocked}"
    );
    // A subscriber here hears the job fail once its process is gone.
    let mut ws = app
        .ws(json!({ "authorization": format!("Bearer {organizer}") }))
        .await;
    ws.subscribe("j", FOLLOW, json!({ "e": slug, "j": id }))
        .await;

    other.terminate();
    other.wait_exit(Duration::from_secs(30)).await;

    let messages = follow_to_the_end(&app, &mut ws, Duration::from_secs(30)).await;
    let last = &messages.last().expect("a message")["data"]["calibrationJob"];
    assert_eq!(last["state"], "FAILED", "{messages:?}");
    assert!(
        last["error"].as_str().unwrap_or("").contains("stopped"),
        "{last}"
    );
    let read = app
        .ok(Some(&organizer), JOB, json!({ "e": slug, "j": id }))
        .await;
    assert_eq!(read["event"]["calibrationJob"]["state"], "FAILED");
    assert_eq!(read["event"]["calibrationRuns"], json!([]));

    let again = app
        .ok(Some(&organizer), START, json!({ "e": slug, "b": 0 }))
        .await;
    let second = str_at(&again, "/startCalibration/id");
    let mut ws = app
        .ws(json!({ "authorization": format!("Bearer {organizer}") }))
        .await;
    ws.subscribe("j", FOLLOW, json!({ "e": slug, "j": second }))
        .await;
    let messages = follow_to_the_end(&app, &mut ws, Duration::from_secs(60)).await;
    let last = &messages.last().expect("a message")["data"]["calibrationJob"];
    assert_eq!(last["state"], "DONE", "{messages:?}");
    app.audit_head().await;
}

/// A job whose database goes away while it works does not give up: its read fails, is
/// tried again once the database is back, and the run is stored (before, the job ended
/// FAILED with "the database is unavailable", and the organizer had to start it again).
async fn a_job_waits_out_a_database_outage_and_stores_its_run() {
    use sea_orm::{ConnectionTrait, Database, TransactionTrait};
    let Some(cluster) = Cluster::start().await else {
        return;
    };
    let db = std::sync::Arc::new(TestDb::at(Backend::Postgres, cluster.url()));
    let app = App::spawn_on(db.clone(), &[]).await;
    let (slug, organizer) = panel(&app, 300).await;
    // The job's read of the reviews waits behind this lock until the database is stopped
    // under it, whenever the job gets there.
    let conn = Database::connect(db.url()).await.expect("connect");
    let holder = conn.begin().await.expect("begin");
    holder
        .execute_unprepared("LOCK TABLE reviews IN ACCESS EXCLUSIVE MODE")
        .await
        .expect("lock the reviews");
    let started = app
        .ok(Some(&organizer), START, json!({ "e": slug, "b": 200 }))
        .await;
    let id = str_at(&started, "/startCalibration/id");
    let waiting = Instant::now();
    loop {
        let row = conn
            .query_one_raw(sea_orm::Statement::from_string(
                sea_orm::DbBackend::Postgres,
                "SELECT count(*) AS n FROM pg_locks WHERE NOT granted",
            ))
            .await
            .expect("pg_locks")
            .expect("a row");
        if row.try_get::<i64>("", "n").expect("n") > 0 {
            break;
        }
        assert!(
            waiting.elapsed() < Duration::from_secs(60),
            "the job never read the reviews"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }

    cluster.stop(Stop::Immediate).await;
    drop(holder);
    drop(conn);
    // The job's read ended with its connection; a moment without a database.
    tokio::time::sleep(Duration::from_secs(1)).await;
    cluster.start_again().await;

    let deadline = Instant::now() + Duration::from_secs(120);
    let read = loop {
        // Refused (UNAVAILABLE, 503) until the server has its connections back.
        let read = app
            .gql_resp(Some(&organizer), JOB, json!({ "e": slug, "j": id }))
            .await
            .json();
        match read["data"]["event"]["calibrationJob"]["state"].as_str() {
            Some("DONE") => break read,
            Some("RUNNING") | None => {}
            Some(_) => panic!("the job did not wait out the outage: {read}"),
        }
        assert!(Instant::now() < deadline, "the job did not end: {read}");
        tokio::time::sleep(Duration::from_millis(500)).await;
    };
    let event = &read["data"]["event"];
    assert_eq!(
        event["calibrationRuns"].as_array().map(Vec::len),
        Some(1),
        "{read}"
    );
    assert_eq!(
        event["calibrationJob"]["run"]["id"], event["calibrationRuns"][0]["id"],
        "{read}"
    );
    // It did meet the outage (and said so in the log).
    app.wait_for_log(Duration::from_secs(1), |l| {
        l.contains("calibration job") && l.contains("trying again")
    })
    .await;
    app.audit_head().await;
}
