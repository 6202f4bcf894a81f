//! The kubelet: one per node, the hands of the cluster.
//!
//! It registers its Node, keeps its Lease and node status fresh, watches the pods bound to its
//! node and runs them on the node's container runtime: sandbox, image, create, start; restarts
//! what crashes with back-off; stops what is deleted within its grace period and then removes
//! the pod for good. It reports what is true on the node (pod phase, conditions, container
//! states) through the API server, and only when that changed.
//!
//! Only the process lives here. The container runtime — containers and images that outlive the
//! kubelet process — and the node's addresses are the machine's (`sim::Machine`), owned by the
//! Sim and lent to each call through `Ctx` (`runtime`, `runtime_mut`, `addressing` below): a
//! fault on the node changes the machine, never this memory. `proc` is the process: informers,
//! pod workers, back-offs, the status manager — all lost when the kubelet stops, and rebuilt by
//! `start`, which re-lists, finds the containers still running on the machine, and reconciles.
//! The machine's own timers (a container's planned exit) wake the kubelet through the Sim, as
//! containerd's events reach a real kubelet.
//!
//! Submodules: `pod_worker` (one pod's lifecycle), `status` (the pod status and the status
//! manager), `lease` (registration, node status, lease), `runtime` (containerd's state, kept on
//! the machine), `network` (what a pod IP answers), `prober` (probes), `images`
//! (image names, pull outcomes), `timings` (every duration and the back-off arithmetic),
//! `config_manager` (the referenced ConfigMaps and Secrets, a container's environment, volumes).

pub(crate) mod config_manager;
pub(crate) mod container_model;
pub mod images;
pub mod lease;
pub mod logs;
pub mod network;
pub mod pod_worker;
pub mod prober;
pub mod runtime;
pub mod status;
pub mod timings;

#[cfg(test)]
mod tests;

pub use pod_worker::{ANNOTATION_CRASH_AFTER, ANNOTATION_EXIT_CODE, ANNOTATION_IGNORE_SIGTERM};
pub use runtime::{CachedImage, ContainerRuntimeState, CrashPlan};
pub use timings::KubeletTimings;

use crate::api::{ApiResult, FieldFilter, Reason, WatchEvent, WatchId};
use crate::model::*;
use crate::runtime::events::EventRecorder;
use crate::runtime::fasthash::FastMap;
use crate::runtime::informer::{Delta, Informer};
use crate::runtime::{Component, Ctx, LoopPhase, LoopStatus, RequestId};
use crate::sim::NodeConfig;
use lease::{LeaseCall, LeaseState, NodeStatusState, Registration};
use pod_worker::PodWorker;
use status::{StatusManager, WaitingReason};
use std::collections::{BTreeSet, HashMap, VecDeque};
use timings::BackoffEntry;

/// A request this kubelet sent, for routing its answer.
#[derive(Clone, Debug)]
pub(crate) enum Pending {
    Register,
    RegisterGet,
    RegisterStatus,
    NodeStatus(Box<NodeStatus>),
    Lease(LeaseCall),
    PodStatus(String),
    PodDelete(String),
}

/// The kubelet process's memory: everything `start` throws away.
pub(crate) struct Process {
    started: bool,
    pods: Informer,
    node: Informer,
    /// Reflectors for the ConfigMaps and Secrets the node's pods reference.
    configs: config_manager::ConfigManager,
    /// Failed volume set-ups per pod UID, for the reconciler's exponential back-off.
    mount_failures: FastMap<String, u32>,
    recorder: EventRecorder,
    /// Pod workers by pod UID: only ever looked up (`timers` keeps the order that matters),
    /// and taken out and put back around every step of a pod, so hashed.
    workers: FastMap<String, PodWorker>,
    /// Worker timers by time.
    timers: BTreeSet<(Time, String)>,
    /// Pods with lifecycle work in progress (`is_busy` without a scan).
    busy: BTreeSet<String>,
    pleg_dirty: BTreeSet<String>,
    pleg_next: Option<Time>,
    /// This process's relist phase within the period.
    pleg_offset: u64,
    /// The serialized puller: the pod pulling now and those waiting, in order.
    pulling: Option<String>,
    pull_queue: VecDeque<String>,
    crash_backoff: HashMap<(String, String), BackoffEntry>,
    image_backoff: HashMap<(String, String), BackoffEntry>,
    /// The last pull error per (pod, image), quoted by the ImagePullBackOff message.
    pull_errors: HashMap<(String, String), String>,
    /// The reason cache: why each container of each pod did not start.
    reasons: FastMap<String, FastMap<String, WaitingReason>>,
    statuses: StatusManager,
    probes: prober::ProbeManager,
    requests: HashMap<RequestId, Pending>,
    registration: Registration,
    lease: LeaseState,
    node_status: NodeStatusState,
    orphans_checked: bool,
    last_action: String,
    last_action_at: Option<Time>,
    turns: u64,
}

