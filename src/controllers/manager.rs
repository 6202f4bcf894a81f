//! kube-controller-manager: one process, shared informers, and a work queue per controller.
//!
//! One shared informer per kind a controller watches (`Controller::watches`), each a reflector
//! with its store; every delta goes to the handlers of the controllers that watch its kind,
//! which enqueue keys, and each controller reads only the stores of its kinds. Up to
//! `workers()` keys per controller are synced at once; a sync's writes go out step by step, and
//! the key is done when the last step is answered. Failures requeue the key with the rate
//! limiter's back-off. Restarting the process forgets everything but the claims in etcd: the
//! informers re-list and every controller closes whatever gaps it finds.

use super::edge::{self, EdgeState, Mode};
use super::{Action, Caches, Call, Controller, Expect, Outcome, Sync};
use crate::api::{ApiRequest, ApiResponse, ApiResult, FieldFilter, Reason, WatchEvent, WatchId};
use crate::model::{Duration, Kind, Object, ObjectKey, ObjectMeta, Time};
use crate::runtime::events::{EventRecorder, EventSpec};
use crate::runtime::fasthash::FastMap;
use crate::runtime::informer::{Delta, Informer};
use crate::runtime::workqueue::WorkQueue;
use crate::runtime::{Component, Ctx, LoopPhase, LoopStatus, RequestId};
use std::collections::VecDeque;

/// How long after its last informer delta a controller is drawn as observing.
const OBSERVE_GLOW: Duration = Duration::millis(150);

/// A sync whose writes are under way.
struct RunningSync {
    steps: VecDeque<Vec<Call>>,
    in_flight: FastMap<RequestId, Call>,
    failed: bool,
    /// A live lookup found what it expected to be gone: stop without error.
    stopped: bool,
    then: Action,
}

struct Slot {
    controller: Box<dyn Controller>,
    queue: WorkQueue<ObjectKey>,
    running: FastMap<ObjectKey, RunningSync>,
    recorder: EventRecorder,
    status: LoopStatus,
    last_delta: Option<Time>,
    /// Level (reconcile) or edge (act on each event's delta, `edge`); a setting, so it
    /// survives a restart.
    mode: Mode,
    edge: EdgeState,
    /// Switched off (`sim stop kube-controller-manager/NAME`), as if the process ran with
    /// `--controllers=*,-NAME`: a setting, so it survives a restart of the process.
    stopped: bool,
}

pub struct ControllerManager {
    /// The shared informers, in the order the controllers first name their kinds (which is the
    /// order they list and watch in).
    informers: Vec<Informer>,
    /// Where each kind's informer is in `informers`.
    by_kind: [Option<usize>; Kind::COUNT],
    /// The slots whose controllers watch each kind, in slot order: a delta is handed to these
    /// only, without asking each of the twenty controllers whether it watches the kind.
    watchers: [Vec<usize>; Kind::COUNT],
    slots: Vec<Slot>,
    /// Which controller and key each in-flight write belongs to.
    pending: FastMap<RequestId, (usize, ObjectKey)>,
    /// Edge-mode writes in flight: fire and forget, only their events are recorded.
    edge_pending: FastMap<RequestId, (usize, Call)>,
    now: Time,
    /// Whether discovery has shown a CustomResourceDefinition: until then the informers of
    /// `discovered_later` kinds are not started (no list, no watch), as the real garbage collector
    /// has no monitor for a resource discovery has not shown. Learned once, and kept across a
    /// restart (a restarted process reads discovery at once).
    custom_resources_discovered: bool,
}

/// The kinds a controller watches only once discovery shows a CustomResourceDefinition: the
/// definitions and the objects of the resources they define. A cluster that never has one
/// lists and watches exactly what it did before custom resources were modelled.
fn discovered_later(kind: Kind) -> bool {
    matches!(kind, Kind::CustomResourceDefinition | Kind::CustomObject)
}

