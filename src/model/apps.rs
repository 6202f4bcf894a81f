//! ReplicaSet, Deployment, DaemonSet and StatefulSet (apps/v1): the claims the workload controllers reconcile.

use super::decode::decode_struct;
#[cfg(test)]
use super::meta::null_as_default;
use super::meta::{IntOrString, LabelSelector, ObjectMeta};
use super::pod::PodTemplateSpec;
use super::shared::Shared;
use super::time::Time;
use serde::Serialize;

#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[cfg_attr(test, derive(serde::Deserialize))]
#[serde(rename_all = "camelCase")]
pub struct ReplicaSet {
    #[serde(default)]
    pub metadata: ObjectMeta,
    #[serde(default)]
    pub spec: ReplicaSetSpec,
    #[serde(default)]
    pub status: ReplicaSetStatus,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[cfg_attr(test, derive(serde::Deserialize))]
#[serde(rename_all = "camelCase")]
pub struct ReplicaSetSpec {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replicas: Option<i32>,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub min_ready_seconds: i32,
    #[serde(default)]
    pub selector: LabelSelector,
    /// Shared with the object's other versions (and its spec with the pods made from it).
    #[serde(default)]
    pub template: Shared<PodTemplateSpec>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[cfg_attr(test, derive(serde::Deserialize))]
#[serde(rename_all = "camelCase")]
pub struct ReplicaSetStatus {
    #[serde(default)]
    pub replicas: i32,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub fully_labeled_replicas: i32,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub ready_replicas: i32,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub available_replicas: i32,
    #[serde(default, skip_serializing_if = "is_zero_i64")]
    pub observed_generation: i64,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[cfg_attr(test, derive(serde::Deserialize))]
#[serde(rename_all = "camelCase")]
pub struct Deployment {
    #[serde(default)]
    pub metadata: ObjectMeta,
    #[serde(default)]
    pub spec: DeploymentSpec,
    #[serde(default)]
    pub status: DeploymentStatus,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[cfg_attr(test, derive(serde::Deserialize))]
#[serde(rename_all = "camelCase")]
pub struct DeploymentSpec {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replicas: Option<i32>,
    #[serde(default)]
    pub selector: LabelSelector,
    /// Shared with the object's other versions (and its spec with the pods made from it).
    #[serde(default)]
    pub template: Shared<PodTemplateSpec>,
    #[serde(default)]
    pub strategy: DeploymentStrategy,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub min_ready_seconds: i32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub revision_history_limit: Option<i32>,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub paused: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub progress_deadline_seconds: Option<i32>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[cfg_attr(test, derive(serde::Deserialize))]
#[serde(rename_all = "camelCase")]
pub struct DeploymentStrategy {
    #[serde(default, rename = "type", skip_serializing_if = "Option::is_none")]
    pub type_: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rolling_update: Option<RollingUpdateDeployment>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[cfg_attr(test, derive(serde::Deserialize))]
#[serde(rename_all = "camelCase")]
pub struct RollingUpdateDeployment {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_unavailable: Option<IntOrString>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_surge: Option<IntOrString>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[cfg_attr(test, derive(serde::Deserialize))]
#[serde(rename_all = "camelCase")]
pub struct DeploymentStatus {
    #[serde(default, skip_serializing_if = "is_zero_i64")]
    pub observed_generation: i64,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub replicas: i32,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub updated_replicas: i32,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub ready_replicas: i32,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub available_replicas: i32,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub unavailable_replicas: i32,
    #[serde(default, skip_serializing_if = "Vec::is_empty", deserialize_with = "null_as_default")]
    pub conditions: Vec<DeploymentCondition>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub collision_count: Option<i32>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[cfg_attr(test, derive(serde::Deserialize))]
#[serde(rename_all = "camelCase")]
pub struct DeploymentCondition {
    #[serde(rename = "type")]
    pub type_: String,
    pub status: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_update_time: Option<Time>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_transition_time: Option<Time>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

/// A DaemonSet: one pod of its template on every node its template's scheduling rules allow.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[cfg_attr(test, derive(serde::Deserialize))]
#[serde(rename_all = "camelCase")]
pub struct DaemonSet {
    #[serde(default)]
    pub metadata: ObjectMeta,
    #[serde(default)]
    pub spec: DaemonSetSpec,
    #[serde(default)]
    pub status: DaemonSetStatus,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[cfg_attr(test, derive(serde::Deserialize))]
#[serde(rename_all = "camelCase")]
pub struct DaemonSetSpec {
    #[serde(default)]
    pub selector: LabelSelector,
    /// Shared with the object's other versions (and its spec with the pods made from it).
    #[serde(default)]
    pub template: Shared<PodTemplateSpec>,
    #[serde(default)]
    pub update_strategy: DaemonSetUpdateStrategy,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub min_ready_seconds: i32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub revision_history_limit: Option<i32>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[cfg_attr(test, derive(serde::Deserialize))]
#[serde(rename_all = "camelCase")]
pub struct DaemonSetUpdateStrategy {
    #[serde(default, rename = "type", skip_serializing_if = "Option::is_none")]
    pub type_: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rolling_update: Option<RollingUpdateDaemonSet>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[cfg_attr(test, derive(serde::Deserialize))]
#[serde(rename_all = "camelCase")]
pub struct RollingUpdateDaemonSet {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_unavailable: Option<IntOrString>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_surge: Option<IntOrString>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[cfg_attr(test, derive(serde::Deserialize))]
#[serde(rename_all = "camelCase")]
pub struct DaemonSetStatus {
    #[serde(default)]
    pub current_number_scheduled: i32,
    #[serde(default)]
    pub number_misscheduled: i32,
    #[serde(default)]
    pub desired_number_scheduled: i32,
    #[serde(default)]
    pub number_ready: i32,
    #[serde(default, skip_serializing_if = "is_zero_i64")]
    pub observed_generation: i64,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub updated_number_scheduled: i32,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub number_available: i32,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub number_unavailable: i32,
}

impl DaemonSet {
    /// Whether the strategy is OnDelete (pods replaced only when someone deletes them).
    pub fn on_delete(&self) -> bool {
        self.spec.update_strategy.type_.as_deref() == Some("OnDelete")
    }
}

/// A StatefulSet: pods with stable names `<name>-<ordinal>`, created, replaced and removed in
/// ordinal order (or all at once with `Parallel`), each reachable by name through the headless
/// governing Service named by `serviceName`.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[cfg_attr(test, derive(serde::Deserialize))]
#[serde(rename_all = "camelCase")]
pub struct StatefulSet {
    #[serde(default)]
    pub metadata: ObjectMeta,
    #[serde(default)]
    /// Behind a `Shared`, as a pod's spec is: versions that change only the status share it,
    /// and `Object`, as large as its largest variant, stays the size of a pod (inline, this
    /// spec made every stored version of every object larger).
    pub spec: Shared<StatefulSetSpec>,
    #[serde(default)]
    pub status: StatefulSetStatus,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[cfg_attr(test, derive(serde::Deserialize))]
#[serde(rename_all = "camelCase")]
pub struct StatefulSetSpec {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replicas: Option<i32>,
    #[serde(default)]
    pub selector: LabelSelector,
    /// Shared with the object's other versions (and its spec with the pods made from it).
    #[serde(default)]
    pub template: Shared<PodTemplateSpec>,
    /// The claims each pod gets, `<template>-<set>-<ordinal>`, made before the pod and kept
    /// after it (the default Retain policy).
    #[serde(default, skip_serializing_if = "Vec::is_empty", deserialize_with = "null_as_default")]
    pub volume_claim_templates: Vec<super::storage::PersistentVolumeClaim>,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub service_name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pod_management_policy: Option<String>,
    #[serde(default)]
    pub update_strategy: StatefulSetUpdateStrategy,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub revision_history_limit: Option<i32>,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub min_ready_seconds: i32,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[cfg_attr(test, derive(serde::Deserialize))]
#[serde(rename_all = "camelCase")]
pub struct StatefulSetUpdateStrategy {
    #[serde(default, rename = "type", skip_serializing_if = "Option::is_none")]
    pub type_: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rolling_update: Option<RollingUpdateStatefulSetStrategy>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[cfg_attr(test, derive(serde::Deserialize))]
#[serde(rename_all = "camelCase")]
pub struct RollingUpdateStatefulSetStrategy {
    /// Ordinals below it keep the current revision during a rolling update.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub partition: Option<i32>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[cfg_attr(test, derive(serde::Deserialize))]
#[serde(rename_all = "camelCase")]
pub struct StatefulSetStatus {
    #[serde(default, skip_serializing_if = "is_zero_i64")]
    pub observed_generation: i64,
    #[serde(default)]
    pub replicas: i32,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub ready_replicas: i32,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub current_replicas: i32,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub updated_replicas: i32,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub current_revision: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub update_revision: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub collision_count: Option<i32>,
    #[serde(default)]
    pub available_replicas: i32,
}

impl StatefulSet {
    /// `spec.replicas`, 1 when unset (the API server defaults it).
    pub fn replicas(&self) -> i32 {
        self.spec.replicas.unwrap_or(1)
    }
    /// Whether pods are created and deleted without waiting for each other (`Parallel`).
    pub fn parallel(&self) -> bool {
        self.spec.pod_management_policy.as_deref() == Some("Parallel")
    }
    /// Whether the strategy is OnDelete (pods replaced only when someone deletes them).
    pub fn on_delete(&self) -> bool {
        self.spec.update_strategy.type_.as_deref() == Some("OnDelete")
    }
    /// The rolling update's partition (0 when unset).
    pub fn partition(&self) -> i32 {
        self.spec.update_strategy.rolling_update.as_ref().and_then(|r| r.partition).unwrap_or(0)
    }
}

/// A ControllerRevision: one version of a StatefulSet's or DaemonSet's pod template, kept so that
/// pods of an older revision can be made again (a partitioned rollout, OnDelete) and so that
/// `kubectl rollout history|undo` can list and return to them.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[cfg_attr(test, derive(serde::Deserialize))]
#[serde(rename_all = "camelCase")]
pub struct ControllerRevision {
    #[serde(default)]
    pub metadata: ObjectMeta,
    /// Upstream stores a strategic merge patch (`{"spec":{"template":{..., "$patch":"replace"}}}`)
    /// as raw bytes; kubeloop keeps the template it carries, without the `$patch` directive.
    #[serde(default)]
    pub data: ControllerRevisionData,
    #[serde(default)]
    pub revision: i64,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[cfg_attr(test, derive(serde::Deserialize))]
#[serde(rename_all = "camelCase")]
pub struct ControllerRevisionData {
    #[serde(default)]
    pub spec: RevisionSpec,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[cfg_attr(test, derive(serde::Deserialize))]
#[serde(rename_all = "camelCase")]
pub struct RevisionSpec {
    #[serde(default)]
    pub template: Shared<PodTemplateSpec>,
}

fn is_zero(v: &i32) -> bool {
    *v == 0
}
fn is_zero_i64(v: &i64) -> bool {
    *v == 0
}

/// The package upstream's OpenAPI documents name these types in (`schema.rs`).
const SCHEMA_PACKAGE: &str = "io.k8s.api.apps.v1";
// Decoding from JSON by hand (see `decode`): each struct's fields in declaration order.
decode_struct!(
/// Keeps a number of pods of one template running: the ReplicaSet controller creates pods when too
/// few match its selector and deletes some when too many do.
ReplicaSet {
    /// The object's name, namespace and labels, and what the API server records about it.
    metadata: "metadata" Default,
    /// The pods wanted.
    spec: "spec" Default,
    /// What the ReplicaSet controller last counted.
    status: "status" Default,
});
decode_struct!(
/// The pods a ReplicaSet keeps.
ReplicaSetSpec {
    /// How many.
    replicas: "replicas" Default,
    /// How long a pod must be Ready to count as available.
    min_ready_seconds: "minReadySeconds" Default,
    /// The labels of its pods.
    #[required = true]
    selector: "selector" Default,
    /// The pods it creates.
    template: "template" Default,
});
decode_struct!(
/// What the ReplicaSet controller last counted.
ReplicaSetStatus {
    /// Pods the ReplicaSet has.
    #[required = true]
    replicas: "replicas" Default,
    /// Pods whose labels match the template's.
    fully_labeled_replicas: "fullyLabeledReplicas" Default,
    /// Pods that are Ready.
    ready_replicas: "readyReplicas" Default,
    /// Pods Ready for at least minReadySeconds.
    available_replicas: "availableReplicas" Default,
    /// The generation the controller acted on.
    observed_generation: "observedGeneration" Default,
});
decode_struct!(
/// Keeps a number of identical pods running and rolls out changes to them: each version of the pod
/// template gets a ReplicaSet, which the deployment controller scales up while it scales the old
/// ones down.
Deployment {
    /// The object's name, namespace and labels, and what the API server records about it.
    metadata: "metadata" Default,
    /// The pods wanted, and how to change them.
    spec: "spec" Default,
    /// What the deployment controller last observed.
    status: "status" Default,
});
decode_struct!(
/// The pods a Deployment wants, and how it changes them.
DeploymentSpec {
    /// How many pods (1 by default).
    replicas: "replicas" Default,
    /// The labels of the Deployment's pods; it must match the template's labels.
    #[required = true]
    selector: "selector" Default,
    /// The pods to create. A change to it starts a rollout.
    #[required = true]
    template: "template" Default,
    /// How old pods are replaced by new ones.
    strategy: "strategy" Default,
    /// How long a new pod must be Ready before it counts as available.
    min_ready_seconds: "minReadySeconds" Default,
    /// How many old ReplicaSets to keep for rollbacks (10).
    revision_history_limit: "revisionHistoryLimit" Default,
    /// While true, template changes start no rollout.
    paused: "paused" Default,
    /// How long a rollout may go without progress before it is reported as failed (600).
    progress_deadline_seconds: "progressDeadlineSeconds" Default,
});
decode_struct!(
/// How a Deployment replaces its pods.
DeploymentStrategy {
    /// RollingUpdate (the default) or Recreate (all old pods go first).
    type_: "type" Default,
    /// The rolling update's limits.
    rolling_update: "rollingUpdate" Default,
});
decode_struct!(
/// How far a rolling update may go below and above the wanted number of pods.
RollingUpdateDeployment {
    /// How many pods may be unavailable during the update (a number or a percentage; 25%).
    max_unavailable: "maxUnavailable" Default,
    /// How many pods beyond the wanted number may exist during the update (25%).
    max_surge: "maxSurge" Default,
});
decode_struct!(
/// What the deployment controller last observed.
DeploymentStatus {
    /// The generation it acted on.
    observed_generation: "observedGeneration" Default,
    /// Pods of all its ReplicaSets.
    replicas: "replicas" Default,
    /// Pods of the current template.
    updated_replicas: "updatedReplicas" Default,
    /// Pods that are Ready.
    ready_replicas: "readyReplicas" Default,
    /// Pods Ready for at least minReadySeconds.
    available_replicas: "availableReplicas" Default,
    /// Pods still needed to be available.
    unavailable_replicas: "unavailableReplicas" Default,
    /// Available and Progressing.
    #[list = "map type"]
    #[patch = "merge type"]
    conditions: "conditions" NullAsDefault,
    /// Counts hash collisions of the template; it changes the next ReplicaSet's name.
    collision_count: "collisionCount" Default,
});
decode_struct!(
/// A condition of a Deployment: Available (enough pods available) or Progressing (a rollout moving,
/// done, or stuck past its deadline).
DeploymentCondition {
    /// Which condition this is.
    type_: "type" Required,
    /// True, False or Unknown.
    status: "status" Required,
    /// When the condition was last written.
    last_update_time: "lastUpdateTime" Default,
    /// When the status last changed.
    last_transition_time: "lastTransitionTime" Default,
    /// A word for why the condition is as it is.
    reason: "reason" Default,
    /// Why, for people.
    message: "message" Default,
});
decode_struct!(
/// Runs one pod on every node that may run it; the DaemonSet controller creates a pod when a node
/// joins.
DaemonSet {
    /// The object's name, namespace and labels, and what the API server records about it.
    metadata: "metadata" Default,
    /// The pods wanted on each node.
    spec: "spec" Default,
    /// What the DaemonSet controller last counted.
    status: "status" Default,
});
decode_struct!(
/// The pod a DaemonSet runs on each node, and how it is updated.
DaemonSetSpec {
    /// The labels of its pods.
    #[required = true]
    selector: "selector" Default,
    /// The pod to run on each node; its node selector, affinity and tolerations choose the nodes.
    #[required = true]
    template: "template" Default,
    /// How pods are replaced when the template changes.
    update_strategy: "updateStrategy" Default,
    /// How long a pod must be Ready to count as available.
    min_ready_seconds: "minReadySeconds" Default,
    /// How many old ControllerRevisions to keep (10).
    revision_history_limit: "revisionHistoryLimit" Default,
});
decode_struct!(
/// How a DaemonSet replaces its pods.
DaemonSetUpdateStrategy {
    /// RollingUpdate (the default) or OnDelete (a pod is replaced only when someone deletes it).
    type_: "type" Default,
    /// The rolling update's limits.
    rolling_update: "rollingUpdate" Default,
});
decode_struct!(
/// How many nodes a DaemonSet's rolling update works on at once.
RollingUpdateDaemonSet {
    /// Nodes whose pod may be unavailable during the update (1).
    max_unavailable: "maxUnavailable" Default,
    /// Nodes that may run an old and a new pod at once (0).
    max_surge: "maxSurge" Default,
});
decode_struct!(
/// What the DaemonSet controller last counted.
DaemonSetStatus {
    /// Nodes running a pod they should.
    #[required = true]
    current_number_scheduled: "currentNumberScheduled" Default,
    /// Nodes running a pod they should not.
    #[required = true]
    number_misscheduled: "numberMisscheduled" Default,
    /// Nodes that should run a pod.
    #[required = true]
    desired_number_scheduled: "desiredNumberScheduled" Default,
    /// Nodes whose pod is Ready.
    #[required = true]
    number_ready: "numberReady" Default,
    /// The generation the controller acted on.
    observed_generation: "observedGeneration" Default,
    /// Nodes running the current template's pod.
    updated_number_scheduled: "updatedNumberScheduled" Default,
    /// Nodes whose pod is available.
    number_available: "numberAvailable" Default,
    /// Nodes whose pod is missing or not available.
    number_unavailable: "numberUnavailable" Default,
});
decode_struct!(
/// Runs pods with stable names (web-0, web-1), each with its own storage, created and updated in
/// order.
StatefulSet {
    /// The object's name, namespace and labels, and what the API server records about it.
    metadata: "metadata" Default,
    /// The pods wanted, and how they are named, stored and updated.
    spec: "spec" Default,
    /// What the StatefulSet controller last counted.
    status: "status" Default,
});
decode_struct!(
/// The pods a StatefulSet runs.
StatefulSetSpec {
    /// How many pods (1).
    replicas: "replicas" Default,
    /// The labels of its pods.
    #[required = true]
    selector: "selector" Default,
    /// The pods it creates, named after the set and an ordinal.
    #[required = true]
    template: "template" Default,
    /// Claims made for each pod, which outlive it.
    #[list = "atomic"]
    volume_claim_templates: "volumeClaimTemplates" NullAsDefault,
    /// The headless Service that gives each pod its DNS name.
    service_name: "serviceName" Default,
    /// OrderedReady (one at a time) or Parallel.
    pod_management_policy: "podManagementPolicy" Default,
    /// How pods are replaced when the template changes.
    update_strategy: "updateStrategy" Default,
    /// How many old ControllerRevisions to keep (10).
    revision_history_limit: "revisionHistoryLimit" Default,
    /// How long a pod must be Ready to count as available.
    min_ready_seconds: "minReadySeconds" Default,
});
decode_struct!(
/// How a StatefulSet replaces its pods.
StatefulSetUpdateStrategy {
    /// RollingUpdate (the default: highest ordinal first, one at a time) or OnDelete.
    type_: "type" Default,
    /// The rolling update's partition.
    rolling_update: "rollingUpdate" Default,
});
decode_struct!(
/// Which ordinals a StatefulSet's rolling update reaches.
RollingUpdateStatefulSetStrategy {
    /// Only pods with this ordinal or higher are updated (0).
    partition: "partition" Default,
});
decode_struct!(
/// What the StatefulSet controller last counted.
StatefulSetStatus {
    /// The generation the controller acted on.
    observed_generation: "observedGeneration" Default,
    /// Pods it has.
    #[required = true]
    replicas: "replicas" Default,
    /// Pods that are Ready.
    ready_replicas: "readyReplicas" Default,
    /// Pods of currentRevision.
    current_replicas: "currentReplicas" Default,
    /// Pods of updateRevision.
    updated_replicas: "updatedReplicas" Default,
    /// The revision the pods below the partition run.
    current_revision: "currentRevision" Default,
    /// The revision of the current template.
    update_revision: "updateRevision" Default,
    /// Counts hash collisions of the template's revision name.
    collision_count: "collisionCount" Default,
    /// Pods Ready for at least minReadySeconds.
    available_replicas: "availableReplicas" Default,
});
decode_struct!(
/// A snapshot of a DaemonSet's or StatefulSet's pod template, which rollbacks go back to.
ControllerRevision {
    /// The object's name, namespace and labels, and what the API server records about it.
    metadata: "metadata" Default,
    /// The snapshot: the owner's pod template.
    data: "data" Default,
    /// Its number, increasing.
    #[required = true]
    revision: "revision" Default,
});
decode_struct!(ControllerRevisionData as "" "" {
    /// The owner's spec, as far as a revision keeps it.
    spec: "spec" Default,
});
decode_struct!(RevisionSpec as "" "" {
    /// The pod template.
    template: "template" Default,
});
