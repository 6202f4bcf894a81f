//! One test per behaviour of the reference sheet that crosses components, each named for it and
//! checked against the real numbers and messages. Behaviours local to one part (work queue
//! back-off, expectations, scoring formulas, validation messages …) are unit-tested next to it.
//! Every run here checks the invariants after every step.

use kubeloop::api::{ApiRequest, DeleteRequest, Reason};
use kubeloop::model::*;
use kubeloop::sim::{NodeConfig, Sim};
use std::rc::Rc;

fn deployment_yaml(name: &str, replicas: i32, image: &str, cpu: &str) -> String {
    format!(
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {{name: {name}}}\nspec:\n  replicas: {replicas}\n  selector: {{matchLabels: {{app: {name}}}}}\n  template:\n    metadata: {{labels: {{app: {name}}}}}\n    spec:\n      containers:\n      - name: nginx\n        image: {image}\n        resources: {{requests: {{cpu: {cpu}, memory: 64Mi}}}}\n"
    )
}

fn object(yaml: &str) -> Object {
    Object::from_json(yaml_serde::from_str(yaml).unwrap()).unwrap()
}

fn cluster(nodes: usize) -> Sim {
    let mut sim = Sim::new(5);
    sim.check_every_step = true;
    for i in 1..=nodes {
        sim.add_node(NodeConfig::new(&format!("node-{i}"))).unwrap();
    }
    sim.settle(Duration::secs(30)).unwrap();
    sim
}

fn with_web(replicas: i32) -> Sim {
    let mut sim = cluster(2);
    sim.submit(ApiRequest::Create(object(&deployment_yaml("web", replicas, "nginx:1.14.2", "100m")))).unwrap();
    sim.settle(Duration::mins(2)).unwrap();
    sim
}

fn get(sim: &Sim, kind: Kind, name: &str) -> Rc<Object> {
    sim.api().get(&ObjectKey::new(kind, "default", name)).cloned().unwrap_or_else(|| panic!("{kind} {name} exists"))
}

fn pods(sim: &Sim) -> Vec<Pod> {
    sim.objects(Kind::Pod).filter_map(|o| o.as_pod().cloned()).collect()
}

fn events(sim: &Sim, reason: &str) -> Vec<Event> {
    let mut out: Vec<Event> = sim.objects(Kind::Event).filter_map(|o| o.as_event().cloned()).filter(|e| e.reason == reason).collect();
    out.sort_by_key(|e| (e.first_timestamp, e.metadata.name.clone()));
    out
}

fn assert_invariants(sim: &Sim) {
    assert!(sim.violations().is_empty(), "{:?}", sim.violations());
}

#[test]
fn a_write_with_a_stale_resource_version_is_a_409_conflict() {
    let mut sim = with_web(1);
    let stale = (*get(&sim, Kind::Deployment, "web")).clone();
    let mut first = stale.clone();
    if let Object::Deployment(d) = &mut first {
        d.spec.replicas = Some(2);
    }
    sim.submit(ApiRequest::Update(first)).unwrap();
    let err = sim.submit(ApiRequest::Update(stale)).unwrap_err();
    assert_eq!(err.reason, Reason::Conflict);
    assert_eq!(
        err.message,
        "Operation cannot be fulfilled on deployments.apps \"web\": the object has been modified; please apply your changes to the latest version and try again"
    );
}

#[test]
fn generation_counts_spec_changes_and_the_controller_reports_observed_generation() {
    let mut sim = with_web(1);
    let mut d = (*get(&sim, Kind::Deployment, "web")).clone();
    assert_eq!(d.meta().generation, 1);
    if let Object::Deployment(dep) = &mut d {
        dep.spec.replicas = Some(2);
    }
    sim.submit(ApiRequest::Update(d)).unwrap();
    sim.settle(Duration::mins(1)).unwrap();
    let d = get(&sim, Kind::Deployment, "web");
    assert_eq!(d.meta().generation, 2);
    assert_eq!(d.as_deployment().unwrap().status.observed_generation, 2);
    assert_invariants(&sim);
}

