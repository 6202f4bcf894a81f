//! Pure helpers of the Deployment controller (pkg/controller/deployment/util): the annotations it
//! keeps on ReplicaSets, revisions, surge and unavailability arithmetic, proportions, conditions.
//!
//! Nothing here writes or reads a cache; every function is a plain computation over objects, so
//! the numbers can be tested against upstream's unit tests directly. Counts are computed in
//! `i64` and clamped when stored, so no input can overflow the arithmetic.

use super::hash::POD_TEMPLATE_HASH;
use crate::model::*;
use std::cmp::Ordering;
use std::rc::Rc;

/// The revision of a Deployment and of each of its ReplicaSets (`kubectl rollout history`).
pub const REVISION: &str = "deployment.kubernetes.io/revision";
/// The revisions a ReplicaSet served before a rollback made it new again.
pub const REVISION_HISTORY: &str = "deployment.kubernetes.io/revision-history";
/// `spec.replicas` of the Deployment when the ReplicaSet was last sized.
pub const DESIRED_REPLICAS: &str = "deployment.kubernetes.io/desired-replicas";
/// `spec.replicas + maxSurge` of the Deployment when the ReplicaSet was last sized.
pub const MAX_REPLICAS: &str = "deployment.kubernetes.io/max-replicas";
const LAST_APPLIED: &str = "kubectl.kubernetes.io/last-applied-configuration";
const ROLLBACK_TO: &str = "deprecated.deployment.rollback.to";
/// How long `revision-history` may grow (`maxRevHistoryLengthInChars`).
pub const MAX_REVISION_HISTORY_CHARS: usize = 2000;

pub const AVAILABLE: &str = "Available";
pub const PROGRESSING: &str = "Progressing";
pub const REPLICA_SET_UPDATED: &str = "ReplicaSetUpdated";
pub const FAILED_RS_CREATE: &str = "ReplicaSetCreateError";
pub const NEW_REPLICA_SET_CREATED: &str = "NewReplicaSetCreated";
pub const FOUND_NEW_REPLICA_SET: &str = "FoundNewReplicaSet";
pub const NEW_RS_AVAILABLE: &str = "NewReplicaSetAvailable";
pub const TIMED_OUT: &str = "ProgressDeadlineExceeded";
pub const PAUSED: &str = "DeploymentPaused";
pub const RESUMED: &str = "DeploymentResumed";
pub const MINIMUM_REPLICAS_AVAILABLE: &str = "MinimumReplicasAvailable";
pub const MINIMUM_REPLICAS_UNAVAILABLE: &str = "MinimumReplicasUnavailable";

pub const ROLLING_UPDATE: &str = "RollingUpdate";
pub const RECREATE: &str = "Recreate";

/// Stores a computed count in an `int32` field.
pub fn clamp_i32(v: i64) -> i32 {
    v.clamp(i64::from(i32::MIN), i64::from(i32::MAX)) as i32
}

/// `spec.replicas` of a Deployment (defaulted to 1 by the API server).
pub fn replicas(d: &Deployment) -> i64 {
    i64::from(d.spec.replicas.unwrap_or(1))
}

/// `spec.replicas` of a ReplicaSet (defaulted to 1 by the API server).
pub fn rs_replicas(rs: &ReplicaSet) -> i64 {
    i64::from(rs.spec.replicas.unwrap_or(1))
}

pub fn strategy_type(d: &Deployment) -> &str {
    d.spec.strategy.type_.as_deref().unwrap_or(ROLLING_UPDATE)
}

pub fn is_rolling_update(d: &Deployment) -> bool {
    strategy_type(d) == ROLLING_UPDATE
}

