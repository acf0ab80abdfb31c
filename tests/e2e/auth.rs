//! Signing up, logging in and out, log-in throttling, API tokens, and the session cookie
//! with its CSRF rule.

use serde_json::{Value, json};

use crate::harness::{
    App, PASSWORD, assert_bad_input, assert_code, data, error_code, error_message, op, str_at,
};

const VIEWER: &str = "{ viewer { user { id email } apiTokens { id label prefix revokedAt } } }";

/// The token no longer authenticates: `viewer` is null, or the request is refused as
/// UNAUTHENTICATED.
#[track_caller]
fn assert_signed_out(resp: &Value) {
    let null_viewer = resp.get("errors").is_none() && resp["data"]["viewer"].is_null();
    let refused = error_code(resp).as_deref() == Some("UNAUTHENTICATED");
    assert!(null_viewer || refused, "the token no longer works: {resp}");
}

async fn viewer_with(app: &App, token: &str) -> Value {
    let r = app.gql_resp(Some(token), VIEWER, json!({})).await;
    assert!(r.status < 500, "{} {}", r.status, r.text);
    // A 401 without a JSON body counts as UNAUTHENTICATED.
    let code = if r.status == 401 {
        "UNAUTHENTICATED"
    } else {
        "?"
    };
    r.try_json().unwrap_or_else(|| json!({ "status": r.status, "text": r.text, "errors": [{ "extensions": { "code": code } }] }))
}

e2e! {
    sign_up_log_in_log_out,
    log_in_throttling ["--login-attempts", "3"],
    api_tokens,
    session_cookie_and_csrf,
    a_read_token_queries_and_subscribes_but_never_mutates,
    an_api_token_stops_at_its_expiry,
    an_unconfirmed_address_is_granted_no_role_until_its_link_is_used,
    password_and_email_changes_need_the_current_password,
}

async fn sign_up_log_in_log_out(app: App) {
    let r = app
        .gql(
            op("SignUp"),
            json!({ "email": "Ada@Example.org", "password": PASSWORD, "displayName": "Ada" }),
        )
        .await;
    let d = data(&r);
    let user_id = str_at(d, "/signUp/user/id");
    let first = str_at(d, "/signUp/token");
    assert_eq!(d["signUp"]["user"]["displayName"], "Ada");
    let v = app.gql_as(&first, VIEWER, json!({})).await;
    assert_eq!(data(&v)["viewer"]["user"]["id"], json!(user_id));
    let email = str_at(&v, "/data/viewer/user/email");
    assert!(email.eq_ignore_ascii_case("ada@example.org"), "{email}");

    // Emails are case-insensitive identities.
    let r = app
        .gql(
            op("SignUp"),
            json!({ "email": "ada@example.ORG", "password": PASSWORD, "displayName": "Imposter" }),
        )
        .await;
    assert_code(&r, "CONFLICT");

    let r = app
        .gql(
            op("LogIn"),
            json!({ "email": "ADA@example.org", "password": PASSWORD }),
        )
        .await;
    let second = str_at(data(&r), "/logIn/token");
    assert_eq!(data(&r)["logIn"]["user"]["id"], json!(user_id));
    assert_ne!(first, second, "each log-in is its own session");

    // Wrong password and unknown email look the same.
    let bad_pw = app
        .gql(
            op("LogIn"),
            json!({ "email": "ada@example.org", "password": "not the password" }),
        )
        .await;
    assert_code(&bad_pw, "UNAUTHENTICATED");
    let unknown = app
        .gql(
            op("LogIn"),
            json!({ "email": "nobody@example.org", "password": PASSWORD }),
        )
        .await;
    assert_code(&unknown, "UNAUTHENTICATED");
    assert_eq!(
        error_message(&bad_pw),
        error_message(&unknown),
        "no account enumeration"
    );

    // Logging out ends that session only.
    let r = app.gql_as(&second, op("LogOut"), json!({})).await;
    assert_eq!(data(&r)["logOut"], true);
    assert_signed_out(&viewer_with(&app, &second).await);
    let v = app.gql_as(&first, VIEWER, json!({})).await;
    assert_eq!(
        data(&v)["viewer"]["user"]["id"],
        json!(user_id),
        "the other session lives on"
    );

    // Anonymous log-out, and garbage tokens.
    assert_code(&app.gql(op("LogOut"), json!({})).await, "UNAUTHENTICATED");
    assert_signed_out(&viewer_with(&app, "garbage").await);
    assert_signed_out(&viewer_with(&app, &format!("{first}x")).await);

    // A weak password is bad input.
    let r = app
        .gql(
            op("SignUp"),
            json!({ "email": "weak@example.org", "password": "123", "displayName": "Weak" }),
        )
        .await;
    assert_bad_input(&r, &["password"]);
    // An empty display name too.
    let r = app
        .gql(
            op("SignUp"),
            json!({ "email": "anon@example.org", "password": PASSWORD, "displayName": "" }),
        )
        .await;
    assert_bad_input(&r, &["displayName"]);
}