impl ControllerManager {
    pub fn new(controllers: Vec<Box<dyn Controller>>) -> Self {
        let slots = controllers
            .into_iter()
            .map(|controller| {
                let name = controller.name().to_string();
                Slot {
                    recorder: EventRecorder::new(controller.event_source(), ""),
                    status: LoopStatus { name, ..Default::default() },
                    controller,
                    queue: WorkQueue::new(),
                    running: FastMap::default(),
                    last_delta: None,
                    mode: Mode::Level,
                    edge: EdgeState::default(),
                    stopped: false,
                }
            })
            .collect::<Vec<Slot>>();
        let mut informers: Vec<Informer> = Vec::new();
        let mut by_kind = [None; Kind::COUNT];
        for &kind in slots.iter().flat_map(|s| s.controller.watches()) {
            if by_kind[kind as usize].is_none() {
                by_kind[kind as usize] = Some(informers.len());
                informers.push(Informer::new(kind, FieldFilter::All));
            }
        }
        let mut watchers: [Vec<usize>; Kind::COUNT] = std::array::from_fn(|_| Vec::new());
        for (index, slot) in slots.iter().enumerate() {
            for &kind in slot.controller.watches() {
                if !watchers[kind as usize].contains(&index) {
                    watchers[kind as usize].push(index);
                }
            }
        }
        ControllerManager {
            informers,
            by_kind,
            watchers,
            slots,
            pending: FastMap::default(),
            edge_pending: FastMap::default(),
            now: Time(0),
            custom_resources_discovered: false,
        }
    }

    /// Whether the informer in this place runs: every one, but those of `discovered_later`
    /// kinds only once discovery showed a definition.
    fn runs(&self, index: usize) -> bool {
        self.custom_resources_discovered || !discovered_later(self.informers[index].kind())
    }

    /// The controllers kube-controller-manager runs by default (of those kubeloop models).
    pub fn standard() -> Self {
        Self::new(vec![
            Box::new(super::deployment::DeploymentController::new()),
            Box::new(super::replica_set::ReplicaSetController::new()),
            Box::new(super::garbage_collector::GarbageCollector::new()),
            Box::new(super::node_lifecycle::NodeLifecycleController::new()),
            Box::new(super::taint_eviction::TaintEvictionController::new()),
            Box::new(super::namespace::NamespaceController::new()),
            Box::new(super::endpoint_slice::EndpointSliceController::new()),
            Box::new(super::endpoints::EndpointsController),
            Box::new(super::pod_gc::PodGcController::new()),
            Box::new(super::job::JobController::new()),
            Box::new(super::ttl_after_finished::TtlAfterFinishedController::new()),
            Box::new(super::daemon_set::DaemonSetController::new()),
            Box::new(super::disruption::DisruptionController::new()),
            Box::new(super::replica_set::ReplicaSetController::for_replication_controllers()),
            Box::new(super::horizontal::HorizontalController::new()),
            Box::new(super::cronjob::CronJobController::new()),
            Box::new(super::stateful_set::StatefulSetController::new()),
            Box::new(super::volume_binder::VolumeBinder::new()),
            Box::new(super::storage_protection::StorageProtection::new()),
        ])
    }

    /// Whether the informers of the kinds this controller watches have synced: each controller
    /// waits for its own caches (`WaitForNamedCacheSync`), not for every informer of the process.
    fn slot_synced(&self, index: usize) -> bool {
        let watches = self.slots[index].controller.watches();
        watches.iter().all(|k| self.by_kind[*k as usize].is_none_or(|i| !self.runs(i) || self.informers[i].has_synced()))
    }

    /// The health the node lifecycle controller holds for a zone (`Normal`,
    /// `PartialDisruption`, `FullDisruption`), for tests and views.
    pub fn zone_state(&self, zone: &str) -> Option<super::node_lifecycle::ZoneState> {
        self.slots.iter().find_map(|s| s.controller.zone_state(zone))
    }

    /// The slot of a controller, by loop name or `--controllers` name.
    /// (`job` finds `job-controller`).
    fn slot_index(&self, controller: &str) -> Option<usize> {
        let name = edge::loop_name(controller);
        let suffixed = format!("{name}-controller");
        self.slots
            .iter()
            .position(|s| s.controller.name() == name)
            .or_else(|| self.slots.iter().position(|s| s.controller.name() == suffixed))
    }

    /// How a controller reacts to events: `Mode::Level` unless switched.
    pub fn mode(&self, controller: &str) -> Mode {
        self.slot_index(controller).map_or(Mode::Level, |i| self.slots[i].mode)
    }

