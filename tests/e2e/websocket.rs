//! The websocket as a long-lived connection: a revoked credential or role stops working on
//! sockets that were already open, and the socket honours the HTTP limits (body size,
//! request rate per connection and per address, and a cap on operations in flight).
//!
//! Two paths are tested apart. A revocation made through ANOTHER server process (a
//! sibling on the same database) reaches no socket of this one over the in-process bus,
//! so what refuses there is the re-check before each operation and each subscription
//! message. A revocation made through the same process also closes the socket (4403).

use std::time::{Duration, Instant};

use futures_util::SinkExt;
use serde_json::{Value, json};
use tokio_tungstenite::tungstenite::Message;

use crate::harness::{App, PASSWORD, Ws, str_at, unique, ws_code};

e2e! {
    the_session_cookie_counts_only_on_sockets_opened_by_this_servers_own_pages,
    log_out_ends_the_session_on_open_sockets,
    a_revoked_api_token_stops_working_on_open_sockets,
    a_revoked_organizer_loses_live_judging_and_member_emails,
    an_oversized_message_is_refused_unread,
    a_burst_of_operations_is_rate_limited_per_connection_and_address [
        "--rate-limit-per-second", "1", "--rate-limit-burst", "10"
    ],
    operations_beyond_the_cap_are_refused_in_both_protocols ["--max-subscriptions", "3"],
}

const WAIT: Duration = Duration::from_secs(10);
const CREATE_TOKEN: &str = "mutation { createApiToken(label: \"from-socket\") { token } }";
const TOKENS: &str = "{ viewer { apiTokens { id label } } }";
const PROGRESS: &str = "subscription($e: String!) { judgingProgress(event: $e) { assignments } }";
const MEMBERS: &str =
    "query($e: String!) { event(slug: $e) { members(first: 20) { edges { node { email } } } } }";
const SUBMITTED: &str = "subscription($e: String!) { projectSubmitted(event: $e) { id } }";

fn bearer(token: &str) -> Value {
    json!({ "authorization": format!("Bearer {token}") })
}

/// The first answer (`next`/`data` or `error`) to operation `id`; other messages are
/// skipped. Panics when none comes.
async fn answer(ws: &mut Ws, id: &str) -> Value {
    loop {
        let msg = ws
            .next_json(WAIT)
            .await
            .unwrap_or_else(|| panic!("no answer to {id}"));
        let kind = msg["type"].as_str().unwrap_or_default();
        if msg["id"] == id && matches!(kind, "next" | "data" | "error") {
            return msg;
        }
    }
}

/// Runs one operation on the socket; its answer.
async fn run(ws: &mut Ws, id: &str, query: &str, vars: Value) -> Value {
    ws.subscribe(id, query, vars).await;
    answer(ws, id).await
}

/// The answer carries no data at all.
#[track_caller]
fn assert_no_data(msg: &Value) {
    let data = &msg["payload"]["data"];
    assert!(
        data.is_null()
            || data
                .as_object()
                .is_some_and(|o| o.values().all(Value::is_null)),
        "no data may come back: {msg}"
    );
}

async fn token_count(app: &App, session: &str) -> usize {
    let d = app.ok(Some(session), TOKENS, json!({})).await;
    d["viewer"]["apiTokens"]
        .as_array()
        .unwrap_or_else(|| panic!("no apiTokens: {d}"))
        .len()
}

