//! The CronJob controller (`cronjob-controller`, pkg/controller/cronjob/cronjob_controllerv2.go):
//! creates a Job from each CronJob's template at the times its schedule names, on the simulated
//! clock, and keeps the CronJob's status and history.
//!
//! Each sync finds the most recent schedule time not yet met since `lastScheduleTime` (or the
//! creation), as `mostRecentScheduleTime` does (with its estimate of how many were missed: more
//! than 100 is `TooManyMissedTimes`), and starts nothing while suspended or, under `Forbid`,
//! while a Job is active (`JobAlreadyActive`); under `Replace` it deletes the active Jobs first.
//! With `startingDeadlineSeconds` the search starts no earlier than that long ago, so a time
//! missed by more is skipped silently (upstream's `MissSchedule` event is only reachable on the
//! exact boundary, and kept for it). The Job is named
//! `<cronjob>-<scheduled time in minutes since the Unix epoch>`, so a time is never run twice.
//! Finished Jobs leave `status.active` (`SawCompletedJob`) and the oldest beyond
//! `successfulJobsHistoryLimit` / `failedJobsHistoryLimit` are deleted. The key is requeued for
//! the next schedule time plus 100 ms.
//!
//! A changed schedule or time zone is not synced at once but requeued for its next time
//! (`updateCronJob`): the first sync after the change only computes that time.
//!
//! One difference of shape: a sync's writes are fixed before any answer comes back, and the
//! status must name the new Job's UID, which only the create's answer holds. So the Job is
//! recorded in `status.active` (with `lastScheduleTime`) by the next sync, which the Job's own
//! watch event queues a few milliseconds later — the path upstream takes when a create finds
//! the Job already there ("Job already exists"), which also covers a restart in between.
//! Upstream's live GETs (of a Job missing from the cache) are a confirming GET before the
//! status write, as the garbage collector's.

use super::{Action, Caches, Call, Controller, Sync};
use crate::api::{ApiRequest, DeleteRequest};
use crate::model::cron::{self, Schedule, Zone};
use crate::model::*;
use crate::runtime::events::EventSpec;
use crate::runtime::informer::Delta;
use std::collections::BTreeMap;

/// `nextScheduleDelta`: requeued this long after the schedule time, for clock skew.
const NEXT_SCHEDULE_DELTA_MS: i64 = 100;

#[derive(Debug, Default)]
pub struct CronJobController {
    /// The resourceVersion of the last status written per CronJob: an older cache would see
    /// neither the Jobs it recorded nor its `lastScheduleTime`, so the sync waits for it.
    written: BTreeMap<ObjectKey, u64>,
    /// The Job each CronJob's last sync created, until a sync records it: finding it outside
    /// `status.active` is then expected, not `UnexpectedJob` (upstream re-reads the CronJob).
    created: BTreeMap<ObjectKey, String>,
    /// CronJobs whose schedule or time zone just changed: upstream's handler does not sync
    /// them then but requeues them for the new schedule's next time (`updateCronJob`), so the
    /// first sync after the change only computes that time.
    rescheduled: std::collections::BTreeSet<ObjectKey>,
    /// Events decided without a write to carry them (recorded after the sync).
    events: Vec<EventSpec>,
}

impl CronJobController {
    pub fn new() -> Self {
        Self::default()
    }
}

/// Unix milliseconds of a simulated instant.
fn unix_ms(t: Time) -> i64 {
    EPOCH_UNIX_SECS as i64 * 1000 + t.as_millis() as i64
}

/// The simulated instant of Unix milliseconds (none before the simulation began).
fn sim_time(unix_ms: i64) -> Time {
    Time((unix_ms - EPOCH_UNIX_SECS as i64 * 1000).max(0) as u64)
}

/// A schedule read in its CronJob's zone.
struct Clock {
    schedule: Schedule,
    offset: i32,
}