async fn log_in_throttling(app: App) {
    app.sign_up("throttled@example.org").await;
    for i in 0..3 {
        let r = app
            .gql(
                op("LogIn"),
                json!({ "email": "throttled@example.org", "password": format!("wrong {i}") }),
            )
            .await;
        assert_code(&r, "UNAUTHENTICATED");
    }
    // Even the right password is refused now, with a hint when to retry.
    let r = app
        .gql(
            op("LogIn"),
            json!({ "email": "throttled@example.org", "password": PASSWORD }),
        )
        .await;
    assert_code(&r, "RATE_LIMITED");
    let retry = r
        .pointer("/errors/0/extensions/retryAfter")
        .and_then(Value::as_f64);
    assert!(
        retry.is_some_and(|s| s > 0.0 && s <= 15.0 * 60.0),
        "retryAfter seconds: {r}"
    );
    assert!(r["data"].is_null() || r["data"]["logIn"].is_null(), "{r}");
    // Further attempts stay refused.
    let r = app
        .gql(
            op("LogIn"),
            json!({ "email": "throttled@example.org", "password": "wrong again" }),
        )
        .await;
    assert_code(&r, "RATE_LIMITED");
    // The count lives in the database: a second server process refuses as well.
    let other = app.sibling(&["--login-attempts", "3"]).await;
    let r = other
        .gql(
            op("LogIn"),
            json!({ "email": "throttled@example.org", "password": PASSWORD }),
        )
        .await;
    assert_code(&r, "RATE_LIMITED");
    // The owner is not locked out by a guesser: the count is per account and address
    // (see hardening.rs for addresses other than this one). Another account from this
    // address still logs in: the address budget is five times the per-account one.
    app.sign_up("bystander@example.org").await;
    app.log_in("bystander@example.org", PASSWORD).await;
}

