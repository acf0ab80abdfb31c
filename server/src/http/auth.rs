//! Authentication, once per request or websocket connection: the [`Caller`] extractor
//! reads who is calling (bearer token or session cookie, client address) and
//! [`Caller::authenticate`] turns it into the [`RequestCtx`] the schema authorizes from.
//! The CSRF rule for cookie-authenticated mutations lives here too.
//!
//! Extracting reads the request only; the database is asked in `authenticate`, which the
//! handlers call once the request itself is acceptable, so a refused request (wrong
//! content type, mutation over GET, missing CSRF header) costs no lookup and an invalid
//! cookie does not hide the playground.

use std::net::SocketAddr;

use async_graphql::BatchRequest;
use axum::extract::{ConnectInfo, FromRequestParts};
use axum::http::request::Parts;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};

use super::graphql::is_mutation;
use super::observe::RequestId;
use super::{AppState, gql_error};
use crate::crypto::random_string;
use crate::domain::accounts;
use crate::graphql::mutation::COOKIE;
use crate::graphql::{RequestCtx, Services};

/// The header a cookie-authenticated mutation must carry. A cross-site form or `fetch`
/// can make the browser send the cookie, but not this header.
const CSRF_HEADER: &str = "x-verdict-csrf";

/// Who is calling, as the request says: not yet checked against the database.
pub struct Caller {
    /// The request's id (`observe::identify`); a websocket's is its upgrade request's.
    pub request_id: String,
    credential: Credential,
    client: String,
    csrf_header: bool,
    /// The request's `Origin` is this server's own (see [`same_origin`]).
    same_origin: bool,
}

enum Credential {
    Bearer(String),
    Cookie(String),
    None,
}

impl FromRequestParts<AppState> for Caller {
    type Rejection = Response;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, Response> {
        let ConnectInfo(addr) = ConnectInfo::<SocketAddr>::from_request_parts(parts, state)
            .await
            .map_err(IntoResponse::into_response)?;
        let trusted = &state.services.limits.trusted_proxies;
        // Every routed request has one; a router built without `identify` gets a fresh id.
        let request_id = parts
            .extensions
            .get::<RequestId>()
            .map_or_else(|| random_string(12), |id| id.0.to_string());
        Ok(Caller {
            request_id,
            credential: credential(&parts.headers),
            client: super::client::client_ip(addr.ip(), &parts.headers, trusted).to_string(),
            csrf_header: parts.headers.get(CSRF_HEADER).is_some_and(|v| v == "1"),
            same_origin: same_origin(&parts.headers),
        })
    }
}

impl Caller {
    /// The caller of a websocket connection: the credential comes from the
    /// `connection_init` payload (`{"authorization": "Bearer ..."}`). Without one, the
    /// session cookie of the upgrade request counts only when the request came from this
    /// server's own pages (its `Origin` is this server): a browser sends cookies on
    /// upgrades whichever site opened the socket, so another site's page gets an anonymous
    /// socket, while the web client's socket is its signed-in user's.
    pub fn with_init_payload(self, payload: &serde_json::Value) -> Caller {
        let token = payload
            .get("authorization")
            .or_else(|| payload.get("Authorization"))
            .and_then(|v| v.as_str())
            .map(|v| v.strip_prefix("Bearer ").unwrap_or(v).trim().to_owned());
        let credential = match (token, self.credential) {
            (Some(token), _) => Credential::Bearer(token),
            (None, Credential::Cookie(c)) if self.same_origin => Credential::Cookie(c),
            (None, _) => Credential::None,
        };
        Caller {
            credential,
            csrf_header: false,
            ..self
        }
    }

