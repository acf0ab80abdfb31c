//! Pairwise judging (issue 26) end to end: the organizers' judging mode, a judge walking
//! their route by table comparing and skipping until it is done, revisions, idempotent
//! retries, every refusal with its code and nothing written, and who may read comparisons.

use std::collections::BTreeMap;

use chrono::{Duration, Utc};
use serde_json::{Value, json};

use crate::harness::{App, assert_bad_input, assert_code, data, op, rfc3339, str_at, unique};

e2e! {
    a_judge_walks_their_route_by_table_until_it_is_done,
    pairwise_refusals_have_their_codes_and_write_nothing,
    comparisons_are_the_judges_and_the_organizers_only,
    copies_of_one_tap_sent_together_count_once,
    a_track_judged_by_comparisons_beside_tracks_judged_by_scores,
    comparisons_rank_the_leaderboard_and_a_published_run_verifies_offline,
    a_comparison_and_its_revision_reach_the_live_leaderboard,
}

/// An event with judging about to open (in an hour), six submitted projects of three
/// teams, five of them at tables, and two judges, the second recused from the third team.
struct Floor {
    admin: String,
    slug: String,
    participant: String,
    judge: String,
    judge_email: String,
    recused_judge: String,
    /// Project ids by title; titles say the table ("A1") or "untabled".
    projects: BTreeMap<String, String>,
}

impl Floor {
    fn id(&self, title: &str) -> &str {
        &self.projects[title]
    }
    /// The title of the project with `id`.
    fn title(&self, id: &str) -> String {
        self.projects
            .iter()
            .find(|(_, v)| v.as_str() == id)
            .map(|(k, _)| k.clone())
            .unwrap_or_else(|| panic!("no project {id}"))
    }
}

/// The round of the floor: tables in natural order, then the project without a table.
const ROUND: [&str; 6] = ["A1", "A2", "A9", "A10", "B1", "untabled"];

async fn floor(app: &App) -> Floor {
    let admin = app.site_admin().await;
    let slug = format!("pairwise-{}", unique());
    let now = Utc::now();
    app.ok(
        Some(&admin),
        op("CreateEvent"),
        json!({ "input": {
            "slug": slug, "name": "Expo",
            "submissionsOpen": rfc3339(now - Duration::days(1)), "submissionsClose": rfc3339(now + Duration::days(1)),
            "judgingOpen": rfc3339(now + Duration::hours(1)), "judgingClose": rfc3339(now + Duration::days(1)),
            "registration": "OPEN",
        }}),
    )
    .await;
    let track = app.create_track(&admin, &slug, "Main").await;
    // Three teams of two projects; the tables are handed out out of order on purpose.
    let mut projects = BTreeMap::new();
    let mut participant = String::new();
    let mut third_team = String::new();
    for (n, titles) in [["A10", "untabled"], ["A2", "B1"], ["A9", "A1"]]
        .iter()
        .enumerate()
    {
        let token = app.sign_up(&format!("p{n}-{}@example.org", unique())).await;
        app.register(&token, &slug).await;
        let (team, _) = app.create_team(&token, &slug, &format!("Team {n}")).await;
        for title in titles {
            let id = app.create_project(&token, &slug, title, &track).await;
            app.submit_project(&token, &id).await;
            if *title != "untabled" {
                let d = app
                    .ok(
                        Some(&admin),
                        op("SetProjectTable"),
                        json!({ "project": id, "table": title }),
                    )
                    .await;
                assert_eq!(d["setProjectTable"]["table"], *title);
            }
            projects.insert(title.to_string(), id);
        }
        if n == 0 {
            participant = token;
        }
        third_team = team;
    }
    let mut judges = vec![];
    for name in ["one", "two"] {
        let email = format!("judge-{name}-{}@example.org", unique());
        let token = app.sign_up(&email).await;
        let id = app.grant(&admin, &slug, &email, "JUDGE").await;
        judges.push((token, id, email));
    }
    app.ok(
        Some(&admin),
        "mutation($e: String!, $j: ID!, $t: ID!) { recuseJudge(event: $e, judge: $j, team: $t, reason: \"mentor\") { id } }",
        json!({ "e": slug, "j": judges[1].1, "t": third_team }),
    )
    .await;
    let recused_judge = judges.pop().unwrap().0;
    let (judge, _, judge_email) = judges.pop().unwrap();
    Floor {
        admin,
        slug,
        participant,
        judge,
        judge_email,
        recused_judge,
        projects,
    }
}

