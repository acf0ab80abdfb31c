//! Recovering and changing an account: password reset, confirming an address (the
//! account's own after sign-up, or a new one), and the owner's changes of password, email
//! and name. Sign-up, log-in, sessions and API tokens are in [`super::accounts`]; these
//! flows share the log-in's throttle ([`super::throttle`]).

use chrono::Duration;
use entity::{api_token, email_confirmation, password_reset, user};
use sea_orm::{
    ActiveModelTrait, ActiveValue::Set, ColumnTrait, ConnectionTrait, EntityTrait, IntoActiveModel,
    QueryFilter, QuerySelect,
};
use serde_json::json;

use super::accounts::{end_sessions, new_session, verify_password};
use super::throttle::{Buckets, forgive_attempt, take_attempt, take_slot};
use super::{Actor, Write, validate};
use crate::audit::Entry;
use crate::crypto::{bearer_token, password, sha256_hex};
use crate::error::{AppError, AppResult};

/// How long a password-reset link works.
pub const RESET_MINUTES: i64 = 30;
/// Reset requests per email, and per client address ([`RESET_ADDRESS_FACTOR`] times as
/// many), per throttle window.
pub const RESET_REQUESTS: i32 = 5;
/// See [`RESET_REQUESTS`].
pub const RESET_ADDRESS_FACTOR: i32 = 4;
/// `requestPasswordReset` answers no sooner than this, whether or not the account exists,
/// so its time says nothing either.
pub const RESET_ANSWER_MS: u64 = 250;

/// `requestPasswordReset`: when an account has `email`, writes a single-use link that works
/// for [`RESET_MINUTES`] to the outbox. The answer is the same, and takes the same time,
/// whether or not the account exists; both append one audit entry. Throttled per email and
/// per address (RATE_LIMITED), counted before anything is looked up.
pub async fn request_password_reset(
    db: &crate::db::Db,
    email: &str,
    client: &str,
    links: &super::outbox::Links,
) -> AppResult<()> {
    let started = tokio::time::Instant::now();
    let email = validate::email("email", email)?;
    {
        // The count is its own write, committed before anything is looked up, and not
        // audited (bookkeeping).
        let w = Write::begin(db, None).await?;
        let (txn, t) = (w.txn(), w.now());
        take_slot(txn, &format!("reset:{email}"), RESET_REQUESTS, t).await?;
        take_slot(
            txn,
            &format!("resetaddr:{client}"),
            RESET_REQUESTS * RESET_ADDRESS_FACTOR,
            t,
        )
        .await?;
        w.commit().await?;
    }
    let w = Write::begin(db, None).await?;
    let entry = match super::user_by_email(w.txn(), &email).await? {
        Some(u) => {
            let token = bearer_token("vr_");
            let t = w.now();
            password_reset::ActiveModel {
                user_id: Set(u.id),
                token_hash: Set(sha256_hex(token.as_bytes())),
                created_at: Set(t),
                expires_at: Set(t + Duration::minutes(RESET_MINUTES)),
                used_at: Set(None),
                ..Default::default()
            }
            .insert(w.txn())
            .await?;
            let message = super::outbox::password_reset(&email, &links.reset(&token));
            super::outbox::enqueue(&w, message, None, None).await?;
            Entry::new("password_reset.requested", "user", &u.public_id)
        }
        // Nothing to send; the entry names the address only by its hash.
        None => Entry::new(
            "password_reset.requested",
            "email",
            &sha256_hex(email.as_bytes()),
        ),
    };
    w.append(entry).await?;
    w.commit().await?;
    tokio::time::sleep_until(started + std::time::Duration::from_millis(RESET_ANSWER_MS)).await;
    Ok(())
}

/// Why a reset link that is not live any more refuses: it was used, or it ended when the
/// account's password changed (see [`end_reset_links`]).
const LINK_ENDED: &str = "this reset link no longer works: it was used, or the password changed since; ask for a new one";

