//! The three patch types a PATCH request may carry, applied to an object's JSON: JSON merge
//! patch (RFC 7386), JSON patch (RFC 6902) and strategic merge patch.
//!
//! The strategic merge here knows the list fields of the built-in kinds that kubectl patches and
//! their merge keys (containers by name, a container's ports by containerPort, a Service's by port
//! …: `model::schema`, through `fields::schema`, which server-side apply reads too), the `$patch: delete|replace`
//! directive and ignores the `$setElementOrder`/`$retainKeys` hints; any other list is replaced,
//! as strategic merge does for a list without a merge key.

use super::fields::schema;
use kubeloop::model::Kind;
use serde_json::{Map, Value};

/// The patch types, by their media type.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum PatchType {
    Merge,
    Json,
    Strategic,
    Apply,
}

impl PatchType {
    pub(crate) fn from_content_type(content_type: &str) -> Option<PatchType> {
        match content_type.split(';').next().unwrap_or_default().trim() {
            "application/merge-patch+json" => Some(PatchType::Merge),
            "application/json-patch+json" => Some(PatchType::Json),
            "application/strategic-merge-patch+json" => Some(PatchType::Strategic),
            "application/apply-patch+yaml" | "application/apply-patch+cbor" => Some(PatchType::Apply),
            _ => None,
        }
    }
}

/// Applies a patch document to `target`, or says why it cannot (kube-apiserver's 400/422 text).
pub(crate) fn apply(kind: PatchType, object: Kind, target: &Value, patch: &Value) -> Result<Value, String> {
    match kind {
        PatchType::Merge => Ok(merge(target, patch)),
        PatchType::Strategic => {
            if !patch.is_object() {
                return Err("unable to find api field in struct  for the json field \"\"".into());
            }
            Ok(strategic(object, target, patch, &mut Vec::new()))
        }
        PatchType::Json => json_patch(target, patch),
        // Server-side apply is not a patch of the document alone: `fields::managers::apply`.
        PatchType::Apply => Err("an apply patch needs the object's field managers".into()),
    }
}

/// RFC 7386: objects merge key by key, `null` removes, anything else replaces.
pub(crate) fn merge(target: &Value, patch: &Value) -> Value {
    let Value::Object(p) = patch else { return patch.clone() };
    let mut out = match target {
        Value::Object(t) => t.clone(),
        _ => Map::new(),
    };
    for (k, v) in p {
        if v.is_null() {
            out.remove(k);
        } else {
            let merged = merge(out.get(k).unwrap_or(&Value::Null), v);
            out.insert(k.clone(), merged);
        }
    }
    Value::Object(out)
}

/// Strategic merge: as a merge patch, but lists with a merge key merge element by element.
/// `path` is the field names from the object's root, which say what a list's merge key is.
fn strategic(kind: Kind, target: &Value, patch: &Value, path: &mut Vec<String>) -> Value {
    match patch {
        Value::Object(p) => {
            if p.get("$patch").and_then(Value::as_str) == Some("replace") {
                let mut p = p.clone();
                p.remove("$patch");
                return Value::Object(p);
            }
            let mut out = match target {
                Value::Object(t) => t.clone(),
                _ => Map::new(),
            };
            for (k, v) in p {
                if k.starts_with('$') {
                    continue;
                }
                if v.is_null() {
                    out.remove(k);
                    continue;
                }
                path.push(k.clone());
                let merged = strategic(kind, out.get(k).unwrap_or(&Value::Null), v, path);
                path.pop();
                out.insert(k.clone(), merged);
            }
            Value::Object(out)
        }
        Value::Array(items) => {
            let fields: Vec<&str> = path.iter().map(String::as_str).collect();
            match (schema::patch_merge_key(kind, &fields), target) {
                (Some(key), Value::Array(current)) => merge_list(kind, current, items, key, path),
                _ => Value::Array(items.iter().filter(|i| i.get("$patch").is_none()).cloned().collect()),
            }
        }
        other => other.clone(),
    }
}

fn merge_list(kind: Kind, current: &[Value], patch: &[Value], key: &str, path: &mut Vec<String>) -> Value {
    let mut out: Vec<Value> = current.to_vec();
    for item in patch {
        let id = item.get(key);
        let at = id.and_then(|id| out.iter().position(|c| c.get(key) == Some(id)));
        let delete = item.get("$patch").and_then(Value::as_str) == Some("delete");
        match (at, delete) {
            (Some(i), true) => {
                out.remove(i);
            }
            (None, true) => {}
            (Some(i), false) => out[i] = strategic(kind, &out[i], item, path),
            (None, false) => out.push(strategic(kind, &Value::Null, item, path)),
        }
    }
    Value::Array(out)
}

