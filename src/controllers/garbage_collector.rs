//! The garbage collector (pkg/controller/garbagecollector): deletes objects whose owners are gone.
//!
//! Deleting a Deployment leaves its ReplicaSets, and they their pods, pointing at an owner that
//! no longer exists; the collector removes such dependents (background cascading deletion, the
//! default). Because its cache may lag behind a just-created owner, it confirms with a live GET
//! that the owner is really gone before deleting, as the real collector does.

use super::{Caches, Call, Controller, Sync};
use crate::api::{ApiRequest, DeleteRequest};
use crate::model::*;
use crate::runtime::informer::Delta;
use crate::runtime::store::Store;

#[derive(Debug, Default)]
pub struct GarbageCollector;

impl GarbageCollector {
    pub fn new() -> Self {
        GarbageCollector
    }
}

/// The kinds the collector watches: every kind, as kube-controller-manager's collector watches
/// every resource that can be listed, watched and deleted, so that an owner of any kind is
/// honoured and a dependent of any kind is collected (a Deployment owned by a ConfigMap, a
/// ConfigMap an operator made for its custom object). Not Events and Leases: their churn (an
/// Event per change, a renewal per node every 10 s) owns nothing the simulation deletes, and
/// nothing here waits on it; an owner of those kinds is still looked up live.
const WATCHED: [Kind; Kind::COUNT - 2] = {
    let mut out = [Kind::Pod; Kind::COUNT - 2];
    let (mut i, mut j) = (0, 0);
    while i < Kind::COUNT {
        let kind = Kind::ALL[i];
        if !matches!(kind, Kind::Event | Kind::Lease) {
            out[j] = kind;
            j += 1;
        }
        i += 1;
    }
    out
};

/// Where the owner an owner reference names would be: its key, and the cache that holds it when
/// the collector watches its kind. A built-in kind is matched by kind and group version; a
/// custom kind is found through the CustomResourceDefinitions the collector watches (as the real
/// collector maps it through discovery). A kind neither built in nor defined is not
/// resolvable, and its dependents are left alone, as the real collector leaves them.
#[inline(never)]
fn owner_place<'a>(caches: &Caches<'a>, r: &OwnerReference, namespace: &str) -> Option<(Option<&'a Store>, ObjectKey)> {
    if let Some(kind) = Kind::from_kind_str(&r.kind).filter(|k| k.is_named() && k.serves(&r.api_version)) {
        return Some((caches.get(kind), ObjectKey::new(kind, namespace, &r.name)));
    }
    let group = r.api_version.split_once('/')?.0;
    let definitions = caches.get(Kind::CustomResourceDefinition)?;
    let crd = definitions.iter().filter_map(|o| o.as_custom_resource_definition()).find(|crd| {
        let spec = crd.spec();
        let text = |path: &str| spec.and_then(|s| s.pointer(path)).and_then(serde_json::Value::as_str);
        text("/group") == Some(group) && text("/names/kind") == Some(r.kind.as_str())
    })?;
    let namespaced = crd.spec().and_then(|s| s.get("scope")).and_then(serde_json::Value::as_str) == Some("Namespaced");
    let key = ObjectKey::custom(&crd.metadata.name, if namespaced { namespace } else { "" }, &r.name);
    Some((caches.get(Kind::CustomObject), key))
}

