//! A small ordered map and set kept as one sorted `Vec`, for the page's download size.
//!
//! `BTreeMap` is instantiated afresh for every key/value layout, and its removal and
//! rebalancing code alone is some 3 KB of wasm per layout; with sixty-odd layouts the B-tree was
//! a sixth of the page. [`VecMap`] keeps its entries sorted in one vector and finds keys by binary
//! search, so an instantiation is a few hundred bytes. It iterates in key order exactly as
//! `BTreeMap` does, so swapping one for the other changes no trace.
//!
//! The price is an O(n) shift on inserting or removing a key that is not at the end. Use it for
//! maps of at most a few thousand entries whose keys are mostly looked up or overwritten in
//! place (per node, per zone, per fault), not for per-pod maps that churn.

use std::borrow::Borrow;

/// An ordered map in one sorted vector (see the module documentation).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VecMap<K, V> {
    entries: Vec<(K, V)>,
}

impl<K, V> Default for VecMap<K, V> {
    fn default() -> Self {
        VecMap { entries: Vec::new() }
    }
}

impl<K: Ord, V> VecMap<K, V> {
    pub const fn new() -> Self {
        VecMap { entries: Vec::new() }
    }
    pub fn len(&self) -> usize {
        self.entries.len()
    }
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
    pub fn clear(&mut self) {
        self.entries.clear();
    }
    /// Where `key` is (`Ok`) or would go (`Err`).
    fn find<Q: Ord + ?Sized>(&self, key: &Q) -> Result<usize, usize>
    where
        K: Borrow<Q>,
    {
        self.entries.binary_search_by(|(k, _)| k.borrow().cmp(key))
    }
    pub fn get<Q: Ord + ?Sized>(&self, key: &Q) -> Option<&V>
    where
        K: Borrow<Q>,
    {
        self.find(key).ok().map(|i| &self.entries[i].1)
    }
    pub fn get_mut<Q: Ord + ?Sized>(&mut self, key: &Q) -> Option<&mut V>
    where
        K: Borrow<Q>,
    {
        self.find(key).ok().map(|i| &mut self.entries[i].1)
    }
    pub fn contains_key<Q: Ord + ?Sized>(&self, key: &Q) -> bool
    where
        K: Borrow<Q>,
    {
        self.find(key).is_ok()
    }
    /// Sets `key` to `value`; returns the value it replaced, as `BTreeMap::insert` does.
    pub fn insert(&mut self, key: K, value: V) -> Option<V> {
        match self.find(&key) {
            Ok(i) => Some(std::mem::replace(&mut self.entries[i].1, value)),
            Err(i) => {
                self.insert_at(i, (key, value));
                None
            }
        }
    }
    /// The value for `key`, inserted from `make` first if there was none (`entry().or_insert_with`).
    pub fn get_or_insert_with(&mut self, key: K, make: impl FnOnce() -> V) -> &mut V {
        let i = match self.find(&key) {
            Ok(i) => i,
            Err(i) => {
                self.insert_at(i, (key, make()));
                i
            }
        };
        &mut self.entries[i].1
    }
    /// Most of these maps hold one entry (a pod's containers): the first insert takes room for
    /// exactly one instead of the four `Vec` would, which for a kubelet's container slots was
    /// three quarters of the allocation.
    fn insert_at(&mut self, i: usize, entry: (K, V)) {
        if self.entries.capacity() == 0 {
            self.entries.reserve_exact(1);
        }
        self.entries.insert(i, entry);
    }
    pub fn remove<Q: Ord + ?Sized>(&mut self, key: &Q) -> Option<V>
    where
        K: Borrow<Q>,
    {
        self.find(key).ok().map(|i| self.entries.remove(i).1)
    }
    /// Keeps the entries `keep` says yes to, visiting them in key order.
    pub fn retain(&mut self, mut keep: impl FnMut(&K, &mut V) -> bool) {
        self.entries.retain_mut(|(k, v)| keep(k, v));
    }
    pub fn iter(&self) -> impl DoubleEndedIterator<Item = (&K, &V)> + ExactSizeIterator {
        self.entries.iter().map(|(k, v)| (k, v))
    }
    pub fn iter_mut(&mut self) -> impl DoubleEndedIterator<Item = (&K, &mut V)> + ExactSizeIterator {
        self.entries.iter_mut().map(|(k, v)| (&*k, v))
    }
    pub fn keys(&self) -> impl DoubleEndedIterator<Item = &K> + ExactSizeIterator {
        self.entries.iter().map(|(k, _)| k)
    }
    pub fn values(&self) -> impl DoubleEndedIterator<Item = &V> + ExactSizeIterator {
        self.entries.iter().map(|(_, v)| v)
    }
    pub fn values_mut(&mut self) -> impl DoubleEndedIterator<Item = &mut V> + ExactSizeIterator {
        self.entries.iter_mut().map(|(_, v)| v)
    }
    pub fn into_values(self) -> impl DoubleEndedIterator<Item = V> + ExactSizeIterator {
        self.entries.into_iter().map(|(_, v)| v)
    }
}

