//! A set of field paths, as structured-merge-diff keeps one per manager: a trie whose edges are
//! path elements (a struct or map field, a list item by its keys, a set item by its value; structured-merge-diff's
//! list index never arises, as kubeloop's lists are atomic, keyed or sets) and
//! whose nodes may be members. It is written as `fieldsV1` (`f:name`, `k:{"name":"web"}`,
//! `v:"x"`, and `.` for a member that also has children) and a path prints as in
//! kube-apiserver's conflict messages (`.spec.containers[name="web"].image`).

use serde_json::{Map, Value};
use std::collections::BTreeMap;
use std::fmt;

/// One step of a path. The order (fields, then keys, then values) is
/// structured-merge-diff's, so members list in the same order as upstream's.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum PathElement {
    Field(String),
    /// A list item by its key fields: their JSON object, keys sorted (`{"name":"web"}`).
    Key(String),
    /// A set item by its value's JSON.
    Value(String),
}

pub(crate) type Path = Vec<PathElement>;

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct FieldSet {
    children: BTreeMap<PathElement, Node>,
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
struct Node {
    member: bool,
    children: FieldSet,
}

impl FieldSet {
    pub(crate) fn is_empty(&self) -> bool {
        self.children.is_empty()
    }

    pub(crate) fn insert(&mut self, path: &[PathElement]) {
        let Some((first, rest)) = path.split_first() else { return };
        let node = self.children.entry(first.clone()).or_default();
        if rest.is_empty() {
            node.member = true;
        } else {
            node.children.insert(rest);
        }
    }

    /// Whether a member is at `path` or below it.
    pub(crate) fn has_at_or_under(&self, path: &[PathElement]) -> bool {
        let Some((first, rest)) = path.split_first() else { return !self.is_empty() };
        match self.children.get(first) {
            Some(node) if rest.is_empty() => node.member || !node.children.is_empty(),
            Some(node) => node.children.has_at_or_under(rest),
            None => false,
        }
    }

    pub(crate) fn union(&self, other: &FieldSet) -> FieldSet {
        let mut out = self.clone();
        for (k, n) in &other.children {
            let mine = out.children.entry(k.clone()).or_default();
            mine.member |= n.member;
            mine.children = mine.children.union(&n.children);
        }
        out
    }

    /// The members of `self` that are not members of `other` (structure kept only where it
    /// still leads to a member).
    pub(crate) fn difference(&self, other: &FieldSet) -> FieldSet {
        let mut out = FieldSet::default();
        for (k, n) in &self.children {
            let node = match other.children.get(k) {
                Some(o) => Node { member: n.member && !o.member, children: n.children.difference(&o.children) },
                None => n.clone(),
            };
            if node.member || !node.children.is_empty() {
                out.children.insert(k.clone(), node);
            }
        }
        out
    }

    /// The members of `self` that are at or under a member of `other` go too: `other`'s members
    /// stand for whole subtrees (the fields a request resets, like a main resource's `status`).
    pub(crate) fn recursive_difference(&self, other: &FieldSet) -> FieldSet {
        let mut out = FieldSet::default();
        for (k, n) in &self.children {
            let node = match other.children.get(k) {
                Some(o) if o.member => continue,
                Some(o) => Node { member: n.member, children: n.children.recursive_difference(&o.children) },
                None => n.clone(),
            };
            if node.member || !node.children.is_empty() {
                out.children.insert(k.clone(), node);
            }
        }
        out
    }

    pub(crate) fn intersection(&self, other: &FieldSet) -> FieldSet {
        let mut out = FieldSet::default();
        for (k, n) in &self.children {
            if let Some(o) = other.children.get(k) {
                let node = Node { member: n.member && o.member, children: n.children.intersection(&o.children) };
                if node.member || !node.children.is_empty() {
                    out.children.insert(k.clone(), node);
                }
            }
        }
        out
    }

    /// Every member's path, in order.
    pub(crate) fn members(&self) -> Vec<Path> {
        let mut out = Vec::new();
        self.collect(&mut Vec::new(), &mut out);
        out
    }

    fn collect(&self, prefix: &mut Path, out: &mut Vec<Path>) {
        for (k, n) in &self.children {
            prefix.push(k.clone());
            if n.member {
                out.push(prefix.clone());
            }
            n.children.collect(prefix, out);
            prefix.pop();
        }
    }

    /// The set as `fieldsV1` JSON.
    pub(crate) fn to_fields_v1(&self) -> Value {
        let mut map = Map::new();
        for (k, n) in &self.children {
            let mut inner = match n.children.to_fields_v1() {
                Value::Object(m) => m,
                _ => Map::new(),
            };
            if n.member && !inner.is_empty() {
                inner.insert(".".into(), Value::Object(Map::new()));
            }
            map.insert(element_key(k), Value::Object(inner));
        }
        Value::Object(map)
    }
}

impl FieldSet {
    /// A set read from `fieldsV1` JSON, as a client sends it when it writes `managedFields`.
    pub(crate) fn from_fields_v1(value: &Value) -> Result<FieldSet, String> {
        let Value::Object(map) = value else { return Err("fieldsV1 must be an object".into()) };
        let mut out = FieldSet::default();
        for (k, v) in map.iter().filter(|(k, _)| *k != ".") {
            let children = FieldSet::from_fields_v1(v)?;
            // A leaf (`{}`) or a node marked `.` is a member itself.
            let member = v.as_object().is_some_and(|m| m.is_empty() || m.contains_key("."));
            out.children.insert(parse_element(k)?, Node { member, children });
        }
        Ok(out)
    }
}

fn parse_element(text: &str) -> Result<PathElement, String> {
    let (prefix, rest) = text.split_once(':').ok_or_else(|| format!("unexpected field set key {text:?}"))?;
    let canonical = |json: &str| serde_json::from_str::<Value>(json).map(|v| v.to_string()).map_err(|e| e.to_string());
    Ok(match prefix {
        "f" => PathElement::Field(rest.into()),
        "k" => PathElement::Key(canonical(rest)?),
        "v" => PathElement::Value(canonical(rest)?),
        _ => return Err(format!("unexpected field set key {text:?}")),
    })
}

fn element_key(e: &PathElement) -> String {
    match e {
        PathElement::Field(name) => format!("f:{name}"),
        PathElement::Key(keys) => format!("k:{keys}"),
        PathElement::Value(v) => format!("v:{v}"),
    }
}

/// A path as kube-apiserver prints it: `.spec.replicas`, `[name="web"]`, `[="x"]`.
pub(crate) struct Display<'a>(pub(crate) &'a [PathElement]);

