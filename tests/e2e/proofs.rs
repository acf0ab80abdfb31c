//! Inclusion proofs (issue 27): every project of a published 2,000-project event has a proof
//! that verifies offline against the signed root; any changed byte of a proof, its entry or
//! its root fails `verdict results verify-proof`; a proof under another version's root
//! fails; two versions compare entry by entry; a publication without a root (v1) still
//! verifies, and one made before roots existed has no proof, says so, and its bundle
//! verifies as it did.

use std::path::Path;

use serde_json::{Value, json};
use verdict::domain::proofs::{self, EntryFormat, ResultTree};
use verdict::domain::results::PublicationDocument;

use crate::harness::{App, Backend, judged_fixture, op, str_at, unique};

e2e! {
    proofs_verify_for_every_project_of_a_2000_project_event [
        "--request-timeout", "600", "--max-body", "8388608"
    ],
    proofs_fail_on_a_changed_byte_and_under_another_versions_root,
    proofs_none_for_a_publication_from_before_the_roots,
    proofs_of_a_publication_with_plain_review_hashes_still_verify,
}

const PROOF: &str = "query($e: String!, $p: ID!) { event(slug: $e) { results { version \
    inclusionProof(project: $p) { projectExternalId leafIndex treeSize entry leafHash \
    auditPath root signedTag publicationSignature keyFingerprint document } } } }";

const RUN: &str = "mutation($e: String!, $s: Int, $b: Int) { runCalibration(event: $e, seed: $s, bootstrap: $b) { id } }";
const PUBLISH: &str = "mutation($e: String!, $r: ID!) { publishResults(event: $e, run: $r, final: false) { version } }";

async fn fingerprint(app: &App) -> String {
    app.get("/.well-known/verdict-signing-key")
        .await
        .header("x-signing-key-fingerprint")
        .expect("fingerprint header")
}

/// Runs `verdict results verify-proof FILE --key FP` offline: (exit code, stdout).
fn verify_proof(file: &Path, key: &str) -> (Option<i32>, String) {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_verdict"))
        .args(["results", "verify-proof"])
        .arg(file)
        .args(["--key", key])
        .env_remove("VERDICT_DATABASE_URL")
        .output()
        .expect("run verify-proof");
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}

/// `results prove` through the CLI into `dir/name`; the file's text.
async fn prove(app: &App, slug: &str, project: &str, version: Option<i32>, file: &Path) -> String {
    let mut args = vec![
        "results",
        "prove",
        "--event",
        slug,
        "--project",
        project,
        "--out",
        file.to_str().expect("utf-8"),
    ];
    let v = version.map(|v| v.to_string());
    if let Some(v) = &v {
        args.extend(["--version", v.as_str()]);
    }
    let out = app.cli(&args).await;
    assert!(out.success(), "prove: {out:?}");
    std::fs::read_to_string(file).expect("proof file")
}

/// Exports the event's latest publication as a bundle into `dir`.
async fn export(app: &App, slug: &str, dir: &Path) {
    let out = app
        .cli(&[
            "results",
            "export",
            "--event",
            slug,
            dir.to_str().expect("utf-8"),
        ])
        .await;
    assert!(out.success(), "export: {out:?}");
}

