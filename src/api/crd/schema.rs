//! A CustomResourceDefinition's structural `openAPIV3Schema`: read (refusing what kubeloop
//! does not model), and applied to custom objects as kube-apiserver applies it — defaulting,
//! pruning of unknown fields, then validation with kube-openapi's messages as
//! apiextensions-apiserver turns them into field errors.
//!
//! Messages follow kube-openapi's `validation/errors` (`spec.replicas in body should be greater
//! than or equal to 1`) inside the field error apiextensions makes of each
//! (`kubeOpenAPIResultToFieldErrors`): Required for a missing property, NotSupported for an
//! enum, TooLong for maxLength, TooMany for maxItems, TypeInvalid for a type, Invalid for the
//! rest. Array items are named `path[i]`, as kube-openapi names them.
//!
//! A keyword kubeloop cannot evaluate (CEL's `x-kubernetes-validations`, `anyOf`, …) refuses the
//! definition with a message that says so: a schema is never applied with a rule skipped.

use crate::api::errors::FieldError;
use serde_json::{Map, Value};
use std::collections::BTreeMap;

/// One node of a structural schema.
#[derive(Clone, Debug, Default)]
pub struct Schema {
    /// `object`, `array`, `string`, `integer`, `number`, `boolean`; empty only where
    /// `x-kubernetes-int-or-string` or `x-kubernetes-preserve-unknown-fields` allows it.
    pub type_: String,
    pub nullable: bool,
    pub int_or_string: bool,
    pub preserve_unknown_fields: bool,
    pub embedded_resource: bool,
    pub properties: BTreeMap<String, Schema>,
    /// `additionalProperties` with a schema: a map whose values all follow it.
    pub additional_properties: Option<Box<Schema>>,
    pub items: Option<Box<Schema>>,
    pub required: Vec<String>,
    pub enum_: Option<Vec<Value>>,
    pub minimum: Option<f64>,
    pub maximum: Option<f64>,
    pub exclusive_minimum: bool,
    pub exclusive_maximum: bool,
    pub min_length: Option<u64>,
    pub max_length: Option<u64>,
    pub min_items: Option<u64>,
    pub max_items: Option<u64>,
    pub pattern: Option<(String, super::pattern::Pattern)>,
    /// `date-time` is checked; the numeric formats only document the width.
    pub format: Option<String>,
    pub default: Option<Value>,
}

/// Keywords that only document (or that the simulation has no use for): read and ignored.
const DOCUMENTATION: &[&str] = &["description", "title", "example", "externalDocs", "x-kubernetes-map-type", "$schema", "id"];

/// Keywords kubeloop does not evaluate: a schema naming one is refused rather than applied
/// without it.
const UNMODELLED: &[&str] = &[
    "anyOf",
    "oneOf",
    "allOf",
    "not",
    "multipleOf",
    "uniqueItems",
    "maxProperties",
    "minProperties",
    "patternProperties",
    "dependencies",
    "additionalItems",
    "x-kubernetes-list-map-keys",
    "$ref",
    "definitions",
];

/// Where a node sits, for the structural messages that depend on it.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Place {
    Root,
    Property,
    Item,
}

impl Schema {
    /// Reads `openAPIV3Schema` at `path`, adding to `errs` what makes it unusable (not
    /// structural, or using what is not modelled).
    pub fn parse(value: &Value, path: &str, errs: &mut Vec<FieldError>) -> Schema {
        parse_node(value, path, Place::Root, errs)
    }

    fn allows_null(&self) -> bool {
        self.nullable
    }

    /// Applies the defaults of this schema to `value` (an object's content at the root), as
    /// kube-apiserver does when it decodes a request and when it reads from etcd. A `null`
    /// where `nullable` is not set is dropped first, and then defaulted if it has a default.
    pub fn default_value(&self, value: &mut Value) {
        match value {
            Value::Object(map) => {
                for (name, prop) in &self.properties {
                    if map.get(name).is_some_and(Value::is_null) && !prop.allows_null() {
                        map.remove(name);
                    }
                    if !map.contains_key(name) {
                        if let Some(default) = &prop.default {
                            map.insert(name.clone(), default.clone());
                        }
                    }
                    if let Some(child) = map.get_mut(name) {
                        prop.default_value(child);
                    }
                }
                if let Some(extra) = &self.additional_properties {
                    for child in map.values_mut() {
                        extra.default_value(child);
                    }
                }
            }
            Value::Array(items) => {
                if let Some(item) = &self.items {
                    for child in items {
                        item.default_value(child);
                    }
                }
            }
            _ => {}
        }
    }

