//! Reading the model out of JSON values, written by hand.
//!
//! serde's derived `Deserialize` was about a sixth of the page's wasm: every struct got its own
//! field visitor, map and sequence visitors and a copy of the `null`-as-default helper per field
//! type. Here one small, non-generic routine (`fill_struct`) walks any struct's fields from a
//! table, and each struct only supplies "field i gets this value". What it accepts and the
//! messages it gives are serde's, exactly: a struct reads from a map (unknown keys ignored) or from
//! a sequence in field order; `null` is `None` for options and the default for fields that Go
//! decodes that way; leaves (strings, numbers, booleans) still go through serde itself, so
//! "invalid type: string \"three\", expected i32" reads as before. The tests compare this against
//! the derived decoders (kept for tests only) over many malformed manifests.

use serde::de::{Error as _, Unexpected};
use serde_json::{Error, Value};
use std::collections::BTreeMap;

/// A decoding result; the error is serde_json's message for the first problem found.
pub(crate) type Decoded<T> = Result<T, String>;

/// A model type that can be read from a JSON value.
pub(crate) trait FromValue: Sized {
    fn from_value(v: &Value) -> Decoded<Self>;
}

/// How a struct field behaves when it is absent (or, for `NullAsDefault`, `null`).
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Field {
    /// No default: absent is "missing field".
    Required,
    /// `#[serde(default)]`: absent is the default; `null` goes to the field's own decoder.
    Default,
    /// Absent or `null` is the default, as Go's decoder treats maps and slices.
    NullAsDefault,
}

/// Leaves go through serde so their messages are serde's own.
macro_rules! serde_leaf {
    ($($t:ty),*) => {$(
        impl FromValue for $t {
            fn from_value(v: &Value) -> Decoded<Self> {
                <$t as serde::Deserialize>::deserialize(v).map_err(|e| e.to_string())
            }
        }
    )*};
}
serde_leaf!(String, bool, i32, i64);

impl<T: FromValue> FromValue for Option<T> {
    fn from_value(v: &Value) -> Decoded<Self> {
        match v {
            Value::Null => Ok(None),
            other => T::from_value(other).map(Some),
        }
    }
}

impl<T: FromValue> FromValue for Vec<T> {
    fn from_value(v: &Value) -> Decoded<Self> {
        match v {
            // A loop rather than `collect` into a `Result`: the same result, and less code per
            // element type than the iterator adapters `collect` instantiates.
            Value::Array(items) => {
                let mut out = Vec::with_capacity(items.len());
                for item in items {
                    out.push(T::from_value(item)?);
                }
                Ok(out)
            }
            other => Err(invalid_type(other, "a sequence")),
        }
    }
}

impl<V: FromValue> FromValue for BTreeMap<String, V> {
    fn from_value(v: &Value) -> Decoded<Self> {
        match v {
            Value::Object(map) => {
                let mut out = BTreeMap::new();
                for (k, v) in map {
                    out.insert(k.clone(), V::from_value(v)?);
                }
                Ok(out)
            }
            other => Err(invalid_type(other, "a map")),
        }
    }
}

/// What serde calls the value when it is of the wrong type.
fn unexpected(v: &Value) -> Unexpected<'_> {
    match v {
        Value::Null => Unexpected::Unit,
        Value::Bool(b) => Unexpected::Bool(*b),
        Value::Number(n) => match (n.as_u64(), n.as_i64()) {
            (Some(u), _) => Unexpected::Unsigned(u),
            (None, Some(i)) => Unexpected::Signed(i),
            (None, None) => Unexpected::Float(n.as_f64().unwrap_or_default()),
        },
        Value::String(s) => Unexpected::Str(s),
        Value::Array(_) => Unexpected::Seq,
        Value::Object(_) => Unexpected::Map,
    }
}

/// "invalid type: …, expected …", worded by serde_json.
pub(crate) fn invalid_type(v: &Value, expected: &str) -> String {
    Error::invalid_type(unexpected(v), &expected).to_string()
}

