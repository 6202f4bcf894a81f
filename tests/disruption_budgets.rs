//! PodDisruptionBudgets end to end: the disruption controller's status, the eviction API spending
//! and refusing it, with upstream's numbers and messages (pkg/controller/disruption,
//! pkg/registry/core/pod/storage/eviction.go). Invariants are checked after every step.

use kubeloop::api::{ApiError, ApiRequest, DeleteRequest, Reason};
use kubeloop::model::*;
use kubeloop::sim::{NodeConfig, Sim};

fn object(yaml: &str) -> Object {
    Object::from_json(yaml_serde::from_str(yaml).unwrap()).unwrap()
}

/// Two nodes and a Deployment `web` of `replicas` Ready pods.
fn with_web(replicas: i32) -> Sim {
    let mut sim = Sim::new(5);
    sim.check_invariants_every_step();
    for i in 1..=2 {
        sim.add_node(NodeConfig::new(&format!("node-{i}"))).unwrap();
    }
    let deployment = format!(
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {{name: web}}\nspec:\n  replicas: {replicas}\n  selector: {{matchLabels: {{app: web}}}}\n  template:\n    metadata: {{labels: {{app: web}}}}\n    spec:\n      containers:\n      - {{name: nginx, image: nginx:1.14.2}}\n"
    );
    sim.submit(ApiRequest::Create(object(&deployment))).unwrap();
    sim.settle(Duration::mins(2)).unwrap();
    sim
}

fn budget(sim: &mut Sim, name: &str, bound: &str) {
    let yaml = format!("apiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {{name: {name}}}\nspec:\n  {bound}\n  selector: {{matchLabels: {{app: web}}}}\n");
    sim.submit(ApiRequest::Create(object(&yaml))).unwrap();
    sim.advance(Duration::secs(2));
}

fn pdb(sim: &Sim, name: &str) -> PodDisruptionBudget {
    let key = ObjectKey::new(Kind::PodDisruptionBudget, "default", name);
    sim.api().get(&key).and_then(|o| o.as_pod_disruption_budget().cloned()).expect("the budget exists")
}

fn web_pods(sim: &Sim) -> Vec<Pod> {
    let mut pods: Vec<Pod> = sim.objects(Kind::Pod).filter_map(|o| o.as_pod().cloned()).filter(|p| !p.metadata.is_deleting()).collect();
    pods.sort_by(|a, b| a.metadata.name.cmp(&b.metadata.name));
    pods
}

fn evict(sim: &mut Sim, pod: &Pod) -> Result<(), ApiError> {
    sim.submit(ApiRequest::Evict(DeleteRequest::new(ObjectKey::of(Kind::Pod, &pod.metadata)))).map(|_| ())
}

/// (currentHealthy, desiredHealthy, expectedPods, disruptionsAllowed)
fn counts(p: &PodDisruptionBudget) -> (i32, i32, i32, i32) {
    let s = &p.status;
    (s.current_healthy, s.desired_healthy, s.expected_pods, s.disruptions_allowed)
}

#[test]
fn min_available_counts_the_matching_pods_and_allows_the_rest() {
    let mut sim = with_web(3);
    budget(&mut sim, "web-pdb", "minAvailable: 2");
    let p = pdb(&sim, "web-pdb");
    assert_eq!(counts(&p), (3, 2, 3, 1));
    assert_eq!(p.status.observed_generation, p.metadata.generation);
    let c = p.condition(DISRUPTION_ALLOWED).expect("condition");
    assert_eq!((c.status.as_str(), c.reason.as_str()), ("True", SUFFICIENT_PODS));
}

#[test]
fn a_percentage_is_of_the_deployments_desired_replicas() {
    let mut sim = with_web(4);
    // 25% of 4, rounded up: 1 may be unavailable, 3 must stay.
    budget(&mut sim, "quarter", "maxUnavailable: 25%");
    assert_eq!(counts(&pdb(&sim, "quarter")), (4, 3, 4, 1));
    // minAvailable 60% of 4 rounds up to 3 as well.
    budget(&mut sim, "most", "minAvailable: 60%");
    assert_eq!(counts(&pdb(&sim, "most")), (4, 3, 4, 1));
}