#[test]
fn deleting_a_pod_is_graceful_with_30s_and_the_kubelet_finishes_it() {
    let mut sim = with_web(1);
    let pod = pods(&sim)[0].clone();
    let key = ObjectKey::new(Kind::Pod, "default", &pod.metadata.name);
    let at = sim.now();
    let answer = sim.submit(ApiRequest::Delete(DeleteRequest::new(key.clone()))).unwrap();
    let marked = answer.object().unwrap().as_pod().unwrap().clone();
    assert_eq!(marked.metadata.deletion_grace_period_seconds, Some(30));
    assert_eq!(marked.metadata.deletion_timestamp, Some(at + Duration::secs(30)));
    assert!(sim.api().get(&key).is_some(), "the pod stays until the kubelet has stopped it");
    sim.settle(Duration::mins(1)).unwrap();
    assert!(sim.api().get(&key).is_none(), "the kubelet's final delete removes it");
    assert_eq!(events(&sim, "Killing").last().unwrap().message, "Stopping container nginx");
    assert_invariants(&sim);
}

#[test]
fn deleting_a_deployment_cascades_to_its_replica_sets_and_pods_in_the_background() {
    let mut sim = with_web(3);
    assert_eq!(sim.objects(Kind::ReplicaSet).count(), 1);
    sim.submit(ApiRequest::Delete(DeleteRequest::new(ObjectKey::new(Kind::Deployment, "default", "web")))).unwrap();
    sim.settle(Duration::mins(2)).unwrap();
    assert_eq!(sim.objects(Kind::ReplicaSet).count(), 0, "the garbage collector removed the ReplicaSet");
    assert_eq!(sim.objects(Kind::Pod).count(), 0, "and then its pods");
    assert_invariants(&sim);
}

#[test]
fn admission_adds_300s_not_ready_and_unreachable_tolerations_to_every_pod() {
    let sim = with_web(1);
    let pod = &pods(&sim)[0];
    let keys: Vec<(&str, &str, Option<i64>)> =
        pod.spec.tolerations.iter().map(|t| (t.key.as_str(), t.effect.as_str(), t.toleration_seconds)).collect();
    assert_eq!(
        keys,
        [("node.kubernetes.io/not-ready", "NoExecute", Some(300)), ("node.kubernetes.io/unreachable", "NoExecute", Some(300))]
    );
}

#[test]
fn pod_names_are_the_replica_set_name_and_five_characters_of_the_kubernetes_alphabet() {
    let sim = with_web(3);
    let rs = sim.objects(Kind::ReplicaSet).next().unwrap().meta().name.clone();
    for pod in pods(&sim) {
        let suffix = pod.metadata.name.strip_prefix(&format!("{rs}-")).expect("named after its ReplicaSet");
        assert_eq!(suffix.len(), 5);
        assert!(suffix.bytes().all(|c| b"bcdfghjklmnpqrstvwxz2456789".contains(&c)), "{suffix}");
    }
}

#[test]
fn the_replica_set_records_successful_create_and_delete_events() {
    let mut sim = with_web(3);
    let created = events(&sim, "SuccessfulCreate");
    assert_eq!(created.len(), 3);
    assert!(created[0].message.starts_with("Created pod: web-"));
    assert_eq!(created[0].source.component, "replicaset-controller");
    let mut d = (*get(&sim, Kind::Deployment, "web")).clone();
    if let Object::Deployment(dep) = &mut d {
        dep.spec.replicas = Some(1);
    }
    sim.submit(ApiRequest::Update(d)).unwrap();
    sim.settle(Duration::mins(2)).unwrap();
    let deleted = events(&sim, "SuccessfulDelete");
    assert_eq!(deleted.len(), 2);
    assert!(deleted[0].message.starts_with("Deleted pod: web-"));
    assert_eq!(pods(&sim).len(), 1);
    assert_invariants(&sim);
}

#[test]
fn a_rolling_update_of_three_replicas_surges_one_and_never_drops_below_three_available() {
    let mut sim = with_web(3);
    let mut d = (*get(&sim, Kind::Deployment, "web")).clone();
    if let Object::Deployment(dep) = &mut d {
        dep.spec.template.spec.containers[0].image = "nginx:1.16.1".into();
    }
    sim.submit(ApiRequest::Update(d)).unwrap();
    let (mut most_pods, mut fewest_available) = (0, usize::MAX);
    for _ in 0..1200 {
        sim.advance(Duration::millis(100));
        let live: Vec<Pod> = pods(&sim).into_iter().filter(|p| !p.metadata.is_deleting()).collect();
        most_pods = most_pods.max(live.len());
        fewest_available = fewest_available.min(live.iter().filter(|p| p.is_ready()).count());
    }
    assert!(most_pods <= 4, "maxSurge 25% of 3 rounds up to 1: at most 4 pods, saw {most_pods}");
    assert!(fewest_available >= 3, "maxUnavailable 25% of 3 rounds down to 0: saw {fewest_available} available");
    let scaling: Vec<String> = events(&sim, "ScalingReplicaSet").into_iter().map(|e| e.message.to_string()).collect();
    let steps: Vec<String> = scaling
        .iter()
        .skip(1)
        .map(|m| m.split_whitespace().take(2).collect::<Vec<_>>().join(" ") + " " + m.rsplit(' ').next().unwrap())
        .collect();
    assert_eq!(steps, ["Scaled up 1", "Scaled down 2", "Scaled up 2", "Scaled down 1", "Scaled up 3", "Scaled down 0"], "{scaling:?}");
    let d = get(&sim, Kind::Deployment, "web");
    assert_eq!(d.meta().annotations.get("deployment.kubernetes.io/revision").map(String::as_str), Some("2"));
    assert!(pods(&sim).iter().all(|p| p.spec.containers[0].image == "nginx:1.16.1"));
    assert_invariants(&sim);
}

