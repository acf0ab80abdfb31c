//! Slow clients: a websocket subscriber that stops reading holds at most one message, for
//! at most `--ws-send-timeout` (and a second for the close frame), and is then closed with
//! 1013 ("try again later") or cut off, while everybody else is served as usual; a
//! revocation or a shutdown closes it at once, even while a message waits for it.
//!
//! The stalled client connects with a 4 KiB receive buffer and never reads, and follows
//! `projectSubmitted` with 500 aliases of a 20,000-character description: 10 MB a message,
//! far more than the kernel's buffers take, so the server's write is stuck from the first
//! message on. What the server does meanwhile is seen from outside: `/metrics` (asked from
//! this machine, which needs no token), its log, and its resident memory.

use std::time::{Duration, Instant};

use prometheus_parse::{Scrape, Value as Sample};
use serde_json::{Value, json};

use crate::harness::{App, Ws, data, op, unique};
use crate::metrics::find;

e2e! {
    a_client_that_stops_reading_is_dropped_and_nobody_else_waits ["--ws-send-timeout", "3"],
    a_stalled_subscriber_is_closed_at_once_when_its_session_ends,
    a_stalled_subscriber_does_not_hold_up_shutdown,
}

const SOCKETS: &str = "verdict_websocket_connections_active";
const SUBSCRIPTIONS: &str = "verdict_graphql_subscriptions_active";
const IDS: &str = "subscription($e: String!) { projectSubmitted(event: $e) { id } }";

/// Aliases of the description in the stalled client's selection.
const ALIASES: usize = 500;
/// The description's length, the most a project may have.
const DESCRIPTION: usize = 20_000;
/// The stalled client's receive buffer.
const WINDOW: u32 = 4096;

/// `projectSubmitted` selecting the description [`ALIASES`] times.
fn big_selection() -> String {
    let fields: String = (0..ALIASES)
        .map(|i| format!(" d{i}: description"))
        .collect();
    format!("subscription($e: String!) {{ projectSubmitted(event: $e) {{{fields} }} }}")
}

/// The bytes of one message of [`big_selection`].
const MESSAGE: usize = ALIASES * DESCRIPTION;

/// `/metrics`, asked from this machine, parsed.
async fn samples(app: &App) -> Vec<prometheus_parse::Sample> {
    let r = app.get("/metrics").await;
    assert_eq!(r.status, 200, "{}", r.text);
    Scrape::parse(r.text.lines().map(|l| Ok(l.to_owned())))
        .unwrap_or_else(|e| panic!("not Prometheus text ({e}):\n{}", r.text))
        .samples
}

/// A gauge of `/metrics`.
async fn gauge(app: &App, name: &str) -> f64 {
    let samples = samples(app).await;
    find(&samples, name, &[])
        .map(|s| match s.value {
            Sample::Gauge(v) | Sample::Untyped(v) => v,
            ref other => panic!("{name} is not a gauge: {other:?}"),
        })
        .unwrap_or_else(|| panic!("no {name} in:\n{samples:?}"))
}

/// How many websockets the server closed with `code` (`verdict_websocket_closes_total`; 0
/// before the first).
async fn closes(app: &App, code: u16) -> f64 {
    let samples = samples(app).await;
    let code = code.to_string();
    find(
        &samples,
        "verdict_websocket_closes_total",
        &[("code", &code)],
    )
    .map_or(0.0, |s| match s.value {
        Sample::Counter(v) | Sample::Untyped(v) => v,
        ref other => panic!("the closes are not a counter: {other:?}"),
    })
}

