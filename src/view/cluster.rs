//! The cluster view: every node as a box with cpu, memory and pod-count bars and its pods inside,
//! and the pods no node has yet, waiting outside until the scheduler binds them.
//!
//! A pod shows what `kubectl get pods` shows — STATUS computed by kubectl's own rules
//! ([`printers::pod_status`]), READY, RESTARTS — plus its owner and node. A node's "used" is the
//! sum of the requests of the non-terminal pods bound to it, which is what the scheduler's
//! NodeResourcesFit filter compares with allocatable (and what `kubectl describe node` shows as
//! "Allocated resources").
//!
//! [`ClusterTracker`] keeps this up to date from etcd's change log, and rebuilds only the boxes
//! of nodes whose pods or status changed; unchanged boxes keep their `Rc`, so the page's diff
//! of an unchanged node is one pointer comparison.

use super::Cursor;
use crate::command::printers;
use crate::model::{Kind, Node, Object, Pod, Quantity};
use crate::sim::Sim;
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};
use std::rc::Rc;

/// One pod as the page shows it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PodView {
    pub namespace: String,
    pub name: String,
    /// `spec.nodeName`; empty while unscheduled.
    pub node: String,
    /// `status.phase`.
    pub phase: String,
    /// kubectl's STATUS column.
    pub status: String,
    /// kubectl's READY column (`1/1`).
    pub ready: String,
    /// The Ready condition is True.
    pub is_ready: bool,
    pub restarts: i32,
    /// The controller owner as `Kind/name`, empty for a bare pod.
    pub owner: String,
    /// Creation time (ms), to keep a node's pods in the order they came.
    pub created: u64,
    /// Requests: millicores and bytes.
    pub cpu_milli: i64,
    pub memory: i64,
    /// Succeeded or Failed: holds no resources on its node.
    pub terminal: bool,
}

impl PodView {
    pub fn of(pod: &Pod) -> PodView {
        let (cpu_milli, memory) = pod.requests();
        PodView {
            namespace: pod.metadata.namespace.to_string(),
            name: pod.metadata.name.to_string(),
            node: pod.node_name().unwrap_or_default().to_string(),
            phase: pod.phase().as_str().to_string(),
            status: printers::pod_status(pod),
            ready: printers::pod_ready(pod),
            is_ready: pod.is_ready(),
            restarts: pod.restarts(),
            owner: pod.metadata.controller_ref().map(|r| format!("{}/{}", r.kind, r.name)).unwrap_or_default(),
            created: pod.metadata.creation_timestamp.map(|t| t.0).unwrap_or_default(),
            cpu_milli,
            memory,
            terminal: pod.is_terminal(),
        }
    }

    /// `namespace/name`, the pod's identity on the page.
    pub fn key(&self) -> String {
        format!("{}/{}", self.namespace, self.name)
    }

    /// Whether `key` (`namespace/name`) names this pod, without building the key.
    pub fn is_key(&self, key: &str) -> bool {
        key.split_once('/') == Some((self.namespace.as_str(), self.name.as_str()))
    }

    /// The part of a generated name that tells replicas apart (`web-7d9f6c5b4-x2kqp` → `x2kqp`),
    /// or the whole name when it was not generated.
    pub fn short_name(&self) -> &str {
        pod_suffix(&self.name)
    }

    /// A short CSS-friendly class for the STATUS: `running`, `pending`, `creating`,
    /// `terminating`, `failed`, `succeeded`.
    pub fn tone(&self) -> &'static str {
        match self.status.as_str() {
            "Running" if self.is_ready => "running",
            "Running" | "NotReady" => "starting",
            "Pending" | "SchedulingGated" => "pending",
            "ContainerCreating" | "PodInitializing" => "creating",
            "Terminating" => "terminating",
            "Completed" | "Succeeded" => "succeeded",
            _ => "failed",
        }
    }
}

/// Used out of capacity, in the resource's base unit (millicores, bytes, pods).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Usage {
    pub used: i64,
    pub capacity: i64,
}

