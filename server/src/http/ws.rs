//! The GraphQL websocket, `/graphql/ws` (graphql-transport-ws, and the legacy graphql-ws).
//! async-graphql speaks the protocol; this module owns the socket around it and holds the
//! connection to the limits of HTTP and to revocations:
//!
//! - Size: a message larger than `--max-body` is refused by the socket from its frame
//!   header, before it is read whole or parsed; the connection closes with 1009.
//! - Operations (`subscribe`, legacy `start`) pass the connection's [`Gate`]: at most
//!   `--max-subscriptions` in flight, and the request rate per connection and per client
//!   address (told as `http::client` tells it, drawing on the buckets of `/graphql`). A
//!   refused operation is not run: its id gets an `error` message (RATE_LIMITED with
//!   `retryAfter`, QUERY_TOO_COMPLEX for the cap, or UNAVAILABLE while the database does
//!   not answer).
//! - Database down: a `connection_init` that cannot be checked because the database does
//!   not answer closes with 1013 ("try again later"), not as a bad credential; operations
//!   already running (subscriptions) go on and deliver again once it answers.
//! - Revocation: `logOut`, `revokeApiToken` and `revokeRole` publish
//!   [`BusEvent::AccessRevoked`] after their commit, and a connection whose user or
//!   credential it names is closed with 4403. The bus is per process, so this close is
//!   only the fast path: what holds across several processes sharing a database is the
//!   re-check of the credential before each operation (`graphql::extensions::LiveCredential`)
//!   and before each subscription message (`graphql::feed` checks every follower of a
//!   message at once; `graphql::subscription` the rest).
//! - Slow clients: one message at a time goes to the socket, and until the socket has
//!   taken it (written it to the kernel) nothing more is read from the client or asked of
//!   async-graphql, whose subscription streams are pulled one message per ask and buffer
//!   nothing. A message may wait `--ws-send-timeout` (30 s) for the client; a client that
//!   takes longer (one that stopped reading) is closed with 1013, "try again later"
//!   (graphql-ws clients, the web client among them, reconnect after it, where 1008 "policy
//!   violation" would make them give up). So a client that never reads holds one message
//!   and the kernel's socket buffers, for a bounded time, never a queue: its subscriptions
//!   stop pulling from the bus, which holds at most `bus::CAPACITY` events for all of its
//!   subscribers together (`graphql::bus`; a subscriber further behind is told what it
//!   missed), or from their feeds, which keep the latest snapshot only (`graphql::feed`).
//!   While a message waits, revocations and shutdown are still heard. Proved by
//!   `slow_clients::*` (end to end: a client with a 4 KiB receive window offered 286 MB)
//!   and `inprocess::a_lagging_subscriber_is_told_what_it_missed_and_the_bus_stays_bounded`.
//! - Shutdown: when the server stops (SIGTERM, Ctrl-C) every connection closes with 1001,
//!   and the server waits for those closes, a stalled client's too (see [`super::Shutdown`]).
//!
//! Every close the server makes (1001, 1009, 1013, 4403, and async-graphql's own) goes out
//! behind what the client has not yet taken, and all of it gets [`CLOSE_GRACE`] (1 s); a
//! client that still takes nothing is then cut off without a close frame. A close for a
//! reason of the connection's own (1009, 1013, 4403) is logged with the upgrade's request id.

