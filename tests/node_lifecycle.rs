//! A node's kubelet stops: the node lifecycle controller's timeline with the real numbers
//! (grace 50 s, monitor 5 s, tolerationSeconds 300 s), the taint eviction controller replacing
//! its pods elsewhere, and the recovery when the kubelet comes back.

use kubeloop::api::ApiRequest;
use kubeloop::model::*;
use kubeloop::sim::{ComponentId, NodeConfig, Sim};

fn cluster(nodes: usize) -> Sim {
    let mut sim = Sim::new(7);
    sim.check_invariants_every_step();
    for i in 1..=nodes {
        sim.add_node(NodeConfig::new(&format!("node-{i}"))).expect("node added");
    }
    sim.settle(Duration::secs(30)).expect("settled");
    sim
}

fn deploy(sim: &mut Sim, name: &str, replicas: i32) {
    let yaml = format!(
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {{name: {name}}}\nspec:\n  replicas: {replicas}\n  selector: {{matchLabels: {{app: {name}}}}}\n  template:\n    metadata: {{labels: {{app: {name}}}}}\n    spec:\n      containers:\n      - name: nginx\n        image: nginx:1.14.2\n        resources: {{requests: {{cpu: 100m, memory: 64Mi}}}}\n"
    );
    let object = Object::from_json(yaml_serde::from_str(&yaml).expect("yaml")).expect("object");
    sim.submit(ApiRequest::Create(object)).expect("created");
    sim.settle(Duration::mins(2)).expect("settled");
}

fn node(sim: &Sim, name: &str) -> Node {
    sim.api().get(&ObjectKey::new(Kind::Node, "", name)).and_then(|o| o.as_node().cloned()).expect("node exists")
}

fn lease_renewed_at(sim: &Sim, name: &str) -> Option<Time> {
    let key = ObjectKey::new(Kind::Lease, "kube-node-lease", name);
    sim.api().get(&key).and_then(|o| o.as_lease()?.spec.renew_time).map(|t| t.0)
}

fn pods_on(sim: &Sim, node: &str) -> Vec<Pod> {
    sim.objects(Kind::Pod).filter_map(|o| o.as_pod().cloned()).filter(|p| p.node_name() == Some(node)).collect()
}

fn events(sim: &Sim, reason: &str) -> Vec<Event> {
    let mut out: Vec<Event> = sim.objects(Kind::Event).filter_map(|o| o.as_event().cloned()).filter(|e| e.reason == reason).collect();
    out.sort_by_key(|e| (e.first_timestamp, e.metadata.name.clone()));
    out
}

fn has_taint(node: &Node, key: &str, effect: &str) -> bool {
    node.spec.taints.iter().any(|t| t.key == key && t.effect == effect)
}

/// Runs until the node's lease has just been renewed, and returns that moment.
fn just_after_a_renewal(sim: &mut Sim, name: &str) -> Time {
    let before = lease_renewed_at(sim, name);
    while lease_renewed_at(sim, name) == before {
        assert!(sim.step(), "the simulation has work");
    }
    sim.now()
}