impl Process {
    fn new(node: &str) -> Self {
        Process {
            started: false,
            pods: Informer::new(Kind::Pod, FieldFilter::NodeName(node.to_string())),
            node: Informer::new(Kind::Node, FieldFilter::Name(node.to_string())),
            configs: config_manager::ConfigManager::default(),
            mount_failures: FastMap::default(),
            recorder: EventRecorder::new("kubelet", node),
            workers: FastMap::default(),
            timers: BTreeSet::new(),
            busy: BTreeSet::new(),
            pleg_dirty: BTreeSet::new(),
            pleg_next: None,
            pleg_offset: 0,
            pulling: None,
            pull_queue: VecDeque::new(),
            crash_backoff: HashMap::new(),
            image_backoff: HashMap::new(),
            pull_errors: HashMap::new(),
            reasons: FastMap::default(),
            statuses: StatusManager::default(),
            probes: prober::ProbeManager::default(),
            requests: HashMap::new(),
            registration: Registration::default(),
            lease: LeaseState::default(),
            node_status: NodeStatusState::default(),
            orphans_checked: false,
            last_action: String::new(),
            last_action_at: None,
            turns: 0,
        }
    }
}

/// Why a kubelet call has no machine: only a harness that forgot to lend one.
const NO_MACHINE: &str = "a kubelet runs on its node's machine: the Sim lends it through Ctx";

/// The node's container runtime, on the machine lent for this call.
fn runtime<'c>(ctx: &'c Ctx) -> &'c runtime::Runtime {
    &ctx.machine().expect(NO_MACHINE).runtime
}

fn runtime_mut<'c>(ctx: &'c mut Ctx) -> &'c mut runtime::Runtime {
    &mut ctx.machine_mut().expect(NO_MACHINE).runtime
}

/// The node's addresses, on the machine lent for this call.
fn addressing<'c>(ctx: &'c Ctx) -> &'c crate::sim::machine::NodeAddressing {
    ctx.machine().expect(NO_MACHINE).addressing()
}

/// One node's kubelet, as a simulation component.
pub struct Kubelet {
    config: NodeConfig,
    timings: KubeletTimings,
    /// The process: rebuilt by `start`. The machine (its runtime and addresses) is not here: the
    /// Sim lends it through `Ctx` for each call.
    proc: Process,
}

impl Kubelet {
    pub fn new(config: NodeConfig) -> Kubelet {
        Self::with_timings(config, KubeletTimings::default())
    }

    pub fn with_timings(config: NodeConfig, timings: KubeletTimings) -> Kubelet {
        let proc = Process::new(&config.name);
        Kubelet { config, timings, proc }
    }

    pub fn node_name(&self) -> &str {
        &self.config.name
    }
    pub fn config(&self) -> &NodeConfig {
        &self.config
    }
    pub fn timings(&self) -> &KubeletTimings {
        &self.timings
    }
    /// Whether the Node object is registered (created or re-posted by this process).
    pub fn is_registered(&self) -> bool {
        self.proc.registration.registered
    }
    /// How many lease renewals this process has made.
    pub fn lease_renewals(&self) -> u64 {
        self.proc.lease.renewals
    }

    /// Records the last thing done, in words, for the page.
    fn note(&mut self, now: Time, action: String) {
        self.proc.last_action = action;
        self.proc.last_action_at = Some(now);
    }

    /// Applies the runtime's own changes due by now (exits), for the PLEG to notice.
    fn catch_up(&mut self, ctx: &mut Ctx) {
        let now = ctx.now;
        for uid in runtime_mut(ctx).advance(now) {
            let terminating = self.proc.workers.get(&uid).map(|w| matches!(w.phase, pod_worker::WorkerPhase::Terminating));
            if terminating == Some(false) {
                self.mark_pleg_dirty(&uid, ctx.now);
            }
        }
    }

