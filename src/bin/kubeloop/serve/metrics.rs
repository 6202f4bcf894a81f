//! `metrics.k8s.io/v1beta1`: what metrics-server reports in the simulation (`Sim::node_usage`,
//! `Sim::pod_usage`), as metrics-server's own API writes it, so that `kubectl top` works.
//!
//! metrics-server answers from its last scrape: each object carries the scrape's `timestamp`,
//! the `window` its rates cover, the object's labels, and a `creationTimestamp` of the moment
//! it was asked. CPU is written as metrics-server writes it (a nanocore quantity in canonical
//! form: `250m`, `1`, `0`). kubeloop models CPU use only; memory is reported as `0`, and every
//! answer carries a warning saying so, which kubectl prints.

use super::api::Query;
use super::body::Body;
use super::discovery::{METRICS_GROUP, METRICS_VERSION};
use super::filter::Filter;
use super::status::{failure, json_response, status};
use super::Cluster;
use hyper::Response;
use kubeloop::api::Reason;
use kubeloop::model::schema::{Describe, Field, Named, Schema, Struct};
use kubeloop::model::{Kind, LabelSelector, ObjectMeta, Quantity, StringMap, Time};
use kubeloop::sim::metrics::{NodeUsage, PodUsage};
use serde_json::{json, Value};

/// What a warning header says about memory.
const MEMORY_WARNING: &str = "299 - \"kubeloop simulates CPU use only: memory use reads 0\"";

/// A metrics path below `/apis/metrics.k8s.io/v1beta1`: the resource, namespace and name.
pub(crate) fn answer(cluster: &Cluster, rest: &[&str], query: &Query, accept: &str) -> Response<Body> {
    let (namespace, rest) = match rest {
        ["namespaces", ns, rest @ ..] => (Some(*ns), rest),
        rest => (None, rest),
    };
    let selector = match Filter::parse(Kind::Pod, None, query.get("labelSelector"), None) {
        Ok(f) => f.labels,
        Err(e) => return failure(Reason::BadRequest, &e),
    };
    let sim = cluster.session.sim();
    let now = sim.now();
    let table = super::table::wants_table(accept);
    let response = match (rest, namespace) {
        (["nodes"], None) => {
            let items: Vec<Value> = sim.node_usage().iter().filter(|n| admits(&selector, &n.labels)).map(|n| node(n, now)).collect();
            if table {
                json_response(200, &as_table(&items))
            } else {
                list("NodeMetricsList", items)
            }
        }
        (["nodes", name], None) => match sim.node_usage().iter().find(|n| n.name == *name) {
            Some(n) if table => json_response(200, &as_table(&[node(n, now)])),
            Some(n) => json_response(200, &with_kind(node(n, now), "NodeMetrics")),
            None => not_found("nodemetrics", name),
        },
        (["pods"], ns) => {
            let items: Vec<Value> = sim.pod_usage(ns).iter().filter(|p| admits(&selector, &p.labels)).map(|p| pod(p, now)).collect();
            if table {
                json_response(200, &as_table(&items))
            } else {
                list("PodMetricsList", items)
            }
        }
        (["pods", name], Some(ns)) => match sim.pod_usage(Some(ns)).iter().find(|p| p.name == *name) {
            Some(p) if table => json_response(200, &as_table(&[pod(p, now)])),
            Some(p) => json_response(200, &with_kind(pod(p, now), "PodMetrics")),
            None => not_found("podmetrics", &format!("{ns}/{name}")),
        },
        _ => failure(Reason::NotFound, "the server could not find the requested resource"),
    };
    warn(response)
}

