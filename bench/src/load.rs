//! The load generator: N keep-alive connections posting GraphQL for a fixed time, with
//! latencies in an HDR histogram, and the graphql-transport-ws subscribers.
//!
//! Each connection is its own `reqwest::Client` holding one pooled connection, so N
//! workers are exactly N sockets, each sending its next request when the previous answer
//! has arrived (closed loop, like wrk). A request counts as served only if it answered 200
//! without GraphQL `errors`; anything else is counted as failed and the first such answer
//! is kept to say why.

use std::sync::Arc;
use std::time::Duration;

use futures_util::{SinkExt, StreamExt};
use hdrhistogram::Histogram;
use serde_json::{Value, json};
use tokio::sync::mpsc;
use tokio::task::JoinSet;
use tokio::time::Instant;
use tokio_tungstenite::tungstenite::{Message, client::IntoClientRequest, http::HeaderValue};

use crate::server::Proc;

/// One request of a load: a POST of the JSON body (a GET when there is none) with the
/// bearer token, if any.
pub struct Call {
    pub body: Option<String>,
    pub token: Option<Arc<str>>,
}

/// Makes the `i`th request of connection `c`.
pub type MakeCall = Arc<dyn Fn(usize, u64) -> Call + Send + Sync>;

/// The same request on every connection, every time.
pub fn fixed(query: &str, vars: Value, token: Option<&str>) -> MakeCall {
    let body = json!({ "query": query, "variables": vars }).to_string();
    let token: Option<Arc<str>> = token.map(Arc::from);
    Arc::new(move |_, _| Call {
        body: Some(body.clone()),
        token: token.clone(),
    })
}

/// A GET of the load's URL, without credentials, every time.
pub fn get() -> MakeCall {
    Arc::new(|_, _| Call {
        body: None,
        token: None,
    })
}

/// How long a load runs: a warm-up whose requests are not recorded, then the measured window.
#[derive(Clone, Copy)]
pub struct Timing {
    pub warmup: Duration,
    pub window: Duration,
}

/// What one load measured.
pub struct Outcome {
    pub served: u64,
    pub failed: u64,
    pub first_error: Option<String>,
    /// From the start of the window until the last request started in it was answered.
    pub seconds: f64,
    /// Latencies of served requests, in microseconds.
    pub latency: Histogram<u64>,
    /// The server's CPU time (user + system) over the window, in milliseconds.
    pub server_cpu_ms: f64,
    /// The server's largest resident set seen during the window, in KiB.
    pub peak_rss_kib: u64,
}

impl Outcome {
    pub fn per_second(&self) -> f64 {
        self.served as f64 / self.seconds
    }

    pub fn p50_ms(&self) -> f64 {
        self.latency.value_at_quantile(0.5) as f64 / 1000.0
    }

    pub fn p99_ms(&self) -> f64 {
        self.latency.value_at_quantile(0.99) as f64 / 1000.0
    }

    /// Server CPU milliseconds per served request.
    pub fn cpu_ms_per_request(&self) -> f64 {
        self.server_cpu_ms / self.served.max(1) as f64
    }
}

fn histogram() -> Histogram<u64> {
    // 1 µs to 10 minutes at 3 significant digits.
    Histogram::new_with_bounds(1, 600_000_000, 3).unwrap_or_else(|_| unreachable!())
}

