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

/// `printUnstructuredContent`: each field in name order (a JSON map's keys come sorted, as Go's
/// `sort.Strings` sorts them), maps and lists opening a level of their own, scalars after a tab.
fn content_lines(w: &mut PrefixWriter, level: usize, content: &Map<String, Value>, prefix: &str) {
    for (field, value) in content {
        let path = format!("{prefix}.{field}");
        if SKIPPED.contains(&path.as_str()) {
            continue;
        }
        match value {
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
/// a letter or `-` is left as it is. Letters are ASCII here (Kubernetes' field names are): a name
/// with any other character is left as it is too, which keeps Unicode's case tables out of the
/// page.
pub fn label_for(field: &str) -> String {
    if field.bytes().any(|c| !c.is_ascii_alphabetic() && c != b'-') {
        return field.to_string();
    }
    const ACRONYMS: [&str; 5] = ["API", "URL", "UID", "OSB", "GUID"];
    camel_case_words(field)
        .into_iter()
        .map(|part| {
            let upper = part.to_ascii_uppercase();
            if ACRONYMS.contains(&upper.as_str()) {
                upper
            } else {
                part[..1].to_ascii_uppercase() + &part[1..]
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// Splits an ASCII name where its characters change class (lower case, upper case, other), an
/// upper-case run giving its last letter to a lower-case run after it (`HTMLParser`: "HTML",
/// "Parser"), as the camelcase package kubectl uses does.
fn camel_case_words(s: &str) -> Vec<&str> {
    let class = |c: u8| {
        if c.is_ascii_lowercase() {
            1
        } else if c.is_ascii_uppercase() {
            2
        } else {
            3
        }
    };
    let bytes = s.as_bytes();
    // Where each run starts.
    let mut starts: Vec<usize> = Vec::new();
    for i in 0..bytes.len() {
        if i == 0 || class(bytes[i]) != class(bytes[i - 1]) {
            starts.push(i);
        }
    }
    // An upper-case run followed by a lower-case run gives it its last letter (a run of one is
    // then empty, and dropped).
    for start in starts.iter_mut().skip(1) {
        if bytes[*start].is_ascii_lowercase() && bytes[*start - 1].is_ascii_uppercase() {
            *start -= 1;
        }
    }
    starts.push(bytes.len());
    starts.windows(2).map(|w| &s[w[0]..w[1]]).filter(|w| !w.is_empty()).collect()
}

/// A JSON value as Go's `%v` writes what `encoding/json` decoded it to (integers as `int64`,
/// other numbers as `float64`).
pub fn go_value(v: &Value) -> String {
    match v {
        Value::Null => "<nil>".into(),
        Value::Bool(b) => b.to_string(),
        Value::String(s) => s.clone(),
        Value::Number(n) if n.is_i64() || n.is_u64() => n.to_string(),
        Value::Number(n) => go_float(&n.to_string()),
        Value::Array(items) => format!("[{}]", items.iter().map(go_value).collect::<Vec<_>>().join(" ")),
        Value::Object(map) => format!("map[{}]", map.iter().map(|(k, v)| format!("{k}:{}", go_value(v))).collect::<Vec<_>>().join(" ")),
    }
}

/// Go's `%v` of a `float64` (`strconv`'s shortest `%g`): the shortest digits that read back as
/// the same number, with an exponent when it is below -4 or 6 and above (`1e+06`, `1e-05`,
/// `123456.5`). Read from serde_json's own shortest text of it (`1000000.0`, `1e-5`), so no
/// other float formatting is compiled in.
fn go_float(text: &str) -> String {
    let (sign, text) = match text.strip_prefix('-') {
        Some(rest) => ("-", rest),
        None => ("", text),
    };
    let (mantissa, exp) = match text.split_once(['e', 'E']) {
        Some((m, e)) => (m, e.parse::<i32>().unwrap_or(0)),
        None => (text, 0),
    };
    let (int, frac) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    // The significant digits and the decimal exponent of the first of them.
    let all = format!("{int}{frac}");
    let lead = all.bytes().take_while(|c| *c == b'0').count();
    let digits = all[lead..].trim_end_matches('0');
    if digits.is_empty() {
        return format!("{sign}0");
    }
    let exp = int.len() as i32 - 1 - lead as i32 + exp;
    if !(-4..6).contains(&exp) {
        let rest = if digits.len() > 1 { format!(".{}", &digits[1..]) } else { String::new() };
        let exp_sign = if exp < 0 { '-' } else { '+' };
        return format!("{sign}{}{rest}e{exp_sign}{:02}", &digits[..1], exp.abs());
    }
    if exp < 0 {
        return format!("{sign}0.{}{digits}", "0".repeat((-exp - 1) as usize));
    }
    let point = exp as usize + 1;
    if digits.len() <= point {
        format!("{sign}{digits}{}", "0".repeat(point - digits.len()))
    } else {
        format!("{sign}{}.{}", &digits[..point], &digits[point..])
    }
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
        assert_eq!(go_value(&json!(-2.5e-7)), "-2.5e-07");
        assert_eq!(go_value(&json!(1234567.0)), "1.234567e+06");
        assert_eq!(go_value(&json!(100.0)), "100");
        assert_eq!(go_value(&json!(0.0)), "0");
        assert_eq!(go_value(&json!(null)), "<nil>");
        assert_eq!(go_value(&json!([1, "a", [true]])), "[1 a [true]]");
        assert_eq!(go_value(&json!({"b": 1, "a": "x"})), "map[a:x b:1]");
    }
}
