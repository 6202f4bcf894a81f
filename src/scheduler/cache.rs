//! The scheduler's cache (pkg/scheduler/backend/cache): one `NodeInfo` per node with what is
//! already placed there, so that filtering and scoring a node is O(1) in the number of pods.
//!
//! Bound pods come from the informer; a pod the scheduler has just decided is *assumed* onto its
//! node at once, so the next decision already sees the capacity it takes, long before the bind
//! comes back through the watch. A bind that fails is forgotten. Pods are also counted per
//! controller owner, per node and per zone, incrementally, because the default topology
//! spreading needs those counts for every node it scores and recounting would scan every pod.
//!
//! The node order is upstream's `nodeTree`: nodes grouped by zone, listed round-robin across
//! zones, so that a search starting anywhere meets every zone early.

use super::plugins::{spread_owner_uid, untolerated_taint_reason, LABEL_HOSTNAME, LABEL_ZONE};
use crate::model::{Allocatable, Node, Object, ObjectKey, Pod, StringMap, Taint};
use std::rc::Rc;

/// The scheduler's maps use the simulation's Fx hash: their keys are names and small ids, not
/// hostile input, and none of them is iterated where the order could reach a decision.
pub use crate::runtime::fasthash::FastMap;

const LABEL_REGION: &str = "topology.kubernetes.io/region";
const LABEL_ZONE_BETA: &str = "failure-domain.beta.kubernetes.io/zone";
const LABEL_REGION_BETA: &str = "failure-domain.beta.kubernetes.io/region";
/// The requests the scheduler assumes for a container that names none
/// (`schedutil.DefaultMilliCPURequest`, `DefaultMemoryRequest`), for scoring only.
pub const DEFAULT_MILLI_CPU_REQUEST: i64 = 100;
pub const DEFAULT_MEMORY_REQUEST: i64 = 200 * 1024 * 1024;

static NO_LABELS: StringMap = StringMap::new();

/// Cpu (millicores) and memory (bytes).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Resources {
    pub milli_cpu: i64,
    pub memory: i64,
}

impl Resources {
    fn scaled_add(self, other: Resources, sign: i64) -> Resources {
        Resources {
            milli_cpu: self.milli_cpu.saturating_add(other.milli_cpu.saturating_mul(sign)),
            memory: self.memory.saturating_add(other.memory.saturating_mul(sign)),
        }
    }
}

/// What a pod takes from a node: its requests, and its requests with the non-zero defaults
/// (which LeastAllocated scores with, so that request-less pods still spread).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PodResources {
    pub requested: Resources,
    pub non_zero: Resources,
}

impl PodResources {
    /// Sums the containers. A container without a request for a resource takes its limit (as
    /// API defaulting would have set it), else nothing — or the default, for `non_zero`.
    pub fn of(pod: &Pod) -> Self {
        let mut out = PodResources::default();
        for c in pod.spec.containers.iter() {
            let get = |name: &str| c.resources.requests.get(name).or_else(|| c.resources.limits.get(name));
            let cpu = get("cpu").map(|q| q.milli_value().unwrap_or(0).max(0));
            let memory = get("memory").map(|q| q.value().unwrap_or(0).max(0));
            let requested = Resources { milli_cpu: cpu.unwrap_or(0), memory: memory.unwrap_or(0) };
            let non_zero =
                Resources { milli_cpu: cpu.unwrap_or(DEFAULT_MILLI_CPU_REQUEST), memory: memory.unwrap_or(DEFAULT_MEMORY_REQUEST) };
            out.requested = out.requested.scaled_add(requested, 1);
            out.non_zero = out.non_zero.scaled_add(non_zero, 1);
        }
        out
    }
}

/// What every filter and score reads of one node, in one cache line: the cache keeps one per
/// slot in a dense array beside the `NodeInfo`s, so a cycle that filters and scores hundreds
/// of nodes loads 64 bytes per node instead of the three lines of a `NodeInfo`. It is a copy,
/// rebuilt from the `NodeInfo` whenever the cache changes that node (`NodeFacts::of`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[repr(C, align(64))]
pub struct NodeFacts {
    /// Allocatable cpu and memory.
    pub allocatable: Resources,
    pub requested: Resources,
    pub non_zero_requested: Resources,
    /// Allocatable pods minus the pods here, saturating: one more pod fits while this is at
    /// least 1 (the same answer as `pods + 1 > allocatable` for every count a cache can hold).
    pub pods_room: i64,
    /// The interned zone, or `NO_ZONE`.
    zone: u32,
    flags: u8,
}

