use super::*;

/// An anonymous socket runs public queries only: mutations and organizer feeds that need a
/// caller are refused, nothing is written.
pub(super) async fn a_socket_without_credentials_runs_nothing_that_needs_them(app: App) {
    let s = app.scenario().await;
    let probe = app.probe().await;
    let before = probe.snapshot().await;
    let mut ws = app.ws(json!({})).await;
    let a = json!({ "e": s.event_a });
    let refused = [
        (
            "mutate",
            "mutation { createApiToken(label: \"ws\") { token } }",
            json!({}),
        ),
        (
            "track",
            "mutation($e: String!) { createTrack(event: $e, name: \"ws\") { id } }",
            a.clone(),
        ),
        (
            "submit",
            "mutation($id: ID!) { submitProject(id: $id) { id } }",
            json!({ "id": s.draft }),
        ),
        (
            "members",
            "query($e: String!) { event(slug: $e) { members(first: 5) { totalCount } } }",
            a.clone(),
        ),
        (
            "progress",
            "subscription($e: String!) { judgingProgress(event: $e) { assignments } }",
            a.clone(),
        ),
        (
            "board",
            "subscription($e: String!) { leaderboardUpdated(event: $e) { __typename } }",
            a.clone(),
        ),
    ];
    for (id, q, vars) in refused {
        let msg = ws_answer(&mut ws, id, q, vars).await;
        assert!(
            matches!(ws_code(&msg).as_str(), "UNAUTHENTICATED" | "FORBIDDEN"),
            "{id}: {msg}"
        );
        assert!(no_data(&msg["payload"]["data"]), "{id}: {msg}");
    }
    // The socket itself still answers public queries.
    let msg = ws_answer(
        &mut ws,
        "public",
        "query($e: String!) { event(slug: $e) { slug } }",
        a,
    )
    .await;
    assert_eq!(
        msg["payload"]["data"]["event"]["slug"],
        json!(s.event_a),
        "{msg}"
    );
    probe
        .nothing_written_since(&before, &[], "an anonymous socket")
        .await;
}

/// A socket whose `connection_init` carries a dead credential (logged out, revoked,
/// expired, made up) is refused, not made anonymous: no `connection_ack`, the connection
/// closes, and an operation sent right behind the init runs nothing.
pub(super) async fn a_socket_opened_with_a_dead_credential_is_refused(app: App) {
    let email = format!("ws-dead-{}@example.org", unique());
    let (session, _) = app.sign_up_full(&email).await;
    let logged_out = app.log_in(&email, PASSWORD).await;
    app.ok(Some(&logged_out), "mutation { logOut }", json!({}))
        .await;
    let d = app
        .ok(
            Some(&session),
            "mutation { createApiToken(label: \"dead\") { token apiToken { id } } }",
            json!({}),
        )
        .await;
    let revoked = str_at(&d, "/createApiToken/token");
    app.ok(
        Some(&session),
        "mutation($id: ID!) { revokeApiToken(id: $id) { id } }",
        json!({ "id": str_at(&d, "/createApiToken/apiToken/id") }),
    )
    .await;
    let soon = crate::harness::rfc3339(chrono::Utc::now() + chrono::Duration::seconds(2));
    let d = app
        .ok(
            Some(&session),
            "mutation($e: DateTime) { createApiToken(label: \"short\", expiresAt: $e) { token } }",
            json!({ "e": soon }),
        )
        .await;
    let expiring = str_at(&d, "/createApiToken/token");
    // Wait until it has expired, by asking the server (its clock is the database's).
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    while app
        .gql_resp(Some(&expiring), "{ __typename }", json!({}))
        .await
        .status
        != 401
    {
        assert!(
            std::time::Instant::now() < deadline,
            "the token never expired"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let probe = app.probe().await;
    let before = probe.snapshot().await;
    for (what, token) in [
        ("a logged-out session", logged_out.as_str()),
        ("a revoked API token", revoked.as_str()),
        ("an expired API token", expiring.as_str()),
        ("a made-up token", "vrd_made_up_token"),
    ] {
        let mut ws = app.ws_unacknowledged(bearer(token), &[]).await;
        ws.subscribe(
            "mint",
            "mutation { createApiToken(label: \"from-a-dead-socket\") { token } }",
            json!({}),
        )
        .await;
        let (messages, close) = ws.until_closed(WAIT).await;
        assert!(
            messages.iter().all(|m| m["type"] != "connection_ack"),
            "{what}: no acknowledgement: {messages:?}"
        );
        assert!(
            messages.iter().all(|m| m["id"] != "mint"),
            "{what}: the operation got no answer: {messages:?}"
        );
        assert!(close.is_some(), "{what}: closed with a code: {messages:?}");
    }
    probe
        .nothing_written_since(&before, &[], "sockets with dead credentials")
        .await;
    // The live session still opens a socket.
    let mut ws = app.ws(bearer(&session)).await;
    let msg = ws_answer(&mut ws, "me", "{ viewer { user { email } } }", json!({})).await;
    assert_eq!(
        msg["payload"]["data"]["viewer"]["user"]["email"],
        json!(email)
    );
}

/// Signed in as another event's organizer, a socket gets nothing organizers-only of this
/// event: its live judging, its leaderboard, its members, its writes.
pub(super) async fn another_events_organizer_gets_nothing_of_this_event_on_a_socket(app: App) {
    let s = app.scenario().await;
    let probe = app.probe().await;
    let before = probe.snapshot().await;
    let mut ws = app.ws(bearer(&s.organizer_b)).await;
    let a = json!({ "e": s.event_a });
    let refused = [
        (
            "progress",
            "subscription($e: String!) { judgingProgress(event: $e) { assignments } }",
            a.clone(),
        ),
        (
            "board",
            "subscription($e: String!) { leaderboardUpdated(event: $e) { __typename } }",
            a.clone(),
        ),
        (
            "members",
            "query($e: String!) { event(slug: $e) { members(first: 5) { edges { node { email } } } } }",
            a.clone(),
        ),
        (
            "track",
            "mutation($e: String!) { createTrack(event: $e, name: \"from B\") { id } }",
            a.clone(),
        ),
        (
            "hide",
            "mutation($id: ID!) { hideProject(id: $id, reason: \"from B\") { id } }",
            json!({ "id": s.submitted }),
        ),
        (
            "grant",
            "mutation($e: String!, $m: String!) { grantRole(event: $e, email: $m, role: ORGANIZER) { id } }",
            json!({ "e": s.event_a, "m": s.emails.organizer_b }),
        ),
    ];
    for (id, q, vars) in refused {
        let msg = ws_answer(&mut ws, id, q, vars).await;
        assert!(
            matches!(ws_code(&msg).as_str(), "FORBIDDEN" | "NOT_FOUND"),
            "{id}: {msg}"
        );
        assert!(
            no_data(&msg["payload"]["data"])
                || msg["payload"]["data"]["event"]["members"].is_null(),
            "{id}: {msg}"
        );
        assert!(!msg.to_string().contains(&s.emails.judge_a), "{id}: {msg}");
    }
    // Its own event's feed is open to it (so the refusals above were about the event).
    let msg = ws_answer(
        &mut ws,
        "own",
        "query($e: String!) { event(slug: $e) { members(first: 5) { totalCount } } }",
        json!({ "e": s.event_b }),
    )
    .await;
    assert_eq!(ws_code(&msg), "none", "{msg}");
    probe
        .nothing_written_since(&before, &[], "another event's organizer on a socket")
        .await;
}

// ---- cross-event access by id ------------------------------------------------------------