impl Usage {
    /// Whole percent, 0 to 100 (over-commitment shows as full).
    pub fn percent(&self) -> u32 {
        if self.capacity <= 0 {
            return if self.used > 0 { 100 } else { 0 };
        }
        ((self.used.max(0) as i128 * 100 / self.capacity as i128).min(100)) as u32
    }
}

/// One node box.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct NodeView {
    pub name: String,
    /// The Ready condition's status: `True`, `False` or `Unknown` (also when never reported).
    pub ready: String,
    /// kubectl's STATUS column (`Ready`, `NotReady`, `Ready,SchedulingDisabled`).
    pub status: String,
    pub zone: String,
    pub cpu: Usage,
    pub memory: Usage,
    pub pods_used: Usage,
    /// Its pods, oldest first.
    pub pods: Vec<PodView>,
    /// False for a name that pods are bound to but no Node object has (deleted or not yet
    /// registered).
    pub registered: bool,
}

impl NodeView {
    /// `cpu 300m/4`, `memory 384Mi/8Gi`, `pods 3/110`: the bars' labels.
    pub fn cpu_label(&self) -> String {
        format!("{}/{}", crate::model::format_millicores(self.cpu.used), crate::model::format_millicores(self.cpu.capacity))
    }
    pub fn memory_label(&self) -> String {
        format!("{}/{}", crate::model::format_bytes(self.memory.used), crate::model::format_bytes(self.memory.capacity))
    }
    pub fn pods_label(&self) -> String {
        format!("{}/{}", self.pods_used.used, self.pods_used.capacity)
    }
}

/// What a node contributes apart from its pods.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
struct NodeFacts {
    ready: String,
    status: String,
    zone: String,
    cpu: i64,
    memory: i64,
    pods: i64,
}

impl NodeFacts {
    fn of(node: &Node) -> NodeFacts {
        let alloc = |name: &str, milli: bool| {
            let q: Option<&Quantity> = node.status.allocatable.get(name).or_else(|| node.status.capacity.get(name));
            q.and_then(|q| if milli { q.milli_value() } else { q.value() }).unwrap_or(0)
        };
        NodeFacts {
            ready: node.condition("Ready").map(|c| c.status.clone()).unwrap_or_else(|| "Unknown".into()),
            status: printers::node_status(node),
            zone: node.metadata.labels.get("topology.kubernetes.io/zone").cloned().unwrap_or_default(),
            cpu: alloc("cpu", true),
            memory: alloc("memory", false),
            pods: alloc("pods", false),
        }
    }
}

/// The whole picture at one moment.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct ClusterView {
    /// By name.
    pub nodes: Vec<Rc<NodeView>>,
    /// Pods with no node yet, oldest first.
    pub unscheduled: Rc<Vec<PodView>>,
    pub pod_count: usize,
}

impl ClusterView {
    /// A pod anywhere in the picture.
    pub fn pod(&self, namespace: &str, name: &str) -> Option<&PodView> {
        let is = |p: &&PodView| p.namespace == namespace && p.name == name;
        self.unscheduled.iter().find(is).or_else(|| self.nodes.iter().find_map(|n| n.pods.iter().find(is)))
    }
}

/// Order of pods in a box: oldest first, then by key. The middle number is always 0: the slot
/// has the event log's key type (`view::events`), so the page carries one B-tree for both.
type PodSlot = (u64, u64, String);

/// Keeps a [`ClusterView`] in step with a simulation. See the module documentation.
#[derive(Debug, Default)]
pub struct ClusterTracker {
    cursor: Cursor,
    // Values boxed: every map from a name to one pointer shares its B-tree code in the wasm.
    pods: BTreeMap<String, Box<PodView>>,
    nodes: BTreeMap<String, Box<NodeFacts>>,
    /// Pod slots per node name; "" holds the unscheduled.
    placed: BTreeMap<String, BTreeSet<PodSlot>>,
    dirty: BTreeSet<String>,
    view: ClusterView,
    built: BTreeMap<String, Rc<NodeView>>,
    /// Most node boxes rebuilt per update; the rest wait for the next (0: no limit).
    max_boxes: usize,
    /// The last box rebuilt under a limit, so the next update starts after it (round robin).
    last_box: String,
}