/// The web client's socket is authenticated by its HttpOnly session cookie, which the
/// browser sends on the upgrade request; a page of another origin makes the browser send
/// the same cookie, so the cookie counts only when `Origin` is this server itself.
async fn the_session_cookie_counts_only_on_sockets_opened_by_this_servers_own_pages(app: App) {
    const WHO: &str = "{ viewer { user { email } } }";
    let email = format!("ws-cookie-{}@example.org", unique());
    let (session, _) = app.sign_up_full(&email).await;
    let cookie = format!("verdict_session={session}");
    let own = format!("http://127.0.0.1:{}", app.port);

    let mut from_own_page = app
        .ws_with_headers(json!({}), &[("cookie", &cookie), ("origin", &own)])
        .await;
    let r = run(&mut from_own_page, "own", WHO, json!({})).await;
    assert_eq!(
        r["payload"]["data"]["viewer"]["user"]["email"], email,
        "{r}"
    );

    for (name, headers) in [
        (
            "another site's page",
            vec![
                ("cookie", cookie.as_str()),
                ("origin", "https://evil.example"),
            ],
        ),
        (
            "a sibling port",
            vec![
                ("cookie", cookie.as_str()),
                ("origin", "http://127.0.0.1:1"),
            ],
        ),
        ("no Origin at all", vec![("cookie", cookie.as_str())]),
    ] {
        let mut ws = app.ws_with_headers(json!({}), &headers).await;
        let r = run(&mut ws, "x", WHO, json!({})).await;
        assert!(
            r["payload"]["data"]["viewer"].is_null(),
            "{name}: the socket must be anonymous: {r}"
        );
    }

    // The cookie's session ending closes the socket it authenticated, as for a token.
    app.ok(Some(&session), "mutation { logOut }", json!({}))
        .await;
    let (before, close) = from_own_page.until_closed(WAIT).await;
    assert_eq!(close, Some(4403), "closed as revoked; read {before:?}");
}

async fn log_out_ends_the_session_on_open_sockets(app: App) {
    let email = format!("ws-out-{}@example.org", unique());
    let (first, _) = app.sign_up_full(&email).await;
    let second = app.log_in(&email, PASSWORD).await;
    let third = app.log_in(&email, PASSWORD).await;
    let mut ws1 = app.ws(bearer(&first)).await;
    let mut ws2 = app.ws(bearer(&second)).await;
    let mut ws3 = app.ws(bearer(&third)).await;
    let r = run(&mut ws1, "t0", TOKENS, json!({})).await;
    assert_eq!(ws_code(&r), "none", "the socket works before: {r}");

    // Logged out through another server process: no bus reaches this one's sockets, so
    // the next operation on the open socket must find the session dead by itself.
    let sibling = app.sibling(&[]).await;
    sibling
        .ok(Some(&first), "mutation { logOut }", json!({}))
        .await;
    let probe = app.probe().await;
    let before = probe.snapshot().await;
    let r = run(&mut ws1, "t1", CREATE_TOKEN, json!({})).await;
    assert_eq!(ws_code(&r), "UNAUTHENTICATED", "{r}");
    assert_no_data(&r);
    assert_eq!(token_count(&app, &third).await, 0, "no token was minted");
    probe
        .nothing_written_since(&before, &[], "a mutation on a logged-out socket")
        .await;

    // Logged out through this process: the session's socket is closed at once.
    app.ok(Some(&second), "mutation { logOut }", json!({}))
        .await;
    let (before, close) = ws2.until_closed(WAIT).await;
    assert_eq!(close, Some(4403), "closed as revoked; read {before:?}");

    // Another session of the same person is not affected.
    let r = run(&mut ws3, "t2", TOKENS, json!({})).await;
    assert_eq!(ws_code(&r), "none", "{r}");
}

