//! Erasure (issue 13): a site administrator erases an account, or an address no account has
//! (an email voter's). The person's email, name and what they wrote are gone from every
//! table and from every answer, their credentials stop working at once, and yet the audit
//! chain still verifies, the results and ballots stay, and a result bundle exported before
//! the erasure still verifies.

use std::path::Path;
use std::time::Duration;

use serde_json::{Value, json};

use crate::harness::{App, assert_bad_input, assert_code, judged_fixture, str_at, unique};

e2e! {
    // The results query walks ranking -> project -> team -> members, past the default cost.
    erasing_an_account_removes_the_person_and_keeps_the_chain ["--max-complexity", "20000"],
    erasure_is_refused_without_the_typed_email_or_by_a_non_admin,
    erasing_an_address_forgets_an_email_voter_and_keeps_their_ballot,
    deleting_an_event_hides_it_and_frees_its_slug,
    an_event_with_final_results_cannot_be_deleted,
}

const ERASE: &str = "mutation($e: String!, $c: String!) { eraseAccount(email: $e, confirm: $c) { id displayName } }";
const ERASE_ADDRESS: &str =
    "mutation($e: String!, $c: String!) { eraseAddress(email: $e, confirm: $c) }";
const RANKING: &str = "query($e: String!) { event(slug: $e) { results { version final ranking {
    rank project { externalId team { members { id displayName } } } } } } }";
const REVIEWS: &str = "query($p: ID!) { project(id: $p) { reviews { comment judge { externalId } scores { value } } } }";
const THREAD: &str = "query($p: ID!) { project(id: $p) { comments(first: 10) {
    edges { node { body author { displayName } } } } } }";
const CALIBRATE: &str =
    "mutation($e: String!) { runCalibration(event: $e, seed: 7, bootstrap: 50) { id inputsHash } }";

/// `verdict results export` of `slug` into `dir`; the bundle's files, in order.
async fn export(app: &App, slug: &str, dir: &Path) -> Vec<Vec<u8>> {
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
    verdict::bundle::FILES
        .iter()
        .map(|f| std::fs::read(dir.join(f)).expect("bundle file"))
        .collect()
}

/// `verdict audit verify` passes; what it printed.
async fn assert_chain_intact(app: &App, when: &str) -> String {
    let out = app.cli(&["audit", "verify"]).await;
    assert!(
        out.success() && out.stdout.contains("intact"),
        "audit verify {when}: {out:?}"
    );
    out.stdout
}