impl ClusterTracker {
    pub fn new() -> Self {
        Self::default()
    }

    /// The current picture (as of the last [`update`](Self::update)).
    pub fn view(&self) -> &ClusterView {
        &self.view
    }

    /// Forgets everything; the next update rebuilds from a full list.
    pub fn reset(&mut self) {
        let max_boxes = self.max_boxes;
        *self = Self::default();
        self.max_boxes = max_boxes;
    }

    /// Rebuilds at most `n` node boxes per update (0: all), taking turns, so a large cluster in
    /// which every node changes spreads its redrawing over several frames instead of one.
    pub fn set_max_boxes_per_update(&mut self, n: usize) {
        self.max_boxes = n;
    }

    /// Node boxes whose change is not drawn yet (waiting under the limit).
    pub fn pending_boxes(&self) -> usize {
        self.dirty.iter().filter(|n| !n.is_empty()).count()
    }

    /// Catches up with `sim`. Returns whether the picture changed.
    pub fn update(&mut self, sim: &Sim) -> bool {
        let api = sim.api();
        if !self.cursor.continues(sim) {
            self.rebuild(sim);
        } else if api.revision() != self.cursor.revision {
            match api.changes_since(self.cursor.revision) {
                Ok(changes) => {
                    for change in changes {
                        let gone = change.type_ == crate::store::ChangeType::Deleted;
                        self.apply(&change.object, gone);
                    }
                }
                Err(_) => self.rebuild(sim),
            }
        }
        self.cursor = Cursor::at(sim);
        self.refresh()
    }

    fn rebuild(&mut self, sim: &Sim) {
        let old = std::mem::take(&mut self.built);
        self.reset();
        // Keep the boxes that come out the same, so the page need not redraw them.
        self.built = old;
        self.dirty.extend(self.built.keys().cloned());
        self.dirty.insert(String::new());
        for node in sim.objects(Kind::Node) {
            self.apply(node, false);
        }
        for pod in sim.objects(Kind::Pod) {
            self.apply(pod, false);
        }
    }

    /// Applies one stored object (or its deletion).
    fn apply(&mut self, object: &Object, gone: bool) {
        match object {
            Object::Pod(pod) => self.apply_pod(pod, gone),
            Object::Node(node) => {
                let name = node.metadata.name.to_string();
                if gone {
                    self.nodes.remove(&name);
                } else {
                    let facts = NodeFacts::of(node);
                    if self.nodes.get(&name).is_some_and(|old| **old == facts) {
                        return;
                    }
                    self.nodes.insert(name.clone(), Box::new(facts));
                }
                self.dirty.insert(name);
            }
            _ => {}
        }
    }

    fn apply_pod(&mut self, pod: &Pod, gone: bool) {
        let key = format!("{}/{}", pod.metadata.namespace, pod.metadata.name);
        let new = (!gone).then(|| PodView::of(pod));
        let old = self.pods.get(&key).map(|old| &**old);
        if old == new.as_ref() {
            return;
        }
        if let Some(old) = self.pods.remove(&key) {
            self.unplace(&old.node, &(old.created, 0, key.clone()));
        }
        if let Some(new) = new {
            let slot = (new.created, 0, key.clone());
            self.dirty.insert(new.node.clone());
            self.placed.entry(new.node.clone()).or_default().insert(slot);
            self.pods.insert(key, Box::new(new));
        }
    }

    fn unplace(&mut self, node: &str, slot: &PodSlot) {
        self.dirty.insert(node.to_string());
        if let Some(set) = self.placed.get_mut(node) {
            set.remove(slot);
            if set.is_empty() {
                self.placed.remove(node);
            }
        }
    }

