//! Participation records (issue 12): a member's signed statement of their own
//! participation lists exactly what they judged or built and nothing else (no scores, no
//! comments, nobody else); any changed byte fails online (`verifyRecord`) and offline
//! (`verdict record verify`); non-members are refused and a refusal writes nothing.

use serde_json::{Value, json};

use crate::harness::{App, assert_bad_input, assert_code, judged_fixture, str_at, unique};

e2e! {
    records_state_what_a_member_judged_or_built_and_nothing_else,
    records_fail_on_any_changed_byte_online_and_offline,
}

const ISSUE: &str = "mutation($e: String!) { participationRecord(event: $e) }";
const VERIFY: &str = "mutation($d: String!) { verifyRecord(document: $d) }";

/// Imports the judged fixture (three judges who reviewed four projects, a builder on the
/// first project's team); its slug.
async fn judged_event(app: &App, admin: &str, tag: &str) -> String {
    app.ok(
        Some(admin),
        "mutation($f: JSON!) { importEvent(fixture: $f) { inserted } }",
        json!({ "f": judged_fixture(tag) }),
    )
    .await;
    format!("csv-{tag}")
}

async fn issue(app: &App, token: &str, event: &str) -> String {
    let d = app.ok(Some(token), ISSUE, json!({ "e": event })).await;
    d["participationRecord"]
        .as_str()
        .unwrap_or_else(|| panic!("no document: {d}"))
        .to_string()
}

async fn verify(app: &App, document: &str) -> bool {
    let d = app.ok(None, VERIFY, json!({ "d": document })).await;
    d["verifyRecord"]
        .as_bool()
        .unwrap_or_else(|| panic!("not a boolean: {d}"))
}

fn titles(record: &Value, list: &str) -> Vec<(String, String)> {
    record["record"][list]
        .as_array()
        .unwrap_or_else(|| panic!("no {list}: {record}"))
        .iter()
        .map(|p| (str_at(p, "/external_id"), str_at(p, "/title")))
        .collect()
}

async fn records_state_what_a_member_judged_or_built_and_nothing_else(app: App) {
    let admin = app.site_admin().await;
    let tag = unique();
    let event = judged_event(&app, &admin, &tag).await;
    let judge = app.mint_token(&format!("csv-1-{tag}@example.org")).await;
    let builder = app.mint_token(&format!("csv-4-{tag}@example.org")).await;
    let fingerprint = app
        .get("/.well-known/verdict-signing-key")
        .await
        .header("x-signing-key-fingerprint")
        .expect("the deployment's fingerprint");

    // The judge: every project with a submitted review of theirs, by title; no scores.
    let head = app.audit_head().await;
    let text = issue(&app, &judge, &event).await;
    assert_eq!(
        app.audit_head().await,
        head + 1,
        "one audit entry per record"
    );
    let doc: Value = serde_json::from_str(&text).expect("a JSON document");
    assert_eq!(doc["format"], "verdict.participation.v1");
    let r = &doc["record"];
    assert_eq!(r["event"]["slug"], event.as_str());
    assert_eq!(r["event"]["external_id"], format!("evt_{tag}").as_str());
    assert_eq!(r["person"]["display_name"], "J1");
    assert_eq!(r["roles"], json!(["judge"]));
    assert_eq!(r["key_fingerprint"], fingerprint.as_str());
    assert!(r["issued_at"].as_str().is_some_and(|t| t.ends_with('Z')));
    let mut judged: Vec<String> = titles(&doc, "judged").into_iter().map(|p| p.0).collect();
    judged.sort();
    let all: Vec<String> = ["p1", "p2", "p3", "p4"]
        .iter()
        .map(|p| format!("{p}_{tag}"))
        .collect();
    assert_eq!(judged, all, "the four projects J1 reviewed");
    assert_eq!(titles(&doc, "built"), vec![]);
    // No scores, no comments, nobody else (the other judges, the builder, the organizer).
    for absent in [
        "impact",
        "score",
        "HYPERLINK",
        "comment",
        "csv-2-",
        "csv-3-",
        "csv-4-",
        "csv-o-",
        "\"J2\"",
        "Builder",
    ] {
        assert!(
            !text.contains(absent),
            "the judge's record mentions {absent:?}: {text}"
        );
    }

    // The builder: their team's submitted project, nothing judged.
    let text = issue(&app, &builder, &event).await;
    let doc: Value = serde_json::from_str(&text).expect("a JSON document");
    assert_eq!(doc["record"]["roles"], json!(["participant"]));
    assert_eq!(doc["record"]["person"]["display_name"], "Builder");
    assert_eq!(
        titles(&doc, "built"),
        vec![(format!("p1_{tag}"), "\u{FF1D}1+1".to_string())]
    );
    assert_eq!(titles(&doc, "judged"), vec![]);
    for absent in ["impact", "score", "HYPERLINK", "csv-1-", "\"J1\""] {
        assert!(
            !text.contains(absent),
            "the builder's record mentions {absent:?}"
        );
    }
    assert!(verify(&app, &text).await);

    // A participant who signed up: the submitted project, never the draft.
    let s = app.scenario().await;
    let text = issue(&app, &s.participant_a, &s.event_a).await;
    let doc: Value = serde_json::from_str(&text).expect("a JSON document");
    let built: Vec<String> = titles(&doc, "built").into_iter().map(|p| p.1).collect();
    assert_eq!(built, vec!["Submitted project".to_string()]);
    assert!(!text.contains("Draft project"));
    assert!(verify(&app, &text).await);

    // The refused: not a member (a site admin who took no part, the other event's
    // organizer), anonymous, an unknown event. None writes anything.
    let head = app.audit_head().await;
    for (token, e, code) in [
        (Some(admin.as_str()), event.as_str(), "FORBIDDEN"),
        (
            Some(s.organizer_b.as_str()),
            s.event_a.as_str(),
            "FORBIDDEN",
        ),
        (Some(s.judge_a.as_str()), s.event_b.as_str(), "FORBIDDEN"),
        (None, event.as_str(), "UNAUTHENTICATED"),
        (Some(judge.as_str()), "no-such-event", "NOT_FOUND"),
    ] {
        let r = app.gql_opt(token, ISSUE, json!({ "e": e })).await;
        assert_code(&r, code);
    }
    assert_eq!(app.audit_head().await, head, "refusals write nothing");

    // The audit entry names the record, not its content.
    let log = crate::audit::audit_log(&app, &admin, &event).await;
    let issued: Vec<&Value> = log
        .iter()
        .filter(|n| n["action"] == "record.issued")
        .collect();
    assert_eq!(issued.len(), 2, "the judge's and the builder's");
    for n in issued {
        let payload = n["payload"].to_string();
        assert!(
            !payload.contains("csv-") && !payload.contains("p1_"),
            "{payload}"
        );
        assert!(str_at(n, "/objectId").starts_with("rec."));
    }
}

