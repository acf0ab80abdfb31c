//! Output types of judging and results.

use std::collections::HashMap;

use async_graphql::{Context, Enum, ID, Json, Object, SimpleObject};
use chrono::{DateTime, Utc};
use entity::{
    assignment, calibration_run, criterion, membership, project, recusal, result_publication,
    review,
};
use sea_orm::{ColumnTrait, EntityTrait, QueryFilter};

use super::context::{CtxExt, ResultExt};
use super::loaders::one;
use super::objects::{LoadersExt, Membership, Project, Team};
use super::policy::{FieldGuard, Scope};
use crate::calibrate::{CalibrationResult, JudgeOut, ProjectOut};
use crate::domain::results::{judge_key, published_at_text};
use crate::error::AppError;

/// One criterion of the event's rubric.
pub struct Criterion(pub criterion::Model);

#[Object(guard = "FieldGuard::new(\"Criterion\", Scope::event(self.0.event_id))")]
impl Criterion {
    async fn id(&self) -> ID {
        ID(self.0.public_id.clone())
    }
    /// The key scores refer to.
    async fn key(&self) -> &str {
        &self.0.key
    }
    async fn name(&self) -> &str {
        &self.0.name
    }
    /// Relative weight in the total (positive).
    async fn weight(&self) -> f64 {
        self.0.weight
    }
    /// Lowest allowed score.
    async fn min(&self) -> i32 {
        self.0.min_score
    }
    /// Highest allowed score.
    async fn max(&self) -> i32 {
        self.0.max_score
    }
    async fn position(&self) -> i32 {
        self.0.position
    }
}

/// A judge's assignment to review one project.
pub struct Assignment {
    pub row: assignment::Model,
    /// The user behind the judge membership.
    pub judge_user: i64,
}

#[Object(
    guard = "FieldGuard::new(\"Assignment\", Scope { event: Some(self.row.event_id), user: Some(self.judge_user), ..Scope::none() })"
)]
impl Assignment {
    async fn id(&self) -> ID {
        ID(self.row.public_id.clone())
    }
    async fn project(&self, ctx: &Context<'_>) -> async_graphql::Result<Project> {
        one(ctx, &ctx.loaders().projects, self.row.project_id, "project")
            .await
            .map(Project)
    }
    async fn judge(&self, ctx: &Context<'_>) -> async_graphql::Result<Membership> {
        one(ctx, &ctx.loaders().memberships, self.row.judge_id, "judge")
            .await
            .map(Membership)
    }
    /// `pending`, `done` or `recused`.
    async fn status(&self) -> &str {
        &self.row.status
    }
    /// `import`, `auto` or `manual`.
    async fn source(&self) -> &str {
        &self.row.source
    }
    /// The review, once the judge has started it.
    async fn review(&self, ctx: &Context<'_>) -> async_graphql::Result<Option<Review>> {
        let r = ctx
            .loaders()
            .reviews_by_assignment
            .load_one(self.row.id)
            .await
            .map_err(|e| ctx.err(AppError::Internal(e.to_string())))?;
        Ok(r.map(|row| Review {
            row,
            judge_user: self.judge_user,
        }))
    }
}

/// One score of a review.
#[derive(SimpleObject)]
#[graphql(guard = "FieldGuard::new(\"Score\", Scope::none())")]
pub struct Score {
    /// The criterion's key.
    pub criterion: String,
    pub value: i32,
}

/// A judge's private review of one project: only the judge and the organizers read it.
pub struct Review {
    pub row: review::Model,
    pub judge_user: i64,
}

