//! One type for "any object the API server stores", with its kind and its key.
//!
//! The store, watches and the work queues deal in `Object` and `ObjectKey`; the typed structs
//! stay plain data. Keys order by kind, namespace, then name, so listing is deterministic.
//!
//! Every kind is one line of the `kinds!` table in `kinds.rs`: from it come `Kind` and its
//! properties (`KindInfo`: names, API group and version, scope, field selectors, categories),
//! the `Object` enum with its dispatch (kind, metadata, JSON both ways, typed accessors) and
//! `Kind::ALL`. kubectl's resource names, etcd's keyspace and the informers read the table, so
//! nothing else lists the kinds by hand.

use super::meta::ObjectMeta;
use super::name::Name;
use serde::Serialize;
use serde_json::Value;
use std::fmt;

pub use super::kinds::{Kind, Object};

/// What the API server's discovery says about one kind, and what kubectl reads from it.
#[derive(Debug)]
pub struct KindInfo {
    pub kind: Kind,
    /// The kind as manifests spell it (`ReplicaSet`).
    pub name: &'static str,
    /// `v1`, `apps/v1`, `coordination.k8s.io/v1`.
    pub api_version: &'static str,
    /// The resource in URLs and messages (`replicasets`).
    pub plural: &'static str,
    /// The kind in lower case, as keys and `TYPE/NAME` print it (`replicaset`).
    pub singular: &'static str,
    /// kubectl's short names (`rs`).
    pub short_names: &'static [&'static str],
    /// Whether objects live in a namespace (a Node does not).
    pub namespaced: bool,
    /// Whether the registry strategy starts `metadata.generation` at 1 on create (the kinds whose
    /// spec a controller reconciles; a spec change then bumps it).
    pub generation: bool,
    /// The fields a field selector may use besides `metadata.name` and `metadata.namespace`
    /// (the kind's field label conversion functions upstream).
    pub field_labels: &'static [&'static str],
    /// The categories it belongs to (`all`, for `kubectl get all`).
    pub categories: &'static [&'static str],
}

impl KindInfo {
    /// The API group (`""` for the core group).
    pub fn group(&self) -> &'static str {
        self.api_version.split_once('/').map_or("", |(group, _)| group)
    }
    /// The version within the group (`v1`).
    pub fn version(&self) -> &'static str {
        self.api_version.split_once('/').map_or(self.api_version, |(_, version)| version)
    }
}

