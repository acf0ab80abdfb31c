//! Results mutations: run the calibration (a signed, immutable run) and publish a run as
//! the event's next result version.

use async_graphql::{Context, ID, Object};
use serde_json::json;

use super::write::{event_of, idempotent};
use crate::domain::idempotency::Key;
use crate::domain::results;
use crate::graphql::bus::BusEvent;
use crate::graphql::context::{CtxExt, ResultExt};
use crate::graphql::cost;
use crate::graphql::object::results::{CalibrationRun, ResultPublication};
use crate::graphql::policy::{FieldGuard, Rule, Scope};

/// Who may call each mutation of this file, collected by [`crate::graphql::policy`].
pub(crate) const POLICIES: &[(&str, Rule)] = &[
    ("Mutation.runCalibration", Rule::SignedIn),
    ("Mutation.publishResults", Rule::SignedIn),
];

#[derive(Default)]
pub struct ResultsMutation;

#[Object(guard = "FieldGuard::new(\"Mutation\", Scope::none())")]
impl ResultsMutation {
    /// Runs the calibration on the event's current reviews (the submitted ones whose
    /// assignment is not recused) and stores the signed, immutable run (organizers).
    #[graphql(complexity = "cost::calibration(child_complexity)")]
    async fn run_calibration(
        &self,
        ctx: &Context<'_>,
        #[graphql(desc = "The event, by slug; NOT_FOUND when no event has it.")] event: String,
        #[graphql(
            desc = "Seed of the run's randomness (cross-validation folds, bootstrap), at least \
                    0; defaults to 1. The same inputs and seed give the same result."
        )]
        seed: Option<i32>,
        #[graphql(
            desc = "Bootstrap replicates behind the rank intervals, 0 to 2,000; defaults to 200."
        )]
        bootstrap: Option<i32>,
        #[graphql(
            desc = "Retry key (1-200 characters, per caller): a retry with the same key and \
                    input returns the first result without writing again; the same key with \
                    another request is a CONFLICT."
        )]
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
        let signer = ctx.services().signer.clone();
        let run = idempotent(ctx, &actor, key, async |txn| {
            results::run_calibration(txn, &actor, &e, &signer, seed.map(i64::from), bootstrap).await
        })
        .await?;
        Ok(CalibrationRun(run))
    }

    /// Publishes a run as the event's next result version, provisional or final
    /// (organizers). After a final publication, nothing more is published (CONFLICT).
    /// `resultsPublished` subscribers hear of it.
    async fn publish_results(
        &self,
        ctx: &Context<'_>,
        #[graphql(desc = "The event, by slug; NOT_FOUND when no event has it.")] event: String,
        #[graphql(desc = "The calibration run to publish, by its id (`CalibrationRun.id`).")]
        run: ID,
        #[graphql(
            name = "final",
            desc = "Whether these are the final results; defaults to false (provisional)."
        )]
        is_final: Option<bool>,
        #[graphql(
            desc = "Retry key (1-200 characters, per caller): a retry with the same key and \
                    input returns the first result without writing again; the same key with \
                    another request is a CONFLICT."
        )]
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
        let signer = ctx.services().signer.clone();
        // Only a fresh publication is announced; a replayed request was announced the first
        // time.
        let mut fresh = false;
        let (row, published_run) = idempotent(ctx, &actor, key, async |txn| {
            fresh = true;
            results::publish(txn, &actor, &e, &signer, &run, is_final.unwrap_or(false)).await
        })
        .await?;
        if fresh {
            ctx.services().bus.publish(BusEvent::ResultsPublished {
                event_id: e.id,
                publication_id: row.id,
            });
        }
        Ok(ResultPublication {
            row,
            run: published_run,
        })
    }
}
