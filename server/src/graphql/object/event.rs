//! Events and what hangs directly off them: tracks, teams, the report of an import, and
//! the kinds of export. [`Event`] is also where a client starts reading an event's projects,
//! judging and results; those types live in their own files.

use std::collections::HashMap;

use async_graphql::{Context, Enum, ID, Json, Object};
use chrono::{DateTime, Utc};
use entity::assignment::AssignmentStatus;
use entity::{
    assignment, audit_event, calibration_run, event, invitation, membership, outbox_message,
    project, recusal, result_publication, team, track,
};
use sea_orm::{ColumnTrait, EntityTrait, QueryFilter, QueryOrder};

use super::audit::AuditEvent;
use super::judging::{Assignment, AssignmentProgress, Criterion, JudgingProgress, Recusal};
use super::people::{Invitation, OutboxMessage, Registration};
use super::prize::{PodiumEntry, Prize, TopUpSuggestion};
use super::project::{DuplicateSuggestion, Project};
use super::results::{
    CalibrationJob, CalibrationRun, Leaderboard, PublishedResults, ResultPublication,
    latest_publication,
};
use super::user::{Membership, Role, User};
use super::voting::{Ballot, TallyRow, VoteCampaign};
use crate::domain::{calibration_jobs, prizes, voting};
use crate::error::AppError;
use crate::graphql::connection::{Page, page};
use crate::graphql::context::{CtxExt, ResultExt};
use crate::graphql::cost;
use crate::graphql::loaders::{EventId, LoadersExt, TeamId, maybe};
use crate::graphql::policy::{FieldGuard, Rule, Scope};

/// Who may read each field of the types in this file, collected by [`crate::graphql::policy`].
pub(crate) const POLICIES: &[(&str, Rule)] = &[
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
    ("Event.setupSteps", Rule::Organizer),
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
    ("Event.calibrationRun", Rule::Organizer),
    ("Event.calibrationJobs", Rule::Organizer),
    ("Event.calibrationJob", Rule::Organizer),
    ("Event.results", Rule::Public),
    ("Event.prizes", Rule::Public),
    ("Event.webhooks", Rule::Organizer),
    ("Event.webhookDeliveries", Rule::Organizer),
    ("Event.podium", Rule::Public),
    ("Event.topUpPlan", Rule::Organizer),
    ("Event.voting", Rule::Public),
    // The caller's own ballot (by their session or their voter key).
    ("Event.myBallot", Rule::Public),
    // NOT_FOUND for everyone until published.
    ("Event.voteTally", Rule::Public),
    ("Event.publications", Rule::Public),
    ("Event.registration", Rule::Public),
    ("Event.timeZone", Rule::Public),
    ("Event.invitations", Rule::Organizer),
    ("Event.outbox", Rule::Organizer),
    ("Event.duplicateSuggestions", Rule::Organizer),
    ("Track.id", Rule::Public),
    ("Track.externalId", Rule::Public),
    ("Track.name", Rule::Public),
    ("Team.id", Rule::Public),
    ("Team.externalId", Rule::Public),
    ("Team.name", Rule::Public),
    ("Team.event", Rule::Public),
    ("Team.members", Rule::Member),
    ("Team.projects", Rule::Public),
    // Masked in the resolver: null unless the team itself or the organizers (Rule::OwnTeam).
    ("Team.inviteCode", Rule::Public),
    // Masked like `inviteCode`.
    ("Team.inviteCodeExpiresAt", Rule::Public),
    ("ImportReport.event", Rule::SiteAdmin),
    ("ImportReport.inserted", Rule::SiteAdmin),
    ("ImportReport.counts", Rule::SiteAdmin),
];

/// A hackathon: its windows, tracks, teams and projects.
pub struct Event(pub event::Model);

