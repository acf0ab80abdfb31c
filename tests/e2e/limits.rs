//! Every limit, each with a request that trips it: the server refuses it cleanly (never a
//! 500) and nothing runs.

use serde_json::{Value, json};

use std::time::{Duration, Instant};

use crate::harness::{
    App, PASSWORD, Probe, Snapshot, assert_bad_input, assert_code, data, error_code, error_message,
    op, unique,
};

/// A sign-up mutation whose effect is easy to check afterwards.
fn sign_up_body(email: &str) -> Value {
    json!({
        "query": op("SignUp"),
        "variables": { "email": email, "password": PASSWORD, "displayName": "X" }
    })
}

/// Whether `email` can log in (that is, whether a sign-up went through).
async fn exists(app: &App, email: &str) -> bool {
    let r = app
        .gql(op("LogIn"), json!({ "email": email, "password": PASSWORD }))
        .await;
    error_code(&r).is_none()
}

/// What a refused mutation would write if it ran: a signed-in user and an open event they
/// may register for (`registerForEvent` writes a membership and an audit event). Returns
/// the user's token, the event's slug, a probe and the database as it is now.
async fn write_target(app: &App) -> (String, String, Probe, Snapshot) {
    let admin = app.site_admin().await;
    let slug = format!("target-{}", unique());
    app.create_event(&admin, &slug, 3).await;
    let token = app
        .sign_up(&format!("bomber-{}@example.org", unique()))
        .await;
    let probe = app.probe().await;
    let before = probe.snapshot().await;
    (token, slug, probe, before)
}

/// `registerForEvent` of `slug`, selecting `selection`.
fn register(slug: &str, selection: &str) -> String {
    format!("registerForEvent(event: \"{slug}\") {selection}")
}

/// A refusal as a GraphQL error: has errors, no data for the query, not INTERNAL.
#[track_caller]
fn assert_refused(resp: &Value, what: &str) {
    let errors = resp["errors"].as_array().map(Vec::len).unwrap_or(0);
    assert!(errors > 0, "{what} is refused with an error: {resp}");
    let data = &resp["data"];
    assert!(
        data.is_null()
            || data
                .as_object()
                .is_some_and(|o| o.values().all(Value::is_null)),
        "{what} returns no data: {resp}"
    );
    assert_ne!(
        error_code(resp).as_deref(),
        Some("INTERNAL"),
        "{what}: {resp}"
    );
}

e2e! {
    depth_limit,
    nesting_limit,
    introspection_depth,
    complexity_limit,
    anonymous_ranking_flood_is_too_complex ["--demo"],
    signed_in_callers_get_a_larger_budget ["--demo"],
    thousands_of_typename_selections_are_refused,
    fragment_bomb_is_refused_before_validation,
    page_size_limit,
    batch_limit,
    body_size_limit,
    get_never_runs_a_mutation,
    mutations_need_a_json_content_type,
    directive_limit,
    directive_limit_is_enforced ["--max-directives", "1"],
    request_timeout,
    no_suggestions_in_errors,
    health_and_playground,
    introspection_on_by_default,
    introspection_can_be_disabled ["--no-introspection"],
    rate_limit ["--rate-limit-per-second", "1", "--rate-limit-burst", "3"],
}

async fn depth_limit(app: App) {
    let q = "{ viewer { memberships { event { projects(first: 1) { edges { node { team { projects {
               event { projects(first: 1) { edges { node { id } } } } } } } } } } } } }";
    let r = app.gql(q, json!({})).await;
    assert_refused(&r, "a query 13 levels deep");
    assert_code(&r, "QUERY_TOO_COMPLEX");
    // A mutation under a selection 12 levels deep does not run.
    let (token, slug, probe, before) = write_target(&app).await;
    let deep = "{ event { projects(first: 1) { edges { node { team { projects { event {
                 projects(first: 1) { edges { node { id } } } } } } } } } } }";
    let r = app
        .gql_as(
            &token,
            &format!("mutation {{ {} }}", register(&slug, deep)),
            json!({}),
        )
        .await;
    assert_refused(&r, "a mutation 12 levels deep");
    assert_code(&r, "QUERY_TOO_COMPLEX");
    probe
        .nothing_written_since(&before, &[], "a mutation under a depth bomb")
        .await;
}

