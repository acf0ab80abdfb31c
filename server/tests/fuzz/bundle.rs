//! Target 3: the result-bundle verifier.

use super::importer::{json_leaf, node_mut, paths};
use super::*;

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