/// `kubectl get nodemetrics|podmetrics`: the Table metrics-server prints — the name, each
/// resource's use (a pod's summed over its containers), the window — with no columns when there
/// are no rows, as metrics-server takes them from the first row.
fn as_table(items: &[Value]) -> Value {
    let usage = |item: &Value| -> Vec<(String, String)> {
        if let Some(usage) = item["usage"].as_object() {
            return usage.iter().map(|(k, v)| (k.clone(), v.as_str().unwrap_or_default().to_string())).collect();
        }
        // A pod: kubeloop's containers' CPU added up (in millicores), memory 0.
        let milli: i64 = item["containers"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|c| {
                let cpu = c["usage"]["cpu"].as_str().unwrap_or("0");
                cpu.strip_suffix('m').map_or_else(|| cpu.parse::<i64>().unwrap_or(0) * 1000, |m| m.parse().unwrap_or(0))
            })
            .sum();
        vec![("cpu".into(), cpu(milli)), ("memory".into(), "0".into())]
    };
    let mut columns = Vec::new();
    let rows: Vec<Value> = items
        .iter()
        .map(|item| {
            let used = usage(item);
            if columns.is_empty() {
                columns.push(
                    json!({"name": "Name", "type": "string", "format": "name", "description": "Name of the resource", "priority": 0}),
                );
                for (name, _) in &used {
                    columns.push(json!({"name": name, "type": "string", "format": "quantity", "description": "", "priority": 0}));
                }
                columns.push(json!({"name": "Window", "type": "string", "format": "duration", "description": "", "priority": 0}));
            }
            let mut cells = vec![item["metadata"]["name"].clone()];
            cells.extend(used.into_iter().map(|(_, v)| Value::String(v)));
            cells.push(item["window"].clone());
            let metadata = json!({"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1", "metadata": item["metadata"]});
            json!({"cells": cells, "object": metadata})
        })
        .collect();
    let columns = if columns.is_empty() { Value::Null } else { Value::Array(columns) };
    json!({"kind": "Table", "apiVersion": "meta.k8s.io/v1", "metadata": {}, "columnDefinitions": columns, "rows": rows})
}

fn admits(selector: &Option<LabelSelector>, labels: &StringMap) -> bool {
    selector.as_ref().is_none_or(|s| s.matches(labels))
}

fn warn(mut response: Response<Body>) -> Response<Body> {
    if let Ok(value) = MEMORY_WARNING.parse() {
        response.headers_mut().insert("Warning", value);
    }
    response
}

fn not_found(resource: &str, name: &str) -> Response<Body> {
    let details = json!({"name": name, "group": METRICS_GROUP, "kind": resource});
    status(404, "NotFound", &format!("{resource}.{METRICS_GROUP} \"{name}\" not found"), Some(details))
}

fn list(kind: &str, items: Vec<Value>) -> Response<Body> {
    json_response(200, &json!({"kind": kind, "apiVersion": api_version(), "metadata": {}, "items": items}))
}

fn api_version() -> String {
    format!("{METRICS_GROUP}/{METRICS_VERSION}")
}

fn with_kind(mut item: Value, kind: &str) -> Value {
    if let Some(map) = item.as_object_mut() {
        let rest = std::mem::take(map);
        map.insert("kind".into(), kind.into());
        map.insert("apiVersion".into(), api_version().into());
        map.extend(rest);
    }
    item
}

fn metadata(name: &str, namespace: Option<&str>, labels: &StringMap, now: Time) -> Value {
    let mut m = json!({"name": name});
    if let Some(ns) = namespace {
        m["namespace"] = ns.into();
    }
    m["creationTimestamp"] = now.rfc3339().into();
    if !labels.is_empty() {
        m["labels"] = json!(labels);
    }
    m
}

fn node(n: &NodeUsage, now: Time) -> Value {
    json!({
        "metadata": metadata(&n.name, None, &n.labels, now),
        "timestamp": n.timestamp.rfc3339(),
        "window": window(n.window.0),
        "usage": {"cpu": cpu(n.cpu_milli), "memory": "0"},
    })
}

fn pod(p: &PodUsage, now: Time) -> Value {
    let containers: Vec<Value> =
        p.containers.iter().map(|(name, milli)| json!({"name": name, "usage": {"cpu": cpu(*milli), "memory": "0"}})).collect();
    json!({
        "metadata": metadata(&p.name, Some(&p.namespace), &p.labels, now),
        "timestamp": p.timestamp.rfc3339(),
        "window": window(p.window.0),
        "containers": containers,
    })
}

/// Millicores as metrics-server writes a nanocore quantity: the canonical form, whole cores
/// without a suffix.
fn cpu(milli: i64) -> String {
    if milli % 1000 == 0 {
        (milli / 1000).to_string()
    } else {
        format!("{milli}m")
    }
}

