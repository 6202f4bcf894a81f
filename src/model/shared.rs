//! `Shared<T>`: a part of an object that successive versions share until one of them changes it.
//!
//! etcd keeps every version of a pod until compaction, and every informer, work item and
//! kubelet holds copies; most writes change only the status, so the spec (and the labels and
//! owner references) of version N+1 are the same as version N's. Behind an `Rc`, a copy of the
//! object copies a pointer to them, and the first change through `DerefMut` makes a private
//! copy (`Rc::make_mut`). It reads, compares, prints and serialises exactly as the `T` inside,
//! so the model's data and its JSON are unchanged.

use super::decode::{Decoded, FromValue};
use serde::{Serialize, Serializer};
use std::fmt;
use std::ops::{Deref, DerefMut};
use std::rc::Rc;

/// A copy-on-write `T`: cloning shares, writing through `DerefMut` unshares.
#[derive(Eq)]
pub struct Shared<T>(Rc<T>);

/// The default (empty) value, one per type, shared by every default: every Event's metadata has
/// empty labels and owner references, and each used to be an allocation of its own.
impl<T: Default + 'static> Default for Shared<T> {
    fn default() -> Self {
        thread_local! {
            static DEFAULTS: std::cell::RefCell<Vec<Rc<dyn std::any::Any>>> = const { std::cell::RefCell::new(Vec::new()) };
        }
        let known = DEFAULTS.with(|defaults| defaults.borrow().iter().find_map(|d| d.clone().downcast::<T>().ok()));
        if let Some(shared) = known {
            return Shared(shared);
        }
        // Built outside the borrow: a default may hold defaults of its own.
        let fresh = Rc::new(T::default());
        DEFAULTS.with(|defaults| defaults.borrow_mut().push(fresh.clone()));
        Shared(fresh)
    }
}

impl<T> Shared<T> {
    pub fn new(value: T) -> Self {
        Shared(Rc::new(value))
    }
    /// Whether two values are the same allocation (so equal without comparing them).
    pub fn ptr_eq(a: &Self, b: &Self) -> bool {
        Rc::ptr_eq(&a.0, &b.0)
    }
}

impl<T: Clone> Shared<T> {
    /// The value, moved out when nothing else shares it, else copied.
    pub fn into_inner(self) -> T {
        Rc::try_unwrap(self.0).unwrap_or_else(|rc| (*rc).clone())
    }
}

impl<T> Clone for Shared<T> {
    fn clone(&self) -> Self {
        Shared(self.0.clone())
    }
}

impl<T> Deref for Shared<T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.0
    }
}

impl<T: Clone> DerefMut for Shared<T> {
    fn deref_mut(&mut self) -> &mut T {
        Rc::make_mut(&mut self.0)
    }
}

/// `for x in &shared` iterates the value inside, as `for x in &value` would.
impl<'a, T> IntoIterator for &'a Shared<T>
where
    &'a T: IntoIterator,
{
    type Item = <&'a T as IntoIterator>::Item;
    type IntoIter = <&'a T as IntoIterator>::IntoIter;
    fn into_iter(self) -> Self::IntoIter {
        (&*self.0).into_iter()
    }
}

impl<T> From<T> for Shared<T> {
    fn from(value: T) -> Self {
        Shared::new(value)
    }
}

/// Equal when they are the same allocation, or else when their values are equal: two versions
/// of an object usually share their spec, and then comparing them costs nothing.
impl<T: PartialEq> PartialEq for Shared<T> {
    fn eq(&self, other: &Self) -> bool {
        Rc::ptr_eq(&self.0, &other.0) || *self.0 == *other.0
    }
}

impl<T: PartialEq> PartialEq<T> for Shared<T> {
    fn eq(&self, other: &T) -> bool {
        *self.0 == *other
    }
}

impl<T: fmt::Debug> fmt::Debug for Shared<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

impl<T: Serialize> Serialize for Shared<T> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.0.serialize(s)
    }
}

impl<T: FromValue> FromValue for Shared<T> {
    fn from_value(v: &serde_json::Value) -> Decoded<Self> {
        T::from_value(v).map(Shared::new)
    }
}

#[cfg(test)]
impl<'de, T: serde::Deserialize<'de>> serde::Deserialize<'de> for Shared<T> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        T::deserialize(d).map(Shared::new)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    #[test]
    fn a_copy_shares_until_one_side_writes() {
        let a: Shared<BTreeMap<String, String>> = Shared::new([("app".to_string(), "web".to_string())].into());
        let mut b = a.clone();
        assert!(Shared::ptr_eq(&a, &b));
        assert_eq!(b.get("app").map(String::as_str), Some("web"));
        b.insert("tier".into(), "db".into());
        assert!(!Shared::ptr_eq(&a, &b));
        assert_eq!((a.len(), b.len()), (1, 2));
        assert_ne!(a, b);
        b.remove("tier");
        assert_eq!(a, b);
    }

    #[test]
    fn defaults_share_one_empty_value_until_one_is_written() {
        let (a, mut b) = (Shared::<Vec<u8>>::default(), Shared::<Vec<u8>>::default());
        assert!(Shared::ptr_eq(&a, &b));
        assert!(!Shared::ptr_eq(&Shared::<Vec<u16>>::default(), &Shared::<Vec<u16>>::new(Vec::new())));
        b.push(7);
        assert_eq!((a.len(), b.len(), Shared::<Vec<u8>>::default().len()), (0, 1, 0));
    }

    #[test]
    fn it_serialises_and_prints_as_the_value_inside() {
        let v: Shared<Vec<i32>> = vec![1, 2].into();
        assert_eq!(serde_json::to_string(&v).ok().as_deref(), Some("[1,2]"));
        assert_eq!(format!("{v:?}"), "[1, 2]");
        assert_eq!(Shared::<Vec<i32>>::default().len(), 0);
        let decoded: Result<Shared<Vec<i64>>, String> = FromValue::from_value(&serde_json::json!([3]));
        assert_eq!(decoded.map(|d| d.into_inner()), Ok(vec![3]));
    }
}
