//! The mutation root. Each resolver opens one write transaction, calls one domain function
//! (which checks, writes and appends exactly one audit entry), commits, and only then
//! publishes to subscribers.

use async_graphql::{Context, ID, InputObject, Json, MergedObject, Object};
use chrono::{DateTime, Utc};
use sea_orm::{DatabaseTransaction, EntityTrait};
use serde::Serialize;
use serde_json::json;

use super::bus::BusEvent;
use super::context::{CtxExt, ResultExt};
use super::objects::{
    ApiToken, CreatedApiToken, Event, ImportReport, Membership, Project, Session, Team, Track,
};
use super::policy::{FieldGuard, Scope};
use crate::domain::accounts::{self, Credential};
use crate::domain::events::{self, EventFields};
use crate::domain::idempotency::{self, Key};
use crate::domain::projects::{self, ProjectFields};
use crate::domain::{Actor, Role, event_by_slug, import, teams};
use crate::error::AppError;

pub const COOKIE: &str = "verdict_session";

pub(super) async fn begin(ctx: &Context<'_>) -> async_graphql::Result<DatabaseTransaction> {
    ctx.db().write().await.gql(ctx)
}

pub(super) async fn commit(
    ctx: &Context<'_>,
    txn: DatabaseTransaction,
) -> async_graphql::Result<()> {
    txn.commit().await.gql(ctx)?;
    ctx.rc().refresh().await;
    Ok(())
}

/// The public id an earlier identical request produced, when this one is a retry.
pub(super) async fn replay(
    ctx: &Context<'_>,
    txn: &DatabaseTransaction,
    actor: &Actor,
    key: &Option<Key>,
) -> async_graphql::Result<Option<String>> {
    match key {
        Some(k) => idempotency::replay(txn, actor, k).await.gql(ctx),
        None => Ok(None),
    }
}

pub(super) async fn remember(
    ctx: &Context<'_>,
    txn: &DatabaseTransaction,
    actor: &Actor,
    key: &Option<Key>,
    id: &str,
) -> async_graphql::Result<()> {
    match key {
        Some(k) => idempotency::record(txn, actor, k, id).await.gql(ctx),
        None => Ok(()),
    }
}

fn session_cookie(ctx: &Context<'_>, token: &str, max_age: i64) -> String {
    let secure = if ctx.services().tls_cookies {
        "; Secure"
    } else {
        ""
    };
    format!("{COOKIE}={token}; Path=/; HttpOnly; SameSite=Strict; Max-Age={max_age}{secure}")
}

pub(super) async fn event_of(
    ctx: &Context<'_>,
    slug: &str,
) -> async_graphql::Result<entity::event::Model> {
    event_by_slug(&ctx.db().conn, slug).await.gql(ctx)
}

/// Input of `createEvent`.
#[derive(InputObject, Serialize)]
pub struct CreateEventInput {
    /// URL-safe: lower-case letters, digits and dashes.
    pub slug: String,
    pub name: String,
    /// Defaults to `evt_<slug>`.
    pub external_id: Option<String>,
    pub submissions_open: DateTime<Utc>,
    pub submissions_close: DateTime<Utc>,
    pub judging_open: Option<DateTime<Utc>>,
    pub judging_close: Option<DateTime<Utc>>,
    pub voting_open: Option<DateTime<Utc>>,
    pub voting_close: Option<DateTime<Utc>>,
    /// Defaults to 3.
    pub reviews_per_project: Option<i32>,
    /// Defaults to 5.
    pub max_team_size: Option<i32>,
}

/// Input of `updateEvent`: every field is optional; absent fields stay as they are.
#[derive(InputObject, Serialize)]
pub struct UpdateEventInput {
    pub slug: Option<String>,
    pub name: Option<String>,
    pub submissions_open: Option<DateTime<Utc>>,
    pub submissions_close: Option<DateTime<Utc>>,
    pub judging_open: Option<DateTime<Utc>>,
    pub judging_close: Option<DateTime<Utc>>,
    pub voting_open: Option<DateTime<Utc>>,
    pub voting_close: Option<DateTime<Utc>>,
    pub reviews_per_project: Option<i32>,
    pub max_team_size: Option<i32>,
    /// Let teams read the (anonymous) comments on their project once results are published.
    pub comments_to_teams: Option<bool>,
}