impl Clock {
    /// The CronJob's schedule and zone; the reason and message of the event when unusable.
    fn of(cj: &CronJob) -> Result<Clock, (&'static str, String)> {
        let offset = match cj.spec.time_zone.as_deref().map(cron::zone) {
            None => 0,
            Some(Zone::Fixed(offset)) => offset,
            Some(_) => {
                let tz = cj.spec.time_zone.clone().unwrap_or_default();
                return Err(("UnknownTimeZone", format!("invalid timeZone: {tz:?}: unknown time zone {tz}")));
            }
        };
        let schedule = cron::parse_standard(&cj.spec.schedule)
            .map_err(|e| ("UnparseableSchedule", format!("unparseable schedule: {:?} : {e}", cj.spec.schedule)))?;
        Ok(Clock { schedule, offset })
    }

    /// `Schedule.Next` in Unix milliseconds.
    fn next(&self, after_ms: i64) -> Option<i64> {
        self.schedule.next(after_ms.div_euclid(1000), self.offset).map(|s| s * 1000)
    }
}

/// How many schedule times went by unmet (`missedSchedulesType`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Missed {
    None,
    Few,
    Many,
}

/// `mostRecentScheduleTime`: the earliest time considered, the most recent schedule time in
/// (earliest, now] if any, and how many were missed; an error for a schedule that never fires.
fn most_recent_schedule_time(cj: &CronJob, now: i64, clock: &Clock, with_deadline: bool) -> Result<(i64, Option<i64>, Missed), String> {
    let mut earliest = cj.status.last_schedule_time.or(cj.metadata.creation_timestamp).map_or(0, unix_ms);
    if let Some(deadline) = cj.spec.starting_deadline_seconds.filter(|_| with_deadline) {
        earliest = earliest.max(now - deadline * 1000);
    }
    let never = || "time difference between two schedules is less than 1 second".to_string();
    let t1 = clock.next(earliest).ok_or_else(never)?;
    let t2 = clock.next(t1).ok_or_else(never)?;
    if now < t1 {
        return Ok((earliest, None, Missed::None));
    }
    if now < t2 {
        return Ok((earliest, Some(t1), Missed::None));
    }
    // Go rounds the gap to whole seconds and truncates the time elapsed.
    let between = (t2 - t1 + 500) / 1000;
    if between < 1 {
        return Err(never());
    }
    let missed = (now - t1) / 1000 / between + 1;
    // A rough estimate walked forward exactly from one interval before it.
    let mut t = t1 + (missed - 2) * between * 1000;
    let mut most_recent = None;
    while let Some(next) = clock.next(t).filter(|n| *n <= now) {
        most_recent = Some(next);
        t = next;
    }
    let kind = if missed > 100 { Missed::Many } else { Missed::Few };
    Ok((earliest, most_recent, kind))
}

/// `nextScheduleTimeDuration`: how long until the key should be looked at again.
fn requeue_after(cj: &CronJob, now: i64, clock: &Clock) -> Option<Duration> {
    let most_recent = match most_recent_schedule_time(cj, now, clock, false) {
        Err(_) => now,
        Ok((_, Some(t), _)) => t,
        Ok((earliest, None, Missed::None)) => earliest,
        Ok((_, None, _)) => now,
    };
    let due = clock.next(most_recent)? + NEXT_SCHEDULE_DELTA_MS;
    Some(Duration::millis((due - now).max(0) as u64))
}

/// `getJobName`: the CronJob's name and the scheduled time in minutes since the Unix epoch.
pub fn job_name(cj: &CronJob, scheduled_unix_ms: i64) -> String {
    format!("{}-{}", cj.metadata.name, scheduled_unix_ms.div_euclid(60_000))
}

