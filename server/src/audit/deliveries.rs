//! The webhook deliveries of an audit event, written in the transaction that appends it to
//! the chain (`super::sequencer::integrate`; the outbox pattern, as for mail): one row per active webhook of the event
//! whose action filter matches, carrying the exact body the worker signs and sends
//! (`crate::webhooks`).
//!
//! Cost: one indexed query per append (of one entry or of a sequencer run's batch) that
//! names an event (webhooks by the events' external ids), usually answering nothing; nothing is cached, so a webhook registered or
//! switched off by another process counts from its commit on.

use entity::webhook_delivery::{self, DeliveryStatus};
use entity::{audit_event, event, webhook};
use sea_orm::sea_query::Query;
use sea_orm::{
    ActiveValue::Set, ColumnTrait, ConnectionTrait, EntityTrait, QueryFilter, QuerySelect,
};
use serde_json::json;

use crate::crypto::{canonical_json, public_id};
use crate::error::AppResult;

/// Whether `action` passes a webhook's filter: the filter is empty (every action), or one
/// of its entries is a prefix of the action (`vote` matches `votes.cast` and
/// `vote_tally.published`; `project.submitted` only itself).
pub fn matches(filter: &[String], action: &str) -> bool {
    filter.is_empty() || filter.iter().any(|p| action.starts_with(p.as_str()))
}

/// The action filter stored on a webhook (a JSON array of prefixes).
pub fn filter_of(w: &webhook::Model) -> Vec<String> {
    serde_json::from_str(&w.actions).unwrap_or_default()
}

/// What a receiver gets: the audit event, as canonical JSON.
pub fn body(row: &audit_event::Model) -> String {
    let payload: serde_json::Value =
        serde_json::from_str(&row.payload).unwrap_or(serde_json::Value::Null);
    canonical_json(&json!({
        "seq": row.seq,
        "occurredAt": row.occurred_at,
        "action": row.action,
        "event": row.event,
        "actor": row.actor,
        "object": { "type": row.object_type, "id": row.object_id },
        "payload": payload,
        "payloadHash": row.payload_hash,
        "prevHash": row.prev_hash,
        "rowHash": row.row_hash,
    }))
}

/// Writes the deliveries of `rows` (audit events being appended), due now: one query for
/// the active webhooks of their events, and when there are any, one for those events' ids
/// and one insert.
pub async fn enqueue<C: ConnectionTrait>(txn: &C, rows: &[audit_event::Model]) -> AppResult<usize> {
    let mut events: Vec<&str> = rows
        .iter()
        .map(|r| r.event.as_str())
        .filter(|e| !e.is_empty())
        .collect();
    events.sort_unstable();
    events.dedup();
    if events.is_empty() {
        return Ok(0);
    }
    let hooks = webhook::Entity::find()
        .filter(
            webhook::Column::EventId.in_subquery(
                Query::select()
                    .column(event::Column::Id)
                    .from(event::Entity)
                    .and_where(event::Column::ExternalId.is_in(events.iter().copied()))
                    .to_owned(),
            ),
        )
        .filter(webhook::Column::Active.eq(true))
        .all(txn)
        .await?;
    if hooks.is_empty() {
        return Ok(0);
    }
    let ids: Vec<(i64, String)> = event::Entity::find()
        .filter(event::Column::ExternalId.is_in(events.iter().copied()))
        .select_only()
        .column(event::Column::Id)
        .column(event::Column::ExternalId)
        .into_tuple()
        .all(txn)
        .await?;
    let filters: Vec<Vec<String>> = hooks.iter().map(filter_of).collect();
    let mut due = Vec::new();
    for row in rows {
        let Some(event_id) = ids.iter().find(|(_, x)| *x == row.event).map(|(id, _)| *id) else {
            continue;
        };
        for (w, filter) in hooks.iter().zip(&filters) {
            if w.event_id == event_id && matches(filter, &row.action) {
                due.push((w.id, row));
            }
        }
    }
    if due.is_empty() {
        return Ok(0);
    }
    let t = crate::db::now(txn).await?;
    let n = due.len();
    webhook_delivery::Entity::insert_many(due.into_iter().map(|(webhook_id, row)| {
        webhook_delivery::ActiveModel {
            public_id: Set(public_id("whd")),
            webhook_id: Set(webhook_id),
            seq: Set(row.seq),
            action: Set(row.action.clone()),
            body: Set(body(row)),
            status: Set(DeliveryStatus::Pending),
            attempts: Set(0),
            next_attempt_at: Set(t),
            lease_until: Set(None),
            last_status: Set(None),
            last_error: Set(None),
            created_at: Set(t),
            delivered_at: Set(None),
            ..Default::default()
        }
    }))
    .exec_without_returning(txn)
    .await?;
    Ok(n)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn filters_are_prefixes_and_empty_means_every_action() {
        let f = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert!(matches(&[], "project.submitted"));
        assert!(matches(&f(&["project"]), "project.submitted"));
        assert!(matches(&f(&["vote"]), "votes.cast"));
        assert!(matches(
            &f(&["track", "project.submitted"]),
            "project.submitted"
        ));
        assert!(!matches(&f(&["project.submitted"]), "project.withdrawn"));
        assert!(!matches(&f(&["review"]), "project.submitted"));
    }

    #[test]
    fn the_body_is_the_audit_event() {
        let row = audit_event::Model {
            seq: 7,
            occurred_at: "2026-12-02T10:00:00.000000Z".into(),
            actor: "usr.a".into(),
            event: "evt_x".into(),
            action: "project.submitted".into(),
            object_type: "project".into(),
            object_id: "prj.b".into(),
            payload: r#"{"title":"T"}"#.into(),
            payload_hash: "ph".into(),
            prev_hash: "pv".into(),
            row_hash: "rh".into(),
        };
        let v: serde_json::Value = serde_json::from_str(&body(&row)).unwrap();
        assert_eq!(v["seq"], 7);
        assert_eq!(v["action"], "project.submitted");
        assert_eq!(v["object"]["id"], "prj.b");
        assert_eq!(v["payload"]["title"], "T");
        assert_eq!(v["rowHash"], "rh");
    }
}