const NO_ZONE: u32 = u32::MAX;
const CORDONED: u8 = 1;
const HARD_TAINTS: u8 = 2;
const PREFER_TAINTS: u8 = 4;
const HOSTNAME_LABEL: u8 = 8;

impl NodeFacts {
    fn of(info: &NodeInfo) -> Self {
        let flag = |on: bool, bit: u8| if on { bit } else { 0 };
        NodeFacts {
            allocatable: Resources { milli_cpu: info.allocatable.milli_cpu, memory: info.allocatable.memory },
            requested: info.requested,
            non_zero_requested: info.non_zero_requested,
            pods_room: info.allocatable.pods.saturating_sub(info.pod_count),
            zone: info.zone.unwrap_or(NO_ZONE),
            flags: flag(info.cordoned, CORDONED)
                | flag(info.hard_taints, HARD_TAINTS)
                | flag(info.prefer_taints, PREFER_TAINTS)
                | flag(info.has_hostname_label, HOSTNAME_LABEL),
        }
    }
    /// `spec.unschedulable`.
    pub fn cordoned(&self) -> bool {
        self.flags & CORDONED != 0
    }
    /// Whether any taint has a NoSchedule or NoExecute effect.
    pub fn hard_taints(&self) -> bool {
        self.flags & HARD_TAINTS != 0
    }
    /// Whether any taint has a PreferNoSchedule effect.
    pub fn prefer_taints(&self) -> bool {
        self.flags & PREFER_TAINTS != 0
    }
    pub fn has_hostname_label(&self) -> bool {
        self.flags & HOSTNAME_LABEL != 0
    }
    /// The interned `topology.kubernetes.io/zone` value, if the node has one.
    pub fn zone(&self) -> Option<u32> {
        (self.zone != NO_ZONE).then_some(self.zone)
    }
}

/// One node as the scheduler sees it: the node object and the sum of what its pods take.
/// The fields the filters and scores read for every node come first (`repr(C)` keeps that
/// order), so a cycle over hundreds of nodes touches as few cache lines per node as it can.
#[derive(Debug)]
#[repr(C)]
pub struct NodeInfo {
    pub allocatable: Allocatable,
    /// Requests of the pods here (bound and assumed, terminating included, terminal excluded).
    pub requested: Resources,
    pub non_zero_requested: Resources,
    pub pod_count: i64,
    /// The interned `topology.kubernetes.io/zone` value, if the node has one.
    pub zone: Option<u32>,
    /// Whether the node carries `kubernetes.io/hostname` (hostname spreading needs it).
    pub has_hostname_label: bool,
    /// `spec.unschedulable`, and whether any taint has a NoSchedule/NoExecute or a
    /// PreferNoSchedule effect: copied at each node update so that the filters and scores of a
    /// plain node never read the node object.
    pub(crate) cordoned: bool,
    pub(crate) hard_taints: bool,
    pub(crate) prefer_taints: bool,
    pub name: Rc<str>,
    node: Option<Rc<Object>>,
    /// TaintToleration's reason for each taint, formatted once per node update.
    taint_reasons: Vec<Rc<str>>,
    /// Pods here per spreading owner (interned), sorted by owner; terminating pods excluded.
    owner_counts: Vec<(u32, u32)>,
    /// The node tree zone this node is listed under, while the node object exists.
    tree_zone: Option<String>,
}

