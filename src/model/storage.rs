//! PersistentVolumeClaim and PersistentVolume (v1) and StorageClass (storage.k8s.io/v1): the
//! storage a StatefulSet's `volumeClaimTemplates` ask for.
//!
//! A claim asks for a size and access modes from a class; the persistent volume binder (and
//! the class's provisioner) answers with a volume bound to it. Only what that handshake and
//! kubectl's columns need is kept: no volume sources beyond hostPath, no selectors, no
//! data sources, no expansion.

use super::decode::decode_struct;
#[cfg(test)]
use super::meta::null_as_default;
use super::meta::ObjectMeta;
use super::pod::{HostPathVolumeSource, ResourceRequirements};
use super::quantity::Quantity;
use super::shared::Shared;
use serde::Serialize;
use std::collections::BTreeMap;

/// The annotation that makes a StorageClass the default one.
pub const IS_DEFAULT_CLASS: &str = "storageclass.kubernetes.io/is-default-class";

#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[cfg_attr(test, derive(serde::Deserialize))]
#[serde(rename_all = "camelCase")]
pub struct PersistentVolumeClaim {
    #[serde(default)]
    pub metadata: ObjectMeta,
    #[serde(default)]
    pub spec: PersistentVolumeClaimSpec,
    #[serde(default)]
    pub status: PersistentVolumeClaimStatus,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[cfg_attr(test, derive(serde::Deserialize))]
#[serde(rename_all = "camelCase")]
pub struct PersistentVolumeClaimSpec {
    #[serde(default, skip_serializing_if = "Vec::is_empty", deserialize_with = "null_as_default")]
    pub access_modes: Vec<String>,
    #[serde(default, skip_serializing_if = "ResourceRequirements::is_empty")]
    pub resources: ResourceRequirements,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub storage_class_name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub volume_mode: Option<String>,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub volume_name: String,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[cfg_attr(test, derive(serde::Deserialize))]
#[serde(rename_all = "camelCase")]
pub struct PersistentVolumeClaimStatus {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub phase: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty", deserialize_with = "null_as_default")]
    pub access_modes: Vec<String>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty", deserialize_with = "null_as_default")]
    pub capacity: BTreeMap<String, Quantity>,
}

impl PersistentVolumeClaim {
    pub fn phase(&self) -> &str {
        self.status.phase.as_deref().unwrap_or("Pending")
    }
    pub fn is_bound(&self) -> bool {
        self.phase() == "Bound" && !self.spec.volume_name.is_empty()
    }
    /// The requested size (`resources.requests.storage`).
    pub fn request(&self) -> Option<&Quantity> {
        self.spec.resources.requests.get("storage")
    }
}

#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[cfg_attr(test, derive(serde::Deserialize))]
#[serde(rename_all = "camelCase")]
pub struct PersistentVolume {
    #[serde(default)]
    pub metadata: ObjectMeta,
    #[serde(default)]
    /// Behind a `Shared`, as a pod's spec is: versions that change only the status share it,
    /// and `Object`, as large as its largest variant, stays the size of a pod (inline, this
    /// spec made every stored version of every object larger).
    pub spec: Shared<PersistentVolumeSpec>,
    #[serde(default)]
    pub status: PersistentVolumeStatus,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[cfg_attr(test, derive(serde::Deserialize))]
#[serde(rename_all = "camelCase")]
pub struct PersistentVolumeSpec {
    #[serde(default, skip_serializing_if = "Vec::is_empty", deserialize_with = "null_as_default")]
    pub access_modes: Vec<String>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty", deserialize_with = "null_as_default")]
    pub capacity: BTreeMap<String, Quantity>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub claim_ref: Option<ClaimReference>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host_path: Option<HostPathVolumeSource>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub persistent_volume_reclaim_policy: Option<String>,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub storage_class_name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub volume_mode: Option<String>,
}

/// The claim a volume is bound to (`spec.claimRef`, an ObjectReference).
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[cfg_attr(test, derive(serde::Deserialize))]
#[serde(rename_all = "camelCase")]
pub struct ClaimReference {
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub api_version: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub kind: String,
    #[serde(default)]
    pub name: String,
    #[serde(default)]
    pub namespace: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub uid: String,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[cfg_attr(test, derive(serde::Deserialize))]
#[serde(rename_all = "camelCase")]
pub struct PersistentVolumeStatus {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub phase: Option<String>,
}

impl PersistentVolume {
    pub fn phase(&self) -> &str {
        self.status.phase.as_deref().unwrap_or("Pending")
    }
}

/// A StorageClass: which provisioner makes its volumes, how they are reclaimed, and when a
/// claim of it is bound (`Immediate`, or `WaitForFirstConsumer`: once a pod using it is
/// scheduled).
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[cfg_attr(test, derive(serde::Deserialize))]
#[serde(rename_all = "camelCase")]
pub struct StorageClass {
    #[serde(default)]
    pub metadata: ObjectMeta,
    #[serde(default)]
    pub provisioner: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reclaim_policy: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub volume_binding_mode: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allow_volume_expansion: Option<bool>,
}

impl StorageClass {
    /// Whether the class is marked default (`IsDefaultAnnotation`).
    pub fn is_default(&self) -> bool {
        self.metadata.annotations.get(IS_DEFAULT_CLASS).map(String::as_str) == Some("true")
    }
}

/// kubectl's short form of access modes (`GetAccessModesAsString`): RWO, ROX, RWX, RWOP.
pub fn access_modes_string(modes: &[String]) -> String {
    let mut out = Vec::new();
    for (mode, short) in [("ReadWriteOnce", "RWO"), ("ReadOnlyMany", "ROX"), ("ReadWriteMany", "RWX"), ("ReadWriteOncePod", "RWOP")] {
        if modes.iter().any(|m| m == mode) {
            out.push(short);
        }
    }
    out.join(",")
}

/// The package upstream's OpenAPI documents name these types in (`schema.rs`).
const SCHEMA_PACKAGE: &str = "io.k8s.api.core.v1";
decode_struct!(
/// A request for storage, which the volume binder binds to a PersistentVolume.
PersistentVolumeClaim {
    /// The object's name, namespace and labels, and what the API server records about it.
    metadata: "metadata" Default,
    /// What storage is asked for.
    spec: "spec" Default,
    /// Whether it is bound, and to how much.
    status: "status" Default,
});
decode_struct!(
/// Storage asked for.
PersistentVolumeClaimSpec {
    /// How it may be mounted: ReadWriteOnce, ReadOnlyMany, ReadWriteMany, ReadWriteOncePod.
    #[list = "atomic"]
    access_modes: "accessModes" NullAsDefault,
    /// How much (requests.storage).
    resources: "resources" Default,
    /// The class; the default class when empty.
    storage_class_name: "storageClassName" Default,
    /// Filesystem (the default) or Block.
    volume_mode: "volumeMode" Default,
    /// The volume it is bound to.
    volume_name: "volumeName" Default,
});
decode_struct!(
/// A claim's binding.
PersistentVolumeClaimStatus {
    /// Pending, Bound or Lost.
    phase: "phase" Default,
    /// The bound volume's access modes.
    access_modes: "accessModes" NullAsDefault,
    /// The bound volume's size.
    capacity: "capacity" NullAsDefault,
});
decode_struct!(
/// A piece of storage, provisioned for a claim or made by hand.
PersistentVolume {
    /// The object's name, namespace and labels, and what the API server records about it.
    metadata: "metadata" Default,
    /// What the storage is.
    spec: "spec" Default,
    /// Whether it is bound.
    status: "status" Default,
});
decode_struct!(
/// A piece of storage.
PersistentVolumeSpec {
    /// How it may be mounted.
    #[list = "atomic"]
    access_modes: "accessModes" NullAsDefault,
    /// Its size (storage).
    capacity: "capacity" NullAsDefault,
    /// The claim it is bound to.
    claim_ref: "claimRef" Default,
    /// A directory of a node, for a one-node cluster.
    host_path: "hostPath" Default,
    /// What happens once its claim is gone: Retain, Delete or Recycle.
    persistent_volume_reclaim_policy: "persistentVolumeReclaimPolicy" Default,
    /// Its class.
    storage_class_name: "storageClassName" Default,
    /// Filesystem or Block.
    volume_mode: "volumeMode" Default,
});
decode_struct!(
/// The claim a volume is bound to.
ClaimReference as "" "" {
    /// v1.
    api_version: "apiVersion" Default,
    /// PersistentVolumeClaim.
    kind: "kind" Default,
    /// Its name.
    name: "name" Default,
    /// Its namespace.
    namespace: "namespace" Default,
    /// Its UID.
    uid: "uid" Default,
});
decode_struct!(
/// A volume's binding.
PersistentVolumeStatus {
    /// Available, Bound, Released or Failed.
    phase: "phase" Default,
});
decode_struct!(
/// A kind of storage, and the provisioner that makes volumes of it.
StorageClass as "io.k8s.api.storage.v1" "StorageClass" {
    /// The object's name, namespace and labels, and what the API server records about it.
    metadata: "metadata" Default,
    /// What makes its volumes (k8s.io/minikube-hostpath is simulated).
    #[required = true]
    provisioner: "provisioner" Default,
    /// What happens to a volume once its claim is gone: Delete (the default) or Retain.
    reclaim_policy: "reclaimPolicy" Default,
    /// Immediate, or WaitForFirstConsumer (bind once a pod uses the claim).
    volume_binding_mode: "volumeBindingMode" Default,
    /// Whether claims may grow.
    allow_volume_expansion: "allowVolumeExpansion" Default,
});