    /// Drops every field the schema does not specify, unless
    /// `x-kubernetes-preserve-unknown-fields` keeps them (structural pruning). An embedded
    /// resource keeps its `apiVersion`, `kind` and `metadata`.
    pub fn prune(&self, value: &mut Value) {
        match value {
            Value::Object(map) => {
                if let Some(extra) = &self.additional_properties {
                    for child in map.values_mut() {
                        extra.prune(child);
                    }
                    return;
                }
                if !self.preserve_unknown_fields {
                    let embedded = |k: &str| self.embedded_resource && matches!(k, "apiVersion" | "kind" | "metadata");
                    map.retain(|k, _| self.properties.contains_key(k) || embedded(k));
                }
                for (name, prop) in &self.properties {
                    if let Some(child) = map.get_mut(name) {
                        prop.prune(child);
                    }
                }
            }
            Value::Array(items) => {
                if let Some(item) = &self.items {
                    for child in items {
                        item.prune(child);
                    }
                }
            }
            _ => {}
        }
    }

    /// The field errors of `value` at `path` (`""` for the object's root).
    pub fn validate(&self, value: &Value, path: &str, errs: &mut Vec<FieldError>) {
        if value.is_null() {
            if !self.nullable && (!self.type_.is_empty() || self.int_or_string) {
                errs.push(type_error(path, &self.type_names(), "null"));
            }
            return;
        }
        let actual = type_of(value);
        if !self.admits_type(value, actual) {
            errs.push(type_error(path, &self.type_names(), actual));
            return;
        }
        match value {
            Value::String(s) => self.validate_string(s, path, errs),
            Value::Number(_) => self.validate_number(value, path, errs),
            Value::Array(items) => self.validate_array(items, path, errs),
            _ => {}
        }
        if let Some(values) = &self.enum_ {
            if !values.contains(value) {
                errs.push(enum_error(path, value, values));
            }
        }
        if let Value::Object(map) = value {
            self.validate_object(map, path, errs);
        }
    }

    fn type_names(&self) -> String {
        if self.int_or_string {
            "integer,string".into()
        } else {
            self.type_.clone()
        }
    }

    /// kube-openapi's type check: an integer is a number, and a whole number is an integer.
    fn admits_type(&self, value: &Value, actual: &str) -> bool {
        let own = [self.type_.as_str()];
        let wanted: &[&str] = if self.int_or_string {
            &["integer", "string"]
        } else if self.type_.is_empty() {
            return true;
        } else {
            &own
        };
        wanted.iter().any(|t| {
            *t == actual
                || (*t == "number" && actual == "integer")
                || (*t == "integer" && actual == "number" && value.as_f64().is_some_and(|f| f.fract() == 0.0))
        })
    }

    fn validate_string(&self, s: &str, path: &str, errs: &mut Vec<FieldError>) {
        let len = s.chars().count() as u64;
        let quoted = format!("{s:?}");
        if let Some(max) = self.max_length.filter(|m| len > *m) {
            errs.push(FieldError { field: path.into(), detail: format!("Too long: may not be longer than {max}") });
        }
        if let Some(min) = self.min_length.filter(|m| len < *m) {
            errs.push(FieldError::invalid(path, &quoted, &format!("{path} in body should be at least {min} chars long")));
        }
        if let Some((text, re)) = &self.pattern {
            match re.is_match(s) {
                Ok(true) => {}
                Ok(false) => errs.push(FieldError::invalid(path, &quoted, &format!("{path} in body should match '{text}'"))),
                Err(e) => errs.push(FieldError::invalid(path, &quoted, &format!("{path} could not be matched against '{text}': {e}"))),
            }
        }
        if self.format.as_deref() == Some("date-time") && crate::model::Time::parse_rfc3339(s).is_none() {
            errs.push(FieldError::invalid(path, &quoted, &format!("{path} in body must be of type date-time: {quoted}")));
        }
    }