impl NodeInfo {
    fn new(name: &str) -> Self {
        NodeInfo {
            name: Rc::from(name),
            node: None,
            allocatable: Allocatable::default(),
            requested: Resources::default(),
            non_zero_requested: Resources::default(),
            pod_count: 0,
            zone: None,
            has_hostname_label: false,
            cordoned: false,
            hard_taints: false,
            prefer_taints: false,
            taint_reasons: Vec::new(),
            owner_counts: Vec::new(),
            tree_zone: None,
        }
    }
    /// The node object; `None` for a node that is gone (or not yet seen) while pods remain on it.
    pub fn node(&self) -> Option<&Node> {
        self.node.as_deref().and_then(Object::as_node)
    }
    pub fn labels(&self) -> &StringMap {
        self.node().map(|n| &*n.metadata.labels).unwrap_or(&NO_LABELS)
    }
    pub fn taints(&self) -> &[Taint] {
        self.node().map(|n| n.spec.taints.as_slice()).unwrap_or(&[])
    }
    pub fn unschedulable(&self) -> bool {
        self.node().is_some_and(|n| n.spec.unschedulable)
    }
    /// The reason text for the node's `i`th taint.
    pub fn taint_reason(&self, i: usize) -> Rc<str> {
        self.taint_reasons.get(i).cloned().unwrap_or_else(|| Rc::from(""))
    }
    /// Pods of this spreading owner on the node (not terminating).
    pub fn owner_count(&self, owner: u32) -> u32 {
        // Sorted by owner: a node in a large cluster holds pods of dozens of owners.
        self.owner_counts.binary_search_by_key(&owner, |(o, _)| *o).map_or(0, |i| self.owner_counts[i].1)
    }
}

/// Adds `sign` to the count of `key` in a list of (key, count) sorted by key; a count that
/// reaches zero leaves the list.
fn add_count(counts: &mut Vec<(u32, u32)>, key: u32, sign: i64) {
    match counts.binary_search_by_key(&key, |(k, _)| *k) {
        Ok(i) => {
            let n = (counts[i].1 as i64 + sign).max(0) as u32;
            if n == 0 {
                counts.remove(i);
            } else {
                counts[i].1 = n;
            }
        }
        Err(i) if sign > 0 => counts.insert(i, (key, sign as u32)),
        Err(_) => {}
    }
}

/// A pod the cache accounts for.
#[derive(Clone, Copy, Debug)]
struct CachedPod {
    slot: u32,
    resources: PodResources,
    /// The spreading owner it counts for, if any (none while terminating).
    spread_owner: Option<u32>,
    assumed: bool,
}

/// Upstream's `nodeTree`: zones in the order first seen, nodes per zone in the order added.
#[derive(Debug, Default)]
struct NodeTree {
    zones: Vec<String>,
    members: FastMap<String, Vec<u32>>,
    count: usize,
    order: Vec<u32>,
    dirty: bool,
}

impl NodeTree {
    fn add(&mut self, zone: &str, slot: u32) {
        if !self.members.contains_key(zone) {
            self.zones.push(zone.to_string());
        }
        self.members.entry(zone.to_string()).or_default().push(slot);
        self.count += 1;
        self.dirty = true;
    }

    fn remove(&mut self, zone: &str, slot: u32) {
        let Some(list) = self.members.get_mut(zone) else { return };
        let Some(i) = list.iter().position(|s| *s == slot) else { return };
        list.remove(i);
        self.count -= 1;
        self.dirty = true;
        if list.is_empty() {
            self.members.remove(zone);
            self.zones.retain(|z| z != zone);
        }
    }

    /// `nodeTree.list()`: the first node of every zone, then the second of every zone, ...
    fn refresh(&mut self) {
        if !self.dirty {
            return;
        }
        self.order.clear();
        let longest = self.members.values().map(Vec::len).max().unwrap_or(0);
        for i in 0..longest {
            for zone in &self.zones {
                if let Some(slot) = self.members.get(zone).and_then(|m| m.get(i)) {
                    self.order.push(*slot);
                }
            }
        }
        self.dirty = false;
    }
}

/// The zone key the node tree groups by (`utilnode.GetZoneKey`): region and zone, with the
/// deprecated beta labels as fallbacks; empty when the node has neither.
fn tree_zone_key(labels: &StringMap) -> String {
    let get = |ga: &str, beta: &str| labels.get(ga).or_else(|| labels.get(beta)).map(String::as_str).unwrap_or("");
    let (zone, region) = (get(LABEL_ZONE, LABEL_ZONE_BETA), get(LABEL_REGION, LABEL_REGION_BETA));
    if zone.is_empty() && region.is_empty() {
        String::new()
    } else {
        format!("{region}:\u{0}:{zone}")
    }
}

