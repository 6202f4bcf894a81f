//! `updateStatefulSet`: one pass over a StatefulSet's ordinals, deciding its pod writes and the
//! status they leave.
//!
//! Pods are slots by ordinal: `0..replicas` are the replicas (an empty slot gets a new pod),
//! anything above is condemned. In OrderedReady (monotonic) mode the pass stops at the first
//! write or at the first pod not yet Running, Ready and available, so each ordinal waits for
//! the ones below it, and condemned pods go from the highest ordinal, one per pass, only once
//! every replica is healthy. Parallel issues every write at once. The rolling update comes last.

use super::revisions::{History, Revision};
use super::{owner_reference, parent_and_ordinal, CONTROLLER_REVISION_HASH, POD_INDEX_LABEL, POD_NAME_LABEL};
use crate::api::{ApiRequest, DeleteRequest};
use crate::controllers::replica_set::slow_start_batches;
use crate::controllers::Call;
use crate::model::*;
use crate::runtime::events::{reference_to, EventSpec};

/// What one pass decided.
pub struct Outcome {
    pub steps: Vec<Vec<Call>>,
    pub status: StatefulSetStatus,
    /// The decision in words for the page.
    pub words: String,
}

/// A replica's slot: the pod there, or the pod to create.
enum Slot<'a> {
    Existing(&'a Pod),
    Missing(Box<Pod>),
}

impl Slot<'_> {
    fn revision(&self) -> &str {
        let pod: &Pod = match self {
            Slot::Existing(p) => p,
            Slot::Missing(p) => p,
        };
        revision_of(pod)
    }
    /// `isHealthy`: Running and Ready and not terminating (a pod not yet made is not).
    fn healthy(&self) -> bool {
        matches!(self, Slot::Existing(p) if is_healthy(p))
    }
}

fn revision_of(pod: &Pod) -> &str {
    pod.metadata.labels.get(CONTROLLER_REVISION_HASH).map_or("", |s| s.as_str())
}

/// `isRunningAndReady`.
fn running_and_ready(pod: &Pod) -> bool {
    pod.phase() == PodPhase::Running && pod.is_ready()
}

fn is_healthy(pod: &Pod) -> bool {
    running_and_ready(pod) && !pod.metadata.is_deleting()
}

fn ordinal_of(pod: &Pod) -> i32 {
    parent_and_ordinal(&pod.metadata.name).map_or(-1, |(_, o)| o)
}

/// The writes of one pass, with the events upstream's `StatefulPodControl` records for them.
struct Writer<'a> {
    reference: ObjectReference,
    set: &'a StatefulSet,
    /// The claims in the informer's cache, to create only the missing ones.
    claims: &'a crate::runtime::store::Store,
    /// Claim creates go out before the pod creates of the same pass.
    claim_calls: Vec<Call>,
    calls: Vec<Call>,
    words: Vec<String>,
}

