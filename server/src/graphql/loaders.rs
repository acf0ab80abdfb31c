//! DataLoaders: every parent→child hop a list makes is one `IN (...)` query per batch, so a
//! page of projects costs a constant number of statements, not one per project.
//!
//! Each loader is keyed by a newtype of the id it takes ([`TeamId`], [`UserId`], ...), so
//! handing a team id to a loader of users does not compile. Resolvers reach the request's
//! loaders with [`LoadersExt::loaders`] and load through [`one`], [`maybe`] and [`many`],
//! which map a failed batch to the client's error in one place.

use std::collections::HashMap;
use std::hash::Hash;
use std::sync::Arc;

use async_graphql::Context;
use async_graphql::dataloader::{DataLoader, Loader};
use entity::{
    event, membership, project, result_publication, review, team, team_member, track, user,
};
use sea_orm::{ColumnTrait, EntityTrait, QueryFilter, QueryOrder};

use super::context::CtxExt;
use crate::db::Db;
use crate::domain::judges::judge_key;
use crate::error::AppError;

/// Errors are shared between every waiter of a batch, so they are reference-counted.
pub type LoadError = Arc<sea_orm::DbErr>;

macro_rules! id_keys {
    ($($name:ident: $what:literal),* $(,)?) => {$(
        #[doc = concat!("The row id of ", $what, ", as a loader key.")]
        #[derive(Clone, Copy, Debug, Hash, Eq, PartialEq)]
        pub struct $name(pub i64);
    )*};
}

id_keys!(
    EventId: "an event",
    TrackId: "a track",
    TeamId: "a team",
    UserId: "a user",
    ProjectId: "a project",
    MembershipId: "a membership",
    AssignmentId: "an assignment",
);

macro_rules! by_id_loader {
    ($name:ident, $key:ident, $entity:ident) => {
        pub struct $name(pub Db);

        impl Loader<$key> for $name {
            type Value = $entity::Model;
            type Error = LoadError;

            async fn load(&self, keys: &[$key]) -> Result<HashMap<$key, Self::Value>, Self::Error> {
                let rows = $entity::Entity::find()
                    .filter($entity::Column::Id.is_in(keys.iter().map(|k| k.0)))
                    .all(&self.0.conn)
                    .await
                    .map_err(Arc::new)?;
                Ok(rows.into_iter().map(|r| ($key(r.id), r)).collect())
            }
        }
    };
}

by_id_loader!(EventById, EventId, event);
by_id_loader!(TrackById, TrackId, track);
by_id_loader!(TeamById, TeamId, team);
by_id_loader!(UserById, UserId, user);
by_id_loader!(ProjectById, ProjectId, project);
by_id_loader!(MembershipById, MembershipId, membership);

/// Every key gets a list, empty when no row points at it, so "none" is cached too.
fn grouped<K: Copy + Hash + Eq, V>(
    keys: &[K],
    rows: impl IntoIterator<Item = (K, V)>,
) -> HashMap<K, Vec<V>> {
    let mut out: HashMap<K, Vec<V>> = keys.iter().map(|k| (*k, vec![])).collect();
    for (k, v) in rows {
        out.entry(k).or_default().push(v);
    }
    out
}

/// The people on each team, in joining order.
pub struct TeamMembers(pub Db);

impl Loader<TeamId> for TeamMembers {
    type Value = Vec<user::Model>;
    type Error = LoadError;

    async fn load(&self, keys: &[TeamId]) -> Result<HashMap<TeamId, Self::Value>, Self::Error> {
        let links = team_member::Entity::find()
            .filter(team_member::Column::TeamId.is_in(keys.iter().map(|k| k.0)))
            .order_by_asc(team_member::Column::Id)
            .all(&self.0.conn)
            .await
            .map_err(Arc::new)?;
        let users: HashMap<i64, user::Model> = user::Entity::find()
            .filter(user::Column::Id.is_in(links.iter().map(|l| l.user_id)))
            .all(&self.0.conn)
            .await
            .map_err(Arc::new)?
            .into_iter()
            .map(|u| (u.id, u))
            .collect();
        Ok(grouped(
            keys,
            links.into_iter().filter_map(|l| {
                users
                    .get(&l.user_id)
                    .map(|u| (TeamId(l.team_id), u.clone()))
            }),
        ))
    }
}

/// The events each user holds a role in.
pub struct UserEvents(pub Db);