#[derive(Debug, Default)]
pub struct Cache {
    nodes: Vec<NodeInfo>,
    /// `NodeFacts::of` each node, by slot: what a cycle reads for every node it examines.
    facts: Vec<NodeFacts>,
    /// Node name to its slot in `nodes`; slots are never reused, so a slot names one node.
    slots: FastMap<Rc<str>, u32>,
    pods: FastMap<ObjectKey, CachedPod>,
    owners: FastMap<String, u32>,
    zones: FastMap<String, u32>,
    /// Pods per spreading owner (the index) and zone (the index within), not terminating.
    zone_counts: Vec<Vec<u32>>,
    /// Per spreading owner (the index): (node slot, pods there) sorted by slot, not
    /// terminating. The same counts as each node's, from the owner's side, so that scoring can
    /// look up a node's count in a dense table instead of searching every node's list.
    owner_nodes: Vec<Vec<(u32, u32)>>,
    tree: NodeTree,
}

impl Cache {
    pub fn new() -> Self {
        Self::default()
    }

    fn slot(&mut self, name: &str) -> u32 {
        if let Some(slot) = self.slots.get(name) {
            return *slot;
        }
        let slot = self.nodes.len() as u32;
        let info = NodeInfo::new(name);
        self.slots.insert(info.name.clone(), slot);
        self.facts.push(NodeFacts::of(&info));
        self.nodes.push(info);
        slot
    }

    /// The node in `slot`; slots come only from this cache.
    pub fn node(&self, slot: u32) -> &NodeInfo {
        &self.nodes[slot as usize]
    }
    /// What the filters and scores read of the node in `slot`.
    #[inline]
    pub fn facts(&self, slot: u32) -> &NodeFacts {
        &self.facts[slot as usize]
    }
    /// Copies a node's changed `NodeInfo` into its `NodeFacts`.
    fn refresh_facts(&mut self, slot: u32) {
        if let (Some(info), Some(facts)) = (self.nodes.get(slot as usize), self.facts.get_mut(slot as usize)) {
            *facts = NodeFacts::of(info);
        }
    }
    /// The slot of a node the cache has seen.
    pub fn slot_of(&self, name: &str) -> Option<u32> {
        self.slots.get(name).copied()
    }
    pub fn node_by_name(&self, name: &str) -> Option<&NodeInfo> {
        self.slots.get(name).map(|s| self.node(*s))
    }
    /// How many slots there are (every slot is below this).
    pub fn slot_bound(&self) -> usize {
        self.nodes.len()
    }
    /// Nodes that exist (have a Node object).
    pub fn num_nodes(&self) -> usize {
        self.tree.count
    }
    /// Brings the node order up to date after nodes came or went.
    pub fn refresh_order(&mut self) {
        self.tree.refresh();
    }
    /// The scheduling order of existing nodes, as slots (call `refresh_order` first).
    pub fn order(&self) -> &[u32] {
        &self.tree.order
    }

    pub fn owner_id(&mut self, uid: &str) -> u32 {
        if let Some(id) = self.owners.get(uid) {
            return *id;
        }
        let id = self.owners.len() as u32;
        self.owners.insert(uid.to_string(), id);
        id
    }
    fn zone_id(&mut self, zone: &str) -> u32 {
        if let Some(id) = self.zones.get(zone) {
            return *id;
        }
        let id = self.zones.len() as u32;
        self.zones.insert(zone.to_string(), id);
        id
    }
    /// How many zones have been seen (zone ids are below this).
    pub fn zone_id_bound(&self) -> usize {
        self.zones.len()
    }
    /// Pods of a spreading owner on all nodes of a zone.
    pub fn zone_count(&self, owner: u32, zone: u32) -> u32 {
        self.owner_zone_counts(owner).get(zone as usize).copied().unwrap_or(0)
    }
    /// Pods of a spreading owner per zone id (zones past the end have none).
    pub fn owner_zone_counts(&self, owner: u32) -> &[u32] {
        self.zone_counts.get(owner as usize).map_or(&[], Vec::as_slice)
    }
    /// The nodes holding pods of a spreading owner: (slot, pods), sorted by slot.
    pub fn owner_nodes(&self, owner: u32) -> &[(u32, u32)] {
        self.owner_nodes.get(owner as usize).map_or(&[], Vec::as_slice)
    }