/// Far past the depth limit, where async-graphql's own guards (its nesting check at 32,
/// its parser's recursion limit at 64) refuse before validation measures the depth, the
/// refusal is the same QUERY_TOO_COMPLEX, never BAD_USER_INPUT.
async fn nesting_limit(app: App) {
    let fields = format!(
        "{{ event(slug: \"x\") {{ projects(first: 1) {{ edges {{ node {{ {} id {} }} }} }} }} }}",
        "team { projects { ".repeat(18),
        "} } ".repeat(18)
    );
    let r = app.gql(&fields, json!({})).await;
    assert_refused(&r, "a query 41 levels deep");
    assert_code(&r, "QUERY_TOO_COMPLEX");
    for levels in [40, 100] {
        let q = format!(
            "{{ {} __typename {} }}",
            "... on Query { ".repeat(levels),
            "} ".repeat(levels)
        );
        let r = app.gql(&q, json!({})).await;
        assert_refused(&r, &format!("inline fragments nested {levels} levels"));
        assert_code(&r, "QUERY_TOO_COMPLEX");
    }
    // Fragments that spread each other in a cycle never end.
    let r = app
        .gql(
            "{ ...A } fragment A on Query { ...B } fragment B on Query { ...A }",
            json!({}),
        )
        .await;
    assert_refused(&r, "a fragment cycle");
    assert_code(&r, "QUERY_TOO_COMPLEX");
    // The same cycle around a mutation runs nothing.
    let (token, slug, probe, before) = write_target(&app).await;
    let cycle = format!(
        "mutation {{ ...A }} fragment A on Mutation {{ {} ...B }} fragment B on Mutation {{ ...A }}",
        register(&slug, "{ id }")
    );
    let r = app.gql_as(&token, &cycle, json!({})).await;
    assert_refused(&r, "a fragment cycle around a mutation");
    assert_code(&r, "QUERY_TOO_COMPLEX");
    probe
        .nothing_written_since(&before, &[], "a mutation in a fragment cycle")
        .await;
    // A syntax error is the caller's mistake, not a limit.
    let r = app
        .gql("{ events(first: 1) { totalCount }", json!({}))
        .await;
    assert_code(&r, "BAD_USER_INPUT");
}

/// GraphiQL's introspection query nests deeper than data queries may; operations that
/// select only introspection fields get the deeper limit, data queries do not.
async fn introspection_depth(app: App) {
    let of_type = |levels: usize| {
        format!(
            "{{ __schema {{ types {{ {} name {} }} }} }}",
            "ofType { ".repeat(levels),
            "} ".repeat(levels)
        )
    };
    // 14 levels deep: past the data limit (10), within the introspection limit (16).
    let r = app.gql(&of_type(11), json!({})).await;
    assert!(data(&r)["__schema"]["types"].is_array(), "{r}");
    // Past the introspection limit.
    let r = app.gql(&of_type(16), json!({})).await;
    assert_refused(&r, "introspection 19 levels deep");
    assert_code(&r, "QUERY_TOO_COMPLEX");
    // A data field alongside makes it a data query, held to the data limit.
    let q = of_type(11).replacen(
        "{ __schema",
        "{ __typename events(first: 1) { totalCount } __schema",
        1,
    );
    let r = app.gql(&q, json!({})).await;
    assert_refused(&r, "introspection 14 levels deep beside a data field");
    assert_code(&r, "QUERY_TOO_COMPLEX");
}

async fn complexity_limit(app: App) {
    let one = "events(first: 100) { edges { node { projects(first: 100) { edges { node {
                 title tagline team { name projects { id title } } } } } } } }";
    let q = format!("{{ a: {one} b: {one} c: {one} d: {one} }}");
    let r = app.gql(&q, json!({})).await;
    assert_refused(&r, "a query touching millions of nodes");
    assert_code(&r, "QUERY_TOO_COMPLEX");
    // A modest query passes.
    let r = app
        .gql(
            "{ events(first: 10) { totalCount edges { node { slug } } } }",
            json!({}),
        )
        .await;
    data(&r);
}

/// The request: `n` aliases of the public ranking of the demo's finished event.
fn ranking_aliases(n: usize) -> String {
    let aliases: String = (0..n)
        .map(|i| format!(" r{i}: results {{ ranking {{ rank project {{ title }} }} }}"))
        .collect();
    format!("{{ event(slug: \"demo-finals\") {{{aliases} }} }}")
}

