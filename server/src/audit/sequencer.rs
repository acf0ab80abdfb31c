//! Writes in parallel: how an entry gets its place on the chain.
//!
//! Giving an entry its `seq` and `prev_hash` needs the chain's head, and holding the head
//! from a write's append to its commit made every write wait for the one before it to
//! reach the disk (on PostgreSQL, one WAL flush after another). So on PostgreSQL a write
//! does not take the head. Its transaction inserts the entry, canonical and hashed but
//! without its place, into `audit_pending` ([`enqueue`]), and commits: the entry is
//! durable exactly when the write is, and a rolled-back write leaves none. Then a
//! *sequencer run* ([`run`]), a short transaction of its own, locks the head, reads every
//! committed pending row in `id` order, appends them to the chain exactly as an in-place
//! append would (same hashes, same webhook deliveries, [`integrate`]), deletes them and
//! advances the head once: many writes' entries per run, one flush for all of them (as a
//! Certificate Transparency log integrates its queued entries).
//!
//! - **Answers after the chain.** A write's answer still comes after its entry is on the
//!   chain (tests, the anonymous answers keyed on the head seq, and the relay feeding
//!   subscribers and webhooks rely on it): [`Write::commit`](crate::domain::Write::commit)
//!   waits for the first run of this process that *starts* after the commit ([`settle`]).
//!   Runs of one process go one at a time; writes that commit while a run is under way are
//!   sequenced together by the next one, and that is where the parallelism comes from. A
//!   run of any process that locks the head after the commit sees the committed pending
//!   row; one that finds it gone waited on the head for the run that sequenced it.
//! - **Crashes.** A process killed between a write's commit and the run leaves a committed
//!   pending row and nothing else: every server runs the sequencer when it starts and every
//!   second ([`keep`]), so the next one (or another process on the same database) gives it
//!   the next seq. The chain itself only grows in a run's transaction, so it never has a
//!   gap or a fork; a pending row is deleted in the transaction that appended it.
//! - **Several processes.** The head row's lock orders their runs. Each entry is announced
//!   on `verdict_audit` by the run that appends it, with the process that committed the
//!   write as its `origin` (`graphql::relay`).
//! - **Serialisation points.** Calibration runs and erasures read under
//!   [`lock_head`](super::lock_head) and rely on no other write committing before theirs.
//!   Every PostgreSQL write takes a shared advisory lock (the *gate*) before it enqueues;
//!   `lock_head` takes it exclusively, so it waits for the writes already enqueued and no
//!   write enqueues until it commits; then it integrates what is pending, so an erasure
//!   redacts every committed entry. Writes that need their own seq in their transaction
//!   (a calibration run and a publication record it) append in place under it
//!   ([`super::append`]).
//! - **SQLite** has one writer at a time (`BEGIN IMMEDIATE`), so a second transaction per
//!   write could only add a commit: there the entry is appended in the write's own
//!   transaction as before, and `audit_pending` stays empty.
//! - **`audit verify`** reads the chain as it stands and says how many entries are pending
//!   ([`super::Verification::Intact`]'s `pending`); it writes nothing.
//!
//! Measured (2026-12-05, release builds, `verdict-bench --only ceiling,writes`, default
//! windows, on the 2-core machine shared with other builds at a load average of 5-8, so
//! absolute numbers are low; main at 15b0aed, then this change, each pair run back to back
//! with the same bench binary; two pairs per backend):
//!
//! | backend | load | before | after |
//! | --- | --- | --- | --- |
//! | postgres | `{__typename}`, 64 conn (the run's ceiling) | 3,480/s; 4,652/s | 3,718/s; 5,500/s |
//! | postgres | `updateProfile`, 64 conn | 398/s (p99 344 ms); 510/s (p99 281 ms) | 683/s (p99 268 ms); 847/s (p99 128 ms) |
//! | postgres | `saveReview`, 64 judges of one event | 160/s (p99 700 ms); 227/s (p99 382 ms) | 185/s (p99 592 ms); 269/s (p99 308 ms) |
//! | sqlite | `{__typename}`, 64 conn | 7,101/s; 7,792/s | 6,865/s; 7,998/s |
//! | sqlite | `updateProfile`, 64 conn | 650/s; 659/s | 564/s; 683/s |
//! | sqlite | `saveReview`, 64 judges | 394/s; 364/s | 297/s; 371/s |
//!
//! Writes of different rows now commit in parallel on PostgreSQL (`updateProfile` +66-72 %
//! against ceilings that moved +7-18 %). `saveReview` barely moves: every review save of an
//! event locks that event's row (`Write::event`, `FOR UPDATE`), so the judges of one event
//! still write one at a time; that lock, not the chain, is now what stands in the way.
//! SQLite runs the same statements as before; its two pairs differ either way by the
//! shared machine's noise.

