//! The simulation: it owns the clock, the seeded RNG, the wake-up queue, the latencies and the
//! message trace, and moves every request and notification between components.
//!
//! Components never call each other. Each returns effects (API requests) from its handlers; the
//! simulation delivers them to kube-apiserver after a jittered latency, applies them, and
//! delivers the answers and watch notifications back, each at its own simulated time. Time only
//! moves here, in `step`, `advance`, `run_until` and `settle`.
//!
//! The Sim also owns each node's `Machine` (its addresses, container runtime and routing table,
//! `machine.rs`) and lends it to that node's processes for each call; faults act on machines.
//! It holds its processes as a typed list (`process.rs`), so what a view needs from one kind of
//! process is reached by matching, never by downcasting a component.

pub mod external_watch;
pub mod faults;
pub mod invariants;
pub mod machine;
pub mod metrics;
mod observed;
pub mod process;
mod queue;
pub mod reference;
mod shared_watch;
pub mod trace;
pub mod traffic;
// Only a native shell (`kubeloop serve`) observes writes: the page's wasm carries none of it.
#[cfg(not(target_arch = "wasm32"))]
mod writes;

use crate::api::{ApiRequest, ApiResult, ApiServer, Handled, WatchEvent, WatchId};
use crate::model::{Duration, Object, Time};
use crate::rng::Rng;
use crate::runtime::fasthash::FastMap;
use crate::runtime::slab::Slab;
use crate::runtime::{Component, Ctx, Effect, LoopStatus, RequestId};
pub use external_watch::{ExternalEvent, ExternalWatch};
pub use faults::{NodeFault, WatchFault, CONTROLLER_PREFIX};
pub use machine::Machine;
pub use process::Process;
use queue::{DeliveryQueue, Queued};
pub use shared_watch::SHARED_PROXY_WATCH_NODES;
use std::collections::BTreeMap;
use std::fmt;
pub use trace::{Message, MessageKind, Trace};
#[cfg(not(target_arch = "wasm32"))]
pub use writes::{Write, WriteObserver, WriteVerb};

/// Every process in the cluster, by the name the page and `sim` verbs use.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ComponentId {
    ApiServer,
    Etcd,
    ControllerManager,
    Scheduler,
    Kubelet(String),
    /// A node's kube-proxy.
    KubeProxy(String),
    /// An operator the learner wrote (`operator/NAME`).
    Operator(String),
    /// The person at the keyboard (kubectl).
    User,
}

impl ComponentId {
    pub fn parse(name: &str) -> Option<ComponentId> {
        Some(match name {
            "kube-apiserver" => ComponentId::ApiServer,
            "etcd" => ComponentId::Etcd,
            "kube-controller-manager" => ComponentId::ControllerManager,
            "kube-scheduler" => ComponentId::Scheduler,
            "kubectl" => ComponentId::User,
            other if other.starts_with(OPERATOR_PREFIX) => {
                ComponentId::Operator(other.strip_prefix(OPERATOR_PREFIX).filter(|n| !n.is_empty())?.to_string())
            }
            other if other.starts_with("kube-proxy-") => {
                ComponentId::KubeProxy(other.strip_prefix("kube-proxy-").filter(|n| !n.is_empty())?.to_string())
            }
            other => ComponentId::Kubelet(other.strip_prefix("kubelet-").filter(|n| !n.is_empty())?.to_string()),
        })
    }
}

impl fmt::Display for ComponentId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ComponentId::ApiServer => f.write_str("kube-apiserver"),
            ComponentId::Etcd => f.write_str("etcd"),
            ComponentId::ControllerManager => f.write_str("kube-controller-manager"),
            ComponentId::Scheduler => f.write_str("kube-scheduler"),
            ComponentId::Kubelet(node) => write!(f, "kubelet-{node}"),
            ComponentId::KubeProxy(node) => write!(f, "kube-proxy-{node}"),
            ComponentId::Operator(name) => write!(f, "{OPERATOR_PREFIX}{name}"),
            ComponentId::User => f.write_str("kubectl"),
        }
    }
}

/// How an operator is named among the components: `operator/NAME`.
pub const OPERATOR_PREFIX: &str = "operator/";

/// kube-apiserver's `--etcd-compaction-interval`.
pub const ETCD_COMPACTION_INTERVAL: Duration = Duration::mins(5);

/// A node to add: its name, capacity and zone (`sim node add NAME --cpu 4 --memory 8Gi --pods 110`).
#[derive(Clone, Debug, PartialEq)]
pub struct NodeConfig {
    pub name: String,
    /// Cores, as a quantity string (`4`, `3500m`).
    pub cpu: String,
    /// Memory, as a quantity string (`8Gi`).
    pub memory: String,
    pub pods: i64,
    /// The `topology.kubernetes.io/zone` label.
    pub zone: String,
    /// Which /24 of 10.244.0.0/16 the node IPAM range allocator gives it: the Sim's count of
    /// nodes added before it (`None`: from the number in its name, for a kubelet made alone).
    pub pod_cidr_index: Option<u32>,
}

impl NodeConfig {
    pub fn new(name: &str) -> Self {
        NodeConfig { name: name.into(), cpu: "4".into(), memory: "8Gi".into(), pods: 110, zone: "zone-a".into(), pod_cidr_index: None }
    }
}

/// Network and storage latencies. Each draw is jittered by `jitter` (a fraction) from the seed.
#[derive(Clone, Debug, PartialEq)]
pub struct Latencies {
    /// Client to kube-apiserver, one way.
    pub request: Duration,
    /// kube-apiserver to etcd and back, for a write (raft commit and fsync).
    pub etcd_write: Duration,
    /// kube-apiserver back to the client.
    pub response: Duration,
    /// From an etcd commit to a watcher receiving the notification.
    pub watch: Duration,
    pub jitter: f64,
}

impl Default for Latencies {
    fn default() -> Self {
        Latencies {
            request: Duration::millis(2),
            etcd_write: Duration::millis(4),
            response: Duration::millis(2),
            watch: Duration::millis(6),
            jitter: 0.5,
        }
    }
}

