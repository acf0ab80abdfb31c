//! Mutations of judging and results. Same shape as every mutation: one transaction, one
//! domain call, commit, then publish to subscribers.

use async_graphql::{Context, ID, InputObject, Object};
use sea_orm::{ColumnTrait, EntityTrait, QueryFilter};
use serde::Serialize;
use serde_json::json;

use super::bus::BusEvent;
use super::context::{CtxExt, ResultExt};
use super::judging::{Assignment, CalibrationRun, Criterion, Recusal, ResultPublication, Review};
use super::mutation::{begin, commit, event_of, remember, replay};
use super::policy::{FieldGuard, Scope};
use crate::domain::idempotency::Key;
use crate::domain::judging::{self, CriterionFields};
use crate::domain::results;
use crate::error::AppError;

/// One criterion of the rubric.
#[derive(InputObject, Serialize)]
pub struct CriterionInput {
    /// Lower-case letters, digits and '_'; scores refer to it.
    pub key: String,
    pub name: String,
    /// Relative weight (positive). Defaults to 1.
    pub weight: Option<f64>,
    /// Lowest score. Defaults to 1.
    pub min: Option<i32>,
    /// Highest score. Defaults to 5.
    pub max: Option<i32>,
    /// Order in the rubric. Defaults to 0.
    pub position: Option<i32>,
}

/// One score of a review.
#[derive(InputObject)]
pub struct ScoreInput {
    /// The criterion's key.
    pub criterion: String,
    pub value: i32,
}

#[derive(Default)]
pub struct JudgingMutation;

#[Object(guard = "FieldGuard::new(\"Mutation\", Scope::none())")]
impl JudgingMutation {
    /// Adds or changes a criterion (organizers). Once any score exists, criteria can only
    /// be renamed or reordered: CONFLICT otherwise.
    async fn set_criterion(
        &self,
        ctx: &Context<'_>,
        event: String,
        input: CriterionInput,
    ) -> async_graphql::Result<Criterion> {
        let actor = ctx.actor()?;
        let e = event_of(ctx, &event).await?;
        let f = CriterionFields {
            key: input.key,
            name: input.name,
            weight: input.weight.unwrap_or(1.0),
            min: input.min.unwrap_or(1),
            max: input.max.unwrap_or(5),
            position: input.position.unwrap_or(0),
        };
        let txn = begin(ctx).await?;
        let c = judging::set_criterion(&txn, &actor, &e, f).await.gql(ctx)?;
        commit(ctx, txn).await?;
        Ok(Criterion(c))
    }

    /// Removes a criterion (organizers; only before any score exists).
    async fn remove_criterion(
        &self,
        ctx: &Context<'_>,
        event: String,
        key: String,
    ) -> async_graphql::Result<bool> {
        let actor = ctx.actor()?;
        let e = event_of(ctx, &event).await?;
        let txn = begin(ctx).await?;
        judging::remove_criterion(&txn, &actor, &e, &key)
            .await
            .gql(ctx)?;
        commit(ctx, txn).await?;
        Ok(true)
    }

    /// Assigns a judge (membership id or external id such as `jdg_01`) to a submitted
    /// project (organizers). The judge must cover the track, not be on the team, and not be
    /// recused from it.
    async fn assign_judge(
        &self,
        ctx: &Context<'_>,
        event: String,
        judge: ID,
        project: ID,
    ) -> async_graphql::Result<Assignment> {
        let actor = ctx.actor()?;
        let e = event_of(ctx, &event).await?;
        let txn = begin(ctx).await?;
        let a = judging::assign(&txn, &actor, &e, &judge, &project)
            .await
            .gql(ctx)?;
        let judge_user = judge_user_of(ctx, &txn, a.judge_id).await?;
        commit(ctx, txn).await?;
        ctx.services()
            .bus
            .publish(BusEvent::JudgingChanged { event_id: e.id });
        Ok(Assignment { row: a, judge_user })
    }

    /// Plans assignments that bring every submitted project to `k` reviews, balancing judge
    /// load (at most `maxLoad`), honouring tracks, own teams and recusals, and keeping the
    /// judge–project graph connected; deterministic for a seed. With `apply: false` it only
    /// returns the plan; with `apply: true` it writes it. Re-applying adds nothing.
    async fn auto_assign(
        &self,
        ctx: &Context<'_>,
        event: String,
        k: Option<i32>,
        max_load: Option<i32>,
        seed: Option<i32>,
        apply: Option<bool>,
    ) -> async_graphql::Result<super::judging::AssignmentPlan> {
        let actor = ctx.actor()?;
        let e = event_of(ctx, &event).await?;
        let apply = apply.unwrap_or(false);
        let k = k.unwrap_or(e.reviews_per_project);
        let txn = begin(ctx).await?;
        let (plan, applied) = judging::auto_assign(
            &txn,
            &actor,
            &e,
            k,
            max_load,
            seed.unwrap_or(1).into(),
            apply,
        )
        .await
        .gql(ctx)?;
        if apply {
            commit(ctx, txn).await?;
            ctx.services()
                .bus
                .publish(BusEvent::JudgingChanged { event_id: e.id });
        }
        Ok(super::judging::AssignmentPlan {
            event_id: e.id,
            plan,
            applied: applied as i32,
        })
    }

    /// Removes an assignment that has not been scored (organizers).
    async fn unassign_judge(
        &self,
        ctx: &Context<'_>,
        assignment: ID,
    ) -> async_graphql::Result<bool> {
        let actor = ctx.actor()?;
        let txn = begin(ctx).await?;
        judging::unassign(&txn, &actor, &assignment)
            .await
            .gql(ctx)?;
        commit(ctx, txn).await?;
        Ok(true)
    }