/// `getJobFromTemplate2`: the template's labels and annotations, the scheduled-time annotation
/// in the CronJob's zone, and the CronJob as controlling owner.
fn job_from_template(cj: &CronJob, scheduled: i64, offset: i32) -> Job {
    let template = &cj.spec.job_template;
    let mut job = Job { spec: template.spec.clone().into(), ..Default::default() };
    job.metadata.name = job_name(cj, scheduled).into();
    job.metadata.namespace = cj.metadata.namespace.clone();
    job.metadata.labels = template.metadata.labels.clone();
    job.metadata.annotations = template.metadata.annotations.clone();
    job.metadata.annotations.insert(CRONJOB_SCHEDULED_TIMESTAMP.into(), cron::rfc3339_in(scheduled.div_euclid(1000), offset));
    job.metadata.owner_references = vec![owner_reference(cj)].into();
    job
}

/// `metav1.NewControllerRef` for a CronJob.
pub fn owner_reference(cj: &CronJob) -> OwnerReference {
    OwnerReference {
        api_version: "batch/v1".into(),
        kind: "CronJob".into(),
        name: cj.metadata.name.to_string(),
        uid: cj.metadata.uid.to_string(),
        controller: Some(true),
        block_owner_deletion: Some(true),
    }
}

/// The Job's finished condition (`Complete` or `Failed`), if it finished.
fn finished_as(job: &Job) -> Option<&'static str> {
    job.status.conditions.iter().filter(|c| c.status == "True").find_map(|c| match c.type_.as_str() {
        "Complete" => Some("Complete"),
        "Failed" => Some("Failed"),
        _ => None,
    })
}

/// `getRef`: how `status.active` names a Job (and an event its CronJob).
fn reference(kind: Kind, meta: &ObjectMeta) -> ObjectReference {
    ObjectReference {
        kind: kind.as_str().into(),
        namespace: meta.namespace.clone(),
        name: meta.name.clone(),
        uid: meta.uid.clone(),
        api_version: kind.api_version().into(),
        field_path: Default::default(),
    }
}

/// Go's `time.RFC1123Z` in UTC, as the `MissSchedule` event prints the time.
fn rfc1123z(unix_ms: i64) -> String {
    const DAYS: [&str; 7] = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"];
    const MONTHS: [&str; 12] = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];
    let secs = unix_ms.div_euclid(1000);
    let text = cron::rfc3339_in(secs, 0); // 2026-01-01T00:01:00Z
    let (y, mo, d, hms) = (&text[0..4], &text[5..7], &text[8..10], &text[11..19]);
    let month = MONTHS[mo.parse::<usize>().unwrap_or(1).clamp(1, 12) - 1];
    let weekday = DAYS[secs.div_euclid(86_400).rem_euclid(7) as usize];
    format!("{weekday}, {d} {month} {y} {hms} +0000")
}

/// A delete of one Job made by the CronJob (`deleteJob`), with its events.
fn delete_job(job: &Job, reference: &ObjectReference) -> Call {
    let key = ObjectKey::of(Kind::Job, &job.metadata);
    Call::new(ApiRequest::Delete(DeleteRequest { uid: Some(job.metadata.uid.to_string()), ..DeleteRequest::new(key) }))
        .on_success(EventSpec::normal(reference.clone(), "SuccessfulDelete", format!("Deleted job {}", job.metadata.name)))
        .on_failure(EventSpec::warning(reference.clone(), "FailedDelete", "Deleted job: "))
}

/// What one sync decided, built up in upstream's order.
struct Plan<'a> {
    cj: &'a CronJob,
    reference: ObjectReference,
    status: CronJobStatus,
    deletes: Vec<Call>,
    create: Option<Call>,
    /// Active Jobs the cache lacks, to confirm gone before the status drops them.
    missing: Vec<ObjectReference>,
    events: Vec<EventSpec>,
    then: Action,
    summary: Option<String>,
}

