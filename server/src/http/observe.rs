//! Request ids, request logs, HTTP metrics, and `GET /metrics`.
//!
//! - [`identify`], the outermost layer, gives every request an id of its own (never one a
//!   client sent), answers it in `x-request-id`, and records the request in
//!   `verdict_http_request_duration_seconds` by matched route and status class. The same
//!   id is the request's `RequestCtx::request_id`: internal-error messages and every
//!   GraphQL error's `extensions.requestId` name it.
//! - tower-http's `TraceLayer`, inside it, writes one log line per request when it is
//!   answered: the `request` span ([`span`]: `request_id`, `method`, `path` without its
//!   query string and with link tokens cut out, `operation` once the GraphQL extension
//!   knows it) and the event ([`answered`]: `status`, `latency_ms`). Headers and bodies
//!   are never logged, so neither are passwords, tokens or cookies.
//! - [`metrics`] serves the Prometheus text: with `--metrics-token`, only to requests
//!   carrying `Authorization: Bearer` that token (401 otherwise); without it, only to a
//!   loopback peer whose request no proxy forwarded (403 otherwise; see [`Exporter`]).

use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::extract::{ConnectInfo, MatchedPath, Request, State};
use axum::http::{HeaderMap, HeaderName, HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use metrics_exporter_prometheus::PrometheusHandle;
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;
use tracing::Span;

use super::AppState;
use crate::crypto::random_string;

/// The response header that carries the request id.
pub const REQUEST_ID_HEADER: HeaderName = HeaderName::from_static("x-request-id");

/// The id of one HTTP request (a websocket's is its upgrade request's), in the request's
/// extensions.
#[derive(Clone, Debug)]
pub struct RequestId(pub Arc<str>);

/// Gives the request its id, answers it in `x-request-id` and records the request in the
/// HTTP metrics.
pub async fn identify(mut req: Request, next: Next) -> Response {
    let id = RequestId(random_string(12).into());
    let route = req
        .extensions()
        .get::<MatchedPath>()
        .map(|p| p.as_str().to_owned());
    req.extensions_mut().insert(id.clone());
    let started = Instant::now();
    let mut resp = next.run(req).await;
    crate::metrics::http_request(
        route.as_deref().unwrap_or("other"),
        resp.status(),
        started.elapsed(),
    );
    if let Ok(value) = HeaderValue::from_str(&id.0) {
        resp.headers_mut().insert(REQUEST_ID_HEADER, value);
    }
    resp
}

/// The span of one request's log line.
pub fn span<B>(req: &axum::http::Request<B>) -> Span {
    let id = req
        .extensions()
        .get::<RequestId>()
        .map_or("-", |id| id.0.as_ref());
    tracing::info_span!(
        "request",
        request_id = %id,
        method = %req.method(),
        path = %loggable_path(req.uri().path()),
        operation = tracing::field::Empty,
    )
}

/// The log line of an answered request (in its span).
pub fn answered<B>(resp: &axum::http::Response<B>, latency: Duration, _span: &Span) {
    tracing::info!(
        status = resp.status().as_u16(),
        latency_ms = (latency.as_secs_f64() * 1e5).round() / 100.0,
        "answered"
    );
}

/// A path as it may be logged: the web client's link pages carry a secret in their last
/// segment (`/invite/{token}`, `/reset/{token}`, `/confirm/{token}`, `/join/{code}`),
/// which is cut out. The query string is never part of it.
pub fn loggable_path(path: &str) -> std::borrow::Cow<'_, str> {
    for prefix in ["/invite/", "/reset/", "/confirm/", "/join/"] {
        if path.starts_with(prefix) && path.len() > prefix.len() {
            return format!("{prefix}…").into();
        }
    }
    path.into()
}

/// The metrics endpoint's recorder and who may read it.
pub struct Exporter {
    handle: PrometheusHandle,
    /// The SHA-256 of `--metrics-token`: compared in constant time with the SHA-256 of
    /// the presented token, so neither the token's bytes nor its length leak by timing.
    token: Option<[u8; 32]>,
}

impl Exporter {
    /// Without a token, only a scraper on this machine reads the metrics: a loopback peer
    /// whose request carries no proxy header. A reverse proxy on the same machine that
    /// says whom it forwards for (`Forwarded`, `X-Forwarded-For`, `X-Real-IP`) is refused;
    /// one that says nothing cannot be told from a local scraper, so behind such a proxy
    /// set `--metrics-token` (or do not route `/metrics`).
    pub fn new(handle: PrometheusHandle, token: Option<&str>) -> Exporter {
        Exporter {
            handle,
            token: token.map(|t| Sha256::digest(t.as_bytes()).into()),
        }
    }

