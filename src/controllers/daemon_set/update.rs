//! A DaemonSet's RollingUpdate (pkg/controller/daemon/update.go, `rollingUpdate`): which
//! out-of-date pods to delete, or which nodes to surge onto, within the update budget.
//!
//! Without surge (the default, maxUnavailable 1) an old pod is deleted only while fewer than
//! maxUnavailable nodes are without an available pod; `manage` then creates the new pod on the
//! emptied node in a later sync. With maxSurge a new pod is created beside the old one first,
//! and the old one deleted once the new one is available. An old pod that is not available is
//! replaced at once in both modes: keeping it protects nothing.

use super::util::*;
use super::{NodeToPods, Plan};
use crate::model::*;

/// `util.AllowsSurge`: a RollingUpdate whose maxSurge is not zero.
pub fn allows_surge(ds: &DaemonSet) -> bool {
    surge_count(ds, 1) != 0
}

fn rolling(ds: &DaemonSet) -> Option<&RollingUpdateDaemonSet> {
    if ds.on_delete() {
        return None;
    }
    ds.spec.update_strategy.rolling_update.as_ref()
}

/// `util.SurgeCount`.
fn surge_count(ds: &DaemonSet, desired: i32) -> i32 {
    rolling(ds).map_or(0, |ru| scaled_up(ru.max_surge.as_ref(), desired))
}

/// `util.UnavailableCount`.
fn unavailable_count(ds: &DaemonSet, desired: i32) -> i32 {
    rolling(ds).map_or(0, |ru| scaled_up(ru.max_unavailable.as_ref(), desired))
}

/// `findUpdatedPodsOnNode`: the node's one current and one old pod (either may be missing), or
/// `None` if it has more than one of either, which `manage` must clean up first.
fn updated_and_old<'a>(pods: &[&'a Pod], hash: &str, generation: Option<i64>) -> Option<(Option<&'a Pod>, Option<&'a Pod>)> {
    let (mut new, mut old) = (None, None);
    for pod in pods.iter().copied().filter(|p| !p.metadata.is_deleting()) {
        let slot = if is_pod_updated(pod, hash, generation) { &mut new } else { &mut old };
        if slot.is_some() {
            return None;
        }
        *slot = Some(pod);
    }
    Some((new, old))
}

/// `rollingUpdate`. Nodes are walked in name order (upstream walks a Go map, in no order).
pub(super) fn rolling_update(
    ds: &DaemonSet,
    nodes: &[&Node],
    by_node: &NodeToPods,
    tolerations: &[Toleration],
    hash: &str,
    now: Time,
) -> Plan {
    // `updatedDesiredNodeCounts`: every node that should run a pod is counted, with or without one.
    let mut per_node: NodeToPods = by_node.clone();
    let mut desired = 0;
    for node in nodes {
        if node_should_run(node, ds, tolerations).0 {
            desired += 1;
            per_node.entry(node.metadata.name.as_str()).or_default();
        }
    }
    let max_surge = surge_count(ds, desired);
    let mut max_unavailable = unavailable_count(ds, desired);
    if desired > 0 && max_unavailable == 0 && max_surge == 0 {
        max_unavailable = 1;
    }
    let generation = template_generation(ds);
    let available = |p: &Pod| p.is_available(i64::from(ds.spec.min_ready_seconds), now);
    if max_surge == 0 {
        return replace_within_unavailability(&per_node, max_unavailable, hash, generation, available);
    }
    let should_run =
        |name: &str| nodes.iter().find(|n| n.metadata.name.as_str() == name).is_some_and(|n| node_should_run(n, ds, tolerations).0);
    surge(&per_node, max_surge, desired, hash, generation, available, should_run)
}

/// The maxUnavailable half: delete old pods while the unavailable nodes stay within budget.
fn replace_within_unavailability(
    per_node: &NodeToPods,
    max_unavailable: i32,
    hash: &str,
    generation: Option<i64>,
    available: impl Fn(&Pod) -> bool,
) -> Plan {
    let mut unavailable = 0;
    let mut replace_now = Vec::new();
    let mut candidates = Vec::new();
    for pods in per_node.values() {
        match updated_and_old(pods, hash, generation) {
            // `manage` creates the missing pod, or deletes the extra one: unavailable meanwhile.
            None | Some((None, None)) | Some((Some(_), Some(_))) => unavailable += 1,
            Some((Some(new), None)) => unavailable += i32::from(!available(new)),
            Some((None, Some(old))) if !available(old) => replace_now.push(ObjectKey::of(Kind::Pod, &old.metadata)),
            Some((None, Some(_))) if unavailable >= max_unavailable => {}
            Some((None, Some(old))) => candidates.push(ObjectKey::of(Kind::Pod, &old.metadata)),
        }
    }
    let room = (max_unavailable - unavailable).max(0) as usize;
    replace_now.extend(candidates.into_iter().take(room));
    Plan { pods_to_delete: replace_now, ..Plan::default() }
}

