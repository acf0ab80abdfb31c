//! Organizer control of submissions: hide, disqualify and mark duplicates, each with a
//! reason the team sees, each reversible and audited; and the suggested duplicates.

use serde_json::{Value, json};

use crate::harness::{App, Scenario, assert_bad_input, assert_code, error_code, op, str_at};

e2e! {
    hidden_and_duplicate_projects_leave_the_gallery_with_reasons_their_team_sees,
    disqualified_and_duplicate_projects_leave_the_ranking,
    only_the_events_organizers_moderate,
    duplicates_are_suggested_by_repository_and_by_text,
    organizers_move_a_project_to_another_track_after_the_deadline,
}

const GALLERY: &str =
    "query($e: String!) { event(slug: $e) { projects(first: 100) { edges { node { id } } } } }";
const MODERATION: &str = "query($id: ID!) { project(id: $id) { id hiddenReason disqualifiedReason duplicateOf { id } } }";

async fn gallery(app: &App, token: Option<&str>, event: &str) -> Vec<String> {
    app.ok(token, GALLERY, json!({ "e": event })).await["event"]["projects"]["edges"]
        .as_array()
        .expect("edges")
        .iter()
        .map(|e| e["node"]["id"].as_str().expect("id").to_owned())
        .collect()
}

async fn second_project(app: &App, s: &Scenario, title: &str) -> String {
    let p = app
        .create_project(&s.participant_a, &s.event_a, title, &s.track_a)
        .await;
    app.submit_project(&s.participant_a, &p).await;
    p
}

async fn hidden_and_duplicate_projects_leave_the_gallery_with_reasons_their_team_sees(app: App) {
    let s = app.scenario().await;
    let org = Some(s.organizer_a.as_str());
    assert!(gallery(&app, None, &s.event_a).await.contains(&s.submitted));

    // Hidden: out of the gallery and out of the public's reach; the team reads why.
    let d = app
        .ok(
            org,
            op("HideProject"),
            json!({ "id": s.submitted, "reason": "spam links" }),
        )
        .await;
    assert_eq!(d["hideProject"]["hiddenReason"], "spam links");
    assert!(!gallery(&app, None, &s.event_a).await.contains(&s.submitted));
    let anonymous = app.gql(MODERATION, json!({ "id": s.submitted })).await;
    assert!(anonymous["data"]["project"].is_null(), "{anonymous}");
    let team = app
        .ok(
            Some(&s.participant_a),
            MODERATION,
            json!({ "id": s.submitted }),
        )
        .await;
    assert_eq!(team["project"]["hiddenReason"], "spam links");
    assert_code(
        &app.gql_as(
            &s.organizer_a,
            op("HideProject"),
            json!({ "id": s.submitted, "reason": "again" }),
        )
        .await,
        "CONFLICT",
    );
    assert_bad_input(
        &app.gql_as(
            &s.organizer_a,
            op("DisqualifyProject"),
            json!({ "id": s.submitted, "reason": " " }),
        )
        .await,
        &["reason"],
    );
    app.ok(org, op("UnhideProject"), json!({ "id": s.submitted }))
        .await;
    assert!(gallery(&app, None, &s.event_a).await.contains(&s.submitted));

    // A duplicate: out of the gallery, pointing at the original; cleared, it is back.
    let copy = second_project(&app, &s, "Copy").await;
    assert_bad_input(
        &app.gql_as(
            &s.organizer_a,
            op("MarkDuplicate"),
            json!({ "id": copy, "of": copy }),
        )
        .await,
        &["of"],
    );
    app.ok(
        org,
        op("MarkDuplicate"),
        json!({ "id": copy, "of": s.submitted }),
    )
    .await;
    assert!(!gallery(&app, None, &s.event_a).await.contains(&copy));
    let team = app
        .ok(Some(&s.participant_a), MODERATION, json!({ "id": copy }))
        .await;
    assert_eq!(team["project"]["duplicateOf"]["id"], s.submitted.as_str());
    // A duplicate of a duplicate is refused; so is marking the original while copies
    // point at it.
    let third = second_project(&app, &s, "Third").await;
    assert_bad_input(
        &app.gql_as(
            &s.organizer_a,
            op("MarkDuplicate"),
            json!({ "id": third, "of": copy }),
        )
        .await,
        &["of"],
    );
    assert_code(
        &app.gql_as(
            &s.organizer_a,
            op("MarkDuplicate"),
            json!({ "id": s.submitted, "of": third }),
        )
        .await,
        "CONFLICT",
    );
    app.ok(org, op("ClearDuplicate"), json!({ "id": copy }))
        .await;
    assert!(gallery(&app, None, &s.event_a).await.contains(&copy));
}

