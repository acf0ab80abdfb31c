//! Community voting (issue 12): the campaign an event announces, the caller's own ballot,
//! and the tally once published. See [`crate::domain::voting`] for the rules.

use async_graphql::{Context, Enum, Object};
use chrono::{DateTime, Utc};
use entity::{project, vote_campaign};

use super::project::Project;
use crate::domain::voting::{self, Ballot as DomainBallot, TallyRow as DomainRow};
use crate::graphql::context::{CtxExt, ResultExt};
use crate::graphql::cost;
use crate::graphql::loaders::{LoadersExt, ProjectId, many, maybe};
use crate::graphql::policy::{FieldGuard, Rule, Scope};

/// Who may read each field of the types in this file, collected by [`crate::graphql::policy`].
pub(crate) const POLICIES: &[(&str, Rule)] = &[
    ("VoteCampaign.mode", Rule::Public),
    ("VoteCampaign.credits", Rule::Public),
    ("VoteCampaign.opens", Rule::Public),
    ("VoteCampaign.closes", Rule::Public),
    ("VoteCampaign.isOpen", Rule::Public),
    ("VoteCampaign.tallyPublishedAt", Rule::Public),
    ("VoteCampaign.voters", Rule::Organizer),
    ("VoteCampaign.allowlistSize", Rule::Organizer),
    // A ballot is only ever the caller's own (Event.myBallot finds it by their session or
    // key), so its fields need no further rule.
    ("Ballot.credits", Rule::Public),
    ("Ballot.spent", Rule::Public),
    ("Ballot.remaining", Rule::Public),
    ("Ballot.address", Rule::Public),
    ("Ballot.votes", Rule::Public),
    ("Ballot.projects", Rule::Public),
    ("BallotVote.project", Rule::Public),
    ("BallotVote.votes", Rule::Public),
    ("TallyRow.rank", Rule::Public),
    ("TallyRow.project", Rule::Public),
    ("TallyRow.votes", Rule::Public),
    ("TallyRow.voters", Rule::Public),
    ("TallyRow.credits", Rule::Public),
    ("VoterKey.key", Rule::Public),
    ("VoterKey.event", Rule::Public),
    ("Event.voting", Rule::Public),
    // The caller's own ballot (by their session or their voter key).
    ("Event.myBallot", Rule::Public),
    // NOT_FOUND for everyone until published.
    ("Event.voteTally", Rule::Public),
];

/// The community vote, the caller's ballot and the published tally: a part of [`Event`](super::event::Event), merged into the one GraphQL type.
pub struct EventVoting(pub(super) super::event::EventRow);

/// The community vote, the caller's ballot and the published tally: a part of [`Event`](super::event::Event).
#[Object(guard = "FieldGuard::new(\"Event\", Scope::event(self.0.id))")]
impl EventVoting {
    /// The event's community vote; null when it has none.
    async fn voting(&self, ctx: &Context<'_>) -> async_graphql::Result<Option<VoteCampaign>> {
        let c = voting::campaign_of(&ctx.db().conn, self.0.id)
            .await
            .gql(ctx)?;
        Ok(c.map(|campaign| VoteCampaign {
            campaign,
            opens: self.0.voting_open,
            closes: self.0.voting_close,
        }))
    }
    /// The caller's own ballot: a signed-in account's in an ACCOUNT vote, or an email
    /// voter's by `voterKey` (a key that fits no voter is UNAUTHENTICATED). Null when the
    /// event has no vote, or the caller is not of the kind the vote takes.
    async fn my_ballot(
        &self,
        ctx: &Context<'_>,
        #[graphql(desc = "An email voter's key (from `confirmVoter`).")] voter_key: Option<String>,
    ) -> async_graphql::Result<Option<Ballot>> {
        let who = match (&voter_key, ctx.rc().user()) {
            (Some(k), _) => voting::Who::Key(k),
            (None, Some(u)) => voting::Who::Account(u),
            (None, None) => return Ok(None),
        };
        let b = voting::ballot(&ctx.db().conn, self.0.id, who)
            .await
            .gql(ctx)?;
        Ok(b.map(Ballot))
    }
    /// The published tally of the community vote, most votes first: NOT_FOUND (for
    /// everyone) until the window has closed and an organizer published it. It never
    /// feeds the judged results.
    #[graphql(complexity = "cost::event_list(child_complexity)")]
    async fn vote_tally(&self, ctx: &Context<'_>) -> async_graphql::Result<Vec<TallyRow>> {
        let c = voting::campaign_of(&ctx.db().conn, self.0.id)
            .await
            .gql(ctx)?;
        let rows = voting::published_tally(c.as_ref()).gql(ctx)?;
        Ok(rows
            .into_iter()
            .map(|row| TallyRow {
                event_id: self.0.id,
                row,
            })
            .collect())
    }
}

