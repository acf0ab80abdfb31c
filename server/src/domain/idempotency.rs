//! Idempotency keys for scripted mutations: a retry with the same key and the same input
//! returns the original result without writing again; the same key with a different input
//! is a CONFLICT. The key is recorded in the mutation's own transaction.

use entity::idempotency_key;
use sea_orm::{
    ActiveModelTrait, ActiveValue::Set, ColumnTrait, ConnectionTrait, EntityTrait, QueryFilter,
};

use super::{Actor, Write};
use crate::crypto::{canonical_json, sha256_hex};
use crate::error::{AppError, AppResult};

/// A key presented with a mutation, bound to the operation and a digest of its input.
pub struct Key {
    pub key: String,
    pub operation: &'static str,
    pub digest: String,
}

impl Key {
    pub fn new(
        key: Option<String>,
        operation: &'static str,
        input: &serde_json::Value,
    ) -> AppResult<Option<Key>> {
        let Some(key) = key else { return Ok(None) };
        if key.is_empty() || key.len() > 200 {
            return Err(AppError::bad_input(
                "idempotencyKey",
                "must be 1-200 characters",
            ));
        }
        Ok(Some(Key {
            key,
            operation,
            digest: sha256_hex(canonical_json(input).as_bytes()),
        }))
    }
}

/// The stored result of an earlier identical request, if any.
pub async fn replay<C: ConnectionTrait>(
    txn: &C,
    actor: &Actor,
    key: &Key,
) -> AppResult<Option<String>> {
    let found = idempotency_key::Entity::find()
        .filter(idempotency_key::Column::ActorUserId.eq(actor.user.id))
        .filter(idempotency_key::Column::Key.eq(&key.key))
        .one(txn)
        .await?;
    match found {
        None => Ok(None),
        Some(row) if row.operation == key.operation && row.request_digest == key.digest => {
            Ok(Some(row.response))
        }
        Some(_) => Err(AppError::conflict(
            "this idempotency key was used with a different request",
        )),
    }
}

/// Remembers `response` under `key` for the write's actor, in the write.
pub async fn record(w: &Write, key: &Key, response: &str) -> AppResult<()> {
    idempotency_key::ActiveModel {
        actor_user_id: Set(w.actor()?.user.id),
        key: Set(key.key.clone()),
        operation: Set(key.operation.to_owned()),
        request_digest: Set(key.digest.clone()),
        response: Set(response.to_owned()),
        created_at: Set(w.now()),
        ..Default::default()
    }
    .insert(w.txn())
    .await?;
    Ok(())
}
