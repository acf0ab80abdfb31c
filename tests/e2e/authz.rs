//! The authorization matrix: every field and mutation of the scenario, asked by each of
//! the six callers (anonymous, participant of A, judge of A, organizer of A, organizer of
//! B, site admin). Failures are collected so one run shows the whole matrix.

use serde_json::{Value, json};

use crate::harness::{
    App, CALLERS, Caller, PASSWORD, Scenario, assert_code, data, error_code, op, str_at,
    tiny_fixture, unique,
};

/// What one caller should get.
#[derive(Clone, Copy, Debug)]
enum E {
    /// no error, the field is non-null
    Ok,
    /// no error, the field is null
    Null,
    /// an error with this code, the field is null
    Code(&'static str),
    /// null without error, or an error with this code
    NullOr(&'static str),
}

const UNAUTH: E = E::Code("UNAUTHENTICATED");
const FORBID: E = E::Code("FORBIDDEN");
const NOTFOUND: E = E::Code("NOT_FOUND");
const CONFLICT: E = E::Code("CONFLICT");

fn check(resp: &Value, pointer: &str, e: E) -> Result<(), String> {
    let code = error_code(resp);
    let val = resp
        .pointer(&format!("/data{pointer}"))
        .unwrap_or(&Value::Null);
    let fine = match e {
        E::Ok => code.is_none() && !val.is_null(),
        E::Null => code.is_none() && val.is_null(),
        E::Code(c) => code.as_deref() == Some(c) && val.is_null(),
        E::NullOr(c) => (code.is_none() && val.is_null()) || code.as_deref() == Some(c),
    };
    if fine {
        Ok(())
    } else {
        Err(format!("expected {e:?} at {pointer}, got {resp}"))
    }
}

type Extra = fn(&Scenario, Caller, &Value) -> Result<(), String>;

struct QueryRow {
    name: &'static str,
    query: &'static str,
    pointer: &'static str,
    /// anonymous, participant A, judge A, organizer A, organizer B, site admin
    expect: [E; 6],
    extra: Option<Extra>,
}

fn vars(s: &Scenario) -> Value {
    json!({ "a": s.event_a, "b": s.event_b, "draft": s.draft, "sub": s.submitted })
}

fn query_rows() -> Vec<QueryRow> {
    use E::*;
    vec![
        QueryRow {
            name: "viewer",
            query: "query { viewer { user { id } memberships { role } } }",
            pointer: "/viewer",
            expect: [Null, Ok, Ok, Ok, Ok, Ok],
            extra: Some(|s, c, r| {
                let want = match c {
                    Caller::Participant => &s.participant_a_id,
                    Caller::Judge => &s.judge_a_id,
                    Caller::OrganizerA => &s.organizer_a_id,
                    Caller::OrganizerB => &s.organizer_b_id,
                    _ => return Result::Ok(()),
                };
                let got = r.pointer("/data/viewer/user/id");
                if got == Some(&json!(want)) {
                    Result::Ok(())
                } else {
                    Err(format!("viewer is not the caller: {r}"))
                }
            }),
        },
        QueryRow {
            name: "viewer.user.email is one's own",
            query: "query { viewer { user { email } } }",
            pointer: "/viewer/user/email",
            expect: [Null, Ok, Ok, Ok, Ok, Ok],
            extra: None,
        },
        QueryRow {
            name: "event is public",
            query: "query($a: String!) { event(slug: $a) { id slug name tracks { id } } }",
            pointer: "/event",
            expect: [Ok, Ok, Ok, Ok, Ok, Ok],
            extra: Some(|s, _, r| {
                if r.pointer("/data/event/id") == Some(&json!(s.event_a_id))
                    && r.pointer("/data/event/tracks/0/id") == Some(&json!(s.track_a))
                {
                    Result::Ok(())
                } else {
                    Err(format!("event A with its track: {r}"))
                }
            }),
        },
        QueryRow {
            name: "unknown event is null",
            query: "query { event(slug: \"no-such-event\") { id } }",
            pointer: "/event",
            expect: [Null, Null, Null, Null, Null, Null],
            extra: None,
        },
        QueryRow {
            name: "events list is public",
            query: "query { events(first: 10) { totalCount edges { node { slug } } } }",
            pointer: "/events",
            expect: [Ok, Ok, Ok, Ok, Ok, Ok],
            extra: Some(|_, _, r| {
                let n = r
                    .pointer("/data/events/totalCount")
                    .and_then(Value::as_i64)
                    .unwrap_or(0);
                if n >= 2 {
                    Result::Ok(())
                } else {
                    Err(format!("events lists both events: {r}"))
                }
            }),
        },
        QueryRow {
            name: "Event.auditLog is organizer-only",
            query: "query($a: String!) { event(slug: $a) { auditLog(first: 5) { totalCount edges { node { seq action } } } } }",
            pointer: "/event/auditLog",
            expect: [UNAUTH, FORBID, FORBID, Ok, FORBID, Ok],
            extra: None,
        },
        QueryRow {
            name: "Event.members is organizer-only",
            query: "query($a: String!) { event(slug: $a) { members(first: 10) { totalCount edges { node { role user { id } } } } } }",
            pointer: "/event/members",
            expect: [UNAUTH, FORBID, FORBID, Ok, FORBID, Ok],
            extra: None,
        },
        QueryRow {
            name: "organizer of A cannot read B's audit log",
            query: "query($b: String!) { event(slug: $b) { id auditLog(first: 5) { totalCount } } }",
            pointer: "/event/auditLog",
            expect: [UNAUTH, FORBID, FORBID, FORBID, Ok, Ok],
            extra: Some(|s, _, r| match r.pointer("/data/event/id") {
                Some(id) if *id == json!(s.event_b_id) => Result::Ok(()),
                _ => Err(format!("event B itself stays visible: {r}")),
            }),
        },
        QueryRow {
            name: "Event.myTeam",
            query: "query($a: String!) { event(slug: $a) { myTeam { id } } }",
            pointer: "/event/myTeam",
            expect: [NullOr("UNAUTHENTICATED"), Ok, Null, Null, Null, Null],
            extra: Some(|s, c, r| {
                if c != Caller::Participant {
                    return Result::Ok(());
                }
                if r.pointer("/data/event/myTeam/id") == Some(&json!(s.team_a)) {
                    Result::Ok(())
                } else {
                    Err(format!("myTeam is the participant's team: {r}"))
                }
            }),
        },
        QueryRow {
            name: "gallery lists submitted projects only",
            query: "query($a: String!) { event(slug: $a) { projects(first: 10) { totalCount edges { node { id status } } } } }",
            pointer: "/event/projects",
            expect: [Ok, Ok, Ok, Ok, Ok, Ok],
            extra: Some(|s, _, r| {
                let ids: Vec<&Value> = r
                    .pointer("/data/event/projects/edges")
                    .and_then(Value::as_array)
                    .map(|a| a.iter().map(|e| &e["node"]["id"]).collect())
                    .unwrap_or_default();
                let total = r.pointer("/data/event/projects/totalCount");
                if ids == vec![&json!(s.submitted)] && total == Some(&json!(1)) {
                    Result::Ok(())
                } else {
                    Err(format!(
                        "gallery should be exactly the submitted project: {r}"
                    ))
                }
            }),
        },
        QueryRow {
            name: "project(id) of a draft",
            query: "query($draft: ID!) { project(id: $draft) { id title status } }",
            pointer: "/project",
            expect: [Null, Ok, Null, Ok, Null, Ok],
            extra: None,
        },
        QueryRow {
            name: "project(id) of a submitted project",
            query: "query($sub: ID!) { project(id: $sub) { id title status event { slug } track { id } } }",
            pointer: "/project",
            expect: [Ok, Ok, Ok, Ok, Ok, Ok],
            extra: None,
        },
        QueryRow {
            name: "the comment thread of a submitted project is public",
            query: "query($sub: ID!) { project(id: $sub) { comments(first: 5) { totalCount nodes { id } } } }",
            pointer: "/project/comments",
            expect: [Ok, Ok, Ok, Ok, Ok, Ok],
            extra: None,
        },
        QueryRow {
            name: "the comment thread of a draft goes with the draft",
            query: "query($draft: ID!) { project(id: $draft) { comments(first: 5) { totalCount } } }",
            pointer: "/project",
            expect: [Null, Ok, Null, Ok, Null, Ok],
            extra: None,
        },
        QueryRow {
            name: "unknown project is null",
            query: "query { project(id: \"prj_does_not_exist\") { id } }",
            pointer: "/project",
            expect: [Null, Null, Null, Null, Null, Null],
            extra: None,
        },
        QueryRow {
            // The spec is silent here; the server shows a team's members to members of
            // the event (and site admins).
            name: "Team.members",
            query: "query($sub: ID!) { project(id: $sub) { team { members { id } } } }",
            pointer: "/project/team/members",
            expect: [UNAUTH, Ok, Ok, Ok, FORBID, Ok],
            extra: Some(|s, _, r| {
                if r.pointer("/data/project/team/members/0/id") == Some(&json!(s.participant_a_id))
                {
                    Result::Ok(())
                } else {
                    Err(format!("the team's member is the participant: {r}"))
                }
            }),
        },
        QueryRow {
            name: "Team.inviteCode",
            query: "query($sub: ID!) { project(id: $sub) { team { inviteCode } } }",
            pointer: "/project/team/inviteCode",
            expect: [Null, Ok, Null, Ok, Null, Ok],
            extra: Some(|s, _, r| match r.pointer("/data/project/team/inviteCode") {
                Some(Value::String(c)) if *c != s.invite_code => {
                    Err(format!("inviteCode differs from createTeam's: {r}"))
                }
                _ => Result::Ok(()),
            }),
        },
        QueryRow {
            name: "Team.projects shows drafts to the team and organizers",
            query: "query($sub: ID!) { project(id: $sub) { team { projects { id status } } } }",
            pointer: "/project/team/projects",
            expect: [Ok, Ok, Ok, Ok, Ok, Ok],
            extra: Some(|_, c, r| {
                let n = r
                    .pointer("/data/project/team/projects")
                    .and_then(Value::as_array)
                    .map(Vec::len)
                    .unwrap_or(0);
                let want = match c {
                    Caller::Participant | Caller::OrganizerA | Caller::SiteAdmin => 2,
                    _ => 1,
                };
                if n == want {
                    Result::Ok(())
                } else {
                    Err(format!("{want} projects expected: {r}"))
                }
            }),
        },
        QueryRow {
            // Self, organizers of a shared event and site admins read an email; others
            // get null. (Anonymous and organizer B cannot reach this user at all.)
            name: "User.email of a team member",
            query: "query($sub: ID!) { project(id: $sub) { team { members { id email } } } }",
            pointer: "/project/team/members/0/email",
            expect: [
                NullOr("UNAUTHENTICATED"),
                Ok,
                Null,
                Ok,
                NullOr("FORBIDDEN"),
                Ok,
            ],
            extra: None,
        },
    ]
}

e2e! {
    authorization_queries,
    authorization_mutations,
    last_organizer_cannot_be_revoked,
}

async fn authorization_queries(app: App) {
    let s = app.scenario().await;
    let mut failures = vec![];
    for row in query_rows() {
        for (i, caller) in CALLERS.iter().enumerate() {
            let resp = app.gql_opt(s.token(*caller), row.query, vars(&s)).await;
            let mut res = check(&resp, row.pointer, row.expect[i]);
            if let (Ok(()), E::Ok, Some(extra)) = (&res, row.expect[i], row.extra) {
                res = extra(&s, *caller, &resp);
            }
            if let Err(e) = res {
                failures.push(format!("[{}] {:?}: {e}", row.name, caller));
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} authorization failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

async fn authorization_mutations(app: App) {
    let s = app.scenario().await;
    let event_c = format!("event-c-{}", unique());
    app.create_event(&s.admin, &event_c, 4).await;
    let mut failures = vec![];
    for row in MUTATIONS {
        for (i, caller) in CALLERS.iter().enumerate() {
            let (query, vars, session) = prepare(&app, &s, &event_c, row.kind, *caller).await;
            let token = session.as_deref().or(s.token(*caller));
            let before = app.try_audit_head().await;
            let resp = app.gql_opt(token, &query, vars).await;
            let expect = row.expect[i];
            if let Err(e) = check(&resp, row.pointer, expect) {
                failures.push(format!("[{}] {caller:?}: {e}", row.name));
                continue;
            }
            // A successful mutation appends exactly one audit event, a refused one none.
            let after = app.try_audit_head().await;
            let want = if matches!(expect, E::Ok) { 1 } else { 0 };
            match (before, after) {
                (Ok(b), Ok(a)) if a == b + want => {}
                (Ok(b), Ok(a)) => failures.push(format!(
                    "[{}] {caller:?}: audit head went {b} -> {a}, expected +{want}",
                    row.name
                )),
                (b, a) => failures.push(format!(
                    "[{}] {caller:?}: audit verify: {b:?} / {a:?}",
                    row.name
                )),
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} authorization failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// The last organizer of an event cannot be removed: the event would be orphaned.
async fn last_organizer_cannot_be_revoked(app: App) {
    let s = app.scenario().await;
    let members = app
        .ok(
            Some(&s.admin),
            op("EventMembers"),
            json!({ "event": s.event_a, "role": "ORGANIZER", "first": 100 }),
        )
        .await;
    let emails: Vec<String> = members["event"]["members"]["edges"]
        .as_array()
        .expect("organizer list")
        .iter()
        .map(|e| str_at(e, "/node/email"))
        .collect();
    assert!(
        emails.contains(&s.emails.organizer_a),
        "organizer A is listed: {members}"
    );
    let revoke = |email: &str| json!({ "event": s.event_a, "email": email, "role": "ORGANIZER" });
    // Remove every other organizer, then the last one is refused.
    for e in emails.iter().filter(|e| **e != s.emails.organizer_a) {
        let r = app.gql_as(&s.admin, op("RevokeRole"), revoke(e)).await;
        assert_eq!(data(&r)["revokeRole"], true, "{r}");
    }
    let before = app.audit_count(&s.organizer_a, &s.event_a).await;
    let r = app
        .gql_as(&s.admin, op("RevokeRole"), revoke(&s.emails.organizer_a))
        .await;
    assert_code(&r, "CONFLICT");
    let r = app
        .gql_as(
            &s.organizer_a,
            op("RevokeRole"),
            revoke(&s.emails.organizer_a),
        )
        .await;
    assert_code(&r, "CONFLICT");
    // Still an organizer, and nothing was audited.
    assert_eq!(app.audit_count(&s.organizer_a, &s.event_a).await, before);
}

#[derive(Clone, Copy)]
enum Kind {
    SignUp,
    LogIn,
    LogOut,
    CreateEvent,
    UpdateEvent,
    GrantRole,
    RevokeRole,
    RegisterForEvent,
    CreateTrack,
    CreateTeam,
    JoinTeam,
    AddTeamMember,
    CreateProject,
    UpdateProject,
    SubmitProject,
    WithdrawProject,
    CreateApiToken,
    RevokeApiToken,
    ImportEvent,
}

struct MutationRow {
    name: &'static str,
    kind: Kind,
    pointer: &'static str,
    /// anonymous, participant A, judge A, organizer A, organizer B, site admin
    expect: [E; 6],
}

const MUTATIONS: &[MutationRow] = {
    use E::Ok;
    &[
        MutationRow {
            name: "signUp (a new account)",
            kind: Kind::SignUp,
            pointer: "/signUp/token",
            expect: [Ok, Ok, Ok, Ok, Ok, Ok],
        },
        MutationRow {
            name: "logIn (another account)",
            kind: Kind::LogIn,
            pointer: "/logIn/token",
            expect: [Ok, Ok, Ok, Ok, Ok, Ok],
        },
        MutationRow {
            name: "logOut (a second session)",
            kind: Kind::LogOut,
            pointer: "/logOut",
            expect: [UNAUTH, Ok, Ok, Ok, Ok, Ok],
        },
        MutationRow {
            name: "createEvent",
            kind: Kind::CreateEvent,
            pointer: "/createEvent",
            expect: [UNAUTH, FORBID, FORBID, FORBID, FORBID, Ok],
        },
        MutationRow {
            name: "updateEvent",
            kind: Kind::UpdateEvent,
            pointer: "/updateEvent",
            expect: [UNAUTH, FORBID, FORBID, Ok, FORBID, Ok],
        },
        MutationRow {
            name: "grantRole",
            kind: Kind::GrantRole,
            pointer: "/grantRole",
            expect: [UNAUTH, FORBID, FORBID, Ok, FORBID, Ok],
        },
        MutationRow {
            name: "revokeRole",
            kind: Kind::RevokeRole,
            pointer: "/revokeRole",
            expect: [UNAUTH, FORBID, FORBID, Ok, FORBID, Ok],
        },
        MutationRow {
            name: "registerForEvent (event C)",
            kind: Kind::RegisterForEvent,
            pointer: "/registerForEvent",
            expect: [UNAUTH, Ok, Ok, Ok, Ok, Ok],
        },
        MutationRow {
            name: "createTrack",
            kind: Kind::CreateTrack,
            pointer: "/createTrack",
            expect: [UNAUTH, FORBID, FORBID, Ok, FORBID, Ok],
        },
        MutationRow {
            name: "createTeam",
            kind: Kind::CreateTeam,
            pointer: "/createTeam",
            expect: [UNAUTH, CONFLICT, FORBID, Ok, FORBID, Ok],
        },
        MutationRow {
            name: "joinTeam",
            kind: Kind::JoinTeam,
            pointer: "/joinTeam",
            expect: [UNAUTH, CONFLICT, FORBID, FORBID, FORBID, FORBID],
        },
        MutationRow {
            name: "addTeamMember",
            kind: Kind::AddTeamMember,
            pointer: "/addTeamMember",
            expect: [UNAUTH, FORBID, FORBID, Ok, FORBID, Ok],
        },
        MutationRow {
            name: "createProject",
            kind: Kind::CreateProject,
            pointer: "/createProject",
            expect: [UNAUTH, Ok, FORBID, FORBID, FORBID, FORBID],
        },
        MutationRow {
            name: "updateProject (draft)",
            kind: Kind::UpdateProject,
            pointer: "/updateProject",
            expect: [UNAUTH, Ok, NOTFOUND, FORBID, NOTFOUND, FORBID],
        },
        MutationRow {
            name: "submitProject (draft)",
            kind: Kind::SubmitProject,
            pointer: "/submitProject",
            expect: [UNAUTH, Ok, NOTFOUND, FORBID, NOTFOUND, FORBID],
        },
        MutationRow {
            name: "withdrawProject (submitted)",
            kind: Kind::WithdrawProject,
            pointer: "/withdrawProject",
            expect: [UNAUTH, Ok, FORBID, FORBID, FORBID, FORBID],
        },
        MutationRow {
            name: "createApiToken",
            kind: Kind::CreateApiToken,
            pointer: "/createApiToken",
            expect: [UNAUTH, Ok, Ok, Ok, Ok, Ok],
        },
        MutationRow {
            name: "revokeApiToken (the participant's)",
            kind: Kind::RevokeApiToken,
            pointer: "/revokeApiToken",
            expect: [UNAUTH, Ok, NOTFOUND, NOTFOUND, NOTFOUND, NOTFOUND],
        },
        MutationRow {
            name: "importEvent",
            kind: Kind::ImportEvent,
            pointer: "/importEvent",
            expect: [UNAUTH, FORBID, FORBID, FORBID, FORBID, Ok],
        },
    ]
};

/// Build the request for one (mutation, caller) cell, creating whatever fresh object it
/// needs so each cell is independent of the others.
///
/// The third value, when set, is the token to send instead of the caller's usual one (a
/// second session of the same caller, for logOut).
async fn prepare(
    app: &App,
    s: &Scenario,
    event_c: &str,
    kind: Kind,
    caller: Caller,
) -> (String, Value, Option<String>) {
    let (q, v) = prepare_request(app, s, event_c, kind, caller).await;
    let session = match (kind, s.credentials(caller)) {
        (Kind::LogOut, Some((email, password))) => Some(app.log_in(email, password).await),
        _ => None,
    };
    (q, v, session)
}

async fn prepare_request(
    app: &App,
    s: &Scenario,
    event_c: &str,
    kind: Kind,
    caller: Caller,
) -> (String, Value) {
    let tag = unique();
    let q = |name: &str| op(name).to_string();
    match kind {
        Kind::SignUp => (
            q("SignUp"),
            json!({ "email": format!("new-{tag}@example.org"), "password": PASSWORD, "displayName": "New" }),
        ),
        Kind::LogIn => {
            let email = format!("returning-{tag}@example.org");
            app.sign_up(&email).await;
            (q("LogIn"), json!({ "email": email, "password": PASSWORD }))
        }
        Kind::LogOut => (q("LogOut"), json!({})),
        Kind::CreateEvent => {
            let now = chrono::Utc::now();
            (
                q("CreateEvent"),
                json!({ "input": {
                    "slug": format!("made-{tag}"),
                    "name": "Made in the matrix",
                    "submissionsOpen": crate::harness::rfc3339(now),
                    "submissionsClose": crate::harness::rfc3339(now + chrono::Duration::days(1)),
                    "judgingOpen": crate::harness::rfc3339(now + chrono::Duration::days(2)),
                    "judgingClose": crate::harness::rfc3339(now + chrono::Duration::days(3)),
                    "reviewsPerProject": 3,
                    "maxTeamSize": 4
                }}),
            )
        }
        Kind::UpdateEvent => (
            q("UpdateEvent"),
            json!({ "event": s.event_a, "input": { "name": format!("Event A ({caller:?})") } }),
        ),
        Kind::GrantRole => {
            let email = format!("grantee-{tag}@example.org");
            app.sign_up(&email).await;
            (
                q("GrantRole"),
                json!({ "event": s.event_a, "email": email, "role": "JUDGE" }),
            )
        }
        Kind::RevokeRole => {
            let email = format!("revokee-{tag}@example.org");
            app.sign_up(&email).await;
            app.grant(&s.organizer_a, &s.event_a, &email, "JUDGE").await;
            (
                q("RevokeRole"),
                json!({ "event": s.event_a, "email": email, "role": "JUDGE" }),
            )
        }
        Kind::RegisterForEvent => (q("RegisterForEvent"), json!({ "event": event_c })),
        Kind::CreateTrack => (
            q("CreateTrack"),
            json!({ "event": s.event_a, "name": format!("Track {tag}") }),
        ),
        Kind::CreateTeam => (
            q("CreateTeam"),
            json!({ "event": s.event_a, "name": format!("Team {tag}") }),
        ),
        Kind::JoinTeam => {
            let (_, code) = app
                .create_team(&s.organizer_a, &s.event_a, &format!("Open team {tag}"))
                .await;
            (q("JoinTeam"), json!({ "inviteCode": code }))
        }
        Kind::AddTeamMember => {
            let email = format!("addee-{tag}@example.org");
            let token = app.sign_up(&email).await;
            app.register(&token, &s.event_a).await;
            let (team, _) = app
                .create_team(&s.organizer_a, &s.event_a, &format!("Staffed team {tag}"))
                .await;
            (q("AddTeamMember"), json!({ "team": team, "email": email }))
        }
        Kind::CreateProject => (
            q("CreateProject"),
            json!({ "event": s.event_a, "input": { "title": format!("Project {tag}"), "track": s.track_a } }),
        ),
        Kind::UpdateProject => {
            let id = app
                .create_project(
                    &s.participant_a,
                    &s.event_a,
                    &format!("Draft {tag}"),
                    &s.track_a,
                )
                .await;
            (
                q("UpdateProject"),
                json!({ "id": id, "input": { "tagline": format!("edited by {caller:?}") } }),
            )
        }
        Kind::SubmitProject => {
            let id = app
                .create_project(
                    &s.participant_a,
                    &s.event_a,
                    &format!("Draft {tag}"),
                    &s.track_a,
                )
                .await;
            (q("SubmitProject"), json!({ "id": id }))
        }
        Kind::WithdrawProject => {
            let id = app
                .create_project(
                    &s.participant_a,
                    &s.event_a,
                    &format!("Sub {tag}"),
                    &s.track_a,
                )
                .await;
            app.submit_project(&s.participant_a, &id).await;
            (q("WithdrawProject"), json!({ "id": id }))
        }
        Kind::CreateApiToken => (
            q("CreateApiToken"),
            json!({ "label": format!("token {tag}") }),
        ),
        Kind::RevokeApiToken => {
            let d = app
                .ok(
                    Some(&s.participant_a),
                    op("CreateApiToken"),
                    json!({ "label": format!("victim {tag}") }),
                )
                .await;
            (
                q("RevokeApiToken"),
                json!({ "id": str_at(&d, "/createApiToken/apiToken/id") }),
            )
        }
        Kind::ImportEvent => (q("ImportEvent"), json!({ "fixture": tiny_fixture(&tag) })),
    }
}
