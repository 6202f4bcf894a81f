//! kube-scheduler: the loop that gives every pending pod a node.
//!
//! It watches all pods and all nodes. Bound pods fill the cache (what each node already
//! carries); pending pods of `default-scheduler` wait in the scheduling queue. Each poll takes
//! every pod that is due from activeQ and runs one scheduling cycle per pod, as
//! pkg/scheduler/schedule_one.go does: filter the nodes in a rotating order until
//! `numFeasibleNodesToFind` pass, score those with the default profile's plugins and weights,
//! pick the best (ties broken at random, from the simulation's seed), assume the pod onto that
//! node in the cache and post the binding. The binding's answer records a `Scheduled` event, or
//! undoes the assumption and retries after a backoff. A pod no node fits gets a
//! `FailedScheduling` event and a `PodScheduled=False` condition with upstream's message, and
//! waits among the unschedulable pods until a node or pod event could help it.
//!
//! Scheduling takes no simulated time: a cycle runs inside one `poll`. Every decision keeps
//! its explanation (`last_decision`) for the page, compactly until the page asks for it.

pub mod cache;
pub mod decision;
pub mod plugins;
pub mod queue;

pub use cache::{NodeFacts, NodeInfo, Resources};
pub use decision::{Decision, NodeScores, NodeVerdict, Verdict};
pub use plugins::{FilterFailure, Plugin};
pub use queue::QueueConfig;

use crate::api::{set_pod_condition, ApiRequest, ApiResult, FieldFilter, WatchEvent, WatchId};
use crate::model::{Duration, Kind, Node, Object, ObjectKey, Pod, Time};
use crate::rng::Rng;
use crate::runtime::events::{reference_to, EventRecorder, EventSpec};
use crate::runtime::informer::{Delta, Informer};
use crate::runtime::{Component, Ctx, LoopPhase, LoopStatus, RequestId};
use cache::{Cache, PodResources};
use decision::{DecisionLog, Packed, Record};
use plugins::{PluginSet, PodFacts};
use queue::{Popped, SchedulingQueue};
use std::collections::BTreeMap;
use std::rc::Rc;

/// The profile name pods ask for in `spec.schedulerName`, and the events' source.
pub const SCHEDULER_NAME: &str = "default-scheduler";
/// `ErrNoNodesAvailable`.
pub const ERR_NO_NODES_AVAILABLE: &str = "no nodes available to schedule pods";
/// How often upstream moves finished backoffs to activeQ, and checks the unschedulable limit.
const BACKOFF_FLUSH_PERIOD: Duration = Duration::secs(1);
const UNSCHEDULABLE_FLUSH_PERIOD: Duration = Duration::secs(30);
/// Events carry at most this much message (`validation.NoteLengthLimit`).
const EVENT_MESSAGE_LIMIT: usize = 1024;

#[derive(Clone, Debug, PartialEq)]
pub struct SchedulerConfig {
    /// `percentageOfNodesToScore`; 0 is the adaptive default.
    pub percentage_of_nodes_to_score: u32,
    pub queue: QueueConfig,
    /// How many pods' last decisions to keep for the page.
    pub decisions_kept: usize,
}

impl Default for SchedulerConfig {
    fn default() -> Self {
        SchedulerConfig { percentage_of_nodes_to_score: 0, queue: QueueConfig::default(), decisions_kept: 1000 }
    }
}

/// What the loop did last, as `loops()` shows it. A pod assumed onto a node is kept in pieces
/// and formatted only when someone looks: a large run assumes a pod per cycle and the page reads
/// the line a few times a second.
#[derive(Debug, Default)]
enum LastAction {
    #[default]
    Nothing,
    Said(String),
    Assumed {
        pod: String,
        node: Rc<str>,
        /// The weighted total, `None` when the node was the only feasible one.
        score: Option<i64>,
    },
}

impl LastAction {
    fn text(&self) -> String {
        match self {
            LastAction::Nothing => String::new(),
            LastAction::Said(text) => text.clone(),
            LastAction::Assumed { pod, node, score: Some(score) } => format!("{pod} → {node} (score {score})"),
            LastAction::Assumed { pod, node, score: None } => format!("{pod} → {node} (the only feasible node)"),
        }
    }
}

/// A binding posted and not yet answered.
#[derive(Debug)]
struct BindInFlight {
    popped: Popped,
    node: Rc<str>,
}

