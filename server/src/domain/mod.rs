//! The business rules. Each mutation is a function that takes the write context
//! ([`Write`]: the open transaction, the actor, and the clock read once), checks its rules
//! against what the transaction reads (the event too, read and locked in it), writes, and
//! appends exactly one audit entry ([`Write::append`]). Organizer-only rules take an
//! [`Organizer`], which only [`Write::organizer`] makes. The caller commits; side effects
//! (subscriptions) follow the commit.

use std::collections::HashMap;

use chrono::{DateTime, Utc};
use entity::{event, membership, project, team, team_member, track, user};
use sea_orm::{ColumnTrait, ConnectionTrait, EntityTrait, QueryFilter, QuerySelect};

use crate::error::{AppError, AppResult};

pub mod accounts;
pub mod calibration_jobs;
pub mod checklist;
pub mod comments;
pub mod devpost;
pub mod erasure;
pub mod events;
pub mod export;
pub mod idempotency;
pub mod import;
pub mod invitation_links;
pub mod invitations;
pub mod judge_sign_in;
pub mod judges;
pub mod judging;
pub mod links;
pub mod moderation;
pub mod my_events;
pub mod outbox;
pub mod prizes;
pub mod projects;
pub mod proofs;
pub mod records;
pub mod recovery;
pub mod results;
pub mod setup;
pub mod tables;
pub mod teams;
pub mod throttle;
pub mod tracks;
pub mod validate;
pub mod voting;
pub mod webhooks;
pub mod write;

pub use write::{Organizer, Write};

/// Now, by the database's clock, read in `db`. Every write reads it once, as
/// [`Write::now`], and passes that on; this is for reads that are part of no write (the
/// state of a link, whether a credential is still live). See [`crate::db::now`] for why
/// the database's clock and what it reads on each backend.
pub async fn clock<C: ConnectionTrait>(db: &C) -> AppResult<DateTime<Utc>> {
    Ok(crate::db::now(db).await?)
}

pub use entity::membership::Role;

/// What one user may do where: their roles per event and their team per event. Loaded from
/// membership rows only, never from request arguments.
#[derive(Debug, Default, Clone)]
pub struct Access {
    pub user_id: i64,
    pub site_admin: bool,
    roles: HashMap<i64, Vec<Role>>,
    teams: HashMap<i64, i64>,
}

impl Access {
    /// Loads every membership and team membership of `user` (two statements).
    pub async fn load<C: ConnectionTrait>(db: &C, user: &user::Model) -> AppResult<Access> {
        let mut access = Access {
            user_id: user.id,
            site_admin: user.is_site_admin,
            ..Default::default()
        };
        let rows = membership::Entity::find()
            .filter(membership::Column::UserId.eq(user.id))
            .all(db)
            .await?;
        for m in rows {
            access.roles.entry(m.event_id).or_default().push(m.role);
        }
        let teams = team_member::Entity::find()
            .filter(team_member::Column::UserId.eq(user.id))
            .all(db)
            .await?;
        for t in teams {
            access.teams.insert(t.event_id, t.team_id);
        }
        Ok(access)
    }

    pub fn has(&self, event_id: i64, role: Role) -> bool {
        self.roles.get(&event_id).is_some_and(|r| r.contains(&role))
    }
    pub fn is_member(&self, event_id: i64) -> bool {
        self.roles.get(&event_id).is_some_and(|r| !r.is_empty())
    }
    /// Organizers of the event, and site admins everywhere.
    pub fn is_organizer(&self, event_id: i64) -> bool {
        self.site_admin || self.has(event_id, Role::Organizer)
    }
    pub fn team_in(&self, event_id: i64) -> Option<i64> {
        self.teams.get(&event_id).copied()
    }
    pub fn on_team(&self, event_id: i64, team_id: i64) -> bool {
        self.team_in(event_id) == Some(team_id)
    }
    /// Can this user see `p` at all? Submitted projects are public; drafts and withdrawn
    /// projects belong to their team and the organizers.
    pub fn can_see_project(&self, p: &project::Model) -> bool {
        p.in_gallery() || self.on_team(p.event_id, p.team_id) || self.is_organizer(p.event_id)
    }
}

/// The authenticated user on whose behalf a mutation runs.
#[derive(Debug, Clone)]
pub struct Actor {
    pub user: user::Model,
}

impl Actor {
    pub fn public_id(&self) -> &str {
        &self.user.public_id
    }
}