/// Moves the judging window: opens it an hour ago and closes it at `close` from now.
async fn judging_window(app: &App, f: &Floor, close: Duration) {
    let now = Utc::now();
    app.ok(
        Some(&f.admin),
        op("UpdateEvent"),
        json!({ "event": f.slug, "input": {
            "judgingOpen": rfc3339(now - Duration::hours(1)), "judgingClose": rfc3339(now + close),
        }}),
    )
    .await;
}

/// Sets the mode to PAIRWISE and opens judging.
async fn pairwise_and_open(app: &App, f: &Floor) {
    let d = app
        .ok(
            Some(&f.admin),
            op("SetJudgingMode"),
            json!({ "event": f.slug, "mode": "PAIRWISE" }),
        )
        .await;
    assert_eq!(d["setJudgingMode"]["judgingMode"], "PAIRWISE");
    judging_window(app, f, Duration::days(1)).await;
}

/// The judge's next pair: (previous title, current title, remaining), or None when done.
async fn next(
    app: &App,
    f: &Floor,
    token: &str,
    seen: Option<&str>,
) -> Option<(Option<String>, String, i64)> {
    let d = app
        .ok(
            Some(token),
            op("MyNextComparison"),
            json!({ "event": f.slug, "seen": seen }),
        )
        .await;
    pair_of(f, &d["event"]["myNextComparison"])
}

fn pair_of(f: &Floor, c: &Value) -> Option<(Option<String>, String, i64)> {
    if c.is_null() {
        return None;
    }
    assert!(c["id"].is_null(), "the next pair is not compared yet: {c}");
    assert_eq!(c["version"], 0, "{c}");
    let previous = c["previous"]["id"].as_str().map(|id| f.title(id));
    let current = f.title(&str_at(c, "/current/id"));
    assert_eq!(
        c["current"]["table"].as_str().unwrap_or("untabled"),
        current,
        "the judge is shown the table: {c}"
    );
    Some((
        previous,
        current,
        c["remaining"].as_i64().expect("remaining"),
    ))
}

async fn compare(app: &App, f: &Floor, better: &str, worse: &str, key: Option<&str>) -> Value {
    app.gql_as(
        &f.judge,
        op("CompareProjects"),
        json!({ "event": f.slug, "better": f.id(better), "worse": f.id(worse), "idempotencyKey": key }),
    )
    .await
}

