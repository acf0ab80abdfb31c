//! The audit chain as organizers read it: one [`AuditEvent`] per link, exactly as hashed.

use async_graphql::{Context, Json, Object};
use entity::audit_event;
use sea_orm::{ColumnTrait, EntityTrait, QueryFilter};

use crate::graphql::connection::{Page, page};
use crate::graphql::cost;
use crate::graphql::policy::{FieldGuard, Rule, Scope};

/// Who may read each field of the types in this file, collected by [`crate::graphql::policy`].
pub(crate) const POLICIES: &[(&str, Rule)] = &[
    ("AuditEvent.seq", Rule::Organizer),
    ("AuditEvent.occurredAt", Rule::Organizer),
    ("AuditEvent.actor", Rule::Organizer),
    ("AuditEvent.event", Rule::Organizer),
    ("AuditEvent.action", Rule::Organizer),
    ("AuditEvent.objectType", Rule::Organizer),
    ("AuditEvent.objectId", Rule::Organizer),
    ("AuditEvent.payload", Rule::Organizer),
    ("AuditEvent.prevHash", Rule::Organizer),
    ("AuditEvent.rowHash", Rule::Organizer),
    ("Event.auditLog", Rule::Organizer),
];

/// The event's slice of the audit chain: a part of [`Event`](super::event::Event), merged into the one GraphQL type.
pub struct EventAudit(pub(super) super::event::EventRow);

/// The event's slice of the audit chain: a part of [`Event`](super::event::Event).
#[Object(guard = "FieldGuard::new(\"Event\", Scope::event(self.0.id))")]
impl EventAudit {
    /// This event's slice of the audit chain, oldest first (organizers only).
    #[graphql(complexity = "cost::page(first, child_complexity)")]
    async fn audit_log(
        &self,
        ctx: &Context<'_>,
        #[graphql(desc = "Page size: 20 if omitted, at most the page limit (100 by default).")]
        first: Option<i32>,
        #[graphql(desc = "Start after this cursor (an edge's `cursor`); omit for the first page.")]
        after: Option<String>,
    ) -> async_graphql::Result<Page<AuditEvent>> {
        let q = audit_event::Entity::find()
            .filter(audit_event::Column::Event.eq(self.0.external_id.clone()));
        let event_id = self.0.id;
        page(
            ctx,
            q,
            audit_event::Column::Seq,
            |a| a.seq,
            first,
            after,
            |a| AuditEvent(a, event_id),
        )
        .await
    }
}

/// One link of the audit chain.
pub struct AuditEvent(pub audit_event::Model, pub i64);

/// One link of the audit chain.
#[Object(guard = "FieldGuard::new(\"AuditEvent\", Scope::event(self.1))")]
impl AuditEvent {
    /// Position in the chain, contiguous from 1.
    async fn seq(&self) -> i64 {
        self.0.seq
    }
    /// The exact timestamp string that was hashed.
    async fn occurred_at(&self) -> &str {
        &self.0.occurred_at
    }
    /// The acting user's id, or empty for the system.
    async fn actor(&self) -> &str {
        &self.0.actor
    }
    /// The event's external id.
    async fn event(&self) -> &str {
        &self.0.event
    }
    /// What happened, as `noun.verb_past`.
    async fn action(&self) -> &str {
        &self.0.action
    }
    /// The kind of object acted on, in snake_case (e.g. `project`, `calibration_run`).
    async fn object_type(&self) -> &str {
        &self.0.object_type
    }
    /// The opaque id of the object acted on.
    async fn object_id(&self) -> &str {
        &self.0.object_id
    }
    /// The canonical JSON payload.
    async fn payload(&self) -> Json<serde_json::Value> {
        Json(serde_json::from_str(&self.0.payload).unwrap_or_default())
    }
    /// The `rowHash` of the link before this one in the whole chain, which may belong to
    /// another event; 64 zeros for the first link.
    async fn prev_hash(&self) -> &str {
        &self.0.prev_hash
    }
    /// SHA-256 (lower-case hex) over `prevHash`, this link's fields and its payload's hash.
    async fn row_hash(&self) -> &str {
        &self.0.row_hash
    }
}
