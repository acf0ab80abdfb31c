//! Fuzz targets that need a database or the schema, as property tests run by `cargo test`
//! (the pure ones are in `server/src/fuzz/`). Each target runs its committed seed corpus
//! (`server/tests/fuzz-corpus/<target>/`) and then a fixed number of random cases from a
//! fixed seed; `PROPTEST_CASES` and `PROPTEST_RNG_SEED` make a longer or another pass
//! (see `server/src/fuzz/support.rs`). SQLite only: the properties are about input, not
//! about the backend, and each case runs in a transaction that is rolled back or on a
//! database of its own test.
//!
//! - `fuzz_import_*`: the event fixture importer, on fixtures mutated from the README's
//!   example (fields, types, lengths, unicode, duplicates, cross references), never
//!   panics and either imports or refuses with BAD_USER_INPUT naming `fixture`.
//! - `fuzz_bundle_*`: a valid result bundle verifies; any changed byte, truncation,
//!   reordering or re-serialized edit does not; the verifier never panics.
//! - `fuzz_graphql_*`: arbitrary and mutated documents and variables, anonymous and as a
//!   site admin, through the schema with its default limits: no panic, every answer within
//!   a time bound, every error with a contract code and none INTERNAL.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use proptest::prelude::*;
use proptest::test_runner::TestCaseError;
use serde_json::{Value, json};
use verdict::config::Limits;
use verdict::db::Db;
use verdict::domain::{Actor, accounts, import};
use verdict::error::AppError;
use verdict::graphql::{self, RequestCtx, Services};

#[path = "../src/fuzz/support.rs"]
#[allow(dead_code, reason = "string corpora are for the pure targets")]
mod support;

#[path = "../../tests/support/in_process.rs"]
mod in_process;

/// The fresh databases, shared with the end-to-end harness.
#[path = "../../tests/e2e/harness/db.rs"]
#[allow(dead_code, reason = "this target uses SQLite only")]
mod test_db;

use in_process::{import_committed, site_admin};
use test_db::{Backend, TestDb};

/// Random cases per CI run (each target also runs its whole corpus). The three together
/// take a few seconds in a debug build.
const IMPORT_CASES: u32 = 192;
const BUNDLE_CASES: u32 = 1_024;
const GRAPHQL_CASES: u32 = 1_024;

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime")
}

async fn sqlite() -> (TestDb, Db) {
    let t = TestDb::create(Backend::Sqlite)
        .await
        .expect("SQLite is always there");
    let db = t.connect().await;
    (t, db)
}

/// The README's example fixture: the seed every importer case is mutated from.
fn tiny_event() -> Value {
    let text = include_str!("../../examples/tiny-event.json");
    serde_json::from_str(text).expect("examples/tiny-event.json is JSON")
}

/// `tiny_event` as another event with other people, for a second event in one database.
fn other_event(tag: &str) -> Value {
    let text = include_str!("../../examples/tiny-event.json")
        .replace("evt_tiny", &format!("evt_{tag}"))
        .replace("tiny-hack", &format!("{tag}-hack"))
        .replace("@example.org", &format!("@{tag}.example.org"));
    serde_json::from_str(&text).expect("JSON")
}

fn signer(dir: &std::path::Path) -> Arc<verdict::crypto::signing::Signer25519> {
    Arc::new(
        verdict::crypto::signing::Signer25519::load_or_create(&dir.join("signing.key"))
            .expect("key"),
    )
}

/// The services `serve` builds, with the default limits.
fn services(db: &Db, dir: &std::path::Path) -> Services {
    in_process::services(db, Limits::default(), signer(dir))
}

/// One request through the schema, as `http::graphql` runs it.
async fn execute(
    s: &Services,
    schema: &graphql::VerdictSchema,
    actor: Option<&Actor>,
    req: async_graphql::Request,
) -> async_graphql::Response {
    let caller = actor.map(|a| (a.user.clone(), accounts::Credential::Session { id: 0 }));
    let rc = Arc::new(RequestCtx::new("fuzz".into(), "127.0.0.1".into(), caller));
    let mut req = req;
    req.data = graphql::request_data(s, rc);
    schema.execute(req).await
}

