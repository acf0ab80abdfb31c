//! Webhooks (issue 12): organizers register an event's endpoints ([`register`]), switch
//! them on and off ([`set_active`]) and retry a failed delivery by hand ([`retry`]).
//!
//! The URL passed the SSRF gate before the transaction began ([`CheckedUrl`], from
//! `crate::webhooks::check_url`: resolving a name is no work to do while holding the
//! write lock). The secret is generated here, returned once, and stored because the worker
//! needs it to sign every delivery; no field ever shows it again. The deliveries
//! themselves are written by the audit append (`crate::audit::deliveries`).

use entity::webhook_delivery::DeliveryStatus;
use entity::{event, webhook, webhook_attempt, webhook_delivery};
use sea_orm::{
    ActiveModelTrait, ColumnTrait, ConnectionTrait, EntityTrait, QueryFilter, QueryOrder, Set,
};
use serde_json::json;

use super::{Organizer, Write};
use crate::audit::Entry;
use crate::crypto::{bearer_token, public_id};
use crate::error::{AppError, AppResult};
use crate::webhooks::CheckedUrl;

/// The most webhooks an event may have.
pub const WEBHOOKS_MAX: u64 = 20;
/// The most prefixes an action filter may hold.
pub const FILTER_MAX: usize = 32;

/// An action filter: each prefix 1 to 64 characters of `a-z`, `0-9`, `_` and `.`;
/// duplicates dropped, sorted. BAD_USER_INPUT naming `actions`.
pub fn action_filter(actions: Option<Vec<String>>) -> AppResult<Vec<String>> {
    let mut list = actions.unwrap_or_default();
    if list.len() > FILTER_MAX {
        return Err(AppError::bad_input(
            "actions",
            format!("holds at most {FILTER_MAX} prefixes"),
        ));
    }
    for p in &mut list {
        *p = p.trim().to_owned();
        let ok = (1..=64).contains(&p.len())
            && p.chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_' || c == '.');
        if !ok {
            return Err(AppError::bad_input(
                "actions",
                format!("{p:?} is not an action prefix (a-z, 0-9, '_' and '.', 1 to 64)"),
            ));
        }
    }
    list.sort();
    list.dedup();
    Ok(list)
}

/// `registerWebhook`: a new active endpoint of `e` (organizers), and its secret, which is
/// shown this once.
pub async fn register(
    w: &Write,
    org: Organizer<'_>,
    url: CheckedUrl,
    actions: Vec<String>,
) -> AppResult<(webhook::Model, String)> {
    let (txn, actor, e) = (w.txn(), org.actor(), org.event());
    let count = sea_orm::PaginatorTrait::count(
        webhook::Entity::find().filter(webhook::Column::EventId.eq(e.id)),
        txn,
    )
    .await?;
    if count >= WEBHOOKS_MAX {
        return Err(AppError::conflict(format!(
            "an event has at most {WEBHOOKS_MAX} webhooks"
        )));
    }
    let t = w.now();
    let secret = bearer_token("whsec_");
    let id = public_id("whk");
    // The audit entry first, in place (its seq fixed in this transaction, the chain's head
    // held until it commits): a webhook hears of exactly what comes after its
    // registration on the chain.
    w.append_in_place(
        Entry::new("webhook.registered", "webhook", &id)
            .by(actor.public_id())
            .in_event(&e.external_id)
            .with(json!({ "url": url.url.as_str(), "actions": actions })),
    )
    .await?;
    let row = webhook::ActiveModel {
        public_id: Set(id),
        event_id: Set(e.id),
        url: Set(url.url.to_string()),
        secret: Set(secret.clone()),
        actions: Set(serde_json::to_string(&actions).unwrap_or_else(|_| "[]".into())),
        active: Set(true),
        created_by: Set(Some(actor.user.id)),
        created_at: Set(t),
        updated_at: Set(t),
        ..Default::default()
    }
    .insert(txn)
    .await?;
    Ok((row, secret))
}

/// A webhook by its public id, with its event; NOT_FOUND when missing.
pub async fn find<C: ConnectionTrait>(
    db: &C,
    id: &str,
) -> AppResult<(webhook::Model, event::Model)> {
    let w = webhook::Entity::find()
        .filter(webhook::Column::PublicId.eq(id))
        .one(db)
        .await?
        .ok_or(AppError::NotFound("webhook"))?;
    let e = event::Entity::find_by_id(w.event_id)
        .one(db)
        .await?
        .ok_or(AppError::NotFound("webhook"))?;
    Ok((w, e))
}