#[test]
fn a_pod_that_fits_no_node_gets_failed_scheduling_with_the_real_message() {
    let mut sim = cluster(2);
    sim.submit(ApiRequest::Create(object(&deployment_yaml("huge", 1, "nginx:1.14.2", "64")))).unwrap();
    let _ = sim.settle(Duration::secs(30));
    let failed = events(&sim, "FailedScheduling");
    assert_eq!(failed[0].type_, "Warning");
    assert_eq!(
        failed[0].message,
        "0/2 nodes are available: 2 Insufficient cpu. preemption: 0/2 nodes are available: 2 No preemption victims found for incoming pod."
    );
    let pod = &pods(&sim)[0];
    let cond = pod.condition("PodScheduled").unwrap();
    assert_eq!((cond.status.as_str(), cond.reason.as_deref()), ("False", Some("Unschedulable")));
    assert_eq!(pod.phase(), PodPhase::Pending);
}

#[test]
fn scheduled_events_name_the_pod_and_the_node() {
    let sim = with_web(2);
    for e in events(&sim, "Scheduled") {
        assert_eq!(e.source.component, "default-scheduler");
        let pod = &e.involved_object.name;
        let node = pods(&sim).into_iter().find(|p| &p.metadata.name == pod).and_then(|p| p.spec.node_name.clone()).unwrap();
        assert_eq!(e.message, format!("Successfully assigned default/{pod} to {node}"));
    }
}

#[test]
fn each_kubelet_renews_its_lease_every_10s_with_a_40s_duration() {
    let mut sim = cluster(1);
    let lease_key = ObjectKey::new(Kind::Lease, "kube-node-lease", "node-1");
    let renew = |sim: &Sim| sim.api().get(&lease_key).and_then(|l| l.as_lease()?.spec.renew_time).unwrap().0;
    sim.advance(Duration::millis(10_500));
    let first = renew(&sim);
    // The next renewal, whenever in the following 12 s it lands.
    let mut second = first;
    for _ in 0..120 {
        sim.advance(Duration::millis(100));
        second = renew(&sim);
        if second != first {
            break;
        }
    }
    // wait.Until is sliding: the next 10 s start after the previous renewal's round trip.
    let gap = second.since(first);
    assert!(gap >= Duration::secs(10) && gap < Duration::millis(10_500), "renewed after {gap}");
    let lease = sim.api().get(&lease_key).unwrap().as_lease().unwrap().clone();
    assert_eq!(lease.spec.lease_duration_seconds, Some(40));
    assert_eq!(lease.spec.holder_identity.as_deref(), Some("node-1"));
}

#[test]
fn a_crashing_container_is_restarted_in_place_by_the_kubelet_not_replaced() {
    let mut sim = cluster(1);
    let yaml = deployment_yaml("crash", 1, "busybox:1.36", "10m").replace(
        "    metadata: {labels: {app: crash}}",
        "    metadata:\n      labels: {app: crash}\n      annotations: {kubeloop.dev/crash-after: 5s}",
    );
    sim.submit(ApiRequest::Create(object(&yaml))).unwrap();
    sim.advance(Duration::mins(2));
    let all = pods(&sim);
    assert_eq!(all.len(), 1, "the same pod, restarted in place");
    assert!(all[0].restarts() >= 2, "restartCount {}", all[0].restarts());
    let backoff = events(&sim, "BackOff");
    assert!(!backoff.is_empty());
    assert!(backoff[0].message.starts_with("Back-off restarting failed container nginx in pod crash-"), "{}", backoff[0].message);
    assert_eq!(events(&sim, "SuccessfulCreate").len(), 1, "the ReplicaSet never had to act again");
    assert_invariants(&sim);
}

