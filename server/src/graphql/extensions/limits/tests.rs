use async_graphql::{EmptyMutation, EmptySubscription, Object, Schema};

use super::*;

struct Root;

#[Object]
impl Root {
    async fn child(&self) -> Root {
        Root
    }
    async fn leaf(&self) -> i32 {
        1
    }
    async fn echo(&self, n: i32) -> i32 {
        n
    }
}

fn schema(introspection: bool) -> Schema<Root, EmptyMutation, EmptySubscription> {
    let limits = Limits {
        max_depth: 3,
        max_complexity: 40,
        max_complexity_anonymous: 20,
        max_fields: 60,
        max_directives: 1,
        ..Limits::default()
    };
    Schema::build(Root, EmptyMutation, EmptySubscription)
        .extension(crate::graphql::extensions::Edge::new(
            &limits,
            introspection,
        ))
        .limit_recursive_depth(MAX_NESTING)
        .finish()
}

/// The code of the first error, or "ok" when there is none.
async fn code(schema: &Schema<Root, EmptyMutation, EmptySubscription>, q: &str) -> String {
    code_of(schema.execute(q).await)
}

fn code_of(resp: Response) -> String {
    match resp.errors.first() {
        None => "ok".into(),
        Some(e) => e
            .extensions
            .as_ref()
            .and_then(|x| x.get("code"))
            .map(|c| c.to_string().trim_matches('"').to_owned())
            .unwrap_or_else(|| format!("no code: {}", e.message)),
    }
}

/// A required variable left out (or null), or one of the wrong type, is the caller's
/// mistake, refused before anything runs; one with a default may be left out.
#[tokio::test]
async fn a_missing_required_variable_is_bad_user_input() {
    let s = schema(false);
    let run = |q: &str, vars: serde_json::Value| {
        s.execute(Request::new(q).variables(async_graphql::Variables::from_json(vars)))
    };
    let q = "query($n: Int!) { echo(n: $n) }";
    for vars in [
        serde_json::json!({}),
        serde_json::json!({ "n": null }),
        serde_json::json!({ "n": false }),
        serde_json::json!({ "n": { "x": 1 } }),
        serde_json::json!({ "n": 1.5 }),
    ] {
        let resp = run(q, vars).await;
        assert!(resp.data == async_graphql::Value::Null);
        assert!(resp.errors[0].message.contains("$n"), "{:?}", resp.errors);
        assert_eq!(code_of(resp), "BAD_USER_INPUT");
    }
    assert_eq!(code_of(run(q, serde_json::json!({ "n": 2 })).await), "ok");
    let named = "query A($n: Int!) { echo(n: $n) } query B { leaf }";
    let resp = s.execute(Request::new(named).operation_name("B")).await;
    assert_eq!(code_of(resp), "ok");
    let defaulted = "query($n: Int! = 3) { echo(n: $n) }";
    assert_eq!(code_of(run(defaulted, serde_json::json!({})).await), "ok");
}

/// The message of the first error.
async fn message(schema: &Schema<Root, EmptyMutation, EmptySubscription>, q: &str) -> String {
    let resp = schema.execute(q).await;
    resp.errors
        .first()
        .map(|e| e.message.clone())
        .unwrap_or_default()
}

/// `{ f0: leaf f1: leaf ... }`: `n` fields, costing `n`.
fn wide(n: usize) -> String {
    let fields: String = (0..n).map(|i| format!(" f{i}: leaf")).collect();
    format!("{{{fields} }}")
}

/// A request made by a signed-in caller, as the HTTP handler builds it.
fn signed_in(q: &str) -> Request {
    let user = entity::user::Model {
        id: 1,
        public_id: "usr".into(),
        email: "a@example.org".into(),
        display_name: "A".into(),
        password_hash: None,
        is_site_admin: false,
        created_at: chrono::Utc::now(),
        email_confirmed_at: None,
    };
    let caller = (user, crate::domain::accounts::Credential::Session { id: 1 });
    let rc = Arc::new(RequestCtx::new("t".into(), "-".into(), Some(caller)));
    Request::new(q).data(rc)
}

/// `fragment F0 { leaf } fragment F1 { ...F0 ...F0 } ... fragment F{n} ...` and an
/// operation spreading F{n}: 2^n fields once expanded, in a few hundred bytes.
fn fragment_bomb(n: usize) -> String {
    let mut q = format!("{{ ...F{n} }} fragment F0 on Root {{ leaf }}");
    for i in 1..=n {
        q += &format!(" fragment F{i} on Root {{ ...F{j} ...F{j} }}", j = i - 1);
    }
    q
}

fn nested(levels: usize, open: &str, inner: &str) -> String {
    format!(
        "{{ {}{inner}{} }}",
        open.repeat(levels),
        " }".repeat(levels)
    )
}

#[tokio::test]
async fn every_limit_refuses_with_its_code() {
    let s = schema(true);
    assert_eq!(code(&s, "{ child { child { leaf } } }").await, "ok");
    assert_eq!(
        code(&s, "{ child { child { child { leaf } } } }").await,
        "QUERY_TOO_COMPLEX",
        "depth"
    );
    assert_eq!(code(&s, &wide(21)).await, "QUERY_TOO_COMPLEX", "complexity");
    assert_eq!(code(&s, &wide(61)).await, "QUERY_TOO_COMPLEX", "fields");
    assert_eq!(
        code(&s, "{ leaf @include(if: true) @skip(if: false) }").await,
        "QUERY_TOO_COMPLEX",
        "directives"
    );
    assert_eq!(code(&s, "{ leaf @include(if: true) }").await, "ok");
}