async fn erasing_an_account_removes_the_person_and_keeps_the_chain(app: App) {
    let admin = app.site_admin().await;
    let tag = unique();
    let slug = format!("csv-{tag}");
    app.ok(
        Some(&admin),
        "mutation($f: JSON!) { importEvent(fixture: $f) { inserted } }",
        json!({ "f": judged_fixture(&tag) }),
    )
    .await;
    let organizer = app.mint_token(&format!("csv-o-{tag}@example.org")).await;
    let first_run = app
        .ok(Some(&organizer), CALIBRATE, json!({ "e": slug }))
        .await;

    // The person to erase: "Builder", on project p1's team. They get a password (the
    // operator's reset), a name of their own, an API token, and a comment, all after the
    // run's audit entry so that the bundle's audit range holds them.
    let email = format!("csv-4-{tag}@example.org");
    let reset = app
        .cli(&["user", "reset-password", "--email", &email])
        .await;
    assert!(reset.success(), "{reset:?}");
    let password = reset.stdout.trim().to_string();
    let session = app.log_in(&email, &password).await;
    // A reset link they asked for themselves: a reset row, its mail and the reset limit's
    // bucket, all naming the address.
    app.ok(
        None,
        crate::harness::op("RequestPasswordReset"),
        json!({ "email": email }),
    )
    .await;
    let name = format!("Builder Person {tag}");
    app.ok(
        Some(&session),
        "mutation($n: String!) { updateProfile(displayName: $n) { displayName } }",
        json!({ "n": name }),
    )
    .await;
    let label = format!("laptop {tag}");
    let token = str_at(
        &app.ok(
            Some(&session),
            "mutation($l: String!) { createApiToken(label: $l) { token } }",
            json!({ "l": label }),
        )
        .await,
        "/createApiToken/token",
    );
    let body = format!("A private note {tag}");
    let body_hash = verdict::crypto::sha256_hex(body.as_bytes());
    let p1 = format!("p1_{tag}");
    app.ok(
        Some(&token),
        "mutation($p: ID!, $b: String!) { postComment(project: $p, body: $b) { id } }",
        json!({ "p": p1, "b": body }),
    )
    .await;
    app.ok(
        Some(&admin),
        "mutation($e: String!, $r: ID!) { publishResults(event: $e, run: $r, final: true) { version } }",
        json!({ "e": slug, "r": first_run["runCalibration"]["id"] }),
    )
    .await;
    let ranking_before = app
        .ok(Some(&organizer), RANKING, json!({ "e": slug }))
        .await;
    let members = &ranking_before["event"]["results"]["ranking"];
    assert!(
        members.to_string().contains(&name),
        "before: the results show the person's name to the event's members: {members}"
    );
    let dir = tempfile::tempdir().expect("tempdir");
    let before = export(&app, &slug, &dir.path().join("before")).await;
    assert!(verdict::bundle::verify_files(&before, None).ok());
    assert!(
        before
            .iter()
            .any(|f| String::from_utf8_lossy(f).contains(&body_hash)),
        "the bundle holds the comment's audit entry in full"
    );
    let said = assert_chain_intact(&app, "before the erasure").await;
    assert!(!said.contains("redacted"), "{said}");
    let mut ws = app
        .ws(json!({ "authorization": format!("Bearer {session}") }))
        .await;

    // The erasure.
    let d = app
        .ok(Some(&admin), ERASE, json!({ "e": email, "c": email }))
        .await;
    assert_eq!(d["eraseAccount"]["displayName"], "Erased account");
    let erased_id = str_at(&d, "/eraseAccount/id");

    // Their open socket closes as revoked; their session, token and password are dead.
    let (_, close) = ws.until_closed(Duration::from_secs(10)).await;
    assert_eq!(close, Some(4403), "the erased person's socket closes");
    for t in [&session, &token] {
        let v = app.gql_as(t, "{ viewer { user { id } } }", json!({})).await;
        assert!(
            v["data"]["viewer"].is_null() || v["errors"].is_array(),
            "an erased person's credential still works: {v}"
        );
    }

    // Nothing of theirs is stored anywhere any more.
    let probe = app.probe().await;
    for needle in [&email, &name, &label, &body, &body_hash] {
        let left = probe.tables_holding(needle).await;
        assert!(left.is_empty(), "{needle:?} is still stored in {left:?}");
    }
    // (A log-in attempt with the address, like one with any address, is counted under it
    // in the throttle for its window: checked after the scan above.)
    let r = app
        .gql(
            "mutation($e: String!, $p: String!) { logIn(email: $e, password: $p) { token } }",
            json!({ "e": email, "p": password }),
        )
        .await;
    assert_code(&r, "UNAUTHENTICATED");

    // What users see: the results keep their ranks, with the name redacted; the comment
    // thread keeps the comment's place, erased.
    let ranking_after = app
        .ok(Some(&organizer), RANKING, json!({ "e": slug }))
        .await;
    let ranks = |v: &Value| {
        v["event"]["results"]["ranking"]
            .as_array()
            .expect("ranking")
            .iter()
            .map(|r| (r["rank"].clone(), r["project"]["externalId"].clone()))
            .collect::<Vec<_>>()
    };
    assert_eq!(ranks(&ranking_before), ranks(&ranking_after));
    let shown = ranking_after.to_string();
    assert!(!shown.contains(&name), "{shown}");
    assert!(shown.contains("Erased account"), "{shown}");
    assert!(
        shown.contains(&erased_id),
        "the placeholder keeps its place: {shown}"
    );
    let thread = app.ok(None, THREAD, json!({ "p": p1 })).await;
    let node = &thread["project"]["comments"]["edges"][0]["node"];
    assert_eq!(node["body"], "[erased]", "{thread}");
    assert_eq!(node["author"]["displayName"], "Erased account");
    for kind in ["REGISTRATIONS", "TEAMS"] {
        let csv = app
            .ok(
                Some(&organizer),
                "mutation($e: String!, $k: ExportKind!) { exportCsv(event: $e, kind: $k) }",
                json!({ "e": slug, "k": kind }),
            )
            .await;
        let text = csv["exportCsv"].as_str().expect("csv");
        assert!(
            !text.contains(&email) && !text.contains(&name),
            "{kind}: {text}"
        );
    }
    let log = app
        .ok(
            Some(&admin),
            "query($e: String!) { event(slug: $e) { auditLog(first: 100) { edges { node { action payload } } } } }",
            json!({ "e": slug }),
        )
        .await;
    assert!(!log.to_string().contains(&body_hash), "{log}");

    // The chain verifies; the bundle exported before still verifies, and one exported now
    // verifies too while holding none of it.
    // ... and says how many payloads erasures redacted.
    let said = assert_chain_intact(&app, "after the erasure").await;
    assert!(
        said.contains("payloads redacted by erasures, each as its erasure entry recorded"),
        "{said}"
    );
    assert!(
        verdict::bundle::verify_files(&before, None).ok(),
        "a bundle exported before the erasure still verifies: {:?}",
        verdict::bundle::verify_files(&before, None).failed
    );
    let after = export(&app, &slug, &dir.path().join("after")).await;
    let report = verdict::bundle::verify_files(&after, None);
    assert!(report.ok(), "{:?}", report.failed);
    for f in &after {
        let text = String::from_utf8_lossy(f);
        assert!(!text.contains(&body_hash) && !text.contains(&name));
    }

    // A judge erased: their review comments go, their scores and so the calibration stay.
    let judge = format!("csv-1-{tag}@example.org");
    app.ok(Some(&admin), ERASE, json!({ "e": judge, "c": judge }))
        .await;
    let reviews = app.ok(Some(&organizer), REVIEWS, json!({ "p": p1 })).await;
    let reviews = reviews["project"]["reviews"].as_array().expect("reviews");
    assert_eq!(reviews.len(), 3, "every review stays");
    for r in reviews {
        let erased = r["judge"]["externalId"] == json!(format!("j1_{tag}"));
        assert_eq!(r["comment"] == "[erased]", erased, "{r}");
    }
    let second_run = app
        .ok(Some(&organizer), CALIBRATE, json!({ "e": slug }))
        .await;
    assert_eq!(
        second_run["runCalibration"]["inputsHash"], first_run["runCalibration"]["inputsHash"],
        "the calibration's inputs are the same after the erasure"
    );
    assert!(probe.tables_holding(&judge).await.is_empty());
    assert_chain_intact(&app, "after two erasures").await;
}

