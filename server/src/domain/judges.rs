//! Who judges an event, and the rubric they score by: the reads that judging (assignments,
//! reviews) and results (calibration) both need, kept here so that neither imports the
//! other.
//!
//! A judge is a `membership` row with role `judge`; fixtures name judges by the
//! membership's external id (e.g. `jdg_01`).

use entity::{criterion, membership};
use sea_orm::{ColumnTrait, ConnectionTrait, EntityTrait, QueryFilter, QueryOrder};

use crate::error::{AppError, AppResult};

/// The identifier a judge carries in calibration inputs and results: the fixture's external
/// id when it has one (e.g. `jdg_01`), else the membership's public id.
pub fn judge_key(m: &membership::Model) -> String {
    m.external_id.clone().unwrap_or_else(|| m.public_id.clone())
}

/// The event's criteria, in rubric order.
pub async fn rubric<C: ConnectionTrait>(db: &C, event_id: i64) -> AppResult<Vec<criterion::Model>> {
    Ok(criterion::Entity::find()
        .filter(criterion::Column::EventId.eq(event_id))
        .order_by_asc(criterion::Column::Position)
        .order_by_asc(criterion::Column::Key)
        .all(db)
        .await?)
}

/// Every judge membership of `event_id`.
pub async fn judges_of_event<C: ConnectionTrait>(
    db: &C,
    event_id: i64,
) -> AppResult<Vec<membership::Model>> {
    Ok(membership::Entity::find_judges(event_id).all(db).await?)
}

/// The judge membership of `user_id` in `event_id`, if they judge it.
pub async fn judge_of_user<C: ConnectionTrait>(
    db: &C,
    user_id: i64,
    event_id: i64,
) -> AppResult<Option<membership::Model>> {
    Ok(membership::Entity::find_judges(event_id)
        .filter(membership::Column::UserId.eq(user_id))
        .one(db)
        .await?)
}

/// Resolves a judge of `event_id` by membership id or external id (e.g. `jdg_01`).
pub async fn find_judge<C: ConnectionTrait>(
    db: &C,
    event_id: i64,
    id: &str,
) -> AppResult<membership::Model> {
    membership::Entity::find_judges(event_id)
        .filter(
            sea_orm::Condition::any()
                .add(membership::Column::PublicId.eq(id))
                .add(membership::Column::ExternalId.eq(id)),
        )
        .one(db)
        .await?
        .ok_or_else(|| AppError::bad_input("judge", "no such judge in this event"))
}
