//! CSV exports: numbers stay numbers, and no cell a spreadsheet would run as a formula
//! gets through, however it is disguised.

use serde_json::json;

use crate::harness::{App, judged_fixture};

e2e! {
    csv_keeps_numbers_and_neutralizes_disguised_formulas,
    every_export_names_people_teams_and_tracks_beside_their_ids,
}

/// Splits CSV text into cells (the exports quote cells with commas, quotes or newlines).
fn cells(csv: &str) -> Vec<Vec<String>> {
    let mut rdr = csv::ReaderBuilder::new()
        .has_headers(false)
        .from_reader(csv.as_bytes());
    rdr.records()
        .map(|r| r.expect("valid CSV").iter().map(str::to_owned).collect())
        .collect()
}

async fn csv_keeps_numbers_and_neutralizes_disguised_formulas(app: App) {
    let admin = app.site_admin().await;
    let tag = crate::harness::unique();
    let slug = format!("csv-{tag}");
    let imported = app
        .ok(
            Some(&admin),
            "mutation($f: JSON!) { importEvent(fixture: $f) { inserted } }",
            json!({ "f": judged_fixture(&tag) }),
        )
        .await;
    assert!(imported["importEvent"]["inserted"].as_i64().unwrap_or(0) > 0);
    app.ok(
        Some(&admin),
        "mutation($e: String!) { runCalibration(event: $e, seed: 7, bootstrap: 50) { id } }",
        json!({ "e": slug }),
    )
    .await;
    let export = |kind: &'static str| {
        let app = &app;
        let admin = &admin;
        let slug = &slug;
        async move {
            let d = app
                .ok(
                    Some(admin),
                    "mutation($e: String!, $k: ExportKind!) { exportCsv(event: $e, kind: $k) }",
                    json!({ "e": slug, "k": kind }),
                )
                .await;
            cells(d["exportCsv"].as_str().expect("csv text"))
        }
    };

    // Numbers stay numbers: the lenient judge's negative offset is `-1...`, not `'-1...`.
    let judges = export("JUDGES").await;
    let offset = judges[0]
        .iter()
        .position(|h| h == "offset")
        .expect("offset column");
    let offsets: Vec<&str> = judges[1..].iter().map(|r| r[offset].as_str()).collect();
    assert!(
        offsets.iter().any(|o| o.starts_with('-')),
        "a judge is more severe than the others: {offsets:?}"
    );
    for o in &offsets {
        assert!(o.parse::<f64>().is_ok(), "offset {o:?} is a number");
    }
    let results = export("RESULTS").await;
    let quality = results[0]
        .iter()
        .position(|h| h == "quality")
        .expect("quality column");
    let qualities: Vec<&str> = results[1..].iter().map(|r| r[quality].as_str()).collect();
    for q in &qualities {
        assert!(q.parse::<f64>().is_ok(), "quality {q:?} is a number");
    }

    // Text that a spreadsheet would run is neutralized, however it is disguised.
    let projects = export("PROJECTS").await;
    let title = projects[0]
        .iter()
        .position(|h| h == "title")
        .expect("title column");
    let tagline = projects[0]
        .iter()
        .position(|h| h == "tagline")
        .expect("tagline column");
    for row in &projects[1..] {
        if row[title] != "Plain title" {
            assert!(
                row[title].starts_with('\''),
                "title {:?} is neutralized",
                row[title]
            );
        } else {
            assert_eq!(row[title], "Plain title");
        }
        assert!(row[tagline].starts_with('\''), "tagline {:?}", row[tagline]);
    }
    let scores = export("SCORES").await;
    let comment = scores[0]
        .iter()
        .position(|h| h == "comment")
        .expect("comment column");
    for row in &scores[1..] {
        assert!(row[comment].starts_with('\''), "comment {:?}", row[comment]);
    }
    let teams = export("TEAMS").await;
    let name = teams[0]
        .iter()
        .position(|h| h == "name")
        .expect("name column");
    for row in &teams[1..] {
        assert_eq!(row[name], "'@SUM(A1)");
    }
}

