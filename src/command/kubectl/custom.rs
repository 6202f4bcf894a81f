//! `kubectl get` for the resources CustomResourceDefinitions serve: named by plural, singular,
//! kind or short name (discovery's names, `api::crd::Definitions::resolve`), printed with the
//! definition's `additionalPrinterColumns` as the API server's Table gives them (NAME, then each
//! column of priority 0; `-o wide` adds the others), or `NAME AGE` when it has none.

use super::get::{Format, Printer, Query, TableWatch};
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
#[inline(never)]
pub fn get(session: &mut Session, d: &Rc<Definition>, names: &[String], f: &Flags) -> CommandOutput {
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
    if f.bool("watch") || f.bool("watch-only") {
        if names.len() > 1 {
            return CommandOutput::err(format!(
                "error: watch is only supported on individual resources and resource collections, but {} resources were found",
                names.len()
            ));
        }
        let printer = Printer { format, with_namespace: all && d.namespaced, with_kind: false, custom: Some(d.clone()) };
        let query = Query { namespace: (d.namespaced && !all).then(|| ns.clone()), labels: labels_again(f), fields: Default::default() };
        let (printed, watch) = TableWatch::custom(session.sim(), printer, query, names.first().cloned(), &objects, f.bool("watch-only"));
        out.stdout = printed + &out.stdout;
        session.add_watch(crate::command::Watch::Table(watch));
        return out;
    }
    out.stdout = print(d, &objects, &format, all && d.namespaced, names.len() == 1, now) + &out.stdout;
    if objects.is_empty() && out.ok && matches!(format, Format::Table { .. } | Format::Name) && !f.bool("ignore-not-found") {
        out.note(&if all || !d.namespaced { "No resources found".to_string() } else { format!("No resources found in {ns} namespace.") });
    }
    out
}