    /// A node appeared or changed.
    pub fn set_node(&mut self, object: &Rc<Object>) {
        let Some(node) = object.as_node() else { return };
        let slot = self.slot(&node.metadata.name);
        let zone = node.metadata.labels.get(LABEL_ZONE).map(|z| self.zone_id(z));
        self.move_zone(slot, zone);
        let tree_zone = tree_zone_key(&node.metadata.labels);
        let info = &mut self.nodes[slot as usize];
        info.allocatable = node.allocatable();
        info.has_hostname_label = node.metadata.labels.contains_key(LABEL_HOSTNAME);
        info.cordoned = node.spec.unschedulable;
        info.hard_taints = node.spec.taints.iter().any(|t| t.effect == "NoSchedule" || t.effect == "NoExecute");
        info.prefer_taints = node.spec.taints.iter().any(|t| t.effect == "PreferNoSchedule");
        info.taint_reasons = node.spec.taints.iter().map(|t| Rc::from(untolerated_taint_reason(t))).collect();
        info.node = Some(object.clone());
        match info.tree_zone.replace(tree_zone.clone()) {
            None => self.tree.add(&tree_zone, slot),
            Some(old) if old != tree_zone => {
                self.tree.remove(&old, slot);
                self.tree.add(&tree_zone, slot);
            }
            Some(_) => {}
        }
        self.refresh_facts(slot);
    }

    /// A node was deleted. Its pods stay accounted on it until they go too.
    pub fn remove_node(&mut self, name: &str) {
        let Some(&slot) = self.slots.get(name) else { return };
        self.move_zone(slot, None);
        let info = &mut self.nodes[slot as usize];
        info.node = None;
        info.allocatable = Allocatable::default();
        info.has_hostname_label = false;
        info.cordoned = false;
        info.hard_taints = false;
        info.prefer_taints = false;
        info.taint_reasons.clear();
        if let Some(zone) = info.tree_zone.take() {
            self.tree.remove(&zone, slot);
        }
        self.refresh_facts(slot);
    }

    /// Moves a node's owner counts from its old zone to a new one.
    fn move_zone(&mut self, slot: u32, zone: Option<u32>) {
        let info = &mut self.nodes[slot as usize];
        if info.zone == zone {
            return;
        }
        let old = std::mem::replace(&mut info.zone, zone);
        for &(owner, n) in &info.owner_counts {
            if let Some(z) = old {
                bump(&mut self.zone_counts, owner, z, -(n as i64));
            }
            if let Some(z) = zone {
                bump(&mut self.zone_counts, owner, z, n as i64);
            }
        }
    }

    /// Accounts a pod on `node`, replacing whatever was accounted for it before (so confirming
    /// an assumed pod, or a pod bound elsewhere than assumed, both come out right).
    pub fn add_pod(&mut self, key: &ObjectKey, pod: &Pod, node: &str, assumed: bool) {
        let slot = self.slot(node);
        self.add_pod_at(key, pod, PodResources::of(pod), slot, assumed);
    }

    /// `add_pod` with the pod's resources already worked out (`PodResources::of(pod)`) and the
    /// node's slot, as a scheduling cycle has both when it assumes the pod.
    pub fn add_pod_at(&mut self, key: &ObjectKey, pod: &Pod, resources: PodResources, slot: u32, assumed: bool) {
        let spread_owner = if pod.metadata.is_deleting() { None } else { spread_owner_uid(pod).map(|uid| self.owner_id(uid)) };
        let cached = CachedPod { slot, resources, spread_owner, assumed };
        // One lookup replaces the pod: what was accounted for it goes first, as `remove_pod`.
        if let Some(before) = self.pods.insert(key.clone(), cached) {
            self.account(&before, -1);
        }
        self.account(&cached, 1);
    }

    /// Stops accounting a pod. Returns whether it was there.
    pub fn remove_pod(&mut self, key: &ObjectKey) -> bool {
        match self.pods.remove(key) {
            Some(cached) => {
                self.account(&cached, -1);
                true
            }
            None => false,
        }
    }

