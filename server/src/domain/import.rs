//! Importing an event fixture (`verdict.event.v1`): one transaction, idempotent by external
//! id, audited once. A bad row refuses the whole file with a message naming the row.
//!
//! Import is the one audited bypass of the submission deadline: projects arrive with their
//! given status. Rows that already exist are never overwritten, so a second import of the
//! same file inserts nothing and keeps whatever people changed since.
//!
//! Each review becomes an assignment (source `import`, status `done`) plus a submitted
//! review with its first revision.

use std::collections::{HashMap, HashSet};

use chrono::{DateTime, Utc};
use entity::{
    assignment, criterion, event, membership, project, review, team, team_member, track, user,
};
use sea_orm::{
    ActiveModelTrait, ActiveValue::Set, ColumnTrait, ConnectionTrait, EntityTrait, QueryFilter,
};
use serde::Deserialize;
use serde_json::json;

use super::{Role, events::insert_membership, now, validate};
use crate::audit::{self, Entry};
use crate::crypto::{public_id, random_string};
use crate::error::{AppError, AppResult};

pub const FORMAT: &str = "verdict.event.v1";

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Fixture {
    pub format: String,
    pub event: FxEvent,
    #[serde(default)]
    pub tracks: Vec<FxTrack>,
    #[serde(default)]
    pub people: Vec<FxPerson>,
    #[serde(default)]
    pub organizers: Vec<String>,
    #[serde(default)]
    pub judges: Vec<FxJudge>,
    #[serde(default)]
    pub teams: Vec<FxTeam>,
    #[serde(default)]
    pub projects: Vec<FxProject>,
    #[serde(default)]
    pub criteria: Vec<FxCriterion>,
    #[serde(default)]
    pub reviews: Vec<FxReview>,
}

#[derive(Debug, Deserialize)]
pub struct FxEvent {
    pub external_id: String,
    pub slug: String,
    pub name: String,
    pub submissions_open: DateTime<Utc>,
    pub submissions_close: DateTime<Utc>,
    pub judging_open: Option<DateTime<Utc>>,
    pub judging_close: Option<DateTime<Utc>>,
    pub voting_open: Option<DateTime<Utc>>,
    pub voting_close: Option<DateTime<Utc>>,
    pub reviews_per_project: i32,
    pub max_team_size: i32,
}

#[derive(Debug, Deserialize)]
pub struct FxTrack {
    pub external_id: String,
    pub name: String,
}

#[derive(Debug, Deserialize)]
pub struct FxPerson {
    pub external_id: String,
    pub email: String,
    pub display_name: String,
}

#[derive(Debug, Deserialize)]
pub struct FxJudge {
    pub external_id: String,
    pub person: String,
    #[serde(default)]
    pub tracks: Vec<String>,
}

#[derive(Debug, Deserialize)]
pub struct FxTeam {
    pub external_id: String,
    pub name: String,
    pub members: Vec<String>,
}

#[derive(Debug, Deserialize)]
pub struct FxProject {
    pub external_id: String,
    pub team: String,
    pub track: String,
    pub title: String,
    #[serde(default)]
    pub tagline: String,
    #[serde(default)]
    pub summary: String,
    #[serde(default)]
    pub description: String,
    #[serde(default)]
    pub repo_url: String,
    #[serde(default)]
    pub demo_url: String,
    #[serde(default)]
    pub tags: Vec<String>,
    pub status: String,
    pub submitted_at: Option<DateTime<Utc>>,
}

#[derive(Debug, Deserialize)]
pub struct FxCriterion {
    pub key: String,
    pub name: String,
    pub weight: f64,
    pub min: i32,
    pub max: i32,
    pub position: i32,
}

#[derive(Debug, Deserialize)]
pub struct FxReview {
    pub judge: String,
    pub project: String,
    pub scores: HashMap<String, i64>,
    #[serde(default)]
    pub comment: String,
    pub submitted_at: Option<DateTime<Utc>>,
}

