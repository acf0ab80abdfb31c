//! Per-field authorization, declared once per field in [`FIELD_POLICIES`].
//!
//! Every output object carries a [`Scope`]: the event that owns it and, where it matters,
//! its team, its owner, and whether it is public. Every object type installs
//! [`FieldGuard`] as its object-level guard, so every field of it is checked against its
//! declared [`Rule`] before it resolves; a field without a declared rule is refused (fail
//! closed), and a test walks the whole schema to make sure none exists.
//!
//! A caller's rights come only from their membership rows ([`crate::domain::Access`]),
//! never from an argument. An object the caller may not see is reported the same way as a
//! missing one: queries return null, mutations fail with NOT_FOUND.

use std::collections::HashMap;
use std::sync::LazyLock;

use async_graphql::{Context, Guard};

use super::context::CtxExt;
use crate::error::AppError;

/// Who may read a field.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Rule {
    /// Anyone, signed in or not.
    Public,
    /// Any signed-in user (the field or mutation checks its own object rules deeper).
    SignedIn,
    /// The user the object describes, and site admins.
    OwnUser,
    /// Anyone who holds any role in the owning event.
    Member,
    /// Members of the owning team, and the event's organizers.
    OwnTeam,
    /// Public objects for everyone; otherwise their own team and the organizers.
    VisibleOrOwnTeam,
    /// The judge the object belongs to (its scope's user), and the event's organizers.
    /// Participants and the public never read a judge's scores.
    OwnJudge,
    /// The event's organizers (and site admins).
    Organizer,
    /// Site admins only.
    SiteAdmin,
}

/// What a field's object belongs to, for its guard.
#[derive(Clone, Copy, Debug, Default)]
pub struct Scope {
    pub event: Option<i64>,
    pub team: Option<i64>,
    pub user: Option<i64>,
    pub public: bool,
}

impl Scope {
    pub fn none() -> Scope {
        Scope::default()
    }
    pub fn event(event: i64) -> Scope {
        Scope {
            event: Some(event),
            ..Default::default()
        }
    }
}

