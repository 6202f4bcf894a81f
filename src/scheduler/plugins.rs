//! The default profile's filter and score plugins (pkg/scheduler/framework/plugins), as pure
//! functions of a pod and one node's cached state.
//!
//! Filters run in the upstream order — NodeUnschedulable, NodeName, TaintToleration,
//! NodeAffinity, NodeResourcesFit — and the first one that rejects a node decides its reason, as
//! `RunFilterPlugins` stops at the first failure. Scores are each plugin's raw number, later
//! normalised to 0–100 and multiplied by the plugin's weight. The reason strings are upstream's,
//! because `kubectl describe pod` shows them to people verbatim.
//!
//! Left out on purpose: InterPodAffinity (kubeloop's pods carry no pod affinity), ImageLocality
//! (the scheduler does not see kubelets' image caches here), NodePorts and the volume plugins.

use super::cache::{NodeFacts, NodeInfo, PodResources, Resources};
use crate::model::{Allocatable, Node, NodeSelector, Pod, PreferredSchedulingTerm, StringMap, Taint, Toleration};
use std::collections::BTreeMap;
use std::rc::Rc;

/// `framework.MaxNodeScore`.
pub const MAX_NODE_SCORE: i64 = 100;
/// `node.kubernetes.io/unschedulable`, the taint a cordoned node stands for.
pub const TAINT_NODE_UNSCHEDULABLE: &str = "node.kubernetes.io/unschedulable";
/// The topology keys of the system default spreading constraints.
pub const LABEL_HOSTNAME: &str = "kubernetes.io/hostname";
pub const LABEL_ZONE: &str = "topology.kubernetes.io/zone";
/// maxSkew of the system default constraints (podtopologyspread `systemDefaultConstraints`).
pub const HOSTNAME_MAX_SKEW: i64 = 3;
pub const ZONE_MAX_SKEW: i64 = 5;

pub const REASON_UNSCHEDULABLE: &str = "node(s) were unschedulable";
pub const REASON_NODE_NAME: &str = "node(s) didn't match the requested node name";
pub const REASON_NODE_AFFINITY: &str = "node(s) didn't match Pod's node affinity/selector";
pub const REASON_TOO_MANY_PODS: &str = "Too many pods";
pub const REASON_INSUFFICIENT_CPU: &str = "Insufficient cpu";
pub const REASON_INSUFFICIENT_MEMORY: &str = "Insufficient memory";
/// What preemption says of a node where evicting lower-priority pods could help but none exist.
pub const PREEMPTION_NO_VICTIMS: &str = "No preemption victims found for incoming pod";
/// What preemption says of a node rejected by a filter that no eviction can change.
pub const PREEMPTION_NOT_HELPFUL: &str = "Preemption is not helpful for scheduling";

/// The plugins kubeloop's scheduler runs, by their upstream names.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Plugin {
    NodeUnschedulable,
    NodeName,
    TaintToleration,
    NodeAffinity,
    NodeResourcesFit,
    PodTopologySpread,
    NodeResourcesBalancedAllocation,
    /// Its PreFilter: every PersistentVolumeClaim the pod mounts exists and is bound.
    VolumeBinding,
}

impl Plugin {
    /// The score plugins in the default profile's order.
    pub const SCORING: [Plugin; 5] = [
        Plugin::TaintToleration,
        Plugin::NodeAffinity,
        Plugin::NodeResourcesFit,
        Plugin::PodTopologySpread,
        Plugin::NodeResourcesBalancedAllocation,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Plugin::NodeUnschedulable => "NodeUnschedulable",
            Plugin::NodeName => "NodeName",
            Plugin::TaintToleration => "TaintToleration",
            Plugin::NodeAffinity => "NodeAffinity",
            Plugin::NodeResourcesFit => "NodeResourcesFit",
            Plugin::PodTopologySpread => "PodTopologySpread",
            Plugin::NodeResourcesBalancedAllocation => "NodeResourcesBalancedAllocation",
            Plugin::VolumeBinding => "VolumeBinding",
        }
    }

    /// The score weight in the default profile (apis/config/v1 default_plugins.go).
    pub fn weight(self) -> i64 {
        match self {
            Plugin::TaintToleration => 3,
            Plugin::NodeAffinity | Plugin::PodTopologySpread => 2,
            Plugin::NodeResourcesFit | Plugin::NodeResourcesBalancedAllocation => 1,
            Plugin::NodeUnschedulable | Plugin::NodeName | Plugin::VolumeBinding => 0,
        }
    }

    fn bit(self) -> u8 {
        1 << (self as u8)
    }
}

