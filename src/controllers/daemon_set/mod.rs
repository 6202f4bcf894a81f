//! The DaemonSet controller (pkg/controller/daemon, `daemonset-controller`): one pod of a
//! template on every node that may run it.
//!
//! A sync maps the DaemonSet's pods to their nodes, then (`manage`) creates a pod for each
//! eligible node without one and deletes the pods of nodes that may no longer run them, the
//! failed ones (with a per-node back-off, as upstream fights a kubelet that keeps rejecting a
//! pod) and the extras on a node. Only when nothing of that is pending does it replace
//! out-of-date pods (`update`: RollingUpdate within maxUnavailable or maxSurge; OnDelete leaves
//! that to whoever deletes them). Pods of a node that was deleted are left to the pod garbage
//! collector, as upstream does. The status counts what it found, before its own writes land.
//!
//! Each template is kept as a ControllerRevision (`history.rs`), whose hash new pods carry as
//! `controller-revision-hash`: the rollout history `kubectl rollout undo daemonset` returns to.

mod history;
mod update;
pub mod util;

use super::replica_set::slow_start_batches;
use super::{Action, Caches, Call, Controller, Outcome, Sync};
use crate::api::{ApiRequest, DeleteRequest};
use crate::model::*;
use crate::runtime::events::{reference_to, EventSpec};
use crate::runtime::expectations::Expectations;
use crate::runtime::fasthash::FastMap;
use crate::runtime::informer::Delta;
use std::collections::BTreeMap;
use util::*;

/// `BurstReplicas` of the DaemonSet controller: the most creates or deletes one sync issues.
pub const BURST_REPLICAS: usize = 250;
/// The failed-pod back-off per node: 1 s, doubling to 15 minutes.
const FAILED_POD_BACKOFF_INITIAL: Duration = Duration::secs(1);
const FAILED_POD_BACKOFF_MAX: Duration = Duration::mins(15);

/// Each DaemonSet's pods, by the node they are on or pinned to (`getNodesToDaemonPods`).
type NodeToPods<'a> = BTreeMap<&'a str, Vec<&'a Pod>>;

#[derive(Debug, Default)]
pub struct DaemonSetController {
    expectations: Expectations,
    /// `failedPodsBackoff`: per DaemonSet and node, the current delay and when it was set.
    failed_pods_backoff: FastMap<(ObjectKey, String), (Duration, Time)>,
    events: Vec<EventSpec>,
}

/// What one sync decided for the pods: which nodes get a new pod, which pods go.
#[derive(Debug, Default, PartialEq)]
struct Plan {
    nodes_needing_pods: Vec<String>,
    pods_to_delete: Vec<ObjectKey>,
    /// The earliest a failed pod's back-off lets it be deleted.
    requeue_after: Option<Duration>,
}

impl DaemonSetController {
    pub fn new() -> Self {
        Self::default()
    }

    /// The DaemonSet that controls `pod`, if it is in the cache with the referenced UID.
    fn controlling_ds(caches: &Caches, pod: &Object) -> Option<ObjectKey> {
        let owner = pod.meta().controller_ref().filter(|r| r.kind == "DaemonSet")?;
        let key = ObjectKey::new(Kind::DaemonSet, &pod.meta().namespace, &owner.name);
        caches[Kind::DaemonSet].get(&key).filter(|ds| ds.meta().uid == owner.uid).map(|_| key)
    }

    /// DaemonSets whose selector matches an orphan pod (`getDaemonSetsForPod`).
    fn matching_daemon_sets(caches: &Caches, pod: &Object) -> Vec<ObjectKey> {
        caches[Kind::DaemonSet]
            .in_namespace(&pod.meta().namespace)
            .filter_map(|o| o.as_daemon_set())
            .filter(|ds| !ds.spec.selector.is_empty() && ds.spec.selector.matches(&pod.meta().labels))
            .map(|ds| ObjectKey::of(Kind::DaemonSet, &ds.metadata))
            .collect()
    }