/// `intstr.GetScaledValueFromIntOrPercent` with wide arithmetic (a huge percentage of a huge
/// count saturates instead of overflowing).
pub fn scaled_value(value: Option<&IntOrString>, total: i64, round_up: bool) -> Result<i64, String> {
    match value {
        None => Ok(0),
        Some(IntOrString::Int(v)) => Ok(*v),
        Some(IntOrString::String(s)) => {
            let pct: i128 = s
                .strip_suffix('%')
                .and_then(|n| n.parse().ok())
                .ok_or_else(|| format!("invalid value for IntOrString: invalid type: string is not a percentage: {s:?}"))?;
            let scaled = pct.saturating_mul(i128::from(total));
            let rounded = if round_up { scaled.saturating_add(99).div_euclid(100) } else { scaled.div_euclid(100) };
            Ok(rounded.clamp(i128::from(i64::MIN), i128::from(i64::MAX)) as i64)
        }
    }
}

/// `ResolveFenceposts`: maxSurge rounds up, maxUnavailable rounds down, and if both come out 0
/// maxUnavailable becomes 1 so a rollout can still move.
pub fn resolve_fenceposts(d: &Deployment) -> Result<(i64, i64), String> {
    let ru = d.spec.strategy.rolling_update.as_ref();
    let desired = replicas(d);
    let surge = scaled_value(ru.and_then(|r| r.max_surge.as_ref()), desired, true)?;
    let mut unavailable = scaled_value(ru.and_then(|r| r.max_unavailable.as_ref()), desired, false)?;
    if surge == 0 && unavailable == 0 {
        unavailable = 1;
    }
    Ok((clamp_i32(surge).into(), clamp_i32(unavailable).into()))
}

/// `MaxSurge`: how many pods above `spec.replicas` a rolling update may run.
pub fn max_surge(d: &Deployment) -> i64 {
    if !is_rolling_update(d) {
        return 0;
    }
    resolve_fenceposts(d).map(|(s, _)| s).unwrap_or(0)
}

/// `MaxUnavailable`: how many pods below `spec.replicas` a rolling update may go, never more
/// than `spec.replicas`.
pub fn max_unavailable(d: &Deployment) -> i64 {
    if !is_rolling_update(d) || replicas(d) == 0 {
        return 0;
    }
    resolve_fenceposts(d).map(|(_, u)| u.min(replicas(d))).unwrap_or(0)
}

/// `HasProgressDeadline`: set and not the "infinite" MaxInt32.
pub fn has_progress_deadline(d: &Deployment) -> bool {
    d.spec.progress_deadline_seconds.is_some_and(|p| p != i32::MAX)
}

/// `HasRevisionHistoryLimit`: set and not the "infinite" MaxInt32.
pub fn has_revision_history_limit(d: &Deployment) -> bool {
    d.spec.revision_history_limit.is_some_and(|l| l != i32::MAX)
}

/// `Revision`: the revision annotation, 0 when absent, an error when not a number.
pub fn revision(meta: &ObjectMeta) -> Result<i64, std::num::ParseIntError> {
    match meta.annotations.get(REVISION) {
        None => Ok(0),
        Some(v) => v.parse(),
    }
}

/// `MaxRevision`: the highest revision among the ReplicaSets (unparsable ones are skipped).
pub fn max_revision(rss: &[Rc<ReplicaSet>]) -> i64 {
    rss.iter().filter_map(|rs| revision(&rs.metadata).ok()).max().unwrap_or(0).max(0)
}

fn int_annotation(rs: &ReplicaSet, key: &str) -> Option<i64> {
    rs.metadata.annotations.get(key)?.parse::<i32>().ok().map(i64::from)
}

pub fn desired_replicas_annotation(rs: &ReplicaSet) -> Option<i64> {
    int_annotation(rs, DESIRED_REPLICAS)
}

pub fn max_replicas_annotation(rs: &ReplicaSet) -> Option<i64> {
    int_annotation(rs, MAX_REPLICAS)
}

/// `SetReplicasAnnotations`; returns whether anything changed.
pub fn set_replicas_annotations(rs: &mut ReplicaSet, desired: i64, max: i64) -> bool {
    let mut updated = false;
    for (key, value) in [(DESIRED_REPLICAS, desired), (MAX_REPLICAS, max)] {
        let text = value.to_string();
        if rs.metadata.annotations.get(key) != Some(&text) {
            rs.metadata.annotations.insert(key.to_string(), text);
            updated = true;
        }
    }
    updated
}

