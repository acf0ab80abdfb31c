//! Cases from the outside review (issue #7) that each failed before their fix: invisible
//! formatting in single-line text, and CSV cells that were mangled or slipped a formula
//! through.

use serde_json::{Value, json};

use crate::harness::{App, Backend, assert_bad_input};

e2e! {
    invisible_formatting_is_refused_in_single_line_text,
    csv_keeps_numbers_and_neutralizes_disguised_formulas,
    result_bundles_fail_on_any_byte_and_show_only_their_event,
    log_in_throttle_holds_under_concurrent_guesses ["--login-attempts", "10"],
    guessers_cannot_lock_the_owner_out ["--login-attempts", "3"],
    revoking_a_role_takes_what_it_granted,
    every_demo_account_has_something_to_do ["--demo"],
    refusals_at_the_edge_are_graphql_errors ["--rate-limit-per-second", "1", "--rate-limit-burst", "5"],
    graphql_response_media_type_is_honoured,
    forwarded_addresses_are_believed_only_from_trusted_proxies ["--login-attempts", "2", "--trusted-proxies", "127.0.0.1"],
    untrusted_peers_cannot_pick_their_address ["--login-attempts", "2"],
    teams_are_frozen_after_the_deadline,
}

async fn invisible_formatting_is_refused_in_single_line_text(app: App) {
    let s = app.scenario().await;
    let audit = app.audit_head().await;
    let create =
        "mutation($e: String!, $i: ProjectInput!) { createProject(event: $e, input: $i) { id } }";
    let update =
        "mutation($id: ID!, $i: ProjectInput!) { updateProject(id: $id, input: $i) { id } }";
    // A right-to-left override makes "Good project<RLO>gnp.exe" read as "Good projectexe.png".
    let r = app
        .gql_as(
            &s.participant_a,
            create,
            json!({ "e": s.event_a, "i": { "title": "Good project\u{202E}gnp.exe", "track": s.track_a } }),
        )
        .await;
    assert_bad_input(&r, &["title"]);
    let r = app
        .gql_as(
            &s.participant_a,
            update,
            json!({ "id": s.draft, "i": { "tagline": "\u{2067}isolated\u{2069}" } }),
        )
        .await;
    assert_bad_input(&r, &["tagline"]);
    let r = app
        .gql_as(
            &s.organizer_a,
            "mutation($e: String!, $n: String!) { createTrack(event: $e, name: $n) { id } }",
            json!({ "e": s.event_a, "n": "Track\u{200B}A1" }),
        )
        .await;
    assert_bad_input(&r, &["name"]);
    let r = app
        .gql(
            "mutation($e: String!, $p: String!, $n: String!) { signUp(email: $e, password: $p, displayName: $n) { token } }",
            json!({ "e": format!("rlo-{}@example.org", crate::harness::unique()), "p": crate::harness::PASSWORD, "n": "Admin\u{202E}" }),
        )
        .await;
    assert_bad_input(&r, &["displayName"]);
    assert_eq!(app.audit_head().await, audit, "refusals write nothing");
    // Joiners are text, not formatting: an emoji family in a title is kept.
    app.ok(
        Some(&s.participant_a),
        update,
        json!({ "id": s.draft, "i": { "title": "Family \u{1F468}\u{200D}\u{1F469}" } }),
    )
    .await;
}