async fn a_revoked_api_token_stops_working_on_open_sockets(app: App) {
    let session = app
        .sign_up(&format!("ws-tok-{}@example.org", unique()))
        .await;
    let mint = "mutation($l: String!) { createApiToken(label: $l) { token apiToken { id } } }";
    let mut tokens = vec![];
    for label in ["one", "two"] {
        let d = app.ok(Some(&session), mint, json!({ "l": label })).await;
        tokens.push((
            str_at(&d, "/createApiToken/token"),
            str_at(&d, "/createApiToken/apiToken/id"),
        ));
    }
    let revoke = "mutation($id: ID!) { revokeApiToken(id: $id) { id } }";
    let mut ws1 = app.ws(bearer(&tokens[0].0)).await;
    let mut ws2 = app.ws(bearer(&tokens[1].0)).await;
    let r = run(&mut ws1, "t0", TOKENS, json!({})).await;
    assert_eq!(ws_code(&r), "none", "the socket works before: {r}");

    let sibling = app.sibling(&[]).await;
    sibling
        .ok(Some(&session), revoke, json!({ "id": tokens[0].1 }))
        .await;
    let probe = app.probe().await;
    let before = probe.snapshot().await;
    let r = run(&mut ws1, "t1", CREATE_TOKEN, json!({})).await;
    assert_eq!(ws_code(&r), "UNAUTHENTICATED", "{r}");
    assert_no_data(&r);
    assert_eq!(token_count(&app, &session).await, 2, "no token was minted");
    probe
        .nothing_written_since(&before, &[], "a mutation on a socket of a revoked token")
        .await;

    app.ok(Some(&session), revoke, json!({ "id": tokens[1].1 }))
        .await;
    let (before, close) = ws2.until_closed(WAIT).await;
    assert_eq!(close, Some(4403), "closed as revoked; read {before:?}");
}

async fn a_revoked_organizer_loses_live_judging_and_member_emails(app: App) {
    let s = app.scenario().await;
    let email = format!("ws-org-{}@example.org", unique());
    let second = app.sign_up(&email).await;
    app.grant(&s.organizer_a, &s.event_a, &email, "ORGANIZER")
        .await;
    let judges = app
        .ok(
            Some(&s.organizer_a),
            "query($e: String!) { event(slug: $e) { members(role: JUDGE, first: 5) { edges { node { id } } } } }",
            json!({ "e": s.event_a }),
        )
        .await;
    let judge = str_at(&judges, "/event/members/edges/0/node/id");
    let assign = async |project: &str| {
        app.ok(
            Some(&s.organizer_a),
            "mutation($e: String!, $j: ID!, $p: ID!) { assignJudge(event: $e, judge: $j, project: $p) { id } }",
            json!({ "e": s.event_a, "j": judge, "p": project }),
        )
        .await;
    };
    let submitted = async |title: &str| {
        let p = app
            .create_project(&s.participant_a, &s.event_a, title, &s.track_a)
            .await;
        app.submit_project(&s.participant_a, &p).await;
        p
    };
    let (p2, p3) = (submitted("Second").await, submitted("Third").await);
    let revoke = "mutation($ev: String!, $e: String!) { revokeRole(event: $ev, email: $e, role: ORGANIZER) }";
    let grant_back = async || {
        app.grant(&s.organizer_a, &s.event_a, &email, "ORGANIZER")
            .await;
    };

    let mut ws = app.ws(bearer(&second)).await;
    let r = run(&mut ws, "m0", MEMBERS, json!({ "e": s.event_a })).await;
    assert_eq!(ws_code(&r), "none", "an organizer reads member emails: {r}");
    assert!(r.to_string().contains(&s.emails.judge_a), "{r}");
    ws.subscribe("p", PROGRESS, json!({ "e": s.event_a })).await;
    tokio::time::sleep(Duration::from_millis(1000)).await;
    assign(&s.submitted).await;
    let msg = answer(&mut ws, "p").await;
    assert_eq!(
        msg["payload"]["data"]["judgingProgress"]["assignments"], 1,
        "the organizer follows judging: {msg}"
    );

    // Revoked through another process: the subscription finds out before its next message.
    let sibling = app.sibling(&[]).await;
    sibling
        .ok(
            Some(&s.organizer_a),
            revoke,
            json!({ "ev": s.event_a, "e": email }),
        )
        .await;
    assign(&p2).await;
    let msg = answer(&mut ws, "p").await;
    assert_eq!(ws_code(&msg), "FORBIDDEN", "{msg}");
    assert_no_data(&msg);
    let mut rest = vec![];
    while let Some(m) = ws.next_json(Duration::from_secs(1)).await {
        rest.push(m);
    }
    assert!(
        rest.iter().all(|m| m["type"] == "complete"),
        "the subscription ended: {rest:?}"
    );
    // And the same socket no longer reads member emails, nor writes as an organizer.
    let r = run(&mut ws, "m1", MEMBERS, json!({ "e": s.event_a })).await;
    assert_eq!(ws_code(&r), "FORBIDDEN", "{r}");
    assert!(!r.to_string().contains(&s.emails.judge_a), "{r}");
    let probe = app.probe().await;
    let before = probe.snapshot().await;
    let r = run(
        &mut ws,
        "w1",
        "mutation($e: String!) { createTrack(event: $e, name: \"After revocation\") { id } }",
        json!({ "e": s.event_a }),
    )
    .await;
    assert_eq!(ws_code(&r), "FORBIDDEN", "{r}");
    assert_no_data(&r);
    probe
        .nothing_written_since(
            &before,
            &[],
            "an organizer's write after the role was revoked",
        )
        .await;

    // Revoked through this process: the socket is closed before any progress arrives.
    grant_back().await;
    let mut ws = app.ws(bearer(&second)).await;
    ws.subscribe("p", PROGRESS, json!({ "e": s.event_a })).await;
    tokio::time::sleep(Duration::from_millis(1000)).await;
    app.ok(
        Some(&s.organizer_a),
        revoke,
        json!({ "ev": s.event_a, "e": email }),
    )
    .await;
    assign(&p3).await;
    let (before, close) = ws.until_closed(WAIT).await;
    assert_eq!(close, Some(4403), "closed as revoked; read {before:?}");
    assert!(
        before.iter().all(|m| m["payload"]["data"].is_null()),
        "no progress after the revocation: {before:?}"
    );
}

