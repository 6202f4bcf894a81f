//! The Deployment controller driven end to end against the real API server, with the test
//! playing the ReplicaSet controller and the kubelets instantly: every write the controller
//! returns is served by `ApiServer`, applied to the informers, and fed back to the handlers.

use super::*;
use crate::api::{defaults, ApiError, ApiResponse, ApiServer};
use crate::runtime::informer::Informer;
use crate::store::ChangeType;
use std::collections::{BTreeMap, BTreeSet};
use std::rc::Rc;

const NS: &str = "default";

struct World {
    now: Time,
    api: ApiServer,
    rng: crate::rng::Rng,
    pods: Informer,
    rss: Informer,
    deps: Informer,
    nodes: Informer,
    dc: DeploymentController,
    queue: BTreeSet<ObjectKey>,
    delayed: Vec<(Time, ObjectKey)>,
    /// `Reason: message` of every event the controller recorded, in order.
    events: Vec<String>,
    /// Messages of failed writes.
    failures: Vec<String>,
    summaries: Vec<String>,
    last_then: Option<Action>,
    pod_seq: u64,
    /// Bounds checked after every write: at most this many pods of the app, at least this many available.
    max_pods: i64,
    min_available: usize,
    peak_pods: usize,
}

macro_rules! caches {
    ($w:expr) => {
        Caches::new([$w.pods.store(), $w.rss.store(), $w.deps.store(), $w.nodes.store()])
    };
}

impl World {
    fn new() -> Self {
        World {
            now: Time(1000),
            api: ApiServer::new(),
            rng: crate::rng::Rng::new(7),
            pods: Informer::from_objects(Kind::Pod, []),
            rss: Informer::from_objects(Kind::ReplicaSet, []),
            deps: Informer::from_objects(Kind::Deployment, []),
            nodes: Informer::from_objects(Kind::Node, []),
            dc: DeploymentController::new(),
            queue: BTreeSet::new(),
            delayed: Vec::new(),
            events: Vec::new(),
            failures: Vec::new(),
            summaries: Vec::new(),
            last_then: None,
            pod_seq: 0,
            max_pods: i64::MAX,
            min_available: 0,
            peak_pods: 0,
        }
    }

    /// Serves a request and delivers its watch event to the informers and the handlers.
    fn write(&mut self, request: ApiRequest) -> Result<Rc<Object>, ApiError> {
        let (is_create, is_delete) = (matches!(request, ApiRequest::Create(_)), matches!(request, ApiRequest::Delete(_)));
        let handled = self.api.handle(self.now, &mut self.rng, request);
        let object = match handled.result? {
            ApiResponse::Object(o) => o,
            other => panic!("unexpected answer {other:?}"),
        };
        if handled.revision.is_some() {
            let type_ = match (is_create, is_delete) {
                (true, _) => ChangeType::Added,
                (_, true) if self.api.get(&object.key()).is_none() => ChangeType::Deleted,
                _ => ChangeType::Modified,
            };
            self.observe(type_, object.clone());
        }
        Ok(object)
    }

    fn observe(&mut self, type_: ChangeType, object: Rc<Object>) {
        let informer = match object.kind() {
            Kind::Pod => &mut self.pods,
            Kind::ReplicaSet => &mut self.rss,
            Kind::Deployment => &mut self.deps,
            Kind::Node => &mut self.nodes,
            _ => return,
        };
        let delta = informer.apply(type_, object);
        let keys = self.dc.on_delta(&caches!(self), &delta, self.now);
        self.queue.extend(keys);
        self.check();
    }

    /// After every write: the ReplicaSets' sizes (the controller's claim) within the surge bound,
    /// and no fewer pods really available than the bound below. Pods themselves are counted
    /// once the ReplicaSet controller has caught up (`run_rs`), since a new pod can be created a
    /// moment before an old one is marked for deletion, as on a real cluster.
    fn check(&mut self) {
        let claimed: i64 = self.rss.iter().filter_map(|o| o.as_replica_set()).map(rs_replicas).sum();
        assert!(claimed <= self.max_pods, "{claimed} replicas exceed {} after {:?}", self.max_pods, self.events);
        let available = self.live_pods().iter().filter(|p| p.is_available(0, self.now)).count();
        assert!(available >= self.min_available, "{available} available below {} after {:?}", self.min_available, self.events);
    }

    fn check_pods(&mut self) {
        let live = self.live_pods().len();
        self.peak_pods = self.peak_pods.max(live);
        assert!(live as i64 <= self.max_pods, "{live} pods exceed {} after {:?}", self.max_pods, self.events);
    }

    fn live_pods(&self) -> Vec<&Pod> {
        self.pods.iter().filter_map(|o| o.as_pod()).filter(|p| !p.metadata.is_deleting()).collect()
    }

    /// Runs the controller's queue dry, serving each sync's steps in order.
    fn run_dc(&mut self) {
        let due: Vec<ObjectKey> = self.delayed.iter().filter(|(t, _)| *t <= self.now).map(|(_, k)| k.clone()).collect();
        self.delayed.retain(|(t, _)| *t > self.now);
        self.queue.extend(due);
        let mut guard = 0;
        while let Some(key) = self.queue.pop_first() {
            guard += 1;
            assert!(guard < 1000, "the controller never settles: {:?}", self.summaries.last());
            let sync = self.dc.reconcile(&key, &caches!(self), self.now);
            self.summaries.extend(sync.summary.clone());
            self.last_then = Some(sync.then);
            if self.serve(&key, sync.steps) {
                self.queue.insert(key.clone());
            }
            if let Action::RequeueAfter(after) = sync.then {
                self.delayed.push((self.now + after, key));
            }
        }
    }