impl Writer<'_> {
    /// `createPersistentVolumeClaims`: each of the pod's claims not there yet, named
    /// `<template>-<pod>`, labelled with the set's selector, owned by nobody (Retain).
    fn create_missing_claims(&mut self, pod: &Pod) {
        for template in &self.set.spec.volume_claim_templates {
            let name = claim_name(&template.metadata.name, &pod.metadata.name);
            let key = ObjectKey::new(Kind::PersistentVolumeClaim, &self.set.metadata.namespace, &name);
            if self.claims.get(&key).is_some() {
                continue;
            }
            let mut claim = template.clone();
            claim.metadata.name = name.clone().into();
            claim.metadata.namespace = self.set.metadata.namespace.clone();
            let mut labels: StringMap = (*claim.metadata.labels).clone();
            labels.extend(self.set.spec.selector.match_labels.iter().map(|(k, v)| (k.clone(), v.clone())));
            claim.metadata.labels = labels.into();
            claim.status = Default::default();
            let (pod_name, set_name) = (&pod.metadata.name, &self.set.metadata.name);
            let call = Call::new(ApiRequest::Create(Object::PersistentVolumeClaim(claim)))
                .on_success(EventSpec::normal(
                    self.reference.clone(),
                    "SuccessfulCreate",
                    format!("create Claim {name} Pod {pod_name} in StatefulSet {set_name} success"),
                ))
                .on_failure(EventSpec::warning(
                    self.reference.clone(),
                    "FailedCreate",
                    format!("create Claim {name} for Pod {pod_name} in StatefulSet {set_name} failed error: "),
                ));
            self.claim_calls.push(call);
        }
    }

    /// `CreateStatefulPod` (already-exists errors sunk: the cache was behind).
    fn create(&mut self, pod: Pod) {
        let (verb, name) = ("create", pod.metadata.name.to_string());
        self.words.push(format!("creating {name}"));
        let call = Call::new(ApiRequest::Create(Object::Pod(pod))).quiet_if_exists();
        self.calls.push(self.with_events(call, verb, &name));
    }
    /// `DeleteStatefulPod`.
    fn delete(&mut self, pod: &Pod) {
        let name = pod.metadata.name.to_string();
        self.words.push(format!("deleting {name}"));
        let call = Call::new(ApiRequest::Delete(DeleteRequest::new(ObjectKey::of(Kind::Pod, &pod.metadata))));
        self.calls.push(self.with_events(call, "delete", &name));
    }
    /// `UpdateStatefulPod`: the pod's identity labels put back.
    fn update(&mut self, pod: Pod) {
        let name = pod.metadata.name.to_string();
        self.words.push(format!("restoring the identity of {name}"));
        let call = Call::new(ApiRequest::Update(Object::Pod(pod)));
        self.calls.push(self.with_events(call, "update", &name));
    }
    /// `recordPodEvent`: `SuccessfulCreate` "create Pod web-0 in StatefulSet web successful", or
    /// `FailedCreate` "... failed error: <the error>".
    fn with_events(&self, call: Call, verb: &str, pod: &str) -> Call {
        let title = format!("{}{}", verb[..1].to_ascii_uppercase(), &verb[1..]);
        let set = &self.set.metadata.name;
        call.on_success(EventSpec::normal(
            self.reference.clone(),
            &format!("Successful{title}"),
            format!("{verb} Pod {pod} in StatefulSet {set} successful"),
        ))
        .on_failure(EventSpec::warning(
            self.reference.clone(),
            &format!("Failed{title}"),
            format!("{verb} Pod {pod} in StatefulSet {set} failed error: "),
        ))
    }
    /// The calls so far as one step (OrderedReady makes one write at a time) or slow-start
    /// batches (Parallel, `slowStartBatch`).
    fn take_steps(&mut self, monotonic: bool) -> Vec<Vec<Call>> {
        let calls = std::mem::take(&mut self.calls);
        let mut steps = vec![std::mem::take(&mut self.claim_calls)];
        if monotonic {
            steps.push(calls);
        } else {
            steps.extend(slow_start_batches(calls));
        }
        steps
    }
}

/// The pass. `pods` are the set's members; `history` its revisions.
pub fn update(set: &StatefulSet, pods: &[&Pod], claims: &crate::runtime::store::Store, history: &History, now: Time) -> Outcome {
    let replica_count = set.replicas().max(0) as usize;
    let min_ready = i64::from(set.spec.min_ready_seconds);
    let (current, updated) = (&history.current, &history.update);
    let mut status = StatefulSetStatus {
        observed_generation: set.metadata.generation,
        current_revision: current.name.clone(),
        update_revision: updated.name.clone(),
        collision_count: Some(set.status.collision_count.unwrap_or(0)),
        ..Default::default()
    };
    let mut slots: Vec<Option<&Pod>> = vec![None; replica_count];
    let mut condemned: Vec<&Pod> = Vec::new();
    for pod in pods.iter().copied() {
        status.replicas += 1;
        if running_and_ready(pod) {
            status.ready_replicas += 1;
            status.available_replicas += i32::from(pod.is_available(min_ready, now));
        }
        if !pod.metadata.is_deleting() {
            count_revision(&mut status, revision_of(pod), current, updated, 1);
        }
        match usize::try_from(ordinal_of(pod)) {
            Ok(ord) if ord < replica_count => slots[ord] = Some(pod),
            Ok(_) => condemned.push(pod),
            Err(_) => {}
        }
    }
    let replicas: Vec<Slot> = slots
        .into_iter()
        .enumerate()
        .map(|(ord, pod)| match pod {
            Some(p) => Slot::Existing(p),
            None => Slot::Missing(Box::new(versioned_pod(set, current, updated, ord as i32))),
        })
        .collect();
    crate::sort::sort_by(&mut condemned, |a, b| ordinal_of(b).cmp(&ordinal_of(a)));
    let first_unhealthy_condemned =
        if replicas.iter().all(Slot::healthy) { condemned.iter().find(|p| !is_healthy(p)).map(|p| p.metadata.name.clone()) } else { None };
    let monotonic = !set.parallel();
    let mut writer = Writer {
        reference: reference_to(&Object::StatefulSet(set.clone())),
        set,
        claims,
        claim_calls: Vec::new(),
        calls: Vec::new(),
        words: Vec::new(),
    };
    let mut steps = Vec::new();
    let mut blocked = None;
    for (ord, slot) in replicas.iter().enumerate() {
        if let Some(reason) = process_replica(set, slot, ord, monotonic, min_ready, now, &mut status, current, updated, &mut writer) {
            if monotonic {
                blocked = Some(reason);
                break;
            }
        }
    }
    steps.extend(writer.take_steps(monotonic));
    if blocked.is_none() {
        for pod in &condemned {
            let first_unhealthy = first_unhealthy_condemned.as_ref() == Some(&pod.metadata.name);
            if let Some(reason) =
                process_condemned(pod, first_unhealthy, monotonic, min_ready, now, &mut status, current, updated, &mut writer)
            {
                if monotonic {
                    blocked = Some(reason);
                    break;
                }
            }
        }
        steps.extend(writer.take_steps(monotonic));
    }
    if blocked.is_none() && !set.on_delete() {
        blocked = rolling_update(set, &replicas, updated, &mut status, &mut writer);
        steps.extend(writer.take_steps(true));
    }
    let mut words = writer.words;
    if words.is_empty() {
        words.push(blocked.unwrap_or_else(|| "in sync".into()));
    }
    Outcome { steps, status, words: words.join(", ") }
}

