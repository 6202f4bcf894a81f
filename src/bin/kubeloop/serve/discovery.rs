//! Discovery: what kube-apiserver says it serves, read from the one list of kinds
//! (`kubeloop::model::Kind::ALL` and each kind's `KindInfo`).
//!
//! Both forms kube-apiserver 1.32 serves: the plain documents (`APIVersions`, `APIGroupList`,
//! `APIGroup`, `APIResourceList` per group version) and aggregated discovery (one
//! `APIGroupDiscoveryList` for `/api` and one for `/apis`, when the `Accept` header prefers it),
//! which lets kubectl learn every resource in two requests instead of one per group version. Both
//! are written from one table of resources (`resources`).

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

/// One resource a group version serves, as discovery describes it: the one table both forms of
/// discovery (the plain documents and the aggregated list) are written from. The kinds come from
/// `Kind::ALL`; other resources (metrics-server's) are rows of their own, and so can be any
/// resource known only at run time.
#[derive(Clone, Debug)]
pub(crate) struct Resource {
    pub(crate) group: String,
    pub(crate) version: String,
    pub(crate) plural: String,
    pub(crate) singular: String,
    pub(crate) kind: String,
    pub(crate) namespaced: bool,
    pub(crate) verbs: Vec<&'static str>,
    pub(crate) short_names: Vec<String>,
    pub(crate) categories: Vec<String>,
    pub(crate) subresources: Vec<Subresource>,
    /// Served for a CustomResourceDefinition: apiextensions-apiserver's aggregated discovery
    /// names the group and version in a response kind, where kube-apiserver's leaves them empty.
    pub(crate) custom: bool,
}

/// A subresource: its name, the kind it speaks (and that kind's group and version when another
/// group's), its verbs.
#[derive(Clone, Debug)]
pub(crate) struct Subresource {
    pub(crate) name: &'static str,
    pub(crate) kind: String,
    pub(crate) other_group: Option<(&'static str, &'static str)>,
    pub(crate) verbs: Vec<&'static str>,
}

pub(crate) use kubeloop::sim::metrics::{API_GROUP as METRICS_GROUP, API_VERSION as METRICS_VERSION};

/// Every resource served, in the order of the kinds, then metrics-server's.
pub(crate) fn resources() -> Vec<Resource> {
    let mut out = Vec::new();
    // Not the custom-object row: the definitions name those resources (`custom.rs`).
    for kind in Kind::ALL.into_iter().filter(|k| k.is_named()) {
        for api_version in api_versions_of(kind) {
            out.push(kind_resource(kind, api_version));
        }
    }
    for (plural, singular, kind, namespaced) in kubeloop::sim::metrics::RESOURCES {
        out.push(Resource {
            group: METRICS_GROUP.into(),
            version: METRICS_VERSION.into(),
            plural: plural.into(),
            singular: singular.into(),
            kind: kind.into(),
            namespaced,
            verbs: vec!["get", "list"],
            short_names: Vec::new(),
            categories: Vec::new(),
            subresources: Vec::new(),
            custom: false,
        });
    }
    out
}

fn kind_resource(kind: Kind, api_version: &str) -> Resource {
    let info = kind.info();
    let (group, version) = api_version.split_once('/').unwrap_or(("", api_version));
    Resource {
        group: group.into(),
        version: version.into(),
        plural: info.plural.into(),
        singular: info.singular.into(),
        kind: info.name.into(),
        namespaced: info.namespaced,
        verbs: VERBS.iter().copied().filter(|v| kind != Kind::Namespace || *v != "deletecollection").collect(),
        short_names: info.short_names.iter().map(|s| s.to_string()).collect(),
        categories: info.categories.iter().map(|s| s.to_string()).collect(),
        subresources: subresources(kind),
        custom: false,
    }
}

/// Every resource served at this moment: the built-in ones, then those the established
/// CustomResourceDefinitions serve (`custom`, from `custom::resources`), as kube-apiserver lists
/// apiextensions-apiserver's after its own.
fn all(custom: &[Resource]) -> Vec<Resource> {
    let mut out = resources();
    out.extend(custom.iter().cloned());
    out
}

