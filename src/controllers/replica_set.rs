//! The ReplicaSet controller (pkg/controller/replicaset): keeps N pods matching a template alive.
//!
//! It counts the active pods a ReplicaSet owns (adopting matching orphans), and creates or deletes
//! the difference — at most 500 per sync (BurstReplicas), creates in slow-start batches of
//! 1, 2, 4, 8 …, deletes ranked so the least useful pods go first. After acting it waits for its
//! informer to show the result (expectations) before it counts again.
//!
//! kube-controller-manager runs the same code for ReplicationControllers (pkg/controller/
//! replication): each is converted to a ReplicaSet to reason about, and its status written back
//! on the ReplicationController. [`Owner`] is which of the two kinds an instance keeps.

use super::{Action, Caches, Call, Controller, Outcome, Sync};
use crate::api::{ApiRequest, DeleteRequest};
use crate::model::*;
use crate::runtime::events::{reference_to, EventSpec};
use crate::runtime::expectations::Expectations;
use crate::runtime::informer::Delta;
use std::collections::BTreeMap;

/// `BurstReplicas`: the most creates or deletes one sync may issue.
pub const BURST_REPLICAS: usize = 500;
/// The first slow-start batch; each next batch doubles.
pub const SLOW_START_INITIAL_BATCH: usize = 1;
/// The annotation that lets users pick which pods go first on scale-down.
pub const POD_DELETION_COST: &str = "controller.kubernetes.io/pod-deletion-cost";

/// The kind a [`ReplicaSetController`] keeps: what it watches, names its pods' owner
/// references and events after, and writes status to.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Owner {
    #[default]
    ReplicaSet,
    ReplicationController,
}

impl Owner {
    pub fn kind(self) -> Kind {
        match self {
            Owner::ReplicaSet => Kind::ReplicaSet,
            Owner::ReplicationController => Kind::ReplicationController,
        }
    }
    fn api_version(self) -> &'static str {
        match self {
            Owner::ReplicaSet => "apps/v1",
            Owner::ReplicationController => "v1",
        }
    }
    /// The object as the ReplicaSet the controller reasons about.
    fn view(self, object: &Object) -> Option<std::borrow::Cow<'_, ReplicaSet>> {
        match (self, object) {
            (Owner::ReplicaSet, Object::ReplicaSet(rs)) => Some(std::borrow::Cow::Borrowed(rs)),
            (Owner::ReplicationController, Object::ReplicationController(rc)) => Some(std::borrow::Cow::Owned(rc.as_replica_set())),
            _ => None,
        }
    }
    /// The status write for `object`, with the counts computed on its ReplicaSet view.
    fn with_status(self, object: &Object, rs: &ReplicaSet, status: ReplicaSetStatus) -> Object {
        match object {
            Object::ReplicationController(rc) => Object::ReplicationController(rc.with_replica_set_status(&status)),
            _ => {
                let mut next = rs.clone();
                next.status = status;
                Object::ReplicaSet(next)
            }
        }
    }
}

#[derive(Debug, Default)]
pub struct ReplicaSetController {
    owner: Owner,
    expectations: Expectations,
}

impl ReplicaSetController {
    pub fn new() -> Self {
        Self::default()
    }
    /// The replication controller: this same loop, keeping ReplicationControllers.
    pub fn for_replication_controllers() -> Self {
        ReplicaSetController { owner: Owner::ReplicationController, expectations: Expectations::default() }
    }
    pub fn expectations(&self) -> &Expectations {
        &self.expectations
    }

    /// The ReplicaSet that controls `pod`, if it exists in the cache with the referenced UID.
    fn controlling_rs(&self, caches: &Caches, pod: &Object) -> Option<ObjectKey> {
        let kind = self.owner.kind();
        let owner = pod.meta().controller_ref().filter(|r| r.kind == kind.as_str())?;
        let key = ObjectKey::new(kind, &pod.meta().namespace, &owner.name);
        caches[kind].get(&key).filter(|rs| rs.meta().uid == owner.uid).map(|_| key)
    }

