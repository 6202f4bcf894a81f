//! An object table that is both ordered and hashed: etcd's keyspace and every informer's cache.
//!
//! Lists must come out in key order, but most accesses are point lookups of an existing key (a
//! status write, a watch notification of an update) and inserts of new keys (a pod, an Event),
//! while lists are rare at scale. A tree kept in key order made every new key pay a dozen key
//! comparisons (long names with common prefixes, each behind two pointers); here the values sit
//! in a slab found through a hash index, and the key order is built only when someone walks it:
//! per kind, places already sorted plus places added since, which a walk sorts and merges in.
//! A removal only counts its place as stale; walks and occasional sweeps drop stale places.

use super::fasthash::FastMap;
use super::slab::Slab;
use crate::model::{Kind, Object, ObjectKey};
use std::cell::{Ref, RefCell};
use std::cmp::Ordering;
use std::rc::Rc;

/// One stored object, with its key (for ordered walks) and the stamp of its insertion, which
/// tells a live place from a stale one whose slab place was freed and reused.
#[derive(Debug)]
struct Entry {
    key: ObjectKey,
    object: Rc<Object>,
    stamp: u64,
}

/// A place in the slab and the stamp its entry had when it was put in the order.
type Placed = (usize, u64);

/// The key order of one kind's entries: `sorted` is in key order; `pending` holds places added
/// since the last walk, in no order; either may hold stale places (`stale` counts removals).
#[derive(Clone, Debug, Default)]
struct Order {
    sorted: Vec<Placed>,
    pending: Vec<Placed>,
    stale: usize,
}

impl Order {
    fn is_clean(&self) -> bool {
        self.pending.is_empty() && self.stale == 0
    }
}

#[derive(Debug, Default)]
pub struct ObjectTable {
    index: FastMap<ObjectKey, usize>,
    slab: Slab<Entry>,
    /// Per kind, in `Kind`'s order (which is the key order of kinds). Behind a `RefCell` so a
    /// walk through `&self` can bring it up to date; only a walk borrows it, and a walk can
    /// only be dirty after a write, which takes `&mut self` — so no borrow is ever outstanding
    /// when one is brought up to date.
    orders: [RefCell<Order>; Kind::COUNT],
    next_stamp: u64,
}

fn kind_index(kind: Kind) -> usize {
    kind as usize
}

impl ObjectTable {
    pub fn len(&self) -> usize {
        self.index.len()
    }
    pub fn is_empty(&self) -> bool {
        self.index.is_empty()
    }
    pub fn get(&self, key: &ObjectKey) -> Option<&Rc<Object>> {
        self.index.get(key).and_then(|&i| self.slab.get(i)).map(|e| &e.object)
    }
    pub fn get_mut(&mut self, key: &ObjectKey) -> Option<&mut Rc<Object>> {
        let &i = self.index.get(key)?;
        self.slab.get_mut(i).map(|e| &mut e.object)
    }
    pub fn contains_key(&self, key: &ObjectKey) -> bool {
        self.index.contains_key(key)
    }
    /// The place `key` is stored at; it stays the key's until the key is removed.
    pub fn place(&self, key: &ObjectKey) -> Option<usize> {
        self.index.get(key).copied()
    }
    /// The entry at a place.
    pub fn at(&self, place: usize) -> Option<(&ObjectKey, &Rc<Object>)> {
        self.slab.get(place).map(|e| (&e.key, &e.object))
    }

    /// Stores `object` under `key`; returns what was there.
    pub fn insert(&mut self, key: ObjectKey, object: Rc<Object>) -> Option<Rc<Object>> {
        if let Some(slot) = self.get_mut(&key) {
            return Some(std::mem::replace(slot, object));
        }
        self.insert_new(key, object);
        None
    }

    /// Stores `object` under `key`, copying the key only when it is new (an update — most writes
    /// an informer sees — replaces the value under the stored key); returns what was there.
    pub fn upsert(&mut self, key: &ObjectKey, object: Rc<Object>) -> Option<Rc<Object>> {
        self.upsert_at(key, object).1
    }

    /// `upsert`, also saying at which place the key is stored.
    pub fn upsert_at(&mut self, key: &ObjectKey, object: Rc<Object>) -> (usize, Option<Rc<Object>>) {
        if let Some(&i) = self.index.get(key) {
            if let Some(entry) = self.slab.get_mut(i) {
                return (i, Some(std::mem::replace(&mut entry.object, object)));
            }
        }
        (self.insert_new(key.clone(), object), None)
    }