/// The judge starts at a table, walks the round of the floor in natural table order
/// comparing each project with the one before, skips one that is not there, revises a
/// comparison, retries one with its idempotency key (one audit entry, the same answer),
/// and is told the route is done when every project was compared or skipped.
async fn a_judge_walks_their_route_by_table_until_it_is_done(app: App) {
    let f = floor(&app).await;
    pairwise_and_open(&app, &f).await;

    // The first call gives just a current project: the start of the judge's route.
    let (previous, first, remaining) = next(&app, &f, &f.judge, None).await.expect("a route");
    assert_eq!(previous, None);
    assert_eq!(remaining, 6, "the whole floor is on the judge's route");
    // Two judges start evenly spaced: at the first or the fourth project of the round.
    let start = ROUND
        .iter()
        .position(|t| *t == first)
        .expect("on the round");
    assert!(start == 0 || start == 3, "started at {first}");
    let at = |k: usize| ROUND[(start + k) % ROUND.len()].to_string();
    // Asking again changes nothing: a query writes nothing.
    assert_eq!(
        next(&app, &f, &f.judge, None).await,
        Some((None, first.clone(), 6))
    );

    // Having seen the first, the judge is asked about the next table against it.
    let pair = next(&app, &f, &f.judge, Some(f.id(&first))).await;
    assert_eq!(pair, Some((Some(at(0)), at(1), 5)));
    let head = app.audit_head().await;
    let r = compare(&app, &f, &at(1), &at(0), Some("tap-1")).await;
    let c = data(&r)["compareProjects"].clone();
    assert_eq!(app.audit_head().await, head + 1, "one audit entry: {r}");
    assert_eq!(c["version"], 1);
    assert_eq!(c["better"]["id"], f.id(&at(1)));
    assert_eq!(c["worse"]["id"], f.id(&at(0)));
    assert_eq!(c["previous"]["id"], f.id(&at(0)));
    assert_eq!(c["current"]["id"], f.id(&at(1)));
    assert!(c["revisedAt"].is_null());
    // The phone sends the same tap again (its network dropped): the same comparison, and
    // nothing more is written.
    let again = compare(&app, &f, &at(1), &at(0), Some("tap-1")).await;
    assert_eq!(data(&again)["compareProjects"], c, "{again}");
    assert_eq!(app.audit_head().await, head + 1, "a retry writes nothing");
    // The same key for another comparison is a conflict.
    let other = compare(&app, &f, &at(0), &at(1), Some("tap-1")).await;
    assert_code(&other, "CONFLICT");
    assert_eq!(app.audit_head().await, head + 1);

    // The next table, against the project just compared.
    assert_eq!(
        next(&app, &f, &f.judge, None).await,
        Some((Some(at(1)), at(2), 4))
    );
    // Its team is not at the table: skipped, and the answer is the pair after it.
    let r = app
        .gql_as(
            &f.judge,
            op("SkipComparison"),
            json!({ "event": f.slug, "project": f.id(&at(2)), "reason": "not at the table" }),
        )
        .await;
    assert_eq!(app.audit_head().await, head + 2, "{r}");
    assert_eq!(
        pair_of(&f, &data(&r)["skipComparison"]),
        Some((Some(at(1)), at(3), 3))
    );
    let skip_again = app
        .gql_as(
            &f.judge,
            op("SkipComparison"),
            json!({ "event": f.slug, "project": f.id(&at(2)), "reason": "still not there" }),
        )
        .await;
    assert_code(&skip_again, "CONFLICT");

    // The rest of the round, one comparison each, until nothing is left.
    for k in 3..6 {
        let pair = next(&app, &f, &f.judge, None).await;
        let previous = if k == 3 { at(1) } else { at(k - 1) };
        assert_eq!(pair, Some((Some(previous.clone()), at(k), (6 - k) as i64)));
        let r = compare(&app, &f, &previous, &at(k), Some(&format!("tap-{k}"))).await;
        assert_eq!(data(&r)["compareProjects"]["current"]["id"], f.id(&at(k)));
    }
    assert_eq!(
        next(&app, &f, &f.judge, None).await,
        None,
        "the route is done"
    );
    assert_eq!(app.audit_head().await, head + 5);

    // A revision: the first comparison, the other way round.
    let r = compare(&app, &f, &at(0), &at(1), None).await;
    let revised = &data(&r)["compareProjects"];
    assert_eq!(revised["id"], c["id"], "the same comparison, revised");
    assert_eq!(revised["version"], 2);
    assert_eq!(revised["better"]["id"], f.id(&at(0)));
    assert!(revised["revisedAt"].is_string(), "{r}");
    assert_eq!(app.audit_head().await, head + 6);
    // The same way again changes nothing and is refused.
    assert_code(&compare(&app, &f, &at(0), &at(1), None).await, "CONFLICT");
    assert_eq!(app.audit_head().await, head + 6);

    // The judge's own list: four comparisons, the first revised; the organizers see them.
    let mine = app
        .ok(
            Some(&f.judge),
            op("MyComparisons"),
            json!({ "event": f.slug }),
        )
        .await;
    let versions: Vec<i64> = mine["event"]["myComparisons"]
        .as_array()
        .expect("myComparisons")
        .iter()
        .map(|c| c["version"].as_i64().expect("version"))
        .collect();
    assert_eq!(versions, [2, 1, 1, 1]);
    let all = app
        .ok(
            Some(&f.admin),
            op("EventComparisons"),
            json!({ "event": f.slug }),
        )
        .await;
    assert_eq!(all["event"]["comparisons"]["totalCount"], 4);
    // The audit log names what happened, in order.
    let log = crate::audit::audit_log(&app, &f.admin, &f.slug).await;
    let actions: Vec<&str> = log
        .iter()
        .filter_map(|e| e["action"].as_str())
        .filter(|a| a.starts_with("comparison."))
        .collect();
    assert_eq!(
        actions,
        [
            "comparison.recorded",
            "comparison.skipped",
            "comparison.recorded",
            "comparison.recorded",
            "comparison.recorded",
            "comparison.revised"
        ]
    );
}

