//! Reading the protobuf bodies kubectl's typed clients send (`application/vnd.kubernetes.protobuf`:
//! `kubectl create deployment|namespace|configmap|secret|job`, `drain`'s deletions), as JSON.
//!
//! A body is the `k8s\0` magic and a `runtime.Unknown` whose `typeMeta` names the kind and whose
//! `raw` is the object. The object is decoded with upstream's field numbers
//! (`proto_schema.txt`, written by `scripts/proto-schema.py` from kubernetes/api and
//! apimachinery) into the JSON the same object would have been sent as — the types whose JSON is
//! not their message (times, quantities, int-or-strings, raw extensions) converted, embedded
//! structs inlined — and then goes the way of every JSON body. A field kubeloop has no number
//! for is refused, never skipped. Answers stay JSON, which client-go reads whatever it sent.

use serde_json::{Map, Value};
use std::collections::HashMap;
use std::sync::OnceLock;

/// `(number, name, label, type)` per message, from the generated schema.
type Schema = HashMap<&'static str, HashMap<u32, FieldDef>>;

struct FieldDef {
    name: &'static str,
    repeated: bool,
    /// A map's key and value types.
    map: Option<(&'static str, &'static str)>,
    type_: &'static str,
}

fn schema() -> &'static Schema {
    static SCHEMA: OnceLock<Schema> = OnceLock::new();
    SCHEMA.get_or_init(|| {
        let mut schema: Schema = HashMap::new();
        let mut current = None;
        for line in include_str!("proto_schema.txt").lines().filter(|l| !l.starts_with('#')) {
            if let Some(name) = line.strip_prefix("message ") {
                schema.insert(name, HashMap::new());
                current = Some(name);
                continue;
            }
            let parts: Vec<&'static str> = line.split(' ').collect();
            let (Some(message), [number, name, label, type_]) = (current, parts.as_slice()) else { continue };
            let Ok(number) = number.parse() else { continue };
            let map = (*label == "map").then(|| type_.split_once(',')).flatten();
            let field = FieldDef { name, repeated: *label == "repeated", map, type_ };
            schema.entry(message).or_default().insert(number, field);
        }
        schema
    })
}

/// The fields whose Go struct is embedded with `json:",inline"`: their members sit in the parent.
const INLINE: [&str; 5] = ["volumeSource", "persistentVolumeSource", "probeHandler", "localObjectReference", "ephemeralContainerCommon"];

const META: &str = "k8s.io.apimachinery.pkg.apis.meta.v1.";

/// One field on the wire.
enum Wire<'a> {
    Varint(u64),
    Fixed64(u64),
    Len(&'a [u8]),
    Fixed32(u32),
}

fn varint(buf: &[u8], at: &mut usize) -> Result<u64, String> {
    let mut value = 0u64;
    for shift in (0..64).step_by(7) {
        let byte = *buf.get(*at).ok_or("truncated varint")?;
        *at += 1;
        value |= u64::from(byte & 0x7f) << shift;
        if byte & 0x80 == 0 {
            return Ok(value);
        }
    }
    Err("varint too long".into())
}

fn fields(buf: &[u8]) -> Result<Vec<(u32, Wire<'_>)>, String> {
    let mut out = Vec::new();
    let mut at = 0;
    while at < buf.len() {
        let key = varint(buf, &mut at)?;
        let number = u32::try_from(key >> 3).map_err(|_| "field number out of range")?;
        let take = |at: &mut usize, n: usize| -> Result<&[u8], String> {
            let end = at.checked_add(n).filter(|e| *e <= buf.len()).ok_or("truncated field")?;
            let slice = &buf[*at..end];
            *at = end;
            Ok(slice)
        };
        let wire = match key & 7 {
            0 => Wire::Varint(varint(buf, &mut at)?),
            1 => Wire::Fixed64(u64::from_le_bytes(take(&mut at, 8)?.try_into().map_err(|_| "truncated")?)),
            2 => {
                let n = usize::try_from(varint(buf, &mut at)?).map_err(|_| "length out of range")?;
                Wire::Len(take(&mut at, n)?)
            }
            5 => Wire::Fixed32(u32::from_le_bytes(take(&mut at, 4)?.try_into().map_err(|_| "truncated")?)),
            other => return Err(format!("unsupported wire type {other}")),
        };
        out.push((number, wire));
    }
    Ok(out)
}

