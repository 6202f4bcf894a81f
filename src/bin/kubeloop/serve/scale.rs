//! The scale subresource (`autoscaling/v1` Scale) of the kinds that have replicas: what
//! `kubectl scale` reads and patches. A Scale is a view of its object; writing one is an update of
//! the object's `spec.replicas`, so the simulated API server validates and stores it as any other.

use super::api::{self, Target};
use super::body::Body;
use super::status::{self, api_error, failure, json_response};
use super::Cluster;
use hyper::http::request::Parts;
use hyper::{Method, Response};
use kubeloop::api::{ApiRequest, ApiResponse, FieldError, Reason};
use kubeloop::command::printers;
use kubeloop::model::{LabelSelector, Object};
use serde_json::{json, Value};

pub(crate) fn handle(cluster: &mut Cluster, parts: &Parts, target: &Target, name: &str, body: &[u8]) -> Response<Body> {
    let object = match api::current(cluster, target, name) {
        Ok(o) => o,
        Err(r) => return r,
    };
    let scale = scale_of(&object);
    let wanted = match parts.method {
        Method::GET => return json_response(200, &scale),
        Method::PUT => api::read_body(parts, body),
        Method::PATCH => api::patched(parts, body, target.kind, &scale),
        _ => return failure(Reason::BadRequest, "the server does not allow this method on the requested resource"),
    };
    let wanted = match wanted {
        Ok(v) => v,
        Err(r) => return r,
    };
    let replicas = wanted.pointer("/spec/replicas").and_then(Value::as_i64).unwrap_or(0);
    if replicas < 0 {
        let field = FieldError::invalid("spec.replicas", replicas, "must be greater than or equal to 0");
        let details = json!({"name": name, "group": "autoscaling", "kind": "Scale",
            "causes": [{"reason": "FieldValueInvalid", "message": field.detail, "field": field.field}]});
        return status::status(422, "Invalid", &format!("Scale.autoscaling {name:?} is invalid: {field}"), Some(details));
    }
    let mut document = printers::object_json(&object);
    document["spec"]["replicas"] = replicas.into();
    if let Some(rv) = wanted.pointer("/metadata/resourceVersion").and_then(Value::as_str).filter(|rv| !rv.is_empty()) {
        document["metadata"]["resourceVersion"] = rv.into();
    }
    let updated = match Object::from_json(document) {
        Ok(o) => o,
        Err(e) => return failure(Reason::BadRequest, &e),
    };
    match cluster.session.sim_mut().submit(ApiRequest::Update(updated)) {
        Ok(ApiResponse::Object(o)) => json_response(200, &scale_of(&o)),
        Ok(_) => failure(Reason::InternalError, "unexpected answer"),
        Err(e) => api_error(&e, Some(target.kind), name),
    }
}

fn selector(object: &Object) -> Option<LabelSelector> {
    Some(match object {
        Object::Deployment(d) => d.spec.selector.clone(),
        Object::ReplicaSet(rs) => rs.spec.selector.clone(),
        Object::StatefulSet(sts) => sts.spec.selector.clone(),
        Object::ReplicationController(rc) => rc.as_replica_set().spec.selector.clone(),
        _ => return None,
    })
}

/// The Scale of an object with replicas.
fn scale_of(object: &Object) -> Value {
    let v = printers::object_json(object);
    let meta = &v["metadata"];
    let mut metadata = json!({});
    for field in ["name", "namespace", "uid", "resourceVersion", "creationTimestamp"] {
        if let Some(x) = meta.get(field) {
            metadata[field] = x.clone();
        }
    }
    json!({
        "kind": "Scale", "apiVersion": "autoscaling/v1", "metadata": metadata,
        "spec": {"replicas": v.pointer("/spec/replicas").and_then(Value::as_i64).unwrap_or(0)},
        "status": {
            "replicas": v.pointer("/status/replicas").and_then(Value::as_i64).unwrap_or(0),
            "selector": selector(object).filter(|s| !s.is_empty()).map(|s| printers::selector_string(&s)).unwrap_or_default(),
        },
    })
}
