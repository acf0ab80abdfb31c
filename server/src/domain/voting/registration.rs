//! Email voters: asking for a voting link (`registerVoter`) and following it
//! (`confirmVoter`), which gives the voter a key to vote with.

use chrono::Duration;
use entity::vote_campaign::VotingMode;
use entity::{event, vote_allowlist, vote_campaign, voter};
use sea_orm::{ActiveModelTrait, ColumnTrait, EntityTrait, QueryFilter, QuerySelect, Set};
use serde_json::json;

use super::{
    LINK_HOURS, LINKS_CLIENT_FACTOR, LINKS_PER_ADDRESS, LINKS_PER_EVENT, open_now,
    require_campaign, voter_address,
};
use crate::audit::Entry;
use crate::crypto::{bearer_token, public_id, sha256_hex};
use crate::domain::Write;
use crate::domain::outbox::{self, Links};
use crate::domain::throttle::take_slot;
use crate::error::{AppError, AppResult};

/// `registerVoter`: sends a single-use voting link to `raw` through the outbox, while the
/// campaign (an email mode) takes votes; the same address again gets a fresh link (the old
/// one stops working). Two kinds of mailbox get no link but a message saying why: one that
/// already registered under another spelling (or through an account), and one that is not
/// on the allowlist of an `email_allowlist` campaign. For both, the asker's answer, the
/// throttle that counts it and the work done for it (one message queued, one audit entry:
/// `voter.registration_repeated`, `voter.registration_refused`) are the same as for a
/// listed mailbox never seen, so the answer tells nobody who registered or who is on the
/// list; only the mailbox learns it, and the organizers from their audit log. Throttled
/// per mailbox, per client address and per event (RATE_LIMITED), before anything is
/// looked up.
pub async fn register(
    w: &Write,
    e: &event::Model,
    raw: &str,
    client: &str,
    links: &Links,
) -> AppResult<()> {
    let txn = w.txn();
    let c = require_campaign(txn, e.id, false).await?;
    if c.mode == VotingMode::Account {
        return Err(AppError::forbidden(
            "this vote is for signed-in accounts: sign in to vote",
        ));
    }
    let t = open_now(w, e, &c).await?;
    let (address, mailbox) = voter_address("email", raw)?;
    // The mailbox's bucket also orders two spellings of one mailbox: the second reads the
    // first's voter row below.
    take_slot(txn, &format!("vote-link:{mailbox}"), LINKS_PER_ADDRESS, t).await?;
    take_slot(
        txn,
        &format!("vote-link-client:{client}"),
        LINKS_PER_ADDRESS * LINKS_CLIENT_FACTOR,
        t,
    )
    .await?;
    take_slot(
        txn,
        &format!("vote-link-event:{}", e.id),
        LINKS_PER_EVENT,
        t,
    )
    .await?;
    if c.mode == VotingMode::EmailAllowlist
        && vote_allowlist::Entity::find_by_id((c.id, mailbox.clone()))
            .one(txn)
            .await?
            .is_none()
    {
        // Not a refusal the asker sees: the mailbox is told, and the organizers' log
        // records it under the mailbox's hash (no address from a stranger in the log).
        outbox::enqueue(w, outbox::vote_not_listed(&address, &e.name), None, None).await?;
        w.append(
            Entry::new(
                "voter.registration_refused",
                "email",
                &sha256_hex(mailbox.as_bytes()),
            )
            .in_event(&e.external_id)
            .with(json!({ "reason": "not on the allowlist" })),
        )
        .await?;
        return Ok(());
    }
    let token = bearer_token("vv_");
    let hash = sha256_hex(token.as_bytes());
    let expires = t + Duration::hours(LINK_HOURS);
    let existing = voter::Entity::find()
        .filter(voter::Column::CampaignId.eq(c.id))
        .filter(voter::Column::Email.eq(&mailbox))
        .one(txn)
        .await?;
    let (v, action) = match existing {
        Some(v) if v.address != address || v.user_id.is_some() => {
            let message = outbox::vote_already_registered(&address, &e.name, v.user_id.is_some());
            outbox::enqueue(w, message, None, None).await?;
            w.append(
                Entry::new("voter.registration_repeated", "voter", &v.public_id)
                    .in_event(&e.external_id),
            )
            .await?;
            return Ok(());
        }
        Some(v) => {
            let mut row: voter::ActiveModel = v.into();
            row.confirm_token_hash = Set(Some(hash));
            row.confirm_expires_at = Set(Some(expires));
            row.updated_at = Set(t);
            (row.update(txn).await?, "voter.link_resent")
        }
        None => (
            voter::ActiveModel {
                public_id: Set(public_id("vtr")),
                campaign_id: Set(c.id),
                user_id: Set(None),
                email: Set(mailbox),
                address: Set(address.clone()),
                confirm_token_hash: Set(Some(hash)),
                confirm_expires_at: Set(Some(expires)),
                key_hash: Set(None),
                confirmed_at: Set(None),
                credits: Set(c.credits),
                spent: Set(0),
                created_at: Set(t),
                updated_at: Set(t),
                ..Default::default()
            }
            .insert(txn)
            .await?,
            "voter.registered",
        ),
    };
    let link = links.vote(&e.slug, &token);
    // No event id: the event's outbox, which organizers read, never shows a voter's link.
    outbox::enqueue(
        w,
        outbox::vote_link(&address, &e.name, expires, &link),
        None,
        None,
    )
    .await?;
    w.append(Entry::new(action, "voter", &v.public_id).in_event(&e.external_id))
        .await?;
    Ok(())
}

/// `confirmVoter`: follows a voting link. The token works once and for [`LINK_HOURS`],
/// while the campaign takes votes; it confirms the address and returns a fresh key to vote
/// with (a key given before stops working). An unknown or used token is NOT_FOUND, an
/// expired one WINDOW_CLOSED.
pub async fn confirm(w: &Write, token: &str) -> AppResult<(event::Model, String)> {
    let txn = w.txn();
    let v = voter::Entity::find()
        .filter(voter::Column::ConfirmTokenHash.eq(sha256_hex(token.trim().as_bytes())))
        .lock_exclusive()
        .one(txn)
        .await?
        .ok_or(AppError::NotFound("voting link"))?;
    let c = vote_campaign::Entity::find_by_id(v.campaign_id)
        .one(txn)
        .await?
        .ok_or(AppError::NotFound("voting"))?;
    // Read, not locked: the voter row is locked already, and every other write locks the
    // event before a voter row; locking it here would invert that order (a deadlock).
    let e = event::Entity::find_by_id(c.event_id)
        .one(txn)
        .await?
        .ok_or(AppError::NotFound("event"))?;
    let t = open_now(w, &e, &c).await?;
    if v.confirm_expires_at.is_some_and(|x| t >= x) {
        return Err(AppError::WindowClosed(
            "this voting link has expired; ask for a new one".into(),
        ));
    }
    let key = bearer_token("vk_");
    let public = v.public_id.clone();
    let mut row: voter::ActiveModel = v.clone().into();
    row.confirm_token_hash = Set(None);
    row.confirm_expires_at = Set(None);
    row.key_hash = Set(Some(sha256_hex(key.as_bytes())));
    row.confirmed_at = Set(Some(v.confirmed_at.unwrap_or(t)));
    row.updated_at = Set(t);
    row.update(txn).await?;
    w.append(Entry::new("voter.confirmed", "voter", &public).in_event(&e.external_id))
        .await?;
    Ok((e, key))
}
