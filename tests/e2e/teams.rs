//! Teams under contention: the team size limit holds when many people join at once.

use futures_util::future::join_all;
use serde_json::{Value, json};

use crate::harness::{App, assert_bad_input, assert_code, error_code, op, str_at, unique};

/// The team's members, as the site admin sees them.
async fn team_members(app: &App, admin: &str, event: &str, team: &str) -> Vec<Value> {
    let d = app
        .ok(
            Some(admin),
            "query($e: String!) { event(slug: $e) { teams(first: 100) { edges { node { id members { id } } } } } }",
            json!({ "e": event }),
        )
        .await;
    let edges = d["event"]["teams"]["edges"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let node = edges
        .iter()
        .map(|e| &e["node"])
        .find(|n| n["id"] == json!(team))
        .unwrap_or_else(|| panic!("team {team} not listed in {d}"));
    node["members"].as_array().cloned().unwrap_or_default()
}

e2e! {
    concurrent_joins_fill_the_team_exactly,
    one_team_per_participant_per_event,
    teams_are_frozen_after_the_deadline,
    members_leave_and_organizers_remove_with_a_reason,
    invite_codes_rotate_and_expire,
    members_rename_before_the_deadline_and_organizers_with_a_reason,
    team_links_admit_one_person_each_and_the_size_limit_holds,
}

async fn concurrent_joins_fill_the_team_exactly(app: App) {
    let admin = app.site_admin().await;
    let event = format!("crowd-{}", unique());
    app.create_event(&admin, &event, 4).await;
    let captain = app
        .sign_up(&format!("captain-{}@example.org", unique()))
        .await;
    app.register(&captain, &event).await;
    let (team, code) = app.create_team(&captain, &event, "Room for three").await;

    let joiners: Vec<(String, String)> = join_all((0..20).map(|i| {
        let app = &app;
        let event = &event;
        async move {
            let (token, id) = app
                .sign_up_full(&format!("joiner-{i}-{}@example.org", unique()))
                .await;
            app.register(&token, event).await;
            (token, id)
        }
    }))
    .await;

    let results = join_all(
        joiners
            .iter()
            .map(|(t, _)| app.gql_as(t, op("JoinTeam"), json!({ "inviteCode": code }))),
    )
    .await;
    let mut ok = vec![];
    let mut conflicts = 0;
    let mut other = vec![];
    for (r, (_, id)) in results.iter().zip(&joiners) {
        match error_code(r).as_deref() {
            None if r["data"]["joinTeam"]["id"] == json!(team) => ok.push(id.clone()),
            Some("CONFLICT") => conflicts += 1,
            _ => other.push(r.to_string()),
        }
    }
    assert!(
        other.is_empty(),
        "every join either succeeds or is a CONFLICT: {other:#?}"
    );
    assert_eq!(ok.len(), 3, "exactly the three free places are taken");
    assert_eq!(conflicts, 17);

    let members = team_members(&app, &admin, &event, &team).await;
    assert_eq!(members.len(), 4, "the team is exactly full: {members:?}");
    for id in &ok {
        assert!(
            members.iter().any(|m| m["id"] == json!(id)),
            "joiner {id} is a member"
        );
    }

    // A full team refuses the organizer too.
    let extra = format!("late-{}@example.org", unique());
    let late = app.sign_up(&extra).await;
    app.register(&late, &event).await;
    let r = app
        .gql_as(
            &admin,
            op("AddTeamMember"),
            json!({ "team": team, "email": extra }),
        )
        .await;
    assert_code(&r, "CONFLICT");
    assert_eq!(team_members(&app, &admin, &event, &team).await.len(), 4);
}

async fn one_team_per_participant_per_event(app: App) {
    let admin = app.site_admin().await;
    let event = format!("solo-{}", unique());
    app.create_event(&admin, &event, 4).await;
    let a = app.sign_up(&format!("a-{}@example.org", unique())).await;
    let b = app.sign_up(&format!("b-{}@example.org", unique())).await;
    app.register(&a, &event).await;
    app.register(&b, &event).await;
    let (_, code_a) = app.create_team(&a, &event, "Team one").await;
    let (team_b, code_b) = app.create_team(&b, &event, "Team two").await;
    // a is on Team one: joining Team two, or its own again, or creating a team is a CONFLICT.
    assert_code(
        &app.gql_as(&a, op("JoinTeam"), json!({ "inviteCode": code_b }))
            .await,
        "CONFLICT",
    );
    assert_code(
        &app.gql_as(&a, op("JoinTeam"), json!({ "inviteCode": code_a }))
            .await,
        "CONFLICT",
    );
    let r = app
        .gql_as(
            &a,
            op("CreateTeam"),
            json!({ "event": event, "name": "Third" }),
        )
        .await;
    assert_code(&r, "CONFLICT");
    assert_eq!(team_members(&app, &admin, &event, &team_b).await.len(), 1);
    // An unknown invite code is NOT_FOUND.
    assert_code(
        &app.gql_as(&a, op("JoinTeam"), json!({ "inviteCode": "no-such-code" }))
            .await,
        "NOT_FOUND",
    );
    // The same person joining twice at once still ends up on one team once.
    let c = app.sign_up(&format!("c-{}@example.org", unique())).await;
    app.register(&c, &event).await;
    let rs =
        join_all((0..5).map(|_| app.gql_as(&c, op("JoinTeam"), json!({ "inviteCode": code_b }))))
            .await;
    let oks = rs.iter().filter(|r| error_code(r).is_none()).count();
    assert_eq!(oks, 1, "one of the simultaneous joins succeeds: {rs:?}");
    for r in rs.iter().filter(|r| error_code(r).is_some()) {
        assert_code(r, "CONFLICT");
    }
    let members = team_members(&app, &admin, &event, &team_b).await;
    assert_eq!(members.len(), 2, "{members:?}");
    let d = app
        .ok(
            Some(&c),
            "query($e: String!) { event(slug: $e) { myTeam { id } } }",
            json!({ "e": event }),
        )
        .await;
    assert_eq!(str_at(&d, "/event/myTeam/id"), team_b);
}

async fn teams_are_frozen_after_the_deadline(app: App) {
    // An imported event whose submission deadline has passed.
    let admin = app.site_admin().await;
    let tag = crate::harness::unique();
    app.ok(
        Some(&admin),
        "mutation($f: JSON!) { importEvent(fixture: $f) { inserted } }",
        json!({ "f": crate::harness::tiny_fixture(&tag) }),
    )
    .await;
    let slug = format!("tiny-{tag}");
    let teams = app
        .ok(
            Some(&admin),
            "query($e: String!) { event(slug: $e) { teams(first: 10) { edges { node { inviteCode } } } } }",
            json!({ "e": slug }),
        )
        .await;
    let code = teams["event"]["teams"]["edges"][0]["node"]["inviteCode"]
        .as_str()
        .expect("the organizer reads the invite code")
        .to_owned();
    let late = app.sign_up(&format!("late-{tag}@example.org")).await;
    app.ok(
        Some(&admin),
        "mutation($e: String!, $m: String!) { grantRole(event: $e, email: $m, role: PARTICIPANT) { id } }",
        json!({ "e": slug, "m": format!("late-{tag}@example.org") }),
    )
    .await;
    let head = app.audit_head().await;
    let r = app
        .gql_as(
            &late,
            "mutation($c: String!) { joinTeam(inviteCode: $c) { id } }",
            json!({ "c": code }),
        )
        .await;
    crate::harness::assert_code(&r, "WINDOW_CLOSED");
    assert_eq!(app.audit_head().await, head, "a refusal writes nothing");
}

/// A second participant joins `s`'s team A with its code; returns their token and email.
async fn teammate(app: &App, s: &crate::harness::Scenario, name: &str) -> (String, String) {
    let email = format!("{name}-{}@example.org", unique());
    let token = app.sign_up(&email).await;
    app.register(&token, &s.event_a).await;
    app.ok(
        Some(&token),
        op("JoinTeam"),
        json!({ "inviteCode": s.invite_code }),
    )
    .await;
    (token, email)
}

async fn members_leave_and_organizers_remove_with_a_reason(app: App) {
    let s = app.scenario().await;
    let team = json!({ "team": s.team_a });
    let (mate, mate_email) = teammate(&app, &s, "mate").await;
    app.ok(Some(&mate), op("LeaveTeam"), team.clone()).await;
    assert_code(
        &app.gql_as(&mate, op("LeaveTeam"), team.clone()).await,
        "CONFLICT",
    );
    // The last member of a team with a submitted project stays, whoever asks.
    let head = app.audit_head().await;
    assert_code(
        &app.gql_as(&s.participant_a, op("LeaveTeam"), team.clone())
            .await,
        "CONFLICT",
    );
    let remove =
        |email: &str, reason: &str| json!({ "team": s.team_a, "email": email, "reason": reason });
    assert_code(
        &app.gql_as(
            &s.organizer_a,
            op("RemoveTeamMember"),
            remove(&s.emails.participant_a, "gone"),
        )
        .await,
        "CONFLICT",
    );
    assert_eq!(app.audit_head().await, head);
    // Organizers remove with a reason that is audited; nobody else removes anyone.
    app.ok(
        Some(&mate),
        op("JoinTeam"),
        json!({ "inviteCode": s.invite_code }),
    )
    .await;
    for who in [&s.participant_a, &s.judge_a, &s.organizer_b] {
        assert_code(
            &app.gql_as(who, op("RemoveTeamMember"), remove(&mate_email, "mine"))
                .await,
            "FORBIDDEN",
        );
    }
    assert_bad_input(
        &app.gql_as(
            &s.organizer_a,
            op("RemoveTeamMember"),
            remove(&mate_email, " "),
        )
        .await,
        &["reason"],
    );
    let d = app
        .ok(
            Some(&s.organizer_a),
            op("RemoveTeamMember"),
            remove(&mate_email, "joined by mistake"),
        )
        .await;
    assert_eq!(
        d["removeTeamMember"]["members"].as_array().map(Vec::len),
        Some(1)
    );
    let log = crate::audit::audit_log(&app, &s.organizer_a, &s.event_a).await;
    let removed = log
        .iter()
        .find(|e| e["action"] == "team.member_removed")
        .expect("the removal is audited");
    assert!(
        removed["payload"].to_string().contains("joined by mistake"),
        "{removed}"
    );
}

async fn invite_codes_rotate_and_expire(app: App) {
    let s = app.scenario().await;
    let team = json!({ "team": s.team_a });
    let outsider = app.sign_up(&format!("out-{}@example.org", unique())).await;
    app.register(&outsider, &s.event_a).await;
    assert_code(
        &app.gql_as(&outsider, op("RotateInviteCode"), team.clone())
            .await,
        "FORBIDDEN",
    );
    let d = app
        .ok(Some(&s.participant_a), op("RotateInviteCode"), team.clone())
        .await;
    let code = str_at(&d, "/rotateInviteCode/inviteCode");
    assert_ne!(code, s.invite_code);
    let expires: chrono::DateTime<chrono::Utc> = d["rotateInviteCode"]["inviteCodeExpiresAt"]
        .as_str()
        .expect("an expiry")
        .parse()
        .expect("a time");
    let now = chrono::Utc::now();
    assert!(
        expires > now && expires <= now + chrono::Duration::hours(72),
        "{expires}"
    );
    // The old code is gone; the new one works until it expires.
    assert_code(
        &app.gql_as(
            &outsider,
            op("JoinTeam"),
            json!({ "inviteCode": s.invite_code }),
        )
        .await,
        "NOT_FOUND",
    );
    {
        use entity::team;
        use sea_orm::{ColumnTrait, EntityTrait, QueryFilter, sea_query::Expr};
        let conn = sea_orm::Database::connect(app.db.url())
            .await
            .expect("connect");
        team::Entity::update_many()
            .col_expr(
                team::Column::InviteCodeExpiresAt,
                Expr::value(now - chrono::Duration::minutes(1)),
            )
            .filter(team::Column::InviteCode.eq(&code))
            .exec(&conn)
            .await
            .expect("expire the code");
        let _ = conn.close().await;
    }
    assert_code(
        &app.gql_as(&outsider, op("JoinTeam"), json!({ "inviteCode": code }))
            .await,
        "WINDOW_CLOSED",
    );
}

async fn members_rename_before_the_deadline_and_organizers_with_a_reason(app: App) {
    let s = app.scenario().await;
    let rename = |name: &str| json!({ "team": s.team_a, "name": name });
    let d = app
        .ok(
            Some(&s.participant_a),
            op("RenameTeam"),
            rename("Night Owls"),
        )
        .await;
    assert_eq!(d["renameTeam"]["name"], "Night Owls");
    for who in [&s.judge_a, &s.organizer_b] {
        assert_code(
            &app.gql_as(who, op("RenameTeam"), rename("Mine")).await,
            "FORBIDDEN",
        );
    }
    assert_bad_input(
        &app.gql_as(&s.organizer_a, op("RenameTeam"), rename("Clean name"))
            .await,
        &["reason"],
    );
    // After the deadline the team is frozen for its members, not for the organizers.
    app.close_submissions(&s.organizer_a, &s.event_a).await;
    assert_code(
        &app.gql_as(&s.participant_a, op("RenameTeam"), rename("Late"))
            .await,
        "WINDOW_CLOSED",
    );
    assert_code(
        &app.gql_as(
            &s.participant_a,
            op("LeaveTeam"),
            json!({ "team": s.team_a }),
        )
        .await,
        "WINDOW_CLOSED",
    );
    let mut by_organizer = rename("Clean name");
    by_organizer["reason"] = json!("the name was offensive");
    let d = app
        .ok(Some(&s.organizer_a), op("RenameTeam"), by_organizer)
        .await;
    assert_eq!(d["renameTeam"]["name"], "Clean name");
}

async fn team_links_admit_one_person_each_and_the_size_limit_holds(app: App) {
    let admin = app.site_admin().await;
    let tag = unique();
    let event = format!("links-{tag}");
    app.create_event(&admin, &event, 3).await;
    let captain = app.sign_up(&format!("captain-{tag}@example.org")).await;
    app.register(&captain, &event).await;
    let (team, _) = app.create_team(&captain, &event, "Linked").await;
    let invite = |email: &str| json!({ "team": team, "email": email });
    let outsider = app.sign_up(&format!("outsider-{tag}@example.org")).await;
    app.register(&outsider, &event).await;
    assert_code(
        &app.gql_as(&outsider, op("InviteToTeam"), invite("x@example.org"))
            .await,
        "FORBIDDEN",
    );
    // Five links for a team with room for two more, redeemed at once by five new people.
    let mut tokens = vec![];
    for i in 0..5 {
        let d = app
            .ok(
                Some(&captain),
                op("InviteToTeam"),
                invite(&format!("recruit-{i}-{tag}@example.org")),
            )
            .await;
        let link = str_at(&d, "/inviteToTeam/link");
        tokens.push(crate::invitations::token_after(&link, "/invite/").expect("a link"));
    }
    let answers = join_all(tokens.iter().map(|t| {
        app.gql(
            op("RedeemInvitation"),
            json!({ "token": t, "password": crate::harness::PASSWORD }),
        )
    }))
    .await;
    let won: Vec<usize> = (0..5)
        .filter(|i| answers[*i].get("errors").is_none())
        .collect();
    let codes: Vec<String> = answers.iter().filter_map(error_code).collect();
    assert_eq!(won.len(), 2, "two places were free: {codes:?}");
    assert!(codes.iter().all(|c| c == "CONFLICT"), "{codes:?}");
    assert_eq!(team_members(&app, &admin, &event, &team).await.len(), 3);
    // A used link stays used.
    let again = app
        .gql(
            op("RedeemInvitation"),
            json!({ "token": tokens[won[0]], "password": crate::harness::PASSWORD }),
        )
        .await;
    assert_code(&again, "CONFLICT");
}
