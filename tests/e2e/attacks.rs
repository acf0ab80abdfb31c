//! The attack suite (issue 13): every GraphQL and HTTP attack this server defends against
//! is a named end-to-end test that tries it and asserts the safe answer and that nothing
//! was written (every table's rows, the audit chain included: [`crate::harness::Probe`]).
//! Each runs on SQLite and PostgreSQL.
//!
//! Cases that already had a test elsewhere stay there (with the "nothing was written"
//! assertion added where it was missing); the rest are here.
//!
//! | case | test |
//! | --- | --- |
//! | depth bomb (a query, and a mutation under one) | `limits::depth_limit`, `limits::nesting_limit` |
//! | alias bomb (3,000 aliases; 1,001 aliased mutations) | `limits::thousands_of_typename_selections_are_refused`, `limits::anonymous_ranking_flood_is_too_complex` |
//! | field-duplication bomb (5,000 repeats; a repeated mutation) | `limits::thousands_of_typename_selections_are_refused` |
//! | fragment cycle, fragment bomb (also in a mutation) | `limits::nesting_limit`, `limits::fragment_bomb_is_refused_before_validation` |
//! | directive overload (also on a mutation) | `limits::directive_limit`, `limits::directive_limit_is_enforced` |
//! | oversized body | `limits::body_size_limit`, `edge::refusals_at_the_edge_are_graphql_errors` |
//! | oversized batch | `limits::batch_limit` |
//! | mutation over GET (also named by a persisted query's hash) | `limits::get_never_runs_a_mutation`, `results::published_ranking_reads_a_page_at_a_time_and_anonymous_gets_are_cacheable` |
//! | mutation as text/plain, x-www-form-urlencoded, multipart | `limits::mutations_need_a_json_content_type` |
//! | CSRF: a cookie mutation without the header | `auth::session_cookie_and_csrf` |
//! | CSRF: the same inside a batch, or beside a query in one document | `attacks::a_cookie_mutation_hidden_in_a_batch_needs_the_csrf_header` |
//! | introspection and "did you mean" suggestions when introspection is off | `limits::no_suggestions_in_errors`, `limits::introspection_can_be_disabled`, `attacks::introspection_off_leaks_no_schema_by_any_path` |
//! | internal error text never reaches the client | `attacks::database_failures_reach_the_client_as_a_request_id_only` |
//! | CORS never echoes a foreign origin | `attacks::cors_never_allows_a_foreign_origin` |
//! | log-in attempts multiplied by aliases or a batch are each counted | `attacks::aliased_and_batched_log_ins_are_each_counted` |
//! | rotating `X-Forwarded-For` from an untrusted peer: log-in throttle | `throttle::untrusted_peers_cannot_pick_their_address` |
//! | the same for the request rate limit | `attacks::rotating_forwarded_headers_do_not_reset_the_request_rate_limit` |
//! | websocket without credentials | `attacks::a_socket_without_credentials_runs_nothing_that_needs_them` |
//! | websocket opened with a revoked or expired credential | `attacks::a_socket_opened_with_a_dead_credential_is_refused` |
//! | websocket with another event's credentials | `attacks::another_events_organizer_gets_nothing_of_this_event_on_a_socket` |
//! | subscriber logged out mid-stream | `websocket::log_out_ends_the_session_on_open_sockets`, `websocket::a_revoked_api_token_stops_working_on_open_sockets` |
//! | subscriber whose role is removed mid-stream | `websocket::a_revoked_organizer_loses_live_judging_and_member_emails` |
//! | cross-event object access by id, every ID argument of the schema | `attacks::no_id_argument_reaches_another_events_objects` (generated from `schema.graphql`) |

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use serde_json::{Value, json};

use crate::harness::{App, PASSWORD, Ws, error_code, op, str_at, unique, ws_code, ws_errors};

e2e! {
    a_cookie_mutation_hidden_in_a_batch_needs_the_csrf_header,
    introspection_off_leaks_no_schema_by_any_path ["--no-introspection"],
    database_failures_reach_the_client_as_a_request_id_only,
    cors_never_allows_a_foreign_origin,
    aliased_and_batched_log_ins_are_each_counted ["--login-attempts", "3"],
    rotating_forwarded_headers_do_not_reset_the_request_rate_limit [
        "--rate-limit-per-second", "1", "--rate-limit-burst", "3"
    ],
    a_socket_without_credentials_runs_nothing_that_needs_them,
    a_socket_opened_with_a_dead_credential_is_refused,
    another_events_organizer_gets_nothing_of_this_event_on_a_socket,
    no_id_argument_reaches_another_events_objects [
        "--allow-loopback-webhooks", "--webhook-backoff-ms", "3600000"
    ],
}

const WAIT: Duration = Duration::from_secs(10);

fn bearer(token: &str) -> Value {
    json!({ "authorization": format!("Bearer {token}") })
}

/// The first answer (`next` or `error`) to operation `id` on `ws`.
async fn ws_answer(ws: &mut Ws, id: &str, query: &str, vars: Value) -> Value {
    ws.subscribe(id, query, vars).await;
    loop {
        let msg = ws
            .next_json(WAIT)
            .await
            .unwrap_or_else(|| panic!("no answer to {id} ({query})"));
        if msg["id"] == id && matches!(msg["type"].as_str(), Some("next" | "error")) {
            return msg;
        }
    }
}

/// No data came back: `data` is null or holds only nulls.
fn no_data(data: &Value) -> bool {
    data.is_null()
        || data
            .as_object()
            .is_some_and(|o| o.values().all(Value::is_null))
}

/// Logs in by JSON POST as a browser would and returns the `verdict_session` cookie.
async fn session_cookie(app: &App, email: &str) -> String {
    let body =
        json!({ "query": op("LogIn"), "variables": { "email": email, "password": PASSWORD } });
    let r = app
        .post_raw(body.to_string(), "application/json", &[])
        .await;
    r.headers_all("set-cookie")
        .iter()
        .find(|c| c.starts_with("verdict_session="))
        .and_then(|c| c.split(';').next())
        .unwrap_or_else(|| panic!("logIn sets verdict_session: {r:?}"))
        .to_string()
}

// ---- CSRF ------------------------------------------------------------------------------

/// A cookie-authenticated request must carry `X-Verdict-Csrf: 1` before any mutation runs,
/// also when the mutation hides in a batch behind a query, or in a document beside a query
/// that `operationName` does not even pick.
async fn a_cookie_mutation_hidden_in_a_batch_needs_the_csrf_header(app: App) {
    let email = format!("csrf-batch-{}@example.org", unique());
    app.sign_up_full(&email).await;
    let cookie = session_cookie(&app, &email).await;
    let probe = app.probe().await;
    let before = probe.snapshot().await;
    let mint = "mutation { createApiToken(label: \"csrf\") { token } }";
    let attempts = [
        (
            "a batch of a query then a mutation",
            json!([{ "query": "{ viewer { user { id } } }" }, { "query": mint }]),
        ),
        (
            "a batch of ten, the mutation last",
            Value::Array(
                (0..10)
                    .map(|i| json!({ "query": if i == 9 { mint } else { "{ __typename }" } }))
                    .collect(),
            ),
        ),
        (
            "a document with a query and a mutation, the query picked",
            json!({ "query": format!("query Q {{ __typename }} {}", mint.replacen("mutation", "mutation M", 1)), "operationName": "Q" }),
        ),
        (
            "a document with a query and a mutation, the mutation picked",
            json!({ "query": format!("query Q {{ __typename }} {}", mint.replacen("mutation", "mutation M", 1)), "operationName": "M" }),
        ),
    ];
    for (what, body) in &attempts {
        let r = app
            .post_raw(body.to_string(), "application/json", &[("cookie", &cookie)])
            .await;
        assert_eq!(r.status, 403, "{what}: {} {}", r.status, r.text);
        assert_eq!(
            error_code(&r.json()).as_deref(),
            Some("FORBIDDEN"),
            "{what}: {}",
            r.text
        );
        assert!(!r.text.contains("\"token\""), "{what}: {}", r.text);
    }
    probe
        .nothing_written_since(&before, &[], "cookie mutations without the CSRF header")
        .await;

    // The control: with the header, the same batch runs (so the refusal above was the
    // header's, not the batch's).
    let r = app
        .post_raw(
            attempts[0].1.to_string(),
            "application/json",
            &[("cookie", &cookie), ("x-verdict-csrf", "1")],
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.text);
    assert!(
        r.json()[1]["data"]["createApiToken"]["token"].is_string(),
        "{}",
        r.text
    );
}