// ---------------------------------------------------------------------------------------
// Target 2: the event fixture importer.
// ---------------------------------------------------------------------------------------

/// One step of a path into a JSON value.
#[derive(Debug, Clone, PartialEq)]
enum Step {
    Key(String),
    Index(usize),
}

/// Every node's path, in document order.
fn paths(v: &Value) -> Vec<Vec<Step>> {
    fn walk(v: &Value, at: &mut Vec<Step>, out: &mut Vec<Vec<Step>>) {
        out.push(at.clone());
        match v {
            Value::Object(m) => {
                for (k, x) in m {
                    at.push(Step::Key(k.clone()));
                    walk(x, at, out);
                    at.pop();
                }
            }
            Value::Array(a) => {
                for (i, x) in a.iter().enumerate() {
                    at.push(Step::Index(i));
                    walk(x, at, out);
                    at.pop();
                }
            }
            _ => {}
        }
    }
    let mut out = vec![];
    walk(v, &mut vec![], &mut out);
    out
}

fn node<'a>(v: &'a Value, path: &[Step]) -> Option<&'a Value> {
    path.iter().try_fold(v, |v, s| match s {
        Step::Key(k) => v.get(k.as_str()),
        Step::Index(i) => v.get(*i),
    })
}

fn node_mut<'a>(v: &'a mut Value, path: &[Step]) -> Option<&'a mut Value> {
    path.iter().try_fold(v, |v, s| match s {
        Step::Key(k) => v.get_mut(k.as_str()),
        Step::Index(i) => v.get_mut(*i),
    })
}

/// The field name a path ends in (for an array element, its array's).
fn field_of(path: &[Step]) -> Option<&str> {
    path.iter().rev().find_map(|s| match s {
        Step::Key(k) => Some(k.as_str()),
        Step::Index(_) => None,
    })
}

/// A structure-aware change to a fixture. Node indices are taken modulo the number of
/// nodes, so every mutation applies to any fixture.
#[derive(Debug, Clone)]
enum Mutation {
    /// Replace a node with another value (often of another type).
    Replace(usize, Value),
    /// Remove a node from its object or array.
    Remove(usize),
    /// Repeat an array element (duplicate rows) or a string's text.
    Repeat(usize, usize),
    /// Copy the value of another node of the same field over this one: duplicate ids,
    /// emails and references, a person in two roles.
    CopySibling(usize, usize),
    /// Add a member to an object (unknown fields).
    AddKey(usize, String, Value),
    /// Change a string: case, padding, inserted unicode, or a length at a limit.
    Text(usize, TextEdit),
}

#[derive(Debug, Clone)]
enum TextEdit {
    Upper,
    Pad(String),
    Insert(usize, String),
    /// To exactly this many characters, repeating the text (or `x`).
    Length(usize),
}

fn json_leaf() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        prop::sample::select(vec![
            0i64,
            -1,
            1,
            2,
            i64::from(i32::MAX),
            i64::from(i32::MIN),
            i64::from(i32::MAX) + 1,
            i64::MAX,
            i64::MIN,
        ])
        .prop_map(Value::from),
        prop::sample::select(vec![0.0, -0.0, 0.5, 1e-300, 1e300, f64::MAX]).prop_map(Value::from),
        prop::sample::select(vec![
            "",
            " ",
            "usr_01",
            "trk_02",
            "tm_01",
            "prj_02",
            "jdg_01",
            "impact",
            "submitted",
            "draft",
            "withdrawn",
            "2026-05-02T16:40:00Z",
            "2026-05-02T16:40:00+14:00",
            "0000-01-01T00:00:00Z",
            "9999-12-31T23:59:59.999999999Z",
            "2026-02-30T00:00:00Z",
            "Europe/Berlin",
            "https://git.example.org/x",
            "javascript:alert(1)",
            "ADA@example.org",
            "\u{202e}gnp.exe",
            "\u{0}",
            "ｅｖｔ",
        ])
        .prop_map(Value::from),
        "\\PC{0,12}".prop_map(Value::String),
    ]
}

