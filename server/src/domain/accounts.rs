//! Accounts: sign-up, log-in (throttled by [`super::throttle`]), sessions, personal API
//! tokens, site admins.

use chrono::Duration;
use entity::{api_token, session, user};
use sea_orm::{
    ActiveEnum, ActiveModelTrait, ActiveValue::Set, ColumnTrait, ConnectionTrait,
    DatabaseConnection, EntityTrait, IntoActiveModel, QueryFilter, QueryOrder, QuerySelect,
};
use serde_json::json;

use super::throttle::{Buckets, forgive_attempt, take_attempt};
use super::{Actor, Write, clock, validate};
use crate::audit::Entry;
use crate::crypto::{bearer_token, password, public_id, random_string, sha256_hex};
use crate::error::{AppError, AppResult};

pub const SESSION_DAYS: i64 = 30;

/// How a request proved who it is.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Credential {
    Session {
        id: i64,
    },
    /// A personal API token; `read_only` for a `read`-scoped one, which may not mutate.
    ApiToken {
        id: i64,
        read_only: bool,
    },
    /// A session started by a judge's standing sign-in link or code: it acts only as the
    /// judge `membership` and runs only judging mutations (see [`super::judge_sign_in`]).
    JudgeLink {
        id: i64,
        membership: i64,
    },
}

impl Credential {
    /// Whether this credential may only read (queries and subscriptions).
    pub fn read_only(&self) -> bool {
        matches!(
            self,
            Credential::ApiToken {
                read_only: true,
                ..
            }
        )
    }
}

/// Creates an account and its first session, and mails a link that confirms its address.
pub async fn sign_up(
    w: &Write,
    email: &str,
    pass: &str,
    display_name: &str,
    links: &super::outbox::Links,
) -> AppResult<(user::Model, String)> {
    let email = validate::email("email", email)?;
    validate::password("password", pass)?;
    let display_name = validate::name("displayName", display_name, 100)?;
    if super::user_by_email(w.txn(), &email).await?.is_some() {
        return Err(AppError::conflict(
            "an account with this email exists; log in instead",
        ));
    }
    let hash = password::hash(pass).map_err(AppError::Internal)?;
    let u = insert_user(w, email, display_name, hash, Standing::Unconfirmed).await?;
    super::recovery::send_confirmation(w, &u, &u.email, links).await?;
    let token = new_session(w, u.id).await?;
    w.append(Entry::new("user.signed_up", "user", &u.public_id).by(&u.public_id))
        .await?;
    Ok((u, token))
}

/// What a new account is when it is made.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Standing {
    /// Signed up: the address is confirmed by the link mailed to it.
    Unconfirmed,
    /// Its address is known to work (an invitation link reached it).
    Confirmed,
    /// A site admin, whose address the operator (or whoever holds the setup link) vouches
    /// for.
    SiteAdmin,
}

/// Inserts a new account's row, created now, with a password hash: the one row sign-up,
/// the setup link, `verdict admin create`, a redeemed invitation and the demo all make.
pub async fn insert_user(
    w: &Write,
    email: String,
    display_name: String,
    password_hash: String,
    standing: Standing,
) -> AppResult<user::Model> {
    let t = w.now();
    Ok(user::ActiveModel {
        public_id: Set(public_id("usr")),
        email: Set(email),
        display_name: Set(display_name),
        password_hash: Set(Some(password_hash)),
        is_site_admin: Set(standing == Standing::SiteAdmin),
        created_at: Set(t),
        email_confirmed_at: Set((standing != Standing::Unconfirmed).then_some(t)),
        ..Default::default()
    }
    .insert(w.txn())
    .await?)
}

/// A new session of `user_id`, from the write's now for [`SESSION_DAYS`]; returns its
/// bearer token (only its hash is stored).
pub(crate) async fn new_session(w: &Write, user_id: i64) -> AppResult<String> {
    Ok(start_session(w, user_id, None, None).await?.0)
}

