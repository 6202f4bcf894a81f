//! The StatefulSet controller (pkg/controller/statefulset, `statefulset-controller`): pods with
//! a stable identity, `<set>-<ordinal>`, made and removed in order.
//!
//! A sync follows `defaultStatefulSetControl.UpdateStatefulSet`: it settles the set's
//! revisions (`revisions.rs`: a ControllerRevision per pod template, so a pod of an older
//! revision can be made again), then walks the ordinals (`control.rs`). With `OrderedReady` a
//! pod is created only when every lower ordinal is Running and Ready (and available for
//! `minReadySeconds`), one write per sync, and the set scales down from its highest ordinal, one
//! pod at a time; `Parallel` creates and deletes them all at once. Only when every wanted pod is
//! there and healthy does a RollingUpdate replace out-of-date pods, from the highest ordinal down
//! to `partition`, one at a time; OnDelete leaves that to whoever deletes them. The status counts
//! what the sync found, adjusted for its own writes, as upstream's does.
//!
//! Each pod's claims (`volumeClaimTemplates`, `<template>-<set>-<ordinal>`) are created before
//! the pod and kept after it: the retention policy is upstream's default, Retain, and the
//! policy field itself is not modelled. Also not modelled: `ordinals.start` and `maxUnavailable` (alpha upstream), and the revision hash's collision
//! count (the hash of a template here is computed from its JSON, so two templates never meet
//! under one name in practice).

mod control;
mod revisions;

use super::{Action, Caches, Call, Controller, Sync};
use crate::api::ApiRequest;
use crate::model::*;
use crate::runtime::informer::Delta;

/// The label naming a pod's own name, so a Service can select one replica.
pub const POD_NAME_LABEL: &str = "statefulset.kubernetes.io/pod-name";
/// The label carrying a pod's ordinal (`PodIndexLabel`, on by default since 1.28).
pub const POD_INDEX_LABEL: &str = "apps.kubernetes.io/pod-index";
/// The label carrying the name of the ControllerRevision a pod was made from.
pub const CONTROLLER_REVISION_HASH: &str = "controller-revision-hash";

#[derive(Debug, Default)]
pub struct StatefulSetController;

impl StatefulSetController {
    pub fn new() -> Self {
        StatefulSetController
    }

    /// The StatefulSet that controls `pod`, if it is in the cache with the referenced UID.
    fn controlling_set(caches: &Caches, pod: &Object) -> Option<ObjectKey> {
        let owner = pod.meta().controller_ref().filter(|r| r.kind == "StatefulSet")?;
        let key = ObjectKey::new(Kind::StatefulSet, &pod.meta().namespace, &owner.name);
        caches[Kind::StatefulSet].get(&key).filter(|s| s.meta().uid == owner.uid).map(|_| key)
    }

    /// `getStatefulSetsForPod`: the sets whose selector matches an orphan pod.
    fn matching_sets(caches: &Caches, pod: &Object) -> Vec<ObjectKey> {
        caches[Kind::StatefulSet]
            .in_namespace(&pod.meta().namespace)
            .filter_map(|o| o.as_stateful_set())
            .filter(|s| !s.spec.selector.is_empty() && s.spec.selector.matches(&pod.meta().labels))
            .map(|s| ObjectKey::of(Kind::StatefulSet, &s.metadata))
            .collect()
    }

    fn pod_keys(caches: &Caches, pod: &Object) -> Vec<ObjectKey> {
        match Self::controlling_set(caches, pod) {
            Some(key) => vec![key],
            None if pod.meta().controller_ref().is_none() && !pod.meta().is_deleting() => Self::matching_sets(caches, pod),
            None => Vec::new(),
        }
    }
}