/// Turns the table in `kinds.rs` into `Kind`, `Object` and their dispatch. Each row is
/// `Variant(Type) accessor { KindInfo fields but kind and name }`; the order of the rows is
/// `Kind`'s order, which is the key order of etcd's keyspace and of every cache.
macro_rules! kinds {
    ($( $(#[$doc:meta])* $kind:ident($ty:ty) $as_fn:ident { $($field:ident: $value:expr),* $(,)? } )*) => {
        /// The kinds kubeloop's API server serves.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize)]
        pub enum Kind {
            $( $(#[$doc])* $kind, )*
        }

        impl Kind {
            pub const COUNT: usize = [$(stringify!($kind)),*].len();
            /// Every kind, in key order.
            pub const ALL: [Kind; Kind::COUNT] = [$(Kind::$kind),*];
        }

        /// Every kind's properties, indexed by `Kind as usize`.
        pub(crate) const TABLE: [$crate::model::object::KindInfo; Kind::COUNT] = [
            $( $crate::model::object::KindInfo { kind: Kind::$kind, name: stringify!($kind), $($field: $value),* }, )*
        ];

        /// Any object the API server stores.
        #[derive(Clone, Debug, PartialEq)]
        pub enum Object {
            $( $kind($ty), )*
        }

        impl Object {
            pub fn kind(&self) -> Kind {
                match self {
                    $( Object::$kind(_) => Kind::$kind, )*
                }
            }
            pub fn meta(&self) -> &$crate::model::ObjectMeta {
                match self {
                    $( Object::$kind(o) => &o.metadata, )*
                }
            }
            pub fn meta_mut(&mut self) -> &mut $crate::model::ObjectMeta {
                match self {
                    $( Object::$kind(o) => &mut o.metadata, )*
                }
            }
            /// An object of this kind with every field at its default.
            pub fn empty(kind: Kind) -> Object {
                match kind {
                    $( Kind::$kind => Object::$kind(<$ty>::default()), )*
                }
            }
            /// The fields as JSON text, without `apiVersion` and `kind`.
            pub(crate) fn body_json(&self) -> serde_json::Result<String> {
                match self {
                    $( Object::$kind(o) => serde_json::to_string(o), )*
                }
            }
            /// What the simulation models of this kind's objects (`schema.rs`).
            pub fn schema(kind: Kind) -> $crate::model::schema::Schema {
                match kind {
                    $( Kind::$kind => <$ty as $crate::model::schema::Describe>::schema(), )*
                }
            }
            /// Reads an object of `kind` from its JSON value (the caller checked the kind).
            pub(crate) fn decode(kind: Kind, value: &serde_json::Value) -> Result<Object, String> {
                match kind {
                    $( Kind::$kind => <$ty as $crate::model::decode::FromValue>::from_value(value).map(Object::$kind), )*
                }
            }
            $(
                pub fn $as_fn(&self) -> Option<&$ty> {
                    match self {
                        Object::$kind(o) => Some(o),
                        #[allow(unreachable_patterns)]
                        _ => None,
                    }
                }
            )*
        }
    };
}
pub(crate) use kinds;

impl Kind {
    /// This kind's row of the table.
    pub fn info(self) -> &'static KindInfo {
        &super::kinds::TABLE[self as usize]
    }
    pub fn as_str(self) -> &'static str {
        self.info().name
    }
    /// What the simulation models of this kind, as a schema (`schema.rs`).
    pub fn schema(self) -> super::schema::Schema {
        Object::schema(self)
    }
    pub fn api_version(self) -> &'static str {
        self.info().api_version
    }
    /// The lowercase plural resource name used in URLs and error messages (`pods`, `deployments`).
    pub fn plural(self) -> &'static str {
        self.info().plural
    }
    /// What a request or trace line calls the objects of this kind: its plural, or for custom
    /// objects the resource (a CustomResourceDefinition's name), `customobjects` for all of them.
    pub fn plural_of(self, resource: &str) -> &str {
        match (self, resource) {
            (Kind::CustomObject, "") => "customobjects",
            (Kind::CustomObject, r) => r,
            (k, _) => k.plural(),
        }
    }
    /// The resource as kubectl and the API server name it in messages: `deployments.apps`.
    pub fn qualified_plural(self) -> String {
        match self.info().group() {
            "" => self.plural().to_string(),
            group => format!("{}.{group}", self.plural()),
        }
    }
    /// The kind qualified by its group, as the API server names it in a Status message:
    /// `Deployment.apps "web" is invalid`, `Pod "x" is invalid` (the core group adds nothing).
    pub fn qualified_kind(self) -> String {
        match self.info().group() {
            "" => self.as_str().to_string(),
            group => format!("{}.{group}", self.as_str()),
        }
    }
    /// The kind in lower case, as keys print it (`replicaset`).
    pub fn lower(self) -> &'static str {
        self.info().singular
    }
    pub fn namespaced(self) -> bool {
        self.info().namespaced
    }
    /// Whether manifests, URLs and discovery name this kind by its row: every kind but
    /// `CustomObject`, whose objects are named by their CustomResourceDefinitions.
    pub fn is_named(self) -> bool {
        !self.api_version().is_empty()
    }
    pub fn from_kind_str(kind: &str) -> Option<Kind> {
        Kind::ALL.into_iter().find(|k| k.as_str() == kind)
    }
    /// Whether the API server serves this kind at `api_version`: the version kubeloop stores,
    /// or an older one still served that converts to it (autoscaling/v1 HPAs).
    pub fn serves(self, api_version: &str) -> bool {
        api_version == self.api_version() || (self == Kind::HorizontalPodAutoscaler && api_version == super::autoscaling::V1)
    }
}

impl fmt::Display for Kind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Where an object lives: its kind, namespace (empty for nodes) and name.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub struct ObjectKey {
    pub kind: Kind,
    /// Which custom resource (its definition's name, `crontabs.stable.example.com`) for a
    /// `Kind::CustomObject`; empty for every built-in kind. Ordered right after the kind, so a
    /// resource's objects are one range of etcd's keyspace, as the built-in kinds' are.
    pub resource: Name,
    pub namespace: Name,
    pub name: Name,
}

impl ObjectKey {
    pub fn new(kind: Kind, namespace: &str, name: &str) -> Self {
        let namespace = if kind.namespaced() { Name::new(namespace) } else { Name::default() };
        ObjectKey { kind, resource: Name::default(), namespace, name: Name::new(name) }
    }
    /// The key of a custom object of `resource` (a CustomResourceDefinition's name); its
    /// namespace is empty for a cluster-scoped resource.
    pub fn custom(resource: &str, namespace: &str, name: &str) -> Self {
        ObjectKey { kind: Kind::CustomObject, resource: resource.into(), namespace: namespace.into(), name: name.into() }
    }
    /// The key of a stored object, sharing its name and namespace rather than copying them.
    pub fn of(kind: Kind, meta: &ObjectMeta) -> Self {
        let namespace = if kind.namespaced() { meta.namespace.clone() } else { Name::default() };
        ObjectKey { kind, resource: Name::default(), namespace, name: meta.name.clone() }
    }
    /// The resource as messages name it: `pods`, `deployments.apps`, or a custom resource's
    /// `crontabs.stable.example.com`.
    pub fn qualified_plural(&self) -> String {
        if self.resource.is_empty() {
            self.kind.qualified_plural()
        } else {
            self.resource.to_string()
        }
    }
    /// The `namespace/name` form client-go's work queues use.
    pub fn ns_name(&self) -> String {
        if self.namespace.is_empty() {
            self.name.to_string()
        } else {
            format!("{}/{}", self.namespace, self.name)
        }
    }
}