async fn proofs_verify_for_every_project_of_a_2000_project_event(app: App) {
    let tag = unique();
    let slug = format!("panel-{tag}");
    let file = app.db.dir().join(format!("panel-{tag}.json"));
    std::fs::write(
        &file,
        crate::results::panel_fixture(&tag, 2_000, 200, 3).to_string(),
    )
    .expect("write");
    let started = std::time::Instant::now();
    let out = app.cli(&["import", file.to_str().expect("utf-8")]).await;
    assert!(out.success(), "import: {out:?}");
    let token = app
        .cli(&[
            "token",
            "mint",
            "--email",
            &format!("panel-o-{tag}@example.org"),
            "--name",
            "e2e",
        ])
        .await;
    assert!(token.success(), "token mint: {token:?}");
    let organizer = token.stdout.trim().to_string();
    let run = app
        .ok(Some(&organizer), RUN, json!({ "e": slug, "s": 1, "b": 20 }))
        .await;
    app.ok(
        Some(&organizer),
        PUBLISH,
        json!({ "e": slug, "r": str_at(&run, "/runCalibration/id") }),
    )
    .await;
    eprintln!(
        "imported, calibrated and published 2,001 projects in {:.1?}",
        started.elapsed()
    );

    // The bundle: every proof is built in-process from its files and checked offline
    // against its signed root and the deployment's published key.
    let key = fingerprint(&app).await;
    let dir = tempfile::tempdir().expect("tempdir");
    let bundle = dir.path().join("bundle");
    export(&app, &slug, &bundle).await;
    let read = |name: &str| std::fs::read_to_string(bundle.join(name)).expect(name);
    let publication: Value = serde_json::from_str(&read("publication.json")).expect("json");
    let document: PublicationDocument =
        serde_json::from_value(publication.clone()).expect("a publication document");
    let result = serde_json::from_str(&read("result.json")).expect("result.json");
    // Published now: a v3 document, whose entries commit to each review with a key only
    // the holders of inputs.json can derive (no plain review hash to test guesses with).
    assert_eq!(publication["entry_format"], 2);
    assert_eq!(document.tag(), "verdict.publication.v3");
    let tree =
        ResultTree::of(&read("inputs.json"), &result, document.entry_format()).expect("tree");
    let plain = ResultTree::of(&read("inputs.json"), &result, EntryFormat::Plain).expect("tree");
    assert_ne!(tree.root_hex(), plain.root_hex());
    // The unreviewed late project is submitted, so it has an entry too.
    assert_eq!(tree.size(), 2_001);
    assert_eq!(publication["tree_size"], 2_001);
    assert_eq!(publication["merkle_root"], tree.root_hex().as_str());
    let pem = read("public-key.pem");
    let signature = publication["signature"].as_str().expect("signature");
    let timed = std::time::Instant::now();
    for entry in &tree.entries {
        let proof = tree
            .prove(&entry.project, document.clone(), signature, &pem)
            .expect("a proof");
        let checks = proofs::verify(&proof.to_file(), &key);
        assert!(checks.ok(), "{}: {:?}", entry.project, checks.failed);
    }
    eprintln!(
        "built and verified 2,001 proofs in {:.1?} (audit paths of {} hashes)",
        timed.elapsed(),
        tree.tree.path(0).expect("path").len()
    );

    // A handful through GraphQL, anonymously (results are public) and by either id, and
    // through the CLI: the same file, verified by `verify-proof`.
    let public_id = {
        let p = app
            .ok(
                None,
                "query($id: ID!) { project(id: $id) { id } }",
                json!({ "id": format!("p1999_{tag}") }),
            )
            .await;
        str_at(&p, "/project/id")
    };
    for (asked, project) in [
        (format!("p0_{tag}"), format!("p0_{tag}")),
        (format!("p1000_{tag}"), format!("p1000_{tag}")),
        (public_id, format!("p1999_{tag}")),
        (format!("late_{tag}"), format!("late_{tag}")),
    ] {
        let got = app.ok(None, PROOF, json!({ "e": slug, "p": asked })).await;
        let p = &got["event"]["results"]["inclusionProof"];
        assert_eq!(p["projectExternalId"], project.as_str());
        assert_eq!(p["treeSize"], 2_001);
        assert_eq!(p["root"], tree.root_hex().as_str());
        assert_eq!(p["signedTag"], "verdict.publication.v3");
        assert_eq!(p["keyFingerprint"], key.as_str());
        let in_process = tree
            .prove(&project, document.clone(), signature, &pem)
            .expect("a proof");
        assert_eq!(p["document"], in_process.to_file().as_str());
        assert_eq!(p["entry"], in_process.entry.as_str());
        assert_eq!(p["leafIndex"], in_process.leaf_index);
        let path = dir.path().join(format!("{project}.json"));
        let file = prove(&app, &slug, &project, None, &path).await;
        assert_eq!(
            file,
            in_process.to_file(),
            "the CLI and GraphQL give one file"
        );
        let (code, stdout) = verify_proof(&path, &key);
        assert_eq!(code, Some(0), "{stdout}");
        assert!(stdout.trim_end().ends_with("PASS"), "{stdout}");
    }
    // A project of no entry: null.
    let none = app
        .ok(None, PROOF, json!({ "e": slug, "p": "nobody" }))
        .await;
    assert_eq!(none["event"]["results"]["inclusionProof"], Value::Null);
}