    fn insert_new(&mut self, key: ObjectKey, object: Rc<Object>) -> usize {
        self.next_stamp += 1;
        let stamp = self.next_stamp;
        let kind = kind_index(key.kind);
        let i = self.slab.insert(Entry { key: key.clone(), object, stamp });
        self.index.insert(key, i);
        self.orders[kind].get_mut().pending.push((i, stamp));
        i
    }

    pub fn remove(&mut self, key: &ObjectKey) -> Option<Rc<Object>> {
        let i = self.index.remove(key)?;
        let entry = self.slab.take(i)?;
        let order = self.orders[kind_index(key.kind)].get_mut();
        order.stale += 1;
        // A kind nobody walks would otherwise keep every place it ever had.
        if order.stale > 64 && order.stale * 2 > order.sorted.len() + order.pending.len() {
            drop_stale(&self.slab, order);
        }
        Some(entry.object)
    }

    pub fn clear(&mut self) {
        *self = ObjectTable::default();
    }

    /// Every entry in key order.
    pub fn iter(&self) -> Ordered<'_> {
        Ordered { table: self, kind: 0, pos: 0, sorted: None }
    }
    pub fn keys(&self) -> impl Iterator<Item = &ObjectKey> + '_ {
        self.iter().map(|(k, _)| k)
    }
    pub fn values(&self) -> impl Iterator<Item = &Rc<Object>> + '_ {
        self.iter().map(|(_, v)| v)
    }

    /// Entries from `start` on, in key order.
    pub fn range_from(&self, start: &ObjectKey) -> Ordered<'_> {
        let kind = kind_index(start.kind);
        let sorted = self.sorted(kind);
        let pos = sorted.partition_point(|&(p, _)| self.slab.get(p).is_some_and(|e| e.key < *start));
        Ordered { table: self, kind, pos, sorted: Some(sorted) }
    }

    /// The places of one kind in key order, brought up to date first.
    fn sorted(&self, kind: usize) -> Ref<'_, Vec<Placed>> {
        if !self.orders[kind].borrow().is_clean() {
            let mut order = self.orders[kind].borrow_mut();
            self.bring_up_to_date(&mut order);
        }
        Ref::map(self.orders[kind].borrow(), |o| &o.sorted)
    }

    /// Drops stale places, sorts the pending ones by key and merges them into the sorted ones.
    fn bring_up_to_date(&self, order: &mut Order) {
        let key = |&(p, _): &Placed| self.slab.get(p).map(|e| &e.key);
        if order.stale > 0 {
            drop_stale(&self.slab, order);
        }
        if order.pending.is_empty() {
            return;
        }
        let mut pending = std::mem::take(&mut order.pending);
        crate::sort::sort_by(&mut pending, |a, b| key(a).cmp(&key(b)));
        let mut merged = Vec::with_capacity(order.sorted.len() + pending.len());
        let mut rest = &order.sorted[..];
        for placed in pending {
            let k = key(&placed);
            let before = rest.partition_point(|p| key(p).cmp(&k) == Ordering::Less);
            merged.extend_from_slice(&rest[..before]);
            merged.push(placed);
            rest = &rest[before..];
        }
        merged.extend_from_slice(rest);
        order.sorted = merged;
        // The emptied pending vector keeps no capacity: a large batch of inserts is done once.
    }
}

/// Drops the places whose entry was removed: the slab place is free, or holds a newer entry
/// (another stamp).
fn drop_stale(slab: &Slab<Entry>, order: &mut Order) {
    let live = |&(p, s): &Placed| slab.get(p).is_some_and(|e| e.stamp == s);
    order.sorted.retain(live);
    order.pending.retain(live);
    order.stale = 0;
}

/// A walk over the table in key order, kind after kind.
pub struct Ordered<'a> {
    table: &'a ObjectTable,
    kind: usize,
    pos: usize,
    sorted: Option<Ref<'a, Vec<Placed>>>,
}

impl<'a> Iterator for Ordered<'a> {
    type Item = (&'a ObjectKey, &'a Rc<Object>);

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            if self.sorted.is_none() {
                if self.kind >= self.table.orders.len() {
                    return None;
                }
                self.sorted = Some(self.table.sorted(self.kind));
            }
            let table: &'a ObjectTable = self.table;
            match self.sorted.as_ref().and_then(|s| s.get(self.pos).copied()) {
                Some((place, _)) => {
                    self.pos += 1;
                    if let Some(entry) = table.slab.get(place) {
                        return Some((&entry.key, &entry.object));
                    }
                }
                None => {
                    self.sorted = None;
                    self.kind += 1;
                    self.pos = 0;
                }
            }
        }
    }
}

impl Clone for ObjectTable {
    /// A compact copy (etcd snapshots): the same entries, no free places.
    fn clone(&self) -> Self {
        self.iter().map(|(k, v)| (k.clone(), v.clone())).collect()
    }
}

