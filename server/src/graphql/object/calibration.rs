//! Calibration: signed calibration runs, the jobs that compute them in the background, the
//! live leaderboard, and each judge's calibration. Their rows are matched back to projects
//! and judges through `results::ranked` and [`judged`]; what is published is in `results.rs`.

use std::sync::Arc;

use async_graphql::{Context, Enum, ID, Json, Object};
use chrono::{DateTime, Utc};
use entity::{calibration_run, membership};
use sea_orm::{ColumnTrait, EntityTrait, QueryFilter, QueryOrder};

use super::results::{CalibratedProject, RankingCertainty, ranked, roster};
use super::user::Membership;
use crate::calibrate::{CalibrationResult, JudgeOut, Stage};
use crate::domain::calibration_jobs::{self, Job, JobState};
use crate::graphql::context::{CtxExt, ResultExt};
use crate::graphql::cost;
use crate::graphql::jobs::Calibrations;
use crate::graphql::policy::{FieldGuard, Rule, Scope};

/// Who may read each field of the types in this file, collected by [`crate::graphql::registry`].
pub(crate) const POLICIES: &[(&str, Rule)] = &[
    ("CalibrationRun.id", Rule::Organizer),
    ("CalibrationRun.createdAt", Rule::Organizer),
    ("CalibrationRun.seed", Rule::Organizer),
    ("CalibrationRun.bootstrap", Rule::Organizer),
    ("CalibrationRun.lambda", Rule::Organizer),
    ("CalibrationRun.engineVersion", Rule::Organizer),
    ("CalibrationRun.inputsHash", Rule::Organizer),
    ("CalibrationRun.resultHash", Rule::Organizer),
    ("CalibrationRun.signature", Rule::Organizer),
    ("CalibrationRun.keyFingerprint", Rule::Organizer),
    ("CalibrationRun.connected", Rule::Organizer),
    ("CalibrationRun.projects", Rule::Organizer),
    ("CalibrationRun.judges", Rule::Organizer),
    ("CalibrationRun.diagnostics", Rule::Organizer),
    ("CalibrationRun.certainty", Rule::Organizer),
    ("JudgeCalibration.judge", Rule::Organizer),
    ("JudgeCalibration.reviews", Rule::Organizer),
    ("JudgeCalibration.offset", Rule::Organizer),
    ("JudgeCalibration.scale", Rule::Organizer),
    ("JudgeCalibration.noise", Rule::Organizer),
    ("JudgeCalibration.flag", Rule::Organizer),
    ("JudgeCalibration.comparisons", Rule::Organizer),
    ("JudgeCalibration.reliability", Rule::Organizer),
    ("Leaderboard.computedAt", Rule::Organizer),
    ("Leaderboard.connected", Rule::Organizer),
    ("Leaderboard.components", Rule::Organizer),
    ("Leaderboard.lambda", Rule::Organizer),
    ("Leaderboard.projects", Rule::Organizer),
    ("Leaderboard.judges", Rule::Organizer),
    ("Leaderboard.diagnostics", Rule::Organizer),
    ("Leaderboard.certainty", Rule::Organizer),
    ("CalibrationJob.id", Rule::Organizer),
    ("CalibrationJob.state", Rule::Organizer),
    ("CalibrationJob.stage", Rule::Organizer),
    ("CalibrationJob.stepsDone", Rule::Organizer),
    ("CalibrationJob.steps", Rule::Organizer),
    ("CalibrationJob.seed", Rule::Organizer),
    ("CalibrationJob.bootstrap", Rule::Organizer),
    ("CalibrationJob.startedAt", Rule::Organizer),
    ("CalibrationJob.finishedAt", Rule::Organizer),
    ("CalibrationJob.error", Rule::Organizer),
    ("CalibrationJob.run", Rule::Organizer),
    ("Event.leaderboard", Rule::Organizer),
    ("Event.calibrationRuns", Rule::Organizer),
    ("Event.calibrationRun", Rule::Organizer),
    ("Event.calibrationJobs", Rule::Organizer),
    ("Event.calibrationJob", Rule::Organizer),
];

