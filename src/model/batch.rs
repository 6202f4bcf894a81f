//! Job (batch/v1): the claim "run this pod template to completion N times", which the Job
//! controller reconciles by creating pods and counting how they ended.
//!
//! Only what the simulation models is read; the fields it does not (`podFailurePolicy`,
//! `successPolicy`, `backoffLimitPerIndex`, `maxFailedIndexes`, `podReplacementPolicy`,
//! `managedBy`) are dropped by decoding, so kubectl names each in a
//! `Warning:` line instead of the cluster seeming to honour it.

use super::decode::decode_struct;
#[cfg(test)]
use super::meta::null_as_default;
use super::meta::{LabelSelector, ObjectMeta};
use super::pod::PodTemplateSpec;
use super::shared::Shared;
use super::time::Time;
use serde::Serialize;

/// The finalizer a Job's pods carry until the controller has counted them
/// (`batch.kubernetes.io/job-tracking`).
pub const JOB_TRACKING_FINALIZER: &str = "batch.kubernetes.io/job-tracking";
/// The label (and, for Indexed Jobs, annotation) holding a pod's completion index.
pub const JOB_COMPLETION_INDEX: &str = "batch.kubernetes.io/job-completion-index";

#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[cfg_attr(test, derive(serde::Deserialize))]
#[serde(rename_all = "camelCase")]
pub struct Job {
    #[serde(default)]
    pub metadata: ObjectMeta,
    #[serde(default)]
    /// Behind a `Shared`, as a pod's spec is: versions that change only the status share it,
    /// and `Object`, as large as its largest variant, stays the size of a pod (inline, this
    /// spec made every stored version of every object larger).
    pub spec: Shared<JobSpec>,
    #[serde(default)]
    pub status: JobStatus,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[cfg_attr(test, derive(serde::Deserialize))]
#[serde(rename_all = "camelCase")]
pub struct JobSpec {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parallelism: Option<i32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub completions: Option<i32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub active_deadline_seconds: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub backoff_limit: Option<i32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub selector: Option<LabelSelector>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub manual_selector: Option<bool>,
    /// Shared with the object's other versions (and its spec with the pods made from it).
    #[serde(default)]
    pub template: Shared<PodTemplateSpec>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub completion_mode: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub suspend: Option<bool>,
    /// Read by the TTL-after-finished controller, not the Job controller.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ttl_seconds_after_finished: Option<i32>,
}

impl JobSpec {
    pub fn is_suspended(&self) -> bool {
        self.suspend == Some(true)
    }
    pub fn is_indexed(&self) -> bool {
        self.completion_mode.as_deref() == Some("Indexed")
    }
}

#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[cfg_attr(test, derive(serde::Deserialize))]
#[serde(rename_all = "camelCase")]
pub struct JobStatus {
    #[serde(default, skip_serializing_if = "Vec::is_empty", deserialize_with = "null_as_default")]
    pub conditions: Vec<JobCondition>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start_time: Option<Time>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub completion_time: Option<Time>,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub active: i32,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub succeeded: i32,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub failed: i32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub completed_indexes: Option<String>,
    /// Pods counted as finished whose finalizer is not yet removed (the two-phase count that
    /// keeps a pod from being counted twice, or never, across controller restarts).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub uncounted_terminated_pods: Option<UncountedTerminatedPods>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ready: Option<i32>,
}

impl JobStatus {
    /// The condition of this type, if present.
    pub fn condition(&self, type_: &str) -> Option<&JobCondition> {
        self.conditions.iter().find(|c| c.type_ == type_)
    }
    /// Whether the condition of this type is there with status True.
    pub fn has_true(&self, type_: &str) -> bool {
        self.condition(type_).is_some_and(|c| c.status == "True")
    }
    /// `IsJobFinished`: Complete or Failed is True.
    pub fn is_finished(&self) -> bool {
        self.has_true("Complete") || self.has_true("Failed")
    }
}

#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[cfg_attr(test, derive(serde::Deserialize))]
#[serde(rename_all = "camelCase")]
pub struct UncountedTerminatedPods {
    #[serde(default, skip_serializing_if = "Vec::is_empty", deserialize_with = "null_as_default")]
    pub succeeded: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty", deserialize_with = "null_as_default")]
    pub failed: Vec<String>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[cfg_attr(test, derive(serde::Deserialize))]
#[serde(rename_all = "camelCase")]
pub struct JobCondition {
    #[serde(rename = "type")]
    pub type_: String,
    pub status: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_probe_time: Option<Time>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_transition_time: Option<Time>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

fn is_zero(v: &i32) -> bool {
    *v == 0
}

/// The package upstream's OpenAPI documents name these types in (`schema.rs`).
const SCHEMA_PACKAGE: &str = "io.k8s.api.batch.v1";
// Decoding from JSON by hand (see `decode`): each struct's fields in declaration order.
decode_struct!(
/// Runs pods until a number of them succeed.
Job {
    /// The object's name, namespace and labels, and what the API server records about it.
    metadata: "metadata" Default,
    /// What to run, and until when.
    spec: "spec" Default,
    /// What the Job controller last counted.
    status: "status" Default,
});
decode_struct!(
/// What a Job runs, and until when.
JobSpec {
    /// How many pods may run at once.
    parallelism: "parallelism" Default,
    /// How many must succeed.
    completions: "completions" Default,
    /// How long the Job may run before it fails.
    active_deadline_seconds: "activeDeadlineSeconds" Default,
    /// How many failures before the Job fails (6).
    backoff_limit: "backoffLimit" Default,
    /// The labels of its pods; the API server generates it unless manualSelector is set.
    selector: "selector" Default,
    /// Whether the selector is the user's own.
    manual_selector: "manualSelector" Default,
    /// The pods to run; restartPolicy must be Never or OnFailure.
    #[required = true]
    template: "template" Default,
    /// NonIndexed (the default) or Indexed.
    completion_mode: "completionMode" Default,
    /// While true, the Job runs no pods.
    suspend: "suspend" Default,
    /// How long after finishing the Job is deleted.
    ttl_seconds_after_finished: "ttlSecondsAfterFinished" Default,
});
decode_struct!(
/// What the Job controller last counted.
JobStatus {
    /// Complete or Failed once the Job is finished, and the steps before.
    #[list = "atomic"]
    #[patch = "merge type"]
    conditions: "conditions" NullAsDefault,
    /// When the Job controller started the Job.
    start_time: "startTime" Default,
    /// When the Job completed.
    completion_time: "completionTime" Default,
    /// Pods running or waiting to.
    active: "active" Default,
    /// Pods that succeeded.
    succeeded: "succeeded" Default,
    /// Pods that failed.
    failed: "failed" Default,
    /// For an Indexed Job, the indexes done.
    completed_indexes: "completedIndexes" Default,
    /// Finished pods the controller has seen but not counted yet.
    uncounted_terminated_pods: "uncountedTerminatedPods" Default,
    /// Active pods that are Ready.
    ready: "ready" Default,
});
decode_struct!(
/// Finished pods not counted yet, by UID.
UncountedTerminatedPods {
    /// Pods that succeeded.
    succeeded: "succeeded" NullAsDefault,
    /// Pods that failed.
    failed: "failed" NullAsDefault,
});
decode_struct!(
/// A condition of a Job.
JobCondition {
    /// Which condition this is.
    type_: "type" Required,
    /// True, False or Unknown.
    status: "status" Required,
    /// When the condition was last checked.
    last_probe_time: "lastProbeTime" Default,
    /// When the status last changed.
    last_transition_time: "lastTransitionTime" Default,
    /// A word for why the condition is as it is.
    reason: "reason" Default,
    /// Why, for people.
    message: "message" Default,
});

/// The annotation the CronJob controller puts on each Job it creates: the scheduled time in
/// the CronJob's time zone, RFC 3339 (`CronJobsScheduledAnnotation`, on by default).
pub const CRONJOB_SCHEDULED_TIMESTAMP: &str = "batch.kubernetes.io/cronjob-scheduled-timestamp";
/// The annotation `kubectl create job --from=cronjob/NAME` sets on the Job it makes.
pub const CRONJOB_INSTANTIATE: &str = "cronjob.kubernetes.io/instantiate";

/// CronJob (batch/v1): "create a Job from this template at these times", which the CronJob
/// controller reconciles against the simulated clock (see `controllers::cronjob`).
///
/// Every spec field upstream has is read; nothing here is dropped by decoding.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[cfg_attr(test, derive(serde::Deserialize))]
#[serde(rename_all = "camelCase")]
pub struct CronJob {
    #[serde(default)]
    pub metadata: ObjectMeta,
    #[serde(default)]
    pub spec: CronJobSpec,
    #[serde(default)]
    pub status: CronJobStatus,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[cfg_attr(test, derive(serde::Deserialize))]
#[serde(rename_all = "camelCase")]
pub struct CronJobSpec {
    #[serde(default)]
    pub schedule: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time_zone: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub starting_deadline_seconds: Option<i64>,
    /// `Allow`, `Forbid` or `Replace`; defaulted to `Allow` by the API server.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub concurrency_policy: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub suspend: Option<bool>,
    /// Shared, so that a CronJob is no larger than a pod in `Object` (the Job template
    /// inline made it the largest variant, and every stored version of every pod paid for it).
    #[serde(default)]
    pub job_template: Shared<JobTemplateSpec>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub successful_jobs_history_limit: Option<i32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failed_jobs_history_limit: Option<i32>,
}

impl CronJobSpec {
    pub fn is_suspended(&self) -> bool {
        self.suspend == Some(true)
    }
}

/// The Job a CronJob makes each time: its labels and annotations, and its spec.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[cfg_attr(test, derive(serde::Deserialize))]
#[serde(rename_all = "camelCase")]
pub struct JobTemplateSpec {
    #[serde(default)]
    pub metadata: ObjectMeta,
    #[serde(default)]
    pub spec: JobSpec,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[cfg_attr(test, derive(serde::Deserialize))]
#[serde(rename_all = "camelCase")]
pub struct CronJobStatus {
    /// References to the Jobs it created that have not finished.
    #[serde(default, skip_serializing_if = "Vec::is_empty", deserialize_with = "null_as_default")]
    pub active: Vec<super::event::ObjectReference>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_schedule_time: Option<Time>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_successful_time: Option<Time>,
}

decode_struct!(
/// Creates a Job on a schedule.
CronJob {
    /// The object's name, namespace and labels, and what the API server records about it.
    metadata: "metadata" Default,
    /// When to create Jobs, and what Jobs.
    spec: "spec" Default,
    /// What the CronJob controller last did.
    status: "status" Default,
});
decode_struct!(
/// When a CronJob creates Jobs, and what.
CronJobSpec {
    /// When, in cron form (*/5 * * * *).
    #[required = true]
    schedule: "schedule" Default,
    /// The time zone of the schedule (UTC and Etc/GMT±N are simulated).
    time_zone: "timeZone" Default,
    /// How late a missed run may still start.
    starting_deadline_seconds: "startingDeadlineSeconds" Default,
    /// Allow, Forbid or Replace a Job still running.
    concurrency_policy: "concurrencyPolicy" Default,
    /// While true, no Job is created.
    suspend: "suspend" Default,
    /// The Jobs it creates.
    #[required = true]
    job_template: "jobTemplate" Default,
    /// Finished Jobs to keep (3).
    successful_jobs_history_limit: "successfulJobsHistoryLimit" Default,
    /// Failed Jobs to keep (1).
    failed_jobs_history_limit: "failedJobsHistoryLimit" Default,
});
decode_struct!(
/// The Jobs a CronJob creates.
JobTemplateSpec {
    /// Labels and annotations the Jobs get.
    metadata: "metadata" Default,
    /// The Jobs' spec.
    spec: "spec" Default,
});
decode_struct!(
/// What the CronJob controller last did.
CronJobStatus {
    /// Jobs it created that are still running.
    #[list = "atomic"]
    active: "active" NullAsDefault,
    /// When a Job was last due.
    last_schedule_time: "lastScheduleTime" Default,
    /// When a Job last succeeded.
    last_successful_time: "lastSuccessfulTime" Default,
});