#[test]
fn a_node_whose_kubelet_stops_goes_unknown_is_tainted_and_its_pods_move_after_300s() {
    let mut sim = cluster(3);
    deploy(&mut sim, "web", 6);
    let doomed: Vec<String> = pods_on(&sim, "node-1").iter().map(|p| p.metadata.name.to_string()).collect();
    assert!(!doomed.is_empty(), "node-1 runs some of the pods");

    let t = just_after_a_renewal(&mut sim, "node-1");
    assert!(sim.stop_component(&ComponentId::Kubelet("node-1".into())));

    sim.run_until(t + Duration::secs(45));
    assert_eq!(node(&sim, "node-1").ready_status(), "True", "still Ready at t+45s");
    assert!(events(&sim, "NodeNotReady").is_empty());

    sim.run_until(t + Duration::secs(55));
    let n = node(&sim, "node-1");
    let ready = n.condition("Ready").expect("Ready condition");
    assert_eq!(ready.status, "Unknown", "Unknown by t+55s");
    assert_eq!(ready.reason.as_deref(), Some("NodeStatusUnknown"));
    assert_eq!(ready.message.as_deref(), Some("Kubelet stopped posting node status."));
    for type_ in ["MemoryPressure", "DiskPressure", "PIDPressure"] {
        assert_eq!(n.condition(type_).map(|c| c.status.as_str()), Some("Unknown"), "{type_}");
    }
    let unknown_at = ready.last_transition_time.expect("transition time");
    assert!(unknown_at >= t + Duration::secs(50), "not before the 50 s grace: {unknown_at:?} vs {t:?}");
    let node_events = events(&sim, "NodeNotReady");
    let node_event = node_events.iter().find(|e| e.involved_object.kind == "Node").expect("the node's NodeNotReady");
    assert_eq!(node_event.message, "Node node-1 status is now: NodeNotReady");
    assert_eq!(node_event.source.component, "node-controller");
    let pod_events: Vec<&Event> = node_events.iter().filter(|e| e.involved_object.kind == "Pod").collect();
    assert_eq!(pod_events.len(), doomed.len());
    assert!(pod_events.iter().all(|e| e.message == "Node is not ready" && e.type_ == "Warning"));
    for pod in pods_on(&sim, "node-1") {
        assert_eq!(pod.condition("Ready").map(|c| c.status.as_str()), Some("False"), "{} marked not ready", pod.metadata.name);
    }

    // The NoExecute taint follows on the next pass, which observes the Unknown status.
    sim.run_until(unknown_at + Duration::secs(5) + Duration::millis(500));
    let n = node(&sim, "node-1");
    assert!(has_taint(&n, "node.kubernetes.io/unreachable", "NoExecute"), "tainted: {:?}", n.spec.taints);
    assert!(has_taint(&n, "node.kubernetes.io/unreachable", "NoSchedule"));
    let tainted_at = n.spec.taints.iter().find(|t| t.effect == "NoExecute").and_then(|t| t.time_added).expect("timeAdded");

    // The pods tolerate the taint for the default 300 s.
    sim.run_until(tainted_at + Duration::secs(299));
    assert!(pods_on(&sim, "node-1").iter().all(|p| !p.metadata.is_deleting()), "not evicted before 300 s");
    assert!(events(&sim, "TaintManagerEviction").is_empty());
    sim.run_until(tainted_at + Duration::secs(301));
    let evicted = events(&sim, "TaintManagerEviction");
    assert_eq!(evicted.len(), doomed.len());
    let mut messages: Vec<String> = evicted.iter().map(|e| e.message.to_string()).collect();
    messages.sort();
    let mut expected: Vec<String> = doomed.iter().map(|n| format!("Marking for deletion Pod default/{n}")).collect();
    expected.sort();
    assert_eq!(messages, expected);
    assert!(evicted.iter().all(|e| e.source.component == "taint-eviction-controller"));
    let evicted_at = evicted[0].first_timestamp.expect("timestamp");
    assert!(
        evicted_at.since(t) >= Duration::secs(350) && evicted_at.since(t) <= Duration::secs(362),
        "near t+350s: {:?}",
        evicted_at.since(t)
    );
    for pod in pods_on(&sim, "node-1") {
        assert!(pod.metadata.is_deleting(), "{} Terminating on the lost node", pod.metadata.name);
        let target = pod.condition("DisruptionTarget").expect("DisruptionTarget");
        assert_eq!(target.reason.as_deref(), Some("DeletionByTaintManager"));
    }

    // Replaced on the surviving nodes.
    sim.run_until(tainted_at + Duration::secs(360));
    let running_elsewhere = sim
        .objects(Kind::Pod)
        .filter_map(|o| o.as_pod())
        .filter(|p| !p.metadata.is_deleting() && p.is_ready() && matches!(p.node_name(), Some("node-2" | "node-3")))
        .count();
    assert_eq!(running_elsewhere, 6, "six ready pods on node-2 and node-3");
    assert!(sim.violations().is_empty(), "{:?}", sim.violations());
}

#[test]
fn when_the_kubelet_comes_back_the_node_is_ready_and_untainted() {
    let mut sim = cluster(3);
    deploy(&mut sim, "web", 3);
    let t = just_after_a_renewal(&mut sim, "node-1");
    let kubelet = ComponentId::Kubelet("node-1".into());
    sim.stop_component(&kubelet);
    sim.run_until(t + Duration::secs(70));
    assert!(has_taint(&node(&sim, "node-1"), "node.kubernetes.io/unreachable", "NoExecute"));

    sim.start_component(&kubelet);
    sim.run_until(t + Duration::secs(90));
    let n = node(&sim, "node-1");
    assert_eq!(n.ready_status(), "True");
    assert!(n.spec.taints.is_empty(), "taints removed: {:?}", n.spec.taints);
    // The pods were never evicted: their deletions are cancelled.
    let cancelled = events(&sim, "TaintManagerEviction");
    assert!(cancelled.iter().all(|e| e.message.starts_with("Cancelling deletion of Pod default/web-")), "{cancelled:?}");
    assert_eq!(cancelled.len(), pods_on(&sim, "node-1").len());
    sim.run_until(t + Duration::secs(500));
    assert!(pods_on(&sim, "node-1").iter().all(|p| !p.metadata.is_deleting()));
    assert!(sim.violations().is_empty(), "{:?}", sim.violations());
}

