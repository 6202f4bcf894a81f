//! The disruption controller (pkg/controller/disruption): keeps each PodDisruptionBudget's
//! status true to the pods it selects, so the eviction API can spend it.
//!
//! Observe: the budget and the pods its selector picks. Compare: how many of them are healthy
//! (Ready, not terminating, not already granted an eviction) against how many the budget needs —
//! `minAvailable` as written, or a share of the pods' controllers' desired scale for a percentage
//! or `maxUnavailable`. Act: write `currentHealthy`, `desiredHealthy`, `expectedPods`,
//! `disruptionsAllowed` and the `DisruptionAllowed` condition. Evictions the API granted
//! (`disruptedPods`) stay uncounted until their pod goes, or for two minutes at most.

use super::{Action, Caches, Call, Controller, Sync};
use crate::api::ApiRequest;
use crate::model::*;
use crate::runtime::events::{reference_to, EventSpec};
use crate::runtime::informer::Delta;

/// `DeletionTimeout`: how long a granted eviction may wait for its pod to go before the
/// controller stops holding it out of the healthy count.
pub const DELETION_TIMEOUT: Duration = Duration::mins(2);

#[derive(Debug, Default)]
pub struct DisruptionController {
    events: Vec<EventSpec>,
}

impl DisruptionController {
    pub fn new() -> Self {
        Self::default()
    }
}

/// The budgets whose selector picks `pod` (`GetPodPodDisruptionBudgets`: an empty selector picks
/// every pod of its namespace, an absent one none, and a pod without labels has no budget).
fn budgets_for_pod(caches: &Caches, pod: &Object) -> Vec<ObjectKey> {
    let meta = pod.meta();
    if meta.labels.is_empty() {
        return Vec::new();
    }
    let budgets = caches[Kind::PodDisruptionBudget].in_namespace(&meta.namespace).filter_map(|o| o.as_pod_disruption_budget());
    // Upstream enqueues the first match only ("Chose ... arbitrarily").
    budgets.filter(|pdb| selects(pdb, &meta.labels)).take(1).map(|pdb| ObjectKey::of(Kind::PodDisruptionBudget, &pdb.metadata)).collect()
}

fn selects(pdb: &PodDisruptionBudget, labels: &StringMap) -> bool {
    pdb.spec.selector.as_ref().is_some_and(|s| s.matches(labels))
}

/// `getPodsForPdb`: the pods of the budget's namespace its selector picks.
fn pods_for_budget<'a>(caches: &'a Caches<'a>, pdb: &'a PodDisruptionBudget) -> Vec<&'a Pod> {
    let pods = caches[Kind::Pod].in_namespace(&pdb.metadata.namespace).filter_map(|o| o.as_pod());
    pods.filter(|p| selects(pdb, &p.metadata.labels)).collect()
}

/// What `getExpectedPodCount` found: the pods expected, how many must stay healthy, and the
/// pods no controller owns (which a percentage cannot account for).
struct Expected {
    count: i32,
    desired_healthy: i32,
    unmanaged: Vec<String>,
}

fn expected_pod_count(caches: &Caches, pdb: &PodDisruptionBudget, pods: &[&Pod]) -> Result<Expected, String> {
    if let Some(max_unavailable) = &pdb.spec.max_unavailable {
        let (count, unmanaged) = expected_scale(caches, pods)?;
        let max_unavailable = max_unavailable.scaled_value(count as i64, true)? as i32;
        return Ok(Expected { count, desired_healthy: (count - max_unavailable).max(0), unmanaged });
    }
    match &pdb.spec.min_available {
        Some(IntOrString::Int(n)) => Ok(Expected { count: pods.len() as i32, desired_healthy: *n as i32, unmanaged: Vec::new() }),
        Some(percent) => {
            let (count, unmanaged) = expected_scale(caches, pods)?;
            Ok(Expected { count, desired_healthy: percent.scaled_value(count as i64, true)? as i32, unmanaged })
        }
        None => Ok(Expected { count: 0, desired_healthy: 0, unmanaged: Vec::new() }),
    }
}

/// `getExpectedScale`: the sum of the desired scale of every controller owning one of `pods`
/// (each counted once), and the names of pods that have no controller.
fn expected_scale(caches: &Caches, pods: &[&Pod]) -> Result<(i32, Vec<String>), String> {
    let mut scales: Vec<(&str, i32)> = Vec::new();
    let mut unmanaged = Vec::new();
    for pod in pods {
        let Some(owner) = pod.metadata.controller_ref() else {
            unmanaged.push(pod.metadata.name.to_string());
            continue;
        };
        let found = controller_scale(caches, &pod.metadata.namespace, owner)
            .ok_or_else(|| format!("found no controllers for pod {:?}", pod.metadata.name.as_str()))?;
        // Keyed by the controller found (a Deployment for all its ReplicaSets' pods), so each
        // counts once.
        if !scales.iter().any(|(uid, _)| *uid == found.0) {
            scales.push(found);
        }
    }
    Ok((scales.iter().map(|(_, n)| n).sum(), unmanaged))
}

