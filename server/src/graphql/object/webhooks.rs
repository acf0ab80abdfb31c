//! Webhooks (issue 12): an event's endpoints, their deliveries and each attempt, for the
//! event's organizers only. A webhook's secret is never a field: `registerWebhook` returns
//! it once ([`WebhookWithSecret`]).

use async_graphql::{Context, Enum, ID, Object};
use chrono::{DateTime, Utc};
use entity::webhook_delivery::{self, DeliveryStatus};
use entity::{webhook, webhook_attempt};
use sea_orm::{ColumnTrait, EntityTrait, QueryFilter};

use crate::audit::deliveries::filter_of;
use crate::domain::webhooks::attempts_of;
use crate::graphql::connection::{Page, page};
use crate::graphql::context::{CtxExt, ResultExt};
use crate::graphql::cost;
use crate::graphql::policy::{FieldGuard, Rule, Scope};

/// Who may read each field of the types in this file, collected by [`crate::graphql::policy`].
pub(crate) const POLICIES: &[(&str, Rule)] = &[
    ("Webhook.id", Rule::Organizer),
    ("Webhook.url", Rule::Organizer),
    ("Webhook.actions", Rule::Organizer),
    ("Webhook.active", Rule::Organizer),
    ("Webhook.createdAt", Rule::Organizer),
    ("Webhook.deliveries", Rule::Organizer),
    ("WebhookWithSecret.webhook", Rule::Organizer),
    ("WebhookWithSecret.secret", Rule::Organizer),
    ("WebhookDelivery.id", Rule::Organizer),
    ("WebhookDelivery.webhook", Rule::Organizer),
    ("WebhookDelivery.seq", Rule::Organizer),
    ("WebhookDelivery.action", Rule::Organizer),
    ("WebhookDelivery.body", Rule::Organizer),
    ("WebhookDelivery.status", Rule::Organizer),
    ("WebhookDelivery.attemptCount", Rule::Organizer),
    ("WebhookDelivery.nextAttemptAt", Rule::Organizer),
    ("WebhookDelivery.lastStatusCode", Rule::Organizer),
    ("WebhookDelivery.lastError", Rule::Organizer),
    ("WebhookDelivery.createdAt", Rule::Organizer),
    ("WebhookDelivery.deliveredAt", Rule::Organizer),
    ("WebhookDelivery.attempts", Rule::Organizer),
    ("WebhookAttempt.attempt", Rule::Organizer),
    ("WebhookAttempt.startedAt", Rule::Organizer),
    ("WebhookAttempt.durationMs", Rule::Organizer),
    ("WebhookAttempt.statusCode", Rule::Organizer),
    ("WebhookAttempt.error", Rule::Organizer),
    ("Event.webhooks", Rule::Organizer),
    ("Event.webhookDeliveries", Rule::Organizer),
];

/// Webhooks and their delivery log: a part of [`Event`](super::event::Event), merged into the one GraphQL type.
pub struct EventWebhooks(pub(super) super::event::EventRow);

/// Webhooks and their delivery log: a part of [`Event`](super::event::Event).
#[Object(guard = "FieldGuard::new(\"Event\", Scope::event(self.0.id))")]
impl EventWebhooks {
    /// The event's webhooks, oldest first (organizers), with their deliveries.
    #[graphql(complexity = "cost::short_list(child_complexity)")]
    async fn webhooks(
        &self,
        ctx: &Context<'_>,
    ) -> async_graphql::Result<Vec<super::webhooks::Webhook>> {
        let all = crate::domain::webhooks::of_event(&ctx.db().conn, self.0.id)
            .await
            .gql(ctx)?;
        Ok(all.into_iter().map(super::webhooks::Webhook).collect())
    }
    /// The deliveries of all the event's webhooks, oldest first (organizers): the delivery
    /// log, with each attempt.
    #[graphql(complexity = "cost::page(first, child_complexity)")]
    async fn webhook_deliveries(
        &self,
        ctx: &Context<'_>,
        #[graphql(desc = "Page size: 20 if omitted, at most the page limit (100 by default).")]
        first: Option<i32>,
        #[graphql(desc = "Start after this cursor (an edge's `cursor`); omit for the first page.")]
        after: Option<String>,
    ) -> async_graphql::Result<Page<super::webhooks::WebhookDelivery>> {
        super::webhooks::event_deliveries(ctx, self.0.id, first, after).await
    }
}

