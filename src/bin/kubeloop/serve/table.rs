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

fn row(object: &Object, now: Time, include: Include) -> Value {
    let mut r = json!({"cells": printers::row(object, now, true)});
    match include {
        Include::None => {}
        // The metadata alone: serialising only it keeps a 3,000-pod Table cheap.
        Include::Metadata => {
            r["object"] = json!({
                "kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1",
                "metadata": serde_json::to_value(object.meta()).unwrap_or(Value::Null),
            });
        }
        Include::Object => r["object"] = printers::object_json(object),
    }
    r
}

/// A Table of objects.
pub(crate) fn table(kind: Kind, objects: &[&Object], now: Time, include: Include, list_meta: Value) -> Value {
    let rows: Vec<Value> = objects.iter().map(|o| row(o, now, include)).collect();
    json!({
        "kind": "Table", "apiVersion": "meta.k8s.io/v1", "metadata": list_meta,
        "columnDefinitions": column_definitions(kind), "rows": rows,
    })
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
        let t = table(Kind::Pod, &[&pod], Time(0), Include::Metadata, json!({}));
        let columns: Vec<&str> = t["columnDefinitions"].as_array().unwrap().iter().filter_map(|c| c["name"].as_str()).collect();
        assert_eq!(columns, printers::headers(Kind::Pod, true));
        assert_eq!(t["rows"][0]["cells"], json!(printers::row(&pod, Time(0), true)));
        assert_eq!(t["rows"][0]["object"]["metadata"], pod.to_json()["metadata"], "the metadata as the object carries it");
    }
}
