//! Importing the event fixture: idempotent by external id, the gallery shows what was
//! submitted, and a fixture with one bad row is refused whole.

use std::collections::BTreeSet;

use serde_json::{Value, json};

use crate::harness::{
    App, assert_code, data, error_message, fixture_path, load_fixture, op, str_at,
};

const SLUG: &str = "spring-hack-2026";

const GALLERY: &str = "query($s: String!) { event(slug: $s) { name externalId tracks { externalId }
    projects(first: 100) { totalCount edges { node { externalId status title } } }
    teams(first: 100) { totalCount } } }";

fn submitted_ids(fixture: &Value) -> BTreeSet<String> {
    fixture["projects"]
        .as_array()
        .expect("projects")
        .iter()
        .filter(|p| p["status"] == "submitted")
        .map(|p| p["external_id"].as_str().unwrap_or_default().to_string())
        .collect()
}

async fn gallery(app: &App) -> Value {
    app.ok(None, GALLERY, json!({ "s": SLUG })).await
}

/// The fixture without its reviews: small enough (about 54 KB) for a GraphQL request
/// under the 64 KiB body limit. The whole file goes through the CLI.
fn fixture_without_reviews() -> Value {
    let mut f = load_fixture();
    f["reviews"] = json!([]);
    f
}

e2e! {
    import_is_idempotent_and_fills_the_gallery,
    import_over_graphql_reports_inserted_rows,
    a_bad_row_refuses_the_whole_import,
    only_site_admins_import,
}

async fn import_is_idempotent_and_fills_the_gallery(app: App) {
    let fixture = load_fixture();
    let path = fixture_path();
    let path = path.to_str().expect("utf-8 path");
    let admin = app.site_admin().await;

    let out = app.cli(&["import", path]).await;
    assert!(out.success(), "import succeeds: {out:?}");

    let g = gallery(&app).await;
    let event = &g["event"];
    assert_eq!(event["name"], "Spring Hack 2026");
    assert_eq!(event["externalId"], "evt_spring_hack_2026");
    assert_eq!(event["tracks"].as_array().map(Vec::len), Some(6));
    assert_eq!(event["teams"]["totalCount"], 60);
    let want = submitted_ids(&fixture);
    assert_eq!(want.len(), 55);
    assert_eq!(
        event["projects"]["totalCount"], 55,
        "the gallery lists the submitted projects"
    );
    let got: BTreeSet<String> = event["projects"]["edges"]
        .as_array()
        .expect("edges")
        .iter()
        .map(|e| {
            assert_eq!(e["node"]["status"], "SUBMITTED");
            str_at(e, "/node/externalId")
        })
        .collect();
    assert_eq!(got, want);

    // External ids work wherever an ID is taken; drafts stay private.
    let r = app
        .ok(
            None,
            "{ project(id: \"prj_001\") { externalId title status } }",
            json!({}),
        )
        .await;
    assert_eq!(
        r["project"]["title"],
        "OpenMeadow: a sensor kit for beekeepers"
    );
    let r = app
        .ok(None, "{ project(id: \"prj_012\") { id } }", json!({}))
        .await;
    assert!(
        r["project"].is_null(),
        "an imported draft is not public: {r}"
    );
    let r = app
        .ok(
            Some(&admin),
            "{ project(id: \"prj_020\") { status } }",
            json!({}),
        )
        .await;
    assert_eq!(r["project"]["status"], "WITHDRAWN");
    let r = app
        .ok(
            Some(&admin),
            op("EventMembers"),
            json!({ "event": SLUG, "role": "JUDGE", "first": 100 }),
        )
        .await;
    assert_eq!(
        r["event"]["members"]["totalCount"], 24,
        "every judge imported"
    );

    // Someone changes the event; a second import (CLI, then GraphQL) inserts nothing
    // and overwrites nothing.
    let r = app
        .gql_as(
            &admin,
            op("UpdateEvent"),
            json!({ "event": SLUG, "input": { "name": "Spring Hack 2026 (renamed)" } }),
        )
        .await;
    data(&r);
    let out = app.cli(&["import", path]).await;
    assert!(out.success(), "a second import succeeds: {out:?}");
    assert!(
        out.stdout.contains(" 0 rows inserted"),
        "the second import inserts nothing: {}",
        out.stdout
    );
    let r = app
        .gql_as(
            &admin,
            op("ImportEvent"),
            json!({ "fixture": fixture_without_reviews() }),
        )
        .await;
    assert_eq!(data(&r)["importEvent"]["inserted"], 0, "nothing new: {r}");
    assert_eq!(data(&r)["importEvent"]["event"]["slug"], SLUG);
    let g2 = gallery(&app).await;
    assert_eq!(
        g2["event"]["name"], "Spring Hack 2026 (renamed)",
        "the change survives"
    );
    assert_eq!(g2["event"]["projects"], g["event"]["projects"]);
    assert_eq!(g2["event"]["teams"], g["event"]["teams"]);
    app.audit_head().await;
}

