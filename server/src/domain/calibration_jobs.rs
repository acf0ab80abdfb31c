//! Calibration as a background job (`startCalibration`): the request that starts it
//! returns at once with the job; the server computes, then stores the signed run exactly
//! as `runCalibration` does and records the job's end. A large event's run (20,000
//! projects, 3,000 judges) takes seconds, and never inside a request's time budget.
//!
//! A job is running until it ends with the run it stored or the reason it failed. At
//! most one job runs per event (a unique index). Its row names the server process that
//! computes it (`origin`): a running job whose process is gone (on PostgreSQL: no
//! connection with that application name; on SQLite: not this process) is shown as
//! failed, and a new job of the event replaces it.

use entity::{calibration_job, calibration_run, event, user};
use sea_orm::{
    ActiveModelTrait, ActiveValue::Set, ColumnTrait, ConnectionTrait, DbBackend, EntityTrait,
    QueryFilter, QueryOrder, QuerySelect, Statement,
};
use serde_json::json;

use super::results::{self, ComputedRun, PlannedRun};
use super::{Actor, Organizer, Write};
use crate::audit::Entry;
use crate::error::{AppError, AppResult};

/// What a stopped process leaves behind: a running job nobody computes.
pub const ABANDONED: &str = "the server process computing this calibration stopped; start it again";

/// Jobs listed per event (`Event.calibrationJobs`), newest first.
pub const LISTED: u64 = 20;

/// How a job stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum JobState {
    Running,
    Done,
    Failed,
}

/// A job's row and how it stands: a running row whose process is gone is failed, with
/// [`ABANDONED`] as its error.
#[derive(Clone, Debug)]
pub struct Job {
    pub row: calibration_job::Model,
    pub state: JobState,
    pub error: Option<String>,
}

impl Job {
    fn of(row: calibration_job::Model, live: &Live) -> Job {
        let (state, error) = match (&row.finished_at, row.run_id, &row.error) {
            (Some(_), Some(_), _) => (JobState::Done, None),
            (Some(_), None, e) => (JobState::Failed, e.clone()),
            (None, _, _) if live.has(&row.origin) => (JobState::Running, None),
            (None, _, _) => (JobState::Failed, Some(ABANDONED.to_owned())),
        };
        Job { row, state, error }
    }
}

/// The server processes that are running now, as far as this one can tell.
pub struct Live {
    own: String,
    /// On PostgreSQL, the application names of every open connection; on SQLite (one
    /// process), none besides this one.
    others: Vec<String>,
}

impl Live {
    pub async fn read<C: ConnectionTrait>(db: &C, own: &str) -> AppResult<Live> {
        let others = if db.get_database_backend() == DbBackend::Postgres {
            db.query_all_raw(Statement::from_string(
                DbBackend::Postgres,
                "SELECT DISTINCT application_name AS name FROM pg_stat_activity \
                 WHERE application_name LIKE 'verdict-%'",
            ))
            .await?
            .iter()
            .filter_map(|r| r.try_get::<String>("", "name").ok())
            .collect()
        } else {
            vec![]
        };
        Ok(Live {
            own: own.to_owned(),
            others,
        })
    }

    fn has(&self, origin: &str) -> bool {
        origin == self.own || self.others.iter().any(|o| o == origin)
    }
}

/// `startCalibration`: checks the caller and the parameters as `runCalibration` does and
/// records a running job computed by this process (`origin`), with its one audit entry.
/// CONFLICT while another job of the event is running; a job whose process stopped is
/// closed as failed in the same transaction.
pub async fn start(
    w: &Write,
    org: Organizer<'_>,
    seed: Option<i64>,
    bootstrap: Option<i32>,
    origin: &str,
) -> AppResult<calibration_job::Model> {
    let (txn, actor, e) = (w.txn(), org.actor(), org.event());
    let (seed, bootstrap) = results::run_params(seed, bootstrap)?;
    let t = w.now();
    if let Some(running) = calibration_job::Entity::find()
        .filter(calibration_job::Column::EventId.eq(e.id))
        .filter(calibration_job::Column::FinishedAt.is_null())
        .one(txn)
        .await?
    {
        let live = Live::read(txn, origin).await?;
        if live.has(&running.origin) {
            return Err(AppError::conflict(format!(
                "a calibration of this event is already running (job {}); wait for it to end",
                running.public_id
            )));
        }
        close(w, &running, None, Some(ABANDONED.to_owned())).await?;
    }
    let job = calibration_job::ActiveModel {
        public_id: Set(crate::crypto::public_id("job")),
        event_id: Set(e.id),
        requested_by: Set(actor.public_id().to_owned()),
        seed: Set(seed),
        bootstrap: Set(bootstrap),
        origin: Set(origin.to_owned()),
        created_at: Set(t),
        finished_at: Set(None),
        run_id: Set(None),
        error: Set(None),
        ..Default::default()
    }
    .insert(txn)
    .await?;
    w.append(
        Entry::new("calibration.started", "calibration_job", &job.public_id)
            .by(actor.public_id())
            .in_event(&e.external_id)
            .with(json!({ "job": job.public_id, "seed": seed, "bootstrap": bootstrap })),
    )
    .await?;
    Ok(job)
}

