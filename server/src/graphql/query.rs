//! The query root.

use async_graphql::{Context, ID, Object};
use entity::event;
use sea_orm::{ColumnTrait, EntityTrait, QueryFilter};

use super::connection::{Page, page};
use super::context::{CtxExt, ResultExt};
use super::cost;
use super::object::event::Event;
use super::object::project::Project;
use super::object::results::SigningKey;
use super::object::user::Viewer;
use super::policy::{FieldGuard, Rule, Scope};

/// Who may read each field of the query root, collected by [`super::policy`].
pub(crate) const POLICIES: &[(&str, Rule)] = &[
    ("Query.viewer", Rule::Public),
    ("Query.event", Rule::Public),
    ("Query.events", Rule::Public),
    ("Query.project", Rule::Public),
    ("Query.signingKey", Rule::Public),
    // The token is the credential; an unknown one is NOT_FOUND.
    ("Query.setupLink", Rule::Public),
    ("Query.link", Rule::Public),
];

#[derive(Default)]
pub struct Query;

/// Every read: the signed-in viewer, events, projects and the signing key. An object the
/// caller may not see reads as null, as if it did not exist.
#[Object(guard = "FieldGuard::new(\"Query\", Scope::none())")]
impl Query {
    /// The signed-in caller; null when anonymous.
    async fn viewer(&self, ctx: &Context<'_>) -> Option<Viewer> {
        ctx.rc().user().cloned().map(Viewer)
    }
    /// An event by slug; null when unknown.
    #[graphql(complexity = "cost::load(child_complexity)")]
    async fn event(
        &self,
        ctx: &Context<'_>,
        #[graphql(desc = "The event's slug, as in its URL (e.g. `spring-hack-2026`).")]
        slug: String,
    ) -> async_graphql::Result<Option<Event>> {
        match crate::domain::event_by_slug(&ctx.db().conn, &slug).await {
            Ok(e) => Ok(Some(Event::new(e))),
            Err(crate::error::AppError::NotFound(_)) => Ok(None),
            Err(e) => Err(ctx.err(e)),
        }
    }
    /// Every event, oldest first.
    #[graphql(complexity = "cost::page(first, child_complexity)")]
    async fn events(
        &self,
        ctx: &Context<'_>,
        #[graphql(desc = "Page size: 20 if omitted, at most the page limit (100 by default).")]
        first: Option<i32>,
        #[graphql(desc = "Start after this cursor (an edge's `cursor`); omit for the first page.")]
        after: Option<String>,
    ) -> async_graphql::Result<Page<Event>> {
        page(
            ctx,
            event::Entity::find().filter(event::Column::ArchivedAt.is_null()),
            event::Column::Id,
            |e| e.id,
            first,
            after,
            Event::new,
        )
        .await
    }
    /// The deployment's public signing key: every run, publication and checkpoint is signed
    /// with it (also at `/.well-known/verdict-signing-key`).
    async fn signing_key(&self, ctx: &Context<'_>) -> SigningKey {
        let public = ctx.services().signer.public();
        SigningKey {
            pem: public.to_pem(),
            fingerprint: public.fingerprint(),
        }
    }
    /// The first-run setup link that `verdict serve` printed (anyone holding it): whether it
    /// still works, read without using it. NOT_FOUND for a token that is not one.
    async fn setup_link(
        &self,
        ctx: &Context<'_>,
        #[graphql(desc = "The token: the last part of the setup link.")] token: String,
    ) -> async_graphql::Result<super::object::links::SetupLink> {
        let (state, row) = crate::domain::setup::state(&ctx.db().conn, &token)
            .await
            .gql(ctx)?;
        Ok(super::object::links::SetupLink {
            state: state.into(),
            expires_at: row.expires_at,
        })
    }
    /// What a link someone was sent is (anyone holding it), read without using it: the
    /// event, role, team and masked address it is for, and whether it still works.
    /// NOT_FOUND for a token that is not a link of this kind.
    async fn link(
        &self,
        ctx: &Context<'_>,
        #[graphql(
            desc = "Which page the link opens (`/invite/`, `/reset/`, `/confirm/`, `/join/`, \
                    `/judge-sign-in/`)."
        )]
        kind: super::object::links::LinkKind,
        #[graphql(desc = "The token: the last part of the link.")] token: String,
    ) -> async_graphql::Result<super::object::links::Link> {
        let info = crate::domain::links::read(&ctx.db().conn, kind.into(), &token)
            .await
            .gql(ctx)?;
        Ok(super::object::links::Link(info))
    }
    /// A project by id or external id; null when unknown or not visible to the caller
    /// (drafts are visible to their team and the organizers).
    #[graphql(complexity = "cost::load(child_complexity)")]
    async fn project(
        &self,
        ctx: &Context<'_>,
        #[graphql(desc = "The project's id or its external id (e.g. `prj_007`).")] id: ID,
    ) -> async_graphql::Result<Option<Project>> {
        let Some(p) = crate::domain::find_project(&ctx.db().conn, &id, None)
            .await
            .gql(ctx)?
        else {
            return Ok(None);
        };
        let access = ctx.rc().access(ctx.db()).await.gql(ctx)?;
        Ok(access.can_see_project(&p).then_some(Project(p)))
    }
}
