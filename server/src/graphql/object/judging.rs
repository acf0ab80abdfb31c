//! Judging: the rubric's criteria, judges' assignments, their private reviews and scores,
//! recusals, progress, and the plans `autoAssign` proposes.

use std::collections::HashMap;

use async_graphql::{Context, Enum, ID, Object, SimpleObject};
use chrono::{DateTime, Utc};
use entity::assignment::AssignmentStatus;
use entity::{assignment, criterion, membership, recusal, review};
use sea_orm::{ColumnTrait, EntityTrait, QueryFilter, QueryOrder};

use crate::domain::judging::Standing;

use super::event::Team;
use super::project::Project;
use super::user::Membership;
use crate::graphql::connection::{Page, page};
use crate::graphql::context::{CtxExt, ResultExt};
use crate::graphql::cost;
use crate::graphql::loaders::{
    AssignmentId, LoadersExt, MembershipId, ProjectId, TeamId, maybe, one,
};
use crate::graphql::policy::{FieldGuard, Rule, Scope};

/// Who may read each field of the types in this file, collected by [`crate::graphql::policy`].
pub(crate) const POLICIES: &[(&str, Rule)] = &[
    ("Criterion.id", Rule::Public),
    ("Criterion.key", Rule::Public),
    ("Criterion.name", Rule::Public),
    ("Criterion.weight", Rule::Public),
    ("Criterion.min", Rule::Public),
    ("Criterion.max", Rule::Public),
    ("Criterion.position", Rule::Public),
    ("Criterion.description", Rule::Public),
    ("Assignment.id", Rule::OwnJudge),
    ("Assignment.project", Rule::OwnJudge),
    ("Assignment.judge", Rule::OwnJudge),
    ("Assignment.status", Rule::OwnJudge),
    ("Assignment.source", Rule::OwnJudge),
    ("Assignment.review", Rule::OwnJudge),
    ("Review.id", Rule::OwnJudge),
    ("Review.judge", Rule::OwnJudge),
    ("Review.project", Rule::OwnJudge),
    ("Review.submitted", Rule::OwnJudge),
    ("Review.submittedAt", Rule::OwnJudge),
    ("Review.comment", Rule::OwnJudge),
    ("Review.version", Rule::OwnJudge),
    ("Review.scores", Rule::OwnJudge),
    // A score is only reachable through `Review.scores`, which is the judge's own.
    ("Score.criterion", Rule::SignedIn),
    ("Score.value", Rule::SignedIn),
    ("Recusal.id", Rule::Organizer),
    ("Recusal.judge", Rule::Organizer),
    ("Recusal.team", Rule::Organizer),
    ("Recusal.reason", Rule::Organizer),
    ("AssignmentProgress.done", Rule::SignedIn),
    ("AssignmentProgress.total", Rule::SignedIn),
    ("JudgingProgress.assignments", Rule::Organizer),
    ("JudgingProgress.done", Rule::Organizer),
    ("JudgingProgress.pending", Rule::Organizer),
    ("JudgingProgress.recused", Rule::Organizer),
    ("JudgingProgress.withdrawn", Rule::Organizer),
    ("JudgingProgress.projectsBelowTarget", Rule::Organizer),
    ("AssignmentPlan.edges", Rule::Organizer),
    ("AssignmentPlan.coverage", Rule::Organizer),
    ("AssignmentPlan.loads", Rule::Organizer),
    ("AssignmentPlan.components", Rule::Organizer),
    ("AssignmentPlan.connected", Rule::Organizer),
    ("AssignmentPlan.applied", Rule::Organizer),
    ("AssignmentPlan.totalShortfall", Rule::Organizer),
    // Parts of an AssignmentPlan, reachable only through it.
    ("PlannedAssignment.judge", Rule::SignedIn),
    ("PlannedAssignment.project", Rule::SignedIn),
    ("PlanCoverage.project", Rule::SignedIn),
    ("PlanCoverage.assigned", Rule::SignedIn),
    ("PlanCoverage.target", Rule::SignedIn),
    ("PlanCoverage.shortfall", Rule::SignedIn),
    ("PlanCoverage.reason", Rule::SignedIn),
    ("JudgeLoad.judge", Rule::SignedIn),
    ("JudgeLoad.load", Rule::SignedIn),
    ("Event.rubric", Rule::Public),
    // The caller's own judging work (empty for non-judges).
    ("Event.myAssignments", Rule::SignedIn),
    ("Event.myProgress", Rule::SignedIn),
    ("Event.nextAssignment", Rule::SignedIn),
    ("Event.assignments", Rule::Organizer),
    ("Event.recusals", Rule::Organizer),
    ("Event.judgingProgress", Rule::Organizer),
];

