//! The event fixtures tests import: the shipped `spring-hack-2026.json` (60 teams, 24
//! judges, reviews), and a tiny generated one with unique ids.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

/// The event fixture shipped beside the repository.
pub fn fixture_path() -> PathBuf {
    if let Ok(p) = std::env::var("VERDICT_FIXTURE") {
        return PathBuf::from(p);
    }
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let candidates = [
        repo.join("fixtures/spring-hack-2026.json"),
        repo.join("../shared/fixtures/spring-hack-2026.json"),
    ];
    candidates
        .iter()
        .find(|p| p.exists())
        .cloned()
        .unwrap_or_else(|| panic!("fixture not found (set VERDICT_FIXTURE); tried {candidates:?}"))
}

pub fn load_fixture() -> Value {
    let p = fixture_path();
    let text = std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
    serde_json::from_str(&text).expect("fixture is JSON")
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
