//! structured-merge-diff's walks over an object's JSON, with `schema.rs` for the types: the set
//! of fields a value sets (an applied configuration's), the comparison of two versions (which
//! fields an update added, modified and removed), the merge of an applied configuration into the
//! live object, and the removal of fields.

use super::schema::{self, ListType};
use super::set::{FieldSet, Path, PathElement};
use kubeloop::model::Kind;
use serde_json::{Map, Value};

/// Where a walk is: the kind, the path so far and the field names along it (for the schema).
struct At<'a> {
    kind: Kind,
    path: Path,
    fields: Vec<&'a str>,
}

impl<'a> At<'a> {
    fn new(kind: Kind) -> Self {
        At { kind, path: Vec::new(), fields: Vec::new() }
    }
    fn is_map(&self) -> bool {
        schema::is_map(self.kind, &self.fields)
    }
    fn atomic(&self, value: &Value) -> bool {
        match value {
            Value::Object(_) => schema::is_atomic_struct(self.kind, &self.fields),
            Value::Array(_) => self.list_type() == ListType::Atomic,
            _ => true,
        }
    }
    fn list_type(&self) -> ListType {
        schema::list_type(self.kind, &self.fields)
    }
}

/// The path element of a list item: its keys, or its value.
fn item_element(list: &ListType, item: &Value) -> Option<PathElement> {
    match list {
        ListType::Atomic => None,
        ListType::Set => Some(PathElement::Value(item.to_string())),
        ListType::Map(keys) => {
            let mut k = Map::new();
            for key in keys {
                let value = match item.get(*key) {
                    Some(v) => v.clone(),
                    None => Value::String(schema::key_default(key)?.into()),
                };
                k.insert((*key).to_string(), value);
            }
            Some(PathElement::Key(Value::Object(k).to_string()))
        }
    }
}

/// The fields a value sets (`ToFieldSet`): its scalars and atomic values, each item of a keyed
/// list or set, each key of a map, and a struct field only when empty or null.
pub(crate) fn field_set(kind: Kind, value: &Value) -> FieldSet {
    let mut out = FieldSet::default();
    set_of(&mut At::new(kind), value, &mut out);
    out
}

fn set_of<'a>(at: &mut At<'a>, value: &'a Value, out: &mut FieldSet) {
    if at.atomic(value) {
        out.insert(&at.path);
        return;
    }
    match value {
        Value::Object(map) => {
            let is_map = at.is_map();
            for (k, v) in map {
                at.path.push(PathElement::Field(k.clone()));
                at.fields.push(k);
                set_of(at, v, out);
                if is_map || v.is_null() || v.as_object().is_some_and(Map::is_empty) {
                    out.insert(&at.path);
                }
                at.fields.pop();
                at.path.pop();
            }
        }
        Value::Array(items) => {
            let list = at.list_type();
            for item in items {
                let Some(pe) = item_element(&list, item) else { continue };
                at.path.push(pe);
                if matches!(list, ListType::Map(_)) {
                    set_of(at, item, out);
                }
                out.insert(&at.path);
                at.path.pop();
            }
        }
        _ => out.insert(&at.path),
    }
}

/// What changed from one version to the next.
#[derive(Debug, Default)]
pub(crate) struct Comparison {
    pub(crate) added: FieldSet,
    pub(crate) modified: FieldSet,
    pub(crate) removed: FieldSet,
}

/// Compares two versions as structured-merge-diff does: a leaf (scalar, atomic value, or an
/// object empty on both sides) present on one side only is added or removed, on both and unequal
/// modified; a map, struct or list item present on one side only is added or removed itself, and
/// its content is compared below it.
pub(crate) fn compare(kind: Kind, old: &Value, new: &Value) -> Comparison {
    let mut c = Comparison::default();
    compare_at(&mut At::new(kind), Some(old), Some(new), &mut c);
    c
}

fn is_empty_or_absent(v: Option<&Value>) -> bool {
    match v {
        None | Some(Value::Null) => true,
        Some(Value::Object(m)) => m.is_empty(),
        Some(Value::Array(a)) => a.is_empty(),
        _ => false,
    }
}