/// A hackathon: its windows, tracks, teams and projects.
#[Object(guard = "FieldGuard::new(\"Event\", Scope::event(self.0.id))")]
impl Event {
    /// Opaque id.
    async fn id(&self) -> ID {
        ID(self.0.public_id.clone())
    }
    /// The id the event was imported with.
    async fn external_id(&self) -> Option<&str> {
        Some(&self.0.external_id)
    }
    /// The event's short name in URLs and in `event(slug:)`: lower-case letters, digits and
    /// dashes, unique across events.
    async fn slug(&self) -> &str {
        &self.0.slug
    }
    /// The event's display name.
    async fn name(&self) -> &str {
        &self.0.name
    }
    /// Projects may be created, edited and submitted from this time on.
    async fn submissions_open(&self) -> DateTime<Utc> {
        self.0.submissions_open
    }
    /// The deadline: after it, no project content changes.
    async fn submissions_close(&self) -> DateTime<Utc> {
        self.0.submissions_close
    }
    /// Start of the judging window, from which judges may save reviews; null when the event
    /// has no judging window (then no review can be saved).
    async fn judging_open(&self) -> Option<DateTime<Utc>> {
        self.0.judging_open
    }
    /// End of the judging window: after it, reviews can no longer be saved; null when the
    /// event has no judging window.
    async fn judging_close(&self) -> Option<DateTime<Utc>> {
        self.0.judging_close
    }
    /// Start of the community voting window; null when the event has none.
    async fn voting_open(&self) -> Option<DateTime<Utc>> {
        self.0.voting_open
    }
    /// End of the community voting window; null when the event has none.
    async fn voting_close(&self) -> Option<DateTime<Utc>> {
        self.0.voting_close
    }
    /// How many reviews each submitted project should get.
    async fn reviews_per_project(&self) -> i32 {
        self.0.reviews_per_project
    }
    /// The most members a team may have.
    async fn max_team_size(&self) -> i32 {
        self.0.max_team_size
    }
    /// The event's tracks.
    #[graphql(complexity = "cost::short_list(child_complexity)")]
    async fn tracks(&self, ctx: &Context<'_>) -> async_graphql::Result<Vec<Track>> {
        let rows = maybe(ctx, ctx.loaders().event_tracks(), EventId(self.0.id)).await?;
        Ok(rows.unwrap_or_default().into_iter().map(Track).collect())
    }
    /// The event's teams.
    #[graphql(complexity = "cost::page(first, child_complexity)")]
    async fn teams(
        &self,
        ctx: &Context<'_>,
        #[graphql(desc = "Page size: 20 if omitted, at most the page limit (100 by default).")]
        first: Option<i32>,
        #[graphql(desc = "Start after this cursor (an edge's `cursor`); omit for the first page.")]
        after: Option<String>,
    ) -> async_graphql::Result<Page<Team>> {
        let q = team::Entity::find().filter(team::Column::EventId.eq(self.0.id));
        page(ctx, q, team::Column::Id, |t| t.id, first, after, Team).await
    }
    /// The public gallery: SUBMITTED projects only, optionally of one track.
    #[graphql(complexity = "cost::page(first, child_complexity)")]
    async fn projects(
        &self,
        ctx: &Context<'_>,
        #[graphql(
            desc = "Only projects of this track, by id or external id; an unknown track is an error."
        )]
        track: Option<ID>,
        #[graphql(desc = "Page size: 20 if omitted, at most the page limit (100 by default).")]
        first: Option<i32>,
        #[graphql(desc = "Start after this cursor (an edge's `cursor`); omit for the first page.")]
        after: Option<String>,
    ) -> async_graphql::Result<Page<Project>> {
        let mut q = project::Entity::find_gallery(self.0.id);
        if let Some(t) = track {
            let tr = crate::domain::find_track(&ctx.db().conn, &t, Some(self.0.id))
                .await
                .gql(ctx)?
                .filter(|tr| tr.event_id == self.0.id)
                .ok_or_else(|| {
                    ctx.err(AppError::bad_input("track", "no such track in this event"))
                })?;
            q = q.filter(project::Column::TrackId.eq(tr.id));
        }
        page(ctx, q, project::Column::Id, |p| p.id, first, after, Project).await
    }
    /// The caller's team in this event, if any.
    #[graphql(complexity = "cost::load(child_complexity)")]
    async fn my_team(&self, ctx: &Context<'_>) -> async_graphql::Result<Option<Team>> {
        let access = ctx.rc().access(ctx.db()).await.gql(ctx)?;
        let Some(id) = access.team_in(self.0.id) else {
            return Ok(None);
        };
        let t = maybe(ctx, ctx.loaders().teams(), TeamId(id)).await?;
        Ok(t.map(Team))
    }
    /// The caller's roles in this event.
    async fn my_roles(&self, ctx: &Context<'_>) -> async_graphql::Result<Vec<Role>> {
        let access = ctx.rc().access(ctx.db()).await.gql(ctx)?;
        Ok([Role::Participant, Role::Judge, Role::Organizer]
            .into_iter()
            .filter(|r| access.has(self.0.id, (*r).into()))
            .collect())
    }
    /// Everyone holding a role here (organizers only).
    #[graphql(complexity = "cost::page(first, child_complexity)")]
    async fn members(
        &self,
        ctx: &Context<'_>,
        #[graphql(desc = "Only members with this role; all when omitted.")] role: Option<Role>,
        #[graphql(desc = "Page size: 20 if omitted, at most the page limit (100 by default).")]
        first: Option<i32>,
        #[graphql(desc = "Start after this cursor (an edge's `cursor`); omit for the first page.")]
        after: Option<String>,
    ) -> async_graphql::Result<Page<Membership>> {
        let mut q = membership::Entity::find().filter(membership::Column::EventId.eq(self.0.id));
        if let Some(r) = role {
            q = q.filter(membership::Column::Role.eq(membership::Role::from(r)));
        }
        page(
            ctx,
            q,
            membership::Column::Id,
            |m| m.id,
            first,
            after,
            Membership,
        )
        .await
    }
    /// This event's slice of the audit chain, oldest first (organizers only).
    #[graphql(complexity = "cost::page(first, child_complexity)")]
    async fn audit_log(
        &self,
        ctx: &Context<'_>,
        #[graphql(desc = "Page size: 20 if omitted, at most the page limit (100 by default).")]
        first: Option<i32>,
        #[graphql(desc = "Start after this cursor (an edge's `cursor`); omit for the first page.")]
        after: Option<String>,
    ) -> async_graphql::Result<Page<AuditEvent>> {
        let q = audit_event::Entity::find()
            .filter(audit_event::Column::Event.eq(self.0.external_id.clone()));
        let event_id = self.0.id;
        page(
            ctx,
            q,
            audit_event::Column::Seq,
            |a| a.seq,
            first,
            after,
            |a| AuditEvent(a, event_id),
        )
        .await
    }
    /// Whether teams read the comments on their own project once results are published.
    async fn comments_to_teams(&self) -> bool {
        self.0.comments_to_teams
    }
    /// Likely duplicates among the submitted projects not yet marked (organizers): the
    /// same repository, or near-identical title and summary.
    #[graphql(complexity = "cost::calibration(child_complexity)")]
    async fn duplicate_suggestions(
        &self,
        ctx: &Context<'_>,
    ) -> async_graphql::Result<Vec<DuplicateSuggestion>> {
        let found = crate::domain::moderation::suggestions(&ctx.db().conn, self.0.id)
            .await
            .gql(ctx)?;
        Ok(found.into_iter().map(DuplicateSuggestion).collect())
    }
    /// Who may register as a participant with `registerForEvent`.
    async fn registration(&self) -> Registration {
        self.0.registration.into()
    }
    /// The event's IANA time zone (`Europe/Berlin`, `UTC`): its times are shown in it
    /// beside the viewer's own. Deadlines are instants, whatever the zone.
    async fn time_zone(&self) -> &str {
        &self.0.time_zone
    }
    /// The event's invitations, oldest first (organizers).
    #[graphql(complexity = "cost::page(first, child_complexity)")]
    async fn invitations(
        &self,
        ctx: &Context<'_>,
        #[graphql(desc = "Page size: 20 if omitted, at most the page limit (100 by default).")]
        first: Option<i32>,
        #[graphql(desc = "Start after this cursor (an edge's `cursor`); omit for the first page.")]
        after: Option<String>,
    ) -> async_graphql::Result<Page<Invitation>> {
        let q = invitation::Entity::find().filter(invitation::Column::EventId.eq(self.0.id));
        page(
            ctx,
            q,
            invitation::Column::Id,
            |i| i.id,
            first,
            after,
            Invitation,
        )
        .await
    }
    /// The messages of this event's invitations, oldest first (organizers): without a mail
    /// server, copy each link from its body. Messages that carry someone's own secret
    /// (password resets) are never here.
    #[graphql(complexity = "cost::page(first, child_complexity)")]
    async fn outbox(
        &self,
        ctx: &Context<'_>,
        #[graphql(desc = "Page size: 20 if omitted, at most the page limit (100 by default).")]
        first: Option<i32>,
        #[graphql(desc = "Start after this cursor (an edge's `cursor`); omit for the first page.")]
        after: Option<String>,
    ) -> async_graphql::Result<Page<OutboxMessage>> {
        let q = outbox_message::Entity::find()
            .filter(outbox_message::Column::EventId.eq(self.0.id))
            .filter(outbox_message::Column::Kind.eq(outbox_message::Kind::Invitation));
        page(
            ctx,
            q,
            outbox_message::Column::Id,
            |m| m.id,
            first,
            after,
            OutboxMessage,
        )
        .await
    }
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
        let judges: HashMap<i64, i64> = membership::Entity::find_judges(self.0.id)
            .all(&ctx.db().conn)
            .await
            .gql(ctx)?
            .into_iter()
            .map(|m| (m.id, m.user_id))
            .collect();
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
    /// The setup checklist (organizers only): tracks, rubric, judging windows, judges
    /// invited, assignments, judging, calibration, publication, in order, each checked from
    /// the data.
    #[graphql(complexity = "cost::load(child_complexity)")]
    async fn setup_steps(
        &self,
        ctx: &Context<'_>,
    ) -> async_graphql::Result<Vec<super::checklist::SetupStep>> {
        let steps = maybe(ctx, ctx.loaders().checklists(), EventId(self.0.id))
            .await?
            .unwrap_or_default();
        Ok(steps
            .into_iter()
            .map(|step| super::checklist::SetupStep {
                event_id: self.0.id,
                step,
            })
            .collect())
    }
    /// Judging progress (organizers only).
    #[graphql(complexity = "cost::load(child_complexity)")]
    async fn judging_progress(&self, ctx: &Context<'_>) -> async_graphql::Result<JudgingProgress> {
        JudgingProgress::load(&ctx.db().conn, &self.0)
            .await
            .gql(ctx)
    }
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
    /// The event's webhooks, oldest first (organizers), with their deliveries.
    #[graphql(complexity = "cost::short_list(child_complexity)")]
    async fn webhooks(
        &self,
        ctx: &Context<'_>,
    ) -> async_graphql::Result<Vec<super::webhooks::Webhook>> {
        let all = crate::domain::webhooks::of_event(&ctx.db().conn, self.0.id)
            .await
            .gql(ctx)?;
        Ok(all.into_iter().map(super::webhooks::Webhook).collect())
    }
    /// The deliveries of all the event's webhooks, oldest first (organizers): the delivery
    /// log, with each attempt.
    #[graphql(complexity = "cost::page(first, child_complexity)")]
    async fn webhook_deliveries(
        &self,
        ctx: &Context<'_>,
        #[graphql(desc = "Page size: 20 if omitted, at most the page limit (100 by default).")]
        first: Option<i32>,
        #[graphql(desc = "Start after this cursor (an edge's `cursor`); omit for the first page.")]
        after: Option<String>,
    ) -> async_graphql::Result<Page<super::webhooks::WebhookDelivery>> {
        super::webhooks::event_deliveries(ctx, self.0.id, first, after).await
    }
    /// The event's prizes: overall ones first, then by track and position.
    #[graphql(complexity = "cost::short_list(child_complexity)")]
    async fn prizes(&self, ctx: &Context<'_>) -> async_graphql::Result<Vec<Prize>> {
        let all = prizes::prizes_of(&ctx.db().conn, self.0.id)
            .await
            .gql(ctx)?;
        Ok(all.into_iter().map(Prize).collect())
    }
    /// Each prize's winner, from the latest published results only (empty before the first
    /// publication): the project at the prize's position (within its track for a track
    /// prize), or the winner the organizers assigned. Special awards appear once assigned.
    /// A prize never changes a run.
    #[graphql(complexity = "cost::short_list(child_complexity)")]
    async fn podium(&self, ctx: &Context<'_>) -> async_graphql::Result<Vec<PodiumEntry>> {
        let Some(publication) = latest_publication(ctx, self.0.id).await? else {
            return Ok(Vec::new());
        };
        let result = ctx.services().parsed_runs.get(&publication.run).gql(ctx)?;
        let db = &ctx.db().conn;
        let all = prizes::prizes_of(db, self.0.id).await.gql(ctx)?;
        if all.is_empty() {
            return Ok(Vec::new());
        }
        let (track_of, external_of) = prizes::project_maps(db, self.0.id).await.gql(ctx)?;
        Ok(prizes::podium(&all, &result, &track_of, &external_of)
            .into_iter()
            .map(|p| PodiumEntry::new(self.0.id, &result, p))
            .collect())
    }
    /// Planning aid for organizers before publication, never a ranking: for each ranked
    /// prize not assigned by hand, the projects of the latest calibration run whose rank
    /// interval straddles the prize's cut-off (within its track for a track prize) or whose
    /// reviews are fewer than `reviewsPerProject` near it: where one more review would
    /// matter most. Straddling ones first, widest interval first. Empty before the first
    /// run.
    #[graphql(complexity = "cost::short_list(child_complexity)")]
    async fn top_up_plan(&self, ctx: &Context<'_>) -> async_graphql::Result<Vec<TopUpSuggestion>> {
        let db = &ctx.db().conn;
        let latest = calibration_run::Entity::find()
            .filter(calibration_run::Column::EventId.eq(self.0.id))
            .order_by_desc(calibration_run::Column::Id)
            .one(db)
            .await
            .gql(ctx)?;
        let Some(run) = latest else {
            return Ok(Vec::new());
        };
        let all = prizes::prizes_of(db, self.0.id).await.gql(ctx)?;
        if all.is_empty() {
            return Ok(Vec::new());
        }
        let result = ctx.services().parsed_runs.get(&run).gql(ctx)?;
        let (track_of, _) = prizes::project_maps(db, self.0.id).await.gql(ctx)?;
        let target = u32::try_from(self.0.reviews_per_project).unwrap_or(0);
        Ok(prizes::top_up(&all, &result.projects, &track_of, target)
            .into_iter()
            .map(|t| TopUpSuggestion::new(self.0.id, &result, t))
            .collect())
    }
    /// The event's community vote; null when it has none.
    async fn voting(&self, ctx: &Context<'_>) -> async_graphql::Result<Option<VoteCampaign>> {
        let c = voting::campaign_of(&ctx.db().conn, self.0.id)
            .await
            .gql(ctx)?;
        Ok(c.map(|campaign| VoteCampaign {
            campaign,
            opens: self.0.voting_open,
            closes: self.0.voting_close,
        }))
    }
    /// The caller's own ballot: a signed-in account's in an ACCOUNT vote, or an email
    /// voter's by `voterKey` (a key that fits no voter is UNAUTHENTICATED). Null when the
    /// event has no vote, or the caller is not of the kind the vote takes.
    async fn my_ballot(
        &self,
        ctx: &Context<'_>,
        #[graphql(desc = "An email voter's key (from `confirmVoter`).")] voter_key: Option<String>,
    ) -> async_graphql::Result<Option<Ballot>> {
        let who = match (&voter_key, ctx.rc().user()) {
            (Some(k), _) => voting::Who::Key(k),
            (None, Some(u)) => voting::Who::Account(u),
            (None, None) => return Ok(None),
        };
        let b = voting::ballot(&ctx.db().conn, self.0.id, who)
            .await
            .gql(ctx)?;
        Ok(b.map(Ballot))
    }
    /// The published tally of the community vote, most votes first: NOT_FOUND (for
    /// everyone) until the window has closed and an organizer published it. It never
    /// feeds the judged results.
    #[graphql(complexity = "cost::event_list(child_complexity)")]
    async fn vote_tally(&self, ctx: &Context<'_>) -> async_graphql::Result<Vec<TallyRow>> {
        let c = voting::campaign_of(&ctx.db().conn, self.0.id)
            .await
            .gql(ctx)?;
        let rows = voting::published_tally(c.as_ref()).gql(ctx)?;
        Ok(rows
            .into_iter()
            .map(|row| TallyRow {
                event_id: self.0.id,
                row,
            })
            .collect())
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

/// A track (category) of an event.
pub struct Track(pub track::Model);

/// A track (category) of an event.
#[Object(guard = "FieldGuard::new(\"Track\", Scope::event(self.0.event_id))")]
impl Track {
    /// Opaque id.
    async fn id(&self) -> ID {
        ID(self.0.public_id.clone())
    }
    /// The track's id in fixtures and exports (given at import or creation, else generated);
    /// ID arguments accept it too.
    async fn external_id(&self) -> Option<&str> {
        Some(&self.0.external_id)
    }
    /// The track's display name.
    async fn name(&self) -> &str {
        &self.0.name
    }
}

/// A team of participants in one event.
pub struct Team(pub team::Model);

impl Team {
    fn scope(&self) -> Scope {
        Scope {
            event: Some(self.0.event_id),
            team: Some(self.0.id),
            public: true,
            user: None,
        }
    }
}

/// A team of participants in one event.
#[Object(guard = "FieldGuard::new(\"Team\", self.scope())")]
impl Team {
    /// Opaque id.
    async fn id(&self) -> ID {
        ID(self.0.public_id.clone())
    }
    /// The team's id in fixtures and exports (given at import or creation, else generated);
    /// ID arguments accept it too.
    async fn external_id(&self) -> Option<&str> {
        Some(&self.0.external_id)
    }
    /// The team's name; two teams may share one.
    async fn name(&self) -> &str {
        &self.0.name
    }
    /// The event the team is in.
    async fn event(&self, ctx: &Context<'_>) -> async_graphql::Result<Event> {
        crate::graphql::loaders::one(
            ctx,
            ctx.loaders().events(),
            EventId(self.0.event_id),
            "event",
        )
        .await
        .map(Event)
    }
    /// The people on the team (members of the event can see them).
    #[graphql(complexity = "cost::short_list(child_complexity)")]
    async fn members(&self, ctx: &Context<'_>) -> async_graphql::Result<Vec<User>> {
        let users = maybe(ctx, ctx.loaders().team_members(), TeamId(self.0.id)).await?;
        Ok(users.unwrap_or_default().into_iter().map(User).collect())
    }
    /// The team's projects: submitted ones for everyone, drafts and withdrawn ones for the
    /// team itself and the organizers.
    #[graphql(complexity = "cost::short_list(child_complexity)")]
    async fn projects(&self, ctx: &Context<'_>) -> async_graphql::Result<Vec<Project>> {
        let rows = maybe(ctx, ctx.loaders().team_projects(), TeamId(self.0.id)).await?;
        let access = ctx.rc().access(ctx.db()).await.gql(ctx)?;
        Ok(rows
            .unwrap_or_default()
            .into_iter()
            .filter(|p| access.can_see_project(p))
            .map(Project)
            .collect())
    }
    /// The code that lets a participant join: null except for the team and the organizers.
    async fn invite_code(&self, ctx: &Context<'_>) -> async_graphql::Result<Option<&str>> {
        let allowed = crate::graphql::policy::allowed(ctx, Rule::OwnTeam, &self.scope())
            .await
            .gql(ctx)?;
        Ok(allowed.then_some(self.0.invite_code.as_str()))
    }
    /// When the invite code stops working (`rotateInviteCode` makes a new one): null except
    /// for the team and the organizers.
    async fn invite_code_expires_at(
        &self,
        ctx: &Context<'_>,
    ) -> async_graphql::Result<Option<DateTime<Utc>>> {
        let allowed = crate::graphql::policy::allowed(ctx, Rule::OwnTeam, &self.scope())
            .await
            .gql(ctx)?;
        Ok(self.0.invite_code_expires_at.filter(|_| allowed))
    }
}

/// What an import inserted.
pub struct ImportReport {
    pub event: event::Model,
    pub counts: crate::domain::import::ImportCounts,
}

/// What an import inserted.
#[Object(guard = "FieldGuard::new(\"ImportReport\", Scope::event(self.event.id))")]
impl ImportReport {
    /// The imported event (the existing one when the file had been imported before).
    async fn event(&self) -> Event {
        Event(self.event.clone())
    }
    /// Rows inserted in all; 0 when the file had been imported before.
    async fn inserted(&self) -> i32 {
        self.counts.total()
    }
    /// Rows inserted, by kind.
    async fn counts(&self) -> Json<serde_json::Value> {
        Json(serde_json::to_value(&self.counts).unwrap_or_default())
    }
}

/// What files an export can produce.
#[derive(Enum, Copy, Clone, Debug, PartialEq, Eq)]
pub enum ExportKind {
    /// One row per membership: role, name, email and a judge's tracks.
    Registrations,
    /// One row per team, with its members' names and emails.
    Teams,
    /// One row per project, drafts and withdrawn ones included: ids, then (last) the team's
    /// and the track's names and the expo table.
    Projects,
    /// One row per assignment: judge, project, status and source.
    Assignments,
    /// One row per review: every criterion's score, the weighted total and the comment,
    /// then (last) the judge's name and email and the project's title.
    Scores,
    /// The ranking of the newest calibration run, published or not.
    Results,
    /// Each judge's calibration in the newest calibration run.
    Judges,
    /// This event's slice of the audit chain, with its hashes.
    Audit,
    /// Every pending invitation's link (email, role, link, expiry): for a mail merge when
    /// the server sends no mail. Audited as `invitations.links_exported`.
    InvitationLinks,
}

impl From<ExportKind> for crate::domain::export::Kind {
    fn from(k: ExportKind) -> Self {
        use crate::domain::export::Kind;
        match k {
            ExportKind::Registrations => Kind::Registrations,
            ExportKind::Teams => Kind::Teams,
            ExportKind::Projects => Kind::Projects,
            ExportKind::Assignments => Kind::Assignments,
            ExportKind::Scores => Kind::Scores,
            ExportKind::Results => Kind::Results,
            ExportKind::Judges => Kind::Judges,
            ExportKind::Audit => Kind::Audit,
            ExportKind::InvitationLinks => Kind::InvitationLinks,
        }
    }
}
