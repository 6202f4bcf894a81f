//! etcd: the cluster's memory. A versioned key-value store with one global revision.
//!
//! Every write bumps the revision and stamps it into the object's `resourceVersion`; a write may
//! demand the revision it last saw (compare-and-swap), which is how optimistic concurrency and the
//! 409 Conflict arise. A change log backs watches from a past revision until it is compacted,
//! after which such a watch is told the revision is gone (410) and the client must re-list.
//! A key may be put with a lease (`lease.rs`); when the lease runs out, etcd deletes the key.

pub mod lease;

use crate::model::{Duration, Kind, Object, ObjectKey, Shared, Time};
use crate::runtime::table::ObjectTable;
use lease::{LeaseId, Lessor};
use std::collections::VecDeque;
use std::rc::Rc;

/// What happened to a key at one revision, as a watch reports it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum ChangeType {
    Added,
    Modified,
    Deleted,
}

impl ChangeType {
    /// The watch event type on the wire.
    pub fn as_str(self) -> &'static str {
        match self {
            ChangeType::Added => "ADDED",
            ChangeType::Modified => "MODIFIED",
            ChangeType::Deleted => "DELETED",
        }
    }
}

/// One committed write. `object` is the new state (for a delete: the last state, carrying the
/// deletion's revision); `prev` the state before, so watch filters can see both sides.
#[derive(Clone, Debug)]
pub struct Change {
    pub revision: u64,
    pub type_: ChangeType,
    pub object: Rc<Object>,
    pub prev: Option<Rc<Object>>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum StoreError {
    /// The key exists (create).
    Exists,
    /// The key does not exist (update, delete).
    NotFound,
    /// The stored revision differs from the one the writer expected.
    Conflict,
    /// A put named a lease that has expired or was never granted.
    LeaseNotFound,
    /// The watch asked for a revision older than the oldest kept.
    Compacted { oldest: u64 },
}

/// A point-in-time copy, as `etcdctl snapshot save` makes.
#[derive(Clone, Debug)]
pub struct Snapshot {
    pub revision: u64,
    objects: ObjectTable,
    leases: Lessor,
}

impl Snapshot {
    pub fn len(&self) -> usize {
        self.objects.len()
    }
    pub fn is_empty(&self) -> bool {
        self.objects.is_empty()
    }
}

#[derive(Debug, Default)]
pub struct Etcd {
    revision: u64,
    /// In a table that is ordered for lists and hashed for lookups: most writes update a key
    /// that exists, and touch only the hash index.
    objects: ObjectTable,
    log: VecDeque<Change>,
    /// Revisions at or below this one are compacted away.
    compacted: u64,
    leases: Lessor,
}

impl Etcd {
    pub fn new() -> Self {
        Self::default()
    }
    /// The current global revision (the `resourceVersion` of the latest write).
    pub fn revision(&self) -> u64 {
        self.revision
    }
    pub fn compacted_revision(&self) -> u64 {
        self.compacted
    }
    pub fn len(&self) -> usize {
        self.objects.len()
    }
    pub fn is_empty(&self) -> bool {
        self.objects.is_empty()
    }
    pub fn get(&self, key: &ObjectKey) -> Option<&Rc<Object>> {
        self.objects.get(key)
    }

    /// Every object of a kind, in key order; `namespace` narrows it when given.
    pub fn list<'a>(&'a self, kind: Kind, namespace: Option<&'a str>) -> impl Iterator<Item = &'a Rc<Object>> + 'a {
        self.list_in(kind, None, namespace)
    }

