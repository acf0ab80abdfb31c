//! What every mutation shares: [`begin`] one write ([`crate::domain::Write`]: its
//! transaction, the caller as its actor, one reading of the clock), [`commit`] it, and
//! [`idempotent`], which runs a write so that a retry with the same idempotency key returns
//! what the first request created instead of writing again. A mutation reads its event
//! through the write (`Write::event`), never before it begins.

use async_graphql::Context;
use entity::{
    calibration_job, calibration_run, comment, comparison, event, membership, prize, project,
    result_publication, track,
};
use sea_orm::{ColumnTrait, DatabaseTransaction, EntityTrait, QueryFilter};

use crate::domain::idempotency::{self, Key};
use crate::domain::{Actor, Write};
use crate::error::{AppError, AppResult, is_unique_violation};
use crate::graphql::context::{CtxExt, ResultExt};

/// Begins the mutation's write, on behalf of the signed-in caller (if any).
pub(super) async fn begin(ctx: &Context<'_>) -> async_graphql::Result<Write> {
    let actor = ctx.rc().user().map(|u| Actor { user: u.clone() });
    Write::begin(ctx.db(), actor).await.gql(ctx)
}

/// Commits, then forgets the caller's cached access (the write may have changed it) and
/// wakes the webhook worker: the write's audit append may have written deliveries (waking
/// costs the worker one indexed query when it did not).
pub(super) async fn commit(ctx: &Context<'_>, w: Write) -> async_graphql::Result<()> {
    w.commit().await.gql(ctx)?;
    ctx.rc().refresh().await;
    ctx.services().webhook_wake.wake();
    Ok(())
}

/// The team a mutation names by id or external id, read in its transaction.
pub(super) async fn team_of(txn: &DatabaseTransaction, id: &str) -> AppResult<entity::team::Model> {
    crate::domain::find_team(txn, id, None)
        .await?
        .ok_or(AppError::NotFound("team"))
}

/// Runs `write` in one transaction and commits it, remembering what it created under `key`.
/// When an earlier request already used `key` with the same input, nothing is written and
/// `write` is not called: that request's result is reloaded and returned again (the same
/// key with a different input is a CONFLICT). Without a key, it is a plain write.
///
/// Requests with one key can also arrive together, each finding no result yet. They all
/// write; the first to commit wins, and each of the others fails on the key's unique index
/// (PostgreSQL holds that insert until the winner commits; SQLite runs one writer at a
/// time). A loser rolls back and answers with the winner's committed result, exactly as a
/// later retry would: see [`replay_winner`]. So every caller with the same key and input
/// gets the same answer, and it is written once. A loser whose own rules refused it after
/// waiting for the winner is answered the same way ([`replay_committed`]).
pub(super) async fn idempotent<T: Replayable>(
    ctx: &Context<'_>,
    actor: &Actor,
    key: Option<Key>,
    write: impl AsyncFnOnce(&Write) -> AppResult<T>,
) -> async_graphql::Result<T> {
    let w = Write::begin(ctx.db(), Some(actor.clone())).await.gql(ctx)?;
    if let Some(k) = &key
        && let Some(id) = idempotency::replay(w.txn(), actor, k).await.gql(ctx)?
    {
        return T::reload(w.txn(), &id).await.gql(ctx);
    }
    let written = async {
        let created = write(&w).await?;
        if let Some(k) = &key {
            idempotency::record(&w, k, created.public_id()).await?;
        }
        Ok::<_, AppError>(created)
    }
    .await;
    let outcome = match written {
        Ok(created) => w.commit().await.map(|()| created),
        Err(e) => {
            // Nothing of a failed write may stay; the connection is reused at once below.
            w.rollback().await;
            Err(e)
        }
    };
    match (outcome, &key) {
        (Ok(created), _) => {
            ctx.rc().refresh().await;
            ctx.services().webhook_wake.wake();
            Ok(created)
        }
        (Err(AppError::Db(e)), Some(k)) if is_unique_violation(&e) => {
            replay_winner(ctx, actor, k, AppError::Db(e)).await
        }
        (Err(e), Some(k)) => replay_committed(ctx, actor, k, e).await,
        (Err(e), None) => Err(e).gql(ctx),
    }
}

