//! Results that hold still: a publication shows exactly the signed run whatever happens to
//! its projects afterwards; a calibration computes without holding up other writes and
//! stores the inputs as they were when it committed; the live leaderboard is computed once
//! per burst of changes and shared by its subscribers.

use std::time::{Duration, Instant};

use chrono::Utc;
use serde_json::{Value, json};

use crate::harness::{App, judged_fixture, op, rfc3339, str_at, unique};

e2e! {
    published_ranking_keeps_a_project_withdrawn_after_publication,
    published_ranking_reads_a_page_at_a_time_and_anonymous_gets_are_cacheable,
    calibration_lets_writes_through_and_stores_the_inputs_at_commit [
        "--request-timeout", "300", "--max-body", "4194304"
    ],
    leaderboard_subscribers_share_one_computation_per_burst,
    anonymous_answers_are_shared_until_a_write_commits,
    published_results_state_how_certain_the_podium_is,
}

const IMPORT: &str = "mutation($f: JSON!) { importEvent(fixture: $f) { inserted } }";

async fn published_ranking_keeps_a_project_withdrawn_after_publication(app: App) {
    let admin = app.site_admin().await;
    let tag = unique();
    let slug = format!("csv-{tag}");
    // The judged fixture, with submissions still open so that a team can withdraw.
    let mut fixture = judged_fixture(&tag);
    let now = Utc::now();
    fixture["event"]["submissions_open"] = json!(rfc3339(now - chrono::Duration::days(1)));
    fixture["event"]["submissions_close"] = json!(rfc3339(now + chrono::Duration::days(1)));
    fixture["event"]["judging_open"] = json!(rfc3339(now + chrono::Duration::days(2)));
    fixture["event"]["judging_close"] = json!(rfc3339(now + chrono::Duration::days(3)));
    app.ok(Some(&admin), IMPORT, json!({ "f": fixture })).await;
    let run = app
        .ok(
            Some(&admin),
            op("RunCalibration"),
            json!({ "event": slug, "seed": 3, "bootstrap": 20 }),
        )
        .await;
    let run_id = str_at(&run, "/runCalibration/id");
    app.ok(
        Some(&admin),
        op("PublishResults"),
        json!({ "event": slug, "run": run_id, "final": true }),
    )
    .await;

    let ranks = "query($e: String!) { event(slug: $e) { results { ranking { rank rankLow rankHigh quality reviews } } } }";
    let published = app.ok(None, ranks, json!({ "e": slug })).await;
    let ranking = published["event"]["results"]["ranking"].clone();
    assert_eq!(
        ranking.as_array().map(Vec::len),
        Some(4),
        "the four judged projects are published: {published}"
    );

    // The team of p1 withdraws it after publication.
    let builder = app.mint_token(&format!("csv-4-{tag}@example.org")).await;
    let withdrawn = app
        .ok(
            Some(&builder),
            op("WithdrawProject"),
            json!({ "id": format!("p1_{tag}") }),
        )
        .await;
    assert_eq!(withdrawn["withdrawProject"]["status"], "WITHDRAWN");

    let after = app.ok(None, ranks, json!({ "e": slug })).await;
    assert_eq!(
        after["event"]["results"]["ranking"], ranking,
        "the published ranking is what was signed: the same entries and ranks after a withdrawal"
    );

    // The withdrawn project keeps its signed place and identity; who may no longer see the
    // project sees only that identity.
    let named = "query($e: String!) { event(slug: $e) { results { ranking { rank projectExternalId project { externalId status } } } } }";
    let signed_rank = |v: &Value| {
        v["event"]["results"]["ranking"]
            .as_array()
            .expect("ranking")
            .iter()
            .find(|p| p["projectExternalId"] == json!(format!("p1_{tag}")))
            .unwrap_or_else(|| panic!("p1 is in the published ranking: {v}"))
            .clone()
    };
    let anonymous = app.ok(None, named, json!({ "e": slug })).await;
    let p1 = signed_rank(&anonymous);
    assert!(p1["rank"].is_number(), "p1 was ranked: {p1}");
    assert_eq!(p1["project"], Value::Null, "the public no longer sees p1");
    let others = anonymous["event"]["results"]["ranking"]
        .as_array()
        .expect("ranking")
        .iter()
        .filter(|p| p["projectExternalId"] != json!(format!("p1_{tag}")))
        .all(|p| p["project"]["externalId"] == p["projectExternalId"]);
    assert!(others, "the other projects are linked: {anonymous}");
    let team = app.ok(Some(&builder), named, json!({ "e": slug })).await;
    let p1 = signed_rank(&team);
    assert_eq!(
        p1["project"]["status"], "WITHDRAWN",
        "its team still sees it"
    );
}

