//! Expo table numbers: a team sets its table before the deadline, organizers at any time;
//! a table is unique in its event; the gallery shows it, and a judge's queue walks the
//! floor in table order. The exports name people, teams and tracks beside their ids.

use serde_json::{Value, json};

use crate::harness::{App, assert_bad_input, assert_code, error_message, judged_fixture, op};

e2e! {
    teams_set_their_table_before_the_deadline_and_organizers_at_any_time,
    a_judges_queue_walks_the_tables_in_natural_order,
    exports_name_judges_teams_and_tracks_beside_their_ids,
}

const UPDATE: &str = "mutation($id: ID!, $input: ProjectInput!) { updateProject(id: $id, input: $input) { id table } }";
const CREATE: &str = "mutation($event: String!, $input: ProjectInput!) { createProject(event: $event, input: $input) { id table } }";
const TABLE: &str = "query($id: ID!) { project(id: $id) { id table } }";
const GALLERY_TABLES: &str = "query($e: String!) { event(slug: $e) { projects(first: 100) { edges { node { id table } } } } }";

async fn teams_set_their_table_before_the_deadline_and_organizers_at_any_time(app: App) {
    let s = app.scenario().await;
    let team = Some(s.participant_a.as_str());
    let org = Some(s.organizer_a.as_str());

    // The team sets its table with its other fields; it is trimmed.
    let d = app
        .ok(
            team,
            UPDATE,
            json!({ "id": s.submitted, "input": { "table": "  A12 " } }),
        )
        .await;
    assert_eq!(d["updateProject"]["table"], "A12", "{d}");
    // Anyone sees it in the gallery.
    let g = app
        .ok(None, GALLERY_TABLES, json!({ "e": s.event_a }))
        .await;
    let edges = g["event"]["projects"]["edges"].as_array().expect("edges");
    assert!(
        edges
            .iter()
            .any(|e| e["node"]["id"] == s.submitted.as_str() && e["node"]["table"] == "A12"),
        "the gallery shows the table: {g}"
    );

    // Unique in the event regardless of case, and the refusal names the table.
    let taken = app
        .gql_as(
            &s.participant_a,
            UPDATE,
            json!({ "id": s.draft, "input": { "table": "a12" } }),
        )
        .await;
    assert_code(&taken, "CONFLICT");
    assert!(
        error_message(&taken).contains("a12")
            && error_message(&taken).contains("Submitted project"),
        "the conflict names the table and its project: {taken}"
    );
    // Too long, or two lines: BAD_USER_INPUT on `table`, naming the value.
    let long = "T".repeat(17);
    let r = app
        .gql_as(
            &s.participant_a,
            UPDATE,
            json!({ "id": s.draft, "input": { "table": long } }),
        )
        .await;
    assert_bad_input(&r, &["table"]);
    assert!(error_message(&r).contains(&long), "{r}");
    assert_bad_input(
        &app.gql_as(
            &s.participant_a,
            UPDATE,
            json!({ "id": s.draft, "input": { "table": "1\n2" } }),
        )
        .await,
        &["table"],
    );
    // A new project can bring its table; an empty one clears it.
    let d = app
        .ok(
            team,
            CREATE,
            json!({ "event": s.event_a, "input": { "title": "Third", "track": s.track_a, "table": "7" } }),
        )
        .await;
    let third = d["createProject"]["id"].as_str().expect("id").to_owned();
    assert_eq!(d["createProject"]["table"], "7");
    let d = app
        .ok(
            team,
            UPDATE,
            json!({ "id": third, "input": { "table": "" } }),
        )
        .await;
    assert_eq!(d["updateProject"]["table"], Value::Null);

    // Another event's organizer, a judge and the team may not use the organizers' mutation.
    for who in [&s.organizer_b, &s.judge_a, &s.participant_a] {
        let r = app
            .gql_as(
                who,
                op("SetProjectTable"),
                json!({ "project": s.submitted, "table": "5" }),
            )
            .await;
        assert!(
            matches!(
                crate::harness::error_code(&r).as_deref(),
                Some("FORBIDDEN" | "NOT_FOUND")
            ),
            "{r}"
        );
    }

    // After the deadline the team can no longer move; the organizers still can.
    app.close_submissions(&s.organizer_a, &s.event_a).await;
    assert_code(
        &app.gql_as(
            &s.participant_a,
            UPDATE,
            json!({ "id": s.submitted, "input": { "table": "B1" } }),
        )
        .await,
        "WINDOW_CLOSED",
    );
    let before = app.audit_count(&s.organizer_a, &s.event_a).await;
    let d = app
        .ok(
            org,
            op("SetProjectTable"),
            json!({ "project": s.submitted, "table": "B1" }),
        )
        .await;
    assert_eq!(d["setProjectTable"]["table"], "B1");
    assert_eq!(
        app.audit_count(&s.organizer_a, &s.event_a).await,
        before + 1
    );
    // The same table again changes nothing: CONFLICT, nothing audited.
    assert_code(
        &app.gql_as(
            &s.organizer_a,
            op("SetProjectTable"),
            json!({ "project": s.submitted, "table": " B1 " }),
        )
        .await,
        "CONFLICT",
    );
    assert_code(
        &app.gql_as(
            &s.organizer_a,
            op("SetProjectTable"),
            json!({ "project": s.draft, "table": "B1" }),
        )
        .await,
        "CONFLICT",
    );
    assert_eq!(
        app.audit_count(&s.organizer_a, &s.event_a).await,
        before + 1
    );
    // Cleared with null.
    let d = app
        .ok(
            org,
            op("SetProjectTable"),
            json!({ "project": s.submitted, "table": null }),
        )
        .await;
    assert_eq!(d["setProjectTable"]["table"], Value::Null);
    let d = app.ok(team, TABLE, json!({ "id": s.submitted })).await;
    assert_eq!(d["project"]["table"], Value::Null);
}

