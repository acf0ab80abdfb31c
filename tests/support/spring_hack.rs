//! The test suites' event fixture, generated: `spring-hack-2026` in the `verdict.event.v1`
//! format, so the tests use only what the repository contains. Deterministic (a fixed LCG,
//! no clock), realistic in shape: 6 tracks, 2 organizers, 24 judges (some limited to
//! tracks), 60 teams of 1 to 5, 60 projects (55 submitted, 3 drafts, 2 withdrawn), a
//! 3-criterion rubric and 4 reviews of each submitted project from judges of differing
//! severity, some of whose comments are spreadsheet formulas.
//!
//! Facts the tests rely on: `prj_001` is "OpenMeadow: a sensor kit for beekeepers";
//! `prj_012`, `prj_035`, `prj_051` are drafts; `prj_020`, `prj_058` are withdrawn (they keep
//! their submission time); every external id is `trk_NN`, `usr_NNNN`, `jdg_NN`, `tm_NNN`,
//! `prj_NNN`. Included with `#[path]` by the end-to-end and the in-process tests.

use serde_json::{Value, json};

/// The event's slug.
pub const SLUG: &str = "spring-hack-2026";

const TRACKS: [&str; 6] = [
    "Climate & Energy",
    "Health",
    "Civic Tech",
    "Education",
    "Open Source Tools",
    "Hardware",
];
const FIRST: [&str; 16] = [
    "Mei", "Alan", "Fatima", "Grace", "Olu", "Ravi", "Elif", "Lars", "Ana", "Kwame", "Ingrid",
    "Mateo", "Chloé", "Jonas", "Amara", "Hiro",
];
const LAST: [&str; 12] = [
    "Nakamura",
    "García",
    "Hopper",
    "Lovelace",
    "Mensah",
    "Begay",
    "Rahman",
    "Petrov",
    "Okafor",
    "Lindqvist",
    "Silva",
    "Tanaka",
];
const NAMES: [&str; 12] = [
    "OpenMeadow",
    "CivicCircuit",
    "GridPulse",
    "MedQueue",
    "TransitLens",
    "SeedLedger",
    "QuietHours",
    "PlainLedger",
    "CodeGarden",
    "StillWater",
    "BrightPath",
    "NorthStar",
];
const IDEAS: [&str; 10] = [
    "a sensor kit for beekeepers",
    "a planner for city councils",
    "carbon-aware CI scheduling",
    "a triage bot for clinic queues",
    "open transit data, cleaned",
    "a flashcard engine for medics",
    "grid load forecasts for co-ops",
    "a linter for accessibility",
    "peer-reviewed recipe costs",
    "a marketplace for repair cafés",
];
const TEAM_WORDS: [&str; 8] = [
    "Still", "Plain", "Bright", "North", "Quiet", "Rapid", "Open", "Civic",
];
const TEAM_ENDS: [&str; 6] = ["Trail", "Forge", "Works", "Labs", "Crew", "Collective"];
const DRAFTS: [usize; 3] = [12, 35, 51];
const WITHDRAWN: [usize; 2] = [20, 58];
const FORMULA: &str = "=IMPORTXML(\"http://example.invalid\",\"//a\")";

/// A small deterministic generator (Knuth's MMIX LCG); the fixture never changes.
struct Lcg(u64);

