//! `ObjectMeta` and the other pieces every Kubernetes object shares.
//!
//! Field names follow the Kubernetes JSON (camelCase) so that real manifests load unchanged and
//! `-o json` prints what a real API server would. Unknown fields are ignored on input, as
//! kubectl's client-side decoding does for fields it does not model.

use super::decode::{decode_struct, FromValue};
use super::name::Name;
use super::shared::Shared;
use super::time::Time;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::collections::BTreeMap;

/// Labels and annotations: ordered, so iteration never depends on hashing.
pub type StringMap = BTreeMap<String, String>;

#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[cfg_attr(test, derive(serde::Deserialize))]
#[serde(rename_all = "camelCase")]
pub struct ObjectMeta {
    #[serde(default)]
    pub name: Name,
    #[serde(default, skip_serializing_if = "str::is_empty")]
    pub generate_name: Name,
    #[serde(default, skip_serializing_if = "str::is_empty")]
    pub namespace: Name,
    #[serde(default, skip_serializing_if = "str::is_empty")]
    pub uid: Name,
    #[serde(default, with = "resource_version", skip_serializing_if = "is_zero")]
    pub resource_version: u64,
    #[serde(default, skip_serializing_if = "is_zero_i64")]
    pub generation: i64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub creation_timestamp: Option<Time>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deletion_timestamp: Option<Time>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deletion_grace_period_seconds: Option<i64>,
    /// Shared with the object's other versions, and a pod's with its template's.
    #[serde(default, skip_serializing_if = "no_labels", deserialize_with = "null_as_default")]
    pub labels: Shared<StringMap>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty", deserialize_with = "null_as_default")]
    pub annotations: StringMap,
    /// Shared with the object's other versions.
    #[serde(default, skip_serializing_if = "no_owners", deserialize_with = "null_as_default")]
    pub owner_references: Shared<Vec<OwnerReference>>,
    #[serde(default, skip_serializing_if = "Vec::is_empty", deserialize_with = "null_as_default")]
    pub finalizers: Vec<String>,
}

impl ObjectMeta {
    /// The owner reference with `controller: true`, the one that manages this object.
    pub fn controller_ref(&self) -> Option<&OwnerReference> {
        self.owner_references.iter().find(|r| r.controller == Some(true))
    }
    pub fn is_deleting(&self) -> bool {
        self.deletion_timestamp.is_some()
    }
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
#[cfg_attr(test, derive(serde::Deserialize))]
#[serde(rename_all = "camelCase")]
pub struct OwnerReference {
    pub api_version: String,
    pub kind: String,
    pub name: String,
    pub uid: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub controller: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub block_owner_deletion: Option<bool>,
}

/// `metav1.LabelSelector`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
#[cfg_attr(test, derive(serde::Deserialize))]
#[serde(rename_all = "camelCase")]
pub struct LabelSelector {
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty", deserialize_with = "null_as_default")]
    pub match_labels: StringMap,
    #[serde(default, skip_serializing_if = "Vec::is_empty", deserialize_with = "null_as_default")]
    pub match_expressions: Vec<LabelSelectorRequirement>,
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
#[cfg_attr(test, derive(serde::Deserialize))]
#[serde(rename_all = "camelCase")]
pub struct LabelSelectorRequirement {
    pub key: String,
    pub operator: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty", deserialize_with = "null_as_default")]
    pub values: Vec<String>,
}

impl LabelSelector {
    /// Whether `labels` satisfy every term. An empty selector matches everything, as in
    /// `metav1.LabelSelectorAsSelector`; unknown operators match nothing (validation rejects them).
    pub fn matches(&self, labels: &StringMap) -> bool {
        self.match_labels.iter().all(|(k, v)| labels.get(k) == Some(v))
            && self.match_expressions.iter().all(|req| {
                let value = labels.get(&req.key);
                match req.operator.as_str() {
                    "In" => value.is_some_and(|v| req.values.contains(v)),
                    "NotIn" => value.is_none_or(|v| !req.values.contains(v)),
                    "Exists" => value.is_some(),
                    "DoesNotExist" => value.is_none(),
                    _ => false,
                }
            })
    }
    pub fn is_empty(&self) -> bool {
        self.match_labels.is_empty() && self.match_expressions.is_empty()
    }
    /// The selector as kubectl prints it (`app=web,tier in (a,b)`).
    pub fn to_query(&self) -> String {
        let mut parts: Vec<String> = self.match_labels.iter().map(|(k, v)| format!("{k}={v}")).collect();
        for req in &self.match_expressions {
            parts.push(match req.operator.as_str() {
                "In" => format!("{} in ({})", req.key, req.values.join(",")),
                "NotIn" => format!("{} notin ({})", req.key, req.values.join(",")),
                "Exists" => req.key.clone(),
                _ => format!("!{}", req.key),
            });
        }
        parts.join(",")
    }
}

/// `intstr.IntOrString`, as used by maxSurge and maxUnavailable.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[cfg_attr(test, derive(serde::Deserialize))]
#[serde(untagged)]
pub enum IntOrString {
    Int(i64),
    String(String),
}

/// Go's zero value: the integer 0.
impl Default for IntOrString {
    fn default() -> Self {
        IntOrString::Int(0)
    }
}

impl IntOrString {
    /// `intstr.GetScaledValueFromIntOrPercent`: a percentage of `total`, rounded up or down.
    pub fn scaled_value(&self, total: i64, round_up: bool) -> Result<i64, String> {
        match self {
            IntOrString::Int(v) => Ok(*v),
            IntOrString::String(s) => {
                let pct: i64 = s
                    .strip_suffix('%')
                    .and_then(|n| n.parse().ok())
                    .ok_or_else(|| format!("invalid value for IntOrString: invalid type: string is not a percentage: {s:?}"))?;
                let scaled = pct.saturating_mul(total);
                Ok(if round_up { scaled.saturating_add(99).div_euclid(100) } else { scaled.div_euclid(100) })
            }
        }
    }
}

/// Untagged, as serde reads it: a number that fits an i64, else a string.
impl FromValue for IntOrString {
    fn from_value(v: &serde_json::Value) -> Result<Self, String> {
        use serde_json::Value;
        match v {
            Value::Number(n) if n.as_i64().is_some() => Ok(IntOrString::Int(n.as_i64().unwrap_or_default())),
            Value::String(s) => Ok(IntOrString::String(s.clone())),
            _ => Err(super::decode::custom("data did not match any variant of untagged enum IntOrString".into())),
        }
    }
}

impl std::fmt::Display for IntOrString {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            IntOrString::Int(v) => write!(f, "{v}"),
            IntOrString::String(s) => f.write_str(s),
        }
    }
}

