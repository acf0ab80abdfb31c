//! Teams and who is on them.

use chrono::{DateTime, Utc};
use entity::{event, project, team, team_member};
use sea_orm::{
    ActiveModelTrait, ActiveValue::Set, ColumnTrait, ConnectionTrait, EntityTrait, PaginatorTrait,
    QueryFilter, QuerySelect,
};
use serde_json::json;

use super::{Role, Write, roles_in, validate};
use crate::audit::Entry;
use crate::crypto::{public_id, random_string};
use crate::error::{AppError, AppResult};

/// A participant creates a team and joins it; an organizer creates an empty one.
pub async fn create_team(
    w: &Write,
    e: &event::Model,
    name: &str,
    external_id: Option<String>,
) -> AppResult<team::Model> {
    let (txn, actor) = (w.txn(), w.actor()?);
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
        check_free_to_join(txn, actor.user.id, e.id).await?;
    }
    let now = w.now();
    let t = team::ActiveModel {
        public_id: Set(public_id("team")),
        event_id: Set(e.id),
        external_id: Set(external_id.unwrap_or_else(|| public_id("tm"))),
        name: Set(name),
        invite_code: Set(random_string(12)),
        invite_code_expires_at: Set(Some(code_expiry(e, now))),
        created_at: Set(now),
        ..Default::default()
    }
    .insert(txn)
    .await?;
    if joins {
        insert_member(txn, &t, actor.user.id, now).await?;
    }
    w.append(
        Entry::new("team.created", "team", &t.public_id)
            .by(actor.public_id())
            .in_event(&e.external_id)
            .with(json!({ "name": t.name, "creator_joined": joins })),
    )
    .await?;
    Ok(t)
}

/// How long a team's invite code works: 72 hours, or until the submission deadline.
pub const INVITE_CODE_HOURS: i64 = 72;

/// When a code made at `now` for a team of `e` stops working.
pub fn code_expiry(e: &event::Model, now: DateTime<Utc>) -> DateTime<Utc> {
    (now + chrono::Duration::hours(INVITE_CODE_HOURS)).min(e.submissions_close)
}

/// Teams may form and change before submissions open, but not after the deadline: a
/// person joining then would co-author a project they could not have worked on.
pub(super) fn require_teams_open(e: &event::Model, at: DateTime<Utc>) -> AppResult<()> {
    if at >= e.submissions_close {
        return Err(AppError::WindowClosed(
            "the submission deadline has passed: teams can no longer change".into(),
        ));
    }
    Ok(())
}

/// Whether `user_id` is on team `team_id`.
async fn on_team<C: ConnectionTrait>(txn: &C, team_id: i64, user_id: i64) -> AppResult<bool> {
    Ok(team_member::Entity::find()
        .filter(team_member::Column::TeamId.eq(team_id))
        .filter(team_member::Column::UserId.eq(user_id))
        .count(txn)
        .await?
        > 0)
}

