//! The room of loops: every control-plane process and kubelet, whether it runs, and each loop
//! inside it — where it is in its turn (observe, compare, act, idle), how deep its work queue is,
//! and the last thing it did, in words.
//!
//! kube-apiserver and etcd have no loop of their own: kube-apiserver validates, stores and tells
//! watchers; etcd remembers, and its revision counts every write.

use crate::sim::{ComponentId, Sim};
use serde::Serialize;

/// One loop inside a component.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct LoopView {
    pub name: String,
    /// `observe`, `compare`, `act` or `idle`.
    pub phase: String,
    pub queue_depth: usize,
    /// "ReplicaSet web-7d9f6c: 2 of 3, creating 1"; empty before its first action.
    pub last_action: String,
    pub last_action_at: Option<u64>,
    pub turns: u64,
    /// Switched off on its own while its process runs (a loop of kube-controller-manager).
    pub stopped: bool,
    /// It acted within `view::focus::RECENT_MS` of simulated time: it stays unfolded on the stage.
    pub recent: bool,
}

/// One process.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ComponentView {
    /// `kube-apiserver`, `etcd`, `kube-controller-manager`, `kube-scheduler`, `kubelet-NODE`.
    pub name: String,
    /// `apiserver`, `etcd`, `controller-manager`, `scheduler` or `kubelet`.
    pub role: String,
    /// `running` or `stopped`.
    pub state: String,
    /// What it holds, in words (etcd: its revision and key count).
    pub detail: String,
    pub loops: Vec<LoopView>,
}

impl ComponentView {
    /// The component's most telling phase: the busiest of its loops.
    pub fn phase(&self) -> &str {
        ["act", "compare", "observe"].into_iter().find(|p| self.loops.iter().any(|l| l.phase == *p)).unwrap_or("idle")
    }
}

fn role(id: &ComponentId) -> &'static str {
    match id {
        ComponentId::ApiServer => "apiserver",
        ComponentId::Etcd => "etcd",
        ComponentId::ControllerManager => "controller-manager",
        ComponentId::Scheduler => "scheduler",
        ComponentId::Kubelet(_) => "kubelet",
        ComponentId::KubeProxy(_) => "kube-proxy",
        ComponentId::Operator(_) => "operator",
        ComponentId::User => "kubectl",
    }
}

fn loop_view(l: crate::runtime::LoopStatus, now: u64) -> LoopView {
    let phase = match l.phase {
        crate::runtime::LoopPhase::Observe => "observe",
        crate::runtime::LoopPhase::Compare => "compare",
        crate::runtime::LoopPhase::Act => "act",
        crate::runtime::LoopPhase::Idle => "idle",
    };
    LoopView {
        name: l.name,
        phase: phase.into(),
        queue_depth: l.queue_depth,
        last_action: l.last_action,
        last_action_at: l.last_action_at.map(|t| t.0),
        turns: l.turns,
        stopped: l.stopped,
        recent: crate::view::focus::recent(l.last_action_at.map(|t| t.0), now),
    }
}