fn count_revision(status: &mut StatefulSetStatus, revision: &str, current: &Revision, updated: &Revision, by: i32) {
    if revision == current.name {
        status.current_replicas += by;
    }
    if revision == updated.name {
        status.updated_replicas += by;
    }
}

/// `processReplica`: `Some(why)` when an OrderedReady pass must stop here.
#[allow(clippy::too_many_arguments)]
fn process_replica(
    set: &StatefulSet,
    slot: &Slot,
    ord: usize,
    monotonic: bool,
    min_ready: i64,
    now: Time,
    status: &mut StatefulSetStatus,
    current: &Revision,
    updated: &Revision,
    writer: &mut Writer,
) -> Option<String> {
    let pod = match slot {
        Slot::Missing(pod) => {
            status.replicas += 1;
            count_revision(status, revision_of(pod), current, updated, 1);
            let name = pod.metadata.name.to_string();
            writer.create_missing_claims(pod);
            writer.create((**pod).clone());
            return Some(format!("waiting for {name} to be created"));
        }
        Slot::Existing(pod) => *pod,
    };
    let name = &pod.metadata.name;
    // A finished pod is deleted; its replacement comes on the sync after it is gone.
    if pod.is_terminal() {
        if !pod.metadata.is_deleting() {
            writer.delete(pod);
        }
        return Some(format!("waiting for {name} to be replaced"));
    }
    // A pending pod whose claim was deleted gets it again.
    if pod.phase() == PodPhase::Pending && !pod.metadata.is_deleting() {
        writer.create_missing_claims(pod);
    }
    if monotonic && pod.metadata.is_deleting() {
        return Some(format!("waiting for {name} to terminate"));
    }
    if monotonic && !running_and_ready(pod) {
        return Some(format!("waiting for {name} to be Running and Ready"));
    }
    if monotonic && !pod.is_available(min_ready, now) {
        return Some(format!("waiting for {name} to be available"));
    }
    if !identity_matches(set, pod, ord as i32) && !pod.metadata.is_deleting() {
        let mut fixed = pod.clone();
        set_identity_labels(&mut fixed.metadata, ord as i32);
        writer.update(fixed);
    }
    None
}

/// `processCondemned`: a pod above the wanted count is deleted, in OrderedReady only when it is
/// healthy or the first unhealthy one, highest ordinal first.
#[allow(clippy::too_many_arguments)]
fn process_condemned(
    pod: &Pod,
    first_unhealthy: bool,
    monotonic: bool,
    min_ready: i64,
    now: Time,
    status: &mut StatefulSetStatus,
    current: &Revision,
    updated: &Revision,
    writer: &mut Writer,
) -> Option<String> {
    let name = &pod.metadata.name;
    if pod.metadata.is_deleting() {
        return monotonic.then(|| format!("waiting for {name} to terminate"));
    }
    if monotonic && !first_unhealthy && (!running_and_ready(pod) || !pod.is_available(min_ready, now)) {
        return Some(format!("waiting for {name} to be Running and Ready before it is deleted"));
    }
    writer.delete(pod);
    count_revision(status, revision_of(pod), current, updated, -1);
    monotonic.then(|| format!("waiting for {name} to terminate"))
}