#[Object(
    guard = "FieldGuard::new(\"Review\", Scope { event: Some(self.row.event_id), user: Some(self.judge_user), ..Scope::none() })"
)]
impl Review {
    async fn id(&self) -> ID {
        ID(self.row.public_id.clone())
    }
    async fn judge(&self, ctx: &Context<'_>) -> async_graphql::Result<Membership> {
        one(ctx, &ctx.loaders().memberships, self.row.judge_id, "judge")
            .await
            .map(Membership)
    }
    async fn project(&self, ctx: &Context<'_>) -> async_graphql::Result<Project> {
        one(ctx, &ctx.loaders().projects, self.row.project_id, "project")
            .await
            .map(Project)
    }
    async fn submitted(&self) -> bool {
        self.row.submitted
    }
    async fn submitted_at(&self) -> Option<DateTime<Utc>> {
        self.row.submitted_at
    }
    async fn comment(&self) -> Option<&str> {
        Some(self.row.comment.as_str()).filter(|c| !c.is_empty())
    }
    /// How many times it was saved; every version is kept.
    async fn version(&self) -> i32 {
        self.row.version
    }
    async fn scores(&self) -> Vec<Score> {
        let m: std::collections::BTreeMap<String, i64> =
            serde_json::from_str(&self.row.scores).unwrap_or_default();
        m.into_iter()
            .map(|(criterion, v)| Score {
                criterion,
                value: v as i32,
            })
            .collect()
    }
}

/// A declared conflict between a judge and a team.
pub struct Recusal(pub recusal::Model);

#[Object(guard = "FieldGuard::new(\"Recusal\", Scope::event(self.0.event_id))")]
impl Recusal {
    async fn id(&self) -> ID {
        ID(self.0.public_id.clone())
    }
    async fn judge(&self, ctx: &Context<'_>) -> async_graphql::Result<Membership> {
        one(ctx, &ctx.loaders().memberships, self.0.judge_id, "judge")
            .await
            .map(Membership)
    }
    async fn team(&self, ctx: &Context<'_>) -> async_graphql::Result<Team> {
        let t = ctx
            .loaders()
            .teams
            .load_one(self.0.team_id)
            .await
            .map_err(|e| ctx.err(AppError::Internal(e.to_string())))?;
        t.map(Team)
            .ok_or_else(|| ctx.err(AppError::NotFound("team")))
    }
    async fn reason(&self) -> &str {
        &self.0.reason
    }
}

/// Projects and judges of one event by their calibration ids, loaded once per result.
struct Lookup {
    projects: HashMap<String, project::Model>,
    judges: HashMap<String, membership::Model>,
}

async fn lookup(ctx: &Context<'_>, event_id: i64) -> async_graphql::Result<Lookup> {
    let db = &ctx.db().conn;
    let projects = project::Entity::find()
        .filter(project::Column::EventId.eq(event_id))
        .all(db)
        .await
        .gql(ctx)?;
    let judges = membership::Entity::find()
        .filter(membership::Column::EventId.eq(event_id))
        .filter(membership::Column::Role.eq("judge"))
        .all(db)
        .await
        .gql(ctx)?;
    Ok(Lookup {
        projects: projects
            .into_iter()
            .map(|p| (p.external_id.clone(), p))
            .collect(),
        judges: judges.into_iter().map(|j| (judge_key(&j), j)).collect(),
    })
}

async fn ranked(
    ctx: &Context<'_>,
    event_id: i64,
    r: &CalibrationResult,
) -> async_graphql::Result<Vec<CalibratedProject>> {
    let l = lookup(ctx, event_id).await?;
    Ok(r.projects
        .iter()
        .filter_map(|p| {
            l.projects.get(&p.id).map(|m| CalibratedProject {
                out: p.clone(),
                project: m.clone(),
            })
        })
        .collect())
}

async fn judged(
    ctx: &Context<'_>,
    event_id: i64,
    r: &CalibrationResult,
) -> async_graphql::Result<Vec<JudgeCalibration>> {
    let l = lookup(ctx, event_id).await?;
    Ok(r.judges
        .iter()
        .filter_map(|j| {
            l.judges.get(&j.id).map(|m| JudgeCalibration {
                out: j.clone(),
                judge: m.clone(),
            })
        })
        .collect())
}

