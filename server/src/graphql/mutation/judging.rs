//! Judging mutations: the rubric, judge assignments (by hand or planned by `autoAssign`),
//! recusals and reviews. Each change is announced to progress and leaderboard subscribers
//! after it commits.

use async_graphql::{Context, ID, InputObject, Object};
use sea_orm::EntityTrait;
use serde::Serialize;

use super::write::{begin, commit};
use crate::domain::judging::{self, CriterionFields};
use crate::error::AppError;
use crate::graphql::bus::BusEvent;
use crate::graphql::context::{CtxExt, ResultExt};
use crate::graphql::cost;
use crate::graphql::object::judging::{Assignment, AssignmentPlan, Criterion, Recusal, Review};
use crate::graphql::policy::{FieldGuard, Rule, Scope};

/// One criterion of the rubric.
#[derive(InputObject, Serialize)]
pub struct CriterionInput {
    /// Lower-case letters, digits and '_' (1 to 32); scores refer to it.
    pub key: String,
    /// The name judges see: one line of 1 to 200 characters.
    pub name: String,
    /// Relative weight (positive). Defaults to 1.
    pub weight: Option<f64>,
    /// Lowest score. Defaults to 1.
    pub min: Option<i32>,
    /// Highest score, above `min`. Defaults to 5.
    pub max: Option<i32>,
    /// Order in the rubric. Defaults to 0.
    pub position: Option<i32>,
    /// What judges should look for (up to 2,000 characters, shown beside the scores).
    /// Omitted: unchanged on an existing criterion, empty on a new one.
    pub description: Option<String>,
}

/// One score of a review.
#[derive(InputObject)]
pub struct ScoreInput {
    /// The criterion's key.
    pub criterion: String,
    /// The score: a whole number within the criterion's `min` and `max`.
    pub value: i32,
}

/// Who may call each mutation of this file, collected by [`crate::graphql::policy`].
pub(crate) const POLICIES: &[(&str, Rule)] = &[
    ("Mutation.setCriterion", Rule::SignedIn),
    ("Mutation.removeCriterion", Rule::SignedIn),
    ("Mutation.assignJudge", Rule::SignedIn),
    ("Mutation.unassignJudge", Rule::SignedIn),
    ("Mutation.recuseJudge", Rule::SignedIn),
    ("Mutation.saveReview", Rule::SignedIn),
    ("Mutation.autoAssign", Rule::SignedIn),
];

#[derive(Default)]
pub struct JudgingMutation;

#[Object(guard = "FieldGuard::new(\"Mutation\", Scope::none())")]
impl JudgingMutation {
    /// Adds or changes a criterion (organizers). Once any score exists, criteria can only
    /// be renamed or reordered: CONFLICT otherwise.
    async fn set_criterion(
        &self,
        ctx: &Context<'_>,
        #[graphql(desc = "The event, by slug; NOT_FOUND when no event has it.")] event: String,
        #[graphql(desc = "The criterion; an existing `key` is updated, a new one added.")]
        input: CriterionInput,
    ) -> async_graphql::Result<Criterion> {
        ctx.actor()?;
        let f = CriterionFields {
            key: input.key,
            name: input.name,
            weight: input.weight.unwrap_or(1.0),
            min: input.min.unwrap_or(1),
            max: input.max.unwrap_or(5),
            position: input.position.unwrap_or(0),
            description: input.description,
        };
        let w = begin(ctx).await?;
        let e = w.event(&event).await.gql(ctx)?;
        let c = judging::set_criterion(&w, w.organizer(&e).await.gql(ctx)?, f)
            .await
            .gql(ctx)?;
        commit(ctx, w).await?;
        Ok(Criterion(c))
    }

