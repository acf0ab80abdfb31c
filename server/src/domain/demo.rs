//! The demo event that ships inside the binary, generated deterministically around the
//! current date so that its submission window is open when you try it.

use chrono::{DateTime, Duration, Utc};
use serde_json::{Value, json};

const TRACKS: [&str; 3] = ["Climate & Energy", "Health", "Open Source Tools"];
const FIRST: [&str; 12] = [
    "Ada", "Grace", "Alan", "Mei", "Olu", "Ravi", "Elif", "Lars", "Ana", "Kwame", "Ingrid", "Mateo",
];
const LAST: [&str; 8] = [
    "Lovelace", "Hopper", "Turing", "Nakamura", "Mensah", "Begay", "Rahman", "Petrov",
];
const IDEAS: [&str; 8] = [
    "a sensor kit for beekeepers",
    "carbon-aware CI scheduling",
    "a triage bot for clinic queues",
    "open transit data, cleaned",
    "a flashcard engine for medics",
    "grid load forecasts for co-ops",
    "a linter for accessibility",
    "peer-reviewed recipe costs",
];

/// Demo accounts that `serve --demo` creates with generated passwords.
pub const ORGANIZER: &str = "organizer@demo.verdict.local";
pub const JUDGE: &str = "judge@demo.verdict.local";
pub const PARTICIPANT: &str = "participant@demo.verdict.local";
pub const SLUG: &str = "demo-hack";
/// A finished demo event with reviews and a published, verifiable result.
pub const FINISHED_SLUG: &str = "demo-finals";

fn iso(t: DateTime<Utc>) -> String {
    t.format("%Y-%m-%dT%H:%M:%SZ").to_string()
}

/// A `verdict.event.v1` fixture: 3 tracks, 8 teams of 3, 8 projects (6 submitted),
/// 4 judges; the submission window is open for a week from `now`.
pub fn fixture(now: DateTime<Utc>) -> Value {
    let day = now
        .date_naive()
        .and_hms_opt(0, 0, 0)
        .unwrap_or_default()
        .and_utc();
    let open = day - Duration::days(2);
    let close = day + Duration::days(7);
    let mut people = vec![];
    let mut teams = vec![];
    let mut projects = vec![];
    for t in 0..8 {
        let mut members = vec![];
        for m in 0..3 {
            let i = t * 3 + m;
            let (f, l) = (FIRST[i % FIRST.len()], LAST[(i * 5 + t) % LAST.len()]);
            people.push(json!({
                "external_id": format!("usr_{:03}", i + 1),
                "email": format!("{}.{}{}@demo.verdict.local", f.to_lowercase(), l.to_lowercase(), i + 1),
                "display_name": format!("{f} {l}"),
            }));
            members.push(format!("usr_{:03}", i + 1));
        }
        teams.push(json!({ "external_id": format!("tm_{:02}", t + 1), "name": format!("Team {}", LAST[t % LAST.len()]), "members": members }));
        let submitted = t < 6;
        projects.push(json!({
            "external_id": format!("prj_{:02}", t + 1),
            "team": format!("tm_{:02}", t + 1),
            "track": format!("trk_{:02}", t % TRACKS.len() + 1),
            "title": format!("Demo {}: {}", t + 1, IDEAS[t]),
            "tagline": IDEAS[t],
            "summary": format!("A demo project about {}.", IDEAS[t]),
            "repo_url": format!("https://git.example.org/demo/prj_{:02}", t + 1),
            "demo_url": "",
            "tags": ["demo"],
            "status": if submitted { "submitted" } else { "draft" },
            "submitted_at": if submitted { Some(iso(open + Duration::hours(6 + t as i64))) } else { None },
        }));
    }
    let mut judges = vec![];
    for j in 0..4 {
        let id = format!("usr_j{:02}", j + 1);
        people.push(json!({ "external_id": id, "email": format!("judge{}@demo.verdict.local", j + 1), "display_name": format!("Judge {}", LAST[(j + 3) % LAST.len()]) }));
        judges.push(
            json!({ "external_id": format!("jdg_{:02}", j + 1), "person": id, "tracks": [] }),
        );
    }
    json!({
        "format": super::import::FORMAT,
        "event": {
            "external_id": "evt_demo_hack",
            "slug": SLUG,
            "name": "Verdict Demo Hack",
            "submissions_open": iso(open),
            "submissions_close": iso(close),
            "judging_open": iso(close + Duration::hours(1)),
            "judging_close": iso(close + Duration::days(2)),
            "voting_open": null,
            "voting_close": null,
            "reviews_per_project": 3,
            "max_team_size": 4,
        },
        "tracks": TRACKS.iter().enumerate().map(|(i, n)| json!({ "external_id": format!("trk_{:02}", i + 1), "name": n })).collect::<Vec<_>>(),
        "people": people,
        "organizers": [],
        "judges": judges,
        "teams": teams,
        "projects": projects,
        "criteria": [
            { "key": "functionality", "name": "Functionality", "weight": 1.0, "min": 1, "max": 5, "position": 1 },
            { "key": "quality", "name": "Technical quality", "weight": 1.0, "min": 1, "max": 5, "position": 2 },
            { "key": "innovation", "name": "Innovation", "weight": 1.0, "min": 1, "max": 5, "position": 3 }
        ],
        "reviews": [],
    })
}

