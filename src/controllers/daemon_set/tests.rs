//! The DaemonSet controller's sync against hand-built caches.

use super::*;
use crate::controllers::deployment::hash::compute_hash;
use crate::runtime::informer::Informer;
use crate::store::ChangeType;
use std::rc::Rc;

fn ds(name: &str) -> DaemonSet {
    let labels: StringMap = [("app".to_string(), name.to_string())].into();
    let mut ds = DaemonSet {
        metadata: ObjectMeta {
            name: name.into(),
            namespace: "kube-system".into(),
            uid: format!("uid-{name}").into(),
            generation: 1,
            ..Default::default()
        },
        spec: DaemonSetSpec {
            selector: LabelSelector { match_labels: labels.clone(), ..Default::default() },
            template: PodTemplateSpec {
                metadata: ObjectMeta { labels: labels.into(), ..Default::default() },
                spec: PodSpec {
                    containers: vec![Container { name: "agent".into(), image: "busybox".into(), ..Default::default() }].into(),
                    ..Default::default()
                }
                .into(),
            }
            .into(),
            ..Default::default()
        },
        status: Default::default(),
    };
    crate::api::defaults::default_daemon_set(&mut ds);
    ds.metadata.annotations.insert(crate::api::TEMPLATE_GENERATION_ANNOTATION.into(), "1".into());
    ds
}

fn node(name: &str, labels: &[(&str, &str)], taints: &[(&str, &str)]) -> Node {
    let mut n = Node::default();
    n.metadata.name = name.into();
    n.metadata.uid = format!("uid-{name}").into();
    n.metadata.labels = labels.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect::<StringMap>().into();
    n.spec.taints = taints.iter().map(|(k, e)| Taint { key: k.to_string(), effect: e.to_string(), ..Default::default() }).collect();
    n
}

/// A pod of `ds` bound to `node`, made as the controller makes it.
fn daemon_pod(ds: &DaemonSet, name: &str, node: &str, phase: PodPhase, ready: bool) -> Pod {
    let mut p = PodFactory::new(ds, &compute_hash(&ds.spec.template, None)).pod_for(node);
    p.metadata.name = name.into();
    p.metadata.uid = format!("uid-{name}").into();
    p.metadata.creation_timestamp = Some(Time(0));
    p.spec.node_name = Some(node.into());
    p.status.phase = Some(phase);
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

struct World {
    dss: Informer,
    pods: Informer,
    nodes: Informer,
    revisions: Informer,
}

impl World {
    fn new(ds: &DaemonSet, nodes: Vec<Node>, pods: Vec<Pod>) -> Self {
        World {
            dss: Informer::from_objects(Kind::DaemonSet, [Object::DaemonSet(ds.clone())]),
            pods: Informer::from_objects(Kind::Pod, pods.into_iter().map(Object::Pod)),
            nodes: Informer::from_objects(Kind::Node, nodes.into_iter().map(Object::Node)),
            revisions: Informer::from_objects(Kind::ControllerRevision, []),
        }
    }
    fn caches(&self) -> Caches<'_> {
        Caches::new([self.dss.store(), self.pods.store(), self.nodes.store(), self.revisions.store()])
    }
}

fn key(name: &str) -> ObjectKey {
    ObjectKey::new(Kind::DaemonSet, "kube-system", name)
}

/// The nodes the sync creates pods for, read from each pod's pinning affinity.
fn created_on(sync: &Sync) -> Vec<String> {
    sync.steps
        .iter()
        .flatten()
        .filter_map(|c| match &c.request {
            ApiRequest::Create(Object::Pod(p)) => target_node_name(p).map(str::to_string),
            _ => None,
        })
        .collect()
}

fn deleted(sync: &Sync) -> Vec<String> {
    sync.steps
        .iter()
        .flatten()
        .filter_map(|c| match &c.request {
            ApiRequest::Delete(d) => Some(d.key.name.to_string()),
            _ => None,
        })
        .collect()
}

fn status_written(sync: &Sync) -> Option<DaemonSetStatus> {
    sync.steps.iter().flatten().find_map(|c| match &c.request {
        ApiRequest::UpdateStatus(Object::DaemonSet(ds)) => Some(ds.status.clone()),
        _ => None,
    })
}