/// The groups (not the core group) in the order of the resources, each with its versions, the
/// preferred one first.
fn groups(custom: &[Resource]) -> Vec<(String, Vec<String>)> {
    let mut out: Vec<(String, Vec<String>)> = Vec::new();
    for r in all(custom).into_iter().filter(|r| !r.group.is_empty()) {
        match out.iter_mut().find(|(g, _)| *g == r.group) {
            Some((_, versions)) if !versions.contains(&r.version) => versions.push(r.version),
            Some(_) => {}
            None => out.push((r.group, vec![r.version])),
        }
    }
    out
}

fn group_value(group: &str, versions: &[String]) -> Value {
    let list: Vec<Value> = versions.iter().map(|v| json!({"groupVersion": gv(group, v), "version": v})).collect();
    json!({"name": group, "versions": list, "preferredVersion": list[0]})
}

pub(crate) fn group_list(custom: &[Resource]) -> Value {
    let groups: Vec<Value> = groups(custom).iter().map(|(g, v)| group_value(g, v)).collect();
    json!({"kind": "APIGroupList", "apiVersion": "v1", "groups": groups})
}

pub(crate) fn group(name: &str, custom: &[Resource]) -> Option<Value> {
    let (g, v) = groups(custom).into_iter().find(|(g, _)| *g == name)?;
    let mut value = group_value(&g, &v);
    value["kind"] = "APIGroup".into();
    value["apiVersion"] = "v1".into();
    Some(value)
}

/// The kind a group version serves under a resource name (`pods`, `deployments`).
pub(crate) fn kind_of(group: &str, version: &str, plural: &str) -> Option<Kind> {
    Kind::ALL.into_iter().find(|k| k.plural() == plural && k.serves(&gv(group, version)))
}

/// Whether any resource is served in the group version.
pub(crate) fn serves(group: &str, version: &str) -> bool {
    resources().iter().any(|r| r.group == group && r.version == version)
}

/// A group version's resources, sorted by name as kube-apiserver's installer lists them.
fn resources_of(group: &str, version: &str, custom: &[Resource]) -> Vec<Resource> {
    let mut out: Vec<Resource> = all(custom).into_iter().filter(|r| r.group == group && r.version == version).collect();
    out.sort_by(|a, b| a.plural.cmp(&b.plural));
    out
}

pub(crate) fn resource_list(group: &str, version: &str, custom: &[Resource]) -> Option<Value> {
    let resources = resources_of(group, version, custom);
    if resources.is_empty() {
        return None;
    }
    let mut list = Vec::new();
    for r in resources {
        list.push(plain_resource(&r));
        for sub in &r.subresources {
            let mut v = json!({
                "name": format!("{}/{}", r.plural, sub.name), "singularName": "", "namespaced": r.namespaced,
                "kind": sub.kind, "verbs": sub.verbs,
            });
            // Subresources that speak another group's kind say which (kubectl drain looks for
            // pods/eviction's group and version before it evicts rather than deletes).
            if let Some((g, ver)) = sub.other_group {
                v["group"] = g.into();
                v["version"] = ver.into();
            }
            list.push(v);
        }
    }
    list.sort_by(|a, b| a["name"].as_str().cmp(&b["name"].as_str()));
    Some(json!({"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": gv(group, version), "resources": list}))
}

fn plain_resource(r: &Resource) -> Value {
    let mut v = json!({
        "name": r.plural, "singularName": r.singular, "namespaced": r.namespaced, "kind": r.kind, "verbs": r.verbs,
    });
    if !r.short_names.is_empty() {
        v["shortNames"] = json!(r.short_names);
    }
    if !r.categories.is_empty() {
        v["categories"] = json!(r.categories);
    }
    v
}

/// The aggregated discovery versions kube-apiserver 1.32 serves.
const AGGREGATED_VERSIONS: [&str; 2] = ["v2", "v2beta1"];