impl Loader<UserId> for UserEvents {
    type Value = Vec<i64>;
    type Error = LoadError;

    async fn load(&self, keys: &[UserId]) -> Result<HashMap<UserId, Self::Value>, Self::Error> {
        let rows = membership::Entity::find()
            .filter(membership::Column::UserId.is_in(keys.iter().map(|k| k.0)))
            .all(&self.0.conn)
            .await
            .map_err(Arc::new)?;
        Ok(grouped(
            keys,
            rows.into_iter().map(|m| (UserId(m.user_id), m.event_id)),
        ))
    }
}

/// The review of each assignment, if it has one.
pub struct ReviewByAssignment(pub Db);

impl Loader<AssignmentId> for ReviewByAssignment {
    type Value = review::Model;
    type Error = LoadError;

    async fn load(
        &self,
        keys: &[AssignmentId],
    ) -> Result<HashMap<AssignmentId, Self::Value>, Self::Error> {
        let rows = review::Entity::find()
            .filter(review::Column::AssignmentId.is_in(keys.iter().map(|k| k.0)))
            .all(&self.0.conn)
            .await
            .map_err(Arc::new)?;
        Ok(rows
            .into_iter()
            .map(|r| (AssignmentId(r.assignment_id), r))
            .collect())
    }
}

/// Every project of each team (visibility is filtered by the resolver).
pub struct TeamProjects(pub Db);

impl Loader<TeamId> for TeamProjects {
    type Value = Vec<project::Model>;
    type Error = LoadError;

    async fn load(&self, keys: &[TeamId]) -> Result<HashMap<TeamId, Self::Value>, Self::Error> {
        let rows = project::Entity::find()
            .filter(project::Column::TeamId.is_in(keys.iter().map(|k| k.0)))
            .order_by_asc(project::Column::Id)
            .all(&self.0.conn)
            .await
            .map_err(Arc::new)?;
        Ok(grouped(
            keys,
            rows.into_iter().map(|p| (TeamId(p.team_id), p)),
        ))
    }
}

/// The tracks of each event, in creation order.
pub struct EventTracks(pub Db);

impl Loader<EventId> for EventTracks {
    type Value = Vec<track::Model>;
    type Error = LoadError;

    async fn load(&self, keys: &[EventId]) -> Result<HashMap<EventId, Self::Value>, Self::Error> {
        let rows = track::Entity::find()
            .filter(track::Column::EventId.is_in(keys.iter().map(|k| k.0)))
            .order_by_asc(track::Column::Id)
            .all(&self.0.conn)
            .await
            .map_err(Arc::new)?;
        Ok(grouped(
            keys,
            rows.into_iter().map(|t| (EventId(t.event_id), t)),
        ))
    }
}

/// Every review of each project, oldest first (who may read which is the resolver's rule).
pub struct ProjectReviews(pub Db);

impl Loader<ProjectId> for ProjectReviews {
    type Value = Vec<review::Model>;
    type Error = LoadError;

    async fn load(
        &self,
        keys: &[ProjectId],
    ) -> Result<HashMap<ProjectId, Self::Value>, Self::Error> {
        let rows = review::Entity::find()
            .filter(review::Column::ProjectId.is_in(keys.iter().map(|k| k.0)))
            .order_by_asc(review::Column::Id)
            .all(&self.0.conn)
            .await
            .map_err(Arc::new)?;
        Ok(grouped(
            keys,
            rows.into_iter().map(|r| (ProjectId(r.project_id), r)),
        ))
    }
}

/// The latest (highest version) publication of each event that has published results.
pub struct LatestPublication(pub Db);

impl Loader<EventId> for LatestPublication {
    type Value = result_publication::Model;
    type Error = LoadError;

    async fn load(&self, keys: &[EventId]) -> Result<HashMap<EventId, Self::Value>, Self::Error> {
        let rows = result_publication::Entity::find()
            .filter(result_publication::Column::EventId.is_in(keys.iter().map(|k| k.0)))
            .order_by_asc(result_publication::Column::Version)
            .all(&self.0.conn)
            .await
            .map_err(Arc::new)?;
        // Ascending by version, so each event's last insert is its latest publication.
        Ok(rows.into_iter().map(|p| (EventId(p.event_id), p)).collect())
    }
}

/// A project by the name a calibration result gives it: its event and external id.
#[derive(Clone, Debug, Hash, Eq, PartialEq)]
pub struct ProjectRef {
    pub event: i64,
    pub external_id: String,
}

