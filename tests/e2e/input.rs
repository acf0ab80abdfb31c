//! Bad input is refused as BAD_USER_INPUT naming the field, and writes nothing; malformed
//! requests get a GraphQL error, never a 500.

use serde_json::{Value, json};

use crate::harness::{App, PASSWORD, Scenario, assert_bad_input, data, op, rfc3339, unique};

async fn team_projects(app: &App, s: &Scenario) -> Value {
    app.ok(
        Some(&s.participant_a),
        op("MyTeamProjects"),
        json!({ "event": s.event_a }),
    )
    .await
}

e2e! {
    bad_project_input_names_the_field,
    bad_account_and_event_input,
    malformed_requests_are_graphql_errors,
    invisible_formatting_is_refused_in_single_line_text,
}

async fn bad_project_input_names_the_field(app: App) {
    let s = app.scenario().await;
    let before = team_projects(&app, &s).await;
    let audit = app.audit_count(&s.organizer_a, &s.event_a).await;
    let base = || json!({ "title": "Fine", "track": s.track_a });
    let with = |k: &str, v: Value| {
        let mut i = base();
        i[k] = v;
        i
    };

    let cases: Vec<(&str, Value)> = vec![
        ("repoUrl", with("repoUrl", json!("javascript:alert(1)"))),
        ("repoUrl", with("repoUrl", json!("ftp://example.org/x"))),
        ("repoUrl", with("repoUrl", json!("not a url"))),
        ("demoUrl", with("demoUrl", json!("file:///etc/passwd"))),
        ("title", with("title", json!("x".repeat(201)))),
        ("title", with("title", json!("   "))),
        (
            "tags",
            with(
                "tags",
                json!((0..11).map(|i| format!("tag{i}")).collect::<Vec<_>>()),
            ),
        ),
    ];
    for (field, input) in &cases {
        let r = app
            .gql_as(
                &s.participant_a,
                op("CreateProject"),
                json!({ "event": s.event_a, "input": input }),
            )
            .await;
        assert_bad_input(&r, &[*field]);
        let mut update = serde_json::Map::new();
        update.insert(field.to_string(), input[*field].clone());
        let r = app
            .gql_as(
                &s.participant_a,
                op("UpdateProject"),
                json!({ "id": s.draft, "input": update }),
            )
            .await;
        assert_bad_input(&r, &[*field]);
    }
    // Creating needs a title and a track.
    let r = app
        .gql_as(
            &s.participant_a,
            op("CreateProject"),
            json!({ "event": s.event_a, "input": { "track": s.track_a } }),
        )
        .await;
    assert_bad_input(&r, &["title"]);
    let r = app
        .gql_as(
            &s.participant_a,
            op("CreateProject"),
            json!({ "event": s.event_a, "input": { "title": "No track" } }),
        )
        .await;
    assert_bad_input(&r, &["track"]);

    // Nothing was written.
    assert_eq!(team_projects(&app, &s).await, before);
    assert_eq!(app.audit_count(&s.organizer_a, &s.event_a).await, audit);

    // The limits themselves are fine: 200 characters, 10 tags, an https URL.
    let ok = json!({ "title": "y".repeat(200), "track": s.track_a,
        "tags": (0..10).map(|i| format!("tag{i}")).collect::<Vec<_>>(),
        "repoUrl": "https://git.example.org/ok", "demoUrl": "http://demo.example.org/" });
    let r = app
        .gql_as(
            &s.participant_a,
            op("CreateProject"),
            json!({ "event": s.event_a, "input": ok }),
        )
        .await;
    data(&r);
}

async fn bad_account_and_event_input(app: App) {
    for bad in ["not-an-email", "a@", "@example.org", "a b@example.org", ""] {
        let r = app
            .gql(
                op("SignUp"),
                json!({ "email": bad, "password": PASSWORD, "displayName": "X" }),
            )
            .await;
        assert_bad_input(&r, &["email"]);
    }
    let s = app.scenario().await;
    let now = chrono::Utc::now();
    let t = |h: i64| rfc3339(now + chrono::Duration::hours(h));
    let create = |input: Value| {
        let app = &app;
        let admin = s.admin.clone();
        async move {
            app.gql_as(&admin, op("CreateEvent"), json!({ "input": input }))
                .await
        }
    };
    let good = |slug: &str| {
        json!({ "slug": slug, "name": "Windows", "submissionsOpen": t(1), "submissionsClose": t(2),
        "judgingOpen": t(3), "judgingClose": t(4), "reviewsPerProject": 3, "maxTeamSize": 4 })
    };

    let mut i = good(&format!("w-{}", unique()));
    i["submissionsClose"] = json!(t(0));
    assert_bad_input(&create(i).await, &["submissionsClose", "submissionsOpen"]);
    let mut i = good(&format!("w-{}", unique()));
    i["judgingClose"] = json!(t(2));
    assert_bad_input(&create(i).await, &["judgingClose", "judgingOpen"]);
    let mut i = good(&format!("w-{}", unique()));
    i["maxTeamSize"] = json!(0);
    assert_bad_input(&create(i).await, &["maxTeamSize"]);
    let mut i = good("Not A Slug!");
    i["name"] = json!("Bad slug");
    assert_bad_input(&create(i).await, &["slug"]);
    // A slug that exists is a conflict.
    let r = create(good(&s.event_a)).await;
    crate::harness::assert_code(&r, "CONFLICT");

    // updateEvent checks the merged windows.
    let r = app
        .gql_as(
            &s.organizer_a,
            op("UpdateEvent"),
            json!({ "event": s.event_a, "input": { "submissionsClose": rfc3339(now - chrono::Duration::days(3)) } }),
        )
        .await;
    assert_bad_input(&r, &["submissionsClose", "submissionsOpen"]);
    let r = app
        .gql_as(
            &s.organizer_a,
            op("GrantRole"),
            json!({ "event": s.event_a, "email": "not-an-email", "role": "JUDGE" }),
        )
        .await;
    assert_bad_input(&r, &["email"]);
}