    /// The dirty boxes to rebuild now: all, or under a limit the next few after the last one
    /// rebuilt (wrapping round), and always the unscheduled pods.
    fn due(&mut self) -> Vec<String> {
        if self.max_boxes == 0 || self.pending_boxes() <= self.max_boxes {
            return std::mem::take(&mut self.dirty).into_iter().collect();
        }
        let after = self.dirty.range::<String, _>((std::ops::Bound::Excluded(&self.last_box), std::ops::Bound::Unbounded));
        let mut due: Vec<String> = after.chain(self.dirty.iter()).filter(|n| !n.is_empty()).take(self.max_boxes).cloned().collect();
        due.dedup();
        if let Some(last) = due.last() {
            self.last_box = last.clone();
        }
        if self.dirty.contains("") {
            due.push(String::new());
        }
        for name in &due {
            self.dirty.remove(name);
        }
        due
    }

    /// Rebuilds the boxes marked dirty (or some of them, under a limit). Returns whether any
    /// came out different.
    fn refresh(&mut self) -> bool {
        if self.dirty.is_empty() {
            return false;
        }
        let mut changed = false;
        for name in self.due() {
            if name.is_empty() {
                let pods: Vec<PodView> = self.pods_on("").cloned().collect();
                if *self.view.unscheduled != pods {
                    self.view.unscheduled = Rc::new(pods);
                    changed = true;
                }
                continue;
            }
            match self.build_node(&name) {
                Some(node) => {
                    if self.built.get(&name).is_none_or(|old| **old != node) {
                        self.built.insert(name, Rc::new(node));
                        changed = true;
                    }
                }
                None => changed |= self.built.remove(&name).is_some(),
            }
        }
        if changed {
            self.view.nodes = self.built.values().cloned().collect();
            // Boxes read in the order a person counts (node-2 before node-10), not key order.
            crate::sort::sort_by(&mut self.view.nodes, |a, b| crate::sort::natural_cmp(&a.name, &b.name));
        }
        self.view.pod_count = self.pods.len();
        changed
    }

    fn pods_on<'a>(&'a self, node: &str) -> impl Iterator<Item = &'a PodView> + 'a {
        self.placed.get(node).into_iter().flatten().filter_map(|(_, _, key)| self.pods.get(key).map(|p| &**p))
    }

    /// The box of `name`, or None when no node object exists and no pod is bound to it.
    fn build_node(&self, name: &str) -> Option<NodeView> {
        let facts = self.nodes.get(name);
        let pods: Vec<PodView> = self.pods_on(name).cloned().collect();
        if facts.is_none() && pods.is_empty() {
            return None;
        }
        let facts = facts.map(|f| (**f).clone()).unwrap_or_else(|| NodeFacts {
            ready: "Unknown".into(),
            status: "Unknown".into(),
            ..Default::default()
        });
        let holding = pods.iter().filter(|p| !p.terminal);
        let (cpu, memory, count) = holding.fold((0, 0, 0), |(c, m, n), p| (c + p.cpu_milli, m + p.memory, n + 1));
        Some(NodeView {
            name: name.to_string(),
            ready: facts.ready,
            status: facts.status,
            zone: facts.zone,
            cpu: Usage { used: cpu, capacity: facts.cpu },
            memory: Usage { used: memory, capacity: facts.memory },
            pods_used: Usage { used: count, capacity: facts.pods },
            pods,
            registered: self.nodes.contains_key(name),
        })
    }
}

