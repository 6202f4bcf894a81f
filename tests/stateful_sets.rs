//! Reference behaviours of the StatefulSet controller (pkg/controller/statefulset), one test
//! each, with upstream's names, labels, event messages and status counts. Every run checks the
//! invariants after every step.

use kubeloop::api::{ApiRequest, DeleteRequest};
use kubeloop::model::*;
use kubeloop::sim::{NodeConfig, Sim};

fn cluster(nodes: usize) -> Sim {
    let mut sim = Sim::new(5);
    sim.check_invariants_every_step();
    for i in 1..=nodes {
        sim.add_node(NodeConfig::new(&format!("node-{i}"))).unwrap();
    }
    sim.settle(Duration::secs(30)).unwrap();
    sim
}

/// The documentation's `web` StatefulSet (nginx behind the headless Service `nginx`), without
/// its volume claims, with `extra` lines appended to its spec.
fn web_yaml(replicas: i32, image: &str, extra: &str) -> String {
    format!(
        "apiVersion: apps/v1\nkind: StatefulSet\nmetadata: {{name: web}}\nspec:\n  serviceName: nginx\n  replicas: {replicas}\n  selector: {{matchLabels: {{app: nginx}}}}\n  template:\n    metadata: {{labels: {{app: nginx}}}}\n    spec:\n      containers:\n      - name: nginx\n        image: {image}\n        resources: {{requests: {{cpu: 100m, memory: 64Mi}}}}\n{extra}"
    )
}

fn object(yaml: &str) -> Object {
    Object::from_json(yaml_serde::from_str(yaml).unwrap()).unwrap()
}

fn with_web(replicas: i32, extra: &str) -> Sim {
    let mut sim = cluster(2);
    sim.submit(ApiRequest::Create(object(&web_yaml(replicas, "registry.k8s.io/nginx-slim:0.21", extra)))).unwrap();
    sim.settle(Duration::mins(3)).unwrap();
    sim
}

fn set(sim: &Sim) -> StatefulSet {
    sim.api().get(&ObjectKey::new(Kind::StatefulSet, "default", "web")).and_then(|o| o.as_stateful_set()).cloned().expect("web exists")
}

fn pod(sim: &Sim, name: &str) -> Option<Pod> {
    sim.api().get(&ObjectKey::new(Kind::Pod, "default", name)).and_then(|o| o.as_pod()).cloned()
}

fn pod_names(sim: &Sim) -> Vec<String> {
    sim.objects(Kind::Pod).map(|o| o.meta().name.to_string()).collect()
}

/// The StatefulSet's events of `reason`, oldest first.
fn messages(sim: &Sim, reason: &str) -> Vec<String> {
    let mut out: Vec<Event> = sim
        .objects(Kind::Event)
        .filter_map(|o| o.as_event().cloned())
        .filter(|e| e.reason == reason && e.involved_object.kind == "StatefulSet")
        .collect();
    out.sort_by_key(|e| (e.first_timestamp, e.metadata.name.clone()));
    out.into_iter().map(|e| e.message.to_string()).collect()
}

fn update(sim: &mut Sim, change: impl FnOnce(&mut StatefulSet)) {
    let mut next = set(sim);
    change(&mut next);
    sim.submit(ApiRequest::Update(Object::StatefulSet(next))).unwrap();
}

fn revision_label(p: &Pod) -> String {
    p.metadata.labels.get("controller-revision-hash").cloned().unwrap_or_default()
}

fn assert_invariants(sim: &Sim) {
    assert!(sim.violations().is_empty(), "{:?}", sim.violations());
}

