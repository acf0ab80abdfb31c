//! Pairwise judging (issue 26): an event's judging mode, and judges comparing two projects
//! ("which was better?") as they walk their route ([`super::route`]).
//!
//! - [`set_judging_mode`]: organizers choose `scores`, `pairwise` or `both` until judging
//!   opens (WINDOW_CLOSED after: a judge's comparisons and scores must mean the same thing
//!   for the whole of judging), for the event or for one of its tracks: a track judged on
//!   the expo floor by comparisons beside tracks judged by the rubric. A track without a
//!   mode of its own is judged as its event is; setting a track to its event's mode gives
//!   it none again. Which projects take comparisons follows each project's track
//!   ([`ComparisonTracks`]): the judges' routes hold only those, and a comparison or skip of
//!   any other project is a CONFLICT.
//! - [`compare_projects`]: a judge of the event, while judging is open and the mode allows
//!   comparisons, records that one project was better than another. One comparison per
//!   judge and pair, whichever way round: comparing the pair again the other way revises
//!   it (its `version` counts up); the same way again is a CONFLICT (nothing would change).
//!   Retries are made safe by an idempotency key, as for every scripted mutation
//!   (`graphql::mutation::write::idempotent`): a phone that queued its taps offline sends
//!   each with its own key, and a repeat is answered with the comparison it made.
//! - [`skip_comparison`]: a judge passes over a project on their route ("not at the
//!   table"), with a reason. A skip is not a recusal: a recusal is the organizers'
//!   declaration about a team, voids the judge's reviews and covers the team's future
//!   projects; a skip only takes one project off the judge's route. A judge with a conflict
//!   skips with that reason, which the organizers read in the audit log and can turn into a
//!   recusal. A skipped project can still be compared (the team was back at its table).
//!
//! Refusals, in the order they are checked: not signed in UNAUTHENTICATED; no such event
//! NOT_FOUND; not a judge of the event FORBIDDEN; a project that is not a submitted project
//! of the event BAD_USER_INPUT naming the argument; the same project twice BAD_USER_INPUT
//! naming `worse`; a project whose track is judged by scores only CONFLICT; outside the judging window
//! WINDOW_CLOSED; a project the judge may not judge (own team, recused, track not covered)
//! FORBIDDEN. Each write is one transaction with one audit entry; a refusal writes nothing.

use std::collections::HashSet;

use entity::event::JudgingMode;
use entity::{comparison, comparison_skip, event, membership, project, track};
use sea_orm::{
    ActiveEnum, ActiveModelTrait, ActiveValue::Set, ColumnTrait, ConnectionTrait, EntityTrait,
    IntoActiveModel, QueryFilter,
};
use serde_json::json;

use super::route::{self, NextPair};
use super::{ineligible, require_judging_open};
use crate::audit::Entry;
use crate::crypto::public_id;
use crate::domain::judges::judge_of_user;
use crate::domain::{Organizer, Write, find_project, find_track, validate};
use crate::error::{AppError, AppResult};

/// The longest reason a judge gives for a skip, in characters.
pub const SKIP_REASON_MAX: usize = 200;

/// Organizers set the judging mode of the event, or of one of its `track`s, until judging
/// opens.
pub async fn set_judging_mode(
    w: &Write,
    org: Organizer<'_>,
    mode: JudgingMode,
    track: Option<&str>,
) -> AppResult<event::Model> {
    let e = org.event();
    let track = match track {
        Some(id) => Some(
            find_track(w.txn(), id, Some(e.id))
                .await?
                .filter(|t| t.event_id == e.id)
                .ok_or_else(|| AppError::bad_input("track", "no such track in this event"))?,
        ),
        None => None,
    };
    if let Some(open) = e.judging_open
        && w.now() >= open
    {
        return Err(AppError::WindowClosed(
            "judging has opened: the judging mode is fixed until the event ends".into(),
        ));
    }
    match track {
        None => set_event_mode(w, org, mode).await,
        Some(t) => set_track_mode(w, org, mode, t).await,
    }
}

async fn set_event_mode(
    w: &Write,
    org: Organizer<'_>,
    mode: JudgingMode,
) -> AppResult<event::Model> {
    let e = org.event();
    if e.judging_mode == mode {
        return Err(AppError::conflict(format!(
            "the event is judged by {} already",
            mode.to_value()
        )));
    }
    let from = e.judging_mode;
    let mut am = e.clone().into_active_model();
    am.judging_mode = Set(mode);
    let e = am.update(w.txn()).await?;
    w.append(
        Entry::new("event.judging_mode_set", "event", &e.public_id)
            .by(org.actor().public_id())
            .in_event(&e.external_id)
            .with(json!({ "mode": mode.to_value(), "from": from.to_value() })),
    )
    .await?;
    Ok(e)
}

