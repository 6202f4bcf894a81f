//! The node lifecycle controller (pkg/controller/nodelifecycle): notices nodes that stopped
//! reporting, and taints them so their pods can be moved.
//!
//! Every 5 s (node-monitor-period) it looks at each node's Lease and Ready condition. A node whose
//! lease was last seen renewed more than 50 s ago (node-monitor-grace-period) gets its kubelet
//! conditions set to Unknown ("Kubelet stopped posting node status."), its pods marked not ready,
//! and — on the next pass, once the Unknown status is what it observes — a place in its zone's
//! rate-limited tainting queue, which adds `node.kubernetes.io/unreachable:NoExecute`
//! (`not-ready` when the kubelet itself reports Ready=False). Evicting the pods is the taint
//! eviction controller's job (`taint_eviction`). When the lease is renewed again, the kubelet's
//! Ready status returns and the taints are removed.
//!
//! Rate limits follow the zone states: 0.1 nodes/s normally; when at least 55 % (and more than
//! two) of a zone's nodes are not ready, 0.01 nodes/s in clusters of more than 50 nodes and none
//! at all in smaller ones; when every zone is fully down, no tainting and every NoExecute taint
//! the controller placed is taken off (the control plane assumes its own network is at fault).
//!
//! It also keeps the NoSchedule taints that mirror node conditions and `spec.unschedulable`
//! (`doNoScheduleTaintingPass`), which is how the scheduler keeps new pods off such nodes.

use super::{Action, Caches, Call, Controller, Sync};
use crate::api::ApiRequest;
use crate::kubelet::lease::LEASE_NAMESPACE;
use crate::model::*;
use crate::runtime::events::{reference_to, EventSpec};
use crate::runtime::informer::Delta;
use crate::runtime::store::Store;
use crate::vec_map::{VecMap, VecSet};
use std::collections::VecDeque;

/// `--node-monitor-period`.
pub const NODE_MONITOR_PERIOD: Duration = Duration::secs(5);
/// `--node-monitor-grace-period` (50 s since v1.32).
pub const NODE_MONITOR_GRACE_PERIOD: Duration = Duration::secs(50);
/// `--node-startup-grace-period`, for a node that never posted a Ready condition.
pub const NODE_STARTUP_GRACE_PERIOD: Duration = Duration::secs(60);
/// `--node-eviction-rate`: nodes tainted per second per zone when healthy.
pub const EVICTION_QPS: f64 = 0.1;
/// `--secondary-node-eviction-rate`: when a zone is partially disrupted in a large cluster.
pub const SECONDARY_EVICTION_QPS: f64 = 0.01;
/// `--large-cluster-size-threshold`: at or below it, a partially disrupted zone stops tainting.
pub const LARGE_CLUSTER_THRESHOLD: usize = 50;
/// `--unhealthy-zone-threshold`.
pub const UNHEALTHY_ZONE_THRESHOLD: f64 = 0.55;

pub const TAINT_UNREACHABLE: &str = "node.kubernetes.io/unreachable";
pub const TAINT_NOT_READY: &str = "node.kubernetes.io/not-ready";
pub const TAINT_UNSCHEDULABLE: &str = "node.kubernetes.io/unschedulable";
pub const NO_EXECUTE: &str = "NoExecute";
pub const NO_SCHEDULE: &str = "NoSchedule";

/// The conditions the controller sets to Unknown (NetworkUnavailable belongs to the network).
const KUBELET_CONDITIONS: [&str; 4] = ["Ready", "MemoryPressure", "DiskPressure", "PIDPressure"];

/// The key of the periodic pass; no node is named "".
fn monitor_key() -> ObjectKey {
    ObjectKey::new(Kind::Node, "", "")
}