/// A small judged event: three judges of different severity score four projects whose
/// titles and team names try to smuggle formulas past the neutralization.
fn judged_fixture(tag: &str) -> Value {
    let projects = [
        ("p1", "\u{FF1D}1+1"),
        ("p2", "|=cmd|' /C calc'!A0"),
        ("p3", "-2+3"),
        ("p4", "Plain title"),
    ];
    let judges = ["j1", "j2", "j3"];
    let mut reviews = vec![];
    for (j, severity) in judges.iter().zip([0i64, -1, 1]) {
        for (i, (p, _)) in projects.iter().enumerate() {
            reviews.push(json!({
                "judge": format!("{j}_{tag}"),
                "project": format!("{p}_{tag}"),
                "scores": { "impact": (1 + i as i64 + severity).clamp(1, 5) },
                "comment": " =HYPERLINK(\"http://x\")",
                "submitted_at": "2026-01-12T10:00:00Z"
            }));
        }
    }
    json!({
        "format": "verdict.event.v1",
        "event": {
            "external_id": format!("evt_{tag}"), "slug": format!("csv-{tag}"), "name": "CSV",
            "submissions_open": "2026-01-10T09:00:00Z", "submissions_close": "2026-01-11T09:00:00Z",
            "judging_open": "2026-01-12T09:00:00Z", "judging_close": "2026-01-13T09:00:00Z",
            "voting_open": null, "voting_close": null, "reviews_per_project": 3, "max_team_size": 3
        },
        "tracks": [ { "external_id": format!("trk_{tag}"), "name": "Only track" } ],
        "people": [
            { "external_id": format!("o_{tag}"), "email": format!("csv-o-{tag}@example.org"), "display_name": "Org" },
            { "external_id": format!("u1_{tag}"), "email": format!("csv-1-{tag}@example.org"), "display_name": "J1" },
            { "external_id": format!("u2_{tag}"), "email": format!("csv-2-{tag}@example.org"), "display_name": "J2" },
            { "external_id": format!("u3_{tag}"), "email": format!("csv-3-{tag}@example.org"), "display_name": "J3" },
            { "external_id": format!("u4_{tag}"), "email": format!("csv-4-{tag}@example.org"), "display_name": "Builder" }
        ],
        "organizers": [ format!("o_{tag}") ],
        "judges": judges.iter().enumerate().map(|(i, j)| json!({
            "external_id": format!("{j}_{tag}"), "person": format!("u{}_{tag}", i + 1), "tracks": []
        })).collect::<Vec<_>>(),
        "teams": projects.iter().map(|(p, _)| json!({
            "external_id": format!("t{p}_{tag}"), "name": "@SUM(A1)", "members": if *p == "p1" { vec![format!("u4_{tag}")] } else { vec![] }
        })).collect::<Vec<_>>(),
        "projects": projects.iter().map(|(p, title)| json!({
            "external_id": format!("{p}_{tag}"), "team": format!("t{p}_{tag}"), "track": format!("trk_{tag}"),
            "title": title, "tagline": " +tagline", "summary": "", "repo_url": "", "demo_url": "",
            "tags": [], "status": "submitted", "submitted_at": "2026-01-11T08:00:00Z"
        })).collect::<Vec<_>>(),
        "criteria": [ { "key": "impact", "name": "Impact", "weight": 1.0, "min": 1, "max": 5, "position": 1 } ],
        "reviews": reviews
    })
}

/// Splits CSV text into cells (the exports quote cells with commas, quotes or newlines).
fn cells(csv: &str) -> Vec<Vec<String>> {
    let mut rdr = csv::ReaderBuilder::new()
        .has_headers(false)
        .from_reader(csv.as_bytes());
    rdr.records()
        .map(|r| r.expect("valid CSV").iter().map(str::to_owned).collect())
        .collect()
}