impl<'a> Plan<'a> {
    fn new(cj: &'a CronJob) -> Self {
        Plan {
            cj,
            reference: reference(Kind::CronJob, &cj.metadata),
            status: cj.status.clone(),
            deletes: Vec::new(),
            create: None,
            missing: Vec::new(),
            events: Vec::new(),
            then: Action::AwaitChange,
            summary: None,
        }
    }
    fn normal(&mut self, reason: &str, message: impl Into<Name>) {
        self.events.push(EventSpec::normal(self.reference.clone(), reason, message));
    }
    fn warning(&mut self, reason: &str, message: impl Into<Name>) {
        self.events.push(EventSpec::warning(self.reference.clone(), reason, message));
    }
    fn drop_active(&mut self, uid: &str) {
        self.status.active.retain(|r| r.uid.as_str() != uid);
    }
}

/// `cleanupFinishedJobs`: the oldest finished Jobs beyond each history limit are deleted.
fn clean_up_history(plan: &mut Plan, jobs: &[&Job]) {
    let spec = &plan.cj.spec;
    for (condition, limit) in [("Complete", spec.successful_jobs_history_limit), ("Failed", spec.failed_jobs_history_limit)] {
        let Some(limit) = limit else { continue };
        let mut finished: Vec<&Job> = jobs.iter().copied().filter(|j| finished_as(j) == Some(condition)).collect();
        let excess = finished.len().saturating_sub(limit.max(0) as usize);
        if excess == 0 {
            continue;
        }
        // `byJobStartTime`: started ones first, oldest first, then by name.
        finished.sort_by(|a, b| {
            let key = |j: &Job| (j.status.start_time.is_none(), j.status.start_time, j.metadata.name.to_string());
            key(a).cmp(&key(b))
        });
        for job in &finished[..excess] {
            plan.deletes.push(delete_job(job, &plan.reference));
            plan.drop_active(&job.metadata.uid);
        }
    }
}

impl CronJobController {
    /// The first part of `syncCronJob`: what the Jobs say about `status`.
    fn observe_jobs(&self, plan: &mut Plan, key: &ObjectKey, jobs: &[&Job]) {
        for job in jobs {
            let uid = job.metadata.uid.as_str();
            let active = plan.status.active.iter().any(|r| r.uid.as_str() == uid);
            match finished_as(job) {
                None if !active && self.created.get(key).is_none_or(|n| n.as_str() != job.metadata.name.as_str()) => {
                    let message = format!("Saw a job that the controller did not create or forgot: {}", job.metadata.name);
                    plan.warning("UnexpectedJob", message);
                }
                None => {}
                Some(condition) => {
                    if active {
                        plan.drop_active(uid);
                        plan.normal("SawCompletedJob", format!("Saw completed job: {}, condition: {condition}", job.metadata.name));
                    }
                    if condition == "Complete" {
                        let done = job.status.completion_time;
                        if plan.status.last_successful_time.is_none() || done > plan.status.last_successful_time {
                            plan.status.last_successful_time = done.or(plan.status.last_successful_time);
                        }
                    }
                }
            }
        }
        let present = |r: &ObjectReference| jobs.iter().any(|j| j.metadata.uid == r.uid);
        plan.missing = plan.status.active.iter().filter(|r| !present(r)).cloned().collect();
    }

