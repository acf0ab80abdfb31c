//! Importing a Devpost submissions export: a preview that writes nothing, an import that
//! brings projects, teams, members and tables in one audited transaction, a second import
//! that inserts nothing, and bad rows named by their line; over GraphQL and from the
//! command line.

use serde_json::{Value, json};

use crate::harness::{App, assert_bad_input, assert_code, unique};

e2e! {
    an_organizer_previews_then_imports_a_devpost_export,
    the_command_line_imports_a_devpost_export_once,
}

/// The export the browser story imports too, with addresses unique to this test.
fn export(tag: &str) -> String {
    include_str!("../../web/app/e2e/devpost-export.csv")
        .replace("@devpost.example", &format!("@{tag}.devpost.example"))
}

const IMPORT: &str = "mutation($e: String!, $csv: String!, $dry: Boolean) {
    importDevpost(event: $e, csv: $csv, dryRun: $dry) {
        dryRun projects teams people
        rows { line title table members new }
        problems { line message } } }";

const PROJECTS: &str = "query($e: String!) { event(slug: $e) {
    projects(first: 100) { totalCount edges { node { externalId title table tagline repoUrl tags
        team { name } } } } } }";

async fn an_organizer_previews_then_imports_a_devpost_export(app: App) {
    let s = app.scenario().await;
    let tag = unique();
    let csv = export(&tag);
    let org = Some(s.organizer_a.as_str());
    let head = app.audit_head().await;

    // The preview names what would come in and the bad row by its line, and writes nothing.
    let d = app
        .ok(
            org,
            IMPORT,
            json!({ "e": s.event_a, "csv": csv, "dry": true }),
        )
        .await;
    let preview = &d["importDevpost"];
    assert_eq!(preview["dryRun"], true);
    assert_eq!(preview["projects"], 3, "{preview}");
    assert_eq!(preview["teams"], 3);
    assert_eq!(preview["people"], 4);
    let problems = preview["problems"].as_array().expect("problems");
    assert_eq!(problems.len(), 1, "{preview}");
    // "About The Project" of the first row spans three lines: the bad row is on line 7.
    assert_eq!(problems[0]["line"], 7);
    let message = problems[0]["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("eve.devpost.example") && message.contains("Submitter Email"),
        "the problem names the column and the address: {message}"
    );
    assert_eq!(app.audit_head().await, head, "a preview writes nothing");
    let before = app.ok(org, PROJECTS, json!({ "e": s.event_a })).await;

    // The import: one audit entry; the projects with their tables, tags and teams.
    let d = app
        .ok(org, IMPORT, json!({ "e": s.event_a, "csv": csv }))
        .await;
    assert_eq!(d["importDevpost"]["projects"], 3, "{d}");
    assert_eq!(app.audit_head().await, head + 1);
    let after = app.ok(org, PROJECTS, json!({ "e": s.event_a })).await;
    // The gallery lists the submitted ones (the draft stays with its team).
    assert_eq!(
        after["event"]["projects"]["totalCount"]
            .as_i64()
            .unwrap_or(0)
            - before["event"]["projects"]["totalCount"]
                .as_i64()
                .unwrap_or(0),
        2,
        "{after}"
    );
    let edges = after["event"]["projects"]["edges"]
        .as_array()
        .expect("edges");
    let tide = edges
        .iter()
        .map(|e| &e["node"])
        .find(|n| n["externalId"] == "devpost-tide-tracker")
        .unwrap_or_else(|| panic!("Tide Tracker imported: {after}"));
    assert_eq!(tide["table"], "12");
    assert_eq!(tide["repoUrl"], "https://github.com/example/tide-tracker");
    assert_eq!(tide["tags"], json!(["rust", "lora", "grafana"]));
    assert_eq!(tide["team"]["name"], "Tide Tracker");
    let quiet = edges
        .iter()
        .map(|e| &e["node"])
        .find(|n| n["externalId"] == "devpost-quiet-rooms")
        .expect("Quiet Rooms imported");
    assert_eq!(quiet["title"], "Quiet Rooms, Loud Ideas");
    assert_eq!(quiet["table"], "2");

    // Team members are participants without a password: inviteImported invites them.
    let d = app
        .ok(
            org,
            "mutation($e: String!) { inviteImported(event: $e) }",
            json!({ "e": s.event_a }),
        )
        .await;
    assert!(
        d["inviteImported"].as_i64().unwrap_or(0) >= 4,
        "the four new people are invited: {d}"
    );

    // Again: nothing new, every good row reported as imported before, one audit entry.
    let head = app.audit_head().await;
    let d = app
        .ok(org, IMPORT, json!({ "e": s.event_a, "csv": csv }))
        .await;
    let again = &d["importDevpost"];
    assert_eq!(again["projects"], 0, "{again}");
    assert_eq!(again["people"], 0);
    let rows: Vec<&Value> = again["rows"].as_array().expect("rows").iter().collect();
    assert_eq!(rows.len(), 3);
    assert!(rows.iter().all(|r| r["new"] == false), "{again}");
    assert_eq!(app.audit_head().await, head + 1);

    // Refusals: not a Devpost file (naming `csv`), another event's organizer, a participant.
    let r = app
        .gql_as(
            &s.organizer_a,
            IMPORT,
            json!({ "e": s.event_a, "csv": "name,email\na,b\n" }),
        )
        .await;
    assert_bad_input(&r, &["csv"]);
    assert!(
        crate::harness::error_message(&r).contains("Project Title"),
        "{r}"
    );
    for who in [&s.organizer_b, &s.participant_a, &s.judge_a] {
        assert_code(
            &app.gql_as(
                who,
                IMPORT,
                json!({ "e": s.event_a, "csv": csv, "dry": true }),
            )
            .await,
            "FORBIDDEN",
        );
    }
    assert_eq!(app.audit_head().await, head + 1, "refusals write nothing");
}

async fn the_command_line_imports_a_devpost_export_once(app: App) {
    let s = app.scenario().await;
    let tag = unique();
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("devpost.csv");
    std::fs::write(&path, export(&tag)).expect("write the export");
    let path = path.to_str().expect("utf-8 path");

    let out = app
        .cli(&[
            "import",
            "--devpost",
            path,
            "--event",
            &s.event_a,
            "--dry-run",
        ])
        .await;
    assert!(out.success(), "{out:?}");
    assert!(out.stdout.contains("would import 3 projects"), "{out:?}");
    assert!(out.stdout.contains("line 7: "), "{out:?}");
    let count = async || {
        app.ok(None, PROJECTS, json!({ "e": s.event_a })).await["event"]["projects"]["totalCount"]
            .as_i64()
            .unwrap_or(0)
    };
    let before = count().await;

    let out = app
        .cli(&["import", "--devpost", path, "--event", &s.event_a])
        .await;
    assert!(out.success(), "{out:?}");
    assert!(out.stdout.contains("imported 3 projects"), "{out:?}");
    assert_eq!(count().await, before + 2, "two submitted, one draft");

    let out = app
        .cli(&["import", "--devpost", path, "--event", &s.event_a])
        .await;
    assert!(out.success(), "{out:?}");
    assert!(out.stdout.contains("imported 0 projects"), "{out:?}");
    assert_eq!(count().await, before + 2);

    // An unknown event is refused, naming nothing it should not.
    let out = app
        .cli(&["import", "--devpost", path, "--event", "no-such-event"])
        .await;
    assert!(!out.success(), "{out:?}");
}