/// Every refusal, each with its code, and none of them writes anything.
async fn pairwise_refusals_have_their_codes_and_write_nothing(app: App) {
    let f = floor(&app).await;
    let (a1, a2) = (f.id("A1").to_owned(), f.id("A2").to_owned());
    let vars =
        |better: &str, worse: &str| json!({ "event": f.slug, "better": better, "worse": worse });
    let head = app.audit_head().await;

    // By scores only (the default): no comparisons.
    let d = app
        .ok(
            None,
            "query($e: String!) { event(slug: $e) { judgingMode } }",
            json!({ "e": f.slug }),
        )
        .await;
    assert_eq!(d["event"]["judgingMode"], "SCORES", "anyone reads the mode");
    let r = app
        .gql_as(&f.judge, op("CompareProjects"), vars(&a1, &a2))
        .await;
    assert_code(&r, "CONFLICT");
    assert_eq!(
        next(&app, &f, &f.judge, None).await,
        None,
        "no route in a SCORES event"
    );

    // Only organizers set the mode, and only to a new one.
    let mode = |m: &str| json!({ "event": f.slug, "mode": m });
    let r = app
        .gql_as(&f.participant, op("SetJudgingMode"), mode("PAIRWISE"))
        .await;
    assert_code(&r, "FORBIDDEN");
    let r = app
        .gql_as(&f.judge, op("SetJudgingMode"), mode("PAIRWISE"))
        .await;
    assert_code(&r, "FORBIDDEN");
    let r = app.gql(op("SetJudgingMode"), mode("PAIRWISE")).await;
    assert_code(&r, "UNAUTHENTICATED");
    let r = app
        .gql_as(&f.admin, op("SetJudgingMode"), mode("SCORES"))
        .await;
    assert_code(&r, "CONFLICT");
    assert_eq!(app.audit_head().await, head, "refusals write nothing");
    app.ok(Some(&f.admin), op("SetJudgingMode"), mode("BOTH"))
        .await;
    let head = head + 1;
    assert_eq!(app.audit_head().await, head);

    // Before judging opens.
    let r = app
        .gql_as(&f.judge, op("CompareProjects"), vars(&a1, &a2))
        .await;
    assert_code(&r, "WINDOW_CLOSED");
    judging_window(&app, &f, Duration::days(1)).await;
    // Once judging is open the mode is fixed.
    let r = app
        .gql_as(&f.admin, op("SetJudgingMode"), mode("PAIRWISE"))
        .await;
    assert_code(&r, "WINDOW_CLOSED");

    // Who may compare: the event's judges only.
    let r = app
        .gql_as(&f.participant, op("CompareProjects"), vars(&a1, &a2))
        .await;
    assert_code(&r, "FORBIDDEN");
    let r = app
        .gql_as(&f.admin, op("CompareProjects"), vars(&a1, &a2))
        .await;
    assert_code(&r, "FORBIDDEN");
    let r = app.gql(op("CompareProjects"), vars(&a1, &a2)).await;
    assert_code(&r, "UNAUTHENTICATED");
    // A judge of another event.
    let other = format!("other-{}", unique());
    app.create_event(&f.admin, &other, 4).await;
    let email = format!("other-judge-{}@example.org", unique());
    let outsider = app.sign_up(&email).await;
    app.grant(&f.admin, &other, &email, "JUDGE").await;
    let head = app.audit_head().await;
    let r = app
        .gql_as(&outsider, op("CompareProjects"), vars(&a1, &a2))
        .await;
    assert_code(&r, "FORBIDDEN");
    let r = app
        .gql_as(
            &outsider,
            op("CompareProjects"),
            json!({ "event": other, "better": a1, "worse": a2 }),
        )
        .await;
    assert_bad_input(&r, &["better"]);

    // What is compared.
    let r = app
        .gql_as(&f.judge, op("CompareProjects"), vars(&a1, &a1))
        .await;
    assert_bad_input(&r, &["worse"]);
    let r = app
        .gql_as(
            &f.judge,
            op("CompareProjects"),
            vars("prj_no_such_thing", &a2),
        )
        .await;
    assert_bad_input(&r, &["better"]);
    let r = app
        .gql_as(
            &f.judge,
            op("CompareProjects"),
            vars(&a1, "prj_no_such_thing"),
        )
        .await;
    assert_bad_input(&r, &["worse"]);
    let r = app
        .gql_as(
            &f.judge,
            op("MyNextComparison"),
            json!({ "event": f.slug, "seen": "prj_no_such_thing" }),
        )
        .await;
    assert_bad_input(&r, &["seen"]);
    // The recused judge may not compare the third team's projects (A9, A1), nor skip one.
    let r = app
        .gql_as(&f.recused_judge, op("CompareProjects"), vars(&a2, &a1))
        .await;
    assert_code(&r, "FORBIDDEN");
    let r = app
        .gql_as(
            &f.recused_judge,
            op("SkipComparison"),
            json!({ "event": f.slug, "project": a1, "reason": "not there" }),
        )
        .await;
    assert_code(&r, "FORBIDDEN");
    // A skip needs a reason.
    let r = app
        .gql_as(
            &f.judge,
            op("SkipComparison"),
            json!({ "event": f.slug, "project": a1, "reason": "  " }),
        )
        .await;
    assert_bad_input(&r, &["reason"]);
    assert_eq!(app.audit_head().await, head, "refusals write nothing");
    // The recused judge's route leaves the third team out.
    let mut seen = vec![];
    let mut pair = next(&app, &f, &f.recused_judge, None).await;
    while let Some((_, current, _)) = pair {
        seen.push(current.clone());
        let d = app
            .ok(
                Some(&f.recused_judge),
                op("SkipComparison"),
                json!({ "event": f.slug, "project": f.id(&current), "reason": "not there" }),
            )
            .await;
        pair = pair_of(&f, &d["skipComparison"]);
    }
    seen.sort();
    assert_eq!(seen, ["A10", "A2", "B1", "untabled"]);

    // After judging closes.
    app.ok(Some(&f.judge), op("CompareProjects"), vars(&a1, &a2))
        .await;
    judging_window(&app, &f, Duration::minutes(-1)).await;
    let head = app.audit_head().await;
    let r = app
        .gql_as(&f.judge, op("CompareProjects"), vars(&a2, &a1))
        .await;
    assert_code(&r, "WINDOW_CLOSED");
    let r = app
        .gql_as(
            &f.judge,
            op("SkipComparison"),
            json!({ "event": f.slug, "project": f.id("B1"), "reason": "closed" }),
        )
        .await;
    assert_code(&r, "WINDOW_CLOSED");
    assert_eq!(app.audit_head().await, head, "refusals write nothing");
}

