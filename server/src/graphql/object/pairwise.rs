//! Pairwise judging (issue 26): the event's judging mode, a judge's next pair and their
//! comparisons. A comparison is the judge's own and the organizers': participants and the
//! public never read one, nor any field of it.

use async_graphql::{Context, Enum, ID, Object};
use chrono::{DateTime, Utc};
use entity::{comparison, event::JudgingMode};
use sea_orm::{ColumnTrait, EntityTrait, QueryFilter};

use super::event::EventRow;
use super::project::Project;
use super::user::Membership;
use crate::domain::judging::{pairwise, route::NextPair};
use crate::graphql::connection::{Page, page};
use crate::graphql::context::{CtxExt, ResultExt};
use crate::graphql::cost;
use crate::graphql::loaders::{LoadersExt, MembershipId, ProjectId, one};
use crate::graphql::policy::{FieldGuard, Rule, Scope};

/// Who may read each field of the types in this file, collected by [`crate::graphql::policy`].
pub(crate) const POLICIES: &[(&str, Rule)] = &[
    ("Event.judgingMode", Rule::Public),
    // The caller's own route and comparisons (null and empty for anyone who does not judge).
    ("Event.myNextComparison", Rule::SignedIn),
    ("Event.myComparisons", Rule::SignedIn),
    ("Event.comparisons", Rule::Organizer),
    ("Comparison.id", Rule::OwnJudge),
    ("Comparison.judge", Rule::OwnJudge),
    ("Comparison.previous", Rule::OwnJudge),
    ("Comparison.current", Rule::OwnJudge),
    ("Comparison.better", Rule::OwnJudge),
    ("Comparison.worse", Rule::OwnJudge),
    ("Comparison.version", Rule::OwnJudge),
    ("Comparison.createdAt", Rule::OwnJudge),
    ("Comparison.revisedAt", Rule::OwnJudge),
    ("Comparison.remaining", Rule::OwnJudge),
];

/// How an event's judges judge.
#[derive(Enum, Copy, Clone, Debug, PartialEq, Eq)]
#[graphql(name = "JudgingMode", remote = "JudgingMode")]
pub enum JudgingModeValue {
    /// Rubric scores only (`saveReview`): the default.
    Scores,
    /// Judges compare two projects at a time (`compareProjects`), walking a route.
    Pairwise,
    /// Both scores and comparisons.
    Both,
}

/// Pairwise judging: the judging mode, the caller's next pair and comparisons, every
/// comparison for the organizers: a part of [`Event`](super::event::Event).
pub struct EventPairwise(pub(super) EventRow);

/// Pairwise judging: a part of [`Event`](super::event::Event).
#[Object(guard = "FieldGuard::new(\"Event\", Scope::event(self.0.id))")]
impl EventPairwise {
    /// How judges judge: `SCORES` (the default), `PAIRWISE` or `BOTH`. Organizers change it
    /// with `setJudgingMode` until judging opens.
    async fn judging_mode(&self) -> JudgingModeValue {
        self.0.judging_mode.into()
    }

    /// The pair the caller is asked about next as a judge: the project they are at
    /// (`current`) and the one they saw before it (`previous`: null at the start of the
    /// route, the last project they compared after that). The route walks the expo floor by
    /// table, each judge starting at a different point; the next project is one of the few
    /// tables ahead of the last, the one whose comparison with it tells most about the
    /// ranking so far (the next table while nothing tells them apart). Null when the caller
    /// does not judge the event, when it is judged by scores only, or when they have
    /// compared or skipped every project on their route.
    #[graphql(complexity = "cost::load(child_complexity)")]
    async fn my_next_comparison(
        &self,
        ctx: &Context<'_>,
        #[graphql(
            desc = "The project (id or external id) the judge is at and has not compared yet: \
                    the first of their route, or one they walked to. The answer then asks about \
                    the next project against it. BAD_USER_INPUT when it is not on their route."
        )]
        seen: Option<ID>,
    ) -> async_graphql::Result<Option<Comparison>> {
        let actor = ctx.actor()?;
        let next = pairwise::my_next_comparison(
            &ctx.db().conn,
            &self.0,
            actor.user.id,
            seen.as_ref().map(|s| s.as_str()),
        )
        .await
        .gql(ctx)?;
        Ok(next.map(|pair| Comparison::next(pair, actor.user.id)))
    }

    /// The caller's own comparisons as a judge here, oldest first (empty for anyone who
    /// does not judge the event).
    #[graphql(complexity = "cost::short_list(child_complexity)")]
    async fn my_comparisons(&self, ctx: &Context<'_>) -> async_graphql::Result<Vec<Comparison>> {
        let actor = ctx.actor()?;
        let rows = pairwise::my_comparisons(&ctx.db().conn, &self.0, actor.user.id)
            .await
            .gql(ctx)?;
        Ok(rows
            .into_iter()
            .map(|row| Comparison::recorded(row, actor.user.id))
            .collect())
    }

    /// Every judge's comparisons, oldest first (organizers only).
    #[graphql(complexity = "cost::page(first, child_complexity)")]
    async fn comparisons(
        &self,
        ctx: &Context<'_>,
        #[graphql(desc = "Page size: 20 if omitted, at most the page limit (100 by default).")]
        first: Option<i32>,
        #[graphql(desc = "Start after this cursor (an edge's `cursor`); omit for the first page.")]
        after: Option<String>,
    ) -> async_graphql::Result<Page<Comparison>> {
        let judges = super::judging::judge_users(ctx, self.0.id).await?;
        let q = comparison::Entity::find().filter(comparison::Column::EventId.eq(self.0.id));
        page(
            ctx,
            q,
            comparison::Column::Id,
            |c| c.id,
            first,
            after,
            |row| {
                let user = judges.get(&row.judge_id).copied().unwrap_or_default();
                Comparison::recorded(row, user)
            },
        )
        .await
    }
}