/// Flips the character at `at` of `text` to another hex digit (or letter).
fn flip(text: &str, at: usize) -> String {
    let mut bytes = text.as_bytes().to_vec();
    bytes[at] = if bytes[at] == b'a' { b'b' } else { b'a' };
    String::from_utf8(bytes).expect("ascii")
}

async fn proofs_fail_on_a_changed_byte_and_under_another_versions_root(app: App) {
    let admin = app.site_admin().await;
    let tag = unique();
    let slug = format!("csv-{tag}");
    app.ok(
        Some(&admin),
        "mutation($f: JSON!) { importEvent(fixture: $f) { inserted } }",
        json!({ "f": judged_fixture(&tag) }),
    )
    .await;
    let key = fingerprint(&app).await;
    let run1 = app
        .ok(Some(&admin), RUN, json!({ "e": slug, "s": 7, "b": 50 }))
        .await;
    let run1 = str_at(&run1, "/runCalibration/id");
    app.ok(Some(&admin), PUBLISH, json!({ "e": slug, "r": run1 }))
        .await;
    let dir = tempfile::tempdir().expect("tempdir");
    let project = format!("p2_{tag}");
    let v1_path = dir.path().join("v1.json");
    let v1 = prove(&app, &slug, &project, None, &v1_path).await;
    let (code, stdout) = verify_proof(&v1_path, &key);
    assert_eq!(code, Some(0), "{stdout}");
    // One line per check, then PASS.
    assert_eq!(
        stdout.lines().filter(|l| l.starts_with("ok ")).count(),
        6,
        "{stdout}"
    );

    // A changed byte of an audit path hash, of the entry, of the root: FAIL, exit 1.
    let proof: Value = serde_json::from_str(&v1).expect("json");
    let at_path = v1
        .find(proof["audit_path"][0].as_str().expect("a path"))
        .expect("path")
        + 5;
    let entry_text = serde_json::to_string(proof["entry"].as_str().expect("entry")).expect("json");
    let at_entry =
        v1.find(&entry_text).expect("entry") + entry_text.find("quality").expect("q") + 2;
    let at_root = v1
        .rfind(proof["root"].as_str().expect("root"))
        .expect("root")
        + 10;
    for (what, at) in [
        ("audit path", at_path),
        ("entry", at_entry),
        ("root", at_root),
    ] {
        let bad = dir.path().join(format!("bad-{what}.json"));
        std::fs::write(&bad, flip(&v1, at)).expect("write");
        let (code, stdout) = verify_proof(&bad, &key);
        assert_eq!(
            code,
            Some(1),
            "a changed byte of the {what} verifies: {stdout}"
        );
        assert!(stdout.trim_end().ends_with("FAIL"), "{stdout}");
    }
    // Another key pinned: FAIL.
    let (code, _) = verify_proof(&v1_path, &"0".repeat(64));
    assert_eq!(code, Some(1));

    // Version 2: one project hidden since, so its entry changes.
    app.ok(
        Some(&admin),
        op("HideProject"),
        json!({ "id": format!("p4_{tag}"), "reason": "late fix" }),
    )
    .await;
    let run2 = app
        .ok(Some(&admin), RUN, json!({ "e": slug, "s": 7, "b": 50 }))
        .await;
    let run2 = str_at(&run2, "/runCalibration/id");
    app.ok(Some(&admin), PUBLISH, json!({ "e": slug, "r": run2 }))
        .await;
    let v2_path = dir.path().join("v2.json");
    let v2 = prove(&app, &slug, &project, Some(2), &v2_path).await;
    let (code, stdout) = verify_proof(&v2_path, &key);
    assert_eq!(code, Some(0), "{stdout}");
    // Version 1's entry and path under version 2's signed document: FAIL.
    let mut mixed: proofs::InclusionProof = serde_json::from_str(&v1).expect("proof");
    let second: proofs::InclusionProof = serde_json::from_str(&v2).expect("proof");
    assert_ne!(mixed.root, second.root);
    mixed.publication = second.publication.clone();
    mixed.signature = second.signature.clone();
    mixed.root = second.root.clone();
    let mixed_path = dir.path().join("mixed.json");
    std::fs::write(&mixed_path, mixed.to_file()).expect("write");
    let (code, stdout) = verify_proof(&mixed_path, &key);
    assert_eq!(
        code,
        Some(1),
        "a proof under another version's root verifies: {stdout}"
    );
    assert!(
        stdout.contains("FAIL  the audit path") || stdout.contains("FAIL  the proof's root"),
        "{stdout}"
    );
    // `--version 1` still proves under version 1's own root.
    let again = prove(
        &app,
        &slug,
        &project,
        Some(1),
        &dir.path().join("again.json"),
    )
    .await;
    assert_eq!(again, v1);

    // Consistency: 1 to 2 names the hidden project; 2 to 3 (the same run again) keeps all.
    let out = app
        .cli(&[
            "results",
            "consistency",
            "--event",
            &slug,
            "--from",
            "1",
            "--to",
            "2",
        ])
        .await;
    assert_eq!(out.code, Some(1), "{out:?}");
    assert!(
        out.stdout.contains(&format!(
            "FAIL  p4_{tag}: entry changed from version 1 to 2"
        )),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout
            .contains("ok    version 1: 4 entries rebuild its signed root"),
        "{}",
        out.stdout
    );
    app.ok(Some(&admin), PUBLISH, json!({ "e": slug, "r": run2 }))
        .await;
    let out = app.cli(&["results", "consistency", "--event", &slug]).await;
    assert_eq!(out.code, Some(0), "{out:?}");
    assert!(
        out.stdout
            .contains("ok    version 3 keeps all 4 entries of version 2 byte for byte"),
        "{}",
        out.stdout
    );

    // The bundle of a v2 publication checks its root against its own entries and passes.
    // Passed off as a v1 publication (root removed, re-signed as v1 with the deployment's
    // key), its v1 signature checks, but the publication's audit entry, which records the
    // root, gives the downgrade away.
    let bundle = dir.path().join("bundle");
    export(&app, &slug, &bundle).await;
    let files: Vec<Vec<u8>> = verdict::bundle::FILES
        .iter()
        .map(|f| std::fs::read(bundle.join(f)).expect("bundle file"))
        .collect();
    let report = verdict::bundle::verify_files(&files, None);
    assert!(report.ok(), "{:?}", report.failed);
    assert!(
        report
            .passed
            .iter()
            .any(|p| p.starts_with("the publication's Merkle root is the root")),
        "{:?}",
        report.passed
    );
    assert!(
        report
            .passed
            .contains(&"publication signature (verdict.publication.v3)".to_string())
    );
    if app.backend() == Backend::Sqlite {
        let signer = verdict::crypto::signing::Signer25519::load(&app.db.key_file())
            .expect("key")
            .expect("a key file");
        let mut file: verdict::bundle::PublicationFile =
            serde_json::from_slice(&files[4]).expect("publication.json");
        file.merkle_root = None;
        file.tree_size = None;
        file.entry_format = None;
        let old = PublicationDocument {
            event: file.event.clone(),
            version: file.version,
            is_final: file.is_final,
            run: file.run.clone(),
            result_hash: file.result_hash.clone(),
            published_at: file.published_at.clone(),
            merkle_root: None,
            tree_size: None,
            entry_format: None,
        };
        file.signature = old.sign(&signer);
        let mut v1_files = files.clone();
        v1_files[4] = (serde_json::to_string_pretty(&file).expect("json") + "\n").into_bytes();
        let text = String::from_utf8(v1_files[4].clone()).expect("utf-8");
        assert!(!text.contains("merkle_root"), "{text}");
        let report = verdict::bundle::verify_files(&v1_files, None);
        assert_eq!(
            report.failed,
            vec![
                "the publication's audit entry records this publication".to_string(),
                "the estimator was not re-run: earlier checks failed".to_string()
            ]
        );
        assert!(
            report
                .passed
                .contains(&"publication signature (verdict.publication.v1)".to_string())
        );
    }
}

