//! What an operator's handler asks of the API, in the `kubernetes` client's words, turned into
//! the simulation's `ApiRequest`s; and the answers turned back into the JSON the client reads.
//!
//! One place resolves kopf's and the client's resource names — `(group, version, plural)` — to
//! what the API server stores (`resolve`): a built-in `Kind`, or a resource an established
//! CustomResourceDefinition serves (the custom-object kind keyed by the definition's name).

use crate::api::crd::{Definition, Definitions};
use crate::api::{ApiError, ApiRequest, ApiResponse, ApiResult, DeleteRequest, ListRequest, Reason};
use crate::model::{Kind, Object, ObjectKey};
use serde_json::{json, Map, Value};

/// A resource an operator names, resolved to what the API server serves: a built-in `Kind`,
/// or a custom resource (`Kind::CustomObject` and its definition's name, `plural.group`).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Resource {
    pub kind: Kind,
    /// The CustomResourceDefinition's name for a custom resource; empty for a built-in kind.
    pub custom: String,
    group: String,
    version: String,
    plural: String,
    kind_name: String,
    namespaced: bool,
}

impl Resource {
    fn builtin(kind: Kind) -> Resource {
        let info = kind.info();
        Resource {
            kind,
            custom: String::new(),
            group: info.group().to_string(),
            version: info.version().to_string(),
            plural: kind.plural().to_string(),
            kind_name: kind.as_str().to_string(),
            namespaced: kind.namespaced(),
        }
    }
    fn of_definition(d: &Definition, version: &str) -> Resource {
        Resource {
            kind: Kind::CustomObject,
            custom: d.name.to_string(),
            group: d.group.clone(),
            version: version.to_string(),
            plural: d.plural.clone(),
            kind_name: d.kind.clone(),
            namespaced: d.namespaced,
        }
    }
    pub fn namespaced(&self) -> bool {
        self.namespaced
    }
    /// `deployments.apps`, `websites.lessons.kubeloop.dev`, as the API server names it.
    pub fn qualified(&self) -> String {
        if self.custom.is_empty() {
            self.kind.qualified_plural()
        } else {
            self.custom.clone()
        }
    }
    pub fn group(&self) -> &str {
        &self.group
    }
    pub fn version(&self) -> &str {
        &self.version
    }
    pub fn plural(&self) -> &str {
        &self.plural
    }
    /// The group/version a body of this resource carries.
    pub fn api_version(&self) -> String {
        join(&self.group, &self.version)
    }
    pub fn kind_name(&self) -> &str {
        &self.kind_name
    }
    pub fn key(&self, namespace: &str, name: &str) -> ObjectKey {
        let namespace = if self.namespaced() { namespace } else { "" };
        if self.custom.is_empty() {
            ObjectKey::new(self.kind, namespace, name)
        } else {
            ObjectKey::custom(&self.custom, namespace, name)
        }
    }
    /// Whether an object of this key is one of this resource's.
    pub fn holds(&self, key: &ObjectKey) -> bool {
        key.kind == self.kind && *key.resource == *self.custom
    }
}

/// kopf's and the client's resource selector: a name (plural, singular, kind, short name, or
/// `plural.group`), with the group and version when given, among the built-in kinds and the
/// established CustomResourceDefinitions. Errors read as kopf's and kubectl's.
pub fn resolve(group: Option<&str>, version: Option<&str>, name: &str, definitions: &Definitions) -> Result<Resource, String> {
    let (name, dotted_group) = match name.split_once('.') {
        Some((n, g)) if group.is_none() => (n, Some(g)),
        _ => (name, None),
    };
    let group = group.or(dotted_group);
    let matches = |k: &Kind| {
        let info = k.info();
        let named = info.plural == name || info.singular == name || info.name == name || info.short_names.contains(&name);
        let in_group = group.is_none_or(|g| info.group() == g);
        let in_version = version.is_none_or(|v| info.version() == v || k.serves(&join(info.group(), v)));
        *k != Kind::CustomObject && named && in_group && in_version
    };
    if let Some(kind) = Kind::ALL.iter().find(|k| matches(k)) {
        return Ok(Resource::builtin(*kind));
    }
    let lower = name.to_ascii_lowercase();
    let custom = definitions.iter().find_map(|d| {
        let in_group = group.is_none_or(|g| d.group == g);
        let served = match version {
            Some(v) => d.served(v),
            None => d.preferred(),
        };
        (d.established && !d.terminating && in_group && d.is_named(&lower))
            .then_some(served)
            .flatten()
            .map(|v| Resource::of_definition(d, &v.name))
    });
    if let Some(found) = custom {
        return Ok(found);
    }
    // A group no built-in kind has: a custom resource whose definition is not served yet. As
    // kopf waits for such a resource, the operator watches `plural.group` and its handlers run
    // once the definition is established and objects appear (the name must be the plural).
    match group.filter(|g| !g.is_empty() && !Kind::ALL.iter().any(|k| k.info().group() == *g)) {
        Some(group) if name.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-') => Ok(Resource {
            kind: Kind::CustomObject,
            custom: format!("{name}.{group}"),
            group: group.to_string(),
            version: version.unwrap_or_default().to_string(),
            plural: name.to_string(),
            kind_name: String::new(),
            namespaced: true,
        }),
        _ => {
            let full =
                [group.unwrap_or(""), version.unwrap_or(""), name].iter().filter(|s| !s.is_empty()).copied().collect::<Vec<_>>().join("/");
            Err(format!("the server doesn't have a resource type {full:?} (kopf cannot serve a resource the API does not have)"))
        }
    }
}