/// A whole request body as JSON.
pub(crate) fn decode_body(body: &[u8]) -> Result<Value, String> {
    let unknown = body.strip_prefix(b"k8s\0").ok_or("the body is not a Kubernetes protobuf message (no k8s magic)")?;
    let (mut api_version, mut kind, mut raw) = (String::new(), String::new(), &[][..]);
    for (number, wire) in fields(unknown)? {
        match (number, wire) {
            (1, Wire::Len(type_meta)) => {
                for (n, w) in fields(type_meta)? {
                    if let (1 | 2, Wire::Len(text)) = (n, w) {
                        let text = String::from_utf8(text.to_vec()).map_err(|_| "invalid UTF-8")?;
                        if n == 1 {
                            api_version = text;
                        } else {
                            kind = text;
                        }
                    }
                }
            }
            (2, Wire::Len(bytes)) => raw = bytes,
            (3 | 4, _) => {}
            (n, _) => return Err(format!("unexpected field {n} in runtime.Unknown")),
        }
    }
    let message = if kind == "DeleteOptions" {
        format!("{META}DeleteOptions")
    } else {
        match api_version.split_once('/') {
            None => format!("k8s.io.api.core.{api_version}.{kind}"),
            Some((group, version)) => format!("k8s.io.api.{}.{version}.{kind}", group.split('.').next().unwrap_or_default()),
        }
    };
    let mut value = decode(raw, &message)?;
    if let Value::Object(m) = &mut value {
        m.insert("apiVersion".into(), api_version.into());
        m.insert("kind".into(), kind.into());
    }
    Ok(value)
}

/// One message of a type as its JSON.
fn decode(buf: &[u8], type_: &str) -> Result<Value, String> {
    if let Some(special) = special(buf, type_)? {
        return Ok(special);
    }
    let message = schema().get(type_).ok_or_else(|| format!("kubeloop cannot read {type_} from protobuf; send it as JSON"))?;
    let mut out = Map::new();
    for (number, wire) in fields(buf)? {
        let field = message.get(&number).ok_or_else(|| format!("field {number} of {type_} is not known to kubeloop; send it as JSON"))?;
        if let Some((key_type, value_type)) = field.map {
            let Wire::Len(entry) = wire else { return Err(format!("{type_}.{}: a map entry must be length-delimited", field.name)) };
            let (mut key, mut value) = (Value::Null, Value::Null);
            for (n, w) in fields(entry)? {
                match n {
                    1 => key = scalar(w, key_type)?,
                    2 => value = element(w, value_type)?,
                    _ => {}
                }
            }
            let key = key.as_str().map(str::to_string).unwrap_or_else(|| key.to_string());
            let map = out.entry(field.name).or_insert_with(|| Value::Object(Map::new()));
            if let Value::Object(m) = map {
                m.insert(key, if value.is_null() { default_of(value_type) } else { value });
            }
        } else if field.repeated {
            let list = out.entry(field.name).or_insert_with(|| Value::Array(Vec::new()));
            let Value::Array(items) = list else { continue };
            match wire {
                // Packed numbers: one length-delimited run of varints.
                Wire::Len(run) if is_varint_type(field.type_) => {
                    let mut at = 0;
                    while at < run.len() {
                        items.push(scalar(Wire::Varint(varint(run, &mut at)?), field.type_)?);
                    }
                }
                w => items.push(element(w, field.type_)?),
            }
        } else {
            let value = element(wire, field.type_)?;
            if !unset(field.name, &value) {
                out.insert(field.name.into(), value);
            }
        }
    }
    for name in INLINE {
        if let Some(Value::Object(inner)) = out.remove(name) {
            out.extend(inner);
        }
    }
    Ok(Value::Object(out))
}