async fn judged(
    ctx: &Context<'_>,
    event_id: i64,
    r: &CalibrationResult,
) -> async_graphql::Result<Vec<JudgeCalibration>> {
    let roster = roster(ctx, event_id).await?;
    Ok(r.judges
        .iter()
        .filter_map(|j| {
            roster.judges.get(&j.id).map(|m| JudgeCalibration {
                out: j.clone(),
                judge: m.clone(),
            })
        })
        .collect())
}

/// Calibration runs and jobs, and the live leaderboard: a part of
/// [`Event`](super::event::Event), merged into the one GraphQL type.
pub struct EventCalibration(pub(super) super::event::EventRow);

/// Calibration runs and jobs, and the live leaderboard: a part of [`Event`](super::event::Event).
#[Object(guard = "FieldGuard::new(\"Event\", Scope::event(self.0.id))")]
impl EventCalibration {
    /// The live, unsigned calibrated ranking on current data, with rank intervals and judge
    /// diagnostics (organizers only).
    #[graphql(complexity = "cost::calibration(child_complexity)")]
    async fn leaderboard(&self, ctx: &Context<'_>) -> async_graphql::Result<Option<Leaderboard>> {
        Ok(Some(
            Leaderboard::load(ctx.services(), &self.0).await.gql(ctx)?,
        ))
    }
    /// Every calibration run, newest first (organizers only).
    #[graphql(complexity = "cost::short_list(child_complexity)")]
    async fn calibration_runs(
        &self,
        ctx: &Context<'_>,
    ) -> async_graphql::Result<Vec<CalibrationRun>> {
        let rows = calibration_run::Entity::find()
            .filter(calibration_run::Column::EventId.eq(self.0.id))
            .order_by_desc(calibration_run::Column::Id)
            .all(&ctx.db().conn)
            .await
            .gql(ctx)?;
        Ok(rows.into_iter().map(CalibrationRun).collect())
    }
    /// One calibration run of this event by id, with its projects and judges (organizers
    /// only): null when the event has no such run.
    #[graphql(complexity = "cost::load(child_complexity)")]
    async fn calibration_run(
        &self,
        ctx: &Context<'_>,
        #[graphql(desc = "The run's id.")] id: ID,
    ) -> async_graphql::Result<Option<CalibrationRun>> {
        let row = calibration_run::Entity::find()
            .filter(calibration_run::Column::EventId.eq(self.0.id))
            .filter(calibration_run::Column::PublicId.eq(id.as_str()))
            .one(&ctx.db().conn)
            .await
            .gql(ctx)?;
        Ok(row.map(CalibrationRun))
    }
    /// The event's latest calibration jobs (`startCalibration`), newest first, at most 20
    /// (organizers only).
    #[graphql(complexity = "cost::short_list(child_complexity)")]
    async fn calibration_jobs(
        &self,
        ctx: &Context<'_>,
    ) -> async_graphql::Result<Vec<CalibrationJob>> {
        let jobs = calibration_jobs::list(&ctx.db().conn, self.0.id, ctx.db().origin())
            .await
            .gql(ctx)?;
        Ok(jobs
            .into_iter()
            .map(|j| CalibrationJob::of(ctx, j))
            .collect())
    }
    /// One calibration job of this event by id (organizers only): null when the event has
    /// no such job.
    #[graphql(complexity = "cost::load(child_complexity)")]
    async fn calibration_job(
        &self,
        ctx: &Context<'_>,
        #[graphql(desc = "The job's id.")] id: ID,
    ) -> async_graphql::Result<Option<CalibrationJob>> {
        let job = calibration_jobs::find(&ctx.db().conn, self.0.id, &id, ctx.db().origin())
            .await
            .gql(ctx)?;
        Ok(job.map(|j| CalibrationJob::of(ctx, j)))
    }
}

/// How one judge scores relative to the panel (organizers only).
pub struct JudgeCalibration {
    pub out: JudgeOut,
    pub judge: membership::Model,
}

