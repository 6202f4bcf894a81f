//! `/openapi/v3` (and `/openapi/v2`): the API's documents, which kubectl reads for `explain`,
//! before `create -f` and `apply -f`.
//!
//! Each group version's document has every kind's schema under `components.schemas`, named as
//! upstream names them (`io.k8s.api.apps.v1.Deployment`), the kind's own tagged with
//! `x-kubernetes-group-version-kind`, fields referring to named types through `allOf` and list
//! fields carrying their list-type and patch extensions, as kube-apiserver's v3 documents are
//! shaped. The schemas are the library's (`model::schema`, generated from the decode tables), so
//! `kubectl explain` shows exactly the fields the simulation reads, with kubeloop's own short
//! descriptions.
//!
//! Each kind also has a PATCH operation taking the `fieldValidation` parameter, so kubectl leaves
//! field validation to the server (it sends `fieldValidation=Strict`, and kubeloop names what it
//! does not model). The PATCH operations list no request body: kubectl then computes a
//! client-side apply's strategic merge patch from its compiled-in types — upstream's own struct
//! tags, the same patch meta kube-apiserver's full documents give it — rather than from these
//! schemas, which leave out every field kubeloop does not model. `/openapi/v2` is the same
//! schemas as `definitions`, in JSON or in the protobuf kubectl asks for (`openapi_proto`).

use super::discovery::{resources, Resource};
use kubeloop::model::schema::{Field, Named, Schema};
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

/// A resource the documents describe: its row of discovery's table and the schema of its kind in
/// that version, where kubeloop has one (each kind's stored version, and metrics-server's
/// objects; not autoscaling/v1's older HorizontalPodAutoscaler shape, which is converted from).
/// Table-driven, so a resource known only at run time is one more row with its own schema.
struct Documented {
    resource: Resource,
    schema: Option<Schema>,
    /// A custom resource's schema, as its definition's `openAPIV3Schema` gives it.
    custom: Option<Value>,
}

/// A resource a CustomResourceDefinition serves, with the `openAPIV3Schema` of that version.
pub(crate) struct CustomSchema {
    pub(crate) resource: Resource,
    pub(crate) schema: Value,
}

impl Documented {
    fn api_version(&self) -> String {
        if self.resource.group.is_empty() {
            self.resource.version.clone()
        } else {
            format!("{}/{}", self.resource.group, self.resource.version)
        }
    }
}

/// Every resource the documents describe: those with a schema or a PATCH verb (the operation
/// that tells kubectl the server validates fields).
fn documented(custom: &[CustomSchema]) -> Vec<Documented> {
    let mut out: Vec<Documented> = resources()
        .into_iter()
        .map(|resource| {
            let api_version =
                if resource.group.is_empty() { resource.version.clone() } else { format!("{}/{}", resource.group, resource.version) };
            let kind = Kind::from_kind_str(&resource.kind).filter(|k| k.api_version() == api_version);
            let schema = kind.map(Kind::schema).or_else(|| super::metrics::schema(&resource.kind));
            Documented { schema, resource, custom: None }
        })
        .filter(|d| d.schema.is_some() || d.resource.verbs.contains(&"patch"))
        .collect();
    out.extend(custom.iter().map(|c| Documented { resource: c.resource.clone(), schema: None, custom: Some(c.schema.clone()) }));
    out
}

/// The name apiextensions-apiserver publishes a custom kind's schema under: the group's
/// labels reversed, the version, the kind (`com.example.v1.Website`).
fn custom_schema_name(r: &Resource) -> String {
    let group: Vec<&str> = r.group.split('.').rev().collect();
    format!("{}.{}.{}", group.join("."), r.version, r.kind)
}

/// The metadata field every kind has, whose named types (ObjectMeta and what it refers to) a
/// custom kind's document carries too.
fn object_meta() -> Option<Field> {
    Kind::ConfigMap.schema().fields()?.into_iter().find(|f| f.name == "metadata")
}