/// Answers a keyed request whose write was refused: with the result of a request with the
/// same key and input that has committed meanwhile, else with the refusal. Such a request
/// lost the race to its own retry in another way than a unique violation: the winner held a
/// lock this write waited on (the event's, `Write::event`), so this write's rules then saw
/// the winner's work and refused it (`compareProjects`: "compared this way already"). The
/// key says both are one request, and every copy of it gets the same answer.
async fn replay_committed<T: Replayable>(
    ctx: &Context<'_>,
    actor: &Actor,
    key: &Key,
    refused: AppError,
) -> async_graphql::Result<T> {
    let txn = ctx.db().write().await.gql(ctx)?;
    match idempotency::replay(&txn, actor, key).await {
        Ok(Some(id)) => T::reload(&txn, &id).await.gql(ctx),
        _ => Err(refused).gql(ctx),
    }
}

/// How often a request that lost the race for its idempotency key looks for the winner's
/// result before its own error stands.
const REPLAY_ATTEMPTS: u32 = 3;

/// Answers a request whose write hit a unique violation while it carried `key`: if another
/// request with the key has committed, with that request's result (or CONFLICT when it had
/// a different input), read in a fresh transaction. The violation is reported only once the
/// winner has committed, so the first read normally finds it; the attempts are a bound, not
/// a schedule. When none finds the key, the violation was about something else (say, a
/// name already taken) and `lost` is the answer.
async fn replay_winner<T: Replayable>(
    ctx: &Context<'_>,
    actor: &Actor,
    key: &Key,
    lost: AppError,
) -> async_graphql::Result<T> {
    for attempt in 0..REPLAY_ATTEMPTS {
        if attempt > 0 {
            tokio::time::sleep(std::time::Duration::from_millis(10 << attempt)).await;
        }
        let txn = ctx.db().write().await.gql(ctx)?;
        if let Some(id) = idempotency::replay(&txn, actor, key).await.gql(ctx)? {
            return T::reload(&txn, &id).await.gql(ctx);
        }
    }
    Err(lost).gql(ctx)
}

/// What an idempotent mutation creates: remembered by its public id, and reloaded by it
/// when the same request comes again.
pub(super) trait Replayable: Sized {
    /// The id remembered with the idempotency key.
    fn public_id(&self) -> &str;
    /// What an earlier identical request created; NOT_FOUND if it is gone.
    async fn reload(txn: &DatabaseTransaction, public_id: &str) -> AppResult<Self>;
}

macro_rules! replayable_row {
    ($entity:ident, $what:literal) => {
        impl Replayable for $entity::Model {
            fn public_id(&self) -> &str {
                &self.public_id
            }
            async fn reload(txn: &DatabaseTransaction, public_id: &str) -> AppResult<Self> {
                $entity::Entity::find()
                    .filter($entity::Column::PublicId.eq(public_id))
                    .one(txn)
                    .await?
                    .ok_or(AppError::NotFound($what))
            }
        }
    };
}

replayable_row!(event, "event");
replayable_row!(membership, "membership");
replayable_row!(track, "track");
replayable_row!(project, "project");
replayable_row!(calibration_run, "run");
replayable_row!(calibration_job, "calibration job");
replayable_row!(prize, "prize");
replayable_row!(comment, "comment");
replayable_row!(comparison, "comparison");

/// A publication with the run it publishes.
impl Replayable for (result_publication::Model, calibration_run::Model) {
    fn public_id(&self) -> &str {
        &self.0.public_id
    }
    async fn reload(txn: &DatabaseTransaction, public_id: &str) -> AppResult<Self> {
        let row = result_publication::Entity::find()
            .filter(result_publication::Column::PublicId.eq(public_id))
            .one(txn)
            .await?
            .ok_or(AppError::NotFound("publication"))?;
        let run = calibration_run::Entity::find_by_id(row.run_id)
            .one(txn)
            .await?
            .ok_or(AppError::NotFound("run"))?;
        Ok((row, run))
    }
}

/// A write that creates nothing to return (e.g. `revokeRole`): a replay only says it was
/// done.
impl Replayable for () {
    fn public_id(&self) -> &str {
        ""
    }
    async fn reload(_: &DatabaseTransaction, _: &str) -> AppResult<Self> {
        Ok(())
    }
}
