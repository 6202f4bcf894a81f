//! The pods/eviction subresource: a delete that first asks the pod's PodDisruptionBudget.
//!
//! `kubectl drain` evicts rather than deletes so that a budget can say no. The API server lets an
//! eviction through when the pod cannot count towards any budget (it is finished, still Pending or
//! already going), when no budget selects it, or when its one budget still has a disruption to
//! spend — which it spends here, in the budget's status, before the delete (`checkAndDecrement`).
//! Otherwise the answer is 429 and the client retries. Either way the pod that goes is first
//! marked `DisruptionTarget` (EvictionByEvictionAPI), as a real cluster does since 1.31.

use super::errors::{ApiError, Reason};
use super::{set_pod_condition, ApiServer, DeleteRequest, Handled, Written};
use crate::model::*;

/// `MaxDisruptedPodSize`: granted evictions a budget may hold unconfirmed by its controller.
const MAX_DISRUPTED_POD_SIZE: usize = 2000;
/// The message of every 429 the eviction API gives.
pub const VIOLATES_BUDGET: &str = "Cannot evict pod as it would violate the pod's disruption budget.";

/// What the budget check decided.
enum Verdict {
    /// Delete the pod; the budget's status was written first when one was spent.
    Delete(Option<Box<PodDisruptionBudget>>),
    Refuse(ApiError),
}

impl ApiServer {
    /// Serves one eviction: the budget's status write (if a disruption was spent), the pod's
    /// DisruptionTarget condition and its graceful deletion, in that order, as one answer.
    pub(super) fn evict(&mut self, now: Time, d: DeleteRequest) -> Handled {
        let key = &d.key;
        let pod = match self.etcd.get(key).and_then(|o| o.as_pod().cloned()) {
            Some(pod) if key.kind == Kind::Pod => pod,
            _ => return refused(ApiError::not_found(key.kind, &key.name)),
        };
        let verdict = if can_ignore_budgets(&pod) { Verdict::Delete(None) } else { self.check_budgets(&pod, now) };
        let spent = match verdict {
            Verdict::Refuse(error) => return refused(error),
            Verdict::Delete(spent) => spent,
        };
        let mut answer = Answer::default();
        if let Some(pdb) = spent {
            match self.etcd.update(Object::PodDisruptionBudget(*pdb), None) {
                Ok(change) => answer.add(self.committed(change)),
                Err(_) => return refused(ApiError::conflict(Kind::PodDisruptionBudget, &key.name)),
            }
        }
        let marked = self.mark_disruption_target(&pod, now);
        answer.add_written(self, marked);
        let deleted = self.delete(now, d);
        answer.finish(self, deleted)
    }

    /// The budget check for a pod that counts: refused, or allowed (with the budget to write).
    fn check_budgets(&self, pod: &Pod, now: Time) -> Verdict {
        let namespace = pod.metadata.namespace.as_str();
        let mut budgets = self
            .etcd
            .list(Kind::PodDisruptionBudget, Some(namespace))
            .filter_map(|o| o.as_pod_disruption_budget())
            .filter(|pdb| pdb.selects(&pod.metadata.labels));
        let Some(pdb) = budgets.next() else { return Verdict::Delete(None) };
        if budgets.next().is_some() {
            let message = "This pod has more than one PodDisruptionBudget, which the eviction subresource does not support.";
            return Verdict::Refuse(ApiError::new(Reason::Unknown, message));
        }
        if !pod.is_ready() && unhealthy_pod_may_go(pdb) {
            // An unready pod is not counted healthy: evicting it spends nothing.
            return Verdict::Delete(None);
        }
        check_and_decrement(pdb, &pod.metadata.name, now).map_or_else(Verdict::Refuse, |pdb| Verdict::Delete(Some(Box::new(pdb))))
    }

    /// `addConditionAndDeletePod`'s first half: the pod is marked as the target of a disruption.
    fn mark_disruption_target(&mut self, pod: &Pod, now: Time) -> Option<Written> {
        let mut next = pod.clone();
        let reason = Some("EvictionByEvictionAPI");
        if !set_pod_condition(&mut next.status, "DisruptionTarget", "True", reason, Some("Eviction API: evicting"), now) {
            return None;
        }
        self.etcd.update(Object::Pod(next), None).ok().map(Written::Changed)
    }
}