/// Comparisons are read by the judge who made them and the organizers: not by another
/// judge, a participant or an anonymous caller.
async fn comparisons_are_the_judges_and_the_organizers_only(app: App) {
    let f = floor(&app).await;
    pairwise_and_open(&app, &f).await;
    let d = app
        .ok(
            Some(&f.judge),
            op("CompareProjects"),
            json!({ "event": f.slug, "better": f.id("A2"), "worse": f.id("B1") }),
        )
        .await;
    let id = str_at(&d, "/compareProjects/id");
    let q = json!({ "event": f.slug });
    // The judge and the organizers see it.
    let mine = app.ok(Some(&f.judge), op("MyComparisons"), q.clone()).await;
    assert_eq!(mine["event"]["myComparisons"][0]["id"], id.as_str());
    let all = app
        .ok(Some(&f.admin), op("EventComparisons"), q.clone())
        .await;
    assert_eq!(
        all["event"]["comparisons"]["edges"][0]["node"]["id"],
        id.as_str()
    );
    // A comparison is part of the record: the judge's role cannot be revoked from under it.
    let head = app.audit_head().await;
    let r = app
        .gql_as(
            &f.admin,
            op("RevokeRole"),
            json!({ "event": f.slug, "email": f.judge_email, "role": "JUDGE" }),
        )
        .await;
    assert_code(&r, "CONFLICT");
    assert_eq!(app.audit_head().await, head);
    // Nobody else does, by any field.
    for (who, token) in [
        ("participant", Some(f.participant.as_str())),
        ("other judge", Some(f.recused_judge.as_str())),
        ("anonymous", None),
    ] {
        let r = app.gql_opt(token, op("EventComparisons"), q.clone()).await;
        let code = if token.is_some() {
            "FORBIDDEN"
        } else {
            "UNAUTHENTICATED"
        };
        assert_code(&r, code);
        assert!(!r.to_string().contains(&id), "{who}: {r}");
        let r = app.gql_opt(token, op("MyComparisons"), q.clone()).await;
        assert!(!r.to_string().contains(&id), "{who}: {r}");
        if token.is_some() {
            assert_eq!(data(&r)["event"]["myComparisons"], json!([]), "{who}");
        } else {
            assert_code(&r, "UNAUTHENTICATED");
        }
        let r = app.gql_opt(token, op("MyNextComparison"), q.clone()).await;
        if token == Some(f.participant.as_str()) {
            assert_eq!(data(&r)["event"]["myNextComparison"], Value::Null, "{who}");
        }
    }
}

