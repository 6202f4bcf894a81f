//! `/openapi/v2` in protobuf: the JSON document (`openapi::v2`) written as gnostic's
//! `openapi.v2.Document`, which is the only form kubectl asks for. kubectl 1.27 and 1.28 need
//! it: they read every kind's schema from it for `explain` and load it before any `create -f` or
//! `apply -f` (and stop on a 404); later kubectls use it for `explain --output
//! plaintext-openapiv2`.
//!
//! Only what the JSON document holds is written, by gnostic's field numbers: the document's
//! `swagger`, `info`, `paths` (each PATCH operation with its query parameters, responses and
//! `x-kubernetes-group-version-kind`) and `definitions`; a schema's `$ref`, `format`,
//! `description`, `required`, `additionalProperties`, `type`, `items`, `allOf`, `properties` and
//! `x-` extensions (an extension's value as YAML text, of which JSON is a form).

use serde_json::{Map, Value};

/// kubectl's `Accept` for this document.
pub(crate) const ACCEPT: &str = "application/com.github.proto-openapi.spec.v2@v1.0+protobuf";
/// The answer's type, as kube-apiserver writes it: without the `@`, which Go's media type
/// parser refuses.
pub(crate) const CONTENT_TYPE: &str = "application/com.github.proto-openapi.spec.v2.v1.0+protobuf";

/// A protobuf message being written.
#[derive(Default)]
struct Message(Vec<u8>);

impl Message {
    fn varint(&mut self, mut n: u64) {
        while n >= 0x80 {
            self.0.push((n as u8) | 0x80);
            n >>= 7;
        }
        self.0.push(n as u8);
    }
    fn bytes(&mut self, field: u32, bytes: &[u8]) {
        self.varint(u64::from(field) << 3 | 2);
        self.varint(bytes.len() as u64);
        self.0.extend_from_slice(bytes);
    }
    fn string(&mut self, field: u32, text: &str) {
        if !text.is_empty() {
            self.bytes(field, text.as_bytes());
        }
    }
    fn message(&mut self, field: u32, inner: Message) {
        self.bytes(field, &inner.0);
    }
    fn boolean(&mut self, field: u32, value: bool) {
        if value {
            self.varint(u64::from(field) << 3);
            self.varint(1);
        }
    }
    /// A `NamedAny` with the value as YAML text (`Any.yaml`, field 2).
    fn extension(&mut self, field: u32, name: &str, value: &Value) {
        let mut any = Message::default();
        any.string(2, &serde_json::to_string(value).unwrap_or_default());
        let mut named = Message::default();
        named.string(1, name);
        named.message(2, any);
        self.message(field, named);
    }
}

/// The JSON v2 document as an `openapi.v2.Document`.
pub(crate) fn document(doc: &Value) -> Vec<u8> {
    let mut out = Message::default();
    out.string(1, doc["swagger"].as_str().unwrap_or_default());
    let mut info = Message::default();
    info.string(1, doc["info"]["title"].as_str().unwrap_or_default());
    info.string(2, doc["info"]["version"].as_str().unwrap_or_default());
    out.message(2, info);
    let mut paths = Message::default();
    for (path, item) in doc["paths"].as_object().into_iter().flatten() {
        let mut named = Message::default();
        named.string(1, path);
        named.message(2, path_item(item));
        paths.message(2, named);
    }
    out.message(8, paths);
    let mut definitions = Message::default();
    for (name, value) in doc["definitions"].as_object().into_iter().flatten() {
        let mut named = Message::default();
        named.string(1, name);
        named.message(2, schema(value));
        definitions.message(1, named);
    }
    out.message(9, definitions);
    out.0
}

/// A `PathItem`: its operations by their field numbers.
fn path_item(item: &Value) -> Message {
    let mut out = Message::default();
    for (verb, field) in [("get", 2), ("put", 3), ("post", 4), ("delete", 5), ("patch", 8)] {
        if let Some(op) = item.get(verb) {
            out.message(field, operation(op));
        }
    }
    out
}

fn operation(op: &Value) -> Message {
    let mut out = Message::default();
    out.string(5, op["operationId"].as_str().unwrap_or_default());
    for p in op["parameters"].as_array().into_iter().flatten() {
        // ParametersItem.parameter → Parameter.non_body_parameter → query_parameter_sub_schema.
        let mut query = Message::default();
        query.string(2, p["in"].as_str().unwrap_or_default());
        query.string(4, p["name"].as_str().unwrap_or_default());
        query.string(6, p["type"].as_str().unwrap_or_default());
        query.boolean(20, p["uniqueItems"].as_bool().unwrap_or_default());
        let mut non_body = Message::default();
        non_body.message(3, query);
        let mut parameter = Message::default();
        parameter.message(2, non_body);
        let mut item = Message::default();
        item.message(1, parameter);
        out.message(8, item);
    }
    let mut responses = Message::default();
    for (code, response) in op["responses"].as_object().into_iter().flatten() {
        let mut r = Message::default();
        r.string(1, response["description"].as_str().unwrap_or_default());
        let mut value = Message::default();
        value.message(1, r);
        let mut named = Message::default();
        named.string(1, code);
        named.message(2, value);
        responses.message(1, named);
    }
    out.message(9, responses);
    for (name, value) in extensions(op) {
        out.extension(13, name, value);
    }
    out
}

