//! Results: signed calibration runs, the live leaderboard, publications and the frozen
//! public projection they carry, and the deployment's signing key. Calibrated rows are
//! matched back to projects and judges here (`ranked`, `judged`).

use std::sync::Arc;

use async_graphql::{Context, Enum, ID, Json, Object};
use chrono::{DateTime, Utc};
use entity::{calibration_run, membership, result_publication};
use sea_orm::{ColumnTrait, EntityTrait, QueryFilter, QueryOrder};

use super::project::Project;
use super::user::Membership;
use crate::calibrate::{CalibrationResult, Certainty, JudgeOut, PlaceOdds, ProjectOut, Stage};
use crate::domain::calibration_jobs::{self, Job, JobState};
use crate::domain::results::published_at_text;
use crate::graphql::connection::{Page, page_of_list};
use crate::graphql::context::{CtxExt, ResultExt};
use crate::graphql::cost;
use crate::graphql::jobs::Calibrations;
use crate::graphql::loaders::{EventId, LoadersExt, ProjectRef, Roster, maybe, one};
use crate::graphql::policy::{FieldGuard, Rule, Scope};

/// Who may read each field of the types in this file, collected by [`crate::graphql::policy`].
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
    // Carries no judge data: reached by organizers through runs and the leaderboard, and
    // by everyone through published results.
    ("CalibratedProject.project", Rule::Public),
    ("CalibratedProject.projectExternalId", Rule::Public),
    ("CalibratedProject.reviews", Rule::Public),
    ("CalibratedProject.rawMean", Rule::Public),
    ("CalibratedProject.rawRank", Rule::Public),
    ("CalibratedProject.quality", Rule::Public),
    ("CalibratedProject.stdError", Rule::Public),
    ("CalibratedProject.rank", Rule::Public),
    ("CalibratedProject.rankLow", Rule::Public),
    ("CalibratedProject.rankHigh", Rule::Public),
    ("CalibratedProject.excluded", Rule::Public),
    ("JudgeCalibration.judge", Rule::Organizer),
    ("JudgeCalibration.reviews", Rule::Organizer),
    ("JudgeCalibration.offset", Rule::Organizer),
    ("JudgeCalibration.scale", Rule::Organizer),
    ("JudgeCalibration.noise", Rule::Organizer),
    ("JudgeCalibration.flag", Rule::Organizer),
    ("Leaderboard.computedAt", Rule::Organizer),
    ("Leaderboard.connected", Rule::Organizer),
    ("Leaderboard.components", Rule::Organizer),
    ("Leaderboard.lambda", Rule::Organizer),
    ("Leaderboard.projects", Rule::Organizer),
    ("Leaderboard.judges", Rule::Organizer),
    ("Leaderboard.diagnostics", Rule::Organizer),
    ("Leaderboard.certainty", Rule::Organizer),
    // Derived from the draws of the qualities only, no judge data: public once published.
    ("RankingCertainty.draws", Rule::Public),
    ("RankingCertainty.places", Rule::Public),
    ("RankingCertainty.pairs", Rule::Public),
    ("PlaceCertainty.entry", Rule::Public),
    ("PlaceCertainty.rank", Rule::Public),
    ("PlaceCertainty.probability", Rule::Public),
    ("PlaceCertainty.atLeast", Rule::Public),
    ("PairCertainty.better", Rule::Public),
    ("PairCertainty.worse", Rule::Public),
    ("PairCertainty.probability", Rule::Public),
    ("ResultPublication.id", Rule::Public),
    ("ResultPublication.version", Rule::Public),
    ("ResultPublication.final", Rule::Public),
    ("ResultPublication.publishedAt", Rule::Public),
    ("ResultPublication.runId", Rule::Public),
    ("ResultPublication.signature", Rule::Public),
    ("ResultPublication.results", Rule::Public),
    ("PublishedResults.version", Rule::Public),
    ("PublishedResults.final", Rule::Public),
    ("PublishedResults.publishedAt", Rule::Public),
    ("PublishedResults.publishedAtSigned", Rule::Public),
    ("PublishedResults.runId", Rule::Public),
    ("PublishedResults.inputsHash", Rule::Public),
    ("PublishedResults.resultHash", Rule::Public),
    ("PublishedResults.signature", Rule::Public),
    ("PublishedResults.publicationSignature", Rule::Public),
    ("PublishedResults.keyFingerprint", Rule::Public),
    ("PublishedResults.connected", Rule::Public),
    ("PublishedResults.ranking", Rule::Public),
    ("PublishedResults.rankingPage", Rule::Public),
    ("PublishedResults.certainty", Rule::Public),
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
    ("SigningKey.algorithm", Rule::Public),
    ("SigningKey.publicKeyPem", Rule::Public),
    ("SigningKey.fingerprint", Rule::Public),
    ("Event.leaderboard", Rule::Organizer),
    ("Event.calibrationRuns", Rule::Organizer),
    ("Event.calibrationRun", Rule::Organizer),
    ("Event.calibrationJobs", Rule::Organizer),
    ("Event.calibrationJob", Rule::Organizer),
    ("Event.results", Rule::Public),
    ("Event.publications", Rule::Public),
];