/// A custom kind's published schema: the definition's own, with `apiVersion`, `kind` and a
/// `metadata` referring to ObjectMeta set over whatever it says of them (as
/// apiextensions-apiserver's builder does), tagged with its group, version and kind. In v2 it is
/// first made what OpenAPI v2 can say (`v2_compatible`).
fn custom_schema(r: &Resource, raw: &Value, dialect: Dialect) -> Value {
    let mut out = raw.clone();
    if dialect == Dialect::V2 {
        v2_compatible(&mut out);
    }
    if !out.is_object() {
        out = json!({});
    }
    let mut properties = match out.get_mut("properties").map(Value::take) {
        Some(Value::Object(p)) => p,
        _ => Map::new(),
    };
    properties.insert("apiVersion".into(), json!({"type": "string", "description": API_VERSION_DESCRIPTION}));
    properties.insert("kind".into(), json!({"type": "string", "description": KIND_DESCRIPTION}));
    if let Some(meta) = object_meta() {
        properties.insert("metadata".into(), property(&meta, dialect));
    }
    out["properties"] = Value::Object(properties);
    if out.get("type").is_none() {
        out["type"] = "object".into();
    }
    out["x-kubernetes-group-version-kind"] = json!([{"group": r.group, "version": r.version, "kind": r.kind}]);
    out
}

/// What apiextensions-apiserver removes from a structural schema to publish it in OpenAPI v2
/// (`ToStructuralOpenAPIV2`): the junctors (`allOf`, `anyOf`, `oneOf`, `not`), which v2's
/// clients cannot read; a nullable value's type, items and properties (v2 has no null); the items
/// and properties of a value that keeps unknown fields; an array left without items loses its
/// type; and a nullable property is no longer required.
fn v2_compatible(schema: &mut Value) {
    let Some(map) = schema.as_object_mut() else { return };
    for junctor in ["allOf", "anyOf", "oneOf", "not"] {
        map.remove(junctor);
    }
    if map.remove("nullable") == Some(Value::Bool(true)) {
        map.remove("type");
        map.remove("items");
        map.remove("properties");
    }
    if map.get("x-kubernetes-preserve-unknown-fields") == Some(&Value::Bool(true)) {
        map.remove("items");
        map.remove("properties");
    }
    if map.get("type").and_then(Value::as_str) == Some("array") && !map.contains_key("items") {
        map.remove("type");
    }
    let nullable = |v: &Value| v.get("nullable") == Some(&Value::Bool(true));
    let mut not_required: Vec<String> = Vec::new();
    if let Some(Value::Object(properties)) = map.get("properties") {
        not_required.extend(properties.iter().filter(|(_, v)| nullable(v)).map(|(k, _)| k.clone()));
    }
    let values_nullable = map.get("additionalProperties").is_some_and(nullable);
    if let Some(Value::Array(required)) = map.get_mut("required") {
        required.retain(|r| !values_nullable && !r.as_str().is_some_and(|r| not_required.iter().any(|n| n == r)));
        if required.is_empty() {
            map.remove("required");
        }
    }
    if let Some(Value::Object(properties)) = map.get_mut("properties") {
        properties.values_mut().for_each(v2_compatible);
    }
    if let Some(items) = map.get_mut("items") {
        v2_compatible(items);
    }
    if let Some(additional) = map.get_mut("additionalProperties") {
        v2_compatible(additional);
    }
}

const API_VERSION_DESCRIPTION: &str = "The version of the API this object's shape follows (apps/v1, v1).";
const KIND_DESCRIPTION: &str = "What the object is (Pod, Deployment).";

/// How a document refers to a named schema: `#/components/schemas/` (v3) or `#/definitions/` (v2).
#[derive(Clone, Copy, PartialEq)]
enum Dialect {
    V2,
    V3,
}

impl Dialect {
    fn reference(self, named: &Named) -> String {
        match self {
            Dialect::V2 => format!("#/definitions/{}", named.full_name()),
            Dialect::V3 => format!("#/components/schemas/{}", named.full_name()),
        }
    }

    /// A use of a named schema: v3 wraps the reference in `allOf` so that the use can carry a
    /// description of its own beside it, as kube-apiserver's v3 documents do.
    fn use_of(self, named: &Named) -> Value {
        match self {
            Dialect::V2 => json!({"$ref": self.reference(named)}),
            Dialect::V3 => json!({"allOf": [{"$ref": self.reference(named)}]}),
        }
    }
}