/// A small set of plugins: those that rejected a pod, which decide what cluster events may
/// make it schedulable again (the queue's `UnschedulablePlugins`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PluginSet(u8);

impl PluginSet {
    pub fn insert(&mut self, p: Plugin) {
        self.0 |= p.bit();
    }
    pub fn contains(self, p: Plugin) -> bool {
        self.0 & p.bit() != 0
    }
    pub fn is_empty(self) -> bool {
        self.0 == 0
    }
}

/// Why a filter rejected a node.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FilterFailure {
    /// NodeUnschedulable: the node is cordoned.
    Unschedulable,
    /// NodeName: the pod asked for another node.
    NodeName,
    /// TaintToleration: the first NoSchedule/NoExecute taint the pod does not tolerate, as
    /// its full reason (`node(s) had untolerated taint {key: value}`).
    UntoleratedTaint(Rc<str>),
    /// NodeAffinity: nodeSelector or required node affinity does not match.
    NodeAffinity,
    /// NodeResourcesFit: every resource that does not fit (all are reported, as upstream).
    Insufficient { pods: bool, cpu: bool, memory: bool },
}

impl FilterFailure {
    pub fn plugin(&self) -> Plugin {
        match self {
            FilterFailure::Unschedulable => Plugin::NodeUnschedulable,
            FilterFailure::NodeName => Plugin::NodeName,
            FilterFailure::UntoleratedTaint(_) => Plugin::TaintToleration,
            FilterFailure::NodeAffinity => Plugin::NodeAffinity,
            FilterFailure::Insufficient { .. } => Plugin::NodeResourcesFit,
        }
    }

    /// The status reasons, as the FitError message counts them.
    pub fn reasons(&self) -> Vec<&str> {
        match self {
            FilterFailure::Unschedulable => vec![REASON_UNSCHEDULABLE],
            FilterFailure::NodeName => vec![REASON_NODE_NAME],
            FilterFailure::UntoleratedTaint(reason) => vec![reason],
            FilterFailure::NodeAffinity => vec![REASON_NODE_AFFINITY],
            FilterFailure::Insufficient { pods, cpu, memory } => {
                [(*pods, REASON_TOO_MANY_PODS), (*cpu, REASON_INSUFFICIENT_CPU), (*memory, REASON_INSUFFICIENT_MEMORY)]
                    .into_iter()
                    .filter_map(|(hit, reason)| hit.then_some(reason))
                    .collect()
            }
        }
    }

    /// Whether evicting pods could make the node fit: upstream marks resource shortages
    /// `Unschedulable` (preemption tries the node) and everything else
    /// `UnschedulableAndUnresolvable` (preemption skips it).
    pub fn preemption_might_help(&self) -> bool {
        matches!(self, FilterFailure::Insufficient { .. })
    }
}

/// The controller owner whose pods the system default spreading counts: upstream builds the
/// constraint selector from the owning ReplicaSet's (or ReplicationController's, StatefulSet's)
/// selector, which selects exactly that owner's pods; pods without such an owner are not spread.
pub fn spread_owner_uid(pod: &Pod) -> Option<&str> {
    pod.metadata
        .controller_ref()
        .filter(|r| matches!(r.kind.as_str(), "ReplicaSet" | "ReplicationController" | "StatefulSet"))
        .map(|r| r.uid.as_str())
        .filter(|uid| !uid.is_empty())
}

/// The reason TaintToleration gives for a taint.
pub fn untolerated_taint_reason(taint: &Taint) -> String {
    format!("node(s) had untolerated taint {{{}: {}}}", taint.key, taint.value)
}

/// What the plugins need to know about the pod being scheduled, worked out once per attempt
/// (the PreFilter and PreScore states of one scheduling cycle).
pub struct PodFacts<'a> {
    pub pod: &'a Pod,
    pub resources: PodResources,
    /// The interned controller owner the default spreading counts by, if it applies.
    pub spread_owner: Option<u32>,
    tolerates_unschedulable: bool,
    prefer_no_schedule_tolerations: Vec<&'a Toleration>,
    required: Option<&'a NodeSelector>,
    preferred: &'a [PreferredSchedulingTerm],
    /// The node the pod names, if any (NodeName's PreFilter).
    node_name: Option<&'a str>,
    /// Whether NodeAffinity's filter has anything to check (a nodeSelector or required terms).
    affinity_filter: bool,
}

