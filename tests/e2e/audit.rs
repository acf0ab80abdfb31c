//! The audit chain: one event per successful mutation, none per refused one, and a chain
//! that `verdict audit verify` accepts after a concurrent burst and rejects once tampered.

use std::collections::BTreeSet;

use futures_util::{StreamExt, stream};
use serde_json::{Value, json};

use crate::harness::{App, PASSWORD, error_code, op, str_at, tiny_fixture, unique};

e2e! {
    // Webhooks: a receiver on 127.0.0.1 that fails fast enough to retry by hand.
    every_mutation_appends_exactly_one_audit_event [
        "--allow-loopback-webhooks",
        "--webhook-backoff-ms",
        "20"
    ],
    concurrent_burst_keeps_the_chain_intact,
    tampering_is_detected,
}

/// Every audit event of an event, oldest first, paging through `auditLog`.
pub async fn audit_log(app: &App, organizer: &str, event: &str) -> Vec<Value> {
    let mut out = vec![];
    let mut after: Option<String> = None;
    loop {
        let d = app
            .ok(
                Some(organizer),
                "query($e: String!, $after: String) { event(slug: $e) { auditLog(first: 100, after: $after) {
                    edges { node { seq occurredAt action objectType objectId payload prevHash rowHash actor } }
                    pageInfo { hasNextPage endCursor } } } }",
                json!({ "e": event, "after": after }),
            )
            .await;
        let log = &d["event"]["auditLog"];
        for e in log["edges"].as_array().expect("edges") {
            out.push(e["node"].clone());
        }
        if log["pageInfo"]["hasNextPage"] != true {
            break;
        }
        after = Some(str_at(log, "/pageInfo/endCursor"));
    }
    out.sort_by_key(|n| {
        n["seq"]
            .as_u64()
            .or_else(|| n["seq"].as_str().and_then(|s| s.parse().ok()))
    });
    out
}

fn seq_of(n: &Value) -> u64 {
    n["seq"]
        .as_u64()
        .or_else(|| n["seq"].as_str().and_then(|s| s.parse().ok()))
        .unwrap_or_else(|| panic!("seq is not a number: {n}"))
}

/// Whether a step's mutation should go through.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Outcome {
    /// It succeeds and appends exactly one audit event.
    Succeeds,
    /// It is refused with an error code and appends nothing.
    Refused,
    /// It succeeds and writes nothing: `autoAssign(apply: false)`, a dry run, and
    /// `verifyRecord`, a pure check.
    DryRun,
}
use Outcome::{DryRun, Refused, Succeeds};

/// Runs mutations, checking the audit head after each, and records which mutation fields
/// were seen to succeed and to be refused.
struct Steps<'a> {
    app: &'a App,
    succeeded: BTreeSet<String>,
    refused: BTreeSet<String>,
}

impl<'a> Steps<'a> {
    fn new(app: &'a App) -> Self {
        Steps {
            app,
            succeeded: BTreeSet::new(),
            refused: BTreeSet::new(),
        }
    }

    /// Run one mutation and check the audit head moved by exactly one (or not at all when
    /// it is refused, or a dry run).
    async fn step(
        &mut self,
        outcome: Outcome,
        label: &str,
        token: Option<&str>,
        query: &str,
        vars: Value,
    ) -> Value {
        let app = self.app;
        let before = app.audit_head().await;
        let r = app.gql_opt(token, query, vars).await;
        let delta = match outcome {
            Succeeds | DryRun => {
                assert!(r.get("errors").is_none(), "{label} should succeed: {r}");
                u64::from(outcome == Succeeds)
            }
            Refused => {
                assert!(error_code(&r).is_some(), "{label} should be refused: {r}");
                0
            }
        };
        let after = app.audit_head().await;
        assert_eq!(
            after,
            before + delta,
            "{label}: audit head {before} -> {after}"
        );
        let seen = match outcome {
            Succeeds => &mut self.succeeded,
            Refused => &mut self.refused,
            DryRun => return r,
        };
        seen.extend(root_fields(query));
        r
    }
}

/// The root fields an operation selects.
fn root_fields(query: &str) -> Vec<String> {
    use apollo_compiler::ast::{Definition, Document, Selection};
    let doc = Document::parse(query, "step.graphql")
        .unwrap_or_else(|e| panic!("a step's operation does not parse:\n{}", e.errors));
    doc.definitions
        .iter()
        .filter_map(|d| match d {
            Definition::OperationDefinition(o) => Some(o),
            _ => None,
        })
        .flat_map(|o| o.selection_set.iter())
        .filter_map(|s| match s {
            Selection::Field(f) => Some(f.name.to_string()),
            _ => None,
        })
        .collect()
}