    /// Serves the steps; returns whether one failed (the manager then requeues the key).
    fn serve(&mut self, key: &ObjectKey, steps: Vec<Vec<Call>>) -> bool {
        let mut failed = false;
        for call in steps.into_iter().flatten() {
            if failed {
                self.dc.on_outcome(key, &call, &Outcome::Skipped);
                continue;
            }
            match self.write(call.request.clone()) {
                Ok(object) => {
                    if let Some(e) = &call.on_success {
                        self.events.push(format!("{}: {}", e.reason, e.message));
                    }
                    self.dc.on_outcome(key, &call, &Outcome::Done(object));
                }
                Err(err) => {
                    self.failures.push(err.message.clone());
                    self.dc.on_outcome(key, &call, &Outcome::Failed(err));
                    failed = true;
                }
            }
        }
        failed
    }

    /// Plays the ReplicaSet controller: pods to each ReplicaSet's size (not-ready and newest go
    /// first), then its status.
    fn run_rs(&mut self) {
        let keys: Vec<ObjectKey> = self.rss.iter().map(|o| o.key()).collect();
        for key in keys {
            let Some(rs) = self.rss.get(&key).and_then(|o| o.as_replica_set()).cloned() else { continue };
            let mut pods = self.active_pods(&rs);
            let want = rs.spec.replicas.unwrap_or(1) as usize;
            for _ in pods.len()..want {
                self.create_pod(&rs);
            }
            if pods.len() > want {
                pods.sort_by_key(|p| {
                    (p.is_ready(), std::cmp::Reverse(p.metadata.creation_timestamp), std::cmp::Reverse(p.metadata.name.clone()))
                });
                for p in pods.iter().take(pods.len() - want) {
                    let key = ObjectKey::new(Kind::Pod, NS, &p.metadata.name);
                    self.write(ApiRequest::Delete(crate::api::DeleteRequest::new(key))).expect("pod delete");
                }
            }
            self.write_rs_status(&key);
        }
        self.check_pods();
    }

    fn active_pods(&self, rs: &ReplicaSet) -> Vec<Pod> {
        self.pods
            .owned_by(&rs.metadata.uid)
            .filter_map(|o| o.as_pod())
            .filter(|p| !p.metadata.is_deleting() && !p.is_terminal())
            .cloned()
            .collect()
    }

    fn create_pod(&mut self, rs: &ReplicaSet) {
        self.pod_seq += 1;
        let pod = Pod {
            metadata: ObjectMeta {
                name: format!("{}-{}", rs.metadata.name, self.pod_seq).into(),
                namespace: NS.into(),
                labels: rs.spec.template.metadata.labels.clone(),
                owner_references: vec![OwnerReference {
                    api_version: "apps/v1".into(),
                    kind: "ReplicaSet".into(),
                    name: rs.metadata.name.to_string(),
                    uid: rs.metadata.uid.to_string(),
                    controller: Some(true),
                    block_owner_deletion: Some(true),
                }]
                .into(),
                ..Default::default()
            },
            spec: rs.spec.template.spec.clone(),
            status: PodStatus::default(),
        };
        self.write(ApiRequest::Create(Object::Pod(pod))).expect("pod create");
    }

    fn write_rs_status(&mut self, key: &ObjectKey) {
        let Some(rs) = self.rss.get(key).and_then(|o| o.as_replica_set()).cloned() else { return };
        let pods = self.active_pods(&rs);
        let min_ready = i64::from(rs.spec.min_ready_seconds);
        let status = ReplicaSetStatus {
            replicas: pods.len() as i32,
            fully_labeled_replicas: pods.len() as i32,
            ready_replicas: pods.iter().filter(|p| p.is_ready()).count() as i32,
            available_replicas: pods.iter().filter(|p| p.is_available(min_ready, self.now)).count() as i32,
            observed_generation: rs.metadata.generation,
        };
        if status != rs.status {
            let mut next = rs;
            next.status = status;
            self.write(ApiRequest::UpdateStatus(Object::ReplicaSet(next))).expect("rs status");
        }
    }

    /// Plays the kubelets: every pod that is not ready becomes Running and Ready now.
    fn make_ready(&mut self) {
        let pods: Vec<Pod> =
            self.pods.iter().filter_map(|o| o.as_pod()).filter(|p| !p.is_ready() && !p.metadata.is_deleting()).cloned().collect();
        for mut pod in pods {
            pod.status.phase = Some(PodPhase::Running);
            pod.status.conditions = vec![PodCondition {
                type_: "Ready".into(),
                status: "True".into(),
                last_transition_time: Some(self.now),
                ..Default::default()
            }];
            self.write(ApiRequest::UpdateStatus(Object::Pod(pod))).expect("pod status");
        }
    }

    /// Turns of controller, ReplicaSet controller, controller again, then kubelets, until quiet.
    fn settle(&mut self, pods_become_ready: bool) {
        for _ in 0..100 {
            let before = self.api.revision();
            self.run_dc();
            self.run_rs();
            self.run_dc();
            if pods_become_ready {
                self.make_ready();
                self.run_rs();
            }
            if self.api.revision() == before && self.queue.is_empty() {
                return;
            }
        }
        panic!("no steady state: {:?}", self.summaries.last());
    }

    fn create_deployment(&mut self, d: Deployment) {
        self.write(ApiRequest::Create(Object::Deployment(d))).expect("deployment create");
    }

    fn edit_deployment(&mut self, name: &str, edit: impl FnOnce(&mut Deployment)) {
        let mut d = self.deployment(name);
        edit(&mut d);
        self.write(ApiRequest::Update(Object::Deployment(d))).expect("deployment update");
    }

