//! ControllerRevisions shared by the controllers that keep them (pkg/controller/history): the
//! StatefulSet controller and the DaemonSet controller each keep one revision per pod template
//! they have had, so that `kubectl rollout history|undo` has something to list and return to.
//!
//! The two controllers differ in the label that carries the hash and in how they pick what to
//! keep, so only the mechanics live here: listing an owner's revisions in order, building one,
//! renumbering one taken up again, and deleting one.

use super::Call;
use crate::api::{ApiRequest, DeleteRequest};
use crate::controllers::Caches;
use crate::model::*;

/// The revisions whose controller is the object with `owner_uid`, lowest number first (then by
/// name, so two with one number — a race upstream — come out in a fixed order).
pub fn owned<'a>(caches: &'a Caches, owner_uid: &str) -> Vec<&'a ControllerRevision> {
    let Some(store) = caches.get(Kind::ControllerRevision) else { return Vec::new() };
    let mut revisions: Vec<&ControllerRevision> = store.owned_by(owner_uid).filter_map(|o| o.as_controller_revision()).collect();
    crate::sort::sort_by(&mut revisions, |a, b| (a.revision, &a.metadata.name).cmp(&(b.revision, &b.metadata.name)));
    revisions
}

/// The highest revision number among `revisions`, 0 if there is none (`history.maxRevision`).
pub fn max_revision(revisions: &[&ControllerRevision]) -> i64 {
    revisions.iter().map(|r| r.revision).max().unwrap_or(0)
}

/// What a new revision is made of: its owner's metadata and controller reference, the template,
/// its hash and the label that carries the hash.
pub struct NewRevision<'a> {
    pub owner: &'a ObjectMeta,
    pub owner_reference: OwnerReference,
    pub template: &'a Shared<PodTemplateSpec>,
    pub hash: &'a str,
    pub hash_label: &'static str,
    /// The annotations the revision starts with (the DaemonSet controller copies its owner's,
    /// which is where `rollout history` finds a change cause).
    pub annotations: StringMap,
    pub number: i64,
}

/// `history.NewControllerRevision`: the template under `<owner>-<hash>`, labelled like the
/// template plus its hash, controlled by the owner.
pub fn build(new: NewRevision) -> ControllerRevision {
    let mut labels: StringMap = (*new.template.metadata.labels).clone();
    labels.insert(new.hash_label.into(), new.hash.to_string());
    ControllerRevision {
        metadata: ObjectMeta {
            name: format!("{}-{}", new.owner.name, new.hash).into(),
            namespace: new.owner.namespace.clone(),
            labels: labels.into(),
            annotations: new.annotations,
            owner_references: vec![new.owner_reference].into(),
            ..Default::default()
        },
        data: ControllerRevisionData { spec: RevisionSpec { template: new.template.clone() } },
        revision: new.number,
    }
}

/// The create of a new revision; one already there (the cache had not seen it yet) is no error.
pub fn create(revision: ControllerRevision) -> Call {
    Call::new(ApiRequest::Create(Object::ControllerRevision(revision))).quiet_if_exists()
}

/// The update that makes an existing revision the newest (a template taken up again).
pub fn renumber(revision: &ControllerRevision, number: i64) -> Call {
    let mut renumbered = revision.clone();
    renumbered.revision = number;
    Call::new(ApiRequest::Update(Object::ControllerRevision(renumbered)))
}

/// The delete of one revision.
pub fn delete(revision: &ControllerRevision) -> Call {
    Call::new(ApiRequest::Delete(DeleteRequest::new(ObjectKey::of(Kind::ControllerRevision, &revision.metadata))))
}