/// A finished event: 24 submitted projects, 8 judges of differing severity, 4 reviews per
/// project, every window in the past. Scores come from a fixed formula (project quality,
/// judge severity, a deterministic wobble), so the demo always calibrates the same way.
pub fn finished_fixture(now: DateTime<Utc>) -> Value {
    let day = now
        .date_naive()
        .and_hms_opt(0, 0, 0)
        .unwrap_or_default()
        .and_utc();
    let open = day - Duration::days(30);
    let mut people = vec![];
    let mut teams = vec![];
    let mut projects = vec![];
    let mut reviews = vec![];
    for t in 0..24usize {
        let id = format!("usr_f{:03}", t + 1);
        let (f, l) = (FIRST[(t * 7) % FIRST.len()], LAST[(t * 3) % LAST.len()]);
        people.push(json!({ "external_id": id, "email": format!("{}.{}.f{}@demo.verdict.local", f.to_lowercase(), l.to_lowercase(), t + 1), "display_name": format!("{f} {l}") }));
        teams.push(json!({ "external_id": format!("ftm_{:02}", t + 1), "name": format!("Finalists {}", t + 1), "members": [id] }));
        projects.push(json!({
            "external_id": format!("fprj_{:02}", t + 1),
            "team": format!("ftm_{:02}", t + 1),
            "track": format!("trk_{:02}", t % TRACKS.len() + 1),
            "title": format!("Finalist {}: {}", t + 1, IDEAS[t % IDEAS.len()]),
            "tagline": IDEAS[t % IDEAS.len()],
            "summary": "",
            "repo_url": format!("https://git.example.org/finals/fprj_{:02}", t + 1),
            "demo_url": "",
            "tags": [],
            "status": "submitted",
            "submitted_at": iso(open + Duration::hours(30 + t as i64)),
        }));
    }
    let mut judges = vec![];
    for j in 0..8usize {
        let id = format!("usr_fj{:02}", j + 1);
        people.push(json!({ "external_id": id, "email": format!("finals.judge{}@demo.verdict.local", j + 1), "display_name": format!("Finals Judge {}", j + 1) }));
        judges.push(
            json!({ "external_id": format!("fjdg_{:02}", j + 1), "person": id, "tracks": [] }),
        );
    }
    let mut wobble: u64 = 0x9e37_79b9_7f4a_7c15;
    for p in 0..24usize {
        let quality = ((p * 37) % 100) as f64 / 100.0;
        for j in [p % 8, (p + 1) % 8, (p + 3) % 8, (p + 5) % 8] {
            let severity = ((j * 5) % 7) as f64 / 3.0 - 1.0;
            let mut scores = serde_json::Map::new();
            for key in ["functionality", "quality", "innovation"] {
                wobble = wobble
                    .wrapping_mul(6_364_136_223_846_793_005)
                    .wrapping_add(1_442_695_040_888_963_407);
                let noise = ((wobble >> 33) % 100) as f64 / 100.0 - 0.5;
                let v = (1.0 + 4.0 * quality + severity + noise)
                    .round()
                    .clamp(1.0, 5.0) as i64;
                scores.insert(key.to_owned(), json!(v));
            }
            reviews.push(json!({
                "judge": format!("fjdg_{:02}", j + 1),
                "project": format!("fprj_{:02}", p + 1),
                "scores": scores,
                "comment": if j % 2 == 0 { "Clear demo; the pitch could show more of the code." } else { "" },
                "submitted_at": iso(open + Duration::days(3) + Duration::minutes((p * 8 + j) as i64)),
            }));
        }
    }
    json!({
        "format": super::import::FORMAT,
        "event": {
            "external_id": "evt_demo_finals",
            "slug": FINISHED_SLUG,
            "name": "Verdict Demo Finals (judged)",
            "submissions_open": iso(open),
            "submissions_close": iso(open + Duration::days(2)),
            "judging_open": iso(open + Duration::days(2) + Duration::hours(1)),
            "judging_close": iso(open + Duration::days(4)),
            "voting_open": null,
            "voting_close": null,
            "reviews_per_project": 4,
            "max_team_size": 4,
        },
        "tracks": TRACKS.iter().enumerate().map(|(i, n)| json!({ "external_id": format!("trk_{:02}", i + 1), "name": n })).collect::<Vec<_>>(),
        "people": people,
        "organizers": [],
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

/// Creates the demo organizer, judge and participant with fresh passwords (returned once)
/// and gives them their roles in the demo event, with one audit entry.
pub async fn seed_accounts<C: sea_orm::ConnectionTrait>(
    txn: &C,
    event: &entity::event::Model,
    finished: &entity::event::Model,
) -> crate::error::AppResult<Vec<(&'static str, &'static str, String)>> {
    use super::{Role, events::insert_membership};
    use entity::{team, team_member, user};
    use sea_orm::{ActiveModelTrait, ActiveValue::Set, ColumnTrait, EntityTrait, QueryFilter};

    let mut out = vec![];
    for (email, role, name) in [
        (ORGANIZER, Role::Organizer, "Demo Organizer"),
        (JUDGE, Role::Judge, "Demo Judge"),
        (PARTICIPANT, Role::Participant, "Demo Participant"),
    ] {
        let pass = crate::crypto::random_string(16);
        let hash =
            crate::crypto::password::hash(&pass).map_err(crate::error::AppError::Internal)?;
        let u = user::ActiveModel {
            public_id: Set(crate::crypto::public_id("usr")),
            email: Set(email.to_owned()),
            display_name: Set(name.to_owned()),
            password_hash: Set(Some(hash)),
            is_site_admin: Set(false),
            created_at: Set(super::now()),
            ..Default::default()
        }
        .insert(txn)
        .await?;
        let ext = (role == Role::Judge).then(|| "jdg_demo".to_owned());
        insert_membership(txn, u.id, event.id, role, ext, "[]").await?;
        if role == Role::Organizer {
            insert_membership(txn, u.id, finished.id, role, None, "[]").await?;
        }
        if role == Role::Participant {
            // The participant joins the team whose project is still a draft.
            if let Some(t) = team::Entity::find()
                .filter(team::Column::EventId.eq(event.id))
                .filter(team::Column::ExternalId.eq("tm_08"))
                .one(txn)
                .await?
            {
                team_member::ActiveModel {
                    event_id: Set(event.id),
                    team_id: Set(t.id),
                    user_id: Set(u.id),
                    created_at: Set(super::now()),
                    ..Default::default()
                }
                .insert(txn)
                .await?;
            }
        }
        out.push((email, role.as_str(), pass));
    }
    crate::audit::append(
        txn,
        crate::audit::Entry::new("demo.accounts_created", "event", &event.public_id)
            .in_event(&event.external_id)
            .with(serde_json::json!({ "accounts": [ORGANIZER, JUDGE, PARTICIPANT] })),
    )
    .await?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    #[test]
    fn demo_fixtures_are_valid_and_deterministic() {
        let t = chrono::Utc::now();
        for f in [super::fixture, super::finished_fixture] {
            let a = f(t);
            assert_eq!(a, f(t));
            super::super::import::parse(a).expect("demo fixture must pass the import checks");
        }
    }
}
