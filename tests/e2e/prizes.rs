//! Prizes and the podium: organizers create an event's prizes (overall, per track, special
//! awards); the public podium follows the frozen published ranking only, labelled derived
//! or assigned, and a prize never changes a run.

use serde_json::{Value, json};

use crate::harness::{App, assert_bad_input, assert_code, judged_fixture, op, str_at, unique};

e2e! {
    the_podium_follows_the_published_ranking_and_prizes_never_change_a_run,
    the_top_up_plan_points_at_each_cut_off_for_organizers_only,
}

const IMPORT: &str = "mutation($f: JSON!) { importEvent(fixture: $f) { inserted } }";
const CREATE: &str = "mutation($e: String!, $i: PrizeInput!) { createPrize(event: $e, input: $i) { id name position track { name } } }";
const ASSIGN: &str =
    "mutation($id: ID!, $p: ID) { assignPrize(id: $id, project: $p) { id winner { externalId } } }";
const PODIUM: &str = "query($e: String!) { event(slug: $e) { \
    prizes { name } \
    podium { prize { name position } source projectExternalId project { externalId } entry { rank } probability } } }";

fn podium_of(v: &Value) -> Vec<(String, String, String)> {
    v["event"]["podium"]
        .as_array()
        .unwrap_or_else(|| panic!("a podium: {v}"))
        .iter()
        .map(|p| {
            (
                p["prize"]["name"].as_str().unwrap_or_default().to_owned(),
                p["source"].as_str().unwrap_or_default().to_owned(),
                p["projectExternalId"]
                    .as_str()
                    .unwrap_or_default()
                    .to_owned(),
            )
        })
        .collect()
}

