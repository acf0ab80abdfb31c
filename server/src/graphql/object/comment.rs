//! Comments in a project's thread (issue 12). A comment is reached only through a project
//! the caller may see (`Project.comments`) or the mutation that wrote it, so its fields are
//! public; what moderation withholds is masked by the resolvers: a hidden comment stays in
//! the thread as a placeholder (its place, time and author) without its body or reason,
//! which only the event's organizers and the comment's author read.

use async_graphql::{Context, ID, Object};
use chrono::{DateTime, Utc};
use entity::{comment, user};

use crate::graphql::context::{CtxExt, ResultExt};
use crate::graphql::loaders::{LoadersExt, UserId, one};
use crate::graphql::policy::{FieldGuard, Rule, Scope};

/// Who may read each field of the types in this file, collected by [`crate::graphql::policy`].
pub(crate) const POLICIES: &[(&str, Rule)] = &[
    ("Comment.id", Rule::Public),
    ("Comment.author", Rule::Public),
    ("Comment.createdAt", Rule::Public),
    // Masked in the resolver once hidden: the organizers and the author only.
    ("Comment.body", Rule::Public),
    ("Comment.hidden", Rule::Public),
    ("Comment.hiddenAt", Rule::Public),
    // Masked in the resolver: the organizers and the author only.
    ("Comment.hiddenReason", Rule::Public),
    // A display name is what a person shows to others; never their email.
    ("CommentAuthor.displayName", Rule::Public),
];

/// A comment in a project's thread: plain text, never markup.
pub struct Comment(pub comment::Model);

impl Comment {
    /// Whether the caller reads what moderation withholds: the organizers of the comment's
    /// event (and site admins), and its author.
    async fn moderator_view(&self, ctx: &Context<'_>) -> async_graphql::Result<bool> {
        let Some(user) = ctx.rc().user() else {
            return Ok(false);
        };
        if user.id == self.0.author_id {
            return Ok(true);
        }
        let access = ctx.rc().access(ctx.db()).await.gql(ctx)?;
        Ok(access.is_organizer(self.0.event_id))
    }
}

/// A comment in a project's thread: plain text, never markup. Once an organizer hides it,
/// it stays in the thread as a placeholder (`hidden: true`, `body: null`) for everyone but
/// the event's organizers and its author, as forums keep a removed post's place so the
/// replies around it still make sense.
#[Object(
    guard = "FieldGuard::new(\"Comment\", Scope { event: Some(self.0.event_id), user: Some(self.0.author_id), public: true, ..Scope::none() })"
)]
impl Comment {
    /// Opaque id.
    async fn id(&self) -> ID {
        ID(self.0.public_id.clone())
    }
    /// Who wrote it, by display name only.
    async fn author(&self, ctx: &Context<'_>) -> async_graphql::Result<CommentAuthor> {
        one(ctx, ctx.loaders().users(), UserId(self.0.author_id), "user")
            .await
            .map(CommentAuthor)
    }
    /// When it was posted.
    async fn created_at(&self) -> DateTime<Utc> {
        self.0.created_at
    }
    /// What was said: plain text of 1 to 2,000 characters, trimmed, stored verbatim. Show
    /// it as text, never as HTML or Markdown. Null once the comment is hidden, except for
    /// the event's organizers and the comment's author.
    async fn body(&self, ctx: &Context<'_>) -> async_graphql::Result<Option<&str>> {
        if self.0.is_hidden() && !self.moderator_view(ctx).await? {
            return Ok(None);
        }
        Ok(Some(&self.0.body))
    }
    /// Whether an organizer hid it. A hidden comment keeps its place in the thread as a
    /// placeholder without its body.
    async fn hidden(&self) -> bool {
        self.0.is_hidden()
    }
    /// When it was hidden; null while it is shown.
    async fn hidden_at(&self) -> Option<DateTime<Utc>> {
        self.0.hidden_at
    }
    /// Why an organizer hid it: for the event's organizers and the comment's author; null
    /// for everyone else, and while it is shown.
    async fn hidden_reason(&self, ctx: &Context<'_>) -> async_graphql::Result<Option<&str>> {
        if !self.0.is_hidden() || !self.moderator_view(ctx).await? {
            return Ok(None);
        }
        Ok(self.0.hidden_reason.as_deref())
    }
}

/// The author of a comment as others see them: a display name, never an email.
pub struct CommentAuthor(user::Model);

/// The author of a comment as others see them: a display name, never an email.
#[Object(guard = "FieldGuard::new(\"CommentAuthor\", Scope { public: true, ..Scope::none() })")]
impl CommentAuthor {
    /// The name the person shows to others.
    async fn display_name(&self) -> &str {
        &self.0.display_name
    }
}
