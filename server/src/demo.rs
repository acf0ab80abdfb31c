//! The demo that `verdict serve --demo` seeds on first start. It is setup, not business
//! rules: it writes through the ordinary import and domain functions like any other caller.
//!
//! Three events, generated deterministically around the current date:
//! - `demo-hack`: submissions open for a week, so you can try the participant's side;
//! - `demo-judging`: submissions closed, judging open now, some reviews in and the demo
//!   judge's queue waiting, so the judge scores and the organizer watches progress;
//! - `demo-finals`: every window in the past, reviews in place, calibrated and published as
//!   final results that verify offline.
//!
//! Plus four accounts with fresh passwords (site admin, organizer, judge, participant),
//! returned to the command line to print once. Each has something to do: the site admin
//! creates events (only site admins may), the participant's team has a draft to submit on
//! `demo-hack`, the judge has a queue on `demo-judging`, the organizer runs all three.

use chrono::{DateTime, Duration, Utc};
use entity::event;
use entity::project::ProjectStatus;
use sea_orm::ActiveEnum;
use serde_json::{Value, json};

use crate::crypto::signing::Signer25519;
use crate::db::Db;
use crate::domain::{self, Actor, Write, import, results};
use crate::error::{AppError, AppResult};

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

/// Demo accounts that `serve --demo` creates with generated passwords. The site admin
/// holds no role in the demo events: their thing to do is to create an event of their own.
pub const SITE_ADMIN: &str = "admin@demo.verdict.local";
/// See [`SITE_ADMIN`].
pub const ORGANIZER: &str = "organizer@demo.verdict.local";
pub const JUDGE: &str = "judge@demo.verdict.local";
pub const PARTICIPANT: &str = "participant@demo.verdict.local";
pub const SLUG: &str = "demo-hack";
/// A finished demo event with reviews and a published, verifiable result.
pub const FINISHED_SLUG: &str = "demo-finals";
/// A demo event whose judging is open now, with the demo judge's queue.
pub const JUDGING_SLUG: &str = "demo-judging";
/// The demo judge's judge id in [`JUDGING_SLUG`].
const LIVE_JUDGE: &str = "ljdg_demo";
/// How many projects of [`JUDGING_SLUG`] wait in the demo judge's queue.
const LIVE_QUEUE: usize = 4;