/// Every mutation field of the checked-in `schema.graphql` (which `cargo test --test
/// schema` keeps equal to the code).
fn schema_mutations() -> BTreeSet<String> {
    const SDL: &str = include_str!("../../schema.graphql");
    let schema = apollo_compiler::Schema::parse(SDL, "schema.graphql")
        .unwrap_or_else(|e| panic!("schema.graphql does not parse:\n{}", e.errors));
    let root = schema
        .schema_definition
        .mutation
        .as_ref()
        .expect("the schema has mutations");
    let mutation = schema
        .get_object(root.name.as_str())
        .expect("the mutation root type");
    mutation.fields.keys().map(|k| k.to_string()).collect()
}

async fn every_mutation_appends_exactly_one_audit_event(app: App) {
    let mut steps = Steps::new(&app);
    // First, while no account exists: the printed setup link, used once, then refused.
    let link =
        crate::setup::printed_setup_link(&app).expect("a fresh deployment prints a setup link");
    let token = link.rsplit('/').next().unwrap_or_default();
    let set_up = "mutation($t: String!, $e: String!, $p: String!) {
        setUpSite(token: $t, email: $e, password: $p, displayName: \"First\") { token } }";
    let first =
        json!({ "t": token, "e": format!("first-{}@example.org", unique()), "p": PASSWORD });
    steps
        .step(Succeeds, "setUpSite", None, set_up, first.clone())
        .await;
    steps
        .step(Refused, "setUpSite (used)", None, set_up, first)
        .await;
    let admin = app.site_admin().await;
    let admin = Some(admin.as_str());
    let t = unique();
    let event = format!("audited-{t}");
    let now = chrono::Utc::now();
    let d = |days: i64| crate::harness::rfc3339(now + chrono::Duration::days(days));
    let input = json!({ "slug": event, "name": "Audited",
        "submissionsOpen": d(-1), "submissionsClose": d(1), "judgingOpen": d(2), "judgingClose": d(3),
        "reviewsPerProject": 3, "maxTeamSize": 3, "registration": "OPEN" });
    steps
        .step(
            Succeeds,
            "createEvent",
            admin,
            op("CreateEvent"),
            json!({ "input": input.clone() }),
        )
        .await;
    steps
        .step(
            Refused,
            "createEvent (slug taken)",
            admin,
            op("CreateEvent"),
            json!({ "input": input }),
        )
        .await;

    // Accounts and sessions.
    let org_email = format!("org-{t}@example.org");
    let vars = json!({ "email": org_email, "password": PASSWORD, "displayName": "Someone" });
    let r = steps
        .step(Succeeds, "signUp", None, op("SignUp"), vars.clone())
        .await;
    let org_token = str_at(&r, "/data/signUp/token");
    let org = Some(org_token.as_str());
    steps
        .step(
            Refused,
            "signUp (taken email)",
            None,
            op("SignUp"),
            vars.clone(),
        )
        .await;
    let log_in = json!({ "email": org_email, "password": PASSWORD });
    let first_session = str_at(
        &steps
            .step(Succeeds, "logIn", None, op("LogIn"), log_in)
            .await,
        "/data/logIn/token",
    );
    let wrong = json!({ "email": org_email, "password": "wrong wrong wrong" });
    steps
        .step(Refused, "logIn (bad password)", None, op("LogIn"), wrong)
        .await;
    steps
        .step(
            Succeeds,
            "logOut",
            Some(&first_session),
            op("LogOut"),
            json!({}),
        )
        .await;
    steps
        .step(
            Refused,
            "logOut (again)",
            Some(&first_session),
            op("LogOut"),
            json!({}),
        )
        .await;

    account_steps(&mut steps, admin, org, &org_email, &event).await;

    // Roles.
    let grant = json!({ "event": event, "email": org_email, "role": "ORGANIZER" });
    steps
        .step(Succeeds, "grantRole", admin, op("GrantRole"), grant.clone())
        .await;
    steps
        .step(
            Refused,
            "grantRole (held already)",
            admin,
            op("GrantRole"),
            grant,
        )
        .await;
    let judge_email = format!("judge-{t}@example.org");
    app.sign_up(&judge_email).await;
    let judge = json!({ "event": event, "email": judge_email, "role": "JUDGE" });
    steps
        .step(
            Succeeds,
            "grantRole judge",
            org,
            op("GrantRole"),
            judge.clone(),
        )
        .await;
    steps
        .step(Succeeds, "revokeRole", org, op("RevokeRole"), judge.clone())
        .await;
    steps
        .step(
            Refused,
            "revokeRole (not held)",
            org,
            op("RevokeRole"),
            judge,
        )
        .await;

    // The event and its tracks.
    steps
        .step(
            Succeeds,
            "updateEvent",
            org,
            op("UpdateEvent"),
            json!({ "event": event, "input": { "name": "Audited!" } }),
        )
        .await;
    let r = steps
        .step(
            Succeeds,
            "createTrack",
            org,
            op("CreateTrack"),
            json!({ "event": event, "name": "Main" }),
        )
        .await;
    let track = str_at(&r, "/data/createTrack/id");
    let stranger = app.sign_up(&format!("stranger-{t}@example.org")).await;
    let stranger = Some(stranger.as_str());
    steps
        .step(
            Refused,
            "updateEvent (not an organizer)",
            stranger,
            op("UpdateEvent"),
            json!({ "event": event, "input": { "name": "Mine now" } }),
        )
        .await;
    steps
        .step(
            Refused,
            "createTrack (not an organizer)",
            stranger,
            op("CreateTrack"),
            json!({ "event": event, "name": "Sneaky" }),
        )
        .await;

    // API tokens.
    let p = app.sign_up(&format!("p-{t}@example.org")).await;
    let p = Some(p.as_str());
    let ci = json!({ "label": "ci" });
    let r = steps
        .step(Succeeds, "createApiToken", p, op("CreateApiToken"), ci)
        .await;
    let id = json!({ "id": str_at(&r, "/data/createApiToken/apiToken/id") });
    steps
        .step(
            Refused,
            "createApiToken (signed out)",
            None,
            op("CreateApiToken"),
            json!({ "label": "anonymous" }),
        )
        .await;
    steps
        .step(
            Succeeds,
            "revokeApiToken",
            p,
            op("RevokeApiToken"),
            id.clone(),
        )
        .await;
    steps
        .step(
            Refused,
            "revokeApiToken (again)",
            p,
            op("RevokeApiToken"),
            id,
        )
        .await;

    // Teams.
    steps
        .step(
            Succeeds,
            "registerForEvent",
            p,
            op("RegisterForEvent"),
            json!({ "event": event }),
        )
        .await;
    steps
        .step(
            Refused,
            "registerForEvent (again)",
            p,
            op("RegisterForEvent"),
            json!({ "event": event }),
        )
        .await;
    let r = steps
        .step(
            Succeeds,
            "createTeam",
            p,
            op("CreateTeam"),
            json!({ "event": event, "name": "T" }),
        )
        .await;
    let team = str_at(&r, "/data/createTeam/id");
    let code = json!({ "inviteCode": str_at(&r, "/data/createTeam/inviteCode") });
    let q = app.sign_up(&format!("q-{t}@example.org")).await;
    app.register(&q, &event).await;
    steps
        .step(Succeeds, "joinTeam", Some(&q), op("JoinTeam"), code.clone())
        .await;
    steps
        .step(
            Refused,
            "createTeam (already on one)",
            p,
            op("CreateTeam"),
            json!({ "event": event, "name": "Second" }),
        )
        .await;
    let r_email = format!("r-{t}@example.org");
    app.sign_up(&r_email).await;
    let add = json!({ "team": team, "email": r_email });
    steps
        .step(Succeeds, "addTeamMember", org, op("AddTeamMember"), add)
        .await;
    steps
        .step(
            Refused,
            "addTeamMember (no such account)",
            org,
            op("AddTeamMember"),
            json!({ "team": team, "email": format!("nobody-{t}@example.org") }),
        )
        .await;
    let s_tok = app.sign_up(&format!("s-{t}@example.org")).await;
    app.register(&s_tok, &event).await;
    steps
        .step(
            Refused,
            "joinTeam (full)",
            Some(&s_tok),
            op("JoinTeam"),
            code,
        )
        .await;
    let team_id = json!({ "team": team });
    let recruit = json!({ "team": team, "email": format!("recruit-{t}@example.org") });
    steps
        .step(
            Succeeds,
            "inviteToTeam",
            p,
            op("InviteToTeam"),
            recruit.clone(),
        )
        .await;
    steps
        .step(
            Refused,
            "inviteToTeam (outsider)",
            Some(&s_tok),
            op("InviteToTeam"),
            recruit,
        )
        .await;
    steps
        .step(
            Succeeds,
            "leaveTeam",
            Some(&q),
            op("LeaveTeam"),
            team_id.clone(),
        )
        .await;
    steps
        .step(
            Refused,
            "leaveTeam (again)",
            Some(&q),
            op("LeaveTeam"),
            team_id.clone(),
        )
        .await;
    let remove = json!({ "team": team, "email": r_email, "reason": "asked to" });
    steps
        .step(
            Succeeds,
            "removeTeamMember",
            org,
            op("RemoveTeamMember"),
            remove.clone(),
        )
        .await;
    steps
        .step(
            Refused,
            "removeTeamMember (again)",
            org,
            op("RemoveTeamMember"),
            remove,
        )
        .await;
    let rename = json!({ "team": team, "name": "Renamed" });
    steps
        .step(Succeeds, "renameTeam", p, op("RenameTeam"), rename.clone())
        .await;
    steps
        .step(
            Refused,
            "renameTeam (outsider)",
            Some(&s_tok),
            op("RenameTeam"),
            rename,
        )
        .await;
    steps
        .step(
            Succeeds,
            "rotateInviteCode",
            p,
            op("RotateInviteCode"),
            team_id.clone(),
        )
        .await;
    steps
        .step(
            Refused,
            "rotateInviteCode (outsider)",
            Some(&s_tok),
            op("RotateInviteCode"),
            team_id,
        )
        .await;

    // Projects.
    let new = json!({ "event": event, "input": { "title": "Audited project", "track": track } });
    let r = steps
        .step(Succeeds, "createProject", p, op("CreateProject"), new)
        .await;
    let project = str_at(&r, "/data/createProject/id");
    let untitled = json!({ "event": event, "input": { "track": track } });
    steps
        .step(
            Refused,
            "createProject (no title)",
            p,
            op("CreateProject"),
            untitled,
        )
        .await;
    let edit = json!({ "id": project, "input": { "tagline": "now with a tagline" } });
    steps
        .step(Succeeds, "updateProject", p, op("UpdateProject"), edit)
        .await;
    let bad = json!({ "id": project, "input": { "repoUrl": "javascript:alert(1)" } });
    steps
        .step(
            Refused,
            "updateProject (bad URL)",
            p,
            op("UpdateProject"),
            bad,
        )
        .await;
    let id = json!({ "id": project });
    steps
        .step(
            Succeeds,
            "submitProject",
            p,
            op("SubmitProject"),
            id.clone(),
        )
        .await;
    steps
        .step(
            Refused,
            "submitProject (again)",
            p,
            op("SubmitProject"),
            id.clone(),
        )
        .await;
    steps
        .step(
            Succeeds,
            "withdrawProject",
            p,
            op("WithdrawProject"),
            id.clone(),
        )
        .await;
    steps
        .step(
            Refused,
            "withdrawProject (again)",
            p,
            op("WithdrawProject"),
            id,
        )
        .await;
    moderation_steps(&mut steps, admin, p, &event, &project, &track).await;

    // A Devpost export: a preview writes nothing; the import appends one entry.
    let csv = format!(
        "Project Title,Submission Url,Submitter Email,Table Number\n\
         Imported,https://devpost.com/software/audited-{t},dp-{t}@example.org,40\n"
    );
    let devpost = "mutation($e: String!, $csv: String!, $dry: Boolean) {
        importDevpost(event: $e, csv: $csv, dryRun: $dry) { projects } }";
    let vars = json!({ "e": event, "csv": csv, "dry": true });
    steps
        .step(DryRun, "importDevpost (dry run)", admin, devpost, vars)
        .await;
    let vars = json!({ "e": event, "csv": csv });
    steps
        .step(
            Refused,
            "importDevpost (participant)",
            p,
            devpost,
            vars.clone(),
        )
        .await;
    steps
        .step(Succeeds, "importDevpost", admin, devpost, vars)
        .await;

    // Tracks renamed, and deleted while unused.
    let spare = str_at(
        &app.ok(
            admin,
            op("CreateTrack"),
            json!({ "event": event, "name": "Spare" }),
        )
        .await,
        "/createTrack/id",
    );
    let rename = "mutation($id: ID!, $n: String!) { renameTrack(id: $id, name: $n) { id name } }";
    let vars = json!({ "id": spare, "n": "Hardware" });
    steps
        .step(Succeeds, "renameTrack", admin, rename, vars.clone())
        .await;
    steps
        .step(Refused, "renameTrack (same name)", admin, rename, vars)
        .await;
    let delete = "mutation($id: ID!) { deleteTrack(id: $id) }";
    steps
        .step(
            Refused,
            "deleteTrack (in use)",
            admin,
            delete,
            json!({ "id": track }),
        )
        .await;
    steps
        .step(
            Succeeds,
            "deleteTrack",
            admin,
            delete,
            json!({ "id": spare }),
        )
        .await;
    let links = "mutation($e: String!) { exportInvitationLinks(event: $e) { email link } }";
    steps
        .step(
            Refused,
            "exportInvitationLinks (participant)",
            p,
            links,
            json!({ "e": event }),
        )
        .await;
    steps
        .step(
            Succeeds,
            "exportInvitationLinks",
            admin,
            links,
            json!({ "e": event }),
        )
        .await;

    // Import.
    let fixture = json!({ "fixture": tiny_fixture(&t) });
    steps
        .step(
            Succeeds,
            "importEvent",
            admin,
            op("ImportEvent"),
            fixture.clone(),
        )
        .await;
    steps
        .step(
            Refused,
            "importEvent (not an admin)",
            org,
            op("ImportEvent"),
            fixture,
        )
        .await;

    // Deleting an event.
    let doomed = format!("doomed-{t}");
    if let Some(a) = admin {
        app.create_event(a, &doomed, 3).await;
    }
    let delete = "mutation($e: String!, $c: String!) { deleteEvent(event: $e, confirm: $c) }";
    steps
        .step(
            Refused,
            "deleteEvent (not confirmed)",
            admin,
            delete,
            json!({ "e": doomed, "c": "another-slug" }),
        )
        .await;
    steps
        .step(
            Succeeds,
            "deleteEvent",
            admin,
            delete,
            json!({ "e": doomed, "c": doomed }),
        )
        .await;

    // Erasure.
    let gone = format!("erase-{t}@example.org");
    app.sign_up(&gone).await;
    let erase =
        "mutation($e: String!, $c: String!) { eraseAccount(email: $e, confirm: $c) { id } }";
    steps
        .step(
            Refused,
            "eraseAccount (not confirmed)",
            admin,
            erase,
            json!({ "e": gone, "c": "someone-else@example.org" }),
        )
        .await;
    steps
        .step(
            Succeeds,
            "eraseAccount",
            admin,
            erase,
            json!({ "e": gone, "c": gone }),
        )
        .await;

    people_steps(&mut steps, admin, p, &event, &t).await;
    judge_sign_in_steps(&mut steps, admin, p, &event, &t).await;
    judging_steps(&mut steps, admin, &t).await;
    voting_steps(&mut steps, admin, &t).await;
    record_steps(&mut steps, &event, &t).await;
    webhook_steps(&mut steps, admin, &t).await;

    // Every mutation of the schema was run both ways above: one that is added without a
    // step here fails this test.
    let all = schema_mutations();
    let missing = |seen: &BTreeSet<String>| all.difference(seen).cloned().collect::<Vec<_>>();
    assert!(
        missing(&steps.succeeded).is_empty() && missing(&steps.refused).is_empty(),
        "mutations in schema.graphql without an audited step here: never succeeding {:?}, \
         never refused {:?}",
        missing(&steps.succeeded),
        missing(&steps.refused)
    );

    // The event's log names what happened, in the convention noun.verb_past.
    let log = audit_log(&app, &org_token, &event).await;
    let actions: Vec<&str> = log.iter().filter_map(|n| n["action"].as_str()).collect();
    for want in ["project.submitted", "project.withdrawn", "track.created"] {
        assert!(
            actions.contains(&want),
            "{want} in the event's audit log: {actions:?}"
        );
    }
    // Each row links to the previous one in the global chain when seqs are adjacent.
    for w in log.windows(2) {
        let (a, b) = (seq_of(&w[0]), seq_of(&w[1]));
        if b == a + 1 {
            assert_eq!(w[1]["prevHash"], w[0]["rowHash"], "chain link {a} -> {b}");
        }
    }
}

