use super::*;

pub(super) async fn password_reset_tells_nobody_who_has_an_account(app: App) {
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

pub(super) async fn a_reset_link_works_once_signs_out_everywhere_and_expires(app: App) {
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

pub(super) async fn the_command_line_mails_invitations_with_send(app: App) {
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

pub(super) async fn a_mail_server_that_refuses_leaves_the_message_pending_with_its_error(app: App) {
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

pub(super) async fn reset_requests_are_throttled_per_address(app: App) {
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

pub(super) async fn invitation_mails_are_limited_per_address_and_per_event(app: App) {
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