impl Lcg {
    fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        self.0 >> 33
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

/// `2026-03-DDTHH:MM:00Z` from a minute offset after 2026-03-14 00:00.
fn at(minutes: usize) -> String {
    let (d, rest) = (14 + minutes / 1440, minutes % 1440);
    format!("2026-03-{d:02}T{:02}:{:02}:00Z", rest / 60, rest % 60)
}

/// The whole fixture.
pub fn fixture() -> Value {
    let mut rng = Lcg(2026);
    let mut people = vec![];
    let mut person = |rng: &mut Lcg| {
        let n = people.len() + 1;
        let (f, l) = (FIRST[rng.below(FIRST.len())], LAST[rng.below(LAST.len())]);
        let id = format!("usr_{n:04}");
        let ascii: String = format!("{f}.{l}")
            .to_lowercase()
            .chars()
            .filter(|c| c.is_ascii_alphabetic() || *c == '.')
            .collect();
        people.push(json!({
            "external_id": id,
            "email": format!("{ascii}{}@example.org", 100 + n * 7),
            "display_name": format!("{f} {l}"),
        }));
        id
    };
    let organizers = vec![person(&mut rng), person(&mut rng)];
    let judges: Vec<Value> = (0..24)
        .map(|j| {
            let tracks: Vec<String> = match j % 3 {
                // Every third judge covers any track; the others two or three tracks.
                0 => vec![],
                1 => vec![format!("trk_{:02}", j % 6 + 1), format!("trk_{:02}", (j + 2) % 6 + 1)],
                _ => (0..3).map(|k| format!("trk_{:02}", (j + k) % 6 + 1)).collect(),
            };
            json!({ "external_id": format!("jdg_{:02}", j + 1), "person": person(&mut rng), "tracks": tracks })
        })
        .collect();
    let mut teams = vec![];
    let mut projects = vec![];
    for t in 1..=60 {
        let members: Vec<String> = (0..1 + rng.below(5)).map(|_| person(&mut rng)).collect();
        // Team names are not unique: a few repeat.
        let name = format!(
            "{}{}",
            TEAM_WORDS[(t * 5) % TEAM_WORDS.len()],
            TEAM_ENDS[(t * 7) % TEAM_ENDS.len()]
        );
        teams
            .push(json!({ "external_id": format!("tm_{t:03}"), "name": name, "members": members }));
        let (title_name, idea) = if t == 1 {
            ("OpenMeadow", IDEAS[0])
        } else {
            (NAMES[rng.below(NAMES.len())], IDEAS[rng.below(IDEAS.len())])
        };
        let status = if DRAFTS.contains(&t) {
            "draft"
        } else if WITHDRAWN.contains(&t) {
            "withdrawn"
        } else {
            "submitted"
        };
        let tags: Vec<&str> = ["python", "rust", "data", "iot", "ml", "web"]
            .into_iter()
            .filter(|_| rng.below(3) == 0)
            .collect();
        projects.push(json!({
            "external_id": format!("prj_{t:03}"),
            "team": format!("tm_{t:03}"),
            "track": format!("trk_{:02}", (t * 7) % 6 + 1),
            "title": format!("{title_name}: {idea}"),
            "tagline": format!("{}{}", idea[..1].to_uppercase(), &idea[1..]),
            "summary": format!("{title_name} helps with {idea}. Built in 36 hours. \u{1F680}"),
            "repo_url": format!("https://git.example.org/{}/prj_{t:03}", name.to_lowercase()),
            "demo_url": if t % 3 == 0 { format!("https://demo.example.org/prj_{t:03}") } else { String::new() },
            "tags": tags,
            "status": status,
            "submitted_at": (status != "draft").then(|| at(9 * 60 + rng.below(38 * 60))),
        }));
    }
    let covers = |judge: &Value, track: &str| {
        let t = judge["tracks"].as_array().map(Vec::len).unwrap_or(0);
        t == 0
            || judge["tracks"]
                .as_array()
                .is_some_and(|a| a.iter().any(|x| x == track))
    };
    let mut reviews = vec![];
    for (i, p) in projects.iter().enumerate() {
        if p["status"] != "submitted" {
            continue;
        }
        let quality = rng.below(100) as f64 / 100.0;
        let track = p["track"].as_str().unwrap_or_default();
        // Four judges who cover the track, starting at a rotating offset so the
        // judge-project graph is connected.
        let chosen: Vec<usize> = (0..judges.len())
            .map(|k| (i * 5 + k) % judges.len())
            .filter(|j| covers(&judges[*j], track))
            .take(4)
            .collect();
        for j in chosen {
            let severity = (j % 5) as f64 / 2.0 - 1.0;
            let mut scores = serde_json::Map::new();
            for key in ["functionality", "quality", "innovation"] {
                let noise = rng.below(100) as f64 / 100.0 - 0.5;
                let v = (1.0 + 4.0 * quality - severity + noise)
                    .round()
                    .clamp(1.0, 5.0);
                scores.insert(key.to_owned(), json!(v as i64));
            }
            let comment = match rng.below(8) {
                0 => FORMULA.to_owned(),
                1 | 2 => "Clear demo; the pitch could show more of the code.".to_owned(),
                _ => String::new(),
            };
            reviews.push(json!({
                "judge": judges[j]["external_id"],
                "project": p["external_id"],
                "scores": scores,
                "comment": comment,
                "submitted_at": at(2 * 1440 + 9 * 60 + rng.below(30 * 60)),
            }));
        }
    }
    json!({
        "format": "verdict.event.v1",
        "event": {
            "external_id": "evt_spring_hack_2026",
            "slug": SLUG,
            "name": "Spring Hack 2026",
            "submissions_open": "2026-03-14T09:00:00Z",
            "submissions_close": "2026-03-15T23:59:00Z",
            "judging_open": "2026-03-16T09:00:00Z",
            "judging_close": "2026-03-17T18:00:00Z",
            "voting_open": null,
            "voting_close": null,
            "reviews_per_project": 4,
            "max_team_size": 5
        },
        "tracks": TRACKS.iter().enumerate().map(|(i, n)| json!({ "external_id": format!("trk_{:02}", i + 1), "name": n })).collect::<Vec<_>>(),
        "people": people,
        "organizers": organizers,
        "judges": judges,
        "teams": teams,
        "projects": projects,
        "criteria": [
            { "key": "functionality", "name": "Functionality", "weight": 1.0, "min": 1, "max": 5, "position": 1 },
            { "key": "quality", "name": "Technical quality", "weight": 1.0, "min": 1, "max": 5, "position": 2 },
            { "key": "innovation", "name": "Innovation", "weight": 1.0, "min": 1, "max": 5, "position": 3 }
        ],
        "reviews": reviews,
    })
}
