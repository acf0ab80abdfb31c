//! The rubric: the criteria an organizer defines (`saveCriterion`, `removeCriterion`).

use entity::{criterion, review};
use sea_orm::{
    ActiveModelTrait, ActiveValue::Set, ColumnTrait, ConnectionTrait, EntityTrait, IntoActiveModel,
    PaginatorTrait, QueryFilter,
};
use serde_json::json;

use crate::audit::Entry;
use crate::crypto::public_id;
use crate::domain::{Organizer, Write, validate};
use crate::error::{AppError, AppResult};

/// A criterion as an organizer defines it.
#[derive(Debug, Clone)]
pub struct CriterionFields {
    pub key: String,
    pub name: String,
    pub weight: f64,
    pub min: i32,
    pub max: i32,
    pub position: i32,
    /// What judges should look for; `None` keeps the current text (empty for a new one).
    pub description: Option<String>,
}

/// The longest criterion description.
pub const CRITERION_DESCRIPTION_MAX: usize = 2_000;

async fn any_score<C: ConnectionTrait>(db: &C, event_id: i64) -> AppResult<bool> {
    Ok(review::Entity::find()
        .filter(review::Column::EventId.eq(event_id))
        .count(db)
        .await?
        > 0)
}

/// The rules a criterion's fields satisfy, for `saveCriterion` and the importer alike.
pub(crate) fn check_criterion(f: &CriterionFields) -> AppResult<()> {
    let key_ok = !f.key.is_empty()
        && f.key.len() <= 32
        && f.key
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_');
    if !key_ok {
        return Err(AppError::bad_input(
            "key",
            "must be 1-32 lower-case letters, digits or '_'",
        ));
    }
    validate::name("name", &f.name, validate::NAME_MAX)?;
    if let Some(d) = &f.description {
        validate::text("description", d, CRITERION_DESCRIPTION_MAX)?;
    }
    if !(f.weight.is_finite() && f.weight > 0.0) {
        return Err(AppError::bad_input(
            "weight",
            format!(
                "must be a positive number for the criterion {:?} (it is {})",
                f.key, f.weight
            ),
        ));
    }
    if f.min >= f.max {
        return Err(AppError::bad_input(
            "max",
            format!(
                "must be greater than min ({}) for the criterion {:?} (it is {})",
                f.min, f.key, f.max
            ),
        ));
    }
    Ok(())
}

/// Creates or updates a criterion by key. Once any score exists in the event, criteria
/// cannot be added, reweighted or re-ranged (renaming and reordering are fine).
pub async fn set_criterion(
    w: &Write,
    org: Organizer<'_>,
    f: CriterionFields,
) -> AppResult<criterion::Model> {
    let (txn, actor, e) = (w.txn(), org.actor(), org.event());
    check_criterion(&f)?;
    let scored = any_score(txn, e.id).await?;
    let existing = criterion::Entity::find()
        .filter(criterion::Column::EventId.eq(e.id))
        .filter(criterion::Column::Key.eq(&f.key))
        .one(txn)
        .await?;
    let c = match existing {
        Some(c) => {
            let reshaped = c.weight != f.weight || c.min_score != f.min || c.max_score != f.max;
            if scored && reshaped {
                return Err(AppError::conflict(
                    "scores exist in this event: criteria can be renamed or reordered, not reweighted or re-ranged",
                ));
            }
            let mut am = c.into_active_model();
            am.name = Set(f.name.trim().to_owned());
            am.weight = Set(f.weight);
            am.min_score = Set(f.min);
            am.max_score = Set(f.max);
            am.position = Set(f.position);
            if let Some(d) = &f.description {
                am.description = Set(d.trim().to_owned());
            }
            am.update(txn).await?
        }
        None => {
            if scored {
                return Err(AppError::conflict(
                    "scores exist in this event: criteria cannot be added",
                ));
            }
            criterion::ActiveModel {
                public_id: Set(public_id("crit")),
                event_id: Set(e.id),
                key: Set(f.key.clone()),
                name: Set(f.name.trim().to_owned()),
                weight: Set(f.weight),
                min_score: Set(f.min),
                max_score: Set(f.max),
                position: Set(f.position),
                description: Set(f.description.as_deref().unwrap_or("").trim().to_owned()),
                ..Default::default()
            }
            .insert(txn)
            .await?
        }
    };
    w.append(
        Entry::new("criterion.saved", "criterion", &c.public_id)
            .by(actor.public_id())
            .in_event(&e.external_id)
            .with(json!({ "key": c.key, "weight": c.weight, "min": c.min_score, "max": c.max_score, "position": c.position })),
    )
    .await?;
    Ok(c)
}

pub async fn remove_criterion(w: &Write, org: Organizer<'_>, key: &str) -> AppResult<()> {
    let (txn, actor, e) = (w.txn(), org.actor(), org.event());
    if any_score(txn, e.id).await? {
        return Err(AppError::conflict(
            "scores exist in this event: criteria cannot be removed",
        ));
    }
    let c = criterion::Entity::find()
        .filter(criterion::Column::EventId.eq(e.id))
        .filter(criterion::Column::Key.eq(key))
        .one(txn)
        .await?
        .ok_or(AppError::NotFound("criterion"))?;
    criterion::Entity::delete_by_id(c.id).exec(txn).await?;
    w.append(
        Entry::new("criterion.removed", "criterion", &c.public_id)
            .by(actor.public_id())
            .in_event(&e.external_id)
            .with(json!({ "key": c.key })),
    )
    .await?;
    Ok(())
}