async fn csv_keeps_numbers_and_neutralizes_disguised_formulas(app: App) {
    let admin = app.site_admin().await;
    let tag = crate::harness::unique();
    let slug = format!("csv-{tag}");
    let imported = app
        .ok(
            Some(&admin),
            "mutation($f: JSON!) { importEvent(fixture: $f) { inserted } }",
            json!({ "f": judged_fixture(&tag) }),
        )
        .await;
    assert!(imported["importEvent"]["inserted"].as_i64().unwrap_or(0) > 0);
    app.ok(
        Some(&admin),
        "mutation($e: String!) { runCalibration(event: $e, seed: 7, bootstrap: 50) { id } }",
        json!({ "e": slug }),
    )
    .await;
    let export = |kind: &'static str| {
        let app = &app;
        let admin = &admin;
        let slug = &slug;
        async move {
            let d = app
                .ok(
                    Some(admin),
                    "query($e: String!, $k: ExportKind!) { event(slug: $e) { export(kind: $k) } }",
                    json!({ "e": slug, "k": kind }),
                )
                .await;
            cells(d["event"]["export"].as_str().expect("csv text"))
        }
    };

    // Numbers stay numbers: the lenient judge's negative offset is `-1...`, not `'-1...`.
    let judges = export("JUDGES").await;
    let offset = judges[0]
        .iter()
        .position(|h| h == "offset")
        .expect("offset column");
    let offsets: Vec<&str> = judges[1..].iter().map(|r| r[offset].as_str()).collect();
    assert!(
        offsets.iter().any(|o| o.starts_with('-')),
        "a judge is more severe than the others: {offsets:?}"
    );
    for o in &offsets {
        assert!(o.parse::<f64>().is_ok(), "offset {o:?} is a number");
    }
    let results = export("RESULTS").await;
    let quality = results[0]
        .iter()
        .position(|h| h == "quality")
        .expect("quality column");
    let qualities: Vec<&str> = results[1..].iter().map(|r| r[quality].as_str()).collect();
    for q in &qualities {
        assert!(q.parse::<f64>().is_ok(), "quality {q:?} is a number");
    }

    // Text that a spreadsheet would run is neutralized, however it is disguised.
    let projects = export("PROJECTS").await;
    let title = projects[0]
        .iter()
        .position(|h| h == "title")
        .expect("title column");
    let tagline = projects[0]
        .iter()
        .position(|h| h == "tagline")
        .expect("tagline column");
    for row in &projects[1..] {
        if row[title] != "Plain title" {
            assert!(
                row[title].starts_with('\''),
                "title {:?} is neutralized",
                row[title]
            );
        } else {
            assert_eq!(row[title], "Plain title");
        }
        assert!(row[tagline].starts_with('\''), "tagline {:?}", row[tagline]);
    }
    let scores = export("SCORES").await;
    let comment = scores[0]
        .iter()
        .position(|h| h == "comment")
        .expect("comment column");
    for row in &scores[1..] {
        assert!(row[comment].starts_with('\''), "comment {:?}", row[comment]);
    }
    let teams = export("TEAMS").await;
    let name = teams[0]
        .iter()
        .position(|h| h == "name")
        .expect("name column");
    for row in &teams[1..] {
        assert_eq!(row[name], "'@SUM(A1)");
    }
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

const LOG_IN: &str =
    "mutation($e: String!, $p: String!) { logIn(email: $e, password: $p) { token } }";

/// A client whose requests come from `ip` (any 127.0.0.0/8 address is this machine).
fn client_from(ip: &str) -> reqwest::Client {
    reqwest::Client::builder()
        .local_address(ip.parse::<std::net::IpAddr>().expect("an IP address"))
        .build()
        .expect("http client")
}

/// Logs in from `ip`; the error code, or None on success.
async fn log_in_from(app: &App, ip: &str, email: &str, password: &str) -> Option<String> {
    let r: Value = client_from(ip)
        .post(app.url("/graphql"))
        .json(&json!({ "query": LOG_IN, "variables": { "e": email, "p": password } }))
        .send()
        .await
        .expect("request")
        .json()
        .await
        .expect("json");
    match crate::harness::error_code(&r) {
        Some(code) => Some(code),
        None => {
            assert!(r["data"]["logIn"]["token"].is_string(), "{r}");
            None
        }
    }
}

