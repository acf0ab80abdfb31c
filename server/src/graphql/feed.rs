//! Live feeds: each subscription's message is computed once per event and (debounced)
//! change, and shared by every subscriber of that event who may still see it.
//!
//! Computed by each subscriber on each bus event, a thousand organizers watching judging
//! progress would run a thousand progress queries per saved review, and take the
//! connections the next review needs; ten thousand people waiting for the results would
//! each read the published run. Instead, the first subscriber of an event starts one task
//! per [`Kind`] of feed: it listens to the bus, lets a burst of changes settle
//! ([`Kind::QUIET`], [`Kind::MAX_DELAY`]), computes the message once, checks every
//! signed-in follower's credential (and, for organizer-only feeds, role) in two statements
//! for all of them, and puts the message with those verdicts in a `watch` channel that
//! every subscriber of the event reads. Subscribers filter; they do not query. The task
//! ends when the last subscriber has left.
//!
//! A message is a whole snapshot, not a delta (the progress, the leaderboard, the latest
//! publication): a subscriber that is slow to read skips to the newest one and loses
//! nothing, so a `watch` (latest value) fits, where the bus's `broadcast` has to tell a
//! lagging reader what it missed.

use std::any::{Any, TypeId};
use std::collections::{HashMap, HashSet};
use std::future::Future;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use entity::{event, membership};
use sea_orm::{ColumnTrait, EntityTrait, QueryFilter, QuerySelect};
use tokio::sync::broadcast::{self, error::RecvError};
use tokio::sync::watch;
use tokio::time::Instant;

use super::bus::BusEvent;
use super::context::Services;
use crate::domain::accounts::{self, Credential};
use crate::error::{AppError, AppResult};

/// What one kind of feed computes, when, and for whom.
pub trait Kind: Send + Sync + 'static {
    type Item: Clone + Send + Sync + 'static;
    /// A change is computed once no further change of the event has arrived for this
    /// long, so that a burst (autoAssign applying a plan, an import) is one computation.
    const QUIET: Duration;
    /// ... but never later than this after the first change of a burst.
    const MAX_DELAY: Duration;
    /// Whether only the event's organizers may follow it.
    const ORGANIZERS_ONLY: bool;
    /// Whether a bus event moves this feed of `event_id`.
    fn moves(ev: &BusEvent, event_id: i64) -> bool;
    /// The message after a change; None sends nothing.
    fn compute(
        services: &Services,
        e: &event::Model,
    ) -> impl Future<Output = AppResult<Option<Self::Item>>> + Send;
}

/// Whether a follower may receive a message, decided once for all of them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    Allowed,
    /// The credential was revoked or has expired.
    Unauthenticated,
    /// The follower no longer organizes the event.
    Forbidden,
}

