//! etcd's leases (its lessor): a key put with a lease is deleted when the lease runs out.
//!
//! kube-apiserver puts every Event with a lease (`api::lease_manager`), which is how
//! `--event-ttl` works: nothing in kube-apiserver deletes old Events, etcd does when their lease
//! expires, and the deletion is an ordinary one that every watcher hears as DELETED.
//!
//! A key belongs to the lease of its last put: a later put with another lease or none, or a
//! delete, detaches it. Rather than keep a map from every key to its lease (and touch it on every
//! write of every kind), a lease remembers each put made with it as (key, revision written): the
//! key is still attached when the stored object still carries that revision, since any later
//! write gave it a new one. So only leased puts cost anything, and a step that expires nothing
//! costs one comparison with the earliest expiry, which is kept.

use crate::model::{Duration, ObjectKey, Time};
use crate::vec_map::VecMap;

/// A lease's id, as etcd grants it: they only increase.
pub type LeaseId = u64;

#[derive(Clone, Debug)]
struct Lease {
    expires: Time,
    /// Every put made with this lease: the key and the revision it wrote. Some of these keys
    /// have been written again or deleted since; `Etcd` tells which by the revision.
    puts: Vec<(ObjectKey, u64)>,
}

/// The leases etcd holds, with their expiry times. Part of etcd's data: a snapshot keeps them.
#[derive(Clone, Debug, Default)]
pub struct Lessor {
    last_id: LeaseId,
    /// Live leases by id. There are few (kube-apiserver reuses one for a minute of writes), and
    /// new ids go at the end, so a sorted vector.
    leases: VecMap<LeaseId, Lease>,
    /// The earliest expiry of a live lease, if any.
    next_expiry: Option<Time>,
}

impl Lessor {
    /// `etcdctl lease grant`: a new lease that expires `ttl` after `now`.
    pub fn grant(&mut self, now: Time, ttl: Duration) -> LeaseId {
        self.last_id += 1;
        let expires = now + ttl;
        self.leases.insert(self.last_id, Lease { expires, puts: Vec::new() });
        self.next_expiry = Some(self.next_expiry.map_or(expires, |t| t.min(expires)));
        self.last_id
    }

    /// Whether the lease exists (it was granted and has not expired or been revoked).
    pub fn is_live(&self, lease: LeaseId) -> bool {
        self.leases.contains_key(&lease)
    }

    /// When a live lease expires.
    pub fn expires(&self, lease: LeaseId) -> Option<Time> {
        self.leases.get(&lease).map(|l| l.expires)
    }

    /// The earliest time a lease expires, if any lease is live.
    pub fn next_expiry(&self) -> Option<Time> {
        self.next_expiry
    }

    /// How many leases are live.
    pub fn len(&self) -> usize {
        self.leases.len()
    }
    pub fn is_empty(&self) -> bool {
        self.leases.is_empty()
    }

    /// Records a put of `key` at `revision` with `lease`. False if the lease is not live (etcd's
    /// "requested lease not found"): the caller must not write.
    pub fn attach(&mut self, lease: LeaseId, key: ObjectKey, revision: u64) -> bool {
        match self.leases.get_mut(&lease) {
            Some(l) => {
                l.puts.push((key, revision));
                true
            }
            None => false,
        }
    }

    /// Takes out one lease that has expired at `now`, the earliest, and returns its puts, keys in
    /// order (etcd's revoke sorts the keys, so every member deletes them in the same order).
    pub fn take_expired(&mut self, now: Time) -> Option<Vec<(ObjectKey, u64)>> {
        if self.next_expiry.is_none_or(|t| t > now) {
            return None;
        }
        let (&id, _) = self.leases.iter().min_by_key(|(id, l)| (l.expires, **id))?;
        let mut puts = self.leases.remove(&id)?.puts;
        self.next_expiry = self.leases.values().map(|l| l.expires).min();
        crate::sort::sort(&mut puts);
        Some(puts)
    }

    /// Puts back the leases of a snapshot. Ids still only increase: one granted after the
    /// snapshot is never granted again.
    pub fn restore(&mut self, saved: &Lessor) {
        let last_id = self.last_id.max(saved.last_id);
        *self = saved.clone();
        self.last_id = last_id;
    }

    /// Forgets every lease (etcd's data directory is gone); ids still only increase.
    pub fn clear(&mut self) {
        self.leases.clear();
        self.next_expiry = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Kind;

    fn key(name: &str) -> ObjectKey {
        ObjectKey::new(Kind::Event, "default", name)
    }

    #[test]
    fn leases_expire_earliest_first_with_their_keys_in_order() {
        let mut lessor = Lessor::default();
        let late = lessor.grant(Time(0), Duration::secs(20));
        let early = lessor.grant(Time(1000), Duration::secs(10));
        assert_eq!(lessor.next_expiry(), Some(Time(11_000)));
        assert!(lessor.attach(early, key("b"), 5));
        assert!(lessor.attach(early, key("a"), 6));
        assert!(lessor.attach(late, key("c"), 7));
        assert!(lessor.take_expired(Time(10_999)).is_none(), "nothing expires before its time");
        let puts = lessor.take_expired(Time(11_000)).unwrap();
        assert_eq!(puts, vec![(key("a"), 6), (key("b"), 5)]);
        assert!(!lessor.is_live(early) && lessor.is_live(late));
        assert_eq!(lessor.next_expiry(), Some(Time(20_000)));
        assert!(lessor.take_expired(Time(30_000)).is_some());
        assert_eq!((lessor.next_expiry(), lessor.len()), (None, 0));
    }

    #[test]
    fn a_put_with_a_lease_that_is_gone_is_refused() {
        let mut lessor = Lessor::default();
        let id = lessor.grant(Time(0), Duration::secs(1));
        lessor.take_expired(Time(1000));
        assert!(!lessor.attach(id, key("a"), 1));
        assert!(!lessor.attach(99, key("a"), 1));
    }
}