/// An endpoint that hears of an event's audited changes: each matching audit event is
/// POSTed to its URL, signed with its secret.
pub struct Webhook(pub webhook::Model);

/// An endpoint that hears of an event's audited changes: each matching audit event is
/// POSTed to its URL, signed with its secret.
#[Object(guard = "FieldGuard::new(\"Webhook\", Scope::event(self.0.event_id))")]
impl Webhook {
    /// Opaque id.
    async fn id(&self) -> ID {
        ID(self.0.public_id.clone())
    }
    /// Where deliveries are POSTed.
    async fn url(&self) -> &str {
        &self.0.url
    }
    /// The audit action prefixes it hears of (e.g. `project.submitted`, `vote`); empty for
    /// every action.
    async fn actions(&self) -> Vec<String> {
        filter_of(&self.0)
    }
    /// Whether it gets deliveries.
    async fn active(&self) -> bool {
        self.0.active
    }
    /// When it was registered.
    async fn created_at(&self) -> DateTime<Utc> {
        self.0.created_at
    }
    /// Its deliveries, oldest first.
    #[graphql(complexity = "cost::page(first, child_complexity)")]
    async fn deliveries(
        &self,
        ctx: &Context<'_>,
        #[graphql(desc = "Page size: 20 if omitted, at most the page limit (100 by default).")]
        first: Option<i32>,
        #[graphql(desc = "Start after this cursor (an edge's `cursor`); omit for the first page.")]
        after: Option<String>,
    ) -> async_graphql::Result<Page<WebhookDelivery>> {
        let event_id = self.0.event_id;
        let q = webhook_delivery::Entity::find()
            .filter(webhook_delivery::Column::WebhookId.eq(self.0.id));
        page(
            ctx,
            q,
            webhook_delivery::Column::Id,
            |d| d.id,
            first,
            after,
            |row| WebhookDelivery { event_id, row },
        )
        .await
    }
}

/// One page of the deliveries of the event `event_id`'s webhooks, oldest first.
pub async fn event_deliveries(
    ctx: &Context<'_>,
    event_id: i64,
    first: Option<i32>,
    after: Option<String>,
) -> async_graphql::Result<Page<WebhookDelivery>> {
    let q = webhook_delivery::Entity::find().filter(
        webhook_delivery::Column::WebhookId.in_subquery(
            sea_orm::sea_query::Query::select()
                .column(webhook::Column::Id)
                .from(webhook::Entity)
                .and_where(webhook::Column::EventId.eq(event_id))
                .to_owned(),
        ),
    );
    page(
        ctx,
        q,
        webhook_delivery::Column::Id,
        |d| d.id,
        first,
        after,
        |row| WebhookDelivery { event_id, row },
    )
    .await
}

/// A newly registered webhook and its secret, shown this once: receivers check each
/// delivery's `X-Verdict-Signature` with it.
pub struct WebhookWithSecret {
    pub webhook: webhook::Model,
    pub secret: String,
}

/// A newly registered webhook and its secret, shown this once: receivers check each
/// delivery's `X-Verdict-Signature` with it.
#[Object(guard = "FieldGuard::new(\"WebhookWithSecret\", Scope::event(self.webhook.event_id))")]
impl WebhookWithSecret {
    /// The webhook.
    async fn webhook(&self) -> Webhook {
        Webhook(self.webhook.clone())
    }
    /// The key of the HMAC-SHA256 in `X-Verdict-Signature` (`sha256=` and the hex MAC, keyed
    /// by this string's bytes, over `{X-Verdict-Delivery}.{X-Verdict-Timestamp}.{body}`).
    /// Never shown again.
    async fn secret(&self) -> &str {
        &self.secret
    }
}

/// Where a delivery is.
#[derive(Enum, Copy, Clone, Eq, PartialEq)]
pub enum WebhookDeliveryStatus {
    /// Waiting for its next attempt.
    Pending,
    /// The receiver answered 2xx.
    Delivered,
    /// Given up on after the last attempt; organizers may retry it.
    Failed,
}