/// A component's place in `Sim::components`: deliveries and watch owners carry this small index
/// instead of a `ComponentId`, so queueing one costs no string copy and finding its component no
/// string comparisons. Components are never removed, so an index stays valid.
type SlotIndex = usize;

/// A machine's place in `Sim::machines`; machines are never removed either.
type MachineIndex = usize;

#[derive(Debug)]
enum Delivery {
    /// A request reaches kube-apiserver.
    Arrive {
        from: SlotIndex,
        id: RequestId,
        request: Box<ApiRequest>,
    },
    Response {
        to: SlotIndex,
        id: RequestId,
        result: ApiResult,
    },
    Watch {
        watch: WatchId,
        event: WatchEvent,
    },
    Wake(SlotIndex),
    /// A traffic flow's next connection is due.
    Traffic(u64),
}

// A delivery waiting in the queue (`queue::Queued`) leaves in (time, sequence) order: the
// sequence number breaks ties between equal times by when they were queued, so the order is
// deterministic. The delivery itself waits in a slab (`Sim::parked`) and the heap entry holds its
// place there: the heap moves 24-byte entries on every push and pop instead of whole deliveries,
// and a reused slab place costs no allocation.

struct Slot {
    id: ComponentId,
    /// `id` as the trace writes it, rendered once instead of at every hop.
    name: String,
    process: Process,
    /// The machine it runs on (`Sim::machines`), for a node's processes.
    machine: Option<MachineIndex>,
    running: bool,
    /// The wake-up currently queued for it, if any.
    wake_at: Option<Time>,
    /// A kube-proxy's shared watches, in `proxy::shared::KINDS` order (`shared_watch.rs`).
    shared_watches: [Option<WatchId>; 2],
    /// Whether it is in `Sim::shared_waiters`.
    awaiting_shared: bool,
}

pub struct Sim {
    now: Time,
    seed: u64,
    rng: Rng,
    pub(crate) latencies: Latencies,
    api: ApiServer,
    /// Every component, in the order added; `by_id` finds one by name, in name order.
    components: Vec<Slot>,
    by_id: BTreeMap<ComponentId, SlotIndex>,
    queue: DeliveryQueue,
    /// The deliveries the queue's entries stand for.
    parked: Slab<Delivery>,
    seq: u64,
    next_request: u64,
    watch_owner: BTreeMap<WatchId, SlotIndex>,
    /// The last delivery time per watch, so one watch's notifications never overtake each other.
    /// Looked up for every notification and never listed, so hashed.
    watch_clock: FastMap<WatchId, Time>,
    trace: Trace,
    /// The text of the hop being traced, reused from hop to hop.
    text: String,
    /// When kube-apiserver next compacts etcd, and the revision it will compact to (the one it
    /// noted at the previous tick, as `--etcd-compaction-interval` does).
    next_compaction: Time,
    compact_to: u64,
    pub(crate) invariants: invariants::Checker,
    /// Check the invariants after every step (tests switch this on).
    check_every_step: bool,
    violations: Vec<String>,
    faults: faults::Faults,
    /// Nodes added so far: the next node's pod CIDR index.
    nodes_added: u32,
    /// Every node's machine, in the order added; `machine_of` finds one by node name, in name
    /// order.
    machines: Vec<Machine>,
    machine_of: BTreeMap<String, MachineIndex>,
    traffic: traffic::Traffic,
    /// CPU loads on workloads (`sim load`), which metrics-server reports (`metrics`).
    loads: Vec<metrics::Load>,
    /// The Service and EndpointSlice cache kube-proxies share past teaching scale
    /// (`proxy::shared`, `shared_watch.rs`).
    shared_proxy: crate::proxy::shared::SharedProxyCache,
    /// Whether kube-proxies' watches are shared (`None`: from `SHARED_PROXY_WATCH_NODES` on).
    share_proxy_watches: Option<bool>,
    /// The kube-proxies waiting for the shared cache's next change, in the order they asked.
    shared_waiters: Vec<SlotIndex>,
    /// Watches of clients outside the simulation (`external_watch.rs`).
    external: external_watch::ExternalWatches,
    /// What hears each write kube-apiserver serves, if anything does (`writes.rs`).
    #[cfg(not(target_arch = "wasm32"))]
    write_observer: Option<Box<dyn WriteObserver>>,
    /// Who the console's kubectl writes as, while it runs a command (`writes.rs`).
    #[cfg(not(target_arch = "wasm32"))]
    console_writer: Option<(&'static str, &'static str)>,
}

impl Sim {
    /// An empty cluster (kube-apiserver and etcd, no other component) at time zero.
    pub fn empty(seed: u64) -> Self {
        Sim {
            now: Time(0),
            seed,
            rng: Rng::new(seed),
            latencies: Latencies::default(),
            api: {
                let mut api = ApiServer::new();
                api.bootstrap();
                api
            },
            components: Vec::new(),
            by_id: BTreeMap::new(),
            queue: DeliveryQueue::default(),
            parked: Slab::default(),
            seq: 0,
            next_request: 0,
            watch_owner: BTreeMap::new(),
            watch_clock: FastMap::default(),
            trace: Trace::new(4096),
            text: String::new(),
            next_compaction: Time(0) + ETCD_COMPACTION_INTERVAL,
            compact_to: 0,
            invariants: invariants::Checker::default(),
            check_every_step: false,
            violations: Vec::new(),
            faults: faults::Faults::default(),
            nodes_added: 0,
            machines: Vec::new(),
            machine_of: BTreeMap::new(),
            traffic: traffic::Traffic::default(),
            loads: Vec::new(),
            shared_proxy: Default::default(),
            share_proxy_watches: None,
            shared_waiters: Vec::new(),
            external: external_watch::ExternalWatches::new(seed),
            #[cfg(not(target_arch = "wasm32"))]
            write_observer: None,
            #[cfg(not(target_arch = "wasm32"))]
            console_writer: None,
        }
    }

