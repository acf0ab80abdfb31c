use super::*;

pub(super) const REVIEWS: &str = "query($p: ID!) { project(id: $p) { reviews { id comment judge { id } scores { criterion value } } } }";

pub(super) async fn judges_review_privately_inside_the_window(app: App) {
    let j = judged_event(&app).await;
    let scores = json!([{ "criterion": "impact", "value": 4 }]);

    // A draft, then the submission; every save is a new version.
    let d = app
        .ok(
            Some(&j.judge_a),
            op("SaveReview"),
            json!({ "assignment": j.assignment_a, "scores": scores, "comment": "solid" }),
        )
        .await;
    assert_eq!(d["saveReview"]["version"], 1);
    assert_eq!(d["saveReview"]["submitted"], false);
    let incomplete = app
        .gql_as(
            &j.judge_a,
            op("SaveReview"),
            json!({ "assignment": j.assignment_a, "scores": [], "submit": true }),
        )
        .await;
    assert_bad_input(&incomplete, &["scores"]);
    let d = app
        .ok(Some(&j.judge_a), op("SaveReview"), json!({ "assignment": j.assignment_a, "scores": [{ "criterion": "craft", "value": 2 }], "submit": true }))
        .await;
    assert_eq!(d["saveReview"]["version"], 2);
    assert_eq!(d["saveReview"]["submitted"], true);
    assert_eq!(
        d["saveReview"]["scores"],
        json!([{ "criterion": "craft", "value": 2 }, { "criterion": "impact", "value": 4 }])
    );

    // Bad scores name the field and write nothing.
    let head = app.audit_head().await;
    for bad in [
        json!([{ "criterion": "impact", "value": 9 }]),
        json!([{ "criterion": "nope", "value": 3 }]),
    ] {
        let r = app
            .gql_as(
                &j.judge_a,
                op("SaveReview"),
                json!({ "assignment": j.assignment_a, "scores": bad }),
            )
            .await;
        assert_bad_input(&r, &["scores"]);
    }
    // Nobody else writes this review.
    let r = app
        .gql_as(
            &j.judge_b,
            op("SaveReview"),
            json!({ "assignment": j.assignment_a, "scores": scores }),
        )
        .await;
    assert_code(&r, "NOT_FOUND");
    let r = app
        .gql_as(
            &j.participant,
            op("SaveReview"),
            json!({ "assignment": j.assignment_a, "scores": scores }),
        )
        .await;
    assert_code(&r, "NOT_FOUND");
    let r = app
        .gql_as(
            &j.admin,
            op("SaveReview"),
            json!({ "assignment": j.assignment_a, "scores": scores }),
        )
        .await;
    assert_code(&r, "FORBIDDEN");
    assert_eq!(app.audit_head().await, head, "refused saves write nothing");

    // Who reads which review.
    app.ok(
        Some(&j.judge_b),
        op("SaveReview"),
        json!({ "assignment": j.assignment_b, "scores": scores, "comment": "judge b thinks" }),
    )
    .await;
    let count = |v: &Value| {
        v["project"]["reviews"]
            .as_array()
            .map(Vec::len)
            .unwrap_or(0)
    };
    let org = app
        .ok(Some(&j.admin), REVIEWS, json!({ "p": j.project }))
        .await;
    assert_eq!(count(&org), 2, "organizers read every review");
    let own = app
        .ok(Some(&j.judge_a), REVIEWS, json!({ "p": j.project }))
        .await;
    assert_eq!(count(&own), 1, "a judge reads only their own");
    assert_eq!(own["project"]["reviews"][0]["comment"], "solid");
    let team = app
        .ok(Some(&j.participant), REVIEWS, json!({ "p": j.project }))
        .await;
    assert_eq!(count(&team), 0, "the team reads no individual score");
    let anon = app.ok(None, REVIEWS, json!({ "p": j.project })).await;
    assert_eq!(count(&anon), 0, "the public reads no individual score");
    let resp = app
        .gql_resp(Some(&j.judge_a), REVIEWS, json!({ "p": j.project }))
        .await;
    assert_eq!(
        resp.header("cache-control").as_deref(),
        Some("private, no-store")
    );

    // The judge's queue.
    let q = app
        .ok(
            Some(&j.judge_b),
            "query($e: String!) { event(slug: $e) { myProgress { done total } nextAssignment { id } myAssignments { id status } } }",
            json!({ "e": j.slug }),
        )
        .await;
    assert_eq!(q["event"]["myProgress"], json!({ "done": 0, "total": 1 }));
    assert_eq!(q["event"]["nextAssignment"]["id"], j.assignment_b.as_str());

    // Scores exist: the rubric's shape is frozen, names are not.
    let set = op("SetCriterion");
    let r = app
        .gql_as(
            &j.admin,
            set,
            json!({ "event": j.slug, "input": { "key": "impact", "name": "impact", "weight": 2.0 } }),
        )
        .await;
    assert_code(&r, "CONFLICT");
    let r = app
        .gql_as(
            &j.admin,
            set,
            json!({ "event": j.slug, "input": { "key": "extra", "name": "Extra" } }),
        )
        .await;
    assert_code(&r, "CONFLICT");
    let r = app
        .ok(Some(&j.admin), set, json!({ "event": j.slug, "input": { "key": "impact", "name": "Impact on users", "position": 1 } }))
        .await;
    assert_eq!(r["setCriterion"]["name"], "Impact on users");

    // A recusal takes judge B off the team's projects and out of the results.
    let rec = app
        .ok(
            Some(&j.admin),
            "mutation($e: String!, $j: ID!, $t: ID!) { recuseJudge(event: $e, judge: $j, team: $t, reason: \"former colleague\") { id } }",
            json!({ "e": j.slug, "j": j.judge_b_id, "t": j.team }),
        )
        .await;
    assert!(rec["recuseJudge"]["id"].is_string());
    let r = app
        .gql_as(
            &j.judge_b,
            op("SaveReview"),
            json!({ "assignment": j.assignment_b, "scores": scores }),
        )
        .await;
    assert_code(&r, "CONFLICT");
    let r = app
        .gql_as(
            &j.admin,
            op("AssignJudge"),
            json!({ "event": j.slug, "judge": j.judge_b_id, "project": j.project }),
        )
        .await;
    assert_code(&r, "CONFLICT");

    // A scored assignment stays.
    let r = app
        .gql_as(
            &j.admin,
            "mutation($a: ID!) { unassignJudge(assignment: $a) }",
            json!({ "a": j.assignment_a }),
        )
        .await;
    assert_code(&r, "CONFLICT");

    // The window closes: no more saves, nothing written.
    let past = Utc::now() - Duration::minutes(1);
    app.ok(
        Some(&j.admin),
        op("UpdateEvent"),
        json!({ "event": j.slug, "input": { "judgingOpen": rfc3339(past - Duration::days(1)), "judgingClose": rfc3339(past) } }),
    )
    .await;
    let head = app.audit_head().await;
    let r = app
        .gql_as(
            &j.judge_a,
            op("SaveReview"),
            json!({ "assignment": j.assignment_a, "scores": scores }),
        )
        .await;
    assert_code(&r, "WINDOW_CLOSED");
    assert_eq!(app.audit_head().await, head);
}