impl Controller for GarbageCollector {
    fn name(&self) -> &'static str {
        "garbage-collector-controller"
    }
    /// The owners and dependents it tracks (`WATCHED`).
    fn watches(&self) -> &'static [Kind] {
        &WATCHED
    }
    fn event_source(&self) -> &'static str {
        "garbage-collector"
    }
    fn workers(&self) -> usize {
        20
    }

    fn on_delta(&mut self, caches: &Caches, delta: &Delta, _now: Time) -> Vec<ObjectKey> {
        let object = delta.object();
        match delta {
            // An owner went away: each of its dependents must be looked at.
            Delta::Deleted(owner) => {
                let mut keys: Vec<ObjectKey> = WATCHED
                    .iter()
                    .filter_map(|kind| caches.get(*kind))
                    .flat_map(|store| store.dependents_of(&owner.meta().uid))
                    .map(|o| o.key())
                    .collect();
                crate::sort::sort(&mut keys);
                keys
            }
            _ if !object.meta().owner_references.is_empty() => vec![object.key()],
            _ => Vec::new(),
        }
    }

    fn reconcile(&mut self, key: &ObjectKey, caches: &Caches, _now: Time) -> Sync {
        let Some(informer) = caches.get(key.kind) else { return Sync::nothing() };
        let Some(object) = informer.get(key) else { return Sync::nothing() };
        let meta = object.meta();
        if meta.owner_references.is_empty() || meta.is_deleting() {
            return Sync::nothing();
        }
        // Dangling when no owner exists with the referenced UID; an owner of a kind not watched
        // may be, and the live GET below decides.
        let dangling: Vec<&OwnerReference> = meta
            .owner_references
            .iter()
            .filter(|r| match owner_place(caches, r, &meta.namespace) {
                Some((Some(owners), key)) => owners.get(&key).is_none_or(|o| o.meta().uid != r.uid),
                Some((None, _)) => true,
                None => false,
            })
            .collect();
        if dangling.len() < meta.owner_references.len() {
            return Sync::nothing();
        }
        let confirm: Vec<Call> = dangling
            .iter()
            .filter_map(|r| {
                let (_, key) = owner_place(caches, r, &meta.namespace)?;
                Some(Call::expect_absent(ApiRequest::Get(key), &r.uid))
            })
            .collect();
        let delete = Call::new(ApiRequest::Delete(DeleteRequest { uid: Some(meta.uid.to_string()), ..DeleteRequest::new(key.clone()) }));
        Sync::with_steps(vec![confirm, vec![delete]], format!("{key}: owner {} is gone, deleting", dangling[0].name))
    }

    fn reset(&mut self) {}
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::controllers::{replica_set::test_rs, Expect};
    use crate::runtime::informer::Informer;

    #[test]
    fn a_pod_whose_replica_set_is_gone_is_deleted_after_a_live_check() {
        let rs = test_rs("web-abc", 1);
        let pod = crate::controllers::replica_set::pod_from_template(&rs);
        let mut pod = pod;
        pod.metadata.name = "web-abc-x".into();
        pod.metadata.uid = "pod-uid".into();
        let pods = Informer::from_objects(Kind::Pod, [Object::Pod(pod)]);
        let empty = |k| Informer::from_objects(k, []);
        let (rss, deps, nodes) = (empty(Kind::ReplicaSet), empty(Kind::Deployment), empty(Kind::Node));
        let slices = empty(Kind::EndpointSlice);
        let caches = Caches::new([pods.store(), rss.store(), deps.store(), nodes.store(), slices.store()]);
        let sync = GarbageCollector::new().reconcile(&ObjectKey::new(Kind::Pod, "default", "web-abc-x"), &caches, Time(0));
        assert_eq!(sync.steps.len(), 2);
        assert_eq!(sync.steps[0][0].expect, Expect::NotFound);
        let ApiRequest::Delete(d) = &sync.steps[1][0].request else { panic!("a delete") };
        assert_eq!(d.uid.as_deref(), Some("pod-uid"));

        let rss = Informer::from_objects(Kind::ReplicaSet, [Object::ReplicaSet(rs)]);
        let caches = Caches::new([pods.store(), rss.store(), deps.store(), nodes.store()]);
        let sync = GarbageCollector::new().reconcile(&ObjectKey::new(Kind::Pod, "default", "web-abc-x"), &caches, Time(0));
        assert!(sync.steps.is_empty(), "the owner exists: nothing to collect");
    }
}
