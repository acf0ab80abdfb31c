//! Accounts: sign-up, log-in with throttling, sessions, personal API tokens, site admins.

use chrono::Duration;
use entity::{api_token, login_throttle, session, user};
use sea_orm::{
    ActiveModelTrait, ActiveValue::Set, ColumnTrait, ConnectionTrait, DatabaseConnection,
    EntityTrait, IntoActiveModel, QueryFilter, QueryOrder,
};
use serde_json::json;

use super::{Actor, now, validate};
use crate::audit::{self, Entry};
use crate::crypto::{bearer_token, password, public_id, random_string, sha256_hex};
use crate::error::{AppError, AppResult};

pub const SESSION_DAYS: i64 = 30;
pub const THROTTLE_WINDOW_SECS: i64 = 15 * 60;

/// How a request proved who it is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Credential {
    Session { id: i64 },
    ApiToken { id: i64 },
}

/// Creates an account and its first session.
pub async fn sign_up<C: ConnectionTrait>(
    txn: &C,
    email: &str,
    pass: &str,
    display_name: &str,
) -> AppResult<(user::Model, String)> {
    let email = validate::email("email", email)?;
    validate::password("password", pass)?;
    let display_name = validate::name("displayName", display_name, 100)?;
    if super::user_by_email(txn, &email).await?.is_some() {
        return Err(AppError::conflict(
            "an account with this email exists; log in instead",
        ));
    }
    let hash = password::hash(pass).map_err(AppError::Internal)?;
    let u = user::ActiveModel {
        public_id: Set(public_id("usr")),
        email: Set(email),
        display_name: Set(display_name),
        password_hash: Set(Some(hash)),
        is_site_admin: Set(false),
        created_at: Set(now()),
        ..Default::default()
    }
    .insert(txn)
    .await?;
    let token = new_session(txn, u.id).await?;
    audit::append(
        txn,
        Entry::new("user.signed_up", "user", &u.public_id).by(&u.public_id),
    )
    .await?;
    Ok((u, token))
}

async fn new_session<C: ConnectionTrait>(txn: &C, user_id: i64) -> AppResult<String> {
    let token = bearer_token("vs_");
    let t = now();
    session::ActiveModel {
        user_id: Set(user_id),
        token_hash: Set(sha256_hex(token.as_bytes())),
        created_at: Set(t),
        expires_at: Set(t + Duration::days(SESSION_DAYS)),
        revoked_at: Set(None),
        ..Default::default()
    }
    .insert(txn)
    .await?;
    Ok(token)
}

/// Refuses with RATE_LIMITED when `bucket` has `limit` failures in the current window.
async fn check_throttle<C: ConnectionTrait>(db: &C, bucket: &str, limit: i32) -> AppResult<()> {
    if let Some(row) = login_throttle::Entity::find_by_id(bucket.to_owned())
        .one(db)
        .await?
    {
        let elapsed = (now() - row.window_start).num_seconds();
        if elapsed < THROTTLE_WINDOW_SECS && row.failures >= limit {
            return Err(AppError::RateLimited {
                retry_after: (THROTTLE_WINDOW_SECS - elapsed).max(1) as u64,
            });
        }
    }
    Ok(())
}

/// Counts one failed log-in against `bucket`, in its own short transaction: the failure
/// must be remembered although the log-in itself writes nothing. The counter lives in the
/// database so that it holds across several server processes.
async fn record_failure(db: &DatabaseConnection, bucket: &str) -> AppResult<()> {
    use sea_orm::TransactionTrait;
    let txn = db.begin().await?;
    let t = now();
    match login_throttle::Entity::find_by_id(bucket.to_owned())
        .one(&txn)
        .await?
    {
        Some(row) if (t - row.window_start).num_seconds() < THROTTLE_WINDOW_SECS => {
            let failures = row.failures + 1;
            let mut am = row.into_active_model();
            am.failures = Set(failures);
            am.update(&txn).await?;
        }
        Some(row) => {
            let mut am = row.into_active_model();
            am.window_start = Set(t);
            am.failures = Set(1);
            am.update(&txn).await?;
        }
        None => {
            login_throttle::ActiveModel {
                bucket: Set(bucket.to_owned()),
                window_start: Set(t),
                failures: Set(1),
            }
            .insert(&txn)
            .await?;
        }
    }
    txn.commit().await?;
    Ok(())
}