/// What an import inserted, by kind. Existing rows count zero.
#[derive(Debug, Default, Clone, serde::Serialize)]
pub struct ImportCounts {
    pub events: i32,
    pub tracks: i32,
    pub people: i32,
    pub memberships: i32,
    pub teams: i32,
    pub team_members: i32,
    pub projects: i32,
    pub criteria: i32,
    pub assignments: i32,
    pub reviews: i32,
}

impl ImportCounts {
    pub fn total(&self) -> i32 {
        self.events
            + self.tracks
            + self.people
            + self.memberships
            + self.teams
            + self.team_members
            + self.projects
    }
}

fn row_err(row: impl std::fmt::Display, message: impl std::fmt::Display) -> AppError {
    AppError::bad_input("fixture", format!("{row}: {message}"))
}

fn unique<'a>(kind: &str, ids: impl Iterator<Item = &'a str>) -> AppResult<()> {
    let mut seen = HashSet::new();
    for id in ids {
        if !seen.insert(id) {
            return Err(row_err(format!("{kind} {id}"), "duplicate external id"));
        }
    }
    Ok(())
}

/// Parses a fixture from JSON, naming the problem when it does not fit the format.
pub fn parse(value: serde_json::Value) -> AppResult<Fixture> {
    let f: Fixture =
        serde_json::from_value(value).map_err(|e| AppError::bad_input("fixture", e.to_string()))?;
    if f.format != FORMAT {
        return Err(AppError::bad_input(
            "fixture",
            format!("format must be {FORMAT:?}"),
        ));
    }
    check(&f)?;
    Ok(f)
}

