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

/// `impl FromValue` for a struct from its fields in declaration order: `field: "jsonName" Mode`,
/// and, from the same table, `impl Describe` (`schema.rs`): the struct's schema. `///` lines
/// before the struct or a field are its description; `#[list = "map name"]` and
/// `#[patch = "merge name"]` before a field are its list and patch semantics, and
/// `#[format = "int32"]` the format upstream gives a number kubeloop keeps wider;
/// `#[required = true]` marks a field upstream requires that the decoder reads leniently (a
/// missing container name is validation's to refuse, with its own message). The schema is
/// named `SCHEMA_PACKAGE.Type` (a constant of the module the table is in) unless the table says
/// `Type as "package" "Name"` (an empty package: described in place, not by name).
macro_rules! decode_struct {
    (
        $(#[doc = $doc:literal])*
        $ty:ident $(as $package:literal $name:literal)? {
            $(
                $(#[doc = $fdoc:literal])*
                $(#[list = $list:literal])?
                $(#[patch = $patch:literal])?
                $(#[format = $format:literal])?
                $(#[required = $required:literal])?
                $field:ident : $key:literal $mode:ident $(=> $with:path)?
            ),* $(,)?
        }
    ) => {
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

        impl $crate::model::schema::Describe for $ty {
            fn schema() -> $crate::model::schema::Schema {
                let (package, name) = $crate::model::decode::schema_name!($ty $(, $package, $name)?);
                $crate::model::schema::Schema::structure(package, name, concat!($($doc),*).trim_start(), || {
                    $crate::model::schema::Schema::Object($crate::model::schema::Struct {
                        fields: vec![$(
                            $crate::model::schema::Field {
                                name: $key,
                                description: concat!($($fdoc),*).trim_start(),
                                required: matches!($crate::model::decode::Field::$mode, $crate::model::decode::Field::Required)
                                    $(|| $required)?,
                                schema: $crate::model::decode::field_schema!($ty, $field $(, $with)?),
                                list: concat!($($list)?),
                                patch: concat!($($patch)?),
                                format: concat!($($format)?),
                            }
                        ),*],
                    })
                })
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

/// A struct's schema name: the module's `SCHEMA_PACKAGE` and the type's own name, or the ones
/// the table gives.
macro_rules! schema_name {
    ($ty:ident) => {
        (SCHEMA_PACKAGE, stringify!($ty))
    };
    ($ty:ident, $package:literal, $name:literal) => {
        ($package, $name)
    };
}
pub(crate) use schema_name;

/// A field's schema: its type's, or text for a field read by a decoder of its own (a
/// `resourceVersion` is text on the wire and a number inside).
macro_rules! field_schema {
    ($ty:ident, $field:ident) => {
        $crate::model::schema::of(|s: &$ty| &s.$field)
    };
    ($ty:ident, $field:ident, $with:path) => {
        <String as $crate::model::schema::Describe>::schema
    };
}
pub(crate) use field_schema;

/// Reads a decimal number as Rust's `str::parse::<f64>` does — the same accepted texts (an
/// optional sign; digits with an optional point and exponent; `inf`, `infinity` or `nan` in any
/// case) and the same correctly rounded result — without the standard library's parser, whose
/// 10 KB table of powers of five barely compresses and was a noticeable part of the page's
/// download. Short inputs (at most 15 digits, a power of ten up to 22) take the exact fast path of
/// one IEEE multiplication or division; longer ones are rounded exactly with a small big-integer
/// division. `None` is what `parse` reports as an error.
pub fn parse_f64(text: &str) -> Option<f64> {
    let (negative, body) = match text.as_bytes().first() {
        Some(b'-') => (true, &text[1..]),
        Some(b'+') => (false, &text[1..]),
        _ => (false, text),
    };
    let magnitude = if body.eq_ignore_ascii_case("inf") || body.eq_ignore_ascii_case("infinity") {
        f64::INFINITY
    } else if body.eq_ignore_ascii_case("nan") {
        f64::NAN
    } else {
        decimal_magnitude(body)?
    };
    Some(if negative { -magnitude } else { magnitude })
}

/// Significant digits kept; any beyond only decide rounding, as a "something non-zero follows".
const MAX_DIGITS: usize = 800;

/// `digits[.digits][(e|E)[sign]digits]`, unsigned, correctly rounded.
fn decimal_magnitude(body: &str) -> Option<f64> {
    let bytes = body.as_bytes();
    let mut i = 0;
    let mut digits: Vec<u8> = Vec::new();
    let mut exponent: i64 = 0;
    let mut seen_digit = false;
    let mut dropped_nonzero = false;
    let mut take = |d: u8, fraction: bool, digits: &mut Vec<u8>, exponent: &mut i64| {
        if digits.is_empty() && d == 0 {
            // A leading zero: only the point's position matters.
            *exponent -= i64::from(fraction);
        } else if digits.len() < MAX_DIGITS {
            digits.push(d);
            *exponent -= i64::from(fraction);
        } else {
            dropped_nonzero |= d != 0;
            *exponent += i64::from(!fraction);
        }
    };
    while i < bytes.len() && bytes[i].is_ascii_digit() {
        take(bytes[i] - b'0', false, &mut digits, &mut exponent);
        seen_digit = true;
        i += 1;
    }
    if i < bytes.len() && bytes[i] == b'.' {
        i += 1;
        while i < bytes.len() && bytes[i].is_ascii_digit() {
            take(bytes[i] - b'0', true, &mut digits, &mut exponent);
            seen_digit = true;
            i += 1;
        }
    }
    if !seen_digit {
        return None;
    }
    if i < bytes.len() && (bytes[i] == b'e' || bytes[i] == b'E') {
        i += 1;
        let negative = match bytes.get(i) {
            Some(b'-') => {
                i += 1;
                true
            }
            Some(b'+') => {
                i += 1;
                false
            }
            _ => false,
        };
        let start = i;
        let mut e: i64 = 0;
        while i < bytes.len() && bytes[i].is_ascii_digit() {
            // Saturates far beyond any finite double's exponent.
            e = (e * 10 + i64::from(bytes[i] - b'0')).min(1 << 40);
            i += 1;
        }
        if i == start {
            return None;
        }
        exponent += if negative { -e } else { e };
    }
    if i != bytes.len() {
        return None;
    }
    while digits.last() == Some(&0) {
        digits.pop();
        exponent += 1;
    }
    if digits.is_empty() {
        return Some(0.0);
    }
    let n = digits.len() as i64;
    if n - 1 + exponent >= 309 {
        return Some(f64::INFINITY);
    }
    if n + exponent <= -324 {
        return Some(0.0);
    }
    if n <= 15 && exponent.abs() <= 22 && !dropped_nonzero {
        let mantissa = digits.iter().fold(0u64, |m, &d| m * 10 + u64::from(d)) as f64;
        let power = POWERS_OF_TEN[exponent.unsigned_abs() as usize];
        return Some(if exponent < 0 { mantissa / power } else { mantissa * power });
    }
    Some(exact(&digits, exponent, dropped_nonzero))
}

/// 10⁰ to 10²², each exact in a double.
const POWERS_OF_TEN: [f64; 23] =
    [1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22];

/// digits × 10^exponent rounded to nearest, ties to even, with a big integer: the top 64 and
/// more bits of the value and whether anything below them is non-zero.
fn exact(digits: &[u8], exponent: i64, dropped_nonzero: bool) -> f64 {
    let mut value = Big(vec![]);
    for &d in digits {
        value.mul_add(10, u32::from(d));
    }
    if exponent >= 0 {
        for _ in 0..exponent {
            value.mul_add(10, 0);
        }
        let bits = value.bits();
        if bits <= 64 {
            return compose(value.low_u128(), 0, dropped_nonzero);
        }
        let shift = bits - 64;
        let sticky = value.any_below(shift) || dropped_nonzero;
        return compose(value.shr_to_u128(shift), shift as i64, sticky);
    }
    let mut divisor = Big(vec![1]);
    for _ in 0..(-exponent) {
        divisor.mul_add(10, 0);
    }
    // Scale so that the quotient has 64 to 65 bits.
    let k = 64 + divisor.bits() as i64 - value.bits() as i64;
    if k >= 0 {
        value = value.shl(k as usize);
    } else {
        divisor = divisor.shl((-k) as usize);
    }
    let mut quotient: u128 = 0;
    for bit in (0..66).rev() {
        let shifted = divisor.shl(bit);
        if value.cmp(&shifted) != std::cmp::Ordering::Less {
            value.sub(&shifted);
            quotient |= 1 << bit;
        }
    }
    let sticky = !value.is_zero() || dropped_nonzero;
    compose(quotient, -k, sticky)
}

/// `m × 2^e` (plus a little when `sticky`) as the nearest double, ties to even, subnormals and
/// overflow to infinity included.
fn compose(m: u128, e: i64, sticky: bool) -> f64 {
    if m == 0 {
        return 0.0;
    }
    let len = 128 - i64::from(m.leading_zeros());
    let top = len - 1 + e;
    if top > 1023 {
        return f64::INFINITY;
    }
    let keep = if top >= -1022 { 53 } else { top + 1075 };
    if keep < 0 {
        return 0.0;
    }
    let shift = len - keep;
    let mantissa = if shift <= 0 {
        (m << (-shift)) as u64
    } else {
        let kept = (m >> shift) as u64;
        let rest = m & ((1u128 << shift) - 1);
        let half = 1u128 << (shift - 1);
        let up = rest > half || (rest == half && (sticky || kept & 1 == 1));
        kept + u64::from(up)
    };
    if keep < 53 {
        // Subnormal: the mantissa is the whole bit pattern (a carry makes it the least normal).
        return f64::from_bits(mantissa);
    }
    // A carry out of 53 bits moves into the exponent field, up to infinity's pattern.
    f64::from_bits((((top + 1023) as u64) << 52) + (mantissa - (1 << 52)))
}

/// A non-negative big integer, little-endian 32-bit limbs, just enough for [`exact`].
struct Big(Vec<u32>);

impl Big {
    fn mul_add(&mut self, mul: u32, add: u32) {
        let mut carry = u64::from(add);
        for limb in &mut self.0 {
            let v = u64::from(*limb) * u64::from(mul) + carry;
            *limb = v as u32;
            carry = v >> 32;
        }
        if carry != 0 {
            self.0.push(carry as u32);
        }
    }
    fn trim(&mut self) {
        while self.0.last() == Some(&0) {
            self.0.pop();
        }
    }
    fn is_zero(&self) -> bool {
        self.0.iter().all(|&l| l == 0)
    }
    fn bits(&self) -> usize {
        match self.0.iter().rposition(|&l| l != 0) {
            Some(i) => i * 32 + 32 - self.0[i].leading_zeros() as usize,
            None => 0,
        }
    }
    fn bit(&self, i: usize) -> bool {
        self.0.get(i / 32).is_some_and(|l| l >> (i % 32) & 1 == 1)
    }
    fn any_below(&self, n: usize) -> bool {
        (0..n).any(|i| self.bit(i))
    }
    fn shr_to_u128(&self, n: usize) -> u128 {
        (0..128).filter(|&i| self.bit(n + i)).fold(0u128, |acc, i| acc | 1 << i)
    }
    fn low_u128(&self) -> u128 {
        self.shr_to_u128(0)
    }
    fn shl(&self, n: usize) -> Big {
        let (limbs, bits) = (n / 32, n % 32);
        let mut out = vec![0u32; limbs];
        let mut carry = 0u32;
        for &l in &self.0 {
            out.push(if bits == 0 { l } else { (l << bits) | carry });
            carry = if bits == 0 { 0 } else { l >> (32 - bits) };
        }
        out.push(carry);
        let mut big = Big(out);
        big.trim();
        big
    }
    fn cmp(&self, other: &Big) -> std::cmp::Ordering {
        let (a, b) = (self.bits(), other.bits());
        if a != b {
            return a.cmp(&b);
        }
        for i in (0..self.0.len().max(other.0.len())).rev() {
            let (x, y) = (self.0.get(i).copied().unwrap_or(0), other.0.get(i).copied().unwrap_or(0));
            if x != y {
                return x.cmp(&y);
            }
        }
        std::cmp::Ordering::Equal
    }
    /// self -= other, for other <= self.
    fn sub(&mut self, other: &Big) {
        let mut borrow = 0i64;
        for i in 0..self.0.len() {
            let v = i64::from(self.0[i]) - i64::from(other.0.get(i).copied().unwrap_or(0)) - borrow;
            borrow = i64::from(v < 0);
            self.0[i] = (v + (borrow << 32)) as u32;
        }
        self.trim();
    }
}

#[cfg(test)]
mod tests {
    use super::parse_f64;
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
            Kind::Namespace => Object::Namespace(serde_json::from_value(value).map_err(decode_err)?),
            Kind::ConfigMap => Object::ConfigMap(serde_json::from_value(value).map_err(decode_err)?),
            Kind::Secret => Object::Secret(serde_json::from_value(value).map_err(decode_err)?),
            Kind::Service => Object::Service(serde_json::from_value(value).map_err(decode_err)?),
            Kind::EndpointSlice => Object::EndpointSlice(serde_json::from_value(value).map_err(decode_err)?),
            Kind::Endpoints => Object::Endpoints(serde_json::from_value(value).map_err(decode_err)?),
            Kind::PodDisruptionBudget => Object::PodDisruptionBudget(serde_json::from_value(value).map_err(decode_err)?),
            Kind::ReplicationController => Object::ReplicationController(serde_json::from_value(value).map_err(decode_err)?),
            Kind::HorizontalPodAutoscaler => Object::HorizontalPodAutoscaler(serde_json::from_value(value).map_err(decode_err)?),
            Kind::CronJob => Object::CronJob(serde_json::from_value(value).map_err(decode_err)?),
            Kind::Job => Object::Job(serde_json::from_value(value).map_err(decode_err)?),
            Kind::DaemonSet => Object::DaemonSet(serde_json::from_value(value).map_err(decode_err)?),
            Kind::StatefulSet => Object::StatefulSet(serde_json::from_value(value).map_err(decode_err)?),
            Kind::ControllerRevision => Object::ControllerRevision(serde_json::from_value(value).map_err(decode_err)?),
            Kind::PersistentVolumeClaim => Object::PersistentVolumeClaim(serde_json::from_value(value).map_err(decode_err)?),
            Kind::PersistentVolume => Object::PersistentVolume(serde_json::from_value(value).map_err(decode_err)?),
            Kind::StorageClass => Object::StorageClass(serde_json::from_value(value).map_err(decode_err)?),
            // Kept as JSON: no derived decoder to compare with.
            Kind::CustomResourceDefinition | Kind::CustomObject => return Err("kind".into()),
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
            "restartPolicy": "Always", "terminationGracePeriodSeconds": 30, "schedulerName": "default-scheduler", "priority": 0,
            "volumes": [{"name": "logs", "hostPath": {"path": "/var/log", "type": "Directory"}}, {"name": "tmp", "emptyDir": {}}]})
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
            json!({"apiVersion": "v1", "kind": "Namespace", "metadata": meta(), "spec": {"finalizers": ["kubernetes"]},
                "status": {"phase": "Terminating", "conditions": [{"type": "NamespaceContentRemaining", "status": "True",
                    "lastTransitionTime": "2026-01-01T00:00:05Z", "reason": "SomeResourcesRemain", "message": "m"}]}}),
            json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta(), "immutable": true, "data": {"a": "b", "game.properties": "x=1\n"},
                "binaryData": {"bin": "aGVsbG8="}}),
            json!({"apiVersion": "v1", "kind": "Secret", "metadata": meta(), "type": "Opaque", "data": {"username": "YWRtaW4="},
                "stringData": {"password": "s3cr3t"}, "immutable": false}),
            json!({"apiVersion": "v1", "kind": "Service", "metadata": meta(), "spec": {"ports": [{"name": "http", "protocol": "TCP",
                "port": 80, "targetPort": "web", "nodePort": 30080}], "selector": {"app": "web"}, "clusterIP": "10.96.0.10",
                "clusterIPs": ["10.96.0.10"], "type": "NodePort", "externalName": "x", "sessionAffinity": "None", "ipFamilies": ["IPv4"],
                "ipFamilyPolicy": "SingleStack", "publishNotReadyAddresses": true, "externalTrafficPolicy": "Cluster",
                "internalTrafficPolicy": "Cluster", "allocateLoadBalancerNodePorts": true},
                "status": {"loadBalancer": {"ingress": [{"ip": "1.2.3.4", "hostname": "h"}]}}}),
            json!({"apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice", "metadata": meta(), "addressType": "IPv4",
                "endpoints": [{"addresses": ["10.244.0.2"], "conditions": {"ready": true, "serving": true, "terminating": false},
                    "targetRef": {"kind": "Pod", "namespace": "default", "name": "web", "uid": "u"}, "nodeName": "n1", "zone": "z"}],
                "ports": [{"name": "", "protocol": "TCP", "port": 80}]}),
            json!({"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": meta(), "spec": {"minAvailable": "50%",
                "selector": selector, "maxUnavailable": 1, "unhealthyPodEvictionPolicy": "AlwaysAllow"},
                "status": {"observedGeneration": 3, "disruptedPods": {"web-1": "2026-01-01T00:00:05Z"}, "disruptionsAllowed": 1,
                    "currentHealthy": 3, "desiredHealthy": 2, "expectedPods": 3, "conditions": [{"type": "DisruptionAllowed",
                    "status": "True", "observedGeneration": 3, "lastTransitionTime": "2026-01-01T00:00:05Z", "reason": "SufficientPods", "message": ""}]}}),
            json!({"apiVersion": "v1", "kind": "ReplicationController", "metadata": meta(), "spec": {"replicas": 3, "minReadySeconds": 5,
                "selector": {"app": "web"}, "template": template}, "status": {"replicas": 3, "fullyLabeledReplicas": 3, "readyReplicas": 2,
                "availableReplicas": 2, "observedGeneration": 4, "conditions": [{"type": "ReplicaFailure", "status": "True",
                    "lastTransitionTime": "2026-01-01T00:00:05Z", "reason": "FailedCreate", "message": "m"}]}}),
            json!({"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler", "metadata": meta(), "spec": {
                "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"}, "minReplicas": 1, "maxReplicas": 10,
                "metrics": [{"type": "Resource", "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 50}}}],
                "behavior": {"scaleUp": {"stabilizationWindowSeconds": 0, "selectPolicy": "Max", "policies": [{"type": "Pods", "value": 4, "periodSeconds": 15}]},
                    "scaleDown": {"policies": [{"type": "Percent", "value": 100, "periodSeconds": 15}]}}},
                "status": {"observedGeneration": 2, "lastScaleTime": "2026-01-01T00:00:05Z", "currentReplicas": 3, "desiredReplicas": 4,
                    "currentMetrics": [{"type": "Resource", "resource": {"name": "cpu", "current": {"averageValue": "250m", "averageUtilization": 62}}}],
                    "conditions": [{"type": "AbleToScale", "status": "True", "lastTransitionTime": "2026-01-01T00:00:05Z", "reason": "r", "message": "m"}]}}),
            json!({"apiVersion": "batch/v1", "kind": "CronJob", "metadata": meta(), "spec": {"schedule": "*/1 * * * *", "timeZone": "Etc/UTC",
                "startingDeadlineSeconds": 30, "concurrencyPolicy": "Forbid", "suspend": false, "successfulJobsHistoryLimit": 3,
                "failedJobsHistoryLimit": 1, "jobTemplate": {"metadata": meta(), "spec": {"backoffLimit": 2, "template": template}}},
                "status": {"active": [{"kind": "Job", "namespace": "default", "name": "hello-1", "uid": "u", "apiVersion": "batch/v1"}],
                    "lastScheduleTime": "2026-01-01T00:01:00Z", "lastSuccessfulTime": "2026-01-01T00:01:05Z"}}),
            json!({"apiVersion": "v1", "kind": "Endpoints", "metadata": meta(), "subsets": [{"addresses": [{"ip": "10.244.0.2",
                "nodeName": "n1", "targetRef": {"kind": "Pod", "name": "web"}}], "notReadyAddresses": [{"ip": "10.244.0.3"}],
                "ports": [{"name": "http", "protocol": "TCP", "port": 80}]}]}),
            json!({"apiVersion": "batch/v1", "kind": "Job", "metadata": meta(), "spec": {"parallelism": 2, "completions": 5,
                "activeDeadlineSeconds": 100, "backoffLimit": 4, "selector": selector, "manualSelector": true, "template": template,
                "completionMode": "Indexed", "suspend": false, "ttlSecondsAfterFinished": 100},
                "status": {"conditions": [{"type": "Complete", "status": "True", "lastProbeTime": "2026-01-01T00:00:05Z",
                    "lastTransitionTime": "2026-01-01T00:00:05Z", "reason": "CompletionsReached", "message": "m"}],
                    "startTime": "2026-01-01T00:00:05Z", "completionTime": "2026-01-01T00:00:09Z", "active": 1, "succeeded": 5,
                    "failed": 1, "completedIndexes": "0-4", "uncountedTerminatedPods": {"succeeded": ["u1"], "failed": ["u2"]}, "ready": 0}}),
            json!({"apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": meta(), "spec": {"selector": selector, "template": template,
                "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 1, "maxSurge": "10%"}},
                "minReadySeconds": 2, "revisionHistoryLimit": 10},
                "status": {"currentNumberScheduled": 2, "numberMisscheduled": 1, "desiredNumberScheduled": 3, "numberReady": 2,
                    "observedGeneration": 4, "updatedNumberScheduled": 2, "numberAvailable": 2, "numberUnavailable": 1}}),
            json!({"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": meta(), "spec": {"replicas": 3, "selector": selector,
                "template": template, "serviceName": "nginx", "podManagementPolicy": "Parallel",
                "volumeClaimTemplates": [{"metadata": {"name": "www"}, "spec": {"accessModes": ["ReadWriteOnce"],
                    "resources": {"requests": {"storage": "1Gi"}}}, "status": {"phase": "Pending"}}],
                "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"partition": 2}}, "revisionHistoryLimit": 10,
                "minReadySeconds": 5},
                "status": {"observedGeneration": 2, "replicas": 3, "readyReplicas": 2, "currentReplicas": 2, "updatedReplicas": 1,
                    "currentRevision": "web-5d9f", "updateRevision": "web-7c4b", "collisionCount": 0, "availableReplicas": 2}}),
            json!({"apiVersion": "apps/v1", "kind": "ControllerRevision", "metadata": meta(), "data": {"spec": {"template": template}},
                "revision": 3}),
            json!({"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": meta(), "spec": {"accessModes": ["ReadWriteOnce"],
                "resources": {"requests": {"storage": "1Gi"}}, "storageClassName": "standard", "volumeMode": "Filesystem",
                "volumeName": "pvc-1"}, "status": {"phase": "Bound", "accessModes": ["ReadWriteOnce"], "capacity": {"storage": "1Gi"}}}),
            json!({"apiVersion": "v1", "kind": "PersistentVolume", "metadata": meta(), "spec": {"accessModes": ["ReadWriteOnce"],
                "capacity": {"storage": "1Gi"}, "claimRef": {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "name": "www-web-0",
                "namespace": "default", "uid": "u"}, "hostPath": {"path": "/tmp/x", "type": ""}, "persistentVolumeReclaimPolicy": "Delete",
                "storageClassName": "standard", "volumeMode": "Filesystem"}, "status": {"phase": "Bound"}}),
            json!({"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": meta(), "provisioner": "k8s.io/minikube-hostpath",
                "reclaimPolicy": "Delete", "volumeBindingMode": "Immediate", "allowVolumeExpansion": true}),
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
                Object::Namespace(x) => serde_json::to_value(x),
                Object::ConfigMap(x) => serde_json::to_value(x),
                Object::Secret(x) => serde_json::to_value(x),
                Object::Service(x) => serde_json::to_value(x),
                Object::EndpointSlice(x) => serde_json::to_value(x),
                Object::Endpoints(x) => serde_json::to_value(x),
                Object::Job(x) => serde_json::to_value(x),
                Object::DaemonSet(x) => serde_json::to_value(x),
                Object::StatefulSet(x) => serde_json::to_value(x),
                Object::ControllerRevision(x) => serde_json::to_value(x),
                Object::PersistentVolumeClaim(x) => serde_json::to_value(x),
                Object::PersistentVolume(x) => serde_json::to_value(x),
                Object::StorageClass(x) => serde_json::to_value(x),
                Object::PodDisruptionBudget(x) => serde_json::to_value(x),
                Object::ReplicationController(x) => serde_json::to_value(x),
                Object::HorizontalPodAutoscaler(x) => serde_json::to_value(x),
                Object::CronJob(x) => serde_json::to_value(x),
                Object::CustomResourceDefinition(x) => serde_json::to_value(x),
                Object::CustomObject(x) => serde_json::to_value(x),
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

    /// The standard library's parser is the reference: same texts accepted, same bits.
    fn same_as_std(text: &str) {
        let ours = parse_f64(text);
        let theirs = text.parse::<f64>().ok();
        match (ours, theirs) {
            (Some(a), Some(b)) => assert!(a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan()), "{text:?}: {a:e} vs {b:e}"),
            (None, None) => {}
            _ => panic!("{text:?}: {ours:?} vs {theirs:?}"),
        }
    }

    #[test]
    fn parse_f64_reads_what_str_parse_reads_bit_for_bit() {
        for text in [
            "0", "-0", "+0", "1", "-1", "+1.5", "0.25", ".5", "5.", ".", "", "+", "-", "e5", "1e", "1e+", "1e-", "1.2.3", " 1", "1 ",
            "1_0", "0x10", "inf", "-inf", "+Infinity", "INF", "nan", "NaN", "-nan", "infinity", "infinit", "1e400", "-1e400",
            "1e-400", "9007199254740993", "9007199254740992", "9007199254740995", "2.2250738585072011e-308",
            "2.2250738585072014e-308", "4.9406564584124654e-324", "2.4703282292062327e-324", "2.4703282292062328e-324",
            "1.7976931348623157e308", "1.7976931348623158e308", "1.7976931348623159e308", "179769313486231580793728971405303415079934132710037826936173778980444968292764750946649017977587207096330286416692887910946555547851940402630657488671505820681908902000708383676273854845817711531764475730270069855571366959622842914819860834936475292719074168444365510704342711559699508093042880177904174497791",
            "0.1", "0.2", "0.3", "123456789012345678901234567890", "1e22", "1e23", "1.5e-7", "0.000001", "100m", "1.5Gi",
            "00000000000000000000000000001.5", "1.0000000000000000000000000000000000000000000000000000000000000001",
            "0.00000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000001e100",
        ] {
            same_as_std(text);
        }
        let mut long_half = String::from("9007199254740993");
        long_half.push_str(&"0".repeat(900));
        long_half.push('1');
        same_as_std(&long_half);
        same_as_std(&format!("{long_half}e-900"));
    }

    #[test]
    fn parse_f64_agrees_with_str_parse_on_many_doubles() {
        let mut rng = crate::rng::Rng::new(7);
        for _ in 0..20_000 {
            let x = f64::from_bits(rng.next_u64());
            if !x.is_finite() {
                continue;
            }
            let digits = (rng.next_u64() % 25) as usize;
            for text in [format!("{x:e}"), format!("{x}"), format!("{x:.digits$e}"), format!("{:.digits$e}", x * 1e-10)] {
                same_as_std(&text);
            }
        }
    }
}