fn json_small() -> impl Strategy<Value = Value> {
    json_leaf().prop_recursive(2, 8, 3, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..3).prop_map(Value::Array),
            prop::collection::vec(("[a-z_]{1,8}", inner), 0..3)
                .prop_map(|kv| Value::Object(kv.into_iter().collect())),
        ]
    })
}

fn text_edit() -> impl Strategy<Value = TextEdit> {
    prop_oneof![
        Just(TextEdit::Upper),
        "[ \t\n\u{a0}\u{3000}]{1,3}".prop_map(TextEdit::Pad),
        (
            any::<usize>(),
            "[\u{0}-\u{1f}\u{200b}\u{202e}\u{fe0f}\u{1F600}é\"\\\\%@.,]{1,3}"
        )
            .prop_map(|(at, s)| TextEdit::Insert(at, s)),
        prop::sample::select(vec![
            0usize, 1, 31, 32, 33, 63, 64, 65, 99, 100, 101, 199, 200, 201, 254, 255, 2_001
        ])
        .prop_map(TextEdit::Length),
    ]
}

fn mutation() -> impl Strategy<Value = Mutation> {
    let at = any::<usize>();
    prop_oneof![
        1 => (at, json_small()).prop_map(|(i, v)| Mutation::Replace(i, v)),
        1 => at.prop_map(Mutation::Remove),
        1 => (at, 1usize..4).prop_map(|(i, n)| Mutation::Repeat(i, n)),
        3 => (at, any::<usize>()).prop_map(|(i, j)| Mutation::CopySibling(i, j)),
        1 => (at, "[a-z_]{1,10}", json_leaf()).prop_map(|(i, k, v)| Mutation::AddKey(i, k, v)),
        3 => (at, text_edit()).prop_map(|(i, e)| Mutation::Text(i, e)),
    ]
}

fn edit_text(s: &str, e: &TextEdit) -> String {
    match e {
        TextEdit::Upper => s.to_uppercase(),
        TextEdit::Pad(p) => format!("{p}{s}{p}"),
        TextEdit::Insert(at, ins) => {
            let chars: Vec<char> = s.chars().collect();
            let at = at % (chars.len() + 1);
            chars[..at]
                .iter()
                .chain(ins.chars().collect::<Vec<_>>().iter())
                .chain(chars[at..].iter())
                .collect()
        }
        TextEdit::Length(n) => {
            let base: Vec<char> = if s.is_empty() {
                vec!['x']
            } else {
                s.chars().collect()
            };
            base.iter().cycle().take(*n).collect()
        }
    }
}

fn apply(v: &mut Value, m: &Mutation) {
    let all = paths(v);
    let pick = |i: usize| all[i % all.len()].clone();
    match m {
        Mutation::Replace(i, with) => {
            if let Some(n) = node_mut(v, &pick(*i)) {
                *n = with.clone();
            }
        }
        Mutation::Remove(i) => {
            let p = pick(*i);
            if let Some((last, parent)) = p.split_last()
                && let Some(parent) = node_mut(v, parent)
            {
                match (parent, last) {
                    (Value::Object(m), Step::Key(k)) => {
                        m.remove(k);
                    }
                    (Value::Array(a), Step::Index(j)) => {
                        a.remove(*j);
                    }
                    _ => {}
                }
            }
        }
        Mutation::Repeat(i, n) => {
            let p = pick(*i);
            match p.split_last() {
                Some((Step::Index(j), parent)) => {
                    if let Some(Value::Array(a)) = node_mut(v, parent) {
                        let x = a[*j].clone();
                        for _ in 0..*n {
                            a.insert(*j, x.clone());
                        }
                    }
                }
                _ => {
                    if let Some(Value::String(s)) = node_mut(v, &p) {
                        *s = s.repeat(n + 1);
                    }
                }
            }
        }
        Mutation::CopySibling(i, j) => {
            let p = pick(*i);
            let field = field_of(&p);
            let same: Vec<&Vec<Step>> = all
                .iter()
                .filter(|q| **q != p && field_of(q) == field && q.len() == p.len())
                .collect();
            if same.is_empty() {
                return;
            }
            let from = same[j % same.len()].clone();
            let value = node(v, &from).cloned();
            if let (Some(value), Some(n)) = (value, node_mut(v, &p)) {
                *n = value;
            }
        }
        Mutation::AddKey(i, k, x) => {
            if let Some(Value::Object(m)) = node_mut(v, &pick(*i)) {
                m.insert(k.clone(), x.clone());
            }
        }
        Mutation::Text(i, e) => {
            // Only strings: among all nodes, the i-th string.
            let strings: Vec<&Vec<Step>> = all
                .iter()
                .filter(|q| node(v, q).is_some_and(Value::is_string))
                .collect();
            if strings.is_empty() {
                return;
            }
            let p = strings[i % strings.len()].clone();
            if let Some(Value::String(s)) = node_mut(v, &p) {
                *s = edit_text(s, e);
            }
        }
    }
}

