//! An organizer's setup checklist: the steps from a new event to published results, each
//! checked from the data (never from clicks), for many events at once in a constant number
//! of statements (one grouped count per kind of row).

use std::collections::HashMap;

use chrono::{DateTime, Utc};
use entity::{
    assignment, calibration_run, criterion, event, invitation, membership, result_publication,
    review, track,
};
use sea_orm::ExprTrait;
use sea_orm::sea_query::{Expr, IntoColumnRef};
use sea_orm::{ColumnTrait, Condition, ConnectionTrait, EntityTrait, QueryFilter, QuerySelect};

use crate::error::AppResult;

/// The steps, in the order an organizer takes them.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum StepKey {
    Tracks,
    Rubric,
    Windows,
    InviteJudges,
    Assign,
    Judging,
    Calibrate,
    Publish,
}

/// One step of the checklist: done or not, with the count that decided it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Step {
    pub key: StepKey,
    pub done: bool,
    /// How many of the step's rows exist (tracks, criteria, judges, assignments, submitted
    /// reviews, runs, publications); for windows, how many of the judging times are set.
    pub count: i64,
}

/// Rows of `E` per event among `ids`, counted where `filter` holds.
async fn per_event<E, C>(
    db: &C,
    event_col: E::Column,
    ids: &[i64],
    filter: Option<Condition>,
) -> AppResult<HashMap<i64, i64>>
where
    E: EntityTrait,
    E::Column: IntoColumnRef + Copy,
    C: ConnectionTrait,
{
    let mut q = E::find()
        .select_only()
        .column(event_col)
        .column_as(Expr::col(event_col).count(), "n")
        .filter(event_col.is_in(ids.iter().copied()))
        .group_by(event_col);
    if let Some(f) = filter {
        q = q.filter(f);
    }
    Ok(q.into_tuple::<(i64, i64)>()
        .all(db)
        .await?
        .into_iter()
        .collect())
}

/// The checklist of each event in `events`, as of `now`.
pub async fn checklists<C: ConnectionTrait>(
    db: &C,
    events: &[event::Model],
    now: DateTime<Utc>,
) -> AppResult<HashMap<i64, Vec<Step>>> {
    let ids: Vec<i64> = events.iter().map(|e| e.id).collect();
    if ids.is_empty() {
        return Ok(HashMap::new());
    }
    let tracks = per_event::<track::Entity, _>(db, track::Column::EventId, &ids, None).await?;
    let rubric =
        per_event::<criterion::Entity, _>(db, criterion::Column::EventId, &ids, None).await?;
    let judges = per_event::<membership::Entity, _>(
        db,
        membership::Column::EventId,
        &ids,
        Some(Condition::all().add(membership::Column::Role.eq(membership::Role::Judge))),
    )
    .await?;
    // Judges invited and not yet in: the step is taken when the invitations are out.
    let invited = per_event::<invitation::Entity, _>(
        db,
        invitation::Column::EventId,
        &ids,
        Some(
            Condition::all()
                .add(invitation::Column::Role.eq(membership::Role::Judge))
                .add(invitation::Column::RevokedAt.is_null())
                .add(invitation::Column::RedeemedAt.is_null()),
        ),
    )
    .await?;
    let assigned =
        per_event::<assignment::Entity, _>(db, assignment::Column::EventId, &ids, None).await?;
    let reviewed = per_event::<review::Entity, _>(
        db,
        review::Column::EventId,
        &ids,
        Some(Condition::all().add(review::Column::Submitted.eq(true))),
    )
    .await?;
    let runs =
        per_event::<calibration_run::Entity, _>(db, calibration_run::Column::EventId, &ids, None)
            .await?;
    let published = per_event::<result_publication::Entity, _>(
        db,
        result_publication::Column::EventId,
        &ids,
        None,
    )
    .await?;
    let n = |m: &HashMap<i64, i64>, id: i64| m.get(&id).copied().unwrap_or(0);
    Ok(events
        .iter()
        .map(|e| {
            let windows =
                i64::from(e.judging_open.is_some()) + i64::from(e.judging_close.is_some());
            let judging_over = e.judging_close.is_some_and(|c| c <= now);
            // Most steps are done once one of their rows exists.
            let counted = |key, count: i64| Step {
                key,
                done: count > 0,
                count,
            };
            let steps = vec![
                counted(StepKey::Tracks, n(&tracks, e.id)),
                counted(StepKey::Rubric, n(&rubric, e.id)),
                Step {
                    key: StepKey::Windows,
                    done: windows == 2,
                    count: windows,
                },
                counted(StepKey::InviteJudges, n(&judges, e.id) + n(&invited, e.id)),
                counted(StepKey::Assign, n(&assigned, e.id)),
                Step {
                    key: StepKey::Judging,
                    done: n(&reviewed, e.id) > 0 && judging_over,
                    count: n(&reviewed, e.id),
                },
                counted(StepKey::Calibrate, n(&runs, e.id)),
                counted(StepKey::Publish, n(&published, e.id)),
            ];
            (e.id, steps)
        })
        .collect())
}

/// The first step not done yet: where the event's setup is; `None` when all are done.
pub fn current(steps: &[Step]) -> Option<StepKey> {
    steps.iter().find(|s| !s.done).map(|s| s.key)
}