/// Every rule a fixture must satisfy before anything is written.
fn check(f: &Fixture) -> AppResult<()> {
    let e = &f.event;
    let row = format!("event {}", e.external_id);
    validate::external_id("event.external_id", &e.external_id).map_err(|m| row_err(&row, m))?;
    validate::slug("event.slug", &e.slug).map_err(|m| row_err(&row, m))?;
    validate::name("event.name", &e.name, validate::NAME_MAX).map_err(|m| row_err(&row, m))?;
    validate::window(
        "submissions",
        Some(e.submissions_open),
        Some(e.submissions_close),
    )
    .map_err(|m| row_err(&row, m))?;
    validate::window("judging", e.judging_open, e.judging_close).map_err(|m| row_err(&row, m))?;
    validate::window("voting", e.voting_open, e.voting_close).map_err(|m| row_err(&row, m))?;
    if e.reviews_per_project < 1 || e.max_team_size < 1 {
        return Err(row_err(
            &row,
            "reviews_per_project and max_team_size must be at least 1",
        ));
    }
    unique("track", f.tracks.iter().map(|t| t.external_id.as_str()))?;
    unique("person", f.people.iter().map(|t| t.external_id.as_str()))?;
    unique("judge", f.judges.iter().map(|t| t.external_id.as_str()))?;
    unique("team", f.teams.iter().map(|t| t.external_id.as_str()))?;
    unique("project", f.projects.iter().map(|t| t.external_id.as_str()))?;
    unique("criterion", f.criteria.iter().map(|t| t.key.as_str()))?;
    let mut emails = HashSet::new();
    for p in &f.people {
        let r = format!("person {}", p.external_id);
        let email = validate::email("email", &p.email).map_err(|m| row_err(&r, m))?;
        if !emails.insert(email) {
            return Err(row_err(&r, "duplicate email (emails are case-insensitive)"));
        }
        validate::name("display_name", &p.display_name, 100).map_err(|m| row_err(&r, m))?;
    }
    for t in &f.tracks {
        validate::name("name", &t.name, validate::NAME_MAX)
            .map_err(|m| row_err(format!("track {}", t.external_id), m))?;
    }
    let people: HashSet<&str> = f.people.iter().map(|p| p.external_id.as_str()).collect();
    let tracks: HashSet<&str> = f.tracks.iter().map(|p| p.external_id.as_str()).collect();
    let teams: HashSet<&str> = f.teams.iter().map(|p| p.external_id.as_str()).collect();
    for o in &f.organizers {
        if !people.contains(o.as_str()) {
            return Err(row_err(format!("organizer {o}"), "unknown person"));
        }
    }
    let mut on_team: HashMap<&str, &str> = HashMap::new();
    for t in &f.teams {
        let r = format!("team {}", t.external_id);
        validate::name("name", &t.name, validate::NAME_MAX).map_err(|m| row_err(&r, m))?;
        if t.members.len() > e.max_team_size as usize {
            return Err(row_err(
                &r,
                format!("more than {} members", e.max_team_size),
            ));
        }
        for m in &t.members {
            if !people.contains(m.as_str()) {
                return Err(row_err(&r, format!("unknown person {m}")));
            }
            if let Some(other) = on_team.insert(m.as_str(), t.external_id.as_str()) {
                return Err(row_err(&r, format!("{m} is already on team {other}")));
            }
        }
    }
    for j in &f.judges {
        let r = format!("judge {}", j.external_id);
        if !people.contains(j.person.as_str()) {
            return Err(row_err(&r, format!("unknown person {}", j.person)));
        }
        if let Some(t) = on_team.get(j.person.as_str()) {
            return Err(row_err(
                &r,
                format!("{} is on team {t} and cannot judge", j.person),
            ));
        }
        for t in &j.tracks {
            if !tracks.contains(t.as_str()) {
                return Err(row_err(&r, format!("unknown track {t}")));
            }
        }
    }
    let mut project_status: HashMap<&str, &str> = HashMap::new();
    for p in &f.projects {
        let r = format!("project {}", p.external_id);
        if !teams.contains(p.team.as_str()) {
            return Err(row_err(&r, format!("unknown team {}", p.team)));
        }
        if !tracks.contains(p.track.as_str()) {
            return Err(row_err(&r, format!("unknown track {}", p.track)));
        }
        validate::name("title", &p.title, validate::TITLE_MAX).map_err(|m| row_err(&r, m))?;
        validate::text("tagline", &p.tagline, validate::TAGLINE_MAX).map_err(|m| row_err(&r, m))?;
        validate::text("summary", &p.summary, validate::SUMMARY_MAX).map_err(|m| row_err(&r, m))?;
        validate::text("description", &p.description, validate::DESCRIPTION_MAX)
            .map_err(|m| row_err(&r, m))?;
        validate::url("repo_url", &p.repo_url).map_err(|m| row_err(&r, m))?;
        validate::url("demo_url", &p.demo_url).map_err(|m| row_err(&r, m))?;
        validate::tags("tags", &p.tags).map_err(|m| row_err(&r, m))?;
        match (p.status.as_str(), p.submitted_at) {
            ("submitted", Some(_)) | ("draft", None) | ("withdrawn", _) => {}
            ("submitted", None) => {
                return Err(row_err(&r, "a submitted project needs submitted_at"));
            }
            ("draft", Some(_)) => return Err(row_err(&r, "a draft has no submitted_at")),
            (s, _) => return Err(row_err(&r, format!("unknown status {s:?}"))),
        }
        project_status.insert(p.external_id.as_str(), p.status.as_str());
    }
    let criteria: HashMap<&str, &FxCriterion> =
        f.criteria.iter().map(|c| (c.key.as_str(), c)).collect();
    for c in &f.criteria {
        let r = format!("criterion {}", c.key);
        if !(c.weight > 0.0 && c.weight.is_finite()) || c.min >= c.max {
            return Err(row_err(&r, "weight must be positive and min below max"));
        }
    }
    let judges: HashSet<&str> = f.judges.iter().map(|j| j.external_id.as_str()).collect();
    let mut reviewed = HashSet::new();
    for (i, rv) in f.reviews.iter().enumerate() {
        let r = format!("review #{} ({} on {})", i + 1, rv.judge, rv.project);
        if !judges.contains(rv.judge.as_str()) {
            return Err(row_err(&r, "unknown judge"));
        }
        if !project_status.contains_key(rv.project.as_str()) {
            return Err(row_err(&r, "unknown project"));
        }
        validate::text("comment", &rv.comment, super::judging::COMMENT_MAX)
            .map_err(|m| row_err(&r, m))?;
        if !reviewed.insert((rv.judge.as_str(), rv.project.as_str())) {
            return Err(row_err(&r, "a judge reviews a project once"));
        }
        for (k, v) in &rv.scores {
            let c = criteria
                .get(k.as_str())
                .ok_or_else(|| row_err(&r, format!("unknown criterion {k}")))?;
            if *v < c.min as i64 || *v > c.max as i64 {
                return Err(row_err(
                    &r,
                    format!("score {v} for {k} is outside {}..{}", c.min, c.max),
                ));
            }
        }
        if rv.scores.len() != criteria.len() {
            return Err(row_err(&r, "a review scores every criterion"));
        }
    }
    Ok(())
}

