//! The horizontal pod autoscaler end to end, with upstream's numbers: a 15 s sync, the replica
//! count that brings CPU back to the target, and the 5-minute stabilization before scaling
//! down. CPU comes from `sim load`. Invariants are checked after every step.

use kubeloop::command::{Scenario, Session};
use kubeloop::model::*;

fn session() -> Session {
    let mut s = Session::new(Scenario::builtin("default").unwrap(), Some(3)).unwrap();
    s.sim_mut().check_invariants_every_step();
    let deployment = "kubectl create deployment php-apache --image=registry.k8s.io/hpa-example --replicas=1";
    assert!(s.execute(deployment).ok);
    assert!(set_request(&mut s), "the pods request 200m of CPU, as the walkthrough's do");
    assert!(s.execute("kubectl autoscale deployment php-apache --cpu-percent=50 --min=1 --max=10").ok);
    s.advance(Duration::secs(60));
    s
}

/// Gives the Deployment's container a CPU request of 200m (a rollout follows).
fn set_request(s: &mut Session) -> bool {
    let key = ObjectKey::new(Kind::Deployment, "default", "php-apache");
    let Some(mut d) = s.sim().api().get(&key).and_then(|o| o.as_deployment().cloned()) else { return false };
    let mut template = (*d.spec.template).clone();
    let mut containers = (*template.spec.containers).clone();
    containers[0].resources.requests.insert("cpu".into(), Quantity::new("200m"));
    template.spec.containers = containers.into();
    d.spec.template = template.into();
    s.sim_mut().submit(kubeloop::api::ApiRequest::Update(Object::Deployment(d))).is_ok()
}

fn replicas(s: &Session) -> i32 {
    let key = ObjectKey::new(Kind::Deployment, "default", "php-apache");
    s.sim().api().get(&key).and_then(|o| o.as_deployment().and_then(|d| d.spec.replicas)).unwrap()
}

fn rescales(s: &Session) -> Vec<Event> {
    let mut out: Vec<Event> =
        s.sim().objects(Kind::Event).filter_map(|o| o.as_event().cloned()).filter(|e| e.reason == "SuccessfulRescale").collect();
    out.sort_by_key(|e| e.last_timestamp);
    out
}

#[test]
fn a_loaded_deployment_scales_to_the_replicas_that_bring_cpu_to_the_target() {
    let mut s = session();
    assert_eq!(replicas(&s), 1);
    // 250% of one pod's 200m is 500m; at 50% of 200m per pod that is 5 pods.
    assert!(s.execute("sim load deployment/php-apache --cpu 250%").ok);
    s.advance(Duration::mins(2));
    assert_eq!(replicas(&s), 5);
    let events = rescales(&s);
    assert_eq!(
        events[0].message, "New size: 4; reason: cpu resource utilization (percentage of request) above target",
        "at most max(2×1, 4) at once"
    );
    for pair in events.windows(2) {
        let gap = pair[1].last_timestamp.unwrap().since(pair[0].last_timestamp.unwrap());
        assert!(gap >= Duration::secs(14), "syncs are 15 s apart: {gap:?}");
    }
    let hpa = s
        .sim()
        .api()
        .get(&ObjectKey::new(Kind::HorizontalPodAutoscaler, "default", "php-apache"))
        .and_then(|o| o.as_horizontal_pod_autoscaler().cloned())
        .unwrap();
    assert_eq!(hpa.status.current_metrics[0].resource.as_ref().unwrap().current.average_utilization, Some(50));
}

#[test]
fn scaling_down_waits_for_five_minutes_of_lower_recommendations() {
    let mut s = session();
    assert!(s.execute("sim load deployment/php-apache --cpu 250%").ok);
    s.advance(Duration::mins(2));
    assert_eq!(replicas(&s), 5);
    assert!(s.execute("sim load deployment/php-apache --cpu 0%").ok);
    s.advance(Duration::secs(4 * 60 + 40));
    assert_eq!(replicas(&s), 5, "the recommendations of the last five minutes still include 5");
    s.advance(Duration::secs(40));
    assert_eq!(replicas(&s), 1);
    assert_eq!(rescales(&s).last().unwrap().message, "New size: 1; reason: All metrics below target");
}

#[test]
fn within_ten_percent_of_the_target_nothing_changes() {
    let mut s = session();
    // 54% per pod against 50%: inside the tolerance.
    assert!(s.execute("sim load deployment/php-apache --cpu 54%").ok);
    s.advance(Duration::mins(2));
    assert_eq!(replicas(&s), 1);
    assert!(rescales(&s).is_empty());
    // 60% is outside it: ceil(1.2 × 1) = 2.
    assert!(s.execute("sim load deployment/php-apache --cpu 60%").ok);
    s.advance(Duration::mins(1));
    assert_eq!(replicas(&s), 2);
}

/// autoscaling/v1 is still served: its one CPU target is converted to the v2 metric the API
/// server stores, with no warning, and the loop scales on it exactly as on a v2 object.
#[test]
fn an_autoscaling_v1_manifest_is_stored_as_v2_and_scales_the_same() {
    let mut s = Session::new(Scenario::builtin("default").unwrap(), Some(3)).unwrap();
    s.sim_mut().check_invariants_every_step();
    assert!(s.execute("kubectl create deployment php-apache --image=registry.k8s.io/hpa-example --replicas=1").ok);
    assert!(set_request(&mut s));
    let v1 = "apiVersion: autoscaling/v1\nkind: HorizontalPodAutoscaler\nmetadata:\n  name: php-apache\nspec:\n  scaleTargetRef:\n    apiVersion: apps/v1\n    kind: Deployment\n    name: php-apache\n  minReplicas: 1\n  maxReplicas: 10\n  targetCPUUtilizationPercentage: 50\n";
    s.add_file("hpa-v1.yaml", v1);
    let out = s.execute("kubectl apply -f hpa-v1.yaml");
    assert_eq!((out.ok, out.stdout.as_str(), out.stderr.as_str()), (true, "horizontalpodautoscaler.autoscaling/php-apache created\n", ""));
    let hpa = s
        .sim()
        .api()
        .get(&ObjectKey::new(Kind::HorizontalPodAutoscaler, "default", "php-apache"))
        .and_then(|o| o.as_horizontal_pod_autoscaler().cloned())
        .unwrap();
    let target = hpa.spec.metrics[0].resource.as_ref().map(|r| (r.name.as_str(), r.target.average_utilization));
    assert_eq!(target, Some(("cpu", Some(50))));
    s.advance(Duration::secs(60));
    assert!(s.execute("sim load deployment/php-apache --cpu 250%").ok);
    s.advance(Duration::mins(2));
    assert_eq!(replicas(&s), 5, "the same count as the v2 walkthrough");
    let wrong = s.execute("kubectl apply -f hpa-v1.yaml -o name");
    assert!(wrong.ok, "applying it again is unchanged, not a conflict: {wrong:?}");
}
