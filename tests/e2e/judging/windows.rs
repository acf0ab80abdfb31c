use super::*;

/// An event whose submissions and judging are both open now, with a two-criterion rubric,
/// one submitted project of `participant`'s team, and two judges assigned to it.
pub(super) struct Judged {
    pub(super) admin: String,
    pub(super) slug: String,
    pub(super) participant: String,
    pub(super) judge_a: String,
    pub(super) judge_b: String,
    pub(super) project: String,
    pub(super) team: String,
    pub(super) assignment_a: String,
    pub(super) assignment_b: String,
    pub(super) judge_a_id: String,
    pub(super) judge_b_id: String,
}

pub(super) async fn judged_event(app: &App) -> Judged {
    let admin = app.site_admin().await;
    let slug = format!("judged-{}", unique());
    let now = Utc::now();
    app.ok(
        Some(&admin),
        op("CreateEvent"),
        json!({ "input": {
            "slug": slug, "name": "Judged",
            "submissionsOpen": rfc3339(now - Duration::days(1)), "submissionsClose": rfc3339(now + Duration::days(1)),
            "judgingOpen": rfc3339(now - Duration::hours(1)), "judgingClose": rfc3339(now + Duration::days(1)),
            "registration": "OPEN",
        }}),
    )
    .await;
    for (key, pos) in [("impact", 1), ("craft", 2)] {
        app.ok(
            Some(&admin),
            op("SetCriterion"),
            json!({ "event": slug, "input": { "key": key, "name": key, "min": 1, "max": 5, "position": pos } }),
        )
        .await;
    }
    let track = app.create_track(&admin, &slug, "Main").await;
    let participant = app.sign_up(&format!("p-{}@example.org", unique())).await;
    app.register(&participant, &slug).await;
    let (team, _) = app.create_team(&participant, &slug, "Builders").await;
    let project = app
        .create_project(&participant, &slug, "Thing", &track)
        .await;
    app.submit_project(&participant, &project).await;
    let mut judges = vec![];
    for name in ["a", "b"] {
        let email = format!("judge-{name}-{}@example.org", unique());
        let token = app.sign_up(&email).await;
        let id = app.grant(&admin, &slug, &email, "JUDGE").await;
        let d = app
            .ok(
                Some(&admin),
                op("AssignJudge"),
                json!({ "event": slug, "judge": id, "project": project }),
            )
            .await;
        assert_eq!(d["assignJudge"]["status"], "pending");
        judges.push((token, id, str_at(&d, "/assignJudge/id")));
    }
    let (b, a) = (judges.pop().unwrap(), judges.pop().unwrap());
    Judged {
        admin,
        slug,
        participant,
        judge_a: a.0,
        judge_b: b.0,
        project,
        team,
        assignment_a: a.2,
        assignment_b: b.2,
        judge_a_id: a.1,
        judge_b_id: b.1,
    }
}

/// Like `windows::a_window_closed_while_a_write_waits_refuses_it`, for the judging window:
/// an organizer's closing of judging is under way when a judge's `saveReview` arrives; the
/// save waits for it, answers WINDOW_CLOSED and writes nothing.
pub(super) async fn a_judging_window_closed_while_a_save_waits_refuses_it(app: App) {
    let j = judged_event(&app).await;
    let head = app.audit_head().await;
    let now = Utc::now();
    let closing = HeldChange::set(
        &app,
        &j.slug,
        &[(event::Column::JudgingClose, now - Duration::minutes(1))],
    )
    .await;
    let answered = AtomicBool::new(false);
    let save = async {
        let r = app
            .gql_as(
                &j.judge_a,
                op("SaveReview"),
                json!({ "assignment": j.assignment_a, "scores": [{ "criterion": "impact", "value": 4 }] }),
            )
            .await;
        answered.store(true, Ordering::SeqCst);
        r
    };
    let (r, ()) = tokio::join!(save, closing.commit_when_waited_on(&answered));
    assert_code(&r, "WINDOW_CLOSED");
    // Every save appends its audit entry: none means nothing was saved.
    assert_eq!(
        app.audit_head().await,
        head,
        "a refused save writes nothing"
    );
}

