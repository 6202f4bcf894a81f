//! The Job controller (`job-controller`, pkg/controller/job): runs a pod template to completion.
//!
//! A ReplicaSet keeps pods running; a Job wants pods to *finish*. Each sync counts how the
//! Job's pods ended and closes the gap to "enough of them succeeded":
//! - **counting**: every pod it creates carries the finalizer `batch.kubernetes.io/job-tracking`,
//!   so a finished pod cannot vanish before it is counted. A finished pod's UID first goes into
//!   `status.uncountedTerminatedPods`, then its finalizer is removed, then a second status write
//!   moves it into `succeeded` or `failed` — a controller restart in between neither loses nor
//!   doubles a count. A pod being deleted that has not succeeded counts as failed (the default
//!   `podReplacementPolicy`, TerminatingOrFailed);
//! - **creating**: up to `parallelism` active pods while completions remain (`NonIndexed`), or
//!   one pod per index not yet succeeded (`Indexed`: the index in the
//!   `batch.kubernetes.io/job-completion-index` annotation and label, the pod named
//!   `JOB-INDEX-xxxxx`), at most 500 per sync in slow-start batches, after a failure only once
//!   the pod-failure back-off (10 s × 2ⁿ⁻¹, at most 10 min, upstream's
//!   `MaxJobPodFailureBackOff`) since the last failure has passed;
//! - **finishing**: enough successes give `SuccessCriteriaMet` and, once no pod is terminating,
//!   `Complete` (reason `CompletionsReached`) with `completionTime` and the event `Completed`;
//!   more failures than `backoffLimit` (or, with restartPolicy OnFailure, as many container
//!   restarts), or `activeDeadlineSeconds` since the start, give `FailureTarget`, the active pods
//!   deleted, then `Failed` with the event `BackoffLimitExceeded` / `DeadlineExceeded`;
//! - **suspending**: `suspend: true` deletes the active pods (their finalizers removed first, so
//!   they do not count as failures) and sets `Suspended`; resuming sets it False and restarts the
//!   clock of `activeDeadlineSeconds`.
//!
//! Not modelled: `podFailurePolicy`, `successPolicy`, `backoffLimitPerIndex` and
//! `podReplacementPolicy: Failed` (kubectl warns that they have no effect), the Indexed pod's
//! `JOB_COMPLETION_INDEX` variable (its value comes from a `fieldRef`, which env vars do not
//! model yet; the index is in the pod's label and annotation), and the 1 s batching of pod
//! events into one sync. An Indexed pod's hostname is `<job>-<index>`, as upstream sets it.

use super::replica_set::{pods_to_delete, slow_start_batches};
use super::{Action, Caches, Call, Controller, Outcome, Sync};
use crate::api::{ApiRequest, DeleteRequest};
use crate::model::*;
use crate::runtime::events::{reference_to, EventSpec};
use crate::runtime::expectations::Expectations;
use crate::runtime::informer::Delta;
use std::collections::{BTreeMap, BTreeSet};

/// `DefaultJobPodFailureBackOff`: the wait before replacing a failed pod, doubled per failure.
pub const DEFAULT_POD_FAILURE_BACKOFF: Duration = Duration::secs(10);
/// `MaxJobPodFailureBackOff`: the longest that wait gets.
pub const MAX_POD_FAILURE_BACKOFF: Duration = Duration::mins(10);
/// `MaxPodCreateDeletePerSync`.
pub const MAX_POD_CREATE_DELETE_PER_SYNC: usize = 500;

/// The condition a finishing Job is heading for, with why.
#[derive(Clone, Debug, PartialEq)]
struct Finish {
    failed: bool,
    reason: &'static str,
    message: &'static str,
}

const COMPLETIONS_REACHED: Finish =
    Finish { failed: false, reason: "CompletionsReached", message: "Reached expected number of succeeded pods" };
const BACKOFF_LIMIT_EXCEEDED: Finish =
    Finish { failed: true, reason: "BackoffLimitExceeded", message: "Job has reached the specified backoff limit" };
const DEADLINE_EXCEEDED: Finish =
    Finish { failed: true, reason: "DeadlineExceeded", message: "Job was active longer than specified deadline" };

/// `backoffRecord`: failures since the last success, and when the last one happened.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
struct BackoffRecord {
    failures_after_last_success: u32,
    last_failure: Option<Time>,
}

impl BackoffRecord {
    /// `getRemainingTime`: how long to hold new pods back.
    fn remaining(&self, now: Time) -> Duration {
        let Some(last) = self.last_failure.filter(|_| self.failures_after_last_success > 0) else {
            return Duration::ZERO;
        };
        let delay = pod_failure_backoff(self.failures_after_last_success);
        let elapsed = now.since(last);
        if delay.0 < elapsed.0 {
            Duration::ZERO
        } else {
            Duration(delay.0 - elapsed.0)
        }
    }

    /// `newBackoffRecord`: a success resets the count to the failures that came after it.
    fn update(mut self, succeeded: &[&Pod], failed: &[&Pod], now: Time) -> Self {
        let mut failed_times: Vec<Time> = failed.iter().map(|p| finished_time(p, now)).collect();
        failed_times.sort();
        let Some(last_success) = succeeded.iter().map(|p| finished_time(p, now)).max() else {
            if let Some(last) = failed_times.last() {
                self.failures_after_last_success += failed_times.len() as u32;
                self.last_failure = Some(*last);
            }
            return self;
        };
        let after: Vec<Time> = failed_times.into_iter().filter(|t| *t > last_success).collect();
        BackoffRecord { failures_after_last_success: after.len() as u32, last_failure: after.last().copied() }
    }
}

