//! The taint eviction controller (pkg/controller/tainteviction, the "NoExecute taint manager"):
//! deletes pods from nodes with NoExecute taints they do not tolerate.
//!
//! A pod that tolerates every NoExecute taint of its node for a limited time (the 300 s
//! `tolerationSeconds` the DefaultTolerationSeconds admission adds for not-ready and unreachable)
//! is deleted when the shortest of them runs out, counted from when this controller saw the
//! taint; a pod that does not tolerate them is deleted at once; a pod tolerating them forever
//! stays. Taints removed before then cancel the deletion ("Cancelling deletion of Pod …").
//! Deleting first marks the pod with the DisruptionTarget condition, then deletes it with its
//! grace period, as upstream does.

use super::node_lifecycle::NO_EXECUTE;
use super::{Action, Caches, Call, Controller, Sync};
use crate::api::{ApiRequest, DeleteRequest};
use crate::model::*;
use crate::runtime::events::EventSpec;
use crate::runtime::informer::Delta;
use crate::vec_map::VecMap;

/// A scheduled deletion (`TimedWorker`); once fired it stays, empty, until cancelled, so the
/// same pod is not deleted twice.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Work {
    created: Time,
    fire_at: Time,
    fired: bool,
}

#[derive(Debug, Default)]
pub struct TaintEvictionController {
    /// The NoExecute taints of each tainted node, as last handled.
    tainted: VecMap<String, Vec<Taint>>,
    work: VecMap<ObjectKey, Work>,
    events: Vec<EventSpec>,
}

fn no_execute_taints(node: &Node) -> Vec<Taint> {
    node.spec.taints.iter().filter(|t| t.effect == NO_EXECUTE).cloned().collect()
}

/// `GetMatchingTolerations`: whether every taint is tolerated, and the first toleration that
/// tolerates each.
pub fn matching_tolerations<'a>(taints: &[Taint], tolerations: &'a [Toleration]) -> Option<Vec<&'a Toleration>> {
    taints.iter().map(|taint| tolerations.iter().find(|t| t.tolerates(taint))).collect()
}

/// `getMinTolerationTime`: the shortest `tolerationSeconds`, `None` for forever.
pub fn min_toleration(used: &[&Toleration]) -> Option<Duration> {
    if used.is_empty() {
        return Some(Duration::ZERO);
    }
    let mut min: Option<i64> = None;
    for t in used {
        if let Some(s) = t.toleration_seconds {
            if s <= 0 {
                return Some(Duration::ZERO);
            }
            min = Some(min.map_or(s, |m| m.min(s)));
        }
    }
    min.map(|s| Duration::secs(s as u64))
}

fn pod_reference(key: &ObjectKey) -> ObjectReference {
    // Upstream names the pod without its UID.
    ObjectReference {
        kind: "Pod".into(),
        namespace: key.namespace.clone(),
        name: key.name.clone(),
        uid: Default::default(),
        api_version: "v1".into(),
        field_path: Default::default(),
    }
}

impl TaintEvictionController {
    pub fn new() -> Self {
        Self::default()
    }

    /// When the pod's deletion is due, if one is scheduled and not yet done.
    pub fn scheduled(&self, pod: &ObjectKey) -> Option<Time> {
        self.work.get(pod).filter(|w| !w.fired).map(|w| w.fire_at)
    }

    fn cancel(&mut self, pod: &ObjectKey) {
        if let Some(work) = self.work.remove(pod) {
            if !work.fired {
                let message = format!("Cancelling deletion of Pod {}/{}", pod.namespace, pod.name);
                self.events.push(EventSpec::normal(pod_reference(pod), "TaintManagerEviction", message));
            }
        }
    }