/// One project's place in a calibrated ranking. Holds no judge data, so it is what the
/// public sees once results are published.
pub struct CalibratedProject {
    pub out: ProjectOut,
    pub project: project::Model,
}

#[Object(guard = "FieldGuard::new(\"CalibratedProject\", Scope::event(self.project.event_id))")]
impl CalibratedProject {
    async fn project(&self) -> Project {
        Project(self.project.clone())
    }
    /// Submitted reviews counted.
    async fn reviews(&self) -> i32 {
        self.out.reviews as i32
    }
    /// Mean of the weighted rubric totals (0..1), before calibration.
    async fn raw_mean(&self) -> Option<f64> {
        self.out.raw_mean
    }
    async fn raw_rank(&self) -> Option<i32> {
        self.out.raw_rank.map(|r| r as i32)
    }
    /// Calibrated quality: judge severity removed.
    async fn quality(&self) -> Option<f64> {
        self.out.quality
    }
    async fn std_error(&self) -> Option<f64> {
        self.out.std_error
    }
    async fn rank(&self) -> Option<i32> {
        self.out.rank.map(|r| r as i32)
    }
    /// Lower end of the 90% rank interval.
    async fn rank_low(&self) -> Option<i32> {
        self.out.rank_low.map(|r| r as i32)
    }
    /// Upper end of the 90% rank interval.
    async fn rank_high(&self) -> Option<i32> {
        self.out.rank_high.map(|r| r as i32)
    }
    /// Why it is not ranked (duplicate, not_submitted, no_usable_reviews, not_comparable).
    async fn excluded(&self) -> Option<&str> {
        self.out.excluded.as_deref()
    }
}

/// How one judge scores relative to the panel (organizers only).
pub struct JudgeCalibration {
    pub out: JudgeOut,
    pub judge: membership::Model,
}

#[Object(guard = "FieldGuard::new(\"JudgeCalibration\", Scope::event(self.judge.event_id))")]
impl JudgeCalibration {
    async fn judge(&self) -> Membership {
        Membership(self.judge.clone())
    }
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
    fn result(&self, ctx: &Context<'_>) -> async_graphql::Result<CalibrationResult> {
        crate::domain::results::parse_result(&self.0).gql(ctx)
    }
}

#[Object(guard = "FieldGuard::new(\"CalibrationRun\", Scope::event(self.0.event_id))")]
impl CalibrationRun {
    async fn id(&self) -> ID {
        ID(self.0.public_id.clone())
    }
    async fn created_at(&self) -> DateTime<Utc> {
        self.0.created_at
    }
    async fn seed(&self) -> i64 {
        self.0.seed
    }
    async fn bootstrap(&self) -> i32 {
        self.0.bootstrap
    }
    /// The ridge penalty chosen by cross-validation.
    async fn lambda(&self) -> f64 {
        self.0.lambda
    }
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
    async fn key_fingerprint(&self) -> &str {
        &self.0.key_fingerprint
    }
    /// Whether the judge–project graph is one component; if not, only the largest
    /// component is ranked.
    async fn connected(&self) -> bool {
        self.0.connected
    }
    /// By rank; excluded projects last with rank null.
    async fn projects(&self, ctx: &Context<'_>) -> async_graphql::Result<Vec<CalibratedProject>> {
        ranked(ctx, self.0.event_id, &self.result(ctx)?).await
    }
    async fn judges(&self, ctx: &Context<'_>) -> async_graphql::Result<Vec<JudgeCalibration>> {
        judged(ctx, self.0.event_id, &self.result(ctx)?).await
    }
    /// Outlying reviews and judge pairs with identical scores (not inputs to the model).
    async fn diagnostics(
        &self,
        ctx: &Context<'_>,
    ) -> async_graphql::Result<Json<serde_json::Value>> {
        Ok(Json(
            serde_json::to_value(self.result(ctx)?.diagnostics).unwrap_or_default(),
        ))
    }
}