async fn erasure_is_refused_without_the_typed_email_or_by_a_non_admin(app: App) {
    let admin = app.site_admin().await;
    let email = format!("keep-{}@example.org", unique());
    let (own, _) = app.sign_up_full(&email).await;
    let other = app
        .sign_up(&format!("other-{}@example.org", unique()))
        .await;
    let probe = app.probe().await;
    let before = probe.snapshot().await;

    let r = app
        .gql_as(
            &admin,
            ERASE,
            json!({ "e": email, "c": "keep@example.org" }),
        )
        .await;
    assert_bad_input(&r, &["confirm"]);
    let r = app
        .gql_as(&admin, ERASE, json!({ "e": email, "c": "" }))
        .await;
    assert_bad_input(&r, &["confirm"]);
    let nobody = format!("nobody-{}@example.org", unique());
    let r = app
        .gql_as(&admin, ERASE, json!({ "e": nobody, "c": nobody }))
        .await;
    assert_code(&r, "NOT_FOUND");
    for token in [&own, &other] {
        let r = app
            .gql_as(token, ERASE, json!({ "e": email, "c": email }))
            .await;
        assert_code(&r, "FORBIDDEN");
    }
    let r = app.gql(ERASE, json!({ "e": email, "c": email })).await;
    assert_code(&r, "UNAUTHENTICATED");
    let r = app
        .gql_as(
            &admin,
            ERASE,
            json!({ "e": crate::harness::ADMIN_EMAIL, "c": crate::harness::ADMIN_EMAIL }),
        )
        .await;
    assert_code(&r, "CONFLICT");
    probe
        .nothing_written_since(&before, &[], "a refused erasure")
        .await;

    // The account still works.
    let v = app
        .ok(Some(&own), "{ viewer { user { email } } }", json!({}))
        .await;
    assert_eq!(v["viewer"]["user"]["email"], json!(email));

    // Below the API, the database allows an audit row nothing but a redaction of its
    // payload, and a redaction that no erasure entry names breaks the chain at that row.
    use sea_orm::{ConnectionTrait, Database};
    let db = Database::connect(app.db.url()).await.expect("connect");
    let head = app.audit_head().await;
    for edit in [
        "action = 'account.erased'",
        "payload = '{\"forged\":true}'",
        "object_id = 'x', payload = '{\"redacted\":[\"/x\"],\"x\":null}'",
    ] {
        let sql = format!("UPDATE audit_events SET {edit} WHERE seq = {head}");
        assert!(
            db.execute_unprepared(&sql).await.is_err(),
            "{sql} was allowed"
        );
    }
    let forged = format!(
        "UPDATE audit_events SET payload = '{{\"redacted\":[\"/x\"],\"x\":null}}' WHERE seq = {head}"
    );
    db.execute_unprepared(&forged)
        .await
        .expect("a redaction-shaped update");
    let out = app.cli(&["audit", "verify"]).await;
    assert_eq!(out.code, Some(1), "{out:?}");
    assert!(
        out.stdout.contains(&format!("broken at seq {head}")),
        "verify names the unclaimed redaction: {out:?}"
    );
}

