//! The persistent volume binder (pkg/controller/volume/persistentvolume,
//! `persistentvolume-binder-controller`), with the default class's provisioner beside it.
//!
//! A claim without a volume is bound to an Available volume that fits it (same class, enough
//! capacity, the access modes it asks for), or one is provisioned for it from its class. The
//! binding is two-sided, as upstream's: the volume's `claimRef` names the claim, then the
//! claim's `volumeName` names the volume, then both phases move to Bound. A claim whose class
//! does not exist stays Pending with `ProvisioningFailed`; a claim whose volume's claim is gone
//! is Released, and a `Delete` volume is deleted.
//!
//! minikube's `k8s.io/minikube-hostpath` provisioner is a pod of its own in a real cluster; here
//! it runs in this loop: the binder's `ExternalProvisioning` event, then the provisioner's
//! `Provisioning` and `ProvisioningSucceeded` and a hostPath volume `pvc-<claim uid>` under
//! `/tmp/hostpath-provisioner/<namespace>/<claim>`. Any other provisioner is waited for, as the
//! binder waits for an external provisioner that is not running.

use super::{Caches, Call, Controller, Sync};
use crate::api::storage::MINIKUBE_PROVISIONER;
use crate::api::{ApiRequest, DeleteRequest};
use crate::model::*;
use crate::runtime::events::{reference_to, EventSpec};
use crate::runtime::informer::Delta;

const BIND_COMPLETED: &str = "pv.kubernetes.io/bind-completed";
const BOUND_BY_CONTROLLER: &str = "pv.kubernetes.io/bound-by-controller";
const PROVISIONED_BY: &str = "pv.kubernetes.io/provisioned-by";
const STORAGE_PROVISIONER: &str = "volume.kubernetes.io/storage-provisioner";
const BETA_STORAGE_PROVISIONER: &str = "volume.beta.kubernetes.io/storage-provisioner";

#[derive(Debug, Default)]
pub struct VolumeBinder {
    events: Vec<EventSpec>,
}

impl VolumeBinder {
    pub fn new() -> Self {
        Self::default()
    }
}

fn claim_key_of(pv: &PersistentVolume) -> Option<ObjectKey> {
    let c = pv.spec.claim_ref.as_ref()?;
    Some(ObjectKey::new(Kind::PersistentVolumeClaim, &c.namespace, &c.name))
}

impl Controller for VolumeBinder {
    fn name(&self) -> &'static str {
        "persistentvolume-binder-controller"
    }
    fn event_source(&self) -> &'static str {
        "persistentvolume-controller"
    }
    fn watches(&self) -> &'static [Kind] {
        &[Kind::PersistentVolumeClaim, Kind::PersistentVolume, Kind::StorageClass]
    }

    fn on_delta(&mut self, caches: &Caches, delta: &Delta, _now: Time) -> Vec<ObjectKey> {
        let object = delta.object();
        match object.kind() {
            Kind::PersistentVolumeClaim => {
                // A deleted claim releases its volume.
                let volume = object.as_persistent_volume_claim().map(|c| c.spec.volume_name.clone()).unwrap_or_default();
                let mut keys = vec![object.key()];
                if matches!(delta, Delta::Deleted(_)) && !volume.is_empty() {
                    keys.push(ObjectKey::new(Kind::PersistentVolume, "", &volume));
                }
                keys
            }
            Kind::PersistentVolume => {
                let mut keys = vec![object.key()];
                keys.extend(object.as_persistent_volume().and_then(claim_key_of));
                keys
            }
            // A class created later: the claims waiting for it.
            Kind::StorageClass => caches[Kind::PersistentVolumeClaim]
                .iter()
                .filter_map(|o| o.as_persistent_volume_claim())
                .filter(|c| c.spec.volume_name.is_empty() && c.spec.storage_class_name.as_deref() == Some(object.meta().name.as_str()))
                .map(|c| ObjectKey::of(Kind::PersistentVolumeClaim, &c.metadata))
                .collect(),
            _ => Vec::new(),
        }
    }

    fn reconcile(&mut self, key: &ObjectKey, caches: &Caches, _now: Time) -> Sync {
        match key.kind {
            Kind::PersistentVolumeClaim => {
                match caches[Kind::PersistentVolumeClaim].get(key).and_then(|o| o.as_persistent_volume_claim()) {
                    Some(claim) if !claim.metadata.is_deleting() => self.sync_claim(claim, caches),
                    _ => Sync::nothing(),
                }
            }
            Kind::PersistentVolume => match caches[Kind::PersistentVolume].get(key).and_then(|o| o.as_persistent_volume()) {
                Some(pv) if !pv.metadata.is_deleting() => sync_volume(pv, caches),
                _ => Sync::nothing(),
            },
            _ => Sync::nothing(),
        }
    }

    fn reset(&mut self) {
        self.events.clear();
    }

    fn take_events(&mut self) -> Vec<EventSpec> {
        std::mem::take(&mut self.events)
    }
}