async fn set_track_mode(
    w: &Write,
    org: Organizer<'_>,
    mode: JudgingMode,
    t: track::Model,
) -> AppResult<event::Model> {
    let (txn, e) = (w.txn(), org.event());
    let from = t.judging_mode.unwrap_or(e.judging_mode);
    // The event's own mode is no mode of the track's: it follows the event again.
    let own = (mode != e.judging_mode).then_some(mode);
    if own == t.judging_mode {
        return Err(AppError::conflict(format!(
            "the track is judged by {} already",
            mode.to_value()
        )));
    }
    let mut am = t.clone().into_active_model();
    am.judging_mode = Set(own);
    let t = am.update(txn).await?;
    w.append(
        Entry::new("track.judging_mode_set", "track", &t.public_id)
            .by(org.actor().public_id())
            .in_event(&e.external_id)
            .with(json!({
                "mode": mode.to_value(),
                "from": from.to_value(),
                "follows_event": own.is_none(),
            })),
    )
    .await?;
    Ok(e.clone())
}

/// The tracks of an event whose projects take comparisons: their own judging mode, or
/// their event's when they have none, is `pairwise` or `both`.
pub struct ComparisonTracks(HashSet<i64>);

impl ComparisonTracks {
    pub async fn of<C: ConnectionTrait>(db: &C, e: &event::Model) -> AppResult<Self> {
        let takes = |m: JudgingMode| m != JudgingMode::Scores;
        Ok(Self(
            track::Entity::find()
                .filter(track::Column::EventId.eq(e.id))
                .all(db)
                .await?
                .into_iter()
                .filter(|t| takes(t.judging_mode.unwrap_or(e.judging_mode)))
                .map(|t| t.id)
                .collect(),
        ))
    }

    /// Whether `p` (a project of the event) takes comparisons.
    pub fn take(&self, p: &project::Model) -> bool {
        self.0.contains(&p.track_id)
    }

    /// Whether no project of the event takes comparisons.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

/// The caller's judge membership in `e`; FORBIDDEN when they do not judge it.
async fn judge_in<C: ConnectionTrait>(
    db: &C,
    user_id: i64,
    e: &event::Model,
) -> AppResult<membership::Model> {
    judge_of_user(db, user_id, e.id)
        .await?
        .ok_or_else(|| AppError::forbidden("only the event's judges compare its projects"))
}

/// The submitted project of `e` that `id` names (id or external id); BAD_USER_INPUT naming
/// `field` otherwise (drafts and other events' projects alike).
async fn project_in<C: ConnectionTrait>(
    db: &C,
    e: &event::Model,
    id: &str,
    field: &str,
) -> AppResult<project::Model> {
    find_project(db, id, Some(e.id))
        .await?
        .filter(|p| p.event_id == e.id && p.is_public())
        .ok_or_else(|| AppError::bad_input(field, "no such submitted project in this event"))
}

/// The rules every pairwise write of a judge shares once its projects are known: the mode
/// allows comparisons, judging is open, and the judge may judge each project.
async fn may_compare<C: ConnectionTrait>(
    db: &C,
    w_now: chrono::DateTime<chrono::Utc>,
    e: &event::Model,
    judge: &membership::Model,
    projects: &[&project::Model],
) -> AppResult<()> {
    let tracks = ComparisonTracks::of(db, e).await?;
    if tracks.is_empty() {
        return Err(AppError::conflict(
            "this event is judged by rubric scores only: its judging mode does not take comparisons",
        ));
    }
    if projects.iter().any(|p| !tracks.take(p)) {
        return Err(AppError::conflict(
            "this project's track is judged by rubric scores only: it takes no comparisons",
        ));
    }
    require_judging_open(e, w_now)?;
    for p in projects {
        if let Some(why) = ineligible(db, judge, p).await? {
            return Err(AppError::forbidden(why));
        }
    }
    Ok(())
}

/// A judge of the event with `slug` records that `better` was better than `worse`, or
/// revises their comparison of the pair the other way round.
pub async fn compare_projects(
    w: &Write,
    slug: &str,
    better: &str,
    worse: &str,
) -> AppResult<comparison::Model> {
    let (txn, actor) = (w.txn(), w.actor()?);
    let e = w.event(slug).await?;
    let judge = judge_in(txn, actor.user.id, &e).await?;
    let b = project_in(txn, &e, better, "better").await?;
    let wr = project_in(txn, &e, worse, "worse").await?;
    if b.id == wr.id {
        return Err(AppError::bad_input(
            "worse",
            "a project cannot be compared with itself",
        ));
    }
    may_compare(txn, w.now(), &e, &judge, &[&b, &wr]).await?;
    let compared = route::comparisons_of(txn, judge.id).await?;
    let entry = |action: &'static str, c: &comparison::Model| {
        Entry::new(action, "comparison", &c.public_id)
            .by(actor.public_id())
            .in_event(&e.external_id)
            .with(json!({
                "judge": judge.public_id,
                "better": b.public_id,
                "worse": wr.public_id,
                "version": c.version,
            }))
    };
    if let Some(c) = compared.iter().find(|c| c.is_of(b.id, wr.id)) {
        if c.better_id == b.id {
            return Err(AppError::conflict(
                "you have compared these two projects this way already",
            ));
        }
        let version = c.version + 1;
        let mut am = c.clone().into_active_model();
        am.better_id = Set(b.id);
        am.worse_id = Set(wr.id);
        am.version = Set(version);
        am.updated_at = Set(w.now());
        let c = am.update(txn).await?;
        w.append(entry("comparison.revised", &c)).await?;
        return Ok(c);
    }
    let current = current_of(txn, &e, &judge, &compared, &b, &wr).await?;
    let c = comparison::ActiveModel {
        public_id: Set(public_id("cmp")),
        event_id: Set(e.id),
        judge_id: Set(judge.id),
        better_id: Set(b.id),
        worse_id: Set(wr.id),
        current_id: Set(current),
        version: Set(1),
        created_at: Set(w.now()),
        updated_at: Set(w.now()),
        ..Default::default()
    }
    .insert(txn)
    .await?;
    w.append(entry("comparison.recorded", &c)).await?;
    Ok(c)
}