/// A free-form message, passed through serde_json's error as the derived decoders did.
pub(crate) fn custom(message: String) -> String {
    Error::custom(message).to_string()
}

/// Fills a struct from `v` as serde's derived `Deserialize` does, calling `set(i, value)` for
/// each field present (in `fields`' order for a sequence, in the map's order for a map). The
/// struct starts from its default; `name` is the Rust type's name, as serde's messages give it.
pub(crate) fn fill_struct(
    v: &Value,
    name: &str,
    fields: &[(&str, Field)],
    set: &mut dyn FnMut(usize, &Value) -> Decoded<()>,
) -> Decoded<()> {
    let mut put = |i: usize, value: &Value| {
        if fields[i].1 == Field::NullAsDefault && value.is_null() {
            Ok(())
        } else {
            set(i, value)
        }
    };
    match v {
        Value::Object(map) => {
            let mut seen = vec![false; fields.len()];
            for (key, value) in map {
                if let Some(i) = fields.iter().position(|(k, _)| k == key) {
                    seen[i] = true;
                    put(i, value)?;
                }
            }
            match fields.iter().zip(&seen).find(|((_, f), seen)| *f == Field::Required && !**seen) {
                Some(((key, _), _)) => Err(custom(format!("missing field `{key}`"))),
                None => Ok(()),
            }
        }
        Value::Array(items) => {
            for (i, (_, field)) in fields.iter().enumerate() {
                match items.get(i) {
                    Some(value) => put(i, value)?,
                    None if *field == Field::Required => {
                        let expected = format!("struct {name} with {} elements", fields.len());
                        return Err(Error::invalid_length(i, &expected.as_str()).to_string());
                    }
                    None => {}
                }
            }
            if items.len() > fields.len() {
                return Err(Error::invalid_length(items.len(), &"fewer elements in array").to_string());
            }
            Ok(())
        }
        other => Err(invalid_type(other, &format!("struct {name}"))),
    }
}

/// A fieldless enum's variant index, read as serde reads an externally tagged enum: a string, or
/// a map with the variant as its single key and `null` as its value.
pub(crate) fn unit_variant(v: &Value, variants: &'static [&'static str]) -> Decoded<usize> {
    let (name, content) = match v {
        Value::String(s) => (s.as_str(), None),
        Value::Object(map) if map.len() == 1 => match map.iter().next() {
            Some((k, c)) => (k.as_str(), Some(c)),
            None => return Err(Error::invalid_value(Unexpected::Map, &"map with a single key").to_string()),
        },
        Value::Object(_) => return Err(Error::invalid_value(Unexpected::Map, &"map with a single key").to_string()),
        other => return Err(invalid_type(other, "string or map")),
    };
    let Some(index) = variants.iter().position(|x| *x == name) else {
        return Err(Error::unknown_variant(name, variants).to_string());
    };
    match content {
        Some(c) if !c.is_null() => Err(invalid_type(c, "unit")),
        _ => Ok(index),
    }
}

/// `impl FromValue` for a struct from its fields in declaration order: `field: "jsonName" Mode`.
macro_rules! decode_struct {
    ($ty:ident { $($field:ident : $key:literal $mode:ident $(=> $with:path)?),* $(,)? }) => {
        impl $crate::model::decode::FromValue for $ty {
            fn from_value(v: &serde_json::Value) -> Result<Self, String> {
                use $crate::model::decode::{Field, FromValue};
                let mut out = $ty::default();
                let fields = [$(($key, Field::$mode)),*];
                $crate::model::decode::fill_struct(v, stringify!($ty), &fields, &mut |i, v| {
                    let mut n = 0usize;
                    $(
                        if i == n {
                            out.$field = $crate::model::decode::field_decoder!($($with)?)(v)?;
                            return Ok(());
                        }
                        n += 1;
                    )*
                    let _ = n;
                    Ok(())
                })?;
                Ok(out)
            }
        }
    };
}
pub(crate) use decode_struct;

/// A field's decoder: its type's `FromValue`, or the function named after `=>`.
macro_rules! field_decoder {
    () => {
        FromValue::from_value
    };
    ($with:path) => {
        $with
    };
}
pub(crate) use field_decoder;