/// Ends every reset link of `user_id` that still works, as used at `t`. Called wherever
/// the account's password changes (a reset, `changePassword`, the operator's reset, `admin
/// create`, an invitation that sets it), after the account's row was written (so locked
/// on PostgreSQL: the user row first, then its links, in every writer): a link mailed
/// before a change does not undo it, and using one link ends its siblings.
pub(super) async fn end_reset_links<C: ConnectionTrait>(
    txn: &C,
    user_id: i64,
    t: chrono::DateTime<chrono::Utc>,
) -> AppResult<u64> {
    let ended = password_reset::Entity::update_many()
        .col_expr(
            password_reset::Column::UsedAt,
            sea_orm::sea_query::Expr::value(t),
        )
        .filter(password_reset::Column::UserId.eq(user_id))
        .filter(password_reset::Column::UsedAt.is_null())
        .exec(txn)
        .await?;
    Ok(ended.rows_affected)
}

/// `resetPassword`: sets the password of the link's account, ends every other reset link
/// of it, revokes every session and API token it has, and signs in with a new session. An
/// unknown link is NOT_FOUND, a used or ended one CONFLICT, an expired one WINDOW_CLOSED.
pub async fn reset_password(
    w: &Write,
    token: &str,
    new_password: &str,
) -> AppResult<(user::Model, String)> {
    let (txn, t) = (w.txn(), w.now());
    let hash = sha256_hex(token.trim().as_bytes());
    let reset = password_reset::Entity::find()
        .filter(password_reset::Column::TokenHash.eq(&hash))
        .one(txn)
        .await?
        .ok_or(AppError::NotFound("password reset link"))?;
    if reset.used_at.is_some() {
        return Err(AppError::conflict(LINK_ENDED));
    }
    if reset.expires_at <= t {
        return Err(AppError::WindowClosed(
            "this reset link has expired; ask for a new one".into(),
        ));
    }
    validate::password("password", new_password)?;
    // The account's row first (as every password change locks it first), so that two of
    // its links used at once queue here instead of each ending the other's.
    user::Entity::find_by_id(reset.user_id)
        .lock_exclusive()
        .one(txn)
        .await?;
    // The conditional update makes the link single-use, however many requests race.
    let claimed = password_reset::Entity::update_many()
        .col_expr(
            password_reset::Column::UsedAt,
            sea_orm::sea_query::Expr::value(t),
        )
        .filter(password_reset::Column::Id.eq(reset.id))
        .filter(password_reset::Column::UsedAt.is_null())
        .exec(txn)
        .await?;
    if claimed.rows_affected != 1 {
        return Err(AppError::conflict(LINK_ENDED));
    }
    let u = user::Entity::find_by_id(reset.user_id)
        .one(txn)
        .await?
        .ok_or(AppError::NotFound("account"))?;
    let pass_hash = password::hash(new_password).map_err(AppError::Internal)?;
    let mut am = u.into_active_model();
    am.password_hash = Set(Some(pass_hash));
    // The link reached the address: it is confirmed.
    am.email_confirmed_at = Set(Some(t));
    let u = am.update(txn).await?;
    end_reset_links(txn, u.id, t).await?;
    let sessions = end_sessions(txn, u.id, None, t).await?;
    let tokens = api_token::Entity::update_many()
        .col_expr(
            api_token::Column::RevokedAt,
            sea_orm::sea_query::Expr::value(t),
        )
        .filter(api_token::Column::UserId.eq(u.id))
        .filter(api_token::Column::RevokedAt.is_null())
        .exec(txn)
        .await?;
    let token = new_session(w, u.id).await?;
    w.append(
        Entry::new("user.password_reset", "user", &u.public_id)
            .by(&u.public_id)
            .with(json!({
                "sessions_revoked": sessions,
                "api_tokens_revoked": tokens.rows_affected,
            })),
    )
    .await?;
    Ok((u, token))
}

/// How long an email-confirmation link works.
pub const CONFIRM_HOURS: i64 = 48;