/// Numbers Go keeps in non-pointer fields, whose 0 is their default (not a value someone chose).
const NOT_POINTERS: [&str; 10] = [
    "generation",
    "observedGeneration",
    "minReadySeconds",
    "hostPort",
    "nodePort",
    "initialDelaySeconds",
    "timeoutSeconds",
    "periodSeconds",
    "successThreshold",
    "failureThreshold",
];

/// Whether a singular field's value means "not set". Go writes a non-pointer field even at its
/// zero value, which its JSON would have left out (`omitempty`) and which the API server reads as
/// unset: an empty string, `false`, and a zero in the non-pointer number fields. Any other zero
/// stays (a pointer's 0 —
/// `replicas: 0`, `gracePeriodSeconds: 0` — means 0), and so does an empty `storageClassName`,
/// which asks for no class.
fn unset(name: &str, value: &Value) -> bool {
    match value {
        Value::Null | Value::Bool(false) => true,
        Value::String(s) => s.is_empty() && name != "storageClassName",
        Value::Number(n) => NOT_POINTERS.contains(&name) && n.as_i64() == Some(0),
        _ => false,
    }
}

fn is_varint_type(type_: &str) -> bool {
    matches!(type_, "int32" | "int64" | "uint32" | "uint64" | "bool")
}

fn default_of(type_: &str) -> Value {
    match type_ {
        "string" | "bytes" => Value::String(String::new()),
        _ => Value::Null,
    }
}

fn element(wire: Wire<'_>, type_: &str) -> Result<Value, String> {
    match wire {
        Wire::Len(bytes) if !matches!(type_, "string" | "bytes") => decode(bytes, type_),
        w => scalar(w, type_),
    }
}

fn scalar(wire: Wire<'_>, type_: &str) -> Result<Value, String> {
    Ok(match (type_, wire) {
        ("string", Wire::Len(b)) => Value::String(String::from_utf8(b.to_vec()).map_err(|_| "invalid UTF-8 in a string")?),
        ("bytes", Wire::Len(b)) => {
            use base64::Engine;
            Value::String(base64::engine::general_purpose::STANDARD.encode(b))
        }
        ("bool", Wire::Varint(v)) => Value::Bool(v != 0),
        ("int32", Wire::Varint(v)) => Value::from(i64::from(v as i64 as i32)),
        ("int64", Wire::Varint(v)) => Value::from(v as i64),
        ("uint32" | "uint64", Wire::Varint(v)) => Value::from(v),
        ("double", Wire::Fixed64(v)) => serde_json::Number::from_f64(f64::from_bits(v)).map_or(Value::Null, Value::Number),
        ("float", Wire::Fixed32(v)) => serde_json::Number::from_f64(f64::from(f32::from_bits(v))).map_or(Value::Null, Value::Number),
        (t, _) => return Err(format!("a {t} field has the wrong wire type")),
    })
}

