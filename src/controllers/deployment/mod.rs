//! The Deployment controller (pkg/controller/deployment): one ReplicaSet per version of the pod
//! template, rolled from old to new by the Deployment's strategy.
//!
//! Its event handlers only pick the Deployment to look at: a Deployment that changed, the owner
//! of a ReplicaSet that changed (or every Deployment that could adopt an orphan), and a Recreate
//! Deployment whose last pod went away. `reconcile` is upstream's `syncDeployment`: it reads the
//! caches, never touches a cached object, and returns its writes in order. The strategies live
//! in `rolling` and `recreate`, the shared steps in `sync`, the Progressing condition in
//! `progress`, the arithmetic in `util` and the pod-template-hash in `hash`.

pub mod hash;
mod progress;
mod recreate;
mod rolling;
mod sync;
pub mod util;

#[cfg(test)]
mod tests;

use self::sync::{controller_ref, Path, Syncer};
use self::util::*;
use crate::api::{ApiRequest, Reason};
use crate::controllers::{Action, Caches, Call, Controller, Outcome, Sync};
use crate::model::*;
use crate::runtime::fasthash::FastMap;
use crate::runtime::informer::Delta;
use std::rc::Rc;

pub use self::hash::{compute_hash, POD_TEMPLATE_HASH};

/// The controller's in-memory state: only what it learnt from its own writes' outcomes.
#[derive(Debug, Default)]
pub struct DeploymentController {
    /// Creates of a new ReplicaSet that failed (not because it existed): Deployment key to the
    /// ReplicaSet's name and the error, reported on the Deployment by the next sync.
    /// Only looked up, never walked, so hashed.
    create_failures: FastMap<ObjectKey, (String, String)>,
}

impl DeploymentController {
    pub fn new() -> Self {
        Self::default()
    }
}

impl Controller for DeploymentController {
    fn name(&self) -> &'static str {
        "deployment-controller"
    }
    /// Pods first: with the other controllers' declarations this starts the informers in the
    /// order kube-controller-manager always started them here (pods, ReplicaSets,
    /// Deployments, nodes, leases), so request ids and traces stay as they were.
    fn watches(&self) -> &'static [Kind] {
        &[Kind::Pod, Kind::ReplicaSet, Kind::Deployment]
    }

    fn on_delta(&mut self, caches: &Caches, delta: &Delta, _now: Time) -> Vec<ObjectKey> {
        match delta.object().kind() {
            Kind::Deployment => vec![delta.object().key()],
            Kind::ReplicaSet => replica_set_keys(caches, delta),
            Kind::Pod => match delta {
                Delta::Deleted(pod) => deleted_pod_keys(caches, pod),
                _ => Vec::new(),
            },
            _ => Vec::new(),
        }
    }

    fn reconcile(&mut self, key: &ObjectKey, caches: &Caches, now: Time) -> Sync {
        let create_failure = self.create_failures.remove(key);
        let Some(object) = caches[Kind::Deployment].get(key) else { return Sync::nothing() };
        let Some(d) = object.as_deployment() else { return Sync::nothing() };
        let mut syncer = Syncer::new(caches, object, d, now);
        syncer.create_failure = create_failure;
        // An error ends the sync after the writes already decided, as upstream's early return.
        let _ = syncer.sync_deployment();
        finish(syncer)
    }

    fn on_outcome(&mut self, key: &ObjectKey, call: &Call, outcome: &Outcome) {
        if let (ApiRequest::Create(Object::ReplicaSet(rs)), Outcome::Failed(err)) = (&call.request, outcome) {
            if err.reason != Reason::AlreadyExists {
                self.create_failures.insert(key.clone(), (rs.metadata.name.to_string(), err.message.clone()));
            }
        }
    }

    fn reset(&mut self) {
        self.create_failures.clear();
    }
}

/// The sync's writes, what to do next, and the decision in words.
fn finish(s: Syncer) -> Sync {
    let summary = (!s.steps.is_empty()).then(|| summary(&s));
    let then = s.requeue_after.map(Action::RequeueAfter).unwrap_or(Action::AwaitChange);
    Sync { steps: s.steps, then, summary }
}

