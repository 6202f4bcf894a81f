//! One type for "any object the API server stores", with its kind and its key.
//!
//! The store, watches and the work queues deal in `Object` and `ObjectKey`; the typed structs
//! stay plain data. Keys order by kind, namespace, then name, so listing is deterministic.

use super::apps::{Deployment, ReplicaSet};
use super::decode::FromValue;
use super::event::{Event, Lease};
use super::meta::ObjectMeta;
use super::name::Name;
use super::node::Node;
use super::pod::Pod;
use serde::Serialize;
use serde_json::Value;
use std::fmt;

/// The kinds kubeloop's API server serves.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub enum Kind {
    Node,
    Pod,
    ReplicaSet,
    Deployment,
    Event,
    Lease,
}

impl Kind {
    pub const ALL: [Kind; 6] = [Kind::Node, Kind::Pod, Kind::ReplicaSet, Kind::Deployment, Kind::Event, Kind::Lease];

    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Node => "Node",
            Kind::Pod => "Pod",
            Kind::ReplicaSet => "ReplicaSet",
            Kind::Deployment => "Deployment",
            Kind::Event => "Event",
            Kind::Lease => "Lease",
        }
    }
    pub fn api_version(self) -> &'static str {
        match self {
            Kind::Node | Kind::Pod | Kind::Event => "v1",
            Kind::ReplicaSet | Kind::Deployment => "apps/v1",
            Kind::Lease => "coordination.k8s.io/v1",
        }
    }
    /// The lowercase plural resource name used in URLs and error messages (`pods`, `deployments.apps`).
    pub fn plural(self) -> &'static str {
        match self {
            Kind::Node => "nodes",
            Kind::Pod => "pods",
            Kind::ReplicaSet => "replicasets",
            Kind::Deployment => "deployments",
            Kind::Event => "events",
            Kind::Lease => "leases",
        }
    }
    /// The resource as kubectl and the API server name it in messages: `deployments.apps`.
    pub fn qualified_plural(self) -> String {
        match self.api_version().split_once('/') {
            Some((group, _)) => format!("{}.{group}", self.plural()),
            None => self.plural().to_string(),
        }
    }
    /// The kind in lower case, as keys print it (`replicaset`).
    pub fn lower(self) -> &'static str {
        match self {
            Kind::Node => "node",
            Kind::Pod => "pod",
            Kind::ReplicaSet => "replicaset",
            Kind::Deployment => "deployment",
            Kind::Event => "event",
            Kind::Lease => "lease",
        }
    }
    pub fn namespaced(self) -> bool {
        self != Kind::Node
    }
    pub fn from_kind_str(kind: &str) -> Option<Kind> {
        Kind::ALL.into_iter().find(|k| k.as_str() == kind)
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
    pub namespace: Name,
    pub name: Name,
}

impl ObjectKey {
    pub fn new(kind: Kind, namespace: &str, name: &str) -> Self {
        let namespace = if kind.namespaced() { Name::new(namespace) } else { Name::default() };
        ObjectKey { kind, namespace, name: Name::new(name) }
    }
    /// The key of a stored object, sharing its name and namespace rather than copying them.
    pub fn of(kind: Kind, meta: &ObjectMeta) -> Self {
        let namespace = if kind.namespaced() { meta.namespace.clone() } else { Name::default() };
        ObjectKey { kind, namespace, name: meta.name.clone() }
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
        write_key(f, self.kind, &self.namespace, &self.name)
    }
}

/// `kind/namespace/name` (or `kind/name` when cluster-scoped), without allocating.
fn write_key(f: &mut fmt::Formatter<'_>, kind: Kind, namespace: &str, name: &str) -> fmt::Result {
    if namespace.is_empty() {
        write!(f, "{}/{name}", kind.lower())
    } else {
        write!(f, "{}/{namespace}/{name}", kind.lower())
    }
}

/// An object's key for printing, borrowed rather than built.
pub struct KeyRef<'a>(&'a Object);

impl fmt::Display for KeyRef<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let m = self.0.meta();
        let ns = if self.0.kind().namespaced() { m.namespace.as_str() } else { "" };
        write_key(f, self.0.kind(), ns, &m.name)
    }
}