/// Where a pod stands for the scheduler's two event handlers (the assigned-pod cache handler
/// and the unscheduled-pod queue handler), after the informer's view of it changed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum PodClass {
    /// Not there, or finished (the scheduler's informer excludes Succeeded and Failed pods).
    Absent,
    Assigned,
    /// Unassigned, not being deleted, and ours to schedule.
    Pending,
    /// Unassigned but another scheduler's, or being deleted.
    Ignored,
}

fn classify(object: Option<&Rc<Object>>) -> PodClass {
    let Some(pod) = object.and_then(|o| o.as_pod()) else { return PodClass::Absent };
    if pod.is_terminal() {
        PodClass::Absent
    } else if pod.node_name().is_some() {
        PodClass::Assigned
    } else if pod.metadata.is_deleting() || pod.spec.scheduler_name.as_deref().is_some_and(|s| s != SCHEDULER_NAME) {
        PodClass::Ignored
    } else {
        PodClass::Pending
    }
}

/// One feasible node's raw scores in a cycle, before normalisation (a plugin that skips the
/// pod leaves its column at 0 and unused).
#[derive(Clone, Copy, Debug, Default)]
struct RawScores {
    taint: i64,
    affinity: i64,
    fit: i64,
    spread: i64,
    balanced: i64,
}

/// Buffers one cycle's scoring fills, kept from cycle to cycle so that scoring allocates
/// nothing: each feasible node's raw scores, in the order of the feasible nodes, and the
/// weighted totals.
#[derive(Debug, Default)]
struct Scratch {
    raw: Vec<RawScores>,
    totals: Vec<i64>,
    /// (index into the cycle's examined nodes, cache slot) of each node that passed.
    feasible: Vec<(usize, u32)>,
    /// Pods of the spreading owner per node slot, filled from the cache's per-owner list for
    /// one cycle and zeroed again after it.
    host_counts: Vec<u32>,
    zone_seen: Vec<bool>,
}

/// The outcome of the filter phase of one cycle.
struct Search {
    /// (slot, verdict) of each node examined, in order.
    nodes: Vec<(u32, Packed)>,
    taint_reasons: Vec<Rc<str>>,
    wanted: usize,
    processed: usize,
}

pub struct Scheduler {
    config: SchedulerConfig,
    pods: Informer,
    nodes: Informer,
    /// PersistentVolumeClaims, for the VolumeBinding plugin's PreFilter.
    claims: Informer,
    cache: Cache,
    queue: SchedulingQueue,
    recorder: EventRecorder,
    binds: BTreeMap<RequestId, BindInFlight>,
    decisions: DecisionLog<Record>,
    scratch: Scratch,
    /// `nextStartNodeIndex`: where the next search starts in the node order.
    next_start_node_index: usize,
    /// When the process started: the queue's flush ticks count from here.
    started_at: Time,
    /// The latest time it was called at.
    now: Time,
    /// Informer events arrived and the loop has not run since.
    observing: bool,
    last_action: LastAction,
    last_action_at: Option<Time>,
    turns: u64,
}

impl Default for Scheduler {
    fn default() -> Self {
        Self::new()
    }
}

impl Scheduler {
    pub fn new() -> Scheduler {
        Self::with_config(SchedulerConfig::default())
    }

    pub fn with_config(config: SchedulerConfig) -> Scheduler {
        Scheduler {
            pods: Informer::new(Kind::Pod, FieldFilter::All),
            nodes: Informer::new(Kind::Node, FieldFilter::All),
            claims: Informer::new(Kind::PersistentVolumeClaim, FieldFilter::All),
            cache: Cache::new(),
            queue: SchedulingQueue::new(config.queue),
            recorder: EventRecorder::new(SCHEDULER_NAME, ""),
            binds: BTreeMap::new(),
            decisions: DecisionLog::new(config.decisions_kept),
            scratch: Scratch::default(),
            next_start_node_index: 0,
            started_at: Time(0),
            now: Time(0),
            observing: false,
            last_action: LastAction::default(),
            last_action_at: None,
            turns: 0,
            config,
        }
    }

