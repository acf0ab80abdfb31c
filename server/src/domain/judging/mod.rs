//! Judging: the rubric, assignments, recusals and private reviews.
//!
//! A judge reads and writes only their own reviews, inside the judging window; every save
//! appends an immutable revision, so every earlier score survives.
//!
//! Only a submitted project is reviewable. When its team withdraws a project after judges
//! were assigned to it, the assignments stay (nothing is deleted) but stand aside as
//! [`Standing::Withdrawn`]: out of the judges' queues and progress, refused by
//! [`save_review`], not counted as pending; submitting the project again brings them back
//! as they were.

mod auto_assign;
pub mod pairwise;
pub mod route;
mod rubric;

pub use auto_assign::auto_assign;
pub(crate) use rubric::check_criterion;
pub use rubric::{CRITERION_DESCRIPTION_MAX, CriterionFields, remove_criterion, set_criterion};

use std::collections::{BTreeMap, HashMap};

use chrono::{DateTime, Utc};
use entity::assignment::{AssignmentSource, AssignmentStatus};
use entity::project::ProjectStatus;
use entity::{
    assignment, criterion, event, membership, project, recusal, review, review_revision,
    team_member,
};
use sea_orm::{
    ActiveEnum, ActiveModelTrait, ActiveValue::Set, ColumnTrait, ConnectionTrait, EntityTrait,
    IntoActiveModel, PaginatorTrait, QueryFilter, QuerySelect, QueryTrait,
};
use serde_json::json;

use super::judges::{find_judge, judge_of_user, rubric};
use super::{Organizer, Role, Write, json_ids, validate};
use crate::audit::Entry;
use crate::crypto::public_id;
use crate::error::{AppError, AppResult};

pub const COMMENT_MAX: usize = 4_000;

/// Why `judge` may not review `p`, if anything stands in the way.
pub async fn ineligible<C: ConnectionTrait>(
    db: &C,
    judge: &membership::Model,
    p: &project::Model,
) -> AppResult<Option<&'static str>> {
    if p.status != ProjectStatus::Submitted {
        return Ok(Some("only submitted projects are assigned"));
    }
    if judge.role != Role::Judge || judge.event_id != p.event_id {
        return Ok(Some("this person does not judge this event"));
    }
    let tracks = json_ids(&judge.judge_tracks);
    if !tracks.is_empty() && !tracks.contains(&p.track_id) {
        return Ok(Some("this judge does not cover the project's track"));
    }
    let on_team = team_member::Entity::find()
        .filter(team_member::Column::TeamId.eq(p.team_id))
        .filter(team_member::Column::UserId.eq(judge.user_id))
        .count(db)
        .await?
        > 0;
    if on_team {
        return Ok(Some("a judge cannot review their own team's project"));
    }
    let recused = recusal::Entity::find()
        .filter(recusal::Column::JudgeId.eq(judge.id))
        .filter(recusal::Column::TeamId.eq(p.team_id))
        .count(db)
        .await?
        > 0;
    if recused {
        return Ok(Some("this judge is recused from the project's team"));
    }
    Ok(None)
}

pub async fn insert_assignment<C: ConnectionTrait>(
    txn: &C,
    judge: &membership::Model,
    p: &project::Model,
    source: AssignmentSource,
    status: AssignmentStatus,
    at: DateTime<Utc>,
) -> AppResult<assignment::Model> {
    Ok(assignment::ActiveModel {
        public_id: Set(public_id("asg")),
        event_id: Set(p.event_id),
        judge_id: Set(judge.id),
        project_id: Set(p.id),
        status: Set(status),
        source: Set(source),
        created_at: Set(at),
        ..Default::default()
    }
    .insert(txn)
    .await?)
}