/// A pod name's random suffix (`web-…-x7k2p` → `x7k2p`), or the whole name when it has none:
/// how the stage names a pod where room is short.
pub fn pod_suffix(name: &str) -> &str {
    match name.rsplit_once('-') {
        Some((_, suffix)) if suffix.len() == 5 => suffix,
        _ => name,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::command::{Scenario, Session};
    use crate::model::Duration;

    fn settled_default() -> Session {
        let mut s = Session::new(Scenario::builtin("default").unwrap(), Some(1)).unwrap();
        s.settle(Duration::mins(2)).unwrap();
        s
    }

    #[test]
    fn a_pod_is_named_on_the_page_by_its_key_and_its_generated_suffix() {
        let mut tracker = ClusterTracker::new();
        tracker.update(settled_default().sim());
        let mut p = tracker.view().nodes[0].pods[0].clone();
        p.name = "web-7d9f6c5b4-x2kqp".into();
        assert_eq!(p.short_name(), "x2kqp");
        assert!(p.is_key("default/web-7d9f6c5b4-x2kqp") && p.is_key(&p.key()));
        assert!(!p.is_key("other/web-7d9f6c5b4-x2kqp") && !p.is_key("web-7d9f6c5b4-x2kqp"));
        p.name = "standalone".into();
        assert_eq!(p.short_name(), "standalone", "not generated: the whole name");
        p.name = "my-app".into();
        assert_eq!(p.short_name(), "my-app", "a suffix that is not five letters is part of the name");
    }

    #[test]
    fn node_boxes_read_in_counting_order_not_text_order() {
        let mut s = settled_default();
        for node in ["node-10", "node-3", "node-100"] {
            assert!(s.execute(&format!("sim node add {node}")).ok);
        }
        s.settle(Duration::mins(1)).unwrap();
        let mut t = ClusterTracker::new();
        t.update(s.sim());
        let names: Vec<&str> = t.view().nodes.iter().map(|n| n.name.as_str()).collect();
        assert_eq!(names, ["node-1", "node-2", "node-3", "node-10", "node-100"]);
    }

    #[test]
    fn the_default_cluster_shows_three_running_pods_on_two_ready_nodes() {
        let s = settled_default();
        let mut t = ClusterTracker::new();
        assert!(t.update(s.sim()));
        let v = t.view();
        let names: Vec<&str> = v.nodes.iter().map(|n| n.name.as_str()).collect();
        assert_eq!(names, ["node-1", "node-2"]);
        assert!(v.nodes.iter().all(|n| n.ready == "True" && n.status == "Ready" && n.registered));
        assert_eq!(v.pod_count, 3);
        assert!(v.unscheduled.is_empty());
        let pods: Vec<&PodView> = v.nodes.iter().flat_map(|n| n.pods.iter()).collect();
        assert_eq!(pods.len(), 3);
        for p in &pods {
            assert_eq!((p.status.as_str(), p.ready.as_str(), p.is_ready, p.phase.as_str()), ("Running", "1/1", true, "Running"));
            assert!(p.owner.starts_with("ReplicaSet/web-"), "{}", p.owner);
            assert_eq!(p.tone(), "running");
        }
        // Each pod asks for 100m and 128Mi; a default node has 4 cores, 8Gi and room for 110 pods.
        let used: i64 = v.nodes.iter().map(|n| n.cpu.used).sum();
        assert_eq!(used, 300);
        let n1 = &v.nodes[0];
        assert_eq!(n1.cpu.capacity, 4000);
        assert_eq!(n1.memory.capacity, 8 * 1024 * 1024 * 1024);
        assert_eq!(n1.pods_used.capacity, 110);
        assert_eq!(n1.pods_used.used, n1.pods.len() as i64);
        assert_eq!(n1.cpu_label(), format!("{}m/4", 100 * n1.pods.len()));
        assert_eq!(v.nodes[0].zone, "zone-a");
    }

    #[test]
    fn nothing_changed_means_no_update_and_the_same_boxes() {
        let mut s = settled_default();
        let mut t = ClusterTracker::new();
        t.update(s.sim());
        let before: Vec<Rc<NodeView>> = t.view().nodes.clone();
        assert!(!t.update(s.sim()), "no revision change, no update");
        // Lease renewals and node heartbeats write to etcd, but the picture stays the same.
        s.advance(Duration::secs(20));
        let _ = t.update(s.sim());
        assert!(t.view().nodes.iter().zip(&before).all(|(a, b)| Rc::ptr_eq(a, b)), "unchanged boxes keep their Rc");
    }

    #[test]
    fn a_killed_pod_turns_terminating_and_its_replacement_waits_outside_then_moves_in() {
        let mut s = settled_default();
        let mut t = ClusterTracker::new();
        t.update(s.sim());
        let victim = t.view().nodes[0].pods[0].name.clone();
        let untouched = t.view().nodes[1].clone();
        let out = s.execute(&format!("kubectl delete pod {victim}"));
        assert!(out.ok, "{out:?}");
        assert!(t.update(s.sim()));
        let killed = t.view().pod("default", &victim).expect("still there while terminating");
        assert_eq!(killed.status, "Terminating");
        assert!(Rc::ptr_eq(&t.view().nodes[1], &untouched), "the other node's box is reused");
        // The ReplicaSet controller creates the replacement at once; for a moment it has no node.
        let mut saw_unscheduled = false;
        for _ in 0..400 {
            s.advance(Duration::millis(1));
            t.update(s.sim());
            if t.view().unscheduled.iter().any(|p| p.owner.starts_with("ReplicaSet/") && p.node.is_empty()) {
                saw_unscheduled = true;
                break;
            }
        }
        assert!(saw_unscheduled, "the replacement appears outside every node first");
        s.settle(Duration::mins(2)).unwrap();
        t.update(s.sim());
        let v = t.view();
        assert!(v.unscheduled.is_empty());
        assert!(v.pod("default", &victim).is_none(), "the killed pod is gone");
        let running = v.nodes.iter().flat_map(|n| &n.pods).filter(|p| p.status == "Running").count();
        assert_eq!(running, 3);
    }

    #[test]
    fn a_full_rebuild_gives_what_the_increments_gave() {
        let mut s = settled_default();
        let mut inc = ClusterTracker::new();
        inc.update(s.sim());
        s.execute("kubectl scale deployment web --replicas=7");
        for _ in 0..30 {
            s.advance(Duration::millis(50));
            inc.update(s.sim());
        }
        let mut fresh = ClusterTracker::new();
        fresh.update(s.sim());
        assert_eq!(inc.view(), fresh.view());
        assert_eq!(inc.view().pod_count, 7);
    }

    #[test]
    fn a_reseeded_session_is_noticed_and_rebuilt() {
        let mut s = settled_default();
        let mut t = ClusterTracker::new();
        s.execute("kubectl scale deployment web --replicas=5");
        s.settle(Duration::mins(2)).unwrap();
        t.update(s.sim());
        assert_eq!(t.view().pod_count, 5);
        assert!(s.execute("sim seed 1").ok);
        t.update(s.sim());
        assert_eq!(t.view().pod_count, 0, "time zero of a fresh run: nothing applied yet but the Deployment");
        assert!(t.view().nodes.is_empty(), "no kubelet has registered yet");
    }

    #[test]
    fn under_a_limit_boxes_are_redrawn_in_turns_and_all_arrive() {
        let mut s = Session::new(Scenario::builtin("default").unwrap(), Some(1)).unwrap();
        for i in 3..=6 {
            assert!(s.execute(&format!("sim node add node-{i}")).ok);
        }
        s.settle(Duration::mins(2)).unwrap();
        let mut limited = ClusterTracker::new();
        limited.set_max_boxes_per_update(2);
        assert!(limited.update(s.sim()));
        assert_eq!(limited.view().nodes.len(), 2, "six nodes, two boxes per update");
        assert_eq!(limited.pending_boxes(), 4);
        let mut updates = 1;
        while limited.pending_boxes() > 0 {
            limited.update(s.sim());
            updates += 1;
        }
        assert_eq!(updates, 3);
        let mut full = ClusterTracker::new();
        full.update(s.sim());
        assert_eq!(limited.view(), full.view(), "in the end the limited view is the whole picture");
        // Turns go round: with every node dirty, each update takes the next two after the last.
        assert!(s.execute("kubectl scale deployment web --replicas=30").ok);
        s.settle(Duration::mins(2)).unwrap();
        let mut seen = Vec::new();
        limited.update(s.sim());
        seen.push(limited.last_box.clone());
        limited.update(s.sim());
        seen.push(limited.last_box.clone());
        assert_ne!(seen[0], seen[1]);
    }

    #[test]
    fn usage_percent_is_clamped_and_safe() {
        assert_eq!(Usage { used: 300, capacity: 4000 }.percent(), 7);
        assert_eq!(Usage { used: 5000, capacity: 4000 }.percent(), 100);
        assert_eq!(Usage { used: 0, capacity: 0 }.percent(), 0);
        assert_eq!(Usage { used: 1, capacity: 0 }.percent(), 100);
        assert_eq!(Usage { used: i64::MAX, capacity: 1 }.percent(), 100);
    }
}