    fn validate_number(&self, value: &Value, path: &str, errs: &mut Vec<FieldError>) {
        let Some(n) = value.as_f64() else { return };
        let shown = go_number(value);
        if let Some(max) = self.maximum {
            if n > max || (self.exclusive_maximum && n == max) {
                let how = if self.exclusive_maximum { "less than" } else { "less than or equal to" };
                errs.push(FieldError::invalid(path, &shown, &format!("{path} in body should be {how} {max}")));
            }
        }
        if let Some(min) = self.minimum {
            if n < min || (self.exclusive_minimum && n == min) {
                let how = if self.exclusive_minimum { "greater than" } else { "greater than or equal to" };
                errs.push(FieldError::invalid(path, &shown, &format!("{path} in body should be {how} {min}")));
            }
        }
    }

    fn validate_array(&self, items: &[Value], path: &str, errs: &mut Vec<FieldError>) {
        if let Some(item) = &self.items {
            for (i, v) in items.iter().enumerate() {
                item.validate(v, &format!("{path}[{i}]"), errs);
            }
        }
        let len = items.len() as u64;
        if let Some(min) = self.min_items.filter(|m| len < *m) {
            errs.push(FieldError::invalid(path, len, &format!("{path} in body should have at least {min} items")));
        }
        if let Some(max) = self.max_items.filter(|m| len > *m) {
            errs.push(FieldError { field: path.into(), detail: format!("Too many: {len}: must have at most {max} items") });
        }
    }

    fn validate_object(&self, map: &Map<String, Value>, path: &str, errs: &mut Vec<FieldError>) {
        for name in &self.required {
            if !map.contains_key(name) {
                errs.push(FieldError::required(&child(path, name)));
            }
        }
        for (name, prop) in &self.properties {
            if let Some(v) = map.get(name) {
                prop.validate(v, &child(path, name), errs);
            }
        }
        if let Some(extra) = &self.additional_properties {
            for (name, v) in map {
                extra.validate(v, &child(path, name), errs);
            }
        }
        if self.embedded_resource {
            for field in ["apiVersion", "kind"] {
                if map.get(field).and_then(Value::as_str).is_none_or(str::is_empty) {
                    errs.push(FieldError::required_why(&child(path, field), "must not be empty"));
                }
            }
        }
    }

    /// The schema of the field at a JSON path below this node (`.spec.replicas`), if specified.
    pub fn at_path(&self, path: &str) -> Option<&Schema> {
        let mut node = self;
        for part in path.trim_start_matches('.').split('.').filter(|p| !p.is_empty()) {
            node = node.properties.get(part)?;
        }
        Some(node)
    }
}

fn child(path: &str, name: &str) -> String {
    if path.is_empty() {
        name.to_string()
    } else {
        format!("{path}.{name}")
    }
}

/// A number as Go's `%v` prints what the JSON decoder gave it: an int64, or a float64 (`1.0`
/// prints `1`, as Rust's `f64` does too).
fn go_number(value: &Value) -> String {
    match (value.as_i64(), value.as_f64()) {
        (Some(i), _) => i.to_string(),
        (None, Some(f)) => f.to_string(),
        _ => value.to_string(),
    }
}