/// Imports the judged fixture (three judges, four projects) and returns its slug.
async fn judged(app: &App, admin: &str, tag: &str) -> String {
    app.ok(
        Some(admin),
        "mutation($f: JSON!) { importEvent(fixture: $f) { inserted } }",
        json!({ "f": judged_fixture(tag) }),
    )
    .await;
    format!("csv-{tag}")
}

/// Whether `tables` is the natural order [1, 2, 10] started somewhere, then no table.
fn walks_the_floor(tables: &[Value]) -> bool {
    let t: Vec<Option<&str>> = tables.iter().map(Value::as_str).collect();
    let rounds = [
        [Some("1"), Some("2"), Some("10"), None],
        [Some("2"), Some("10"), Some("1"), None],
        [Some("10"), Some("1"), Some("2"), None],
    ];
    rounds.iter().any(|r| t == r)
}

async fn a_judges_queue_walks_the_tables_in_natural_order(app: App) {
    let admin = app.site_admin().await;
    let tag = crate::harness::unique();
    let slug = judged(&app, &admin, &tag).await;
    for (p, table) in [("p1", "10"), ("p2", "2"), ("p3", "1")] {
        app.ok(
            Some(&admin),
            op("SetProjectTable"),
            json!({ "project": format!("{p}_{tag}"), "table": table }),
        )
        .await;
    }
    // Each judge walks 1, 2, 10 round from a table of their own; the project without a
    // table comes last. (By chance alone, a judge's queue would be in such an order one
    // time in eight; all three, one time in 512.)
    for j in 1..=3 {
        let judge = app.mint_token(&format!("csv-{j}-{tag}@example.org")).await;
        let d = app
            .ok(
                Some(&judge),
                "query($e: String!) { event(slug: $e) { myAssignments { project { table } } } }",
                json!({ "e": slug }),
            )
            .await;
        let tables: Vec<Value> = d["event"]["myAssignments"]
            .as_array()
            .expect("assignments")
            .iter()
            .map(|a| a["project"]["table"].clone())
            .collect();
        assert!(walks_the_floor(&tables), "judge {j}'s queue: {tables:?}");
    }
}

async fn exports_name_judges_teams_and_tracks_beside_their_ids(app: App) {
    let admin = app.site_admin().await;
    let tag = crate::harness::unique();
    let slug = judged(&app, &admin, &tag).await;
    app.ok(
        Some(&admin),
        op("SetProjectTable"),
        json!({ "project": format!("p4_{tag}"), "table": "12" }),
    )
    .await;
    let export = async |kind: &str| -> Vec<csv::StringRecord> {
        let d = app
            .ok(
                Some(&admin),
                "mutation($e: String!, $k: ExportKind!) { exportCsv(event: $e, kind: $k) }",
                json!({ "e": slug, "k": kind }),
            )
            .await;
        let text = d["exportCsv"].as_str().expect("csv").to_owned();
        csv::ReaderBuilder::new()
            .has_headers(false)
            .from_reader(text.as_bytes())
            .records()
            .map(|r| r.expect("valid CSV"))
            .collect()
    };
    let col = |rows: &[csv::StringRecord], name: &str| {
        rows[0]
            .iter()
            .position(|h| h == name)
            .unwrap_or_else(|| panic!("no column {name}: {:?}", rows[0]))
    };

    let projects = export("PROJECTS").await;
    // The old columns stay where they were.
    assert_eq!(
        projects[0].iter().take(5).collect::<Vec<_>>(),
        ["project_id", "external_id", "title", "team", "track"]
    );
    let (team, track, table) = (
        col(&projects, "team_name"),
        col(&projects, "track_name"),
        col(&projects, "table"),
    );
    let p4 = projects
        .iter()
        .find(|r| &r[1] == format!("p4_{tag}").as_str())
        .expect("p4's row");
    assert_eq!(&p4[track], "Only track");
    assert_eq!(&p4[table], "12");
    // The team is named "@SUM(A1)": a name, neutralized like every cell.
    assert!(p4[team].contains("SUM(A1)"), "{p4:?}");

    let scores = export("SCORES").await;
    assert_eq!(
        scores[0].iter().take(3).collect::<Vec<_>>(),
        ["review_id", "judge", "project"]
    );
    let (name, email) = (col(&scores, "judge_name"), col(&scores, "judge_email"));
    let mut judges: Vec<(String, String)> = scores[1..]
        .iter()
        .map(|r| (r[name].to_owned(), r[email].to_owned()))
        .collect();
    judges.sort();
    judges.dedup();
    assert_eq!(
        judges,
        (1..=3)
            .map(|j| (format!("J{j}"), format!("csv-{j}-{tag}@example.org")))
            .collect::<Vec<_>>()
    );
    let title = col(&scores, "project_title");
    assert!(scores[1..].iter().any(|r| &r[title] == "Plain title"));
}
