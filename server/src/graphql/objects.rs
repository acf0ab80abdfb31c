//! The output types. Each wraps a database row with the [`Scope`] its guard checks; none
//! derives a GraphQL type on a database model.

use async_graphql::{Context, Enum, ID, Json, Object};
use chrono::{DateTime, Utc};
use std::collections::HashMap;

use async_graphql::SimpleObject;
use entity::{
    api_token, assignment, audit_event, calibration_run, event, membership, project, recusal,
    result_publication, review, team, track, user,
};
use sea_orm::{ColumnTrait, EntityTrait, QueryFilter, QueryOrder};

use super::connection::{Page, page};
use super::context::{CtxExt, ResultExt};
use super::judging::{
    Assignment, CalibrationRun, Criterion, ExportKind, JudgingProgress, Leaderboard,
    PublishedResults, Recusal, ResultPublication, Review,
};
use super::loaders::one;
use super::policy::{FieldGuard, Rule, Scope};
use crate::domain::{Role, json_ids, json_list};
use crate::error::AppError;

fn loader_err(ctx: &Context<'_>, e: std::sync::Arc<sea_orm::DbErr>) -> async_graphql::Error {
    ctx.err(AppError::Internal(e.to_string()))
}

/// Where a project is in its life.
#[derive(Enum, Copy, Clone, Debug, PartialEq, Eq)]
pub enum ProjectStatus {
    /// Being written; visible to its team and the organizers.
    Draft,
    /// Submitted for judging; public.
    Submitted,
    /// Taken back by its team; visible to its team and the organizers.
    Withdrawn,
}