#[derive(Clone, Debug, PartialEq)]
pub enum Object {
    Node(Node),
    Pod(Pod),
    ReplicaSet(ReplicaSet),
    Deployment(Deployment),
    Event(Event),
    Lease(Lease),
}

macro_rules! each_object {
    ($obj:expr, $x:ident => $body:expr) => {
        match $obj {
            Object::Node($x) => $body,
            Object::Pod($x) => $body,
            Object::ReplicaSet($x) => $body,
            Object::Deployment($x) => $body,
            Object::Event($x) => $body,
            Object::Lease($x) => $body,
        }
    };
}

impl Object {
    pub fn kind(&self) -> Kind {
        match self {
            Object::Node(_) => Kind::Node,
            Object::Pod(_) => Kind::Pod,
            Object::ReplicaSet(_) => Kind::ReplicaSet,
            Object::Deployment(_) => Kind::Deployment,
            Object::Event(_) => Kind::Event,
            Object::Lease(_) => Kind::Lease,
        }
    }
    pub fn meta(&self) -> &ObjectMeta {
        each_object!(self, o => &o.metadata)
    }
    pub fn meta_mut(&mut self) -> &mut ObjectMeta {
        each_object!(self, o => &mut o.metadata)
    }
    pub fn key(&self) -> ObjectKey {
        ObjectKey::of(self.kind(), self.meta())
    }
    /// The key for printing, without building an `ObjectKey`.
    pub fn key_ref(&self) -> KeyRef<'_> {
        KeyRef(self)
    }
    pub fn as_pod(&self) -> Option<&Pod> {
        match self {
            Object::Pod(p) => Some(p),
            _ => None,
        }
    }
    pub fn as_node(&self) -> Option<&Node> {
        match self {
            Object::Node(n) => Some(n),
            _ => None,
        }
    }
    pub fn as_replica_set(&self) -> Option<&ReplicaSet> {
        match self {
            Object::ReplicaSet(r) => Some(r),
            _ => None,
        }
    }
    pub fn as_deployment(&self) -> Option<&Deployment> {
        match self {
            Object::Deployment(d) => Some(d),
            _ => None,
        }
    }
    pub fn as_event(&self) -> Option<&Event> {
        match self {
            Object::Event(e) => Some(e),
            _ => None,
        }
    }
    pub fn as_lease(&self) -> Option<&Lease> {
        match self {
            Object::Lease(l) => Some(l),
            _ => None,
        }
    }

    /// The object as the API server returns it: `apiVersion` and `kind` first, then its fields.
    pub fn to_json(&self) -> Value {
        // Through JSON text rather than `serde_json::to_value`: the model's serialisers are then
        // compiled for one serializer (the one the pod-template hash writes bytes with) instead
        // of two, which is several KB of the page's wasm. The value is the same: the model has
        // no floats, and a JSON map orders its keys whichever way it is built.
        let text = each_object!(self, o => serde_json::to_string(o)).unwrap_or_default();
        let body = serde_json::from_str::<Value>(&text);
        let mut out = serde_json::Map::new();
        out.insert("apiVersion".into(), Value::String(self.kind().api_version().into()));
        out.insert("kind".into(), Value::String(self.kind().as_str().into()));
        if let Ok(Value::Object(fields)) = body {
            out.extend(fields);
        }
        Value::Object(out)
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
        let known = Kind::from_kind_str(&kind).filter(|k| k.api_version() == api_version);
        let Some(k) = known else {
            return Err(format!(
                "resource mapping not found for kind {kind:?} in version {api_version:?}: ensure CRDs are installed first"
            ));
        };
        let decode_err = |e: String| format!("error decoding {kind}: {e}");
        Ok(match k {
            Kind::Node => Object::Node(FromValue::from_value(&value).map_err(decode_err)?),
            Kind::Pod => Object::Pod(FromValue::from_value(&value).map_err(decode_err)?),
            Kind::ReplicaSet => Object::ReplicaSet(FromValue::from_value(&value).map_err(decode_err)?),
            Kind::Deployment => Object::Deployment(FromValue::from_value(&value).map_err(decode_err)?),
            Kind::Event => Object::Event(FromValue::from_value(&value).map_err(decode_err)?),
            Kind::Lease => Object::Lease(FromValue::from_value(&value).map_err(decode_err)?),
        })
    }
}
