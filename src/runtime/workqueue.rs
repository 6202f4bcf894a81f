//! client-go's rate-limited work queue (k8s.io/client-go/util/workqueue), in simulated time.
//!
//! A key waiting in the queue is stored once however often it is added (dedup); a key being
//! processed is never handed out again until `done`, and if it was added meanwhile it goes back
//! in the queue then. A delayed key is also stored once: adding it again with a later due time
//! changes nothing, with an earlier one moves it earlier (client-go's delaying queue `insert`),
//! so a burst of failed syncs leaves one retry, not one per failure. Failed keys come back after the default controller rate limiter's delay:
//! the larger of 5 ms × 2^failures (capped at 1000 s) and a 10 qps / burst 100 token bucket.
//!
//! Order lives only in `queue` (FIFO) and `waiting` (due time, then insertion); the sets and
//! maps beside them are only asked about one key, so they are hashed rather than ordered trees
//! of key strings.

use super::fasthash::{FastMap, FastSet};
use crate::model::{Duration, Time};
use std::collections::{BTreeMap, VecDeque};
use std::hash::Hash;

const BASE_DELAY_MS: u64 = 5;
const MAX_DELAY_MS: u64 = 1_000_000;
const BUCKET_QPS: f64 = 10.0;
const BUCKET_BURST: f64 = 100.0;

#[derive(Debug)]
pub struct WorkQueue<K: Clone + Eq + Hash> {
    queue: VecDeque<K>,
    dirty: FastSet<K>,
    processing: FastSet<K>,
    /// Delayed adds, ordered by due time then insertion.
    waiting: BTreeMap<(Time, u64), K>,
    /// Where each delayed key sits in `waiting`: one entry per key.
    waiting_at: FastMap<K, (Time, u64)>,
    waiting_seq: u64,
    failures: FastMap<K, u32>,
    tokens: f64,
    tokens_at: Time,
    /// The time of the latest token-bucket reservation, which can run ahead of now.
    bucket_next_free: Time,
}

impl<K: Clone + Eq + Hash> Default for WorkQueue<K> {
    fn default() -> Self {
        WorkQueue {
            queue: VecDeque::new(),
            dirty: FastSet::default(),
            processing: FastSet::default(),
            waiting: BTreeMap::new(),
            waiting_at: FastMap::default(),
            waiting_seq: 0,
            failures: FastMap::default(),
            tokens: BUCKET_BURST,
            tokens_at: Time(0),
            bucket_next_free: Time(0),
        }
    }
}

impl<K: Clone + Eq + Hash> WorkQueue<K> {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn add(&mut self, key: K) {
        if !self.dirty.insert(key.clone()) {
            return;
        }
        if !self.processing.contains(&key) {
            self.queue.push_back(key);
        }
    }

    /// Adds the key once `delay` has passed (`AddAfter`).
    pub fn add_after(&mut self, key: K, delay: Duration, now: Time) {
        if delay.0 == 0 {
            return self.add(key);
        }
        let due = now + delay;
        if let Some(&slot) = self.waiting_at.get(&key) {
            if slot.0 <= due {
                return;
            }
            self.waiting.remove(&slot);
        }
        self.waiting_seq += 1;
        let slot = (due, self.waiting_seq);
        self.waiting_at.insert(key.clone(), slot);
        self.waiting.insert(slot, key);
    }

    /// Adds the key after the rate limiter's delay for it (`AddRateLimited`).
    pub fn add_rate_limited(&mut self, key: K, now: Time) {
        let delay = self.when(&key, now);
        self.add_after(key, delay, now);
    }

    fn when(&mut self, key: &K, now: Time) -> Duration {
        let n = self.failures.entry(key.clone()).or_insert(0);
        let exp = BASE_DELAY_MS.saturating_mul(1u64 << (*n).min(40)).min(MAX_DELAY_MS);
        *n += 1;
        // Token bucket: refill, then take one token or wait for the next.
        let elapsed = now.since(self.tokens_at).as_secs_f64();
        self.tokens = (self.tokens + elapsed * BUCKET_QPS).min(BUCKET_BURST);
        self.tokens_at = now;
        let bucket = if self.tokens >= 1.0 {
            self.tokens -= 1.0;
            0
        } else {
            let base = self.bucket_next_free.max(now);
            self.bucket_next_free = base + Duration((1000.0 / BUCKET_QPS) as u64);
            self.bucket_next_free.since(now).0
        };
        Duration(exp.max(bucket))
    }