impl ProjectStatus {
    fn of(s: &str) -> ProjectStatus {
        match s {
            "submitted" => ProjectStatus::Submitted,
            "withdrawn" => ProjectStatus::Withdrawn,
            _ => ProjectStatus::Draft,
        }
    }
}

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
    async fn slug(&self) -> &str {
        &self.0.slug
    }
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
    async fn judging_open(&self) -> Option<DateTime<Utc>> {
        self.0.judging_open
    }
    async fn judging_close(&self) -> Option<DateTime<Utc>> {
        self.0.judging_close
    }
    async fn voting_open(&self) -> Option<DateTime<Utc>> {
        self.0.voting_open
    }
    async fn voting_close(&self) -> Option<DateTime<Utc>> {
        self.0.voting_close
    }
    /// How many reviews each submitted project should get.
    async fn reviews_per_project(&self) -> i32 {
        self.0.reviews_per_project
    }
    async fn max_team_size(&self) -> i32 {
        self.0.max_team_size
    }
    /// The event's tracks.
    async fn tracks(&self, ctx: &Context<'_>) -> async_graphql::Result<Vec<Track>> {
        let rows = track::Entity::find()
            .filter(track::Column::EventId.eq(self.0.id))
            .order_by_asc(track::Column::Id)
            .all(&ctx.db().conn)
            .await
            .gql(ctx)?;
        Ok(rows.into_iter().map(Track).collect())
    }
    /// The event's teams.
    #[graphql(complexity = "first.unwrap_or(20).max(0) as usize * child_complexity")]
    async fn teams(
        &self,
        ctx: &Context<'_>,
        first: Option<i32>,
        after: Option<String>,
    ) -> async_graphql::Result<Page<Team>> {
        let q = team::Entity::find().filter(team::Column::EventId.eq(self.0.id));
        page(ctx, q, team::Column::Id, |t| t.id, first, after, Team).await
    }
    /// The public gallery: SUBMITTED projects only, optionally of one track.
    #[graphql(complexity = "first.unwrap_or(20).max(0) as usize * child_complexity")]
    async fn projects(
        &self,
        ctx: &Context<'_>,
        track: Option<ID>,
        first: Option<i32>,
        after: Option<String>,
    ) -> async_graphql::Result<Page<Project>> {
        let mut q = project::Entity::find()
            .filter(project::Column::EventId.eq(self.0.id))
            .filter(project::Column::Status.eq("submitted"));
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
    async fn my_team(&self, ctx: &Context<'_>) -> async_graphql::Result<Option<Team>> {
        let access = ctx.rc().access(ctx.db()).await.gql(ctx)?;
        let Some(id) = access.team_in(self.0.id) else {
            return Ok(None);
        };
        let t = ctx
            .loaders()
            .teams
            .load_one(id)
            .await
            .map_err(|e| loader_err(ctx, e))?;
        Ok(t.map(Team))
    }
    /// The caller's roles in this event.
    async fn my_roles(&self, ctx: &Context<'_>) -> async_graphql::Result<Vec<Role>> {
        let access = ctx.rc().access(ctx.db()).await.gql(ctx)?;
        Ok([Role::Participant, Role::Judge, Role::Organizer]
            .into_iter()
            .filter(|r| access.has(self.0.id, *r))
            .collect())
    }
    /// Everyone holding a role here (organizers only).
    #[graphql(complexity = "first.unwrap_or(20).max(0) as usize * child_complexity")]
    async fn members(
        &self,
        ctx: &Context<'_>,
        role: Option<Role>,
        first: Option<i32>,
        after: Option<String>,
    ) -> async_graphql::Result<Page<Membership>> {
        let mut q = membership::Entity::find().filter(membership::Column::EventId.eq(self.0.id));
        if let Some(r) = role {
            q = q.filter(membership::Column::Role.eq(r.as_str()));
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
    #[graphql(complexity = "first.unwrap_or(20).max(0) as usize * child_complexity")]
    async fn audit_log(
        &self,
        ctx: &Context<'_>,
        first: Option<i32>,
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
    /// The rubric, in order.
    async fn rubric(&self, ctx: &Context<'_>) -> async_graphql::Result<Vec<Criterion>> {
        let rows = crate::domain::judges::rubric(&ctx.db().conn, self.0.id)
            .await
            .gql(ctx)?;
        Ok(rows.into_iter().map(Criterion).collect())
    }
    /// The caller's own assignments as a judge here, in the caller's own order.
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
    async fn my_progress(&self, ctx: &Context<'_>) -> async_graphql::Result<AssignmentProgress> {
        let actor = ctx.actor()?;
        let rows = crate::domain::judging::my_assignments(&ctx.db().conn, actor.user.id, self.0.id)
            .await
            .gql(ctx)?;
        let active: Vec<_> = rows.iter().filter(|a| a.status != "recused").collect();
        Ok(AssignmentProgress {
            done: active.iter().filter(|a| a.status == "done").count() as i32,
            total: active.len() as i32,
        })
    }
    /// The next pending project in the caller's queue. Each judge has their own order, so
    /// judges do not all start at the same table.
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
            .find(|a| a.status == "pending")
            .map(|row| Assignment {
                row,
                judge_user: actor.user.id,
            }))
    }
    /// Every assignment (organizers only).
    #[graphql(complexity = "first.unwrap_or(20).max(0) as usize * child_complexity")]
    async fn assignments(
        &self,
        ctx: &Context<'_>,
        first: Option<i32>,
        after: Option<String>,
    ) -> async_graphql::Result<Page<Assignment>> {
        let judges: HashMap<i64, i64> = membership::Entity::find()
            .filter(membership::Column::EventId.eq(self.0.id))
            .filter(membership::Column::Role.eq("judge"))
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
    async fn judging_progress(&self, ctx: &Context<'_>) -> async_graphql::Result<JudgingProgress> {
        JudgingProgress::load(&ctx.db().conn, &self.0)
            .await
            .gql(ctx)
    }
    /// The live, unsigned calibrated ranking on current data, with rank intervals and judge
    /// diagnostics (organizers only).
    async fn leaderboard(&self, ctx: &Context<'_>) -> async_graphql::Result<Option<Leaderboard>> {
        Ok(Some(
            Leaderboard::load(&ctx.db().conn, &self.0).await.gql(ctx)?,
        ))
    }
    /// Every calibration run, newest first (organizers only).
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
    /// The latest published results: null until the organizers publish.
    async fn results(&self, ctx: &Context<'_>) -> async_graphql::Result<Option<PublishedResults>> {
        Ok(latest_publication(ctx, self.0.id)
            .await?
            .map(|p| p.results_of()))
    }
    /// Every publication, oldest first.
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
        let runs: HashMap<i64, calibration_run::Model> = calibration_run::Entity::find()
            .filter(calibration_run::Column::Id.is_in(rows.iter().map(|r| r.run_id)))
            .all(db)
            .await
            .gql(ctx)?
            .into_iter()
            .map(|r| (r.id, r))
            .collect();
        Ok(rows
            .into_iter()
            .filter_map(|row| {
                runs.get(&row.run_id)
                    .cloned()
                    .map(|run| ResultPublication { row, run })
            })
            .collect())
    }
    /// A CSV export (organizers only). Each export is recorded in the audit log.
    async fn export(&self, ctx: &Context<'_>, kind: ExportKind) -> async_graphql::Result<String> {
        let actor = ctx.actor()?;
        let txn = ctx.db().write().await.gql(ctx)?;
        let text = crate::domain::export::export(&txn, &actor, &self.0, kind.into())
            .await
            .gql(ctx)?;
        txn.commit().await.gql(ctx)?;
        Ok(text)
    }
}

/// A track (category) of an event.
pub struct Track(pub track::Model);

/// A track (category) of an event.
#[Object(guard = "FieldGuard::new(\"Track\", Scope::event(self.0.event_id))")]
impl Track {
    async fn id(&self) -> ID {
        ID(self.0.public_id.clone())
    }
    async fn external_id(&self) -> Option<&str> {
        Some(&self.0.external_id)
    }
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
    async fn id(&self) -> ID {
        ID(self.0.public_id.clone())
    }
    async fn external_id(&self) -> Option<&str> {
        Some(&self.0.external_id)
    }
    async fn name(&self) -> &str {
        &self.0.name
    }
    /// The people on the team (members of the event can see them).
    async fn members(&self, ctx: &Context<'_>) -> async_graphql::Result<Vec<User>> {
        let users = ctx
            .loaders()
            .team_members
            .load_one(self.0.id)
            .await
            .map_err(|e| loader_err(ctx, e))?;
        Ok(users.unwrap_or_default().into_iter().map(User).collect())
    }
    /// The team's projects: submitted ones for everyone, drafts and withdrawn ones for the
    /// team itself and the organizers.
    async fn projects(&self, ctx: &Context<'_>) -> async_graphql::Result<Vec<Project>> {
        let rows = ctx
            .loaders()
            .team_projects
            .load_one(self.0.id)
            .await
            .map_err(|e| loader_err(ctx, e))?;
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
        let allowed = super::policy::allowed(ctx, Rule::OwnTeam, &self.scope())
            .await
            .gql(ctx)?;
        Ok(allowed.then_some(self.0.invite_code.as_str()))
    }
}

/// A project submitted (or being written) for an event.
pub struct Project(pub project::Model);

impl Project {
    fn scope(&self) -> Scope {
        Scope {
            event: Some(self.0.event_id),
            team: Some(self.0.team_id),
            public: self.0.status == "submitted",
            user: None,
        }
    }
}

/// A project submitted (or being written) for an event.
#[Object(guard = "FieldGuard::new(\"Project\", self.scope())")]
impl Project {
    async fn id(&self) -> ID {
        ID(self.0.public_id.clone())
    }
    async fn external_id(&self) -> Option<&str> {
        Some(&self.0.external_id)
    }
    async fn title(&self) -> &str {
        &self.0.title
    }
    async fn tagline(&self) -> &str {
        &self.0.tagline
    }
    async fn summary(&self) -> &str {
        &self.0.summary
    }
    async fn description(&self) -> &str {
        &self.0.description
    }
    async fn repo_url(&self) -> Option<&str> {
        Some(self.0.repo_url.as_str()).filter(|s| !s.is_empty())
    }
    async fn demo_url(&self) -> Option<&str> {
        Some(self.0.demo_url.as_str()).filter(|s| !s.is_empty())
    }
    async fn tags(&self) -> Vec<String> {
        json_list(&self.0.tags)
    }
    async fn status(&self) -> ProjectStatus {
        ProjectStatus::of(&self.0.status)
    }
    /// When it was last submitted: set for SUBMITTED projects, kept for WITHDRAWN ones,
    /// null for drafts.
    async fn submitted_at(&self) -> Option<DateTime<Utc>> {
        self.0.submitted_at
    }
    async fn track(&self, ctx: &Context<'_>) -> async_graphql::Result<Track> {
        one(ctx, &ctx.loaders().tracks, self.0.track_id, "track")
            .await
            .map(Track)
    }
    async fn team(&self, ctx: &Context<'_>) -> async_graphql::Result<Team> {
        one(ctx, &ctx.loaders().teams, self.0.team_id, "team")
            .await
            .map(Team)
    }
    async fn event(&self, ctx: &Context<'_>) -> async_graphql::Result<Event> {
        one(ctx, &ctx.loaders().events, self.0.event_id, "event")
            .await
            .map(Event)
    }
    async fn created_at(&self) -> DateTime<Utc> {
        self.0.created_at
    }
    async fn updated_at(&self) -> DateTime<Utc> {
        self.0.updated_at
    }
    /// Reviews of this project: organizers read all, a judge only their own, everyone
    /// else none.
    async fn reviews(&self, ctx: &Context<'_>) -> async_graphql::Result<Vec<Review>> {
        let Some(user) = ctx.rc().user() else {
            return Ok(vec![]);
        };
        let access = ctx.rc().access(ctx.db()).await.gql(ctx)?;
        let organizer = access.is_organizer(self.0.event_id);
        if !organizer && !access.has(self.0.event_id, Role::Judge) {
            return Ok(vec![]);
        }
        let db = &ctx.db().conn;
        let rows = review::Entity::find()
            .filter(review::Column::ProjectId.eq(self.0.id))
            .order_by_asc(review::Column::Id)
            .all(db)
            .await
            .gql(ctx)?;
        let judges: HashMap<i64, i64> = membership::Entity::find()
            .filter(membership::Column::Id.is_in(rows.iter().map(|r| r.judge_id)))
            .all(db)
            .await
            .gql(ctx)?
            .into_iter()
            .map(|m| (m.id, m.user_id))
            .collect();
        Ok(rows
            .into_iter()
            .filter_map(|row| {
                let judge_user = judges.get(&row.judge_id).copied()?;
                (organizer || judge_user == user.id).then_some(Review { row, judge_user })
            })
            .collect())
    }
    /// The judges' comments on this project, without names: for the project's team once
    /// results are published, if the event enables it.
    async fn feedback(&self, ctx: &Context<'_>) -> async_graphql::Result<Vec<String>> {
        let db = &ctx.db().conn;
        let Some(e) = event::Entity::find_by_id(self.0.event_id)
            .one(db)
            .await
            .gql(ctx)?
        else {
            return Ok(vec![]);
        };
        let published = crate::domain::results::latest_publication(db, e.id)
            .await
            .gql(ctx)?
            .is_some();
        if !(e.comments_to_teams && published) {
            return Ok(vec![]);
        }
        let rows = review::Entity::find()
            .filter(review::Column::ProjectId.eq(self.0.id))
            .filter(review::Column::Submitted.eq(true))
            .all(db)
            .await
            .gql(ctx)?;
        let mut comments: Vec<String> = rows
            .into_iter()
            .map(|r| r.comment)
            .filter(|c| !c.trim().is_empty())
            .collect();
        // Sorted, so the order does not hint at who wrote what.
        comments.sort();
        Ok(comments)
    }
}

/// A person. Only their display name is public.
pub struct User(pub user::Model);

/// A person. Only their display name is public.
#[Object(
    guard = "FieldGuard::new(\"User\", Scope { user: Some(self.0.id), public: true, ..Scope::none() })"
)]
impl User {
    async fn id(&self) -> ID {
        ID(self.0.public_id.clone())
    }
    async fn display_name(&self) -> &str {
        &self.0.display_name
    }
    /// The person's email: null except for the person, site admins, and the organizers of an
    /// event the person takes part in.
    async fn email(&self, ctx: &Context<'_>) -> async_graphql::Result<Option<&str>> {
        let Some(caller) = ctx.rc().user() else {
            return Ok(None);
        };
        if caller.id == self.0.id || caller.is_site_admin {
            return Ok(Some(&self.0.email));
        }
        let access = ctx.rc().access(ctx.db()).await.gql(ctx)?;
        let events = ctx
            .loaders()
            .user_events
            .load_one(self.0.id)
            .await
            .map_err(|e| loader_err(ctx, e))?;
        let organizes = events
            .unwrap_or_default()
            .iter()
            .any(|e| access.is_organizer(*e));
        Ok(organizes.then_some(self.0.email.as_str()))
    }
    async fn is_site_admin(&self) -> bool {
        self.0.is_site_admin
    }
}