impl<'a> PodFacts<'a> {
    pub fn new(pod: &'a Pod, spread_owner: Option<u32>) -> Self {
        let node_affinity = pod.spec.affinity.as_ref().and_then(|a| a.node_affinity.as_ref());
        let required = node_affinity.and_then(|n| n.required_during_scheduling_ignored_during_execution.as_ref());
        PodFacts {
            pod,
            resources: PodResources::of(pod),
            spread_owner,
            tolerates_unschedulable: tolerates_unschedulable(&pod.spec.tolerations),
            prefer_no_schedule_tolerations: pod
                .spec
                .tolerations
                .iter()
                .filter(|t| t.effect.is_empty() || t.effect == "PreferNoSchedule")
                .collect(),
            required,
            preferred: node_affinity.map(|n| n.preferred_during_scheduling_ignored_during_execution.as_slice()).unwrap_or(&[]),
            node_name: pod.node_name(),
            affinity_filter: !pod.spec.node_selector.is_empty() || required.is_some(),
        }
    }

    /// No cpu and no memory requested at all: NodeResourcesBalancedAllocation skips such pods
    /// so that many of them do not pile onto one node (kubernetes#129138).
    pub fn is_best_effort(&self) -> bool {
        self.resources.requested == Resources::default()
    }

    /// NodeAffinity's PreScore skips pods without preferred terms.
    pub fn has_preferred_affinity(&self) -> bool {
        !self.preferred.is_empty()
    }
}

/// Whether the tolerations cover `node.kubernetes.io/unschedulable:NoSchedule`.
pub fn tolerates_unschedulable(tolerations: &[Toleration]) -> bool {
    let taint = Taint { key: TAINT_NODE_UNSCHEDULABLE.into(), effect: "NoSchedule".into(), ..Default::default() };
    tolerations.iter().any(|t| t.tolerates(&taint))
}

/// `FindMatchingUntoleratedTaint` with the NoSchedule/NoExecute filter: the first such taint
/// no toleration covers, with its index.
pub fn first_untolerated_taint<'t>(taints: &'t [Taint], tolerations: &[Toleration]) -> Option<(usize, &'t Taint)> {
    taints
        .iter()
        .enumerate()
        .filter(|(_, t)| t.effect == "NoSchedule" || t.effect == "NoExecute")
        .find(|(_, t)| !tolerations.iter().any(|tol| tol.tolerates(t)))
}

/// `nodeSelector` and `requiredDuringSchedulingIgnoredDuringExecution` together
/// (component-helpers' `RequiredNodeAffinity.Match`): every selector label equal, and any term.
pub fn matches_required_affinity(node_selector: &StringMap, required: Option<&NodeSelector>, labels: &StringMap, node_name: &str) -> bool {
    node_selector.iter().all(|(k, v)| labels.get(k) == Some(v))
        && required.is_none_or(|r| r.node_selector_terms.iter().any(|t| t.matches(labels, node_name)))
}

/// The same for a whole pod against a node object (for the queue's hints).
pub fn pod_matches_node_affinity(pod: &Pod, node: &Node) -> bool {
    let required = pod
        .spec
        .affinity
        .as_ref()
        .and_then(|a| a.node_affinity.as_ref())
        .and_then(|n| n.required_during_scheduling_ignored_during_execution.as_ref());
    matches_required_affinity(&pod.spec.node_selector, required, &node.metadata.labels, &node.metadata.name)
}

/// NodeResourcesFit's `fitsRequest`: pods count always, cpu and memory only when requested.
pub fn fits_request(allocatable: &Allocatable, requested: Resources, pod_count: i64, pod: &PodResources) -> Option<FilterFailure> {
    let capacity = Resources { milli_cpu: allocatable.milli_cpu, memory: allocatable.memory };
    fits(capacity, requested, allocatable.pods.saturating_sub(pod_count), pod)
}

/// `fits_request` on a node's capacity, its requests and its room for pods (`NodeFacts`).
#[inline]
fn fits(allocatable: Resources, requested: Resources, pods_room: i64, pod: &PodResources) -> Option<FilterFailure> {
    let want = pod.requested;
    let pods = pods_room < 1;
    let cpu = want.milli_cpu > 0 && want.milli_cpu > allocatable.milli_cpu - requested.milli_cpu;
    let memory = want.memory > 0 && want.memory > allocatable.memory - requested.memory;
    (pods || cpu || memory).then_some(FilterFailure::Insufficient { pods, cpu, memory })
}

