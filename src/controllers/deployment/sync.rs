//! One sync of one Deployment, as data (sync.go): the working copy, the writes it decides, and
//! the steps every path shares — finding the new and old ReplicaSets, creating the new one,
//! scaling (proportionally when several are active), cleaning up history, and the status.
//!
//! Upstream's sync function calls the API server as it goes and stops at the first error. Here
//! each write becomes its own step, in the same order, and the controller manager stops at the
//! first failed step, which is the same behaviour. What upstream does with a write's answer is
//! reproduced too: a ReplicaSet it goes on using after writing it is the server's fresh copy
//! (its resourceVersion is cleared, so a second write of it carries no stale precondition),
//! while the Deployment copy keeps the resourceVersion it was read with, so a second status
//! write in one sync conflicts (409) exactly as it does on a real cluster.

use super::hash::{compute_hash, POD_TEMPLATE_HASH};
use super::util::*;
use crate::api::{ApiRequest, DeleteRequest};
use crate::controllers::{Caches, Call};
use crate::model::*;
use crate::runtime::events::EventSpec;
use std::borrow::Cow;
use std::rc::Rc;

/// Why a sync stopped early (upstream's returned error).
pub(super) type SyncResult<T> = Result<T, String>;

/// The new ReplicaSet (if any) and the old ones, shared with the list they were found in: a
/// sync reads them many times and copies one only to write it.
pub(super) type NewAndOld = (Option<Rc<ReplicaSet>>, Vec<Rc<ReplicaSet>>);

/// Which path the sync took, for the summary in words.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Path {
    SelectingAll,
    StatusOnly,
    Paused,
    Scaling,
    Rollout,
}

pub(super) struct Syncer<'a> {
    pub caches: &'a Caches<'a>,
    pub now: Time,
    /// The Deployment as this sync sees it: the cached object, copied the first time the sync
    /// changes it (revision annotation, conditions, status) as upstream mutates its deep copy.
    /// Most syncs change nothing and never copy it.
    pub d: Cow<'a, Deployment>,
    pub reference: ObjectReference,
    pub steps: Vec<Vec<Call>>,
    pub requeue_after: Option<Duration>,
    pub path: Path,
    /// The status the sync computed last (for the summary).
    pub status: Option<DeploymentStatus>,
    pub new_rs_name: Option<String>,
    /// A create of the new ReplicaSet that failed last time: (name, error message).
    pub create_failure: Option<(String, String)>,
    /// What `is_scaling_event` found, when that wrote nothing and found the new ReplicaSet: the
    /// next look at the same list then finds exactly the same, so it is not worked out twice.
    found: Option<NewAndOld>,
}

impl<'a> Syncer<'a> {
    pub fn new(caches: &'a Caches<'a>, object: &Object, d: &'a Deployment, now: Time) -> Self {
        Syncer {
            caches,
            now,
            d: Cow::Borrowed(d),
            reference: crate::runtime::events::reference_to(object),
            steps: Vec::new(),
            requeue_after: None,
            path: Path::Rollout,
            status: None,
            new_rs_name: None,
            create_failure: None,
            found: None,
        }
    }

    /// `SetDeploymentRevision` on the working copy, which is copied from the cache only when
    /// the revision changes.
    fn set_revision(&mut self, revision: &str) -> bool {
        if self.d.metadata.annotations.get(REVISION).map(String::as_str) == Some(revision) {
            return false;
        }
        set_deployment_revision(self.d.to_mut(), revision)
    }

    fn push(&mut self, call: Call) {
        self.steps.push(vec![call]);
    }

    /// Writes a ReplicaSet and returns what the server would answer: the same object, fresh.
    pub fn update_rs(&mut self, rs: ReplicaSet, event: Option<EventSpec>) -> Rc<ReplicaSet> {
        let mut call = Call::new(ApiRequest::Update(Object::ReplicaSet(rs.clone())));
        if let Some(event) = event {
            call = call.on_success(event);
        }
        self.push(call);
        let mut fresh = rs;
        fresh.metadata.resource_version = 0;
        Rc::new(fresh)
    }