#[tokio::test]
async fn nesting_past_the_guards_is_too_complex() {
    let s = schema(true);
    // Past the nesting guard (32), and past the parser's own recursion limit (64).
    for levels in [33, 40, 100] {
        let q = nested(levels, "... on Root { ", "leaf");
        assert_eq!(code(&s, &q).await, "QUERY_TOO_COMPLEX", "{levels} levels");
    }
    let q = nested(31, "... on Root { ", "leaf");
    assert_eq!(code(&s, &q).await, "ok", "31 levels of fragments, depth 1");
    let cycle = "{ ...A } fragment A on Root { ...B } fragment B on Root { ...A }";
    assert_eq!(code(&s, cycle).await, "QUERY_TOO_COMPLEX");
}

#[tokio::test]
async fn mistakes_are_bad_user_input() {
    let s = schema(true);
    for q in [
        "{ leaf",
        "{ nope }",
        "{ child }",
        "{ leaf @skp(if: true) }",
        "{ __typename @skp(if: true) }",
        "{ child { __typename @nope } }",
        "{ ...F } fragment F on Root { __typename @skp }",
        "{ __typename(x: 1) }",
        "query A { leaf } query B { leaf }",
        "subscription { leaf }",
    ] {
        assert_eq!(code(&s, q).await, "BAD_USER_INPUT", "{q}");
    }
    // What is right on `__typename` still runs.
    assert_eq!(code(&s, "{ __typename @skip(if: false) leaf }").await, "ok");
    assert_eq!(code(&s, "{ __typename @include(if: true) }").await, "ok");
    let req = async_graphql::Request::new("query A { leaf }").operation_name("B");
    let resp = s.execute(req).await;
    let ext = resp.errors[0]
        .extensions
        .as_ref()
        .and_then(|x| x.get("code"));
    assert_eq!(
        ext.map(|c| c.to_string()),
        Some("\"BAD_USER_INPUT\"".into())
    );
}

#[tokio::test]
async fn introspection_only_operations_may_nest_deeper() {
    let q = |levels: usize| {
        format!(
            "{{ __schema {{ types {{ {}name{} }} }} }}",
            "ofType { ".repeat(levels),
            " }".repeat(levels)
        )
    };
    let on = schema(true);
    assert_eq!(code(&on, &q(10)).await, "ok", "13 levels");
    assert_eq!(code(&on, &q(14)).await, "QUERY_TOO_COMPLEX", "17 levels");
    let beside_data = q(10).replacen("{ ", "{ leaf ", 1);
    assert_eq!(code(&on, &beside_data).await, "QUERY_TOO_COMPLEX");
    // With introspection off, no operation gets the deeper limit.
    assert_eq!(code(&schema(false), &q(10)).await, "QUERY_TOO_COMPLEX");
}

#[tokio::test]
async fn anonymous_callers_get_the_smaller_budget() {
    let s = schema(true);
    assert_eq!(code(&s, &wide(20)).await, "ok");
    let m = message(&s, &wide(21)).await;
    assert!(
        m.contains("costs 21") && m.contains("20") && m.contains("--max-complexity-anonymous"),
        "names the anonymous limit and its value: {m}"
    );
    assert_eq!(code_of(s.execute(signed_in(&wide(21))).await), "ok");
    assert_eq!(code_of(s.execute(signed_in(&wide(40))).await), "ok");
    let resp = s.execute(signed_in(&wide(41))).await;
    let m = resp
        .errors
        .first()
        .map(|e| e.message.clone())
        .unwrap_or_default();
    assert_eq!(code_of(resp), "QUERY_TOO_COMPLEX");
    assert!(
        m.contains("40") && m.contains("`--max-complexity`"),
        "names the signed-in limit and its value: {m}"
    );
}

#[tokio::test]
async fn fields_are_counted_with_fragments_expanded() {
    let s = schema(true);
    // 5,000 repeated `__typename` (the document) are refused, by the field count.
    let q = format!("{{{} }}", " __typename".repeat(5000));
    assert_eq!(code(&s, &q).await, "QUERY_TOO_COMPLEX");
    assert!(message(&s, &q).await.contains("`--max-fields`"));
    // A fragment counts at each spread and once as a definition: 4 * 20 = 80.
    let twenty: String = (0..20).map(|i| format!(" f{i}: leaf")).collect();
    let q = format!("{{ ...A ... on Root {{ ...A }} ...A }} fragment A on Root {{{twenty} }}");
    let m = message(&s, &q).await;
    assert!(m.contains("80 once fragments are expanded"), "{m}");
    let q = format!("{{ ...A ...A }} fragment A on Root {{{twenty} }}");
    assert!(
        !message(&s, &q).await.contains("fields"),
        "60 fields pass the count"
    );
}

#[tokio::test]
async fn a_fragment_bomb_is_refused_at_once() {
    let s = schema(true);
    let q = fragment_bomb(30);
    assert!(q.len() < 2000, "a small document: {} bytes", q.len());
    let started = std::time::Instant::now();
    let m = message(&s, &q).await;
    assert!(
        started.elapsed() < std::time::Duration::from_millis(500),
        "refused in {:?}",
        started.elapsed()
    );
    // Operation 2^30, definitions 2^31 - 1.
    assert!(m.contains("3221225471 once fragments are expanded"), "{m}");
    assert_eq!(code(&s, &q).await, "QUERY_TOO_COMPLEX");
    // The same shape within the limit passes: 3 * 2^n - 1 fields, 47 for F4, 95 for F5.
    assert_eq!(code(&s, &fragment_bomb(4)).await, "ok");
    assert_eq!(code(&s, &fragment_bomb(5)).await, "QUERY_TOO_COMPLEX");
}
