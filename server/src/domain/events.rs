//! Events, their tracks, and who holds which role in them.

use chrono::{DateTime, Utc};
use entity::{event, invitation, membership, result_publication, team_member, track, webhook};
use sea_orm::sea_query::Expr;
use sea_orm::{
    ActiveEnum, ActiveModelTrait, ActiveValue::Set, ColumnTrait, ConnectionTrait, EntityTrait,
    IntoActiveModel, PaginatorTrait, QueryFilter,
};
use serde_json::json;

use super::{Organizer, Role, Write, validate};
use crate::audit::Entry;
use crate::crypto::public_id;
use crate::error::{AppError, AppResult};

/// The editable settings of an event; `None` leaves a field as it is (on update).
#[derive(Debug, Clone, Default)]
pub struct EventFields {
    pub slug: Option<String>,
    pub name: Option<String>,
    pub external_id: Option<String>,
    pub submissions_open: Option<DateTime<Utc>>,
    pub submissions_close: Option<DateTime<Utc>>,
    pub judging_open: Option<Option<DateTime<Utc>>>,
    pub judging_close: Option<Option<DateTime<Utc>>>,
    pub voting_open: Option<Option<DateTime<Utc>>>,
    pub voting_close: Option<Option<DateTime<Utc>>>,
    pub reviews_per_project: Option<i32>,
    pub max_team_size: Option<i32>,
    pub comments_to_teams: Option<bool>,
    pub registration: Option<event::Registration>,
    pub time_zone: Option<String>,
}

fn check_event(e: &event::ActiveModel) -> AppResult<()> {
    let get = |v: &sea_orm::ActiveValue<DateTime<Utc>>| v.clone().take();
    let getn = |v: &sea_orm::ActiveValue<Option<DateTime<Utc>>>| v.clone().take().flatten();
    validate::window(
        "submissionsClose",
        get(&e.submissions_open),
        get(&e.submissions_close),
    )?;
    validate::window(
        "judgingClose",
        getn(&e.judging_open),
        getn(&e.judging_close),
    )?;
    validate::window("votingClose", getn(&e.voting_open), getn(&e.voting_close))?;
    if e.reviews_per_project.clone().take().unwrap_or(1) < 1 {
        return Err(AppError::bad_input(
            "reviewsPerProject",
            "must be at least 1",
        ));
    }
    if e.max_team_size.clone().take().unwrap_or(1) < 1 {
        return Err(AppError::bad_input("maxTeamSize", "must be at least 1"));
    }
    Ok(())
}

fn apply(am: &mut event::ActiveModel, f: EventFields) -> AppResult<()> {
    if let Some(s) = f.slug {
        am.slug = Set(validate::slug("slug", &s)?);
    }
    if let Some(n) = f.name {
        am.name = Set(validate::name("name", &n, validate::NAME_MAX)?);
    }
    if let Some(v) = f.submissions_open {
        am.submissions_open = Set(v);
    }
    if let Some(v) = f.submissions_close {
        am.submissions_close = Set(v);
    }
    if let Some(v) = f.judging_open {
        am.judging_open = Set(v);
    }
    if let Some(v) = f.judging_close {
        am.judging_close = Set(v);
    }
    if let Some(v) = f.voting_open {
        am.voting_open = Set(v);
    }
    if let Some(v) = f.voting_close {
        am.voting_close = Set(v);
    }
    if let Some(v) = f.reviews_per_project {
        am.reviews_per_project = Set(v);
    }
    if let Some(v) = f.max_team_size {
        am.max_team_size = Set(v);
    }
    if let Some(v) = f.comments_to_teams {
        am.comments_to_teams = Set(v);
    }
    if let Some(v) = f.registration {
        am.registration = Set(v);
    }
    if let Some(z) = f.time_zone {
        am.time_zone = Set(validate::time_zone("timeZone", &z)?);
    }
    check_event(am)
}

async fn slug_taken<C: ConnectionTrait>(
    txn: &C,
    slug: &str,
    except: Option<i64>,
) -> AppResult<bool> {
    let mut q = event::Entity::find().filter(event::Column::Slug.eq(slug));
    if let Some(id) = except {
        q = q.filter(event::Column::Id.ne(id));
    }
    Ok(q.count(txn).await? > 0)
}

