//! People getting in: single-use invitation links (over real SMTP, from the API's outbox
//! and from the command line), registration per event, and password reset.

use std::time::{Duration, Instant};

use futures_util::future::join_all;
use serde_json::{Value, json};

use crate::harness::{
    App, PASSWORD, SmtpSink, assert_code, error_code, op, str_at, tiny_fixture, unique,
};

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

async fn imported_person_gets_an_invitation_over_smtp_sets_a_password_and_logs_in(app: App) {
    let admin = app.site_admin().await;
    let tag = unique();
    // `verdict import` brings the people in, without passwords.
    let file = app.db.dir().join(format!("tiny-{tag}.json"));
    std::fs::write(&file, tiny_fixture(&tag).to_string()).expect("write fixture");
    let out = app.cli(&["import", file.to_str().expect("path")]).await;
    assert!(out.success(), "import: {out:?}");
    let event = format!("tiny-{tag}");
    let person = format!("tiny-part-{tag}@example.org");
    let r = app
        .gql(
            op("LogIn"),
            json!({ "email": person, "password": PASSWORD }),
        )
        .await;
    assert_code(&r, "UNAUTHENTICATED");

    // A server that mails: the organizer invites everyone the import brought in.
    let mut sink = SmtpSink::start().await;
    let mailing = app
        .sibling(&[
            "--smtp-url",
            &sink.url,
            "--public-url",
            "https://hack.example.org",
        ])
        .await;
    let d = mailing
        .ok(
            Some(&admin),
            op("InviteImported"),
            json!({ "event": event }),
        )
        .await;
    assert_eq!(
        d["inviteImported"], 2,
        "the organizer and the participant: {d}"
    );

    let mut mails = [
        sink.next(Duration::from_secs(30)).await,
        sink.next(Duration::from_secs(30)).await,
    ];
    mails.sort_by_key(|m| !m.to.iter().any(|t| t.contains(&person)));
    let mail = &mails[0];
    assert!(mail.to.iter().any(|t| t.contains(&person)), "{mail:?}");
    assert!(mail.from.contains("verdict@localhost"), "{mail:?}");
    let text = mail.text();
    assert!(
        text.contains("multipart/alternative"),
        "plain text and HTML: {text}"
    );
    assert!(
        text.contains("text/plain") && text.contains("text/html"),
        "{text}"
    );
    assert!(text.contains("as a participant"), "{text}");
    let token = token_after(&text, "https://hack.example.org/invite/")
        .unwrap_or_else(|| panic!("a link to the public URL: {text}"));

    // The link opens Verdict's page, which never leaks it as a referrer.
    let page = app.get(&format!("/invite/{token}")).await;
    assert_eq!(page.status, 200);
    assert_eq!(
        page.header("referrer-policy").as_deref(),
        Some("no-referrer")
    );

    // Redeeming sets the password and signs in; then the person logs in like anyone.
    let d = app
        .ok(
            None,
            op("RedeemInvitation"),
            json!({ "token": token, "password": PASSWORD }),
        )
        .await;
    assert_eq!(
        email_of(&app, &str_at(&d, "/redeemInvitation/token")).await,
        person
    );
    let session = app.log_in(&person, PASSWORD).await;
    assert_eq!(
        my_roles(&app, &session, &event).await,
        json!(["PARTICIPANT"])
    );

    // The organizer sees what happened to each message and invitation.
    let d = app
        .ok(Some(&admin), op("EventOutbox"), json!({ "event": event }))
        .await;
    let nodes: Vec<&Value> = d["event"]["outbox"]["edges"]
        .as_array()
        .expect("edges")
        .iter()
        .map(|e| &e["node"])
        .collect();
    assert_eq!(nodes.len(), 2, "{d}");
    for n in &nodes {
        assert_eq!(n["status"], "sent", "{n}");
        assert_eq!(n["attempts"], 1, "{n}");
        assert!(n["sentAt"].is_string(), "{n}");
    }
    let d = app
        .ok(
            Some(&admin),
            op("EventInvitations"),
            json!({ "event": event }),
        )
        .await;
    let statuses: Vec<&str> = d["event"]["invitations"]["edges"]
        .as_array()
        .expect("edges")
        .iter()
        .filter_map(|e| e["node"]["status"].as_str())
        .collect();
    assert_eq!(
        statuses.iter().filter(|s| **s == "redeemed").count(),
        1,
        "{d}"
    );
    assert_eq!(
        statuses.iter().filter(|s| **s == "pending").count(),
        1,
        "{d}"
    );

    // Everyone who can sign in now is skipped; the one still pending too.
    let d = app
        .ok(
            Some(&admin),
            op("InviteImported"),
            json!({ "event": event }),
        )
        .await;
    assert_eq!(d["inviteImported"], 0, "{d}");
}

