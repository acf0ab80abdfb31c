//! Operations: `GET /metrics` (Prometheus text, parsed here with a Prometheus text parser)
//! and the request logs. With `--metrics-token` only that bearer token scrapes; without it
//! only a scraper on the machine itself. Every request answers its id in `x-request-id`,
//! the same id its log line and its GraphQL errors carry.

use std::time::Duration;

use prometheus_parse::{Sample, Scrape, Value};
use serde_json::{Value as Json, json};

use crate::harness::{App, assert_code, data, judged_fixture, str_at, unique};

e2e! {
    metrics_count_operations_and_need_the_token ["--metrics-token", "scrape-secret-1"],
    metrics_without_a_token_are_for_this_machine_only ["--addr", "0.0.0.0:0"],
    request_logs_carry_the_request_id_that_errors_show ["--log-json"],
}

const TOKEN: &str = "scrape-secret-1";

const VIEWER: &str = "query MetricsViewer { viewer { user { id } } }";
const IMPORT: &str = "mutation MetricsImport($f: JSON!) { importEvent(fixture: $f) { inserted } }";
const PUBLIC: &str = "query MetricsPublic { __typename }";
const CALIBRATE: &str = "mutation MetricsCalibrate($e: String!) { runCalibration(event: $e, seed: 7, bootstrap: 50) { id } }";
const FOLLOW: &str =
    "subscription MetricsFollow($e: String!) { projectSubmitted(event: $e) { id } }";

/// Scrapes `/metrics` with the token and parses it.
async fn scrape(app: &App) -> Vec<Sample> {
    let auth = format!("Bearer {TOKEN}");
    let r = app
        .get_with("/metrics", &[("authorization", auth.as_str())])
        .await;
    assert_eq!(r.status, 200, "{}", r.text);
    assert!(
        r.header("content-type")
            .is_some_and(|t| t.starts_with("text/plain")),
        "Prometheus text: {:?}",
        r.header("content-type")
    );
    let lines = r.text.lines().map(|l| Ok(l.to_owned()));
    Scrape::parse(lines)
        .unwrap_or_else(|e| panic!("not Prometheus text ({e}):\n{}", r.text))
        .samples
}

/// The value of the counter or gauge `metric` whose labels include `labels`.
fn value(samples: &[Sample], metric: &str, labels: &[(&str, &str)]) -> Option<f64> {
    find(samples, metric, labels).map(|s| match &s.value {
        Value::Counter(v) | Value::Gauge(v) | Value::Untyped(v) => *v,
        other => panic!("{metric} is not a number: {other:?}"),
    })
}

/// The sample of `metric` whose labels include `labels`.
pub(crate) fn find<'a>(
    samples: &'a [Sample],
    metric: &str,
    labels: &[(&str, &str)],
) -> Option<&'a Sample> {
    samples.iter().find(|s| {
        s.metric == metric
            && labels
                .iter()
                .all(|(k, v)| s.labels.get(k).is_some_and(|got| got == *v))
    })
}

#[track_caller]
fn must(samples: &[Sample], metric: &str, labels: &[(&str, &str)]) -> f64 {
    value(samples, metric, labels).unwrap_or_else(|| {
        let names: Vec<_> = samples
            .iter()
            .map(|s| format!("{} {:?}", s.metric, s.labels))
            .collect();
        panic!("no {metric} {labels:?} among:\n{}", names.join("\n"))
    })
}

/// The observations in histogram `metric` with `labels`: its `+Inf` bucket.
#[track_caller]
fn observations(samples: &[Sample], metric: &str, labels: &[(&str, &str)]) -> f64 {
    let s =
        find(samples, metric, labels).unwrap_or_else(|| panic!("no histogram {metric} {labels:?}"));
    match &s.value {
        Value::Histogram(buckets) => {
            assert!(buckets.len() > 1, "{metric} has buckets: {buckets:?}");
            buckets
                .iter()
                .find(|b| b.less_than.is_infinite())
                .map(|b| b.count)
                .unwrap_or_else(|| panic!("{metric} has no +Inf bucket: {buckets:?}"))
        }
        other => panic!("{metric} is not a histogram: {other:?}"),
    }
}

