//! A judge's standing sign-in (issue 28): organizers issue each judge a link and a short
//! code; either signs the judge in like `logIn`, into a session that only scores. Reissuing
//! or revoking ends the old one and its sessions; a lost judge role or closed judging
//! refuses it; it is throttled per client and per link, and audited.

use chrono::Utc;
use serde_json::{Value, json};

use crate::harness::{App, PASSWORD, assert_code, op, rfc3339, str_at, unique};

e2e! {
    a_judge_signs_in_with_the_link_or_the_code_and_only_scores,
    reissue_revoke_role_loss_and_closed_judging_end_it,
    signing_in_is_throttled_per_client_and_per_link ["--login-attempts", "2"],
}

/// An event with an organizer and a judge (who has a password too).
struct Judged {
    org: String,
    event: String,
    judge_email: String,
    judge_password_session: String,
    /// The judge's membership id.
    judge: String,
}

async fn judged(app: &App) -> Judged {
    let admin = app.site_admin().await;
    let t = unique();
    let event = format!("jsi-{t}");
    app.create_event(&admin, &event, 3).await;
    let org_email = format!("org-{t}@example.org");
    let org = app.sign_up(&org_email).await;
    app.grant(&admin, &event, &org_email, "ORGANIZER").await;
    let judge_email = format!("judge-{t}@example.org");
    let judge_password_session = app.sign_up(&judge_email).await;
    let judge = app.grant(&org, &event, &judge_email, "JUDGE").await;
    Judged {
        org,
        event,
        judge_email,
        judge_password_session,
        judge,
    }
}

async fn issue(app: &App, j: &Judged) -> (String, String) {
    let d = app
        .ok(
            Some(&j.org),
            op("IssueJudgeSignIn"),
            json!({ "event": j.event, "judge": j.judge }),
        )
        .await;
    (
        str_at(&d, "/issueJudgeSignIn/link"),
        str_at(&d, "/issueJudgeSignIn/code"),
    )
}

fn token_of(link: &str) -> String {
    link.rsplit('/').next().unwrap_or_default().to_owned()
}

async fn by_link(app: &App, link: &str) -> Value {
    app.gql(op("SignInAsJudge"), json!({ "token": token_of(link) }))
        .await
}

async fn link_state(app: &App, link: &str) -> Value {
    app.ok(
        None,
        "query($t: String!) { link(kind: JUDGE_SIGN_IN, token: $t) { state role email eventSlug eventName } }",
        json!({ "t": token_of(link) }),
    )
    .await["link"]
        .clone()
}