/// Writes the fixture inside `txn` and appends one `event.imported` audit entry.
pub async fn import<C: ConnectionTrait>(
    txn: &C,
    actor: &str,
    f: &Fixture,
) -> AppResult<(event::Model, ImportCounts)> {
    let mut n = ImportCounts::default();
    let t0 = now();
    let fe = &f.event;
    let ev = match event::Entity::find()
        .filter(event::Column::ExternalId.eq(&fe.external_id))
        .one(txn)
        .await?
    {
        Some(e) => e,
        None => {
            if event::Entity::find()
                .filter(event::Column::Slug.eq(&fe.slug))
                .one(txn)
                .await?
                .is_some()
            {
                return Err(row_err(
                    format!("event {}", fe.external_id),
                    "another event has this slug",
                ));
            }
            n.events += 1;
            event::ActiveModel {
                public_id: Set(public_id("evt")),
                external_id: Set(fe.external_id.clone()),
                slug: Set(fe.slug.clone()),
                name: Set(fe.name.clone()),
                submissions_open: Set(fe.submissions_open),
                submissions_close: Set(fe.submissions_close),
                judging_open: Set(fe.judging_open),
                judging_close: Set(fe.judging_close),
                voting_open: Set(fe.voting_open),
                voting_close: Set(fe.voting_close),
                reviews_per_project: Set(fe.reviews_per_project),
                max_team_size: Set(fe.max_team_size),
                created_at: Set(t0),
                ..Default::default()
            }
            .insert(txn)
            .await?
        }
    };

    let mut track_ids = HashMap::new();
    let existing: HashMap<String, i64> = track::Entity::find()
        .filter(track::Column::EventId.eq(ev.id))
        .all(txn)
        .await?
        .into_iter()
        .map(|t| (t.external_id, t.id))
        .collect();
    for t in &f.tracks {
        let id = match existing.get(&t.external_id) {
            Some(id) => *id,
            None => {
                n.tracks += 1;
                track::ActiveModel {
                    public_id: Set(public_id("trk")),
                    event_id: Set(ev.id),
                    external_id: Set(t.external_id.clone()),
                    name: Set(t.name.clone()),
                    ..Default::default()
                }
                .insert(txn)
                .await?
                .id
            }
        };
        track_ids.insert(t.external_id.as_str(), id);
    }

    let mut user_ids = HashMap::new();
    for p in &f.people {
        let email = p.email.trim().to_lowercase();
        let id = match super::user_by_email(txn, &email).await? {
            Some(u) => u.id,
            None => {
                n.people += 1;
                user::ActiveModel {
                    public_id: Set(public_id("usr")),
                    email: Set(email),
                    display_name: Set(p.display_name.clone()),
                    password_hash: Set(None),
                    is_site_admin: Set(false),
                    created_at: Set(t0),
                    ..Default::default()
                }
                .insert(txn)
                .await?
                .id
            }
        };
        user_ids.insert(p.external_id.as_str(), id);
    }

    let memberships = membership::Entity::find()
        .filter(membership::Column::EventId.eq(ev.id))
        .all(txn)
        .await?;
    let has_role = |uid: i64, role: Role| {
        memberships
            .iter()
            .any(|m| m.user_id == uid && m.role == role.as_str())
    };
    let members_now = team_member::Entity::find()
        .filter(team_member::Column::EventId.eq(ev.id))
        .all(txn)
        .await?;
    for o in &f.organizers {
        let uid = user_ids[o.as_str()];
        if !has_role(uid, Role::Organizer) {
            n.memberships += 1;
            insert_membership(txn, uid, ev.id, Role::Organizer, None, "[]").await?;
        }
    }
    for j in &f.judges {
        let uid = user_ids[j.person.as_str()];
        if members_now.iter().any(|m| m.user_id == uid) {
            return Err(row_err(
                format!("judge {}", j.external_id),
                "this person is on a team in this event",
            ));
        }
        if !has_role(uid, Role::Judge) {
            n.memberships += 1;
            let tracks: Vec<i64> = j.tracks.iter().map(|t| track_ids[t.as_str()]).collect();
            let tracks = serde_json::to_string(&tracks).unwrap_or_else(|_| "[]".into());
            insert_membership(
                txn,
                uid,
                ev.id,
                Role::Judge,
                Some(j.external_id.clone()),
                &tracks,
            )
            .await?;
        }
    }

    let existing_teams: HashMap<String, i64> = team::Entity::find()
        .filter(team::Column::EventId.eq(ev.id))
        .all(txn)
        .await?
        .into_iter()
        .map(|t| (t.external_id, t.id))
        .collect();
    let judge_users: HashSet<i64> = memberships
        .iter()
        .filter(|m| m.role == "judge")
        .map(|m| m.user_id)
        .chain(f.judges.iter().map(|j| user_ids[j.person.as_str()]))
        .collect();
    let mut team_ids = HashMap::new();
    for t in &f.teams {
        let r = format!("team {}", t.external_id);
        let id = match existing_teams.get(&t.external_id) {
            Some(id) => *id,
            None => {
                n.teams += 1;
                team::ActiveModel {
                    public_id: Set(public_id("team")),
                    event_id: Set(ev.id),
                    external_id: Set(t.external_id.clone()),
                    name: Set(t.name.clone()),
                    invite_code: Set(random_string(12)),
                    created_at: Set(t0),
                    ..Default::default()
                }
                .insert(txn)
                .await?
                .id
            }
        };
        team_ids.insert(t.external_id.as_str(), id);
        for m in &t.members {
            let uid = user_ids[m.as_str()];
            if judge_users.contains(&uid) {
                return Err(row_err(
                    &r,
                    format!("{m} judges this event and cannot be on a team"),
                ));
            }
            match members_now.iter().find(|tm| tm.user_id == uid) {
                Some(tm) if tm.team_id == id => continue,
                Some(_) => {
                    return Err(row_err(
                        &r,
                        format!("{m} is already on another team in this event"),
                    ));
                }
                None => {}
            }
            if !has_role(uid, Role::Participant) {
                n.memberships += 1;
                insert_membership(txn, uid, ev.id, Role::Participant, None, "[]").await?;
            }
            n.team_members += 1;
            team_member::ActiveModel {
                event_id: Set(ev.id),
                team_id: Set(id),
                user_id: Set(uid),
                created_at: Set(t0),
                ..Default::default()
            }
            .insert(txn)
            .await?;
        }
    }

    let existing_projects: HashSet<String> = project::Entity::find()
        .filter(project::Column::EventId.eq(ev.id))
        .all(txn)
        .await?
        .into_iter()
        .map(|p| p.external_id)
        .collect();
    for p in &f.projects {
        if existing_projects.contains(&p.external_id) {
            continue;
        }
        n.projects += 1;
        let tags = validate::tags("tags", &p.tags)?;
        project::ActiveModel {
            public_id: Set(public_id("prj")),
            event_id: Set(ev.id),
            team_id: Set(team_ids[p.team.as_str()]),
            track_id: Set(track_ids[p.track.as_str()]),
            external_id: Set(p.external_id.clone()),
            title: Set(p.title.trim().to_owned()),
            tagline: Set(p.tagline.clone()),
            summary: Set(p.summary.clone()),
            description: Set(p.description.clone()),
            repo_url: Set(validate::url("repo_url", &p.repo_url)?),
            demo_url: Set(validate::url("demo_url", &p.demo_url)?),
            tags: Set(serde_json::to_string(&tags).unwrap_or_else(|_| "[]".into())),
            status: Set(p.status.clone()),
            submitted_at: Set(p.submitted_at),
            duplicate_of: Set(None),
            created_at: Set(t0),
            updated_at: Set(t0),
            ..Default::default()
        }
        .insert(txn)
        .await?;
    }

    import_judging(txn, &ev, f, &mut n).await?;

    audit::append(
        txn,
        Entry::new("event.imported", "event", &ev.public_id)
            .by(actor)
            .in_event(&ev.external_id)
            .with(json!({ "inserted": n })),
    )
    .await?;
    Ok((ev, n))
}

