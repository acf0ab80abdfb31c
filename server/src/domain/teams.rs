//! Teams and who is on them.

use entity::{event, team, team_member};
use sea_orm::{
    ActiveModelTrait, ActiveValue::Set, ColumnTrait, ConnectionTrait, EntityTrait, PaginatorTrait,
    QueryFilter, QuerySelect,
};
use serde_json::json;

use super::{Actor, Role, clock, lock_event, roles_in, validate};
use crate::audit::{self, Entry};
use crate::crypto::{public_id, random_string};
use crate::error::{AppError, AppResult};

/// A participant creates a team and joins it; an organizer creates an empty one.
pub async fn create_team<C: ConnectionTrait>(
    txn: &C,
    actor: &Actor,
    e: &event::Model,
    name: &str,
    external_id: Option<String>,
) -> AppResult<team::Model> {
    let name = validate::name("name", name, validate::NAME_MAX)?;
    let external_id = external_id
        .map(|x| validate::external_id("externalId", &x))
        .transpose()?;
    let roles = roles_in(txn, actor.user.id, e.id).await?;
    let organizer = actor.user.is_site_admin || roles.contains(&Role::Organizer);
    let joins = roles.contains(&Role::Participant) && !organizer;
    if !organizer && !joins {
        return Err(AppError::forbidden(
            "register for this event before creating a team",
        ));
    }
    if joins {
        lock_event(txn, e.id).await?;
        check_free_to_join(txn, actor.user.id, e.id).await?;
    }
    let t = team::ActiveModel {
        public_id: Set(public_id("team")),
        event_id: Set(e.id),
        external_id: Set(external_id.unwrap_or_else(|| public_id("tm"))),
        name: Set(name),
        invite_code: Set(random_string(12)),
        created_at: Set(clock(txn).await?),
        ..Default::default()
    }
    .insert(txn)
    .await?;
    if joins {
        insert_member(txn, &t, actor.user.id).await?;
    }
    audit::append(
        txn,
        Entry::new("team.created", "team", &t.public_id)
            .by(actor.public_id())
            .in_event(&e.external_id)
            .with(json!({ "name": t.name, "creator_joined": joins })),
    )
    .await?;
    Ok(t)
}

/// One team per person per event, and no judge of the event on a team.
async fn check_free_to_join<C: ConnectionTrait>(
    txn: &C,
    user_id: i64,
    event_id: i64,
) -> AppResult<()> {
    if roles_in(txn, user_id, event_id)
        .await?
        .contains(&Role::Judge)
    {
        return Err(AppError::conflict(
            "judges of an event cannot be on one of its teams",
        ));
    }
    let already = team_member::Entity::find()
        .filter(team_member::Column::UserId.eq(user_id))
        .filter(team_member::Column::EventId.eq(event_id))
        .count(txn)
        .await?
        > 0;
    if already {
        return Err(AppError::conflict("already on a team in this event"));
    }
    Ok(())
}

/// Adds `user_id` to `t` if there is room. The team row is locked first, so two
/// simultaneous joins cannot both take the last place.
async fn add_with_room<C: ConnectionTrait>(
    txn: &C,
    t: &team::Model,
    e: &event::Model,
    user_id: i64,
) -> AppResult<()> {
    team::Entity::find_by_id(t.id)
        .lock_exclusive()
        .one(txn)
        .await?;
    check_free_to_join(txn, user_id, e.id).await?;
    let size = team_member::Entity::find()
        .filter(team_member::Column::TeamId.eq(t.id))
        .count(txn)
        .await?;
    if size >= e.max_team_size as u64 {
        return Err(AppError::conflict(format!(
            "this team is full ({} members at most)",
            e.max_team_size
        )));
    }
    insert_member(txn, t, user_id).await
}

/// Puts `user_id` on team `t`, unchecked: callers check room and eligibility first.
pub async fn insert_member<C: ConnectionTrait>(
    txn: &C,
    t: &team::Model,
    user_id: i64,
) -> AppResult<()> {
    team_member::ActiveModel {
        event_id: Set(t.event_id),
        team_id: Set(t.id),
        user_id: Set(user_id),
        created_at: Set(clock(txn).await?),
        ..Default::default()
    }
    .insert(txn)
    .await?;
    Ok(())
}

/// A registered participant joins a team with its invite code.
pub async fn join_team<C: ConnectionTrait>(
    txn: &C,
    actor: &Actor,
    invite_code: &str,
) -> AppResult<team::Model> {
    let t = team::Entity::find()
        .filter(team::Column::InviteCode.eq(invite_code.trim()))
        .one(txn)
        .await?
        .ok_or(AppError::NotFound("team"))?;
    let e = lock_event(txn, t.event_id).await?;
    if !roles_in(txn, actor.user.id, e.id)
        .await?
        .contains(&Role::Participant)
    {
        return Err(AppError::forbidden(
            "register for this event before joining a team",
        ));
    }
    // Teams may form before submissions open, but not after the deadline: joining then
    // would make someone a co-author of a project they could not have worked on.
    if clock(txn).await? >= e.submissions_close {
        return Err(AppError::WindowClosed(
            "the submission deadline has passed: teams can no longer change".into(),
        ));
    }
    add_with_room(txn, &t, &e, actor.user.id).await?;
    audit::append(
        txn,
        Entry::new("team.joined", "team", &t.public_id)
            .by(actor.public_id())
            .in_event(&e.external_id),
    )
    .await?;
    Ok(t)
}

/// An organizer puts a person on a team (registering them as a participant if needed).
pub async fn add_team_member<C: ConnectionTrait>(
    txn: &C,
    actor: &Actor,
    t: &team::Model,
    email: &str,
) -> AppResult<team::Model> {
    let e = lock_event(txn, t.event_id).await?;
    super::require_organizer(txn, actor, &e).await?;
    let email = validate::email("email", email)?;
    let u = super::user_by_email(txn, &email)
        .await?
        .ok_or_else(|| AppError::bad_input("email", "no account has this email"))?;
    if !roles_in(txn, u.id, e.id)
        .await?
        .contains(&Role::Participant)
    {
        super::events::insert_membership(txn, u.id, e.id, Role::Participant, None, "[]").await?;
    }
    add_with_room(txn, t, &e, u.id).await?;
    audit::append(
        txn,
        Entry::new("team.member_added", "team", &t.public_id)
            .by(actor.public_id())
            .in_event(&e.external_id)
            .with(json!({ "user": u.public_id })),
    )
    .await?;
    Ok(t.clone())
}