    fn pod_keys(&mut self, caches: &Caches, pod: &Object, deleted: bool) -> Vec<ObjectKey> {
        match Self::controlling_ds(caches, pod) {
            Some(ds) => {
                if deleted || pod.meta().is_deleting() {
                    self.expectations.deletion_observed(&ds, &pod.key());
                }
                vec![ds]
            }
            None if pod.meta().controller_ref().is_none() && !deleted => Self::matching_daemon_sets(caches, pod),
            None => Vec::new(),
        }
    }

    /// `addNode` / `updateNode`: the DaemonSets whose answer for this node changed. A node's
    /// status heartbeats change neither its labels nor its taints and are ignored at once.
    fn node_keys(caches: &Caches, old: Option<&Node>, new: &Node) -> Vec<ObjectKey> {
        if old.is_some_and(|o| o.metadata.labels == new.metadata.labels && o.spec.taints == new.spec.taints) {
            return Vec::new();
        }
        caches[Kind::DaemonSet]
            .iter()
            .filter_map(|o| o.as_daemon_set())
            .filter(|ds| {
                let tolerations = spec_with_daemon_tolerations(&ds.spec.template.spec).tolerations;
                let now = node_should_run(new, ds, &tolerations);
                match old {
                    None => now.0,
                    Some(old) => node_should_run(old, ds, &tolerations) != now,
                }
            })
            .map(|ds| ObjectKey::of(Kind::DaemonSet, &ds.metadata))
            .collect()
    }
}