    /// ReplicaSets whose selector matches an orphan pod (candidates to adopt it).
    fn matching_replica_sets(&self, caches: &Caches, pod: &Object) -> Vec<ObjectKey> {
        let kind = self.owner.kind();
        caches[kind]
            .in_namespace(&pod.meta().namespace)
            .filter_map(|o| self.owner.view(o))
            .filter(|rs| !rs.spec.selector.is_empty() && rs.spec.selector.matches(&pod.meta().labels))
            .map(|rs| ObjectKey::of(kind, &rs.metadata))
            .collect()
    }

    fn pod_keys_to_enqueue(&mut self, caches: &Caches, pod: &Object, deleted: bool) -> Vec<ObjectKey> {
        match self.controlling_rs(caches, pod) {
            Some(rs) => {
                if deleted || pod.meta().is_deleting() {
                    self.expectations.deletion_observed(&rs, &pod.key());
                }
                vec![rs]
            }
            None if pod.meta().controller_ref().is_none() && !deleted => self.matching_replica_sets(caches, pod),
            None => Vec::new(),
        }
    }
}

impl Controller for ReplicaSetController {
    fn name(&self) -> &'static str {
        match self.owner {
            Owner::ReplicaSet => "replicaset-controller",
            Owner::ReplicationController => "replicationcontroller-controller",
        }
    }
    fn event_source(&self) -> &'static str {
        match self.owner {
            Owner::ReplicaSet => "replicaset-controller",
            Owner::ReplicationController => "replication-controller",
        }
    }
    fn watches(&self) -> &'static [Kind] {
        match self.owner {
            Owner::ReplicaSet => &[Kind::Pod, Kind::ReplicaSet],
            Owner::ReplicationController => &[Kind::Pod, Kind::ReplicationController],
        }
    }

    fn on_delta(&mut self, caches: &Caches, delta: &Delta, _now: Time) -> Vec<ObjectKey> {
        let object = delta.object();
        let owner_kind = self.owner.kind();
        match (object.kind(), delta) {
            (kind, Delta::Deleted(o)) if kind == owner_kind => {
                self.expectations.forget(&o.key());
                vec![o.key()]
            }
            (kind, _) if kind == owner_kind => vec![object.key()],
            (Kind::Pod, Delta::Added(pod)) => {
                let keys = self.pod_keys_to_enqueue(caches, pod, false);
                if !pod.meta().is_deleting() {
                    if let Some(rs) = self.controlling_rs(caches, pod) {
                        self.expectations.creation_observed(&rs);
                    }
                }
                keys
            }
            (Kind::Pod, Delta::Updated { old, new }) => {
                let mut keys = self.pod_keys_to_enqueue(caches, new, false);
                // A pod whose owner or labels changed may have left another ReplicaSet.
                if old.meta().controller_ref() != new.meta().controller_ref() || old.meta().labels != new.meta().labels {
                    keys.extend(self.controlling_rs(caches, old));
                }
                keys.sort();
                keys.dedup();
                keys
            }
            (Kind::Pod, Delta::Deleted(pod)) => self.pod_keys_to_enqueue(caches, pod, true),
            _ => Vec::new(),
        }
    }

    fn reconcile(&mut self, key: &ObjectKey, caches: &Caches, now: Time) -> Sync {
        let found = caches[self.owner.kind()].get(key);
        let Some((object, rs)) = found.and_then(|o| Some((&**o, self.owner.view(o)?))) else {
            self.expectations.forget(key);
            return Sync::nothing();
        };
        let rs = &*rs;
        let needs_sync = self.expectations.satisfied(key, now) && !rs.metadata.is_deleting();
        let (owned, adoptions) = claim_pods(caches, rs, &self.owner_reference(rs));
        let active: Vec<&Pod> = owned.iter().copied().filter(|p| is_pod_active(p)).collect();
        let mut steps: Vec<Vec<Call>> = vec![adoptions];
        let desired = rs.spec.replicas.unwrap_or(1).max(0) as usize;
        let mut summary = format!("{} {}: {} of {desired}", self.owner.kind().as_str(), rs.metadata.name, active.len());
        if needs_sync {
            let (manage, words) = self.manage_replicas(key, (object, rs), &active, caches, now);
            steps.extend(manage);
            if let Some(w) = words {
                summary = format!("{summary}, {w}");
            }
        } else {
            let (adds, dels) = self.expectations.pending(key);
            summary = format!("{summary}, waiting to observe {adds} creations and {dels} deletions");
        }
        let status = calculate_status(rs, &owned, now);
        let mut then = Action::AwaitChange;
        if status != rs.status {
            steps.push(vec![Call::new(ApiRequest::UpdateStatus(self.owner.with_status(object, rs, status.clone())))]);
        }
        let min_ready = rs.spec.min_ready_seconds;
        if min_ready > 0 && status.ready_replicas == desired as i32 && status.available_replicas != status.ready_replicas {
            then = Action::RequeueAfter(Duration::secs(min_ready as u64));
        }
        let acted = steps.iter().any(|s| !s.is_empty());
        let mut sync = if acted { Sync::with_steps(steps, summary) } else { Sync { summary: Some(summary), ..Sync::nothing() } };
        sync.then = then;
        sync
    }

    fn on_outcome(&mut self, key: &ObjectKey, call: &Call, outcome: &Outcome) {
        super::forget_failed_call(&mut self.expectations, key, call, outcome);
    }

    fn reset(&mut self) {
        self.expectations.clear();
    }
}