/// Imports the judged fixture, runs a calibration and publishes it; the event's slug.
async fn published_event(app: &App, admin: &str, tag: &str) -> String {
    app.ok(Some(admin), IMPORT, json!({ "f": judged_fixture(tag) }))
        .await;
    let slug = format!("csv-{tag}");
    let run = app
        .ok(
            Some(admin),
            op("RunCalibration"),
            json!({ "event": slug, "seed": 3, "bootstrap": 20 }),
        )
        .await;
    app.ok(
        Some(admin),
        op("PublishResults"),
        json!({ "event": slug, "run": str_at(&run, "/runCalibration/id"), "final": true }),
    )
    .await;
    slug
}

/// The external ids of a list of ranked projects, in order.
fn external_ids(list: &Value) -> Vec<String> {
    list.as_array()
        .unwrap_or_else(|| panic!("a list: {list}"))
        .iter()
        .map(|p| p["projectExternalId"].as_str().expect("an id").to_string())
        .collect()
}

async fn published_ranking_reads_a_page_at_a_time_and_anonymous_gets_are_cacheable(app: App) {
    let admin = app.site_admin().await;
    let tag = unique();
    let slug = published_event(&app, &admin, &tag).await;
    let whole = app
        .ok(
            None,
            "query($e: String!) { event(slug: $e) { results { ranking { projectExternalId } } } }",
            json!({ "e": slug }),
        )
        .await;
    let whole = external_ids(&whole["event"]["results"]["ranking"]);
    assert_eq!(whole.len(), 4, "four projects are published");

    // Page by page, the same entries in the same order, with the total on every page.
    let pages = "query($e: String!, $after: String) { event(slug: $e) { results { rankingPage(first: 3, after: $after) { totalCount pageInfo { hasNextPage endCursor } edges { node { projectExternalId project { externalId } } } } } } }";
    let first = app
        .ok(None, pages, json!({ "e": slug, "after": null }))
        .await;
    let first = &first["event"]["results"]["rankingPage"];
    assert_eq!(first["totalCount"], 4, "{first}");
    assert_eq!(first["pageInfo"]["hasNextPage"], true, "{first}");
    let nodes = |page: &Value| -> Value {
        Value::Array(
            page["edges"]
                .as_array()
                .expect("edges")
                .iter()
                .map(|e| e["node"].clone())
                .collect(),
        )
    };
    let first_nodes = nodes(first);
    assert!(
        first_nodes
            .as_array()
            .expect("nodes")
            .iter()
            .all(|n| n["project"]["externalId"] == n["projectExternalId"]),
        "each entry on a page is linked to its project: {first}"
    );
    let second = app
        .ok(
            None,
            pages,
            json!({ "e": slug, "after": first["pageInfo"]["endCursor"] }),
        )
        .await;
    let second = &second["event"]["results"]["rankingPage"];
    assert_eq!(second["pageInfo"]["hasNextPage"], false, "{second}");
    let mut walked = external_ids(&first_nodes);
    walked.extend(external_ids(&nodes(second)));
    assert_eq!(walked, whole, "the pages walk the whole ranking in order");
    let bad = app
        .gql(pages, json!({ "e": slug, "after": "not-a-cursor" }))
        .await;
    crate::harness::assert_bad_input(&bad, &["after"]);

    // A persisted query over GET: named by its hash once the server knows its text.
    let query = "query PublicResults($e: String!) { event(slug: $e) { results { version rankingPage(first: 2) { totalCount edges { node { projectExternalId rank } } } } } }";
    let hash = hex::encode(<sha2::Sha256 as sha2::Digest>::digest(query.as_bytes()));
    let get = |text: Option<&str>, hash: &str| {
        let mut form = url::form_urlencoded::Serializer::new(String::new());
        if let Some(text) = text {
            form.append_pair("query", text);
        }
        form.append_pair("variables", &json!({ "e": slug }).to_string());
        form.append_pair(
            "extensions",
            &json!({ "persistedQuery": { "version": 1, "sha256Hash": hash } }).to_string(),
        );
        format!("/graphql?{}", form.finish())
    };
    let unknown = app.get(&get(None, &hash)).await;
    assert_eq!(
        unknown.json()["errors"][0]["extensions"]["code"],
        "PERSISTED_QUERY_NOT_FOUND",
        "{unknown:?}"
    );
    let wrong = app.get(&get(Some(query), &"0".repeat(64))).await;
    assert_eq!(
        wrong.status, 400,
        "a hash that is not the query's: {wrong:?}"
    );
    let registered = app.get(&get(Some(query), &hash)).await;
    assert_eq!(registered.status, 200, "{registered:?}");
    let by_hash = app.get(&get(None, &hash)).await;
    assert_eq!(by_hash.status, 200, "{by_hash:?}");
    assert_eq!(by_hash.json(), registered.json(), "the same answer by hash");
    assert_eq!(
        by_hash.json()["data"]["event"]["results"]["rankingPage"]["totalCount"],
        4
    );
    assert_eq!(
        by_hash.header("cache-control").as_deref(),
        Some("public, max-age=5"),
        "an anonymous answer may be kept by a shared cache: {by_hash:?}"
    );
    let etag = by_hash.header("etag").expect("an ETag");
    let revalidated = app
        .get_with(&get(None, &hash), &[("if-none-match", &etag)])
        .await;
    assert_eq!(revalidated.status, 304, "{revalidated:?}");
    assert!(revalidated.text.is_empty(), "a 304 has no body");
    let signed_in = app
        .get_with(
            &get(None, &hash),
            &[("authorization", &format!("Bearer {admin}"))],
        )
        .await;
    assert_eq!(signed_in.status, 200, "{signed_in:?}");
    assert_eq!(
        signed_in.header("cache-control").as_deref(),
        Some("private, no-store"),
        "a signed-in answer is the caller's alone"
    );
    assert!(signed_in.header("etag").is_none(), "{signed_in:?}");

    // A persisted mutation is still a mutation: never over GET.
    let mutation = "mutation { logOut }";
    let mutation_hash = hex::encode(<sha2::Sha256 as sha2::Digest>::digest(mutation.as_bytes()));
    let body = json!({
        "query": mutation,
        "extensions": { "persistedQuery": { "version": 1, "sha256Hash": mutation_hash } },
    });
    app.post_raw(body.to_string(), "application/json", &[])
        .await;
    let over_get = app.get(&get(None, &mutation_hash)).await;
    assert_eq!(over_get.status, 405, "{over_get:?}");
}

