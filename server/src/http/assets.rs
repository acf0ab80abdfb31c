//! The web client and the playground, compiled into the binary so Verdict runs air-gapped:
//! no page loads anything from another origin.
//!
//! - The client is the npm project `web/app` (Vite, Preact), built by `build.rs`: its
//!   `index.html` answers every client path ([`is_client_path`]) and its hashed files are
//!   served from `/assets/` as immutable. `serve --web-dir web/app/dist` serves a build
//!   from disk instead, for working on the client without rebuilding the server.
//! - The playground is GraphiQL, bundled from `web/graphiql` and served from
//!   `/graphql/assets/`.
//!
//! A binary built without npm (or with `VERDICT_SKIP_WEB=1` / `VERDICT_SKIP_GRAPHIQL=1`)
//! has empty bundles and serves the hand-written fallbacks instead: `web/index.html` (the
//! events as text), `web/invite.html` (the links from mail) and `web/playground.html`.

use std::borrow::Cow;
use std::path::PathBuf;

use axum::extract::State;
use axum::http::{StatusCode, header};
use axum::response::{Html, IntoResponse, Response};

use crate::http::AppState;

const INDEX: &str = include_str!("../../../web/index.html");
const PLAYGROUND: &str = include_str!("../../../web/playground.html");
/// The page behind invitation, password-reset and email-confirmation links.
const LINK_PAGE: &str = include_str!("../../../web/invite.html");
/// For the fallback pages with inline scripts (and the minimal playground).
const CSP: &str = "default-src 'self'; script-src 'self' 'unsafe-inline'; style-src 'self' 'unsafe-inline'; connect-src 'self'; frame-ancestors 'none'";
/// The client: scripts and styles only from its own files; the websocket is same-origin.
const APP_CSP: &str = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

/// The client's built files, `(path, bytes)`, e.g. `("/index.html", ...)`; empty when the
/// binary was built without npm.
const APP_ASSETS: &[(&str, &[u8])] = include!(concat!(env!("OUT_DIR"), "/app_assets.rs"));

const GRAPHIQL_PAGE: &str = include_str!("../../../web/graphiql/index.html");
const GRAPHIQL_JS: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/graphiql.js"));
const GRAPHIQL_CSS: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/graphiql.css"));
/// GraphiQL: no inline script; inline styles (React sets `style` attributes); fonts and icons
/// come as `data:` URLs; subscriptions go over the same host's websocket.
const GRAPHIQL_CSP: &str = "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; connect-src 'self' ws: wss:; img-src 'self' data:; font-src 'self' data:; frame-ancestors 'none'";
const ASSET_CACHE: &str = "public, max-age=3600";
/// The client's assets carry their content hash in their names.
const IMMUTABLE: &str = "public, max-age=31536000, immutable";

/// Where the client's files come from.
#[derive(Clone, Debug, Default)]
pub enum ClientFiles {
    /// Compiled into the binary (the default).
    #[default]
    Embedded,
    /// A `web/app/dist` folder on disk, read on each request (`serve --web-dir`).
    Dir(PathBuf),
}

impl ClientFiles {
    /// The file at `path` (`/index.html`, `/assets/...`), if there is one: the embedded
    /// bytes themselves, or what was read from disk.
    async fn get(&self, path: &str) -> Option<Cow<'static, [u8]>> {
        match self {
            ClientFiles::Embedded => APP_ASSETS
                .iter()
                .find(|(p, _)| *p == path)
                .map(|(_, body)| Cow::Borrowed(*body)),
            ClientFiles::Dir(dir) => {
                let rel = path.trim_start_matches('/');
                if rel
                    .split('/')
                    .any(|seg| seg.is_empty() || seg.starts_with('.'))
                {
                    return None;
                }
                tokio::fs::read(dir.join(rel)).await.ok().map(Cow::Owned)
            }
        }
    }

    fn present(&self) -> bool {
        match self {
            ClientFiles::Embedded => !APP_ASSETS.is_empty(),
            ClientFiles::Dir(_) => true,
        }
    }
}