    /// The refusal of a scrape from `peer` with `headers`, if it is one.
    fn refusal(&self, peer: IpAddr, headers: &HeaderMap) -> Option<Response> {
        match &self.token {
            Some(expected) => {
                let presented = headers
                    .get(header::AUTHORIZATION)
                    .and_then(|v| v.to_str().ok())
                    .and_then(|v| v.strip_prefix("Bearer "))
                    .map(|t| Sha256::digest(t.trim().as_bytes()));
                let ok = presented.is_some_and(|p| bool::from(p.as_slice().ct_eq(expected)));
                (!ok).then(|| {
                    (
                        StatusCode::UNAUTHORIZED,
                        [(header::WWW_AUTHENTICATE, "Bearer realm=\"metrics\"")],
                        "metrics need Authorization: Bearer with the metrics token\n",
                    )
                        .into_response()
                })
            }
            None => {
                let forwarded = ["forwarded", "x-forwarded-for", "x-real-ip"]
                    .iter()
                    .any(|h| headers.contains_key(*h));
                (!peer.to_canonical().is_loopback() || forwarded).then(|| {
                    (
                        StatusCode::FORBIDDEN,
                        "metrics are served to this machine only; set --metrics-token to \
                         scrape from elsewhere\n",
                    )
                        .into_response()
                })
            }
        }
    }
}

/// `GET /metrics`: the Prometheus text, with the database gauges read now.
pub(super) async fn metrics(
    State(st): State<AppState>,
    ConnectInfo(peer): ConnectInfo<SocketAddr>,
    headers: HeaderMap,
) -> Response {
    let Some(exporter) = &st.metrics else {
        return (StatusCode::NOT_FOUND, "metrics are off in this process\n").into_response();
    };
    if let Some(refused) = exporter.refusal(peer.ip(), &headers) {
        return refused;
    }
    // A database that does not answer leaves its gauges as they were; the rest is served.
    if let Err(e) = crate::metrics::sample(&st.services.db).await {
        tracing::warn!(error = %e, "metrics: the database gauges could not be read");
    }
    exporter.handle.run_upkeep();
    (
        [
            (
                header::CONTENT_TYPE,
                "text/plain; version=0.0.4; charset=utf-8",
            ),
            (header::CACHE_CONTROL, "no-store"),
        ],
        exporter.handle.render(),
    )
        .into_response()
}

#[cfg(test)]
mod tests {
    use metrics_exporter_prometheus::PrometheusBuilder;

    use super::*;

    fn status(exporter: &Exporter, peer: &str, headers: &[(&'static str, &str)]) -> u16 {
        let mut h = HeaderMap::new();
        for (k, v) in headers {
            h.insert(
                *k,
                HeaderValue::from_str(v).unwrap_or(HeaderValue::from_static("")),
            );
        }
        let peer: IpAddr = peer.parse().unwrap_or(IpAddr::from([0, 0, 0, 0]));
        exporter
            .refusal(peer, &h)
            .map_or(200, |r| r.status().as_u16())
    }

    #[test]
    fn who_may_scrape() {
        let handle = || PrometheusBuilder::new().build_recorder().handle();
        let local = Exporter::new(handle(), None);
        assert_eq!(status(&local, "127.0.0.1", &[]), 200);
        assert_eq!(status(&local, "::1", &[]), 200);
        assert_eq!(status(&local, "::ffff:127.0.0.1", &[]), 200);
        assert_eq!(status(&local, "10.0.0.1", &[]), 403);
        assert_eq!(
            status(&local, "127.0.0.1", &[("x-forwarded-for", "127.0.0.1")]),
            403
        );
        let token = Exporter::new(handle(), Some("s3cret"));
        assert_eq!(
            status(&token, "10.0.0.1", &[("authorization", "Bearer s3cret")]),
            200
        );
        assert_eq!(status(&token, "127.0.0.1", &[]), 401);
        assert_eq!(
            status(&token, "127.0.0.1", &[("authorization", "Bearer s3cre")]),
            401
        );
        assert_eq!(
            status(&token, "127.0.0.1", &[("authorization", "s3cret")]),
            401
        );
    }

    #[test]
    fn link_tokens_are_cut_from_logged_paths() {
        assert_eq!(loggable_path("/invite/abcDEF123"), "/invite/…");
        assert_eq!(loggable_path("/reset/abc"), "/reset/…");
        assert_eq!(loggable_path("/confirm/abc"), "/confirm/…");
        assert_eq!(loggable_path("/join/CODE"), "/join/…");
        assert_eq!(loggable_path("/e/spring/projects"), "/e/spring/projects");
        assert_eq!(loggable_path("/graphql"), "/graphql");
    }
}