/// 10 s for the first failure, doubling with each next one, at most 10 min.
pub fn pod_failure_backoff(failures: u32) -> Duration {
    let mut delay = DEFAULT_POD_FAILURE_BACKOFF;
    for _ in 1..failures {
        delay = Duration(delay.0 * 2);
        if delay.0 >= MAX_POD_FAILURE_BACKOFF.0 {
            return MAX_POD_FAILURE_BACKOFF;
        }
    }
    delay
}

/// `getFinishedTime`: when the pod's last container stopped, else when it was deleted.
fn finished_time(pod: &Pod, now: Time) -> Time {
    let ended = pod.status.container_statuses.iter().filter_map(|c| c.state.terminated.as_ref()?.finished_at).max();
    ended.or(pod.metadata.deletion_timestamp).unwrap_or(now)
}

fn has_finalizer(pod: &Pod) -> bool {
    pod.metadata.finalizers.iter().any(|f| f == JOB_TRACKING_FINALIZER)
}

/// `isPodFailed` with the default replacement policy: Failed, or deleted before it succeeded.
fn is_failed(pod: &Pod) -> bool {
    pod.phase() == PodPhase::Failed || (pod.metadata.is_deleting() && pod.phase() != PodPhase::Succeeded)
}

fn is_active(pod: &Pod) -> bool {
    !pod.is_terminal() && !pod.metadata.is_deleting()
}

fn is_terminating(pod: &Pod) -> bool {
    pod.metadata.is_deleting() && !pod.is_terminal()
}

/// An Indexed pod's completion index, from its annotation.
fn completion_index(pod: &Pod) -> Option<i32> {
    pod.metadata.annotations.get(JOB_COMPLETION_INDEX)?.parse().ok().filter(|i: &i32| *i >= 0)
}

/// `completedIndexes` as the API writes it: sorted, runs of 3 or more as `a-b` ("1,3-5,7").
pub fn format_indexes(indexes: &BTreeSet<i32>) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut run: Option<(i32, i32)> = None;
    let flush = |run: (i32, i32), parts: &mut Vec<String>| match run.1 - run.0 {
        0 => parts.push(run.0.to_string()),
        1 => parts.extend([run.0.to_string(), run.1.to_string()]),
        _ => parts.push(format!("{}-{}", run.0, run.1)),
    };
    for &i in indexes {
        run = match run {
            Some((a, b)) if i == b + 1 => Some((a, i)),
            Some(r) => {
                flush(r, &mut parts);
                Some((i, i))
            }
            None => Some((i, i)),
        };
    }
    if let Some(r) = run {
        flush(r, &mut parts);
    }
    parts.join(",")
}

/// The indexes of `completedIndexes`.
pub fn parse_indexes(text: &str) -> BTreeSet<i32> {
    let mut out = BTreeSet::new();
    for part in text.split(',').filter(|p| !p.is_empty()) {
        match part.split_once('-') {
            Some((a, b)) => {
                if let (Ok(a), Ok(b)) = (a.parse::<i32>(), b.parse::<i32>()) {
                    out.extend(a..=b);
                }
            }
            None => out.extend(part.parse::<i32>().ok()),
        }
    }
    out
}

pub fn owner_reference(job: &Job) -> OwnerReference {
    OwnerReference {
        api_version: "batch/v1".into(),
        kind: "Job".into(),
        name: job.metadata.name.to_string(),
        uid: job.metadata.uid.to_string(),
        controller: Some(true),
        block_owner_deletion: Some(true),
    }
}

/// A pod from the Job's template, carrying the tracking finalizer (and its index, if Indexed).
pub fn pod_from_template(job: &Job, index: Option<i32>) -> Pod {
    let template = &job.spec.template;
    let mut labels = template.metadata.labels.clone();
    let mut annotations = template.metadata.annotations.clone();
    let generate_name = match index {
        Some(i) => {
            labels.insert(JOB_COMPLETION_INDEX.into(), i.to_string());
            annotations.insert(JOB_COMPLETION_INDEX.into(), i.to_string());
            format!("{}-{i}-", job.metadata.name)
        }
        None => format!("{}-", job.metadata.name),
    };
    let mut spec = template.spec.clone();
    if let Some(i) = index.filter(|_| spec.hostname.as_deref().is_none_or(str::is_empty)) {
        // `createPods`: an Indexed pod answers to `<job>-<index>` (with the template's
        // subdomain, a stable DNS name for each index behind a headless Service).
        let mut with_hostname = (*spec).clone();
        with_hostname.hostname = Some(format!("{}-{i}", job.metadata.name));
        spec = with_hostname.into();
    }
    Pod {
        metadata: ObjectMeta {
            generate_name: generate_name.into(),
            namespace: job.metadata.namespace.clone(),
            labels,
            annotations,
            owner_references: vec![owner_reference(job)].into(),
            finalizers: vec![JOB_TRACKING_FINALIZER.into()],
            ..Default::default()
        },
        spec,
        status: PodStatus::default(),
    }
}

/// The pod without the tracking finalizer, as an update with no precondition (upstream patches).
fn release(pod: &Pod) -> Call {
    let mut released = pod.clone();
    released.metadata.finalizers.retain(|f| f != JOB_TRACKING_FINALIZER);
    released.metadata.resource_version = 0;
    Call::new(ApiRequest::Update(Object::Pod(released)))
}