#[test]
fn pods_only_ever_report_the_five_phases() {
    let mut sim = with_web(3);
    let victim = pods(&sim)[0].metadata.name.clone();
    sim.submit(ApiRequest::Delete(DeleteRequest::new(ObjectKey::new(Kind::Pod, "default", &victim)))).unwrap();
    for _ in 0..50 {
        sim.advance(Duration::millis(100));
        for pod in pods(&sim) {
            let json = Object::Pod(pod).to_json();
            let phase = json["status"]["phase"].as_str().unwrap_or("Pending").to_string();
            assert!(["Pending", "Running", "Succeeded", "Failed", "Unknown"].contains(&phase.as_str()), "{phase}");
        }
    }
}

/// The ReplicaSet loop's reconcile count.
fn replica_set_turns(sim: &Sim) -> u64 {
    let manager = sim.component(&kubeloop::sim::ComponentId::ControllerManager).expect("controller manager runs");
    manager.loops().into_iter().find(|l| l.name == "replicaset-controller").map(|l| l.turns).expect("a replicaset loop")
}

#[test]
fn a_failed_key_waits_once_in_the_delaying_queue_so_a_converged_cluster_stops_syncing() {
    // Thousands of pods changing make the ReplicaSet's status writes conflict (409) again and
    // again while the cluster converges; each failure asks for a rate-limited retry, and past the
    // bucket's burst of 100 those retries are spaced 100 ms apart. As in client-go's delaying
    // queue, a key already waiting keeps one retry (the earliest), so once everything is Running
    // the loop falls quiet instead of re-syncing ten times a second for a minute.
    let mut sim = Sim::new(5);
    for i in 1..=30 {
        sim.add_node(NodeConfig::new(&format!("node-{i}"))).unwrap();
    }
    sim.submit(ApiRequest::Create(object(&deployment_yaml("web", 1500, "nginx:1.14.2", "10m")))).unwrap();
    sim.settle(Duration::mins(5)).unwrap();
    assert_eq!(pods(&sim).iter().filter(|p| p.phase() == PodPhase::Running).count(), 1500);
    let before = replica_set_turns(&sim);
    sim.advance(Duration::secs(30));
    let after = replica_set_turns(&sim);
    assert!(after - before <= 1, "the ReplicaSet loop synced {} times in 30 s of a steady cluster", after - before);
}

/// kube-apiserver's `--event-ttl` (1 h): each Event is put in etcd with a lease, which etcd
/// expires an hour after the Event's last write. kube-apiserver reuses one lease for a minute of
/// writes and grants it for 61 minutes, so an Event goes between 60 and 61 minutes after its
/// last write; a repeat's count bump is a write and starts the hour again.
#[test]
fn events_expire_one_hour_after_their_last_write() {
    let mut sim = with_web(1);
    let written: Vec<(String, Time)> =
        sim.objects(Kind::Event).filter_map(|o| o.as_event()).map(|e| (e.metadata.name.to_string(), e.last_timestamp.unwrap())).collect();
    assert!(written.len() >= 5, "Scheduled, Pulled, Created, Started, SuccessfulCreate, ScalingReplicaSet: {}", written.len());
    let exists = |sim: &Sim, name: &str| sim.api().get(&ObjectKey::new(Kind::Event, "default", name)).is_some();
    // Half an hour on, the recorder writes the Scheduled event again, as a repeat: count 2.
    sim.advance(Duration::mins(30));
    let mut repeat = events(&sim, "Scheduled")[0].clone();
    let renewed = repeat.metadata.name.to_string();
    repeat.count = 2;
    repeat.last_timestamp = Some(sim.now());
    sim.submit(ApiRequest::Update(Object::Event(repeat))).unwrap();
    let renewed_at = sim.now();
    let last_write = *written.iter().map(|(_, t)| t).max().unwrap();
    sim.run_until(written.iter().map(|(_, t)| *t).min().unwrap() + Duration::mins(60));
    assert!(written.iter().all(|(name, _)| exists(&sim, name)), "no Event goes within the hour");
    // Second by second through the next two minutes: each goes within 61 minutes of its write.
    let mut gone_at: Vec<(String, Time)> = Vec::new();
    while sim.now() < last_write + Duration::mins(62) {
        sim.advance(Duration::secs(1));
        for (name, at) in &written {
            if !exists(&sim, name) && !gone_at.iter().any(|(n, _)| n == name) {
                gone_at.push((name.clone(), sim.now()));
                let age = sim.now().since(*at);
                assert!(age > Duration::mins(60) && age <= Duration::secs(61 * 60 + 1), "{name} went {age} after its write");
            }
        }
    }
    assert_eq!(gone_at.len(), written.len() - 1, "every Event but the renewed one is gone: {gone_at:?}");
    assert!(exists(&sim, &renewed), "the repeat renewed {renewed} for another hour");
    // A watcher hears the expiry as any deletion: DELETED in etcd's change log.
    let history = sim.api().etcd.changes_since(sim.api().etcd.compacted_revision()).unwrap();
    let deleted = history.filter(|c| c.object.kind() == Kind::Event && c.type_ == kubeloop::store::ChangeType::Deleted).count();
    assert_eq!(deleted, written.len() - 1);
    sim.run_until(renewed_at + Duration::mins(60));
    assert!(exists(&sim, &renewed));
    sim.run_until(renewed_at + Duration::mins(61) + Duration::secs(1));
    assert!(!exists(&sim, &renewed), "an hour after its last write");
    assert_eq!(sim.objects(Kind::Event).count(), 0);
    assert_invariants(&sim);
}

