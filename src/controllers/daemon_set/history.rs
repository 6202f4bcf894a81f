//! A DaemonSet's ControllerRevisions (pkg/controller/daemon/update.go, `constructHistory`,
//! `dedupCurHistories`, `cleanupHistory`): one per pod template it has had, `<ds>-<hash>`.
//!
//! The current revision's hash is what the sync stamps on new pods as `controller-revision-hash`
//! and what tells an up-to-date pod from an old one. Keeping the older templates is what lets
//! `kubectl rollout undo daemonset` return to one: the template comes back, the sync finds its
//! revision and renumbers it as the newest instead of making a copy. Old revisions beyond
//! `revisionHistoryLimit` that no pod carries are deleted, oldest first.

use super::owner_reference;
use super::util::CONTROLLER_REVISION_HASH;
use crate::controllers::deployment::hash::compute_hash;
use crate::controllers::revisions as shared;
use crate::controllers::{Caches, Call};
use crate::model::*;
use std::collections::BTreeSet;

/// The DaemonSet's revisions as one sync found them, and the writes that settle the current one.
#[derive(Debug)]
pub struct History<'a> {
    /// The hash of the current template's revision: the label new pods carry.
    pub hash: String,
    /// Every other revision, oldest number first.
    pub old: Vec<&'a ControllerRevision>,
    /// Creating the current revision, renumbering it, or deleting its duplicates.
    pub writes: Vec<Call>,
}

/// `constructHistory`: splits the revisions into the one matching the template (made if there is
/// none, renumbered to be the newest if it is not) and the old ones.
pub fn construct<'a>(caches: &'a Caches, ds: &DaemonSet) -> History<'a> {
    let (current, old): (Vec<&ControllerRevision>, Vec<&ControllerRevision>) =
        shared::owned(caches, &ds.metadata.uid).into_iter().partition(|r| matches(ds, r));
    let next = shared::max_revision(&old) + 1;
    let mut writes = Vec::new();
    let hash = match dedup(&current, &mut writes) {
        None => {
            let created = snapshot(ds, next);
            let hash = hash_of(&created);
            writes.push(shared::create(created));
            hash
        }
        Some(kept) => {
            if kept.revision < next {
                writes.push(shared::renumber(kept, next));
            }
            hash_of(kept)
        }
    };
    History { hash, old, writes }
}

/// `Match`: the revision holds the DaemonSet's template. Upstream compares the patch's bytes;
/// kubeloop keeps the template itself, so compares templates.
fn matches(ds: &DaemonSet, revision: &ControllerRevision) -> bool {
    revision.data.spec.template == ds.spec.template
}

/// The revision's hash: its label, or its name where the label is missing (upstream writes the
/// name into the label then; kubeloop only reads it that way).
fn hash_of(revision: &ControllerRevision) -> String {
    match revision.metadata.labels.get(CONTROLLER_REVISION_HASH) {
        Some(hash) => hash.clone(),
        None => revision.metadata.name.to_string(),
    }
}

/// `dedupCurHistories`: of several revisions holding the current template (made by hand, or
/// by a race upstream), keep the highest numbered and delete the others. Upstream first
/// relabels the pods of the deleted ones; kubeloop leaves them, and the rolling update replaces
/// them as out of date.
fn dedup<'a>(current: &[&'a ControllerRevision], writes: &mut Vec<Call>) -> Option<&'a ControllerRevision> {
    // `owned` sorts by number, then name: the last is the one upstream keeps (`>=`).
    let kept = *current.last()?;
    writes.extend(current.iter().filter(|r| r.metadata.name != kept.metadata.name).map(|r| shared::delete(r)));
    Some(kept)
}

/// `snapshot`: a new revision `<ds>-<hash>` with the template, the pods' labels plus the hash,
/// and the DaemonSet's annotations (so a `kubernetes.io/change-cause` shows in the history).
fn snapshot(ds: &DaemonSet, number: i64) -> ControllerRevision {
    // DaemonSetStatus's collisionCount is not modelled: a template's hash here is computed from
    // its JSON, so two templates never meet under one name in practice.
    let hash = compute_hash(&ds.spec.template, None);
    shared::build(shared::NewRevision {
        owner: &ds.metadata,
        owner_reference: owner_reference(ds),
        template: &ds.spec.template,
        hash: &hash,
        hash_label: CONTROLLER_REVISION_HASH,
        annotations: ds.metadata.annotations.clone(),
        number,
    })
}