impl<'a, K: Ord, V> IntoIterator for &'a VecMap<K, V> {
    type Item = (&'a K, &'a V);
    type IntoIter = std::iter::Map<std::slice::Iter<'a, (K, V)>, fn(&'a (K, V)) -> (&'a K, &'a V)>;
    fn into_iter(self) -> Self::IntoIter {
        self.entries.iter().map(|(k, v)| (k, v))
    }
}

/// Later pairs win over earlier ones with the same key, as in `BTreeMap::extend`. The pairs are
/// appended and the whole is sorted once (stable, so an existing entry stays before a new one
/// with the same key), which is O(n log n) however unordered the pairs come.
impl<K: Ord, V> Extend<(K, V)> for VecMap<K, V> {
    fn extend<I: IntoIterator<Item = (K, V)>>(&mut self, iter: I) {
        let before = self.entries.len();
        self.entries.extend(iter);
        if self.entries.len() == before {
            return;
        }
        crate::sort::sort_by(&mut self.entries, |a, b| a.0.cmp(&b.0));
        // Of a run of equal keys keep one entry, holding the last value.
        self.entries.dedup_by(|later, kept| {
            let same = later.0 == kept.0;
            if same {
                std::mem::swap(&mut later.1, &mut kept.1);
            }
            same
        });
    }
}

impl<K: Ord, V> FromIterator<(K, V)> for VecMap<K, V> {
    fn from_iter<I: IntoIterator<Item = (K, V)>>(iter: I) -> Self {
        let mut map = VecMap::new();
        map.extend(iter);
        map
    }
}

/// An ordered set in one sorted vector: a [`VecMap`] without values.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VecSet<T> {
    map: VecMap<T, ()>,
}

impl<T> Default for VecSet<T> {
    fn default() -> Self {
        VecSet { map: VecMap::default() }
    }
}

impl<T: Ord> VecSet<T> {
    pub const fn new() -> Self {
        VecSet { map: VecMap::new() }
    }
    pub fn len(&self) -> usize {
        self.map.len()
    }
    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }
    /// Adds `value`; false if it was there already (`BTreeSet::insert`).
    pub fn insert(&mut self, value: T) -> bool {
        self.map.insert(value, ()).is_none()
    }
    pub fn contains<Q: Ord + ?Sized>(&self, value: &Q) -> bool
    where
        T: Borrow<Q>,
    {
        self.map.contains_key(value)
    }
    /// Takes `value` out; false if it was not there.
    pub fn remove<Q: Ord + ?Sized>(&mut self, value: &Q) -> bool
    where
        T: Borrow<Q>,
    {
        self.map.remove(value).is_some()
    }
    pub fn retain(&mut self, mut keep: impl FnMut(&T) -> bool) {
        self.map.retain(|k, _| keep(k));
    }
    pub fn iter(&self) -> impl DoubleEndedIterator<Item = &T> + ExactSizeIterator {
        self.map.keys()
    }
}

impl<T: Ord> Extend<T> for VecSet<T> {
    fn extend<I: IntoIterator<Item = T>>(&mut self, iter: I) {
        self.map.extend(iter.into_iter().map(|v| (v, ())));
    }
}