    /// A cluster with its control plane running (kube-apiserver, etcd, kube-controller-manager,
    /// kube-scheduler) and no nodes.
    pub fn new(seed: u64) -> Self {
        let mut sim = Self::empty(seed);
        sim.add_component(ComponentId::ControllerManager, crate::controllers::manager::ControllerManager::standard());
        sim.add_component(ComponentId::Scheduler, crate::scheduler::Scheduler::new());
        sim
    }

    /// Adds a node: starts its kubelet, which registers the Node object and renews its lease.
    /// Errors if a node of that name exists.
    pub fn add_node(&mut self, mut config: NodeConfig) -> Result<(), String> {
        let id = ComponentId::Kubelet(config.name.clone());
        if self.has_component(&id) || self.api.get(&crate::model::ObjectKey::new(crate::model::Kind::Node, "", &config.name)).is_some() {
            return Err(format!("node {:?} already exists", config.name));
        }
        // The range allocator hands out the next /24 in order (its CIDR set's next candidate).
        config.pod_cidr_index.get_or_insert(self.nodes_added);
        self.nodes_added += 1;
        let node = config.name.clone();
        self.add_machine(&config);
        self.add_component(id, crate::kubelet::Kubelet::new(config));
        self.add_component(ComponentId::KubeProxy(node.clone()), crate::proxy::KubeProxy::new(&node));
        Ok(())
    }

    /// Racks a node's machine (once: a node that has one keeps it).
    fn add_machine(&mut self, config: &NodeConfig) -> MachineIndex {
        if let Some(&index) = self.machine_of.get(&config.name) {
            return index;
        }
        self.machines.push(Machine::new(config));
        self.machine_of.insert(config.name.clone(), self.machines.len() - 1);
        self.machines.len() - 1
    }

    /// A node's machine, if the node was added.
    pub fn machine(&self, node: &str) -> Option<&Machine> {
        self.machine_of.get(node).map(|&i| &self.machines[i])
    }
    pub(crate) fn machine_mut(&mut self, node: &str) -> Option<&mut Machine> {
        self.machine_of.get(node).map(|&i| &mut self.machines[i])
    }
    /// Every machine, by node name.
    pub fn machines(&self) -> impl Iterator<Item = &Machine> {
        self.machine_of.values().map(|&i| &self.machines[i])
    }

    pub fn now(&self) -> Time {
        self.now
    }
    pub fn seed(&self) -> u64 {
        self.seed
    }
    pub fn api(&self) -> &ApiServer {
        &self.api
    }
    pub fn trace(&self) -> &Trace {
        &self.trace
    }
    /// Keeps at most `n` recent messages (0: keep none, only the hash — for large runs).
    pub fn set_trace_capacity(&mut self, n: usize) {
        let trace = std::mem::replace(&mut self.trace, Trace::new(0));
        self.trace = trace.with_capacity(n);
    }
    /// Check the invariants after every step from now on (tests do, to catch a broken one at
    /// the step that broke it rather than at the end).
    pub fn check_invariants_every_step(&mut self) {
        self.check_every_step = true;
    }

    pub fn violations(&self) -> &[String] {
        &self.violations
    }

    /// Adds a process and starts it now. A node's process runs on that node's machine, racked
    /// for it if the node has none yet (a kubelet added alone, in tests).
    pub fn add_component(&mut self, id: ComponentId, process: impl Into<Process>) {
        let process = process.into();
        let machine = match (&id, &process) {
            (ComponentId::Kubelet(_), Process::Kubelet(k)) => Some(self.add_machine(k.config())),
            (ComponentId::Kubelet(node) | ComponentId::KubeProxy(node), _) => Some(self.add_machine(&NodeConfig::new(node))),
            _ => None,
        };
        let slot = Slot {
            name: id.to_string(),
            id: id.clone(),
            process,
            machine,
            running: true,
            wake_at: None,
            shared_watches: [None; 2],
            awaiting_shared: false,
        };
        let index = match self.by_id.get(&id) {
            // Replacing a component keeps its place, so deliveries queued for it still find it.
            Some(&i) => {
                self.components[i] = slot;
                i
            }
            None => {
                self.components.push(slot);
                self.by_id.insert(id, self.components.len() - 1);
                self.components.len() - 1
            }
        };
        self.call_at(index, |c, ctx| c.start(ctx));
    }

    /// Adds an operator and starts it: its informers list and watch, and its handlers see every
    /// object they watch. Errors (a name taken, code that does not load) change nothing.
    pub fn add_operator(&mut self, name: &str, interpreter: Box<dyn crate::operator::Interpreter>) -> Result<(), String> {
        let id = ComponentId::Operator(name.to_string());
        if self.has_component(&id) {
            return Err(format!("{id} already exists"));
        }
        let operator = crate::operator::Operator::new(name, interpreter, self.api().definitions())?;
        self.add_component(id, operator);
        Ok(())
    }

    /// Runs an operator with new code (the page's Run): the one of that name, if any, is stopped
    /// — its watches end, as a process's do — and replaced in its place by a new process that
    /// loads the code and lists afresh. Code that does not load changes nothing.
    pub fn replace_operator(&mut self, name: &str, interpreter: Box<dyn crate::operator::Interpreter>) -> Result<(), String> {
        crate::operator::check_name(name)?;
        let operator = crate::operator::Operator::new(name, interpreter, self.api().definitions())?;
        let id = ComponentId::Operator(name.to_string());
        if self.has_component(&id) {
            self.stop_component(&id);
        }
        self.add_component(id, operator);
        Ok(())
    }

    /// The operators, by name.
    pub fn operators(&self) -> impl Iterator<Item = &crate::operator::Operator> {
        self.by_id.values().filter_map(|&i| match &self.components[i].process {
            Process::Operator(o) => Some(o.as_ref()),
            _ => None,
        })
    }