/// Logs in: throttled per email and per client address; an unknown email spends the same
/// password verification as a known one.
pub async fn log_in(
    db: &crate::db::Db,
    email: &str,
    pass: &str,
    client: &str,
    limit: i32,
) -> AppResult<(user::Model, String)> {
    let email = email.trim().to_lowercase();
    let buckets = [format!("email:{email}"), format!("addr:{client}")];
    for b in &buckets {
        check_throttle(&db.conn, b, limit).await?;
    }
    let found = super::user_by_email(&db.conn, &email).await?;
    let stored = found.as_ref().and_then(|u| u.password_hash.clone());
    let pass_owned = pass.to_owned();
    let ok = tokio::task::spawn_blocking(move || password::verify(&pass_owned, stored.as_deref()))
        .await
        .map_err(|e| AppError::Internal(e.to_string()))?;
    let Some(u) = found.filter(|_| ok) else {
        for b in &buckets {
            record_failure(&db.conn, b).await?;
        }
        return Err(AppError::BadCredentials);
    };
    let txn = db.write().await?;
    login_throttle::Entity::delete_by_id(buckets[0].clone())
        .exec(&txn)
        .await?;
    let token = new_session(&txn, u.id).await?;
    audit::append(
        &txn,
        Entry::new("session.created", "user", &u.public_id).by(&u.public_id),
    )
    .await?;
    txn.commit().await?;
    Ok((u, token))
}

/// Revokes the session the request authenticated with.
pub async fn log_out<C: ConnectionTrait>(txn: &C, actor: &Actor, session_id: i64) -> AppResult<()> {
    let s = session::Entity::find_by_id(session_id)
        .one(txn)
        .await?
        .ok_or(AppError::NotFound("session"))?;
    let mut am = s.into_active_model();
    am.revoked_at = Set(Some(now()));
    am.update(txn).await?;
    audit::append(
        txn,
        Entry::new("session.revoked", "user", actor.public_id()).by(actor.public_id()),
    )
    .await?;
    Ok(())
}

/// Finds the user behind a bearer secret (session or personal API token), if it is valid.
pub async fn authenticate(
    db: &DatabaseConnection,
    raw: &str,
) -> AppResult<Option<(user::Model, Credential)>> {
    let hash = sha256_hex(raw.as_bytes());
    let t = now();
    let found = if raw.starts_with("vt_") {
        let Some(tok) = api_token::Entity::find()
            .filter(api_token::Column::TokenHash.eq(hash))
            .filter(api_token::Column::RevokedAt.is_null())
            .one(db)
            .await?
        else {
            return Ok(None);
        };
        // Last use is kept to the minute, so a busy script does not write on every call.
        if tok.last_used_at.is_none_or(|l| (t - l).num_seconds() >= 60) {
            api_token::Entity::update_many()
                .col_expr(
                    api_token::Column::LastUsedAt,
                    sea_orm::sea_query::Expr::value(t),
                )
                .filter(api_token::Column::Id.eq(tok.id))
                .exec(db)
                .await?;
        }
        (tok.user_id, Credential::ApiToken { id: tok.id })
    } else {
        let Some(s) = session::Entity::find()
            .filter(session::Column::TokenHash.eq(hash))
            .filter(session::Column::RevokedAt.is_null())
            .filter(session::Column::ExpiresAt.gt(t))
            .one(db)
            .await?
        else {
            return Ok(None);
        };
        (s.user_id, Credential::Session { id: s.id })
    };
    let user = user::Entity::find_by_id(found.0).one(db).await?;
    Ok(user.map(|u| (u, found.1)))
}