impl VolumeBinder {
    /// `syncClaim`.
    fn sync_claim(&mut self, claim: &PersistentVolumeClaim, caches: &Caches) -> Sync {
        let name = &claim.metadata.name;
        if !claim.spec.volume_name.is_empty() {
            return sync_bound_claim(claim, caches);
        }
        let volumes: Vec<&PersistentVolume> = caches[Kind::PersistentVolume].iter().filter_map(|o| o.as_persistent_volume()).collect();
        // A volume that already names this claim (provisioned for it, or pre-bound).
        if let Some(pv) = volumes.iter().find(|pv| names_claim(pv, claim)) {
            let mut bound = claim.clone();
            bound.spec.volume_name = pv.metadata.name.to_string();
            bound.metadata.annotations.insert(BIND_COMPLETED.into(), "yes".into());
            bound.metadata.annotations.insert(BOUND_BY_CONTROLLER.into(), "yes".into());
            let call = Call::new(ApiRequest::Update(Object::PersistentVolumeClaim(bound)));
            return Sync::with_steps(vec![vec![call]], format!("binding claim {name} to volume {}", pv.metadata.name));
        }
        let class = claim.spec.storage_class_name.clone().unwrap_or_default();
        if let Some(pv) = volumes.iter().find(|pv| fits(pv, claim, &class)) {
            let mut taken = (*pv).clone();
            taken.spec.claim_ref = Some(claim_reference(claim));
            taken.metadata.annotations.insert(BOUND_BY_CONTROLLER.into(), "yes".into());
            let call = Call::new(ApiRequest::Update(Object::PersistentVolume(taken)));
            return Sync::with_steps(vec![vec![call]], format!("binding volume {} to claim {name}", pv.metadata.name));
        }
        let reference = reference_to(&Object::PersistentVolumeClaim(claim.clone()));
        if class.is_empty() {
            let message = "no persistent volumes available for this claim and no storage class is set";
            self.events.push(EventSpec::normal(reference, "FailedBinding", message));
            return Sync::with_steps(Vec::new(), format!("claim {name}: no volume and no class"));
        }
        let key = ObjectKey::new(Kind::StorageClass, "", &class);
        let Some(sc) = caches[Kind::StorageClass].get(&key).and_then(|o| o.as_storage_class()) else {
            let message = format!("storageclass.storage.k8s.io {class:?} not found");
            self.events.push(EventSpec::warning(reference, "ProvisioningFailed", message));
            return Sync::with_steps(Vec::new(), format!("claim {name}: storage class {class} not found"));
        };
        let message = format!(
            "Waiting for a volume to be created either by the external provisioner '{}' or manually by the system administrator. If volume creation is delayed, please verify that the provisioner is running and correctly registered.",
            sc.provisioner
        );
        self.events.push(EventSpec::normal(reference.clone(), "ExternalProvisioning", message));
        // `setClaimProvisioner`: the claim names its provisioner, which is how an external
        // provisioner knows the claim is its to serve.
        // The provisioner answers the annotated claim, on the sync its update brings.
        if claim.metadata.annotations.get(STORAGE_PROVISIONER) != Some(&sc.provisioner) {
            let mut annotated = claim.clone();
            annotated.metadata.annotations.insert(BETA_STORAGE_PROVISIONER.into(), sc.provisioner.clone());
            annotated.metadata.annotations.insert(STORAGE_PROVISIONER.into(), sc.provisioner.clone());
            let call = Call::new(ApiRequest::Update(Object::PersistentVolumeClaim(annotated)));
            return Sync::with_steps(vec![vec![call]], format!("claim {name}: waiting for provisioner {}", sc.provisioner));
        }
        if sc.provisioner != MINIKUBE_PROVISIONER {
            return Sync::with_steps(Vec::new(), format!("claim {name}: waiting for provisioner {}", sc.provisioner));
        }
        let pv = provision(claim, sc);
        let pv_name = pv.metadata.name.to_string();
        let claim_path = format!("{}/{}", claim.metadata.namespace, claim.metadata.name);
        self.events.push(EventSpec::normal(
            reference.clone(),
            "Provisioning",
            format!("External provisioner is provisioning volume for claim {claim_path:?}"),
        ));
        let call = Call::new(ApiRequest::Create(Object::PersistentVolume(pv)))
            .quiet_if_exists()
            .on_success(EventSpec::normal(reference.clone(), "ProvisioningSucceeded", format!("Successfully provisioned volume {pv_name}")))
            .on_failure(EventSpec::warning(reference, "ProvisioningFailed", "failed to provision volume: "));
        Sync::with_steps(vec![vec![call]], format!("provisioning {pv_name} for claim {name}"))
    }
}

