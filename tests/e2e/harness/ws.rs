//! The websocket client: a graphql-transport-ws connection to /graphql/ws, with the
//! handshake done and pings answered.

use std::time::Duration;

use futures_util::{SinkExt, StreamExt};
use serde_json::{Value, json};
use tokio_tungstenite::MaybeTlsStream;
use tokio_tungstenite::tungstenite::{Message, client::IntoClientRequest, http::HeaderValue};

use super::App;

impl App {
    /// Open a graphql-transport-ws connection to /graphql/ws and complete the handshake.
    pub async fn ws(&self, init_payload: Value) -> Ws {
        self.ws_with_headers(init_payload, &[]).await
    }

    /// [`App::ws`] with extra headers on the upgrade request (`Cookie`, `Origin`), as a
    /// browser sends them.
    pub async fn ws_with_headers(&self, init_payload: Value, headers: &[(&str, &str)]) -> Ws {
        let mut ws = self.ws_unacknowledged(init_payload, headers).await;
        let ack = ws
            .next_json(Duration::from_secs(10))
            .await
            .expect("connection_ack");
        assert_eq!(ack["type"], "connection_ack", "handshake: {ack}");
        ws
    }

    /// [`App::ws`] over a socket whose kernel receive buffer is `bytes` (`SO_RCVBUF`, set
    /// before connecting so that the window the server sees stays that small): a client
    /// that stops reading stops the server's writes after a few kilobytes.
    pub async fn ws_with_receive_buffer(&self, init_payload: Value, bytes: u32) -> Ws {
        let socket = tokio::net::TcpSocket::new_v4().expect("socket");
        socket.set_recv_buffer_size(bytes).expect("SO_RCVBUF");
        let tcp = socket
            .connect(([127, 0, 0, 1], self.port).into())
            .await
            .expect("connect to the server");
        let mut ws = self.handshake(init_payload, &[], Some(tcp)).await;
        let ack = ws
            .next_json(Duration::from_secs(10))
            .await
            .expect("connection_ack");
        assert_eq!(ack["type"], "connection_ack", "handshake: {ack}");
        ws
    }

    /// Opens /graphql/ws and sends `connection_init`, without waiting for the server's
    /// answer (which may be a refusal).
    pub async fn ws_unacknowledged(&self, init_payload: Value, headers: &[(&str, &str)]) -> Ws {
        self.handshake(init_payload, headers, None).await
    }

    /// Upgrades `tcp` (or a new connection) to /graphql/ws and sends `connection_init`.
    async fn handshake(
        &self,
        init_payload: Value,
        headers: &[(&str, &str)],
        tcp: Option<tokio::net::TcpStream>,
    ) -> Ws {
        let mut req = format!("ws://127.0.0.1:{}/graphql/ws", self.port)
            .into_client_request()
            .expect("ws request");
        req.headers_mut().insert(
            "Sec-WebSocket-Protocol",
            HeaderValue::from_static("graphql-transport-ws"),
        );
        for (name, value) in headers {
            req.headers_mut().insert(
                tokio_tungstenite::tungstenite::http::HeaderName::from_bytes(name.as_bytes())
                    .expect("header name"),
                HeaderValue::from_str(value).expect("header value"),
            );
        }
        let connected = match tcp {
            Some(tcp) => tokio_tungstenite::client_async(req, MaybeTlsStream::Plain(tcp)).await,
            None => tokio_tungstenite::connect_async(req).await,
        };
        let (mut stream, resp) =
            connected.unwrap_or_else(|e| panic!("websocket connect to /graphql/ws: {e}"));
        assert_eq!(
            resp.headers()
                .get("sec-websocket-protocol")
                .and_then(|v| v.to_str().ok()),
            Some("graphql-transport-ws"),
            "the server accepts the graphql-transport-ws subprotocol"
        );
        stream
            .send(ws_text(
                json!({ "type": "connection_init", "payload": init_payload }),
            ))
            .await
            .expect("send connection_init");
        Ws { stream }
    }
}

fn ws_text(v: Value) -> Message {
    Message::Text(v.to_string().into())
}

/// A graphql-transport-ws client connection.
pub struct Ws {
    pub stream: tokio_tungstenite::WebSocketStream<MaybeTlsStream<tokio::net::TcpStream>>,
}

impl Ws {
    pub async fn send(&mut self, v: Value) {
        self.stream.send(ws_text(v)).await.expect("websocket send");
    }

    pub async fn subscribe(&mut self, id: &str, query: &str, vars: Value) {
        self.send(json!({ "id": id, "type": "subscribe", "payload": { "query": query, "variables": vars } }))
            .await;
    }

    /// The next JSON message that is not a ping (pings are answered), or `None` on
    /// timeout or close.
    pub async fn next_json(&mut self, within: Duration) -> Option<Value> {
        let deadline = tokio::time::Instant::now() + within;
        loop {
            let msg = tokio::time::timeout_at(deadline, self.stream.next())
                .await
                .ok()??;
            let msg = msg.ok()?;
            match msg {
                Message::Text(t) => {
                    let v: Value = serde_json::from_str(t.as_str()).ok()?;
                    if v["type"] == "ping" {
                        self.send(json!({ "type": "pong" })).await;
                        continue;
                    }
                    return Some(v);
                }
                Message::Close(_) => return None,
                _ => continue,
            }
        }
    }

    /// Reads until the server ends the connection: the JSON messages before that (pings
    /// answered), and the close code (`None` when it ended without a close frame, e.g.
    /// with a connection error). Panics if the connection is still open after `within`.
    pub async fn until_closed(&mut self, within: Duration) -> (Vec<Value>, Option<u16>) {
        let deadline = tokio::time::Instant::now() + within;
        let mut messages = vec![];
        loop {
            let msg = tokio::time::timeout_at(deadline, self.stream.next())
                .await
                .unwrap_or_else(|_| {
                    panic!("the connection is still open after {within:?}; read {messages:?}")
                });
            match msg {
                Some(Ok(Message::Text(t))) => {
                    let v: Value = serde_json::from_str(t.as_str()).unwrap_or(Value::Null);
                    if v["type"] == "ping" {
                        self.send(json!({ "type": "pong" })).await;
                    } else {
                        messages.push(v);
                    }
                }
                Some(Ok(Message::Close(frame))) => {
                    return (messages, frame.map(|f| u16::from(f.code)));
                }
                Some(Ok(_)) => continue,
                Some(Err(_)) | None => return (messages, None),
            }
        }
    }
}

/// The errors of a websocket answer: an `error` message's payload (a list, or one error in
/// the legacy protocol) or the errors a `next` carries.
pub fn ws_errors(msg: &Value) -> Vec<Value> {
    let errors = if msg["type"] == "error" {
        &msg["payload"]
    } else {
        &msg["payload"]["errors"]
    };
    match errors {
        Value::Array(v) => v.clone(),
        Value::Null => vec![],
        one => vec![one.clone()],
    }
}

/// The first error's `extensions.code` of a websocket answer, `"none"` without errors.
pub fn ws_code(msg: &Value) -> String {
    ws_errors(msg)
        .first()
        .and_then(|e| e["extensions"]["code"].as_str())
        .unwrap_or("none")
        .to_string()
}