/// An organizer assigns one judge to one project.
pub async fn assign(
    w: &Write,
    org: Organizer<'_>,
    judge: &str,
    project_id: &str,
) -> AppResult<assignment::Model> {
    let (txn, actor, e) = (w.txn(), org.actor(), org.event());
    let j = find_judge(txn, e.id, judge).await?;
    let p = super::find_project(txn, project_id, Some(e.id))
        .await?
        .filter(|p| p.event_id == e.id)
        .ok_or_else(|| AppError::bad_input("project", "no such project in this event"))?;
    if let Some(why) = ineligible(txn, &j, &p).await? {
        return Err(AppError::conflict(why));
    }
    let exists = assignment::Entity::find()
        .filter(assignment::Column::JudgeId.eq(j.id))
        .filter(assignment::Column::ProjectId.eq(p.id))
        .count(txn)
        .await?
        > 0;
    if exists {
        return Err(AppError::conflict(
            "this judge is already assigned to this project",
        ));
    }
    let a = insert_assignment(
        txn,
        &j,
        &p,
        AssignmentSource::Manual,
        AssignmentStatus::Pending,
        w.now(),
    )
    .await?;
    w.append(
        Entry::new("assignment.created", "assignment", &a.public_id)
            .by(actor.public_id())
            .in_event(&e.external_id)
            .with(json!({ "judge": j.public_id, "project": p.public_id, "source": a.source.to_value() })),
    )
    .await?;
    Ok(a)
}

/// Removes an assignment that has not been scored; returns its event's id.
pub async fn unassign(w: &Write, assignment_id: &str) -> AppResult<i64> {
    let (txn, actor) = (w.txn(), w.actor()?);
    let a = assignment::Entity::find()
        .filter(assignment::Column::PublicId.eq(assignment_id))
        .one(txn)
        .await?
        .ok_or(AppError::NotFound("assignment"))?;
    let e = w.event_by_id(a.event_id).await?;
    if w.organizer(&e).await.is_err() {
        return Err(AppError::NotFound("assignment"));
    }
    let scored = review::Entity::find()
        .filter(review::Column::AssignmentId.eq(a.id))
        .count(txn)
        .await?
        > 0;
    if scored {
        return Err(AppError::conflict("a scored assignment cannot be removed"));
    }
    assignment::Entity::delete_by_id(a.id).exec(txn).await?;
    w.append(
        Entry::new("assignment.removed", "assignment", &a.public_id)
            .by(actor.public_id())
            .in_event(&e.external_id),
    )
    .await?;
    Ok(e.id)
}

/// Declares a conflict between a judge and a team (covering the team's future projects
/// too). The judge's assignments to the team's projects become `recused`, and their reviews
/// stop counting.
pub async fn recuse(
    w: &Write,
    org: Organizer<'_>,
    judge: &str,
    team_id: &str,
    reason: &str,
) -> AppResult<recusal::Model> {
    let (txn, actor, e) = (w.txn(), org.actor(), org.event());
    let reason = validate::text("reason", reason, 500)?;
    let j = find_judge(txn, e.id, judge).await?;
    let t = super::find_team(txn, team_id, Some(e.id))
        .await?
        .filter(|t| t.event_id == e.id)
        .ok_or_else(|| AppError::bad_input("team", "no such team in this event"))?;
    let exists = recusal::Entity::find()
        .filter(recusal::Column::JudgeId.eq(j.id))
        .filter(recusal::Column::TeamId.eq(t.id))
        .count(txn)
        .await?
        > 0;
    if exists {
        return Err(AppError::conflict(
            "this judge is already recused from this team",
        ));
    }
    let r = recusal::ActiveModel {
        public_id: Set(public_id("rec")),
        event_id: Set(e.id),
        judge_id: Set(j.id),
        team_id: Set(t.id),
        reason: Set(reason),
        created_at: Set(w.now()),
        ..Default::default()
    }
    .insert(txn)
    .await?;
    let projects: Vec<i64> = project::Entity::find()
        .filter(project::Column::TeamId.eq(t.id))
        .select_only()
        .column(project::Column::Id)
        .into_tuple()
        .all(txn)
        .await?;
    let changed = assignment::Entity::update_many()
        .col_expr(
            assignment::Column::Status,
            sea_orm::sea_query::Expr::value(AssignmentStatus::Recused),
        )
        .filter(assignment::Column::JudgeId.eq(j.id))
        .filter(assignment::Column::ProjectId.is_in(projects))
        .exec(txn)
        .await?
        .rows_affected;
    w.append(
        Entry::new("recusal.declared", "recusal", &r.public_id)
            .by(actor.public_id())
            .in_event(&e.external_id)
            .with(json!({ "judge": j.public_id, "team": t.public_id, "assignments_recused": changed })),
    )
    .await?;
    Ok(r)
}