/// The resource a client's request names (`group`, `version`, `plural`, as the client's URL
/// does): a built-in kind, else a custom resource named `plural.group`, which the API server
/// answers for (404 when no definition serves it). Its scope is the request's: a namespace
/// given means a namespaced resource.
fn requested(group: &str, version: Option<&str>, plural: &str, namespaced: bool) -> Option<Resource> {
    let mut resource = resolve(Some(group), version, plural, &Definitions::default()).ok()?;
    if !resource.custom.is_empty() {
        resource.namespaced = namespaced;
    }
    Some(resource)
}

fn join(group: &str, version: &str) -> String {
    if group.is_empty() {
        version.to_string()
    } else {
        format!("{group}/{version}")
    }
}

/// How a handler's request goes to the API server.
#[derive(Clone, Debug)]
pub enum Planned {
    /// One request; its answer is the client's.
    Send(Box<ApiRequest>),
    /// A patch: read the object, apply the patch to it, write it back (again from the read on a
    /// conflict, as kube-apiserver retries a patch against the newest version).
    Patch { key: ObjectKey, patch: Value, status: bool },
}

fn text<'a>(request: &'a Value, field: &str) -> Option<&'a str> {
    request.get(field).and_then(Value::as_str)
}

/// The `ApiRequest`(s) for one request message of the protocol, or the answer the client gets
/// at once (an unknown resource: 404, as from a URL the server does not serve).
pub fn plan(request: &Value) -> Result<Planned, Value> {
    let verb = text(request, "verb").unwrap_or_default();
    let plural = text(request, "plural").unwrap_or_default();
    let group = text(request, "group").filter(|g| !g.is_empty());
    let version = text(request, "version");
    let namespace = text(request, "namespace").unwrap_or("");
    let resource = requested(group.unwrap_or(""), version, plural, !namespace.is_empty())
        .ok_or_else(|| failure(&ApiError::new(Reason::NotFound, "the server could not find the requested resource")))?;
    let name = text(request, "name").unwrap_or("");
    let status = text(request, "subresource") == Some("status");
    let body = || {
        let mut body = request.get("body").cloned().unwrap_or(Value::Null);
        if !body.is_object() {
            return Err(failure(&ApiError::new(Reason::BadRequest, "the body of the request was in an unknown format")));
        }
        let map = body.as_object_mut().expect("checked");
        map.entry("apiVersion").or_insert_with(|| Value::from(resource.api_version()));
        if !resource.kind_name().is_empty() {
            map.entry("kind").or_insert_with(|| Value::from(resource.kind_name()));
        }
        let meta = map.entry("metadata").or_insert_with(|| json!({}));
        let Some(meta) = meta.as_object_mut() else {
            return Err(failure(&ApiError::new(Reason::BadRequest, "metadata must be an object")));
        };
        // kube-apiserver's checks of a body against its URL (`rest.BeforeCreate`, the update path).
        if resource.namespaced() && !namespace.is_empty() {
            match meta.get("namespace").and_then(Value::as_str) {
                Some(ns) if !ns.is_empty() && ns != namespace => {
                    return Err(failure(&ApiError::new(
                        Reason::BadRequest,
                        "the namespace of the provided object does not match the namespace sent on the request",
                    )))
                }
                _ => {
                    meta.insert("namespace".into(), Value::from(namespace));
                }
            }
        }
        if !name.is_empty() {
            match meta.get("name").and_then(Value::as_str) {
                Some(n) if n != name => {
                    return Err(failure(&ApiError::new(
                        Reason::BadRequest,
                        format!("the name of the object ({n}) does not match the name on the URL ({name})"),
                    )))
                }
                _ => {
                    meta.insert("name".into(), Value::from(name));
                }
            }
        }
        Ok(body)
    };
    let decode = |body: Value| decode_as(&resource, body).map_err(|e| failure(&e));
    Ok(match verb {
        "get" => Planned::Send(Box::new(ApiRequest::Get(resource.key(namespace, name)))),
        "list" => {
            let labels = match text(request, "label_selector") {
                Some(s) => {
                    Some(crate::command::selector::parse_label_selector(s).map_err(|e| failure(&ApiError::new(Reason::BadRequest, e)))?)
                }
                None => None,
            };
            let namespace = (!namespace.is_empty()).then(|| namespace.to_string());
            let list = ListRequest {
                kind: Some(resource.kind),
                resource: resource.custom.as_str().into(),
                namespace,
                labels,
                ..Default::default()
            };
            Planned::Send(Box::new(ApiRequest::List(list)))
        }
        "create" => Planned::Send(Box::new(ApiRequest::Create(decode(body()?)?))),
        "replace" if status => Planned::Send(Box::new(ApiRequest::UpdateStatus(decode(body()?)?))),
        "replace" => Planned::Send(Box::new(ApiRequest::Update(decode(body()?)?))),
        "delete" => {
            let mut delete = DeleteRequest::new(resource.key(namespace, name));
            delete.grace_period_seconds = request.get("grace_period_seconds").and_then(Value::as_i64);
            Planned::Send(Box::new(ApiRequest::Delete(delete)))
        }
        "patch" => {
            let patch = request.get("body").cloned().unwrap_or(Value::Null);
            if !patch.is_object() {
                // A JSON patch (a list of operations) is not modelled: refused, not guessed at.
                return Err(failure(&ApiError::new(
                    Reason::BadRequest,
                    "kubeloop's operator host applies merge patches (a dict body) only",
                )));
            }
            Planned::Patch { key: resource.key(namespace, name), patch, status }
        }
        other => return Err(failure(&ApiError::new(Reason::BadRequest, format!("unknown verb {other:?}")))),
    })
}

