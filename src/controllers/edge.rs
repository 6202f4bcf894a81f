//! Edge-triggered mode: a controller that acts on each event's delta instead of reconciling.
//!
//! Kubernetes controllers are level-triggered: an event only says "look at this key", and the
//! sync compares the whole desired state with the whole observed state. This module is the
//! counterfactual the lessons contrast it with. In edge mode a controller turns each watch
//! event straight into writes — a ReplicaSet scaled from a to b creates b − a pods, a pod that
//! stops being active gets one replacement — and never looks again: no re-read of the whole
//! state, no resync, and a re-list's deltas (which are not events) are ignored. It works while
//! every event arrives; an event lost (a dropped notification, a severed watch, a restart)
//! leaves a gap nobody closes.
//!
//! Supported for the ReplicaSet and Deployment controllers. The Deployment's edge handler
//! creates the ReplicaSet of a new template at full size and scales the previous one to zero;
//! it neither rolls gradually nor writes the Deployment's status.

use super::deployment::{compute_hash, POD_TEMPLATE_HASH};
use super::replica_set::{is_pod_active, pod_from_template, pods_to_delete};
use super::{Caches, Call};
use crate::api::{ApiRequest, ApiResponse, ApiResult, DeleteRequest};
use crate::model::*;
use crate::runtime::events::{reference_to, EventSpec};
use crate::runtime::fasthash::FastSet;
use crate::runtime::informer::Delta;

/// How a controller reacts to what it observes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Mode {
    /// Reconcile the whole state of a key whenever anything about it changes (Kubernetes).
    #[default]
    Level,
    /// Act on each event's delta alone.
    Edge,
}

impl Mode {
    pub fn parse(word: &str) -> Option<Mode> {
        match word {
            "level" => Some(Mode::Level),
            "edge" => Some(Mode::Edge),
            _ => None,
        }
    }
    pub fn as_str(self) -> &'static str {
        match self {
            Mode::Level => "level",
            Mode::Edge => "edge",
        }
    }
}

const REPLICASET: &str = "replicaset-controller";
const DEPLOYMENT: &str = "deployment-controller";

/// The controllers that have an edge-triggered handler.
pub fn supports(controller: &str) -> bool {
    controller == REPLICASET || controller == DEPLOYMENT
}

/// The controller a user names: its loop name or kube-controller-manager's `--controllers` name.
pub fn loop_name(typed: &str) -> &str {
    match typed {
        "replicaset" | "replicasets" | "rs" => REPLICASET,
        "deployment" | "deployments" | "deploy" => DEPLOYMENT,
        "garbagecollector" | "garbage-collector" => "garbage-collector-controller",
        "nodelifecycle" | "node-lifecycle" => "node-lifecycle-controller",
        "taint-eviction" => "taint-eviction-controller",
        other => other,
    }
}

/// What an edge handler remembers: only the deletions it made itself, so that their events
/// are not mistaken for pods lost.
#[derive(Debug, Default)]
pub struct EdgeState {
    deleted_by_me: FastSet<ObjectKey>,
}

/// The writes an event leads to, and the decision in words.
pub struct Reaction {
    pub calls: Vec<Call>,
    pub summary: String,
}

impl EdgeState {
    /// The controller's edge handler for one watch event.
    pub fn react(&mut self, controller: &str, caches: &Caches, delta: &Delta) -> Option<Reaction> {
        match controller {
            REPLICASET => self.replica_set(caches, delta),
            DEPLOYMENT => deployment(caches, delta),
            _ => None,
        }
    }

