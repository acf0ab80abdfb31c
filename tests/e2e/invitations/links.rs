use super::*;

pub(super) async fn imported_person_gets_an_invitation_over_smtp_sets_a_password_and_logs_in(
    app: App,
) {
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
pub(super) async fn expire_invitations(app: &App, email: &str) {
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

pub(super) async fn a_link_works_once_and_not_after_expiry_revocation_or_renewal(app: App) {
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

pub(super) async fn fifty_concurrent_redemptions_give_one_membership(app: App) {
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

pub(super) async fn an_existing_account_redeems_only_when_signed_in_as_itself(app: App) {
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

pub(super) async fn only_organizers_invite_and_read_their_events_outbox(app: App) {
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

pub(super) async fn register_for_event_obeys_the_events_registration(app: App) {
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

pub(super) async fn imported_people_are_invited_from_the_command_line(app: App) {
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