/// Waits until gauge `name` reads `want`; how long that took. Panics after `within`.
async fn gauge_reaches(app: &App, name: &str, want: f64, within: Duration) -> Duration {
    let started = Instant::now();
    loop {
        let now = gauge(app, name).await;
        if now == want {
            return started.elapsed();
        }
        assert!(
            started.elapsed() < within,
            "{name} is {now}, not {want}, after {within:?}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Gives the scenario's submitted project the longest description, so that each of its
/// submissions is a 10 MB message for the stalled client.
async fn lengthen(app: &App, team: &str, project: &str) {
    let text = "Slow clients must not grow the server. ".repeat(DESCRIPTION);
    let text: String = text.chars().take(DESCRIPTION).collect();
    app.ok(
        Some(team),
        op("UpdateProject"),
        json!({ "id": project, "input": { "description": text } }),
    )
    .await;
}

/// Withdraws and submits the project again: one `projectSubmitted` message.
async fn resubmit(app: &App, team: &str, project: &str) {
    app.ok(Some(team), op("WithdrawProject"), json!({ "id": project }))
        .await;
    app.submit_project(team, project).await;
}

/// A client that follows the event with [`big_selection`] and never reads.
async fn stalled(app: &App, init: Value, event: &str) -> Ws {
    let mut ws = app.ws_with_receive_buffer(init, WINDOW).await;
    ws.subscribe("big", &big_selection(), json!({ "e": event }))
        .await;
    ws
}

/// What a stalled client reads once it reads again, after the server let it go: the
/// messages it had been sent, ending in close `code` or a cut connection.
#[track_caller]
fn assert_ended(read: &[Value], close: Option<u16>, code: u16, offered: usize) {
    assert!(
        close.is_none() || close == Some(code),
        "closed with {code}, or cut off; got {close:?}"
    );
    let messages = read.iter().filter(|m| m["type"] == "next").count();
    assert!(
        messages < offered,
        "{messages} of the {offered} messages offered were queued for a client that read nothing"
    );
}

async fn a_client_that_stops_reading_is_dropped_and_nobody_else_waits(app: App) {
    const ROUNDS: usize = 30;
    let s = app.scenario().await;
    lengthen(&app, &s.participant_a, &s.submitted).await;
    let sockets = gauge(&app, SOCKETS).await;
    let slow_closes = closes(&app, 1013).await;
    let rss_before = app.rss_bytes();

    let mut stalled = stalled(&app, json!({}), &s.event_a).await;
    let mut reader = app.ws(json!({})).await;
    reader
        .subscribe("ids", IDS, json!({ "e": s.event_a }))
        .await;
    gauge_reaches(&app, SUBSCRIPTIONS, 2.0, Duration::from_secs(10)).await;
    assert_eq!(gauge(&app, SOCKETS).await, sockets + 2.0);

    // The reading subscriber takes every message as it comes.
    let reading = tokio::spawn(async move {
        let mut heard = 0;
        while heard < ROUNDS {
            let msg = reader
                .next_json(Duration::from_secs(30))
                .await
                .unwrap_or_else(|| panic!("the reader heard {heard} of {ROUNDS}, then nothing"));
            if msg["type"] == "next" && msg["id"] == "ids" {
                assert!(msg["payload"]["errors"].is_null(), "{msg}");
                heard += 1;
            }
        }
        reader
    });

    // ROUNDS submissions: ROUNDS * 10 MB offered to the client that reads nothing. Every
    // query meanwhile is answered promptly, and the server's memory stays far below that.
    let mut slowest = Duration::ZERO;
    let mut rss_peak = rss_before;
    let produced = Instant::now();
    for _ in 0..ROUNDS {
        resubmit(&app, &s.participant_a, &s.submitted).await;
        let asked = Instant::now();
        data(&app.gql("{ __typename }", json!({})).await);
        slowest = slowest.max(asked.elapsed());
        rss_peak = rss_peak.max(app.rss_bytes());
    }
    eprintln!(
        "{ROUNDS} submissions in {:?}; slowest query {slowest:?}",
        produced.elapsed()
    );
    assert!(
        slowest < Duration::from_secs(2),
        "a query waited {slowest:?} while a client read nothing"
    );
    let mut reader = tokio::time::timeout(Duration::from_secs(60), reading)
        .await
        .expect("the reading subscriber hears every submission")
        .expect("the reader");

    // The stalled connection is closed: 3 s for its first message, 1 s for the close frame.
    let took = gauge_reaches(&app, SOCKETS, sockets + 1.0, Duration::from_secs(20)).await;
    eprintln!("the stalled connection was let go {took:?} after the last submission");
    gauge_reaches(&app, SUBSCRIPTIONS, 1.0, Duration::from_secs(5)).await;
    app.wait_for_log(Duration::from_secs(5), |l| {
        l.contains("closing a websocket") && l.contains("1013")
    })
    .await;
    assert_eq!(
        closes(&app, 1013).await,
        slow_closes + 1.0,
        "the operator sees the close, by its code"
    );
    rss_peak = rss_peak.max(app.rss_bytes());
    if let (Some(before), Some(peak)) = (rss_before, rss_peak) {
        let grown = peak.saturating_sub(before);
        eprintln!(
            "resident memory {} MB, at most {} MB more while {} MB were offered",
            before >> 20,
            grown >> 20,
            (ROUNDS * MESSAGE) >> 20
        );
        // One message (its data, its text, the socket's copy) and the allocator's slack;
        // a queue of what was offered would be ROUNDS times one message.
        assert!(
            grown < (ROUNDS * MESSAGE / 3) as u64,
            "the server grew by {} MB while {} MB were offered to a client that read nothing",
            grown >> 20,
            (ROUNDS * MESSAGE) >> 20
        );
    }

    let (read, close) = stalled.until_closed(Duration::from_secs(60)).await;
    assert_ended(&read, close, 1013, ROUNDS);

    // The reader goes on: a new submission reaches it.
    app.submit_project(&s.participant_a, &s.draft).await;
    let msg = reader
        .next_json(Duration::from_secs(10))
        .await
        .expect("the reader is still served");
    assert_eq!(msg["payload"]["data"]["projectSubmitted"]["id"], s.draft);
    reader.stream.close(None).await.expect("close the reader");
    gauge_reaches(&app, SOCKETS, sockets, Duration::from_secs(10)).await;
}

async fn a_stalled_subscriber_is_closed_at_once_when_its_session_ends(app: App) {
    let s = app.scenario().await;
    lengthen(&app, &s.participant_a, &s.submitted).await;
    let session = app
        .sign_up(&format!("stalled-{}@example.org", unique()))
        .await;
    let sockets = gauge(&app, SOCKETS).await;
    let auth = json!({ "authorization": format!("Bearer {session}") });
    let mut stalled = stalled(&app, auth, &s.event_a).await;
    gauge_reaches(&app, SUBSCRIPTIONS, 1.0, Duration::from_secs(10)).await;

    // 20 MB for a 4 KiB window: the server's write is stuck, for up to the default 30 s.
    for _ in 0..2 {
        resubmit(&app, &s.participant_a, &s.submitted).await;
    }
    tokio::time::sleep(Duration::from_secs(2)).await;
    assert_eq!(gauge(&app, SOCKETS).await, sockets + 1.0, "still open");

    app.ok(Some(&session), "mutation { logOut }", json!({}))
        .await;
    // Within the close frame's second (and then some), not the send timeout's 30 s.
    let took = gauge_reaches(&app, SOCKETS, sockets, Duration::from_secs(5)).await;
    eprintln!("the revoked, stalled connection was let go {took:?} after the log-out");
    app.wait_for_log(Duration::from_secs(5), |l| {
        l.contains("closing a websocket") && l.contains("4403")
    })
    .await;
    assert_eq!(closes(&app, 4403).await, 1.0, "the close, by its code");
    let (read, close) = stalled.until_closed(Duration::from_secs(60)).await;
    assert_ended(&read, close, 4403, 2);
}

async fn a_stalled_subscriber_does_not_hold_up_shutdown(mut app: App) {
    let s = app.scenario().await;
    lengthen(&app, &s.participant_a, &s.submitted).await;
    let _stalled = stalled(&app, json!({}), &s.event_a).await;
    gauge_reaches(&app, SUBSCRIPTIONS, 1.0, Duration::from_secs(10)).await;
    for _ in 0..2 {
        resubmit(&app, &s.participant_a, &s.submitted).await;
    }
    tokio::time::sleep(Duration::from_secs(2)).await;

    // `verdict serve` gives its websockets 5 s to close; the stalled one takes about one.
    let stopping = Instant::now();
    app.terminate();
    let code = app.wait_exit(Duration::from_secs(4)).await;
    assert_eq!(code, Some(0), "a clean exit");
    eprintln!("stopped in {:?}", stopping.elapsed());
    assert!(
        !app.log_lines().iter().any(|l| l.contains("did not close")),
        "every websocket closed in time"
    );
}