// ---- introspection ---------------------------------------------------------------------

/// With `--no-introspection`, no path yields the schema: introspection under an alias, in
/// a named or inline fragment, over GET, in a batch, on a websocket; and no error suggests
/// a field, argument, type, enum value or directive ("did you mean").
async fn introspection_off_leaks_no_schema_by_any_path(app: App) {
    let probe = app.probe().await;
    let before = probe.snapshot().await;
    // Names that only the schema knows: any of them in an answer is a leak.
    let secret_names = [
        "calibrationRun",
        "webhookDeliveries",
        "CalibratedProject",
        "ProjectInput",
        "saveReview",
    ];
    let leaks = |text: &str| -> Vec<&str> {
        secret_names
            .iter()
            .copied()
            .filter(|n| text.contains(n))
            .collect()
    };
    let introspections = [
        "{ s: __schema { types { name fields { name } } } }",
        "{ ...F } fragment F on Query { __schema { types { name fields { name } } } }",
        "{ ... on Query { __schema { mutationType { fields { name } } } } }",
        "{ t: __type(name: \"Event\") { fields { name } } }",
        "{ __type(name: \"CalibratedProject\") { name fields { name } } }",
        "query { __schema { queryType { fields { name args { name } } } } }",
    ];
    for q in introspections {
        let r = app.gql(q, json!({})).await;
        assert!(no_data(&r["data"]), "{q}: {r}");
        assert!(leaks(&r.to_string()).is_empty(), "{q}: {r}");
        // Over GET.
        let path = format!(
            "/graphql?{}",
            url::form_urlencoded::Serializer::new(String::new())
                .append_pair("query", q)
                .finish()
        );
        let r = app.get_with(&path, &[("accept", "application/json")]).await;
        assert!(leaks(&r.text).is_empty(), "GET {q}: {}", r.text);
    }
    // In a batch.
    let batch = Value::Array(
        introspections
            .iter()
            .map(|q| json!({ "query": q }))
            .collect(),
    );
    let r = app
        .post_raw(batch.to_string(), "application/json", &[])
        .await;
    assert!(leaks(&r.text).is_empty(), "a batch: {}", r.text);
    // On a websocket.
    let mut ws = app.ws(json!({})).await;
    for (i, q) in introspections.iter().enumerate() {
        let msg = ws_answer(&mut ws, &format!("i{i}"), q, json!({})).await;
        assert!(no_data(&msg["payload"]["data"]), "socket {q}: {msg}");
        assert!(leaks(&msg.to_string()).is_empty(), "socket {q}: {msg}");
    }
    // Misspellings get no suggestion: the right name (and, for an enum, any of its values)
    // appears nowhere in the answer.
    let typos: [(&str, &str, &[&str]); 10] = [
        (
            "a field",
            "{ evnt(slug: \"x\") { id } }",
            &["\"event\"", "events"],
        ),
        (
            "a nested field",
            "{ event(slug: \"x\") { calibrationRn(id: \"1\") { id } } }",
            &["calibrationRun", "calibrationJob"],
        ),
        (
            "an argument",
            "{ events(frist: 1) { totalCount } }",
            &["\"first\"", "\"after\""],
        ),
        ("a type", "{ ... on Quer { __typename } }", &["\"Query\""]),
        (
            "a fragment type",
            "{ ...F } fragment F on CalibratedProjet { rank }",
            &["CalibratedProject"],
        ),
        (
            "an enum value",
            "mutation { exportCsv(event: \"x\", kind: SCORE) }",
            &["SCORES", "REGISTRATIONS", "JUDGES"],
        ),
        (
            "an input field",
            "mutation { createProject(event: \"x\", input: { titel: \"t\" }) { id } }",
            &["\"title\"", "tagline"],
        ),
        (
            "a directive",
            "{ events(first: 1) @skp(if: true) { totalCount } }",
            &["\"skip\"", "@skip"],
        ),
        (
            "a directive on __typename (which async-graphql does not validate)",
            "{ __typename @skp(if: true) }",
            &["\"skip\"", "@skip"],
        ),
        (
            "a mutation",
            "mutation { saveReviw(assignment: \"x\") { id } }",
            &["saveReview"],
        ),
    ];
    for (what, q, right) in typos {
        let r = app.gql(q, json!({})).await;
        assert!(
            r["errors"].as_array().is_some_and(|e| !e.is_empty()),
            "{what}: {r}"
        );
        assert!(
            !r.to_string().to_lowercase().contains("did you mean"),
            "{what} is not corrected: {r}"
        );
        let text: String = r["errors"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|e| format!("{}\n", e["message"].as_str().unwrap_or_default()))
            .collect();
        for name in right {
            assert!(!text.contains(name), "{what}: {name} is not suggested: {r}");
        }
    }
    probe
        .nothing_written_since(&before, &[], "introspection attempts")
        .await;
    // Ordinary queries still work.
    assert_eq!(
        app.ok(None, "{ __typename }", json!({})).await["__typename"],
        "Query"
    );
}

// ---- internal errors -------------------------------------------------------------------

/// The detail of a database failure stays in the server's log: the client sees INTERNAL
/// and a request id, never the database's message, a table or a statement, whether the
/// failure is in a read, in a write, in the audit append every mutation makes, or in
/// authenticating the caller; and a failed write leaves nothing behind.
async fn database_failures_reach_the_client_as_a_request_id_only(app: App) {
    let s = app.scenario().await;
    let probe = app.probe().await;
    const SECRET: &str = "secret-detail-7f3a";
    let backend = app.backend();
    // Failures the database raises with a message of our choosing: a trigger on insert.
    let refuse_inserts = |table: &str| match backend {
        crate::harness::Backend::Sqlite => vec![format!(
            "CREATE TRIGGER boom_{table} BEFORE INSERT ON {table} BEGIN SELECT RAISE(ABORT, '{SECRET} in {table}'); END"
        )],
        crate::harness::Backend::Postgres => vec![
            format!(
                "CREATE OR REPLACE FUNCTION boom_{table}() RETURNS trigger AS $$ BEGIN RAISE EXCEPTION '{SECRET} in {table}'; END $$ LANGUAGE plpgsql"
            ),
            format!(
                "CREATE TRIGGER boom_{table} BEFORE INSERT ON {table} FOR EACH ROW EXECUTE FUNCTION boom_{table}()"
            ),
        ],
    };
    let leaked = |text: &str| -> bool {
        let lower = text.to_lowercase();
        [
            SECRET,
            "insert into",
            "select ",
            "sqlite",
            "postgres",
            "sqlx",
            "database:",
            "relation",
            "no such table",
            "execution error",
        ]
        .iter()
        .any(|w| lower.contains(w))
    };
    #[track_caller]
    fn assert_internal(r: &Value, what: &str, leaked: &dyn Fn(&str) -> bool) {
        assert_eq!(error_code(r).as_deref(), Some("INTERNAL"), "{what}: {r}");
        let message = crate::harness::error_message(r);
        assert!(
            message.contains("request id"),
            "{what}: the message names the request id: {r}"
        );
        assert!(
            !leaked(&r.to_string()),
            "{what}: internal detail leaked: {r}"
        );
    }

    // A write: posting a comment fails in its insert.
    for sql in refuse_inserts("comments") {
        probe.execute(&sql).await;
    }
    let before = probe.snapshot().await;
    let r = app
        .gql_as(
            &s.participant_a,
            "mutation($p: ID!) { postComment(project: $p, body: \"hello\") { id } }",
            json!({ "p": s.submitted }),
        )
        .await;
    assert_internal(&r, "a failing insert", &leaked);
    probe
        .nothing_written_since(&before, &[], "a failing comment")
        .await;

    // The audit append every mutation makes: the business write goes back with it.
    for sql in refuse_inserts("audit_events") {
        probe.execute(&sql).await;
    }
    let r = app
        .gql_as(
            &s.participant_a,
            op("UpdateProject"),
            json!({ "id": s.draft, "input": { "title": "Never stored" } }),
        )
        .await;
    assert_internal(&r, "a failing audit append", &leaked);
    let r = app
        .gql_as(
            &s.organizer_a,
            op("CreateTrack"),
            json!({ "event": s.event_a, "name": "Never stored" }),
        )
        .await;
    assert_internal(&r, "a failing audit append", &leaked);
    probe
        .nothing_written_since(&before, &[], "mutations whose audit append failed")
        .await;

    // A read: a table that is gone (renamed away before this server ever read it).
    probe
        .execute("ALTER TABLE vote_campaigns RENAME TO vote_campaigns_gone")
        .await;
    let r = app
        .gql(
            "query($e: String!) { event(slug: $e) { voting { mode } } }",
            json!({ "e": s.event_a }),
        )
        .await;
    assert_internal(&r, "a failing read", &leaked);

    // Authenticating the caller: the sessions table is gone. HTTP 500, still only the id.
    probe
        .execute("ALTER TABLE sessions RENAME TO sessions_gone")
        .await;
    let r = app
        .gql_resp(
            Some(&s.organizer_a),
            "{ viewer { user { id } } }",
            json!({}),
        )
        .await;
    assert_eq!(r.status, 500, "{}", r.text);
    assert_internal(&r.json(), "a failing authentication", &leaked);
    // The server carries on.
    assert_eq!(app.get("/healthz").await.status, 200);
}