/// Issue #7: an anonymous request of 1,000 aliases of the public ranking (each one parses
/// the run and loads the event's projects) was accepted and cost about a second of server
/// time. It is refused; a handful of aliases still reads the ranking.
async fn anonymous_ranking_flood_is_too_complex(app: App) {
    let flood = ranking_aliases(1000);
    assert!(
        (50_000..64 * 1024).contains(&flood.len()),
        "a ~53 KB request, under the body limit: {} bytes",
        flood.len()
    );
    let r = app.gql(&flood, json!({})).await;
    assert_refused(&r, "1,000 anonymous aliases of the ranking");
    assert_code(&r, "QUERY_TOO_COMPLEX");

    // Its cost alone refuses it, whatever the field count allows.
    let roomy = app.sibling(&["--max-fields", "100000"]).await;
    let r = roomy.gql(&flood, json!({})).await;
    assert_refused(&r, "1,000 anonymous aliases of the ranking, fields allowed");
    assert_code(&r, "QUERY_TOO_COMPLEX");
    let m = error_message(&r);
    assert!(
        m.contains("2000") && m.contains("--max-complexity-anonymous"),
        "the message names the anonymous budget and its value: {m}"
    );

    let few = app.ok(None, &ranking_aliases(3), json!({})).await;
    for alias in ["r0", "r1", "r2"] {
        assert_eq!(
            few["event"][alias]["ranking"][0]["rank"], 1,
            "a few aliases read the ranking: {few}"
        );
    }
}

/// A query between the two budgets (ten rankings: over the anonymous budget, within the
/// signed-in one) is refused to an anonymous caller and answered for a signed-in
/// organizer, over HTTP and on a websocket alike.
async fn signed_in_callers_get_a_larger_budget(app: App) {
    let q = ranking_aliases(10);
    let r = app.gql(&q, json!({})).await;
    assert_refused(&r, "ten rankings for an anonymous caller");
    assert_code(&r, "QUERY_TOO_COMPLEX");
    assert!(
        error_message(&r).contains("--max-complexity-anonymous"),
        "{r}"
    );

    let admin = app.site_admin().await;
    let email = format!("budget-{}@example.org", unique());
    let organizer = app.sign_up(&email).await;
    app.grant(&admin, "demo-finals", &email, "ORGANIZER").await;
    let d = app.ok(Some(&organizer), &q, json!({})).await;
    assert_eq!(d["event"]["r9"]["ranking"][0]["rank"], 1, "{d}");

    // A websocket connection carries its caller the same way.
    for (init, allowed) in [
        (json!({}), false),
        (
            json!({ "authorization": format!("Bearer {organizer}") }),
            true,
        ),
    ] {
        let mut ws = app.ws(init).await;
        ws.subscribe("q", &q, json!({})).await;
        let msg = loop {
            let msg = ws
                .next_json(Duration::from_secs(10))
                .await
                .expect("an answer on the websocket");
            if msg["id"] == "q" && matches!(msg["type"].as_str(), Some("next" | "error")) {
                break msg;
            }
        };
        let text = msg.to_string();
        if allowed {
            assert_eq!(msg["type"], "next", "{msg}");
            assert_eq!(
                msg["payload"]["data"]["event"]["r9"]["ranking"][0]["rank"], 1,
                "{msg}"
            );
        } else {
            assert!(
                text.contains("QUERY_TOO_COMPLEX"),
                "anonymous on a websocket: {msg}"
            );
        }
    }
}

