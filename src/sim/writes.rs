//! A hook on kube-apiserver's writes, for what a shell keeps about each write beside the object.
//!
//! kube-apiserver records on every object which client set which fields (`managedFields`, the
//! field manager of server-side apply). Only `kubeloop serve` shows objects to clients that read
//! them, so the bookkeeping lives there, behind this trait: the simulation calls an observer, if
//! one is installed, after each write it serves, with who sent it and the object before and after.
//! With none installed (the command line, the benchmarks) a request costs one `Option` check; the
//! page's wasm has none of this (native only: linked but unused it cost the page 0.5 KB of brotli).

use super::{ComponentId, Sim, SlotIndex};
use crate::api::{ApiRequest, ApiResponse, Handled};
use crate::model::{Object, ObjectKey, Time};
use std::rc::Rc;

/// Which write a request was, as a field manager tells its operations apart.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WriteVerb {
    Create,
    Update,
    /// The status subresource.
    UpdateStatus,
}

/// One write kube-apiserver committed.
pub struct Write<'a> {
    /// Who sent it: a component, or `ComponentId::User` for a request through `Sim::submit`.
    pub client: &'a ComponentId,
    pub verb: WriteVerb,
    /// The object before the write (none for a create).
    pub before: Option<&'a Object>,
    /// The object as stored after it (none when the write deleted it: the last finalizer gone).
    pub after: Option<&'a Object>,
    /// For a write of the console's kubectl, the field manager and subresource the real kubectl
    /// sends for the command it runs (`Sim::set_console_writer`).
    pub console: Option<(&'static str, &'static str)>,
}

/// What a shell keeps about writes (see the module's doc).
pub trait WriteObserver {
    /// A create, update or status update was committed at `now`.
    fn written(&mut self, now: Time, write: &Write<'_>);
}

impl Sim {
    /// Installs `observer`, which hears every create, update and status update served from now on.
    pub fn observe_writes(&mut self, observer: Box<dyn WriteObserver>) {
        self.write_observer = Some(observer);
    }

    /// The console's kubectl runs a command that writes as the real kubectl's does with this
    /// field manager and subresource (`command::kubectl::field_manager`); `None` when it is done.
    pub fn set_console_writer(&mut self, writer: Option<(&'static str, &'static str)>) {
        self.console_writer = writer;
    }

    /// Whether an observer hears this simulation's writes.
    pub fn observes_writes(&self) -> bool {
        self.write_observer.is_some()
    }

    /// Serves `request` through kube-apiserver and tells the observer what it wrote. Deletions,
    /// bindings and the other subresources write past the field manager in kube-apiserver too
    /// (straight to storage), so only creates and (status) updates are told.
    pub(super) fn serve_observed(&mut self, at: Time, request: ApiRequest, from: Option<SlotIndex>) -> Handled {
        let (verb, key) = match &request {
            ApiRequest::Create(_) => (WriteVerb::Create, None),
            ApiRequest::Update(o) => (WriteVerb::Update, Some(o.key())),
            ApiRequest::UpdateStatus(o) => (WriteVerb::UpdateStatus, Some(o.key())),
            _ => return self.api.handle(at, &mut self.rng, request),
        };
        let before: Option<Rc<Object>> = key.as_ref().and_then(|k| self.api.get(&with_default_namespace(k)).cloned());
        let handled = self.api.handle(at, &mut self.rng, request);
        if handled.revision.is_none() {
            return handled;
        }
        let Ok(ApiResponse::Object(written)) = &handled.result else { return handled };
        let after = self.api.get(&written.key()).cloned();
        let client = from.map_or(ComponentId::User, |slot| self.components[slot].id.clone());
        if let Some(observer) = self.write_observer.as_mut() {
            let console = if from.is_none() { self.console_writer } else { None };
            let write = Write { client: &client, verb, before: before.as_deref(), after: after.as_deref(), console };
            observer.written(at, &write);
        }
        handled
    }
}

/// A request's key as the API server reads it: a namespaced object without a namespace is in
/// `default`.
fn with_default_namespace(key: &ObjectKey) -> ObjectKey {
    if key.kind.namespaced() && key.namespace.is_empty() {
        ObjectKey::new(key.kind, "default", &key.name)
    } else {
        key.clone()
    }
}