/// The account's own settings: confirming its address (until then no role is granted to
/// it by email), the password, the name and the address.
async fn account_steps(
    steps: &mut Steps<'_>,
    admin: Option<&str>,
    org: Option<&str>,
    org_email: &str,
    event: &str,
) {
    use crate::invitations::confirm_link;
    let grant = json!({ "event": event, "email": org_email, "role": "ORGANIZER" });
    steps
        .step(
            Refused,
            "grantRole (unconfirmed)",
            admin,
            op("GrantRole"),
            grant,
        )
        .await;
    steps
        .step(
            Succeeds,
            "resendConfirmation",
            org,
            op("ResendConfirmation"),
            json!({}),
        )
        .await;
    let token = json!({ "token": confirm_link(steps.app, org_email).await });
    steps
        .step(
            Succeeds,
            "confirmEmail",
            None,
            op("ConfirmEmail"),
            token.clone(),
        )
        .await;
    steps
        .step(
            Refused,
            "confirmEmail (used)",
            None,
            op("ConfirmEmail"),
            token,
        )
        .await;
    steps
        .step(
            Refused,
            "resendConfirmation (confirmed)",
            org,
            op("ResendConfirmation"),
            json!({}),
        )
        .await;
    let change = |current: &str| json!({ "currentPassword": current, "newPassword": PASSWORD });
    steps
        .step(
            Succeeds,
            "changePassword",
            org,
            op("ChangePassword"),
            change(PASSWORD),
        )
        .await;
    steps
        .step(
            Refused,
            "changePassword (wrong current)",
            org,
            op("ChangePassword"),
            change("not the password"),
        )
        .await;
    let name = |n: &str| json!({ "displayName": n });
    steps
        .step(
            Succeeds,
            "updateProfile",
            org,
            op("UpdateProfile"),
            name("Org"),
        )
        .await;
    steps
        .step(
            Refused,
            "updateProfile (empty)",
            org,
            op("UpdateProfile"),
            name(" "),
        )
        .await;
    let new_email = |e: &str| json!({ "newEmail": e, "currentPassword": PASSWORD });
    steps
        .step(
            Succeeds,
            "changeEmail",
            org,
            op("ChangeEmail"),
            new_email(&format!("moved-{org_email}")),
        )
        .await;
    steps
        .step(
            Refused,
            "changeEmail (taken)",
            org,
            op("ChangeEmail"),
            new_email("root@example.org"),
        )
        .await;
}

