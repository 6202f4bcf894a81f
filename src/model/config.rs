//! Namespace, ConfigMap and Secret (core/v1): the room objects live in, and the configuration
//! a pod reads from the API server instead of baking into its image.
//!
//! A Secret's `data` is bytes on the wire as base64 text; `Bytes` keeps that text and checks it
//! when decoding, so a manifest with bad base64 is refused with the API server's message
//! ("illegal base64 data at input byte N") instead of stored. `stringData` is write-only: the
//! API server merges it into `data` and never stores it (`api::defaults`).

use super::decode::{decode_struct, FromValue};
#[cfg(test)]
use super::meta::null_as_default;
use super::meta::{ObjectMeta, StringMap};
use super::time::Time;
use base64::Engine;
use serde::{Serialize, Serializer};
use std::collections::BTreeMap;

/// The finalizer the namespace controller removes once a deleted namespace is empty.
pub const NAMESPACE_FINALIZER: &str = "kubernetes";

#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[cfg_attr(test, derive(serde::Deserialize))]
#[serde(rename_all = "camelCase")]
pub struct Namespace {
    #[serde(default)]
    pub metadata: ObjectMeta,
    #[serde(default)]
    pub spec: NamespaceSpec,
    #[serde(default)]
    pub status: NamespaceStatus,
}

impl Namespace {
    pub fn new(name: &str) -> Self {
        let mut ns = Namespace::default();
        ns.metadata.name = name.into();
        ns
    }
    /// `Active` or `Terminating` (an unset phase reads as Active, as the API server defaults it).
    pub fn phase(&self) -> &str {
        self.status.phase.as_deref().unwrap_or("Active")
    }
    pub fn is_terminating(&self) -> bool {
        self.metadata.deletion_timestamp.is_some() || self.phase() == "Terminating"
    }
}

