//! People and their standing: a user, the signed-in viewer, sessions, API tokens, and the
//! memberships (roles) a user holds in events. Emails are masked field by field.

use async_graphql::{Context, Enum, ID, Object};
use chrono::{DateTime, Utc};
use entity::{api_token, membership, user};
use sea_orm::{ColumnTrait, EntityTrait, QueryFilter, QueryOrder, QueryTrait};

use super::event::{Event, Track};
use crate::domain::json_ids;
use crate::graphql::context::{CtxExt, ResultExt};
use crate::graphql::cost;
use crate::graphql::loaders::{EventId, LoadersExt, TrackId, UserId, many, maybe, one};
use crate::graphql::policy::{FieldGuard, Rule, Scope};

/// Who may read each field of the types in this file, collected by [`crate::graphql::policy`].
pub(crate) const POLICIES: &[(&str, Rule)] = &[
    ("Viewer.user", Rule::OwnUser),
    ("Viewer.memberships", Rule::OwnUser),
    ("Viewer.apiTokens", Rule::OwnUser),
    ("Viewer.myEvents", Rule::OwnUser),
    // A session exists only in the response to whoever just proved the password.
    ("Session.token", Rule::Public),
    ("Session.user", Rule::Public),
    ("ApiToken.id", Rule::OwnUser),
    ("ApiToken.label", Rule::OwnUser),
    ("ApiToken.prefix", Rule::OwnUser),
    ("ApiToken.createdAt", Rule::OwnUser),
    ("ApiToken.lastUsedAt", Rule::OwnUser),
    ("ApiToken.revokedAt", Rule::OwnUser),
    ("ApiToken.scope", Rule::OwnUser),
    ("ApiToken.expiresAt", Rule::OwnUser),
    ("CreatedApiToken.token", Rule::OwnUser),
    ("CreatedApiToken.apiToken", Rule::OwnUser),
    ("User.id", Rule::Public),
    ("User.displayName", Rule::Public),
    // Masked in the resolver: null unless self, a site admin, or an organizer of an event
    // the person takes part in.
    ("User.email", Rule::Public),
    // Masked like `email`: null for whoever may not read the email.
    ("User.emailConfirmed", Rule::Public),
    ("User.isSiteAdmin", Rule::Public),
    ("Membership.id", Rule::Member),
    ("Membership.externalId", Rule::Member),
    ("Membership.role", Rule::Member),
    ("Membership.event", Rule::Member),
    ("Membership.user", Rule::Member),
    ("Membership.email", Rule::SelfOrOrganizer),
    ("Membership.tracks", Rule::Member),
];

/// A person. Only their display name is public.
pub struct User(pub user::Model);

/// A person. Only their display name is public.
#[Object(
    guard = "FieldGuard::new(\"User\", Scope { user: Some(self.0.id), public: true, ..Scope::none() })"
)]
impl User {
    /// Opaque id.
    async fn id(&self) -> ID {
        ID(self.0.public_id.clone())
    }
    /// The name the person shows to others.
    async fn display_name(&self) -> &str {
        &self.0.display_name
    }
    /// Whether the person confirmed their email address (a link sent to it); null for
    /// whoever may not read `email`.
    async fn email_confirmed(&self, ctx: &Context<'_>) -> async_graphql::Result<Option<bool>> {
        Ok(self
            .email(ctx)
            .await?
            .map(|_| self.0.email_confirmed_at.is_some()))
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
        let events = maybe(ctx, ctx.loaders().user_events(), UserId(self.0.id)).await?;
        let organizes = events
            .unwrap_or_default()
            .iter()
            .any(|e| access.is_organizer(*e));
        Ok(organizes.then_some(self.0.email.as_str()))
    }
    /// Whether the person is a site administrator: one who creates and imports events and
    /// acts as an organizer of every event.
    async fn is_site_admin(&self) -> bool {
        self.0.is_site_admin
    }
}

/// A person's role in one event. Roles are per event; the only global role is site admin.
#[derive(Enum, Copy, Clone, Debug, PartialEq, Eq)]
#[graphql(remote = "membership::Role")]
pub enum Role {
    /// Takes part: creates or joins a team and works on its projects.
    Participant,
    /// Reviews and scores the projects assigned to them.
    Judge,
    /// Runs the event: its settings, rubric, judges, assignments, calibration and results.
    Organizer,
}

/// A person's role in one event.
pub struct Membership(pub membership::Model);