/// How Verdict published before this version: with no root (`verdict.publication.v1`,
/// before migration `m20261205_030001_publication_roots`), or with a root over entries that
/// hold the reviews' plain hashes (`verdict.publication.v2`, before migration
/// `m20261205_140001_publication_entry_format`).
#[derive(Clone, Copy, PartialEq)]
enum Before {
    Roots,
    SaltedReviews,
}

/// Publishes `run` of the event `slug` as Verdict did `before`, which is how a database of
/// that time holds it: the old `domain::results::publish` in one transaction, the
/// `results.published` audit entry with that time's payload and the row signed as that
/// time's document (v1: `merkle_root` and `merkle_size` null; v2: the plain entries' root,
/// `entry_format` null). No code path writes one any more, so it is written here; nulling
/// the columns of a new publication would not make one, since its signature and its audit
/// entry cover them.
async fn publish_as_before(app: &App, slug: &str, run: &str, actor: &str, before: Before) {
    use entity::{calibration_run, event, result_publication};
    use sea_orm::{ActiveModelTrait, ColumnTrait, EntityTrait, QueryFilter, Set};
    use verdict::audit::{self, Entry};

    // A write transaction as the server opens one (`BEGIN IMMEDIATE` on SQLite): a deferred
    // one that reads first could not take the write lock after the server's sequencer
    // committed ("database is locked", at once, whatever the busy timeout).
    let db = verdict::db::Db::connect(app.db.url())
        .await
        .expect("connect");
    let txn = db.write().await.expect("begin");
    let e = event::Entity::find()
        .filter(event::Column::Slug.eq(slug))
        .one(&txn)
        .await
        .expect("read the event")
        .expect("the event");
    let run = calibration_run::Entity::find()
        .filter(calibration_run::Column::PublicId.eq(run))
        .one(&txn)
        .await
        .expect("read the run")
        .expect("the run");
    let at = chrono::SubsecRound::trunc_subsecs(chrono::Utc::now(), 6);
    let at_text = audit::canonical_time(at);
    let public = verdict::crypto::public_id("pub");
    // v2: the root over the entries as v2 spelt them (each review's plain SHA-256).
    let tree = (before == Before::SaltedReviews).then(|| {
        let result = verdict::domain::results::parse_result(&run).expect("the run's result");
        ResultTree::of_run(&run, &result, EntryFormat::Plain).expect("the plain tree")
    });
    let (root, size) = (
        tree.as_ref().map(|t| t.root_hex()),
        tree.as_ref().map(|t| t.size() as u64),
    );
    let mut payload = json!({
        "version": 1,
        "final": false,
        "run": run.public_id,
        "result_hash": run.result_hash,
        "published_at": at_text,
    });
    if let (Some(root), Some(size)) = (&root, size) {
        payload["merkle_root"] = json!(root);
        payload["tree_size"] = json!(size);
    }
    let seq = audit::append(
        &txn,
        "e2e-v1",
        Entry::new("results.published", "result_publication", &public)
            .by(actor)
            .in_event(&e.external_id)
            .with(payload)
            .at(at),
    )
    .await
    .expect("append the audit entry");
    let document = PublicationDocument {
        event: e.external_id.clone(),
        version: 1,
        is_final: false,
        run: run.public_id.clone(),
        result_hash: run.result_hash.clone(),
        published_at: at_text,
        merkle_root: root.clone(),
        tree_size: size,
        entry_format: None,
    };
    let signer = verdict::crypto::signing::Signer25519::load(&app.db.key_file())
        .expect("read the key")
        .expect("the server's key file");
    result_publication::ActiveModel {
        public_id: Set(public),
        event_id: Set(e.id),
        run_id: Set(run.id),
        version: Set(1),
        is_final: Set(false),
        published_at: Set(at),
        published_by: Set(actor.to_owned()),
        signature: Set(document.sign(&signer)),
        audit_seq: Set(seq),
        merkle_root: Set(root),
        merkle_size: Set(size.map(|n| n as i64)),
        entry_format: Set(None),
        ..Default::default()
    }
    .insert(&txn)
    .await
    .expect("insert the publication");
    txn.commit().await.expect("commit");
}