/// A refusal of the kind the importer promises: BAD_USER_INPUT naming `fixture`, with a
/// message that says what is wrong.
fn clear_refusal(e: &AppError) -> Result<(), TestCaseError> {
    match e {
        AppError::BadInput { field, message } if field == "fixture" && !message.is_empty() => {
            Ok(())
        }
        other => Err(TestCaseError::fail(format!(
            "refused with {other:?} (code {}), not BAD_USER_INPUT naming the fixture",
            other.code()
        ))),
    }
}

/// Fixtures that passed the checks, and imports that went through (per database).
static PARSED: AtomicUsize = AtomicUsize::new(0);
static IMPORTED: AtomicUsize = AtomicUsize::new(0);

/// Parses and imports `fixture` into each database, each time in a transaction that is
/// rolled back.
async fn check_import(dbs: &[&Db], fixture: Value) -> Result<(), TestCaseError> {
    let f = match import::parse(fixture) {
        Ok(f) => f,
        Err(e) => return clear_refusal(&e),
    };
    PARSED.fetch_add(1, Ordering::Relaxed);
    for db in dbs {
        let w = verdict::domain::Write::begin(db, None)
            .await
            .map_err(|e| TestCaseError::fail(format!("begin: {e}")))?;
        let outcome = import::import(&w, &f).await;
        w.rollback().await;
        match outcome {
            Ok(_) => {
                IMPORTED.fetch_add(1, Ordering::Relaxed);
            }
            Err(e) => clear_refusal(&e)?,
        }
    }
    Ok(())
}

#[test]
fn fuzz_import_never_panics_and_refuses_clearly() {
    let rt = runtime();
    // An empty database, and one that holds the example event and a second one already.
    let ((_t1, empty), (_t2, seeded)) = rt.block_on(async {
        let seeded = sqlite().await;
        import_committed(&seeded.1, tiny_event()).await;
        import_committed(&seeded.1, other_event("other")).await;
        (sqlite().await, seeded)
    });
    let dbs = [&empty, &seeded];
    if let Err(e) = rt.block_on(check_import(&dbs, tiny_event())) {
        panic!("the example fixture: {e}");
    }
    for (name, bytes) in support::corpus("import") {
        let fixture: Value =
            serde_json::from_slice(&bytes).unwrap_or_else(|e| panic!("corpus import/{name}: {e}"));
        if let Err(e) = rt.block_on(check_import(&dbs, fixture)) {
            panic!("corpus import/{name}: {e}");
        }
    }
    let seed = tiny_event();
    let cases = support::config("import", IMPORT_CASES).cases as usize;
    PARSED.store(0, Ordering::Relaxed);
    IMPORTED.store(0, Ordering::Relaxed);
    support::run(
        "import",
        IMPORT_CASES,
        &prop::collection::vec(mutation(), 1..6),
        |mutations| {
            let mut fixture = seed.clone();
            for m in &mutations {
                apply(&mut fixture, m);
            }
            rt.block_on(check_import(&dbs, fixture))
        },
    );
    // Mutations that never got past the checks would leave the writes untested.
    let (parsed, imported) = (
        PARSED.load(Ordering::Relaxed),
        IMPORTED.load(Ordering::Relaxed),
    );
    eprintln!(
        "fuzz import: {parsed} of {cases} mutated fixtures passed the checks, {imported} imports \
         (two databases each) went through"
    );
    assert!(
        parsed * 10 >= cases,
        "only {parsed} of {cases} mutated fixtures passed the checks"
    );
}

