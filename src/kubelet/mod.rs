//! The kubelet: one per node, the hands of the cluster.
//!
//! It registers its Node, keeps its Lease and node status fresh, watches the pods bound to its
//! node and runs them on the node's container runtime: sandbox, image, create, start; restarts
//! what crashes with back-off; stops what is deleted within its grace period and then removes
//! the pod for good. It reports what is true on the node (pod phase, conditions, container
//! states) through the API server, and only when that changed.
//!
//! Two kinds of state live here, deliberately apart. `runtime` is the machine: containers and
//! images that outlive the kubelet process. `proc` is the process: informers, pod workers,
//! back-offs, the status manager — all lost when the kubelet stops, and rebuilt by `start`,
//! which re-lists, finds the containers still running, and reconciles.
//!
//! Submodules: `pod_worker` (one pod's lifecycle), `status` (the pod status and the status
//! manager), `lease` (registration, node status, lease), `runtime` (containerd), `images`
//! (image names, pull outcomes), `timings` (every duration and the back-off arithmetic),
//! `config_manager` (the referenced ConfigMaps and Secrets, a container's environment, volumes).

pub(crate) mod config_manager;
pub(crate) mod container_model;
pub mod images;
pub mod lease;
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

/// Where this node sits on the network, derived from its name so every run agrees.
#[derive(Clone, Debug, PartialEq)]
pub struct NodeAddressing {
    /// The number in the node's name (`node-3` → 3), or a stable hash for names without one.
    pub index: u32,
    /// `InternalIP`: 172.18.0.(index+1), as kind numbers its nodes.
    pub node_ip: String,
    /// The node's /24 of the cluster's pod network, 10.244.(index).0/24 as kubeadm's flannel
    /// layout gives, continuing through 10.0.0.0/8 for very large clusters.
    pub pod_cidr: String,
    pub pod_network: u32,
}

impl NodeAddressing {
    pub fn for_node(name: &str) -> Self {
        Self::with_cidr_index(name, None)
    }

    /// `cidr_index` is the node's place in registration order (the range allocator's); without
    /// one, the number in its name stands in.
    pub fn with_cidr_index(name: &str, cidr_index: Option<u32>) -> Self {
        let digits: String = name.chars().rev().take_while(|c| c.is_ascii_digit()).collect::<Vec<_>>().into_iter().rev().collect();
        let index = digits.parse::<u32>().ok().filter(|n| *n < 1 << 16).unwrap_or_else(|| 100 + (images::fnv1a(name) % 900) as u32);
        let node_ip = runtime::ipv4(u32::from_be_bytes([172, 18, 0, 1]).wrapping_add(index));
        let cidr = cidr_index.unwrap_or(index);
        let pod_network = u32::from_be_bytes([10, 0, 0, 0]) | (u32::from_be_bytes([0, 244, 0, 0]).wrapping_add(cidr << 8) & 0x00ff_ff00);
        NodeAddressing { index, node_ip, pod_cidr: format!("{}/24", runtime::ipv4(pod_network)), pod_network }
    }
}

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

/// One node's kubelet, as a simulation component.
pub struct Kubelet {
    config: NodeConfig,
    timings: KubeletTimings,
    addr: NodeAddressing,
    /// The machine: survives kubelet restarts.
    runtime: runtime::Runtime,
    /// The process: rebuilt by `start`.
    proc: Process,
}

impl Kubelet {
    pub fn new(config: NodeConfig) -> Kubelet {
        Self::with_timings(config, KubeletTimings::default())
    }