/// Which of a newly compared pair the judge is at now: the other one when one of them is
/// where the judge was last; else the one further along their route (a project off the
/// route counts as furthest; a tie goes to `worse`).
async fn current_of<C: ConnectionTrait>(
    db: &C,
    e: &event::Model,
    judge: &membership::Model,
    compared: &[comparison::Model],
    better: &project::Model,
    worse: &project::Model,
) -> AppResult<i64> {
    match route::last_seen(compared) {
        Some(last) if last == better.id => return Ok(worse.id),
        Some(last) if last == worse.id => return Ok(better.id),
        _ => {}
    }
    let route = route::route(db, e, judge).await?;
    let at = |p: &project::Model| {
        route
            .iter()
            .position(|r| r.id == p.id)
            .unwrap_or(usize::MAX)
    };
    Ok(if at(better) > at(worse) {
        better.id
    } else {
        worse.id
    })
}

/// A judge of the event with `slug` passes over `project` on their route, saying why;
/// returns the pair they are asked about next (`None` when the route is done).
pub async fn skip_comparison(
    w: &Write,
    slug: &str,
    project: &str,
    reason: &str,
) -> AppResult<Option<NextPair>> {
    let (txn, actor) = (w.txn(), w.actor()?);
    let e = w.event(slug).await?;
    let judge = judge_in(txn, actor.user.id, &e).await?;
    let p = project_in(txn, &e, project, "project").await?;
    let reason = validate::name("reason", reason, SKIP_REASON_MAX)?;
    may_compare(txn, w.now(), &e, &judge, &[&p]).await?;
    let compared = route::comparisons_of(txn, judge.id).await?;
    if compared
        .iter()
        .any(|c| c.better_id == p.id || c.worse_id == p.id)
    {
        return Err(AppError::conflict(
            "you have compared this project already: revise the comparison instead of skipping it",
        ));
    }
    let skipped = comparison_skip::Entity::find()
        .filter(comparison_skip::Column::JudgeId.eq(judge.id))
        .filter(comparison_skip::Column::ProjectId.eq(p.id))
        .one(txn)
        .await?;
    if skipped.is_some() {
        return Err(AppError::conflict("you have skipped this project already"));
    }
    let s = comparison_skip::ActiveModel {
        public_id: Set(public_id("skp")),
        event_id: Set(e.id),
        judge_id: Set(judge.id),
        project_id: Set(p.id),
        reason: Set(reason.clone()),
        created_at: Set(w.now()),
        ..Default::default()
    }
    .insert(txn)
    .await?;
    w.append(
        Entry::new("comparison.skipped", "project", &p.public_id)
            .by(actor.public_id())
            .in_event(&e.external_id)
            .with(json!({ "judge": judge.public_id, "skip": s.public_id, "reason": reason })),
    )
    .await?;
    route::next_pair(txn, &e, &judge, None).await
}

/// The pair the signed-in `user_id` is asked about next in `e`: `None` when they do not
/// judge it, when no project of it takes comparisons, or when their route is done.
pub async fn my_next_comparison<C: ConnectionTrait>(
    db: &C,
    e: &event::Model,
    user_id: i64,
    seen: Option<&str>,
) -> AppResult<Option<NextPair>> {
    let Some(judge) = judge_of_user(db, user_id, e.id).await? else {
        return Ok(None);
    };
    route::next_pair(db, e, &judge, seen).await
}

/// The signed-in `user_id`'s own comparisons in `e`, oldest first (none unless they judge
/// it).
pub async fn my_comparisons<C: ConnectionTrait>(
    db: &C,
    e: &event::Model,
    user_id: i64,
) -> AppResult<Vec<comparison::Model>> {
    match judge_of_user(db, user_id, e.id).await? {
        Some(judge) => route::comparisons_of(db, judge.id).await,
        None => Ok(vec![]),
    }
}
