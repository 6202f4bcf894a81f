//! Every scheduling decision with its explanation, for the page: which nodes were looked at,
//! which filter turned each one away and why, each plugin's score on the nodes that passed, and
//! the node chosen. Only the most recent decisions are kept (the last one per pod, for a bounded
//! number of pods), so memory stays flat however long the simulation runs.

use super::plugins::{FilterFailure, Plugin, MAX_NODE_SCORE};
use crate::model::{ObjectKey, Time};
use std::collections::{HashMap, VecDeque};
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
    /// From each score plugin's normalised score, in `Plugin::SCORING` order.
    pub fn new(scores: [Option<i64>; 5]) -> Self {
        let mut out = NodeScores { scores: [-1; 5], total: 0 };
        for (i, (plugin, score)) in Plugin::SCORING.iter().zip(scores).enumerate() {
            if let Some(score) = score {
                let score = score.clamp(0, MAX_NODE_SCORE);
                out.scores[i] = score as i8;
                out.total += score * plugin.weight();
            }
        }
        out
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

/// The last decision per pod, for at most `capacity` pods (the least recently decided go first).
#[derive(Debug, Default)]
pub struct DecisionLog {
    capacity: usize,
    seq: u64,
    by_pod: HashMap<ObjectKey, (u64, Decision)>,
    order: VecDeque<(u64, ObjectKey)>,
}

impl DecisionLog {
    pub fn new(capacity: usize) -> Self {
        DecisionLog { capacity, ..Default::default() }
    }

    pub fn record(&mut self, decision: Decision) {
        if self.capacity == 0 {
            return;
        }
        self.seq += 1;
        self.order.push_back((self.seq, decision.pod.clone()));
        self.by_pod.insert(decision.pod.clone(), (self.seq, decision));
        while self.by_pod.len() > self.capacity {
            let Some((seq, key)) = self.order.pop_front() else { break };
            if self.by_pod.get(&key).is_some_and(|(s, _)| *s == seq) {
                self.by_pod.remove(&key);
            }
        }
        // Entries superseded by a later decision for the same pod are dropped lazily; keep the
        // backlog bounded too.
        if self.order.len() > 4 * self.capacity {
            let live = &self.by_pod;
            self.order.retain(|(seq, key)| live.get(key).is_some_and(|(s, _)| s == seq));
        }
    }

    pub fn get(&self, pod: &ObjectKey) -> Option<&Decision> {
        self.by_pod.get(pod).map(|(_, d)| d)
    }
    pub fn len(&self) -> usize {
        self.by_pod.len()
    }
    pub fn is_empty(&self) -> bool {
        self.by_pod.is_empty()
    }
    /// Kept decisions, oldest first.
    pub fn iter(&self) -> impl Iterator<Item = &Decision> + '_ {
        self.order.iter().filter_map(|(seq, key)| self.by_pod.get(key).filter(|(s, _)| s == seq).map(|(_, d)| d))
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
    fn scores_total_with_the_profile_weights() {
        // TaintToleration, NodeAffinity (skipped), NodeResourcesFit, PodTopologySpread, BalancedAllocation.
        let s = NodeScores::new([Some(100), None, Some(97), Some(100), Some(90)]);
        assert_eq!(s.total, 300 + 97 + 200 + 90);
        assert_eq!(s.get(Plugin::NodeAffinity), None);
    }
}