/// Starts a session of `user_id` for [`SESSION_DAYS`], ended sooner at `until` when given,
/// acting only as the judge membership `judge` when given (a judge's standing sign-in);
/// returns its bearer token and when it expires.
pub(super) async fn start_session(
    w: &Write,
    user_id: i64,
    judge: Option<i64>,
    until: Option<chrono::DateTime<chrono::Utc>>,
) -> AppResult<(String, chrono::DateTime<chrono::Utc>)> {
    let token = bearer_token("vs_");
    let t = w.now();
    let mut expires_at = t + Duration::days(SESSION_DAYS);
    if let Some(until) = until {
        expires_at = expires_at.min(until);
    }
    session::ActiveModel {
        user_id: Set(user_id),
        token_hash: Set(sha256_hex(token.as_bytes())),
        created_at: Set(t),
        expires_at: Set(expires_at),
        revoked_at: Set(None),
        judge_membership_id: Set(judge),
        ..Default::default()
    }
    .insert(w.txn())
    .await?;
    Ok((token, expires_at))
}

/// Ends every live session of `user_id` but `keep`, at `at`; returns how many ended. The
/// caller tells open websockets (`BusEvent::AccessRevoked` or `SessionsEnded`) after commit.
pub(super) async fn end_sessions<C: ConnectionTrait>(
    txn: &C,
    user_id: i64,
    keep: Option<i64>,
    at: chrono::DateTime<chrono::Utc>,
) -> AppResult<u64> {
    let mut live = session::Entity::update_many()
        .col_expr(
            session::Column::RevokedAt,
            sea_orm::sea_query::Expr::value(at),
        )
        .filter(session::Column::UserId.eq(user_id))
        .filter(session::Column::RevokedAt.is_null());
    if let Some(id) = keep {
        live = live.filter(session::Column::Id.ne(id));
    }
    Ok(live.exec(txn).await?.rows_affected)
}

/// Checks `pass` against a stored hash (none: checks against a dummy, so an unknown
/// account costs the same) off the async runtime: argon2 is CPU-bound.
pub(super) async fn verify_password(pass: &str, stored: Option<String>) -> AppResult<bool> {
    let pass = pass.to_owned();
    tokio::task::spawn_blocking(move || password::verify(&pass, stored.as_deref()))
        .await
        .map_err(|e| AppError::Internal(e.to_string()))
}

/// Logs in, throttled as [`super::throttle`] describes; an unknown email spends the same
/// password verification as a known one.
pub async fn log_in(
    db: &crate::db::Db,
    email: &str,
    pass: &str,
    client: &str,
    limit: i32,
) -> AppResult<(user::Model, String)> {
    let email = email.trim().to_lowercase();
    let buckets = Buckets::new(&email, client);
    take_attempt(db, &buckets, limit).await?;
    let found = super::user_by_email(&db.conn, &email).await?;
    let stored = found.as_ref().and_then(|u| u.password_hash.clone());
    let ok = verify_password(pass, stored).await?;
    let Some(u) = found.filter(|_| ok) else {
        return Err(AppError::BadCredentials);
    };
    let w = Write::begin(db, None).await?;
    forgive_attempt(&w, &buckets).await?;
    let token = new_session(&w, u.id).await?;
    w.append(Entry::new("session.created", "user", &u.public_id).by(&u.public_id))
        .await?;
    w.commit().await?;
    Ok((u, token))
}

/// Revokes the session the request authenticated with.
pub async fn log_out(w: &Write, session_id: i64) -> AppResult<()> {
    let actor = w.actor()?;
    let s = session::Entity::find_by_id(session_id)
        .one(w.txn())
        .await?
        .ok_or(AppError::NotFound("session"))?;
    let mut am = s.into_active_model();
    am.revoked_at = Set(Some(w.now()));
    am.update(w.txn()).await?;
    w.append(Entry::new("session.revoked", "user", actor.public_id()).by(actor.public_id()))
        .await?;
    Ok(())
}