    /// The refusal (403) of a cookie-authenticated batch containing a mutation without the
    /// CSRF header, if this is one. Browsers do not send bearer tokens on their own, so
    /// those need no header.
    pub fn csrf_refusal(&self, batch: &BatchRequest) -> Option<Response> {
        let by_cookie = matches!(self.credential, Credential::Cookie(_));
        let mutates = || match batch {
            BatchRequest::Single(r) => is_mutation(&r.query),
            BatchRequest::Batch(v) => v.iter().any(|r| is_mutation(&r.query)),
        };
        (by_cookie && !self.csrf_header && mutates()).then(|| {
            gql_error(
                StatusCode::FORBIDDEN,
                "FORBIDDEN",
                "cookie-authenticated mutations need the header X-Verdict-Csrf: 1",
                &self.request_id,
            )
        })
    }

    /// Builds the request context from the credential, or refuses: 401 for a token that
    /// is invalid, expired or revoked (never a silent anonymous request), 503 UNAVAILABLE
    /// while the database does not answer (known before asking it, or found when asking),
    /// 500 when the database fails otherwise. Every request passes here before it executes
    /// (HTTP, and a websocket's `connection_init`).
    pub async fn authenticate(self, services: &Services) -> Result<RequestCtx, Response> {
        let request_id = self.request_id;
        if !services.db.availability().is_up() {
            return Err(super::unavailable(&request_id));
        }
        let by_cookie = matches!(self.credential, Credential::Cookie(_));
        let raw = match self.credential {
            Credential::Bearer(t) | Credential::Cookie(t) => Some(t),
            Credential::None => None,
        };
        let caller = match raw {
            None => None,
            Some(token) => match accounts::authenticate(&services.db.conn, &token).await {
                Ok(Some(c)) => Some(c),
                Ok(None) => {
                    let mut refusal = gql_error(
                        StatusCode::UNAUTHORIZED,
                        "UNAUTHENTICATED",
                        "the token is invalid, expired or revoked",
                        &request_id,
                    );
                    if by_cookie {
                        // A session ended elsewhere (logged out on another device, a new
                        // password, a judge's link reissued) leaves its cookie in the
                        // browser, which would refuse every page, public ones too. The
                        // refusal says so once and drops the cookie; the client asks again
                        // without it. A bearer token is the script's to replace.
                        let clear =
                            format!("{COOKIE}=; Path=/; HttpOnly; SameSite=Strict; Max-Age=0");
                        if let Ok(v) = HeaderValue::from_str(&clear) {
                            refusal.headers_mut().append(header::SET_COOKIE, v);
                        }
                    }
                    return Err(refusal);
                }
                Err(e) if e.code() == "UNAVAILABLE" => {
                    tracing::warn!(request_id, error = %e, "authentication: database unavailable");
                    return Err(super::unavailable(&request_id));
                }
                Err(e) => {
                    tracing::error!(request_id, error = %e, "authentication failed");
                    return Err(gql_error(
                        StatusCode::INTERNAL_SERVER_ERROR,
                        "INTERNAL",
                        &format!("internal error (request id {request_id})"),
                        &request_id,
                    ));
                }
            },
        };
        Ok(RequestCtx::new(request_id, self.client, caller))
    }
}

/// Whether the request says it comes from a page of this server: its `Origin` names the
/// authority (`host:port`) the request was sent to. Browsers always send `Origin` on
/// websocket upgrades and pages cannot forge it.
fn same_origin(headers: &HeaderMap) -> bool {
    let text = |name| {
        headers
            .get(name)
            .and_then(|v: &HeaderValue| v.to_str().ok())
    };
    match (text(header::ORIGIN), text(header::HOST)) {
        (Some(origin), Some(host)) => origin
            .split_once("://")
            .is_some_and(|(_, authority)| authority.eq_ignore_ascii_case(host)),
        _ => false,
    }
}

/// The `Authorization` header wins over the session cookie.
fn credential(headers: &HeaderMap) -> Credential {
    if let Some(v) = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
    {
        return Credential::Bearer(v.strip_prefix("Bearer ").unwrap_or(v).trim().to_owned());
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
        Some(t) => Credential::Cookie(t.to_owned()),
        None => Credential::None,
    }
}
