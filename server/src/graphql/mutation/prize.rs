//! Prize mutations (issue 12): organizers create an event's prizes and may assign a winner
//! by hand; otherwise the podium derives it from the published ranking.

use async_graphql::{Context, ID, InputObject, Object};
use serde_json::json;

use super::write::idempotent;
use crate::domain::idempotency::Key;
use crate::domain::prizes::{self, NewPrize};
use crate::graphql::context::{CtxExt, ResultExt};
use crate::graphql::object::prize::Prize;
use crate::graphql::policy::{FieldGuard, Rule, Scope};

/// Who may call each mutation of this file, collected by [`crate::graphql::policy`].
pub(crate) const POLICIES: &[(&str, Rule)] = &[
    ("Mutation.createPrize", Rule::SignedIn),
    ("Mutation.assignPrize", Rule::SignedIn),
];

/// A new prize.
#[derive(InputObject)]
pub struct PrizeInput {
    /// One line of 1 to 200 characters.
    pub name: String,
    /// A track of the event, by id or external id: the prize goes to the best of that
    /// track; omitted for an overall prize.
    pub track: Option<ID>,
    /// The place it goes to, 1 = best, up to 100; 0 for a special award (a winner only
    /// when assigned).
    pub position: i32,
    /// What it is for: up to 2,000 characters.
    pub description: Option<String>,
}

#[derive(Default)]
pub struct PrizeMutation;

#[Object(guard = "FieldGuard::new(\"Mutation\", Scope::none())")]
impl PrizeMutation {
    /// Creates a prize of the event (organizers). Refusals name the field: BAD_USER_INPUT
    /// for a name, position, description or track (a track of another event included).
    async fn create_prize(
        &self,
        ctx: &Context<'_>,
        #[graphql(desc = "The event, by slug; NOT_FOUND when no event has it.")] event: String,
        #[graphql(desc = "The prize: name, position, optional track and description.")]
        input: PrizeInput,
        #[graphql(
            desc = "Retry key (1-200 characters, per caller): a retry with the same key and \
                    input returns the first result without writing again; the same key with \
                    another request is a CONFLICT."
        )]
        idempotency_key: Option<String>,
    ) -> async_graphql::Result<Prize> {
        let actor = ctx.actor()?;
        let key = Key::new(
            idempotency_key,
            "createPrize",
            &json!({ "event": event, "name": input.name, "track": input.track.as_deref(),
                     "position": input.position, "description": input.description }),
        )
        .gql(ctx)?;
        let new = NewPrize {
            name: input.name,
            track: input.track.map(|t| t.0),
            position: input.position,
            description: input.description,
        };
        let p = idempotent(ctx, &actor, key, async |w| {
            let e = w.event(&event).await?;
            prizes::create_prize(w, w.organizer(&e).await?, new).await
        })
        .await?;
        Ok(Prize(p))
    }

    /// Assigns a prize's winner by hand (organizers), or clears it with `project` null,
    /// after which the podium derives it from the ranking again. The winner must be a
    /// submitted project of the event (of the prize's track for a track prize).
    async fn assign_prize(
        &self,
        ctx: &Context<'_>,
        #[graphql(desc = "The prize's id.")] id: ID,
        #[graphql(desc = "The winner, by id or external id; null clears the assignment.")]
        project: Option<ID>,
    ) -> async_graphql::Result<Prize> {
        let actor = ctx.actor()?;
        let p = idempotent(ctx, &actor, None, async |w| {
            prizes::assign_prize(w, &id, project.as_ref().map(|p| p.as_str())).await
        })
        .await?;
        Ok(Prize(p))
    }
}