    fn deployment(&self, name: &str) -> Deployment {
        self.deps.get(&dkey(name)).and_then(|o| o.as_deployment()).cloned().expect("deployment exists")
    }

    fn replica_sets(&self) -> Vec<ReplicaSet> {
        self.rss.iter().filter_map(|o| o.as_replica_set()).cloned().collect()
    }

    fn rs_with_image(&self, image: &str) -> ReplicaSet {
        self.replica_sets().into_iter().find(|rs| rs.spec.template.spec.containers[0].image == image).expect("replica set for image")
    }

    fn scaling_events(&self) -> Vec<String> {
        self.events.iter().filter(|e| e.starts_with("ScalingReplicaSet")).cloned().collect()
    }
}

fn dkey(name: &str) -> ObjectKey {
    ObjectKey::new(Kind::Deployment, NS, name)
}

fn web(replicas: i32, image: &str) -> Deployment {
    let mut d = Deployment::default();
    d.metadata.name = "web".into();
    d.metadata.namespace = NS.into();
    d.spec.replicas = Some(replicas);
    d.spec.selector.match_labels.insert("app".into(), "web".into());
    d.spec.template.metadata.labels.insert("app".into(), "web".into());
    d.spec.template.spec.containers.push(Container { name: "nginx".into(), image: image.into(), ..Default::default() });
    d
}

fn annotation<'a>(meta: &'a ObjectMeta, key: &str) -> Option<&'a str> {
    meta.annotations.get(key).map(String::as_str)
}

fn condition(d: &Deployment, type_: &str) -> (String, String, String) {
    let c = get_condition(&d.status, type_).expect("condition present");
    (c.status.clone(), c.reason.clone().unwrap_or_default(), c.message.clone().unwrap_or_default())
}

#[test]
fn defaults_give_three_replicas_a_surge_of_one_and_no_unavailability() {
    let mut d = web(3, "nginx:1.14.2");
    defaults::default_deployment(&mut d);
    assert_eq!(strategy_type(&d), "RollingUpdate");
    assert_eq!((max_surge(&d), max_unavailable(&d)), (1, 0));
    assert_eq!((d.spec.revision_history_limit, d.spec.progress_deadline_seconds, d.spec.min_ready_seconds), (Some(10), Some(600), 0));
}

#[test]
fn a_new_deployment_creates_one_replica_set_at_full_size() {
    let mut w = World::new();
    w.create_deployment(web(3, "nginx:1.14.2"));
    w.run_dc();
    let d = w.deployment("web");
    let rss = w.replica_sets();
    assert_eq!(rss.len(), 1);
    let rs = &rss[0];
    let hash = compute_hash(&d.spec.template, None);
    assert_eq!(rs.metadata.name, format!("web-{hash}"));
    assert_eq!(rs.metadata.labels.get(POD_TEMPLATE_HASH), Some(&hash));
    assert_eq!(rs.spec.selector.match_labels.get(POD_TEMPLATE_HASH), Some(&hash));
    assert_eq!(rs.spec.template.metadata.labels.get(POD_TEMPLATE_HASH), Some(&hash));
    assert_eq!(rs.spec.replicas, Some(3));
    let owner = &rs.metadata.owner_references[0];
    assert_eq!(
        (owner.api_version.as_str(), owner.kind.as_str(), owner.name.as_str(), owner.controller, owner.block_owner_deletion),
        ("apps/v1", "Deployment", "web", Some(true), Some(true))
    );
    assert_eq!(owner.uid, d.metadata.uid);
    assert_eq!([REVISION, DESIRED_REPLICAS, MAX_REPLICAS].map(|k| annotation(&rs.metadata, k)), [Some("1"), Some("3"), Some("4")]);
    assert_eq!(w.scaling_events(), [format!("ScalingReplicaSet: Scaled up replica set web-{hash} from 0 to 3")]);
    assert_eq!(annotation(&d.metadata, REVISION), Some("1"), "the revision reaches the Deployment through its status");
    assert_eq!(
        condition(&d, PROGRESSING),
        ("True".into(), NEW_REPLICA_SET_CREATED.into(), format!("Created new replica set \"web-{hash}\""))
    );
}

#[test]
fn a_settled_deployment_reports_full_availability_and_writes_nothing_more() {
    let mut w = World::new();
    w.create_deployment(web(3, "nginx:1.14.2"));
    w.settle(true);
    let d = w.deployment("web");
    let rs = &w.replica_sets()[0];
    let s = &d.status;
    assert_eq!(
        (s.observed_generation, s.replicas, s.updated_replicas, s.ready_replicas, s.available_replicas, s.unavailable_replicas),
        (1, 3, 3, 3, 3, 0)
    );
    assert_eq!(condition(&d, AVAILABLE), ("True".into(), MINIMUM_REPLICAS_AVAILABLE.into(), "Deployment has minimum availability.".into()));
    assert_eq!(
        condition(&d, PROGRESSING),
        ("True".into(), NEW_RS_AVAILABLE.into(), format!("ReplicaSet \"{}\" has successfully progressed.", rs.metadata.name))
    );
    let types: Vec<&str> = s.conditions.iter().map(|c| c.type_.as_str()).collect();
    assert_eq!(types, ["Available", "Progressing"], "the order kubectl describe shows");
    assert_eq!(w.summaries.last().map(String::as_str), Some("Deployment web: 3 of 3 available"));

    let again = w.dc.reconcile(&dkey("web"), &caches!(w), w.now);
    assert!(again.steps.is_empty() && again.summary.is_none(), "an unchanged status is not written: {again:?}");
    assert_eq!(again.then, Action::AwaitChange);
}