/// Runs the filters in order; the first failure is the node's verdict. A plain node (not
/// cordoned, no NoSchedule/NoExecute taint) and a plain pod (no node name, no selector) come
/// down to the resource check on the node's `NodeFacts`, without reading its `NodeInfo` or the
/// node object. Inlined into the search loop, which calls it for hundreds of nodes per cycle.
#[inline]
pub fn run_filters(fit: &NodeFacts, node: &NodeInfo, pod: &PodFacts) -> Result<(), FilterFailure> {
    if fit.cordoned() && !pod.tolerates_unschedulable {
        return Err(FilterFailure::Unschedulable);
    }
    if pod.node_name.is_some_and(|wanted| wanted != &*node.name) {
        return Err(FilterFailure::NodeName);
    }
    if fit.hard_taints() {
        if let Some((i, _)) = first_untolerated_taint(node.taints(), &pod.pod.spec.tolerations) {
            return Err(FilterFailure::UntoleratedTaint(node.taint_reason(i)));
        }
    }
    if pod.affinity_filter && !matches_required_affinity(&pod.pod.spec.node_selector, pod.required, node.labels(), &node.name) {
        return Err(FilterFailure::NodeAffinity);
    }
    match fits(fit.allocatable, fit.requested, fit.pods_room, &pod.resources) {
        Some(failure) => Err(failure),
        None => Ok(()),
    }
}

/// TaintToleration's raw score: PreferNoSchedule taints the pod does not tolerate.
pub fn intolerable_prefer_no_schedule(fit: &NodeFacts, node: &NodeInfo, pod: &PodFacts) -> i64 {
    if !fit.prefer_taints() {
        return 0;
    }
    node.taints()
        .iter()
        .filter(|t| t.effect == "PreferNoSchedule")
        .filter(|t| !pod.prefer_no_schedule_tolerations.iter().any(|tol| tol.tolerates(t)))
        .count() as i64
}

/// NodeAffinity's raw score: the sum of the weights of the preferred terms the node matches.
pub fn preferred_affinity(node: &NodeInfo, pod: &PodFacts) -> i64 {
    pod.preferred.iter().filter(|t| t.weight != 0 && t.preference.matches(node.labels(), &node.name)).map(|t| t.weight as i64).sum()
}

/// `leastRequestedScore` for one resource.
fn least_requested(requested: i64, capacity: i64) -> i64 {
    if capacity == 0 || requested > capacity {
        return 0;
    }
    (capacity - requested) * MAX_NODE_SCORE / capacity
}

/// NodeResourcesFit with the LeastAllocated strategy over cpu and memory (weight 1 each), on
/// requests with the scheduler's non-zero defaults.
#[inline]
pub fn least_allocated(node: &NodeFacts, pod: &PodFacts) -> i64 {
    let used = node.non_zero_requested;
    let want = pod.resources.non_zero;
    let (cpu, memory) = (node.allocatable.milli_cpu, node.allocatable.memory);
    // A resource the node has none of carries no weight.
    match (cpu != 0, memory != 0) {
        (true, true) => (least_requested(used.milli_cpu + want.milli_cpu, cpu) + least_requested(used.memory + want.memory, memory)) / 2,
        (true, false) => least_requested(used.milli_cpu + want.milli_cpu, cpu),
        (false, true) => least_requested(used.memory + want.memory, memory),
        (false, false) => 0,
    }
}

/// NodeResourcesBalancedAllocation: 100 × (1 − the spread of the cpu and memory fractions), on
/// actual requests.
#[inline]
pub fn balanced_allocation(node: &NodeFacts, pod: &PodFacts) -> i64 {
    let used = node.requested;
    let want = pod.resources.requested;
    let fraction = |requested: i64, capacity: i64| (capacity != 0).then(|| (requested as f64 / capacity as f64).min(1.0));
    let cpu = fraction(used.milli_cpu + want.milli_cpu, node.allocatable.milli_cpu);
    let memory = fraction(used.memory + want.memory, node.allocatable.memory);
    // With two resources the standard deviation is half their difference; with one, zero.
    let std = match (cpu, memory) {
        (Some(a), Some(b)) => ((a - b) / 2.0).abs(),
        _ => 0.0,
    };
    ((1.0 - std) * MAX_NODE_SCORE as f64) as i64
}

/// PodTopologySpread's `topologyNormalizingWeight`: ln(number of topology values + 2).
pub fn topology_normalizing_weight(size: usize) -> f64 {
    ((size + 2) as f64).ln()
}