fn require_judging_open(e: &event::Model, at: DateTime<Utc>) -> AppResult<()> {
    match (e.judging_open, e.judging_close) {
        (Some(o), Some(c)) if at >= o && at < c => Ok(()),
        (Some(o), Some(_)) if at < o => {
            Err(AppError::WindowClosed("judging has not opened yet".into()))
        }
        (Some(_), Some(_)) => Err(AppError::WindowClosed(
            "the judging window has closed".into(),
        )),
        _ => Err(AppError::WindowClosed(
            "this event has no judging window".into(),
        )),
    }
}

/// Validates scores against the rubric: known criteria, integers within range, and every
/// criterion present when the review is submitted.
pub fn check_scores(
    rubric: &[criterion::Model],
    scores: &[(String, i64)],
    complete: bool,
) -> AppResult<BTreeMap<String, i64>> {
    let mut out = BTreeMap::new();
    for (key, value) in scores {
        let c = rubric
            .iter()
            .find(|c| &c.key == key)
            .ok_or_else(|| AppError::bad_input("scores", format!("unknown criterion {key:?}")))?;
        if *value < c.min_score as i64 || *value > c.max_score as i64 {
            return Err(AppError::bad_input(
                "scores",
                format!("{key} must be between {} and {}", c.min_score, c.max_score),
            ));
        }
        if out.insert(key.clone(), *value).is_some() {
            return Err(AppError::bad_input(
                "scores",
                format!("{key} is scored twice"),
            ));
        }
    }
    if complete && let Some(c) = rubric.iter().find(|c| !out.contains_key(&c.key)) {
        return Err(AppError::bad_input(
            "scores",
            format!(
                "{} is not scored; a submitted review scores every criterion",
                c.key
            ),
        ));
    }
    Ok(out)
}