/// Project content. `createProject` needs `title` and `track`; `updateProject` takes any
/// subset.
#[derive(InputObject, Serialize, Clone)]
pub struct ProjectInput {
    /// At most 200 characters.
    pub title: Option<String>,
    /// At most 200 characters.
    pub tagline: Option<String>,
    /// At most 2,000 characters.
    pub summary: Option<String>,
    /// At most 20,000 characters.
    pub description: Option<String>,
    /// An http(s) URL.
    pub repo_url: Option<String>,
    /// An http(s) URL.
    pub demo_url: Option<String>,
    /// At most 10 tags of at most 32 characters.
    pub tags: Option<Vec<String>>,
    /// A track of the same event (id or external id).
    pub track: Option<ID>,
}

impl From<ProjectInput> for ProjectFields {
    fn from(i: ProjectInput) -> Self {
        ProjectFields {
            title: i.title,
            tagline: i.tagline,
            summary: i.summary,
            description: i.description,
            repo_url: i.repo_url,
            demo_url: i.demo_url,
            tags: i.tags,
            track: i.track.map(|t| t.0),
        }
    }
}

#[derive(MergedObject, Default)]
pub struct Mutation(
    AccountMutation,
    EventMutation,
    ProjectMutation,
    super::judging_mutation::JudgingMutation,
);

#[derive(Default)]
pub struct AccountMutation;

#[Object(guard = "FieldGuard::new(\"Mutation\", Scope::none())")]
impl AccountMutation {
    /// Creates an account and signs in. Also sets the web client's session cookie.
    async fn sign_up(
        &self,
        ctx: &Context<'_>,
        email: String,
        password: String,
        display_name: String,
    ) -> async_graphql::Result<Session> {
        let txn = begin(ctx).await?;
        let (user, token) = accounts::sign_up(&txn, &email, &password, &display_name)
            .await
            .gql(ctx)?;
        commit(ctx, txn).await?;
        ctx.append_http_header(
            "set-cookie",
            session_cookie(ctx, &token, accounts::SESSION_DAYS * 86_400),
        );
        Ok(Session { token, user })
    }

    /// Signs in. Throttled per email and per client address.
    async fn log_in(
        &self,
        ctx: &Context<'_>,
        email: String,
        password: String,
    ) -> async_graphql::Result<Session> {
        let limit = ctx.services().limits.login_attempts;
        let (user, token) = accounts::log_in(ctx.db(), &email, &password, &ctx.rc().client, limit)
            .await
            .gql(ctx)?;
        ctx.append_http_header(
            "set-cookie",
            session_cookie(ctx, &token, accounts::SESSION_DAYS * 86_400),
        );
        Ok(Session { token, user })
    }

    /// Ends the current session (bearer or cookie) and clears the cookie.
    async fn log_out(&self, ctx: &Context<'_>) -> async_graphql::Result<bool> {
        let actor = ctx.actor()?;
        let Some((_, Credential::Session { id })) = ctx.rc().caller.clone() else {
            return Err(ctx.err(AppError::conflict(
                "this request uses an API token; revoke it with revokeApiToken",
            )));
        };
        let txn = begin(ctx).await?;
        accounts::log_out(&txn, &actor, id).await.gql(ctx)?;
        commit(ctx, txn).await?;
        ctx.append_http_header("set-cookie", session_cookie(ctx, "", 0));
        Ok(true)
    }

    /// Mints a personal API token for scripts; the secret is returned once.
    async fn create_api_token(
        &self,
        ctx: &Context<'_>,
        label: String,
    ) -> async_graphql::Result<CreatedApiToken> {
        let actor = ctx.actor()?;
        let txn = begin(ctx).await?;
        let (api_token, token) = accounts::create_api_token(&txn, &actor, &label)
            .await
            .gql(ctx)?;
        commit(ctx, txn).await?;
        Ok(CreatedApiToken { token, api_token })
    }

    /// Revokes one of the caller's API tokens.
    async fn revoke_api_token(&self, ctx: &Context<'_>, id: ID) -> async_graphql::Result<ApiToken> {
        let actor = ctx.actor()?;
        let txn = begin(ctx).await?;
        let t = accounts::revoke_api_token(&txn, &actor, &id)
            .await
            .gql(ctx)?;
        commit(ctx, txn).await?;
        Ok(ApiToken(t))
    }
}

