use super::*;

/// Every new event field, for the six callers: `true` where the caller may read it.
pub(super) async fn judging_fields_follow_the_authorization_matrix(app: App) {
    let s: Scenario = app.scenario().await;
    use Caller::*;
    let organizer_only = [OrganizerA, SiteAdmin];
    let rows: [(&str, &[Caller]); 7] = [
        ("leaderboard { connected }", &organizer_only),
        ("assignments(first: 5) { totalCount }", &organizer_only),
        ("calibrationRuns { id }", &organizer_only),
        ("judgingProgress { assignments }", &organizer_only),
        ("recusals { id }", &organizer_only),
        ("rubric { key }", &CALLERS),
        ("results { version }", &CALLERS),
    ];
    for (field, allowed) in rows {
        for c in CALLERS {
            let q = format!("query($e: String!) {{ event(slug: $e) {{ {field} }} }}");
            let r = app.gql_opt(s.token(c), &q, json!({ "e": s.event_a })).await;
            let code = error_code(&r);
            if allowed.contains(&c) {
                assert_eq!(code, None, "{c:?} should read {field}: {r}");
            } else {
                let expected = if c == Anonymous {
                    "UNAUTHENTICATED"
                } else {
                    "FORBIDDEN"
                };
                assert_eq!(
                    code.as_deref(),
                    Some(expected),
                    "{c:?} must not read {field}: {r}"
                );
            }
        }
    }
    // Organizer-only mutations refuse everyone else, writing nothing: anonymous callers
    // must sign in, members without the role are forbidden.
    let head = app.audit_head().await;
    let e = json!({ "e": s.event_a, "t": s.team_a, "p": s.submitted, "j": "jdg_none", "r": "run.none" });
    let mutations = [
        "mutation($e: String!) { runCalibration(event: $e) { id } }",
        "mutation($e: String!) { autoAssign(event: $e, apply: true) { applied } }",
        "mutation($e: String!) { setCriterion(event: $e, input: { key: \"x\", name: \"X\" }) { key } }",
        "mutation($e: String!) { removeCriterion(event: $e, key: \"x\") }",
        "mutation($e: String!, $j: ID!, $p: ID!) { assignJudge(event: $e, judge: $j, project: $p) { id } }",
        "mutation($e: String!, $j: ID!, $t: ID!) { recuseJudge(event: $e, judge: $j, team: $t) { id } }",
        "mutation($e: String!, $r: ID!) { publishResults(event: $e, run: $r) { version } }",
    ];
    for c in [Anonymous, Participant, Judge, OrganizerB] {
        for m in &mutations {
            let r = app.gql_opt(s.token(c), m, e.clone()).await;
            let expected = if c == Anonymous {
                "UNAUTHENTICATED"
            } else {
                "FORBIDDEN"
            };
            assert_code(&r, expected);
        }
    }
    // Public reads of judging: the rubric, publications and the signing key.
    for c in CALLERS {
        let r = app
            .gql_opt(
                s.token(c),
                "query($e: String!) { signingKey { fingerprint } event(slug: $e) { publications { version } rubric { key } } }",
                json!({ "e": s.event_a }),
            )
            .await;
        assert_eq!(error_code(&r), None, "{c:?}: {r}");
    }
    // The caller's own queue: signed-in callers get theirs (empty unless they judge).
    for c in CALLERS {
        let r = app
            .gql_opt(
                s.token(c),
                "query($e: String!) { event(slug: $e) { myProgress { total } nextAssignment { id } } }",
                json!({ "e": s.event_a }),
            )
            .await;
        if c == Anonymous {
            assert_code(&r, "UNAUTHENTICATED");
        } else {
            assert_eq!(data(&r)["event"]["myProgress"]["total"], 0, "{c:?}");
        }
    }
    assert_eq!(app.audit_head().await, head);
    // The judge's own queue is theirs alone; others see an empty one.
    for c in [Participant, OrganizerB] {
        let r = app
            .ok(
                s.token(c),
                "query($e: String!) { event(slug: $e) { myAssignments { id } } }",
                json!({ "e": s.event_a }),
            )
            .await;
        assert_eq!(r["event"]["myAssignments"], json!([]));
    }
}