/// The maxSurge half: a new pod beside each old one, up to maxSurge at a time still becoming
/// available; an old pod goes once the new one beside it is available.
fn surge(
    per_node: &NodeToPods,
    max_surge: i32,
    desired: i32,
    hash: &str,
    generation: Option<i64>,
    available: impl Fn(&Pod) -> bool,
    should_run: impl Fn(&str) -> bool,
) -> Plan {
    let (mut surging, mut num_available) = (0, 0);
    let mut delete = Vec::new();
    let mut should_not_run = Vec::new();
    let mut allowed = Vec::new();
    let mut candidates = Vec::new();
    for (&node, pods) in per_node {
        let Some((new, old)) = updated_and_old(pods, hash, generation) else {
            surging += 1;
            continue;
        };
        num_available += i32::from(old.or(new).is_some_and(&available));
        match (new, old) {
            (_, None) => {}
            (None, Some(old)) if !available(old) => {
                if should_run(node) {
                    allowed.push(node.to_string());
                } else {
                    delete.push(ObjectKey::of(Kind::Pod, &old.metadata));
                }
            }
            (None, Some(old)) => {
                if !should_run(node) {
                    should_not_run.push(ObjectKey::of(Kind::Pod, &old.metadata));
                } else if surging < max_surge {
                    candidates.push(node.to_string());
                }
            }
            (Some(new), Some(_)) if !available(new) => surging += 1,
            (Some(_), Some(old)) => delete.push(ObjectKey::of(Kind::Pod, &old.metadata)),
        }
    }
    // A pod on a node that should no longer run one goes only once enough pods elsewhere are
    // available, so a surging DaemonSet never drops below what it promised.
    let deletable = (num_available - desired).max(0) as usize;
    delete.extend(should_not_run.into_iter().take(deletable));
    let room = (max_surge - surging).max(0) as usize;
    allowed.extend(candidates.into_iter().take(room));
    Plan { nodes_needing_pods: allowed, pods_to_delete: delete, requeue_after: None }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    fn pod(name: &str, hash: &str, ready: bool) -> Pod {
        let mut p = Pod::default();
        p.metadata.name = name.into();
        p.metadata.namespace = "default".into();
        p.metadata.labels = StringMap::from([(CONTROLLER_REVISION_HASH.to_string(), hash.to_string())]).into();
        if ready {
            p.status.conditions.push(PodCondition {
                type_: "Ready".into(),
                status: "True".into(),
                last_transition_time: Some(Time(0)),
                ..Default::default()
            });
        }
        p
    }

    fn names(keys: &[ObjectKey]) -> Vec<&str> {
        keys.iter().map(|k| k.name.as_str()).collect()
    }

    #[test]
    fn without_surge_old_pods_go_one_unavailable_node_at_a_time() {
        let (a, b, c) = (pod("a", "old", true), pod("b", "old", true), pod("c", "old", true));
        let per_node: NodeToPods = BTreeMap::from([("n1", vec![&a]), ("n2", vec![&b]), ("n3", vec![&c])]);
        let plan = replace_within_unavailability(&per_node, 1, "new", None, |p| p.is_ready());
        assert_eq!(names(&plan.pods_to_delete), ["a"]);
        // n1's new pod is not available yet: nothing more goes.
        let a2 = pod("a2", "new", false);
        let per_node: NodeToPods = BTreeMap::from([("n1", vec![&a2]), ("n2", vec![&b]), ("n3", vec![&c])]);
        assert!(replace_within_unavailability(&per_node, 1, "new", None, |p| p.is_ready()).pods_to_delete.is_empty());
        // With a budget of 2, two go; an unavailable old pod goes whatever the budget.
        let broken = pod("c", "old", false);
        let per_node: NodeToPods = BTreeMap::from([("n1", vec![&a]), ("n2", vec![&b]), ("n3", vec![&broken])]);
        assert_eq!(names(&replace_within_unavailability(&per_node, 1, "new", None, |p| p.is_ready()).pods_to_delete), ["c", "a"]);
    }

    #[test]
    fn with_surge_a_new_pod_comes_first_and_the_old_goes_when_it_is_available() {
        let (a, b) = (pod("a", "old", true), pod("b", "old", true));
        let per_node: NodeToPods = BTreeMap::from([("n1", vec![&a]), ("n2", vec![&b])]);
        let plan = surge(&per_node, 1, 2, "new", None, |p| p.is_ready(), |_| true);
        assert_eq!(plan.nodes_needing_pods, ["n1"]);
        assert!(plan.pods_to_delete.is_empty());
        let a2 = pod("a2", "new", true);
        let per_node: NodeToPods = BTreeMap::from([("n1", vec![&a, &a2]), ("n2", vec![&b])]);
        let plan = surge(&per_node, 1, 2, "new", None, |p| p.is_ready(), |_| true);
        assert_eq!(names(&plan.pods_to_delete), ["a"]);
        assert_eq!(plan.nodes_needing_pods, ["n2"]);
    }
}