/// The types whose JSON is not their message.
fn special(buf: &[u8], type_: &str) -> Result<Option<Value>, String> {
    let Some(name) = type_.strip_prefix(META).or(match type_ {
        "k8s.io.apimachinery.pkg.api.resource.Quantity" => Some("Quantity"),
        "k8s.io.apimachinery.pkg.util.intstr.IntOrString" => Some("IntOrString"),
        "k8s.io.apimachinery.pkg.runtime.RawExtension" => Some("RawExtension"),
        _ => None,
    }) else {
        return Ok(None);
    };
    let ints = |buf| -> Result<(i64, i64, Option<Value>), String> {
        let (mut a, mut b, mut s) = (0, 0, None);
        for (n, w) in fields(buf)? {
            match (n, w) {
                (1, Wire::Varint(v)) => a = v as i64,
                (2, Wire::Varint(v)) => b = v as i64,
                (n, Wire::Len(bytes)) => s = Some((n, bytes)).map(|(_, b)| Value::String(String::from_utf8_lossy(b).into_owned())),
                _ => {}
            }
        }
        Ok((a, b, s))
    };
    Ok(Some(match name {
        "Time" | "MicroTime" => {
            let (seconds, nanos, _) = ints(buf)?;
            if seconds == 0 && nanos == 0 {
                Value::Null
            } else {
                Value::String(rfc3339(seconds, if name == "MicroTime" { Some(nanos / 1000) } else { None }))
            }
        }
        "Duration" => {
            let (nanos, _, _) = ints(buf)?;
            Value::String(format!("{}s", nanos as f64 / 1e9))
        }
        "Quantity" => ints(buf)?.2.unwrap_or_else(|| Value::String(String::new())),
        "IntOrString" => {
            let mut out = (0, 0i64, String::new());
            for (n, w) in fields(buf)? {
                match (n, w) {
                    (1, Wire::Varint(v)) => out.0 = v,
                    (2, Wire::Varint(v)) => out.1 = i64::from(v as i64 as i32),
                    (3, Wire::Len(b)) => out.2 = String::from_utf8_lossy(b).into_owned(),
                    _ => {}
                }
            }
            if out.0 == 1 {
                Value::String(out.2)
            } else {
                Value::from(out.1)
            }
        }
        "RawExtension" | "FieldsV1" => {
            let raw = fields(buf)?.into_iter().find_map(|(n, w)| match (n, w) {
                (1, Wire::Len(b)) => Some(b),
                _ => None,
            });
            match raw {
                Some(b) => serde_json::from_slice(b).map_err(|e| format!("{name}: {e}"))?,
                None => Value::Null,
            }
        }
        _ => return Ok(None),
    }))
}

/// Unix seconds as RFC 3339 in UTC (with microseconds for a MicroTime).
fn rfc3339(seconds: i64, micros: Option<i64>) -> String {
    let days = seconds.div_euclid(86_400);
    let secs = seconds.rem_euclid(86_400);
    // Howard Hinnant's days-to-civil.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    let (h, m, s) = (secs / 3600, secs % 3600 / 60, secs % 60);
    match micros {
        Some(us) => format!("{year:04}-{month:02}-{day:02}T{h:02}:{m:02}:{s:02}.{us:06}Z"),
        None => format!("{year:04}-{month:02}-{day:02}T{h:02}:{m:02}:{s:02}Z"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Length-delimited field `n` holding `bytes`.
    fn len(n: u32, bytes: &[u8]) -> Vec<u8> {
        let mut out = vec![(n << 3 | 2) as u8, bytes.len() as u8];
        out.extend_from_slice(bytes);
        out
    }

    #[test]
    fn a_configmap_sent_as_protobuf_reads_as_its_json() {
        // ConfigMap{metadata{name "cfg", namespace "default"}, data{"a": "b"}}
        let meta = [len(1, b"cfg"), len(3, b"default")].concat();
        let entry = [len(1, b"a"), len(2, b"b")].concat();
        let raw = [len(1, &meta), len(2, &entry)].concat();
        let type_meta = [len(1, b"v1"), len(2, b"ConfigMap")].concat();
        let body = [b"k8s\0".to_vec(), len(1, &type_meta), len(2, &raw)].concat();
        let v = decode_body(&body).unwrap();
        assert_eq!(
            v,
            serde_json::json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cfg", "namespace": "default"}, "data": {"a": "b"}})
        );
    }

    #[test]
    fn unknown_fields_and_garbage_are_refused() {
        let raw = len(15, b"x");
        let type_meta = [len(1, b"v1"), len(2, b"ConfigMap")].concat();
        let body = [b"k8s\0".to_vec(), len(1, &type_meta), len(2, &raw)].concat();
        assert!(decode_body(&body).unwrap_err().contains("field 15 of k8s.io.api.core.v1.ConfigMap"));
        assert!(decode_body(b"k8s\0\x0a\xff").is_err());
        assert!(decode_body(b"{}").is_err());
    }

    #[test]
    fn times_are_rfc3339() {
        assert_eq!(rfc3339(1_767_225_600, None), "2026-01-01T00:00:00Z");
        assert_eq!(rfc3339(951_782_400 + 86_399, Some(5)), "2000-02-29T23:59:59.000005Z");
    }
}