    /// Switches a controller between level- and edge-triggered. Going edge drops its queue;
    /// going back to level forgets its in-memory state and looks at every ReplicaSet and
    /// Deployment again, as an informer resync would.
    pub fn set_mode(&mut self, controller: &str, mode: Mode) -> Result<(), String> {
        let index = self.slot_index(controller).ok_or_else(|| format!("no controller {controller:?} in kube-controller-manager"))?;
        let name = self.slots[index].controller.name();
        if mode == Mode::Edge && !edge::supports(name) {
            return Err(format!("{name} has no edge-triggered mode (replicaset and deployment have)"));
        }
        let slot = &mut self.slots[index];
        let caches = caches_for(&self.informers, &self.by_kind, slot.controller.watches());
        if slot.mode == mode {
            return Ok(());
        }
        slot.mode = mode;
        slot.edge = EdgeState::default();
        match mode {
            Mode::Edge => slot.queue.clear(),
            Mode::Level => {
                slot.controller.reset();
                // Every Deployment, then every ReplicaSet, of those kinds it watches.
                let stores = [Kind::Deployment, Kind::ReplicaSet].map(|kind| caches.get(kind));
                for object in stores.into_iter().flatten().flat_map(|store| store.iter()) {
                    let resync = Delta::Updated { old: object.clone(), new: object.clone() };
                    for key in slot.controller.on_delta(&caches, &resync, self.now) {
                        slot.queue.add(key);
                    }
                }
            }
        }
        Ok(())
    }

    /// The loop names of the controllers, in the order they run.
    pub fn controller_names(&self) -> impl Iterator<Item = &str> {
        self.slots.iter().map(|s| s.controller.name())
    }

    /// Whether a controller is switched off. Unknown names are not.
    pub fn is_stopped(&self, controller: &str) -> bool {
        self.slot_index(controller).is_some_and(|i| self.slots[i].stopped)
    }

    /// Switches one controller off or on inside the running process, and says which
    /// (`job-controller`). Off, it forgets its queue and the syncs under way (their answers are
    /// dropped) and its handlers see no more deltas. On, it starts from nothing as it would in a
    /// restarted process: its handlers are shown every object of the kinds it watches, so it
    /// closes whatever gap opened while it was off — the loop is level-triggered.
    pub fn set_stopped(&mut self, controller: &str, stopped: bool) -> Result<&str, String> {
        let index = self.slot_index(controller).ok_or_else(|| {
            let names: Vec<&str> = self.controller_names().collect();
            format!("unknown controller {controller:?} in kube-controller-manager; known controllers: {}", names.join(", "))
        })?;
        let slot = &mut self.slots[index];
        let name = slot.controller.name();
        if slot.stopped == stopped {
            return Err(format!("kube-controller-manager/{name} is already {}", if stopped { "stopped" } else { "running" }));
        }
        slot.stopped = stopped;
        slot.controller.reset();
        slot.queue.clear();
        slot.running.clear();
        slot.edge = EdgeState::default();
        slot.last_delta = None;
        self.pending.retain(|_, (i, _)| *i != index);
        self.edge_pending.retain(|_, (i, _)| *i != index);
        if !stopped {
            self.resync(index);
        }
        Ok(self.slots[index].controller.name())
    }

    /// Shows a controller's handlers every cached object of the kinds it watches, as a new
    /// informer's initial list would.
    fn resync(&mut self, index: usize) {
        let slot = &mut self.slots[index];
        let watches = slot.controller.watches();
        let caches = caches_for(&self.informers, &self.by_kind, watches);
        for &kind in watches {
            let Some(store) = caches.get(kind) else { continue };
            for object in store.iter() {
                for key in slot.controller.on_delta(&caches, &Delta::Added(object.clone()), self.now) {
                    slot.queue.add(key);
                }
            }
        }
    }

    /// Hands deltas to every controller's handlers. `watch` carries the context when they came
    /// from a watch event: only those are events to an edge-triggered controller (a list's
    /// deltas are a re-read of the state, which edge mode never does).
    fn dispatch(&mut self, deltas: Vec<Delta>, mut watch: Option<&mut Ctx>) {
        for delta in &deltas {
            let kind = delta.object().kind();
            for &index in &self.watchers[kind as usize] {
                let slot = &mut self.slots[index];
                if slot.stopped {
                    continue;
                }
                let caches = caches_for(&self.informers, &self.by_kind, slot.controller.watches());
                if slot.mode == Mode::Edge {
                    let Some(ctx) = watch.as_deref_mut() else { continue };
                    let Some(reaction) = slot.edge.react(slot.controller.name(), &caches, delta) else { continue };
                    slot.last_delta = Some(self.now);
                    slot.status.turns += 1;
                    slot.status.last_action = format!("edge: {}", reaction.summary);
                    slot.status.last_action_at = Some(self.now);
                    for call in reaction.calls {
                        let id = ctx.send(call.request.clone());
                        self.edge_pending.insert(id, (index, call));
                    }
                    continue;
                }
                let keys = slot.controller.on_delta(&caches, delta, self.now);
                if !keys.is_empty() {
                    slot.last_delta = Some(self.now);
                }
                for key in keys {
                    slot.queue.add(key);
                }
            }
        }
    }

