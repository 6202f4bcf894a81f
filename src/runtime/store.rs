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

/// An index function (client-go's `IndexFunc`): the values an object is indexed under.
#[derive(Clone, Copy)]
pub struct Indexer {
    pub name: &'static str,
    pub values: IndexValues,
}

/// Most indexes give one value (an owner, a node) borrowed from the object; a label index gives
/// one per label, built as text.
#[derive(Clone, Copy)]
pub enum IndexValues {
    One(fn(&Object) -> Option<&str>),
    /// `values` pushes every value of the object; `same` says cheaply whether two versions of an
    /// object have the same values (a status write keeps its labels), so most updates skip the
    /// index without building any text.
    Many {
        values: fn(&Object, &mut Vec<String>),
        same: fn(&Object, &Object) -> bool,
    },
}

impl std::fmt::Debug for Indexer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name)
    }
}

/// Objects by their controller owner's UID (`""` for none): a ReplicaSet's pods, a
/// Deployment's ReplicaSets, a deleted owner's dependents.
pub const BY_OWNER: Indexer = Indexer { name: "owner", values: IndexValues::One(owner_of) };
/// Objects by the UID of each of their owners, controller or not: what the garbage collector
/// looks up when an owner goes (`BY_OWNER` has only the controller).
pub const BY_ANY_OWNER: Indexer = Indexer { name: "any-owner", values: IndexValues::Many { values: owners_of, same: same_owners } };
/// Pods by the node they are bound to (unbound pods are not indexed).
pub const BY_NODE: Indexer = Indexer { name: "node", values: IndexValues::One(node_of) };
/// Pods by each of their labels, as [`label_value`] writes a pair: where a Service's selector
/// finds its pods without reading every pod of the namespace.
pub const BY_POD_LABEL: Indexer = Indexer { name: "pod-label", values: IndexValues::Many { values: pod_labels, same: same_labels } };
/// Services by each pair of their selector: the Services that may select a pod are those
/// indexed under one of its labels.
pub const BY_SELECTOR: Indexer = Indexer { name: "selector", values: IndexValues::Many { values: service_selector, same: same_selector } };
/// EndpointSlices by the Service they are for (`NAMESPACE/NAME` from the
/// `kubernetes.io/service-name` label).
pub const BY_SERVICE_NAME: Indexer =
    Indexer { name: "service-name", values: IndexValues::Many { values: slice_service, same: same_labels } };
/// The indexes every informer keeps. Each gives nothing for the kinds it is not about, so a
/// store of another kind pays only the call.
pub const STANDARD_INDEXERS: &[Indexer] = &[BY_OWNER, BY_ANY_OWNER, BY_NODE, BY_POD_LABEL, BY_SELECTOR, BY_SERVICE_NAME];

/// The index value of label `key=value` in `namespace`: `NAMESPACE KEY=VALUE` (a namespace
/// holds no space and a label key no `=`, so no two pairs write the same text).
pub fn label_value(namespace: &str, key: &str, value: &str) -> String {
    let mut out = String::with_capacity(namespace.len() + key.len() + value.len() + 2);
    out.push_str(namespace);
    out.push(' ');
    out.push_str(key);
    out.push('=');
    out.push_str(value);
    out
}

fn pod_labels(object: &Object, out: &mut Vec<String>) {
    if let Object::Pod(p) = object {
        out.extend(p.metadata.labels.iter().map(|(k, v)| label_value(&p.metadata.namespace, k, v)));
    }
}

fn same_labels(a: &Object, b: &Object) -> bool {
    a.meta().labels == b.meta().labels
}

fn service_selector(object: &Object, out: &mut Vec<String>) {
    if let Object::Service(s) = object {
        out.extend(s.spec.selector.iter().map(|(k, v)| label_value(&s.metadata.namespace, k, v)));
    }
}

fn same_selector(a: &Object, b: &Object) -> bool {
    match (a, b) {
        (Object::Service(a), Object::Service(b)) => a.spec.selector == b.spec.selector,
        _ => true,
    }
}

/// The `NAMESPACE/NAME` of the Service an EndpointSlice is labelled for.
pub fn service_name_value(namespace: &str, name: &str) -> String {
    format!("{namespace}/{name}")
}

fn slice_service(object: &Object, out: &mut Vec<String>) {
    if let Object::EndpointSlice(s) = object {
        if let Some(name) = s.metadata.labels.get(crate::model::LABEL_SERVICE_NAME) {
            out.push(service_name_value(&s.metadata.namespace, name));
        }
    }
}

fn owner_of(object: &Object) -> Option<&str> {
    Some(object.meta().controller_ref().map(|r| r.uid.as_str()).unwrap_or_default())
}

fn owners_of(object: &Object, out: &mut Vec<String>) {
    out.extend(object.meta().owner_references.iter().map(|r| r.uid.to_string()));
}

