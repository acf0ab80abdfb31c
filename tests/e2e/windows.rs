//! Deadlines and ownership: a closed submission window refuses every write, and a
//! participant cannot write into another team's project or another event's track.

use std::sync::atomic::{AtomicBool, Ordering};

use chrono::{Duration, Utc};
use entity::event;
use serde_json::{Value, json};

use crate::harness::{App, HeldChange, assert_code, data, op, rfc3339};

const PROJECT: &str =
    "query($id: ID!) { project(id: $id) { id title tagline status updatedAt submittedAt } }";

async fn project_state(app: &App, token: &str, id: &str) -> Value {
    app.ok(Some(token), PROJECT, json!({ "id": id })).await["project"].clone()
}

e2e! {
    late_submission_is_refused,
    submissions_not_yet_open_are_refused,
    cannot_write_for_another_team_or_event,
    a_window_closed_while_a_write_waits_refuses_it,
}

/// The window a write checks is the one in force when it commits, not the one its client
/// (or the server, before its transaction) last read. An organizer's closing of the
/// submission window is under way (updated, not yet committed) when a participant's
/// `createProject` arrives: the request waits for it and answers WINDOW_CLOSED, writing
/// nothing. (Checked against an event read before its transaction, it succeeded.)
async fn a_window_closed_while_a_write_waits_refuses_it(app: App) {
    let s = app.scenario().await;
    let audit_before = app.audit_count(&s.organizer_a, &s.event_a).await;
    let team = json!({ "event": s.event_a });
    let team_before = app
        .ok(Some(&s.participant_a), op("MyTeamProjects"), team.clone())
        .await;

    let now = Utc::now();
    let closing = HeldChange::set(
        &app,
        &s.event_a,
        &[
            (event::Column::SubmissionsOpen, now - Duration::days(2)),
            (event::Column::SubmissionsClose, now - Duration::hours(1)),
        ],
    )
    .await;
    let answered = AtomicBool::new(false);
    let create = async {
        let r = app
            .gql_as(
                &s.participant_a,
                op("CreateProject"),
                json!({ "event": s.event_a, "input": { "title": "Raced the deadline", "track": s.track_a } }),
            )
            .await;
        answered.store(true, Ordering::SeqCst);
        r
    };
    let (r, ()) = tokio::join!(create, closing.commit_when_waited_on(&answered));
    assert_code(&r, "WINDOW_CLOSED");

    assert_eq!(
        app.audit_count(&s.organizer_a, &s.event_a).await,
        audit_before,
        "no audit event"
    );
    let team_after = app
        .ok(Some(&s.participant_a), op("MyTeamProjects"), team)
        .await;
    assert_eq!(team_after, team_before, "no new project");
}

async fn late_submission_is_refused(app: App) {
    let s = app.scenario().await;
    // The organizer closes submissions an hour ago.
    app.close_submissions(&s.organizer_a, &s.event_a).await;

    let audit_before = app.audit_count(&s.organizer_a, &s.event_a).await;
    let draft_before = project_state(&app, &s.participant_a, &s.draft).await;
    let team_before = app
        .ok(
            Some(&s.participant_a),
            op("MyTeamProjects"),
            json!({ "event": s.event_a }),
        )
        .await;

    let r = app
        .gql_as(
            &s.participant_a,
            op("CreateProject"),
            json!({ "event": s.event_a, "input": { "title": "Too late", "track": s.track_a } }),
        )
        .await;
    assert_code(&r, "WINDOW_CLOSED");

    let r = app
        .gql_as(
            &s.participant_a,
            op("UpdateProject"),
            json!({ "id": s.draft, "input": { "title": "Edited after the deadline", "tagline": "late" } }),
        )
        .await;
    assert_code(&r, "WINDOW_CLOSED");

    let r = app
        .gql_as(
            &s.participant_a,
            op("SubmitProject"),
            json!({ "id": s.draft }),
        )
        .await;
    assert_code(&r, "WINDOW_CLOSED");

    // Nothing was written: same audit log, same draft, no new project.
    assert_eq!(
        app.audit_count(&s.organizer_a, &s.event_a).await,
        audit_before,
        "no audit event"
    );
    assert_eq!(
        project_state(&app, &s.participant_a, &s.draft).await,
        draft_before,
        "draft unchanged"
    );
    let team_after = app
        .ok(
            Some(&s.participant_a),
            op("MyTeamProjects"),
            json!({ "event": s.event_a }),
        )
        .await;
    assert_eq!(team_after, team_before, "no project created");
    let gallery = app
        .ok(
            None,
            "query($a: String!) { event(slug: $a) { projects(first: 10) { totalCount } } }",
            json!({ "a": s.event_a }),
        )
        .await;
    assert_eq!(
        gallery["event"]["projects"]["totalCount"], 1,
        "gallery unchanged"
    );
}

