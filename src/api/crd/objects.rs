//! The API server's writes of definitions and of custom objects: the custom resource registry
//! strategy (apiextensions-apiserver's `customresource` package) and the definition's own
//! (`customresourcedefinition`), with the finalizer that deletes a definition's objects before
//! the definition itself.

use super::{accepted_status, condition, name_conflict, read, set_condition, set_defaults, Definition, Definitions, CLEANUP_FINALIZER};
use crate::api::errors::{ApiError, FieldError, Reason};
use crate::api::{deletes_during_update, validation, ApiServer, DeleteRequest, Written};
use crate::model::*;
use crate::rng::Rng;
use crate::store::Change;
use serde_json::{json, Value};
use std::rc::Rc;

/// What the API server answers for a resource it does not serve (yet).
pub fn not_served() -> ApiError {
    ApiError::new(Reason::NotFound, "the server could not find the requested resource")
}

impl ApiServer {
    /// The definitions etcd holds, as the server reads them.
    #[inline(never)]
    pub fn definitions(&self) -> &Definitions {
        &self.definitions
    }

    /// Re-reads the definitions after one was written (or etcd's content was replaced).
    #[inline(never)]
    pub(crate) fn reread_definitions(&mut self) {
        self.definitions =
            Definitions::rebuild(self.etcd.list(Kind::CustomResourceDefinition, None).filter_map(|o| o.as_custom_resource_definition()));
    }

    #[inline(never)]
    pub(crate) fn create_definition(&mut self, now: Time, rng: &mut Rng, mut crd: CustomResourceDefinition) -> Result<Written, ApiError> {
        set_defaults(&mut crd);
        crd.content.remove("status");
        let object = Object::CustomResourceDefinition(crd);
        let mut errs = validation::validate(&object);
        let Object::CustomResourceDefinition(mut crd) = object else { unreachable!("built above") };
        let (d, spec_errs) = read(&crd);
        errs.extend(spec_errs);
        if !errs.is_empty() {
            return Err(ApiError::invalid(Kind::CustomResourceDefinition, &crd.metadata.name, errs));
        }
        let status = accepted_status(&crd, &d, name_conflict(&d, &self.definitions), now);
        crd.content.insert("status".into(), status);
        let meta = &mut crd.metadata;
        meta.uid = rng.uuid().into();
        meta.creation_timestamp = Some(now);
        meta.resource_version = 0;
        meta.deletion_timestamp = None;
        meta.generation = 1;
        let name = meta.name.clone();
        self.etcd
            .create(Object::CustomResourceDefinition(crd))
            .map(Written::Changed)
            .map_err(|_| ApiError::already_exists(Kind::CustomResourceDefinition, &name))
    }