async fn log_in_throttle_holds_under_concurrent_guesses(app: App) {
    let email = format!("victim-{}@example.org", crate::harness::unique());
    app.sign_up(&email).await;
    let guesses = (0..100).map(|i| {
        let app = &app;
        let email = &email;
        async move { log_in_from(app, "127.0.0.1", email, &format!("wrong guess {i}")).await }
    });
    let codes = futures_util::future::join_all(guesses).await;
    let count = |c: &str| codes.iter().filter(|x| x.as_deref() == Some(c)).count();
    assert_eq!(
        (count("UNAUTHENTICATED"), count("RATE_LIMITED")),
        (10, 90),
        "exactly the limit of passwords is checked, the rest refused, nothing else: {codes:?}"
    );
    // That address is done with this account for the window; the owner elsewhere is not.
    assert_eq!(
        log_in_from(&app, "127.0.0.1", &email, crate::harness::PASSWORD)
            .await
            .as_deref(),
        Some("RATE_LIMITED")
    );
    assert_eq!(
        log_in_from(&app, "127.0.0.2", &email, crate::harness::PASSWORD).await,
        None
    );
}

async fn guessers_cannot_lock_the_owner_out(app: App) {
    let email = format!("owner-{}@example.org", crate::harness::unique());
    app.sign_up(&email).await;
    let password = crate::harness::PASSWORD;
    // The owner has logged in from home before.
    assert_eq!(log_in_from(&app, "127.0.0.2", &email, password).await, None);
    // Guessers from ten addresses spend the account's ceiling (10 x 3 attempts).
    for n in 10..20 {
        for i in 0..3 {
            let ip = format!("127.0.1.{n}");
            assert_eq!(
                log_in_from(&app, &ip, &email, &format!("guess {i}"))
                    .await
                    .as_deref(),
                Some("UNAUTHENTICATED")
            );
        }
    }
    // A new address is now refused even with the right password: guessing is capped ...
    assert_eq!(
        log_in_from(&app, "127.0.1.99", &email, password)
            .await
            .as_deref(),
        Some("RATE_LIMITED")
    );
    // ... but the owner, at an address they used before, still gets in.
    assert_eq!(log_in_from(&app, "127.0.0.2", &email, password).await, None);
    // One address spraying many accounts is stopped at five times the per-account limit.
    let mut codes = vec![];
    for n in 0..6 {
        let other = format!("spray-{n}-{}@example.org", crate::harness::unique());
        for i in 0..3 {
            codes.push(log_in_from(&app, "127.0.2.1", &other, &format!("guess {i}")).await);
        }
    }
    let limited = codes
        .iter()
        .filter(|c| c.as_deref() == Some("RATE_LIMITED"))
        .count();
    assert_eq!(limited, 3, "15 of 18 attempts are checked: {codes:?}");
}

const REVOKE: &str = "mutation($ev: String!, $e: String!, $r: Role!) { revokeRole(event: $ev, email: $e, role: $r) }";