fn extensions(value: &Value) -> impl Iterator<Item = (&String, &Value)> {
    value.as_object().into_iter().flatten().filter(|(k, _)| k.starts_with("x-"))
}

/// A `Schema`.
fn schema(value: &Value) -> Message {
    let mut out = Message::default();
    let text = |key: &str| value.get(key).and_then(Value::as_str).unwrap_or_default();
    out.string(1, text("$ref"));
    out.string(2, text("format"));
    out.string(4, text("description"));
    for required in value["required"].as_array().into_iter().flatten() {
        out.string(19, required.as_str().unwrap_or_default());
    }
    if let Some(additional) = value.get("additionalProperties") {
        let mut item = Message::default();
        item.message(1, schema(additional));
        out.message(21, item);
    }
    if let Some(type_) = value.get("type").and_then(Value::as_str) {
        let mut item = Message::default();
        item.string(1, type_);
        out.message(22, item);
    }
    if let Some(items) = value.get("items") {
        let mut item = Message::default();
        item.message(1, schema(items));
        out.message(23, item);
    }
    for part in value["allOf"].as_array().into_iter().flatten() {
        out.message(24, schema(part));
    }
    if let Some(Value::Object(properties)) = value.get("properties") {
        out.message(25, properties_message(properties));
    }
    for (name, v) in extensions(value) {
        out.extension(31, name, v);
    }
    out
}

fn properties_message(properties: &Map<String, Value>) -> Message {
    let mut out = Message::default();
    for (name, value) in properties {
        let mut named = Message::default();
        named.string(1, name);
        named.message(2, schema(value));
        out.message(1, named);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Reads back one level of a message: (field, wire type, payload).
    fn fields(mut buf: &[u8]) -> Vec<(u64, u64, Vec<u8>)> {
        fn varint(buf: &mut &[u8]) -> u64 {
            let (mut n, mut shift) = (0u64, 0);
            while let Some((&b, rest)) = buf.split_first() {
                *buf = rest;
                n |= u64::from(b & 0x7f) << shift;
                shift += 7;
                if b < 0x80 {
                    break;
                }
            }
            n
        }
        let mut out = Vec::new();
        while !buf.is_empty() {
            let key = varint(&mut buf);
            let payload = match key & 7 {
                0 => varint(&mut buf).to_le_bytes().to_vec(),
                _ => {
                    let n = varint(&mut buf) as usize;
                    let (head, rest) = buf.split_at(n);
                    buf = rest;
                    head.to_vec()
                }
            };
            out.push((key >> 3, key & 7, payload));
        }
        out
    }

    #[test]
    fn a_definition_reads_back_with_gnostics_field_numbers() {
        let doc = serde_json::json!({
            "swagger": "2.0", "info": {"title": "Kubernetes", "version": "v1.32.0"}, "paths": {},
            "definitions": {"io.k8s.api.core.v1.Pod": {
                "type": "object", "description": "A pod.", "required": ["spec"],
                "properties": {"spec": {"$ref": "#/definitions/io.k8s.api.core.v1.PodSpec"}},
                "x-kubernetes-group-version-kind": [{"group": "", "kind": "Pod", "version": "v1"}],
            }},
        });
        let top = fields(&document(&doc));
        assert_eq!(top[0], (1, 2, b"2.0".to_vec()));
        let definitions = top.iter().find(|f| f.0 == 9).unwrap();
        let named = fields(&fields(&definitions.2)[0].2);
        assert_eq!(named[0].2, b"io.k8s.api.core.v1.Pod");
        let pod = fields(&named[1].2);
        let field = |n: u64| pod.iter().filter(|f| f.0 == n).map(|f| f.2.clone()).collect::<Vec<_>>();
        assert_eq!(field(4), vec![b"A pod.".to_vec()]);
        assert_eq!(field(19), vec![b"spec".to_vec()]);
        assert_eq!(fields(&field(22)[0])[0].2, b"object");
        let property = fields(&fields(&field(25)[0])[0].2);
        assert_eq!(property[0].2, b"spec");
        assert_eq!(fields(&property[1].2)[0].2, b"#/definitions/io.k8s.api.core.v1.PodSpec");
        let extension = fields(&field(31)[0]);
        assert_eq!(extension[0].2, b"x-kubernetes-group-version-kind");
        let yaml = String::from_utf8(fields(&extension[1].2)[0].2.clone()).unwrap();
        assert_eq!(yaml, r#"[{"group":"","kind":"Pod","version":"v1"}]"#);
    }
}