impl ReplicaSetController {
    /// `manageReplicas`: the creates or deletes that close the gap, and the decision in words.
    fn manage_replicas(
        &mut self,
        key: &ObjectKey,
        (object, rs): (&Object, &ReplicaSet),
        active: &[&Pod],
        caches: &Caches,
        now: Time,
    ) -> (Vec<Vec<Call>>, Option<String>) {
        let desired = rs.spec.replicas.unwrap_or(1).max(0) as usize;
        if active.len() < desired {
            let n = (desired - active.len()).min(BURST_REPLICAS);
            self.expectations.expect_creations(key, n, now);
            let reference = reference_to(object);
            let owner = self.owner_reference(rs);
            let calls: Vec<Call> = (0..n)
                .map(|_| {
                    Call::new(ApiRequest::Create(Object::Pod(pod_from_template_of(rs, owner.clone()))))
                        .on_success(EventSpec::normal(reference.clone(), "SuccessfulCreate", "Created pod: {name}"))
                        .on_failure(EventSpec::warning(reference.clone(), "FailedCreate", "Error creating: "))
                })
                .collect();
            return (slow_start_batches(calls), Some(format!("creating {n}")));
        }
        if active.len() > desired {
            let n = (active.len() - desired).min(BURST_REPLICAS);
            let related = related_pods(caches, rs);
            let victims = pods_to_delete(active, &related, n, now);
            let keys: Vec<ObjectKey> = victims.iter().map(|p| ObjectKey::of(Kind::Pod, &p.metadata)).collect();
            self.expectations.expect_deletions(key, keys, now);
            let reference = reference_to(object);
            let calls = victims
                .iter()
                .map(|p| {
                    let pod_key = ObjectKey::of(Kind::Pod, &p.metadata);
                    Call::new(ApiRequest::Delete(DeleteRequest { uid: Some(p.metadata.uid.to_string()), ..DeleteRequest::new(pod_key) }))
                        .on_success(EventSpec::normal(reference.clone(), "SuccessfulDelete", format!("Deleted pod: {}", p.metadata.name)))
                        .on_failure(EventSpec::warning(
                            reference.clone(),
                            "FailedDelete",
                            format!("Error deleting pod {}: ", p.metadata.name),
                        ))
                })
                .collect();
            return (vec![calls], Some(format!("deleting {n}")));
        }
        (Vec::new(), None)
    }

    /// The controller reference its pods carry.
    fn owner_reference(&self, rs: &ReplicaSet) -> OwnerReference {
        OwnerReference { api_version: self.owner.api_version().into(), kind: self.owner.kind().as_str().into(), ..owner_reference(rs) }
    }
}

/// `controller.IsPodActive`: not finished and not being deleted.
pub fn is_pod_active(pod: &Pod) -> bool {
    !pod.is_terminal() && !pod.metadata.is_deleting()
}