/// Moves every open invitation of `email` into the past.
async fn expire_invitations(app: &App, email: &str) {
    use entity::invitation;
    use sea_orm::{ColumnTrait, EntityTrait, QueryFilter, sea_query::Expr};
    let db = app.db.connect().await;
    let past = chrono::Utc::now() - chrono::Duration::hours(1);
    invitation::Entity::update_many()
        .col_expr(
            invitation::Column::CreatedAt,
            Expr::value(past - chrono::Duration::days(1)),
        )
        .col_expr(invitation::Column::ExpiresAt, Expr::value(past))
        .filter(invitation::Column::Email.eq(email))
        .exec(&db.conn)
        .await
        .expect("expire invitations");
}

async fn a_link_works_once_and_not_after_expiry_revocation_or_renewal(app: App) {
    let admin = app.site_admin().await;
    let tag = unique();
    let event = import_tiny(&app, &admin, &tag).await;
    let invite = |email: &str| json!({ "event": event, "emails": [email], "role": "JUDGE" });
    let redeem =
        |token: &str| json!({ "token": token, "password": PASSWORD, "displayName": "Judge" });

    // Used: the second redemption is CONFLICT.
    let used = format!("used-{tag}@example.org");
    app.ok(Some(&admin), op("InviteToEvent"), invite(&used))
        .await;
    let token = invitation_link(&app, &admin, &event, &used).await;
    app.ok(None, op("RedeemInvitation"), redeem(&token)).await;
    let head = app.audit_head().await;
    assert_code(
        &app.gql(op("RedeemInvitation"), redeem(&token)).await,
        "CONFLICT",
    );

    // Unknown: NOT_FOUND.
    let unknown = format!("vi_{}", "0".repeat(64));
    assert_code(
        &app.gql(op("RedeemInvitation"), redeem(&unknown)).await,
        "NOT_FOUND",
    );

    // Expired: WINDOW_CLOSED, and the link stays unused.
    let late = format!("late-{tag}@example.org");
    app.ok(Some(&admin), op("InviteToEvent"), invite(&late))
        .await;
    let token = invitation_link(&app, &admin, &event, &late).await;
    expire_invitations(&app, &late).await;
    assert_code(
        &app.gql(op("RedeemInvitation"), redeem(&token)).await,
        "WINDOW_CLOSED",
    );

    // Revoked: FORBIDDEN.
    let revoked = format!("revoked-{tag}@example.org");
    let d = app
        .ok(Some(&admin), op("InviteToEvent"), invite(&revoked))
        .await;
    let token = invitation_link(&app, &admin, &event, &revoked).await;
    app.ok(
        Some(&admin),
        op("RevokeInvitation"),
        json!({ "id": str_at(&d, "/inviteToEvent/0/id") }),
    )
    .await;
    let head_after_revoke = app.audit_head().await;
    assert_code(
        &app.gql(op("RedeemInvitation"), redeem(&token)).await,
        "FORBIDDEN",
    );

    // Renewed (resent, or invited again): only the newest link works.
    let renewed = format!("renewed-{tag}@example.org");
    let d = app
        .ok(Some(&admin), op("InviteToEvent"), invite(&renewed))
        .await;
    let first = invitation_link(&app, &admin, &event, &renewed).await;
    app.ok(
        Some(&admin),
        op("ResendInvitation"),
        json!({ "id": str_at(&d, "/inviteToEvent/0/id") }),
    )
    .await;
    let second = invitation_link(&app, &admin, &event, &renewed).await;
    assert_ne!(first, second);
    assert_code(
        &app.gql(op("RedeemInvitation"), redeem(&first)).await,
        "NOT_FOUND",
    );
    let outbox = app
        .ok(Some(&admin), op("EventOutbox"), json!({ "event": event }))
        .await;
    let cancelled = outbox["event"]["outbox"]["edges"]
        .as_array()
        .expect("edges")
        .iter()
        .filter(|e| e["node"]["to"] == renewed.as_str() && e["node"]["status"] == "cancelled")
        .count();
    assert_eq!(
        cancelled, 1,
        "the first link's message is cancelled: {outbox}"
    );
    app.ok(None, op("RedeemInvitation"), redeem(&second)).await;

    // Refusals wrote nothing.
    assert!(head < head_after_revoke);
    let d = app
        .ok(
            Some(&admin),
            op("EventInvitations"),
            json!({ "event": event }),
        )
        .await;
    let status_of = |email: &str| {
        d["event"]["invitations"]["edges"]
            .as_array()
            .expect("edges")
            .iter()
            .find(|e| e["node"]["email"] == email)
            .map(|e| e["node"]["status"].as_str().unwrap_or("").to_owned())
            .expect("the invitation")
    };
    assert_eq!(status_of(&used), "redeemed");
    assert_eq!(status_of(&late), "expired");
    assert_eq!(status_of(&revoked), "revoked");
    assert_eq!(status_of(&renewed), "redeemed");
}

