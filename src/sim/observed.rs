//! The simulation's store as a mirror of a cluster it does not run: the page attached to a real
//! Kubernetes API (`?cluster=/`) draws what it observes there with the same views, which read a
//! `Sim`.
//!
//! It exists so that there is one drawing path. An attached page holds a [`Sim::empty`] (no
//! controller, no scheduler, no kubelet: nothing here acts) and writes each object it observes
//! into etcd as it was seen — no defaulting, no admission, no validation, nobody notified — so
//! the views' trackers read it from etcd's change log as they read a simulated cluster. Time is
//! observed too: it only moves forward, to the time the page infers for the cluster.

use super::Sim;
use crate::model::{Object, ObjectKey, Time};
use crate::store::Change;

impl Sim {
    /// Stores `object` as observed: created, or replacing the stored version whatever its
    /// revision. The store numbers it with its own revision. None if etcd refused (it cannot:
    /// a create of a missing key and an update of a present one without a precondition).
    pub fn observe(&mut self, object: Object) -> Option<Change> {
        let key = object.key();
        let etcd = &mut self.api.etcd;
        if etcd.get(&key).is_some() {
            etcd.update(object, None).ok()
        } else {
            etcd.create(object).ok()
        }
    }

    /// Removes an object observed deleted. None if it was not stored.
    pub fn observe_deleted(&mut self, key: &ObjectKey) -> Option<Change> {
        self.api.etcd.delete(key, None).ok()
    }

    /// Moves the clock to `at` if that is later: an attached page's time is the cluster's, as
    /// the page infers it. Nothing is delivered (an attached simulation runs no process).
    pub fn observe_time(&mut self, at: Time) {
        if at > self.now {
            self.now = at;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Kind;

    #[test]
    fn observed_objects_are_stored_as_seen_and_leave_the_change_log_the_views_read() {
        let mut sim = Sim::empty(1);
        let before = sim.api().etcd.revision();
        let node = |ready: &str| {
            Object::from_json(serde_json::json!({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "node-9"},
                "status": {"conditions": [{"type": "Ready", "status": ready}]}}))
            .expect("a node")
        };
        let added = sim.observe(node("False")).expect("stored");
        assert_eq!(added.revision, before + 1);
        let modified = sim.observe(node("True")).expect("replaced");
        assert!(modified.prev.is_some());
        let key = ObjectKey::new(Kind::Node, "", "node-9");
        assert_eq!(sim.objects(Kind::Node).filter(|o| o.key() == key).count(), 1);
        assert_eq!(sim.api().etcd.changes_since(before).map(|c| c.count()), Ok(2));
        assert!(sim.observe_deleted(&key).is_some() && sim.observe_deleted(&key).is_none());
        sim.observe_time(Time(5_000));
        sim.observe_time(Time(4_000));
        assert_eq!(sim.now(), Time(5_000), "time only moves forward");
    }
}