    /// The rest of `syncCronJob`: whether a Job is due now, and what to do about it.
    fn schedule(&mut self, plan: &mut Plan, key: &ObjectKey, jobs: &[&Job], now: i64) {
        let cj = plan.cj;
        let rescheduled = self.rescheduled.remove(key);
        if cj.metadata.is_deleting() || cj.spec.is_suspended() {
            return;
        }
        let clock = match Clock::of(cj) {
            Ok(clock) => clock,
            Err((reason, message)) => return plan.warning(reason, message),
        };
        if rescheduled {
            plan.then = requeue_after(cj, now, &clock).map_or(Action::AwaitChange, Action::RequeueAfter);
            return;
        }
        let scheduled = match most_recent_schedule_time(cj, now, &clock, true) {
            Err(e) => return plan.warning("InvalidSchedule", format!("invalid schedule: {} : {e}", cj.spec.schedule)),
            Ok((_, scheduled, missed)) => {
                if missed == Missed::Many && scheduled.is_some() {
                    plan.warning(
                        "TooManyMissedTimes",
                        "too many missed start times. Set or decrease .spec.startingDeadlineSeconds or check clock skew",
                    );
                }
                scheduled
            }
        };
        plan.then = requeue_after(cj, now, &clock).map_or(Action::AwaitChange, Action::RequeueAfter);
        let Some(scheduled) = scheduled else { return };
        if cj.spec.starting_deadline_seconds.is_some_and(|d| scheduled + d * 1000 < now) {
            return plan.warning("MissSchedule", format!("Missed scheduled time to start a job: {}", rfc1123z(scheduled)));
        }
        let name = job_name(cj, scheduled);
        let scheduled_time = sim_time(scheduled);
        if plan.status.active.iter().any(|r| r.name.as_str() == name) || cj.status.last_schedule_time == Some(scheduled_time) {
            return;
        }
        if cj.spec.concurrency_policy == "Forbid" && !plan.status.active.is_empty() {
            return plan.normal("JobAlreadyActive", "Not starting job because prior execution is running and concurrency policy is Forbid");
        }
        // A Job already made for this time (by the last sync, or before a restart) is recorded.
        if let Some(existing) = jobs.iter().find(|j| j.metadata.name.as_str() == name) {
            if existing.metadata.controller_ref().is_some_and(|r| r.uid == cj.metadata.uid.as_str()) {
                plan.status.active.push(reference(Kind::Job, &existing.metadata));
                plan.status.last_schedule_time = Some(scheduled_time);
                self.created.remove(key);
            } else {
                // Someone else's Job holds the name: upstream leaves it and stops requeueing.
                plan.then = Action::AwaitChange;
            }
            return;
        }
        if cj.spec.concurrency_policy == "Replace" {
            let active: Vec<ObjectReference> = plan.status.active.drain(..).collect();
            for r in active {
                let job = jobs.iter().find(|j| j.metadata.uid == r.uid);
                if let Some(job) = job {
                    plan.deletes.push(delete_job(job, &plan.reference));
                }
            }
        }
        let job = job_from_template(cj, scheduled, clock.offset);
        plan.create = Some(
            Call::new(ApiRequest::Create(Object::Job(job)))
                .on_success(EventSpec::normal(plan.reference.clone(), "SuccessfulCreate", format!("Created job {name}")))
                .on_failure(EventSpec::warning(plan.reference.clone(), "FailedCreate", "Error creating job: ")),
        );
        // Requeued from the time just met, as upstream's status already holds it.
        let mut met = cj.clone();
        met.status.last_schedule_time = Some(scheduled_time);
        plan.then = requeue_after(&met, now, &clock).map_or(Action::AwaitChange, Action::RequeueAfter);
        plan.summary = Some(format!("CronJob {}: {} is due, creating Job {name}", cj.metadata.name, scheduled_time.rfc3339()));
        self.created.insert(key.clone(), name);
    }