    fn replica_set(&mut self, caches: &Caches, delta: &Delta) -> Option<Reaction> {
        match delta {
            Delta::Added(o) => {
                let rs = o.as_replica_set()?;
                let n = rs.spec.replicas.unwrap_or(1).max(0) as usize;
                creations(rs, n, format!("ReplicaSet {} added with {n} replicas: creating {n}", rs.metadata.name))
            }
            Delta::Updated { old, new } if new.kind() == Kind::ReplicaSet => {
                let (old, new) = (old.as_replica_set()?, new.as_replica_set()?);
                let (a, b) = (old.spec.replicas.unwrap_or(1).max(0), new.spec.replicas.unwrap_or(1).max(0));
                let name = &new.metadata.name;
                if b > a {
                    let n = (b - a) as usize;
                    creations(new, n, format!("ReplicaSet {name} scaled {a} → {b}: creating {n}"))
                } else if b < a {
                    self.deletions(caches, new, (a - b) as usize, format!("ReplicaSet {name} scaled {a} → {b}: deleting {}", a - b))
                } else {
                    None
                }
            }
            Delta::Updated { old, new } if new.kind() == Kind::Pod => {
                let (old, new) = (old.as_pod()?, new.as_pod()?);
                if !is_pod_active(old) || is_pod_active(new) {
                    return None;
                }
                self.replacement(caches, new)
            }
            Delta::Deleted(o) if o.kind() == Kind::Pod => {
                let pod = o.as_pod()?;
                let key = o.key();
                if self.deleted_by_me.remove(&key) || !is_pod_active(pod) {
                    return None;
                }
                self.replacement(caches, pod)
            }
            _ => None,
        }
    }

    /// One new pod for a pod that stopped being active, unless this handler deleted it.
    fn replacement(&mut self, caches: &Caches, pod: &Pod) -> Option<Reaction> {
        let key = ObjectKey::of(Kind::Pod, &pod.metadata);
        if self.deleted_by_me.contains(&key) {
            return None;
        }
        let owner = pod.metadata.controller_ref().filter(|r| r.kind == "ReplicaSet")?;
        let rs_key = ObjectKey::new(Kind::ReplicaSet, &pod.metadata.namespace, &owner.name);
        let rs = caches[Kind::ReplicaSet].get(&rs_key)?.as_replica_set()?;
        if rs.metadata.uid != owner.uid || rs.metadata.is_deleting() {
            return None;
        }
        creations(rs, 1, format!("pod {} gone: creating 1 for ReplicaSet {}", pod.metadata.name, rs.metadata.name))
    }

    /// Deletes `n` of the ReplicaSet's active pods, ranked as the ReplicaSet controller ranks
    /// them; the pods come from the cache's owner index (the handler needs names to delete).
    fn deletions(&mut self, caches: &Caches, rs: &ReplicaSet, n: usize, summary: String) -> Option<Reaction> {
        let active: Vec<&Pod> = caches[Kind::Pod]
            .owned_by(&rs.metadata.uid)
            .filter_map(|o| o.as_pod())
            .filter(|p| is_pod_active(p) && !self.deleted_by_me.contains(&pod_key(p)))
            .collect();
        let victims = pods_to_delete(&active, &active, n, Time(0));
        let reference = reference_to(&Object::ReplicaSet(rs.clone()));
        let calls: Vec<Call> = victims
            .iter()
            .map(|p| {
                self.deleted_by_me.insert(pod_key(p));
                Call::new(ApiRequest::Delete(DeleteRequest { uid: Some(p.metadata.uid.to_string()), ..DeleteRequest::new(pod_key(p)) }))
                    .on_success(EventSpec::normal(reference.clone(), "SuccessfulDelete", format!("Deleted pod: {}", p.metadata.name)))
            })
            .collect();
        (!calls.is_empty()).then_some(Reaction { calls, summary })
    }
}

fn pod_key(p: &Pod) -> ObjectKey {
    ObjectKey::of(Kind::Pod, &p.metadata)
}

/// `n` pod creations from the ReplicaSet's template, with the ReplicaSet controller's events.
fn creations(rs: &ReplicaSet, n: usize, summary: String) -> Option<Reaction> {
    if n == 0 || rs.metadata.is_deleting() {
        return None;
    }
    let reference = reference_to(&Object::ReplicaSet(rs.clone()));
    let calls = (0..n)
        .map(|_| {
            Call::new(ApiRequest::Create(Object::Pod(pod_from_template(rs))))
                .on_success(EventSpec::normal(reference.clone(), "SuccessfulCreate", "Created pod: {name}"))
                .on_failure(EventSpec::warning(reference.clone(), "FailedCreate", "Error creating: "))
        })
        .collect();
    Some(Reaction { calls, summary })
}