/// The live, unsigned preview on current data (organizers only).
pub struct Leaderboard {
    pub event_id: i64,
    pub computed_at: DateTime<Utc>,
    pub result: CalibrationResult,
}

#[Object(guard = "FieldGuard::new(\"Leaderboard\", Scope::event(self.event_id))")]
impl Leaderboard {
    async fn computed_at(&self) -> DateTime<Utc> {
        self.computed_at
    }
    async fn connected(&self) -> bool {
        self.result.connected
    }
    async fn components(&self) -> i32 {
        self.result.components as i32
    }
    async fn lambda(&self) -> Option<f64> {
        self.result.lambda
    }
    async fn projects(&self, ctx: &Context<'_>) -> async_graphql::Result<Vec<CalibratedProject>> {
        ranked(ctx, self.event_id, &self.result).await
    }
    async fn judges(&self, ctx: &Context<'_>) -> async_graphql::Result<Vec<JudgeCalibration>> {
        judged(ctx, self.event_id, &self.result).await
    }
    async fn diagnostics(&self) -> Json<serde_json::Value> {
        Json(serde_json::to_value(&self.result.diagnostics).unwrap_or_default())
    }
}

/// One publication of results: a version, provisional or final, pointing at a run.
pub struct ResultPublication {
    pub row: result_publication::Model,
    pub run: calibration_run::Model,
}

#[Object(
    guard = "FieldGuard::new(\"ResultPublication\", Scope { event: Some(self.row.event_id), public: true, ..Scope::none() })"
)]
impl ResultPublication {
    async fn id(&self) -> ID {
        ID(self.row.public_id.clone())
    }
    async fn version(&self) -> i32 {
        self.row.version
    }
    #[graphql(name = "final")]
    async fn is_final(&self) -> bool {
        self.row.is_final
    }
    async fn published_at(&self) -> DateTime<Utc> {
        self.row.published_at
    }
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
    pub run: calibration_run::Model,
}

#[Object(
    guard = "FieldGuard::new(\"PublishedResults\", Scope { event: Some(self.row.event_id), public: true, ..Scope::none() })"
)]
impl PublishedResults {
    async fn version(&self) -> i32 {
        self.row.version
    }
    #[graphql(name = "final")]
    async fn is_final(&self) -> bool {
        self.row.is_final
    }
    async fn published_at(&self) -> DateTime<Utc> {
        self.row.published_at
    }
    /// The exact timestamp string that was signed.
    async fn published_at_signed(&self) -> String {
        published_at_text(self.row.published_at)
    }
    async fn run_id(&self) -> ID {
        ID(self.run.public_id.clone())
    }
    async fn inputs_hash(&self) -> &str {
        &self.run.inputs_hash
    }
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
    async fn key_fingerprint(&self) -> &str {
        &self.run.key_fingerprint
    }
    async fn connected(&self) -> bool {
        self.run.connected
    }
    /// By rank; excluded projects last. Projects that were never submitted (drafts,
    /// withdrawn) are not part of the public projection.
    async fn ranking(&self, ctx: &Context<'_>) -> async_graphql::Result<Vec<CalibratedProject>> {
        let r = crate::domain::results::parse_result(&self.run).gql(ctx)?;
        let access = ctx.rc().access(ctx.db()).await.gql(ctx)?;
        Ok(ranked(ctx, self.row.event_id, &r)
            .await?
            .into_iter()
            .filter(|p| {
                p.out.excluded.as_deref() != Some("not_submitted")
                    && access.can_see_project(&p.project)
            })
            .collect())
    }
}

/// The deployment's public signing key.
pub struct SigningKey {
    pub pem: String,
    pub fingerprint: String,
}

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