#[test]
fn scaling_a_deployment_scales_its_replica_set_up_and_down() {
    let mut w = World::new();
    w.create_deployment(web(3, "nginx:1.14.2"));
    w.settle(true);
    let name = w.replica_sets()[0].metadata.name.clone();
    w.edit_deployment("web", |d| d.spec.replicas = Some(5));
    w.settle(true);
    assert_eq!(w.pods.len(), 5);
    w.edit_deployment("web", |d| d.spec.replicas = Some(2));
    w.settle(true);
    assert_eq!(w.pods.len(), 2);
    assert_eq!(
        w.scaling_events()[1..],
        [
            format!("ScalingReplicaSet: Scaled up replica set {name} from 3 to 5"),
            format!("ScalingReplicaSet: Scaled down replica set {name} from 5 to 2")
        ]
    );
    let rs = &w.replica_sets()[0];
    assert_eq!([DESIRED_REPLICAS, MAX_REPLICAS].map(|k| annotation(&rs.metadata, k)), [Some("2"), Some("3")]);
    assert!(w.summaries.iter().any(|s| s == "Deployment web: scaling to 5, 3 available"), "{:?}", w.summaries);
    assert_eq!(w.deployment("web").status.available_replicas, 2);
}

#[test]
fn the_worked_example_rolls_one_pod_at_a_time_within_surge_and_availability() {
    let mut w = World::new();
    w.create_deployment(web(3, "nginx:1.14.2"));
    w.settle(true);
    let old = w.replica_sets()[0].metadata.name.clone();
    w.events.clear();
    w.max_pods = 4;
    w.min_available = 3;
    w.edit_deployment("web", |d| d.spec.template.spec.containers[0].image = "nginx:1.16.1".into());
    w.settle(true);
    let new = w.rs_with_image("nginx:1.16.1").metadata.name;
    assert_eq!(
        w.scaling_events(),
        [
            format!("ScalingReplicaSet: Scaled up replica set {new} from 0 to 1"),
            format!("ScalingReplicaSet: Scaled down replica set {old} from 3 to 2"),
            format!("ScalingReplicaSet: Scaled up replica set {new} from 1 to 2"),
            format!("ScalingReplicaSet: Scaled down replica set {old} from 2 to 1"),
            format!("ScalingReplicaSet: Scaled up replica set {new} from 2 to 3"),
            format!("ScalingReplicaSet: Scaled down replica set {old} from 1 to 0"),
        ]
    );
    assert_eq!(w.peak_pods, 4);
    assert!(w.summaries.contains(&format!("Deployment web: rolling out {new} (1 of 3 updated)")), "{:?}", w.summaries);
    let d = w.deployment("web");
    assert_eq!(annotation(&d.metadata, REVISION), Some("2"));
    assert_eq!(annotation(&w.rs_with_image("nginx:1.16.1").metadata, REVISION), Some("2"));
    assert_eq!((d.status.replicas, d.status.updated_replicas, d.status.available_replicas), (3, 3, 3));
    assert_eq!(condition(&d, PROGRESSING).1, NEW_RS_AVAILABLE);
}

#[test]
fn the_second_status_write_of_a_rollout_sync_conflicts_as_on_a_real_cluster() {
    let mut w = World::new();
    w.create_deployment(web(3, "nginx:1.14.2"));
    w.settle(true);
    w.edit_deployment("web", |d| d.spec.template.spec.containers[0].image = "nginx:1.16.1".into());
    w.failures.clear();
    let sync = w.dc.reconcile(&dkey("web"), &caches!(w), w.now);
    let verbs: Vec<&str> = sync.steps.iter().flatten().map(|c| c.request.verb()).collect();
    assert_eq!(verbs, ["create", "update-status", "update-status"]);
    let failed = w.serve(&dkey("web"), sync.steps);
    assert!(failed);
    assert_eq!(w.failures.len(), 1);
    assert!(w.failures[0].starts_with("Operation cannot be fulfilled on deployments.apps \"web\""), "{}", w.failures[0]);
}

#[test]
fn recreate_removes_every_old_pod_before_creating_the_new_replica_set() {
    let mut w = World::new();
    let mut d = web(3, "nginx:1.14.2");
    d.spec.strategy.type_ = Some(RECREATE.into());
    w.create_deployment(d);
    w.settle(true);
    let old = w.replica_sets()[0].metadata.name.clone();
    w.events.clear();
    w.edit_deployment("web", |d| d.spec.template.spec.containers[0].image = "nginx:1.16.1".into());
    // The controller scales the old ReplicaSet down and creates nothing while its pods exist.
    w.run_dc();
    assert_eq!(w.replica_sets().len(), 1);
    assert_eq!(w.scaling_events(), [format!("ScalingReplicaSet: Scaled down replica set {old} from 3 to 0")]);
    w.settle(true);
    let new = w.rs_with_image("nginx:1.16.1");
    assert_eq!(
        w.scaling_events(),
        [
            format!("ScalingReplicaSet: Scaled down replica set {old} from 3 to 0"),
            format!("ScalingReplicaSet: Scaled up replica set {} from 0 to 3", new.metadata.name),
        ]
    );
    assert_eq!(w.peak_pods, 3, "old and new pods never run together");
    assert_eq!(w.deployment("web").status.available_replicas, 3);
}