/// Hiding, disqualifying and marking duplicates: `admin` organizes `event`, `p` made
/// `project` on `track`.
async fn moderation_steps(
    steps: &mut Steps<'_>,
    admin: Option<&str>,
    p: Option<&str>,
    event: &str,
    project: &str,
    track: &str,
) {
    let app = steps.app;
    let other = app
        .ok(
            p,
            op("CreateProject"),
            json!({ "event": event, "input": { "title": "Copy", "track": track } }),
        )
        .await;
    let other = str_at(&other, "/createProject/id");
    let id = json!({ "id": project });
    let why = json!({ "id": project, "reason": "spam" });
    let pairs: [(&str, &str, Value, &str, Value); 6] = [
        (
            "hideProject",
            op("HideProject"),
            why.clone(),
            op("HideProject"),
            why.clone(),
        ),
        (
            "unhideProject",
            op("UnhideProject"),
            id.clone(),
            op("UnhideProject"),
            id.clone(),
        ),
        (
            "disqualifyProject",
            op("DisqualifyProject"),
            why.clone(),
            op("DisqualifyProject"),
            why,
        ),
        (
            "requalifyProject",
            op("RequalifyProject"),
            id.clone(),
            op("RequalifyProject"),
            id,
        ),
        (
            "markDuplicate",
            op("MarkDuplicate"),
            json!({ "id": other, "of": project }),
            op("MarkDuplicate"),
            json!({ "id": other, "of": project }),
        ),
        (
            "clearDuplicate",
            op("ClearDuplicate"),
            json!({ "id": other }),
            op("ClearDuplicate"),
            json!({ "id": other }),
        ),
    ];
    // Each succeeds for the organizer, then is refused the second time (nothing to
    // change: CONFLICT) or for the participant.
    for (name, query, vars, again, again_vars) in pairs {
        steps
            .step(
                Refused,
                &format!("{name} (participant)"),
                p,
                query,
                vars.clone(),
            )
            .await;
        steps.step(Succeeds, name, admin, query, vars).await;
        steps
            .step(
                Refused,
                &format!("{name} (again)"),
                admin,
                again,
                again_vars,
            )
            .await;
    }
    let second = app
        .create_track(admin.expect("admin"), event, "Second track")
        .await;
    let mv = json!({ "id": project, "track": second, "reason": "fits better" });
    steps
        .step(
            Succeeds,
            "changeProjectTrack",
            admin,
            op("ChangeProjectTrack"),
            mv.clone(),
        )
        .await;
    steps
        .step(
            Refused,
            "changeProjectTrack (there already)",
            admin,
            op("ChangeProjectTrack"),
            mv,
        )
        .await;
    let table = json!({ "project": project, "table": "12" });
    steps
        .step(
            Succeeds,
            "setProjectTable",
            admin,
            op("SetProjectTable"),
            table.clone(),
        )
        .await;
    steps
        .step(
            Refused,
            "setProjectTable (there already)",
            admin,
            op("SetProjectTable"),
            table,
        )
        .await;
}