/// Issue 28: a spreadsheet user reads names, not internal ids. Each export keeps its old
/// columns where they were and names, after them, the judge (name and email), the project,
/// its team and track, the actor of an audit entry.
async fn every_export_names_people_teams_and_tracks_beside_their_ids(app: App) {
    let admin = app.site_admin().await;
    let tag = crate::harness::unique();
    let slug = format!("csv-{tag}");
    app.ok(
        Some(&admin),
        "mutation($f: JSON!) { importEvent(fixture: $f) { inserted } }",
        json!({ "f": judged_fixture(&tag) }),
    )
    .await;
    app.ok(
        Some(&admin),
        "mutation($e: String!) { runCalibration(event: $e, seed: 7, bootstrap: 50) { id } }",
        json!({ "e": slug }),
    )
    .await;
    let export = async |kind: &str| -> Vec<Vec<String>> {
        let d = app
            .ok(
                Some(&admin),
                "mutation($e: String!, $k: ExportKind!) { exportCsv(event: $e, kind: $k) }",
                json!({ "e": slug, "k": kind }),
            )
            .await;
        cells(d["exportCsv"].as_str().expect("csv"))
    };
    let col = |rows: &[Vec<String>], name: &str| {
        rows[0]
            .iter()
            .position(|h| h == name)
            .unwrap_or_else(|| panic!("no column {name}: {:?}", rows[0]))
    };
    let judge_names = ["J1", "J2", "J3"];
    let judge_email = |name: &str| format!("csv-{}-{tag}@example.org", &name[1..]);

    // REGISTRATIONS: name and email were there; a judge's tracks by name too.
    let reg = export("REGISTRATIONS").await;
    let (name, email, tracks) = (
        col(&reg, "display_name"),
        col(&reg, "email"),
        col(&reg, "judge_track_names"),
    );
    assert_eq!(reg[0][0], "membership_id", "old columns first");
    for j in judge_names {
        let row = reg[1..]
            .iter()
            .find(|r| r[name] == j)
            .expect("the judge's row");
        assert_eq!(row[email], judge_email(j));
        assert_eq!(row[tracks], "", "a judge of every track");
    }

    // TEAMS: the team's name and its members' names and emails.
    let teams = export("TEAMS").await;
    let (tname, members, emails) = (
        col(&teams, "name"),
        col(&teams, "members"),
        col(&teams, "member_emails"),
    );
    assert!(teams[1..].iter().all(|r| r[tname].contains("SUM(A1)")));
    assert!(
        teams[1..]
            .iter()
            .any(|r| r[members] == "Builder" && r[emails] == format!("csv-4-{tag}@example.org"))
    );

    // ASSIGNMENTS: the judge's name and email, the project's title.
    let asg = export("ASSIGNMENTS").await;
    assert_eq!(asg[0][..3], ["assignment_id", "judge", "project"]);
    let (jn, je, pt) = (
        col(&asg, "judge_name"),
        col(&asg, "judge_email"),
        col(&asg, "project_title"),
    );
    assert_eq!(asg.len(), 1 + 12);
    for r in &asg[1..] {
        assert!(judge_names.contains(&r[jn].as_str()), "{r:?}");
        assert_eq!(r[je], judge_email(&r[jn]));
        assert!(!r[pt].is_empty(), "{r:?}");
    }
    assert!(asg[1..].iter().any(|r| r[pt] == "Plain title"));

    // RESULTS: the project's title, team and track.
    let res = export("RESULTS").await;
    let (title, team, track) = (
        col(&res, "title"),
        col(&res, "team_name"),
        col(&res, "track_name"),
    );
    assert_eq!(res.len(), 1 + 4);
    for r in &res[1..] {
        assert!(!r[title].is_empty(), "{r:?}");
        assert!(r[team].contains("SUM(A1)"), "{r:?}");
        assert_eq!(r[track], "Only track");
    }

    // JUDGES: each judge's name and email beside the calibration's key.
    let judges = export("JUDGES").await;
    let (jn, je) = (col(&judges, "judge_name"), col(&judges, "judge_email"));
    assert_eq!(judges[0][0], "judge");
    let mut named: Vec<&str> = judges[1..].iter().map(|r| r[jn].as_str()).collect();
    named.sort();
    assert_eq!(named, judge_names);
    for r in &judges[1..] {
        assert_eq!(r[je], judge_email(&r[jn]));
    }

    // AUDIT: who acted, by name.
    let audit = export("AUDIT").await;
    let (actor, actor_name) = (col(&audit, "actor"), col(&audit, "actor_name"));
    assert!(
        audit[1..]
            .iter()
            .any(|r| !r[actor].is_empty() && !r[actor_name].is_empty()),
        "an entry with an actor names them: {:?}",
        &audit[..audit.len().min(4)]
    );
}