// ---- CORS ------------------------------------------------------------------------------

/// No response allows another origin to read it: neither a preflight nor a request with a
/// foreign `Origin` gets `Access-Control-Allow-Origin` naming that origin (or `*`), nor
/// `Access-Control-Allow-Credentials`; and a mutation sent from that origin with the
/// session cookie runs nothing.
async fn cors_never_allows_a_foreign_origin(app: App) {
    let email = format!("cors-{}@example.org", unique());
    let (token, _) = app.sign_up_full(&email).await;
    let cookie = session_cookie(&app, &email).await;
    let probe = app.probe().await;
    let before = probe.snapshot().await;
    let evil = "https://evil.example";
    #[track_caller]
    fn assert_not_allowed(r: &crate::harness::Resp, what: &str) {
        let allow = r.header("access-control-allow-origin");
        assert!(
            allow.is_none(),
            "{what}: Access-Control-Allow-Origin {allow:?} ({} {})",
            r.status,
            r.text
        );
        assert!(
            r.header("access-control-allow-credentials").is_none(),
            "{what}: {:?}",
            r.headers
        );
    }
    for path in [
        "/graphql",
        "/graphql/ws",
        "/healthz",
        "/.well-known/verdict-signing-key",
        "/",
        "/embed/x",
    ] {
        let req = app
            .http
            .request(reqwest::Method::OPTIONS, app.url(path))
            .header("origin", evil)
            .header("access-control-request-method", "POST")
            .header(
                "access-control-request-headers",
                "content-type, authorization, x-verdict-csrf",
            )
            .send()
            .await
            .expect("OPTIONS");
        let r = crate::harness::Resp {
            status: req.status().as_u16(),
            headers: req.headers().clone(),
            text: req.text().await.unwrap_or_default(),
        };
        assert!(r.status < 500, "preflight of {path}: {}", r.status);
        assert_not_allowed(&r, &format!("preflight of {path}"));
        let r = app.get_with(path, &[("origin", evil)]).await;
        assert_not_allowed(&r, &format!("GET {path}"));
    }
    let auth = format!("Bearer {token}");
    let r = app
        .post_raw(
            json!({ "query": "{ viewer { user { email } } }" }).to_string(),
            "application/json",
            &[("origin", evil), ("authorization", &auth)],
        )
        .await;
    assert_not_allowed(&r, "a signed-in POST from a foreign origin");
    // What a foreign page can make a browser send: the cookie, no custom header.
    let mint = json!({ "query": "mutation { createApiToken(label: \"cors\") { token } }" });
    for content_type in ["application/json", "text/plain"] {
        let r = app
            .post_raw(
                mint.to_string(),
                content_type,
                &[("origin", evil), ("cookie", &cookie)],
            )
            .await;
        assert_not_allowed(&r, "a cookie mutation from a foreign origin");
        assert!(
            matches!(r.status, 403 | 415),
            "refused ({content_type}): {} {}",
            r.status,
            r.text
        );
    }
    probe
        .nothing_written_since(&before, &[], "requests from a foreign origin")
        .await;
}

// ---- log-in throttling -----------------------------------------------------------------

/// Aliases and batches do not multiply log-in attempts past the throttle: each aliased or
/// batched `logIn` is one attempt (`--login-attempts 3`), the rest are RATE_LIMITED, the
/// right password among them gets no session, and nothing but the throttle's own counter
/// is written.
async fn aliased_and_batched_log_ins_are_each_counted(app: App) {
    let victim = format!("aliased-{}@example.org", unique());
    app.sign_up_full(&victim).await;
    let probe = app.probe().await;
    let before = probe.snapshot().await;
    let aliases = |n: usize, right_last: bool| {
        let fields: String = (0..n)
            .map(|i| {
                let password = if right_last && i == n - 1 {
                    PASSWORD.to_string()
                } else {
                    format!("guess {i}")
                };
                format!(" a{i}: logIn(email: \"{victim}\", password: \"{password}\") {{ token }}")
            })
            .collect();
        format!("mutation {{{fields} }}")
    };
    let codes = |r: &Value| -> Vec<String> {
        r["errors"]
            .as_array()
            .map(|e| {
                e.iter()
                    .map(|e| e["extensions"]["code"].as_str().unwrap_or("?").to_string())
                    .collect()
            })
            .unwrap_or_default()
    };
    // Many aliases in one anonymous document: refused whole by their cost.
    let r = app.gql(&aliases(20, true), json!({})).await;
    assert_eq!(error_code(&r).as_deref(), Some("QUERY_TOO_COMPLEX"), "{r}");
    // Three aliases fit: three attempts, each counted.
    let r = app.gql(&aliases(3, false), json!({})).await;
    let mut got = codes(&r);
    got.sort();
    assert_eq!(got, ["UNAUTHENTICATED"; 3], "{r}");
    let r = app
        .gql(
            op("LogIn"),
            json!({ "email": victim, "password": PASSWORD }),
        )
        .await;
    assert_eq!(
        error_code(&r).as_deref(),
        Some("RATE_LIMITED"),
        "three aliased guesses spent the account's three attempts: {r}"
    );

    // A signed-in caller has a larger budget: nine aliases fit, and none gets through.
    let other = format!("aliased-other-{}@example.org", unique());
    let (signed_in, _) = app.sign_up_full(&other).await;
    let victim2 = format!("aliased-2-{}@example.org", unique());
    app.sign_up_full(&victim2).await;
    let before_second = probe.snapshot().await;
    let nine = aliases(9, true).replace(&victim, &victim2);
    let r = app.gql_as(&signed_in, &nine, json!({})).await;
    let got = codes(&r);
    assert_eq!(got.len(), 9, "nine answers, all refusals: {r}");
    assert_eq!(
        got.iter().filter(|c| *c == "UNAUTHENTICATED").count(),
        3,
        "{r}"
    );
    assert_eq!(
        got.iter().filter(|c| *c == "RATE_LIMITED").count(),
        6,
        "{r}"
    );
    assert!(!r.to_string().contains("\"token\":\""), "{r}");
    probe
        .nothing_written_since(&before_second, &["login_throttle"], "nine aliased log-ins")
        .await;

    // A batch of ten log-ins: three attempts, seven refusals, no session.
    let victim3 = format!("batched-{}@example.org", unique());
    app.sign_up_full(&victim3).await;
    let before_batch = probe.snapshot().await;
    let batch: Vec<Value> = (0..10)
        .map(|i| {
            let password = if i == 9 {
                PASSWORD.to_string()
            } else {
                format!("guess {i}")
            };
            json!({ "query": op("LogIn"), "variables": { "email": victim3, "password": password } })
        })
        .collect();
    let r = app
        .post_raw(Value::Array(batch).to_string(), "application/json", &[])
        .await;
    let answers = r.json();
    let got: Vec<String> = answers
        .as_array()
        .unwrap_or_else(|| panic!("a batch answer: {answers}"))
        .iter()
        .map(|a| error_code(a).unwrap_or_else(|| "none".into()))
        .collect();
    assert_eq!(
        got.iter().filter(|c| *c == "UNAUTHENTICATED").count(),
        3,
        "{answers}"
    );
    assert_eq!(
        got.iter().filter(|c| *c == "RATE_LIMITED").count(),
        7,
        "{answers}"
    );
    probe
        .nothing_written_since(&before_batch, &["login_throttle"], "ten batched log-ins")
        .await;
    probe
        .nothing_written_since(
            &before,
            &[
                "login_throttle",
                "users",
                "sessions",
                "audit_events",
                "audit_head",
                "email_confirmations",
                "outbox_messages",
            ],
            "the whole test, beyond its sign-ups",
        )
        .await;
}