/// `updateStatefulSetAfterInvariantEstablished`: the highest ordinal at or above the partition
/// that is not at the update revision is deleted (its replacement comes from the update
/// revision); an unhealthy pod on the way down stops the pass.
fn rolling_update(
    set: &StatefulSet,
    replicas: &[Slot],
    updated: &Revision,
    status: &mut StatefulSetStatus,
    writer: &mut Writer,
) -> Option<String> {
    let partition = set.partition().max(0) as usize;
    for target in (partition..replicas.len()).rev() {
        let slot = &replicas[target];
        let terminating = matches!(slot, Slot::Existing(p) if p.metadata.is_deleting());
        if slot.revision() != updated.name && !terminating {
            if let Slot::Existing(pod) = slot {
                writer.delete(pod);
                status.current_replicas -= 1;
                return Some(format!("updating {}", pod.metadata.name));
            }
        }
        if !slot.healthy() {
            return Some(format!("waiting for {}-{target} to be healthy", set.metadata.name));
        }
    }
    None
}

/// `completeRollingUpdate`: once every pod is updated and ready, the update revision becomes
/// the current one.
pub fn complete_rolling_update(set: &StatefulSet, mut status: StatefulSetStatus) -> StatefulSetStatus {
    if !set.on_delete() && status.updated_replicas == status.replicas && status.ready_replicas == status.replicas {
        status.current_replicas = status.updated_replicas;
        status.current_revision = status.update_revision.clone();
    }
    status
}

/// `identityMatches`: the name's parent and ordinal, and the identity labels.
fn identity_matches(set: &StatefulSet, pod: &Pod, ord: i32) -> bool {
    let labels = &pod.metadata.labels;
    parent_and_ordinal(&pod.metadata.name) == Some((set.metadata.name.as_str(), ord))
        && pod.metadata.namespace == set.metadata.namespace
        && labels.get(POD_NAME_LABEL).map(|s| s.as_str()) == Some(pod.metadata.name.as_str())
        && labels.get(POD_INDEX_LABEL) == Some(&ord.to_string())
}

fn set_identity_labels(meta: &mut ObjectMeta, ord: i32) {
    let mut labels: StringMap = (*meta.labels).clone();
    labels.insert(POD_NAME_LABEL.into(), meta.name.to_string());
    labels.insert(POD_INDEX_LABEL.into(), ord.to_string());
    meta.labels = labels.into();
}

/// `newVersionedStatefulSetPod`: below the partition a RollingUpdate keeps making pods of the
/// current revision; otherwise they are made from the update revision.
fn versioned_pod(set: &StatefulSet, current: &Revision, updated: &Revision, ord: i32) -> Pod {
    let rolling = set.spec.update_strategy.type_.as_deref() == Some("RollingUpdate");
    let revision = if rolling && ord < set.partition() { current } else { updated };
    new_pod(set, revision, ord)
}

/// `newStatefulSetPod`: the revision's template as pod `<set>-<ordinal>`, with its identity
/// (name labels, hostname, the governing Service as subdomain) and revision label.
pub fn new_pod(set: &StatefulSet, revision: &Revision, ord: i32) -> Pod {
    let template = &revision.template;
    let mut metadata = ObjectMeta {
        name: format!("{}-{ord}", set.metadata.name).into(),
        namespace: set.metadata.namespace.clone(),
        labels: template.metadata.labels.clone(),
        annotations: template.metadata.annotations.clone(),
        owner_references: vec![owner_reference(set)].into(),
        ..Default::default()
    };
    set_identity_labels(&mut metadata, ord);
    let mut labels: StringMap = (*metadata.labels).clone();
    labels.insert(CONTROLLER_REVISION_HASH.into(), revision.name.clone());
    metadata.labels = labels.into();
    let mut spec = template.spec.clone();
    // `updateStorage`: each claim template is the pod's volume of that name.
    for claim in &set.spec.volume_claim_templates {
        let volume = Volume {
            name: claim.metadata.name.to_string(),
            persistent_volume_claim: Some(PersistentVolumeClaimVolumeSource {
                claim_name: claim_name(&claim.metadata.name, &metadata.name),
                read_only: false,
            }),
            ..Default::default()
        };
        match spec.volumes.iter_mut().find(|v| v.name == volume.name) {
            Some(existing) => *existing = volume,
            None => spec.volumes.push(volume),
        }
    }
    spec.hostname = Some(metadata.name.to_string());
    spec.subdomain = Some(set.spec.service_name.clone()).filter(|s| !s.is_empty());
    Pod { metadata, spec, status: PodStatus::default() }
}

/// `getPersistentVolumeClaimName`: `<template>-<pod>` (`www-web-0`).
pub fn claim_name(template: &str, pod: &str) -> String {
    format!("{template}-{pod}")
}