/// A claim that names its volume: Bound once the volume names it back (`syncBoundClaim`).
fn sync_bound_claim(claim: &PersistentVolumeClaim, caches: &Caches) -> Sync {
    let key = ObjectKey::new(Kind::PersistentVolume, "", &claim.spec.volume_name);
    let Some(pv) = caches[Kind::PersistentVolume].get(&key).and_then(|o| o.as_persistent_volume()) else {
        return Sync::nothing();
    };
    if !names_claim(pv, claim) || claim.phase() == "Bound" {
        return Sync::nothing();
    }
    let mut bound = claim.clone();
    bound.status = PersistentVolumeClaimStatus {
        phase: Some("Bound".into()),
        access_modes: pv.spec.access_modes.clone(),
        capacity: pv.spec.capacity.clone(),
    };
    let call = Call::new(ApiRequest::UpdateStatus(Object::PersistentVolumeClaim(bound)));
    Sync::with_steps(vec![vec![call]], format!("claim {} Bound", claim.metadata.name))
}

/// `syncVolume`: Available without a claim, Bound with its claim, Released (and deleted, for
/// `Delete`) once its claim is gone.
fn sync_volume(pv: &PersistentVolume, caches: &Caches) -> Sync {
    let name = &pv.metadata.name;
    let phase = match &pv.spec.claim_ref {
        None => "Available",
        Some(c) => {
            let key = ObjectKey::new(Kind::PersistentVolumeClaim, &c.namespace, &c.name);
            let claim = caches[Kind::PersistentVolumeClaim].get(&key).and_then(|o| o.as_persistent_volume_claim());
            match claim {
                Some(claim) if c.uid.is_empty() || claim.metadata.uid.as_str() == c.uid => "Bound",
                _ => "Released",
            }
        }
    };
    // Released is written first, then a `Delete` volume is deleted (its protection finalizer
    // comes off only once it is no longer Bound).
    if pv.phase() == phase && phase == "Released" && pv.spec.persistent_volume_reclaim_policy.as_deref() == Some("Delete") {
        let call = Call::new(ApiRequest::Delete(DeleteRequest::new(ObjectKey::of(Kind::PersistentVolume, &pv.metadata))));
        return Sync::with_steps(vec![vec![call]], format!("deleting released volume {name}"));
    }
    if pv.phase() == phase {
        return Sync::nothing();
    }
    let mut next = pv.clone();
    next.status.phase = Some(phase.into());
    let call = Call::new(ApiRequest::UpdateStatus(Object::PersistentVolume(next)));
    Sync::with_steps(vec![vec![call]], format!("volume {name} {phase}"))
}

/// Whether the volume's `claimRef` names this claim (and, when it carries one, its UID).
fn names_claim(pv: &PersistentVolume, claim: &PersistentVolumeClaim) -> bool {
    pv.spec.claim_ref.as_ref().is_some_and(|c| {
        c.name == claim.metadata.name.as_str()
            && c.namespace == claim.metadata.namespace.as_str()
            && (c.uid.is_empty() || c.uid == claim.metadata.uid.as_str())
    })
}

/// `findBestMatchForClaim` in short: an unclaimed volume of the claim's class, with every access
/// mode the claim asks for and at least the capacity it requests.
fn fits(pv: &PersistentVolume, claim: &PersistentVolumeClaim, class: &str) -> bool {
    let size = |q: Option<&Quantity>| q.and_then(Quantity::value).unwrap_or(0);
    pv.spec.claim_ref.is_none()
        && !pv.metadata.is_deleting()
        && pv.spec.storage_class_name == class
        && claim.spec.access_modes.iter().all(|m| pv.spec.access_modes.contains(m))
        && size(pv.spec.capacity.get("storage")) >= size(claim.request())
}

fn claim_reference(claim: &PersistentVolumeClaim) -> ClaimReference {
    ClaimReference {
        api_version: "v1".into(),
        kind: "PersistentVolumeClaim".into(),
        name: claim.metadata.name.to_string(),
        namespace: claim.metadata.namespace.to_string(),
        uid: claim.metadata.uid.to_string(),
    }
}

/// The hostpath provisioner's volume for a claim: `pvc-<uid>`, the claim's size and modes, the
/// class's reclaim policy, pre-bound to the claim.
fn provision(claim: &PersistentVolumeClaim, sc: &StorageClass) -> PersistentVolume {
    let mut annotations = StringMap::new();
    annotations.insert("hostPathProvisionerIdentity".into(), "minikube".into());
    annotations.insert(PROVISIONED_BY.into(), sc.provisioner.clone());
    let mut capacity = std::collections::BTreeMap::new();
    if let Some(q) = claim.request() {
        capacity.insert("storage".to_string(), q.clone());
    }
    PersistentVolume {
        metadata: ObjectMeta { name: format!("pvc-{}", claim.metadata.uid).into(), annotations, ..Default::default() },
        spec: PersistentVolumeSpec {
            access_modes: claim.spec.access_modes.clone(),
            capacity,
            claim_ref: Some(claim_reference(claim)),
            host_path: Some(HostPathVolumeSource {
                path: format!("/tmp/hostpath-provisioner/{}/{}", claim.metadata.namespace, claim.metadata.name),
                type_: Some(String::new()),
            }),
            persistent_volume_reclaim_policy: sc.reclaim_policy.clone(),
            storage_class_name: sc.metadata.name.to_string(),
            volume_mode: claim.spec.volume_mode.clone(),
        }
        .into(),
        status: PersistentVolumeStatus::default(),
    }
}
