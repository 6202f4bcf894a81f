//! ReplicationController (v1): the ReplicaSet's ancestor, still served and still reconciled.
//!
//! Its selector is a plain label map (a ReplicaSet's `matchLabels` without expressions), and
//! kube-controller-manager runs it with the ReplicaSet controller's own code, converting each
//! ReplicationController to a ReplicaSet to reason about it and back to write its status
//! (pkg/controller/replication). [`ReplicationController::as_replica_set`] is that conversion.

use super::apps::{ReplicaSet, ReplicaSetSpec, ReplicaSetStatus};
use super::decode::decode_struct;
#[cfg(test)]
use super::meta::null_as_default;
use super::meta::{LabelSelector, ObjectMeta, StringMap};
use super::pod::PodTemplateSpec;
use super::shared::Shared;
use super::time::Time;
use serde::Serialize;

#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[cfg_attr(test, derive(serde::Deserialize))]
#[serde(rename_all = "camelCase")]
pub struct ReplicationController {
    #[serde(default)]
    pub metadata: ObjectMeta,
    #[serde(default)]
    pub spec: ReplicationControllerSpec,
    #[serde(default)]
    pub status: ReplicationControllerStatus,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[cfg_attr(test, derive(serde::Deserialize))]
#[serde(rename_all = "camelCase")]
pub struct ReplicationControllerSpec {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replicas: Option<i32>,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub min_ready_seconds: i32,
    #[serde(default, skip_serializing_if = "StringMap::is_empty", deserialize_with = "null_as_default")]
    pub selector: StringMap,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub template: Option<Shared<PodTemplateSpec>>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[cfg_attr(test, derive(serde::Deserialize))]
#[serde(rename_all = "camelCase")]
pub struct ReplicationControllerStatus {
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
    #[serde(default, skip_serializing_if = "Vec::is_empty", deserialize_with = "null_as_default")]
    pub conditions: Vec<ReplicationControllerCondition>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[cfg_attr(test, derive(serde::Deserialize))]
#[serde(rename_all = "camelCase")]
pub struct ReplicationControllerCondition {
    #[serde(rename = "type")]
    pub type_: String,
    pub status: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_transition_time: Option<Time>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

impl ReplicationController {
    /// The ReplicaSet the controller reasons about (`Convert_v1_ReplicationController_To_apps_ReplicaSet`):
    /// the same metadata, the selector as `matchLabels`, the same template and status counts.
    pub fn as_replica_set(&self) -> ReplicaSet {
        let status = &self.status;
        ReplicaSet {
            metadata: self.metadata.clone(),
            spec: ReplicaSetSpec {
                replicas: self.spec.replicas,
                min_ready_seconds: self.spec.min_ready_seconds,
                selector: LabelSelector { match_labels: self.spec.selector.clone(), match_expressions: Vec::new() },
                template: self.spec.template.clone().unwrap_or_default(),
            },
            status: ReplicaSetStatus {
                replicas: status.replicas,
                fully_labeled_replicas: status.fully_labeled_replicas,
                ready_replicas: status.ready_replicas,
                available_replicas: status.available_replicas,
                observed_generation: status.observed_generation,
            },
        }
    }

    /// This ReplicationController with a ReplicaSet status written back (conditions kept).
    pub fn with_replica_set_status(&self, status: &ReplicaSetStatus) -> ReplicationController {
        let mut next = self.clone();
        next.status = ReplicationControllerStatus {
            replicas: status.replicas,
            fully_labeled_replicas: status.fully_labeled_replicas,
            ready_replicas: status.ready_replicas,
            available_replicas: status.available_replicas,
            observed_generation: status.observed_generation,
            conditions: self.status.conditions.clone(),
        };
        next
    }
}

fn is_zero(v: &i32) -> bool {
    *v == 0
}
fn is_zero_i64(v: &i64) -> bool {
    *v == 0
}

/// The package upstream's OpenAPI documents name these types in (`schema.rs`).
const SCHEMA_PACKAGE: &str = "io.k8s.api.core.v1";
// Decoding from JSON by hand (see `decode`): each struct's fields in declaration order.
decode_struct!(
/// The older form of a ReplicaSet: keeps a number of pods running, selected by equality of labels.
ReplicationController {
    /// The object's name, namespace and labels, and what the API server records about it.
    metadata: "metadata" Default,
    /// The pods wanted.
    spec: "spec" Default,
    /// What the controller last counted.
    status: "status" Default,
});
decode_struct!(
/// The pods a ReplicationController keeps.
ReplicationControllerSpec {
    /// How many (1).
    replicas: "replicas" Default,
    /// How long a pod must be Ready to count as available.
    min_ready_seconds: "minReadySeconds" Default,
    /// The labels its pods must have (equality only).
    selector: "selector" NullAsDefault,
    /// The pods it creates.
    template: "template" Default,
});
decode_struct!(
/// What the controller last counted.
ReplicationControllerStatus {
    /// Pods it has.
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
    /// ReplicaFailure, when it cannot create or delete pods.
    #[list = "map type"]
    #[patch = "merge type"]
    conditions: "conditions" NullAsDefault,
});
decode_struct!(
/// A condition of a ReplicationController.
ReplicationControllerCondition {
    /// Which condition this is.
    type_: "type" Required,
    /// True, False or Unknown.
    status: "status" Required,
    /// When the status last changed.
    last_transition_time: "lastTransitionTime" Default,
    /// A word for why the condition is as it is.
    reason: "reason" Default,
    /// Why, for people.
    message: "message" Default,
});