#[derive(Default)]
pub struct EventMutation;

#[Object(guard = "FieldGuard::new(\"Mutation\", Scope::none())")]
impl EventMutation {
    /// Creates an event (site admins); the creator becomes its first organizer.
    async fn create_event(
        &self,
        ctx: &Context<'_>,
        input: CreateEventInput,
        idempotency_key: Option<String>,
    ) -> async_graphql::Result<Event> {
        let actor = ctx.actor()?;
        let key = Key::new(idempotency_key, "createEvent", &json!(input)).gql(ctx)?;
        let txn = begin(ctx).await?;
        if let Some(id) = replay(ctx, &txn, &actor, &key).await? {
            return load_event(ctx, &id).await;
        }
        let f = EventFields {
            slug: Some(input.slug),
            name: Some(input.name),
            external_id: input.external_id,
            submissions_open: Some(input.submissions_open),
            submissions_close: Some(input.submissions_close),
            judging_open: Some(input.judging_open),
            judging_close: Some(input.judging_close),
            voting_open: Some(input.voting_open),
            voting_close: Some(input.voting_close),
            reviews_per_project: input.reviews_per_project,
            max_team_size: input.max_team_size,
            comments_to_teams: None,
        };
        let e = events::create_event(&txn, &actor, f).await.gql(ctx)?;
        remember(ctx, &txn, &actor, &key, &e.public_id).await?;
        commit(ctx, txn).await?;
        Ok(Event(e))
    }

    /// Changes an event's settings (organizers).
    async fn update_event(
        &self,
        ctx: &Context<'_>,
        event: String,
        input: UpdateEventInput,
        idempotency_key: Option<String>,
    ) -> async_graphql::Result<Event> {
        let actor = ctx.actor()?;
        let key = Key::new(
            idempotency_key,
            "updateEvent",
            &json!({ "event": event, "input": input }),
        )
        .gql(ctx)?;
        let e = event_of(ctx, &event).await?;
        let txn = begin(ctx).await?;
        if let Some(id) = replay(ctx, &txn, &actor, &key).await? {
            return load_event(ctx, &id).await;
        }
        let f = EventFields {
            slug: input.slug,
            name: input.name,
            external_id: None,
            submissions_open: input.submissions_open,
            submissions_close: input.submissions_close,
            judging_open: input.judging_open.map(Some),
            judging_close: input.judging_close.map(Some),
            voting_open: input.voting_open.map(Some),
            voting_close: input.voting_close.map(Some),
            reviews_per_project: input.reviews_per_project,
            max_team_size: input.max_team_size,
            comments_to_teams: input.comments_to_teams,
        };
        let e = events::update_event(&txn, &actor, e, f).await.gql(ctx)?;
        remember(ctx, &txn, &actor, &key, &e.public_id).await?;
        commit(ctx, txn).await?;
        Ok(Event(e))
    }

    /// Gives a person a role in the event (organizers). The person needs an account.
    #[allow(clippy::too_many_arguments)]
    async fn grant_role(
        &self,
        ctx: &Context<'_>,
        event: String,
        email: String,
        role: Role,
        external_id: Option<String>,
        tracks: Option<Vec<ID>>,
        idempotency_key: Option<String>,
    ) -> async_graphql::Result<Membership> {
        let actor = ctx.actor()?;
        let tracks: Vec<String> = tracks
            .unwrap_or_default()
            .into_iter()
            .map(|t| t.0)
            .collect();
        let key = Key::new(
            idempotency_key,
            "grantRole",
            &json!({ "event": event, "email": email, "role": role.as_str(), "externalId": external_id, "tracks": tracks }),
        )
        .gql(ctx)?;
        let e = event_of(ctx, &event).await?;
        let txn = begin(ctx).await?;
        if let Some(id) = replay(ctx, &txn, &actor, &key).await? {
            return load_membership(ctx, &id).await;
        }
        let m = events::grant_role(&txn, &actor, &e, &email, role, external_id, tracks)
            .await
            .gql(ctx)?;
        remember(ctx, &txn, &actor, &key, &m.public_id).await?;
        commit(ctx, txn).await?;
        Ok(Membership(m))
    }