/// A body decoded as an object of `resource`: a custom object keeps its resource's name, so
/// the API server checks it against the definition that serves it.
fn decode_as(resource: &Resource, body: Value) -> Result<Object, ApiError> {
    if resource.custom.is_empty() {
        return Object::from_json(body).map_err(|e| ApiError::new(Reason::BadRequest, e));
    }
    let mut object = Object::custom_from_json(&body).map_err(|e| ApiError::new(Reason::BadRequest, e))?;
    if let Object::CustomObject(o) = &mut object {
        o.body.resource = resource.custom.as_str().into();
    }
    Ok(object)
}

/// RFC 7386 JSON merge patch: objects merge key by key, `null` removes, anything else replaces.
pub fn merge_patch(target: &mut Value, patch: &Value) {
    let Value::Object(patch) = patch else {
        *target = patch.clone();
        return;
    };
    if !target.is_object() {
        *target = Value::Object(Map::new());
    }
    let target = target.as_object_mut().expect("made an object");
    for (key, value) in patch {
        if value.is_null() {
            target.remove(key);
        } else {
            merge_patch(target.entry(key.clone()).or_insert(Value::Null), value);
        }
    }
}

/// Two merge patches as one: `later` wins, and its `null`s stay (they remove when applied).
pub fn compose(patch: &mut Value, later: &Value) {
    match (patch, later) {
        (Value::Object(p), Value::Object(l)) => {
            for (key, value) in l {
                match p.get_mut(key) {
                    Some(existing) if existing.is_object() && value.is_object() => compose(existing, value),
                    _ => {
                        p.insert(key.clone(), value.clone());
                    }
                }
            }
        }
        (p, l) => *p = l.clone(),
    }
}

/// The object a patch makes of `current`, ready to write back: the patch applied to its JSON,
/// keeping its resourceVersion as the write's precondition.
pub fn patched(current: &Object, patch: &Value) -> Result<Object, ApiError> {
    let mut json = current.to_json();
    let rv = json.pointer("/metadata/resourceVersion").cloned();
    merge_patch(&mut json, patch);
    if let (Some(rv), Some(meta)) = (rv, json.get_mut("metadata").and_then(Value::as_object_mut)) {
        meta.insert("resourceVersion".into(), rv);
    }
    match current {
        Object::CustomObject(o) => {
            let mut object = Object::custom_from_json(&json).map_err(|e| ApiError::new(Reason::BadRequest, e))?;
            if let Object::CustomObject(patched) = &mut object {
                patched.body.resource = o.body.resource.clone();
            }
            Ok(object)
        }
        _ => Object::from_json(json).map_err(|e| ApiError::new(Reason::BadRequest, e)),
    }
}