/// What the controller last saw of one node (`nodeHealthData`).
#[derive(Clone, Debug, Default)]
struct NodeHealth {
    /// When it last saw a sign of life: a new heartbeat in the status or a renewed lease.
    probe: Time,
    ready_transition: Time,
    /// The Ready condition as last seen (or as written by this controller).
    saved_ready: Option<NodeCondition>,
    /// The renew time of the lease as last seen.
    lease_renew: Option<Time>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ZoneState {
    Initial,
    Normal,
    PartialDisruption,
    FullDisruption,
}

/// `flowcontrol.NewTokenBucketRateLimiter(qps, 1)`; a qps of 0 never accepts.
#[derive(Clone, Debug)]
struct TokenBucket {
    qps: f64,
    tokens: f64,
    at: Time,
}

impl TokenBucket {
    fn new(qps: f64, now: Time) -> Self {
        TokenBucket { qps, tokens: 1.0, at: now }
    }
    fn refill(&mut self, now: Time) {
        let elapsed = now.since(self.at).as_secs_f64();
        self.tokens = (self.tokens + elapsed * self.qps).min(1.0);
        self.at = now;
    }
    fn try_accept(&mut self, now: Time) -> bool {
        if self.qps <= 0.0 {
            return false;
        }
        self.refill(now);
        if self.tokens >= 1.0 {
            self.tokens -= 1.0;
            true
        } else {
            false
        }
    }
    /// When the next token is there, if ever.
    fn next_token_at(&self, now: Time) -> Option<Time> {
        if self.qps <= 0.0 {
            return None;
        }
        let elapsed = now.since(self.at).as_secs_f64();
        let tokens = (self.tokens + elapsed * self.qps).min(1.0);
        let wait_ms = ((1.0 - tokens) / self.qps * 1000.0).ceil().max(0.0) as u64;
        Some(now + Duration::millis(wait_ms))
    }
}

/// A zone's rate-limited tainting queue (`RateLimitedTimedQueue`): a node stays a member after
/// it was processed until it is removed, so it is not tainted twice.
#[derive(Clone, Debug)]
struct ZoneTainter {
    queue: VecDeque<String>,
    members: VecSet<String>,
    limiter: TokenBucket,
}

impl ZoneTainter {
    fn new(now: Time) -> Self {
        ZoneTainter { queue: VecDeque::new(), members: VecSet::new(), limiter: TokenBucket::new(EVICTION_QPS, now) }
    }
    fn add(&mut self, node: &str) -> bool {
        if !self.members.insert(node.to_string()) {
            return false;
        }
        self.queue.push_back(node.to_string());
        true
    }
    fn remove(&mut self, node: &str) -> bool {
        self.queue.retain(|n| n != node);
        self.members.remove(node)
    }
    /// `SwapLimiter`: a fresh bucket at the new rate.
    fn swap_limiter(&mut self, qps: f64, now: Time) {
        if (self.limiter.qps - qps).abs() > f64::EPSILON {
            self.limiter = TokenBucket::new(qps, now);
        }
    }
}

#[derive(Debug, Default)]
pub struct NodeLifecycleController {
    health: VecMap<String, NodeHealth>,
    known: VecSet<String>,
    zone_states: VecMap<String, ZoneState>,
    tainters: VecMap<String, ZoneTainter>,
    next_monitor: Option<Time>,
    ticking: bool,
    events: Vec<EventSpec>,
}

/// The writes one pass decided, in the order they must go out.
#[derive(Default)]
struct Writes {
    status: Vec<Call>,
    pods: Vec<Call>,
    /// Nodes whose taints this pass already rewrote (later changes build on that copy).
    tainted: VecMap<String, Node>,
}

/// The zone a node counts in (`GetZoneKey`: region and zone labels).
pub fn zone_key(node: &Node) -> String {
    let label = |k: &str| node.metadata.labels.get(k).cloned().unwrap_or_default();
    let region = label("topology.kubernetes.io/region");
    let zone = label("topology.kubernetes.io/zone");
    if region.is_empty() && zone.is_empty() {
        String::new()
    } else {
        format!("{region}:\u{0}:{zone}")
    }
}

/// `RecordNodeStatusChange`'s reference: the Node by name and UID.
fn node_reference(node: &Node) -> ObjectReference {
    ObjectReference {
        kind: "Node".into(),
        namespace: Default::default(),
        name: node.metadata.name.clone(),
        uid: node.metadata.uid.clone(),
        api_version: "v1".into(),
        field_path: Default::default(),
    }
}

fn has_taint(node: &Node, key: &str, effect: &str) -> bool {
    node.spec.taints.iter().any(|t| t.key == key && t.effect == effect)
}

/// `ComputeZoneState` over the nodes' current Ready conditions.
pub fn compute_zone_state(ready: &[bool]) -> (usize, ZoneState) {
    let ready_nodes = ready.iter().filter(|r| **r).count();
    let not_ready = ready.len() - ready_nodes;
    let state = if ready_nodes == 0 && not_ready > 0 {
        ZoneState::FullDisruption
    } else if not_ready > 2 && not_ready as f64 / ready.len() as f64 >= UNHEALTHY_ZONE_THRESHOLD {
        ZoneState::PartialDisruption
    } else {
        ZoneState::Normal
    };
    (not_ready, state)
}

/// The tainting rate for a zone in this state (`setLimiterInZone`).
pub fn zone_qps(state: ZoneState, zone_size: usize) -> f64 {
    match state {
        ZoneState::PartialDisruption if zone_size > LARGE_CLUSTER_THRESHOLD => SECONDARY_EVICTION_QPS,
        ZoneState::PartialDisruption => 0.0,
        _ => EVICTION_QPS,
    }
}

impl NodeLifecycleController {
    pub fn new() -> Self {
        Self::default()
    }

