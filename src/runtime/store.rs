//! An informer's cache, split the way kube-rs splits its reflector: a `Writer` that applies
//! what the watch delivers, and a read-only `Store` that controllers look things up in.
//!
//! One store holds one kind. The reflector (`informer.rs`) owns the `Writer`; everything else
//! only ever gets `&Store`, so a reconcile cannot change the cache it reads — the controller
//! contract (`controllers/mod.rs`) is then kept by the borrow checker, not by convention. The
//! kube-controller-manager keeps one store per kind its controllers watch and hands each
//! controller the stores of the kinds it declared (`Controller::watches`).
//!
//! Besides the key (hashed) and namespace (key order) a store keeps indexes, as client-go's
//! `Indexers` do: each maps an index value (an owner UID, a node name) to the objects that
//! have it, in key order. An index holds the table's places, not keys, so a status write — which
//! replaces the object at its place and changes no index value — leaves every index alone.

use super::fasthash::FastMap;
use super::informer::Delta;
use super::table::ObjectTable;
use crate::model::{Kind, Object, ObjectKey};
use crate::store::ChangeType;
use std::collections::BTreeSet;
use std::rc::Rc;

/// An index function: the one value an object is indexed under, if any (client-go's
/// `IndexFunc`, single-valued here because every index kubeloop needs is).
#[derive(Clone, Copy)]
pub struct Indexer {
    pub name: &'static str,
    pub value_of: fn(&Object) -> Option<&str>,
}

impl std::fmt::Debug for Indexer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name)
    }
}

/// Objects by their controller owner's UID (`""` for none): a ReplicaSet's pods, a
/// Deployment's ReplicaSets, a deleted owner's dependents.
pub const BY_OWNER: Indexer = Indexer { name: "owner", value_of: owner_of };
/// Pods by the node they are bound to (unbound pods are not indexed).
pub const BY_NODE: Indexer = Indexer { name: "node", value_of: node_of };
/// The indexes every informer keeps.
pub const STANDARD_INDEXERS: &[Indexer] = &[BY_OWNER, BY_NODE];

fn owner_of(object: &Object) -> Option<&str> {
    Some(object.meta().controller_ref().map(|r| r.uid.as_str()).unwrap_or_default())
}

fn node_of(object: &Object) -> Option<&str> {
    object.as_pod().and_then(|p| p.node_name())
}

/// One index: its function and, per value, the places of the objects that have it, in key order.
#[derive(Debug)]
struct Index {
    indexer: Indexer,
    places: FastMap<String, Vec<usize>>,
}

/// The read side: what controllers, the scheduler and the kubelet look objects up in.
#[derive(Debug)]
pub struct Store {
    kind: Kind,
    /// Ordered for lists, hashed for the lookup every watch notification makes.
    cache: ObjectTable,
    indexes: Vec<Index>,
}

impl Store {
    pub fn kind(&self) -> Kind {
        self.kind
    }
    pub fn get(&self, key: &ObjectKey) -> Option<&Rc<Object>> {
        self.cache.get(key)
    }
    pub fn len(&self) -> usize {
        self.cache.len()
    }
    pub fn is_empty(&self) -> bool {
        self.cache.is_empty()
    }
    /// Every cached object, in key order.
    pub fn iter(&self) -> impl Iterator<Item = &Rc<Object>> {
        self.cache.values()
    }
    /// Cached objects in one namespace, in key order (the namespace index is the key order).
    pub fn in_namespace<'a>(&'a self, namespace: &'a str) -> impl Iterator<Item = &'a Rc<Object>> + 'a {
        let start = ObjectKey { kind: self.kind, namespace: namespace.into(), name: Default::default() };
        self.cache.range_from(&start).take_while(move |(k, _)| k.namespace == namespace).map(|(_, v)| v)
    }
    /// Objects whose index `name` has `value`, in key order (client-go's `ByIndex`); nothing if
    /// the store keeps no such index.
    pub fn by_index<'a>(&'a self, name: &str, value: &str) -> impl Iterator<Item = &'a Rc<Object>> + 'a {
        let places = self.indexes.iter().find(|i| i.indexer.name == name).and_then(|i| i.places.get(value));
        places.into_iter().flatten().filter_map(|&p| self.cache.at(p)).map(|(_, o)| o)
    }
    /// Objects whose controller owner has this UID, in key order; `""` gives the orphans.
    pub fn owned_by<'a>(&'a self, owner_uid: &str) -> impl Iterator<Item = &'a Rc<Object>> + 'a {
        self.by_index(BY_OWNER.name, owner_uid)
    }
    /// Pods bound to this node, in key order.
    pub fn on_node<'a>(&'a self, node: &str) -> impl Iterator<Item = &'a Rc<Object>> + 'a {
        self.by_index(BY_NODE.name, node)
    }
}