/// Projects by [`ProjectRef`]: a page of a ranking loads the projects on it, not the
/// event's whole roster.
pub struct ProjectByExternalId(pub Db);

impl Loader<ProjectRef> for ProjectByExternalId {
    type Value = project::Model;
    type Error = LoadError;

    async fn load(
        &self,
        keys: &[ProjectRef],
    ) -> Result<HashMap<ProjectRef, Self::Value>, Self::Error> {
        let events: std::collections::BTreeSet<i64> = keys.iter().map(|k| k.event).collect();
        let rows = project::Entity::find()
            .filter(project::Column::EventId.is_in(events))
            .filter(project::Column::ExternalId.is_in(keys.iter().map(|k| k.external_id.as_str())))
            .all(&self.0.conn)
            .await
            .map_err(Arc::new)?;
        Ok(rows
            .into_iter()
            .map(|p| {
                let key = ProjectRef {
                    event: p.event_id,
                    external_id: p.external_id.clone(),
                };
                (key, p)
            })
            .collect())
    }
}

/// The projects and judges of one event by the ids a calibration names them with (a
/// project's external id, [`judge_key`]), to match calibrated rows back to rows.
#[derive(Default)]
pub struct Roster {
    pub projects: HashMap<String, project::Model>,
    pub judges: HashMap<String, membership::Model>,
}

/// Each event's [`Roster`]: the rankings and leaderboards of a request (aliases, several
/// runs) share two statements per batch, not two per field.
pub struct EventRosters(pub Db);

impl Loader<EventId> for EventRosters {
    type Value = Arc<Roster>;
    type Error = LoadError;

    async fn load(&self, keys: &[EventId]) -> Result<HashMap<EventId, Self::Value>, Self::Error> {
        let ids = || keys.iter().map(|k| k.0);
        let projects = project::Entity::find()
            .filter(project::Column::EventId.is_in(ids()))
            .all(&self.0.conn)
            .await
            .map_err(Arc::new)?;
        let judges = membership::Entity::find()
            .filter(membership::Column::EventId.is_in(ids()))
            .filter(membership::Column::Role.eq(membership::Role::Judge))
            .all(&self.0.conn)
            .await
            .map_err(Arc::new)?;
        let mut out: HashMap<EventId, Roster> =
            keys.iter().map(|k| (*k, Roster::default())).collect();
        for p in projects {
            if let Some(r) = out.get_mut(&EventId(p.event_id)) {
                r.projects.insert(p.external_id.clone(), p);
            }
        }
        for j in judges {
            if let Some(r) = out.get_mut(&EventId(j.event_id)) {
                r.judges.insert(judge_key(&j), j);
            }
        }
        Ok(out.into_iter().map(|(k, r)| (k, Arc::new(r))).collect())
    }
}

/// Each event's setup checklist ([`crate::domain::checklist`]): eight grouped counts per
/// batch, however many events a page lists.
pub struct EventChecklists(pub Db);

impl Loader<EventId> for EventChecklists {
    type Value = Vec<crate::domain::checklist::Step>;
    type Error = LoadError;

    async fn load(&self, keys: &[EventId]) -> Result<HashMap<EventId, Self::Value>, Self::Error> {
        let events = event::Entity::find()
            .filter(event::Column::Id.is_in(keys.iter().map(|k| k.0)))
            .all(&self.0.conn)
            .await
            .map_err(Arc::new)?;
        let now = crate::db::now(&self.0.conn).await.map_err(Arc::new)?;
        let lists = crate::domain::checklist::checklists(&self.0.conn, &events, now)
            .await
            .map_err(|e| match e {
                AppError::Db(e) => Arc::new(e),
                other => Arc::new(sea_orm::DbErr::Custom(other.to_string())),
            })?;
        Ok(lists.into_iter().map(|(k, v)| (EventId(k), v)).collect())
    }
}

/// Each judge membership's live standing sign-in (`Membership.standingSignIn`): one
/// statement per batch.
pub struct JudgeSignIns(pub Db);

impl Loader<MembershipId> for JudgeSignIns {
    type Value = entity::judge_sign_in::Model;
    type Error = LoadError;

