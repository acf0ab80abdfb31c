//! Webhooks (issue 12): a delivery reaches its receiver after a real mutation, signed with
//! the secret shown once and carrying the audit event; private addresses are refused in
//! every spelling and never contacted, at registration and again at connect time;
//! redirects are not followed; failures are retried and recorded, then retried by hand;
//! two processes on one PostgreSQL never send one delivery twice.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU16, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use hmac::{Hmac, KeyInit, Mac};
use serde_json::{Value, json};
use sha2::Sha256;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

use crate::harness::{App, Scenario, assert_bad_input, assert_code, str_at, unique};

e2e! {
    deliveries_are_signed_and_carry_the_audit_event ["--allow-loopback-webhooks"],
    private_addresses_are_refused_and_never_contacted,
    a_refusal_never_says_what_a_name_resolves_to,
    redirects_are_not_followed ["--allow-loopback-webhooks"],
    failures_are_retried_then_retried_by_hand ["--allow-loopback-webhooks", "--webhook-backoff-ms", "20"],
    a_silent_receiver_times_out_after_five_seconds ["--allow-loopback-webhooks"],
    the_connect_time_check_refuses_what_registration_allowed ["--allow-loopback-webhooks"],
}

e2e_postgres! {
    two_processes_never_send_one_delivery_twice ["--allow-loopback-webhooks"],
}

const REGISTER: &str = "mutation($e: String!, $u: String!, $a: [String!]) { \
     registerWebhook(event: $e, url: $u, actions: $a) { secret webhook { id url actions active } } }";
const HOOKS: &str = "query($e: String!) { event(slug: $e) { webhooks { id url actions active \
     createdAt deliveries(first: 5) { totalCount nodes { id status } } } } }";
const DELIVERIES: &str = "query($e: String!) { event(slug: $e) { webhookDeliveries(first: 50) { \
     totalCount nodes { id webhook seq action body status attemptCount lastStatusCode lastError \
     attempts { attempt statusCode error durationMs } } } } }";
const RETRY: &str =
    "mutation($id: ID!) { retryWebhookDelivery(id: $id) { id status attemptCount } }";
const ACTIVE: &str =
    "mutation($id: ID!, $a: Boolean!) { setWebhookActive(id: $id, active: $a) { id active } }";

/// One request the receiver got.
#[derive(Debug, Clone)]
pub(crate) struct Receipt {
    headers: HashMap<String, String>,
    body: String,
}

/// An HTTP receiver on 127.0.0.1 that counts every connection it accepts and answers each
/// request with the status it is set to (and `Location` when it is set); with status 0 it
/// never answers.
pub(crate) struct Receiver {
    port: u16,
    connections: Arc<AtomicUsize>,
    receipts: Arc<Mutex<Vec<Receipt>>>,
    pub(crate) status: Arc<AtomicU16>,
}

impl Receiver {
    pub(crate) async fn start(status: u16, location: Option<String>) -> Receiver {
        let listener = TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind receiver");
        let port = listener.local_addr().expect("addr").port();
        let r = Receiver {
            port,
            connections: Arc::default(),
            receipts: Arc::default(),
            status: Arc::new(AtomicU16::new(status)),
        };
        let (connections, receipts, status) =
            (r.connections.clone(), r.receipts.clone(), r.status.clone());
        tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                connections.fetch_add(1, Ordering::SeqCst);
                let (receipts, status, location) =
                    (receipts.clone(), status.clone(), location.clone());
                tokio::spawn(async move {
                    let _ = serve(stream, receipts, status, location).await;
                });
            }
        });
        r
    }

    pub(crate) fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.port)
    }

    fn connections(&self) -> usize {
        self.connections.load(Ordering::SeqCst)
    }

    fn receipts(&self) -> Vec<Receipt> {
        self.receipts.lock().expect("receipts").clone()
    }
}