impl FromIterator<(ObjectKey, Rc<Object>)> for ObjectTable {
    fn from_iter<I: IntoIterator<Item = (ObjectKey, Rc<Object>)>>(entries: I) -> Self {
        let mut table = ObjectTable::default();
        for (k, v) in entries {
            table.insert(k, v);
        }
        table
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Kind, ObjectMeta, Pod};

    fn pod(name: &str, rv: u64) -> Rc<Object> {
        Rc::new(Object::Pod(Pod {
            metadata: ObjectMeta { name: name.into(), namespace: "default".into(), resource_version: rv, ..Default::default() },
            ..Default::default()
        }))
    }
    fn key(name: &str) -> ObjectKey {
        ObjectKey::new(Kind::Pod, "default", name)
    }
    fn names(t: &ObjectTable) -> Vec<String> {
        t.values().map(|o| o.meta().name.to_string()).collect()
    }

    #[test]
    fn entries_come_out_in_key_order_whatever_slab_place_they_took() {
        let mut t = ObjectTable::default();
        for n in ["c", "a", "b"] {
            assert!(t.insert(key(n), pod(n, 1)).is_none());
        }
        assert_eq!(t.remove(&key("b")).map(|o| o.meta().name.clone()).as_deref(), Some("b"));
        t.insert(key("0"), pod("0", 1));
        assert_eq!(names(&t), ["0", "a", "c"]);
        assert_eq!(t.range_from(&key("b")).map(|(k, _)| k.name.as_str()).collect::<Vec<_>>(), ["c"]);
        assert_eq!(t.len(), 3);
        assert!(t.get(&key("b")).is_none() && !t.contains_key(&key("b")));
    }

    #[test]
    fn an_insert_over_a_key_replaces_it_in_place_and_returns_the_old_value() {
        let mut t = ObjectTable::default();
        t.insert(key("a"), pod("a", 1));
        let old = t.insert(key("a"), pod("a", 2));
        assert_eq!(old.map(|o| o.meta().resource_version), Some(1));
        assert_eq!(t.get(&key("a")).map(|o| o.meta().resource_version), Some(2));
        assert_eq!((t.len(), t.clone().len()), (1, 1));
        assert_eq!(t.upsert(&key("a"), pod("a", 3)).map(|o| o.meta().resource_version), Some(2), "upsert replaces too");
        assert!(t.upsert(&key("b"), pod("b", 1)).is_none());
        assert_eq!(names(&t), ["a", "b"]);
        t.clear();
        assert!(t.is_empty() && t.iter().next().is_none());
    }

    #[test]
    fn a_reused_place_is_listed_once_at_its_new_key() {
        let mut t = ObjectTable::default();
        t.insert(key("b"), pod("b", 1));
        t.insert(key("d"), pod("d", 1));
        assert_eq!(names(&t), ["b", "d"]);
        let freed = t.place(&key("b"));
        t.remove(&key("b"));
        t.insert(key("e"), pod("e", 1));
        assert_eq!(t.place(&key("e")), freed, "the slab reuses the freed place");
        t.insert(key("a"), pod("a", 1));
        assert_eq!(names(&t), ["a", "d", "e"]);
        assert_eq!(t.at(t.place(&key("d")).unwrap_or(usize::MAX)).map(|(k, _)| k.name.as_str()), Some("d"));
    }

    #[test]
    fn kinds_come_out_in_kind_order_and_a_range_stays_in_its_kind_order() {
        let mut t = ObjectTable::default();
        t.insert(key("p"), pod("p", 1));
        let node = ObjectKey::new(Kind::Node, "", "n");
        t.insert(node.clone(), pod("n", 1));
        assert_eq!(t.keys().map(|k| k.kind).collect::<Vec<_>>(), [Kind::Node, Kind::Pod]);
        assert_eq!(t.range_from(&key("")).map(|(k, _)| k.name.as_str()).collect::<Vec<_>>(), ["p"]);
        assert_eq!(t.range_from(&node).count(), 2);
    }

    #[test]
    fn removals_in_a_kind_nobody_walks_are_swept() {
        let mut t = ObjectTable::default();
        for i in 0..200 {
            t.insert(key(&format!("p{i:03}")), pod("p", 1));
        }
        for i in 0..150 {
            t.remove(&key(&format!("p{i:03}")));
        }
        let order = t.orders[kind_index(Kind::Pod)].borrow().clone();
        assert!(order.sorted.len() + order.pending.len() < 130, "swept: {}", order.pending.len());
        assert_eq!(t.keys().next().map(|k| k.name.as_str()), Some("p150"));
        assert_eq!(t.len(), 50);
    }
}