/// `ReplicasAnnotationsNeedUpdate`.
pub fn replicas_annotations_need_update(rs: &ReplicaSet, desired: i64, max: i64) -> bool {
    rs.metadata.annotations.get(DESIRED_REPLICAS) != Some(&desired.to_string())
        || rs.metadata.annotations.get(MAX_REPLICAS) != Some(&max.to_string())
}

pub(super) fn skip_copy_annotation(key: &str) -> bool {
    [LAST_APPLIED, REVISION, REVISION_HISTORY, DESIRED_REPLICAS, MAX_REPLICAS, ROLLBACK_TO].contains(&key)
}

/// `copyDeploymentAnnotationsToReplicaSet`: the Deployment's own annotations (a change cause, for
/// instance) travel to its new ReplicaSet, except the controller's bookkeeping ones.
fn copy_deployment_annotations(d: &Deployment, rs: &mut ReplicaSet) -> bool {
    let mut changed = false;
    for (k, v) in &d.metadata.annotations {
        if skip_copy_annotation(k) || rs.metadata.annotations.get(k) == Some(v) {
            continue;
        }
        rs.metadata.annotations.insert(k.clone(), v.clone());
        changed = true;
    }
    changed
}

/// `SetNewReplicaSetAnnotations`: copies the Deployment's annotations, raises the revision to
/// `new_revision` when it is lower (keeping the old one in `revision-history`, which is what
/// a rollback to this ReplicaSet looks like), and on creation records the replica annotations.
pub fn set_new_replica_set_annotations(d: &Deployment, rs: &mut ReplicaSet, new_revision: i64, exists: bool) -> bool {
    let mut changed = copy_deployment_annotations(d, rs);
    let old_text = rs.metadata.annotations.get(REVISION).cloned();
    let old_revision = match old_text.as_deref() {
        None | Some("") => 0,
        Some(text) => match text.parse::<i64>() {
            Ok(v) => v,
            // Upstream gives up on a ReplicaSet whose revision is not a number.
            Err(_) => return false,
        },
    };
    if old_revision < new_revision {
        rs.metadata.annotations.insert(REVISION.into(), new_revision.to_string());
        changed = true;
        if let Some(old) = old_text {
            append_revision_history(rs, &old);
        }
    }
    if !exists && set_replicas_annotations(rs, replicas(d), replicas(d) + max_surge(d)) {
        changed = true;
    }
    changed
}

fn append_revision_history(rs: &mut ReplicaSet, old_revision: &str) {
    let history = rs.metadata.annotations.get(REVISION_HISTORY).cloned().unwrap_or_default();
    if history.is_empty() {
        rs.metadata.annotations.insert(REVISION_HISTORY.into(), old_revision.to_string());
        return;
    }
    let mut revisions: Vec<&str> = history.split(',').collect();
    let mut total = history.len() + old_revision.len() + 1;
    let mut start = 0;
    while total > MAX_REVISION_HISTORY_CHARS && start < revisions.len() {
        total -= revisions[start].len() + 1;
        start += 1;
    }
    if total <= MAX_REVISION_HISTORY_CHARS {
        revisions = revisions.split_off(start);
        revisions.push(old_revision);
        rs.metadata.annotations.insert(REVISION_HISTORY.into(), revisions.join(","));
    }
}

/// `SetDeploymentRevision`; returns whether it changed.
pub fn set_deployment_revision(d: &mut Deployment, revision: &str) -> bool {
    if d.metadata.annotations.get(REVISION).map(String::as_str) == Some(revision) {
        return false;
    }
    d.metadata.annotations.insert(REVISION.into(), revision.to_string());
    true
}