async fn revoking_a_role_takes_what_it_granted(app: App) {
    let s = app.scenario().await;
    // A judge with an unscored assignment: revoking used to fail with INTERNAL (a foreign
    // key); now the assignment goes with the role.
    let email = format!("judge2-{}@example.org", crate::harness::unique());
    let judge = app.sign_up(&email).await;
    let membership = app.grant(&s.organizer_a, &s.event_a, &email, "JUDGE").await;
    app.ok(
        Some(&s.organizer_a),
        "mutation($e: String!, $j: ID!, $p: ID!) { assignJudge(event: $e, judge: $j, project: $p) { id } }",
        json!({ "e": s.event_a, "j": membership, "p": s.submitted }),
    )
    .await;
    let r = app
        .ok(
            Some(&s.organizer_a),
            REVOKE,
            json!({ "ev": s.event_a, "e": email, "r": "JUDGE" }),
        )
        .await;
    assert_eq!(r["revokeRole"], true);
    let queue = app
        .ok(
            Some(&judge),
            "query($e: String!) { event(slug: $e) { myAssignments { id } } }",
            json!({ "e": s.event_a }),
        )
        .await;
    assert_eq!(queue["event"]["myAssignments"], json!([]));
    let all = app
        .ok(
            Some(&s.organizer_a),
            "query($e: String!) { event(slug: $e) { assignments(first: 100) { totalCount } } }",
            json!({ "e": s.event_a }),
        )
        .await;
    assert_eq!(all["event"]["assignments"]["totalCount"], 0);

    // A revoked participant leaves their team and loses write access to its project.
    app.ok(
        Some(&s.organizer_a),
        REVOKE,
        json!({ "ev": s.event_a, "e": s.emails.participant_a, "r": "PARTICIPANT" }),
    )
    .await;
    let r = app
        .gql_as(
            &s.participant_a,
            "mutation($id: ID!) { updateProject(id: $id, input: { title: \"Still mine?\" }) { id } }",
            json!({ "id": s.draft }),
        )
        .await;
    let code = crate::harness::error_code(&r);
    assert!(
        matches!(code.as_deref(), Some("NOT_FOUND" | "FORBIDDEN")),
        "a revoked participant cannot edit the team's project: {r}"
    );
    let team = app
        .ok(
            Some(&s.participant_a),
            "query($e: String!) { event(slug: $e) { myTeam { id } } }",
            json!({ "e": s.event_a }),
        )
        .await;
    assert!(team["event"]["myTeam"].is_null(), "{team}");

    // A judge who has saved reviews keeps the role: reviews are the record.
    let admin = app.site_admin().await;
    let tag = crate::harness::unique();
    app.ok(
        Some(&admin),
        "mutation($f: JSON!) { importEvent(fixture: $f) { inserted } }",
        json!({ "f": judged_fixture(&tag) }),
    )
    .await;
    let head = app.audit_head().await;
    let r = app
        .gql_as(
            &admin,
            REVOKE,
            json!({ "ev": format!("csv-{tag}"), "e": format!("csv-1-{tag}@example.org"), "r": "JUDGE" }),
        )
        .await;
    crate::harness::assert_code(&r, "CONFLICT");
    assert_eq!(app.audit_head().await, head, "a refusal writes nothing");
}

/// The operator's `verdict user reset-password` prints a one-time password.
async fn reset_password(app: &App, email: &str) -> String {
    let out = app.cli(&["user", "reset-password", "--email", email]).await;
    assert!(out.success(), "{out:?}");
    out.stdout.trim().to_owned()
}

async fn every_demo_account_has_something_to_do(app: App) {
    // The operator gets everyone back in without making anyone an admin; a reset ends
    // the account's sessions.
    let judge_password = reset_password(&app, "judge@demo.verdict.local").await;
    let judge = app
        .log_in("judge@demo.verdict.local", &judge_password)
        .await;
    let again = reset_password(&app, "judge@demo.verdict.local").await;
    assert_ne!(again, judge_password);
    let stale = app
        .gql_resp(Some(&judge), "{ viewer { user { id } } }", json!({}))
        .await;
    assert_eq!(stale.status, 401, "sessions end with a reset");
    let judge = app.log_in("judge@demo.verdict.local", &again).await;
    let me = app
        .ok(
            Some(&judge),
            "{ viewer { user { isSiteAdmin } } }",
            json!({}),
        )
        .await;
    assert_eq!(me["viewer"]["user"]["isSiteAdmin"], false);
    let out = app
        .cli(&[
            "user",
            "reset-password",
            "--email",
            "nobody@demo.verdict.local",
        ])
        .await;
    assert!(!out.success(), "an unknown account is refused: {out:?}");

    // The judge has a queue on the event whose judging is open, and can score it.
    let queue = app
        .ok(
            Some(&judge),
            "{ event(slug: \"demo-judging\") { myAssignments { id status } rubric { key min max } } }",
            json!({}),
        )
        .await;
    let assignments = queue["event"]["myAssignments"].as_array().expect("a list");
    assert!(
        assignments.len() >= 3,
        "the demo judge has a queue: {queue}"
    );
    let scores: Vec<Value> = queue["event"]["rubric"]
        .as_array()
        .expect("rubric")
        .iter()
        .map(|c| json!({ "criterion": c["key"], "value": c["max"] }))
        .collect();
    app.ok(
        Some(&judge),
        "mutation($a: ID!, $s: [ScoreInput!]!) { saveReview(assignment: $a, scores: $s, submit: true) { submitted } }",
        json!({ "a": assignments[0]["id"], "s": scores }),
    )
    .await;

    // The participant's team has a draft to submit while submissions are open.
    let password = reset_password(&app, "participant@demo.verdict.local").await;
    let participant = app
        .log_in("participant@demo.verdict.local", &password)
        .await;
    let team = app
        .ok(
            Some(&participant),
            "{ event(slug: \"demo-hack\") { myTeam { projects { id status } } } }",
            json!({}),
        )
        .await;
    let draft = team["event"]["myTeam"]["projects"]
        .as_array()
        .and_then(|p| p.iter().find(|p| p["status"] == "DRAFT"))
        .cloned()
        .unwrap_or_else(|| panic!("the participant's team has a draft: {team}"));
    app.submit_project(&participant, draft["id"].as_str().expect("id"))
        .await;

    // The organizer watches judging progress on the live event and sees the score land.
    let password = reset_password(&app, "organizer@demo.verdict.local").await;
    let organizer = app.log_in("organizer@demo.verdict.local", &password).await;
    let progress = app
        .ok(
            Some(&organizer),
            "{ event(slug: \"demo-judging\") { judgingProgress { done pending } } }",
            json!({}),
        )
        .await;
    let p = &progress["event"]["judgingProgress"];
    assert!(p["done"].as_i64().unwrap_or(0) >= 7, "{progress}");
    assert!(p["pending"].as_i64().unwrap_or(0) >= 2, "{progress}");
}

