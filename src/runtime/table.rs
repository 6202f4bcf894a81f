//! An object table that is both ordered and hashed: etcd's keyspace and every informer's cache.
//!
//! Lists must come out in key order, so the keys live in a `BTreeMap`; but most accesses are point
//! lookups of an existing key (a status write, a watch notification of an update), and in a tree
//! of a hundred thousand keys each lookup compares key strings at every level — a dozen cache
//! misses. Here the values sit in a slab, the tree maps keys to slab places for ordered walks, and
//! a hash index maps keys to the same places: a lookup or an in-place update touches only the hash
//! index and the slab; only a new key or a removal walks the tree.

use super::fasthash::FastMap;
use super::slab::Slab;
use crate::model::{Object, ObjectKey};
use std::collections::BTreeMap;
use std::ops::RangeFrom;
use std::rc::Rc;

#[derive(Debug, Default)]
pub struct ObjectTable {
    ordered: BTreeMap<ObjectKey, usize>,
    index: FastMap<ObjectKey, usize>,
    slab: Slab<Rc<Object>>,
}

impl ObjectTable {
    pub fn len(&self) -> usize {
        self.index.len()
    }
    pub fn is_empty(&self) -> bool {
        self.index.is_empty()
    }
    pub fn get(&self, key: &ObjectKey) -> Option<&Rc<Object>> {
        self.index.get(key).and_then(|&i| self.slab.get(i))
    }
    pub fn get_mut(&mut self, key: &ObjectKey) -> Option<&mut Rc<Object>> {
        let &i = self.index.get(key)?;
        self.slab.get_mut(i)
    }
    pub fn contains_key(&self, key: &ObjectKey) -> bool {
        self.index.contains_key(key)
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
        if let Some(slot) = self.get_mut(key) {
            return Some(std::mem::replace(slot, object));
        }
        self.insert_new(key.clone(), object);
        None
    }

    fn insert_new(&mut self, key: ObjectKey, object: Rc<Object>) {
        let i = self.slab.insert(object);
        self.index.insert(key.clone(), i);
        self.ordered.insert(key, i);
    }

    pub fn remove(&mut self, key: &ObjectKey) -> Option<Rc<Object>> {
        let i = self.index.remove(key)?;
        self.ordered.remove(key);
        self.slab.take(i)
    }

    pub fn clear(&mut self) {
        *self = ObjectTable::default();
    }

    /// Every entry in key order.
    pub fn iter(&self) -> impl Iterator<Item = (&ObjectKey, &Rc<Object>)> + '_ {
        self.range(..)
    }
    pub fn keys(&self) -> impl Iterator<Item = &ObjectKey> + '_ {
        self.ordered.keys()
    }
    pub fn values(&self) -> impl Iterator<Item = &Rc<Object>> + '_ {
        self.iter().map(|(_, v)| v)
    }

    /// Entries from `start` on, in key order.
    pub fn range_from<'a>(&'a self, start: &ObjectKey) -> impl Iterator<Item = (&'a ObjectKey, &'a Rc<Object>)> + 'a {
        self.range(RangeFrom { start: start.clone() })
    }

    fn range<'a, R: std::ops::RangeBounds<ObjectKey>>(&'a self, range: R) -> impl Iterator<Item = (&'a ObjectKey, &'a Rc<Object>)> + 'a {
        self.ordered.range(range).filter_map(|(k, &i)| Some((k, self.slab.get(i)?)))
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
        t.values().map(|o| o.meta().name.clone()).collect()
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
}