    /// `ForgetPod`: drops an assumption (a failed bind); a confirmed pod stays.
    pub fn forget_pod(&mut self, key: &ObjectKey) -> bool {
        if self.is_assumed(key) {
            self.remove_pod(key)
        } else {
            false
        }
    }

    pub fn is_assumed(&self, key: &ObjectKey) -> bool {
        self.pods.get(key).is_some_and(|p| p.assumed)
    }
    /// The node a pod is accounted on.
    pub fn pod_node(&self, key: &ObjectKey) -> Option<&str> {
        self.pods.get(key).map(|p| &*self.node(p.slot).name)
    }
    pub fn pod_count(&self) -> usize {
        self.pods.len()
    }

    fn account(&mut self, pod: &CachedPod, sign: i64) {
        let info = &mut self.nodes[pod.slot as usize];
        info.requested = info.requested.scaled_add(pod.resources.requested, sign);
        info.non_zero_requested = info.non_zero_requested.scaled_add(pod.resources.non_zero, sign);
        info.pod_count += sign;
        if let Some(owner) = pod.spread_owner {
            add_count(&mut info.owner_counts, owner, sign);
            if let Some(zone) = info.zone {
                bump(&mut self.zone_counts, owner, zone, sign);
            }
            let o = owner as usize;
            if self.owner_nodes.len() <= o {
                self.owner_nodes.resize_with(o + 1, Vec::new);
            }
            add_count(&mut self.owner_nodes[o], pod.slot, sign);
        }
        self.refresh_facts(pod.slot);
    }
}