async fn api_tokens(app: App) {
    let (session, user_id) = app.sign_up_full("tokens@example.org").await;
    let r = app
        .gql_as(&session, op("CreateApiToken"), json!({ "label": "ci" }))
        .await;
    let d = data(&r);
    let token = str_at(d, "/createApiToken/token");
    let token_id = str_at(d, "/createApiToken/apiToken/id");
    let prefix = str_at(d, "/createApiToken/apiToken/prefix");
    assert_eq!(d["createApiToken"]["apiToken"]["label"], "ci");
    assert!(
        token.starts_with(&prefix) && prefix.len() < token.len(),
        "the prefix identifies the token: {prefix} / {token}"
    );

    // The token authenticates as its user; the list shows it without the secret.
    let v = app.gql_as(&token, VIEWER, json!({})).await;
    assert_eq!(data(&v)["viewer"]["user"]["id"], json!(user_id));
    let v = app.gql_as(&session, VIEWER, json!({})).await;
    let listed = data(&v)["viewer"]["apiTokens"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    assert!(
        listed
            .iter()
            .any(|t| t["id"] == json!(token_id) && t["label"] == "ci"),
        "{v}"
    );
    assert!(
        !v.to_string().contains(&token),
        "the raw token is shown once only"
    );

    // The CLI mints one too: one line, nothing else.
    let out = app
        .cli(&[
            "token",
            "mint",
            "--email",
            "tokens@example.org",
            "--name",
            "from-cli",
        ])
        .await;
    assert!(out.success(), "{out:?}");
    let lines: Vec<&str> = out
        .stdout
        .lines()
        .filter(|l| !l.trim().is_empty())
        .collect();
    assert_eq!(lines.len(), 1, "only the token on stdout: {:?}", out.stdout);
    let minted = lines[0].trim().to_string();
    let v = app.gql_as(&minted, VIEWER, json!({})).await;
    assert_eq!(data(&v)["viewer"]["user"]["id"], json!(user_id));
    let labels: Vec<Value> = data(&v)["viewer"]["apiTokens"]
        .as_array()
        .cloned()
        .unwrap_or_default()
        .iter()
        .map(|t| t["label"].clone())
        .collect();
    assert!(labels.contains(&json!("from-cli")), "{labels:?}");
    let out = app
        .cli(&[
            "token",
            "mint",
            "--email",
            "ghost@example.org",
            "--name",
            "x",
        ])
        .await;
    assert!(!out.success(), "no token for an unknown user");
    assert!(out.stdout.trim().is_empty());

    // Revoking it ends it; the session and the other token keep working.
    let r = app
        .gql_as(&session, op("RevokeApiToken"), json!({ "id": token_id }))
        .await;
    data(&r);
    assert_signed_out(&viewer_with(&app, &token).await);
    let v = app.gql_as(&minted, VIEWER, json!({})).await;
    assert_eq!(data(&v)["viewer"]["user"]["id"], json!(user_id));
    let v = app.gql_as(&session, VIEWER, json!({})).await;
    let listed = data(&v)["viewer"]["apiTokens"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let revoked = listed.iter().find(|t| t["id"] == json!(token_id));
    assert!(
        revoked.is_none_or(|t| t["revokedAt"].is_string()),
        "a revoked token is not listed as active: {v}"
    );
}

async fn session_cookie_and_csrf(app: App) {
    let (_, user_id) = app.sign_up_full("cookie@example.org").await;
    let body = json!({ "query": op("LogIn"), "variables": { "email": "cookie@example.org", "password": PASSWORD } });
    let r = app
        .post_raw(body.to_string(), "application/json", &[])
        .await;
    assert_eq!(r.status, 200, "{}", r.text);
    let set = r.headers_all("set-cookie");
    let session = set
        .iter()
        .find(|c| c.starts_with("verdict_session="))
        .unwrap_or_else(|| panic!("logIn sets verdict_session: {set:?}"));
    let lower = session.to_lowercase();
    assert!(lower.contains("httponly"), "HttpOnly: {session}");
    assert!(
        lower.contains("samesite=strict"),
        "SameSite=Strict: {session}"
    );
    let cookie = session.split(';').next().unwrap_or_default().to_string();

    // Queries work with the cookie alone.
    let q = json!({ "query": VIEWER }).to_string();
    let r = app
        .post_raw(q.clone(), "application/json", &[("cookie", &cookie)])
        .await;
    assert_eq!(
        r.json()["data"]["viewer"]["user"]["id"],
        json!(user_id),
        "{}",
        r.text
    );

    // A mutation by cookie without the CSRF header is refused and writes nothing.
    let probe = app.probe().await;
    let before = probe.snapshot().await;
    let m = json!({ "query": op("CreateApiToken"), "variables": { "label": "csrf" } }).to_string();
    let r = app
        .post_raw(m.clone(), "application/json", &[("cookie", &cookie)])
        .await;
    let refused = r.status == 403
        || r.try_json()
            .is_some_and(|b| error_code(&b).as_deref() == Some("FORBIDDEN"));
    assert!(
        refused,
        "cookie mutation without X-Verdict-Csrf: {} {}",
        r.status, r.text
    );
    let r = app
        .post_raw(q.clone(), "application/json", &[("cookie", &cookie)])
        .await;
    assert_eq!(
        r.json()["data"]["viewer"]["apiTokens"],
        json!([]),
        "no token was created"
    );
    probe
        .nothing_written_since(&before, &[], "a cookie mutation without the CSRF header")
        .await;

    // With the header it runs.
    let r = app
        .post_raw(
            m,
            "application/json",
            &[("cookie", &cookie), ("x-verdict-csrf", "1")],
        )
        .await;
    assert!(
        r.json()["data"]["createApiToken"]["token"].is_string(),
        "{}",
        r.text
    );

    // Logging out by cookie ends the cookie session.
    let out = json!({ "query": op("LogOut") }).to_string();
    let r = app
        .post_raw(
            out,
            "application/json",
            &[("cookie", &cookie), ("x-verdict-csrf", "1")],
        )
        .await;
    assert_eq!(r.json()["data"]["logOut"], true, "{}", r.text);
    let r = app
        .post_raw(q.clone(), "application/json", &[("cookie", &cookie)])
        .await;
    assert!(r.status < 500);
    let body = r.try_json().unwrap_or(Value::Null);
    assert!(
        body["data"]["viewer"].is_null() || error_code(&body).as_deref() == Some("UNAUTHENTICATED"),
        "the cookie no longer works: {}",
        r.text
    );
    // The refusal of the ended session's cookie drops it (else every page, public ones
    // too, would be refused until the browser forgot it); the page asks again without.
    assert_eq!(r.status, 401, "{}", r.text);
    let set = r.headers_all("set-cookie");
    assert!(
        set.iter()
            .any(|c| c.starts_with("verdict_session=;") && c.to_lowercase().contains("max-age=0")),
        "the dead cookie is cleared: {set:?}"
    );
    let r = app.post_raw(q, "application/json", &[]).await;
    assert_eq!(r.json()["data"]["viewer"], Value::Null, "{}", r.text);
}

/// The error code of a websocket answer: an `error` message, or a `next` with errors.
fn ws_code(msg: &Value) -> &str {
    let errors = if msg["type"] == "error" {
        &msg["payload"]
    } else {
        &msg["payload"]["errors"]
    };
    errors[0]["extensions"]["code"].as_str().unwrap_or("")
}

const CREATE_TOKEN: &str = "mutation($l: String!, $s: ApiTokenScope, $e: DateTime) {
    createApiToken(label: $l, scope: $s, expiresAt: $e) { token apiToken { scope expiresAt } } }";

async fn a_read_token_queries_and_subscribes_but_never_mutates(app: App) {
    let s = app.scenario().await;
    let d = app
        .ok(
            Some(&s.organizer_a),
            CREATE_TOKEN,
            json!({ "l": "dashboard", "s": "READ" }),
        )
        .await;
    assert_eq!(d["createApiToken"]["apiToken"]["scope"], "READ");
    let read = str_at(&d, "/createApiToken/token");
    // It reads what its owner reads.
    let v = app.gql_as(&read, VIEWER, json!({})).await;
    assert!(data(&v)["viewer"]["user"]["email"].is_string(), "{v}");
    app.ok(
        Some(&read),
        "query($e: String!) { event(slug: $e) { judgingProgress { assignments } } }",
        json!({ "e": s.event_a }),
    )
    .await;
    // No mutation runs with it, over HTTP (alone, picked from a document beside a query, or
    // in a batch) or over a websocket; nothing is written.
    let head = app.audit_head().await;
    let mint = json!({ "l": "escalate", "s": "WRITE" });
    assert_code(
        &app.gql_as(&read, CREATE_TOKEN, mint.clone()).await,
        "FORBIDDEN",
    );
    let two = "query Q { viewer { user { id } } } mutation M { logOut }";
    let r = app
        .post_raw(
            json!({ "query": two, "operationName": "M" }).to_string(),
            "application/json",
            &[("authorization", &format!("Bearer {read}"))],
        )
        .await;
    assert_code(&r.json(), "FORBIDDEN");
    let r = app
        .post_raw(
            json!([{ "query": VIEWER }, { "query": CREATE_TOKEN, "variables": mint }]).to_string(),
            "application/json",
            &[("authorization", &format!("Bearer {read}"))],
        )
        .await;
    let batch = r.json();
    assert_eq!(
        error_code(&batch[1]).as_deref(),
        Some("FORBIDDEN"),
        "{batch}"
    );
    let mut ws = app
        .ws(json!({ "authorization": format!("Bearer {read}") }))
        .await;
    ws.subscribe("m", CREATE_TOKEN, json!({ "l": "over ws" }))
        .await;
    let msg = ws
        .next_json(std::time::Duration::from_secs(10))
        .await
        .expect("an answer");
    assert_eq!(ws_code(&msg), "FORBIDDEN", "{msg}");
    // Subscriptions are reading: they work.
    ws.subscribe(
        "s",
        "subscription($e: String!) { judgingProgress(event: $e) { assignments } }",
        json!({ "e": s.event_a }),
    )
    .await;
    let judge = app
        .ok(
            Some(&s.organizer_a),
            op("EventMembers"),
            json!({ "event": s.event_a, "role": "JUDGE", "first": 5 }),
        )
        .await;
    let assign = json!({ "event": s.event_a, "judge": str_at(&judge, "/event/members/edges/0/node/id"), "project": s.submitted });
    // The subscription may register after a first change: the organizer assigns and
    // unassigns until the read token's subscriber hears of one.
    let mut writes = 0;
    let msg = 'heard: loop {
        assert!(writes < 20, "no progress message after {writes} changes");
        let d = app
            .ok(Some(&s.organizer_a), op("AssignJudge"), assign.clone())
            .await;
        app.ok(
            Some(&s.organizer_a),
            op("UnassignJudge"),
            json!({ "assignment": str_at(&d, "/assignJudge/id") }),
        )
        .await;
        writes += 2;
        while let Some(msg) = ws.next_json(std::time::Duration::from_secs(2)).await {
            if msg["id"] == "s" {
                break 'heard msg;
            }
        }
    };
    assert_eq!(msg["type"], "next", "{msg}");
    assert_eq!(
        app.audit_head().await,
        head + writes,
        "only the organizer's changes were written"
    );
    // The command line mints read tokens too.
    let out = app
        .cli(&[
            "token",
            "mint",
            "--email",
            &s.emails.organizer_a,
            "--name",
            "cli",
            "--scope",
            "read",
        ])
        .await;
    assert!(out.success(), "{out:?}");
    let cli = out.stdout.trim().to_owned();
    assert_code(
        &app.gql_as(&cli, op("LogOut"), json!({})).await,
        "FORBIDDEN",
    );
}