use std::collections::HashSet;
use std::net::{IpAddr, SocketAddr};
use std::str::FromStr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use async_graphql::Pos;
use async_graphql::http::{ALL_WEBSOCKET_PROTOCOLS, ClientMessage, WebSocketProtocols, WsMessage};
use axum::extract::ws::{CloseFrame, Message, WebSocket, WebSocketUpgrade};
use axum::extract::{ConnectInfo, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use futures_util::{SinkExt, StreamExt};
use governor::clock::{Clock, QuantaInstant};
use governor::{DefaultDirectRateLimiter, NotUntil, Quota, RateLimiter};
use tokio::sync::broadcast::error::RecvError;
use tokio::sync::mpsc;
use tokio::time::Instant;
use tower_governor::governor::SharedRateLimiter;

use super::auth::Caller;
use super::client::client_ip;
use super::{AppState, request_rate};
use crate::domain::accounts;
use crate::error::AppError;
use crate::graphql::bus::BusEvent;
use crate::graphql::error::{to_graphql, unavailable_message};
use crate::graphql::{RequestCtx, request_data};

/// The close code of a connection whose credential or role was revoked.
const CLOSE_REVOKED: u16 = 4403;

/// The close code of a message over the size limit (RFC 6455 "message too big").
const CLOSE_TOO_BIG: u16 = 1009;

/// The close code when the server stops (RFC 6455 "going away").
const CLOSE_GOING_AWAY: u16 = 1001;

/// "Try again later" (RFC 6455 1013): the close code of a client that took longer than
/// `--ws-send-timeout` to take a message, and of a `connection_init` refused because the
/// database does not answer (the credential may be fine). graphql-ws clients, the web
/// client among them, reconnect after it; after 1008 ("policy violation") they would give
/// up for good.
const CLOSE_TRY_AGAIN: u16 = 1013;

/// How long the close frame, behind whatever the client has not taken yet, may wait for
/// the client before the connection is dropped without it. Well within the 5 s that
/// `verdict serve` gives its websockets to close when it stops.
const CLOSE_GRACE: Duration = Duration::from_secs(1);

/// Client messages read ahead of async-graphql; reading the socket pauses when it is full.
/// Each is boxed in the channel: tokio allocates a channel's slots 32 at a time when it is
/// made, and 32 unboxed `ClientMessage` results are 11.8 KiB held by every connection for
/// its whole life (massif, `bench/README.md` "What an idle subscriber holds").
const INBOX: usize = 16;

/// The socket's read buffer. tungstenite's default, 128 KiB allocated per connection, is
/// for sockets that read a lot; a subscriber reads a few small messages in its life and
/// ten thousand of them waiting for the results would hold 1.3 GB of empty buffers. 1 KiB
/// holds a `connection_init` and a typical `subscribe`; a larger message still arrives
/// whole (the buffer grows for it, up to `--max-body`).
const READ_BUFFER: usize = 1024;

/// Upgrades to a GraphQL websocket. The connection authenticates in `connection_init`,
/// with `{"authorization": "Bearer ..."}`.
pub(super) async fn handler(
    State(st): State<AppState>,
    ConnectInfo(peer): ConnectInfo<SocketAddr>,
    caller: Caller,
    headers: HeaderMap,
    upgrade: WebSocketUpgrade,
) -> Response {
    let Some(protocol) = protocol(&headers) else {
        return StatusCode::BAD_REQUEST.into_response();
    };
    let limits = &st.services.limits;
    let address = client_ip(peer.ip(), &headers, &limits.trusted_proxies);
    let max = limits.max_body;
    upgrade
        .protocols(ALL_WEBSOCKET_PROTOCOLS)
        .max_message_size(max)
        .max_frame_size(max)
        .read_buffer_size(READ_BUFFER)
        .on_upgrade(move |socket| serve(socket, st, caller, protocol, address))
}

/// The first subprotocol the client asks for that async-graphql speaks.
fn protocol(headers: &HeaderMap) -> Option<WebSocketProtocols> {
    headers
        .get(header::SEC_WEBSOCKET_PROTOCOL)?
        .to_str()
        .ok()?
        .split(',')
        .find_map(|p| WebSocketProtocols::from_str(p.trim()).ok())
}

/// Runs one connection: client messages pass the [`Gate`] into async-graphql, its answers
/// go out to the socket one at a time, each taken by the client within `--ws-send-timeout`
/// or the connection closes, and a revocation naming the connection closes it.
async fn serve(
    socket: WebSocket,
    st: AppState,
    caller: Caller,
    protocol: WebSocketProtocols,
    address: IpAddr,
) {
    let _open = crate::metrics::Active::start(crate::metrics::WEBSOCKETS);
    let _until_closed = st.shutdown.open();
    // The upgrade request's id names the connection's errors and log lines.
    let request_id = caller.request_id.clone();
    // Subscribed before the credential is checked, so no revocation can fall in between.
    let mut revocations = st.services.bus.subscribe();
    // The connection's context, once `connection_init` has authenticated it.
    let who: Arc<OnceLock<Arc<RequestCtx>>> = Arc::default();
    let (inbox, inbox_rx) = mpsc::channel::<Box<serde_json::Result<ClientMessage>>>(INBOX);
    let inbox_rx = futures_util::stream::unfold(inbox_rx, |mut rx| async move {
        rx.recv().await.map(|m| (*m, rx))
    });
    let services = st.services.clone();
    let init_who = who.clone();
    // Set when `connection_init` was refused for the database, not the credential.
    let init_unavailable = Arc::new(AtomicBool::new(false));
    let unavailable_flag = init_unavailable.clone();
    let init_request_id = request_id.clone();
    let graphql =
        async_graphql::http::WebSocket::from_message_stream(st.schema.clone(), inbox_rx, protocol)
            .on_connection_init(move |payload: serde_json::Value| async move {
                let rc = caller
                    .with_init_payload(&payload)
                    .authenticate(&services)
                    .await
                    .map_err(|refused| {
                        if refused.status() == StatusCode::SERVICE_UNAVAILABLE {
                            unavailable_flag.store(true, Ordering::Relaxed);
                            async_graphql::Error::new(unavailable_message(&init_request_id))
                        } else {
                            async_graphql::Error::new("the token is invalid, expired or revoked")
                        }
                    })?;
                let rc = Arc::new(rc.long_lived());
                let _ = init_who.set(rc.clone());
                Ok(request_data(&services, rc))
            });
    futures_util::pin_mut!(graphql);
    let mut gate = Gate::new(&st, address);
    let send_timeout = st.services.limits.ws_send_timeout();
    let (mut sink, mut source) = socket.split();
    let stopping = st.shutdown.stopping();
    futures_util::pin_mut!(stopping);
    // Until when the message handed to the socket may wait for the client to take it;
    // `None` when the socket has taken everything. While a message waits, nothing more is
    // read from the client or asked of async-graphql: one message at a time, so a client
    // that stops reading holds one message, never a queue.
    let mut waiting: Option<Instant> = None;

    // The close frame that ends the connection, if the server ends it.
    let last: Option<Message> = loop {
        let deadline = waiting.unwrap_or_else(Instant::now);
        tokio::select! {
            incoming = source.next(), if waiting.is_none() && inbox.capacity() > 0 => {
                let message = match incoming {
                    Some(Ok(Message::Text(t))) => ClientMessage::from_bytes(t.as_bytes()),
                    Some(Ok(Message::Binary(b))) => ClientMessage::from_bytes(&b),
                    // Pings are answered and a close is acknowledged by the socket itself;
                    // the read after a close ends the stream.
                    Some(Ok(_)) => continue,
                    Some(Err(e)) => {
                        if !is_too_big(e) {
                            break None;
                        }
                        closing(&request_id, CLOSE_TOO_BIG, "a message over --max-body");
                        break Some(close(CLOSE_TOO_BIG, "message too big"));
                    }
                    None => break None,
                };
                match &message {
                    Ok(ClientMessage::Start { id, .. }) => {
                        if let Err(refused) = gate.admit(id) {
                            let text = refusal(protocol, id, refused, &request_id);
                            // Immediate: the socket has taken everything before.
                            if sink.feed(Message::Text(text.into())).await.is_err() {
                                break None;
                            }
                            waiting = Some(Instant::now() + send_timeout);
                            continue;
                        }
                    }
                    Ok(ClientMessage::Stop { id }) => gate.finished(id),
                    _ => {}
                }
                if inbox.try_send(Box::new(message)).is_err() {
                    break None;
                }
            }
            outgoing = graphql.next(), if waiting.is_none() => {
                let text = match outgoing {
                    Some(WsMessage::Text(text)) => text,
                    // async-graphql closes a refused `connection_init` with 1002; one refused
                    // for the database says "try again later" instead.
                    Some(WsMessage::Close(code, reason)) => {
                        let code = if init_unavailable.load(Ordering::Relaxed) {
                            CLOSE_TRY_AGAIN
                        } else {
                            code
                        };
                        break Some(close(code, &reason));
                    }
                    None => break None,
                };
                if let Some(id) = completed(&text) {
                    gate.finished(&id);
                }
                if sink.feed(Message::Text(text.into())).await.is_err() {
                    break None;
                }
                waiting = Some(Instant::now() + send_timeout);
            }
            taken = tokio::time::timeout_at(deadline, sink.flush()), if waiting.is_some() => {
                match taken {
                    Ok(Ok(())) => waiting = None,
                    Ok(Err(_)) => break None,
                    Err(_) => {
                        let why = "the client did not take a message within --ws-send-timeout";
                        closing(&request_id, CLOSE_TRY_AGAIN, why);
                        break Some(close(CLOSE_TRY_AGAIN, "too slow to read"));
                    }
                }
            }
            () = &mut stopping => break Some(close(CLOSE_GOING_AWAY, "server shutting down")),
            event = revocations.recv() => {
                if matches!(event, Err(RecvError::Closed)) {
                    break None;
                }
                // Boxed: the check's database query is rare, and inline it would make
                // every connection's task larger for its whole life.
                if Box::pin(revokes(event, who.get(), &st.services.db)).await {
                    let why = "the credential or role was revoked";
                    closing(&request_id, CLOSE_REVOKED, why);
                    break Some(close(CLOSE_REVOKED, "access revoked"));
                }
            }
        }
    };
    if let Some(Message::Close(Some(frame))) = &last {
        crate::metrics::websocket_closed(frame.code);
    }
    // The close frame goes out behind whatever the client has not taken yet, and all of it
    // gets CLOSE_GRACE: a client that reads nothing is cut off without it.
    let _ = tokio::time::timeout(CLOSE_GRACE, async {
        if let Some(frame) = last {
            let _ = sink.send(frame).await;
        }
        let _ = sink.close().await;
    })
    .await;
}

/// The log line of a connection the server closes for a reason of its own (shutdown, which
/// closes every connection at once, goes unlogged).
fn closing(request_id: &str, code: u16, why: &str) {
    tracing::info!(request_id, code, "closing a websocket: {why}");
}

fn close(code: u16, reason: &str) -> Message {
    Message::Close(Some(CloseFrame {
        code,
        reason: reason.into(),
    }))
}

/// Whether the socket refused a message (or frame) over the size limit.
fn is_too_big(e: axum::Error) -> bool {
    matches!(
        e.into_inner().downcast_ref::<tungstenite::Error>(),
        Some(tungstenite::Error::Capacity(_))
    )
}

/// Whether a bus event (or a gap in them) ends the connection authenticated as `rc`: a
/// revocation of the connection's credential, or of all of its user's access.
async fn revokes(
    event: Result<BusEvent, RecvError>,
    rc: Option<&Arc<RequestCtx>>,
    db: &crate::db::Db,
) -> bool {
    let Some((user, own)) = rc.and_then(|rc| rc.caller.as_ref()) else {
        return false;
    };
    match event {
        Ok(BusEvent::AccessRevoked {
            user_id,
            credential,
        }) => user.id == user_id && credential.is_none_or(|c| &c == own),
        Ok(BusEvent::SessionsEnded { user_id, except }) => {
            user.id == user_id
                && matches!(
                    own,
                    accounts::Credential::Session { .. } | accounts::Credential::JudgeLink { .. }
                )
                && except.as_ref() != Some(own)
        }
        Ok(_) | Err(RecvError::Closed) => false,
        // A revocation may be among the missed events: ask the database about the
        // credential (a missed role change is caught by the per-message checks).
        Err(RecvError::Lagged(_)) => {
            matches!(accounts::still_valid(&db.conn, own).await, Ok(false))
        }
    }
}

/// The id of an operation async-graphql reports complete, if `text` is that report.
fn completed(text: &str) -> Option<String> {
    #[derive(serde::Deserialize)]
    struct Head {
        #[serde(rename = "type")]
        kind: String,
        id: Option<String>,
    }
    // Most messages carry data; only those that can be a `complete` are parsed.
    if !text.contains("\"complete\"") {
        return None;
    }
    let head: Head = serde_json::from_str(text).ok()?;
    (head.kind == "complete").then_some(head.id).flatten()
}

/// The `error` message refusing operation `id`, in the protocol's shape: a list of errors
/// (graphql-transport-ws) or one error (legacy graphql-ws).
fn refusal(protocol: WebSocketProtocols, id: &str, err: AppError, request_id: &str) -> String {
    let mut error = to_graphql(err, request_id).into_server_error(Pos::default());
    error.locations.clear();
    let payload = match protocol {
        WebSocketProtocols::GraphQLWS => serde_json::json!([error]),
        WebSocketProtocols::SubscriptionsTransportWS => serde_json::json!(error),
    };
    serde_json::json!({ "type": "error", "id": id, "payload": payload }).to_string()
}

type AddressLimiter = SharedRateLimiter<IpAddr, governor::middleware::NoOpMiddleware>;

/// What one connection may start: at most `max_in_flight` operations at once, and the
/// request rate per connection and per client address.
struct Gate {
    /// Whether the database answers: while it does not, operations are refused at once.
    db: crate::db::Availability,
    in_flight: HashSet<String>,
    max_in_flight: usize,
    connection: Option<DefaultDirectRateLimiter>,
    address: Option<(AddressLimiter, IpAddr)>,
}

impl Gate {
    fn new(st: &AppState, address: IpAddr) -> Gate {
        let limits = &st.services.limits;
        let (period, burst) = request_rate(limits);
        let connection = Quota::with_period(period)
            .zip(std::num::NonZeroU32::new(burst))
            .map(|(q, burst)| RateLimiter::direct(q.allow_burst(burst)));
        Gate {
            db: st.services.db.availability().clone(),
            in_flight: HashSet::new(),
            max_in_flight: limits.max_subscriptions,
            connection,
            address: st
                .rate_limit
                .as_ref()
                .map(|cfg| (cfg.limiter().clone(), address)),
        }
    }

    /// Admits operation `id`, or says why not. An id already in flight is replaced by
    /// async-graphql, so it takes no second place.
    fn admit(&mut self, id: &str) -> Result<(), AppError> {
        if !self.db.is_up() {
            return Err(AppError::Unavailable("the database does not answer".into()));
        }
        if !self.in_flight.contains(id) && self.in_flight.len() >= self.max_in_flight {
            return Err(AppError::TooComplex(format!(
                "at most {} operations in flight on one connection; complete one first",
                self.max_in_flight
            )));
        }
        if let Some(l) = &self.connection {
            l.check().map_err(|n| rate_limited(n, l.clock().now()))?;
        }
        if let Some((l, address)) = &self.address {
            l.check_key(address)
                .map_err(|n| rate_limited(n, l.clock().now()))?;
        }
        self.in_flight.insert(id.to_owned());
        Ok(())
    }

    /// Operation `id` completed (or the client stopped it).
    fn finished(&mut self, id: &str) {
        self.in_flight.remove(id);
    }
}

fn rate_limited(not_until: NotUntil<QuantaInstant>, now: QuantaInstant) -> AppError {
    let wait = not_until.wait_time_from(now);
    AppError::RateLimited {
        retry_after: (wait.as_secs_f64().ceil() as u64).max(1),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gate(max_in_flight: usize, burst: u32, address: Option<AddressLimiter>) -> Gate {
        let quota = Quota::per_hour(std::num::NonZeroU32::MIN)
            .allow_burst(std::num::NonZeroU32::new(burst).unwrap_or(std::num::NonZeroU32::MIN));
        Gate {
            db: crate::db::Availability::default(),
            in_flight: HashSet::new(),
            max_in_flight,
            connection: Some(RateLimiter::direct(quota)),
            address: address.map(|l| (l, IpAddr::from([127, 0, 0, 1]))),
        }
    }

    fn code(r: Result<(), AppError>) -> &'static str {
        r.err().map_or("OK", |e| e.code())
    }

    #[test]
    fn the_cap_counts_operations_in_flight() {
        let mut g = gate(2, 100, None);
        assert_eq!(code(g.admit("a")), "OK");
        assert_eq!(code(g.admit("b")), "OK");
        assert_eq!(code(g.admit("c")), "QUERY_TOO_COMPLEX");
        // The same id again replaces its operation and takes no new place.
        assert_eq!(code(g.admit("a")), "OK");
        g.finished("a");
        assert_eq!(code(g.admit("c")), "OK");
    }

    #[test]
    fn operations_are_refused_while_the_database_does_not_answer() {
        let mut g = gate(100, 100, None);
        g.db.set(false);
        assert_eq!(code(g.admit("a")), "UNAVAILABLE");
        g.db.set(true);
        assert_eq!(code(g.admit("a")), "OK");
    }

    #[test]
    fn the_rate_is_limited_per_connection_with_a_retry_time() {
        let mut g = gate(100, 3, None);
        for id in ["a", "b", "c"] {
            assert_eq!(code(g.admit(id)), "OK");
        }
        match g.admit("d") {
            Err(AppError::RateLimited { retry_after }) => {
                assert!((1..=3600).contains(&retry_after), "{retry_after}")
            }
            other => panic!("expected RATE_LIMITED, got {other:?}"),
        }
    }

    #[test]
    fn the_address_bucket_is_shared_by_connections() {
        let quota = Quota::per_hour(std::num::NonZeroU32::MIN)
            .allow_burst(std::num::NonZeroU32::new(2).unwrap_or(std::num::NonZeroU32::MIN));
        let shared: AddressLimiter = Arc::new(RateLimiter::keyed(quota));
        let mut first = gate(100, 100, Some(shared.clone()));
        let mut second = gate(100, 100, Some(shared));
        assert_eq!(code(first.admit("a")), "OK");
        assert_eq!(code(second.admit("a")), "OK");
        assert_eq!(code(second.admit("b")), "RATE_LIMITED");
        assert_eq!(code(first.admit("b")), "RATE_LIMITED");
    }

    #[test]
    fn only_completions_are_read_from_outgoing_messages() {
        assert_eq!(
            completed(r#"{"type":"complete","id":"s1"}"#).as_deref(),
            Some("s1")
        );
        assert_eq!(
            completed(r#"{"type":"next","id":"s1","payload":{"data":{"x":"complete"}}}"#),
            None
        );
    }

    #[test]
    fn a_refusal_names_its_operation_and_code_in_each_protocol() {
        let limited = || AppError::RateLimited { retry_after: 2 };
        let v: serde_json::Value = serde_json::from_str(&refusal(
            WebSocketProtocols::GraphQLWS,
            "q1",
            limited(),
            "r",
        ))
        .unwrap_or_default();
        assert_eq!(v["type"], "error");
        assert_eq!(v["id"], "q1");
        assert_eq!(v["payload"][0]["extensions"]["code"], "RATE_LIMITED");
        assert_eq!(v["payload"][0]["extensions"]["retryAfter"], 2);
        let v: serde_json::Value = serde_json::from_str(&refusal(
            WebSocketProtocols::SubscriptionsTransportWS,
            "q1",
            limited(),
            "r",
        ))
        .unwrap_or_default();
        assert_eq!(v["payload"]["extensions"]["code"], "RATE_LIMITED");
    }
}
