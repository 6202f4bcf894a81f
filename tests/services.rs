//! Services and their endpoints across components: the API server's allocation, the
//! EndpointSlice and Endpoints controllers following pods through the kubelet's status writes,
//! and the garbage collector removing a deleted Service's slices. Each test is named for the
//! upstream behaviour it checks; the invariants are checked after every step.

use kubeloop::api::{ApiRequest, DeleteRequest};
use kubeloop::model::*;
use kubeloop::sim::{NodeConfig, Sim};

fn object(yaml: &str) -> Object {
    Object::from_json(yaml_serde::from_str(yaml).unwrap()).unwrap()
}

const WEB: &str = "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec:\n  replicas: 3\n  selector: {matchLabels: {app: web}}\n  template:\n    metadata: {labels: {app: web}}\n    spec:\n      containers:\n      - name: nginx\n        image: nginx:1.14.2\n        ports: [{containerPort: 80, name: http}]\n";
const SVC: &str =
    "apiVersion: v1\nkind: Service\nmetadata: {name: web}\nspec:\n  selector: {app: web}\n  ports: [{port: 80, targetPort: http}]\n";

fn cluster() -> Sim {
    let mut sim = Sim::new(5);
    sim.check_invariants_every_step();
    for i in 1..=2 {
        sim.add_node(NodeConfig::new(&format!("node-{i}"))).unwrap();
    }
    sim.settle(Duration::secs(30)).unwrap();
    sim
}

fn web() -> Sim {
    let mut sim = cluster();
    sim.submit(ApiRequest::Create(object(WEB))).unwrap();
    sim.submit(ApiRequest::Create(object(SVC))).unwrap();
    sim.settle(Duration::mins(2)).unwrap();
    sim
}

fn slices(sim: &Sim) -> Vec<EndpointSlice> {
    sim.objects(Kind::EndpointSlice).filter_map(|o| o.as_endpoint_slice().cloned()).collect()
}

/// The addresses of the ready endpoints, sorted.
fn ready_addresses(sim: &Sim) -> Vec<String> {
    let mut out: Vec<String> = slices(sim)
        .iter()
        .flat_map(|s| s.endpoints.clone())
        .filter(|e| e.conditions.ready == Some(true))
        .flat_map(|e| e.addresses)
        .collect();
    out.sort();
    out
}

fn running_pod_ips(sim: &Sim) -> Vec<String> {
    let mut ips: Vec<String> = sim
        .objects(Kind::Pod)
        .filter_map(|o| o.as_pod())
        .filter(|p| p.is_ready() && p.metadata.deletion_timestamp.is_none())
        .filter_map(|p| p.status.pod_ip.clone())
        .collect();
    ips.sort();
    ips
}

#[test]
fn the_kubernetes_service_exists_from_the_start_at_10_96_0_1() {
    let sim = Sim::new(1);
    let svc = sim.api().get(&ObjectKey::new(Kind::Service, "default", "kubernetes")).and_then(|o| o.as_service().cloned()).unwrap();
    assert_eq!(svc.spec.cluster_ip.as_deref(), Some("10.96.0.1"));
    assert_eq!((svc.spec.ports[0].name.as_str(), svc.spec.ports[0].port), ("https", 443));
}

#[test]
fn node_ipam_gives_each_node_a_slash_24_of_10_244_0_0_16_in_registration_order_and_pods_ips_from_it() {
    let sim = web();
    let nodes: Vec<(String, Option<String>, Vec<String>)> = sim
        .objects(Kind::Node)
        .filter_map(|o| o.as_node())
        .map(|n| (n.metadata.name.to_string(), n.spec.pod_cidr.clone(), n.spec.pod_cidrs.clone()))
        .collect();
    assert_eq!(
        nodes,
        [
            ("node-1".into(), Some("10.244.0.0/24".into()), vec!["10.244.0.0/24".to_string()]),
            ("node-2".into(), Some("10.244.1.0/24".into()), vec!["10.244.1.0/24".to_string()]),
        ]
    );
    for pod in sim.objects(Kind::Pod).filter_map(|o| o.as_pod()) {
        let ip = pod.status.pod_ip.clone().expect("a running pod has an IP");
        let prefix = if pod.node_name() == Some("node-1") { "10.244.0." } else { "10.244.1." };
        assert!(ip.starts_with(prefix), "{ip} on {:?}", pod.node_name());
        assert_eq!(pod.status.pod_ips, vec![PodIP { ip }]);
        assert_eq!(pod.status.host_ips.len(), 1);
        assert_eq!(pod.status.host_ip.as_deref(), Some(pod.status.host_ips[0].ip.as_str()));
    }
}

