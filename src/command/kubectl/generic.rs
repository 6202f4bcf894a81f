//! `kubectl describe` of a kind kubectl has no describer for — a custom resource, a
//! CustomResourceDefinition, a Lease — laid out as kubectl's generic describer lays it out: the
//! name, namespace, labels and annotations, then every other field of the object's JSON, sorted
//! by name and labelled in words ("API Version", "Creation Timestamp"), then its Events.
//!
//! It exists because such objects have no fields kubeloop could pick for a describer of its
//! own: their shape is whatever their definition says, and kubectl prints them from their JSON.
//! Values are written as Go's `%v` writes what a JSON decoder gives it (`int64`, `float64`,
//! `<nil>`, `[a b]`, `map[k:v]`), so that the text is the real kubectl's.

use crate::command::table::PrefixWriter;
use crate::model::{Object, Time};
use serde_json::{Map, Value};
use std::rc::Rc;

/// The fields the generic describer prints elsewhere (name, namespace, labels, annotations) or
/// never (`managedFields`).
const SKIPPED: [&str; 5] =
    [".metadata.managedFields", ".metadata.name", ".metadata.namespace", ".metadata.labels", ".metadata.annotations"];

/// The description of one object from its JSON, with its events when `events` is `Some`.
#[inline(never)]
pub fn describe(o: &Object, events: Option<&[Rc<Object>]>, now: Time) -> String {
    let value = crate::command::printers::object_json(o);
    let m = o.meta();
    let mut w = PrefixWriter::new();
    w.write(0, &format!("Name:\t{}\n", m.name));
    w.write(0, &format!("Namespace:\t{}\n", m.namespace));
    super::describe::labels_multiline(&mut w, "Labels", &m.labels);
    super::describe::annotations_multiline(&mut w, "Annotations", &m.annotations);
    if let Value::Object(content) = &value {
        content_lines(&mut w, 0, content, "");
    }
    super::describe::events_table(&mut w, events, now);
    w.finish()
}

/// `printUnstructuredContent`: each field in name order, maps and lists opening a level of
/// their own, scalars after a tab.
fn content_lines(w: &mut PrefixWriter, level: usize, content: &Map<String, Value>, prefix: &str) {
    let mut fields: Vec<&String> = content.keys().collect();
    fields.sort();
    for field in fields {
        let path = format!("{prefix}.{field}");
        if SKIPPED.contains(&path.as_str()) {
            continue;
        }
        match &content[field] {
            Value::Object(inner) => {
                w.write(level, &format!("{}:\n", label_for(field)));
                content_lines(w, level + 1, inner, &path);
            }
            Value::Array(items) => {
                w.write(level, &format!("{}:\n", label_for(field)));
                for item in items {
                    match item {
                        Value::Object(inner) => content_lines(w, level + 1, inner, &path),
                        other => w.write(level + 1, &format!("{}\n", go_value(other))),
                    }
                }
            }
            other => w.write(level, &format!("{}:\t{}\n", label_for(field), go_value(other))),
        }
    }
}

