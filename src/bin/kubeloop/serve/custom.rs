//! The resources CustomResourceDefinitions serve, over HTTP: their discovery (group, versions,
//! resources with short names, categories and subresources), their paths
//! (`/apis/GROUP/VERSION/[namespaces/NS/]PLURAL[/NAME[/status|scale]]`) and verbs, Tables with
//! the definition's `additionalPrinterColumns`, and watches.
//!
//! Built-in kinds come from the one table of kinds (`api.rs`, `discovery.rs`); these come from
//! the definitions the simulated API server holds at the moment of the request
//! (`ApiServer::definitions`), so a definition is served as soon as it is Established and stops
//! being served when it goes. Every write is an `ApiRequest` through `Sim::submit`, as for the
//! built-in kinds: the schema, defaults and pruning are the simulated API server's.

// A refusal is carried as the answer itself (`Err(Response)`), as in `api.rs`.
#![allow(clippy::result_large_err)]

use super::api::{patched, read_body, Query};
use super::body::Body;
use super::discovery::{Resource, Subresource};
use super::fields::managers::{self, Operation, Writer as FieldWriter};
use super::fields::Given;
use super::openapi::CustomSchema;
use super::status::{self, failure, json_response};
use super::table::{wants_table, Include};
use super::watch::Watcher;
use super::Cluster;
use hyper::http::request::Parts;
use hyper::{Method, Response};
use kubeloop::api::crd::{cell, rescaled, scale_of, Definition, Definitions};
use kubeloop::api::{ApiError, ApiRequest, ApiResponse, DeleteRequest, ListRequest, Reason};
use kubeloop::command::printers::{age, object_json};
use kubeloop::command::selector::FieldSelector;
use kubeloop::model::{Kind, LabelSelector, Object, ObjectKey, Time};
use serde_json::{json, Value};
use std::rc::Rc;
use std::time::{Duration, Instant};

/// What a custom resource path names.
pub(crate) struct Target {
    pub(crate) definition: Rc<Definition>,
    pub(crate) version: String,
    pub(crate) namespace: Option<String>,
    pub(crate) name: Option<String>,
    pub(crate) subresource: Option<String>,
}

impl Target {
    fn api_version(&self) -> String {
        format!("{}/{}", self.definition.group, self.version)
    }
    fn key(&self, name: &str) -> ObjectKey {
        ObjectKey::custom(&self.definition.name, self.namespace.as_deref().unwrap_or_default(), name)
    }
}

/// The resources the established definitions serve, one row per served version, for the one
/// table discovery writes both its forms from (`discovery.rs`). Versions come in the order of
/// their priority (`Definition::versions`), so a group's preferred version is its first.
pub(crate) fn resources(defs: &Definitions) -> Vec<Resource> {
    const VERBS: [&str; 8] = ["delete", "deletecollection", "get", "list", "patch", "create", "update", "watch"];
    let mut out = Vec::new();
    for d in defs.iter().filter(|d| d.established) {
        for v in d.versions.iter().filter(|v| v.served) {
            let mut subresources = Vec::new();
            if v.scale.is_some() {
                subresources.push(Subresource {
                    name: "scale",
                    kind: "Scale".into(),
                    other_group: Some(("autoscaling", "v1")),
                    verbs: vec!["get", "patch", "update"],
                });
            }
            if v.status {
                subresources.push(Subresource {
                    name: "status",
                    kind: d.kind.clone(),
                    other_group: None,
                    verbs: vec!["get", "patch", "update"],
                });
            }
            out.push(Resource {
                group: d.group.clone(),
                version: v.name.clone(),
                plural: d.plural.clone(),
                singular: d.singular.clone(),
                kind: d.kind.clone(),
                namespaced: d.namespaced,
                verbs: VERBS.to_vec(),
                short_names: d.short_names.clone(),
                categories: d.categories.clone(),
                subresources,
                custom: true,
            });
        }
    }
    out
}