#[test]
fn a_deployment_behind_a_service_lists_its_ready_pods_as_endpoints() {
    let sim = web();
    assert_eq!(ready_addresses(&sim), running_pod_ips(&sim));
    assert_eq!(ready_addresses(&sim).len(), 3);
    let s = &slices(&sim)[0];
    assert_eq!(s.ports[0].port, Some(80), "the named targetPort resolved to the container port");
    let ep = sim.api().get(&ObjectKey::new(Kind::Endpoints, "default", "web")).and_then(|o| o.as_endpoints().cloned()).unwrap();
    let mut ips: Vec<String> = ep.subsets.iter().flat_map(|s| s.addresses.iter().map(|a| a.ip.clone())).collect();
    ips.sort();
    assert_eq!(ips, running_pod_ips(&sim));
    assert_invariants(&sim);
}

#[test]
fn a_terminating_pod_stays_in_its_slice_not_ready_and_terminating_and_leaves_the_endpoints_object() {
    let mut sim = web();
    let victim = sim.objects(Kind::Pod).filter_map(|o| o.as_pod().cloned()).next().unwrap();
    sim.submit(ApiRequest::Delete(DeleteRequest::new(ObjectKey::of(Kind::Pod, &victim.metadata)))).unwrap();
    sim.advance(Duration::millis(200));
    let ip = victim.status.pod_ip.clone().unwrap();
    let ep = slices(&sim).into_iter().flat_map(|s| s.endpoints).find(|e| e.addresses[0] == ip).expect("still listed");
    assert_eq!((ep.conditions.ready, ep.conditions.serving, ep.conditions.terminating), (Some(false), Some(true), Some(true)));
    let endpoints = sim.api().get(&ObjectKey::new(Kind::Endpoints, "default", "web")).and_then(|o| o.as_endpoints().cloned()).unwrap();
    assert!(endpoints.subsets.iter().flat_map(|s| s.addresses.iter().chain(&s.not_ready_addresses)).all(|a| a.ip != ip));
    sim.settle(Duration::mins(2)).unwrap();
    assert!(!ready_addresses(&sim).contains(&ip), "the killed pod left");
    assert_eq!(ready_addresses(&sim), running_pod_ips(&sim), "its replacement joined");
    assert_eq!(ready_addresses(&sim).len(), 3);
    assert_invariants(&sim);
}

#[test]
fn deleting_a_service_deletes_its_endpoint_slices_through_the_garbage_collector_and_its_endpoints() {
    let mut sim = web();
    assert_eq!(slices(&sim).len(), 1);
    sim.submit(ApiRequest::Delete(DeleteRequest::new(ObjectKey::new(Kind::Service, "default", "web")))).unwrap();
    sim.settle(Duration::mins(1)).unwrap();
    assert!(slices(&sim).is_empty());
    assert!(sim.api().get(&ObjectKey::new(Kind::Endpoints, "default", "web")).is_none());
}

#[test]
fn a_service_update_keeps_its_cluster_ip_and_node_ports_and_refuses_a_changed_cluster_ip() {
    let mut sim = cluster();
    let np =
        "apiVersion: v1\nkind: Service\nmetadata: {name: np}\nspec:\n  type: NodePort\n  selector: {app: web}\n  ports: [{port: 80}]\n";
    let created = sim.submit(ApiRequest::Create(object(np))).unwrap();
    let first = created.object().and_then(|o| o.as_service().cloned()).unwrap();
    let again = sim.submit(ApiRequest::Update(object(np))).unwrap();
    let second = again.object().and_then(|o| o.as_service().cloned()).unwrap();
    assert_eq!(second.spec.cluster_ip, first.spec.cluster_ip);
    assert_eq!(second.spec.ports[0].node_port, first.spec.ports[0].node_port);
    let moved = np.replace("type: NodePort", "type: NodePort\n  clusterIP: 10.96.0.99");
    let err = sim.submit(ApiRequest::Update(object(&moved))).unwrap_err();
    assert_eq!(err.message, "Service \"np\" is invalid: spec.clusterIP: Invalid value: \"10.96.0.99\": field is immutable");
}

fn assert_invariants(sim: &Sim) {
    assert!(sim.violations().is_empty(), "{:?}", sim.violations());
}