async fn the_podium_follows_the_published_ranking_and_prizes_never_change_a_run(app: App) {
    let admin = app.site_admin().await;
    let tag = unique();
    // The judged fixture with a second track holding p4.
    let mut fixture = judged_fixture(&tag);
    fixture["tracks"]
        .as_array_mut()
        .expect("tracks")
        .push(json!({ "external_id": format!("trk2_{tag}"), "name": "Second track" }));
    fixture["projects"][3]["track"] = json!(format!("trk2_{tag}"));
    app.ok(Some(&admin), IMPORT, json!({ "f": fixture })).await;
    let slug = format!("csv-{tag}");
    let prize = |name: &str, position: i64, track: Option<String>| {
        json!({ "e": slug, "i": { "name": name, "position": position, "track": track,
                                  "description": "For the best." } })
    };

    // Who may create a prize.
    let judge = app.mint_token(&format!("csv-1-{tag}@example.org")).await;
    let r = app
        .gql_opt(Some(&judge), CREATE, prize("Judge's pick", 1, None))
        .await;
    assert_code(&r, "FORBIDDEN");
    let r = app
        .gql_opt(None, CREATE, prize("Anyone's pick", 1, None))
        .await;
    assert_code(&r, "UNAUTHENTICATED");
    // Bad input names the field and writes nothing.
    for (bad, field) in [
        (prize("Negative", -1, None), "position"),
        (prize("Too far", 101, None), "position"),
        (prize("  ", 1, None), "name"),
        (prize("Nowhere", 1, Some("no-such-track".into())), "track"),
    ] {
        let r = app.gql_opt(Some(&admin), CREATE, bad).await;
        assert_bad_input(&r, &[field]);
    }

    let grand = app
        .ok(Some(&admin), CREATE, prize("Grand prize", 1, None))
        .await;
    app.ok(Some(&admin), CREATE, prize("Runner-up", 2, None))
        .await;
    app.ok(
        Some(&admin),
        CREATE,
        prize("Best of the second track", 1, Some(format!("trk2_{tag}"))),
    )
    .await;
    let favourite = app
        .ok(Some(&admin), CREATE, prize("Jury's favourite", 0, None))
        .await;
    let favourite = str_at(&favourite, "/createPrize/id");
    assert_eq!(grand["createPrize"]["position"], 1);

    // Before publication: the prizes are listed, the podium is empty.
    let before = app.ok(None, PODIUM, json!({ "e": slug })).await;
    assert_eq!(
        before["event"]["prizes"].as_array().map(Vec::len),
        Some(4),
        "only the four valid prizes were written: {before}"
    );
    assert_eq!(before["event"]["podium"], json!([]), "{before}");

    let run = app
        .ok(
            Some(&admin),
            op("RunCalibration"),
            json!({ "event": slug, "seed": 3, "bootstrap": 50 }),
        )
        .await;
    let run_id = str_at(&run, "/runCalibration/id");
    app.ok(
        Some(&admin),
        op("PublishResults"),
        json!({ "event": slug, "run": run_id, "final": false }),
    )
    .await;
    let results = "query($e: String!) { event(slug: $e) { results { resultHash ranking { projectExternalId rank } } } }";
    let published = app.ok(None, results, json!({ "e": slug })).await;
    let ranking: Vec<(String, i64)> = published["event"]["results"]["ranking"]
        .as_array()
        .expect("ranking")
        .iter()
        .filter(|p| p["rank"].is_number())
        .map(|p| {
            (
                p["projectExternalId"].as_str().expect("id").to_owned(),
                p["rank"].as_i64().expect("rank"),
            )
        })
        .collect();
    let hash = published["event"]["results"]["resultHash"].clone();

    // The podium, to anyone: derived from the published ranking (within the track for the
    // track prize); the special award has no winner yet.
    let podium = app.ok(None, PODIUM, json!({ "e": slug })).await;
    let entries = podium_of(&podium);
    assert_eq!(
        entries,
        vec![
            ("Grand prize".into(), "DERIVED".into(), ranking[0].0.clone()),
            ("Runner-up".into(), "DERIVED".into(), ranking[1].0.clone()),
            (
                "Best of the second track".into(),
                "DERIVED".into(),
                format!("p4_{tag}")
            ),
        ],
        "{podium}"
    );
    let first = &podium["event"]["podium"][0];
    assert_eq!(first["entry"]["rank"], ranking[0].1);
    assert!(
        first["probability"]
            .as_f64()
            .is_some_and(|p| (0.0..=1.0).contains(&p)),
        "an overall prize states how sure its place is: {first}"
    );
    assert_eq!(
        podium["event"]["podium"][2]["probability"],
        Value::Null,
        "a track prize does not (the certainty is of the overall ranking)"
    );

    // Assigning: a submitted project of the event, of the prize's track for a track prize.
    let r = app
        .gql_opt(
            Some(&admin),
            ASSIGN,
            json!({ "id": favourite, "p": "no-such-project" }),
        )
        .await;
    assert_bad_input(&r, &["project"]);
    let r = app
        .gql_opt(
            Some(&judge),
            ASSIGN,
            json!({ "id": favourite, "p": format!("p2_{tag}") }),
        )
        .await;
    assert_code(&r, "FORBIDDEN");
    let track_prize = app
        .ok(
            None,
            "query($e: String!) { event(slug: $e) { prizes { id name } } }",
            json!({ "e": slug }),
        )
        .await;
    let track_prize_id = track_prize["event"]["prizes"]
        .as_array()
        .expect("prizes")
        .iter()
        .find(|p| p["name"] == "Best of the second track")
        .map(|p| p["id"].as_str().expect("id").to_owned())
        .expect("the track prize");
    let r = app
        .gql_opt(
            Some(&admin),
            ASSIGN,
            json!({ "id": track_prize_id, "p": format!("p1_{tag}") }),
        )
        .await;
    assert_bad_input(&r, &["project"]);
    let assigned = app
        .ok(
            Some(&admin),
            ASSIGN,
            json!({ "id": favourite, "p": format!("p2_{tag}") }),
        )
        .await;
    assert_eq!(
        assigned["assignPrize"]["winner"]["externalId"],
        format!("p2_{tag}")
    );
    let podium = app.ok(None, PODIUM, json!({ "e": slug })).await;
    assert!(
        podium_of(&podium).contains(&(
            "Jury's favourite".into(),
            "ASSIGNED".into(),
            format!("p2_{tag}")
        )),
        "{podium}"
    );

    // A prize never changes the run.
    let after = app.ok(None, results, json!({ "e": slug })).await;
    assert_eq!(after["event"]["results"]["resultHash"], hash);
    // Clearing the assignment takes the special award off the podium again.
    app.ok(Some(&admin), ASSIGN, json!({ "id": favourite, "p": null }))
        .await;
    let podium = app.ok(None, PODIUM, json!({ "e": slug })).await;
    assert_eq!(podium_of(&podium).len(), 3, "{podium}");
}

