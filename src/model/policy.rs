//! PodDisruptionBudget (policy/v1): how many of a workload's pods a voluntary disruption — an
//! eviction, which `kubectl drain` asks for — may take down at once.
//!
//! The user writes the budget (`minAvailable` or `maxUnavailable` over a selector); the disruption
//! controller keeps its status (how many matching pods are healthy, how many must stay, how many
//! evictions are allowed now); the eviction API reads that status and spends it.

use super::decode::decode_struct;
#[cfg(test)]
use super::meta::null_as_default;
use super::meta::{IntOrString, LabelSelector, ObjectMeta};
use super::time::Time;
use serde::Serialize;
use std::collections::BTreeMap;

/// The condition the disruption controller and the eviction API keep on a budget.
pub const DISRUPTION_ALLOWED: &str = "DisruptionAllowed";
/// `policy.SufficientPodsReason`: more pods are healthy than the budget needs.
pub const SUFFICIENT_PODS: &str = "SufficientPods";
/// `policy.InsufficientPodsReason`: no eviction is allowed now.
pub const INSUFFICIENT_PODS: &str = "InsufficientPods";
/// `policy.SyncFailedReason`: the controller could not compute the budget (its fail-safe).
pub const SYNC_FAILED: &str = "SyncFailed";
/// `unhealthyPodEvictionPolicy` values (policy/v1).
pub const IF_HEALTHY_BUDGET: &str = "IfHealthyBudget";
pub const ALWAYS_ALLOW: &str = "AlwaysAllow";