/// Calibration runs and jobs, the live leaderboard, and published results: a part of [`Event`](super::event::Event), merged into the one GraphQL type.
pub struct EventResults(pub(super) super::event::EventRow);

/// Calibration runs and jobs, the live leaderboard, and published results: a part of [`Event`](super::event::Event).
#[Object(guard = "FieldGuard::new(\"Event\", Scope::event(self.0.id))")]
impl EventResults {
    /// The live, unsigned calibrated ranking on current data, with rank intervals and judge
    /// diagnostics (organizers only).
    #[graphql(complexity = "cost::calibration(child_complexity)")]
    async fn leaderboard(&self, ctx: &Context<'_>) -> async_graphql::Result<Option<Leaderboard>> {
        Ok(Some(
            Leaderboard::load(&ctx.db().conn, &self.0).await.gql(ctx)?,
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
    /// The latest published results: null until the organizers publish.
    #[graphql(complexity = "cost::load(child_complexity)")]
    async fn results(&self, ctx: &Context<'_>) -> async_graphql::Result<Option<PublishedResults>> {
        Ok(latest_publication(ctx, self.0.id)
            .await?
            .map(|p| p.results_of()))
    }
    /// Every publication, oldest first.
    #[graphql(complexity = "cost::short_list(child_complexity)")]
    async fn publications(
        &self,
        ctx: &Context<'_>,
    ) -> async_graphql::Result<Vec<ResultPublication>> {
        let db = &ctx.db().conn;
        let rows = result_publication::Entity::find()
            .filter(result_publication::Column::EventId.eq(self.0.id))
            .order_by_asc(result_publication::Column::Version)
            .all(db)
            .await
            .gql(ctx)?;
        // Runs are immutable and shared: each is read once per process, not per request.
        let mut out = Vec::with_capacity(rows.len());
        for row in rows {
            let run = ctx
                .services()
                .parsed_runs
                .row(db, row.run_id)
                .await
                .gql(ctx)?;
            out.extend(run.map(|run| ResultPublication { row, run }));
        }
        Ok(out)
    }
}

/// The event's projects and judges by their calibration ids, loaded once per event for all
/// the fields of a request that need them.
async fn roster(ctx: &Context<'_>, event_id: i64) -> async_graphql::Result<Arc<Roster>> {
    one(ctx, ctx.loaders().rosters(), EventId(event_id), "event").await
}

/// Every project of a result, in its order. Each entry points into the shared result, and
/// finds its project row only if `project` is asked for (batched through a loader).
fn ranked(event_id: i64, r: &Arc<CalibrationResult>) -> Vec<CalibratedProject> {
    (0..r.projects.len())
        .map(|index| CalibratedProject::at(event_id, r, index))
        .collect()
}

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

/// One project's place in a calibrated ranking. Holds no judge data, so it is what the
/// public sees once results are published.
pub struct CalibratedProject {
    pub event_id: i64,
    result: Arc<CalibrationResult>,
    index: usize,
}

impl CalibratedProject {
    /// Entry `index` of `result`.
    pub(crate) fn at(event_id: i64, result: &Arc<CalibrationResult>, index: usize) -> Self {
        CalibratedProject {
            event_id,
            result: result.clone(),
            index,
        }
    }

    /// The project's row in the result, exactly as computed (and, for a run, signed).
    fn out(&self) -> &ProjectOut {
        &self.result.projects[self.index]
    }
}

/// The project of `event_id` with external id `external_id`, as it is now, if the caller
/// may see it (a project withdrawn after a run stays visible to its team and organizers
/// only); batched through a loader.
pub(crate) async fn visible_project(
    ctx: &Context<'_>,
    event_id: i64,
    external_id: &str,
) -> async_graphql::Result<Option<Project>> {
    let key = ProjectRef {
        event: event_id,
        external_id: external_id.to_owned(),
    };
    let Some(p) = maybe(ctx, ctx.loaders().projects_by_external_id(), key).await? else {
        return Ok(None);
    };
    let access = ctx.rc().access(ctx.db()).await.gql(ctx)?;
    Ok(access.can_see_project(&p).then_some(Project(p)))
}

/// One project's place in a calibrated ranking. Holds no judge data, so it is what the
/// public sees once results are published.
#[Object(guard = "FieldGuard::new(\"CalibratedProject\", Scope::event(self.event_id))")]
impl CalibratedProject {
    /// The project ranked, as it is now; null when the caller may no longer see it (it
    /// was withdrawn after the run: only its team and the organizers still see it).
    /// `projectExternalId` names it either way.
    async fn project(&self, ctx: &Context<'_>) -> async_graphql::Result<Option<Project>> {
        visible_project(ctx, self.event_id, &self.out().id).await
    }
    /// The project's external id exactly as the calibrated result names it (for a run,
    /// as signed: `result.json` of the exported bundle), also when `project` is null.
    async fn project_external_id(&self) -> &str {
        &self.out().id
    }
    /// Submitted reviews counted.
    async fn reviews(&self) -> i32 {
        self.out().reviews as i32
    }
    /// Mean of the weighted rubric totals (0..1), before calibration.
    async fn raw_mean(&self) -> Option<f64> {
        self.out().raw_mean
    }
    /// Rank by `rawMean` among the ranked projects (ties share the best rank), to compare
    /// with `rank`; null when the project is not ranked.
    async fn raw_rank(&self) -> Option<i32> {
        self.out().raw_rank.map(|r| r as i32)
    }
    /// Calibrated quality: judge severity removed.
    async fn quality(&self) -> Option<f64> {
        self.out().quality
    }
    /// Standard error of `quality`; null when the project is not ranked or there are too
    /// few reviews to estimate it.
    async fn std_error(&self) -> Option<f64> {
        self.out().std_error
    }
    /// Calibrated rank, 1 = best (ties share the best rank); null when the project is not
    /// ranked (see `excluded`).
    async fn rank(&self) -> Option<i32> {
        self.out().rank.map(|r| r as i32)
    }
    /// Lower end of the 90% rank interval.
    async fn rank_low(&self) -> Option<i32> {
        self.out().rank_low.map(|r| r as i32)
    }
    /// Upper end of the 90% rank interval.
    async fn rank_high(&self) -> Option<i32> {
        self.out().rank_high.map(|r| r as i32)
    }
    /// Why it is not ranked (duplicate, not_submitted, no_usable_reviews, not_comparable).
    async fn excluded(&self) -> Option<&str> {
        self.out().excluded.as_deref()
    }
}

/// How certain the top of a ranking is (engine `verdict-calibrate/3` on): from draws of
/// the projects' qualities given the reviews, how often each of the first ten holds its
/// place and how often one beats another. No judge data.
pub struct RankingCertainty {
    event_id: i64,
    /// A result whose engine computed its certainty ([`RankingCertainty::of`]).
    result: Arc<CalibrationResult>,
}

/// What [`RankingCertainty::certainty`] falls back on (never, as `of` makes one only for a
/// result with a certainty).
static NO_CERTAINTY: Certainty = Certainty {
    draws: 0,
    places: Vec::new(),
    pairs: Vec::new(),
};

impl RankingCertainty {
    /// The result's certainty, if its engine computed one.
    fn of(event_id: i64, result: &Arc<CalibrationResult>) -> Option<Self> {
        result.certainty.as_ref()?;
        Some(RankingCertainty {
            event_id,
            result: result.clone(),
        })
    }

    fn certainty(&self) -> &Certainty {
        self.result.certainty.as_ref().unwrap_or(&NO_CERTAINTY)
    }

    /// The ranking entry of the project with calibration id `id`.
    fn entry(&self, id: &str) -> Option<CalibratedProject> {
        let index = self.result.projects.iter().position(|p| p.id == id)?;
        Some(CalibratedProject::at(self.event_id, &self.result, index))
    }
}

/// How certain the top of a ranking is (engine `verdict-calibrate/3` on): from draws of
/// the projects' qualities given the reviews, how often each of the first ten holds its
/// place and how often one beats another. No judge data.
#[Object(guard = "FieldGuard::new(\"RankingCertainty\", Scope::event(self.event_id))")]
impl RankingCertainty {
    /// Posterior draws the probabilities are shares of (the run's `bootstrap`).
    async fn draws(&self) -> i32 {
        self.certainty().draws as i32
    }
    /// The first ten ranked projects in published order, each with the probability that
    /// its true rank is its published one ("first place is certain").
    async fn places(&self) -> Vec<PlaceCertainty> {
        self.certainty()
            .places
            .iter()
            .filter_map(|p| {
                Some(PlaceCertainty {
                    entry: self.entry(&p.project)?,
                    odds: p.clone(),
                })
            })
            .collect()
    }
    /// Every pair among `places`, the better-ranked first, with the probability that it
    /// is truly better ("second and third are a coin toss" when near 0.5).
    async fn pairs(&self) -> Vec<PairCertainty> {
        self.certainty()
            .pairs
            .iter()
            .filter_map(|p| {
                Some(PairCertainty {
                    better: self.entry(&p.better)?,
                    worse: self.entry(&p.worse)?,
                    probability: p.probability,
                })
            })
            .collect()
    }
}

/// One of the top places and how sure it is.
pub struct PlaceCertainty {
    entry: CalibratedProject,
    odds: PlaceOdds,
}

/// One of the top places and how sure it is.
#[Object(guard = "FieldGuard::new(\"PlaceCertainty\", Scope::event(self.entry.event_id))")]
impl PlaceCertainty {
    /// The project's entry in the ranking.
    async fn entry(&self) -> &CalibratedProject {
        &self.entry
    }
    /// Its published rank.
    async fn rank(&self) -> i32 {
        self.odds.rank as i32
    }
    /// Probability that its true rank is exactly `rank`.
    async fn probability(&self) -> f64 {
        self.odds.exact
    }
    /// Probability that its true rank is `rank` or better (it deserves at least this place).
    async fn at_least(&self) -> f64 {
        self.odds.at_least
    }
}

/// Two of the top projects and how sure their order is.
pub struct PairCertainty {
    better: CalibratedProject,
    worse: CalibratedProject,
    probability: f64,
}

/// Two of the top projects and how sure their order is.
#[Object(guard = "FieldGuard::new(\"PairCertainty\", Scope::event(self.better.event_id))")]
impl PairCertainty {
    /// The better-ranked of the two.
    async fn better(&self) -> &CalibratedProject {
        &self.better
    }
    /// The worse-ranked of the two.
    async fn worse(&self) -> &CalibratedProject {
        &self.worse
    }
    /// Probability that `better` is truly better than `worse`.
    async fn probability(&self) -> f64 {
        self.probability
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
    /// ok, constant, single_review, discordant, no_reviews or not_comparable.
    async fn flag(&self) -> &str {
        &self.out.flag
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
    /// When this ranking was computed; it is computed afresh from current data.
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

/// One publication of results: a version, provisional or final, pointing at a run.
#[derive(Clone)]
pub struct ResultPublication {
    pub row: result_publication::Model,
    /// Shared with every request that reads the run (see `ParsedRuns::row`).
    pub run: Arc<calibration_run::Model>,
}

/// One publication of results: a version, provisional or final, pointing at a run.
#[Object(
    guard = "FieldGuard::new(\"ResultPublication\", Scope { event: Some(self.row.event_id), public: true, ..Scope::none() })"
)]
impl ResultPublication {
    /// Opaque id.
    async fn id(&self) -> ID {
        ID(self.row.public_id.clone())
    }
    /// The publication's number in its event: 1 for the first, then counting up.
    async fn version(&self) -> i32 {
        self.row.version
    }
    /// Whether this publication is final; after a final one, nothing more is published.
    #[graphql(name = "final")]
    async fn is_final(&self) -> bool {
        self.row.is_final
    }
    /// When it was published.
    async fn published_at(&self) -> DateTime<Utc> {
        self.row.published_at
    }
    /// The id of the calibration run it publishes.
    async fn run_id(&self) -> ID {
        ID(self.run.public_id.clone())
    }
    /// Ed25519 signature (hex) over the `verdict.publication.v1` pre-image.
    async fn signature(&self) -> &str {
        &self.row.signature
    }
    /// The frozen public projection.
    async fn results(&self) -> PublishedResults {
        PublishedResults {
            row: self.row.clone(),
            run: self.run.clone(),
        }
    }
}

impl ResultPublication {
    pub fn results_of(self) -> PublishedResults {
        PublishedResults {
            row: self.row,
            run: self.run,
        }
    }
}

/// The frozen public projection of one run: no judge identity, no individual score.
pub struct PublishedResults {
    pub row: result_publication::Model,
    pub run: Arc<calibration_run::Model>,
}

/// The frozen public projection of one run: no judge identity, no individual score.
#[Object(
    guard = "FieldGuard::new(\"PublishedResults\", Scope { event: Some(self.row.event_id), public: true, ..Scope::none() })"
)]
impl PublishedResults {
    /// The publication's number in its event: 1 for the first, then counting up.
    async fn version(&self) -> i32 {
        self.row.version
    }
    /// Whether this publication is final; after a final one, nothing more is published.
    #[graphql(name = "final")]
    async fn is_final(&self) -> bool {
        self.row.is_final
    }
    /// When it was published.
    async fn published_at(&self) -> DateTime<Utc> {
        self.row.published_at
    }
    /// The exact timestamp string that was signed.
    async fn published_at_signed(&self) -> String {
        published_at_text(self.row.published_at)
    }
    /// The id of the calibration run it publishes.
    async fn run_id(&self) -> ID {
        ID(self.run.public_id.clone())
    }
    /// SHA-256 of the run's pinned canonical inputs.
    async fn inputs_hash(&self) -> &str {
        &self.run.inputs_hash
    }
    /// SHA-256 of the run's canonical result.
    async fn result_hash(&self) -> &str {
        &self.run.result_hash
    }
    /// The run's signature.
    async fn signature(&self) -> &str {
        &self.run.signature
    }
    /// The publication's own signature.
    async fn publication_signature(&self) -> &str {
        &self.row.signature
    }
    /// SHA-256 (hex) of the public key that signed the run; compare with
    /// `signingKey.fingerprint`.
    async fn key_fingerprint(&self) -> &str {
        &self.run.key_fingerprint
    }
    /// Whether the run's judge–project graph was one component; if not, only the largest
    /// component is ranked.
    async fn connected(&self) -> bool {
        self.run.connected
    }
    /// By rank; excluded projects last. Exactly the entries of the signed run's result,
    /// ranks and all, whatever happened to the projects since, except projects that were
    /// not submitted when the run was computed (drafts, withdrawn), which are not part of
    /// the public projection. A project withdrawn after the run keeps its signed place,
    /// named by `projectExternalId`; its `project` is null for those who no longer see it.
    #[graphql(complexity = "crate::graphql::cost::event_list(child_complexity)")]
    async fn ranking(&self, ctx: &Context<'_>) -> async_graphql::Result<Vec<CalibratedProject>> {
        self.public_ranking(ctx)
    }
    /// The same ranking as `ranking`, a page at a time with its total: what a results
    /// page of a large event asks for.
    #[graphql(complexity = "crate::graphql::cost::page(first, child_complexity)")]
    async fn ranking_page(
        &self,
        ctx: &Context<'_>,
        #[graphql(desc = "Page size: 20 if omitted, at most the page limit (100 by default).")]
        first: Option<i32>,
        #[graphql(desc = "Start after this cursor (an edge's `cursor`); omit for the first page.")]
        after: Option<String>,
    ) -> async_graphql::Result<Page<CalibratedProject>> {
        let all = self.public_ranking(ctx)?;
        page_of_list(ctx, all, first, after)
    }
    /// How certain the top places are, as signed in the run: the probability that each of
    /// the first ten holds its place and that one beats another. Null for runs of engines
    /// before `verdict-calibrate/3`.
    #[graphql(complexity = "crate::graphql::cost::load(child_complexity)")]
    async fn certainty(
        &self,
        ctx: &Context<'_>,
    ) -> async_graphql::Result<Option<RankingCertainty>> {
        let r = ctx.services().parsed_runs.get(&self.run).gql(ctx)?;
        Ok(RankingCertainty::of(self.row.event_id, &r))
    }
}

impl PublishedResults {
    /// The run's entries in rank order, without projects that were not submitted when the
    /// run was computed.
    fn public_ranking(&self, ctx: &Context<'_>) -> async_graphql::Result<Vec<CalibratedProject>> {
        let r = ctx.services().parsed_runs.get(&self.run).gql(ctx)?;
        let mut all = ranked(self.row.event_id, &r);
        all.retain(|p| p.out().excluded.as_deref() != Some("not_submitted"));
        Ok(all)
    }
}

/// The deployment's public signing key.
pub struct SigningKey {
    pub pem: String,
    pub fingerprint: String,
}

/// The deployment's public signing key.
#[Object(guard = "FieldGuard::new(\"SigningKey\", Scope { public: true, ..Scope::none() })")]
impl SigningKey {
    /// Always `Ed25519`.
    async fn algorithm(&self) -> &str {
        "Ed25519"
    }
    /// The public key, SPKI PEM.
    async fn public_key_pem(&self) -> &str {
        &self.pem
    }
    /// SHA-256 (hex) of the raw 32-byte public key.
    async fn fingerprint(&self) -> &str {
        &self.fingerprint
    }
}

impl Leaderboard {
    /// The event's live leaderboard, computed now.
    pub async fn load<C: sea_orm::ConnectionTrait>(
        db: &C,
        e: &entity::event::Model,
    ) -> crate::error::AppResult<Self> {
        let result = crate::domain::results::preview(db, e).await?;
        Ok(Leaderboard {
            event_id: e.id,
            computed_at: Utc::now(),
            result: Arc::new(result),
        })
    }
}

/// The event's latest publication with the run it publishes; None until it publishes.
pub async fn latest_publication(
    ctx: &Context<'_>,
    event_id: i64,
) -> async_graphql::Result<Option<ResultPublication>> {
    // Through the request's loaders: loaded once per request however many fields ask.
    let Some(row) = maybe(ctx, ctx.loaders().latest_publication(), EventId(event_id)).await? else {
        return Ok(None);
    };
    let run = ctx
        .services()
        .parsed_runs
        .row(&ctx.db().conn, row.run_id)
        .await
        .gql(ctx)?;
    Ok(run.map(|run| ResultPublication { row, run }))
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