pub(super) async fn auto_assign_plans_then_applies_once(app: App) {
    let admin = app.site_admin().await;
    let slug = format!("plan-{}", unique());
    app.create_event(&admin, &slug, 4).await;
    let track = app.create_track(&admin, &slug, "Main").await;
    for i in 0..6 {
        let p = app.sign_up(&format!("p{i}-{}@example.org", unique())).await;
        app.register(&p, &slug).await;
        app.create_team(&p, &slug, &format!("Team {i}")).await;
        let id = app
            .create_project(&p, &slug, &format!("Project {i}"), &track)
            .await;
        app.submit_project(&p, &id).await;
    }
    for i in 0..4 {
        let email = format!("j{i}-{}@example.org", unique());
        app.sign_up(&email).await;
        app.grant(&admin, &slug, &email, "JUDGE").await;
    }
    let plan = "mutation($e: String!, $apply: Boolean) { autoAssign(event: $e, k: 2, seed: 3, apply: $apply) {
        edges { judge project } coverage { project assigned shortfall } loads { judge load } components connected applied } }";
    let head = app.audit_head().await;
    let dry = app
        .ok(Some(&admin), plan, json!({ "e": slug, "apply": false }))
        .await;
    let dry = &dry["autoAssign"];
    assert_eq!(dry["edges"].as_array().map(Vec::len), Some(12));
    assert_eq!(dry["applied"], 0);
    assert_eq!(dry["connected"], true);
    assert!(
        dry["coverage"]
            .as_array()
            .unwrap()
            .iter()
            .all(|c| c["assigned"] == 2 && c["shortfall"] == 0)
    );
    assert!(
        dry["loads"]
            .as_array()
            .unwrap()
            .iter()
            .all(|l| l["load"] == 3),
        "balanced: {}",
        dry["loads"]
    );
    assert_eq!(app.audit_head().await, head, "a dry run writes nothing");
    let again = app
        .ok(Some(&admin), plan, json!({ "e": slug, "apply": false }))
        .await;
    assert_eq!(
        again["autoAssign"]["edges"], dry["edges"],
        "deterministic for a seed"
    );

    let applied = app
        .ok(Some(&admin), plan, json!({ "e": slug, "apply": true }))
        .await;
    assert_eq!(applied["autoAssign"]["applied"], 12);
    assert_eq!(
        app.audit_head().await,
        head + 1,
        "one audit entry for the whole plan"
    );
    let twice = app
        .ok(Some(&admin), plan, json!({ "e": slug, "apply": true }))
        .await;
    assert_eq!(
        twice["autoAssign"]["applied"], 0,
        "re-applying adds nothing"
    );
    let total = app
        .ok(
            Some(&admin),
            "query($e: String!) { event(slug: $e) { assignments(first: 100) { totalCount } } }",
            json!({ "e": slug }),
        )
        .await;
    assert_eq!(total["event"]["assignments"]["totalCount"], 12);
}