    /// `processPodOnNode`.
    fn process_pod(&mut self, pod: &Pod, taints: &[Taint], now: Time) {
        let key = ObjectKey::of(Kind::Pod, &pod.metadata);
        if taints.is_empty() {
            return self.cancel(&key);
        }
        let Some(used) = matching_tolerations(taints, &pod.spec.tolerations) else {
            // Deleted right away: whatever was scheduled gives way to that. Already deleted
            // stays deleted (this pass also runs when the node's key comes back for a timer).
            if self.work.get(&key).is_some_and(|w| w.fired) {
                return;
            }
            self.cancel(&key);
            self.work.insert(key, Work { created: now, fire_at: now, fired: false });
            return;
        };
        let Some(toleration) = min_toleration(&used) else {
            return self.cancel(&key);
        };
        let mut created = now;
        if let Some(existing) = self.work.get(&key).copied() {
            created = existing.created;
            if existing.fired || created + toleration < now + toleration {
                return;
            }
            self.cancel(&key);
        }
        self.work.insert(key, Work { created, fire_at: created + toleration, fired: false });
    }

    /// The deletion of a pod whose time is up: DisruptionTarget, then delete.
    fn fire(&mut self, pod: &Pod, now: Time) -> Vec<Vec<Call>> {
        let key = ObjectKey::of(Kind::Pod, &pod.metadata);
        if let Some(w) = self.work.get_mut(&key) {
            w.fired = true;
        }
        let message = format!("Marking for deletion Pod {}/{}", key.namespace, key.name);
        self.events.push(EventSpec::normal(pod_reference(&key), "TaintManagerEviction", message));
        let mut marked = pod.clone();
        let changed = crate::api::set_pod_condition(
            &mut marked.status,
            "DisruptionTarget",
            "True",
            Some("DeletionByTaintManager"),
            Some("Taint manager: deleting due to NoExecute taint"),
            now,
        );
        let delete = Call::new(ApiRequest::Delete(DeleteRequest { uid: Some(pod.metadata.uid.to_string()), ..DeleteRequest::new(key) }));
        if changed {
            marked.metadata.resource_version = 0;
            vec![vec![Call::new(ApiRequest::UpdateStatus(Object::Pod(marked)))], vec![delete]]
        } else {
            vec![vec![delete]]
        }
    }

    /// Fires what is due among these pods; the time of the next one still pending.
    fn fire_due<'a>(&mut self, pods: impl Iterator<Item = &'a Pod>, now: Time) -> (Vec<Vec<Call>>, Option<Time>) {
        let mut steps: Vec<Vec<Call>> = vec![Vec::new(), Vec::new()];
        let mut next: Option<Time> = None;
        for pod in pods {
            let key = ObjectKey::of(Kind::Pod, &pod.metadata);
            match self.scheduled(&key) {
                Some(at) if at <= now => {
                    let fired = self.fire(pod, now);
                    let mark_step = fired.len() == 2;
                    for (i, step) in fired.into_iter().enumerate() {
                        let slot = if mark_step { i } else { 1 };
                        steps[slot].extend(step);
                    }
                }
                Some(at) => next = Some(next.map_or(at, |n: Time| n.min(at))),
                None => {}
            }
        }
        (steps, next)
    }

    fn finish(steps: Vec<Vec<Call>>, next: Option<Time>, now: Time, summary: String) -> Sync {
        let then = next.map_or(Action::AwaitChange, |at| Action::RequeueAfter(at.since(now)));
        if steps.iter().all(Vec::is_empty) {
            return Sync::nothing().then(then);
        }
        Sync::with_steps(steps, summary).then(then)
    }

    /// `handleNodeUpdate`, then the deletions that are due on the node.
    fn sync_node(&mut self, caches: &Caches, key: &ObjectKey, now: Time) -> Sync {
        let Some(node) = caches[Kind::Node].get(key).and_then(|o| o.as_node()) else {
            self.tainted.remove(key.name.as_str());
            return Sync::nothing();
        };
        let taints = no_execute_taints(node);
        if taints.is_empty() {
            self.tainted.remove(key.name.as_str());
        } else {
            self.tainted.insert(key.name.to_string(), taints.clone());
        }
        let pods: Vec<&Pod> = caches[Kind::Pod].on_node(&key.name).filter_map(|o| o.as_pod()).collect();
        for pod in &pods {
            self.process_pod(pod, &taints, now);
        }
        let (steps, next) = self.fire_due(pods.into_iter(), now);
        Self::finish(steps, next, now, format!("Node {}: evicting pods that do not tolerate its NoExecute taints", key.name))
    }

    /// `handlePodUpdate`, then its deletion if due.
    fn sync_pod(&mut self, caches: &Caches, key: &ObjectKey, now: Time) -> Sync {
        let Some(pod) = caches[Kind::Pod].get(key).and_then(|o| o.as_pod()) else {
            self.cancel(key);
            return Sync::nothing();
        };
        let Some(node) = pod.node_name() else { return Sync::nothing() };
        let Some(taints) = self.tainted.get(node).cloned() else { return Sync::nothing() };
        self.process_pod(pod, &taints, now);
        let (steps, next) = self.fire_due(std::iter::once(pod), now);
        Self::finish(steps, next, now, format!("Pod {}: evicting, its node is tainted NoExecute", key.ns_name()))
    }
}