    #[inline(never)]
    pub(crate) fn update_definition(
        &mut self,
        now: Time,
        mut crd: CustomResourceDefinition,
        status_only: bool,
    ) -> Result<Written, ApiError> {
        let kind = Kind::CustomResourceDefinition;
        let key = ObjectKey::new(kind, "", &crd.metadata.name);
        let current = self.etcd.get(&key).cloned().ok_or_else(|| ApiError::not_found(kind, &key.name))?;
        let Some(old) = current.as_custom_resource_definition() else { return Err(ApiError::not_found(kind, &key.name)) };
        if crd.metadata.resource_version != 0 && crd.metadata.resource_version != old.metadata.resource_version {
            return Err(ApiError::conflict(kind, &key.name));
        }
        if status_only {
            let status = crd.status().cloned();
            crd = CustomResourceDefinition { metadata: crd.metadata, content: old.content.clone() };
            match status {
                Some(s) => crd.content.insert("status".into(), s),
                None => crd.content.remove("status"),
            };
        } else {
            set_defaults(&mut crd);
            match old.status() {
                Some(s) => crd.content.insert("status".into(), s.clone()),
                None => crd.content.remove("status"),
            };
        }
        let object = Object::CustomResourceDefinition(crd);
        let mut errs = validation::validate(&object);
        let Object::CustomResourceDefinition(mut crd) = object else { unreachable!("built above") };
        let (d, spec_errs) = read(&crd);
        errs.extend(spec_errs);
        let scope = |c: &CustomResourceDefinition| c.spec().and_then(|s| s.get("scope")).cloned();
        if scope(&crd) != scope(old) {
            let shown = scope(&crd).and_then(|s| s.as_str().map(str::to_string)).unwrap_or_default();
            errs.push(FieldError::invalid("spec.scope", format!("{shown:?}"), "field is immutable"));
        }
        if !errs.is_empty() {
            return Err(ApiError::invalid(kind, &key.name, errs));
        }
        {
            let (o, n) = (&old.metadata, &mut crd.metadata);
            n.uid = o.uid.clone();
            n.creation_timestamp = o.creation_timestamp;
            n.deletion_timestamp = o.deletion_timestamp;
            n.generation = o.generation;
            n.resource_version = o.resource_version;
        }
        if !status_only {
            if crd.spec() != old.spec() {
                crd.metadata.generation += 1;
            }
            let others = Definitions {
                by_name: self.definitions.by_name.iter().filter(|(n, _)| **n != key.name).map(|(n, d)| (n.clone(), d.clone())).collect(),
            };
            let mut status = accepted_status(&crd, &d, name_conflict(&d, &others), now);
            if let Some(terminating) = old
                .status()
                .and_then(|s| s.get("conditions"))
                .and_then(Value::as_array)
                .and_then(|cs| cs.iter().find(|c| c["type"] == "Terminating"))
            {
                set_condition(&mut status, terminating.clone());
            }
            crd.content.insert("status".into(), status);
        }
        let next = Object::CustomResourceDefinition(crd);
        if next == *current {
            return Ok(Written::Unchanged(current));
        }
        if deletes_during_update(&current, &next) {
            return self.etcd.delete(&key, None).map(Written::Changed).map_err(|_| ApiError::not_found(kind, &key.name));
        }
        self.etcd.update(next, None).map(Written::Changed).map_err(|_| ApiError::conflict(kind, &key.name))
    }

    /// Deleting a definition: it is marked Terminating (held by its cleanup finalizer), every
    /// object of its resource is deleted, and once none is left the definition goes. An object
    /// held by finalizers of its own keeps the definition until its last finalizer is removed
    /// (`finish_definition`).
    #[inline(never)]
    pub(crate) fn delete_definition(&mut self, now: Time, d: DeleteRequest) -> Result<Vec<Change>, ApiError> {
        let kind = Kind::CustomResourceDefinition;
        let current = self.etcd.get(&d.key).cloned().ok_or_else(|| ApiError::not_found(kind, &d.key.name))?;
        let Some(crd) = current.as_custom_resource_definition() else { return Err(ApiError::not_found(kind, &d.key.name)) };
        if let Some(uid) = d.uid.as_deref().filter(|u| *u != crd.metadata.uid) {
            return Err(ApiError::new(
                Reason::Conflict,
                format!(
                    "Operation cannot be fulfilled on {} {:?}: Precondition failed: UID in precondition: {uid}, UID in object meta: {}",
                    kind.qualified_plural(),
                    d.key.name,
                    crd.metadata.uid
                ),
            ));
        }
        let mut changes = Vec::new();
        if !crd.metadata.is_deleting() {
            let mut next = crd.clone();
            next.metadata.deletion_timestamp = Some(now);
            next.metadata.deletion_grace_period_seconds = Some(0);
            if !next.metadata.finalizers.iter().any(|f| f == CLEANUP_FINALIZER) {
                next.metadata.finalizers.push(CLEANUP_FINALIZER.into());
            }
            let mut status = next.status().cloned().unwrap_or_else(|| json!({}));
            set_condition(
                &mut status,
                condition(crd, "Terminating", "True", "InstanceDeletionInProgress", "CustomResource deletion is in progress", now),
            );
            next.content.insert("status".into(), status);
            let change =
                self.etcd.update(Object::CustomResourceDefinition(next), None).map_err(|_| ApiError::conflict(kind, &d.key.name))?;
            changes.push(change);
            self.reread_definitions();
            let keys: Vec<ObjectKey> = self.etcd.list_in(Kind::CustomObject, Some(&d.key.name), None).map(|o| o.key()).collect();
            for key in keys {
                if let Ok(Written::Changed(change)) = self.delete(now, DeleteRequest::new(key)) {
                    changes.push(change);
                }
            }
        }
        changes.extend(self.finish_definition(now, &d.key.name));
        Ok(changes)
    }