async fn fifty_concurrent_redemptions_give_one_membership(app: App) {
    let admin = app.site_admin().await;
    let tag = unique();
    let event = import_tiny(&app, &admin, &tag).await;
    let email = format!("racer-{tag}@example.org");
    app.ok(
        Some(&admin),
        op("InviteToEvent"),
        json!({ "event": event, "emails": [email], "role": "JUDGE" }),
    )
    .await;
    let token = invitation_link(&app, &admin, &event, &email).await;
    let head = app.audit_head().await;
    let answers = join_all((0..50).map(|i| {
        let app = &app;
        let token = token.clone();
        async move {
            app.gql(
                op("RedeemInvitation"),
                json!({ "token": token, "password": PASSWORD, "displayName": format!("Racer {i}") }),
            )
            .await
        }
    }))
    .await;
    let won = answers.iter().filter(|r| r.get("errors").is_none()).count();
    let codes: Vec<String> = answers.iter().filter_map(error_code).collect();
    assert_eq!(won, 1, "exactly one redemption wins: {codes:?}");
    assert!(
        codes.iter().all(|c| c == "CONFLICT"),
        "every other one is CONFLICT, never INTERNAL: {codes:?}"
    );
    assert_eq!(app.audit_head().await, head + 1, "one write");
    let d = app
        .ok(
            Some(&admin),
            op("EventMembers"),
            json!({ "event": event, "role": "JUDGE", "first": 50 }),
        )
        .await;
    assert_eq!(
        d["event"]["members"]["totalCount"], 1,
        "one membership: {d}"
    );
}