/// `EqualIgnoreHash`: two templates are the same version if they differ at most in their
/// `pod-template-hash` label.
pub fn equal_ignore_hash(a: &PodTemplateSpec, b: &PodTemplateSpec) -> bool {
    if a.spec != b.spec {
        return false;
    }
    // Compared in place rather than on copies with the hash label removed: a Deployment sync
    // runs this for every ReplicaSet it owns, and cloning two templates' metadata each time
    // showed up in profiles. The destructuring is exhaustive, so a new metadata field cannot be
    // forgotten here.
    let ObjectMeta {
        name,
        generate_name,
        namespace,
        uid,
        resource_version,
        generation,
        creation_timestamp,
        deletion_timestamp,
        deletion_grace_period_seconds,
        labels,
        annotations,
        owner_references,
        finalizers,
    } = &a.metadata;
    let m = &b.metadata;
    fn unhashed(l: &StringMap) -> impl Iterator<Item = (&String, &String)> {
        l.iter().filter(|(k, _)| k.as_str() != POD_TEMPLATE_HASH)
    }
    *name == m.name
        && *generate_name == m.generate_name
        && *namespace == m.namespace
        && *uid == m.uid
        && *resource_version == m.resource_version
        && *generation == m.generation
        && *creation_timestamp == m.creation_timestamp
        && *deletion_timestamp == m.deletion_timestamp
        && *deletion_grace_period_seconds == m.deletion_grace_period_seconds
        && *annotations == m.annotations
        && *owner_references == m.owner_references
        && *finalizers == m.finalizers
        && unhashed(labels).eq(unhashed(&m.labels))
}

/// `ReplicaSetsByCreationTimestamp`: oldest first, names breaking ties.
pub fn by_creation(a: &ReplicaSet, b: &ReplicaSet) -> Ordering {
    a.metadata.creation_timestamp.cmp(&b.metadata.creation_timestamp).then_with(|| a.metadata.name.cmp(&b.metadata.name))
}

/// `ReplicaSetsBySizeOlder`: larger first; among equals, older first.
pub fn by_size_older(a: &ReplicaSet, b: &ReplicaSet) -> Ordering {
    rs_replicas(b).cmp(&rs_replicas(a)).then_with(|| by_creation(a, b))
}

/// `ReplicaSetsBySizeNewer`: larger first; among equals, newer first.
pub fn by_size_newer(a: &ReplicaSet, b: &ReplicaSet) -> Ordering {
    rs_replicas(b).cmp(&rs_replicas(a)).then_with(|| by_creation(b, a))
}

/// `ReplicaSetsByRevision`: lowest revision first, creation time breaking ties. Unparsable
/// revisions sort first (upstream's comparator is not a total order there; this one is).
pub fn by_revision(a: &ReplicaSet, b: &ReplicaSet) -> Ordering {
    revision(&a.metadata).ok().cmp(&revision(&b.metadata).ok()).then_with(|| by_creation(a, b))
}

/// `FindNewReplicaSet`: the oldest ReplicaSet whose template is the Deployment's.
pub fn find_new_replica_set<'a>(d: &Deployment, rss: &'a [Rc<ReplicaSet>]) -> Option<&'a Rc<ReplicaSet>> {
    rss.iter().filter(|rs| equal_ignore_hash(&rs.spec.template, &d.spec.template)).min_by(|a, b| by_creation(a, b))
}

/// `FindOldReplicaSets` (the second list): every ReplicaSet but the new one.
pub fn find_old_replica_sets(d: &Deployment, rss: &[Rc<ReplicaSet>]) -> Vec<Rc<ReplicaSet>> {
    let new_uid = find_new_replica_set(d, rss).map(|rs| rs.metadata.uid.clone());
    rss.iter().filter(|rs| Some(&rs.metadata.uid) != new_uid.as_ref()).cloned().collect()
}

/// `FilterActiveReplicaSets`: those that want at least one pod.
pub fn filter_active(rss: &[Rc<ReplicaSet>]) -> Vec<Rc<ReplicaSet>> {
    rss.iter().filter(|rs| rs_replicas(rs) > 0).cloned().collect()
}