/// Each served resource's `openAPIV3Schema`, read from its stored definition, for the OpenAPI
/// documents (`openapi.rs`).
pub(crate) fn schemas(api: &kubeloop::api::ApiServer) -> Vec<CustomSchema> {
    let mut out = Vec::new();
    for resource in resources(api.definitions()) {
        let name = format!("{}.{}", resource.plural, resource.group);
        let Some(crd) = api.get(&ObjectKey::new(Kind::CustomResourceDefinition, "", &name)).and_then(|o| o.as_custom_resource_definition())
        else {
            continue;
        };
        let versions = crd.spec().and_then(|s| s.get("versions")).and_then(Value::as_array);
        let version = versions.into_iter().flatten().find(|v| v.get("name").and_then(Value::as_str) == Some(&resource.version));
        if let Some(schema) = version.and_then(|v| v.pointer("/schema/openAPIV3Schema")) {
            out.push(CustomSchema { schema: schema.clone(), resource });
        }
    }
    out
}

/// The custom resource a path names, if any established definition serves it.
pub(crate) fn route(defs: &Definitions, path: &str) -> Option<Target> {
    let segments: Vec<&str> = path.trim_matches('/').split('/').filter(|s| !s.is_empty()).collect();
    let ["apis", group, version, rest @ ..] = segments.as_slice() else { return None };
    let namespaced = rest.len() >= 3 && rest[0] == "namespaces";
    let (namespace, rest) = if namespaced { (Some(rest[1].to_string()), &rest[2..]) } else { (None, rest) };
    let plural = rest.first()?;
    let definition =
        defs.iter().find(|d| d.established && d.group == *group && d.plural == *plural && d.served(version).is_some())?.clone();
    if rest.len() > 3 || (namespace.is_some() && !definition.namespaced) {
        return None;
    }
    Some(Target {
        definition,
        version: version.to_string(),
        namespace,
        name: rest.get(1).map(|s| s.to_string()),
        subresource: rest.get(2).map(|s| s.to_string()),
    })
}

/// The simulated API server's error, with the Status details kubectl reads (`Invalid` names the
/// kind, the others the resource).
fn api_error(d: &Definition, error: &ApiError, name: &str) -> Response<Body> {
    let mut details = json!({"group": d.group, "kind": if error.reason == Reason::Invalid { &d.kind } else { &d.plural }});
    if !name.is_empty() {
        details["name"] = name.into();
    }
    if !error.causes.is_empty() {
        details["causes"] = error.causes.iter().map(status::cause).collect();
    }
    status::status(error.code(), error.reason.as_str(), &error.message, Some(details))
}

fn header<'a>(parts: &'a Parts, name: &str) -> &'a str {
    parts.headers.get(name).and_then(|v| v.to_str().ok()).unwrap_or_default()
}

/// An object as the path's version writes it (strategy `None`: only `apiVersion` changes), with
/// its `managedFields`.
fn wire(cluster: &Cluster, t: &Target, object: &Object) -> Value {
    let mut v = bare(t, object);
    cluster.fields.borrow().annotate(object, &mut v);
    v
}

/// The object in the path's version, without `managedFields` (what a patch or an apply starts
/// from).
fn bare(t: &Target, object: &Object) -> Value {
    let mut v = object_json(object);
    v["apiVersion"] = t.api_version().into();
    v
}

pub(crate) fn respond(cluster: &mut Cluster, parts: &Parts, query: &Query, t: &Target, body: &[u8]) -> Response<Body> {
    // Whatever this request writes is written by its field manager, as for the built-in kinds.
    cluster.fields.borrow_mut().begin(writer(parts, query, t, Operation::Update));
    let response = respond_as(cluster, parts, query, t, body);
    cluster.fields.borrow_mut().end();
    response
}

/// Who a request writes as: its `fieldManager`, or its User-Agent's product name.
fn writer(parts: &Parts, query: &Query, t: &Target, operation: Operation) -> FieldWriter {
    FieldWriter {
        manager: super::fields::manager_of(query.get("fieldManager"), header(parts, "user-agent")),
        operation,
        api_version: t.api_version(),
        subresource: t.subresource.clone().unwrap_or_default(),
    }
}