// ---------------------------------------------------------------------------------------
// Target 3: the result-bundle verifier.
// ---------------------------------------------------------------------------------------

/// A change to a bundle's files (indices taken modulo what they index).
#[derive(Debug, Clone)]
enum BundleEdit {
    /// XOR one byte with a non-zero mask.
    Flip { file: usize, at: usize, mask: u8 },
    /// Set one byte.
    Set { file: usize, at: usize, byte: u8 },
    /// Cut a file short.
    Truncate { file: usize, keep: usize },
    /// Insert bytes.
    Insert {
        file: usize,
        at: usize,
        bytes: Vec<u8>,
    },
    /// Swap two ranges of one file (reordering inside it).
    SwapRanges {
        file: usize,
        a: usize,
        b: usize,
        len: usize,
    },
    /// Swap two files' contents.
    SwapFiles(usize, usize),
    /// Reorder, drop or repeat the audit rows, re-serialized as export writes them.
    Rows { op: u8, i: usize, j: usize },
    /// Replace one value of a JSON file, re-serialized as export writes it, so the check
    /// that the files are byte for byte as exported does not catch it alone.
    JsonLeaf { file: usize, at: usize, with: Value },
    /// Upper-case a top-level string field of a JSON file (hex that decodes the same).
    Upper { file: usize, field: String },
}

fn bundle_edit() -> impl Strategy<Value = BundleEdit> {
    let file = 0usize..verdict::bundle::FILES.len();
    let at = any::<usize>();
    prop_oneof![
        3 => (file.clone(), at, 1u8..=255).prop_map(|(file, at, mask)| BundleEdit::Flip { file, at, mask }),
        1 => (file.clone(), at, any::<u8>()).prop_map(|(file, at, byte)| BundleEdit::Set { file, at, byte }),
        1 => (file.clone(), at).prop_map(|(file, keep)| BundleEdit::Truncate { file, keep }),
        1 => (file.clone(), at, prop::collection::vec(any::<u8>(), 1..4))
            .prop_map(|(file, at, bytes)| BundleEdit::Insert { file, at, bytes }),
        1 => (file.clone(), at, at, 1usize..64)
            .prop_map(|(file, a, b, len)| BundleEdit::SwapRanges { file, a, b, len }),
        1 => (file.clone(), file.clone()).prop_map(|(a, b)| BundleEdit::SwapFiles(a, b)),
        2 => (0u8..3, at, at).prop_map(|(op, i, j)| BundleEdit::Rows { op, i, j }),
        3 => (file.clone(), at, json_leaf()).prop_map(|(file, at, with)| BundleEdit::JsonLeaf { file, at, with }),
        1 => (file, prop::sample::select(vec!["signature", "head_hash", "key_fingerprint", "inputs_hash", "result_hash"]))
            .prop_map(|(file, field)| BundleEdit::Upper { file, field: field.to_owned() }),
    ]
}

/// The JSON files as export writes them (pretty, one newline), or `None` for the files
/// written verbatim.
fn reserialize(name: &str, v: &Value) -> Option<Vec<u8>> {
    matches!(
        name,
        "run.json" | "publication.json" | "checkpoint.json" | "audit.json"
    )
    .then(|| (serde_json::to_string_pretty(v).unwrap_or_default() + "\n").into_bytes())
    .or_else(|| {
        matches!(name, "inputs.json" | "params.json" | "result.json")
            .then(|| serde_json::to_string(v).unwrap_or_default().into_bytes())
    })
}

