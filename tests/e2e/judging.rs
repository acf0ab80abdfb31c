//! Judging end to end: the rubric, assignments, private reviews, the signed calibration
//! run, publication, offline verification of the exported bundle, exports and the
//! authorization of every judging field.

use std::sync::atomic::{AtomicBool, Ordering};

use chrono::{Duration, Utc};
use entity::event;
use serde_json::{Value, json};

use crate::harness::{
    App, CALLERS, Caller, HeldChange, Scenario, assert_bad_input, assert_code, data, error_code,
    error_message, fixture_path, op, rfc3339, str_at, unique,
};

const FIXTURE_SLUG: &str = "spring-hack-2026";

e2e! {
    fixture_calibrates_publishes_and_verifies_offline,
    judges_review_privately_inside_the_window,
    a_withdrawn_project_leaves_its_judges_queues_working,
    auto_assign_plans_then_applies_once,
    exports_neutralize_formulas_and_are_audited,
    judging_fields_follow_the_authorization_matrix,
    results_subscription_fires_after_publication,
    every_review_save_keeps_a_revision,
    judges_are_never_on_a_team_they_judge,
    a_judging_window_closed_while_a_save_waits_refuses_it,
}

async fn import_fixture(app: &App) {
    let path = fixture_path();
    let out = app
        .cli(&["import", path.to_str().expect("utf-8 path")])
        .await;
    assert!(out.success(), "import: {out:?}");
}

/// The variables of the fixture's calibration run: a fixed seed, 100 bootstrap rounds.
fn run_vars() -> Value {
    json!({ "event": FIXTURE_SLUG, "seed": 7, "bootstrap": 100 })
}

async fn fixture_calibrates_publishes_and_verifies_offline(app: App) {
    let admin = app.site_admin().await;
    import_fixture(&app).await;
    let q = json!({ "e": FIXTURE_SLUG });

    // Nothing is public before publication.
    let before = app
        .ok(
            None,
            "query($e: String!) { event(slug: $e) { results { version } } }",
            q.clone(),
        )
        .await;
    assert_eq!(before["event"]["results"], Value::Null);

    let run = app.ok(Some(&admin), op("RunCalibration"), run_vars()).await;
    let run = &run["runCalibration"];
    assert_eq!(run["engineVersion"], "verdict-calibrate/5");
    assert_eq!(run["inputsHash"].as_str().map(str::len), Some(64));
    assert_eq!(run["resultHash"].as_str().map(str::len), Some(64));
    let projects = run["projects"].as_array().expect("projects");
    assert_eq!(
        projects.len(),
        60,
        "every project appears, ranked or excluded"
    );
    let ranked: Vec<&Value> = projects.iter().filter(|p| p["rank"].is_number()).collect();
    assert!(
        ranked.len() >= 50,
        "most submitted projects are ranked: {}",
        ranked.len()
    );
    for p in &ranked {
        let (lo, r, hi) = (
            p["rankLow"].as_i64().unwrap(),
            p["rank"].as_i64().unwrap(),
            p["rankHigh"].as_i64().unwrap(),
        );
        assert!(lo <= r && r <= hi, "the interval contains the rank: {p}");
    }
    for p in projects.iter().filter(|p| p["rank"].is_null()) {
        assert!(
            p["excluded"].is_string(),
            "an unranked project says why: {p}"
        );
    }
    let withdrawn = projects
        .iter()
        .find(|p| p["project"]["externalId"] == "prj_020")
        .expect("prj_020");
    assert_eq!(withdrawn["excluded"], "not_submitted");
    let run_id = run["id"].as_str().unwrap().to_string();

    // Publish provisionally, then final; nothing after final.
    let p1 = app
        .ok(
            Some(&admin),
            op("PublishResults"),
            json!({ "event": FIXTURE_SLUG, "run": run_id, "final": false }),
        )
        .await;
    assert_eq!(p1["publishResults"]["version"], 1);
    let p2 = app
        .ok(
            Some(&admin),
            op("PublishResults"),
            json!({ "event": FIXTURE_SLUG, "run": run_id, "final": true }),
        )
        .await;
    assert_eq!(p2["publishResults"]["version"], 2);
    let audit_before = app.audit_head().await;
    let p3 = app
        .gql_as(
            &admin,
            op("PublishResults"),
            json!({ "event": FIXTURE_SLUG, "run": run_id, "final": true }),
        )
        .await;
    assert_code(&p3, "CONFLICT");
    assert_eq!(
        app.audit_head().await,
        audit_before,
        "a refused publication writes nothing"
    );

    // The public sees the frozen projection: ranks, no judge, no score.
    let public = app
        .gql(
            "query($e: String!) { event(slug: $e) { results { version final runId resultHash keyFingerprint ranking { rank rankLow rankHigh project { externalId } } } } }",
            q.clone(),
        )
        .await;
    let results = &data(&public)["event"]["results"];
    assert_eq!(results["version"], 2);
    assert_eq!(results["final"], true);
    assert_eq!(results["runId"], run_id.as_str());
    let text = public.to_string();
    assert!(
        !text.contains("jdg_"),
        "no judge identity in public results"
    );
    let key = app
        .ok(
            None,
            "{ signingKey { fingerprint publicKeyPem algorithm } }",
            json!({}),
        )
        .await;
    assert_eq!(results["keyFingerprint"], key["signingKey"]["fingerprint"]);
    let well_known = app.get("/.well-known/verdict-signing-key").await;
    assert_eq!(well_known.status, 200);
    assert_eq!(
        well_known.header("x-signing-key-fingerprint").as_deref(),
        key["signingKey"]["fingerprint"].as_str()
    );

    // Export the bundle and verify it offline; then tamper with every file.
    let dir = tempfile::tempdir().unwrap();
    let bundle = dir.path().join("bundle");
    let b = bundle.to_str().unwrap();
    let out = app
        .cli(&["results", "export", "--event", FIXTURE_SLUG, b])
        .await;
    assert!(out.success(), "export: {out:?}");
    let verify = |path: String| async move {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_verdict"))
            .args(["results", "verify", &path])
            .env_remove("VERDICT_DATABASE_URL")
            .output()
            .expect("run verify");
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
        )
    };
    let (code, stdout) = verify(b.to_string()).await;
    assert_eq!(code, Some(0), "a fresh bundle verifies: {stdout}");
    assert!(stdout.trim_end().ends_with("PASS"));
    let files = [
        "inputs.json",
        "params.json",
        "result.json",
        "run.json",
        "publication.json",
        "public-key.pem",
        "checkpoint.json",
        "audit.json",
    ];
    for (i, f) in files.iter().enumerate() {
        let copy = dir.path().join(format!("tampered-{i}"));
        std::fs::create_dir_all(&copy).unwrap();
        for g in files {
            std::fs::copy(bundle.join(g), copy.join(g)).unwrap();
        }
        let original = std::fs::read_to_string(copy.join(f)).unwrap();
        let tampered = tamper(f, &original);
        assert_ne!(original, tampered, "{f} was not changed");
        std::fs::write(copy.join(f), tampered).unwrap();
        let (code, stdout) = verify(copy.to_str().unwrap().to_string()).await;
        assert_eq!(
            code,
            Some(1),
            "tampering with {f} must fail verification: {stdout}"
        );
        assert!(stdout.contains("FAIL"), "{stdout}");
    }
}