/// Issue #7: 5,000 repeated `__typename` selections were accepted. The fields of a
/// document, aliases included, are capped (1,000 by default).
async fn thousands_of_typename_selections_are_refused(app: App) {
    let repeated = format!("{{{} }}", " __typename".repeat(5000));
    let r = app.gql(&repeated, json!({})).await;
    assert_refused(&r, "5,000 repeated __typename");
    assert_code(&r, "QUERY_TOO_COMPLEX");
    let m = error_message(&r);
    assert!(
        m.contains("1000") && m.contains("--max-fields"),
        "the message names the field limit and its value: {m}"
    );
    let aliased: String = (0..3000).map(|i| format!(" a{i}: __typename")).collect();
    let r = app.gql(&format!("{{{aliased} }}"), json!({})).await;
    assert_refused(&r, "3,000 aliases of __typename");
    assert_code(&r, "QUERY_TOO_COMPLEX");
    // 1,001 aliases of a mutation, or the same mutation field 1,001 times: none runs.
    let (token, slug, probe, before) = write_target(&app).await;
    let field = "registerForEvent(event: $e) { id }";
    let aliased: String = (0..1001).map(|i| format!(" a{i}: {field}")).collect();
    let repeated = format!(" {field}").repeat(1001);
    for (what, fields) in [("aliased", aliased), ("repeated", repeated)] {
        let m = format!("mutation($e: String!) {{{fields} }}");
        let vars = json!({ "e": slug });
        let body = json!({ "query": m, "variables": vars }).to_string();
        assert!(body.len() < 64 * 1024, "{what}: under the body limit");
        let r = app.gql_as(&token, &m, vars).await;
        assert_refused(&r, &format!("1,001 {what} mutations"));
        assert_code(&r, "QUERY_TOO_COMPLEX");
    }
    probe
        .nothing_written_since(&before, &[], "aliased and repeated mutations")
        .await;
    // At the limit is fine.
    let at_limit = format!("{{{} }}", " __typename".repeat(1000));
    assert_eq!(
        data(&app.gql(&at_limit, json!({})).await)["__typename"],
        "Query"
    );
}

/// A document of a kilobyte whose fragments each spread the previous one twice expands
/// to billions of fields; validation would walk them all for minutes. It is refused at
/// once, and the server carries on.
async fn fragment_bomb_is_refused_before_validation(app: App) {
    let mut bomb = "query { ...F30 } fragment F0 on Query { __typename }".to_string();
    for i in 1..=30 {
        bomb += &format!(" fragment F{i} on Query {{ ...F{j} ...F{j} }}", j = i - 1);
    }
    assert!(bomb.len() < 2048, "{} bytes", bomb.len());
    let started = Instant::now();
    let r = tokio::time::timeout(Duration::from_secs(20), app.gql(&bomb, json!({})))
        .await
        .expect("the fragment bomb is answered within 20 s");
    let took = started.elapsed();
    assert_refused(&r, "a fragment bomb");
    assert_code(&r, "QUERY_TOO_COMPLEX");
    assert!(took < Duration::from_secs(1), "refused in {took:?}");
    assert_eq!(app.get("/healthz").await.status, 200);
    // The same bomb around a mutation runs nothing.
    let (token, slug, probe, before) = write_target(&app).await;
    let mut bomb = format!(
        "mutation {{ ...F30 }} fragment F0 on Mutation {{ {} }}",
        register(&slug, "{ id }")
    );
    for i in 1..=30 {
        bomb += &format!(
            " fragment F{i} on Mutation {{ ...F{j} ...F{j} }}",
            j = i - 1
        );
    }
    let r = app.gql_as(&token, &bomb, json!({})).await;
    assert_refused(&r, "a fragment bomb around a mutation");
    assert_code(&r, "QUERY_TOO_COMPLEX");
    probe
        .nothing_written_since(&before, &[], "a mutation in a fragment bomb")
        .await;
}

async fn page_size_limit(app: App) {
    let r = app
        .gql("{ events(first: 101) { totalCount } }", json!({}))
        .await;
    assert_bad_input(&r, &["first"]);
    let r = app
        .gql("{ events(first: -1) { totalCount } }", json!({}))
        .await;
    assert_bad_input(&r, &["first"]);
    let r = app
        .gql("{ events(first: 100) { totalCount } }", json!({}))
        .await;
    data(&r);
    let admin = app.site_admin().await;
    let slug = format!("paged-{}", unique());
    app.create_event(&admin, &slug, 3).await;
    let r = app
        .gql(
            "query($s: String!) { event(slug: $s) { projects(first: 1000) { totalCount } } }",
            json!({ "s": slug }),
        )
        .await;
    assert_bad_input(&r, &["first"]);
}