/// An imported, judged event whose run was published as Verdict did `before`.
struct Old {
    admin: String,
    tag: String,
    slug: String,
    run: String,
}

/// Imports a judged event, runs its calibration and publishes the run as Verdict did
/// `before` ([`publish_as_before`]); the audit chain still verifies with that entry on it.
async fn published_as_before(app: &App, before: Before) -> Old {
    let admin = app.site_admin().await;
    let actor = app
        .ok(Some(&admin), "{ viewer { user { id } } }", json!({}))
        .await;
    let actor = str_at(&actor, "/viewer/user/id");
    let tag = unique();
    let slug = format!("csv-{tag}");
    app.ok(
        Some(&admin),
        "mutation($f: JSON!) { importEvent(fixture: $f) { inserted } }",
        json!({ "f": judged_fixture(&tag) }),
    )
    .await;
    let run = app
        .ok(Some(&admin), RUN, json!({ "e": slug, "s": 7, "b": 50 }))
        .await;
    let run = str_at(&run, "/runCalibration/id");
    publish_as_before(app, &slug, &run, &actor, before).await;
    let audit = app.cli(&["audit", "verify"]).await;
    assert!(
        audit.success(),
        "the old publication's entry is on the chain: {audit:?}"
    );
    Old {
        admin,
        tag,
        slug,
        run,
    }
}

