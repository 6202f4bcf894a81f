//! The TTL-after-finished controller (`ttl-after-finished-controller`,
//! pkg/controller/ttlafterfinished): deletes a finished Job once its `ttlSecondsAfterFinished`
//! has passed, so finished Jobs and their pods do not pile up.
//!
//! A Job is finished when its `Complete` or `Failed` condition is True; it expires that
//! condition's transition time plus the TTL. Until then the key waits in the queue (`AddAfter`);
//! at expiry the Job is deleted with its UID as a precondition (a Job re-created under the same
//! name is not this one), and the garbage collector removes its pods in the background, as the
//! upstream controller's `PropagationPolicy: Background` asks.

use super::{Action, Caches, Call, Controller, Sync};
use crate::api::{ApiRequest, DeleteRequest};
use crate::model::*;
use crate::runtime::informer::Delta;

#[derive(Debug, Default)]
pub struct TtlAfterFinishedController;

impl TtlAfterFinishedController {
    pub fn new() -> Self {
        TtlAfterFinishedController
    }
}

/// When a Job with a TTL expires: its finish time plus the TTL (`None`: not finished, no TTL).
pub fn expires_at(job: &Job) -> Option<Time> {
    let ttl = job.spec.ttl_seconds_after_finished?;
    let finished = job.status.conditions.iter().find(|c| (c.type_ == "Complete" || c.type_ == "Failed") && c.status == "True")?;
    Some(finished.last_transition_time? + Duration::secs(ttl.max(0) as u64))
}

impl Controller for TtlAfterFinishedController {
    fn name(&self) -> &'static str {
        "ttl-after-finished-controller"
    }

    fn watches(&self) -> &'static [Kind] {
        &[Kind::Job]
    }

    /// Only Jobs that may need cleaning up are queued (`needsCleanup`).
    fn on_delta(&mut self, _caches: &Caches, delta: &Delta, _now: Time) -> Vec<ObjectKey> {
        match delta {
            Delta::Added(o) | Delta::Updated { new: o, .. } if o.as_job().and_then(expires_at).is_some() => vec![o.key()],
            _ => Vec::new(),
        }
    }

    fn reconcile(&mut self, key: &ObjectKey, caches: &Caches, now: Time) -> Sync {
        let Some(job) = caches[Kind::Job].get(key).and_then(|o| o.as_job()) else { return Sync::nothing() };
        let Some(expiry) = expires_at(job).filter(|_| !job.metadata.is_deleting()) else { return Sync::nothing() };
        if expiry > now {
            return Sync::nothing().then(Action::RequeueAfter(expiry.since(now)));
        }
        let delete =
            Call::new(ApiRequest::Delete(DeleteRequest { uid: Some(job.metadata.uid.to_string()), ..DeleteRequest::new(key.clone()) }));
        Sync::with_steps(vec![vec![delete]], format!("Job {}: finished and its TTL has passed, deleting", job.metadata.name))
    }

    fn reset(&mut self) {}
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runtime::informer::Informer;

    #[test]
    fn a_finished_job_waits_for_its_ttl_then_is_deleted() {
        let mut job = Job::default();
        job.metadata.name = "pi".into();
        job.metadata.namespace = "default".into();
        job.metadata.uid = "u".into();
        job.spec.ttl_seconds_after_finished = Some(100);
        assert_eq!(expires_at(&job), None, "not finished yet");
        job.status.conditions.push(JobCondition {
            type_: "Complete".into(),
            status: "True".into(),
            last_transition_time: Some(Time(5_000)),
            ..Default::default()
        });
        assert_eq!(expires_at(&job), Some(Time(105_000)));
        let jobs = Informer::from_objects(Kind::Job, [Object::Job(job)]);
        let key = ObjectKey::new(Kind::Job, "default", "pi");
        let mut c = TtlAfterFinishedController::new();
        let early = c.reconcile(&key, &Caches::new([jobs.store()]), Time(50_000));
        assert!(early.steps.is_empty());
        assert_eq!(early.then, Action::RequeueAfter(Duration::secs(55)));
        let due = c.reconcile(&key, &Caches::new([jobs.store()]), Time(105_000));
        assert!(matches!(&due.steps[0][0].request, ApiRequest::Delete(d) if d.uid.as_deref() == Some("u")));
    }
}