fn respond_as(cluster: &mut Cluster, parts: &Parts, query: &Query, t: &Target, body: &[u8]) -> Response<Body> {
    if query.get("dryRun").is_some_and(|d| !d.is_empty()) {
        return failure(Reason::BadRequest, "dryRun is not modelled by kubeloop: the request would change the simulated cluster");
    }
    let accept = header(parts, "accept");
    let method = &parts.method;
    match (method, t.name.as_deref(), t.subresource.as_deref()) {
        (&Method::GET, None, None) if matches!(query.get("watch"), Some("true" | "1")) => watch(cluster, query, t, accept),
        (&Method::GET, None, None) => list(cluster, query, t, accept),
        (&Method::GET, Some(name), None | Some("status")) => get(cluster, t, name, accept),
        (&Method::POST, None, None) => write(cluster, parts, t, None, body, Write::Create),
        (&Method::PUT, Some(name), None) => write(cluster, parts, t, Some(name), body, Write::Update),
        (&Method::PUT, Some(name), Some("status")) => write(cluster, parts, t, Some(name), body, Write::Status),
        (&Method::PATCH, Some(name), None) if is_apply(parts) => apply(cluster, parts, query, t, name, body),
        (&Method::PATCH, Some(_), Some("status")) if is_apply(parts) => failure(
            Reason::BadRequest,
            "server-side apply to a custom resource's status subresource is not modelled by kubeloop: patch or update the status instead",
        ),
        (&Method::PATCH, Some(name), None) => patch(cluster, parts, t, name, body, Write::Update),
        (&Method::PATCH, Some(name), Some("status")) => patch(cluster, parts, t, name, body, Write::Status),
        (&Method::DELETE, Some(name), None) => delete(cluster, t, name),
        (_, Some(name), Some("scale")) => scale(cluster, parts, t, name, body),
        (_, _, Some(_)) => failure(Reason::NotFound, "the server could not find the requested resource"),
        _ => status::status(
            405,
            "MethodNotAllowed",
            &format!("the server does not allow this method on the requested resource ({method})"),
            None,
        ),
    }
}

fn current(cluster: &mut Cluster, t: &Target, name: &str) -> Result<Rc<Object>, Response<Body>> {
    match cluster.session.sim_mut().submit(ApiRequest::Get(t.key(name))) {
        Ok(ApiResponse::Object(o)) => Ok(o),
        Ok(_) => Err(failure(Reason::InternalError, "unexpected answer")),
        Err(e) => Err(api_error(&t.definition, &e, name)),
    }
}

fn get(cluster: &mut Cluster, t: &Target, name: &str, accept: &str) -> Response<Body> {
    match current(cluster, t, name) {
        Ok(o) if wants_table(accept) => {
            let meta = json!({"resourceVersion": o.meta().resource_version.to_string()});
            json_response(200, &table(t, &[&o], cluster.session.sim().now(), Include::Metadata, &meta))
        }
        Ok(o) => json_response(200, &wire(cluster, t, &o)),
        Err(r) => r,
    }
}

/// The request's label and field selectors. A custom resource's objects are selected by
/// `metadata.name` and `metadata.namespace` only (a definition's `selectableFields` are not
/// modelled), with kube-apiserver's message for any other field.
fn selectors(t: &Target, query: &Query) -> Result<(Option<LabelSelector>, FieldSelector), Response<Body>> {
    let resource = format!("{}, Resource={}", t.api_version(), t.definition.plural);
    let filter = super::filter::Filter::parse_custom(&resource, query.get("labelSelector"), query.get("fieldSelector"));
    filter.map(|f| (f.labels, f.fields)).map_err(|e| failure(Reason::BadRequest, &e))
}

fn list(cluster: &mut Cluster, query: &Query, t: &Target, accept: &str) -> Response<Body> {
    let (labels, fields) = match selectors(t, query) {
        Ok(s) => s,
        Err(r) => return r,
    };
    let include = match Include::parse(query.get("includeObject")) {
        Ok(i) => i,
        Err(e) => return failure(Reason::BadRequest, &e),
    };
    let request = ListRequest {
        kind: Some(Kind::CustomObject),
        resource: t.definition.name.clone(),
        namespace: t.namespace.clone(),
        labels,
        ..Default::default()
    };
    let (items, revision) = match cluster.session.sim_mut().submit(ApiRequest::List(request)) {
        Ok(ApiResponse::List { items, resource_version }) => (items, resource_version),
        Ok(_) => return failure(Reason::InternalError, "unexpected answer"),
        Err(e) => return api_error(&t.definition, &e, ""),
    };
    let items: Vec<Rc<Object>> =
        items.into_iter().filter(|o| fields == FieldSelector::default() || fields.matches(&object_json(o))).collect();
    let meta = json!({"resourceVersion": revision.to_string()});
    if wants_table(accept) {
        let rows: Vec<&Object> = items.iter().map(|o| o.as_ref()).collect();
        return json_response(200, &table(t, &rows, cluster.session.sim().now(), include, &meta));
    }
    let items: Vec<Value> = items.iter().map(|o| wire(cluster, t, o)).collect();
    json_response(200, &json!({"kind": t.definition.list_kind, "apiVersion": t.api_version(), "metadata": meta, "items": items}))
}