/// The recorder remembers an Event longer than kube-apiserver keeps it: a repeat after the hour
/// is an update that finds it gone (404), and client-go's recordToSink then creates it again,
/// with its count and first timestamp.
#[test]
fn a_repeat_of_an_expired_event_creates_it_again_with_its_count() {
    let mut sim = with_web(1);
    let scale = |sim: &mut Sim, replicas: i32| {
        let mut d = (*get(sim, Kind::Deployment, "web")).clone();
        if let Object::Deployment(dep) = &mut d {
            dep.spec.replicas = Some(replicas);
        }
        sim.submit(ApiRequest::Update(d)).unwrap();
        sim.settle(Duration::mins(2)).unwrap();
    };
    let scaled_up = |sim: &Sim| events(sim, "ScalingReplicaSet").into_iter().find(|e| e.message.contains("from 1 to 2"));
    scale(&mut sim, 2);
    let first = scaled_up(&sim).expect("Scaled up replica set ... from 1 to 2");
    assert_eq!(first.count, 1);
    scale(&mut sim, 1);
    sim.advance(Duration::mins(62));
    assert!(scaled_up(&sim).is_none(), "expired an hour after its write");
    scale(&mut sim, 2);
    let again = scaled_up(&sim).expect("the repeat wrote it again");
    assert_eq!((again.count, again.first_timestamp, &again.metadata.name), (2, first.first_timestamp, &first.metadata.name));
    assert!(again.last_timestamp > first.last_timestamp);
    assert_invariants(&sim);
}

fn daemon_set_yaml(name: &str, extra_spec: &str, pod_spec: &str) -> String {
    format!(
        "apiVersion: apps/v1\nkind: DaemonSet\nmetadata: {{name: {name}}}\nspec:\n  selector: {{matchLabels: {{app: {name}}}}}\n{extra_spec}  template:\n    metadata: {{labels: {{app: {name}}}}}\n    spec:\n{pod_spec}      containers:\n      - name: agent\n        image: busybox\n        command: [sleep, '3600']\n        resources: {{requests: {{cpu: 50m, memory: 32Mi}}}}\n"
    )
}

/// The live pods of a DaemonSet (not being deleted), by the node they are bound to.
fn daemon_pods(sim: &Sim, ds: &str) -> Vec<(String, Pod)> {
    let mut out: Vec<(String, Pod)> = pods(sim)
        .into_iter()
        .filter(|p| p.metadata.controller_ref().is_some_and(|r| r.kind == "DaemonSet" && r.name == ds) && !p.metadata.is_deleting())
        .map(|p| (p.spec.node_name.clone().unwrap_or_default(), p))
        .collect();
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out
}

fn daemon_nodes(sim: &Sim, ds: &str) -> Vec<String> {
    daemon_pods(sim, ds).into_iter().map(|(n, _)| n).collect()
}

fn with_daemon_set(nodes: usize, extra_spec: &str, pod_spec: &str) -> Sim {
    let mut sim = cluster(nodes);
    sim.submit(ApiRequest::Create(object(&daemon_set_yaml("agent", extra_spec, pod_spec)))).unwrap();
    sim.settle(Duration::mins(2)).unwrap();
    sim
}