/// Writes a confirmation link for `email` (the account's own, or the one it changes to)
/// and its message to the outbox.
pub(super) async fn send_confirmation(
    w: &Write,
    u: &user::Model,
    email: &str,
    links: &super::outbox::Links,
) -> AppResult<()> {
    let token = bearer_token("vc_");
    let t = w.now();
    email_confirmation::ActiveModel {
        user_id: Set(u.id),
        email: Set(email.to_owned()),
        token_hash: Set(sha256_hex(token.as_bytes())),
        created_at: Set(t),
        expires_at: Set(t + Duration::hours(CONFIRM_HOURS)),
        used_at: Set(None),
        ..Default::default()
    }
    .insert(w.txn())
    .await?;
    let message = super::outbox::email_confirmation(email, &links.confirm(&token));
    super::outbox::enqueue(w, message, None, None).await?;
    Ok(())
}

/// `confirmEmail`: the link's address is confirmed as its account's. For an email change,
/// the account's address becomes the new one (CONFLICT if another account took it
/// meanwhile) and the old address is told. An unknown link is NOT_FOUND, a used one
/// CONFLICT, an expired one WINDOW_CLOSED.
pub async fn confirm_email(w: &Write, token: &str) -> AppResult<user::Model> {
    let (txn, t) = (w.txn(), w.now());
    let hash = sha256_hex(token.trim().as_bytes());
    let c = email_confirmation::Entity::find()
        .filter(email_confirmation::Column::TokenHash.eq(&hash))
        .one(txn)
        .await?
        .ok_or(AppError::NotFound("confirmation link"))?;
    if c.used_at.is_some() {
        return Err(AppError::conflict(
            "this confirmation link was already used",
        ));
    }
    if c.expires_at <= t {
        return Err(AppError::WindowClosed(
            "this confirmation link has expired; ask for a new one".into(),
        ));
    }
    let claimed = email_confirmation::Entity::update_many()
        .col_expr(
            email_confirmation::Column::UsedAt,
            sea_orm::sea_query::Expr::value(t),
        )
        .filter(email_confirmation::Column::Id.eq(c.id))
        .filter(email_confirmation::Column::UsedAt.is_null())
        .exec(txn)
        .await?;
    if claimed.rows_affected != 1 {
        return Err(AppError::conflict(
            "this confirmation link was already used",
        ));
    }
    let u = user::Entity::find_by_id(c.user_id)
        .one(txn)
        .await?
        .ok_or(AppError::NotFound("account"))?;
    let old = u.email.clone();
    let changing = c.email != old;
    if changing && super::user_by_email(txn, &c.email).await?.is_some() {
        return Err(AppError::conflict(
            "another account has this address now; nothing was changed",
        ));
    }
    let mut am = u.into_active_model();
    am.email = Set(c.email.clone());
    am.email_confirmed_at = Set(Some(t));
    let u = am.update(txn).await?;
    if changing {
        super::outbox::enqueue(w, super::outbox::email_changed(&old, &u.email), None, None).await?;
    }
    w.append(
        Entry::new(
            if changing {
                "user.email_changed"
            } else {
                "user.email_confirmed"
            },
            "user",
            &u.public_id,
        )
        .by(&u.public_id),
    )
    .await?;
    Ok(u)
}

/// `resendConfirmation`: a new link for the caller's unconfirmed address (CONFLICT when it
/// is confirmed). Throttled like reset requests, per account.
pub async fn resend_confirmation(
    db: &crate::db::Db,
    actor: &Actor,
    links: &super::outbox::Links,
) -> AppResult<()> {
    let w = Write::begin(db, Some(actor.clone())).await?;
    let u = user::Entity::find_by_id(actor.user.id)
        .one(w.txn())
        .await?
        .ok_or(AppError::NotFound("account"))?;
    if u.email_confirmed_at.is_some() {
        return Err(AppError::conflict("your address is already confirmed"));
    }
    let t = w.now();
    take_slot(w.txn(), &format!("confirm:{}", u.id), RESET_REQUESTS, t).await?;
    send_confirmation(&w, &u, &u.email, links).await?;
    w.append(Entry::new("user.confirmation_sent", "user", &u.public_id).by(&u.public_id))
        .await?;
    w.commit().await
}