pub(super) async fn results_subscription_fires_after_publication(app: App) {
    let admin = app.site_admin().await;
    import_fixture(&app).await;
    let mut ws = app.ws(json!({})).await;
    ws.subscribe(
        "r",
        "subscription($e: String!) { resultsPublished(event: $e) { version final runId } }",
        json!({ "e": FIXTURE_SLUG }),
    )
    .await;
    let run = app.ok(Some(&admin), op("RunCalibration"), run_vars()).await;
    let run_id = str_at(&run, "/runCalibration/id");
    app.ok(
        Some(&admin),
        op("PublishResults"),
        json!({ "event": FIXTURE_SLUG, "run": run_id, "final": true }),
    )
    .await;
    let msg = ws
        .next_json(std::time::Duration::from_secs(20))
        .await
        .expect("a publication message");
    assert_eq!(
        msg["payload"]["data"]["resultsPublished"]["version"], 1,
        "{msg}"
    );
    assert_eq!(
        msg["payload"]["data"]["resultsPublished"]["runId"],
        run_id.as_str()
    );
}

/// The review's revisions as stored: (version, scores, comment, submitted), oldest first.
pub(super) async fn revisions(app: &App, review: &str) -> Vec<(i64, Value, String, bool)> {
    use sea_orm::{ConnectionTrait, Database, Statement};
    let db = Database::connect(app.db.url()).await.expect("connect");
    let sql = "SELECT rr.version, rr.scores, rr.comment, rr.submitted FROM review_revisions rr \
               JOIN reviews r ON r.id = rr.review_id WHERE r.public_id = $1 ORDER BY rr.version";
    let rows = db
        .query_all_raw(Statement::from_sql_and_values(
            db.get_database_backend(),
            sql,
            [review.into()],
        ))
        .await
        .expect("read review_revisions");
    let out = rows
        .iter()
        .map(|r| {
            let version: i32 = r.try_get_by_index(0).expect("version");
            let scores: String = r.try_get_by_index(1).expect("scores");
            let comment: String = r.try_get_by_index(2).expect("comment");
            let submitted: bool = r.try_get_by_index(3).expect("submitted");
            let scores = serde_json::from_str(&scores).expect("scores are JSON");
            (i64::from(version), scores, comment, submitted)
        })
        .collect();
    let _ = db.close().await;
    out
}

pub(super) async fn every_review_save_keeps_a_revision(app: App) {
    let j = judged_event(&app).await;
    let save = |scores: Value, comment: &str, submit: bool| json!({ "assignment": j.assignment_a, "scores": scores, "comment": comment, "submit": submit });
    let first = app
        .ok(
            Some(&j.judge_a),
            op("SaveReview"),
            save(
                json!([{ "criterion": "impact", "value": 4 }]),
                "first look",
                false,
            ),
        )
        .await;
    let review = str_at(&first, "/saveReview/id");
    let second = app
        .ok(
            Some(&j.judge_a),
            op("SaveReview"),
            save(
                json!([{ "criterion": "impact", "value": 2 }, { "criterion": "craft", "value": 5 }]),
                "changed my mind",
                true,
            ),
        )
        .await;
    // The same review, now at version 2 with the new scores.
    assert_eq!(second["saveReview"]["id"], review.as_str());
    assert_eq!(second["saveReview"]["version"], 2);
    assert_eq!(
        second["saveReview"]["scores"],
        json!([{ "criterion": "craft", "value": 5 }, { "criterion": "impact", "value": 2 }])
    );
    let current = app
        .ok(Some(&j.admin), REVIEWS, json!({ "p": j.project }))
        .await;
    let shown: Vec<&Value> = current["project"]["reviews"]
        .as_array()
        .expect("reviews")
        .iter()
        .filter(|r| r["id"] == review.as_str())
        .collect();
    assert_eq!(shown.len(), 1, "one review, not one per save: {current}");
    assert_eq!(shown[0]["comment"], "changed my mind");

    // Every save is kept: the first scores survive the second save.
    assert_eq!(
        revisions(&app, &review).await,
        vec![
            (1, json!({ "impact": 4 }), "first look".to_string(), false),
            (
                2,
                json!({ "craft": 5, "impact": 2 }),
                "changed my mind".to_string(),
                true
            ),
        ]
    );
    // The history is what organizers read in the audit log: one entry per save, naming
    // the review and its version.
    let log = crate::audit::audit_log(&app, &j.admin, &j.slug).await;
    let saves: Vec<(String, Value)> = log
        .iter()
        .filter(|n| n["objectId"] == review.as_str())
        .map(|n| {
            let payload: Value = n["payload"]
                .as_str()
                .and_then(|p| serde_json::from_str(p).ok())
                .unwrap_or_else(|| n["payload"].clone());
            (str_at(n, "/action"), payload["version"].clone())
        })
        .collect();
    assert_eq!(
        saves,
        vec![
            ("review.saved".to_string(), json!(1)),
            ("review.submitted".to_string(), json!(2)),
        ]
    );
    // A refused save adds no revision.
    let r = app
        .gql_as(
            &j.judge_a,
            op("SaveReview"),
            save(json!([{ "criterion": "impact", "value": 9 }]), "no", true),
        )
        .await;
    assert_bad_input(&r, &["scores"]);
    assert_eq!(revisions(&app, &review).await.len(), 2);
}