/// A small, plausible edit of one bundle file.
fn tamper(file: &str, text: &str) -> String {
    match file {
        // Another byte in the key's base64 body: a different (or invalid) key.
        "public-key.pem" => {
            let body = text.find('\n').map(|n| n + 5).unwrap_or(30);
            let mut bytes = text.as_bytes().to_vec();
            bytes[body] = if bytes[body] == b'A' { b'B' } else { b'A' };
            String::from_utf8(bytes).unwrap()
        }
        "inputs.json" => text.replacen("\"score\":0.", "\"score\":0.0", 1),
        "result.json" => text.replacen("\"rank\":1,", "\"rank\":2,", 1),
        "params.json" => text.replacen("\"folds\":5", "\"folds\":4", 1),
        "run.json" => text.replacen("\"created_at\": \"20", "\"created_at\": \"19", 1),
        "publication.json" => text.replace("\"final\": true", "\"final\": false"),
        "checkpoint.json" => text.replacen("\"seq\": ", "\"seq\": 1", 1),
        "audit.json" => text.replacen("\"actor\": \"", "\"actor\": \"x", 1),
        _ => unreachable!(),
    }
}

/// An event whose submissions and judging are both open now, with a two-criterion rubric,
/// one submitted project of `participant`'s team, and two judges assigned to it.
struct Judged {
    admin: String,
    slug: String,
    participant: String,
    judge_a: String,
    judge_b: String,
    project: String,
    team: String,
    assignment_a: String,
    assignment_b: String,
    judge_a_id: String,
    judge_b_id: String,
}

async fn judged_event(app: &App) -> Judged {
    let admin = app.site_admin().await;
    let slug = format!("judged-{}", unique());
    let now = Utc::now();
    app.ok(
        Some(&admin),
        op("CreateEvent"),
        json!({ "input": {
            "slug": slug, "name": "Judged",
            "submissionsOpen": rfc3339(now - Duration::days(1)), "submissionsClose": rfc3339(now + Duration::days(1)),
            "judgingOpen": rfc3339(now - Duration::hours(1)), "judgingClose": rfc3339(now + Duration::days(1)),
            "registration": "OPEN",
        }}),
    )
    .await;
    for (key, pos) in [("impact", 1), ("craft", 2)] {
        app.ok(
            Some(&admin),
            op("SetCriterion"),
            json!({ "event": slug, "input": { "key": key, "name": key, "min": 1, "max": 5, "position": pos } }),
        )
        .await;
    }
    let track = app.create_track(&admin, &slug, "Main").await;
    let participant = app.sign_up(&format!("p-{}@example.org", unique())).await;
    app.register(&participant, &slug).await;
    let (team, _) = app.create_team(&participant, &slug, "Builders").await;
    let project = app
        .create_project(&participant, &slug, "Thing", &track)
        .await;
    app.submit_project(&participant, &project).await;
    let mut judges = vec![];
    for name in ["a", "b"] {
        let email = format!("judge-{name}-{}@example.org", unique());
        let token = app.sign_up(&email).await;
        let id = app.grant(&admin, &slug, &email, "JUDGE").await;
        let d = app
            .ok(
                Some(&admin),
                op("AssignJudge"),
                json!({ "event": slug, "judge": id, "project": project }),
            )
            .await;
        assert_eq!(d["assignJudge"]["status"], "pending");
        judges.push((token, id, str_at(&d, "/assignJudge/id")));
    }
    let (b, a) = (judges.pop().unwrap(), judges.pop().unwrap());
    Judged {
        admin,
        slug,
        participant,
        judge_a: a.0,
        judge_b: b.0,
        project,
        team,
        assignment_a: a.2,
        assignment_b: b.2,
        judge_a_id: a.1,
        judge_b_id: b.1,
    }
}

