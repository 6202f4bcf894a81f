//! Client machinery shared by every component: the sans-I/O contract between a component and the
//! simulation, informers, work queues, expectations and the event recorder.
//!
//! A component never performs I/O. The simulation hands it inputs (`handle_*`) and a `Ctx` with
//! the current time, and, for a process that runs on a node, that node's machine; the component
//! answers by pushing effects (API requests) into the context. Nothing here reads a clock or
//! calls another component.
//!
//! The contract is generic on purpose, as quinn-proto's `Connection` is: `Component` has no
//! downcasts. What the simulation or a view needs from one concrete component it reaches through
//! the `Sim`'s own typed list of processes (`sim::Process`), never through `Any`.

pub mod events;
pub mod expectations;
pub mod fasthash;
pub mod informer;
pub mod slab;
pub mod store;
pub mod table;
pub mod workqueue;

use crate::api::{ApiRequest, ApiResult, WatchEvent, WatchId};
use crate::model::Time;
use crate::rng::Rng;
use crate::sim::machine::Machine;
use serde::Serialize;

/// Identifies a request a component sent, so its answer can find its way back.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub struct RequestId(pub u64);

/// What a component asks the simulation to do on its behalf.
#[derive(Clone, Debug)]
pub enum Effect {
    /// Send `request` to kube-apiserver; the answer comes back through `handle_response(id, ..)`.
    Request { id: RequestId, request: Box<ApiRequest> },
    /// Stop a watch this component no longer wants.
    CloseWatch(WatchId),
    /// Write Service rules into this component's node (kube-proxy's iptables-restore): the
    /// machine keeps them, whatever becomes of the process.
    ProgramRules(crate::net::RulesWrite),
    /// Call `handle_shared_change` at the next change of the shared kube-proxy cache
    /// (`proxy::shared`), once: a kube-proxy with no sync pending asks to hear of the next one.
    AwaitSharedChange,
}

/// The world as a component may see it during one call: the time, the machine it runs on (a
/// per-node process's), and a place for its effects.
pub struct Ctx<'a> {
    pub now: Time,
    pub rng: &'a mut Rng,
    /// The Service and EndpointSlice cache this component's watches share with other nodes'
    /// kube-proxies, when they do (`proxy::shared`); `None` for every other component.
    pub shared_proxy: Option<&'a crate::proxy::shared::SharedProxyCache>,
    /// Whether the watches this component opens now will be shared (a kube-proxy past teaching
    /// scale with no watch fault on it): what it lists it may then leave to the shared cache.
    pub shared_watch_offered: bool,
    next_request: &'a mut u64,
    /// The node's machine, lent for this call only: a per-node process acts on its containers
    /// here and keeps nothing of it, so the machine stays the simulation's.
    machine: Option<&'a mut Machine>,
    effects: Vec<Effect>,
}

impl<'a> Ctx<'a> {
    pub fn new(now: Time, rng: &'a mut Rng, next_request: &'a mut u64) -> Self {
        Ctx { now, rng, shared_proxy: None, shared_watch_offered: false, next_request, machine: None, effects: Vec::new() }
    }
    /// The same context, for a process running on `machine`.
    pub fn on_machine(self, machine: &'a mut Machine) -> Self {
        Ctx { machine: Some(machine), ..self }
    }
    /// The machine this call runs on, if the process runs on a node.
    pub fn machine(&self) -> Option<&Machine> {
        self.machine.as_deref()
    }
    pub fn machine_mut(&mut self) -> Option<&mut Machine> {
        self.machine.as_deref_mut()
    }
    /// Queues a request to the API server and returns its id.
    pub fn send(&mut self, request: ApiRequest) -> RequestId {
        *self.next_request += 1;
        let id = RequestId(*self.next_request);
        self.effects.push(Effect::Request { id, request: Box::new(request) });
        id
    }
    pub fn close_watch(&mut self, id: WatchId) {
        self.effects.push(Effect::CloseWatch(id));
    }
    pub fn program_rules(&mut self, update: crate::net::RulesUpdate) {
        self.effects.push(Effect::ProgramRules(crate::net::RulesWrite::Update(update)));
    }
    /// Writes a whole table into this component's node, sharing it rather than copying it.
    pub fn program_table(&mut self, table: std::rc::Rc<crate::net::RulesTable>) {
        self.effects.push(Effect::ProgramRules(crate::net::RulesWrite::Table(table)));
    }
    pub fn await_shared_change(&mut self) {
        self.effects.push(Effect::AwaitSharedChange);
    }
    pub fn into_effects(self) -> Vec<Effect> {
        self.effects
    }
}

/// Where a loop is in its turn, for the page's room of loops.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum LoopPhase {
    /// Reading what changed: informer deltas arriving.
    Observe,
    /// Comparing the claim with the cache (a reconcile running).
    Compare,
    /// Waiting on the writes it sent.
    Act,
    #[default]
    Idle,
}

/// One loop's observable state.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct LoopStatus {
    pub name: String,
    pub phase: LoopPhase,
    pub queue_depth: usize,
    /// The last thing it decided, in words ("ReplicaSet web-7d9f6c: 2 of 3, creating 1").
    pub last_action: String,
    pub last_action_at: Option<Time>,
    /// Reconciles (or scheduling attempts, pod syncs) since start.
    pub turns: u64,
    /// Switched off inside a process that runs (`sim stop kube-controller-manager/job-controller`):
    /// the loop neither observes nor acts until started again.
    pub stopped: bool,
}

/// A component as the simulation drives it. Implementations are sans-I/O state machines.
pub trait Component {
    /// The component's name as the page shows it (`kube-scheduler`, `kubelet-node-1`).
    fn name(&self) -> String;
    /// Boots (or reboots) the component: forget all in-memory state, start informers.
    fn start(&mut self, ctx: &mut Ctx);
    fn handle_response(&mut self, ctx: &mut Ctx, id: RequestId, result: ApiResult);
    fn handle_watch_event(&mut self, ctx: &mut Ctx, watch: WatchId, event: WatchEvent);
    /// The server ended a watch (severed, compacted, or the API server restarted).
    fn handle_watch_closed(&mut self, ctx: &mut Ctx, watch: WatchId);
    /// The cache this component shares (`Ctx::shared_proxy`) changed, after it asked with
    /// `Ctx::await_shared_change`. Only kube-proxy shares one.
    fn handle_shared_change(&mut self, _ctx: &mut Ctx) {}
    /// Discovery shows a CustomResourceDefinition the component had not seen one of (the
    /// simulation tells every running component after a definition is written, as a client's
    /// periodic discovery would find it). Only kube-controller-manager acts on it.
    fn handle_discovery(&mut self, _ctx: &mut Ctx) {}
    /// Does whatever is due at `ctx.now`: queued reconciles, timers.
    fn poll(&mut self, ctx: &mut Ctx);
    /// The next time `poll` has something to do, if any.
    fn next_wakeup(&self) -> Option<Time>;
    /// Whether it has work beyond its periodic heartbeats (for `sim settle`).
    fn is_busy(&self) -> bool;
    /// Its loops, for `sim status` and the page (one for most components, one per controller
    /// inside kube-controller-manager).
    fn loops(&self) -> Vec<LoopStatus>;
}

/// A result type for `handle_response` handlers that only care whether a write succeeded.
pub fn succeeded(result: &ApiResult) -> bool {
    result.is_ok()
}
