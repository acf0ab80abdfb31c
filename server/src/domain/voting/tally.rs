//! The tally: computed once, when an organizer publishes it after the window closed, and
//! stored.

use std::collections::HashMap;

use entity::{project, vote, vote_campaign};
use sea_orm::{
    ActiveModelTrait, ColumnTrait, ConnectionTrait, EntityTrait, QueryFilter, QuerySelect, Set,
};
use serde::{Deserialize, Serialize};
use serde_json::json;

use super::{require_campaign, voter_count};
use crate::audit::Entry;
use crate::domain::{Organizer, Write};
use crate::error::{AppError, AppResult};

/// One project's line of the published tally.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
pub struct TallyRow {
    /// 1 = most votes; equal votes share a rank.
    pub rank: i32,
    pub project_id: i64,
    pub votes: i64,
    pub voters: i64,
    pub credits: i64,
}

/// `publishVoteTally` (organizers): computes the tally once the window has closed, stores
/// it and makes it public. Before the window closed, or a second time, CONFLICT.
pub async fn publish_tally(w: &Write, org: Organizer<'_>) -> AppResult<Vec<TallyRow>> {
    let (txn, actor, e) = (w.txn(), org.actor(), org.event());
    let c = require_campaign(txn, e.id, true).await?;
    if c.tally_published_at.is_some() {
        return Err(AppError::conflict("the tally is already published"));
    }
    let t = w.now();
    match e.voting_close {
        Some(close) if t >= close => {}
        Some(close) => {
            return Err(AppError::conflict(format!(
                "voting is open until {}: publish the tally after it closes",
                close.to_rfc3339()
            )));
        }
        None => return Err(AppError::conflict("voting has no window")),
    }
    let rows = compute_tally(txn, e.id).await?;
    let voters = voter_count(txn, c.id).await?;
    let public = c.public_id.clone();
    let mut row: vote_campaign::ActiveModel = c.into();
    row.tally_published_at = Set(Some(t));
    row.tally = Set(Some(
        serde_json::to_string(&rows).map_err(|e| AppError::Internal(format!("tally: {e}")))?,
    ));
    row.updated_at = Set(t);
    row.update(txn).await?;
    w.append(
        Entry::new("vote_tally.published", "vote_campaign", &public)
            .by(actor.public_id())
            .in_event(&e.external_id)
            .with(json!({
                "voters": voters,
                "votes": rows.iter().map(|r| r.votes).sum::<i64>(),
            })),
    )
    .await?;
    Ok(rows)
}

/// The tally of the event's gallery as of now: every project, most votes first.
async fn compute_tally<C: ConnectionTrait>(db: &C, event_id: i64) -> AppResult<Vec<TallyRow>> {
    let projects: Vec<i64> = project::Entity::find_gallery(event_id)
        .select_only()
        .column(project::Column::Id)
        .into_tuple()
        .all(db)
        .await?;
    let votes: Vec<(i64, i32)> = vote::Entity::find()
        .select_only()
        .column(vote::Column::ProjectId)
        .column(vote::Column::Votes)
        .filter(vote::Column::EventId.eq(event_id))
        .into_tuple()
        .all(db)
        .await?;
    let mut sums: HashMap<i64, (i64, i64, i64)> =
        projects.iter().map(|p| (*p, (0, 0, 0))).collect();
    for (p, n) in votes {
        // A project that left the gallery since keeps no line.
        if let Some(s) = sums.get_mut(&p) {
            let n = i64::from(n);
            s.0 += n;
            s.1 += 1;
            s.2 += n * n;
        }
    }
    let mut rows: Vec<TallyRow> = sums
        .into_iter()
        .map(|(project_id, (votes, voters, credits))| TallyRow {
            rank: 0,
            project_id,
            votes,
            voters,
            credits,
        })
        .collect();
    rows.sort_by(|a, b| {
        b.votes
            .cmp(&a.votes)
            .then(b.voters.cmp(&a.voters))
            .then(a.project_id.cmp(&b.project_id))
    });
    for i in 0..rows.len() {
        rows[i].rank = if i > 0 && rows[i].votes == rows[i - 1].votes {
            rows[i - 1].rank
        } else {
            i as i32 + 1
        };
    }
    Ok(rows)
}

/// `Event.voteTally`: the published tally; NOT_FOUND (for everyone) until an organizer
/// published it after the window closed.
pub fn published_tally(c: Option<&vote_campaign::Model>) -> AppResult<Vec<TallyRow>> {
    let stored = c
        .and_then(|c| c.tally.as_deref())
        .ok_or(AppError::NotFound("vote tally"))?;
    serde_json::from_str(stored).map_err(|e| AppError::Internal(format!("stored tally: {e}")))
}