    /// Removes a criterion (organizers; only before any score exists, CONFLICT after).
    async fn remove_criterion(
        &self,
        ctx: &Context<'_>,
        #[graphql(desc = "The event, by slug; NOT_FOUND when no event has it.")] event: String,
        #[graphql(desc = "The criterion's key; NOT_FOUND when the rubric has none.")] key: String,
    ) -> async_graphql::Result<bool> {
        ctx.actor()?;
        let w = begin(ctx).await?;
        let e = w.event(&event).await.gql(ctx)?;
        judging::remove_criterion(&w, w.organizer(&e).await.gql(ctx)?, &key)
            .await
            .gql(ctx)?;
        commit(ctx, w).await?;
        Ok(true)
    }

    /// Assigns a judge (membership id or external id such as `jdg_01`) to a submitted
    /// project (organizers). The judge must cover the track, not be on the team, and not be
    /// recused from it (CONFLICT otherwise, or when already assigned).
    async fn assign_judge(
        &self,
        ctx: &Context<'_>,
        #[graphql(desc = "The event, by slug; NOT_FOUND when no event has it.")] event: String,
        #[graphql(desc = "The judge: membership id or external id (e.g. `jdg_01`).")] judge: ID,
        #[graphql(desc = "The project: id or external id.")] project: ID,
    ) -> async_graphql::Result<Assignment> {
        ctx.actor()?;
        let w = begin(ctx).await?;
        let e = w.event(&event).await.gql(ctx)?;
        let a = judging::assign(&w, w.organizer(&e).await.gql(ctx)?, &judge, &project)
            .await
            .gql(ctx)?;
        let judge_user = judge_user_of(ctx, w.txn(), a.judge_id).await?;
        commit(ctx, w).await?;
        ctx.services()
            .bus
            .publish(BusEvent::JudgingChanged { event_id: e.id });
        Ok(Assignment { row: a, judge_user })
    }

