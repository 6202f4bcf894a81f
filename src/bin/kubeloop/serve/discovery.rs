//! Discovery: what kube-apiserver says it serves, read from the one list of kinds
//! (`kubeloop::model::Kind::ALL` and each kind's `KindInfo`).
//!
//! Plain documents only (`APIVersions`, `APIGroupList`, `APIGroup`, `APIResourceList`): kubectl
//! asks for aggregated discovery first and accepts these, and answering aggregated discovery
//! badly is worse than not answering it.

use kubeloop::model::Kind;
use serde_json::{json, Value};

/// The Kubernetes version kubeloop's cluster claims (its kubelets report the same).
pub(crate) const KUBE_VERSION: &str = "v1.32.0";

/// Every verb a resource serves.
const VERBS: [&str; 8] = ["create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"];

/// The kinds whose objects have a status that the status subresource writes.
fn has_status(kind: Kind) -> bool {
    !matches!(
        kind,
        Kind::ConfigMap
            | Kind::Secret
            | Kind::Event
            | Kind::Lease
            | Kind::EndpointSlice
            | Kind::Endpoints
            | Kind::StorageClass
            | Kind::ControllerRevision
    )
}

/// The kinds with a scale subresource (autoscaling/v1 Scale).
pub(crate) fn has_scale(kind: Kind) -> bool {
    matches!(kind, Kind::Deployment | Kind::ReplicaSet | Kind::StatefulSet | Kind::ReplicationController)
}

pub(crate) fn version() -> Value {
    let minor = KUBE_VERSION.split('.').nth(1).unwrap_or_default();
    json!({
        "major": "1", "minor": minor, "gitVersion": KUBE_VERSION, "gitCommit": "kubeloop", "gitTreeState": "clean",
        "buildDate": "2026-01-01T00:00:00Z", "goVersion": "kubeloop", "compiler": "kubeloop",
        "platform": "linux/amd64",
    })
}

pub(crate) fn api_versions(address: &str) -> Value {
    json!({
        "kind": "APIVersions", "versions": ["v1"],
        "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": address}],
    })
}

/// The group versions a kind is served at: the one stored, and an older one that converts to it
/// (autoscaling/v1 HorizontalPodAutoscalers, `Kind::serves`).
pub(crate) fn api_versions_of(kind: Kind) -> Vec<&'static str> {
    let mut out = vec![kind.api_version()];
    if kind == Kind::HorizontalPodAutoscaler {
        out.push(kubeloop::model::autoscaling::V1);
    }
    out
}

fn gv(group: &str, version: &str) -> String {
    if group.is_empty() {
        version.to_string()
    } else {
        format!("{group}/{version}")
    }
}

/// The groups (not the core group) in the order of the kinds, each with its versions, the
/// preferred (stored) one first.
fn groups() -> Vec<(&'static str, Vec<&'static str>)> {
    let mut out: Vec<(&str, Vec<&str>)> = Vec::new();
    for kind in Kind::ALL {
        for api_version in api_versions_of(kind) {
            let Some((group, version)) = api_version.split_once('/') else { continue };
            match out.iter_mut().find(|(g, _)| *g == group) {
                Some((_, versions)) if !versions.contains(&version) => versions.push(version),
                Some(_) => {}
                None => out.push((group, vec![version])),
            }
        }
    }
    out
}

fn group_value(group: &str, versions: &[&str]) -> Value {
    let list: Vec<Value> = versions.iter().map(|v| json!({"groupVersion": gv(group, v), "version": v})).collect();
    json!({"name": group, "versions": list, "preferredVersion": list[0]})
}

pub(crate) fn group_list() -> Value {
    let groups: Vec<Value> = groups().iter().map(|(g, v)| group_value(g, v)).collect();
    json!({"kind": "APIGroupList", "apiVersion": "v1", "groups": groups})
}

pub(crate) fn group(name: &str) -> Option<Value> {
    let (g, v) = groups().into_iter().find(|(g, _)| *g == name)?;
    let mut value = group_value(g, &v);
    value["kind"] = "APIGroup".into();
    value["apiVersion"] = "v1".into();
    Some(value)
}

