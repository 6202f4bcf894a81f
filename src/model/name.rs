//! `Name`: text that every copy of an object repeats — its name, namespace and UID, its
//! conditions' words, an event's reference and message — shared instead of copied.
//!
//! An object's key is built and cloned constantly — every informer event, work-queue add,
//! expectation and cache index holds one — and every version of an object carries its name,
//! namespace and status words. As `String`s each copy was an allocation and each comparison a
//! `memcmp`; profiles showed string copies as two thirds of all allocations, key clones a
//! quarter of those. A `Name` is an
//! `Rc<str>`: copying it counts a reference, and two copies of the same name compare equal
//! by pointer before any byte is read. It reads, orders, hashes, prints and serialises exactly
//! as the `str` inside, so keys sort and maps hash as they did with `String`.

use super::decode::{Decoded, FromValue};
use serde::{Serialize, Serializer};
use std::borrow::Borrow;
use std::cmp::Ordering;
use std::fmt;
use std::hash::{Hash, Hasher};
use std::ops::Deref;
use std::rc::Rc;

/// Words that the components write into nearly every object — the namespace, condition types
/// and statuses, event types, kinds and components — so that building one from text shares a
/// single copy instead of allocating: a pod's status is generated afresh at every sync.
const WELL_KNOWN: [&str; 20] = [
    "default",
    "True",
    "False",
    "Unknown",
    "Ready",
    "PodScheduled",
    "Initialized",
    "ContainersReady",
    "PodReadyToStartContainers",
    "Normal",
    "Warning",
    "Pod",
    "ReplicaSet",
    "Deployment",
    "Node",
    "v1",
    "apps/v1",
    "kubelet",
    "ContainerCreating",
    "ContainersNotReady",
];

thread_local! {
    static INTERNED: Vec<Rc<str>> = WELL_KNOWN.iter().map(|w| Rc::from(*w)).collect();
}

/// A shared, immutable string: cloning shares.
#[derive(Clone)]
pub struct Name(Rc<str>);

impl Name {
    pub fn new(s: &str) -> Self {
        if s.is_empty() {
            return Name::default();
        }
        match WELL_KNOWN.iter().position(|w| *w == s) {
            Some(i) => INTERNED.with(|words| Name(words[i].clone())),
            None => Name(Rc::from(s)),
        }
    }
    pub fn as_str(&self) -> &str {
        &self.0
    }
    /// Whether two names are the same allocation (so equal without reading them).
    pub fn ptr_eq(a: &Self, b: &Self) -> bool {
        Rc::ptr_eq(&a.0, &b.0)
    }
}

/// One empty name per thread, shared by every default: objects without a namespace (nodes) and
/// half-built metadata would otherwise each allocate an empty string's header.
impl Default for Name {
    fn default() -> Self {
        thread_local! {
            static EMPTY: Rc<str> = Rc::from("");
        }
        Name(EMPTY.with(Rc::clone))
    }
}

impl Deref for Name {
    type Target = str;
    fn deref(&self) -> &str {
        &self.0
    }
}

impl Borrow<str> for Name {
    fn borrow(&self) -> &str {
        &self.0
    }
}

impl PartialEq for Name {
    fn eq(&self, other: &Self) -> bool {
        Rc::ptr_eq(&self.0, &other.0) || *self.0 == *other.0
    }
}

impl Eq for Name {}

impl PartialOrd for Name {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Name {
    fn cmp(&self, other: &Self) -> Ordering {
        if Rc::ptr_eq(&self.0, &other.0) {
            return Ordering::Equal;
        }
        self.0.cmp(&other.0)
    }
}

/// Hashes as the `str` does, so a map keyed by names can be looked up with a `&str`.
impl Hash for Name {
    fn hash<H: Hasher>(&self, state: &mut H) {
        (*self.0).hash(state)
    }
}

impl PartialEq<&str> for Name {
    fn eq(&self, other: &&str) -> bool {
        *self.0 == **other
    }
}

impl PartialEq<String> for Name {
    fn eq(&self, other: &String) -> bool {
        *self.0 == **other
    }
}

impl PartialEq<Name> for &str {
    fn eq(&self, other: &Name) -> bool {
        **self == *other.0
    }
}

impl PartialEq<Name> for String {
    fn eq(&self, other: &Name) -> bool {
        **self == *other.0
    }
}

impl From<&str> for Name {
    fn from(s: &str) -> Self {
        Name::new(s)
    }
}

impl From<String> for Name {
    fn from(s: String) -> Self {
        Name::new(&s)
    }
}

impl From<Name> for String {
    fn from(n: Name) -> Self {
        n.0.to_string()
    }
}

impl fmt::Display for Name {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl fmt::Debug for Name {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&*self.0, f)
    }
}

impl Serialize for Name {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.0)
    }
}

impl FromValue for Name {
    fn from_value(v: &serde_json::Value) -> Decoded<Self> {
        String::from_value(v).map(Name::from)
    }
}

#[cfg(test)]
impl<'de> serde::Deserialize<'de> for Name {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        String::deserialize(d).map(Name::from)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::hash_map::DefaultHasher;

    fn hash_of<T: Hash + ?Sized>(t: &T) -> u64 {
        let mut h = DefaultHasher::new();
        t.hash(&mut h);
        h.finish()
    }

    #[test]
    fn a_copy_shares_the_text_and_compares_equal() {
        let a = Name::from("web-7d4b9c8f5-x2x4q");
        let b = a.clone();
        assert!(Name::ptr_eq(&a, &b));
        assert_eq!(a, b);
        assert_eq!(a, Name::from("web-7d4b9c8f5-x2x4q"));
        assert!(!Name::ptr_eq(&a, &Name::from("web-7d4b9c8f5-x2x4q")));
    }

    #[test]
    fn it_orders_and_hashes_as_the_text_does() {
        let (a, b) = (Name::from("a-10"), Name::from("a-9"));
        assert_eq!(a.cmp(&b), "a-10".cmp("a-9"));
        assert_eq!(hash_of(&a), hash_of("a-10"));
        assert_eq!(a, "a-10");
        assert_ne!(a, "a-9");
    }

    #[test]
    fn empty_names_share_one_value_and_serialise_as_strings() {
        assert!(Name::ptr_eq(&Name::default(), &Name::from("")));
        assert!(Name::ptr_eq(&Name::from("default"), &Name::from("default".to_string())));
        assert!(Name::ptr_eq(&Name::from("Ready"), &Name::from("Ready")), "well-known words are shared");
        assert!(Name::default().is_empty());
        assert_eq!(serde_json::to_string(&Name::from("default")).unwrap(), "\"default\"");
        assert_eq!(format!("{:?}", Name::from("x")), "\"x\"");
    }
}