/// The request rate limit keys on the socket's peer unless it is a trusted proxy: a client
/// rotating `X-Forwarded-For`, `X-Real-IP` or `Forwarded` gets no fresh budget, and neither
/// does one whose peer is not among `--trusted-proxies`.
async fn rotating_forwarded_headers_do_not_reset_the_request_rate_limit(app: App) {
    async fn burst(app: &App, header: &str, rounds: usize) -> Vec<u16> {
        let mut statuses = vec![];
        for i in 0..rounds {
            let value = match header {
                "forwarded" => format!("for=198.51.100.{i}"),
                _ => format!("198.51.100.{i}"),
            };
            let r = app
                .post_raw(
                    json!({ "query": "mutation { logOut }" }).to_string(),
                    "application/json",
                    &[(header, &value)],
                )
                .await;
            statuses.push(r.status);
        }
        statuses
    }
    let probe = app.probe().await;
    let before = probe.snapshot().await;
    for header in ["x-forwarded-for", "x-real-ip", "forwarded"] {
        let statuses = burst(&app, header, 12).await;
        let passed = statuses.iter().filter(|s| **s != 429).count();
        // The burst of 3, plus a refill of one a second for however long this took.
        assert!(
            passed <= 6,
            "rotating {header} gets no fresh budget: {statuses:?}"
        );
        assert!(statuses.contains(&429), "{header}: {statuses:?}");
    }
    // A proxy is trusted only at its own address: this peer is not it.
    let proxied = app
        .sibling(&[
            "--rate-limit-per-second",
            "1",
            "--rate-limit-burst",
            "3",
            "--trusted-proxies",
            "10.0.0.1",
        ])
        .await;
    let statuses = burst(&proxied, "x-forwarded-for", 12).await;
    assert!(
        statuses.iter().filter(|s| **s != 429).count() <= 6,
        "{statuses:?}"
    );
    // The sibling server started on a database with no account, so it issued its own
    // one-time setup link (start-up work, not a request's): that table may change.
    probe
        .nothing_written_since(&before, &["setup_links"], "rotating forwarded headers")
        .await;
}

// ---- websockets ------------------------------------------------------------------------

/// An anonymous socket runs public queries only: mutations and organizer feeds that need a
/// caller are refused, nothing is written.
async fn a_socket_without_credentials_runs_nothing_that_needs_them(app: App) {
    let s = app.scenario().await;
    let probe = app.probe().await;
    let before = probe.snapshot().await;
    let mut ws = app.ws(json!({})).await;
    let a = json!({ "e": s.event_a });
    let refused = [
        (
            "mutate",
            "mutation { createApiToken(label: \"ws\") { token } }",
            json!({}),
        ),
        (
            "track",
            "mutation($e: String!) { createTrack(event: $e, name: \"ws\") { id } }",
            a.clone(),
        ),
        (
            "submit",
            "mutation($id: ID!) { submitProject(id: $id) { id } }",
            json!({ "id": s.draft }),
        ),
        (
            "members",
            "query($e: String!) { event(slug: $e) { members(first: 5) { totalCount } } }",
            a.clone(),
        ),
        (
            "progress",
            "subscription($e: String!) { judgingProgress(event: $e) { assignments } }",
            a.clone(),
        ),
        (
            "board",
            "subscription($e: String!) { leaderboardUpdated(event: $e) { __typename } }",
            a.clone(),
        ),
    ];
    for (id, q, vars) in refused {
        let msg = ws_answer(&mut ws, id, q, vars).await;
        assert!(
            matches!(ws_code(&msg).as_str(), "UNAUTHENTICATED" | "FORBIDDEN"),
            "{id}: {msg}"
        );
        assert!(no_data(&msg["payload"]["data"]), "{id}: {msg}");
    }
    // The socket itself still answers public queries.
    let msg = ws_answer(
        &mut ws,
        "public",
        "query($e: String!) { event(slug: $e) { slug } }",
        a,
    )
    .await;
    assert_eq!(
        msg["payload"]["data"]["event"]["slug"],
        json!(s.event_a),
        "{msg}"
    );
    probe
        .nothing_written_since(&before, &[], "an anonymous socket")
        .await;
}