    pub fn has_component(&self, id: &ComponentId) -> bool {
        self.by_id.contains_key(id)
    }
    pub fn component_ids(&self) -> impl Iterator<Item = &ComponentId> {
        self.by_id.keys()
    }
    fn slot(&self, id: &ComponentId) -> Option<&Slot> {
        self.by_id.get(id).map(|&i| &self.components[i])
    }
    fn slot_mut(&mut self, id: &ComponentId) -> Option<&mut Slot> {
        self.by_id.get(id).map(|&i| &mut self.components[i])
    }
    /// Whether the process runs: kube-apiserver and etcd unless stopped, other components when
    /// added and not stopped.
    pub fn is_running(&self, id: &ComponentId) -> bool {
        match id {
            ComponentId::ApiServer => !self.faults.api_server_down,
            ComponentId::Etcd => !self.faults.etcd_down,
            _ => self.slot(id).is_some_and(|s| s.running),
        }
    }
    /// `is_running` for the component in this place.
    fn is_running_at(&self, index: SlotIndex) -> bool {
        let slot = &self.components[index];
        match slot.id {
            ComponentId::ApiServer => !self.faults.api_server_down,
            ComponentId::Etcd => !self.faults.etcd_down,
            _ => slot.running,
        }
    }
    pub fn component(&self, id: &ComponentId) -> Option<&dyn Component> {
        self.slot(id).map(|s| s.process.component())
    }
    /// The process, typed: what a view needs from one kind of process, reached by matching.
    pub fn process(&self, id: &ComponentId) -> Option<&Process> {
        self.slot(id).map(|s| &s.process)
    }
    /// kube-scheduler, for its decision log.
    pub fn scheduler(&self) -> Option<&crate::scheduler::Scheduler> {
        match self.process(&ComponentId::Scheduler)? {
            Process::Scheduler(s) => Some(s),
            _ => None,
        }
    }
    /// kube-controller-manager, for its controllers' modes and state.
    pub fn controller_manager(&self) -> Option<&crate::controllers::manager::ControllerManager> {
        match self.process(&ComponentId::ControllerManager)? {
            Process::ControllerManager(m) => Some(m),
            _ => None,
        }
    }
    /// Changes a setting of kube-controller-manager from outside a delivery (`sim mode`), then
    /// asks it for its wake-up again, since the setting may have given it work now.
    pub fn update_controller_manager<R>(&mut self, f: impl FnOnce(&mut crate::controllers::manager::ControllerManager) -> R) -> Option<R> {
        let id = ComponentId::ControllerManager;
        let result = match &mut self.slot_mut(&id)?.process {
            Process::ControllerManager(m) => f(m),
            _ => return None,
        };
        self.reschedule(&id);
        Some(result)
    }
    pub fn loops(&self, id: &ComponentId) -> Vec<LoopStatus> {
        let Some(slot) = self.slot(id) else { return Vec::new() };
        let off = slot.machine.map(|m| &self.machines[m]).and_then(|m| Some((m.node(), m.powered_off_at()?)));
        match (&slot.process, off) {
            // The power cut took the kubelet's memory with it: nothing queued, nothing counted,
            // and the cut is the last thing that happened to it.
            (Process::Kubelet(_), Some((node, at))) => vec![LoopStatus {
                name: slot.name.clone(),
                phase: crate::runtime::LoopPhase::Idle,
                queue_depth: 0,
                last_action: format!("{node} powered off"),
                last_action_at: Some(at),
                turns: 0,
                stopped: false,
            }],
            _ => slot.process.component().loops(),
        }
    }

    /// Stops a process: it is called no more, and the API server ends its watches.
    pub fn stop_component(&mut self, id: &ComponentId) -> bool {
        let Some(&index) = self.by_id.get(id) else { return false };
        let slot = &mut self.components[index];
        slot.running = false;
        slot.wake_at = None;
        let owned: Vec<WatchId> = self.watch_owner.iter().filter(|(_, o)| **o == index).map(|(w, _)| *w).collect();
        for w in owned {
            self.api.close_watch(w);
            self.watch_owner.remove(&w);
        }
        true
    }

    /// Starts a stopped process from nothing: it re-lists and rebuilds its caches.
    pub fn start_component(&mut self, id: &ComponentId) -> bool {
        let Some(slot) = self.slot_mut(id) else { return false };
        if slot.running {
            return false;
        }
        slot.running = true;
        if *id == ComponentId::ControllerManager {
            // A started process lists everything afresh.
            self.faults.controller_manager_missed_events = false;
        }
        self.call(id, |c, ctx| c.start(ctx));
        true
    }

    /// What a request from the keyboard gets while the control plane cannot serve it:
    /// kube-apiserver stopped refuses the connection; etcd stopped times out whatever needs it.
    pub fn control_plane_refusal(&self) -> Option<crate::api::ApiError> {
        if self.faults.api_server_down {
            Some(crate::api::ApiError::connection_refused())
        } else if self.faults.etcd_down {
            Some(crate::api::ApiError::etcd_timeout())
        } else {
            None
        }
    }

    /// A request from the person at the keyboard, served at once: kubectl waits for its answer,
    /// and the time it spends waiting is not what a learner watches. The hops are still traced
    /// and the watch notifications still travel with their latencies.
    pub fn submit(&mut self, request: ApiRequest) -> ApiResult {
        if let Some(error) = self.control_plane_refusal() {
            // With etcd gone the API server still serves new watches from its watch cache.
            if error.is_transport() || !matches!(request, ApiRequest::Watch(_)) {
                return Err(error);
            }
        }
        let user = ComponentId::User;
        let target = request.target_ref();
        self.trace.record(
            self.now,
            self.now,
            &user,
            &"kube-apiserver",
            MessageKind::Request,
            format_args!("{} {target}", request.verb()),
            &target,
        );
        let handled = self.serve(self.now, request, None);
        self.after_handled(self.now, &handled);
        let result = handled.result;
        self.check_if_asked();
        result
    }