    /// The taint writes go on top of what this pass already changed on the node.
    fn node_for_taints<'a>(writes: &'a mut Writes, node: &Node) -> &'a mut Node {
        writes.tainted.get_or_insert_with(node.metadata.name.to_string(), || node.clone())
    }

    /// Swaps NoExecute taints (`SwapNodeControllerTaint`) on this pass's copy of the node.
    fn swap_taints(writes: &mut Writes, node: &Node, add: Option<&str>, remove: &[&str], now: Time) {
        let target = Self::node_for_taints(writes, node);
        target.spec.taints.retain(|t| !(t.effect == NO_EXECUTE && remove.contains(&t.key.as_str())));
        if let Some(key) = add {
            if !has_taint(target, key, NO_EXECUTE) {
                target.spec.taints.push(Taint { key: key.into(), value: String::new(), effect: NO_EXECUTE.into(), time_added: Some(now) });
            }
        }
    }

    /// The taint writes, one per node whose taints this pass changed, sent as a patch would be
    /// (no resourceVersion precondition: the status write of the same pass must not conflict).
    fn taint_calls(caches: &Caches, tainted: VecMap<String, Node>) -> Vec<Call> {
        tainted
            .into_values()
            .filter(|n| {
                let key = ObjectKey::new(Kind::Node, "", &n.metadata.name);
                caches[Kind::Node].get(&key).and_then(|o| o.as_node()).is_some_and(|cached| cached.spec.taints != n.spec.taints)
            })
            .map(|mut n| {
                n.metadata.resource_version = 0;
                Call::new(ApiRequest::Update(Object::Node(n)))
            })
            .collect()
    }

    /// `markNodeAsReachable`: take the NoExecute taints off and leave the tainting queue.
    fn mark_reachable(&mut self, writes: &mut Writes, node: &Node, now: Time) {
        Self::swap_taints(writes, node, None, &[TAINT_UNREACHABLE, TAINT_NOT_READY], now);
        if let Some(t) = self.tainters.get_mut(&zone_key(node)) {
            t.remove(&node.metadata.name);
        }
    }

    /// `markNodeForTainting`: (re)queue the node unless it already carries the wanted taint.
    fn mark_for_tainting(&mut self, node: &Node, wanted: &str) {
        let Some(t) = self.tainters.get_mut(&zone_key(node)) else { return };
        if !has_taint(node, wanted, NO_EXECUTE) {
            t.remove(&node.metadata.name);
        }
        t.add(&node.metadata.name);
    }

    /// `tryUpdateNodeHealth`: returns the Ready condition observed and the one now current.
    fn update_health(&mut self, node: &Node, leases: &Store, writes: &mut Writes, now: Time) -> (NodeCondition, Option<NodeCondition>) {
        let name = node.metadata.name.to_string();
        let created = node.metadata.creation_timestamp.unwrap_or(Time(0));
        let current = node.condition("Ready").cloned();
        // Taken out rather than copied (a default stands in its place): it goes back in at the
        // end of this pass, overwriting in place rather than shifting the map twice.
        let mut health = self.health.get_mut(&name).map(std::mem::take);
        let (observed, grace) = match &current {
            None => {
                let fake = NodeCondition {
                    type_: "Ready".into(),
                    status: "Unknown".into(),
                    last_heartbeat_time: Some(created),
                    last_transition_time: Some(created),
                    reason: None,
                    message: None,
                };
                let h = health.get_or_insert_with(|| NodeHealth { probe: created, ready_transition: created, ..Default::default() });
                h.saved_ready = None;
                (fake, NODE_STARTUP_GRACE_PERIOD)
            }
            Some(c) => (c.clone(), NODE_MONITOR_GRACE_PERIOD),
        };
        let fresh = |lease_renew| NodeHealth { probe: now, ready_transition: now, saved_ready: current.clone(), lease_renew };
        let mut health = match health {
            None => fresh(None),
            Some(h) => match (&h.saved_ready, &current) {
                (None, Some(_)) | (Some(_), None) => fresh(h.lease_renew),
                (Some(saved), Some(cur)) if saved.last_heartbeat_time != cur.last_heartbeat_time => {
                    let transition = if saved.last_transition_time != cur.last_transition_time { now } else { h.ready_transition };
                    NodeHealth { probe: now, ready_transition: transition, saved_ready: current.clone(), lease_renew: h.lease_renew }
                }
                _ => h,
            },
        };
        // A renewed lease is a sign of life too.
        let observed_lease = lease_renew(leases, node);
        if let Some(renew) = observed_lease {
            if health.lease_renew.is_none_or(|saved| saved < renew) {
                health.lease_renew = Some(renew);
                health.probe = now;
            }
        }
        let mut current_ready = current;
        // Upstream asks `now.After(probe + grace)`; its passes start a pass's duration later
        // than the period, so the pass at exactly probe + grace already sees it as after.
        if now >= health.probe + grace {
            let mut updated = node.clone();
            for type_ in KUBELET_CONDITIONS {
                match updated.status.conditions.iter_mut().find(|c| c.type_ == type_) {
                    None => updated.status.conditions.push(NodeCondition {
                        type_: type_.into(),
                        status: "Unknown".into(),
                        last_heartbeat_time: Some(created),
                        last_transition_time: Some(now),
                        reason: Some("NodeStatusNeverUpdated".into()),
                        message: Some("Kubelet never posted node status.".into()),
                    }),
                    Some(c) if c.status != "Unknown" => {
                        c.status = "Unknown".into();
                        c.reason = Some("NodeStatusUnknown".into());
                        c.message = Some("Kubelet stopped posting node status.".into());
                        c.last_transition_time = Some(now);
                    }
                    Some(_) => {}
                }
            }
            current_ready = updated.condition("Ready").cloned();
            if current_ready.as_ref() != Some(&observed) {
                writes.status.push(Call::new(ApiRequest::UpdateStatus(Object::Node(updated))));
                health = NodeHealth {
                    probe: health.probe,
                    ready_transition: now,
                    saved_ready: current_ready.clone(),
                    lease_renew: observed_lease,
                };
            }
        }
        self.health.insert(name, health);
        (observed, current_ready)
    }

    /// `MarkPodsNotReady`: each pod's Ready condition to False, then a NodeNotReady event.
    fn mark_pods_not_ready(caches: &Caches, node: &str, writes: &mut Writes, now: Time) {
        for object in caches[Kind::Pod].on_node(node) {
            writes.pods.extend(pod_not_ready_call(object, now));
        }
    }

    /// `processPod`: a pod newly bound to a node this controller holds not ready is marked
    /// not ready too.
    fn process_pod(&self, caches: &Caches, key: &ObjectKey, now: Time) -> Sync {
        let Some(object) = caches[Kind::Pod].get(key) else { return Sync::nothing() };
        let Some(node) = object.as_pod().and_then(|p| p.node_name()) else { return Sync::nothing() };
        let ready = self.health.get(node).and_then(|h| h.saved_ready.as_ref()).map(|c| c.status.as_str());
        if ready.is_none_or(|s| s == "True") {
            return Sync::nothing();
        }
        match pod_not_ready_call(object, now) {
            Some(call) => Sync::with_steps(vec![vec![call]], format!("{}: on not-ready node {node}, marked Ready=False", key.name)),
            None => Sync::nothing(),
        }
    }

    /// `processTaintBaseEviction`, decided on the Ready condition observed before this pass.
    fn taint_based_eviction(&mut self, node: &Node, observed: &NodeCondition, writes: &mut Writes, now: Time) {
        match observed.status.as_str() {
            "False" if has_taint(node, TAINT_UNREACHABLE, NO_EXECUTE) => {
                Self::swap_taints(writes, node, Some(TAINT_NOT_READY), &[TAINT_UNREACHABLE], now)
            }
            "False" => self.mark_for_tainting(node, TAINT_NOT_READY),
            "Unknown" if has_taint(node, TAINT_NOT_READY, NO_EXECUTE) => {
                Self::swap_taints(writes, node, Some(TAINT_UNREACHABLE), &[TAINT_NOT_READY], now)
            }
            "Unknown" => self.mark_for_tainting(node, TAINT_UNREACHABLE),
            "True" => self.mark_reachable(writes, node, now),
            _ => {}
        }
    }

    /// `monitorNodeHealth`.
    fn monitor(&mut self, caches: &Caches, writes: &mut Writes, now: Time) {
        let nodes: Vec<&Node> = caches[Kind::Node].iter().filter_map(|o| o.as_node()).collect();
        let present: VecSet<&str> = nodes.iter().map(|n| n.metadata.name.as_str()).collect();
        self.known.retain(|n| present.contains(n.as_str()));
        self.health.retain(|n, _| present.contains(n.as_str()));
        for node in &nodes {
            let zone = zone_key(node);
            if !self.zone_states.contains_key(&zone) {
                self.zone_states.insert(zone.clone(), ZoneState::Initial);
                self.tainters.insert(zone.clone(), ZoneTainter::new(now));
            }
            if self.known.insert(node.metadata.name.to_string()) {
                self.mark_reachable(writes, node, now);
            }
        }
        let mut zones: VecMap<String, Vec<bool>> = VecMap::new();
        for node in &nodes {
            let (observed, current) = self.update_health(node, &caches[Kind::Lease], writes, now);
            if !node.metadata.labels.contains_key("node.kubernetes.io/exclude-disruption") {
                zones.get_or_insert_with(zone_key(node), Vec::new).push(current.as_ref().is_some_and(|c| c.status == "True"));
            }
            let Some(current) = current else { continue };
            self.taint_based_eviction(node, &observed, writes, now);
            if current.status != "True" && observed.status == "True" {
                let involved = node_reference(node);
                let message = format!("Node {} status is now: NodeNotReady", node.metadata.name);
                self.events.push(EventSpec::normal(involved, "NodeNotReady", message));
                Self::mark_pods_not_ready(caches, &node.metadata.name, writes, now);
            }
        }
        self.handle_disruption(&zones, &nodes, writes, now);
    }

    /// `handleDisruption`: zone states and their tainting rates.
    fn handle_disruption(&mut self, zones: &VecMap<String, Vec<bool>>, nodes: &[&Node], writes: &mut Writes, now: Time) {
        let new_states: VecMap<&String, ZoneState> = zones.iter().map(|(z, ready)| (z, compute_zone_state(ready).1)).collect();
        let all_are_fully_disrupted = new_states.values().all(|s| *s == ZoneState::FullDisruption);
        self.zone_states.retain(|z, _| zones.contains_key(z));
        let all_were_fully_disrupted = self.zone_states.values().all(|s| *s == ZoneState::FullDisruption);
        if all_are_fully_disrupted && all_were_fully_disrupted {
            return;
        }
        if all_are_fully_disrupted {
            // Every node is down at once: more likely the control plane's own network.
            for node in nodes {
                self.mark_reachable(writes, node, now);
            }
            for (zone, state) in self.zone_states.iter_mut() {
                if let Some(t) = self.tainters.get_mut(zone) {
                    t.swap_limiter(0.0, now);
                }
                *state = ZoneState::FullDisruption;
            }
            return;
        }
        if all_were_fully_disrupted {
            for h in self.health.values_mut() {
                h.probe = now;
                h.ready_transition = now;
            }
        }
        for (zone, state) in self.zone_states.iter_mut() {
            let new = new_states.get(zone).copied().unwrap_or(ZoneState::Normal);
            if *state == new && !all_were_fully_disrupted {
                continue;
            }
            if let Some(t) = self.tainters.get_mut(zone) {
                t.swap_limiter(zone_qps(new, zones.get(zone).map_or(0, Vec::len)), now);
            }
            *state = new;
        }
    }

    /// `doNoExecuteTaintingPass`: taint queued nodes as each zone's rate allows.
    fn tainting_pass(&mut self, caches: &Caches, writes: &mut Writes, now: Time) {
        let zones: Vec<String> = self.tainters.keys().cloned().collect();
        for zone in zones {
            let Some(t) = self.tainters.get_mut(&zone) else { continue };
            while let Some(name) = next_to_taint(t, now) {
                let key = ObjectKey::new(Kind::Node, "", &name);
                let Some(node) = caches[Kind::Node].get(&key).and_then(|o| o.as_node()) else {
                    t.members.remove(&name);
                    continue;
                };
                match node.ready_status() {
                    "False" => Self::swap_taints(writes, node, Some(TAINT_NOT_READY), &[TAINT_UNREACHABLE], now),
                    "Unknown" => Self::swap_taints(writes, node, Some(TAINT_UNREACHABLE), &[TAINT_NOT_READY], now),
                    _ => {}
                }
            }
        }
    }

    /// When the tick must run again: the next monitor pass, or a token for a queued node.
    fn next_tick(&self, now: Time) -> Time {
        let monitor = self.next_monitor.unwrap_or(now + NODE_MONITOR_PERIOD);
        let token = self.tainters.values().filter(|t| !t.queue.is_empty()).filter_map(|t| t.limiter.next_token_at(now)).min();
        token.map_or(monitor, |t| t.min(monitor)).max(now + Duration::millis(1))
    }

    fn tick(&mut self, caches: &Caches, now: Time) -> Sync {
        let mut writes = Writes::default();
        let monitor_due = self.next_monitor.is_none_or(|t| now >= t);
        if monitor_due {
            self.next_monitor = Some(now + NODE_MONITOR_PERIOD);
            self.monitor(caches, &mut writes, now);
        }
        self.tainting_pass(caches, &mut writes, now);
        let then = Action::RequeueAfter(self.next_tick(now).since(now));
        let taints = Self::taint_calls(caches, std::mem::take(&mut writes.tainted));
        if writes.status.is_empty() && taints.is_empty() && writes.pods.is_empty() {
            return Sync::nothing().then(then);
        }
        let summary = tick_summary(&writes.status, &taints, writes.pods.len());
        Sync::with_steps(vec![writes.status, taints, writes.pods], summary).then(then)
    }

    /// `doNoScheduleTaintingPass`: NoSchedule taints mirror conditions and `unschedulable`.
    fn no_schedule_pass(&self, caches: &Caches, key: &ObjectKey) -> Sync {
        let Some(node) = caches[Kind::Node].get(key).and_then(|o| o.as_node()) else { return Sync::nothing() };
        let wanted = no_schedule_taints(node);
        let managed = |t: &Taint| t.effect == NO_SCHEDULE && (t.key == TAINT_UNSCHEDULABLE || condition_taint_key(&t.key));
        let present: Vec<&Taint> = node.spec.taints.iter().filter(|t| managed(t)).collect();
        let same = wanted.len() == present.len() && wanted.iter().all(|w| present.iter().any(|p| p.key == w.key));
        if same {
            return Sync::nothing();
        }
        let mut update = node.clone();
        update.spec.taints.retain(|t| !managed(t) || wanted.iter().any(|w| w.key == t.key));
        for w in wanted {
            if !update.spec.taints.iter().any(|t| t.key == w.key && t.effect == NO_SCHEDULE) {
                update.spec.taints.push(w);
            }
        }
        update.metadata.resource_version = 0;
        let summary = format!("Node {}: NoSchedule taints follow its conditions", node.metadata.name);
        Sync::with_steps(vec![vec![Call::new(ApiRequest::Update(Object::Node(update)))]], summary)
    }
}