#[test]
fn ordered_ready_creates_web_0_and_waits_for_it_to_be_running_and_ready_before_web_1() {
    let sim = with_web(3, "");
    let (p0, p1, p2) = (pod(&sim, "web-0").unwrap(), pod(&sim, "web-1").unwrap(), pod(&sim, "web-2").unwrap());
    assert!(p1.metadata.creation_timestamp >= p0.ready_since(), "web-1 made only once web-0 was Ready");
    assert!(p2.metadata.creation_timestamp >= p1.ready_since(), "web-2 made only once web-1 was Ready");
    assert_eq!(
        messages(&sim, "SuccessfulCreate"),
        [
            "create Pod web-0 in StatefulSet web successful",
            "create Pod web-1 in StatefulSet web successful",
            "create Pod web-2 in StatefulSet web successful"
        ]
    );
    let labels = &p1.metadata.labels;
    assert_eq!(labels.get("statefulset.kubernetes.io/pod-name").map(String::as_str), Some("web-1"));
    assert_eq!(labels.get("apps.kubernetes.io/pod-index").map(String::as_str), Some("1"));
    let st = set(&sim).status;
    assert!(revision_label(&p1).starts_with("web-") && revision_label(&p1) == st.update_revision);
    assert_eq!((p1.spec.hostname.as_deref(), p1.spec.subdomain.as_deref()), (Some("web-1"), Some("nginx")));
    assert_eq!(p1.metadata.controller_ref().map(|r| (r.kind.as_str(), r.name.as_str())), Some(("StatefulSet", "web")));
    assert_eq!(
        (st.replicas, st.ready_replicas, st.current_replicas, st.updated_replicas, st.available_replicas, st.observed_generation),
        (3, 3, 3, 3, 3, 1)
    );
    assert_eq!((st.current_revision == st.update_revision, st.collision_count), (true, Some(0)));
    let revisions: Vec<ControllerRevision> =
        sim.objects(Kind::ControllerRevision).filter_map(|o| o.as_controller_revision().cloned()).collect();
    assert_eq!(revisions.len(), 1);
    assert_eq!((revisions[0].metadata.name.as_str(), revisions[0].revision), (st.update_revision.as_str(), 1));
    assert_invariants(&sim);
}

#[test]
fn parallel_pod_management_creates_every_pod_without_waiting() {
    let sim = with_web(3, "  podManagementPolicy: Parallel\n");
    let created: Vec<Time> =
        ["web-0", "web-1", "web-2"].iter().map(|n| pod(&sim, n).unwrap().metadata.creation_timestamp.unwrap()).collect();
    let first_ready = ["web-0", "web-1", "web-2"].iter().filter_map(|n| pod(&sim, n).unwrap().ready_since()).min().unwrap();
    assert!(created.iter().all(|t| *t < first_ready), "all three made before any was Ready: {created:?} vs {first_ready:?}");
    assert_eq!(set(&sim).status.ready_replicas, 3);
    assert_invariants(&sim);
}

#[test]
fn scaling_down_removes_the_highest_ordinal_first_one_at_a_time() {
    let mut sim = with_web(3, "");
    update(&mut sim, |s| s.spec.replicas = Some(1));
    // Step until web-2 is going: web-1 must still be untouched then.
    let mut saw_web_2_going_alone = false;
    for _ in 0..2000 {
        sim.advance(Duration::millis(50));
        let going_2 = pod(&sim, "web-2").is_none_or(|p| p.metadata.is_deleting());
        let going_1 = pod(&sim, "web-1").is_none_or(|p| p.metadata.is_deleting());
        if going_2 && !going_1 && pod(&sim, "web-2").is_some() {
            saw_web_2_going_alone = true;
        }
        if going_1 {
            assert!(pod(&sim, "web-2").is_none(), "web-1 deleted only once web-2 is gone");
            break;
        }
    }
    assert!(saw_web_2_going_alone);
    sim.settle(Duration::mins(3)).unwrap();
    assert_eq!(pod_names(&sim), ["web-0"]);
    assert_eq!(
        messages(&sim, "SuccessfulDelete"),
        ["delete Pod web-2 in StatefulSet web successful", "delete Pod web-1 in StatefulSet web successful"]
    );
    assert_eq!((set(&sim).status.replicas, set(&sim).status.ready_replicas), (1, 1));
    assert_invariants(&sim);
}

