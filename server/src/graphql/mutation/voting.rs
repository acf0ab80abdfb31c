//! Community voting mutations (issue 12): organizers configure the vote and publish its
//! tally; voters (accounts, or email voters with a key from a mailed link) cast votes.

use async_graphql::{Context, ID, InputObject, Object};
use chrono::{DateTime, Utc};

use super::write::{begin, commit};
use crate::domain::voting::{self, Cast, Config, Who};
use crate::graphql::context::{CtxExt, ResultExt};
use crate::graphql::object::voting::{Ballot, TallyRow, VoteCampaign, VoterKey, VotingMode};
use crate::graphql::policy::{FieldGuard, Rule, Scope};

/// Who may call each mutation of this file, collected by [`crate::graphql::policy`].
pub(crate) const POLICIES: &[(&str, Rule)] = &[
    ("Mutation.configureVoting", Rule::SignedIn),
    // Email voters have no account: the vote's mode decides who may register and cast.
    ("Mutation.registerVoter", Rule::Public),
    ("Mutation.confirmVoter", Rule::Public),
    ("Mutation.castVotes", Rule::Public),
    ("Mutation.publishVoteTally", Rule::SignedIn),
];

/// Votes on one project.
#[derive(InputObject)]
pub struct VoteInput {
    /// The project, by id or external id: a submitted project in the event's gallery.
    pub project: ID,
    /// Votes on it, 0 to 100; n votes cost n² credits. 0 removes the project from the
    /// allocation.
    pub votes: i32,
}

#[derive(Default)]
pub struct VotingMutation;

#[Object(guard = "FieldGuard::new(\"Mutation\", Scope::none())")]
impl VotingMutation {
    /// Creates or changes the event's community vote (organizers) and sets the event's
    /// voting window to [opens, closes). The mode and the credits are fixed once anyone
    /// registered or voted (CONFLICT); the window may move until the tally is published.
    #[allow(
        clippy::too_many_arguments,
        reason = "the contract's arguments, one per setting"
    )]
    async fn configure_voting(
        &self,
        ctx: &Context<'_>,
        #[graphql(desc = "The event, by slug.")] event: String,
        #[graphql(desc = "Who may vote.")] mode: VotingMode,
        #[graphql(
            desc = "Each voter's vote credits, 1 to 10,000 (n votes on one project \
                          cost n²)."
        )]
        credits: i32,
        #[graphql(desc = "When voting opens.")] opens: DateTime<Utc>,
        #[graphql(desc = "When voting closes: after `opens`; a vote at this instant is \
                          refused.")]
        closes: DateTime<Utc>,
        #[graphql(
            desc = "EMAIL_ALLOWLIST only: the addresses that may vote (replaces the \
                          list; spellings of one mailbox count once). A new list may not \
                          drop an address that registered."
        )]
        allowlist: Option<Vec<String>>,
    ) -> async_graphql::Result<VoteCampaign> {
        ctx.actor()?;
        let config = Config {
            mode: mode.into(),
            credits,
            opens,
            closes,
            allowlist,
        };
        let w = begin(ctx).await?;
        let e = w.event(&event).await.gql(ctx)?;
        let campaign = voting::configure(&w, w.organizer(&e).await.gql(ctx)?, config)
            .await
            .gql(ctx)?;
        commit(ctx, w).await?;
        Ok(VoteCampaign {
            campaign,
            opens: Some(opens),
            closes: Some(closes),
        })
    }

    /// Asks for a voting link (EMAIL and EMAIL_ALLOWLIST votes, while open): a single-use
    /// link is mailed to `email`; the answer never contains it. RATE_LIMITED when asked
    /// too often. Asking again for the same address mails a fresh link. A mailbox that
    /// already registered under another spelling, or that is not on the allowlist, gets no
    /// link but a message saying so; the answer is `true` either way, so it says nothing
    /// about who registered or who is on the list.
    async fn register_voter(
        &self,
        ctx: &Context<'_>,
        #[graphql(desc = "The event, by slug.")] event: String,
        #[graphql(desc = "The voter's email address.")] email: String,
    ) -> async_graphql::Result<bool> {
        let w = begin(ctx).await?;
        let e = w.event(&event).await.gql(ctx)?;
        voting::register(&w, &e, &email, &ctx.rc().client, &ctx.services().links)
            .await
            .gql(ctx)?;
        commit(ctx, w).await?;
        ctx.services().mail.wake();
        Ok(true)
    }

    /// Follows a voting link: confirms the address and returns the key to vote with
    /// (shown once; a later link replaces it). NOT_FOUND for an unknown or used link,
    /// WINDOW_CLOSED for an expired one or a closed vote.
    async fn confirm_voter(
        &self,
        ctx: &Context<'_>,
        #[graphql(desc = "The token from the voting link.")] token: String,
    ) -> async_graphql::Result<VoterKey> {
        let w = begin(ctx).await?;
        let (event, key) = voting::confirm(&w, &token).await.gql(ctx)?;
        commit(ctx, w).await?;
        Ok(VoterKey { key, event })
    }

    /// Replaces the caller's whole allocation (a signed-in account in an ACCOUNT vote, an
    /// email voter by `voterKey` otherwise). Refused whole: over budget or a project not
    /// on the ballot (BAD_USER_INPUT naming it), outside the window (WINDOW_CLOSED), a judge
    /// of the event or their own team's project (FORBIDDEN).
    async fn cast_votes(
        &self,
        ctx: &Context<'_>,
        #[graphql(desc = "The event, by slug.")] event: String,
        #[graphql(desc = "The whole allocation; an empty list withdraws every vote.")] votes: Vec<
            VoteInput,
        >,
        #[graphql(desc = "An email voter's key (from `confirmVoter`).")] voter_key: Option<String>,
    ) -> async_graphql::Result<Ballot> {
        let user = ctx.rc().user().cloned();
        let who = match (&voter_key, &user) {
            (Some(k), _) => Who::Key(k),
            (None, Some(u)) => Who::Account(u),
            (None, None) => return Err(ctx.err(crate::error::AppError::Unauthenticated)),
        };
        let casts = votes
            .into_iter()
            .map(|v| Cast {
                project: v.project.0,
                votes: v.votes,
            })
            .collect();
        let w = begin(ctx).await?;
        let e = w.event(&event).await.gql(ctx)?;
        let ballot = voting::cast(&w, &e, who, casts).await.gql(ctx)?;
        commit(ctx, w).await?;
        Ok(Ballot(ballot))
    }

    /// Publishes the tally of the event's vote (organizers), once its window has closed
    /// (CONFLICT before, and a second time). From then on `Event.voteTally` is public.
    async fn publish_vote_tally(
        &self,
        ctx: &Context<'_>,
        #[graphql(desc = "The event, by slug.")] event: String,
    ) -> async_graphql::Result<Vec<TallyRow>> {
        ctx.actor()?;
        let w = begin(ctx).await?;
        let e = w.event(&event).await.gql(ctx)?;
        let rows = voting::publish_tally(&w, w.organizer(&e).await.gql(ctx)?)
            .await
            .gql(ctx)?;
        commit(ctx, w).await?;
        Ok(rows
            .into_iter()
            .map(|row| TallyRow {
                event_id: e.id,
                row,
            })
            .collect())
    }
}