    pub fn config(&self) -> &SchedulerConfig {
        &self.config
    }
    /// The last decision made for a pod, with every node's verdict.
    pub fn last_decision(&self, pod: &ObjectKey) -> Option<&Decision> {
        self.decisions.get(pod).map(|r| r.decision(|slot| self.slot_name(slot)))
    }
    /// The kept decisions, oldest first.
    pub fn decisions(&self) -> impl Iterator<Item = &Decision> + '_ {
        self.decisions.iter().map(|r| r.decision(|slot| self.slot_name(slot)))
    }
    /// A kept decision in its compact form (nodes as cache slots).
    pub fn last_record(&self, pod: &ObjectKey) -> Option<&Record> {
        self.decisions.get(pod)
    }
    /// The name of the node in a cache slot (slots are never reused, so this is the node a
    /// decision examined).
    fn slot_name(&self, slot: u32) -> Rc<str> {
        self.cache.node(slot).name.clone()
    }
    /// What the cache holds for a node (requests, pod count), assumed pods included.
    pub fn node_info(&self, name: &str) -> Option<&NodeInfo> {
        self.cache.node_by_name(name)
    }
    /// (activeQ, backoffQ, unschedulable) lengths.
    pub fn queue_lengths(&self) -> (usize, usize, usize) {
        self.queue.lengths()
    }
    pub fn binds_in_flight(&self) -> usize {
        self.binds.len()
    }

    fn synced(&self) -> bool {
        self.pods.has_synced() && self.nodes.has_synced() && self.claims.has_synced()
    }

    /// The first flush tick at or after `t`.
    fn tick_at_or_after(&self, t: Time, period: Duration) -> Time {
        let since = t.since(self.started_at).0;
        self.started_at + Duration(since.div_ceil(period.0) * period.0)
    }
    /// The last flush tick at or before `t`.
    fn tick_at_or_before(&self, t: Time, period: Duration) -> Time {
        let since = t.since(self.started_at).0;
        self.started_at + Duration(since / period.0 * period.0)
    }

    fn act(&mut self, now: Time, what: LastAction) {
        self.last_action = what;
        self.last_action_at = Some(now);
    }

    fn record_event(&mut self, ctx: &mut Ctx, spec: EventSpec) {
        self.recorder.send(spec, ctx);
    }

    // ---- event handlers: they only update the cache and the queue ----

    fn on_pod_delta(&mut self, now: Time, delta: &Delta) {
        let (old, new) = match delta {
            Delta::Added(o) => (None, Some(o)),
            Delta::Updated { old, new } => (Some(old), Some(new)),
            Delta::Deleted(o) => (Some(o), None),
        };
        let Some(object) = new.or(old) else { return };
        let key = object.key();
        match (classify(old), classify(new)) {
            // Most updates of a bound pod are status only: nothing to re-account.
            (PodClass::Assigned, PodClass::Assigned) if self.cached_as_is(&key, old, new) => {}
            (PodClass::Assigned, PodClass::Assigned) => self.cache_pod(&key, new),
            (PodClass::Assigned, now_class) => {
                self.cache.remove_pod(&key);
                self.queue.move_unschedulable_if(now, |q| plugins::assigned_pod_deleted_may_help(q.rejected_by));
                // A pending pod under the name of a bound one is another incarnation (a
                // StatefulSet's pod made again), seen as one update when a re-list finds it in
                // place of the old: upstream's filtering handlers turn that into the old pod's
                // delete for the cache and the new pod's add for the queue.
                if let Some(pod) = new.filter(|_| now_class == PodClass::Pending) {
                    self.queue.add(&key, pod.clone(), now);
                }
            }
            (was, PodClass::Assigned) => {
                if was == PodClass::Pending {
                    self.queue.delete(&key);
                }
                self.cache_pod(&key, new);
            }
            (_, PodClass::Pending) => {
                // An assumed pod is being bound; its own updates change nothing meanwhile.
                if let Some(pod) = new.filter(|_| !self.cache.is_assumed(&key)) {
                    self.queue.add(&key, pod.clone(), now);
                }
            }
            (PodClass::Pending, _) => self.queue.delete(&key),
            _ => {}
        }
    }

    fn cache_pod(&mut self, key: &ObjectKey, object: Option<&Rc<Object>>) {
        if let Some(pod) = object.and_then(|o| o.as_pod()) {
            if let Some(node) = pod.node_name() {
                self.cache.add_pod(key, pod, node, false);
            }
        }
    }

    /// Whether an update of a bound pod leaves what the cache accounts for it unchanged: the
    /// same node, requests, terminating state and spreading owner, and the cache already holds
    /// it there, confirmed. Most updates of a bound pod are its status; re-accounting each one
    /// would re-parse its requests for nothing.
    fn cached_as_is(&self, key: &ObjectKey, old: Option<&Rc<Object>>, new: Option<&Rc<Object>>) -> bool {
        let (Some(a), Some(b)) = (old.and_then(|o| o.as_pod()), new.and_then(|o| o.as_pod())) else { return false };
        let same_requests = a.spec.containers.len() == b.spec.containers.len()
            && a.spec.containers.iter().zip(b.spec.containers.iter()).all(|(x, y)| x.resources == y.resources);
        a.node_name() == b.node_name()
            && a.metadata.is_deleting() == b.metadata.is_deleting()
            && plugins::spread_owner_uid(a) == plugins::spread_owner_uid(b)
            && same_requests
            && !self.cache.is_assumed(key)
            && self.cache.pod_node(key).is_some_and(|n| Some(n) == b.node_name())
    }

    fn on_node_delta(&mut self, now: Time, delta: &Delta) {
        match delta {
            Delta::Added(object) => {
                self.cache.set_node(object);
                if let Some(node) = object.as_node() {
                    self.requeue_for_node(now, None, node);
                }
            }
            Delta::Updated { old, new } => {
                self.cache.set_node(new);
                if let (Some(a), Some(b)) = (old.as_node(), new.as_node()) {
                    if plugins::node_scheduling_properties_changed(a, b) {
                        self.requeue_for_node(now, Some(a), b);
                    }
                }
            }
            Delta::Deleted(object) => self.cache.remove_node(&object.meta().name),
        }
    }

    /// A claim added or changed (bound, most often) may let a pod the VolumeBinding plugin
    /// rejected through (`PersistentVolumeClaim/Add|Update` in its events to register).
    fn on_claim_delta(&mut self, now: Time, delta: &Delta) {
        if matches!(delta, Delta::Deleted(_)) {
            return;
        }
        let namespace = delta.object().meta().namespace.clone();
        self.queue
            .move_unschedulable_if(now, |q| q.rejected_by.contains(plugins::Plugin::VolumeBinding) && q.pod.meta().namespace == namespace);
    }

    fn requeue_for_node(&mut self, now: Time, old: Option<&Node>, new: &Node) {
        self.queue.move_unschedulable_if(now, |q| q.pod.as_pod().is_some_and(|p| plugins::node_event_may_help(p, q.rejected_by, old, new)));
    }

    // ---- the scheduling cycle ----

    fn schedule_one(&mut self, ctx: &mut Ctx, popped: Popped) {
        self.turns += 1;
        let Some(pod) = popped.pod.as_pod() else { return };
        if pod.metadata.is_deleting() {
            return;
        }
        self.cache.refresh_order();
        let num_all = self.cache.num_nodes();
        if num_all == 0 {
            let record = self.new_record(ctx.now, &popped, 0);
            self.fail(ctx, popped, record, ERR_NO_NODES_AVAILABLE.to_string(), None);
            return;
        }
        if let Some(reason) = plugins::volume_binding_prefilter(pod, self.claims.store()) {
            let record = self.new_record(ctx.now, &popped, 0);
            let mut rejected_by = PluginSet::default();
            rejected_by.insert(plugins::Plugin::VolumeBinding);
            self.fail(ctx, popped, record, plugins::prefilter_error_message(num_all, &reason), Some(rejected_by));
            return;
        }
        let owner = plugins::spread_owner_uid(pod).map(|uid| self.cache.owner_id(uid));
        let facts = PodFacts::new(pod, owner);
        let mut feasible = std::mem::take(&mut self.scratch.feasible);
        let Search { mut nodes, taint_reasons, wanted, processed } =
            find_feasible(&self.cache, &facts, self.next_start_node_index, self.config.percentage_of_nodes_to_score, &mut feasible);
        self.next_start_node_index = (self.next_start_node_index + processed) % num_all;
        // (slot, weighted total if scored) of the chosen node.
        let chosen = match feasible.as_slice() {
            [] => None,
            [(_, only)] => Some((*only, None)),
            _ => {
                score_nodes(&self.cache, &facts, &mut nodes, &feasible, &mut self.scratch);
                let totals = &self.scratch.totals;
                select_best(ctx.rng, totals).and_then(|i| Some((feasible.get(i)?.1, totals.get(i).copied())))
            }
        };
        self.scratch.feasible = feasible;
        let resources = facts.resources;
        let mut record = self.new_record(ctx.now, &popped, wanted);
        record.nodes = nodes;
        record.taint_reasons = taint_reasons;
        match chosen {
            Some((slot, score)) => self.assume_and_bind(ctx, popped, (slot, resources), score, record),
            None => {
                let failures: Vec<FilterFailure> = record.rejections().collect();
                let message = plugins::fit_error_message(num_all, failures.iter());
                let mut rejected_by = PluginSet::default();
                failures.iter().for_each(|f| rejected_by.insert(f.plugin()));
                self.fail(ctx, popped, record, message, Some(rejected_by));
            }
        }
    }

    fn new_record(&self, now: Time, popped: &Popped, wanted: usize) -> Record {
        Record::new(popped.key.clone(), now, popped.attempts, self.cache.num_nodes(), wanted)
    }

    /// Assumes the pod on the node, so the next cycle sees it there, and posts the binding.
    fn assume_and_bind(
        &mut self,
        ctx: &mut Ctx,
        popped: Popped,
        (slot, resources): (u32, PodResources),
        score: Option<i64>,
        mut record: Record,
    ) {
        let node = self.cache.node(slot).name.clone();
        if let Some(pod) = popped.pod.as_pod() {
            self.cache.add_pod_at(&popped.key, pod, resources, slot, true);
        }
        let id = ctx.send(ApiRequest::Bind { pod: popped.key.clone(), node: node.to_string() });
        record.chosen = Some(slot);
        self.act(ctx.now, LastAction::Assumed { pod: popped.key.name.to_string(), node: node.clone(), score });
        self.decisions.record(record);
        self.binds.insert(id, BindInFlight { popped, node });
    }

    /// `handleSchedulingFailure`: the event, the pod's condition, and back to the queue — among
    /// the unschedulable pods after a FitError (`rejected_by`), else into backoffQ.
    fn fail(&mut self, ctx: &mut Ctx, popped: Popped, mut record: Record, message: String, rejected_by: Option<PluginSet>) {
        self.report_failure(ctx, &popped, "Unschedulable", &message);
        let short = message.split(" preemption:").next().unwrap_or(&message).trim_end_matches('.');
        self.act(ctx.now, LastAction::Said(format!("{}: {short}", popped.key.name)));
        record.message = message;
        self.decisions.record(record);
        match rejected_by {
            Some(plugins) => self.queue.add_unschedulable(popped, plugins, ctx.now),
            None => self.queue.add_backoff(popped, ctx.now),
        }
    }

    /// The FailedScheduling event, and `PodScheduled=False` when the condition changes.
    fn report_failure(&mut self, ctx: &mut Ctx, popped: &Popped, reason: &str, message: &str) {
        self.record_event(ctx, EventSpec::warning(reference_to(&popped.pod), "FailedScheduling", truncate(message, EVENT_MESSAGE_LIMIT)));
        let Some(current) = self.pods.get(&popped.key).and_then(|o| o.as_pod()) else { return };
        if current.node_name().is_some() {
            return;
        }
        let mut pod: Pod = current.clone();
        if set_pod_condition(&mut pod.status, "PodScheduled", "False", Some(reason), Some(message), ctx.now) {
            pod.metadata.resource_version = 0;
            ctx.send(ApiRequest::UpdateStatus(Object::Pod(pod)));
        }
    }

    /// The binding's answer: a `Scheduled` event, or the assumption undone and a retry.
    fn on_bind_result(&mut self, ctx: &mut Ctx, bind: BindInFlight, result: ApiResult) {
        let BindInFlight { mut popped, node } = bind;
        match result {
            Ok(_) => {
                let message = format!("Successfully assigned {}/{} to {node}", popped.key.namespace, popped.key.name);
                self.record_event(ctx, EventSpec::normal(reference_to(&popped.pod), "Scheduled", message));
            }
            Err(error) => {
                self.cache.forget_pod(&popped.key);
                let message = format!("running Bind plugin \"DefaultBinder\": {}", error.message);
                self.report_failure(ctx, &popped, "SchedulerError", &message);
                self.act(ctx.now, LastAction::Said(format!("{}: binding to {node} failed: {}", popped.key.name, error.message)));
                // Retry only if the pod still waits for a node (not deleted, not bound by now).
                if let Some(current) = self.pods.get(&popped.key).filter(|o| classify(Some(o)) == PodClass::Pending) {
                    popped.pod = current.clone();
                    self.queue.add_backoff(popped, ctx.now);
                }
                self.queue.move_unschedulable_if(ctx.now, |q| plugins::assigned_pod_deleted_may_help(q.rejected_by));
            }
        }
    }

    fn phase(&self) -> LoopPhase {
        if self.observing {
            LoopPhase::Observe
        } else if self.synced() && self.queue.has_active() {
            LoopPhase::Compare
        } else if !self.binds.is_empty() {
            LoopPhase::Act
        } else {
            LoopPhase::Idle
        }
    }
}