    async fn load(
        &self,
        keys: &[MembershipId],
    ) -> Result<HashMap<MembershipId, Self::Value>, Self::Error> {
        let rows = crate::domain::judge_sign_in::live_of(&self.0.conn, keys.iter().map(|k| k.0))
            .await
            .map_err(|e| match e {
                AppError::Db(e) => Arc::new(e),
                other => Arc::new(sea_orm::DbErr::Custom(other.to_string())),
            })?;
        Ok(rows
            .into_iter()
            .map(|(k, v)| (MembershipId(k), v))
            .collect())
    }
}

/// The loaders of one request (their caches live as long as the request), one per kind of
/// key, each made on first use: most requests (and every idle websocket, which keeps its
/// connection's data) use a few of them or none, so each is boxed (an unused one is a null
/// pointer, not a loader's worth of bytes in every idle connection).
macro_rules! loaders {
    ($($name:ident: $loader:ident),* $(,)?) => {
        pub struct Loaders {
            db: Db,
            window: std::time::Duration,
            $($name: std::sync::OnceLock<Box<DataLoader<$loader>>>,)*
        }

        impl Loaders {
            /// Loaders for one request (or one websocket connection); `window` is how long
            /// each waits for sibling fields to join a batch (`--loader-batch-ms`).
            pub fn new(db: &Db, window: std::time::Duration) -> Loaders {
                Loaders {
                    db: db.clone(),
                    window,
                    $($name: std::sync::OnceLock::new(),)*
                }
            }

            $(
                pub fn $name(&self) -> &DataLoader<$loader> {
                    self.$name.get_or_init(|| {
                        Box::new(
                            DataLoader::new($loader(self.db.clone()), tokio::spawn)
                                .delay(self.window),
                        )
                    })
                }
            )*
        }
    };
}

loaders! {
    events: EventById,
    tracks: TrackById,
    teams: TeamById,
    users: UserById,
    projects: ProjectById,
    memberships: MembershipById,
    team_members: TeamMembers,
    team_projects: TeamProjects,
    user_events: UserEvents,
    reviews_by_assignment: ReviewByAssignment,
    event_tracks: EventTracks,
    project_reviews: ProjectReviews,
    latest_publication: LatestPublication,
    rosters: EventRosters,
    projects_by_external_id: ProjectByExternalId,
    checklists: EventChecklists,
    judge_sign_ins: JudgeSignIns,
}

/// Access to the request's loaders.
pub trait LoadersExt {
    fn loaders(&self) -> &Loaders;
}

impl LoadersExt for Context<'_> {
    fn loaders(&self) -> &Loaders {
        // Every request's data carries its loaders (see `graphql::request_data`).
        self.data_unchecked::<Loaders>()
    }
}

/// The one mapping of a failed batch to the client's error: UNAVAILABLE when the database
/// could not serve it, INTERNAL otherwise; details logged.
fn load_err(ctx: &Context<'_>, e: LoadError) -> async_graphql::Error {
    if crate::error::is_unavailable(&e) {
        ctx.err(AppError::Unavailable(e.to_string()))
    } else {
        ctx.err(AppError::Internal(e.to_string()))
    }
}

/// Loads the value of `key`, if there is one (batched with its siblings).
pub async fn maybe<K, L>(
    ctx: &Context<'_>,
    loader: &DataLoader<L>,
    key: K,
) -> async_graphql::Result<Option<L::Value>>
where
    K: Send + Sync + Hash + Eq + Clone + 'static,
    L: Loader<K, Error = LoadError>,
{
    loader.load_one(key).await.map_err(|e| load_err(ctx, e))
}

/// Loads the value of `key` (batched with its siblings); NOT_FOUND names `what`.
pub async fn one<K, L>(
    ctx: &Context<'_>,
    loader: &DataLoader<L>,
    key: K,
    what: &'static str,
) -> async_graphql::Result<L::Value>
where
    K: Send + Sync + Hash + Eq + Clone + 'static,
    L: Loader<K, Error = LoadError>,
{
    maybe(ctx, loader, key)
        .await?
        .ok_or_else(|| ctx.err(AppError::NotFound(what)))
}

/// Loads the values of `keys` (batched with their siblings); missing keys are absent.
pub async fn many<K, L>(
    ctx: &Context<'_>,
    loader: &DataLoader<L>,
    keys: impl IntoIterator<Item = K>,
) -> async_graphql::Result<HashMap<K, L::Value>>
where
    K: Send + Sync + Hash + Eq + Clone + 'static,
    L: Loader<K, Error = LoadError>,
{
    loader.load_many(keys).await.map_err(|e| load_err(ctx, e))
}
