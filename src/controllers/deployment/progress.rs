//! The Progressing condition during a rollout (progress.go): progressing while pods move,
//! complete when the new ReplicaSet has everything, timed out when nothing moved for
//! progressDeadlineSeconds — and the delayed look that notices a stuck rollout.

use super::sync::Syncer;
use super::util::*;
use crate::model::*;
use std::rc::Rc;

impl Syncer<'_> {
    /// `syncRolloutStatus`: the status with the Progressing condition brought up to date; written
    /// only if it changed, else the Deployment is looked at again when its deadline could pass.
    pub fn sync_rollout_status(&mut self, all: &[Rc<ReplicaSet>], new: Option<&Rc<ReplicaSet>>) {
        let mut status = self.calculate_status(all, new);
        if !has_progress_deadline(&self.d) {
            remove_condition(&mut status, PROGRESSING);
        }
        let current = get_condition(&self.d.status, PROGRESSING).cloned();
        // A resync after the rollout finished estimates nothing.
        let complete_before =
            status.replicas == status.updated_replicas && current.as_ref().is_some_and(|c| c.reason.as_deref() == Some(NEW_RS_AVAILABLE));
        if has_progress_deadline(&self.d) && !complete_before {
            self.estimate_progress(&mut status, new, current.as_ref());
        }
        self.status = Some(status.clone());
        if self.d.status == status {
            self.requeue_after = self.requeue_stuck_deployment(&status);
            return;
        }
        self.d.to_mut().status = status;
        self.update_status();
    }

    fn estimate_progress(&self, status: &mut DeploymentStatus, new: Option<&Rc<ReplicaSet>>, current: Option<&DeploymentCondition>) {
        let subject = match new {
            Some(rs) => format!("ReplicaSet {:?}", rs.metadata.name),
            None => format!("Deployment {:?}", self.d.metadata.name),
        };
        if deployment_complete(&self.d, status) {
            let condition =
                new_condition(PROGRESSING, "True", NEW_RS_AVAILABLE, format!("{subject} has successfully progressed."), self.now);
            set_condition(status, condition);
        } else if deployment_progressing(&self.d, status) {
            // Progress refreshes lastUpdateTime even when the reason stays ReplicaSetUpdated,
            // which set_condition alone would not do.
            let mut condition = new_condition(PROGRESSING, "True", REPLICA_SET_UPDATED, format!("{subject} is progressing."), self.now);
            if let Some(current) = current {
                if current.status == "True" {
                    condition.last_transition_time = current.last_transition_time;
                }
                remove_condition(status, PROGRESSING);
            }
            set_condition(status, condition);
        } else if deployment_timed_out(&self.d, status, self.now) {
            let condition = new_condition(PROGRESSING, "False", TIMED_OUT, format!("{subject} has timed out progressing."), self.now);
            set_condition(status, condition);
        }
    }

    /// `requeueStuckDeployment`: when nothing changed and the rollout is neither complete nor
    /// already timed out, look again just after the deadline (upstream adds a second to avoid
    /// waking a hair too early). Upstream requeues rate-limited when less than a second is left;
    /// here it looks once just after the deadline instead of polling towards it.
    fn requeue_stuck_deployment(&self, status: &DeploymentStatus) -> Option<Duration> {
        let current = get_condition(&self.d.status, PROGRESSING)?;
        if !has_progress_deadline(&self.d) || deployment_complete(&self.d, status) || current.reason.as_deref() == Some(TIMED_OUT) {
            return None;
        }
        let deadline = current.last_update_time? + progress_deadline(&self.d);
        let after = deadline.since(self.now);
        if after < Duration::secs(1) {
            return Some(Duration(after.0.saturating_add(1)));
        }
        Some(Duration(after.0.saturating_add(1000)))
    }
}