#[test]
fn a_pod_without_the_default_toleration_is_evicted_as_soon_as_the_taint_lands() {
    let mut sim = cluster(2);
    let yaml = "apiVersion: v1\nkind: Pod\nmetadata: {name: fragile}\nspec:\n  nodeName: node-1\n  tolerations:\n  - {key: node.kubernetes.io/unreachable, operator: Exists, effect: NoExecute, tolerationSeconds: 0}\n  containers:\n  - {name: c, image: nginx:1.14.2}\n";
    let object = Object::from_json(yaml_serde::from_str(yaml).expect("yaml")).expect("object");
    sim.submit(ApiRequest::Create(object)).expect("created");
    sim.settle(Duration::mins(1)).expect("settled");
    let t = just_after_a_renewal(&mut sim, "node-1");
    sim.stop_component(&ComponentId::Kubelet("node-1".into()));
    sim.run_until(t + Duration::secs(70));
    let n = node(&sim, "node-1");
    let tainted_at = n.spec.taints.iter().find(|t| t.effect == "NoExecute").and_then(|t| t.time_added).expect("tainted");
    let evicted = events(&sim, "TaintManagerEviction");
    assert_eq!(evicted.len(), 1);
    assert_eq!(evicted[0].message, "Marking for deletion Pod default/fragile");
    assert!(evicted[0].first_timestamp.expect("ts").since(tainted_at) < Duration::secs(1));
}

fn noexecute_tainted_at(sim: &Sim, name: &str) -> Option<Time> {
    node(sim, name).spec.taints.iter().find(|t| t.effect == "NoExecute").and_then(|t| t.time_added)
}

#[test]
fn the_healthy_rate_taints_one_node_per_ten_seconds_in_a_zone() {
    let mut sim = cluster(6);
    let t = just_after_a_renewal(&mut sim, "node-1");
    for n in ["node-1", "node-2"] {
        sim.stop_component(&ComponentId::Kubelet(n.into()));
    }
    sim.run_until(t + Duration::secs(90));
    let first = noexecute_tainted_at(&sim, "node-1").expect("node-1 tainted");
    let second = noexecute_tainted_at(&sim, "node-2").expect("node-2 tainted");
    let (early, late) = if first < second { (first, second) } else { (second, first) };
    // Two of six down is a normal zone: 0.1 nodes/s, a burst of one.
    let gap = late.since(early);
    assert!(gap >= Duration::secs(10) && gap < Duration::secs(11), "one token per 10 s: {gap:?}");
}

#[test]
fn a_small_cluster_with_most_of_a_zone_down_stops_tainting() {
    let mut sim = cluster(5);
    deploy(&mut sim, "web", 5);
    let t = just_after_a_renewal(&mut sim, "node-1");
    for n in ["node-1", "node-2", "node-3"] {
        sim.stop_component(&ComponentId::Kubelet(n.into()));
    }
    sim.run_until(t + Duration::mins(10));
    // The lost nodes' leases expire a pass or two apart: whichever went Unknown while the zone
    // was still normal (one or two of five) may have been tainted; from the third on the zone
    // is partially disrupted (60 % >= 55 %) and, in a cluster of 50 nodes or fewer, nothing
    // more is tainted — so the rest keep their pods however long they stay down.
    let lost = ["node-1", "node-2", "node-3"];
    assert!(lost.iter().all(|n| node(&sim, n).ready_status() == "Unknown"));
    let untainted: Vec<&str> = lost.iter().copied().filter(|n| noexecute_tainted_at(&sim, n).is_none()).collect();
    assert!(!untainted.is_empty(), "tainting stopped before all three were tainted");
    for n in &untainted {
        assert!(pods_on(&sim, n).iter().all(|p| !p.metadata.is_deleting()), "pods on {n} not evicted");
    }
    let zone = kubeloop::controllers::node_lifecycle::zone_key(&node(&sim, "node-4"));
    let state = sim.controller_manager().and_then(|m| m.zone_state(&zone));
    assert_eq!(state, Some(kubeloop::controllers::node_lifecycle::ZoneState::PartialDisruption));
}