/// The schemas of a group version's resources, each named type once (a resource's own schema
/// tagged with its group, version and kind), as `components.schemas` or `definitions`.
fn schemas(documented: &[Documented], dialect: Dialect) -> Map<String, Value> {
    let mut out = Map::new();
    for d in documented {
        if let Some(raw) = &d.custom {
            for (name, named) in object_meta().map(|m| m.schema().named_types()).unwrap_or_default() {
                if !out.contains_key(&name) {
                    out.insert(name, named_schema(&named, dialect));
                }
            }
            out.insert(custom_schema_name(&d.resource), custom_schema(&d.resource, raw, dialect));
            continue;
        }
        let Some(schema) = &d.schema else { continue };
        for (name, named) in schema.named_types() {
            if !out.contains_key(&name) {
                out.insert(name, named_schema(&named, dialect));
            }
        }
        if let Schema::Named(named) = schema {
            let r = &d.resource;
            let entry = &mut out[&named.full_name()];
            entry["x-kubernetes-group-version-kind"] = json!([{"group": r.group, "version": r.version, "kind": r.kind}]);
            let mut properties = Map::new();
            properties.insert("apiVersion".into(), json!({"type": "string", "description": API_VERSION_DESCRIPTION}));
            properties.insert("kind".into(), json!({"type": "string", "description": KIND_DESCRIPTION}));
            if let Some(Value::Object(rest)) = entry.get_mut("properties").map(Value::take) {
                properties.extend(rest);
            }
            entry["properties"] = Value::Object(properties);
        }
    }
    out
}

/// A named type's own schema.
fn named_schema(named: &Named, dialect: Dialect) -> Value {
    let mut out = body(&(named.body)(), dialect);
    if !named.description.is_empty() {
        out["description"] = named.description.into();
    }
    out
}

/// A schema written in place (not a reference to a named one).
fn body(schema: &Schema, dialect: Dialect) -> Value {
    match schema {
        Schema::Leaf(type_, format) => {
            let mut out = json!({"type": type_});
            if !format.is_empty() {
                out["format"] = (*format).into();
            }
            out
        }
        Schema::OneOf { v3, v2, format } => {
            let mut out = match dialect {
                Dialect::V2 => json!({"type": v2}),
                Dialect::V3 => json!({"oneOf": v3.iter().map(|t| json!({"type": t})).collect::<Vec<_>>()}),
            };
            if !format.is_empty() {
                out["format"] = (*format).into();
            }
            out
        }
        Schema::Named(named) => dialect.use_of(named),
        Schema::Array(item) => json!({"type": "array", "items": element(item, dialect)}),
        Schema::Map(value) => json!({"type": "object", "additionalProperties": element(value, dialect)}),
        Schema::Object(s) => {
            let mut properties = Map::new();
            for field in &s.fields {
                properties.insert(field.name.to_string(), property(field, dialect));
            }
            let mut out = json!({"type": "object", "properties": properties});
            let required: Vec<&str> = s.fields.iter().filter(|f| f.required).map(|f| f.name).collect();
            if !required.is_empty() {
                out["required"] = json!(required);
            }
            out
        }
    }
}

/// A list's item or a map's value: a named type is referred to plainly (`$ref` alone), as
/// kube-apiserver writes map values.
fn element(schema: &Schema, dialect: Dialect) -> Value {
    match schema {
        Schema::Named(named) => match dialect {
            Dialect::V2 => json!({"$ref": dialect.reference(named)}),
            Dialect::V3 => json!({"allOf": [{"$ref": dialect.reference(named)}], "default": {}}),
        },
        other => body(other, dialect),
    }
}

/// A field's property: its schema, description, and list and patch semantics.
fn property(field: &Field, dialect: Dialect) -> Value {
    let mut out = body(&field.schema(), dialect);
    if !field.description.is_empty() {
        out["description"] = field.description.into();
    }
    if let Some(list_type) = field.list_type() {
        out["x-kubernetes-list-type"] = list_type.into();
        let keys = field.list_map_keys();
        if !keys.is_empty() {
            out["x-kubernetes-list-map-keys"] = json!(keys);
        }
    }
    if let Some(strategy) = field.patch_strategy() {
        out["x-kubernetes-patch-strategy"] = strategy.into();
    }
    if let Some(key) = field.patch_merge_key() {
        out["x-kubernetes-patch-merge-key"] = key.into();
    }
    out
}

