//! Importing an event fixture (`verdict.event.v1`): one transaction, idempotent by external
//! id, audited once. A bad row refuses the whole file with a message naming the row.
//!
//! Import is the one audited bypass of the submission deadline: projects arrive with their
//! given status. Rows that already exist are never overwritten, so a second import of the
//! same file inserts nothing and keeps whatever people changed since.
//!
//! Each review becomes an assignment (source `import`, status `done`) plus a submitted
//! review with its first revision.
//!
//! - `format.rs`: the file's serde types and [`parse`];
//! - `check.rs`: the rules a file must satisfy before anything is written;
//! - here: [`import`], the transaction, with the checks that need the database (a person
//!   already on a team or judging in this event).

use std::collections::{HashMap, HashSet};

use entity::assignment::{AssignmentSource, AssignmentStatus};
use entity::{
    assignment, criterion, event, membership, project, review, team, team_member, track, user,
};
use sea_orm::{
    ActiveModelTrait, ActiveValue::Set, ColumnTrait, ConnectionTrait, EntityTrait, QueryFilter,
};
use serde_json::json;

use super::{
    Role, Write, events::insert_membership, judges, judging, teams::insert_member, validate,
};
use crate::audit::Entry;
use crate::crypto::{public_id, random_string};
use crate::error::AppResult;
use check::row_err;

mod check;
mod format;

pub use format::{
    FORMAT, Fixture, FxCriterion, FxEvent, FxJudge, FxPerson, FxProject, FxReview, FxTeam, FxTrack,
    parse,
};

/// What an import inserted, by kind. Existing rows count zero. A review's first revision is
/// part of the review and is not counted apart; neither is the import's audit entry.
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
    /// Every row counted above, of every kind.
    pub fn total(&self) -> i32 {
        self.events
            + self.tracks
            + self.people
            + self.memberships
            + self.teams
            + self.team_members
            + self.projects
            + self.criteria
            + self.assignments
            + self.reviews
    }
}

/// Checks a fixture built in code (not parsed from JSON) against the rules [`parse`] holds
/// a file to.
pub fn check(f: &Fixture) -> AppResult<()> {
    check::check(f)
}