#[test]
fn an_eviction_spends_the_budget_and_marks_the_pod() {
    let mut sim = with_web(3);
    budget(&mut sim, "web-pdb", "minAvailable: 2");
    let victim = web_pods(&sim).remove(0);
    let at = sim.now();
    evict(&mut sim, &victim).expect("one disruption is allowed");
    let p = pdb(&sim, "web-pdb");
    assert_eq!(p.status.disruptions_allowed, 0);
    assert_eq!(p.status.disrupted_pods.get(victim.metadata.name.as_str()), Some(&at));
    let c = p.condition(DISRUPTION_ALLOWED).unwrap();
    assert_eq!((c.status.as_str(), c.reason.as_str()), ("False", INSUFFICIENT_PODS));
    let gone = sim.api().get(&ObjectKey::of(Kind::Pod, &victim.metadata)).and_then(|o| o.as_pod().cloned()).unwrap();
    assert!(gone.metadata.is_deleting(), "deleted gracefully");
    let target = gone.condition("DisruptionTarget").expect("DisruptionTarget");
    assert_eq!((target.reason.as_deref(), target.message.as_deref()), (Some("EvictionByEvictionAPI"), Some("Eviction API: evicting")));
}

#[test]
fn an_eviction_past_the_budget_is_a_429_and_changes_nothing() {
    let mut sim = with_web(3);
    budget(&mut sim, "web-pdb", "minAvailable: 3");
    let before = pdb(&sim, "web-pdb");
    assert_eq!(counts(&before), (3, 3, 3, 0));
    let victim = web_pods(&sim).remove(0);
    let err = evict(&mut sim, &victim).unwrap_err();
    assert_eq!((err.reason, err.code()), (Reason::TooManyRequests, 429));
    assert_eq!(err.message, "Cannot evict pod as it would violate the pod's disruption budget.");
    assert_eq!(err.causes[0].detail, "The disruption budget web-pdb needs 3 healthy pods and has 3 currently");
    assert_eq!(pdb(&sim, "web-pdb").metadata.resource_version, before.metadata.resource_version);
    assert!(web_pods(&sim).iter().any(|p| p.metadata.name == victim.metadata.name), "the pod stays");
}

#[test]
fn two_budgets_over_one_pod_are_refused_with_a_500() {
    let mut sim = with_web(3);
    budget(&mut sim, "a", "minAvailable: 1");
    budget(&mut sim, "b", "maxUnavailable: 1");
    let victim = web_pods(&sim).remove(0);
    let err = evict(&mut sim, &victim).unwrap_err();
    assert_eq!(err.code(), 500);
    assert_eq!(err.message, "This pod has more than one PodDisruptionBudget, which the eviction subresource does not support.");
}

#[test]
fn a_granted_eviction_is_held_out_of_the_count_until_its_pod_goes_then_the_budget_refills() {
    let mut sim = with_web(3);
    budget(&mut sim, "web-pdb", "minAvailable: 2");
    let victim = web_pods(&sim).remove(0);
    evict(&mut sim, &victim).unwrap();
    // The pod terminates (30 s grace at most), the ReplicaSet replaces it, and once the
    // replacement is Ready the budget allows one disruption again with nothing held.
    sim.settle(Duration::mins(2)).unwrap();
    let p = pdb(&sim, "web-pdb");
    assert_eq!(counts(&p), (3, 2, 3, 1));
    assert!(p.status.disrupted_pods.is_empty(), "{:?}", p.status.disrupted_pods);
}