/// PodTopologySpread's raw score for one node under the system default constraints: each
/// constraint whose topology label the node carries adds `count × weight + (maxSkew − 1)`
/// (`None` for a constraint whose label the node lacks).
pub fn spread_score(host_count: Option<i64>, zone_count: Option<i64>, host_weight: f64, zone_weight: f64) -> i64 {
    let mut score = 0.0;
    if let Some(count) = host_count {
        score += count as f64 * host_weight + (HOSTNAME_MAX_SKEW - 1) as f64;
    }
    if let Some(count) = zone_count {
        score += count as f64 * zone_weight + (ZONE_MAX_SKEW - 1) as f64;
    }
    round_half_away(score)
}

/// `math.Round` (half away from zero) as an integer, without a libm call for the scores'
/// usual range: for 0 ≤ x < 2⁵², `x − trunc(x)` is exact, so comparing it with ½ decides
/// exactly as `f64::round` does.
fn round_half_away(x: f64) -> i64 {
    if (0.0..4.0e15).contains(&x) {
        let t = x as i64;
        if x - t as f64 >= 0.5 {
            t + 1
        } else {
            t
        }
    } else {
        x.round() as i64
    }
}

/// `helper.DefaultNormalizeScore`: scale so the best is 100, reversed for "fewer is better".
pub fn default_normalize(scores: &mut [i64], reverse: bool) {
    let max = scores.iter().copied().max().unwrap_or(0);
    for s in scores.iter_mut() {
        *s = default_normalized(*s, max, reverse);
    }
}

/// One score under `DefaultNormalizeScore`, given the highest raw score of the cycle (a cycle
/// that tracks the highest while it scores normalises without another pass over the scores).
#[inline]
pub fn default_normalized(score: i64, max: i64, reverse: bool) -> i64 {
    let max = max.max(0);
    match (max, reverse) {
        (0, true) => MAX_NODE_SCORE,
        (0, false) => score,
        (_, true) => MAX_NODE_SCORE - MAX_NODE_SCORE * score / max,
        (_, false) => MAX_NODE_SCORE * score / max,
    }
}

/// PodTopologySpread's NormalizeScore: fewer matching pods score higher, 100 when all are 0.
pub fn spread_normalize(scores: &mut [i64]) {
    let min = scores.iter().copied().min().unwrap_or(0);
    let max = scores.iter().copied().max().unwrap_or(0);
    for s in scores.iter_mut() {
        *s = spread_normalized(*s, min, max);
    }
}

/// One score under PodTopologySpread's NormalizeScore, given the cycle's lowest and highest.
#[inline]
pub fn spread_normalized(score: i64, min: i64, max: i64) -> i64 {
    let max = max.max(0);
    if max == 0 {
        MAX_NODE_SCORE
    } else {
        MAX_NODE_SCORE * (max + min - score) / max
    }
}

/// `numFeasibleNodesToFind`: how many feasible nodes end the search. Under 100 nodes, all;
/// else `percentageOfNodesToScore` of them (adaptive when 0: 50% − 1% per 125 nodes, at least
/// 5%), and never fewer than 100.
pub fn num_feasible_nodes_to_find(percentage_of_nodes_to_score: u32, num_all_nodes: usize) -> usize {
    const MIN_FEASIBLE_NODES_TO_FIND: usize = 100;
    const MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND: usize = 5;
    if num_all_nodes < MIN_FEASIBLE_NODES_TO_FIND || percentage_of_nodes_to_score >= 100 {
        return num_all_nodes;
    }
    let percentage = match percentage_of_nodes_to_score as usize {
        0 => 50usize.saturating_sub(num_all_nodes / 125).max(MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND),
        p => p,
    };
    (num_all_nodes * percentage / 100).max(MIN_FEASIBLE_NODES_TO_FIND)
}

/// Whether a node's scheduling-relevant properties changed (upstream classifies node updates
/// into spec.unschedulable, allocatable, label and taint changes; a heartbeat is none of them).
pub fn node_scheduling_properties_changed(old: &Node, new: &Node) -> bool {
    old.spec.unschedulable != new.spec.unschedulable
        || old.spec.taints != new.spec.taints
        || old.metadata.labels != new.metadata.labels
        || old.status.allocatable != new.status.allocatable
}