/// The judge of an assignment creates or updates its review, appending a revision.
pub async fn save_review(
    w: &Write,
    assignment_id: &str,
    scores: &[(String, i64)],
    comment: Option<&str>,
    submit: bool,
) -> AppResult<review::Model> {
    let (txn, actor) = (w.txn(), w.actor()?);
    let find = || assignment::Entity::find().filter(assignment::Column::PublicId.eq(assignment_id));
    let event_id = find()
        .select_only()
        .column(assignment::Column::EventId)
        .into_tuple::<i64>()
        .one(txn)
        .await?
        .ok_or(AppError::NotFound("assignment"))?;
    // Locked against change, shared with the other judges' saves (see `Write`'s module
    // doc): the judging window is checked against the event as it stands until commit.
    let e = w.event_by_id_shared(event_id).await?;
    // Then the assignment, read after the event's lock (a recusal or removal that committed
    // meanwhile is seen) and locked: two saves of one review take turns, and neither loses
    // the scores the other merged.
    let a = find()
        .lock_exclusive()
        .one(txn)
        .await?
        .ok_or(AppError::NotFound("assignment"))?;
    let judge = membership::Entity::find_by_id(a.judge_id)
        .one(txn)
        .await?
        .ok_or(AppError::NotFound("assignment"))?;
    if judge.user_id != actor.user.id {
        // Organizers can see the assignment but may not score it; anyone else cannot see it.
        return match w.organizer(&e).await {
            Ok(_) => Err(AppError::forbidden(
                "only the assigned judge may write this review",
            )),
            Err(_) => Err(AppError::NotFound("assignment")),
        };
    }
    let t = w.now();
    require_judging_open(&e, t)?;
    if a.status == AssignmentStatus::Recused {
        return Err(AppError::conflict("this assignment is recused"));
    }
    // Locked against a concurrent withdrawal (PostgreSQL; SQLite's write transaction
    // already excludes it) so that no review of a withdrawn project is ever written.
    let p = project::Entity::find_by_id(a.project_id)
        .lock_shared()
        .one(txn)
        .await?
        .ok_or(AppError::NotFound("assignment"))?;
    if !p.is_public() {
        return Err(AppError::conflict(
            "this project was withdrawn by its team: it cannot be reviewed unless it is submitted again",
        ));
    }
    let comment = comment
        .map(|c| validate::text("comment", c, COMMENT_MAX))
        .transpose()?;
    let existing = review::Entity::find()
        .filter(review::Column::AssignmentId.eq(a.id))
        .one(txn)
        .await?;
    let submit = submit || existing.as_ref().is_some_and(|r| r.submitted);
    let rubric = rubric(txn, e.id).await?;
    // Scores given now replace those of the same criteria; the rest carry over.
    let mut merged: Vec<(String, i64)> = existing
        .as_ref()
        .map(|r| serde_json::from_str::<BTreeMap<String, i64>>(&r.scores).unwrap_or_default())
        .unwrap_or_default()
        .into_iter()
        .filter(|(k, _)| !scores.iter().any(|(s, _)| s == k))
        .collect();
    merged.extend(scores.iter().cloned());
    let checked = check_scores(&rubric, &merged, submit)?;
    let scores_json = serde_json::to_string(&checked).unwrap_or_else(|_| "{}".into());
    let r = match existing {
        Some(r) => {
            let version = r.version + 1;
            let was_submitted = r.submitted;
            let mut am = r.into_active_model();
            am.scores = Set(scores_json.clone());
            if let Some(c) = &comment {
                am.comment = Set(c.clone());
            }
            am.submitted = Set(submit);
            if submit && !was_submitted {
                am.submitted_at = Set(Some(t));
            }
            am.version = Set(version);
            am.updated_at = Set(t);
            am.update(txn).await?
        }
        None => {
            review::ActiveModel {
                public_id: Set(public_id("rev")),
                event_id: Set(e.id),
                assignment_id: Set(a.id),
                judge_id: Set(judge.id),
                project_id: Set(a.project_id),
                scores: Set(scores_json.clone()),
                comment: Set(comment.clone().unwrap_or_default()),
                submitted: Set(submit),
                submitted_at: Set(submit.then_some(t)),
                version: Set(1),
                created_at: Set(t),
                updated_at: Set(t),
                ..Default::default()
            }
            .insert(txn)
            .await?
        }
    };
    insert_revision(txn, &r).await?;
    if submit && a.status != AssignmentStatus::Done {
        let mut am = a.clone().into_active_model();
        am.status = Set(AssignmentStatus::Done);
        am.update(txn).await?;
    }
    let action = if submit {
        "review.submitted"
    } else {
        "review.saved"
    };
    w.append(
        Entry::new(action, "review", &r.public_id)
            .by(actor.public_id())
            .in_event(&e.external_id)
            .with(json!({ "assignment": a.public_id, "version": r.version, "criteria_scored": checked.len() })),
    )
    .await?;
    Ok(r)
}

pub async fn insert_revision<C: ConnectionTrait>(txn: &C, r: &review::Model) -> AppResult<()> {
    review_revision::ActiveModel {
        review_id: Set(r.id),
        version: Set(r.version),
        scores: Set(r.scores.clone()),
        comment: Set(r.comment.clone()),
        submitted: Set(r.submitted),
        created_at: Set(r.updated_at),
        ..Default::default()
    }
    .insert(txn)
    .await?;
    Ok(())
}

/// Where an assignment stands, as judges and organizers read it (`Assignment.status`).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Standing {
    /// Waiting for the judge's submitted review.
    Pending,
    /// The judge submitted the review.
    Done,
    /// Set aside by a recusal; the review does not count.
    Recused,
    /// Its project is not submitted (its team withdrew it): not reviewable, in no queue and
    /// not pending, until the project is submitted again.
    Withdrawn,
}

impl Standing {
    /// The standing of `a` whose project is (`submitted`) or is not reviewable. A recusal
    /// outranks a withdrawal: it holds whatever the project does.
    pub fn of(a: &assignment::Model, submitted: bool) -> Standing {
        match a.status {
            AssignmentStatus::Recused => Standing::Recused,
            _ if !submitted => Standing::Withdrawn,
            AssignmentStatus::Done => Standing::Done,
            AssignmentStatus::Pending => Standing::Pending,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Standing::Pending => "pending",
            Standing::Done => "done",
            Standing::Recused => "recused",
            Standing::Withdrawn => "withdrawn",
        }
    }
}