/// Filters nodes in the rotating order from `start` until enough are feasible, listing those
/// in `feasible` as (index into the examined nodes, slot).
fn find_feasible(cache: &Cache, pod: &PodFacts, start: usize, percentage: u32, feasible: &mut Vec<(usize, u32)>) -> Search {
    let order = cache.order();
    let n = order.len();
    let wanted = plugins::num_feasible_nodes_to_find(percentage, n);
    let mut nodes = Vec::with_capacity(wanted.min(n));
    let mut taint_reasons = Vec::new();
    feasible.clear();
    let mut processed = 0;
    let start = if n == 0 { 0 } else { start % n };
    // The rotating order without a division per node: from `start` to the end, then the rest.
    let (tail, head) = order.split_at(start);
    for &slot in head.iter().chain(tail) {
        processed += 1;
        match plugins::run_filters(cache.facts(slot), cache.node(slot), pod) {
            Ok(()) => {
                feasible.push((nodes.len(), slot));
                nodes.push((slot, Packed::Feasible));
                if feasible.len() >= wanted {
                    break;
                }
            }
            Err(failure) => nodes.push((slot, Packed::rejected(failure, &mut taint_reasons))),
        }
    }
    Search { nodes, taint_reasons, wanted, processed }
}

/// Runs the score plugins over the feasible nodes, normalises each to 0–100 and writes each
/// node's scores and weighted total into its verdict (and the totals into `s.totals`). One
/// pass over the nodes' `NodeFacts` takes the raw scores and the highest and lowest of each
/// plugin; a second normalises and totals them.
fn score_nodes(cache: &Cache, pod: &PodFacts, nodes: &mut [(u32, Packed)], feasible: &[(usize, u32)], s: &mut Scratch) {
    let (affinity, balanced) = (pod.has_preferred_affinity(), !pod.is_best_effort());
    let spread = pod.spread_owner.map(|owner| (cache.owner_zone_counts(owner), spread_weights(cache, owner, feasible, s)));
    s.raw.clear();
    s.totals.clear();
    let (mut max_taint, mut max_affinity) = (i64::MIN, i64::MIN);
    let (mut min_spread, mut max_spread) = (i64::MAX, i64::MIN);
    for &(_, slot) in feasible {
        let (fit, node) = (cache.facts(slot), cache.node(slot));
        let mut raw = RawScores {
            taint: plugins::intolerable_prefer_no_schedule(fit, node, pod),
            fit: plugins::least_allocated(fit, pod),
            ..RawScores::default()
        };
        if affinity {
            raw.affinity = plugins::preferred_affinity(node, pod);
        }
        if balanced {
            raw.balanced = plugins::balanced_allocation(fit, pod);
        }
        if let Some((zone_counts, (host_weight, zone_weight))) = spread {
            raw.spread = spread_raw_score(zone_counts, slot, fit, &s.host_counts, host_weight, zone_weight);
            (min_spread, max_spread) = (min_spread.min(raw.spread), max_spread.max(raw.spread));
        }
        (max_taint, max_affinity) = (max_taint.max(raw.taint), max_affinity.max(raw.affinity));
        s.raw.push(raw);
    }
    if let Some(owner) = pod.spread_owner {
        clear_host_counts(cache, owner, s);
    }
    for (raw, (index, _)) in s.raw.iter().zip(feasible) {
        let scores = NodeScores::new([
            Some(plugins::default_normalized(raw.taint, max_taint, true)),
            affinity.then(|| plugins::default_normalized(raw.affinity, max_affinity, false)),
            Some(raw.fit),
            spread.map(|_| plugins::spread_normalized(raw.spread, min_spread, max_spread)),
            balanced.then_some(raw.balanced),
        ]);
        s.totals.push(scores.total);
        if let Some((_, v)) = nodes.get_mut(*index) {
            *v = Packed::scored(&scores);
        }
    }
}