/// Which form of discovery an `Accept` header asks for: the first of its media types the server
/// serves, in the client's order — `Some(version)` for an `APIGroupDiscoveryList`, `None` for
/// the plain documents.
pub(crate) fn aggregated_version(accept: &str) -> Option<&'static str> {
    for media in accept.split(',') {
        let mut parts = media.split(';').map(str::trim);
        let essence = parts.next().unwrap_or_default();
        let params: Vec<(&str, &str)> = parts.filter_map(|p| p.split_once('=')).collect();
        let param = |name: &str| params.iter().find(|(k, _)| *k == name).map(|(_, v)| *v);
        if param("g") == Some("apidiscovery.k8s.io") && param("as") == Some("APIGroupDiscoveryList") && essence == "application/json" {
            if let Some(v) = AGGREGATED_VERSIONS.iter().find(|v| param("v") == Some(**v)) {
                return Some(v);
            }
            continue;
        }
        if param("as").is_none() && matches!(essence, "application/json" | "*/*" | "application/*") {
            return None;
        }
    }
    None
}

/// The media type of an aggregated answer.
pub(crate) fn aggregated_media_type(version: &str) -> String {
    format!("application/json;g=apidiscovery.k8s.io;v={version};as=APIGroupDiscoveryList")
}

/// `/api` (`core`) or `/apis` (every other group) as one `APIGroupDiscoveryList`: each group's
/// versions, preferred first, each with its resources as the plain documents list them.
pub(crate) fn aggregated(core: bool, version: &str, custom: &[Resource]) -> Value {
    let groups: Vec<(String, Vec<String>)> = if core { vec![(String::new(), vec!["v1".into()])] } else { groups(custom) };
    let items: Vec<Value> = groups
        .iter()
        .map(|(group, versions)| {
            let mut metadata = json!({"creationTimestamp": null});
            if !group.is_empty() {
                metadata["name"] = group.as_str().into();
            }
            let versions: Vec<Value> = versions
                .iter()
                .map(|v| {
                    let resources: Vec<Value> = resources_of(group, v, custom).iter().map(aggregated_resource).collect();
                    json!({"version": v, "resources": resources, "freshness": "Current"})
                })
                .collect();
            json!({"metadata": metadata, "versions": versions})
        })
        .collect();
    json!({
        "kind": "APIGroupDiscoveryList", "apiVersion": format!("apidiscovery.k8s.io/{version}"),
        "metadata": {}, "items": items,
    })
}

fn aggregated_resource(r: &Resource) -> Value {
    let scope = if r.namespaced { "Namespaced" } else { "Cluster" };
    let (group, version) = if r.custom { (r.group.as_str(), r.version.as_str()) } else { ("", "") };
    let mut v = json!({
        "resource": r.plural, "responseKind": {"group": group, "version": version, "kind": r.kind}, "scope": scope,
        "singularResource": r.singular, "verbs": r.verbs,
    });
    if !r.short_names.is_empty() {
        v["shortNames"] = json!(r.short_names);
    }
    if !r.categories.is_empty() {
        v["categories"] = json!(r.categories);
    }
    if !r.subresources.is_empty() {
        let mut subs: Vec<&Subresource> = r.subresources.iter().collect();
        subs.sort_by_key(|s| s.name);
        let subs: Vec<Value> = subs
            .iter()
            .map(|s| {
                let (g, ver) = s.other_group.unwrap_or((group, version));
                json!({"subresource": s.name, "responseKind": {"group": g, "version": ver, "kind": s.kind}, "verbs": s.verbs})
            })
            .collect();
        v["subresources"] = json!(subs);
    }
    v
}