async fn an_api_token_stops_at_its_expiry(app: App) {
    let (session, _) = app.sign_up_full("expiring@example.org").await;
    let past = crate::harness::rfc3339(chrono::Utc::now() - chrono::Duration::minutes(1));
    let r = app
        .gql_as(&session, CREATE_TOKEN, json!({ "l": "late", "e": past }))
        .await;
    assert_bad_input(&r, &["expiresAt"]);
    let soon = crate::harness::rfc3339(chrono::Utc::now() + chrono::Duration::seconds(3));
    let d = app
        .ok(
            Some(&session),
            CREATE_TOKEN,
            json!({ "l": "brief", "e": soon }),
        )
        .await;
    assert_eq!(d["createApiToken"]["apiToken"]["scope"], "WRITE");
    let token = str_at(&d, "/createApiToken/token");
    assert!(data(&viewer_with(&app, &token).await)["viewer"].is_object());
    let mut ws = app
        .ws(json!({ "authorization": format!("Bearer {token}") }))
        .await;
    tokio::time::sleep(std::time::Duration::from_secs(4)).await;
    assert_signed_out(&viewer_with(&app, &token).await);
    // A websocket opened before the expiry is refused its next operation too.
    ws.subscribe("late", VIEWER, json!({})).await;
    let msg = ws
        .next_json(std::time::Duration::from_secs(10))
        .await
        .expect("an answer");
    assert_eq!(ws_code(&msg), "UNAUTHENTICATED", "{msg}");
}

