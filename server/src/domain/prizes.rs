//! Prizes and the podium (issue 12). A prize belongs to an event, optionally to one of its
//! tracks, and sits at a position of the ranking (1, 2, 3 ... or 0 for a special award).
//! Organizers may assign its winner by hand. The podium is derived, never stored: from the
//! frozen published run, the project at the prize's position (within its track for a
//! track prize), unless a winner was assigned. A prize never changes a run or its hash.

use std::collections::HashMap;

use entity::{prize, project};
use sea_orm::{
    ActiveModelTrait, ColumnTrait, EntityTrait, QueryFilter, QueryOrder, QuerySelect, Set,
};
use serde_json::json;

use super::{Organizer, Write, find_project, find_track, validate};
use crate::audit::Entry;
use crate::calibrate::{CalibrationResult, ProjectOut};
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
pub async fn create_prize(
    w: &Write,
    org: Organizer<'_>,
    input: NewPrize,
) -> AppResult<prize::Model> {
    let (txn, actor, e) = (w.txn(), org.actor(), org.event());
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
        created_at: Set(w.now()),
        ..Default::default()
    }
    .insert(txn)
    .await?;
    w.append(
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
pub async fn assign_prize(w: &Write, id: &str, project: Option<&str>) -> AppResult<prize::Model> {
    let (txn, actor) = (w.txn(), w.actor()?);
    let p = prize::Entity::find()
        .filter(prize::Column::PublicId.eq(id))
        .one(txn)
        .await?
        .ok_or(AppError::NotFound("prize"))?;
    let e = w.event_by_id(p.event_id).await?;
    w.organizer(&e).await?;
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
    w.append(
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

/// A project where one more review would matter for a prize (a planning aid for
/// organizers before publication, never a ranking).
#[derive(Clone, Debug)]
pub struct TopUp {
    pub prize: prize::Model,
    /// The project's index in the run's `projects`.
    pub index: usize,
    /// Its rank interval straddles the prize's cut-off: it may truly be on either side.
    pub straddles: bool,
    /// It has fewer usable reviews than the event asks for, and its interval reaches the
    /// cut-off.
    pub thin: bool,
}

/// For each ranked prize not assigned by hand (position `k` within its scope: overall, or
/// its track), the projects of a run (`projects`) near its cut-off: between the `k`-th and
/// the `k + 1`-th of the scope (ranks `inside` and `outside`). A project straddles the cut-off when
/// its interval holds both (`low <= inside` and `high >= outside`); it is thin when it has
/// fewer than `target` usable reviews and its interval reaches the cut-off. Per prize, the
/// straddling ones first, the widest interval, then the fewest reviews first: where one
/// more review would matter most. A scope with no more than `k` ranked projects has no
/// cut-off.
pub fn top_up(
    prizes: &[prize::Model],
    projects: &[ProjectOut],
    track_of: &HashMap<String, i64>,
    target: u32,
) -> Vec<TopUp> {
    let mut ranked: Vec<usize> = (0..projects.len())
        .filter(|&i| projects[i].rank.is_some())
        .collect();
    ranked.sort_by_key(|&i| projects[i].rank);
    let mut out = Vec::new();
    for prize in prizes {
        let Ok(k) = usize::try_from(prize.position) else {
            continue;
        };
        if k == 0 || prize.winner_project_id.is_some() {
            continue;
        }
        let scope: Vec<usize> = ranked
            .iter()
            .copied()
            .filter(|&i| {
                prize
                    .track_id
                    .is_none_or(|t| track_of.get(&projects[i].id) == Some(&t))
            })
            .collect();
        let (Some(&last_in), Some(&first_out)) = (scope.get(k - 1), scope.get(k)) else {
            continue;
        };
        let rank = |i: usize| projects[i].rank.unwrap_or(u32::MAX);
        let (inside, outside) = (rank(last_in), rank(first_out));
        let mut near: Vec<TopUp> = scope
            .iter()
            .filter_map(|&i| {
                let p = &projects[i];
                let (low, high) = (
                    p.rank_low.unwrap_or(rank(i)),
                    p.rank_high.unwrap_or(rank(i)),
                );
                let straddles = low <= inside && high >= outside;
                let thin = p.reviews < target && low <= outside && high >= inside;
                (straddles || thin).then(|| TopUp {
                    prize: prize.clone(),
                    index: i,
                    straddles,
                    thin,
                })
            })
            .collect();
        near.sort_by_key(|t| {
            let p = &projects[t.index];
            let width = p
                .rank_high
                .unwrap_or(0)
                .saturating_sub(p.rank_low.unwrap_or(0));
            (!t.straddles, std::cmp::Reverse(width), p.reviews, t.index)
        });
        out.extend(near);
    }
    out
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

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use chrono::Utc;
    use entity::prize;

    use super::top_up;
    use crate::calibrate::ProjectOut;

    fn project(id: &str, rank: u32, low: u32, high: u32, reviews: u32) -> ProjectOut {
        ProjectOut {
            id: id.into(),
            reviews,
            raw_mean: None,
            raw_rank: None,
            quality: None,
            std_error: None,
            rank: Some(rank),
            rank_low: Some(low),
            rank_high: Some(high),
            excluded: None,
            comparisons: None,
        }
    }

    fn prize(position: i32, track: Option<i64>) -> prize::Model {
        prize::Model {
            id: 1,
            public_id: "prz.x".into(),
            event_id: 1,
            track_id: track,
            name: "Prize".into(),
            description: String::new(),
            position,
            winner_project_id: None,
            // A test's row: the planner never reads when a prize was made.
            created_at: Utc::now(),
        }
    }

    #[test]
    fn the_plan_names_the_projects_whose_interval_straddles_a_cut_off_or_is_thin_near_it() {
        let projects = vec![
            project("a", 1, 1, 1, 3),
            project("b", 2, 2, 4, 3), // may fall out of a top two
            project("c", 3, 2, 3, 3), // may come in
            project("d", 4, 3, 6, 1), // thin and reaching the cut-off, not straddling
            project("e", 5, 5, 6, 1), // thin but far from it
            project("f", 6, 4, 6, 3),
        ];
        let tracks = HashMap::new();
        let plan = top_up(&[prize(2, None)], &projects, &tracks, 3);
        let ids: Vec<(&str, bool, bool)> = plan
            .iter()
            .map(|t| (projects[t.index].id.as_str(), t.straddles, t.thin))
            .collect();
        // Straddling first (widest interval first), then thin ones.
        assert_eq!(
            ids,
            [("b", true, false), ("c", true, false), ("d", false, true)]
        );
        // No cut-off where the scope has no more projects than places, and none for
        // special awards.
        assert!(top_up(&[prize(6, None), prize(0, None)], &projects, &tracks, 3).is_empty());
        // Within a track: b, d and f; the cut-off of a first place lies between b and d.
        let tracks: HashMap<String, i64> = [("b", 7), ("d", 7), ("f", 7)]
            .map(|(p, t)| (p.to_owned(), t))
            .into();
        let plan = top_up(&[prize(1, Some(7))], &projects, &tracks, 3);
        let ids: Vec<&str> = plan.iter().map(|t| projects[t.index].id.as_str()).collect();
        assert_eq!(ids, ["b", "d"]);
    }
}