async fn a_judge_signs_in_with_the_link_or_the_code_and_only_scores(app: App) {
    let j = judged(&app).await;
    let probe = app.probe().await;

    // Only organizers issue: the judge and strangers are refused.
    let vars = json!({ "event": j.event, "judge": j.judge });
    assert_code(
        &app.gql_as(
            &j.judge_password_session,
            op("IssueJudgeSignIn"),
            vars.clone(),
        )
        .await,
        "FORBIDDEN",
    );
    let d = app
        .ok(Some(&j.org), op("IssueJudgeSignIn"), vars.clone())
        .await;
    let link = str_at(&d, "/issueJudgeSignIn/link");
    let code = str_at(&d, "/issueJudgeSignIn/code");
    assert!(
        link.starts_with(&format!("{}/judge-sign-in/", app.base)),
        "{link}"
    );
    assert_eq!(d["issueJudgeSignIn"]["email"], j.judge_email.as_str());
    assert_eq!(code.len(), 9, "XXXX-XXXX: {code}");
    assert!(
        str_at(&d, "/issueJudgeSignIn/qrSvg").contains("<svg"),
        "a QR code of the link"
    );
    // Only hashes are stored.
    assert!(probe.tables_holding(&token_of(&link)).await.is_empty());
    assert!(
        probe
            .tables_holding(&code.replace('-', ""))
            .await
            .is_empty()
    );
    // Organizers see that it is live, never the link again.
    let seen = app
        .ok(
            Some(&j.org),
            "query($e: String!) { event(slug: $e) { members(first: 50) { nodes { id role standingSignIn { issuedAt lastUsedAt } } } } }",
            json!({ "e": j.event }),
        )
        .await;
    let judge_row = seen["event"]["members"]["nodes"]
        .as_array()
        .expect("members")
        .iter()
        .find(|m| m["id"] == j.judge.as_str())
        .cloned()
        .expect("the judge is listed");
    assert!(
        judge_row["standingSignIn"]["issuedAt"].is_string(),
        "{judge_row}"
    );
    assert!(judge_row["standingSignIn"]["lastUsedAt"].is_null());

    // The link says what it is before anything is used; reading it writes nothing.
    let before = probe.snapshot().await;
    let state = link_state(&app, &link).await;
    assert_eq!(state["state"], "VALID", "{state}");
    assert_eq!(state["role"], "JUDGE");
    assert_eq!(state["eventSlug"], j.event.as_str());
    assert!(
        state["email"].as_str().is_some_and(|e| e.contains("***@")),
        "{state}"
    );
    probe
        .nothing_written_since(&before, &[], "link(JUDGE_SIGN_IN)")
        .await;

    // The link signs in like logIn: a bearer token and the session cookie.
    let resp = app
        .gql_resp(
            None,
            op("SignInAsJudge"),
            json!({ "token": token_of(&link) }),
        )
        .await;
    let body = resp.json();
    assert!(body.get("errors").is_none(), "{body}");
    assert!(
        resp.headers_all("set-cookie")
            .iter()
            .any(|c| c.starts_with("verdict_session=vs_") && c.contains("HttpOnly")),
        "{:?}",
        resp.headers_all("set-cookie")
    );
    let session = str_at(&body, "/data/signInAsJudge/token");
    // It reaches the judge's queue.
    let q = app
        .ok(
            Some(&session),
            "query($e: String!) { event(slug: $e) { myAssignments { id } } viewer { user { email } } }",
            json!({ "e": j.event }),
        )
        .await;
    assert!(q["event"]["myAssignments"].is_array(), "{q}");
    assert_eq!(
        q["viewer"]["user"]["email"],
        j.judge_email.as_str(),
        "the judge"
    );

    // The code, typed loosely, signs in too.
    let typed = format!(" {} ", code.to_lowercase().replace('-', " - "));
    let by_code = app
        .ok(
            None,
            op("SignInAsJudgeByCode"),
            json!({ "event": j.event, "code": typed }),
        )
        .await;
    let code_session = str_at(&by_code, "/signInAsJudgeByCode/token");
    let who = app
        .ok(
            Some(&code_session),
            "{ viewer { user { email } } }",
            json!({}),
        )
        .await;
    assert_eq!(who["viewer"]["user"]["email"], j.judge_email.as_str());
    assert_code(
        &app.gql(
            op("SignInAsJudgeByCode"),
            json!({ "event": j.event, "code": "AAAA-AAAA" }),
        )
        .await,
        "NOT_FOUND",
    );
    assert_code(
        &app.gql(
            op("SignInAsJudgeByCode"),
            json!({ "event": "no-such-event", "code": code }),
        )
        .await,
        "NOT_FOUND",
    );

    // Never a password reset in disguise: nothing account-level runs on such a session,
    // and each refusal says why and writes nothing.
    let before = probe.snapshot().await;
    for (label, query, vars) in [
        (
            "changePassword",
            op("ChangePassword"),
            json!({ "currentPassword": PASSWORD, "newPassword": "a-brand-new-password-1" }),
        ),
        (
            "changeEmail",
            "mutation { changeEmail(newEmail: \"taken-over@example.org\", currentPassword: \"x\") }",
            json!({}),
        ),
        (
            "createApiToken",
            "mutation { createApiToken(label: \"mine\") { token } }",
            json!({}),
        ),
        (
            "updateProfile",
            "mutation { updateProfile(displayName: \"Someone else\") { id } }",
            json!({}),
        ),
        (
            "issueJudgeSignIn",
            op("IssueJudgeSignIn"),
            json!({ "event": j.event, "judge": j.judge }),
        ),
    ] {
        let r = app.gql_as(&session, query, vars).await;
        assert_code(&r, "FORBIDDEN");
        assert!(
            str_at(&r, "/errors/0/message").contains("sign-in link or code"),
            "{label}: {r}"
        );
    }
    probe
        .nothing_written_since(&before, &[], "account changes on a judge's link session")
        .await;
    // The password still works, and the password's session can do what the link's cannot.
    app.log_in(&j.judge_email, PASSWORD).await;

    // It acts only as the judge of that event: a role elsewhere does not come with it.
    let admin = app.site_admin().await;
    let other = format!("other-{}", unique());
    app.create_event(&admin, &other, 3).await;
    app.grant(&admin, &other, &j.judge_email, "ORGANIZER").await;
    let audit_read = "query($e: String!) { event(slug: $e) { auditLog(first: 1) { totalCount } } }";
    let full = app
        .gql_as(&j.judge_password_session, audit_read, json!({ "e": other }))
        .await;
    assert!(full.get("errors").is_none(), "{full}");
    let scoped = app
        .gql_as(&session, audit_read, json!({ "e": other }))
        .await;
    assert!(
        scoped.get("errors").is_some(),
        "a judge's link session reads no organizer data elsewhere: {scoped}"
    );
    // Nor does it show the account's other roles, events or API tokens.
    let mine = "{ viewer { memberships { id event { slug } } myEvents { roles event { slug } } apiTokens { id } } }";
    let all = app
        .ok(Some(&j.judge_password_session), mine, json!({}))
        .await;
    assert_eq!(
        all["viewer"]["memberships"].as_array().map(Vec::len),
        Some(2),
        "{all}"
    );
    let only = app.ok(Some(&session), mine, json!({})).await;
    assert_eq!(
        only["viewer"]["memberships"],
        json!([{ "id": j.judge, "event": { "slug": j.event } }]),
        "{only}"
    );
    assert_eq!(
        only["viewer"]["myEvents"],
        json!([{ "roles": ["JUDGE"], "event": { "slug": j.event } }]),
        "{only}"
    );
    assert_eq!(only["viewer"]["apiTokens"], json!([]), "{only}");

    // Its use is audited, with the issue, in the event's log.
    let actions = crate::audit::audit_log(&app, &j.org, &j.event).await;
    let count = |a: &str| actions.iter().filter(|n| n["action"] == a).count();
    assert_eq!(count("judge_sign_in.issued"), 1);
    assert_eq!(count("judge_sign_in.used"), 2, "link and code");
    let seen = app
        .ok(
            Some(&j.org),
            "query($e: String!) { event(slug: $e) { members(first: 50) { nodes { id standingSignIn { lastUsedAt } } } } }",
            json!({ "e": j.event }),
        )
        .await;
    assert!(
        seen["event"]["members"]["nodes"]
            .as_array()
            .expect("members")
            .iter()
            .any(|m| m["id"] == j.judge.as_str() && m["standingSignIn"]["lastUsedAt"].is_string()),
        "{seen}"
    );
}

