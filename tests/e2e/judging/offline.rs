use super::*;

pub(super) async fn fixture_calibrates_publishes_and_verifies_offline(app: App) {
    let admin = app.site_admin().await;
    import_fixture(&app).await;
    let q = json!({ "e": FIXTURE_SLUG });

    // Nothing is public before publication.
    let before = app
        .ok(
            None,
            "query($e: String!) { event(slug: $e) { results { version } } }",
            q.clone(),
        )
        .await;
    assert_eq!(before["event"]["results"], Value::Null);

    let run = app.ok(Some(&admin), op("RunCalibration"), run_vars()).await;
    let run = &run["runCalibration"];
    assert_eq!(run["engineVersion"], "verdict-calibrate/5");
    assert_eq!(run["inputsHash"].as_str().map(str::len), Some(64));
    assert_eq!(run["resultHash"].as_str().map(str::len), Some(64));
    let projects = run["projects"].as_array().expect("projects");
    assert_eq!(
        projects.len(),
        60,
        "every project appears, ranked or excluded"
    );
    let ranked: Vec<&Value> = projects.iter().filter(|p| p["rank"].is_number()).collect();
    assert!(
        ranked.len() >= 50,
        "most submitted projects are ranked: {}",
        ranked.len()
    );
    for p in &ranked {
        let (lo, r, hi) = (
            p["rankLow"].as_i64().unwrap(),
            p["rank"].as_i64().unwrap(),
            p["rankHigh"].as_i64().unwrap(),
        );
        assert!(lo <= r && r <= hi, "the interval contains the rank: {p}");
    }
    for p in projects.iter().filter(|p| p["rank"].is_null()) {
        assert!(
            p["excluded"].is_string(),
            "an unranked project says why: {p}"
        );
    }
    let withdrawn = projects
        .iter()
        .find(|p| p["project"]["externalId"] == "prj_020")
        .expect("prj_020");
    assert_eq!(withdrawn["excluded"], "not_submitted");
    let run_id = run["id"].as_str().unwrap().to_string();

    // Publish provisionally, then final; nothing after final.
    let p1 = app
        .ok(
            Some(&admin),
            op("PublishResults"),
            json!({ "event": FIXTURE_SLUG, "run": run_id, "final": false }),
        )
        .await;
    assert_eq!(p1["publishResults"]["version"], 1);
    let p2 = app
        .ok(
            Some(&admin),
            op("PublishResults"),
            json!({ "event": FIXTURE_SLUG, "run": run_id, "final": true }),
        )
        .await;
    assert_eq!(p2["publishResults"]["version"], 2);
    let audit_before = app.audit_head().await;
    let p3 = app
        .gql_as(
            &admin,
            op("PublishResults"),
            json!({ "event": FIXTURE_SLUG, "run": run_id, "final": true }),
        )
        .await;
    assert_code(&p3, "CONFLICT");
    assert_eq!(
        app.audit_head().await,
        audit_before,
        "a refused publication writes nothing"
    );

    // The public sees the frozen projection: ranks, no judge, no score.
    let public = app
        .gql(
            "query($e: String!) { event(slug: $e) { results { version final runId resultHash keyFingerprint ranking { rank rankLow rankHigh project { externalId } } } } }",
            q.clone(),
        )
        .await;
    let results = &data(&public)["event"]["results"];
    assert_eq!(results["version"], 2);
    assert_eq!(results["final"], true);
    assert_eq!(results["runId"], run_id.as_str());
    let text = public.to_string();
    assert!(
        !text.contains("jdg_"),
        "no judge identity in public results"
    );
    let key = app
        .ok(
            None,
            "{ signingKey { fingerprint publicKeyPem algorithm } }",
            json!({}),
        )
        .await;
    assert_eq!(results["keyFingerprint"], key["signingKey"]["fingerprint"]);
    let well_known = app.get("/.well-known/verdict-signing-key").await;
    assert_eq!(well_known.status, 200);
    assert_eq!(
        well_known.header("x-signing-key-fingerprint").as_deref(),
        key["signingKey"]["fingerprint"].as_str()
    );

    // Export the bundle and verify it offline; then tamper with every file.
    let dir = tempfile::tempdir().unwrap();
    let bundle = dir.path().join("bundle");
    let b = bundle.to_str().unwrap();
    let out = app
        .cli(&["results", "export", "--event", FIXTURE_SLUG, b])
        .await;
    assert!(out.success(), "export: {out:?}");
    let verify = |path: String| async move {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_verdict"))
            .args(["results", "verify", &path])
            .env_remove("VERDICT_DATABASE_URL")
            .output()
            .expect("run verify");
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
        )
    };
    let (code, stdout) = verify(b.to_string()).await;
    assert_eq!(code, Some(0), "a fresh bundle verifies: {stdout}");
    assert!(stdout.trim_end().ends_with("PASS"));
    let files = [
        "inputs.json",
        "params.json",
        "result.json",
        "run.json",
        "publication.json",
        "public-key.pem",
        "checkpoint.json",
        "audit.json",
    ];
    for (i, f) in files.iter().enumerate() {
        let copy = dir.path().join(format!("tampered-{i}"));
        std::fs::create_dir_all(&copy).unwrap();
        for g in files {
            std::fs::copy(bundle.join(g), copy.join(g)).unwrap();
        }
        let original = std::fs::read_to_string(copy.join(f)).unwrap();
        let tampered = tamper(f, &original);
        assert_ne!(original, tampered, "{f} was not changed");
        std::fs::write(copy.join(f), tampered).unwrap();
        let (code, stdout) = verify(copy.to_str().unwrap().to_string()).await;
        assert_eq!(
            code,
            Some(1),
            "tampering with {f} must fail verification: {stdout}"
        );
        assert!(stdout.contains("FAIL"), "{stdout}");
    }
}

/// A small, plausible edit of one bundle file.
pub(super) fn tamper(file: &str, text: &str) -> String {
    match file {
        // Another byte in the key's base64 body: a different (or invalid) key.
        "public-key.pem" => {
            let body = text.find('\n').map(|n| n + 5).unwrap_or(30);
            let mut bytes = text.as_bytes().to_vec();
            bytes[body] = if bytes[body] == b'A' { b'B' } else { b'A' };
            String::from_utf8(bytes).unwrap()
        }
        "inputs.json" => text.replacen("\"score\":0.", "\"score\":0.0", 1),
        "result.json" => text.replacen("\"rank\":1,", "\"rank\":2,", 1),
        "params.json" => text.replacen("\"folds\":5", "\"folds\":4", 1),
        "run.json" => text.replacen("\"created_at\": \"20", "\"created_at\": \"19", 1),
        "publication.json" => text.replace("\"final\": true", "\"final\": false"),
        "checkpoint.json" => text.replacen("\"seq\": ", "\"seq\": 1", 1),
        "audit.json" => text.replacen("\"actor\": \"", "\"actor\": \"x", 1),
        _ => unreachable!(),
    }
}