    /// A terminating definition whose objects are all gone loses its cleanup finalizer, and
    /// with it goes.
    #[inline(never)]
    pub(crate) fn finish_definition(&mut self, _now: Time, name: &str) -> Option<Change> {
        let key = ObjectKey::new(Kind::CustomResourceDefinition, "", name);
        let crd = self.etcd.get(&key)?.as_custom_resource_definition()?.clone();
        if !crd.metadata.is_deleting() || self.etcd.list_in(Kind::CustomObject, Some(name), None).next().is_some() {
            return None;
        }
        let mut done = crd;
        done.metadata.finalizers.retain(|f| f != CLEANUP_FINALIZER);
        if !done.metadata.finalizers.is_empty() {
            return self.etcd.update(Object::CustomResourceDefinition(done), None).ok();
        }
        self.etcd.delete(&key, None).ok()
    }

    /// The established definition an object belongs to, and the version it was sent in.
    #[inline(never)]
    fn definition_of(&self, o: &CustomObject) -> Result<(Rc<Definition>, String), ApiError> {
        let d =
            if o.resource().is_empty() { self.definitions.for_kind(o.api_version(), o.kind()) } else { self.definitions.get(o.resource()) };
        let d = d.filter(|d| d.established).cloned().ok_or_else(not_served)?;
        let version = o.api_version().split_once('/').map(|(_, v)| v.to_string()).unwrap_or_default();
        if d.served(&version).is_none() || o.group() != d.group || o.kind() != d.kind {
            return Err(not_served());
        }
        Ok((d, version))
    }

    #[inline(never)]
    pub(crate) fn create_custom(&mut self, now: Time, rng: &mut Rng, mut o: CustomObject) -> Result<Written, ApiError> {
        let (d, version) = self.definition_of(&o)?;
        if d.terminating {
            return Err(ApiError::new(Reason::MethodNotAllowed, "create not allowed while custom resource definition is terminating"));
        }
        o.body.resource = d.name.clone();
        if d.namespaced {
            if o.metadata.namespace.is_empty() {
                o.metadata.namespace = "default".into();
            }
            self.admit_namespace(&Object::CustomObject(o.clone()))?;
        } else {
            o.metadata.namespace = Name::default();
        }
        if o.metadata.name.is_empty() && !o.metadata.generate_name.is_empty() {
            o.metadata.name = format!("{}{}", o.metadata.generate_name, rng.name_suffix(5)).into();
        }
        let v = d.served(&version).cloned().unwrap_or_default();
        if v.status {
            // The status subresource's strategy: a create sets no status.
            o.body.content.remove("status");
        }
        let errs = admit_content(&v, &mut o);
        if !errs.is_empty() {
            return Err(ApiError::invalid_named(&d.qualified_kind(), &o.metadata.name, errs));
        }
        let meta = &mut o.metadata;
        meta.uid = rng.uuid().into();
        meta.creation_timestamp = Some(now);
        meta.resource_version = 0;
        meta.deletion_timestamp = None;
        meta.deletion_grace_period_seconds = None;
        meta.generation = 1;
        let name = meta.name.clone();
        self.etcd.create(Object::CustomObject(o)).map(Written::Changed).map_err(|_| ApiError::already_exists_named(&d.name, &name))
    }