/// Checks the caller's current password, throttled as a log-in is (so a stolen session
/// cannot guess it faster than a log-in could). BAD_USER_INPUT on `field` when wrong.
async fn check_current_password(
    db: &crate::db::Db,
    actor: &Actor,
    current: &str,
    client: &str,
    limit: i32,
    field: &str,
) -> AppResult<Buckets> {
    let buckets = Buckets::new(&actor.user.email, client);
    take_attempt(db, &buckets, limit).await?;
    let stored = user::Entity::find_by_id(actor.user.id)
        .one(&db.conn)
        .await?
        .and_then(|u| u.password_hash);
    let ok = verify_password(current, stored).await?;
    if !ok {
        return Err(AppError::bad_input(field, "is not your current password"));
    }
    Ok(buckets)
}

/// `changePassword`: needs the current password; every other session of the account is
/// revoked (the one making the change stays; API tokens stay, like the operator's reset),
/// and every reset link it has ends.
pub async fn change_password(
    db: &crate::db::Db,
    actor: &Actor,
    current: &str,
    new_password: &str,
    keep: Option<i64>,
    client: &str,
    limit: i32,
) -> AppResult<u64> {
    validate::password("newPassword", new_password)?;
    let buckets =
        check_current_password(db, actor, current, client, limit, "currentPassword").await?;
    let hash = password::hash(new_password).map_err(AppError::Internal)?;
    let w = Write::begin(db, Some(actor.clone())).await?;
    forgive_attempt(&w, &buckets).await?;
    let (txn, t) = (w.txn(), w.now());
    user::Entity::update_many()
        .col_expr(
            user::Column::PasswordHash,
            sea_orm::sea_query::Expr::value(hash),
        )
        .filter(user::Column::Id.eq(actor.user.id))
        .exec(txn)
        .await?;
    end_reset_links(txn, actor.user.id, t).await?;
    let revoked = end_sessions(txn, actor.user.id, keep, t).await?;
    w.append(
        Entry::new("user.password_changed", "user", actor.public_id())
            .by(actor.public_id())
            .with(json!({ "sessions_revoked": revoked })),
    )
    .await?;
    w.commit().await?;
    Ok(revoked)
}

/// `updateProfile`: the caller's display name.
pub async fn update_profile(w: &Write, display_name: &str) -> AppResult<user::Model> {
    let (txn, actor) = (w.txn(), w.actor()?);
    let name = validate::name("displayName", display_name, 100)?;
    let u = user::Entity::find_by_id(actor.user.id)
        .one(txn)
        .await?
        .ok_or(AppError::NotFound("account"))?;
    let mut am = u.into_active_model();
    am.display_name = Set(name.clone());
    let u = am.update(txn).await?;
    w.append(
        Entry::new("user.profile_updated", "user", &u.public_id)
            .by(&u.public_id)
            .with(json!({ "display_name": name })),
    )
    .await?;
    Ok(u)
}

/// `changeEmail`: needs the current password; mails a confirmation link to the new
/// address, and the address changes only when it is used (the old address is then told).
/// CONFLICT when another account has the new address.
pub async fn change_email(
    db: &crate::db::Db,
    actor: &Actor,
    new_email: &str,
    current: &str,
    client: &str,
    limit: i32,
    links: &super::outbox::Links,
) -> AppResult<()> {
    let email = validate::email("newEmail", new_email)?;
    if email == actor.user.email {
        return Err(AppError::bad_input("newEmail", "is already your address"));
    }
    let buckets =
        check_current_password(db, actor, current, client, limit, "currentPassword").await?;
    let w = Write::begin(db, Some(actor.clone())).await?;
    forgive_attempt(&w, &buckets).await?;
    if super::user_by_email(w.txn(), &email).await?.is_some() {
        return Err(AppError::conflict("another account has this address"));
    }
    send_confirmation(&w, &actor.user, &email, links).await?;
    w.append(
        Entry::new("user.email_change_requested", "user", actor.public_id()).by(actor.public_id()),
    )
    .await?;
    w.commit().await
}
