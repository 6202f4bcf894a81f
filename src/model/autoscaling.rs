//! HorizontalPodAutoscaler (autoscaling/v2): a claim about a claim. It does not say "three
//! replicas"; it says "as many replicas as keep CPU near this share of their requests", and its
//! loop rewrites the target's `spec.replicas` every 15 seconds to close that gap.

use super::decode::decode_struct;
#[cfg(test)]
use super::meta::null_as_default;
use super::meta::ObjectMeta;
use super::shared::Shared;
use super::time::{Duration, Time};
use serde::Serialize;

/// The older version still served: one CPU target, no metrics list, no behavior.
pub const V1: &str = "autoscaling/v1";

/// An autoscaling/v1 HPA as the API server converts it to the version it stores (upstream's
/// `Convert_v1_HorizontalPodAutoscaler_To_autoscaling_HorizontalPodAutoscaler`):
/// `targetCPUUtilizationPercentage` becomes one Resource metric on CPU utilization, and v1's
/// status fields (`currentReplicas`, `desiredReplicas`, `lastScaleTime`) carry over. Fields v1
/// does not have are left in place, so that the decoder warns about them as unknown.
pub fn from_v1(mut value: serde_json::Value) -> serde_json::Value {
    use serde_json::json;
    value["apiVersion"] = json!("autoscaling/v2");
    if let Some(spec) = value.get_mut("spec").and_then(serde_json::Value::as_object_mut) {
        if let Some(target) = spec.remove("targetCPUUtilizationPercentage") {
            let metric =
                json!({"type": "Resource", "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": target}}});
            spec.insert("metrics".into(), json!([metric]));
        }
    }
    if let Some(status) = value.get_mut("status").and_then(serde_json::Value::as_object_mut) {
        status.remove("currentCPUUtilizationPercentage");
    }
    value
}

/// The stored (autoscaling/v2) HPA as an autoscaling/v1 client reads it (upstream's
/// `Convert_autoscaling_HorizontalPodAutoscaler_To_v1_HorizontalPodAutoscaler`): the CPU
/// utilization metric becomes `targetCPUUtilizationPercentage` and its current value
/// `currentCPUUtilizationPercentage`; what v1 has no field for (the behavior, the conditions) is
/// kept in the `autoscaling.alpha.kubernetes.io/…` annotations as JSON, as upstream keeps it.
pub fn to_v1(mut value: serde_json::Value) -> serde_json::Value {
    use serde_json::{json, Value};
    let is_cpu = |m: &Value| m["type"] == "Resource" && m["resource"]["name"] == "cpu";
    value["apiVersion"] = json!(V1);
    let mut annotations = Vec::new();
    if let Some(spec) = value.get_mut("spec").and_then(Value::as_object_mut) {
        if let Some(Value::Array(metrics)) = spec.remove("metrics") {
            if let Some(target) = metrics.iter().find(|m| is_cpu(m)).and_then(|m| m["resource"]["target"].get("averageUtilization")) {
                spec.insert("targetCPUUtilizationPercentage".into(), target.clone());
            }
        }
        if let Some(behavior) = spec.remove("behavior") {
            annotations.push(("autoscaling.alpha.kubernetes.io/behavior", behavior.to_string()));
        }
    }
    if let Some(status) = value.get_mut("status").and_then(Value::as_object_mut) {
        if let Some(Value::Array(metrics)) = status.remove("currentMetrics") {
            if let Some(current) = metrics.iter().find(|m| is_cpu(m)).and_then(|m| m["resource"]["current"].get("averageUtilization")) {
                status.insert("currentCPUUtilizationPercentage".into(), current.clone());
            }
        }
        if let Some(conditions) = status.remove("conditions") {
            annotations.push(("autoscaling.alpha.kubernetes.io/conditions", conditions.to_string()));
        }
    }
    if !annotations.is_empty() {
        let meta = value["metadata"].as_object_mut().map(|m| m.entry("annotations").or_insert_with(|| json!({})));
        if let Some(Value::Object(map)) = meta {
            for (key, text) in annotations {
                map.insert(key.into(), Value::String(text));
            }
        }
    }
    value
}

/// `autoscaling.DefaultCPUUtilization`: the target when an HPA names no metric.
pub const DEFAULT_CPU_UTILIZATION: i32 = 80;