/// The label selector again (it parsed once already, so it parses now).
fn labels_again(f: &Flags) -> Option<crate::model::LabelSelector> {
    f.str("selector").and_then(|s| parse_label_selector(s).ok())
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

/// A table's header line: NAME (after NAMESPACE with `-A`) and the printer columns.
fn header_line(d: &Definition, wide: bool, with_namespace: bool) -> String {
    let mut h = vec!["NAME".to_string()];
    h.extend(headers(d, wide));
    if with_namespace {
        h.insert(0, "NAMESPACE".into());
    }
    h.join("\t") + "\n"
}

/// The headers after NAME.
pub fn headers(d: &Definition, wide: bool) -> Vec<String> {
    columns(d).into_iter().filter(|(_, priority, _)| wide || *priority == 0).map(|(h, _, _)| h).collect()
}

fn print(d: &Definition, objects: &[Rc<Object>], format: &Format, with_namespace: bool, single: bool, now: Time) -> String {
    match format {
        Format::Name => objects.iter().map(|o| format!("{}/{}\n", d.kind_string(), o.meta().name)).collect(),
        // One object asked for by name and not found: kubectl prints only the error.
        Format::Json | Format::Yaml if single && objects.is_empty() => String::new(),
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
                w.write(&header_line(d, *wide, with_namespace));
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

/// `TYPE NAME...` or `TYPE/NAME...` naming objects of a custom resource, for `delete` and
/// `scale`: the keys with kubectl's name for the kind; `None` when the type is no resource a
/// definition serves.
#[inline(never)]
pub fn named(session: &Session, positional: &[String], ns: &str) -> Option<Result<Vec<(ObjectKey, String)>, String>> {
    let defs = session.sim().api().definitions();
    let first = positional.first()?;
    let pairs: Vec<(String, String)> = if first.contains('/') {
        positional.iter().map(|p| p.split_once('/').map(|(t, n)| (t.to_string(), n.to_string())).unwrap_or_default()).collect()
    } else {
        positional[1..].iter().map(|n| (first.clone(), n.clone())).collect()
    };
    let typed = if first.contains('/') { first.split('/').next().unwrap_or("") } else { first.as_str() };
    // A built-in type is never shadowed by a definition's names.
    if crate::command::resources::resolve(typed).is_ok() {
        return None;
    }
    defs.resolve(typed)?;
    let mut keys = Vec::new();
    for (typed, name) in pairs {
        let Some(d) = defs.resolve(&typed) else { return Some(Err(crate::command::resources::unknown_type(&typed))) };
        keys.push((ObjectKey::custom(&d.name, if d.namespaced { ns } else { "" }, &name), d.kind_string()));
    }
    Some(Ok(keys))
}

/// `kubectl scale` of custom objects, through their definition's scale subresource.
#[inline(never)]
pub fn scale(session: &mut Session, targets: Vec<(ObjectKey, String)>, replicas: i64, f: &Flags) -> CommandOutput {
    let mut out = CommandOutput::empty();
    for (key, kind) in targets {
        let Some(d) = session.sim().api().definitions().get(&key.resource).cloned() else { continue };
        let Some(live) = session.sim().api().get(&key).cloned() else {
            out.fail(&format!("error: no objects passed to scale {}", ApiError::not_found_named(&d.name, &key.name).message));
            continue;
        };
        let Some(o) = live.as_custom_object() else { continue };
        let version = o.api_version().split_once('/').map_or("", |(_, v)| v);
        let Some(paths) = d.served(version).and_then(|v| v.scale.clone()) else {
            out.fail(&format!("error: no scaler has been implemented for {{\"{}\" \"{}\"}}", d.group, d.kind));
            continue;
        };
        if let Some(expected) = f.int("current-replicas").filter(|c| *c >= 0) {
            let (current, _, _) = crate::api::crd::scale_of(o, &paths);
            if expected != current {
                out.fail(&format!("error: Expected replicas to be {expected}, was {current}"));
                continue;
            }
        }
        let next = crate::api::crd::rescaled(o, &paths, replicas);
        match crate::command::kubectl::submit(session, crate::api::ApiRequest::Update(Object::CustomObject(next))) {
            Ok(_) if f.str("output") == Some("name") => out.say(&format!("{kind}/{}", key.name)),
            Ok(_) => out.say(&format!("{kind}/{} scaled", key.name)),
            Err(e) => out.fail(&e.kubectl_message()),
        }
    }
    out
}

/// The objects of every resource whose definition puts it in `category` (`kubectl get all`),
/// each resource's table (or names) with kubectl's `TYPE/NAME` first column; only the resources
/// that have objects.
#[inline(never)]
pub fn in_category(
    session: &Session,
    category: &str,
    namespace: Option<&str>,
    labels: Option<&crate::model::LabelSelector>,
    format: &Format,
    now: Time,
) -> Vec<String> {
    let mut out = Vec::new();
    for d in session.sim().api().definitions().iter().filter(|d| d.established && d.categories.iter().any(|c| c == category)) {
        let request = ListRequest {
            kind: Some(Kind::CustomObject),
            resource: d.name.clone(),
            namespace: namespace.filter(|_| d.namespaced).map(str::to_string),
            labels: labels.cloned(),
            ..Default::default()
        };
        let ApiResponse::List { items, .. } = session.sim().api().list(&request) else { continue };
        if items.is_empty() {
            continue;
        }
        let with_namespace = namespace.is_none() && d.namespaced;
        let text = match format {
            Format::Table { wide, no_headers, .. } => {
                let mut w = TabWriter::for_tables();
                if !no_headers {
                    w.write(&header_line(d, *wide, with_namespace));
                }
                for o in &items {
                    let mut row = vec![format!("{}/{}", d.kind_string(), o.meta().name)];
                    row.extend(cells(d, o, now, *wide));
                    if with_namespace {
                        row.insert(0, o.meta().namespace.to_string());
                    }
                    w.write(&row.join("\t"));
                    w.write("\n");
                }
                w.take()
            }
            Format::Name => items.iter().map(|o| format!("{}/{}\n", d.kind_string(), o.meta().name)).collect(),
            // -o json|yaml of `all` with custom resources: printed as their own List.
            _ => print(d, &items, format, with_namespace, false, now),
        };
        out.push(text);
    }
    out
}