#[test]
fn a_pending_pod_is_evicted_without_asking_the_budget() {
    let mut sim = with_web(3);
    budget(&mut sim, "web-pdb", "minAvailable: 3");
    // A fourth pod that cannot be scheduled (no node has 100 CPUs) stays Pending.
    let pending = "apiVersion: v1\nkind: Pod\nmetadata: {name: big, labels: {app: web}}\nspec:\n  containers:\n  - name: c\n    image: nginx\n    resources: {requests: {cpu: '100'}}\n";
    sim.submit(ApiRequest::Create(object(pending))).unwrap();
    sim.advance(Duration::secs(2));
    let big = sim.api().get(&ObjectKey::new(Kind::Pod, "default", "big")).and_then(|o| o.as_pod().cloned()).unwrap();
    assert_eq!(big.phase(), PodPhase::Pending);
    evict(&mut sim, &big).expect("Pending pods are not guarded");
    assert!(sim.api().get(&ObjectKey::new(Kind::Pod, "default", "big")).is_none(), "an unbound pod goes at once");
    assert_eq!(pdb(&sim, "web-pdb").status.disruptions_allowed, 0, "nothing spent");
}

#[test]
fn a_budget_whose_spec_changed_is_refused_until_the_controller_has_seen_it() {
    let mut sim = with_web(3);
    budget(&mut sim, "web-pdb", "minAvailable: 1");
    // Stop the controller manager, then change the budget: its status now lags its generation.
    sim.stop("kube-controller-manager").unwrap();
    let mut next = pdb(&sim, "web-pdb");
    next.spec.min_available = Some(IntOrString::Int(2));
    sim.submit(ApiRequest::Update(Object::PodDisruptionBudget(next))).unwrap();
    let p = pdb(&sim, "web-pdb");
    assert!(p.status.observed_generation < p.metadata.generation);
    let victim = web_pods(&sim).remove(0);
    let err = evict(&mut sim, &victim).unwrap_err();
    assert_eq!(err.reason, Reason::TooManyRequests);
    assert_eq!(err.causes[0].detail, "The disruption budget web-pdb is still being processed by the server.");
}

#[test]
fn a_budget_over_pods_of_no_known_controller_fails_safe() {
    let mut sim = with_web(1);
    // A bare pod with the label and a percentage budget: its scale cannot be found.
    let owned = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: odd\n  labels: {app: web}\n  ownerReferences: [{apiVersion: example.com/v1, kind: Widget, name: w, uid: u-1, controller: true}]\nspec:\n  containers: [{name: c, image: nginx}]\n";
    sim.submit(ApiRequest::Create(object(owned))).unwrap();
    budget(&mut sim, "web-pdb", "maxUnavailable: 50%");
    let p = pdb(&sim, "web-pdb");
    let c = p.condition(DISRUPTION_ALLOWED).unwrap();
    assert_eq!((c.status.as_str(), c.reason.as_str(), c.message.as_str()), ("False", SYNC_FAILED, "found no controllers for pod \"odd\""));
    assert_eq!(p.status.disruptions_allowed, 0);
}

#[test]
fn a_granted_eviction_whose_pod_never_went_is_forgotten_after_two_minutes() {
    let mut sim = with_web(3);
    budget(&mut sim, "web-pdb", "minAvailable: 2");
    // As if an eviction had been granted but its delete never happened.
    let kept = web_pods(&sim).remove(0);
    let mut next = pdb(&sim, "web-pdb");
    next.status.disrupted_pods.insert(kept.metadata.name.to_string(), sim.now());
    sim.submit(ApiRequest::UpdateStatus(Object::PodDisruptionBudget(next))).unwrap();
    sim.advance(Duration::secs(1));
    assert_eq!(counts(&pdb(&sim, "web-pdb")), (2, 2, 3, 0), "held out of the healthy count");
    sim.advance(Duration::secs(121));
    let p = pdb(&sim, "web-pdb");
    assert_eq!(counts(&p), (3, 2, 3, 1), "counted again");
    assert!(p.status.disrupted_pods.is_empty());
    let warned = sim.objects(Kind::Event).filter_map(|o| o.as_event()).any(|e| {
        e.reason == "NotDeleted"
            && e.involved_object.name == kept.metadata.name
            && e.message == "Pod was expected by PDB default/default to be deleted but it wasn't"
    });
    assert!(warned, "the NotDeleted warning, with upstream's doubled namespace");
}