pub fn replica_count(rss: &[Rc<ReplicaSet>]) -> i64 {
    rss.iter().map(|rs| rs_replicas(rs)).sum()
}
pub fn actual_replica_count(rss: &[Rc<ReplicaSet>]) -> i64 {
    rss.iter().map(|rs| i64::from(rs.status.replicas)).sum()
}
pub fn ready_replica_count(rss: &[Rc<ReplicaSet>]) -> i64 {
    rss.iter().map(|rs| i64::from(rs.status.ready_replicas)).sum()
}
pub fn available_replica_count(rss: &[Rc<ReplicaSet>]) -> i64 {
    rss.iter().map(|rs| i64::from(rs.status.available_replicas)).sum()
}

/// `FindActiveOrLatest`: the only active ReplicaSet, or the newest one if none is active;
/// `None` when several are active (then scaling must be proportional).
pub fn find_active_or_latest(new_rs: Option<&Rc<ReplicaSet>>, old: &[Rc<ReplicaSet>]) -> Option<Rc<ReplicaSet>> {
    let mut all: Vec<Rc<ReplicaSet>> = old.to_vec();
    all.extend(new_rs.cloned());
    let active = filter_active(&all);
    match active.len() {
        0 => new_rs.cloned().or_else(|| old.iter().max_by(|a, b| by_creation(a, b)).cloned()),
        1 => active.into_iter().next(),
        _ => None,
    }
}

/// `IsSaturated`: the new ReplicaSet has all the Deployment's replicas, available.
pub fn is_saturated(d: &Deployment, rs: Option<&ReplicaSet>) -> bool {
    let Some(rs) = rs else { return false };
    let Some(desired) = rs.metadata.annotations.get(DESIRED_REPLICAS).and_then(|v| v.parse::<i64>().ok()) else { return false };
    rs_replicas(rs) == replicas(d) && desired == replicas(d) && i64::from(rs.status.available_replicas) == replicas(d)
}

/// `NewRSNewReplicas`: how large the new ReplicaSet may be now.
pub fn new_rs_new_replicas(d: &Deployment, all: &[Rc<ReplicaSet>], new_rs: &ReplicaSet) -> Result<i64, String> {
    match strategy_type(d) {
        ROLLING_UPDATE => {
            let surge = scaled_value(d.spec.strategy.rolling_update.as_ref().and_then(|r| r.max_surge.as_ref()), replicas(d), true)?;
            let current = replica_count(all);
            let max_total = replicas(d).saturating_add(surge);
            if current >= max_total {
                return Ok(rs_replicas(new_rs));
            }
            let scale_up = max_total.saturating_sub(current).min(replicas(d) - rs_replicas(new_rs));
            Ok(rs_replicas(new_rs) + scale_up)
        }
        RECREATE => Ok(replicas(d)),
        other => Err(format!("deployment type {other} isn't supported")),
    }
}

/// `GetProportion`: this ReplicaSet's share of the replicas being added (or removed), bounded by
/// what is left to distribute.
pub fn get_proportion(rs: &ReplicaSet, d: &Deployment, to_add: i64, added: i64) -> i64 {
    if rs_replicas(rs) == 0 || to_add == 0 || to_add == added {
        return 0;
    }
    let fraction = replica_set_fraction(rs, d);
    let allowed = to_add - added;
    if to_add > 0 {
        fraction.min(allowed)
    } else {
        fraction.max(allowed)
    }
}

/// `getReplicaSetFraction`: the ReplicaSet's size scaled by how the Deployment's maximum size
/// changed since the ReplicaSet was last sized (its max-replicas annotation).
fn replica_set_fraction(rs: &ReplicaSet, d: &Deployment) -> i64 {
    if replicas(d) == 0 {
        return -rs_replicas(rs);
    }
    let max_now = replicas(d) + max_surge(d);
    let before = match max_replicas_annotation(rs) {
        Some(v) if v != 0 => v,
        // No annotation (someone edited the ReplicaSet): fall back to the current size.
        _ => i64::from(d.status.replicas),
    };
    if before == 0 {
        return 0;
    }
    let size = rs_replicas(rs).saturating_mul(max_now) as f64 / before as f64;
    // Go's math.Round: halves away from zero, as f64::round does.
    size.round() as i64 - rs_replicas(rs)
}