/// PodTopologySpread's PreScore with the system default constraints: the hostname and zone
/// weights, and the owner's pods per node spread out by slot into `s.host_counts` for this
/// cycle (`clear_host_counts` zeroes them after). The hostname weight counts the feasible
/// nodes; the zone weight the distinct zone values among them (a node without a zone label is
/// one more value, as upstream reads the missing label as "").
fn spread_weights(cache: &Cache, owner: u32, feasible: &[(usize, u32)], s: &mut Scratch) -> (f64, f64) {
    let bound = cache.zone_id_bound();
    s.zone_seen.clear();
    s.zone_seen.resize(bound + 1, false);
    let mut zone_values = 0;
    for &(_, slot) in feasible {
        let i = cache.facts(slot).zone().map_or(bound, |z| z as usize);
        if let Some(seen) = s.zone_seen.get_mut(i).filter(|seen| !**seen) {
            *seen = true;
            zone_values += 1;
        }
    }
    if s.host_counts.len() < cache.slot_bound() {
        s.host_counts.resize(cache.slot_bound(), 0);
    }
    for &(slot, count) in cache.owner_nodes(owner) {
        if let Some(c) = s.host_counts.get_mut(slot as usize) {
            *c = count;
        }
    }
    (plugins::topology_normalizing_weight(feasible.len()), plugins::topology_normalizing_weight(zone_values))
}