/// The write side, owned by the reflector: applies list results and watch events.
#[derive(Debug)]
pub struct Writer {
    store: Store,
}

impl std::ops::Deref for Writer {
    type Target = Store;
    fn deref(&self) -> &Store {
        &self.store
    }
}

impl Writer {
    pub fn new(kind: Kind, indexers: &[Indexer]) -> Self {
        let indexes = indexers.iter().map(|&indexer| Index { indexer, places: FastMap::default() }).collect();
        Writer { store: Store { kind, cache: ObjectTable::default(), indexes } }
    }

    /// The read view (kube-rs' `Writer::as_reader`).
    pub fn as_reader(&self) -> &Store {
        &self.store
    }

    /// Empties the store and its indexes (a restart).
    pub fn clear(&mut self) {
        self.store.cache.clear();
        for index in &mut self.store.indexes {
            index.places.clear();
        }
    }

    /// Applies one watch event: the delta a handler hears.
    pub fn apply(&mut self, type_: ChangeType, object: Rc<Object>) -> Delta {
        let key = object.key();
        match type_ {
            ChangeType::Deleted => {
                self.remove(&key);
                Delta::Deleted(object)
            }
            _ => match self.insert(key, object.clone()) {
                Some(old) => Delta::Updated { old, new: object },
                None => Delta::Added(object),
            },
        }
    }

    /// Applies a LIST: what is new is Added, what changed Updated, what vanished Deleted.
    pub fn replace(&mut self, items: Vec<Rc<Object>>) -> Vec<Delta> {
        let mut deltas = Vec::new();
        let mut fresh: BTreeSet<ObjectKey> = BTreeSet::new();
        for item in items {
            let key = item.key();
            fresh.insert(key.clone());
            match self.insert(key, item.clone()) {
                Some(old) if old.meta().resource_version == item.meta().resource_version => {}
                Some(old) => deltas.push(Delta::Updated { old, new: item }),
                None => deltas.push(Delta::Added(item)),
            }
        }
        let gone: Vec<ObjectKey> = self.store.cache.keys().filter(|k| !fresh.contains(*k)).cloned().collect();
        for key in gone {
            if let Some(old) = self.remove(&key) {
                deltas.push(Delta::Deleted(old));
            }
        }
        deltas
    }

    /// Puts `object` at `key`; returns what it replaced.
    pub fn insert(&mut self, key: ObjectKey, object: Rc<Object>) -> Option<Rc<Object>> {
        let Store { cache, indexes, .. } = &mut self.store;
        let (place, old) = cache.upsert_at(&key, object.clone());
        for index in indexes.iter_mut() {
            let value = (index.indexer.value_of)(&object);
            if let Some(old) = &old {
                // Most updates (status writes) keep every index value: the index holds the
                // place, which now holds the new object, so it needs no change at all.
                let old_value = (index.indexer.value_of)(old);
                if old_value == value {
                    continue;
                }
                if let Some(places) = old_value.and_then(|v| index.places.get_mut(v)) {
                    remove_place(cache, places, place, &key);
                }
            }
            if let Some(value) = value {
                match index.places.get_mut(value) {
                    Some(places) => add_place(cache, places, place, &key),
                    None => add_place(cache, index.places.entry(value.to_string()).or_default(), place, &key),
                }
            }
        }
        old
    }

    /// Takes `key` out of the store and its indexes; returns what was there.
    pub fn remove(&mut self, key: &ObjectKey) -> Option<Rc<Object>> {
        let Store { cache, indexes, .. } = &mut self.store;
        let place = cache.place(key)?;
        let old = cache.get(key)?.clone();
        for index in indexes.iter_mut() {
            if let Some(places) = (index.indexer.value_of)(&old).and_then(|v| index.places.get_mut(v)) {
                remove_place(cache, places, place, key);
            }
        }
        cache.remove(key)
    }
}

