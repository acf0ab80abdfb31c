//! The first hour after log-in: `Viewer.myEvents` says each person's next thing to do per
//! event (a judge's queue, a team's draft, an organizer's next setup step), and
//! `Event.setupSteps` checks an organizer's setup from the data.

use serde_json::{Value, json};

use crate::harness::{App, assert_code, unique};

e2e! {
    the_checklist_and_my_events_follow_the_data,
}

const STEPS: &str = "query($e: String!) { event(slug: $e) { setupSteps { key done count } } }";
const MINE: &str =
    "{ viewer { myEvents { event { slug } roles toScore drafts submitted setupStep } } }";

async fn steps(app: &App, token: &str, slug: &str) -> Vec<(String, bool, i64)> {
    let d = app.ok(Some(token), STEPS, json!({ "e": slug })).await;
    d["event"]["setupSteps"]
        .as_array()
        .unwrap_or_else(|| panic!("setupSteps: {d}"))
        .iter()
        .map(|s| {
            (
                s["key"].as_str().unwrap_or_default().to_owned(),
                s["done"] == true,
                s["count"].as_i64().unwrap_or(-1),
            )
        })
        .collect()
}

fn done(steps: &[(String, bool, i64)], key: &str) -> bool {
    steps
        .iter()
        .find(|s| s.0 == key)
        .unwrap_or_else(|| panic!("no step {key} in {steps:?}"))
        .1
}

async fn mine(app: &App, token: &str, slug: &str) -> Value {
    let d = app.ok(Some(token), MINE, json!({})).await;
    d["viewer"]["myEvents"]
        .as_array()
        .and_then(|a| a.iter().find(|e| e["event"]["slug"] == slug))
        .cloned()
        .unwrap_or_else(|| panic!("{slug} is not among {d}"))
}

async fn the_checklist_and_my_events_follow_the_data(app: App) {
    let admin = app.site_admin().await;
    let slug = format!("first-hour-{}", unique());
    app.create_event(&admin, &slug, 4).await;

    // A new event: the judging window is set; nothing else is.
    let s = steps(&app, &admin, &slug).await;
    let keys: Vec<&str> = s.iter().map(|s| s.0.as_str()).collect();
    assert_eq!(
        keys,
        [
            "TRACKS",
            "RUBRIC",
            "WINDOWS",
            "INVITE_JUDGES",
            "ASSIGN",
            "JUDGING",
            "CALIBRATE",
            "PUBLISH"
        ]
    );
    assert_eq!(
        s.iter()
            .filter(|s| s.1)
            .map(|s| s.0.as_str())
            .collect::<Vec<_>>(),
        ["WINDOWS"]
    );
    assert_eq!(mine(&app, &admin, &slug).await["setupStep"], "TRACKS");

    // Tracks and a rubric: checked from the rows, not from clicks.
    let track = app.create_track(&admin, &slug, "Tools").await;
    app.ok(
        Some(&admin),
        "mutation($e: String!, $i: CriterionInput!) { setCriterion(event: $e, input: $i) { key } }",
        json!({ "e": slug, "i": { "key": "impact", "name": "Impact", "min": 1, "max": 5 } }),
    )
    .await;
    let s = steps(&app, &admin, &slug).await;
    assert!(done(&s, "TRACKS") && done(&s, "RUBRIC"), "{s:?}");
    assert_eq!(s[0].2, 1, "one track: {s:?}");
    assert_eq!(
        mine(&app, &admin, &slug).await["setupStep"],
        "INVITE_JUDGES"
    );

    // A judge: the step is taken; their own My events shows an empty queue.
    let judge_email = format!("judge-{}@example.org", unique());
    let judge = app.sign_up(&judge_email).await;
    let judge_id = app.grant(&admin, &slug, &judge_email, "JUDGE").await;
    assert!(done(&steps(&app, &admin, &slug).await, "INVITE_JUDGES"));
    let j = mine(&app, &judge, &slug).await;
    assert_eq!(j["roles"], json!(["JUDGE"]), "{j}");
    assert_eq!(j["toScore"], 0, "{j}");
    assert!(j["setupStep"].is_null() && j["drafts"].is_null(), "{j}");

    // A participant with a draft; then submitted.
    let pat_email = format!("pat-{}@example.org", unique());
    let pat = app.sign_up(&pat_email).await;
    app.register(&pat, &slug).await;
    let p = mine(&app, &pat, &slug).await;
    assert!(p["drafts"].is_null(), "not on a team yet: {p}");
    app.create_team(&pat, &slug, "Drafters").await;
    let project = app.create_project(&pat, &slug, "Half done", &track).await;
    let p = mine(&app, &pat, &slug).await;
    assert_eq!(
        (p["drafts"].clone(), p["submitted"].clone()),
        (json!(1), json!(0)),
        "{p}"
    );
    app.submit_project(&pat, &project).await;
    let p = mine(&app, &pat, &slug).await;
    assert_eq!(
        (p["drafts"].clone(), p["submitted"].clone()),
        (json!(0), json!(1)),
        "{p}"
    );

    // An assignment: the organizer's step moves on and the judge's queue counts it.
    app.ok(
        Some(&admin),
        "mutation($e: String!, $j: ID!, $p: ID!) { assignJudge(event: $e, judge: $j, project: $p) { id } }",
        json!({ "e": slug, "j": judge_id, "p": project }),
    )
    .await;
    assert_eq!(mine(&app, &judge, &slug).await["toScore"], 1);
    assert_eq!(mine(&app, &admin, &slug).await["setupStep"], "JUDGING");

    // Only organizers read the checklist.
    let r = app.gql_as(&pat, STEPS, json!({ "e": slug })).await;
    assert!(
        r["data"]["event"]["setupSteps"].is_null(),
        "a participant reads no checklist: {r}"
    );
    assert_code(&r, "FORBIDDEN");
}
