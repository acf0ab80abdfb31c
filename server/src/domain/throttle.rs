//! Rate limits counted in the database, so they hold across server processes: fixed-window
//! buckets (`login_throttle` rows, one per bucket name), each a count of slots taken in
//! its current window of [`THROTTLE_WINDOW_SECS`]. [`take_slot`] is the one-bucket limit
//! every domain uses (reset requests, confirmation mails, invitations, comments, voter
//! links); [`take_attempt`] and [`forgive_attempt`] are the log-in's three buckets, which
//! the password checks of `changePassword` and `changeEmail` share.

use entity::login_throttle;
use sea_orm::{ActiveModelTrait, ActiveValue::Set, ConnectionTrait, EntityTrait, QuerySelect};

use super::Write;
use crate::error::{AppError, AppResult};

/// The window of every bucket: 15 minutes.
pub const THROTTLE_WINDOW_SECS: i64 = 15 * 60;

/// Log-in throttling, counted in the database so it holds across server processes.
///
/// Every attempt takes a slot BEFORE the password is checked, in one short write
/// transaction, so concurrent guesses cannot outrun the count: at most `limit` passwords
/// are ever checked per window for one bucket, however many arrive at once. Buckets, each
/// over a fixed window of [`THROTTLE_WINDOW_SECS`]:
///
/// - `pair:{email}|{address}`: `limit` attempts (`--login-attempts`). A guesser at one
///   address is stopped here, and only for this account and address: the owner elsewhere
///   is not affected, so a guesser cannot lock the owner out.
/// - `addr:{address}`: [`ADDRESS_FACTOR`] × `limit` attempts, across accounts: one address
///   spraying many accounts.
/// - `acct:{email}`: [`ACCOUNT_FACTOR`] × `limit` attempts from addresses the owner has not
///   logged in from within [`KNOWN_ADDRESS_DAYS`] days: guessing one account from many
///   addresses is slowed to that ceiling, while the owner, at an address they used before
///   (marked `seen:{email}|{address}` on each successful log-in), still gets in.
///
/// An attempt refused by the pair bucket counts nowhere else. A successful log-in clears
/// its pair bucket and gives its slot back to the address and account buckets.
pub const ADDRESS_FACTOR: i32 = 5;
/// See [`ADDRESS_FACTOR`].
pub const ACCOUNT_FACTOR: i32 = 10;
/// See [`ADDRESS_FACTOR`].
pub const KNOWN_ADDRESS_DAYS: i64 = 90;

pub(super) struct Buckets {
    pair: String,
    addr: String,
    acct: String,
    seen: String,
}

impl Buckets {
    pub(super) fn new(email: &str, client: &str) -> Buckets {
        Buckets {
            pair: format!("pair:{email}|{client}"),
            addr: format!("addr:{client}"),
            acct: format!("acct:{email}"),
            seen: format!("seen:{email}|{client}"),
        }
    }
}

/// Locks `bucket`'s row (creating it) and returns it with its window restarted if it
/// expired.
async fn locked_bucket<C: ConnectionTrait>(
    txn: &C,
    bucket: &str,
    t: chrono::DateTime<chrono::Utc>,
) -> AppResult<login_throttle::Model> {
    use sea_orm::sea_query::OnConflict;
    login_throttle::Entity::insert(login_throttle::ActiveModel {
        bucket: Set(bucket.to_owned()),
        window_start: Set(t),
        failures: Set(0),
    })
    .on_conflict(
        OnConflict::column(login_throttle::Column::Bucket)
            .do_nothing()
            .to_owned(),
    )
    .exec_without_returning(txn)
    .await?;
    let mut row = login_throttle::Entity::find_by_id(bucket.to_owned())
        .lock_exclusive()
        .one(txn)
        .await?
        .ok_or_else(|| AppError::Internal(format!("throttle bucket {bucket} vanished")))?;
    if (t - row.window_start).num_seconds() >= THROTTLE_WINDOW_SECS {
        row.window_start = t;
        row.failures = 0;
    }
    Ok(row)
}

fn retry_after(row: &login_throttle::Model, t: chrono::DateTime<chrono::Utc>) -> AppError {
    let elapsed = (t - row.window_start).num_seconds();
    AppError::RateLimited {
        retry_after: (THROTTLE_WINDOW_SECS - elapsed).max(1) as u64,
    }
}