    /// `list`, narrowed to one custom resource's objects when `resource` is given (a
    /// CustomResourceDefinition's name). Without one, the custom objects of every resource,
    /// whose namespaces interleave, so the namespace is filtered rather than ranged over.
    pub fn list_in<'a>(
        &'a self,
        kind: Kind,
        resource: Option<&'a str>,
        namespace: Option<&'a str>,
    ) -> impl Iterator<Item = &'a Rc<Object>> + 'a {
        let interleaved = kind == Kind::CustomObject && resource.is_none();
        let start = ObjectKey {
            kind,
            resource: resource.unwrap_or("").into(),
            namespace: if interleaved { Default::default() } else { namespace.unwrap_or("").into() },
            name: Default::default(),
        };
        self.objects
            .range_from(&start)
            .take_while(move |(k, _)| {
                k.kind == kind && resource.is_none_or(|r| k.resource == r) && (interleaved || namespace.is_none_or(|ns| k.namespace == ns))
            })
            .filter(move |(k, _)| namespace.is_none_or(|ns| k.namespace == ns))
            .map(|(_, v)| v)
    }

    pub fn count(&self, kind: Kind) -> usize {
        self.list(kind, None).count()
    }

    /// Stores a new key. The object's `resourceVersion` becomes the new revision.
    pub fn create(&mut self, object: Object) -> Result<Change, StoreError> {
        self.create_leased(object, None)
    }

    /// `create`, the key put with `lease` (deleted when it expires) when one is given.
    pub fn create_leased(&mut self, mut object: Object, lease: Option<LeaseId>) -> Result<Change, StoreError> {
        let key = object.key();
        if self.objects.contains_key(&key) {
            return Err(StoreError::Exists);
        }
        self.check_lease(lease)?;
        self.revision += 1;
        object.meta_mut().resource_version = self.revision;
        let object = Rc::new(object);
        self.attach(lease, &key);
        self.objects.insert(key, object.clone());
        Ok(self.record(ChangeType::Added, object, None))
    }

    /// Replaces a key. With `expected` set, the write succeeds only if the stored revision matches.
    /// A put without a lease: the key leaves the lease it had, if any.
    pub fn update(&mut self, object: Object, expected: Option<u64>) -> Result<Change, StoreError> {
        self.update_leased(object, expected, None)
    }

    /// `update`, the key put with `lease` when one is given (its expiry starts again).
    pub fn update_leased(&mut self, mut object: Object, expected: Option<u64>, lease: Option<LeaseId>) -> Result<Change, StoreError> {
        self.check_lease(lease)?;
        let key = object.key();
        // One hash lookup, and the ordered tree untouched: an update replaces the value in place.
        let slot = self.objects.get_mut(&key).ok_or(StoreError::NotFound)?;
        if expected.is_some_and(|rv| rv != slot.meta().resource_version) {
            return Err(StoreError::Conflict);
        }
        self.revision += 1;
        object.meta_mut().resource_version = self.revision;
        share_unchanged_parts(&mut object, slot);
        let object = Rc::new(object);
        let prev = std::mem::replace(slot, object.clone());
        self.attach(lease, &key);
        Ok(self.record(ChangeType::Modified, object, Some(prev)))
    }

    /// `etcdctl lease grant`: a lease that expires `ttl` after `now`.
    pub fn grant_lease(&mut self, now: Time, ttl: Duration) -> LeaseId {
        self.leases.grant(now, ttl)
    }

    /// The leases etcd holds.
    pub fn leases(&self) -> &Lessor {
        &self.leases
    }

    fn check_lease(&self, lease: Option<LeaseId>) -> Result<(), StoreError> {
        match lease {
            Some(id) if !self.leases.is_live(id) => Err(StoreError::LeaseNotFound),
            _ => Ok(()),
        }
    }

    /// Attaches the key just written at the current revision to `lease`.
    fn attach(&mut self, lease: Option<LeaseId>, key: &ObjectKey) {
        if let Some(id) = lease {
            self.leases.attach(id, key.clone(), self.revision);
        }
    }

    /// Revokes every lease expired at `now` and deletes the keys still attached to each (those
    /// whose last put was made with it), one deletion per key, oldest lease first. Returns the
    /// deletions, for the watchers.
    pub fn expire_leases(&mut self, now: Time) -> Vec<Change> {
        let mut deleted = Vec::new();
        while let Some(puts) = self.leases.take_expired(now) {
            for (key, revision) in puts {
                if self.objects.get(&key).is_some_and(|o| o.meta().resource_version == revision) {
                    deleted.extend(self.delete(&key, None).ok());
                }
            }
        }
        deleted
    }

    /// Removes a key, optionally only if its revision matches.
    pub fn delete(&mut self, key: &ObjectKey, expected: Option<u64>) -> Result<Change, StoreError> {
        let current = self.objects.get(key).ok_or(StoreError::NotFound)?;
        if expected.is_some_and(|rv| rv != current.meta().resource_version) {
            return Err(StoreError::Conflict);
        }
        let prev = self.objects.remove(key).ok_or(StoreError::NotFound)?;
        self.revision += 1;
        let mut last = (*prev).clone();
        last.meta_mut().resource_version = self.revision;
        Ok(self.record(ChangeType::Deleted, Rc::new(last), Some(prev)))
    }

    fn record(&mut self, type_: ChangeType, object: Rc<Object>, prev: Option<Rc<Object>>) -> Change {
        let change = Change { revision: self.revision, type_, object, prev };
        self.log.push_back(change.clone());
        change
    }

    /// The changes after `revision`, for a watch starting there. Fails with `Compacted` when
    /// changes it would need were compacted away (the API server's 410 Gone).
    pub fn changes_since(&self, revision: u64) -> Result<impl Iterator<Item = &Change>, StoreError> {
        if revision < self.compacted {
            return Err(StoreError::Compacted { oldest: self.compacted });
        }
        let skip = self.log.partition_point(|c| c.revision <= revision);
        Ok(self.log.range(skip..))
    }

    /// Forgets the history up to and including `revision` (etcd compaction).
    pub fn compact(&mut self, revision: u64) {
        let revision = revision.min(self.revision);
        while self.log.front().is_some_and(|c| c.revision <= revision) {
            self.log.pop_front();
        }
        self.compacted = self.compacted.max(revision);
    }

    pub fn snapshot(&self) -> Snapshot {
        Snapshot { revision: self.revision, objects: self.objects.clone(), leases: self.leases.clone() }
    }

    /// Restores a snapshot. Like `etcdutl snapshot restore`, the revision never goes backwards:
    /// it continues from the higher of the two, and history before the restore is compacted,
    /// so every watcher must re-list. The leases come back with the expiry times they had.
    pub fn restore(&mut self, snapshot: &Snapshot) {
        self.objects = snapshot.objects.clone();
        self.leases.restore(&snapshot.leases);
        self.revision = self.revision.max(snapshot.revision) + 1;
        self.log.clear();
        self.compacted = self.revision;
    }

    /// Loses everything: the data directory is gone. Revisions still only increase, so watchers
    /// that reconnect are forced to re-list rather than trusting a revision that was reused.
    pub fn wipe(&mut self) {
        self.objects.clear();
        self.leases.clear();
        self.log.clear();
        self.revision += 1;
        self.compacted = self.revision;
    }
}