/// Hides a webhook from whoever does not organize its event (NOT_FOUND, as if missing).
async fn organizer_of<'a>(w: &'a Write, e: &'a event::Model) -> AppResult<Organizer<'a>> {
    w.try_organizer(e)
        .await?
        .ok_or(AppError::NotFound("webhook"))
}

/// `setWebhookActive`: switches a webhook on or off (organizers). An inactive webhook gets
/// no new deliveries, and its pending ones fail without being sent.
pub async fn set_active(w: &Write, id: &str, active: bool) -> AppResult<webhook::Model> {
    let (txn, actor) = (w.txn(), w.actor()?);
    let (hook, e) = find(txn, id).await?;
    organizer_of(w, &e).await?;
    let t = w.now();
    let public = hook.public_id.clone();
    let mut row: webhook::ActiveModel = hook.into();
    row.active = Set(active);
    row.updated_at = Set(t);
    let hook = row.update(txn).await?;
    // In place, like the registration: the switch takes effect at its own entry's seq.
    w.append_in_place(
        Entry::new(
            if active {
                "webhook.activated"
            } else {
                "webhook.deactivated"
            },
            "webhook",
            &public,
        )
        .by(actor.public_id())
        .in_event(&e.external_id),
    )
    .await?;
    Ok(hook)
}

/// `retryWebhookDelivery`: queues a failed delivery for an attempt now (organizers); its
/// webhook must be active. CONFLICT unless it failed.
pub async fn retry(w: &Write, id: &str) -> AppResult<(webhook_delivery::Model, i64)> {
    let (txn, actor) = (w.txn(), w.actor()?);
    let d = webhook_delivery::Entity::find()
        .filter(webhook_delivery::Column::PublicId.eq(id))
        .one(txn)
        .await?
        .ok_or(AppError::NotFound("delivery"))?;
    let hook = webhook::Entity::find_by_id(d.webhook_id)
        .one(txn)
        .await?
        .ok_or(AppError::NotFound("delivery"))?;
    let e = event::Entity::find_by_id(hook.event_id)
        .one(txn)
        .await?
        .ok_or(AppError::NotFound("delivery"))?;
    if w.try_organizer(&e).await?.is_none() {
        return Err(AppError::NotFound("delivery"));
    }
    if d.status != DeliveryStatus::Failed {
        return Err(AppError::conflict("only a failed delivery can be retried"));
    }
    if !hook.active {
        return Err(AppError::conflict(
            "the webhook is inactive: activate it first",
        ));
    }
    let t = w.now();
    let public = d.public_id.clone();
    let mut row: webhook_delivery::ActiveModel = d.into();
    row.status = Set(DeliveryStatus::Pending);
    row.next_attempt_at = Set(t);
    row.lease_until = Set(None);
    let d = row.update(txn).await?;
    w.append(
        Entry::new("webhook_delivery.retried", "webhook_delivery", &public)
            .by(actor.public_id())
            .in_event(&e.external_id)
            .with(json!({ "webhook": hook.public_id })),
    )
    .await?;
    Ok((d, e.id))
}

/// The event's webhooks, oldest first.
pub async fn of_event<C: ConnectionTrait>(db: &C, event_id: i64) -> AppResult<Vec<webhook::Model>> {
    Ok(webhook::Entity::find()
        .filter(webhook::Column::EventId.eq(event_id))
        .order_by_asc(webhook::Column::Id)
        .all(db)
        .await?)
}

/// A delivery's attempts, first first.
pub async fn attempts_of<C: ConnectionTrait>(
    db: &C,
    delivery_id: i64,
) -> AppResult<Vec<webhook_attempt::Model>> {
    Ok(webhook_attempt::Entity::find()
        .filter(webhook_attempt::Column::DeliveryId.eq(delivery_id))
        .order_by_asc(webhook_attempt::Column::Attempt)
        .all(db)
        .await?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn action_filters_are_checked_and_tidied() {
        assert_eq!(action_filter(None).unwrap(), Vec::<String>::new());
        assert_eq!(
            action_filter(Some(vec![
                "vote".into(),
                " project.submitted".into(),
                "vote".into()
            ]))
            .unwrap(),
            vec!["project.submitted".to_string(), "vote".to_string()]
        );
        for bad in ["", "Project", "a b", "x/y"] {
            assert!(
                matches!(action_filter(Some(vec![bad.into()])), Err(AppError::BadInput { ref field, .. }) if field == "actions"),
                "{bad:?}"
            );
        }
        assert!(action_filter(Some(vec!["a".into(); FILTER_MAX + 1])).is_err());
    }
}
