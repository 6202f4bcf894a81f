//! What kube-apiserver does for namespaces beyond storing them: the system namespaces it
//! creates at start (its `systemnamespaces` and bootstrap controllers), the NamespaceLifecycle
//! admission plugin (no new content in a namespace that is missing or being terminated; the
//! immortal namespaces cannot be deleted), and the namespace registry's two-phase delete: a
//! delete only marks the namespace Terminating; the namespace controller empties it, and its
//! `finalize` call, taking the `kubernetes` finalizer off, is what removes it.

use super::{ApiError, ApiServer, Reason, Written};
use crate::model::*;
use crate::rng::Rng;

/// The namespaces every cluster has from the start, in the order kube-apiserver creates them.
pub const SYSTEM_NAMESPACES: [&str; 4] = ["default", "kube-system", "kube-public", "kube-node-lease"];

/// Seeds the generator of the system namespaces' UIDs.
pub(super) const SYSTEM_UID_SEED: u64 = 0x6b75_6265_2d73_7973;

/// Namespaces NamespaceLifecycle never lets anyone delete.
const IMMORTAL: [&str; 3] = ["default", "kube-system", "kube-public"];

impl ApiServer {
    /// Creates the system namespaces that are missing (at start, and after etcd lost them).
    pub fn ensure_system_namespaces(&mut self, now: Time, rng: &mut Rng) {
        for name in SYSTEM_NAMESPACES {
            if self.etcd.get(&ObjectKey::new(Kind::Namespace, "", name)).is_none() {
                let change = self.create(now, rng, Object::Namespace(Namespace::new(name)));
                if let Ok(Written::Changed(change)) = change {
                    self.committed(change);
                }
            }
        }
    }

    /// NamespaceLifecycle on create: the namespace must exist and not be terminating.
    pub(super) fn admit_namespace(&self, object: &Object) -> Result<(), ApiError> {
        let kind = object.kind();
        let meta = object.meta();
        if !kind.namespaced() {
            return Ok(());
        }
        let key = ObjectKey::new(Kind::Namespace, "", &meta.namespace);
        match self.etcd.get(&key).and_then(|o| o.as_namespace()) {
            None => Err(ApiError::not_found(Kind::Namespace, &meta.namespace)),
            Some(ns) if ns.is_terminating() => Err(ApiError::forbidden(
                kind,
                &meta.name,
                &format!("unable to create new content in namespace {} because it is being terminated", meta.namespace),
            )),
            Some(_) => Ok(()),
        }
    }

    /// The namespace registry's delete: the first marks it Terminating (or removes it at once
    /// if nothing holds it); later ones are refused while the controller empties it.
    pub(super) fn delete_namespace(&mut self, now: Time, current: &Namespace) -> Result<Option<Written>, ApiError> {
        let name = current.metadata.name.as_str();
        if IMMORTAL.contains(&name) {
            return Err(ApiError::forbidden(Kind::Namespace, name, "this namespace may not be deleted"));
        }
        if current.spec.finalizers.is_empty() && current.metadata.finalizers.is_empty() {
            return Ok(None);
        }
        if current.metadata.deletion_timestamp.is_some() {
            return Err(ApiError::new(
                Reason::Conflict,
                format!("Operation cannot be fulfilled on namespaces {name:?}: The system is ensuring all content is removed from this namespace.  Upon completion, this namespace will automatically be purged by the system."),
            ));
        }
        let mut next = current.clone();
        next.metadata.deletion_timestamp = Some(now);
        next.metadata.deletion_grace_period_seconds = Some(0);
        next.status.phase = Some("Terminating".into());
        let key = ObjectKey::new(Kind::Namespace, "", name);
        let change = self.etcd.update(Object::Namespace(next), None).map_err(|_| ApiError::conflict(Kind::Namespace, &key.name))?;
        Ok(Some(Written::Changed(change)))
    }