impl<T: Ord> FromIterator<T> for VecSet<T> {
    fn from_iter<I: IntoIterator<Item = T>>(iter: I) -> Self {
        let mut set = VecSet::new();
        set.extend(iter);
        set
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::{BTreeMap, BTreeSet};

    #[test]
    fn a_map_of_one_entry_takes_room_for_one_then_grows_as_a_vec_does() {
        let mut m = VecMap::new();
        m.insert("nginx".to_string(), 1);
        assert_eq!(m.entries.capacity(), 1);
        m.get_or_insert_with("sidecar".to_string(), || 2);
        m.insert("init".to_string(), 3);
        assert!(m.entries.capacity() >= 3);
        assert_eq!(m.iter().map(|(k, _)| k.as_str()).collect::<Vec<_>>(), ["init", "nginx", "sidecar"]);
    }

    /// The same operations on a `BTreeMap` and a `VecMap` leave the same entries in the same order.
    #[test]
    fn behaves_like_a_btree_map() {
        let mut b = BTreeMap::new();
        let mut v = VecMap::new();
        // A fixed scramble of keys 0..40 with repeats, removals every fifth step.
        for step in 0u32..200 {
            let key = (step * 17 + 5) % 40;
            if step % 5 == 4 {
                assert_eq!(b.remove(&key), v.remove(&key), "remove {key}");
            } else {
                assert_eq!(b.insert(key, step), v.insert(key, step), "insert {key}");
            }
        }
        b.retain(|k, val| {
            *val += 1;
            k % 3 != 0
        });
        v.retain(|k, val| {
            *val += 1;
            k % 3 != 0
        });
        let from_b: Vec<(u32, u32)> = b.iter().map(|(k, v)| (*k, *v)).collect();
        let from_v: Vec<(u32, u32)> = v.iter().map(|(k, v)| (*k, *v)).collect();
        assert_eq!(from_b, from_v);
        assert_eq!(v.len(), b.len());
        assert_eq!(v.keys().next(), Some(&1));
        assert_eq!(v.get(&2), b.get(&2));
        assert!(!v.contains_key(&3));
    }

    #[test]
    fn strings_are_found_by_str_and_kept_sorted() {
        let mut m: VecMap<String, i32> = ["node-2", "node-1", "node-3"].iter().zip(1..).map(|(k, v)| (k.to_string(), v)).collect();
        assert_eq!(m.get("node-1"), Some(&2));
        *m.get_or_insert_with("node-0".into(), || 9) += 1;
        *m.get_or_insert_with("node-1".into(), || 9) += 1;
        assert_eq!(m.iter().map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>(), ["node-0=10", "node-1=3", "node-2=1", "node-3=3"]);
        assert_eq!(m.remove("node-2"), Some(1));
        assert_eq!(m.into_values().collect::<Vec<_>>(), [10, 3, 3]);
    }

    #[test]
    fn a_later_duplicate_wins_when_collecting() {
        let m: VecMap<&str, i32> = [("a", 1), ("b", 2), ("a", 3)].into_iter().collect();
        let b: BTreeMap<&str, i32> = [("a", 1), ("b", 2), ("a", 3)].into_iter().collect();
        assert_eq!(m.iter().map(|(k, v)| (*k, *v)).collect::<Vec<_>>(), b.into_iter().collect::<Vec<_>>());
    }

    #[test]
    fn extending_sorts_once_and_the_last_value_wins() {
        let mut m: VecMap<u32, &str> = [(4, "four"), (2, "two")].into_iter().collect();
        m.extend([(3, "three"), (2, "deux"), (9, "nine"), (3, "trois"), (3, "drei")]);
        let mut b: BTreeMap<u32, &str> = [(4, "four"), (2, "two")].into_iter().collect();
        b.extend([(3, "three"), (2, "deux"), (9, "nine"), (3, "trois"), (3, "drei")]);
        assert_eq!(m.iter().map(|(k, v)| (*k, *v)).collect::<Vec<_>>(), [(2, "deux"), (3, "drei"), (4, "four"), (9, "nine")]);
        assert_eq!(m.iter().map(|(k, v)| (*k, *v)).collect::<Vec<_>>(), b.into_iter().collect::<Vec<_>>());
        let mut s: VecSet<(u8, char)> = VecSet::new();
        s.extend([(2, 'b'), (1, 'a'), (2, 'b')]);
        assert_eq!(s.iter().copied().collect::<Vec<_>>(), [(1, 'a'), (2, 'b')]);
    }

    #[test]
    fn sets_insert_once_and_iterate_in_order() {
        let mut s = VecSet::new();
        let mut b = BTreeSet::new();
        for x in [5, 1, 5, 3, 9, 1] {
            assert_eq!(s.insert(x), b.insert(x));
        }
        assert!(s.remove(&3));
        assert!(!s.remove(&3));
        s.retain(|x| *x != 9);
        assert_eq!(s.iter().copied().collect::<Vec<_>>(), [1, 5]);
        assert!(s.contains(&5) && !s.contains(&9));
        assert_eq!(s.len(), 2);
    }
}
