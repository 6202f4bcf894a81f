//! The Recreate strategy (recreate.go): every old pod goes first; only when none is left running
//! is the new ReplicaSet created (at full size) or scaled up.

use super::sync::{SyncResult, Syncer};
use super::util::*;
use crate::model::*;
use std::rc::Rc;

impl Syncer<'_> {
    /// `rolloutRecreate`.
    pub fn rollout_recreate(&mut self, rs_list: &[Rc<ReplicaSet>]) -> SyncResult<()> {
        // The new ReplicaSet is not created yet, so nothing scales up before the old pods are gone.
        let (mut new, mut old) = self.get_all_replica_sets_and_sync_revision(rs_list, false)?;
        let mut all: Vec<Rc<ReplicaSet>> = old.iter().cloned().chain(new.clone()).collect();

        if self.scale_down_old_replica_sets_for_recreate(&filter_active(&old)) {
            self.sync_rollout_status(&all, new.as_ref());
            return Ok(());
        }
        if self.old_pods_running(new.as_ref(), &old, rs_list) {
            self.sync_rollout_status(&all, new.as_ref());
            return Ok(());
        }
        if new.is_none() {
            (new, old) = self.get_all_replica_sets_and_sync_revision(rs_list, true)?;
            all = old.iter().cloned().chain(new.clone()).collect();
        }
        if let Some(rs) = &new {
            self.scale_replica_set_and_record_event(rs, replicas(&self.d));
        }
        if deployment_complete(&self.d, &self.d.status) {
            self.cleanup_deployment(&old);
        }
        self.sync_rollout_status(&all, new.as_ref());
        Ok(())
    }

    /// `scaleDownOldReplicaSetsForRecreate`: every active old ReplicaSet to zero.
    fn scale_down_old_replica_sets_for_recreate(&mut self, old_active: &[Rc<ReplicaSet>]) -> bool {
        let mut scaled = false;
        for rs in old_active {
            if rs_replicas(rs) != 0 && self.scale_replica_set_and_record_event(rs, 0).0 {
                scaled = true;
            }
        }
        scaled
    }

    /// `oldPodsRunning`: an old ReplicaSet still reports pods, or one of the Deployment's pods of
    /// an old ReplicaSet is not yet Succeeded or Failed (Unknown counts as running). Pods are
    /// found through the owner index of each of the Deployment's ReplicaSets, which is the
    /// podMap upstream builds.
    fn old_pods_running(&self, new: Option<&Rc<ReplicaSet>>, old: &[Rc<ReplicaSet>], rs_list: &[Rc<ReplicaSet>]) -> bool {
        if actual_replica_count(old) > 0 {
            return true;
        }
        let new_uid = new.map(|rs| rs.metadata.uid.as_str());
        let selector = &self.d.spec.selector;
        rs_list.iter().filter(|rs| Some(rs.metadata.uid.as_str()) != new_uid && !rs.metadata.uid.is_empty()).any(|rs| {
            self.caches[Kind::Pod]
                .owned_by(&rs.metadata.uid)
                .filter_map(|o| o.as_pod())
                .filter(|p| p.metadata.namespace == self.d.metadata.namespace && selector.matches(&p.metadata.labels))
                .any(|p| !p.is_terminal())
        })
    }
}