/// The organizer who started `job`, as the actor its run is stored under; FORBIDDEN once
/// they no longer organize the event (checked again when the run is stored).
pub async fn requester<C: ConnectionTrait>(
    db: &C,
    job: &calibration_job::Model,
) -> AppResult<Actor> {
    let user = user::Entity::find()
        .filter(user::Column::PublicId.eq(job.requested_by.as_str()))
        .one(db)
        .await?
        .ok_or_else(|| AppError::forbidden("the organizer who started it no longer exists"))?;
    Ok(Actor { user })
}

/// Reads the job's inputs in the read-only snapshot `db`, as `runCalibration` does, with
/// the organizer who started it (the actor of the write that stores the run).
pub async fn plan<C: ConnectionTrait>(
    db: &C,
    job: &calibration_job::Model,
    e: &event::Model,
) -> AppResult<(Actor, PlannedRun)> {
    let actor = requester(db, job).await?;
    let plan = results::plan_run(db, &actor, e, Some(job.seed), Some(job.bootstrap)).await?;
    Ok((actor, plan))
}

/// Stores the computed run and closes the job with it, in the write `w` (begun for the
/// requester, whom [`plan`] returns; the run's audit entry is the write's one entry).
/// `None` (nothing written) when the event's inputs changed while it computed.
pub async fn finish(
    w: &Write,
    job: &calibration_job::Model,
    e: &event::Model,
    signer: &crate::crypto::signing::Signer25519,
    computed: &ComputedRun,
) -> AppResult<Option<calibration_run::Model>> {
    // The write's actor is the requester (see [`plan`]); they must still organize the event.
    let e = w.event_by_id(e.id).await?;
    let Some(run) = results::store_run(w, w.organizer(&e).await?, signer, computed).await? else {
        return Ok(None);
    };
    if !close(w, job, Some(run.id), None).await? {
        return Err(AppError::conflict(
            "this calibration job was already closed",
        ));
    }
    Ok(Some(run))
}

/// Closes the running `job` now with its run or its error; false (nothing written) when it
/// was closed already.
async fn close(
    w: &Write,
    job: &calibration_job::Model,
    run: Option<i64>,
    error: Option<String>,
) -> AppResult<bool> {
    let txn = w.txn();
    use sea_orm::sea_query::Expr;
    let t = w.now();
    let updated = calibration_job::Entity::update_many()
        .col_expr(calibration_job::Column::FinishedAt, Expr::value(t))
        .col_expr(calibration_job::Column::RunId, Expr::value(run))
        .col_expr(calibration_job::Column::Error, Expr::value(error))
        .filter(calibration_job::Column::Id.eq(job.id))
        .filter(calibration_job::Column::FinishedAt.is_null())
        .exec(txn)
        .await?;
    Ok(updated.rows_affected == 1)
}

/// Closes the job as failed with `reason` (said to the organizers, so never internal
/// detail), with its one audit entry. Nothing when it was closed already.
pub async fn fail(
    w: &Write,
    job: &calibration_job::Model,
    e: &event::Model,
    reason: &str,
) -> AppResult<()> {
    let reason: String = reason.chars().take(1000).collect();
    if close(w, job, None, Some(reason.clone())).await? {
        w.append(
            Entry::new("calibration.failed", "calibration_job", &job.public_id)
                .by(&job.requested_by)
                .in_event(&e.external_id)
                .with(json!({ "job": job.public_id, "error": reason })),
        )
        .await?;
    }
    Ok(())
}

/// The event's job with public id `id`, or None.
pub async fn find<C: ConnectionTrait>(
    db: &C,
    event_id: i64,
    id: &str,
    own_origin: &str,
) -> AppResult<Option<Job>> {
    let Some(row) = calibration_job::Entity::find()
        .filter(calibration_job::Column::EventId.eq(event_id))
        .filter(calibration_job::Column::PublicId.eq(id))
        .one(db)
        .await?
    else {
        return Ok(None);
    };
    Ok(judged(db, vec![row], own_origin).await?.pop())
}

/// The event's latest [`LISTED`] jobs, newest first.
pub async fn list<C: ConnectionTrait>(
    db: &C,
    event_id: i64,
    own_origin: &str,
) -> AppResult<Vec<Job>> {
    let rows = calibration_job::Entity::find()
        .filter(calibration_job::Column::EventId.eq(event_id))
        .order_by_desc(calibration_job::Column::Id)
        .limit(LISTED)
        .all(db)
        .await?;
    judged(db, rows, own_origin).await
}

/// How each row stands; the processes alive are read only when a row is running.
async fn judged<C: ConnectionTrait>(
    db: &C,
    rows: Vec<calibration_job::Model>,
    own_origin: &str,
) -> AppResult<Vec<Job>> {
    let live = if rows.iter().any(|r| r.finished_at.is_none()) {
        Live::read(db, own_origin).await?
    } else {
        Live {
            own: own_origin.to_owned(),
            others: vec![],
        }
    };
    Ok(rows.into_iter().map(|r| Job::of(r, &live)).collect())
}