    /// namespaces/finalize: sets `spec.finalizers`; a deleted namespace left with none is gone.
    pub(super) fn finalize(&mut self, object: Object) -> Result<Written, ApiError> {
        let Object::Namespace(incoming) = object else {
            return Err(ApiError::new(Reason::NotFound, "the server could not find the requested resource"));
        };
        let key = ObjectKey::new(Kind::Namespace, "", &incoming.metadata.name);
        let current = self.etcd.get(&key).cloned().ok_or_else(|| ApiError::not_found(Kind::Namespace, &key.name))?;
        let Some(ns) = current.as_namespace() else { return Err(ApiError::not_found(Kind::Namespace, &key.name)) };
        let mut next = ns.clone();
        next.spec.finalizers = incoming.spec.finalizers;
        if next.metadata.deletion_timestamp.is_some() && next.spec.finalizers.is_empty() && next.metadata.finalizers.is_empty() {
            return self.etcd.delete(&key, None).map(Written::Changed).map_err(|_| ApiError::not_found(Kind::Namespace, &key.name));
        }
        if next == *ns {
            return Ok(Written::Unchanged(current));
        }
        self.etcd.update(Object::Namespace(next), None).map(Written::Changed).map_err(|_| ApiError::conflict(Kind::Namespace, &key.name))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::{ApiRequest, DeleteRequest};

    fn server() -> (ApiServer, Rng) {
        (ApiServer::new(), Rng::new(1))
    }

    fn pod(ns: &str, name: &str) -> Object {
        let mut p = Pod::default();
        p.metadata.name = name.into();
        p.metadata.namespace = ns.into();
        p.spec.containers.push(Container { name: "c".into(), image: "nginx".into(), ..Default::default() });
        Object::Pod(p)
    }

    fn ns(api: &ApiServer, name: &str) -> Option<Namespace> {
        api.get(&ObjectKey::new(Kind::Namespace, "", name)).and_then(|o| o.as_namespace()).cloned()
    }

    #[test]
    fn the_four_system_namespaces_exist_from_the_start_active_with_the_kubernetes_finalizer() {
        let (api, _) = server();
        for name in SYSTEM_NAMESPACES {
            let n = ns(&api, name).unwrap();
            assert_eq!(n.phase(), "Active");
            assert_eq!(n.spec.finalizers, vec!["kubernetes".to_string()]);
            assert_eq!(n.metadata.labels.get("kubernetes.io/metadata.name").map(String::as_str), Some(name));
        }
    }

    #[test]
    fn content_in_a_missing_namespace_is_refused_not_found() {
        let (mut api, mut rng) = server();
        let err = api.handle(Time(1), &mut rng, ApiRequest::Create(pod("nope", "p"))).result.unwrap_err();
        assert_eq!(err.kubectl_message(), "Error from server (NotFound): namespaces \"nope\" not found");
    }

    #[test]
    fn a_deleted_namespace_is_terminating_refuses_new_content_and_goes_when_finalized() {
        let (mut api, mut rng) = server();
        api.handle(Time(1), &mut rng, ApiRequest::Create(Object::Namespace(Namespace::new("team")))).result.unwrap();
        let key = ObjectKey::new(Kind::Namespace, "", "team");
        api.handle(Time(2), &mut rng, ApiRequest::Delete(DeleteRequest::new(key.clone()))).result.unwrap();
        assert_eq!(ns(&api, "team").unwrap().phase(), "Terminating");
        let err = api.handle(Time(3), &mut rng, ApiRequest::Create(pod("team", "p"))).result.unwrap_err();
        assert_eq!(
            err.kubectl_message(),
            "Error from server (Forbidden): pods \"p\" is forbidden: unable to create new content in namespace team because it is being terminated"
        );
        let again = api.handle(Time(3), &mut rng, ApiRequest::Delete(DeleteRequest::new(key.clone()))).result.unwrap_err();
        assert!(again.message.contains("The system is ensuring all content is removed from this namespace"), "{}", again.message);
        let mut done = ns(&api, "team").unwrap();
        done.spec.finalizers.clear();
        api.handle(Time(4), &mut rng, ApiRequest::Finalize(Object::Namespace(done))).result.unwrap();
        assert!(ns(&api, "team").is_none());
    }

    #[test]
    fn the_immortal_namespaces_may_not_be_deleted() {
        let (mut api, mut rng) = server();
        for name in IMMORTAL {
            let key = ObjectKey::new(Kind::Namespace, "", name);
            let err = api.handle(Time(1), &mut rng, ApiRequest::Delete(DeleteRequest::new(key))).result.unwrap_err();
            assert_eq!(
                err.kubectl_message(),
                format!("Error from server (Forbidden): namespaces {name:?} is forbidden: this namespace may not be deleted")
            );
        }
    }
}