async fn an_existing_account_redeems_only_when_signed_in_as_itself(app: App) {
    let admin = app.site_admin().await;
    let tag = unique();
    let event = import_tiny(&app, &admin, &tag).await;
    let email = format!("existing-{tag}@example.org");
    let owner = app.sign_up(&email).await;
    let other = app.sign_up(&format!("other-{tag}@example.org")).await;
    app.ok(
        Some(&admin),
        op("InviteToEvent"),
        json!({ "event": event, "emails": [email], "role": "JUDGE" }),
    )
    .await;
    let token = invitation_link(&app, &admin, &event, &email).await;
    // The link alone does not take over an account that has a password, even with a new
    // password offered; nor does another account's session.
    let with_password = json!({ "token": token, "password": "a brand new password" });
    assert_code(
        &app.gql(op("RedeemInvitation"), with_password.clone()).await,
        "UNAUTHENTICATED",
    );
    assert_code(
        &app.gql_as(&other, op("RedeemInvitation"), with_password)
            .await,
        "UNAUTHENTICATED",
    );
    assert_eq!(my_roles(&app, &other, &event).await, json!([]));
    // Signed in as itself it works, and the password stays the owner's.
    app.ok(
        Some(&owner),
        op("RedeemInvitation"),
        json!({ "token": token }),
    )
    .await;
    assert_eq!(my_roles(&app, &owner, &event).await, json!(["JUDGE"]));
    app.log_in(&email, PASSWORD).await;
}

async fn only_organizers_invite_and_read_their_events_outbox(app: App) {
    let s = app.scenario().await;
    let admin = s.admin.clone();
    let tag = unique();
    let invite = |event: &str| json!({ "event": event, "emails": [format!("x-{tag}@example.org")], "role": "ORGANIZER" });
    for who in [&s.participant_a, &s.judge_a, &s.organizer_b] {
        assert_code(
            &app.gql_as(who, op("InviteToEvent"), invite(&s.event_a))
                .await,
            "FORBIDDEN",
        );
        assert_code(
            &app.gql_as(who, op("InviteImported"), json!({ "event": s.event_a }))
                .await,
            "FORBIDDEN",
        );
        let r = app
            .gql_as(who, op("EventOutbox"), json!({ "event": s.event_a }))
            .await;
        assert!(error_code(&r).is_some(), "outbox refused: {r}");
        assert!(r["data"]["event"]["outbox"].is_null(), "{r}");
        let r = app
            .gql_as(who, op("EventInvitations"), json!({ "event": s.event_a }))
            .await;
        assert!(r["data"]["event"]["invitations"].is_null(), "{r}");
    }
    let d = app
        .ok(
            Some(&s.organizer_a),
            op("InviteToEvent"),
            invite(&s.event_a),
        )
        .await;
    let id = json!({ "id": str_at(&d, "/inviteToEvent/0/id") });
    // Another event's organizer cannot touch it.
    assert_code(
        &app.gql_as(&s.organizer_b, op("RevokeInvitation"), id.clone())
            .await,
        "FORBIDDEN",
    );
    assert_code(
        &app.gql_as(&s.organizer_b, op("ResendInvitation"), id).await,
        "FORBIDDEN",
    );
    // Password resets of the event's own people never show in its outbox.
    let org_email = s.emails.organizer_a.clone();
    app.ok(
        None,
        op("RequestPasswordReset"),
        json!({ "email": org_email }),
    )
    .await;
    let d = app
        .ok(
            Some(&admin),
            op("EventOutbox"),
            json!({ "event": s.event_a }),
        )
        .await;
    let bodies = d.to_string();
    assert!(!bodies.contains("/reset/"), "{bodies}");
    assert_eq!(d["event"]["outbox"]["totalCount"], 1, "{d}");
}

