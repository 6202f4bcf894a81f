//! The invariants a real control plane never breaks, checked after every step in tests.
//!
//! - no node is over-committed (requests of its live pods within its allocatable cpu, memory, pods);
//! - no pod is bound twice (its node never changes once set);
//! - etcd revisions strictly increase;
//! - every object's owner exists, or the object is collected soon after the owner went
//!   (the garbage collector's lag is bounded by `OWNERLESS_GRACE` — while the collector can
//!   see: its clock stands still while kube-controller-manager or its garbage-collector loop is
//!   stopped, the API is down, or a watch event to it was dropped and it has not re-listed
//!   since, for then a real collector cannot know either).

use crate::api::ApiServer;
use crate::model::{Duration, Kind, Object, Time};
use crate::runtime::fasthash::FastMap;
use crate::vec_map::{VecMap, VecSet};
use std::collections::BTreeMap;

/// How long an object may outlive its owner before the garbage collector is deemed to have failed.
pub const OWNERLESS_GRACE: Duration = Duration::secs(60);

#[derive(Debug, Default)]
pub struct Checker {
    last_revision: u64,
    /// The node each pod (by UID) was first bound to.
    bound: FastMap<String, String>,
    /// When each dependent (by UID) was first seen without its owner.
    ownerless_since: VecMap<String, Time>,
}

impl Checker {
    pub fn observe_revision(&mut self, revision: u64, violations: &mut Vec<String>) {
        if revision <= self.last_revision {
            violations.push(format!("revision {revision} written after revision {}", self.last_revision));
        }
        self.last_revision = self.last_revision.max(revision);
    }

    pub fn observe_write(&mut self, object: &Object, _now: Time) {
        if let Some(node) = object.as_pod().and_then(|p| p.node_name()) {
            // Every status write of a bound pod passes here: copy its UID only the first time.
            let uid = &object.meta().uid;
            if !self.bound.contains_key(uid.as_str()) {
                self.bound.insert(uid.to_string(), node.to_string());
            }
        }
    }

    /// Checks the stored state at `now`; returns what is wrong.
    /// etcd's content was replaced (restore, wipe): the history the checks remember is no longer
    /// the store's. A restored pod may be unbound again and legitimately bound elsewhere.
    pub fn forget_history(&mut self) {
        self.bound.clear();
        self.ownerless_since.clear();
    }

    /// `collector_sees`: whether the garbage collector runs and has heard every event since its
    /// last list (see the module doc); while it does not, the ownerless clocks stand still.
    pub fn check(&mut self, api: &ApiServer, now: Time, collector_sees: bool) -> Vec<String> {
        let mut out = Vec::new();
        self.check_nodes(api, &mut out);
        self.check_owners(api, now, collector_sees, &mut out);
        out
    }

    fn check_nodes(&self, api: &ApiServer, out: &mut Vec<String>) {
        let mut used: BTreeMap<&str, (i64, i64, i64)> = BTreeMap::new();
        for obj in api.items(Kind::Pod, None) {
            let Some(pod) = obj.as_pod() else { continue };
            let Some(node) = pod.node_name() else { continue };
            if let Some(first) = self.bound.get(pod.metadata.uid.as_str()) {
                if first != node {
                    out.push(format!("pod {} bound to {first} and then to {node}", pod.metadata.name));
                }
            }
            if pod.is_terminal() {
                continue;
            }
            let (cpu, mem) = pod.requests();
            let e = used.entry(node).or_default();
            *e = (e.0 + cpu, e.1 + mem, e.2 + 1);
        }
        for obj in api.items(Kind::Node, None) {
            let Some(node) = obj.as_node() else { continue };
            let alloc = node.allocatable();
            if let Some((cpu, mem, pods)) = used.get(node.metadata.name.as_str()) {
                if *cpu > alloc.milli_cpu || *mem > alloc.memory || *pods > alloc.pods {
                    out.push(format!(
                        "node {} over-committed: cpu {cpu}m/{}m, memory {mem}/{}, pods {pods}/{}",
                        node.metadata.name, alloc.milli_cpu, alloc.memory, alloc.pods
                    ));
                }
            }
        }
    }

    fn check_owners(&mut self, api: &ApiServer, now: Time, collector_sees: bool, out: &mut Vec<String>) {
        let mut uids: VecSet<&str> = VecSet::new();
        uids.extend(
            [Kind::Deployment, Kind::ReplicaSet, Kind::ReplicationController, Kind::DaemonSet, Kind::Node, Kind::Job, Kind::StatefulSet]
                .iter()
                .flat_map(|k| api.items(*k, None))
                .map(|o| o.meta().uid.as_str()),
        );
        let mut still_missing = Vec::new();
        for kind in [Kind::ReplicaSet, Kind::Pod] {
            for obj in api.items(kind, None) {
                let meta = obj.meta();
                let orphaned = meta.owner_references.iter().any(|r| !uids.contains(r.uid.as_str()));
                if !orphaned {
                    continue;
                }
                let since = match self.ownerless_since.get(meta.uid.as_str()) {
                    Some(t) if collector_sees => *t,
                    _ => now,
                };
                if now.since(since) > OWNERLESS_GRACE {
                    out.push(format!("{} outlived its owner by more than {}", obj.key(), OWNERLESS_GRACE));
                }
                still_missing.push((meta.uid.to_string(), since));
            }
        }
        // Sorted once here rather than shifted into place one by one.
        self.ownerless_since = still_missing.into_iter().collect();
    }
}
