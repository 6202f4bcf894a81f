//! The RollingUpdate strategy (rolling.go): grow the new ReplicaSet within maxSurge, shrink the
//! old ones within maxUnavailable, one move per sync, and let the next sync (triggered by the
//! ReplicaSets' status changes) take the next step.

use super::sync::{SyncResult, Syncer};
use super::util::*;
use crate::model::*;
use std::rc::Rc;

impl Syncer<'_> {
    /// `rolloutRolling`.
    pub fn rollout_rolling(&mut self, rs_list: &[Rc<ReplicaSet>]) -> SyncResult<()> {
        let (new, old) = self.get_all_replica_sets_and_sync_revision(rs_list, true)?;
        let Some(new) = new else { return Ok(()) };
        let mut all = old.clone();
        all.push(new.clone());

        if self.reconcile_new_replica_set(&all, &new)? {
            self.sync_rollout_status(&all, Some(&new));
            return Ok(());
        }
        if self.reconcile_old_replica_sets(&all, filter_active(&old), &new) {
            self.sync_rollout_status(&all, Some(&new));
            return Ok(());
        }
        if deployment_complete(&self.d, &self.d.status) {
            self.cleanup_deployment(&old);
        }
        self.sync_rollout_status(&all, Some(&new));
        Ok(())
    }

    /// `reconcileNewReplicaSet`: scale the new ReplicaSet up as far as maxSurge allows (or down to
    /// `spec.replicas` if it is larger). Returns whether it scaled.
    fn reconcile_new_replica_set(&mut self, all: &[Rc<ReplicaSet>], new: &Rc<ReplicaSet>) -> SyncResult<bool> {
        let want = replicas(&self.d);
        let have = rs_replicas(new);
        if have == want {
            return Ok(false);
        }
        if have > want {
            return Ok(self.scale_replica_set_and_record_event(new, want).0);
        }
        let count = new_rs_new_replicas(&self.d, all, new)?;
        Ok(self.scale_replica_set_and_record_event(new, count).0)
    }

    /// `reconcileOldReplicaSets`: how far the old ReplicaSets may shrink without going below
    /// `spec.replicas - maxUnavailable` available pods, counting the new ReplicaSet's unavailable
    /// pods against it; unhealthy old pods go first. Returns whether it scaled.
    fn reconcile_old_replica_sets(&mut self, all: &[Rc<ReplicaSet>], old: Vec<Rc<ReplicaSet>>, new: &Rc<ReplicaSet>) -> bool {
        if replica_count(&old) == 0 {
            return false;
        }
        let all_pods = replica_count(all);
        let min_available = replicas(&self.d) - max_unavailable(&self.d);
        let new_unavailable = rs_replicas(new) - i64::from(new.status.available_replicas);
        let max_scaled_down = all_pods - min_available - new_unavailable;
        if max_scaled_down <= 0 {
            return false;
        }
        // Upstream gives up on this sync's scale-down when the cleanup meets an old ReplicaSet
        // reporting more available pods than it wants (a status not caught up yet).
        let Some((old, cleaned_up)) = self.cleanup_unhealthy_replicas(old, max_scaled_down) else { return false };
        let mut all = old.clone();
        all.push(new.clone());
        let scaled_down = self.scale_down_old_replica_sets_for_rolling_update(&all, old);
        cleaned_up + scaled_down > 0
    }

    /// `cleanupUnhealthyReplicas`: scale old ReplicaSets down by their unavailable pods (oldest
    /// first, at most `max_cleanup`), which costs no availability; the ReplicaSet controller
    /// removes not-ready pods before ready ones.
    fn cleanup_unhealthy_replicas(&mut self, mut old: Vec<Rc<ReplicaSet>>, max_cleanup: i64) -> Option<(Vec<Rc<ReplicaSet>>, i64)> {
        crate::sort::sort_by(&mut old, |a, b| by_creation(a, b));
        let mut total = 0;
        for rs in old.iter_mut() {
            if total >= max_cleanup {
                break;
            }
            let have = rs_replicas(rs);
            let available = i64::from(rs.status.available_replicas);
            if have == 0 || have == available {
                continue;
            }
            let count = (max_cleanup - total).min(have - available);
            if count < 0 {
                return None;
            }
            let (_, updated) = self.scale_replica_set_and_record_event(rs, have - count);
            *rs = updated;
            total += count;
        }
        Some((old, total))
    }

    /// `scaleDownOldReplicaSetsForRollingUpdate`: remove as many old pods as keeps at least
    /// `spec.replicas - maxUnavailable` available, oldest ReplicaSet first.
    fn scale_down_old_replica_sets_for_rolling_update(&mut self, all: &[Rc<ReplicaSet>], mut old: Vec<Rc<ReplicaSet>>) -> i64 {
        let min_available = replicas(&self.d) - max_unavailable(&self.d);
        let available = available_replica_count(all);
        if available <= min_available {
            return 0;
        }
        crate::sort::sort_by(&mut old, |a, b| by_creation(a, b));
        let target = available - min_available;
        let mut total = 0;
        for rs in &old {
            if total >= target {
                break;
            }
            let have = rs_replicas(rs);
            if have == 0 {
                continue;
            }
            let count = have.min(target - total);
            self.scale_replica_set_and_record_event(rs, have - count);
            total += count;
        }
        total
    }
}
