//! The attack suite (issue 13): every GraphQL and HTTP attack this server defends against
//! is a named end-to-end test that tries it and asserts the safe answer and that nothing
//! was written (every table's rows, the audit chain included: [`crate::harness::Probe`]).
//! Each runs on SQLite and PostgreSQL.
//!
//! Cases that already had a test elsewhere stay there (with the "nothing was written"
//! assertion added where it was missing); the rest are here.
//!
//! | case | test |
//! | --- | --- |
//! | depth bomb (a query, and a mutation under one) | `limits::depth_limit`, `limits::nesting_limit` |
//! | alias bomb (3,000 aliases; 1,001 aliased mutations) | `limits::thousands_of_typename_selections_are_refused`, `limits::anonymous_ranking_flood_is_too_complex` |
//! | field-duplication bomb (5,000 repeats; a repeated mutation) | `limits::thousands_of_typename_selections_are_refused` |
//! | fragment cycle, fragment bomb (also in a mutation) | `limits::nesting_limit`, `limits::fragment_bomb_is_refused_before_validation` |
//! | directive overload (also on a mutation) | `limits::directive_limit`, `limits::directive_limit_is_enforced` |
//! | oversized body | `limits::body_size_limit`, `edge::refusals_at_the_edge_are_graphql_errors` |
//! | oversized batch | `limits::batch_limit` |
//! | mutation over GET (also named by a persisted query's hash) | `limits::get_never_runs_a_mutation`, `results::published_ranking_reads_a_page_at_a_time_and_anonymous_gets_are_cacheable` |
//! | mutation as text/plain, x-www-form-urlencoded, multipart | `limits::mutations_need_a_json_content_type` |
//! | CSRF: a cookie mutation without the header | `auth::session_cookie_and_csrf` |
//! | CSRF: the same inside a batch, or beside a query in one document | `attacks::a_cookie_mutation_hidden_in_a_batch_needs_the_csrf_header` |
//! | introspection and "did you mean" suggestions when introspection is off | `limits::no_suggestions_in_errors`, `limits::introspection_can_be_disabled`, `attacks::introspection_off_leaks_no_schema_by_any_path` |
//! | internal error text never reaches the client | `attacks::database_failures_reach_the_client_as_a_request_id_only` |
//! | CORS never echoes a foreign origin | `attacks::cors_never_allows_a_foreign_origin` |
//! | log-in attempts multiplied by aliases or a batch are each counted | `attacks::aliased_and_batched_log_ins_are_each_counted` |
//! | rotating `X-Forwarded-For` from an untrusted peer: log-in throttle | `throttle::untrusted_peers_cannot_pick_their_address` |
//! | the same for the request rate limit | `attacks::rotating_forwarded_headers_do_not_reset_the_request_rate_limit` |
//! | websocket without credentials | `attacks::a_socket_without_credentials_runs_nothing_that_needs_them` |
//! | websocket opened with a revoked or expired credential | `attacks::a_socket_opened_with_a_dead_credential_is_refused` |
//! | websocket with another event's credentials | `attacks::another_events_organizer_gets_nothing_of_this_event_on_a_socket` |
//! | subscriber logged out mid-stream | `websocket::log_out_ends_the_session_on_open_sockets`, `websocket::a_revoked_api_token_stops_working_on_open_sockets` |
//! | subscriber whose role is removed mid-stream | `websocket::a_revoked_organizer_loses_live_judging_and_member_emails` |
//! | cross-event object access by id, every ID argument of the schema | `attacks::no_id_argument_reaches_another_events_objects` (generated from `schema.graphql`) |

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use serde_json::{Value, json};

use crate::harness::{App, PASSWORD, Ws, error_code, op, str_at, unique, ws_code, ws_errors};

mod http;
use http::*;
mod sockets;
use sockets::*;
mod cases;
use cases::*;
mod ids;
use ids::*;

e2e! {
    a_cookie_mutation_hidden_in_a_batch_needs_the_csrf_header,
    introspection_off_leaks_no_schema_by_any_path ["--no-introspection"],
    database_failures_reach_the_client_as_a_request_id_only,
    cors_never_allows_a_foreign_origin,
    aliased_and_batched_log_ins_are_each_counted ["--login-attempts", "3"],
    rotating_forwarded_headers_do_not_reset_the_request_rate_limit [
        "--rate-limit-per-second", "1", "--rate-limit-burst", "3"
    ],
    a_socket_without_credentials_runs_nothing_that_needs_them,
    a_socket_opened_with_a_dead_credential_is_refused,
    another_events_organizer_gets_nothing_of_this_event_on_a_socket,
    no_id_argument_reaches_another_events_objects [
        "--allow-loopback-webhooks", "--webhook-backoff-ms", "3600000"
    ],
}

const WAIT: Duration = Duration::from_secs(10);

fn bearer(token: &str) -> Value {
    json!({ "authorization": format!("Bearer {token}") })
}

/// The first answer (`next` or `error`) to operation `id` on `ws`.
async fn ws_answer(ws: &mut Ws, id: &str, query: &str, vars: Value) -> Value {
    ws.subscribe(id, query, vars).await;
    loop {
        let msg = ws
            .next_json(WAIT)
            .await
            .unwrap_or_else(|| panic!("no answer to {id} ({query})"));
        if msg["id"] == id && matches!(msg["type"].as_str(), Some("next" | "error")) {
            return msg;
        }
    }
}

/// No data came back: `data` is null or holds only nulls.
fn no_data(data: &Value) -> bool {
    data.is_null()
        || data
            .as_object()
            .is_some_and(|o| o.values().all(Value::is_null))
}

/// Logs in by JSON POST as a browser would and returns the `verdict_session` cookie.
async fn session_cookie(app: &App, email: &str) -> String {
    let body =
        json!({ "query": op("LogIn"), "variables": { "email": email, "password": PASSWORD } });
    let r = app
        .post_raw(body.to_string(), "application/json", &[])
        .await;
    r.headers_all("set-cookie")
        .iter()
        .find(|c| c.starts_with("verdict_session="))
        .and_then(|c| c.split(';').next())
        .unwrap_or_else(|| panic!("logIn sets verdict_session: {r:?}"))
        .to_string()
}

// ---- CSRF ------------------------------------------------------------------------------