async fn register_for_event_obeys_the_events_registration(app: App) {
    let admin = app.site_admin().await;
    let tag = unique();
    let now = chrono::Utc::now();
    let d = |days: i64| crate::harness::rfc3339(now + chrono::Duration::days(days));
    let event = format!("reg-{tag}");
    let created = app
        .ok(
            Some(&admin),
            op("CreateEvent"),
            json!({ "input": { "slug": event, "name": "Registration",
                "submissionsOpen": d(-1), "submissionsClose": d(1) } }),
        )
        .await;
    assert!(created["createEvent"]["id"].is_string());
    let person = app.sign_up(&format!("walk-in-{tag}@example.org")).await;
    let registration = async |app: &App| {
        app.ok(
            Some(&admin),
            op("EventInvitations"),
            json!({ "event": event }),
        )
        .await["event"]["registration"]
            .clone()
    };
    // New events are invite-only.
    assert_eq!(registration(&app).await, "INVITE_ONLY");
    let head = app.audit_head().await;
    assert_code(
        &app.gql_as(&person, op("RegisterForEvent"), json!({ "event": event }))
            .await,
        "FORBIDDEN",
    );
    assert_eq!(app.audit_head().await, head);
    for (setting, code) in [("CLOSED", Some("FORBIDDEN")), ("OPEN", None)] {
        app.ok(
            Some(&admin),
            op("UpdateEvent"),
            json!({ "event": event, "input": { "registration": setting } }),
        )
        .await;
        assert_eq!(registration(&app).await, setting);
        let r = app
            .gql_as(&person, op("RegisterForEvent"), json!({ "event": event }))
            .await;
        assert_eq!(error_code(&r).as_deref(), code, "{setting}: {r}");
    }
    assert_eq!(
        my_roles(&app, &person, &event).await,
        json!(["PARTICIPANT"])
    );
}

async fn imported_people_are_invited_from_the_command_line(app: App) {
    let admin = app.site_admin().await;
    let tag = unique();
    let event = import_tiny(&app, &admin, &tag).await;
    let out = app
        .cli(&[
            "invite",
            "--event",
            &event,
            "--public-url",
            "https://hack.example.org",
        ])
        .await;
    assert!(out.success(), "invite: {out:?}");
    let lines: Vec<&str> = out.stdout.lines().collect();
    assert_eq!(
        lines.len(),
        2,
        "one line per imported person: {}",
        out.stdout
    );
    let part = lines
        .iter()
        .find(|l| l.starts_with(&format!("tiny-part-{tag}@example.org\tparticipant\t")))
        .unwrap_or_else(|| panic!("the participant's line: {}", out.stdout));
    let token = token_after(part, "https://hack.example.org/invite/").expect("a link");
    // The same links are in the outbox for the organizers, and for the operator.
    assert_eq!(
        invitation_link(
            &app,
            &admin,
            &event,
            &format!("tiny-part-{tag}@example.org")
        )
        .await,
        token
    );
    let listed = app.cli(&["mail", "list"]).await;
    assert!(listed.stdout.contains(&token), "{listed:?}");
    // Pending links are not made again; `--send` needs a mail server.
    let again = app.cli(&["invite", "--event", &event]).await;
    assert!(again.success() && again.stdout.is_empty(), "{again:?}");
    let send = app.cli(&["invite", "--event", &event, "--send"]).await;
    assert!(!send.success(), "{send:?}");
    assert!(send.stderr.contains("--smtp-url"), "{send:?}");
    // The printed link works.
    let d = app
        .ok(
            None,
            op("RedeemInvitation"),
            json!({ "token": token, "password": PASSWORD }),
        )
        .await;
    assert_eq!(
        email_of(&app, &str_at(&d, "/redeemInvitation/token")).await,
        format!("tiny-part-{tag}@example.org")
    );
}

