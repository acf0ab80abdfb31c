//! A fresh deployment's first hour: with no account, `serve` prints a one-time setup link
//! that makes its holder the site admin. It works once, expires after a day, stops working
//! once any account exists, is replaced by a restart, and its use is audited.

use serde_json::{Value, json};

use crate::harness::{App, PASSWORD, assert_code, str_at};

e2e! {
    the_printed_setup_link_makes_the_first_site_admin_once,
    a_setup_link_stops_working_when_replaced_or_moot,
    a_setup_link_older_than_a_day_is_refused_and_writes_nothing,
}

/// The setup link the server printed on stdout, if any.
pub fn printed_setup_link(app: &App) -> Option<String> {
    app.printed_lines()
        .iter()
        .find_map(|l| l.split_whitespace().find(|w| w.contains("/setup/")))
        .map(str::to_owned)
}

/// The token of a setup link: its last path segment.
fn token_of(link: &str) -> String {
    link.rsplit('/').next().unwrap_or_default().to_owned()
}

const STATE: &str = "query($t: String!) { setupLink(token: $t) { state expiresAt } }";
const SET_UP: &str = "mutation($t: String!, $e: String!, $p: String!, $n: String!) {
    setUpSite(token: $t, email: $e, password: $p, displayName: $n) { token user { isSiteAdmin } } }";

fn set_up_vars(token: &str, email: &str, password: &str) -> Value {
    json!({ "t": token, "e": email, "p": password, "n": "First Admin" })
}

async fn state_of(app: &App, token: &str) -> String {
    let d = app.ok(None, STATE, json!({ "t": token })).await;
    str_at(&d, "/setupLink/state")
}

async fn the_printed_setup_link_makes_the_first_site_admin_once(app: App) {
    let link = printed_setup_link(&app).unwrap_or_else(|| {
        panic!(
            "a deployment with no account prints a setup link; it printed {:?}",
            app.printed_lines()
        )
    });
    assert_eq!(link, format!("{}/setup/{}", app.base, token_of(&link)));
    let token = token_of(&link);
    // It is on a line of its own, so an operator sees it in the log.
    assert!(
        app.printed_lines().iter().any(|l| l.trim() == link),
        "the link stands on its own line: {:?}",
        app.printed_lines()
    );

    // Reading its state writes nothing and does not use it.
    let probe = app.probe().await;
    let before = probe.snapshot().await;
    let d = app.ok(None, STATE, json!({ "t": token })).await;
    assert_eq!(d["setupLink"]["state"], "VALID", "{d}");
    let expires = chrono::DateTime::parse_from_rfc3339(&str_at(&d, "/setupLink/expiresAt"))
        .expect("an RFC 3339 time");
    let hours =
        (expires.with_timezone(&chrono::Utc) - chrono::Utc::now()).num_minutes() as f64 / 60.0;
    assert!((23.0..=24.5).contains(&hours), "expires in {hours} h");
    probe.nothing_written_since(&before, &[], "setupLink").await;
    // Only its hash is stored.
    assert!(probe.tables_holding(&token).await.is_empty());

    // An unknown token says nothing but "not found", for the query and the mutation.
    let wrong = format!("vsu_{}", "0".repeat(64));
    assert_code(&app.gql(STATE, json!({ "t": wrong })).await, "NOT_FOUND");
    assert_code(
        &app.gql(SET_UP, set_up_vars(&wrong, "admin@example.org", PASSWORD))
            .await,
        "NOT_FOUND",
    );
    // Bad input names the field and leaves the link unused.
    let short = app
        .gql(SET_UP, set_up_vars(&token, "admin@example.org", "short"))
        .await;
    assert_code(&short, "BAD_USER_INPUT");
    assert_eq!(
        short["errors"][0]["extensions"]["field"], "password",
        "{short}"
    );
    assert_eq!(state_of(&app, &token).await, "VALID");

    // Used: the first account is a signed-in site admin, with a session cookie.
    let resp = app
        .gql_resp(
            None,
            SET_UP,
            set_up_vars(&token, "Admin@Example.org ", PASSWORD),
        )
        .await;
    let body = resp.json();
    assert!(body.get("errors").is_none(), "{body}");
    assert_eq!(body["data"]["setUpSite"]["user"]["isSiteAdmin"], true);
    assert!(
        resp.headers_all("set-cookie")
            .iter()
            .any(|c| c.starts_with("verdict_session=") && c.contains("HttpOnly")),
        "signs in like logIn: {:?}",
        resp.headers_all("set-cookie")
    );
    let admin = str_at(&body, "/data/setUpSite/token");
    let created = app
        .ok(
            Some(&admin),
            "mutation($i: CreateEventInput!) { createEvent(input: $i) { slug } }",
            json!({ "i": { "name": "First", "slug": "first-event",
                "submissionsOpen": "2030-01-01T09:00:00Z", "submissionsClose": "2030-01-02T09:00:00Z" } }),
        )
        .await;
    assert_eq!(created["createEvent"]["slug"], "first-event");
    // ... and can log in again with the password chosen.
    app.log_in("admin@example.org", PASSWORD).await;

    // Used once: the second use is refused and writes nothing; the state says so.
    let before = probe.snapshot().await;
    let again = app
        .gql(SET_UP, set_up_vars(&token, "second@example.org", PASSWORD))
        .await;
    assert_code(&again, "FORBIDDEN");
    let message = str_at(&again, "/errors/0/message");
    assert!(message.contains("used already"), "{message}");
    probe
        .nothing_written_since(&before, &[], "a second setUpSite")
        .await;
    assert_eq!(state_of(&app, &token).await, "USED");

    // Its use is audited, once, and the chain verifies.
    assert_eq!(
        probe.tables_holding("site.set_up").await,
        vec!["audit_events (1 rows)".to_owned()]
    );
    let out = app.cli(&["audit", "verify"]).await;
    assert!(out.success(), "{out:?}");

    // With an account, a restart prints no setup link.
    let restarted = app.sibling(&[]).await;
    assert_eq!(printed_setup_link(&restarted), None);
}