/// A phone that lost its network sends its queued tap again while the first copy is still
/// being written: every copy, sent at the same time, gets the same comparison, and it is
/// written once (one row, one audit entry).
async fn copies_of_one_tap_sent_together_count_once(app: App) {
    let f = floor(&app).await;
    pairwise_and_open(&app, &f).await;
    let head = app.audit_head().await;
    let copies = (0..24).map(|_| compare(&app, &f, "A2", "A1", Some("offline-tap")));
    let answers = futures_util::future::join_all(copies).await;
    let ids: Vec<String> = answers
        .iter()
        .map(|r| str_at(data(r), "/compareProjects/id"))
        .collect();
    assert!(ids.iter().all(|id| *id == ids[0]), "{answers:?}");
    for r in &answers {
        assert_eq!(data(r)["compareProjects"]["version"], 1, "{r}");
    }
    assert_eq!(app.audit_head().await, head + 1, "written once");
    let all = app
        .ok(
            Some(&f.admin),
            op("EventComparisons"),
            json!({ "event": f.slug }),
        )
        .await;
    assert_eq!(all["event"]["comparisons"]["totalCount"], 1);
}

/// The judging mode of one track: the expo floor's track is judged by comparisons while the
/// event (and its talks track) is judged by the rubric. The judges' routes hold only the
/// floor's projects; a comparison of a talk is refused; a track set to its event's mode
/// follows the event again; and the mode is fixed once judging opens, as the event's is.
async fn a_track_judged_by_comparisons_beside_tracks_judged_by_scores(app: App) {
    let f = floor(&app).await;
    let talks = app.create_track(&f.admin, &f.slug, "Talks").await;
    let speaker = app
        .sign_up(&format!("speaker-{}@example.org", unique()))
        .await;
    app.register(&speaker, &f.slug).await;
    app.create_team(&speaker, &f.slug, "Speakers").await;
    let talk = app
        .create_project(&speaker, &f.slug, "A talk", &talks)
        .await;
    app.submit_project(&speaker, &talk).await;
    let set = |mode: &'static str, track: Option<String>| {
        app.gql_as(
            &f.admin,
            op("SetJudgingMode"),
            json!({ "event": f.slug, "mode": mode, "track": track }),
        )
    };
    let modes = |d: &Value| -> BTreeMap<String, Value> {
        d["setJudgingMode"]["tracks"]
            .as_array()
            .expect("tracks")
            .iter()
            .map(|t| (str_at(t, "/name"), t["judgingMode"].clone()))
            .collect()
    };
    let d = app
        .ok(
            None,
            "query($e: String!) { event(slug: $e) { judgingMode tracks { id name judgingMode } } }",
            json!({ "e": f.slug }),
        )
        .await;
    assert_eq!(d["event"]["judgingMode"], "SCORES");
    let main = d["event"]["tracks"]
        .as_array()
        .expect("tracks")
        .iter()
        .find(|t| t["name"] == "Main")
        .map(|t| str_at(t, "/id"))
        .expect("the Main track");

    // The floor's track by comparisons: one audit entry; the event stays as it was.
    let head = app.audit_head().await;
    let r = set("PAIRWISE", Some(main.clone())).await;
    assert_eq!(app.audit_head().await, head + 1, "{r}");
    assert_eq!(data(&r)["setJudgingMode"]["judgingMode"], "SCORES");
    assert_eq!(modes(data(&r))["Main"], "PAIRWISE");
    assert_eq!(modes(data(&r))["Talks"], Value::Null);
    // The same again changes nothing: CONFLICT, nothing written.
    assert_code(&set("PAIRWISE", Some(main.clone())).await, "CONFLICT");
    // A track of no event of this one's: BAD_USER_INPUT naming `track`.
    assert_bad_input(&set("BOTH", Some("trk_nope".into())).await, &["track"]);
    // The talks by both, then by the event's mode: it follows the event again.
    let r = set("BOTH", Some(talks.clone())).await;
    assert_eq!(modes(data(&r))["Talks"], "BOTH");
    let r = set("SCORES", Some(talks.clone())).await;
    assert_eq!(modes(data(&r))["Talks"], Value::Null, "{r}");
    assert_eq!(app.audit_head().await, head + 3);

    judging_window(&app, &f, Duration::days(1)).await;
    // The route is the floor's six projects; the talk is on nobody's route.
    let (previous, first, remaining) = next(&app, &f, &f.judge, None).await.expect("a route");
    assert_eq!((previous, remaining), (None, 6), "{first}");
    // A comparison of the talk is refused, and writes nothing.
    let head = app.audit_head().await;
    let r = app
        .gql_as(
            &f.judge,
            op("CompareProjects"),
            json!({ "event": f.slug, "better": talk, "worse": f.id("A1") }),
        )
        .await;
    assert_code(&r, "CONFLICT");
    let r = app
        .gql_as(
            &f.judge,
            op("SkipComparison"),
            json!({ "event": f.slug, "project": talk, "reason": "not here" }),
        )
        .await;
    assert_code(&r, "CONFLICT");
    assert_eq!(app.audit_head().await, head, "a refusal writes nothing");
    // Two projects of the floor compare.
    data(&compare(&app, &f, "A2", "A1", None).await);
    // Once judging is open the mode is fixed, the track's as the event's.
    assert_code(&set("SCORES", Some(main)).await, "WINDOW_CLOSED");
}

