//! The one way to write: a [`Write`] is begun once per mutation (by the GraphQL layer's
//! `begin`/`idempotent`, or a CLI command), and every domain function that writes takes it.
//!
//! It holds three things a write's rules must agree on:
//!
//! - **the transaction.** Everything a rule reads is read in it: the event too
//!   ([`Write::event`], [`Write::event_by_id`]). An event read before `BEGIN` is a copy that
//!   a concurrent change (an organizer closing the submission window) can make stale between
//!   the read and the write; the rule would then pass against a window that no longer
//!   exists. So the event is read inside the transaction and locked (`FOR UPDATE` on
//!   PostgreSQL; SQLite's `BEGIN IMMEDIATE` already excludes other writers): it cannot move
//!   until this write commits, and a change that is under way is waited for and then seen.
//!   The lock is the same for almost every rule, so a write never upgrades a weaker lock it
//!   took earlier (two writers doing so deadlock), and every rule that spans rows written by
//!   different mutations of one event (a team's size, a voter's credits, a rubric and the
//!   scores checked against it) holds because those mutations take turns. It costs
//!   PostgreSQL one writer per event at a time for the few milliseconds of a write, which
//!   SQLite has anyway.
//!
//!   The one exception is the write that judging day is made of, a judge saving a review
//!   ([`Write::event_by_id_shared`]: `FOR SHARE`). Its rules only read the event (the
//!   judging window), the rubric and the project, which change only under the exclusive
//!   lock, so a window closing or a rubric changing still waits for the reviews under way
//!   and is then seen; the only rows it writes are its own assignment's review, and it
//!   locks that assignment (`FOR UPDATE`) so two saves of one review still take turns. So
//!   64 judges' saves commit side by side instead of one at a time. A write that takes the
//!   shared lock must never change the event row (that upgrade is the deadlock above) nor
//!   rely on rows another shared writer writes.
//! - **the actor** on whose behalf it runs ([`Write::actor`]; none for `signUp`, `logIn`
//!   and the like), and
//! - **now**, read once from the database's clock right after `BEGIN` ([`Write::now`]):
//!   every window check, every timestamp written and the audit entry ([`Write::append`])
//!   use that one reading, so a write cannot check a window at one instant and stamp its
//!   rows at another. (PostgreSQL's `CURRENT_TIMESTAMP` was already the transaction's start;
//!   SQLite's `'now'` moves between statements.)
//!
//! Organizer-only rules take an [`Organizer`]: a proof that only [`Write::organizer`] makes
//! (its field is private to this module), after checking the actor organizes the event
//! (or is a site admin). A domain function that needs an organizer asks for one in its
//! signature, so a caller that forgot the check does not compile.

use std::sync::atomic::{AtomicBool, Ordering};

use chrono::{DateTime, Utc};
use entity::event;
use sea_orm::{ColumnTrait, DatabaseTransaction, DbBackend, EntityTrait, QueryFilter, QuerySelect};

use super::{Actor, is_organizer};
use crate::audit::{self, Entry};
use crate::db::Db;
use crate::error::{AppError, AppResult};

/// One write: its transaction, its actor and its one reading of the clock.
pub struct Write {
    txn: DatabaseTransaction,
    actor: Option<Actor>,
    now: DateTime<Utc>,
    db: Db,
    /// Whether its entry waits in `audit_pending` for the sequencer (PostgreSQL).
    queued: AtomicBool,
}

impl Write {
    /// Opens the write transaction ([`Db::write`]) and reads the clock once, in it.
    pub async fn begin(db: &Db, actor: Option<Actor>) -> AppResult<Write> {
        let txn = db.write().await?;
        let now = crate::db::now(&txn).await?;
        Ok(Write {
            txn,
            actor,
            now,
            db: db.clone(),
            queued: AtomicBool::new(false),
        })
    }

    /// The transaction, for the reads and writes of the rules.
    pub fn txn(&self) -> &DatabaseTransaction {
        &self.txn
    }

    /// Now, by the database's clock, read once when the write began.
    pub fn now(&self) -> DateTime<Utc> {
        self.now
    }

    /// The signed-in user on whose behalf the write runs; UNAUTHENTICATED when none.
    pub fn actor(&self) -> AppResult<&Actor> {
        self.actor.as_ref().ok_or(AppError::Unauthenticated)
    }

    /// The signed-in user on whose behalf the write runs, if any.
    pub fn caller(&self) -> Option<&Actor> {
        self.actor.as_ref()
    }

