//! `kubectl get` for the resources CustomResourceDefinitions serve: named by plural, singular,
//! kind or short name (discovery's names, `api::crd::Definitions::resolve`), printed with the
//! definition's `additionalPrinterColumns` as the API server's Table gives them (NAME, then each
//! column of priority 0; `-o wide` adds the others), or `NAME AGE` when it has none.

use super::get::Format;
use super::namespace;
use crate::api::crd::{cell, Definition};
use crate::api::{ApiError, ApiResponse, ListRequest};
use crate::command::parse::Flags;
use crate::command::printers::{age, json_text, list_value, object_json};
use crate::command::selector::parse_label_selector;
use crate::command::table::TabWriter;
use crate::command::yaml::to_yaml;
use crate::command::{CommandOutput, Session};
use crate::model::{Kind, Object, ObjectKey, Time};
use std::rc::Rc;

/// `kubectl get TYPE [NAME...]` for a custom resource.
pub fn get(session: &Session, d: &Definition, names: &[String], f: &Flags) -> CommandOutput {
    let format = match Format::parse(f.str("output"), f) {
        Ok(v) => v,
        Err(e) => return CommandOutput::err(e),
    };
    let labels = match f.str("selector").map(parse_label_selector).transpose() {
        Ok(v) => v,
        Err(e) => return CommandOutput::err(e),
    };
    let all = f.bool("all-namespaces");
    let ns = if d.namespaced { namespace(f) } else { String::new() };
    let mut out = CommandOutput::empty();
    let objects: Vec<Rc<Object>> = if names.is_empty() {
        let request = ListRequest {
            kind: Some(Kind::CustomObject),
            resource: d.name.clone(),
            namespace: (d.namespaced && !all).then(|| ns.clone()),
            labels,
            ..Default::default()
        };
        match session.sim().api().list(&request) {
            ApiResponse::List { items, .. } => items,
            _ => Vec::new(),
        }
    } else {
        let mut found = Vec::new();
        for name in names {
            match session.sim().api().get(&ObjectKey::custom(&d.name, &ns, name)) {
                Some(o) => found.push(o.clone()),
                None if f.bool("ignore-not-found") => {}
                None => out.fail(&ApiError::not_found_named(&d.name, name).kubectl_message()),
            }
        }
        found
    };
    let now = session.sim().now();
    out.stdout = print(d, &objects, &format, all && d.namespaced, names.len() == 1, now) + &out.stdout;
    if objects.is_empty() && out.ok && matches!(format, Format::Table { .. } | Format::Name) && !f.bool("ignore-not-found") {
        out.note(&if all || !d.namespaced { "No resources found".to_string() } else { format!("No resources found in {ns} namespace.") });
    }
    out
}

/// The columns of the served version kubectl reads: `(header, priority, column)`.
fn columns(d: &Definition) -> Vec<(String, i64, Option<crate::api::crd::Column>)> {
    let declared = d.preferred().map(|v| v.columns.clone()).unwrap_or_default();
    if declared.is_empty() {
        return vec![("AGE".into(), 0, None)];
    }
    declared.into_iter().map(|c| (c.name.to_ascii_uppercase(), c.priority, Some(c))).collect()
}

/// A table row's cells after NAME.
pub fn cells(d: &Definition, object: &Object, now: Time, wide: bool) -> Vec<String> {
    let value = object_json(object);
    columns(d)
        .into_iter()
        .filter(|(_, priority, _)| wide || *priority == 0)
        .map(|(_, _, column)| match column {
            Some(c) => cell(&c, &value, now),
            None => age(object.meta().creation_timestamp, now),
        })
        .collect()
}

/// The headers after NAME.
pub fn headers(d: &Definition, wide: bool) -> Vec<String> {
    columns(d).into_iter().filter(|(_, priority, _)| wide || *priority == 0).map(|(h, _, _)| h).collect()
}

fn print(d: &Definition, objects: &[Rc<Object>], format: &Format, with_namespace: bool, single: bool, now: Time) -> String {
    match format {
        Format::Name => objects.iter().map(|o| format!("{}/{}\n", d.kind_string(), o.meta().name)).collect(),
        Format::Json | Format::Yaml => {
            let value = if single && objects.len() == 1 {
                object_json(&objects[0])
            } else {
                list_value(objects.iter().map(|o| object_json(o)).collect())
            };
            if *format == Format::Json {
                json_text(&value)
            } else {
                to_yaml(&value)
            }
        }
        Format::Table { wide, no_headers, .. } => {
            if objects.is_empty() {
                return String::new();
            }
            let mut w = TabWriter::for_tables();
            if !no_headers {
                let mut h = vec!["NAME".to_string()];
                h.extend(headers(d, *wide));
                if with_namespace {
                    h.insert(0, "NAMESPACE".into());
                }
                w.write(&h.join("\t"));
                w.write("\n");
            }
            for o in objects {
                let mut row = vec![o.meta().name.to_string()];
                row.extend(cells(d, o, now, *wide));
                if with_namespace {
                    row.insert(0, o.meta().namespace.to_string());
                }
                w.write(&row.join("\t"));
                w.write("\n");
            }
            w.take()
        }
    }
}
