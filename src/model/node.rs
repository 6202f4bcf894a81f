//! The Node (core/v1): capacity, conditions and taints that the scheduler and the node
//! lifecycle controller read, and that each kubelet reports.

use super::decode::decode_struct;
#[cfg(test)]
use super::meta::null_as_default;
use super::meta::ObjectMeta;
use super::quantity::Quantity;
use super::shared::Shared;
use super::time::Time;
use serde::Serialize;
use std::collections::BTreeMap;

#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[cfg_attr(test, derive(serde::Deserialize))]
#[serde(rename_all = "camelCase")]
pub struct Node {
    #[serde(default)]
    pub metadata: ObjectMeta,
    #[serde(default)]
    pub spec: NodeSpec,
    #[serde(default)]
    pub status: NodeStatus,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[cfg_attr(test, derive(serde::Deserialize))]
#[serde(rename_all = "camelCase")]
pub struct NodeSpec {
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub unschedulable: bool,
    #[serde(default, skip_serializing_if = "Vec::is_empty", deserialize_with = "null_as_default")]
    pub taints: Vec<Taint>,
    #[serde(default, rename = "podCIDR", skip_serializing_if = "Option::is_none")]
    pub pod_cidr: Option<String>,
    #[serde(default, rename = "podCIDRs", skip_serializing_if = "Vec::is_empty", deserialize_with = "null_as_default")]
    pub pod_cidrs: Vec<String>,
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
#[cfg_attr(test, derive(serde::Deserialize))]
#[serde(rename_all = "camelCase")]
pub struct Taint {
    pub key: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub value: String,
    pub effect: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time_added: Option<Time>,
}

impl std::fmt::Display for Taint {
    /// `key=value:Effect`, as kubectl describe prints taints.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.value.is_empty() {
            write!(f, "{}:{}", self.key, self.effect)
        } else {
            write!(f, "{}={}:{}", self.key, self.value, self.effect)
        }
    }
}

