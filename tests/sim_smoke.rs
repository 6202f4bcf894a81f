//! A first end-to-end check of the loop: a ReplicaSet claim turns into pods through the
//! API server, watches and the ReplicaSet controller, and a deleted pod is replaced.

use kubeloop::api::{ApiRequest, DeleteRequest};
use kubeloop::model::*;
use kubeloop::sim::{NodeConfig, Sim};

fn replica_set(replicas: i32) -> Object {
    let yaml = format!(
        "apiVersion: apps/v1\nkind: ReplicaSet\nmetadata: {{name: web}}\nspec:\n  replicas: {replicas}\n  selector: {{matchLabels: {{app: web}}}}\n  template:\n    metadata: {{labels: {{app: web}}}}\n    spec: {{containers: [{{name: nginx, image: nginx:1.14.2}}]}}\n"
    );
    Object::from_json(yaml_serde::from_str(&yaml).unwrap()).unwrap()
}

/// A cluster with its control plane and two nodes.
fn cluster(seed: u64) -> Sim {
    let mut sim = Sim::new(seed);
    sim.check_invariants_every_step();
    for name in ["node-1", "node-2"] {
        sim.add_node(NodeConfig::new(name)).unwrap();
    }
    sim
}

fn pods(sim: &Sim) -> Vec<Pod> {
    sim.objects(Kind::Pod).filter_map(|o| o.as_pod().cloned()).collect()
}

#[test]
fn a_replica_set_claim_becomes_pods_and_a_deleted_pod_is_replaced() {
    let mut sim = cluster(1);
    sim.submit(ApiRequest::Create(replica_set(3))).unwrap();
    sim.settle(Duration::secs(10)).unwrap();
    let before = pods(&sim);
    assert_eq!(before.len(), 3);
    assert!(before.iter().all(|p| p.metadata.name.starts_with("web-") && p.metadata.name.len() == 9));
    let victim = before[0].metadata.name.clone();
    sim.submit(ApiRequest::Delete(DeleteRequest::new(ObjectKey::new(Kind::Pod, "default", &victim)))).unwrap();
    sim.settle(Duration::secs(10)).unwrap();
    let after = pods(&sim);
    assert_eq!(after.len(), 3);
    assert!(after.iter().all(|p| p.metadata.name != victim));
    let reasons: Vec<String> = sim.objects(Kind::Event).filter_map(|o| o.as_event().map(|e| e.reason.to_string())).collect();
    assert_eq!(reasons.iter().filter(|r| *r == "SuccessfulCreate").count(), 4);
    assert!(sim.violations().is_empty(), "{:?}", sim.violations());
}

#[test]
fn a_severed_watch_resumes_and_a_compacted_one_relists_then_the_controller_still_converges() {
    use kubeloop::sim::ComponentId;
    let mut sim = cluster(2);
    sim.submit(ApiRequest::Create(replica_set(2))).unwrap();
    sim.settle(Duration::secs(10)).unwrap();
    // Cut the controller manager off, change the world behind its back, compact the history it
    // would need, then let it reconnect: it must re-list (410 Gone) and still close the gap.
    sim.sever_watches(Some(&ComponentId::ControllerManager));
    let victim = pods(&sim)[0].metadata.name.clone();
    sim.submit(ApiRequest::Delete(DeleteRequest::new(ObjectKey::new(Kind::Pod, "default", &victim)))).unwrap();
    sim.compact();
    sim.settle(Duration::secs(60)).unwrap();
    let after = pods(&sim);
    assert_eq!(after.len(), 2);
    assert!(after.iter().all(|p| p.metadata.name != victim));
    let gone = sim.trace().recent().filter(|m| m.what.starts_with("410")).count();
    assert!(gone >= 1, "the re-watch from a compacted revision answers 410 Gone");
    assert!(sim.violations().is_empty(), "{:?}", sim.violations());
}

#[test]
fn a_deployment_claim_becomes_a_replica_set_and_its_pods() {
    let yaml = "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec:\n  replicas: 3\n  selector: {matchLabels: {app: web}}\n  template:\n    metadata: {labels: {app: web}}\n    spec: {containers: [{name: nginx, image: nginx:1.14.2}]}\n";
    let mut sim = cluster(3);
    sim.submit(ApiRequest::Create(Object::from_json(yaml_serde::from_str(yaml).unwrap()).unwrap())).unwrap();
    sim.settle(Duration::secs(30)).unwrap();
    let rs: Vec<ReplicaSet> = sim.objects(Kind::ReplicaSet).filter_map(|o| o.as_replica_set().cloned()).collect();
    assert_eq!(rs.len(), 1);
    let hash = rs[0].metadata.labels.get("pod-template-hash").cloned().unwrap();
    assert_eq!(rs[0].metadata.name, format!("web-{hash}"));
    assert_eq!(pods(&sim).len(), 3);
    assert!(pods(&sim).iter().all(|p| p.metadata.name.starts_with(&format!("web-{hash}-"))));
    let scaled: Vec<String> = sim
        .objects(Kind::Event)
        .filter_map(|o| o.as_event().filter(|e| e.reason == "ScalingReplicaSet").map(|e| e.message.to_string()))
        .collect();
    assert_eq!(scaled, vec![format!("Scaled up replica set web-{hash} from 0 to 3")]);
    assert!(sim.violations().is_empty(), "{:?}", sim.violations());
}

/// On every seed the default scenario's claim becomes three Running pods. A watch's first events
/// must never overtake the response that opened it: when they did, an informer dropped the
/// ReplicaSet's ADDED event (seed 6), the cluster "settled" with no pods and never healed.
#[test]
fn on_every_seed_the_default_scenario_converges() {
    use kubeloop::command::{Scenario, Session};
    for seed in 0..64 {
        let mut s = Session::new(Scenario::builtin("default").expect("default scenario"), Some(seed)).expect("starts");
        s.sim_mut().check_invariants_every_step();
        let settled = s.settle(Duration::mins(2));
        assert!(settled.is_ok(), "seed {seed} never settled");
        let running = pods(s.sim()).iter().filter(|p| p.phase().as_str() == "Running" && p.is_ready()).count();
        assert_eq!(running, 3, "seed {seed}");
        assert_eq!(s.sim().violations(), &[] as &[String], "seed {seed}");
    }
}