/// The subresources a kind serves.
fn subresources(kind: Kind) -> Vec<Subresource> {
    let sub =
        |name, kind: &str, other_group, verbs: &[&'static str]| Subresource { name, kind: kind.into(), other_group, verbs: verbs.to_vec() };
    let mut out = Vec::new();
    if kind == Kind::Pod {
        out.push(sub("binding", "Binding", None, &["create"]));
        out.push(sub("eviction", "Eviction", Some(("policy", "v1")), &["create"]));
        out.push(sub("log", "Pod", None, &["get"]));
    }
    if kind == Kind::Namespace {
        out.push(sub("finalize", "Namespace", None, &["update"]));
    }
    if has_scale(kind) {
        out.push(sub("scale", "Scale", Some(("autoscaling", "v1")), &["get", "patch", "update"]));
    }
    if has_status(kind) {
        out.push(sub("status", kind.info().name, None, &["get", "patch", "update"]));
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
            let list = resource_list(info.group(), info.version(), &[]).unwrap();
            let names: Vec<&str> = list["resources"].as_array().unwrap().iter().filter_map(|r| r["name"].as_str()).collect();
            assert!(names.contains(&info.plural), "{names:?}");
        }
        assert!(resource_list("apps", "v2", &[]).is_none());
        assert_eq!(kind_of("autoscaling", "v1", "horizontalpodautoscalers"), Some(Kind::HorizontalPodAutoscaler));
        assert_eq!(group("autoscaling", &[]).unwrap()["preferredVersion"]["version"], "v2");
        assert!(group("apps", &[]).is_some() && group("nope", &[]).is_none());
    }

    /// Aggregated discovery says what the plain documents say, resource by resource.
    #[test]
    fn aggregated_discovery_lists_the_plain_documents_resources() {
        let mut groups = vec![(String::new(), vec!["v1".to_string()])];
        groups.extend(super::groups(&[]));
        let core = aggregated(true, "v2", &[]);
        let rest = aggregated(false, "v2", &[]);
        let items: Vec<&Value> = core["items"].as_array().unwrap().iter().chain(rest["items"].as_array().unwrap()).collect();
        assert_eq!(items.len(), groups.len());
        for (item, (group, versions)) in items.iter().zip(&groups) {
            assert_eq!(item["metadata"]["name"].as_str().unwrap_or_default(), group);
            let served: Vec<&str> = item["versions"].as_array().unwrap().iter().map(|v| v["version"].as_str().unwrap()).collect();
            assert_eq!(served, *versions, "{group}: preferred version first");
            for version in item["versions"].as_array().unwrap() {
                let v = version["version"].as_str().unwrap();
                let plain = resource_list(group, v, &[]).unwrap();
                let plain: Vec<&Value> = plain["resources"].as_array().unwrap().iter().collect();
                let mut from_aggregated = Vec::new();
                for r in version["resources"].as_array().unwrap() {
                    let name = r["resource"].as_str().unwrap();
                    let twin = plain.iter().find(|p| p["name"] == name).unwrap_or_else(|| panic!("{group}/{v} {name}"));
                    assert_eq!(r["verbs"], twin["verbs"], "{name}");
                    assert_eq!(r["responseKind"]["kind"], twin["kind"], "{name}");
                    assert_eq!(r["singularResource"], twin["singularName"], "{name}");
                    assert_eq!(r.get("shortNames"), twin.get("shortNames"), "{name}");
                    assert_eq!(r.get("categories"), twin.get("categories"), "{name}");
                    assert_eq!(r["scope"] == "Namespaced", twin["namespaced"] == true, "{name}");
                    from_aggregated.push(name.to_string());
                    for sub in r["subresources"].as_array().into_iter().flatten() {
                        let full = format!("{name}/{}", sub["subresource"].as_str().unwrap());
                        let twin = plain.iter().find(|p| p["name"] == full.as_str()).unwrap_or_else(|| panic!("{full}"));
                        assert_eq!(sub["verbs"], twin["verbs"], "{full}");
                        assert_eq!(sub["responseKind"]["kind"], twin["kind"], "{full}");
                        from_aggregated.push(full);
                    }
                }
                let plain_names: Vec<String> = plain.iter().map(|p| p["name"].as_str().unwrap().to_string()).collect();
                from_aggregated.sort();
                assert_eq!(from_aggregated, plain_names, "{group}/{v}");
            }
        }
        assert!(rest["items"].as_array().unwrap().iter().any(|g| g["metadata"]["name"] == "metrics.k8s.io"));
    }

    #[test]
    fn the_client_s_preferred_form_is_served() {
        let v2 = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList";
        let beta = "application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList";
        assert_eq!(aggregated_version(&format!("{v2},{beta},application/json")), Some("v2"));
        assert_eq!(aggregated_version(&format!("{beta},application/json")), Some("v2beta1"));
        assert_eq!(aggregated_version("application/json"), None);
        assert_eq!(aggregated_version(&format!("application/json,{v2}")), None, "plain JSON first");
        assert_eq!(aggregated_version("application/json;g=apidiscovery.k8s.io;v=v3;as=APIGroupDiscoveryList"), None);
        assert_eq!(aggregated_media_type("v2"), v2);
    }
}