async fn a_setup_link_stops_working_when_replaced_or_moot(app: App) {
    let first = token_of(&printed_setup_link(&app).expect("a setup link"));

    // A restart with still no account prints a new link; the old one stops working.
    let restarted = app.sibling(&[]).await;
    let second = token_of(&printed_setup_link(&restarted).expect("a new setup link"));
    assert_ne!(first, second);
    assert_code(&app.gql(STATE, json!({ "t": first })).await, "NOT_FOUND");
    assert_code(
        &app.gql(SET_UP, set_up_vars(&first, "admin@example.org", PASSWORD))
            .await,
        "NOT_FOUND",
    );
    assert_eq!(state_of(&app, &second).await, "VALID");

    // Moot: once an account exists by any other way, the link no longer makes an admin.
    let third = token_of(&printed_setup_link(&app.sibling(&[]).await).expect("a third link"));
    assert_eq!(state_of(&app, &third).await, "VALID");
    app.sign_up("early-bird@example.org").await;
    assert_eq!(state_of(&app, &third).await, "REVOKED");
    let moot = app
        .gql(SET_UP, set_up_vars(&third, "admin@example.org", PASSWORD))
        .await;
    assert_code(&moot, "FORBIDDEN");
    assert!(
        str_at(&moot, "/errors/0/message").contains("set up already"),
        "{moot}"
    );
    assert!(
        app.probe()
            .await
            .tables_holding("site.set_up")
            .await
            .is_empty()
    );
}

async fn a_setup_link_older_than_a_day_is_refused_and_writes_nothing(app: App) {
    let token = token_of(&printed_setup_link(&app).expect("a setup link"));
    assert_eq!(state_of(&app, &token).await, "VALID");

    // The link was printed 25 hours ago: moved back through the harness's own handle on the
    // database, as a day passing would leave it (the server reads the row and the
    // database's clock on each request).
    {
        use sea_orm::{EntityTrait, sea_query::Expr};
        let db = app.db.connect().await;
        let printed = chrono::Utc::now() - chrono::Duration::hours(25);
        let moved = entity::setup_link::Entity::update_many()
            .col_expr(entity::setup_link::Column::CreatedAt, Expr::value(printed))
            .col_expr(
                entity::setup_link::Column::ExpiresAt,
                Expr::value(printed + chrono::Duration::hours(24)),
            )
            .exec(&db.conn)
            .await
            .expect("age the setup link");
        assert_eq!(moved.rows_affected, 1);
    }
    // Why the last session's probe update "was not seen": an anonymous query's answer is
    // shared while the audit chain's head stays where it was, for the second it was
    // computed in (`http::graphql::SharedAnswers`). A write behind the server's back
    // appends no audit entry, so the answer read a moment before still stands until the
    // second is over. A day passing, which this stands for, is seen from the next second.
    tokio::time::sleep(std::time::Duration::from_millis(1100)).await;
    assert_eq!(state_of(&app, &token).await, "EXPIRED");

    let probe = app.probe().await;
    let before = probe.snapshot().await;
    let late = app
        .gql(SET_UP, set_up_vars(&token, "admin@example.org", PASSWORD))
        .await;
    assert_code(&late, "FORBIDDEN");
    let message = str_at(&late, "/errors/0/message");
    assert!(
        message.contains("expired") && message.contains("restart the server"),
        "{message}"
    );
    probe
        .nothing_written_since(&before, &[], "setUpSite with an expired link")
        .await;
    assert!(probe.tables_holding("site.set_up").await.is_empty());
    // No account was made: a log-in with it fails.
    assert_code(
        &app.gql(
            "mutation($e: String!, $p: String!) { logIn(email: $e, password: $p) { token } }",
            json!({ "e": "admin@example.org", "p": PASSWORD }),
        )
        .await,
        "UNAUTHENTICATED",
    );
}