    /// Writes the working copy's status (and, as the status subresource of a Deployment allows,
    /// its annotations), with the resourceVersion the sync started from.
    pub fn update_status(&mut self) {
        self.push(Call::new(ApiRequest::UpdateStatus(Object::Deployment(Deployment::clone(&self.d)))));
    }

    fn scaling_event(&self, message: String) -> EventSpec {
        EventSpec::normal(self.reference.clone(), "ScalingReplicaSet", message)
    }

    /// `scaleReplicaSet`: sets the size and the replica annotations; the ScalingReplicaSet event
    /// is recorded once the write succeeds. Returns whether the size changed, and the result.
    pub fn scale_replica_set(&mut self, rs: &Rc<ReplicaSet>, new_scale: i64) -> (bool, Rc<ReplicaSet>) {
        let old_scale = rs_replicas(rs);
        let size_changes = old_scale != new_scale;
        let (desired, max) = (replicas(&self.d), replicas(&self.d) + max_surge(&self.d));
        if !size_changes && !replicas_annotations_need_update(rs, desired, max) {
            return (false, Rc::clone(rs));
        }
        let mut copy = ReplicaSet::clone(rs);
        copy.spec.replicas = Some(clamp_i32(new_scale));
        set_replicas_annotations(&mut copy, desired, max);
        let direction = if old_scale < new_scale { "up" } else { "down" };
        let event = size_changes
            .then(|| self.scaling_event(format!("Scaled {direction} replica set {} from {old_scale} to {new_scale}", rs.metadata.name)));
        (size_changes, self.update_rs(copy, event))
    }

    /// `scaleReplicaSetAndRecordEvent`: only when the size differs.
    pub fn scale_replica_set_and_record_event(&mut self, rs: &Rc<ReplicaSet>, new_scale: i64) -> (bool, Rc<ReplicaSet>) {
        if rs_replicas(rs) == new_scale {
            return (false, Rc::clone(rs));
        }
        self.scale_replica_set(rs, new_scale)
    }

    /// `getAllReplicaSetsAndSyncRevision`: the new ReplicaSet (created if asked and missing) and
    /// every old one, with the new one's revision brought above all the old ones.
    pub fn get_all_replica_sets_and_sync_revision(&mut self, rs_list: &[Rc<ReplicaSet>], create_if_missing: bool) -> SyncResult<NewAndOld> {
        if let Some(found) = self.found.take() {
            return Ok(found);
        }
        let old = find_old_replica_sets(&self.d, rs_list);
        let new = self.get_new_replica_set(rs_list, &old, create_if_missing)?;
        if let Some(rs) = &new {
            self.new_rs_name = Some(rs.metadata.name.to_string());
        }
        Ok((new, old))
    }

    /// `getNewReplicaSet`.
    fn get_new_replica_set(
        &mut self,
        rs_list: &[Rc<ReplicaSet>],
        old: &[Rc<ReplicaSet>],
        create_if_missing: bool,
    ) -> SyncResult<Option<Rc<ReplicaSet>>> {
        let new_revision = max_revision(old).saturating_add(1);
        if let Some(existing) = find_new_replica_set(&self.d, rs_list) {
            return Ok(Some(self.sync_existing_new_replica_set(Rc::clone(existing), new_revision)));
        }
        if !create_if_missing {
            return Ok(None);
        }
        self.create_new_replica_set(old, new_revision).map(Some)
    }