/// What [`seed`] made; the command line prints it once (the passwords are not kept).
pub struct Seeded {
    pub hack: event::Model,
    pub judging: event::Model,
    pub finals: event::Model,
    /// (email, role, password) of each demo account.
    pub accounts: Vec<(&'static str, String, String)>,
}

/// Seeds the demo: imports both events, creates the demo accounts, then calibrates and
/// publishes the finals as the demo organizer. `None` when the demo is already here.
pub async fn seed(db: &Db, signer: &Signer25519) -> AppResult<Option<Seeded>> {
    if domain::event_by_slug(&db.conn, SLUG).await.is_ok() {
        return Ok(None);
    }
    let now = Utc::now();
    let hack = import_fixture(db, fixture(now)).await?;
    let judging = import_fixture(db, judging_fixture(now)).await?;
    let finals = import_fixture(db, finished_fixture(now)).await?;
    let w = Write::begin(db, None).await?;
    let accounts = seed_accounts(&w, &hack, &judging, &finals).await?;
    w.commit().await?;
    let organizer = domain::user_by_email(&db.conn, ORGANIZER)
        .await?
        .ok_or(AppError::NotFound("demo organizer"))?;
    let actor = Actor { user: organizer };
    // The demo judge's queue: the organizer assigns them like any organizer would.
    for p in 0..LIVE_QUEUE {
        let w = Write::begin(db, Some(actor.clone())).await?;
        let e = w.event_by_id(judging.id).await?;
        let org = w.organizer(&e).await?;
        domain::judging::assign(&w, org, LIVE_JUDGE, &LIVE.project_id(p)).await?;
        w.commit().await?;
    }
    let run = results::run_calibration(db, &actor, &finals, signer, Some(1), Some(200)).await?;
    let w = Write::begin(db, Some(actor)).await?;
    let e = w.event_by_id(finals.id).await?;
    results::publish(&w, w.organizer(&e).await?, signer, &run.public_id, true).await?;
    w.commit().await?;
    Ok(Some(Seeded {
        hack,
        judging,
        finals,
        accounts,
    }))
}

/// Imports one demo fixture in its own transaction.
async fn import_fixture(db: &Db, fixture: Value) -> AppResult<event::Model> {
    let fixture = import::parse(fixture)?;
    let w = Write::begin(db, None).await?;
    let (event, _) = import::import(&w, &fixture).await?;
    w.commit().await?;
    Ok(event)
}

fn iso(t: DateTime<Utc>) -> String {
    t.format("%Y-%m-%dT%H:%M:%SZ").to_string()
}

/// The start of `now`'s day (UTC): the demo's windows are whole days around it.
fn midnight(now: DateTime<Utc>) -> DateTime<Utc> {
    now.date_naive()
        .and_hms_opt(0, 0, 0)
        .unwrap_or_default()
        .and_utc()
}

/// How one demo event generates its people: team members and judges. Both demo events use
/// [`Cast::roster`]; they differ only in these sizes and naming rules.
struct Cast {
    /// Tells the events' external ids apart: "" gives `usr_001`, `usr_j01`, `tm_01`,
    /// `jdg_01`; "f" gives `usr_f001`, `usr_fj01`, `ftm_01`, `fjdg_01`.
    id: &'static str,
    teams: usize,
    team_size: usize,
    /// First and last name of member `i` (counted across all teams) of team `t`.
    member_name: fn(i: usize, t: usize) -> (&'static str, &'static str),
    /// Goes between a member's names and number in their email address.
    email_tag: &'static str,
    team_name: fn(t: usize) -> String,
    judges: usize,
    /// A judge's email address is this, their number, then the demo domain.
    judge_email: &'static str,
    judge_name: fn(j: usize) -> String,
}

/// The fixture rows a [`Cast`] generates.
struct Roster {
    /// Every team's members in team order, then the judges.
    people: Vec<Value>,
    teams: Vec<Value>,
    judges: Vec<Value>,
}

impl Cast {
    fn team_id(&self, t: usize) -> String {
        format!("{}tm_{:02}", self.id, t + 1)
    }

    fn judge_id(&self, j: usize) -> String {
        format!("{}jdg_{:02}", self.id, j + 1)
    }

    fn project_id(&self, p: usize) -> String {
        format!("{}prj_{:02}", self.id, p + 1)
    }