impl Controller for TaintEvictionController {
    fn name(&self) -> &'static str {
        "taint-eviction-controller"
    }
    fn watches(&self) -> &'static [Kind] {
        &[Kind::Node, Kind::Pod]
    }

    fn on_delta(&mut self, _caches: &Caches, delta: &Delta, _now: Time) -> Vec<ObjectKey> {
        match delta {
            Delta::Added(o) | Delta::Deleted(o) if o.kind() == Kind::Node => vec![o.key()],
            Delta::Updated { old, new } if new.kind() == Kind::Node => {
                let taints = |o: &Object| o.as_node().map(no_execute_taints).unwrap_or_default();
                if taints(old) == taints(new) {
                    Vec::new()
                } else {
                    vec![new.key()]
                }
            }
            Delta::Added(o) | Delta::Deleted(o) if o.kind() == Kind::Pod => {
                if o.as_pod().and_then(|p| p.node_name()).is_some() {
                    vec![o.key()]
                } else {
                    Vec::new()
                }
            }
            Delta::Updated { old, new } if new.kind() == Kind::Pod => {
                let (Some(o), Some(n)) = (old.as_pod(), new.as_pod()) else { return Vec::new() };
                if o.spec.tolerations == n.spec.tolerations && o.spec.node_name == n.spec.node_name {
                    Vec::new()
                } else {
                    vec![new.key()]
                }
            }
            _ => Vec::new(),
        }
    }

    fn reconcile(&mut self, key: &ObjectKey, caches: &Caches, now: Time) -> Sync {
        match key.kind {
            Kind::Node => self.sync_node(caches, key, now),
            Kind::Pod => self.sync_pod(caches, key, now),
            _ => Sync::nothing(),
        }
    }

    fn take_events(&mut self) -> Vec<EventSpec> {
        std::mem::take(&mut self.events)
    }

    fn reset(&mut self) {
        *self = Self::default();
    }

    fn workers(&self) -> usize {
        // `UpdateWorkerSize`.
        8
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runtime::informer::Informer;

    fn toleration(key: &str, seconds: Option<i64>) -> Toleration {
        Toleration {
            key: key.into(),
            operator: Some("Exists".into()),
            value: String::new(),
            effect: NO_EXECUTE.into(),
            toleration_seconds: seconds,
        }
    }

    fn unreachable() -> Taint {
        Taint { key: "node.kubernetes.io/unreachable".into(), value: String::new(), effect: NO_EXECUTE.into(), time_added: None }
    }

    fn pod(name: &str, tolerations: Vec<Toleration>) -> Pod {
        let mut p = Pod::default();
        p.metadata.name = name.into();
        p.metadata.namespace = "default".into();
        p.metadata.uid = format!("uid-{name}").into();
        p.spec.node_name = Some("node-1".into());
        p.spec.tolerations = tolerations;
        p
    }

    fn tainted_node() -> Node {
        let mut n = Node::default();
        n.metadata.name = "node-1".into();
        n.spec.taints.push(unreachable());
        n
    }

    fn deletes(sync: &Sync) -> Vec<String> {
        sync.steps
            .iter()
            .flatten()
            .filter_map(|c| match &c.request {
                ApiRequest::Delete(d) => Some(d.key.name.to_string()),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn tolerations_decide_when_a_pod_goes() {
        let used = [toleration("node.kubernetes.io/unreachable", Some(300))];
        let refs: Vec<&Toleration> = used.iter().collect();
        assert_eq!(min_toleration(&refs), Some(Duration::secs(300)));
        let forever = [toleration("node.kubernetes.io/unreachable", None)];
        assert_eq!(min_toleration(&forever.iter().collect::<Vec<_>>()), None);
        assert_eq!(min_toleration(&[]), Some(Duration::ZERO));
        assert!(matching_tolerations(&[unreachable()], &[]).is_none());
    }

    #[test]
    fn a_tolerating_pod_is_deleted_when_its_toleration_runs_out_and_an_intolerant_one_at_once() {
        let patient = pod("patient", vec![toleration("node.kubernetes.io/unreachable", Some(300))]);
        let impatient = pod("impatient", vec![]);
        let forever = pod("forever", vec![toleration("", None)]);
        let pods = Informer::from_objects(Kind::Pod, [patient, impatient, forever].map(Object::Pod));
        let nodes = Informer::from_objects(Kind::Node, [Object::Node(tainted_node())]);
        let (rs, d) = (Informer::from_objects(Kind::ReplicaSet, []), Informer::from_objects(Kind::Deployment, []));
        let caches = Caches::new([pods.store(), rs.store(), d.store(), nodes.store()]);
        let mut c = TaintEvictionController::new();
        let node_key = ObjectKey::new(Kind::Node, "", "node-1");
        let sync = c.reconcile(&node_key, &caches, Time(1_000));
        assert_eq!(deletes(&sync), vec!["impatient"]);
        assert_eq!(sync.then, Action::RequeueAfter(Duration::secs(300)));
        let events = c.take_events();
        assert_eq!(events[0].reason, "TaintManagerEviction");
        assert_eq!(events[0].message, "Marking for deletion Pod default/impatient");
        let ApiRequest::UpdateStatus(Object::Pod(marked)) = &sync.steps[0][0].request else { panic!("DisruptionTarget first") };
        let cond = marked.condition("DisruptionTarget").expect("condition");
        assert_eq!(cond.reason.as_deref(), Some("DeletionByTaintManager"));
        assert_eq!(cond.message.as_deref(), Some("Taint manager: deleting due to NoExecute taint"));

        let sync = c.reconcile(&node_key, &caches, Time(300_999));
        assert!(deletes(&sync).is_empty());
        let sync = c.reconcile(&node_key, &caches, Time(301_000));
        assert_eq!(deletes(&sync), vec!["patient"]);
        assert_eq!(c.take_events()[0].message, "Marking for deletion Pod default/patient");
        assert_eq!(c.scheduled(&ObjectKey::new(Kind::Pod, "default", "forever")), None);
    }

    #[test]
    fn removing_the_taint_cancels_a_scheduled_deletion() {
        let patient = pod("patient", vec![toleration("node.kubernetes.io/unreachable", Some(300))]);
        let pods = Informer::from_objects(Kind::Pod, [Object::Pod(patient)]);
        let (rs, d) = (Informer::from_objects(Kind::ReplicaSet, []), Informer::from_objects(Kind::Deployment, []));
        let node_key = ObjectKey::new(Kind::Node, "", "node-1");
        let mut c = TaintEvictionController::new();
        let nodes = Informer::from_objects(Kind::Node, [Object::Node(tainted_node())]);
        c.reconcile(&node_key, &Caches::new([pods.store(), rs.store(), d.store(), nodes.store()]), Time(0));
        let mut healthy = tainted_node();
        healthy.spec.taints.clear();
        let nodes = Informer::from_objects(Kind::Node, [Object::Node(healthy)]);
        let sync = c.reconcile(&node_key, &Caches::new([pods.store(), rs.store(), d.store(), nodes.store()]), Time(100_000));
        assert!(deletes(&sync).is_empty());
        let events = c.take_events();
        assert_eq!(events.len(), 1);
        assert_eq!(events[0].message, "Cancelling deletion of Pod default/patient");
    }
}
