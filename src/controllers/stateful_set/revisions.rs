//! A StatefulSet's ControllerRevisions: one per pod template it has had, named
//! `<set>-<hash>` and numbered by when the template was last taken up.
//!
//! Upstream (`getStatefulSetRevisions`) keeps them so the pods of the current revision can be
//! made again while a rollout is partitioned or OnDelete, and so `kubectl rollout undo` has
//! something to return to. Returning to an older template renumbers its revision instead of
//! making a copy; `truncateHistory` deletes the oldest revisions no pod uses beyond
//! `revisionHistoryLimit`.

use super::super::Call;
use super::owner_reference;
use crate::controllers::deployment::hash::compute_hash;
use crate::controllers::revisions as shared;
use crate::controllers::Caches;
use crate::model::*;
use std::collections::BTreeSet;

/// The label a revision carries with its hash (`ControllerRevisionHashLabel`).
pub const REVISION_HASH_LABEL: &str = "controller.kubernetes.io/hash";

/// One revision the sync works with: its name and the template it holds.
#[derive(Clone, Debug)]
pub struct Revision {
    pub name: String,
    pub template: Shared<PodTemplateSpec>,
}

/// The set's revisions as the sync found them, and the write that makes the update revision.
#[derive(Clone, Debug)]
pub struct History<'a> {
    /// Every revision the set owns, oldest number first.
    pub revisions: Vec<&'a ControllerRevision>,
    pub current: Revision,
    pub update: Revision,
    /// The create of a new update revision, or the renumbering of an old one taken up again.
    pub writes: Vec<Call>,
}

/// `getStatefulSetRevisions`.
pub fn settle<'a>(caches: &'a Caches, set: &StatefulSet) -> History<'a> {
    let revisions = shared::owned(caches, &set.metadata.uid);
    let next = shared::max_revision(&revisions) + 1;
    let template = &set.spec.template;
    let equal = revisions.iter().rev().find(|r| r.data.spec.template == *template).copied();
    let mut writes = Vec::new();
    let update = match equal {
        // The newest revision already holds this template.
        Some(r) if revisions.last().is_some_and(|last| last.metadata.name == r.metadata.name) => revision_of(r),
        // An older template taken up again (a rollback): it becomes the newest.
        Some(r) => {
            writes.push(shared::renumber(r, next));
            revision_of(r)
        }
        None => {
            let created = new_revision(set, next);
            let revision = revision_of(&created);
            writes.push(shared::create(created));
            revision
        }
    };
    let current = revisions
        .iter()
        .find(|r| !set.status.current_revision.is_empty() && r.metadata.name.as_str() == set.status.current_revision)
        .map_or_else(|| update.clone(), |r| revision_of(r));
    History { revisions, current, update, writes }
}

fn revision_of(r: &ControllerRevision) -> Revision {
    Revision { name: r.metadata.name.to_string(), template: r.data.spec.template.clone() }
}

/// `newRevision`: the template under `<set>-<hash>`, labelled like the set's pods plus its hash,
/// owned by the set.
fn new_revision(set: &StatefulSet, number: i64) -> ControllerRevision {
    let hash = compute_hash(&set.spec.template, set.status.collision_count);
    shared::build(shared::NewRevision {
        owner: &set.metadata,
        owner_reference: owner_reference(set),
        template: &set.spec.template,
        hash: &hash,
        hash_label: REVISION_HASH_LABEL,
        annotations: StringMap::new(),
        number,
    })
}

/// `truncateHistory`: the oldest revisions beyond `revisionHistoryLimit` that neither the status
/// nor any pod refers to.
pub fn truncate(set: &StatefulSet, pods: &[&Pod], history: &History, status: &StatefulSetStatus) -> Vec<Call> {
    let mut live: BTreeSet<&str> =
        pods.iter().filter_map(|p| p.metadata.labels.get(super::CONTROLLER_REVISION_HASH)).map(|s| s.as_str()).collect();
    live.extend([status.current_revision.as_str(), status.update_revision.as_str()]);
    let unused: Vec<&&ControllerRevision> = history.revisions.iter().filter(|r| !live.contains(r.metadata.name.as_str())).collect();
    let limit = set.spec.revision_history_limit.unwrap_or(10).max(0) as usize;
    let excess = unused.len().saturating_sub(limit);
    unused[..excess].iter().map(|r| shared::delete(r)).collect()
}