/// A person's role in one event.
#[Object(
    guard = "FieldGuard::new(\"Membership\", Scope { event: Some(self.0.event_id), user: Some(self.0.user_id), ..Scope::none() })"
)]
impl Membership {
    /// Opaque id.
    async fn id(&self) -> ID {
        ID(self.0.public_id.clone())
    }
    /// The id a fixture gave this role (e.g. `jdg_01`).
    async fn external_id(&self) -> Option<&str> {
        self.0.external_id.as_deref()
    }
    /// The role this membership grants.
    async fn role(&self) -> Role {
        self.0.role.into()
    }
    /// The event the role is held in.
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
    /// The person holding the role.
    async fn user(&self, ctx: &Context<'_>) -> async_graphql::Result<User> {
        one(ctx, ctx.loaders().users(), UserId(self.0.user_id), "user")
            .await
            .map(User)
    }
    /// The member's email: for the member themself and the event's organizers (FORBIDDEN
    /// for others).
    async fn email(&self, ctx: &Context<'_>) -> async_graphql::Result<String> {
        let u = maybe(ctx, ctx.loaders().users(), UserId(self.0.user_id)).await?;
        Ok(u.map(|u| u.email).unwrap_or_default())
    }
    /// A judge's live standing sign-in link and code (`issueJudgeSignIn`): when issued and
    /// last used; null when none is live or the role is not judge. The event's organizers.
    async fn standing_sign_in(
        &self,
        ctx: &Context<'_>,
    ) -> async_graphql::Result<Option<super::judge_sign_in::JudgeSignIn>> {
        super::judge_sign_in::standing_sign_in(ctx, &self.0).await
    }
    /// The tracks a judge covers; empty means every track.
    #[graphql(complexity = "cost::short_list(child_complexity)")]
    async fn tracks(&self, ctx: &Context<'_>) -> async_graphql::Result<Vec<Track>> {
        let ids = json_ids(&self.0.judge_tracks);
        let found = many(ctx, ctx.loaders().tracks(), ids.iter().map(|i| TrackId(*i))).await?;
        Ok(ids
            .iter()
            .filter_map(|i| found.get(&TrackId(*i)).cloned())
            .map(Track)
            .collect())
    }
}

/// The signed-in caller.
pub struct Viewer(pub user::Model);

/// The signed-in caller.
#[Object(guard = "FieldGuard::new(\"Viewer\", Scope { user: Some(self.0.id), ..Scope::none() })")]
impl Viewer {
    /// The caller as a user.
    async fn user(&self) -> User {
        User(self.0.clone())
    }
    /// Every role the caller holds, across events.
    #[graphql(complexity = "cost::short_list(child_complexity)")]
    async fn memberships(&self, ctx: &Context<'_>) -> async_graphql::Result<Vec<Membership>> {
        let rows = membership::Entity::find()
            .filter(membership::Column::UserId.eq(self.0.id))
            .apply_if(ctx.rc().judge_link(), |q, m| {
                q.filter(membership::Column::Id.eq(m))
            })
            .filter(membership::Column::EventId.not_in_subquery(crate::domain::archived_events()))
            .order_by_asc(membership::Column::Id)
            .all(&ctx.db().conn)
            .await
            .gql(ctx)?;
        Ok(rows.into_iter().map(Membership).collect())
    }
    /// The caller's events, each with their roles and what they have to do next there
    /// (a judge's queue, a team's drafts, an organizer's next setup step), in the order
    /// they joined them.
    #[graphql(complexity = "cost::short_list(child_complexity)")]
    async fn my_events(
        &self,
        ctx: &Context<'_>,
    ) -> async_graphql::Result<Vec<super::my_events::MyEvent>> {
        let now = crate::domain::clock(&ctx.db().conn).await.gql(ctx)?;
        let mut rows = crate::domain::my_events::my_events(&ctx.db().conn, self.0.id, now)
            .await
            .gql(ctx)?;
        if let Some(m) = ctx.rc().judge_link() {
            // A judge's link session sees the one event it judges, as its judge only.
            let judge = membership::Entity::find_by_id(m)
                .one(&ctx.db().conn)
                .await
                .gql(ctx)?;
            rows.retain(|r| judge.as_ref().is_some_and(|j| j.event_id == r.event.id));
            for r in &mut rows {
                r.roles = vec![membership::Role::Judge];
                (r.drafts, r.submitted, r.setup_step) = (None, None, None);
            }
        }
        Ok(rows
            .into_iter()
            .map(|row| super::my_events::MyEvent {
                user_id: self.0.id,
                row,
            })
            .collect())
    }
    /// The caller's personal API tokens (never the secret).
    #[graphql(complexity = "cost::short_list(child_complexity)")]
    async fn api_tokens(&self, ctx: &Context<'_>) -> async_graphql::Result<Vec<ApiToken>> {
        if ctx.rc().judge_link().is_some() {
            return Ok(Vec::new());
        }
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
    /// The user the session signs in.
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
    /// Opaque id; `revokeApiToken` takes it.
    async fn id(&self) -> ID {
        ID(self.0.public_id.clone())
    }
    /// The name the owner gave the token.
    async fn label(&self) -> &str {
        &self.0.label
    }
    /// The token's first characters, to recognize it.
    async fn prefix(&self) -> &str {
        &self.0.prefix
    }
    /// When the token was minted.
    async fn created_at(&self) -> DateTime<Utc> {
        self.0.created_at
    }
    /// When the token last authenticated a request (recorded at most once a minute); null
    /// if it never has.
    async fn last_used_at(&self) -> Option<DateTime<Utc>> {
        self.0.last_used_at
    }
    /// When the token was revoked; null while it still works.
    async fn revoked_at(&self) -> Option<DateTime<Utc>> {
        self.0.revoked_at
    }
    /// What the token may do.
    async fn scope(&self) -> ApiTokenScope {
        self.0.scope.into()
    }
    /// When the token stops working; null when never.
    async fn expires_at(&self) -> Option<DateTime<Utc>> {
        self.0.expires_at
    }
}

/// What a personal API token may do.
#[derive(Enum, Copy, Clone, Debug, PartialEq, Eq)]
#[graphql(remote = "api_token::TokenScope")]
pub enum ApiTokenScope {
    /// Queries and subscriptions only; any document with a mutation is FORBIDDEN.
    Read,
    /// Everything the token's owner may do.
    Write,
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
    /// The token's record, as `Viewer.apiTokens` lists it.
    async fn api_token(&self) -> ApiToken {
        ApiToken(self.api_token.clone())
    }
}