#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[cfg_attr(test, derive(serde::Deserialize))]
#[serde(rename_all = "camelCase")]
pub struct NamespaceSpec {
    #[serde(default, skip_serializing_if = "Vec::is_empty", deserialize_with = "null_as_default")]
    pub finalizers: Vec<String>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[cfg_attr(test, derive(serde::Deserialize))]
#[serde(rename_all = "camelCase")]
pub struct NamespaceStatus {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub phase: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty", deserialize_with = "null_as_default")]
    pub conditions: Vec<NamespaceCondition>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[cfg_attr(test, derive(serde::Deserialize))]
#[serde(rename_all = "camelCase")]
pub struct NamespaceCondition {
    #[serde(default, rename = "type")]
    pub type_: String,
    #[serde(default)]
    pub status: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_transition_time: Option<Time>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[cfg_attr(test, derive(serde::Deserialize))]
#[serde(rename_all = "camelCase")]
pub struct ConfigMap {
    #[serde(default)]
    pub metadata: ObjectMeta,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub immutable: Option<bool>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty", deserialize_with = "null_as_default")]
    pub data: StringMap,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty", deserialize_with = "null_as_default")]
    pub binary_data: BTreeMap<String, Bytes>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[cfg_attr(test, derive(serde::Deserialize))]
#[serde(rename_all = "camelCase")]
pub struct Secret {
    #[serde(default)]
    pub metadata: ObjectMeta,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub immutable: Option<bool>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty", deserialize_with = "null_as_default")]
    pub data: BTreeMap<String, Bytes>,
    /// Write-only: merged into `data` by the API server, never stored.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty", deserialize_with = "null_as_default")]
    pub string_data: StringMap,
    #[serde(default, rename = "type", skip_serializing_if = "String::is_empty")]
    pub type_: String,
}

impl ConfigMap {
    /// DATA in `kubectl get configmaps`: entries of `data` and `binaryData`.
    pub fn len(&self) -> usize {
        self.data.len() + self.binary_data.len()
    }
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// Bytes as the API carries them: standard base64 text, checked when read.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Bytes(String);

impl Bytes {
    pub fn encode(raw: &[u8]) -> Self {
        Bytes(base64::engine::general_purpose::STANDARD.encode(raw))
    }
    /// The base64 text.
    pub fn as_base64(&self) -> &str {
        &self.0
    }
    /// The bytes it stands for.
    pub fn decode(&self) -> Vec<u8> {
        base64::engine::general_purpose::STANDARD.decode(&self.0).unwrap_or_default()
    }
    /// How many bytes it stands for, without decoding them.
    pub fn len(&self) -> usize {
        let pad = self.0.bytes().rev().take_while(|b| *b == b'=').count();
        (self.0.len() / 4 * 3).saturating_sub(pad)
    }
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl Serialize for Bytes {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.0)
    }
}

#[cfg(test)]
impl<'de> serde::Deserialize<'de> for Bytes {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        check_base64(&s).map_err(serde::de::Error::custom)?;
        Ok(Bytes(s))
    }
}

/// Go's `encoding/base64` message for the first byte that cannot be standard base64 text.
fn check_base64(s: &str) -> Result<(), String> {
    match base64::engine::general_purpose::STANDARD.decode(s) {
        Ok(_) => Ok(()),
        Err(base64::DecodeError::InvalidByte(at, _) | base64::DecodeError::InvalidLastSymbol(at, _)) => {
            Err(format!("illegal base64 data at input byte {at}"))
        }
        Err(_) => Err(format!("illegal base64 data at input byte {}", s.len() / 4 * 4)),
    }
}

impl FromValue for Bytes {
    fn from_value(v: &serde_json::Value) -> Result<Self, String> {
        let s = String::from_value(v)?;
        check_base64(&s).map_err(super::decode::custom)?;
        Ok(Bytes(s))
    }
}

/// The package upstream's OpenAPI documents name these types in (`schema.rs`).
const SCHEMA_PACKAGE: &str = "io.k8s.api.core.v1";
decode_struct!(
/// A scope for names; deleting it deletes everything in it.
Namespace {
    /// The object's name, namespace and labels, and what the API server records about it.
    metadata: "metadata" Default,
    /// Its finalizers.
    spec: "spec" Default,
    /// Active or Terminating.
    status: "status" Default,
});
decode_struct!(
/// What must finish before a namespace goes.
NamespaceSpec {
    /// The finalizers the namespace controller takes off once everything in the namespace is
    /// deleted.
    #[list = "atomic"]
    finalizers: "finalizers" NullAsDefault,
});
decode_struct!(
/// Whether a namespace is in use or going.
NamespaceStatus {
    /// Active or Terminating.
    phase: "phase" Default,
    /// Why deleting its contents is taking time.
    #[list = "map type"]
    #[patch = "merge type"]
    conditions: "conditions" NullAsDefault,
});
decode_struct!(
/// A condition of a namespace being deleted.
NamespaceCondition {
    /// Which condition this is.
    #[required = true]
    type_: "type" Default,
    /// True, False or Unknown.
    #[required = true]
    status: "status" Default,
    /// When the status last changed.
    last_transition_time: "lastTransitionTime" Default,
    /// A word for why the condition is as it is.
    reason: "reason" Default,
    /// Why, for people.
    message: "message" Default,
});
decode_struct!(
/// Configuration as key/value pairs that pods read as environment variables or files.
ConfigMap {
    /// The object's name, namespace and labels, and what the API server records about it.
    metadata: "metadata" Default,
    /// Whether the data may no longer change.
    immutable: "immutable" Default,
    /// Text values.
    data: "data" NullAsDefault,
    /// Binary values, base64 encoded.
    binary_data: "binaryData" NullAsDefault,
});
decode_struct!(
/// Like a ConfigMap, for sensitive values.
Secret {
    /// The object's name, namespace and labels, and what the API server records about it.
    metadata: "metadata" Default,
    /// Whether the data may no longer change.
    immutable: "immutable" Default,
    /// The values, base64 encoded.
    data: "data" NullAsDefault,
    /// Values as plain text, written into data.
    string_data: "stringData" NullAsDefault,
    /// What the Secret holds (Opaque).
    type_: "type" Default,
});

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bad_base64_is_refused_with_gos_message() {
        assert_eq!(check_base64("aGVsbG8="), Ok(()));
        assert_eq!(check_base64("aGV*bG8="), Err("illegal base64 data at input byte 3".into()));
        assert!(check_base64("aGVsbG8").is_err());
    }

    #[test]
    fn bytes_know_their_length_without_decoding() {
        for raw in ["", "a", "ab", "abc", "abcd", "hello world"] {
            let b = Bytes::encode(raw.as_bytes());
            assert_eq!(b.len(), raw.len(), "{raw:?}");
            assert_eq!(b.decode(), raw.as_bytes());
        }
    }
}