/// A publication from before the roots, on a database that has since been migrated: no
/// inclusion proof (null, not an error), `results prove` says why, its bundle (a v1 one)
/// verifies offline as before, and the next publication, made by this version, has proofs.
async fn proofs_none_for_a_publication_from_before_the_roots(app: App) {
    let Old {
        admin,
        tag,
        slug,
        run,
    } = published_as_before(&app, Before::Roots).await;

    // GraphQL: the publication is there, and its proof is null without an error.
    let project = format!("p2_{tag}");
    let got = app
        .ok(None, PROOF, json!({ "e": slug, "p": project }))
        .await;
    assert_eq!(got["event"]["results"]["version"], 1, "{got}");
    assert_eq!(
        got["event"]["results"]["inclusionProof"],
        Value::Null,
        "{got}"
    );

    // The CLI says there is no proof for that version, and why; it writes no file.
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("v1.json");
    let out = app
        .cli(&[
            "results",
            "prove",
            "--event",
            &slug,
            "--project",
            &project,
            "--out",
            file.to_str().expect("utf-8"),
        ])
        .await;
    assert_eq!(out.code, Some(1), "{out:?}");
    assert!(
        out.stderr.contains(
            "version 1 was published before results carried a Merkle root \
             (a verdict.publication.v1 document): it has no inclusion proofs"
        ),
        "{out:?}"
    );
    assert!(!file.exists(), "a proof file was written");

    // Its bundle is a v1 bundle, exactly as before, and verifies against the pinned key.
    let key = fingerprint(&app).await;
    let bundle = dir.path().join("bundle");
    export(&app, &slug, &bundle).await;
    let publication = std::fs::read_to_string(bundle.join("publication.json")).expect("read");
    assert!(!publication.contains("merkle_root"), "{publication}");
    assert!(!publication.contains("tree_size"), "{publication}");
    let verified = std::process::Command::new(env!("CARGO_BIN_EXE_verdict"))
        .args(["results", "verify"])
        .arg(&bundle)
        .args(["--key", &key])
        .env_remove("VERDICT_DATABASE_URL")
        .output()
        .expect("run results verify");
    let stdout = String::from_utf8_lossy(&verified.stdout);
    assert_eq!(verified.status.code(), Some(0), "{stdout}");
    assert!(
        stdout.contains("ok    publication signature (verdict.publication.v1)"),
        "{stdout}"
    );
    assert!(
        stdout.contains("ok    the publication's audit entry records this publication"),
        "{stdout}"
    );
    assert!(!stdout.contains("Merkle root"), "{stdout}");
    assert!(stdout.trim_end().ends_with("PASS"), "{stdout}");

    // The next publication is made by this version: it has proofs; version 1 still has
    // none, and the two compare entry by entry (the same run: every entry kept).
    app.ok(Some(&admin), PUBLISH, json!({ "e": slug, "r": run }))
        .await;
    let got = app
        .ok(None, PROOF, json!({ "e": slug, "p": project }))
        .await;
    assert_eq!(got["event"]["results"]["version"], 2, "{got}");
    assert_eq!(
        got["event"]["results"]["inclusionProof"]["signedTag"], "verdict.publication.v3",
        "{got}"
    );
    let v2 = dir.path().join("v2.json");
    prove(&app, &slug, &project, Some(2), &v2).await;
    let (code, stdout) = verify_proof(&v2, &key);
    assert_eq!(code, Some(0), "{stdout}");
    let again = app
        .cli(&[
            "results",
            "prove",
            "--event",
            &slug,
            "--project",
            &project,
            "--version",
            "1",
        ])
        .await;
    assert_eq!(again.code, Some(1), "{again:?}");
    assert!(
        again.stderr.contains("it has no inclusion proofs"),
        "{again:?}"
    );
    let out = app
        .cli(&["results", "consistency", "--event", &slug, "--from", "1"])
        .await;
    assert_eq!(out.code, Some(0), "{out:?}");
    assert!(
        out.stdout
            .contains("ok    version 1 is a verdict.publication.v1 document (no root)"),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout
            .contains("ok    version 2 keeps all 4 entries of version 1 byte for byte"),
        "{}",
        out.stdout
    );
}