/// How one judge scores relative to the panel (organizers only).
#[Object(guard = "FieldGuard::new(\"JudgeCalibration\", Scope::event(self.judge.event_id))")]
impl JudgeCalibration {
    /// The judge's membership in the event.
    async fn judge(&self) -> Membership {
        Membership(self.judge.clone())
    }
    /// The judge's submitted reviews that the calibration used, on projects not excluded.
    async fn reviews(&self) -> i32 {
        self.out.reviews as i32
    }
    /// Severity: positive scores above the panel, negative below.
    async fn offset(&self) -> f64 {
        self.out.offset.unwrap_or(0.0)
    }
    /// Slope of the judge's scores against the consensus.
    async fn scale(&self) -> f64 {
        self.out.scale.unwrap_or(1.0)
    }
    /// Estimated noise of the judge's scores.
    async fn noise(&self) -> f64 {
        self.out.noise.unwrap_or(0.0)
    }
    /// ok, constant, single_review, discordant, no_reviews or not_comparable. With
    /// comparisons (engines `verdict-calibrate/6` to `/8`), `discordant` also when the judge's
    /// comparisons are improbably unlike an honest judge's.
    async fn flag(&self) -> &str {
        &self.out.flag
    }
    /// The judge's pairwise comparisons that the calibration used (0 when none).
    async fn comparisons(&self) -> i32 {
        self.out
            .comparisons
            .map_or(0, |c| i32::try_from(c).unwrap_or(i32::MAX))
    }
    /// How reliable the judge's comparisons look: the estimated probability that a
    /// comparison follows project quality rather than a coin toss (0.5 to 1); null for a
    /// judge without comparisons.
    async fn reliability(&self) -> Option<f64> {
        self.out.reliability
    }
}

/// An immutable, signed calibration run (organizers only).
pub struct CalibrationRun(pub calibration_run::Model);

impl CalibrationRun {
    /// The run's parsed result, shared with every other field and request that reads it.
    fn result(&self, ctx: &Context<'_>) -> async_graphql::Result<Arc<CalibrationResult>> {
        ctx.services().parsed_runs.get(&self.0).gql(ctx)
    }
}

/// An immutable, signed calibration run (organizers only).
#[Object(guard = "FieldGuard::new(\"CalibrationRun\", Scope::event(self.0.event_id))")]
impl CalibrationRun {
    /// Opaque id; `publishResults` takes it.
    async fn id(&self) -> ID {
        ID(self.0.public_id.clone())
    }
    /// When the run was made.
    async fn created_at(&self) -> DateTime<Utc> {
        self.0.created_at
    }
    /// The seed of the run's cross-validation and bootstrap: the same inputs and seed give
    /// the same result.
    async fn seed(&self) -> i64 {
        self.0.seed
    }
    /// Bootstrap resamples behind the rank intervals; 0 means no intervals.
    async fn bootstrap(&self) -> i32 {
        self.0.bootstrap
    }
    /// The ridge penalty chosen by cross-validation.
    async fn lambda(&self) -> f64 {
        self.0.lambda
    }
    /// The calibration engine that computed it (e.g. `verdict-calibrate/1`).
    async fn engine_version(&self) -> &str {
        &self.0.engine_version
    }
    /// SHA-256 of the pinned canonical inputs.
    async fn inputs_hash(&self) -> &str {
        &self.0.inputs_hash
    }
    /// SHA-256 of the canonical result.
    async fn result_hash(&self) -> &str {
        &self.0.result_hash
    }
    /// Ed25519 signature (hex) over the `verdict.run.v1` pre-image.
    async fn signature(&self) -> &str {
        &self.0.signature
    }
    /// SHA-256 (hex) of the public key that signed the run; compare with
    /// `signingKey.fingerprint`.
    async fn key_fingerprint(&self) -> &str {
        &self.0.key_fingerprint
    }
    /// Whether the judge–project graph is one component; if not, only the largest
    /// component is ranked.
    async fn connected(&self) -> bool {
        self.0.connected
    }
    /// By rank; excluded projects last with rank null.
    #[graphql(complexity = "crate::graphql::cost::event_list(child_complexity)")]
    async fn projects(&self, ctx: &Context<'_>) -> async_graphql::Result<Vec<CalibratedProject>> {
        Ok(ranked(self.0.event_id, &self.result(ctx)?))
    }
    /// How each judge scored relative to the panel in this run.
    #[graphql(complexity = "crate::graphql::cost::event_list(child_complexity)")]
    async fn judges(&self, ctx: &Context<'_>) -> async_graphql::Result<Vec<JudgeCalibration>> {
        let r = self.result(ctx)?;
        judged(ctx, self.0.event_id, &r).await
    }
    /// Outlying reviews and judge pairs with identical scores (not inputs to the model);
    /// from engine `verdict-calibrate/3` on also `convergence`, `signal` (the shares of
    /// score variance: project quality with its 90 % bounds, judge severity, noise) and
    /// `summary` (what to do about it, in plain words).
    #[graphql(complexity = "crate::graphql::cost::load(child_complexity)")]
    async fn diagnostics(
        &self,
        ctx: &Context<'_>,
    ) -> async_graphql::Result<Json<serde_json::Value>> {
        Ok(Json(
            serde_json::to_value(&self.result(ctx)?.diagnostics).unwrap_or_default(),
        ))
    }
    /// How certain the top places are; null for runs of engines before
    /// `verdict-calibrate/3` or without draws (`bootstrap: 0`).
    #[graphql(complexity = "crate::graphql::cost::load(child_complexity)")]
    async fn certainty(
        &self,
        ctx: &Context<'_>,
    ) -> async_graphql::Result<Option<RankingCertainty>> {
        Ok(RankingCertainty::of(self.0.event_id, &self.result(ctx)?))
    }
}

