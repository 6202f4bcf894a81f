//! An object table that is both ordered and hashed: etcd's keyspace and every informer's cache.
//!
//! Lists must come out in key order, so the keys live in a `BTreeMap`; but most accesses are point
//! lookups of an existing key (a status write, a watch notification of an update), and in a tree
//! of a hundred thousand keys each lookup compares key strings at every level — a dozen cache
//! misses. Here the values sit in a slab, the tree maps keys to slab places for ordered walks, and
//! a hash index maps keys to the same places: a lookup or an in-place update touches only the hash
//! index and the slab; only a new key or a removal walks the tree. That walk compares keys in
//! eight-byte words inline (`Ordered`) rather than calling `memcmp` twice per step: names in a
//! large run share long prefixes (`app-12-7d9c8f6b5-…`), and etcd's tree holds every pod and event.

use super::fasthash::FastMap;
use super::slab::Slab;
use crate::model::{Object, ObjectKey};
use std::cmp::Ordering;
use std::collections::BTreeMap;
use std::ops::RangeFrom;
use std::rc::Rc;

/// An `ObjectKey` ordered exactly as `ObjectKey`'s own `Ord` (kind, then namespace, then name,
/// each string by its bytes, a prefix first), only compared faster.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Ordered(ObjectKey);

impl Ord for Ordered {
    fn cmp(&self, other: &Self) -> Ordering {
        let (a, b) = (&self.0, &other.0);
        a.kind
            .cmp(&b.kind)
            .then_with(|| cmp_bytes(a.namespace.as_bytes(), b.namespace.as_bytes()))
            .then_with(|| cmp_bytes(a.name.as_bytes(), b.name.as_bytes()))
    }
}
impl PartialOrd for Ordered {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// Lexicographic byte order, as `str`'s: eight bytes at a time as big-endian words (whose
/// order is the bytes' order), then the tail byte by byte, then the shorter first.
#[inline]
fn cmp_bytes(a: &[u8], b: &[u8]) -> Ordering {
    let (mut x, mut y) = (a.chunks_exact(8), b.chunks_exact(8));
    for (p, q) in (&mut x).zip(&mut y) {
        let (p, q) = (word(p), word(q));
        if p != q {
            return p.cmp(&q);
        }
    }
    let done = (a.len().min(b.len()) / 8) * 8;
    a[done..].cmp(&b[done..])
}

#[inline]
fn word(chunk: &[u8]) -> u64 {
    let mut w = [0u8; 8];
    w.copy_from_slice(chunk);
    u64::from_be_bytes(w)
}

#[derive(Debug, Default)]
pub struct ObjectTable {
    ordered: BTreeMap<Ordered, usize>,
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
        self.ordered.insert(Ordered(key), i);
    }

    pub fn remove(&mut self, key: &ObjectKey) -> Option<Rc<Object>> {
        let (key, i) = self.index.remove_entry(key)?;
        self.ordered.remove(&Ordered(key));
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
        self.ordered.keys().map(|k| &k.0)
    }
    pub fn values(&self) -> impl Iterator<Item = &Rc<Object>> + '_ {
        self.iter().map(|(_, v)| v)
    }

    /// Entries from `start` on, in key order.
    pub fn range_from<'a>(&'a self, start: &ObjectKey) -> impl Iterator<Item = (&'a ObjectKey, &'a Rc<Object>)> + 'a {
        self.range(RangeFrom { start: Ordered(start.clone()) })
    }

    fn range<'a, R: std::ops::RangeBounds<Ordered>>(&'a self, range: R) -> impl Iterator<Item = (&'a ObjectKey, &'a Rc<Object>)> + 'a {
        self.ordered.range(range).filter_map(|(k, &i)| Some((&k.0, self.slab.get(i)?)))
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
    fn keys_order_exactly_as_object_keys_do() {
        let names = [
            "",
            "a",
            "ab",
            "abcdefgh",
            "abcdefgh\u{0}",
            "abcdefghi",
            "abcdefgi",
            "app-12-7d9c8f6b5-x7k2p",
            "app-12-7d9c8f6b5-x7k2",
            "app-2",
            "é",
            "zzzzzzzzzzzzzzzzz",
        ];
        let mut keys = Vec::new();
        for kind in [Kind::Node, Kind::Pod, Kind::Event] {
            for ns in ["", "default", "default-x", "kube-system"] {
                keys.extend(names.iter().map(|n| ObjectKey { kind, namespace: ns.into(), name: n.to_string() }));
            }
        }
        for a in &keys {
            for b in &keys {
                assert_eq!(Ordered(a.clone()).cmp(&Ordered(b.clone())), a.cmp(b), "{a} vs {b}");
            }
        }
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
