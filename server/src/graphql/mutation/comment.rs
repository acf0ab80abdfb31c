//! Comment mutations (issue 12): signed-in people post to a submitted project's thread;
//! the event's organizers hide a comment, softly and with a reason.

use async_graphql::{Context, ID, Object};
use serde_json::json;

use super::write::idempotent;
use crate::domain::comments;
use crate::domain::idempotency::Key;
use crate::graphql::context::{CtxExt, ResultExt};
use crate::graphql::object::comment::Comment;
use crate::graphql::policy::{FieldGuard, Rule, Scope};

/// Who may call each mutation of this file, collected by [`crate::graphql::policy`].
pub(crate) const POLICIES: &[(&str, Rule)] = &[
    // The project's own rule is checked inside: one the caller cannot see is NOT_FOUND.
    ("Mutation.postComment", Rule::SignedIn),
    // Organizers of the comment's event, checked inside: others are FORBIDDEN.
    ("Mutation.hideComment", Rule::SignedIn),
];

#[derive(Default)]
pub struct CommentMutation;

#[Object(guard = "FieldGuard::new(\"Mutation\", Scope::none())")]
impl CommentMutation {
    /// Posts a comment to a submitted project's thread, as the signed-in caller (shown by
    /// display name). The body is trimmed and must then be 1 to 2,000 characters of plain
    /// text (BAD_USER_INPUT naming `body`); it is stored verbatim and never rendered as
    /// markup. A project the caller may not see is NOT_FOUND; one not submitted is
    /// BAD_USER_INPUT naming `project`. Each person may post 10 comments per 15 minutes;
    /// beyond that RATE_LIMITED with `extensions.retryAfter` in seconds.
    async fn post_comment(
        &self,
        ctx: &Context<'_>,
        #[graphql(desc = "The project, by id or external id.")] project: ID,
        #[graphql(desc = "What to say: plain text, 1 to 2,000 characters once trimmed.")]
        body: String,
        #[graphql(
            desc = "Retry key (1-200 characters, per caller): a retry with the same key and \
                    input returns the first comment without posting it again; the same key \
                    with another request is a CONFLICT."
        )]
        idempotency_key: Option<String>,
    ) -> async_graphql::Result<Comment> {
        let actor = ctx.actor()?;
        let key = Key::new(
            idempotency_key,
            "postComment",
            &json!({ "project": project.as_str(), "body": body }),
        )
        .gql(ctx)?;
        let c = idempotent(ctx, &actor, key, async |w| {
            comments::post_comment(w, &project, &body).await
        })
        .await?;
        Ok(Comment(c))
    }

    /// Hides a comment (organizers of its event, and site admins): it stays in the thread
    /// as a placeholder without its body for everyone else; the row and its audit event
    /// stay. The reason is one line of 1 to 500 characters, shown to the organizers and
    /// the author. Hiding a hidden comment is a CONFLICT.
    async fn hide_comment(
        &self,
        ctx: &Context<'_>,
        #[graphql(desc = "The comment's id.")] id: ID,
        #[graphql(desc = "Why: one line of 1 to 500 characters.")] reason: String,
    ) -> async_graphql::Result<Comment> {
        let actor = ctx.actor()?;
        let c = idempotent(ctx, &actor, None, async |w| {
            comments::hide_comment(w, &id, &reason).await
        })
        .await?;
        Ok(Comment(c))
    }
}