fn summary(s: &Syncer) -> String {
    let name = &s.d.metadata.name;
    let want = replicas(&s.d);
    let status = s.status.as_ref().unwrap_or(&s.d.status);
    let available = status.available_replicas;
    match s.path {
        Path::SelectingAll => format!("Deployment {name}: an empty selector selects every pod, refusing"),
        Path::StatusOnly => format!("Deployment {name}: being deleted, {available} of {want} available"),
        Path::Paused => format!("Deployment {name}: paused, {available} of {want} available"),
        Path::Scaling => format!("Deployment {name}: scaling to {want}, {available} available"),
        Path::Rollout if deployment_complete(&s.d, status) => format!("Deployment {name}: {available} of {want} available"),
        Path::Rollout => match &s.new_rs_name {
            Some(rs) => format!("Deployment {name}: rolling out {rs} ({} of {want} updated)", status.updated_replicas),
            None => format!("Deployment {name}: rolling out, waiting for old pods to go"),
        },
    }
}

impl Syncer<'_> {
    /// `syncDeployment`.
    fn sync_deployment(&mut self) -> sync::SyncResult<()> {
        if self.d.spec.selector.is_empty() {
            return self.selecting_all();
        }
        let rs_list = self.claim_replica_sets();
        if self.d.metadata.is_deleting() {
            self.path = Path::StatusOnly;
            return self.sync_status_only(&rs_list);
        }
        self.check_paused_conditions();
        if self.d.spec.paused {
            self.path = Path::Paused;
            return self.sync(&rs_list);
        }
        if self.is_scaling_event(&rs_list)? {
            self.path = Path::Scaling;
            return self.sync(&rs_list);
        }
        match strategy_type(&self.d) {
            RECREATE => self.rollout_recreate(&rs_list),
            ROLLING_UPDATE => self.rollout_rolling(&rs_list),
            other => Err(format!("unexpected deployment strategy type: {other}")),
        }
    }

    /// An empty selector would select every pod: upstream refuses, records a warning and only
    /// acknowledges the generation (validation keeps such Deployments out of the API anyway).
    fn selecting_all(&mut self) -> sync::SyncResult<()> {
        self.path = Path::SelectingAll;
        if self.d.status.observed_generation < self.d.metadata.generation {
            self.d.to_mut().status.observed_generation = self.d.metadata.generation;
            let event = crate::runtime::events::EventSpec::warning(
                self.reference.clone(),
                "SelectingAll",
                "This deployment is selecting all pods. A non-empty selector is required.",
            );
            self.steps.push(vec![Call::new(ApiRequest::UpdateStatus(Object::Deployment(Deployment::clone(&self.d)))).on_success(event)]);
        }
        Ok(())
    }

    /// `getReplicaSetsForDeployment` with `ClaimReplicaSets`: the ReplicaSets this Deployment
    /// controls and still selects, after releasing the ones it no longer selects and adopting
    /// matching orphans (both writes of the ReplicaSet's ownerReferences).
    fn claim_replica_sets(&mut self) -> Vec<Rc<ReplicaSet>> {
        let caches = self.caches;
        let (ns, uid) = (self.d.metadata.namespace.clone(), self.d.metadata.uid.clone());
        let deleting = self.d.metadata.is_deleting();
        let mut claimed = Vec::new();
        for rs in caches[Kind::ReplicaSet].owned_by(&uid).filter_map(|o| o.as_replica_set()) {
            if rs.metadata.namespace != ns {
                continue;
            }
            if self.d.spec.selector.matches(&rs.metadata.labels) {
                claimed.push(Rc::new(rs.clone()));
            } else if !deleting {
                let mut released = rs.clone();
                released.metadata.owner_references.retain(|r| r.uid != uid);
                self.update_rs(released, None);
            }
        }
        if !deleting {
            // The informer's owner index keeps the orphans (no controller) under "", in key
            // order, so this visits only them instead of every ReplicaSet in the namespace.
            let orphans = caches[Kind::ReplicaSet].owned_by("").filter_map(|o| o.as_replica_set()).filter(|rs| {
                rs.metadata.namespace == ns
                    && rs.metadata.controller_ref().is_none()
                    && !rs.metadata.is_deleting()
                    && self.d.spec.selector.matches(&rs.metadata.labels)
            });
            let orphans: Vec<ReplicaSet> = orphans.cloned().collect();
            for rs in orphans {
                let mut adopted = rs;
                adopted.metadata.owner_references.push(controller_ref(&self.d));
                claimed.push(self.update_rs(adopted, None));
            }
        }
        crate::sort::sort_by(&mut claimed, |a, b| a.metadata.name.cmp(&b.metadata.name));
        claimed
    }
}

