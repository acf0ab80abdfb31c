//! Target 4: the GraphQL request path up to execution.

use super::importer::json_small;
use super::*;

// ---------------------------------------------------------------------------------------
// Target 4: the GraphQL request path up to execution.
// ---------------------------------------------------------------------------------------

/// The codes of the API contract (`error::AppError::code`).
const CONTRACT_CODES: [&str; 10] = [
    "UNAUTHENTICATED",
    "FORBIDDEN",
    "NOT_FOUND",
    "BAD_USER_INPUT",
    "CONFLICT",
    "WINDOW_CLOSED",
    "RATE_LIMITED",
    "QUERY_TOO_COMPLEX",
    "INTERNAL",
    "UNAVAILABLE",
];

/// Requests that got past parsing, validation and the limits to the resolvers.
static EXECUTED: AtomicUsize = AtomicUsize::new(0);

/// How long one request may take here (debug build, a busy machine): far above what any
/// takes, far below a hang.
const REQUEST_BOUND: Duration = Duration::from_secs(2);

/// The test operations (`tests/e2e/operations/*.graphql`), the seeds of mutated documents.
fn operation_documents() -> Vec<String> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/e2e/operations");
    let mut docs: Vec<(String, String)> = std::fs::read_dir(&dir)
        .expect("tests/e2e/operations")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "graphql"))
        .map(|p| {
            (
                p.display().to_string(),
                std::fs::read_to_string(&p).expect("read"),
            )
        })
        .collect();
    docs.sort();
    let mut out = vec![];
    // Each operation alone (with the fragments of its file), and each file whole.
    for (_, text) in docs {
        for op in text.split("\n\n") {
            let op = op.trim();
            if op.starts_with("query")
                || op.starts_with("mutation")
                || op.starts_with("subscription")
            {
                out.push(op.to_owned());
            }
        }
        out.push(text);
    }
    out
}

/// Names and punctuation to splice into documents: the schema's own words, so mutated
/// documents reach validation and execution, not only the parser.
fn vocabulary() -> Vec<String> {
    let sdl = include_str!("../../../schema.graphql");
    let mut words: Vec<String> = sdl
        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .filter(|w| w.len() > 1 && !w.chars().next().is_some_and(|c| c.is_ascii_digit()))
        .map(str::to_owned)
        .collect();
    words.sort();
    words.dedup();
    words.extend(
        [
            "{",
            "}",
            "(",
            ")",
            "[",
            "]",
            ":",
            "$",
            "!",
            "=",
            "@",
            "...",
            "|",
            "&",
            ",",
            "\"",
            "\"\"\"",
            "#",
            "\\u0000",
            "\\uD800",
            "-0",
            "1e999",
            "9223372036854775808",
            "query",
            "mutation",
            "subscription",
            "fragment F on Query { __typename }",
            "...F",
            "on",
            "@include(if: true)",
            "@skip(if: $x)",
            "@deprecated",
            "__typename",
            "__schema { types { name fields { name } } }",
            "__type(name: \"Query\") { name }",
            "(first: 100000)",
            "(first: -1)",
            "(after: \"\u{0}\")",
            "$v: [[[Int]]]",
            "null",
        ]
        .map(str::to_owned),
    );
    words
}

/// A change to a document's text.
#[derive(Debug, Clone)]
enum DocEdit {
    Delete(usize, usize),
    Insert(usize, usize),
    Duplicate(usize, usize),
    Swap(usize, usize, usize),
}

fn doc_edit() -> impl Strategy<Value = DocEdit> {
    let at = any::<usize>();
    prop_oneof![
        1 => (at, 1usize..16).prop_map(|(a, n)| DocEdit::Delete(a, n)),
        3 => (at, any::<usize>()).prop_map(|(a, w)| DocEdit::Insert(a, w)),
        1 => (at, 1usize..200).prop_map(|(a, n)| DocEdit::Duplicate(a, n)),
        1 => (at, at, 1usize..32).prop_map(|(a, b, n)| DocEdit::Swap(a, b, n)),
    ]
}

/// Applies `e` to `doc` at character boundaries.
fn edit_doc(doc: &str, e: &DocEdit, words: &[String]) -> String {
    let chars: Vec<char> = doc.chars().collect();
    let len = chars.len();
    let at = |i: usize| i % (len + 1);
    let s = |r: &[char]| r.iter().collect::<String>();
    match *e {
        DocEdit::Delete(a, n) => {
            let a = at(a);
            let b = (a + n).min(len);
            s(&chars[..a]) + &s(&chars[b..])
        }
        DocEdit::Insert(a, w) => {
            let a = at(a);
            format!(
                "{} {} {}",
                s(&chars[..a]),
                words[w % words.len()],
                s(&chars[a..])
            )
        }
        DocEdit::Duplicate(a, n) => {
            let a = at(a);
            let b = (a + n).min(len);
            s(&chars[..b]) + &s(&chars[a..])
        }
        DocEdit::Swap(a, b, n) => {
            let (a, b) = (at(a), at(b));
            let (lo, hi) = (a.min(b), a.max(b));
            if hi < lo + n || hi + n > len {
                return doc.to_owned();
            }
            s(&chars[..lo])
                + &s(&chars[hi..hi + n])
                + &s(&chars[lo + n..hi])
                + &s(&chars[lo..lo + n])
                + &s(&chars[hi + n..])
        }
    }
}

