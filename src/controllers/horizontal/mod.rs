//! The horizontal pod autoscaler (pkg/controller/podautoscaler): every 15 seconds, per
//! HorizontalPodAutoscaler, read the target's scale and its pods' CPU use, compute the replicas
//! that would bring use to the target, smooth that over recent recommendations, and write the
//! target's `spec.replicas` — which the Deployment and ReplicaSet loops then close.
//!
//! Observe: the HPA, its target (Deployment, ReplicaSet or ReplicationController) and the target's
//! pods from the informers, and the metrics API by a call each sync (`ApiRequest::PodMetrics`).
//! Compare: `replicas::resource_replicas`. Act: a scale update and a status write, with
//! `SuccessfulRescale` events. Each sync is two passes of `reconcile`: the first asks for
//! metrics, the second (once they are in) decides.

mod normalize;
pub mod replicas;

use super::{Action, Caches, Call, Controller, Outcome, Sync};
use crate::api::ApiRequest;
use crate::model::*;
use crate::runtime::events::{reference_to, EventSpec};
use crate::runtime::informer::Delta;
use crate::vec_map::VecMap;
use normalize::{Bounds, History, Recommendation, ScaleEvent};

/// `--horizontal-pod-autoscaler-sync-period`.
pub const SYNC_PERIOD: Duration = Duration::secs(15);
/// How the controller names the metric it scaled on, in events and conditions.
const CPU_METRIC: &str = "cpu resource utilization (percentage of request)";

/// What the controller remembers between syncs, per HPA (upstream keeps the same in memory,
/// so a restart forgets it).
#[derive(Debug, Default)]
struct Memory {
    /// When the next sync is due.
    due: Option<Time>,
    /// The metrics answer this sync asked for, once it is in.
    metrics: Option<Result<Vec<PodMetric>, String>>,
    recommendations: Vec<Recommendation>,
    ups: Vec<ScaleEvent>,
    downs: Vec<ScaleEvent>,
}

#[derive(Debug, Default)]
pub struct HorizontalController {
    memory: VecMap<ObjectKey, Memory>,
    events: Vec<EventSpec>,
}

impl HorizontalController {
    pub fn new() -> Self {
        Self::default()
    }
}

/// The target's scale subresource, as the controller reads it.
struct Scale {
    replicas: i32,
    selector: LabelSelector,
    object: Object,
    /// A custom object's scale subresource paths (its definition's).
    paths: Option<crate::api::crd::ScalePaths>,
}

/// The scale of a custom object, through its definition's scale subresource (the definitions
/// and custom objects come from the controller's caches, as the real controller reads a
/// target's `/scale` through discovery's mapping).
#[inline(never)]
fn custom_scale_of(caches: &Caches, hpa: &HorizontalPodAutoscaler) -> Result<Scale, String> {
    use crate::api::crd;
    let r = &hpa.spec.scale_target_ref;
    let (group, version) = r.api_version.split_once('/').unwrap_or(("", &r.api_version));
    let crds =
        caches.get(Kind::CustomResourceDefinition).into_iter().flat_map(|s| s.iter()).filter_map(|o| o.as_custom_resource_definition());
    let Some(crd) = crd::definition_for(crds, &r.api_version, &r.kind) else {
        return Err(format!("no matches for kind {:?} in group {group:?}", r.kind));
    };
    let paths = crd::scale_paths_of(crd, version).ok_or("the server could not find the requested resource")?;
    let namespaced = crd.spec().and_then(|s| s.get("scope")).and_then(serde_json::Value::as_str) == Some("Namespaced");
    let key = ObjectKey::custom(&crd.metadata.name, if namespaced { &hpa.metadata.namespace } else { "" }, &r.name);
    let object =
        caches.get(Kind::CustomObject).and_then(|s| s.get(&key)).ok_or_else(|| format!("{} {:?} not found", crd.metadata.name, r.name))?;
    let Some(o) = object.as_custom_object() else { return Err("the server could not find the requested resource".into()) };
    let (replicas, _, selector) = crd::scale_of(o, &paths);
    let selector = crate::command::selector::parse_label_selector(&selector).map_err(|e| e.trim_start_matches("error: ").to_string())?;
    Ok(Scale { replicas: replicas as i32, selector, object: (**object).clone(), paths: Some(paths) })
}