/// The organizers' leaderboard: (title, rank, rank low, rank high) of the ranked projects,
/// best first.
async fn leaderboard(app: &App, f: &Floor) -> Vec<(String, i64, i64, i64)> {
    let d = app
        .ok(
            Some(&f.admin),
            "query($e: String!) { event(slug: $e) { leaderboard { projects { project { id } rank rankLow rankHigh } } } }",
            json!({ "e": f.slug }),
        )
        .await;
    d["event"]["leaderboard"]["projects"]
        .as_array()
        .expect("projects")
        .iter()
        .filter(|p| !p["rank"].is_null())
        .map(|p| {
            (
                f.title(&str_at(p, "/project/id")),
                p["rank"].as_i64().expect("rank"),
                p["rankLow"].as_i64().expect("rankLow"),
                p["rankHigh"].as_i64().expect("rankHigh"),
            )
        })
        .collect()
}

/// Comparisons made through GraphQL are calibrated (engine `verdict-calibrate/8`): before
/// any, nothing is ranked; after a judge's comparisons that order the floor, the
/// leaderboard ranks every project in that order; a run published from them exports as a
/// bundle that `verdict results verify` re-computes offline and passes.
async fn comparisons_rank_the_leaderboard_and_a_published_run_verifies_offline(app: App) {
    let f = floor(&app).await;
    pairwise_and_open(&app, &f).await;
    assert!(
        leaderboard(&app, &f).await.is_empty(),
        "nothing is ranked before any comparison"
    );
    // The judge's verdicts follow one order: A1 > A2 > A9 > A10 > B1 > untabled, each
    // project against its neighbours one and two places down.
    let order = ["A1", "A2", "A9", "A10", "B1", "untabled"];
    for gap in [1, 2] {
        for w in order.windows(gap + 1) {
            let d = compare(&app, &f, w[0], w[gap], None).await;
            assert!(d["errors"].is_null(), "{d}");
        }
    }
    let board = leaderboard(&app, &f).await;
    let titles: Vec<&str> = board.iter().map(|b| b.0.as_str()).collect();
    assert_eq!(
        titles, order,
        "the leaderboard follows the comparisons: {board:?}"
    );
    for (title, rank, low, high) in &board {
        assert!(
            low <= rank && rank <= high,
            "{title}: {rank} in {low}..{high}"
        );
    }

    let run = app
        .ok(
            Some(&f.admin),
            "mutation($e: String!) { runCalibration(event: $e, seed: 7, bootstrap: 50) { id engineVersion projects { rank } } }",
            json!({ "e": f.slug }),
        )
        .await;
    assert_eq!(
        run["runCalibration"]["engineVersion"],
        "verdict-calibrate/8"
    );
    app.ok(
        Some(&f.admin),
        "mutation($e: String!, $r: ID!) { publishResults(event: $e, run: $r, final: true) { version } }",
        json!({ "e": f.slug, "r": run["runCalibration"]["id"] }),
    )
    .await;
    let dir = tempfile::tempdir().expect("tempdir");
    let bundle = dir.path().join("bundle");
    let out = app
        .cli(&[
            "results",
            "export",
            "--event",
            &f.slug,
            bundle.to_str().expect("utf-8"),
        ])
        .await;
    assert!(out.success(), "export: {out:?}");
    let inputs = std::fs::read_to_string(bundle.join("inputs.json")).expect("inputs.json");
    assert!(
        inputs.contains("\"comparisons\""),
        "the pinned inputs carry the comparisons"
    );
    let verified = std::process::Command::new(env!("CARGO_BIN_EXE_verdict"))
        .args(["results", "verify"])
        .arg(&bundle)
        .env_remove("VERDICT_DATABASE_URL")
        .output()
        .expect("run verify");
    let stdout = String::from_utf8_lossy(&verified.stdout);
    assert_eq!(verified.status.code(), Some(0), "verify: {stdout}");
    assert!(
        stdout.contains("verdict-calibrate/8"),
        "the verifier re-ran engine v8: {stdout}"
    );
}