    #[inline(never)]
    pub(crate) fn update_custom(&mut self, o: CustomObject, status_only: bool) -> Result<Written, ApiError> {
        let (d, version) = self.definition_of(&o)?;
        let v = d.served(&version).cloned().unwrap_or_default();
        if status_only && !v.status {
            return Err(not_served());
        }
        let namespace = if !d.namespaced {
            ""
        } else if o.metadata.namespace.is_empty() {
            "default"
        } else {
            &o.metadata.namespace
        };
        let key = ObjectKey::custom(&d.name, namespace, &o.metadata.name);
        let current = self.etcd.get(&key).cloned().ok_or_else(|| ApiError::not_found_named(&d.name, &key.name))?;
        let Some(old) = current.as_custom_object() else { return Err(not_served()) };
        if o.metadata.resource_version != 0 && o.metadata.resource_version != old.metadata.resource_version {
            return Err(ApiError::conflict_named(&d.name, &key.name));
        }
        let mut next = if status_only {
            let mut next = old.clone();
            match o.body.content.get("status") {
                Some(s) => next.body.content.insert("status".into(), s.clone()),
                None => next.body.content.remove("status"),
            };
            next
        } else {
            let mut next = o;
            next.metadata.namespace = key.namespace.clone();
            next.body.resource = d.name.clone();
            if v.status {
                match old.body.content.get("status") {
                    Some(s) => next.body.content.insert("status".into(), s.clone()),
                    None => next.body.content.remove("status"),
                };
            }
            next
        };
        let errs = admit_content(&v, &mut next);
        if !errs.is_empty() {
            return Err(ApiError::invalid_named(&d.qualified_kind(), &key.name, errs));
        }
        {
            let (a, b) = (&old.metadata, &mut next.metadata);
            b.uid = a.uid.clone();
            b.creation_timestamp = a.creation_timestamp;
            b.deletion_timestamp = a.deletion_timestamp;
            b.deletion_grace_period_seconds = a.deletion_grace_period_seconds;
            b.generation = a.generation;
            b.resource_version = a.resource_version;
        }
        // generation follows everything but metadata, and but status where status has a
        // subresource of its own.
        let without_status = |c: &Content| {
            c.iter().filter(|(k, _)| !(v.status && k.as_str() == "status")).map(|(k, v)| (k.clone(), v.clone())).collect::<Content>()
        };
        if !status_only && without_status(&next.body.content) != without_status(&old.body.content) {
            next.metadata.generation += 1;
        }
        let next = Object::CustomObject(next);
        if next == *current {
            return Ok(Written::Unchanged(current));
        }
        if deletes_during_update(&current, &next) {
            return self.etcd.delete(&key, None).map(Written::Changed).map_err(|_| ApiError::not_found_named(&d.name, &key.name));
        }
        self.etcd.update(next, None).map(Written::Changed).map_err(|_| ApiError::conflict_named(&d.name, &key.name))
    }
}

/// Prunes, defaults and validates an object's content against its version's schema, and
/// checks its metadata as every object's is; the field errors, if any.
fn admit_content(v: &super::Version, o: &mut CustomObject) -> Vec<FieldError> {
    let mut content = Value::Object(std::mem::take(&mut o.body.content));
    v.schema.prune(&mut content);
    v.schema.default_value(&mut content);
    let mut errs = validation::validate(&Object::CustomObject(o.clone()));
    v.schema.validate(&content, "", &mut errs);
    if let Value::Object(map) = content {
        o.body.content = map;
    }
    errs
}

#[cfg(test)]
pub(crate) fn crontab_definition() -> Value {
    json!({
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "crontabs.stable.example.com"},
        "spec": {"group": "stable.example.com", "scope": "Namespaced",
            "names": {"plural": "crontabs", "singular": "crontab", "kind": "CronTab", "shortNames": ["ct"]},
            "versions": [{"name": "v1", "served": true, "storage": true,
                "schema": {"openAPIV3Schema": {"type": "object", "properties": {"spec": {"type": "object", "properties": {
                    "cronSpec": {"type": "string"}, "replicas": {"type": "integer", "minimum": 1, "default": 1}}}}}}}]}
    })
}
