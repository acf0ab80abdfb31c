//! The axum router: GraphQL over HTTP and websocket, health, the signing key, the web
//! client.
//!
//! - [`auth`]: the one [`Caller`](auth::Caller) extractor; authentication happens there,
//!   once per request or websocket connection, and the schema authorizes per field from
//!   the resulting `RequestCtx`.
//! - [`graphql`]: the `/graphql` handlers (POST, GET) and batch execution.
//! - [`ws`]: the `/graphql/ws` websocket, held to the same limits and to revocations.
//! - [`embed`]: `/embed/{slug}` and `/embed.js`, the gallery other sites may frame; every
//!   other response says `X-Frame-Options: DENY`.
//! - [`observe`]: request ids (`x-request-id`), one log line per request, the HTTP
//!   metrics, and `GET /metrics`.

use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::extract::{DefaultBodyLimit, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use governor::middleware::NoOpMiddleware;
use tower_governor::GovernorLayer;
use tower_governor::governor::{GovernorConfig, GovernorConfigBuilder};
use tower_http::set_header::SetResponseHeaderLayer;
use tower_http::trace::TraceLayer;

use crate::config::Limits;
use crate::graphql::{Services, VerdictSchema};

pub mod assets;
pub mod auth;
pub mod client;
pub mod embed;
pub mod graphql;
pub mod observe;
pub mod ws;

/// Everything the handlers share.
#[derive(Clone)]
pub struct AppState {
    pub schema: VerdictSchema,
    pub services: Services,
    /// The request rate limit per client address: the `/graphql` layer's buckets, which
    /// websocket operations draw from too. `None` when the rate is unlimited.
    pub rate_limit: Option<Arc<GovernorConfig<client::ClientIp, NoOpMiddleware>>>,
    /// Tells open websockets that the server is stopping.
    pub shutdown: Shutdown,
    /// Where the web client's files come from.
    pub client: assets::ClientFiles,
    /// Query texts that clients name by their hash (`graphql::PersistedQueries`).
    pub persisted: Arc<graphql::PersistedQueries>,
    /// Answers shared by anonymous requests while nothing is committed
    /// (`graphql::SharedAnswers`).
    pub shared: Arc<graphql::SharedAnswers>,
    /// What `GET /metrics` serves, and to whom; `None`: this process records no metrics
    /// (the endpoint answers 404).
    pub metrics: Option<Arc<observe::Exporter>>,
}

/// The server is stopping. HTTP requests in flight are finished by axum's graceful
/// shutdown; websockets are long-lived and would hold it up (or be cut without a close
/// frame), so each one closes itself with 1001 ("going away") when [`Shutdown::begin`] is
/// called, and [`Shutdown::closed`] waits until they have.
#[derive(Clone)]
pub struct Shutdown(Arc<tokio::sync::watch::Sender<bool>>);

impl Default for Shutdown {
    fn default() -> Self {
        Shutdown(Arc::new(tokio::sync::watch::channel(false).0))
    }
}

impl Shutdown {
    /// Every open websocket (and any opened from now on) closes with 1001.
    pub fn begin(&self) {
        self.0.send_replace(true);
    }

    /// Resolves once shutdown has begun.
    pub fn stopping(&self) -> impl std::future::Future<Output = ()> + Send + 'static {
        let mut rx = self.0.subscribe();
        async move {
            // Err: the sender is gone, so is the server.
            let _ = rx.wait_for(|stopping| *stopping).await;
        }
    }

    /// Held by a websocket for its whole life, its close included: [`Shutdown::closed`]
    /// waits until every one is dropped. (The [`Shutdown::stopping`] future lets go of the
    /// server once it has resolved, before the close frame is out.)
    pub fn open(&self) -> Open {
        Open {
            _held: self.0.subscribe(),
        }
    }

    /// Waits until every websocket has closed.
    pub async fn closed(&self) {
        self.0.closed().await;
    }
}

/// An open websocket, as [`Shutdown::closed`] counts it.
pub struct Open {
    _held: tokio::sync::watch::Receiver<bool>,
}