const LIVE_BOARD: &str = "subscription($e: String!) { leaderboardUpdated(event: $e) { computedAt projects { project { id } rank } } }";

/// The titles a `leaderboardUpdated` message ranks, best first.
fn ranked_titles(f: &Floor, msg: &Value) -> Vec<String> {
    assert_eq!(msg["type"], "next", "{msg}");
    let projects = msg["payload"]["data"]["leaderboardUpdated"]["projects"]
        .as_array()
        .unwrap_or_else(|| panic!("a leaderboard: {msg}"));
    let mut ranked: Vec<(i64, String)> = projects
        .iter()
        .filter(|p| !p["rank"].is_null())
        .map(|p| {
            (
                p["rank"].as_i64().expect("rank"),
                f.title(&str_at(p, "/project/id")),
            )
        })
        .collect();
    ranked.sort();
    ranked.into_iter().map(|(_, title)| title).collect()
}

/// The organizers' live leaderboard hears of comparisons as it hears of saved reviews: a
/// comparison recorded, then revised the other way round, each reach a `leaderboardUpdated`
/// subscriber over `/graphql/ws` with the ranking they make, without a reload.
async fn a_comparison_and_its_revision_reach_the_live_leaderboard(app: App) {
    let f = floor(&app).await;
    pairwise_and_open(&app, &f).await;
    let mut ws = app
        .ws(json!({ "authorization": format!("Bearer {}", f.admin) }))
        .await;
    ws.subscribe("board", LIVE_BOARD, json!({ "e": f.slug }))
        .await;
    crate::subscription::running(&app, 1).await;

    data(&compare(&app, &f, "A2", "A1", None).await);
    let msg = ws
        .next_json(std::time::Duration::from_secs(20))
        .await
        .expect("the leaderboard is recomputed after a comparison");
    assert_eq!(ranked_titles(&f, &msg), ["A2", "A1"], "{msg}");

    // The judge changes their mind: the revision moves the leaderboard too.
    let d = compare(&app, &f, "A1", "A2", None).await;
    assert_eq!(data(&d)["compareProjects"]["version"], 2, "{d}");
    let msg = ws
        .next_json(std::time::Duration::from_secs(20))
        .await
        .expect("the leaderboard is recomputed after a revised comparison");
    assert_eq!(ranked_titles(&f, &msg), ["A1", "A2"], "{msg}");
}