async fn password_reset_tells_nobody_who_has_an_account(app: App) {
    let tag = unique();
    let known = format!("known-{tag}@example.org");
    let owner = app.sign_up(&known).await;
    let unknown = format!("unknown-{tag}@example.org");
    let mut sink = SmtpSink::start().await;
    let mailing = app.sibling(&["--smtp-url", &sink.url]).await;
    let ask = |email: &str| json!({ "email": email });
    // The same answer, after at least the same floor, for both.
    let mut answers = vec![];
    for email in [&known, &unknown, &known, &unknown] {
        let started = Instant::now();
        let r = mailing.gql(op("RequestPasswordReset"), ask(email)).await;
        let took = started.elapsed();
        assert!(took >= Duration::from_millis(250), "{email}: {took:?}");
        eprintln!("requestPasswordReset for {email}: {took:?}");
        answers.push(r);
    }
    assert!(answers.iter().all(|a| a == &answers[0]), "{answers:?}");
    assert_eq!(
        answers[0],
        json!({ "data": { "requestPasswordReset": true } })
    );
    // Only the account's owner gets mail: two reset messages, both to them (beside the
    // confirmation of the address they signed up with).
    let mut resets = 0;
    while resets < 2 {
        let mail = sink.next(Duration::from_secs(30)).await;
        assert!(mail.to.iter().any(|t| t.contains(&known)), "{mail:?}");
        if mail.text().contains("Subject: Confirm your email") {
            continue;
        }
        assert!(mail.text().contains("/reset/"), "{mail:?}");
        resets += 1;
    }
    assert!(sink.any_within(Duration::from_secs(2)).await.is_none());
    // Throttled per email (the fifth request in a window is the last), without locking
    // the owner out of logging in.
    for _ in 0..3 {
        mailing
            .ok(None, op("RequestPasswordReset"), ask(&known))
            .await;
    }
    let r = mailing.gql(op("RequestPasswordReset"), ask(&known)).await;
    assert_code(&r, "RATE_LIMITED");
    assert!(
        r["errors"][0]["extensions"]["retryAfter"]
            .as_u64()
            .is_some(),
        "{r}"
    );
    app.log_in(&known, PASSWORD).await;
    assert!(
        app.ok(Some(&owner), "{ viewer { user { email } } }", json!({}))
            .await["viewer"]["user"]["email"]
            == known.as_str()
    );
}

async fn a_reset_link_works_once_signs_out_everywhere_and_expires(app: App) {
    let tag = unique();
    let email = format!("forgetful-{tag}@example.org");
    let session = app.sign_up(&email).await;
    let api = app
        .ok(
            Some(&session),
            "mutation { createApiToken(label: \"script\") { token } }",
            json!({}),
        )
        .await["createApiToken"]["token"]
        .as_str()
        .expect("token")
        .to_owned();
    app.ok(None, op("RequestPasswordReset"), json!({ "email": email }))
        .await;
    let token = reset_link(&app, &email).await;
    let new_password = "a-new-password-for-sure";
    let weak = app
        .gql(
            op("ResetPassword"),
            json!({ "token": token, "password": "short" }),
        )
        .await;
    crate::harness::assert_bad_input(&weak, &["password"]);
    let d = app
        .ok(
            None,
            op("ResetPassword"),
            json!({ "token": token, "password": new_password }),
        )
        .await;
    assert_eq!(
        email_of(&app, &str_at(&d, "/resetPassword/token")).await,
        email
    );
    // Every earlier session and API token is revoked; the new session works.
    for old in [&session, &api] {
        assert_code(
            &app.gql_as(old, "{ viewer { user { email } } }", json!({}))
                .await,
            "UNAUTHENTICATED",
        );
    }
    let fresh = str_at(&d, "/resetPassword/token");
    app.ok(Some(&fresh), "{ viewer { user { email } } }", json!({}))
        .await;
    let r = app
        .gql(op("LogIn"), json!({ "email": email, "password": PASSWORD }))
        .await;
    assert_code(&r, "UNAUTHENTICATED");
    app.log_in(&email, new_password).await;
    // Used: CONFLICT. Unknown: NOT_FOUND. Expired: WINDOW_CLOSED.
    let again = json!({ "token": token, "password": "yet another password" });
    assert_code(&app.gql(op("ResetPassword"), again).await, "CONFLICT");
    let unknown =
        json!({ "token": format!("vr_{}", "0".repeat(64)), "password": "yet another password" });
    assert_code(&app.gql(op("ResetPassword"), unknown).await, "NOT_FOUND");
    app.ok(None, op("RequestPasswordReset"), json!({ "email": email }))
        .await;
    let late = reset_link(&app, &email).await;
    {
        use entity::password_reset;
        use sea_orm::{ColumnTrait, EntityTrait, QueryFilter, sea_query::Expr};
        let db = app.db.connect().await;
        let past = chrono::Utc::now() - chrono::Duration::minutes(1);
        password_reset::Entity::update_many()
            .col_expr(
                password_reset::Column::CreatedAt,
                Expr::value(past - chrono::Duration::minutes(30)),
            )
            .col_expr(password_reset::Column::ExpiresAt, Expr::value(past))
            .filter(
                password_reset::Column::TokenHash.eq(verdict::crypto::sha256_hex(late.as_bytes())),
            )
            .exec(&db.conn)
            .await
            .expect("expire the link");
    }
    let r = app
        .gql(
            op("ResetPassword"),
            json!({ "token": late, "password": "yet another password" }),
        )
        .await;
    assert_code(&r, "WINDOW_CLOSED");
}

