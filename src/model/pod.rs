//! The Pod (core/v1) and the pieces of its spec and status the control plane reads or writes.

use super::decode::decode_struct;
#[cfg(test)]
use super::meta::null_as_default;
use super::meta::{IntOrString, ObjectMeta, StringMap};
use super::name::Name;
use super::quantity::Quantity;
use super::shared::Shared;
use super::time::Time;
use serde::Serialize;
use std::collections::BTreeMap;

#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[cfg_attr(test, derive(serde::Deserialize))]
#[serde(rename_all = "camelCase")]
pub struct Pod {
    #[serde(default)]
    pub metadata: ObjectMeta,
    /// Shared with the pod's other versions until one changes it (most writes are status writes).
    #[serde(default)]
    pub spec: Shared<PodSpec>,
    #[serde(default)]
    pub status: PodStatus,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[cfg_attr(test, derive(serde::Deserialize))]
#[serde(rename_all = "camelCase")]
pub struct PodTemplateSpec {
    #[serde(default)]
    pub metadata: ObjectMeta,
    /// Shared with the pods made from it, until either changes it.
    #[serde(default)]
    pub spec: Shared<PodSpec>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[cfg_attr(test, derive(serde::Deserialize))]
#[serde(rename_all = "camelCase")]
pub struct PodSpec {
    #[serde(default, deserialize_with = "null_as_default")]
    pub containers: Shared<Vec<Container>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node_name: Option<String>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty", deserialize_with = "null_as_default")]
    pub node_selector: StringMap,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub affinity: Option<Affinity>,
    #[serde(default, skip_serializing_if = "Vec::is_empty", deserialize_with = "null_as_default")]
    pub tolerations: Vec<Toleration>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub restart_policy: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub termination_grace_period_seconds: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scheduler_name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub priority: Option<i32>,
    #[serde(default, skip_serializing_if = "Vec::is_empty", deserialize_with = "null_as_default")]
    pub volumes: Vec<Volume>,
    /// The pod's host name (the StatefulSet controller sets it to the pod's name).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hostname: Option<String>,
    /// With `hostname`, the pod's DNS name `<hostname>.<subdomain>.<namespace>.svc` under a
    /// headless Service of that name (a StatefulSet's `serviceName`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subdomain: Option<String>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[cfg_attr(test, derive(serde::Deserialize))]
#[serde(rename_all = "camelCase")]
pub struct Container {
    #[serde(default)]
    pub name: String,
    #[serde(default)]
    pub image: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub image_pull_policy: Option<String>,
    #[serde(default, skip_serializing_if = "ResourceRequirements::is_empty")]
    pub resources: ResourceRequirements,
    #[serde(default, skip_serializing_if = "Vec::is_empty", deserialize_with = "null_as_default")]
    pub ports: Vec<ContainerPort>,
    #[serde(default, skip_serializing_if = "Vec::is_empty", deserialize_with = "null_as_default")]
    pub command: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty", deserialize_with = "null_as_default")]
    pub args: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub liveness_probe: Option<Probe>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub readiness_probe: Option<Probe>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub startup_probe: Option<Probe>,
    #[serde(default, skip_serializing_if = "Vec::is_empty", deserialize_with = "null_as_default")]
    pub env: Vec<EnvVar>,
    #[serde(default, skip_serializing_if = "Vec::is_empty", deserialize_with = "null_as_default")]
    pub env_from: Vec<EnvFromSource>,
    #[serde(default, skip_serializing_if = "Vec::is_empty", deserialize_with = "null_as_default")]
    pub volume_mounts: Vec<VolumeMount>,
}

/// `core/v1.EnvVar`: a literal value, or one read from a ConfigMap or Secret key when the
/// container starts. `fieldRef` and `resourceFieldRef` are not modelled (decoding drops them,
/// and kubectl's unmodelled-field warning names them).
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[cfg_attr(test, derive(serde::Deserialize))]
#[serde(rename_all = "camelCase")]
pub struct EnvVar {
    #[serde(default)]
    pub name: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub value: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value_from: Option<EnvVarSource>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[cfg_attr(test, derive(serde::Deserialize))]
#[serde(rename_all = "camelCase")]
pub struct EnvVarSource {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub config_map_key_ref: Option<KeySelector>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub secret_key_ref: Option<KeySelector>,
}

/// `ConfigMapKeySelector` and `SecretKeySelector`, which have the same fields.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[cfg_attr(test, derive(serde::Deserialize))]
#[serde(rename_all = "camelCase")]
pub struct KeySelector {
    #[serde(default)]
    pub name: String,
    #[serde(default)]
    pub key: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub optional: Option<bool>,
}

/// `core/v1.EnvFromSource`: every key of a ConfigMap or Secret as a variable, after `prefix`.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[cfg_attr(test, derive(serde::Deserialize))]
#[serde(rename_all = "camelCase")]
pub struct EnvFromSource {
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub prefix: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub config_map_ref: Option<EnvSourceRef>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub secret_ref: Option<EnvSourceRef>,
}

/// `ConfigMapEnvSource` and `SecretEnvSource`, which have the same fields.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[cfg_attr(test, derive(serde::Deserialize))]
#[serde(rename_all = "camelCase")]
pub struct EnvSourceRef {
    #[serde(default)]
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub optional: Option<bool>,
}

/// `core/v1.Volume` with the sources kubeloop models: `configMap`, `secret`, `emptyDir`. Any
/// other source is dropped by decoding (and warned about), leaving a volume with none, which the
/// kubelet mounts as nothing.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[cfg_attr(test, derive(serde::Deserialize))]
#[serde(rename_all = "camelCase")]
pub struct Volume {
    #[serde(default)]
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub config_map: Option<ConfigMapVolumeSource>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub secret: Option<SecretVolumeSource>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub empty_dir: Option<EmptyDirVolumeSource>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host_path: Option<HostPathVolumeSource>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub persistent_volume_claim: Option<PersistentVolumeClaimVolumeSource>,
}

impl Volume {
    /// Whether any source kubeloop models is set.
    pub fn has_modelled_source(&self) -> bool {
        self.config_map.is_some()
            || self.secret.is_some()
            || self.empty_dir.is_some()
            || self.host_path.is_some()
            || self.persistent_volume_claim.is_some()
    }
}

/// A volume backed by a PersistentVolumeClaim in the pod's namespace. The scheduler waits for
/// the claim to be bound; the kubelet mounts the bound volume as an empty directory (a
/// simulated node has no disks, so nothing survives a container's restart but the claim).
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[cfg_attr(test, derive(serde::Deserialize))]
#[serde(rename_all = "camelCase")]
pub struct PersistentVolumeClaimVolumeSource {
    #[serde(default)]
    pub claim_name: String,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub read_only: bool,
}

/// A directory of the node's own file system (`hostPath`), as log collectors and node agents
/// mount `/var/log`. A simulated node has no files of its own, so the kubelet mounts it as an
/// empty directory: the path and type are stored, validated and described, and nothing reads
/// from them.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[cfg_attr(test, derive(serde::Deserialize))]
#[serde(rename_all = "camelCase")]
pub struct HostPathVolumeSource {
    #[serde(default)]
    pub path: String,
    /// `SetDefaults_HostPathVolumeSource` makes a missing type `""` (no check before mounting).
    #[serde(default, rename = "type", skip_serializing_if = "Option::is_none")]
    pub type_: Option<String>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[cfg_attr(test, derive(serde::Deserialize))]
#[serde(rename_all = "camelCase")]
pub struct ConfigMapVolumeSource {
    #[serde(default)]
    pub name: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty", deserialize_with = "null_as_default")]
    pub items: Vec<KeyToPath>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub optional: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default_mode: Option<i32>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[cfg_attr(test, derive(serde::Deserialize))]
#[serde(rename_all = "camelCase")]
pub struct SecretVolumeSource {
    #[serde(default)]
    pub secret_name: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty", deserialize_with = "null_as_default")]
    pub items: Vec<KeyToPath>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub optional: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default_mode: Option<i32>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[cfg_attr(test, derive(serde::Deserialize))]
#[serde(rename_all = "camelCase")]
pub struct KeyToPath {
    #[serde(default)]
    pub key: String,
    #[serde(default)]
    pub path: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<i32>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[cfg_attr(test, derive(serde::Deserialize))]
#[serde(rename_all = "camelCase")]
pub struct EmptyDirVolumeSource {
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub medium: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size_limit: Option<Quantity>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[cfg_attr(test, derive(serde::Deserialize))]
#[serde(rename_all = "camelCase")]
pub struct VolumeMount {
    #[serde(default)]
    pub name: String,
    #[serde(default)]
    pub mount_path: String,
    #[serde(default, skip_serializing_if = "is_false")]
    pub read_only: bool,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub sub_path: String,
}

fn is_false(v: &bool) -> bool {
    !*v
}

/// `core/v1.Probe`: one handler and the kubelet's timing for it. The numbers are Go `int32`s
/// with `omitempty`: zero is absent, and the API server defaults absent ones (`defaults.rs`).
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[cfg_attr(test, derive(serde::Deserialize))]
#[serde(rename_all = "camelCase")]
pub struct Probe {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exec: Option<ExecAction>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub http_get: Option<HttpGetAction>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tcp_socket: Option<TcpSocketAction>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub grpc: Option<GrpcAction>,
    #[serde(default, skip_serializing_if = "is_zero_i32")]
    pub initial_delay_seconds: i32,
    #[serde(default, skip_serializing_if = "is_zero_i32")]
    pub timeout_seconds: i32,
    #[serde(default, skip_serializing_if = "is_zero_i32")]
    pub period_seconds: i32,
    #[serde(default, skip_serializing_if = "is_zero_i32")]
    pub success_threshold: i32,
    #[serde(default, skip_serializing_if = "is_zero_i32")]
    pub failure_threshold: i32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub termination_grace_period_seconds: Option<i64>,
}

fn is_zero_i32(v: &i32) -> bool {
    *v == 0
}

#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[cfg_attr(test, derive(serde::Deserialize))]
#[serde(rename_all = "camelCase")]
pub struct ExecAction {
    #[serde(default, skip_serializing_if = "Vec::is_empty", deserialize_with = "null_as_default")]
    pub command: Vec<String>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[cfg_attr(test, derive(serde::Deserialize))]
#[serde(rename_all = "camelCase")]
pub struct HttpGetAction {
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub path: String,
    #[serde(default)]
    pub port: IntOrString,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub host: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scheme: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty", deserialize_with = "null_as_default")]
    pub http_headers: Vec<HttpHeader>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[cfg_attr(test, derive(serde::Deserialize))]
#[serde(rename_all = "camelCase")]
pub struct HttpHeader {
    #[serde(default)]
    pub name: String,
    #[serde(default)]
    pub value: String,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[cfg_attr(test, derive(serde::Deserialize))]
#[serde(rename_all = "camelCase")]
pub struct TcpSocketAction {
    #[serde(default)]
    pub port: IntOrString,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub host: String,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[cfg_attr(test, derive(serde::Deserialize))]
#[serde(rename_all = "camelCase")]
pub struct GrpcAction {
    #[serde(default)]
    pub port: i32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub service: Option<String>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[cfg_attr(test, derive(serde::Deserialize))]
#[serde(rename_all = "camelCase")]
pub struct ResourceRequirements {
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty", deserialize_with = "null_as_default")]
    pub requests: BTreeMap<String, Quantity>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty", deserialize_with = "null_as_default")]
    pub limits: BTreeMap<String, Quantity>,
}

impl ResourceRequirements {
    pub fn is_empty(&self) -> bool {
        self.requests.is_empty() && self.limits.is_empty()
    }
}

#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[cfg_attr(test, derive(serde::Deserialize))]
#[serde(rename_all = "camelCase")]
pub struct ContainerPort {
    #[serde(default)]
    pub container_port: i64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host_port: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub protocol: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
#[cfg_attr(test, derive(serde::Deserialize))]
#[serde(rename_all = "camelCase")]
pub struct Toleration {
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub key: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub operator: Option<String>,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub value: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub effect: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub toleration_seconds: Option<i64>,
}

impl Toleration {
    /// `Toleration.ToleratesTaint` from k8s.io/api/core/v1/toleration.go.
    pub fn tolerates(&self, taint: &super::node::Taint) -> bool {
        if !self.effect.is_empty() && self.effect != taint.effect {
            return false;
        }
        if !self.key.is_empty() && self.key != taint.key {
            return false;
        }
        match self.operator.as_deref().unwrap_or("Equal") {
            "Exists" => true,
            "Equal" | "" => self.value == taint.value,
            _ => false,
        }
    }
}

#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[cfg_attr(test, derive(serde::Deserialize))]
#[serde(rename_all = "camelCase")]
pub struct Affinity {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node_affinity: Option<NodeAffinity>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[cfg_attr(test, derive(serde::Deserialize))]
#[serde(rename_all = "camelCase")]
pub struct NodeAffinity {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub required_during_scheduling_ignored_during_execution: Option<NodeSelector>,
    #[serde(default, skip_serializing_if = "Vec::is_empty", deserialize_with = "null_as_default")]
    pub preferred_during_scheduling_ignored_during_execution: Vec<PreferredSchedulingTerm>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[cfg_attr(test, derive(serde::Deserialize))]
#[serde(rename_all = "camelCase")]
pub struct NodeSelector {
    #[serde(default, deserialize_with = "null_as_default")]
    pub node_selector_terms: Vec<NodeSelectorTerm>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[cfg_attr(test, derive(serde::Deserialize))]
#[serde(rename_all = "camelCase")]
pub struct NodeSelectorTerm {
    #[serde(default, skip_serializing_if = "Vec::is_empty", deserialize_with = "null_as_default")]
    pub match_expressions: Vec<NodeSelectorRequirement>,
    #[serde(default, skip_serializing_if = "Vec::is_empty", deserialize_with = "null_as_default")]
    pub match_fields: Vec<NodeSelectorRequirement>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[cfg_attr(test, derive(serde::Deserialize))]
#[serde(rename_all = "camelCase")]
pub struct NodeSelectorRequirement {
    pub key: String,
    pub operator: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty", deserialize_with = "null_as_default")]
    pub values: Vec<String>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[cfg_attr(test, derive(serde::Deserialize))]
#[serde(rename_all = "camelCase")]
pub struct PreferredSchedulingTerm {
    pub weight: i32,
    pub preference: NodeSelectorTerm,
}

impl NodeSelectorTerm {
    /// Whether a node's labels (and name, for `matchFields`) satisfy every requirement.
    pub fn matches(&self, labels: &StringMap, node_name: &str) -> bool {
        let fields: StringMap = [("metadata.name".to_string(), node_name.to_string())].into();
        (!self.match_expressions.is_empty() || !self.match_fields.is_empty())
            && self.match_expressions.iter().all(|r| r.matches(labels))
            && self.match_fields.iter().all(|r| r.matches(&fields))
    }
}

impl NodeSelectorRequirement {
    pub fn matches(&self, labels: &StringMap) -> bool {
        let value = labels.get(&self.key);
        let as_int = |v: &str| v.parse::<i64>().ok();
        match self.operator.as_str() {
            "In" => value.is_some_and(|v| self.values.contains(v)),
            "NotIn" => value.is_none_or(|v| !self.values.contains(v)),
            "Exists" => value.is_some(),
            "DoesNotExist" => value.is_none(),
            "Gt" | "Lt" => match (value.and_then(|v| as_int(v)), self.values.first().and_then(|v| as_int(v))) {
                (Some(have), Some(bound)) => (self.operator == "Gt" && have > bound) || (self.operator == "Lt" && have < bound),
                _ => false,
            },
            _ => false,
        }
    }
}

#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[cfg_attr(test, derive(serde::Deserialize))]
#[serde(rename_all = "camelCase")]
pub struct PodStatus {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub phase: Option<PodPhase>,
    #[serde(default, skip_serializing_if = "Vec::is_empty", deserialize_with = "null_as_default")]
    pub conditions: Vec<PodCondition>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none", rename = "hostIP")]
    pub host_ip: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty", rename = "hostIPs", deserialize_with = "null_as_default")]
    pub host_ips: Vec<PodIP>,
    #[serde(default, skip_serializing_if = "Option::is_none", rename = "podIP")]
    pub pod_ip: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty", rename = "podIPs", deserialize_with = "null_as_default")]
    pub pod_ips: Vec<PodIP>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start_time: Option<Time>,
    #[serde(default, skip_serializing_if = "Vec::is_empty", deserialize_with = "null_as_default")]
    pub container_statuses: Vec<ContainerStatus>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nominated_node_name: Option<String>,
}

/// One of `status.podIPs` or `status.hostIPs` (core/v1 `PodIP`, `HostIP`: the same shape).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
#[cfg_attr(test, derive(serde::Deserialize))]
pub struct PodIP {
    pub ip: String,
}

impl PodIP {
    /// The one-address list a single-stack cluster reports.
    pub fn list(ip: Option<&str>) -> Vec<PodIP> {
        ip.map(|ip| vec![PodIP { ip: ip.to_string() }]).unwrap_or_default()
    }
}

/// The five pod phases, and nothing else: `ContainerCreating` or `CrashLoopBackOff` are reasons.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[cfg_attr(test, derive(serde::Deserialize))]
pub enum PodPhase {
    Pending,
    Running,
    Succeeded,
    Failed,
    Unknown,
}

impl PodPhase {
    pub fn as_str(self) -> &'static str {
        match self {
            PodPhase::Pending => "Pending",
            PodPhase::Running => "Running",
            PodPhase::Succeeded => "Succeeded",
            PodPhase::Failed => "Failed",
            PodPhase::Unknown => "Unknown",
        }
    }
}

impl super::decode::FromValue for PodPhase {
    fn from_value(v: &serde_json::Value) -> Result<Self, String> {
        const VARIANTS: &[&str] = &["Pending", "Running", "Succeeded", "Failed", "Unknown"];
        const PHASES: [PodPhase; 5] = [PodPhase::Pending, PodPhase::Running, PodPhase::Succeeded, PodPhase::Failed, PodPhase::Unknown];
        super::decode::unit_variant(v, VARIANTS).map(|i| PHASES[i])
    }
}

#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[cfg_attr(test, derive(serde::Deserialize))]
#[serde(rename_all = "camelCase")]
pub struct PodCondition {
    #[serde(rename = "type")]
    pub type_: Name,
    pub status: Name,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_probe_time: Option<Time>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_transition_time: Option<Time>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<Name>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<Name>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[cfg_attr(test, derive(serde::Deserialize))]
#[serde(rename_all = "camelCase")]
pub struct ContainerStatus {
    pub name: Name,
    #[serde(default)]
    pub state: ContainerState,
    #[serde(default, skip_serializing_if = "ContainerState::is_empty")]
    pub last_state: ContainerState,
    #[serde(default)]
    pub ready: bool,
    #[serde(default)]
    pub restart_count: i32,
    #[serde(default)]
    pub image: Name,
    #[serde(default, rename = "imageID")]
    pub image_id: Name,
    #[serde(default, rename = "containerID", skip_serializing_if = "str::is_empty")]
    pub container_id: Name,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub started: Option<bool>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[cfg_attr(test, derive(serde::Deserialize))]
#[serde(rename_all = "camelCase")]
pub struct ContainerState {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub waiting: Option<ContainerStateWaiting>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub running: Option<ContainerStateRunning>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub terminated: Option<ContainerStateTerminated>,
}

impl ContainerState {
    pub fn is_empty(&self) -> bool {
        self.waiting.is_none() && self.running.is_none() && self.terminated.is_none()
    }
}

#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[cfg_attr(test, derive(serde::Deserialize))]
#[serde(rename_all = "camelCase")]
pub struct ContainerStateWaiting {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<Name>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<Name>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[cfg_attr(test, derive(serde::Deserialize))]
#[serde(rename_all = "camelCase")]
pub struct ContainerStateRunning {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub started_at: Option<Time>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[cfg_attr(test, derive(serde::Deserialize))]
#[serde(rename_all = "camelCase")]
pub struct ContainerStateTerminated {
    pub exit_code: i32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<Name>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<Name>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub started_at: Option<Time>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub finished_at: Option<Time>,
}

impl Pod {
    pub fn phase(&self) -> PodPhase {
        self.status.phase.unwrap_or(PodPhase::Pending)
    }
    pub fn node_name(&self) -> Option<&str> {
        self.spec.node_name.as_deref().filter(|n| !n.is_empty())
    }
    pub fn condition(&self, type_: &str) -> Option<&PodCondition> {
        self.status.conditions.iter().find(|c| c.type_ == type_)
    }
    /// `podutil.IsPodReady`: the Ready condition is True.
    pub fn is_ready(&self) -> bool {
        self.condition("Ready").is_some_and(|c| c.status == "True")
    }
    /// When the Ready condition last became True (for minReadySeconds and scale-down ranking).
    pub fn ready_since(&self) -> Option<Time> {
        self.condition("Ready").filter(|c| c.status == "True").and_then(|c| c.last_transition_time)
    }
    /// `podutil.IsPodAvailable`: ready for at least `min_ready_seconds` at `now`.
    pub fn is_available(&self, min_ready_seconds: i64, now: Time) -> bool {
        match self.ready_since() {
            Some(since) if min_ready_seconds > 0 => now.since(since).0 >= min_ready_seconds as u64 * 1000,
            Some(_) => true,
            None => false,
        }
    }
    pub fn restarts(&self) -> i32 {
        self.status.container_statuses.iter().map(|c| c.restart_count).sum()
    }
    /// Total requests of all containers: (millicores, bytes).
    pub fn requests(&self) -> (i64, i64) {
        self.spec.containers.iter().fold((0, 0), |(cpu, mem), c| {
            let get = |name: &str, milli: bool| {
                c.resources.requests.get(name).and_then(|q| if milli { q.milli_value() } else { q.value() }).unwrap_or(0)
            };
            (cpu + get("cpu", true), mem + get("memory", false))
        })
    }
    /// Whether the pod has reached a terminal phase (`Succeeded` or `Failed`).
    pub fn is_terminal(&self) -> bool {
        matches!(self.phase(), PodPhase::Succeeded | PodPhase::Failed)
    }
}

/// The package upstream's OpenAPI documents name these types in (`schema.rs`).
const SCHEMA_PACKAGE: &str = "io.k8s.api.core.v1";
// Decoding from JSON by hand (see `decode`): each struct's fields in declaration order.
decode_struct!(
/// One or more containers that run together on one node. kube-scheduler picks the node; that node's
/// kubelet starts the containers and reports how they are.
Pod {
    /// The object's name, namespace and labels, and what the API server records about it.
    metadata: "metadata" Default,
    /// What should run: the containers, and where and how.
    spec: "spec" Default,
    /// What the node's kubelet last reported: the phase, the conditions and each container's state.
    status: "status" Default,
});
decode_struct!(
/// The pods a controller creates: their labels and spec.
PodTemplateSpec {
    /// The labels and annotations the pods get (the controller's selector must match the labels).
    metadata: "metadata" Default,
    /// The pods' spec.
    spec: "spec" Default,
});
decode_struct!(
/// What a pod runs, and where.
PodSpec {
    /// The containers of the pod; at least one.
    #[list = "map name"]
    #[patch = "merge name"]
    #[required = true]
    containers: "containers" NullAsDefault,
    /// The node the pod is bound to. kube-scheduler sets it; set by hand, the pod skips scheduling.
    node_name: "nodeName" Default,
    /// Labels the pod's node must have.
    node_selector: "nodeSelector" NullAsDefault,
    /// Which nodes the pod must or would rather run on.
    affinity: "affinity" Default,
    /// The taints the pod accepts on its node.
    #[list = "atomic"]
    tolerations: "tolerations" NullAsDefault,
    /// When the kubelet restarts a container that ended: Always (the default), OnFailure or Never.
    restart_policy: "restartPolicy" Default,
    /// How long the kubelet waits after stopping a container before killing it (30 by default).
    termination_grace_period_seconds: "terminationGracePeriodSeconds" Default,
    /// The scheduler that places the pod (default-scheduler).
    scheduler_name: "schedulerName" Default,
    /// The pod's priority, from its priority class.
    priority: "priority" Default,
    /// Volumes the containers may mount.
    #[list = "map name"]
    #[patch = "merge,retainKeys name"]
    volumes: "volumes" NullAsDefault,
    /// The pod's host name (a StatefulSet sets it to the pod's name).
    hostname: "hostname" Default,
    /// With hostname, the pod's DNS name under a headless Service.
    subdomain: "subdomain" Default,
});
decode_struct!(
/// A program the pod runs, from an image.
Container {
    /// The container's name, unique in the pod.
    #[required = true]
    name: "name" Default,
    /// The image the container runs (nginx:1.27). What the program does follows from it.
    image: "image" Default,
    /// When the kubelet pulls the image: Always, IfNotPresent or Never.
    image_pull_policy: "imagePullPolicy" Default,
    /// The CPU and memory the container asks for (requests) and may not exceed (limits). kube-
    /// scheduler places pods by their requests.
    resources: "resources" Default,
    /// Ports the container listens on (for people and Services that name a port).
    #[list = "map containerPort protocol"]
    #[patch = "merge containerPort"]
    ports: "ports" NullAsDefault,
    /// The program to run, instead of the image's entrypoint.
    #[list = "atomic"]
    command: "command" NullAsDefault,
    /// Arguments to the program, instead of the image's.
    #[list = "atomic"]
    args: "args" NullAsDefault,
    /// A check that the container still works; when it fails often enough, the kubelet restarts the
    /// container.
    liveness_probe: "livenessProbe" Default,
    /// A check that the container can serve; until it passes, the pod is not Ready and Services
    /// send it nothing.
    readiness_probe: "readinessProbe" Default,
    /// A check that the container has started; the other probes wait for it to pass.
    startup_probe: "startupProbe" Default,
    /// Environment variables, set or read from a ConfigMap or Secret.
    #[list = "map name"]
    #[patch = "merge name"]
    env: "env" NullAsDefault,
    /// Every key of a ConfigMap or Secret as environment variables.
    #[list = "atomic"]
    env_from: "envFrom" NullAsDefault,
    /// Where the pod's volumes appear in the container's files.
    #[list = "map mountPath"]
    #[patch = "merge mountPath"]
    volume_mounts: "volumeMounts" NullAsDefault,
});
decode_struct!(
/// An environment variable.
EnvVar {
    /// The variable's name.
    #[required = true]
    name: "name" Default,
    /// Its value.
    value: "value" Default,
    /// Where its value comes from, instead.
    value_from: "valueFrom" Default,
});
decode_struct!(
/// Where an environment variable's value comes from.
EnvVarSource {
    /// A key of a ConfigMap.
    config_map_key_ref: "configMapKeyRef" Default,
    /// A key of a Secret.
    secret_key_ref: "secretKeyRef" Default,
});
decode_struct!(
/// A key of a ConfigMap or Secret.
KeySelector as "" "" {
    /// The ConfigMap's or Secret's name.
    name: "name" Default,
    /// The key.
    #[required = true]
    key: "key" Default,
    /// Whether the container starts without it.
    optional: "optional" Default,
});
decode_struct!(
/// A ConfigMap or Secret whose every key becomes an environment variable.
EnvFromSource {
    /// Put before each key's name.
    prefix: "prefix" Default,
    /// A ConfigMap.
    config_map_ref: "configMapRef" Default,
    /// A Secret.
    secret_ref: "secretRef" Default,
});
decode_struct!(
/// A ConfigMap or Secret by name.
EnvSourceRef as "" "" {
    /// The ConfigMap's or Secret's name.
    name: "name" Default,
    /// Whether the container starts without it.
    optional: "optional" Default,
});
decode_struct!(
/// A volume the pod's containers may mount; one source is set.
Volume {
    /// The volume's name, which mounts refer to.
    #[required = true]
    name: "name" Default,
    /// A ConfigMap's keys as files.
    config_map: "configMap" Default,
    /// A Secret's keys as files.
    secret: "secret" Default,
    /// An empty directory that lives as long as the pod.
    empty_dir: "emptyDir" Default,
    /// A directory of the node.
    host_path: "hostPath" Default,
    /// The volume a PersistentVolumeClaim is bound to.
    persistent_volume_claim: "persistentVolumeClaim" Default,
});
decode_struct!(
/// A volume from a claim.
PersistentVolumeClaimVolumeSource {
    /// The claim's name, in the pod's namespace.
    #[required = true]
    claim_name: "claimName" Default,
    /// Whether mounts are read-only.
    read_only: "readOnly" Default,
});
decode_struct!(
/// A directory of the node.
HostPathVolumeSource {
    /// The directory.
    #[required = true]
    path: "path" Default,
    /// What must be there (Directory, DirectoryOrCreate, File…); empty checks nothing.
    type_: "type" Default,
});
decode_struct!(
/// A ConfigMap's keys as files.
ConfigMapVolumeSource {
    /// The ConfigMap's name.
    name: "name" Default,
    /// Which keys, and their file names; all keys if empty.
    #[list = "atomic"]
    items: "items" NullAsDefault,
    /// Whether the pod starts without the ConfigMap.
    optional: "optional" Default,
    /// The files' mode (0644).
    default_mode: "defaultMode" Default,
});
decode_struct!(
/// A Secret's keys as files.
SecretVolumeSource {
    /// The Secret's name.
    secret_name: "secretName" Default,
    /// Which keys, and their file names; all keys if empty.
    #[list = "atomic"]
    items: "items" NullAsDefault,
    /// Whether the pod starts without the Secret.
    optional: "optional" Default,
    /// The files' mode (0644).
    default_mode: "defaultMode" Default,
});
decode_struct!(
/// A key and the file it becomes.
KeyToPath {
    /// The key.
    #[required = true]
    key: "key" Default,
    /// The file's path in the volume.
    #[required = true]
    path: "path" Default,
    /// The file's mode.
    mode: "mode" Default,
});
decode_struct!(
/// An empty directory for the pod's life.
EmptyDirVolumeSource {
    /// Empty for the node's disk, or Memory.
    medium: "medium" Default,
    /// The most it may hold.
    size_limit: "sizeLimit" Default,
});
decode_struct!(
/// Where a volume appears in a container.
VolumeMount {
    /// The pod volume's name.
    #[required = true]
    name: "name" Default,
    /// The path in the container.
    #[required = true]
    mount_path: "mountPath" Default,
    /// Whether the mount is read-only.
    read_only: "readOnly" Default,
    /// A path in the volume to mount instead of its root.
    sub_path: "subPath" Default,
});
decode_struct!(
/// How and when the kubelet checks a container; one handler is set.
Probe {
    /// Run a command in the container; exit code 0 passes.
    exec: "exec" Default,
    /// An HTTP GET; a status from 200 to 399 passes.
    http_get: "httpGet" Default,
    /// Open a TCP connection; connecting passes.
    tcp_socket: "tcpSocket" Default,
    /// A gRPC health check; SERVING passes.
    grpc: "grpc" Default,
    /// How long after the container starts the first check waits.
    initial_delay_seconds: "initialDelaySeconds" Default,
    /// How long a check may take (1 by default).
    timeout_seconds: "timeoutSeconds" Default,
    /// How often the check runs (10 by default).
    period_seconds: "periodSeconds" Default,
    /// Passes in a row that make a failing container pass (1).
    success_threshold: "successThreshold" Default,
    /// Failures in a row that make it fail (3).
    failure_threshold: "failureThreshold" Default,
    /// The grace period for a container this probe kills.
    termination_grace_period_seconds: "terminationGracePeriodSeconds" Default,
});
decode_struct!(
/// A command run in the container.
ExecAction {
    /// The command and its arguments, run without a shell.
    #[list = "atomic"]
    command: "command" NullAsDefault,
});
decode_struct!(
/// An HTTP GET to the container.
HttpGetAction as "io.k8s.api.core.v1" "HTTPGetAction" {
    /// The path.
    path: "path" Default,
    /// The port, by number or by name.
    #[required = true]
    port: "port" Default,
    /// The host to connect to (the pod's IP by default).
    host: "host" Default,
    /// HTTP (the default) or HTTPS.
    scheme: "scheme" Default,
    /// Headers to send.
    #[list = "atomic"]
    http_headers: "httpHeaders" NullAsDefault,
});
decode_struct!(
/// An HTTP header.
HttpHeader as "io.k8s.api.core.v1" "HTTPHeader" {
    /// Its name.
    #[required = true]
    name: "name" Default,
    /// Its value.
    #[required = true]
    value: "value" Default,
});
decode_struct!(
/// A TCP connection to the container.
TcpSocketAction as "io.k8s.api.core.v1" "TCPSocketAction" {
    /// The port, by number or by name.
    #[required = true]
    port: "port" Default,
    /// The host to connect to (the pod's IP by default).
    host: "host" Default,
});
decode_struct!(
/// A gRPC health check.
GrpcAction as "io.k8s.api.core.v1" "GRPCAction" {
    /// The port.
    #[required = true]
    port: "port" Default,
    /// The service name to ask about (empty: the server as a whole).
    service: "service" Default,
});
decode_struct!(
/// Amounts of CPU and memory.
ResourceRequirements {
    /// What the container asks for; kube-scheduler places the pod on a node with that much
    /// unclaimed.
    requests: "requests" NullAsDefault,
    /// What the container may not exceed.
    limits: "limits" NullAsDefault,
});
decode_struct!(
/// A port a container listens on.
ContainerPort {
    /// The port number.
    #[format = "int32"]
    #[required = true]
    container_port: "containerPort" Default,
    /// A port of the node that leads to this one.
    #[format = "int32"]
    host_port: "hostPort" Default,
    /// TCP (the default), UDP or SCTP.
    protocol: "protocol" Default,
    /// A name Services can use instead of the number.
    name: "name" Default,
});
decode_struct!(
/// A taint the pod accepts.
Toleration {
    /// The taint's key; empty with Exists matches every taint.
    key: "key" Default,
    /// Equal (the default) or Exists.
    operator: "operator" Default,
    /// The taint's value, for Equal.
    value: "value" Default,
    /// The effect it tolerates; empty for all.
    effect: "effect" Default,
    /// For NoExecute: how long the pod stays on the node once tainted.
    toleration_seconds: "tolerationSeconds" Default,
});
decode_struct!(
/// Where the pod would run.
Affinity {
    /// Rules on the labels of the pod's node.
    node_affinity: "nodeAffinity" Default,
});
decode_struct!(
/// Rules on the labels of the pod's node.
NodeAffinity {
    /// Nodes the pod may run on; kube-scheduler places it nowhere else.
    required_during_scheduling_ignored_during_execution: "requiredDuringSchedulingIgnoredDuringExecution" Default,
    /// Nodes kube-scheduler favours, by weight.
    #[list = "atomic"]
    preferred_during_scheduling_ignored_during_execution: "preferredDuringSchedulingIgnoredDuringExecution" NullAsDefault,
});
decode_struct!(
/// Nodes by their labels or fields: any term may match.
NodeSelector {
    /// The terms; a node matching one is chosen.
    #[list = "atomic"]
    #[required = true]
    node_selector_terms: "nodeSelectorTerms" NullAsDefault,
});
decode_struct!(
/// Conditions a node must all meet.
NodeSelectorTerm {
    /// Conditions on the node's labels.
    #[list = "atomic"]
    match_expressions: "matchExpressions" NullAsDefault,
    /// Conditions on the node's fields (metadata.name).
    #[list = "atomic"]
    match_fields: "matchFields" NullAsDefault,
});
decode_struct!(
/// A condition on a node's label or field.
NodeSelectorRequirement {
    /// The label's key or the field.
    key: "key" Required,
    /// In, NotIn, Exists, DoesNotExist, Gt or Lt.
    operator: "operator" Required,
    /// The values to compare with.
    #[list = "atomic"]
    values: "values" NullAsDefault,
});
decode_struct!(
/// A preference with a weight.
PreferredSchedulingTerm {
    /// How much a matching node scores (1 to 100).
    weight: "weight" Required,
    /// The nodes preferred.
    preference: "preference" Required,
});
decode_struct!(
/// An address.
PodIP {
    /// The address.
    ip: "ip" Required,
});
decode_struct!(
/// What the node's kubelet reports about a pod.
PodStatus {
    /// Pending, Running, Succeeded, Failed or Unknown.
    phase: "phase" Default,
    /// PodScheduled, Initialized, ContainersReady and Ready, each True or False.
    #[list = "map type"]
    #[patch = "merge type"]
    conditions: "conditions" NullAsDefault,
    /// Why the pod is in this phase, for people.
    message: "message" Default,
    /// A word for why (Evicted).
    reason: "reason" Default,
    /// The address of the pod's node.
    host_ip: "hostIP" Default,
    /// The node's addresses.
    #[list = "atomic"]
    #[patch = "merge ip"]
    host_ips: "hostIPs" NullAsDefault,
    /// The pod's address.
    pod_ip: "podIP" Default,
    /// The pod's addresses.
    #[list = "map ip"]
    #[patch = "merge ip"]
    pod_ips: "podIPs" NullAsDefault,
    /// When the kubelet took the pod up.
    start_time: "startTime" Default,
    /// Each container's state, readiness and restarts.
    #[list = "atomic"]
    container_statuses: "containerStatuses" NullAsDefault,
    /// A node kube-scheduler made room on for this pod by preemption.
    nominated_node_name: "nominatedNodeName" Default,
});
decode_struct!(
/// A condition of a pod.
PodCondition {
    /// Which condition this is.
    type_: "type" Required,
    /// True, False or Unknown.
    status: "status" Required,
    /// When the condition was last checked.
    last_probe_time: "lastProbeTime" Default,
    /// When the status last changed.
    last_transition_time: "lastTransitionTime" Default,
    /// A word for why the condition is as it is.
    reason: "reason" Default,
    /// Why, for people.
    message: "message" Default,
});
decode_struct!(
/// How a container is.
ContainerStatus {
    /// The container's name.
    name: "name" Required,
    /// Waiting, running or terminated.
    state: "state" Default,
    /// How it last ended.
    last_state: "lastState" Default,
    /// Whether its readiness probe passes.
    #[required = true]
    ready: "ready" Default,
    /// How many times the kubelet restarted it.
    #[required = true]
    restart_count: "restartCount" Default,
    /// The image it runs.
    #[required = true]
    image: "image" Default,
    /// The image's digest.
    #[required = true]
    image_id: "imageID" Default,
    /// The runtime's ID of the container (containerd://…).
    container_id: "containerID" Default,
    /// Whether its startup probe has passed.
    started: "started" Default,
});
decode_struct!(
/// A container's state: one of the three is set.
ContainerState {
    /// Not running yet, or again.
    waiting: "waiting" Default,
    /// Running.
    running: "running" Default,
    /// Ended.
    terminated: "terminated" Default,
});
decode_struct!(
/// Why a container is waiting.
ContainerStateWaiting {
    /// ContainerCreating, CrashLoopBackOff, ImagePullBackOff…
    reason: "reason" Default,
    /// More, for people.
    message: "message" Default,
});
decode_struct!(
/// A running container.
ContainerStateRunning {
    /// When it started.
    started_at: "startedAt" Default,
});
decode_struct!(
/// How a container ended.
ContainerStateTerminated {
    /// Its exit status (137: killed).
    exit_code: "exitCode" Required,
    /// Completed, Error, OOMKilled…
    reason: "reason" Default,
    /// More, for people.
    message: "message" Default,
    /// When it started.
    started_at: "startedAt" Default,
    /// When it ended.
    finished_at: "finishedAt" Default,
});
