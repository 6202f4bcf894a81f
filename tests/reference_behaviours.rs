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
    sim.check_invariants_every_step();
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
fn a_crashed_container_shows_crash_loop_back_off_on_the_sync_its_exit_brings() {
    // The container exits 1 five seconds after each start. The first exit is restarted at once;
    // from the second on, the sync the PLEG brings (relist every 1 s) finds the back-off and
    // reports it: kubectl's STATUS turns CrashLoopBackOff within about 2 s of the exit, not at
    // the pod worker's retry 10–15 s later, with the exit in lastState and the restarts counted.
    let scenario = kubeloop::command::scenario::Scenario::builtin("default").unwrap();
    let mut session = kubeloop::command::Session::new(scenario, None).unwrap();
    session.sim_mut().check_invariants_every_step();
    session.settle(Duration::mins(1)).unwrap();
    session.add_file(
        "crash.yaml",
        "apiVersion: v1\nkind: Pod\nmetadata: {name: crash}\nspec:\n  containers:\n  - name: app\n    image: busybox:1.36\n    command: [sh, -c, 'sleep 5; exit 1']\n",
    );
    assert!(session.execute("kubectl apply -f crash.yaml").ok);
    let (mut shown, mut since) = (String::new(), session.sim().now());
    let mut back_offs: Vec<(Time, ContainerStatus)> = Vec::new();
    while back_offs.len() < 3 {
        session.advance(Duration::millis(100));
        let now = session.sim().now();
        assert!(now < Time(240_000), "three back-offs within 4 minutes: {back_offs:?}");
        let out = session.execute("kubectl get pod crash --no-headers");
        let status = out.stdout.split_whitespace().nth(2).unwrap_or_default().to_string();
        if status != shown {
            (shown, since) = (status.clone(), now);
            if status == "CrashLoopBackOff" {
                let pod = get(session.sim(), Kind::Pod, "crash");
                back_offs.push((now, pod.as_pod().unwrap().status.container_statuses[0].clone()));
            }
        }
        if status == "Error" {
            assert!(now.since(since) <= Duration::secs(2), "Error for longer than 2 s, from {since:?} to {now:?}");
        }
    }
    let uid = get(session.sim(), Kind::Pod, "crash").meta().uid.clone();
    for (i, (seen, cs)) in back_offs.iter().enumerate() {
        let last = cs.last_state.terminated.as_ref().expect("the exit is in lastState");
        assert_eq!((last.exit_code, last.reason.as_deref()), (1, Some("Error")));
        let exited = last.finished_at.expect("finishedAt");
        // finishedAt is in whole seconds: the exit was within the second after it.
        assert!(seen.since(exited) < Duration::secs(3), "back-off {i} shown at {seen:?}, exit at {exited:?}");
        let waiting = cs.state.waiting.as_ref().expect("waiting");
        let delay = ["10s", "20s", "40s"][i];
        assert_eq!(waiting.reason.as_deref(), Some("CrashLoopBackOff"));
        assert_eq!(
            waiting.message.as_deref(),
            Some(format!("back-off {delay} restarting failed container=app pod=crash_default({uid})").as_str())
        );
        assert_eq!(cs.restart_count, i as i32 + 1, "the restarts so far are counted");
    }
    assert_invariants(session.sim());
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
    let history = sim.api().changes_since(sim.api().compacted_revision()).unwrap();
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

// --- Jobs (pkg/controller/job) ---

/// A Job running `script` in busybox, with the spec lines given (indented two spaces).
fn job_yaml(name: &str, script: &str, restart: &str, spec: &str) -> String {
    format!(
        "apiVersion: batch/v1\nkind: Job\nmetadata: {{name: {name}}}\nspec:\n{spec}  template:\n    spec:\n      restartPolicy: {restart}\n      containers:\n      - name: c\n        image: busybox\n        command: [\"sh\", \"-c\", \"{script}\"]\n"
    )
}

fn job(sim: &Sim, name: &str) -> Job {
    get(sim, Kind::Job, name).as_job().cloned().unwrap()
}

fn job_pods(sim: &Sim, name: &str) -> Vec<Pod> {
    let mut out: Vec<Pod> =
        pods(sim).into_iter().filter(|p| p.metadata.labels.get("batch.kubernetes.io/job-name").map(String::as_str) == Some(name)).collect();
    out.sort_by_key(|p| (p.metadata.creation_timestamp, p.metadata.name.clone()));
    out
}

fn condition(j: &Job, type_: &str) -> Option<(String, String, String)> {
    j.status.condition(type_).map(|c| (c.status.clone(), c.reason.clone().unwrap_or_default(), c.message.clone().unwrap_or_default()))
}

fn job_events(sim: &Sim, name: &str, reason: &str) -> Vec<Event> {
    events(sim, reason).into_iter().filter(|e| e.involved_object.kind == "Job" && e.involved_object.name == name).collect()
}

/// Runs the simulation in half-second steps for `d`, returning the most active pods seen.
fn run_counting_active(sim: &mut Sim, name: &str, d: Duration) -> usize {
    let mut most = 0;
    for _ in 0..d.0 / 500 {
        sim.advance(Duration::millis(500));
        let active = job_pods(sim, name).iter().filter(|p| !p.is_terminal() && !p.metadata.is_deleting()).count();
        most = most.max(active);
    }
    most
}

#[test]
fn a_job_runs_pods_to_completion_parallelism_at_a_time_and_is_complete_at_completions() {
    let mut sim = cluster(2);
    let yaml = job_yaml("count", "echo working; sleep 5", "Never", "  completions: 5\n  parallelism: 2\n");
    sim.submit(ApiRequest::Create(object(&yaml))).unwrap();
    sim.advance(Duration::secs(2));
    let running = job_pods(&sim, "count");
    assert_eq!(running.len(), 2, "parallelism 2: two pods at first");
    for p in &running {
        assert_eq!(p.metadata.finalizers, ["batch.kubernetes.io/job-tracking"], "each pod is tracked until counted");
        assert_eq!(p.metadata.controller_ref().map(|r| r.kind.as_str()), Some("Job"));
    }
    let most = run_counting_active(&mut sim, "count", Duration::secs(60));
    assert_eq!(most, 2, "never more than parallelism pods active");
    let j = job(&sim, "count");
    assert_eq!((j.status.succeeded, j.status.failed, j.status.active), (5, 0, 0));
    let reached = ("True".to_string(), "CompletionsReached".to_string(), "Reached expected number of succeeded pods".to_string());
    assert_eq!(condition(&j, "SuccessCriteriaMet"), Some(reached.clone()));
    assert_eq!(condition(&j, "Complete"), Some(reached));
    assert!(j.status.completion_time.is_some() && j.status.uncounted_terminated_pods.is_none());
    let done = job_pods(&sim, "count");
    assert_eq!(done.len(), 5, "exactly completions pods were created");
    assert!(done.iter().all(|p| p.phase() == PodPhase::Succeeded && p.metadata.finalizers.is_empty()));
    let terminated = done[0].status.container_statuses[0].state.terminated.clone().unwrap();
    assert_eq!((terminated.exit_code, terminated.reason.as_deref()), (0, Some("Completed")));
    assert_eq!(job_events(&sim, "count", "SuccessfulCreate").len(), 5);
    let completed = job_events(&sim, "count", "Completed");
    assert_eq!(completed.iter().map(|e| e.message.as_str()).collect::<Vec<_>>(), ["Job completed"]);
    assert_invariants(&sim);
}

#[test]
fn failed_pods_are_replaced_after_10s_20s_40s_of_back_off_until_the_backoff_limit_fails_the_job() {
    let mut sim = cluster(2);
    sim.submit(ApiRequest::Create(object(&job_yaml("flaky", "exit 3", "Never", "  backoffLimit: 3\n")))).unwrap();
    sim.advance(Duration::mins(4));
    let all = job_pods(&sim, "flaky");
    assert_eq!(all.len(), 4, "the first pod and three replacements: one failure more than backoffLimit 3");
    for p in &all {
        assert_eq!(p.phase(), PodPhase::Failed);
        let t = p.status.container_statuses[0].state.terminated.clone().unwrap();
        assert_eq!((t.exit_code, t.reason.as_deref()), (3, Some("Error")));
    }
    // Each replacement waits 10 s × 2^(n-1) after the n-th failure (plus the latency of
    // seeing it), never less.
    for (n, pair) in all.windows(2).enumerate() {
        let failed_at = pair[0].status.container_statuses[0].state.terminated.as_ref().unwrap().finished_at.unwrap();
        let next = pair[1].metadata.creation_timestamp.unwrap();
        let wait = next.since(failed_at);
        let backoff = Duration::secs(10 << n);
        assert!(wait >= backoff && wait.0 < backoff.0 + 2_000, "replacement {} came {wait:?} after the failure, want {backoff:?}", n + 1);
    }
    let j = job(&sim, "flaky");
    assert_eq!((j.status.failed, j.status.succeeded, j.status.active), (4, 0, 0));
    let exceeded = ("True".to_string(), "BackoffLimitExceeded".to_string(), "Job has reached the specified backoff limit".to_string());
    assert_eq!(condition(&j, "FailureTarget"), Some(exceeded.clone()));
    assert_eq!(condition(&j, "Failed"), Some(exceeded));
    assert!(j.status.completion_time.is_none(), "only a complete Job has a completion time");
    let warning = job_events(&sim, "flaky", "BackoffLimitExceeded");
    assert_eq!(
        warning.iter().map(|e| (e.type_.as_str(), e.message.as_str())).collect::<Vec<_>>(),
        [("Warning", "Job has reached the specified backoff limit")]
    );
    assert_invariants(&sim);
}

#[test]
fn the_pod_failure_back_off_doubles_from_10s_and_stops_at_10_minutes() {
    use kubeloop::controllers::job::pod_failure_backoff;
    let secs: Vec<u64> = (1..=8).map(|n| pod_failure_backoff(n).0 / 1000).collect();
    assert_eq!(secs, [10, 20, 40, 80, 160, 320, 600, 600]);
}

#[test]
fn with_restart_policy_on_failure_container_restarts_count_against_the_backoff_limit() {
    let mut sim = cluster(2);
    sim.submit(ApiRequest::Create(object(&job_yaml("retry", "sleep 1; exit 1", "OnFailure", "  backoffLimit: 2\n")))).unwrap();
    // The kubelet restarts the container in the same pod, with its crash back-off (10 s, 20 s).
    let mut most_restarts = 0;
    for _ in 0..240 {
        sim.advance(Duration::secs(1));
        let restarts = job_pods(&sim, "retry").iter().flat_map(|p| p.status.container_statuses.iter().map(|c| c.restart_count)).max();
        most_restarts = most_restarts.max(restarts.unwrap_or(0));
        if job(&sim, "retry").status.has_true("FailureTarget") {
            break;
        }
    }
    assert_eq!(most_restarts, 2, "the Job fails when the restarts reach backoffLimit 2");
    sim.advance(Duration::mins(1));
    let j = job(&sim, "retry");
    assert_eq!(condition(&j, "Failed").map(|c| c.1), Some("BackoffLimitExceeded".to_string()));
    assert_eq!(job_events(&sim, "retry", "SuccessfulCreate").len(), 1, "one pod, never replaced");
    assert_eq!(j.status.failed, 1, "the running pod, deleted when the Job failed, counts as failed");
    assert_invariants(&sim);
}

#[test]
fn a_job_active_longer_than_active_deadline_seconds_fails_with_deadline_exceeded() {
    let mut sim = cluster(2);
    sim.submit(ApiRequest::Create(object(&job_yaml("slow", "sleep 3600", "Never", "  activeDeadlineSeconds: 10\n")))).unwrap();
    sim.advance(Duration::secs(9));
    let j = job(&sim, "slow");
    assert!(j.status.conditions.is_empty(), "still within its deadline");
    assert_eq!(j.status.active, 1);
    sim.advance(Duration::mins(2));
    let j = job(&sim, "slow");
    let exceeded = ("True".to_string(), "DeadlineExceeded".to_string(), "Job was active longer than specified deadline".to_string());
    assert_eq!(condition(&j, "FailureTarget"), Some(exceeded.clone()));
    assert_eq!(condition(&j, "Failed"), Some(exceeded));
    let failed_at = j.status.condition("FailureTarget").unwrap().last_transition_time.unwrap();
    let started = j.status.start_time.unwrap();
    assert!(
        failed_at.since(started) >= Duration::secs(10) && failed_at.since(started) < Duration::secs(11),
        "{:?}",
        failed_at.since(started)
    );
    assert_eq!(job_events(&sim, "slow", "SuccessfulDelete").len(), 1, "the active pod was deleted");
    assert_eq!(job_events(&sim, "slow", "DeadlineExceeded")[0].type_, "Warning");
    assert_eq!(j.status.active, 0);
    assert!(job_pods(&sim, "slow").is_empty(), "the deleted pod is gone once its finalizer is off");
    assert_invariants(&sim);
}

#[test]
fn suspending_a_job_deletes_its_active_pods_without_counting_failures_and_resuming_starts_new_ones() {
    let mut sim = cluster(2);
    sim.submit(ApiRequest::Create(object(&job_yaml("batch", "sleep 3600", "Never", "  completions: 4\n  parallelism: 2\n")))).unwrap();
    sim.advance(Duration::secs(10));
    assert_eq!(job(&sim, "batch").status.active, 2);
    let set_suspend = |sim: &mut Sim, suspend: bool| {
        let mut j = job(sim, "batch");
        j.spec.suspend = Some(suspend);
        sim.submit(ApiRequest::Update(Object::Job(j))).unwrap();
    };
    set_suspend(&mut sim, true);
    sim.advance(Duration::secs(45));
    let j = job(&sim, "batch");
    assert_eq!((j.status.active, j.status.failed), (0, 0), "deleted by the controller, not failed");
    assert_eq!(condition(&j, "Suspended"), Some(("True".into(), "JobSuspended".into(), "Job suspended".into())));
    assert!(job_pods(&sim, "batch").is_empty());
    assert_eq!(job_events(&sim, "batch", "SuccessfulDelete").len(), 2);
    assert_eq!(job_events(&sim, "batch", "Suspended").len(), 1);
    set_suspend(&mut sim, false);
    sim.advance(Duration::secs(10));
    let j = job(&sim, "batch");
    assert_eq!(condition(&j, "Suspended"), Some(("False".into(), "JobResumed".into(), "Job resumed".into())));
    assert_eq!(j.status.active, 2, "parallelism pods again");
    assert_eq!(job_events(&sim, "batch", "Resumed").len(), 1);
    assert_invariants(&sim);
}

#[test]
fn deleting_a_job_deletes_its_pods_in_the_background_once_their_finalizers_are_off() {
    let mut sim = cluster(2);
    sim.submit(ApiRequest::Create(object(&job_yaml("gone", "sleep 3600", "Never", "  parallelism: 2\n  completions: 2\n")))).unwrap();
    sim.advance(Duration::secs(10));
    assert_eq!(job_pods(&sim, "gone").len(), 2);
    sim.submit(ApiRequest::Delete(DeleteRequest::new(ObjectKey::new(Kind::Job, "default", "gone")))).unwrap();
    sim.advance(Duration::mins(2));
    assert!(job_pods(&sim, "gone").is_empty(), "{:?}", job_pods(&sim, "gone").iter().map(|p| &p.metadata).collect::<Vec<_>>());
    assert_invariants(&sim);
}

#[test]
fn an_indexed_job_runs_one_pod_per_index_and_records_completed_indexes() {
    let mut sim = cluster(2);
    let yaml = job_yaml("idx", "sleep 2", "Never", "  completions: 3\n  parallelism: 3\n  completionMode: Indexed\n");
    sim.submit(ApiRequest::Create(object(&yaml))).unwrap();
    sim.advance(Duration::secs(1));
    let mut indexes: Vec<String> =
        job_pods(&sim, "idx").iter().map(|p| p.metadata.annotations["batch.kubernetes.io/job-completion-index"].clone()).collect();
    indexes.sort();
    assert_eq!(indexes, ["0", "1", "2"]);
    for p in job_pods(&sim, "idx") {
        let i = &p.metadata.labels["batch.kubernetes.io/job-completion-index"];
        assert!(p.metadata.name.starts_with(&format!("idx-{i}-")), "{}", p.metadata.name);
        assert_eq!(p.spec.hostname.as_deref(), Some(format!("idx-{i}").as_str()), "an Indexed pod's hostname is <job>-<index>");
    }
    sim.advance(Duration::mins(2));
    let j = job(&sim, "idx");
    assert_eq!((j.status.succeeded, j.status.completed_indexes.as_deref()), (3, Some("0-2")));
    assert!(j.status.has_true("Complete"));
    assert_invariants(&sim);
}

#[test]
fn a_finished_job_with_ttl_seconds_after_finished_is_deleted_with_its_pods_once_the_ttl_passes() {
    let mut sim = cluster(2);
    sim.submit(ApiRequest::Create(object(&job_yaml("short", "echo done", "Never", "  ttlSecondsAfterFinished: 10\n")))).unwrap();
    let mut finished = None;
    for _ in 0..120 {
        sim.advance(Duration::millis(500));
        let Some(j) = sim.api().get(&ObjectKey::new(Kind::Job, "default", "short")).and_then(|o| o.as_job().cloned()) else { break };
        finished = j.status.condition("Complete").and_then(|c| c.last_transition_time).or(finished);
    }
    let finished = finished.expect("the Job completed");
    let gone_at = sim.now();
    assert!(sim.api().get(&ObjectKey::new(Kind::Job, "default", "short")).is_none(), "deleted by the TTL-after-finished controller");
    let lived = gone_at.since(finished);
    assert!(lived >= Duration::secs(10) && lived < Duration::secs(11), "the Job went {lived:?} after it finished");
    sim.advance(Duration::secs(30));
    assert!(job_pods(&sim, "short").is_empty(), "its pods went with it (background propagation)");
    assert_invariants(&sim);
}

#[test]
fn a_job_restored_from_an_etcd_snapshot_taken_mid_run_is_counted_again_and_completes() {
    let mut sim = cluster(2);
    sim.submit(ApiRequest::Create(object(&job_yaml("again", "sleep 8", "Never", "  completions: 2\n")))).unwrap();
    // Mid-run: the first pod's container is running (how long the pull and start take is drawn
    // from the seed, so the test waits for it rather than for a fixed time).
    while !job_pods(&sim, "again").iter().any(|p| p.phase() == PodPhase::Running) {
        sim.advance(Duration::millis(500));
    }
    sim.advance(Duration::secs(1));
    sim.etcd_snapshot_save();
    sim.advance(Duration::secs(40));
    assert!(job(&sim, "again").status.has_true("Complete"), "done before the restore");
    sim.etcd_restore().unwrap();
    sim.advance(Duration::mins(2));
    let j = job(&sim, "again");
    assert!(j.status.has_true("Complete"), "the restored Job is driven to completion again: {:?}", j.status);
    assert_eq!(j.status.succeeded, 2);
    assert!(job_pods(&sim, "again").iter().all(|p| p.metadata.finalizers.is_empty()), "every pod counted");
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
    // The nodes' changes reach the controller's cache before the DaemonSets do (submitted in
    // the same instant, the watch latencies drawn from the seed decide which arrives first).
    sim.advance(Duration::secs(1));
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

/// A DaemonSet's ControllerRevisions as (name, revision), lowest number first.
fn daemon_revisions(sim: &Sim, ds: &str) -> Vec<(String, i64)> {
    let mut out: Vec<(String, i64)> = sim
        .objects(Kind::ControllerRevision)
        .filter_map(|o| o.as_controller_revision())
        .filter(|r| r.metadata.controller_ref().is_some_and(|c| c.kind == "DaemonSet" && c.name == ds))
        .map(|r| (r.metadata.name.to_string(), r.revision))
        .collect();
    out.sort_by_key(|(_, n)| *n);
    out
}

/// The revision hash every live pod of the DaemonSet carries, if they all carry one.
fn daemon_pod_hashes(sim: &Sim, ds: &str) -> Vec<String> {
    let mut hashes: Vec<String> =
        daemon_pods(sim, ds).iter().map(|(_, p)| p.metadata.labels.get("controller-revision-hash").cloned().unwrap_or_default()).collect();
    hashes.dedup();
    hashes
}

/// Upstream's `constructHistory`: a ControllerRevision `<ds>-<hash>` per template, numbered in
/// order, whose hash the pods carry; rolling back (what `kubectl rollout undo` patches in) takes
/// the old revision up again — renumbered as the newest, no copy — and the pods roll back to its
/// hash. Deleting the DaemonSet lets the garbage collector take its revisions.
#[test]
fn a_daemon_set_keeps_a_controller_revision_per_template_and_an_undo_renumbers_the_old_one() {
    let mut sim = with_daemon_set(2, "", "");
    let first = daemon_revisions(&sim, "agent");
    assert_eq!(first.len(), 1);
    for image in ["busybox:1.37", "busybox:1.36"] {
        set_daemon_image(&mut sim, image);
        sim.settle(Duration::mins(3)).unwrap();
    }
    let revisions = daemon_revisions(&sim, "agent");
    assert_eq!(revisions.iter().map(|(_, n)| *n).collect::<Vec<_>>(), [1, 2, 3]);
    assert_eq!(revisions[0], first[0]);
    let hash_of = |name: &str| name.strip_prefix("agent-").unwrap().to_string();
    assert_eq!(daemon_pod_hashes(&sim, "agent"), [hash_of(&revisions[2].0)], "the pods carry the newest revision's hash");
    let revision = get(&sim, Kind::ControllerRevision, &revisions[2].0);
    let revision = revision.as_controller_revision().unwrap();
    assert_eq!(revision.metadata.labels.get("controller-revision-hash"), Some(&hash_of(&revisions[2].0)));
    assert_eq!(revision.data.spec.template.spec.containers[0].image, "busybox:1.36");

    // The undo: revision 1's template back in the DaemonSet.
    let template = get(&sim, Kind::ControllerRevision, &revisions[0].0).as_controller_revision().unwrap().data.spec.template.clone();
    let mut ds = get(&sim, Kind::DaemonSet, "agent").as_daemon_set().unwrap().clone();
    ds.spec.template = template;
    sim.submit(ApiRequest::Update(Object::DaemonSet(ds))).unwrap();
    sim.settle(Duration::mins(3)).unwrap();
    let after = daemon_revisions(&sim, "agent");
    assert_eq!(after, [(revisions[1].0.clone(), 2), (revisions[2].0.clone(), 3), (revisions[0].0.clone(), 4)]);
    assert_eq!(daemon_pod_hashes(&sim, "agent"), [hash_of(&revisions[0].0)]);
    let images: Vec<String> = daemon_pods(&sim, "agent").iter().map(|(_, p)| p.spec.containers[0].image.clone()).collect();
    assert_eq!(images, ["busybox", "busybox"]);

    sim.submit(ApiRequest::Delete(DeleteRequest::new(ObjectKey::new(Kind::DaemonSet, "default", "agent")))).unwrap();
    sim.settle(Duration::mins(2)).unwrap();
    assert!(daemon_revisions(&sim, "agent").is_empty() && sim.objects(Kind::ControllerRevision).next().is_none());
    assert_invariants(&sim);
}

/// Past `revisionHistoryLimit`, the oldest revisions no pod carries are deleted.
#[test]
fn a_daemon_set_deletes_its_oldest_unused_revisions_past_the_history_limit() {
    let mut sim = with_daemon_set(1, "  revisionHistoryLimit: 1\n", "");
    for image in ["busybox:1.37", "busybox:1.36", "busybox:1.35"] {
        set_daemon_image(&mut sim, image);
        sim.settle(Duration::mins(3)).unwrap();
    }
    let numbers: Vec<i64> = daemon_revisions(&sim, "agent").iter().map(|(_, n)| *n).collect();
    assert_eq!(numbers, [3, 4], "the current revision and one old one");
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

/// The pod garbage collector: pods bound to a Node object that was deleted are nobody's to
/// finish. The node is quarantined for 40 s (`quarantineTime`; the cache may only be behind),
/// then confirmed gone with a live GET, and its pods are marked Failed with
/// `DisruptionTarget=True` (DeletionByPodGC, "PodGC: node no longer exists") and force-deleted
/// at the next 20 s pass; their ReplicaSet replaces them on a node that exists.
#[test]
fn pods_of_a_deleted_node_are_force_deleted_by_the_pod_garbage_collector_after_its_quarantine() {
    let mut sim = with_web(4);
    sim.node_fail("node-2").unwrap();
    let orphans: Vec<Pod> = pods(&sim).into_iter().filter(|p| p.node_name() == Some("node-2")).collect();
    assert!(!orphans.is_empty(), "the spread put pods on node-2");
    let deleted_at = sim.now();
    sim.submit(ApiRequest::Delete(DeleteRequest::new(ObjectKey::new(Kind::Node, "", "node-2")))).unwrap();
    sim.advance(Duration::secs(39));
    let alive = |sim: &Sim, p: &Pod| sim.api().get(&ObjectKey::of(Kind::Pod, &p.metadata)).is_some();
    assert!(orphans.iter().all(|p| alive(&sim, p)), "quarantined for 40 s first");
    let mut gone_at = None;
    while sim.now().since(deleted_at) < Duration::secs(90) {
        sim.advance(Duration::millis(100));
        if orphans.iter().all(|p| !alive(&sim, p)) {
            gone_at = Some(sim.now());
            break;
        }
    }
    let gone_at = gone_at.expect("the orphans are deleted");
    let waited = gone_at.since(deleted_at);
    assert!(waited >= Duration::secs(40) && waited <= Duration::secs(61), "quarantine, then the next 20 s pass: {waited:?}");
    sim.settle(Duration::mins(1)).unwrap();
    let running: Vec<Pod> = pods(&sim).into_iter().filter(|p| p.status.phase == Some(PodPhase::Running)).collect();
    assert_eq!(running.len(), 4, "replaced");
    assert!(running.iter().all(|p| p.node_name() == Some("node-1")));
    assert_invariants(&sim);
}

// CronJob (cronjob-controller). The simulation's clock starts at 2026-01-01T00:00:00Z, so the
// minute 00:01 is minute 29453761 since the Unix epoch, the suffix of that minute's Job.

fn cron_job_yaml(name: &str, schedule: &str, script: &str, spec: &str) -> String {
    format!(
        "apiVersion: batch/v1\nkind: CronJob\nmetadata: {{name: {name}}}\nspec:\n  schedule: \"{schedule}\"\n{spec}  jobTemplate:\n    spec:\n      backoffLimit: 0\n      template:\n        spec:\n          restartPolicy: Never\n          containers:\n          - name: c\n            image: busybox\n            command: [\"sh\", \"-c\", \"{script}\"]\n"
    )
}

fn cron_job(sim: &Sim, name: &str) -> CronJob {
    get(sim, Kind::CronJob, name).as_cron_job().cloned().unwrap()
}

/// The Jobs in creation order, as `name`.
fn jobs(sim: &Sim) -> Vec<Job> {
    let mut out: Vec<Job> = sim.objects(Kind::Job).filter_map(|o| o.as_job().cloned()).collect();
    out.sort_by_key(|j| (j.metadata.creation_timestamp, j.metadata.name.clone()));
    out
}

fn job_names(sim: &Sim) -> Vec<String> {
    jobs(sim).iter().map(|j| j.metadata.name.to_string()).collect()
}

fn cron_events(sim: &Sim, reason: &str) -> Vec<String> {
    events(sim, reason).into_iter().filter(|e| e.involved_object.kind == "CronJob").map(|e| e.message.to_string()).collect()
}

/// 2026-01-01 at `m` minutes past midnight, simulated.
fn minute(m: u64) -> Time {
    Time(m * 60_000)
}

#[test]
fn a_cron_job_creates_a_job_each_minute_named_for_the_scheduled_minute_and_records_it() {
    let mut sim = cluster(2);
    let yaml = cron_job_yaml("hello", "* * * * *", "date; echo Hello from the Kubernetes cluster", "");
    sim.submit(ApiRequest::Create(object(&yaml))).unwrap();
    let cj = cron_job(&sim, "hello");
    let spec = &cj.spec;
    assert_eq!(
        (spec.concurrency_policy.as_str(), spec.suspend, spec.successful_jobs_history_limit, spec.failed_jobs_history_limit),
        ("Allow", Some(false), Some(3), Some(1)),
        "SetDefaults_CronJob"
    );
    sim.run_until(minute(1));
    assert!(jobs(&sim).is_empty(), "nothing before the first schedule time");
    sim.advance(Duration::millis(500));
    assert_eq!(job_names(&sim), ["hello-29453761"]);
    let job = &jobs(&sim)[0];
    assert_eq!(
        job.metadata.creation_timestamp.map(|t| t.rfc3339()).as_deref(),
        Some("2026-01-01T00:01:00Z"),
        "created at the scheduled minute (+100 ms)"
    );
    assert_eq!(job.metadata.annotations["batch.kubernetes.io/cronjob-scheduled-timestamp"], "2026-01-01T00:01:00Z");
    let owner = job.metadata.controller_ref().unwrap();
    assert_eq!((owner.kind.as_str(), owner.name.as_str(), owner.uid.as_str()), ("CronJob", "hello", cj.metadata.uid.as_str()));
    let cj = cron_job(&sim, "hello");
    assert_eq!(cj.status.active.iter().map(|r| r.name.as_str()).collect::<Vec<_>>(), ["hello-29453761"]);
    assert_eq!(cj.status.last_schedule_time, Some(minute(1)));
    sim.run_until(minute(3) + Duration::secs(30));
    assert_eq!(job_names(&sim), ["hello-29453761", "hello-29453762", "hello-29453763"]);
    assert!(jobs(&sim).iter().all(|j| j.status.has_true("Complete")));
    let cj = cron_job(&sim, "hello");
    assert!(cj.status.active.is_empty(), "finished Jobs leave status.active");
    assert_eq!(cj.status.last_schedule_time, Some(minute(3)));
    assert_eq!(cj.status.last_successful_time, jobs(&sim)[2].status.completion_time);
    assert_eq!(
        cron_events(&sim, "SuccessfulCreate"),
        ["Created job hello-29453761", "Created job hello-29453762", "Created job hello-29453763"]
    );
    assert_eq!(cron_events(&sim, "SawCompletedJob")[0], "Saw completed job: hello-29453761, condition: Complete");
    assert!(cron_events(&sim, "UnexpectedJob").is_empty());
    assert_invariants(&sim);
}

#[test]
fn a_cron_job_keeps_three_successful_and_one_failed_job_and_deletes_the_oldest() {
    let mut sim = cluster(2);
    sim.submit(ApiRequest::Create(object(&cron_job_yaml("ok", "* * * * *", "date", "")))).unwrap();
    sim.submit(ApiRequest::Create(object(&cron_job_yaml("bad", "* * * * *", "exit 1", "")))).unwrap();
    sim.run_until(minute(5) + Duration::secs(30));
    let names = job_names(&sim);
    let ok: Vec<&String> = names.iter().filter(|n| n.starts_with("ok-")).collect();
    let bad: Vec<&String> = names.iter().filter(|n| n.starts_with("bad-")).collect();
    assert_eq!(ok, ["ok-29453763", "ok-29453764", "ok-29453765"], "successfulJobsHistoryLimit 3");
    assert_eq!(bad, ["bad-29453765"], "failedJobsHistoryLimit 1");
    let deleted = cron_events(&sim, "SuccessfulDelete");
    assert!(
        deleted.contains(&"Deleted job ok-29453761".to_string()) && deleted.contains(&"Deleted job bad-29453764".to_string()),
        "{deleted:?}"
    );
    assert_eq!(cron_events(&sim, "SawCompletedJob").iter().filter(|m| m.ends_with("condition: Failed")).count(), 5);
    sim.advance(Duration::secs(30));
    assert!(
        pods(&sim).iter().all(|p| names_of_owner(p).is_some_and(|job| job_names(&sim).contains(&job))),
        "the deleted Jobs' pods are collected"
    );
    assert_invariants(&sim);
}

fn names_of_owner(pod: &Pod) -> Option<String> {
    pod.metadata.controller_ref().map(|r| r.name.clone())
}

#[test]
fn forbid_skips_a_start_while_a_job_is_active_and_replace_deletes_it() {
    let mut sim = cluster(2);
    let forbid = cron_job_yaml("forbid", "* * * * *", "sleep 90", "  concurrencyPolicy: Forbid\n");
    let replace = cron_job_yaml("replace", "* * * * *", "sleep 90", "  concurrencyPolicy: Replace\n");
    sim.submit(ApiRequest::Create(object(&forbid))).unwrap();
    sim.submit(ApiRequest::Create(object(&replace))).unwrap();
    sim.run_until(minute(2) + Duration::secs(10));
    let names = job_names(&sim);
    assert_eq!(names.iter().filter(|n| n.starts_with("forbid-")).collect::<Vec<_>>(), ["forbid-29453761"], "minute 2 was skipped");
    assert_eq!(
        cron_events(&sim, "JobAlreadyActive"),
        ["Not starting job because prior execution is running and concurrency policy is Forbid"]
    );
    assert_eq!(names.iter().filter(|n| n.starts_with("replace-")).collect::<Vec<_>>(), ["replace-29453762"], "minute 1's Job was replaced");
    assert_eq!(cron_events(&sim, "SuccessfulDelete"), ["Deleted job replace-29453761"]);
    assert_eq!(cron_job(&sim, "replace").status.active.iter().map(|r| r.name.to_string()).collect::<Vec<_>>(), ["replace-29453762"]);
    // With no startingDeadlineSeconds the skipped 00:02 is still unmet: it starts as soon as
    // minute 1's Job finishes (00:01 + 90 s), late, under its own minute's name.
    sim.run_until(minute(2) + Duration::secs(40));
    let forbid: Vec<Job> = jobs(&sim).into_iter().filter(|j| j.metadata.name.starts_with("forbid-")).collect();
    assert_eq!(forbid.iter().map(|j| j.metadata.name.to_string()).collect::<Vec<_>>(), ["forbid-29453761", "forbid-29453762"]);
    assert!(forbid[1].metadata.creation_timestamp > Some(minute(2) + Duration::secs(30)), "{:?}", forbid[1].metadata.creation_timestamp);
    assert_invariants(&sim);
}

#[test]
fn a_suspended_cron_job_starts_nothing_and_on_resume_starts_the_missed_time_unless_past_its_starting_deadline() {
    let mut sim = cluster(2);
    let late = cron_job_yaml("late", "* * * * *", "date", "  suspend: true\n");
    let strict = cron_job_yaml("strict", "* * * * *", "date", "  suspend: true\n  startingDeadlineSeconds: 10\n");
    sim.submit(ApiRequest::Create(object(&late))).unwrap();
    sim.submit(ApiRequest::Create(object(&strict))).unwrap();
    sim.run_until(minute(1) + Duration::secs(30));
    assert!(jobs(&sim).is_empty(), "suspended");
    for name in ["late", "strict"] {
        let mut cj = cron_job(&sim, name);
        cj.spec.suspend = Some(false);
        sim.submit(ApiRequest::Update(Object::CronJob(cj))).unwrap();
    }
    sim.advance(Duration::secs(1));
    // 00:01:00 was missed by 30 s: started at once without a deadline, skipped with 10 s.
    assert_eq!(job_names(&sim), ["late-29453761"]);
    sim.run_until(minute(2) + Duration::secs(1));
    assert_eq!(job_names(&sim), ["late-29453761", "late-29453762", "strict-29453762"]);
    assert_invariants(&sim);
}

#[test]
fn more_than_a_hundred_missed_start_times_warns_and_starts_only_the_most_recent() {
    let mut sim = cluster(1);
    sim.submit(ApiRequest::Create(object(&cron_job_yaml("hourly", "* * * * *", "date", "  suspend: true\n")))).unwrap();
    sim.run_until(minute(150) + Duration::secs(30));
    let mut cj = cron_job(&sim, "hourly");
    cj.spec.suspend = Some(false);
    sim.submit(ApiRequest::Update(Object::CronJob(cj))).unwrap();
    sim.advance(Duration::secs(1));
    assert_eq!(
        cron_events(&sim, "TooManyMissedTimes"),
        ["too many missed start times. Set or decrease .spec.startingDeadlineSeconds or check clock skew"]
    );
    assert_eq!(job_names(&sim), ["hourly-29453910"], "only 02:30, the most recent");
    assert_invariants(&sim);
}

#[test]
fn deleting_a_cron_job_deletes_its_jobs_in_the_background() {
    let mut sim = cluster(2);
    sim.submit(ApiRequest::Create(object(&cron_job_yaml("hello", "* * * * *", "sleep 30", "")))).unwrap();
    sim.run_until(minute(2) + Duration::secs(10));
    assert_eq!(job_names(&sim).len(), 2);
    sim.submit(ApiRequest::Delete(DeleteRequest::new(ObjectKey::new(Kind::CronJob, "default", "hello")))).unwrap();
    sim.advance(Duration::secs(40));
    assert!(jobs(&sim).is_empty(), "{:?}", job_names(&sim));
    assert!(pods(&sim).is_empty() || pods(&sim).iter().all(|p| p.metadata.is_deleting()));
    assert_invariants(&sim);
}

#[test]
fn a_time_zone_moves_the_schedule_to_that_zones_wall_clock() {
    let mut sim = cluster(1);
    // 09:05 in Etc/GMT-9 (UTC+9) is 00:05 UTC; without a zone it would be 09:05 UTC.
    let tokyo_like = cron_job_yaml("nine", "5 9 * * *", "date", "  timeZone: Etc/GMT-9\n");
    sim.submit(ApiRequest::Create(object(&tokyo_like))).unwrap();
    sim.submit(ApiRequest::Create(object(&cron_job_yaml("utc", "5 9 * * *", "date", "")))).unwrap();
    sim.run_until(minute(5) + Duration::secs(1));
    assert_eq!(job_names(&sim), ["nine-29453765"]);
    assert_eq!(jobs(&sim)[0].metadata.annotations["batch.kubernetes.io/cronjob-scheduled-timestamp"], "2026-01-01T09:05:00+09:00");
    assert_invariants(&sim);
}

#[test]
fn an_active_job_deleted_by_hand_is_reported_missing_and_leaves_status_active() {
    let mut sim = cluster(2);
    sim.submit(ApiRequest::Create(object(&cron_job_yaml("hello", "* * * * *", "sleep 90", "")))).unwrap();
    sim.run_until(minute(1) + Duration::secs(2));
    assert_eq!(cron_job(&sim, "hello").status.active.len(), 1);
    sim.submit(ApiRequest::Delete(DeleteRequest::new(ObjectKey::new(Kind::Job, "default", "hello-29453761")))).unwrap();
    sim.advance(Duration::secs(2));
    assert_eq!(cron_events(&sim, "MissingJob"), ["Active job went missing: hello-29453761"]);
    assert!(cron_job(&sim, "hello").status.active.is_empty());
    assert_invariants(&sim);
}

#[test]
fn a_changed_schedule_waits_for_its_next_time_instead_of_starting_a_missed_one() {
    let mut sim = cluster(1);
    sim.submit(ApiRequest::Create(object(&cron_job_yaml("daily", "0 0 * * *", "date", "")))).unwrap();
    sim.run_until(minute(2) + Duration::secs(30));
    assert!(jobs(&sim).is_empty());
    // Every minute from now on: 00:01 and 00:02 went by unmet, yet nothing starts before 00:03
    // (`updateCronJob` requeues for the new schedule's next time).
    let mut cj = cron_job(&sim, "daily");
    cj.spec.schedule = "* * * * *".into();
    sim.submit(ApiRequest::Update(Object::CronJob(cj))).unwrap();
    sim.advance(Duration::secs(5));
    assert!(jobs(&sim).is_empty(), "{:?}", job_names(&sim));
    sim.run_until(minute(3) + Duration::secs(1));
    assert_eq!(job_names(&sim), ["daily-29453763"]);
    assert_invariants(&sim);
}

/// `kubectl get pods`' NAME and STATUS columns.
fn pod_rows(session: &mut kubeloop::command::Session) -> Vec<(String, String)> {
    let out = session.execute("kubectl get pods");
    assert!(out.ok, "{}", out.stderr);
    out.stdout.lines().skip(1).map(|l| l.split_whitespace().collect::<Vec<_>>()).map(|w| (w[0].to_string(), w[2].to_string())).collect()
}

/// The STATUS of a pod whose phase is terminal: its container's terminated reason.
const FINISHED: [&str; 3] = ["ContainerStatusUnknown", "Completed", "Error"];

#[test]
fn a_pod_killed_while_its_kubelet_creates_it_stays_terminating_until_it_is_gone() {
    // The page's default scenario, killed as the page kills (its console line, not waiting) at
    // 0.4 s, while the kubelet is still pulling nginx: the pod worker stops, the status manager's
    // `TerminatePod` writes phase Failed with the never-started container terminated as
    // ContainerStatusUnknown (137), then the kubelet deletes it. kubectl's STATUS goes
    // Terminating → (for that one round trip) ContainerStatusUnknown → gone; never
    // ContainerCreating again, and never more than 3 pods that count for the Deployment.
    let scenario = kubeloop::command::scenario::Scenario::builtin("default").unwrap();
    let mut session = kubeloop::command::Session::new(scenario, None).unwrap();
    session.sim_mut().check_invariants_every_step();
    session.set_blocking(false);
    session.advance_to(Time(400));
    let rows = pod_rows(&mut session);
    assert_eq!(rows.len(), 3, "{rows:?}");
    let (victim, status) = rows[0].clone();
    assert_eq!(status, "ContainerCreating", "killed while the kubelet creates it: {rows:?}");
    assert!(session.execute(&kubeloop::view::page::kill_command("default", &victim)).ok);
    let (mut terminating_since, mut final_status, mut gone_at) = (None, None, None);
    // Looked at every 5 ms: the final status is there for one round trip only.
    let step = Duration::millis(5);
    while session.sim().now() < Time(60_000) {
        session.advance(step);
        let now = session.sim().now();
        let rows = pod_rows(&mut session);
        let counted = rows.iter().filter(|(_, s)| s != "Terminating" && !FINISHED.contains(&s.as_str())).count();
        assert!(counted <= 3, "at {now:?}: {counted} pods count for a desired 3: {rows:?}");
        let shown = rows.iter().find(|(n, _)| *n == victim).map(|(_, s)| s.as_str());
        match shown {
            Some("Terminating") => {
                terminating_since.get_or_insert(now);
            }
            Some(s) if terminating_since.is_some() => {
                assert!(FINISHED.contains(&s), "at {now:?}: the killed pod shows {s} after Terminating: {rows:?}");
                let pod = get(session.sim(), Kind::Pod, &victim);
                final_status.get_or_insert_with(|| pod.as_pod().unwrap().status.clone());
            }
            Some(s) => panic!("at {now:?}: the killed pod shows {s}, not Terminating: {rows:?}"),
            None => {
                gone_at.get_or_insert(now);
            }
        }
        if gone_at.is_some() && rows.len() == 3 && rows.iter().all(|(_, s)| s == "Running") {
            break;
        }
    }
    assert_eq!(terminating_since, Some(Time(400) + step), "Terminating from the first look after the kill");
    let gone_at = gone_at.expect("the kubelet deletes the pod");
    assert!(gone_at < Time(2_000), "gone at {gone_at:?}: nothing ran, so nothing waits for the grace period");
    assert_eq!(pod_rows(&mut session).len(), 3);
    // Seen between the status write and the delete: upstream's TerminatePod, exactly.
    let status = final_status.expect("the final status is seen before the delete");
    assert_eq!(status.phase, Some(PodPhase::Failed));
    let t = status.container_statuses[0].state.terminated.clone().expect("terminated");
    assert_eq!((t.exit_code, t.reason.as_deref()), (137, Some("ContainerStatusUnknown")));
    assert_eq!(t.message.as_deref(), Some("The container could not be located when the pod was terminated"));
    assert_invariants(session.sim());
}