pub(super) async fn judges_are_never_on_a_team_they_judge(app: App) {
    let j = judged_event(&app).await;
    let head = app.audit_head().await;
    let participant_email = str_at(
        &app.ok(
            Some(&j.participant),
            "{ viewer { user { email } } }",
            json!({}),
        )
        .await,
        "/viewer/user/email",
    );

    // Someone on a team does not become a judge of the event.
    let r = app
        .gql_as(
            &j.admin,
            op("GrantRole"),
            json!({ "event": j.slug, "email": participant_email, "role": "JUDGE" }),
        )
        .await;
    assert_code(&r, "CONFLICT");
    assert!(
        error_message(&r).contains("team"),
        "says why: {}",
        error_message(&r)
    );

    // A judge does not join a team: not by invite code, not by starting one, not added by
    // an organizer.
    let captain = app
        .sign_up(&format!("captain-{}@example.org", unique()))
        .await;
    app.register(&captain, &j.slug).await;
    let (other_team, code) = app.create_team(&captain, &j.slug, "Other").await;
    app.register(&j.judge_a, &j.slug).await;
    let head_before_joins = app.audit_head().await;
    let r = app
        .gql_as(&j.judge_a, op("JoinTeam"), json!({ "inviteCode": code }))
        .await;
    assert_code(&r, "CONFLICT");
    let r = app
        .gql_as(
            &j.judge_a,
            op("CreateTeam"),
            json!({ "event": j.slug, "name": "Judges United" }),
        )
        .await;
    assert_code(&r, "CONFLICT");
    let judge_a_email = str_at(
        &app.ok(Some(&j.judge_a), "{ viewer { user { email } } }", json!({}))
            .await,
        "/viewer/user/email",
    );
    let r = app
        .gql_as(
            &j.admin,
            op("AddTeamMember"),
            json!({ "team": other_team, "email": judge_a_email }),
        )
        .await;
    assert_code(&r, "CONFLICT");
    assert_eq!(
        app.audit_head().await,
        head_before_joins,
        "refusals write nothing"
    );
    assert!(app.audit_head().await > head);

    // A judge who is on the team anyway (a database edited by hand, an older release) is
    // still never assigned to its project, by hand or by the planner.
    let email = format!("judge-c-{}@example.org", unique());
    app.sign_up(&email).await;
    let judge_c = app.grant(&j.admin, &j.slug, &email, "JUDGE").await;
    {
        use sea_orm::{ConnectionTrait, Database, Statement};
        let db = Database::connect(app.db.url()).await.expect("connect");
        let sql = "INSERT INTO team_members (event_id, team_id, user_id, created_at) \
                   SELECT t.event_id, t.id, u.id, t.created_at FROM teams t, users u \
                   WHERE t.public_id = $1 AND u.email = $2";
        let done = db
            .execute_raw(Statement::from_sql_and_values(
                db.get_database_backend(),
                sql,
                [j.team.as_str().into(), email.as_str().into()],
            ))
            .await
            .expect("put the judge on the team");
        assert_eq!(done.rows_affected(), 1);
        let _ = db.close().await;
    }
    let head = app.audit_head().await;
    let r = app
        .gql_as(
            &j.admin,
            op("AssignJudge"),
            json!({ "event": j.slug, "judge": judge_c, "project": j.project }),
        )
        .await;
    assert_code(&r, "CONFLICT");
    assert!(
        error_message(&r).contains("own team"),
        "says why: {}",
        error_message(&r)
    );
    assert_eq!(app.audit_head().await, head, "nothing written");
    app.ok(
        Some(&j.admin),
        "mutation($e: String!) { autoAssign(event: $e, k: 3, seed: 1, apply: true) { applied } }",
        json!({ "e": j.slug }),
    )
    .await;
    let assignments = app
        .ok(
            Some(&j.admin),
            "query($e: String!) { event(slug: $e) { assignments(first: 100) { nodes { judge { id } project { id } } } } }",
            json!({ "e": j.slug }),
        )
        .await;
    let nodes = assignments["event"]["assignments"]["nodes"]
        .as_array()
        .expect("assignments");
    assert!(
        !nodes.iter().any(|n| n["judge"]["id"] == judge_c.as_str()),
        "the planner leaves the team's judge out: {assignments}"
    );
}
