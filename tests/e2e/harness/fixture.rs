//! The event fixtures tests import: the generated `spring-hack-2026` event (60 teams, 24
//! judges, reviews; `tests/support/spring_hack.rs`), and a tiny one with unique ids. Both
//! are made here, so the tests use only what the repository contains.

use std::path::PathBuf;
use std::sync::OnceLock;

use serde_json::{Value, json};

#[path = "../../support/spring_hack.rs"]
mod spring_hack;

/// The generated event fixture.
pub fn load_fixture() -> Value {
    spring_hack::fixture()
}

/// The generated event fixture as a file, for `verdict import FILE` (written once per test
/// process into the system's temporary directory).
pub fn fixture_path() -> PathBuf {
    static PATH: OnceLock<PathBuf> = OnceLock::new();
    PATH.get_or_init(|| {
        let path = std::env::temp_dir().join(format!(
            "verdict-spring-hack-2026-{}.json",
            std::process::id()
        ));
        let text = serde_json::to_string_pretty(&load_fixture()).expect("fixture JSON");
        std::fs::write(&path, text)
            .unwrap_or_else(|e| panic!("cannot write {}: {e}", path.display()));
        path
    })
    .clone()
}

/// A minimal valid `verdict.event.v1` fixture: one track, one organizer, one team with a
/// submitted project. `tag` makes every external id, slug and email unique.
pub fn tiny_fixture(tag: &str) -> Value {
    json!({
        "format": "verdict.event.v1",
        "event": {
            "external_id": format!("evt_{tag}"),
            "slug": format!("tiny-{tag}"),
            "name": format!("Tiny {tag}"),
            "submissions_open": "2026-01-10T09:00:00Z",
            "submissions_close": "2026-01-11T09:00:00Z",
            "judging_open": "2026-01-12T09:00:00Z",
            "judging_close": "2026-01-13T09:00:00Z",
            "voting_open": null,
            "voting_close": null,
            "reviews_per_project": 1,
            "max_team_size": 3
        },
        "tracks": [ { "external_id": format!("trk_{tag}"), "name": "Only track" } ],
        "people": [
            { "external_id": format!("usr_o_{tag}"), "email": format!("tiny-org-{tag}@example.org"), "display_name": "Tiny Organizer" },
            { "external_id": format!("usr_p_{tag}"), "email": format!("tiny-part-{tag}@example.org"), "display_name": "Tiny Participant" }
        ],
        "organizers": [ format!("usr_o_{tag}") ],
        "judges": [],
        "teams": [ { "external_id": format!("tm_{tag}"), "name": "Tiny team", "members": [ format!("usr_p_{tag}") ] } ],
        "projects": [ {
            "external_id": format!("prj_{tag}"),
            "team": format!("tm_{tag}"),
            "track": format!("trk_{tag}"),
            "title": "Tiny project",
            "tagline": "Small",
            "summary": "A tiny imported project.",
            "repo_url": "https://git.example.org/tiny",
            "demo_url": "",
            "tags": ["tiny"],
            "status": "submitted",
            "submitted_at": "2026-01-11T08:00:00Z"
        } ],
        "criteria": [ { "key": "impact", "name": "Impact", "weight": 1.0, "min": 1, "max": 5, "position": 1 } ],
        "reviews": []
    })
}

/// A small judged event: three judges of different severity score four projects whose
/// titles and team names try to smuggle formulas past the neutralization.
pub fn judged_fixture(tag: &str) -> Value {
    let projects = [
        ("p1", "\u{FF1D}1+1"),
        ("p2", "|=cmd|' /C calc'!A0"),
        ("p3", "-2+3"),
        ("p4", "Plain title"),
    ];
    let judges = ["j1", "j2", "j3"];
    let mut reviews = vec![];
    for (j, severity) in judges.iter().zip([0i64, -1, 1]) {
        for (i, (p, _)) in projects.iter().enumerate() {
            reviews.push(json!({
                "judge": format!("{j}_{tag}"),
                "project": format!("{p}_{tag}"),
                "scores": { "impact": (1 + i as i64 + severity).clamp(1, 5) },
                "comment": " =HYPERLINK(\"http://x\")",
                "submitted_at": "2026-01-12T10:00:00Z"
            }));
        }
    }
    json!({
        "format": "verdict.event.v1",
        "event": {
            "external_id": format!("evt_{tag}"), "slug": format!("csv-{tag}"), "name": "CSV",
            "submissions_open": "2026-01-10T09:00:00Z", "submissions_close": "2026-01-11T09:00:00Z",
            "judging_open": "2026-01-12T09:00:00Z", "judging_close": "2026-01-13T09:00:00Z",
            "voting_open": null, "voting_close": null, "reviews_per_project": 3, "max_team_size": 3
        },
        "tracks": [ { "external_id": format!("trk_{tag}"), "name": "Only track" } ],
        "people": [
            { "external_id": format!("o_{tag}"), "email": format!("csv-o-{tag}@example.org"), "display_name": "Org" },
            { "external_id": format!("u1_{tag}"), "email": format!("csv-1-{tag}@example.org"), "display_name": "J1" },
            { "external_id": format!("u2_{tag}"), "email": format!("csv-2-{tag}@example.org"), "display_name": "J2" },
            { "external_id": format!("u3_{tag}"), "email": format!("csv-3-{tag}@example.org"), "display_name": "J3" },
            { "external_id": format!("u4_{tag}"), "email": format!("csv-4-{tag}@example.org"), "display_name": "Builder" }
        ],
        "organizers": [ format!("o_{tag}") ],
        "judges": judges.iter().enumerate().map(|(i, j)| json!({
            "external_id": format!("{j}_{tag}"), "person": format!("u{}_{tag}", i + 1), "tracks": []
        })).collect::<Vec<_>>(),
        "teams": projects.iter().map(|(p, _)| json!({
            "external_id": format!("t{p}_{tag}"), "name": "@SUM(A1)", "members": if *p == "p1" { vec![format!("u4_{tag}")] } else { vec![] }
        })).collect::<Vec<_>>(),
        "projects": projects.iter().map(|(p, title)| json!({
            "external_id": format!("{p}_{tag}"), "team": format!("t{p}_{tag}"), "track": format!("trk_{tag}"),
            "title": title, "tagline": " +tagline", "summary": "", "repo_url": "", "demo_url": "",
            "tags": [], "status": "submitted", "submitted_at": "2026-01-11T08:00:00Z"
        })).collect::<Vec<_>>(),
        "criteria": [ { "key": "impact", "name": "Impact", "weight": 1.0, "min": 1, "max": 5, "position": 1 } ],
        "reviews": reviews
    })
}