    /// Plans assignments that bring every submitted project to `k` reviews, balancing judge
    /// load (at most `maxLoad`), honouring tracks, own teams and recusals, and keeping the
    /// judge–project graph connected; deterministic for a seed. With `apply: false` it only
    /// returns the plan; with `apply: true` it writes it. Re-applying adds nothing
    /// (organizers).
    #[graphql(complexity = "cost::calibration(child_complexity)")]
    async fn auto_assign(
        &self,
        ctx: &Context<'_>,
        #[graphql(desc = "The event, by slug; NOT_FOUND when no event has it.")] event: String,
        #[graphql(
            desc = "Reviews each project should reach, existing ones counted: 1 to 50; defaults \
                    to the event's `reviewsPerProject`."
        )]
        k: Option<i32>,
        #[graphql(
            desc = "The most assignments a judge may have, existing ones counted (at least 1); \
                    no limit when omitted."
        )]
        max_load: Option<i32>,
        #[graphql(
            desc = "Breaks ties between judges (at least 0); defaults to 1. The same state and \
                    seed give the same plan."
        )]
        seed: Option<i32>,
        #[graphql(desc = "Write the plan; defaults to false (a dry run that writes nothing).")]
        apply: Option<bool>,
    ) -> async_graphql::Result<AssignmentPlan> {
        ctx.actor()?;
        let apply = apply.unwrap_or(false);
        let w = begin(ctx).await?;
        let e = w.event(&event).await.gql(ctx)?;
        let k = k.unwrap_or(e.reviews_per_project);
        let (plan, applied) = judging::auto_assign(
            &w,
            w.organizer(&e).await.gql(ctx)?,
            k,
            max_load,
            seed.unwrap_or(1).into(),
            apply,
        )
        .await
        .gql(ctx)?;
        if apply {
            commit(ctx, w).await?;
            ctx.services()
                .bus
                .publish(BusEvent::JudgingChanged { event_id: e.id });
        }
        Ok(AssignmentPlan {
            event_id: e.id,
            plan,
            applied: applied as i32,
        })
    }

    /// Removes an assignment that has not been scored (organizers; CONFLICT once a review
    /// exists). NOT_FOUND for anyone else.
    async fn unassign_judge(
        &self,
        ctx: &Context<'_>,
        #[graphql(desc = "The assignment's id (`Assignment.id`).")] assignment: ID,
    ) -> async_graphql::Result<bool> {
        ctx.actor()?;
        let w = begin(ctx).await?;
        let event_id = judging::unassign(&w, &assignment).await.gql(ctx)?;
        commit(ctx, w).await?;
        ctx.services()
            .bus
            .publish(BusEvent::JudgingChanged { event_id });
        Ok(true)
    }

    /// Declares a conflict between a judge and a team (organizers). It covers the team's
    /// future projects too, and turns existing assignments to them `recused`. CONFLICT when
    /// already declared.
    async fn recuse_judge(
        &self,
        ctx: &Context<'_>,
        #[graphql(desc = "The event, by slug; NOT_FOUND when no event has it.")] event: String,
        #[graphql(desc = "The judge: membership id or external id (e.g. `jdg_01`).")] judge: ID,
        #[graphql(desc = "The team: id or external id.")] team: ID,
        #[graphql(desc = "Why, for the record: at most 500 characters; empty when omitted.")]
        reason: Option<String>,
    ) -> async_graphql::Result<Recusal> {
        ctx.actor()?;
        let w = begin(ctx).await?;
        let e = w.event(&event).await.gql(ctx)?;
        let r = judging::recuse(
            &w,
            w.organizer(&e).await.gql(ctx)?,
            &judge,
            &team,
            reason.as_deref().unwrap_or(""),
        )
        .await
        .gql(ctx)?;
        commit(ctx, w).await?;
        ctx.services()
            .bus
            .publish(BusEvent::JudgingChanged { event_id: e.id });
        Ok(Recusal(r))
    }

    /// Creates or updates the caller's review of an assignment, inside the judging window.
    /// Every save keeps a revision; `submit: true` submits it (it then scores every
    /// criterion). Only the assigned judge may save it (FORBIDDEN for organizers, NOT_FOUND
    /// for others); WINDOW_CLOSED outside the judging window; CONFLICT when recused, or
    /// when the project's team has withdrawn it.
    async fn save_review(
        &self,
        ctx: &Context<'_>,
        #[graphql(desc = "The assignment's id (`Assignment.id`).")] assignment: ID,
        #[graphql(
            desc = "Scores to set, one per criterion at most; they replace the saved scores of \
                    the same criteria and keep the others."
        )]
        scores: Vec<ScoreInput>,
        #[graphql(
            desc = "The review's comment, at most 4,000 characters; the saved one stays when \
                    omitted."
        )]
        comment: Option<String>,
        #[graphql(
            desc = "Submit the review; defaults to false. A submitted review stays submitted."
        )]
        submit: Option<bool>,
    ) -> async_graphql::Result<Review> {
        let actor = ctx.actor()?;
        let scores: Vec<(String, i64)> = scores
            .into_iter()
            .map(|s| (s.criterion, s.value as i64))
            .collect();
        let w = begin(ctx).await?;
        let r = judging::save_review(
            &w,
            &assignment,
            &scores,
            comment.as_deref(),
            submit.unwrap_or(false),
        )
        .await
        .gql(ctx)?;
        commit(ctx, w).await?;
        ctx.services().bus.publish(BusEvent::JudgingChanged {
            event_id: r.event_id,
        });
        Ok(Review {
            row: r,
            judge_user: actor.user.id,
        })
    }
}

async fn judge_user_of(
    ctx: &Context<'_>,
    txn: &sea_orm::DatabaseTransaction,
    membership_id: i64,
) -> async_graphql::Result<i64> {
    entity::membership::Entity::find_by_id(membership_id)
        .one(txn)
        .await
        .gql(ctx)?
        .map(|m| m.user_id)
        .ok_or_else(|| ctx.err(AppError::NotFound("judge")))
}