/// The Table apiextensions-apiserver's convertor gives: NAME, then the served version's
/// printer columns (or AGE when it has none).
pub(crate) fn table(t: &Target, objects: &[&Object], now: Time, include: Include, meta: &Value) -> Value {
    table_of(&t.definition, &t.version, objects, now, include, meta)
}

pub(crate) fn table_of(d: &Definition, version: &str, objects: &[&Object], now: Time, include: Include, meta: &Value) -> Value {
    let columns = d.served(version).map(|v| v.columns.clone()).unwrap_or_default();
    let mut definitions = vec![json!({"name": "Name", "type": "string", "format": "name", "description": "", "priority": 0})];
    if columns.is_empty() {
        definitions.push(json!({"name": "Age", "type": "date", "format": "", "description": "", "priority": 0}));
    }
    for c in &columns {
        definitions.push(json!({"name": c.name, "type": c.type_, "format": "", "description": "", "priority": c.priority}));
    }
    let rows: Vec<Value> = objects
        .iter()
        .map(|o| {
            let value = object_json(o);
            let mut cells = vec![Value::String(o.meta().name.to_string())];
            if columns.is_empty() {
                cells.push(age(o.meta().creation_timestamp, now).into());
            }
            cells.extend(columns.iter().map(|c| typed_cell(c, cell(c, &value, now))));
            let object = match include {
                Include::None => Value::Null,
                Include::Metadata => {
                    json!({"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1", "metadata": value["metadata"]})
                }
                Include::Object => value,
            };
            if object.is_null() {
                json!({"cells": cells})
            } else {
                json!({"cells": cells, "object": object})
            }
        })
        .collect();
    json!({"kind": "Table", "apiVersion": "meta.k8s.io/v1", "metadata": meta, "columnDefinitions": definitions, "rows": rows})
}

/// A cell as the server's Table carries it: numbers and booleans as JSON numbers and booleans
/// (kubectl prints them as it prints text), the rest as text.
fn typed_cell(column: &kubeloop::api::crd::Column, text: String) -> Value {
    let typed = match column.type_.as_str() {
        "integer" => text.parse::<i64>().ok().map(Value::from),
        "number" => text.parse::<f64>().ok().and_then(|f| serde_json::Number::from_f64(f).map(Value::Number)),
        "boolean" => text.parse::<bool>().ok().map(Value::Bool),
        _ => None,
    };
    typed.unwrap_or(Value::String(text))
}

#[derive(Clone, Copy, PartialEq)]
enum Write {
    Create,
    Update,
    Status,
}

/// The body as an object of the path's resource, in the path's namespace.
fn decode(t: &Target, mut value: Value) -> Result<Object, Response<Body>> {
    if !value.is_object() {
        return Err(failure(Reason::BadRequest, "couldn't get version/kind; json parse error: the body is not a JSON object"));
    }
    let api_version = value.get("apiVersion").and_then(Value::as_str).unwrap_or_default().to_string();
    let kind = value.get("kind").and_then(Value::as_str).unwrap_or_default().to_string();
    if api_version.is_empty() || kind.is_empty() {
        value["apiVersion"] = t.api_version().into();
        value["kind"] = t.definition.kind.clone().into();
    } else if api_version != t.api_version() {
        let message = format!("the API version in the data ({api_version}) does not match the expected API version ({})", t.api_version());
        return Err(failure(Reason::BadRequest, &message));
    } else if kind != t.definition.kind {
        return Err(failure(
            Reason::BadRequest,
            &format!("the kind in the data ({kind}) does not match the expected kind ({})", t.definition.kind),
        ));
    }
    if let Some(ns) = &t.namespace {
        let given = value.pointer("/metadata/namespace").and_then(Value::as_str).unwrap_or_default();
        if !given.is_empty() && given != ns {
            return Err(failure(
                Reason::BadRequest,
                "the namespace of the provided object does not match the namespace sent on the request",
            ));
        }
        if !value.get("metadata").is_some_and(Value::is_object) {
            value["metadata"] = json!({});
        }
        value["metadata"]["namespace"] = ns.clone().into();
    } else if t.definition.namespaced {
        return Err(failure(Reason::BadRequest, "the namespace of the object is missing from the request path"));
    }
    let mut object = Object::custom_from_json(&value).map_err(|e| failure(Reason::BadRequest, &e))?;
    if let Object::CustomObject(o) = &mut object {
        o.body.resource = t.definition.name.clone();
    }
    Ok(object)
}

