//! `/openapi/v3` (and `/openapi/v2`): the API's documents, which kubectl reads before `create -f`
//! and `apply -f`.
//!
//! What kubectl needs from them is to learn that the server validates fields itself: each group
//! version's document has, for every kind, a PATCH operation tagged with the kind
//! (`x-kubernetes-group-version-kind`) that takes the `fieldValidation` parameter, so kubectl
//! skips its client-side schema check and sends `fieldValidation=Strict` instead, which the
//! server answers (`api::unknown_fields`). The kinds' schemas are not served yet: `kubectl
//! explain` has nothing to read, and client-side apply uses the patch strategies compiled into
//! kubectl for built-in kinds. `/openapi/v2` is answered in JSON only; kubectl asks for it in
//! protobuf and, told 404, goes on without it.

use kubeloop::model::Kind;
use serde_json::{json, Map, Value};

/// A group version's path in `/openapi/v3` (`api/v1`, `apis/apps/v1`).
fn gv_path(api_version: &str) -> String {
    if api_version.contains('/') {
        format!("apis/{api_version}")
    } else {
        format!("api/{api_version}")
    }
}

/// Every (kind, group version) served.
fn served() -> Vec<(Kind, &'static str)> {
    Kind::ALL.into_iter().flat_map(|k| super::discovery::api_versions_of(k).into_iter().map(move |v| (k, v))).collect()
}

pub(crate) fn v2(accept: &str) -> Option<Value> {
    if accept.contains("protobuf") && !accept.contains("application/json") {
        return None;
    }
    Some(
        json!({"swagger": "2.0", "info": {"title": "Kubernetes", "version": super::discovery::KUBE_VERSION}, "paths": {}, "definitions": {}}),
    )
}

pub(crate) fn v3(path: &str) -> Option<Value> {
    if path.is_empty() {
        let mut paths = Map::new();
        for (_, api_version) in served() {
            let p = gv_path(api_version);
            paths.insert(p.clone(), json!({"serverRelativeURL": format!("/openapi/v3/{p}")}));
        }
        return Some(json!({"paths": paths}));
    }
    let kinds: Vec<(Kind, &str)> = served().into_iter().filter(|(_, v)| gv_path(v) == path).collect();
    if kinds.is_empty() {
        return None;
    }
    let mut paths = Map::new();
    for (kind, api_version) in kinds {
        let info = kind.info();
        let namespace = if info.namespaced { "namespaces/{namespace}/" } else { "" };
        let (group, version) = api_version.split_once('/').unwrap_or(("", api_version));
        let gvk = json!({"group": group, "version": version, "kind": info.name});
        let parameter = |name: &str| json!({"name": name, "in": "query", "schema": {"type": "string", "uniqueItems": true}});
        let operation = |verb: &str| {
            json!({
                "operationId": format!("{verb}{}", info.name),
                "x-kubernetes-action": verb,
                "x-kubernetes-group-version-kind": gvk,
                "parameters": [parameter("dryRun"), parameter("fieldManager"), parameter("fieldValidation")],
                "responses": {"200": {"description": "OK"}},
            })
        };
        paths.insert(format!("/{path}/{namespace}{}/{{name}}", info.plural), json!({"put": operation("put"), "patch": operation("patch")}));
        paths.insert(format!("/{path}/{namespace}{}", info.plural), json!({"post": operation("post")}));
    }
    Some(json!({
        "openapi": "3.0.0",
        "info": {"title": "Kubernetes", "version": super::discovery::KUBE_VERSION},
        "paths": paths,
        "components": {"schemas": {}},
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kinds_patch_takes_field_validation() {
        for kind in Kind::ALL.into_iter().filter(|k| k.is_named()) {
            let doc = v3(&gv_path(kind.api_version())).unwrap();
            let found = doc["paths"].as_object().unwrap().values().filter_map(|p| p.get("patch")).any(|op| {
                op["x-kubernetes-group-version-kind"]["kind"] == kind.info().name
                    && op["parameters"].as_array().unwrap().iter().any(|p| p["name"] == "fieldValidation")
            });
            assert!(found, "{kind:?}");
        }
        assert!(v3("apis/nope/v1").is_none());
        assert!(v3("").unwrap()["paths"]["apis/apps/v1"]["serverRelativeURL"].is_string());
    }
}