#[cfg(test)]
mod tests {
    use crate::model::*;
    use serde_json::{json, Value};

    /// `Object::from_json` as it was, with serde's derived decoders (kept for tests only).
    fn via_serde(value: Value) -> Result<Object, String> {
        let kind = value.get("kind").and_then(Value::as_str).unwrap_or_default().to_string();
        let decode_err = |e: serde_json::Error| format!("error decoding {kind}: {e}");
        Ok(match Kind::from_kind_str(&kind).ok_or("kind")? {
            Kind::Node => Object::Node(serde_json::from_value(value).map_err(decode_err)?),
            Kind::Pod => Object::Pod(serde_json::from_value(value).map_err(decode_err)?),
            Kind::ReplicaSet => Object::ReplicaSet(serde_json::from_value(value).map_err(decode_err)?),
            Kind::Deployment => Object::Deployment(serde_json::from_value(value).map_err(decode_err)?),
            Kind::Event => Object::Event(serde_json::from_value(value).map_err(decode_err)?),
            Kind::Lease => Object::Lease(serde_json::from_value(value).map_err(decode_err)?),
        })
    }

    fn meta() -> Value {
        json!({"name": "web", "generateName": "web-", "namespace": "default", "uid": "u1", "resourceVersion": "12",
            "generation": 3, "creationTimestamp": "2026-01-01T00:00:05Z", "deletionTimestamp": "2026-01-01T00:01:00Z",
            "deletionGracePeriodSeconds": 30, "labels": {"app": "web"}, "annotations": {"a": "b"},
            "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web-1", "uid": "u0", "controller": true, "blockOwnerDeletion": true}],
            "finalizers": ["f"]})
    }

    fn pod_spec() -> Value {
        json!({"containers": [{"name": "c", "image": "nginx", "imagePullPolicy": "Always",
                "resources": {"requests": {"cpu": "100m", "memory": 5}, "limits": {"cpu": 1.5}},
                "ports": [{"containerPort": 80, "hostPort": 8080, "protocol": "TCP", "name": "http"}], "command": ["sh"], "args": ["-c"]}],
            "nodeName": "n1", "nodeSelector": {"disk": "ssd"},
            "affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
                {"matchExpressions": [{"key": "k", "operator": "In", "values": ["a"]}], "matchFields": []}]},
                "preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 5, "preference": {"matchExpressions": []}}]}},
            "tolerations": [{"key": "k", "operator": "Exists", "value": "v", "effect": "NoSchedule", "tolerationSeconds": 30}],
            "restartPolicy": "Always", "terminationGracePeriodSeconds": 30, "schedulerName": "default-scheduler", "priority": 0})
    }

    fn objects() -> Vec<Value> {
        let template = json!({"metadata": meta(), "spec": pod_spec()});
        let selector = json!({"matchLabels": {"app": "web"}, "matchExpressions": [{"key": "t", "operator": "In", "values": ["a"]}]});
        vec![
            json!({"apiVersion": "v1", "kind": "Pod", "metadata": meta(), "spec": pod_spec(), "status": {
                "phase": "Running", "conditions": [{"type": "Ready", "status": "True", "lastProbeTime": null,
                    "lastTransitionTime": "2026-01-01T00:00:07Z", "reason": "r", "message": "m"}],
                "message": "m", "reason": "r", "hostIP": "10.0.0.1", "podIP": "10.1.0.2", "startTime": "2026-01-01T00:00:06Z",
                "containerStatuses": [{"name": "c", "state": {"waiting": {"reason": "ContainerCreating", "message": "m"},
                    "running": {"startedAt": "2026-01-01T00:00:08Z"}, "terminated": {"exitCode": 1, "reason": "Error",
                    "startedAt": "2026-01-01T00:00:08Z", "finishedAt": "2026-01-01T00:00:09Z"}}, "lastState": {},
                    "ready": true, "restartCount": 2, "image": "nginx", "imageID": "sha", "containerID": "containerd://1", "started": true}],
                "nominatedNodeName": "n2"}}),
            json!({"apiVersion": "v1", "kind": "Node", "metadata": meta(), "spec": {"unschedulable": true,
                "taints": [{"key": "k", "value": "v", "effect": "NoExecute", "timeAdded": "2026-01-01T00:00:05Z"}], "podCIDR": "10.1.0.0/24"},
                "status": {"capacity": {"cpu": "4", "pods": 110}, "allocatable": {"memory": "8Gi"},
                    "conditions": [{"type": "Ready", "status": "True", "lastHeartbeatTime": "2026-01-01T00:00:05Z",
                        "lastTransitionTime": "2026-01-01T00:00:05Z", "reason": "KubeletReady", "message": "m"}],
                    "addresses": [{"type": "InternalIP", "address": "10.0.0.1"}],
                    "nodeInfo": {"kubeletVersion": "v1.31.0", "containerRuntimeVersion": "c", "osImage": "o", "architecture": "amd64", "operatingSystem": "linux"}}}),
            json!({"apiVersion": "apps/v1", "kind": "ReplicaSet", "metadata": meta(), "spec": {"replicas": 3, "minReadySeconds": 5,
                "selector": selector, "template": template}, "status": {"replicas": 3, "fullyLabeledReplicas": 3, "readyReplicas": 2,
                "availableReplicas": 2, "observedGeneration": 4}}),
            json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": meta(), "spec": {"replicas": 3, "selector": selector,
                "template": template, "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": "25%", "maxSurge": 1}},
                "minReadySeconds": 1, "revisionHistoryLimit": 10, "paused": false, "progressDeadlineSeconds": 600},
                "status": {"observedGeneration": 2, "replicas": 3, "updatedReplicas": 3, "readyReplicas": 3, "availableReplicas": 3,
                    "unavailableReplicas": 0, "conditions": [{"type": "Available", "status": "True", "lastUpdateTime": "2026-01-01T00:00:05Z",
                        "lastTransitionTime": "2026-01-01T00:00:05Z", "reason": "r", "message": "m"}], "collisionCount": 1}}),
            json!({"apiVersion": "v1", "kind": "Event", "metadata": meta(), "involvedObject": {"kind": "Pod", "namespace": "default",
                "name": "web", "uid": "u", "apiVersion": "v1", "fieldPath": "spec"}, "reason": "Scheduled", "message": "m",
                "source": {"component": "c", "host": "h"}, "firstTimestamp": "2026-01-01T00:00:05Z", "lastTimestamp": "2026-01-01T00:00:05Z",
                "count": 1, "type": "Normal", "reportingComponent": "c", "reportingInstance": "i"}),
            json!({"apiVersion": "coordination.k8s.io/v1", "kind": "Lease", "metadata": meta(), "spec": {"holderIdentity": "n1",
                "leaseDurationSeconds": 40, "renewTime": "2026-01-01T00:00:05.123456Z"}}),
        ]
    }

    /// Every value a mutation puts in a field's place: each JSON type, numbers out of range,
    /// strings the leaf decoders reject, and the shapes serde reads structs and enums from.
    fn replacements() -> Vec<Value> {
        let mut out = vec![
            json!(null),
            json!(true),
            json!(0),
            json!(-1),
            json!(1.5),
            json!(3.0),
            json!(5_000_000_000u64),
            json!(u64::MAX),
            json!(1e20),
            json!(""),
            json!("x"),
            json!("25%"),
            json!("12"),
            json!("100m"),
            json!("2026-01-01T00:00:00Z"),
            json!("Running"),
            json!([]),
            json!([1]),
            json!(["a", "b"]),
            json!([null]),
            json!({}),
            json!({"a": 1}),
            json!({"Running": null}),
            json!({"Running": 1}),
            json!({"Bogus": null}),
            json!({"a": null, "b": null}),
            json!(["n", "g", "ns"]),
        ];
        out.push(Value::Array(vec![json!("a"); 20]));
        out
    }

    /// Every place in `v` (as a JSON pointer).
    fn paths(v: &Value, at: String, out: &mut Vec<String>) {
        match v {
            Value::Object(m) => m.iter().for_each(|(k, c)| paths(c, format!("{at}/{k}"), out)),
            Value::Array(a) => a.iter().enumerate().for_each(|(i, c)| paths(c, format!("{at}/{i}"), out)),
            _ => {}
        }
        out.push(at);
    }

    fn same(v: Value) {
        let ours = Object::from_json(v.clone());
        let theirs = via_serde(v.clone());
        assert_eq!(ours, theirs, "decoding {v}");
    }

    #[test]
    fn hand_written_decoders_read_every_mutation_as_serde_did() {
        let mut checked = 0;
        for object in objects() {
            same(object.clone());
            let mut places = Vec::new();
            paths(&object, String::new(), &mut places);
            for place in places.iter().filter(|p| !p.is_empty() && *p != "/kind" && *p != "/apiVersion") {
                for r in replacements() {
                    let mut v = object.clone();
                    *v.pointer_mut(place).unwrap() = r;
                    same(v);
                    checked += 1;
                }
                // The field removed, and an object read as the sequence of its values.
                let (parent, key) = place.rsplit_once('/').unwrap();
                let mut v = object.clone();
                if let Some(Value::Object(m)) = v.pointer_mut(parent) {
                    m.remove(key);
                    same(v);
                }
                let mut v = object.clone();
                if let Some(target @ Value::Object(_)) = v.pointer_mut(place) {
                    let values: Vec<Value> = target.as_object().unwrap().values().cloned().collect();
                    *target = Value::Array(values);
                    same(v);
                }
            }
        }
        assert!(checked > 5000, "{checked}");
    }

    #[test]
    fn to_json_through_text_is_the_value_serde_builds() {
        for v in objects() {
            let o = Object::from_json(v).unwrap();
            let body = match &o {
                Object::Node(x) => serde_json::to_value(x),
                Object::Pod(x) => serde_json::to_value(x),
                Object::ReplicaSet(x) => serde_json::to_value(x),
                Object::Deployment(x) => serde_json::to_value(x),
                Object::Event(x) => serde_json::to_value(x),
                Object::Lease(x) => serde_json::to_value(x),
            };
            let mut want = body.unwrap();
            want["apiVersion"] = json!(o.kind().api_version());
            want["kind"] = json!(o.kind().as_str());
            assert_eq!(o.to_json(), want);
            assert_eq!(Object::from_json(o.to_json()).as_ref(), Ok(&o));
        }
    }

    #[test]
    fn messages_read_as_serdes() {
        let pod = |spec: Value| Object::from_json(json!({"apiVersion": "v1", "kind": "Pod", "spec": spec})).unwrap_err();
        assert_eq!(pod(json!({"priority": "three"})), "error decoding Pod: invalid type: string \"three\", expected i32");
        assert_eq!(pod(json!({"priority": 1.5})), "error decoding Pod: invalid type: floating point `1.5`, expected i32");
        assert_eq!(pod(json!({"priority": 5_000_000_000u64})), "error decoding Pod: invalid value: integer `5000000000`, expected i32");
        assert_eq!(pod(json!({"containers": {}})), "error decoding Pod: invalid type: map, expected a sequence");
        assert_eq!(pod(json!({"tolerations": [{"key": null}]})), "error decoding Pod: invalid type: null, expected a string");
        assert_eq!(pod(json!({"affinity": 3})), "error decoding Pod: invalid type: integer `3`, expected struct Affinity");
        let pod = |status: Value| Object::from_json(json!({"apiVersion": "v1", "kind": "Pod", "status": status})).unwrap_err();
        assert_eq!(
            pod(json!({"phase": "Done"})),
            "error decoding Pod: unknown variant `Done`, expected one of `Pending`, `Running`, `Succeeded`, `Failed`, `Unknown`"
        );
        assert_eq!(pod(json!({"conditions": [{"type": "Ready"}]})), "error decoding Pod: missing field `status`");
        assert_eq!(pod(json!({"startTime": "yesterday"})), "error decoding Pod: invalid time \"yesterday\"");
    }
}