/// A judge's comparison of two projects: recorded (`compareProjects`), or the pair they
/// are asked about next (`myNextComparison`), not compared yet.
pub struct Comparison {
    event_id: i64,
    /// The judge's membership.
    judge_id: i64,
    /// The user behind it, for the guard.
    judge_user: i64,
    row: Option<comparison::Model>,
    previous: Option<i64>,
    current: i64,
    remaining: Option<i32>,
}

impl Comparison {
    /// A recorded comparison by the judge whose user is `judge_user`.
    pub fn recorded(row: comparison::Model, judge_user: i64) -> Comparison {
        Comparison {
            event_id: row.event_id,
            judge_id: row.judge_id,
            judge_user,
            previous: Some(row.previous_id()),
            current: row.current_id,
            remaining: None,
            row: Some(row),
        }
    }

    /// The next pair of the judge whose user is `judge_user`.
    pub fn next(pair: NextPair, judge_user: i64) -> Comparison {
        Comparison {
            event_id: pair.judge.event_id,
            judge_id: pair.judge.id,
            judge_user,
            row: None,
            previous: pair.previous.map(|p| p.id),
            current: pair.current.id,
            remaining: Some(pair.remaining as i32),
        }
    }
}

/// A judge's comparison of two projects, or the pair they are asked about next. Only that
/// judge and the organizers read it.
#[Object(
    guard = "FieldGuard::new(\"Comparison\", Scope { event: Some(self.event_id), user: Some(self.judge_user), ..Scope::none() })"
)]
impl Comparison {
    /// Opaque id; null for the next pair, which is not compared yet.
    async fn id(&self) -> Option<ID> {
        self.row.as_ref().map(|r| ID(r.public_id.clone()))
    }
    /// The judge's membership in the event.
    async fn judge(&self, ctx: &Context<'_>) -> async_graphql::Result<Membership> {
        one(
            ctx,
            ctx.loaders().memberships(),
            MembershipId(self.judge_id),
            "judge",
        )
        .await
        .map(Membership)
    }
    /// The project the judge saw before `current`; null at the start of their route.
    async fn previous(&self, ctx: &Context<'_>) -> async_graphql::Result<Option<Project>> {
        match self.previous {
            Some(id) => project(ctx, id).await.map(Some),
            None => Ok(None),
        }
    }
    /// The project the judge is (or was, when comparing) at.
    async fn current(&self, ctx: &Context<'_>) -> async_graphql::Result<Project> {
        project(ctx, self.current).await
    }
    /// The project judged better; null until compared.
    async fn better(&self, ctx: &Context<'_>) -> async_graphql::Result<Option<Project>> {
        match &self.row {
            Some(r) => project(ctx, r.better_id).await.map(Some),
            None => Ok(None),
        }
    }
    /// The project judged worse; null until compared.
    async fn worse(&self, ctx: &Context<'_>) -> async_graphql::Result<Option<Project>> {
        match &self.row {
            Some(r) => project(ctx, r.worse_id).await.map(Some),
            None => Ok(None),
        }
    }
    /// 1 once compared, one more for each revision; 0 for the next pair.
    async fn version(&self) -> i32 {
        self.row.as_ref().map_or(0, |r| r.version)
    }
    /// When the judge compared the pair; null for the next pair.
    async fn created_at(&self) -> Option<DateTime<Utc>> {
        self.row.as_ref().map(|r| r.created_at)
    }
    /// When the judge last turned the comparison round; null until revised.
    async fn revised_at(&self) -> Option<DateTime<Utc>> {
        self.row
            .as_ref()
            .filter(|r| r.version > 1)
            .map(|r| r.updated_at)
    }
    /// For the next pair: the projects left on the judge's route that they have neither
    /// compared nor skipped, `current` included. Null for a recorded comparison.
    async fn remaining(&self) -> Option<i32> {
        self.remaining
    }
}

async fn project(ctx: &Context<'_>, id: i64) -> async_graphql::Result<Project> {
    one(ctx, ctx.loaders().projects(), ProjectId(id), "project")
        .await
        .map(Project)
}
