//! Pairwise judging mutations (issue 26): organizers choose the judging mode; judges
//! compare two projects, or skip one, as they walk their route (`domain::judging::pairwise`).

use async_graphql::{Context, ID, Object};
use serde_json::json;

use super::write::{begin, commit, idempotent};
use crate::domain::idempotency::Key;
use crate::domain::judging::pairwise;
use crate::graphql::bus::BusEvent;
use crate::graphql::context::{CtxExt, ResultExt};
use crate::graphql::object::event::Event;
use crate::graphql::object::pairwise::{Comparison, JudgingModeValue};
use crate::graphql::policy::{FieldGuard, Rule, Scope};

/// Who may call each mutation of this file, collected by [`crate::graphql::policy`].
pub(crate) const POLICIES: &[(&str, Rule)] = &[
    // The event's organizers, checked inside: others are FORBIDDEN.
    ("Mutation.setJudgingMode", Rule::SignedIn),
    // The event's judges, checked inside: others are FORBIDDEN.
    ("Mutation.compareProjects", Rule::SignedIn),
    ("Mutation.skipComparison", Rule::SignedIn),
];

#[derive(Default)]
pub struct PairwiseMutation;

#[Object(guard = "FieldGuard::new(\"Mutation\", Scope::none())")]
impl PairwiseMutation {
    /// Sets how the event's judges judge (organizers): `SCORES`, `PAIRWISE` or `BOTH`, for
    /// the whole event or, with `track`, for that track's projects (a track judged on the
    /// expo floor by comparisons beside tracks judged by the rubric; setting a track to the
    /// event's mode makes it follow the event again). Only until judging opens:
    /// WINDOW_CLOSED after. CONFLICT when it is the mode already; BAD_USER_INPUT naming
    /// `track` for a track of another event.
    async fn set_judging_mode(
        &self,
        ctx: &Context<'_>,
        #[graphql(desc = "The event, by slug; NOT_FOUND when no event has it.")] event: String,
        #[graphql(desc = "The new judging mode.")] mode: JudgingModeValue,
        #[graphql(
            desc = "One track of the event (id or external id) to set the mode of; omitted: the event's own mode, which every track without a mode of its own follows."
        )]
        track: Option<ID>,
    ) -> async_graphql::Result<Event> {
        ctx.actor()?;
        let w = begin(ctx).await?;
        // Exclusive: this write changes the event (or a track) that judges' writes read.
        let e = w.event(&event).await.gql(ctx)?;
        let org = w.organizer(&e).await.gql(ctx)?;
        let e =
            pairwise::set_judging_mode(&w, org, mode.into(), track.as_ref().map(|t| t.as_str()))
                .await
                .gql(ctx)?;
        commit(ctx, w).await?;
        Ok(Event::new(e))
    }

    /// Records, as a judge of the event, that `better` was better than `worse`, while
    /// judging is open in a `PAIRWISE` or `BOTH` event. One comparison per judge and pair:
    /// comparing the pair the other way round revises it (`version` counts up); the same way
    /// again is a CONFLICT. FORBIDDEN for anyone who does not judge the event, and for a
    /// project of the judge's own team, of a team they are recused from or of a track they
    /// do not cover; BAD_USER_INPUT naming `better` or `worse` for anything but a submitted
    /// project of the event, or the same project twice; CONFLICT when the event is judged by
    /// scores only; WINDOW_CLOSED outside the judging window.
    async fn compare_projects(
        &self,
        ctx: &Context<'_>,
        #[graphql(desc = "The event, by slug; NOT_FOUND when no event has it.")] event: String,
        #[graphql(desc = "The project judged better: id or external id.")] better: ID,
        #[graphql(desc = "The project judged worse: id or external id.")] worse: ID,
        #[graphql(
            desc = "Retry key (1-200 characters, per caller): a retry with the same key and \
                    input returns the comparison it made without writing again (a phone sending \
                    its offline queue gives each tap its own key); the same key with another \
                    request is a CONFLICT."
        )]
        idempotency_key: Option<String>,
    ) -> async_graphql::Result<Comparison> {
        let actor = ctx.actor()?;
        let key = Key::new(
            idempotency_key,
            "compareProjects",
            &json!({ "event": event, "better": better.as_str(), "worse": worse.as_str() }),
        )
        .gql(ctx)?;
        let c = idempotent(ctx, &actor, key, async |w| {
            pairwise::compare_projects(w, &event, &better, &worse).await
        })
        .await?;
        // A comparison is an input of the ranking, as a review is: the live leaderboard
        // (and judging progress) move. A replayed retry announces again; the feeds settle
        // a burst into one computation, so that costs nothing.
        ctx.services().bus.publish(BusEvent::JudgingChanged {
            event_id: c.event_id,
        });
        Ok(Comparison::recorded(c, actor.user.id))
    }

    /// Passes over a project on the caller's route, as a judge of the event ("not at the
    /// table"), and returns the pair they are asked about next (null when the route is
    /// done). A skip is not a recusal: it only takes the project off the judge's route (and
    /// it can still be compared); a judge with a conflict of interest says so in the reason,
    /// which the organizers read in the audit log. The same refusals as `compareProjects`
    /// (BAD_USER_INPUT naming `project`), BAD_USER_INPUT naming `reason` unless it is one
    /// line of 1 to 200 characters, and CONFLICT when the judge has compared or skipped the
    /// project already.
    async fn skip_comparison(
        &self,
        ctx: &Context<'_>,
        #[graphql(desc = "The event, by slug; NOT_FOUND when no event has it.")] event: String,
        #[graphql(desc = "The project passed over: id or external id.")] project: ID,
        #[graphql(desc = "Why, e.g. \"not at the table\": one line of 1 to 200 characters.")]
        reason: String,
    ) -> async_graphql::Result<Option<Comparison>> {
        let actor = ctx.actor()?;
        let w = begin(ctx).await?;
        let next = pairwise::skip_comparison(&w, &event, &project, &reason)
            .await
            .gql(ctx)?;
        commit(ctx, w).await?;
        Ok(next.map(|pair| Comparison::next(pair, actor.user.id)))
    }
}