/// `cleanupHistory`: as many old revisions as exceed `revisionHistoryLimit`, oldest first,
/// skipping any whose hash a pod of the DaemonSet still carries.
pub fn cleanup(ds: &DaemonSet, pods: &[&Pod], old: &[&ControllerRevision]) -> Vec<Call> {
    let limit = ds.spec.revision_history_limit.unwrap_or(10).max(0) as usize;
    let to_kill = old.len().saturating_sub(limit);
    if to_kill == 0 {
        return Vec::new();
    }
    let live: BTreeSet<&str> = pods.iter().filter_map(|p| p.metadata.labels.get(CONTROLLER_REVISION_HASH)).map(String::as_str).collect();
    old.iter().filter(|r| !live.contains(hash_of(r).as_str())).take(to_kill).map(|r| shared::delete(r)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::ApiRequest;
    use crate::runtime::informer::Informer;

    fn ds(image: &str) -> DaemonSet {
        let mut ds = DaemonSet::default();
        ds.metadata.name = "agent".into();
        ds.metadata.namespace = "kube-system".into();
        ds.metadata.uid = "uid-agent".into();
        ds.spec.template.spec = PodSpec {
            containers: vec![Container { name: "agent".into(), image: image.into(), ..Default::default() }].into(),
            ..Default::default()
        }
        .into();
        ds
    }

    fn revision(image: &str, number: i64) -> ControllerRevision {
        snapshot(&ds(image), number)
    }

    fn construct_with(ds: &DaemonSet, revisions: Vec<ControllerRevision>) -> (String, Vec<i64>, Vec<String>) {
        let informer = Informer::from_objects(Kind::ControllerRevision, revisions.into_iter().map(Object::ControllerRevision));
        let caches = Caches::new([informer.store()]);
        let history = construct(&caches, ds);
        let old = history.old.iter().map(|r| r.revision).collect();
        let writes = history
            .writes
            .iter()
            .map(|c| match &c.request {
                ApiRequest::Create(Object::ControllerRevision(r)) => format!("create {} #{}", r.metadata.name, r.revision),
                ApiRequest::Update(Object::ControllerRevision(r)) => format!("renumber {} #{}", r.metadata.name, r.revision),
                ApiRequest::Delete(d) => format!("delete {}", d.key.name),
                other => format!("{other:?}"),
            })
            .collect();
        (history.hash, old, writes)
    }

    #[test]
    fn a_new_template_gets_the_next_number_under_its_hash() {
        let hash = compute_hash(&ds("v2").spec.template, None);
        let (got, old, writes) = construct_with(&ds("v2"), vec![revision("v1", 1)]);
        assert_eq!(got, hash);
        assert_eq!(old, [1]);
        assert_eq!(writes, [format!("create agent-{hash} #2")]);
        let created = snapshot(&ds("v2"), 2);
        assert_eq!(created.metadata.labels.get(CONTROLLER_REVISION_HASH), Some(&hash));
        assert_eq!(created.metadata.controller_ref().map(|r| r.kind.as_str()), Some("DaemonSet"));
    }

    #[test]
    fn a_template_taken_up_again_is_renumbered_not_copied() {
        let v1 = revision("v1", 1);
        let (hash, old, writes) = construct_with(&ds("v1"), vec![v1.clone(), revision("v2", 2)]);
        assert_eq!(hash, v1.metadata.labels[CONTROLLER_REVISION_HASH]);
        assert_eq!(old, [2]);
        assert_eq!(writes, [format!("renumber {} #3", v1.metadata.name)]);
        // Already the newest: nothing to write.
        let (_, _, writes) = construct_with(&ds("v2"), vec![v1, revision("v2", 2)]);
        assert!(writes.is_empty());
    }

    #[test]
    fn duplicates_of_the_current_template_keep_the_highest_number() {
        let mut copy = revision("v1", 4);
        copy.metadata.name = "agent-copy".into();
        let (_, old, writes) = construct_with(&ds("v1"), vec![revision("v1", 1), copy, revision("v2", 3)]);
        assert_eq!(old, [3]);
        assert_eq!(writes, [format!("delete {}", revision("v1", 1).metadata.name)]);
    }

    #[test]
    fn cleanup_deletes_the_oldest_unused_revisions_past_the_limit() {
        let mut set = ds("v4");
        set.spec.revision_history_limit = Some(1);
        let old = [revision("v1", 1), revision("v2", 2), revision("v3", 3)];
        let mut pod = Pod::default();
        pod.metadata.labels =
            StringMap::from([(CONTROLLER_REVISION_HASH.to_string(), old[0].metadata.labels[CONTROLLER_REVISION_HASH].clone())]).into();
        let refs: Vec<&ControllerRevision> = old.iter().collect();
        let deleted: Vec<String> = cleanup(&set, &[&pod], &refs)
            .iter()
            .filter_map(|c| match &c.request {
                ApiRequest::Delete(d) => Some(d.key.name.to_string()),
                _ => None,
            })
            .collect();
        // Two must go; revision 1 is still a pod's, so 2 and 3 go.
        assert_eq!(deleted, [old[1].metadata.name.to_string(), old[2].metadata.name.to_string()]);
    }
}
