//! The axum router: GraphQL over HTTP and websocket, health, the web client.
//!
//! Authentication happens here, once per request or connection ([`authenticate`]); the
//! schema authorizes per field from the resulting [`RequestCtx`].

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use async_graphql::http::ALL_WEBSOCKET_PROTOCOLS;
use async_graphql::{BatchRequest, BatchResponse, ErrorExtensions, Request};
use async_graphql_axum::{GraphQLProtocol, GraphQLWebSocket};
use axum::Router;
use axum::body::Bytes;
use axum::extract::ws::WebSocketUpgrade;
use axum::extract::{ConnectInfo, DefaultBodyLimit, Query, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use tower_governor::GovernorLayer;
use tower_governor::governor::GovernorConfigBuilder;

use crate::crypto::random_string;
use crate::domain::accounts;
use crate::graphql::mutation::COOKIE;
use crate::graphql::{RequestCtx, Services, VerdictSchema, request_data};

/// Everything the handlers share.
#[derive(Clone)]
pub struct AppState {
    pub schema: VerdictSchema,
    /// For introspection-only operations (deeper depth limit); None when introspection is off.
    pub introspection: Option<VerdictSchema>,
    pub services: Services,
}

pub fn router(state: AppState) -> Router {
    let limits = &state.services.limits;
    let period = Duration::from_nanos(1_000_000_000 / limits.rate_limit_per_second.max(1));
    let governor = GovernorConfigBuilder::default()
        .period(period)
        .burst_size(limits.rate_limit_burst.max(1))
        .finish()
        .map(Arc::new);
    let mut graphql = Router::new()
        .route("/graphql", get(graphql_get).post(graphql_post))
        .layer(DefaultBodyLimit::max(limits.max_body));
    if let Some(cfg) = governor {
        graphql = graphql.layer(GovernorLayer::new(cfg));
    }
    Router::new()
        .merge(graphql)
        .route("/graphql/ws", get(graphql_ws))
        .route("/healthz", get(|| async { "ok" }))
        .route("/readyz", get(readyz))
        .route("/.well-known/verdict-signing-key", get(signing_key))
        .fallback(crate::web::serve)
        .with_state(state)
}

async fn readyz(State(st): State<AppState>) -> Response {
    if st.services.db.is_ready().await {
        (StatusCode::OK, "ready").into_response()
    } else {
        (
            StatusCode::SERVICE_UNAVAILABLE,
            "database unreachable or migrations pending",
        )
            .into_response()
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

/// A response carrying one GraphQL error (for refusals before execution).
fn gql_error(status: StatusCode, code: &str, message: &str) -> Response {
    let body =
        serde_json::json!({ "errors": [{ "message": message, "extensions": { "code": code } }] });
    (
        status,
        [(header::CACHE_CONTROL, "no-store")],
        axum::Json(body),
    )
        .into_response()
}

enum Auth {
    Bearer(String),
    Cookie(String),
    None,
}

fn credential(headers: &HeaderMap) -> Auth {
    if let Some(v) = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
    {
        return Auth::Bearer(v.strip_prefix("Bearer ").unwrap_or(v).trim().to_owned());
    }
    let cookie = headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .find_map(|c| {
            c.trim()
                .strip_prefix(COOKIE)
                .and_then(|r| r.strip_prefix('='))
        })
        .filter(|t| !t.is_empty());
    match cookie {
        Some(t) => Auth::Cookie(t.to_owned()),
        None => Auth::None,
    }
}

/// Builds the request context from the credential, or refuses with 401.
async fn authenticate(
    st: &AppState,
    raw: Option<&str>,
    client: String,
) -> Result<RequestCtx, Response> {
    let request_id = random_string(12);
    let caller = match raw {
        None => None,
        Some(token) => match accounts::authenticate(&st.services.db.conn, token).await {
            Ok(Some(c)) => Some(c),
            Ok(None) => {
                return Err(gql_error(
                    StatusCode::UNAUTHORIZED,
                    "UNAUTHENTICATED",
                    "the token is invalid, expired or revoked",
                ));
            }
            Err(e) => {
                tracing::error!(request_id, error = %e, "authentication failed");
                return Err(gql_error(
                    StatusCode::INTERNAL_SERVER_ERROR,
                    "INTERNAL",
                    &format!("internal error (request id {request_id})"),
                ));
            }
        },
    };
    Ok(RequestCtx::new(request_id, client, caller))
}

fn is_mutation(query: &str) -> bool {
    use async_graphql::parser::types::OperationType;
    match async_graphql::parser::parse_query(query) {
        Ok(doc) => doc
            .operations
            .iter()
            .any(|(_, op)| op.node.ty == OperationType::Mutation),
        Err(_) => false,
    }
}

/// Gives every error a contract code: the limits' errors become QUERY_TOO_COMPLEX, and
/// parse or validation errors (unknown field, wrong variable type) BAD_USER_INPUT.
fn with_codes(mut resp: async_graphql::Response) -> async_graphql::Response {
    for e in resp.errors.iter_mut() {
        let has_code = e
            .extensions
            .as_ref()
            .is_some_and(|x| x.get("code").is_some());
        if has_code {
            continue;
        }
        let m = e.message.to_lowercase();
        let code = if m.contains("too complex")
            || m.contains("too deep")
            || m.contains("directives")
            || m.contains("recursive depth")
        {
            "QUERY_TOO_COMPLEX"
        } else if e.path.is_empty() {
            "BAD_USER_INPUT"
        } else {
            "INTERNAL"
        };
        let ext = e.extensions.get_or_insert_with(Default::default);
        ext.set("code", code);
    }
    resp
}

async fn execute(st: &AppState, rc: RequestCtx, batch: BatchRequest) -> Response {
    let rc = Arc::new(rc);
    let requests: Vec<Request> = match batch {
        BatchRequest::Single(r) => vec![r],
        BatchRequest::Batch(v) => v,
    };
    let single = requests.len() == 1;
    let mut responses = Vec::with_capacity(requests.len());
    let limit = st.services.limits.request_timeout();
    for mut req in requests {
        req.data = request_data(&st.services, rc.clone());
        let schema = match &st.introspection {
            Some(i) if crate::graphql::is_introspection_only(&req.query) => i,
            _ => &st.schema,
        };
        let resp = match tokio::time::timeout(limit, schema.execute(req)).await {
            Ok(r) => with_codes(r),
            Err(_) => {
                let err = async_graphql::Error::new(format!(
                    "the request took longer than {} s",
                    limit.as_secs()
                ))
                .extend_with(|_, e| e.set("code", "QUERY_TOO_COMPLEX"));
                async_graphql::Response::from_errors(vec![
                    err.into_server_error(Default::default()),
                ])
            }
        };
        responses.push(resp);
    }
    let mut headers = HeaderMap::new();
    for r in &responses {
        for (k, v) in r.http_headers.iter() {
            headers.append(k, v.clone());
        }
    }
    let body = if single {
        BatchResponse::Single(responses.remove(0))
    } else {
        BatchResponse::Batch(responses)
    };
    headers.insert(
        header::CACHE_CONTROL,
        HeaderValue::from_static("private, no-store"),
    );
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    let json = serde_json::to_vec(&body).unwrap_or_else(|_| b"{}".to_vec());
    (StatusCode::OK, headers, json).into_response()
}

async fn graphql_post(
    State(st): State<AppState>,
    ConnectInfo(addr): ConnectInfo<SocketAddr>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let json_type = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .map(|v| {
            v.split(';')
                .next()
                .unwrap_or("")
                .trim()
                .eq_ignore_ascii_case("application/json")
        })
        .unwrap_or(false);
    if !json_type {
        return gql_error(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "BAD_USER_INPUT",
            "send GraphQL as a POST with Content-Type: application/json",
        );
    }
    let batch: BatchRequest = match serde_json::from_slice(&body) {
        Ok(b) => b,
        Err(e) => {
            return gql_error(
                StatusCode::BAD_REQUEST,
                "BAD_USER_INPUT",
                &format!("the body is not a GraphQL request: {e}"),
            );
        }
    };
    let max = st.services.limits.max_batch;
    if let BatchRequest::Batch(v) = &batch {
        if v.len() > max {
            return gql_error(
                StatusCode::BAD_REQUEST,
                "QUERY_TOO_COMPLEX",
                &format!("at most {max} operations per batch"),
            );
        }
        if v.is_empty() {
            return gql_error(
                StatusCode::BAD_REQUEST,
                "BAD_USER_INPUT",
                "the batch is empty",
            );
        }
    }
    let (raw, by_cookie) = match credential(&headers) {
        Auth::Bearer(t) => (Some(t), false),
        Auth::Cookie(t) => (Some(t), true),
        Auth::None => (None, false),
    };
    let csrf_ok = headers.get("x-verdict-csrf").is_some_and(|v| v == "1");
    if by_cookie
        && !csrf_ok
        && match &batch {
            BatchRequest::Single(r) => is_mutation(&r.query),
            BatchRequest::Batch(v) => v.iter().any(|r| is_mutation(&r.query)),
        }
    {
        return gql_error(
            StatusCode::FORBIDDEN,
            "FORBIDDEN",
            "cookie-authenticated mutations need the header X-Verdict-Csrf: 1",
        );
    }
    let rc = match authenticate(&st, raw.as_deref(), addr.ip().to_string()).await {
        Ok(rc) => rc,
        Err(resp) => return resp,
    };
    execute(&st, rc, batch).await
}

/// GET runs queries (never mutations); without a `query` parameter it is the playground.
async fn graphql_get(
    State(st): State<AppState>,
    ConnectInfo(addr): ConnectInfo<SocketAddr>,
    headers: HeaderMap,
    Query(params): Query<HashMap<String, String>>,
) -> Response {
    let Some(query) = params.get("query") else {
        return crate::web::playground().into_response();
    };
    if is_mutation(query) {
        return gql_error(
            StatusCode::METHOD_NOT_ALLOWED,
            "BAD_USER_INPUT",
            "mutations are only accepted over POST",
        );
    }
    let mut req = Request::new(query.clone());
    if let Some(v) = params.get("variables") {
        match serde_json::from_str(v) {
            Ok(vars) => req = req.variables(async_graphql::Variables::from_json(vars)),
            Err(_) => {
                return gql_error(
                    StatusCode::BAD_REQUEST,
                    "BAD_USER_INPUT",
                    "variables is not JSON",
                );
            }
        }
    }
    if let Some(op) = params.get("operationName") {
        req = req.operation_name(op.clone());
    }
    let raw = match credential(&headers) {
        Auth::Bearer(t) | Auth::Cookie(t) => Some(t),
        Auth::None => None,
    };
    let rc = match authenticate(&st, raw.as_deref(), addr.ip().to_string()).await {
        Ok(rc) => rc,
        Err(resp) => return resp,
    };
    execute(&st, rc, BatchRequest::Single(req)).await
}

/// Subscriptions (graphql-transport-ws and graphql-ws). The connection authenticates once,
/// in `connection_init`, with `{"authorization": "Bearer ..."}`.
async fn graphql_ws(
    State(st): State<AppState>,
    ConnectInfo(addr): ConnectInfo<SocketAddr>,
    protocol: GraphQLProtocol,
    upgrade: WebSocketUpgrade,
) -> Response {
    upgrade
        .protocols(ALL_WEBSOCKET_PROTOCOLS)
        .on_upgrade(move |socket| {
            let schema = st.schema.clone();
            GraphQLWebSocket::new(socket, schema, protocol)
                .on_connection_init(move |payload: serde_json::Value| async move {
                    let token = payload
                        .get("authorization")
                        .or_else(|| payload.get("Authorization"))
                        .and_then(|v| v.as_str())
                        .map(|v| v.strip_prefix("Bearer ").unwrap_or(v).trim().to_owned());
                    let rc = authenticate(&st, token.as_deref(), addr.ip().to_string())
                        .await
                        .map_err(|_| {
                            async_graphql::Error::new("the token is invalid, expired or revoked")
                        })?;
                    Ok(request_data(&st.services, Arc::new(rc)))
                })
                .serve()
        })
}