/// A judge's standing sign-in: issued (one judge, every judge), used (link, code),
/// revoked. `admin` organizes `event`, `p` is a participant.
async fn judge_sign_in_steps(
    steps: &mut Steps<'_>,
    admin: Option<&str>,
    p: Option<&str>,
    event: &str,
    t: &str,
) {
    let app = steps.app;
    let email = format!("standing-judge-{t}@example.org");
    app.sign_up(&email).await;
    let judge = app
        .grant(admin.expect("admin"), event, &email, "JUDGE")
        .await;
    let one = json!({ "event": event, "judge": judge });
    steps
        .step(
            Refused,
            "issueJudgeSignIn (not an organizer)",
            p,
            op("IssueJudgeSignIn"),
            one.clone(),
        )
        .await;
    steps
        .step(
            Succeeds,
            "issueJudgeSignIn",
            admin,
            op("IssueJudgeSignIn"),
            one.clone(),
        )
        .await;
    let all = json!({ "event": event });
    steps
        .step(
            Refused,
            "issueJudgeSignIns (not an organizer)",
            p,
            op("IssueJudgeSignIns"),
            all.clone(),
        )
        .await;
    let r = steps
        .step(
            Succeeds,
            "issueJudgeSignIns",
            admin,
            op("IssueJudgeSignIns"),
            all,
        )
        .await;
    let mine = r["data"]["issueJudgeSignIns"]["signIns"]
        .as_array()
        .expect("sign-ins")
        .iter()
        .find(|s| s["email"] == email.as_str())
        .cloned()
        .expect("the judge's new link");
    let token = str_at(&mine, "/link")
        .rsplit('/')
        .next()
        .unwrap_or_default()
        .to_owned();
    steps
        .step(
            Succeeds,
            "signInAsJudge",
            None,
            op("SignInAsJudge"),
            json!({ "token": token }),
        )
        .await;
    steps
        .step(
            Refused,
            "signInAsJudge (unknown link)",
            None,
            op("SignInAsJudge"),
            json!({ "token": format!("vjs_{}", "0".repeat(40)) }),
        )
        .await;
    let code = json!({ "event": event, "code": str_at(&mine, "/code") });
    steps
        .step(
            Succeeds,
            "signInAsJudgeByCode",
            None,
            op("SignInAsJudgeByCode"),
            code,
        )
        .await;
    steps
        .step(
            Refused,
            "signInAsJudgeByCode (wrong code)",
            None,
            op("SignInAsJudgeByCode"),
            json!({ "event": event, "code": "ZZZZ-ZZZZ" }),
        )
        .await;
    steps
        .step(
            Succeeds,
            "revokeJudgeSignIn",
            admin,
            op("RevokeJudgeSignIn"),
            one.clone(),
        )
        .await;
    steps
        .step(
            Refused,
            "revokeJudgeSignIn (none live)",
            admin,
            op("RevokeJudgeSignIn"),
            one,
        )
        .await;
}