/// The live, unsigned preview on current data (organizers only).
#[derive(Clone)]
pub struct Leaderboard {
    pub event_id: i64,
    pub computed_at: DateTime<Utc>,
    /// Shared by every subscriber that receives this computation.
    pub result: Arc<CalibrationResult>,
}

/// The live, unsigned preview on current data (organizers only).
#[Object(guard = "FieldGuard::new(\"Leaderboard\", Scope::event(self.event_id))")]
impl Leaderboard {
    /// When this ranking was computed: afresh after each change of the event's data.
    async fn computed_at(&self) -> DateTime<Utc> {
        self.computed_at
    }
    /// Whether the judge–project graph is one component; if not, only the largest
    /// component is ranked.
    async fn connected(&self) -> bool {
        self.result.connected
    }
    /// Connected components of the judge–project graph, counting only judges and projects
    /// with a usable review.
    async fn components(&self) -> i32 {
        self.result.components as i32
    }
    /// The ridge penalty chosen by cross-validation; null when there was nothing to fit.
    async fn lambda(&self) -> Option<f64> {
        self.result.lambda
    }
    /// By rank; excluded projects last with rank null.
    #[graphql(complexity = "crate::graphql::cost::event_list(child_complexity)")]
    async fn projects(&self) -> Vec<CalibratedProject> {
        ranked(self.event_id, &self.result)
    }
    /// How each judge scores relative to the panel.
    #[graphql(complexity = "crate::graphql::cost::event_list(child_complexity)")]
    async fn judges(&self, ctx: &Context<'_>) -> async_graphql::Result<Vec<JudgeCalibration>> {
        judged(ctx, self.event_id, &self.result).await
    }
    /// Outlying reviews and judge pairs with identical scores (not inputs to the model),
    /// and the fit's `convergence`, `signal` and `summary` (see `CalibrationRun.diagnostics`).
    async fn diagnostics(&self) -> Json<serde_json::Value> {
        Json(serde_json::to_value(&self.result.diagnostics).unwrap_or_default())
    }
    /// How certain the top places are on current data.
    async fn certainty(&self) -> Option<RankingCertainty> {
        RankingCertainty::of(self.event_id, &self.result)
    }
}

impl Leaderboard {
    /// The event's live leaderboard on current data: computed once per change of the data
    /// and shared ([`crate::memo::PerHead`]).
    pub async fn load(
        services: &crate::graphql::Services,
        e: &entity::event::Model,
    ) -> crate::error::AppResult<Self> {
        let db = &services.db.conn;
        let head = crate::audit::head_seq(db).await?;
        let (result, computed_at) = services
            .previews
            .get(e.id, head, async || {
                let result = crate::domain::results::preview(db, e).await?;
                Ok::<_, crate::error::AppError>((Arc::new(result), Utc::now()))
            })
            .await?;
        Ok(Leaderboard {
            event_id: e.id,
            computed_at,
            result,
        })
    }
}

