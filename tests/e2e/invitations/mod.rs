//! People getting in: single-use invitation links (over real SMTP, from the API's outbox
//! and from the command line), registration per event, and password reset.

use std::time::{Duration, Instant};

use futures_util::future::join_all;
use serde_json::{Value, json};

use crate::harness::{
    App, PASSWORD, SmtpSink, assert_code, error_code, op, str_at, tiny_fixture, unique,
};

mod links;
use links::*;
mod resets;
use resets::*;

e2e! {
    imported_person_gets_an_invitation_over_smtp_sets_a_password_and_logs_in,
    a_link_works_once_and_not_after_expiry_revocation_or_renewal,
    invitation_mails_are_limited_per_address_and_per_event,
    fifty_concurrent_redemptions_give_one_membership,
    an_existing_account_redeems_only_when_signed_in_as_itself,
    only_organizers_invite_and_read_their_events_outbox,
    register_for_event_obeys_the_events_registration,
    imported_people_are_invited_from_the_command_line,
    the_command_line_mails_invitations_with_send,
    a_mail_server_that_refuses_leaves_the_message_pending_with_its_error,
    reset_requests_are_throttled_per_address ["--trusted-proxies", "127.0.0.1"],
    password_reset_tells_nobody_who_has_an_account,
    a_reset_link_works_once_signs_out_everywhere_and_expires,
}

/// The token at the end of the first `{public-url}{path}TOKEN` in `text`.
pub fn token_after(text: &str, path: &str) -> Option<String> {
    let start = text.find(path)? + path.len();
    let token: String = text[start..]
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
        .collect();
    (!token.is_empty()).then_some(token)
}

/// The token of the newest pending invitation message to `email` in `event`'s outbox, as
/// its organizer reads it.
pub async fn invitation_link(app: &App, organizer: &str, event: &str, email: &str) -> String {
    let d = app
        .ok(
            Some(organizer),
            op("EventOutbox"),
            json!({ "event": event }),
        )
        .await;
    d["event"]["outbox"]["edges"]
        .as_array()
        .expect("outbox edges")
        .iter()
        .rev()
        .map(|e| &e["node"])
        .find(|n| n["to"] == email && n["status"] == "pending")
        .and_then(|n| token_after(n["body"].as_str()?, "/invite/"))
        .unwrap_or_else(|| panic!("no pending invitation to {email} in {d}"))
}

/// The token of the newest password-reset message to `email`, as the operator reads it
/// with `verdict mail list --all` (the API never shows it).
pub async fn reset_link(app: &App, email: &str) -> String {
    operator_link(app, email, "/reset/").await
}

/// The token of the newest email-confirmation message to `email` (operator's view).
pub async fn confirm_link(app: &App, email: &str) -> String {
    operator_link(app, email, "/confirm/").await
}

/// The token after `path` in the newest message to `email`, as `verdict mail list --all`
/// shows it.
pub async fn operator_link(app: &App, email: &str, path: &str) -> String {
    let out = app.cli(&["mail", "list", "--all"]).await;
    assert!(out.success(), "mail list: {out:?}");
    out.stdout
        .split("--- ")
        .filter(|m| m.contains(&format!(" to {email} ")))
        .filter_map(|m| token_after(m, path))
        .last()
        .unwrap_or_else(|| panic!("no {path} message to {email} in {}", out.stdout))
}

async fn import_tiny(app: &App, admin: &str, tag: &str) -> String {
    app.ok(
        Some(admin),
        op("ImportEvent"),
        json!({ "fixture": tiny_fixture(tag) }),
    )
    .await;
    format!("tiny-{tag}")
}

/// The email of the account a session token signs in as.
async fn email_of(app: &App, token: &str) -> String {
    app.ok(Some(token), "{ viewer { user { email } } }", json!({}))
        .await["viewer"]["user"]["email"]
        .as_str()
        .expect("the viewer's own email")
        .to_owned()
}

async fn my_roles(app: &App, token: &str, event: &str) -> Value {
    app.ok(
        Some(token),
        "query($e: String!) { event(slug: $e) { myRoles } }",
        json!({ "e": event }),
    )
    .await["event"]["myRoles"]
        .clone()
}
