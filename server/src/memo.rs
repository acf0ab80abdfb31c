//! A bounded map of immutable values shared by every request (parsed runs, persisted
//! queries): when full, the entry inserted first goes. Values are never updated in place,
//! so a reader can never see one half-written, and a holder that panicked leaves the map
//! consistent.

use std::collections::{HashMap, VecDeque};
use std::hash::Hash;
use std::sync::{Mutex, MutexGuard, PoisonError};

pub struct Memo<K, V> {
    capacity: usize,
    inner: Mutex<Inner<K, V>>,
}

struct Inner<K, V> {
    map: HashMap<K, V>,
    order: VecDeque<K>,
}

impl<K: Hash + Eq + Clone, V: Clone> Memo<K, V> {
    pub fn new(capacity: usize) -> Self {
        Memo {
            capacity: capacity.max(1),
            inner: Mutex::new(Inner {
                map: HashMap::new(),
                order: VecDeque::new(),
            }),
        }
    }

    pub fn get<Q>(&self, k: &Q) -> Option<V>
    where
        K: std::borrow::Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        self.lock().map.get(k).cloned()
    }

    /// Keeps `v` unless `k` is already there (two requests may race to compute the same
    /// value; the first one stays) and returns what is kept.
    pub fn insert(&self, k: K, v: V) -> V {
        let mut inner = self.lock();
        if let Some(kept) = inner.map.get(&k) {
            return kept.clone();
        }
        if inner.order.len() >= self.capacity
            && let Some(oldest) = inner.order.pop_front()
        {
            inner.map.remove(&oldest);
        }
        inner.order.push_back(k.clone());
        inner.map.insert(k, v.clone());
        v
    }

    fn lock(&self) -> MutexGuard<'_, Inner<K, V>> {
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// Values derived from an event's data, each computed once per event and head of the audit
/// chain. Every write appends to the chain, so what was computed from the data when the
/// head was at seq N is still the answer for anyone who finds the head at N; a later write
/// moves the head and the next asker computes anew. Concurrent askers of a value not yet
/// computed wait for the one computation. The caller reads the head *before* the data, so
/// a value is never older than its key.
pub struct PerHead<T>(Memo<(i64, i64), std::sync::Arc<tokio::sync::OnceCell<T>>>);

impl<T: Clone> PerHead<T> {
    /// (event, head) pairs kept: the few events being judged, each at its latest state.
    pub const CAPACITY: usize = 16;

    /// The value for `event` at `head`, computed by `compute` unless it already was.
    pub async fn get<E, F>(&self, event: i64, head: i64, compute: F) -> Result<T, E>
    where
        F: AsyncFnOnce() -> Result<T, E>,
    {
        let key = (event, head);
        let cell = match self.0.get(&key) {
            Some(cell) => cell,
            None => self.0.insert(key, std::sync::Arc::default()),
        };
        cell.get_or_try_init(|| compute()).await.cloned()
    }
}

impl<T: Clone> Default for PerHead<T> {
    fn default() -> Self {
        PerHead(Memo::new(Self::CAPACITY))
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};

    use super::PerHead;

    /// Counts its computations; each yields before answering, so concurrent askers overlap.
    async fn counted(calls: &AtomicUsize, value: i64) -> Result<i64, ()> {
        calls.fetch_add(1, Ordering::SeqCst);
        tokio::task::yield_now().await;
        Ok(value)
    }

    #[tokio::test]
    async fn a_value_is_computed_once_per_event_and_head() {
        let memo: PerHead<i64> = PerHead::default();
        let calls = AtomicUsize::new(0);
        assert_eq!(
            memo.get(1, 10, async || counted(&calls, 7).await).await,
            Ok(7)
        );
        // The same head: what was computed, not a second computation.
        assert_eq!(
            memo.get(1, 10, async || counted(&calls, 8).await).await,
            Ok(7)
        );
        assert_eq!(calls.load(Ordering::SeqCst), 1);
        // A write moved the head, or another event: computed anew.
        assert_eq!(
            memo.get(1, 11, async || counted(&calls, 9).await).await,
            Ok(9)
        );
        assert_eq!(
            memo.get(2, 11, async || counted(&calls, 5).await).await,
            Ok(5)
        );
        assert_eq!(calls.load(Ordering::SeqCst), 3);
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
    async fn concurrent_askers_share_one_computation() {
        let memo: Arc<PerHead<i64>> = Arc::default();
        let calls = Arc::new(AtomicUsize::new(0));
        let askers: Vec<_> = (0..32)
            .map(|_| {
                let (memo, calls) = (memo.clone(), calls.clone());
                tokio::spawn(async move { memo.get(1, 1, async || counted(&calls, 3).await).await })
            })
            .collect();
        for asker in askers {
            assert_eq!(asker.await.expect("joined"), Ok(3));
        }
        assert_eq!(calls.load(Ordering::SeqCst), 1);
    }

    #[tokio::test]
    async fn a_failed_computation_is_not_kept() {
        let memo: PerHead<i64> = PerHead::default();
        assert_eq!(
            memo.get(1, 1, async || Err::<i64, &str>("down")).await,
            Err("down")
        );
        assert_eq!(memo.get(1, 1, async || Ok::<i64, &str>(4)).await, Ok(4));
    }
}