/// Site admins create events; the creator becomes its first organizer.
pub async fn create_event(w: &Write, f: EventFields) -> AppResult<event::Model> {
    let (txn, actor) = (w.txn(), w.actor()?);
    if !actor.user.is_site_admin {
        return Err(AppError::forbidden(
            "only site administrators create events",
        ));
    }
    let slug = validate::slug("slug", f.slug.as_deref().unwrap_or_default())?;
    let external_id = match &f.external_id {
        Some(x) => validate::external_id("externalId", x)?,
        None => format!("evt_{slug}"),
    };
    let (Some(open), Some(close)) = (f.submissions_open, f.submissions_close) else {
        return Err(AppError::bad_input(
            "submissionsOpen",
            "the submission window is required",
        ));
    };
    if slug_taken(txn, &slug, None).await? {
        return Err(AppError::conflict("an event with this slug exists"));
    }
    if event::Entity::find()
        .filter(event::Column::ExternalId.eq(&external_id))
        .count(txn)
        .await?
        > 0
    {
        return Err(AppError::conflict("an event with this external id exists"));
    }
    let mut am = event::ActiveModel {
        public_id: Set(public_id("evt")),
        external_id: Set(external_id),
        slug: Set(slug),
        name: Set(String::new()),
        submissions_open: Set(open),
        submissions_close: Set(close),
        judging_open: Set(None),
        judging_close: Set(None),
        voting_open: Set(None),
        voting_close: Set(None),
        reviews_per_project: Set(3),
        max_team_size: Set(5),
        comments_to_teams: Set(false),
        registration: Set(event::Registration::InviteOnly),
        time_zone: Set("UTC".to_owned()),
        created_at: Set(w.now()),
        ..Default::default()
    };
    let name = f.name.clone().unwrap_or_default();
    apply(
        &mut am,
        EventFields {
            slug: None,
            name: Some(name),
            ..f
        },
    )?;
    let e = am.insert(txn).await?;
    insert_membership(
        txn,
        actor.user.id,
        e.id,
        Role::Organizer,
        None,
        "[]",
        w.now(),
    )
    .await?;
    w.append(
        Entry::new("event.created", "event", &e.public_id)
            .by(actor.public_id())
            .in_event(&e.external_id)
            .with(json!({ "slug": e.slug, "name": e.name, "first_organizer": actor.public_id() })),
    )
    .await?;
    Ok(e)
}

pub async fn update_event(
    w: &Write,
    org: Organizer<'_>,
    f: EventFields,
) -> AppResult<event::Model> {
    let (txn, actor, e) = (w.txn(), org.actor(), org.event());
    if let Some(s) = &f.slug
        && slug_taken(txn, s, Some(e.id)).await?
    {
        return Err(AppError::conflict("an event with this slug exists"));
    }
    let changed: Vec<&str> = [
        ("slug", f.slug.is_some()),
        ("name", f.name.is_some()),
        ("submissionsOpen", f.submissions_open.is_some()),
        ("submissionsClose", f.submissions_close.is_some()),
        ("judgingOpen", f.judging_open.is_some()),
        ("judgingClose", f.judging_close.is_some()),
        ("votingOpen", f.voting_open.is_some()),
        ("votingClose", f.voting_close.is_some()),
        ("reviewsPerProject", f.reviews_per_project.is_some()),
        ("maxTeamSize", f.max_team_size.is_some()),
        ("commentsToTeams", f.comments_to_teams.is_some()),
        ("registration", f.registration.is_some()),
        ("timeZone", f.time_zone.is_some()),
    ]
    .into_iter()
    .filter_map(|(k, set)| set.then_some(k))
    .collect();
    let mut am = e.clone().into_active_model();
    apply(&mut am, f)?;
    let e = am.update(txn).await?;
    w.append(
        Entry::new("event.updated", "event", &e.public_id)
            .by(actor.public_id())
            .in_event(&e.external_id)
            .with(json!({ "fields": changed })),
    )
    .await?;
    Ok(e)
}