/// Adds `delta` to the pods of `owner` in `zone`, never below zero.
fn bump(counts: &mut Vec<Vec<u32>>, owner: u32, zone: u32, delta: i64) {
    let (o, z) = (owner as usize, zone as usize);
    if counts.len() <= o {
        counts.resize_with(o + 1, Vec::new);
    }
    let zones = &mut counts[o];
    if zones.len() <= z {
        zones.resize(z + 1, 0);
    }
    zones[z] = (zones[z] as i64 + delta).max(0) as u32;
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Container, Kind, NodeStatus, ObjectMeta, OwnerReference, Quantity, ResourceRequirements};

    fn node(name: &str, zone: &str) -> Rc<Object> {
        let mut n =
            Node { metadata: ObjectMeta { name: name.into(), ..Default::default() }, status: NodeStatus::default(), ..Default::default() };
        if !zone.is_empty() {
            n.metadata.labels.insert(LABEL_ZONE.into(), zone.into());
        }
        for (k, v) in [("cpu", "4"), ("memory", "8Gi"), ("pods", "110")] {
            n.status.allocatable.insert(k.into(), Quantity::new(v));
        }
        Rc::new(Object::Node(n))
    }

    fn pod(name: &str, cpu: Option<&str>, owner: &str) -> (ObjectKey, Pod) {
        let mut requests = std::collections::BTreeMap::new();
        if let Some(cpu) = cpu {
            requests.insert("cpu".to_string(), Quantity::new(cpu));
        }
        let mut p = Pod::default();
        p.metadata.name = name.into();
        p.metadata.namespace = "default".into();
        p.spec.containers = vec![Container {
            name: "c".into(),
            image: "nginx".into(),
            resources: ResourceRequirements { requests, ..Default::default() },
            ..Default::default()
        }]
        .into();
        if !owner.is_empty() {
            p.metadata.owner_references = vec![OwnerReference {
                kind: "ReplicaSet".into(),
                name: "rs".into(),
                uid: owner.into(),
                controller: Some(true),
                ..Default::default()
            }]
            .into();
        }
        (ObjectKey::new(Kind::Pod, "default", name), p)
    }

    /// The cache's invariant that a node's `NodeFacts` line always equals what its `NodeInfo`
    /// would answer, checked for every slot.
    fn assert_facts_current(cache: &Cache) {
        for (slot, info) in cache.nodes.iter().enumerate() {
            assert_eq!(cache.facts(slot as u32), &NodeFacts::of(info), "facts of {}", info.name);
        }
    }

    #[test]
    fn node_order_interleaves_zones_like_the_node_tree() {
        let mut cache = Cache::new();
        for (name, zone) in [("a1", "a"), ("a2", "a"), ("a3", "a"), ("b1", "b"), ("c1", "c"), ("b2", "b")] {
            cache.set_node(&node(name, zone));
        }
        cache.refresh_order();
        let names: Vec<&str> = cache.order().iter().map(|s| &*cache.node(*s).name).collect();
        assert_eq!(names, ["a1", "b1", "c1", "a2", "b2", "a3"]);
        cache.remove_node("b1");
        cache.refresh_order();
        let names: Vec<&str> = cache.order().iter().map(|s| &*cache.node(*s).name).collect();
        assert_eq!(names, ["a1", "b2", "c1", "a2", "a3"]);
        assert_eq!(cache.num_nodes(), 5);
        assert_facts_current(&cache);
    }

    #[test]
    fn pods_are_accounted_with_non_zero_defaults_for_scoring() {
        let mut cache = Cache::new();
        cache.set_node(&node("n1", "a"));
        let (k1, p1) = pod("p1", Some("500m"), "");
        let (k2, p2) = pod("p2", None, "");
        cache.add_pod(&k1, &p1, "n1", false);
        cache.add_pod(&k2, &p2, "n1", true);
        let n1 = cache.node_by_name("n1").expect("node");
        assert_eq!(n1.requested, Resources { milli_cpu: 500, memory: 0 });
        assert_eq!(n1.non_zero_requested, Resources { milli_cpu: 600, memory: 2 * DEFAULT_MEMORY_REQUEST });
        assert_eq!(n1.pod_count, 2);
        assert!(cache.forget_pod(&k2));
        assert!(!cache.forget_pod(&k1), "a confirmed pod is not forgotten");
        assert_eq!(cache.node_by_name("n1").map(|n| (n.pod_count, n.non_zero_requested.milli_cpu)), Some((1, 500)));
        assert_facts_current(&cache);
    }

    #[test]
    fn spreading_counts_follow_pods_and_zone_relabels() {
        let mut cache = Cache::new();
        cache.set_node(&node("n1", "a"));
        cache.set_node(&node("n2", "a"));
        let owner = cache.owner_id("rs-uid");
        for (i, n) in ["n1", "n1", "n2"].into_iter().enumerate() {
            let (k, p) = pod(&format!("p{i}"), None, "rs-uid");
            cache.add_pod(&k, &p, n, false);
        }
        let za = cache.zones.get("a").copied().expect("zone a");
        assert_eq!((cache.node_by_name("n1").map(|n| n.owner_count(owner)), cache.zone_count(owner, za)), (Some(2), 3));
        cache.set_node(&node("n1", "b"));
        let zb = cache.zones.get("b").copied().expect("zone b");
        assert_eq!((cache.zone_count(owner, za), cache.zone_count(owner, zb)), (1, 2));
        cache.remove_pod(&ObjectKey::new(Kind::Pod, "default", "p0"));
        assert_eq!(cache.zone_count(owner, zb), 1);
        cache.remove_node("n1");
        assert_eq!(cache.zone_count(owner, zb), 0, "a deleted node's pods leave the zone counts");
        // A terminating pod keeps its requests but no longer counts for spreading.
        let (k, mut p) = pod("p9", Some("1"), "rs-uid");
        p.metadata.deletion_timestamp = Some(crate::model::Time(1));
        cache.add_pod(&k, &p, "n2", false);
        let n2 = cache.node_by_name("n2").expect("n2");
        assert_eq!((n2.owner_count(owner), n2.requested.milli_cpu, n2.pod_count), (1, 1000, 2));
        assert_facts_current(&cache);
    }

    #[test]
    fn a_pod_seen_before_its_node_is_kept_on_a_placeholder() {
        let mut cache = Cache::new();
        let (k, p) = pod("early", Some("1"), "");
        cache.add_pod(&k, &p, "late", false);
        assert_eq!(cache.num_nodes(), 0);
        cache.set_node(&node("late", ""));
        cache.refresh_order();
        assert_eq!(cache.order().len(), 1);
        assert_eq!(cache.node_by_name("late").map(|n| (n.requested.milli_cpu, n.allocatable.milli_cpu)), Some((1000, 4000)));
        assert_facts_current(&cache);
    }
}