async fn ranking_exclusions(app: &App, s: &Scenario) -> Value {
    let d = app
        .ok(
            Some(&s.organizer_a),
            "query($e: String!) { event(slug: $e) { leaderboard { projects { projectExternalId project { id } excluded } } } }",
            json!({ "e": s.event_a }),
        )
        .await;
    let mut out = serde_json::Map::new();
    for p in d["event"]["leaderboard"]["projects"]
        .as_array()
        .expect("projects")
    {
        if let Some(id) = p["project"]["id"].as_str() {
            out.insert(id.to_owned(), p["excluded"].clone());
        }
    }
    Value::Object(out)
}

async fn disqualified_and_duplicate_projects_leave_the_ranking(app: App) {
    let s = app.scenario().await;
    let org = Some(s.organizer_a.as_str());
    let copy = second_project(&app, &s, "Copy").await;
    // (The scenario has no reviews yet: every project is unranked for that reason.)
    let before = ranking_exclusions(&app, &s).await;
    assert_eq!(before[&s.submitted], "no_usable_reviews", "{before}");
    app.ok(
        org,
        op("DisqualifyProject"),
        json!({ "id": s.submitted, "reason": "built before the event" }),
    )
    .await;
    app.ok(
        org,
        op("MarkDuplicate"),
        json!({ "id": copy, "of": s.submitted }),
    )
    .await;
    // Disqualified: still in the gallery, out of the ranking with its reason.
    assert!(gallery(&app, None, &s.event_a).await.contains(&s.submitted));
    let after = ranking_exclusions(&app, &s).await;
    assert_eq!(
        after[&s.submitted], "disqualified: built before the event",
        "{after}"
    );
    assert_eq!(after[&copy], "duplicate", "{after}");
    // A calibration run records the same exclusions in what it signs.
    let run = app
        .ok(
            org,
            "mutation($e: String!) { runCalibration(event: $e, seed: 1, bootstrap: 0) { projects { project { id } excluded } } }",
            json!({ "e": s.event_a }),
        )
        .await;
    let excluded: Vec<&Value> = run["runCalibration"]["projects"]
        .as_array()
        .expect("projects")
        .iter()
        .filter(|p| p["project"]["id"] == s.submitted.as_str())
        .map(|p| &p["excluded"])
        .collect();
    assert_eq!(excluded, [&json!("disqualified: built before the event")]);
    app.ok(org, op("RequalifyProject"), json!({ "id": s.submitted }))
        .await;
    assert_eq!(
        ranking_exclusions(&app, &s).await[&s.submitted],
        before[&s.submitted]
    );
    // Each change is one audit entry, under the convention noun.verb_past.
    let log = crate::audit::audit_log(&app, &s.organizer_a, &s.event_a).await;
    let actions: Vec<&str> = log.iter().filter_map(|n| n["action"].as_str()).collect();
    for want in [
        "project.disqualified",
        "project.marked_duplicate",
        "project.requalified",
    ] {
        assert_eq!(
            actions.iter().filter(|a| **a == want).count(),
            1,
            "{want}: {actions:?}"
        );
    }
}

async fn only_the_events_organizers_moderate(app: App) {
    let s = app.scenario().await;
    let copy = second_project(&app, &s, "Copy").await;
    let head = app.audit_head().await;
    let attempts = [
        (
            op("HideProject"),
            json!({ "id": s.submitted, "reason": "mine" }),
        ),
        (
            op("DisqualifyProject"),
            json!({ "id": s.submitted, "reason": "mine" }),
        ),
        (
            op("MarkDuplicate"),
            json!({ "id": copy, "of": s.submitted }),
        ),
    ];
    for who in [&s.participant_a, &s.judge_a, &s.organizer_b] {
        for (query, vars) in &attempts {
            let r = app.gql_as(who, query, vars.clone()).await;
            assert_code(&r, "FORBIDDEN");
        }
        let r = app
            .gql_as(
                who,
                op("DuplicateSuggestions"),
                json!({ "event": s.event_a }),
            )
            .await;
        assert!(error_code(&r).is_some(), "{r}");
    }
    for (query, vars) in &attempts {
        assert_code(&app.gql(query, vars.clone()).await, "UNAUTHENTICATED");
    }
    assert_eq!(app.audit_head().await, head, "nothing was written");
}