fn write(cluster: &mut Cluster, parts: &Parts, t: &Target, name: Option<&str>, body: &[u8], how: Write) -> Response<Body> {
    let value = match read_body(parts, body) {
        Ok(v) => v,
        Err(r) => return r,
    };
    let given = given(cluster, t, name, &value, how);
    match decode(t, value) {
        Ok(object) => submit(cluster, t, name, object, how, given),
        Err(r) => r,
    }
}

/// What an update of the main resource says about `managedFields` (kube-apiserver's
/// `decodeLiveOrNew`, as for the built-in kinds): entries that differ from the stored ones are
/// the client's to set.
fn given(cluster: &Cluster, t: &Target, name: Option<&str>, written: &Value, how: Write) -> Option<Given> {
    let current = cluster.session.sim().api().get(&t.key(name?)).filter(|_| how == Write::Update)?;
    cluster.fields.borrow().read_given(current, written, cluster.session.sim().now())
}

fn submit(cluster: &mut Cluster, t: &Target, name: Option<&str>, object: Object, how: Write, given: Option<Given>) -> Response<Body> {
    if let Some(name) = name.filter(|n| *n != object.meta().name.as_str()) {
        let message = format!("the name of the object ({}) does not match the name on the URL ({name})", object.meta().name);
        return failure(Reason::BadRequest, &message);
    }
    let shown = object.meta().name.to_string();
    let key = object.key();
    let (request, code) = match how {
        Write::Create => (ApiRequest::Create(object), 201),
        Write::Update => (ApiRequest::Update(object), 200),
        Write::Status => (ApiRequest::UpdateStatus(object), 200),
    };
    let settle = given.is_some();
    if let Some(given) = given {
        cluster.fields.borrow_mut().begin_given(given);
    }
    let result = cluster.session.sim_mut().submit(request);
    // An update that changed no field wrote nothing, yet its managed fields are the client's.
    if settle && result.is_ok() {
        if let Some(stored) = cluster.session.sim().api().get(&key).cloned() {
            cluster.fields.borrow_mut().settle_given(&stored);
        }
    }
    match result {
        Ok(ApiResponse::Object(o)) => json_response(code, &wire(cluster, t, &o)),
        Ok(_) => failure(Reason::InternalError, "unexpected answer"),
        Err(e) => api_error(&t.definition, &e, &shown),
    }
}

/// Custom resources take JSON merge and JSON patches; a strategic merge patch needs Go types'
/// merge keys, which they have none of, and is refused as kube-apiserver refuses it.
fn patch(cluster: &mut Cluster, parts: &Parts, t: &Target, name: &str, body: &[u8], how: Write) -> Response<Body> {
    if header(parts, "content-type").starts_with("application/strategic-merge-patch+json") {
        return status::status(
            415,
            "UnsupportedMediaType",
            "the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml",
            None,
        );
    }
    let live = match current(cluster, t, name) {
        Ok(o) => o,
        Err(r) => return r,
    };
    // The document patched has the object's managedFields, which a patch may set.
    let value = match patched(parts, body, Kind::CustomObject, &wire(cluster, t, &live)) {
        Ok(v) => v,
        Err(r) => return r,
    };
    let given = given(cluster, t, Some(name), &value, how);
    match decode(t, value) {
        Ok(object) => submit(cluster, t, Some(name), object, how, given),
        Err(r) => r,
    }
}

fn is_apply(parts: &Parts) -> bool {
    super::patch::PatchType::from_content_type(header(parts, "content-type")) == Some(super::patch::PatchType::Apply)
}