#[test]
fn one_pod_for_each_eligible_node_pinned_by_name() {
    let mut ds = ds("agent");
    ds.spec.template.spec.node_selector = [("disk".to_string(), "ssd".to_string())].into();
    let nodes = vec![
        node("n1", &[("disk", "ssd")], &[]),
        node("n2", &[("disk", "hdd")], &[]),
        node("n3", &[("disk", "ssd")], &[("dedicated", "NoSchedule")]),
        node("n4", &[("disk", "ssd")], &[("node.kubernetes.io/not-ready", "NoExecute")]),
    ];
    let world = World::new(&ds, nodes, vec![]);
    let mut c = DaemonSetController::new();
    let sync = c.reconcile(&key("agent"), &world.caches(), Time(0));
    assert_eq!(created_on(&sync), ["n1", "n4"]);
    let ApiRequest::Create(Object::ControllerRevision(revision)) = &sync.steps[0][0].request else { panic!("the revision first") };
    assert_eq!(
        (revision.metadata.name.as_str(), revision.revision),
        (format!("agent-{}", compute_hash(&ds.spec.template, None)).as_str(), 1)
    );
    let first = sync.steps.iter().find(|s| s.iter().any(|c| matches!(c.request, ApiRequest::Create(Object::Pod(_))))).unwrap();
    assert_eq!(first.len(), 1, "slow start: one create first");
    let ApiRequest::Create(Object::Pod(p)) = &first[0].request else { panic!("a pod create") };
    assert_eq!(p.metadata.generate_name, "agent-");
    assert_eq!(p.metadata.labels.get(POD_TEMPLATE_GENERATION).map(String::as_str), Some("1"));
    assert_eq!(p.metadata.labels.get(CONTROLLER_REVISION_HASH), Some(&compute_hash(&ds.spec.template, None)));
    assert_eq!(p.metadata.owner_references[0].kind, "DaemonSet");
    assert!(p.spec.node_name.is_none(), "the scheduler binds it");
    assert_eq!(p.spec.tolerations.len(), 6);
    let status = status_written(&sync).expect("a status write");
    assert_eq!((status.desired_number_scheduled, status.current_number_scheduled, status.number_unavailable), (2, 0, 2));
    assert_eq!(first[0].on_success.as_ref().map(|e| e.message.to_string()).as_deref(), Some("Created pod: {name}"));
}

#[test]
fn expectations_hold_the_next_sync_until_the_pods_are_seen() {
    let ds = ds("agent");
    let mut world = World::new(&ds, vec![node("n1", &[], &[]), node("n2", &[], &[])], vec![]);
    let mut c = DaemonSetController::new();
    assert_eq!(created_on(&c.reconcile(&key("agent"), &world.caches(), Time(0))).len(), 2);
    assert!(created_on(&c.reconcile(&key("agent"), &world.caches(), Time(10))).is_empty(), "not before the informer saw them");
    for (name, n) in [("agent-a", "n1"), ("agent-b", "n2")] {
        let delta = world.pods.apply(ChangeType::Added, Rc::new(Object::Pod(daemon_pod(&ds, name, n, PodPhase::Pending, false))));
        assert_eq!(c.on_delta(&world.caches(), &delta, Time(20)), vec![key("agent")]);
    }
    let sync = c.reconcile(&key("agent"), &world.caches(), Time(20));
    assert!(created_on(&sync).is_empty() && deleted(&sync).is_empty());
    assert_eq!(status_written(&sync).map(|s| s.current_number_scheduled), Some(2));
}

#[test]
fn a_node_that_becomes_ineligible_loses_its_pod_and_a_new_node_is_enqueued() {
    let ds = ds("agent");
    let pods = vec![daemon_pod(&ds, "agent-a", "n1", PodPhase::Running, true), daemon_pod(&ds, "agent-b", "n2", PodPhase::Running, true)];
    let mut world = World::new(&ds, vec![node("n1", &[], &[]), node("n2", &[], &[("dedicated", "NoExecute")])], pods);
    let mut c = DaemonSetController::new();
    let sync = c.reconcile(&key("agent"), &world.caches(), Time(1000));
    assert_eq!(deleted(&sync), ["agent-b"]);
    assert_eq!(status_written(&sync).map(|s| (s.desired_number_scheduled, s.number_misscheduled)), Some((1, 1)));
    let delta = world.nodes.apply(ChangeType::Added, Rc::new(Object::Node(node("n3", &[], &[]))));
    assert_eq!(c.on_delta(&world.caches(), &delta, Time(1000)), vec![key("agent")]);
    // A heartbeat (no label or taint change) enqueues nothing.
    let mut beat = node("n3", &[], &[]);
    beat.status.conditions.push(NodeCondition { type_: "Ready".into(), status: "True".into(), ..Default::default() });
    let delta = world.nodes.apply(ChangeType::Modified, Rc::new(Object::Node(beat)));
    assert!(c.on_delta(&world.caches(), &delta, Time(1000)).is_empty());
}