/// The finders: a ReplicaSet's scale, or its Deployment's when one controls it.
fn controller_scale<'a>(caches: &'a Caches<'a>, namespace: &str, owner: &OwnerReference) -> Option<(&'a str, i32)> {
    if owner.kind != "ReplicaSet" {
        return None;
    }
    let rs = caches[Kind::ReplicaSet].get(&ObjectKey::new(Kind::ReplicaSet, namespace, &owner.name))?.as_replica_set()?;
    if rs.metadata.uid != owner.uid {
        return None;
    }
    match rs.metadata.controller_ref().filter(|r| r.kind == "Deployment") {
        None => Some((rs.metadata.uid.as_str(), rs.spec.replicas.unwrap_or(1))),
        Some(d) => {
            let deployment = caches[Kind::Deployment].get(&ObjectKey::new(Kind::Deployment, namespace, &d.name))?.as_deployment()?;
            (deployment.metadata.uid == d.uid).then(|| (deployment.metadata.uid.as_str(), deployment.spec.replicas.unwrap_or(1)))
        }
    }
}

/// `countHealthyPods`: Ready pods that are not going and were not just granted an eviction.
fn count_healthy(pods: &[&Pod], disrupted: &std::collections::BTreeMap<String, Time>, now: Time) -> i32 {
    let granted = |p: &Pod| disrupted.get(p.metadata.name.as_str()).is_some_and(|t| *t + DELETION_TIMEOUT > now);
    pods.iter().filter(|p| !p.metadata.is_deleting() && !granted(p) && p.is_ready()).count() as i32
}

impl DisruptionController {
    /// `buildDisruptedPodMap`: the granted evictions still waiting for their pod, when to look
    /// again, and a `NotDeleted` warning for each that waited too long.
    fn disrupted_pods(
        &mut self,
        pdb: &PodDisruptionBudget,
        pods: &[&Pod],
        now: Time,
    ) -> (std::collections::BTreeMap<String, Time>, Option<Time>) {
        let mut kept = std::collections::BTreeMap::new();
        let mut recheck: Option<Time> = None;
        for pod in pods.iter().filter(|p| !p.metadata.is_deleting()) {
            let Some(granted) = pdb.status.disrupted_pods.get(pod.metadata.name.as_str()) else { continue };
            let expected_deletion = *granted + DELETION_TIMEOUT;
            if expected_deletion < now {
                // Upstream's message names the budget's namespace twice.
                let ns = &pdb.metadata.namespace;
                let message = format!("Pod was expected by PDB {ns}/{ns} to be deleted but it wasn't");
                self.events.push(EventSpec::warning(reference_to(&Object::Pod((*pod).clone())), "NotDeleted", message));
            } else {
                recheck = Some(recheck.map_or(expected_deletion, |r| r.min(expected_deletion)));
                kept.insert(pod.metadata.name.to_string(), *granted);
            }
        }
        (kept, recheck)
    }

    /// `trySync`, and `failSafe` when the budget cannot be computed.
    fn sync_budget(&mut self, pdb: &PodDisruptionBudget, caches: &Caches, now: Time) -> Sync {
        let pods = pods_for_budget(caches, pdb);
        let involved = reference_to(&Object::PodDisruptionBudget(pdb.clone()));
        if pods.is_empty() {
            self.events.push(EventSpec::normal(involved.clone(), "NoPods", "No matching pods found"));
        }
        let expected = match expected_pod_count(caches, pdb, &pods) {
            Ok(expected) => expected,
            Err(error) => {
                let message = format!("Failed to calculate the number of expected pods: {error}");
                self.events.push(EventSpec::warning(involved, "CalculateExpectedPodCountFailed", message));
                return fail_safe(pdb, &error, now);
            }
        };
        if !expected.unmanaged.is_empty() {
            self.events.push(EventSpec::warning(involved, "UnmanagedPods", unmanaged_message(pdb)));
        }
        let (disrupted, recheck) = self.disrupted_pods(pdb, &pods, now);
        let healthy = count_healthy(&pods, &disrupted, now);
        let summary = format!("PodDisruptionBudget {}: {healthy} healthy, {} needed", pdb.metadata.name, expected.desired_healthy);
        let sync = match updated_status(pdb, healthy, &expected, disrupted, now) {
            Some(next) => {
                let allowed = next.status.disruptions_allowed;
                let call = Call::new(ApiRequest::UpdateStatus(Object::PodDisruptionBudget(next)));
                Sync::with_steps(vec![vec![call]], format!("{summary}, allowing {allowed}"))
            }
            None => Sync { summary: Some(summary), ..Sync::nothing() },
        };
        match recheck {
            Some(at) => sync.then(Action::RequeueAfter(at.since(now))),
            None => sync,
        }
    }
}