fn compare_at<'a>(at: &mut At<'a>, old: Option<&'a Value>, new: Option<&'a Value>, c: &mut Comparison) {
    let sample = new.or(old).unwrap_or(&Value::Null);
    let same_shape = match (old, new) {
        (Some(a), Some(b)) => std::mem::discriminant(a) == std::mem::discriminant(b),
        _ => true,
    };
    let leaf = at.atomic(sample) || !same_shape || (is_empty_or_absent(old) && is_empty_or_absent(new));
    if leaf {
        match (old, new) {
            (None, Some(_)) => c.added.insert(&at.path),
            (Some(_), None) => c.removed.insert(&at.path),
            (Some(a), Some(b)) if a != b => c.modified.insert(&at.path),
            _ => {}
        }
        return;
    }
    match sample {
        Value::Object(_) => {
            let (o, n) = (old.and_then(Value::as_object), new.and_then(Value::as_object));
            let mut keys: Vec<&'a String> = o.into_iter().chain(n).flat_map(|m| m.keys()).collect();
            keys.sort();
            keys.dedup();
            for k in keys {
                at.path.push(PathElement::Field(k.clone()));
                at.fields.push(k);
                compare_at(at, o.and_then(|m| m.get(k)), n.and_then(|m| m.get(k)), c);
                at.fields.pop();
                at.path.pop();
            }
        }
        Value::Array(_) => {
            let list = at.list_type();
            let items = |v: Option<&'a Value>| -> Vec<(PathElement, &'a Value)> {
                v.and_then(Value::as_array).into_iter().flatten().filter_map(|i| Some((item_element(&list, i)?, i))).collect()
            };
            let (o, n) = (items(old), items(new));
            let mut keys: Vec<&PathElement> = o.iter().chain(&n).map(|(k, _)| k).collect();
            keys.sort();
            keys.dedup();
            for k in keys {
                let find = |v: &[(PathElement, &'a Value)]| v.iter().find(|(pe, _)| pe == k).map(|(_, i)| *i);
                at.path.push(k.clone());
                let (oi, ni) = (find(&o), find(&n));
                if matches!(list, ListType::Map(_)) {
                    compare_at(at, oi, ni, c);
                }
                mark_presence(at, oi, ni, c);
                at.path.pop();
            }
            return;
        }
        _ => {}
    }
    if !at.path.is_empty() {
        mark_presence(at, old, new, c);
    }
}

/// A node present on one side only is itself added or removed.
fn mark_presence(at: &At<'_>, old: Option<&Value>, new: Option<&Value>, c: &mut Comparison) {
    match (old, new) {
        (None, Some(_)) => c.added.insert(&at.path),
        (Some(_), None) => c.removed.insert(&at.path),
        _ => {}
    }
}

/// The applied configuration merged into the live object: the configuration's values win, maps
/// and structs merge field by field, keyed lists item by item (new items after the live ones),
/// sets by value; atomic values are replaced.
pub(crate) fn merge(kind: Kind, live: &Value, config: &Value) -> Value {
    merge_at(&mut At::new(kind), live, config)
}

fn merge_at<'a>(at: &mut At<'a>, live: &'a Value, config: &'a Value) -> Value {
    if at.atomic(config) || std::mem::discriminant(live) != std::mem::discriminant(config) {
        return config.clone();
    }
    match (live, config) {
        (Value::Object(l), Value::Object(r)) => {
            let mut out = l.clone();
            for (k, v) in r {
                at.fields.push(k);
                let merged = match l.get(k) {
                    Some(lv) if !v.is_null() => merge_at(at, lv, v),
                    _ => v.clone(),
                };
                at.fields.pop();
                out.insert(k.clone(), merged);
            }
            Value::Object(out)
        }
        (Value::Array(l), Value::Array(r)) => {
            let list = at.list_type();
            let mut out: Vec<Value> = l.clone();
            for item in r {
                let key = item_element(&list, item);
                let at_index = key.as_ref().and_then(|k| l.iter().position(|i| item_element(&list, i).as_ref() == Some(k)));
                match at_index {
                    Some(i) if matches!(list, ListType::Map(_)) => out[i] = merge_at(at, &l[i], item),
                    Some(_) => {}
                    None => out.push(item.clone()),
                }
            }
            Value::Array(out)
        }
        _ => config.clone(),
    }
}

/// Removes the field, map key or list item at `path` from `value`, if it is there.
pub(crate) fn remove(kind: Kind, value: &mut Value, path: &[PathElement]) {
    let mut at = At::new(kind);
    remove_at(&mut at, value, path);
}

