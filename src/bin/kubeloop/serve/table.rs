//! Server-side printing: the `meta.k8s.io/v1` Table kubectl asks for (`Accept: …;as=Table`).
//!
//! The columns and cells are the console's own (`kubeloop::command::printers::columns` and
//! `row`), so the real kubectl prints what kubeloop's console prints: kubectl shows a Table's
//! priority-0 columns, and with `-o wide` all of them.

use kubeloop::command::printers;
use kubeloop::model::{Kind, Object, Time};
use serde_json::{json, Value};

/// What each row carries besides its cells (`includeObject`): kubectl reads the metadata for
/// `-A`'s NAMESPACE column, `--show-labels` and `-L`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Include {
    None,
    Metadata,
    Object,
}

impl Include {
    pub(crate) fn parse(text: Option<&str>) -> Result<Include, String> {
        match text.unwrap_or("Metadata") {
            "" | "Metadata" => Ok(Include::Metadata),
            "None" => Ok(Include::None),
            "Object" => Ok(Include::Object),
            other => Err(format!("includeObject: Unsupported value: {other:?}: supported values: \"Metadata\", \"None\", \"Object\"")),
        }
    }
}

/// Whether the client asked for a Table (the first acceptable type that names one).
pub(crate) fn wants_table(accept: &str) -> bool {
    accept.split(',').any(|t| {
        let params: Vec<&str> = t.split(';').map(str::trim).collect();
        params.contains(&"as=Table") && params.contains(&"g=meta.k8s.io") && params.first() == Some(&"application/json")
    })
}

fn column_definitions(kind: Kind) -> Vec<Value> {
    printers::columns(kind)
        .into_iter()
        .map(|(name, priority)| {
            let (type_, format) = match name {
                "NAME" => ("string", "name"),
                "AGE" => ("date", ""),
                _ => ("string", ""),
            };
            json!({"name": name, "type": type_, "format": format, "description": "", "priority": priority})
        })
        .collect()
}

/// One row, written straight as JSON text: a 3,000-pod Table is built in one pass, without a
/// `Value` per row (which was most of its cost).
fn write_row(out: &mut String, object: &Object, now: Time, include: Include) {
    out.push_str("{\"cells\":");
    out.push_str(&serde_json::to_string(&printers::row(object, now, true)).unwrap_or_default());
    match include {
        Include::None => {}
        Include::Metadata => {
            out.push_str(",\"object\":{\"kind\":\"PartialObjectMetadata\",\"apiVersion\":\"meta.k8s.io/v1\",\"metadata\":");
            out.push_str(&serde_json::to_string(object.meta()).unwrap_or_default());
            out.push('}');
        }
        Include::Object => {
            out.push_str(",\"object\":");
            out.push_str(&printers::object_json(object).to_string());
        }
    }
    out.push('}');
}

/// A Table of objects, as JSON text.
pub(crate) fn table(kind: Kind, objects: &[&Object], now: Time, include: Include, list_meta: &Value) -> String {
    let mut out = String::with_capacity(256 + objects.len() * 640);
    out.push_str("{\"kind\":\"Table\",\"apiVersion\":\"meta.k8s.io/v1\",\"metadata\":");
    out.push_str(&list_meta.to_string());
    out.push_str(",\"columnDefinitions\":");
    out.push_str(&Value::Array(column_definitions(kind)).to_string());
    out.push_str(",\"rows\":[");
    for (i, object) in objects.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        write_row(&mut out, object, now, include);
    }
    out.push_str("]}");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kubectls_accept_header_asks_for_a_table() {
        assert!(wants_table(
            "application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json"
        ));
        assert!(!wants_table("application/json"));
        assert!(!wants_table("application/vnd.kubernetes.protobuf;as=Table;v=v1;g=meta.k8s.io"));
    }

    #[test]
    fn a_tables_cells_are_the_consoles() {
        let mut pod = Object::empty(Kind::Pod);
        pod.meta_mut().name = "web".into();
        let text = table(Kind::Pod, &[&pod], Time(0), Include::Metadata, &json!({}));
        let t: Value = serde_json::from_str(&text).unwrap();
        let columns: Vec<&str> = t["columnDefinitions"].as_array().unwrap().iter().filter_map(|c| c["name"].as_str()).collect();
        assert_eq!(columns, printers::headers(Kind::Pod, true));
        assert_eq!(t["rows"][0]["cells"], json!(printers::row(&pod, Time(0), true)));
        assert_eq!(t["rows"][0]["object"]["metadata"], pod.to_json()["metadata"], "the metadata as the object carries it");
    }
}