    fn apply_pod_deltas(&mut self, ctx: &mut Ctx, deltas: Vec<Delta>) {
        for delta in deltas {
            match delta {
                Delta::Added(o) => self.pod_changed(ctx, o),
                Delta::Updated { old, new } => {
                    if new.meta().resource_version < old.meta().resource_version {
                        // etcd was restored from a snapshot: the status this kubelet wrote since is
                        // gone, so the API's older copy must be compared again (`needsReconcile`).
                        if let Some(e) = self.proc.statuses.entries.get_mut(new.meta().uid.as_str()) {
                            e.acked_version = 0;
                        }
                    }
                    self.pod_changed(ctx, new)
                }
                Delta::Deleted(o) => self.pod_removed(ctx, o),
            }
        }
        if !self.proc.orphans_checked && self.proc.pods.has_synced() {
            self.proc.orphans_checked = true;
            self.kill_orphans(ctx);
        }
    }

    fn on_pod_status(&mut self, ctx: &mut Ctx, uid: &str, result: ApiResult) {
        let Some(entry) = self.proc.statuses.entries.get_mut(uid) else {
            return;
        };
        entry.writing = None;
        match result {
            Ok(written) => {
                if let Some(o) = written.object() {
                    entry.acked_version = o.meta().resource_version;
                }
                self.flush_status(ctx, uid)
            }
            Err(e) if e.reason == Reason::NotFound => self.proc.statuses.forget(uid),
            Err(_) => {
                entry.dirty = true;
                let at = ctx.now + self.timings.status_retry;
                self.proc.statuses.schedule_retry(uid, at);
                self.proc.statuses.refresh(uid);
            }
        }
    }

    fn on_pod_delete(&mut self, ctx: &mut Ctx, uid: &str, result: ApiResult) {
        let Some(entry) = self.proc.statuses.entries.get_mut(uid) else {
            return;
        };
        entry.deleting = None;
        match result {
            // Gone, already gone, or the name now belongs to a newer pod: done either way.
            Ok(_) => self.deleted(ctx, uid),
            Err(e) if matches!(e.reason, Reason::NotFound | Reason::Conflict) => self.deleted(ctx, uid),
            Err(_) => {
                let at = ctx.now + self.timings.status_retry;
                self.proc.statuses.schedule_retry(uid, at);
                self.proc.statuses.refresh(uid);
            }
        }
    }

    fn loop_phase(&self) -> LoopPhase {
        let writing = self.proc.statuses.entries.values().any(|e| e.writing.is_some() || e.deleting.is_some());
        if writing || !self.proc.busy.is_empty() {
            LoopPhase::Act
        } else if !self.proc.pleg_dirty.is_empty() {
            LoopPhase::Observe
        } else {
            LoopPhase::Idle
        }
    }
}

impl Component for Kubelet {
    fn name(&self) -> String {
        format!("kubelet-{}", self.config.name)
    }

    /// Boots the process: everything in memory starts over, the runtime is found as it is.
    fn start(&mut self, ctx: &mut Ctx) {
        self.proc = Process::new(&self.config.name);
        self.proc.started = true;
        self.proc.probes.started_at = ctx.now;
        self.proc.pleg_offset = ctx.rng.below(self.timings.pleg_relist_period.0.max(1));
        let now = ctx.now;
        runtime_mut(ctx).advance(now);
        self.register(ctx);
        self.proc.pods.start(ctx);
        self.proc.node.start(ctx);
        self.note(ctx.now, format!("started on {}", self.config.name));
    }