/// Who may vote in a community vote.
#[derive(Enum, Copy, Clone, Eq, PartialEq)]
pub enum VotingMode {
    /// Signed-in accounts with a confirmed email address.
    Account,
    /// Anyone who confirms an email address through a voting link.
    Email,
    /// Only the addresses the organizers listed, confirmed through a voting link.
    EmailAllowlist,
}

impl From<VotingMode> for vote_campaign::VotingMode {
    fn from(m: VotingMode) -> Self {
        match m {
            VotingMode::Account => Self::Account,
            VotingMode::Email => Self::Email,
            VotingMode::EmailAllowlist => Self::EmailAllowlist,
        }
    }
}

impl From<vote_campaign::VotingMode> for VotingMode {
    fn from(m: vote_campaign::VotingMode) -> Self {
        match m {
            vote_campaign::VotingMode::Account => Self::Account,
            vote_campaign::VotingMode::Email => Self::Email,
            vote_campaign::VotingMode::EmailAllowlist => Self::EmailAllowlist,
        }
    }
}

/// An event's community vote: quadratic (n votes on one project cost n² credits), in the
/// event's voting window. Its tally is a separate surface: it never feeds the judged
/// results.
pub struct VoteCampaign {
    pub campaign: vote_campaign::Model,
    pub opens: Option<DateTime<Utc>>,
    pub closes: Option<DateTime<Utc>>,
}

/// An event's community vote: quadratic (n votes on one project cost n² credits), in the
/// event's voting window. Its tally is a separate surface: it never feeds the judged
/// results.
#[Object(guard = "FieldGuard::new(\"VoteCampaign\", Scope::event(self.campaign.event_id))")]
impl VoteCampaign {
    /// Who may vote.
    async fn mode(&self) -> VotingMode {
        self.campaign.mode.into()
    }
    /// Each voter's budget of vote credits.
    async fn credits(&self) -> i32 {
        self.campaign.credits
    }
    /// When voting opens (the event's voting window).
    async fn opens(&self) -> Option<DateTime<Utc>> {
        self.opens
    }
    /// When voting closes; the window is half-open: a vote at this instant is refused.
    async fn closes(&self) -> Option<DateTime<Utc>> {
        self.closes
    }
    /// Whether votes are taken now (by this server's clock; the write checks the
    /// database's).
    async fn is_open(&self) -> bool {
        let now = Utc::now();
        self.campaign.tally_published_at.is_none()
            && self.opens.is_some_and(|o| o <= now)
            && self.closes.is_some_and(|c| now < c)
    }
    /// When the organizers published the tally; null before.
    async fn tally_published_at(&self) -> Option<DateTime<Utc>> {
        self.campaign.tally_published_at
    }
    /// How many people registered (email) or voted (accounts). Organizers.
    async fn voters(&self, ctx: &Context<'_>) -> async_graphql::Result<u64> {
        voting::voter_count(&ctx.db().conn, self.campaign.id)
            .await
            .gql(ctx)
    }
    /// How many addresses the allowlist holds (EMAIL_ALLOWLIST). Organizers.
    async fn allowlist_size(&self, ctx: &Context<'_>) -> async_graphql::Result<u64> {
        voting::allowlist_len(&ctx.db().conn, self.campaign.id)
            .await
            .gql(ctx)
    }
}

/// The caller's own ballot: their budget and their allocation. Only ever the caller's.
pub struct Ballot(pub DomainBallot);

