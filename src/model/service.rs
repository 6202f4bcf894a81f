//! Service (core/v1), EndpointSlice (discovery.k8s.io/v1) and Endpoints (core/v1): the stable
//! address a set of pods is reached by, and the lists of backends the endpoint controllers keep
//! pointed at the ready ones. Plain data; the allocation and the controllers live elsewhere.

use super::decode::decode_struct;
use super::event::ObjectReference;
#[cfg(test)]
use super::meta::null_as_default;
use super::meta::{IntOrString, ObjectMeta, StringMap};
use super::shared::Shared;
use serde::Serialize;

#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[cfg_attr(test, derive(serde::Deserialize))]
#[serde(rename_all = "camelCase")]
pub struct Service {
    #[serde(default)]
    pub metadata: ObjectMeta,
    #[serde(default)]
    /// Behind a `Shared`, as a pod's spec is: versions that change only the status share it,
    /// and `Object`, as large as its largest variant, stays the size of a pod (inline, this
    /// spec made every stored version of every object larger).
    pub spec: Shared<ServiceSpec>,
    #[serde(default)]
    pub status: ServiceStatus,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[cfg_attr(test, derive(serde::Deserialize))]
#[serde(rename_all = "camelCase")]
pub struct ServiceSpec {
    #[serde(default, skip_serializing_if = "Vec::is_empty", deserialize_with = "null_as_default")]
    pub ports: Vec<ServicePort>,
    #[serde(default, skip_serializing_if = "StringMap::is_empty", deserialize_with = "null_as_default")]
    pub selector: StringMap,
    #[serde(default, rename = "clusterIP", skip_serializing_if = "Option::is_none")]
    pub cluster_ip: Option<String>,
    #[serde(default, rename = "clusterIPs", skip_serializing_if = "Vec::is_empty", deserialize_with = "null_as_default")]
    pub cluster_ips: Vec<String>,
    #[serde(default, rename = "type", skip_serializing_if = "Option::is_none")]
    pub type_: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub external_name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_affinity: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty", deserialize_with = "null_as_default")]
    pub ip_families: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ip_family_policy: Option<String>,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub publish_not_ready_addresses: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub external_traffic_policy: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub internal_traffic_policy: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allocate_load_balancer_node_ports: Option<bool>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[cfg_attr(test, derive(serde::Deserialize))]
#[serde(rename_all = "camelCase")]
pub struct ServicePort {
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub protocol: Option<String>,
    #[serde(default)]
    pub port: i64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target_port: Option<IntOrString>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node_port: Option<i64>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[cfg_attr(test, derive(serde::Deserialize))]
#[serde(rename_all = "camelCase")]
pub struct ServiceStatus {
    #[serde(default)]
    pub load_balancer: LoadBalancerStatus,
}

/// No cloud provider answers here, so `ingress` stays empty and EXTERNAL-IP `<pending>`.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[cfg_attr(test, derive(serde::Deserialize))]
#[serde(rename_all = "camelCase")]
pub struct LoadBalancerStatus {
    #[serde(default, skip_serializing_if = "Vec::is_empty", deserialize_with = "null_as_default")]
    pub ingress: Vec<LoadBalancerIngress>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[cfg_attr(test, derive(serde::Deserialize))]
#[serde(rename_all = "camelCase")]
pub struct LoadBalancerIngress {
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub ip: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub hostname: String,
}

impl Service {
    /// `spec.type`, `ClusterIP` when unset (the default the API server fills in).
    pub fn type_(&self) -> &str {
        self.spec.type_.as_deref().unwrap_or("ClusterIP")
    }
    /// `clusterIP: None`.
    pub fn is_headless(&self) -> bool {
        self.spec.cluster_ip.as_deref() == Some("None")
    }
}

/// The label every EndpointSlice carries naming its Service (`discoveryv1.LabelServiceName`).
pub const LABEL_SERVICE_NAME: &str = "kubernetes.io/service-name";

#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[cfg_attr(test, derive(serde::Deserialize))]
#[serde(rename_all = "camelCase")]
pub struct EndpointSlice {
    #[serde(default)]
    pub metadata: ObjectMeta,
    #[serde(default)]
    pub address_type: String,
    #[serde(default, deserialize_with = "null_as_default")]
    pub endpoints: Vec<Endpoint>,
    #[serde(default, deserialize_with = "null_as_default")]
    pub ports: Vec<EndpointPort>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[cfg_attr(test, derive(serde::Deserialize))]
#[serde(rename_all = "camelCase")]
pub struct Endpoint {
    #[serde(default, deserialize_with = "null_as_default")]
    pub addresses: Vec<String>,
    #[serde(default)]
    pub conditions: EndpointConditions,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target_ref: Option<ObjectReference>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node_name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub zone: Option<String>,
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
#[cfg_attr(test, derive(serde::Deserialize))]
#[serde(rename_all = "camelCase")]
pub struct EndpointConditions {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ready: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub serving: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub terminating: Option<bool>,
}

impl EndpointConditions {
    /// The endpoint's state in one word, as the stage and the lessons name it: `terminating`
    /// (its pod is being deleted), `not ready`, or `ready` (an unset `ready` means ready, as
    /// upstream's consumers read it).
    pub fn state(&self) -> &'static str {
        match (self.ready, self.terminating) {
            (_, Some(true)) => "terminating",
            (Some(false), _) => "not ready",
            _ => "ready",
        }
    }
}

/// The Service an EndpointSlice belongs to, by its `kubernetes.io/service-name` label.
impl EndpointSlice {
    pub fn service_name(&self) -> Option<&str> {
        self.metadata.labels.get(LABEL_SERVICE_NAME).map(String::as_str)
    }
}

/// A port of an EndpointSlice (discovery/v1) or of an Endpoints subset (core/v1): the same shape.
#[derive(Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[cfg_attr(test, derive(serde::Deserialize))]
#[serde(rename_all = "camelCase")]
pub struct EndpointPort {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub protocol: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub port: Option<i64>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[cfg_attr(test, derive(serde::Deserialize))]
#[serde(rename_all = "camelCase")]
pub struct Endpoints {
    #[serde(default)]
    pub metadata: ObjectMeta,
    #[serde(default, skip_serializing_if = "Vec::is_empty", deserialize_with = "null_as_default")]
    pub subsets: Vec<EndpointSubset>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[cfg_attr(test, derive(serde::Deserialize))]
#[serde(rename_all = "camelCase")]
pub struct EndpointSubset {
    #[serde(default, skip_serializing_if = "Vec::is_empty", deserialize_with = "null_as_default")]
    pub addresses: Vec<EndpointAddress>,
    #[serde(default, skip_serializing_if = "Vec::is_empty", deserialize_with = "null_as_default")]
    pub not_ready_addresses: Vec<EndpointAddress>,
    #[serde(default, skip_serializing_if = "Vec::is_empty", deserialize_with = "null_as_default")]
    pub ports: Vec<EndpointPort>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[cfg_attr(test, derive(serde::Deserialize))]
#[serde(rename_all = "camelCase")]
pub struct EndpointAddress {
    #[serde(default)]
    pub ip: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node_name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target_ref: Option<ObjectReference>,
}

/// The package upstream's OpenAPI documents name these types in (`schema.rs`).
const SCHEMA_PACKAGE: &str = "io.k8s.api.core.v1";
// Decoding from JSON by hand (see `decode`): each struct's fields in declaration order.
decode_struct!(
/// A stable address for a set of pods, chosen by labels; kube-proxy on each node sends the
/// Service's traffic to its ready pods.
Service {
    /// The object's name, namespace and labels, and what the API server records about it.
    metadata: "metadata" Default,
    /// Which pods, and on which ports.
    spec: "spec" Default,
    /// The load balancer's addresses, for type LoadBalancer.
    status: "status" Default,
});
decode_struct!(
/// Which pods a Service sends to, and how.
ServiceSpec {
    /// The ports it serves and the pods' ports they lead to.
    #[list = "map port protocol"]
    #[patch = "merge port"]
    ports: "ports" NullAsDefault,
    /// The labels of its pods.
    selector: "selector" NullAsDefault,
    /// Its virtual address inside the cluster, allocated when it is created.
    cluster_ip: "clusterIP" Default,
    /// Its virtual addresses, per family.
    #[list = "atomic"]
    cluster_ips: "clusterIPs" NullAsDefault,
    /// ClusterIP (the default), NodePort, LoadBalancer or ExternalName.
    type_: "type" Default,
    /// For ExternalName: the DNS name it stands for.
    external_name: "externalName" Default,
    /// None or ClientIP (a client keeps its pod).
    session_affinity: "sessionAffinity" Default,
    /// IPv4, IPv6 or both.
    #[list = "atomic"]
    ip_families: "ipFamilies" NullAsDefault,
    /// SingleStack, PreferDualStack or RequireDualStack.
    ip_family_policy: "ipFamilyPolicy" Default,
    /// Whether pods that are not Ready are its endpoints too.
    publish_not_ready_addresses: "publishNotReadyAddresses" Default,
    /// Cluster or Local: whether outside traffic may go to pods on other nodes.
    external_traffic_policy: "externalTrafficPolicy" Default,
    /// Cluster or Local: the same for traffic from inside.
    internal_traffic_policy: "internalTrafficPolicy" Default,
    /// Whether a LoadBalancer gets node ports.
    allocate_load_balancer_node_ports: "allocateLoadBalancerNodePorts" Default,
});
decode_struct!(
/// A port a Service serves.
ServicePort {
    /// The port's name; required when there are several.
    name: "name" Default,
    /// TCP (the default), UDP or SCTP.
    protocol: "protocol" Default,
    /// The Service's port.
    #[format = "int32"]
    #[required = true]
    port: "port" Default,
    /// The pods' port, by number or by name (the port by default).
    target_port: "targetPort" Default,
    /// For NodePort and LoadBalancer: the port on every node.
    #[format = "int32"]
    node_port: "nodePort" Default,
});
decode_struct!(
/// The state of a Service's load balancer.
ServiceStatus {
    /// Its addresses.
    load_balancer: "loadBalancer" Default,
});
decode_struct!(
/// A load balancer's addresses.
LoadBalancerStatus {
    /// Where traffic enters.
    #[list = "atomic"]
    ingress: "ingress" NullAsDefault,
});
decode_struct!(
/// Where traffic enters a load balancer.
LoadBalancerIngress {
    /// An address.
    ip: "ip" Default,
    /// A host name.
    hostname: "hostname" Default,
});
decode_struct!(
/// A part of a Service's endpoints: the addresses of its pods and whether each is ready, which the
/// EndpointSlice controller keeps.
EndpointSlice as "io.k8s.api.discovery.v1" "EndpointSlice" {
    /// The object's name, namespace and labels, and what the API server records about it.
    metadata: "metadata" Default,
    /// IPv4, IPv6 or FQDN.
    #[required = true]
    address_type: "addressType" Default,
    /// The pods' addresses and conditions.
    #[list = "atomic"]
    #[required = true]
    endpoints: "endpoints" NullAsDefault,
    /// The ports the endpoints serve.
    #[list = "atomic"]
    ports: "ports" NullAsDefault,
});
decode_struct!(
/// One endpoint: a pod.
Endpoint as "io.k8s.api.discovery.v1" "Endpoint" {
    /// Its address.
    #[list = "set"]
    #[required = true]
    addresses: "addresses" NullAsDefault,
    /// Whether it is ready, serving, terminating.
    conditions: "conditions" Default,
    /// The pod.
    target_ref: "targetRef" Default,
    /// The pod's node.
    node_name: "nodeName" Default,
    /// The node's zone.
    zone: "zone" Default,
});
decode_struct!(
/// Whether an endpoint takes traffic.
EndpointConditions as "io.k8s.api.discovery.v1" "EndpointConditions" {
    /// Serving and not terminating: kube-proxy sends it traffic.
    ready: "ready" Default,
    /// Its pod is Ready, whether or not it is going.
    serving: "serving" Default,
    /// Its pod is going.
    terminating: "terminating" Default,
});
decode_struct!(
/// A port the endpoints serve.
EndpointPort as "io.k8s.api.discovery.v1" "EndpointPort" {
    /// The Service port's name.
    name: "name" Default,
    /// TCP, UDP or SCTP.
    protocol: "protocol" Default,
    /// The pods' port number.
    #[format = "int32"]
    port: "port" Default,
});
decode_struct!(
/// A Service's endpoints in the older form, which the endpoints controller keeps.
Endpoints {
    /// The object's name, namespace and labels, and what the API server records about it.
    metadata: "metadata" Default,
    /// Addresses and the ports they serve.
    #[list = "atomic"]
    subsets: "subsets" NullAsDefault,
});
decode_struct!(
/// Addresses serving the same ports.
EndpointSubset {
    /// Ready addresses.
    #[list = "atomic"]
    addresses: "addresses" NullAsDefault,
    /// Addresses of pods that are not Ready.
    #[list = "atomic"]
    not_ready_addresses: "notReadyAddresses" NullAsDefault,
    /// The ports.
    #[list = "atomic"]
    ports: "ports" NullAsDefault,
});
decode_struct!(
/// An address of a pod.
EndpointAddress {
    /// The address.
    #[required = true]
    ip: "ip" Default,
    /// The pod's node.
    node_name: "nodeName" Default,
    /// The pod.
    target_ref: "targetRef" Default,
});