pub async fn insert_membership<C: ConnectionTrait>(
    txn: &C,
    user_id: i64,
    event_id: i64,
    role: Role,
    external_id: Option<String>,
    judge_tracks: &str,
    at: DateTime<Utc>,
) -> AppResult<membership::Model> {
    Ok(membership::ActiveModel {
        public_id: Set(public_id("mem")),
        user_id: Set(user_id),
        event_id: Set(event_id),
        role: Set(role),
        external_id: Set(external_id),
        judge_tracks: Set(judge_tracks.to_owned()),
        created_at: Set(at),
        ..Default::default()
    }
    .insert(txn)
    .await?)
}

async fn find_membership<C: ConnectionTrait>(
    txn: &C,
    user_id: i64,
    event_id: i64,
    role: Role,
) -> AppResult<Option<membership::Model>> {
    Ok(membership::Entity::find_in_role(event_id, role)
        .filter(membership::Column::UserId.eq(user_id))
        .one(txn)
        .await?)
}

/// Nobody judges an event in which they are on a team.
pub async fn check_can_judge<C: ConnectionTrait>(
    txn: &C,
    user_id: i64,
    event_id: i64,
) -> AppResult<()> {
    let on_team = team_member::Entity::find()
        .filter(team_member::Column::UserId.eq(user_id))
        .filter(team_member::Column::EventId.eq(event_id))
        .count(txn)
        .await?
        > 0;
    if on_team {
        return Err(AppError::conflict(
            "this person is on a team in this event and cannot judge it",
        ));
    }
    Ok(())
}

/// Grants `role` in `event` to the account with `email` (organizers and site admins).
pub async fn grant_role(
    w: &Write,
    org: Organizer<'_>,
    email: &str,
    role: Role,
    external_id: Option<String>,
    tracks: Vec<String>,
) -> AppResult<membership::Model> {
    let (txn, actor, e) = (w.txn(), org.actor(), org.event());
    let email = validate::email("email", email)?;
    let external_id = external_id
        .map(|x| validate::external_id("externalId", &x))
        .transpose()?;
    let u = super::user_by_email(txn, &email).await?.ok_or_else(|| {
        AppError::bad_input(
            "email",
            "no account has this email; ask them to sign up first",
        )
    })?;
    // Someone signed up with this address without proving it is theirs. (Accounts an
    // import made have no password: nobody holds them until their invitation is used.)
    if u.email_confirmed_at.is_none() && u.password_hash.is_some() {
        return Err(AppError::conflict(
            "this account has not confirmed its email address, so it may not be whose you \
             think: invite the address instead (inviteToEvent)",
        ));
    }
    if find_membership(txn, u.id, e.id, role).await?.is_some() {
        return Err(AppError::conflict("this person already holds this role"));
    }
    let mut track_ids = Vec::new();
    if role == Role::Judge {
        check_can_judge(txn, u.id, e.id).await?;
        for t in &tracks {
            let tr = super::find_track(txn, t, Some(e.id))
                .await?
                .filter(|tr| tr.event_id == e.id)
                .ok_or_else(|| {
                    AppError::bad_input("tracks", format!("no track {t} in this event"))
                })?;
            track_ids.push(tr.id);
        }
    } else if !tracks.is_empty() {
        return Err(AppError::bad_input("tracks", "only judges cover tracks"));
    }
    if let Some(x) = &external_id
        && membership::Entity::find_in_role(e.id, role)
            .filter(membership::Column::ExternalId.eq(x))
            .count(txn)
            .await?
            > 0
    {
        return Err(AppError::conflict(
            "this external id is taken in this event",
        ));
    }
    let m = insert_membership(
        txn,
        u.id,
        e.id,
        role,
        external_id,
        &serde_json::to_string(&track_ids).unwrap_or_else(|_| "[]".into()),
        w.now(),
    )
    .await?;
    w.append(
        Entry::new("membership.granted", "membership", &m.public_id)
            .by(actor.public_id())
            .in_event(&e.external_id)
            .with(json!({ "user": u.public_id, "role": role.to_value() })),
    )
    .await?;
    Ok(m)
}

