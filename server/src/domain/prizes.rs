//! Prizes and the podium (issue 12). A prize belongs to an event, optionally to one of its
//! tracks, and sits at a position of the ranking (1, 2, 3 ... or 0 for a special award).
//! Organizers may assign its winner by hand. The podium is derived, never stored: from the
//! frozen published run, the project at the prize's position (within its track for a
//! track prize), unless a winner was assigned. A prize never changes a run or its hash.

use std::collections::HashMap;

use entity::{event, prize, project};
use sea_orm::{
    ActiveModelTrait, ColumnTrait, EntityTrait, QueryFilter, QueryOrder, QuerySelect, Set,
};
use serde_json::json;

use super::{Actor, clock, find_project, find_track, require_organizer, validate};
use crate::audit::{self, Entry};
use crate::calibrate::CalibrationResult;
use crate::crypto::public_id;
use crate::error::{AppError, AppResult};

/// The highest ranking position a prize may name.
pub const POSITION_MAX: i32 = 100;

/// What `createPrize` takes.
pub struct NewPrize {
    pub name: String,
    pub track: Option<String>,
    pub position: i32,
    pub description: Option<String>,
}

/// Creates a prize of `e` (organizers): name one line of 1 to 200 characters, description
/// up to 2,000, position 0 to [`POSITION_MAX`], track one of the event's.
pub async fn create_prize<C: sea_orm::ConnectionTrait>(
    txn: &C,
    actor: &Actor,
    e: &event::Model,
    input: NewPrize,
) -> AppResult<prize::Model> {
    require_organizer(txn, actor, e).await?;
    let name = validate::name("name", &input.name, validate::NAME_MAX)?;
    let description = validate::text(
        "description",
        input.description.as_deref().unwrap_or("").trim(),
        validate::SUMMARY_MAX,
    )?;
    if !(0..=POSITION_MAX).contains(&input.position) {
        return Err(AppError::bad_input(
            "position",
            format!("must be 0 (a special award) to {POSITION_MAX}"),
        ));
    }
    let track = match &input.track {
        Some(t) => Some(
            find_track(txn, t, Some(e.id))
                .await?
                .filter(|t| t.event_id == e.id)
                .ok_or_else(|| AppError::bad_input("track", "no such track in this event"))?,
        ),
        None => None,
    };
    let p = prize::ActiveModel {
        public_id: Set(public_id("prz")),
        event_id: Set(e.id),
        track_id: Set(track.as_ref().map(|t| t.id)),
        name: Set(name),
        description: Set(description),
        position: Set(input.position),
        winner_project_id: Set(None),
        created_at: Set(clock(txn).await?),
        ..Default::default()
    }
    .insert(txn)
    .await?;
    audit::append(
        txn,
        Entry::new("prize.created", "prize", &p.public_id)
            .by(actor.public_id())
            .in_event(&e.external_id)
            .with(json!({
                "name": p.name,
                "position": p.position,
                "track": track.map(|t| t.external_id),
            })),
    )
    .await?;
    Ok(p)
}

/// Assigns the winner of the prize with public id `id` by hand (organizers), or clears it
/// (`project` None): a submitted project of the prize's event, of its track for a track
/// prize.
pub async fn assign_prize<C: sea_orm::ConnectionTrait>(
    txn: &C,
    actor: &Actor,
    id: &str,
    project: Option<&str>,
) -> AppResult<prize::Model> {
    let p = prize::Entity::find()
        .filter(prize::Column::PublicId.eq(id))
        .one(txn)
        .await?
        .ok_or(AppError::NotFound("prize"))?;
    let e = event::Entity::find_by_id(p.event_id)
        .one(txn)
        .await?
        .ok_or(AppError::NotFound("event"))?;
    require_organizer(txn, actor, &e).await?;
    let winner = match project {
        Some(id) => {
            let w = find_project(txn, id, Some(e.id))
                .await?
                .filter(|w| w.event_id == e.id)
                .ok_or_else(|| AppError::bad_input("project", "no such project in this event"))?;
            if !w.is_public() {
                return Err(AppError::bad_input("project", "is not submitted"));
            }
            if p.track_id.is_some_and(|t| t != w.track_id) {
                return Err(AppError::bad_input(
                    "project",
                    "is not in the prize's track",
                ));
            }
            Some(w)
        }
        None => None,
    };
    let mut row: prize::ActiveModel = p.into();
    row.winner_project_id = Set(winner.as_ref().map(|w| w.id));
    let p = row.update(txn).await?;
    audit::append(
        txn,
        Entry::new("prize.assigned", "prize", &p.public_id)
            .by(actor.public_id())
            .in_event(&e.external_id)
            .with(json!({ "project": winner.map(|w| w.external_id) })),
    )
    .await?;
    Ok(p)
}