/// Sets a Job condition (`ensureJobConditionStatus` when `only_if_present` is false, as a new
/// condition is added only with status True); says whether anything changed.
fn set_condition(status: &mut JobStatus, type_: &str, value: &str, reason: &str, message: &str, now: Time) -> bool {
    match status.conditions.iter_mut().find(|c| c.type_ == type_) {
        Some(c) if c.status == value && c.reason.as_deref() == Some(reason) && c.message.as_deref() == Some(message) => false,
        Some(c) => {
            if c.status != value {
                c.last_transition_time = Some(now);
            }
            c.status = value.into();
            c.reason = Some(reason.into());
            c.message = Some(message.into());
            c.last_probe_time = Some(now);
            true
        }
        None if value == "True" => {
            status.conditions.push(JobCondition {
                type_: type_.into(),
                status: value.into(),
                last_probe_time: Some(now),
                last_transition_time: Some(now),
                reason: Some(reason.into()),
                message: Some(message.into()),
            });
            true
        }
        None => false,
    }
}

/// `pastActiveDeadline`: started, not suspended, and running for at least the deadline.
fn deadline_left(job: &Job, now: Time) -> Option<Duration> {
    let seconds = job.spec.active_deadline_seconds?;
    let start = job.status.start_time.filter(|_| !job.spec.is_suspended())?;
    let allowed = Duration::secs(seconds.max(0) as u64);
    let elapsed = now.since(start);
    Some(if elapsed.0 >= allowed.0 { Duration::ZERO } else { Duration(allowed.0 - elapsed.0) })
}

/// `pastBackoffLimitOnFailure`: with restartPolicy OnFailure failures are container restarts
/// in the pods still running, so those count against the limit.
fn past_backoff_limit_on_failure(job: &Job, pods: &[&Pod]) -> bool {
    if job.spec.template.spec.restart_policy.as_deref() != Some("OnFailure") {
        return false;
    }
    let restarts: i32 = pods
        .iter()
        .filter(|p| matches!(p.phase(), PodPhase::Running | PodPhase::Pending))
        .flat_map(|p| p.status.container_statuses.iter().map(|c| c.restart_count))
        .sum();
    let limit = job.spec.backoff_limit.unwrap_or(crate::api::job::DEFAULT_BACKOFF_LIMIT);
    if limit == 0 {
        restarts > 0
    } else {
        restarts >= limit
    }
}

#[derive(Debug, Default)]
pub struct JobController {
    expectations: Expectations,
    /// Pods whose finalizer removal was sent and not yet seen (`finalizerExpectations`): they
    /// are counted already and must not be counted again from a cache that is behind.
    releasing: BTreeSet<String>,
    backoff: BTreeMap<ObjectKey, BackoffRecord>,
    /// The resourceVersion of the last status this controller wrote per Job: a cache older than
    /// that would count from stale numbers, so the sync waits for the informer instead.
    written: BTreeMap<ObjectKey, u64>,
    /// Events beyond the one a status write carries, recorded after the sync.
    extra_events: Vec<EventSpec>,
}

/// What one sync found and decided, built up in order.
struct Plan {
    status: JobStatus,
    uncounted: UncountedTerminatedPods,
    /// Pods whose finalizer this sync removes (counted, or being deleted by it).
    release: Vec<Call>,
    deletes: Vec<Call>,
    creates: Vec<Call>,
    events: Vec<EventSpec>,
    words: Vec<String>,
    requeue: Option<Duration>,
    /// Successes so far, counted and uncounted, and an Indexed Job's succeeded indexes.
    succeeded: i32,
    completed: BTreeSet<i32>,
}

impl JobController {
    pub fn new() -> Self {
        Self::default()
    }

    /// The Job that controls `pod`, if the cache holds it with the referenced UID.
    fn controlling_job(caches: &Caches, pod: &Pod) -> Option<ObjectKey> {
        let owner = pod.metadata.controller_ref().filter(|r| r.kind == "Job")?;
        let key = ObjectKey::new(Kind::Job, &pod.metadata.namespace, &owner.name);
        caches[Kind::Job].get(&key).filter(|j| j.meta().uid == owner.uid).map(|_| key)
    }

    fn on_pod(&mut self, caches: &Caches, pod: &Pod, deleted: bool, added: bool) -> Vec<ObjectKey> {
        if deleted || !has_finalizer(pod) {
            self.releasing.remove(pod.metadata.uid.as_str());
        }
        let pod_key = ObjectKey::of(Kind::Pod, &pod.metadata);
        match Self::controlling_job(caches, pod) {
            Some(job) => {
                if deleted || pod.metadata.is_deleting() {
                    self.expectations.deletion_observed(&job, &pod_key);
                } else if added {
                    self.expectations.creation_observed(&job);
                }
                vec![job]
            }
            // An orphan still holding the finalizer: only this controller will ever take it off.
            None if has_finalizer(pod) && !deleted && pod.metadata.controller_ref().is_some_and(|r| r.kind == "Job") => vec![pod_key],
            None => Vec::new(),
        }
    }

    /// A pod whose Job is gone: its finalizer comes off so it can be deleted.
    fn sync_orphan(&mut self, key: &ObjectKey, caches: &Caches) -> Sync {
        let Some(pod) = caches[Kind::Pod].get(key).and_then(|o| o.as_pod()) else { return Sync::nothing() };
        if !has_finalizer(pod) || self.releasing.contains(pod.metadata.uid.as_str()) || Self::controlling_job(caches, pod).is_some() {
            return Sync::nothing();
        }
        self.releasing.insert(pod.metadata.uid.to_string());
        Sync::with_steps(vec![vec![release(pod)]], format!("pod {}: its Job is gone, removing the tracking finalizer", pod.metadata.name))
    }