/// Invitations and password reset: `admin` organizes `event`, `p` is a participant.
async fn people_steps(
    steps: &mut Steps<'_>,
    admin: Option<&str>,
    p: Option<&str>,
    event: &str,
    t: &str,
) {
    use crate::invitations::{invitation_link, reset_link};
    let app = steps.app;
    let invitee = format!("invitee-{t}@example.org");
    let invite = |email: &str| json!({ "event": event, "emails": [email], "role": "JUDGE" });
    steps
        .step(
            Succeeds,
            "inviteToEvent",
            admin,
            op("InviteToEvent"),
            invite(&invitee),
        )
        .await;
    steps
        .step(
            Refused,
            "inviteToEvent (not an organizer)",
            p,
            op("InviteToEvent"),
            invite(&invitee),
        )
        .await;
    let token = invitation_link(app, admin.expect("admin"), event, &invitee).await;
    let redeem = json!({ "token": token, "password": PASSWORD, "displayName": "Invitee" });
    steps
        .step(
            Succeeds,
            "redeemInvitation",
            None,
            op("RedeemInvitation"),
            redeem.clone(),
        )
        .await;
    steps
        .step(
            Refused,
            "redeemInvitation (used)",
            None,
            op("RedeemInvitation"),
            redeem,
        )
        .await;
    let r = steps
        .step(
            Succeeds,
            "inviteToEvent (another)",
            admin,
            op("InviteToEvent"),
            invite(&format!("second-{t}@example.org")),
        )
        .await;
    let id = json!({ "id": str_at(&r, "/data/inviteToEvent/0/id") });
    steps
        .step(
            Succeeds,
            "resendInvitation",
            admin,
            op("ResendInvitation"),
            id.clone(),
        )
        .await;
    steps
        .step(
            Succeeds,
            "revokeInvitation",
            admin,
            op("RevokeInvitation"),
            id.clone(),
        )
        .await;
    steps
        .step(
            Refused,
            "revokeInvitation (again)",
            admin,
            op("RevokeInvitation"),
            id.clone(),
        )
        .await;
    steps
        .step(
            Refused,
            "resendInvitation (revoked)",
            admin,
            op("ResendInvitation"),
            id,
        )
        .await;
    let ev = json!({ "event": event });
    steps
        .step(
            Succeeds,
            "inviteImported",
            admin,
            op("InviteImported"),
            ev.clone(),
        )
        .await;
    steps
        .step(
            Refused,
            "inviteImported (not an organizer)",
            p,
            op("InviteImported"),
            ev,
        )
        .await;
    steps
        .step(
            Succeeds,
            "requestPasswordReset",
            None,
            op("RequestPasswordReset"),
            json!({ "email": invitee }),
        )
        .await;
    steps
        .step(
            Refused,
            "requestPasswordReset (not an email)",
            None,
            op("RequestPasswordReset"),
            json!({ "email": "nobody" }),
        )
        .await;
    let reset =
        json!({ "token": reset_link(app, &invitee).await, "password": "another password 123" });
    steps
        .step(
            Succeeds,
            "resetPassword",
            None,
            op("ResetPassword"),
            reset.clone(),
        )
        .await;
    steps
        .step(
            Refused,
            "resetPassword (used)",
            None,
            op("ResetPassword"),
            reset,
        )
        .await;
}