    /// An edge write was answered: record its event; nothing is retried.
    fn finish_edge_call(&mut self, ctx: &mut Ctx, index: usize, call: Call, result: ApiResult) {
        if let (Some(spec), Some(slot)) = (edge::outcome_event(&call, &result), self.slots.get_mut(index)) {
            record(&mut slot.recorder, spec, ctx);
        }
    }

    /// Starts syncs for queued keys while workers are free.
    fn work(&mut self, ctx: &mut Ctx) {
        for index in 0..self.slots.len() {
            // Most passes find most of the twenty queues empty: that is asked first, as it
            // costs less than asking each of the controller's informers whether it synced.
            let queue = &self.slots[index].queue;
            let idle = queue.is_empty() && queue.next_due().is_none_or(|t| t > ctx.now);
            if idle || self.slots[index].stopped || !self.slot_synced(index) {
                continue;
            }
            self.slots[index].queue.promote_due(ctx.now);
            loop {
                let slot = &mut self.slots[index];
                if slot.running.len() >= slot.controller.workers() {
                    break;
                }
                let Some(key) = slot.queue.get() else { break };
                let caches = caches_for(&self.informers, &self.by_kind, slot.controller.watches());
                let sync = slot.controller.reconcile(&key, &caches, ctx.now);
                for spec in slot.controller.take_events() {
                    record(&mut slot.recorder, spec, ctx);
                }
                slot.status.turns += 1;
                self.begin(index, key, sync, ctx);
            }
        }
    }

    fn begin(&mut self, index: usize, key: ObjectKey, sync: Sync, ctx: &mut Ctx) {
        let slot = &mut self.slots[index];
        if let Some(summary) = &sync.summary {
            if !sync.steps.is_empty() || slot.status.last_action.is_empty() {
                slot.status.last_action = summary.clone();
                slot.status.last_action_at = Some(ctx.now);
            }
        }
        let running =
            RunningSync { steps: sync.steps.into(), in_flight: FastMap::default(), failed: false, stopped: false, then: sync.then };
        slot.running.insert(key.clone(), running);
        self.next_step(index, &key, ctx);
    }

    /// Sends the next step of a running sync, or finishes it.
    fn next_step(&mut self, index: usize, key: &ObjectKey, ctx: &mut Ctx) {
        let slot = &mut self.slots[index];
        let Some(run) = slot.running.get_mut(key) else { return };
        if !run.in_flight.is_empty() {
            return;
        }
        if !run.failed && !run.stopped {
            if let Some(step) = run.steps.pop_front() {
                for mut call in step {
                    let identity = sent_identity(&call.request);
                    let id = ctx.send(std::mem::replace(&mut call.request, identity));
                    run.in_flight.insert(id, call);
                    self.pending.insert(id, (index, key.clone()));
                }
                return;
            }
        }
        let run = slot.running.remove(key).expect("checked above");
        for call in run.steps.into_iter().flatten() {
            slot.controller.on_outcome(key, &call, &Outcome::Skipped);
        }
        slot.queue.done(key);
        if run.failed {
            slot.queue.add_rate_limited(key.clone(), ctx.now);
        } else {
            slot.queue.forget(key);
            if let Action::RequeueAfter(d) = run.then {
                slot.queue.add_after(key.clone(), d, ctx.now);
            }
        }
    }