/// Where `key` is or belongs in an index's places, which are kept in key order.
fn position(cache: &ObjectTable, places: &[usize], key: &ObjectKey) -> Result<usize, usize> {
    places.binary_search_by(|&p| cache.at(p).map_or(std::cmp::Ordering::Less, |(k, _)| k.cmp(key)))
}

fn add_place(cache: &ObjectTable, places: &mut Vec<usize>, place: usize, key: &ObjectKey) {
    if let Err(at) = position(cache, places, key) {
        places.insert(at, place);
    }
}

fn remove_place(cache: &ObjectTable, places: &mut Vec<usize>, place: usize, key: &ObjectKey) {
    if let Ok(at) = position(cache, places, key) {
        if places[at] == place {
            places.remove(at);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{OwnerReference, Pod};

    fn pod(name: &str, owner: &str, node: Option<&str>) -> Rc<Object> {
        let mut p = Pod::default();
        p.metadata.name = name.into();
        p.metadata.namespace = "default".into();
        p.metadata.uid = format!("uid-{name}").into();
        if !owner.is_empty() {
            let reference = OwnerReference {
                api_version: "apps/v1".into(),
                kind: "ReplicaSet".into(),
                name: owner.into(),
                uid: owner.into(),
                controller: Some(true),
                block_owner_deletion: Some(true),
            };
            p.metadata.owner_references = vec![reference].into();
        }
        p.spec.node_name = node.map(str::to_string);
        Rc::new(Object::Pod(p))
    }

    fn names<'a>(objects: impl Iterator<Item = &'a Rc<Object>>) -> Vec<String> {
        objects.map(|o| o.meta().name.to_string()).collect()
    }

    #[test]
    fn indexes_follow_changes_of_owner_and_node_and_keep_key_order() {
        let mut w = Writer::new(Kind::Pod, STANDARD_INDEXERS);
        w.apply(ChangeType::Added, pod("b", "rs-1", None));
        w.apply(ChangeType::Added, pod("a", "rs-1", Some("node-1")));
        w.apply(ChangeType::Added, pod("c", "", Some("node-1")));
        assert_eq!(names(w.owned_by("rs-1")), ["a", "b"]);
        assert_eq!(names(w.owned_by("")), ["c"]);
        assert_eq!(names(w.on_node("node-1")), ["a", "c"]);
        // Bound, then orphaned: both indexes move; the namespace view is the key order.
        w.apply(ChangeType::Modified, pod("b", "", Some("node-2")));
        assert_eq!(names(w.owned_by("rs-1")), ["a"]);
        assert_eq!(names(w.owned_by("")), ["b", "c"]);
        assert_eq!(names(w.on_node("node-2")), ["b"]);
        assert_eq!(names(w.in_namespace("default")), ["a", "b", "c"]);
        w.apply(ChangeType::Deleted, pod("a", "rs-1", Some("node-1")));
        assert_eq!(names(w.on_node("node-1")), ["c"]);
        assert_eq!(names(w.owned_by("rs-1")), Vec::<String>::new());
        assert_eq!(names(w.as_reader().by_index("no-such-index", "x")), Vec::<String>::new());
    }

    #[test]
    fn a_list_is_diffed_against_the_store() {
        let mut w = Writer::new(Kind::Pod, STANDARD_INDEXERS);
        w.apply(ChangeType::Added, pod("a", "", None));
        w.apply(ChangeType::Added, pod("b", "", None));
        let deltas = w.replace(vec![pod("b", "", None), pod("c", "", None)]);
        let seen: Vec<String> = deltas
            .iter()
            .map(|d| match d {
                Delta::Added(o) => format!("+{}", o.meta().name),
                Delta::Updated { new, .. } => format!("~{}", new.meta().name),
                Delta::Deleted(o) => format!("-{}", o.meta().name),
            })
            .collect();
        assert_eq!(seen, ["+c", "-a"], "b is unchanged (same resourceVersion)");
        assert_eq!(names(w.iter()), ["b", "c"]);
    }
}