    /// A finished Job only lets go of pods that still hold its finalizer.
    fn sync_finished(&mut self, key: &ObjectKey, job: &Job, pods: &[&Pod]) -> Sync {
        self.backoff.remove(key);
        let holding: Vec<&Pod> =
            pods.iter().copied().filter(|p| has_finalizer(p) && !self.releasing.contains(p.metadata.uid.as_str())).collect();
        self.releasing.extend(holding.iter().map(|p| p.metadata.uid.to_string()));
        let release: Vec<Call> = holding.into_iter().map(release).collect();
        if release.is_empty() {
            return Sync::nothing();
        }
        let n = release.len();
        Sync::with_steps(vec![release], format!("Job {}: finished, removing {n} tracking finalizers", job.metadata.name))
    }

    /// `trackJobStatusAndRemoveFinalizers`, first half: UIDs whose finalizer is gone move from
    /// uncounted into the counters; newly finished pods go into uncounted and lose their
    /// finalizer. Returns the newly finished pods (succeeded, failed) for the back-off record.
    fn count<'a>(&mut self, plan: &mut Plan, pods: &[&'a Pod], failing_all: bool) -> (Vec<&'a Pod>, Vec<&'a Pod>) {
        let tracked: BTreeSet<&str> = pods
            .iter()
            .filter(|p| has_finalizer(p) && !self.releasing.contains(p.metadata.uid.as_str()))
            .map(|p| p.metadata.uid.as_str())
            .collect();
        // A recorded UID whose pod no longer holds the finalizer (or is gone) is counted now.
        let before = (plan.uncounted.succeeded.len(), plan.uncounted.failed.len());
        plan.uncounted.succeeded.retain(|uid| tracked.contains(uid.as_str()));
        plan.uncounted.failed.retain(|uid| tracked.contains(uid.as_str()));
        plan.status.succeeded += (before.0 - plan.uncounted.succeeded.len()) as i32;
        plan.status.failed += (before.1 - plan.uncounted.failed.len()) as i32;
        let (mut new_succeeded, mut new_failed) = (Vec::new(), Vec::new());
        for pod in pods.iter().copied().filter(|p| tracked.contains(p.metadata.uid.as_str())) {
            let uid = pod.metadata.uid.to_string();
            let known = plan.uncounted.succeeded.contains(&uid) || plan.uncounted.failed.contains(&uid);
            if !known && pod.phase() == PodPhase::Succeeded {
                plan.uncounted.succeeded.push(uid.clone());
                new_succeeded.push(pod);
            } else if !known && (is_failed(pod) || failing_all) {
                plan.uncounted.failed.push(uid.clone());
                new_failed.push(pod);
            } else if !known {
                continue;
            }
            self.releasing.insert(uid);
            plan.release.push(release(pod));
        }
        (new_succeeded, new_failed)
    }

    /// `manageJob`: creates or deletes toward the wanted number of active pods.
    fn manage(&mut self, key: &ObjectKey, job: &Job, plan: &mut Plan, active: &[&Pod], now: Time) -> i32 {
        let (succeeded, completed) = (plan.succeeded, plan.completed.clone());
        let count = active.len() as i32;
        let reference = reference_to(&Object::Job(job.clone()));
        if job.spec.is_suspended() {
            self.delete_pods(key, job, plan, active, active.len(), now);
            return 0;
        }
        let parallelism = job.spec.parallelism.unwrap_or(1).max(0);
        let want = match job.spec.completions {
            None if succeeded > 0 => count,
            None => parallelism,
            Some(c) if job.spec.is_indexed() => (c - completed.len() as i32).clamp(0, parallelism),
            Some(c) => (c - succeeded).clamp(0, parallelism),
        };
        if count > want {
            self.delete_pods(key, job, plan, active, (count - want) as usize, now);
            return want;
        }
        if count == want {
            return count;
        }
        let left = self.backoff.get(key).copied().unwrap_or_default().remaining(now);
        if left.0 > 0 {
            plan.words.push(format!("waiting {} of pod-failure back-off", crate::model::human_duration(left)));
            plan.requeue = Some(left);
            return count;
        }
        let n = ((want - count) as usize).min(MAX_POD_CREATE_DELETE_PER_SYNC);
        let indexes: Vec<Option<i32>> = if job.spec.is_indexed() {
            let busy: BTreeSet<i32> = active.iter().filter_map(|p| completion_index(p)).collect();
            (0..job.spec.completions.unwrap_or(0)).filter(|i| !completed.contains(i) && !busy.contains(i)).take(n).map(Some).collect()
        } else {
            vec![None; n]
        };
        self.expectations.expect_creations(key, indexes.len(), now);
        plan.creates = indexes
            .iter()
            .map(|i| {
                Call::new(ApiRequest::Create(Object::Pod(pod_from_template(job, *i))))
                    .on_success(EventSpec::normal(reference.clone(), "SuccessfulCreate", "Created pod: {name}"))
                    .on_failure(EventSpec::warning(reference.clone(), "FailedCreate", "Error creating: "))
            })
            .collect();
        plan.words.push(format!("creating {}", indexes.len()));
        count + indexes.len() as i32
    }

    /// `deleteJobPods`: the finalizer comes off first, so a pod the Job itself removes is not
    /// counted as a failure; then the delete.
    fn delete_pods(&mut self, key: &ObjectKey, job: &Job, plan: &mut Plan, active: &[&Pod], n: usize, now: Time) {
        if n == 0 {
            return;
        }
        let victims = pods_to_delete(active, &[], n.min(MAX_POD_CREATE_DELETE_PER_SYNC), now);
        let reference = reference_to(&Object::Job(job.clone()));
        self.expectations.expect_deletions(key, victims.iter().map(|p| ObjectKey::of(Kind::Pod, &p.metadata)).collect(), now);
        for pod in &victims {
            if has_finalizer(pod) && self.releasing.insert(pod.metadata.uid.to_string()) {
                plan.release.push(release(pod));
            }
            plan.deletes.push(delete(pod, &reference));
        }
        plan.words.push(format!("deleting {}", victims.len()));
    }

    /// `syncJob` for a Job that has not finished.
    fn sync_job(&mut self, key: &ObjectKey, job: &Job, pods: &[&Pod], caches_satisfied: bool, now: Time) -> Sync {
        let mut status = job.status.clone();
        let uncounted = status.uncounted_terminated_pods.take().unwrap_or_default();
        if status.start_time.is_none() && !job.spec.is_suspended() {
            status.start_time = Some(now);
        }
        let mut plan = Plan {
            status,
            uncounted,
            release: Vec::new(),
            deletes: Vec::new(),
            creates: Vec::new(),
            events: Vec::new(),
            words: Vec::new(),
            requeue: None,
            succeeded: 0,
            completed: BTreeSet::new(),
        };
        let active: Vec<&Pod> = pods.iter().copied().filter(|p| is_active(p)).collect();
        let limit = job.spec.backoff_limit.unwrap_or(crate::api::job::DEFAULT_BACKOFF_LIMIT);
        // Whether the Job fails: decided before counting, with the new failures included.
        let newly_failed = pods
            .iter()
            .filter(|p| has_finalizer(p) && !self.releasing.contains(p.metadata.uid.as_str()) && is_failed(p))
            .filter(|p| !plan.uncounted.failed.iter().any(|u| u == p.metadata.uid.as_str()))
            .count() as i32;
        let failed_total = plan.status.failed + plan.uncounted.failed.len() as i32 + newly_failed;
        let target = plan.status.condition("FailureTarget").filter(|c| c.status == "True").map(|c| c.reason.clone().unwrap_or_default());
        let finish = match target.as_deref() {
            Some("DeadlineExceeded") => Some(DEADLINE_EXCEEDED),
            Some(_) => Some(BACKOFF_LIMIT_EXCEEDED),
            None if failed_total > limit || past_backoff_limit_on_failure(job, &active) => Some(BACKOFF_LIMIT_EXCEEDED),
            None if deadline_left(job, now) == Some(Duration::ZERO) => Some(DEADLINE_EXCEEDED),
            None => None,
        };
        let failing = finish.is_some();
        let (new_succeeded, new_failed) = self.count(&mut plan, pods, failing);
        let record = self.backoff.get(key).copied().unwrap_or_default().update(&new_succeeded, &new_failed, now);
        self.backoff.insert(key.clone(), record);
        let succeeded = plan.status.succeeded + plan.uncounted.succeeded.len() as i32;
        let completed = self.completed_indexes(job, &plan, pods);
        plan.succeeded = succeeded;
        plan.completed = completed.clone();
        let mut active_after = active.len() as i32;
        let mut terminating = pods.iter().filter(|p| is_terminating(p)).count();
        let reference = reference_to(&Object::Job(job.clone()));
        if let Some(f) = &finish {
            // The active pods go; they were counted as failed above.
            let victims: Vec<ObjectKey> = active.iter().map(|p| ObjectKey::of(Kind::Pod, &p.metadata)).collect();
            self.expectations.expect_deletions(key, victims, now);
            plan.deletes.extend(active.iter().map(|p| delete(p, &reference)));
            terminating += active.len();
            active_after = 0;
            set_condition(&mut plan.status, "FailureTarget", "True", f.reason, f.message, now);
            plan.words.push(format!("failing: {}", f.reason));
        } else {
            let manage = caches_satisfied && !job.metadata.is_deleting();
            if manage {
                active_after = self.manage(key, job, &mut plan, &active, now);
                terminating += plan.deletes.len();
            }
            let complete = active_after == 0
                && match job.spec.completions {
                    None => succeeded > 0,
                    Some(c) if job.spec.is_indexed() => completed.len() as i32 >= c,
                    Some(c) => succeeded >= c,
                };
            if complete {
                set_condition(&mut plan.status, "SuccessCriteriaMet", "True", COMPLETIONS_REACHED.reason, COMPLETIONS_REACHED.message, now);
                plan.words.push("completions reached".into());
            } else if manage {
                self.suspend_condition(job, &mut plan, &reference, now);
            }
        }
        if let Some(left) = deadline_left(job, now).filter(|d| d.0 > 0) {
            plan.requeue = Some(plan.requeue.map_or(left, |r| Duration(r.0.min(left.0))));
        }
        self.finish(&mut plan, finish.as_ref(), terminating, &reference, now);
        plan.status.active = active_after;
        plan.status.ready = Some(active.iter().filter(|p| p.is_ready()).count() as i32);
        if job.spec.is_indexed() {
            plan.status.completed_indexes = Some(format_indexes(&completed));
        }
        self.build_sync(job, plan, active.len(), succeeded)
    }

    /// The Indexed Job's succeeded indexes: those recorded, and those of succeeded pods.
    fn completed_indexes(&self, job: &Job, plan: &Plan, pods: &[&Pod]) -> BTreeSet<i32> {
        if !job.spec.is_indexed() {
            return BTreeSet::new();
        }
        let completions = job.spec.completions.unwrap_or(0);
        let mut done = parse_indexes(plan.status.completed_indexes.as_deref().unwrap_or(""));
        done.extend(pods.iter().filter(|p| p.phase() == PodPhase::Succeeded).filter_map(|p| completion_index(p)));
        done.retain(|i| *i < completions);
        done
    }

    /// Suspended on a suspend, False on a resume (which also restarts the deadline's clock).
    fn suspend_condition(&mut self, job: &Job, plan: &mut Plan, reference: &ObjectReference, now: Time) {
        if job.spec.is_suspended() {
            if set_condition(&mut plan.status, "Suspended", "True", "JobSuspended", "Job suspended", now) {
                plan.events.push(EventSpec::normal(reference.clone(), "Suspended", "Job suspended"));
            }
        } else if plan.status.has_true("Suspended")
            && set_condition(&mut plan.status, "Suspended", "False", "JobResumed", "Job resumed", now)
        {
            plan.events.push(EventSpec::normal(reference.clone(), "Resumed", "Job resumed"));
            plan.status.start_time = Some(now);
        }
    }

    /// `enactJobFinished`: the terminal condition once every finished pod is counted and none
    /// is still terminating, with the event that says so.
    fn finish(&mut self, plan: &mut Plan, failure: Option<&Finish>, terminating: usize, reference: &ObjectReference, now: Time) {
        let interim = if failure.is_some() { "FailureTarget" } else { "SuccessCriteriaMet" };
        if !plan.status.has_true(interim) || terminating > 0 {
            return;
        }
        let f = failure.cloned().unwrap_or(COMPLETIONS_REACHED);
        if f.failed {
            set_condition(&mut plan.status, "Failed", "True", f.reason, f.message, now);
            plan.events.push(EventSpec::warning(reference.clone(), f.reason, f.message));
        } else {
            set_condition(&mut plan.status, "Complete", "True", f.reason, f.message, now);
            plan.status.completion_time = Some(now);
            plan.events.push(EventSpec::normal(reference.clone(), "Completed", "Job completed"));
        }
        plan.words.push(if f.failed { "Failed".into() } else { "Complete".to_string() });
    }

    /// The plan as steps: the uncounted UIDs recorded, finalizers removed, deletes, creates in
    /// slow-start batches, then the counted status.
    fn build_sync(&mut self, job: &Job, plan: Plan, active: usize, succeeded: i32) -> Sync {
        let Plan { mut status, uncounted, release, deletes, creates, events, words, requeue, .. } = plan;
        let mut steps: Vec<Vec<Call>> = Vec::new();
        let counting = !release.is_empty();
        if counting {
            // The first write records who is about to be counted, from the cached version.
            let mut first = job.clone();
            let mut recorded = job.status.uncounted_terminated_pods.clone().unwrap_or_default();
            for uid in uncounted.succeeded.iter().filter(|u| !recorded.succeeded.contains(u)).cloned().collect::<Vec<_>>() {
                recorded.succeeded.push(uid);
            }
            for uid in uncounted.failed.iter().filter(|u| !recorded.failed.contains(u)).cloned().collect::<Vec<_>>() {
                recorded.failed.push(uid);
            }
            first.status.uncounted_terminated_pods = Some(recorded);
            if first.status != job.status {
                steps.push(vec![Call::new(ApiRequest::UpdateStatus(Object::Job(first)))]);
            }
            steps.push(release);
        }
        steps.push(deletes);
        steps.extend(slow_start_batches(creates));
        // After the finalizers are off, the UIDs just recorded are counted.
        if counting {
            status.succeeded += uncounted.succeeded.len() as i32;
            status.failed += uncounted.failed.len() as i32;
        } else if !uncounted.succeeded.is_empty() || !uncounted.failed.is_empty() {
            status.uncounted_terminated_pods = Some(uncounted);
        }
        if counting || status != job.status {
            let mut next = job.clone();
            next.status = status;
            if !steps.iter().all(Vec::is_empty) {
                next.metadata.resource_version = 0;
            }
            let mut call = Call::new(ApiRequest::UpdateStatus(Object::Job(next)));
            let mut events = events.into_iter();
            if let Some(first) = events.next() {
                call = call.on_success(first);
            }
            self.extra_events.extend(events);
            steps.push(vec![call]);
        }
        let completions = job.spec.completions.map_or("1".to_string(), |c| c.to_string());
        let mut summary = format!("Job {}: {active} active, {succeeded} of {completions} succeeded", job.metadata.name);
        if !words.is_empty() {
            summary = format!("{summary}, {}", words.join(", "));
        }
        let then = requeue.map_or(Action::AwaitChange, Action::RequeueAfter);
        let acted = steps.iter().any(|s| !s.is_empty());
        let sync = if acted { Sync::with_steps(steps, summary) } else { Sync { summary: Some(summary), ..Sync::nothing() } };
        sync.then(then)
    }
}