    /// Declares a conflict between a judge and a team (organizers). It covers the team's
    /// future projects too, and turns existing assignments to them `recused`.
    async fn recuse_judge(
        &self,
        ctx: &Context<'_>,
        event: String,
        judge: ID,
        team: ID,
        reason: Option<String>,
    ) -> async_graphql::Result<Recusal> {
        let actor = ctx.actor()?;
        let e = event_of(ctx, &event).await?;
        let txn = begin(ctx).await?;
        let r = judging::recuse(
            &txn,
            &actor,
            &e,
            &judge,
            &team,
            reason.as_deref().unwrap_or(""),
        )
        .await
        .gql(ctx)?;
        commit(ctx, txn).await?;
        ctx.services()
            .bus
            .publish(BusEvent::JudgingChanged { event_id: e.id });
        Ok(Recusal(r))
    }

    /// Creates or updates the caller's review of an assignment, inside the judging window.
    /// Every save keeps a revision; `submit: true` submits it (it then scores every
    /// criterion).
    async fn save_review(
        &self,
        ctx: &Context<'_>,
        assignment: ID,
        scores: Vec<ScoreInput>,
        comment: Option<String>,
        submit: Option<bool>,
    ) -> async_graphql::Result<Review> {
        let actor = ctx.actor()?;
        let scores: Vec<(String, i64)> = scores
            .into_iter()
            .map(|s| (s.criterion, s.value as i64))
            .collect();
        let txn = begin(ctx).await?;
        let r = judging::save_review(
            &txn,
            &actor,
            &assignment,
            &scores,
            comment.as_deref(),
            submit.unwrap_or(false),
        )
        .await
        .gql(ctx)?;
        commit(ctx, txn).await?;
        ctx.services().bus.publish(BusEvent::JudgingChanged {
            event_id: r.event_id,
        });
        Ok(Review {
            row: r,
            judge_user: actor.user.id,
        })
    }

    /// Runs the calibration on the event's current reviews and stores the signed, immutable
    /// run (organizers).
    async fn run_calibration(
        &self,
        ctx: &Context<'_>,
        event: String,
        seed: Option<i32>,
        bootstrap: Option<i32>,
        idempotency_key: Option<String>,
    ) -> async_graphql::Result<CalibrationRun> {
        let actor = ctx.actor()?;
        let key = Key::new(
            idempotency_key,
            "runCalibration",
            &json!({ "event": event, "seed": seed, "bootstrap": bootstrap }),
        )
        .gql(ctx)?;
        let e = event_of(ctx, &event).await?;
        let txn = begin(ctx).await?;
        if let Some(id) = replay(ctx, &txn, &actor, &key).await? {
            return run_by_id(ctx, &txn, &id).await.map(CalibrationRun);
        }
        let signer = ctx.services().signer.clone();
        let run =
            results::run_calibration(&txn, &actor, &e, &signer, seed.map(i64::from), bootstrap)
                .await
                .gql(ctx)?;
        remember(ctx, &txn, &actor, &key, &run.public_id).await?;
        commit(ctx, txn).await?;
        Ok(CalibrationRun(run))
    }

    /// Publishes a run as the event's next result version, provisional or final
    /// (organizers). After a final publication, nothing more is published.
    async fn publish_results(
        &self,
        ctx: &Context<'_>,
        event: String,
        run: ID,
        #[graphql(name = "final")] is_final: Option<bool>,
        idempotency_key: Option<String>,
    ) -> async_graphql::Result<ResultPublication> {
        let actor = ctx.actor()?;
        let key = Key::new(
            idempotency_key,
            "publishResults",
            &json!({ "event": event, "run": run.0, "final": is_final }),
        )
        .gql(ctx)?;
        let e = event_of(ctx, &event).await?;
        let txn = begin(ctx).await?;
        if let Some(id) = replay(ctx, &txn, &actor, &key).await? {
            let row = entity::result_publication::Entity::find()
                .filter(entity::result_publication::Column::PublicId.eq(id))
                .one(&txn)
                .await
                .gql(ctx)?
                .ok_or_else(|| ctx.err(AppError::NotFound("publication")))?;
            let run = entity::calibration_run::Entity::find_by_id(row.run_id)
                .one(&txn)
                .await
                .gql(ctx)?
                .ok_or_else(|| ctx.err(AppError::NotFound("run")))?;
            return Ok(ResultPublication { row, run });
        }
        let signer = ctx.services().signer.clone();
        let (row, run) =
            results::publish(&txn, &actor, &e, &signer, &run, is_final.unwrap_or(false))
                .await
                .gql(ctx)?;
        remember(ctx, &txn, &actor, &key, &row.public_id).await?;
        commit(ctx, txn).await?;
        ctx.services().bus.publish(BusEvent::ResultsPublished {
            event_id: e.id,
            publication_id: row.id,
        });
        Ok(ResultPublication { row, run })
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

async fn run_by_id(
    ctx: &Context<'_>,
    txn: &sea_orm::DatabaseTransaction,
    public_id: &str,
) -> async_graphql::Result<entity::calibration_run::Model> {
    entity::calibration_run::Entity::find()
        .filter(entity::calibration_run::Column::PublicId.eq(public_id))
        .one(txn)
        .await
        .gql(ctx)?
        .ok_or_else(|| ctx.err(AppError::NotFound("run")))
}