/// An event large enough that its calibration computes for seconds: `projects` projects
/// each reviewed by `k` of `judges` judges, plus one unreviewed project `late_{tag}`;
/// judging is open now.
pub(crate) fn panel_fixture(tag: &str, projects: usize, judges: usize, k: usize) -> Value {
    let now = Utc::now();
    let at = |days: i64| rfc3339(now + chrono::Duration::days(days));
    let mut reviews = vec![];
    for p in 0..projects {
        let quality = (p * 37 % 10) as i64;
        for r in 0..k {
            let j = (p * k + r) % judges;
            let severity = (j % 3) as i64 - 1;
            let noise = ((p * 7 + j * 13) % 3) as i64 - 1;
            reviews.push(json!({
                "judge": format!("j{j}_{tag}"),
                "project": format!("p{p}_{tag}"),
                "scores": { "impact": (1 + quality + severity + noise).clamp(1, 10) },
                "comment": "",
                "submitted_at": at(0),
            }));
        }
    }
    let project_ids: Vec<String> = (0..projects)
        .map(|p| format!("p{p}_{tag}"))
        .chain([format!("late_{tag}")])
        .collect();
    json!({
        "format": "verdict.event.v1",
        "event": {
            "external_id": format!("evt_{tag}"), "slug": format!("panel-{tag}"), "name": "Panel",
            "submissions_open": at(-3), "submissions_close": at(-2),
            "judging_open": at(-1), "judging_close": at(1),
            "voting_open": null, "voting_close": null, "reviews_per_project": k, "max_team_size": 3
        },
        "tracks": [ { "external_id": format!("trk_{tag}"), "name": "Only track" } ],
        "people": (0..judges).map(|j| json!({
            "external_id": format!("u{j}_{tag}"), "email": format!("panel-{j}-{tag}@example.org"),
            "display_name": format!("Judge {j}")
        })).chain([json!({
            "external_id": format!("o_{tag}"), "email": format!("panel-o-{tag}@example.org"),
            "display_name": "Organizer"
        })]).collect::<Vec<_>>(),
        "organizers": [ format!("o_{tag}") ],
        "judges": (0..judges).map(|j| json!({
            "external_id": format!("j{j}_{tag}"), "person": format!("u{j}_{tag}"), "tracks": []
        })).collect::<Vec<_>>(),
        "teams": project_ids.iter().map(|p| json!({
            "external_id": format!("t{p}"), "name": format!("Team {p}"), "members": []
        })).collect::<Vec<_>>(),
        "projects": project_ids.iter().map(|p| json!({
            "external_id": p, "team": format!("t{p}"), "track": format!("trk_{tag}"),
            "title": format!("Project {p}"), "tagline": "", "summary": "", "repo_url": "",
            "demo_url": "", "tags": [], "status": "submitted", "submitted_at": at(-2)
        })).collect::<Vec<_>>(),
        "criteria": [ { "key": "impact", "name": "Impact", "weight": 1.0, "min": 1, "max": 10, "position": 1 } ],
        "reviews": reviews
    })
}