/// The queueing hints of the rejecting plugins for a node added (`old` = None) or updated: could
/// this change make the pod schedulable? Each plugin answers only for its own filter, comparing
/// the node before and after (NodeUnschedulable, TaintToleration, NodeAffinity and
/// NodeResourcesFit `isSchedulableAfterNodeChange`).
pub fn node_event_may_help(pod: &Pod, rejected_by: PluginSet, old: Option<&Node>, new: &Node) -> bool {
    let schedulable = |n: &Node| !n.spec.unschedulable || tolerates_unschedulable(&pod.spec.tolerations);
    let tolerated = |n: &Node| first_untolerated_taint(&n.spec.taints, &pod.spec.tolerations).is_none();
    let fits_empty = |n: &Node| fits_request(&n.allocatable(), Resources::default(), 0, &PodResources::of(pod)).is_none();
    let grew = |a: &Node, b: &Node| {
        let (a, b, want) = (a.allocatable(), b.allocatable(), PodResources::of(pod).requested);
        b.pods > a.pods || (want.milli_cpu > 0 && b.milli_cpu > a.milli_cpu) || (want.memory > 0 && b.memory > a.memory)
    };
    let helps = |plugin: Plugin| match plugin {
        Plugin::NodeUnschedulable => schedulable(new) && !old.is_some_and(schedulable),
        Plugin::TaintToleration => tolerated(new) && !old.is_some_and(tolerated),
        Plugin::NodeAffinity => pod_matches_node_affinity(pod, new) && !old.is_some_and(|o| pod_matches_node_affinity(pod, o)),
        Plugin::NodeResourcesFit => fits_empty(new) && old.is_none_or(|o| grew(o, new)),
        Plugin::NodeName => old.is_none(),
        Plugin::PodTopologySpread | Plugin::NodeResourcesBalancedAllocation | Plugin::VolumeBinding => false,
    };
    [Plugin::NodeUnschedulable, Plugin::NodeName, Plugin::TaintToleration, Plugin::NodeAffinity, Plugin::NodeResourcesFit]
        .into_iter()
        .any(|p| rejected_by.contains(p) && helps(p))
}

/// The hint for an assigned pod leaving a node (deleted, or finished): only NodeResourcesFit
/// cares, since that frees capacity.
pub fn assigned_pod_deleted_may_help(rejected_by: PluginSet) -> bool {
    rejected_by.contains(Plugin::NodeResourcesFit)
}

/// The VolumeBinding plugin's PreFilter: why the pod's claims keep it from every node, if they
/// do — a claim that does not exist or is being deleted, or one not yet bound. (Every class is
/// taken as binding Immediately: kubeloop's only provisioner does, and a WaitForFirstConsumer
/// claim would wait here too.)
pub fn volume_binding_prefilter(pod: &Pod, claims: &crate::runtime::store::Store) -> Option<String> {
    let mut unbound = false;
    for v in &pod.spec.volumes {
        let Some(source) = &v.persistent_volume_claim else { continue };
        let key = crate::model::ObjectKey::new(crate::model::Kind::PersistentVolumeClaim, &pod.metadata.namespace, &source.claim_name);
        match claims.get(&key).and_then(|o| o.as_persistent_volume_claim()) {
            None => return Some(format!("persistentvolumeclaim {:?} not found", source.claim_name)),
            Some(c) if c.metadata.is_deleting() => return Some(format!("persistentvolumeclaim {:?} is being deleted", source.claim_name)),
            Some(c) => unbound |= !c.is_bound(),
        }
    }
    unbound.then(|| "pod has unbound immediate PersistentVolumeClaims".to_string())
}

/// The FitError message of a PreFilter rejection: its reason alone, and preemption cannot help on
/// any node.
pub fn prefilter_error_message(num_all_nodes: usize, reason: &str) -> String {
    format!(
        "0/{num_all_nodes} nodes are available: {reason}. preemption: 0/{num_all_nodes} nodes are available: {num_all_nodes} {PREEMPTION_NOT_HELPFUL}."
    )
}

/// `"N reason"` strings for a histogram, sorted as strings the way `sortReasonsHistogram` does.
fn histogram(counts: BTreeMap<&str, usize>) -> String {
    let mut parts: Vec<String> = counts.into_iter().map(|(reason, n)| format!("{n} {reason}")).collect();
    crate::sort::sort(&mut parts);
    parts.join(", ")
}