impl AppState {
    pub fn new(schema: VerdictSchema, services: Services) -> AppState {
        let limits = &services.limits;
        let (period, burst) = request_rate(limits);
        let rate_limit = GovernorConfigBuilder::default()
            .key_extractor(client::ClientIp {
                trusted: Arc::new(limits.trusted_proxies.clone()),
            })
            .period(period)
            .burst_size(burst)
            .finish()
            .map(Arc::new);
        AppState {
            schema,
            services,
            rate_limit,
            shutdown: Shutdown::default(),
            client: assets::ClientFiles::default(),
            persisted: Arc::default(),
            shared: Arc::default(),
            metrics: None,
        }
    }
}

/// The request rate limit as a token bucket: one token every period, at most `burst`.
fn request_rate(limits: &Limits) -> (Duration, u32) {
    let period = Duration::from_nanos(1_000_000_000 / limits.rate_limit_per_second.max(1));
    (period, limits.rate_limit_burst.max(1))
}

pub fn router(state: AppState) -> Router {
    let limits = &state.services.limits;
    let mut gql = Router::new()
        .route("/graphql", get(graphql::get).post(graphql::post))
        .layer(DefaultBodyLimit::max(limits.max_body));
    if let Some(cfg) = state.rate_limit.clone() {
        gql = gql.layer(GovernorLayer::new(cfg).error_handler(rate_limited));
    }
    // Only the embeddable gallery may be framed; it is merged after the layer that says so
    // for everything else (a layer wraps the routes added before it).
    let frameable = Router::new()
        .route("/embed/{slug}", get(embed::gallery))
        .route("/embed.js", get(embed::loader));
    // Served over TLS: browsers must never come back over plain HTTP (a year, as the
    // HSTS preload list asks; no `includeSubDomains`, other hosts are not ours to bind).
    let hsts = state
        .services
        .served_over_tls
        .then(|| HeaderValue::from_static("max-age=31536000"));
    Router::new()
        .merge(gql)
        .route("/graphql/ws", get(ws::handler))
        .route("/healthz", get(|| async { "ok" }))
        .route("/readyz", get(readyz))
        .route("/.well-known/verdict-signing-key", get(signing_key))
        .route("/metrics", get(observe::metrics))
        .fallback(assets::serve)
        .layer(SetResponseHeaderLayer::overriding(
            header::X_FRAME_OPTIONS,
            HeaderValue::from_static("DENY"),
        ))
        .merge(frameable)
        .layer(SetResponseHeaderLayer::overriding(
            header::STRICT_TRANSPORT_SECURITY,
            hsts,
        ))
        // One log line per request, in a span that carries its id: inside `identify`,
        // which gives the id (and, wrapping each route, sees the matched path).
        .layer(
            TraceLayer::new_for_http()
                .make_span_with(observe::span)
                .on_request(())
                .on_response(observe::answered)
                .on_body_chunk(())
                .on_eos(())
                .on_failure(()),
        )
        .layer(axum::middleware::from_fn(observe::identify))
        .with_state(state)
}

/// How long `/readyz` waits for the database before saying it is not ready.
const READY_WITHIN: Duration = Duration::from_secs(3);

/// 200 when this process can serve: the database answers (see
/// [`crate::db::Availability`]), within [`READY_WITHIN`], and every migration this binary
/// knows is applied; 503 otherwise, at once while the database is known to be down. A
/// SQLite database that cannot write (disk full, read-only file) still serves reads, so it
/// stays ready; its writes are refused with UNAVAILABLE.
async fn readyz(State(st): State<AppState>) -> Response {
    let db = &st.services.db;
    let not_ready = |why: &'static str| {
        (
            StatusCode::SERVICE_UNAVAILABLE,
            [(
                header::RETRY_AFTER,
                HeaderValue::from(crate::error::UNAVAILABLE_RETRY_AFTER),
            )],
            why,
        )
            .into_response()
    };
    let ready = tokio::select! {
        biased;
        () = db.availability().down() => None,
        r = tokio::time::timeout(READY_WITHIN, db.is_ready()) => r.ok(),
    };
    match ready {
        Some(true) => (StatusCode::OK, "ready").into_response(),
        Some(false) => not_ready("database unreachable or migrations pending"),
        None => not_ready("database unreachable"),
    }
}

