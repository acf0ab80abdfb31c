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

mod chain;
use chain::*;
mod steps_accounts;
use steps_accounts::*;
mod steps_judging;
use steps_judging::*;
mod steps_pairwise;
use steps_pairwise::*;

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
    const SDL: &str = include_str!("../../../schema.graphql");
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
    pairwise_steps(&mut steps, admin, &t).await;
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
