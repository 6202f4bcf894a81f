//! Every scheduling decision with its explanation, for the page: which nodes were looked at,
//! which filter turned each one away and why, each plugin's score on the nodes that passed, and
//! the node chosen. Only the most recent decisions are kept (the last one per pod, for a bounded
//! number of pods), so memory stays flat however long the simulation runs.
//!
//! A cycle in a large cluster examines hundreds of nodes, and the page looks at a handful of
//! decisions, so a cycle keeps a compact `Record` (each node as its cache slot and an 8-byte
//! verdict) and the page's `Decision`, with node names, is built from it the first time it is
//! asked for.

use super::cache::FastMap;
use super::plugins::{FilterFailure, Plugin, MAX_NODE_SCORE};
use crate::model::{ObjectKey, Time};
use std::cell::OnceCell;
use std::collections::VecDeque;
use std::rc::Rc;

/// Each score plugin's normalised score (0–100) on one node, and the weighted total.
/// A plugin that skipped the pod (its PreScore returned Skip) has no score and adds nothing.
/// Stored compactly: a decision keeps one of these for each of up to hundreds of nodes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct NodeScores {
    /// In `Plugin::SCORING` order; −1 for a skipped plugin.
    scores: [i8; 5],
    pub total: i64,
}

impl NodeScores {
    /// From each score plugin's normalised score, in `Plugin::SCORING` order. Written out per
    /// plugin: a cycle builds one of these for each of hundreds of nodes, and the iterator form
    /// compiled to a loop through memory.
    pub fn new(scores: [Option<i64>; 5]) -> Self {
        let mut out = NodeScores { scores: [-1; 5], total: 0 };
        let [a, b, c, d, e] = scores;
        out.put(0, a);
        out.put(1, b);
        out.put(2, c);
        out.put(3, d);
        out.put(4, e);
        out
    }
    /// The weights of `Plugin::SCORING`, in order.
    const WEIGHTS: [i64; 5] = [3, 2, 1, 2, 1];
    fn put(&mut self, i: usize, score: Option<i64>) {
        if let Some(score) = score {
            let score = score.clamp(0, MAX_NODE_SCORE);
            self.scores[i] = score as i8;
            self.total += score * Self::WEIGHTS[i];
        }
    }
    pub fn get(&self, plugin: Plugin) -> Option<i64> {
        Plugin::SCORING.iter().position(|p| *p == plugin).and_then(|i| Self::unpack(self.scores[i]))
    }
    fn unpack(score: i8) -> Option<i64> {
        (score >= 0).then_some(score as i64)
    }
    /// (plugin, normalised score) in the profile's order.
    pub fn iter(&self) -> impl Iterator<Item = (Plugin, Option<i64>)> + '_ {
        Plugin::SCORING.iter().copied().zip(self.scores.iter().map(|s| Self::unpack(*s)))
    }
}

#[derive(Clone, Debug, PartialEq)]
pub enum Verdict {
    /// A filter rejected the node.
    Rejected(FilterFailure),
    /// The node passed every filter. No scores when it was the only feasible node (upstream
    /// skips scoring then).
    Feasible(Option<NodeScores>),
}

#[derive(Clone, Debug, PartialEq)]
pub struct NodeVerdict {
    pub node: Rc<str>,
    pub verdict: Verdict,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Decision {
    pub pod: ObjectKey,
    pub at: Time,
    /// The pod's scheduling attempt this was (1 for the first).
    pub attempt: u32,
    pub nodes_in_cluster: usize,
    /// `numFeasibleNodesToFind`: the search stopped once this many nodes passed.
    pub feasible_wanted: usize,
    /// The nodes examined, in the order the search met them.
    pub nodes: Vec<NodeVerdict>,
    pub chosen: Option<Rc<str>>,
    /// Why it failed (the FailedScheduling message), empty when a node was chosen.
    pub message: String,
}

impl Decision {
    pub fn verdict(&self, node: &str) -> Option<&Verdict> {
        self.nodes.iter().find(|v| &*v.node == node).map(|v| &v.verdict)
    }
    pub fn feasible_count(&self) -> usize {
        self.nodes.iter().filter(|v| matches!(v.verdict, Verdict::Feasible(_))).count()
    }
    pub fn rejections(&self) -> impl Iterator<Item = &FilterFailure> + '_ {
        self.nodes.iter().filter_map(|v| match &v.verdict {
            Verdict::Rejected(f) => Some(f),
            Verdict::Feasible(_) => None,
        })
    }
    /// The chosen node's weighted total, if scoring ran.
    pub fn chosen_score(&self) -> Option<i64> {
        let chosen = self.chosen.as_deref()?;
        match self.verdict(chosen)? {
            Verdict::Feasible(Some(s)) => Some(s.total),
            _ => None,
        }
    }
}