/// A person's role in one event.
pub struct Membership(pub membership::Model);

/// A person's role in one event.
#[Object(guard = "FieldGuard::new(\"Membership\", Scope::event(self.0.event_id))")]
impl Membership {
    async fn id(&self) -> ID {
        ID(self.0.public_id.clone())
    }
    /// The id a fixture gave this role (e.g. `jdg_01`).
    async fn external_id(&self) -> Option<&str> {
        self.0.external_id.as_deref()
    }
    async fn role(&self) -> Role {
        Role::parse(&self.0.role).unwrap_or(Role::Participant)
    }
    async fn event(&self, ctx: &Context<'_>) -> async_graphql::Result<Event> {
        one(ctx, &ctx.loaders().events, self.0.event_id, "event")
            .await
            .map(Event)
    }
    async fn user(&self, ctx: &Context<'_>) -> async_graphql::Result<User> {
        one(ctx, &ctx.loaders().users, self.0.user_id, "user")
            .await
            .map(User)
    }
    /// The member's email (organizers only).
    async fn email(&self, ctx: &Context<'_>) -> async_graphql::Result<String> {
        let u = ctx
            .loaders()
            .users
            .load_one(self.0.user_id)
            .await
            .map_err(|e| loader_err(ctx, e))?;
        Ok(u.map(|u| u.email).unwrap_or_default())
    }
    /// The tracks a judge covers; empty means every track.
    async fn tracks(&self, ctx: &Context<'_>) -> async_graphql::Result<Vec<Track>> {
        let ids = json_ids(&self.0.judge_tracks);
        let found = ctx
            .loaders()
            .tracks
            .load_many(ids.iter().copied())
            .await
            .map_err(|e| loader_err(ctx, e))?;
        Ok(ids
            .iter()
            .filter_map(|i| found.get(i).cloned())
            .map(Track)
            .collect())
    }
}