async fn calibration_lets_writes_through_and_stores_the_inputs_at_commit(app: App) {
    let admin = app.site_admin().await;
    let tag = unique();
    let slug = format!("panel-{tag}");
    app.ok(
        Some(&admin),
        IMPORT,
        json!({ "f": panel_fixture(&tag, 600, 60, 5) }),
    )
    .await;
    // Five judges get the unreviewed project: each trial below has one of them score it
    // while a calibration computes.
    let mut reviewers = vec![];
    for j in 1..=5 {
        let token = app
            .mint_token(&format!("panel-{j}-{tag}@example.org"))
            .await;
        let assigned = app
            .ok(
                Some(&admin),
                op("AssignJudge"),
                json!({ "event": slug, "judge": format!("j{j}_{tag}"), "project": format!("late_{tag}") }),
            )
            .await;
        reviewers.push((token, str_at(&assigned, "/assignJudge/id")));
    }

    // How long a calibration of this event takes here (a fraction of a second to
    // seconds, by machine and build).
    let warm = Instant::now();
    app.ok(
        Some(&admin),
        "mutation($e: String!) { runCalibration(event: $e, seed: 1, bootstrap: 2000) { id } }",
        json!({ "e": slug }),
    )
    .await;
    let computing = warm.elapsed();
    let mut runs = 1;

    // A trial: a review is sent a fraction into a calibration. When it commits while the
    // calibration computes, the run (which re-reads its inputs under the write lock before
    // storing, and computes again when they changed) holds the same inputs as a run made
    // right afterwards. When the review happens to arrive while the run is being stored,
    // it waits for that short transaction and is (rightly) not in it: the trial is
    // inconclusive and the next one starts earlier. A calibration that held the write lock
    // while computing would keep every review out until its commit: no trial would succeed.
    let mut included = false;
    for (trial, (judge, assignment)) in reviewers.iter().enumerate() {
        let started = Instant::now();
        let calibrate = async {
            let r = app
                .ok(
                    Some(&admin),
                    "mutation($e: String!) { runCalibration(event: $e, seed: 1, bootstrap: 2000) { id inputsHash } }",
                    json!({ "e": slug }),
                )
                .await;
            (r, started.elapsed())
        };
        let review = async {
            tokio::time::sleep(computing / (2 + trial as u32)).await;
            let t = Instant::now();
            let r = app
                .ok(
                    Some(judge),
                    op("SaveReview"),
                    json!({ "assignment": assignment, "scores": [{ "criterion": "impact", "value": 9 }], "submit": true }),
                )
                .await;
            (r, t.elapsed(), started.elapsed())
        };
        let ((run, run_took), (saved, save_took, saved_at)) = tokio::join!(calibrate, review);
        assert_eq!(saved["saveReview"]["submitted"], true);
        let again = app
            .ok(
                Some(&admin),
                "mutation($e: String!) { runCalibration(event: $e, seed: 1, bootstrap: 0) { id inputsHash } }",
                json!({ "e": slug }),
            )
            .await;
        runs += 2;
        included = run["runCalibration"]["inputsHash"] == again["runCalibration"]["inputsHash"];
        eprintln!(
            "trial {trial}: calibration {run_took:?}; review answered after {saved_at:?}, \
             waiting {save_took:?}; in the run: {included}"
        );
        if included {
            break;
        }
    }
    assert!(
        included,
        "no review committed while a calibration computed, in {} trials: writes are held up",
        reviewers.len()
    );
    // Each run wrote one audit entry, however often it computed.
    let audit = app
        .ok(
            Some(&admin),
            "query($e: String!) { event(slug: $e) { auditLog(first: 100) { edges { node { action } } } } }",
            json!({ "e": slug }),
        )
        .await;
    let ran = audit["event"]["auditLog"]["edges"]
        .as_array()
        .expect("audit log")
        .iter()
        .filter(|e| e["node"]["action"] == "calibration.ran")
        .count();
    assert_eq!(ran, runs, "one audit entry per run: {audit}");
}

