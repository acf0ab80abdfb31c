//! The event's campaign: its mode, credits and window (`configureVoting`), its allowlist,
//! and how many voters it has.

use std::collections::HashSet;

use chrono::{DateTime, Utc};
use entity::vote_campaign::VotingMode;
use entity::{event, vote_allowlist, vote_campaign, voter};
use sea_orm::{
    ActiveEnum, ActiveModelTrait, ColumnTrait, ConnectionTrait, EntityTrait, PaginatorTrait,
    QueryFilter, QuerySelect, Set,
};
use serde_json::json;

use super::{ALLOWLIST_MAX, CREDITS_MAX, locked_campaign, voter_address};
use crate::audit::Entry;
use crate::crypto::public_id;
use crate::domain::{Organizer, Write, validate};
use crate::error::{AppError, AppResult};

/// What `configureVoting` takes.
pub struct Config {
    pub mode: VotingMode,
    pub credits: i32,
    pub opens: DateTime<Utc>,
    pub closes: DateTime<Utc>,
    /// Replaces the allowlist when given (`email_allowlist` only).
    pub allowlist: Option<Vec<String>>,
}

/// Creates or changes the event's campaign (organizers) and sets the event's voting
/// window. The mode and the credits are fixed once anyone has registered or voted; the
/// window may move (to end voting early, or extend it) until the tally is published. A
/// new allowlist may not drop an address that has registered.
pub async fn configure(
    w: &Write,
    org: Organizer<'_>,
    config: Config,
) -> AppResult<vote_campaign::Model> {
    let (txn, actor, e) = (w.txn(), org.actor(), org.event());
    if !(1..=CREDITS_MAX).contains(&config.credits) {
        return Err(AppError::bad_input(
            "credits",
            format!("must be 1 to {CREDITS_MAX}"),
        ));
    }
    validate::window("closes", Some(config.opens), Some(config.closes))?;
    let allowlist = match &config.allowlist {
        Some(_) if config.mode != VotingMode::EmailAllowlist => {
            return Err(AppError::bad_input(
                "allowlist",
                "is only for the EMAIL_ALLOWLIST mode",
            ));
        }
        Some(list) if list.len() > ALLOWLIST_MAX => {
            return Err(AppError::bad_input(
                "allowlist",
                format!("holds at most {ALLOWLIST_MAX} addresses"),
            ));
        }
        Some(list) => {
            let mut set = HashSet::new();
            for (i, raw) in list.iter().enumerate() {
                set.insert(voter_address(&format!("allowlist[{i}]"), raw)?.1);
            }
            Some(set)
        }
        None => None,
    };
    let t = w.now();
    let existing = locked_campaign(txn, e.id, true).await?;
    let c = match existing {
        Some(c) => {
            if c.tally_published_at.is_some() {
                return Err(AppError::conflict(
                    "the tally is published: this vote is over",
                ));
            }
            let registered = voter_count(txn, c.id).await?;
            if registered > 0 && (c.mode != config.mode || c.credits != config.credits) {
                return Err(AppError::conflict(
                    "people have registered or voted: the mode and the credits can no longer change",
                ));
            }
            let mut row: vote_campaign::ActiveModel = c.into();
            row.mode = Set(config.mode);
            row.credits = Set(config.credits);
            row.updated_at = Set(t);
            row.update(txn).await?
        }
        None => {
            vote_campaign::ActiveModel {
                public_id: Set(public_id("vot")),
                event_id: Set(e.id),
                mode: Set(config.mode),
                credits: Set(config.credits),
                tally_published_at: Set(None),
                tally: Set(None),
                created_at: Set(t),
                updated_at: Set(t),
                ..Default::default()
            }
            .insert(txn)
            .await?
        }
    };
    if let Some(list) = &allowlist {
        replace_allowlist(txn, &c, list).await?;
    }
    let external_id = e.external_id.clone();
    let mut row: event::ActiveModel = e.clone().into();
    row.voting_open = Set(Some(config.opens));
    row.voting_close = Set(Some(config.closes));
    row.update(txn).await?;
    w.append(
        Entry::new("voting.configured", "vote_campaign", &c.public_id)
            .by(actor.public_id())
            .in_event(&external_id)
            .with(json!({
                "mode": c.mode.to_value(),
                "credits": c.credits,
                "opens": config.opens.to_rfc3339(),
                "closes": config.closes.to_rfc3339(),
                "allowlist": allowlist.as_ref().map(HashSet::len),
            })),
    )
    .await?;
    Ok(c)
}

/// Replaces the campaign's allowlist with `list` (mailboxes), unless that drops a mailbox
/// that has registered (CONFLICT).
async fn replace_allowlist<C: ConnectionTrait>(
    txn: &C,
    c: &vote_campaign::Model,
    list: &HashSet<String>,
) -> AppResult<()> {
    let registered: Vec<String> = voter::Entity::find()
        .select_only()
        .column(voter::Column::Email)
        .filter(voter::Column::CampaignId.eq(c.id))
        .into_tuple()
        .all(txn)
        .await?;
    let dropped = registered.iter().filter(|m| !list.contains(*m)).count();
    if dropped > 0 {
        return Err(AppError::conflict(format!(
            "the new allowlist drops {dropped} address(es) that already registered to vote"
        )));
    }
    vote_allowlist::Entity::delete_many()
        .filter(vote_allowlist::Column::CampaignId.eq(c.id))
        .exec(txn)
        .await?;
    let mut sorted: Vec<&String> = list.iter().collect();
    sorted.sort();
    for chunk in sorted.chunks(1_000) {
        vote_allowlist::Entity::insert_many(chunk.iter().map(|m| vote_allowlist::ActiveModel {
            campaign_id: Set(c.id),
            email: Set((*m).clone()),
        }))
        .exec_without_returning(txn)
        .await?;
    }
    Ok(())
}

/// How many addresses the campaign's allowlist holds.
pub async fn allowlist_len<C: ConnectionTrait>(db: &C, campaign_id: i64) -> AppResult<u64> {
    Ok(vote_allowlist::Entity::find()
        .filter(vote_allowlist::Column::CampaignId.eq(campaign_id))
        .count(db)
        .await?)
}

/// How many voters registered (email) or cast votes (accounts).
pub async fn voter_count<C: ConnectionTrait>(db: &C, campaign_id: i64) -> AppResult<u64> {
    Ok(voter::Entity::find()
        .filter(voter::Column::CampaignId.eq(campaign_id))
        .count(db)
        .await?)
}