impl fmt::Display for Display<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for e in self.0 {
            match e {
                PathElement::Field(name) => write!(f, ".{name}")?,
                PathElement::Key(keys) => {
                    let parsed: Map<String, Value> = serde_json::from_str(keys).unwrap_or_default();
                    let parts: Vec<String> = parsed.iter().map(|(k, v)| format!("{k}={v}")).collect();
                    write!(f, "[{}]", parts.join(","))?
                }
                PathElement::Value(v) => write!(f, "[={v}]")?,
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn field(name: &str) -> PathElement {
        PathElement::Field(name.into())
    }

    fn set(paths: &[&[PathElement]]) -> FieldSet {
        let mut s = FieldSet::default();
        for p in paths {
            s.insert(p);
        }
        s
    }

    #[test]
    fn fields_v1_marks_a_member_with_children_by_a_dot() {
        let web = PathElement::Key(r#"{"name":"web"}"#.into());
        let s = set(&[
            &[field("spec"), field("replicas")],
            &[field("spec"), field("containers"), web.clone()],
            &[field("spec"), field("containers"), web, field("image")],
        ]);
        let v = s.to_fields_v1();
        assert_eq!(v, json!({"f:spec": {"f:replicas": {}, "f:containers": {"k:{\"name\":\"web\"}": {".": {}, "f:image": {}}}}}));
        assert_eq!(FieldSet::from_fields_v1(&v).unwrap(), s);
        assert!(FieldSet::from_fields_v1(&json!({"x:y": {}})).is_err());
    }

    #[test]
    fn difference_union_and_intersection_work_on_members() {
        let a = set(&[&[field("spec"), field("replicas")], &[field("spec"), field("paused")]]);
        let b = set(&[&[field("spec"), field("replicas")]]);
        assert_eq!(a.difference(&b), set(&[&[field("spec"), field("paused")]]));
        assert_eq!(a.intersection(&b), b);
        assert_eq!(b.union(&a), a);
        assert!(b.difference(&a).is_empty());
        // A member stands for its subtree in a recursive difference.
        assert!(a.recursive_difference(&set(&[&[field("spec")]])).is_empty());
        assert_eq!(a.difference(&set(&[&[field("spec")]])), a);
    }

    #[test]
    fn paths_print_as_kube_apiserver_prints_them() {
        let p = [field("spec"), field("ports"), PathElement::Key(r#"{"port":80,"protocol":"TCP"}"#.into()), field("name")];
        assert_eq!(Display(&p).to_string(), r#".spec.ports[port=80,protocol="TCP"].name"#);
        assert_eq!(
            Display(&[field("metadata"), field("finalizers"), PathElement::Value("\"x\"".into())]).to_string(),
            r#".metadata.finalizers[="x"]"#
        );
    }
}