    /// kube-apiserver serves a request; the metrics API it only proxies, to metrics-server,
    /// which reads the machines (`metrics`).
    fn serve(&mut self, at: Time, request: ApiRequest, from: Option<SlotIndex>) -> Handled {
        // Who sent a request matters only to a write observer, which the page has none of.
        #[cfg(target_arch = "wasm32")]
        let _ = from;
        match request {
            ApiRequest::PodMetrics { namespace, selector } => {
                let metrics = self.pod_metrics(&namespace, &selector);
                Handled { result: Ok(crate::api::ApiResponse::PodMetrics(metrics)), notifications: Vec::new(), revision: None }
            }
            #[cfg(not(target_arch = "wasm32"))]
            request if self.write_observer.is_some() => self.serve_observed(at, request, from),
            request => self.api.handle(at, &mut self.rng, request),
        }
    }

    /// Records a write's etcd hop and schedules its notifications.
    fn after_handled(&mut self, at: Time, handled: &Handled) {
        let written = handled.result.as_ref().ok().and_then(|r| r.object()).cloned();
        self.after_write(at, handled.revision, written.as_deref(), handled.notifications.clone());
    }

    /// The etcd hop of a write (if it wrote) and the notifications it fans out.
    fn after_write(&mut self, at: Time, revision: Option<u64>, written: Option<&Object>, notifications: Vec<(WatchId, WatchEvent)>) {
        let definition_written = revision.is_some() && written.is_some_and(|o| o.kind() == crate::model::Kind::CustomResourceDefinition);
        self.record_write(at, revision, written, notifications);
        if definition_written {
            self.announce_discovery();
        }
    }

    /// Every running component hears that discovery shows a CustomResourceDefinition.
    #[inline(never)]
    fn announce_discovery(&mut self) {
        for index in 0..self.components.len() {
            if self.is_running_at(index) {
                self.call_at(index, |c, ctx| c.handle_discovery(ctx));
            }
        }
    }

    fn record_write(&mut self, at: Time, revision: Option<u64>, written: Option<&Object>, notifications: Vec<(WatchId, WatchEvent)>) {
        if let Some(rev) = revision {
            let commit = at + Duration(self.jitter(self.latencies.etcd_write.0));
            let object: &dyn std::fmt::Display = match written {
                Some(o) => &o.key_ref(),
                None => &"",
            };
            self.text.clear();
            self.text.push_str("rev ");
            push_decimal(&mut self.text, rev);
            self.trace.record_text(at, commit, "kube-apiserver", "etcd", MessageKind::EtcdWrite, &self.text, object);
            self.invariants.observe_revision(rev, &mut self.violations);
            if let Some(o) = written {
                self.invariants.observe_write(o, self.now);
            }
            self.schedule_notifications(commit, notifications);
        } else if !notifications.is_empty() {
            // A watch's replay of past changes.
            self.schedule_notifications(at, notifications);
        }
    }

    fn schedule_notifications(&mut self, from_time: Time, notifications: Vec<(WatchId, WatchEvent)>) {
        for (watch, event) in notifications {
            if self.external.owns(watch) {
                // An outside client's: on its own queue, drawing nothing from the simulation's
                // generator (`external_watch.rs`).
                let delay = self.watch_fault_for(&ComponentId::User).map_or(Duration::ZERO, |f| f.delay);
                let latencies = &self.latencies;
                self.external.schedule(from_time, latencies.watch, latencies.jitter, delay, watch, event);
                continue;
            }
            let mut base = from_time + Duration(self.jitter(self.latencies.watch.0));
            if !self.faults.watch.is_empty() {
                let delay = self.watch_owner.get(&watch).and_then(|&o| self.watch_fault_for(&self.components[o].id)).map(|f| f.delay);
                base = base + delay.unwrap_or(Duration::ZERO);
            }
            let last = self.watch_clock.get(&watch).copied().unwrap_or(Time(0));
            let at = base.max(last);
            self.watch_clock.insert(watch, at);
            self.push(at, Delivery::Watch { watch, event });
        }
    }

    fn jitter(&mut self, base: u64) -> u64 {
        self.rng.jitter(base, self.latencies.jitter)
    }

    fn push(&mut self, at: Time, delivery: Delivery) {
        self.seq += 1;
        let parked = self.parked.insert(delivery);
        self.queue.push(Queued { at: at.0, seq: self.seq, parked });
    }

    /// The time of the next thing that will happen, if anything is queued.
    pub fn next_time(&self) -> Option<Time> {
        self.queue.peek().map(|q| Time(q.at))
    }

    /// Processes the next queued delivery, moving the clock to it. False if nothing is queued.
    pub fn step(&mut self) -> bool {
        let Some(Queued { at, parked, .. }) = self.queue.pop() else { return false };
        let at = Time(at);
        let delivery = self.parked.take(parked).expect("a queued delivery is parked");
        self.now = self.now.max(at);
        self.compact_if_due();
        self.expire_if_due();
        self.deliver(delivery);
        self.check_if_asked();
        true
    }

    fn check_if_asked(&mut self) {
        if self.check_every_step {
            let sees = self.collector_sees();
            let found = self.invariants.check(&self.api, self.now, sees);
            self.violations.extend(found);
        }
    }

    /// Whether kube-controller-manager's garbage collector can know of every orphan now: it runs,
    /// the API answers, and no watch event to it was lost since it last listed.
    fn collector_sees(&self) -> bool {
        let kcm = ComponentId::ControllerManager;
        let collector_on = self.controller_manager().is_some_and(|m| !m.is_stopped("garbage-collector-controller"));
        self.is_running(&kcm)
            && collector_on
            && !self.faults.api_server_down
            && !self.faults.etcd_down
            && !self.faults.controller_manager_missed_events
    }

    /// Runs everything due up to and including `until`, then sets the clock there.
    pub fn run_until(&mut self, until: Time) {
        while self.next_time().is_some_and(|t| t <= until) {
            self.step();
        }
        self.now = self.now.max(until);
        self.compact_if_due();
        self.expire_if_due();
    }

    pub fn advance(&mut self, d: Duration) {
        self.run_until(self.now + d);
    }