#[test]
fn deleting_the_last_pod_of_a_recreate_deployment_wakes_it() {
    let mut w = World::new();
    let mut d = web(1, "nginx:1.14.2");
    d.spec.strategy.type_ = Some(RECREATE.into());
    w.create_deployment(d);
    w.settle(true);
    let pod = w.pods.iter().next().cloned().expect("a pod");
    let delta = w.pods.apply(ChangeType::Deleted, pod.clone());
    assert_eq!(w.dc.on_delta(&caches!(w), &delta, w.now), vec![dkey("web")], "its last pod is gone");
    let delta = w.pods.apply(ChangeType::Added, pod.clone());
    assert!(w.dc.on_delta(&caches!(w), &delta, w.now).is_empty(), "pod additions enqueue nothing");
    // A RollingUpdate Deployment does not wait for pods, so their deletion does not concern it.
    w.edit_deployment("web", |d| d.spec.strategy.type_ = Some(ROLLING_UPDATE.into()));
    let delta = w.pods.apply(ChangeType::Deleted, pod);
    assert!(w.dc.on_delta(&caches!(w), &delta, w.now).is_empty());
}

#[test]
fn replica_set_changes_enqueue_their_owner_and_orphans_every_matching_deployment() {
    let mut w = World::new();
    w.create_deployment(web(1, "nginx:1.14.2"));
    w.settle(true);
    let rs = w.rss.iter().next().cloned().expect("rs");
    let delta = Delta::Updated { old: rs.clone(), new: rs.clone() };
    assert!(w.dc.on_delta(&caches!(w), &delta, w.now).is_empty(), "a re-list of the same version changes nothing");
    let mut orphan = rs.as_replica_set().cloned().expect("rs");
    orphan.metadata.name = "stray".into();
    orphan.metadata.uid = "stray-uid".into();
    orphan.metadata.owner_references.clear();
    let delta = w.rss.apply(ChangeType::Added, Rc::new(Object::ReplicaSet(orphan.clone())));
    assert_eq!(w.dc.on_delta(&caches!(w), &delta, w.now), vec![dkey("web")]);
    let mut foreign = orphan.clone();
    foreign.metadata.labels.insert("app".into(), "other".into());
    let delta = w.rss.apply(ChangeType::Added, Rc::new(Object::ReplicaSet(foreign)));
    assert!(w.dc.on_delta(&caches!(w), &delta, w.now).is_empty());
}

#[test]
fn an_orphaned_replica_set_that_matches_is_adopted() {
    let mut w = World::new();
    w.create_deployment(web(2, "nginx:1.14.2"));
    w.settle(true);
    let mut stray = w.replica_sets()[0].clone();
    stray.metadata = ObjectMeta {
        name: "stray".into(),
        namespace: NS.into(),
        labels: StringMap::from([("app".to_string(), "web".to_string())]).into(),
        ..Default::default()
    };
    stray.spec.replicas = Some(0);
    stray.spec.template.spec.containers[0].image = "nginx:1.0".into();
    stray.spec.selector.match_labels.remove(POD_TEMPLATE_HASH);
    stray.spec.template.metadata.labels.remove(POD_TEMPLATE_HASH);
    w.write(ApiRequest::Create(Object::ReplicaSet(stray))).expect("create stray");
    w.settle(true);
    let adopted = w.rss.get(&ObjectKey::new(Kind::ReplicaSet, NS, "stray")).and_then(|o| o.as_replica_set()).cloned().expect("stray");
    let owner = adopted.metadata.controller_ref().expect("adopted");
    assert_eq!((owner.kind.as_str(), owner.name.as_str()), ("Deployment", "web"));
}