#[test]
fn a_deleted_pod_comes_back_under_the_same_name() {
    let mut sim = with_web(2, "");
    let old = pod(&sim, "web-1").unwrap();
    sim.submit(ApiRequest::Delete(DeleteRequest::new(ObjectKey::new(Kind::Pod, "default", "web-1")))).unwrap();
    sim.settle(Duration::mins(3)).unwrap();
    let new = pod(&sim, "web-1").expect("web-1 again");
    assert_ne!(new.metadata.uid, old.metadata.uid);
    assert!(new.is_ready());
    assert_eq!(pod_names(&sim), ["web-0", "web-1"]);
    assert_invariants(&sim);
}

#[test]
fn a_rolling_update_replaces_pods_from_the_highest_ordinal_down_to_the_partition() {
    let mut sim = with_web(3, "");
    let old = set(&sim).status.current_revision;
    update(&mut sim, |s| {
        s.spec.update_strategy.rolling_update = Some(RollingUpdateStatefulSetStrategy { partition: Some(1) });
        s.spec.template.spec.containers[0].image = "registry.k8s.io/nginx-slim:0.24".into();
    });
    sim.settle(Duration::mins(5)).unwrap();
    let st = set(&sim).status;
    assert_ne!(st.update_revision, old);
    assert_eq!(st.current_revision, old, "a partitioned rollout leaves the current revision");
    assert_eq!(revision_label(&pod(&sim, "web-0").unwrap()), old, "below the partition: untouched");
    for name in ["web-1", "web-2"] {
        let p = pod(&sim, name).unwrap();
        assert_eq!(revision_label(&p), st.update_revision);
        assert_eq!(p.spec.containers[0].image, "registry.k8s.io/nginx-slim:0.24");
    }
    assert_eq!((st.current_replicas, st.updated_replicas, st.ready_replicas), (1, 2, 3));
    assert_eq!(
        messages(&sim, "SuccessfulDelete"),
        ["delete Pod web-2 in StatefulSet web successful", "delete Pod web-1 in StatefulSet web successful"]
    );
    // The partition at 0 finishes the rollout, and the update revision becomes the current one.
    update(&mut sim, |s| s.spec.update_strategy.rolling_update = Some(RollingUpdateStatefulSetStrategy { partition: Some(0) }));
    sim.settle(Duration::mins(5)).unwrap();
    let st = set(&sim).status;
    assert_eq!(revision_label(&pod(&sim, "web-0").unwrap()), st.update_revision);
    assert_eq!((st.current_revision == st.update_revision, st.current_replicas, st.updated_replicas), (true, 3, 3));
    assert_invariants(&sim);
}

#[test]
fn on_delete_replaces_a_pod_only_when_it_is_deleted() {
    let mut sim = with_web(2, "  updateStrategy: {type: OnDelete}\n");
    let old = set(&sim).status.current_revision;
    update(&mut sim, |s| s.spec.template.spec.containers[0].image = "registry.k8s.io/nginx-slim:0.24".into());
    sim.settle(Duration::mins(3)).unwrap();
    assert!(["web-0", "web-1"].iter().all(|n| revision_label(&pod(&sim, n).unwrap()) == old));
    sim.submit(ApiRequest::Delete(DeleteRequest::new(ObjectKey::new(Kind::Pod, "default", "web-0")))).unwrap();
    sim.settle(Duration::mins(3)).unwrap();
    let st = set(&sim).status;
    assert_eq!(revision_label(&pod(&sim, "web-0").unwrap()), st.update_revision);
    assert_eq!(revision_label(&pod(&sim, "web-1").unwrap()), old);
    assert_eq!((st.current_replicas, st.updated_replicas), (1, 1));
    assert_invariants(&sim);
}

#[test]
fn min_ready_seconds_holds_the_next_ordinal_until_the_last_one_is_available() {
    let mut sim = with_web(2, "  minReadySeconds: 10\n");
    // `settle` does not wait for a delayed requeue: the clock must run past minReadySeconds.
    sim.advance(Duration::secs(60));
    let (p0, p1) = (pod(&sim, "web-0").unwrap(), pod(&sim, "web-1").unwrap());
    let available_at = p0.ready_since().unwrap() + Duration::secs(10);
    assert!(
        p1.metadata.creation_timestamp >= Some(available_at),
        "web-1 made {:?}, web-0 available {available_at:?}",
        p1.metadata.creation_timestamp
    );
    assert_eq!(set(&sim).status.available_replicas, 2);
    assert_invariants(&sim);
}

