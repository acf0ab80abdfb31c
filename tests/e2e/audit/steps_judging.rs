use super::*;

/// The judging mutations, on an event whose submissions and judging are both open: the
/// rubric, assignments (by hand and planned), reviews, recusals, the calibration run, its
/// publication and exports.
pub(super) async fn judging_steps(steps: &mut Steps<'_>, admin: Option<&str>, t: &str) {
    let app = steps.app;
    let event = format!("judging-{t}");
    let now = chrono::Utc::now();
    let d = |hours: i64| crate::harness::rfc3339(now + chrono::Duration::hours(hours));
    let input = json!({ "slug": event, "name": "Judging",
        "submissionsOpen": d(-24), "submissionsClose": d(24), "judgingOpen": d(-1), "judgingClose": d(24),
        "registration": "OPEN" });
    steps
        .step(
            Succeeds,
            "createEvent (judging open)",
            admin,
            op("CreateEvent"),
            json!({ "input": input }),
        )
        .await;
    let track = app
        .create_track(admin.expect("admin"), &event, "Main")
        .await;
    let participant = app.sign_up(&format!("jp-{t}@example.org")).await;
    app.register(&participant, &event).await;
    let (team, _) = app.create_team(&participant, &event, "Judged").await;
    let project = app
        .create_project(&participant, &event, "Judged project", &track)
        .await;
    app.submit_project(&participant, &project).await;
    let participant = Some(participant.as_str());
    let mut judges = vec![];
    for name in ["a", "b"] {
        let email = format!("j{name}-{t}@example.org");
        let token = app.sign_up(&email).await;
        let id = app
            .grant(admin.expect("admin"), &event, &email, "JUDGE")
            .await;
        judges.push((token, id));
    }
    let (judge_a, judge_b) = (&judges[0], &judges[1]);

    // The rubric.
    for key in ["impact", "craft"] {
        steps
            .step(
                Succeeds,
                "setCriterion",
                admin,
                op("SetCriterion"),
                json!({ "event": event, "input": { "key": key, "name": key, "min": 1, "max": 5 } }),
            )
            .await;
    }
    steps
        .step(
            Refused,
            "setCriterion (not an organizer)",
            participant,
            op("SetCriterion"),
            json!({ "event": event, "input": { "key": "mine", "name": "Mine" } }),
        )
        .await;
    let remove = "mutation($e: String!, $k: String!) { removeCriterion(event: $e, key: $k) }";
    steps
        .step(
            Succeeds,
            "removeCriterion",
            admin,
            remove,
            json!({ "e": event, "k": "craft" }),
        )
        .await;
    steps
        .step(
            Refused,
            "removeCriterion (gone)",
            admin,
            remove,
            json!({ "e": event, "k": "craft" }),
        )
        .await;

    // Assignments by hand.
    let assign = |judge: &str| json!({ "event": event, "judge": judge, "project": project });
    let r = steps
        .step(
            Succeeds,
            "assignJudge",
            admin,
            op("AssignJudge"),
            assign(&judge_a.1),
        )
        .await;
    let assignment_a = str_at(&r, "/data/assignJudge/id");
    steps
        .step(
            Refused,
            "assignJudge (again)",
            admin,
            op("AssignJudge"),
            assign(&judge_a.1),
        )
        .await;
    let r = steps
        .step(
            Succeeds,
            "assignJudge b",
            admin,
            op("AssignJudge"),
            assign(&judge_b.1),
        )
        .await;
    let unassign = json!({ "a": str_at(&r, "/data/assignJudge/id") });
    let q = "mutation($a: ID!) { unassignJudge(assignment: $a) }";
    steps
        .step(Succeeds, "unassignJudge", admin, q, unassign.clone())
        .await;
    steps
        .step(Refused, "unassignJudge (gone)", admin, q, unassign)
        .await;

    // A review.
    let review = |value: i64| json!({ "assignment": assignment_a, "scores": [{ "criterion": "impact", "value": value }], "submit": true });
    steps
        .step(
            Succeeds,
            "saveReview",
            Some(&judge_a.0),
            op("SaveReview"),
            review(4),
        )
        .await;
    steps
        .step(
            Refused,
            "saveReview (out of range)",
            Some(&judge_a.0),
            op("SaveReview"),
            review(9),
        )
        .await;

    // A recusal.
    let recuse = "mutation($e: String!, $j: ID!, $t: ID!) { recuseJudge(event: $e, judge: $j, team: $t, reason: \"former colleague\") { id } }";
    let vars = json!({ "e": event, "j": judge_b.1, "t": team });
    steps
        .step(Succeeds, "recuseJudge", admin, recuse, vars.clone())
        .await;
    steps
        .step(Refused, "recuseJudge (again)", admin, recuse, vars)
        .await;

    // The planner: a dry run writes nothing, applying is one event for the whole plan.
    let plan = "mutation($e: String!, $apply: Boolean) { autoAssign(event: $e, k: 1, seed: 3, apply: $apply) { applied } }";
    let dry = json!({ "e": event, "apply": false });
    steps
        .step(DryRun, "autoAssign (dry run)", admin, plan, dry.clone())
        .await;
    steps
        .step(
            Refused,
            "autoAssign (not an organizer)",
            participant,
            plan,
            dry,
        )
        .await;
    steps
        .step(
            Succeeds,
            "autoAssign (apply)",
            admin,
            plan,
            json!({ "e": event, "apply": true }),
        )
        .await;

    // A calibration job: starting it appends one entry (`calibration.started`); the run it
    // stores later appends one more, in the job's own transaction.
    let start =
        "mutation($event: String!) { startCalibration(event: $event, bootstrap: 10) { id } }";
    steps
        .step(
            Refused,
            "startCalibration (not an organizer)",
            participant,
            start,
            json!({ "event": event }),
        )
        .await;
    let before = app.audit_head().await;
    let r = app.gql_opt(admin, start, json!({ "event": event })).await;
    let job = str_at(&r, "/data/startCalibration/id");
    let state =
        "query($e: String!, $j: ID!) { event(slug: $e) { calibrationJob(id: $j) { state } } }";
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    loop {
        let s = app.ok(admin, state, json!({ "e": event, "j": job })).await;
        if s["event"]["calibrationJob"]["state"] == "DONE" {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the job did not end: {s}"
        );
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    assert_eq!(
        app.audit_head().await,
        before + 2,
        "startCalibration and its run"
    );
    steps.succeeded.insert("startCalibration".to_string());

    // The calibration run, its publication, exports.
    let run_vars = json!({ "event": event, "seed": 1, "bootstrap": 10 });
    let r = steps
        .step(
            Succeeds,
            "runCalibration",
            admin,
            op("RunCalibration"),
            run_vars.clone(),
        )
        .await;
    let run = str_at(&r, "/data/runCalibration/id");
    steps
        .step(
            Refused,
            "runCalibration (not an organizer)",
            participant,
            op("RunCalibration"),
            run_vars,
        )
        .await;
    let publish = json!({ "event": event, "run": run, "final": true });
    steps
        .step(
            Succeeds,
            "publishResults",
            admin,
            op("PublishResults"),
            publish.clone(),
        )
        .await;
    steps
        .step(
            Refused,
            "publishResults (final already)",
            admin,
            op("PublishResults"),
            publish,
        )
        .await;
    // Prizes: created, and a winner assigned by hand.
    let create = "mutation($e: String!) { createPrize(event: $e, input: { name: \"Grand prize\", position: 1 }) { id } }";
    let r = steps
        .step(
            Succeeds,
            "createPrize",
            admin,
            create,
            json!({ "e": event }),
        )
        .await;
    let prize = str_at(&r, "/data/createPrize/id");
    steps
        .step(
            Refused,
            "createPrize (not an organizer)",
            participant,
            create,
            json!({ "e": event }),
        )
        .await;
    let assign = "mutation($id: ID!, $p: ID) { assignPrize(id: $id, project: $p) { id } }";
    steps
        .step(
            Succeeds,
            "assignPrize",
            admin,
            assign,
            json!({ "id": prize, "p": project }),
        )
        .await;
    steps
        .step(
            Refused,
            "assignPrize (not an organizer)",
            participant,
            assign,
            json!({ "id": prize, "p": null }),
        )
        .await;
    let export = "mutation($e: String!, $k: ExportKind!) { exportCsv(event: $e, kind: $k) }";
    let vars = json!({ "e": event, "k": "SCORES" });
    steps
        .step(Succeeds, "exportCsv", admin, export, vars.clone())
        .await;
    steps
        .step(
            Refused,
            "exportCsv (not an organizer)",
            participant,
            export,
            vars,
        )
        .await;
    comment_steps(steps, admin, participant, &project).await;
}

/// Comments: `p` posts to the thread of `project`, which `admin` hides.
pub(super) async fn comment_steps(
    steps: &mut Steps<'_>,
    admin: Option<&str>,
    p: Option<&str>,
    project: &str,
) {
    let post = "mutation($p: ID!, $b: String!) { postComment(project: $p, body: $b) { id } }";
    let r = steps
        .step(
            Succeeds,
            "postComment",
            p,
            post,
            json!({ "p": project, "b": "Nice work." }),
        )
        .await;
    let comment = str_at(&r, "/data/postComment/id");
    steps
        .step(
            Refused,
            "postComment (empty)",
            p,
            post,
            json!({ "p": project, "b": "  " }),
        )
        .await;
    let hide = "mutation($id: ID!, $r: String!) { hideComment(id: $id, reason: $r) { id } }";
    let vars = json!({ "id": comment, "r": "off-topic" });
    steps
        .step(
            Refused,
            "hideComment (not an organizer)",
            p,
            hide,
            vars.clone(),
        )
        .await;
    steps
        .step(Succeeds, "hideComment", admin, hide, vars.clone())
        .await;
    steps
        .step(Refused, "hideComment (again)", admin, hide, vars)
        .await;
}

/// Community voting: an account vote configured, cast, closed and its tally published; an
/// email vote's link asked for and followed.
pub(super) async fn voting_steps(steps: &mut Steps<'_>, admin: Option<&str>, t: &str) {
    let app = steps.app;
    let now = chrono::Utc::now();
    let d = |hours: i64| crate::harness::rfc3339(now + chrono::Duration::hours(hours));
    let mut events = vec![];
    for mode in ["account", "email"] {
        let event = format!("voting-{mode}-{t}");
        let input = json!({ "slug": event, "name": "Voting", "submissionsOpen": d(-24),
            "submissionsClose": d(24), "registration": "OPEN" });
        app.ok(admin, op("CreateEvent"), json!({ "input": input }))
            .await;
        events.push(event);
    }
    let (event, email_event) = (&events[0], &events[1]);
    let track = app.create_track(admin.expect("admin"), event, "Main").await;
    let maker = app.sign_up(&format!("vm-{t}@example.org")).await;
    app.register(&maker, event).await;
    app.create_team(&maker, event, "Voted").await;
    let project = app
        .create_project(&maker, event, "Voted project", &track)
        .await;
    app.submit_project(&maker, &project).await;
    let voter_email = format!("voter-{t}@example.org");
    let voter = app.sign_up(&voter_email).await;
    app.db.confirm_email(&voter_email).await;
    let voter = Some(voter.as_str());

    let configure = "mutation($e: String!, $m: VotingMode!, $o: DateTime!, $c: DateTime!) { \
        configureVoting(event: $e, mode: $m, credits: 9, opens: $o, closes: $c) { mode } }";
    let open = |e: &str, m: &str| json!({ "e": e, "m": m, "o": d(-1), "c": d(1) });
    steps
        .step(
            Succeeds,
            "configureVoting",
            admin,
            configure,
            open(event, "ACCOUNT"),
        )
        .await;
    steps
        .step(
            Refused,
            "configureVoting (not an organizer)",
            voter,
            configure,
            open(event, "ACCOUNT"),
        )
        .await;
    let cast = "mutation($e: String!, $p: ID!, $n: Int!) { \
        castVotes(event: $e, votes: [{ project: $p, votes: $n }]) { spent } }";
    steps
        .step(
            Succeeds,
            "castVotes",
            voter,
            cast,
            json!({ "e": event, "p": project, "n": 3 }),
        )
        .await;
    steps
        .step(
            Refused,
            "castVotes (over budget)",
            voter,
            cast,
            json!({ "e": event, "p": project, "n": 4 }),
        )
        .await;
    let publish = "mutation($e: String!) { publishVoteTally(event: $e) { rank } }";
    steps
        .step(
            Refused,
            "publishVoteTally (still open)",
            admin,
            publish,
            json!({ "e": event }),
        )
        .await;
    let closed = json!({ "e": event, "m": "ACCOUNT", "o": d(-2), "c": crate::harness::rfc3339(chrono::Utc::now() - chrono::Duration::seconds(1)) });
    steps
        .step(
            Succeeds,
            "configureVoting (closed)",
            admin,
            configure,
            closed,
        )
        .await;
    steps
        .step(
            Succeeds,
            "publishVoteTally",
            admin,
            publish,
            json!({ "e": event }),
        )
        .await;

    app.ok(admin, configure, open(email_event, "EMAIL")).await;
    let register = "mutation($e: String!, $m: String!) { registerVoter(event: $e, email: $m) }";
    let address = format!("email-voter-{t}@example.org");
    steps
        .step(
            Succeeds,
            "registerVoter",
            None,
            register,
            json!({ "e": email_event, "m": address }),
        )
        .await;
    steps
        .step(
            Refused,
            "registerVoter (not an address)",
            None,
            register,
            json!({ "e": email_event, "m": "nobody" }),
        )
        .await;
    let token = crate::invitations::operator_link(app, &address, "/vote?link=").await;
    let confirm = "mutation($t: String!) { confirmVoter(token: $t) { key } }";
    steps
        .step(
            Succeeds,
            "confirmVoter",
            None,
            confirm,
            json!({ "t": token }),
        )
        .await;
    steps
        .step(
            Refused,
            "confirmVoter (used)",
            None,
            confirm,
            json!({ "t": token }),
        )
        .await;

    // The email voter asks to be forgotten.
    let erase = "mutation($e: String!, $c: String!) { eraseAddress(email: $e, confirm: $c) }";
    steps
        .step(
            Refused,
            "eraseAddress (not confirmed)",
            admin,
            erase,
            json!({ "e": address, "c": "someone-else@example.org" }),
        )
        .await;
    steps
        .step(
            Succeeds,
            "eraseAddress",
            admin,
            erase,
            json!({ "e": address, "c": address }),
        )
        .await;
}

/// Participation records: issuing one appends `record.issued`; verifying one writes
/// nothing (a pure check the contract puts among the mutations), so its success is a
/// [`DryRun`] counted as succeeded by hand.
pub(super) async fn record_steps(steps: &mut Steps<'_>, event: &str, t: &str) {
    let app = steps.app;
    let member = app.sign_up(&format!("rec-{t}@example.org")).await;
    app.register(&member, event).await;
    let issue = "mutation($e: String!) { participationRecord(event: $e) }";
    let r = steps
        .step(
            Succeeds,
            "participationRecord",
            Some(&member),
            issue,
            json!({ "e": event }),
        )
        .await;
    let document = str_at(&r, "/data/participationRecord");
    steps
        .step(
            Refused,
            "participationRecord (anonymous)",
            None,
            issue,
            json!({ "e": event }),
        )
        .await;
    let verify = "mutation($d: String!) { verifyRecord(document: $d) }";
    let r = steps
        .step(
            DryRun,
            "verifyRecord",
            None,
            verify,
            json!({ "d": document }),
        )
        .await;
    assert_eq!(r["data"]["verifyRecord"], true, "{r}");
    steps.succeeded.insert("verifyRecord".to_string());
    steps
        .step(
            Refused,
            "verifyRecord (not JSON)",
            None,
            verify,
            json!({ "d": "not a record" }),
        )
        .await;
}

/// Webhooks: one registered (a private address refused), switched, and a delivery that
/// failed eight times retried by hand (CONFLICT once it is no longer failed).
pub(super) async fn webhook_steps(steps: &mut Steps<'_>, admin: Option<&str>, t: &str) {
    let app = steps.app;
    let admin_token = admin.expect("admin");
    let event = format!("hooks-{t}");
    let now = chrono::Utc::now();
    let d = |hours: i64| crate::harness::rfc3339(now + chrono::Duration::hours(hours));
    let input = json!({ "slug": event, "name": "Hooks", "submissionsOpen": d(-24),
        "submissionsClose": d(24), "registration": "OPEN" });
    app.ok(admin, op("CreateEvent"), json!({ "input": input }))
        .await;
    let rx = crate::webhooks::Receiver::start(500, None).await;
    let register = "mutation($e: String!, $u: String!) { \
        registerWebhook(event: $e, url: $u, actions: [\"track.\"]) { webhook { id } } }";
    let r = steps
        .step(
            Succeeds,
            "registerWebhook",
            admin,
            register,
            json!({ "e": event, "u": rx.url("/hook") }),
        )
        .await;
    let hook = str_at(&r, "/data/registerWebhook/webhook/id");
    steps
        .step(
            Refused,
            "registerWebhook (cloud metadata address)",
            admin,
            register,
            json!({ "e": event, "u": "http://169.254.169.254/" }),
        )
        .await;
    let active =
        "mutation($id: ID!, $a: Boolean!) { setWebhookActive(id: $id, active: $a) { active } }";
    steps
        .step(
            Succeeds,
            "setWebhookActive",
            admin,
            active,
            json!({ "id": hook, "a": true }),
        )
        .await;
    steps
        .step(
            Refused,
            "setWebhookActive (unknown)",
            admin,
            active,
            json!({ "id": "whk.unknown", "a": false }),
        )
        .await;
    app.create_track(admin_token, &event, "Heard").await;
    let failed = crate::webhooks::wait_for(app, admin_token, &event, "failed", |d| {
        d.len() == 1 && d[0]["status"] == "FAILED"
    })
    .await;
    let delivery = str_at(&failed[0], "/id");
    rx.status.store(200, std::sync::atomic::Ordering::SeqCst);
    let retry = "mutation($id: ID!) { retryWebhookDelivery(id: $id) { status } }";
    steps
        .step(
            Succeeds,
            "retryWebhookDelivery",
            admin,
            retry,
            json!({ "id": delivery }),
        )
        .await;
    steps
        .step(
            Refused,
            "retryWebhookDelivery (no longer failed)",
            admin,
            retry,
            json!({ "id": delivery }),
        )
        .await;
}