/// `canIgnorePDB`: a finished, still Pending or already terminating pod disrupts nothing more.
fn can_ignore_budgets(pod: &Pod) -> bool {
    pod.is_terminal() || pod.phase() == PodPhase::Pending || pod.metadata.is_deleting()
}

/// Whether an unready pod goes without spending the budget: always under `AlwaysAllow`; under
/// the default `IfHealthyBudget` only while the budget's healthy pods are enough.
fn unhealthy_pod_may_go(pdb: &PodDisruptionBudget) -> bool {
    let status = &pdb.status;
    pdb.spec.unhealthy_pod_eviction_policy.as_deref() == Some(ALWAYS_ALLOW)
        || (status.current_healthy >= status.desired_healthy && status.desired_healthy > 0)
}

/// `checkAndDecrement`: the budget with one disruption spent on `pod`, or why not.
fn check_and_decrement(pdb: &PodDisruptionBudget, pod: &str, now: Time) -> Result<PodDisruptionBudget, ApiError> {
    let name = pdb.metadata.name.as_str();
    let status = &pdb.status;
    if status.observed_generation < pdb.metadata.generation {
        return Err(too_many_requests(format!("The disruption budget {name} is still being processed by the server.")));
    }
    if status.disruptions_allowed < 0 {
        return Err(ApiError::forbidden(Kind::PodDisruptionBudget, name, "pdb disruptions allowed is negative"));
    }
    if status.disrupted_pods.len() > MAX_DISRUPTED_POD_SIZE {
        let why = "DisruptedPods map too big - too many evictions not confirmed by PDB controller";
        return Err(ApiError::forbidden(Kind::PodDisruptionBudget, name, why));
    }
    if status.disruptions_allowed == 0 {
        let (desired, current) = (status.desired_healthy, status.current_healthy);
        return Err(too_many_requests(format!("The disruption budget {name} needs {desired} healthy pods and has {current} currently")));
    }
    let mut next = pdb.clone();
    next.status.disruptions_allowed -= 1;
    if next.status.disruptions_allowed == 0 {
        next.update_disruption_allowed_condition(now);
    }
    next.status.disrupted_pods.insert(pod.to_string(), now);
    Ok(next)
}

/// A 429 with the budget's reason as its cause (kubectl prints only the message).
fn too_many_requests(cause: String) -> ApiError {
    let mut error = ApiError::new(Reason::TooManyRequests, VIOLATES_BUDGET);
    error.causes.push(super::errors::FieldError { field: "DisruptionBudget".into(), detail: cause });
    error
}

fn refused(error: ApiError) -> Handled {
    Handled { result: Err(error), notifications: Vec::new(), revision: None }
}

/// The writes of one eviction gathered into one answer: every notification, the last revision.
#[derive(Default)]
struct Answer {
    notifications: Vec<(super::watch::WatchId, super::watch::WatchEvent)>,
    revision: Option<u64>,
}

impl Answer {
    fn add(&mut self, handled: Handled) {
        self.notifications.extend(handled.notifications);
        self.revision = handled.revision.or(self.revision);
    }
    fn add_written(&mut self, api: &mut ApiServer, written: Option<Written>) {
        if let Some(Written::Changed(change)) = written {
            self.add(api.committed(change));
        }
    }
    /// The delete's own answer, carrying the earlier writes' notifications too.
    fn finish(mut self, api: &mut ApiServer, deleted: Result<Written, ApiError>) -> Handled {
        let result = match deleted {
            Ok(Written::Changed(change)) => {
                let handled = api.committed(change);
                let result = handled.result.clone();
                self.add(handled);
                result
            }
            Ok(Written::Unchanged(current)) => Ok(super::ApiResponse::Object(current)),
            Err(e) => Err(e),
        };
        Handled { result, notifications: self.notifications, revision: self.revision }
    }
}