use std::sync::atomic::Ordering;
use std::time::Duration;

use entity::{audit_event, audit_head, audit_pending};
use sea_orm::{
    ActiveValue::{NotSet, Set},
    ColumnTrait, ConnectionTrait, DbBackend, EntityTrait, QueryFilter, QueryOrder, QuerySelect,
    Statement, TransactionTrait,
};

use super::{Entry, canonical_time, deliveries, row_hash_of};
use crate::crypto::{canonical_json, sha256_hex};
use crate::db::Db;
use crate::error::{AppError, AppResult};

/// The channel each sequenced entry is announced on (PostgreSQL).
pub const CHANNEL: &str = "verdict_audit";

/// The advisory lock key of the gate (see the module doc): "verdict" and 1.
const GATE: i64 = 0x7665_7264_6963_7401;

/// Pending rows read and appended per statement.
const BATCH: u64 = 500;

/// How often [`keep`] runs the sequencer.
const EVERY: Duration = Duration::from_secs(1);

/// `entry` as it waits: canonical and hashed, without its place on the chain.
pub(crate) async fn queued<C: ConnectionTrait>(
    txn: &C,
    origin: &str,
    entry: Entry,
) -> AppResult<audit_pending::Model> {
    let occurred_at = canonical_time(match entry.at {
        Some(t) => t,
        None => crate::db::now(txn).await?,
    });
    let payload = canonical_json(&entry.payload);
    let payload_hash = sha256_hex(payload.as_bytes());
    Ok(audit_pending::Model {
        id: 0,
        origin: origin.to_owned(),
        occurred_at,
        actor: entry.actor,
        event: entry.event,
        action: entry.action.to_owned(),
        object_type: entry.object_type.to_owned(),
        object_id: entry.object_id,
        payload,
        payload_hash,
    })
}

/// A PostgreSQL write's append: passes the gate (shared) and inserts the entry into
/// `audit_pending`, in the write's transaction `txn`. `origin` is the writing process.
pub async fn enqueue<C: ConnectionTrait>(txn: &C, origin: &str, entry: Entry) -> AppResult<()> {
    gate(txn, "pg_advisory_xact_lock_shared").await?;
    let mut row = audit_pending::ActiveModel::from(queued(txn, origin, entry).await?);
    row.id = NotSet;
    audit_pending::Entity::insert(row)
        .exec_without_returning(txn)
        .await?;
    Ok(())
}

/// Takes the gate exclusively in `txn` (PostgreSQL; see the module doc).
pub(crate) async fn close_gate<C: ConnectionTrait>(txn: &C) -> AppResult<()> {
    gate(txn, "pg_advisory_xact_lock").await
}

async fn gate<C: ConnectionTrait>(txn: &C, function: &str) -> AppResult<()> {
    txn.execute_raw(Statement::from_sql_and_values(
        DbBackend::Postgres,
        format!("SELECT {function}($1)"),
        [GATE.into()],
    ))
    .await?;
    Ok(())
}

/// Appends `rows` to the chain after `head` (locked by the caller, in `txn`), in order:
/// the audit rows, their webhook deliveries, their announcements (PostgreSQL), and the head
/// advanced once. Returns the new head and the seq each row got.
pub(crate) async fn integrate<C: ConnectionTrait>(
    txn: &C,
    head: audit_head::Model,
    rows: &[audit_pending::Model],
) -> AppResult<(audit_head::Model, Vec<i64>)> {
    if rows.is_empty() {
        return Ok((head, vec![]));
    }
    let mut prev = head.head_hash;
    let mut seq = head.seq;
    let mut events = Vec::with_capacity(rows.len());
    for r in rows {
        seq += 1;
        let mut event = audit_event::Model {
            seq,
            occurred_at: r.occurred_at.clone(),
            actor: r.actor.clone(),
            event: r.event.clone(),
            action: r.action.clone(),
            object_type: r.object_type.clone(),
            object_id: r.object_id.clone(),
            payload: r.payload.clone(),
            payload_hash: r.payload_hash.clone(),
            prev_hash: prev,
            row_hash: String::new(),
        };
        event.row_hash = row_hash_of(&event);
        prev = event.row_hash.clone();
        events.push(event);
    }
    audit_event::Entity::insert_many(events.iter().cloned().map(audit_event::ActiveModel::from))
        .exec_without_returning(txn)
        .await?;
    deliveries::enqueue(txn, &events).await?;
    if txn.get_database_backend() == DbBackend::Postgres {
        announce(txn, &events, rows).await?;
    }
    audit_head::Entity::update(audit_head::ActiveModel {
        id: Set(1),
        seq: Set(seq),
        head_hash: Set(prev.clone()),
    })
    .exec(txn)
    .await?;
    let seqs = events.iter().map(|e| e.seq).collect();
    Ok((
        audit_head::Model {
            id: 1,
            seq,
            head_hash: prev,
        },
        seqs,
    ))
}