/// The kind a group version serves under a resource name (`pods`, `deployments`).
pub(crate) fn kind_of(group: &str, version: &str, plural: &str) -> Option<Kind> {
    Kind::ALL.into_iter().find(|k| k.plural() == plural && k.serves(&gv(group, version)))
}

/// Whether any kind is served in the group version.
pub(crate) fn serves(group: &str, version: &str) -> bool {
    Kind::ALL.into_iter().any(|k| k.serves(&gv(group, version)))
}

pub(crate) fn resource_list(group: &str, version: &str) -> Option<Value> {
    if !serves(group, version) {
        return None;
    }
    let mut resources = Vec::new();
    for kind in Kind::ALL.into_iter().filter(|k| k.serves(&gv(group, version))) {
        resources.push(resource(kind));
        for (sub, sub_kind, verbs) in subresources(kind) {
            let mut r = json!({
                "name": format!("{}/{sub}", kind.plural()), "singularName": "", "namespaced": kind.namespaced(),
                "kind": sub_kind, "verbs": verbs,
            });
            // Subresources that speak another group's kind say which (kubectl drain looks for
            // pods/eviction's group and version before it evicts rather than deletes).
            let other_group = match sub {
                "scale" => Some(("autoscaling", "v1")),
                "eviction" => Some(("policy", "v1")),
                _ => None,
            };
            if let Some((g, v)) = other_group {
                r["group"] = g.into();
                r["version"] = v.into();
            }
            resources.push(r);
        }
    }
    // kube-apiserver's installer lists a group version's paths sorted by name.
    resources.sort_by(|a, b| a["name"].as_str().cmp(&b["name"].as_str()));
    Some(json!({"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": gv(group, version), "resources": resources}))
}

fn resource(kind: Kind) -> Value {
    let info = kind.info();
    let verbs: Vec<&str> = VERBS.iter().copied().filter(|v| kind != Kind::Namespace || *v != "deletecollection").collect();
    let mut r = json!({
        "name": info.plural, "singularName": info.singular, "namespaced": info.namespaced, "kind": info.name, "verbs": verbs,
    });
    if !info.short_names.is_empty() {
        r["shortNames"] = json!(info.short_names);
    }
    if !info.categories.is_empty() {
        r["categories"] = json!(info.categories);
    }
    r
}

/// The subresources a kind serves: name, the kind it speaks, its verbs.
fn subresources(kind: Kind) -> Vec<(&'static str, &'static str, Vec<&'static str>)> {
    let mut out = Vec::new();
    if kind == Kind::Pod {
        out.push(("binding", "Binding", vec!["create"]));
        out.push(("eviction", "Eviction", vec!["create"]));
        out.push(("log", "Pod", vec!["get"]));
    }
    if kind == Kind::Namespace {
        out.push(("finalize", "Namespace", vec!["update"]));
    }
    if has_scale(kind) {
        out.push(("scale", "Scale", vec!["get", "patch", "update"]));
    }
    if has_status(kind) {
        out.push(("status", kind.info().name, vec!["get", "patch", "update"]));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_is_discoverable_under_its_group_version() {
        for kind in Kind::ALL.into_iter().filter(|k| k.is_named()) {
            let info = kind.info();
            assert_eq!(kind_of(info.group(), info.version(), info.plural), Some(kind));
            let list = resource_list(info.group(), info.version()).unwrap();
            let names: Vec<&str> = list["resources"].as_array().unwrap().iter().filter_map(|r| r["name"].as_str()).collect();
            assert!(names.contains(&info.plural), "{names:?}");
        }
        assert!(resource_list("apps", "v2").is_none());
        assert_eq!(kind_of("autoscaling", "v1", "horizontalpodautoscalers"), Some(Kind::HorizontalPodAutoscaler));
        assert_eq!(group("autoscaling").unwrap()["preferredVersion"]["version"], "v2");
        assert!(group("apps").is_some() && group("nope").is_none());
    }
}