/// `MarkPodsNotReady` for one pod: its Ready condition to False, then the NodeNotReady event.
fn pod_not_ready_call(object: &Object, now: Time) -> Option<Call> {
    let pod = object.as_pod()?;
    if pod.condition("Ready")?.status == "False" {
        return None;
    }
    let mut update = pod.clone();
    if let Some(c) = update.status.conditions.iter_mut().find(|c| c.type_ == "Ready") {
        c.status = "False".into();
        c.last_transition_time = Some(now);
    }
    let event = EventSpec::warning(reference_to(object), "NodeNotReady", "Node is not ready");
    Some(Call::new(ApiRequest::UpdateStatus(Object::Pod(update))).on_success(event))
}

/// The pass's decision in words, for the room of loops: which nodes went Unknown, which
/// gained or lost NoExecute taints, how many pods were marked not ready.
fn tick_summary(status: &[Call], taints: &[Call], pods: usize) -> String {
    let node_of = |c: &Call| match &c.request {
        ApiRequest::UpdateStatus(Object::Node(n)) | ApiRequest::Update(Object::Node(n)) => Some(n.clone()),
        _ => None,
    };
    let mut parts: Vec<String> =
        status.iter().filter_map(node_of).map(|n| format!("{}: Ready=Unknown (lease not renewed)", n.metadata.name)).collect();
    for n in taints.iter().filter_map(node_of) {
        let no_execute: Vec<String> = n.spec.taints.iter().filter(|t| t.effect == NO_EXECUTE).map(|t| t.to_string()).collect();
        parts.push(if no_execute.is_empty() {
            format!("{}: NoExecute taints removed", n.metadata.name)
        } else {
            format!("{}: tainted {}", n.metadata.name, no_execute.join(", "))
        });
    }
    if pods > 0 {
        parts.push(format!("{pods} pod(s) marked Ready=False"));
    }
    parts.join("; ")
}