/// A person who voted by email (allow-listed under one spelling of their mailbox,
/// registered under another) and was invited as a judge asks to be forgotten: every record
/// of the address goes, their ballot stays and counts, the chain verifies. Refusals
/// (another spelling typed as confirmation, a non-admin, an account's address, an address
/// nothing names) write nothing.
async fn erasing_an_address_forgets_an_email_voter_and_keeps_their_ballot(app: App) {
    use crate::voting::{CONFIRM, REGISTER, Setup, ballot, cast, configure, setup};
    let Setup { s, submitted_b, .. } = setup(&app).await;
    let (org, event) = (&s.organizer_a, &s.event_a);
    let admin = app.site_admin().await;
    let u = unique();
    let listed = format!("ada.lovelace.{u}@gmail.com");
    let given = format!("ada.lovelace.{u}+vote@gmail.com");
    let mailbox = format!("adalovelace{u}@gmail.com");
    let r = configure(
        &app,
        org,
        event,
        "EMAIL_ALLOWLIST",
        9,
        chrono::Duration::hours(1),
        Some(vec![listed.as_str()]),
    )
    .await;
    assert_eq!(r["data"]["configureVoting"]["allowlistSize"], 1, "{r}");
    let r = app
        .gql_opt(None, REGISTER, json!({ "e": event, "email": given }))
        .await;
    assert_eq!(r["data"]["registerVoter"], true, "{r}");
    let token = crate::invitations::operator_link(&app, &given, "/vote?link=").await;
    let r = app.gql_opt(None, CONFIRM, json!({ "t": token })).await;
    let key = str_at(&r["data"], "/confirmVoter/key");
    let votes =
        json!([{ "project": s.submitted, "votes": 1 }, { "project": submitted_b, "votes": 2 }]);
    let r = cast(&app, None, event, votes, Some(&key)).await;
    assert_eq!(r["data"]["castVotes"]["spent"], 5, "{r}");
    app.ok(
        Some(org),
        crate::harness::op("InviteToEvent"),
        json!({ "event": event, "emails": [given], "role": "JUDGE" }),
    )
    .await;
    let probe = app.probe().await;
    assert!(!probe.tables_holding(&given).await.is_empty());

    // Refused, and nothing written.
    let before = probe.snapshot().await;
    let r = app
        .gql_as(&admin, ERASE_ADDRESS, json!({ "e": given, "c": listed }))
        .await;
    assert_bad_input(&r, &["confirm"]);
    let r = app
        .gql_as(org, ERASE_ADDRESS, json!({ "e": given, "c": given }))
        .await;
    assert_code(&r, "FORBIDDEN");
    let account = &s.emails.participant_a;
    let r = app
        .gql_as(&admin, ERASE_ADDRESS, json!({ "e": account, "c": account }))
        .await;
    assert_code(&r, "CONFLICT");
    let nobody = format!("nobody-{u}@example.org");
    let r = app
        .gql_as(&admin, ERASE_ADDRESS, json!({ "e": nobody, "c": nobody }))
        .await;
    assert_code(&r, "NOT_FOUND");
    probe
        .nothing_written_since(&before, &[], "a refused address erasure")
        .await;

    // Erased: the voter row, the allow-list entry, the invitation, the mail to it.
    let d = app
        .ok(
            Some(&admin),
            ERASE_ADDRESS,
            json!({ "e": given, "c": given.to_uppercase() }),
        )
        .await;
    let records = d["eraseAddress"].as_i64().expect("a count");
    assert!(records >= 4, "{d}");
    for needle in [&given, &listed, &mailbox] {
        let left = probe.tables_holding(needle).await;
        assert!(left.is_empty(), "{needle} is still in {left:?}");
    }
    // Their ballot stays and counts; it no longer says whose it is.
    let mine = ballot(&app, None, event, Some(&key)).await;
    assert_eq!(mine["spent"], 5, "{mine}");
    assert!(
        mine["address"]
            .as_str()
            .is_some_and(|a| a.ends_with("@erased.invalid")),
        "{mine}"
    );
    assert_chain_intact(&app, "after an address erasure").await;
    // Nothing names it any more.
    let r = app
        .gql_as(&admin, ERASE_ADDRESS, json!({ "e": given, "c": given }))
        .await;
    assert_code(&r, "NOT_FOUND");
}

