//! What a DaemonSet's pods look like and which nodes may run them (pkg/controller/daemon/util
//! and `NodeShouldRunDaemonPod`), as pure functions the controller and its tests share.
//!
//! The controller never binds a pod itself: since Kubernetes 1.12 it pins each pod to its node
//! with a required node affinity on the node's name (`matchFields metadata.name In [NODE]`) and
//! lets kube-scheduler bind it, so the pod goes through the same filters as any other.

use crate::api::TEMPLATE_GENERATION_ANNOTATION;
use crate::model::*;
use crate::scheduler::plugins::{first_untolerated_taint, matches_required_affinity};

/// The label with the hash of the template a pod was made from (the name of upstream's
/// ControllerRevision for that template).
pub const CONTROLLER_REVISION_HASH: &str = "controller-revision-hash";
/// The label with the DaemonSet's template generation when the pod was made.
pub const POD_TEMPLATE_GENERATION: &str = "pod-template-generation";
/// The node field the pinning affinity names.
pub const NODE_NAME_FIELD: &str = "metadata.name";

/// The tolerations `AddOrUpdateDaemonPodTolerations` gives every daemon pod: a daemon stays on
/// a node that is not ready or unreachable (NoExecute, forever), and is placed on one under
/// disk, memory or PID pressure or cordoned. `network-unavailable` is added only for
/// hostNetwork pods upstream; kubeloop does not model hostNetwork, so it is never added here.
pub fn daemon_tolerations() -> [Toleration; 6] {
    let exists = |key: &str, effect: &str| Toleration {
        key: key.into(),
        operator: Some("Exists".into()),
        effect: effect.into(),
        ..Default::default()
    };
    [
        exists("node.kubernetes.io/not-ready", "NoExecute"),
        exists("node.kubernetes.io/unreachable", "NoExecute"),
        exists("node.kubernetes.io/disk-pressure", "NoSchedule"),
        exists("node.kubernetes.io/memory-pressure", "NoSchedule"),
        exists("node.kubernetes.io/pid-pressure", "NoSchedule"),
        exists("node.kubernetes.io/unschedulable", "NoSchedule"),
    ]
}

/// The template's spec with the daemon tolerations added, each only if the template does not
/// already carry the same one (`AddOrUpdateTolerationInPodSpec`).
pub fn spec_with_daemon_tolerations(template: &PodSpec) -> PodSpec {
    let mut spec = template.clone();
    for toleration in daemon_tolerations() {
        let same = |t: &Toleration| {
            t.key == toleration.key && t.effect == toleration.effect && t.value == toleration.value && t.operator == toleration.operator
        };
        match spec.tolerations.iter_mut().find(|t| same(t)) {
            Some(existing) => *existing = toleration,
            None => spec.tolerations.push(toleration),
        }
    }
    spec
}

/// The DaemonSet's template generation (`util.GetTemplateGeneration`), kept by the API server in
/// an annotation; `None` if it is missing or unreadable.
pub fn template_generation(ds: &DaemonSet) -> Option<i64> {
    ds.metadata.annotations.get(TEMPLATE_GENERATION_ANNOTATION).and_then(|v| v.parse().ok())
}

/// `util.IsPodUpdated`: made from the current template, by hash or by template generation.
pub fn is_pod_updated(pod: &Pod, hash: &str, generation: Option<i64>) -> bool {
    let labels = &pod.metadata.labels;
    let by_generation = generation.is_some_and(|g| labels.get(POD_TEMPLATE_GENERATION).is_some_and(|v| *v == g.to_string()));
    let by_hash = !hash.is_empty() && labels.get(CONTROLLER_REVISION_HASH).is_some_and(|v| v == hash);
    by_hash || by_generation
}

/// Whether a node must run the daemon pod, and whether a pod already there may stay
/// (`NodeShouldRunDaemonPod`): the template's nodeName, nodeSelector and required node affinity
/// must match, and its taints be tolerated. A NoSchedule taint only keeps a new pod away; a pod
/// already there stays unless a NoExecute taint is untolerated.
pub fn node_should_run(node: &Node, ds: &DaemonSet, tolerations: &[Toleration]) -> (bool, bool) {
    let spec = &ds.spec.template.spec;
    if spec.node_name.as_deref().is_some_and(|n| !n.is_empty() && n != node.metadata.name.as_str()) {
        return (false, false);
    }
    let required = spec
        .affinity
        .as_ref()
        .and_then(|a| a.node_affinity.as_ref())
        .and_then(|n| n.required_during_scheduling_ignored_during_execution.as_ref());
    if !matches_required_affinity(&spec.node_selector, required, &node.metadata.labels, &node.metadata.name) {
        return (false, false);
    }
    let taints = &node.spec.taints;
    if first_untolerated_taint(taints, tolerations).is_some() {
        let no_execute_untolerated =
            taints.iter().filter(|t| t.effect == "NoExecute").any(|t| !tolerations.iter().any(|tol| tol.tolerates(t)));
        return (false, !no_execute_untolerated);
    }
    (true, true)
}

