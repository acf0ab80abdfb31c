//! Tracks renamed, and removed while nothing uses them (`createTrack` is with the other
//! event set-up mutations).

use async_graphql::{Context, ID, Object};

use super::write::{begin, commit};
use crate::domain::tracks;
use crate::graphql::context::{CtxExt, ResultExt};
use crate::graphql::object::event::Track;
use crate::graphql::policy::{FieldGuard, Rule, Scope};

/// Who may call each mutation of this file, collected by [`crate::graphql::policy`].
/// The domain checks that the caller organizes the track's event.
pub(crate) const POLICIES: &[(&str, Rule)] = &[
    ("Mutation.renameTrack", Rule::SignedIn),
    ("Mutation.deleteTrack", Rule::SignedIn),
];

#[derive(Default)]
pub struct TrackMutation;

#[Object(guard = "FieldGuard::new(\"Mutation\", Scope::none())")]
impl TrackMutation {
    /// Renames a track (the event's organizers). BAD_USER_INPUT on `name` when it is empty
    /// or longer than 200 characters; CONFLICT when the track has that name already.
    async fn rename_track(
        &self,
        ctx: &Context<'_>,
        #[graphql(desc = "The track's id or external id.")] id: ID,
        #[graphql(desc = "The new name: one line of 1 to 200 characters.")] name: String,
    ) -> async_graphql::Result<Track> {
        ctx.actor()?;
        let txn = begin(ctx).await?;
        let t = tracks::rename_track(&txn, &id, &name).await.gql(ctx)?;
        commit(ctx, txn).await?;
        Ok(Track(t))
    }

    /// Deletes a track nothing uses (the event's organizers) and returns its id. CONFLICT
    /// naming what uses it when projects (drafts included), prizes or judges limited to it
    /// do: move them first.
    async fn delete_track(
        &self,
        ctx: &Context<'_>,
        #[graphql(desc = "The track's id or external id.")] id: ID,
    ) -> async_graphql::Result<ID> {
        ctx.actor()?;
        let txn = begin(ctx).await?;
        let t = tracks::delete_track(&txn, &id).await.gql(ctx)?;
        commit(ctx, txn).await?;
        Ok(ID(t.public_id))
    }
}
