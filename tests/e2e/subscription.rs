//! Subscriptions over graphql-transport-ws: a submitted project reaches the subscribers of
//! its event, and only them.

use std::time::Duration;

use serde_json::json;

use crate::harness::{App, op};

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
    // Let the server register both before anything happens.
    tokio::time::sleep(Duration::from_millis(500)).await;

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
    tokio::time::sleep(Duration::from_millis(200)).await;
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
    tokio::time::sleep(Duration::from_millis(500)).await;
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