async fn save_bucket<C: ConnectionTrait>(txn: &C, row: login_throttle::Model) -> AppResult<()> {
    login_throttle::ActiveModel {
        bucket: Set(row.bucket),
        window_start: Set(row.window_start),
        failures: Set(row.failures.max(0)),
    }
    .update(txn)
    .await?;
    Ok(())
}

/// Takes one slot of `bucket` inside `txn`, or refuses with RATE_LIMITED once `limit` are
/// taken in its window. A refusal makes the caller's transaction roll back, so slots taken
/// before it in the same transaction are given back.
pub(super) async fn take_slot<C: ConnectionTrait>(
    txn: &C,
    bucket: &str,
    limit: i32,
    t: chrono::DateTime<chrono::Utc>,
) -> AppResult<()> {
    let mut row = locked_bucket(txn, bucket, t).await?;
    if row.failures >= limit {
        return Err(retry_after(&row, t));
    }
    row.failures += 1;
    save_bucket(txn, row).await
}

/// Takes one attempt's slot in each bucket, or refuses with RATE_LIMITED. Committed before
/// the password is checked: a refused or failed log-in writes only its count.
pub(super) async fn take_attempt(db: &crate::db::Db, b: &Buckets, limit: i32) -> AppResult<()> {
    // Its own write, committed at once, and not audited: the count is bookkeeping.
    let w = Write::begin(db, None).await?;
    let (txn, t) = (w.txn(), w.now());
    let mut pair = locked_bucket(txn, &b.pair, t).await?;
    if pair.failures >= limit {
        return Err(retry_after(&pair, t));
    }
    let mut addr = locked_bucket(txn, &b.addr, t).await?;
    if addr.failures >= limit.saturating_mul(ADDRESS_FACTOR) {
        return Err(retry_after(&addr, t));
    }
    let mut acct = locked_bucket(txn, &b.acct, t).await?;
    if acct.failures >= limit.saturating_mul(ACCOUNT_FACTOR) {
        let known = login_throttle::Entity::find_by_id(b.seen.clone())
            .one(txn)
            .await?
            .is_some_and(|s| (t - s.window_start).num_days() < KNOWN_ADDRESS_DAYS);
        if !known {
            return Err(retry_after(&acct, t));
        }
    }
    pair.failures += 1;
    addr.failures += 1;
    acct.failures += 1;
    for row in [pair, addr, acct] {
        save_bucket(txn, row).await?;
    }
    w.commit().await
}

/// Takes one slot in each of `buckets` (name, limit) in a write of its own, committed at
/// once and not audited (the count is bookkeeping), before the secret is checked:
/// RATE_LIMITED with the seconds to wait once one of them is full.
pub(super) async fn take_slots(db: &crate::db::Db, buckets: &[(String, i32)]) -> AppResult<()> {
    let w = Write::begin(db, None).await?;
    let (txn, t) = (w.txn(), w.now());
    let mut rows = Vec::new();
    for (bucket, limit) in buckets {
        let row = locked_bucket(txn, bucket, t).await?;
        if row.failures >= *limit {
            return Err(retry_after(&row, t));
        }
        rows.push(row);
    }
    for mut row in rows {
        row.failures += 1;
        save_bucket(txn, row).await?;
    }
    w.commit().await
}

/// After a success, inside its write: one slot given back to each of `buckets`.
pub(super) async fn give_back(w: &Write, buckets: &[(String, i32)]) -> AppResult<()> {
    for (bucket, _) in buckets {
        let mut row = locked_bucket(w.txn(), bucket, w.now()).await?;
        row.failures -= 1;
        save_bucket(w.txn(), row).await?;
    }
    Ok(())
}

/// After a successful log-in, inside its transaction: clear the pair bucket, give the slot
/// back to the address and account buckets, and remember the address as the owner's.
pub(super) async fn forgive_attempt(w: &Write, b: &Buckets) -> AppResult<()> {
    let (txn, t) = (w.txn(), w.now());
    login_throttle::Entity::delete_by_id(b.pair.clone())
        .exec(txn)
        .await?;
    for bucket in [&b.addr, &b.acct] {
        let mut row = locked_bucket(txn, bucket, t).await?;
        row.failures -= 1;
        save_bucket(txn, row).await?;
    }
    let mut seen = locked_bucket(txn, &b.seen, t).await?;
    seen.window_start = t;
    seen.failures = 0;
    save_bucket(txn, seen).await?;
    Ok(())
}