/// The JSON type kube-openapi names a value by.
fn type_of(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_i64() || n.is_u64() => "integer",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// `spec.replicas: Invalid value: "string": spec.replicas in body must be of type integer: "string"`.
fn type_error(path: &str, wanted: &str, actual: &str) -> FieldError {
    FieldError::invalid(path, format!("{actual:?}"), &format!("{path} in body must be of type {wanted}: {actual:?}"))
}

/// field.NotSupported: the value as Go prints it, the allowed values quoted (non-strings as JSON).
fn enum_error(path: &str, value: &Value, values: &[Value]) -> FieldError {
    let shown = |v: &Value| match v {
        Value::String(s) => format!("{s:?}"),
        Value::Number(_) => go_number(v),
        other => other.to_string(),
    };
    let allowed: Vec<String> = values
        .iter()
        .map(|v| match v {
            Value::String(s) => format!("{s:?}"),
            other => format!("{:?}", other.to_string()),
        })
        .collect();
    FieldError { field: path.into(), detail: format!("Unsupported value: {}: supported values: {}", shown(value), allowed.join(", ")) }
}

fn parse_node(value: &Value, path: &str, place: Place, errs: &mut Vec<FieldError>) -> Schema {
    let Some(map) = value.as_object() else {
        errs.push(FieldError::invalid(path, value, "must be an object"));
        return Schema::default();
    };
    let mut s = Schema::default();
    let text = |k: &str| map.get(k).and_then(Value::as_str).map(str::to_string);
    let flag = |k: &str| map.get(k).and_then(Value::as_bool).unwrap_or(false);
    let count = |k: &str| map.get(k).and_then(Value::as_u64);
    s.type_ = text("type").unwrap_or_default();
    s.nullable = flag("nullable");
    s.int_or_string = flag("x-kubernetes-int-or-string");
    s.preserve_unknown_fields = flag("x-kubernetes-preserve-unknown-fields");
    s.embedded_resource = flag("x-kubernetes-embedded-resource");
    s.minimum = map.get("minimum").and_then(Value::as_f64);
    s.maximum = map.get("maximum").and_then(Value::as_f64);
    s.exclusive_minimum = flag("exclusiveMinimum");
    s.exclusive_maximum = flag("exclusiveMaximum");
    s.min_length = count("minLength");
    s.max_length = count("maxLength");
    s.min_items = count("minItems");
    s.max_items = count("maxItems");
    s.default = map.get("default").cloned();
    s.enum_ = map.get("enum").and_then(Value::as_array).cloned();
    s.required = map
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).map(str::to_string).collect())
        .unwrap_or_default();
    if let Some(p) = text("pattern") {
        match super::pattern::Pattern::new(&p) {
            Ok(re) => s.pattern = Some((p, re)),
            Err(e) => errs.push(FieldError::invalid(
                &format!("{path}.pattern"),
                format!("{p:?}"),
                &format!("must be a valid regular expression, but isn't: {e}"),
            )),
        }
    }
    check_keywords(map, path, errs);
    check_format(&mut s, text("format"), path, errs);
    check_structural(&s, path, place, errs);
    if let Some(props) = map.get("properties").and_then(Value::as_object) {
        for (name, prop) in props {
            s.properties.insert(name.clone(), parse_node(prop, &format!("{path}.properties[{name}]"), Place::Property, errs));
        }
    }
    match map.get("additionalProperties") {
        Some(Value::Bool(false)) | None => {}
        Some(Value::Bool(true)) => errs.push(FieldError::forbidden(&format!("{path}.additionalProperties"), "must not be used if properties are specified or if additionalProperties is true; use x-kubernetes-preserve-unknown-fields instead")),
        Some(extra) => {
            if !s.properties.is_empty() {
                errs.push(FieldError::forbidden(&format!("{path}.additionalProperties"), "additionalProperties and properties are mutual exclusive"));
            }
            s.additional_properties = Some(Box::new(parse_node(extra, &format!("{path}.additionalProperties"), Place::Property, errs)));
        }
    }
    if let Some(items) = map.get("items") {
        s.items = Some(Box::new(parse_node(items, &format!("{path}.items"), Place::Item, errs)));
    } else if s.type_ == "array" {
        errs.push(FieldError::required_why(&format!("{path}.items"), "must be specified"));
    }
    s
}

