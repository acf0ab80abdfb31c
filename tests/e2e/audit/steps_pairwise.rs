use super::*;

/// The pairwise mutations: the judging mode (before judging opens), a comparison with its
/// idempotent retry, and a skip, each refused once.
pub(super) async fn pairwise_steps(steps: &mut Steps<'_>, admin: Option<&str>, t: &str) {
    let app = steps.app;
    let admin_token = admin.expect("admin");
    let event = format!("pairwise-{t}");
    let now = chrono::Utc::now();
    let d = |hours: i64| crate::harness::rfc3339(now + chrono::Duration::hours(hours));
    app.ok(
        admin,
        op("CreateEvent"),
        json!({ "input": { "slug": event, "name": "Pairwise",
            "submissionsOpen": d(-24), "submissionsClose": d(24), "judgingOpen": d(1), "judgingClose": d(24),
            "registration": "OPEN" } }),
    )
    .await;
    let track = app.create_track(admin_token, &event, "Main").await;
    let participant = app.sign_up(&format!("pp-{t}@example.org")).await;
    app.register(&participant, &event).await;
    app.create_team(&participant, &event, "Compared").await;
    let mut projects = vec![];
    for title in ["One", "Two", "Three"] {
        let id = app
            .create_project(&participant, &event, title, &track)
            .await;
        app.submit_project(&participant, &id).await;
        projects.push(id);
    }
    let email = format!("pj-{t}@example.org");
    let judge = app.sign_up(&email).await;
    app.grant(admin_token, &event, &email, "JUDGE").await;
    let participant = Some(participant.as_str());
    let judge = Some(judge.as_str());

    let mode = json!({ "event": event, "mode": "PAIRWISE" });
    steps
        .step(
            Refused,
            "setJudgingMode (not an organizer)",
            participant,
            op("SetJudgingMode"),
            mode.clone(),
        )
        .await;
    steps
        .step(
            Succeeds,
            "setJudgingMode",
            admin,
            op("SetJudgingMode"),
            mode,
        )
        .await;
    // Judging opens; the mode is fixed from then on.
    app.ok(
        admin,
        op("UpdateEvent"),
        json!({ "event": event, "input": { "judgingOpen": d(-1) } }),
    )
    .await;
    steps
        .step(
            Refused,
            "setJudgingMode (judging open)",
            admin,
            op("SetJudgingMode"),
            json!({ "event": event, "mode": "BOTH" }),
        )
        .await;

    let compare = json!({ "event": event, "better": projects[1], "worse": projects[0], "idempotencyKey": format!("k-{t}") });
    steps
        .step(
            Succeeds,
            "compareProjects",
            judge,
            op("CompareProjects"),
            compare.clone(),
        )
        .await;
    // The retry with its key answers again and writes nothing.
    steps
        .step(
            DryRun,
            "compareProjects (retried)",
            judge,
            op("CompareProjects"),
            compare.clone(),
        )
        .await;
    steps
        .step(
            Refused,
            "compareProjects (not a judge)",
            participant,
            op("CompareProjects"),
            compare,
        )
        .await;
    let skip = json!({ "event": event, "project": projects[2], "reason": "not at the table" });
    steps
        .step(
            Succeeds,
            "skipComparison",
            judge,
            op("SkipComparison"),
            skip.clone(),
        )
        .await;
    steps
        .step(
            Refused,
            "skipComparison (again)",
            judge,
            op("SkipComparison"),
            skip,
        )
        .await;
}