/// Serves a request unless the database goes away first: then the request is answered at
/// once with UNAVAILABLE ([`unavailable`]) rather than after the pool's 30 s wait for a
/// connection that will not come. What it had begun is dropped: a transaction without its
/// commit rolls back (the database is gone with it). A commit already on its way when the
/// database went away may have happened, as after any lost connection; a client retrying
/// with the same idempotency key gets the one result.
pub(crate) async fn while_available(
    st: &AppState,
    request_id: &str,
    answer: impl std::future::Future<Output = Response>,
) -> Response {
    tokio::select! {
        biased;
        r = answer => r,
        () = st.services.db.availability().down() => {
            tracing::warn!(request_id, "the database went away while this request was served");
            unavailable(request_id)
        }
    }
}

/// The public key (PEM) with its fingerprint in `X-Signing-Key-Fingerprint`.
async fn signing_key(State(st): State<AppState>) -> Response {
    let public = st.services.signer.public();
    let fingerprint =
        HeaderValue::from_str(&public.fingerprint()).unwrap_or(HeaderValue::from_static(""));
    (
        [
            (
                header::CONTENT_TYPE,
                HeaderValue::from_static("application/x-pem-file"),
            ),
            (
                header::HeaderName::from_static("x-signing-key-fingerprint"),
                fingerprint,
            ),
            (
                header::CACHE_CONTROL,
                HeaderValue::from_static("public, max-age=300"),
            ),
        ],
        public.to_pem(),
    )
        .into_response()
}

/// The rate limiter's refusal, as a GraphQL error like every other: 429 with
/// `RATE_LIMITED`, `retryAfter` seconds and the `Retry-After` header. The limiter hands
/// its error handler nothing of the request, so this one error names its request only in
/// the `x-request-id` header.
fn rate_limited(e: tower_governor::GovernorError) -> Response {
    let (status, retry_after) = match e {
        tower_governor::GovernorError::TooManyRequests { wait_time, .. } => {
            (StatusCode::TOO_MANY_REQUESTS, wait_time.max(1))
        }
        _ => (StatusCode::TOO_MANY_REQUESTS, 1),
    };
    let body = serde_json::json!({ "errors": [{
        "message": format!("too many requests; retry in {retry_after} seconds"),
        "extensions": { "code": "RATE_LIMITED", "retryAfter": retry_after },
    }] });
    (
        status,
        [
            (header::CACHE_CONTROL, HeaderValue::from_static("no-store")),
            (
                header::RETRY_AFTER,
                HeaderValue::from_str(&retry_after.to_string())
                    .unwrap_or(HeaderValue::from_static("1")),
            ),
        ],
        axum::Json(body),
    )
        .into_response()
}

/// The refusal of a request the database cannot serve (see [`crate::db::Availability`]):
/// 503 with `Retry-After`, and the GraphQL error UNAVAILABLE with `extensions.retryAfter`,
/// as the rate limiter's 429 carries RATE_LIMITED.
pub(crate) fn unavailable(request_id: &str) -> Response {
    let retry_after = crate::error::UNAVAILABLE_RETRY_AFTER;
    let body = serde_json::json!({ "errors": [{
        "message": crate::graphql::error::unavailable_message(request_id),
        "extensions": { "code": "UNAVAILABLE", "requestId": request_id, "retryAfter": retry_after },
    }] });
    (
        StatusCode::SERVICE_UNAVAILABLE,
        [
            (header::CACHE_CONTROL, HeaderValue::from_static("no-store")),
            (header::RETRY_AFTER, HeaderValue::from(retry_after)),
        ],
        axum::Json(body),
    )
        .into_response()
}

/// A response carrying one GraphQL error (for refusals before execution), naming the
/// request like every error does.
fn gql_error(status: StatusCode, code: &str, message: &str, request_id: &str) -> Response {
    let body = serde_json::json!({ "errors": [{
        "message": message,
        "extensions": { "code": code, "requestId": request_id },
    }] });
    (
        status,
        [(header::CACHE_CONTROL, "no-store")],
        axum::Json(body),
    )
        .into_response()
}
