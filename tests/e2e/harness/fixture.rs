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