/// Like `windows::a_window_closed_while_a_write_waits_refuses_it`, for the judging window:
/// an organizer's closing of judging is under way when a judge's `saveReview` arrives; the
/// save waits for it, answers WINDOW_CLOSED and writes nothing.
async fn a_judging_window_closed_while_a_save_waits_refuses_it(app: App) {
    let j = judged_event(&app).await;
    let head = app.audit_head().await;
    let now = Utc::now();
    let closing = HeldChange::set(
        &app,
        &j.slug,
        &[(event::Column::JudgingClose, now - Duration::minutes(1))],
    )
    .await;
    let answered = AtomicBool::new(false);
    let save = async {
        let r = app
            .gql_as(
                &j.judge_a,
                op("SaveReview"),
                json!({ "assignment": j.assignment_a, "scores": [{ "criterion": "impact", "value": 4 }] }),
            )
            .await;
        answered.store(true, Ordering::SeqCst);
        r
    };
    let (r, ()) = tokio::join!(save, closing.commit_when_waited_on(&answered));
    assert_code(&r, "WINDOW_CLOSED");
    // Every save appends its audit entry: none means nothing was saved.
    assert_eq!(
        app.audit_head().await,
        head,
        "a refused save writes nothing"
    );
}

/// The judge's own queue, as the judging page reads it.
const QUEUE: &str = "query($e: String!) { event(slug: $e) { myProgress { done total } nextAssignment { id project { title } } myAssignments { id status project { id title status } } } }";

/// The organizers' counts and the event's assignments with their status.
const PROGRESS: &str = "query($e: String!) { event(slug: $e) { judgingProgress { assignments done pending recused withdrawn } assignments(first: 100) { edges { node { id status } } } } }";

/// The status of each assignment, by id, as the organizers read it.
fn statuses(d: &Value) -> std::collections::BTreeMap<String, String> {
    d["event"]["assignments"]["edges"]
        .as_array()
        .expect("assignments")
        .iter()
        .map(|e| (str_at(e, "/node/id"), str_at(e, "/node/status")))
        .collect()
}

/// A team withdraws a project after judges were assigned to it: the judges' queues keep
/// working without it, a review of it is refused, organizers do not wait for it, and
/// submitting it again brings everything back.
async fn a_withdrawn_project_leaves_its_judges_queues_working(app: App) {
    let j = judged_event(&app).await;
    let scores =
        json!([{ "criterion": "impact", "value": 4 }, { "criterion": "craft", "value": 3 }]);
    // Judge A has a second project in the queue, which stays submitted.
    let track = str_at(
        &app.ok(
            Some(&j.admin),
            "query($e: String!) { event(slug: $e) { tracks { id } } }",
            json!({ "e": j.slug }),
        )
        .await,
        "/event/tracks/0/id",
    );
    let other = app
        .create_project(&j.participant, &j.slug, "Other thing", &track)
        .await;
    app.submit_project(&j.participant, &other).await;
    let d = app
        .ok(
            Some(&j.admin),
            op("AssignJudge"),
            json!({ "event": j.slug, "judge": j.judge_a_id, "project": other }),
        )
        .await;
    let other_assignment = str_at(&d, "/assignJudge/id");
    // Judge B has already submitted a review of the project that will be withdrawn.
    app.ok(
        Some(&j.judge_b),
        op("SaveReview"),
        json!({ "assignment": j.assignment_b, "scores": scores, "submit": true }),
    )
    .await;
    let q = json!({ "e": j.slug });
    let before = app.ok(Some(&j.judge_a), QUEUE, q.clone()).await;
    assert_eq!(
        before["event"]["myProgress"],
        json!({ "done": 0, "total": 2 })
    );

    let w = app
        .ok(
            Some(&j.participant),
            op("WithdrawProject"),
            json!({ "id": j.project }),
        )
        .await;
    assert_eq!(w["withdrawProject"]["status"], "WITHDRAWN");

    // Judge A's queue still loads, without the withdrawn project.
    let r = app.gql_as(&j.judge_a, QUEUE, q.clone()).await;
    let queue = &data(&r)["event"];
    let ids: Vec<&str> = queue["myAssignments"]
        .as_array()
        .expect("myAssignments")
        .iter()
        .filter_map(|a| a["id"].as_str())
        .collect();
    assert_eq!(
        ids,
        [other_assignment.as_str()],
        "only the reviewable assignment is listed: {r}"
    );
    assert_eq!(queue["myAssignments"][0]["project"]["title"], "Other thing");
    assert_eq!(
        queue["myProgress"],
        json!({ "done": 0, "total": 1 }),
        "the withdrawn project is not outstanding"
    );
    assert_eq!(queue["nextAssignment"]["id"], other_assignment.as_str());
    // Judge B's queue is empty, not broken.
    let r = app.gql_as(&j.judge_b, QUEUE, q.clone()).await;
    assert_eq!(data(&r)["event"]["myAssignments"], json!([]), "{r}");
    assert_eq!(
        data(&r)["event"]["myProgress"],
        json!({ "done": 0, "total": 0 })
    );

    // Reviewing the withdrawn project is refused and writes nothing; the rest still works.
    let head = app.audit_head().await;
    for (judge, assignment) in [(&j.judge_a, &j.assignment_a), (&j.judge_b, &j.assignment_b)] {
        let r = app
            .gql_as(
                judge,
                op("SaveReview"),
                json!({ "assignment": assignment, "scores": scores }),
            )
            .await;
        assert_code(&r, "CONFLICT");
        assert!(
            error_message(&r).contains("withdrawn"),
            "the refusal says why: {r}"
        );
    }
    assert_eq!(app.audit_head().await, head, "refused saves write nothing");
    let d = app
        .ok(
            Some(&j.judge_a),
            op("SaveReview"),
            json!({ "assignment": other_assignment, "scores": scores, "submit": true }),
        )
        .await;
    assert_eq!(d["saveReview"]["submitted"], true);

    // Organizers: nothing withdrawn is waited for, every assignment is accounted for.
    let d = app.ok(Some(&j.admin), PROGRESS, q.clone()).await;
    assert_eq!(
        d["event"]["judgingProgress"],
        json!({ "assignments": 3, "done": 1, "pending": 0, "recused": 0, "withdrawn": 2 }),
        "{d}"
    );
    let s = statuses(&d);
    assert_eq!(s[&j.assignment_a], "withdrawn");
    assert_eq!(s[&j.assignment_b], "withdrawn");
    assert_eq!(s[&other_assignment], "done");

    // Submitted again, the project is back in both queues, with judge B's review done.
    app.submit_project(&j.participant, &j.project).await;
    let r = app.gql_as(&j.judge_a, QUEUE, q.clone()).await;
    let queue = &data(&r)["event"];
    assert_eq!(queue["myProgress"], json!({ "done": 1, "total": 2 }));
    assert_eq!(queue["nextAssignment"]["id"], j.assignment_a.as_str());
    let d = app
        .ok(
            Some(&j.judge_a),
            op("SaveReview"),
            json!({ "assignment": j.assignment_a, "scores": scores }),
        )
        .await;
    assert_eq!(d["saveReview"]["version"], 1);
    let d = app.ok(Some(&j.admin), PROGRESS, q.clone()).await;
    assert_eq!(
        d["event"]["judgingProgress"],
        json!({ "assignments": 3, "done": 2, "pending": 1, "recused": 0, "withdrawn": 0 }),
        "{d}"
    );
    let s = statuses(&d);
    assert_eq!(s[&j.assignment_a], "pending");
    assert_eq!(s[&j.assignment_b], "done");
}