/// `/openapi/v2`: every kind's schema as `definitions`, and the same PATCH operations as v3's
/// (under `paths`, with `fieldValidation`, and no `consumes`, so that a client-side apply that
/// falls back to v2 still takes kubectl's compiled-in patch strategies). kubectl asks for it in
/// protobuf (`openapi_proto`); other clients may read it as JSON.
pub(crate) fn v2(custom: &[CustomSchema]) -> Value {
    let documented = documented(custom);
    let mut paths = Map::new();
    for d in documented.iter().filter(|d| d.resource.verbs.contains(&"patch")) {
        let r = &d.resource;
        let namespace = if r.namespaced { "namespaces/{namespace}/" } else { "" };
        let path = format!("/{}/{namespace}{}/{{name}}", gv_path(&d.api_version()), r.plural);
        let parameter = |name: &str| json!({"name": name, "in": "query", "type": "string", "uniqueItems": true});
        let patch = json!({
            "operationId": format!("patch{}", r.kind),
            "parameters": [parameter("dryRun"), parameter("fieldManager"), parameter("fieldValidation")],
            "responses": {"200": {"description": "OK"}},
            "x-kubernetes-action": "patch",
            "x-kubernetes-group-version-kind": {"group": r.group, "version": r.version, "kind": r.kind},
        });
        paths.insert(path, json!({"patch": patch}));
    }
    json!({
        "swagger": "2.0",
        "info": {"title": "Kubernetes", "version": super::discovery::KUBE_VERSION},
        "paths": paths,
        "definitions": schemas(&documented, Dialect::V2),
    })
}