/// Announces `events` on [`CHANNEL`], in order, each with the process that committed it:
/// delivered when `txn` commits, never for a rollback.
async fn announce<C: ConnectionTrait>(
    txn: &C,
    events: &[audit_event::Model],
    rows: &[audit_pending::Model],
) -> AppResult<()> {
    let mut sql = String::from("SELECT ");
    let mut values = Vec::with_capacity(events.len());
    for (i, (e, r)) in events.iter().zip(rows).enumerate() {
        if i > 0 {
            sql.push_str(", ");
        }
        sql.push_str(&format!("pg_notify('{CHANNEL}', ${})", i + 1));
        let note = serde_json::json!({
            "seq": e.seq,
            "action": e.action,
            "event": e.event,
            "object": e.object_id,
            "origin": r.origin,
        });
        values.push(note.to_string().into());
    }
    txn.execute_raw(Statement::from_sql_and_values(
        DbBackend::Postgres,
        sql,
        values,
    ))
    .await?;
    Ok(())
}

/// Appends every pending row `txn` sees to the chain after `head` (locked by the caller)
/// and deletes them; the new head and how many were appended. SQLite has none.
pub(crate) async fn drain<C: ConnectionTrait>(
    txn: &C,
    mut head: audit_head::Model,
) -> AppResult<(audit_head::Model, usize)> {
    if txn.get_database_backend() != DbBackend::Postgres {
        return Ok((head, 0));
    }
    let mut n = 0;
    loop {
        let rows = audit_pending::Entity::find()
            .order_by_asc(audit_pending::Column::Id)
            .limit(BATCH)
            .all(txn)
            .await?;
        if rows.is_empty() {
            break;
        }
        (head, _) = integrate(txn, head, &rows).await?;
        audit_pending::Entity::delete_many()
            .filter(audit_pending::Column::Id.is_in(rows.iter().map(|r| r.id)))
            .exec(txn)
            .await?;
        n += rows.len();
        if (rows.len() as u64) < BATCH {
            break;
        }
    }
    Ok((head, n))
}

/// One sequencer run: every pending row committed before it locked the head is on the
/// chain when it returns (by this run or by one it waited for). How many it appended.
pub async fn run(db: &Db) -> AppResult<usize> {
    if db.backend() != DbBackend::Postgres {
        return Ok(0);
    }
    let txn = db.runs().conn.as_ref().unwrap_or(&db.conn).begin().await?;
    let head = audit_head::Entity::find_by_id(1)
        .lock_exclusive()
        .one(&txn)
        .await?
        .ok_or_else(|| AppError::Internal("audit head row is missing".into()))?;
    let (_, n) = drain(&txn, head).await?;
    if n == 0 {
        txn.rollback().await?;
    } else {
        txn.commit().await?;
    }
    Ok(n)
}

/// Returns once a run of this process that started after this call has ended: every
/// entry committed before the call is then on the chain. Runs go one at a time; a caller
/// whose run someone else made returns without its own.
pub async fn settle(db: &Db) -> AppResult<()> {
    let runs = db.runs();
    let target = runs.started.load(Ordering::SeqCst) + 1;
    let _turn = runs.turn.lock().await;
    if runs.done.load(Ordering::SeqCst) >= target {
        return Ok(());
    }
    let n = runs.started.fetch_add(1, Ordering::SeqCst) + 1;
    run(db).await?;
    runs.done.fetch_max(n, Ordering::SeqCst);
    Ok(())
}

/// Runs the sequencer now and every second for as long as the process runs (PostgreSQL):
/// entries left pending by a process that died after its commit get their place.
pub async fn keep(db: Db) {
    loop {
        db.availability().up().await;
        match settle(&db).await {
            Ok(()) => {}
            Err(e) => tracing::warn!("the audit sequencer could not run: {e}"),
        }
        tokio::time::sleep(EVERY).await;
    }
}