impl Controller for DaemonSetController {
    fn name(&self) -> &'static str {
        "daemonset-controller"
    }
    fn watches(&self) -> &'static [Kind] {
        &[Kind::DaemonSet, Kind::Pod, Kind::Node, Kind::ControllerRevision]
    }
    fn workers(&self) -> usize {
        2
    }

    fn on_delta(&mut self, caches: &Caches, delta: &Delta, _now: Time) -> Vec<ObjectKey> {
        let object = delta.object();
        match (object.kind(), delta) {
            (Kind::DaemonSet, Delta::Deleted(o)) => {
                self.expectations.forget(&o.key());
                vec![o.key()]
            }
            (Kind::DaemonSet, _) => vec![object.key()],
            (Kind::Pod, Delta::Added(pod)) => {
                let keys = self.pod_keys(caches, pod, false);
                if !pod.meta().is_deleting() {
                    if let Some(ds) = Self::controlling_ds(caches, pod) {
                        self.expectations.creation_observed(&ds);
                    }
                }
                keys
            }
            (Kind::Pod, Delta::Updated { old, new }) => {
                let mut keys = self.pod_keys(caches, new, false);
                if old.meta().controller_ref() != new.meta().controller_ref() || old.meta().labels != new.meta().labels {
                    keys.extend(Self::controlling_ds(caches, old));
                }
                keys.sort();
                keys.dedup();
                keys
            }
            (Kind::Pod, Delta::Deleted(pod)) => self.pod_keys(caches, pod, true),
            (Kind::Node, Delta::Added(node)) => node.as_node().map(|n| Self::node_keys(caches, None, n)).unwrap_or_default(),
            (Kind::Node, Delta::Updated { old, new }) => match (old.as_node(), new.as_node()) {
                (Some(old), Some(new)) => Self::node_keys(caches, Some(old), new),
                _ => Vec::new(),
            },
            // `addHistory` / `updateHistory` / `deleteHistory`: a revision changed under its
            // DaemonSet (made, renumbered, deleted by hand) — look again. Orphan revisions are not
            // adopted here, so they wake no one.
            (Kind::ControllerRevision, Delta::Updated { old, new }) => {
                let mut keys: Vec<ObjectKey> = Self::controlling_ds(caches, new).into_iter().collect();
                keys.extend(Self::controlling_ds(caches, old));
                keys.dedup();
                keys
            }
            (Kind::ControllerRevision, _) => Self::controlling_ds(caches, object).into_iter().collect(),
            // A deleted node's pods are the pod garbage collector's; their deletion brings the
            // DaemonSet back here.
            _ => Vec::new(),
        }
    }

    fn reconcile(&mut self, key: &ObjectKey, caches: &Caches, now: Time) -> Sync {
        let Some(ds) = caches[Kind::DaemonSet].get(key).and_then(|o| o.as_daemon_set()) else {
            self.expectations.forget(key);
            return Sync::nothing();
        };
        if ds.metadata.is_deleting() {
            return Sync::nothing();
        }
        let history = history::construct(caches, ds);
        let hash = history.hash.clone();
        let tolerations = spec_with_daemon_tolerations(&ds.spec.template.spec).tolerations;
        let nodes: Vec<&Node> = caches[Kind::Node].iter().filter_map(|o| o.as_node()).collect();
        let (claimed, adoptions) = claim_pods(caches, ds);
        let by_node = nodes_to_daemon_pods(&claimed);
        let mut steps = vec![history.writes, adoptions];
        let mut then = Action::AwaitChange;
        let satisfied = self.expectations.satisfied(key, now);
        let words;
        if satisfied {
            let mut plan = self.manage(key, ds, &nodes, &by_node, &tolerations, &hash, now);
            if plan.nodes_needing_pods.is_empty() && plan.pods_to_delete.is_empty() && !ds.on_delete() {
                let rolling = update::rolling_update(ds, &nodes, &by_node, &tolerations, &hash, now);
                plan.nodes_needing_pods = rolling.nodes_needing_pods;
                plan.pods_to_delete = rolling.pods_to_delete;
            }
            if let Some(delay) = plan.requeue_after {
                then = Action::RequeueAfter(delay);
            }
            words = self.sync_nodes(key, ds, &plan, &hash, now, &mut steps);
            steps.push(history::cleanup(ds, &claimed, &history.old));
        } else {
            let (adds, dels) = self.expectations.pending(key);
            words = Some(format!("waiting to observe {adds} creations and {dels} deletions"));
        }
        let status = calculate_status(ds, &nodes, &by_node, &tolerations, &hash, satisfied, now);
        if ds.spec.min_ready_seconds > 0 && status.number_ready != status.number_available && then == Action::AwaitChange {
            then = Action::RequeueAfter(Duration::secs(ds.spec.min_ready_seconds as u64));
        }
        let mut summary =
            format!("DaemonSet {}: {} of {} nodes", ds.metadata.name, status.current_number_scheduled, status.desired_number_scheduled);
        if let Some(w) = words {
            summary = format!("{summary}, {w}");
        }
        if status != ds.status {
            let mut next = ds.clone();
            next.status = status;
            steps.push(vec![Call::new(ApiRequest::UpdateStatus(Object::DaemonSet(next)))]);
        }
        Sync::with_steps(steps, summary).then(then)
    }

    fn on_outcome(&mut self, key: &ObjectKey, call: &Call, outcome: &Outcome) {
        super::forget_failed_call(&mut self.expectations, key, call, outcome);
    }

    fn reset(&mut self) {
        self.expectations.clear();
        self.failed_pods_backoff.clear();
        self.events.clear();
    }

    fn take_events(&mut self) -> Vec<EventSpec> {
        std::mem::take(&mut self.events)
    }
}