/// `ReplaceDaemonSetPodNodeNameNodeAffinity`: the pod's required node affinity becomes the one
/// term naming its node. Label expressions of the template's terms are dropped: the controller
/// already checked them against this node.
pub fn pin_to_node(affinity: Option<Affinity>, node: &str) -> Affinity {
    let term = NodeSelectorTerm {
        match_fields: vec![NodeSelectorRequirement { key: NODE_NAME_FIELD.into(), operator: "In".into(), values: vec![node.into()] }],
        ..Default::default()
    };
    let mut affinity = affinity.unwrap_or_default();
    let node_affinity = affinity.node_affinity.get_or_insert_with(Default::default);
    node_affinity.required_during_scheduling_ignored_during_execution = Some(NodeSelector { node_selector_terms: vec![term] });
    affinity
}

/// `util.GetTargetNodeName`: the node a daemon pod is bound to, or the one its pinning affinity
/// names while it waits for the scheduler.
pub fn target_node_name(pod: &Pod) -> Option<&str> {
    if let Some(node) = pod.spec.node_name.as_deref().filter(|n| !n.is_empty()) {
        return Some(node);
    }
    let required = pod.spec.affinity.as_ref()?.node_affinity.as_ref()?.required_during_scheduling_ignored_during_execution.as_ref()?;
    required
        .node_selector_terms
        .iter()
        .flat_map(|t| &t.match_fields)
        .find(|r| r.key == NODE_NAME_FIELD && r.operator == "In" && r.values.len() == 1)
        .map(|r| r.values[0].as_str())
}

/// `podByCreationTimestampAndPhase`: a bound pod before an unbound one, then the oldest, then by
/// name. The first pod of a node is the one the status counts and the one kept when a node
/// has too many.
pub fn oldest_first(a: &&Pod, b: &&Pod) -> std::cmp::Ordering {
    let unbound = |p: &Pod| p.spec.node_name.as_deref().is_none_or(str::is_empty);
    unbound(a)
        .cmp(&unbound(b))
        .then(a.metadata.creation_timestamp.cmp(&b.metadata.creation_timestamp))
        .then(a.metadata.name.cmp(&b.metadata.name))
}

/// `intstr.GetScaledValueFromIntOrPercent` rounding up, as maxUnavailable and maxSurge are read.
pub fn scaled_up(value: Option<&IntOrString>, total: i32) -> i32 {
    match value {
        None => 0,
        Some(IntOrString::Int(n)) => *n as i32,
        Some(IntOrString::String(s)) => {
            let percent: i64 = s.trim_end_matches('%').parse().unwrap_or(0);
            ((percent * i64::from(total) + 99) / 100) as i32
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node(name: &str, labels: &[(&str, &str)], taints: &[(&str, &str)]) -> Node {
        let mut n = Node::default();
        n.metadata.name = name.into();
        n.metadata.labels = labels.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect::<StringMap>().into();
        n.spec.taints = taints.iter().map(|(k, e)| Taint { key: k.to_string(), effect: e.to_string(), ..Default::default() }).collect();
        n
    }

    fn tolerations(ds: &DaemonSet) -> Vec<Toleration> {
        spec_with_daemon_tolerations(&ds.spec.template.spec).tolerations
    }

    #[test]
    fn a_node_must_match_the_selector_and_tolerate_the_taints() {
        let mut ds = DaemonSet::default();
        let plain = node("n1", &[("disk", "ssd")], &[]);
        assert_eq!(node_should_run(&plain, &ds, &tolerations(&ds)), (true, true));
        let tainted = node("n2", &[], &[("dedicated", "NoSchedule")]);
        assert_eq!(node_should_run(&tainted, &ds, &tolerations(&ds)), (false, true), "NoSchedule keeps a running pod");
        let evicting = node("n3", &[], &[("dedicated", "NoExecute")]);
        assert_eq!(node_should_run(&evicting, &ds, &tolerations(&ds)), (false, false));
        let not_ready =
            node("n4", &[], &[("node.kubernetes.io/not-ready", "NoExecute"), ("node.kubernetes.io/unschedulable", "NoSchedule")]);
        assert_eq!(node_should_run(&not_ready, &ds, &tolerations(&ds)), (true, true), "the daemon tolerations");
        ds.spec.template.spec = PodSpec { node_selector: [("disk".to_string(), "hdd".to_string())].into(), ..Default::default() }.into();
        assert_eq!(node_should_run(&plain, &ds, &tolerations(&ds)), (false, false));
    }

    #[test]
    fn a_pod_is_pinned_by_name_and_its_target_read_back() {
        let mut pod =
            Pod { spec: PodSpec { affinity: Some(pin_to_node(None, "node-2")), ..Default::default() }.into(), ..Default::default() };
        assert_eq!(target_node_name(&pod), Some("node-2"));
        let term = &pod
            .spec
            .affinity
            .as_ref()
            .unwrap()
            .node_affinity
            .as_ref()
            .unwrap()
            .required_during_scheduling_ignored_during_execution
            .as_ref()
            .unwrap()
            .node_selector_terms[0];
        assert!(term.matches(&StringMap::new(), "node-2") && !term.matches(&StringMap::new(), "node-1"));
        pod.spec.node_name = Some("node-3".into());
        assert_eq!(target_node_name(&pod), Some("node-3"));
    }

    #[test]
    fn percentages_round_up() {
        assert_eq!(scaled_up(Some(&IntOrString::String("10%".into())), 3), 1);
        assert_eq!(scaled_up(Some(&IntOrString::String("50%".into())), 3), 2);
        assert_eq!(scaled_up(Some(&IntOrString::Int(2)), 3), 2);
        assert_eq!(scaled_up(None, 3), 0);
    }
}