#[test]
fn a_selector_that_does_not_match_the_template_and_a_negative_partition_get_the_api_servers_messages() {
    let mut sim = cluster(1);
    let bad = web_yaml(1, "nginx", "  updateStrategy: {type: RollingUpdate, rollingUpdate: {partition: -1}}\n")
        .replace("{matchLabels: {app: nginx}}", "{matchLabels: {app: other}}");
    let err = sim.submit(ApiRequest::Create(object(&bad))).unwrap_err();
    assert_eq!(
        err.message,
        "StatefulSet.apps \"web\" is invalid: [spec.updateStrategy.rollingUpdate.partition: Invalid value: -1: must be greater than or equal to 0, spec.template.metadata.labels: Invalid value: map[string]string{\"app\":\"nginx\"}: `selector` does not match template `labels`]"
    );
}

/// `web` with the documentation's claim template `www` (1Gi, ReadWriteOnce) of `class`, if any.
fn with_claims(replicas: i32, class: Option<&str>) -> Sim {
    let class = class.map(|c| format!("      storageClassName: {c}\n")).unwrap_or_default();
    let extra = format!(
        "  volumeClaimTemplates:\n  - metadata: {{name: www}}\n    spec:\n      accessModes: [ReadWriteOnce]\n      resources: {{requests: {{storage: 1Gi}}}}\n{class}"
    );
    let mut yaml = web_yaml(replicas, "registry.k8s.io/nginx-slim:0.21", &extra);
    yaml = yaml.replace(
        "resources: {requests: {cpu: 100m, memory: 64Mi}}\n",
        "resources: {requests: {cpu: 100m, memory: 64Mi}}\n        volumeMounts: [{name: www, mountPath: /usr/share/nginx/html}]\n",
    );
    let mut sim = cluster(2);
    sim.submit(ApiRequest::Create(object(&yaml))).unwrap();
    sim.settle(Duration::mins(3)).unwrap();
    sim
}

fn claim(sim: &Sim, name: &str) -> Option<PersistentVolumeClaim> {
    sim.api().get(&ObjectKey::new(Kind::PersistentVolumeClaim, "default", name)).and_then(|o| o.as_persistent_volume_claim()).cloned()
}

#[test]
fn each_pod_gets_its_claim_from_the_default_class_bound_before_the_pod_runs() {
    let sim = with_claims(2, None);
    for ordinal in 0..2 {
        let pvc = claim(&sim, &format!("www-web-{ordinal}")).expect("the claim");
        assert_eq!((pvc.phase(), pvc.spec.storage_class_name.as_deref()), ("Bound", Some("standard")), "DefaultStorageClass admission");
        let pv = sim
            .api()
            .get(&ObjectKey::new(Kind::PersistentVolume, "", &pvc.spec.volume_name))
            .and_then(|o| o.as_persistent_volume())
            .cloned()
            .unwrap();
        assert_eq!(pv.metadata.name.as_str(), format!("pvc-{}", pvc.metadata.uid));
        assert_eq!((pv.phase(), pv.spec.persistent_volume_reclaim_policy.as_deref()), ("Bound", Some("Delete")));
        assert_eq!(pvc.metadata.labels.get("app").map(String::as_str), Some("nginx"), "labelled with the selector");
        let p = pod(&sim, &format!("web-{ordinal}")).unwrap();
        let volume = p.spec.volumes.iter().find(|v| v.name == "www").and_then(|v| v.persistent_volume_claim.clone()).unwrap();
        assert_eq!(volume.claim_name, format!("www-web-{ordinal}"));
        assert!(p.is_ready());
        assert!(pvc.metadata.creation_timestamp <= p.metadata.creation_timestamp, "the claim is created before its pod");
    }
    assert_eq!(
        messages(&sim, "SuccessfulCreate")[..2],
        ["create Claim www-web-0 Pod web-0 in StatefulSet web success", "create Pod web-0 in StatefulSet web successful"]
    );
    let provisioned =
        sim.objects(Kind::Event).filter_map(|o| o.as_event().cloned()).filter(|e| e.reason == "ProvisioningSucceeded").count();
    assert_eq!(provisioned, 2);
    assert_invariants(&sim);
}