/// A publication made before the salted review commitments (a v2 document, on a database
/// migrated since): its proofs still verify, online and offline, with the entries' plain
/// review hashes; its bundle verifies; the next publication is a v3 one.
async fn proofs_of_a_publication_with_plain_review_hashes_still_verify(app: App) {
    let Old {
        admin,
        tag,
        slug,
        run,
    } = published_as_before(&app, Before::SaltedReviews).await;

    // Served: a v2 proof whose entry holds the plain hashes of the project's reviews.
    let project = format!("p2_{tag}");
    let got = app
        .ok(None, PROOF, json!({ "e": slug, "p": project }))
        .await;
    let proof = &got["event"]["results"]["inclusionProof"];
    assert_eq!(proof["signedTag"], "verdict.publication.v2", "{got}");
    let dir = tempfile::tempdir().expect("tempdir");
    let bundle = dir.path().join("bundle");
    export(&app, &slug, &bundle).await;
    let inputs = std::fs::read_to_string(bundle.join("inputs.json")).expect("inputs.json");
    let input: verdict::calibrate::CalibrationInput =
        serde_json::from_str(&inputs).expect("inputs");
    let entry: Value = serde_json::from_str(proof["entry"].as_str().expect("entry")).expect("json");
    let mut plain: Vec<String> = input
        .reviews
        .iter()
        .filter(|r| r.project == project)
        .map(|r| {
            verdict::crypto::sha256_hex(
                proofs::review_text(&r.judge, &r.project, r.score).as_bytes(),
            )
        })
        .collect();
    plain.sort();
    assert!(!plain.is_empty());
    assert_eq!(entry["reviews"], json!(plain), "{entry}");

    // Offline: the proof file and the bundle verify against the pinned key.
    let key = fingerprint(&app).await;
    let file = dir.path().join("v2.json");
    prove(&app, &slug, &project, None, &file).await;
    let (code, stdout) = verify_proof(&file, &key);
    assert_eq!(code, Some(0), "{stdout}");
    assert!(
        stdout.contains("publication signature (verdict.publication.v2)"),
        "{stdout}"
    );
    let files: Vec<Vec<u8>> = verdict::bundle::FILES
        .iter()
        .map(|f| std::fs::read(bundle.join(f)).expect("bundle file"))
        .collect();
    let report = verdict::bundle::verify_files(&files, None);
    assert!(report.ok(), "{:?}", report.failed);
    assert!(
        report
            .passed
            .contains(&"publication signature (verdict.publication.v2)".to_string()),
        "{:?}",
        report.passed
    );

    // The next publication is made now: v3, salted.
    app.ok(Some(&admin), PUBLISH, json!({ "e": slug, "r": run }))
        .await;
    let got = app
        .ok(None, PROOF, json!({ "e": slug, "p": project }))
        .await;
    assert_eq!(got["event"]["results"]["version"], 2, "{got}");
    let proof = &got["event"]["results"]["inclusionProof"];
    assert_eq!(proof["signedTag"], "verdict.publication.v3", "{got}");
    let entry: Value = serde_json::from_str(proof["entry"].as_str().expect("entry")).expect("json");
    for h in &plain {
        assert!(
            !entry["reviews"]
                .as_array()
                .expect("reviews")
                .contains(&json!(h)),
            "a plain review hash in a v3 entry: {entry}"
        );
    }
    // The same run, so every entry is kept: the v2 one's are compared as v3 spells them.
    let out = app.cli(&["results", "consistency", "--event", &slug]).await;
    assert_eq!(out.code, Some(0), "{out:?}");
    for line in [
        "ok    version 1: 4 entries rebuild its signed root",
        "ok    version 2: 4 entries rebuild its signed root",
        "ok    version 1's entries, rebuilt from its run, are compared with review commitments",
        "ok    version 2 keeps all 4 entries of version 1 byte for byte",
    ] {
        assert!(out.stdout.contains(line), "{line}: {}", out.stdout);
    }
}