    fn roster(&self) -> Roster {
        let mut r = Roster {
            people: vec![],
            teams: vec![],
            judges: vec![],
        };
        for t in 0..self.teams {
            let mut members = vec![];
            for m in 0..self.team_size {
                let i = t * self.team_size + m;
                let (f, l) = (self.member_name)(i, t);
                let id = format!("usr_{}{:03}", self.id, i + 1);
                r.people.push(json!({
                    "external_id": id,
                    "email": format!("{}.{}{}{}@demo.verdict.local", f.to_lowercase(), l.to_lowercase(), self.email_tag, i + 1),
                    "display_name": format!("{f} {l}"),
                }));
                members.push(id);
            }
            r.teams.push(json!({ "external_id": self.team_id(t), "name": (self.team_name)(t), "members": members }));
        }
        for j in 0..self.judges {
            let id = format!("usr_{}j{:02}", self.id, j + 1);
            r.people.push(json!({
                "external_id": id,
                "email": format!("{}{}@demo.verdict.local", self.judge_email, j + 1),
                "display_name": (self.judge_name)(j),
            }));
            r.judges
                .push(json!({ "external_id": self.judge_id(j), "person": id, "tracks": [] }));
        }
        r
    }
}

/// The live event: 8 teams of 3, 4 judges.
const HACK: Cast = Cast {
    id: "",
    teams: 8,
    team_size: 3,
    member_name: |i, t| (FIRST[i % FIRST.len()], LAST[(i * 5 + t) % LAST.len()]),
    email_tag: "",
    team_name: |t| format!("Team {}", LAST[t % LAST.len()]),
    judges: 4,
    judge_email: "judge",
    judge_name: |j| format!("Judge {}", LAST[(j + 3) % LAST.len()]),
};

/// The finished event: 24 one-person teams, 8 judges.
const FINALS: Cast = Cast {
    id: "f",
    teams: 24,
    team_size: 1,
    member_name: |i, _| (FIRST[(i * 7) % FIRST.len()], LAST[(i * 3) % LAST.len()]),
    email_tag: ".f",
    team_name: |t| format!("Finalists {}", t + 1),
    judges: 8,
    judge_email: "finals.judge",
    judge_name: |j| format!("Finals Judge {}", j + 1),
};

/// The event being judged: 9 two-person teams, 3 judges (and the demo judge).
const LIVE: Cast = Cast {
    id: "l",
    teams: 9,
    team_size: 2,
    member_name: |i, t| (FIRST[(i * 5 + 1) % FIRST.len()], LAST[(i + t) % LAST.len()]),
    email_tag: ".l",
    team_name: |t| format!("Crew {}", t + 1),
    judges: 3,
    judge_email: "live.judge",
    judge_name: |j| format!("Panel Judge {}", j + 1),
};

/// A whole `verdict.event.v1` fixture around the parts that differ between the demo
/// events; both share the tracks and the rubric.
fn event_fixture(event: Value, roster: Roster, projects: Vec<Value>, reviews: Vec<Value>) -> Value {
    json!({
        "format": import::FORMAT,
        "event": event,
        "tracks": TRACKS.iter().enumerate().map(|(i, n)| json!({ "external_id": format!("trk_{:02}", i + 1), "name": n })).collect::<Vec<_>>(),
        "people": roster.people,
        "organizers": [],
        "judges": roster.judges,
        "teams": roster.teams,
        "projects": projects,
        "criteria": [
            { "key": "functionality", "name": "Functionality", "weight": 1.0, "min": 1, "max": 5, "position": 1,
              "description": "Does it work as the team says? 1: nothing runs; 3: the main path works; 5: works end to end, edge cases too." },
            { "key": "quality", "name": "Technical quality", "weight": 1.0, "min": 1, "max": 5, "position": 2,
              "description": "How well is it built? Code, architecture and care, for what a weekend allows." },
            { "key": "innovation", "name": "Innovation", "weight": 1.0, "min": 1, "max": 5, "position": 3,
              "description": "Is the idea new, or a known idea done in a new way? 1: seen many times; 5: you had not seen it before." }
        ],
        "reviews": reviews,
    })
}

/// A `verdict.event.v1` fixture: 3 tracks, 8 teams of 3, 8 projects (6 submitted),
/// 4 judges; the submission window is open for a week from `now`.
pub fn fixture(now: DateTime<Utc>) -> Value {
    let day = midnight(now);
    let open = day - Duration::days(2);
    let close = day + Duration::days(7);
    let projects = (0..HACK.teams)
        .map(|t| {
            let submitted = t < 6;
            let status = if submitted {
                ProjectStatus::Submitted
            } else {
                ProjectStatus::Draft
            };
            json!({
                "external_id": format!("prj_{:02}", t + 1),
                "team": HACK.team_id(t),
                "track": format!("trk_{:02}", t % TRACKS.len() + 1),
                "title": format!("Demo {}: {}", t + 1, IDEAS[t]),
                "tagline": IDEAS[t],
                "summary": format!("A demo project about {}.", IDEAS[t]),
                "repo_url": format!("https://git.example.org/demo/prj_{:02}", t + 1),
                "demo_url": "",
                "tags": ["demo"],
                "status": status.to_value(),
                "submitted_at": if submitted { Some(iso(open + Duration::hours(6 + t as i64))) } else { None },
            })
        })
        .collect();
    let event = json!({
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
        "time_zone": "Europe/Berlin",
    });
    event_fixture(event, HACK.roster(), projects, vec![])
}

/// An event in judging: submissions closed yesterday, judging open for five more days;
/// 9 submitted projects, 3 panel judges who have each scored 2 of them (6 reviews of the
/// 27 the event wants), so the progress picture is partly filled.
pub fn judging_fixture(now: DateTime<Utc>) -> Value {
    let day = midnight(now);
    let open = day - Duration::days(3);
    let close = day - Duration::days(1);
    let projects = (0..LIVE.teams)
        .map(|t| {
            json!({
                "external_id": LIVE.project_id(t),
                "team": LIVE.team_id(t),
                "track": format!("trk_{:02}", t % TRACKS.len() + 1),
                "title": format!("Live {}: {}", t + 1, IDEAS[(t + 3) % IDEAS.len()]),
                "tagline": IDEAS[(t + 3) % IDEAS.len()],
                "summary": format!("A project waiting for its judges: {}.", IDEAS[(t + 3) % IDEAS.len()]),
                "repo_url": format!("https://git.example.org/live/{}", LIVE.project_id(t)),
                "demo_url": "",
                "tags": ["demo"],
                "status": "submitted",
                "submitted_at": iso(open + Duration::hours(10 + t as i64)),
            })
        })
        .collect();
    // Panel judge j has scored the two projects after the demo judge's queue.
    let reviews = (0..LIVE.judges)
        .flat_map(|j| {
            (0..2).map(move |k| (j, LIVE_QUEUE + (j * 2 + k) % (LIVE.teams - LIVE_QUEUE)))
        })
        .map(|(j, p)| {
            let v = 2 + ((j + p) % 3) as i64;
            json!({
                "judge": LIVE.judge_id(j),
                "project": LIVE.project_id(p),
                "scores": { "functionality": v, "quality": v, "innovation": (v % 5) + 1 },
                "comment": "",
                "submitted_at": iso(close + Duration::hours(2 + (j * 2) as i64)),
            })
        })
        .collect();
    let event = json!({
        "external_id": "evt_demo_judging",
        "slug": JUDGING_SLUG,
        "name": "Verdict Demo Judging (live)",
        "submissions_open": iso(open),
        "submissions_close": iso(close),
        "judging_open": iso(close + Duration::hours(1)),
        "judging_close": iso(day + Duration::days(5)),
        "voting_open": null,
        "voting_close": null,
        "reviews_per_project": 3,
        "max_team_size": 4,
        "time_zone": "Europe/Berlin",
    });
    event_fixture(event, LIVE.roster(), projects, reviews)
}

/// A finished event: 24 submitted projects, 8 judges of differing severity, 4 reviews per
/// project, every window in the past. Scores come from a fixed formula (project quality,
/// judge severity, a deterministic wobble), so the demo always calibrates the same way.
pub fn finished_fixture(now: DateTime<Utc>) -> Value {
    let open = midnight(now) - Duration::days(30);
    let projects = (0..FINALS.teams)
        .map(|t| {
            json!({
                "external_id": format!("fprj_{:02}", t + 1),
                "team": FINALS.team_id(t),
                "track": format!("trk_{:02}", t % TRACKS.len() + 1),
                "title": format!("Finalist {}: {}", t + 1, IDEAS[t % IDEAS.len()]),
                "tagline": IDEAS[t % IDEAS.len()],
                "summary": "",
                "repo_url": format!("https://git.example.org/finals/fprj_{:02}", t + 1),
                "demo_url": "",
                "tags": [],
                "status": ProjectStatus::Submitted.to_value(),
                "submitted_at": iso(open + Duration::hours(30 + t as i64)),
            })
        })
        .collect();
    let judges = FINALS.judges;
    let mut reviews = vec![];
    let mut wobble: u64 = 0x9e37_79b9_7f4a_7c15;
    for p in 0..FINALS.teams {
        let quality = ((p * 37) % 100) as f64 / 100.0;
        for j in [
            p % judges,
            (p + 1) % judges,
            (p + 3) % judges,
            (p + 5) % judges,
        ] {
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
                "judge": FINALS.judge_id(j),
                "project": format!("fprj_{:02}", p + 1),
                "scores": scores,
                "comment": if j % 2 == 0 { "Clear demo; the pitch could show more of the code." } else { "" },
                "submitted_at": iso(open + Duration::days(3) + Duration::minutes((p * 8 + j) as i64)),
            }));
        }
    }
    let event = json!({
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
        "time_zone": "Europe/Berlin",
    });
    event_fixture(event, FINALS.roster(), projects, reviews)
}