/// The FitError message with the default preemption plugin's verdict appended:
/// `0/3 nodes are available: 3 Insufficient cpu. preemption: 0/3 nodes are available: 3 No
/// preemption victims found for incoming pod.` kubeloop has no priority classes in play, so
/// preemption never finds victims: nodes short of resources get "No preemption victims found",
/// nodes rejected for any other reason "Preemption is not helpful for scheduling".
pub fn fit_error_message<'a>(num_all_nodes: usize, failures: impl Iterator<Item = &'a FilterFailure>) -> String {
    let mut reasons: BTreeMap<&str, usize> = BTreeMap::new();
    let mut preemption: BTreeMap<&str, usize> = BTreeMap::new();
    for failure in failures {
        for reason in failure.reasons() {
            *reasons.entry(reason).or_default() += 1;
        }
        let verdict = if failure.preemption_might_help() { PREEMPTION_NO_VICTIMS } else { PREEMPTION_NOT_HELPFUL };
        *preemption.entry(verdict).or_default() += 1;
    }
    let mut message = format!("0/{num_all_nodes} nodes are available:");
    if !reasons.is_empty() {
        message += &format!(" {}.", histogram(reasons));
    }
    if !preemption.is_empty() {
        message += &format!(" preemption: 0/{num_all_nodes} nodes are available: {}.", histogram(preemption));
    }
    message
}

#[cfg(test)]
mod tests {
    use super::*;

    fn insufficient(cpu: bool, memory: bool) -> FilterFailure {
        FilterFailure::Insufficient { pods: false, cpu, memory }
    }

    #[test]
    fn percentage_of_nodes_to_score_adapts_with_cluster_size() {
        let cases = [(3, 3), (99, 99), (100, 100), (500, 230), (1000, 420), (5000, 500), (6000, 300), (10_000, 500), (20_000, 1000)];
        for (nodes, want) in cases {
            assert_eq!(num_feasible_nodes_to_find(0, nodes), want, "{nodes} nodes");
        }
        assert_eq!(num_feasible_nodes_to_find(100, 5000), 5000, "100% scores every node");
        assert_eq!(num_feasible_nodes_to_find(1, 5000), 100, "never fewer than 100");
    }

    #[test]
    fn fit_error_counts_reasons_per_node_and_sorts_them() {
        let failures = [insufficient(true, false), insufficient(true, false), insufficient(true, false)];
        assert_eq!(
            fit_error_message(3, failures.iter()),
            "0/3 nodes are available: 3 Insufficient cpu. preemption: 0/3 nodes are available: 3 No preemption victims found for incoming pod."
        );
        let mixed = [FilterFailure::Unschedulable, insufficient(true, true), insufficient(true, false)];
        assert_eq!(
            fit_error_message(3, mixed.iter()),
            "0/3 nodes are available: 1 Insufficient memory, 1 node(s) were unschedulable, 2 Insufficient cpu. \
             preemption: 0/3 nodes are available: 1 Preemption is not helpful for scheduling, 2 No preemption victims found for incoming pod."
        );
        let taint = FilterFailure::UntoleratedTaint(
            untolerated_taint_reason(&Taint {
                key: "node.kubernetes.io/unreachable".into(),
                effect: "NoSchedule".into(),
                ..Default::default()
            })
            .into(),
        );
        assert_eq!(
            fit_error_message(1, [taint].iter()),
            "0/1 nodes are available: 1 node(s) had untolerated taint {node.kubernetes.io/unreachable: }. preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling."
        );
    }

    #[test]
    fn histogram_sorts_as_strings_like_upstream() {
        // "10 …" sorts before "2 …": upstream sorts the formatted strings, not the counts.
        let counts: BTreeMap<&str, usize> = [("Insufficient cpu", 2), ("node(s) were unschedulable", 10)].into();
        assert_eq!(histogram(counts), "10 node(s) were unschedulable, 2 Insufficient cpu");
    }

    #[test]
    fn fits_request_reports_every_shortage() {
        let alloc = Allocatable { milli_cpu: 1000, memory: 1 << 30, pods: 2 };
        let pod = PodResources {
            requested: Resources { milli_cpu: 600, memory: 1 << 29 },
            non_zero: Resources { milli_cpu: 600, memory: 1 << 29 },
        };
        assert_eq!(fits_request(&alloc, Resources::default(), 0, &pod), None);
        assert_eq!(fits_request(&alloc, Resources { milli_cpu: 500, memory: 0 }, 1, &pod), Some(insufficient(true, false)));
        let full = fits_request(&alloc, Resources { milli_cpu: 500, memory: 1 << 30 }, 2, &pod).expect("does not fit");
        assert_eq!(full.reasons(), vec!["Too many pods", "Insufficient cpu", "Insufficient memory"]);
        // A pod requesting nothing only needs a pod slot.
        assert_eq!(fits_request(&alloc, Resources { milli_cpu: 1000, memory: 1 << 30 }, 1, &PodResources::default()), None);
    }