/// PodTopologySpread's raw score for one node, from the owner's pods per zone and per slot. A node scores a constraint only if it has its
/// label (kubelets label every node `kubernetes.io/hostname`; the zone label is optional). Zone
/// counts cover every node of the zone, as upstream's PreScore counts over all nodes.
#[inline]
fn spread_raw_score(zone_counts: &[u32], slot: u32, fit: &NodeFacts, host_counts: &[u32], host_weight: f64, zone_weight: f64) -> i64 {
    let zone_count = fit.zone().map(|z| zone_counts.get(z as usize).map_or(0, |c| *c as i64));
    let host_count = fit.has_hostname_label().then(|| host_counts.get(slot as usize).map_or(0, |c| *c as i64));
    plugins::spread_score(host_count, zone_count, host_weight, zone_weight)
}

/// Zeroes the per-slot counts `spread_weights` filled.
fn clear_host_counts(cache: &Cache, owner: u32, s: &mut Scratch) {
    for &(slot, _) in cache.owner_nodes(owner) {
        if let Some(c) = s.host_counts.get_mut(slot as usize) {
            *c = 0;
        }
    }
}

/// `selectHost` over the feasible nodes' totals: the highest wins; among equals each is equally
/// likely (reservoir sampling with the simulation's RNG). Returns the winner's position.
fn select_best(rng: &mut Rng, totals: &[i64]) -> Option<usize> {
    let (&first, rest) = totals.split_first()?;
    let (mut best, mut best_score, mut ties) = (0, first, 1);
    for (i, &score) in rest.iter().enumerate() {
        if score > best_score {
            (best, best_score, ties) = (i + 1, score, 1);
        } else if score == best_score {
            ties += 1;
            if rng.below(ties) == 0 {
                best = i + 1;
            }
        }
    }
    Some(best)
}