/// One link of the audit chain.
pub struct AuditEvent(pub audit_event::Model, pub i64);

/// One link of the audit chain.
#[Object(guard = "FieldGuard::new(\"AuditEvent\", Scope::event(self.1))")]
impl AuditEvent {
    /// Position in the chain, contiguous from 1.
    async fn seq(&self) -> i64 {
        self.0.seq
    }
    /// The exact timestamp string that was hashed.
    async fn occurred_at(&self) -> &str {
        &self.0.occurred_at
    }
    /// The acting user's id, or empty for the system.
    async fn actor(&self) -> &str {
        &self.0.actor
    }
    /// The event's external id.
    async fn event(&self) -> &str {
        &self.0.event
    }
    /// What happened, as `noun.verb_past`.
    async fn action(&self) -> &str {
        &self.0.action
    }
    async fn object_type(&self) -> &str {
        &self.0.object_type
    }
    async fn object_id(&self) -> &str {
        &self.0.object_id
    }
    /// The canonical JSON payload.
    async fn payload(&self) -> Json<serde_json::Value> {
        Json(serde_json::from_str(&self.0.payload).unwrap_or_default())
    }
    async fn prev_hash(&self) -> &str {
        &self.0.prev_hash
    }
    async fn row_hash(&self) -> &str {
        &self.0.row_hash
    }
}