    fn finish_call(&mut self, ctx: &mut Ctx, id: RequestId, result: ApiResult) {
        let Some((index, key)) = self.pending.remove(&id) else { return };
        let slot = &mut self.slots[index];
        let Some(run) = slot.running.get_mut(&key) else { return };
        let Some(call) = run.in_flight.remove(&id) else { return };
        let outcome = match (call.expect, result) {
            (Expect::NotFound, Err(e)) if e.reason == Reason::NotFound => Outcome::Failed(e),
            (Expect::NotFound, Ok(ApiResponse::Object(o))) if call.absent_uid.as_deref().is_some_and(|uid| o.meta().uid != uid) => {
                Outcome::Failed(crate::api::ApiError::not_found(o.kind(), &o.meta().name))
            }
            (Expect::NotFound, Ok(_)) => {
                run.stopped = true;
                Outcome::Skipped
            }
            (_, Ok(ApiResponse::Object(o))) => Outcome::Done(o),
            (_, Ok(ApiResponse::List { items, .. })) => Outcome::Listed(items),
            (_, Ok(ApiResponse::PodMetrics(metrics))) => Outcome::Metrics(metrics),
            (_, Ok(_)) => Outcome::Skipped,
            (_, Err(e)) => {
                run.failed = true;
                Outcome::Failed(e)
            }
        };
        let event = match (&outcome, call.expect) {
            (Outcome::Done(o), Expect::Success) => call.on_success.clone().map(|e| e.naming(&o.meta().name)),
            (Outcome::Failed(err), _) if call.quiet_if_exists && err.reason == crate::api::Reason::AlreadyExists => None,
            (Outcome::Failed(err), Expect::Success) => call.on_failure.clone().map(|e| e.failing_with(&err.message)),
            _ => None,
        };
        if call.expect == Expect::NotFound && matches!(outcome, Outcome::Failed(_)) {
            // The owner really is gone: that is the success this call wanted.
            slot.controller.on_outcome(&key, &call, &Outcome::Skipped);
        } else {
            slot.controller.on_outcome(&key, &call, &outcome);
        }
        if let Some(spec) = event {
            record(&mut slot.recorder, spec, ctx);
        }
        self.next_step(index, &key, ctx);
    }
}

/// The stores of `kinds`: what a controller watching them reads.
fn caches_for<'a>(informers: &'a [Informer], by_kind: &[Option<usize>; Kind::COUNT], kinds: &[Kind]) -> Caches<'a> {
    Caches::new(kinds.iter().filter_map(|k| by_kind[*k as usize]).map(|i| informers[i].store()))
}

/// What an in-flight call keeps of its request once it is sent: the verb and, for an object,
/// its kind and identity (name, generateName, namespace, UID) — all that `on_outcome` and the
/// events read; the object's content travels with the request. Copying a whole pod or
/// ReplicaSet for every write a sync sends cost more than the rest of sending it.
fn sent_identity(request: &ApiRequest) -> ApiRequest {
    let identity = |o: &Object| {
        let m = o.meta();
        let meta = ObjectMeta {
            name: m.name.clone(),
            generate_name: m.generate_name.clone(),
            namespace: m.namespace.clone(),
            uid: m.uid.clone(),
            ..Default::default()
        };
        let mut out = Object::empty(o.kind());
        *out.meta_mut() = meta;
        out
    };
    match request {
        ApiRequest::Create(o) => ApiRequest::Create(identity(o)),
        ApiRequest::Update(o) => ApiRequest::Update(identity(o)),
        ApiRequest::UpdateStatus(o) => ApiRequest::UpdateStatus(identity(o)),
        other => other.clone(),
    }
}

fn record(recorder: &mut EventRecorder, spec: EventSpec, ctx: &mut Ctx) {
    recorder.send(spec, ctx);
}

impl Component for ControllerManager {
    fn name(&self) -> String {
        "kube-controller-manager".into()
    }

    fn start(&mut self, ctx: &mut Ctx) {
        self.now = ctx.now;
        self.pending.clear();
        self.edge_pending.clear();
        for slot in &mut self.slots {
            slot.edge = EdgeState::default();
            slot.controller.reset();
            slot.queue.clear();
            slot.running.clear();
            slot.recorder.clear();
            slot.last_delta = None;
        }
        for i in 0..self.informers.len() {
            if self.runs(i) {
                self.informers[i].start(ctx);
            }
        }
    }

    /// Discovery shows a CustomResourceDefinition: the informers that waited for one start.
    fn handle_discovery(&mut self, ctx: &mut Ctx) {
        if self.custom_resources_discovered {
            return;
        }
        self.custom_resources_discovered = true;
        self.now = ctx.now;
        for i in 0..self.informers.len() {
            if discovered_later(self.informers[i].kind()) {
                self.informers[i].start(ctx);
            }
        }
    }

    fn handle_response(&mut self, ctx: &mut Ctx, id: RequestId, result: ApiResult) {
        self.now = ctx.now;
        let owner = self.informers.iter().position(|i| i.owns_request(id));
        match owner {
            Some(i) => {
                let deltas = self.informers[i].handle_response(ctx, id, result);
                self.dispatch(deltas, None);
            }
            None => match self.edge_pending.remove(&id) {
                Some((index, call)) => self.finish_edge_call(ctx, index, call, result),
                None => match self.slots.iter_mut().find(|s| s.recorder.awaits(id)) {
                    Some(slot) => slot.recorder.answered(id, &result, ctx),
                    None => self.finish_call(ctx, id, result),
                },
            },
        }
    }

