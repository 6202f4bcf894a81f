//! Level- versus edge-triggered reconciliation on one seed, with watch events withheld from
//! kube-controller-manager: its watches are severed, a pod is force-deleted, and etcd compacts
//! the history before it watches again, so resuming the watch is 410 Gone and the pod's
//! deletion reaches it only through the re-list. The
//! level-triggered ReplicaSet controller re-reads the state and closes the gap; the
//! edge-triggered one acts only on events, never sees one for that pod, and stays a replica
//! short for good — while still reacting correctly to every event it does receive.

use kubeloop::api::{ApiRequest, DeleteRequest};
use kubeloop::controllers::edge::Mode;
use kubeloop::controllers::manager::ControllerManager;
use kubeloop::model::*;
use kubeloop::sim::{ComponentId, NodeConfig, Sim};

const SEED: u64 = 11;

fn cluster_with_web(replicas: i32) -> Sim {
    let mut sim = Sim::new(SEED);
    sim.check_invariants_every_step();
    for i in 1..=2 {
        sim.add_node(NodeConfig::new(&format!("node-{i}"))).expect("node added");
    }
    sim.settle(Duration::secs(30)).expect("settled");
    let yaml = format!(
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {{name: web}}\nspec:\n  replicas: {replicas}\n  selector: {{matchLabels: {{app: web}}}}\n  template:\n    metadata: {{labels: {{app: web}}}}\n    spec:\n      containers:\n      - name: nginx\n        image: nginx:1.14.2\n"
    );
    let object = Object::from_json(yaml_serde::from_str(&yaml).expect("yaml")).expect("object");
    sim.submit(ApiRequest::Create(object)).expect("created");
    sim.settle(Duration::mins(2)).expect("settled");
    sim
}

/// Switches a controller's mode as `sim mode` does: through the Sim, which then asks the manager
/// for its wake-up again.
fn set_mode(sim: &mut Sim, controller: &str, mode: Mode) -> Result<(), String> {
    sim.update_controller_manager(|m: &mut ControllerManager| m.set_mode(controller, mode)).expect("kube-controller-manager")
}

fn mode_of(sim: &Sim, controller: &str) -> Mode {
    sim.controller_manager().expect("kube-controller-manager").mode(controller)
}

/// Pods of `web` that are not terminating or finished.
fn active_web_pods(sim: &Sim) -> Vec<Pod> {
    sim.objects(Kind::Pod)
        .filter_map(|o| o.as_pod().cloned())
        .filter(|p| p.metadata.labels.get("app").map(String::as_str) == Some("web"))
        .filter(|p| !p.metadata.is_deleting() && !p.is_terminal())
        .collect()
}

fn force_delete(sim: &mut Sim, name: &str) {
    let key = ObjectKey::new(Kind::Pod, "default", name);
    sim.submit(ApiRequest::Delete(DeleteRequest { grace_period_seconds: Some(0), ..DeleteRequest::new(key) })).expect("deleted");
}

/// Runs the same story in one mode and returns the number of active web pods after
/// (1) a deletion the controller manager never hears of, then (2) one it does hear of.
fn story(mode: Mode) -> (usize, usize) {
    let mut sim = cluster_with_web(3);
    assert_eq!(active_web_pods(&sim).len(), 3);
    set_mode(&mut sim, "replicaset", mode).expect("switchable");
    set_mode(&mut sim, "deployment", mode).expect("switchable");

    // (1) The watch event of this deletion is withheld: the watches are gone when it happens,
    // and the compaction forbids replaying it when they resume.
    sim.sever_watches(Some(&ComponentId::ControllerManager));
    let victim = active_web_pods(&sim)[0].metadata.name.clone();
    force_delete(&mut sim, &victim);
    sim.compact();
    sim.advance(Duration::mins(5));
    let after_lost_event = active_web_pods(&sim).len();

    // (2) A deletion it does hear of: edge mode replaces exactly that one pod.
    let victim = active_web_pods(&sim)[0].metadata.name.clone();
    force_delete(&mut sim, &victim);
    sim.advance(Duration::mins(1));
    assert!(sim.violations().is_empty(), "{:?}", sim.violations());
    (after_lost_event, active_web_pods(&sim).len())
}

