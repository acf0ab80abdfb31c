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

/// Creates the demo organizer, judge and participant with fresh passwords (returned once)
/// and gives them their roles in the demo event, with one audit entry.
pub async fn seed_accounts<C: sea_orm::ConnectionTrait>(
    txn: &C,
    event: &entity::event::Model,
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
    fn demo_fixture_is_valid_and_deterministic() {
        let t = chrono::Utc::now();
        let a = super::fixture(t);
        assert_eq!(a, super::fixture(t));
        super::super::import::parse(a).expect("demo fixture must pass the import checks");
    }
}