    /// Whether no message is in flight and no component has work beyond its heartbeats.
    pub fn is_settled(&self) -> bool {
        let in_flight = self.queue.iter().any(|q| !matches!(self.parked.get(q.parked), Some(Delivery::Wake(_) | Delivery::Traffic(_))));
        !in_flight && self.components.iter().all(|s| !s.running || !s.process.component().is_busy())
    }

    /// Runs until settled, for at most `limit` of simulated time. Returns how long it took, or
    /// `Err(limit)` if it never settled.
    pub fn settle(&mut self, limit: Duration) -> Result<Duration, Duration> {
        let start = self.now;
        let deadline = start + limit;
        // Let same-time work start before judging.
        loop {
            if self.is_settled() {
                return Ok(self.now.since(start));
            }
            match self.next_time() {
                Some(t) if t <= deadline => {
                    self.step();
                }
                _ => {
                    self.now = deadline;
                    return Err(limit);
                }
            }
        }
    }

    fn deliver(&mut self, delivery: Delivery) {
        match delivery {
            Delivery::Arrive { from, id, request } => self.arrive(from, id, request),
            Delivery::Response { to, id, result } => {
                if self.is_running_at(to) {
                    if let Ok(crate::api::ApiResponse::Watching(w)) = &result {
                        let w = *w;
                        if !self.api.is_watch_open(w) || self.is_partitioned(&self.components[to].id) {
                            // The watch ended (server stopped, node cut off) before its client
                            // heard it was open: it opens and ends at once.
                            self.api.close_watch(w);
                            self.watch_owner.remove(&w);
                            self.call_at(to, |c, ctx| {
                                c.handle_response(ctx, id, result);
                                c.handle_watch_closed(ctx, w);
                            });
                            return;
                        }
                        self.watch_owner.insert(w, to);
                    }
                    self.call_at(to, |c, ctx| c.handle_response(ctx, id, result));
                } else if let Ok(crate::api::ApiResponse::Watching(w)) = result {
                    // Its client is gone; the server notices the closed connection.
                    self.api.close_watch(w);
                }
            }
            Delivery::Watch { watch, event } => {
                if !self.api.is_watch_open(watch) {
                    return;
                }
                if self.shared_proxy.owns_watch(watch) {
                    self.deliver_shared(watch, event);
                    return;
                }
                let Some(&owner) = self.watch_owner.get(&watch) else { return };
                if !self.is_running_at(owner) {
                    return;
                }
                if let Some(fault) = self.watch_fault_for(&self.components[owner].id) {
                    if fault.drop_percent > 0 && self.rng.below(100) < u64::from(fault.drop_percent) {
                        self.faults.dropped += 1;
                        if self.components[owner].id == ComponentId::ControllerManager {
                            self.faults.controller_manager_missed_events = true;
                        }
                        return;
                    }
                }
                self.text.clear();
                self.text.push_str(event.type_.as_str());
                self.text.push(' ');
                push_object_key(&mut self.text, &event.object);
                let (to, what) = (&self.components[owner].name, &self.text);
                self.trace.record_text(self.now, self.now, "kube-apiserver", to, MessageKind::Watch, what, &event.object.key_ref());
                self.call_at(owner, |c, ctx| c.handle_watch_event(ctx, watch, event));
            }
            Delivery::Traffic(flow) => self.send_traffic(flow),
            Delivery::Wake(index) => {
                if self.components[index].wake_at.is_some_and(|t| t <= self.now) {
                    self.components[index].wake_at = None;
                    if self.is_running_at(index) {
                        self.call_at(index, |c, ctx| c.poll(ctx));
                    }
                }
            }
        }
    }

    fn arrive(&mut self, from: SlotIndex, id: RequestId, request: Box<ApiRequest>) {
        let arrived = self.now;
        let refusal = if self.faults.may_refuse() {
            let client = self.components[from].id.clone();
            self.refusal(&client, &request)
        } else {
            None
        };
        if let Some((error, wait)) = refusal {
            let back = arrived + wait;
            self.trace.record(
                arrived,
                back,
                &"kube-apiserver",
                &self.components[from].id,
                MessageKind::Response,
                // A transport error has no status code; a server error is traced as any other.
                format_args!(
                    "{}",
                    if error.is_transport() {
                        error.reason.as_str().to_string()
                    } else {
                        format!("{} {}", error.code(), error.reason.as_str()).trim_end().to_string()
                    }
                ),
                &"",
            );
            self.push(back, Delivery::Response { to: from, id, result: Err(error) });
            return;
        }
        let watch_kind = if let ApiRequest::Watch(w) = &*request { Some(w.kind) } else { None };
        let handled = self.serve(arrived, *request, Some(from));
        let etcd_time = if handled.revision.is_some() { self.latencies.etcd_write.0 } else { 0 };
        let back = arrived + Duration(etcd_time + self.jitter(self.latencies.response.0));
        if let Ok(crate::api::ApiResponse::Watching(w)) = &handled.result {
            self.watch_owner.insert(*w, from);
            // A watch's events travel on the stream its response opened: none may reach the
            // client before the response that tells it the watch exists.
            self.watch_clock.insert(*w, back);
            if let Some(kind) = watch_kind {
                self.share_if_kube_proxy(from, kind, *w);
            }
        }
        self.text.clear();
        match &handled.result {
            Ok(_) => self.text.push_str("200"),
            Err(e) => {
                push_decimal(&mut self.text, u64::from(e.code()));
                self.text.push(' ');
                self.text.push_str(e.reason.as_str());
            }
        }
        self.trace.record_text(arrived, back, "kube-apiserver", &self.components[from].name, MessageKind::Response, &self.text, &"");
        let Handled { result, notifications, revision } = handled;
        let written = result.as_ref().ok().and_then(|r| r.object()).cloned();
        // Queued before the watch's first events, so at the same millisecond it still comes first.
        self.push(back, Delivery::Response { to: from, id, result });
        self.after_write(arrived, revision, written.as_deref(), notifications);
    }