/// The rubric and the reviews: each review becomes a done assignment and a submitted
/// review (version 1) with its revision. Existing (judge, project) pairs are left alone.
async fn import_judging<C: ConnectionTrait>(
    txn: &C,
    ev: &event::Model,
    f: &Fixture,
    n: &mut ImportCounts,
) -> AppResult<()> {
    let rubric = super::judging::rubric(txn, ev.id).await?;
    for c in &f.criteria {
        if rubric.iter().any(|r| r.key == c.key) {
            continue;
        }
        n.criteria += 1;
        criterion::ActiveModel {
            public_id: Set(public_id("crit")),
            event_id: Set(ev.id),
            key: Set(c.key.clone()),
            name: Set(c.name.clone()),
            weight: Set(c.weight),
            min_score: Set(c.min),
            max_score: Set(c.max),
            position: Set(c.position),
            ..Default::default()
        }
        .insert(txn)
        .await?;
    }
    if f.reviews.is_empty() {
        return Ok(());
    }
    let judges: HashMap<String, membership::Model> = membership::Entity::find()
        .filter(membership::Column::EventId.eq(ev.id))
        .filter(membership::Column::Role.eq(Role::Judge.as_str()))
        .all(txn)
        .await?
        .into_iter()
        .filter_map(|m| m.external_id.clone().map(|x| (x, m)))
        .collect();
    let projects: HashMap<String, project::Model> = project::Entity::find()
        .filter(project::Column::EventId.eq(ev.id))
        .all(txn)
        .await?
        .into_iter()
        .map(|p| (p.external_id.clone(), p))
        .collect();
    let existing: HashSet<(i64, i64)> = assignment::Entity::find()
        .filter(assignment::Column::EventId.eq(ev.id))
        .all(txn)
        .await?
        .into_iter()
        .map(|a| (a.judge_id, a.project_id))
        .collect();
    let t0 = now();
    for (i, rv) in f.reviews.iter().enumerate() {
        let row = format!("review #{} ({} on {})", i + 1, rv.judge, rv.project);
        let judge = judges
            .get(&rv.judge)
            .ok_or_else(|| row_err(&row, "unknown judge"))?;
        let p = projects
            .get(&rv.project)
            .ok_or_else(|| row_err(&row, "unknown project"))?;
        if existing.contains(&(judge.id, p.id)) {
            continue;
        }
        let a = super::judging::insert_assignment(txn, judge, p, "import", "done").await?;
        let scores: std::collections::BTreeMap<&String, &i64> = rv.scores.iter().collect();
        let at = rv.submitted_at.unwrap_or(t0);
        let r = review::ActiveModel {
            public_id: Set(public_id("rev")),
            event_id: Set(ev.id),
            assignment_id: Set(a.id),
            judge_id: Set(judge.id),
            project_id: Set(p.id),
            scores: Set(serde_json::to_string(&scores).unwrap_or_else(|_| "{}".into())),
            comment: Set(rv.comment.clone()),
            submitted: Set(true),
            submitted_at: Set(Some(at)),
            version: Set(1),
            created_at: Set(at),
            updated_at: Set(at),
            ..Default::default()
        }
        .insert(txn)
        .await?;
        super::judging::insert_revision(txn, &r).await?;
        n.assignments += 1;
        n.reviews += 1;
    }
    Ok(())
}