/// Makes a new version share the parts it has in common with the version it replaces (labels,
/// owner references, a pod's spec, a template), so the history, which keeps every version until
/// compaction, holds one copy of them however many status writes it saw — whichever way the
/// writer built the object.
fn share_unchanged_parts(next: &mut Object, prev: &Object) {
    let (meta, prev_meta) = (next.meta_mut(), prev.meta());
    share(&mut meta.labels, &prev_meta.labels);
    share(&mut meta.owner_references, &prev_meta.owner_references);
    match (next, prev) {
        (Object::Pod(n), Object::Pod(p)) => share(&mut n.spec, &p.spec),
        (Object::ReplicaSet(n), Object::ReplicaSet(p)) => share(&mut n.spec.template, &p.spec.template),
        (Object::Deployment(n), Object::Deployment(p)) => share(&mut n.spec.template, &p.spec.template),
        _ => {}
    }
}

fn share<T: PartialEq>(next: &mut Shared<T>, prev: &Shared<T>) {
    if next == prev {
        *next = prev.clone();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{ObjectMeta, Pod};

    fn pod(name: &str) -> Object {
        let labels: crate::model::StringMap = [("app".to_string(), "web".to_string())].into();
        Object::Pod(Pod {
            metadata: ObjectMeta { name: name.into(), namespace: "default".into(), labels: labels.into(), ..Default::default() },
            ..Default::default()
        })
    }

    #[test]
    fn every_write_bumps_one_global_revision() {
        let mut etcd = Etcd::new();
        let a = etcd.create(pod("a")).unwrap();
        let b = etcd.create(pod("b")).unwrap();
        assert_eq!((a.revision, b.revision), (1, 2));
        assert_eq!(b.object.meta().resource_version, 2);
        assert_eq!(etcd.create(pod("a")).unwrap_err(), StoreError::Exists);
        let del = etcd.delete(&pod("a").key(), None).unwrap();
        assert_eq!(del.revision, 3);
        assert_eq!(del.object.meta().resource_version, 3);
    }

    #[test]
    fn compare_and_swap_rejects_a_stale_resource_version() {
        let mut etcd = Etcd::new();
        etcd.create(pod("a")).unwrap();
        etcd.update(pod("a"), Some(1)).unwrap();
        assert_eq!(etcd.update(pod("a"), Some(1)).unwrap_err(), StoreError::Conflict);
        assert_eq!(etcd.update(pod("zz"), None).unwrap_err(), StoreError::NotFound);
    }

    #[test]
    fn a_watch_from_a_compacted_revision_is_gone() {
        let mut etcd = Etcd::new();
        for n in ["a", "b", "c"] {
            etcd.create(pod(n)).unwrap();
        }
        assert_eq!(etcd.changes_since(1).unwrap().count(), 2);
        etcd.compact(2);
        assert!(matches!(etcd.changes_since(1), Err(StoreError::Compacted { oldest: 2 })));
        assert_eq!(etcd.changes_since(2).unwrap().map(|c| c.revision).collect::<Vec<_>>(), vec![3]);
    }

    #[test]
    fn restore_brings_back_the_claims_with_a_higher_revision() {
        let mut etcd = Etcd::new();
        etcd.create(pod("a")).unwrap();
        let snap = etcd.snapshot();
        etcd.create(pod("b")).unwrap();
        etcd.wipe();
        assert!(etcd.is_empty());
        let before = etcd.revision();
        etcd.restore(&snap);
        assert_eq!(etcd.len(), 1);
        assert!(etcd.revision() > before);
        assert!(etcd.changes_since(0).is_err());
    }

    #[test]
    fn a_place_freed_by_a_delete_is_reused_without_disturbing_key_order() {
        let mut etcd = Etcd::new();
        for n in ["a", "b", "c"] {
            etcd.create(pod(n)).unwrap();
        }
        etcd.delete(&pod("b").key(), None).unwrap();
        etcd.create(pod("0")).unwrap();
        etcd.update(pod("c"), Some(3)).unwrap();
        let names: Vec<_> = etcd.list(Kind::Pod, None).map(|o| o.meta().name.clone()).collect();
        assert_eq!(names, ["0", "a", "c"]);
        assert_eq!(etcd.get(&pod("c").key()).map(|o| o.meta().resource_version), Some(6));
        assert!(etcd.get(&pod("b").key()).is_none());
        let snap = etcd.snapshot();
        etcd.wipe();
        etcd.restore(&snap);
        let names: Vec<_> = etcd.list(Kind::Pod, None).map(|o| o.meta().name.to_string()).collect();
        assert_eq!((names, etcd.len()), (vec!["0".to_string(), "a".into(), "c".into()], 3));
    }

    #[test]
    fn a_key_belongs_to_the_lease_of_its_last_put_and_a_snapshot_keeps_the_leases() {
        let mut etcd = Etcd::new();
        let lease = etcd.grant_lease(Time(0), Duration::secs(10));
        etcd.create_leased(pod("a"), Some(lease)).unwrap();
        etcd.create_leased(pod("b"), Some(lease)).unwrap();
        // A put without a lease takes b off it.
        etcd.update(pod("b"), None).unwrap();
        let snap = etcd.snapshot();
        let names = |changes: Vec<Change>| changes.iter().map(|c| c.object.meta().name.to_string()).collect::<Vec<_>>();
        assert_eq!(names(etcd.expire_leases(Time(10_000))), ["a"]);
        assert_eq!(etcd.len(), 1);
        assert_eq!(etcd.update_leased(pod("b"), None, Some(lease)).unwrap_err(), StoreError::LeaseNotFound);
        etcd.restore(&snap);
        assert_eq!(etcd.len(), 2);
        let next = etcd.grant_lease(Time(0), Duration::secs(10));
        assert!(next > lease, "a restore never hands out an id again");
        assert_eq!(names(etcd.expire_leases(Time(10_000))), ["a"]);
    }

    #[test]
    fn list_is_in_key_order_and_scoped_to_a_kind() {
        let mut etcd = Etcd::new();
        for n in ["c", "a", "b"] {
            etcd.create(pod(n)).unwrap();
        }
        let names: Vec<_> = etcd.list(Kind::Pod, Some("default")).map(|o| o.meta().name.clone()).collect();
        assert_eq!(names, ["a", "b", "c"]);
        assert_eq!(etcd.list(Kind::Node, None).count(), 0);
    }

    #[test]
    fn a_new_version_shares_an_unchanged_spec_with_the_one_it_replaces() {
        let mut etcd = Etcd::new();
        let first = etcd.create(pod("a")).unwrap().object;
        // A writer that built its own copy of the same spec.
        let Object::Pod(mut next) = pod("a") else { unreachable!() };
        next.status.phase = Some(crate::model::PodPhase::Running);
        let second = etcd.update(Object::Pod(next), Some(1)).unwrap().object;
        let spec = |o: &Object| o.as_pod().map(|p| p.spec.clone()).unwrap();
        assert!(Shared::ptr_eq(&spec(&first), &spec(&second)));
        assert!(Shared::ptr_eq(&first.meta().labels, &second.meta().labels));
        let Object::Pod(mut bound) = (*second).clone() else { unreachable!() };
        bound.spec.node_name = Some("node-1".into());
        let third = etcd.update(Object::Pod(bound), Some(2)).unwrap().object;
        assert!(!Shared::ptr_eq(&spec(&second), &spec(&third)));
        assert_eq!((spec(&first).node_name.clone(), spec(&third).node_name.clone()), (None, Some("node-1".to_string())));
    }
}