#[test]
fn with_a_watch_event_withheld_level_triggered_converges_and_edge_triggered_stays_wrong() {
    assert_eq!(story(Mode::Level), (3, 3), "level-triggered: the re-list closes the gap");
    assert_eq!(story(Mode::Edge), (2, 2), "edge-triggered: one replica short for good, though it handles later events");
}

#[test]
fn edge_triggered_scaling_creates_the_difference_it_is_told_about() {
    let mut sim = cluster_with_web(2);
    set_mode(&mut sim, "replicaset", Mode::Edge).expect("switchable");
    assert_eq!(mode_of(&sim, "replicaset-controller"), Mode::Edge);
    assert_eq!(mode_of(&sim, "deployment"), Mode::Level);
    let deployment = sim.api().get(&ObjectKey::new(Kind::Deployment, "default", "web")).cloned().expect("web");
    let mut scaled = (*deployment).clone();
    if let Object::Deployment(d) = &mut scaled {
        d.spec.replicas = Some(4);
    }
    sim.submit(ApiRequest::Update(scaled)).expect("scaled");
    sim.advance(Duration::secs(30));
    assert_eq!(active_web_pods(&sim).len(), 4);
    let created: usize =
        sim.objects(Kind::Event).filter_map(|o| o.as_event()).filter(|e| e.reason == "SuccessfulCreate").map(|e| e.count as usize).sum();
    assert_eq!(created, 4, "2 at first, then exactly 4 − 2 by the edge handler");

    // Back to level: the controller looks at everything again and finds nothing to do.
    set_mode(&mut sim, "replicaset", Mode::Level).expect("switchable");
    sim.advance(Duration::secs(30));
    assert_eq!(active_web_pods(&sim).len(), 4);
}

/// The page's side-by-side pair, `dropped-events` and `dropped-events-edge`: the same seed and
/// timeline through the `sim` verbs (watch events to kube-controller-manager dropped, every web
/// pod deleted, the drop lifted, the watches severed so it re-lists). Level-triggered, the
/// ReplicaSet controller makes the three pods again; edge-triggered, it never does.
#[test]
fn with_dropped_watch_events_the_level_scenario_heals_and_the_edge_one_never_does() {
    use kubeloop::command::{Scenario, Session};
    let run = |name: &str| {
        let scenario = Scenario::builtin(name).unwrap_or_else(|| panic!("built-in scenario {name}"));
        let mut s = Session::new(scenario, None).expect("starts");
        s.sim_mut().check_invariants_every_step();
        s.advance(Duration::secs(9));
        let before = active_web_pods(s.sim()).iter().filter(|p| p.is_ready()).count();
        assert_eq!(before, 3, "{name}: the claim is met before anything goes wrong");
        s.advance(Duration::secs(16));
        let during = active_web_pods(s.sim()).len();
        let dropped = s.sim().watch_events_dropped();
        s.advance(Duration::mins(3));
        let ready = active_web_pods(s.sim()).iter().filter(|p| p.is_ready()).count();
        assert_eq!(s.sim().violations(), &[] as &[String], "{name}");
        assert_eq!(s.timeline_remaining(), 0, "{name}: the whole timeline ran");
        (s.sim().seed(), during, dropped, ready)
    };
    let (level_seed, level_during, level_dropped, level_ready) = run("dropped-events");
    let (edge_seed, edge_during, edge_dropped, edge_ready) = run("dropped-events-edge");
    assert_eq!(level_seed, edge_seed, "one seed for both");
    assert_eq!((level_during, edge_during), (0, 0), "while the events are lost, neither replaces the deleted pods");
    assert!(level_dropped > 0 && edge_dropped > 0);
    assert_eq!(level_ready, 3, "level-triggered: re-listed, compared 3 with 0, created 3");
    assert_eq!(edge_ready, 0, "edge-triggered: no event said a pod was deleted, so it never acts");
}