fn scale_of(caches: &Caches, hpa: &HorizontalPodAutoscaler) -> Result<Scale, String> {
    let r = &hpa.spec.scale_target_ref;
    let ns = &hpa.metadata.namespace;
    let kind = match r.kind.as_str() {
        "Deployment" => Kind::Deployment,
        "ReplicaSet" => Kind::ReplicaSet,
        "ReplicationController" => Kind::ReplicationController,
        _ => return custom_scale_of(caches, hpa),
    };
    let object = caches[kind]
        .get(&ObjectKey::new(kind, ns, &r.name))
        .ok_or_else(|| format!("{} {:?} not found", kind.qualified_plural(), r.name))?;
    let (replicas, selector) = match &**object {
        Object::Deployment(d) => (d.spec.replicas.unwrap_or(1), d.spec.selector.clone()),
        Object::ReplicaSet(rs) => (rs.spec.replicas.unwrap_or(1), rs.spec.selector.clone()),
        Object::ReplicationController(rc) => (rc.spec.replicas.unwrap_or(1), rc.as_replica_set().spec.selector),
        _ => unreachable!("looked up by one of the three kinds"),
    };
    Ok(Scale { replicas, selector, object: (**object).clone(), paths: None })
}

/// The target with `replicas` written to its spec (the scale subresource's update).
fn rescaled(scale: &Scale, replicas: i32) -> Object {
    let mut next = scale.object.clone();
    match &mut next {
        Object::CustomObject(o) => {
            if let Some(paths) = &scale.paths {
                *o = crate::api::crd::rescaled(o, paths, i64::from(replicas));
            }
        }
        Object::Deployment(d) => d.spec.replicas = Some(replicas),
        Object::ReplicaSet(rs) => rs.spec.replicas = Some(replicas),
        Object::ReplicationController(rc) => rc.spec.replicas = Some(replicas),
        _ => {}
    }
    next
}

impl HorizontalController {
    /// `reconcileAutoscaler` once the metrics are in: the writes of this sync.
    fn decide(&mut self, key: &ObjectKey, hpa: &HorizontalPodAutoscaler, caches: &Caches, now: Time) -> Sync {
        let mut next = hpa.clone();
        let involved = reference_to(&Object::HorizontalPodAutoscaler(hpa.clone()));
        let metrics = self.memory.get_mut(key).and_then(|m| m.metrics.take()).unwrap_or_else(|| Ok(Vec::new()));
        let scale = match scale_of(caches, hpa) {
            Ok(scale) => scale,
            Err(e) => {
                self.events.push(EventSpec::warning(involved, "FailedGetScale", e.clone()));
                let message = format!("the HPA controller was unable to get the target's current scale: {e}");
                next.set_condition("AbleToScale", "False", "FailedGetScale", message, now);
                return status_only(hpa, next, format!("HorizontalPodAutoscaler {}: {e}", hpa.metadata.name));
            }
        };
        next.set_condition(
            "AbleToScale",
            "True",
            "SucceededGetScale",
            "the HPA controller was able to get the target's current scale".into(),
            now,
        );
        let current = scale.replicas;
        let min = hpa.spec.min_replicas.unwrap_or(1);
        let mut desired;
        let mut reason = String::new();
        if current == 0 && min != 0 {
            let message = "scaling is disabled since the replica count of the target is zero".to_string();
            next.set_condition("ScalingActive", "False", "ScalingDisabled", message, now);
            desired = current;
        } else if current > hpa.spec.max_replicas {
            reason = "Current number of replicas above Spec.MaxReplicas".into();
            desired = hpa.spec.max_replicas;
        } else if current < min {
            reason = "Current number of replicas below Spec.MinReplicas".into();
            desired = min;
        } else {
            let proposal = match self.compute(hpa, &scale, metrics, caches, now) {
                Ok(p) => p,
                Err(e) => return self.failed_metrics(hpa, next, involved, current, e, now),
            };
            next.status.current_metrics = vec![cpu_status(proposal)];
            next.set_condition(
                "ScalingActive",
                "True",
                "ValidMetricFound",
                format!("the HPA was able to successfully calculate a replica count from {CPU_METRIC}"),
                now,
            );
            desired = proposal.replicas;
            if desired > current {
                reason = format!("{CPU_METRIC} above target");
            } else if desired < current {
                reason = "All metrics below target".into();
            }
            desired = self.normalize(key, hpa, &mut next, desired, Bounds { current, min, max: hpa.spec.max_replicas }, now);
        }
        self.act(key, hpa, next, (scale, current, desired, reason), involved, now)
    }

    /// The metric's proposal, or the error in upstream's words.
    fn compute(
        &self,
        hpa: &HorizontalPodAutoscaler,
        scale: &Scale,
        metrics: Result<Vec<PodMetric>, String>,
        caches: &Caches,
        now: Time,
    ) -> Result<replicas::Proposal, String> {
        let metrics = metrics
            .map_err(|e| format!("unable to get metrics for resource cpu: unable to fetch metrics from resource metrics API: {e}"))?;
        let Some(target) = hpa.cpu_target() else {
            let what = hpa.spec.metrics.first().map_or("", |m| m.type_.as_str());
            return Err(format!("kubeloop simulates CPU utilization only; cannot compute a {what} metric"));
        };
        let pods: Vec<&Pod> = caches[Kind::Pod]
            .in_namespace(&hpa.metadata.namespace)
            .filter_map(|o| o.as_pod())
            .filter(|p| scale.selector.matches(&p.metadata.labels))
            .collect();
        replicas::resource_replicas(scale.replicas, target, &pods, &metrics, now).map_err(|e| format!("failed to get cpu utilization: {e}"))
    }