#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[cfg_attr(test, derive(serde::Deserialize))]
#[serde(rename_all = "camelCase")]
pub struct NodeStatus {
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty", deserialize_with = "null_as_default")]
    pub capacity: BTreeMap<String, Quantity>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty", deserialize_with = "null_as_default")]
    pub allocatable: BTreeMap<String, Quantity>,
    #[serde(default, skip_serializing_if = "Vec::is_empty", deserialize_with = "null_as_default")]
    pub conditions: Vec<NodeCondition>,
    #[serde(default, skip_serializing_if = "Vec::is_empty", deserialize_with = "null_as_default")]
    pub addresses: Vec<NodeAddress>,
    #[serde(default)]
    pub node_info: Shared<NodeSystemInfo>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[cfg_attr(test, derive(serde::Deserialize))]
#[serde(rename_all = "camelCase")]
pub struct NodeCondition {
    #[serde(rename = "type")]
    pub type_: String,
    pub status: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_heartbeat_time: Option<Time>,
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
pub struct NodeAddress {
    #[serde(rename = "type")]
    pub type_: String,
    pub address: String,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[cfg_attr(test, derive(serde::Deserialize))]
#[serde(rename_all = "camelCase")]
pub struct NodeSystemInfo {
    #[serde(default)]
    pub kubelet_version: String,
    #[serde(default)]
    pub container_runtime_version: String,
    #[serde(default)]
    pub os_image: String,
    #[serde(default)]
    pub architecture: String,
    #[serde(default)]
    pub operating_system: String,
}

/// A node's allocatable resources as integers, for the scheduler and the page's capacity bars.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Allocatable {
    pub milli_cpu: i64,
    pub memory: i64,
    pub pods: i64,
}

impl Node {
    pub fn condition(&self, type_: &str) -> Option<&NodeCondition> {
        self.status.conditions.iter().find(|c| c.type_ == type_)
    }
    /// The Ready condition's status: "True", "False" or "Unknown" (Unknown until first reported).
    pub fn ready_status(&self) -> &str {
        self.condition("Ready").map(|c| c.status.as_str()).unwrap_or("Unknown")
    }
    pub fn allocatable(&self) -> Allocatable {
        let get = |name: &str, milli: bool| {
            self.status.allocatable.get(name).and_then(|q| if milli { q.milli_value() } else { q.value() }).unwrap_or(0)
        };
        Allocatable { milli_cpu: get("cpu", true), memory: get("memory", false), pods: get("pods", false) }
    }
}

/// The package upstream's OpenAPI documents name these types in (`schema.rs`).
const SCHEMA_PACKAGE: &str = "io.k8s.api.core.v1";
// Decoding from JSON by hand (see `decode`): each struct's fields in declaration order.
decode_struct!(
/// A machine that runs pods. Its kubelet registers it and reports its status.
Node {
    /// The object's name, namespace and labels, and what the API server records about it.
    metadata: "metadata" Default,
    /// Whether it takes new pods, and its taints.
    spec: "spec" Default,
    /// What its kubelet reports: capacity, conditions, addresses.
    status: "status" Default,
});
decode_struct!(
/// How a node takes pods.
NodeSpec {
    /// Whether kube-scheduler places new pods on it (kubectl cordon sets it).
    unschedulable: "unschedulable" Default,
    /// Taints that repel pods which do not tolerate them.
    #[list = "atomic"]
    taints: "taints" NullAsDefault,
    /// The range the node's pods get addresses from.
    pod_cidr: "podCIDR" Default,
    /// The same, per address family.
    #[list = "set"]
    #[patch = "merge"]
    pod_cidrs: "podCIDRs" NullAsDefault,
});
decode_struct!(
/// A mark on a node that repels pods without a matching toleration.
Taint {
    /// The taint's key.
    key: "key" Required,
    /// Its value.
    value: "value" Default,
    /// NoSchedule, PreferNoSchedule or NoExecute (running pods are evicted too).
    effect: "effect" Required,
    /// When a NoExecute taint was added.
    time_added: "timeAdded" Default,
});
decode_struct!(
/// What a node's kubelet reports.
NodeStatus {
    /// The node's resources.
    capacity: "capacity" NullAsDefault,
    /// What pods may use of them.
    allocatable: "allocatable" NullAsDefault,
    /// Ready, and the pressure conditions.
    #[list = "map type"]
    #[patch = "merge type"]
    conditions: "conditions" NullAsDefault,
    /// The node's addresses (InternalIP, Hostname).
    #[list = "map type"]
    #[patch = "merge type"]
    addresses: "addresses" NullAsDefault,
    /// Versions and platform.
    node_info: "nodeInfo" Default,
});
decode_struct!(
/// A condition of a node: Ready (its kubelet is healthy and reporting), or a pressure condition.
NodeCondition {
    /// Which condition this is.
    type_: "type" Required,
    /// True, False or Unknown.
    status: "status" Required,
    /// When the kubelet last reported this condition.
    last_heartbeat_time: "lastHeartbeatTime" Default,
    /// When the status last changed.
    last_transition_time: "lastTransitionTime" Default,
    /// A word for why the condition is as it is.
    reason: "reason" Default,
    /// Why, for people.
    message: "message" Default,
});
decode_struct!(
/// An address of a node.
NodeAddress {
    /// InternalIP, ExternalIP or Hostname.
    type_: "type" Required,
    /// The address.
    address: "address" Required,
});
decode_struct!(
/// Versions and platform of a node.
NodeSystemInfo {
    /// The kubelet's version.
    #[required = true]
    kubelet_version: "kubeletVersion" Default,
    /// The container runtime and its version.
    #[required = true]
    container_runtime_version: "containerRuntimeVersion" Default,
    /// The operating system's name.
    #[required = true]
    os_image: "osImage" Default,
    /// The CPU architecture.
    #[required = true]
    architecture: "architecture" Default,
    /// linux.
    #[required = true]
    operating_system: "operatingSystem" Default,
});
