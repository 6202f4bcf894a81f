//! The pod garbage collector (`pod-garbage-collector`, upstream's `podgc`): the loop that removes
//! pods no other loop will ever finish.
//!
//! Every pod is finished by someone: its kubelet ends it, its controller deletes it. A few are
//! left with nobody: a pod bound to a Node object that has been deleted (no kubelet will ever
//! write it again), a pod being deleted that was never scheduled (no kubelet will confirm it),
//! and terminated pods piling up past `--terminated-pod-gc-threshold`. Every 20 s this loop
//! lists pods and nodes from its caches and force-deletes those, as upstream's `gc` pass does:
//! - **orphaned**: a pod whose node is missing from the node cache puts that node in
//!   quarantine for 40 s (the informer may simply be behind); at the first pass after that, if
//!   the node is still missing, a live GET must come back NotFound, and then each of its pods is
//!   marked `Failed` with the condition `DisruptionTarget=True` (`DeletionByPodGC`, "PodGC: node
//!   no longer exists") and deleted with grace period 0;
//! - **unscheduled terminating**: a pod with a deletion timestamp and no node is deleted with
//!   grace period 0;
//! - **terminated**: past 12,500 terminated (Succeeded or Failed) pods, the oldest go.
//!
//! (Upstream also force-deletes terminating pods on a not-ready node tainted
//! `node.kubernetes.io/out-of-service`; kubeloop has no way to set that taint's meaning yet, so
//! that pass is not modelled.)

use super::{Action, Caches, Call, Controller, Sync};
use crate::api::{set_pod_condition, ApiRequest, DeleteRequest};
use crate::model::{Duration, Kind, Object, ObjectKey, Pod, Time};
use crate::runtime::informer::Delta;
use crate::vec_map::VecMap;

/// `gcCheckPeriod`: how often the pass runs.
pub const GC_CHECK_PERIOD: Duration = Duration::secs(20);
/// `quarantineTime`: how long a node missing from the cache waits before it is looked up.
pub const QUARANTINE_TIME: Duration = Duration::secs(40);
/// `--terminated-pod-gc-threshold`'s default.
pub const TERMINATED_POD_THRESHOLD: usize = 12_500;

/// The key of the periodic pass; no node is named "".
fn pass_key() -> ObjectKey {
    ObjectKey::new(Kind::Node, "", "")
}

#[derive(Default)]
pub struct PodGcController {
    /// Whether the periodic pass has been started (with the first node or pod the caches hand over).
    ticking: bool,
    /// Nodes missing from the cache, and when each may be looked up (`nodeQueue.AddAfter`: the
    /// earliest time wins).
    quarantine: VecMap<String, Time>,
}

impl PodGcController {
    pub fn new() -> Self {
        Self::default()
    }

    /// One `gc` pass over the caches.
    fn pass(&mut self, caches: &Caches, now: Time) -> Sync {
        let pods: Vec<&Pod> = caches[Kind::Pod].iter().filter_map(|o| o.as_pod()).collect();
        let nodes = &caches[Kind::Node];
        let exists = |node: &str| nodes.get(&ObjectKey::new(Kind::Node, "", node)).is_some();
        let mut mark: Vec<Call> = Vec::new();
        let mut delete: Vec<Call> = Vec::new();
        let mut words: Vec<String> = Vec::new();

        for pod in terminated_over_threshold(&pods, TERMINATED_POD_THRESHOLD) {
            delete.push(force_delete(pod));
            words.push(format!("terminated pod {}", pod.metadata.name));
        }
        // Orphans: quarantine nodes newly found missing, then take those whose time is up.
        for node in pods.iter().filter_map(|p| p.node_name()).filter(|n| !exists(n)) {
            self.quarantine.get_or_insert_with(node.to_string(), || now + QUARANTINE_TIME);
        }
        let due: Vec<String> = self.quarantine.iter().filter(|(_, t)| **t <= now).map(|(n, _)| n.clone()).collect();
        self.quarantine.retain(|_, t| *t > now);
        let gone: Vec<String> = due.into_iter().filter(|n| !exists(n)).collect();
        let lookups: Vec<Call> = gone.iter().map(|n| Call::expect_not_found(ApiRequest::Get(ObjectKey::new(Kind::Node, "", n)))).collect();
        for pod in pods.iter().filter(|p| p.node_name().is_some_and(|n| gone.iter().any(|g| g == n))) {
            if let Some(m) = mark_failed(pod, now) {
                mark.push(m);
            }
            delete.push(force_delete(pod));
            words.push(format!("orphaned pod {} (node {} no longer exists)", pod.metadata.name, pod.node_name().unwrap_or_default()));
        }
        for pod in pods.iter().filter(|p| p.metadata.is_deleting() && p.node_name().is_none()) {
            delete.push(force_delete(pod));
            words.push(format!("unscheduled terminating pod {}", pod.metadata.name));
        }
        let then = Action::RequeueAfter(GC_CHECK_PERIOD);
        if delete.is_empty() {
            return Sync::nothing().then(then);
        }
        Sync::with_steps(vec![lookups, mark, delete], format!("force-deleting {}", words.join(", "))).then(then)
    }
}