#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[cfg_attr(test, derive(serde::Deserialize))]
#[serde(rename_all = "camelCase")]
pub struct HorizontalPodAutoscaler {
    #[serde(default)]
    pub metadata: ObjectMeta,
    #[serde(default)]
    /// Behind a `Shared`, as a pod's spec is: versions that change only the status share it,
    /// and `Object`, as large as its largest variant, stays the size of a pod (inline, this
    /// spec made every stored version of every object larger).
    pub spec: Shared<HorizontalPodAutoscalerSpec>,
    #[serde(default)]
    pub status: HorizontalPodAutoscalerStatus,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[cfg_attr(test, derive(serde::Deserialize))]
#[serde(rename_all = "camelCase")]
pub struct HorizontalPodAutoscalerSpec {
    #[serde(default)]
    pub scale_target_ref: CrossVersionObjectReference,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_replicas: Option<i32>,
    #[serde(default)]
    pub max_replicas: i32,
    #[serde(default, skip_serializing_if = "Vec::is_empty", deserialize_with = "null_as_default")]
    pub metrics: Vec<MetricSpec>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub behavior: Option<HorizontalPodAutoscalerBehavior>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[cfg_attr(test, derive(serde::Deserialize))]
#[serde(rename_all = "camelCase")]
pub struct CrossVersionObjectReference {
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub api_version: String,
    #[serde(default)]
    pub kind: String,
    #[serde(default)]
    pub name: String,
}

/// One metric to scale on. kubeloop measures `Resource` metrics of CPU; the other types
/// (`Pods`, `Object`, `External`, `ContainerResource`) keep their type but no source, so the
/// controller reports that it cannot compute them.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[cfg_attr(test, derive(serde::Deserialize))]
#[serde(rename_all = "camelCase")]
pub struct MetricSpec {
    #[serde(rename = "type")]
    pub type_: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resource: Option<ResourceMetricSource>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[cfg_attr(test, derive(serde::Deserialize))]
#[serde(rename_all = "camelCase")]
pub struct ResourceMetricSource {
    pub name: String,
    #[serde(default)]
    pub target: MetricTarget,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[cfg_attr(test, derive(serde::Deserialize))]
#[serde(rename_all = "camelCase")]
pub struct MetricTarget {
    #[serde(default, rename = "type")]
    pub type_: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub average_utilization: Option<i32>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[cfg_attr(test, derive(serde::Deserialize))]
#[serde(rename_all = "camelCase")]
pub struct HorizontalPodAutoscalerBehavior {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scale_up: Option<ScalingRules>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scale_down: Option<ScalingRules>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[cfg_attr(test, derive(serde::Deserialize))]
#[serde(rename_all = "camelCase")]
pub struct ScalingRules {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stabilization_window_seconds: Option<i32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub select_policy: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty", deserialize_with = "null_as_default")]
    pub policies: Vec<ScalingPolicy>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[cfg_attr(test, derive(serde::Deserialize))]
#[serde(rename_all = "camelCase")]
pub struct ScalingPolicy {
    #[serde(rename = "type")]
    pub type_: String,
    pub value: i32,
    pub period_seconds: i32,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[cfg_attr(test, derive(serde::Deserialize))]
#[serde(rename_all = "camelCase")]
pub struct HorizontalPodAutoscalerStatus {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_generation: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_scale_time: Option<Time>,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub current_replicas: i32,
    #[serde(default)]
    pub desired_replicas: i32,
    #[serde(default, skip_serializing_if = "Vec::is_empty", deserialize_with = "null_as_default")]
    pub current_metrics: Vec<MetricStatus>,
    #[serde(default, skip_serializing_if = "Vec::is_empty", deserialize_with = "null_as_default")]
    pub conditions: Vec<HorizontalPodAutoscalerCondition>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[cfg_attr(test, derive(serde::Deserialize))]
#[serde(rename_all = "camelCase")]
pub struct MetricStatus {
    #[serde(rename = "type")]
    pub type_: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resource: Option<ResourceMetricStatus>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[cfg_attr(test, derive(serde::Deserialize))]
#[serde(rename_all = "camelCase")]
pub struct ResourceMetricStatus {
    pub name: String,
    #[serde(default)]
    pub current: MetricValueStatus,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[cfg_attr(test, derive(serde::Deserialize))]
#[serde(rename_all = "camelCase")]
pub struct MetricValueStatus {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub average_value: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub average_utilization: Option<i32>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[cfg_attr(test, derive(serde::Deserialize))]
#[serde(rename_all = "camelCase")]
pub struct HorizontalPodAutoscalerCondition {
    #[serde(rename = "type")]
    pub type_: String,
    pub status: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_transition_time: Option<Time>,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub reason: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub message: String,
}

fn is_zero(v: &i32) -> bool {
    *v == 0
}

/// One pod's CPU use as the metrics API reports it (`metrics.k8s.io/v1beta1` PodMetrics, its
/// containers summed): the rate over `window`, measured at `timestamp`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PodMetric {
    pub pod: String,
    pub cpu_milli: i64,
    pub timestamp: Time,
    pub window: Duration,
}

impl HorizontalPodAutoscaler {
    pub fn condition(&self, type_: &str) -> Option<&HorizontalPodAutoscalerCondition> {
        self.status.conditions.iter().find(|c| c.type_ == type_)
    }
    /// `setCondition`: replaces the condition of that type; the transition time moves only when
    /// the status does.
    pub fn set_condition(&mut self, type_: &str, status: &str, reason: &str, message: String, now: Time) {
        let fresh = HorizontalPodAutoscalerCondition {
            type_: type_.into(),
            status: status.into(),
            last_transition_time: Some(now),
            reason: reason.into(),
            message,
        };
        match self.status.conditions.iter_mut().find(|c| c.type_ == type_) {
            Some(c) => {
                let since = if c.status == fresh.status { c.last_transition_time } else { fresh.last_transition_time };
                *c = HorizontalPodAutoscalerCondition { last_transition_time: since, ..fresh };
            }
            None => self.status.conditions.push(fresh),
        }
    }
    /// The CPU utilization target of its first metric, if that is what it scales on.
    pub fn cpu_target(&self) -> Option<i32> {
        self.spec.metrics.first().and_then(|m| m.resource.as_ref()).filter(|r| r.name == "cpu").and_then(|r| r.target.average_utilization)
    }
}

/// The package upstream's OpenAPI documents name these types in (`schema.rs`).
const SCHEMA_PACKAGE: &str = "io.k8s.api.autoscaling.v2";
// Decoding from JSON by hand (see `decode`): each struct's fields in declaration order.
decode_struct!(
/// Scales a Deployment, ReplicaSet or StatefulSet between a minimum and a maximum so that its pods'
/// average CPU use meets a target, from what metrics-server reports.
HorizontalPodAutoscaler {
    /// The object's name, namespace and labels, and what the API server records about it.
    metadata: "metadata" Default,
    /// What to scale, within which bounds, towards which target.
    spec: "spec" Default,
    /// What the autoscaler last measured and decided.
    status: "status" Default,
});
decode_struct!(
/// What a HorizontalPodAutoscaler scales, between which bounds, and by which metrics.
HorizontalPodAutoscalerSpec {
    /// The object it scales.
    #[required = true]
    scale_target_ref: "scaleTargetRef" Default,
    /// The fewest pods (1).
    min_replicas: "minReplicas" Default,
    /// The most pods.
    #[required = true]
    max_replicas: "maxReplicas" Default,
    /// The targets (resource metrics: CPU or memory use).
    #[list = "atomic"]
    metrics: "metrics" NullAsDefault,
    /// How fast it may scale up and down.
    behavior: "behavior" Default,
});
decode_struct!(
/// The object an autoscaler scales.
CrossVersionObjectReference {
    /// Its API version (apps/v1).
    api_version: "apiVersion" Default,
    /// Its kind (Deployment).
    #[required = true]
    kind: "kind" Default,
    /// Its name.
    #[required = true]
    name: "name" Default,
});
decode_struct!(
/// A metric to scale on.
MetricSpec {
    /// Resource: a resource's use by the pods (the kind kubeloop simulates).
    type_: "type" Required,
    /// Which resource, and its target.
    resource: "resource" Default,
});
decode_struct!(
/// A resource's use by the target's pods.
ResourceMetricSource {
    /// cpu or memory.
    name: "name" Required,
    /// The value to keep it at.
    #[required = true]
    target: "target" Default,
});
decode_struct!(
/// The value an autoscaler keeps a metric at.
MetricTarget {
    /// Utilization: a percentage of the pods' requests.
    #[required = true]
    type_: "type" Default,
    /// The target's average use, in percent of the pods' requests.
    average_utilization: "averageUtilization" Default,
});
decode_struct!(
/// How fast an autoscaler may scale.
HorizontalPodAutoscalerBehavior {
    /// The rules for scaling up.
    scale_up: "scaleUp" Default,
    /// The rules for scaling down.
    scale_down: "scaleDown" Default,
});
decode_struct!(
/// How fast an autoscaler may scale in one direction.
ScalingRules {
    /// Recommendations over this window are considered, the most cautious one taken (300 down, 0
    /// up).
    stabilization_window_seconds: "stabilizationWindowSeconds" Default,
    /// Max (the default), Min or Disabled: which policy's limit applies.
    select_policy: "selectPolicy" Default,
    /// Limits on how much may change in a period.
    policies: "policies" NullAsDefault,
});
decode_struct!(
/// A limit on how much an autoscaler may change in a period.
ScalingPolicy {
    /// Pods or Percent.
    type_: "type" Required,
    /// How many pods, or what percentage.
    value: "value" Required,
    /// The period the limit covers.
    period_seconds: "periodSeconds" Required,
});
decode_struct!(
/// What the autoscaler last measured and decided.
HorizontalPodAutoscalerStatus {
    /// The generation the autoscaler acted on.
    observed_generation: "observedGeneration" Default,
    /// When it last changed the target's scale.
    last_scale_time: "lastScaleTime" Default,
    /// The target's pods now.
    current_replicas: "currentReplicas" Default,
    /// The pods it last asked for.
    #[required = true]
    desired_replicas: "desiredReplicas" Default,
    /// What it last measured.
    #[list = "atomic"]
    current_metrics: "currentMetrics" NullAsDefault,
    /// AbleToScale, ScalingActive and ScalingLimited.
    #[list = "map type"]
    #[patch = "merge type"]
    conditions: "conditions" NullAsDefault,
});
decode_struct!(
/// A metric as last measured.
MetricStatus {
    /// The metric's type.
    type_: "type" Required,
    /// The resource's measured use.
    resource: "resource" Default,
});
decode_struct!(
/// A resource's measured use.
ResourceMetricStatus {
    /// cpu or memory.
    name: "name" Required,
    /// What was measured.
    #[required = true]
    current: "current" Default,
});
decode_struct!(
/// A measured value.
MetricValueStatus {
    /// The pods' average use.
    average_value: "averageValue" Default,
    /// The pods' average use, in percent of their requests.
    average_utilization: "averageUtilization" Default,
});
decode_struct!(
/// A condition of an autoscaler.
HorizontalPodAutoscalerCondition {
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

#[cfg(test)]
mod version_tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn v1_is_the_cpu_target_and_annotations_and_converts_back() {
        let v2 = json!({
            "apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler", "metadata": {"name": "web"},
            "spec": {"minReplicas": 1, "maxReplicas": 5, "metrics": [{"type": "Resource", "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 50}}}]},
            "status": {"currentReplicas": 2, "desiredReplicas": 2,
                "currentMetrics": [{"type": "Resource", "resource": {"name": "cpu", "current": {"averageUtilization": 30}}}],
                "conditions": [{"type": "AbleToScale", "status": "True"}]},
        });
        let v1 = to_v1(v2.clone());
        assert_eq!(v1["apiVersion"], V1);
        assert_eq!(v1["spec"]["targetCPUUtilizationPercentage"], 50);
        assert!(v1["spec"].get("metrics").is_none());
        assert_eq!(v1["status"]["currentCPUUtilizationPercentage"], 30);
        assert_eq!(
            v1["metadata"]["annotations"]["autoscaling.alpha.kubernetes.io/conditions"],
            r#"[{"status":"True","type":"AbleToScale"}]"#
        );
        assert_eq!(from_v1(v1)["spec"], v2["spec"]);
    }
}