/// The declared rule of every field, by `Type.field`. Connection, edge and page-info types
/// are structural: they expose only what the field that returned them already authorized.
pub const FIELD_POLICIES: &[(&str, Rule)] = &[
    ("Query.viewer", Rule::Public),
    ("Query.event", Rule::Public),
    ("Query.events", Rule::Public),
    ("Query.project", Rule::Public),
    ("Mutation.signUp", Rule::Public),
    ("Mutation.logIn", Rule::Public),
    ("Mutation.logOut", Rule::SignedIn),
    ("Mutation.createApiToken", Rule::SignedIn),
    ("Mutation.revokeApiToken", Rule::SignedIn),
    ("Mutation.createEvent", Rule::SiteAdmin),
    ("Mutation.updateEvent", Rule::SignedIn),
    ("Mutation.grantRole", Rule::SignedIn),
    ("Mutation.revokeRole", Rule::SignedIn),
    ("Mutation.registerForEvent", Rule::SignedIn),
    ("Mutation.createTrack", Rule::SignedIn),
    ("Mutation.createTeam", Rule::SignedIn),
    ("Mutation.joinTeam", Rule::SignedIn),
    ("Mutation.addTeamMember", Rule::SignedIn),
    ("Mutation.createProject", Rule::SignedIn),
    ("Mutation.updateProject", Rule::SignedIn),
    ("Mutation.submitProject", Rule::SignedIn),
    ("Mutation.withdrawProject", Rule::SignedIn),
    ("Mutation.importEvent", Rule::SiteAdmin),
    ("Subscription.projectSubmitted", Rule::Public),
    ("Viewer.user", Rule::OwnUser),
    ("Viewer.memberships", Rule::OwnUser),
    ("Viewer.apiTokens", Rule::OwnUser),
    // A session exists only in the response to whoever just proved the password.
    ("Session.token", Rule::Public),
    ("Session.user", Rule::Public),
    ("ApiToken.id", Rule::OwnUser),
    ("ApiToken.label", Rule::OwnUser),
    ("ApiToken.prefix", Rule::OwnUser),
    ("ApiToken.createdAt", Rule::OwnUser),
    ("ApiToken.lastUsedAt", Rule::OwnUser),
    ("ApiToken.revokedAt", Rule::OwnUser),
    ("CreatedApiToken.token", Rule::OwnUser),
    ("CreatedApiToken.apiToken", Rule::OwnUser),
    ("User.id", Rule::Public),
    ("User.displayName", Rule::Public),
    // Masked in the resolver: null unless self, a site admin, or an organizer of an event
    // the person takes part in.
    ("User.email", Rule::Public),
    ("User.isSiteAdmin", Rule::Public),
    ("Membership.id", Rule::Member),
    ("Membership.externalId", Rule::Member),
    ("Membership.role", Rule::Member),
    ("Membership.event", Rule::Member),
    ("Membership.user", Rule::Member),
    ("Membership.email", Rule::Organizer),
    ("Membership.tracks", Rule::Member),
    ("Event.id", Rule::Public),
    ("Event.externalId", Rule::Public),
    ("Event.slug", Rule::Public),
    ("Event.name", Rule::Public),
    ("Event.submissionsOpen", Rule::Public),
    ("Event.submissionsClose", Rule::Public),
    ("Event.judgingOpen", Rule::Public),
    ("Event.judgingClose", Rule::Public),
    ("Event.votingOpen", Rule::Public),
    ("Event.votingClose", Rule::Public),
    ("Event.reviewsPerProject", Rule::Public),
    ("Event.maxTeamSize", Rule::Public),
    ("Event.tracks", Rule::Public),
    ("Event.teams", Rule::Public),
    ("Event.projects", Rule::Public),
    ("Event.myTeam", Rule::SignedIn),
    ("Event.myRoles", Rule::SignedIn),
    ("Event.members", Rule::Organizer),
    ("Event.auditLog", Rule::Organizer),
    ("Track.id", Rule::Public),
    ("Track.externalId", Rule::Public),
    ("Track.name", Rule::Public),
    ("Team.id", Rule::Public),
    ("Team.externalId", Rule::Public),
    ("Team.name", Rule::Public),
    ("Team.members", Rule::Member),
    ("Team.projects", Rule::Public),
    // Masked in the resolver: null unless the team itself or the organizers (Rule::OwnTeam).
    ("Team.inviteCode", Rule::Public),
    ("Project.id", Rule::VisibleOrOwnTeam),
    ("Project.externalId", Rule::VisibleOrOwnTeam),
    ("Project.title", Rule::VisibleOrOwnTeam),
    ("Project.tagline", Rule::VisibleOrOwnTeam),
    ("Project.summary", Rule::VisibleOrOwnTeam),
    ("Project.description", Rule::VisibleOrOwnTeam),
    ("Project.repoUrl", Rule::VisibleOrOwnTeam),
    ("Project.demoUrl", Rule::VisibleOrOwnTeam),
    ("Project.tags", Rule::VisibleOrOwnTeam),
    ("Project.status", Rule::VisibleOrOwnTeam),
    ("Project.submittedAt", Rule::VisibleOrOwnTeam),
    ("Project.track", Rule::VisibleOrOwnTeam),
    ("Project.team", Rule::VisibleOrOwnTeam),
    ("Project.event", Rule::VisibleOrOwnTeam),
    ("Project.createdAt", Rule::VisibleOrOwnTeam),
    ("Project.updatedAt", Rule::VisibleOrOwnTeam),
    ("AuditEvent.seq", Rule::Organizer),
    ("AuditEvent.occurredAt", Rule::Organizer),
    ("AuditEvent.actor", Rule::Organizer),
    ("AuditEvent.event", Rule::Organizer),
    ("AuditEvent.action", Rule::Organizer),
    ("AuditEvent.objectType", Rule::Organizer),
    ("AuditEvent.objectId", Rule::Organizer),
    ("AuditEvent.payload", Rule::Organizer),
    ("AuditEvent.prevHash", Rule::Organizer),
    ("AuditEvent.rowHash", Rule::Organizer),
    ("ImportReport.event", Rule::SiteAdmin),
    ("ImportReport.inserted", Rule::SiteAdmin),
    ("ImportReport.counts", Rule::SiteAdmin),
    ("Query.signingKey", Rule::Public),
    ("Mutation.setCriterion", Rule::SignedIn),
    ("Mutation.removeCriterion", Rule::SignedIn),
    ("Mutation.assignJudge", Rule::SignedIn),
    ("Mutation.unassignJudge", Rule::SignedIn),
    ("Mutation.recuseJudge", Rule::SignedIn),
    ("Mutation.saveReview", Rule::SignedIn),
    ("Mutation.autoAssign", Rule::SignedIn),
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
    ("Mutation.runCalibration", Rule::SignedIn),
    ("Mutation.publishResults", Rule::SignedIn),
    ("Subscription.resultsPublished", Rule::Public),
    // Checked against the event in the resolver: organizers only.
    ("Subscription.judgingProgress", Rule::SignedIn),
    ("Subscription.leaderboardUpdated", Rule::SignedIn),
    ("Event.commentsToTeams", Rule::Public),
    ("Event.rubric", Rule::Public),
    // The caller's own judging work (empty for non-judges).
    ("Event.myAssignments", Rule::SignedIn),
    ("Event.myProgress", Rule::SignedIn),
    ("Event.nextAssignment", Rule::SignedIn),
    ("Event.assignments", Rule::Organizer),
    ("Event.recusals", Rule::Organizer),
    ("Event.judgingProgress", Rule::Organizer),
    ("Event.leaderboard", Rule::Organizer),
    ("Event.calibrationRuns", Rule::Organizer),
    ("Event.results", Rule::Public),
    ("Event.publications", Rule::Public),
    ("Event.export", Rule::Organizer),
    // Filtered by the resolver: organizers all, a judge their own, others none.
    ("Project.reviews", Rule::VisibleOrOwnTeam),
    ("Project.feedback", Rule::OwnTeam),
    ("AssignmentProgress.done", Rule::SignedIn),
    ("AssignmentProgress.total", Rule::SignedIn),
    ("Criterion.id", Rule::Public),
    ("Criterion.key", Rule::Public),
    ("Criterion.name", Rule::Public),
    ("Criterion.weight", Rule::Public),
    ("Criterion.min", Rule::Public),
    ("Criterion.max", Rule::Public),
    ("Criterion.position", Rule::Public),
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
    // Carries no judge data: reached by organizers through runs and the leaderboard, and
    // by everyone through published results.
    ("CalibratedProject.project", Rule::Public),
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
    ("JudgingProgress.assignments", Rule::Organizer),
    ("JudgingProgress.done", Rule::Organizer),
    ("JudgingProgress.pending", Rule::Organizer),
    ("JudgingProgress.recused", Rule::Organizer),
    ("JudgingProgress.projectsBelowTarget", Rule::Organizer),
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
    ("SigningKey.algorithm", Rule::Public),
    ("SigningKey.publicKeyPem", Rule::Public),
    ("SigningKey.fingerprint", Rule::Public),
];