    #[test]
    fn normalizers_match_upstream_arithmetic() {
        let mut taints = [0, 1, 2];
        default_normalize(&mut taints, true);
        assert_eq!(taints, [100, 50, 0]);
        let mut none = [0, 0];
        default_normalize(&mut none, true);
        assert_eq!(none, [100, 100]);
        let mut affinity = [0, 0];
        default_normalize(&mut affinity, false);
        assert_eq!(affinity, [0, 0]);
        let mut spread = [6, 8, 10];
        spread_normalize(&mut spread);
        assert_eq!(spread, [100, 80, 60]);
    }

    #[test]
    fn rounding_matches_f64_round() {
        for x in [0.0, 0.49999999999999994, 0.5, 1.5, 2.5, 8.48, 6.999999999999999, 1e15 + 0.5, -2.5, -0.4, 5e15 + 1.0, f64::NAN] {
            assert_eq!(round_half_away(x), x.round() as i64, "{x}");
        }
    }

    #[test]
    fn spread_score_uses_log_weights_and_max_skew() {
        // 2 filtered nodes in one zone: hostname weight ln(4), zone weight ln(3).
        let (wh, wz) = (topology_normalizing_weight(2), topology_normalizing_weight(1));
        assert_eq!(spread_score(Some(0), Some(0), wh, wz), 6);
        assert_eq!(spread_score(Some(1), Some(1), wh, wz), 8); // 1.386 + 2 + 1.099 + 4 = 8.48
        assert_eq!(spread_score(Some(2), None, wh, wz), 5);
        assert_eq!(spread_score(None, None, wh, wz), 0, "a node without either label");
        // 2.77 + 2
    }

    #[test]
    fn resource_scores_follow_upstream_formulas() {
        use crate::model::{Container, Kind, Object, ObjectKey, Quantity, ResourceRequirements};
        use crate::scheduler::cache::Cache;
        let with_requests = |cpu: &str, memory: &str| {
            let mut p = Pod::default();
            let requests = [("cpu".to_string(), Quantity::new(cpu)), ("memory".to_string(), Quantity::new(memory))].into();
            p.spec.containers = vec![Container {
                name: "c".into(),
                resources: ResourceRequirements { requests, ..Default::default() },
                ..Default::default()
            }]
            .into();
            p
        };
        let mut node = Node::default();
        node.metadata.name = "n1".into();
        for (k, v) in [("cpu", "4"), ("memory", "8Gi"), ("pods", "110")] {
            node.status.allocatable.insert(k.into(), Quantity::new(v));
        }
        let mut cache = Cache::new();
        cache.set_node(&Rc::new(Object::Node(node)));
        cache.add_pod(&ObjectKey::new(Kind::Pod, "default", "running"), &with_requests("1", "2Gi"), "n1", false);
        let info = cache.slot_of("n1").map(|slot| cache.facts(slot)).expect("node");
        let incoming = with_requests("1", "0");
        let facts = PodFacts::new(&incoming, None);
        // cpu 2/4 and memory 2Gi/8Gi: LeastAllocated (50 + 75) / 2; balance 100 × (1 − |0.5 − 0.25| / 2).
        assert_eq!(least_allocated(info, &facts), 62);
        assert_eq!(balanced_allocation(info, &facts), 87);
        assert!(!facts.is_best_effort());
        // A pod with no requests scores LeastAllocated with 100m and 200Mi, and is best-effort.
        let empty = Pod {
            spec: crate::model::PodSpec { containers: vec![Container::default()].into(), ..Default::default() }.into(),
            ..Default::default()
        };
        let facts = PodFacts::new(&empty, None);
        assert_eq!(least_allocated(info, &facts), (72 + 72) / 2);
        assert!(facts.is_best_effort());
    }

    #[test]
    fn untolerated_taints_skip_prefer_no_schedule() {
        let taints = vec![
            Taint { key: "soft".into(), effect: "PreferNoSchedule".into(), ..Default::default() },
            Taint { key: "dedicated".into(), value: "gpu".into(), effect: "NoSchedule".into(), ..Default::default() },
        ];
        let (i, t) = first_untolerated_taint(&taints, &[]).expect("untolerated");
        assert_eq!((i, untolerated_taint_reason(t)), (1, "node(s) had untolerated taint {dedicated: gpu}".to_string()));
        let tol = Toleration {
            key: "dedicated".into(),
            operator: Some("Equal".into()),
            value: "gpu".into(),
            effect: "NoSchedule".into(),
            ..Default::default()
        };
        assert_eq!(first_untolerated_taint(&taints, &[tol]), None);
    }
}