/// Where an assignment stands. The values are lower-case on the wire (`pending`, not
/// `PENDING`): they were strings before they were an enum, and scripts compare them as
/// such, so each value keeps the exact string it had.
#[derive(Enum, Copy, Clone, Debug, PartialEq, Eq)]
#[graphql(name = "AssignmentStatus", remote = "Standing")]
pub enum AssignmentStatusValue {
    /// Waiting for the judge's submitted review (a saved draft still counts as pending).
    #[graphql(name = "pending")]
    Pending,
    /// The judge submitted the review.
    #[graphql(name = "done")]
    Done,
    /// Set aside by a recusal: the review does not count.
    #[graphql(name = "recused")]
    Recused,
    /// Its project's team withdrew the project: not reviewable and in no queue until the
    /// project is submitted again.
    #[graphql(name = "withdrawn")]
    Withdrawn,
}

/// Who made an assignment. The values are lower-case on the wire (`auto`, not `AUTO`):
/// they were strings before they were an enum, and scripts compare them as such, so each
/// value keeps the exact string it had.
#[derive(Enum, Copy, Clone, Debug, PartialEq, Eq)]
#[graphql(name = "AssignmentSource", remote = "assignment::AssignmentSource")]
pub enum AssignmentSourceValue {
    /// A review that arrived with an imported fixture.
    #[graphql(name = "import")]
    Import,
    /// The assignment planner (`autoAssign`).
    #[graphql(name = "auto")]
    Auto,
    /// An organizer, one judge to one project.
    #[graphql(name = "manual")]
    Manual,
}

/// Judging: the rubric, assignments, recusals and progress: a part of [`Event`](super::event::Event), merged into the one GraphQL type.
pub struct EventJudging(pub(super) super::event::EventRow);