/// Splits creates into slow-start batches 1, 2, 4, 8 …: a quota or admission problem then costs
/// one failed call instead of hundreds.
pub fn slow_start_batches(calls: Vec<Call>) -> Vec<Vec<Call>> {
    let mut batches = Vec::new();
    let mut size = SLOW_START_INITIAL_BATCH;
    let mut rest = calls.into_iter().peekable();
    while rest.peek().is_some() {
        batches.push(rest.by_ref().take(size).collect());
        size *= 2;
    }
    batches
}

/// The pods this ReplicaSet owns, plus orphans it adopts (`claimPods`): the adoptions are
/// writes that add the owner reference.
fn claim_pods<'a>(caches: &'a Caches, rs: &ReplicaSet, owner: &OwnerReference) -> (Vec<&'a Pod>, Vec<Call>) {
    let selector = &rs.spec.selector;
    // `matches`, with its label terms answered first by the cheap containment check. The pods
    // of one template share one label map, so the answer for the last map is remembered.
    let mut last: Option<(&Shared<StringMap>, bool)> = None;
    let mut matches = |p: &'a Pod| match last {
        Some((labels, answer)) if Shared::ptr_eq(labels, &p.metadata.labels) => answer,
        _ => {
            let answer = labels_contain(&p.metadata.labels, &selector.match_labels)
                && (selector.match_expressions.is_empty() || selector.matches(&p.metadata.labels));
            last = Some((&p.metadata.labels, answer));
            answer
        }
    };
    let mut owned: Vec<&Pod> = caches[Kind::Pod].owned_by(&rs.metadata.uid).filter_map(|o| o.as_pod()).filter(|p| matches(p)).collect();
    let mut adoptions = Vec::new();
    if rs.metadata.is_deleting() {
        return (owned, adoptions);
    }
    for pod in caches[Kind::Pod].owned_by("").filter_map(|o| o.as_pod()) {
        if pod.metadata.namespace != rs.metadata.namespace || !matches(pod) || pod.metadata.is_deleting() {
            continue;
        }
        let mut adopted = pod.clone();
        adopted.metadata.owner_references.push(owner.clone());
        adoptions.push(Call::new(ApiRequest::Update(Object::Pod(adopted))));
        owned.push(pod);
    }
    crate::sort::sort_by(&mut owned, |a, b| a.metadata.name.cmp(&b.metadata.name));
    (owned, adoptions)
}

pub fn owner_reference(rs: &ReplicaSet) -> OwnerReference {
    OwnerReference {
        api_version: "apps/v1".into(),
        kind: "ReplicaSet".into(),
        name: rs.metadata.name.to_string(),
        uid: rs.metadata.uid.to_string(),
        controller: Some(true),
        block_owner_deletion: Some(true),
    }
}

/// `controller.GetPodFromTemplate`: a new pod named `<rs>-<5 random chars>` by the API server.
pub fn pod_from_template(rs: &ReplicaSet) -> Pod {
    pod_from_template_of(rs, owner_reference(rs))
}

/// `GetPodFromTemplate` with the given controller reference (a ReplicationController's pods
/// name it, not a ReplicaSet).
fn pod_from_template_of(rs: &ReplicaSet, owner: OwnerReference) -> Pod {
    let template = &rs.spec.template;
    Pod {
        metadata: ObjectMeta {
            generate_name: format!("{}-", rs.metadata.name).into(),
            namespace: rs.metadata.namespace.clone(),
            labels: template.metadata.labels.clone(),
            annotations: template.metadata.annotations.clone(),
            owner_references: vec![owner].into(),
            ..Default::default()
        },
        spec: template.spec.clone(),
        status: PodStatus::default(),
    }
}