/// Runs `make` on `connections` connections against `url`, sampling `server` meanwhile.
pub async fn run(
    url: &str,
    server: &Proc,
    connections: usize,
    t: Timing,
    make: MakeCall,
) -> Outcome {
    let start = Instant::now();
    let from = start + t.warmup;
    let until = from + t.window;
    let mut workers = JoinSet::new();
    for c in 0..connections {
        let client = reqwest::Client::builder()
            .pool_max_idle_per_host(1)
            .timeout(Duration::from_secs(60))
            .build()
            .unwrap_or_else(|e| panic!("HTTP client: {e}"));
        let (url, make) = (url.to_owned(), make.clone());
        workers.spawn(async move {
            let mut w = Worker {
                latency: histogram(),
                served: 0,
                failed: 0,
                first_error: None,
                last: from,
            };
            let mut i = 0;
            loop {
                let sent = Instant::now();
                if sent >= until {
                    break;
                }
                let call = make(c, i);
                i += 1;
                let mut req = match call.body {
                    Some(body) => client
                        .post(&url)
                        .header("content-type", "application/json")
                        .body(body),
                    None => client.get(&url),
                };
                if let Some(token) = call.token {
                    req = req.bearer_auth(token);
                }
                let answer = match req.send().await {
                    Ok(res) => {
                        let status = res.status();
                        match res.text().await {
                            Ok(text) if status.is_success() && !text.contains("\"errors\"") => {
                                Ok(())
                            }
                            Ok(text) => Err(format!("{status}: {}", truncate(&text))),
                            Err(e) => Err(e.to_string()),
                        }
                    }
                    Err(e) => Err(e.to_string()),
                };
                if sent < from {
                    continue;
                }
                let done = Instant::now();
                w.last = w.last.max(done);
                match answer {
                    Ok(()) => {
                        w.served += 1;
                        let us = (done - sent).as_micros().max(1) as u64;
                        w.latency.saturating_record(us);
                    }
                    Err(e) => {
                        w.failed += 1;
                        w.first_error.get_or_insert(e);
                    }
                }
            }
            w
        });
    }
    tokio::time::sleep_until(from).await;
    let cpu_before = server.cpu_ms();
    let mut peak_rss_kib = 0;
    while Instant::now() < until {
        peak_rss_kib = peak_rss_kib.max(server.rss_kib());
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let cpu = server.cpu_ms() - cpu_before;
    let mut out = Outcome {
        served: 0,
        failed: 0,
        first_error: None,
        seconds: t.window.as_secs_f64(),
        latency: histogram(),
        server_cpu_ms: cpu,
        peak_rss_kib,
    };
    while let Some(w) = workers.join_next().await {
        let w = w.unwrap_or_else(|e| panic!("load worker: {e}"));
        out.served += w.served;
        out.failed += w.failed;
        if out.first_error.is_none() {
            out.first_error = w.first_error;
        }
        out.seconds = out.seconds.max((w.last - from).as_secs_f64());
        out.latency
            .add(&w.latency)
            .unwrap_or_else(|e| panic!("histogram: {e}"));
    }
    out
}

struct Worker {
    latency: Histogram<u64>,
    served: u64,
    failed: u64,
    first_error: Option<String>,
    last: Instant,
}

fn truncate(s: &str) -> String {
    s.chars().take(300).collect()
}

/// A GraphQL client for the setup steps and the checks before a load.
#[derive(Clone)]
pub struct Api {
    http: reqwest::Client,
    pub url: String,
}

impl Api {
    pub fn new(url: String) -> Api {
        Api {
            http: reqwest::Client::builder()
                .timeout(Duration::from_secs(120))
                .build()
                .unwrap_or_else(|e| panic!("HTTP client: {e}")),
            url,
        }
    }

    /// The `data` of an answer without errors; otherwise the errors as text.
    pub async fn gql(
        &self,
        token: Option<&str>,
        query: &str,
        vars: Value,
    ) -> Result<Value, String> {
        let mut req = self
            .http
            .post(&self.url)
            .json(&json!({ "query": query, "variables": vars }));
        if let Some(t) = token {
            req = req.bearer_auth(t);
        }
        let res = req.send().await.map_err(|e| e.to_string())?;
        let status = res.status();
        let v: Value = res.json().await.map_err(|e| format!("{status}: {e}"))?;
        if let Some(errors) = v.get("errors") {
            return Err(format!("{status}: {}", truncate(&errors.to_string())));
        }
        Ok(v["data"].clone())
    }
}

/// What a subscriber saw: which subscriber, when, and the `data` of the message.
pub type Delivery = (usize, Instant, Value);

/// Idle websocket subscribers, each on its own connection, reporting every message that
/// differs from its previous one on one channel. Dropping them closes their connections.
pub struct Subscribers {
    tasks: JoinSet<()>,
    pub connected: usize,
    pub first_error: Option<String>,
}

impl Subscribers {
    /// Opens `n` connections (at most 200 handshakes at once), each subscribing to `query`.
    pub async fn open(
        ws_url: &str,
        n: usize,
        token: Option<&str>,
        query: &str,
        deliveries: mpsc::UnboundedSender<Delivery>,
    ) -> Subscribers {
        let mut tasks = JoinSet::new();
        let mut first_error = None;
        let mut connected = 0;
        let mut handshakes = futures_util::stream::iter(0..n)
            .map(|i| subscribe(ws_url, token, query, i))
            .buffer_unordered(200);
        while let Some(result) = handshakes.next().await {
            match result {
                Ok((i, stream)) => {
                    connected += 1;
                    tasks.spawn(listen(i, stream, deliveries.clone()));
                }
                Err(e) => {
                    first_error.get_or_insert(e);
                }
            }
        }
        Subscribers {
            tasks,
            connected,
            first_error,
        }
    }

    /// Closes every connection.
    pub async fn close(mut self) {
        self.tasks.shutdown().await;
    }
}

type Socket =
    tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>;

async fn subscribe(
    ws_url: &str,
    token: Option<&str>,
    query: &str,
    i: usize,
) -> Result<(usize, Socket), String> {
    let mut req = ws_url.into_client_request().map_err(|e| e.to_string())?;
    req.headers_mut().insert(
        "Sec-WebSocket-Protocol",
        HeaderValue::from_static("graphql-transport-ws"),
    );
    let (mut ws, _) = tokio_tungstenite::connect_async(req)
        .await
        .map_err(|e| e.to_string())?;
    let init = match token {
        Some(t) => {
            json!({ "type": "connection_init", "payload": { "authorization": format!("Bearer {t}") } })
        }
        None => json!({ "type": "connection_init", "payload": {} }),
    };
    send(&mut ws, init).await?;
    let ack = tokio::time::timeout(Duration::from_secs(30), ws.next())
        .await
        .map_err(|_| "no connection_ack within 30 s".to_owned())?;
    match ack {
        Some(Ok(Message::Text(t))) if t.contains("connection_ack") => {}
        other => return Err(format!("handshake: {other:?}")),
    }
    send(
        &mut ws,
        json!({ "id": "1", "type": "subscribe", "payload": { "query": query } }),
    )
    .await?;
    Ok((i, ws))
}

async fn send(ws: &mut Socket, v: Value) -> Result<(), String> {
    ws.send(Message::Text(v.to_string().into()))
        .await
        .map_err(|e| e.to_string())
}

async fn listen(i: usize, mut ws: Socket, deliveries: mpsc::UnboundedSender<Delivery>) {
    let mut previous = String::new();
    while let Some(Ok(msg)) = ws.next().await {
        let Message::Text(text) = msg else { continue };
        let at = Instant::now();
        // The same message again (a payload that did not change) is not a new delivery.
        if text.as_str() == previous {
            continue;
        }
        let v: Value = serde_json::from_str(text.as_str()).unwrap_or(Value::Null);
        if v["type"] == "ping" {
            if send(&mut ws, json!({ "type": "pong" })).await.is_err() {
                return;
            }
            continue;
        }
        previous = text.to_string();
        let data = match v["type"].as_str() {
            Some("next") if v["payload"].get("errors").is_none() => v["payload"]["data"].clone(),
            _ => json!({ "unexpected": v }),
        };
        if deliveries.send((i, at, data)).is_err() {
            return;
        }
    }
}
