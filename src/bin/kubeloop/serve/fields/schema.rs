//! What the built-in kinds' OpenAPI schemas say about merging, for the fields kubeloop serves:
//! which lists are maps keyed by some of their items' fields (containers by name, container
//! ports by `containerPort` and `protocol` …), which are sets, which are atomic (the rest, as
//! structured-merge-diff treats a list without a merge key), which objects are maps whose keys
//! each a client may own (labels, annotations …) rather than structs, and which structs are atomic
//! (label selectors). The one source of merge keys: strategic merge patch (`patch.rs`) reads its
//! `patchMergeKey` here too.

use kubeloop::model::Kind;

/// How a list merges.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ListType {
    /// Replaced whole, owned as one field.
    Atomic,
    /// Items are scalars, each owned by its value (`metadata.finalizers`).
    Set,
    /// Items are objects, each owned by the values of these fields (`listMapKeys`).
    Map(&'static [&'static str]),
}

/// A keyed list: its field name, the strategic merge key (`patchMergeKey`) and server-side
/// apply's keys (`listMapKeys`).
struct Keyed {
    field: &'static str,
    patch_merge_key: &'static str,
    list_map_keys: &'static [&'static str],
}

const KEYED: &[Keyed] = &[
    Keyed { field: "containers", patch_merge_key: "name", list_map_keys: &["name"] },
    Keyed { field: "initContainers", patch_merge_key: "name", list_map_keys: &["name"] },
    Keyed { field: "ephemeralContainers", patch_merge_key: "name", list_map_keys: &["name"] },
    Keyed { field: "env", patch_merge_key: "name", list_map_keys: &["name"] },
    Keyed { field: "volumes", patch_merge_key: "name", list_map_keys: &["name"] },
    Keyed { field: "imagePullSecrets", patch_merge_key: "name", list_map_keys: &["name"] },
    Keyed { field: "resourceClaims", patch_merge_key: "name", list_map_keys: &["name"] },
    Keyed { field: "volumeMounts", patch_merge_key: "mountPath", list_map_keys: &["mountPath"] },
    Keyed { field: "volumeDevices", patch_merge_key: "devicePath", list_map_keys: &["devicePath"] },
    Keyed { field: "conditions", patch_merge_key: "type", list_map_keys: &["type"] },
    Keyed { field: "ownerReferences", patch_merge_key: "uid", list_map_keys: &["uid"] },
    Keyed { field: "hostAliases", patch_merge_key: "ip", list_map_keys: &["ip"] },
    Keyed { field: "podIPs", patch_merge_key: "ip", list_map_keys: &["ip"] },
    Keyed { field: "hostIPs", patch_merge_key: "ip", list_map_keys: &["ip"] },
    Keyed { field: "addresses", patch_merge_key: "type", list_map_keys: &["type"] },
    Keyed { field: "topologySpreadConstraints", patch_merge_key: "topologyKey", list_map_keys: &["topologyKey", "whenUnsatisfiable"] },
];

/// A container's ports (`containerPort`, `protocol`) and a Service's (`port`, `protocol`).
const CONTAINER_PORTS: Keyed = Keyed { field: "ports", patch_merge_key: "containerPort", list_map_keys: &["containerPort", "protocol"] };
const SERVICE_PORTS: Keyed = Keyed { field: "ports", patch_merge_key: "port", list_map_keys: &["port", "protocol"] };

/// The keyed list at `path` (the field names from the object's root), if it is one.
fn keyed(kind: Kind, path: &[&str]) -> Option<&'static Keyed> {
    let field = *path.last()?;
    if field == "ports" {
        let in_container = path.iter().any(|f| matches!(*f, "containers" | "initContainers" | "ephemeralContainers"));
        return match () {
            _ if in_container => Some(&CONTAINER_PORTS),
            _ if kind == Kind::Service && path == ["spec", "ports"] => Some(&SERVICE_PORTS),
            _ => None,
        };
    }
    KEYED.iter().find(|k| k.field == field)
}

/// Strategic merge patch's merge key for a list field, by name (the `ports` of a Service merge by
/// `port`, a container's by `containerPort`).
pub(crate) fn patch_merge_key(kind: Kind, path: &[&str]) -> Option<&'static str> {
    keyed(kind, path).map(|k| k.patch_merge_key)
}

pub(crate) fn list_type(kind: Kind, path: &[&str]) -> ListType {
    if path == ["metadata", "finalizers"] || path == ["spec", "finalizers"] {
        return ListType::Set;
    }
    keyed(kind, path).map_or(ListType::Atomic, |k| ListType::Map(k.list_map_keys))
}

/// A key field a list item may leave out, and the default its schema gives it.
pub(crate) fn key_default(field: &str) -> Option<&'static str> {
    (field == "protocol").then_some("TCP")
}

/// Whether the object at `path` is a map (`map[string]…`: each key a field of its own, owned
/// one by one) rather than a struct.
pub(crate) fn is_map(kind: Kind, path: &[&str]) -> bool {
    let Some(&field) = path.last() else { return false };
    match field {
        "labels" | "annotations" | "nodeSelector" | "data" | "stringData" | "binaryData" | "matchLabels" | "limits" | "requests"
        | "capacity" | "allocatable" => true,
        // A Service's and a ReplicationController's selector is a map; every other kind's is a
        // LabelSelector.
        "selector" => matches!(kind, Kind::Service | Kind::ReplicationController) && path.len() == 2,
        _ => false,
    }
}

/// Whether the struct at `path` is atomic (`+structType=atomic`): a LabelSelector is.
pub(crate) fn is_atomic_struct(kind: Kind, path: &[&str]) -> bool {
    let Some(&field) = path.last() else { return false };
    match field {
        "selector" => !is_map(kind, path),
        "labelSelector" | "namespaceSelector" => true,
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ports_are_keyed_by_where_they_are() {
        let container = ["spec", "template", "spec", "containers", "ports"];
        assert_eq!(list_type(Kind::Deployment, &container), ListType::Map(&["containerPort", "protocol"]));
        assert_eq!(patch_merge_key(Kind::Deployment, &container), Some("containerPort"));
        assert_eq!(list_type(Kind::Service, &["spec", "ports"]), ListType::Map(&["port", "protocol"]));
        assert_eq!(patch_merge_key(Kind::Service, &["spec", "ports"]), Some("port"));
        assert_eq!(list_type(Kind::EndpointSlice, &["ports"]), ListType::Atomic);
        assert_eq!(list_type(Kind::Pod, &["spec", "containers", "args"]), ListType::Atomic);
        assert_eq!(list_type(Kind::Pod, &["metadata", "finalizers"]), ListType::Set);
    }

    #[test]
    fn a_selector_is_a_map_only_for_services_and_replication_controllers() {
        assert!(is_map(Kind::Service, &["spec", "selector"]));
        assert!(is_atomic_struct(Kind::Deployment, &["spec", "selector"]));
        assert!(!is_atomic_struct(Kind::Service, &["spec", "selector"]));
    }
}