const DELETE: &str = "mutation($e: String!, $c: String!) { deleteEvent(event: $e, confirm: $c) }";

async fn deleting_an_event_hides_it_and_frees_its_slug(app: App) {
    let s = app.scenario().await;
    let probe = app.probe().await;
    let before = probe.snapshot().await;
    let r = app
        .gql_as(
            &s.organizer_a,
            DELETE,
            json!({ "e": s.event_a, "c": s.event_b }),
        )
        .await;
    assert_bad_input(&r, &["confirm"]);
    for token in [&s.organizer_b, &s.participant_a, &s.judge_a] {
        let r = app
            .gql_as(token, DELETE, json!({ "e": s.event_a, "c": s.event_a }))
            .await;
        assert_code(&r, "FORBIDDEN");
    }
    let r = app
        .gql(DELETE, json!({ "e": s.event_a, "c": s.event_a }))
        .await;
    assert_code(&r, "UNAUTHENTICATED");
    probe
        .nothing_written_since(&before, &[], "a refused deletion")
        .await;

    let d = app
        .ok(
            Some(&s.organizer_a),
            DELETE,
            json!({ "e": s.event_a, "c": s.event_a }),
        )
        .await;
    assert_eq!(d["deleteEvent"], true);

    // Gone for every reader, by slug and by id; the other event stays.
    for token in [
        None,
        Some(&s.participant_a),
        Some(&s.organizer_a),
        Some(&s.admin),
    ] {
        let token = token.map(String::as_str);
        let v = app
            .ok(
                token,
                "query($e: String!) { event(slug: $e) { id } }",
                json!({ "e": s.event_a }),
            )
            .await;
        assert!(v["event"].is_null(), "{v}");
        for p in [&s.submitted, &s.draft] {
            let v = app
                .ok(
                    token,
                    "query($p: ID!) { project(id: $p) { id } }",
                    json!({ "p": p }),
                )
                .await;
            assert!(v["project"].is_null(), "{v}");
        }
    }
    let list = app
        .ok(
            Some(&s.admin),
            "{ events(first: 100) { edges { node { id } } } }",
            json!({}),
        )
        .await
        .to_string();
    assert!(
        !list.contains(&s.event_a_id) && list.contains(&s.event_b_id),
        "{list}"
    );
    let mine = app
        .ok(
            Some(&s.organizer_a),
            "{ viewer { memberships { event { id } } } }",
            json!({}),
        )
        .await
        .to_string();
    assert!(!mine.contains(&s.event_a_id), "{mine}");
    // Nothing can be written to it any more.
    let r = app
        .gql_as(
            &s.participant_a,
            "mutation($p: ID!) { withdrawProject(id: $p) { id } }",
            json!({ "p": s.submitted }),
        )
        .await;
    assert_code(&r, "NOT_FOUND");
    let r = app
        .gql_as(
            &s.organizer_a,
            DELETE,
            json!({ "e": s.event_a, "c": s.event_a }),
        )
        .await;
    assert_code(&r, "NOT_FOUND");
    assert_chain_intact(&app, "after deleting an event").await;

    // Its slug is free for a new event.
    let now = chrono::Utc::now();
    let d = |days: i64| crate::harness::rfc3339(now + chrono::Duration::days(days));
    let v = app
        .ok(
            Some(&s.admin),
            crate::harness::op("CreateEvent"),
            json!({ "input": { "slug": s.event_a, "name": "Again", "externalId": format!("evt_again_{}", unique()),
                "submissionsOpen": d(-1), "submissionsClose": d(1) } }),
        )
        .await;
    assert!(v["createEvent"]["id"].is_string(), "{v}");
}