/// Treats an explicit `null` like an absent field, as Go's decoder does for maps and slices.
pub fn null_as_default<'de, D, T>(d: D) -> Result<T, D::Error>
where
    D: Deserializer<'de>,
    T: Default + Deserialize<'de>,
{
    Ok(Option::<T>::deserialize(d)?.unwrap_or_default())
}

fn no_labels(v: &Shared<StringMap>) -> bool {
    v.is_empty()
}
fn no_owners(v: &Shared<Vec<OwnerReference>>) -> bool {
    v.is_empty()
}
fn is_zero(v: &u64) -> bool {
    *v == 0
}
fn is_zero_i64(v: &i64) -> bool {
    *v == 0
}

/// `resourceVersion` is a decimal string on the wire and a number here.
mod resource_version {
    use super::*;
    pub fn serialize<S: Serializer>(v: &u64, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&v.to_string())
    }
    /// The same reading as `deserialize`, by hand: `null`, `""`, a decimal string or an unsigned number.
    pub(crate) fn decode(v: &serde_json::Value) -> Result<u64, String> {
        use serde_json::Value;
        match v {
            Value::Null => Ok(0),
            Value::String(s) if s.is_empty() => Ok(0),
            Value::String(s) => s.parse().map_err(|_| crate::model::decode::custom(format!("invalid resourceVersion {s:?}"))),
            Value::Number(n) => n.as_u64().ok_or_else(untagged),
            _ => Err(untagged()),
        }
    }
    fn untagged() -> String {
        crate::model::decode::custom("data did not match any variant of untagged enum Rv".into())
    }
    #[cfg(test)]
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<u64, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Rv {
            S(String),
            N(u64),
        }
        match Option::<Rv>::deserialize(d)? {
            None => Ok(0),
            Some(Rv::N(n)) => Ok(n),
            Some(Rv::S(s)) if s.is_empty() => Ok(0),
            Some(Rv::S(s)) => s.parse().map_err(|_| serde::de::Error::custom(format!("invalid resourceVersion {s:?}"))),
        }
    }
}

