//! The live leaderboard's shared feed: one computation per event and (debounced) change,
//! sent to every subscriber of that event.
//!
//! A full calibration costs milliseconds to seconds of CPU. Computed by each subscriber on
//! each bus event, five organizers watching while autoAssign applies fifty assignments
//! would cost two hundred and fifty of them. Instead, the first subscriber of an event
//! starts one task: it listens to the bus, lets a burst of changes settle ([`QUIET`],
//! [`MAX_DELAY`]), computes the leaderboard once and puts it in a `watch` channel that
//! every subscriber of the event reads. The task ends when the last subscriber has left.
//!
//! A leaderboard is a whole snapshot, not a delta: a subscriber that is slow to read skips
//! to the newest one and loses nothing, so a `watch` (latest value) fits, where the bus's
//! `broadcast` has to tell a lagging reader what it missed.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use entity::event;
use tokio::sync::broadcast::{self, error::RecvError};
use tokio::sync::watch;
use tokio::time::Instant;

use super::bus::{Bus, BusEvent};
use super::object::results::Leaderboard;
use crate::db::Db;

/// A change is computed once no further change of the event has arrived for this long: a
/// burst (autoAssign applying a plan, a judge saving reviews in a row, an import) arrives
/// within a few hundred milliseconds and is folded into one computation, while a single
/// change still reaches the organizers about half a second later, which a leaderboard that
/// moves at the pace of human judging does not notice.
pub const QUIET: Duration = Duration::from_millis(500);

/// ... but never later than this after the first change of a burst, so that a steady
/// stream of changes still updates the leaderboard every few seconds.
pub const MAX_DELAY: Duration = Duration::from_secs(3);

/// What a feed holds: nothing before its first computation, then the latest leaderboard,
/// or the internal reason its computation failed (logged and redacted where it is sent).
pub type Update = Option<Result<Leaderboard, String>>;

/// The running feeds, one per followed event (part of [`super::Services`]).
#[derive(Clone, Default)]
pub struct LeaderboardFeeds {
    feeds: Arc<Mutex<HashMap<i64, watch::Sender<Update>>>>,
    computations: Arc<AtomicU64>,
}

impl LeaderboardFeeds {
    /// Follows the leaderboard of `e`, starting its feed if none runs. The receiver sees
    /// the computations that follow changes made from now on.
    pub fn subscribe(&self, db: &Db, bus: &Bus, e: &event::Model) -> watch::Receiver<Update> {
        let mut feeds = self.lock();
        if let Some(tx) = feeds.get(&e.id) {
            return tx.subscribe();
        }
        let (tx, rx) = watch::channel(None);
        feeds.insert(e.id, tx.clone());
        // Subscribed before this returns, so that no change made after it is missed.
        let changes = bus.subscribe();
        tokio::spawn(self.clone().run(db.clone(), changes, e.clone(), tx));
        rx
    }

    /// Leaderboards computed for subscribers so far, over all events.
    pub fn computations(&self) -> u64 {
        self.computations.load(Ordering::Relaxed)
    }

    /// Events whose feed is running.
    pub fn running(&self) -> usize {
        self.lock().len()
    }

    /// Subscribers following the leaderboard of `event_id` now.
    pub fn followers(&self, event_id: i64) -> usize {
        self.lock()
            .get(&event_id)
            .map_or(0, watch::Sender::receiver_count)
    }

    fn lock(&self) -> MutexGuard<'_, HashMap<i64, watch::Sender<Update>>> {
        // Every update of the map is one insert or remove: it is consistent even if a
        // holder panicked.
        self.feeds.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The feed of one event: wait for a change, let the burst settle, compute, send;
    /// until no one follows it.
    async fn run(
        self,
        db: Db,
        mut changes: broadcast::Receiver<BusEvent>,
        e: event::Model,
        tx: watch::Sender<Update>,
    ) {
        loop {
            tokio::select! {
                () = tx.closed() => {
                    if self.retire(e.id, &tx) {
                        return;
                    }
                    // Someone subscribed again meanwhile: go on.
                    continue;
                }
                change = changes.recv() => match change {
                    Ok(ev) if is_change(&ev, e.id) => {}
                    Ok(_) => continue,
                    // Missed bus events may have been this event's: compute to be sure.
                    Err(RecvError::Lagged(_)) => {}
                    Err(RecvError::Closed) => {
                        self.lock().remove(&e.id);
                        return;
                    }
                },
            }
            settle(&mut changes, e.id).await;
            self.computations.fetch_add(1, Ordering::Relaxed);
            let update = Leaderboard::load(&db.conn, &e)
                .await
                .map_err(|err| err.to_string());
            tx.send_replace(Some(update));
        }
    }

    /// Removes the feed of `event_id` if no one follows it any more; under the map's lock,
    /// so that a subscriber either finds the feed still running or starts a new one.
    fn retire(&self, event_id: i64, tx: &watch::Sender<Update>) -> bool {
        let mut feeds = self.lock();
        if tx.receiver_count() > 0 {
            return false;
        }
        feeds.remove(&event_id);
        true
    }
}

/// Whether a bus event moves the leaderboard of `event_id` (the same changes that move
/// judging progress).
fn is_change(ev: &BusEvent, event_id: i64) -> bool {
    matches!(ev, BusEvent::JudgingChanged { event_id: id } if *id == event_id)
}

/// Returns once no change of `event_id` has arrived for [`QUIET`], or [`MAX_DELAY`] after
/// it was called.
async fn settle(changes: &mut broadcast::Receiver<BusEvent>, event_id: i64) {
    let deadline = Instant::now() + MAX_DELAY;
    let mut quiet_until = Instant::now() + QUIET;
    loop {
        match tokio::time::timeout_at(quiet_until.min(deadline), changes.recv()).await {
            Err(_) | Ok(Err(RecvError::Closed)) => return,
            Ok(Ok(ev)) if !is_change(&ev, event_id) => {}
            Ok(_) => quiet_until = Instant::now() + QUIET,
        }
    }
}