/// Reads one request (headers, then `Content-Length` bytes), records it and answers.
async fn serve(
    mut stream: TcpStream,
    receipts: Arc<Mutex<Vec<Receipt>>>,
    status: Arc<AtomicU16>,
    location: Option<String>,
) -> std::io::Result<()> {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 4096];
    let head_end = loop {
        let n = stream.read(&mut chunk).await?;
        if n == 0 {
            return Ok(());
        }
        buf.extend_from_slice(&chunk[..n]);
        if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break i + 4;
        }
    };
    let head = String::from_utf8_lossy(&buf[..head_end]).to_string();
    let headers: HashMap<String, String> = head
        .lines()
        .skip(1)
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_owned()))
        .collect();
    let len: usize = headers
        .get("content-length")
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    while buf.len() < head_end + len {
        let n = stream.read(&mut chunk).await?;
        if n == 0 {
            break;
        }
        buf.extend_from_slice(&chunk[..n]);
    }
    let body = String::from_utf8_lossy(&buf[head_end..]).to_string();
    receipts
        .lock()
        .expect("receipts")
        .push(Receipt { headers, body });
    let code = status.load(Ordering::SeqCst);
    if code == 0 {
        tokio::time::sleep(Duration::from_secs(60)).await;
        return Ok(());
    }
    let location = location
        .map(|l| format!("Location: {l}\r\n"))
        .unwrap_or_default();
    let answer =
        format!("HTTP/1.1 {code} X\r\n{location}Content-Length: 0\r\nConnection: close\r\n\r\n");
    stream.write_all(answer.as_bytes()).await?;
    stream.shutdown().await
}

fn hmac_hex(secret: &str, message: &str) -> String {
    let mut mac = <Hmac<Sha256> as KeyInit>::new_from_slice(secret.as_bytes()).expect("key");
    mac.update(message.as_bytes());
    hex::encode(mac.finalize().into_bytes())
}

/// Registers `url` on `event` as `organizer`: (webhook id, secret).
async fn register(
    app: &App,
    organizer: &str,
    event: &str,
    url: &str,
    actions: Option<&[&str]>,
) -> (String, String) {
    let d = app
        .ok(
            Some(organizer),
            REGISTER,
            json!({ "e": event, "u": url, "a": actions }),
        )
        .await;
    (
        str_at(&d, "/registerWebhook/webhook/id"),
        str_at(&d, "/registerWebhook/secret"),
    )
}

/// The event's webhooks as its organizer reads them.
async fn hooks(app: &App, organizer: &str, event: &str) -> Vec<Value> {
    let d = app.ok(Some(organizer), HOOKS, json!({ "e": event })).await;
    d["event"]["webhooks"].as_array().expect("webhooks").clone()
}

/// Every delivery of every webhook of the event.
async fn deliveries(app: &App, organizer: &str, event: &str) -> Vec<Value> {
    let d = app
        .ok(Some(organizer), DELIVERIES, json!({ "e": event }))
        .await;
    d["event"]["webhookDeliveries"]["nodes"]
        .as_array()
        .expect("deliveries")
        .clone()
}