/// Upstream's TestScale cases (sync_test.go): maxSurge and maxUnavailable 0, so maxUnavailable
/// resolves to 1; each ReplicaSet annotated with the size before the scaling event.
#[test]
fn proportional_scaling_matches_the_upstream_unit_tests() {
    struct Case {
        name: &'static str,
        replicas: i32,
        old_replicas: i32,
        surge: (i64, i64),
        new: Option<(&'static str, i32, i32)>,
        old: &'static [(&'static str, i32, i32)],
    }
    // (name, replicas before, expected after); old ones are listed newest first.
    let cases = [
        Case {
            name: "proportional scaling: 5 -> 10",
            replicas: 10,
            old_replicas: 5,
            surge: (0, 0),
            new: Some(("foo-v2", 2, 4)),
            old: &[("foo-v1", 3, 6)],
        },
        Case {
            name: "proportional scaling: 5 -> 3",
            replicas: 3,
            old_replicas: 5,
            surge: (0, 0),
            new: Some(("foo-v2", 2, 1)),
            old: &[("foo-v1", 3, 2)],
        },
        Case {
            name: "proportional scaling: 9 -> 4",
            replicas: 4,
            old_replicas: 9,
            surge: (0, 0),
            new: Some(("foo-v2", 8, 4)),
            old: &[("foo-v1", 1, 0)],
        },
        Case {
            name: "proportional scaling: 7 -> 10",
            replicas: 10,
            old_replicas: 7,
            surge: (0, 0),
            new: Some(("foo-v3", 2, 3)),
            old: &[("foo-v2", 3, 4), ("foo-v1", 2, 3)],
        },
        Case {
            name: "proportional scaling: 13 -> 8",
            replicas: 8,
            old_replicas: 13,
            surge: (0, 0),
            new: Some(("foo-v3", 2, 1)),
            old: &[("foo-v2", 8, 5), ("foo-v1", 3, 2)],
        },
        Case {
            name: "leftover distribution: 3 -> 4",
            replicas: 4,
            old_replicas: 3,
            surge: (0, 0),
            new: Some(("foo-v3", 1, 2)),
            old: &[("foo-v2", 1, 1), ("foo-v1", 1, 1)],
        },
        Case {
            name: "leftover distribution: 3 -> 2",
            replicas: 2,
            old_replicas: 3,
            surge: (0, 0),
            new: Some(("foo-v3", 1, 1)),
            old: &[("foo-v2", 1, 1), ("foo-v1", 1, 0)],
        },
        Case {
            name: "proportional scaling (no new rs): 4 -> 5",
            replicas: 5,
            old_replicas: 4,
            surge: (0, 0),
            new: None,
            old: &[("foo-v2", 2, 3), ("foo-v1", 2, 2)],
        },
        Case {
            name: "proportional scaling: 6 -> 0",
            replicas: 0,
            old_replicas: 6,
            surge: (0, 0),
            new: Some(("foo-v3", 3, 0)),
            old: &[("foo-v2", 2, 0), ("foo-v1", 1, 0)],
        },
        Case {
            name: "deployment with surge pods",
            replicas: 20,
            old_replicas: 10,
            surge: (2, 2),
            new: Some(("foo-v2", 6, 11)),
            old: &[("foo-v1", 6, 11)],
        },
        Case {
            name: "change both surge and size",
            replicas: 50,
            old_replicas: 10,
            surge: (6, 3),
            new: Some(("foo-v2", 5, 22)),
            old: &[("foo-v1", 8, 34)],
        },
    ];
    for case in cases {
        let mut d = web(case.replicas, "nginx:new");
        d.metadata.uid = "d-uid".into();
        d.metadata.generation = 1;
        d.spec.selector.match_labels = [("foo".to_string(), "bar".to_string())].into();
        d.spec.template.metadata.labels = d.spec.selector.match_labels.clone().into();
        d.spec.strategy = DeploymentStrategy {
            type_: Some(ROLLING_UPDATE.into()),
            rolling_update: Some(RollingUpdateDeployment {
                max_surge: Some(IntOrString::Int(case.surge.0)),
                max_unavailable: Some(IntOrString::Int(0)),
            }),
        };
        let max_before = i64::from(case.old_replicas) + case.surge.1;
        let mut objects = Vec::new();
        let all = case.new.iter().map(|r| (r, true)).chain(case.old.iter().map(|r| (r, false)));
        for (age, (&(name, have, _), is_new)) in all.enumerate() {
            let metadata = ObjectMeta {
                name: name.into(),
                namespace: NS.into(),
                uid: format!("{name}-uid").into(),
                creation_timestamp: Some(Time(10_000 - age as u64 * 1000)),
                labels: d.spec.selector.match_labels.clone().into(),
                owner_references: vec![sync::controller_ref(&d)].into(),
                ..Default::default()
            };
            let mut rs = ReplicaSet { metadata, ..Default::default() };
            rs.metadata.annotations.insert(REVISION.into(), (10 - age).to_string());
            rs.spec.replicas = Some(have);
            rs.spec.template = d.spec.template.clone();
            if !is_new {
                rs.spec.template.spec.containers[0].image = format!("nginx:{name}");
            }
            set_replicas_annotations(&mut rs, i64::from(case.old_replicas), max_before);
            objects.push(Object::ReplicaSet(rs));
        }
        d.metadata.annotations.insert(REVISION.into(), "10".into());
        let deps = Informer::from_objects(Kind::Deployment, [Object::Deployment(d)]);
        let rss = Informer::from_objects(Kind::ReplicaSet, objects);
        let pods = Informer::from_objects(Kind::Pod, []);
        let caches = Caches::new([pods.store(), rss.store(), deps.store()]);
        let sync = DeploymentController::new().reconcile(&dkey("web"), &caches, Time(20_000));
        let mut sizes: BTreeMap<String, i32> = BTreeMap::new();
        for call in sync.steps.iter().flatten() {
            if let ApiRequest::Update(Object::ReplicaSet(rs)) = &call.request {
                sizes.insert(rs.metadata.name.to_string(), rs.spec.replicas.unwrap_or(-1));
            }
        }
        for &(name, have, want) in case.new.iter().chain(case.old) {
            assert_eq!(sizes.get(name).copied().unwrap_or(have), want, "{}: {name}", case.name);
        }
    }
}

#[test]
fn revision_history_keeps_only_the_limit_of_old_replica_sets() {
    let mut w = World::new();
    let mut d = web(2, "nginx:1");
    d.spec.revision_history_limit = Some(2);
    w.create_deployment(d);
    w.settle(true);
    for v in 2..=5 {
        w.edit_deployment("web", |d| d.spec.template.spec.containers[0].image = format!("nginx:{v}"));
        w.settle(true);
    }
    let mut revisions: Vec<(String, String)> = w
        .replica_sets()
        .iter()
        .map(|rs| (annotation(&rs.metadata, REVISION).unwrap_or("").to_string(), rs.spec.template.spec.containers[0].image.clone()))
        .collect();
    revisions.sort();
    assert_eq!(revisions, [("3".into(), "nginx:3".into()), ("4".into(), "nginx:4".into()), ("5".into(), "nginx:5".into())]);
}

#[test]
fn cleanup_deletes_only_fully_scaled_down_observed_replica_sets() {
    // Upstream's TestDeploymentController_cleanupDeployment second case: limit 0, only the
    // ReplicaSet with spec and status both 0 goes.
    let rs = |name: &str, spec: i32, status: i32| {
        let mut rs = ReplicaSet::default();
        rs.metadata.name = name.into();
        rs.metadata.namespace = NS.into();
        rs.spec.replicas = Some(spec);
        rs.status.replicas = status;
        Rc::new(rs)
    };
    let old = [rs("foo-1", 0, 0), rs("foo-2", 0, 1), rs("foo-3", 1, 0), rs("foo-4", 1, 1)];
    let mut d = web(1, "nginx");
    d.spec.revision_history_limit = Some(0);
    let deps = Informer::from_objects(Kind::Deployment, [Object::Deployment(d.clone())]);
    let (empty, no_rss) = (Informer::from_objects(Kind::Pod, []), Informer::from_objects(Kind::ReplicaSet, []));
    let caches = Caches::new([empty.store(), no_rss.store(), deps.store()]);
    let object = Object::Deployment(d);
    let Some(d) = object.as_deployment() else { unreachable!() };
    let mut s = Syncer::new(&caches, &object, d, Time(0));
    s.cleanup_deployment(&old);
    let deleted: Vec<String> = s.steps.iter().flatten().map(|c| c.request.target()).collect();
    assert_eq!(deleted, ["replicaset/default/foo-1"]);
    s.steps.clear();
    s.d.to_mut().spec.revision_history_limit = Some(i32::MAX);
    s.cleanup_deployment(&[rs("foo-1", 0, 0), rs("foo-2", 0, 0)]);
    assert!(s.steps.is_empty(), "an unlimited history keeps everything");
}

