//! Log-in throttling: exact under concurrent guesses, never turned against the owner, and
//! keyed on the client address, which only trusted proxies may name.

use serde_json::{Value, json};

use crate::harness::App;

e2e! {
    log_in_throttle_holds_under_concurrent_guesses ["--login-attempts", "10"],
    guessers_cannot_lock_the_owner_out ["--login-attempts", "3"],
    forwarded_addresses_are_believed_only_from_trusted_proxies ["--login-attempts", "2", "--trusted-proxies", "127.0.0.1"],
    untrusted_peers_cannot_pick_their_address ["--login-attempts", "2"],
}

const LOG_IN: &str =
    "mutation($e: String!, $p: String!) { logIn(email: $e, password: $p) { token } }";

/// A client whose requests come from `ip` (any 127.0.0.0/8 address is this machine).
fn client_from(ip: &str) -> reqwest::Client {
    reqwest::Client::builder()
        .local_address(ip.parse::<std::net::IpAddr>().expect("an IP address"))
        .build()
        .expect("http client")
}

/// Logs in from `ip`; the error code, or None on success.
async fn log_in_from(app: &App, ip: &str, email: &str, password: &str) -> Option<String> {
    let r: Value = client_from(ip)
        .post(app.url("/graphql"))
        .json(&json!({ "query": LOG_IN, "variables": { "e": email, "p": password } }))
        .send()
        .await
        .expect("request")
        .json()
        .await
        .expect("json");
    match crate::harness::error_code(&r) {
        Some(code) => Some(code),
        None => {
            assert!(r["data"]["logIn"]["token"].is_string(), "{r}");
            None
        }
    }
}

/// Logs in with `X-Forwarded-For: xff`; the error code, or None on success.
async fn log_in_forwarded(app: &App, xff: &str, email: &str, password: &str) -> Option<String> {
    let body = json!({ "query": LOG_IN, "variables": { "e": email, "p": password } });
    let r = app
        .post_raw(
            body.to_string(),
            "application/json",
            &[("x-forwarded-for", xff)],
        )
        .await;
    crate::harness::error_code(&r.json())
}

async fn log_in_throttle_holds_under_concurrent_guesses(app: App) {
    let email = format!("victim-{}@example.org", crate::harness::unique());
    app.sign_up(&email).await;
    let guesses = (0..100).map(|i| {
        let app = &app;
        let email = &email;
        async move { log_in_from(app, "127.0.0.1", email, &format!("wrong guess {i}")).await }
    });
    let codes = futures_util::future::join_all(guesses).await;
    let count = |c: &str| codes.iter().filter(|x| x.as_deref() == Some(c)).count();
    assert_eq!(
        (count("UNAUTHENTICATED"), count("RATE_LIMITED")),
        (10, 90),
        "exactly the limit of passwords is checked, the rest refused, nothing else: {codes:?}"
    );
    // That address is done with this account for the window; the owner elsewhere is not.
    assert_eq!(
        log_in_from(&app, "127.0.0.1", &email, crate::harness::PASSWORD)
            .await
            .as_deref(),
        Some("RATE_LIMITED")
    );
    assert_eq!(
        log_in_from(&app, "127.0.0.2", &email, crate::harness::PASSWORD).await,
        None
    );
}

async fn guessers_cannot_lock_the_owner_out(app: App) {
    let email = format!("owner-{}@example.org", crate::harness::unique());
    app.sign_up(&email).await;
    let password = crate::harness::PASSWORD;
    // The owner has logged in from home before.
    assert_eq!(log_in_from(&app, "127.0.0.2", &email, password).await, None);
    // Guessers from ten addresses spend the account's ceiling (10 x 3 attempts).
    for n in 10..20 {
        for i in 0..3 {
            let ip = format!("127.0.1.{n}");
            assert_eq!(
                log_in_from(&app, &ip, &email, &format!("guess {i}"))
                    .await
                    .as_deref(),
                Some("UNAUTHENTICATED")
            );
        }
    }
    // A new address is now refused even with the right password: guessing is capped ...
    assert_eq!(
        log_in_from(&app, "127.0.1.99", &email, password)
            .await
            .as_deref(),
        Some("RATE_LIMITED")
    );
    // ... but the owner, at an address they used before, still gets in.
    assert_eq!(log_in_from(&app, "127.0.0.2", &email, password).await, None);
    // One address spraying many accounts is stopped at five times the per-account limit.
    let mut codes = vec![];
    for n in 0..6 {
        let other = format!("spray-{n}-{}@example.org", crate::harness::unique());
        for i in 0..3 {
            codes.push(log_in_from(&app, "127.0.2.1", &other, &format!("guess {i}")).await);
        }
    }
    let limited = codes
        .iter()
        .filter(|c| c.as_deref() == Some("RATE_LIMITED"))
        .count();
    assert_eq!(limited, 3, "15 of 18 attempts are checked: {codes:?}");
}

async fn forwarded_addresses_are_believed_only_from_trusted_proxies(app: App) {
    // Behind a trusted proxy, clients are told apart by the address the proxy saw: a
    // guesser at one address does not stop the owner at another.
    let email = format!("behind-proxy-{}@example.org", crate::harness::unique());
    app.sign_up(&email).await;
    for i in 0..2 {
        log_in_forwarded(&app, "198.51.100.7", &email, &format!("wrong {i}")).await;
    }
    assert_eq!(
        log_in_forwarded(&app, "198.51.100.7", &email, crate::harness::PASSWORD)
            .await
            .as_deref(),
        Some("RATE_LIMITED")
    );
    assert_eq!(
        log_in_forwarded(&app, "203.0.113.20", &email, crate::harness::PASSWORD).await,
        None
    );
    // A client that prepends its own hop does not escape: the rightmost untrusted hop counts.
    assert_eq!(
        log_in_forwarded(
            &app,
            "192.0.2.1, 198.51.100.7",
            &email,
            crate::harness::PASSWORD
        )
        .await
        .as_deref(),
        Some("RATE_LIMITED")
    );
}

async fn untrusted_peers_cannot_pick_their_address(app: App) {
    // Without --trusted-proxies the header is ignored: rotating it does not reset the count.
    let email = format!("rotating-{}@example.org", crate::harness::unique());
    app.sign_up(&email).await;
    let probe = app.probe().await;
    let before = probe.snapshot().await;
    let mut codes = vec![];
    for i in 0..5 {
        codes.push(log_in_forwarded(&app, &format!("198.51.100.{i}"), &email, "wrong guess").await);
    }
    assert_eq!(
        codes
            .iter()
            .filter(|c| c.as_deref() == Some("RATE_LIMITED"))
            .count(),
        3,
        "{codes:?}"
    );
    // The right password, from yet another claimed address, gets no session either.
    assert_eq!(
        log_in_forwarded(&app, "203.0.113.99", &email, crate::harness::PASSWORD)
            .await
            .as_deref(),
        Some("RATE_LIMITED")
    );
    probe
        .nothing_written_since(&before, &["login_throttle"], "rotated log-in guesses")
        .await;
}
