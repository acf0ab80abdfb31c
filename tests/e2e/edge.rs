//! Refusals at the HTTP edge are GraphQL errors with contract codes, and the GraphQL over
//! HTTP response media type is honoured.

use serde_json::{Value, json};

use crate::harness::App;

e2e! {
    refusals_at_the_edge_are_graphql_errors ["--rate-limit-per-second", "1", "--rate-limit-burst", "5"],
    graphql_response_media_type_is_honoured,
}

async fn refusals_at_the_edge_are_graphql_errors(app: App) {
    // 413: a body over --max-body is a GraphQL error naming the limit, not plain text.
    let big = json!({ "query": format!("{{ __typename }} # {}", "x".repeat(70 * 1024)) });
    let r = app.post_raw(big.to_string(), "application/json", &[]).await;
    assert_eq!(r.status, 413);
    let body = r.json();
    assert_eq!(
        crate::harness::error_code(&body).as_deref(),
        Some("BAD_USER_INPUT"),
        "{body}"
    );
    // 429: the request rate limit answers RATE_LIMITED with retryAfter (and Retry-After).
    let mut limited = None;
    for _ in 0..20 {
        let r = app.gql_resp(None, "{ __typename }", json!({})).await;
        if r.status == 429 {
            limited = Some(r);
            break;
        }
    }
    let r = limited.expect("a burst beyond the limit is refused");
    let body = r.json();
    assert_eq!(
        crate::harness::error_code(&body).as_deref(),
        Some("RATE_LIMITED"),
        "{body}"
    );
    assert!(
        body.pointer("/errors/0/extensions/retryAfter")
            .and_then(Value::as_u64)
            .is_some_and(|s| s >= 1),
        "{body}"
    );
    assert!(r.header("retry-after").is_some());
}

async fn graphql_response_media_type_is_honoured(app: App) {
    let accept = [("accept", "application/graphql-response+json")];
    let ok = app
        .post_raw(
            json!({ "query": "{ __typename }" }).to_string(),
            "application/json",
            &accept,
        )
        .await;
    assert_eq!(ok.status, 200);
    assert!(
        ok.header("content-type")
            .is_some_and(|t| t.starts_with("application/graphql-response+json")),
        "{:?}",
        ok.header("content-type")
    );
    // A document that does not parse is a 400 for clients that accept the new media type ...
    let bad = app
        .post_raw(
            json!({ "query": "{ __typename" }).to_string(),
            "application/json",
            &accept,
        )
        .await;
    assert_eq!(bad.status, 400);
    assert_eq!(
        crate::harness::error_code(&bad.json()).as_deref(),
        Some("BAD_USER_INPUT")
    );
    // ... and stays a 200 application/json for the others.
    let legacy = app
        .post_raw(
            json!({ "query": "{ __typename" }).to_string(),
            "application/json",
            &[],
        )
        .await;
    assert_eq!(legacy.status, 200);
    assert_eq!(
        legacy.header("content-type").as_deref(),
        Some("application/json")
    );
}