pub(crate) fn v3(path: &str, custom: &[CustomSchema]) -> Option<Value> {
    if path.is_empty() {
        let mut paths = Map::new();
        for d in documented(custom) {
            let p = gv_path(&d.api_version());
            paths.insert(p.clone(), json!({"serverRelativeURL": format!("/openapi/v3/{p}")}));
        }
        return Some(json!({"paths": paths}));
    }
    let documented: Vec<Documented> = documented(custom).into_iter().filter(|d| gv_path(&d.api_version()) == path).collect();
    if documented.is_empty() {
        return None;
    }
    let mut paths = Map::new();
    for d in &documented {
        let r = &d.resource;
        let namespace = if r.namespaced { "namespaces/{namespace}/" } else { "" };
        let gvk = json!({"group": r.group, "version": r.version, "kind": r.kind});
        let parameter = |name: &str| json!({"name": name, "in": "query", "schema": {"type": "string", "uniqueItems": true}});
        let operation = |verb: &str| {
            json!({
                "operationId": format!("{verb}{}", r.kind),
                "x-kubernetes-action": verb,
                "x-kubernetes-group-version-kind": gvk,
                "parameters": [parameter("dryRun"), parameter("fieldManager"), parameter("fieldValidation")],
                "responses": {"200": {"description": "OK"}},
            })
        };
        // An operation per verb the resource serves, on the object's path or the collection's.
        let mut item = Map::new();
        let mut collection = Map::new();
        for (verb, method, on_item) in [("get", "get", true), ("update", "put", true), ("patch", "patch", true), ("create", "post", false)]
        {
            if r.verbs.contains(&verb) {
                let target = if on_item { &mut item } else { &mut collection };
                target.insert(method.into(), operation(method));
            }
        }
        if !item.is_empty() {
            paths.insert(format!("/{path}/{namespace}{}/{{name}}", r.plural), Value::Object(item));
        }
        if !collection.is_empty() {
            paths.insert(format!("/{path}/{namespace}{}", r.plural), Value::Object(collection));
        }
    }
    Some(json!({
        "openapi": "3.0.0",
        "info": {"title": "Kubernetes", "version": super::discovery::KUBE_VERSION},
        "paths": paths,
        "components": {"schemas": schemas(&documented, Dialect::V3)},
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kinds_patch_takes_field_validation() {
        for kind in Kind::ALL.into_iter().filter(|k| k.is_named()) {
            let doc = v3(&gv_path(kind.api_version()), &[]).unwrap();
            let found = doc["paths"].as_object().unwrap().values().filter_map(|p| p.get("patch")).any(|op| {
                op["x-kubernetes-group-version-kind"]["kind"] == kind.info().name
                    && op["parameters"].as_array().unwrap().iter().any(|p| p["name"] == "fieldValidation")
            });
            assert!(found, "{kind:?}");
        }
        assert!(v3("apis/nope/v1", &[]).is_none());
        assert!(v3("", &[]).unwrap()["paths"]["apis/apps/v1"]["serverRelativeURL"].is_string());
    }

    /// Every `$ref` in a document, with where it is.
    fn refs(value: &Value, at: &str, out: &mut Vec<(String, String)>) {
        match value {
            Value::Object(map) => {
                for (k, v) in map {
                    if k == "$ref" {
                        out.push((at.to_string(), v.as_str().unwrap_or_default().to_string()));
                    }
                    refs(v, &format!("{at}/{k}"), out);
                }
            }
            Value::Array(items) => items.iter().for_each(|v| refs(v, at, out)),
            _ => {}
        }
    }

    #[test]
    fn every_kind_has_its_schema_and_every_reference_resolves() {
        for kind in Kind::ALL.into_iter().filter(|k| k.is_named()) {
            let (group, version) = kind.api_version().split_once('/').unwrap_or(("", kind.api_version()));
            let doc = v3(&gv_path(kind.api_version()), &[]).unwrap();
            let schemas = doc["components"]["schemas"].as_object().unwrap();
            let own = schemas.values().find(|s| {
                s["x-kubernetes-group-version-kind"]
                    .as_array()
                    .is_some_and(|list| list.iter().any(|g| g["group"] == group && g["version"] == version && g["kind"] == kind.as_str()))
            });
            let own = own.unwrap_or_else(|| panic!("{kind:?} has no schema"));
            for field in ["apiVersion", "kind", "metadata"] {
                assert!(own["properties"][field].is_object(), "{kind:?}.{field}");
            }
            let mut found = Vec::new();
            refs(&doc, "", &mut found);
            for (at, target) in found {
                let name = target.strip_prefix("#/components/schemas/").unwrap_or_else(|| panic!("{at}: {target}"));
                assert!(schemas.contains_key(name), "{at}: {target} is not in the document");
            }
        }
    }

    #[test]
    fn schemas_are_shaped_as_upstream_shapes_them() {
        let core = v3("api/v1", &[]).unwrap();
        let schemas = &core["components"]["schemas"];
        let containers = &schemas["io.k8s.api.core.v1.PodSpec"]["properties"]["containers"];
        assert_eq!(containers["type"], "array");
        assert_eq!(containers["items"]["allOf"][0]["$ref"], "#/components/schemas/io.k8s.api.core.v1.Container");
        assert_eq!(containers["x-kubernetes-list-type"], "map");
        assert_eq!(containers["x-kubernetes-list-map-keys"], json!(["name"]));
        assert_eq!(containers["x-kubernetes-patch-merge-key"], "name");
        assert_eq!(containers["x-kubernetes-patch-strategy"], "merge");
        let metadata = &schemas["io.k8s.api.core.v1.Pod"]["properties"]["metadata"];
        assert_eq!(metadata["allOf"][0]["$ref"], "#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta");
        let requests = &schemas["io.k8s.api.core.v1.ResourceRequirements"]["properties"]["requests"];
        assert_eq!(
            requests["additionalProperties"]["allOf"][0]["$ref"],
            "#/components/schemas/io.k8s.apimachinery.pkg.api.resource.Quantity"
        );
        assert_eq!(schemas["io.k8s.apimachinery.pkg.api.resource.Quantity"]["oneOf"], json!([{"type": "string"}, {"type": "number"}]));
        assert_eq!(schemas["io.k8s.apimachinery.pkg.apis.meta.v1.Time"]["format"], "date-time");
        let replicas = &schemas["io.k8s.api.core.v1.ReplicationControllerSpec"]["properties"]["replicas"];
        assert_eq!((replicas["type"].as_str(), replicas["format"].as_str()), (Some("integer"), Some("int32")));
        // A port kubeloop keeps as an i64 is an int32 upstream, as the table says.
        let port = &schemas["io.k8s.api.core.v1.ContainerPort"]["properties"]["containerPort"];
        assert_eq!((port["type"].as_str(), port["format"].as_str()), (Some("integer"), Some("int32")));
        let required = &schemas["io.k8s.api.core.v1.NodeSelectorRequirement"]["required"];
        assert_eq!(*required, json!(["key", "operator"]));
        // Required upstream though read leniently (validation refuses a missing one).
        assert_eq!(schemas["io.k8s.api.core.v1.Container"]["required"], json!(["name"]));
        assert_eq!(schemas["io.k8s.api.core.v1.PodSpec"]["required"], json!(["containers"]));
        // v2: the same schemas, referred to under #/definitions/ without allOf.
        let doc = v2(&[]);
        let spec = &doc["definitions"]["io.k8s.api.apps.v1.DeploymentSpec"]["properties"]["template"];
        assert_eq!(spec["$ref"], "#/definitions/io.k8s.api.core.v1.PodTemplateSpec");
        assert!(doc["paths"]["/apis/apps/v1/namespaces/{namespace}/deployments/{name}"]["patch"]["consumes"].is_null());
    }
}
