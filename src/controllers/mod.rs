//! kube-controller-manager's controllers, and the contract each one keeps.
//!
//! A controller is level-triggered: its event handlers only decide which keys to enqueue; all
//! decisions happen in `reconcile`, which reads the shared informer caches, never mutates them,
//! and returns the writes to make as data (`Sync`). A controller declares the kinds it watches
//! (`watches`); it hears only their deltas and reads only their stores (`Caches`). The controller manager (`manager`) runs the
//! work queues and workers and sends the writes; the simulation delivers them.

pub mod cronjob;
pub mod daemon_set;
pub mod deployment;
pub mod disruption;
pub mod edge;
pub mod endpoint_slice;
pub mod endpoints;
pub mod garbage_collector;
pub mod horizontal;
pub mod job;
pub mod manager;
pub mod namespace;
pub mod node_lifecycle;
pub mod pod_gc;
pub mod replica_set;
pub mod revisions;
pub mod stateful_set;
pub mod storage_protection;
pub mod taint_eviction;
pub mod ttl_after_finished;
pub mod volume_binder;

use crate::api::{ApiError, ApiRequest};
use crate::model::{Duration, Kind, Object, ObjectKey, Time};
use crate::runtime::events::EventSpec;
use crate::runtime::informer::Delta;
use crate::runtime::store::Store;
use std::rc::Rc;

/// The shared informers' stores a controller reads, one per kind it watches (read-only):
/// `caches[Kind::Pod].owned_by(uid)`.
#[derive(Clone, Copy)]
pub struct Caches<'a> {
    stores: [Option<&'a Store>; Kind::COUNT],
}

impl<'a> Caches<'a> {
    /// The view of these stores (one per kind; a later store of a kind replaces an earlier one).
    pub fn new(stores: impl IntoIterator<Item = &'a Store>) -> Self {
        let mut caches = Caches { stores: [None; Kind::COUNT] };
        for store in stores {
            caches.stores[store.kind() as usize] = Some(store);
        }
        caches
    }
    /// The store of `kind`, if the controller watches it.
    pub fn get(&self, kind: Kind) -> Option<&'a Store> {
        self.stores[kind as usize]
    }
}

impl<'a> std::ops::Index<Kind> for Caches<'a> {
    type Output = Store;
    /// The store of `kind`. Reading a kind the controller did not declare in `watches` is a bug
    /// in the controller, so it panics rather than read an empty store.
    fn index(&self, kind: Kind) -> &Store {
        self.get(kind).unwrap_or_else(|| panic!("a controller read {kind} without watching it (Controller::watches)"))
    }
}

/// One write of a sync, with the events it records when it succeeds or fails.
#[derive(Clone, Debug)]
pub struct Call {
    pub request: ApiRequest,
    /// Recorded when the call succeeds; `{name}` in its message becomes the name of the object
    /// the server returned (a pod's generated name).
    pub on_success: Option<EventSpec>,
    /// Recorded with the error message appended when the call fails.
    pub on_failure: Option<EventSpec>,
    pub expect: Expect,
    /// With `Expect::NotFound`: the UID the owner had. An object found under the same name with
    /// another UID is a new object, and the owner is gone all the same (the collector's
    /// `isDangling` compares UIDs).
    pub absent_uid: Option<String>,
    /// A create refused because the object already exists records no failure event (the
    /// StatefulSet controller "sinks already exists errors": a stale cache, not a fault).
    pub quiet_if_exists: bool,
}

/// What a call must find for the sync to go on.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Expect {
    #[default]
    Success,
    /// A live lookup that must come back NotFound (the garbage collector confirming an owner is
    /// really gone before deleting its dependents). Finding the object ends the sync quietly.
    NotFound,
}

impl Call {
    pub fn new(request: ApiRequest) -> Self {
        Call { request, on_success: None, on_failure: None, expect: Expect::Success, absent_uid: None, quiet_if_exists: false }
    }
    pub fn expect_not_found(request: ApiRequest) -> Self {
        Call { expect: Expect::NotFound, ..Call::new(request) }
    }
    /// A live lookup that must find no object with `uid` under the requested name.
    pub fn expect_absent(request: ApiRequest, uid: &str) -> Self {
        Call { absent_uid: Some(uid.to_string()), ..Call::expect_not_found(request) }
    }
    pub fn on_success(mut self, event: EventSpec) -> Self {
        self.on_success = Some(event);
        self
    }
    pub fn on_failure(mut self, event: EventSpec) -> Self {
        self.on_failure = Some(event);
        self
    }
    pub fn quiet_if_exists(mut self) -> Self {
        self.quiet_if_exists = true;
        self
    }
}