    /// The new ReplicaSet exists: bring its annotations and minReadySeconds up to date (and
    /// return the updated copy), else copy its revision to the Deployment.
    fn sync_existing_new_replica_set(&mut self, existing: Rc<ReplicaSet>, new_revision: i64) -> Rc<ReplicaSet> {
        // Nearly every sync changes nothing here, so that is checked without copying anything;
        // otherwise the annotations are worked on alone and the whole ReplicaSet is copied only
        // when something differs.
        if new_replica_set_annotations_current(&self.d, &existing, new_revision)
            && existing.spec.min_ready_seconds == self.d.spec.min_ready_seconds
        {
            return self.sync_revision_from_new_replica_set(existing);
        }
        let mut annotated = ReplicaSet {
            metadata: ObjectMeta { annotations: existing.metadata.annotations.clone(), ..Default::default() },
            ..Default::default()
        };
        let annotations_changed = set_new_replica_set_annotations(&self.d, &mut annotated, new_revision, true);
        let min_ready_changed = existing.spec.min_ready_seconds != self.d.spec.min_ready_seconds;
        let mut copy = existing;
        if annotations_changed || min_ready_changed || annotated.metadata.annotations != copy.metadata.annotations {
            let rs = Rc::make_mut(&mut copy);
            rs.metadata.annotations = annotated.metadata.annotations;
            if annotations_changed || min_ready_changed {
                rs.spec.min_ready_seconds = self.d.spec.min_ready_seconds;
                return self.update_rs(ReplicaSet::clone(rs), None);
            }
        }
        self.sync_revision_from_new_replica_set(copy)
    }

    /// The new ReplicaSet needs no write: the Deployment takes its revision (and, the first time,
    /// a Progressing condition naming it).
    fn sync_revision_from_new_replica_set(&mut self, copy: Rc<ReplicaSet>) -> Rc<ReplicaSet> {
        let revision = copy.metadata.annotations.get(REVISION).cloned().unwrap_or_default();
        let mut needs_update = self.set_revision(&revision);
        if has_progress_deadline(&self.d) && get_condition(&self.d.status, PROGRESSING).is_none() {
            let message = format!("Found new replica set {:?}", copy.metadata.name);
            set_condition(&mut self.d.to_mut().status, new_condition(PROGRESSING, "True", FOUND_NEW_REPLICA_SET, message, self.now));
            needs_update = true;
        }
        if needs_update {
            self.update_status();
        }
        copy
    }

    /// Creates the ReplicaSet for the Deployment's current template, `<name>-<hash>`.
    fn create_new_replica_set(&mut self, old: &[Rc<ReplicaSet>], new_revision: i64) -> SyncResult<Rc<ReplicaSet>> {
        let mut template = self.d.spec.template.clone();
        let hash = compute_hash(&template, self.d.status.collision_count);
        template.metadata.labels.insert(POD_TEMPLATE_HASH.into(), hash.clone());
        let mut selector = self.d.spec.selector.clone();
        selector.match_labels.insert(POD_TEMPLATE_HASH.into(), hash.clone());
        let name = format!("{}-{hash}", self.d.metadata.name);
        self.new_rs_name = Some(name.clone());

        // Upstream learns that the name is taken from the create's AlreadyExists answer and then
        // looks the ReplicaSet up in its cache; looking first decides the same thing.
        let key = ObjectKey::new(Kind::ReplicaSet, &self.d.metadata.namespace, &name);
        if let Some(existing) = self.caches[Kind::ReplicaSet].get(&key).and_then(|o| o.as_replica_set()) {
            return self.name_taken(Rc::new(existing.clone()), new_revision);
        }

        let mut new_rs = ReplicaSet {
            metadata: ObjectMeta {
                name: name.as_str().into(),
                namespace: self.d.metadata.namespace.clone(),
                labels: template.metadata.labels.clone(),
                owner_references: vec![controller_ref(&self.d)].into(),
                ..Default::default()
            },
            spec: ReplicaSetSpec { replicas: Some(0), min_ready_seconds: self.d.spec.min_ready_seconds, selector, template },
            status: ReplicaSetStatus::default(),
        };
        let mut all = old.to_vec();
        all.push(Rc::new(new_rs.clone()));
        let count = new_rs_new_replicas(&self.d, &all, &new_rs)?;
        new_rs.spec.replicas = Some(clamp_i32(count));
        set_new_replica_set_annotations(&self.d, &mut new_rs, new_revision, false);

        self.report_create_failure();
        let mut call = Call::new(ApiRequest::Create(Object::ReplicaSet(new_rs.clone())));
        if count > 0 {
            call = call.on_success(self.scaling_event(format!("Scaled up replica set {name} from 0 to {count}")));
        }
        self.push(call);

        let mut needs_update = self.set_revision(&new_revision.to_string());
        if has_progress_deadline(&self.d) {
            let message = format!("Created new replica set {name:?}");
            set_condition(&mut self.d.to_mut().status, new_condition(PROGRESSING, "True", NEW_REPLICA_SET_CREATED, message, self.now));
            needs_update = true;
        }
        if needs_update {
            self.update_status();
        }
        Ok(Rc::new(new_rs))
    }