    pub fn with_timings(config: NodeConfig, timings: KubeletTimings) -> Kubelet {
        let addr = NodeAddressing::with_cidr_index(&config.name, config.pod_cidr_index);
        let runtime = runtime::Runtime::new(addr.pod_network);
        let proc = Process::new(&config.name);
        Kubelet { config, timings, addr, runtime, proc }
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
    pub fn addressing(&self) -> &NodeAddressing {
        &self.addr
    }
    /// Whether the Node object is registered (created or re-posted by this process).
    pub fn is_registered(&self) -> bool {
        self.proc.registration.registered
    }
    /// How many lease renewals this process has made.
    pub fn lease_renewals(&self) -> u64 {
        self.proc.lease.renewals
    }

    /// What really runs on this node, by pod: every container the runtime holds, whether or
    /// not any pod in the API server still claims it.
    pub fn running_containers(&self) -> Vec<(ObjectKey, String, ContainerRuntimeState)> {
        self.runtime.containers().map(|(s, name, c)| (s.pod.clone(), name.to_string(), c.state.clone())).collect()
    }

    /// The same, as of `now`: exits the runtime has planned by then (a crash while the kubelet
    /// was stopped) are shown as having happened.
    pub fn containers_at(&self, now: Time) -> Vec<(ObjectKey, String, ContainerRuntimeState)> {
        self.runtime
            .containers()
            .map(|(s, name, c)| {
                let state = match (c.planned_exit, &c.state) {
                    (Some(plan), ContainerRuntimeState::Running { started_at }) if plan.at <= now => ContainerRuntimeState::Exited {
                        exit_code: plan.exit_code,
                        reason: runtime::exit_reason(plan.exit_code).to_string(),
                        started_at: Some(*started_at),
                        finished_at: plan.at,
                    },
                    (_, state) => state.clone(),
                };
                (s.pod.clone(), name.to_string(), state)
            })
            .collect()
    }

    /// Whether `image` is in this node's store (by its normalised name, as a pull decides).
    pub fn has_image(&self, image: &str) -> bool {
        self.runtime.has_image(image)
    }

    /// The images in this node's store.
    pub fn image_cache(&self) -> Vec<CachedImage> {
        self.runtime.images().cloned().collect()
    }

    /// Puts an image in the store before anything runs (a node image with it pre-pulled).
    pub fn preload_image(&mut self, image: &str) {
        self.runtime.add_image(image, Time(0));
    }

    /// The machine loses power (`sim node fail`): the process is gone and every container with
    /// it. What stays is on disk: images and the exited containers' records.
    pub fn power_off(&mut self, now: Time) {
        self.runtime.power_off(now);
        self.proc = Process::new(&self.config.name);
        self.note(now, format!("{} powered off", self.config.name));
    }

    /// `sim crash`: the pod's application fails `plan.after` each start, with `plan.exit_code`;
    /// a container running now fails `plan.after` from now. The plan lives on the machine until
    /// the pod's sandbox is removed.
    pub fn inject_crash(&mut self, now: Time, uid: &str, plan: runtime::CrashPlan) {
        self.runtime.set_crash_plan(uid, plan);
        let running: Vec<String> = self
            .runtime
            .sandbox(uid)
            .map(|s| s.containers.iter().filter(|(_, slot)| slot.current.state.is_running()).map(|(n, _)| n.clone()).collect())
            .unwrap_or_default();
        for name in running {
            self.runtime.plan_exit(uid, &name, runtime::PlannedExit { at: now + plan.after, exit_code: plan.exit_code });
        }
    }

    /// `sim fail-probe` / `sim pass-probe`: the pod's application fails (or passes) its probes
    /// of `kind` from now on. The fault lives on the machine.
    pub fn set_probe_fault(&mut self, uid: &str, kind: prober::ProbeType, failing: bool) {
        self.runtime.set_probe_fault(uid, kind, failing);
    }

    /// The probe faults on this node, by pod UID.
    pub fn probe_faults(&self) -> Vec<(String, Vec<prober::ProbeType>)> {
        self.runtime.probe_faults().map(|(uid, kinds)| (uid.clone(), kinds)).collect()
    }

    /// The crashes `sim crash` injected on this node, by pod (name from its sandbox when it has
    /// one, else its UID as the name).
    pub fn injected_crashes(&self) -> Vec<(ObjectKey, CrashPlan)> {
        self.runtime
            .crash_plans()
            .map(|(uid, plan)| {
                let key = self.runtime.sandbox(uid).map(|s| s.pod.clone()).unwrap_or_else(|| ObjectKey::new(Kind::Pod, "", uid));
                (key, *plan)
            })
            .collect()
    }

    /// Records the last thing done, in words, for the page.
    fn note(&mut self, now: Time, action: String) {
        self.proc.last_action = action;
        self.proc.last_action_at = Some(now);
    }

    /// Applies the runtime's own changes due by now (exits), for the PLEG to notice.
    fn catch_up(&mut self, ctx: &mut Ctx) {
        for uid in self.runtime.advance(ctx.now) {
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
                Delta::Updated { new, .. } => self.pod_changed(ctx, new),
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
        self.runtime.advance(ctx.now);
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
            self.runtime.next_event(),
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
        }]
    }

    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
    fn as_any_mut(&mut self) -> &mut dyn std::any::Any {
        self
    }
}