    /// Clears a key's failure history (`Forget`), after a successful sync.
    pub fn forget(&mut self, key: &K) {
        self.failures.remove(key);
    }

    pub fn num_requeues(&self, key: &K) -> u32 {
        self.failures.get(key).copied().unwrap_or(0)
    }

    /// Moves delayed keys that are due into the queue.
    pub fn promote_due(&mut self, now: Time) {
        while let Some(entry) = self.waiting.first_entry() {
            if entry.key().0 > now {
                break;
            }
            let key = entry.remove();
            self.waiting_at.remove(&key);
            self.add(key);
        }
    }

    /// Hands out the next key, marking it as being processed.
    pub fn get(&mut self) -> Option<K> {
        let key = self.queue.pop_front()?;
        self.dirty.remove(&key);
        self.processing.insert(key.clone());
        Some(key)
    }

    /// Marks processing finished; a key added meanwhile goes back in the queue.
    pub fn done(&mut self, key: &K) {
        self.processing.remove(key);
        if self.dirty.contains(key) {
            self.queue.push_back(key.clone());
        }
    }

    /// Keys waiting to be handed out now.
    pub fn len(&self) -> usize {
        self.queue.len()
    }
    pub fn is_empty(&self) -> bool {
        self.queue.is_empty()
    }
    pub fn processing(&self) -> usize {
        self.processing.len()
    }
    pub fn delayed(&self) -> usize {
        self.waiting.len()
    }
    pub fn next_due(&self) -> Option<Time> {
        self.waiting.keys().next().map(|(t, _)| *t)
    }
    /// Forgets everything (the process restarted).
    pub fn clear(&mut self) {
        *self = Self::default();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_waiting_key_is_stored_once() {
        let mut q = WorkQueue::new();
        q.add("a");
        q.add("a");
        q.add("b");
        assert_eq!(q.len(), 2);
    }

    #[test]
    fn a_key_is_never_processed_twice_at_once() {
        let mut q = WorkQueue::new();
        q.add("a");
        assert_eq!(q.get(), Some("a"));
        q.add("a");
        assert_eq!(q.get(), None, "a is in flight; it must wait for done");
        q.done(&"a");
        assert_eq!(q.get(), Some("a"));
    }

    #[test]
    fn failures_back_off_exponentially_from_5ms() {
        let mut q = WorkQueue::new();
        let now = Time(0);
        let delays: Vec<u64> = (0..4).map(|_| q.when(&"a", now).0).collect();
        assert_eq!(delays, vec![5, 10, 20, 40]);
        q.forget(&"a");
        assert_eq!(q.when(&"a", now).0, 5);
        for _ in 0..60 {
            q.when(&"b", now);
        }
        assert_eq!(q.when(&"b", now).0, 1_000_000, "capped at 1000 s");
    }

    #[test]
    fn delayed_keys_arrive_when_due() {
        let mut q = WorkQueue::new();
        q.add_after("a", Duration(100), Time(0));
        q.promote_due(Time(99));
        assert!(q.is_empty());
        assert_eq!(q.next_due(), Some(Time(100)));
        q.promote_due(Time(100));
        assert_eq!(q.get(), Some("a"));
    }

    #[test]
    fn a_delayed_key_is_stored_once_at_its_earliest_due_time() {
        let mut q = WorkQueue::new();
        q.add_after("a", Duration(100), Time(0));
        q.add_after("a", Duration(300), Time(0));
        q.add_after("a", Duration(500), Time(0));
        assert_eq!(q.delayed(), 1, "later adds of a waiting key change nothing");
        assert_eq!(q.next_due(), Some(Time(100)));
        q.add_after("a", Duration(50), Time(0));
        assert_eq!((q.delayed(), q.next_due()), (1, Some(Time(50))), "an earlier add moves it earlier");
        q.promote_due(Time(50));
        assert_eq!((q.get(), q.delayed()), (Some("a"), 0));
        q.done(&"a");
        q.promote_due(Time(1000));
        assert_eq!(q.get(), None, "nothing was left behind to run the key again");
        q.add_after("a", Duration(10), Time(1000));
        assert_eq!(q.next_due(), Some(Time(1010)), "once promoted, the key can wait again");
    }
}