    /// The event with `slug`, read and locked in this transaction; NOT_FOUND when none has
    /// it or it was deleted (archived).
    pub async fn event(&self, slug: &str) -> AppResult<event::Model> {
        event::Entity::find()
            .filter(event::Column::Slug.eq(slug))
            .filter(event::Column::ArchivedAt.is_null())
            .lock_exclusive()
            .one(&self.txn)
            .await?
            .ok_or(AppError::NotFound("event"))
    }

    /// The event with row id `id` (the event of a project, team, assignment...), read and
    /// locked in this transaction like [`Write::event`].
    pub async fn event_by_id(&self, id: i64) -> AppResult<event::Model> {
        super::lock_event(&self.txn, id).await
    }

    /// The event with row id `id`, read in this transaction and locked against change
    /// (`FOR SHARE` on PostgreSQL) but not against other writes that lock it the same way.
    /// Only for the writes the module doc names: their rules read the event and never
    /// change it, and they lock the rows they write themselves.
    pub async fn event_by_id_shared(&self, id: i64) -> AppResult<event::Model> {
        event::Entity::find_by_id(id)
            .lock_shared()
            .one(&self.txn)
            .await?
            .ok_or(AppError::NotFound("event"))
    }

    /// The proof that the actor organizes `event` (or is a site admin); FORBIDDEN otherwise,
    /// UNAUTHENTICATED without an actor.
    pub async fn organizer<'a>(&'a self, event: &'a event::Model) -> AppResult<Organizer<'a>> {
        self.try_organizer(event)
            .await?
            .ok_or_else(|| AppError::forbidden("only the event's organizers may do this"))
    }

    /// The proof when the actor organizes `event` (or is a site admin), else `None`: for
    /// rules that let organizers do more than others. UNAUTHENTICATED without an actor.
    pub async fn try_organizer<'a>(
        &'a self,
        event: &'a event::Model,
    ) -> AppResult<Option<Organizer<'a>>> {
        let actor = self.actor()?;
        Ok(is_organizer(&self.txn, actor, event)
            .await?
            .then_some(Organizer { actor, event }))
    }

    /// Appends the write's one audit entry, stamped with [`Write::now`]. On PostgreSQL it is
    /// committed with the write and put on the chain right after the commit, before
    /// [`Write::commit`] returns ([`audit::sequencer`]); on SQLite it is appended in place.
    pub async fn append(&self, entry: Entry) -> AppResult<()> {
        let entry = entry.at(self.now);
        if self.db.backend() == DbBackend::Postgres {
            audit::sequencer::enqueue(&self.txn, self.db.origin(), entry).await?;
            self.queued.store(true, Ordering::Relaxed);
        } else {
            audit::append(&self.txn, self.db.origin(), entry).await?;
        }
        Ok(())
    }

    /// Appends the write's one audit entry in place and returns its seq, for a write that
    /// records it: the chain's head is held until the write ends ([`audit::lock_head`]).
    pub async fn append_in_place(&self, entry: Entry) -> AppResult<i64> {
        audit::append(&self.txn, self.db.origin(), entry.at(self.now)).await
    }

    /// Commits the write; then, when its entry was queued, returns once the entry is on
    /// the chain. Should the sequencer fail just then (the database went away after the
    /// commit), the write is still done: it is said in the log, and the entry is sequenced
    /// by the next run (every server runs one each second).
    pub async fn commit(self) -> AppResult<()> {
        self.txn.commit().await?;
        if self.queued.load(Ordering::Relaxed)
            && let Err(e) = audit::sequencer::settle(&self.db).await
        {
            tracing::warn!("a committed write's audit entry waits for the next sequencer run: {e}");
        }
        Ok(())
    }

    /// Rolls the write back (dropping it does too, later).
    pub async fn rollback(self) {
        let _ = self.txn.rollback().await;
    }
}

/// Proof that the actor of a [`Write`] organizes an event: made only by
/// [`Write::organizer`], taken by every organizer-only domain function.
#[derive(Clone, Copy)]
pub struct Organizer<'a> {
    actor: &'a Actor,
    event: &'a event::Model,
}

impl<'a> Organizer<'a> {
    /// The organizer (or site admin).
    pub fn actor(&self) -> &'a Actor {
        self.actor
    }

    /// The event they organize, as the write's transaction read it.
    pub fn event(&self) -> &'a event::Model {
        self.event
    }
}