/// Refuses what kubeloop does not evaluate, saying so, instead of applying the schema without it.
fn check_keywords(map: &Map<String, Value>, path: &str, errs: &mut Vec<FieldError>) {
    if map.get("x-kubernetes-validations").and_then(Value::as_array).is_some_and(|rules| !rules.is_empty()) {
        errs.push(FieldError::forbidden(
            &format!("{path}.x-kubernetes-validations"),
            "CEL validation rules are not modelled by kubeloop: the CustomResourceDefinition is refused rather than served without them",
        ));
    }
    if let Some(kind) = map.get("x-kubernetes-list-type").and_then(Value::as_str).filter(|k| *k != "atomic") {
        errs.push(FieldError::forbidden(
            &format!("{path}.x-kubernetes-list-type"),
            &format!("list type {kind:?} (its uniqueness rules) is not modelled by kubeloop; only \"atomic\" is"),
        ));
    }
    for key in map.keys() {
        if UNMODELLED.contains(&key.as_str()) {
            errs.push(FieldError::forbidden(&format!("{path}.{key}"), &format!("{key:?} is not modelled by kubeloop")));
        }
    }
}

fn check_format(s: &mut Schema, format: Option<String>, path: &str, errs: &mut Vec<FieldError>) {
    match format.as_deref() {
        None | Some("") => {}
        Some("int32" | "int64" | "float" | "double" | "date-time") => s.format = format,
        Some(other) => {
            errs.push(FieldError::forbidden(&format!("{path}.format"), &format!("format {other:?} is not modelled by kubeloop")))
        }
    }
    let _ = DOCUMENTATION;
}

