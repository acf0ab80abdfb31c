//! `serve --demo`: every printed account (site admin, organizer, judge, participant) has
//! something to do, and the operator can get anyone back in with `verdict user
//! reset-password`.

use serde_json::{Value, json};

use crate::harness::App;

e2e! {
    every_demo_account_has_something_to_do ["--demo"],
}

/// The operator's `verdict user reset-password` prints a one-time password.
async fn reset_password(app: &App, email: &str) -> String {
    let out = app.cli(&["user", "reset-password", "--email", email]).await;
    assert!(out.success(), "{out:?}");
    out.stdout.trim().to_owned()
}

async fn every_demo_account_has_something_to_do(app: App) {
    // The operator gets everyone back in without making anyone an admin; a reset ends
    // the account's sessions.
    let judge_password = reset_password(&app, "judge@demo.verdict.local").await;
    let judge = app
        .log_in("judge@demo.verdict.local", &judge_password)
        .await;
    let again = reset_password(&app, "judge@demo.verdict.local").await;
    assert_ne!(again, judge_password);
    let stale = app
        .gql_resp(Some(&judge), "{ viewer { user { id } } }", json!({}))
        .await;
    assert_eq!(stale.status, 401, "sessions end with a reset");
    let judge = app.log_in("judge@demo.verdict.local", &again).await;
    let me = app
        .ok(
            Some(&judge),
            "{ viewer { user { isSiteAdmin } } }",
            json!({}),
        )
        .await;
    assert_eq!(me["viewer"]["user"]["isSiteAdmin"], false);
    let out = app
        .cli(&[
            "user",
            "reset-password",
            "--email",
            "nobody@demo.verdict.local",
        ])
        .await;
    assert!(!out.success(), "an unknown account is refused: {out:?}");

    // The judge has a queue on the event whose judging is open, and can score it.
    let queue = app
        .ok(
            Some(&judge),
            "{ event(slug: \"demo-judging\") { myAssignments { id status } rubric { key min max } } }",
            json!({}),
        )
        .await;
    let assignments = queue["event"]["myAssignments"].as_array().expect("a list");
    assert!(
        assignments.len() >= 3,
        "the demo judge has a queue: {queue}"
    );
    let scores: Vec<Value> = queue["event"]["rubric"]
        .as_array()
        .expect("rubric")
        .iter()
        .map(|c| json!({ "criterion": c["key"], "value": c["max"] }))
        .collect();
    app.ok(
        Some(&judge),
        "mutation($a: ID!, $s: [ScoreInput!]!) { saveReview(assignment: $a, scores: $s, submit: true) { submitted } }",
        json!({ "a": assignments[0]["id"], "s": scores }),
    )
    .await;

    // The participant's team has a draft to submit while submissions are open.
    let password = reset_password(&app, "participant@demo.verdict.local").await;
    let participant = app
        .log_in("participant@demo.verdict.local", &password)
        .await;
    let team = app
        .ok(
            Some(&participant),
            "{ event(slug: \"demo-hack\") { myTeam { projects { id status } } } }",
            json!({}),
        )
        .await;
    let draft = team["event"]["myTeam"]["projects"]
        .as_array()
        .and_then(|p| p.iter().find(|p| p["status"] == "DRAFT"))
        .cloned()
        .unwrap_or_else(|| panic!("the participant's team has a draft: {team}"));
    app.submit_project(&participant, draft["id"].as_str().expect("id"))
        .await;

    // The organizer watches judging progress on the live event and sees the score land.
    let password = reset_password(&app, "organizer@demo.verdict.local").await;
    let organizer = app.log_in("organizer@demo.verdict.local", &password).await;
    let progress = app
        .ok(
            Some(&organizer),
            "{ event(slug: \"demo-judging\") { judgingProgress { done pending } } }",
            json!({}),
        )
        .await;
    let p = &progress["event"]["judgingProgress"];
    assert!(p["done"].as_i64().unwrap_or(0) >= 7, "{progress}");
    assert!(p["pending"].as_i64().unwrap_or(0) >= 2, "{progress}");

    // The site admin creates an event of their own, and organizes it.
    let password = reset_password(&app, "admin@demo.verdict.local").await;
    let admin = app.log_in("admin@demo.verdict.local", &password).await;
    let me = app
        .ok(
            Some(&admin),
            "{ viewer { user { isSiteAdmin } } }",
            json!({}),
        )
        .await;
    assert_eq!(me["viewer"]["user"]["isSiteAdmin"], true, "{me}");
    let created = app
        .ok(
            Some(&admin),
            "mutation($i: CreateEventInput!) { createEvent(input: $i) { slug myRoles } }",
            json!({ "i": {
                "name": "The admin's own hack",
                "slug": "admins-own-hack",
                "submissionsOpen": "2030-01-01T09:00:00Z",
                "submissionsClose": "2030-01-02T09:00:00Z",
            } }),
        )
        .await;
    assert_eq!(
        created["createEvent"]["slug"], "admins-own-hack",
        "{created}"
    );
    assert_eq!(
        created["createEvent"]["myRoles"],
        json!(["ORGANIZER"]),
        "{created}"
    );
}