const TOP_UP: &str = "query($e: String!) { event(slug: $e) { topUpPlan { prize { name } \
    straddlesCutOff thinCoverage entry { projectExternalId rank rankLow rankHigh reviews } } } }";

async fn the_top_up_plan_points_at_each_cut_off_for_organizers_only(app: App) {
    let admin = app.site_admin().await;
    let tag = unique();
    // The judged fixture (true order p4, p3, p2, p1), with p2 reviewed by one judge only.
    let mut fixture = judged_fixture(&tag);
    let p2 = format!("p2_{tag}");
    fixture["reviews"]
        .as_array_mut()
        .expect("reviews")
        .retain(|r| r["project"] != p2.as_str() || r["judge"] == format!("j1_{tag}").as_str());
    app.ok(Some(&admin), IMPORT, json!({ "f": fixture })).await;
    let slug = format!("csv-{tag}");
    for (name, position) in [("Grand prize", 1), ("Runner-up", 2)] {
        app.ok(
            Some(&admin),
            CREATE,
            json!({ "e": slug, "i": { "name": name, "position": position } }),
        )
        .await;
    }
    let plan = app.ok(Some(&admin), TOP_UP, json!({ "e": slug })).await;
    assert_eq!(plan["event"]["topUpPlan"], json!([]), "no run yet: {plan}");

    // Only organizers read it: it is about a ranking nobody else may see yet.
    let judge = app.mint_token(&format!("csv-1-{tag}@example.org")).await;
    assert_code(
        &app.gql_opt(Some(&judge), TOP_UP, json!({ "e": slug }))
            .await,
        "FORBIDDEN",
    );
    assert_code(
        &app.gql_opt(None, TOP_UP, json!({ "e": slug })).await,
        "UNAUTHENTICATED",
    );

    app.ok(
        Some(&admin),
        op("RunCalibration"),
        json!({ "event": slug, "seed": 3, "bootstrap": 50 }),
    )
    .await;
    let plan = app.ok(Some(&admin), TOP_UP, json!({ "e": slug })).await;
    let rows = plan["event"]["topUpPlan"]
        .as_array()
        .expect("a plan")
        .clone();
    // Every suggestion says why, and the reason holds for its entry in the run.
    assert!(!rows.is_empty(), "{plan}");
    for row in &rows {
        let e = &row["entry"];
        let straddles = row["straddlesCutOff"].as_bool().expect("straddles");
        let thin = row["thinCoverage"].as_bool().expect("thin");
        assert!(straddles || thin, "a suggestion without a reason: {row}");
        if thin {
            assert!(e["reviews"].as_i64().expect("reviews") < 3, "{row}");
        }
        if straddles {
            assert!(
                e["rankLow"].as_i64() < e["rankHigh"].as_i64(),
                "a one-place interval cannot straddle: {row}"
            );
        }
    }
    // p2 (third by its one review, next to the runner-up's cut-off) is named as thin.
    assert!(
        rows.iter().any(|r| r["prize"]["name"] == "Runner-up"
            && r["entry"]["projectExternalId"] == p2.as_str()
            && r["thinCoverage"] == true),
        "{plan}"
    );
}
