use super::*;

/// A cookie-authenticated request must carry `X-Verdict-Csrf: 1` before any mutation runs,
/// also when the mutation hides in a batch behind a query, or in a document beside a query
/// that `operationName` does not even pick.
pub(super) async fn a_cookie_mutation_hidden_in_a_batch_needs_the_csrf_header(app: App) {
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
pub(super) async fn introspection_off_leaks_no_schema_by_any_path(app: App) {
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
pub(super) async fn database_failures_reach_the_client_as_a_request_id_only(app: App) {
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

    // The audit append every mutation makes: the business write goes back with it. The
    // write's own transaction puts its entry into `audit_pending` on PostgreSQL (the
    // sequencer gives it its place after the commit), on the chain itself on SQLite.
    let entries = match backend {
        crate::harness::Backend::Sqlite => "audit_events",
        crate::harness::Backend::Postgres => "audit_pending",
    };
    for sql in refuse_inserts(entries) {
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
pub(super) async fn cors_never_allows_a_foreign_origin(app: App) {
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
pub(super) async fn aliased_and_batched_log_ins_are_each_counted(app: App) {
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
pub(super) async fn rotating_forwarded_headers_do_not_reset_the_request_rate_limit(app: App) {
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