async fn import_over_graphql_reports_inserted_rows(app: App) {
    let admin = app.site_admin().await;
    let fixture = fixture_without_reviews();
    let r = app
        .gql_as(&admin, op("ImportEvent"), json!({ "fixture": fixture }))
        .await;
    let inserted = data(&r)["importEvent"]["inserted"]
        .as_i64()
        .expect("inserted");
    assert!(inserted >= 60 + 55, "every row counted (got {inserted})");
    let r = app
        .gql_as(&admin, op("ImportEvent"), json!({ "fixture": fixture }))
        .await;
    assert_eq!(data(&r)["importEvent"]["inserted"], 0);
    assert_eq!(gallery(&app).await["event"]["projects"]["totalCount"], 55);
}

async fn a_bad_row_refuses_the_whole_import(app: App) {
    let admin = app.site_admin().await;
    let head_before = app.cli(&["audit", "verify"]).await;

    // One project names an unknown track.
    let mut bad = fixture_without_reviews();
    assert_eq!(bad["projects"][6]["external_id"], "prj_007");
    bad["projects"][6]["track"] = json!("trk_99");
    let file = app.db.dir().join("bad-track.json");
    std::fs::write(&file, bad.to_string()).expect("write fixture");
    let out = app.cli(&["import", file.to_str().expect("utf-8")]).await;
    assert!(!out.success(), "the import fails: {out:?}");
    let text = format!("{}{}", out.stdout, out.stderr);
    assert!(text.contains("prj_007"), "the error names the row: {text}");

    let r = app
        .gql_as(&admin, op("ImportEvent"), json!({ "fixture": bad }))
        .await;
    assert_code(&r, "BAD_USER_INPUT");
    assert!(
        error_message(&r).contains("prj_007"),
        "the error names the row: {r}"
    );

    // One person has a bad email.
    let mut bad = fixture_without_reviews();
    bad["people"][4]["email"] = json!("not-an-email");
    let who = bad["people"][4]["external_id"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    let r = app
        .gql_as(&admin, op("ImportEvent"), json!({ "fixture": bad }))
        .await;
    assert_code(&r, "BAD_USER_INPUT");
    assert!(
        error_message(&r).contains(&who),
        "the error names {who}: {r}"
    );

    // A duplicate external id.
    let mut bad = fixture_without_reviews();
    let dup = bad["teams"][0].clone();
    bad["teams"].as_array_mut().expect("teams").push(dup);
    let r = app
        .gql_as(&admin, op("ImportEvent"), json!({ "fixture": bad }))
        .await;
    assert_code(&r, "BAD_USER_INPUT");
    assert!(
        error_message(&r).contains("tm_001"),
        "the error names tm_001: {r}"
    );

    // Nothing was written: no event, no project, the same audit chain.
    let r = app
        .ok(
            None,
            "query($s: String!) { event(slug: $s) { id } }",
            json!({ "s": SLUG }),
        )
        .await;
    assert!(r["event"].is_null(), "no event was created: {r}");
    let r = app
        .ok(None, "{ project(id: \"prj_001\") { id } }", json!({}))
        .await;
    assert!(r["project"].is_null());
    let head_after = app.cli(&["audit", "verify"]).await;
    assert_eq!(head_after.code, head_before.code);
    assert_eq!(
        head_after.stdout, head_before.stdout,
        "the audit chain did not move"
    );
    // And the good file still imports afterwards.
    let r = app
        .gql_as(
            &admin,
            op("ImportEvent"),
            json!({ "fixture": fixture_without_reviews() }),
        )
        .await;
    data(&r);
}

async fn only_site_admins_import(app: App) {
    let user = app.sign_up("plain@example.org").await;
    let r = app
        .gql_as(
            &user,
            op("ImportEvent"),
            json!({ "fixture": fixture_without_reviews() }),
        )
        .await;
    assert_code(&r, "FORBIDDEN");
    let r = app
        .gql(
            op("ImportEvent"),
            json!({ "fixture": fixture_without_reviews() }),
        )
        .await;
    assert_code(&r, "UNAUTHENTICATED");
    let r = app
        .ok(
            None,
            "query($s: String!) { event(slug: $s) { id } }",
            json!({ "s": SLUG }),
        )
        .await;
    assert!(r["event"].is_null());
}