    /// The writes in order: deletions, the confirming GETs, the new Job, the status.
    fn writes(&mut self, plan: Plan) -> Sync {
        let cj = plan.cj;
        let mut steps = vec![plan.deletes];
        let missing_gets: Vec<Call> = plan
            .missing
            .iter()
            .map(|r| Call::expect_absent(ApiRequest::Get(ObjectKey::new(Kind::Job, &r.namespace, &r.name)), &r.uid))
            .collect();
        let mut status = plan.status;
        let mut status_events = Vec::new();
        for r in &plan.missing {
            status.active.retain(|a| a.uid != r.uid);
            status_events.push(EventSpec::normal(plan.reference.clone(), "MissingJob", format!("Active job went missing: {}", r.name)));
        }
        steps.push(missing_gets);
        steps.extend(plan.create.map(|c| vec![c]));
        if status != cj.status {
            let mut next = cj.clone();
            next.status = status;
            let mut call = Call::new(ApiRequest::UpdateStatus(Object::CronJob(next)));
            let mut events = status_events.into_iter();
            if let Some(first) = events.next() {
                call = call.on_success(first);
            }
            self.events.extend(events);
            steps.push(vec![call]);
        }
        self.events.extend(plan.events);
        if steps.iter().all(Vec::is_empty) {
            return Sync { steps: Vec::new(), then: plan.then, summary: plan.summary };
        }
        let summary = plan.summary.unwrap_or_else(|| format!("CronJob {}: updating its Jobs and status", cj.metadata.name));
        Sync::with_steps(steps, summary).then(plan.then)
    }
}