/// A judge's queue in an event: their assignments to submitted projects, in the order they
/// walk the expo floor: by table in natural order from a starting table of their own, then
/// the projects without a table in the judge's own order (see [`super::tables::floor_order`]
/// and [`judge_order`]). Assignments of withdrawn projects are left out until the project
/// is submitted again.
pub async fn my_assignments<C: ConnectionTrait>(
    db: &C,
    user_id: i64,
    event_id: i64,
) -> AppResult<Vec<assignment::Model>> {
    let Some(judge) = judge_of_user(db, user_id, event_id).await? else {
        return Ok(vec![]);
    };
    let rows = assignment::Entity::find()
        .filter(assignment::Column::JudgeId.eq(judge.id))
        .all(db)
        .await?;
    // The submitted ones among the assigned projects, with their expo tables.
    let assigned = assignment::Entity::find()
        .select_only()
        .column(assignment::Column::ProjectId)
        .filter(assignment::Column::JudgeId.eq(judge.id))
        .into_query();
    let tables: HashMap<i64, Option<String>> = project::Entity::find_public(event_id)
        .select_only()
        .column(project::Column::Id)
        .column(project::Column::ExpoTable)
        .filter(project::Column::Id.in_subquery(assigned))
        .into_tuple::<(i64, Option<String>)>()
        .all(db)
        .await?
        .into_iter()
        .collect();
    let rows: Vec<_> = rows
        .into_iter()
        .filter(|a| tables.contains_key(&a.project_id))
        .collect();
    Ok(super::tables::floor_order(
        rows,
        |a| tables.get(&a.project_id).cloned().flatten(),
        |a| judge_order(&judge.public_id, &a.public_id),
    ))
}

/// A per-judge order of the work queue, so judges do not all start at the same table: the
/// hash of (judge, assignment) is stable for a judge and differs between judges.
pub fn judge_order(judge: &str, assignment: &str) -> String {
    crate::crypto::sha256_fields(
        "verdict.queue.v1",
        &[judge.as_bytes(), assignment.as_bytes()],
    )
}

/// Counts of an event's judging work, by [`Standing`]: `assignments` is the sum of the
/// other four.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Progress {
    pub assignments: i32,
    pub done: i32,
    pub pending: i32,
    pub recused: i32,
    pub withdrawn: i32,
    pub projects_below_target: i32,
}

pub async fn progress<C: ConnectionTrait>(db: &C, e: &event::Model) -> AppResult<Progress> {
    let rows = assignment::Entity::find()
        .filter(assignment::Column::EventId.eq(e.id))
        .all(db)
        .await?;
    let submitted: Vec<i64> = project::Entity::find_public(e.id)
        .select_only()
        .column(project::Column::Id)
        .into_tuple()
        .all(db)
        .await?;
    let reviewable: std::collections::HashSet<i64> = submitted.iter().copied().collect();
    let mut p = Progress {
        assignments: rows.len() as i32,
        ..Default::default()
    };
    for a in &rows {
        match Standing::of(a, reviewable.contains(&a.project_id)) {
            Standing::Done => p.done += 1,
            Standing::Recused => p.recused += 1,
            Standing::Pending => p.pending += 1,
            Standing::Withdrawn => p.withdrawn += 1,
        }
    }
    // Linear in assignments plus reviews: the live assignments by id, then one pass over
    // the submitted reviews, reading only the two columns counted.
    let live: std::collections::HashSet<i64> = rows
        .iter()
        .filter(|a| a.status != AssignmentStatus::Recused)
        .map(|a| a.id)
        .collect();
    let reviewed: Vec<(i64, i64)> = review::Entity::find()
        .filter(review::Column::EventId.eq(e.id))
        .filter(review::Column::Submitted.eq(true))
        .select_only()
        .column(review::Column::AssignmentId)
        .column(review::Column::ProjectId)
        .into_tuple()
        .all(db)
        .await?;
    let mut counts: std::collections::HashMap<i64, i32> = std::collections::HashMap::new();
    for (assignment_id, project_id) in reviewed {
        if live.contains(&assignment_id) {
            *counts.entry(project_id).or_default() += 1;
        }
    }
    p.projects_below_target = submitted
        .iter()
        .filter(|id| counts.get(id).copied().unwrap_or(0) < e.reviews_per_project)
        .count() as i32;
    Ok(p)
}