const REVIEWS: &str = "query($p: ID!) { project(id: $p) { reviews { id comment judge { id } scores { criterion value } } } }";

async fn judges_review_privately_inside_the_window(app: App) {
    let j = judged_event(&app).await;
    let scores = json!([{ "criterion": "impact", "value": 4 }]);

    // A draft, then the submission; every save is a new version.
    let d = app
        .ok(
            Some(&j.judge_a),
            op("SaveReview"),
            json!({ "assignment": j.assignment_a, "scores": scores, "comment": "solid" }),
        )
        .await;
    assert_eq!(d["saveReview"]["version"], 1);
    assert_eq!(d["saveReview"]["submitted"], false);
    let incomplete = app
        .gql_as(
            &j.judge_a,
            op("SaveReview"),
            json!({ "assignment": j.assignment_a, "scores": [], "submit": true }),
        )
        .await;
    assert_bad_input(&incomplete, &["scores"]);
    let d = app
        .ok(Some(&j.judge_a), op("SaveReview"), json!({ "assignment": j.assignment_a, "scores": [{ "criterion": "craft", "value": 2 }], "submit": true }))
        .await;
    assert_eq!(d["saveReview"]["version"], 2);
    assert_eq!(d["saveReview"]["submitted"], true);
    assert_eq!(
        d["saveReview"]["scores"],
        json!([{ "criterion": "craft", "value": 2 }, { "criterion": "impact", "value": 4 }])
    );

    // Bad scores name the field and write nothing.
    let head = app.audit_head().await;
    for bad in [
        json!([{ "criterion": "impact", "value": 9 }]),
        json!([{ "criterion": "nope", "value": 3 }]),
    ] {
        let r = app
            .gql_as(
                &j.judge_a,
                op("SaveReview"),
                json!({ "assignment": j.assignment_a, "scores": bad }),
            )
            .await;
        assert_bad_input(&r, &["scores"]);
    }
    // Nobody else writes this review.
    let r = app
        .gql_as(
            &j.judge_b,
            op("SaveReview"),
            json!({ "assignment": j.assignment_a, "scores": scores }),
        )
        .await;
    assert_code(&r, "NOT_FOUND");
    let r = app
        .gql_as(
            &j.participant,
            op("SaveReview"),
            json!({ "assignment": j.assignment_a, "scores": scores }),
        )
        .await;
    assert_code(&r, "NOT_FOUND");
    let r = app
        .gql_as(
            &j.admin,
            op("SaveReview"),
            json!({ "assignment": j.assignment_a, "scores": scores }),
        )
        .await;
    assert_code(&r, "FORBIDDEN");
    assert_eq!(app.audit_head().await, head, "refused saves write nothing");

    // Who reads which review.
    app.ok(
        Some(&j.judge_b),
        op("SaveReview"),
        json!({ "assignment": j.assignment_b, "scores": scores, "comment": "judge b thinks" }),
    )
    .await;
    let count = |v: &Value| {
        v["project"]["reviews"]
            .as_array()
            .map(Vec::len)
            .unwrap_or(0)
    };
    let org = app
        .ok(Some(&j.admin), REVIEWS, json!({ "p": j.project }))
        .await;
    assert_eq!(count(&org), 2, "organizers read every review");
    let own = app
        .ok(Some(&j.judge_a), REVIEWS, json!({ "p": j.project }))
        .await;
    assert_eq!(count(&own), 1, "a judge reads only their own");
    assert_eq!(own["project"]["reviews"][0]["comment"], "solid");
    let team = app
        .ok(Some(&j.participant), REVIEWS, json!({ "p": j.project }))
        .await;
    assert_eq!(count(&team), 0, "the team reads no individual score");
    let anon = app.ok(None, REVIEWS, json!({ "p": j.project })).await;
    assert_eq!(count(&anon), 0, "the public reads no individual score");
    let resp = app
        .gql_resp(Some(&j.judge_a), REVIEWS, json!({ "p": j.project }))
        .await;
    assert_eq!(
        resp.header("cache-control").as_deref(),
        Some("private, no-store")
    );

    // The judge's queue.
    let q = app
        .ok(
            Some(&j.judge_b),
            "query($e: String!) { event(slug: $e) { myProgress { done total } nextAssignment { id } myAssignments { id status } } }",
            json!({ "e": j.slug }),
        )
        .await;
    assert_eq!(q["event"]["myProgress"], json!({ "done": 0, "total": 1 }));
    assert_eq!(q["event"]["nextAssignment"]["id"], j.assignment_b.as_str());

    // Scores exist: the rubric's shape is frozen, names are not.
    let set = op("SetCriterion");
    let r = app
        .gql_as(
            &j.admin,
            set,
            json!({ "event": j.slug, "input": { "key": "impact", "name": "impact", "weight": 2.0 } }),
        )
        .await;
    assert_code(&r, "CONFLICT");
    let r = app
        .gql_as(
            &j.admin,
            set,
            json!({ "event": j.slug, "input": { "key": "extra", "name": "Extra" } }),
        )
        .await;
    assert_code(&r, "CONFLICT");
    let r = app
        .ok(Some(&j.admin), set, json!({ "event": j.slug, "input": { "key": "impact", "name": "Impact on users", "position": 1 } }))
        .await;
    assert_eq!(r["setCriterion"]["name"], "Impact on users");

    // A recusal takes judge B off the team's projects and out of the results.
    let rec = app
        .ok(
            Some(&j.admin),
            "mutation($e: String!, $j: ID!, $t: ID!) { recuseJudge(event: $e, judge: $j, team: $t, reason: \"former colleague\") { id } }",
            json!({ "e": j.slug, "j": j.judge_b_id, "t": j.team }),
        )
        .await;
    assert!(rec["recuseJudge"]["id"].is_string());
    let r = app
        .gql_as(
            &j.judge_b,
            op("SaveReview"),
            json!({ "assignment": j.assignment_b, "scores": scores }),
        )
        .await;
    assert_code(&r, "CONFLICT");
    let r = app
        .gql_as(
            &j.admin,
            op("AssignJudge"),
            json!({ "event": j.slug, "judge": j.judge_b_id, "project": j.project }),
        )
        .await;
    assert_code(&r, "CONFLICT");

    // A scored assignment stays.
    let r = app
        .gql_as(
            &j.admin,
            "mutation($a: ID!) { unassignJudge(assignment: $a) }",
            json!({ "a": j.assignment_a }),
        )
        .await;
    assert_code(&r, "CONFLICT");

    // The window closes: no more saves, nothing written.
    let past = Utc::now() - Duration::minutes(1);
    app.ok(
        Some(&j.admin),
        op("UpdateEvent"),
        json!({ "event": j.slug, "input": { "judgingOpen": rfc3339(past - Duration::days(1)), "judgingClose": rfc3339(past) } }),
    )
    .await;
    let head = app.audit_head().await;
    let r = app
        .gql_as(
            &j.judge_a,
            op("SaveReview"),
            json!({ "assignment": j.assignment_a, "scores": scores }),
        )
        .await;
    assert_code(&r, "WINDOW_CLOSED");
    assert_eq!(app.audit_head().await, head);
}