    fn handle_watch_event(&mut self, ctx: &mut Ctx, watch: WatchId, event: WatchEvent) {
        self.now = ctx.now;
        let delta = self.informers.iter_mut().find(|i| i.owns_watch(watch)).and_then(|i| i.handle_watch_event(event));
        if let Some(delta) = delta {
            self.dispatch(vec![delta], Some(ctx));
        }
    }

    fn handle_watch_closed(&mut self, ctx: &mut Ctx, watch: WatchId) {
        self.now = ctx.now;
        for informer in &mut self.informers {
            informer.handle_watch_closed(ctx.now, watch);
        }
    }

    fn poll(&mut self, ctx: &mut Ctx) {
        self.now = ctx.now;
        for informer in &mut self.informers {
            informer.poll(ctx);
        }
        self.work(ctx);
    }

    fn next_wakeup(&self) -> Option<Time> {
        let informers = self.informers.iter().filter_map(|i| i.next_wakeup());
        let ready_work = (0..self.slots.len()).any(|i| {
            let s = &self.slots[i];
            !s.queue.is_empty() && s.running.len() < s.controller.workers() && self.slot_synced(i)
        });
        let delayed = self.slots.iter().filter_map(|s| s.queue.next_due());
        informers.chain(delayed).chain(ready_work.then_some(self.now)).min()
    }

    fn is_busy(&self) -> bool {
        (0..self.informers.len()).any(|i| self.runs(i) && !self.informers[i].is_watching())
            || self.slots.iter().any(|s| !s.queue.is_empty() || !s.running.is_empty())
    }

    fn loops(&self) -> Vec<LoopStatus> {
        self.slots
            .iter()
            .map(|s| {
                let mut status = s.status.clone();
                if s.mode == Mode::Edge {
                    // The room of loops says which kind of loop this is now.
                    status.name.push_str(" (edge-triggered)");
                }
                status.stopped = s.stopped;
                status.queue_depth = s.queue.len() + s.running.len();
                status.phase = if !s.running.is_empty() {
                    LoopPhase::Act
                } else if !s.queue.is_empty() {
                    LoopPhase::Compare
                } else if s.last_delta.is_some_and(|t| self.now.since(t) <= OBSERVE_GLOW) {
                    LoopPhase::Observe
                } else {
                    LoopPhase::Idle
                };
                status
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::DeleteRequest;
    use crate::model::{Container, Pod, PodSpec, ReplicaSet};

    #[test]
    fn a_sent_call_keeps_the_verb_and_the_objects_identity_only() {
        let pod = Pod {
            metadata: ObjectMeta {
                generate_name: "web-7d9c-".into(),
                namespace: "default".into(),
                uid: "uid-1".into(),
                resource_version: 7,
                ..Default::default()
            },
            spec: PodSpec { containers: vec![Container { name: "nginx".into(), ..Default::default() }].into(), ..Default::default() }
                .into(),
            ..Default::default()
        };
        let ApiRequest::Create(Object::Pod(kept)) = sent_identity(&ApiRequest::Create(Object::Pod(pod))) else { panic!("a pod create") };
        assert_eq!(
            (kept.metadata.generate_name.as_str(), kept.metadata.namespace.as_str(), kept.metadata.uid.as_str()),
            ("web-7d9c-", "default", "uid-1")
        );
        assert_eq!((kept.metadata.resource_version, kept.spec.containers.len()), (0, 0));
        let rs = ReplicaSet { metadata: ObjectMeta { name: "web-7d9c".into(), ..Default::default() }, ..Default::default() };
        let kept = sent_identity(&ApiRequest::UpdateStatus(Object::ReplicaSet(rs)));
        assert!(matches!(&kept, ApiRequest::UpdateStatus(Object::ReplicaSet(r)) if r.metadata.name == "web-7d9c"));
        let delete = ApiRequest::Delete(DeleteRequest::new(ObjectKey::new(Kind::Pod, "default", "web-1")));
        assert!(matches!(sent_identity(&delete), ApiRequest::Delete(d) if d.key == ObjectKey::new(Kind::Pod, "default", "web-1")));
    }
}