/// The signed-in caller.
pub struct Viewer(pub user::Model);

/// The signed-in caller.
#[Object(guard = "FieldGuard::new(\"Viewer\", Scope { user: Some(self.0.id), ..Scope::none() })")]
impl Viewer {
    async fn user(&self) -> User {
        User(self.0.clone())
    }
    /// Every role the caller holds, across events.
    async fn memberships(&self, ctx: &Context<'_>) -> async_graphql::Result<Vec<Membership>> {
        let rows = membership::Entity::find()
            .filter(membership::Column::UserId.eq(self.0.id))
            .order_by_asc(membership::Column::Id)
            .all(&ctx.db().conn)
            .await
            .gql(ctx)?;
        Ok(rows.into_iter().map(Membership).collect())
    }
    /// The caller's personal API tokens (never the secret).
    async fn api_tokens(&self, ctx: &Context<'_>) -> async_graphql::Result<Vec<ApiToken>> {
        let rows = crate::domain::accounts::api_tokens(&ctx.db().conn, self.0.id)
            .await
            .gql(ctx)?;
        Ok(rows.into_iter().map(ApiToken).collect())
    }
}

/// A signed-in session: send `token` as `Authorization: Bearer <token>`.
pub struct Session {
    pub token: String,
    pub user: user::Model,
}