async fn the_command_line_mails_invitations_with_send(app: App) {
    let admin = app.site_admin().await;
    let tag = unique();
    let event = import_tiny(&app, &admin, &tag).await;
    let mut sink = SmtpSink::start().await;
    let out = app
        .cli(&[
            "invite",
            "--event",
            &event,
            "--send",
            "--smtp-url",
            &sink.url,
        ])
        .await;
    assert!(out.success(), "invite --send: {out:?}");
    assert!(out.stderr.contains("2 messages sent"), "{out:?}");
    let mut to: Vec<String> = vec![];
    for _ in 0..2 {
        let mail = sink.next(Duration::from_secs(30)).await;
        assert!(mail.text().contains("/invite/vi_"), "{mail:?}");
        to.extend(mail.to);
    }
    to.sort();
    assert_eq!(
        to,
        [
            format!("<tiny-org-{tag}@example.org>"),
            format!("<tiny-part-{tag}@example.org>")
        ]
    );
    // Sent: a server with SMTP later does not send them again.
    let d = app
        .ok(Some(&admin), op("EventOutbox"), json!({ "event": event }))
        .await;
    let sent = d["event"]["outbox"]["edges"]
        .as_array()
        .expect("edges")
        .iter()
        .filter(|e| e["node"]["status"] == "sent")
        .count();
    assert_eq!(sent, 2, "{d}");
}

