//! The scheduling queue (pkg/scheduler/backend/queue): activeQ, backoffQ and the
//! unschedulable pods, in simulated time.
//!
//! activeQ is ordered by PrioritySort: higher `spec.priority` first, then the earlier queue
//! timestamp. A pod that failed for a transient reason waits out a per-pod backoff (1 s doubling
//! per attempt up to 10 s) in backoffQ; a pod no node fits waits in the unschedulable pods until
//! a cluster event that could help it (a node added or changed, an assigned pod deleted) moves
//! it back — to backoffQ if its backoff has not passed yet — or until it has waited 5 minutes.
//! Upstream moves backoffQ along every second and checks the 5-minute limit every 30 seconds;
//! the scheduler calls `flush_*` on those ticks.

use super::plugins::PluginSet;
use crate::model::{Duration, Object, ObjectKey, Time};
use crate::runtime::fasthash::FastMap;
use std::cmp::Reverse;
use std::collections::BTreeSet;
use std::rc::Rc;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct QueueConfig {
    /// `podInitialBackoffSeconds`.
    pub initial_backoff: Duration,
    /// `podMaxBackoffSeconds`.
    pub max_backoff: Duration,
    /// `podMaxInUnschedulablePodsDuration`.
    pub max_in_unschedulable: Duration,
}