/// Mints a personal API token; the raw token is returned once and never stored.
pub async fn create_api_token<C: ConnectionTrait>(
    txn: &C,
    actor: &Actor,
    label: &str,
) -> AppResult<(api_token::Model, String)> {
    let label = validate::name("label", label, 100)?;
    let raw = bearer_token("vt_");
    let t = api_token::ActiveModel {
        public_id: Set(public_id("tok")),
        user_id: Set(actor.user.id),
        label: Set(label.clone()),
        prefix: Set(raw[..10].to_owned()),
        token_hash: Set(sha256_hex(raw.as_bytes())),
        created_at: Set(now()),
        last_used_at: Set(None),
        revoked_at: Set(None),
        ..Default::default()
    }
    .insert(txn)
    .await?;
    audit::append(
        txn,
        Entry::new("api_token.created", "api_token", &t.public_id)
            .by(actor.public_id())
            .with(json!({ "label": label, "prefix": t.prefix })),
    )
    .await?;
    Ok((t, raw))
}

pub async fn revoke_api_token<C: ConnectionTrait>(
    txn: &C,
    actor: &Actor,
    id: &str,
) -> AppResult<api_token::Model> {
    let t = api_token::Entity::find()
        .filter(api_token::Column::PublicId.eq(id))
        .filter(api_token::Column::UserId.eq(actor.user.id))
        .one(txn)
        .await?
        .ok_or(AppError::NotFound("API token"))?;
    if t.revoked_at.is_some() {
        return Err(AppError::conflict("this token is already revoked"));
    }
    let mut am = t.into_active_model();
    am.revoked_at = Set(Some(now()));
    let t = am.update(txn).await?;
    audit::append(
        txn,
        Entry::new("api_token.revoked", "api_token", &t.public_id).by(actor.public_id()),
    )
    .await?;
    Ok(t)
}

pub async fn api_tokens<C: ConnectionTrait>(
    db: &C,
    user_id: i64,
) -> AppResult<Vec<api_token::Model>> {
    Ok(api_token::Entity::find()
        .filter(api_token::Column::UserId.eq(user_id))
        .order_by_asc(api_token::Column::Id)
        .all(db)
        .await?)
}

/// Creates (or promotes) a site administrator and gives them a fresh generated password,
/// returned once.
pub async fn admin_create<C: ConnectionTrait>(txn: &C, email: &str) -> AppResult<String> {
    let email = validate::email("email", email)?;
    let pass = random_string(20);
    let hash = password::hash(&pass).map_err(AppError::Internal)?;
    let u = match super::user_by_email(txn, &email).await? {
        Some(u) => {
            let mut am = u.into_active_model();
            am.is_site_admin = Set(true);
            am.password_hash = Set(Some(hash));
            am.update(txn).await?
        }
        None => {
            let display = email.split('@').next().unwrap_or("admin").to_owned();
            user::ActiveModel {
                public_id: Set(public_id("usr")),
                email: Set(email),
                display_name: Set(display),
                password_hash: Set(Some(hash)),
                is_site_admin: Set(true),
                created_at: Set(now()),
                ..Default::default()
            }
            .insert(txn)
            .await?
        }
    };
    audit::append(
        txn,
        Entry::new("user.promoted_site_admin", "user", &u.public_id),
    )
    .await?;
    Ok(pass)
}

/// `verdict token mint`: a personal API token for an existing user.
pub async fn mint_token<C: ConnectionTrait>(
    txn: &C,
    email: &str,
    label: &str,
) -> AppResult<String> {
    let email = validate::email("email", email)?;
    let u = super::user_by_email(txn, &email)
        .await?
        .ok_or(AppError::NotFound("user"))?;
    let (_, raw) = create_api_token(txn, &Actor { user: u }, label).await?;
    Ok(raw)
}