    /// A ReplicaSet already has the new one's name: if it is ours with our template it is the new
    /// one (a slow cache); otherwise the hash collided, and bumping `collisionCount` gives the
    /// next sync a different hash.
    fn name_taken(&mut self, existing: Rc<ReplicaSet>, new_revision: i64) -> SyncResult<Rc<ReplicaSet>> {
        let ours = existing.metadata.controller_ref().is_some_and(|r| r.uid == self.d.metadata.uid);
        if ours && equal_ignore_hash(&self.d.spec.template, &existing.spec.template) {
            if self.set_revision(&new_revision.to_string()) {
                self.update_status();
            }
            return Ok(existing);
        }
        let count = self.d.status.collision_count.unwrap_or(0).saturating_add(1);
        self.d.to_mut().status.collision_count = Some(count);
        self.update_status();
        Err(format!("replicasets.apps {:?} already exists", existing.metadata.name))
    }

    /// Upstream, a failed create (other than AlreadyExists) marks the Deployment Progressing=False
    /// with ReplicaSetCreateError and records a warning before the sync returns. The failure is
    /// learnt from the call's outcome, so it is reported at the start of the retry.
    fn report_create_failure(&mut self) {
        let Some((name, error)) = self.create_failure.take() else { return };
        if !has_progress_deadline(&self.d) {
            return;
        }
        let message = format!("Failed to create new replica set {name:?}: {error}");
        set_condition(&mut self.d.to_mut().status, new_condition(PROGRESSING, "False", FAILED_RS_CREATE, message.clone(), self.now));
        let event = EventSpec::warning(self.reference.clone(), FAILED_RS_CREATE, message);
        self.push(Call::new(ApiRequest::UpdateStatus(Object::Deployment(Deployment::clone(&self.d)))).on_success(event));
    }

    /// `scale`: a scaling event (or a paused Deployment). With one active ReplicaSet it takes the
    /// whole size; with a saturated new one the old ones go to zero; during a rolling update the
    /// change is shared out in proportion to each active ReplicaSet's size.
    pub fn scale(&mut self, new: Option<&Rc<ReplicaSet>>, old: &[Rc<ReplicaSet>]) {
        let want = replicas(&self.d);
        if let Some(rs) = find_active_or_latest(new, old) {
            if rs_replicas(&rs) != want {
                self.scale_replica_set_and_record_event(&rs, want);
            }
            return;
        }
        if is_saturated(&self.d, new.map(Rc::as_ref)) {
            for rs in filter_active(old) {
                self.scale_replica_set_and_record_event(&rs, 0);
            }
            return;
        }
        if is_rolling_update(&self.d) {
            self.scale_proportionally(new, old);
        }
    }