impl DaemonSetController {
    /// `manage` with `podsShouldBeOnNode` for each node: the nodes that need a pod and the pods
    /// that must go, plus unscheduled pods pinned to nodes that no longer exist.
    #[allow(clippy::too_many_arguments)]
    fn manage(
        &mut self,
        key: &ObjectKey,
        ds: &DaemonSet,
        nodes: &[&Node],
        by_node: &NodeToPods,
        tolerations: &[Toleration],
        hash: &str,
        now: Time,
    ) -> Plan {
        let mut plan = Plan::default();
        let surge = update::allows_surge(ds);
        for node in nodes {
            let name = node.metadata.name.as_str();
            let (should_run, should_continue) = node_should_run(node, ds, tolerations);
            let pods = by_node.get(name);
            match pods {
                None if should_run => plan.nodes_needing_pods.push(name.to_string()),
                Some(pods) if should_continue => self.keep_one(key, ds, name, pods, surge, hash, now, &mut plan),
                Some(pods) if !should_continue => {
                    plan.pods_to_delete
                        .extend(pods.iter().filter(|p| !p.metadata.is_deleting()).map(|p| ObjectKey::of(Kind::Pod, &p.metadata)));
                }
                _ => {}
            }
        }
        // `getUnscheduledPodsWithoutNode`: never bound, pinned to a node that is gone, so the
        // pod garbage collector (which only looks at bound pods) would never remove them.
        for (node, pods) in by_node {
            if nodes.iter().any(|n| n.metadata.name.as_str() == *node) {
                continue;
            }
            let unbound = pods.iter().filter(|p| p.spec.node_name.as_deref().is_none_or(str::is_empty) && !p.metadata.is_deleting());
            plan.pods_to_delete.extend(unbound.map(|p| ObjectKey::of(Kind::Pod, &p.metadata)));
        }
        plan
    }

    /// The `shouldContinueRunning` branch: failed pods go (once the node's back-off allows),
    /// and of the running ones only the oldest stays — or, while surging, the oldest of the
    /// current revision and the oldest of an older one.
    #[allow(clippy::too_many_arguments)]
    fn keep_one(
        &mut self,
        key: &ObjectKey,
        ds: &DaemonSet,
        node: &str,
        pods: &[&Pod],
        surge: bool,
        hash: &str,
        now: Time,
        plan: &mut Plan,
    ) {
        let mut running: Vec<&Pod> = Vec::new();
        for pod in pods.iter().copied().filter(|p| !p.metadata.is_deleting()) {
            if pod.phase() != PodPhase::Failed {
                running.push(pod);
                continue;
            }
            let backoff_key = (key.clone(), node.to_string());
            if let Some(delay) = self.in_backoff(&backoff_key, now) {
                plan.requeue_after = Some(plan.requeue_after.map_or(delay, |d| d.min(delay)));
                continue;
            }
            self.next_backoff(backoff_key, now);
            let message =
                format!("Found failed daemon pod {}/{} on node {node}, will try to kill it", pod.metadata.namespace, pod.metadata.name);
            self.events.push(EventSpec::warning(reference_to(&Object::DaemonSet(ds.clone())), "FailedDaemonPod", message));
            plan.pods_to_delete.push(ObjectKey::of(Kind::Pod, &pod.metadata));
        }
        if running.len() <= 1 {
            return;
        }
        crate::sort::sort_by(&mut running, oldest_first);
        if !surge {
            plan.pods_to_delete.extend(running[1..].iter().map(|p| ObjectKey::of(Kind::Pod, &p.metadata)));
            return;
        }
        let generation = template_generation(ds);
        let (mut kept_new, mut kept_old) = (false, false);
        for pod in running {
            let kept = if is_pod_updated(pod, hash, generation) { &mut kept_new } else { &mut kept_old };
            if !*kept {
                *kept = true;
                continue;
            }
            plan.pods_to_delete.push(ObjectKey::of(Kind::Pod, &pod.metadata));
        }
    }

    /// `IsInBackOffSinceUpdate`: the node's delay, if it has not passed since it was set.
    fn in_backoff(&self, key: &(ObjectKey, String), now: Time) -> Option<Duration> {
        let (delay, at) = self.failed_pods_backoff.get(key)?;
        (now.since(*at) < *delay).then_some(*delay)
    }