fn update_node(sim: &mut Sim, name: &str, change: impl FnOnce(&mut Node)) {
    let mut node = sim.api().get(&ObjectKey::new(Kind::Node, "", name)).and_then(|o| o.as_node().cloned()).unwrap();
    change(&mut node);
    sim.submit(ApiRequest::Update(Object::Node(node))).unwrap();
}

#[test]
fn a_daemon_set_runs_one_pod_per_node_bound_by_the_scheduler_through_a_node_name_affinity() {
    let sim = with_daemon_set(3, "", "");
    let pods = daemon_pods(&sim, "agent");
    assert_eq!(daemon_nodes(&sim, "agent"), ["node-1", "node-2", "node-3"]);
    for (node, pod) in &pods {
        assert!(pod.metadata.name.starts_with("agent-") && pod.metadata.name.len() == "agent-".len() + 5);
        let term = &pod.spec.affinity.as_ref().unwrap().node_affinity.as_ref().unwrap();
        let terms = &term.required_during_scheduling_ignored_during_execution.as_ref().unwrap().node_selector_terms;
        assert_eq!(terms[0].match_fields[0].key, "metadata.name");
        assert_eq!(&terms[0].match_fields[0].values, std::slice::from_ref(node));
        assert_eq!(pod.metadata.labels.get("pod-template-generation").map(String::as_str), Some("1"));
        assert!(pod.metadata.labels.contains_key("controller-revision-hash"));
        assert!(pod.is_ready());
    }
    assert_eq!(events(&sim, "Scheduled").iter().filter(|e| e.message.starts_with("Successfully assigned default/agent-")).count(), 3);
    let created = events(&sim, "SuccessfulCreate");
    assert_eq!(created.iter().filter(|e| e.involved_object.kind == "DaemonSet").count(), 3);
    assert!(created.iter().all(|e| e.message.starts_with("Created pod: agent-")));
    let ds = get(&sim, Kind::DaemonSet, "agent");
    let st = &ds.as_daemon_set().unwrap().status;
    assert_eq!(
        (st.desired_number_scheduled, st.current_number_scheduled, st.number_ready, st.updated_number_scheduled, st.number_available),
        (3, 3, 3, 3, 3)
    );
    assert_eq!((st.number_misscheduled, st.number_unavailable, st.observed_generation), (0, 0, 1));
    assert_invariants(&sim);
}

#[test]
fn a_node_that_joins_later_gets_a_daemon_pod() {
    let mut sim = with_daemon_set(2, "", "");
    sim.add_node(NodeConfig::new("node-3")).unwrap();
    sim.settle(Duration::mins(2)).unwrap();
    assert_eq!(daemon_nodes(&sim, "agent"), ["node-1", "node-2", "node-3"]);
    let st = get(&sim, Kind::DaemonSet, "agent").as_daemon_set().unwrap().status.clone();
    assert_eq!((st.desired_number_scheduled, st.number_available), (3, 3));
    assert_invariants(&sim);
}

#[test]
fn a_tainted_node_without_a_toleration_and_a_node_selector_mismatch_get_no_daemon_pod() {
    let mut sim = cluster(3);
    update_node(&mut sim, "node-2", |n| {
        n.spec.taints.push(Taint { key: "dedicated".into(), value: "db".into(), effect: "NoSchedule".into(), ..Default::default() })
    });
    update_node(&mut sim, "node-3", |n| {
        n.metadata.labels.insert("disk".into(), "hdd".into());
    });
    update_node(&mut sim, "node-1", |n| {
        n.metadata.labels.insert("disk".into(), "ssd".into());
    });
    sim.submit(ApiRequest::Create(object(&daemon_set_yaml("agent", "", "      nodeSelector: {disk: ssd}\n")))).unwrap();
    sim.submit(ApiRequest::Create(object(&daemon_set_yaml("everywhere", "", "")))).unwrap();
    sim.settle(Duration::mins(2)).unwrap();
    assert_eq!(daemon_nodes(&sim, "agent"), ["node-1"], "the nodeSelector picks node-1 only");
    assert_eq!(daemon_nodes(&sim, "everywhere"), ["node-1", "node-3"], "node-2's NoSchedule taint is not tolerated");
    let st = get(&sim, Kind::DaemonSet, "everywhere").as_daemon_set().unwrap().status.clone();
    assert_eq!((st.desired_number_scheduled, st.current_number_scheduled), (2, 2));
    // Relabelling node-3 makes its pod misscheduled, and the controller removes it.
    update_node(&mut sim, "node-1", |n| {
        n.metadata.labels.insert("disk".into(), "hdd".into());
    });
    sim.settle(Duration::mins(2)).unwrap();
    assert!(daemon_nodes(&sim, "agent").is_empty());
    assert_eq!(events(&sim, "SuccessfulDelete").iter().filter(|e| e.involved_object.name == "agent").count(), 1);
    assert_invariants(&sim);
}