/// Pods of every ReplicaSet owned by the same Deployment (`getIndirectlyRelatedPods`), used to
/// prefer deleting pods doubled up on a node.
fn related_pods<'a>(caches: &'a Caches, rs: &ReplicaSet) -> Vec<&'a Pod> {
    let sibling_uids: Vec<String> = match rs.metadata.controller_ref() {
        // (A ReplicationController's loop has no ReplicaSet cache: its siblings are itself.)
        Some(owner) if caches.get(Kind::ReplicaSet).is_some() => {
            caches[Kind::ReplicaSet].owned_by(&owner.uid).map(|o| o.meta().uid.to_string()).collect()
        }
        Some(_) => vec![rs.metadata.uid.to_string()],
        None => vec![rs.metadata.uid.to_string()],
    };
    sibling_uids.iter().flat_map(|uid| caches[Kind::Pod].owned_by(uid)).filter_map(|o| o.as_pod()).collect()
}

/// `getPodsToDelete`: the `n` pods to remove, ranked by `ActivePodsWithRanks.Less`.
pub fn pods_to_delete<'a>(active: &[&'a Pod], related: &[&Pod], n: usize, now: Time) -> Vec<&'a Pod> {
    if n >= active.len() {
        return active.to_vec();
    }
    let mut on_node: BTreeMap<&str, usize> = BTreeMap::new();
    for p in related.iter().filter(|p| is_pod_active(p)) {
        *on_node.entry(p.node_name().unwrap_or("")).or_default() += 1;
    }
    let mut ranked: Vec<(&Pod, usize)> =
        active.iter().map(|p| (*p, on_node.get(p.node_name().unwrap_or("")).copied().unwrap_or(0))).collect();
    crate::sort::sort_by(&mut ranked, |a, b| deletion_order(a, b, now));
    ranked.into_iter().take(n).map(|(p, _)| p).collect()
}

/// `ActivePodsWithRanks.Less` as an ordering: the pod to delete first sorts first.
pub fn deletion_order(a: &(&Pod, usize), b: &(&Pod, usize), now: Time) -> std::cmp::Ordering {
    use std::cmp::Ordering;
    let ((pa, rank_a), (pb, rank_b)) = (a, b);
    let first = |cond_a: bool, cond_b: bool| -> Option<Ordering> {
        (cond_a != cond_b).then_some(if cond_a { Ordering::Less } else { Ordering::Greater })
    };
    // 1. Unassigned < assigned.
    if let Some(o) = first(pa.node_name().is_none(), pb.node_name().is_none()) {
        return o;
    }
    // 2. Pending < Unknown < Running.
    let phase_rank = |p: &Pod| match p.phase() {
        PodPhase::Pending => 0,
        PodPhase::Unknown => 1,
        PodPhase::Running => 2,
        _ => 3,
    };
    if phase_rank(pa) != phase_rank(pb) {
        return phase_rank(pa).cmp(&phase_rank(pb));
    }
    // 3. Not ready < ready.
    if let Some(o) = first(!pa.is_ready(), !pb.is_ready()) {
        return o;
    }
    // 4. Lower pod-deletion-cost first.
    let cost = |p: &Pod| p.metadata.annotations.get(POD_DELETION_COST).and_then(|v| v.parse::<i32>().ok()).unwrap_or(0);
    if cost(pa) != cost(pb) {
        return cost(pa).cmp(&cost(pb));
    }
    // 5. More colocated related pods first.
    if rank_a != rank_b {
        return rank_b.cmp(rank_a);
    }
    // 6. Ready more recently first, compared in log2 buckets (LogarithmicScaleDown).
    if pa.is_ready() && pb.is_ready() {
        if let (Some(ra), Some(rb)) = (pa.ready_since(), pb.ready_since()) {
            if ra != rb {
                return by_log_age(ra, rb, now, pa, pb);
            }
        }
    }
    // 7. More restarts first.
    let restarts = |p: &Pod| p.status.container_statuses.iter().map(|c| c.restart_count).max().unwrap_or(0);
    if restarts(pa) != restarts(pb) {
        return restarts(pb).cmp(&restarts(pa));
    }
    // 8. Newer first, in log2 buckets.
    match (pa.metadata.creation_timestamp, pb.metadata.creation_timestamp) {
        (Some(ca), Some(cb)) if ca != cb => by_log_age(ca, cb, now, pa, pb),
        _ => Ordering::Equal,
    }
}