fn same_owners(a: &Object, b: &Object) -> bool {
    a.meta().owner_references == b.meta().owner_references
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

impl Index {
    fn add(&mut self, cache: &ObjectTable, value: &str, place: usize, key: &ObjectKey) {
        match self.places.get_mut(value) {
            Some(places) => add_place(cache, places, place, key),
            None => add_place(cache, self.places.entry(value.to_string()).or_default(), place, key),
        }
    }

    /// Takes the place out of `value`'s list, and the list out of the map once empty (label
    /// values come and go with pod-template hashes; their lists must not pile up).
    fn remove(&mut self, cache: &ObjectTable, value: &str, place: usize, key: &ObjectKey) {
        if let Some(places) = self.places.get_mut(value) {
            remove_place(cache, places, place, key);
            if places.is_empty() {
                self.places.remove(value);
            }
        }
    }
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
        // Custom objects of several resources share one kind, so their namespaces interleave:
        // those are filtered rather than taken as one range.
        let custom = self.kind == Kind::CustomObject;
        let start = ObjectKey {
            kind: self.kind,
            resource: Default::default(),
            namespace: if custom { Default::default() } else { namespace.into() },
            name: Default::default(),
        };
        self.cache
            .range_from(&start)
            .take_while(move |(k, _)| custom || k.namespace == namespace)
            .filter(move |(k, _)| k.namespace == namespace)
            .map(|(_, v)| v)
    }
    /// Objects whose index `name` has `value`, in key order (client-go's `ByIndex`); nothing if
    /// the store keeps no such index.
    pub fn by_index<'a>(&'a self, name: &str, value: &str) -> impl Iterator<Item = &'a Rc<Object>> + 'a {
        let places = self.indexes.iter().find(|i| i.indexer.name == name).and_then(|i| i.places.get(value));
        places.into_iter().flatten().filter_map(|&p| self.cache.at(p)).map(|(_, o)| o)
    }
    /// How many objects index `name` holds under `value`.
    pub fn count_in_index(&self, name: &str, value: &str) -> usize {
        self.indexes.iter().find(|i| i.indexer.name == name).and_then(|i| i.places.get(value)).map_or(0, Vec::len)
    }
    /// Objects whose controller owner has this UID, in key order; `""` gives the orphans.
    pub fn owned_by<'a>(&'a self, owner_uid: &str) -> impl Iterator<Item = &'a Rc<Object>> + 'a {
        self.by_index(BY_OWNER.name, owner_uid)
    }
    /// The objects naming this owner among their owners, controller or not, in key order.
    pub fn dependents_of<'a>(&'a self, owner_uid: &str) -> impl Iterator<Item = &'a Rc<Object>> + 'a {
        self.by_index(BY_ANY_OWNER.name, owner_uid)
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
            match index.indexer.values {
                IndexValues::One(value_of) => {
                    let value = value_of(&object);
                    if let Some(old) = &old {
                        // Most updates (status writes) keep every index value: the index holds
                        // the place, which now holds the new object, so it needs no change at all.
                        let old_value = value_of(old);
                        if old_value == value {
                            continue;
                        }
                        if let Some(old_value) = old_value {
                            index.remove(cache, old_value, place, &key);
                        }
                    }
                    if let Some(value) = value {
                        index.add(cache, value, place, &key);
                    }
                }
                IndexValues::Many { values, same } => {
                    if old.as_ref().is_some_and(|old| same(old, &object)) {
                        continue;
                    }
                    let mut buffer = Vec::new();
                    if let Some(old) = &old {
                        values(old, &mut buffer);
                        for value in &buffer {
                            index.remove(cache, value, place, &key);
                        }
                        buffer.clear();
                    }
                    values(&object, &mut buffer);
                    for value in &buffer {
                        index.add(cache, value, place, &key);
                    }
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
        let mut buffer = Vec::new();
        for index in indexes.iter_mut() {
            match index.indexer.values {
                IndexValues::One(value_of) => {
                    if let Some(value) = value_of(&old) {
                        index.remove(cache, value, place, key);
                    }
                }
                IndexValues::Many { values, .. } => {
                    buffer.clear();
                    values(&old, &mut buffer);
                    for value in &buffer {
                        index.remove(cache, value, place, key);
                    }
                }
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

    fn labelled(name: &str, labels: &[(&str, &str)]) -> Rc<Object> {
        let mut p = Pod::default();
        p.metadata.name = name.into();
        p.metadata.namespace = "default".into();
        p.metadata.labels = labels.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect::<crate::model::StringMap>().into();
        Rc::new(Object::Pod(p))
    }

    #[test]
    fn the_label_index_holds_a_pod_under_each_label_and_follows_relabelling() {
        let mut w = Writer::new(Kind::Pod, STANDARD_INDEXERS);
        let app = label_value("default", "app", "web");
        let tier = label_value("default", "tier", "front");
        w.apply(ChangeType::Added, labelled("b", &[("app", "web")]));
        w.apply(ChangeType::Added, labelled("a", &[("app", "web"), ("tier", "front")]));
        assert_eq!(names(w.by_index(BY_POD_LABEL.name, &app)), ["a", "b"]);
        assert_eq!(names(w.by_index(BY_POD_LABEL.name, &tier)), ["a"]);
        assert_eq!(w.count_in_index(BY_POD_LABEL.name, &app), 2);
        // Relabelled: it leaves the old pair's list, and an emptied list leaves the index.
        w.apply(ChangeType::Modified, labelled("a", &[("app", "api")]));
        assert_eq!(names(w.by_index(BY_POD_LABEL.name, &app)), ["b"]);
        assert_eq!(w.count_in_index(BY_POD_LABEL.name, &tier), 0);
        assert_eq!(names(w.by_index(BY_POD_LABEL.name, &label_value("default", "app", "api"))), ["a"]);
        w.apply(ChangeType::Deleted, labelled("b", &[("app", "web")]));
        assert_eq!(w.count_in_index(BY_POD_LABEL.name, &app), 0);
        let label_index = w.store.indexes.iter().find(|i| i.indexer.name == BY_POD_LABEL.name).unwrap();
        assert_eq!(label_index.places.len(), 1, "only app=api is left: {:?}", label_index.places.keys().collect::<Vec<_>>());
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