/// The protocol's answer to a request: the object or list as JSON, or the client's failure.
pub fn answer(result: &ApiResult) -> Value {
    match result {
        Ok(ApiResponse::Object(o)) => json!({"op": "answer", "ok": true, "body": o.to_json()}),
        Ok(ApiResponse::List { items, resource_version }) => {
            let kind = items
                .first()
                .map(|o| match o.as_ref() {
                    Object::CustomObject(c) => format!("{}List", c.kind()),
                    o => format!("{}List", o.kind().as_str()),
                })
                .unwrap_or_else(|| "List".into());
            let items: Vec<Value> = items.iter().map(|o| o.to_json()).collect();
            json!({"op": "answer", "ok": true, "body": {
                "apiVersion": "v1", "kind": kind, "metadata": {"resourceVersion": resource_version.to_string()}, "items": items
            }})
        }
        Ok(_) => json!({"op": "answer", "ok": true, "body": {}}),
        Err(e) => failure(e),
    }
}

/// A failed request as the client sees it: the HTTP status and kube-apiserver's `Status` body.
pub fn failure(error: &ApiError) -> Value {
    let code = if error.is_transport() { 0 } else { error.code() };
    json!({"op": "answer", "ok": false, "status": code, "body": {
        "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
        "message": error.message, "reason": error.reason.as_str(), "code": code
    }})
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kopf_selectors_resolve_to_the_kinds_the_server_serves() {
        let none = Definitions::default();
        assert_eq!(resolve(Some(""), Some("v1"), "pods", &none).unwrap().kind, Kind::Pod);
        assert_eq!(resolve(None, None, "pods", &none).unwrap().kind, Kind::Pod);
        assert_eq!(resolve(Some("apps"), Some("v1"), "deployments", &none).unwrap().kind, Kind::Deployment);
        assert_eq!(resolve(None, None, "deployments.apps", &none).unwrap().kind, Kind::Deployment);
        assert_eq!(resolve(None, Some("v1"), "configmaps", &none).unwrap().kind, Kind::ConfigMap);
        // A group that does not serve the plural is not it.
        assert!(resolve(Some("batch"), Some("v1"), "deployments", &none).is_err());
        // A group nothing built in has: a custom resource, watched until its definition comes.
        let pending = resolve(Some("example.com"), Some("v1"), "websites", &none).unwrap();
        assert_eq!((pending.kind, pending.custom.as_str()), (Kind::CustomObject, "websites.example.com"));
        let err = resolve(Some("apps"), Some("v1"), "websites", &none).unwrap_err();
        assert!(err.contains("apps/v1/websites"), "{err}");
    }

    #[test]
    fn a_merge_patch_merges_objects_and_removes_nulls() {
        let mut target = json!({"metadata": {"labels": {"a": "1", "b": "2"}}, "spec": {"replicas": 1}});
        merge_patch(&mut target, &json!({"metadata": {"labels": {"b": null, "c": "3"}}, "spec": {"replicas": 3}}));
        assert_eq!(target, json!({"metadata": {"labels": {"a": "1", "c": "3"}}, "spec": {"replicas": 3}}));
    }

    #[test]
    fn composed_patches_keep_their_removals() {
        let mut patch = json!({"metadata": {"labels": {"a": "1"}}});
        compose(&mut patch, &json!({"metadata": {"labels": {"b": null}, "annotations": {"x": null}}}));
        assert_eq!(patch, json!({"metadata": {"labels": {"a": "1", "b": null}, "annotations": {"x": null}}}));
    }

    #[test]
    fn a_body_must_agree_with_its_url() {
        let create = |ns: &str| {
            json!({"verb": "create", "group": "", "version": "v1", "plural": "configmaps", "namespace": "default",
            "body": {"metadata": {"name": "x", "namespace": ns}}})
        };
        let refused = plan(&create("other")).unwrap_err();
        assert_eq!(refused["status"], 400);
        assert_eq!(refused["body"]["message"], "the namespace of the provided object does not match the namespace sent on the request");
        let Ok(Planned::Send(request)) = plan(&create("")) else { panic!("a create") };
        assert!(matches!(*request, ApiRequest::Create(ref o) if &*o.meta().namespace == "default" && o.kind() == Kind::ConfigMap));
    }

    #[test]
    fn a_json_patch_body_is_refused_not_guessed() {
        let request = json!({"verb": "patch", "group": "", "version": "v1", "plural": "pods", "namespace": "default", "name": "x", "body": [{"op": "add"}]});
        let answer = plan(&request).unwrap_err();
        assert_eq!(answer["status"], 400);
    }
}