/// Schema extensions that change how server-side apply merges and owns a field, which the field
/// manager reads only from the built-in kinds' schemas: a custom resource whose schema uses one
/// is refused an apply rather than tracked as if its lists were atomic.
fn merge_extension(schema: &Value) -> Option<String> {
    match schema {
        Value::Object(map) => {
            for (k, v) in map {
                let found = match k.as_str() {
                    "x-kubernetes-list-type" => v.as_str().filter(|t| *t != "atomic").map(|t| format!("{k}: {t}")),
                    "x-kubernetes-map-type" => v.as_str().filter(|t| *t == "atomic").map(|t| format!("{k}: {t}")),
                    _ => merge_extension(v),
                };
                if found.is_some() {
                    return found;
                }
            }
            None
        }
        Value::Array(items) => items.iter().find_map(merge_extension),
        _ => None,
    }
}

/// Server-side apply of a custom object (`PATCH` with `application/apply-patch+yaml`): the
/// configuration merged into the live object (or creating it) by its field manager, conflicts
/// refused unless `force`, then written through the simulated API server with the entries the
/// apply computed — the built-in kinds' apply (`api.rs`), with a custom schema's defaults for
/// merging: lists atomic, objects field by field.
fn apply(cluster: &mut Cluster, parts: &Parts, query: &Query, t: &Target, name: &str, body: &[u8]) -> Response<Body> {
    if query.get("fieldManager").is_none_or(str::is_empty) {
        let details = json!({"group": "meta.k8s.io", "kind": "PatchOptions",
            "causes": [{"reason": "FieldValueRequired", "message": "Required value: is required for apply patch", "field": "fieldManager"}]});
        let message = "PatchOptions.meta.k8s.io \"\" is invalid: fieldManager: Required value: is required for apply patch";
        return status::status(422, "Invalid", message, Some(details));
    }
    let schemas = schemas(cluster.session.sim().api());
    let raw = schemas
        .iter()
        .find(|s| s.resource.plural == t.definition.plural && s.resource.group == t.definition.group && s.resource.version == t.version);
    if let Some(found) = raw.and_then(|s| merge_extension(&s.schema)) {
        let message = format!(
            "server-side apply is not modelled by kubeloop for a custom resource whose schema sets {found}: use kubectl apply without --server-side, or patch"
        );
        return failure(Reason::BadRequest, &message);
    }
    let config = match super::api::apply_configuration_of(body, &t.api_version(), &t.definition.kind) {
        Ok(v) => v,
        Err(r) => return r,
    };
    let live = cluster.session.sim().api().get(&t.key(name)).cloned();
    let live_json = live.as_ref().map(|o| bare(t, o));
    let entries = live.as_ref().map(|o| cluster.fields.borrow().entries(o).to_vec()).unwrap_or_default();
    let writer = writer(parts, query, t, Operation::Apply);
    let now = cluster.session.sim().now();
    let (merged, entries) =
        match managers::apply(Kind::CustomObject, &entries, live_json.as_ref(), &config, &writer, query.flag("force"), now) {
            Ok(done) => done,
            Err(conflicts) => {
                let (message, causes) = managers::conflict_status(&conflicts);
                return status::status(409, "Conflict", &message, Some(json!({"causes": causes})));
            }
        };
    let object = match decode(t, merged) {
        Ok(o) => o,
        Err(r) => return r,
    };
    if object.meta().name != name {
        let message = format!("the name of the object ({}) does not match the name on the URL ({name})", object.meta().name);
        return failure(Reason::BadRequest, &message);
    }
    cluster.fields.borrow_mut().begin_apply(writer, entries);
    let (request, code) = if live.is_none() { (ApiRequest::Create(object), 201) } else { (ApiRequest::Update(object), 200) };
    let result = cluster.session.sim_mut().submit(request);
    // An apply that changed no field writes nothing, yet its ownership may have changed.
    if let Some(stored) = cluster.session.sim().api().get(&t.key(name)).cloned() {
        if result.is_ok() {
            cluster.fields.borrow_mut().settle_apply(&stored);
        }
    }
    match result {
        Ok(ApiResponse::Object(o)) => json_response(code, &wire(cluster, t, &o)),
        Ok(_) => failure(Reason::InternalError, "unexpected answer"),
        Err(e) => api_error(&t.definition, &e, name),
    }
}

