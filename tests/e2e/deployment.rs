//! Deployment by the book: a Verdict served over TLS (behind a proxy that terminates it,
//! said by `--tls-cookies` or an `https://` `--public-url`) marks its session cookie
//! `Secure` and tells browsers never to come back over plain HTTP; one served over plain
//! HTTP (the default, and the demo) does neither, so logging in still works there.

use serde_json::json;

use crate::harness::{App, PASSWORD, Resp, op};

e2e! {
    served_over_tls_the_cookie_is_secure_and_hsts_is_sent,
}

async fn log_in(app: &App, email: &str) -> Resp {
    let body =
        json!({ "query": op("LogIn"), "variables": { "email": email, "password": PASSWORD } });
    let r = app
        .post_raw(body.to_string(), "application/json", &[])
        .await;
    assert_eq!(r.status, 200, "{}", r.text);
    r
}

fn session_cookie(r: &Resp) -> String {
    let set = r.headers_all("set-cookie");
    set.into_iter()
        .find(|c| c.starts_with("verdict_session="))
        .unwrap_or_else(|| panic!("logIn sets verdict_session: {}", r.text))
}

async fn served_over_tls_the_cookie_is_secure_and_hsts_is_sent(app: App) {
    app.sign_up_full("tls@example.org").await;

    // Plain HTTP (the default): no HSTS, and a cookie the browser sends back over HTTP.
    let health = app.get("/healthz").await;
    assert_eq!(health.header("strict-transport-security"), None);
    let cookie = session_cookie(&log_in(&app, "tls@example.org").await).to_lowercase();
    assert!(!cookie.contains("; secure"), "{cookie}");

    // Behind TLS, said by the public address: every response carries HSTS (the API, the
    // client, health) and the session cookie is Secure.
    let tls = app
        .sibling(&["--public-url", "https://verdict.example.org"])
        .await;
    for path in ["/healthz", "/", "/graphql?query=%7B__typename%7D"] {
        let r = tls.get(path).await;
        assert_eq!(
            r.header("strict-transport-security").as_deref(),
            Some("max-age=31536000"),
            "{path}"
        );
    }
    let cookie = session_cookie(&log_in(&tls, "tls@example.org").await).to_lowercase();
    assert!(cookie.contains("; secure"), "{cookie}");

    // Said by the flag.
    let flagged = app.sibling(&["--tls-cookies"]).await;
    let r = flagged.get("/healthz").await;
    assert_eq!(
        r.header("strict-transport-security").as_deref(),
        Some("max-age=31536000")
    );
}