#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[cfg_attr(test, derive(serde::Deserialize))]
#[serde(rename_all = "camelCase")]
pub struct PodDisruptionBudget {
    #[serde(default)]
    pub metadata: ObjectMeta,
    #[serde(default)]
    pub spec: PodDisruptionBudgetSpec,
    #[serde(default)]
    pub status: PodDisruptionBudgetStatus,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[cfg_attr(test, derive(serde::Deserialize))]
#[serde(rename_all = "camelCase")]
pub struct PodDisruptionBudgetSpec {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_available: Option<IntOrString>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub selector: Option<LabelSelector>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_unavailable: Option<IntOrString>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unhealthy_pod_eviction_policy: Option<String>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[cfg_attr(test, derive(serde::Deserialize))]
#[serde(rename_all = "camelCase")]
pub struct PodDisruptionBudgetStatus {
    #[serde(default, skip_serializing_if = "is_zero_i64")]
    pub observed_generation: i64,
    /// Pods an eviction has been granted for, by name, with when: not counted healthy until the
    /// controller sees them go (or two minutes pass).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty", deserialize_with = "null_as_default")]
    pub disrupted_pods: BTreeMap<String, Time>,
    #[serde(default)]
    pub disruptions_allowed: i32,
    #[serde(default)]
    pub current_healthy: i32,
    #[serde(default)]
    pub desired_healthy: i32,
    #[serde(default)]
    pub expected_pods: i32,
    #[serde(default, skip_serializing_if = "Vec::is_empty", deserialize_with = "null_as_default")]
    pub conditions: Vec<Condition>,
}

/// `metav1.Condition`, the condition type of the newer APIs.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[cfg_attr(test, derive(serde::Deserialize))]
#[serde(rename_all = "camelCase")]
pub struct Condition {
    #[serde(rename = "type")]
    pub type_: String,
    pub status: String,
    #[serde(default, skip_serializing_if = "is_zero_i64")]
    pub observed_generation: i64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_transition_time: Option<Time>,
    #[serde(default)]
    pub reason: String,
    #[serde(default)]
    pub message: String,
}

impl PodDisruptionBudget {
    pub fn condition(&self, type_: &str) -> Option<&Condition> {
        self.status.conditions.iter().find(|c| c.type_ == type_)
    }
    /// The selector as the eviction API reads it: absent or empty selects nothing (a budget with
    /// no selector "should match nothing, not everything").
    pub fn selects(&self, labels: &super::meta::StringMap) -> bool {
        self.spec.selector.as_ref().is_some_and(|s| !s.is_empty() && s.matches(labels))
    }
    /// `pdbhelper.UpdateDisruptionAllowedCondition`: True/SufficientPods while an eviction is
    /// allowed, else False/InsufficientPods; the transition time moves only when the status does.
    pub fn update_disruption_allowed_condition(&mut self, now: Time) {
        let (status, reason) = if self.status.disruptions_allowed > 0 { ("True", SUFFICIENT_PODS) } else { ("False", INSUFFICIENT_PODS) };
        let generation = self.status.observed_generation;
        self.set_condition(Condition {
            type_: DISRUPTION_ALLOWED.into(),
            status: status.into(),
            observed_generation: generation,
            last_transition_time: Some(now),
            reason: reason.into(),
            message: String::new(),
        });
    }
    /// `meta.SetStatusCondition`: replaces the condition of the same type, keeping its
    /// transition time when the status is unchanged.
    pub fn set_condition(&mut self, mut next: Condition) {
        let conditions = &mut self.status.conditions;
        match conditions.iter_mut().find(|c| c.type_ == next.type_) {
            Some(existing) => {
                if existing.status == next.status {
                    next.last_transition_time = existing.last_transition_time;
                }
                *existing = next;
            }
            None => conditions.push(next),
        }
    }
}

fn is_zero_i64(v: &i64) -> bool {
    *v == 0
}

/// The package upstream's OpenAPI documents name these types in (`schema.rs`).
const SCHEMA_PACKAGE: &str = "io.k8s.api.policy.v1";
// Decoding from JSON by hand (see `decode`): each struct's fields in declaration order.
decode_struct!(
/// How many pods of a set must stay up while nodes are drained: evictions that would break it are
/// refused.
PodDisruptionBudget {
    /// The object's name, namespace and labels, and what the API server records about it.
    metadata: "metadata" Default,
    /// Which pods, and how many must stay.
    spec: "spec" Default,
    /// What the disruption controller last counted.
    status: "status" Default,
});
decode_struct!(
/// Which pods a budget covers, and how many must stay.
PodDisruptionBudgetSpec {
    /// How many must stay available (a number or a percentage).
    min_available: "minAvailable" Default,
    /// The labels of its pods.
    selector: "selector" Default,
    /// How many may be unavailable.
    max_unavailable: "maxUnavailable" Default,
    /// Whether pods that are not Ready may be evicted regardless: IfHealthyBudget or AlwaysAllow.
    unhealthy_pod_eviction_policy: "unhealthyPodEvictionPolicy" Default,
});
decode_struct!(
/// What the disruption controller last counted.
PodDisruptionBudgetStatus {
    /// The generation the controller acted on.
    observed_generation: "observedGeneration" Default,
    /// Pods granted an eviction that have not gone yet, and when.
    disrupted_pods: "disruptedPods" NullAsDefault,
    /// How many evictions are allowed now.
    #[required = true]
    disruptions_allowed: "disruptionsAllowed" Default,
    /// Pods healthy now.
    #[required = true]
    current_healthy: "currentHealthy" Default,
    /// Pods that must stay healthy.
    #[required = true]
    desired_healthy: "desiredHealthy" Default,
    /// The pods the budget counts.
    #[required = true]
    expected_pods: "expectedPods" Default,
    /// DisruptionAllowed.
    #[list = "map type"]
    #[patch = "merge type"]
    conditions: "conditions" NullAsDefault,
});
decode_struct!(
/// A condition.
Condition as "io.k8s.apimachinery.pkg.apis.meta.v1" "Condition" {
    /// Which condition this is.
    type_: "type" Required,
    /// True, False or Unknown.
    status: "status" Required,
    /// The generation the condition was set for.
    observed_generation: "observedGeneration" Default,
    /// When the status last changed.
    #[required = true]
    last_transition_time: "lastTransitionTime" Default,
    /// A word for why the condition is as it is.
    #[required = true]
    reason: "reason" Default,
    /// Why, for people.
    #[required = true]
    message: "message" Default,
});