/// One node's verdict, packed: a filter failure (a taint's reason as an index into the
/// record's reasons), or feasible with its normalised scores (−1 for a skipped plugin).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Packed {
    Unschedulable,
    NodeName,
    Taint(u32),
    NodeAffinity,
    Insufficient {
        pods: bool,
        cpu: bool,
        memory: bool,
    },
    /// Feasible, not scored (the only feasible node).
    Feasible,
    Scored([i8; 5]),
}

impl Packed {
    /// Packs a filter failure, keeping a taint's reason in `reasons`.
    pub fn rejected(failure: FilterFailure, reasons: &mut Vec<Rc<str>>) -> Packed {
        match failure {
            FilterFailure::Unschedulable => Packed::Unschedulable,
            FilterFailure::NodeName => Packed::NodeName,
            FilterFailure::UntoleratedTaint(reason) => {
                reasons.push(reason);
                Packed::Taint(reasons.len() as u32 - 1)
            }
            FilterFailure::NodeAffinity => Packed::NodeAffinity,
            FilterFailure::Insufficient { pods, cpu, memory } => Packed::Insufficient { pods, cpu, memory },
        }
    }
    pub fn scored(scores: &NodeScores) -> Packed {
        Packed::Scored(scores.scores)
    }
    /// The filter failure, if the node was rejected.
    pub fn failure(self, reasons: &[Rc<str>]) -> Option<FilterFailure> {
        Some(match self {
            Packed::Unschedulable => FilterFailure::Unschedulable,
            Packed::NodeName => FilterFailure::NodeName,
            Packed::Taint(i) => FilterFailure::UntoleratedTaint(reasons.get(i as usize).cloned().unwrap_or_else(|| Rc::from(""))),
            Packed::NodeAffinity => FilterFailure::NodeAffinity,
            Packed::Insufficient { pods, cpu, memory } => FilterFailure::Insufficient { pods, cpu, memory },
            Packed::Feasible | Packed::Scored(_) => return None,
        })
    }
    fn verdict(self, reasons: &[Rc<str>]) -> Verdict {
        match self {
            Packed::Feasible => Verdict::Feasible(None),
            Packed::Scored(scores) => Verdict::Feasible(Some(NodeScores::new(scores.map(NodeScores::unpack)))),
            rejected => Verdict::Rejected(rejected.failure(reasons).unwrap_or(FilterFailure::NodeName)),
        }
    }
}

/// What one scheduling cycle keeps: its `Decision` in compact form (nodes by cache slot), and
/// the `Decision` itself once someone asked for it.
#[derive(Debug)]
pub struct Record {
    pub pod: ObjectKey,
    pub at: Time,
    pub attempt: u32,
    pub nodes_in_cluster: usize,
    pub feasible_wanted: usize,
    /// (node slot, verdict), in the order the search met them.
    pub nodes: Vec<(u32, Packed)>,
    /// The reasons of the untolerated taints `Packed::Taint` points at.
    pub taint_reasons: Vec<Rc<str>>,
    pub chosen: Option<u32>,
    pub message: String,
    full: OnceCell<Decision>,
}