/// Roles of `user_id` in `event_id`, read inside the caller's transaction.
pub async fn roles_in<C: ConnectionTrait>(
    db: &C,
    user_id: i64,
    event_id: i64,
) -> AppResult<Vec<Role>> {
    let rows = membership::Entity::find()
        .filter(membership::Column::UserId.eq(user_id))
        .filter(membership::Column::EventId.eq(event_id))
        .all(db)
        .await?;
    Ok(rows.iter().map(|m| m.role).collect())
}

/// Whether `actor` organizes `event` (or is a site admin).
pub async fn is_organizer<C: ConnectionTrait>(
    db: &C,
    actor: &Actor,
    event: &event::Model,
) -> AppResult<bool> {
    Ok(actor.user.is_site_admin
        || roles_in(db, actor.user.id, event.id)
            .await?
            .contains(&Role::Organizer))
}

/// Locks the event row for the rest of the transaction (PostgreSQL; SQLite's write
/// transaction already excludes other writers). Rules that span several rows of one event
/// (the last organizer, judge-not-on-a-team) take this lock before they read.
pub async fn lock_event<C: ConnectionTrait>(db: &C, event_id: i64) -> AppResult<event::Model> {
    event::Entity::find_by_id(event_id)
        .lock_exclusive()
        .one(db)
        .await?
        .ok_or(AppError::NotFound("event"))
}

/// The event with `slug`; NOT_FOUND when none has it, or it was deleted (archived).
pub async fn event_by_slug<C: ConnectionTrait>(db: &C, slug: &str) -> AppResult<event::Model> {
    event::Entity::find()
        .filter(event::Column::Slug.eq(slug))
        .filter(event::Column::ArchivedAt.is_null())
        .one(db)
        .await?
        .ok_or(AppError::NotFound("event"))
}

/// The ids of the deleted (archived) events, as a subquery.
pub fn archived_events() -> sea_orm::sea_query::SelectStatement {
    sea_orm::sea_query::Query::select()
        .column(event::Column::Id)
        .from(event::Entity)
        .and_where(event::Column::ArchivedAt.is_not_null())
        .to_owned()
}

/// Resolves an `ID` argument: an opaque public id, or an external id that names exactly
/// one row (optionally within one event).
macro_rules! resolver {
    ($fn:ident, $entity:ident, $what:literal) => {
        pub async fn $fn<C: ConnectionTrait>(
            db: &C,
            id: &str,
            event_id: Option<i64>,
        ) -> AppResult<Option<$entity::Model>> {
            use sea_orm::Condition;
            let mut by_external = Condition::all().add($entity::Column::ExternalId.eq(id));
            if let Some(e) = event_id {
                by_external = by_external.add($entity::Column::EventId.eq(e));
            }
            let mut rows = $entity::Entity::find()
                .filter(
                    Condition::any()
                        .add($entity::Column::PublicId.eq(id))
                        .add(by_external),
                )
                // Nothing of a deleted (archived) event is found.
                .filter($entity::Column::EventId.not_in_subquery(archived_events()))
                .limit(2)
                .all(db)
                .await?;
            if let Some(i) = rows.iter().position(|r| r.public_id == id) {
                return Ok(Some(rows.swap_remove(i)));
            }
            match rows.len() {
                0 => Ok(None),
                1 => Ok(rows.pop()),
                _ => Err(AppError::bad_input(
                    "id",
                    concat!(
                        "this external id names more than one ",
                        $what,
                        "; use its id"
                    ),
                )),
            }
        }
    };
}

resolver!(find_project, project, "project");
resolver!(find_track, track, "track");
resolver!(find_team, team, "team");

pub async fn user_by_email<C: ConnectionTrait>(
    db: &C,
    email: &str,
) -> AppResult<Option<user::Model>> {
    Ok(user::Entity::find()
        .filter(user::Column::Email.eq(email.trim().to_lowercase()))
        .one(db)
        .await?)
}

/// Checks that a write to the event's content happens inside its submission window, at
/// `at`: [`clock`], read inside the transaction.
pub fn require_submissions_open(e: &event::Model, at: DateTime<Utc>) -> AppResult<()> {
    if at < e.submissions_open {
        return Err(AppError::WindowClosed(
            "submissions are not open yet".into(),
        ));
    }
    if at >= e.submissions_close {
        return Err(AppError::WindowClosed(
            "the submission deadline has passed".into(),
        ));
    }
    Ok(())
}

pub fn json_list(raw: &str) -> Vec<String> {
    serde_json::from_str(raw).unwrap_or_default()
}

pub fn json_ids(raw: &str) -> Vec<i64> {
    serde_json::from_str(raw).unwrap_or_default()
}