    /// Takes a role away (organizers). The last organizer cannot be removed.
    async fn revoke_role(
        &self,
        ctx: &Context<'_>,
        event: String,
        email: String,
        role: Role,
        idempotency_key: Option<String>,
    ) -> async_graphql::Result<bool> {
        let actor = ctx.actor()?;
        let key = Key::new(
            idempotency_key,
            "revokeRole",
            &json!({ "event": event, "email": email, "role": role.as_str() }),
        )
        .gql(ctx)?;
        let e = event_of(ctx, &event).await?;
        let txn = begin(ctx).await?;
        if replay(ctx, &txn, &actor, &key).await?.is_some() {
            return Ok(true);
        }
        events::revoke_role(&txn, &actor, &e, &email, role)
            .await
            .gql(ctx)?;
        remember(ctx, &txn, &actor, &key, "").await?;
        commit(ctx, txn).await?;
        Ok(true)
    }

    /// Registers the caller as a participant of the event.
    async fn register_for_event(
        &self,
        ctx: &Context<'_>,
        event: String,
    ) -> async_graphql::Result<Membership> {
        let actor = ctx.actor()?;
        let e = event_of(ctx, &event).await?;
        let txn = begin(ctx).await?;
        let m = events::register(&txn, &actor, &e).await.gql(ctx)?;
        commit(ctx, txn).await?;
        Ok(Membership(m))
    }

    /// Adds a track to the event (organizers).
    async fn create_track(
        &self,
        ctx: &Context<'_>,
        event: String,
        name: String,
        external_id: Option<String>,
        idempotency_key: Option<String>,
    ) -> async_graphql::Result<Track> {
        let actor = ctx.actor()?;
        let key = Key::new(
            idempotency_key,
            "createTrack",
            &json!({ "event": event, "name": name, "externalId": external_id }),
        )
        .gql(ctx)?;
        let e = event_of(ctx, &event).await?;
        let txn = begin(ctx).await?;
        if let Some(id) = replay(ctx, &txn, &actor, &key).await? {
            let t = crate::domain::find_track(&txn, &id, None)
                .await
                .gql(ctx)?
                .ok_or_else(|| ctx.err(AppError::NotFound("track")))?;
            return Ok(Track(t));
        }
        let t = events::create_track(&txn, &actor, &e, &name, external_id)
            .await
            .gql(ctx)?;
        remember(ctx, &txn, &actor, &key, &t.public_id).await?;
        commit(ctx, txn).await?;
        Ok(Track(t))
    }

    /// Creates a team. A participant creates it and joins it; an organizer creates it empty.
    async fn create_team(
        &self,
        ctx: &Context<'_>,
        event: String,
        name: String,
        external_id: Option<String>,
    ) -> async_graphql::Result<Team> {
        let actor = ctx.actor()?;
        let e = event_of(ctx, &event).await?;
        let txn = begin(ctx).await?;
        let t = teams::create_team(&txn, &actor, &e, &name, external_id)
            .await
            .gql(ctx)?;
        commit(ctx, txn).await?;
        Ok(Team(t))
    }

    /// Joins the team whose invite code this is (registered participants; one team per
    /// event; a full team refuses with CONFLICT).
    async fn join_team(
        &self,
        ctx: &Context<'_>,
        invite_code: String,
    ) -> async_graphql::Result<Team> {
        let actor = ctx.actor()?;
        let txn = begin(ctx).await?;
        let t = teams::join_team(&txn, &actor, &invite_code)
            .await
            .gql(ctx)?;
        commit(ctx, txn).await?;
        Ok(Team(t))
    }

    /// Puts a person on a team (organizers).
    async fn add_team_member(
        &self,
        ctx: &Context<'_>,
        team: ID,
        email: String,
    ) -> async_graphql::Result<Team> {
        let actor = ctx.actor()?;
        let txn = begin(ctx).await?;
        let t = crate::domain::find_team(&txn, &team, None)
            .await
            .gql(ctx)?
            .ok_or_else(|| ctx.err(AppError::NotFound("team")))?;
        let t = teams::add_team_member(&txn, &actor, &t, &email)
            .await
            .gql(ctx)?;
        commit(ctx, txn).await?;
        Ok(Team(t))
    }