/// A Go `time.Duration`'s text for whole or fractional seconds (`15s`, `1m0s`).
fn window(ms: u64) -> String {
    let (minutes, ms) = (ms / 60_000, ms % 60_000);
    let seconds = if ms % 1000 == 0 { format!("{}s", ms / 1000) } else { format!("{}s", ms as f64 / 1000.0) };
    if minutes > 0 {
        format!("{minutes}m{seconds}")
    } else {
        seconds
    }
}

/// The schemas of the objects above, for the OpenAPI documents (`kubectl explain nodemetrics`),
/// named as metrics-server names them.
pub(crate) fn schema(kind: &str) -> Option<Schema> {
    match kind {
        "NodeMetrics" => Some(named("NodeMetrics", "A node's resource use, as metrics-server last scraped it.", node_fields)),
        "PodMetrics" => Some(named("PodMetrics", "A pod's resource use, per container, as metrics-server last scraped it.", pod_fields)),
        _ => None,
    }
}

fn named(name: &'static str, description: &'static str, body: fn() -> Schema) -> Schema {
    Schema::Named(Named { package: "io.k8s.metrics.pkg.apis.metrics.v1beta1", name, description, body })
}

fn field(name: &'static str, description: &'static str, required: bool, schema: fn() -> Schema) -> Field {
    Field { name, description, required, schema, list: "", patch: "", format: "" }
}

fn object(fields: Vec<Field>) -> Schema {
    Schema::Object(Struct { fields })
}

fn usage() -> Schema {
    Schema::Map(Box::new(Quantity::schema()))
}

fn window_schema() -> Schema {
    Schema::Named(Named {
        package: "io.k8s.apimachinery.pkg.apis.meta.v1",
        name: "Duration",
        description: "A length of time, written as Go writes one (15s, 1m30s).",
        body: || Schema::Leaf("string", ""),
    })
}

fn common() -> Vec<Field> {
    vec![
        field(
            "metadata",
            "The object's name and namespace, the labels of what it measures, and when it was asked for.",
            false,
            ObjectMeta::schema,
        ),
        field("timestamp", "When the scrape the rates come from ended.", true, Time::schema),
        field("window", "How long the rates are measured over.", true, window_schema),
    ]
}

fn node_fields() -> Schema {
    let mut fields = common();
    fields.push(field("usage", "CPU (and, in kubeloop, a memory of 0) in use.", true, usage));
    object(fields)
}

fn pod_fields() -> Schema {
    let mut fields = common();
    fields.push(field("containers", "Each container's use.", true, || {
        Schema::Array(Box::new(named("ContainerMetrics", "One container's resource use.", || {
            object(vec![
                field("name", "The container's name.", true, String::schema),
                field("usage", "CPU (and, in kubeloop, a memory of 0) in use.", true, usage),
            ])
        })))
    }));
    object(fields)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantities_and_windows_read_as_metrics_server_writes_them() {
        assert_eq!(cpu(0), "0");
        assert_eq!(cpu(250), "250m");
        assert_eq!(cpu(2000), "2");
        assert_eq!(cpu(1500), "1500m");
        assert_eq!(window(15_000), "15s");
        assert_eq!(window(90_000), "1m30s");
        assert_eq!(window(10_500), "10.5s");
    }

    #[test]
    fn a_pods_row_adds_up_its_containers() {
        let item = json!({"metadata": {"name": "web"}, "window": "15s", "containers": [
            {"name": "a", "usage": {"cpu": "250m", "memory": "0"}},
            {"name": "b", "usage": {"cpu": "1", "memory": "0"}},
        ]});
        let t = as_table(&[item]);
        let columns: Vec<&str> = t["columnDefinitions"].as_array().unwrap().iter().map(|c| c["name"].as_str().unwrap()).collect();
        assert_eq!(columns, ["Name", "cpu", "memory", "Window"]);
        assert_eq!(t["rows"][0]["cells"], json!(["web", "1250m", "0", "15s"]));
        assert!(as_table(&[])["columnDefinitions"].is_null(), "no rows, no columns");
    }
}