const CONFIRMED: &str = "{ viewer { user { email emailConfirmed displayName } } }";

async fn an_unconfirmed_address_is_granted_no_role_until_its_link_is_used(app: App) {
    use crate::invitations::confirm_link;
    let s = app.scenario().await;
    // Someone signs up with an address that is not (yet) shown to be theirs.
    let email = "claimed@example.org";
    let d = app
        .ok(
            None,
            op("SignUp"),
            json!({ "email": email, "password": PASSWORD, "displayName": "Claimant" }),
        )
        .await;
    let token = str_at(&d, "/signUp/token");
    let v = app.ok(Some(&token), CONFIRMED, json!({})).await;
    assert_eq!(v["viewer"]["user"]["emailConfirmed"], false);
    let grant = json!({ "event": s.event_a, "email": email, "role": "JUDGE" });
    let head = app.audit_head().await;
    assert_code(
        &app.gql_as(&s.organizer_a, op("GrantRole"), grant.clone())
            .await,
        "CONFLICT",
    );
    assert_eq!(app.audit_head().await, head);
    // The link in the mail confirms it, once.
    let link = json!({ "token": confirm_link(&app, email).await });
    app.ok(None, op("ConfirmEmail"), link.clone()).await;
    assert_code(&app.gql(op("ConfirmEmail"), link).await, "CONFLICT");
    let unknown = json!({ "token": format!("vc_{}", "0".repeat(64)) });
    assert_code(&app.gql(op("ConfirmEmail"), unknown).await, "NOT_FOUND");
    let v = app.ok(Some(&token), CONFIRMED, json!({})).await;
    assert_eq!(v["viewer"]["user"]["emailConfirmed"], true);
    app.ok(Some(&s.organizer_a), op("GrantRole"), grant).await;
    assert_code(
        &app.gql_as(&token, op("ResendConfirmation"), json!({}))
            .await,
        "CONFLICT",
    );
}