/// One audit event on its way to one webhook.
pub struct WebhookDelivery {
    pub event_id: i64,
    pub row: webhook_delivery::Model,
}

/// One audit event on its way to one webhook.
#[Object(guard = "FieldGuard::new(\"WebhookDelivery\", Scope::event(self.event_id))")]
impl WebhookDelivery {
    /// Opaque id: the `X-Verdict-Delivery` header.
    async fn id(&self) -> ID {
        ID(self.row.public_id.clone())
    }
    /// The audit event's seq.
    async fn seq(&self) -> i64 {
        self.row.seq
    }
    /// The audit event's action.
    async fn action(&self) -> &str {
        &self.row.action
    }
    /// The webhook's id.
    #[graphql(complexity = "cost::load(child_complexity)")]
    async fn webhook(&self, ctx: &Context<'_>) -> async_graphql::Result<ID> {
        let w = webhook::Entity::find_by_id(self.row.webhook_id)
            .one(&ctx.db().conn)
            .await
            .gql(ctx)?;
        Ok(ID(w.map(|w| w.public_id).unwrap_or_default()))
    }
    /// The JSON body sent (the audit event).
    async fn body(&self) -> &str {
        &self.row.body
    }
    /// PENDING, DELIVERED or FAILED.
    async fn status(&self) -> WebhookDeliveryStatus {
        match self.row.status {
            DeliveryStatus::Pending => WebhookDeliveryStatus::Pending,
            DeliveryStatus::Delivered => WebhookDeliveryStatus::Delivered,
            DeliveryStatus::Failed => WebhookDeliveryStatus::Failed,
        }
    }
    /// How many attempts were made (one in progress included).
    async fn attempt_count(&self) -> i32 {
        self.row.attempts
    }
    /// When the next attempt is due, while pending.
    async fn next_attempt_at(&self) -> Option<DateTime<Utc>> {
        (self.row.status == DeliveryStatus::Pending).then_some(self.row.next_attempt_at)
    }
    /// The receiver's HTTP status at the last attempt, if it answered.
    async fn last_status_code(&self) -> Option<i32> {
        self.row.last_status
    }
    /// What went wrong at the last attempt, if anything (truncated).
    async fn last_error(&self) -> Option<&str> {
        self.row.last_error.as_deref()
    }
    /// When the audit event was written.
    async fn created_at(&self) -> DateTime<Utc> {
        self.row.created_at
    }
    /// When the receiver accepted it.
    async fn delivered_at(&self) -> Option<DateTime<Utc>> {
        self.row.delivered_at
    }
    /// Every attempt, first first: at most eight, and one per retry by hand.
    #[graphql(
        complexity = "cost::load(child_complexity.saturating_mul(crate::webhooks::MAX_ATTEMPTS as usize))"
    )]
    async fn attempts(&self, ctx: &Context<'_>) -> async_graphql::Result<Vec<WebhookAttempt>> {
        let rows = attempts_of(&ctx.db().conn, self.row.id).await.gql(ctx)?;
        let event_id = self.event_id;
        Ok(rows
            .into_iter()
            .map(|row| WebhookAttempt { event_id, row })
            .collect())
    }
}

/// One attempt at a delivery.
pub struct WebhookAttempt {
    event_id: i64,
    row: webhook_attempt::Model,
}

/// One attempt at a delivery.
#[Object(guard = "FieldGuard::new(\"WebhookAttempt\", Scope::event(self.event_id))")]
impl WebhookAttempt {
    /// 1 for the first attempt.
    async fn attempt(&self) -> i32 {
        self.row.attempt
    }
    /// When it began.
    async fn started_at(&self) -> DateTime<Utc> {
        self.row.started_at
    }
    /// How long it took, in milliseconds.
    async fn duration_ms(&self) -> i64 {
        self.row.duration_ms
    }
    /// The receiver's HTTP status, if it answered.
    async fn status_code(&self) -> Option<i32> {
        self.row.status_code
    }
    /// What went wrong, if anything (truncated).
    async fn error(&self) -> Option<&str> {
        self.row.error.as_deref()
    }
}
