//! The lesson's worked example, as a real cluster plays it: a Deployment of three nginx replicas
//! on two nodes; one pod is deleted by hand; the room of loops replaces it.

use kubeloop::api::{ApiRequest, DeleteRequest};
use kubeloop::model::*;
use kubeloop::sim::{NodeConfig, Sim};

const DEPLOYMENT: &str = "apiVersion: apps/v1
kind: Deployment
metadata: {name: web, labels: {app: web}}
spec:
  replicas: 3
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - name: nginx
        image: nginx:1.14.2
        ports: [{containerPort: 80}]
        resources: {requests: {cpu: 100m, memory: 128Mi}}
";

fn cluster(seed: u64) -> Sim {
    let mut sim = Sim::new(seed);
    sim.check_invariants_every_step();
    for n in ["node-1", "node-2"] {
        sim.add_node(NodeConfig::new(n)).unwrap();
    }
    let d = Object::from_json(yaml_serde::from_str(DEPLOYMENT).unwrap()).unwrap();
    sim.submit(ApiRequest::Create(d)).unwrap();
    sim.settle(Duration::mins(2)).unwrap();
    sim
}

fn running_pods(sim: &Sim) -> Vec<Pod> {
    sim.objects(Kind::Pod).filter_map(|o| o.as_pod().cloned()).filter(|p| p.phase() == PodPhase::Running && p.is_ready()).collect()
}

/// Events about `pod`, oldest first: (first timestamp, reason).
fn events_of(sim: &Sim, pod: &str) -> Vec<(Time, String)> {
    let mut out: Vec<(Time, String)> = sim
        .objects(Kind::Event)
        .filter_map(|o| o.as_event().cloned())
        .filter(|e| e.involved_object.name == pod || e.message.ends_with(pod) || e.message.contains(&format!("/{pod} ")))
        .map(|e| (e.first_timestamp.unwrap_or_default(), e.reason.to_string()))
        .collect();
    out.sort();
    out
}

#[test]
fn three_replicas_come_up_running_across_both_nodes() {
    let sim = cluster(11);
    let pods = running_pods(&sim);
    assert_eq!(pods.len(), 3);
    let nodes: std::collections::BTreeSet<&str> = pods.iter().filter_map(|p| p.node_name()).collect();
    assert_eq!(nodes.len(), 2, "the default spreading puts them on both nodes");
    let d = sim.objects(Kind::Deployment).next().unwrap().as_deployment().unwrap().clone();
    assert_eq!((d.status.replicas, d.status.ready_replicas, d.status.available_replicas), (3, 3, 3));
    assert!(sim.violations().is_empty(), "{:?}", sim.violations());
}

#[test]
fn a_deleted_pod_is_replaced_through_the_whole_chain_in_about_a_second() {
    let mut sim = cluster(11);
    let victim = running_pods(&sim)[0].metadata.name.clone();
    let deleted_at = sim.now();
    sim.submit(ApiRequest::Delete(DeleteRequest::new(ObjectKey::new(Kind::Pod, "default", &victim)))).unwrap();
    // A terminating pod is not active: the replacement is created at once, so for a moment
    // four pods exist.
    sim.advance(Duration::millis(200));
    assert_eq!(sim.objects(Kind::Pod).count(), 4);
    sim.settle(Duration::mins(2)).unwrap();
    let pods = running_pods(&sim);
    assert_eq!(pods.len(), 3);
    let replacement = pods.iter().find(|p| p.metadata.creation_timestamp.is_some_and(|t| t >= deleted_at)).expect("a new pod");
    let name = replacement.metadata.name.clone();
    let chain = events_of(&sim, &name);
    let reasons: Vec<&str> = chain.iter().map(|(_, r)| r.as_str()).collect();
    assert_eq!(reasons, ["SuccessfulCreate", "Scheduled", "Pulled", "Created", "Started"], "{chain:?}");
    let started = chain.last().unwrap().0;
    let took = started.since(deleted_at);
    assert!(took <= Duration::millis(1500), "delete to Started took {took}");
    let killing = events_of(&sim, &victim).into_iter().any(|(_, r)| r == "Killing");
    assert!(killing, "the kubelet stops the deleted pod's container");
    assert!(sim.objects(Kind::Pod).all(|p| p.meta().name != victim), "the deleted pod leaves the store");
    assert!(sim.violations().is_empty(), "{:?}", sim.violations());
}