#[test]
fn rollback_makes_the_old_replica_set_new_again_with_a_bumped_revision() {
    let mut w = World::new();
    w.create_deployment(web(2, "nginx:1.14.2"));
    w.settle(true);
    let first = w.replica_sets()[0].metadata.name.clone();
    w.edit_deployment("web", |d| d.spec.template.spec.containers[0].image = "nginx:1.16.1".into());
    w.settle(true);
    w.events.clear();
    // `kubectl rollout undo` copies the old ReplicaSet's template back into the Deployment.
    w.edit_deployment("web", |d| d.spec.template.spec.containers[0].image = "nginx:1.14.2".into());
    w.settle(true);
    assert_eq!(w.replica_sets().len(), 2, "no third ReplicaSet: the old one is reused");
    let back = w.rs_with_image("nginx:1.14.2");
    assert_eq!(back.metadata.name, first);
    assert_eq!(annotation(&back.metadata, REVISION), Some("3"));
    assert_eq!(annotation(&back.metadata, REVISION_HISTORY), Some("1"));
    assert_eq!(annotation(&w.deployment("web").metadata, REVISION), Some("3"));
    assert_eq!(back.spec.replicas, Some(2));
    assert_eq!(w.rs_with_image("nginx:1.16.1").spec.replicas, Some(0));
    assert_eq!(w.scaling_events()[0], format!("ScalingReplicaSet: Scaled up replica set {first} from 0 to 1"));
}

#[test]
fn a_rollout_without_progress_exceeds_its_deadline() {
    let mut w = World::new();
    let mut d = web(2, "nginx:1.14.2");
    d.spec.progress_deadline_seconds = Some(30);
    w.create_deployment(d);
    w.settle(true);
    w.edit_deployment("web", |d| d.spec.template.spec.containers[0].image = "nginx:broken".into());
    // The new pods never become ready.
    w.settle(false);
    let new = w.rs_with_image("nginx:broken").metadata.name;
    let d = w.deployment("web");
    assert_eq!(condition(&d, PROGRESSING), ("True".into(), REPLICA_SET_UPDATED.into(), format!("ReplicaSet \"{new}\" is progressing.")));
    let last_update = get_condition(&d.status, PROGRESSING).and_then(|c| c.last_update_time).expect("time");
    // With nothing changing, the controller asks to look again one second after the deadline.
    let Some(Action::RequeueAfter(after)) = w.last_then else { panic!("no requeue: {:?}", w.last_then) };
    assert_eq!(w.now + after, last_update + Duration::secs(31));
    w.now = w.now + after;
    w.run_dc();
    let d = w.deployment("web");
    assert_eq!(condition(&d, PROGRESSING), ("False".into(), TIMED_OUT.into(), format!("ReplicaSet \"{new}\" has timed out progressing.")));
    assert_eq!(w.last_then, Some(Action::AwaitChange));
    assert_eq!(condition(&d, AVAILABLE).0, "True", "the old pods still serve");
}

#[test]
fn a_paused_deployment_scales_but_does_not_roll_out() {
    let mut w = World::new();
    w.create_deployment(web(2, "nginx:1.14.2"));
    w.settle(true);
    w.edit_deployment("web", |d| {
        d.spec.paused = true;
        d.spec.template.spec.containers[0].image = "nginx:1.16.1".into();
        d.spec.replicas = Some(4);
    });
    w.settle(true);
    assert_eq!(w.replica_sets().len(), 1, "no rollout while paused");
    assert_eq!(w.replica_sets()[0].spec.replicas, Some(4));
    let d = w.deployment("web");
    assert_eq!(condition(&d, PROGRESSING), ("Unknown".into(), PAUSED.into(), "Deployment is paused".into()));
    w.edit_deployment("web", |d| d.spec.paused = false);
    w.settle(true);
    assert_eq!(w.rs_with_image("nginx:1.16.1").spec.replicas, Some(4));
    assert_eq!(condition(&w.deployment("web"), PROGRESSING).1, NEW_RS_AVAILABLE);
}

#[test]
fn a_taken_replica_set_name_bumps_the_collision_count() {
    let mut w = World::new();
    let d = web(1, "nginx:1.14.2");
    let hash = {
        let mut t = d.clone();
        defaults::default_deployment(&mut t);
        compute_hash(&t.spec.template, None)
    };
    // Someone else's ReplicaSet already has the name the new one would get.
    let metadata = ObjectMeta { name: format!("web-{hash}").into(), namespace: NS.into(), ..Default::default() };
    let mut squatter = ReplicaSet { metadata, ..Default::default() };
    squatter.spec.selector.match_labels.insert("app".into(), "other".into());
    squatter.spec.template.metadata.labels.insert("app".into(), "other".into());
    squatter.spec.template.spec.containers.push(Container { name: "x".into(), image: "busybox".into(), ..Default::default() });
    squatter.spec.replicas = Some(0);
    w.write(ApiRequest::Create(Object::ReplicaSet(squatter))).expect("squatter");
    w.create_deployment(d);
    w.settle(true);
    let d = w.deployment("web");
    assert_eq!(d.status.collision_count, Some(1));
    let ours = w.rs_with_image("nginx:1.14.2");
    assert_eq!(ours.metadata.name, format!("web-{}", compute_hash(&d.spec.template, Some(1))));
    assert_eq!(d.status.available_replicas, 1);
}