async fn a_mail_server_that_refuses_leaves_the_message_pending_with_its_error(app: App) {
    let admin = app.site_admin().await;
    let tag = unique();
    let event = import_tiny(&app, &admin, &tag).await;
    let sink = SmtpSink::refusing("451 4.3.0 try again later").await;
    let mailing = app.sibling(&["--smtp-url", &sink.url]).await;
    let email = format!("patient-{tag}@example.org");
    mailing
        .ok(
            Some(&admin),
            op("InviteToEvent"),
            json!({ "event": event, "emails": [email], "role": "JUDGE" }),
        )
        .await;
    // The worker tries at once, records the refusal and waits (30 s) before the next try.
    let deadline = Instant::now() + Duration::from_secs(20);
    let message = loop {
        let d = app
            .ok(
                Some(&admin),
                "query($e: String!) { event(slug: $e) { outbox(first: 10) { edges { node { to status attempts lastError sentAt } } } } }",
                json!({ "e": event }),
            )
            .await;
        let node = d["event"]["outbox"]["edges"][0]["node"].clone();
        // (The attempt is counted when the worker claims the message, the outcome after.)
        if node["lastError"].is_string() || Instant::now() > deadline {
            break node;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    assert_eq!(message["attempts"], 1, "{message}");
    assert_eq!(message["status"], "pending", "to be tried again: {message}");
    assert!(message["sentAt"].is_null(), "{message}");
    assert!(
        message["lastError"]
            .as_str()
            .is_some_and(|e| e.contains("451")),
        "the server's answer is kept: {message}"
    );
    // The link works meanwhile, copied from the outbox.
    let token = invitation_link(&app, &admin, &event, &email).await;
    app.ok(
        None,
        op("RedeemInvitation"),
        json!({ "token": token, "password": PASSWORD }),
    )
    .await;
}

async fn reset_requests_are_throttled_per_address(app: App) {
    let tag = unique();
    let ask = async |email: String, from: &str| {
        let body = json!({ "query": op("RequestPasswordReset"), "variables": { "email": email } });
        app.post_raw(
            body.to_string(),
            "application/json",
            &[("x-forwarded-for", from)],
        )
        .await
        .json()
    };
    // One address may ask for 20 resets per window, whichever addresses they are for.
    let answers =
        join_all((0..20).map(|i| ask(format!("someone-{i}-{tag}@example.org"), "203.0.113.7")))
            .await;
    for a in &answers {
        assert_eq!(a["data"]["requestPasswordReset"], true, "{a}");
    }
    let r = ask(format!("one-more-{tag}@example.org"), "203.0.113.7").await;
    assert_code(&r, "RATE_LIMITED");
    // Another address is not held up by it.
    let r = ask(format!("one-more-{tag}@example.org"), "198.51.100.9").await;
    assert_eq!(r["data"]["requestPasswordReset"], true, "{r}");
}

async fn invitation_mails_are_limited_per_address_and_per_event(app: App) {
    let admin = app.site_admin().await;
    let tag = unique();
    let event = import_tiny(&app, &admin, &tag).await;
    let invite = |emails: Vec<String>| json!({ "event": event, "emails": emails, "role": "JUDGE" });

    // One address receives five invitation mails per window: the invitation and four
    // resends; the sixth is refused and writes nothing.
    let x = format!("x-{tag}@example.org");
    let sent = app
        .ok(Some(&admin), op("InviteToEvent"), invite(vec![x.clone()]))
        .await;
    let id = json!({ "id": str_at(&sent, "/inviteToEvent/0/id") });
    for _ in 0..4 {
        app.ok(Some(&admin), op("ResendInvitation"), id.clone())
            .await;
    }
    let head = app.audit_head().await;
    let refused = app.gql_as(&admin, op("ResendInvitation"), id.clone()).await;
    assert_code(&refused, "RATE_LIMITED");
    assert!(
        refused["errors"][0]["extensions"]["retryAfter"].as_u64() > Some(0),
        "{refused}"
    );
    let refused = app
        .gql_as(&admin, op("InviteToEvent"), invite(vec![x.clone()]))
        .await;
    assert_code(&refused, "RATE_LIMITED");
    assert_eq!(
        app.audit_head().await,
        head,
        "a refused invitation wrote nothing"
    );

    // The event sends 2,000 invitation mails per window in all (5 so far): three batches
    // of 500, then one of 496 would pass the limit and is refused whole; 495 reach it
    // exactly, and then nothing more goes out.
    let batch = |n: usize, from: usize| -> Vec<String> {
        (from..from + n)
            .map(|i| format!("crowd-{i}-{tag}@example.org"))
            .collect()
    };
    let code = |r: &Value| error_code(r).unwrap_or_else(|| "no error".into());
    for b in 0..3 {
        let r = app
            .gql_as(&admin, op("InviteToEvent"), invite(batch(500, b * 500)))
            .await;
        assert_eq!(code(&r), "no error", "batch {b}");
    }
    let head = app.audit_head().await;
    let over = app
        .gql_as(&admin, op("InviteToEvent"), invite(batch(496, 1500)))
        .await;
    assert_eq!(code(&over), "RATE_LIMITED");
    assert_eq!(
        app.audit_head().await,
        head,
        "a refused batch wrote nothing"
    );
    let r = app
        .gql_as(&admin, op("InviteToEvent"), invite(batch(495, 1500)))
        .await;
    assert_eq!(code(&r), "no error");
    let more = app
        .gql_as(
            &admin,
            op("InviteToEvent"),
            invite(vec![format!("late-{tag}@example.org")]),
        )
        .await;
    assert_eq!(code(&more), "RATE_LIMITED");
}