async fn an_oversized_message_is_refused_unread(app: App) {
    let session = app
        .sign_up(&format!("ws-big-{}@example.org", unique()))
        .await;
    let mut ws = app.ws(bearer(&session)).await;
    // Under the body limit (64 KiB by default), a padded operation runs.
    let padded = format!("# {}\n{TOKENS}", "x".repeat(32 * 1024));
    let r = run(&mut ws, "small", &padded, json!({})).await;
    assert_eq!(ws_code(&r), "none", "{r}");

    // 5 MB: refused by the socket before it is read whole; the mutation never runs.
    let huge = format!("# {}\n{CREATE_TOKEN}", "x".repeat(5 * 1024 * 1024));
    let msg = json!({ "id": "big", "type": "subscribe", "payload": { "query": huge } });
    // The server may reset the connection while this is still being written.
    let _ = ws.stream.send(Message::Text(msg.to_string().into())).await;
    let (before, close) = ws.until_closed(WAIT).await;
    assert!(
        close.is_none() || close == Some(1009),
        "closed as too big (1009) or cut off; got {close:?}"
    );
    assert!(
        before.iter().all(|m| m["id"] != "big"),
        "the oversized operation got no answer: {before:?}"
    );
    assert_eq!(token_count(&app, &session).await, 0, "nothing was executed");
}

/// Sends `n` queries at once on `ws`; (answered, refused as RATE_LIMITED).
async fn burst(ws: &mut Ws, tag: &str, n: usize) -> (usize, usize) {
    for i in 0..n {
        let msg = json!({ "id": format!("{tag}{i}"), "type": "subscribe", "payload": { "query": "{ __typename }" } });
        ws.stream
            .feed(Message::Text(msg.to_string().into()))
            .await
            .expect("queue");
    }
    ws.stream.flush().await.expect("send the burst");
    let (mut answered, mut refused) = (0, 0);
    while answered + refused < n {
        let msg = ws
            .next_json(WAIT)
            .await
            .unwrap_or_else(|| panic!("{} of {n} answered", answered + refused));
        match msg["type"].as_str() {
            Some("next") => {
                assert_eq!(msg["payload"]["data"]["__typename"], "Query", "{msg}");
                answered += 1;
            }
            Some("error") => {
                assert_eq!(ws_code(&msg), "RATE_LIMITED", "{msg}");
                let retry = msg["payload"][0]["extensions"]["retryAfter"].as_u64();
                assert!(retry.is_some_and(|r| r >= 1), "retryAfter: {msg}");
                refused += 1;
            }
            _ => {}
        }
    }
    (answered, refused)
}