/// The event's prizes: overall ones first, then by track, position and creation.
pub async fn prizes_of<C: sea_orm::ConnectionTrait>(
    db: &C,
    event_id: i64,
) -> AppResult<Vec<prize::Model>> {
    let mut all = prize::Entity::find()
        .filter(prize::Column::EventId.eq(event_id))
        .order_by_asc(prize::Column::Id)
        .all(db)
        .await?;
    all.sort_by_key(|p| {
        (
            p.track_id.is_some(),
            p.track_id,
            p.position == 0,
            p.position,
        )
    });
    Ok(all)
}

/// How a podium entry came about.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Source {
    /// The project at the prize's position in the published ranking.
    Derived,
    /// The organizers assigned it.
    Assigned,
}

/// One prize's winner on the podium.
#[derive(Clone, Debug)]
pub struct Placement {
    pub prize: prize::Model,
    pub source: Source,
    /// The winner's calibration id (its external id), as the run names it.
    pub project: String,
    /// Its index in the run's `projects` (None for an assigned winner the run did not rank).
    pub index: Option<usize>,
}

/// The podium from the published `result`: for each prize, its assigned winner, or the
/// ranked project at its position (within its track, using `track_of` external id -> track
/// id). Special awards (position 0) appear only when assigned; a position beyond the ranked
/// projects has no entry. `external_of` names assigned winners by row id.
pub fn podium(
    prizes: &[prize::Model],
    result: &CalibrationResult,
    track_of: &HashMap<String, i64>,
    external_of: &HashMap<i64, String>,
) -> Vec<Placement> {
    // Published order: rank, then the result's own order (ties keep it).
    let ranked: Vec<usize> = (0..result.projects.len())
        .filter(|&i| result.projects[i].rank.is_some())
        .collect();
    prizes
        .iter()
        .filter_map(|p| {
            if let Some(w) = p.winner_project_id {
                let project = external_of.get(&w)?.clone();
                let index = result.projects.iter().position(|x| x.id == project);
                return Some(Placement {
                    prize: p.clone(),
                    source: Source::Assigned,
                    project,
                    index,
                });
            }
            if p.position < 1 {
                return None;
            }
            let index = ranked
                .iter()
                .copied()
                .filter(|&i| {
                    p.track_id
                        .is_none_or(|t| track_of.get(&result.projects[i].id) == Some(&t))
                })
                .nth(usize::try_from(p.position - 1).ok()?)?;
            Some(Placement {
                prize: p.clone(),
                source: Source::Derived,
                project: result.projects[index].id.clone(),
                index: Some(index),
            })
        })
        .collect()
}

/// External id -> track id, and row id -> external id, of the event's projects.
pub async fn project_maps<C: sea_orm::ConnectionTrait>(
    db: &C,
    event_id: i64,
) -> AppResult<(HashMap<String, i64>, HashMap<i64, String>)> {
    let rows: Vec<(i64, String, i64)> = project::Entity::find()
        .select_only()
        .column(project::Column::Id)
        .column(project::Column::ExternalId)
        .column(project::Column::TrackId)
        .filter(project::Column::EventId.eq(event_id))
        .into_tuple()
        .all(db)
        .await?;
    let mut track_of = HashMap::with_capacity(rows.len());
    let mut external_of = HashMap::with_capacity(rows.len());
    for (id, ext, track) in rows {
        track_of.insert(ext.clone(), track);
        external_of.insert(id, ext);
    }
    Ok((track_of, external_of))
}