/// `RateLimitedTimedQueue.Try`'s step: the head of the queue, if the limiter lets it through
/// (a token is taken whenever something waits).
fn next_to_taint(t: &mut ZoneTainter, now: Time) -> Option<String> {
    if t.queue.is_empty() || !t.limiter.try_accept(now) {
        return None;
    }
    t.queue.pop_front()
}

/// The condition-to-taint map (`nodeConditionToTaintKeyStatusMap`).
fn condition_taint(type_: &str, status: &str) -> Option<&'static str> {
    match (type_, status) {
        ("Ready", "False") => Some(TAINT_NOT_READY),
        ("Ready", "Unknown") => Some(TAINT_UNREACHABLE),
        ("MemoryPressure", "True") => Some("node.kubernetes.io/memory-pressure"),
        ("DiskPressure", "True") => Some("node.kubernetes.io/disk-pressure"),
        ("PIDPressure", "True") => Some("node.kubernetes.io/pid-pressure"),
        ("NetworkUnavailable", "True") => Some("node.kubernetes.io/network-unavailable"),
        _ => None,
    }
}

fn condition_taint_key(key: &str) -> bool {
    [
        TAINT_NOT_READY,
        TAINT_UNREACHABLE,
        "node.kubernetes.io/memory-pressure",
        "node.kubernetes.io/disk-pressure",
        "node.kubernetes.io/pid-pressure",
        "node.kubernetes.io/network-unavailable",
    ]
    .contains(&key)
}