/// The ReplicaSet a Deployment's template maps to (`<name>-<pod-template-hash>`).
fn replica_set_for(d: &Deployment, replicas: i32) -> ReplicaSet {
    let hash = compute_hash(&d.spec.template, d.status.collision_count);
    let mut template = d.spec.template.clone();
    template.metadata.labels.insert(POD_TEMPLATE_HASH.into(), hash.clone());
    let mut selector = d.spec.selector.clone();
    selector.match_labels.insert(POD_TEMPLATE_HASH.into(), hash.clone());
    ReplicaSet {
        metadata: ObjectMeta {
            name: format!("{}-{hash}", d.metadata.name).into(),
            namespace: d.metadata.namespace.clone(),
            labels: template.metadata.labels.clone(),
            owner_references: vec![deployment_owner(d)].into(),
            ..Default::default()
        },
        spec: ReplicaSetSpec { replicas: Some(replicas), min_ready_seconds: d.spec.min_ready_seconds, selector, template },
        status: ReplicaSetStatus::default(),
    }
}

fn deployment_owner(d: &Deployment) -> OwnerReference {
    OwnerReference {
        api_version: "apps/v1".into(),
        kind: "Deployment".into(),
        name: d.metadata.name.to_string(),
        uid: d.metadata.uid.to_string(),
        controller: Some(true),
        block_owner_deletion: Some(true),
    }
}

fn scaling_event(d: &Deployment, message: String) -> EventSpec {
    EventSpec::normal(reference_to(&Object::Deployment(d.clone())), "ScalingReplicaSet", message)
}

/// The write that sets a cached ReplicaSet's replicas, with the Deployment's scaling event.
fn scale(caches: &Caches, d: &Deployment, name: &str, replicas: i32) -> Option<Call> {
    let key = ObjectKey::new(Kind::ReplicaSet, &d.metadata.namespace, name);
    let mut rs = caches[Kind::ReplicaSet].get(&key)?.as_replica_set()?.clone();
    let from = rs.spec.replicas.unwrap_or(1);
    if from == replicas {
        return None;
    }
    rs.spec.replicas = Some(replicas);
    rs.metadata.resource_version = 0;
    let direction = if replicas > from { "up" } else { "down" };
    let event = scaling_event(d, format!("Scaled {direction} replica set {name} from {from} to {replicas}"));
    Some(Call::new(ApiRequest::Update(Object::ReplicaSet(rs))).on_success(event))
}

fn deployment(caches: &Caches, delta: &Delta) -> Option<Reaction> {
    match delta {
        Delta::Added(o) => {
            let d = o.as_deployment()?;
            let replicas = d.spec.replicas.unwrap_or(1);
            let rs = replica_set_for(d, replicas);
            let name = rs.metadata.name.clone();
            let call = Call::new(ApiRequest::Create(Object::ReplicaSet(rs)))
                .on_success(scaling_event(d, format!("Scaled up replica set {name} from 0 to {replicas}")));
            Some(Reaction { calls: vec![call], summary: format!("Deployment {} added: creating {name}", d.metadata.name) })
        }
        Delta::Updated { old, new } => {
            let (old, new) = (old.as_deployment()?, new.as_deployment()?);
            let (a, b) = (old.spec.replicas.unwrap_or(1), new.spec.replicas.unwrap_or(1));
            let old_rs = replica_set_for(old, a).metadata.name;
            if old.spec.template == new.spec.template {
                let call = scale(caches, new, &old_rs, b)?;
                return Some(Reaction { calls: vec![call], summary: format!("Deployment {} scaled {a} → {b}", new.metadata.name) });
            }
            // A new template: its ReplicaSet at full size, the previous one to zero.
            let rs = replica_set_for(new, b);
            let name = rs.metadata.name.clone();
            let mut calls = vec![Call::new(ApiRequest::Create(Object::ReplicaSet(rs)))
                .on_success(scaling_event(new, format!("Scaled up replica set {name} from 0 to {b}")))];
            calls.extend(scale(caches, new, &old_rs, 0));
            Some(Reaction { calls, summary: format!("Deployment {} template changed: creating {name}", new.metadata.name) })
        }
        _ => None,
    }
}