/// Finds the user behind a bearer secret (session or personal API token), if it is valid.
///
/// Every signed-in request starts here, so it is one statement: the credential's row
/// joined with its user, with the database's clock read beside them
/// ([`crate::db::now_sql`]) to judge expiry by, as every check of a window is judged. Only
/// an API token's last-use note (kept to the minute) adds a second, now and then.
pub async fn authenticate(
    db: &DatabaseConnection,
    raw: &str,
) -> AppResult<Option<(user::Model, Credential)>> {
    let hash = sha256_hex(raw.as_bytes());
    let found = if raw.starts_with("vt_") {
        let Some((tok, user, t)) = with_user_and_clock(
            db,
            api_token::Entity::find()
                .filter(api_token::Column::TokenHash.eq(hash))
                .filter(api_token::Column::RevokedAt.is_null()),
            api_token::Column::UserId,
        )
        .await?
        else {
            return Ok(None);
        };
        if tok.expires_at.is_some_and(|e| e <= t) {
            return Ok(None);
        }
        // Last use is kept to the minute, so a busy script does not write on every call.
        // It is bookkeeping: a database that cannot write now (disk full, read-only file)
        // does not turn the token's reads away.
        if tok.last_used_at.is_none_or(|l| (t - l).num_seconds() >= 60) {
            let noted = api_token::Entity::update_many()
                .col_expr(
                    api_token::Column::LastUsedAt,
                    sea_orm::sea_query::Expr::value(t),
                )
                .filter(api_token::Column::Id.eq(tok.id))
                .exec(db)
                .await;
            match noted {
                Ok(_) => {}
                Err(e) if crate::error::is_unavailable(&e) => {
                    tracing::warn!(error = %e, "could not note an API token's last use");
                }
                Err(e) => return Err(e.into()),
            }
        }
        let read_only = tok.scope == api_token::TokenScope::Read;
        (
            user,
            Credential::ApiToken {
                id: tok.id,
                read_only,
            },
        )
    } else {
        let Some((s, user, t)) = with_user_and_clock(
            db,
            session::Entity::find()
                .filter(session::Column::TokenHash.eq(hash))
                .filter(session::Column::RevokedAt.is_null()),
            session::Column::UserId,
        )
        .await?
        else {
            return Ok(None);
        };
        if s.expires_at <= t {
            return Ok(None);
        }
        let credential = match s.judge_membership_id {
            Some(membership) => Credential::JudgeLink {
                id: s.id,
                membership,
            },
            None => Credential::Session { id: s.id },
        };
        (user, credential)
    };
    let (mut u, credential) = found;
    // A judge's sign-in link never carries the account's site-admin rights.
    if matches!(credential, Credential::JudgeLink { .. }) {
        u.is_site_admin = false;
    }
    Ok(Some((u, credential)))
}

/// The one row `select` finds, with the user its `user_id` column names and the database's
/// clock, in one statement; None when no row (or no such user) is found.
async fn with_user_and_clock<E>(
    db: &DatabaseConnection,
    select: sea_orm::Select<E>,
    user_id: E::Column,
) -> AppResult<Option<(E::Model, user::Model, chrono::DateTime<chrono::Utc>)>>
where
    E: EntityTrait,
{
    use sea_orm::sea_query::Expr;
    use sea_orm::{FromQueryResult, JoinType, QueryTrait};
    let backend = db.get_database_backend();
    let to_user = E::belongs_to(user::Entity)
        .from(user_id)
        .to(user::Column::Id)
        .into();
    let statement = select
        .select_also(user::Entity)
        .join(JoinType::InnerJoin, to_user)
        .expr_as(
            Expr::cust(crate::db::now_sql(backend)),
            crate::db::NOW_COLUMN,
        )
        .limit(1)
        .build(backend);
    let Some(row) = db.query_one_raw(statement).await? else {
        return Ok(None);
    };
    let found = E::Model::from_query_result(&row, "A_")?;
    let user = user::Model::from_query_result(&row, "B_")?;
    let now = crate::db::read_now(&row, backend)?;
    Ok(Some((found, user, now)))
}

