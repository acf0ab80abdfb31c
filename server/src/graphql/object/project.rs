//! Projects: what a team writes and submits, and who may read it in which state (drafts
//! and withdrawn projects stay with their team and the organizers). A project's reviews and
//! the anonymous feedback to its team are read here too.

use async_graphql::{Context, Enum, ID, Object};
use chrono::{DateTime, Utc};
use entity::{comment, project};
use sea_orm::{ColumnTrait, EntityTrait, QueryFilter};

use super::comment::Comment;
use super::event::{Event, Team, Track};
use super::judging::Review;
use crate::domain::{Role, json_list};
use crate::error::AppError;
use crate::graphql::connection::{Page, page};
use crate::graphql::context::{CtxExt, ResultExt};
use crate::graphql::cost;
use crate::graphql::loaders::{
    EventId, LoadersExt, MembershipId, ProjectId, TeamId, TrackId, many, maybe, one,
};
use crate::graphql::policy::{FieldGuard, Rule, Scope};

/// Who may read each field of the types in this file, collected by [`crate::graphql::policy`].
pub(crate) const POLICIES: &[(&str, Rule)] = &[
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
    ("Project.table", Rule::VisibleOrOwnTeam),
    ("Project.team", Rule::VisibleOrOwnTeam),
    ("Project.event", Rule::VisibleOrOwnTeam),
    ("Project.createdAt", Rule::VisibleOrOwnTeam),
    ("Project.updatedAt", Rule::VisibleOrOwnTeam),
    // Filtered by the resolver: organizers all, a judge their own, others none.
    ("Project.reviews", Rule::VisibleOrOwnTeam),
    ("Project.feedback", Rule::OwnTeam),
    // The thread of whoever may see the project; hidden comments are masked per field.
    ("Project.comments", Rule::VisibleOrOwnTeam),
    // The organizers' moderation, shown to the project's team and the organizers.
    ("Project.hiddenReason", Rule::OwnTeam),
    ("Project.disqualifiedReason", Rule::OwnTeam),
    ("Project.duplicateOf", Rule::OwnTeam),
    ("DuplicateSuggestion.project", Rule::Organizer),
    ("DuplicateSuggestion.of", Rule::Organizer),
    ("DuplicateSuggestion.reason", Rule::Organizer),
    ("DuplicateSuggestion.similarity", Rule::Organizer),
    ("Event.projects", Rule::Public),
    ("Event.duplicateSuggestions", Rule::Organizer),
];

/// The gallery and its moderation: a part of [`Event`](super::event::Event), merged into the one GraphQL type.
pub struct EventProjects(pub(super) super::event::EventRow);

/// The gallery and its moderation: a part of [`Event`](super::event::Event).
#[Object(guard = "FieldGuard::new(\"Event\", Scope::event(self.0.id))")]
impl EventProjects {
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
}

/// Where a project is in its life.
#[derive(Enum, Copy, Clone, Debug, PartialEq, Eq)]
#[graphql(remote = "project::ProjectStatus")]
pub enum ProjectStatus {
    /// Being written; visible to its team and the organizers.
    Draft,
    /// Submitted for judging; public.
    Submitted,
    /// Taken back by its team; visible to its team and the organizers.
    Withdrawn,
}

/// A project submitted (or being written) for an event.
pub struct Project(pub project::Model);

impl Project {
    fn scope(&self) -> Scope {
        Scope {
            event: Some(self.0.event_id),
            team: Some(self.0.team_id),
            public: self.0.in_gallery(),
            user: None,
        }
    }
}