/// The event an edge write records, as the manager records a sync's: `{name}` becomes the
/// name the server gave the object; a failure appends the error.
pub fn outcome_event(call: &Call, result: &ApiResult) -> Option<EventSpec> {
    match result {
        Ok(ApiResponse::Object(o)) => call.on_success.clone().map(|e| e.naming(&o.meta().name)),
        Ok(_) => None,
        Err(err) => call.on_failure.clone().map(|e| e.failing_with(&err.message)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::controllers::replica_set::test_rs;
    use crate::runtime::informer::Informer;
    use std::rc::Rc;

    fn world(rs: &ReplicaSet, pods: Vec<Pod>) -> (Informer, Informer, Informer, Informer) {
        (
            Informer::from_objects(Kind::Pod, pods.into_iter().map(Object::Pod)),
            Informer::from_objects(Kind::ReplicaSet, [Object::ReplicaSet(rs.clone())]),
            Informer::from_objects(Kind::Deployment, []),
            Informer::from_objects(Kind::Node, []),
        )
    }

    fn owned_pod(rs: &ReplicaSet, name: &str) -> Pod {
        let mut p = pod_from_template(rs);
        p.metadata.name = name.into();
        p.metadata.uid = format!("uid-{name}").into();
        p
    }

    fn creates(r: &Option<Reaction>) -> usize {
        r.as_ref().map_or(0, |r| r.calls.iter().filter(|c| matches!(c.request, ApiRequest::Create(_))).count())
    }

    #[test]
    fn a_scaled_replica_set_creates_exactly_the_difference() {
        let mut old = test_rs("web-abc", 3);
        old.metadata.uid = "rs-uid".into();
        let mut new = old.clone();
        new.spec.replicas = Some(5);
        let (pods, rss, deps, nodes) = world(&new, vec![]);
        let caches = Caches::new([pods.store(), rss.store(), deps.store(), nodes.store()]);
        let delta = Delta::Updated { old: Rc::new(Object::ReplicaSet(old)), new: Rc::new(Object::ReplicaSet(new)) };
        // The cache holds no pod at all: edge mode does not care, it creates 5 − 3.
        assert_eq!(creates(&EdgeState::default().react(REPLICASET, &caches, &delta)), 2);
    }

    #[test]
    fn a_lost_pod_gets_one_replacement_and_a_deleted_one_none() {
        let mut rs = test_rs("web-abc", 3);
        rs.metadata.uid = "rs-uid".into();
        let a = owned_pod(&rs, "web-abc-a");
        let b = owned_pod(&rs, "web-abc-b");
        let (pods, rss, deps, nodes) = world(&rs, vec![a.clone(), b.clone()]);
        let caches = Caches::new([pods.store(), rss.store(), deps.store(), nodes.store()]);
        let mut edge = EdgeState::default();
        let a_again = a.clone();
        let lost = edge.react(REPLICASET, &caches, &Delta::Deleted(Rc::new(Object::Pod(a))));
        assert_eq!(creates(&lost), 1);
        assert_eq!(lost.map(|r| r.summary).unwrap_or_default(), "pod web-abc-a gone: creating 1 for ReplicaSet web-abc");

        // Scaling down deletes one pod; its deletion event is not a loss.
        let mut smaller = rs.clone();
        smaller.spec.replicas = Some(2);
        let down = edge.react(
            REPLICASET,
            &caches,
            &Delta::Updated { old: Rc::new(Object::ReplicaSet(rs.clone())), new: Rc::new(Object::ReplicaSet(smaller)) },
        );
        let deleted: Vec<String> = down
            .iter()
            .flat_map(|r| &r.calls)
            .filter_map(|c| match &c.request {
                ApiRequest::Delete(d) => Some(d.key.name.to_string()),
                _ => None,
            })
            .collect();
        assert_eq!(deleted.len(), 1);
        let victim = if deleted[0] == b.metadata.name { b } else { a_again };
        assert!(edge.react(REPLICASET, &caches, &Delta::Deleted(Rc::new(Object::Pod(victim)))).is_none());
    }

    #[test]
    fn mode_words_and_controller_names_parse() {
        assert_eq!(Mode::parse("edge"), Some(Mode::Edge));
        assert_eq!(Mode::parse("level"), Some(Mode::Level));
        assert_eq!(Mode::parse("sideways"), None);
        assert_eq!(loop_name("replicaset"), REPLICASET);
        assert!(supports(loop_name("deployment")));
        assert!(!supports(loop_name("garbagecollector")));
    }
}