/// Whether a credential found by [`authenticate`] still holds: the session is neither
/// revoked nor expired, the API token neither revoked nor expired. Long-lived connections ask this
/// before each operation and each subscription message without a feed's verdict (the
/// database's clock and one statement).
pub async fn still_valid<C: ConnectionTrait>(db: &C, credential: &Credential) -> AppResult<bool> {
    let live = live_credentials(db, std::slice::from_ref(credential)).await?;
    Ok(live.contains(credential))
}

/// How many ids one `IN (...)` list carries: well under SQLite's and PostgreSQL's limits
/// on bound parameters.
pub const IN_CHUNK: usize = 5000;

/// Which of `credentials` are still live (not revoked, not expired), in a statement per
/// kind and chunk after the clock read: the live feeds check every follower of a message
/// with it, and [`still_valid`] one credential.
pub async fn live_credentials<C: ConnectionTrait>(
    db: &C,
    credentials: &[Credential],
) -> AppResult<std::collections::HashSet<Credential>> {
    // A read, outside any write: its own reading of the clock.
    let now = clock(db).await?;
    let mut sessions = Vec::new();
    let mut tokens = Vec::new();
    for c in credentials {
        match c {
            Credential::Session { id } | Credential::JudgeLink { id, .. } => sessions.push(*id),
            Credential::ApiToken { id, .. } => tokens.push(*id),
        }
    }
    let mut live_sessions = std::collections::HashSet::new();
    for chunk in sessions.chunks(IN_CHUNK) {
        let ids: Vec<i64> = session::Entity::find()
            .filter(session::Column::Id.is_in(chunk.iter().copied()))
            .filter(session::Column::RevokedAt.is_null())
            .filter(session::Column::ExpiresAt.gt(now))
            .select_only()
            .column(session::Column::Id)
            .into_tuple()
            .all(db)
            .await?;
        live_sessions.extend(ids);
    }
    let mut live_tokens = std::collections::HashSet::new();
    for chunk in tokens.chunks(IN_CHUNK) {
        let ids: Vec<i64> = api_token::Entity::find()
            .filter(api_token::Column::Id.is_in(chunk.iter().copied()))
            .filter(api_token::Column::RevokedAt.is_null())
            .filter(
                sea_orm::Condition::any()
                    .add(api_token::Column::ExpiresAt.is_null())
                    .add(api_token::Column::ExpiresAt.gt(now)),
            )
            .select_only()
            .column(api_token::Column::Id)
            .into_tuple()
            .all(db)
            .await?;
        live_tokens.extend(ids);
    }
    Ok(credentials
        .iter()
        .filter(|c| match c {
            Credential::Session { id } | Credential::JudgeLink { id, .. } => {
                live_sessions.contains(id)
            }
            Credential::ApiToken { id, .. } => live_tokens.contains(id),
        })
        .cloned()
        .collect())
}

/// Mints a personal API token of `owner` (the actor, or the user `verdict token mint`
/// names); the raw token is returned once and never stored. A `read` token may only query
/// and subscribe; `expires_at` (in the future) ends it.
pub async fn create_api_token(
    w: &Write,
    owner: &Actor,
    label: &str,
    scope: api_token::TokenScope,
    expires_at: Option<chrono::DateTime<chrono::Utc>>,
) -> AppResult<(api_token::Model, String)> {
    let label = validate::name("label", label, 100)?;
    let now = w.now();
    if expires_at.is_some_and(|e| e <= now) {
        return Err(AppError::bad_input("expiresAt", "must be in the future"));
    }
    let raw = bearer_token("vt_");
    let t = api_token::ActiveModel {
        scope: Set(scope),
        expires_at: Set(expires_at),
        public_id: Set(public_id("tok")),
        user_id: Set(owner.user.id),
        label: Set(label.clone()),
        prefix: Set(raw[..10].to_owned()),
        token_hash: Set(sha256_hex(raw.as_bytes())),
        created_at: Set(now),
        last_used_at: Set(None),
        revoked_at: Set(None),
        ..Default::default()
    }
    .insert(w.txn())
    .await?;
    w.append(
        Entry::new("api_token.created", "api_token", &t.public_id)
            .by(owner.public_id())
            .with(json!({
                "label": label,
                "prefix": t.prefix,
                "scope": t.scope.to_value(),
                "expires_at": t.expires_at,
            })),
    )
    .await?;
    Ok((t, raw))
}