/// `logarithmicRankDiff`: younger buckets first, then UID order within a bucket.
fn by_log_age(a: Time, b: Time, now: Time, pa: &Pod, pb: &Pod) -> std::cmp::Ordering {
    // floor(log2(age in nanoseconds)), in integers so wasm32 and native agree bit for bit.
    let bucket = |t: Time| {
        let nanos = now.since(t).0.saturating_mul(1_000_000);
        if nanos > 0 {
            63 - i64::from(nanos.leading_zeros())
        } else {
            -1
        }
    };
    match bucket(a).cmp(&bucket(b)) {
        std::cmp::Ordering::Equal => pa.metadata.uid.cmp(&pb.metadata.uid),
        other => other,
    }
}

/// Whether `labels` hold every key of `wanted` with the same value. Label maps are small, so a
/// scan comparing lengths before bytes beats a tree lookup, whose every step compares the bytes
/// of two keys: a sync asks this of every pod of its ReplicaSet, twice.
fn labels_contain(labels: &StringMap, wanted: &StringMap) -> bool {
    wanted.len() <= labels.len() && wanted.iter().all(|(k, v)| labels.iter().any(|(lk, lv)| lk == k && lv == v))
}

/// `calculateStatus`: counts over the pods it owns.
pub fn calculate_status(rs: &ReplicaSet, owned: &[&Pod], now: Time) -> ReplicaSetStatus {
    let template_labels = &rs.spec.template.metadata.labels;
    let min_ready = rs.spec.min_ready_seconds as i64;
    // One pass, and the Ready condition looked up once per pod: this runs on every sync of a
    // ReplicaSet, over all its pods. A pod is available only if ready (`is_available` reads the
    // same condition), so availability is asked only of ready pods.
    let (mut replicas, mut fully_labeled, mut ready, mut available) = (0, 0, 0, 0);
    for pod in owned.iter().filter(|p| is_pod_active(p)) {
        replicas += 1;
        // A pod made from this template shares its label map: then it holds them all.
        if Shared::ptr_eq(&pod.metadata.labels, template_labels) || labels_contain(&pod.metadata.labels, template_labels) {
            fully_labeled += 1;
        }
        if pod.is_ready() {
            ready += 1;
            if pod.is_available(min_ready, now) {
                available += 1;
            }
        }
    }
    ReplicaSetStatus {
        replicas,
        fully_labeled_replicas: fully_labeled,
        ready_replicas: ready,
        available_replicas: available,
        observed_generation: rs.metadata.generation,
    }
}

