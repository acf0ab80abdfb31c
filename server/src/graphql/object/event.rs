//! Events and what hangs directly off them: tracks, teams, the report of an import, and
//! the kinds of export.
//!
//! [`Event`] is one GraphQL type merged from per-domain parts: the event's own settings,
//! windows, tracks and teams are [`EventCore`] here; the fields that read a domain live
//! beside that domain's types, with their policies (`Event.voting` in `voting.rs`,
//! `Event.assignments` in `judging.rs`, and so on). A new read of an event goes into its
//! domain's part, not here.

use std::sync::Arc;

use async_graphql::{Context, Enum, ID, Json, MergedObject, Object};
use chrono::{DateTime, Utc};
use entity::{event, team, track};
use sea_orm::{ColumnTrait, EntityTrait, QueryFilter};

use super::audit::EventAudit;
use super::calibration::EventCalibration;
use super::checklist::EventChecklist;
use super::judging::EventJudging;
use super::pairwise::EventPairwise;
use super::people::EventPeople;
use super::prize::EventPrizes;
use super::project::{EventProjects, Project};
use super::results::EventResults;
use super::user::{Role, User};
use super::voting::EventVoting;
use super::webhooks::EventWebhooks;
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
    ("Event.myTeam", Rule::SignedIn),
    ("Event.myRoles", Rule::SignedIn),
    ("Event.commentsToTeams", Rule::Public),
    ("Event.timeZone", Rule::Public),
    ("Track.id", Rule::Public),
    ("Track.externalId", Rule::Public),
    ("Track.name", Rule::Public),
    ("Track.judgingMode", Rule::Public),
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

/// The event row every part of [`Event`] reads, shared between them.
pub type EventRow = Arc<event::Model>;

/// A hackathon: its windows, tracks, teams and projects.
#[derive(MergedObject)]
pub struct Event(
    EventCore,
    EventPeople,
    EventProjects,
    EventJudging,
    EventPairwise,
    EventCalibration,
    EventResults,
    EventPrizes,
    EventVoting,
    EventWebhooks,
    EventAudit,
    EventChecklist,
);

impl Event {
    /// The GraphQL view of an event row: every part reads the same row.
    pub fn new(row: event::Model) -> Event {
        let row: EventRow = Arc::new(row);
        Event(
            EventCore(row.clone()),
            EventPeople(row.clone()),
            EventProjects(row.clone()),
            EventJudging(row.clone()),
            EventPairwise(row.clone()),
            EventCalibration(row.clone()),
            EventResults(row.clone()),
            EventPrizes(row.clone()),
            EventVoting(row.clone()),
            EventWebhooks(row.clone()),
            EventAudit(row.clone()),
            EventChecklist(row),
        )
    }
}

/// The event's own settings, windows, tracks and teams, and the caller's place in it: a
/// part of [`Event`].
pub struct EventCore(EventRow);

/// The event's own settings, windows, tracks and teams: a part of [`Event`].
#[Object(guard = "FieldGuard::new(\"Event\", Scope::event(self.0.id))")]
impl EventCore {
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
    /// Whether teams read the comments on their own project once results are published.
    async fn comments_to_teams(&self) -> bool {
        self.0.comments_to_teams
    }
    /// The event's IANA time zone (`Europe/Berlin`, `UTC`): its times are shown in it
    /// beside the viewer's own. Deadlines are instants, whatever the zone.
    async fn time_zone(&self) -> &str {
        &self.0.time_zone
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
    /// How the track's projects are judged, when the track has a mode of its own
    /// (`setJudgingMode` with `track`); null: as the event's are (`Event.judgingMode`).
    async fn judging_mode(&self) -> Option<super::pairwise::JudgingModeValue> {
        self.0.judging_mode.map(Into::into)
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
        .map(Event::new)
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
        Event::new(self.event.clone())
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