async fn reissue_revoke_role_loss_and_closed_judging_end_it(app: App) {
    let j = judged(&app).await;
    let (first, _) = issue(&app, &j).await;
    let s1 = str_at(&by_link(&app, &first).await, "/data/signInAsJudge/token");

    // Reissued: the old link stops working and so do the sessions it started.
    let (second, second_code) = issue(&app, &j).await;
    assert_ne!(first, second);
    let old = by_link(&app, &first).await;
    assert_code(&old, "FORBIDDEN");
    assert!(
        str_at(&old, "/errors/0/message").contains("revoked or replaced"),
        "{old}"
    );
    assert_eq!(link_state(&app, &first).await["state"], "REVOKED");
    let r = app
        .gql_resp(Some(&s1), "{ viewer { user { id } } }", json!({}))
        .await;
    assert_eq!(r.status, 401, "the old link's session ended: {}", r.json());
    let s2 = str_at(&by_link(&app, &second).await, "/data/signInAsJudge/token");

    // Revoked: the link and code stop, the session ends; a second revoke is CONFLICT.
    let vars = json!({ "event": j.event, "judge": j.judge });
    app.ok(Some(&j.org), op("RevokeJudgeSignIn"), vars.clone())
        .await;
    assert_code(&by_link(&app, &second).await, "FORBIDDEN");
    assert_code(
        &app.gql(
            op("SignInAsJudgeByCode"),
            json!({ "event": j.event, "code": second_code }),
        )
        .await,
        "FORBIDDEN",
    );
    let r = app
        .gql_resp(Some(&s2), "{ viewer { user { id } } }", json!({}))
        .await;
    assert_eq!(r.status, 401);
    assert_code(
        &app.gql_as(&j.org, op("RevokeJudgeSignIn"), vars.clone())
            .await,
        "CONFLICT",
    );
    // The password session was never touched.
    app.ok(
        Some(&j.judge_password_session),
        "{ viewer { user { id } } }",
        json!({}),
    )
    .await;

    // The judge role gone: the link says so and refuses.
    let (third, _) = issue(&app, &j).await;
    let s3 = str_at(&by_link(&app, &third).await, "/data/signInAsJudge/token");
    app.ok(
        Some(&j.org),
        op("RevokeRole"),
        json!({ "event": j.event, "email": j.judge_email, "role": "JUDGE" }),
    )
    .await;
    let lost = by_link(&app, &third).await;
    assert_code(&lost, "FORBIDDEN");
    assert!(
        str_at(&lost, "/errors/0/message").contains("no longer a judge"),
        "{lost}"
    );
    assert_eq!(link_state(&app, &third).await["state"], "REVOKED");
    // The session it started no longer reaches the judge's work.
    let q = app
        .gql_as(
            &s3,
            "query($e: String!) { event(slug: $e) { auditLog(first: 1) { totalCount } } }",
            json!({ "e": j.event }),
        )
        .await;
    assert!(q.get("errors").is_some(), "{q}");

    // Judging closed: WINDOW_CLOSED, and the link reads EXPIRED.
    let judge = app.grant(&j.org, &j.event, &j.judge_email, "JUDGE").await;
    let j = Judged { judge, ..j };
    let (fourth, _) = issue(&app, &j).await;
    let now = Utc::now();
    app.ok(
        Some(&j.org),
        op("UpdateEvent"),
        json!({ "event": j.event, "input": {
            "submissionsOpen": rfc3339(now - chrono::Duration::days(3)),
            "submissionsClose": rfc3339(now - chrono::Duration::days(2)),
            "judgingOpen": rfc3339(now - chrono::Duration::days(2)),
            "judgingClose": rfc3339(now - chrono::Duration::hours(1)),
        }}),
    )
    .await;
    let closed = by_link(&app, &fourth).await;
    assert_code(&closed, "WINDOW_CLOSED");
    assert!(
        str_at(&closed, "/errors/0/message").contains("judging has closed"),
        "{closed}"
    );
    assert_eq!(link_state(&app, &fourth).await["state"], "EXPIRED");

    let actions = crate::audit::audit_log(&app, &j.org, &j.event).await;
    let count = |a: &str| actions.iter().filter(|n| n["action"] == a).count();
    assert_eq!(count("judge_sign_in.issued"), 4);
    assert_eq!(count("judge_sign_in.revoked"), 1);
    assert_eq!(count("judge_sign_in.used"), 3);
}