pub(super) async fn exports_neutralize_formulas_and_are_audited(app: App) {
    let admin = app.site_admin().await;
    import_fixture(&app).await;
    let q = "mutation($e: String!, $k: ExportKind!) { exportCsv(event: $e, kind: $k) }";
    let before = app.audit_count(&admin, FIXTURE_SLUG).await;
    let scores = app
        .ok(Some(&admin), q, json!({ "e": FIXTURE_SLUG, "k": "SCORES" }))
        .await;
    let csv = scores["exportCsv"].as_str().unwrap();
    assert!(csv.starts_with("review_id,judge,project,submitted,version,functionality,quality,innovation,weighted_total,comment"));
    assert!(
        csv.contains("'=IMPORTXML"),
        "the fixture's formula comment is neutralized"
    );
    for line in csv.lines() {
        for cell in line.split(',') {
            let c = cell.trim_start_matches('"');
            assert!(
                !c.starts_with('=') && !c.starts_with('+') && !c.starts_with('@'),
                "live formula cell {cell:?}"
            );
        }
    }
    assert_eq!(
        app.audit_count(&admin, FIXTURE_SLUG).await,
        before + 1,
        "each export is audited"
    );
    for kind in ["REGISTRATIONS", "TEAMS", "PROJECTS", "ASSIGNMENTS", "AUDIT"] {
        let d = app
            .ok(Some(&admin), q, json!({ "e": FIXTURE_SLUG, "k": kind }))
            .await;
        assert!(
            d["exportCsv"].as_str().unwrap().lines().count() > 1,
            "{kind} has rows"
        );
    }
    let no_run = app
        .gql_as(&admin, q, json!({ "e": FIXTURE_SLUG, "k": "RESULTS" }))
        .await;
    assert_code(&no_run, "CONFLICT");
    app.ok(Some(&admin), op("RunCalibration"), run_vars()).await;
    let results = app
        .ok(
            Some(&admin),
            q,
            json!({ "e": FIXTURE_SLUG, "k": "RESULTS" }),
        )
        .await;
    assert!(
        results["exportCsv"]
            .as_str()
            .unwrap()
            .starts_with("rank,rank_low,rank_high,project")
    );
    let anon = app
        .gql(q, json!({ "e": FIXTURE_SLUG, "k": "SCORES" }))
        .await;
    assert_code(&anon, "UNAUTHENTICATED");
    // Another event's organizer, and a participant, are refused; nothing is written.
    let head = app.audit_head().await;
    let s = app.scenario().await;
    let head_after_setup = app.audit_head().await;
    assert!(head_after_setup > head);
    for token in [&s.organizer_b, &s.participant_a] {
        let r = app
            .gql_as(token, q, json!({ "e": s.event_a, "k": "SCORES" }))
            .await;
        assert_code(&r, "FORBIDDEN");
    }
    assert_eq!(
        app.audit_head().await,
        head_after_setup,
        "refusals write nothing"
    );
    // A query never runs it: an export is a mutation, and GET refuses mutations.
    let r = app
        .gql(
            "query($e: String!) { event(slug: $e) { export(kind: SCORES) } }",
            json!({ "e": FIXTURE_SLUG }),
        )
        .await;
    assert_code(&r, "BAD_USER_INPUT");
}