async fn batch_limit(app: App) {
    // Ten operations in one batch are fine.
    let ten: Vec<Value> = (0..10)
        .map(|_| json!({ "query": "{ __typename }" }))
        .collect();
    let r = app
        .post_raw(Value::Array(ten).to_string(), "application/json", &[])
        .await;
    assert_eq!(r.status, 200, "{}", r.text);
    let body = r.json();
    assert_eq!(
        body.as_array().map(Vec::len),
        Some(10),
        "ten results: {body}"
    );

    // Eleven are refused, and none of them runs.
    let emails: Vec<String> = (0..11)
        .map(|i| format!("batch-{i}-{}@example.org", unique()))
        .collect();
    let eleven: Vec<Value> = emails.iter().map(|e| sign_up_body(e)).collect();
    let r = app
        .post_raw(Value::Array(eleven).to_string(), "application/json", &[])
        .await;
    assert!(r.status < 500, "no server error: {} {}", r.status, r.text);
    let ran = r
        .try_json()
        .and_then(|b| b.as_array().cloned())
        .map(|a| a.iter().filter(|x| x["data"]["signUp"].is_object()).count())
        .unwrap_or(0);
    assert_eq!(
        ran, 0,
        "no operation of an oversized batch runs: {}",
        r.text
    );
    assert!(
        r.status >= 400 || r.try_json().is_some_and(|b| b.get("errors").is_some()),
        "an oversized batch is refused: {} {}",
        r.status,
        r.text
    );
    for e in &emails {
        assert!(!exists(&app, e).await, "{e} was not signed up");
    }
    // Eleven registrations, by a signed-in caller: nothing is written.
    let (token, slug, probe, before) = write_target(&app).await;
    let eleven: Vec<Value> = (0..11)
        .map(|_| json!({ "query": format!("mutation {{ {} }}", register(&slug, "{ id }")) }))
        .collect();
    let auth = format!("Bearer {token}");
    let r = app
        .post_raw(
            Value::Array(eleven).to_string(),
            "application/json",
            &[("authorization", &auth)],
        )
        .await;
    assert!((400..500).contains(&r.status), "{} {}", r.status, r.text);
    probe
        .nothing_written_since(&before, &[], "an oversized batch")
        .await;
}

async fn body_size_limit(app: App) {
    let email = format!("big-{}@example.org", unique());
    let mut body = sign_up_body(&email);
    body["variables"]["pad"] = json!("x".repeat(70 * 1024));
    let r = app
        .post_raw(body.to_string(), "application/json", &[])
        .await;
    assert_eq!(r.status, 413, "a 70 KiB body is too large: {}", r.text);
    assert!(!exists(&app, &email).await);
    let (token, slug, probe, before) = write_target(&app).await;
    let padded = json!({
        "query": format!("mutation {{ {} }}", register(&slug, "{ id }")),
        "variables": { "pad": "x".repeat(70 * 1024) },
    });
    let r = app
        .post_raw(
            padded.to_string(),
            "application/json",
            &[("authorization", &format!("Bearer {token}"))],
        )
        .await;
    assert_eq!(r.status, 413, "{}", r.text);
    probe
        .nothing_written_since(&before, &[], "an oversized body")
        .await;
    // Just under the limit is fine.
    let r = app
        .post_raw(
            json!({ "query": "{ __typename }", "variables": { "pad": "x".repeat(60 * 1024) } })
                .to_string(),
            "application/json",
            &[],
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.text);
}

async fn get_never_runs_a_mutation(app: App) {
    let email = format!("get-{}@example.org", unique());
    let body = sign_up_body(&email);
    let url = url::Url::parse_with_params(
        &app.url("/graphql"),
        &[
            (
                "query",
                body["query"].as_str().unwrap_or_default().to_string(),
            ),
            ("variables", body["variables"].to_string()),
        ],
    )
    .expect("url");
    let path = format!("{}?{}", url.path(), url.query().unwrap_or_default());
    let r = app.get_with(&path, &[("accept", "application/json")]).await;
    assert_eq!(r.status, 405, "GET with a mutation: {}", r.text);
    assert!(!exists(&app, &email).await, "the mutation did not run");
    // Signed in, also beside a query in the document, and with the operation picked by
    // name: nothing is written.
    let (token, slug, probe, before) = write_target(&app).await;
    let auth = format!("Bearer {token}");
    let mutation = format!("mutation M {{ {} }}", register(&slug, "{ id }"));
    for (query, name) in [
        (mutation.clone(), None),
        (format!("query Q {{ __typename }} {mutation}"), Some("M")),
        (format!("query Q {{ __typename }} {mutation}"), Some("Q")),
    ] {
        let mut params = vec![("query", query.clone())];
        if let Some(name) = name {
            params.push(("operationName", name.to_string()));
        }
        let url = url::Url::parse_with_params(&app.url("/graphql"), &params).expect("url");
        let path = format!("{}?{}", url.path(), url.query().unwrap_or_default());
        let r = app
            .get_with(
                &path,
                &[("accept", "application/json"), ("authorization", &auth)],
            )
            .await;
        assert_eq!(r.status, 405, "GET {query} ({name:?}): {}", r.text);
    }
    probe
        .nothing_written_since(&before, &[], "mutations over GET")
        .await;
}