/// One request: where its document comes from, its variables and who sends it.
#[derive(Debug, Clone)]
struct GqlCase {
    source: DocSource,
    /// Sent as they are when `typed` is false; otherwise the values to draw from.
    variables: Value,
    /// Fill the operation's declared variables by their types (and pick one of the
    /// document's operations by name), so that requests get past validation to execution.
    typed: Option<u64>,
    operation: Option<String>,
    admin: bool,
}

/// Values of the right type for the operation's declared variables (drawn by `pick`),
/// and the name of one of the document's operations; `None` when it does not parse.
fn typed_request(query: &str, pick: u64) -> Option<(Value, Option<String>)> {
    use async_graphql::parser::types::BaseType;
    let doc = async_graphql::parser::parse_query(query).ok()?;
    let ops: Vec<_> = doc.operations.iter().collect();
    let (name, op) = ops.get(pick as usize % ops.len().max(1))?;
    let mut rng = pick;
    let mut next = |n: usize| {
        rng = rng
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (rng >> 33) as usize % n
    };
    let mut vars = serde_json::Map::new();
    for def in &op.node.variable_definitions {
        let mut ty = &def.node.var_type.node;
        let mut lists = 0;
        while let BaseType::List(inner) = &ty.base {
            ty = inner;
            lists += 1;
        }
        let named = match &ty.base {
            BaseType::Named(n) => n.as_str(),
            BaseType::List(_) => "",
        };
        let mut v = match named {
            "String" | "ID" => json!(
                [
                    "tiny-hack",
                    "evt_tiny",
                    "prj_01",
                    "usr_01",
                    "",
                    &"x".repeat(300),
                    "\u{202e}"
                ][next(7)]
            ),
            "Int" => json!([0, 1, 5, 100, -1, i32::MAX][next(6)]),
            "Float" => json!([0.5, 1.0, -1.0, 1e300][next(4)]),
            "Boolean" => json!(next(2) == 0),
            "JSON" => [tiny_event(), other_event("typed"), json!({})][next(3)].clone(),
            _ => json!({}),
        };
        for _ in 0..lists {
            v = json!([v]);
        }
        vars.insert(def.node.name.node.to_string(), v);
    }
    Some((Value::Object(vars), name.map(|n| n.to_string())))
}

#[derive(Debug, Clone)]
enum DocSource {
    /// A test operation with edits.
    Mutated(usize, Vec<DocEdit>),
    /// Arbitrary text.
    Random(String),
    /// Words of the schema, strung together.
    Words(Vec<usize>),
}

fn variables() -> impl Strategy<Value = Value> {
    let names = prop::sample::select(vec![
        "event",
        "slug",
        "id",
        "input",
        "first",
        "after",
        "email",
        "password",
        "f",
        "e",
        "r",
        "run",
        "team",
        "project",
        "x",
        "v",
        "tags",
        "scores",
        "final",
        "seed",
        "bootstrap",
    ]);
    prop_oneof![
        Just(json!({})),
        Just(json!({ "event": "tiny-hack", "slug": "tiny-hack", "first": 5 })),
        prop::collection::vec((names, json_small()), 0..6)
            .prop_map(|kv| Value::Object(kv.into_iter().map(|(k, v)| (k.to_owned(), v)).collect())),
        json_small(),
    ]
}

fn gql_case(n_docs: usize) -> impl Strategy<Value = GqlCase> {
    let source = prop_oneof![
        6 => (0..n_docs, prop::collection::vec(doc_edit(), 0..4))
            .prop_map(|(d, e)| DocSource::Mutated(d, e)),
        1 => prop_oneof!["\\PC{0,64}", "[{}()\\[\\]:$!@.,\"a-z_ 0-9#\\\\]{0,64}"].prop_map(DocSource::Random),
        1 => prop::collection::vec(any::<usize>(), 1..40).prop_map(DocSource::Words),
    ];
    (
        source,
        variables(),
        prop::option::weighted(0.75, any::<u64>()),
        prop::option::of("[A-Z][a-zA-Z]{0,12}"),
        any::<bool>(),
    )
        .prop_map(|(source, variables, typed, operation, admin)| GqlCase {
            source,
            variables,
            typed,
            operation,
            admin,
        })
}