    /// A sync whose metric could not be computed: both of upstream's warnings, ScalingActive
    /// False, the status written and nothing scaled.
    fn failed_metrics(
        &mut self,
        hpa: &HorizontalPodAutoscaler,
        mut next: HorizontalPodAutoscaler,
        involved: ObjectReference,
        current: i32,
        e: String,
        now: Time,
    ) -> Sync {
        self.events.push(EventSpec::warning(involved.clone(), "FailedGetResourceMetric", e.clone()));
        let first = format!("invalid metrics (1 invalid out of 1), first error is: failed to get cpu resource metric value: {e}");
        self.events.push(EventSpec::warning(involved, "FailedComputeMetricsReplicas", first));
        next.set_condition(
            "ScalingActive",
            "False",
            "FailedGetResourceMetric",
            format!("the HPA was unable to compute the replica count: {e}"),
            now,
        );
        next.status.current_replicas = current;
        next.status.current_metrics.clear();
        status_only(hpa, next, format!("HorizontalPodAutoscaler {}: {e}", hpa.metadata.name))
    }

    fn normalize(
        &mut self,
        key: &ObjectKey,
        hpa: &HorizontalPodAutoscaler,
        next: &mut HorizontalPodAutoscaler,
        proposed: i32,
        b: Bounds,
        now: Time,
    ) -> i32 {
        let memory = self.memory.get_or_insert_with(key.clone(), Memory::default);
        let n = match &hpa.spec.behavior {
            None => normalize::legacy(&mut memory.recommendations, proposed, &b, now),
            Some(behavior) => {
                let h = History { recommendations: &mut memory.recommendations, ups: &memory.ups, downs: &memory.downs };
                normalize::with_behavior(h, behavior, proposed, &b, now)
            }
        };
        for (type_, status, reason, message) in [n.able_to_scale, n.scaling_limited] {
            next.set_condition(type_, status, reason, message, now);
        }
        n.replicas
    }

    /// The writes: the scale (when it changes) with `SuccessfulRescale`, then the status.
    fn act(
        &mut self,
        key: &ObjectKey,
        hpa: &HorizontalPodAutoscaler,
        mut next: HorizontalPodAutoscaler,
        (scale, current, desired, reason): (Scale, i32, i32, String),
        involved: ObjectReference,
        now: Time,
    ) -> Sync {
        let rescale = desired != current && !(current == 0 && hpa.spec.min_replicas.unwrap_or(1) != 0);
        next.status.current_replicas = current;
        next.status.desired_replicas = if rescale { desired } else { current };
        next.status.observed_generation = Some(hpa.metadata.generation);
        let name = &hpa.metadata.name;
        let mut steps = Vec::new();
        let summary = if rescale {
            next.status.last_scale_time = Some(now);
            next.set_condition(
                "AbleToScale",
                "True",
                "SucceededRescale",
                format!("the HPA controller was able to update the target scale to {desired}"),
                now,
            );
            let event = EventSpec::normal(involved.clone(), "SuccessfulRescale", format!("New size: {desired}; reason: {reason}"));
            let failed = EventSpec::warning(involved, "FailedRescale", format!("New size: {desired}; reason: {reason}; error: "));
            steps.push(vec![Call::new(ApiRequest::Update(rescaled(&scale, desired))).on_success(event).on_failure(failed)]);
            self.remember_scale(key, hpa.spec.behavior.is_some(), desired - current, now);
            format!("HorizontalPodAutoscaler {name}: {current} → {desired} ({reason})")
        } else {
            format!("HorizontalPodAutoscaler {name}: {current} replicas, no change")
        };
        if next.status != hpa.status {
            steps.push(vec![Call::new(ApiRequest::UpdateStatus(Object::HorizontalPodAutoscaler(next)))]);
        }
        if steps.is_empty() {
            return Sync { summary: Some(summary), ..Sync::nothing() };
        }
        Sync::with_steps(steps, summary)
    }