/// Creates the demo site admin, organizer, judge and participant with fresh passwords
/// (returned once) and gives them their roles in the demo events, with one audit entry.
async fn seed_accounts(
    w: &Write,
    event: &event::Model,
    judging: &event::Model,
    finished: &event::Model,
) -> AppResult<Vec<(&'static str, String, String)>> {
    use crate::domain::accounts::{Standing, insert_user};
    use crate::domain::{Role, events::insert_membership, teams::insert_member};
    use entity::team;
    use sea_orm::{ColumnTrait, EntityTrait, QueryFilter};

    let (txn, now) = (w.txn(), w.now());
    let mut out = vec![];
    // The site admin first: the one account that can create an event from nothing.
    let pass = crate::crypto::random_string(16);
    let hash = crate::crypto::password::hash(&pass).map_err(AppError::Internal)?;
    let name = "Demo Site Admin".to_owned();
    insert_user(w, SITE_ADMIN.to_owned(), name, hash, Standing::SiteAdmin).await?;
    out.push((SITE_ADMIN, "site admin".to_owned(), pass));
    for (email, role, name) in [
        (ORGANIZER, Role::Organizer, "Demo Organizer"),
        (JUDGE, Role::Judge, "Demo Judge"),
        (PARTICIPANT, Role::Participant, "Demo Participant"),
    ] {
        let pass = crate::crypto::random_string(16);
        let hash = crate::crypto::password::hash(&pass).map_err(AppError::Internal)?;
        let (email_, name) = (email.to_owned(), name.to_owned());
        let u = insert_user(w, email_, name, hash, Standing::Confirmed).await?;
        let ext = (role == Role::Judge).then(|| "jdg_demo".to_owned());
        insert_membership(txn, u.id, event.id, role, ext, "[]", now).await?;
        if role == Role::Organizer {
            insert_membership(txn, u.id, judging.id, role, None, "[]", now).await?;
            insert_membership(txn, u.id, finished.id, role, None, "[]", now).await?;
        }
        if role == Role::Judge {
            insert_membership(
                txn,
                u.id,
                judging.id,
                role,
                Some(LIVE_JUDGE.to_owned()),
                "[]",
                now,
            )
            .await?;
        }
        if role == Role::Participant {
            // The participant joins the team whose project is still a draft.
            if let Some(t) = team::Entity::find()
                .filter(team::Column::EventId.eq(event.id))
                .filter(team::Column::ExternalId.eq("tm_08"))
                .one(txn)
                .await?
            {
                insert_member(txn, &t, u.id, now).await?;
            }
        }
        out.push((email, role.to_value(), pass));
    }
    w.append(
        crate::audit::Entry::new("demo.accounts_created", "event", &event.public_id)
            .in_event(&event.external_id)
            .with(json!({ "accounts": [SITE_ADMIN, ORGANIZER, JUDGE, PARTICIPANT] })),
    )
    .await?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    #[test]
    fn demo_fixtures_are_valid_and_deterministic() {
        let t = chrono::Utc::now();
        for f in [
            super::fixture,
            super::judging_fixture,
            super::finished_fixture,
        ] {
            let a = f(t);
            assert_eq!(a, f(t));
            crate::domain::import::parse(a).expect("demo fixture must pass the import checks");
        }
    }
}