async fn signing_in_is_throttled_per_client_and_per_link(app: App) {
    let j = judged(&app).await;
    let (revoked, _) = issue(&app, &j).await;
    let (link, code) = issue(&app, &j).await;

    // Per link: a replaced link, tried again and again, is stopped after the limit (2).
    assert_code(&by_link(&app, &revoked).await, "FORBIDDEN");
    assert_code(&by_link(&app, &revoked).await, "FORBIDDEN");
    let stopped = by_link(&app, &revoked).await;
    assert_code(&stopped, "RATE_LIMITED");
    assert!(
        stopped["errors"][0]["extensions"]["retryAfter"].as_u64() > Some(0),
        "{stopped}"
    );
    // ... while the judge's live link still works (and gives its slot back).
    by_link(&app, &link).await["data"]["signInAsJudge"]["token"]
        .as_str()
        .expect("the live link signs in");

    // Per client: guessing codes from one address stops at 5 × the limit, and then even
    // the right code waits.
    let probe = app.probe().await;
    let before = probe.snapshot().await;
    let mut refused_after = None;
    for i in 0..30 {
        let r = app
            .gql(
                op("SignInAsJudgeByCode"),
                json!({ "event": j.event, "code": format!("ZZZZ-{:04}", i) }),
            )
            .await;
        if r["errors"][0]["extensions"]["code"] == "RATE_LIMITED" {
            refused_after = Some(i);
            break;
        }
        assert_code(&r, "NOT_FOUND");
    }
    // Two failures of the replaced link counted for this address already.
    assert_eq!(refused_after, Some(8), "10 attempts per address");
    assert_code(
        &app.gql(
            op("SignInAsJudgeByCode"),
            json!({ "event": j.event, "code": code }),
        )
        .await,
        "RATE_LIMITED",
    );
    // Refusals write only the throttle's counts.
    probe
        .nothing_written_since(&before, &["login_throttle"], "refused judge sign-ins")
        .await;
}