/// One computed message and, for each signed-in follower registered when it was computed,
/// whether they may receive it. A follower without a verdict checks for itself.
pub struct Snapshot<T> {
    /// The message, or why it could not be computed: the error's code and its detail (for
    /// the log, never the client).
    pub item: Result<T, (&'static str, String)>,
    pub verdicts: HashMap<u64, Verdict>,
}

/// What a feed holds: nothing before its first computation, then the latest snapshot.
pub type Update<T> = Option<Arc<Snapshot<T>>>;

/// A signed-in follower, as the feed checks it.
#[derive(Clone)]
struct Follower {
    user_id: i64,
    site_admin: bool,
    credential: Credential,
}

struct Running<T> {
    tx: watch::Sender<Update<T>>,
    followers: Arc<Mutex<HashMap<u64, Follower>>>,
}

/// The live feeds of a process: one [`Feeds`] per [`Kind`], made on first use and shared by
/// every clone (part of [`Services`]). The kinds are defined beside the subscriptions that
/// follow them (`graphql::subscription`); nothing here lists them.
#[derive(Clone, Default)]
pub struct Live(Arc<Mutex<HashMap<TypeId, Box<dyn Any + Send + Sync>>>>);

impl Live {
    /// The feeds of kind `K`.
    pub fn of<K: Kind>(&self) -> Feeds<K> {
        let mut all = lock(&self.0);
        let slot = all
            .entry(TypeId::of::<K>())
            .or_insert_with(|| Box::new(Feeds::<K>::default()));
        // The slot of `K` holds a `Feeds<K>`: the downcast cannot fail.
        slot.downcast_ref::<Feeds<K>>().cloned().unwrap_or_default()
    }
}

/// The running feeds of one kind, one per followed event.
pub struct Feeds<K: Kind> {
    feeds: Arc<Mutex<HashMap<i64, Running<K::Item>>>>,
    computations: Arc<AtomicU64>,
    next_follower: Arc<AtomicU64>,
}

impl<K: Kind> Clone for Feeds<K> {
    fn clone(&self) -> Self {
        Feeds {
            feeds: self.feeds.clone(),
            computations: self.computations.clone(),
            next_follower: self.next_follower.clone(),
        }
    }
}

impl<K: Kind> Default for Feeds<K> {
    fn default() -> Self {
        Feeds {
            feeds: Arc::default(),
            computations: Arc::default(),
            next_follower: Arc::default(),
        }
    }
}

/// One subscriber's place in a feed: its receiver and its id among the followers; leaving
/// (dropping it) takes it off the list the feed checks.
pub struct Following<T> {
    pub id: u64,
    pub updates: watch::Receiver<Update<T>>,
    followers: Arc<Mutex<HashMap<u64, Follower>>>,
}

impl<T> Drop for Following<T> {
    fn drop(&mut self) {
        lock(&self.followers).remove(&self.id);
    }
}

impl<K: Kind> Feeds<K> {
    /// Follows the feed of `e`, starting it if none runs. The receiver sees the
    /// computations that follow changes made from now on. `caller` is the signed-in
    /// follower, whose credential (and role) each message is checked against.
    pub fn follow(
        &self,
        services: &Services,
        e: &event::Model,
        caller: Option<(&entity::user::Model, &Credential)>,
    ) -> Following<K::Item> {
        let id = self.next_follower.fetch_add(1, Ordering::Relaxed);
        let mut feeds = self.lock();
        let running = feeds.entry(e.id).or_insert_with(|| {
            let (tx, _) = watch::channel(None);
            let followers = Arc::new(Mutex::new(HashMap::new()));
            // Subscribed before this returns, so that no change made after it is missed.
            let changes = services.bus.subscribe();
            tokio::spawn(self.clone().run(
                services.clone(),
                changes,
                e.clone(),
                tx.clone(),
                followers.clone(),
            ));
            Running { tx, followers }
        });
        if let Some((user, credential)) = caller {
            lock(&running.followers).insert(
                id,
                Follower {
                    user_id: user.id,
                    site_admin: user.is_site_admin,
                    credential: credential.clone(),
                },
            );
        }
        Following {
            id,
            updates: running.tx.subscribe(),
            followers: running.followers.clone(),
        }
    }

    /// Messages computed for subscribers so far, over all events.
    pub fn computations(&self) -> u64 {
        self.computations.load(Ordering::Relaxed)
    }

    /// Events whose feed is running.
    pub fn running(&self) -> usize {
        self.lock().len()
    }

    /// Subscribers following the feed of `event_id` now.
    pub fn followers(&self, event_id: i64) -> usize {
        self.lock()
            .get(&event_id)
            .map_or(0, |r| r.tx.receiver_count())
    }

    fn lock(&self) -> MutexGuard<'_, HashMap<i64, Running<K::Item>>> {
        lock(&self.feeds)
    }