/// The document of a case, held under the body limit an HTTP request has.
fn document(case: &GqlCase, docs: &[String], words: &[String]) -> String {
    let mut text = match &case.source {
        DocSource::Mutated(d, edits) => edits
            .iter()
            .fold(docs[d % docs.len()].clone(), |t, e| edit_doc(&t, e, words)),
        DocSource::Random(s) => s.clone(),
        DocSource::Words(w) => w
            .iter()
            .map(|i| words[i % words.len()].as_str())
            .collect::<Vec<_>>()
            .join(" "),
    };
    let max = Limits::default().max_body;
    if text.len() > max {
        let mut cut = max;
        while !text.is_char_boundary(cut) {
            cut -= 1;
        }
        text.truncate(cut);
    }
    text
}

async fn check_request(
    s: &Services,
    schema: &graphql::VerdictSchema,
    admin: &Actor,
    query: &str,
    variables: &Value,
    operation: Option<&str>,
    as_admin: bool,
) -> Result<(), TestCaseError> {
    let mut req = async_graphql::Request::new(query)
        .variables(async_graphql::Variables::from_json(variables.clone()));
    if let Some(op) = operation {
        req = req.operation_name(op);
    }
    let started = Instant::now();
    let resp = execute(s, schema, as_admin.then_some(admin), req).await;
    let took = started.elapsed();
    // Executed: resolvers ran (an answer, or an error at a field's path).
    if resp.data != async_graphql::Value::Null || resp.errors.iter().any(|e| !e.path.is_empty()) {
        EXECUTED.fetch_add(1, Ordering::Relaxed);
    }
    prop_assert!(took < REQUEST_BOUND, "the request took {:?}", took);
    for e in &resp.errors {
        let code = e
            .extensions
            .as_ref()
            .and_then(|x| x.get("code"))
            .and_then(|c| match c {
                async_graphql::Value::String(s) => Some(s.clone()),
                _ => None,
            });
        prop_assert!(
            code.as_deref().is_some_and(|c| CONTRACT_CODES.contains(&c)),
            "an error without a contract code: {:?}",
            e
        );
        prop_assert_ne!(
            code.as_deref(),
            Some("INTERNAL"),
            "an internal error: {:?}",
            e
        );
    }
    Ok(())
}

#[test]
fn fuzz_graphql_requests_end_in_time_with_contract_codes() {
    let rt = runtime();
    let (_t, db) = rt.block_on(sqlite());
    let dir = tempfile::tempdir().expect("tempdir");
    let (s, admin) = rt.block_on(async {
        import_committed(&db, tiny_event()).await;
        (services(&db, dir.path()), site_admin(&db).await)
    });
    let schema = graphql::schema(s.clone(), true);
    let docs = operation_documents();
    let words = vocabulary();
    // The corpus: documents (`*.graphql`) sent as they are, anonymous and as the admin, and
    // requests (`*.json`: `{"query", "variables", "operationName"}`).
    for (name, bytes) in support::corpus("graphql") {
        let (query, variables, operation) = if name.ends_with(".json") {
            let r: Value = serde_json::from_slice(&bytes)
                .unwrap_or_else(|e| panic!("corpus graphql/{name}: {e}"));
            (
                r["query"].as_str().unwrap_or_default().to_owned(),
                r["variables"].clone(),
                r["operationName"].as_str().map(str::to_owned),
            )
        } else {
            (
                String::from_utf8_lossy(&bytes).into_owned(),
                json!({}),
                None,
            )
        };
        for as_admin in [false, true] {
            let r = rt.block_on(check_request(
                &s,
                &schema,
                &admin,
                &query,
                &variables,
                operation.as_deref(),
                as_admin,
            ));
            if let Err(e) = r {
                panic!("corpus graphql/{name} (admin {as_admin}): {e}");
            }
        }
    }
    EXECUTED.store(0, Ordering::Relaxed);
    let cases = support::config("graphql", GRAPHQL_CASES).cases as usize;
    support::run("graphql", GRAPHQL_CASES, &gql_case(docs.len()), |case| {
        let query = document(&case, &docs, &words);
        let (variables, operation) = case
            .typed
            .and_then(|pick| typed_request(&query, pick))
            .unwrap_or_else(|| (case.variables.clone(), case.operation.clone()));
        rt.block_on(check_request(
            &s,
            &schema,
            &admin,
            &query,
            &variables,
            operation.as_deref(),
            case.admin,
        ))
    });
    // A generator whose documents never got past the parser would test the parser only.
    let executed = EXECUTED.load(Ordering::Relaxed);
    eprintln!("fuzz graphql: {executed} of {cases} random requests executed");
    assert!(
        executed * 20 >= cases,
        "only {executed} of {cases} random requests reached execution"
    );
}