/// The oldest terminated pods past the threshold (`byEvictionAndCreationTimestamp`: evicted
/// first, then by creation time, then by name).
fn terminated_over_threshold<'a>(pods: &[&'a Pod], threshold: usize) -> Vec<&'a Pod> {
    let mut terminated: Vec<&Pod> = pods.iter().copied().filter(|p| p.is_terminal()).collect();
    let excess = terminated.len().saturating_sub(threshold);
    if excess == 0 {
        return Vec::new();
    }
    let evicted = |p: &Pod| p.status.reason.as_deref() == Some("Evicted");
    crate::sort::sort_by(&mut terminated, |a, b| {
        evicted(b)
            .cmp(&evicted(a))
            .then(a.metadata.creation_timestamp.cmp(&b.metadata.creation_timestamp))
            .then(a.metadata.name.cmp(&b.metadata.name))
    });
    terminated.truncate(excess);
    terminated
}

/// `markFailedAndDeletePodWithCondition`'s status patch: a pod no kubelet will finish is moved
/// to `Failed` (with the condition saying why) before it is deleted. None if already terminal.
fn mark_failed(pod: &Pod, now: Time) -> Option<Call> {
    if pod.is_terminal() {
        return None;
    }
    let mut marked = pod.clone();
    marked.status.phase = Some(crate::model::PodPhase::Failed);
    set_pod_condition(&mut marked.status, "DisruptionTarget", "True", Some("DeletionByPodGC"), Some("PodGC: node no longer exists"), now);
    marked.metadata.resource_version = 0;
    Some(Call::new(ApiRequest::UpdateStatus(Object::Pod(marked))))
}

/// A delete with grace period 0, for this very pod (its UID as a precondition).
fn force_delete(pod: &Pod) -> Call {
    let key = ObjectKey::of(Kind::Pod, &pod.metadata);
    Call::new(ApiRequest::Delete(DeleteRequest {
        uid: Some(pod.metadata.uid.to_string()),
        grace_period_seconds: Some(0),
        ..DeleteRequest::new(key)
    }))
}