/// The NoSchedule taints a node should carry for its conditions and `unschedulable`.
pub fn no_schedule_taints(node: &Node) -> Vec<Taint> {
    let mut taints: Vec<Taint> = node
        .status
        .conditions
        .iter()
        .filter_map(|c| condition_taint(&c.type_, &c.status))
        .map(|key| Taint { key: key.into(), value: String::new(), effect: NO_SCHEDULE.into(), time_added: None })
        .collect();
    if node.spec.unschedulable {
        taints.push(Taint { key: TAINT_UNSCHEDULABLE.into(), value: String::new(), effect: NO_SCHEDULE.into(), time_added: None });
    }
    taints
}

/// The renew time of the node's lease in `kube-node-lease`, as the Lease informer last saw it.
fn lease_renew(leases: &Store, node: &Node) -> Option<Time> {
    let key =
        ObjectKey { kind: Kind::Lease, resource: Name::default(), namespace: Name::new(LEASE_NAMESPACE), name: node.metadata.name.clone() };
    leases.get(&key)?.as_lease()?.spec.renew_time.map(|t| t.0)
}

impl Controller for NodeLifecycleController {
    fn name(&self) -> &'static str {
        "node-lifecycle-controller"
    }
    /// Leases too: a renewed lease is a sign of life, read from the Lease store.
    fn watches(&self) -> &'static [Kind] {
        &[Kind::Node, Kind::Pod, Kind::Lease]
    }
    fn event_source(&self) -> &'static str {
        "node-controller"
    }
    fn zone_state(&self, zone: &str) -> Option<ZoneState> {
        self.zone_states.get(zone).copied()
    }

    fn on_delta(&mut self, _caches: &Caches, delta: &Delta, _now: Time) -> Vec<ObjectKey> {
        let object = delta.object();
        let mut keys = Vec::new();
        match (object.kind(), delta) {
            // A lease is read from the Lease store when the monitor pass looks at its node;
            // its deltas enqueue nothing.
            (Kind::Node, Delta::Deleted(_)) => {}
            (Kind::Node, _) => keys.push(object.key()),
            // `podUpdated`: a pod that got (or changed) its node.
            (Kind::Pod, Delta::Added(o)) if o.as_pod().and_then(|p| p.node_name()).is_some() => keys.push(o.key()),
            (Kind::Pod, Delta::Updated { old, new }) => {
                let node = |o: &Object| o.as_pod().and_then(|p| p.node_name().map(str::to_string));
                if node(new).is_some() && node(old) != node(new) {
                    keys.push(new.key());
                }
            }
            _ => {}
        }
        if !self.ticking && object.kind() == Kind::Node {
            // The periodic pass starts with the first node the informer hands over.
            self.ticking = true;
            keys.push(monitor_key());
        }
        keys
    }

    fn reconcile(&mut self, key: &ObjectKey, caches: &Caches, now: Time) -> Sync {
        match key.kind {
            _ if *key == monitor_key() => self.tick(caches, now),
            Kind::Pod => self.process_pod(caches, key, now),
            _ => self.no_schedule_pass(caches, key),
        }
    }

    fn take_events(&mut self) -> Vec<EventSpec> {
        std::mem::take(&mut self.events)
    }

    fn reset(&mut self) {
        *self = Self::default();
    }

    fn workers(&self) -> usize {
        // `--concurrent-node-syncs` is 5; the periodic pass is one key.
        5
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runtime::informer::Informer;

    fn node(name: &str, ready: &str, heartbeat: Time) -> Node {
        let mut n = Node::default();
        n.metadata.name = name.into();
        n.metadata.uid = format!("uid-{name}").into();
        n.metadata.creation_timestamp = Some(Time(0));
        n.metadata.labels.insert("topology.kubernetes.io/zone".into(), "zone-a".into());
        n.status.conditions.push(NodeCondition {
            type_: "Ready".into(),
            status: ready.into(),
            last_heartbeat_time: Some(heartbeat),
            last_transition_time: Some(Time(0)),
            reason: Some("KubeletReady".into()),
            message: Some("kubelet is posting ready status".into()),
        });
        n
    }

    fn lease(name: &str, renew: Time) -> Object {
        let mut l = Lease::default();
        l.metadata.name = name.into();
        l.metadata.namespace = LEASE_NAMESPACE.into();
        l.spec.renew_time = Some(MicroTime(renew));
        Object::Lease(l)
    }

    struct World {
        nodes: Informer,
        pods: Informer,
        leases: Informer,
    }

    impl World {
        fn new(nodes: Vec<Node>, pods: Vec<Pod>) -> Self {
            World {
                nodes: Informer::from_objects(Kind::Node, nodes.into_iter().map(Object::Node)),
                pods: Informer::from_objects(Kind::Pod, pods.into_iter().map(Object::Pod)),
                leases: Informer::from_objects(Kind::Lease, []),
            }
        }
        fn caches(&self) -> Caches<'_> {
            Caches::new([self.pods.store(), self.leases.store(), self.nodes.store()])
        }
    }

    /// The Lease informer delivers a renewal: into the store, and to the handler.
    fn see_lease(c: &mut NodeLifecycleController, w: &mut World, name: &str, renew: Time) {
        let delta = w.leases.apply(crate::store::ChangeType::Modified, std::rc::Rc::new(lease(name, renew)));
        c.on_delta(&w.caches(), &delta, renew);
    }

    fn status_writes(sync: &Sync) -> Vec<Node> {
        sync.steps
            .iter()
            .flatten()
            .filter_map(|c| match &c.request {
                ApiRequest::UpdateStatus(Object::Node(n)) => Some(n.clone()),
                _ => None,
            })
            .collect()
    }

    fn taint_writes(sync: &Sync) -> Vec<Node> {
        sync.steps
            .iter()
            .flatten()
            .filter_map(|c| match &c.request {
                ApiRequest::Update(Object::Node(n)) => Some(n.clone()),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn a_stale_lease_makes_the_node_unknown_after_the_grace_period_only() {
        let mut w = World::new(vec![node("node-1", "True", Time(0))], vec![]);
        let mut c = NodeLifecycleController::new();
        see_lease(&mut c, &mut w, "node-1", Time(0));
        let key = monitor_key();
        let first = c.reconcile(&key, &w.caches(), Time(0));
        assert!(status_writes(&first).is_empty());
        assert_eq!(first.then, Action::RequeueAfter(NODE_MONITOR_PERIOD));
        // 45 s without a renewal: still nothing.
        let sync = c.reconcile(&key, &w.caches(), Time(45_000));
        assert!(status_writes(&sync).is_empty());
        // 50 s: every kubelet condition Unknown with the real reason and message.
        let sync = c.reconcile(&key, &w.caches(), Time(50_000));
        let written = status_writes(&sync);
        assert_eq!(written.len(), 1);
        let ready = written[0].condition("Ready").expect("Ready");
        assert_eq!(ready.status, "Unknown");
        assert_eq!(ready.reason.as_deref(), Some("NodeStatusUnknown"));
        assert_eq!(ready.message.as_deref(), Some("Kubelet stopped posting node status."));
        assert_eq!(ready.last_transition_time, Some(Time(50_000)));
        let never = written[0].condition("MemoryPressure").expect("added");
        assert_eq!(never.reason.as_deref(), Some("NodeStatusNeverUpdated"));
        let events = c.take_events();
        assert_eq!(events.len(), 1);
        assert_eq!(events[0].reason, "NodeNotReady");
        assert_eq!(events[0].message, "Node node-1 status is now: NodeNotReady");
    }

    #[test]
    fn a_renewed_lease_keeps_the_node_ready() {
        let mut w = World::new(vec![node("node-1", "True", Time(0))], vec![]);
        let mut c = NodeLifecycleController::new();
        let key = monitor_key();
        for s in (0..=120).step_by(5) {
            if s % 10 == 0 {
                see_lease(&mut c, &mut w, "node-1", Time(s * 1000));
            }
            let sync = c.reconcile(&key, &w.caches(), Time(s * 1000));
            assert!(status_writes(&sync).is_empty(), "at {s}s");
        }
    }

    #[test]
    fn an_unknown_node_is_tainted_unreachable_and_its_pods_marked_not_ready() {
        let mut pod = Pod::default();
        pod.metadata.name = "web-1".into();
        pod.metadata.namespace = "default".into();
        pod.spec.node_name = Some("node-1".into());
        pod.status.conditions.push(PodCondition { type_: "Ready".into(), status: "True".into(), ..Default::default() });
        let healthy = |at: u64| node("node-2", "True", Time(at));
        let w = World::new(vec![node("node-1", "True", Time(0)), healthy(0)], vec![pod]);
        let mut c = NodeLifecycleController::new();
        let key = monitor_key();
        c.reconcile(&key, &w.caches(), Time(0));
        let w =
            World::new(vec![node("node-1", "True", Time(0)), healthy(50_000)], w.pods.iter().filter_map(|o| o.as_pod().cloned()).collect());
        let sync = c.reconcile(&key, &w.caches(), Time(50_000));
        let pods: Vec<&Call> =
            sync.steps.iter().flatten().filter(|c| matches!(c.request, ApiRequest::UpdateStatus(Object::Pod(_)))).collect();
        assert_eq!(pods.len(), 1);
        let ApiRequest::UpdateStatus(Object::Pod(p)) = &pods[0].request else { unreachable!() };
        assert_eq!(p.condition("Ready").map(|c| c.status.as_str()), Some("False"));
        let event = pods[0].on_success.as_ref().expect("event");
        assert_eq!((event.type_, event.reason.as_str(), event.message.as_str()), ("Warning", "NodeNotReady", "Node is not ready"));
        assert!(taint_writes(&sync).is_empty(), "the taint waits for the Unknown status to be observed");
        assert_eq!(sync.summary.as_deref(), Some("node-1: Ready=Unknown (lease not renewed); 1 pod(s) marked Ready=False"));
        // The next pass observes Unknown and taints at once (a full token).
        let w = World::new(vec![status_writes(&sync)[0].clone(), healthy(55_000)], vec![]);
        let sync = c.reconcile(&key, &w.caches(), Time(55_000));
        let tainted = taint_writes(&sync);
        assert_eq!(tainted.len(), 1);
        assert_eq!(tainted[0].spec.taints[0].to_string(), "node.kubernetes.io/unreachable:NoExecute");
        assert_eq!(tainted[0].spec.taints[0].time_added, Some(Time(55_000)));
        assert_eq!(sync.summary.as_deref(), Some("node-1: tainted node.kubernetes.io/unreachable:NoExecute"));
    }

    #[test]
    fn a_pod_bound_to_a_not_ready_node_is_marked_not_ready() {
        let mut pod = Pod::default();
        pod.metadata.name = "late".into();
        pod.metadata.namespace = "default".into();
        pod.spec.node_name = Some("node-1".into());
        pod.status.conditions.push(PodCondition { type_: "Ready".into(), status: "True".into(), ..Default::default() });
        let w = World::new(vec![node("node-1", "Unknown", Time(0))], vec![pod]);
        let mut c = NodeLifecycleController::new();
        let key = ObjectKey::new(Kind::Pod, "default", "late");
        assert!(c.reconcile(&key, &w.caches(), Time(0)).steps.is_empty(), "no health known yet");
        c.reconcile(&monitor_key(), &w.caches(), Time(0));
        let sync = c.reconcile(&key, &w.caches(), Time(1_000));
        assert_eq!(sync.steps.len(), 1);
        assert_eq!(sync.summary.as_deref(), Some("late: on not-ready node node-1, marked Ready=False"));
    }

    #[test]
    fn when_every_node_is_down_nothing_is_tainted() {
        let w = World::new(vec![node("node-1", "Unknown", Time(0))], vec![]);
        let mut c = NodeLifecycleController::new();
        let sync = c.reconcile(&monitor_key(), &w.caches(), Time(0));
        assert!(taint_writes(&sync).is_empty());
        assert_eq!(c.zone_state(&zone_key(&node("x", "True", Time(0)))), Some(ZoneState::FullDisruption));
    }

    #[test]
    fn a_ready_node_loses_the_no_execute_taints() {
        let mut n = node("node-1", "True", Time(60_000));
        n.spec.taints.push(Taint { key: TAINT_UNREACHABLE.into(), value: String::new(), effect: NO_EXECUTE.into(), time_added: None });
        let w = World::new(vec![n], vec![]);
        let mut c = NodeLifecycleController::new();
        c.known.insert("node-1".into());
        c.zone_states.insert(zone_key(&w.nodes.iter().next().unwrap().as_node().unwrap().clone()), ZoneState::Normal);
        let sync = c.reconcile(&monitor_key(), &w.caches(), Time(60_000));
        let tainted = taint_writes(&sync);
        assert_eq!(tainted.len(), 1);
        assert!(tainted[0].spec.taints.is_empty());
    }

    #[test]
    fn zone_states_follow_the_unhealthy_threshold() {
        assert_eq!(compute_zone_state(&[true, true, false]), (1, ZoneState::Normal));
        // Two of three down is 67 %, but partial disruption needs more than two nodes down.
        assert_eq!(compute_zone_state(&[true, false, false]), (2, ZoneState::Normal));
        assert_eq!(compute_zone_state(&[true, true, false, false, false]), (3, ZoneState::PartialDisruption));
        assert_eq!(compute_zone_state(&[true, true, true, false, false, false]), (3, ZoneState::Normal));
        assert_eq!(compute_zone_state(&[false, false]), (2, ZoneState::FullDisruption));
        assert_eq!(zone_qps(ZoneState::Normal, 10), 0.1);
        assert_eq!(zone_qps(ZoneState::PartialDisruption, 50), 0.0);
        assert_eq!(zone_qps(ZoneState::PartialDisruption, 51), 0.01);
        assert_eq!(zone_qps(ZoneState::FullDisruption, 10), 0.1);
    }

    #[test]
    fn the_tainting_queue_takes_one_node_per_ten_seconds() {
        let mut b = TokenBucket::new(EVICTION_QPS, Time(0));
        assert!(b.try_accept(Time(0)));
        assert!(!b.try_accept(Time(9_999)));
        assert_eq!(b.next_token_at(Time(9_999)), Some(Time(10_000)));
        assert!(b.try_accept(Time(10_000)));
        let mut never = TokenBucket::new(0.0, Time(0));
        assert!(!never.try_accept(Time(1_000_000)));
    }

    #[test]
    fn no_schedule_taints_mirror_conditions_and_cordoning() {
        let mut n = node("node-1", "Unknown", Time(0));
        n.spec.unschedulable = true;
        let taints: Vec<String> = no_schedule_taints(&n).iter().map(|t| t.to_string()).collect();
        assert_eq!(taints, vec!["node.kubernetes.io/unreachable:NoSchedule", "node.kubernetes.io/unschedulable:NoSchedule"]);
        let w = World::new(vec![n], vec![]);
        let sync = NodeLifecycleController::new().reconcile(&ObjectKey::new(Kind::Node, "", "node-1"), &w.caches(), Time(0));
        assert_eq!(taint_writes(&sync)[0].spec.taints.len(), 2);
    }
}
