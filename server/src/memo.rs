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