    /// Calls into one component with a fresh context, then sends what it asked for and
    /// queues its next wake-up.
    fn call(&mut self, id: &ComponentId, f: impl FnOnce(&mut dyn Component, &mut Ctx)) {
        if let Some(&index) = self.by_id.get(id) {
            self.call_at(index, f);
        }
    }

    /// `call` for the component in this place. A node's process gets its machine for the call.
    fn call_at(&mut self, index: SlotIndex, f: impl FnOnce(&mut dyn Component, &mut Ctx)) {
        let shared = self.reads_shared_cache(index);
        if shared {
            self.shared_proxy.refresh();
        }
        let offered = self.offers_shared_watch(index);
        let slot = &mut self.components[index];
        let mut ctx = Ctx::new(self.now, &mut self.rng, &mut self.next_request);
        if let Some(m) = slot.machine {
            ctx = ctx.on_machine(&mut self.machines[m]);
        }
        if shared {
            ctx.shared_proxy = Some(&self.shared_proxy);
        }
        ctx.shared_watch_offered = offered;
        f(slot.process.component_mut(), &mut ctx);
        let effects = ctx.into_effects();
        let next = self.next_wakeup_at(index);
        for effect in effects {
            match effect {
                Effect::Request { id: rid, request } => {
                    let at = self.now + Duration(self.rng.jitter(self.latencies.request.0, self.latencies.jitter));
                    self.text.clear();
                    self.text.push_str(request.verb());
                    self.text.push(' ');
                    push_target(&mut self.text, &request);
                    let (from, what) = (&self.components[index].name, &self.text);
                    self.trace.record_text(self.now, at, from, "kube-apiserver", MessageKind::Request, what, &request.target_ref());
                    self.push(at, Delivery::Arrive { from: index, id: rid, request });
                }
                Effect::CloseWatch(w) => {
                    self.api.close_watch(w);
                    self.watch_owner.remove(&w);
                }
                Effect::ProgramRules(write) => {
                    if let Some(m) = self.components[index].machine {
                        self.machines[m].rules.write(self.now, write);
                    }
                }
                Effect::AwaitSharedChange => {
                    let slot = &mut self.components[index];
                    if !std::mem::replace(&mut slot.awaiting_shared, true) {
                        self.shared_waiters.push(index);
                    }
                }
            }
        }
        if let Some(t) = next {
            let t = t.max(self.now);
            let slot = &mut self.components[index];
            if slot.wake_at.is_none_or(|w| t < w) {
                slot.wake_at = Some(t);
                self.push(t, Delivery::Wake(index));
            }
        }
    }

    /// When the process in this place next has something to do: its own timers, or, for one
    /// that hears its machine's runtime, the machine's next container event.
    fn next_wakeup_at(&self, index: SlotIndex) -> Option<Time> {
        let slot = &self.components[index];
        let own = slot.process.component().next_wakeup();
        let machine = match slot.machine {
            Some(m) if slot.process.hears_runtime_events() => self.machines[m].runtime.next_event(),
            _ => None,
        };
        own.into_iter().chain(machine).min()
    }

    /// Asks a running component for its next wake-up again, after something outside a delivery
    /// changed it or its machine (a setting switched, a crash injected).
    pub fn reschedule(&mut self, id: &ComponentId) {
        let Some(&index) = self.by_id.get(id) else { return };
        if !self.components[index].running {
            return;
        }
        let next = self.next_wakeup_at(index);
        let slot = &mut self.components[index];
        if let Some(t) = next.map(|t| t.max(self.now)) {
            if slot.wake_at.is_none_or(|w| t < w) {
                slot.wake_at = Some(t);
                self.push(t, Delivery::Wake(index));
            }
        }
    }

    /// Ends every open watch (a watch severed, the API server restarted): clients must re-list.
    pub fn sever_watches(&mut self, of: Option<&ComponentId>) {
        if of.is_none() {
            self.close_shared_cache();
            self.sever_external_watches(false);
        }
        let of: Vec<bool> = self.components.iter().map(|s| of.is_none_or(|x| *x == s.id)).collect();
        self.sever_watches_of(&of);
    }

    /// Ends the watches of the components whose places `of` marks.
    fn sever_watches_of(&mut self, of: &[bool]) {
        let ids: Vec<(WatchId, SlotIndex)> = self.watch_owner.iter().filter(|(_, o)| of[**o]).map(|(w, o)| (*w, *o)).collect();
        for (w, owner) in ids {
            self.api.close_watch(w);
            self.watch_owner.remove(&w);
            if self.is_running_at(owner) {
                self.call_at(owner, |c, ctx| c.handle_watch_closed(ctx, w));
            }
        }
    }

    fn compact_if_due(&mut self) {
        while self.now >= self.next_compaction {
            self.api.etcd.compact(self.compact_to);
            self.compact_to = self.api.revision();
            self.next_compaction = self.next_compaction + ETCD_COMPACTION_INTERVAL;
        }
    }

    /// etcd expires the leases that have run out (Events past kube-apiserver's `--event-ttl`):
    /// checked, like compaction, whenever the clock moves, so it costs one comparison until a
    /// lease is due. Each deletion is etcd's own, traced from etcd to kube-apiserver, and its
    /// watchers hear DELETED with the usual latency. A stopped etcd expires nothing; it catches
    /// up once it runs again.
    fn expire_if_due(&mut self) {
        if self.faults.etcd_down || self.api.next_expiry().is_none_or(|t| t > self.now) {
            return;
        }
        for handled in self.api.expire_leases(self.now) {
            let (Some(rev), Ok(response)) = (handled.revision, &handled.result) else { continue };
            self.text.clear();
            self.text.push_str("rev ");
            push_decimal(&mut self.text, rev);
            let object: &dyn std::fmt::Display = match response.object() {
                Some(o) => &o.key_ref(),
                None => &"",
            };
            self.trace.record_text(self.now, self.now, "etcd", "kube-apiserver", MessageKind::EtcdWrite, &self.text, object);
            self.invariants.observe_revision(rev, &mut self.violations);
            self.schedule_notifications(self.now, handled.notifications);
        }
    }