const LEADERBOARD: &str =
    "subscription($e: String!) { leaderboardUpdated(event: $e) { computedAt projects { rank } } }";

async fn leaderboard_subscribers_share_one_computation_per_burst(app: App) {
    let s = app.scenario().await;
    let mut subscribers = vec![];
    for (i, token) in [&s.organizer_a, &s.admin].into_iter().enumerate() {
        let mut ws = app
            .ws(json!({ "authorization": format!("Bearer {token}") }))
            .await;
        ws.subscribe(&format!("l{i}"), LEADERBOARD, json!({ "e": s.event_a }))
            .await;
        subscribers.push(ws);
    }
    let judge = app
        .ok(
            Some(&s.organizer_a),
            op("EventMembers"),
            json!({ "event": s.event_a, "role": "JUDGE", "first": 5 }),
        )
        .await;
    let judge = str_at(&judge, "/event/members/edges/0/node/id");
    let mut projects = vec![s.submitted.clone()];
    for title in ["Second", "Third", "Fourth"] {
        let p = app
            .create_project(&s.participant_a, &s.event_a, title, &s.track_a)
            .await;
        app.submit_project(&s.participant_a, &p).await;
        projects.push(p);
    }
    // Let both subscriptions register before the changes they should see.
    tokio::time::sleep(Duration::from_millis(1000)).await;

    // A burst: four assignments at once.
    let assign = |project: String| {
        let (app, organizer, event, judge) = (&app, &s.organizer_a, &s.event_a, &judge);
        async move {
            app.ok(
                Some(organizer),
                op("AssignJudge"),
                json!({ "event": event, "judge": judge, "project": project }),
            )
            .await
        }
    };
    futures_util::future::join_all(projects.iter().cloned().map(assign)).await;

    let mut received = vec![];
    for (i, ws) in subscribers.iter_mut().enumerate() {
        let mut times = vec![];
        let first = ws
            .next_json(Duration::from_secs(30))
            .await
            .unwrap_or_else(|| panic!("subscriber {i} receives the leaderboard"));
        let mut msg = Some(first);
        while let Some(m) = msg {
            assert_eq!(m["type"], "next", "{m}");
            let board = &m["payload"]["data"]["leaderboardUpdated"];
            assert!(board["projects"].is_array(), "{m}");
            times.push(board["computedAt"].clone());
            msg = ws.next_json(Duration::from_secs(4)).await;
        }
        received.push(times);
    }
    assert!(
        received[0].len() < projects.len(),
        "a burst of {} changes is computed fewer times than it has changes: {received:?}",
        projects.len()
    );
    assert_eq!(
        received[0], received[1],
        "both subscribers receive the same computations"
    );
}

/// The header on an answer given from the answers anonymous requests share.
const SHARED: &str = "x-verdict-shared";

async fn anonymous_answers_are_shared_until_a_write_commits(app: App) {
    let admin = app.site_admin().await;
    let tag = unique();
    app.ok(Some(&admin), IMPORT, json!({ "f": judged_fixture(&tag) }))
        .await;
    let slug = format!("csv-{tag}");
    let gallery = "query($e: String!) { event(slug: $e) { projects(first: 50) { edges { node { id title } } } } }";
    let vars = json!({ "e": slug });

    // The second of two identical anonymous requests is answered from the first (unless a
    // second boundary fell between them: then the next pair).
    let mut shared = None;
    for _ in 0..5 {
        let first = app.gql_resp(None, gallery, vars.clone()).await;
        let second = app.gql_resp(None, gallery, vars.clone()).await;
        if second.header(SHARED).is_some() {
            shared = Some((first, second));
            break;
        }
    }
    let (first, second) = shared.expect("an anonymous answer was never shared");
    assert_eq!(first.json(), second.json());
    let ids: Vec<String> = first.json()["data"]["event"]["projects"]["edges"]
        .as_array()
        .expect("edges")
        .iter()
        .map(|e| e["node"]["id"].as_str().expect("id").to_string())
        .collect();
    assert!(!ids.is_empty(), "{}", first.json());

    // Signed-in requests always execute: their answers are their own.
    for _ in 0..2 {
        let mine = app.gql_resp(Some(&admin), gallery, vars.clone()).await;
        assert_eq!(mine.header(SHARED), None);
    }
    // Answers with errors are not kept.
    let refused = "query($e: String!) { event(slug: $e) { auditLog(first: 1) { totalCount } } }";
    for _ in 0..2 {
        let r = app.gql_resp(None, refused, vars.clone()).await;
        assert!(r.json()["errors"].is_array(), "{}", r.json());
        assert_eq!(r.header(SHARED), None);
    }

    // A committed write is seen by the very next anonymous request.
    app.ok(
        Some(&admin),
        op("HideProject"),
        json!({ "id": ids[0], "reason": "spam" }),
    )
    .await;
    let after = app.gql_resp(None, gallery, vars.clone()).await;
    assert_eq!(after.header(SHARED), None);
    let listed = after.json()["data"]["event"]["projects"]["edges"].to_string();
    assert!(
        !listed.contains(&ids[0]),
        "the hidden project is gone at once: {listed}"
    );
}

