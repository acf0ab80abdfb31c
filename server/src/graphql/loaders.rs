//! DataLoaders: every parent→child hop a list makes is one `IN (...)` query per batch, so a
//! page of projects costs a constant number of statements, not one per project.

use std::collections::HashMap;
use std::sync::Arc;

use async_graphql::dataloader::{DataLoader, Loader};
use entity::{event, membership, project, team, team_member, track, user};
use sea_orm::{ColumnTrait, EntityTrait, QueryFilter, QueryOrder};

use crate::db::Db;

/// Errors are shared between every waiter of a batch, so they are reference-counted.
pub type LoadError = Arc<sea_orm::DbErr>;

macro_rules! by_id_loader {
    ($name:ident, $entity:ident) => {
        pub struct $name(pub Db);

        impl Loader<i64> for $name {
            type Value = $entity::Model;
            type Error = LoadError;

            async fn load(&self, keys: &[i64]) -> Result<HashMap<i64, Self::Value>, Self::Error> {
                let rows = $entity::Entity::find()
                    .filter($entity::Column::Id.is_in(keys.iter().copied()))
                    .all(&self.0.conn)
                    .await
                    .map_err(Arc::new)?;
                Ok(rows.into_iter().map(|r| (r.id, r)).collect())
            }
        }
    };
}

by_id_loader!(EventById, event);
by_id_loader!(TrackById, track);
by_id_loader!(TeamById, team);
by_id_loader!(UserById, user);
by_id_loader!(ProjectById, project);
by_id_loader!(MembershipById, membership);

/// The people on each team, in joining order.
pub struct TeamMembers(pub Db);

impl Loader<i64> for TeamMembers {
    type Value = Vec<user::Model>;
    type Error = LoadError;

    async fn load(&self, keys: &[i64]) -> Result<HashMap<i64, Self::Value>, Self::Error> {
        let links = team_member::Entity::find()
            .filter(team_member::Column::TeamId.is_in(keys.iter().copied()))
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
        let mut out: HashMap<i64, Vec<user::Model>> = keys.iter().map(|k| (*k, vec![])).collect();
        for l in links {
            if let Some(u) = users.get(&l.user_id) {
                out.entry(l.team_id).or_default().push(u.clone());
            }
        }
        Ok(out)
    }
}

/// The events each user holds a role in.
pub struct UserEvents(pub Db);

impl Loader<i64> for UserEvents {
    type Value = Vec<i64>;
    type Error = LoadError;

    async fn load(&self, keys: &[i64]) -> Result<HashMap<i64, Self::Value>, Self::Error> {
        let rows = entity::membership::Entity::find()
            .filter(entity::membership::Column::UserId.is_in(keys.iter().copied()))
            .all(&self.0.conn)
            .await
            .map_err(Arc::new)?;
        let mut out: HashMap<i64, Vec<i64>> = keys.iter().map(|k| (*k, vec![])).collect();
        for m in rows {
            out.entry(m.user_id).or_default().push(m.event_id);
        }
        Ok(out)
    }
}

/// The review of each assignment, if it has one.
pub struct ReviewByAssignment(pub Db);

impl Loader<i64> for ReviewByAssignment {
    type Value = entity::review::Model;
    type Error = LoadError;

    async fn load(&self, keys: &[i64]) -> Result<HashMap<i64, Self::Value>, Self::Error> {
        let rows = entity::review::Entity::find()
            .filter(entity::review::Column::AssignmentId.is_in(keys.iter().copied()))
            .all(&self.0.conn)
            .await
            .map_err(Arc::new)?;
        Ok(rows.into_iter().map(|r| (r.assignment_id, r)).collect())
    }
}

/// Every project of each team (visibility is filtered by the resolver).
pub struct TeamProjects(pub Db);

impl Loader<i64> for TeamProjects {
    type Value = Vec<project::Model>;
    type Error = LoadError;

    async fn load(&self, keys: &[i64]) -> Result<HashMap<i64, Self::Value>, Self::Error> {
        let rows = project::Entity::find()
            .filter(project::Column::TeamId.is_in(keys.iter().copied()))
            .order_by_asc(project::Column::Id)
            .all(&self.0.conn)
            .await
            .map_err(Arc::new)?;
        let mut out: HashMap<i64, Vec<project::Model>> =
            keys.iter().map(|k| (*k, vec![])).collect();
        for p in rows {
            out.entry(p.team_id).or_default().push(p);
        }
        Ok(out)
    }
}

/// The loaders of one request (their caches live as long as the request).
pub struct Loaders {
    pub events: DataLoader<EventById>,
    pub tracks: DataLoader<TrackById>,
    pub teams: DataLoader<TeamById>,
    pub users: DataLoader<UserById>,
    pub projects: DataLoader<ProjectById>,
    pub memberships: DataLoader<MembershipById>,
    pub team_members: DataLoader<TeamMembers>,
    pub team_projects: DataLoader<TeamProjects>,
    pub user_events: DataLoader<UserEvents>,
    pub reviews_by_assignment: DataLoader<ReviewByAssignment>,
}

fn batched<T: Loader<i64>>(l: T, window: std::time::Duration) -> DataLoader<T> {
    DataLoader::new(l, tokio::spawn).delay(window)
}

impl Loaders {
    /// Fresh loaders for one request; `window` is how long each waits for sibling fields
    /// to join a batch (`--loader-batch-ms`).
    pub fn new(db: &Db, window: std::time::Duration) -> Loaders {
        Loaders {
            events: batched(EventById(db.clone()), window),
            tracks: batched(TrackById(db.clone()), window),
            teams: batched(TeamById(db.clone()), window),
            users: batched(UserById(db.clone()), window),
            projects: batched(ProjectById(db.clone()), window),
            memberships: batched(MembershipById(db.clone()), window),
            team_members: batched(TeamMembers(db.clone()), window),
            team_projects: batched(TeamProjects(db.clone()), window),
            user_events: batched(UserEvents(db.clone()), window),
            reviews_by_assignment: batched(ReviewByAssignment(db.clone()), window),
        }
    }
}

/// Loads one row by id through `loader` (batched with its siblings); NOT_FOUND names `what`.
pub async fn one<L>(
    ctx: &async_graphql::Context<'_>,
    loader: &DataLoader<L>,
    id: i64,
    what: &'static str,
) -> async_graphql::Result<L::Value>
where
    L: Loader<i64, Error = LoadError>,
{
    use super::context::CtxExt;
    use crate::error::AppError;
    loader
        .load_one(id)
        .await
        .map_err(|e| ctx.err(AppError::Internal(e.to_string())))?
        .ok_or_else(|| ctx.err(AppError::NotFound(what)))
}