/// Scrapes until `ready` accepts the samples (gauges follow websockets a moment later).
async fn scrape_until(app: &App, what: &str, ready: impl Fn(&[Sample]) -> bool) -> Vec<Sample> {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    loop {
        let samples = scrape(app).await;
        if ready(&samples) {
            return samples;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "{what}: not within 10 s"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

async fn metrics_count_operations_and_need_the_token(app: App) {
    // Refused without the token, with another token, and with the token in another
    // scheme, although the scraper is on this machine; no metric in the refusal.
    for headers in [
        vec![],
        vec![("authorization", "Bearer wrong-secret")],
        vec![("authorization", "Bearer scrape-secret-12")],
        vec![("authorization", "Basic c2NyYXBlLXNlY3JldC0x")],
        vec![("authorization", TOKEN)],
    ] {
        let r = app.get_with("/metrics", &headers).await;
        assert_eq!(r.status, 401, "{headers:?}: {}", r.text);
        assert!(!r.text.contains("verdict_"), "{headers:?}: {}", r.text);
    }

    // A successful query, a refused mutation, an anonymous query twice (the second may be
    // a shared answer: both count), a signed-up account (whose confirmation waits in the
    // outbox) and an imported event to follow.
    let admin = app.site_admin().await;
    let person = app
        .sign_up(&format!("metrics-{}@example.org", unique()))
        .await;
    data(&app.gql_as(&person, VIEWER, json!({})).await);
    let tag = unique();
    let refused = app
        .gql_as(&person, IMPORT, json!({ "f": judged_fixture(&tag) }))
        .await;
    assert_code(&refused, "FORBIDDEN");
    data(
        &app.gql_as(&admin, IMPORT, json!({ "f": judged_fixture(&tag) }))
            .await,
    );
    data(
        &app.gql_as(&admin, CALIBRATE, json!({ "e": format!("csv-{tag}") }))
            .await,
    );
    for _ in 0..2 {
        data(&app.gql(PUBLIC, json!({})).await);
    }

    // A websocket with a running subscription.
    let mut ws = app.ws(json!({})).await;
    ws.subscribe("m1", FOLLOW, json!({ "e": format!("csv-{tag}") }))
        .await;
    let open = scrape_until(&app, "the subscription is counted", |s| {
        value(s, "verdict_graphql_subscriptions_active", &[]) == Some(1.0)
    })
    .await;
    assert_eq!(
        must(&open, "verdict_websocket_connections_active", &[]),
        1.0
    );

    let ops = "verdict_graphql_requests_total";
    assert_eq!(
        must(
            &open,
            ops,
            &[("operation", "MetricsViewer"), ("outcome", "ok")]
        ),
        1.0
    );
    assert_eq!(
        must(
            &open,
            ops,
            &[("operation", "MetricsImport"), ("outcome", "FORBIDDEN")]
        ),
        1.0
    );
    assert_eq!(
        must(
            &open,
            ops,
            &[("operation", "MetricsImport"), ("outcome", "ok")]
        ),
        1.0
    );
    assert_eq!(
        must(
            &open,
            ops,
            &[("operation", "MetricsPublic"), ("outcome", "ok")]
        ),
        2.0
    );
    assert_eq!(
        observations(
            &open,
            "verdict_graphql_request_duration_seconds",
            &[("operation", "MetricsImport")]
        ),
        2.0
    );
    assert_eq!(
        observations(&open, "verdict_calibration_run_duration_seconds", &[]),
        1.0,
        "one calibration run computed"
    );
    let http = observations(
        &open,
        "verdict_http_request_duration_seconds",
        &[("route", "/graphql"), ("status", "2xx")],
    );
    assert!(http >= 6.0, "the GraphQL requests above: {http}");
    assert!(
        observations(
            &open,
            "verdict_http_request_duration_seconds",
            &[("route", "/metrics"), ("status", "4xx")]
        ) >= 5.0,
        "the refused scrapes"
    );

    // What the database holds, read at scrape time.
    let head = app.audit_head().await;
    let now = scrape(&app).await;
    assert!(head > 0);
    assert_eq!(
        must(&now, "verdict_audit_head_seq", &[]),
        head as f64,
        "the audit chain's length"
    );
    assert!(must(&now, "verdict_outbox_pending", &[("queue", "mail")]) >= 1.0);
    assert!(
        must(
            &now,
            "verdict_outbox_oldest_pending_age_seconds",
            &[("queue", "mail")]
        ) >= 0.0
    );
    assert_eq!(
        must(&now, "verdict_outbox_pending", &[("queue", "webhook")]),
        0.0
    );
    let in_use = must(&now, "verdict_db_pool_connections", &[("state", "in_use")]);
    let idle = must(&now, "verdict_db_pool_connections", &[("state", "idle")]);
    let max = must(&now, "verdict_db_pool_max_connections", &[]);
    assert!(
        in_use + idle >= 1.0 && in_use + idle <= max,
        "{in_use} + {idle} of {max}"
    );

    // Closing the socket ends the subscription: both gauges go back down, and the
    // subscription is counted once it ended.
    ws.stream.close(None).await.expect("close the websocket");
    let closed = scrape_until(&app, "the closed socket is no longer counted", |s| {
        value(s, "verdict_websocket_connections_active", &[]) == Some(0.0)
            && value(s, "verdict_graphql_subscriptions_active", &[]) == Some(0.0)
    })
    .await;
    assert_eq!(
        must(
            &closed,
            ops,
            &[("operation", "MetricsFollow"), ("outcome", "ok")]
        ),
        1.0
    );
    assert!(
        find(
            &closed,
            "verdict_graphql_request_duration_seconds",
            &[("operation", "MetricsFollow")]
        )
        .is_none(),
        "a subscription has no duration"
    );

    // Client-chosen operation names are bounded: one longer than 64 characters is `other`.
    let long = format!("query {} {{ __typename }}", "Long".repeat(20));
    data(&app.gql_as(&person, &long, json!({})).await);
    let after = scrape(&app).await;
    assert!(
        after
            .iter()
            .all(|s| s.labels.get("operation").is_none_or(|o| o.len() <= 64)),
        "operation labels are at most 64 characters"
    );
    assert_eq!(
        must(&after, ops, &[("operation", "other"), ("outcome", "ok")]),
        1.0
    );

    // The text log (stderr is no terminal): no colour codes, and the line of a request
    // names its id.
    let r = app.gql_resp(Some(&person), VIEWER, json!({})).await;
    let id = r.header("x-request-id").expect("x-request-id");
    let line = app
        .wait_for_log(Duration::from_secs(5), |l| {
            l.contains(&format!("request_id={id}"))
        })
        .await;
    assert!(line.contains("status=200"), "{line}");
    assert!(line.contains("MetricsViewer"), "{line}");
    let logs = app.log_lines().join("\n");
    assert!(!logs.contains('\u{1b}'), "no ANSI escapes in a log file");
    assert!(!logs.contains(TOKEN), "the metrics token is never logged");
}

async fn metrics_without_a_token_are_for_this_machine_only(app: App) {
    // From 127.0.0.1: served.
    let r = app.get("/metrics").await;
    assert_eq!(r.status, 200, "{}", r.text);
    assert!(r.text.contains("verdict_audit_head_seq"), "{}", r.text);
    // Forwarded by a proxy on this machine: refused, whatever the proxy says.
    for header in ["x-forwarded-for", "forwarded", "x-real-ip"] {
        let r = app.get_with("/metrics", &[(header, "127.0.0.1")]).await;
        assert_eq!(r.status, 403, "{header}: {}", r.text);
        assert!(!r.text.contains("verdict_"), "{}", r.text);
    }
    // A token is no way in when none is configured.
    let r = app
        .get_with("/metrics", &[("authorization", "Bearer anything")])
        .await;
    assert_eq!(r.status, 200);

    // From another address of this machine (the server listens on every address): refused.
    match non_loopback_address() {
        Some(ip) => {
            let url = format!("http://{ip}:{}/metrics", app.port);
            let r = app.http.get(&url).send().await.expect("GET /metrics");
            assert_eq!(r.status().as_u16(), 403, "from {ip}");
            let text = r.text().await.unwrap_or_default();
            assert!(!text.contains("verdict_"), "{text}");
        }
        None => eprintln!("*** no non-loopback address on this machine: not checked from one"),
    }
}

/// An address of this machine that is not loopback, if it has one: the source address the
/// kernel would use towards a public address (nothing is sent).
fn non_loopback_address() -> Option<std::net::IpAddr> {
    let socket = std::net::UdpSocket::bind("0.0.0.0:0").ok()?;
    socket.connect("192.0.2.1:9").ok()?;
    let ip = socket.local_addr().ok()?.ip();
    (!ip.is_loopback() && !ip.is_unspecified()).then_some(ip)
}

async fn request_logs_carry_the_request_id_that_errors_show(app: App) {
    let email = format!("logs-{}@example.org", unique());
    let token = app.sign_up(&email).await;

    // A refusal: its error names the request, as its header does.
    let r = app
        .gql_resp(
            Some(&token),
            IMPORT,
            json!({ "f": judged_fixture(&unique()) }),
        )
        .await;
    let body = r.json();
    assert_code(&body, "FORBIDDEN");
    let id = r.header("x-request-id").expect("x-request-id");
    assert_eq!(id.len(), 12, "{id}");
    assert_eq!(str_at(&body, "/errors/0/extensions/requestId"), id);

    // Its log line: one JSON object with the id, method, path, operation and status.
    let line = app
        .wait_for_log(Duration::from_secs(5), |l| {
            l.contains(&id) && l.contains("answered")
        })
        .await;
    let entry: Json = serde_json::from_str(&line).unwrap_or_else(|e| panic!("{e}: {line}"));
    assert_eq!(entry["span"]["request_id"], id.as_str(), "{line}");
    assert_eq!(entry["span"]["method"], "POST", "{line}");
    assert_eq!(entry["span"]["path"], "/graphql", "{line}");
    assert_eq!(entry["span"]["operation"], "MetricsImport", "{line}");
    assert_eq!(entry["status"], 200, "{line}");
    assert!(entry["latency_ms"].is_number(), "{line}");

    // Refusals before execution name their request too: a body that is not JSON, an
    // invalid token.
    let r = app.post_raw("{", "application/json", &[]).await;
    let id = r.header("x-request-id").expect("x-request-id");
    assert_eq!(str_at(&r.json(), "/errors/0/extensions/requestId"), id);
    let r = app.gql_resp(Some("not-a-token"), VIEWER, json!({})).await;
    assert_eq!(r.status, 401);
    let id = r.header("x-request-id").expect("x-request-id");
    assert_eq!(str_at(&r.json(), "/errors/0/extensions/requestId"), id);
    // A parse error (raised by the library, not by Verdict's resolvers) as well.
    let r = app
        .gql_resp(Some(&token), "query Broken {", json!({}))
        .await;
    let id = r.header("x-request-id").expect("x-request-id");
    assert_eq!(str_at(&r.json(), "/errors/0/extensions/requestId"), id);

    // Every answer has an id of its own, also outside GraphQL; a client's id is not taken.
    let r = app
        .get_with("/healthz", &[("x-request-id", "chosen-by-client")])
        .await;
    let id = r.header("x-request-id").expect("x-request-id");
    assert_ne!(id, "chosen-by-client");
    app.wait_for_log(Duration::from_secs(5), |l| {
        l.contains(&id) && l.contains("/healthz")
    })
    .await;

    // Link tokens in paths and query strings are not logged; nor are passwords, session
    // tokens or cookies.
    let r = app
        .get("/invite/secret-link-token-123?x=secret-query-456")
        .await;
    let id = r.header("x-request-id").expect("x-request-id");
    app.wait_for_log(Duration::from_secs(5), |l| l.contains(&id))
        .await;
    let relogged = app.log_in(&email, crate::harness::PASSWORD).await;
    let logs = app.log_lines();
    for l in &logs {
        assert!(
            serde_json::from_str::<Json>(l).is_ok(),
            "every line is JSON: {l}"
        );
    }
    let logs = logs.join("\n");
    for secret in [
        "secret-link-token-123",
        "secret-query-456",
        crate::harness::PASSWORD,
        token.as_str(),
        relogged.as_str(),
    ] {
        assert!(!logs.contains(secret), "{secret} was logged");
    }
}
