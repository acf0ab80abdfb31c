//! The web client and the playground, compiled into the binary so Verdict runs air-gapped:
//! no page loads anything from another origin.
//!
//! The playground is GraphiQL, bundled from the npm project `web/graphiql` by `build.rs`
//! and served from `/graphql/assets/`. A binary built without npm (or with
//! `VERDICT_SKIP_GRAPHIQL=1`) has empty bundles and serves the minimal hand-written
//! playground `web/playground.html` instead.

use axum::http::{StatusCode, header};
use axum::response::{Html, IntoResponse, Response};

const INDEX: &str = include_str!("../../web/index.html");
const PLAYGROUND: &str = include_str!("../../web/playground.html");
/// The page behind invitation, password-reset and email-confirmation links.
const LINK_PAGE: &str = include_str!("../../web/invite.html");
/// For the pages with inline scripts (the web client and the minimal playground).
const CSP: &str = "default-src 'self'; script-src 'self' 'unsafe-inline'; style-src 'self' 'unsafe-inline'; connect-src 'self'; frame-ancestors 'none'";

const GRAPHIQL_PAGE: &str = include_str!("../../web/graphiql/index.html");
const GRAPHIQL_JS: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/graphiql.js"));
const GRAPHIQL_CSS: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/graphiql.css"));
/// GraphiQL: no inline script; inline styles (React sets `style` attributes); fonts and icons
/// come as `data:` URLs; subscriptions go over the same host's websocket.
const GRAPHIQL_CSP: &str = "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; connect-src 'self' ws: wss:; img-src 'self' data:; font-src 'self' data:; frame-ancestors 'none'";
const ASSET_CACHE: &str = "public, max-age=3600";

fn page(html: &'static str, csp: &'static str) -> Response {
    (
        [
            (header::CONTENT_SECURITY_POLICY, csp),
            (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
            // Link pages carry a secret in their path: never send it on as a referrer.
            (header::REFERRER_POLICY, "no-referrer"),
        ],
        Html(html),
    )
        .into_response()
}

fn asset(body: &'static [u8], content_type: &'static str) -> Response {
    if body.is_empty() {
        return (StatusCode::NOT_FOUND, "not found").into_response();
    }
    (
        [
            (header::CONTENT_TYPE, content_type),
            (header::CACHE_CONTROL, ASSET_CACHE),
            (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
        ],
        body,
    )
        .into_response()
}

/// Whether this binary carries the GraphiQL bundle.
fn has_graphiql() -> bool {
    !GRAPHIQL_JS.is_empty() && !GRAPHIQL_CSS.is_empty()
}

/// `GET /graphql` in a browser.
pub fn playground() -> Response {
    if has_graphiql() {
        page(GRAPHIQL_PAGE, GRAPHIQL_CSP)
    } else {
        page(PLAYGROUND, CSP)
    }
}

/// `/invite/{token}`, `/reset/{token}` or `/confirm/{token}`: one path segment of token
/// characters.
fn is_link(path: &str, prefix: &str) -> bool {
    path.strip_prefix(prefix).is_some_and(|t| {
        !t.is_empty() && t.len() <= 128 && t.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
    })
}

/// `/` and below: the thin client (a placeholder page for now) and the playground's assets.
pub async fn serve(uri: axum::http::Uri) -> Response {
    match uri.path() {
        "/" | "/index.html" => page(INDEX, CSP),
        p if is_link(p, "/invite/") || is_link(p, "/reset/") || is_link(p, "/confirm/") => {
            page(LINK_PAGE, CSP)
        }
        "/graphql/assets/graphiql.js" => {
            asset(GRAPHIQL_JS, "application/javascript; charset=utf-8")
        }
        "/graphql/assets/graphiql.css" => asset(GRAPHIQL_CSS, "text/css; charset=utf-8"),
        _ => (StatusCode::NOT_FOUND, "not found").into_response(),
    }
}
