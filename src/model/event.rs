//! Event (core/v1) and Lease (coordination.k8s.io/v1): the record of what each loop did, and
//! the heartbeat each kubelet renews.

use super::decode::decode_struct;
use super::meta::ObjectMeta;
use super::name::Name;
use super::shared::Shared;
use super::time::{MicroTime, Time};
use serde::Serialize;

#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[cfg_attr(test, derive(serde::Deserialize))]
#[serde(rename_all = "camelCase")]
pub struct Event {
    #[serde(default)]
    pub metadata: ObjectMeta,
    #[serde(default)]
    pub involved_object: ObjectReference,
    #[serde(default)]
    pub reason: Name,
    #[serde(default)]
    pub message: Name,
    /// The same for every event one recorder writes, so shared between them.
    #[serde(default)]
    pub source: Shared<EventSource>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_timestamp: Option<Time>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_timestamp: Option<Time>,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub count: i32,
    #[serde(default, rename = "type")]
    pub type_: Name,
    #[serde(default, skip_serializing_if = "str::is_empty")]
    pub reporting_component: Name,
    #[serde(default, skip_serializing_if = "str::is_empty")]
    pub reporting_instance: Name,
    /// Written by clients of the newer recorder (events.k8s.io) and by some operators (kopf);
    /// the simulation's own recorders leave it empty, as client-go's core/v1 recorder does.
    #[serde(default, skip_serializing_if = "str::is_empty")]
    pub action: Name,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub event_time: Option<MicroTime>,
}

/// `count` is `omitempty` in core/v1: an Event a client posted without one is written without one.
fn is_zero(n: &i32) -> bool {
    *n == 0
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
#[cfg_attr(test, derive(serde::Deserialize))]
#[serde(rename_all = "camelCase")]
pub struct ObjectReference {
    #[serde(default)]
    pub kind: Name,
    #[serde(default, skip_serializing_if = "str::is_empty")]
    pub namespace: Name,
    #[serde(default)]
    pub name: Name,
    #[serde(default, skip_serializing_if = "str::is_empty")]
    pub uid: Name,
    #[serde(default, skip_serializing_if = "str::is_empty")]
    pub api_version: Name,
    #[serde(default, skip_serializing_if = "str::is_empty")]
    pub field_path: Name,
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
#[cfg_attr(test, derive(serde::Deserialize))]
#[serde(rename_all = "camelCase")]
pub struct EventSource {
    #[serde(default, skip_serializing_if = "str::is_empty")]
    pub component: String,
    #[serde(default, skip_serializing_if = "str::is_empty")]
    pub host: String,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[cfg_attr(test, derive(serde::Deserialize))]
#[serde(rename_all = "camelCase")]
pub struct Lease {
    #[serde(default)]
    pub metadata: ObjectMeta,
    #[serde(default)]
    pub spec: LeaseSpec,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[cfg_attr(test, derive(serde::Deserialize))]
#[serde(rename_all = "camelCase")]
pub struct LeaseSpec {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub holder_identity: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lease_duration_seconds: Option<i32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub renew_time: Option<MicroTime>,
}

/// The package upstream's OpenAPI documents name these types in (`schema.rs`).
const SCHEMA_PACKAGE: &str = "io.k8s.api.core.v1";
// Decoding from JSON by hand (see `decode`): each struct's fields in declaration order.
decode_struct!(
/// A report that something happened to an object: a reason, a message, who saw it, and how often.
Event {
    /// The object's name, namespace and labels, and what the API server records about it.
    #[required = true]
    metadata: "metadata" Default,
    /// The object it is about.
    #[required = true]
    involved_object: "involvedObject" Default,
    /// A short word for what happened (Scheduled, Pulled, BackOff).
    reason: "reason" Default,
    /// What happened, for people.
    message: "message" Default,
    /// The component that reported it.
    source: "source" Default,
    /// When it first happened.
    first_timestamp: "firstTimestamp" Default,
    /// When it last happened.
    last_timestamp: "lastTimestamp" Default,
    /// How many times it happened.
    count: "count" Default,
    /// Normal or Warning.
    type_: "type" Default,
    /// The component that reported it, in the newer form.
    reporting_component: "reportingComponent" Default,
    /// Which instance of it (the node's name for a kubelet).
    reporting_instance: "reportingInstance" Default,
    /// What the component did.
    action: "action" Default,
    /// When it happened, to the microsecond.
    event_time: "eventTime" Default,
});
decode_struct!(
/// An object, by kind, namespace and name.
ObjectReference {
    /// Its kind.
    kind: "kind" Default,
    /// Its namespace.
    namespace: "namespace" Default,
    /// Its name.
    name: "name" Default,
    /// Its UID.
    uid: "uid" Default,
    /// Its API version.
    api_version: "apiVersion" Default,
    /// A part of the object (a container).
    field_path: "fieldPath" Default,
});
decode_struct!(
/// Who reported an event.
EventSource {
    /// The component (kubelet, default-scheduler).
    component: "component" Default,
    /// The node it runs on.
    host: "host" Default,
});
decode_struct!(
/// A lock with an expiry: each node's kubelet renews its Lease to say the node is alive.
Lease as "io.k8s.api.coordination.v1" "Lease" {
    /// The object's name, namespace and labels, and what the API server records about it.
    metadata: "metadata" Default,
    /// Who holds it, and until when.
    spec: "spec" Default,
});
decode_struct!(
/// Who holds the lease, and until when.
LeaseSpec as "io.k8s.api.coordination.v1" "LeaseSpec" {
    /// The holder.
    holder_identity: "holderIdentity" Default,
    /// How long a renewal lasts.
    lease_duration_seconds: "leaseDurationSeconds" Default,
    /// When it was last renewed.
    renew_time: "renewTime" Default,
});

#[cfg(test)]
mod tests {
    use crate::model::Object;
    use serde_json::json;

    #[test]
    fn an_event_a_client_posts_keeps_its_action_and_event_time() {
        let posted = json!({
            "apiVersion": "v1", "kind": "Event",
            "metadata": {"name": "kopf-event-x", "namespace": "default"},
            "involvedObject": {"kind": "Pod", "name": "web-1", "namespace": "default"},
            "reason": "Labelled", "message": "labelled", "type": "Normal", "action": "Action?",
            "source": {"component": "kopf"}, "reportingComponent": "kopf", "reportingInstance": "dev",
            "firstTimestamp": "2026-01-01T00:00:05.250000+00:00", "eventTime": "2026-01-01T00:00:05.250000+00:00",
        });
        let event = Object::from_json(posted).expect("a valid Event");
        let written = event.to_json();
        assert_eq!(written["action"], "Action?");
        assert_eq!(written["eventTime"], "2026-01-01T00:00:05.250000Z");
        assert_eq!(written["firstTimestamp"], "2026-01-01T00:00:05Z");
        assert!(written.get("count").is_none(), "count is omitempty: {written}");
    }
}