    /// `Backoff.Next`: start at 1 s, or double (up to 15 minutes) unless the last failure is
    /// older than twice the maximum.
    fn next_backoff(&mut self, key: (ObjectKey, String), now: Time) {
        let entry = self.failed_pods_backoff.entry(key).or_insert((Duration::ZERO, now));
        let expired = now.since(entry.1).as_millis() > 2 * FAILED_POD_BACKOFF_MAX.as_millis();
        entry.0 = if entry.0 == Duration::ZERO || expired {
            FAILED_POD_BACKOFF_INITIAL
        } else {
            Duration::millis((2 * entry.0.as_millis()).min(FAILED_POD_BACKOFF_MAX.as_millis()))
        };
        entry.1 = now;
    }

    /// `syncNodes`: the creates (slow-start batches, at most `BURST_REPLICAS`) and then the
    /// deletes, with the expectations that hold the next sync until the informer has seen them.
    fn sync_nodes(
        &mut self,
        key: &ObjectKey,
        ds: &DaemonSet,
        plan: &Plan,
        hash: &str,
        now: Time,
        steps: &mut Vec<Vec<Call>>,
    ) -> Option<String> {
        let creates = &plan.nodes_needing_pods[..plan.nodes_needing_pods.len().min(BURST_REPLICAS)];
        let deletes = &plan.pods_to_delete[..plan.pods_to_delete.len().min(BURST_REPLICAS)];
        if creates.is_empty() && deletes.is_empty() {
            return None;
        }
        self.expectations.set(key, creates.len(), deletes.to_vec(), now);
        let reference = reference_to(&Object::DaemonSet(ds.clone()));
        let template = PodFactory::new(ds, hash);
        let calls: Vec<Call> = creates
            .iter()
            .map(|node| {
                Call::new(ApiRequest::Create(Object::Pod(template.pod_for(node))))
                    .on_success(EventSpec::normal(reference.clone(), "SuccessfulCreate", "Created pod: {name}"))
                    .on_failure(EventSpec::warning(reference.clone(), "FailedCreate", "Error creating: "))
            })
            .collect();
        steps.extend(slow_start_batches(calls));
        steps.push(
            deletes
                .iter()
                .map(|pod| {
                    // Upstream's `DeletePod` sends no UID precondition either.
                    Call::new(ApiRequest::Delete(DeleteRequest::new(pod.clone())))
                        .on_success(EventSpec::normal(reference.clone(), "SuccessfulDelete", format!("Deleted pod: {}", pod.name)))
                        .on_failure(EventSpec::warning(reference.clone(), "FailedDelete", format!("Error deleting: pod {}: ", pod.name)))
                })
                .collect(),
        );
        let mut words = Vec::new();
        if !creates.is_empty() {
            words.push(format!("creating {}", creates.len()));
        }
        if !deletes.is_empty() {
            words.push(format!("deleting {}", deletes.len()));
        }
        Some(words.join(", "))
    }
}

/// Makes the pods of one sync: the template's labels plus the revision labels, and its spec with
/// the daemon tolerations, shared by every pod until the node's pinning affinity is set.
struct PodFactory {
    metadata: ObjectMeta,
    spec: PodSpec,
}

impl PodFactory {
    /// `util.CreatePodTemplate`.
    fn new(ds: &DaemonSet, hash: &str) -> Self {
        let template = &ds.spec.template;
        let mut labels: StringMap = (*template.metadata.labels).clone();
        if let Some(generation) = template_generation(ds) {
            labels.insert(POD_TEMPLATE_GENERATION.into(), generation.to_string());
        }
        labels.insert(CONTROLLER_REVISION_HASH.into(), hash.to_string());
        let metadata = ObjectMeta {
            generate_name: format!("{}-", ds.metadata.name).into(),
            namespace: ds.metadata.namespace.clone(),
            labels: labels.into(),
            annotations: template.metadata.annotations.clone(),
            owner_references: vec![owner_reference(ds)].into(),
            ..Default::default()
        };
        PodFactory { metadata, spec: spec_with_daemon_tolerations(&template.spec) }
    }

    fn pod_for(&self, node: &str) -> Pod {
        let mut spec = self.spec.clone();
        spec.affinity = Some(pin_to_node(spec.affinity.take(), node));
        Pod { metadata: self.metadata.clone(), spec: spec.into(), status: PodStatus::default() }
    }
}