/// Whether an object's new version is older than the one it replaces: a watch never goes back,
/// so only a re-list after etcd was restored from a snapshot shows this.
fn went_back(old: &Object, new: &Object) -> bool {
    new.meta().resource_version < old.meta().resource_version
}

/// A delete of this very pod (its UID as a precondition), with the Job's events.
fn delete(pod: &Pod, reference: &ObjectReference) -> Call {
    let key = ObjectKey::of(Kind::Pod, &pod.metadata);
    Call::new(ApiRequest::Delete(DeleteRequest { uid: Some(pod.metadata.uid.to_string()), ..DeleteRequest::new(key) }))
        .on_success(EventSpec::normal(reference.clone(), "SuccessfulDelete", format!("Deleted pod: {}", pod.metadata.name)))
        .on_failure(EventSpec::warning(reference.clone(), "FailedDelete", format!("Error deleting pod {}: ", pod.metadata.name)))
}

impl Controller for JobController {
    fn name(&self) -> &'static str {
        "job-controller"
    }

    fn watches(&self) -> &'static [Kind] {
        &[Kind::Pod, Kind::Job]
    }

    fn on_delta(&mut self, caches: &Caches, delta: &Delta, _now: Time) -> Vec<ObjectKey> {
        let object = delta.object();
        match (object.kind(), delta) {
            (Kind::Job, Delta::Deleted(o)) => {
                let key = o.key();
                self.expectations.forget(&key);
                self.backoff.remove(&key);
                self.written.remove(&key);
                // Its pods still holding the finalizer are orphans now.
                let mut keys = vec![key];
                let pods = caches[Kind::Pod].owned_by(&o.meta().uid).filter_map(|p| p.as_pod());
                keys.extend(pods.filter(|p| has_finalizer(p)).map(|p| ObjectKey::of(Kind::Pod, &p.metadata)));
                keys
            }
            (Kind::Job, Delta::Updated { old, new }) => {
                if went_back(old, new) {
                    // etcd was restored from a snapshot: what this controller wrote since is gone.
                    self.written.remove(&new.key());
                }
                vec![new.key()]
            }
            (Kind::Job, _) => vec![object.key()],
            (Kind::Pod, Delta::Added(p)) => p.as_pod().map_or_else(Vec::new, |pod| self.on_pod(caches, pod, false, true)),
            (Kind::Pod, Delta::Updated { old, new }) => {
                if went_back(old, new) {
                    // Restored with its finalizer: a release sent before the restore was undone.
                    self.releasing.remove(new.meta().uid.as_str());
                }
                new.as_pod().map_or_else(Vec::new, |pod| self.on_pod(caches, pod, false, false))
            }
            (Kind::Pod, Delta::Deleted(p)) => p.as_pod().map_or_else(Vec::new, |pod| self.on_pod(caches, pod, true, false)),
            _ => Vec::new(),
        }
    }

    fn reconcile(&mut self, key: &ObjectKey, caches: &Caches, now: Time) -> Sync {
        if key.kind == Kind::Pod {
            return self.sync_orphan(key, caches);
        }
        let Some(job) = caches[Kind::Job].get(key).and_then(|o| o.as_job()) else {
            self.expectations.forget(key);
            return Sync::nothing();
        };
        if self.written.get(key).is_some_and(|rv| job.metadata.resource_version < *rv) {
            // The informer has not shown this controller's own last status write yet.
            return Sync::nothing();
        }
        let selector = job.spec.selector.clone().unwrap_or_default();
        let mut pods: Vec<&Pod> = caches[Kind::Pod]
            .owned_by(&job.metadata.uid)
            .filter_map(|o| o.as_pod())
            .filter(|p| selector.matches(&p.metadata.labels))
            .collect();
        crate::sort::sort_by(&mut pods, |a, b| a.metadata.name.cmp(&b.metadata.name));
        if job.status.is_finished() {
            return self.sync_finished(key, job, &pods);
        }
        let satisfied = self.expectations.satisfied(key, now);
        self.sync_job(key, job, &pods, satisfied, now)
    }

    fn on_outcome(&mut self, key: &ObjectKey, call: &Call, outcome: &Outcome) {
        let failed = !matches!(outcome, Outcome::Done(_));
        match (&call.request, outcome) {
            (ApiRequest::UpdateStatus(Object::Job(_)), Outcome::Done(o)) => {
                self.written.insert(key.clone(), o.meta().resource_version);
            }
            (ApiRequest::Create(_), _) if failed => self.expectations.creation_observed(key),
            (ApiRequest::Delete(d), _) if failed => self.expectations.deletion_observed(key, &d.key),
            (ApiRequest::Update(Object::Pod(p)), _) if failed => {
                self.releasing.remove(p.metadata.uid.as_str());
            }
            _ => {}
        }
    }

    fn take_events(&mut self) -> Vec<EventSpec> {
        std::mem::take(&mut self.extra_events)
    }

    fn reset(&mut self) {
        *self = Self::new();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runtime::informer::Informer;

    fn test_job(completions: Option<i32>, parallelism: i32) -> Job {
        let mut j = Job::default();
        j.metadata.name = "pi".into();
        j.metadata.namespace = "default".into();
        j.metadata.uid = "uid-pi".into();
        j.metadata.resource_version = 5;
        j.spec.completions = completions;
        j.spec.parallelism = Some(parallelism);
        j.spec.backoff_limit = Some(6);
        j.spec.selector = Some(LabelSelector::default());
        j.spec.template.spec.restart_policy = Some("Never".into());
        j
    }

    fn pod_of(job: &Job, name: &str, phase: PodPhase) -> Pod {
        let mut p = pod_from_template(job, None);
        p.metadata.name = name.into();
        p.metadata.uid = format!("uid-{name}").into();
        p.status.phase = Some(phase);
        p
    }

    fn sync(job: &Job, pods: Vec<Pod>, c: &mut JobController, now: Time) -> Sync {
        let jobs = Informer::from_objects(Kind::Job, [Object::Job(job.clone())]);
        let pods = Informer::from_objects(Kind::Pod, pods.into_iter().map(Object::Pod));
        c.reconcile(&ObjectKey::new(Kind::Job, "default", "pi"), &Caches::new([jobs.store(), pods.store()]), now)
    }

    fn requests(sync: &Sync) -> Vec<String> {
        sync.steps
            .iter()
            .map(|step| {
                let verbs: Vec<&str> = step.iter().map(|c| c.request.verb()).collect();
                verbs.join(",")
            })
            .collect()
    }

    #[test]
    fn a_new_job_creates_parallelism_pods_holding_the_finalizer() {
        let job = test_job(Some(5), 2);
        let s = sync(&job, vec![], &mut JobController::new(), Time(0));
        let creates: Vec<&Pod> = s
            .steps
            .iter()
            .flatten()
            .filter_map(|c| match &c.request {
                ApiRequest::Create(Object::Pod(p)) => Some(p),
                _ => None,
            })
            .collect();
        assert_eq!(creates.len(), 2);
        assert_eq!(creates[0].metadata.finalizers, [JOB_TRACKING_FINALIZER]);
        assert_eq!(creates[0].metadata.generate_name, "pi-");
        let status = s.steps.last().and_then(|s| match &s[0].request {
            ApiRequest::UpdateStatus(Object::Job(j)) => Some(j.status.clone()),
            _ => None,
        });
        let status = status.expect("the status is written last");
        assert_eq!((status.active, status.start_time), (2, Some(Time(0))));
    }

    #[test]
    fn a_finished_pod_is_recorded_uncounted_then_released_then_counted() {
        let mut job = test_job(Some(1), 1);
        job.status.start_time = Some(Time(0));
        job.status.active = 1;
        let s = sync(&job, vec![pod_of(&job, "pi-a", PodPhase::Succeeded)], &mut JobController::new(), Time(9_000));
        assert_eq!(requests(&s), ["update-status", "update", "update-status"], "status with the UID, the pod's finalizer off, the count");
        let ApiRequest::UpdateStatus(Object::Job(first)) = &s.steps[0][0].request else { panic!("status first") };
        assert_eq!(first.status.uncounted_terminated_pods.as_ref().map(|u| u.succeeded.clone()), Some(vec!["uid-pi-a".to_string()]));
        assert_eq!(first.metadata.resource_version, 5, "the first write is conditional on the cached version");
        let ApiRequest::Update(Object::Pod(released)) = &s.steps[1][0].request else { panic!("the pod next") };
        assert!(released.metadata.finalizers.is_empty());
        let ApiRequest::UpdateStatus(Object::Job(last)) = &s.steps[2][0].request else { panic!("status last") };
        assert_eq!((last.status.succeeded, last.status.uncounted_terminated_pods.as_ref()), (1, None));
        assert!(last.status.has_true("SuccessCriteriaMet") && last.status.has_true("Complete"));
        assert_eq!(
            s.steps[2][0].on_success.as_ref().map(|e| (e.reason.to_string(), e.message.to_string())),
            Some(("Completed".into(), "Job completed".into()))
        );
    }

    #[test]
    fn a_pod_whose_release_is_in_flight_is_not_counted_twice_from_a_stale_cache() {
        let mut job = test_job(Some(2), 1);
        job.status.start_time = Some(Time(0));
        let mut c = JobController::new();
        let done = pod_of(&job, "pi-a", PodPhase::Succeeded);
        let first = sync(&job, vec![done.clone()], &mut c, Time(1_000));
        assert!(requests(&first).contains(&"create".to_string()), "one completion left: one more pod");
        // The same stale view again (neither the release nor the status is seen yet).
        let again = sync(&job, vec![done], &mut c, Time(1_100));
        let counted = again.steps.iter().flatten().any(|c| matches!(&c.request, ApiRequest::Update(Object::Pod(_))));
        assert!(!counted, "the pod is being released already");
    }

    #[test]
    fn the_backoff_record_counts_failures_after_the_last_success() {
        let job = test_job(Some(3), 1);
        let finished = |name: &str, phase: PodPhase, at: u64| {
            let mut p = pod_of(&job, name, phase);
            p.status.container_statuses = vec![ContainerStatus {
                state: ContainerState {
                    terminated: Some(ContainerStateTerminated { finished_at: Some(Time(at)), ..Default::default() }),
                    ..Default::default()
                },
                ..Default::default()
            }];
            p
        };
        let (f1, f2, ok) =
            (finished("a", PodPhase::Failed, 1_000), finished("b", PodPhase::Failed, 3_000), finished("c", PodPhase::Succeeded, 2_000));
        let r = BackoffRecord::default().update(&[], &[&f1], Time(1_500));
        assert_eq!((r.failures_after_last_success, r.last_failure), (1, Some(Time(1_000))));
        assert_eq!(r.remaining(Time(6_000)), Duration::secs(5), "10 s after the failure");
        let r = r.update(&[&ok], &[&f2], Time(3_500));
        assert_eq!((r.failures_after_last_success, r.last_failure), (1, Some(Time(3_000))), "only the failure after the success counts");
        let r = r.update(&[], &[&f1, &f2], Time(4_000));
        assert_eq!(r.remaining(Time(3_000)), Duration::secs(40), "three failures: 40 s");
    }

    #[test]
    fn completed_indexes_print_runs_as_ranges() {
        let set = |v: &[i32]| v.iter().copied().collect::<BTreeSet<i32>>();
        assert_eq!(format_indexes(&set(&[0, 1, 2, 4, 6, 7, 9, 10, 11, 12])), "0-2,4,6,7,9-12");
        assert_eq!(format_indexes(&set(&[])), "");
        assert_eq!(parse_indexes("0-2,4,6,7,9-12"), set(&[0, 1, 2, 4, 6, 7, 9, 10, 11, 12]));
    }
}
