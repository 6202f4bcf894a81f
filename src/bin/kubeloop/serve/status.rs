//! Failures as kube-apiserver writes them: a `metav1.Status` with the code, reason, message and
//! details (the resource, the name, and for `Invalid` each field's cause) that kubectl and the
//! client libraries read to print and to decide (kubectl's "The Pod "x" is invalid: …" comes from
//! `details.kind`, `details.name` and `details.causes`, not from the message).

use super::body::Body;
use hyper::{Response, StatusCode};
use kubeloop::api::{ApiError, FieldError, Reason};
use kubeloop::model::Kind;
use serde_json::{json, Value};

/// A JSON answer with a status code.
pub(crate) fn json_response(code: u16, value: &Value) -> Response<Body> {
    json_text_response(code, serde_json::to_vec(value).unwrap_or_default())
}

/// An answer already written as JSON text.
pub(crate) fn json_text_response(code: u16, text: impl Into<hyper::body::Bytes>) -> Response<Body> {
    Response::builder()
        .status(StatusCode::from_u16(code).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR))
        .header("Content-Type", "application/json")
        .header("Cache-Control", "no-cache, private")
        .body(Body::full(text))
        .unwrap_or_else(|_| Response::new(Body::full("")))
}

/// A Status with no details.
pub(crate) fn failure(reason: Reason, message: &str) -> Response<Body> {
    status(reason.code(), reason.as_str(), message, None)
}

/// A Status for a code that has no `Reason` in the simulation (413, 415, 405, 406).
pub(crate) fn status(code: u16, reason: &str, message: &str, details: Option<Value>) -> Response<Body> {
    let mut v = json!({
        "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
        "message": message, "reason": reason, "code": code,
    });
    if let Some(d) = details {
        v["details"] = d;
    }
    if reason.is_empty() {
        if let Some(o) = v.as_object_mut() {
            o.remove("reason");
        }
    }
    json_response(code, &v)
}

/// The simulated API server's error, on the wire. `kind` and `name` say what the request was
/// about; an `Invalid` error names the kind (`Deployment`), the others the resource (`pods`).
pub(crate) fn api_error(error: &ApiError, kind: Option<Kind>, name: &str) -> Response<Body> {
    // A stopped kube-apiserver has no HTTP answer in the simulation; over HTTP the nearest is 503.
    let code = if error.is_transport() { 503 } else { error.code() };
    status(code, error.reason.as_str(), &error.message, Some(details(error, kind, name)))
}

/// The Status body of an error, for a watch's ERROR event as for an answer.
pub(crate) fn api_error_value(error: &ApiError) -> Value {
    json!({
        "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
        "message": error.message, "reason": error.reason.as_str(), "code": error.code(),
    })
}

fn details(error: &ApiError, kind: Option<Kind>, name: &str) -> Value {
    let mut d = serde_json::Map::new();
    if !name.is_empty() {
        d.insert("name".into(), name.into());
    }
    if let Some(k) = kind {
        let info = k.info();
        if !info.group().is_empty() {
            d.insert("group".into(), info.group().into());
        }
        let what = if error.reason == Reason::Invalid { info.name } else { info.plural };
        d.insert("kind".into(), what.into());
    }
    if !error.causes.is_empty() {
        d.insert("causes".into(), error.causes.iter().map(cause).collect());
    }
    Value::Object(d)
}

/// A field error as a `StatusCause`: its type read back from the detail's first words, which are
/// `field.ErrorType`'s texts.
pub(crate) fn cause(e: &FieldError) -> Value {
    const TYPES: [(&str, &str); 8] = [
        ("Required value", "FieldValueRequired"),
        ("Invalid value", "FieldValueInvalid"),
        ("Unsupported value", "FieldValueNotSupported"),
        ("Forbidden", "FieldValueForbidden"),
        ("Duplicate value", "FieldValueDuplicate"),
        ("Not found", "FieldValueNotFound"),
        ("Too long", "FieldValueTooLong"),
        ("Too many", "FieldValueTooMany"),
    ];
    let type_ = TYPES.iter().find(|(text, _)| e.detail.starts_with(text)).map_or("FieldValueInvalid", |(_, t)| t);
    json!({"reason": type_, "message": e.detail, "field": e.field})
}