async fn duplicates_are_suggested_by_repository_and_by_text(app: App) {
    let s = app.scenario().await;
    let org = Some(s.organizer_a.as_str());
    let edit = async |id: &str, input: Value| {
        app.ok(
            Some(&s.participant_a),
            op("UpdateProject"),
            json!({ "id": id, "input": input }),
        )
        .await;
    };
    edit(
        &s.submitted,
        json!({ "repoUrl": "https://github.com/acme/solar", "summary": "Plans solar panels for homes." }),
    )
    .await;
    let same_repo = second_project(&app, &s, "Another name").await;
    edit(
        &same_repo,
        json!({ "repoUrl": "http://www.GitHub.com/acme/solar.git/" }),
    )
    .await;
    let same_text = second_project(&app, &s, "Chess Engine").await;
    edit(
        &same_text,
        json!({ "summary": "A fast chess engine, written in Rust" }),
    )
    .await;
    let copy_text = second_project(&app, &s, "chess engine!").await;
    edit(
        &copy_text,
        json!({ "summary": "A fast chess engine written in rust." }),
    )
    .await;
    let unrelated = second_project(&app, &s, "Weather station").await;
    edit(
        &unrelated,
        json!({ "summary": "Reads the wind from a balcony." }),
    )
    .await;

    let suggested = async || {
        let d = app
            .ok(
                org,
                op("DuplicateSuggestions"),
                json!({ "event": s.event_a }),
            )
            .await;
        d["event"]["duplicateSuggestions"]
            .as_array()
            .expect("suggestions")
            .iter()
            .map(|x| {
                (
                    str_at(x, "/project/id"),
                    str_at(x, "/of/id"),
                    str_at(x, "/reason"),
                )
            })
            .collect::<Vec<_>>()
    };
    let found = suggested().await;
    assert!(
        found.contains(&(
            same_repo.clone(),
            s.submitted.clone(),
            "same_repository".into()
        )),
        "{found:?}"
    );
    assert!(
        found.contains(&(copy_text.clone(), same_text.clone(), "similar_text".into())),
        "{found:?}"
    );
    assert_eq!(found.len(), 2, "nothing else: {found:?}");
    // Marked, a pair is no longer suggested.
    app.ok(
        org,
        op("MarkDuplicate"),
        json!({ "id": copy_text, "of": same_text }),
    )
    .await;
    let found = suggested().await;
    assert_eq!(found.len(), 1, "{found:?}");
}

async fn organizers_move_a_project_to_another_track_after_the_deadline(app: App) {
    let s = app.scenario().await;
    let second = app.create_track(&s.organizer_a, &s.event_a, "Second").await;
    app.close_submissions(&s.organizer_a, &s.event_a).await;
    // The team can no longer move it.
    let r = app
        .gql_as(
            &s.participant_a,
            op("UpdateProject"),
            json!({ "id": s.submitted, "input": { "track": second } }),
        )
        .await;
    assert_code(&r, "WINDOW_CLOSED");
    let mv =
        |track: &str, reason: &str| json!({ "id": s.submitted, "track": track, "reason": reason });
    for who in [&s.participant_a, &s.judge_a, &s.organizer_b] {
        assert_code(
            &app.gql_as(who, op("ChangeProjectTrack"), mv(&second, "mine"))
                .await,
            "FORBIDDEN",
        );
    }
    assert_bad_input(
        &app.gql_as(&s.organizer_a, op("ChangeProjectTrack"), mv(&second, ""))
            .await,
        &["reason"],
    );
    assert_bad_input(
        &app.gql_as(
            &s.organizer_a,
            op("ChangeProjectTrack"),
            mv(&s.track_b, "elsewhere"),
        )
        .await,
        &["track"],
    );
    let d = app
        .ok(
            Some(&s.organizer_a),
            op("ChangeProjectTrack"),
            mv(&second, "submitted to the wrong track"),
        )
        .await;
    assert_eq!(d["changeProjectTrack"]["track"]["id"], second.as_str());
    assert_code(
        &app.gql_as(
            &s.organizer_a,
            op("ChangeProjectTrack"),
            mv(&second, "again"),
        )
        .await,
        "CONFLICT",
    );
    let log = crate::audit::audit_log(&app, &s.organizer_a, &s.event_a).await;
    let moved = log
        .iter()
        .find(|e| e["action"] == "project.track_changed")
        .expect("the move is audited");
    assert!(
        moved["payload"]
            .to_string()
            .contains("submitted to the wrong track"),
        "{moved}"
    );
}