async fn auto_assign_plans_then_applies_once(app: App) {
    let admin = app.site_admin().await;
    let slug = format!("plan-{}", unique());
    app.create_event(&admin, &slug, 4).await;
    let track = app.create_track(&admin, &slug, "Main").await;
    for i in 0..6 {
        let p = app.sign_up(&format!("p{i}-{}@example.org", unique())).await;
        app.register(&p, &slug).await;
        app.create_team(&p, &slug, &format!("Team {i}")).await;
        let id = app
            .create_project(&p, &slug, &format!("Project {i}"), &track)
            .await;
        app.submit_project(&p, &id).await;
    }
    for i in 0..4 {
        let email = format!("j{i}-{}@example.org", unique());
        app.sign_up(&email).await;
        app.grant(&admin, &slug, &email, "JUDGE").await;
    }
    let plan = "mutation($e: String!, $apply: Boolean) { autoAssign(event: $e, k: 2, seed: 3, apply: $apply) {
        edges { judge project } coverage { project assigned shortfall } loads { judge load } components connected applied } }";
    let head = app.audit_head().await;
    let dry = app
        .ok(Some(&admin), plan, json!({ "e": slug, "apply": false }))
        .await;
    let dry = &dry["autoAssign"];
    assert_eq!(dry["edges"].as_array().map(Vec::len), Some(12));
    assert_eq!(dry["applied"], 0);
    assert_eq!(dry["connected"], true);
    assert!(
        dry["coverage"]
            .as_array()
            .unwrap()
            .iter()
            .all(|c| c["assigned"] == 2 && c["shortfall"] == 0)
    );
    assert!(
        dry["loads"]
            .as_array()
            .unwrap()
            .iter()
            .all(|l| l["load"] == 3),
        "balanced: {}",
        dry["loads"]
    );
    assert_eq!(app.audit_head().await, head, "a dry run writes nothing");
    let again = app
        .ok(Some(&admin), plan, json!({ "e": slug, "apply": false }))
        .await;
    assert_eq!(
        again["autoAssign"]["edges"], dry["edges"],
        "deterministic for a seed"
    );

    let applied = app
        .ok(Some(&admin), plan, json!({ "e": slug, "apply": true }))
        .await;
    assert_eq!(applied["autoAssign"]["applied"], 12);
    assert_eq!(
        app.audit_head().await,
        head + 1,
        "one audit entry for the whole plan"
    );
    let twice = app
        .ok(Some(&admin), plan, json!({ "e": slug, "apply": true }))
        .await;
    assert_eq!(
        twice["autoAssign"]["applied"], 0,
        "re-applying adds nothing"
    );
    let total = app
        .ok(
            Some(&admin),
            "query($e: String!) { event(slug: $e) { assignments(first: 100) { totalCount } } }",
            json!({ "e": slug }),
        )
        .await;
    assert_eq!(total["event"]["assignments"]["totalCount"], 12);
}

