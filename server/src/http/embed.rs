//! The embeddable gallery (issue 12): `GET /embed/{slug}` answers a small page listing the
//! event's submitted projects (title, track, summary, team name: public data only) that any
//! site may frame, and `GET /embed.js` is the one-line loader that inserts it:
//!
//! ```html
//! <script src="https://verdict.example.org/embed.js" data-event="spring-hack-2026"></script>
//! ```
//!
//! The page runs no script and loads nothing (`default-src 'none'`); it is the only
//! response with `frame-ancestors *`: every other one carries `X-Frame-Options: DENY`
//! ([`super::router`]). Every text is escaped: a title is data, never markup.

use std::collections::HashMap;

use axum::extract::{Path, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use entity::{project, team, track};
use sea_orm::{ColumnTrait, EntityTrait, PaginatorTrait, QueryFilter, QueryOrder, QuerySelect};

use super::AppState;
use crate::domain::event_by_slug;
use crate::error::AppError;
use crate::html::escape_html;

/// At most this many projects on the page; the rest are a link away.
pub const EMBED_LIMIT: u64 = 200;

/// Frameable anywhere; no script, no request of its own.
const EMBED_CSP: &str = "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'; frame-ancestors *";

const STYLE: &str = "body{font:15px/1.45 system-ui,sans-serif;margin:0;padding:12px;color:#1b1f24;background:#fff}\
h1{font-size:1.15rem;margin:0 0 .25rem}p{margin:.2rem 0}.muted{color:#5b6470}\
ul{list-style:none;margin:.75rem 0;padding:0;display:grid;gap:.6rem}\
li{border:1px solid #d5dae0;border-radius:6px;padding:.6rem .75rem}\
h2{font-size:1rem;margin:0}a{color:#0b57d0}";

fn page(status: StatusCode, title: &str, body: &str, csp: &'static str) -> Response {
    let html = format!(
        "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
         <title>{}</title><style>{STYLE}</style></head><body>{body}</body></html>",
        escape_html(title)
    );
    (
        status,
        [
            (
                header::CONTENT_TYPE,
                HeaderValue::from_static("text/html; charset=utf-8"),
            ),
            (
                header::CONTENT_SECURITY_POLICY,
                HeaderValue::from_static(csp),
            ),
            (
                header::CACHE_CONTROL,
                HeaderValue::from_static("public, max-age=60"),
            ),
            (
                header::REFERRER_POLICY,
                HeaderValue::from_static("strict-origin-when-cross-origin"),
            ),
        ],
        html,
    )
        .into_response()
}

/// `GET /embed/{slug}`.
pub async fn gallery(State(st): State<AppState>, Path(slug): Path<String>) -> Response {
    match render(&st, &slug).await {
        Ok(r) => r,
        Err(AppError::NotFound(_)) => page(
            StatusCode::NOT_FOUND,
            "No such event",
            "<p class=\"muted\">No such event.</p>",
            EMBED_CSP,
        ),
        Err(e) => {
            tracing::error!(error = %e, slug, "embedded gallery");
            page(
                StatusCode::SERVICE_UNAVAILABLE,
                "Unavailable",
                "<p class=\"muted\">The gallery is unavailable right now.</p>",
                EMBED_CSP,
            )
        }
    }
}

async fn render(st: &AppState, slug: &str) -> Result<Response, AppError> {
    let db = &st.services.db.conn;
    let e = event_by_slug(db, slug).await?;
    let gallery = project::Entity::find_gallery(e.id);
    let total = gallery.clone().count(db).await?;
    let projects = gallery
        .order_by_asc(project::Column::Id)
        .limit(EMBED_LIMIT)
        .all(db)
        .await?;
    let team_ids: Vec<i64> = projects.iter().map(|p| p.team_id).collect();
    let teams: HashMap<i64, String> = team::Entity::find()
        .filter(team::Column::Id.is_in(team_ids))
        .all(db)
        .await?
        .into_iter()
        .map(|t| (t.id, t.name))
        .collect();
    let tracks: HashMap<i64, String> = track::Entity::find()
        .filter(track::Column::EventId.eq(e.id))
        .all(db)
        .await?
        .into_iter()
        .map(|t| (t.id, t.name))
        .collect();

    // Slugs and public ids are URL-safe by construction (validate::slug, crypto::public_id).
    let event_path = format!("/e/{}", escape_html(&e.slug));
    let mut body = format!(
        "<h1>{}</h1><p class=\"muted\">{} submitted project{}</p><ul>",
        escape_html(&e.name),
        total,
        if total == 1 { "" } else { "s" }
    );
    for p in &projects {
        let meta: Vec<&str> = [tracks.get(&p.track_id), teams.get(&p.team_id)]
            .into_iter()
            .flatten()
            .map(String::as_str)
            .collect();
        body.push_str(&format!(
            "<li><h2><a href=\"{event_path}/projects/{}\" target=\"_blank\" rel=\"noopener\">{}</a></h2>\
             <p class=\"muted\">{}</p>{}</li>",
            escape_html(&p.public_id),
            escape_html(&p.title),
            escape_html(&meta.join(" · ")),
            if p.summary.trim().is_empty() {
                String::new()
            } else {
                format!("<p>{}</p>", escape_html(&p.summary))
            },
        ));
    }
    body.push_str("</ul>");
    let more = total.saturating_sub(projects.len() as u64);
    body.push_str(&format!(
        "<p><a href=\"{event_path}/projects\" target=\"_blank\" rel=\"noopener\">{}</a></p>",
        if more > 0 {
            format!("{more} more on the event's page")
        } else {
            "The event's page".to_owned()
        }
    ));
    Ok(page(StatusCode::OK, &e.name, &body, EMBED_CSP))
}

/// `GET /embed.js`: inserts the gallery of `data-event` after the script tag, as an iframe
/// from the same origin as the script.
const LOADER: &str = r#"(function () {
  var s = document.currentScript;
  var slug = s && s.getAttribute('data-event');
  if (!slug) return;
  var f = document.createElement('iframe');
  f.src = new URL('/embed/' + encodeURIComponent(slug), s.src).href;
  f.title = s.getAttribute('data-title') || 'Projects';
  f.loading = 'lazy';
  f.referrerPolicy = 'strict-origin-when-cross-origin';
  f.style.cssText = 'width:100%;border:0;min-height:' + (parseInt(s.getAttribute('data-height'), 10) || 480) + 'px';
  s.parentNode.insertBefore(f, s.nextSibling);
})();
"#;

pub async fn loader() -> Response {
    (
        [
            (
                header::CONTENT_TYPE,
                HeaderValue::from_static("text/javascript; charset=utf-8"),
            ),
            (
                header::CACHE_CONTROL,
                HeaderValue::from_static("public, max-age=3600"),
            ),
            (
                header::HeaderName::from_static("cross-origin-resource-policy"),
                HeaderValue::from_static("cross-origin"),
            ),
        ],
        LOADER,
    )
        .into_response()
}