/// Polls the event's deliveries until `done` holds (at most 30 s).
pub(crate) async fn wait_for(
    app: &App,
    organizer: &str,
    event: &str,
    what: &str,
    done: impl Fn(&[Value]) -> bool,
) -> Vec<Value> {
    for _ in 0..300 {
        let all = deliveries(app, organizer, event).await;
        if done(&all) {
            return all;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!(
        "{what}: not reached; deliveries: {:#?}",
        deliveries(app, organizer, event).await
    );
}

async fn add_track(app: &App, s: &Scenario, name: &str) {
    app.create_track(&s.organizer_a, &s.event_a, name).await;
}

async fn deliveries_are_signed_and_carry_the_audit_event(app: App) {
    let s = app.scenario().await;
    let rx = Receiver::start(200, None).await;
    // Only organizers register, and read, webhooks.
    let r = app
        .gql_as(
            &s.participant_a,
            REGISTER,
            json!({ "e": s.event_a, "u": rx.url("/hook"), "a": null }),
        )
        .await;
    assert_code(&r, "FORBIDDEN");
    let r = app
        .gql_as(
            &s.organizer_b,
            REGISTER,
            json!({ "e": s.event_a, "u": rx.url("/hook"), "a": null }),
        )
        .await;
    assert_code(&r, "FORBIDDEN");

    let (id, secret) = register(
        &app,
        &s.organizer_a,
        &s.event_a,
        &rx.url("/hook"),
        Some(&["project.submitted"]),
    )
    .await;
    assert!(
        secret.len() >= 64,
        "a secret of at least 32 random bytes: {secret}"
    );
    let listed = hooks(&app, &s.organizer_a, &s.event_a).await;
    assert_eq!(listed.len(), 1);
    assert_eq!(listed[0]["id"], id.as_str());
    assert_eq!(listed[0]["actions"], json!(["project.submitted"]));
    assert_eq!(listed[0]["active"], true);
    assert!(
        !listed.iter().any(|h| h.to_string().contains(&secret)),
        "the secret is never shown again"
    );
    for who in [&s.participant_a, &s.judge_a, &s.organizer_b] {
        let r = app.gql_as(who, HOOKS, json!({ "e": s.event_a })).await;
        assert!(
            r["data"]["event"]["webhooks"].is_null() || r.get("errors").is_some(),
            "only organizers read webhooks: {r}"
        );
        assert!(!r.to_string().contains(&rx.url("")), "{r}");
    }

    // A filtered-out action is not delivered; the submission is.
    add_track(&app, &s, "Filtered out").await;
    app.submit_project(&s.participant_a, &s.draft).await;
    let all = wait_for(&app, &s.organizer_a, &s.event_a, "delivered", |d| {
        d.len() == 1 && d[0]["status"] == "DELIVERED"
    })
    .await;
    let delivery = &all[0];
    assert_eq!(delivery["action"], "project.submitted");
    assert_eq!(delivery["attempts"][0]["statusCode"], 200);
    let receipts = rx.receipts();
    assert_eq!(receipts.len(), 1, "one request: {receipts:?}");
    let got = &receipts[0];
    let delivery_id = &got.headers["x-verdict-delivery"];
    assert_eq!(delivery_id, delivery["id"].as_str().expect("id"));
    assert_eq!(got.headers["content-type"], "application/json");
    let timestamp: i64 = got.headers["x-verdict-timestamp"]
        .parse()
        .expect("a unix timestamp");
    assert!((chrono::Utc::now().timestamp() - timestamp).abs() < 60);
    assert_eq!(
        got.headers["x-verdict-signature"],
        format!(
            "sha256={}",
            hmac_hex(&secret, &format!("{delivery_id}.{timestamp}.{}", got.body))
        ),
        "the signature is HMAC-SHA256 over id.timestamp.body with the secret"
    );
    assert_ne!(
        got.headers["x-verdict-signature"],
        format!(
            "sha256={}",
            hmac_hex(
                "another secret",
                &format!("{delivery_id}.{timestamp}.{}", got.body)
            )
        )
    );
    // The body is the audit event, as the organizers' audit log has it.
    let body: Value = serde_json::from_str(&got.body).expect("a JSON body");
    assert_eq!(body["action"], "project.submitted");
    assert_eq!(body["object"]["id"], s.draft.as_str());
    assert_eq!(got.body, delivery["body"].as_str().expect("body"));
    let log = crate::audit::audit_log(&app, &s.organizer_a, &s.event_a).await;
    let entry = log
        .iter()
        .find(|n| n["action"] == "project.submitted" && n["objectId"] == s.draft.as_str())
        .expect("the submission's audit event");
    assert_eq!(body["rowHash"], entry["rowHash"]);
    assert_eq!(
        body["seq"].to_string(),
        entry["seq"].to_string().trim_matches('"')
    );
    assert_eq!(body["actor"], entry["actor"]);

    // Switched off, it hears of nothing; only organizers switch it.
    let r = app
        .gql_as(&s.participant_a, ACTIVE, json!({ "id": id, "a": false }))
        .await;
    assert_code(&r, "NOT_FOUND");
    app.ok(
        Some(&s.organizer_a),
        ACTIVE,
        json!({ "id": id, "a": false }),
    )
    .await;
    let another = app
        .create_project(&s.participant_a, &s.event_a, "Unheard", &s.track_a)
        .await;
    app.submit_project(&s.participant_a, &another).await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(deliveries(&app, &s.organizer_a, &s.event_a).await.len(), 1);
    assert_eq!(rx.receipts().len(), 1);
}

async fn private_addresses_are_refused_and_never_contacted(app: App) {
    let s = app.scenario().await;
    let rx = Receiver::start(200, None).await;
    let p = rx.port;
    for url in [
        format!("http://127.0.0.1:{p}/hook"),
        format!("http://localhost:{p}/hook"),
        format!("http://2130706433:{p}/"),
        format!("http://0177.0.0.1:{p}/"),
        format!("http://0x7f.0.0.1:{p}/"),
        format!("http://127.1:{p}/"),
        format!("http://[::1]:{p}/"),
        format!("http://[::ffff:127.0.0.1]:{p}/"),
        format!("http://[::ffff:7f00:1]:{p}/"),
        format!("http://[64:ff9b::7f00:1]:{p}/"),
        "http://169.254.169.254/latest/meta-data/".into(),
        "http://[::ffff:169.254.169.254]/".into(),
        "http://10.0.0.1/".into(),
        "http://172.16.0.1/".into(),
        "http://192.168.0.1/".into(),
        "http://100.64.0.1/".into(),
        "http://0.0.0.0/".into(),
        "http://[fd00::1]/".into(),
        "http://[fe80::1]/".into(),
        "http://224.0.0.1/".into(),
        "http://192.0.2.1/".into(),
        format!("ftp://127.0.0.1:{p}/"),
        "file:///etc/passwd".into(),
        "https://user:pass@example.org/hook".into(),
        "not a url".into(),
    ] {
        let r = app
            .gql_as(
                &s.organizer_a,
                REGISTER,
                json!({ "e": s.event_a, "u": url, "a": null }),
            )
            .await;
        assert_bad_input(&r, &["url"]);
    }
    let r = app
        .gql_as(
            &s.organizer_a,
            REGISTER,
            json!({ "e": s.event_a, "u": "https://93.184.215.14/hook", "a": ["Not A Prefix"] }),
        )
        .await;
    assert_bad_input(&r, &["actions"]);
    assert!(hooks(&app, &s.organizer_a, &s.event_a).await.is_empty());
    // Changes happen; nothing ever connects to the listener.
    add_track(&app, &s, "After the refusals").await;
    app.submit_project(&s.participant_a, &s.draft).await;
    tokio::time::sleep(Duration::from_millis(1500)).await;
    assert_eq!(
        rx.connections(),
        0,
        "the listener on 127.0.0.1 was contacted"
    );
}

async fn a_refusal_never_says_what_a_name_resolves_to(app: App) {
    let s = app.scenario().await;
    let ask = |url: String| {
        app.gql_as(
            &s.organizer_a,
            REGISTER,
            json!({ "e": s.event_a, "u": url, "a": null }),
        )
    };
    // `localhost` stands for an internal name (intranet.example resolving to 10.1.2.3):
    // the refusal names the field and the rule, not the address behind the name.
    let internal = ask("http://localhost:8080/hook".into()).await;
    assert_bad_input(&internal, &["url"]);
    let error = internal["errors"][0].to_string();
    assert!(error.contains("must reach a public address"), "{error}");
    for address in ["127.0.0.1", "::1", "resolves to"] {
        assert!(
            !error.contains(address),
            "the refusal leaks {address:?}: {error}"
        );
    }
    // Nor whether a name exists: one that resolves nowhere is refused alike.
    let nowhere = ask(format!("http://no-such-host-{}.invalid/hook", unique())).await;
    assert_bad_input(&nowhere, &["url"]);
    assert_eq!(
        nowhere["errors"][0]["message"], internal["errors"][0]["message"],
        "{nowhere}"
    );
}

async fn redirects_are_not_followed(app: App) {
    let s = app.scenario().await;
    let target = Receiver::start(200, None).await;
    let redirecting = Receiver::start(302, Some(target.url("/stolen"))).await;
    register(
        &app,
        &s.organizer_a,
        &s.event_a,
        &redirecting.url("/hook"),
        None,
    )
    .await;
    add_track(&app, &s, "Redirected").await;
    let all = wait_for(&app, &s.organizer_a, &s.event_a, "one attempt", |d| {
        d.len() == 1 && d[0]["attempts"].as_array().is_some_and(|a| !a.is_empty())
    })
    .await;
    assert_eq!(all[0]["attempts"][0]["statusCode"], 302);
    assert_eq!(all[0]["status"], "PENDING", "a 3xx is a failed attempt");
    assert_eq!(redirecting.receipts().len(), 1);
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(
        target.connections(),
        0,
        "the redirect's target was contacted"
    );
}

async fn failures_are_retried_then_retried_by_hand(app: App) {
    let s = app.scenario().await;
    let rx = Receiver::start(500, None).await;
    register(&app, &s.organizer_a, &s.event_a, &rx.url("/hook"), None).await;
    add_track(&app, &s, "Failing").await;
    let all = wait_for(&app, &s.organizer_a, &s.event_a, "failed", |d| {
        d.len() == 1 && d[0]["status"] == "FAILED"
    })
    .await;
    let d = &all[0];
    assert_eq!(d["attemptCount"], 8, "the eighth failure is final: {d}");
    let attempts = d["attempts"].as_array().expect("attempts");
    assert_eq!(attempts.len(), 8);
    for (i, a) in attempts.iter().enumerate() {
        assert_eq!(a["attempt"], i + 1);
        assert_eq!(a["statusCode"], 500);
    }
    assert_eq!(d["lastStatusCode"], 500);
    assert_eq!(rx.receipts().len(), 8);
    let id = str_at(d, "/id");

    // Retried by hand: organizers only, once it failed.
    let r = app.gql_as(&s.organizer_b, RETRY, json!({ "id": id })).await;
    assert_code(&r, "NOT_FOUND");
    let r = app
        .gql_as(&s.participant_a, RETRY, json!({ "id": id }))
        .await;
    assert_code(&r, "NOT_FOUND");
    rx.status.store(200, Ordering::SeqCst);
    let before = app.audit_head().await;
    let d = app
        .ok(Some(&s.organizer_a), RETRY, json!({ "id": id }))
        .await;
    assert_eq!(app.audit_head().await, before + 1);
    assert_eq!(d["retryWebhookDelivery"]["id"], id.as_str());
    let all = wait_for(&app, &s.organizer_a, &s.event_a, "delivered", |d| {
        d.iter()
            .any(|x| x["id"] == id.as_str() && x["status"] == "DELIVERED")
    })
    .await;
    let d = all
        .iter()
        .find(|x| x["id"] == id.as_str())
        .expect("the delivery");
    assert_eq!(d["attempts"][8]["statusCode"], 200);
    let r = app.gql_as(&s.organizer_a, RETRY, json!({ "id": id })).await;
    assert_code(&r, "CONFLICT");
}

async fn a_silent_receiver_times_out_after_five_seconds(app: App) {
    let s = app.scenario().await;
    let rx = Receiver::start(0, None).await;
    register(&app, &s.organizer_a, &s.event_a, &rx.url("/silent"), None).await;
    add_track(&app, &s, "Unanswered").await;
    let all = wait_for(&app, &s.organizer_a, &s.event_a, "timed out", |d| {
        d.len() == 1 && d[0]["attempts"].as_array().is_some_and(|a| !a.is_empty())
    })
    .await;
    let a = &all[0]["attempts"][0];
    assert!(a["statusCode"].is_null(), "{a}");
    let ms = a["durationMs"].as_i64().expect("durationMs");
    assert!(
        (4_500..10_000).contains(&ms),
        "the attempt gave up after {ms} ms"
    );
    assert!(
        a["error"].as_str().is_some_and(|e| e.contains("timed out")),
        "{a}"
    );
    assert_eq!(rx.receipts().len(), 1);
    assert_eq!(all[0]["status"], "PENDING");
}

async fn the_connect_time_check_refuses_what_registration_allowed(app: App) {
    let s = app.scenario().await;
    let rx = Receiver::start(200, None).await;
    let tracks: Option<&[&str]> = Some(&["track."]);
    register(
        &app,
        &s.organizer_a,
        &s.event_a,
        &rx.url("/literal"),
        tracks,
    )
    .await;
    let by_name = format!("http://localhost:{}/name", rx.port);
    register(&app, &s.organizer_a, &s.event_a, &by_name, tracks).await;
    // The same database served without the test flag: its worker checks again.
    let strict = app.sibling(&[]).await;
    drop(app);
    tokio::time::sleep(Duration::from_millis(300)).await;
    let before = rx.connections();
    strict
        .create_track(&s.organizer_a, &s.event_a, "Strict")
        .await;
    let all = wait_for(&strict, &s.organizer_a, &s.event_a, "attempted", |d| {
        d.len() == 2
            && d.iter()
                .all(|x| x["attempts"].as_array().is_some_and(|a| !a.is_empty()))
    })
    .await;
    for d in &all {
        let error = d["attempts"][0]["error"].as_str().unwrap_or_default();
        assert!(d["attempts"][0]["statusCode"].is_null(), "{d}");
        assert!(error.contains("public address"), "{d}");
    }
    // The attempt at the name does not say what it resolved to either.
    let by_name_error = all
        .iter()
        .map(|d| d["attempts"][0]["error"].as_str().unwrap_or_default())
        .find(|e| e.contains("/name"))
        .expect("the attempt at the name");
    assert!(!by_name_error.contains("127.0.0.1"), "{by_name_error}");
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(rx.connections(), before, "a refused address was contacted");
}

async fn two_processes_never_send_one_delivery_twice(app: App) {
    let s = app.scenario().await;
    let rx = Receiver::start(200, None).await;
    for path in ["/a", "/b", "/c"] {
        // Tracks only: not the registrations of the others.
        register(
            &app,
            &s.organizer_a,
            &s.event_a,
            &rx.url(path),
            Some(&["track"]),
        )
        .await;
    }
    let other = app.sibling(&["--allow-loopback-webhooks"]).await;
    let tag = unique();
    let mut writes = vec![];
    for i in 0..12 {
        let (app, other, s, tag) = (&app, &other, &s, &tag);
        writes.push(async move {
            let via = if i % 2 == 0 { app } else { other };
            via.create_track(&s.organizer_a, &s.event_a, &format!("T{i}-{tag}"))
                .await;
        });
    }
    futures_util::future::join_all(writes).await;
    let all = wait_for(&app, &s.organizer_a, &s.event_a, "all delivered", |d| {
        d.len() == 36 && d.iter().all(|x| x["status"] == "DELIVERED")
    })
    .await;
    let mut seen: HashMap<String, usize> = HashMap::new();
    for r in rx.receipts() {
        *seen
            .entry(r.headers["x-verdict-delivery"].clone())
            .or_default() += 1;
    }
    assert_eq!(seen.len(), 36, "every delivery arrived");
    assert!(
        seen.values().all(|&n| n == 1),
        "a delivery was sent twice: {seen:?}"
    );
    for d in &all {
        assert_eq!(d["attemptCount"], 1, "{d}");
    }
}