/// A signed-in session: send `token` as `Authorization: Bearer <token>`.
#[Object(
    guard = "FieldGuard::new(\"Session\", Scope { user: Some(self.user.id), public: true, ..Scope::none() })"
)]
impl Session {
    /// The bearer token; shown once.
    async fn token(&self) -> &str {
        &self.token
    }
    async fn user(&self) -> User {
        User(self.user.clone())
    }
}

/// A personal API token (its secret is never shown again).
pub struct ApiToken(pub api_token::Model);

/// A personal API token (its secret is never shown again).
#[Object(
    guard = "FieldGuard::new(\"ApiToken\", Scope { user: Some(self.0.user_id), ..Scope::none() })"
)]
impl ApiToken {
    async fn id(&self) -> ID {
        ID(self.0.public_id.clone())
    }
    async fn label(&self) -> &str {
        &self.0.label
    }
    /// The token's first characters, to recognize it.
    async fn prefix(&self) -> &str {
        &self.0.prefix
    }
    async fn created_at(&self) -> DateTime<Utc> {
        self.0.created_at
    }
    async fn last_used_at(&self) -> Option<DateTime<Utc>> {
        self.0.last_used_at
    }
    async fn revoked_at(&self) -> Option<DateTime<Utc>> {
        self.0.revoked_at
    }
}

/// A freshly minted API token with its secret, shown this once.
pub struct CreatedApiToken {
    pub token: String,
    pub api_token: api_token::Model,
}

/// A freshly minted API token with its secret, shown this once.
#[Object(
    guard = "FieldGuard::new(\"CreatedApiToken\", Scope { user: Some(self.api_token.user_id), ..Scope::none() })"
)]
impl CreatedApiToken {
    /// The raw token; store it now, it is not shown again.
    async fn token(&self) -> &str {
        &self.token
    }
    async fn api_token(&self) -> ApiToken {
        ApiToken(self.api_token.clone())
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

/// Access to the request's loaders.
pub trait LoadersExt {
    fn loaders(&self) -> &super::loaders::Loaders;
}

impl LoadersExt for Context<'_> {
    fn loaders(&self) -> &super::loaders::Loaders {
        // Every request's data carries its loaders (see `graphql::request_data`).
        self.data_unchecked::<super::loaders::Loaders>()
    }
}

/// A judge's progress through their own queue.
#[derive(SimpleObject)]
#[graphql(guard = "FieldGuard::new(\"AssignmentProgress\", Scope::none())")]
pub struct AssignmentProgress {
    pub done: i32,
    pub total: i32,
}

pub async fn latest_publication(
    ctx: &Context<'_>,
    event_id: i64,
) -> async_graphql::Result<Option<ResultPublication>> {
    let db = &ctx.db().conn;
    let Some(row) = crate::domain::results::latest_publication(db, event_id)
        .await
        .gql(ctx)?
    else {
        return Ok(None);
    };
    let run = calibration_run::Entity::find_by_id(row.run_id)
        .one(db)
        .await
        .gql(ctx)?;
    Ok(run.map(|run| ResultPublication { row, run }))
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
        }
    }
}