fn delete(cluster: &mut Cluster, t: &Target, name: &str) -> Response<Body> {
    match cluster.session.sim_mut().submit(ApiRequest::Delete(DeleteRequest::new(t.key(name)))) {
        Ok(ApiResponse::Object(o)) if cluster.session.sim().api().get(&t.key(name)).is_some() => json_response(200, &wire(cluster, t, &o)),
        Ok(_) => json_response(
            200,
            &json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success",
            "details": {"name": name, "group": t.definition.group, "kind": t.definition.plural, "uid": ""}}),
        ),
        Err(e) => api_error(&t.definition, &e, name),
    }
}

/// The scale subresource: an autoscaling/v1 Scale read from, and written to, the definition's
/// replica paths.
fn scale(cluster: &mut Cluster, parts: &Parts, t: &Target, name: &str, body: &[u8]) -> Response<Body> {
    let Some(paths) = t.definition.served(&t.version).and_then(|v| v.scale.clone()) else {
        return failure(Reason::NotFound, "the server could not find the requested resource");
    };
    let live = match current(cluster, t, name) {
        Ok(o) => o,
        Err(r) => return r,
    };
    let Some(o) = live.as_custom_object() else { return failure(Reason::InternalError, "unexpected object") };
    let view = |o: &kubeloop::model::CustomObject| {
        let (spec, status, selector) = scale_of(o, &paths);
        let m = &o.metadata;
        json!({"kind": "Scale", "apiVersion": "autoscaling/v1",
            "metadata": {"name": m.name, "namespace": m.namespace, "uid": m.uid, "resourceVersion": m.resource_version.to_string(),
                "creationTimestamp": m.creation_timestamp.map(|t| t.rfc3339())},
            "spec": {"replicas": spec}, "status": {"replicas": status, "selector": selector}})
    };
    let wanted = match parts.method {
        Method::GET => return json_response(200, &view(o)),
        Method::PUT => read_body(parts, body),
        Method::PATCH => patched(parts, body, Kind::CustomObject, &view(o)),
        _ => return status::status(405, "MethodNotAllowed", "the server does not allow this method on the requested resource", None),
    };
    let wanted = match wanted {
        Ok(v) => v,
        Err(r) => return r,
    };
    let replicas = wanted.pointer("/spec/replicas").and_then(Value::as_i64).unwrap_or(0);
    let next = rescaled(o, &paths, replicas);
    match cluster.session.sim_mut().submit(ApiRequest::Update(Object::CustomObject(next))) {
        Ok(ApiResponse::Object(o)) => match o.as_custom_object() {
            Some(o) => json_response(200, &view(o)),
            None => failure(Reason::InternalError, "unexpected answer"),
        },
        Ok(_) => failure(Reason::InternalError, "unexpected answer"),
        Err(e) => api_error(&t.definition, &e, name),
    }
}

fn watch(cluster: &mut Cluster, query: &Query, t: &Target, accept: &str) -> Response<Body> {
    let (labels, fields) = match selectors(t, query) {
        Ok(s) => s,
        Err(r) => return r,
    };
    let table = if wants_table(accept) {
        match Include::parse(query.get("includeObject")) {
            Ok(i) => Some(i),
            Err(e) => return failure(Reason::BadRequest, &e),
        }
    } else {
        None
    };
    let from: Option<u64> = match query.get("resourceVersion").unwrap_or_default() {
        "" | "0" => None,
        text => match text.parse() {
            Ok(n) => Some(n),
            Err(_) => return failure(Reason::BadRequest, &format!("invalid resource version: {text}")),
        },
    };
    let (tx, rx) = tokio::sync::mpsc::channel(super::watch::BACKLOG);
    let now = Instant::now();
    let timeout = query.get("timeoutSeconds").and_then(|t| t.parse::<u64>().ok()).filter(|t| *t > 0);
    let filter = super::filter::Filter { namespace: t.namespace.clone(), labels, fields };
    let watcher = Watcher {
        kind: Kind::CustomObject,
        api_version: t.api_version(),
        filter,
        tx,
        table,
        bookmarks: query.flag("allowWatchBookmarks"),
        deadline: timeout.map(|s| now + Duration::from_secs(s)),
        next_bookmark: now + Duration::from_secs(1),
        custom: Some((t.definition.clone(), t.version.clone())),
    };
    super::api::open_watch(cluster, watcher, rx, from, query.flag("sendInitialEvents"))
}