/// Judging day is many judges saving at once: a judge's save does not wait for another
/// judge's save under way (held here as that save holds the event: `FOR SHARE`), while an
/// organizer's change of the event still waits for it
/// ([`a_judging_window_closed_while_a_save_waits_refuses_it`]).
pub(super) async fn a_save_does_not_wait_for_another_judges_save(app: App) {
    let j = judged_event(&app).await;
    let other = HeldChange::share(&app, &j.slug).await;
    let save = app.gql_as(
        &j.judge_a,
        op("SaveReview"),
        json!({ "assignment": j.assignment_a, "scores": [{ "criterion": "impact", "value": 4 }] }),
    );
    tokio::pin!(save);
    let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(20);
    let answer = loop {
        tokio::select! {
            r = &mut save => break Some(r),
            () = tokio::time::sleep(std::time::Duration::from_millis(200)) => {
                if other.waited_on().await || tokio::time::Instant::now() > deadline {
                    break None;
                }
            }
        }
    };
    let Some(r) = answer else {
        other.release().await;
        panic!("judge A's save waited for judge B's save under way");
    };
    other.release().await;
    assert_eq!(data(&r)["saveReview"]["scores"][0]["value"], 4, "{r}");
}

/// A judge's page may send two saves of one review at once (a slider dragged, then
/// "submit" on a bad network): each save merges its scores into the review as the other
/// left it, so both criteria are kept, and every save is answered.
pub(super) async fn two_saves_of_one_review_at_once_keep_both_scores(app: App) {
    let j = judged_event(&app).await;
    let saves = (0..8).map(|i| {
        let criterion = if i % 2 == 0 { "impact" } else { "craft" };
        app.gql_as(
            &j.judge_a,
            op("SaveReview"),
            json!({ "assignment": j.assignment_a, "scores": [{ "criterion": criterion, "value": 1 + i / 2 }] }),
        )
    });
    for r in futures_util::future::join_all(saves).await {
        data(&r);
    }
    let d = app
        .ok(
            Some(&j.judge_a),
            "query($e: String!) { event(slug: $e) { myAssignments { review { version scores { criterion value } } } } }",
            json!({ "e": j.slug }),
        )
        .await;
    let scores = &d["event"]["myAssignments"][0]["review"]["scores"];
    let kept: Vec<&str> = scores
        .as_array()
        .expect("scores")
        .iter()
        .filter_map(|s| s["criterion"].as_str())
        .collect();
    assert!(
        kept.contains(&"impact") && kept.contains(&"craft"),
        "a save lost the other's scores: {scores}"
    );
    assert_eq!(
        d["event"]["myAssignments"][0]["review"]["version"], 8,
        "{d}"
    );
}

/// The judge's own queue, as the judging page reads it.
pub(super) const QUEUE: &str = "query($e: String!) { event(slug: $e) { myProgress { done total } nextAssignment { id project { title } } myAssignments { id status project { id title status } } } }";

/// The organizers' counts and the event's assignments with their status.
pub(super) const PROGRESS: &str = "query($e: String!) { event(slug: $e) { judgingProgress { assignments done pending recused withdrawn } assignments(first: 100) { edges { node { id status } } } } }";

/// The status of each assignment, by id, as the organizers read it.
pub(super) fn statuses(d: &Value) -> std::collections::BTreeMap<String, String> {
    d["event"]["assignments"]["edges"]
        .as_array()
        .expect("assignments")
        .iter()
        .map(|e| (str_at(e, "/node/id"), str_at(e, "/node/status")))
        .collect()
}