#[test]
fn a_failed_replica_set_create_is_reported_on_the_deployment() {
    let mut w = World::new();
    let mut d = web(1, "nginx:1.14.2");
    // A name so long that `<name>-<hash>` is no longer a valid object name.
    d.metadata.name = "w".repeat(250).into();
    d.metadata.uid = "uid".into();
    d.metadata.generation = 1;
    defaults::default_deployment(&mut d);
    let key = ObjectKey::new(Kind::Deployment, NS, &d.metadata.name);
    w.deps = Informer::from_objects(Kind::Deployment, [Object::Deployment(d)]);
    let first = w.dc.reconcile(&key, &caches!(w), w.now);
    assert!(w.serve(&key, first.steps), "the create fails validation");
    let retry = w.dc.reconcile(&key, &caches!(w), w.now);
    let report = &retry.steps[0][0];
    let ApiRequest::UpdateStatus(Object::Deployment(reported)) = &report.request else { panic!("{report:?}") };
    let (status, reason, message) = condition(reported, PROGRESSING);
    assert_eq!((status.as_str(), reason.as_str()), ("False", FAILED_RS_CREATE));
    assert!(message.starts_with(&format!("Failed to create new replica set \"{}-", "w".repeat(250))), "{message}");
    let event = report.on_success.as_ref().expect("event");
    assert_eq!((event.type_, event.reason.as_str()), ("Warning", FAILED_RS_CREATE));
}

#[test]
fn odd_objects_never_make_a_sync_panic() {
    let mut d = web(i32::MAX, "nginx");
    d.metadata.uid = "uid".into();
    d.metadata.generation = 3;
    d.metadata.annotations.insert(REVISION.into(), "not-a-number".into());
    d.spec.strategy.rolling_update = Some(RollingUpdateDeployment {
        max_surge: Some(IntOrString::String("170141183460469231731687303715884105727%".into())),
        max_unavailable: Some(IntOrString::String("x%".into())),
    });
    d.spec.progress_deadline_seconds = Some(i32::MIN);
    d.spec.revision_history_limit = Some(-5);
    let metadata = ObjectMeta {
        name: "web-odd".into(),
        namespace: NS.into(),
        uid: "rs".into(),
        labels: d.spec.template.metadata.labels.clone(),
        owner_references: vec![sync::controller_ref(&d)].into(),
        ..Default::default()
    };
    let mut rs = ReplicaSet { metadata, ..Default::default() };
    rs.metadata.annotations.insert(REVISION.into(), "99999999999999999999999".into());
    rs.metadata.annotations.insert(MAX_REPLICAS.into(), "-7".into());
    rs.metadata.annotations.insert(DESIRED_REPLICAS.into(), "0".into());
    rs.spec.replicas = Some(-3);
    rs.status.available_replicas = i32::MAX;
    let deps = Informer::from_objects(Kind::Deployment, [Object::Deployment(d.clone())]);
    let rss = Informer::from_objects(Kind::ReplicaSet, [Object::ReplicaSet(rs)]);
    let pods = Informer::from_objects(Kind::Pod, []);
    let caches = Caches::new([pods.store(), rss.store(), deps.store()]);
    for strategy in [ROLLING_UPDATE, RECREATE, "Bogus"] {
        let mut odd = d.clone();
        odd.spec.strategy.type_ = Some(strategy.into());
        let deps = Informer::from_objects(Kind::Deployment, [Object::Deployment(odd)]);
        let caches = Caches::new([pods.store(), rss.store(), deps.store()]);
        let _ = DeploymentController::new().reconcile(&dkey("web"), &caches, Time(u64::MAX - 1));
    }
    assert!(DeploymentController::new().reconcile(&dkey("absent"), &caches, Time(0)).steps.is_empty());
}

#[test]
fn the_annotation_check_agrees_with_setting_them() {
    let mut d = web(3, "nginx:1.14.2");
    d.metadata.annotations.insert("kubernetes.io/change-cause".into(), "image 1.14.2".into());
    d.metadata.annotations.insert(REVISION.into(), "7".into());
    // The ReplicaSet's annotations, the new revision, and whether nothing would change.
    type Case = (&'static [(&'static str, &'static str)], i64, bool);
    let cases: [Case; 6] = [
        (&[("kubernetes.io/change-cause", "image 1.14.2"), (REVISION, "3")], 3, true),
        (&[("kubernetes.io/change-cause", "image 1.14.2"), (REVISION, "3")], 4, false),
        (&[("kubernetes.io/change-cause", "image 1.14.1"), (REVISION, "3")], 3, false),
        (&[(REVISION, "3")], 2, false),
        (&[("kubernetes.io/change-cause", "image 1.14.2"), (REVISION, "three")], 9, true),
        (&[("kubernetes.io/change-cause", "image 1.14.2")], 1, false),
    ];
    for (annotations, new_revision, current) in cases {
        let mut rs = ReplicaSet::default();
        rs.metadata.annotations = annotations.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        assert_eq!(sync::new_replica_set_annotations_current(&d, &rs, new_revision), current, "{annotations:?} at {new_revision}");
        let before = rs.metadata.annotations.clone();
        set_new_replica_set_annotations(&d, &mut rs, new_revision, true);
        assert_eq!(rs.metadata.annotations == before, current, "{annotations:?} at {new_revision}");
    }
}