/// The caller's own ballot: their budget and their allocation. Only ever the caller's.
#[Object(guard = "FieldGuard::new(\"Ballot\", Scope::event(self.0.campaign.event_id))")]
impl Ballot {
    /// The budget of vote credits.
    async fn credits(&self) -> i32 {
        self.0.credits
    }
    /// Credits the allocation costs (the sum of each project's votes squared).
    async fn spent(&self) -> i32 {
        self.0.spent
    }
    /// Credits left.
    async fn remaining(&self) -> i32 {
        self.0.credits - self.0.spent
    }
    /// The confirmed address an email voter votes with; null for an account.
    async fn address(&self) -> Option<&str> {
        self.0.address.as_deref()
    }
    /// The allocation: projects with at least one vote, in the voter's own order.
    async fn votes(&self, ctx: &Context<'_>) -> async_graphql::Result<Vec<BallotVote>> {
        let keys = self.0.votes.iter().map(|(id, _)| ProjectId(*id));
        let mut found = many(ctx, ctx.loaders().projects(), keys).await?;
        Ok(self
            .0
            .votes
            .iter()
            .filter_map(|(id, votes)| {
                found.remove(&ProjectId(*id)).map(|project| BallotVote {
                    project,
                    votes: *votes,
                })
            })
            .collect())
    }
    /// The projects on the ballot (the event's gallery), in this voter's own order:
    /// shuffled, and the same on every read, so no project gains from being listed first.
    #[graphql(complexity = "cost::event_list(child_complexity)")]
    async fn projects(&self, ctx: &Context<'_>) -> async_graphql::Result<Vec<Project>> {
        let mut all = project::Entity::find_gallery(self.0.campaign.event_id)
            .all(&ctx.db().conn)
            .await
            .map_err(crate::error::AppError::from)
            .gql(ctx)?;
        self.0.shuffle(&mut all);
        Ok(all.into_iter().map(Project).collect())
    }
}

/// Votes on one project of a ballot.
pub struct BallotVote {
    project: project::Model,
    votes: i32,
}

/// Votes on one project of a ballot.
#[Object(guard = "FieldGuard::new(\"BallotVote\", Scope::event(self.project.event_id))")]
impl BallotVote {
    /// The project.
    async fn project(&self) -> Project {
        Project(self.project.clone())
    }
    /// Votes on it (costing their square in credits).
    async fn votes(&self) -> i32 {
        self.votes
    }
}

/// A project's line of the published tally.
pub struct TallyRow {
    pub event_id: i64,
    pub row: DomainRow,
}

/// A project's line of the published tally.
#[Object(guard = "FieldGuard::new(\"TallyRow\", Scope::event(self.event_id))")]
impl TallyRow {
    /// 1 = most votes; equal votes share a rank.
    async fn rank(&self) -> i32 {
        self.row.rank
    }
    /// The project; null when the caller may no longer see it.
    async fn project(&self, ctx: &Context<'_>) -> async_graphql::Result<Option<Project>> {
        let Some(p) = maybe(
            ctx,
            ctx.loaders().projects(),
            ProjectId(self.row.project_id),
        )
        .await?
        else {
            return Ok(None);
        };
        let access = ctx.rc().access(ctx.db()).await.gql(ctx)?;
        Ok(access.can_see_project(&p).then_some(Project(p)))
    }
    /// Votes it received.
    async fn votes(&self) -> i64 {
        self.row.votes
    }
    /// How many voters gave it at least one vote.
    async fn voters(&self) -> i64 {
        self.row.voters
    }
    /// Credits spent on it.
    async fn credits(&self) -> i64 {
        self.row.credits
    }
}

/// What following a voting link gives: the key an email voter votes with. Keep it: it is
/// shown once, and a new link replaces it.
pub struct VoterKey {
    pub key: String,
    pub event: entity::event::Model,
}

/// What following a voting link gives: the key an email voter votes with. Keep it: it is
/// shown once, and a new link replaces it.
#[Object(guard = "FieldGuard::new(\"VoterKey\", Scope::event(self.event.id))")]
impl VoterKey {
    /// The voter's key: pass it as `voterKey` to `castVotes` and `Event.myBallot`.
    async fn key(&self) -> &str {
        &self.key
    }
    /// The event of the vote.
    async fn event(&self) -> super::event::Event {
        super::event::Event::new(self.event.clone())
    }
}