/// Engines from `verdict-calibrate/3` on sign with the run how certain its top places are; the
/// published results show it to anyone (project entries and probabilities, no judge data),
/// and the organizer's run carries the fit's diagnostics and a plain-words summary.
async fn published_results_state_how_certain_the_podium_is(app: App) {
    let admin = app.site_admin().await;
    let tag = unique();
    app.ok(Some(&admin), IMPORT, json!({ "f": judged_fixture(&tag) }))
        .await;
    let slug = format!("csv-{tag}");
    let run = app
        .ok(
            Some(&admin),
            "mutation($e: String!) { runCalibration(event: $e, seed: 5, bootstrap: 50) { \
               id engineVersion diagnostics certainty { draws } } }",
            json!({ "e": slug }),
        )
        .await;
    let run = &run["runCalibration"];
    assert_eq!(run["engineVersion"], "verdict-calibrate/5", "{run}");
    assert_eq!(run["certainty"]["draws"], 50, "{run}");
    let summary = run["diagnostics"]["summary"]
        .as_array()
        .unwrap_or_else(|| panic!("a summary: {run}"));
    assert!(
        summary.iter().any(|l| l
            .as_str()
            .is_some_and(|l| l.contains("of the score variance"))),
        "the summary states the signal: {summary:?}"
    );
    assert!(run["diagnostics"]["signal"]["quality"].is_number(), "{run}");
    assert_eq!(run["diagnostics"]["convergence"]["passes"], 3, "{run}");
    app.ok(
        Some(&admin),
        op("PublishResults"),
        json!({ "event": slug, "run": str_at(&json!({ "r": run }), "/r/id"), "final": true }),
    )
    .await;

    let q = "query($e: String!) { event(slug: $e) { results { \
               ranking { projectExternalId rank } \
               certainty { draws \
                 places { rank probability atLeast entry { projectExternalId rank } } \
                 pairs { probability better { projectExternalId } worse { projectExternalId } } } } } }";
    let public = app.ok(None, q, json!({ "e": slug })).await;
    let results = &public["event"]["results"];
    let c = &results["certainty"];
    assert_eq!(c["draws"], 50, "{public}");
    let places = c["places"].as_array().expect("places");
    let ranking = results["ranking"].as_array().expect("ranking");
    assert_eq!(places.len(), ranking.len().min(10), "{public}");
    for (place, entry) in places.iter().zip(ranking) {
        assert_eq!(
            place["entry"]["projectExternalId"],
            entry["projectExternalId"]
        );
        assert_eq!(place["rank"], entry["rank"]);
        let (p, at_least) = (
            place["probability"].as_f64().expect("a probability"),
            place["atLeast"].as_f64().expect("a probability"),
        );
        assert!(
            (0.0..=1.0).contains(&p) && p <= at_least && at_least <= 1.0,
            "{place}"
        );
    }
    let n = places.len();
    let pairs = c["pairs"].as_array().expect("pairs");
    assert_eq!(pairs.len(), n * (n - 1) / 2, "every pair among the places");
    assert!(pairs.iter().all(|p| {
        p["probability"]
            .as_f64()
            .is_some_and(|x| (0.0..=1.0).contains(&x))
    }));
    assert_eq!(
        pairs[0]["better"]["projectExternalId"], places[0]["entry"]["projectExternalId"],
        "pairs start with the first place"
    );
}