/// A calibration computing in the background (`startCalibration`), and how it ended.
pub struct CalibrationJob {
    pub job: Job,
    /// How far it has come, when this server process computes it.
    pub progress: Option<(Stage, u32, u32)>,
}

impl CalibrationJob {
    /// `job` with its progress, read from this process's running jobs.
    pub fn of(ctx: &Context<'_>, job: Job) -> CalibrationJob {
        CalibrationJob::with_progress(&ctx.services().calibrations, job)
    }

    /// `job` with its progress, when `running` (this process's jobs) computes it.
    pub fn with_progress(running: &Calibrations, job: Job) -> CalibrationJob {
        let progress = match job.state {
            JobState::Running => running.running(job.row.id).and_then(|r| r.progress.read()),
            JobState::Done | JobState::Failed => None,
        };
        CalibrationJob { job, progress }
    }
}

/// How a calibration job stands.
#[derive(Enum, Copy, Clone, Debug, PartialEq, Eq)]
#[graphql(remote = "JobState")]
pub enum CalibrationJobState {
    /// Computing.
    Running,
    /// Its run is stored (`run`).
    Done,
    /// It ended without a run (`error` says why).
    Failed,
}

/// The stages of a calibration, in the order they run.
#[derive(Enum, Copy, Clone, Debug, PartialEq, Eq)]
#[graphql(remote = "Stage")]
pub enum CalibrationStage {
    /// Reading the event's reviews and pinning them as the run's inputs.
    Reading,
    /// Reweighting passes while the judges' noise settles.
    Weighting,
    /// One fit per cross-validation fold, each at every ridge strength of the grid.
    CrossValidating,
    /// The passes at the chosen ridge strength.
    Fitting,
    /// The bootstrap replicates behind the rank intervals (drawn, then ranked).
    Bootstrapping,
    /// Checking that the inputs did not change meanwhile, then signing and storing the run
    /// (when they changed, it goes back to `READING`).
    Storing,
}

/// A calibration computing in the background (`startCalibration`), and how it ended
/// (organizers only).
#[Object(guard = "FieldGuard::new(\"CalibrationJob\", Scope::event(self.job.row.event_id))")]
impl CalibrationJob {
    /// The job's id, for `Event.calibrationJob` and the `calibrationJob` subscription.
    async fn id(&self) -> ID {
        ID(self.job.row.public_id.clone())
    }
    /// Whether it computes, stored its run, or failed.
    async fn state(&self) -> CalibrationJobState {
        self.job.state.into()
    }
    /// The stage it is in; null before the first, once it ended, and when another server
    /// process computes it.
    async fn stage(&self) -> Option<CalibrationStage> {
        self.progress.map(|(s, _, _)| s.into())
    }
    /// Steps of `stage` done so far.
    async fn steps_done(&self) -> Option<i32> {
        self.progress.map(|(_, d, _)| d as i32)
    }
    /// Steps `stage` takes in all.
    async fn steps(&self) -> Option<i32> {
        self.progress.map(|(_, _, t)| t as i32)
    }
    /// Seed of the run's randomness, as asked for (default 1).
    async fn seed(&self) -> i64 {
        self.job.row.seed
    }
    /// Bootstrap replicates, as asked for (default 200).
    async fn bootstrap(&self) -> i32 {
        self.job.row.bootstrap
    }
    /// When `startCalibration` started it.
    async fn started_at(&self) -> DateTime<Utc> {
        self.job.row.created_at
    }
    /// When it stored its run or failed; null while it runs (and for a job whose process
    /// stopped, which never finished).
    async fn finished_at(&self) -> Option<DateTime<Utc>> {
        self.job.row.finished_at
    }
    /// Why it failed: the inputs kept changing, the organizer who started it lost the
    /// role, or the server process computing it stopped.
    async fn error(&self) -> Option<&str> {
        self.job.error.as_deref()
    }
    /// The run it stored, once done.
    async fn run(&self, ctx: &Context<'_>) -> async_graphql::Result<Option<CalibrationRun>> {
        let Some(id) = self.job.row.run_id else {
            return Ok(None);
        };
        let row = ctx
            .services()
            .parsed_runs
            .row(&ctx.db().conn, id)
            .await
            .gql(ctx)?;
        Ok(row.map(|r| CalibrationRun(r.as_ref().clone())))
    }
}