/// Judging: the rubric, assignments, recusals and progress: a part of [`Event`](super::event::Event).
#[Object(guard = "FieldGuard::new(\"Event\", Scope::event(self.0.id))")]
impl EventJudging {
    /// The rubric, in order.
    #[graphql(complexity = "cost::short_list(child_complexity)")]
    async fn rubric(&self, ctx: &Context<'_>) -> async_graphql::Result<Vec<Criterion>> {
        let rows = crate::domain::judges::rubric(&ctx.db().conn, self.0.id)
            .await
            .gql(ctx)?;
        Ok(rows.into_iter().map(Criterion).collect())
    }
    /// The caller's own assignments as a judge here, in the order they walk the expo floor
    /// (by table in natural order from a starting table of their own, then those without a
    /// table in the caller's own order): those of
    /// submitted projects (an assignment whose project its team withdrew leaves the queue
    /// until the project is submitted again).
    #[graphql(complexity = "cost::short_list(child_complexity)")]
    async fn my_assignments(&self, ctx: &Context<'_>) -> async_graphql::Result<Vec<Assignment>> {
        let actor = ctx.actor()?;
        let rows = crate::domain::judging::my_assignments(&ctx.db().conn, actor.user.id, self.0.id)
            .await
            .gql(ctx)?;
        Ok(rows
            .into_iter()
            .map(|row| Assignment {
                row,
                judge_user: actor.user.id,
            })
            .collect())
    }
    /// The caller's progress as a judge here.
    #[graphql(complexity = "cost::load(child_complexity)")]
    async fn my_progress(&self, ctx: &Context<'_>) -> async_graphql::Result<AssignmentProgress> {
        let actor = ctx.actor()?;
        let rows = crate::domain::judging::my_assignments(&ctx.db().conn, actor.user.id, self.0.id)
            .await
            .gql(ctx)?;
        let active: Vec<_> = rows
            .iter()
            .filter(|a| a.status != AssignmentStatus::Recused)
            .collect();
        Ok(AssignmentProgress {
            done: active
                .iter()
                .filter(|a| a.status == AssignmentStatus::Done)
                .count() as i32,
            total: active.len() as i32,
        })
    }
    /// The next pending project in the caller's queue. Each judge has their own order, so
    /// judges do not all start at the same table.
    #[graphql(complexity = "cost::load(child_complexity)")]
    async fn next_assignment(
        &self,
        ctx: &Context<'_>,
    ) -> async_graphql::Result<Option<Assignment>> {
        let actor = ctx.actor()?;
        let rows = crate::domain::judging::my_assignments(&ctx.db().conn, actor.user.id, self.0.id)
            .await
            .gql(ctx)?;
        Ok(rows
            .into_iter()
            .find(|a| a.status == AssignmentStatus::Pending)
            .map(|row| Assignment {
                row,
                judge_user: actor.user.id,
            }))
    }
    /// Every assignment (organizers only).
    #[graphql(complexity = "cost::page(first, child_complexity)")]
    async fn assignments(
        &self,
        ctx: &Context<'_>,
        #[graphql(desc = "Page size: 20 if omitted, at most the page limit (100 by default).")]
        first: Option<i32>,
        #[graphql(desc = "Start after this cursor (an edge's `cursor`); omit for the first page.")]
        after: Option<String>,
    ) -> async_graphql::Result<Page<Assignment>> {
        let judges = judge_users(ctx, self.0.id).await?;
        let q = assignment::Entity::find().filter(assignment::Column::EventId.eq(self.0.id));
        page(
            ctx,
            q,
            assignment::Column::Id,
            |a| a.id,
            first,
            after,
            |row| Assignment {
                judge_user: judges.get(&row.judge_id).copied().unwrap_or_default(),
                row,
            },
        )
        .await
    }
    /// Declared judge–team conflicts (organizers only).
    #[graphql(complexity = "cost::event_list(child_complexity)")]
    async fn recusals(&self, ctx: &Context<'_>) -> async_graphql::Result<Vec<Recusal>> {
        let rows = recusal::Entity::find()
            .filter(recusal::Column::EventId.eq(self.0.id))
            .order_by_asc(recusal::Column::Id)
            .all(&ctx.db().conn)
            .await
            .gql(ctx)?;
        Ok(rows.into_iter().map(Recusal).collect())
    }
    /// Judging progress (organizers only).
    #[graphql(complexity = "cost::load(child_complexity)")]
    async fn judging_progress(&self, ctx: &Context<'_>) -> async_graphql::Result<JudgingProgress> {
        JudgingProgress::load(ctx.services(), &self.0)
            .await
            .gql(ctx)
    }
}

/// One criterion of the event's rubric.
pub struct Criterion(pub criterion::Model);

/// One criterion of the event's rubric.
#[Object(guard = "FieldGuard::new(\"Criterion\", Scope::event(self.0.event_id))")]
impl Criterion {
    /// Opaque id.
    async fn id(&self) -> ID {
        ID(self.0.public_id.clone())
    }
    /// The key scores refer to.
    async fn key(&self) -> &str {
        &self.0.key
    }
    /// The criterion's display name.
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
    /// Its place in the rubric, which lists criteria by position, then by key.
    async fn position(&self) -> i32 {
        self.0.position
    }
    /// What judges should look for (may be empty). Plain text, never HTML.
    async fn description(&self) -> &str {
        &self.0.description
    }
}

/// A judge's assignment to review one project.
pub struct Assignment {
    pub row: assignment::Model,
    /// The user behind the judge membership.
    pub judge_user: i64,
}

