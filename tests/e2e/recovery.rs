//! Reset links end when the password changes (issue 23): a link mailed before a change,
//! by whatever way, does not undo it, and using one link ends every other of the account.

use serde_json::json;

use crate::harness::{App, PASSWORD, assert_code, op, str_at, unique};
use crate::invitations::token_after;

e2e! {
    a_password_change_ends_the_reset_links_sent_before_it,
    using_one_reset_link_ends_the_others,
}

/// The tokens of every reset message to `email`, oldest first, as the operator reads them.
async fn reset_links(app: &App, email: &str) -> Vec<String> {
    let out = app.cli(&["mail", "list", "--all"]).await;
    assert!(out.success(), "mail list: {out:?}");
    out.stdout
        .split("--- ")
        .filter(|m| m.contains(&format!(" to {email} ")))
        .filter_map(|m| token_after(m, "/reset/"))
        .collect()
}

/// Asks for a reset link for `email` and returns it.
async fn ask_for_link(app: &App, email: &str) -> String {
    let before = reset_links(app, email).await.len();
    app.ok(None, op("RequestPasswordReset"), json!({ "email": email }))
        .await;
    let links = reset_links(app, email).await;
    assert_eq!(links.len(), before + 1, "one new reset message: {links:?}");
    links[before].clone()
}

/// Uses a reset link that must no longer work: CONFLICT, and its password signs nobody in.
async fn assert_link_ended(app: &App, email: &str, token: &str, why: &str) {
    let attempted = "set by an old link 1";
    let r = app
        .gql(
            op("ResetPassword"),
            json!({ "token": token, "password": attempted }),
        )
        .await;
    assert_code(&r, "CONFLICT");
    assert!(r["data"].is_null(), "{why}: no session from it: {r}");
    let r = app
        .gql(
            op("LogIn"),
            json!({ "email": email, "password": attempted }),
        )
        .await;
    assert_code(&r, "UNAUTHENTICATED");
}

async fn a_password_change_ends_the_reset_links_sent_before_it(app: App) {
    let email = format!("careful-{}@example.org", unique());
    let session = app.sign_up(&email).await;

    // The owner asks for a link, then remembers the password and changes it instead.
    let early = ask_for_link(&app, &email).await;
    let changed = "changed on purpose 1";
    app.ok(
        Some(&session),
        op("ChangePassword"),
        json!({ "currentPassword": PASSWORD, "newPassword": changed }),
    )
    .await;
    assert_link_ended(&app, &email, &early, "after changePassword").await;
    app.log_in(&email, changed).await;

    // The operator's reset ends the links mailed before it too.
    let early = ask_for_link(&app, &email).await;
    let out = app
        .cli(&["user", "reset-password", "--email", &email])
        .await;
    assert!(out.success(), "{out:?}");
    let given = out.stdout.trim().to_owned();
    assert_link_ended(&app, &email, &early, "after the operator's reset").await;
    app.log_in(&email, &given).await;

    // A link asked for after the change works.
    let late = ask_for_link(&app, &email).await;
    let d = app
        .ok(
            None,
            op("ResetPassword"),
            json!({ "token": late, "password": "set by a fresh link 1" }),
        )
        .await;
    assert!(str_at(&d, "/resetPassword/token").len() > 10, "{d}");
    app.log_in(&email, "set by a fresh link 1").await;
}

async fn using_one_reset_link_ends_the_others(app: App) {
    let email = format!("twice-{}@example.org", unique());
    app.sign_up(&email).await;
    let first = ask_for_link(&app, &email).await;
    let second = ask_for_link(&app, &email).await;
    assert_ne!(first, second);

    // The newer link is used; the older one, still in the inbox, ends with it.
    let chosen = "chosen by the owner 1";
    app.ok(
        None,
        op("ResetPassword"),
        json!({ "token": second, "password": chosen }),
    )
    .await;
    assert_link_ended(&app, &email, &first, "after its sibling was used").await;
    app.log_in(&email, chosen).await;
    let r = app
        .gql(op("LogIn"), json!({ "email": email, "password": PASSWORD }))
        .await;
    assert_code(&r, "UNAUTHENTICATED");
}