async fn exports_neutralize_formulas_and_are_audited(app: App) {
    let admin = app.site_admin().await;
    import_fixture(&app).await;
    let q = "mutation($e: String!, $k: ExportKind!) { exportCsv(event: $e, kind: $k) }";
    let before = app.audit_count(&admin, FIXTURE_SLUG).await;
    let scores = app
        .ok(Some(&admin), q, json!({ "e": FIXTURE_SLUG, "k": "SCORES" }))
        .await;
    let csv = scores["exportCsv"].as_str().unwrap();
    assert!(csv.starts_with("review_id,judge,project,submitted,version,functionality,quality,innovation,weighted_total,comment"));
    assert!(
        csv.contains("'=IMPORTXML"),
        "the fixture's formula comment is neutralized"
    );
    for line in csv.lines() {
        for cell in line.split(',') {
            let c = cell.trim_start_matches('"');
            assert!(
                !c.starts_with('=') && !c.starts_with('+') && !c.starts_with('@'),
                "live formula cell {cell:?}"
            );
        }
    }
    assert_eq!(
        app.audit_count(&admin, FIXTURE_SLUG).await,
        before + 1,
        "each export is audited"
    );
    for kind in ["REGISTRATIONS", "TEAMS", "PROJECTS", "ASSIGNMENTS", "AUDIT"] {
        let d = app
            .ok(Some(&admin), q, json!({ "e": FIXTURE_SLUG, "k": kind }))
            .await;
        assert!(
            d["exportCsv"].as_str().unwrap().lines().count() > 1,
            "{kind} has rows"
        );
    }
    let no_run = app
        .gql_as(&admin, q, json!({ "e": FIXTURE_SLUG, "k": "RESULTS" }))
        .await;
    assert_code(&no_run, "CONFLICT");
    app.ok(Some(&admin), op("RunCalibration"), run_vars()).await;
    let results = app
        .ok(
            Some(&admin),
            q,
            json!({ "e": FIXTURE_SLUG, "k": "RESULTS" }),
        )
        .await;
    assert!(
        results["exportCsv"]
            .as_str()
            .unwrap()
            .starts_with("rank,rank_low,rank_high,project")
    );
    let anon = app
        .gql(q, json!({ "e": FIXTURE_SLUG, "k": "SCORES" }))
        .await;
    assert_code(&anon, "UNAUTHENTICATED");
    // Another event's organizer, and a participant, are refused; nothing is written.
    let head = app.audit_head().await;
    let s = app.scenario().await;
    let head_after_setup = app.audit_head().await;
    assert!(head_after_setup > head);
    for token in [&s.organizer_b, &s.participant_a] {
        let r = app
            .gql_as(token, q, json!({ "e": s.event_a, "k": "SCORES" }))
            .await;
        assert_code(&r, "FORBIDDEN");
    }
    assert_eq!(
        app.audit_head().await,
        head_after_setup,
        "refusals write nothing"
    );
    // A query never runs it: an export is a mutation, and GET refuses mutations.
    let r = app
        .gql(
            "query($e: String!) { event(slug: $e) { export(kind: SCORES) } }",
            json!({ "e": FIXTURE_SLUG }),
        )
        .await;
    assert_code(&r, "BAD_USER_INPUT");
}

/// Every new event field, for the six callers: `true` where the caller may read it.
async fn judging_fields_follow_the_authorization_matrix(app: App) {
    let s: Scenario = app.scenario().await;
    use Caller::*;
    let organizer_only = [OrganizerA, SiteAdmin];
    let rows: [(&str, &[Caller]); 7] = [
        ("leaderboard { connected }", &organizer_only),
        ("assignments(first: 5) { totalCount }", &organizer_only),
        ("calibrationRuns { id }", &organizer_only),
        ("judgingProgress { assignments }", &organizer_only),
        ("recusals { id }", &organizer_only),
        ("rubric { key }", &CALLERS),
        ("results { version }", &CALLERS),
    ];
    for (field, allowed) in rows {
        for c in CALLERS {
            let q = format!("query($e: String!) {{ event(slug: $e) {{ {field} }} }}");
            let r = app.gql_opt(s.token(c), &q, json!({ "e": s.event_a })).await;
            let code = error_code(&r);
            if allowed.contains(&c) {
                assert_eq!(code, None, "{c:?} should read {field}: {r}");
            } else {
                let expected = if c == Anonymous {
                    "UNAUTHENTICATED"
                } else {
                    "FORBIDDEN"
                };
                assert_eq!(
                    code.as_deref(),
                    Some(expected),
                    "{c:?} must not read {field}: {r}"
                );
            }
        }
    }
    // Organizer-only mutations refuse everyone else, writing nothing: anonymous callers
    // must sign in, members without the role are forbidden.
    let head = app.audit_head().await;
    let e = json!({ "e": s.event_a, "t": s.team_a, "p": s.submitted, "j": "jdg_none", "r": "run.none" });
    let mutations = [
        "mutation($e: String!) { runCalibration(event: $e) { id } }",
        "mutation($e: String!) { autoAssign(event: $e, apply: true) { applied } }",
        "mutation($e: String!) { setCriterion(event: $e, input: { key: \"x\", name: \"X\" }) { key } }",
        "mutation($e: String!) { removeCriterion(event: $e, key: \"x\") }",
        "mutation($e: String!, $j: ID!, $p: ID!) { assignJudge(event: $e, judge: $j, project: $p) { id } }",
        "mutation($e: String!, $j: ID!, $t: ID!) { recuseJudge(event: $e, judge: $j, team: $t) { id } }",
        "mutation($e: String!, $r: ID!) { publishResults(event: $e, run: $r) { version } }",
    ];
    for c in [Anonymous, Participant, Judge, OrganizerB] {
        for m in &mutations {
            let r = app.gql_opt(s.token(c), m, e.clone()).await;
            let expected = if c == Anonymous {
                "UNAUTHENTICATED"
            } else {
                "FORBIDDEN"
            };
            assert_code(&r, expected);
        }
    }
    // Public reads of judging: the rubric, publications and the signing key.
    for c in CALLERS {
        let r = app
            .gql_opt(
                s.token(c),
                "query($e: String!) { signingKey { fingerprint } event(slug: $e) { publications { version } rubric { key } } }",
                json!({ "e": s.event_a }),
            )
            .await;
        assert_eq!(error_code(&r), None, "{c:?}: {r}");
    }
    // The caller's own queue: signed-in callers get theirs (empty unless they judge).
    for c in CALLERS {
        let r = app
            .gql_opt(
                s.token(c),
                "query($e: String!) { event(slug: $e) { myProgress { total } nextAssignment { id } } }",
                json!({ "e": s.event_a }),
            )
            .await;
        if c == Anonymous {
            assert_code(&r, "UNAUTHENTICATED");
        } else {
            assert_eq!(data(&r)["event"]["myProgress"]["total"], 0, "{c:?}");
        }
    }
    assert_eq!(app.audit_head().await, head);
    // The judge's own queue is theirs alone; others see an empty one.
    for c in [Participant, OrganizerB] {
        let r = app
            .ok(
                s.token(c),
                "query($e: String!) { event(slug: $e) { myAssignments { id } } }",
                json!({ "e": s.event_a }),
            )
            .await;
        assert_eq!(r["event"]["myAssignments"], json!([]));
    }
}