#[test]
fn claims_stay_after_scale_down_and_the_pod_that_returns_gets_the_same_one() {
    let mut sim = with_claims(2, None);
    let volume = claim(&sim, "www-web-1").unwrap().spec.volume_name;
    update(&mut sim, |s| s.spec.replicas = Some(1));
    sim.settle(Duration::mins(3)).unwrap();
    assert!(pod(&sim, "web-1").is_none());
    assert_eq!(claim(&sim, "www-web-1").map(|c| c.phase().to_string()).as_deref(), Some("Bound"), "Retain: the claim stays");
    update(&mut sim, |s| s.spec.replicas = Some(2));
    sim.settle(Duration::mins(3)).unwrap();
    assert!(pod(&sim, "web-1").unwrap().is_ready());
    assert_eq!(claim(&sim, "www-web-1").unwrap().spec.volume_name, volume, "the same volume");
    assert_invariants(&sim);
}

#[test]
fn a_claim_of_an_unknown_class_stays_pending_and_the_pod_with_it() {
    let sim = with_claims(2, Some("fast"));
    let pvc = claim(&sim, "www-web-0").unwrap();
    assert_eq!(pvc.phase(), "Pending");
    let failed: Vec<Event> =
        sim.objects(Kind::Event).filter_map(|o| o.as_event().cloned()).filter(|e| e.reason == "ProvisioningFailed").collect();
    assert_eq!(failed[0].message.as_str(), "storageclass.storage.k8s.io \"fast\" not found");
    assert_eq!(failed[0].type_.as_str(), "Warning");
    let p = pod(&sim, "web-0").unwrap();
    assert_eq!(p.phase(), PodPhase::Pending);
    assert!(p.node_name().is_none());
    let scheduling: Vec<Event> =
        sim.objects(Kind::Event).filter_map(|o| o.as_event().cloned()).filter(|e| e.reason == "FailedScheduling").collect();
    assert_eq!(
        scheduling[0].message.as_str(),
        "0/2 nodes are available: pod has unbound immediate PersistentVolumeClaims. preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling."
    );
    assert!(pod(&sim, "web-1").is_none(), "OrderedReady: web-1 waits for web-0");
    assert_invariants(&sim);
}

#[test]
fn a_claim_deleted_while_its_pod_runs_stays_terminating_until_the_pod_is_gone() {
    let mut sim = with_claims(1, None);
    let volume = claim(&sim, "www-web-0").unwrap().spec.volume_name;
    assert_eq!(claim(&sim, "www-web-0").unwrap().metadata.finalizers, ["kubernetes.io/pvc-protection"]);
    sim.submit(ApiRequest::Delete(DeleteRequest::new(ObjectKey::new(Kind::PersistentVolumeClaim, "default", "www-web-0")))).unwrap();
    sim.settle(Duration::mins(1)).unwrap();
    let held = claim(&sim, "www-web-0").expect("held by its finalizer while web-0 mounts it");
    assert!(held.metadata.is_deleting());
    // The StatefulSet goes (its pods with it): nothing mounts the claim, so it goes, and its
    // volume (Delete) after it.
    sim.submit(ApiRequest::Delete(DeleteRequest::new(ObjectKey::new(Kind::StatefulSet, "default", "web")))).unwrap();
    sim.settle(Duration::mins(2)).unwrap();
    assert!(claim(&sim, "www-web-0").is_none());
    assert!(sim.api().get(&ObjectKey::new(Kind::PersistentVolume, "", &volume)).is_none(), "released and deleted");
    assert_invariants(&sim);
}