/// A judge's assignment to review one project. Only that judge and the organizers read it.
#[Object(
    guard = "FieldGuard::new(\"Assignment\", Scope { event: Some(self.row.event_id), user: Some(self.judge_user), ..Scope::none() })"
)]
impl Assignment {
    /// Opaque id.
    async fn id(&self) -> ID {
        ID(self.row.public_id.clone())
    }
    /// The project to review.
    async fn project(&self, ctx: &Context<'_>) -> async_graphql::Result<Project> {
        one(
            ctx,
            ctx.loaders().projects(),
            ProjectId(self.row.project_id),
            "project",
        )
        .await
        .map(Project)
    }
    /// The judge's membership in the event.
    async fn judge(&self, ctx: &Context<'_>) -> async_graphql::Result<Membership> {
        one(
            ctx,
            ctx.loaders().memberships(),
            MembershipId(self.row.judge_id),
            "judge",
        )
        .await
        .map(Membership)
    }
    /// `pending`, `done`, `recused`, or `withdrawn`: its project's team withdrew it, so it
    /// cannot be reviewed and has left the judge's queue; it returns to `pending` or `done`
    /// when the project is submitted again.
    async fn status(&self, ctx: &Context<'_>) -> async_graphql::Result<AssignmentStatusValue> {
        let p = one(
            ctx,
            ctx.loaders().projects(),
            ProjectId(self.row.project_id),
            "project",
        )
        .await?;
        Ok(Standing::of(&self.row, p.is_public()).into())
    }
    /// `import`, `auto` or `manual`.
    async fn source(&self) -> AssignmentSourceValue {
        self.row.source.into()
    }
    /// The review, once the judge has started it.
    async fn review(&self, ctx: &Context<'_>) -> async_graphql::Result<Option<Review>> {
        let r = maybe(
            ctx,
            ctx.loaders().reviews_by_assignment(),
            AssignmentId(self.row.id),
        )
        .await?;
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
    /// The score: an integer between the criterion's `min` and `max`.
    pub value: i32,
}

/// A judge's private review of one project: only the judge and the organizers read it.
pub struct Review {
    pub row: review::Model,
    pub judge_user: i64,
}

/// A judge's private review of one project: only the judge and the organizers read it.
#[Object(
    guard = "FieldGuard::new(\"Review\", Scope { event: Some(self.row.event_id), user: Some(self.judge_user), ..Scope::none() })"
)]
impl Review {
    /// Opaque id.
    async fn id(&self) -> ID {
        ID(self.row.public_id.clone())
    }
    /// The membership of the judge who wrote it.
    async fn judge(&self, ctx: &Context<'_>) -> async_graphql::Result<Membership> {
        one(
            ctx,
            ctx.loaders().memberships(),
            MembershipId(self.row.judge_id),
            "judge",
        )
        .await
        .map(Membership)
    }
    /// The project reviewed.
    async fn project(&self, ctx: &Context<'_>) -> async_graphql::Result<Project> {
        one(
            ctx,
            ctx.loaders().projects(),
            ProjectId(self.row.project_id),
            "project",
        )
        .await
        .map(Project)
    }
    /// Whether the judge has submitted it; a submitted review stays submitted when saved
    /// again, and only submitted reviews count in calibration.
    async fn submitted(&self) -> bool {
        self.row.submitted
    }
    /// When it was first submitted; null while it is a draft.
    async fn submitted_at(&self) -> Option<DateTime<Utc>> {
        self.row.submitted_at
    }
    /// The judge's comment; null when there is none.
    async fn comment(&self) -> Option<&str> {
        Some(self.row.comment.as_str()).filter(|c| !c.is_empty())
    }
    /// How many times it was saved; every version is kept.
    async fn version(&self) -> i32 {
        self.row.version
    }
    /// The scores given so far, one per criterion scored, by criterion key; a submitted
    /// review scores every criterion.
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

/// A declared conflict between a judge and a team: the judge reviews none of the team's
/// projects (organizers only).
#[Object(guard = "FieldGuard::new(\"Recusal\", Scope::event(self.0.event_id))")]
impl Recusal {
    /// Opaque id.
    async fn id(&self) -> ID {
        ID(self.0.public_id.clone())
    }
    /// The membership of the recused judge.
    async fn judge(&self, ctx: &Context<'_>) -> async_graphql::Result<Membership> {
        one(
            ctx,
            ctx.loaders().memberships(),
            MembershipId(self.0.judge_id),
            "judge",
        )
        .await
        .map(Membership)
    }
    /// The team whose projects the judge does not review.
    async fn team(&self, ctx: &Context<'_>) -> async_graphql::Result<Team> {
        one(ctx, ctx.loaders().teams(), TeamId(self.0.team_id), "team")
            .await
            .map(Team)
    }
    /// Why, as the organizer wrote it; may be empty.
    async fn reason(&self) -> &str {
        &self.0.reason
    }
}

/// A judge's progress through their own queue.
#[derive(SimpleObject)]
#[graphql(guard = "FieldGuard::new(\"AssignmentProgress\", Scope::none())")]
pub struct AssignmentProgress {
    /// Assignments with a submitted review (recused ones not counted).
    pub done: i32,
    /// Assignments in the queue (recused ones and those of withdrawn projects not counted).
    pub total: i32,
}

/// Progress of judging in an event (organizers only).
#[derive(SimpleObject, Clone)]
#[graphql(guard = "FieldGuard::new(\"JudgingProgress\", Scope::event(self.event_id))")]
pub struct JudgingProgress {
    #[graphql(skip)]
    pub event_id: i64,
    /// Every assignment in the event: `done + pending + recused + withdrawn`.
    pub assignments: i32,
    /// Assignments of submitted projects with a submitted review.
    pub done: i32,
    /// Assignments of submitted projects still waiting for a submitted review.
    pub pending: i32,
    /// Assignments set aside by a recusal.
    pub recused: i32,
    /// Assignments whose project its team withdrew: not reviewable and not waited for,
    /// until the project is submitted again.
    pub withdrawn: i32,
    /// Submitted projects with fewer submitted reviews than the event's target.
    pub projects_below_target: i32,
}

impl JudgingProgress {
    /// The event's current judging progress: counted once per change of the event's data
    /// and shared ([`crate::memo::PerHead`]).
    pub async fn load(
        services: &crate::graphql::Services,
        e: &entity::event::Model,
    ) -> crate::error::AppResult<Self> {
        let db = &services.db.conn;
        let head = crate::audit::head_seq(db).await?;
        let p = services
            .progress
            .get(e.id, head, async || {
                crate::domain::judging::progress(db, e).await
            })
            .await?;
        Ok(JudgingProgress {
            event_id: e.id,
            assignments: p.assignments,
            done: p.done,
            pending: p.pending,
            recused: p.recused,
            withdrawn: p.withdrawn,
            projects_below_target: p.projects_below_target,
        })
    }
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
    /// The project's external id.
    pub project: String,
    /// Existing plus planned assignments.
    pub assigned: i32,
    /// The requested reviews per project (`k`).
    pub target: i32,
    /// How many reviews short of the target the project stays (0 when reached).
    pub shortfall: i32,
    /// Why the target cannot be reached, when it cannot.
    pub reason: Option<String>,
}

/// A judge's total assignments once the plan is applied.
#[derive(SimpleObject)]
#[graphql(guard = "FieldGuard::new(\"JudgeLoad\", Scope::none())")]
pub struct JudgeLoad {
    /// The judge's external id (or membership id).
    pub judge: String,
    /// Assignments the judge holds once the plan is applied, existing ones included
    /// (recused ones not counted).
    pub load: i32,
}

/// What `autoAssign` plans (and, with `apply`, wrote).
pub struct AssignmentPlan {
    pub event_id: i64,
    pub plan: crate::planner::Plan,
    pub applied: i32,
}

/// What `autoAssign` plans (and, with `apply`, wrote). Organizers only.
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
    /// How close each project comes to the target, by project id.
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
    /// Every judge's load once the plan is applied, by judge id.
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
    /// Whether the judge–project graph after the plan is one component, so that every
    /// judge's severity can be compared with every other's.
    async fn connected(&self) -> bool {
        self.plan.connected
    }
    /// Assignments written (0 unless `apply: true`).
    async fn applied(&self) -> i32 {
        self.applied
    }
    /// Reviews still missing after the plan, summed over all projects.
    async fn total_shortfall(&self) -> i32 {
        self.plan.total_shortfall() as i32
    }
}

/// The event's judges, membership id to user id: whose a judge's row is, for the guards of
/// pages of assignments and comparisons (one query per page, not one per row).
pub(super) async fn judge_users(
    ctx: &Context<'_>,
    event_id: i64,
) -> async_graphql::Result<HashMap<i64, i64>> {
    Ok(membership::Entity::find_judges(event_id)
        .all(&ctx.db().conn)
        .await
        .gql(ctx)?
        .into_iter()
        .map(|m| (m.id, m.user_id))
        .collect())
}