/// `truncateMessage`: long messages end in " ...".
fn truncate(message: &str, limit: usize) -> String {
    if message.len() <= limit {
        return message.to_string();
    }
    let mut cut = limit - 4;
    while !message.is_char_boundary(cut) {
        cut -= 1;
    }
    format!("{} ...", &message[..cut])
}

impl Component for Scheduler {
    fn name(&self) -> String {
        "kube-scheduler".into()
    }

    fn start(&mut self, ctx: &mut Ctx) {
        *self = Scheduler::with_config(self.config.clone());
        self.started_at = ctx.now;
        self.now = ctx.now;
        self.pods.start(ctx);
        self.nodes.start(ctx);
        self.claims.start(ctx);
    }

    fn handle_response(&mut self, ctx: &mut Ctx, id: RequestId, result: ApiResult) {
        self.now = ctx.now;
        if self.pods.owns_request(id) {
            for delta in self.pods.handle_response(ctx, id, result) {
                self.observing = true;
                self.on_pod_delta(ctx.now, &delta);
            }
        } else if self.nodes.owns_request(id) {
            for delta in self.nodes.handle_response(ctx, id, result) {
                self.observing = true;
                self.on_node_delta(ctx.now, &delta);
            }
        } else if self.claims.owns_request(id) {
            for delta in self.claims.handle_response(ctx, id, result) {
                self.observing = true;
                self.on_claim_delta(ctx.now, &delta);
            }
        } else if let Some(bind) = self.binds.remove(&id) {
            self.on_bind_result(ctx, bind, result);
        } else if self.recorder.awaits(id) {
            self.recorder.answered(id, &result, ctx);
        }
        // Anything else answers an event or a status write; nothing waits on those.
    }

