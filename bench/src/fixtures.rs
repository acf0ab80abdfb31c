//! The two events the suite imports, generated in `verdict.event.v1` (deterministic: the
//! same sizes give the same file, so runs on either backend see the same data).
//!
//! - The gallery event: 50 submitted projects spread over 5 tracks, each by its own team.
//! - The big event: P submitted projects (one team each), J judges who cover every track,
//!   and k submitted reviews per project. Project p is reviewed by judges `p*k .. p*k+k`
//!   (mod J), so consecutive projects share judges and the judge–project graph is one
//!   component, as calibration needs. Scores are quality + judge severity + noise.

use chrono::{DateTime, Duration, SecondsFormat, Utc};
use serde_json::{Value, json};

/// The gallery event's slug.
pub const GALLERY: &str = "bench-gallery";
/// The big event's slug.
pub const BIG: &str = "bench-big";
/// The rubric of both events: keys, each scored 1 to 10.
pub const CRITERIA: [&str; 3] = ["impact", "execution", "novelty"];

/// A generated event: the fixture and the names the rows need.
pub struct Event {
    pub fixture: Value,
    /// Judge emails, in judge order (`jdg_0000` first).
    pub judge_emails: Vec<String>,
    /// Which projects (external ids) each judge reviews, in judge order.
    pub reviewed: Vec<Vec<String>>,
    /// Every project's external id.
    pub projects: Vec<String>,
}

/// SplitMix64: a tiny deterministic generator, enough for synthetic scores.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in [-1, 1).
    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 52) as f64 - 1.0
    }
}

fn time(t: DateTime<Utc>) -> String {
    t.to_rfc3339_opts(SecondsFormat::Secs, true)
}

/// Submissions closed yesterday; judging is open for another month, so reviews can be
/// saved during the run.
fn event_row(slug: &str, name: &str, now: DateTime<Utc>, k: usize) -> Value {
    json!({
        "external_id": format!("evt_{}", slug.replace('-', "_")),
        "slug": slug,
        "name": name,
        "submissions_open": time(now - Duration::days(10)),
        "submissions_close": time(now - Duration::days(1)),
        "judging_open": time(now - Duration::days(1)),
        "judging_close": time(now + Duration::days(30)),
        "voting_open": null,
        "voting_close": null,
        "reviews_per_project": k,
        "max_team_size": 5,
    })
}

fn criteria() -> Value {
    CRITERIA
        .iter()
        .enumerate()
        .map(|(i, key)| json!({ "key": key, "name": key, "weight": 1.0, "min": 1, "max": 10, "position": i }))
        .collect()
}

/// People, teams (one member each) and submitted projects, `p` of them over `tracks`.
fn teams_and_projects(
    slug: &str,
    p: usize,
    tracks: usize,
    now: DateTime<Utc>,
) -> (Vec<Value>, Vec<Value>, Vec<Value>) {
    let mut people = Vec::with_capacity(p);
    let mut teams = Vec::with_capacity(p);
    let mut projects = Vec::with_capacity(p);
    for i in 0..p {
        let person = format!("usr_p{i:05}");
        people.push(json!({
            "external_id": person,
            "email": participant_email(slug, i),
            "display_name": format!("Participant {i}"),
        }));
        teams.push(json!({ "external_id": format!("tm_{i:05}"), "name": format!("Team {i}"), "members": [person] }));
        projects.push(json!({
            "external_id": format!("prj_{i:05}"),
            "team": format!("tm_{i:05}"),
            "track": format!("trk_{:02}", i % tracks),
            "title": format!("Project {i}: a tool for hackathon number {}", i % 97),
            "tagline": format!("Tagline of project {i}, one line long"),
            "summary": "A summary of the kind a team writes in the last hour.",
            "description": "",
            "repo_url": format!("https://git.example.org/team{i}/project"),
            "demo_url": "",
            "tags": ["rust", "graphql"],
            "status": "submitted",
            "submitted_at": time(now - Duration::days(2)),
        }));
    }
    (people, teams, projects)
}

fn tracks(n: usize) -> Value {
    (0..n)
        .map(|t| json!({ "external_id": format!("trk_{t:02}"), "name": format!("Track {t}") }))
        .collect()
}

fn organizer(slug: &str) -> Value {
    json!({ "external_id": "usr_org", "email": organizer_email(slug), "display_name": "Organizer" })
}

/// The email of the event's one organizer.
pub fn organizer_email(slug: &str) -> String {
    format!("organizer@{slug}.bench.local")
}

/// The email of participant `i` of the event, the one member of team `tm_{i:05}`, whose
/// project is `prj_{i:05}`.
pub fn participant_email(slug: &str, i: usize) -> String {
    format!("participant{i:05}@{slug}.bench.local")
}

