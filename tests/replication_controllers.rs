//! The ReplicationController, run by the ReplicaSet controller's loop (pkg/controller/replication):
//! the pods it makes name it as their controller, it adopts matching orphans, and its status is
//! written on the ReplicationController itself. Invariants are checked after every step.

use kubeloop::api::ApiRequest;
use kubeloop::model::*;
use kubeloop::sim::{NodeConfig, Sim};

const RC: &str = "apiVersion: v1\nkind: ReplicationController\nmetadata: {name: nginx}\nspec:\n  replicas: 3\n  selector: {app: nginx}\n  template:\n    metadata: {labels: {app: nginx}}\n    spec:\n      containers: [{name: nginx, image: nginx}]\n";

fn cluster() -> Sim {
    let mut sim = Sim::new(3);
    sim.check_invariants_every_step();
    sim.add_node(NodeConfig::new("node-1")).unwrap();
    sim
}

fn create(sim: &mut Sim, yaml: &str) {
    sim.submit(ApiRequest::Create(Object::from_json(yaml_serde::from_str(yaml).unwrap()).unwrap())).unwrap();
}

fn nginx_pods(sim: &Sim) -> Vec<Pod> {
    sim.objects(Kind::Pod)
        .filter_map(|o| o.as_pod().cloned())
        .filter(|p| p.metadata.labels.get("app").is_some_and(|v| v == "nginx"))
        .collect()
}

#[test]
fn its_pods_name_it_as_their_controller_and_its_status_counts_them() {
    let mut sim = cluster();
    create(&mut sim, RC);
    sim.settle(Duration::mins(1)).unwrap();
    let rc = sim
        .api()
        .get(&ObjectKey::new(Kind::ReplicationController, "default", "nginx"))
        .and_then(|o| o.as_replication_controller().cloned())
        .unwrap();
    let pods = nginx_pods(&sim);
    assert_eq!(pods.len(), 3);
    for pod in &pods {
        let owner = pod.metadata.controller_ref().expect("a controller reference");
        assert_eq!(
            (owner.api_version.as_str(), owner.kind.as_str(), owner.uid.as_str()),
            ("v1", "ReplicationController", rc.metadata.uid.as_str())
        );
        assert!(pod.metadata.name.starts_with("nginx-"));
    }
    assert_eq!((rc.status.replicas, rc.status.ready_replicas, rc.status.available_replicas), (3, 3, 3));
    assert_eq!(rc.status.observed_generation, rc.metadata.generation);
}

#[test]
fn it_adopts_a_matching_orphan_and_makes_only_the_rest() {
    let mut sim = cluster();
    create(
        &mut sim,
        "apiVersion: v1\nkind: Pod\nmetadata: {name: stray, labels: {app: nginx}}\nspec:\n  containers: [{name: nginx, image: nginx}]\n",
    );
    sim.settle(Duration::secs(30)).unwrap();
    create(&mut sim, RC);
    sim.settle(Duration::mins(1)).unwrap();
    let pods = nginx_pods(&sim);
    assert_eq!(pods.len(), 3, "the orphan counts as one of the three");
    let stray = pods.iter().find(|p| p.metadata.name == "stray").expect("the orphan is kept");
    assert_eq!(stray.metadata.controller_ref().map(|r| r.kind.as_str()), Some("ReplicationController"));
}

/// The invariant checker knows a ReplicationController as an owner: its pods, alive for longer
/// than the garbage collector's grace, are not reported as having outlived it (the fault
/// schedules' ReplicationController had every seed fail so).
#[test]
fn its_pods_are_owned_for_the_invariants_too() {
    let mut sim = cluster();
    create(&mut sim, RC);
    sim.advance(Duration::mins(3));
    assert_eq!(nginx_pods(&sim).len(), 3);
    assert_eq!(sim.violations().first(), None);
}