/// Shared for tests: a ReplicaSet owning pods by this name prefix.
#[cfg(test)]
pub(crate) fn test_rs(name: &str, replicas: i32) -> ReplicaSet {
    let labels: StringMap = [("app".to_string(), "web".to_string())].into();
    ReplicaSet {
        metadata: ObjectMeta {
            name: name.into(),
            namespace: "default".into(),
            uid: format!("uid-{name}").into(),
            generation: 1,
            ..Default::default()
        },
        spec: ReplicaSetSpec {
            replicas: Some(replicas),
            selector: LabelSelector { match_labels: labels.clone(), ..Default::default() },
            template: PodTemplateSpec {
                metadata: ObjectMeta { labels: labels.into(), ..Default::default() },
                spec: PodSpec {
                    containers: vec![Container { name: "nginx".into(), image: "nginx:1.14.2".into(), ..Default::default() }].into(),
                    ..Default::default()
                }
                .into(),
            }
            .into(),
            ..Default::default()
        },
        status: Default::default(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runtime::informer::Informer;
    use std::rc::Rc;

    #[test]
    fn label_containment_answers_as_the_selector_does() {
        let map = |pairs: &[(&str, &str)]| -> StringMap { pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect() };
        let pod = map(&[("app", "web"), ("pod-template-hash", "7d9c"), ("tier", "front")]);
        for (wanted, expected) in [
            (map(&[]), true),
            (map(&[("app", "web")]), true),
            (map(&[("app", "web"), ("pod-template-hash", "7d9c")]), true),
            (map(&[("app", "db")]), false),
            (map(&[("ap", "web")]), false),
            (map(&[("app", "web"), ("zone", "a")]), false),
            (map(&[("app", "web"), ("pod-template-hash", "7d9c"), ("tier", "front"), ("x", "y")]), false),
        ] {
            let selector = LabelSelector { match_labels: wanted.clone(), ..Default::default() };
            assert_eq!(labels_contain(&pod, &wanted), expected, "{wanted:?}");
            assert_eq!(selector.matches(&pod), expected, "{wanted:?}");
        }
    }

    fn pod_of(rs: &ReplicaSet, name: &str, node: Option<&str>, phase: PodPhase, ready_at: Option<u64>) -> Pod {
        let mut p = pod_from_template(rs);
        p.metadata.name = name.into();
        p.metadata.uid = format!("uid-{name}").into();
        p.metadata.creation_timestamp = Some(Time(0));
        p.spec.node_name = node.map(str::to_string);
        p.status.phase = Some(phase);
        if let Some(t) = ready_at {
            p.status.conditions.push(PodCondition {
                type_: "Ready".into(),
                status: "True".into(),
                last_transition_time: Some(Time(t)),
                ..Default::default()
            });
        }
        p
    }

    struct World {
        pods: Informer,
        rss: Informer,
        deps: Informer,
        nodes: Informer,
    }

    impl World {
        fn new(rs: &ReplicaSet, pods: Vec<Pod>) -> Self {
            World {
                pods: Informer::from_objects(Kind::Pod, pods.into_iter().map(Object::Pod)),
                rss: Informer::from_objects(Kind::ReplicaSet, [Object::ReplicaSet(rs.clone())]),
                deps: Informer::from_objects(Kind::Deployment, []),
                nodes: Informer::from_objects(Kind::Node, []),
            }
        }
        fn caches(&self) -> Caches<'_> {
            Caches::new([self.pods.store(), self.rss.store(), self.deps.store(), self.nodes.store()])
        }
    }

    fn creates(sync: &Sync) -> Vec<usize> {
        sync.steps.iter().filter(|s| matches!(s[0].request, ApiRequest::Create(_))).map(Vec::len).collect()
    }

    #[test]
    fn creates_go_out_in_slow_start_batches_1_2_4_8() {
        let rs = test_rs("web-abc", 10);
        let world = World::new(&rs, vec![]);
        let mut c = ReplicaSetController::new();
        let sync = c.reconcile(&ObjectKey::new(Kind::ReplicaSet, "default", "web-abc"), &world.caches(), Time(0));
        assert_eq!(creates(&sync), vec![1, 2, 4, 3]);
        let ApiRequest::Create(Object::Pod(p)) = &sync.steps[0][0].request else { panic!("a pod create") };
        assert_eq!(p.metadata.generate_name, "web-abc-");
        assert_eq!(p.metadata.owner_references[0].uid, "uid-web-abc");
        assert_eq!(sync.steps[0][0].on_success.as_ref().map(|e| e.reason.as_str()), Some("SuccessfulCreate"));
    }

    #[test]
    fn a_sync_issues_at_most_500_creates() {
        let rs = test_rs("big", 2000);
        let world = World::new(&rs, vec![]);
        let mut c = ReplicaSetController::new();
        let sync = c.reconcile(&ObjectKey::new(Kind::ReplicaSet, "default", "big"), &world.caches(), Time(0));
        assert_eq!(creates(&sync).iter().sum::<usize>(), BURST_REPLICAS);
    }

    #[test]
    fn expectations_hold_the_next_sync_until_creations_are_observed() {
        let rs = test_rs("web-abc", 2);
        let mut world = World::new(&rs, vec![]);
        let key = ObjectKey::new(Kind::ReplicaSet, "default", "web-abc");
        let mut c = ReplicaSetController::new();
        assert_eq!(creates(&c.reconcile(&key, &world.caches(), Time(0))).iter().sum::<usize>(), 2);
        // The informer has not seen the pods yet: a second sync must not create again.
        assert_eq!(creates(&c.reconcile(&key, &world.caches(), Time(10))).iter().sum::<usize>(), 0);
        for name in ["web-abc-1", "web-abc-2"] {
            let delta =
                world.pods.apply(crate::store::ChangeType::Added, Rc::new(Object::Pod(pod_of(&rs, name, None, PodPhase::Pending, None))));
            assert_eq!(c.on_delta(&world.caches(), &delta, Time(20)), vec![key.clone()]);
        }
        assert!(c.expectations().satisfied(&key, Time(20)));
        assert!(creates(&c.reconcile(&key, &world.caches(), Time(20))).is_empty());
    }

    #[test]
    fn a_terminating_pod_is_not_active_so_it_is_replaced_at_once() {
        let rs = test_rs("web-abc", 2);
        let mut dying = pod_of(&rs, "web-abc-1", Some("n1"), PodPhase::Running, Some(0));
        dying.metadata.deletion_timestamp = Some(Time(30_000));
        let alive = pod_of(&rs, "web-abc-2", Some("n1"), PodPhase::Running, Some(0));
        let world = World::new(&rs, vec![dying, alive]);
        let mut c = ReplicaSetController::new();
        let sync = c.reconcile(&ObjectKey::new(Kind::ReplicaSet, "default", "web-abc"), &world.caches(), Time(1000));
        assert_eq!(creates(&sync), vec![1]);
    }

    #[test]
    fn scale_down_removes_unscheduled_then_pending_then_not_ready_pods_first() {
        let rs = test_rs("web-abc", 1);
        let pods = [
            pod_of(&rs, "running-ready", Some("n1"), PodPhase::Running, Some(0)),
            pod_of(&rs, "running-unready", Some("n1"), PodPhase::Running, None),
            pod_of(&rs, "pending", Some("n2"), PodPhase::Pending, None),
            pod_of(&rs, "unscheduled", None, PodPhase::Pending, None),
        ];
        let refs: Vec<&Pod> = pods.iter().collect();
        let order: Vec<&str> = pods_to_delete(&refs, &refs, 3, Time(10_000)).iter().map(|p| p.metadata.name.as_str()).collect();
        assert_eq!(order, ["unscheduled", "pending", "running-unready"]);
    }

    #[test]
    fn scale_down_prefers_low_deletion_cost_then_doubled_up_then_recently_ready() {
        let rs = test_rs("web-abc", 1);
        let mut cheap = pod_of(&rs, "cheap", Some("n1"), PodPhase::Running, Some(0));
        cheap.metadata.annotations.insert(POD_DELETION_COST.into(), "-10".into());
        let crowded = pod_of(&rs, "crowded", Some("n2"), PodPhase::Running, Some(0));
        let crowded_twin = pod_of(&rs, "crowded-twin", Some("n2"), PodPhase::Running, Some(0));
        let alone = pod_of(&rs, "alone", Some("n3"), PodPhase::Running, Some(0));
        let pods = [cheap, crowded, crowded_twin, alone];
        let refs: Vec<&Pod> = pods.iter().collect();
        let order: Vec<&str> = pods_to_delete(&refs, &refs, 3, Time(60_000)).iter().map(|p| p.metadata.name.as_str()).collect();
        assert_eq!(order, ["cheap", "crowded", "crowded-twin"]);

        let young = pod_of(&rs, "young", Some("n1"), PodPhase::Running, Some(3_500_000));
        let old = pod_of(&rs, "old", Some("n2"), PodPhase::Running, Some(0));
        let refs = vec![&old, &young];
        let picked = pods_to_delete(&refs, &[], 1, Time(3_600_000));
        assert_eq!(picked[0].metadata.name, "young", "ready more recently goes first");
    }

    #[test]
    fn status_counts_ready_and_available_pods() {
        let mut rs = test_rs("web-abc", 3);
        rs.spec.min_ready_seconds = 10;
        let pods = [
            pod_of(&rs, "a", Some("n1"), PodPhase::Running, Some(0)),
            pod_of(&rs, "b", Some("n1"), PodPhase::Running, Some(5_000)),
            pod_of(&rs, "c", Some("n1"), PodPhase::Pending, None),
        ];
        let refs: Vec<&Pod> = pods.iter().collect();
        let st = calculate_status(&rs, &refs, Time(12_000));
        assert_eq!((st.replicas, st.ready_replicas, st.available_replicas, st.observed_generation), (3, 2, 1, 1));
    }
}