/// Every component in the page's order: kube-apiserver, etcd, kube-controller-manager,
/// kube-scheduler, then the kubelets by node name, numbers read as numbers.
pub fn components(sim: &Sim) -> Vec<ComponentView> {
    let api = sim.api();
    let mut out = Vec::new();
    let fixed = [ComponentId::ApiServer, ComponentId::Etcd];
    for id in &fixed {
        // They are not components (the simulation serves the API), but they can be stopped.
        let running = sim.is_running(id);
        let detail = match id {
            ComponentId::Etcd => format!("revision {} · {} keys", api.revision(), api.key_count()),
            _ => format!("{} messages so far", sim.trace().count()),
        };
        out.push(ComponentView {
            name: id.to_string(),
            role: role(id).into(),
            state: if running { "running" } else { "stopped" }.into(),
            detail,
            loops: sim.loops(id).into_iter().map(|l| loop_view(l, sim.now().0)).collect(),
        });
    }
    for id in sim.component_ids().filter(|id| !fixed.contains(id) && **id != ComponentId::User) {
        out.push(ComponentView {
            name: id.to_string(),
            role: role(id).into(),
            state: if sim.is_running(id) { "running" } else { "stopped" }.into(),
            // What a kube-proxy last programmed stays on its machine whether it runs or not.
            detail: match id {
                ComponentId::KubeProxy(node) => crate::view::services::table_words(sim, node),
                _ => String::new(),
            },
            loops: sim.loops(id).into_iter().map(|l| loop_view(l, sim.now().0)).collect(),
        });
    }
    // ComponentId orders the control plane before kubelets; keep kube-controller-manager before
    // kube-scheduler as the lesson names them.
    // The kubelets follow in the order a person counts their nodes (node-2 before node-10).
    let rank = |c: &ComponentView| match c.role.as_str() {
        "apiserver" => 0,
        "etcd" => 1,
        "controller-manager" => 2,
        "scheduler" => 3,
        "kubelet" => 4,
        _ => 5,
    };
    crate::sort::sort_by(&mut out, |a, b| rank(a).cmp(&rank(b)).then_with(|| crate::sort::natural_cmp(&a.name, &b.name)));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::command::{Scenario, Session};
    use crate::model::Duration;

    #[test]
    fn kubelets_follow_in_counting_order() {
        let mut s = Session::new(Scenario::builtin("default").unwrap(), Some(1)).unwrap();
        assert!(s.execute("sim node add node-10").ok);
        s.settle(Duration::mins(2)).unwrap();
        let names: Vec<String> = components(s.sim()).into_iter().map(|c| c.name).collect();
        assert_eq!(names[3..7], ["kube-scheduler", "kubelet-node-1", "kubelet-node-2", "kubelet-node-10"]);
        assert_eq!(names[7..], ["kube-proxy-node-1", "kube-proxy-node-2", "kube-proxy-node-10"]);
    }

    #[test]
    fn the_room_holds_the_control_plane_and_a_kubelet_per_node() {
        let mut s = Session::new(Scenario::builtin("default").unwrap(), Some(1)).unwrap();
        s.settle(Duration::mins(2)).unwrap();
        let c = components(s.sim());
        let names: Vec<&str> = c.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "kube-apiserver",
                "etcd",
                "kube-controller-manager",
                "kube-scheduler",
                "kubelet-node-1",
                "kubelet-node-2",
                "kube-proxy-node-1",
                "kube-proxy-node-2"
            ]
        );
        assert!(c.iter().all(|c| c.state == "running"));
        assert_eq!(c[1].detail, format!("revision {} · {} keys", s.sim().api().revision(), s.sim().api().key_count()));
        let kcm: Vec<&str> = c[2].loops.iter().map(|l| l.name.as_str()).collect();
        assert_eq!(
            kcm,
            [
                "deployment-controller",
                "replicaset-controller",
                "garbage-collector-controller",
                "node-lifecycle-controller",
                "taint-eviction-controller",
                "namespace-controller",
                "endpointslice-controller",
                "endpoints-controller",
                "pod-garbage-collector-controller",
                "job-controller",
                "ttl-after-finished-controller",
                "daemonset-controller",
                "disruption-controller",
                "replicationcontroller-controller",
                "horizontal-pod-autoscaler-controller",
                "cronjob-controller",
                "statefulset-controller",
                "persistentvolume-binder-controller",
                "persistentvolumeclaim-protection-controller"
            ]
        );
        let rs = &c[2].loops[1];
        assert!(rs.turns > 0 && !rs.last_action.is_empty(), "{rs:?}");
        let busy: Vec<(&str, &str, &str)> = c
            .iter()
            .flat_map(|c| {
                c.loops
                    .iter()
                    .filter(|l| l.phase == "compare" || l.phase == "act")
                    .map(move |l| (c.name.as_str(), l.name.as_str(), l.phase.as_str()))
            })
            .collect();
        assert!(busy.is_empty(), "settled: no loop compares or acts, not {busy:?}");
    }

    #[test]
    fn a_kill_sets_the_replicaset_loop_turning() {
        let mut s = Session::new(Scenario::builtin("default").unwrap(), Some(1)).unwrap();
        s.settle(Duration::mins(2)).unwrap();
        let victim = s.sim().objects(crate::model::Kind::Pod).next().unwrap().meta().name.clone();
        s.execute(&format!("kubectl delete pod {victim}"));
        let mut phases = std::collections::BTreeSet::new();
        for _ in 0..200 {
            s.advance(Duration::millis(1));
            let c = components(s.sim());
            phases.extend(c[2].loops.iter().map(|l| l.phase.clone()));
        }
        assert!(phases.contains("compare") || phases.contains("act"), "{phases:?}");
        assert!(phases.contains("observe") || phases.contains("act"), "{phases:?}");
    }
}