/// Takes `user_id` off team `team_id`.
async fn take_off<C: ConnectionTrait>(txn: &C, team_id: i64, user_id: i64) -> AppResult<()> {
    team_member::Entity::delete_many()
        .filter(team_member::Column::TeamId.eq(team_id))
        .filter(team_member::Column::UserId.eq(user_id))
        .exec(txn)
        .await?;
    Ok(())
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
pub(super) async fn add_with_room<C: ConnectionTrait>(
    txn: &C,
    t: &team::Model,
    e: &event::Model,
    user_id: i64,
    at: DateTime<Utc>,
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
    insert_member(txn, t, user_id, at).await
}

/// Puts `user_id` on team `t`, unchecked: callers check room and eligibility first.
pub async fn insert_member<C: ConnectionTrait>(
    txn: &C,
    t: &team::Model,
    user_id: i64,
    at: DateTime<Utc>,
) -> AppResult<()> {
    team_member::ActiveModel {
        event_id: Set(t.event_id),
        team_id: Set(t.id),
        user_id: Set(user_id),
        created_at: Set(at),
        ..Default::default()
    }
    .insert(txn)
    .await?;
    Ok(())
}

/// A registered participant joins a team with its invite code.
pub async fn join_team(w: &Write, invite_code: &str) -> AppResult<team::Model> {
    let (txn, actor) = (w.txn(), w.actor()?);
    let t = team::Entity::find()
        .filter(team::Column::InviteCode.eq(invite_code.trim()))
        .one(txn)
        .await?
        .ok_or(AppError::NotFound("team"))?;
    let e = w.event_by_id(t.event_id).await?;
    let now = w.now();
    if t.invite_code_expires_at.is_some_and(|x| x <= now) && now < e.submissions_close {
        return Err(AppError::WindowClosed(
            "this invite code has expired: ask the team for a new one (rotateInviteCode)".into(),
        ));
    }
    if !roles_in(txn, actor.user.id, e.id)
        .await?
        .contains(&Role::Participant)
    {
        return Err(AppError::forbidden(
            "register for this event before joining a team",
        ));
    }
    require_teams_open(&e, w.now())?;
    add_with_room(txn, &t, &e, actor.user.id, w.now()).await?;
    w.append(
        Entry::new("team.joined", "team", &t.public_id)
            .by(actor.public_id())
            .in_event(&e.external_id),
    )
    .await?;
    Ok(t)
}

/// An organizer puts a person on a team (registering them as a participant if needed).
pub async fn add_team_member(w: &Write, t: &team::Model, email: &str) -> AppResult<team::Model> {
    let (txn, actor) = (w.txn(), w.actor()?);
    let e = w.event_by_id(t.event_id).await?;
    w.organizer(&e).await?;
    let email = validate::email("email", email)?;
    let u = super::user_by_email(txn, &email)
        .await?
        .ok_or_else(|| AppError::bad_input("email", "no account has this email"))?;
    if !roles_in(txn, u.id, e.id)
        .await?
        .contains(&Role::Participant)
    {
        super::events::insert_membership(txn, u.id, e.id, Role::Participant, None, "[]", w.now())
            .await?;
    }
    add_with_room(txn, t, &e, u.id, w.now()).await?;
    w.append(
        Entry::new("team.member_added", "team", &t.public_id)
            .by(actor.public_id())
            .in_event(&e.external_id)
            .with(json!({ "user": u.public_id })),
    )
    .await?;
    Ok(t.clone())
}

/// Whether the caller may act for team `t`: a member, or an organizer of its event.
/// Members act only while submissions are open; organizers at any time, with a reason.
pub(super) async fn team_actor(w: &Write, t: &team::Model, e: &event::Model) -> AppResult<bool> {
    let (txn, actor) = (w.txn(), w.actor()?);
    if w.try_organizer(e).await?.is_some() {
        return Ok(true);
    }
    if !on_team(txn, t.id, actor.user.id).await? {
        return Err(AppError::forbidden(
            "only the team's members and the event's organizers may do this",
        ));
    }
    require_teams_open(e, w.now())?;
    Ok(false)
}

/// An organizer's action needs a reason (1 to 500 characters); a member's takes none.
fn organizer_reason(organizer: bool, reason: Option<&str>) -> AppResult<Option<String>> {
    match (organizer, reason) {
        (true, Some(r)) => Ok(Some(validate::name("reason", r, 500)?)),
        (true, None) => Err(AppError::bad_input(
            "reason",
            "an organizer acting for a team gives a reason",
        )),
        (false, _) => Ok(None),
    }
}

/// Refuses to take the last member off a team that has a submitted project: the project
/// would have nobody to answer for it. (Withdraw it first, or an organizer hides or
/// disqualifies it.)
async fn keep_someone<C: ConnectionTrait>(txn: &C, t: &team::Model) -> AppResult<()> {
    let members = team_member::Entity::find()
        .filter(team_member::Column::TeamId.eq(t.id))
        .count(txn)
        .await?;
    let submitted = project::Entity::find()
        .filter(project::Column::TeamId.eq(t.id))
        .filter(project::Column::Status.eq(project::ProjectStatus::Submitted))
        .count(txn)
        .await?;
    if members <= 1 && submitted > 0 {
        return Err(AppError::conflict(
            "the last member cannot leave a team with a submitted project: withdraw it first",
        ));
    }
    Ok(())
}

/// `leaveTeam`: the caller leaves their team, while submissions are open.
pub async fn leave_team(w: &Write, t: &team::Model) -> AppResult<team::Model> {
    let (txn, actor) = (w.txn(), w.actor()?);
    // A team of an event the caller takes no part in is not one they can know of.
    if !super::Access::load(txn, &actor.user)
        .await?
        .is_member(t.event_id)
    {
        return Err(AppError::NotFound("team"));
    }
    let e = w.event_by_id(t.event_id).await?;
    team::Entity::find_by_id(t.id)
        .lock_exclusive()
        .one(txn)
        .await?;
    if !on_team(txn, t.id, actor.user.id).await? {
        return Err(AppError::conflict("you are not on this team"));
    }
    require_teams_open(&e, w.now())?;
    keep_someone(txn, t).await?;
    take_off(txn, t.id, actor.user.id).await?;
    w.append(
        Entry::new("team.left", "team", &t.public_id)
            .by(actor.public_id())
            .in_event(&e.external_id),
    )
    .await?;
    Ok(t.clone())
}

/// `removeTeamMember`: an organizer takes a person off a team, at any time, with a reason.
pub async fn remove_member(
    w: &Write,
    t: &team::Model,
    email: &str,
    reason: &str,
) -> AppResult<team::Model> {
    let (txn, actor) = (w.txn(), w.actor()?);
    let e = w.event_by_id(t.event_id).await?;
    w.organizer(&e).await?;
    let reason = validate::name("reason", reason, 500)?;
    let email = validate::email("email", email)?;
    team::Entity::find_by_id(t.id)
        .lock_exclusive()
        .one(txn)
        .await?;
    let u = super::user_by_email(txn, &email)
        .await?
        .ok_or_else(|| AppError::bad_input("email", "no account has this email"))?;
    if !on_team(txn, t.id, u.id).await? {
        return Err(AppError::bad_input(
            "email",
            "this person is not on the team",
        ));
    }
    keep_someone(txn, t).await?;
    take_off(txn, t.id, u.id).await?;
    w.append(
        Entry::new("team.member_removed", "team", &t.public_id)
            .by(actor.public_id())
            .in_event(&e.external_id)
            .with(json!({ "user": u.public_id, "reason": reason })),
    )
    .await?;
    Ok(t.clone())
}

/// `renameTeam`: a member while submissions are open; an organizer at any time, with a
/// reason.
pub async fn rename_team(
    w: &Write,
    t: &team::Model,
    name: &str,
    reason: Option<&str>,
) -> AppResult<team::Model> {
    let (txn, actor) = (w.txn(), w.actor()?);
    let e = w.event_by_id(t.event_id).await?;
    let organizer = team_actor(w, t, &e).await?;
    let reason = organizer_reason(organizer, reason)?;
    let name = validate::name("name", name, validate::NAME_MAX)?;
    let mut am: team::ActiveModel = t.clone().into();
    am.name = Set(name.clone());
    let t = am.update(txn).await?;
    w.append(
        Entry::new("team.renamed", "team", &t.public_id)
            .by(actor.public_id())
            .in_event(&e.external_id)
            .with(json!({ "name": name, "reason": reason })),
    )
    .await?;
    Ok(t)
}

/// `rotateInviteCode`: a new code (the old one stops working), valid 72 hours or until the
/// deadline. A member while submissions are open; an organizer at any time.
pub async fn rotate_invite_code(w: &Write, t: &team::Model) -> AppResult<team::Model> {
    let (txn, actor) = (w.txn(), w.actor()?);
    let e = w.event_by_id(t.event_id).await?;
    team_actor(w, t, &e).await?;
    let now = w.now();
    let mut am: team::ActiveModel = t.clone().into();
    am.invite_code = Set(random_string(12));
    am.invite_code_expires_at = Set(Some(code_expiry(&e, now)));
    let t = am.update(txn).await?;
    w.append(
        Entry::new("team.invite_code_rotated", "team", &t.public_id)
            .by(actor.public_id())
            .in_event(&e.external_id),
    )
    .await?;
    Ok(t)
}