#[test]
fn the_daemon_tolerations_keep_the_pod_on_a_node_that_goes_not_ready() {
    use kubeloop::sim::ComponentId;
    let mut sim = with_daemon_set(2, "", "");
    let before: Vec<String> = daemon_pods(&sim, "agent").iter().map(|(_, p)| p.metadata.name.to_string()).collect();
    let tolerations = &daemon_pods(&sim, "agent")[0].1.spec.tolerations;
    for (key, effect) in [
        ("node.kubernetes.io/not-ready", "NoExecute"),
        ("node.kubernetes.io/unreachable", "NoExecute"),
        ("node.kubernetes.io/disk-pressure", "NoSchedule"),
        ("node.kubernetes.io/memory-pressure", "NoSchedule"),
        ("node.kubernetes.io/pid-pressure", "NoSchedule"),
        ("node.kubernetes.io/unschedulable", "NoSchedule"),
    ] {
        let t = tolerations.iter().find(|t| t.key == key && t.effect == effect).unwrap_or_else(|| panic!("{key}:{effect}"));
        assert_eq!((t.operator.as_deref(), t.toleration_seconds), (Some("Exists"), None), "{key}: no 300 s limit");
    }
    sim.stop_component(&ComponentId::Kubelet("node-1".into()));
    // Far past the 40 s grace period and the 300 s an ordinary pod tolerates.
    sim.run_until(sim.now() + Duration::mins(8));
    let node = get_node(&sim, "node-1");
    assert!(
        node.spec.taints.iter().any(|t| t.key == "node.kubernetes.io/unreachable" && t.effect == "NoExecute"),
        "{:?}",
        node.spec.taints
    );
    let after: Vec<String> = daemon_pods(&sim, "agent").iter().map(|(_, p)| p.metadata.name.to_string()).collect();
    assert_eq!(after, before, "no eviction, no replacement");
    assert_invariants(&sim);
}

fn get_node(sim: &Sim, name: &str) -> Node {
    sim.api().get(&ObjectKey::new(Kind::Node, "", name)).and_then(|o| o.as_node().cloned()).unwrap()
}

fn set_daemon_image(sim: &mut Sim, image: &str) {
    let mut ds = get(sim, Kind::DaemonSet, "agent").as_daemon_set().unwrap().clone();
    ds.spec.template.spec.containers[0].image = image.into();
    sim.submit(ApiRequest::Update(Object::DaemonSet(ds))).unwrap();
}

#[test]
fn a_daemon_set_rolling_update_replaces_pods_node_by_node_within_max_unavailable() {
    let mut sim = with_daemon_set(4, "", "");
    set_daemon_image(&mut sim, "busybox:1.37");
    let ds = get(&sim, Kind::DaemonSet, "agent");
    assert_eq!(ds.meta().annotations.get("deprecated.daemonset.template.generation").map(String::as_str), Some("2"));
    let deadline = sim.now() + Duration::mins(3);
    let mut most_unavailable = 0;
    let mut updated_at_once = 0;
    while sim.now() < deadline {
        let Some(t) = sim.next_time() else { break };
        sim.run_until(t);
        let live = daemon_pods(&sim, "agent");
        let available = live.iter().filter(|(_, p)| p.is_available(0, sim.now())).count();
        most_unavailable = most_unavailable.max(4 - available.min(4));
        let new = live.iter().filter(|(_, p)| p.spec.containers[0].image == "busybox:1.37").count();
        updated_at_once = updated_at_once.max(new);
        if new == 4 && available == 4 {
            break;
        }
    }
    assert_eq!(most_unavailable, 1, "maxUnavailable 1: never two nodes without an available pod");
    assert_eq!(updated_at_once, 4);
    sim.settle(Duration::mins(1)).unwrap();
    let st = get(&sim, Kind::DaemonSet, "agent").as_daemon_set().unwrap().status.clone();
    assert_eq!((st.updated_number_scheduled, st.number_available, st.observed_generation), (4, 4, 2));
    assert!(daemon_pods(&sim, "agent")
        .iter()
        .all(|(_, p)| p.metadata.labels.get("pod-template-generation").map(String::as_str) == Some("2")));
    assert_eq!(events(&sim, "SuccessfulDelete").iter().filter(|e| e.message.starts_with("Deleted pod: agent-")).count(), 4);
    assert_invariants(&sim);
}

