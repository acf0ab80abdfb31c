//! Target 2: the event fixture importer.

use super::*;

// ---------------------------------------------------------------------------------------
// Target 2: the event fixture importer.
// ---------------------------------------------------------------------------------------

/// One step of a path into a JSON value.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Step {
    Key(String),
    Index(usize),
}

/// Every node's path, in document order.
pub(super) fn paths(v: &Value) -> Vec<Vec<Step>> {
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

pub(super) fn node_mut<'a>(v: &'a mut Value, path: &[Step]) -> Option<&'a mut Value> {
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

pub(super) fn json_leaf() -> impl Strategy<Value = Value> {
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

pub(super) fn json_small() -> impl Strategy<Value = Value> {
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
