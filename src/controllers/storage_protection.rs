//! The PVC and PV protection controllers (pkg/controller/volume/pvcprotection and
//! pvprotection): a claim a pod still mounts, or a volume still bound, is not removed when
//! deleted. It stays Terminating with its protection finalizer until the last pod using it is
//! gone (or finished), or the volume is no longer Bound; then the finalizer comes off and the API
//! server lets it go. Upstream runs the two as separate loops; here they are one loop (named for
//! the claim's) over both kinds.

use super::{Caches, Call, Controller, Sync};
use crate::api::storage::{PVC_PROTECTION, PV_PROTECTION};
use crate::api::ApiRequest;
use crate::model::*;
use crate::runtime::informer::Delta;

#[derive(Debug, Default)]
pub struct StorageProtection;

impl StorageProtection {
    pub fn new() -> Self {
        StorageProtection
    }
}

/// Whether a pod that is not finished mounts the claim (`podUsesPVC`).
fn in_use(caches: &Caches, claim: &PersistentVolumeClaim) -> bool {
    caches[Kind::Pod].in_namespace(&claim.metadata.namespace).filter_map(|o| o.as_pod()).any(|p| {
        !p.is_terminal()
            && p.spec
                .volumes
                .iter()
                .any(|v| v.persistent_volume_claim.as_ref().is_some_and(|c| c.claim_name == claim.metadata.name.as_str()))
    })
}

fn without(meta: &ObjectMeta, finalizer: &str) -> Vec<String> {
    meta.finalizers.iter().filter(|f| *f != finalizer).cloned().collect()
}

impl Controller for StorageProtection {
    fn name(&self) -> &'static str {
        "persistentvolumeclaim-protection-controller"
    }
    fn event_source(&self) -> &'static str {
        "pvc-protection-controller"
    }
    fn watches(&self) -> &'static [Kind] {
        &[Kind::PersistentVolumeClaim, Kind::PersistentVolume, Kind::Pod]
    }

    fn on_delta(&mut self, _caches: &Caches, delta: &Delta, _now: Time) -> Vec<ObjectKey> {
        let object = delta.object();
        match object.kind() {
            Kind::PersistentVolumeClaim | Kind::PersistentVolume => vec![object.key()],
            // A pod that goes or finishes may free the claims it mounted.
            Kind::Pod => {
                let Some(pod) = object.as_pod() else { return Vec::new() };
                if !matches!(delta, Delta::Deleted(_)) && !pod.is_terminal() {
                    return Vec::new();
                }
                pod.spec
                    .volumes
                    .iter()
                    .filter_map(|v| v.persistent_volume_claim.as_ref())
                    .map(|c| ObjectKey::new(Kind::PersistentVolumeClaim, &pod.metadata.namespace, &c.claim_name))
                    .collect()
            }
            _ => Vec::new(),
        }
    }

    fn reconcile(&mut self, key: &ObjectKey, caches: &Caches, _now: Time) -> Sync {
        let Some(object) = caches.get(key.kind).and_then(|s| s.get(key)) else { return Sync::nothing() };
        let meta = object.meta();
        if !meta.is_deleting() {
            return Sync::nothing();
        }
        let next = match &**object {
            Object::PersistentVolumeClaim(claim) if claim.metadata.finalizers.iter().any(|f| f == PVC_PROTECTION) => {
                if in_use(caches, claim) {
                    return Sync::with_steps(Vec::new(), format!("claim {} is in use", key.name));
                }
                let mut next = claim.clone();
                next.metadata.finalizers = without(&claim.metadata, PVC_PROTECTION);
                Object::PersistentVolumeClaim(next)
            }
            Object::PersistentVolume(pv) if pv.metadata.finalizers.iter().any(|f| f == PV_PROTECTION) => {
                if pv.phase() == "Bound" {
                    return Sync::with_steps(Vec::new(), format!("volume {} is bound", key.name));
                }
                let mut next = pv.clone();
                next.metadata.finalizers = without(&pv.metadata, PV_PROTECTION);
                Object::PersistentVolume(next)
            }
            _ => return Sync::nothing(),
        };
        Sync::with_steps(vec![vec![Call::new(ApiRequest::Update(next))]], format!("removing the protection finalizer of {}", key.name))
    }

    fn reset(&mut self) {}
}