/// The 50-project gallery event.
pub fn gallery(now: DateTime<Utc>) -> Event {
    let (mut people, teams, projects) = teams_and_projects(GALLERY, 50, 5, now);
    people.push(organizer(GALLERY));
    let projects_ids = ids(&projects);
    Event {
        fixture: json!({
            "format": "verdict.event.v1",
            "event": event_row(GALLERY, "Bench gallery", now, 3),
            "tracks": tracks(5),
            "people": people,
            "organizers": ["usr_org"],
            "judges": [],
            "teams": teams,
            "projects": projects,
            "criteria": criteria(),
            "reviews": [],
        }),
        judge_emails: vec![],
        reviewed: vec![],
        projects: projects_ids,
    }
}

/// The big event: `p` projects, `j` judges, `k` submitted reviews per project.
pub fn big(now: DateTime<Utc>, p: usize, j: usize, k: usize) -> Event {
    assert!(
        k <= j,
        "each of a project's k reviewers must be a different judge"
    );
    let (mut people, teams, projects) = teams_and_projects(BIG, p, 10, now);
    people.push(organizer(BIG));
    let mut rng = Rng(42);
    let mut judges = Vec::with_capacity(j);
    let mut judge_emails = Vec::with_capacity(j);
    let severity: Vec<f64> = (0..j).map(|_| 1.5 * rng.unit()).collect();
    for n in 0..j {
        let email = format!("judge{n:04}@{BIG}.bench.local");
        people.push(json!({ "external_id": format!("usr_j{n:04}"), "email": email, "display_name": format!("Judge {n}") }));
        judges.push(json!({ "external_id": format!("jdg_{n:04}"), "person": format!("usr_j{n:04}"), "tracks": [] }));
        judge_emails.push(email);
    }
    let mut reviewed = vec![Vec::new(); j];
    let mut reviews = Vec::with_capacity(p * k);
    for i in 0..p {
        let quality = 5.5 + 3.0 * rng.unit();
        for r in 0..k {
            let judge = (i * k + r) % j;
            let scores: serde_json::Map<String, Value> = CRITERIA
                .iter()
                .map(|c| {
                    let s = (quality + severity[judge] + rng.unit())
                        .round()
                        .clamp(1.0, 10.0);
                    ((*c).to_owned(), json!(s as i64))
                })
                .collect();
            reviews.push(json!({
                "judge": format!("jdg_{judge:04}"),
                "project": format!("prj_{i:05}"),
                "scores": scores,
                "comment": "",
                "submitted_at": time(now - Duration::hours(12)),
            }));
            reviewed[judge].push(format!("prj_{i:05}"));
        }
    }
    let projects_ids = ids(&projects);
    Event {
        fixture: json!({
            "format": "verdict.event.v1",
            "event": event_row(BIG, "Bench big event", now, k),
            "tracks": tracks(10),
            "people": people,
            "organizers": ["usr_org"],
            "judges": judges,
            "teams": teams,
            "projects": projects,
            "criteria": criteria(),
            "reviews": reviews,
        }),
        judge_emails,
        reviewed,
        projects: projects_ids,
    }
}

fn ids(rows: &[Value]) -> Vec<String> {
    rows.iter()
        .filter_map(|r| r["external_id"].as_str().map(str::to_owned))
        .collect()
}

impl Event {
    /// Projects the judge `n` does not review yet (for fresh assignments).
    pub fn not_reviewed_by(&self, n: usize) -> Vec<&str> {
        self.projects
            .iter()
            .filter(|p| !self.reviewed[n].contains(p))
            .map(String::as_str)
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    #[test]
    fn the_big_event_gives_every_project_k_distinct_judges_and_every_judge_work() {
        let e = big(Utc::now(), 200, 30, 5);
        let reviews = e.fixture["reviews"].as_array().unwrap();
        assert_eq!(reviews.len(), 1000);
        let pairs: HashSet<(&str, &str)> = reviews
            .iter()
            .map(|r| (r["judge"].as_str().unwrap(), r["project"].as_str().unwrap()))
            .collect();
        assert_eq!(pairs.len(), 1000, "a judge reviews a project once");
        assert!(e.reviewed.iter().all(|r| r.len() >= 30));
        for r in reviews {
            for c in CRITERIA {
                let s = r["scores"][c].as_i64().unwrap();
                assert!((1..=10).contains(&s), "score {s} outside the rubric");
            }
        }
        assert_eq!(e.not_reviewed_by(0).len(), 200 - e.reviewed[0].len());
    }

    #[test]
    fn the_same_sizes_give_the_same_fixture() {
        let now = Utc::now();
        assert_eq!(big(now, 50, 10, 3).fixture, big(now, 50, 10, 3).fixture);
    }

    #[test]
    fn the_gallery_has_fifty_submitted_projects_over_five_tracks() {
        let e = gallery(Utc::now());
        let projects = e.fixture["projects"].as_array().unwrap();
        assert_eq!(projects.len(), 50);
        assert!(projects.iter().all(|p| p["status"] == "submitted"));
        let tracks: HashSet<&str> = projects
            .iter()
            .map(|p| p["track"].as_str().unwrap())
            .collect();
        assert_eq!(tracks.len(), 5);
    }
}