impl Controller for CronJobController {
    fn name(&self) -> &'static str {
        "cronjob-controller"
    }

    fn watches(&self) -> &'static [Kind] {
        &[Kind::CronJob, Kind::Job]
    }

    /// A CronJob's changes queue it; a Job's queue the CronJob that controls it (found by name
    /// and UID in the cache, `resolveControllerRef`), the old one too if the owner changed.
    fn on_delta(&mut self, caches: &Caches, delta: &Delta, _now: Time) -> Vec<ObjectKey> {
        let object = delta.object();
        if object.kind() == Kind::CronJob {
            match delta {
                Delta::Deleted(_) => {
                    self.written.remove(&object.key());
                    self.created.remove(&object.key());
                    self.rescheduled.remove(&object.key());
                }
                // Restored from an etcd snapshot (its resourceVersion went back), or seen anew:
                // what this controller wrote before is not what the cache must catch up with.
                Delta::Updated { old, new } if new.meta().resource_version < old.meta().resource_version => {
                    self.written.remove(&object.key());
                }
                Delta::Added(_) => {
                    self.written.remove(&object.key());
                }
                Delta::Updated { .. } => {}
            }
            if let Delta::Updated { old, new } = delta {
                let (old, new) = (old.as_cron_job(), new.as_cron_job());
                let when = |cj: Option<&CronJob>| cj.map(|c| (c.spec.schedule.clone(), c.spec.time_zone.clone()));
                if when(old) != when(new) {
                    self.rescheduled.insert(object.key());
                }
            }
            return vec![object.key()];
        }
        let resolve = |o: &Object| {
            let meta = o.meta();
            let owner = meta.controller_ref().filter(|r| r.kind == "CronJob")?;
            let key = ObjectKey::new(Kind::CronJob, &meta.namespace, &owner.name);
            caches[Kind::CronJob].get(&key).filter(|cj| cj.meta().uid.as_str() == owner.uid).map(|_| key)
        };
        match delta {
            Delta::Updated { old, new } if old.meta().resource_version == new.meta().resource_version => Vec::new(),
            Delta::Updated { old, new } => {
                let mut keys: Vec<ObjectKey> = resolve(new).into_iter().collect();
                if old.meta().controller_ref() != new.meta().controller_ref() {
                    keys.extend(resolve(old));
                }
                keys
            }
            Delta::Added(o) | Delta::Deleted(o) => resolve(o).into_iter().collect(),
        }
    }

    fn reconcile(&mut self, key: &ObjectKey, caches: &Caches, now: Time) -> Sync {
        let Some(cj) = caches[Kind::CronJob].get(key).and_then(|o| o.as_cron_job()) else { return Sync::nothing() };
        if self.written.get(key).is_some_and(|rv| cj.metadata.resource_version < *rv) {
            // The informer has not shown this controller's own last status write yet.
            return Sync::nothing();
        }
        // `getJobsToBeReconciled`: every Job whose controller reference names this CronJob.
        let jobs: Vec<&Job> = caches[Kind::Job]
            .in_namespace(&key.namespace)
            .filter_map(|o| o.as_job())
            .filter(|j| j.metadata.controller_ref().is_some_and(|r| r.name == cj.metadata.name.as_str()))
            .collect();
        let mut plan = Plan::new(cj);
        clean_up_history(&mut plan, &jobs);
        self.observe_jobs(&mut plan, key, &jobs);
        self.schedule(&mut plan, key, &jobs, unix_ms(now));
        self.writes(plan)
    }

    fn on_outcome(&mut self, key: &ObjectKey, call: &Call, outcome: &super::Outcome) {
        match (&call.request, outcome) {
            (ApiRequest::UpdateStatus(Object::CronJob(_)), super::Outcome::Done(o)) => {
                self.written.insert(key.clone(), o.meta().resource_version);
            }
            // A Job not created is not waited for (one that already existed is found by name).
            (ApiRequest::Create(_), super::Outcome::Failed(_) | super::Outcome::Skipped) => {
                self.created.remove(key);
            }
            _ => {}
        }
    }

    fn take_events(&mut self) -> Vec<EventSpec> {
        std::mem::take(&mut self.events)
    }

    fn reset(&mut self) {
        *self = Self::new();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hello(schedule: &str) -> CronJob {
        let mut cj = CronJob::default();
        cj.metadata.name = "hello".into();
        cj.metadata.namespace = "default".into();
        cj.metadata.uid = "cj-uid".into();
        cj.metadata.creation_timestamp = Some(Time(0));
        cj.spec.schedule = schedule.into();
        cj.spec.concurrency_policy = "Allow".into();
        cj
    }

    fn clock(cj: &CronJob) -> Clock {
        Clock::of(cj).unwrap()
    }

    #[test]
    fn job_names_are_minutes_since_the_unix_epoch() {
        let cj = hello("* * * * *");
        // 2026-01-01T00:01:00Z is 1767225660 s: minute 29453761.
        assert_eq!(job_name(&cj, 1_767_225_660_000), "hello-29453761");
        let job = job_from_template(&cj, 1_767_225_660_000, 0);
        assert_eq!(job.metadata.annotations[CRONJOB_SCHEDULED_TIMESTAMP], "2026-01-01T00:01:00Z");
        assert_eq!(job.metadata.controller_ref().map(|r| r.kind.as_str()), Some("CronJob"));
    }

    #[test]
    fn the_most_recent_unmet_time_and_the_requeue_follow_upstream() {
        let cj = hello("*/5 * * * *");
        let c = clock(&cj);
        let start = unix_ms(Time(0));
        assert_eq!(most_recent_schedule_time(&cj, start + 60_000, &c, true), Ok((start, None, Missed::None)));
        assert_eq!(requeue_after(&cj, start + 60_000, &c), Some(Duration::millis(240_100)));
        let at = start + 5 * 60_000 + 50;
        assert_eq!(most_recent_schedule_time(&cj, at, &c, true), Ok((start, Some(start + 300_000), Missed::None)));
        // 17 minutes late: three missed, the most recent is minute 15.
        let late = start + 17 * 60_000;
        assert_eq!(most_recent_schedule_time(&cj, late, &c, true), Ok((start, Some(start + 900_000), Missed::Few)));
    }

    #[test]
    fn more_than_a_hundred_missed_times_are_many() {
        let cj = hello("* * * * *");
        let c = clock(&cj);
        let later = unix_ms(Time(0)) + 200 * 60_000 + 1;
        assert_eq!(most_recent_schedule_time(&cj, later, &c, true).map(|r| r.2), Ok(Missed::Many));
    }

    #[test]
    fn miss_schedule_prints_rfc1123z() {
        assert_eq!(rfc1123z(1_767_225_660_000), "Thu, 01 Jan 2026 00:01:00 +0000");
    }
}