/// A project submitted (or being written) for an event.
#[Object(guard = "FieldGuard::new(\"Project\", self.scope())")]
impl Project {
    /// Opaque id.
    async fn id(&self) -> ID {
        ID(self.0.public_id.clone())
    }
    /// The project's id in fixtures and exports (given at import, else generated); ID
    /// arguments accept it too.
    async fn external_id(&self) -> Option<&str> {
        Some(&self.0.external_id)
    }
    /// The project's title: one line, at most 200 characters.
    async fn title(&self) -> &str {
        &self.0.title
    }
    /// A one-line pitch of at most 200 characters; empty when not written.
    async fn tagline(&self) -> &str {
        &self.0.tagline
    }
    /// A short summary of at most 2,000 characters; empty when not written.
    async fn summary(&self) -> &str {
        &self.0.summary
    }
    /// The full description, at most 20,000 characters; empty when not written.
    async fn description(&self) -> &str {
        &self.0.description
    }
    /// The source repository, an http(s) URL; null when not given.
    async fn repo_url(&self) -> Option<&str> {
        Some(self.0.repo_url.as_str()).filter(|s| !s.is_empty())
    }
    /// A link to a demo, an http(s) URL; null when not given.
    async fn demo_url(&self) -> Option<&str> {
        Some(self.0.demo_url.as_str()).filter(|s| !s.is_empty())
    }
    /// Up to 10 distinct lower-case tags of at most 32 characters each.
    async fn tags(&self) -> Vec<String> {
        json_list(&self.0.tags)
    }
    /// Where the project is in its life: DRAFT, SUBMITTED or WITHDRAWN.
    async fn status(&self) -> ProjectStatus {
        self.0.status.into()
    }
    /// When it was last submitted: set for SUBMITTED projects, kept for WITHDRAWN ones,
    /// null for drafts.
    async fn submitted_at(&self) -> Option<DateTime<Utc>> {
        self.0.submitted_at
    }
    /// The expo table where the project stands, so judges and visitors find it on the
    /// floor (for example "12" or "A-07"); null when it has none. Set by its team with
    /// `updateProject` before the deadline and by organizers with `setProjectTable`.
    async fn table(&self) -> Option<&str> {
        self.0.expo_table.as_deref()
    }
    /// The track the project is entered in.
    async fn track(&self, ctx: &Context<'_>) -> async_graphql::Result<Track> {
        one(
            ctx,
            ctx.loaders().tracks(),
            TrackId(self.0.track_id),
            "track",
        )
        .await
        .map(Track)
    }
    /// The team that makes the project.
    async fn team(&self, ctx: &Context<'_>) -> async_graphql::Result<Team> {
        one(ctx, ctx.loaders().teams(), TeamId(self.0.team_id), "team")
            .await
            .map(Team)
    }
    /// The event the project is made for.
    async fn event(&self, ctx: &Context<'_>) -> async_graphql::Result<Event> {
        one(
            ctx,
            ctx.loaders().events(),
            EventId(self.0.event_id),
            "event",
        )
        .await
        .map(Event::new)
    }
    /// When the project was created.
    async fn created_at(&self) -> DateTime<Utc> {
        self.0.created_at
    }
    /// When its content or status last changed.
    async fn updated_at(&self) -> DateTime<Utc> {
        self.0.updated_at
    }
    /// Why the organizers hid it (it is out of the gallery and the ranking); null when it
    /// is not hidden.
    async fn hidden_reason(&self) -> Option<&str> {
        self.0.hidden_reason.as_deref()
    }
    /// Why the organizers disqualified it (it is out of the ranking); null when it is not.
    async fn disqualified_reason(&self) -> Option<&str> {
        self.0.disqualified_reason.as_deref()
    }
    /// The original, when the organizers marked this project a duplicate of it (it is out
    /// of the gallery and the ranking); null otherwise.
    #[graphql(complexity = "cost::load(child_complexity)")]
    async fn duplicate_of(&self, ctx: &Context<'_>) -> async_graphql::Result<Option<Project>> {
        let Some(id) = self.0.duplicate_of else {
            return Ok(None);
        };
        Ok(maybe(ctx, ctx.loaders().projects(), ProjectId(id))
            .await?
            .map(Project))
    }
    /// Reviews of this project: organizers read all, a judge only their own, everyone
    /// else none.
    #[graphql(complexity = "cost::short_list(child_complexity)")]
    async fn reviews(&self, ctx: &Context<'_>) -> async_graphql::Result<Vec<Review>> {
        let Some(user) = ctx.rc().user() else {
            return Ok(vec![]);
        };
        let access = ctx.rc().access(ctx.db()).await.gql(ctx)?;
        let organizer = access.is_organizer(self.0.event_id);
        if !organizer && !access.has(self.0.event_id, Role::Judge) {
            return Ok(vec![]);
        }
        let rows = maybe(ctx, ctx.loaders().project_reviews(), ProjectId(self.0.id))
            .await?
            .unwrap_or_default();
        let judges = many(
            ctx,
            ctx.loaders().memberships(),
            rows.iter().map(|r| MembershipId(r.judge_id)),
        )
        .await?;
        Ok(rows
            .into_iter()
            .filter_map(|row| {
                let judge_user = judges.get(&MembershipId(row.judge_id))?.user_id;
                (organizer || judge_user == user.id).then_some(Review { row, judge_user })
            })
            .collect())
    }
    /// The project's public thread, oldest first. Only submitted projects take comments.
    /// A comment an organizer hid keeps its place as a placeholder (`hidden: true`, `body:
    /// null`) for everyone but the event's organizers and its author, so `totalCount`
    /// counts it too.
    #[graphql(complexity = "cost::page(first, child_complexity)")]
    async fn comments(
        &self,
        ctx: &Context<'_>,
        #[graphql(desc = "Page size: 20 if omitted, at most the page limit (100 by default).")]
        first: Option<i32>,
        #[graphql(desc = "Start after this cursor (an edge's `cursor`); omit for the first page.")]
        after: Option<String>,
    ) -> async_graphql::Result<Page<Comment>> {
        page(
            ctx,
            comment::Entity::find().filter(comment::Column::ProjectId.eq(self.0.id)),
            comment::Column::Id,
            |c| c.id,
            first,
            after,
            Comment,
        )
        .await
    }
    /// The judges' comments on this project, without names: for the project's team once
    /// results are published, if the event enables it.
    #[graphql(complexity = "cost::short_list(child_complexity)")]
    async fn feedback(&self, ctx: &Context<'_>) -> async_graphql::Result<Vec<String>> {
        let Some(e) = maybe(ctx, ctx.loaders().events(), EventId(self.0.event_id)).await? else {
            return Ok(vec![]);
        };
        let published = maybe(ctx, ctx.loaders().latest_publication(), EventId(e.id))
            .await?
            .is_some();
        if !(e.comments_to_teams && published) {
            return Ok(vec![]);
        }
        let rows = maybe(ctx, ctx.loaders().project_reviews(), ProjectId(self.0.id))
            .await?
            .unwrap_or_default();
        let mut comments: Vec<String> = rows
            .into_iter()
            .filter(|r| r.submitted)
            .map(|r| r.comment)
            .filter(|c| !c.trim().is_empty())
            .collect();
        // Sorted, so the order does not hint at who wrote what.
        comments.sort();
        Ok(comments)
    }
}

/// A likely duplicate Verdict suggests to the organizers: `project` looks like `of`, the
/// earlier one. Mark it with `markDuplicate(id, of)`.
pub struct DuplicateSuggestion(pub crate::domain::moderation::Suggestion);

/// A likely duplicate Verdict suggests to the organizers: `project` looks like `of`, the
/// earlier one. Mark it with `markDuplicate(id, of)`.
#[Object(guard = "FieldGuard::new(\"DuplicateSuggestion\", Scope::event(self.0.project.event_id))")]
impl DuplicateSuggestion {
    /// The later project, the likely duplicate.
    async fn project(&self) -> Project {
        Project(self.0.project.clone())
    }
    /// The earlier project it looks like.
    async fn of(&self) -> Project {
        Project(self.0.of.clone())
    }
    /// `same_repository`, or `similar_text` (title and summary nearly the same).
    async fn reason(&self) -> &str {
        self.0.reason
    }
    /// 1 for the same repository; otherwise how alike title and summary are (0 to 1).
    async fn similarity(&self) -> f64 {
        self.0.similarity
    }
}