    fn handle_response(&mut self, ctx: &mut Ctx, id: RequestId, result: ApiResult) {
        if !self.proc.started {
            return;
        }
        self.catch_up(ctx);
        if self.proc.pods.owns_request(id) {
            let deltas = self.proc.pods.handle_response(ctx, id, result);
            return self.apply_pod_deltas(ctx, deltas);
        }
        if self.proc.node.owns_request(id) {
            self.proc.node.handle_response(ctx, id, result);
            return;
        }
        let result = match self.proc.configs.handle_response(ctx, id, result) {
            Ok(()) => return,
            Err(result) => result,
        };
        if self.proc.recorder.awaits(id) {
            return self.proc.recorder.answered(id, &result, ctx);
        }
        let Some(pending) = self.proc.requests.remove(&id) else {
            return;
        };
        match pending {
            Pending::Register | Pending::RegisterGet | Pending::RegisterStatus => self.on_register(ctx, pending, result),
            Pending::NodeStatus(sent) => self.on_node_status(ctx, *sent, result),
            Pending::Lease(call) => self.on_lease(ctx, call, result),
            Pending::PodStatus(uid) => self.on_pod_status(ctx, &uid, result),
            Pending::PodDelete(uid) => self.on_pod_delete(ctx, &uid, result),
        }
    }

    fn handle_watch_event(&mut self, ctx: &mut Ctx, watch: WatchId, event: WatchEvent) {
        if !self.proc.started {
            return;
        }
        self.catch_up(ctx);
        if self.proc.pods.owns_watch(watch) {
            if let Some(delta) = self.proc.pods.handle_watch_event(event) {
                self.apply_pod_deltas(ctx, vec![delta]);
            }
        } else if self.proc.node.owns_watch(watch) {
            self.proc.node.handle_watch_event(event);
        } else {
            self.proc.configs.handle_watch_event(watch, event);
        }
    }

    fn handle_watch_closed(&mut self, ctx: &mut Ctx, watch: WatchId) {
        self.proc.pods.handle_watch_closed(ctx.now, watch);
        self.proc.node.handle_watch_closed(ctx.now, watch);
        self.proc.configs.handle_watch_closed(ctx.now, watch);
    }

    fn poll(&mut self, ctx: &mut Ctx) {
        if !self.proc.started {
            return;
        }
        let now = ctx.now;
        self.catch_up(ctx);
        self.proc.pods.poll(ctx);
        self.proc.node.poll(ctx);
        self.proc.configs.poll(ctx);
        if self.proc.registration.retry_at.is_some_and(|t| t <= now) {
            self.register(ctx);
        }
        if self.proc.lease.next_at.is_some_and(|t| t <= now) {
            self.lease_tick(ctx);
        }
        if self.proc.node_status.next_at.is_some_and(|t| t <= now) {
            self.node_status_tick(ctx);
        }
        for uid in self.proc.statuses.due_retries(now) {
            self.flush_status(ctx, &uid);
        }
        if self.proc.pleg_next.is_some_and(|t| t <= now) {
            self.relist(ctx);
        }
        while let Some((t, uid)) = self.proc.timers.first().cloned() {
            if t > now {
                break;
            }
            self.proc.timers.pop_first();
            self.drive(ctx, &uid);
        }
        if self.proc.probes.next_wakeup().is_some_and(|t| t <= now) {
            self.run_probes(ctx);
        }
    }

    fn next_wakeup(&self) -> Option<Time> {
        if !self.proc.started {
            return None;
        }
        let p = &self.proc;
        [
            p.timers.first().map(|(t, _)| *t),
            p.pleg_next,
            p.registration.retry_at,
            p.lease.next_at,
            p.node_status.next_at,
            p.statuses.retries.first().map(|(t, _)| *t),
            p.probes.next_wakeup(),
            p.pods.next_wakeup(),
            p.node.next_wakeup(),
            p.configs.next_wakeup(),
        ]
        .into_iter()
        .flatten()
        .min()
    }

    /// Pod lifecycle work or status writes pending (or not yet registered). Heartbeats,
    /// back-off waits and containers that will crash later do not count.
    fn is_busy(&self) -> bool {
        let p = &self.proc;
        p.started && (!p.busy.is_empty() || !p.pleg_dirty.is_empty() || !p.statuses.unsynced.is_empty() || !p.registration.registered)
    }

    fn loops(&self) -> Vec<LoopStatus> {
        let p = &self.proc;
        let mut pending: BTreeSet<&String> = BTreeSet::new();
        pending.extend(p.busy.iter().chain(&p.pleg_dirty).chain(&p.statuses.unsynced));
        vec![LoopStatus {
            name: self.name(),
            phase: if p.started { self.loop_phase() } else { LoopPhase::Idle },
            queue_depth: pending.len(),
            last_action: p.last_action.clone(),
            last_action_at: p.last_action_at,
            turns: p.turns,
            stopped: false,
        }]
    }
}
