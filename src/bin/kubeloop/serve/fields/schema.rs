//! What the built-in kinds' schemas say about merging, read from the library's one schema
//! (`model::schema`, generated from the same tables the decoders are, with their `#[list]` and
//! `#[patch]` lines): which lists are maps keyed by some of their items' fields (containers by
//! name, a container's ports by `containerPort` and `protocol` …), which are sets, which are atomic
//! (the rest, as structured-merge-diff treats a list without a list type), which objects are maps
//! whose keys each a client may own (labels, annotations …) rather than structs, and which structs
//! are atomic (a label selector). Strategic merge patch (`patch.rs`) reads its merge keys here too.
//!
//! A field the simulation does not read is not in the schema: a list there is atomic, an object a
//! struct. Each path is resolved once and remembered (the walks ask for every node of every write).

use kubeloop::model::schema::{Field, Schema};
use kubeloop::model::Kind;
use std::cell::RefCell;
use std::collections::HashMap;

/// How a list merges.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum ListType {
    /// Replaced whole, owned as one field.
    Atomic,
    /// Items are scalars, each owned by its value (`metadata.finalizers`).
    Set,
    /// Items are objects, each owned by the values of these fields (`listMapKeys`).
    Map(Vec<&'static str>),
}

/// The types upstream marks `+structType=atomic`: set and owned as one field.
const ATOMIC_STRUCTS: [&str; 4] = ["LabelSelector", "NodeSelector", "ObjectReference", "LocalObjectReference"];

/// What the schema says about the value at one path.
#[derive(Clone, Debug, PartialEq)]
struct Resolved {
    list: ListType,
    patch_merge_key: Option<&'static str>,
    is_map: bool,
    atomic_struct: bool,
}

impl Resolved {
    const UNKNOWN: Resolved = Resolved { list: ListType::Atomic, patch_merge_key: None, is_map: false, atomic_struct: false };
}

/// How many paths are remembered: a kind's schema has a few hundred; map keys (label names)
/// make more, which are resolved each time past this.
const REMEMBERED: usize = 20_000;

thread_local! {
    static RESOLVED: RefCell<HashMap<(Kind, String), Resolved>> = RefCell::new(HashMap::new());
}

/// The value at `path` (the field names from the object's root; a list's items stand at the
/// list's own name).
fn resolved(kind: Kind, path: &[&str]) -> Resolved {
    let key = (kind, path.join("."));
    if let Some(r) = RESOLVED.with(|c| c.borrow().get(&key).cloned()) {
        return r;
    }
    let r = resolve(kind, path);
    RESOLVED.with(|c| {
        let mut c = c.borrow_mut();
        if c.len() < REMEMBERED {
            c.insert(key, r.clone());
        }
    });
    r
}

fn resolve(kind: Kind, path: &[&str]) -> Resolved {
    let mut schema = kind.schema();
    let mut field: Option<Field> = None;
    for name in path {
        while let Schema::Array(item) = schema {
            schema = *item;
        }
        match schema {
            // A map's key is any name; its values are all alike.
            Schema::Map(value) => {
                schema = *value;
                field = None;
            }
            other => {
                let Some(f) = other.fields().and_then(|fields| fields.into_iter().find(|f| f.name == *name)) else {
                    return Resolved::UNKNOWN;
                };
                schema = f.schema();
                field = Some(f);
            }
        }
    }
    let list = match field.as_ref().and_then(Field::list_type) {
        Some("set") => ListType::Set,
        Some("map") => ListType::Map(field.as_ref().map(Field::list_map_keys).unwrap_or_default()),
        _ => ListType::Atomic,
    };
    Resolved {
        list,
        patch_merge_key: field.as_ref().and_then(Field::patch_merge_key),
        is_map: matches!(schema, Schema::Map(_)),
        atomic_struct: matches!(&schema, Schema::Named(n) if ATOMIC_STRUCTS.contains(&n.name)),
    }
}

/// Strategic merge patch's merge key for the list at `path` (`patchMergeKey`: a Service's ports
/// merge by `port`, a container's by `containerPort`).
pub(crate) fn patch_merge_key(kind: Kind, path: &[&str]) -> Option<&'static str> {
    resolved(kind, path).patch_merge_key
}

pub(crate) fn list_type(kind: Kind, path: &[&str]) -> ListType {
    resolved(kind, path).list
}

/// A key field a list item may leave out, and the default its schema gives it.
pub(crate) fn key_default(field: &str) -> Option<&'static str> {
    (field == "protocol").then_some("TCP")
}

/// Whether the object at `path` is a map (`map[string]…`: each key a field of its own, owned
/// one by one) rather than a struct.
pub(crate) fn is_map(kind: Kind, path: &[&str]) -> bool {
    resolved(kind, path).is_map
}

/// Whether the struct at `path` is atomic (`+structType=atomic`): a LabelSelector is.
pub(crate) fn is_atomic_struct(kind: Kind, path: &[&str]) -> bool {
    resolved(kind, path).atomic_struct
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ports_are_keyed_by_where_they_are() {
        let container = ["spec", "template", "spec", "containers", "ports"];
        assert_eq!(list_type(Kind::Deployment, &container), ListType::Map(vec!["containerPort", "protocol"]));
        assert_eq!(patch_merge_key(Kind::Deployment, &container), Some("containerPort"));
        assert_eq!(list_type(Kind::Service, &["spec", "ports"]), ListType::Map(vec!["port", "protocol"]));
        assert_eq!(patch_merge_key(Kind::Service, &["spec", "ports"]), Some("port"));
        assert_eq!(list_type(Kind::Pod, &["spec", "containers"]), ListType::Map(vec!["name"]));
        assert_eq!(list_type(Kind::Pod, &["spec", "containers", "args"]), ListType::Atomic);
        assert_eq!(list_type(Kind::Pod, &["metadata", "finalizers"]), ListType::Set);
        assert_eq!(list_type(Kind::Pod, &["spec", "nope"]), ListType::Atomic, "a field not modelled");
    }

    #[test]
    fn a_selector_is_a_map_only_for_services_and_a_label_selector_is_atomic() {
        assert!(is_map(Kind::Service, &["spec", "selector"]));
        assert!(!is_atomic_struct(Kind::Service, &["spec", "selector"]));
        assert!(is_atomic_struct(Kind::Deployment, &["spec", "selector"]));
        assert!(is_map(Kind::Deployment, &["metadata", "labels"]));
        assert!(is_map(Kind::ConfigMap, &["data"]));
        assert!(!is_map(Kind::Deployment, &["spec", "template"]));
    }
}