fn edit_bundle(files: &mut [Vec<u8>], e: &BundleEdit) {
    let n = files.len();
    match e {
        BundleEdit::Flip { file, at, mask } => {
            let f = &mut files[file % n];
            if !f.is_empty() {
                let i = at % f.len();
                f[i] ^= mask;
            }
        }
        BundleEdit::Set { file, at, byte } => {
            let f = &mut files[file % n];
            if !f.is_empty() {
                let i = at % f.len();
                f[i] = *byte;
            }
        }
        BundleEdit::Truncate { file, keep } => {
            let f = &mut files[file % n];
            let keep = keep % (f.len() + 1);
            f.truncate(keep);
        }
        BundleEdit::Insert { file, at, bytes } => {
            let f = &mut files[file % n];
            let at = at % (f.len() + 1);
            f.splice(at..at, bytes.iter().copied());
        }
        BundleEdit::SwapRanges { file, a, b, len } => {
            let f = &mut files[file % n];
            if f.len() >= 2 * len {
                let (a, b) = (a % (f.len() - len + 1), b % (f.len() - len + 1));
                let (lo, hi) = (a.min(b), a.max(b));
                if hi >= lo + len {
                    let first: Vec<u8> = f[lo..lo + len].to_vec();
                    let second: Vec<u8> = f[hi..hi + len].to_vec();
                    f[lo..lo + len].copy_from_slice(&second);
                    f[hi..hi + len].copy_from_slice(&first);
                }
            }
        }
        BundleEdit::SwapFiles(a, b) => files.swap(a % n, b % n),
        BundleEdit::Rows { op, i, j } => {
            let Ok(Value::Array(mut rows)) = serde_json::from_slice::<Value>(&files[7]) else {
                return;
            };
            if rows.is_empty() {
                return;
            }
            let (i, j) = (i % rows.len(), j % rows.len());
            match op {
                0 => rows.swap(i, j),
                1 => {
                    rows.remove(i);
                }
                _ => {
                    let r = rows[i].clone();
                    rows.insert(j, r);
                }
            }
            if let Some(b) = reserialize("audit.json", &Value::Array(rows)) {
                files[7] = b;
            }
        }
        BundleEdit::Upper { file, field } => {
            let i = file % n;
            let Ok(mut v) = serde_json::from_slice::<Value>(&files[i]) else {
                return;
            };
            if let Some(Value::String(x)) = v.get_mut(field.as_str()) {
                *x = x.to_uppercase();
            }
            if let Some(b) = reserialize(verdict::bundle::FILES[i], &v) {
                files[i] = b;
            }
        }
        BundleEdit::JsonLeaf { file, at, with } => {
            let i = file % n;
            let name = verdict::bundle::FILES[i];
            let Ok(mut v) = serde_json::from_slice::<Value>(&files[i]) else {
                return;
            };
            let all = paths(&v);
            let p = all[at % all.len()].clone();
            if let Some(node) = node_mut(&mut v, &p) {
                *node = with.clone();
            }
            if let Some(b) = reserialize(name, &v) {
                files[i] = b;
            }
        }
    }
}

/// A published event's bundle, exported as `verdict results export` writes it, with
/// another event's audit rows (payloads withheld) inside its range; and the key's
/// fingerprint.
async fn valid_bundle(db: &Db, dir: &std::path::Path) -> (Vec<Vec<u8>>, String) {
    import_committed(db, tiny_event()).await;
    let admin = site_admin(db).await;
    let s = services(db, dir);
    let schema = graphql::schema(s.clone(), true);
    let ok = |r: async_graphql::Response| {
        assert!(r.errors.is_empty(), "{:?}", r.errors);
        r.data.into_json().expect("JSON")
    };
    let run = ok(execute(
        &s,
        &schema,
        Some(&admin),
        async_graphql::Request::new(
            r#"mutation { runCalibration(event: "tiny-hack", seed: 7, bootstrap: 20) { id } }"#,
        ),
    )
    .await);
    import_committed(db, other_event("other")).await;
    let run_id = run["runCalibration"]["id"]
        .as_str()
        .expect("run id")
        .to_owned();
    ok(execute(
        &s,
        &schema,
        Some(&admin),
        async_graphql::Request::new(format!(
            r#"mutation {{ publishResults(event: "tiny-hack", run: "{run_id}", final: true) {{ version }} }}"#
        )),
    )
    .await);
    let out = dir.join("bundle");
    verdict::bundle::export(&db.conn, &s.signer, "tiny-hack", &out)
        .await
        .expect("export");
    let files = verdict::bundle::FILES
        .iter()
        .map(|f| std::fs::read(out.join(f)).expect("bundle file"))
        .collect();
    (files, s.signer.fingerprint())
}