    /// The feed of one event: wait for a change, let the burst settle, compute, check the
    /// followers, send; until no one follows it.
    async fn run(
        self,
        services: Services,
        mut changes: broadcast::Receiver<BusEvent>,
        e: event::Model,
        tx: watch::Sender<Update<K::Item>>,
        followers: Arc<Mutex<HashMap<u64, Follower>>>,
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
                    Ok(ev) if K::moves(&ev, e.id) => {}
                    Ok(_) => continue,
                    // Missed bus events may have been this event's: compute to be sure.
                    Err(RecvError::Lagged(_)) => {}
                    Err(RecvError::Closed) => {
                        self.lock().remove(&e.id);
                        return;
                    }
                },
            }
            if K::QUIET > Duration::ZERO {
                settle::<K>(&mut changes, e.id).await;
            }
            self.computations.fetch_add(1, Ordering::Relaxed);
            let item = match K::compute(&services, &e).await {
                Ok(Some(item)) => Ok(item),
                Ok(None) => continue,
                Err(err) => Err((err.code(), err.to_string())),
            };
            let who: Vec<(u64, Follower)> = lock(&followers)
                .iter()
                .map(|(id, f)| (*id, f.clone()))
                .collect();
            // When the check itself fails, each follower checks for itself.
            let verdicts = check(&services, e.id, K::ORGANIZERS_ONLY, &who)
                .await
                .unwrap_or_else(|err| {
                    tracing::warn!(event = e.id, "a feed could not check its followers: {err}");
                    HashMap::new()
                });
            tx.send_replace(Some(Arc::new(Snapshot { item, verdicts })));
        }
    }

    /// Removes the feed of `event_id` if no one follows it any more; under the map's lock,
    /// so that a subscriber either finds the feed still running or starts a new one.
    fn retire(&self, event_id: i64, tx: &watch::Sender<Update<K::Item>>) -> bool {
        let mut feeds = self.lock();
        if tx.receiver_count() > 0 {
            return false;
        }
        feeds.remove(&event_id);
        true
    }
}

/// The verdict for every follower: whose credential is still live (two statements for all
/// of them) and, for an organizer-only feed, who still organizes the event (one more).
async fn check(
    services: &Services,
    event_id: i64,
    organizers_only: bool,
    who: &[(u64, Follower)],
) -> AppResult<HashMap<u64, Verdict>> {
    if who.is_empty() {
        return Ok(HashMap::new());
    }
    let db = &services.db.conn;
    let credentials: Vec<Credential> = who.iter().map(|(_, f)| f.credential.clone()).collect();
    let live = accounts::live_credentials(db, &credentials).await?;
    let organizers: HashSet<i64> = if organizers_only {
        let users: HashSet<i64> = who.iter().map(|(_, f)| f.user_id).collect();
        let mut found = HashSet::new();
        for chunk in users
            .into_iter()
            .collect::<Vec<_>>()
            .chunks(accounts::IN_CHUNK)
        {
            let rows: Vec<i64> = membership::Entity::find()
                .filter(membership::Column::EventId.eq(event_id))
                .filter(membership::Column::Role.eq(membership::Role::Organizer))
                .filter(membership::Column::UserId.is_in(chunk.iter().copied()))
                .select_only()
                .column(membership::Column::UserId)
                .into_tuple()
                .all(db)
                .await
                .map_err(AppError::Db)?;
            found.extend(rows);
        }
        found
    } else {
        HashSet::new()
    };
    Ok(who
        .iter()
        .map(|(id, f)| {
            let verdict = if !live.contains(&f.credential) {
                Verdict::Unauthenticated
            } else if organizers_only && !f.site_admin && !organizers.contains(&f.user_id) {
                Verdict::Forbidden
            } else {
                Verdict::Allowed
            };
            (*id, verdict)
        })
        .collect())
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // Every update of these maps is one insert or remove: consistent even if a holder
    // panicked.
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Returns once no change of `event_id` has arrived for [`Kind::QUIET`], or
/// [`Kind::MAX_DELAY`] after it was called.
async fn settle<K: Kind>(changes: &mut broadcast::Receiver<BusEvent>, event_id: i64) {
    let deadline = Instant::now() + K::MAX_DELAY;
    let mut quiet_until = Instant::now() + K::QUIET;
    loop {
        match tokio::time::timeout_at(quiet_until.min(deadline), changes.recv()).await {
            Err(_) | Ok(Err(RecvError::Closed)) => return,
            Ok(Ok(ev)) if !K::moves(&ev, event_id) => {}
            Ok(_) => quiet_until = Instant::now() + K::QUIET,
        }
    }
}