    fn scale_proportionally(&mut self, new: Option<&Rc<ReplicaSet>>, old: &[Rc<ReplicaSet>]) {
        let all: Vec<Rc<ReplicaSet>> = old.iter().chain(new).cloned().collect();
        let mut active = filter_active(&all);
        let allowed = if replicas(&self.d) > 0 { replicas(&self.d) + max_surge(&self.d) } else { 0 };
        // What is to be added (or, negative, removed) across the active ReplicaSets: larger ones
        // first; among equals the newer grows first and the older shrinks first.
        let to_add = allowed - replica_count(&active);
        if to_add > 0 {
            crate::sort::sort_by(&mut active, |a, b| by_size_newer(a, b));
        } else if to_add < 0 {
            crate::sort::sort_by(&mut active, |a, b| by_size_older(a, b));
        }
        let mut added = 0;
        let mut sizes: Vec<i64> = Vec::with_capacity(active.len());
        for rs in &active {
            let proportion = get_proportion(rs, &self.d, to_add, added);
            sizes.push(rs_replicas(rs) + proportion);
            added += proportion;
        }
        for (i, (rs, mut size)) in active.iter().zip(sizes).enumerate() {
            if i == 0 && to_add != 0 {
                // Whatever rounding left over goes to (or comes from) the largest.
                size = (size + to_add - added).max(0);
            }
            self.scale_replica_set(rs, size);
        }
    }

    /// `cleanupDeployment`: keeps `revisionHistoryLimit` old ReplicaSets, deleting the oldest
    /// revisions among those that are fully scaled down and observed.
    pub fn cleanup_deployment(&mut self, old: &[Rc<ReplicaSet>]) {
        if !has_revision_history_limit(&self.d) {
            return;
        }
        let mut cleanable: Vec<&ReplicaSet> = old.iter().map(Rc::as_ref).filter(|rs| !rs.metadata.is_deleting()).collect();
        let limit = i64::from(self.d.spec.revision_history_limit.unwrap_or(0));
        let diff = cleanable.len() as i64 - limit;
        if diff <= 0 {
            return;
        }
        crate::sort::sort_by(&mut cleanable, |a, b| by_revision(a, b));
        for rs in cleanable.into_iter().take(diff as usize) {
            if rs.status.replicas != 0 || rs_replicas(rs) != 0 || rs.metadata.generation > rs.status.observed_generation {
                continue;
            }
            let key = ObjectKey::of(Kind::ReplicaSet, &rs.metadata);
            self.push(Call::new(ApiRequest::Delete(DeleteRequest::new(key))));
        }
    }

    /// `calculateStatus`: counts from the ReplicaSets' statuses, and the Available condition.
    pub fn calculate_status(&self, all: &[Rc<ReplicaSet>], new: Option<&Rc<ReplicaSet>>) -> DeploymentStatus {
        let available = available_replica_count(all);
        let total = replica_count(all);
        let mut status = DeploymentStatus {
            observed_generation: self.d.metadata.generation,
            replicas: clamp_i32(actual_replica_count(all)),
            updated_replicas: clamp_i32(new.map(|rs| i64::from(rs.status.replicas)).unwrap_or(0)),
            ready_replicas: clamp_i32(ready_replica_count(all)),
            available_replicas: clamp_i32(available),
            unavailable_replicas: clamp_i32((total - available).max(0)),
            conditions: self.d.status.conditions.clone(),
            collision_count: self.d.status.collision_count,
        };
        let condition = if available >= replicas(&self.d) - max_unavailable(&self.d) {
            new_condition(AVAILABLE, "True", MINIMUM_REPLICAS_AVAILABLE, "Deployment has minimum availability.".into(), self.now)
        } else {
            new_condition(
                AVAILABLE,
                "False",
                MINIMUM_REPLICAS_UNAVAILABLE,
                "Deployment does not have minimum availability.".into(),
                self.now,
            )
        };
        set_condition(&mut status, condition);
        status
    }

    /// `syncDeploymentStatus`: writes the status if it changed.
    pub fn sync_deployment_status(&mut self, all: &[Rc<ReplicaSet>], new: Option<&Rc<ReplicaSet>>) {
        let status = self.calculate_status(all, new);
        self.status = Some(status.clone());
        if self.d.status == status {
            return;
        }
        self.d.to_mut().status = status;
        self.update_status();
    }