#[test]
fn a_failed_pod_is_killed_with_a_warning_then_backed_off() {
    let ds = ds("agent");
    let failed = daemon_pod(&ds, "agent-a", "n1", PodPhase::Failed, false);
    let world = World::new(&ds, vec![node("n1", &[], &[])], vec![failed]);
    let mut c = DaemonSetController::new();
    let sync = c.reconcile(&key("agent"), &world.caches(), Time(0));
    assert_eq!(deleted(&sync), ["agent-a"]);
    let events = c.take_events();
    assert_eq!(events.len(), 1);
    assert_eq!(events[0].reason.as_str(), "FailedDaemonPod");
    assert_eq!(events[0].message.as_str(), "Found failed daemon pod kube-system/agent-a on node n1, will try to kill it");
    // The delete was not observed, but the expectations time out; within the back-off the
    // failed pod is left and the sync looks again once it has passed.
    c.expectations.clear();
    let again = c.reconcile(&key("agent"), &world.caches(), Time(500));
    assert!(deleted(&again).is_empty());
    assert_eq!(again.then, Action::RequeueAfter(Duration::secs(1)));
    c.expectations.clear();
    assert_eq!(deleted(&c.reconcile(&key("agent"), &world.caches(), Time(1500))), ["agent-a"]);
    c.expectations.clear();
    assert!(deleted(&c.reconcile(&key("agent"), &world.caches(), Time(2500))).is_empty(), "now 2 s");
}

#[test]
fn a_second_pod_on_a_node_goes_and_the_oldest_stays() {
    let ds = ds("agent");
    let old = daemon_pod(&ds, "agent-z", "n1", PodPhase::Running, true);
    let mut young = daemon_pod(&ds, "agent-a", "n1", PodPhase::Running, true);
    young.metadata.creation_timestamp = Some(Time(5000));
    let world = World::new(&ds, vec![node("n1", &[], &[])], vec![old, young]);
    let sync = DaemonSetController::new().reconcile(&key("agent"), &world.caches(), Time(6000));
    assert_eq!(deleted(&sync), ["agent-a"]);
}

#[test]
fn on_delete_leaves_old_pods_and_rolling_update_replaces_one_at_a_time() {
    let mut ds = ds("agent");
    let pods = vec![daemon_pod(&ds, "agent-a", "n1", PodPhase::Running, true), daemon_pod(&ds, "agent-b", "n2", PodPhase::Running, true)];
    ds.spec.template.spec.containers[0].image = "busybox:1.37".into();
    ds.metadata.annotations.insert(crate::api::TEMPLATE_GENERATION_ANNOTATION.into(), "2".into());
    ds.metadata.generation = 2;
    let world = World::new(&ds, vec![node("n1", &[], &[]), node("n2", &[], &[])], pods.clone());
    let sync = DaemonSetController::new().reconcile(&key("agent"), &world.caches(), Time(1000));
    assert_eq!(deleted(&sync), ["agent-a"], "maxUnavailable 1");
    let status = status_written(&sync).unwrap();
    assert_eq!((status.updated_number_scheduled, status.number_available, status.observed_generation), (0, 2, 2));

    ds.spec.update_strategy = DaemonSetUpdateStrategy { type_: Some("OnDelete".into()), rolling_update: None };
    let world = World::new(&ds, vec![node("n1", &[], &[]), node("n2", &[], &[])], pods);
    let sync = DaemonSetController::new().reconcile(&key("agent"), &world.caches(), Time(1000));
    assert!(deleted(&sync).is_empty() && created_on(&sync).is_empty());
}

#[test]
fn an_unbound_pod_pinned_to_a_vanished_node_is_deleted_and_a_bound_one_left_to_pod_gc() {
    let ds = ds("agent");
    let mut pending = daemon_pod(&ds, "agent-a", "gone", PodPhase::Pending, false);
    pending.spec.node_name = None;
    let bound = daemon_pod(&ds, "agent-b", "also-gone", PodPhase::Running, true);
    let world = World::new(&ds, vec![], vec![pending, bound]);
    let sync = DaemonSetController::new().reconcile(&key("agent"), &world.caches(), Time(1000));
    assert_eq!(deleted(&sync), ["agent-a"]);
}