async fn a_burst_of_operations_is_rate_limited_per_connection_and_address(app: App) {
    // One operation a second, bursts of 10 (the flags of this test).
    let started = Instant::now();
    let mut ws = app.ws(json!({})).await;
    let (answered, refused) = burst(&mut ws, "q", 300).await;
    let allowed = 10 + started.elapsed().as_secs() as usize + 1;
    assert!(
        (1..=allowed).contains(&answered),
        "{answered} answered, {refused} refused; at most {allowed} may be answered"
    );

    // A new connection from the same address has its own burst of 10, but the address's
    // bucket is empty: most of its operations are refused too.
    let started = Instant::now();
    let mut other = app.ws(json!({})).await;
    let (answered, refused) = burst(&mut other, "r", 20).await;
    let allowed = started.elapsed().as_secs() as usize + 2;
    assert!(
        answered <= allowed && refused >= 20 - allowed,
        "the address's limit holds across connections: {answered} answered, {refused} refused"
    );
}

/// A legacy (graphql-ws, subscriptions-transport-ws) connection, after its handshake.
async fn legacy_ws(app: &App) -> Ws {
    use tokio_tungstenite::tungstenite::client::IntoClientRequest;
    use tokio_tungstenite::tungstenite::http::HeaderValue;
    let mut req = format!("ws://127.0.0.1:{}/graphql/ws", app.port)
        .into_client_request()
        .expect("ws request");
    req.headers_mut().insert(
        "Sec-WebSocket-Protocol",
        HeaderValue::from_static("graphql-ws"),
    );
    let (stream, _) = tokio_tungstenite::connect_async(req)
        .await
        .expect("legacy websocket connect");
    let mut ws = Ws { stream };
    ws.send(json!({ "type": "connection_init", "payload": {} }))
        .await;
    let ack = ws.next_json(WAIT).await.expect("connection_ack");
    assert_eq!(ack["type"], "connection_ack", "{ack}");
    ws
}

async fn operations_beyond_the_cap_are_refused_in_both_protocols(app: App) {
    let s = app.scenario().await;
    let vars = json!({ "e": s.event_a });
    // graphql-transport-ws (`subscribe`/`complete`), then legacy graphql-ws (`start`/`stop`).
    let mut current = app.ws(json!({})).await;
    let mut legacy = legacy_ws(&app).await;
    for (ws, start, stop) in [
        (&mut current, "subscribe", "complete"),
        (&mut legacy, "start", "stop"),
    ] {
        for id in ["s0", "s1", "s2", "s3"] {
            let payload = json!({ "query": SUBMITTED, "variables": vars });
            ws.send(json!({ "id": id, "type": start, "payload": payload }))
                .await;
        }
        let msg = answer(ws, "s3").await;
        assert_eq!(msg["type"], "error", "{msg}");
        assert_eq!(ws_code(&msg), "QUERY_TOO_COMPLEX", "{msg}");
        // Stopping one frees its place.
        ws.send(json!({ "id": "s0", "type": stop })).await;
        tokio::time::sleep(Duration::from_millis(300)).await;
        let payload = json!({ "query": SUBMITTED, "variables": vars });
        ws.send(json!({ "id": "s4", "type": start, "payload": payload }))
            .await;
    }
    tokio::time::sleep(Duration::from_millis(1000)).await;

    app.submit_project(&s.participant_a, &s.draft).await;
    for ws in [&mut current, &mut legacy] {
        let mut heard = vec![];
        while let Some(msg) = ws.next_json(Duration::from_secs(3)).await {
            assert_ne!(msg["type"], "error", "nothing else is refused: {msg}");
            if matches!(msg["type"].as_str(), Some("next" | "data")) {
                heard.push(msg["id"].as_str().unwrap_or_default().to_string());
            }
        }
        heard.sort();
        assert_eq!(
            heard,
            ["s1", "s2", "s4"],
            "the admitted subscriptions hear it"
        );
    }
}