async fn password_and_email_changes_need_the_current_password(app: App) {
    use crate::invitations::confirm_link;
    let email = "changer@example.org";
    let (here, _) = app.sign_up_full(email).await;
    let elsewhere = app.log_in(email, PASSWORD).await;
    app.sign_up("taken@example.org").await;
    // A browser tab elsewhere holds a websocket with the other session; this one holds one
    // with the session making the change.
    let mut there_ws = app
        .ws(json!({ "authorization": format!("Bearer {elsewhere}") }))
        .await;
    let mut here_ws = app
        .ws(json!({ "authorization": format!("Bearer {here}") }))
        .await;

    // The password: the current one is required; other sessions end, this one stays.
    let change =
        |current: &str, new: &str| json!({ "currentPassword": current, "newPassword": new });
    let r = app
        .gql_as(
            &here,
            op("ChangePassword"),
            change("wrong guess 123", "new password 123"),
        )
        .await;
    assert_bad_input(&r, &["currentPassword"]);
    let r = app
        .gql_as(&here, op("ChangePassword"), change(PASSWORD, "short"))
        .await;
    assert_bad_input(&r, &["newPassword"]);
    let d = app
        .ok(
            Some(&here),
            op("ChangePassword"),
            change(PASSWORD, "new password 123"),
        )
        .await;
    assert_eq!(d["changePassword"], 1, "one other session revoked");
    assert_signed_out(&viewer_with(&app, &elsewhere).await);
    let (_, close) = there_ws
        .until_closed(std::time::Duration::from_secs(10))
        .await;
    assert_eq!(close, Some(4403), "the ended session's socket is closed");
    here_ws.subscribe("v", CONFLICTED_VIEW, json!({})).await;
    let msg = here_ws
        .next_json(std::time::Duration::from_secs(10))
        .await
        .expect("the changing session's socket still answers");
    assert_eq!(
        msg["payload"]["data"]["viewer"]["user"]["email"], email,
        "{msg}"
    );
    assert!(data(&viewer_with(&app, &here).await)["viewer"].is_object());
    assert_code(
        &app.gql(op("LogIn"), json!({ "email": email, "password": PASSWORD }))
            .await,
        "UNAUTHENTICATED",
    );
    app.log_in(email, "new password 123").await;

    // The name.
    let d = app
        .ok(
            Some(&here),
            op("UpdateProfile"),
            json!({ "displayName": "Renamed" }),
        )
        .await;
    assert_eq!(d["updateProfile"]["displayName"], "Renamed");
    assert_bad_input(
        &app.gql_as(
            &here,
            op("UpdateProfile"),
            json!({ "displayName": "a\u{202e}b" }),
        )
        .await,
        &["displayName"],
    );

    // The address: password required, a taken one refused, and it changes only when the
    // new address confirms; the old address is told.
    let move_to = |to: &str, pass: &str| json!({ "newEmail": to, "currentPassword": pass });
    assert_bad_input(
        &app.gql_as(
            &here,
            op("ChangeEmail"),
            move_to("moved@example.org", PASSWORD),
        )
        .await,
        &["currentPassword"],
    );
    assert_code(
        &app.gql_as(
            &here,
            op("ChangeEmail"),
            move_to("taken@example.org", "new password 123"),
        )
        .await,
        "CONFLICT",
    );
    app.ok(
        Some(&here),
        op("ChangeEmail"),
        move_to("moved@example.org", "new password 123"),
    )
    .await;
    let v = app.ok(Some(&here), CONFLICTED_VIEW, json!({})).await;
    assert_eq!(
        v["viewer"]["user"]["email"], email,
        "unchanged until confirmed"
    );
    let link = json!({ "token": confirm_link(&app, "moved@example.org").await });
    app.ok(None, op("ConfirmEmail"), link).await;
    let v = app.ok(Some(&here), CONFLICTED_VIEW, json!({})).await;
    assert_eq!(v["viewer"]["user"]["email"], "moved@example.org");
    app.log_in("moved@example.org", "new password 123").await;
    let mail = app.cli(&["mail", "list", "--all"]).await;
    let notice = mail
        .stdout
        .split("--- ")
        .find(|m| m.contains(&format!(" to {email} ")) && m.contains("was changed"))
        .unwrap_or_else(|| panic!("the old address is told: {}", mail.stdout));
    assert!(notice.contains("moved@example.org"), "{notice}");
}

const CONFLICTED_VIEW: &str = "{ viewer { user { email } } }";