    /// `storeScaleEvent`: kept only where a behavior's rate policies will read it.
    fn remember_scale(&mut self, key: &ObjectKey, has_behavior: bool, change: i32, now: Time) {
        if !has_behavior {
            return;
        }
        let memory = self.memory.get_or_insert_with(key.clone(), Memory::default);
        // Events older than the longest policy period (30 min at most) no longer matter.
        let keep = |e: &ScaleEvent| now.since(e.at) <= Duration::mins(30);
        memory.ups.retain(keep);
        memory.downs.retain(keep);
        if change > 0 {
            memory.ups.push(ScaleEvent { change, at: now });
        } else {
            memory.downs.push(ScaleEvent { change: -change, at: now });
        }
    }
}

/// The status write of a sync that scaled nothing.
fn status_only(hpa: &HorizontalPodAutoscaler, next: HorizontalPodAutoscaler, summary: String) -> Sync {
    if next.status == hpa.status {
        return Sync { summary: Some(summary), ..Sync::nothing() };
    }
    Sync::with_steps(vec![vec![Call::new(ApiRequest::UpdateStatus(Object::HorizontalPodAutoscaler(next)))]], summary)
}

/// The measured CPU as `status.currentMetrics` reports it.
fn cpu_status(p: replicas::Proposal) -> MetricStatus {
    let current = MetricValueStatus { average_value: Some(format!("{}m", p.average_milli)), average_utilization: Some(p.utilization) };
    MetricStatus { type_: "Resource".into(), resource: Some(ResourceMetricStatus { name: "cpu".into(), current }) }
}

impl Controller for HorizontalController {
    fn name(&self) -> &'static str {
        "horizontal-pod-autoscaler-controller"
    }
    fn event_source(&self) -> &'static str {
        "horizontal-pod-autoscaler"
    }
    fn watches(&self) -> &'static [Kind] {
        // The targets and pods only to read: their changes enqueue nothing (the 15 s resync does).
        &[
            Kind::HorizontalPodAutoscaler,
            Kind::Deployment,
            Kind::ReplicaSet,
            Kind::ReplicationController,
            Kind::Pod,
            Kind::CustomResourceDefinition,
            Kind::CustomObject,
        ]
    }

    fn on_delta(&mut self, _caches: &Caches, delta: &Delta, _now: Time) -> Vec<ObjectKey> {
        match delta {
            Delta::Deleted(o) if o.kind() == Kind::HorizontalPodAutoscaler => {
                self.memory.remove(&o.key());
                Vec::new()
            }
            d if d.object().kind() == Kind::HorizontalPodAutoscaler => vec![d.object().key()],
            _ => Vec::new(),
        }
    }

    fn reconcile(&mut self, key: &ObjectKey, caches: &Caches, now: Time) -> Sync {
        let Some(hpa) = caches[Kind::HorizontalPodAutoscaler].get(key).and_then(|o| o.as_horizontal_pod_autoscaler()) else {
            self.memory.remove(key);
            return Sync::nothing();
        };
        let memory = self.memory.get_or_insert_with(key.clone(), Memory::default);
        if memory.metrics.is_some() {
            // The second pass: the metrics are in; decide, and come back in 15 s.
            memory.due = Some(now + SYNC_PERIOD);
            return self.decide(key, hpa, caches, now).then(Action::RequeueAfter(SYNC_PERIOD));
        }
        match memory.due {
            // Every enqueue waits out the period (upstream adds with the resync as its delay).
            None => {
                memory.due = Some(now + SYNC_PERIOD);
                Sync::nothing().then(Action::RequeueAfter(SYNC_PERIOD))
            }
            Some(due) if now < due => Sync::nothing().then(Action::RequeueAfter(due.since(now))),
            Some(_) => {
                let (namespace, selector) = match scale_of(caches, hpa) {
                    Ok(scale) => (hpa.metadata.namespace.to_string(), scale.selector),
                    // No target: decide at once (it reports FailedGetScale).
                    Err(_) => {
                        memory.metrics = Some(Ok(Vec::new()));
                        return Sync::nothing().then(Action::RequeueAfter(Duration::ZERO));
                    }
                };
                let call = Call::new(ApiRequest::PodMetrics { namespace, selector });
                Sync::with_steps(vec![vec![call]], format!("HorizontalPodAutoscaler {}: reading metrics", hpa.metadata.name))
                    .then(Action::RequeueAfter(Duration::ZERO))
            }
        }
    }

    fn on_outcome(&mut self, key: &ObjectKey, call: &Call, outcome: &Outcome) {
        if !matches!(call.request, ApiRequest::PodMetrics { .. }) {
            return;
        }
        let answer = match outcome {
            Outcome::Metrics(m) => Ok(m.clone()),
            Outcome::Failed(e) => Err(e.message.clone()),
            _ => return,
        };
        self.memory.get_or_insert_with(key.clone(), Memory::default).metrics = Some(answer);
    }

    fn take_events(&mut self) -> Vec<EventSpec> {
        std::mem::take(&mut self.events)
    }

    fn reset(&mut self) {
        *self = Self::new();
    }
}