    /// Compacts etcd's history up to the current revision at once.
    pub fn compact(&mut self) {
        let rev = self.api.revision();
        self.api.etcd.compact(rev);
    }

    /// All stored objects of a kind, in key order (for views and kubectl).
    pub fn objects(&self, kind: crate::model::Kind) -> impl Iterator<Item = &std::rc::Rc<Object>> {
        self.api.items(kind, None)
    }
}

/// Appends `n` in decimal, as `Display` writes it.
fn push_decimal(out: &mut String, n: u64) {
    let mut digits = [0u8; 20];
    out.extend(trace::decimal_digits(n, &mut digits).iter().map(|&d| char::from(d)));
}

/// Appends `kind/namespace/name` (`kind/name` without a namespace), as `ObjectKey` prints (a
/// custom object's resource stands for its kind).
fn push_key(out: &mut String, kind: crate::model::Kind, namespace: &str, name: &str) {
    push_key_in(out, kind, "", namespace, name)
}

fn push_key_in(out: &mut String, kind: crate::model::Kind, resource: &str, namespace: &str, name: &str) {
    out.push_str(if resource.is_empty() { kind.lower() } else { resource });
    out.push('/');
    if !namespace.is_empty() {
        out.push_str(namespace);
        out.push('/');
    }
    out.push_str(name);
}

/// Appends an object's key, as `Object::key_ref` prints it.
fn push_object_key(out: &mut String, object: &Object) {
    let (kind, meta) = (object.kind(), object.meta());
    let resource = object.as_custom_object().map_or("", |o| o.resource());
    push_key_in(out, kind, resource, if kind.namespaced() { &meta.namespace } else { "" }, &meta.name);
}

/// Appends what a request is about, as `ApiRequest::target_ref` prints it.
fn push_target(out: &mut String, request: &ApiRequest) {
    match request {
        ApiRequest::Create(o) | ApiRequest::Update(o) | ApiRequest::UpdateStatus(o) if o.meta().name.is_empty() => {
            let kind = o.kind();
            push_key(out, kind, if kind.namespaced() { &o.meta().namespace } else { "" }, &o.meta().generate_name);
            out.push('*');
        }
        ApiRequest::Create(o) | ApiRequest::Update(o) | ApiRequest::UpdateStatus(o) | ApiRequest::Finalize(o) => push_object_key(out, o),
        ApiRequest::DeleteCollection { kind, namespace } => {
            out.push_str(kind.plural_of(""));
            out.push('/');
            out.push_str(namespace);
        }
        ApiRequest::Delete(d) | ApiRequest::Evict(d) => push_key_in(out, d.key.kind, &d.key.resource, &d.key.namespace, &d.key.name),
        ApiRequest::Bind { pod: k, .. } | ApiRequest::Get(k) => push_key_in(out, k.kind, &k.resource, &k.namespace, &k.name),
        ApiRequest::List(l) => out.push_str(l.kind.map(|k| k.plural_of(&l.resource)).unwrap_or_default()),
        ApiRequest::Watch(w) => out.push_str(w.kind.plural_of(&w.resource)),
        ApiRequest::PodMetrics { namespace, .. } => {
            out.push_str("pods.metrics.k8s.io/");
            out.push_str(namespace);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::{DeleteRequest, FieldFilter, ListRequest, WatchRequest};
    use crate::model::{Kind, Node, ObjectKey, ObjectMeta, Pod};

    fn pod(name: &str, generate_name: &str) -> Object {
        let metadata =
            ObjectMeta { name: name.into(), generate_name: generate_name.into(), namespace: "default".into(), ..Default::default() };
        Object::Pod(Pod { metadata, ..Default::default() })
    }

    #[test]
    fn hop_texts_are_written_as_their_display_forms() {
        let node = Object::Node(Node {
            metadata: ObjectMeta { name: "node-1".into(), namespace: "ignored".into(), ..Default::default() },
            ..Default::default()
        });
        let requests = [
            ApiRequest::Create(pod("", "web-7d9c-")),
            ApiRequest::Update(pod("web-1", "")),
            ApiRequest::UpdateStatus(node.clone()),
            ApiRequest::Create(Object::Node(Node::default())),
            ApiRequest::Delete(DeleteRequest::new(ObjectKey::new(Kind::Pod, "default", "web-1"))),
            ApiRequest::Evict(DeleteRequest::new(ObjectKey::new(Kind::Pod, "kube-system", "dns"))),
            ApiRequest::Bind { pod: ObjectKey::new(Kind::Pod, "default", "web-2"), node: "node-1".into() },
            ApiRequest::Get(ObjectKey::new(Kind::Node, "", "node-1")),
            ApiRequest::List(ListRequest {
                kind: Some(Kind::ReplicaSet),
                resource: Default::default(),
                namespace: None,
                field: FieldFilter::All,
                labels: None,
            }),
            ApiRequest::List(ListRequest {
                kind: None,
                resource: Default::default(),
                namespace: None,
                field: FieldFilter::All,
                labels: None,
            }),
            ApiRequest::Watch(WatchRequest {
                kind: Kind::Lease,
                resource: Default::default(),
                field: FieldFilter::All,
                resource_version: 3,
                labels: None,
            }),
        ];
        for request in &requests {
            let mut text = String::new();
            push_target(&mut text, request);
            assert_eq!(text, request.target_ref().to_string());
        }
        let mut text = String::new();
        push_target(&mut text, &requests[0]);
        assert_eq!(text, "pod/default/web-7d9c-*");
        for object in [node, pod("web-1", "")] {
            let mut text = String::new();
            push_object_key(&mut text, &object);
            assert_eq!(text, object.key_ref().to_string());
        }
        for n in [0, 9, 10, 409, u64::MAX] {
            let mut text = String::from("rev ");
            push_decimal(&mut text, n);
            assert_eq!(text, format!("rev {n}"));
        }
    }
}
