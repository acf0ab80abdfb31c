//! Results mutations: run the calibration (a signed, immutable run) and publish a run as
//! the event's next result version.

use async_graphql::{Context, ID, Object};
use serde_json::json;

use super::write::idempotent;
use crate::domain::calibration_jobs::{self, Job, JobState};
use crate::domain::idempotency::{self, Key};
use crate::domain::{event_by_slug, results};
use crate::error::AppError;
use crate::graphql::bus::BusEvent;
use crate::graphql::context::{CtxExt, ResultExt};
use crate::graphql::cost;
use crate::graphql::object::calibration::{CalibrationJob, CalibrationRun};
use crate::graphql::object::results::ResultPublication;
use crate::graphql::policy::{FieldGuard, Rule, Scope};

/// Who may call each mutation of this file, collected by [`crate::graphql::policy`].
pub(crate) const POLICIES: &[(&str, Rule)] = &[
    ("Mutation.runCalibration", Rule::SignedIn),
    ("Mutation.startCalibration", Rule::SignedIn),
    ("Mutation.publishResults", Rule::SignedIn),
];

#[derive(Default)]
pub struct ResultsMutation;

#[Object(guard = "FieldGuard::new(\"Mutation\", Scope::none())")]
impl ResultsMutation {
    /// Runs the calibration on the event's current reviews (the submitted ones whose
    /// assignment is not recused) and stores the signed, immutable run (organizers). Other
    /// writes go on while it computes; if the event's inputs change meanwhile, it computes
    /// again on the new ones, and after three such attempts refuses with CONFLICT. The run's
    /// `inputsHash` is always that of the inputs when it was stored.
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
            desc = "Draws behind the rank intervals and the podium's certainty (posterior draws; \
                    bootstrap replicates for engines before verdict-calibrate/3), 0 to 2,000; \
                    defaults to 200."
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
        let input = json!({ "event": event, "seed": seed, "bootstrap": bootstrap });
        let key = || Key::new(idempotency_key.clone(), "runCalibration", &input).gql(ctx);
        key()?;
        let signer = ctx.services().signer.clone();
        let db = ctx.db();
        let seed = seed.map(i64::from);
        // The fit runs with no transaction open (seconds on a large event, during which
        // SQLite's one write lock used to be held); the write transaction then only checks
        // that the inputs are unchanged and stores the run. When they changed (a review
        // saved meanwhile), the run computes again on the new inputs: the organizer asked
        // for a run on the current reviews, and computing again is what they would do on a
        // refusal. Bounded, so that an event whose inputs never settle gets a CONFLICT
        // instead of a request that never ends.
        for _ in 0..results::RUN_ATTEMPTS {
            // The event and the inputs are read in one read-only snapshot; the write below
            // reads the event again, locked, and stores the run only if the inputs are
            // still those.
            let snapshot = db.read().await.gql(ctx)?;
            let e = event_by_slug(&snapshot, &event).await.gql(ctx)?;
            // A retry of a request that already stored its run replays it without computing.
            let replay = match key()? {
                Some(k) => idempotency::replay(&snapshot, &actor, &k)
                    .await
                    .gql(ctx)?
                    .is_some(),
                None => false,
            };
            let plan = if replay {
                None
            } else {
                Some(
                    results::plan_run(&snapshot, &actor, &e, seed, bootstrap)
                        .await
                        .gql(ctx)?,
                )
            };
            snapshot.rollback().await.gql(ctx)?;
            let computed = match plan {
                Some(plan) => Some(results::compute_run(plan).await.gql(ctx)?),
                None => None,
            };
            let mut changed = false;
            let stored = idempotent(ctx, &actor, key()?, async |w| {
                let Some(computed) = &computed else {
                    return Err(AppError::conflict(
                        "the earlier request with this idempotency key is no longer on \
                         record; send the request again",
                    ));
                };
                let e = w.event_by_id(e.id).await?;
                let run = results::store_run(w, w.organizer(&e).await?, &signer, computed).await?;
                changed = run.is_none();
                run.ok_or_else(results::inputs_kept_changing)
            })
            .await;
            if !changed {
                return stored.map(CalibrationRun);
            }
        }
        Err(ctx.err(results::inputs_kept_changing()))
    }

    /// Starts the calibration of the event's current reviews in the background
    /// (organizers) and returns at once with the job, RUNNING: the same signed run as
    /// `runCalibration`, for events whose calibration takes longer than a request should
    /// wait. Follow it with the `calibrationJob` subscription (its stage and steps while it
    /// computes, then DONE with its `run` or FAILED with its `error`) or read
    /// `Event.calibrationJob`. One job runs per event at a time: CONFLICT while another
    /// runs.
    async fn start_calibration(
        &self,
        ctx: &Context<'_>,
        #[graphql(desc = "The event, by slug; NOT_FOUND when no event has it.")] event: String,
        #[graphql(
            desc = "Seed of the run's randomness (cross-validation folds, bootstrap), at least \
                    0; defaults to 1. The same inputs and seed give the same result."
        )]
        seed: Option<i32>,
        #[graphql(
            desc = "Draws behind the rank intervals and the podium's certainty (posterior draws; \
                    bootstrap replicates for engines before verdict-calibrate/3), 0 to 2,000; \
                    defaults to 200."
        )]
        bootstrap: Option<i32>,
        #[graphql(
            desc = "Retry key (1-200 characters, per caller): a retry with the same key and \
                    input returns the first job without starting another; the same key with \
                    another request is a CONFLICT."
        )]
        idempotency_key: Option<String>,
    ) -> async_graphql::Result<CalibrationJob> {
        let actor = ctx.actor()?;
        let key = Key::new(
            idempotency_key,
            "startCalibration",
            &json!({ "event": event, "seed": seed, "bootstrap": bootstrap }),
        )
        .gql(ctx)?;
        let services = ctx.services();
        let origin = services.db.origin().to_owned();
        let mut fresh = false;
        let mut started = None;
        let row = idempotent(ctx, &actor, key, async |w| {
            fresh = true;
            let e = w.event(&event).await?;
            let job = calibration_jobs::start(
                w,
                w.organizer(&e).await?,
                seed.map(i64::from),
                bootstrap,
                &origin,
            )
            .await?;
            started = Some(e);
            Ok(job)
        })
        .await?;
        if fresh && let Some(e) = started {
            services.calibrations.spawn(
                services.db.clone(),
                services.signer.clone(),
                services.bus.clone(),
                row.clone(),
                e,
            );
            let job = Job {
                row,
                state: JobState::Running,
                error: None,
            };
            return Ok(CalibrationJob::of(ctx, job));
        }
        // A replay: the job as it stands now.
        let job = calibration_jobs::find(&services.db.conn, row.event_id, &row.public_id, &origin)
            .await
            .gql(ctx)?
            .ok_or_else(|| ctx.err(AppError::NotFound("calibration job")))?;
        Ok(CalibrationJob::of(ctx, job))
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
        let signer = ctx.services().signer.clone();
        // Only a fresh publication is announced; a replayed request was announced the first
        // time.
        let mut fresh = false;
        let (row, published_run) = idempotent(ctx, &actor, key, async |w| {
            fresh = true;
            let e = w.event(&event).await?;
            let org = w.organizer(&e).await?;
            results::publish(w, org, &signer, &run, is_final.unwrap_or(false)).await
        })
        .await?;
        if fresh {
            ctx.services().bus.publish(BusEvent::ResultsPublished {
                event_id: row.event_id,
                publication_id: row.id,
            });
        }
        Ok(ResultPublication {
            row,
            run: std::sync::Arc::new(published_run),
        })
    }
}