impl fmt::Display for ObjectKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_key(f, self.kind, &self.resource, &self.namespace, &self.name)
    }
}

/// `kind/namespace/name` (or `kind/name` when cluster-scoped; a custom object's resource
/// stands for its kind), without allocating.
fn write_key(f: &mut fmt::Formatter<'_>, kind: Kind, resource: &str, namespace: &str, name: &str) -> fmt::Result {
    let kind = if resource.is_empty() { kind.lower() } else { resource };
    if namespace.is_empty() {
        write!(f, "{kind}/{name}")
    } else {
        write!(f, "{kind}/{namespace}/{name}")
    }
}

/// An object's key for printing, borrowed rather than built.
pub struct KeyRef<'a>(&'a Object);

impl fmt::Display for KeyRef<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let m = self.0.meta();
        let ns = if self.0.kind().namespaced() { m.namespace.as_str() } else { "" };
        let resource = self.0.as_custom_object().map_or("", |o| o.resource());
        write_key(f, self.0.kind(), resource, ns, &m.name)
    }
}

impl Object {
    pub fn key(&self) -> ObjectKey {
        match self {
            Object::CustomObject(o) => ObjectKey { resource: o.body.resource.clone(), ..ObjectKey::of(Kind::CustomObject, &o.metadata) },
            _ => ObjectKey::of(self.kind(), self.meta()),
        }
    }
    /// The key for printing, without building an `ObjectKey`.
    pub fn key_ref(&self) -> KeyRef<'_> {
        KeyRef(self)
    }
    /// The object as the API server returns it: `apiVersion` and `kind` first, then its fields.
    pub fn to_json(&self) -> Value {
        // Through JSON text rather than `serde_json::to_value`: the model's serialisers are then
        // compiled for one serializer (the one the pod-template hash writes bytes with) instead
        // of two, which is several KB of the page's wasm. The value is the same: the model has
        // no floats, and a JSON map orders its keys whichever way it is built.
        let text = self.body_json().unwrap_or_default();
        let body = serde_json::from_str::<Value>(&text);
        let mut out = serde_json::Map::new();
        out.insert("apiVersion".into(), Value::String(self.kind().api_version().into()));
        out.insert("kind".into(), Value::String(self.kind().as_str().into()));
        if let Ok(Value::Object(fields)) = body {
            out.extend(fields);
        }
        Value::Object(out)
    }

    /// Decodes an object of a custom resource from JSON: any `apiVersion` and `kind` (which
    /// CustomResourceDefinition serves them is the API server's to say, `api::crd`).
    pub fn custom_from_json(value: &Value) -> Result<Object, String> {
        use super::decode::FromValue;
        let kind = value.get("kind").and_then(Value::as_str).unwrap_or_default();
        super::custom::CustomObject::from_value(value).map(Object::CustomObject).map_err(|e| format!("error decoding {kind}: {e}"))
    }

    /// Decodes one object from JSON (or YAML turned into JSON), checking `apiVersion` and `kind`.
    /// Errors read as kubectl's decoding errors do.
    pub fn from_json(value: Value) -> Result<Object, String> {
        let kind = value.get("kind").and_then(Value::as_str).unwrap_or_default().to_string();
        let api_version = value.get("apiVersion").and_then(Value::as_str).unwrap_or_default().to_string();
        if kind.is_empty() {
            return Err("Object 'Kind' is missing in the manifest".into());
        }
        if api_version.is_empty() {
            return Err(format!("Object 'apiVersion' is missing in the manifest (kind {kind:?})"));
        }
        let known = Kind::from_kind_str(&kind).filter(|k| k.serves(&api_version));
        let Some(k) = known else {
            return Err(format!(
                "resource mapping not found for kind {kind:?} in version {api_version:?}: ensure CRDs are installed first"
            ));
        };
        let decode_err = |e: String| format!("error decoding {kind}: {e}");
        let value = if api_version == k.api_version() { value } else { super::autoscaling::from_v1(value) };
        Object::decode(k, &value).map_err(decode_err)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Pod;

    /// etcd keeps every version of every object until compaction and each informer holds one, so
    /// `Object` — as large as its largest variant — costs its size hundreds of thousands of
    /// times at scale. A pod is the object there are most of; no rarer kind may make every
    /// object larger than a pod (a large spec goes behind a `Shared`, as a pod's does). A
    /// CronJob's inline Job template once made every object 688 bytes instead of 440.
    #[test]
    fn no_kind_makes_an_object_larger_than_a_pod() {
        let (object, pod) = (std::mem::size_of::<Object>(), std::mem::size_of::<Pod>());
        assert!(object <= pod + 8, "Object is {object} bytes, a Pod {pod}");
    }
}
