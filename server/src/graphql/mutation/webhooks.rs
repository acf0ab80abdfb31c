//! Webhook mutations (issue 12): organizers register an event's endpoints, switch them on
//! and off, and retry a failed delivery.

use async_graphql::{Context, ID, Object};

use super::write::{begin, commit};
use crate::domain::webhooks;
use crate::graphql::context::{CtxExt, ResultExt};
use crate::graphql::object::webhooks::{Webhook, WebhookDelivery, WebhookWithSecret};
use crate::graphql::policy::{FieldGuard, Rule, Scope};

/// Who may call each mutation of this file, collected by [`crate::graphql::policy`].
pub(crate) const POLICIES: &[(&str, Rule)] = &[
    // Each checks that the caller organizes the webhook's event.
    ("Mutation.registerWebhook", Rule::SignedIn),
    ("Mutation.setWebhookActive", Rule::SignedIn),
    ("Mutation.retryWebhookDelivery", Rule::SignedIn),
];

#[derive(Default)]
pub struct WebhookMutation;

#[Object(guard = "FieldGuard::new(\"Mutation\", Scope::none())")]
impl WebhookMutation {
    /// Registers an endpoint that hears of the event's audited changes (organizers): each
    /// matching audit event is POSTed to `url` as JSON, signed with the secret returned
    /// here, once. The URL must be http or https without credentials, and every address
    /// its host resolves to public (no loopback, private, link-local, shared, reserved or
    /// multicast address, in any spelling): otherwise BAD_USER_INPUT naming `url`.
    async fn register_webhook(
        &self,
        ctx: &Context<'_>,
        #[graphql(desc = "The event, by slug.")] event: String,
        #[graphql(desc = "The receiver's http or https URL.")] url: String,
        #[graphql(
            desc = "Prefixes of the audit actions to hear of (e.g. `project.submitted`, \
                    `vote`); omitted or empty for every action."
        )]
        actions: Option<Vec<String>>,
    ) -> async_graphql::Result<WebhookWithSecret> {
        ctx.actor()?;
        let actions = webhooks::action_filter(actions).gql(ctx)?;
        // Resolved before the write transaction: no lookup while holding the write lock.
        let checked = crate::webhooks::check_url(&url, ctx.services().webhooks.allow_loopback)
            .await
            .gql(ctx)?;
        let w = begin(ctx).await?;
        let e = w.event(&event).await.gql(ctx)?;
        let (webhook, secret) =
            webhooks::register(&w, w.organizer(&e).await.gql(ctx)?, checked, actions)
                .await
                .gql(ctx)?;
        commit(ctx, w).await?;
        Ok(WebhookWithSecret { webhook, secret })
    }

    /// Switches a webhook on or off (organizers; NOT_FOUND for others). An inactive webhook
    /// gets no new deliveries, and its pending ones fail unsent.
    async fn set_webhook_active(
        &self,
        ctx: &Context<'_>,
        #[graphql(desc = "The webhook's id.")] id: ID,
        #[graphql(desc = "Whether it gets deliveries.")] active: bool,
    ) -> async_graphql::Result<Webhook> {
        ctx.actor()?;
        let w = begin(ctx).await?;
        let webhook = webhooks::set_active(&w, &id, active).await.gql(ctx)?;
        commit(ctx, w).await?;
        Ok(Webhook(webhook))
    }

    /// Queues a FAILED delivery for an attempt now (organizers; NOT_FOUND for others);
    /// CONFLICT when it has not failed or its webhook is inactive.
    async fn retry_webhook_delivery(
        &self,
        ctx: &Context<'_>,
        #[graphql(desc = "The delivery's id.")] id: ID,
    ) -> async_graphql::Result<WebhookDelivery> {
        ctx.actor()?;
        let w = begin(ctx).await?;
        let (row, event_id) = webhooks::retry(&w, &id).await.gql(ctx)?;
        commit(ctx, w).await?;
        Ok(WebhookDelivery { event_id, row })
    }
}