fn remove_at(at: &mut At<'_>, value: &mut Value, path: &[PathElement]) {
    let Some((first, rest)) = path.split_first() else { return };
    match (value, first) {
        (Value::Object(map), PathElement::Field(name)) => {
            if rest.is_empty() {
                map.remove(name);
            } else if let Some(child) = map.get_mut(name) {
                let field = name.clone();
                let mut inner = At { kind: at.kind, path: Vec::new(), fields: at.fields.clone() };
                inner.fields.push(&field);
                remove_at(&mut inner, child, rest);
            }
        }
        (Value::Array(items), pe @ (PathElement::Key(_) | PathElement::Value(_))) => {
            let list = at.list_type();
            let Some(i) = items.iter().position(|item| item_element(&list, item).as_ref() == Some(pe)) else { return };
            if rest.is_empty() {
                items.remove(i);
            } else {
                remove_at(at, &mut items[i], rest);
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::serve::fields::set::Display;
    use serde_json::json;

    fn members(s: &FieldSet) -> Vec<String> {
        s.members().iter().map(|p| Display(p).to_string()).collect()
    }

    #[test]
    fn an_applied_configuration_owns_its_leaves_items_and_map_keys() {
        let config = json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web", "labels": {"app": "web"}},
            "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "web"}},
              "template": {"spec": {"containers": [{"name": "nginx", "image": "nginx", "ports": [{"containerPort": 80}]}]}}}});
        let got = members(&field_set(Kind::Deployment, &config));
        assert_eq!(
            got,
            [
                ".apiVersion",
                ".kind",
                ".metadata.labels.app",
                ".metadata.name",
                ".spec.replicas",
                ".spec.selector",
                r#".spec.template.spec.containers[name="nginx"]"#,
                r#".spec.template.spec.containers[name="nginx"].image"#,
                r#".spec.template.spec.containers[name="nginx"].name"#,
                r#".spec.template.spec.containers[name="nginx"].ports[containerPort=80,protocol="TCP"]"#,
                r#".spec.template.spec.containers[name="nginx"].ports[containerPort=80,protocol="TCP"].containerPort"#,
            ]
        );
    }

    #[test]
    fn a_comparison_names_added_modified_and_removed_fields() {
        let old = json!({"metadata": {"name": "a"}, "spec": {"replicas": 1, "paused": true, "template": {"spec": {"containers": [{"name": "a", "image": "x"}]}}}});
        let new = json!({"metadata": {"name": "a", "labels": {"k": "v"}}, "spec": {"replicas": 2, "template": {"spec": {"containers": [{"name": "a", "image": "x"}, {"name": "b", "image": "y"}]}}}});
        let c = compare(Kind::Deployment, &old, &new);
        assert_eq!(members(&c.modified), [".spec.replicas"]);
        assert_eq!(members(&c.removed), [".spec.paused"]);
        assert_eq!(
            members(&c.added),
            [
                ".metadata.labels",
                ".metadata.labels.k",
                r#".spec.template.spec.containers[name="b"]"#,
                r#".spec.template.spec.containers[name="b"].image"#,
                r#".spec.template.spec.containers[name="b"].name"#,
            ]
        );
    }

    #[test]
    fn a_merge_keeps_live_items_and_replaces_atomic_lists() {
        let live = json!({"spec": {"containers": [{"name": "a", "image": "x", "args": ["1", "2"]}, {"name": "b", "image": "y"}]}});
        let config = json!({"spec": {"containers": [{"name": "a", "image": "z", "args": ["3"]}, {"name": "c", "image": "w"}]}});
        let merged = merge(Kind::Pod, &live, &config);
        assert_eq!(
            merged,
            json!({"spec": {"containers": [{"name": "a", "image": "z", "args": ["3"]}, {"name": "b", "image": "y"}, {"name": "c", "image": "w"}]}})
        );
        let mut pruned = merged;
        remove(
            Kind::Pod,
            &mut pruned,
            &[PathElement::Field("spec".into()), PathElement::Field("containers".into()), PathElement::Key(r#"{"name":"b"}"#.into())],
        );
        assert_eq!(pruned["spec"]["containers"].as_array().map(Vec::len), Some(2));
    }
}