/// Writes the fixture in the write `w` and appends its one `event.imported` audit entry,
/// by the write's actor (none from the command line). Every row is stamped with the
/// write's now.
pub async fn import(w: &Write, f: &Fixture) -> AppResult<(event::Model, ImportCounts)> {
    let (txn, t0) = (w.txn(), w.now());
    let actor = w.caller().map_or("", |a| a.public_id());
    let mut n = ImportCounts::default();
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
                name: Set(fe.name.trim().to_owned()),
                submissions_open: Set(fe.submissions_open),
                submissions_close: Set(fe.submissions_close),
                judging_open: Set(fe.judging_open),
                judging_close: Set(fe.judging_close),
                voting_open: Set(fe.voting_open),
                voting_close: Set(fe.voting_close),
                reviews_per_project: Set(fe.reviews_per_project),
                max_team_size: Set(fe.max_team_size),
                registration: Set(event::Registration::InviteOnly),
                time_zone: Set(fe
                    .time_zone
                    .as_deref()
                    .map_or_else(|| "UTC".to_owned(), |z| z.trim().to_owned())),
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
                    name: Set(t.name.trim().to_owned()),
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
                    display_name: Set(p.display_name.trim().to_owned()),
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
            .any(|m| m.user_id == uid && m.role == role)
    };
    let members_now = team_member::Entity::find()
        .filter(team_member::Column::EventId.eq(ev.id))
        .all(txn)
        .await?;
    for o in &f.organizers {
        let uid = user_ids[o.as_str()];
        if !has_role(uid, Role::Organizer) {
            n.memberships += 1;
            insert_membership(txn, uid, ev.id, Role::Organizer, None, "[]", t0).await?;
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
        // A judge's external id names one person in an event: the database holds it
        // unique, and a re-import must not hand another person's row to this one.
        if memberships.iter().any(|m| {
            m.role == Role::Judge
                && m.user_id != uid
                && m.external_id.as_deref() == Some(j.external_id.as_str())
        }) {
            return Err(row_err(
                format!("judge {}", j.external_id),
                "this external id is another person's judge row in this event",
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
                t0,
            )
            .await?;
        }
    }

    let existing_teams: HashMap<String, team::Model> = team::Entity::find()
        .filter(team::Column::EventId.eq(ev.id))
        .all(txn)
        .await?
        .into_iter()
        .map(|t| (t.external_id.clone(), t))
        .collect();
    let judge_users: HashSet<i64> = memberships
        .iter()
        .filter(|m| m.role == Role::Judge)
        .map(|m| m.user_id)
        .chain(f.judges.iter().map(|j| user_ids[j.person.as_str()]))
        .collect();
    let mut team_ids = HashMap::new();
    for t in &f.teams {
        let r = format!("team {}", t.external_id);
        let team = match existing_teams.get(&t.external_id) {
            Some(team) => team.clone(),
            None => {
                n.teams += 1;
                team::ActiveModel {
                    public_id: Set(public_id("team")),
                    event_id: Set(ev.id),
                    external_id: Set(t.external_id.clone()),
                    name: Set(t.name.trim().to_owned()),
                    invite_code: Set(random_string(12)),
                    invite_code_expires_at: Set(Some(crate::domain::teams::code_expiry(&ev, t0))),
                    created_at: Set(t0),
                    ..Default::default()
                }
                .insert(txn)
                .await?
            }
        };
        team_ids.insert(t.external_id.as_str(), team.id);
        for m in &t.members {
            let uid = user_ids[m.as_str()];
            if judge_users.contains(&uid) {
                return Err(row_err(
                    &r,
                    format!("{m} judges this event and cannot be on a team"),
                ));
            }
            match members_now.iter().find(|tm| tm.user_id == uid) {
                Some(tm) if tm.team_id == team.id => continue,
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
                insert_membership(txn, uid, ev.id, Role::Participant, None, "[]", t0).await?;
            }
            n.team_members += 1;
            insert_member(txn, &team, uid, t0).await?;
        }
    }

    let in_event = project::Entity::find()
        .filter(project::Column::EventId.eq(ev.id))
        .all(txn)
        .await?;
    // Tables are unique in an event: the ones taken, lower-cased, with their project.
    let taken: HashMap<String, String> = in_event
        .iter()
        .filter_map(|p| Some((p.expo_table.as_deref()?.to_lowercase(), p.title.clone())))
        .collect();
    let existing_projects: HashSet<String> = in_event.into_iter().map(|p| p.external_id).collect();
    for p in &f.projects {
        if existing_projects.contains(&p.external_id) {
            continue;
        }
        n.projects += 1;
        let tags = validate::tags("tags", &p.tags)?;
        let table = super::tables::parse("table", p.table.as_deref().unwrap_or(""))?;
        if let Some(t) = &table
            && let Some(other) = taken.get(&t.to_lowercase())
        {
            return Err(row_err(
                format!("project {}", p.external_id),
                format!("table {t:?} is already taken by the project {other:?}"),
            ));
        }
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
            status: Set(check::status_of(p)?),
            submitted_at: Set(p.submitted_at),
            duplicate_of: Set(None),
            expo_table: Set(table),
            created_at: Set(t0),
            updated_at: Set(t0),
            ..Default::default()
        }
        .insert(txn)
        .await?;
    }

    import_judging(txn, &ev, f, &mut n, t0).await?;

    w.append(
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
    t0: chrono::DateTime<chrono::Utc>,
) -> AppResult<()> {
    let rubric = judges::rubric(txn, ev.id).await?;
    for c in &f.criteria {
        if rubric.iter().any(|r| r.key == c.key) {
            continue;
        }
        n.criteria += 1;
        criterion::ActiveModel {
            public_id: Set(public_id("crit")),
            event_id: Set(ev.id),
            key: Set(c.key.clone()),
            name: Set(c.name.trim().to_owned()),
            weight: Set(c.weight),
            min_score: Set(c.min),
            max_score: Set(c.max),
            position: Set(c.position),
            description: Set(c.description.trim().to_owned()),
            ..Default::default()
        }
        .insert(txn)
        .await?;
    }
    if f.reviews.is_empty() {
        return Ok(());
    }
    let judges: HashMap<String, membership::Model> = judges::judges_of_event(txn, ev.id)
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
        let a = judging::insert_assignment(
            txn,
            judge,
            p,
            AssignmentSource::Import,
            AssignmentStatus::Done,
            t0,
        )
        .await?;
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
        judging::insert_revision(txn, &r).await?;
        n.assignments += 1;
        n.reviews += 1;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::ImportCounts;

    #[test]
    fn the_readme_example_is_a_valid_fixture() {
        let text = include_str!("../../../../examples/tiny-event.json");
        let value = serde_json::from_str(text).expect("examples/tiny-event.json is JSON");
        super::parse(value).expect("examples/tiny-event.json passes the import checks");
    }

    #[test]
    fn total_counts_every_kind() {
        // A distinct bit per kind: a kind left out of the total shows as a missing bit.
        let c = ImportCounts {
            events: 1,
            tracks: 2,
            people: 4,
            memberships: 8,
            teams: 16,
            team_members: 32,
            projects: 64,
            criteria: 128,
            assignments: 256,
            reviews: 512,
        };
        let by_kind: i64 = serde_json::to_value(&c)
            .expect("counts serialize")
            .as_object()
            .expect("an object")
            .values()
            .filter_map(|v| v.as_i64())
            .sum();
        assert_eq!(by_kind, 1023);
        assert_eq!(i64::from(c.total()), by_kind);
    }
}