    /// `isScalingEvent`: an active ReplicaSet was sized for a different `spec.replicas`.
    pub fn is_scaling_event(&mut self, rs_list: &[Rc<ReplicaSet>]) -> SyncResult<bool> {
        let writes = self.steps.len();
        let (new, old) = self.get_all_replica_sets_and_sync_revision(rs_list, false)?;
        let want = replicas(&self.d);
        let scaling = old.iter().chain(&new).any(|rs| rs_replicas(rs) > 0 && desired_replicas_annotation(rs).is_some_and(|d| d != want));
        // With no write the Deployment is as it was, so the sync's next look finds the same.
        if new.is_some() && self.steps.len() == writes {
            self.found = Some((new, old));
        }
        Ok(scaling)
    }

    /// `sync`: scaling events and paused Deployments — sizes change, the template does not roll.
    pub fn sync(&mut self, rs_list: &[Rc<ReplicaSet>]) -> SyncResult<()> {
        let (new, old) = self.get_all_replica_sets_and_sync_revision(rs_list, false)?;
        self.scale(new.as_ref(), &old);
        if self.d.spec.paused {
            self.cleanup_deployment(&old);
        }
        let all: Vec<Rc<ReplicaSet>> = old.iter().cloned().chain(new.clone()).collect();
        self.sync_deployment_status(&all, new.as_ref());
        Ok(())
    }

    /// `syncStatusOnly`: a Deployment being deleted only reports.
    pub fn sync_status_only(&mut self, rs_list: &[Rc<ReplicaSet>]) -> SyncResult<()> {
        let (new, old) = self.get_all_replica_sets_and_sync_revision(rs_list, false)?;
        let all: Vec<Rc<ReplicaSet>> = old.into_iter().chain(new.clone()).collect();
        self.sync_deployment_status(&all, new.as_ref());
        Ok(())
    }

    /// `checkPausedConditions`: Progressing=Unknown while paused, so the time spent paused never
    /// counts against the progress deadline.
    pub fn check_paused_conditions(&mut self) {
        if !has_progress_deadline(&self.d) {
            return;
        }
        let reason = get_condition(&self.d.status, PROGRESSING).and_then(|c| c.reason.clone());
        if reason.as_deref() == Some(TIMED_OUT) {
            return;
        }
        let paused_recorded = reason.as_deref() == Some(PAUSED);
        let condition = match (self.d.spec.paused, paused_recorded) {
            (true, false) => new_condition(PROGRESSING, "Unknown", PAUSED, "Deployment is paused".into(), self.now),
            (false, true) => new_condition(PROGRESSING, "Unknown", RESUMED, "Deployment is resumed".into(), self.now),
            _ => return,
        };
        set_condition(&mut self.d.to_mut().status, condition);
        self.update_status();
    }
}

/// The owner reference a Deployment puts on its ReplicaSets (`metav1.NewControllerRef`).
pub(super) fn controller_ref(d: &Deployment) -> OwnerReference {
    OwnerReference {
        api_version: Kind::Deployment.api_version().into(),
        kind: Kind::Deployment.as_str().into(),
        name: d.metadata.name.to_string(),
        uid: d.metadata.uid.to_string(),
        controller: Some(true),
        block_owner_deletion: Some(true),
    }
}

/// Whether `set_new_replica_set_annotations(d, rs, new_revision, true)` would leave the
/// ReplicaSet's annotations as they are: every Deployment annotation that travels is already
/// there, and the revision is already at least `new_revision` (or is not a number, which
/// upstream leaves alone).
pub(super) fn new_replica_set_annotations_current(d: &Deployment, rs: &ReplicaSet, new_revision: i64) -> bool {
    let annotations = &rs.metadata.annotations;
    let copied = d.metadata.annotations.iter().all(|(k, v)| skip_copy_annotation(k) || annotations.get(k) == Some(v));
    let revision_current = match annotations.get(REVISION).map(String::as_str) {
        None | Some("") => new_revision <= 0,
        Some(text) => text.parse::<i64>().map_or(true, |v| v >= new_revision),
    };
    copied && revision_current
}