impl Controller for StatefulSetController {
    fn name(&self) -> &'static str {
        "statefulset-controller"
    }
    /// Pods and sets; the revisions and claims are read from their listers only (upstream
    /// registers no handler for them).
    fn watches(&self) -> &'static [Kind] {
        &[Kind::StatefulSet, Kind::Pod, Kind::ControllerRevision, Kind::PersistentVolumeClaim]
    }

    fn on_delta(&mut self, caches: &Caches, delta: &Delta, _now: Time) -> Vec<ObjectKey> {
        let object = delta.object();
        match (object.kind(), delta) {
            (Kind::StatefulSet, _) => vec![object.key()],
            (Kind::Pod, Delta::Updated { old, new }) => {
                let mut keys = Self::pod_keys(caches, new);
                if old.meta().controller_ref() != new.meta().controller_ref() || old.meta().labels != new.meta().labels {
                    keys.extend(Self::controlling_set(caches, old));
                }
                keys.sort();
                keys.dedup();
                keys
            }
            (Kind::Pod, Delta::Deleted(pod)) => Self::controlling_set(caches, pod).into_iter().collect(),
            (Kind::Pod, _) => Self::pod_keys(caches, object),
            _ => Vec::new(),
        }
    }

    fn reconcile(&mut self, key: &ObjectKey, caches: &Caches, now: Time) -> Sync {
        let Some(set) = caches[Kind::StatefulSet].get(key).and_then(|o| o.as_stateful_set()) else {
            return Sync::nothing();
        };
        if set.metadata.is_deleting() || set.spec.selector.is_empty() {
            return Sync::nothing();
        }
        let (pods, adoptions) = claim_pods(caches, set);
        let history = revisions::settle(caches, set);
        let mut steps = vec![adoptions, history.writes.clone()];
        let outcome = control::update(set, &pods, &caches[Kind::PersistentVolumeClaim], &history, now);
        let summary =
            format!("StatefulSet {}: {} of {} pods, {}", set.metadata.name, outcome.status.ready_replicas, set.replicas(), outcome.words);
        steps.extend(outcome.steps);
        let status = control::complete_rolling_update(set, outcome.status);
        if status != set.status {
            let mut next = set.clone();
            next.status = status.clone();
            steps.push(vec![Call::new(ApiRequest::UpdateStatus(Object::StatefulSet(next)))]);
        }
        steps.push(revisions::truncate(set, &pods, &history, &status));
        let mut then = Action::AwaitChange;
        // `enqueueSSAfter(set, minReadySeconds)`: look again once the ready pods may count.
        if set.spec.min_ready_seconds > 0 && status.available_replicas != set.replicas() {
            then = Action::RequeueAfter(Duration::secs(set.spec.min_ready_seconds as u64));
        }
        Sync::with_steps(steps, summary).then(then)
    }

    fn reset(&mut self) {}
}

/// The controller reference every pod and revision of `set` carries.
pub fn owner_reference(set: &StatefulSet) -> OwnerReference {
    OwnerReference {
        api_version: "apps/v1".into(),
        kind: "StatefulSet".into(),
        name: set.metadata.name.to_string(),
        uid: set.metadata.uid.to_string(),
        controller: Some(true),
        block_owner_deletion: Some(true),
    }
}

/// `getParentNameAndOrdinal`: `web-3` is ordinal 3 of `web`.
pub fn parent_and_ordinal(pod_name: &str) -> Option<(&str, i32)> {
    let (parent, ordinal) = pod_name.rsplit_once('-')?;
    if ordinal.is_empty() || !ordinal.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    Some((parent, ordinal.parse().ok()?))
}

/// `getPodsForStatefulSet`: the pods it controls, plus matching orphans it adopts, keeping only
/// those whose name makes them a member (`isMemberOf`: `<set>-<ordinal>`).
fn claim_pods<'a>(caches: &'a Caches, set: &StatefulSet) -> (Vec<&'a Pod>, Vec<Call>) {
    let selector = &set.spec.selector;
    let member = |p: &Pod| parent_and_ordinal(&p.metadata.name).is_some_and(|(parent, _)| parent == set.metadata.name.as_str());
    let mut owned: Vec<&Pod> = caches[Kind::Pod]
        .owned_by(&set.metadata.uid)
        .filter_map(|o| o.as_pod())
        .filter(|p| selector.matches(&p.metadata.labels) && member(p))
        .collect();
    let mut adoptions = Vec::new();
    for pod in caches[Kind::Pod].owned_by("").filter_map(|o| o.as_pod()) {
        if pod.metadata.namespace != set.metadata.namespace || pod.metadata.is_deleting() || !selector.matches(&pod.metadata.labels) {
            continue;
        }
        if !member(pod) {
            continue;
        }
        let mut adopted = pod.clone();
        adopted.metadata.owner_references.push(owner_reference(set));
        adoptions.push(Call::new(ApiRequest::Update(Object::Pod(adopted))));
        owned.push(pod);
    }
    (owned, adoptions)
}

#[cfg(test)]
mod tests;
