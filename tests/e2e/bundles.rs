//! Result bundles offline: any changed byte fails, the verifier pins the key, and a bundle
//! shows only its own event in full.

use serde_json::{Value, json};

use crate::harness::{App, Backend, judged_fixture};

e2e! {
    result_bundles_fail_on_any_byte_and_show_only_their_event,
}

/// Runs `verdict results verify` on `dir` with extra arguments; (exit code, stdout).
fn verify_cli(dir: &std::path::Path, args: &[&str]) -> (Option<i32>, String) {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_verdict"))
        .args(["results", "verify"])
        .arg(dir)
        .args(args)
        .env_remove("VERDICT_DATABASE_URL")
        .output()
        .expect("run verify");
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}

async fn result_bundles_fail_on_any_byte_and_show_only_their_event(app: App) {
    let admin = app.site_admin().await;
    let tag = crate::harness::unique();
    let slug = format!("csv-{tag}");
    app.ok(
        Some(&admin),
        "mutation($f: JSON!) { importEvent(fixture: $f) { inserted } }",
        json!({ "f": judged_fixture(&tag) }),
    )
    .await;
    let run = app
        .ok(
            Some(&admin),
            "mutation($e: String!) { runCalibration(event: $e, seed: 7, bootstrap: 50) { id } }",
            json!({ "e": slug }),
        )
        .await;
    // Another event's activity lands in the audit range the bundle must carry.
    let s = app.scenario().await;
    let secret = format!("Secret draft {tag}");
    app.create_project(&s.participant_a, &s.event_a, &secret, &s.track_a)
        .await;
    app.ok(
        Some(&admin),
        "mutation($e: String!, $r: ID!) { publishResults(event: $e, run: $r, final: true) { version } }",
        json!({ "e": slug, "r": run["runCalibration"]["id"] }),
    )
    .await;
    let dir = tempfile::tempdir().expect("tempdir");
    let bundle = dir.path().join("bundle");
    let out = app
        .cli(&[
            "results",
            "export",
            "--event",
            &slug,
            bundle.to_str().expect("utf-8"),
        ])
        .await;
    assert!(out.success(), "export: {out:?}");
    let files: Vec<Vec<u8>> = verdict::bundle::FILES
        .iter()
        .map(|f| std::fs::read(bundle.join(f)).expect("bundle file"))
        .collect();

    // Only the bundle's own event shows in full.
    for (name, bytes) in verdict::bundle::FILES.iter().zip(&files) {
        let text = String::from_utf8_lossy(bytes);
        assert!(
            !text.contains(&secret),
            "{name} leaks another event's draft title"
        );
    }
    let rows: Vec<Value> = serde_json::from_slice(&files[7]).expect("audit.json");
    assert!(
        rows.iter()
            .any(|r| r["event"] != json!(format!("evt_{tag}"))),
        "the audit range crosses another event's rows"
    );

    // Unpinned, the verifier passes and says whose key it trusted; pinned to the
    // deployment's published key it passes; pinned to another key it fails.
    let fingerprint = app
        .get("/.well-known/verdict-signing-key")
        .await
        .header("x-signing-key-fingerprint")
        .expect("fingerprint header");
    let (code, stdout) = verify_cli(&bundle, &[]);
    assert_eq!(code, Some(0), "{stdout}");
    assert!(
        stdout.contains(&format!("pin it with --key {fingerprint}")),
        "{stdout}"
    );
    let (code, stdout) = verify_cli(&bundle, &["--key", &fingerprint]);
    assert_eq!(code, Some(0), "{stdout}");
    assert!(
        stdout.contains(&format!("pinned: {fingerprint}")),
        "{stdout}"
    );
    let pem = bundle.join("public-key.pem");
    let (code, _) = verify_cli(&bundle, &["--public-key", pem.to_str().expect("utf-8")]);
    assert_eq!(code, Some(0));
    let (code, stdout) = verify_cli(&bundle, &["--key", &"0".repeat(64)]);
    assert_eq!(
        code,
        Some(1),
        "a bundle signed by another key fails: {stdout}"
    );

    // The publication's audit_seq is not signed itself: pointing it past the checkpoint
    // (where the check used to be skipped) fails; so does a whitespace edit.
    let publication = String::from_utf8(files[4].clone()).expect("utf-8");
    let mut p: Value = serde_json::from_str(&publication).expect("publication.json");
    p["audit_seq"] = json!(999_999_999);
    let moved = serde_json::to_string_pretty(&p).expect("json") + "\n";
    let mut tampered = files.clone();
    tampered[4] = moved.into_bytes();
    assert!(!verdict::bundle::verify_files(&tampered, None).ok());
    let mut spaced = files.clone();
    spaced[3].insert(1, b' ');
    assert!(!verdict::bundle::verify_files(&spaced, None).ok());

    // Every single-byte change to every file fails (offline, so once per run).
    assert!(verdict::bundle::verify_files(&files, None).ok());
    if app.backend() == Backend::Sqlite {
        for (f, name) in verdict::bundle::FILES.iter().enumerate() {
            for i in 0..files[f].len() {
                let mut changed = files.clone();
                changed[f][i] ^= 0x01;
                assert!(
                    !verdict::bundle::verify_files(&changed, None).ok(),
                    "flipping byte {i} of {name} still verifies"
                );
            }
        }
    }
}