async fn results_subscription_fires_after_publication(app: App) {
    let admin = app.site_admin().await;
    import_fixture(&app).await;
    let mut ws = app.ws(json!({})).await;
    ws.subscribe(
        "r",
        "subscription($e: String!) { resultsPublished(event: $e) { version final runId } }",
        json!({ "e": FIXTURE_SLUG }),
    )
    .await;
    let run = app.ok(Some(&admin), op("RunCalibration"), run_vars()).await;
    let run_id = str_at(&run, "/runCalibration/id");
    app.ok(
        Some(&admin),
        op("PublishResults"),
        json!({ "event": FIXTURE_SLUG, "run": run_id, "final": true }),
    )
    .await;
    let msg = ws
        .next_json(std::time::Duration::from_secs(20))
        .await
        .expect("a publication message");
    assert_eq!(
        msg["payload"]["data"]["resultsPublished"]["version"], 1,
        "{msg}"
    );
    assert_eq!(
        msg["payload"]["data"]["resultsPublished"]["runId"],
        run_id.as_str()
    );
}

/// The review's revisions as stored: (version, scores, comment, submitted), oldest first.
async fn revisions(app: &App, review: &str) -> Vec<(i64, Value, String, bool)> {
    use sea_orm::{ConnectionTrait, Database, Statement};
    let db = Database::connect(app.db.url()).await.expect("connect");
    let sql = "SELECT rr.version, rr.scores, rr.comment, rr.submitted FROM review_revisions rr \
               JOIN reviews r ON r.id = rr.review_id WHERE r.public_id = $1 ORDER BY rr.version";
    let rows = db
        .query_all_raw(Statement::from_sql_and_values(
            db.get_database_backend(),
            sql,
            [review.into()],
        ))
        .await
        .expect("read review_revisions");
    let out = rows
        .iter()
        .map(|r| {
            let version: i32 = r.try_get_by_index(0).expect("version");
            let scores: String = r.try_get_by_index(1).expect("scores");
            let comment: String = r.try_get_by_index(2).expect("comment");
            let submitted: bool = r.try_get_by_index(3).expect("submitted");
            let scores = serde_json::from_str(&scores).expect("scores are JSON");
            (i64::from(version), scores, comment, submitted)
        })
        .collect();
    let _ = db.close().await;
    out
}

async fn every_review_save_keeps_a_revision(app: App) {
    let j = judged_event(&app).await;
    let save = |scores: Value, comment: &str, submit: bool| json!({ "assignment": j.assignment_a, "scores": scores, "comment": comment, "submit": submit });
    let first = app
        .ok(
            Some(&j.judge_a),
            op("SaveReview"),
            save(
                json!([{ "criterion": "impact", "value": 4 }]),
                "first look",
                false,
            ),
        )
        .await;
    let review = str_at(&first, "/saveReview/id");
    let second = app
        .ok(
            Some(&j.judge_a),
            op("SaveReview"),
            save(
                json!([{ "criterion": "impact", "value": 2 }, { "criterion": "craft", "value": 5 }]),
                "changed my mind",
                true,
            ),
        )
        .await;
    // The same review, now at version 2 with the new scores.
    assert_eq!(second["saveReview"]["id"], review.as_str());
    assert_eq!(second["saveReview"]["version"], 2);
    assert_eq!(
        second["saveReview"]["scores"],
        json!([{ "criterion": "craft", "value": 5 }, { "criterion": "impact", "value": 2 }])
    );
    let current = app
        .ok(Some(&j.admin), REVIEWS, json!({ "p": j.project }))
        .await;
    let shown: Vec<&Value> = current["project"]["reviews"]
        .as_array()
        .expect("reviews")
        .iter()
        .filter(|r| r["id"] == review.as_str())
        .collect();
    assert_eq!(shown.len(), 1, "one review, not one per save: {current}");
    assert_eq!(shown[0]["comment"], "changed my mind");

    // Every save is kept: the first scores survive the second save.
    assert_eq!(
        revisions(&app, &review).await,
        vec![
            (1, json!({ "impact": 4 }), "first look".to_string(), false),
            (
                2,
                json!({ "craft": 5, "impact": 2 }),
                "changed my mind".to_string(),
                true
            ),
        ]
    );
    // The history is what organizers read in the audit log: one entry per save, naming
    // the review and its version.
    let log = crate::audit::audit_log(&app, &j.admin, &j.slug).await;
    let saves: Vec<(String, Value)> = log
        .iter()
        .filter(|n| n["objectId"] == review.as_str())
        .map(|n| {
            let payload: Value = n["payload"]
                .as_str()
                .and_then(|p| serde_json::from_str(p).ok())
                .unwrap_or_else(|| n["payload"].clone());
            (str_at(n, "/action"), payload["version"].clone())
        })
        .collect();
    assert_eq!(
        saves,
        vec![
            ("review.saved".to_string(), json!(1)),
            ("review.submitted".to_string(), json!(2)),
        ]
    );
    // A refused save adds no revision.
    let r = app
        .gql_as(
            &j.judge_a,
            op("SaveReview"),
            save(json!([{ "criterion": "impact", "value": 9 }]), "no", true),
        )
        .await;
    assert_bad_input(&r, &["scores"]);
    assert_eq!(revisions(&app, &review).await.len(), 2);
}