async fn an_event_with_final_results_cannot_be_deleted(app: App) {
    let admin = app.site_admin().await;
    let tag = unique();
    let slug = format!("csv-{tag}");
    app.ok(
        Some(&admin),
        "mutation($f: JSON!) { importEvent(fixture: $f) { inserted } }",
        json!({ "f": judged_fixture(&tag) }),
    )
    .await;
    let run = app.ok(Some(&admin), CALIBRATE, json!({ "e": slug })).await;
    let publish = "mutation($e: String!, $r: ID!, $f: Boolean) { publishResults(event: $e, run: $r, final: $f) { version } }";
    // A preview publication does not stand in the way; a final one does.
    app.ok(
        Some(&admin),
        publish,
        json!({ "e": slug, "r": run["runCalibration"]["id"], "f": false }),
    )
    .await;
    app.ok(
        Some(&admin),
        publish,
        json!({ "e": slug, "r": run["runCalibration"]["id"], "f": true }),
    )
    .await;
    let probe = app.probe().await;
    let before = probe.snapshot().await;
    let r = app
        .gql_as(&admin, DELETE, json!({ "e": slug, "c": slug }))
        .await;
    assert_code(&r, "CONFLICT");
    assert!(
        crate::harness::error_message(&r).contains("final"),
        "the refusal says why: {r}"
    );
    probe
        .nothing_written_since(&before, &[], "deleting an event with final results")
        .await;
    let v = app
        .ok(
            None,
            "query($e: String!) { event(slug: $e) { results { final } } }",
            json!({ "e": slug }),
        )
        .await;
    assert_eq!(v["event"]["results"]["final"], true);
}
