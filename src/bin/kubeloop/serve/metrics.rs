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
use kubeloop::model::{Kind, LabelSelector, StringMap, Time};
use kubeloop::sim::metrics::{NodeUsage, PodUsage};
use serde_json::{json, Value};

/// What a warning header says about memory.
const MEMORY_WARNING: &str = "299 - \"kubeloop simulates CPU use only: memory use reads 0\"";

/// A metrics path below `/apis/metrics.k8s.io/v1beta1`: the resource, namespace and name.
pub(crate) fn answer(cluster: &Cluster, rest: &[&str], query: &Query) -> Response<Body> {
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
    let response = match (rest, namespace) {
        (["nodes"], None) => {
            let items = sim.node_usage().iter().filter(|n| admits(&selector, &n.labels)).map(|n| node(n, now)).collect();
            list("NodeMetricsList", items)
        }
        (["nodes", name], None) => match sim.node_usage().iter().find(|n| n.name == *name) {
            Some(n) => json_response(200, &with_kind(node(n, now), "NodeMetrics")),
            None => not_found("nodemetrics", name),
        },
        (["pods"], ns) => {
            let items = sim.pod_usage(ns).iter().filter(|p| admits(&selector, &p.labels)).map(|p| pod(p, now)).collect();
            list("PodMetricsList", items)
        }
        (["pods", name], Some(ns)) => match sim.pod_usage(Some(ns)).iter().find(|p| p.name == *name) {
            Some(p) => json_response(200, &with_kind(pod(p, now), "PodMetrics")),
            None => not_found("podmetrics", &format!("{ns}/{name}")),
        },
        _ => failure(Reason::NotFound, "the server could not find the requested resource"),
    };
    warn(response)
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
}
