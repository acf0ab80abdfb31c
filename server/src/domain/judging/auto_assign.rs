//! `autoAssign`: the event as the planner sees it, and the plan written as assignments.

use entity::assignment::{AssignmentSource, AssignmentStatus};
use entity::{assignment, event, membership, project, recusal, team_member};
use sea_orm::{ColumnTrait, ConnectionTrait, EntityTrait, QueryFilter};
use serde_json::json;

use super::{ineligible, insert_assignment};
use crate::audit::Entry;
use crate::domain::judges::judge_key;
use crate::domain::{Organizer, Write, json_ids};
use crate::error::{AppError, AppResult};

/// What the planner sees of an event: its submitted, non-duplicate projects with the
/// judges already assigned (recused assignments do not count), and its judges with their
/// tracks, teams, recusals and loads. The rows behind the planner's ids come along, so
/// that a plan can be written without reading them again.
struct PlannerInput {
    projects: Vec<crate::planner::PlanProject>,
    judges: Vec<crate::planner::PlanJudge>,
    /// The event's judge memberships; a judge's planner id is its `judge_key`.
    judge_rows: Vec<membership::Model>,
    /// The planned projects; a project's planner id is its external id.
    project_rows: Vec<project::Model>,
}

/// Reads [`PlannerInput`] for `auto_assign`, inside its transaction.
async fn planner_input<C: ConnectionTrait>(txn: &C, e: &event::Model) -> AppResult<PlannerInput> {
    use crate::planner::{PlanJudge, PlanProject};
    let judges = membership::Entity::find_judges(e.id).all(txn).await?;
    let projects: Vec<project::Model> = project::Entity::find_public(e.id)
        .filter(project::Column::DuplicateOf.is_null())
        .all(txn)
        .await?;
    let assignments = assignment::Entity::find()
        .filter(assignment::Column::EventId.eq(e.id))
        .all(txn)
        .await?;
    let recusals = recusal::Entity::find()
        .filter(recusal::Column::EventId.eq(e.id))
        .all(txn)
        .await?;
    let members = team_member::Entity::find()
        .filter(team_member::Column::EventId.eq(e.id))
        .all(txn)
        .await?;
    let key_of: std::collections::HashMap<i64, String> =
        judges.iter().map(|j| (j.id, judge_key(j))).collect();
    let plan_projects: Vec<PlanProject> = projects
        .iter()
        .map(|p| PlanProject {
            id: p.external_id.clone(),
            track: p.track_id.to_string(),
            team: p.team_id.to_string(),
            existing: assignments
                .iter()
                .filter(|a| a.project_id == p.id && a.status != AssignmentStatus::Recused)
                .filter_map(|a| key_of.get(&a.judge_id).cloned())
                .collect(),
        })
        .collect();
    let plan_judges: Vec<PlanJudge> = judges
        .iter()
        .map(|j| PlanJudge {
            id: judge_key(j),
            tracks: json_ids(&j.judge_tracks)
                .iter()
                .map(|t| t.to_string())
                .collect(),
            team_ids: members
                .iter()
                .filter(|m| m.user_id == j.user_id)
                .map(|m| m.team_id.to_string())
                .collect(),
            recused_teams: recusals
                .iter()
                .filter(|r| r.judge_id == j.id)
                .map(|r| r.team_id.to_string())
                .collect(),
            load: assignments
                .iter()
                .filter(|a| a.judge_id == j.id && a.status != AssignmentStatus::Recused)
                .count(),
        })
        .collect();
    Ok(PlannerInput {
        projects: plan_projects,
        judges: plan_judges,
        judge_rows: judges,
        project_rows: projects,
    })
}

/// Plans (and with `apply`, writes) assignments bringing every submitted project to `k`
/// reviews; see [`crate::planner`]. Applying writes the new edges in this transaction with
/// one audit entry listing them; re-applying adds nothing.
pub async fn auto_assign(
    w: &Write,
    org: Organizer<'_>,
    k: i32,
    max_load: Option<i32>,
    seed: i64,
    apply: bool,
) -> AppResult<(crate::planner::Plan, usize)> {
    let (txn, actor, e) = (w.txn(), org.actor(), org.event());
    if !(1..=50).contains(&k) {
        return Err(AppError::bad_input("k", "must be between 1 and 50"));
    }
    if max_load.is_some_and(|m| m < 1) {
        return Err(AppError::bad_input("maxLoad", "must be at least 1"));
    }
    if seed < 0 {
        return Err(AppError::bad_input("seed", "must not be negative"));
    }
    let PlannerInput {
        projects: plan_projects,
        judges: plan_judges,
        judge_rows: judges,
        project_rows: projects,
    } = planner_input(txn, e).await?;
    let p = crate::planner::plan(
        &plan_projects,
        &plan_judges,
        k as usize,
        max_load.map(|m| m as usize),
        seed as u64,
    );
    if !apply {
        return Ok((p, 0));
    }
    let by_key: std::collections::HashMap<String, &membership::Model> =
        judges.iter().map(|j| (judge_key(j), j)).collect();
    let by_ext: std::collections::HashMap<&str, &project::Model> = projects
        .iter()
        .map(|p| (p.external_id.as_str(), p))
        .collect();
    let mut written = vec![];
    for (judge, project) in &p.edges {
        let (Some(j), Some(pr)) = (by_key.get(judge), by_ext.get(project.as_str())) else {
            continue;
        };
        // The planner honours every rule; the same rules are checked again before writing.
        if let Some(why) = ineligible(txn, j, pr).await? {
            return Err(AppError::Internal(format!(
                "planner proposed an ineligible pair ({judge}, {project}): {why}"
            )));
        }
        insert_assignment(
            txn,
            j,
            pr,
            AssignmentSource::Auto,
            AssignmentStatus::Pending,
            w.now(),
        )
        .await?;
        written.push(json!([judge, project]));
    }
    let n = written.len();
    w.append(
        Entry::new("assignments.planned", "event", &e.public_id)
            .by(actor.public_id())
            .in_event(&e.external_id)
            .with(json!({ "k": k, "max_load": max_load, "seed": seed, "edges": written, "components": p.components })),
    )
    .await?;
    Ok((p, n))
}