pub fn owner_reference(ds: &DaemonSet) -> OwnerReference {
    OwnerReference {
        api_version: "apps/v1".into(),
        kind: "DaemonSet".into(),
        name: ds.metadata.name.to_string(),
        uid: ds.metadata.uid.to_string(),
        controller: Some(true),
        block_owner_deletion: Some(true),
    }
}

/// The pods this DaemonSet controls, plus matching orphans it adopts (`getDaemonPods`, whose
/// `ClaimPods` writes the owner reference).
fn claim_pods<'a>(caches: &'a Caches, ds: &DaemonSet) -> (Vec<&'a Pod>, Vec<Call>) {
    let selector = &ds.spec.selector;
    let mut owned: Vec<&Pod> =
        caches[Kind::Pod].owned_by(&ds.metadata.uid).filter_map(|o| o.as_pod()).filter(|p| selector.matches(&p.metadata.labels)).collect();
    let mut adoptions = Vec::new();
    for pod in caches[Kind::Pod].owned_by("").filter_map(|o| o.as_pod()) {
        if pod.metadata.namespace != ds.metadata.namespace || pod.metadata.is_deleting() || !selector.matches(&pod.metadata.labels) {
            continue;
        }
        let mut adopted = pod.clone();
        adopted.metadata.owner_references.push(owner_reference(ds));
        adoptions.push(Call::new(ApiRequest::Update(Object::Pod(adopted))));
        owned.push(pod);
    }
    crate::sort::sort_by(&mut owned, |a, b| a.metadata.name.cmp(&b.metadata.name));
    (owned, adoptions)
}

/// `getNodesToDaemonPods`: the claimed pods by target node, leaving out the finished ones that
/// are already being deleted (nothing is left to do with them).
fn nodes_to_daemon_pods<'a>(claimed: &[&'a Pod]) -> NodeToPods<'a> {
    let mut by_node: NodeToPods = BTreeMap::new();
    for pod in claimed.iter().copied() {
        if pod.is_terminal() && pod.metadata.is_deleting() {
            continue;
        }
        if let Some(node) = target_node_name(pod) {
            by_node.entry(node).or_default().push(pod);
        }
    }
    by_node
}

/// `updateDaemonSetStatus`: per node that should run the pod, whether one is there, and whether
/// the oldest is ready, available and up to date; pods on nodes that should not run one are
/// misscheduled. The observed generation moves only when the sync could act.
pub(crate) fn calculate_status(
    ds: &DaemonSet,
    nodes: &[&Node],
    by_node: &NodeToPods,
    tolerations: &[Toleration],
    hash: &str,
    observed: bool,
    now: Time,
) -> DaemonSetStatus {
    let generation = template_generation(ds);
    let min_ready = i64::from(ds.spec.min_ready_seconds);
    let mut st = DaemonSetStatus {
        observed_generation: if observed { ds.metadata.generation } else { ds.status.observed_generation },
        ..Default::default()
    };
    for node in nodes {
        let (should_run, _) = node_should_run(node, ds, tolerations);
        let pods = by_node.get(node.metadata.name.as_str()).filter(|p| !p.is_empty());
        if !should_run {
            st.number_misscheduled += i32::from(pods.is_some());
            continue;
        }
        st.desired_number_scheduled += 1;
        let Some(pods) = pods else { continue };
        st.current_number_scheduled += 1;
        let mut pods = pods.clone();
        crate::sort::sort_by(&mut pods, oldest_first);
        let pod = pods[0];
        if pod.is_ready() {
            st.number_ready += 1;
            st.number_available += i32::from(pod.is_available(min_ready, now));
        }
        st.updated_number_scheduled += i32::from(is_pod_updated(pod, hash, generation));
    }
    st.number_unavailable = st.desired_number_scheduled - st.number_available;
    st
}

#[cfg(test)]
mod tests;
