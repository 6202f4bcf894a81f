//! What the API server does for storage objects beyond storing them: the default StorageClass
//! a cluster starts with, the DefaultStorageClass admission plugin, the claim's defaults,
//! validation messages and the fields an update may not change.
//!
//! The default class is minikube's: `standard`, provisioned by `k8s.io/minikube-hostpath`,
//! bound `Immediate`ly, volumes deleted with their claim. (kind ships `standard` too, but with
//! `rancher.io/local-path` and `WaitForFirstConsumer`, which needs the scheduler to pick a node
//! before the volume exists; Immediate keeps the binder's story to one controller.)

use super::errors::FieldError;
use crate::model::*;
use crate::rng::Rng;
use crate::store::Etcd;

/// The default class's name and provisioner.
pub const DEFAULT_CLASS: &str = "standard";
pub const MINIKUBE_PROVISIONER: &str = "k8s.io/minikube-hostpath";

/// The class `bootstrap` creates, unless one of its name is already there. Its UID comes from a
/// seed of its own, so the simulation's draws are unchanged.
pub fn default_class(etcd: &Etcd) -> Option<Object> {
    if etcd.get(&ObjectKey::new(Kind::StorageClass, "", DEFAULT_CLASS)).is_some() {
        return None;
    }
    let mut sc = StorageClass {
        metadata: ObjectMeta { name: DEFAULT_CLASS.into(), ..Default::default() },
        provisioner: MINIKUBE_PROVISIONER.into(),
        reclaim_policy: Some("Delete".into()),
        volume_binding_mode: Some("Immediate".into()),
        allow_volume_expansion: None,
    };
    let mut annotations = StringMap::new();
    annotations.insert(IS_DEFAULT_CLASS.into(), "true".into());
    sc.metadata.annotations = annotations;
    let mut labels = StringMap::new();
    labels.insert("addonmanager.kubernetes.io/mode".into(), "EnsureExists".into());
    sc.metadata.labels = labels.into();
    sc.metadata.uid = Rng::new(0x7374_6f72_6167_6531).uuid().into();
    sc.metadata.creation_timestamp = Some(Time(0));
    Some(Object::StorageClass(sc))
}

/// The DefaultStorageClass admission plugin: a claim that names no class gets the default one
/// (the newest, if several are marked). An explicit `""` means "no class" and is kept.
pub fn admit_default_class(etcd: &Etcd, pvc: &mut PersistentVolumeClaim) {
    if pvc.spec.storage_class_name.is_some() {
        return;
    }
    let default = etcd
        .list(Kind::StorageClass, None)
        .filter_map(|o| o.as_storage_class())
        .filter(|sc| sc.is_default())
        .max_by_key(|sc| (sc.metadata.creation_timestamp, sc.metadata.name.clone()));
    if let Some(sc) = default {
        pvc.spec.storage_class_name = Some(sc.metadata.name.to_string());
    }
}

/// The finalizers the StorageObjectInUseProtection admission plugin puts on every claim and
/// volume, which the protection controllers take off once nothing uses the object.
pub const PVC_PROTECTION: &str = "kubernetes.io/pvc-protection";
pub const PV_PROTECTION: &str = "kubernetes.io/pv-protection";

/// StorageObjectInUseProtection: a new claim or volume carries its protection finalizer.
pub fn admit_protection(object: &mut Object) {
    let finalizer = match object {
        Object::PersistentVolumeClaim(_) => PVC_PROTECTION,
        Object::PersistentVolume(_) => PV_PROTECTION,
        _ => return,
    };
    let finalizers = &mut object.meta_mut().finalizers;
    if !finalizers.iter().any(|f| f == finalizer) {
        finalizers.push(finalizer.to_string());
    }
}

/// `SetDefaults_PersistentVolumeClaimSpec`, `SetDefaults_PersistentVolume` and the class's
/// defaults (`Delete`, `Immediate`).
pub fn default_storage(object: &mut Object) {
    match object {
        Object::PersistentVolumeClaim(pvc) => {
            pvc.spec.volume_mode.get_or_insert_with(|| "Filesystem".into());
        }
        Object::PersistentVolume(pv) => {
            pv.spec.persistent_volume_reclaim_policy.get_or_insert_with(|| "Retain".into());
            pv.spec.volume_mode.get_or_insert_with(|| "Filesystem".into());
        }
        Object::StorageClass(sc) => {
            sc.reclaim_policy.get_or_insert_with(|| "Delete".into());
            sc.volume_binding_mode.get_or_insert_with(|| "Immediate".into());
        }
        _ => {}
    }
}

const ACCESS_MODES: [&str; 4] = ["ReadOnlyMany", "ReadWriteMany", "ReadWriteOnce", "ReadWriteOncePod"];

fn validate_access_modes(modes: &[String], at: &str, errs: &mut Vec<FieldError>) {
    if modes.is_empty() {
        errs.push(FieldError::required_why(at, "at least 1 access mode is required"));
    }
    for mode in modes.iter().filter(|m| !ACCESS_MODES.contains(&m.as_str())) {
        errs.push(FieldError::unsupported(at, mode, &ACCESS_MODES));
    }
}

/// `ValidatePersistentVolumeClaimSpec` (the parts modelled): access modes and a storage request.
pub fn validate_claim(pvc: &PersistentVolumeClaim, errs: &mut Vec<FieldError>) {
    validate_claim_spec(&pvc.spec, "spec", errs);
}

pub fn validate_claim_spec(spec: &PersistentVolumeClaimSpec, at: &str, errs: &mut Vec<FieldError>) {
    validate_access_modes(&spec.access_modes, &format!("{at}.accessModes"), errs);
    match spec.resources.requests.get("storage") {
        None => errs.push(FieldError::required(&format!("{at}.resources[storage]"))),
        Some(q) if q.value().is_none_or(|v| v <= 0) => {
            errs.push(FieldError::invalid(&format!("{at}.resources[storage]"), &q.0, "must be greater than zero"))
        }
        Some(_) => {}
    }
}

/// `ValidatePersistentVolume` (the parts modelled): access modes and a capacity.
pub fn validate_volume(pv: &PersistentVolume, errs: &mut Vec<FieldError>) {
    validate_access_modes(&pv.spec.access_modes, "spec.accessModes", errs);
    if !pv.spec.capacity.contains_key("storage") {
        errs.push(FieldError::required("spec.capacity"));
    }
}

/// `ValidatePersistentVolumeClaimUpdate`: after creation only the requests may change, and the
/// binder's first `volumeName`.
pub fn claim_update_errors(old: &PersistentVolumeClaim, new: &PersistentVolumeClaim) -> Vec<FieldError> {
    let mut spec = new.spec.clone();
    spec.resources = old.spec.resources.clone();
    if old.spec.volume_name.is_empty() {
        spec.volume_name.clear();
    }
    let mut old_spec = old.spec.clone();
    if old.spec.volume_name.is_empty() {
        old_spec.volume_name.clear();
    }
    if spec == old_spec {
        return Vec::new();
    }
    vec![FieldError::forbidden(
        "spec",
        "spec is immutable after creation except resources.requests and volumeAttributesClassName for bound claims",
    )]
}