/// Revokes a role; the last organizer of an event cannot be removed.
pub async fn revoke_role(w: &Write, org: Organizer<'_>, email: &str, role: Role) -> AppResult<()> {
    let (txn, actor, e) = (w.txn(), org.actor(), org.event());
    let email = validate::email("email", email)?;
    let u = super::user_by_email(txn, &email)
        .await?
        .ok_or(AppError::NotFound("membership"))?;
    let m = find_membership(txn, u.id, e.id, role)
        .await?
        .ok_or(AppError::NotFound("membership"))?;
    if role == Role::Organizer {
        let organizers = membership::Entity::find_organizers(e.id).count(txn).await?;
        if organizers <= 1 {
            return Err(AppError::conflict(
                "the last organizer of an event cannot be removed",
            ));
        }
    }
    let (assignments, teams) = release_role(txn, e, &u, &m, role).await?;
    membership::Entity::delete_by_id(m.id).exec(txn).await?;
    w.append(
        Entry::new("membership.revoked", "membership", &m.public_id)
            .by(actor.public_id())
            .in_event(&e.external_id)
            .with(json!({
                "user": u.public_id,
                "role": role.to_value(),
                "assignments_removed": assignments,
                "teams_left": teams,
            })),
    )
    .await?;
    Ok(())
}

/// What revoking a role takes with it, before the membership row goes:
///
/// - a judge: their unscored assignments, their recusals and their pairwise skips. A judge
///   who has saved a review (draft or submitted) or made a comparison is refused with
///   CONFLICT: reviews and comparisons are the record of the judging and stay; recuse the
///   judge from teams instead, or leave the role.
/// - a participant: their place on the event's team, so they lose write access to its
///   project. The team and its project stay (an organizer action; audited).
/// - an organizer: nothing else (the last organizer is refused before this).
///
/// Returns (assignments removed, teams left).
async fn release_role<C: ConnectionTrait>(
    txn: &C,
    e: &event::Model,
    u: &entity::user::Model,
    m: &membership::Model,
    role: Role,
) -> AppResult<(u64, u64)> {
    use entity::{assignment, comparison, comparison_skip, recusal, review, team_member};
    match role {
        Role::Judge => {
            let reviews = review::Entity::find()
                .filter(review::Column::JudgeId.eq(m.id))
                .count(txn)
                .await?;
            if reviews > 0 {
                return Err(AppError::conflict(format!(
                    "this judge has saved {reviews} review(s), which stay part of the record; \
                     recuse the judge from teams instead"
                )));
            }
            let comparisons = comparison::Entity::find()
                .filter(comparison::Column::JudgeId.eq(m.id))
                .count(txn)
                .await?;
            if comparisons > 0 {
                return Err(AppError::conflict(format!(
                    "this judge has made {comparisons} comparison(s), which stay part of the \
                     record; recuse the judge from teams instead"
                )));
            }
            comparison_skip::Entity::delete_many()
                .filter(comparison_skip::Column::JudgeId.eq(m.id))
                .exec(txn)
                .await?;
            recusal::Entity::delete_many()
                .filter(recusal::Column::JudgeId.eq(m.id))
                .exec(txn)
                .await?;
            let removed = assignment::Entity::delete_many()
                .filter(assignment::Column::JudgeId.eq(m.id))
                .exec(txn)
                .await?;
            Ok((removed.rows_affected, 0))
        }
        Role::Participant => {
            let left = team_member::Entity::delete_many()
                .filter(team_member::Column::EventId.eq(e.id))
                .filter(team_member::Column::UserId.eq(u.id))
                .exec(txn)
                .await?;
            Ok((0, left.rows_affected))
        }
        Role::Organizer => Ok((0, 0)),
    }
}

/// A signed-in person registers for an event as a participant, as the event's
/// registration allows: `open` lets anyone, `invite_only` and `closed` nobody (FORBIDDEN;
/// invited people join through their invitation).
pub async fn register(w: &Write, e: &event::Model) -> AppResult<membership::Model> {
    let (txn, actor) = (w.txn(), w.actor()?);
    match e.registration {
        event::Registration::Open => {}
        event::Registration::InviteOnly => {
            return Err(AppError::forbidden(
                "this event is by invitation only: ask its organizers for an invitation",
            ));
        }
        event::Registration::Closed => {
            return Err(AppError::forbidden("registration for this event is closed"));
        }
    }
    if find_membership(txn, actor.user.id, e.id, Role::Participant)
        .await?
        .is_some()
    {
        return Err(AppError::conflict(
            "you are already registered for this event",
        ));
    }
    let m = insert_membership(
        txn,
        actor.user.id,
        e.id,
        Role::Participant,
        None,
        "[]",
        w.now(),
    )
    .await?;
    w.append(
        Entry::new("membership.registered", "membership", &m.public_id)
            .by(actor.public_id())
            .in_event(&e.external_id),
    )
    .await?;
    Ok(m)
}

