use super::*;

/// Event A's members (organizer, judge, participant) aim every ID argument of the schema
/// at objects of another event: its projects (submitted and draft), team, track, judge,
/// assignment, comment, prize, invitation, webhook and delivery, calibration run and job,
/// and its organizer's API token, by public id and, where the object has one, by external
/// id. Every call is refused (NOT_FOUND or FORBIDDEN; for a reference beside the object
/// acted on, BAD_USER_INPUT naming it), no other event's id comes back, and nothing is
/// written. The cases are a table checked against `schema.graphql`: a new ID argument
/// without a case fails this test.
pub(super) async fn no_id_argument_reaches_another_events_objects(app: App) {
    let cases = cases();
    let covered: BTreeSet<String> = cases.iter().map(|c| c.site.to_string()).collect();
    let sites = id_sites();
    let missing: Vec<&String> = sites.difference(&covered).collect();
    let stale: Vec<&String> = covered.difference(&sites).collect();
    assert!(
        missing.is_empty() && stale.is_empty(),
        "every ID argument of schema.graphql needs a case here; without one: {missing:?}; \
         cases for arguments that no longer exist: {stale:?}"
    );
    // Every case's operation is valid against the schema (a typo must not pass as a refusal).
    {
        use apollo_compiler::{ExecutableDocument, Schema};
        let schema =
            Schema::parse_and_validate(include_str!("../../../schema.graphql"), "schema.graphql")
                .unwrap_or_else(|e| panic!("schema.graphql: {}", e.errors));
        for c in &cases {
            if let Err(e) = ExecutableDocument::parse_and_validate(&schema, c.query, c.site) {
                panic!("{}: {}", c.site, e.errors);
            }
        }
    }

    let w = world(&app).await;
    let foreign_ids: Vec<String> = w.c.values().map(|(id, _)| id.clone()).collect();
    let callers = [
        ("organizer of A", w.a.organizer_a.clone()),
        ("judge of A", w.a.judge_a.clone()),
        ("participant of A", w.a.participant_a.clone()),
    ];
    let probe = app.probe().await;
    let mut before = probe.snapshot().await;
    let mut failures = vec![];
    let mut calls = 0;
    for case in &cases {
        let (public, external) = &w.c[&case.obj];
        let ids: Vec<&String> = std::iter::once(public).chain(external).collect();
        for id in ids {
            for (who, token) in &callers {
                let vars = (case.vars)(&w, id);
                let label = format!("[{}] {who} with {:?} {id}", case.site, case.obj);
                let answer = match case.via {
                    Via::Subscription => {
                        let mut ws = app.ws(bearer(token)).await;
                        let msg = ws_answer(&mut ws, "x", case.query, vars).await;
                        json!({ "errors": ws_errors(&msg), "data": msg["payload"]["data"] })
                    }
                    _ => app.gql_as(token, case.query, vars).await,
                };
                calls += 1;
                eprintln!(
                    "{label}: {} {}",
                    error_code(&answer).unwrap_or_else(|| "none".into()),
                    crate::harness::error_message(&answer)
                );
                if let Err(e) = refused(case, &answer) {
                    failures.push(format!("{label}: {e}: {answer}"));
                }
                let text = answer.to_string();
                if let Some(leak) = foreign_ids
                    .iter()
                    .find(|f| *f != id && text.contains(f.as_str()))
                {
                    failures.push(format!(
                        "{label}: another event's id {leak} came back: {answer}"
                    ));
                }
                let after = probe.snapshot().await;
                let changed = after.changed_since(&before, &[]);
                if !changed.is_empty() {
                    failures.push(format!("{label}: wrote to {changed:?}: {answer}"));
                }
                before = after;
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {calls} cross-event calls were not refused cleanly:\n{}",
        failures.len(),
        failures.join("\n")
    );
    assert!(calls >= cases.len() * 3, "{calls} calls");
}

/// Whether `answer` is a refusal of `case`.
pub(super) fn refused(case: &Case, answer: &Value) -> Result<(), String> {
    let code = error_code(answer);
    let field = answer
        .pointer("/errors/0/extensions/field")
        .and_then(Value::as_str)
        .unwrap_or("");
    let refusal = match code.as_deref() {
        Some("NOT_FOUND" | "FORBIDDEN") => true,
        Some("BAD_USER_INPUT") => case.reference.iter().any(|r| field.contains(r)),
        Some(other) => return Err(format!("refused with {other}")),
        None => false,
    };
    match case.via {
        Via::Mutation(name) => {
            if !refusal {
                return Err("not refused".into());
            }
            if !answer["data"].is_null() && !answer["data"][name].is_null() {
                return Err("the mutation answered".into());
            }
        }
        Via::Subscription => {
            if !refusal {
                return Err("not refused".into());
            }
        }
        Via::Query(pointer) => {
            let value = answer
                .pointer(&format!("/data{pointer}"))
                .unwrap_or(&Value::Null);
            let empty = value.is_null()
                || value.as_array().is_some_and(Vec::is_empty)
                || (value["totalCount"] == 0
                    && value["edges"].as_array().is_some_and(Vec::is_empty));
            if code.is_some() && !refusal {
                return Err("refused with the wrong code".into());
            }
            if !empty {
                return Err("the query answered".into());
            }
        }
    }
    Ok(())
}

/// Builds event A (the standard scenario, with a judge's membership, a prize and an open
/// vote) and event C, imported from the judged fixture plus a draft, with one object of
/// every kind, made by C's own organizer.
pub(super) async fn world(app: &App) -> World {
    let a = app.scenario().await;
    let tag = unique();
    // A's side of the pairs.
    let members = app
        .ok(
            Some(&a.organizer_a),
            "query($e: String!) { event(slug: $e) { members(role: JUDGE, first: 5) { edges { node { id } } } } }",
            json!({ "e": a.event_a }),
        )
        .await;
    let a_judge = str_at(&members, "/event/members/edges/0/node/id");
    let d = app
        .ok(
            Some(&a.organizer_a),
            "mutation($e: String!) { createPrize(event: $e, input: { name: \"A's prize\", position: 1 }) { id } }",
            json!({ "e": a.event_a }),
        )
        .await;
    let a_prize = str_at(&d, "/createPrize/id");
    let now = chrono::Utc::now();
    app.ok(
        Some(&a.organizer_a),
        "mutation($e: String!, $o: DateTime!, $c: DateTime!) { configureVoting(event: $e, mode: ACCOUNT, credits: 9, opens: $o, closes: $c) { mode } }",
        json!({ "e": a.event_a,
                "o": crate::harness::rfc3339(now - chrono::Duration::days(1)),
                "c": crate::harness::rfc3339(now + chrono::Duration::days(1)) }),
    )
    .await;
    let newcomer = format!("newcomer-{tag}@example.org");
    let newcomer_token = app.sign_up(&newcomer).await;
    app.register(&newcomer_token, &a.event_a).await;

    // Event C: judged, with a draft of its own.
    let mut fixture = crate::harness::judged_fixture(&tag);
    let slug = format!("csv-{tag}");
    fixture["teams"]
        .as_array_mut()
        .expect("teams")
        .push(json!({ "external_id": format!("tp5_{tag}"), "name": "Drafting", "members": [] }));
    fixture["projects"]
        .as_array_mut()
        .expect("projects")
        .push(json!({
            "external_id": format!("p5_{tag}"), "team": format!("tp5_{tag}"), "track": format!("trk_{tag}"),
            "title": "C's secret draft", "tagline": "", "summary": "", "repo_url": "", "demo_url": "",
            "tags": [], "status": "draft", "submitted_at": null
        }));
    app.ok(
        Some(&a.admin),
        "mutation($f: JSON!) { importEvent(fixture: $f) { inserted } }",
        json!({ "f": fixture }),
    )
    .await;
    let c_org = app.mint_token(&format!("csv-o-{tag}@example.org")).await;
    let org = Some(c_org.as_str());
    let e = json!({ "e": slug });
    let mut c = BTreeMap::new();
    let project = |external: &str| {
        let external = external.to_string();
        let c_org = c_org.clone();
        async move {
            let d = app
                .ok(
                    Some(&c_org),
                    "query($id: ID!) { project(id: $id) { id team { id } } }",
                    json!({ "id": external }),
                )
                .await;
            (str_at(&d, "/project/id"), str_at(&d, "/project/team/id"))
        }
    };
    let (p1, team) = project(&format!("p1_{tag}")).await;
    let (p5, _) = project(&format!("p5_{tag}")).await;
    c.insert(Obj::Project, (p1.clone(), Some(format!("p1_{tag}"))));
    c.insert(Obj::Draft, (p5, Some(format!("p5_{tag}"))));
    c.insert(Obj::Team, (team, Some(format!("tp1_{tag}"))));
    let d = app
        .ok(
            org,
            "query($e: String!) { event(slug: $e) { tracks { id } members(role: JUDGE, first: 1) { edges { node { id externalId } } } assignments(first: 1) { nodes { id } } } }",
            e.clone(),
        )
        .await;
    c.insert(
        Obj::Track,
        (str_at(&d, "/event/tracks/0/id"), Some(format!("trk_{tag}"))),
    );
    c.insert(
        Obj::Judge,
        (
            str_at(&d, "/event/members/edges/0/node/id"),
            Some(str_at(&d, "/event/members/edges/0/node/externalId")),
        ),
    );
    c.insert(
        Obj::Assignment,
        (str_at(&d, "/event/assignments/nodes/0/id"), None),
    );
    let d = app
        .ok(
            org,
            "mutation($p: ID!) { postComment(project: $p, body: \"C's comment\") { id } }",
            json!({ "p": p1 }),
        )
        .await;
    c.insert(Obj::Comment, (str_at(&d, "/postComment/id"), None));
    let d = app
        .ok(
            org,
            "mutation($e: String!) { createPrize(event: $e, input: { name: \"C's prize\", position: 1 }) { id } }",
            e.clone(),
        )
        .await;
    c.insert(Obj::Prize, (str_at(&d, "/createPrize/id"), None));
    let d = app
        .ok(
            org,
            "mutation($e: String!, $m: [String!]!) { inviteToEvent(event: $e, emails: $m, role: JUDGE) { id } }",
            json!({ "e": slug, "m": [format!("invitee-{tag}@example.org")] }),
        )
        .await;
    c.insert(Obj::Invitation, (str_at(&d, "/inviteToEvent/0/id"), None));
    let d = app
        .ok(
            org,
            "mutation($e: String!) { registerWebhook(event: $e, url: \"http://127.0.0.1:9/hook\", actions: [\"track.\"]) { webhook { id } } }",
            e.clone(),
        )
        .await;
    c.insert(
        Obj::Webhook,
        (str_at(&d, "/registerWebhook/webhook/id"), None),
    );
    app.create_track(&c_org, &slug, "Heard by the webhook")
        .await;
    let d = app
        .ok(
            org,
            "query($e: String!) { event(slug: $e) { webhookDeliveries(first: 1) { nodes { id } } } }",
            e.clone(),
        )
        .await;
    c.insert(
        Obj::Delivery,
        (str_at(&d, "/event/webhookDeliveries/nodes/0/id"), None),
    );
    let d = app
        .ok(
            org,
            op("RunCalibration"),
            json!({ "event": slug, "seed": 1, "bootstrap": 10 }),
        )
        .await;
    c.insert(Obj::Run, (str_at(&d, "/runCalibration/id"), None));
    let d = app
        .ok(
            org,
            "mutation($e: String!) { startCalibration(event: $e, bootstrap: 10) { id } }",
            e.clone(),
        )
        .await;
    let job = str_at(&d, "/startCalibration/id");
    // The job ends (and stores its run) before the cases run.
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    loop {
        let d = app
            .ok(
                org,
                "query($e: String!, $j: ID!) { event(slug: $e) { calibrationJob(id: $j) { state } } }",
                json!({ "e": slug, "j": job }),
            )
            .await;
        if d["event"]["calibrationJob"]["state"] == "DONE" {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the job did not end: {d}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    c.insert(Obj::Job, (job, None));
    let d = app
        .ok(org, "{ viewer { apiTokens { id } } }", json!({}))
        .await;
    c.insert(Obj::ApiToken, (str_at(&d, "/viewer/apiTokens/0/id"), None));
    World {
        a,
        a_judge,
        a_prize,
        newcomer,
        c_member: format!("csv-4-{tag}@example.org"),
        c,
    }
}