/// The `UnmanagedPods` warning, in upstream's words.
fn unmanaged_message(pdb: &PodDisruptionBudget) -> String {
    let selector = pdb.spec.selector.as_ref().map(LabelSelector::to_query).unwrap_or_default();
    format!(
        "Pods selected by this PodDisruptionBudget (selector: {selector}) were found to be unmanaged. As a result, the status of the PDB cannot be calculated correctly, which may result in undefined behavior. To account for these pods please set \".spec.minAvailable\" field of the PDB to an integer value."
    )
}

/// `updatePdbStatus`: the budget with its new status, or `None` when nothing would change.
fn updated_status(
    pdb: &PodDisruptionBudget,
    healthy: i32,
    expected: &Expected,
    disrupted: std::collections::BTreeMap<String, Time>,
    now: Time,
) -> Option<PodDisruptionBudget> {
    // A budget that expects no pods allows nothing: its first pods may appear before the
    // controller has looked at them.
    let allowed = if expected.count <= 0 { 0 } else { (healthy - expected.desired_healthy).max(0) };
    let status = &pdb.status;
    let unchanged = status.current_healthy == healthy
        && status.desired_healthy == expected.desired_healthy
        && status.expected_pods == expected.count
        && status.disruptions_allowed == allowed
        && status.disrupted_pods == disrupted
        && status.observed_generation == pdb.metadata.generation
        && conditions_up_to_date(pdb);
    if unchanged {
        return None;
    }
    let mut next = pdb.clone();
    next.status = PodDisruptionBudgetStatus {
        observed_generation: pdb.metadata.generation,
        disrupted_pods: disrupted,
        disruptions_allowed: allowed,
        current_healthy: healthy,
        desired_healthy: expected.desired_healthy,
        expected_pods: expected.count,
        conditions: pdb.status.conditions.clone(),
    };
    next.update_disruption_allowed_condition(now);
    Some(next)
}

/// `pdbhelper.ConditionsAreUpToDate`.
fn conditions_up_to_date(pdb: &PodDisruptionBudget) -> bool {
    let Some(c) = pdb.condition(DISRUPTION_ALLOWED) else { return false };
    if pdb.status.observed_generation != pdb.metadata.generation {
        return false;
    }
    if pdb.status.disruptions_allowed > 0 {
        c.status == "True" && c.reason == SUFFICIENT_PODS
    } else {
        c.status == "False" && c.reason == INSUFFICIENT_PODS
    }
}

/// `failSafe`: no disruption allowed, and the condition says why.
fn fail_safe(pdb: &PodDisruptionBudget, error: &str, now: Time) -> Sync {
    let mut next = pdb.clone();
    next.status.disruptions_allowed = 0;
    let generation = next.status.observed_generation;
    next.set_condition(Condition {
        type_: DISRUPTION_ALLOWED.into(),
        status: "False".into(),
        observed_generation: generation,
        last_transition_time: Some(now),
        reason: SYNC_FAILED.into(),
        message: error.to_string(),
    });
    let summary = format!("PodDisruptionBudget {}: {error}", pdb.metadata.name);
    if next == *pdb {
        return Sync { summary: Some(summary), ..Sync::nothing() };
    }
    Sync::with_steps(vec![vec![Call::new(ApiRequest::UpdateStatus(Object::PodDisruptionBudget(next)))]], summary)
}

impl Controller for DisruptionController {
    fn name(&self) -> &'static str {
        "disruption-controller"
    }
    /// Its recorder is kube-controller-manager's generic one.
    fn event_source(&self) -> &'static str {
        "controllermanager"
    }
    fn watches(&self) -> &'static [Kind] {
        // ReplicaSets and Deployments only for their scale; their changes enqueue nothing.
        &[Kind::Pod, Kind::PodDisruptionBudget, Kind::ReplicaSet, Kind::Deployment]
    }

    fn on_delta(&mut self, caches: &Caches, delta: &Delta, _now: Time) -> Vec<ObjectKey> {
        let object = delta.object();
        match object.kind() {
            Kind::PodDisruptionBudget => vec![object.key()],
            Kind::Pod => budgets_for_pod(caches, object),
            _ => Vec::new(),
        }
    }

    fn reconcile(&mut self, key: &ObjectKey, caches: &Caches, now: Time) -> Sync {
        match caches[Kind::PodDisruptionBudget].get(key).and_then(|o| o.as_pod_disruption_budget()) {
            Some(pdb) => self.sync_budget(pdb, caches, now),
            None => Sync::nothing(),
        }
    }

    fn take_events(&mut self) -> Vec<EventSpec> {
        std::mem::take(&mut self.events)
    }

    fn reset(&mut self) {
        *self = Self::new();
    }

    fn workers(&self) -> usize {
        1
    }
}
