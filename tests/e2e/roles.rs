//! Revoking a role takes what the role granted: a judge's unscored assignments, a
//! participant's team place; a judge's saved reviews stay.

use serde_json::json;

use crate::harness::{App, judged_fixture};

e2e! {
    revoking_a_role_takes_what_it_granted,
    a_member_reads_their_own_membership_email_only,
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

async fn a_member_reads_their_own_membership_email_only(app: App) {
    let s = app.scenario().await;
    // Their own membership: the email is theirs to read (it used to be FORBIDDEN).
    let me = app
        .ok(
            Some(&s.participant_a),
            "{ viewer { memberships { role email } } }",
            json!({}),
        )
        .await;
    assert_eq!(
        me["viewer"]["memberships"][0]["email"],
        json!(s.emails.participant_a),
        "{me}"
    );
    // Someone else's membership in the same event stays the organizers' to read.
    let members = "query($e: String!) { event(slug: $e) { members(first: 20) { edges { node { email } } } } }";
    let r = app
        .gql_as(&s.organizer_a, members, json!({ "e": s.event_a }))
        .await;
    let emails = r["data"]["event"]["members"]["edges"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    assert!(
        emails.len() >= 3,
        "organizers read every member's email: {r}"
    );
    let judge = app
        .gql_as(
            &s.judge_a,
            "query($e: String!) { event(slug: $e) { myAssignments { judge { email } } } }",
            json!({ "e": s.event_a }),
        )
        .await;
    assert!(crate::harness::error_code(&judge).is_none(), "{judge}");
}