/// Runs `verdict record verify FILE ARGS` without any server or database; (exit code,
/// stdout).
fn verify_cli(file: &std::path::Path, args: &[&str]) -> (Option<i32>, String) {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_verdict"))
        .args(["record", "verify"])
        .arg(file)
        .args(args)
        .env_remove("VERDICT_DATABASE_URL")
        .output()
        .expect("run record verify");
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}

async fn records_fail_on_any_changed_byte_online_and_offline(app: App) {
    let admin = app.site_admin().await;
    let tag = unique();
    let event = judged_event(&app, &admin, &tag).await;
    let judge = app.mint_token(&format!("csv-2-{tag}@example.org")).await;
    let text = issue(&app, &judge, &event).await;
    let well_known = app.get("/.well-known/verdict-signing-key").await;
    let fingerprint = well_known
        .header("x-signing-key-fingerprint")
        .expect("fingerprint");
    let dir = tempfile::tempdir().expect("tempdir");
    let pem = dir.path().join("key.pem");
    std::fs::write(&pem, &well_known.text).expect("write key");
    let file = dir.path().join("record.json");
    std::fs::write(&file, &text).expect("write record");

    // Unaltered: true online, PASS offline with the key pinned either way.
    let head = app.audit_head().await;
    assert!(verify(&app, &text).await);
    assert_eq!(app.audit_head().await, head, "verifyRecord writes nothing");
    let (code, out) = verify_cli(&file, &["--key", &fingerprint]);
    assert_eq!(code, Some(0), "{out}");
    assert!(
        out.contains("key   pinned") && out.contains("PASS"),
        "{out}"
    );
    let (code, out) = verify_cli(&file, &["--public-key", pem.to_str().expect("utf-8")]);
    assert_eq!(code, Some(0), "{out}");
    let (code, out) = verify_cli(&file, &[]);
    assert_eq!(code, Some(0), "{out}");
    assert!(
        out.contains("taken from the record"),
        "says the key is unpinned: {out}"
    );
    // Another key pinned: refused offline.
    let (code, out) = verify_cli(&file, &["--key", &"ab".repeat(32)]);
    assert_eq!(code, Some(1), "{out}");

    // Every single-byte change fails, online and offline: a title, a role, the time, the
    // signature, the embedded key, and whitespace.
    let bytes = text.as_bytes();
    let mut positions: Vec<usize> = [
        "\"title\":\"",
        "\"roles\":[\"",
        "\"issued_at\":\"2",
        "\"signature\":\"",
        "\"public_key\":\"-----BEGIN PUBLIC KEY-----\\n",
    ]
    .iter()
    .map(|needle| text.find(needle).expect(needle) + needle.len())
    .collect();
    let middle = (text.len() / 2..)
        .find(|&i| bytes[i].is_ascii_alphanumeric())
        .expect("an ASCII letter past the middle");
    positions.extend([0, middle, text.len() - 1]);
    for at in positions {
        let mut tampered = bytes.to_vec();
        tampered[at] = if tampered[at] == b'a' { b'b' } else { b'a' };
        let tampered = String::from_utf8(tampered).expect("ASCII edit");
        let online = app.gql_opt(None, VERIFY, json!({ "d": tampered })).await;
        match online["data"]["verifyRecord"].as_bool() {
            Some(ok) => assert!(!ok, "byte {at} changed and still verified online"),
            // The first or last byte breaks the JSON itself.
            None => assert_bad_input(&online, &["document"]),
        }
        std::fs::write(&file, &tampered).expect("write tampered");
        let (code, out) = verify_cli(&file, &["--key", &fingerprint]);
        assert_eq!(
            code,
            Some(1),
            "byte {at} changed and still verified offline: {out}"
        );
    }
    // Whitespace alone is a change too.
    assert!(!verify(&app, &format!("{text}\n")).await);
    assert!(!verify(&app, &text.replacen(':', ": ", 1)).await);

    // Not a record: another signed artifact, an empty object; not JSON at all.
    let checkpoint = app.cli(&["audit", "checkpoint"]).await;
    assert!(checkpoint.success(), "{checkpoint:?}");
    assert!(!verify(&app, checkpoint.stdout.trim()).await);
    assert!(!verify(&app, "{}").await);
    let r = app
        .gql_opt(None, VERIFY, json!({ "d": "not a record" }))
        .await;
    assert_bad_input(&r, &["document"]);
    std::fs::write(&file, "not a record").expect("write");
    assert_eq!(verify_cli(&file, &["--key", &fingerprint]).0, Some(1));
}