async fn malformed_requests_are_graphql_errors(app: App) {
    async fn expect_error(app: &App, body: &str, what: &str) {
        let r = app
            .post_raw(body.to_string(), "application/json", &[])
            .await;
        assert!(r.status < 500, "{what}: HTTP {} {}", r.status, r.text);
        let b = r
            .try_json()
            .unwrap_or_else(|| panic!("{what}: the body is JSON: {} {}", r.status, r.text));
        assert!(
            b["errors"].as_array().is_some_and(|e| !e.is_empty()),
            "{what}: a GraphQL error: {b}"
        );
    }
    expect_error(&app, "{\"query\": \"{ __typename }\"", "truncated JSON").await;
    expect_error(&app, "not json at all", "not JSON").await;
    expect_error(&app, "{\"variables\": {}}", "no query").await;
    expect_error(&app, "{\"query\": 5}", "query not a string").await;
    expect_error(&app, "{\"query\": \"{ viewer { \"}", "a syntax error").await;
    expect_error(
        &app,
        &json!({ "query": "query A { __typename } query B { __typename }", "operationName": "C" })
            .to_string(),
        "unknown operation",
    )
    .await;
    expect_error(
        &app,
        &json!({ "query": "query A { __typename } query B { __typename }" }).to_string(),
        "ambiguous operation",
    )
    .await;
    expect_error(&app, &json!({ "query": "query($s: String!) { event(slug: $s) { id } }", "variables": { "s": 5 } }).to_string(), "wrong variable type").await;
    expect_error(
        &app,
        &json!({ "query": "query($s: String!) { event(slug: $s) { id } }", "variables": {} })
            .to_string(),
        "missing variable",
    )
    .await;
    expect_error(&app, &json!({ "query": "query($id: ID!) { project(id: $id) { id } }", "variables": { "id": { "nested": true } } }).to_string(), "object as ID").await;
    expect_error(
        &app,
        &json!({ "query": "{ events(first: \"ten\") { totalCount } }" }).to_string(),
        "string as Int",
    )
    .await;
    expect_error(
        &app,
        &json!({ "query": "mutation($i: CreateEventInput!) { createEvent(input: $i) { id } }",
        "variables": { "i": { "slug": "x", "name": "x", "submissionsOpen": "yesterday" } } })
        .to_string(),
        "bad DateTime",
    )
    .await;
    // The server is still healthy.
    let r = app.gql("{ __typename }", json!({})).await;
    assert_eq!(data(&r)["__typename"], "Query");
}

async fn invisible_formatting_is_refused_in_single_line_text(app: App) {
    let s = app.scenario().await;
    let audit = app.audit_head().await;
    let create =
        "mutation($e: String!, $i: ProjectInput!) { createProject(event: $e, input: $i) { id } }";
    let update =
        "mutation($id: ID!, $i: ProjectInput!) { updateProject(id: $id, input: $i) { id } }";
    // A right-to-left override makes "Good project<RLO>gnp.exe" read as "Good projectexe.png".
    let r = app
        .gql_as(
            &s.participant_a,
            create,
            json!({ "e": s.event_a, "i": { "title": "Good project\u{202E}gnp.exe", "track": s.track_a } }),
        )
        .await;
    assert_bad_input(&r, &["title"]);
    let r = app
        .gql_as(
            &s.participant_a,
            update,
            json!({ "id": s.draft, "i": { "tagline": "\u{2067}isolated\u{2069}" } }),
        )
        .await;
    assert_bad_input(&r, &["tagline"]);
    let r = app
        .gql_as(
            &s.organizer_a,
            "mutation($e: String!, $n: String!) { createTrack(event: $e, name: $n) { id } }",
            json!({ "e": s.event_a, "n": "Track\u{200B}A1" }),
        )
        .await;
    assert_bad_input(&r, &["name"]);
    let r = app
        .gql(
            "mutation($e: String!, $p: String!, $n: String!) { signUp(email: $e, password: $p, displayName: $n) { token } }",
            json!({ "e": format!("rlo-{}@example.org", crate::harness::unique()), "p": crate::harness::PASSWORD, "n": "Admin\u{202E}" }),
        )
        .await;
    assert_bad_input(&r, &["displayName"]);
    assert_eq!(app.audit_head().await, audit, "refusals write nothing");
    // Joiners are text, not formatting: an emoji family in a title is kept.
    app.ok(
        Some(&s.participant_a),
        update,
        json!({ "id": s.draft, "i": { "title": "Family \u{1F468}\u{200D}\u{1F469}" } }),
    )
    .await;
}