/// Progress of judging in an event (organizers only).
#[derive(SimpleObject, Clone)]
#[graphql(guard = "FieldGuard::new(\"JudgingProgress\", Scope::event(self.event_id))")]
pub struct JudgingProgress {
    #[graphql(skip)]
    pub event_id: i64,
    pub assignments: i32,
    pub done: i32,
    pub pending: i32,
    pub recused: i32,
    /// Submitted projects with fewer submitted reviews than the event's target.
    pub projects_below_target: i32,
}

impl JudgingProgress {
    /// The event's current judging progress.
    pub async fn load<C: sea_orm::ConnectionTrait>(
        db: &C,
        e: &entity::event::Model,
    ) -> crate::error::AppResult<Self> {
        let p = crate::domain::judging::progress(db, e).await?;
        Ok(JudgingProgress {
            event_id: e.id,
            assignments: p.assignments,
            done: p.done,
            pending: p.pending,
            recused: p.recused,
            projects_below_target: p.projects_below_target,
        })
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
            result,
        })
    }
}

/// What files an export can produce.
#[derive(Enum, Copy, Clone, Debug, PartialEq, Eq)]
pub enum ExportKind {
    Registrations,
    Teams,
    Projects,
    Assignments,
    Scores,
    Results,
    Judges,
    Audit,
}

/// A new (judge, project) pair of a plan.
#[derive(SimpleObject)]
#[graphql(guard = "FieldGuard::new(\"PlannedAssignment\", Scope::none())")]
pub struct PlannedAssignment {
    /// The judge's external id (or membership id).
    pub judge: String,
    /// The project's external id.
    pub project: String,
}

/// How close one project comes to its target number of reviews.
#[derive(SimpleObject)]
#[graphql(guard = "FieldGuard::new(\"PlanCoverage\", Scope::none())")]
pub struct PlanCoverage {
    pub project: String,
    /// Existing plus planned assignments.
    pub assigned: i32,
    pub target: i32,
    pub shortfall: i32,
    /// Why the target cannot be reached, when it cannot.
    pub reason: Option<String>,
}

/// A judge's total assignments once the plan is applied.
#[derive(SimpleObject)]
#[graphql(guard = "FieldGuard::new(\"JudgeLoad\", Scope::none())")]
pub struct JudgeLoad {
    pub judge: String,
    pub load: i32,
}

/// What `autoAssign` plans (and, with `apply`, wrote).
pub struct AssignmentPlan {
    pub event_id: i64,
    pub plan: crate::planner::Plan,
    pub applied: i32,
}

#[Object(guard = "FieldGuard::new(\"AssignmentPlan\", Scope::event(self.event_id))")]
impl AssignmentPlan {
    /// The new assignments (existing ones are kept).
    async fn edges(&self) -> Vec<PlannedAssignment> {
        self.plan
            .edges
            .iter()
            .map(|(j, p)| PlannedAssignment {
                judge: j.clone(),
                project: p.clone(),
            })
            .collect()
    }
    async fn coverage(&self) -> Vec<PlanCoverage> {
        self.plan
            .coverage
            .iter()
            .map(|c| PlanCoverage {
                project: c.project.clone(),
                assigned: c.assigned as i32,
                target: c.target as i32,
                shortfall: c.shortfall as i32,
                reason: c.reason.clone(),
            })
            .collect()
    }
    async fn loads(&self) -> Vec<JudgeLoad> {
        self.plan
            .loads
            .iter()
            .map(|(j, l)| JudgeLoad {
                judge: j.clone(),
                load: *l as i32,
            })
            .collect()
    }
    /// Connected components of the judge–project graph after the plan.
    async fn components(&self) -> i32 {
        self.plan.components as i32
    }
    async fn connected(&self) -> bool {
        self.plan.connected
    }
    /// Assignments written (0 unless `apply: true`).
    async fn applied(&self) -> i32 {
        self.applied
    }
    /// Projects still short of the target after the plan.
    async fn total_shortfall(&self) -> i32 {
        self.plan.total_shortfall() as i32
    }
}