#[test]
fn fuzz_bundle_verifies_only_the_exported_bytes() {
    let rt = runtime();
    let (_t, db) = rt.block_on(sqlite());
    let dir = tempfile::tempdir().expect("tempdir");
    let (files, fingerprint) = rt.block_on(valid_bundle(&db, dir.path()));
    let pins = [
        None,
        Some(verdict::bundle::Pin::Fingerprint(fingerprint.clone())),
    ];
    for pin in &pins {
        let report = verdict::bundle::verify_files(&files, pin.as_ref());
        assert!(
            report.ok(),
            "the exported bundle fails: {:?}",
            report.failed
        );
    }
    // The corpus: edits that once mattered (JSON lists of edits, by the names above).
    let check = |edits: &[BundleEdit]| -> Result<(), TestCaseError> {
        let mut changed = files.clone();
        for e in edits {
            edit_bundle(&mut changed, e);
        }
        for pin in &pins {
            let report = verdict::bundle::verify_files(&changed, pin.as_ref());
            prop_assert_eq!(
                report.ok(),
                changed == files,
                "verdict {} for a bundle {} the export (failed: {:?})",
                report.ok(),
                if changed == files {
                    "identical to"
                } else {
                    "changed from"
                },
                report.failed
            );
        }
        Ok(())
    };
    for (name, bytes) in support::corpus("bundle") {
        let edits: Vec<Value> =
            serde_json::from_slice(&bytes).unwrap_or_else(|e| panic!("corpus bundle/{name}: {e}"));
        let edits: Vec<BundleEdit> = edits.iter().map(edit_from_json).collect();
        if let Err(e) = check(&edits) {
            panic!("corpus bundle/{name}: {e}");
        }
    }
    support::run(
        "bundle",
        BUNDLE_CASES,
        &prop::collection::vec(bundle_edit(), 1..4),
        |edits| check(&edits),
    );
}

/// A corpus edit: `{"flip": [file, at, mask]}`, `{"truncate": [file, keep]}`,
/// `{"swap_files": [a, b]}`, `{"rows": [op, i, j]}`, `{"leaf": [file, at, value]}`,
/// `{"upper": [file, field]}`.
fn edit_from_json(v: &Value) -> BundleEdit {
    let n = |x: &Value| x.as_u64().expect("a number") as usize;
    let (k, a) = v
        .as_object()
        .and_then(|m| m.iter().next())
        .expect("one edit per object");
    let a = a.as_array().expect("edit arguments");
    match k.as_str() {
        "flip" => BundleEdit::Flip {
            file: n(&a[0]),
            at: n(&a[1]),
            mask: n(&a[2]) as u8,
        },
        "truncate" => BundleEdit::Truncate {
            file: n(&a[0]),
            keep: n(&a[1]),
        },
        "swap_files" => BundleEdit::SwapFiles(n(&a[0]), n(&a[1])),
        "rows" => BundleEdit::Rows {
            op: n(&a[0]) as u8,
            i: n(&a[1]),
            j: n(&a[2]),
        },
        "upper" => BundleEdit::Upper {
            file: n(&a[0]),
            field: a[1].as_str().expect("a field name").to_owned(),
        },
        "leaf" => BundleEdit::JsonLeaf {
            file: n(&a[0]),
            at: n(&a[1]),
            with: a[2].clone(),
        },
        other => panic!("unknown bundle edit {other}"),
    }
}

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
    let sdl = include_str!("../../schema.graphql");
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