async fn refusals_at_the_edge_are_graphql_errors(app: App) {
    // 413: a body over --max-body is a GraphQL error naming the limit, not plain text.
    let big = json!({ "query": format!("{{ __typename }} # {}", "x".repeat(70 * 1024)) });
    let r = app.post_raw(big.to_string(), "application/json", &[]).await;
    assert_eq!(r.status, 413);
    let body = r.json();
    assert_eq!(
        crate::harness::error_code(&body).as_deref(),
        Some("BAD_USER_INPUT"),
        "{body}"
    );
    // 429: the request rate limit answers RATE_LIMITED with retryAfter (and Retry-After).
    let mut limited = None;
    for _ in 0..20 {
        let r = app.gql_resp(None, "{ __typename }", json!({})).await;
        if r.status == 429 {
            limited = Some(r);
            break;
        }
    }
    let r = limited.expect("a burst beyond the limit is refused");
    let body = r.json();
    assert_eq!(
        crate::harness::error_code(&body).as_deref(),
        Some("RATE_LIMITED"),
        "{body}"
    );
    assert!(
        body.pointer("/errors/0/extensions/retryAfter")
            .and_then(Value::as_u64)
            .is_some_and(|s| s >= 1),
        "{body}"
    );
    assert!(r.header("retry-after").is_some());
}

async fn graphql_response_media_type_is_honoured(app: App) {
    let accept = [("accept", "application/graphql-response+json")];
    let ok = app
        .post_raw(
            json!({ "query": "{ __typename }" }).to_string(),
            "application/json",
            &accept,
        )
        .await;
    assert_eq!(ok.status, 200);
    assert!(
        ok.header("content-type")
            .is_some_and(|t| t.starts_with("application/graphql-response+json")),
        "{:?}",
        ok.header("content-type")
    );
    // A document that does not parse is a 400 for clients that accept the new media type ...
    let bad = app
        .post_raw(
            json!({ "query": "{ __typename" }).to_string(),
            "application/json",
            &accept,
        )
        .await;
    assert_eq!(bad.status, 400);
    assert_eq!(
        crate::harness::error_code(&bad.json()).as_deref(),
        Some("BAD_USER_INPUT")
    );
    // ... and stays a 200 application/json for the others.
    let legacy = app
        .post_raw(
            json!({ "query": "{ __typename" }).to_string(),
            "application/json",
            &[],
        )
        .await;
    assert_eq!(legacy.status, 200);
    assert_eq!(
        legacy.header("content-type").as_deref(),
        Some("application/json")
    );
}