/// The judging mutations, on an event whose submissions and judging are both open: the
/// rubric, assignments (by hand and planned), reviews, recusals, the calibration run, its
/// publication and exports.
async fn judging_steps(steps: &mut Steps<'_>, admin: Option<&str>, t: &str) {
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
async fn comment_steps(steps: &mut Steps<'_>, admin: Option<&str>, p: Option<&str>, project: &str) {
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
async fn voting_steps(steps: &mut Steps<'_>, admin: Option<&str>, t: &str) {
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
async fn record_steps(steps: &mut Steps<'_>, event: &str, t: &str) {
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
async fn webhook_steps(steps: &mut Steps<'_>, admin: Option<&str>, t: &str) {
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

async fn concurrent_burst_keeps_the_chain_intact(app: App) {
    let s = app.scenario().await;
    let head_before = app.audit_head().await;
    let event_before = app.audit_count(&s.organizer_a, &s.event_a).await;

    const N: usize = 500;
    let results: Vec<Value> = stream::iter(0..N)
        .map(|i| {
            let app = &app;
            let s = &s;
            async move {
                if i % 2 == 0 {
                    app.gql_as(
                        &s.participant_a,
                        op("UpdateProject"),
                        json!({ "id": s.draft, "input": { "tagline": format!("revision {i}") } }),
                    )
                    .await
                } else {
                    app.gql_as(
                        &s.organizer_a,
                        op("CreateTrack"),
                        json!({ "event": s.event_a, "name": format!("Track {i}") }),
                    )
                    .await
                }
            }
        })
        .buffer_unordered(16)
        .collect()
        .await;
    let failed: Vec<&Value> = results
        .iter()
        .filter(|r| error_code(r).is_some() || r.get("errors").is_some())
        .collect();
    assert!(
        failed.is_empty(),
        "{} of {N} concurrent mutations failed, e.g. {:?}",
        failed.len(),
        failed.iter().take(3).collect::<Vec<_>>()
    );

    // `audit verify` passes, and its head moved by exactly the number of mutations.
    let head_after = app.audit_head().await;
    assert_eq!(
        head_after,
        head_before + N as u64,
        "one audit event per mutation"
    );
    assert_eq!(
        app.audit_count(&s.organizer_a, &s.event_a).await,
        event_before + N as i64
    );

    // The burst is contiguous in the chain (nothing else wrote meanwhile) and linked.
    let log = audit_log(&app, &s.organizer_a, &s.event_a).await;
    let burst: Vec<&Value> = log.iter().filter(|n| seq_of(n) > head_before).collect();
    assert_eq!(burst.len(), N);
    for (i, w) in burst.windows(2).enumerate() {
        assert_eq!(seq_of(w[1]), seq_of(w[0]) + 1, "seqs are gapless at {i}");
        assert_eq!(
            w[1]["prevHash"],
            w[0]["rowHash"],
            "chain link at seq {}",
            seq_of(w[1])
        );
    }
    assert_eq!(seq_of(burst[N - 1]), head_after);
    let tracks = app
        .ok(
            None,
            "query($e: String!) { event(slug: $e) { tracks { id } } }",
            json!({ "e": s.event_a }),
        )
        .await;
    assert_eq!(
        tracks["event"]["tracks"].as_array().map(Vec::len),
        Some(1 + N / 2)
    );
}

async fn tampering_is_detected(app: App) {
    use sea_orm::{ConnectionTrait, Database, DbBackend, Statement};
    app.scenario().await;
    let head = app.audit_head().await;
    assert!(head >= 5, "the scenario wrote several audit events");
    let victim = head / 2;
    let db = Database::connect(app.db.url())
        .await
        .expect("connect to the test database");

    // The database itself refuses to rewrite or delete history.
    let tamper =
        format!("UPDATE audit_events SET payload = '{{\"tampered\":true}}' WHERE seq = {victim}");
    assert!(
        db.execute_unprepared(&tamper).await.is_err(),
        "an audit row cannot be updated"
    );
    let delete = format!("DELETE FROM audit_events WHERE seq = {victim}");
    assert!(
        db.execute_unprepared(&delete).await.is_err(),
        "an audit row cannot be deleted"
    );
    assert_eq!(app.audit_head().await, head);

    // Someone with DDL rights removes the guard and edits one row: verify names it.
    match app.backend() {
        crate::harness::Backend::Postgres => {
            db.execute_unprepared("ALTER TABLE audit_events DISABLE TRIGGER USER")
                .await
                .expect("disable triggers");
        }
        crate::harness::Backend::Sqlite => {
            let rows = db
                .query_all_raw(Statement::from_string(
                    DbBackend::Sqlite,
                    "SELECT name FROM sqlite_master WHERE type = 'trigger' AND tbl_name = 'audit_events'",
                ))
                .await
                .expect("list triggers");
            for r in rows {
                let name: String = r.try_get_by_index(0).expect("trigger name");
                db.execute_unprepared(&format!("DROP TRIGGER {name}"))
                    .await
                    .expect("drop trigger");
            }
        }
    }
    let res = db
        .execute_unprepared(&tamper)
        .await
        .expect("tamper with the audit table");
    assert_eq!(res.rows_affected(), 1, "one audit row changed");
    let _ = db.close().await;

    let out = app.cli(&["audit", "verify"]).await;
    assert_eq!(
        out.code,
        Some(1),
        "audit verify fails on a tampered chain: {out:?}"
    );
    let text = format!("{}{}", out.stdout, out.stderr);
    let numbers: Vec<u64> = text
        .split(|c: char| !c.is_ascii_digit())
        .filter_map(|w| w.parse().ok())
        .collect();
    assert!(
        numbers.contains(&victim),
        "audit verify names seq {victim}: {text}"
    );
    assert!(
        !numbers
            .iter()
            .any(|n| *n > 0 && *n < victim && text.contains(&format!("seq {n}"))),
        "no earlier seq is blamed: {text}"
    );
}
