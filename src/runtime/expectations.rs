//! Controller expectations (pkg/controller/controller_utils.go).
//!
//! After a controller sends N creates or deletes it must not act on the same owner again until
//! its cache has seen them, or it would count stale state and create twice. It records what it
//! expects and waits until watch events have lowered the counts to zero, or until five minutes
//! pass (ExpectationsTimeout) in case an event was lost. Deletions are tracked by pod key so a
//! deletion seen twice is counted once (UIDTrackingControllerExpectations). The maps are only
//! looked up, never walked, so they are hashed (one Fx layout shared with other maps, and less
//! wasm than a B-tree per layout).

use super::fasthash::{FastMap, FastSet};
use crate::model::{Duration, ObjectKey, Time};

pub const EXPECTATIONS_TIMEOUT: Duration = Duration::mins(5);

#[derive(Clone, Debug, Default, PartialEq)]
struct Expectation {
    add: i64,
    del: i64,
    at: Time,
    pending_deletes: FastSet<ObjectKey>,
}

#[derive(Debug, Default)]
pub struct Expectations {
    by_owner: FastMap<ObjectKey, Expectation>,
}

impl Expectations {
    /// Whether the owner's last actions have all been observed (or have timed out).
    pub fn satisfied(&self, owner: &ObjectKey, now: Time) -> bool {
        match self.by_owner.get(owner) {
            None => true,
            Some(e) => (e.add <= 0 && e.del <= 0) || now.since(e.at) > EXPECTATIONS_TIMEOUT,
        }
    }
    pub fn expect_creations(&mut self, owner: &ObjectKey, n: usize, now: Time) {
        self.by_owner.insert(owner.clone(), Expectation { add: n as i64, del: 0, at: now, pending_deletes: FastSet::default() });
    }
    pub fn expect_deletions(&mut self, owner: &ObjectKey, pods: Vec<ObjectKey>, now: Time) {
        let del = pods.len() as i64;
        self.by_owner.insert(owner.clone(), Expectation { add: 0, del, at: now, pending_deletes: pods.into_iter().collect() });
    }
    /// Creates and deletes expected together (`SetExpectations`), as the DaemonSet controller's
    /// sync issues both at once.
    pub fn set(&mut self, owner: &ObjectKey, adds: usize, pods: Vec<ObjectKey>, now: Time) {
        let del = pods.len() as i64;
        self.by_owner.insert(owner.clone(), Expectation { add: adds as i64, del, at: now, pending_deletes: pods.into_iter().collect() });
    }
    pub fn creation_observed(&mut self, owner: &ObjectKey) {
        if let Some(e) = self.by_owner.get_mut(owner) {
            e.add -= 1;
        }
    }
    /// A pod's deletion was seen (or its delete failed): lower the count once per pod.
    pub fn deletion_observed(&mut self, owner: &ObjectKey, pod: &ObjectKey) {
        if let Some(e) = self.by_owner.get_mut(owner) {
            if e.pending_deletes.remove(pod) {
                e.del -= 1;
            }
        }
    }
    pub fn forget(&mut self, owner: &ObjectKey) {
        self.by_owner.remove(owner);
    }
    /// What is still expected (adds, deletes), for the page's explanations.
    pub fn pending(&self, owner: &ObjectKey) -> (i64, i64) {
        self.by_owner.get(owner).map(|e| (e.add.max(0), e.del.max(0))).unwrap_or((0, 0))
    }
    pub fn clear(&mut self) {
        self.by_owner.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Kind;

    #[test]
    fn expectations_wait_for_every_observed_creation_or_five_minutes() {
        let rs = ObjectKey::new(Kind::ReplicaSet, "default", "web");
        let mut e = Expectations::default();
        assert!(e.satisfied(&rs, Time(0)));
        e.expect_creations(&rs, 2, Time(0));
        assert!(!e.satisfied(&rs, Time(1)));
        e.creation_observed(&rs);
        assert!(!e.satisfied(&rs, Time(1)));
        e.creation_observed(&rs);
        assert!(e.satisfied(&rs, Time(1)));
        e.expect_creations(&rs, 1, Time(0));
        assert!(!e.satisfied(&rs, Time(300_000)));
        assert!(e.satisfied(&rs, Time(300_001)), "ExpectationsTimeout is 5 minutes");
    }

    #[test]
    fn a_deletion_seen_twice_counts_once() {
        let rs = ObjectKey::new(Kind::ReplicaSet, "default", "web");
        let pod = ObjectKey::new(Kind::Pod, "default", "web-x");
        let other = ObjectKey::new(Kind::Pod, "default", "web-y");
        let mut e = Expectations::default();
        e.expect_deletions(&rs, vec![pod.clone(), other], Time(0));
        e.deletion_observed(&rs, &pod);
        e.deletion_observed(&rs, &pod);
        assert_eq!(e.pending(&rs), (0, 1));
    }
}