/// RFC 6902: a list of operations, all or nothing.
fn json_patch(target: &Value, patch: &Value) -> Result<Value, String> {
    let Value::Array(ops) = patch else {
        return Err("json: cannot unmarshal object into Go value of type jsonpatch.Patch".into());
    };
    let mut doc = target.clone();
    for op in ops {
        let name = op.get("op").and_then(Value::as_str).unwrap_or_default();
        let path = op.get("path").and_then(Value::as_str).ok_or("missing path")?;
        match name {
            "add" => add(&mut doc, path, value_of(op)?)?,
            "remove" => {
                remove(&mut doc, path)?;
            }
            "replace" => {
                remove(&mut doc, path)?;
                add(&mut doc, path, value_of(op)?)?;
            }
            "test" => {
                if doc.pointer(path) != Some(&value_of(op)?) {
                    return Err(format!("testing value {path} failed: test failed"));
                }
            }
            "move" | "copy" => {
                let from = op.get("from").and_then(Value::as_str).ok_or("missing from")?;
                let value = if name == "move" { remove(&mut doc, from)? } else { doc.pointer(from).cloned().ok_or(missing(from))? };
                add(&mut doc, path, value)?;
            }
            other => return Err(format!("Unexpected kind: {other}")),
        }
    }
    Ok(doc)
}

fn value_of(op: &Value) -> Result<Value, String> {
    op.get("value").cloned().ok_or_else(|| "missing value".into())
}

fn missing(path: &str) -> String {
    format!("doc is missing path: \"{path}\": missing value")
}

fn split(path: &str) -> Result<(&str, String), String> {
    let (parent, last) = path.rsplit_once('/').ok_or_else(|| missing(path))?;
    Ok((parent, last.replace("~1", "/").replace("~0", "~")))
}

fn add(doc: &mut Value, path: &str, value: Value) -> Result<(), String> {
    if path.is_empty() {
        *doc = value;
        return Ok(());
    }
    let (parent, last) = split(path)?;
    match doc.pointer_mut(parent) {
        Some(Value::Object(m)) => {
            m.insert(last, value);
            Ok(())
        }
        Some(Value::Array(a)) => {
            let i = if last == "-" { a.len() } else { last.parse::<usize>().map_err(|_| missing(path))? };
            if i > a.len() {
                return Err(missing(path));
            }
            a.insert(i, value);
            Ok(())
        }
        _ => Err(missing(path)),
    }
}

fn remove(doc: &mut Value, path: &str) -> Result<Value, String> {
    let (parent, last) = split(path)?;
    match doc.pointer_mut(parent) {
        Some(Value::Object(m)) => m.remove(&last).ok_or_else(|| missing(path)),
        Some(Value::Array(a)) => {
            let i = last.parse::<usize>().map_err(|_| missing(path))?;
            if i >= a.len() {
                return Err(missing(path));
            }
            Ok(a.remove(i))
        }
        _ => Err(missing(path)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn merge_patch_replaces_lists_and_null_removes() {
        let t = json!({"a": {"b": 1, "c": 2}, "l": [1, 2]});
        assert_eq!(merge(&t, &json!({"a": {"b": null, "d": 3}, "l": [3]})), json!({"a": {"c": 2, "d": 3}, "l": [3]}));
    }

    #[test]
    fn strategic_merge_patch_merges_containers_by_name() {
        let t = json!({"spec": {"containers": [{"name": "a", "image": "x:1"}, {"name": "b", "image": "y:1"}]}});
        let p =
            json!({"spec": {"$setElementOrder/containers": [{"name": "a"}, {"name": "b"}], "containers": [{"name": "b", "image": "y:2"}]}});
        let out = apply(PatchType::Strategic, Kind::Pod, &t, &p).unwrap();
        assert_eq!(out, json!({"spec": {"containers": [{"name": "a", "image": "x:1"}, {"name": "b", "image": "y:2"}]}}));
        let del =
            apply(PatchType::Strategic, Kind::Pod, &t, &json!({"spec": {"containers": [{"name": "a", "$patch": "delete"}]}})).unwrap();
        assert_eq!(del["spec"]["containers"], json!([{"name": "b", "image": "y:1"}]));
    }

    #[test]
    fn json_patch_is_all_or_nothing() {
        let t = json!({"spec": {"replicas": 1, "l": [1]}});
        let ok = apply(
            PatchType::Json,
            Kind::Pod,
            &t,
            &json!([{"op": "replace", "path": "/spec/replicas", "value": 3}, {"op": "add", "path": "/spec/l/-", "value": 2}]),
        );
        assert_eq!(ok.unwrap(), json!({"spec": {"replicas": 3, "l": [1, 2]}}));
        assert!(apply(PatchType::Json, Kind::Pod, &t, &json!([{"op": "remove", "path": "/spec/nope"}])).is_err());
        assert!(apply(PatchType::Json, Kind::Pod, &t, &json!({"op": "add"})).is_err());
        assert!(apply(PatchType::Json, Kind::Pod, &t, &json!([{"op": "test", "path": "/spec/replicas", "value": 2}])).is_err());
    }
}