impl Controller for PodGcController {
    fn name(&self) -> &'static str {
        "pod-garbage-collector-controller"
    }

    fn watches(&self) -> &'static [Kind] {
        &[Kind::Pod, Kind::Node]
    }

    /// The pass is periodic: it starts with the first object the caches hand over and then
    /// requeues itself; no delta enqueues anything else.
    fn on_delta(&mut self, _caches: &Caches, _delta: &Delta, _now: Time) -> Vec<ObjectKey> {
        if self.ticking {
            return Vec::new();
        }
        self.ticking = true;
        vec![pass_key()]
    }

    fn reconcile(&mut self, key: &ObjectKey, caches: &Caches, now: Time) -> Sync {
        if *key == pass_key() {
            self.pass(caches, now)
        } else {
            Sync::nothing()
        }
    }

    fn reset(&mut self) {
        *self = Self::new();
    }

    fn workers(&self) -> usize {
        1
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::command::{Scenario, Session};
    use crate::model::{Duration, PodPhase};

    fn settled() -> Session {
        let mut s = Session::new(Scenario::builtin("default").unwrap(), Some(1)).unwrap();
        s.settle(Duration::mins(2)).unwrap();
        s
    }

    fn pods_on(s: &Session, node: &str) -> Vec<String> {
        s.sim()
            .objects(Kind::Pod)
            .filter_map(|o| o.as_pod())
            .filter(|p| p.node_name() == Some(node))
            .map(|p| p.metadata.name.to_string())
            .collect()
    }

    /// Past the threshold the excess goes, evicted pods first, then the oldest; running pods
    /// never count.
    #[test]
    fn terminated_pods_past_the_threshold_go_evicted_first_then_oldest() {
        let pod = |name: &str, created: u64, phase: PodPhase, reason: Option<&str>| {
            let mut p = Pod::default();
            p.metadata.name = name.into();
            p.metadata.creation_timestamp = Some(Time(created));
            p.status.phase = Some(phase);
            p.status.reason = reason.map(str::to_string);
            p
        };
        let all = [
            pod("new-done", 30, PodPhase::Succeeded, None),
            pod("old-done", 10, PodPhase::Succeeded, None),
            pod("evicted", 40, PodPhase::Failed, Some("Evicted")),
            pod("failed", 20, PodPhase::Failed, None),
            pod("running", 0, PodPhase::Running, None),
        ];
        let refs: Vec<&Pod> = all.iter().collect();
        let names = |threshold| terminated_over_threshold(&refs, threshold).iter().map(|p| p.metadata.name.to_string()).collect::<Vec<_>>();
        assert_eq!(names(4), Vec::<String>::new(), "four terminated pods are not over four");
        assert_eq!(names(2), ["evicted", "old-done"]);
        assert_eq!(names(0), ["evicted", "old-done", "failed", "new-done"]);
        assert_eq!(TERMINATED_POD_THRESHOLD, 12_500, "--terminated-pod-gc-threshold's default");
    }

    #[test]
    fn pods_of_a_deleted_node_are_marked_failed_and_force_deleted_after_the_quarantine() {
        let mut s = settled();
        let orphans = pods_on(&s, "node-2");
        assert!(!orphans.is_empty(), "node-2 runs some of web's pods");
        assert!(s.execute("sim stop kubelet-node-2").ok, "no kubelet will touch them again");
        assert!(s.execute("kubectl delete node node-2").ok);
        let deleted_at = s.sim().now();
        // Within the quarantine nothing happens: the cache may only be behind.
        s.advance(Duration::secs(39));
        assert_eq!(pods_on(&s, "node-2"), orphans, "still there 39 s on");
        // The first pass at least 40 s after the node was first missed takes them (at most 20 s later).
        s.advance(Duration::secs(25));
        assert_eq!(pods_on(&s, "node-2"), Vec::<String>::new(), "gone by 64 s");
        let names: Vec<String> = s.sim().objects(Kind::Pod).map(|o| o.meta().name.to_string()).collect();
        assert_eq!(names.len(), 3, "the ReplicaSet replaced them: {names:?}");
        // The status write came first: each orphan was moved to Failed, saying why.
        let failed: Vec<Pod> = s
            .sim()
            .api()
            .changes_since(0)
            .unwrap()
            .filter(|c| c.type_ == crate::store::ChangeType::Modified)
            .filter_map(|c| c.object.as_pod().cloned())
            .filter(|p| orphans.contains(&p.metadata.name.to_string()) && p.status.phase == Some(PodPhase::Failed))
            .collect();
        assert_eq!(failed.len(), orphans.len(), "one Failed write per orphan");
        for p in &failed {
            let c = p.condition("DisruptionTarget").expect("the condition says why");
            assert_eq!((c.reason.as_deref(), c.message.as_deref()), (Some("DeletionByPodGC"), Some("PodGC: node no longer exists")));
        }
        assert!(s.sim().now().since(deleted_at) >= QUARANTINE_TIME);
    }

    #[test]
    fn a_node_that_comes_back_within_the_quarantine_keeps_its_pods() {
        let mut s = settled();
        assert!(s.execute("sim stop kubelet-node-2").ok);
        let orphans = pods_on(&s, "node-2");
        assert!(s.execute("kubectl delete node node-2").ok);
        s.advance(Duration::secs(10));
        // The kubelet comes back and registers its Node again before the 40 s are up.
        assert!(s.execute("sim start kubelet-node-2").ok);
        s.advance(Duration::secs(80));
        assert_eq!(pods_on(&s, "node-2"), orphans, "nothing was collected");
    }
}