async fn mutations_need_a_json_content_type(app: App) {
    let email = format!("ct-{}@example.org", unique());
    let body = sign_up_body(&email).to_string();
    let r = app.post_raw(body.clone(), "text/plain", &[]).await;
    assert_eq!(r.status, 415, "text/plain: {}", r.text);
    let r = app
        .post_raw(body.clone(), "text/plain;charset=UTF-8", &[])
        .await;
    assert_eq!(r.status, 415, "text/plain;charset=UTF-8: {}", r.text);
    let form = url::form_urlencoded::Serializer::new(String::new())
        .append_pair("query", &body)
        .finish();
    let r = app
        .post_raw(form, "application/x-www-form-urlencoded", &[])
        .await;
    assert_eq!(r.status, 415, "a form post: {}", r.text);
    let r = app
        .post_raw(
            format!("--b\r\nContent-Disposition: form-data; name=\"operations\"\r\n\r\n{body}\r\n--b--\r\n"),
            "multipart/form-data; boundary=b",
            &[],
        )
        .await;
    assert_eq!(r.status, 415, "multipart: {}", r.text);
    assert!(!exists(&app, &email).await, "none of them ran");
    // Signed in, nothing at all is written by any of them.
    let (token, slug, probe, before) = write_target(&app).await;
    let auth = format!("Bearer {token}");
    let body =
        json!({ "query": format!("mutation {{ {} }}", register(&slug, "{ id }")) }).to_string();
    let form = url::form_urlencoded::Serializer::new(String::new())
        .append_pair("query", &body)
        .finish();
    let multipart = format!(
        "--b\r\nContent-Disposition: form-data; name=\"operations\"\r\n\r\n{body}\r\n--b--\r\n"
    );
    for (content_type, payload) in [
        ("text/plain", body.clone()),
        ("application/x-www-form-urlencoded", form),
        ("multipart/form-data; boundary=b", multipart),
        ("application/graphql", body.clone()),
    ] {
        let r = app
            .post_raw(payload, content_type, &[("authorization", &auth)])
            .await;
        assert_eq!(r.status, 415, "{content_type}: {}", r.text);
    }
    probe
        .nothing_written_since(&before, &[], "mutations in other content types")
        .await;
}

async fn directive_limit(app: App) {
    let many = "@include(if: true) ".repeat(6);
    let r = app
        .gql(&format!("{{ __typename {many} }}"), json!({}))
        .await;
    assert_refused(&r, "six directives on one field");
    let (token, slug, probe, before) = write_target(&app).await;
    let m = format!("mutation {{ registerForEvent(event: \"{slug}\") {many} {{ id }} }}");
    let r = app.gql_as(&token, &m, json!({})).await;
    assert_refused(&r, "a mutation with six directives");
    probe
        .nothing_written_since(&before, &[], "a mutation with six directives")
        .await;
    let few = "@include(if: true) @skip(if: false)";
    let r = app.gql(&format!("{{ __typename {few} }}"), json!({})).await;
    assert_eq!(data(&r)["__typename"], "Query");
}

/// The directive limit itself (with only two built-in directives, the default of five
/// cannot be reached without repeating one, which validation refuses anyway).
async fn directive_limit_is_enforced(app: App) {
    let r = app
        .gql(
            "{ __typename @include(if: true) @skip(if: false) }",
            json!({}),
        )
        .await;
    assert_refused(&r, "two directives over a limit of one");
    assert_code(&r, "QUERY_TOO_COMPLEX");
    let (token, slug, probe, before) = write_target(&app).await;
    let m = format!(
        "mutation {{ registerForEvent(event: \"{slug}\") @include(if: true) @skip(if: false) {{ id }} }}"
    );
    let r = app.gql_as(&token, &m, json!({})).await;
    assert_refused(&r, "a mutation with two directives over a limit of one");
    assert_code(&r, "QUERY_TOO_COMPLEX");
    probe
        .nothing_written_since(&before, &[], "a mutation with too many directives")
        .await;
    let r = app
        .gql("{ __typename @include(if: true) }", json!({}))
        .await;
    assert_eq!(data(&r)["__typename"], "Query");
}

