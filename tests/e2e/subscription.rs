//! Subscriptions over graphql-transport-ws: a submitted project reaches the subscribers of
//! its event, and only them.
//!
//! The protocol has no acknowledgement of a `subscribe`, so before anything happens a test
//! waits until the server counts the subscriptions it expects as running
//! (`verdict_graphql_subscriptions_active` on `/metrics`, asked from this machine, which
//! needs no token), rather than for a fixed time.

use std::time::{Duration, Instant};

use prometheus_parse::{Scrape, Value as Sample};
use serde_json::json;

use crate::harness::{App, op};
use crate::metrics::find;

const SUB: &str =
    "subscription($e: String!) { projectSubmitted(event: $e) { id title status event { slug } } }";

e2e! {
    project_submitted_reaches_subscribers,
    many_subscribers_all_hear_it,
}

async fn project_submitted_reaches_subscribers(app: App) {
    let s = app.scenario().await;
    // An anonymous subscriber of A, and a signed-in one of B.
    let mut a = app.ws(json!({})).await;
    a.subscribe("a1", SUB, json!({ "e": s.event_a })).await;
    let mut b = app
        .ws(json!({ "authorization": format!("Bearer {}", s.organizer_b) }))
        .await;
    b.subscribe("b1", SUB, json!({ "e": s.event_b })).await;
    // The server runs both before anything happens.
    running(&app, 2).await;

    app.submit_project(&s.participant_a, &s.draft).await;

    let msg = a
        .next_json(Duration::from_secs(10))
        .await
        .expect("the subscriber of A hears the submission");
    assert_eq!(msg["type"], "next", "{msg}");
    assert_eq!(msg["id"], "a1", "{msg}");
    let p = &msg["payload"]["data"]["projectSubmitted"];
    assert_eq!(p["id"], json!(s.draft), "{msg}");
    assert_eq!(p["title"], "Draft project");
    assert_eq!(p["status"], "SUBMITTED");
    assert_eq!(p["event"]["slug"], json!(s.event_a));

    assert!(
        b.next_json(Duration::from_secs(1)).await.is_none(),
        "the subscriber of B hears nothing"
    );

    // A refused submission (already submitted) is not announced.
    let r = app
        .gql_as(
            &s.participant_a,
            op("SubmitProject"),
            json!({ "id": s.draft }),
        )
        .await;
    assert!(r["errors"].is_array(), "a second submit is refused: {r}");
    assert!(
        a.next_json(Duration::from_secs(1)).await.is_none(),
        "nothing announced for a refused submit"
    );

    // After `complete`, nothing more arrives.
    a.send(json!({ "id": "a1", "type": "complete" })).await;
    // The server has ended it: only B's runs.
    running(&app, 1).await;
    let another = app
        .create_project(&s.participant_a, &s.event_a, "Another", &s.track_a)
        .await;
    app.submit_project(&s.participant_a, &another).await;
    // (The server may acknowledge the `complete`; no `next` may follow.)
    while let Some(msg) = a.next_json(Duration::from_secs(1)).await {
        assert_ne!(
            msg["type"], "next",
            "completed subscriptions are silent: {msg}"
        );
    }
}

async fn many_subscribers_all_hear_it(app: App) {
    let s = app.scenario().await;
    let mut clients = vec![];
    for i in 0..5 {
        let mut c = app.ws(json!({})).await;
        c.subscribe(&format!("s{i}"), SUB, json!({ "e": s.event_a }))
            .await;
        clients.push(c);
    }
    running(&app, 5).await;
    app.submit_project(&s.participant_a, &s.draft).await;
    for (i, c) in clients.iter_mut().enumerate() {
        let msg = c
            .next_json(Duration::from_secs(10))
            .await
            .unwrap_or_else(|| panic!("client {i} hears it"));
        assert_eq!(
            msg["payload"]["data"]["projectSubmitted"]["id"],
            json!(s.draft),
            "{msg}"
        );
    }
}

/// Waits until the server counts exactly `n` subscriptions running (the gauge follows a
/// `subscribe` or a `complete` a moment later); fails after 10 s.
pub(crate) async fn running(app: &App, n: usize) {
    const GAUGE: &str = "verdict_graphql_subscriptions_active";
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let r = app.get("/metrics").await;
        assert_eq!(r.status, 200, "{}", r.text);
        let samples = Scrape::parse(r.text.lines().map(|l| Ok(l.to_owned())))
            .unwrap_or_else(|e| panic!("not Prometheus text ({e}):\n{}", r.text))
            .samples;
        let now = find(&samples, GAUGE, &[]).map(|s| match s.value {
            Sample::Gauge(v) | Sample::Untyped(v) => v,
            ref other => panic!("{GAUGE} is not a gauge: {other:?}"),
        });
        if now == Some(n as f64) {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "{n} subscriptions running: not within 10 s (the server counts {now:?})"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}
