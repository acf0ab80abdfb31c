//! "My events": the events a person holds a role in, each with what they have to do next,
//! read in a constant number of statements however many events there are.

use std::collections::HashMap;

use chrono::{DateTime, Utc};
use entity::assignment::AssignmentStatus;
use entity::project::ProjectStatus;
use entity::{assignment, event, membership, project, team_member};
use sea_orm::{ColumnTrait, ConnectionTrait, EntityTrait, QueryFilter, QueryOrder};

use super::Role;
use super::checklist::{self, StepKey};
use crate::error::AppResult;

/// One of a person's events and their next thing to do in it.
#[derive(Clone, Debug)]
pub struct MyEvent {
    pub event: event::Model,
    pub roles: Vec<Role>,
    /// A judge's assignments still to score (pending).
    pub to_score: Option<i64>,
    /// A participant's team: its draft and submitted projects; `None` when not on a team.
    pub drafts: Option<i64>,
    pub submitted: Option<i64>,
    /// An organizer's next setup step; `None` once every step is done (or not an organizer).
    pub setup_step: Option<StepKey>,
}

/// The events `user_id` holds a role in (deleted ones left out), in the order they joined.
pub async fn my_events<C: ConnectionTrait>(
    db: &C,
    user_id: i64,
    now: DateTime<Utc>,
) -> AppResult<Vec<MyEvent>> {
    let rows = membership::Entity::find()
        .filter(membership::Column::UserId.eq(user_id))
        .filter(membership::Column::EventId.not_in_subquery(super::archived_events()))
        .order_by_asc(membership::Column::Id)
        .all(db)
        .await?;
    let mut order: Vec<i64> = vec![];
    let mut roles: HashMap<i64, Vec<Role>> = HashMap::new();
    for m in &rows {
        if !roles.contains_key(&m.event_id) {
            order.push(m.event_id);
        }
        let r = roles.entry(m.event_id).or_default();
        if !r.contains(&m.role) {
            r.push(m.role);
        }
    }
    let events: HashMap<i64, event::Model> = event::Entity::find()
        .filter(event::Column::Id.is_in(order.iter().copied()))
        .all(db)
        .await?
        .into_iter()
        .map(|e| (e.id, e))
        .collect();

    // A judge's queue: pending assignments of their judge memberships.
    let judge_ids: Vec<i64> = rows
        .iter()
        .filter(|m| m.role == Role::Judge)
        .map(|m| m.id)
        .collect();
    let mut to_score: HashMap<i64, i64> = HashMap::new();
    if !judge_ids.is_empty() {
        for a in assignment::Entity::find()
            .filter(assignment::Column::JudgeId.is_in(judge_ids))
            .filter(assignment::Column::Status.eq(AssignmentStatus::Pending))
            .all(db)
            .await?
        {
            *to_score.entry(a.event_id).or_default() += 1;
        }
    }

    // A participant's team and its projects.
    let teams: HashMap<i64, i64> = team_member::Entity::find()
        .filter(team_member::Column::UserId.eq(user_id))
        .all(db)
        .await?
        .into_iter()
        .map(|t| (t.event_id, t.team_id))
        .collect();
    let mut projects: HashMap<i64, (i64, i64)> = HashMap::new();
    if !teams.is_empty() {
        for p in project::Entity::find()
            .filter(project::Column::TeamId.is_in(teams.values().copied()))
            .all(db)
            .await?
        {
            let e = projects.entry(p.event_id).or_default();
            match p.status {
                ProjectStatus::Draft => e.0 += 1,
                ProjectStatus::Submitted => e.1 += 1,
                ProjectStatus::Withdrawn => {}
            }
        }
    }

    let organized: Vec<event::Model> = order
        .iter()
        .filter(|id| roles.get(id).is_some_and(|r| r.contains(&Role::Organizer)))
        .filter_map(|id| events.get(id).cloned())
        .collect();
    let lists = checklist::checklists(db, &organized, now).await?;

    Ok(order
        .into_iter()
        .filter_map(|id| {
            let event = events.get(&id)?.clone();
            let roles = roles.remove(&id).unwrap_or_default();
            let judge = roles.contains(&Role::Judge);
            let on_team = teams.contains_key(&id);
            let (drafts, submitted) = projects.get(&id).copied().unwrap_or_default();
            Some(MyEvent {
                to_score: judge.then(|| to_score.get(&id).copied().unwrap_or(0)),
                drafts: on_team.then_some(drafts),
                submitted: on_team.then_some(submitted),
                setup_step: lists.get(&id).and_then(|s| checklist::current(s)),
                event,
                roles,
            })
        })
        .collect())
}