/// A team withdraws a project after judges were assigned to it: the judges' queues keep
/// working without it, a review of it is refused, organizers do not wait for it, and
/// submitting it again brings everything back.
pub(super) async fn a_withdrawn_project_leaves_its_judges_queues_working(app: App) {
    let j = judged_event(&app).await;
    let scores =
        json!([{ "criterion": "impact", "value": 4 }, { "criterion": "craft", "value": 3 }]);
    // Judge A has a second project in the queue, which stays submitted.
    let track = str_at(
        &app.ok(
            Some(&j.admin),
            "query($e: String!) { event(slug: $e) { tracks { id } } }",
            json!({ "e": j.slug }),
        )
        .await,
        "/event/tracks/0/id",
    );
    let other = app
        .create_project(&j.participant, &j.slug, "Other thing", &track)
        .await;
    app.submit_project(&j.participant, &other).await;
    let d = app
        .ok(
            Some(&j.admin),
            op("AssignJudge"),
            json!({ "event": j.slug, "judge": j.judge_a_id, "project": other }),
        )
        .await;
    let other_assignment = str_at(&d, "/assignJudge/id");
    // Judge B has already submitted a review of the project that will be withdrawn.
    app.ok(
        Some(&j.judge_b),
        op("SaveReview"),
        json!({ "assignment": j.assignment_b, "scores": scores, "submit": true }),
    )
    .await;
    let q = json!({ "e": j.slug });
    let before = app.ok(Some(&j.judge_a), QUEUE, q.clone()).await;
    assert_eq!(
        before["event"]["myProgress"],
        json!({ "done": 0, "total": 2 })
    );

    let w = app
        .ok(
            Some(&j.participant),
            op("WithdrawProject"),
            json!({ "id": j.project }),
        )
        .await;
    assert_eq!(w["withdrawProject"]["status"], "WITHDRAWN");

    // Judge A's queue still loads, without the withdrawn project.
    let r = app.gql_as(&j.judge_a, QUEUE, q.clone()).await;
    let queue = &data(&r)["event"];
    let ids: Vec<&str> = queue["myAssignments"]
        .as_array()
        .expect("myAssignments")
        .iter()
        .filter_map(|a| a["id"].as_str())
        .collect();
    assert_eq!(
        ids,
        [other_assignment.as_str()],
        "only the reviewable assignment is listed: {r}"
    );
    assert_eq!(queue["myAssignments"][0]["project"]["title"], "Other thing");
    assert_eq!(
        queue["myProgress"],
        json!({ "done": 0, "total": 1 }),
        "the withdrawn project is not outstanding"
    );
    assert_eq!(queue["nextAssignment"]["id"], other_assignment.as_str());
    // Judge B's queue is empty, not broken.
    let r = app.gql_as(&j.judge_b, QUEUE, q.clone()).await;
    assert_eq!(data(&r)["event"]["myAssignments"], json!([]), "{r}");
    assert_eq!(
        data(&r)["event"]["myProgress"],
        json!({ "done": 0, "total": 0 })
    );

    // Reviewing the withdrawn project is refused and writes nothing; the rest still works.
    let head = app.audit_head().await;
    for (judge, assignment) in [(&j.judge_a, &j.assignment_a), (&j.judge_b, &j.assignment_b)] {
        let r = app
            .gql_as(
                judge,
                op("SaveReview"),
                json!({ "assignment": assignment, "scores": scores }),
            )
            .await;
        assert_code(&r, "CONFLICT");
        assert!(
            error_message(&r).contains("withdrawn"),
            "the refusal says why: {r}"
        );
    }
    assert_eq!(app.audit_head().await, head, "refused saves write nothing");
    let d = app
        .ok(
            Some(&j.judge_a),
            op("SaveReview"),
            json!({ "assignment": other_assignment, "scores": scores, "submit": true }),
        )
        .await;
    assert_eq!(d["saveReview"]["submitted"], true);

    // Organizers: nothing withdrawn is waited for, every assignment is accounted for.
    let d = app.ok(Some(&j.admin), PROGRESS, q.clone()).await;
    assert_eq!(
        d["event"]["judgingProgress"],
        json!({ "assignments": 3, "done": 1, "pending": 0, "recused": 0, "withdrawn": 2 }),
        "{d}"
    );
    let s = statuses(&d);
    assert_eq!(s[&j.assignment_a], "withdrawn");
    assert_eq!(s[&j.assignment_b], "withdrawn");
    assert_eq!(s[&other_assignment], "done");

    // Submitted again, the project is back in both queues, with judge B's review done.
    app.submit_project(&j.participant, &j.project).await;
    let r = app.gql_as(&j.judge_a, QUEUE, q.clone()).await;
    let queue = &data(&r)["event"];
    assert_eq!(queue["myProgress"], json!({ "done": 1, "total": 2 }));
    assert_eq!(queue["nextAssignment"]["id"], j.assignment_a.as_str());
    let d = app
        .ok(
            Some(&j.judge_a),
            op("SaveReview"),
            json!({ "assignment": j.assignment_a, "scores": scores }),
        )
        .await;
    assert_eq!(d["saveReview"]["version"], 1);
    let d = app.ok(Some(&j.admin), PROGRESS, q.clone()).await;
    assert_eq!(
        d["event"]["judgingProgress"],
        json!({ "assignments": 3, "done": 2, "pending": 1, "recused": 0, "withdrawn": 0 }),
        "{d}"
    );
    let s = statuses(&d);
    assert_eq!(s[&j.assignment_a], "pending");
    assert_eq!(s[&j.assignment_b], "done");
}
