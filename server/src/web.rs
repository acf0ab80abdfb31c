//! The web client and the playground, compiled into the binary so Verdict runs air-gapped:
//! no page loads anything from another origin.

use axum::http::{StatusCode, header};
use axum::response::{Html, IntoResponse, Response};

const INDEX: &str = include_str!("../../web/index.html");
const PLAYGROUND: &str = include_str!("../../web/playground.html");
const CSP: &str = "default-src 'self'; script-src 'self' 'unsafe-inline'; style-src 'self' 'unsafe-inline'; connect-src 'self'; frame-ancestors 'none'";

fn page(html: &'static str) -> Response {
    (
        [
            (header::CONTENT_SECURITY_POLICY, CSP),
            (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
        ],
        Html(html),
    )
        .into_response()
}

/// `GET /graphql` in a browser.
pub fn playground() -> Response {
    page(PLAYGROUND)
}

/// `/` and below: the thin client (a placeholder page for now).
pub async fn serve(uri: axum::http::Uri) -> Response {
    match uri.path() {
        "/" | "/index.html" => page(INDEX),
        _ => (StatusCode::NOT_FOUND, "not found").into_response(),
    }
}