impl Record {
    pub fn new(pod: ObjectKey, at: Time, attempt: u32, nodes_in_cluster: usize, feasible_wanted: usize) -> Record {
        Record {
            pod,
            at,
            attempt,
            nodes_in_cluster,
            feasible_wanted,
            nodes: Vec::new(),
            taint_reasons: Vec::new(),
            chosen: None,
            message: String::new(),
            full: OnceCell::new(),
        }
    }
    /// The filter failures, in the order the search met the nodes.
    pub fn rejections(&self) -> impl Iterator<Item = FilterFailure> + '_ {
        self.nodes.iter().filter_map(|(_, v)| v.failure(&self.taint_reasons))
    }
    /// The chosen node's weighted total, if scoring ran (`Decision::chosen_score` without
    /// building the decision).
    pub fn chosen_score(&self) -> Option<i64> {
        let chosen = self.chosen?;
        self.nodes.iter().find(|(slot, _)| *slot == chosen).and_then(|(_, v)| match v {
            Packed::Scored(scores) => Some(NodeScores::new(scores.map(NodeScores::unpack)).total),
            _ => None,
        })
    }
    /// The decision with node names (`name` gives a slot's node name), built once.
    pub fn decision(&self, name: impl Fn(u32) -> Rc<str>) -> &Decision {
        self.full.get_or_init(|| Decision {
            pod: self.pod.clone(),
            at: self.at,
            attempt: self.attempt,
            nodes_in_cluster: self.nodes_in_cluster,
            feasible_wanted: self.feasible_wanted,
            nodes: self.nodes.iter().map(|(slot, v)| NodeVerdict { node: name(*slot), verdict: v.verdict(&self.taint_reasons) }).collect(),
            chosen: self.chosen.map(&name),
            message: self.message.clone(),
        })
    }
}

/// What the log keeps per pod: it only needs to know whose decision it is.
pub trait ForPod {
    fn pod(&self) -> &ObjectKey;
}

impl ForPod for Decision {
    fn pod(&self) -> &ObjectKey {
        &self.pod
    }
}

impl ForPod for Record {
    fn pod(&self) -> &ObjectKey {
        &self.pod
    }
}

/// The last decision per pod, for at most `capacity` pods (the least recently decided go first).
/// The decisions sit in the order they were made, each with its sequence number; a map from
/// pod to the number of its latest one finds it. A cycle records one decision, so the log
/// clones the pod's key once (for the map) and the decision keeps its own.
#[derive(Debug)]
pub struct DecisionLog<T = Decision> {
    capacity: usize,
    seq: u64,
    latest: FastMap<ObjectKey, u64>,
    /// Oldest first, by sequence number; `None` where a later decision for the pod replaced it.
    entries: VecDeque<(u64, Option<T>)>,
    live: usize,
}

impl<T: ForPod> DecisionLog<T> {
    pub fn new(capacity: usize) -> Self {
        DecisionLog { capacity, seq: 0, latest: FastMap::default(), entries: VecDeque::new(), live: 0 }
    }

    fn position(&self, seq: u64) -> Option<usize> {
        self.entries.binary_search_by_key(&seq, |(s, _)| *s).ok()
    }

    pub fn record(&mut self, decision: T) {
        if self.capacity == 0 {
            return;
        }
        self.seq += 1;
        if let Some(before) = self.latest.insert(decision.pod().clone(), self.seq) {
            let replaced = self.position(before).and_then(|i| self.entries.get_mut(i)).and_then(|(_, d)| d.take());
            if replaced.is_some() {
                self.live -= 1;
            }
        }
        self.entries.push_back((self.seq, Some(decision)));
        self.live += 1;
        while self.live > self.capacity {
            let Some((_, oldest)) = self.entries.pop_front() else { break };
            if let Some(oldest) = oldest {
                self.latest.remove(oldest.pod());
                self.live -= 1;
            }
        }
        while self.entries.front().is_some_and(|(_, d)| d.is_none()) {
            self.entries.pop_front();
        }
        // Replaced decisions leave gaps behind the oldest live one; keep the backlog bounded.
        if self.entries.len() > 4 * self.capacity {
            self.entries.retain(|(_, d)| d.is_some());
        }
    }

    pub fn get(&self, pod: &ObjectKey) -> Option<&T> {
        let seq = *self.latest.get(pod)?;
        self.entries.get(self.position(seq)?)?.1.as_ref()
    }
    pub fn len(&self) -> usize {
        self.live
    }
    pub fn is_empty(&self) -> bool {
        self.live == 0
    }
    /// Kept decisions, oldest first.
    pub fn iter(&self) -> impl Iterator<Item = &T> + '_ {
        self.entries.iter().filter_map(|(_, d)| d.as_ref())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Kind;

    fn decision(pod: &str, at: u64) -> Decision {
        Decision {
            pod: ObjectKey::new(Kind::Pod, "default", pod),
            at: Time(at),
            attempt: 1,
            nodes_in_cluster: 0,
            feasible_wanted: 0,
            nodes: Vec::new(),
            chosen: None,
            message: String::new(),
        }
    }