/// `addReplicaSet` / `updateReplicaSet` / `deleteReplicaSet`: the owning Deployment, or for an
/// orphan every Deployment that might adopt it.
fn replica_set_keys(caches: &Caches, delta: &Delta) -> Vec<ObjectKey> {
    let mut keys = Vec::new();
    match delta {
        Delta::Added(o) | Delta::Deleted(o) => {
            let Some(rs) = o.as_replica_set() else { return keys };
            match rs.metadata.controller_ref() {
                Some(r) => keys.extend(resolve_controller_ref(caches, &rs.metadata.namespace, r)),
                None if matches!(delta, Delta::Added(_)) => keys.extend(deployments_for_orphan(caches, rs)),
                None => {}
            }
        }
        Delta::Updated { old, new } => {
            let (Some(old), Some(cur)) = (old.as_replica_set(), new.as_replica_set()) else { return keys };
            if old.metadata.resource_version == cur.metadata.resource_version && old.metadata.resource_version != 0 {
                // A re-list delivering the same version: nothing changed.
                return keys;
            }
            let (old_ref, cur_ref) = (old.metadata.controller_ref(), cur.metadata.controller_ref());
            if old_ref != cur_ref {
                if let Some(r) = old_ref {
                    keys.extend(resolve_controller_ref(caches, &old.metadata.namespace, r));
                }
            }
            match cur_ref {
                Some(r) => keys.extend(resolve_controller_ref(caches, &cur.metadata.namespace, r)),
                None if old.metadata.labels != cur.metadata.labels || old_ref != cur_ref => {
                    keys.extend(deployments_for_orphan(caches, cur))
                }
                None => {}
            }
        }
    }
    keys
}

/// `resolveControllerRef`: the Deployment an owner reference names, if it is still that one.
fn resolve_controller_ref(caches: &Caches, namespace: &str, r: &OwnerReference) -> Option<ObjectKey> {
    if r.kind != Kind::Deployment.as_str() {
        return None;
    }
    let key = ObjectKey::new(Kind::Deployment, namespace, &r.name);
    let d = caches[Kind::Deployment].get(&key)?;
    (d.meta().uid == r.uid).then_some(key)
}

/// `getDeploymentsForReplicaSet`: Deployments in the namespace whose selector matches.
fn deployments_for_orphan(caches: &Caches, rs: &ReplicaSet) -> Vec<ObjectKey> {
    caches[Kind::Deployment]
        .in_namespace(&rs.metadata.namespace)
        .filter(|o| o.as_deployment().is_some_and(|d| !d.spec.selector.is_empty() && d.spec.selector.matches(&rs.metadata.labels)))
        .map(|o| o.key())
        .collect()
}

/// `deletePod`: a Recreate Deployment waits for its last old pod to go before creating the new
/// ReplicaSet, so the deletion of its last pod wakes it.
fn deleted_pod_keys(caches: &Caches, pod: &Object) -> Vec<ObjectKey> {
    let Some((key, d)) = deployment_for_pod(caches, pod) else { return Vec::new() };
    if strategy_type(d) != RECREATE {
        return Vec::new();
    }
    let rs_uids: Vec<&str> = caches[Kind::ReplicaSet]
        .owned_by(&d.metadata.uid)
        .filter_map(|o| o.as_replica_set())
        .filter(|rs| d.spec.selector.matches(&rs.metadata.labels))
        .map(|rs| rs.metadata.uid.as_str())
        .collect();
    let any_pod = rs_uids.iter().any(|uid| {
        caches[Kind::Pod]
            .owned_by(uid)
            .filter_map(|o| o.as_pod())
            .any(|p| p.metadata.namespace == d.metadata.namespace && d.spec.selector.matches(&p.metadata.labels))
    });
    if any_pod {
        Vec::new()
    } else {
        vec![key]
    }
}

/// `getDeploymentForPod`: pod → its ReplicaSet → that ReplicaSet's Deployment.
fn deployment_for_pod<'a>(caches: &'a Caches, pod: &Object) -> Option<(ObjectKey, &'a Deployment)> {
    let meta = pod.meta();
    let pod_ref = meta.controller_ref().filter(|r| r.kind == Kind::ReplicaSet.as_str())?;
    let rs_obj = caches[Kind::ReplicaSet].get(&ObjectKey::new(Kind::ReplicaSet, &meta.namespace, &pod_ref.name))?;
    let rs = rs_obj.as_replica_set().filter(|rs| rs.metadata.uid == pod_ref.uid)?;
    let key = resolve_controller_ref(caches, &meta.namespace, rs.metadata.controller_ref()?)?;
    let d = caches[Kind::Deployment].get(&key)?.as_deployment()?;
    Some((key, d))
}