/// The structural rules (`ValidateStructural`) that matter for what is applied: every node has
/// a type unless it may hold anything, and the root is an object.
fn check_structural(s: &Schema, path: &str, place: Place, errs: &mut Vec<FieldError>) {
    const TYPES: [&str; 6] = ["array", "boolean", "integer", "number", "object", "string"];
    if s.type_.is_empty() && !s.int_or_string && !s.preserve_unknown_fields {
        let why = match place {
            Place::Root => "must not be empty at the root",
            Place::Property => "must not be empty for specified object fields",
            Place::Item => "must not be empty for specified array items",
        };
        errs.push(FieldError::required_why(&format!("{path}.type"), why));
    } else if !s.type_.is_empty() && !TYPES.contains(&s.type_.as_str()) {
        errs.push(FieldError::unsupported(&format!("{path}.type"), &s.type_, &TYPES));
    } else if place == Place::Root && !s.type_.is_empty() && s.type_ != "object" {
        errs.push(FieldError::invalid(&format!("{path}.type"), format!("{:?}", s.type_), "must be object at the root"));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn schema(v: Value) -> Schema {
        let mut errs = Vec::new();
        let s = Schema::parse(&v, "s", &mut errs);
        assert!(errs.is_empty(), "{errs:?}");
        s
    }

    fn errors(s: &Schema, v: Value) -> Vec<String> {
        let mut errs = Vec::new();
        s.validate(&v, "", &mut errs);
        errs.iter().map(ToString::to_string).collect()
    }

    fn crontab() -> Schema {
        schema(json!({"type": "object", "properties": {"spec": {"type": "object", "required": ["image"], "properties": {
            "image": {"type": "string", "minLength": 3, "maxLength": 10, "pattern": "^[a-z:.0-9]+$"},
            "replicas": {"type": "integer", "minimum": 1, "maximum": 10, "default": 1},
            "ratio": {"type": "number", "exclusiveMinimum": true, "minimum": 0, "exclusiveMaximum": true, "maximum": 1},
            "mode": {"type": "string", "enum": ["Fast", "Slow"]},
            "ports": {"type": "array", "minItems": 1, "maxItems": 2, "items": {"type": "integer"}},
            "port": {"x-kubernetes-int-or-string": true},
            "note": {"type": "string", "nullable": true},
            "extra": {"type": "object", "x-kubernetes-preserve-unknown-fields": true},
            "labels": {"type": "object", "additionalProperties": {"type": "string"}},
        }}}}))
    }

    #[test]
    fn each_rule_refuses_with_kube_openapis_message() {
        let s = crontab();
        let cases = [
            (json!({"spec": {}}), "spec.image: Required value"),
            (
                json!({"spec": {"image": 7}}),
                r#"spec.image: Invalid value: "integer": spec.image in body must be of type string: "integer""#,
            ),
            (json!({"spec": {"image": "ab"}}), r#"spec.image: Invalid value: "ab": spec.image in body should be at least 3 chars long"#),
            (json!({"spec": {"image": "abcdefghijk"}}), "spec.image: Too long: may not be longer than 10"),
            (json!({"spec": {"image": "NGINX"}}), r#"spec.image: Invalid value: "NGINX": spec.image in body should match '^[a-z:.0-9]+$'"#),
            (
                json!({"spec": {"image": "nginx", "replicas": 0}}),
                "spec.replicas: Invalid value: 0: spec.replicas in body should be greater than or equal to 1",
            ),
            (
                json!({"spec": {"image": "nginx", "replicas": 11}}),
                "spec.replicas: Invalid value: 11: spec.replicas in body should be less than or equal to 10",
            ),
            (json!({"spec": {"image": "nginx", "ratio": 0}}), "spec.ratio: Invalid value: 0: spec.ratio in body should be greater than 0"),
            (json!({"spec": {"image": "nginx", "ratio": 1.0}}), "spec.ratio: Invalid value: 1: spec.ratio in body should be less than 1"),
            (
                json!({"spec": {"image": "nginx", "mode": "Medium"}}),
                r#"spec.mode: Unsupported value: "Medium": supported values: "Fast", "Slow""#,
            ),
            (
                json!({"spec": {"image": "nginx", "ports": []}}),
                "spec.ports: Invalid value: 0: spec.ports in body should have at least 1 items",
            ),
            (json!({"spec": {"image": "nginx", "ports": [1, 2, 3]}}), "spec.ports: Too many: 3: must have at most 2 items"),
            (
                json!({"spec": {"image": "nginx", "ports": ["a"]}}),
                r#"spec.ports[0]: Invalid value: "string": spec.ports[0] in body must be of type integer: "string""#,
            ),
            (
                json!({"spec": {"image": "nginx", "port": true}}),
                r#"spec.port: Invalid value: "boolean": spec.port in body must be of type integer,string: "boolean""#,
            ),
            (
                json!({"spec": {"image": "nginx", "replicas": null}}),
                r#"spec.replicas: Invalid value: "null": spec.replicas in body must be of type integer: "null""#,
            ),
            (
                json!({"spec": {"image": "nginx", "labels": {"a": 1}}}),
                r#"spec.labels.a: Invalid value: "integer": spec.labels.a in body must be of type string: "integer""#,
            ),
        ];
        for (value, want) in cases {
            assert_eq!(errors(&s, value.clone()), vec![want.to_string()], "{value}");
        }
        let fine = json!({"spec": {"image": "nginx", "replicas": 2.0, "port": "http", "note": null, "extra": {"x": 1}, "ports": [80]}});
        assert_eq!(errors(&s, fine), Vec::<String>::new());
    }

    #[test]
    fn defaults_fill_absent_fields_and_pruning_drops_unknown_ones() {
        let s = crontab();
        let mut v = json!({"spec": {"image": "nginx", "replicas": null, "unknown": 1, "extra": {"kept": true}}, "other": 2});
        s.prune(&mut v);
        s.default_value(&mut v);
        assert_eq!(v, json!({"spec": {"image": "nginx", "replicas": 1, "extra": {"kept": true}}}));
    }

    #[test]
    fn unstructural_and_unmodelled_schemas_are_refused_saying_why() {
        let refused = |v: Value| {
            let mut errs = Vec::new();
            Schema::parse(&v, "s", &mut errs);
            errs.iter().map(ToString::to_string).collect::<Vec<_>>()
        };
        assert_eq!(refused(json!({"type": "string"})), vec![r#"s.type: Invalid value: "string": must be object at the root"#]);
        assert_eq!(
            refused(json!({"type": "object", "properties": {"spec": {"properties": {}}}})),
            vec!["s.properties[spec].type: Required value: must not be empty for specified object fields"]
        );
        let cel = refused(json!({"type": "object", "x-kubernetes-validations": [{"rule": "self.a > 0"}]}));
        assert_eq!(cel.len(), 1);
        assert!(cel[0].starts_with("s.x-kubernetes-validations: Forbidden: CEL validation rules are not modelled"), "{cel:?}");
        assert_eq!(refused(json!({"type": "object", "anyOf": []})), vec![r#"s.anyOf: Forbidden: "anyOf" is not modelled by kubeloop"#]);
    }
}
