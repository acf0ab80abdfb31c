//! Comments (issue 12): a thread under each submitted project. Anyone who may see the
//! project reads it; signed-in people post to it, a few at a time; the event's organizers
//! hide a comment with a reason. Hiding is soft: the row stays (the migration's triggers
//! refuse deletes and edits of what was posted) and so does its audit event.
//!
//! A body is plain text, trimmed and stored verbatim: never markup. Nothing on the server
//! interprets it, and every client must show it as text.

use entity::{comment, event, project};
use sea_orm::sea_query::Expr;
use sea_orm::{ActiveModelTrait, ColumnTrait, EntityTrait, QueryFilter, Set};
use serde_json::json;

use super::throttle::take_slot;
use super::{Access, Write, find_project, validate};
use crate::audit::Entry;
use crate::crypto::{public_id, sha256_hex};
use crate::error::{AppError, AppResult};

/// The longest body, in characters, after trimming.
pub const BODY_MAX: usize = 2_000;
/// The longest reason for hiding a comment, in characters.
pub const REASON_MAX: usize = 500;
/// Comments one author may post per throttle window
/// ([`super::throttle::THROTTLE_WINDOW_SECS`], 15 minutes), across every project: enough
/// for a conversation, too few to flood a thread. Counted in the database inside the
/// posting transaction, so it holds across concurrent requests and server processes.
pub const COMMENTS_PER_WINDOW: i32 = 10;

/// The project a caller may comment on: one they may see (else NOT_FOUND, as if it did not
/// exist), which is submitted (its thread opens then).
async fn commentable(w: &Write, id: &str) -> AppResult<(project::Model, event::Model)> {
    let (txn, actor) = (w.txn(), w.actor()?);
    let p = find_project(txn, id, None)
        .await?
        .ok_or(AppError::NotFound("project"))?;
    let access = Access::load(txn, &actor.user).await?;
    if !access.can_see_project(&p) {
        return Err(AppError::NotFound("project"));
    }
    if !p.is_public() {
        return Err(AppError::bad_input(
            "project",
            "is not submitted: its thread opens when it is",
        ));
    }
    let e = event::Entity::find_by_id(p.event_id)
        .one(txn)
        .await?
        .ok_or(AppError::NotFound("event"))?;
    Ok((p, e))
}

/// Posts `body` to the thread of the project with id (or external id) `project`, as
/// `actor`: trimmed, 1 to [`BODY_MAX`] characters, at most [`COMMENTS_PER_WINDOW`] per
/// author per window (RATE_LIMITED beyond, with the seconds until the window ends).
pub async fn post_comment(w: &Write, project: &str, body: &str) -> AppResult<comment::Model> {
    let (txn, actor) = (w.txn(), w.actor()?);
    let (p, e) = commentable(w, project).await?;
    let body = body.trim();
    if body.is_empty() {
        return Err(AppError::bad_input("body", "must not be empty"));
    }
    let body = validate::text("body", body, BODY_MAX)?;
    let t = w.now();
    take_slot(
        txn,
        &format!("comment:{}", actor.user.id),
        COMMENTS_PER_WINDOW,
        t,
    )
    .await?;
    let c = comment::ActiveModel {
        public_id: Set(public_id("cmt")),
        event_id: Set(e.id),
        project_id: Set(p.id),
        author_id: Set(actor.user.id),
        body: Set(body),
        created_at: Set(t),
        hidden_at: Set(None),
        hidden_reason: Set(None),
        hidden_by: Set(None),
        ..Default::default()
    }
    .insert(txn)
    .await?;
    // The chain pins what was said by its hash; the words stay in the comment's row.
    w.append(
        Entry::new("comment.posted", "comment", &c.public_id)
            .by(actor.public_id())
            .in_event(&e.external_id)
            .with(json!({
                "project": p.external_id,
                "body_sha256": sha256_hex(c.body.as_bytes()),
            })),
    )
    .await?;
    Ok(c)
}

/// Hides the comment with public id `id` (organizers of its event, and site admins), with
/// `reason` (one line of 1 to [`REASON_MAX`] characters). Hiding a hidden comment is a
/// CONFLICT: of two organizers hiding it at once, one does and the other is told so.
pub async fn hide_comment(w: &Write, id: &str, reason: &str) -> AppResult<comment::Model> {
    let (txn, actor) = (w.txn(), w.actor()?);
    let c = comment::Entity::find()
        .filter(comment::Column::PublicId.eq(id))
        .one(txn)
        .await?
        .ok_or(AppError::NotFound("comment"))?;
    let e = event::Entity::find_by_id(c.event_id)
        .one(txn)
        .await?
        .ok_or(AppError::NotFound("event"))?;
    w.organizer(&e).await?;
    if c.is_hidden() {
        return Err(AppError::conflict("this comment is already hidden"));
    }
    let reason = validate::name("reason", reason, REASON_MAX)?;
    let t = w.now();
    // Conditional, so a concurrent hide that committed first makes this one change nothing.
    let changed = comment::Entity::update_many()
        .col_expr(comment::Column::HiddenAt, Expr::value(t))
        .col_expr(comment::Column::HiddenReason, Expr::value(reason.clone()))
        .col_expr(comment::Column::HiddenBy, Expr::value(actor.user.id))
        .filter(comment::Column::Id.eq(c.id))
        .filter(comment::Column::HiddenAt.is_null())
        .exec(txn)
        .await?
        .rows_affected;
    if changed == 0 {
        return Err(AppError::conflict("this comment is already hidden"));
    }
    let project = project::Entity::find_by_id(c.project_id)
        .one(txn)
        .await?
        .map(|p| p.external_id);
    w.append(
        Entry::new("comment.hidden", "comment", &c.public_id)
            .by(actor.public_id())
            .in_event(&e.external_id)
            .with(json!({ "project": project, "reason": reason })),
    )
    .await?;
    Ok(comment::Model {
        hidden_at: Some(t),
        hidden_reason: Some(reason),
        hidden_by: Some(actor.user.id),
        ..c
    })
}