/// A request that outlives the per-request timeout is cut off with an error, and the
/// server carries on.
async fn request_timeout(app: App) {
    // Enough data that answering takes dozens of database round trips (well over the
    // timer's millisecond).
    let admin = app.site_admin().await;
    for i in 0..4 {
        let slug = format!("slow-{i}-{}", unique());
        app.create_event(&admin, &slug, 3).await;
        app.create_track(&admin, &slug, "T").await;
    }
    // Within the anonymous cost budget, so that the timer is what refuses it.
    let q = "{ events(first: 10) { totalCount edges { node { slug tracks { id name }
               teams(first: 5) { totalCount } projects(first: 5) { totalCount } } } } }";
    // The same database behind a server with a zero-second budget.
    let app = app.sibling(&["--request-timeout", "0"]).await;
    let r = app.gql(q, json!({})).await;
    assert_refused(&r, "a request over the time limit");
    assert_code(&r, "QUERY_TOO_COMPLEX");
    assert!(
        error_message(&r).contains("took longer than 0 s"),
        "refused by the timer, not by a cost limit: {r}"
    );
    assert_eq!(app.get("/healthz").await.status, 200);
}

async fn no_suggestions_in_errors(app: App) {
    for q in [
        "{ evnts(first: 1) { totalCount } }",
        "{ viewer { usr { id } } }",
        "{ event(slug: \"x\") { nme } }",
    ] {
        let r = app.gql(q, json!({})).await;
        assert!(
            r["errors"].as_array().is_some_and(|e| !e.is_empty()),
            "{q} is an error: {r}"
        );
        let text = r.to_string().to_lowercase();
        assert!(
            !text.contains("did you mean"),
            "no suggestions for {q}: {r}"
        );
    }
}

async fn health_and_playground(app: App) {
    let r = app.get("/healthz").await;
    assert_eq!(r.status, 200, "{}", r.text);
    let r = app.get("/readyz").await;
    assert_eq!(r.status, 200, "ready once migrated: {}", r.text);
    let r = app.get("/graphql").await;
    assert_eq!(r.status, 200);
    assert!(
        r.header("content-type")
            .is_some_and(|c| c.starts_with("text/html")),
        "the playground is HTML: {:?}",
        r.headers
    );
    // A GET query runs (queries only).
    let r = app
        .get_with(
            "/graphql?query=%7B__typename%7D",
            &[("accept", "application/json")],
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(r.json()["data"]["__typename"], "Query");
}

async fn introspection_on_by_default(app: App) {
    let r = app
        .gql("{ __schema { queryType { name } } }", json!({}))
        .await;
    assert_eq!(data(&r)["__schema"]["queryType"]["name"], "Query");
}

async fn introspection_can_be_disabled(app: App) {
    // Refused: nothing of the schema comes back (null, possibly with an error).
    let r = app
        .gql(
            "{ __schema { queryType { name } types { name } } }",
            json!({}),
        )
        .await;
    assert!(r["data"]["__schema"].is_null(), "no schema: {r}");
    assert!(
        !r.to_string().contains("Project"),
        "no type names leak: {r}"
    );
    let r = app
        .gql(
            "{ __type(name: \"Project\") { name fields { name } } }",
            json!({}),
        )
        .await;
    assert!(r["data"]["__type"].is_null(), "no type introspection: {r}");
    // Ordinary queries, and __typename, still work.
    let r = app
        .gql("{ __typename events(first: 1) { totalCount } }", json!({}))
        .await;
    data(&r);
}

async fn rate_limit(app: App) {
    let mut statuses = vec![];
    for _ in 0..15 {
        let r = app
            .post_raw(
                json!({ "query": "{ __typename }" }).to_string(),
                "application/json",
                &[],
            )
            .await;
        statuses.push(r.status);
    }
    assert_eq!(statuses[0], 200, "the first request passes: {statuses:?}");
    assert!(
        statuses.contains(&429),
        "a burst beyond the limit gets 429: {statuses:?}"
    );
    let ok = statuses.iter().filter(|s| **s == 200).count();
    assert!(
        ok <= 5,
        "at most the burst (plus refill) passes: {statuses:?}"
    );
    // The budget refills.
    tokio::time::sleep(std::time::Duration::from_millis(2500)).await;
    let r = app
        .post_raw(
            json!({ "query": "{ __typename }" }).to_string(),
            "application/json",
            &[],
        )
        .await;
    assert_eq!(r.status, 200, "after waiting: {}", r.text);
}