pub fn new_condition(type_: &str, status: &str, reason: &str, message: String, now: Time) -> DeploymentCondition {
    DeploymentCondition {
        type_: type_.into(),
        status: status.into(),
        last_update_time: Some(now),
        last_transition_time: Some(now),
        reason: Some(reason.into()),
        message: Some(message),
    }
}

pub fn get_condition<'a>(status: &'a DeploymentStatus, type_: &str) -> Option<&'a DeploymentCondition> {
    status.conditions.iter().find(|c| c.type_ == type_)
}

/// `SetDeploymentCondition`: a condition with the same status and reason is left alone; a
/// status that did not change keeps its lastTransitionTime; the new condition goes last.
pub fn set_condition(status: &mut DeploymentStatus, mut condition: DeploymentCondition) {
    if let Some(current) = get_condition(status, &condition.type_) {
        if current.status == condition.status && current.reason == condition.reason {
            return;
        }
        if current.status == condition.status {
            condition.last_transition_time = current.last_transition_time;
        }
    }
    remove_condition(status, &condition.type_.clone());
    status.conditions.push(condition);
}

pub fn remove_condition(status: &mut DeploymentStatus, type_: &str) {
    status.conditions.retain(|c| c.type_ != type_);
}

/// `DeploymentComplete`: every desired replica updated and available, no old pods, and the
/// latest generation observed.
pub fn deployment_complete(d: &Deployment, status: &DeploymentStatus) -> bool {
    let want = replicas(d);
    i64::from(status.updated_replicas) == want
        && i64::from(status.replicas) == want
        && i64::from(status.available_replicas) == want
        && status.observed_generation >= d.metadata.generation
}

/// `DeploymentProgressing`: more updated, fewer old, more ready or more available pods than the
/// last recorded status.
pub fn deployment_progressing(d: &Deployment, new: &DeploymentStatus) -> bool {
    let old = &d.status;
    let old_old = i64::from(old.replicas) - i64::from(old.updated_replicas);
    let new_old = i64::from(new.replicas) - i64::from(new.updated_replicas);
    new.updated_replicas > old.updated_replicas
        || new_old < old_old
        || new.ready_replicas > old.ready_replicas
        || new.available_replicas > old.available_replicas
}

/// `DeploymentTimedOut`: no progress recorded for longer than progressDeadlineSeconds.
pub fn deployment_timed_out(d: &Deployment, new: &DeploymentStatus, now: Time) -> bool {
    if !has_progress_deadline(d) {
        return false;
    }
    let Some(cond) = get_condition(new, PROGRESSING) else { return false };
    match cond.reason.as_deref() {
        Some(NEW_RS_AVAILABLE) => false,
        Some(TIMED_OUT) => true,
        _ => {
            let Some(from) = cond.last_update_time else { return false };
            let deadline = from + progress_deadline(d);
            deadline < now
        }
    }
}

