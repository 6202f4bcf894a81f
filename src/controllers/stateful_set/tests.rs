//! Unit tests of the StatefulSet controller's pieces: identities, one pass's decisions, the
//! rolling update's completion. The cross-component behaviours are in `tests/stateful_sets.rs`.

use super::control::{claim_name, complete_rolling_update, new_pod, update};
use super::revisions::{History, Revision};
use super::*;
use crate::api::ApiRequest;
use crate::runtime::store::Writer;

fn set(replicas: i32, policy: &str) -> StatefulSet {
    let mut sts = StatefulSet::default();
    sts.metadata.name = "web".into();
    sts.metadata.namespace = "default".into();
    sts.metadata.uid = "u-web".into();
    sts.metadata.generation = 1;
    sts.spec.replicas = Some(replicas);
    sts.spec.service_name = "nginx".into();
    sts.spec.pod_management_policy = Some(policy.into());
    sts.spec.update_strategy = StatefulSetUpdateStrategy {
        type_: Some("RollingUpdate".into()),
        rolling_update: Some(RollingUpdateStatefulSetStrategy { partition: Some(0) }),
    };
    sts
}

fn history(name: &str) -> History<'static> {
    let revision = Revision { name: name.into(), template: Default::default() };
    History { revisions: Vec::new(), current: revision.clone(), update: revision, writes: Vec::new() }
}

/// A pod of `sts` at `ordinal`, Running and Ready since time 0 when `ready`.
fn pod(sts: &StatefulSet, ordinal: i32, ready: bool) -> Pod {
    let mut p = new_pod(sts, &history("web-1").update, ordinal);
    p.status.phase = Some(if ready { PodPhase::Running } else { PodPhase::Pending });
    if ready {
        p.status.conditions.push(PodCondition {
            type_: "Ready".into(),
            status: "True".into(),
            last_transition_time: Some(Time(0)),
            ..Default::default()
        });
    }
    p
}

/// The names of the pods a pass's calls create and delete.
fn writes(steps: &[Vec<crate::controllers::Call>]) -> (Vec<String>, Vec<String>) {
    let (mut created, mut deleted) = (Vec::new(), Vec::new());
    for call in steps.iter().flatten() {
        match &call.request {
            ApiRequest::Create(o) => created.push(o.meta().name.to_string()),
            ApiRequest::Delete(d) => deleted.push(d.key.name.to_string()),
            _ => {}
        }
    }
    (created, deleted)
}

#[test]
fn a_pod_name_is_its_parent_and_ordinal() {
    assert_eq!(parent_and_ordinal("web-0"), Some(("web", 0)));
    assert_eq!(parent_and_ordinal("my-db-12"), Some(("my-db", 12)));
    assert_eq!(parent_and_ordinal("web-7d9f6c"), None);
    assert_eq!(parent_and_ordinal("web-"), None);
    assert_eq!(claim_name("www", "web-1"), "www-web-1");
}

#[test]
fn a_new_pod_carries_its_identity_and_revision() {
    let sts = set(2, "OrderedReady");
    let p = new_pod(&sts, &history("web-6d8b").update, 1);
    assert_eq!(p.metadata.name.as_str(), "web-1");
    assert_eq!(p.metadata.labels.get(POD_NAME_LABEL).map(String::as_str), Some("web-1"));
    assert_eq!(p.metadata.labels.get(POD_INDEX_LABEL).map(String::as_str), Some("1"));
    assert_eq!(p.metadata.labels.get(CONTROLLER_REVISION_HASH).map(String::as_str), Some("web-6d8b"));
    assert_eq!((p.spec.hostname.as_deref(), p.spec.subdomain.as_deref()), (Some("web-1"), Some("nginx")));
}

#[test]
fn ordered_ready_makes_one_pod_and_waits_while_parallel_makes_them_all() {
    let claims = Writer::new(Kind::PersistentVolumeClaim, &[]);
    let ordered = set(3, "OrderedReady");
    let out = update(&ordered, &[], &claims, &history("web-1"), Time(0));
    assert_eq!(writes(&out.steps).0, ["web-0"]);
    let p0 = pod(&ordered, 0, false);
    let out = update(&ordered, &[&p0], &claims, &history("web-1"), Time(0));
    assert_eq!(writes(&out.steps), (vec![], vec![]), "web-0 not Ready yet: {}", out.words);
    let p0 = pod(&ordered, 0, true);
    let out = update(&ordered, &[&p0], &claims, &history("web-1"), Time(0));
    assert_eq!(writes(&out.steps).0, ["web-1"]);
    let parallel = set(3, "Parallel");
    let out = update(&parallel, &[], &claims, &history("web-1"), Time(0));
    assert_eq!(writes(&out.steps).0, ["web-0", "web-1", "web-2"]);
}

#[test]
fn scale_down_deletes_the_highest_ordinal_first() {
    let claims = Writer::new(Kind::PersistentVolumeClaim, &[]);
    let sts = set(1, "OrderedReady");
    let pods: Vec<Pod> = (0..3).map(|o| pod(&sts, o, true)).collect();
    let refs: Vec<&Pod> = pods.iter().collect();
    let out = update(&sts, &refs, &claims, &history("web-1"), Time(0));
    assert_eq!(writes(&out.steps).1, ["web-2"]);
    let parallel = set(1, "Parallel");
    let out = update(&parallel, &refs, &claims, &history("web-1"), Time(0));
    assert_eq!(writes(&out.steps).1, ["web-2", "web-1"]);
}

#[test]
fn a_rolling_update_is_complete_only_when_every_pod_is_updated_and_ready() {
    let sts = set(3, "OrderedReady");
    let status = StatefulSetStatus {
        replicas: 3,
        ready_replicas: 3,
        updated_replicas: 2,
        current_replicas: 1,
        current_revision: "web-a".into(),
        update_revision: "web-b".into(),
        ..Default::default()
    };
    assert_eq!(complete_rolling_update(&sts, status.clone()).current_revision, "web-a");
    let done = complete_rolling_update(&sts, StatefulSetStatus { updated_replicas: 3, ..status });
    assert_eq!((done.current_revision.as_str(), done.current_replicas), ("web-b", 3));
}
