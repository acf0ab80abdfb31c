//! Project mutations: a team drafts, edits, submits and withdraws its project. A
//! submission is announced to `projectSubmitted` subscribers after it commits.

use async_graphql::{Context, ID, InputObject, Object};
use serde::Serialize;
use serde_json::json;

use super::write::{begin, commit, idempotent};
use crate::domain::idempotency::Key;
use crate::domain::projects::{self, ProjectFields};
use crate::graphql::bus::BusEvent;
use crate::graphql::context::{CtxExt, ResultExt};
use crate::graphql::object::project::Project;
use crate::graphql::policy::{FieldGuard, Rule, Scope};

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
    /// The expo table where the project stands (for example "12" or "A-07"): at most 16
    /// characters, unique in the event; an empty string clears it.
    pub table: Option<String>,
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
            table: i.table,
        }
    }
}

/// Who may call each mutation of this file, collected by [`crate::graphql::policy`].
pub(crate) const POLICIES: &[(&str, Rule)] = &[
    ("Mutation.createProject", Rule::SignedIn),
    ("Mutation.updateProject", Rule::SignedIn),
    ("Mutation.submitProject", Rule::SignedIn),
    ("Mutation.withdrawProject", Rule::SignedIn),
];

#[derive(Default)]
pub struct ProjectMutation;

#[Object(guard = "FieldGuard::new(\"Mutation\", Scope::none())")]
impl ProjectMutation {
    /// Drafts a project for the caller's team (inside the submission window). FORBIDDEN
    /// when the caller has no team in the event; WINDOW_CLOSED outside the window.
    async fn create_project(
        &self,
        ctx: &Context<'_>,
        #[graphql(desc = "The event, by slug; NOT_FOUND when no event has it.")] event: String,
        #[graphql(desc = "The project's content; `title` and `track` are required.")]
        input: ProjectInput,
        #[graphql(
            desc = "Retry key (1-200 characters, per caller): a retry with the same key and \
                    input returns the first result without writing again; the same key with \
                    another request is a CONFLICT."
        )]
        idempotency_key: Option<String>,
    ) -> async_graphql::Result<Project> {
        let actor = ctx.actor()?;
        let key = Key::new(
            idempotency_key,
            "createProject",
            &json!({ "event": event, "input": input }),
        )
        .gql(ctx)?;
        let p = idempotent(ctx, &actor, key, async |w| {
            let e = w.event(&event).await?;
            projects::create_project(w, &e, input.into()).await
        })
        .await?;
        Ok(Project(p))
    }

    /// Edits a project (its team, inside the submission window): NOT_FOUND when the caller
    /// cannot see it, FORBIDDEN when it is another team's, WINDOW_CLOSED outside the window,
    /// CONFLICT when it is withdrawn.
    async fn update_project(
        &self,
        ctx: &Context<'_>,
        #[graphql(desc = "The project's id or external id.")] id: ID,
        #[graphql(desc = "The fields to change; the others stay as they are.")] input: ProjectInput,
    ) -> async_graphql::Result<Project> {
        ctx.actor()?;
        let w = begin(ctx).await?;
        let p = projects::update_project(&w, &id, input.into())
            .await
            .gql(ctx)?;
        commit(ctx, w).await?;
        Ok(Project(p))
    }

    /// Submits a draft, or a withdrawn project again (its team, inside the submission
    /// window; CONFLICT when already submitted). `projectSubmitted` subscribers hear of it.
    async fn submit_project(
        &self,
        ctx: &Context<'_>,
        #[graphql(desc = "The project's id or external id.")] id: ID,
    ) -> async_graphql::Result<Project> {
        ctx.actor()?;
        let w = begin(ctx).await?;
        let p = projects::submit_project(&w, &id).await.gql(ctx)?;
        commit(ctx, w).await?;
        let bus = &ctx.services().bus;
        bus.publish(BusEvent::ProjectSubmitted {
            event_id: p.event_id,
            project: std::sync::Arc::new(p.clone()),
        });
        // A project submitted again brings its judges' assignments back.
        bus.publish(BusEvent::JudgingChanged {
            event_id: p.event_id,
        });
        Ok(Project(p))
    }

    /// Withdraws a submitted project (its team, inside the submission window; CONFLICT
    /// unless it is submitted). Nothing is deleted, and it can be submitted again. Its
    /// judges' assignments become `withdrawn` meanwhile: out of their queues, not reviewable,
    /// not pending.
    async fn withdraw_project(
        &self,
        ctx: &Context<'_>,
        #[graphql(desc = "The project's id or external id.")] id: ID,
    ) -> async_graphql::Result<Project> {
        ctx.actor()?;
        let w = begin(ctx).await?;
        let p = projects::withdraw_project(&w, &id).await.gql(ctx)?;
        commit(ctx, w).await?;
        // Its judges' assignments stand aside: progress moved.
        ctx.services().bus.publish(BusEvent::JudgingChanged {
            event_id: p.event_id,
        });
        Ok(Project(p))
    }
}