fn page(html: impl IntoResponse, csp: &'static str) -> Response {
    (
        [
            (header::CONTENT_SECURITY_POLICY, csp),
            (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
            // Link pages carry a secret in their path: never send it on as a referrer.
            (header::REFERRER_POLICY, "no-referrer"),
            // The page is small and changes with each release; its assets are immutable.
            (header::CACHE_CONTROL, "no-cache"),
        ],
        html,
    )
        .into_response()
}

fn asset(body: impl IntoResponse, content_type: &'static str, cache: &'static str) -> Response {
    (
        [
            (header::CONTENT_TYPE, content_type),
            (header::CACHE_CONTROL, cache),
            (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
        ],
        body,
    )
        .into_response()
}

fn not_found() -> Response {
    (StatusCode::NOT_FOUND, "not found").into_response()
}

/// Whether this binary carries the GraphiQL bundle.
fn has_graphiql() -> bool {
    !GRAPHIQL_JS.is_empty() && !GRAPHIQL_CSS.is_empty()
}

/// `GET /graphql` in a browser.
pub fn playground() -> Response {
    if has_graphiql() {
        page(Html(GRAPHIQL_PAGE), GRAPHIQL_CSP)
    } else {
        page(Html(PLAYGROUND), CSP)
    }
}

/// `/invite/{token}`, `/reset/{token}` or `/confirm/{token}`: one path segment of token
/// characters.
fn is_link(path: &str, prefix: &str) -> bool {
    path.strip_prefix(prefix).is_some_and(|t| {
        !t.is_empty() && t.len() <= 128 && t.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
    })
}

/// The client's pages without parameters: the paths of `ROUTES` in `web/app/src/app.tsx`
/// that have no `:param` (a test holds the two equal).
const PAGES: [&str; 8] = [
    "/",
    "/login",
    "/signup",
    "/forgot",
    "/account",
    "/new-event",
    "/my-events",
    "/judge-sign-in",
];
/// The first segment of every path of `ROUTES` that has a `:param`.
const PREFIXES: [&str; 7] = [
    "/e/",
    "/invite/",
    "/reset/",
    "/confirm/",
    "/join/",
    "/setup/",
    "/judge-sign-in/",
];

/// The client's pages (`ROUTES` in `web/app/src/app.tsx`): the client answers an unknown
/// path below these prefixes with its own "page not found".
fn is_client_path(path: &str) -> bool {
    PAGES.contains(&path)
        || PREFIXES
            .iter()
            .any(|p| path.starts_with(p) && path.len() > p.len())
}

fn content_type(path: &str) -> &'static str {
    match path.rsplit_once('.').map(|(_, ext)| ext) {
        Some("js") => "application/javascript; charset=utf-8",
        Some("css") => "text/css; charset=utf-8",
        Some("svg") => "image/svg+xml",
        Some("png") => "image/png",
        Some("ico") => "image/x-icon",
        Some("woff2") => "font/woff2",
        Some("json") => "application/json",
        _ => "application/octet-stream",
    }
}

/// `/` and below: the web client, its assets and the playground's assets.
pub async fn serve(State(st): State<AppState>, uri: axum::http::Uri) -> Response {
    let path = uri.path();
    let client = &st.client;
    match path {
        "/graphql/assets/graphiql.js" if has_graphiql() => asset(
            GRAPHIQL_JS,
            "application/javascript; charset=utf-8",
            ASSET_CACHE,
        ),
        "/graphql/assets/graphiql.css" if has_graphiql() => {
            asset(GRAPHIQL_CSS, "text/css; charset=utf-8", ASSET_CACHE)
        }
        p if p.starts_with("/assets/") => match client.get(p).await {
            Some(body) => asset(body, content_type(p), IMMUTABLE),
            None => not_found(),
        },
        p if is_client_path(p) && client.present() => match client.get("/index.html").await {
            Some(html) => page(Html(html), APP_CSP),
            None => not_found(),
        },
        // Without the client: the placeholder index and the page for links from mail.
        "/" | "/index.html" => page(Html(INDEX), CSP),
        p if is_link(p, "/invite/") || is_link(p, "/reset/") || is_link(p, "/confirm/") => {
            page(Html(LINK_PAGE), CSP)
        }
        _ => not_found(),
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use super::*;

    /// The path patterns of `ROUTES` in the client's route table, as written there.
    fn routes() -> Vec<&'static str> {
        const APP: &str = include_str!("../../../web/app/src/app.tsx");
        let table = APP
            .split_once("export const ROUTES")
            .and_then(|(_, rest)| rest.split_once("\n];"))
            .map(|(table, _)| table)
            .expect("app.tsx declares `export const ROUTES ... ];`");
        let routes: Vec<&str> = table
            .lines()
            .filter_map(|l| {
                l.trim()
                    .strip_prefix("['")?
                    .split_once('\'')
                    .map(|(p, _)| p)
            })
            .collect();
        assert!(routes.len() > 10, "ROUTES read as {routes:?}");
        routes
    }

    #[test]
    fn the_server_serves_the_client_at_exactly_its_routes() {
        let routes = routes();
        // Each route, its parameters filled in, is served the client.
        for r in &routes {
            let path: Vec<&str> = r
                .split('/')
                .map(|seg| if seg.starts_with(':') { "x7" } else { seg })
                .collect();
            let path = path.join("/");
            assert!(
                is_client_path(&path),
                "{r} (as {path}) is not served the client"
            );
        }
        // And the server's lists are the routes': no page or prefix the client lacks.
        let pages: BTreeSet<&str> = routes
            .iter()
            .copied()
            .filter(|r| !r.contains(':'))
            .collect();
        assert_eq!(
            pages,
            PAGES.into_iter().collect(),
            "pages without parameters"
        );
        let prefixes: BTreeSet<String> = routes
            .iter()
            .filter(|r| r.contains(':'))
            .map(|r| format!("/{}/", r.split('/').nth(1).unwrap_or_default()))
            .collect();
        let served: BTreeSet<String> = PREFIXES.iter().map(|p| p.to_string()).collect();
        assert_eq!(prefixes, served, "prefixes of the pages with parameters");
    }

    #[test]
    fn client_paths_are_the_routes_and_nothing_else() {
        for p in [
            "/",
            "/login",
            "/e/demo-hack",
            "/e/x/admin/audit",
            "/invite/abc",
            "/join/K7",
            "/setup/vsu_abc",
            "/my-events",
        ] {
            assert!(is_client_path(p), "{p}");
        }
        for p in [
            "/e/",
            "/setup/",
            "/graphql",
            "/healthz",
            "/assets/x.js",
            "/favicon.ico",
            "/etc/passwd",
        ] {
            assert!(!is_client_path(p), "{p}");
        }
    }
}