    #[test]
    fn the_log_keeps_the_last_decision_of_the_most_recent_pods() {
        let mut log = DecisionLog::new(2);
        log.record(decision("a", 1));
        log.record(decision("b", 2));
        log.record(decision("a", 3));
        log.record(decision("c", 4));
        assert_eq!(log.len(), 2);
        assert!(log.get(&ObjectKey::new(Kind::Pod, "default", "b")).is_none(), "b is the least recently decided");
        assert_eq!(log.get(&ObjectKey::new(Kind::Pod, "default", "a")).map(|d| d.at), Some(Time(3)));
        let order: Vec<&str> = log.iter().map(|d| d.pod.name.as_str()).collect();
        assert_eq!(order, ["a", "c"]);
    }

    #[test]
    fn a_pod_decided_again_and_again_keeps_one_entry_and_a_bounded_backlog() {
        let mut log = DecisionLog::new(2);
        log.record(decision("old", 1));
        for at in 2..100 {
            log.record(decision("busy", at));
        }
        assert_eq!(log.len(), 2);
        assert_eq!(log.get(&ObjectKey::new(Kind::Pod, "default", "busy")).map(|d| d.at), Some(Time(99)));
        assert_eq!(log.get(&ObjectKey::new(Kind::Pod, "default", "old")).map(|d| d.at), Some(Time(1)));
        assert!(log.entries.len() <= 8, "replaced decisions are dropped, their gaps bounded: {}", log.entries.len());
        log.record(decision("new", 100));
        let order: Vec<&str> = log.iter().map(|d| d.pod.name.as_str()).collect();
        assert_eq!(order, ["busy", "new"], "the oldest live decision went first");
        assert!(DecisionLog::<Decision>::new(0).is_empty());
    }

    #[test]
    fn a_record_builds_the_same_decision_with_names() {
        let mut r = Record::new(ObjectKey::new(Kind::Pod, "default", "web"), Time(5), 2, 3, 3);
        let scores = NodeScores::new([Some(100), None, Some(97), Some(0), Some(90)]);
        let taint: Rc<str> = Rc::from("node(s) had untolerated taint {dedicated: gpu}");
        let failures =
            [FilterFailure::UntoleratedTaint(taint.clone()), FilterFailure::Insufficient { pods: false, cpu: true, memory: false }];
        let mut reasons = Vec::new();
        let packed: Vec<Packed> = failures.iter().cloned().map(|f| Packed::rejected(f, &mut reasons)).collect();
        r.taint_reasons = reasons;
        r.nodes = vec![(2, packed[0]), (0, Packed::scored(&scores)), (1, packed[1])];
        r.chosen = Some(0);
        assert_eq!(r.rejections().collect::<Vec<_>>(), failures);
        let names = ["n0", "n1", "n2"];
        let d = r.decision(|slot| Rc::from(names[slot as usize]));
        assert_eq!(d.verdict("n2"), Some(&Verdict::Rejected(FilterFailure::UntoleratedTaint(taint))));
        assert_eq!(d.verdict("n0"), Some(&Verdict::Feasible(Some(scores))));
        assert_eq!((d.chosen.as_deref(), d.chosen_score(), d.attempt, d.feasible_count()), (Some("n0"), Some(scores.total), 2, 1));
        assert_eq!(r.chosen_score(), Some(scores.total), "the compact record gives the same score");
        assert_eq!(std::mem::size_of::<(u32, Packed)>(), 12, "a node costs a decision 12 bytes");
    }

    #[test]
    fn scores_total_with_the_profile_weights() {
        // TaintToleration, NodeAffinity (skipped), NodeResourcesFit, PodTopologySpread, BalancedAllocation.
        let s = NodeScores::new([Some(100), None, Some(97), Some(100), Some(90)]);
        assert_eq!(s.total, 300 + 97 + 200 + 90);
        assert_eq!(s.get(Plugin::NodeAffinity), None);
        let weights: Vec<i64> = Plugin::SCORING.iter().map(|p| p.weight()).collect();
        assert_eq!(weights, NodeScores::WEIGHTS, "the written-out weights are the profile's");
    }
}