/// Revokes one of the actor's API tokens.
pub async fn revoke_api_token(w: &Write, id: &str) -> AppResult<api_token::Model> {
    let (txn, actor) = (w.txn(), w.actor()?);
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
    am.revoked_at = Set(Some(w.now()));
    let t = am.update(txn).await?;
    w.append(Entry::new("api_token.revoked", "api_token", &t.public_id).by(actor.public_id()))
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

/// The operator's way back in for someone who lost their password (`verdict user
/// reset-password`): sets a generated one-time password, returned once, ends the account's
/// reset links and revokes every session of it (its API tokens stay, so scripts keep
/// running). Makes nobody an admin; an unknown email is NOT_FOUND.
pub async fn operator_reset_password(w: &Write, email: &str) -> AppResult<String> {
    let (txn, t) = (w.txn(), w.now());
    let email = validate::email("email", email)?;
    let u = super::user_by_email(txn, &email)
        .await?
        .ok_or(AppError::NotFound("account"))?;
    let pass = random_string(20);
    let hash = password::hash(&pass).map_err(AppError::Internal)?;
    let mut am = u.clone().into_active_model();
    am.password_hash = Set(Some(hash));
    am.update(txn).await?;
    super::recovery::end_reset_links(txn, u.id, t).await?;
    let revoked = end_sessions(txn, u.id, None, t).await?;
    w.append(
        Entry::new("user.password_reset_by_operator", "user", &u.public_id)
            .with(json!({ "sessions_revoked": revoked })),
    )
    .await?;
    Ok(pass)
}

/// Creates (or promotes) a site administrator and gives them a fresh generated password,
/// returned once (an existing account's reset links end with its old password).
pub async fn admin_create(w: &Write, email: &str) -> AppResult<String> {
    let txn = w.txn();
    let email = validate::email("email", email)?;
    let pass = random_string(20);
    let hash = password::hash(&pass).map_err(AppError::Internal)?;
    let u = match super::user_by_email(txn, &email).await? {
        Some(u) => {
            let mut am = u.into_active_model();
            am.is_site_admin = Set(true);
            am.password_hash = Set(Some(hash));
            let u = am.update(txn).await?;
            super::recovery::end_reset_links(txn, u.id, w.now()).await?;
            u
        }
        None => {
            let display = email.split('@').next().unwrap_or("admin").to_owned();
            // The operator vouches for the address.
            insert_user(w, email, display, hash, Standing::SiteAdmin).await?
        }
    };
    w.append(Entry::new("user.promoted_site_admin", "user", &u.public_id))
        .await?;
    Ok(pass)
}

/// `verdict token mint`: a personal API token for an existing user.
pub async fn mint_token(
    w: &Write,
    email: &str,
    label: &str,
    scope: api_token::TokenScope,
    expires_at: Option<chrono::DateTime<chrono::Utc>>,
) -> AppResult<String> {
    let email = validate::email("email", email)?;
    let u = super::user_by_email(w.txn(), &email)
        .await?
        .ok_or(AppError::NotFound("user"))?;
    let (_, raw) = create_api_token(w, &Actor { user: u }, label, scope, expires_at).await?;
    Ok(raw)
}