impl Default for QueueConfig {
    fn default() -> Self {
        QueueConfig { initial_backoff: Duration::secs(1), max_backoff: Duration::secs(10), max_in_unschedulable: Duration::mins(5) }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Place {
    Active,
    Backoff,
    Unschedulable,
}

/// A pod waiting in the queue (`QueuedPodInfo`).
#[derive(Clone, Debug)]
pub struct QueuedPod {
    pub pod: Rc<Object>,
    /// When it last entered the queue (added, or requeued after a failed attempt).
    pub timestamp: Time,
    /// Scheduling attempts so far.
    pub attempts: u32,
    /// The plugins that rejected it in its last attempt.
    pub rejected_by: PluginSet,
    pub place: Place,
    seq: u64,
}

/// A pod taken out for a scheduling cycle; it belongs to no queue until it is requeued.
#[derive(Clone, Debug)]
pub struct Popped {
    pub key: ObjectKey,
    pub pod: Rc<Object>,
    /// Attempts including this one.
    pub attempts: u32,
    seq: u64,
}

type ActiveEntry = (Reverse<i32>, Time, u64, ObjectKey);
type TimedEntry = (Time, u64, ObjectKey);

#[derive(Debug, Default)]
pub struct SchedulingQueue {
    config: QueueConfig,
    /// Looked up by key only (the ordered sets decide every order), so Fx-hashed.
    pods: FastMap<ObjectKey, QueuedPod>,
    active: BTreeSet<ActiveEntry>,
    /// Ordered by backoff expiry.
    backoff: BTreeSet<TimedEntry>,
    /// Ordered by the time they became unschedulable.
    unschedulable: BTreeSet<TimedEntry>,
    seq: u64,
}

fn priority(pod: &Object) -> i32 {
    pod.as_pod().and_then(|p| p.spec.priority).unwrap_or(0)
}

/// `isPodUpdated`: did anything but status and bookkeeping change?
fn pod_updated(old: &Object, new: &Object) -> bool {
    match (old.as_pod(), new.as_pod()) {
        (Some(a), Some(b)) => {
            a.spec != b.spec || a.metadata.labels != b.metadata.labels || a.metadata.annotations != b.metadata.annotations
        }
        _ => true,
    }
}

impl SchedulingQueue {
    pub fn new(config: QueueConfig) -> Self {
        SchedulingQueue { config, ..Default::default() }
    }

    /// `calculateBackoffDuration`: none before the first attempt, then initial × 2^(attempts−1),
    /// capped.
    pub fn backoff_duration(&self, attempts: u32) -> Duration {
        if attempts == 0 {
            return Duration::ZERO;
        }
        let mut d = self.config.initial_backoff.0;
        for _ in 1..attempts {
            if d > self.config.max_backoff.0.saturating_sub(d) {
                return self.config.max_backoff;
            }
            d += d;
        }
        Duration(d.min(self.config.max_backoff.0))
    }

    fn backoff_expiry(&self, q: &QueuedPod) -> Time {
        q.timestamp + self.backoff_duration(q.attempts)
    }

    pub fn contains(&self, key: &ObjectKey) -> bool {
        self.pods.contains_key(key)
    }
    pub fn get(&self, key: &ObjectKey) -> Option<&QueuedPod> {
        self.pods.get(key)
    }
    /// (activeQ, backoffQ, unschedulable) lengths.
    pub fn lengths(&self) -> (usize, usize, usize) {
        (self.active.len(), self.backoff.len(), self.unschedulable.len())
    }
    pub fn has_active(&self) -> bool {
        !self.active.is_empty()
    }

    fn unplace(&mut self, key: &ObjectKey, q: &QueuedPod) {
        match q.place {
            Place::Active => self.active.remove(&(Reverse(priority(&q.pod)), q.timestamp, q.seq, key.clone())),
            Place::Backoff => self.backoff.remove(&(self.backoff_expiry(q), q.seq, key.clone())),
            Place::Unschedulable => self.unschedulable.remove(&(q.timestamp, q.seq, key.clone())),
        };
    }

    fn place(&mut self, key: ObjectKey, mut q: QueuedPod, place: Place) {
        q.place = place;
        match place {
            Place::Active => self.active.insert((Reverse(priority(&q.pod)), q.timestamp, q.seq, key.clone())),
            Place::Backoff => self.backoff.insert((self.backoff_expiry(&q), q.seq, key.clone())),
            Place::Unschedulable => self.unschedulable.insert((q.timestamp, q.seq, key.clone())),
        };
        self.pods.insert(key, q);
    }

    /// A new pending pod: straight into activeQ. A known one is updated instead.
    pub fn add(&mut self, key: &ObjectKey, pod: Rc<Object>, now: Time) {
        if self.pods.contains_key(key) {
            self.update(key, pod, now);
            return;
        }
        self.seq += 1;
        let q = QueuedPod { pod, timestamp: now, attempts: 0, rejected_by: PluginSet::default(), place: Place::Active, seq: self.seq };
        self.place(key.clone(), q, Place::Active);
    }

    /// A pending pod changed. An unschedulable pod whose spec or labels changed gets another
    /// chance (through backoffQ if its backoff has not passed).
    pub fn update(&mut self, key: &ObjectKey, pod: Rc<Object>, now: Time) {
        let Some(mut q) = self.pods.remove(key) else { return };
        self.unplace(key, &q);
        let updated = pod_updated(&q.pod, &pod);
        q.pod = pod;
        let place = match q.place {
            Place::Unschedulable if updated => self.after_backoff(&q, now),
            other => other,
        };
        self.place(key.clone(), q, place);
    }

    pub fn delete(&mut self, key: &ObjectKey) {
        if let Some(q) = self.pods.remove(key) {
            self.unplace(key, &q);
        }
    }

    /// activeQ's head, for a scheduling cycle.
    pub fn pop(&mut self) -> Option<Popped> {
        let (_, _, _, key) = self.active.pop_first()?;
        let q = self.pods.remove(&key)?;
        Some(Popped { key, pod: q.pod, attempts: q.attempts + 1, seq: q.seq })
    }

    fn requeued(popped: Popped, rejected_by: PluginSet, now: Time) -> (ObjectKey, QueuedPod) {
        let q =
            QueuedPod { pod: popped.pod, timestamp: now, attempts: popped.attempts, rejected_by, place: Place::Active, seq: popped.seq };
        (popped.key, q)
    }

    /// `AddUnschedulableIfNotPresent` after a FitError: wait for a helpful event. A pod no
    /// plugin rejected (an error) is retried after its backoff instead.
    pub fn add_unschedulable(&mut self, popped: Popped, rejected_by: PluginSet, now: Time) {
        if self.pods.contains_key(&popped.key) {
            return;
        }
        let (key, q) = Self::requeued(popped, rejected_by, now);
        let place = if rejected_by.is_empty() { Place::Backoff } else { Place::Unschedulable };
        self.place(key, q, place);
    }

    /// Requeues after an error (a failed bind, no nodes at all): retry after the backoff.
    pub fn add_backoff(&mut self, popped: Popped, now: Time) {
        if self.pods.contains_key(&popped.key) {
            return;
        }
        let (key, q) = Self::requeued(popped, PluginSet::default(), now);
        self.place(key, q, Place::Backoff);
    }

    fn after_backoff(&self, q: &QueuedPod, now: Time) -> Place {
        if self.backoff_expiry(q) > now {
            Place::Backoff
        } else {
            Place::Active
        }
    }

    /// `movePodsToActiveOrBackoffQueue` for the unschedulable pods `may_help` says this event
    /// could make schedulable. Returns how many moved.
    pub fn move_unschedulable_if(&mut self, now: Time, mut may_help: impl FnMut(&QueuedPod) -> bool) -> usize {
        let keys: Vec<ObjectKey> =
            self.unschedulable.iter().map(|(_, _, k)| k).filter(|k| self.pods.get(*k).is_some_and(&mut may_help)).cloned().collect();
        for key in &keys {
            self.requeue_unschedulable(key, now);
        }
        keys.len()
    }

    fn requeue_unschedulable(&mut self, key: &ObjectKey, now: Time) {
        let Some(q) = self.pods.remove(key) else { return };
        self.unplace(key, &q);
        let place = self.after_backoff(&q, now);
        self.place(key.clone(), q, place);
    }

    /// `flushBackoffQCompleted`: pods whose backoff ended by `until` go to activeQ.
    pub fn flush_backoff_completed(&mut self, until: Time) {
        while let Some((expiry, _, key)) = self.backoff.first().cloned() {
            if expiry > until {
                break;
            }
            self.backoff.pop_first();
            if let Some(mut q) = self.pods.remove(&key) {
                q.place = Place::Active;
                self.place(key, q, Place::Active);
            }
        }
    }

    /// `flushUnschedulablePodsLeftover`: pods unschedulable for longer than the limit at
    /// `until` are tried again.
    pub fn flush_unschedulable_leftover(&mut self, until: Time) {
        let limit = self.config.max_in_unschedulable;
        let stale: Vec<ObjectKey> =
            self.unschedulable.iter().take_while(|(since, _, _)| until.since(*since) > limit).map(|(_, _, k)| k.clone()).collect();
        for key in &stale {
            self.requeue_unschedulable(key, until);
        }
    }

    pub fn earliest_backoff_expiry(&self) -> Option<Time> {
        self.backoff.first().map(|(t, _, _)| *t)
    }
    /// When the longest-waiting unschedulable pod passes the limit.
    pub fn earliest_unschedulable_deadline(&self) -> Option<Time> {
        self.unschedulable.first().map(|(t, _, _)| *t + self.config.max_in_unschedulable + Duration::millis(1))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Kind, Pod};
    use crate::scheduler::plugins::Plugin;

    fn pod(name: &str, priority: Option<i32>) -> (ObjectKey, Rc<Object>) {
        let mut p = Pod::default();
        p.metadata.name = name.into();
        p.metadata.namespace = "default".into();
        p.spec.priority = priority;
        (ObjectKey::new(Kind::Pod, "default", name), Rc::new(Object::Pod(p)))
    }

    fn fit_rejected() -> PluginSet {
        let mut s = PluginSet::default();
        s.insert(Plugin::NodeResourcesFit);
        s
    }

    #[test]
    fn backoff_doubles_from_one_second_to_ten() {
        let q = SchedulingQueue::new(QueueConfig::default());
        let secs: Vec<u64> = (0..=7).map(|a| q.backoff_duration(a).0 / 1000).collect();
        assert_eq!(secs, [0, 1, 2, 4, 8, 10, 10, 10]);
        assert_eq!(q.backoff_duration(200), Duration::secs(10), "no overflow after many attempts");
    }

    #[test]
    fn active_queue_orders_by_priority_then_arrival() {
        let mut q = SchedulingQueue::new(QueueConfig::default());
        for (name, prio, at) in [("low-early", None, 1), ("high", Some(1000), 3), ("low-late", Some(0), 2)] {
            let (k, p) = pod(name, prio);
            q.add(&k, p, Time(at));
        }
        let order: Vec<String> = std::iter::from_fn(|| q.pop()).map(|p| p.key.name.to_string()).collect();
        assert_eq!(order, ["high", "low-early", "low-late"]);
    }

    #[test]
    fn unschedulable_pods_move_on_events_through_backoff() {
        let mut q = SchedulingQueue::new(QueueConfig::default());
        let (k, p) = pod("web", None);
        q.add(&k, p, Time(0));
        let popped = q.pop().expect("pod");
        assert_eq!(popped.attempts, 1);
        q.add_unschedulable(popped, fit_rejected(), Time(100));
        assert_eq!(q.lengths(), (0, 0, 1));
        // An event within the 1 s backoff sends it to backoffQ, which releases it at 1.1 s.
        assert_eq!(q.move_unschedulable_if(Time(500), |qp| qp.rejected_by.contains(Plugin::NodeResourcesFit)), 1);
        assert_eq!(q.lengths(), (0, 1, 0));
        q.flush_backoff_completed(Time(1000));
        assert_eq!(q.lengths(), (0, 1, 0));
        q.flush_backoff_completed(Time(1100));
        assert_eq!(q.lengths(), (1, 0, 0));
        // An event no rejecting plugin cares about leaves it where it is.
        let popped = q.pop().expect("pod");
        q.add_unschedulable(popped, fit_rejected(), Time(2000));
        assert_eq!(q.move_unschedulable_if(Time(9000), |qp| qp.rejected_by.contains(Plugin::TaintToleration)), 0);
        // After 5 minutes it is retried anyway (strictly more than 5 min).
        q.flush_unschedulable_leftover(Time(2000 + 300_000));
        assert_eq!(q.lengths(), (0, 0, 1));
        q.flush_unschedulable_leftover(Time(2000 + 330_000));
        assert_eq!(q.lengths(), (1, 0, 0));
    }

    #[test]
    fn a_changed_spec_moves_an_unschedulable_pod_but_a_status_change_does_not() {
        let mut q = SchedulingQueue::new(QueueConfig::default());
        let (k, p) = pod("web", None);
        q.add(&k, p.clone(), Time(0));
        let popped = q.pop().expect("pod");
        q.add_unschedulable(popped, fit_rejected(), Time(0));
        let mut status_only = p.as_pod().cloned().expect("pod");
        status_only.status.message = Some("x".into());
        q.update(&k, Rc::new(Object::Pod(status_only.clone())), Time(5000));
        assert_eq!(q.get(&k).map(|qp| qp.place), Some(Place::Unschedulable));
        status_only.metadata.labels.insert("tier".into(), "web".into());
        q.update(&k, Rc::new(Object::Pod(status_only)), Time(5000));
        assert_eq!(q.get(&k).map(|qp| qp.place), Some(Place::Active));
        q.delete(&k);
        assert_eq!(q.lengths(), (0, 0, 0));
    }
}
