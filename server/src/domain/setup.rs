//! The first-run setup link: on a deployment with no account, `serve` prints a one-time
//! link `{public-url}/setup/{token}` whose holder creates the first account, as site admin
//! (`setUpSite`). It works once, expires after [`SETUP_HOURS`], and stops working as soon
//! as any account exists (however it was made). A restart while there is still no account
//! prints a new link and the old one stops working. Only the token's SHA-256 is stored.
//!
//! Issuing the link is start-up bookkeeping, like creating the signing key, and is not
//! audited; using it is (`site.set_up`).

use chrono::{DateTime, Duration, Utc};
use entity::{setup_link, user};
use sea_orm::{
    ActiveModelTrait, ActiveValue::Set, ColumnTrait, ConnectionTrait, EntityTrait, PaginatorTrait,
    QueryFilter,
};
use serde_json::json;

use super::accounts::{Standing, insert_user, new_session};
use super::links::LinkState;
use super::write::Write;
use super::{clock, validate};
use crate::audit::Entry;
use crate::crypto::{bearer_token, password, sha256_hex};
use crate::db::Db;
use crate::error::{AppError, AppResult};

/// How long a printed setup link works.
pub const SETUP_HOURS: i64 = 24;

/// The path of a setup link under the public URL.
pub fn link(public_url: &str, token: &str) -> String {
    format!("{}/setup/{token}", public_url.trim_end_matches('/'))
}

async fn has_users<C: ConnectionTrait>(db: &C) -> AppResult<bool> {
    Ok(user::Entity::find().count(db).await? > 0)
}

/// At start-up: when no account exists, replaces any earlier setup link with a fresh one
/// and returns its token (to print once, with its expiry); `None` once anyone has an account.
pub async fn issue_if_empty(db: &Db) -> AppResult<Option<(String, DateTime<Utc>)>> {
    // A write with no audit entry: issuing is bookkeeping (see the module doc).
    let w = Write::begin(db, None).await?;
    let (txn, t) = (w.txn(), w.now());
    if has_users(txn).await? {
        return Ok(None);
    }
    setup_link::Entity::delete_many().exec(txn).await?;
    let token = bearer_token("vsu_");
    let expires = t + Duration::hours(SETUP_HOURS);
    setup_link::ActiveModel {
        token_hash: Set(sha256_hex(token.as_bytes())),
        created_at: Set(t),
        expires_at: Set(expires),
        used_at: Set(None),
        ..Default::default()
    }
    .insert(txn)
    .await?;
    w.commit().await?;
    Ok(Some((token, expires)))
}

/// The link's row by its token; NOT_FOUND for a token that never was one (or was replaced).
async fn find<C: ConnectionTrait>(db: &C, token: &str) -> AppResult<setup_link::Model> {
    setup_link::Entity::find()
        .filter(setup_link::Column::TokenHash.eq(sha256_hex(token.trim().as_bytes())))
        .one(db)
        .await?
        .ok_or(AppError::NotFound("setup link"))
}

/// What a setup link is now, without using it: USED once used, REVOKED once some account
/// exists by other means, EXPIRED after its time, else VALID. Reads only (its own reading
/// of the clock; [`set_up_site`] judges the link at its write's now instead).
pub async fn state<C: ConnectionTrait>(
    db: &C,
    token: &str,
) -> AppResult<(LinkState, setup_link::Model)> {
    // A read, part of no write: its own reading of the clock.
    let now = clock(db).await?;
    state_at(db, token, now).await
}

/// [`state`] at `now`.
async fn state_at<C: ConnectionTrait>(
    db: &C,
    token: &str,
    now: DateTime<Utc>,
) -> AppResult<(LinkState, setup_link::Model)> {
    let row = find(db, token).await?;
    let state = if row.used_at.is_some() {
        LinkState::Used
    } else if has_users(db).await? {
        LinkState::Revoked
    } else if row.expires_at <= now {
        LinkState::Expired
    } else {
        LinkState::Valid
    };
    Ok((state, row))
}

/// `setUpSite`: creates the first account as site admin with the setup link and signs it
/// in. Refused: an unknown link NOT_FOUND; a used or expired one, or any account existing
/// already, FORBIDDEN with a sentence that says which.
pub async fn set_up_site(
    w: &Write,
    token: &str,
    email: &str,
    pass: &str,
    display_name: &str,
) -> AppResult<(user::Model, String)> {
    let (txn, t) = (w.txn(), w.now());
    let (state, row) = state_at(txn, token, t).await?;
    match state {
        LinkState::Valid => {}
        LinkState::Used => {
            return Err(AppError::forbidden(
                "this setup link was used already: the site has its admin; log in instead",
            ));
        }
        LinkState::Revoked => {
            return Err(AppError::forbidden(
                "this site is set up already (an account exists); log in instead",
            ));
        }
        LinkState::Expired => {
            return Err(AppError::forbidden(
                "this setup link has expired; restart the server to print a new one",
            ));
        }
    }
    let email = validate::email("email", email)?;
    validate::password("password", pass)?;
    let display_name = validate::name("displayName", display_name, 100)?;
    // The conditional update makes the link single-use, however many requests race.
    let claimed = setup_link::Entity::update_many()
        .col_expr(
            setup_link::Column::UsedAt,
            sea_orm::sea_query::Expr::value(t),
        )
        .filter(setup_link::Column::Id.eq(row.id))
        .filter(setup_link::Column::UsedAt.is_null())
        .exec(txn)
        .await?;
    if claimed.rows_affected != 1 {
        return Err(AppError::forbidden(
            "this setup link was used already: the site has its admin; log in instead",
        ));
    }
    let hash = password::hash(pass).map_err(AppError::Internal)?;
    // Whoever holds the link runs the deployment: they vouch for their own address.
    let u = insert_user(w, email, display_name, hash, Standing::SiteAdmin).await?;
    let session = new_session(w, u.id).await?;
    w.append(
        Entry::new("site.set_up", "user", &u.public_id)
            .by(&u.public_id)
            .with(json!({ "site_admin": true })),
    )
    .await?;
    Ok((u, session))
}