/// A socket whose `connection_init` carries a dead credential (logged out, revoked,
/// expired, made up) is refused, not made anonymous: no `connection_ack`, the connection
/// closes, and an operation sent right behind the init runs nothing.
async fn a_socket_opened_with_a_dead_credential_is_refused(app: App) {
    let email = format!("ws-dead-{}@example.org", unique());
    let (session, _) = app.sign_up_full(&email).await;
    let logged_out = app.log_in(&email, PASSWORD).await;
    app.ok(Some(&logged_out), "mutation { logOut }", json!({}))
        .await;
    let d = app
        .ok(
            Some(&session),
            "mutation { createApiToken(label: \"dead\") { token apiToken { id } } }",
            json!({}),
        )
        .await;
    let revoked = str_at(&d, "/createApiToken/token");
    app.ok(
        Some(&session),
        "mutation($id: ID!) { revokeApiToken(id: $id) { id } }",
        json!({ "id": str_at(&d, "/createApiToken/apiToken/id") }),
    )
    .await;
    let soon = crate::harness::rfc3339(chrono::Utc::now() + chrono::Duration::seconds(2));
    let d = app
        .ok(
            Some(&session),
            "mutation($e: DateTime) { createApiToken(label: \"short\", expiresAt: $e) { token } }",
            json!({ "e": soon }),
        )
        .await;
    let expiring = str_at(&d, "/createApiToken/token");
    // Wait until it has expired, by asking the server (its clock is the database's).
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    while app
        .gql_resp(Some(&expiring), "{ __typename }", json!({}))
        .await
        .status
        != 401
    {
        assert!(
            std::time::Instant::now() < deadline,
            "the token never expired"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let probe = app.probe().await;
    let before = probe.snapshot().await;
    for (what, token) in [
        ("a logged-out session", logged_out.as_str()),
        ("a revoked API token", revoked.as_str()),
        ("an expired API token", expiring.as_str()),
        ("a made-up token", "vrd_made_up_token"),
    ] {
        let mut ws = app.ws_unacknowledged(bearer(token), &[]).await;
        ws.subscribe(
            "mint",
            "mutation { createApiToken(label: \"from-a-dead-socket\") { token } }",
            json!({}),
        )
        .await;
        let (messages, close) = ws.until_closed(WAIT).await;
        assert!(
            messages.iter().all(|m| m["type"] != "connection_ack"),
            "{what}: no acknowledgement: {messages:?}"
        );
        assert!(
            messages.iter().all(|m| m["id"] != "mint"),
            "{what}: the operation got no answer: {messages:?}"
        );
        assert!(close.is_some(), "{what}: closed with a code: {messages:?}");
    }
    probe
        .nothing_written_since(&before, &[], "sockets with dead credentials")
        .await;
    // The live session still opens a socket.
    let mut ws = app.ws(bearer(&session)).await;
    let msg = ws_answer(&mut ws, "me", "{ viewer { user { email } } }", json!({})).await;
    assert_eq!(
        msg["payload"]["data"]["viewer"]["user"]["email"],
        json!(email)
    );
}

/// Signed in as another event's organizer, a socket gets nothing organizers-only of this
/// event: its live judging, its leaderboard, its members, its writes.
async fn another_events_organizer_gets_nothing_of_this_event_on_a_socket(app: App) {
    let s = app.scenario().await;
    let probe = app.probe().await;
    let before = probe.snapshot().await;
    let mut ws = app.ws(bearer(&s.organizer_b)).await;
    let a = json!({ "e": s.event_a });
    let refused = [
        (
            "progress",
            "subscription($e: String!) { judgingProgress(event: $e) { assignments } }",
            a.clone(),
        ),
        (
            "board",
            "subscription($e: String!) { leaderboardUpdated(event: $e) { __typename } }",
            a.clone(),
        ),
        (
            "members",
            "query($e: String!) { event(slug: $e) { members(first: 5) { edges { node { email } } } } }",
            a.clone(),
        ),
        (
            "track",
            "mutation($e: String!) { createTrack(event: $e, name: \"from B\") { id } }",
            a.clone(),
        ),
        (
            "hide",
            "mutation($id: ID!) { hideProject(id: $id, reason: \"from B\") { id } }",
            json!({ "id": s.submitted }),
        ),
        (
            "grant",
            "mutation($e: String!, $m: String!) { grantRole(event: $e, email: $m, role: ORGANIZER) { id } }",
            json!({ "e": s.event_a, "m": s.emails.organizer_b }),
        ),
    ];
    for (id, q, vars) in refused {
        let msg = ws_answer(&mut ws, id, q, vars).await;
        assert!(
            matches!(ws_code(&msg).as_str(), "FORBIDDEN" | "NOT_FOUND"),
            "{id}: {msg}"
        );
        assert!(
            no_data(&msg["payload"]["data"])
                || msg["payload"]["data"]["event"]["members"].is_null(),
            "{id}: {msg}"
        );
        assert!(!msg.to_string().contains(&s.emails.judge_a), "{id}: {msg}");
    }
    // Its own event's feed is open to it (so the refusals above were about the event).
    let msg = ws_answer(
        &mut ws,
        "own",
        "query($e: String!) { event(slug: $e) { members(first: 5) { totalCount } } }",
        json!({ "e": s.event_b }),
    )
    .await;
    assert_eq!(ws_code(&msg), "none", "{msg}");
    probe
        .nothing_written_since(&before, &[], "another event's organizer on a socket")
        .await;
}

// ---- cross-event access by id ------------------------------------------------------------

/// The kinds of object an ID argument names.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Obj {
    /// A submitted project (public in the gallery, but not its organizers' to change).
    Project,
    /// A draft project (visible to its team and organizers only).
    Draft,
    Team,
    Track,
    /// A judge's membership.
    Judge,
    Assignment,
    Comment,
    Prize,
    Invitation,
    Webhook,
    Delivery,
    Run,
    Job,
    ApiToken,
}

/// How a case is sent and what a refusal looks like.
#[derive(Clone, Copy)]
enum Via {
    /// A mutation: an error, this field null.
    Mutation(&'static str),
    /// A query: an error, or null / an empty list at this pointer under `data`.
    Query(&'static str),
    /// A subscription on a websocket: an error.
    Subscription,
}

/// One ID argument of the schema, called by members of event A with an object of another
/// event.
struct Case {
    /// `Type.field(argument)`, or `Type.field(argument.inputField)`, as in the SDL.
    site: &'static str,
    obj: Obj,
    via: Via,
    /// For an argument that refers to a second object beside the one the operation acts on
    /// (a track, a judge, a run): BAD_USER_INPUT naming one of these also counts as a
    /// refusal, the answer the project gives for a reference that is not the event's.
    reference: &'static [&'static str],
    query: &'static str,
    /// The variables, given the world and the foreign id.
    vars: fn(&World, &str) -> Value,
}

/// Event A with its members (the callers) and objects to pair with foreign ones, and
/// event C (imported, judged, with something of every kind) whose objects they aim at.
struct World {
    a: crate::harness::Scenario,
    /// Judge A's membership in A.
    a_judge: String,
    /// A prize of A.
    a_prize: String,
    /// Signed up and registered in A, in no team.
    newcomer: String,
    /// A member of C's team.
    c_member: String,
    /// Each kind of object of event C: (public id, external id if it has one).
    c: BTreeMap<Obj, (String, Option<String>)>,
}

impl World {
    fn e(&self) -> &str {
        &self.a.event_a
    }
}

fn cases() -> Vec<Case> {
    use Obj::*;
    use Via::*;
    const NONE: &[&str] = &[];
    vec![
        Case {
            site: "Query.project(id)",
            obj: Draft,
            via: Query("/project"),
            reference: NONE,
            query: "query($id: ID!) { project(id: $id) { id title } }",
            vars: |_, id| json!({ "id": id }),
        },
        Case {
            site: "Event.calibrationRun(id)",
            obj: Run,
            via: Query("/event/calibrationRun"),
            reference: NONE,
            query: "query($e: String!, $id: ID!) { event(slug: $e) { calibrationRun(id: $id) { id inputsHash } } }",
            vars: |w, id| json!({ "e": w.e(), "id": id }),
        },
        Case {
            site: "Event.calibrationJob(id)",
            obj: Job,
            via: Query("/event/calibrationJob"),
            reference: NONE,
            query: "query($e: String!, $id: ID!) { event(slug: $e) { calibrationJob(id: $id) { id state } } }",
            vars: |w, id| json!({ "e": w.e(), "id": id }),
        },
        Case {
            site: "Event.projects(track)",
            obj: Track,
            via: Query("/event/projects"),
            reference: &["track"],
            query: "query($e: String!, $t: ID) { event(slug: $e) { projects(track: $t, first: 10) { totalCount edges { node { id title } } } } }",
            vars: |w, id| json!({ "e": w.e(), "t": id }),
        },
        Case {
            site: "Subscription.calibrationJob(job)",
            obj: Job,
            via: Subscription,
            reference: NONE,
            query: "subscription($e: String!, $j: ID!) { calibrationJob(event: $e, job: $j) { id state } }",
            vars: |w, id| json!({ "e": w.e(), "j": id }),
        },
        Case {
            site: "Mutation.addTeamMember(team)",
            obj: Team,
            via: Mutation("addTeamMember"),
            reference: NONE,
            query: "mutation($t: ID!, $m: String!) { addTeamMember(team: $t, email: $m) { id } }",
            vars: |w, id| json!({ "t": id, "m": w.newcomer }),
        },
        Case {
            site: "Mutation.assignJudge(judge)",
            obj: Judge,
            via: Mutation("assignJudge"),
            reference: &["judge"],
            query: "mutation($e: String!, $j: ID!, $p: ID!) { assignJudge(event: $e, judge: $j, project: $p) { id } }",
            vars: |w, id| json!({ "e": w.e(), "j": id, "p": w.a.submitted }),
        },
        Case {
            site: "Mutation.assignJudge(project)",
            obj: Project,
            via: Mutation("assignJudge"),
            reference: &["project"],
            query: "mutation($e: String!, $j: ID!, $p: ID!) { assignJudge(event: $e, judge: $j, project: $p) { id } }",
            vars: |w, id| json!({ "e": w.e(), "j": w.a_judge, "p": id }),
        },
        Case {
            site: "Mutation.assignPrize(id)",
            obj: Prize,
            via: Mutation("assignPrize"),
            reference: NONE,
            query: "mutation($id: ID!, $p: ID) { assignPrize(id: $id, project: $p) { id } }",
            vars: |w, id| json!({ "id": id, "p": w.a.submitted }),
        },
        Case {
            site: "Mutation.assignPrize(project)",
            obj: Project,
            via: Mutation("assignPrize"),
            reference: &["project"],
            query: "mutation($id: ID!, $p: ID) { assignPrize(id: $id, project: $p) { id } }",
            vars: |w, id| json!({ "id": w.a_prize, "p": id }),
        },
        Case {
            site: "Mutation.castVotes(votes.project)",
            obj: Project,
            via: Mutation("castVotes"),
            reference: &["project", "votes"],
            query: "mutation($e: String!, $p: ID!) { castVotes(event: $e, votes: [{ project: $p, votes: 1 }]) { spent } }",
            vars: |w, id| json!({ "e": w.e(), "p": id }),
        },
        Case {
            site: "Mutation.changeProjectTrack(id)",
            obj: Project,
            via: Mutation("changeProjectTrack"),
            reference: NONE,
            query: "mutation($id: ID!, $t: ID!) { changeProjectTrack(id: $id, track: $t, reason: \"attack\") { id } }",
            vars: |w, id| json!({ "id": id, "t": w.a.track_a }),
        },
        Case {
            site: "Mutation.changeProjectTrack(track)",
            obj: Track,
            via: Mutation("changeProjectTrack"),
            reference: &["track"],
            query: "mutation($id: ID!, $t: ID!) { changeProjectTrack(id: $id, track: $t, reason: \"attack\") { id } }",
            vars: |w, id| json!({ "id": w.a.submitted, "t": id }),
        },
        Case {
            site: "Mutation.deleteTrack(id)",
            obj: Track,
            via: Mutation("deleteTrack"),
            reference: NONE,
            query: "mutation($id: ID!) { deleteTrack(id: $id) }",
            vars: |_, id| json!({ "id": id }),
        },
        Case {
            site: "Mutation.clearDuplicate(id)",
            obj: Project,
            via: Mutation("clearDuplicate"),
            reference: NONE,
            query: "mutation($id: ID!) { clearDuplicate(id: $id) { id } }",
            vars: |_, id| json!({ "id": id }),
        },
        Case {
            site: "Mutation.createPrize(input.track)",
            obj: Track,
            via: Mutation("createPrize"),
            reference: &["track"],
            query: "mutation($e: String!, $t: ID) { createPrize(event: $e, input: { name: \"Attack\", position: 2, track: $t }) { id } }",
            vars: |w, id| json!({ "e": w.e(), "t": id }),
        },
        Case {
            site: "Mutation.createProject(input.track)",
            obj: Track,
            via: Mutation("createProject"),
            reference: &["track"],
            query: "mutation($e: String!, $t: ID) { createProject(event: $e, input: { title: \"Attack\", track: $t }) { id } }",
            vars: |w, id| json!({ "e": w.e(), "t": id }),
        },
        Case {
            site: "Mutation.disqualifyProject(id)",
            obj: Project,
            via: Mutation("disqualifyProject"),
            reference: NONE,
            query: "mutation($id: ID!) { disqualifyProject(id: $id, reason: \"attack\") { id } }",
            vars: |_, id| json!({ "id": id }),
        },
        Case {
            site: "Mutation.grantRole(tracks)",
            obj: Track,
            via: Mutation("grantRole"),
            reference: &["track"],
            query: "mutation($e: String!, $m: String!, $t: ID!) { grantRole(event: $e, email: $m, role: JUDGE, tracks: [$t]) { id } }",
            vars: |w, id| json!({ "e": w.e(), "m": w.newcomer, "t": id }),
        },
        Case {
            site: "Mutation.hideComment(id)",
            obj: Comment,
            via: Mutation("hideComment"),
            reference: NONE,
            query: "mutation($id: ID!) { hideComment(id: $id, reason: \"attack\") { id } }",
            vars: |_, id| json!({ "id": id }),
        },
        Case {
            site: "Mutation.hideProject(id)",
            obj: Project,
            via: Mutation("hideProject"),
            reference: NONE,
            query: "mutation($id: ID!) { hideProject(id: $id, reason: \"attack\") { id } }",
            vars: |_, id| json!({ "id": id }),
        },
        Case {
            site: "Mutation.inviteToTeam(team)",
            obj: Team,
            via: Mutation("inviteToTeam"),
            reference: NONE,
            query: "mutation($t: ID!, $m: String!) { inviteToTeam(team: $t, email: $m) { link } }",
            vars: |w, id| json!({ "t": id, "m": w.newcomer }),
        },
        Case {
            site: "Mutation.leaveTeam(team)",
            obj: Team,
            via: Mutation("leaveTeam"),
            reference: NONE,
            query: "mutation($t: ID!) { leaveTeam(team: $t) { id } }",
            vars: |_, id| json!({ "t": id }),
        },
        Case {
            site: "Mutation.markDuplicate(id)",
            obj: Project,
            via: Mutation("markDuplicate"),
            reference: NONE,
            query: "mutation($id: ID!, $of: ID!) { markDuplicate(id: $id, of: $of) { id } }",
            vars: |w, id| json!({ "id": id, "of": w.a.submitted }),
        },
        Case {
            site: "Mutation.markDuplicate(of)",
            obj: Project,
            via: Mutation("markDuplicate"),
            reference: &["of"],
            query: "mutation($id: ID!, $of: ID!) { markDuplicate(id: $id, of: $of) { id } }",
            vars: |w, id| json!({ "id": w.a.submitted, "of": id }),
        },
        Case {
            site: "Mutation.postComment(project)",
            obj: Draft,
            via: Mutation("postComment"),
            reference: NONE,
            query: "mutation($p: ID!) { postComment(project: $p, body: \"attack\") { id } }",
            vars: |_, id| json!({ "p": id }),
        },
        Case {
            site: "Mutation.publishResults(run)",
            obj: Run,
            via: Mutation("publishResults"),
            reference: &["run"],
            query: "mutation($e: String!, $r: ID!) { publishResults(event: $e, run: $r) { version } }",
            vars: |w, id| json!({ "e": w.e(), "r": id }),
        },
        Case {
            site: "Mutation.issueJudgeSignIn(judge)",
            obj: Judge,
            via: Mutation("issueJudgeSignIn"),
            reference: &["judge"],
            query: "mutation($e: String!, $j: ID!) { issueJudgeSignIn(event: $e, judge: $j) { link code } }",
            vars: |w, id| json!({ "e": w.e(), "j": id }),
        },
        Case {
            site: "Mutation.revokeJudgeSignIn(judge)",
            obj: Judge,
            via: Mutation("revokeJudgeSignIn"),
            reference: &["judge"],
            query: "mutation($e: String!, $j: ID!) { revokeJudgeSignIn(event: $e, judge: $j) { id } }",
            vars: |w, id| json!({ "e": w.e(), "j": id }),
        },
        Case {
            site: "Mutation.recuseJudge(judge)",
            obj: Judge,
            via: Mutation("recuseJudge"),
            reference: &["judge"],
            query: "mutation($e: String!, $j: ID!, $t: ID!) { recuseJudge(event: $e, judge: $j, team: $t, reason: \"attack\") { id } }",
            vars: |w, id| json!({ "e": w.e(), "j": id, "t": w.a.team_a }),
        },
        Case {
            site: "Mutation.recuseJudge(team)",
            obj: Team,
            via: Mutation("recuseJudge"),
            reference: &["team"],
            query: "mutation($e: String!, $j: ID!, $t: ID!) { recuseJudge(event: $e, judge: $j, team: $t, reason: \"attack\") { id } }",
            vars: |w, id| json!({ "e": w.e(), "j": w.a_judge, "t": id }),
        },
        Case {
            site: "Mutation.removeTeamMember(team)",
            obj: Team,
            via: Mutation("removeTeamMember"),
            reference: NONE,
            query: "mutation($t: ID!, $m: String!) { removeTeamMember(team: $t, email: $m, reason: \"attack\") { id } }",
            vars: |w, id| json!({ "t": id, "m": w.c_member }),
        },
        Case {
            site: "Mutation.renameTeam(team)",
            obj: Team,
            via: Mutation("renameTeam"),
            reference: NONE,
            query: "mutation($t: ID!) { renameTeam(team: $t, name: \"Pwned\", reason: \"attack\") { id } }",
            vars: |_, id| json!({ "t": id }),
        },
        Case {
            site: "Mutation.requalifyProject(id)",
            obj: Project,
            via: Mutation("requalifyProject"),
            reference: NONE,
            query: "mutation($id: ID!) { requalifyProject(id: $id) { id } }",
            vars: |_, id| json!({ "id": id }),
        },
        Case {
            site: "Mutation.resendInvitation(id)",
            obj: Invitation,
            via: Mutation("resendInvitation"),
            reference: NONE,
            query: "mutation($id: ID!) { resendInvitation(id: $id) { id } }",
            vars: |_, id| json!({ "id": id }),
        },
        Case {
            site: "Mutation.retryWebhookDelivery(id)",
            obj: Delivery,
            via: Mutation("retryWebhookDelivery"),
            reference: NONE,
            query: "mutation($id: ID!) { retryWebhookDelivery(id: $id) { id } }",
            vars: |_, id| json!({ "id": id }),
        },
        Case {
            site: "Mutation.revokeApiToken(id)",
            obj: ApiToken,
            via: Mutation("revokeApiToken"),
            reference: NONE,
            query: "mutation($id: ID!) { revokeApiToken(id: $id) { id } }",
            vars: |_, id| json!({ "id": id }),
        },
        Case {
            site: "Mutation.revokeInvitation(id)",
            obj: Invitation,
            via: Mutation("revokeInvitation"),
            reference: NONE,
            query: "mutation($id: ID!) { revokeInvitation(id: $id) { id } }",
            vars: |_, id| json!({ "id": id }),
        },
        Case {
            site: "Mutation.rotateInviteCode(team)",
            obj: Team,
            via: Mutation("rotateInviteCode"),
            reference: NONE,
            query: "mutation($t: ID!) { rotateInviteCode(team: $t) { id inviteCode } }",
            vars: |_, id| json!({ "t": id }),
        },
        Case {
            site: "Mutation.renameTrack(id)",
            obj: Track,
            via: Mutation("renameTrack"),
            reference: NONE,
            query: "mutation($id: ID!) { renameTrack(id: $id, name: \"attack\") { id } }",
            vars: |_, id| json!({ "id": id }),
        },
        Case {
            site: "Mutation.saveReview(assignment)",
            obj: Assignment,
            via: Mutation("saveReview"),
            reference: NONE,
            query: "mutation($a: ID!) { saveReview(assignment: $a, scores: [{ criterion: \"impact\", value: 3 }], comment: \"attack\") { id } }",
            vars: |_, id| json!({ "a": id }),
        },
        Case {
            site: "Mutation.setProjectTable(project)",
            obj: Project,
            via: Mutation("setProjectTable"),
            reference: NONE,
            query: "mutation($p: ID!) { setProjectTable(project: $p, table: \"99\") { id } }",
            vars: |_, id| json!({ "p": id }),
        },
        Case {
            site: "Mutation.setWebhookActive(id)",
            obj: Webhook,
            via: Mutation("setWebhookActive"),
            reference: NONE,
            query: "mutation($id: ID!) { setWebhookActive(id: $id, active: false) { id } }",
            vars: |_, id| json!({ "id": id }),
        },
        Case {
            site: "Mutation.submitProject(id)",
            obj: Draft,
            via: Mutation("submitProject"),
            reference: NONE,
            query: "mutation($id: ID!) { submitProject(id: $id) { id } }",
            vars: |_, id| json!({ "id": id }),
        },
        Case {
            site: "Mutation.unassignJudge(assignment)",
            obj: Assignment,
            via: Mutation("unassignJudge"),
            reference: NONE,
            query: "mutation($a: ID!) { unassignJudge(assignment: $a) }",
            vars: |_, id| json!({ "a": id }),
        },
        Case {
            site: "Mutation.unhideProject(id)",
            obj: Project,
            via: Mutation("unhideProject"),
            reference: NONE,
            query: "mutation($id: ID!) { unhideProject(id: $id) { id } }",
            vars: |_, id| json!({ "id": id }),
        },
        Case {
            site: "Mutation.updateProject(id)",
            obj: Draft,
            via: Mutation("updateProject"),
            reference: NONE,
            query: "mutation($id: ID!) { updateProject(id: $id, input: { title: \"Pwned\" }) { id } }",
            vars: |_, id| json!({ "id": id }),
        },
        Case {
            site: "Mutation.updateProject(input.track)",
            obj: Track,
            via: Mutation("updateProject"),
            reference: &["track"],
            query: "mutation($id: ID!, $t: ID) { updateProject(id: $id, input: { track: $t }) { id } }",
            vars: |w, id| json!({ "id": w.a.draft, "t": id }),
        },
        Case {
            site: "Mutation.withdrawProject(id)",
            obj: Project,
            via: Mutation("withdrawProject"),
            reference: NONE,
            query: "mutation($id: ID!) { withdrawProject(id: $id) { id } }",
            vars: |_, id| json!({ "id": id }),
        },
    ]
}

/// Every place in `schema.graphql` where a client hands the server an ID: each argument of
/// type `ID` (or a list of them) of every object type's fields, as `Type.field(arg)`, and
/// each `ID` field of an input object argument, as `Type.field(arg.field)`.
fn id_sites() -> BTreeSet<String> {
    use apollo_compiler::Schema;
    use apollo_compiler::schema::ExtendedType;
    let schema = Schema::parse_and_validate(include_str!("../../schema.graphql"), "schema.graphql")
        .unwrap_or_else(|e| panic!("schema.graphql: {}", e.errors));
    let mut sites = BTreeSet::new();
    for (type_name, ty) in &schema.types {
        let ExtendedType::Object(object) = ty else {
            continue;
        };
        for (field_name, field) in &object.fields {
            for arg in &field.arguments {
                let named = arg.ty.inner_named_type();
                if named == "ID" {
                    sites.insert(format!("{type_name}.{field_name}({})", arg.name));
                } else if let Some(ExtendedType::InputObject(input)) = schema.types.get(named) {
                    for (input_field, def) in &input.fields {
                        if def.ty.inner_named_type() == "ID" {
                            sites.insert(format!(
                                "{type_name}.{field_name}({}.{input_field})",
                                arg.name
                            ));
                        }
                    }
                }
            }
        }
    }
    sites
}

/// Event A's members (organizer, judge, participant) aim every ID argument of the schema
/// at objects of another event: its projects (submitted and draft), team, track, judge,
/// assignment, comment, prize, invitation, webhook and delivery, calibration run and job,
/// and its organizer's API token, by public id and, where the object has one, by external
/// id. Every call is refused (NOT_FOUND or FORBIDDEN; for a reference beside the object
/// acted on, BAD_USER_INPUT naming it), no other event's id comes back, and nothing is
/// written. The cases are a table checked against `schema.graphql`: a new ID argument
/// without a case fails this test.
async fn no_id_argument_reaches_another_events_objects(app: App) {
    let cases = cases();
    let covered: BTreeSet<String> = cases.iter().map(|c| c.site.to_string()).collect();
    let sites = id_sites();
    let missing: Vec<&String> = sites.difference(&covered).collect();
    let stale: Vec<&String> = covered.difference(&sites).collect();
    assert!(
        missing.is_empty() && stale.is_empty(),
        "every ID argument of schema.graphql needs a case here; without one: {missing:?}; \
         cases for arguments that no longer exist: {stale:?}"
    );
    // Every case's operation is valid against the schema (a typo must not pass as a refusal).
    {
        use apollo_compiler::{ExecutableDocument, Schema};
        let schema =
            Schema::parse_and_validate(include_str!("../../schema.graphql"), "schema.graphql")
                .unwrap_or_else(|e| panic!("schema.graphql: {}", e.errors));
        for c in &cases {
            if let Err(e) = ExecutableDocument::parse_and_validate(&schema, c.query, c.site) {
                panic!("{}: {}", c.site, e.errors);
            }
        }
    }

    let w = world(&app).await;
    let foreign_ids: Vec<String> = w.c.values().map(|(id, _)| id.clone()).collect();
    let callers = [
        ("organizer of A", w.a.organizer_a.clone()),
        ("judge of A", w.a.judge_a.clone()),
        ("participant of A", w.a.participant_a.clone()),
    ];
    let probe = app.probe().await;
    let mut before = probe.snapshot().await;
    let mut failures = vec![];
    let mut calls = 0;
    for case in &cases {
        let (public, external) = &w.c[&case.obj];
        let ids: Vec<&String> = std::iter::once(public).chain(external).collect();
        for id in ids {
            for (who, token) in &callers {
                let vars = (case.vars)(&w, id);
                let label = format!("[{}] {who} with {:?} {id}", case.site, case.obj);
                let answer = match case.via {
                    Via::Subscription => {
                        let mut ws = app.ws(bearer(token)).await;
                        let msg = ws_answer(&mut ws, "x", case.query, vars).await;
                        json!({ "errors": ws_errors(&msg), "data": msg["payload"]["data"] })
                    }
                    _ => app.gql_as(token, case.query, vars).await,
                };
                calls += 1;
                eprintln!(
                    "{label}: {} {}",
                    error_code(&answer).unwrap_or_else(|| "none".into()),
                    crate::harness::error_message(&answer)
                );
                if let Err(e) = refused(case, &answer) {
                    failures.push(format!("{label}: {e}: {answer}"));
                }
                let text = answer.to_string();
                if let Some(leak) = foreign_ids
                    .iter()
                    .find(|f| *f != id && text.contains(f.as_str()))
                {
                    failures.push(format!(
                        "{label}: another event's id {leak} came back: {answer}"
                    ));
                }
                let after = probe.snapshot().await;
                let changed = after.changed_since(&before, &[]);
                if !changed.is_empty() {
                    failures.push(format!("{label}: wrote to {changed:?}: {answer}"));
                }
                before = after;
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {calls} cross-event calls were not refused cleanly:\n{}",
        failures.len(),
        failures.join("\n")
    );
    assert!(calls >= cases.len() * 3, "{calls} calls");
}

/// Whether `answer` is a refusal of `case`.
fn refused(case: &Case, answer: &Value) -> Result<(), String> {
    let code = error_code(answer);
    let field = answer
        .pointer("/errors/0/extensions/field")
        .and_then(Value::as_str)
        .unwrap_or("");
    let refusal = match code.as_deref() {
        Some("NOT_FOUND" | "FORBIDDEN") => true,
        Some("BAD_USER_INPUT") => case.reference.iter().any(|r| field.contains(r)),
        Some(other) => return Err(format!("refused with {other}")),
        None => false,
    };
    match case.via {
        Via::Mutation(name) => {
            if !refusal {
                return Err("not refused".into());
            }
            if !answer["data"].is_null() && !answer["data"][name].is_null() {
                return Err("the mutation answered".into());
            }
        }
        Via::Subscription => {
            if !refusal {
                return Err("not refused".into());
            }
        }
        Via::Query(pointer) => {
            let value = answer
                .pointer(&format!("/data{pointer}"))
                .unwrap_or(&Value::Null);
            let empty = value.is_null()
                || value.as_array().is_some_and(Vec::is_empty)
                || (value["totalCount"] == 0
                    && value["edges"].as_array().is_some_and(Vec::is_empty));
            if code.is_some() && !refusal {
                return Err("refused with the wrong code".into());
            }
            if !empty {
                return Err("the query answered".into());
            }
        }
    }
    Ok(())
}

/// Builds event A (the standard scenario, with a judge's membership, a prize and an open
/// vote) and event C, imported from the judged fixture plus a draft, with one object of
/// every kind, made by C's own organizer.
async fn world(app: &App) -> World {
    let a = app.scenario().await;
    let tag = unique();
    // A's side of the pairs.
    let members = app
        .ok(
            Some(&a.organizer_a),
            "query($e: String!) { event(slug: $e) { members(role: JUDGE, first: 5) { edges { node { id } } } } }",
            json!({ "e": a.event_a }),
        )
        .await;
    let a_judge = str_at(&members, "/event/members/edges/0/node/id");
    let d = app
        .ok(
            Some(&a.organizer_a),
            "mutation($e: String!) { createPrize(event: $e, input: { name: \"A's prize\", position: 1 }) { id } }",
            json!({ "e": a.event_a }),
        )
        .await;
    let a_prize = str_at(&d, "/createPrize/id");
    let now = chrono::Utc::now();
    app.ok(
        Some(&a.organizer_a),
        "mutation($e: String!, $o: DateTime!, $c: DateTime!) { configureVoting(event: $e, mode: ACCOUNT, credits: 9, opens: $o, closes: $c) { mode } }",
        json!({ "e": a.event_a,
                "o": crate::harness::rfc3339(now - chrono::Duration::days(1)),
                "c": crate::harness::rfc3339(now + chrono::Duration::days(1)) }),
    )
    .await;
    let newcomer = format!("newcomer-{tag}@example.org");
    let newcomer_token = app.sign_up(&newcomer).await;
    app.register(&newcomer_token, &a.event_a).await;

    // Event C: judged, with a draft of its own.
    let mut fixture = crate::harness::judged_fixture(&tag);
    let slug = format!("csv-{tag}");
    fixture["teams"]
        .as_array_mut()
        .expect("teams")
        .push(json!({ "external_id": format!("tp5_{tag}"), "name": "Drafting", "members": [] }));
    fixture["projects"]
        .as_array_mut()
        .expect("projects")
        .push(json!({
            "external_id": format!("p5_{tag}"), "team": format!("tp5_{tag}"), "track": format!("trk_{tag}"),
            "title": "C's secret draft", "tagline": "", "summary": "", "repo_url": "", "demo_url": "",
            "tags": [], "status": "draft", "submitted_at": null
        }));
    app.ok(
        Some(&a.admin),
        "mutation($f: JSON!) { importEvent(fixture: $f) { inserted } }",
        json!({ "f": fixture }),
    )
    .await;
    let c_org = app.mint_token(&format!("csv-o-{tag}@example.org")).await;
    let org = Some(c_org.as_str());
    let e = json!({ "e": slug });
    let mut c = BTreeMap::new();
    let project = |external: &str| {
        let external = external.to_string();
        let c_org = c_org.clone();
        async move {
            let d = app
                .ok(
                    Some(&c_org),
                    "query($id: ID!) { project(id: $id) { id team { id } } }",
                    json!({ "id": external }),
                )
                .await;
            (str_at(&d, "/project/id"), str_at(&d, "/project/team/id"))
        }
    };
    let (p1, team) = project(&format!("p1_{tag}")).await;
    let (p5, _) = project(&format!("p5_{tag}")).await;
    c.insert(Obj::Project, (p1.clone(), Some(format!("p1_{tag}"))));
    c.insert(Obj::Draft, (p5, Some(format!("p5_{tag}"))));
    c.insert(Obj::Team, (team, Some(format!("tp1_{tag}"))));
    let d = app
        .ok(
            org,
            "query($e: String!) { event(slug: $e) { tracks { id } members(role: JUDGE, first: 1) { edges { node { id externalId } } } assignments(first: 1) { nodes { id } } } }",
            e.clone(),
        )
        .await;
    c.insert(
        Obj::Track,
        (str_at(&d, "/event/tracks/0/id"), Some(format!("trk_{tag}"))),
    );
    c.insert(
        Obj::Judge,
        (
            str_at(&d, "/event/members/edges/0/node/id"),
            Some(str_at(&d, "/event/members/edges/0/node/externalId")),
        ),
    );
    c.insert(
        Obj::Assignment,
        (str_at(&d, "/event/assignments/nodes/0/id"), None),
    );
    let d = app
        .ok(
            org,
            "mutation($p: ID!) { postComment(project: $p, body: \"C's comment\") { id } }",
            json!({ "p": p1 }),
        )
        .await;
    c.insert(Obj::Comment, (str_at(&d, "/postComment/id"), None));
    let d = app
        .ok(
            org,
            "mutation($e: String!) { createPrize(event: $e, input: { name: \"C's prize\", position: 1 }) { id } }",
            e.clone(),
        )
        .await;
    c.insert(Obj::Prize, (str_at(&d, "/createPrize/id"), None));
    let d = app
        .ok(
            org,
            "mutation($e: String!, $m: [String!]!) { inviteToEvent(event: $e, emails: $m, role: JUDGE) { id } }",
            json!({ "e": slug, "m": [format!("invitee-{tag}@example.org")] }),
        )
        .await;
    c.insert(Obj::Invitation, (str_at(&d, "/inviteToEvent/0/id"), None));
    let d = app
        .ok(
            org,
            "mutation($e: String!) { registerWebhook(event: $e, url: \"http://127.0.0.1:9/hook\", actions: [\"track.\"]) { webhook { id } } }",
            e.clone(),
        )
        .await;
    c.insert(
        Obj::Webhook,
        (str_at(&d, "/registerWebhook/webhook/id"), None),
    );
    app.create_track(&c_org, &slug, "Heard by the webhook")
        .await;
    let d = app
        .ok(
            org,
            "query($e: String!) { event(slug: $e) { webhookDeliveries(first: 1) { nodes { id } } } }",
            e.clone(),
        )
        .await;
    c.insert(
        Obj::Delivery,
        (str_at(&d, "/event/webhookDeliveries/nodes/0/id"), None),
    );
    let d = app
        .ok(
            org,
            op("RunCalibration"),
            json!({ "event": slug, "seed": 1, "bootstrap": 10 }),
        )
        .await;
    c.insert(Obj::Run, (str_at(&d, "/runCalibration/id"), None));
    let d = app
        .ok(
            org,
            "mutation($e: String!) { startCalibration(event: $e, bootstrap: 10) { id } }",
            e.clone(),
        )
        .await;
    let job = str_at(&d, "/startCalibration/id");
    // The job ends (and stores its run) before the cases run.
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    loop {
        let d = app
            .ok(
                org,
                "query($e: String!, $j: ID!) { event(slug: $e) { calibrationJob(id: $j) { state } } }",
                json!({ "e": slug, "j": job }),
            )
            .await;
        if d["event"]["calibrationJob"]["state"] == "DONE" {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the job did not end: {d}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    c.insert(Obj::Job, (job, None));
    let d = app
        .ok(org, "{ viewer { apiTokens { id } } }", json!({}))
        .await;
    c.insert(Obj::ApiToken, (str_at(&d, "/viewer/apiTokens/0/id"), None));
    World {
        a,
        a_judge,
        a_prize,
        newcomer,
        c_member: format!("csv-4-{tag}@example.org"),
        c,
    }
}
