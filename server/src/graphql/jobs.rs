//! The calibration jobs this process computes (`startCalibration`): each runs as its own
//! task, off the request that started it, and records how far it has come where the
//! `calibrationJob` subscription reads it. A job's end is committed with its run (or its
//! reason) and announced on the bus, so subscribers in every process hear of it (other
//! processes through the relay).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use entity::{calibration_job, event};
use tokio::sync::watch;

use super::bus::{Bus, BusEvent};
use crate::calibrate::{Progress, Stage};
use crate::crypto::signing::Signer25519;
use crate::db::Db;
use crate::domain::calibration_jobs;
use crate::domain::{Write, results};
use crate::error::{AppError, AppResult};

/// How long a job that failed waits before recording its end again, when the database
/// could not take it; doubled after each attempt, up to [`CLOSE_RETRY_MAX`].
const CLOSE_RETRY_FIRST: std::time::Duration = std::time::Duration::from_secs(1);
const CLOSE_RETRY_MAX: std::time::Duration = std::time::Duration::from_secs(30);

/// A job running here: how far it has come, and a flag set when it has ended.
pub struct Running {
    pub progress: Arc<Progress>,
    pub ended: watch::Receiver<bool>,
}

/// The jobs running in this process, by row id.
#[derive(Default)]
pub struct Calibrations {
    running: Mutex<HashMap<i64, Arc<Running>>>,
}

impl Calibrations {
    /// The job with row id `id`, if this process is computing it.
    pub fn running(&self, id: i64) -> Option<Arc<Running>> {
        self.running
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(&id)
            .cloned()
    }

    /// Computes `job` (just committed, running) in a task of its own.
    pub fn spawn(
        self: &Arc<Self>,
        db: Db,
        signer: Arc<Signer25519>,
        bus: Bus,
        job: calibration_job::Model,
        e: event::Model,
    ) {
        let progress = Arc::new(Progress::default());
        let (ended_tx, ended) = watch::channel(false);
        self.running
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(
                job.id,
                Arc::new(Running {
                    progress: progress.clone(),
                    ended,
                }),
            );
        let jobs = self.clone();
        tokio::spawn(async move {
            let outcome = compute(&db, &signer, &job, &e, progress).await;
            if let Err(err) = outcome {
                let reason = reason(&err, &job.public_id);
                let mut wait = CLOSE_RETRY_FIRST;
                loop {
                    let closed = async {
                        let w = Write::begin(&db, None).await?;
                        calibration_jobs::fail(&w, &job, &e, &reason).await?;
                        w.commit().await?;
                        AppResult::Ok(())
                    }
                    .await;
                    match closed {
                        Ok(()) => break,
                        // The database is away (or cannot write, or the write lost a
                        // race): the job stays running here, its subscribers waiting,
                        // until its end can be recorded; otherwise it would read as
                        // running for as long as this process lives and no new job of
                        // the event could start.
                        Err(e) if e.is_transient() => {
                            tracing::warn!(job = %job.public_id, error = %e, "cannot record a failed calibration job yet; retrying");
                            tokio::time::sleep(wait).await;
                            db.availability().up().await;
                            wait = (wait * 2).min(CLOSE_RETRY_MAX);
                        }
                        Err(e) => {
                            // The row stays running; once this process is gone it reads as
                            // abandoned, and a new job of the event replaces it.
                            tracing::error!(job = %job.public_id, error = %e, "could not close a failed calibration job");
                            break;
                        }
                    }
                }
            }
            jobs.running
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .remove(&job.id);
            let _ = ended_tx.send(true);
            bus.publish(BusEvent::CalibrationEnded { event_id: e.id });
        });
    }
}

/// Plans, computes and stores the job's run, as `runCalibration` does: computing again on
/// the new inputs when they changed meanwhile, up to [`results::RUN_ATTEMPTS`] times. A
/// read or a store that failed for a passing reason ([`AppError::is_transient`]: the
/// database away for a moment, or a race PostgreSQL ended) is tried again after a pause,
/// up to [`TRANSIENT_ATTEMPTS`] times each: a job has no client to send it again.
async fn compute(
    db: &Db,
    signer: &Signer25519,
    job: &calibration_job::Model,
    e: &event::Model,
    progress: Arc<Progress>,
) -> AppResult<()> {
    for _ in 0..results::RUN_ATTEMPTS {
        progress.step(Stage::Reading, 0, 1);
        let (actor, plan) = retrying(job, || async move {
            let snapshot = db.read().await?;
            let planned = calibration_jobs::plan(&snapshot, job, e).await?;
            snapshot.rollback().await?;
            Ok(planned)
        })
        .await?;
        let computed = results::compute_observed(plan, progress.clone()).await?;
        progress.step(Stage::Storing, 0, 1);
        let (actor, computed) = (&actor, &computed);
        let stored = retrying(job, || async move {
            let w = Write::begin(db, Some(actor.clone())).await?;
            let run = calibration_jobs::finish(&w, job, e, signer, computed).await?;
            if run.is_some() {
                w.commit().await?;
            }
            Ok(run.is_some())
        })
        .await?;
        if stored {
            return Ok(());
        }
    }
    Err(results::inputs_kept_changing())
}

/// How often a job's read or store is tried when it fails for a passing reason: the
/// pauses between tries double from [`CLOSE_RETRY_FIRST`], about half a minute in all.
const TRANSIENT_ATTEMPTS: u32 = 6;

/// Runs `step`, one read or store of `job` (see [`compute`]), again after a pause while it
/// fails for a passing reason, up to [`TRANSIENT_ATTEMPTS`] tries; its last outcome.
async fn retrying<T, F, Fut>(job: &calibration_job::Model, mut step: F) -> AppResult<T>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = AppResult<T>>,
{
    let mut failed = 0;
    loop {
        match step().await {
            Err(err) if err.is_transient() && failed + 1 < TRANSIENT_ATTEMPTS => {
                failed += 1;
                tracing::warn!(job = %job.public_id, error = %err, attempt = failed, "a calibration job's database step failed for a passing reason; trying again");
                tokio::time::sleep(CLOSE_RETRY_FIRST * (1 << (failed - 1))).await;
            }
            outcome => return outcome,
        }
    }
}

/// Why the job failed, in words for the organizers: a refusal as it is, an internal error
/// or the database's absence only as a pointer to the log (where the detail goes).
fn reason(err: &AppError, job: &str) -> String {
    match err.code() {
        "INTERNAL" => {
            tracing::error!(job, error = %err, "calibration job failed");
            format!("internal error (job {job}); the server's log has the detail")
        }
        "UNAVAILABLE" => {
            tracing::warn!(job, error = %err, "calibration job failed: database unavailable");
            "the database was unavailable while this calibration ran; start it again".to_owned()
        }
        _ => err.to_string(),
    }
}