    /// Imports an event fixture (`verdict.event.v1`) in one transaction (site admins).
    async fn import_event(
        &self,
        ctx: &Context<'_>,
        fixture: Json<serde_json::Value>,
    ) -> async_graphql::Result<ImportReport> {
        let actor = ctx.actor()?;
        let f = import::parse(fixture.0).gql(ctx)?;
        let txn = begin(ctx).await?;
        let (event, counts) = import::import(&txn, actor.public_id(), &f).await.gql(ctx)?;
        commit(ctx, txn).await?;
        Ok(ImportReport { event, counts })
    }
}

async fn load_event(ctx: &Context<'_>, public_id: &str) -> async_graphql::Result<Event> {
    use sea_orm::{ColumnTrait, QueryFilter};
    entity::event::Entity::find()
        .filter(entity::event::Column::PublicId.eq(public_id))
        .one(&ctx.db().conn)
        .await
        .gql(ctx)?
        .map(Event)
        .ok_or_else(|| ctx.err(AppError::NotFound("event")))
}

async fn load_membership(ctx: &Context<'_>, public_id: &str) -> async_graphql::Result<Membership> {
    use sea_orm::{ColumnTrait, QueryFilter};
    entity::membership::Entity::find()
        .filter(entity::membership::Column::PublicId.eq(public_id))
        .one(&ctx.db().conn)
        .await
        .gql(ctx)?
        .map(Membership)
        .ok_or_else(|| ctx.err(AppError::NotFound("membership")))
}

#[derive(Default)]
pub struct ProjectMutation;

#[Object(guard = "FieldGuard::new(\"Mutation\", Scope::none())")]
impl ProjectMutation {
    /// Drafts a project for the caller's team (inside the submission window).
    async fn create_project(
        &self,
        ctx: &Context<'_>,
        event: String,
        input: ProjectInput,
        idempotency_key: Option<String>,
    ) -> async_graphql::Result<Project> {
        let actor = ctx.actor()?;
        let key = Key::new(
            idempotency_key,
            "createProject",
            &json!({ "event": event, "input": input }),
        )
        .gql(ctx)?;
        let e = event_of(ctx, &event).await?;
        let txn = begin(ctx).await?;
        if let Some(id) = replay(ctx, &txn, &actor, &key).await? {
            let p = crate::domain::find_project(&txn, &id, None)
                .await
                .gql(ctx)?
                .ok_or_else(|| ctx.err(AppError::NotFound("project")))?;
            return Ok(Project(p));
        }
        let p = projects::create_project(&txn, &actor, &e, input.into())
            .await
            .gql(ctx)?;
        remember(ctx, &txn, &actor, &key, &p.public_id).await?;
        commit(ctx, txn).await?;
        Ok(Project(p))
    }

    /// Edits a project (its team, inside the submission window).
    async fn update_project(
        &self,
        ctx: &Context<'_>,
        id: ID,
        input: ProjectInput,
    ) -> async_graphql::Result<Project> {
        let actor = ctx.actor()?;
        let txn = begin(ctx).await?;
        let p = projects::update_project(&txn, &actor, &id, input.into())
            .await
            .gql(ctx)?;
        commit(ctx, txn).await?;
        Ok(Project(p))
    }

    /// Submits a project (its team, before the deadline).
    async fn submit_project(&self, ctx: &Context<'_>, id: ID) -> async_graphql::Result<Project> {
        let actor = ctx.actor()?;
        let txn = begin(ctx).await?;
        let p = projects::submit_project(&txn, &actor, &id).await.gql(ctx)?;
        commit(ctx, txn).await?;
        ctx.services().bus.publish(BusEvent::ProjectSubmitted {
            event_id: p.event_id,
            project_id: p.id,
        });
        Ok(Project(p))
    }

    /// Withdraws a submitted project (its team, before the deadline). Nothing is deleted.
    async fn withdraw_project(&self, ctx: &Context<'_>, id: ID) -> async_graphql::Result<Project> {
        let actor = ctx.actor()?;
        let txn = begin(ctx).await?;
        let p = projects::withdraw_project(&txn, &actor, &id)
            .await
            .gql(ctx)?;
        commit(ctx, txn).await?;
        Ok(Project(p))
    }
}