pub async fn create_track(
    w: &Write,
    org: Organizer<'_>,
    name: &str,
    external_id: Option<String>,
) -> AppResult<track::Model> {
    let (txn, actor, e) = (w.txn(), org.actor(), org.event());
    let name = validate::name("name", name, validate::NAME_MAX)?;
    let external_id = match external_id {
        Some(x) => validate::external_id("externalId", &x)?,
        None => public_id("trk"),
    };
    if track::Entity::find()
        .filter(track::Column::EventId.eq(e.id))
        .filter(track::Column::ExternalId.eq(&external_id))
        .count(txn)
        .await?
        > 0
    {
        return Err(AppError::conflict(
            "a track with this external id exists in this event",
        ));
    }
    let t = track::ActiveModel {
        public_id: Set(public_id("trk")),
        event_id: Set(e.id),
        external_id: Set(external_id),
        name: Set(name),
        ..Default::default()
    }
    .insert(txn)
    .await?;
    w.append(
        Entry::new("track.created", "track", &t.public_id)
            .by(actor.public_id())
            .in_event(&e.external_id)
            .with(json!({ "name": t.name })),
    )
    .await?;
    Ok(t)
}

/// `deleteEvent`: an organizer (or a site administrator) deletes an event that has no final
/// publication, typing its slug again to confirm. The event is archived (see the migration
/// `m20261203_000002_archived_events` for why not deleted): hidden from every query and
/// mutation, its slug freed (it becomes the event's public id), its webhooks switched off
/// and its open invitations revoked; its rows and its audit history stay, so the chain
/// still verifies. CONFLICT once a final publication exists (the results are published for
/// good and a bundle may cite them); BAD_USER_INPUT on `confirm` unless it is the slug.
pub async fn delete_event(w: &Write, org: Organizer<'_>, confirm: &str) -> AppResult<()> {
    let (txn, actor, e) = (w.txn(), org.actor(), org.event());
    if confirm.trim() != e.slug {
        return Err(AppError::bad_input(
            "confirm",
            "type the event's slug again to confirm the deletion",
        ));
    }
    // The write read the event locked, unarchived: a concurrent deletion has been waited
    // for and would have made it NOT_FOUND there.
    let published = result_publication::Entity::find()
        .filter(result_publication::Column::EventId.eq(e.id))
        .filter(result_publication::Column::IsFinal.eq(true))
        .count(txn)
        .await?;
    if published > 0 {
        return Err(AppError::conflict(
            "this event's results are published as final: it cannot be deleted",
        ));
    }
    let t = w.now();
    event::Entity::update_many()
        .col_expr(event::Column::ArchivedAt, Expr::value(Some(t)))
        .col_expr(event::Column::Slug, Expr::value(e.public_id.clone()))
        .filter(event::Column::Id.eq(e.id))
        .exec(txn)
        .await?;
    let webhooks = webhook::Entity::update_many()
        .col_expr(webhook::Column::Active, Expr::value(false))
        .filter(webhook::Column::EventId.eq(e.id))
        .filter(webhook::Column::Active.eq(true))
        .exec(txn)
        .await?
        .rows_affected;
    let invitations = invitation::Entity::update_many()
        .col_expr(invitation::Column::RevokedAt, Expr::value(Some(t)))
        .filter(invitation::Column::EventId.eq(e.id))
        .filter(invitation::Column::RedeemedAt.is_null())
        .filter(invitation::Column::RevokedAt.is_null())
        .exec(txn)
        .await?
        .rows_affected;
    w.append(
        Entry::new("event.deleted", "event", &e.public_id)
            .by(actor.public_id())
            .in_event(&e.external_id)
            .with(json!({
                "slug": e.slug,
                "webhooks_switched_off": webhooks,
                "invitations_revoked": invitations,
            })),
    )
    .await?;
    Ok(())
}