/// How one call ended.
#[derive(Clone, Debug)]
pub enum Outcome {
    Done(Rc<Object>),
    Failed(ApiError),
    /// A call answered with a list (`deletecollection`: what is still there).
    Listed(Vec<Rc<Object>>),
    /// A metrics API call answered (the horizontal pod autoscaler's).
    Metrics(Vec<crate::model::PodMetric>),
    /// Never sent, because an earlier step (or an earlier call of a slow-start batch) failed.
    Skipped,
}

/// What to do with the key after its sync (`reconcile`'s return, kube-runtime's `Action`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Action {
    /// Nothing more until something changes.
    AwaitChange,
    /// Look again after this long (`AddAfter`), e.g. for minReadySeconds or a progress deadline.
    RequeueAfter(Duration),
}

/// The result of one reconcile: writes in steps, each step's calls sent together, the next step
/// only once every call of the previous one succeeded (as a sync function's sequential API calls
/// and the ReplicaSet controller's slow-start batches behave). If any call fails, the remaining
/// steps are skipped and the key is requeued with the rate limiter's back-off.
#[derive(Clone, Debug)]
pub struct Sync {
    pub steps: Vec<Vec<Call>>,
    pub then: Action,
    /// The decision in words, for the page ("ReplicaSet web-7d9f6c: 2 of 3, creating 1").
    /// `None` when the sync found nothing worth reporting.
    pub summary: Option<String>,
}

impl Sync {
    /// A sync that found nothing to do.
    pub fn nothing() -> Self {
        Sync { steps: Vec::new(), then: Action::AwaitChange, summary: None }
    }
    pub fn with_steps(steps: Vec<Vec<Call>>, summary: impl Into<String>) -> Self {
        let steps = steps.into_iter().filter(|s| !s.is_empty()).collect();
        Sync { steps, then: Action::AwaitChange, summary: Some(summary.into()) }
    }
    pub fn then(mut self, action: Action) -> Self {
        self.then = action;
        self
    }
}

/// The expectations half of `on_outcome` for controllers that create and delete pods under
/// expectations (ReplicaSet, DaemonSet): a create or delete that failed will never be observed,
/// so it is no longer expected.
pub(crate) fn forget_failed_call(
    expectations: &mut crate::runtime::expectations::Expectations,
    key: &ObjectKey,
    call: &Call,
    outcome: &Outcome,
) {
    if matches!(outcome, Outcome::Done(_)) {
        return;
    }
    match &call.request {
        ApiRequest::Create(_) => expectations.creation_observed(key),
        ApiRequest::Delete(d) => expectations.deletion_observed(key, &d.key),
        _ => {}
    }
}

/// A controller inside kube-controller-manager.
pub trait Controller {
    /// Its name as kube-controller-manager logs it (`replicaset-controller`).
    fn name(&self) -> &'static str;
    /// The component name its events carry in `source.component` (`replicaset-controller`).
    fn event_source(&self) -> &'static str {
        self.name()
    }
    /// An event handler: which keys this change should enqueue. It may note what it saw
    /// (expectations) but decides nothing else.
    fn on_delta(&mut self, caches: &Caches, delta: &Delta, now: Time) -> Vec<ObjectKey>;
    /// The sync function for one key.
    fn reconcile(&mut self, key: &ObjectKey, caches: &Caches, now: Time) -> Sync;
    /// How one of its calls ended (for expectations); called for every call, skipped ones too.
    fn on_outcome(&mut self, _key: &ObjectKey, _call: &Call, _outcome: &Outcome) {}
    /// The process restarted: forget every in-memory thing (expectations, caches of its own).
    fn reset(&mut self);
    /// The kinds whose deltas it hears and whose stores it reads (the informers it asks the
    /// shared informer factory for). The manager runs one informer per kind any controller
    /// watches, started in the order the controllers first name them.
    fn watches(&self) -> &'static [Kind];
    /// Events it decided to record without a write to hang them on (a cancelled eviction, a
    /// node's status change); the manager records them after each reconcile.
    fn take_events(&mut self) -> Vec<EventSpec> {
        Vec::new()
    }
    /// Concurrent syncs (`--concurrent-*-syncs`).
    fn workers(&self) -> usize {
        5
    }
    /// The zone health this controller tracks, if it is the node lifecycle controller: read by
    /// tests and views through the manager (`ControllerManager::zone_state`), so that no caller
    /// needs to downcast a controller to its concrete type.
    fn zone_state(&self, _zone: &str) -> Option<node_lifecycle::ZoneState> {
        None
    }
}