async fn submissions_not_yet_open_are_refused(app: App) {
    let s = app.scenario().await;
    let now = chrono::Utc::now();
    let r = app
        .gql_as(
            &s.organizer_a,
            op("UpdateEvent"),
            json!({ "event": s.event_a, "input": { "submissionsOpen": rfc3339(now + chrono::Duration::hours(6)) } }),
        )
        .await;
    data(&r);
    let audit_before = app.audit_count(&s.organizer_a, &s.event_a).await;
    let r = app
        .gql_as(
            &s.participant_a,
            op("CreateProject"),
            json!({ "event": s.event_a, "input": { "title": "Too early", "track": s.track_a } }),
        )
        .await;
    assert_code(&r, "WINDOW_CLOSED");
    let r = app
        .gql_as(
            &s.participant_a,
            op("SubmitProject"),
            json!({ "id": s.draft }),
        )
        .await;
    assert_code(&r, "WINDOW_CLOSED");
    assert_eq!(
        app.audit_count(&s.organizer_a, &s.event_a).await,
        audit_before
    );
}

async fn cannot_write_for_another_team_or_event(app: App) {
    let s = app.scenario().await;
    // A second participant of A with their own team and draft.
    let other = app
        .sign_up(&format!("other-{}@example.org", crate::harness::unique()))
        .await;
    app.register(&other, &s.event_a).await;
    app.create_team(&other, &s.event_a, "Other team").await;
    let others_draft = app
        .create_project(&other, &s.event_a, "Other draft", &s.track_a)
        .await;
    let others_submitted = app
        .create_project(&other, &s.event_a, "Other submitted", &s.track_a)
        .await;
    app.submit_project(&other, &others_submitted).await;

    let audit_before = app.audit_count(&s.organizer_a, &s.event_a).await;
    let audit_b_before = app.audit_count(&s.organizer_b, &s.event_b).await;
    let draft_before = project_state(&app, &other, &others_draft).await;
    let submitted_before = project_state(&app, &other, &others_submitted).await;

    // Another team's draft is invisible to the participant: NOT_FOUND.
    let r = app
        .gql_as(
            &s.participant_a,
            op("SubmitProject"),
            json!({ "id": others_draft }),
        )
        .await;
    assert_code(&r, "NOT_FOUND");
    let r = app
        .gql_as(
            &s.participant_a,
            op("UpdateProject"),
            json!({ "id": others_draft, "input": { "title": "Hijacked" } }),
        )
        .await;
    assert_code(&r, "NOT_FOUND");
    // Another team's submitted project is visible but not theirs: FORBIDDEN.
    let r = app
        .gql_as(
            &s.participant_a,
            op("UpdateProject"),
            json!({ "id": others_submitted, "input": { "title": "Hijacked" } }),
        )
        .await;
    assert_code(&r, "FORBIDDEN");
    let r = app
        .gql_as(
            &s.participant_a,
            op("WithdrawProject"),
            json!({ "id": others_submitted }),
        )
        .await;
    assert_code(&r, "FORBIDDEN");

    // Event B's track cannot hold a project of event A.
    let r = app
        .gql_as(
            &s.participant_a,
            op("CreateProject"),
            json!({ "event": s.event_a, "input": { "title": "Wrong track", "track": s.track_b } }),
        )
        .await;
    let code = crate::harness::error_code(&r);
    assert!(
        matches!(code.as_deref(), Some("BAD_USER_INPUT" | "NOT_FOUND")),
        "another event's track is refused: {r}"
    );
    let r = app
        .gql_as(
            &s.participant_a,
            op("UpdateProject"),
            json!({ "id": s.draft, "input": { "track": s.track_b } }),
        )
        .await;
    let code = crate::harness::error_code(&r);
    assert!(
        matches!(code.as_deref(), Some("BAD_USER_INPUT" | "NOT_FOUND")),
        "moving a project to another event's track is refused: {r}"
    );
    // A participant of A cannot create a project in B (not registered there).
    let r = app
        .gql_as(
            &s.participant_a,
            op("CreateProject"),
            json!({ "event": s.event_b, "input": { "title": "Wrong event", "track": s.track_b } }),
        )
        .await;
    assert_code(&r, "FORBIDDEN");

    // Nothing was written.
    assert_eq!(
        app.audit_count(&s.organizer_a, &s.event_a).await,
        audit_before,
        "no audit event in A"
    );
    assert_eq!(
        app.audit_count(&s.organizer_b, &s.event_b).await,
        audit_b_before,
        "no audit event in B"
    );
    assert_eq!(
        project_state(&app, &other, &others_draft).await,
        draft_before
    );
    assert_eq!(
        project_state(&app, &other, &others_submitted).await,
        submitted_before
    );
    let p = project_state(&app, &s.participant_a, &s.draft).await;
    assert_eq!(p["title"], "Draft project");
    let gallery_b = app
        .ok(
            None,
            "query($b: String!) { event(slug: $b) { projects(first: 10) { totalCount } } }",
            json!({ "b": s.event_b }),
        )
        .await;
    assert_eq!(gallery_b["event"]["projects"]["totalCount"], 0);
}