#[test]
fn an_on_delete_daemon_set_replaces_only_the_pods_someone_deletes() {
    let mut sim = with_daemon_set(3, "  updateStrategy: {type: OnDelete}\n", "");
    set_daemon_image(&mut sim, "busybox:1.37");
    sim.settle(Duration::mins(2)).unwrap();
    let images = |sim: &Sim| daemon_pods(sim, "agent").iter().map(|(_, p)| p.spec.containers[0].image.clone()).collect::<Vec<_>>();
    assert_eq!(images(&sim), ["busybox", "busybox", "busybox"], "nothing replaced on its own");
    let st = get(&sim, Kind::DaemonSet, "agent").as_daemon_set().unwrap().status.clone();
    assert_eq!((st.updated_number_scheduled, st.observed_generation), (0, 2));
    let (_, victim) = daemon_pods(&sim, "agent").into_iter().find(|(n, _)| n == "node-2").unwrap();
    sim.submit(ApiRequest::Delete(DeleteRequest::new(ObjectKey::of(Kind::Pod, &victim.metadata)))).unwrap();
    sim.settle(Duration::mins(2)).unwrap();
    let live = daemon_pods(&sim, "agent");
    let on = |node: &str| live.iter().find(|(n, _)| n == node).map(|(_, p)| p.spec.containers[0].image.as_str()).unwrap();
    assert_eq!((on("node-1"), on("node-2"), on("node-3")), ("busybox", "busybox:1.37", "busybox"));
    assert_invariants(&sim);
}

/// The node a daemon pod is bound to, or the one its node-name affinity pins it to.
fn target_node(pod: &Pod) -> String {
    let pinned = || {
        let required = pod.spec.affinity.as_ref()?.node_affinity.as_ref()?.required_during_scheduling_ignored_during_execution.as_ref()?;
        required.node_selector_terms.first()?.match_fields.first()?.values.first().cloned()
    };
    pod.spec.node_name.clone().or_else(pinned).unwrap_or_default()
}

#[test]
fn a_surging_daemon_set_starts_the_new_pod_beside_the_old_and_never_drops_an_available_node() {
    let mut sim = with_daemon_set(3, "  updateStrategy: {rollingUpdate: {maxSurge: 1, maxUnavailable: 0}}\n", "");
    set_daemon_image(&mut sim, "busybox:1.37");
    let deadline = sim.now() + Duration::mins(3);
    let (mut fewest_available, mut most_surging, mut doubled_up) = (3, 0, false);
    while sim.now() < deadline {
        let Some(t) = sim.next_time() else { break };
        sim.run_until(t);
        let live: Vec<Pod> = daemon_pods(&sim, "agent").into_iter().map(|(_, p)| p).collect();
        let is_new = |p: &Pod| p.spec.containers[0].image == "busybox:1.37";
        let available = |p: &Pod| p.is_available(0, sim.now());
        let mut nodes_available: Vec<String> = live.iter().filter(|p| available(p)).map(target_node).collect();
        nodes_available.sort();
        nodes_available.dedup();
        fewest_available = fewest_available.min(nodes_available.len());
        // A surge in progress: a node whose new pod is not available yet beside its old one.
        let surging = live
            .iter()
            .filter(|p| is_new(p) && !available(p))
            .filter(|p| live.iter().any(|o| !is_new(o) && target_node(o) == target_node(p)))
            .count();
        most_surging = most_surging.max(surging);
        doubled_up |= surging > 0;
        if live.len() == 3 && live.iter().all(|p| is_new(p) && p.is_ready()) {
            break;
        }
    }
    assert_eq!(fewest_available, 3, "maxUnavailable 0: every node keeps an available pod throughout");
    assert_eq!(most_surging, 1, "maxSurge 1: one node at a time runs a new pod not yet available beside its old one");
    assert!(doubled_up, "the new pod starts beside the old one on its node");
    sim.settle(Duration::mins(1)).unwrap();
    let images: Vec<String> = daemon_pods(&sim, "agent").iter().map(|(_, p)| p.spec.containers[0].image.clone()).collect();
    assert_eq!(images, ["busybox:1.37", "busybox:1.37", "busybox:1.37"]);
    assert_invariants(&sim);
}