/// `smartLabelFor`: a camelCase field name in words, each capitalised, with the acronyms
/// kubectl knows in capitals (`apiVersion` is "API Version"); a name with a character other than
/// a letter or `-` is left as it is.
pub fn label_for(field: &str) -> String {
    if field.chars().any(|c| !c.is_alphabetic() && c != '-') {
        return field.to_string();
    }
    const ACRONYMS: [&str; 5] = ["API", "URL", "UID", "OSB", "GUID"];
    camel_case_words(field)
        .into_iter()
        .map(|part| {
            let upper = part.to_uppercase();
            if ACRONYMS.contains(&upper.as_str()) {
                upper
            } else {
                let mut chars = part.chars();
                chars.next().map(|c| c.to_uppercase().chain(chars).collect()).unwrap_or_default()
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// Splits a name where its characters change class (lower case, upper case, digit, other), an
/// upper-case run giving its last letter to a lower-case run after it (`HTMLParser`: "HTML",
/// "Parser"), as the camelcase package kubectl uses does.
fn camel_case_words(s: &str) -> Vec<String> {
    let class = |c: char| {
        if c.is_lowercase() {
            1
        } else if c.is_uppercase() {
            2
        } else if c.is_ascii_digit() {
            3
        } else {
            4
        }
    };
    let mut runs: Vec<Vec<char>> = Vec::new();
    let mut last = 0;
    for c in s.chars() {
        let k = class(c);
        match runs.last_mut() {
            Some(run) if k == last => run.push(c),
            _ => runs.push(vec![c]),
        }
        last = k;
    }
    for i in 0..runs.len().saturating_sub(1) {
        if runs[i][0].is_uppercase() && runs[i + 1][0].is_lowercase() {
            if let Some(moved) = runs[i].pop() {
                runs[i + 1].insert(0, moved);
            }
        }
    }
    runs.into_iter().filter(|r| !r.is_empty()).map(|r| r.into_iter().collect()).collect()
}

/// A JSON value as Go's `%v` writes what `encoding/json` decoded it to (integers as `int64`,
/// other numbers as `float64`).
pub fn go_value(v: &Value) -> String {
    match v {
        Value::Null => "<nil>".into(),
        Value::Bool(b) => b.to_string(),
        Value::String(s) => s.clone(),
        Value::Number(n) if n.is_i64() || n.is_u64() => n.to_string(),
        Value::Number(n) => go_float(n.as_f64().unwrap_or(0.0)),
        Value::Array(items) => format!("[{}]", items.iter().map(go_value).collect::<Vec<_>>().join(" ")),
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            format!("map[{}]", keys.iter().map(|k| format!("{k}:{}", go_value(&map[*k]))).collect::<Vec<_>>().join(" "))
        }
    }
}

/// Go's `%v` of a `float64` (`strconv`'s shortest `%g`): the shortest digits that read back
/// as the same number, with an exponent when it is below -4 or 6 and above (`1e+06`, `1e-05`,
/// `123456.5`).
fn go_float(f: f64) -> String {
    if f.is_nan() {
        return "NaN".into();
    }
    if f.is_infinite() {
        return if f > 0.0 { "+Inf".into() } else { "-Inf".into() };
    }
    if f == 0.0 {
        return "0".into();
    }
    // Rust's `{:e}` gives the shortest digits that read back as the same number.
    let sci = format!("{f:e}");
    let (mantissa, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    if !(-4..6).contains(&exp) {
        return go_exponent(mantissa, exp);
    }
    format!("{f}")
}

fn go_exponent(mantissa: &str, exp: i32) -> String {
    let sign = if exp < 0 { '-' } else { '+' };
    format!("{mantissa}e{sign}{:02}", exp.abs())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn labels_are_kubectls_words() {
        assert_eq!(label_for("apiVersion"), "API Version");
        assert_eq!(label_for("creationTimestamp"), "Creation Timestamp");
        assert_eq!(label_for("uid"), "UID");
        assert_eq!(label_for("specReplicasPath"), "Spec Replicas Path");
        assert_eq!(label_for("openAPIV3Schema"), "openAPIV3Schema", "a digit: left as it is");
        assert_eq!(label_for("HTMLParser"), "HTML Parser");
        assert_eq!(label_for("x-kubernetes-int"), "X - Kubernetes - Int");
    }

    #[test]
    fn values_are_gos_v() {
        assert_eq!(go_value(&json!(3)), "3");
        assert_eq!(go_value(&json!(1.5)), "1.5");
        assert_eq!(go_value(&json!(1e6)), "1e+06");
        assert_eq!(go_value(&json!(123456.5)), "123456.5");
        assert_eq!(go_value(&json!(0.00001)), "1e-05");
        assert_eq!(go_value(&json!(0.0001)), "0.0001");
        assert_eq!(go_value(&json!(null)), "<nil>");
        assert_eq!(go_value(&json!([1, "a", [true]])), "[1 a [true]]");
        assert_eq!(go_value(&json!({"b": 1, "a": "x"})), "map[a:x b:1]");
    }
}
