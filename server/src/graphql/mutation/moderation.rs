//! Organizer moderation of submissions: hide and unhide, disqualify and requalify, mark
//! and clear duplicates. Each is audited with its reason; the live leaderboard hears of it.

use async_graphql::{Context, ID, Object};

use super::write::{begin, commit};
use crate::domain::moderation::{self, Action};
use crate::graphql::bus::BusEvent;
use crate::graphql::context::{CtxExt, ResultExt};
use crate::graphql::object::project::Project;
use crate::graphql::policy::{FieldGuard, Rule, Scope};

/// Who may call each mutation of this file, collected by [`crate::graphql::policy`].
/// The domain checks that the caller organizes the project's event.
pub(crate) const POLICIES: &[(&str, Rule)] = &[
    ("Mutation.hideProject", Rule::SignedIn),
    ("Mutation.unhideProject", Rule::SignedIn),
    ("Mutation.disqualifyProject", Rule::SignedIn),
    ("Mutation.requalifyProject", Rule::SignedIn),
    ("Mutation.markDuplicate", Rule::SignedIn),
    ("Mutation.clearDuplicate", Rule::SignedIn),
    ("Mutation.changeProjectTrack", Rule::SignedIn),
];

#[derive(Default)]
pub struct ModerationMutation;

async fn apply(ctx: &Context<'_>, id: &str, action: Action) -> async_graphql::Result<Project> {
    ctx.actor()?;
    let w = begin(ctx).await?;
    let p = moderation::moderate(&w, id, action).await.gql(ctx)?;
    commit(ctx, w).await?;
    ctx.services().bus.publish(BusEvent::JudgingChanged {
        event_id: p.event_id,
    });
    Ok(Project(p))
}

#[Object(guard = "FieldGuard::new(\"Mutation\", Scope::none())")]
impl ModerationMutation {
    /// Hides a project (the event's organizers): it leaves the gallery and the ranking; its
    /// team still sees it, with the reason. CONFLICT when it is hidden already.
    async fn hide_project(
        &self,
        ctx: &Context<'_>,
        #[graphql(desc = "The project's id or external id.")] id: ID,
        #[graphql(desc = "Why, shown to the project's team: 1 to 500 characters.")] reason: String,
    ) -> async_graphql::Result<Project> {
        apply(ctx, &id, Action::Hide(reason)).await
    }

    /// Shows a hidden project again (the event's organizers).
    async fn unhide_project(
        &self,
        ctx: &Context<'_>,
        #[graphql(desc = "The project's id or external id.")] id: ID,
    ) -> async_graphql::Result<Project> {
        apply(ctx, &id, Action::Unhide).await
    }

    /// Disqualifies a project (the event's organizers): it stays in the gallery and leaves
    /// the ranking; calibration runs record it as excluded with the reason, which its team
    /// sees. CONFLICT when it is disqualified already.
    async fn disqualify_project(
        &self,
        ctx: &Context<'_>,
        #[graphql(desc = "The project's id or external id.")] id: ID,
        #[graphql(desc = "Why, shown to the project's team: 1 to 500 characters.")] reason: String,
    ) -> async_graphql::Result<Project> {
        apply(ctx, &id, Action::Disqualify(reason)).await
    }

    /// Lifts a disqualification (the event's organizers).
    async fn requalify_project(
        &self,
        ctx: &Context<'_>,
        #[graphql(desc = "The project's id or external id.")] id: ID,
    ) -> async_graphql::Result<Project> {
        apply(ctx, &id, Action::Requalify).await
    }

    /// Marks a project as a duplicate of another of the same event (the event's
    /// organizers): it leaves the gallery and the ranking, excluded as `duplicate`. The
    /// original must not itself be a duplicate (BAD_USER_INPUT on `of`).
    async fn mark_duplicate(
        &self,
        ctx: &Context<'_>,
        #[graphql(desc = "The duplicate: id or external id.")] id: ID,
        #[graphql(desc = "The original it duplicates: id or external id.")] of: ID,
    ) -> async_graphql::Result<Project> {
        apply(ctx, &id, Action::MarkDuplicate(of.0)).await
    }

    /// Clears a duplicate mark (the event's organizers).
    async fn clear_duplicate(
        &self,
        ctx: &Context<'_>,
        #[graphql(desc = "The project's id or external id.")] id: ID,
    ) -> async_graphql::Result<Project> {
        apply(ctx, &id, Action::ClearDuplicate).await
    }

    /// Moves a project to another track of its event on its team's behalf (the event's
    /// organizers, at any time, also after the deadline, when the team can no longer edit
    /// it), with a reason that is audited.
    async fn change_project_track(
        &self,
        ctx: &Context<'_>,
        #[graphql(desc = "The project's id or external id.")] id: ID,
        #[graphql(desc = "The track to move it to: id or external id.")] track: ID,
        #[graphql(desc = "Why: 1 to 500 characters.")] reason: String,
    ) -> async_graphql::Result<Project> {
        let action = Action::MoveTrack {
            track: track.0,
            reason,
        };
        apply(ctx, &id, action).await
    }
}