    fn handle_watch_event(&mut self, ctx: &mut Ctx, watch: WatchId, event: WatchEvent) {
        self.now = ctx.now;
        if self.pods.owns_watch(watch) {
            if let Some(delta) = self.pods.handle_watch_event(event) {
                self.observing = true;
                self.on_pod_delta(ctx.now, &delta);
            }
        } else if self.nodes.owns_watch(watch) {
            if let Some(delta) = self.nodes.handle_watch_event(event) {
                self.observing = true;
                self.on_node_delta(ctx.now, &delta);
            }
        } else if self.claims.owns_watch(watch) {
            if let Some(delta) = self.claims.handle_watch_event(event) {
                self.observing = true;
                self.on_claim_delta(ctx.now, &delta);
            }
        }
    }

    fn handle_watch_closed(&mut self, ctx: &mut Ctx, watch: WatchId) {
        self.now = ctx.now;
        self.pods.handle_watch_closed(ctx.now, watch);
        self.nodes.handle_watch_closed(ctx.now, watch);
        self.claims.handle_watch_closed(ctx.now, watch);
    }

    fn poll(&mut self, ctx: &mut Ctx) {
        self.now = ctx.now;
        self.pods.poll(ctx);
        self.nodes.poll(ctx);
        self.claims.poll(ctx);
        self.observing = false;
        if !self.synced() {
            return;
        }
        self.queue.flush_backoff_completed(self.tick_at_or_before(ctx.now, BACKOFF_FLUSH_PERIOD));
        self.queue.flush_unschedulable_leftover(self.tick_at_or_before(ctx.now, UNSCHEDULABLE_FLUSH_PERIOD));
        while let Some(popped) = self.queue.pop() {
            self.schedule_one(ctx, popped);
        }
    }

    fn next_wakeup(&self) -> Option<Time> {
        let mut next: Option<Time> = None;
        let mut consider = |t: Time| next = Some(next.map_or(t, |n: Time| n.min(t)));
        [self.pods.next_wakeup(), self.nodes.next_wakeup(), self.claims.next_wakeup()].into_iter().flatten().for_each(&mut consider);
        if self.observing || (self.synced() && self.queue.has_active()) {
            consider(self.now);
        }
        if self.synced() {
            if let Some(expiry) = self.queue.earliest_backoff_expiry() {
                consider(self.tick_at_or_after(expiry, BACKOFF_FLUSH_PERIOD));
            }
            if let Some(deadline) = self.queue.earliest_unschedulable_deadline() {
                consider(self.tick_at_or_after(deadline, UNSCHEDULABLE_FLUSH_PERIOD));
            }
        }
        next
    }

    fn is_busy(&self) -> bool {
        let (active, backoff, _) = self.queue.lengths();
        active + backoff > 0 || !self.binds.is_empty()
    }

    fn loops(&self) -> Vec<LoopStatus> {
        let (active, backoff, unschedulable) = self.queue.lengths();
        vec![LoopStatus {
            name: "kube-scheduler".into(),
            phase: self.phase(),
            queue_depth: active + backoff + unschedulable,
            last_action: self.last_action.text(),
            last_action_at: self.last_action_at,
            turns: self.turns,
            stopped: false,
        }]
    }
}

#[cfg(test)]
mod tests;