async fn judges_are_never_on_a_team_they_judge(app: App) {
    let j = judged_event(&app).await;
    let head = app.audit_head().await;
    let participant_email = str_at(
        &app.ok(
            Some(&j.participant),
            "{ viewer { user { email } } }",
            json!({}),
        )
        .await,
        "/viewer/user/email",
    );

    // Someone on a team does not become a judge of the event.
    let r = app
        .gql_as(
            &j.admin,
            op("GrantRole"),
            json!({ "event": j.slug, "email": participant_email, "role": "JUDGE" }),
        )
        .await;
    assert_code(&r, "CONFLICT");
    assert!(
        error_message(&r).contains("team"),
        "says why: {}",
        error_message(&r)
    );

    // A judge does not join a team: not by invite code, not by starting one, not added by
    // an organizer.
    let captain = app
        .sign_up(&format!("captain-{}@example.org", unique()))
        .await;
    app.register(&captain, &j.slug).await;
    let (other_team, code) = app.create_team(&captain, &j.slug, "Other").await;
    app.register(&j.judge_a, &j.slug).await;
    let head_before_joins = app.audit_head().await;
    let r = app
        .gql_as(&j.judge_a, op("JoinTeam"), json!({ "inviteCode": code }))
        .await;
    assert_code(&r, "CONFLICT");
    let r = app
        .gql_as(
            &j.judge_a,
            op("CreateTeam"),
            json!({ "event": j.slug, "name": "Judges United" }),
        )
        .await;
    assert_code(&r, "CONFLICT");
    let judge_a_email = str_at(
        &app.ok(Some(&j.judge_a), "{ viewer { user { email } } }", json!({}))
            .await,
        "/viewer/user/email",
    );
    let r = app
        .gql_as(
            &j.admin,
            op("AddTeamMember"),
            json!({ "team": other_team, "email": judge_a_email }),
        )
        .await;
    assert_code(&r, "CONFLICT");
    assert_eq!(
        app.audit_head().await,
        head_before_joins,
        "refusals write nothing"
    );
    assert!(app.audit_head().await > head);

    // A judge who is on the team anyway (a database edited by hand, an older release) is
    // still never assigned to its project, by hand or by the planner.
    let email = format!("judge-c-{}@example.org", unique());
    app.sign_up(&email).await;
    let judge_c = app.grant(&j.admin, &j.slug, &email, "JUDGE").await;
    {
        use sea_orm::{ConnectionTrait, Database, Statement};
        let db = Database::connect(app.db.url()).await.expect("connect");
        let sql = "INSERT INTO team_members (event_id, team_id, user_id, created_at) \
                   SELECT t.event_id, t.id, u.id, t.created_at FROM teams t, users u \
                   WHERE t.public_id = $1 AND u.email = $2";
        let done = db
            .execute_raw(Statement::from_sql_and_values(
                db.get_database_backend(),
                sql,
                [j.team.as_str().into(), email.as_str().into()],
            ))
            .await
            .expect("put the judge on the team");
        assert_eq!(done.rows_affected(), 1);
        let _ = db.close().await;
    }
    let head = app.audit_head().await;
    let r = app
        .gql_as(
            &j.admin,
            op("AssignJudge"),
            json!({ "event": j.slug, "judge": judge_c, "project": j.project }),
        )
        .await;
    assert_code(&r, "CONFLICT");
    assert!(
        error_message(&r).contains("own team"),
        "says why: {}",
        error_message(&r)
    );
    assert_eq!(app.audit_head().await, head, "nothing written");
    app.ok(
        Some(&j.admin),
        "mutation($e: String!) { autoAssign(event: $e, k: 3, seed: 1, apply: true) { applied } }",
        json!({ "e": j.slug }),
    )
    .await;
    let assignments = app
        .ok(
            Some(&j.admin),
            "query($e: String!) { event(slug: $e) { assignments(first: 100) { nodes { judge { id } project { id } } } } }",
            json!({ "e": j.slug }),
        )
        .await;
    let nodes = assignments["event"]["assignments"]["nodes"]
        .as_array()
        .expect("assignments");
    assert!(
        !nodes.iter().any(|n| n["judge"]["id"] == judge_c.as_str()),
        "the planner leaves the team's judge out: {assignments}"
    );
}