/// Logs in with `X-Forwarded-For: xff`; the error code, or None on success.
async fn log_in_forwarded(app: &App, xff: &str, email: &str, password: &str) -> Option<String> {
    let body = json!({ "query": LOG_IN, "variables": { "e": email, "p": password } });
    let r = app
        .post_raw(
            body.to_string(),
            "application/json",
            &[("x-forwarded-for", xff)],
        )
        .await;
    crate::harness::error_code(&r.json())
}

async fn forwarded_addresses_are_believed_only_from_trusted_proxies(app: App) {
    // Behind a trusted proxy, clients are told apart by the address the proxy saw: a
    // guesser at one address does not stop the owner at another.
    let email = format!("behind-proxy-{}@example.org", crate::harness::unique());
    app.sign_up(&email).await;
    for i in 0..2 {
        log_in_forwarded(&app, "198.51.100.7", &email, &format!("wrong {i}")).await;
    }
    assert_eq!(
        log_in_forwarded(&app, "198.51.100.7", &email, crate::harness::PASSWORD)
            .await
            .as_deref(),
        Some("RATE_LIMITED")
    );
    assert_eq!(
        log_in_forwarded(&app, "203.0.113.20", &email, crate::harness::PASSWORD).await,
        None
    );
    // A client that prepends its own hop does not escape: the rightmost untrusted hop counts.
    assert_eq!(
        log_in_forwarded(
            &app,
            "192.0.2.1, 198.51.100.7",
            &email,
            crate::harness::PASSWORD
        )
        .await
        .as_deref(),
        Some("RATE_LIMITED")
    );
}

async fn untrusted_peers_cannot_pick_their_address(app: App) {
    // Without --trusted-proxies the header is ignored: rotating it does not reset the count.
    let email = format!("rotating-{}@example.org", crate::harness::unique());
    app.sign_up(&email).await;
    let mut codes = vec![];
    for i in 0..5 {
        codes.push(log_in_forwarded(&app, &format!("198.51.100.{i}"), &email, "wrong guess").await);
    }
    assert_eq!(
        codes
            .iter()
            .filter(|c| c.as_deref() == Some("RATE_LIMITED"))
            .count(),
        3,
        "{codes:?}"
    );
}

async fn teams_are_frozen_after_the_deadline(app: App) {
    // An imported event whose submission deadline has passed.
    let admin = app.site_admin().await;
    let tag = crate::harness::unique();
    app.ok(
        Some(&admin),
        "mutation($f: JSON!) { importEvent(fixture: $f) { inserted } }",
        json!({ "f": crate::harness::tiny_fixture(&tag) }),
    )
    .await;
    let slug = format!("tiny-{tag}");
    let teams = app
        .ok(
            Some(&admin),
            "query($e: String!) { event(slug: $e) { teams(first: 10) { edges { node { inviteCode } } } } }",
            json!({ "e": slug }),
        )
        .await;
    let code = teams["event"]["teams"]["edges"][0]["node"]["inviteCode"]
        .as_str()
        .expect("the organizer reads the invite code")
        .to_owned();
    let late = app.sign_up(&format!("late-{tag}@example.org")).await;
    app.ok(
        Some(&admin),
        "mutation($e: String!, $m: String!) { grantRole(event: $e, email: $m, role: PARTICIPANT) { id } }",
        json!({ "e": slug, "m": format!("late-{tag}@example.org") }),
    )
    .await;
    let head = app.audit_head().await;
    let r = app
        .gql_as(
            &late,
            "mutation($c: String!) { joinTeam(inviteCode: $c) { id } }",
            json!({ "c": code }),
        )
        .await;
    crate::harness::assert_code(&r, "WINDOW_CLOSED");
    assert_eq!(app.audit_head().await, head, "a refusal writes nothing");
}
