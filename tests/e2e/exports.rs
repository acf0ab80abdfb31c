//! CSV exports: numbers stay numbers, and no cell a spreadsheet would run as a formula
//! gets through, however it is disguised.

use serde_json::json;

use crate::harness::{App, judged_fixture};

e2e! {
    csv_keeps_numbers_and_neutralizes_disguised_formulas,
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