pub fn progress_deadline(d: &Deployment) -> Duration {
    Duration::secs(d.spec.progress_deadline_seconds.unwrap_or(0).max(0) as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn templates_equal_ignoring_only_the_pod_template_hash_label() {
        let mut d = PodTemplateSpec::default();
        d.metadata.labels.insert("app".into(), "web".into());
        let mut rs = d.clone();
        rs.metadata.labels.insert(POD_TEMPLATE_HASH.into(), "5d59d67564".into());
        assert!(equal_ignore_hash(&rs, &d));
        assert!(equal_ignore_hash(&d, &rs));
        let mut relabelled = rs.clone();
        relabelled.metadata.labels.insert("tier".into(), "front".into());
        assert!(!equal_ignore_hash(&relabelled, &d));
        let mut annotated = rs.clone();
        annotated.metadata.annotations.insert("note".into(), "x".into());
        assert!(!equal_ignore_hash(&annotated, &d));
        let mut other_image = rs;
        other_image.spec.containers.push(Container { name: "nginx".into(), image: "nginx:1.16.1".into(), ..Default::default() });
        assert!(!equal_ignore_hash(&other_image, &d));
    }

    fn deployment(replicas: i32, surge: &str, unavailable: &str) -> Deployment {
        let parse = |s: &str| match s.parse::<i64>() {
            Ok(n) => IntOrString::Int(n),
            Err(_) => IntOrString::String(s.into()),
        };
        let mut d = Deployment::default();
        d.spec.replicas = Some(replicas);
        d.spec.strategy.type_ = Some(ROLLING_UPDATE.into());
        d.spec.strategy.rolling_update =
            Some(RollingUpdateDeployment { max_surge: Some(parse(surge)), max_unavailable: Some(parse(unavailable)) });
        d
    }

    #[test]
    fn default_fenceposts_round_surge_up_and_unavailable_down() {
        let d = deployment(3, "25%", "25%");
        assert_eq!((max_surge(&d), max_unavailable(&d)), (1, 0));
        let d = deployment(10, "25%", "25%");
        assert_eq!((max_surge(&d), max_unavailable(&d)), (3, 2));
    }

    #[test]
    fn when_both_fenceposts_resolve_to_zero_max_unavailable_becomes_one() {
        let d = deployment(1, "0", "25%");
        assert_eq!((max_surge(&d), max_unavailable(&d)), (0, 1));
        let mut recreate = deployment(3, "1", "1");
        recreate.spec.strategy.type_ = Some(RECREATE.into());
        assert_eq!((max_surge(&recreate), max_unavailable(&recreate)), (0, 0));
    }

    #[test]
    fn absurd_percentages_saturate_instead_of_overflowing() {
        let d = deployment(i32::MAX, "999999999999999999%", "100%");
        assert_eq!(max_surge(&d), i64::from(i32::MAX));
        assert_eq!(max_unavailable(&d), i64::from(i32::MAX));
    }

    #[test]
    fn a_rollback_raises_the_revision_and_keeps_the_old_one_in_history() {
        let d = deployment(3, "25%", "25%");
        let mut rs = ReplicaSet::default();
        rs.metadata.annotations.insert(REVISION.into(), "1".into());
        assert!(set_new_replica_set_annotations(&d, &mut rs, 3, true));
        assert_eq!(rs.metadata.annotations.get(REVISION).map(String::as_str), Some("3"));
        assert_eq!(rs.metadata.annotations.get(REVISION_HISTORY).map(String::as_str), Some("1"));
        assert!(set_new_replica_set_annotations(&d, &mut rs, 5, true));
        assert_eq!(rs.metadata.annotations.get(REVISION_HISTORY).map(String::as_str), Some("1,3"));
        assert!(!set_new_replica_set_annotations(&d, &mut rs, 4, true), "a lower revision never replaces a higher one");
    }

    #[test]
    fn conditions_keep_their_transition_time_while_the_status_holds() {
        let mut status = DeploymentStatus::default();
        set_condition(&mut status, new_condition(PROGRESSING, "True", NEW_REPLICA_SET_CREATED, "a".into(), Time(1000)));
        set_condition(&mut status, new_condition(AVAILABLE, "True", MINIMUM_REPLICAS_AVAILABLE, "b".into(), Time(2000)));
        set_condition(&mut status, new_condition(PROGRESSING, "True", NEW_RS_AVAILABLE, "c".into(), Time(3000)));
        let types: Vec<&str> = status.conditions.iter().map(|c| c.type_.as_str()).collect();
        assert_eq!(types, ["Available", "Progressing"]);
        let p = &status.conditions[1];
        assert_eq!((p.last_transition_time, p.last_update_time), (Some(Time(1000)), Some(Time(3000))));
    }
}