static POLICIES: LazyLock<HashMap<&'static str, Rule>> =
    LazyLock::new(|| FIELD_POLICIES.iter().copied().collect());

/// The declared rule of `Type.field`, if any.
pub fn rule_of(type_name: &str, field: &str) -> Option<Rule> {
    POLICIES
        .get(format!("{type_name}.{field}").as_str())
        .copied()
}

/// Evaluates `rule` for the current caller against `scope`.
pub async fn allowed(ctx: &Context<'_>, rule: Rule, scope: &Scope) -> Result<bool, AppError> {
    let rc = ctx.rc();
    let Some(user) = rc.user() else {
        return Ok(match rule {
            Rule::Public => true,
            Rule::VisibleOrOwnTeam => scope.public,
            _ => false,
        });
    };
    if matches!(rule, Rule::Public | Rule::SignedIn) || user.is_site_admin {
        return Ok(true);
    }
    if rule == Rule::OwnUser {
        return Ok(scope.user == Some(user.id));
    }
    if rule == Rule::OwnJudge && scope.user == Some(user.id) {
        return Ok(true);
    }
    if rule == Rule::SiteAdmin {
        return Ok(false);
    }
    if rule == Rule::VisibleOrOwnTeam && scope.public {
        return Ok(true);
    }
    let Some(event) = scope.event else {
        return Ok(false);
    };
    let access = rc.access(ctx.db()).await?;
    Ok(match rule {
        Rule::Member => access.is_member(event) || access.is_organizer(event),
        Rule::Organizer | Rule::OwnJudge => access.is_organizer(event),
        Rule::OwnTeam | Rule::VisibleOrOwnTeam => {
            access.is_organizer(event) || scope.team.is_some_and(|t| access.on_team(event, t))
        }
        Rule::Public | Rule::SignedIn | Rule::OwnUser | Rule::SiteAdmin => false,
    })
}

/// The object-level guard every output type installs.
pub struct FieldGuard {
    type_name: &'static str,
    scope: Scope,
}

impl FieldGuard {
    pub fn new(type_name: &'static str, scope: Scope) -> Self {
        FieldGuard { type_name, scope }
    }
}

impl Guard for FieldGuard {
    async fn check(&self, ctx: &Context<'_>) -> async_graphql::Result<()> {
        let field = ctx.item.node.name.node.as_str();
        let Some(rule) = rule_of(self.type_name, field) else {
            return Err(ctx.err(AppError::Internal(format!(
                "no authorization policy is declared for {}.{field}",
                self.type_name
            ))));
        };
        match allowed(ctx, rule, &self.scope).await {
            Ok(true) => Ok(()),
            Ok(false) if ctx.rc().user().is_none() => Err(ctx.err(AppError::Unauthenticated)),
            Ok(false) => Err(ctx.err(AppError::forbidden(format!(
                "you may not read {}.{field}",
                self.type_name
            )))),
            Err(e) => Err(ctx.err(e)),
        }
    }
}
