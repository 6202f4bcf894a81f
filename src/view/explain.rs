//! Why the scheduler put a pod where it did: per node, the filter that turned it away (with the
//! reason the FailedScheduling message would count) or each score plugin's score and the
//! weighted total, and the node chosen.
//!
//! It reads the decision kube-scheduler kept for the pod (`Scheduler::last_decision`); the
//! scheduler keeps the last decision of a bounded number of recent pods, so an old pod may have
//! none left, and a pod bound by `spec.nodeName` never had one.

use crate::model::{Kind, ObjectKey};
use crate::scheduler::Verdict;
use crate::sim::Sim;
use serde::Serialize;

/// At most this many nodes are listed; the rest are counted.
pub const MAX_ROWS: usize = 12;

/// One node's verdict.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct NodeVerdictView {
    pub node: String,
    /// `chosen`, `feasible` or `rejected`.
    pub outcome: String,
    /// The filter plugin that rejected it.
    pub filter: String,
    /// Its reasons, joined (`Insufficient cpu, Insufficient memory`).
    pub reason: String,
    /// (plugin, normalised score 0–100, weight); no score for a plugin that skipped the pod.
    pub scores: Vec<(String, Option<i64>, i64)>,
    /// The weighted sum, when scoring ran.
    pub total: Option<i64>,
}

/// The explanation of one pod's last scheduling attempt.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Explanation {
    pub pod: String,
    pub at: u64,
    pub attempt: u32,
    pub nodes_in_cluster: usize,
    /// How many feasible nodes the search stopped at (percentageOfNodesToScore).
    pub feasible_wanted: usize,
    pub examined: usize,
    pub feasible: usize,
    pub chosen: Option<String>,
    /// The FailedScheduling message when no node fit.
    pub message: String,
    /// The chosen node first, then the feasible by total, then the rejected; at most
    /// [`MAX_ROWS`].
    pub rows: Vec<NodeVerdictView>,
    /// Nodes examined but not listed.
    pub hidden: usize,
    /// Why no score was computed, when only one node was feasible.
    pub note: String,
}

/// The explanation for pod `namespace/name`, if kube-scheduler kept a decision for it.
pub fn explain(sim: &Sim, namespace: &str, name: &str) -> Option<Explanation> {
    let scheduler = sim.scheduler()?;
    let decision = scheduler.last_decision(&ObjectKey::new(Kind::Pod, namespace, name))?;
    let chosen = decision.chosen.as_deref();
    let mut rows: Vec<NodeVerdictView> = decision
        .nodes
        .iter()
        .map(|v| {
            let node = v.node.to_string();
            match &v.verdict {
                Verdict::Rejected(f) => NodeVerdictView {
                    node,
                    outcome: "rejected".into(),
                    filter: f.plugin().name().into(),
                    reason: f.reasons().join(", "),
                    scores: Vec::new(),
                    total: None,
                },
                Verdict::Feasible(scores) => NodeVerdictView {
                    outcome: if Some(&*v.node) == chosen { "chosen".into() } else { "feasible".into() },
                    node,
                    filter: String::new(),
                    reason: String::new(),
                    scores: scores
                        .map(|s| s.iter().map(|(p, score)| (p.name().to_string(), score, p.weight())).collect())
                        .unwrap_or_default(),
                    total: scores.map(|s| s.total),
                },
            }
        })
        .collect();
    let rank = |r: &NodeVerdictView| match r.outcome.as_str() {
        "chosen" => 0,
        "feasible" => 1,
        _ => 2,
    };
    // Stable: nodes of equal rank and total keep the order the search met them in.
    crate::sort::sort_by_key(&mut rows, |r| (rank(r), std::cmp::Reverse(r.total.unwrap_or(i64::MIN))));
    let examined = rows.len();
    let feasible = decision.feasible_count();
    let hidden = examined.saturating_sub(MAX_ROWS);
    rows.truncate(MAX_ROWS);
    let note = if feasible == 1 && chosen.is_some() {
        "Only one node passed the filters, so the scheduler skipped scoring.".to_string()
    } else {
        String::new()
    };
    Some(Explanation {
        pod: format!("{namespace}/{name}"),
        at: decision.at.0,
        attempt: decision.attempt,
        nodes_in_cluster: decision.nodes_in_cluster,
        feasible_wanted: decision.feasible_wanted,
        examined,
        feasible,
        chosen: chosen.map(str::to_string),
        message: decision.message.clone(),
        rows,
        hidden,
        note,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::command::{Scenario, Session};
    use crate::model::Duration;

    #[test]
    fn a_scheduled_pod_shows_both_nodes_scored_and_the_chosen_one_first() {
        let mut s = Session::new(Scenario::builtin("default").unwrap(), Some(1)).unwrap();
        s.settle(Duration::mins(2)).unwrap();
        let pod = s.sim().objects(Kind::Pod).next().unwrap().as_pod().unwrap().clone();
        let e = explain(s.sim(), "default", &pod.metadata.name).expect("a decision");
        assert_eq!(e.chosen.as_deref(), pod.node_name());
        assert_eq!((e.nodes_in_cluster, e.examined, e.feasible, e.hidden), (2, 2, 2, 0));
        assert_eq!(e.rows[0].outcome, "chosen");
        assert_eq!(e.rows[1].outcome, "feasible");
        assert!(e.rows[0].total >= e.rows[1].total);
        let plugins: Vec<&str> = e.rows[0].scores.iter().map(|(p, _, _)| p.as_str()).collect();
        assert_eq!(
            plugins,
            ["TaintToleration", "NodeAffinity", "NodeResourcesFit", "PodTopologySpread", "NodeResourcesBalancedAllocation"]
        );
        let weights: Vec<i64> = e.rows[0].scores.iter().map(|(_, _, w)| *w).collect();
        assert_eq!(weights, [3, 2, 1, 2, 1]);
        let sum: i64 = e.rows[0].scores.iter().map(|(_, s, w)| s.unwrap_or(0) * w).sum();
        assert_eq!(e.rows[0].total, Some(sum));
        assert!(e.message.is_empty());
    }

    #[test]
    fn a_pod_too_big_for_every_node_shows_each_rejection() {
        let mut s = Session::new(Scenario::builtin("default").unwrap(), Some(1)).unwrap();
        s.settle(Duration::mins(2)).unwrap();
        let out = s.execute("kubectl run big --image=nginx --requests=cpu=64");
        if !out.ok {
            // `kubectl run` without --requests support: make it with a manifest instead.
            s.add_file(
                "big.yaml",
                "apiVersion: v1\nkind: Pod\nmetadata: {name: big}\nspec:\n  containers:\n  - name: c\n    image: nginx\n    resources: {requests: {cpu: \"64\"}}\n",
            );
            let applied = s.execute("kubectl apply -f big.yaml");
            assert!(applied.ok, "{applied:?}");
        }
        s.advance(Duration::secs(2));
        let e = explain(s.sim(), "default", "big").expect("a decision");
        assert_eq!(e.chosen, None);
        assert_eq!(e.feasible, 0);
        assert!(e.rows.iter().all(|r| r.outcome == "rejected" && r.filter == "NodeResourcesFit" && r.reason == "Insufficient cpu"));
        assert_eq!(e.message, "0/2 nodes are available: 2 Insufficient cpu. preemption: 0/2 nodes are available: 2 No preemption victims found for incoming pod.");
    }

    #[test]
    fn no_decision_no_explanation() {
        let s = Session::new(Scenario::builtin("default").unwrap(), Some(1)).unwrap();
        assert!(explain(s.sim(), "default", "nope").is_none());
    }
}
