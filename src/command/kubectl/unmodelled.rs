//! The fields of a manifest kubeloop reads but does not simulate, named so that nobody takes
//! their silence for an effect.
//!
//! The decoders keep only what the simulation models (`model::decode`), as kubectl's lenient
//! decoding would. Applying `pods/probe/exec-liveness.yaml` must not look like a cluster where
//! liveness probes never fail, so each field that decoding dropped is reported the way kubectl
//! relays a server's warnings: `Warning: ...` on stderr, one line per field, and the write goes
//! on. The check compares the document as written with the object it decoded to: a field with
//! a value in the first and absent from the second was not modelled.

use serde_json::Value;

/// The warnings for the fields of `raw` missing from `decoded` (its JSON), in document order.
pub fn warnings(raw: &Value, decoded: &Value) -> Vec<String> {
    let mut paths = Vec::new();
    if let (Value::Object(raw), Value::Object(decoded)) = (raw, decoded) {
        for (key, value) in raw {
            // Status is the cluster's to write; the API server drops a manifest's status anyway.
            if key == "status" {
                continue;
            }
            missing(value, decoded.get(key), key.clone(), &mut paths);
        }
    }
    paths.into_iter().map(|p| format!("Warning: kubeloop does not simulate {p}: it is not stored and has no effect here")).collect()
}

/// Warnings for values that are stored but that the simulation does not honour yet, so that a
/// learner is told rather than shown the wrong behaviour in silence.
pub fn approximations(object: &crate::model::Object) -> Vec<String> {
    let mut out = Vec::new();
    if let crate::model::Object::StorageClass(sc) = object {
        if sc.volume_binding_mode.as_deref() == Some("WaitForFirstConsumer") {
            out.push(
                "Warning: kubeloop does not simulate volumeBindingMode WaitForFirstConsumer yet: claims of this class are provisioned and bound at once, as with Immediate"
                    .to_string(),
            );
        }
    }
    out
}

/// Whether a value says nothing (what Go's `omitempty` leaves out, and an explicit false).
fn is_empty(v: &Value) -> bool {
    match v {
        Value::Null | Value::Bool(false) => true,
        Value::String(s) => s.is_empty(),
        Value::Array(a) => a.is_empty(),
        Value::Object(o) => o.is_empty(),
        Value::Number(_) | Value::Bool(true) => false,
    }
}

fn missing(raw: &Value, decoded: Option<&Value>, path: String, out: &mut Vec<String>) {
    if is_empty(raw) {
        return;
    }
    let Some(decoded) = decoded else {
        out.push(path);
        return;
    };
    match (raw, decoded) {
        (Value::Object(r), Value::Object(d)) => {
            for (key, value) in r {
                missing(value, d.get(key), format!("{path}.{key}"), out);
            }
        }
        (Value::Array(r), Value::Array(d)) => {
            for (i, value) in r.iter().enumerate() {
                missing(value, d.get(i), format!("{path}[{i}]"), out);
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_dropped_field_is_named_by_its_path_and_empty_ones_are_not() {
        let raw = json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "creationTimestamp": null},
            "spec": {"containers": [{"name": "c", "image": "busybox", "livenessProbe": {"exec": {"command": ["cat"]}}, "env": []}],
                "dnsPolicy": "ClusterFirst", "hostNetwork": false},
            "status": {"phase": "Running"}});
        let decoded = json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
            "spec": {"containers": [{"name": "c", "image": "busybox"}]}});
        assert_eq!(
            warnings(&raw, &decoded),
            [
                "Warning: kubeloop does not simulate spec.containers[0].livenessProbe: it is not stored and has no effect here",
                "Warning: kubeloop does not simulate spec.dnsPolicy: it is not stored and has no effect here",
            ]
        );
        assert!(warnings(&decoded, &decoded).is_empty());
    }
}