/// The package upstream's OpenAPI documents name these types in (`schema.rs`).
const SCHEMA_PACKAGE: &str = "io.k8s.apimachinery.pkg.apis.meta.v1";
// Decoding from JSON by hand (see `decode`): each struct's fields in declaration order.
decode_struct!(
/// What every object carries besides its content: its name, where it lives, its labels, and what
/// the API server records about it.
ObjectMeta {
    /// The object's name, unique among objects of its kind in its namespace.
    name: "name" Default,
    /// A prefix from which the API server makes a unique name when no name is given (a ReplicaSet's
    /// pods are named this way).
    generate_name: "generateName" Default,
    /// The namespace the object lives in; empty for kinds that belong to the whole cluster (nodes).
    namespace: "namespace" Default,
    /// Set by the API server when the object is created; a new object of the same name gets a new
    /// one.
    uid: "uid" Default,
    /// The etcd revision of the object's last write. An update that carries it fails with a
    /// conflict if someone wrote since.
    resource_version: "resourceVersion" Default => resource_version::decode,
    /// Counts the changes to the object's desired state (spec); the controller reports the
    /// generation it has acted on as status.observedGeneration.
    generation: "generation" Default,
    /// When the API server stored the object.
    creation_timestamp: "creationTimestamp" Default,
    /// When deletion was asked for. The object stays, going, until its grace period is over and no
    /// finalizer holds it.
    deletion_timestamp: "deletionTimestamp" Default,
    /// How long a going object has to finish before it is removed.
    deletion_grace_period_seconds: "deletionGracePeriodSeconds" Default,
    /// Key/value pairs that selectors match: how a Service finds its pods and a ReplicaSet counts
    /// its own.
    labels: "labels" NullAsDefault,
    /// Key/value pairs for tools and people; nothing selects by them.
    annotations: "annotations" NullAsDefault,
    /// The objects this one belongs to. The garbage collector deletes it when they are gone; the
    /// one marked controller manages it.
    #[list = "map uid"]
    #[patch = "merge uid"]
    owner_references: "ownerReferences" NullAsDefault,
    /// Names of controllers that must finish something before the object may go; each removes its
    /// own.
    #[list = "set"]
    #[patch = "merge"]
    finalizers: "finalizers" NullAsDefault,
});
decode_struct!(
/// An object another belongs to.
OwnerReference {
    /// The owner's API version.
    api_version: "apiVersion" Required,
    /// The owner's kind.
    kind: "kind" Required,
    /// The owner's name.
    name: "name" Required,
    /// The owner's UID; an owner of the same name with another UID is not this owner.
    uid: "uid" Required,
    /// Whether the owner manages this object (at most one owner does).
    controller: "controller" Default,
    /// Whether a foreground delete of the owner waits for this object to go first.
    block_owner_deletion: "blockOwnerDeletion" Default,
});
decode_struct!(
/// Which objects a controller or a budget counts, by their labels. Both parts must match; an empty
/// selector matches everything.
LabelSelector {
    /// Labels an object must have, with these values.
    match_labels: "matchLabels" NullAsDefault,
    /// Conditions on labels (In, NotIn, Exists, DoesNotExist).
    #[list = "atomic"]
    match_expressions: "matchExpressions" NullAsDefault,
});
decode_struct!(
/// One condition on a label.
LabelSelectorRequirement {
    /// The label's key.
    key: "key" Required,
    /// In, NotIn, Exists or DoesNotExist.
    operator: "operator" Required,
    /// The values for In and NotIn; empty for Exists and DoesNotExist.
    #[list = "atomic"]
    values: "values" NullAsDefault,
});

#[cfg(test)]
mod tests {
    use super::*;

    fn labels(pairs: &[(&str, &str)]) -> StringMap {
        pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
    }

    #[test]
    fn selectors_match_labels_and_expressions() {
        let sel = LabelSelector {
            match_labels: labels(&[("app", "web")]),
            match_expressions: vec![LabelSelectorRequirement {
                key: "tier".into(),
                operator: "In".into(),
                values: vec!["a".into(), "b".into()],
            }],
        };
        assert!(sel.matches(&labels(&[("app", "web"), ("tier", "a")])));
        assert!(!sel.matches(&labels(&[("app", "web"), ("tier", "c")])));
        assert!(!sel.matches(&labels(&[("tier", "a")])));
        assert!(LabelSelector::default().matches(&labels(&[])));
        assert_eq!(sel.to_query(), "app=web,tier in (a,b)");
    }

    #[test]
    fn max_surge_rounds_up_and_max_unavailable_rounds_down() {
        let pct = IntOrString::String("25%".into());
        assert_eq!(pct.scaled_value(3, true), Ok(1));
        assert_eq!(pct.scaled_value(3, false), Ok(0));
        assert_eq!(pct.scaled_value(10, true), Ok(3));
        assert_eq!(pct.scaled_value(10, false), Ok(2));
        assert!(IntOrString::String("x".into()).scaled_value(3, true).is_err());
    }
}
