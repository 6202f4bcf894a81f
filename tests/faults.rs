//! One test per fault a person can inject with the `sim` verbs: the symptom a real cluster shows
//! while it lasts, and the recovery after it ends, on simulated time (never a wall-clock sleep).
//! Every run starts from the default scenario (two nodes, Deployment `web` of three nginx pods)
//! and checks the invariants after every step.

use kubeloop::command::{CommandOutput, Scenario, Session};
use kubeloop::kubelet::ContainerRuntimeState;
use kubeloop::model::*;
use kubeloop::sim::{ComponentId, Machine, NodeFault, Sim};

fn session(seed: u64) -> Session {
    let mut s = Session::new(Scenario::builtin("default").expect("default scenario"), Some(seed)).expect("starts");
    s.sim_mut().check_invariants_every_step();
    s.settle(Duration::mins(2)).expect("the scenario settles");
    assert_eq!(running_pods(s.sim()).len(), 3);
    s
}

/// Runs a line that must succeed.
fn run(s: &mut Session, line: &str) -> CommandOutput {
    let out = s.execute(line);
    assert!(out.ok, "{line}: {}", out.stderr);
    out
}

fn pods(sim: &Sim) -> Vec<Pod> {
    sim.objects(Kind::Pod).filter_map(|o| o.as_pod().cloned()).collect()
}

fn running_pods(sim: &Sim) -> Vec<Pod> {
    pods(sim).into_iter().filter(|p| p.status.phase == Some(PodPhase::Running) && !p.metadata.is_deleting()).collect()
}

fn events(sim: &Sim, reason: &str) -> Vec<Event> {
    sim.objects(Kind::Event).filter_map(|o| o.as_event().cloned()).filter(|e| e.reason == reason).collect()
}

fn lease_renewed_at(sim: &Sim, node: &str) -> Time {
    let lease = sim.api().get(&ObjectKey::new(Kind::Lease, "kube-node-lease", node)).expect("the node has a lease");
    lease.as_lease().and_then(|l| l.spec.renew_time).expect("renewTime").0
}

/// The node's machine: what runs there, whatever its kubelet knows.
fn machine<'a>(sim: &'a Sim, node: &str) -> &'a Machine {
    sim.machine(node).expect("the node has a machine")
}

fn running_containers(sim: &Sim, node: &str) -> Vec<String> {
    machine(sim, node)
        .running_containers()
        .into_iter()
        .filter(|(_, _, state)| state.is_running())
        .map(|(pod, _, _)| pod.name.to_string())
        .collect()
}

fn pod_on(sim: &Sim, node: &str) -> Pod {
    pods(sim).into_iter().find(|p| p.node_name() == Some(node)).unwrap_or_else(|| panic!("a pod on {node}"))
}

fn assert_invariants(sim: &Sim) {
    assert!(sim.violations().is_empty(), "{:?}", sim.violations());
}

#[test]
fn a_stopped_scheduler_leaves_new_pods_pending_with_no_scheduled_event_until_it_starts() {
    let mut s = session(1);
    assert_eq!(run(&mut s, "sim stop kube-scheduler").stdout, "kube-scheduler stopped\n");
    assert!(!s.sim().is_running(&ComponentId::Scheduler));
    run(&mut s, "kubectl scale deployment web --replicas=5");
    s.advance(Duration::mins(2));
    let pending: Vec<Pod> = pods(s.sim()).into_iter().filter(|p| p.node_name().is_none()).collect();
    assert_eq!(pending.len(), 2, "the ReplicaSet created them, nobody placed them");
    assert!(pending.iter().all(|p| p.status.phase == Some(PodPhase::Pending)));
    let scheduled: Vec<String> = events(s.sim(), "Scheduled").into_iter().map(|e| e.involved_object.name.to_string()).collect();
    assert!(pending.iter().all(|p| !scheduled.contains(&p.metadata.name.to_string())), "no Scheduled event for a pending pod");
    assert!(events(s.sim(), "FailedScheduling").is_empty(), "nothing even tried");

    run(&mut s, "sim start kube-scheduler");
    s.advance(Duration::secs(10));
    assert_eq!(running_pods(s.sim()).len(), 5);
    let scheduled: Vec<String> = events(s.sim(), "Scheduled").into_iter().map(|e| e.involved_object.name.to_string()).collect();
    assert!(pending.iter().all(|p| scheduled.contains(&p.metadata.name.to_string())));
    assert_invariants(s.sim());
}

#[test]
fn a_stopped_controller_manager_replaces_nothing_and_closes_the_gap_at_once_when_it_starts() {
    let mut s = session(2);
    run(&mut s, "sim stop kube-controller-manager");
    let creates_before = events(s.sim(), "SuccessfulCreate").len();
    let victim = pod_on(s.sim(), "node-1").metadata.name;
    run(&mut s, &format!("kubectl delete pod {victim}"));
    s.advance(Duration::mins(3));
    assert_eq!(pods(s.sim()).len(), 2, "the kubelet finished the delete; no replacement");
    assert_eq!(events(s.sim(), "SuccessfulCreate").len(), creates_before);

    let started = s.sim().now();
    run(&mut s, "sim start kube-controller-manager");
    s.advance(Duration::secs(5));
    let replacement: Vec<Pod> = pods(s.sim()).into_iter().filter(|p| p.metadata.creation_timestamp >= Some(started)).collect();
    assert_eq!(replacement.len(), 1, "one re-list, one create: the gap, not the history");
    s.advance(Duration::secs(10));
    assert_eq!(running_pods(s.sim()).len(), 3);
    assert_invariants(s.sim());
}

/// One loop switched off inside a running kube-controller-manager: only its kind's gap stays
/// open, the other loops of the same process keep turning, and switched on it closes the gap
/// from what it lists, as a loop that restarts does.
#[test]
fn one_stopped_controller_leaves_only_its_gap_open_and_closes_it_when_started() {
    let mut s = session(3);
    assert_eq!(run(&mut s, "sim stop kube-controller-manager/job").stdout, "kube-controller-manager/job-controller stopped\n");
    assert!(s.sim().is_running(&ComponentId::ControllerManager), "the process runs on");
    let status = run(&mut s, "sim status").stdout;
    let job_row = status.lines().find(|l| l.starts_with("kube-controller-manager/job-controller ")).expect("its row");
    assert!(job_row.contains("Stopped"), "{job_row}");
    assert!(status.lines().any(|l| l.starts_with("kube-controller-manager/replicaset-controller ") && l.contains("Running")), "{status}");

    run(&mut s, "kubectl create job hello --image=busybox:1.28 -- date");
    run(&mut s, "kubectl scale deployment web --replicas=4");
    s.advance(Duration::secs(30));
    let job_pods =
        |sim: &Sim| pods(sim).into_iter().filter(|p| p.metadata.labels.get("job-name").map(String::as_str) == Some("hello")).count();
    assert_eq!(job_pods(s.sim()), 0, "nobody made the Job's pod");
    assert_eq!(running_pods(s.sim()).len(), 4, "the ReplicaSet loop of the same process did its part");
    let job = s.sim().api().get(&ObjectKey::new(Kind::Job, "default", "hello")).expect("the Job").clone();
    assert!(job.as_job().is_some_and(|j| j.status.start_time.is_none()), "no status written either");

    assert_eq!(run(&mut s, "sim start kube-controller-manager/job-controller").stdout, "kube-controller-manager/job-controller started\n");
    s.advance(Duration::secs(30));
    assert_eq!(job_pods(s.sim()), 1, "started, it listed the Job and made its pod");
    let job = s.sim().api().get(&ObjectKey::new(Kind::Job, "default", "hello")).expect("the Job").clone();
    assert_eq!(job.as_job().map(|j| j.status.succeeded), Some(1), "and counted it");
    assert_invariants(s.sim());
}

/// A stopped controller stays stopped when its process restarts: it is a setting of the
/// process (`--controllers=*,-NAME`), not a state of its memory.
#[test]
fn a_stopped_controller_stays_stopped_across_a_restart_of_its_process() {
    let mut s = session(4);
    run(&mut s, "sim stop kube-controller-manager/replicaset-controller");
    run(&mut s, "sim restart kube-controller-manager");
    run(&mut s, "kubectl scale deployment web --replicas=5");
    s.advance(Duration::secs(30));
    assert_eq!(pods(s.sim()).len(), 3, "the Deployment controller raised the ReplicaSet's claim; nobody acted on it");
    let rs = s.sim().objects(Kind::ReplicaSet).filter_map(|o| o.as_replica_set().cloned()).next().expect("a ReplicaSet");
    assert_eq!((rs.spec.replicas, rs.status.replicas), (Some(5), 3));
    assert_eq!(
        run(&mut s, "sim restart kube-controller-manager/replicaset-controller").stdout,
        "kube-controller-manager/replicaset-controller restarted\n"
    );
    s.advance(Duration::secs(20));
    assert_eq!(running_pods(s.sim()).len(), 5);
    assert_invariants(s.sim());
}

#[test]
fn a_stopped_api_server_refuses_every_client_who_all_recover_after_it_starts_with_nothing_lost() {
    let mut s = session(3);
    let objects_before: Vec<ObjectKey> = [Kind::Deployment, Kind::ReplicaSet, Kind::Pod, Kind::Node]
        .into_iter()
        .flat_map(|k| s.sim().objects(k).map(|o| o.key()).collect::<Vec<_>>())
        .collect();
    run(&mut s, "sim stop kube-apiserver");
    let refused = "The connection to the server 127.0.0.1:6443 was refused - did you specify the right host or port?\n";
    for line in ["kubectl get pods", "kubectl scale deployment web --replicas=5", "get nodes"] {
        let out = s.execute(line);
        assert_eq!((out.stdout.as_str(), out.stderr.as_str(), out.ok), ("", refused, false), "{line}");
    }
    let version = s.execute("kubectl version");
    assert_eq!(version.stdout, "Client Version: v1.32.0\nKustomize Version: v5.5.0\n");
    assert_eq!(version.stderr, refused);
    assert_eq!(s.sim().open_watches(None), 0, "every watch ended with the process");

    let renewed = lease_renewed_at(s.sim(), "node-1");
    s.advance(Duration::mins(2));
    assert_eq!(lease_renewed_at(s.sim(), "node-1"), renewed, "lease renewals fail while it is down");

    let started = s.sim().now();
    run(&mut s, "sim start kube-apiserver");
    // Informers have backed off to at most 30 s; every one is watching again after that.
    s.advance(Duration::secs(35));
    assert_eq!(
        s.sim().open_watches(Some(&ComponentId::ControllerManager)),
        22,
        "pods, ReplicaSets, Deployments, Nodes, Leases, Services, EndpointSlices, Jobs, DaemonSets, ReplicationControllers, CronJobs, StatefulSets, ControllerRevisions, PersistentVolumeClaims, PersistentVolumes, StorageClasses, Endpoints, Namespaces, PodDisruptionBudgets, HorizontalPodAutoscalers, ConfigMaps and Secrets (the garbage collector's: it watches every kind that can own or be owned)"
    );
    assert!(s.sim().open_watches(Some(&ComponentId::Scheduler)) > 0);
    assert_eq!(s.sim().open_watches(Some(&ComponentId::Kubelet("node-1".into()))), 2, "pods and its Node");
    assert!(lease_renewed_at(s.sim(), "node-1") > started, "the kubelet renews again");
    let objects_after: Vec<ObjectKey> = [Kind::Deployment, Kind::ReplicaSet, Kind::Pod, Kind::Node]
        .into_iter()
        .flat_map(|k| s.sim().objects(k).map(|o| o.key()).collect::<Vec<_>>())
        .collect();
    assert_eq!(objects_after, objects_before, "nothing was lost");
    run(&mut s, "kubectl scale deployment web --replicas=4");
    s.advance(Duration::secs(15));
    assert_eq!(running_pods(s.sim()).len(), 4);
    assert_invariants(s.sim());
}

#[test]
fn a_stopped_etcd_fails_requests_with_etcds_timeout_and_everything_resumes_when_it_starts() {
    let mut s = session(4);
    run(&mut s, "sim stop etcd");
    let out = s.execute("kubectl get pods");
    assert_eq!((out.stderr.as_str(), out.ok), ("Error from server: etcdserver: request timed out\n", false));
    let out = s.execute("kubectl delete pod nothing");
    assert_eq!(out.stderr, "Error from server: etcdserver: request timed out\n");
    assert!(run(&mut s, "kubectl version").stdout.contains("Server Version: v1.32.0"), "the API server itself still answers");
    let renewed = lease_renewed_at(s.sim(), "node-2");
    let revision = s.sim().api().revision();
    s.advance(Duration::mins(1));
    assert_eq!(lease_renewed_at(s.sim(), "node-2"), renewed);
    assert_eq!(s.sim().api().revision(), revision, "nothing was written");
    let status = run(&mut s, "sim status").stdout;
    assert!(status.lines().any(|l| l.starts_with("etcd ") && l.contains("Stopped")), "{status}");

    let started = s.sim().now();
    run(&mut s, "sim start etcd");
    s.advance(Duration::secs(20));
    assert!(lease_renewed_at(s.sim(), "node-2") > started);
    run(&mut s, "kubectl scale deployment web --replicas=4");
    s.advance(Duration::secs(15));
    assert_eq!(running_pods(s.sim()).len(), 4);
    assert_invariants(s.sim());
}

#[test]
fn wiping_etcd_without_a_snapshot_loses_the_claims_and_kubelets_then_kill_what_nothing_claims() {
    let mut s = session(5);
    let out = run(&mut s, "sim etcd wipe");
    assert!(out.stdout.starts_with("etcd wiped: "), "{}", out.stdout);
    assert_eq!(s.sim().objects(Kind::Deployment).count(), 0);
    assert_eq!(s.sim().objects(Kind::Pod).count(), 0);
    let still_running = running_containers(s.sim(), "node-1").len() + running_containers(s.sim(), "node-2").len();
    assert_eq!(still_running, 3, "right after the wipe the containers run on, claimed by nothing");
    // Each kubelet's re-watch finds its revision gone, re-lists, finds no pods, and kills them.
    s.advance(Duration::secs(10));
    assert!(running_containers(s.sim(), "node-1").is_empty() && running_containers(s.sim(), "node-2").is_empty());
    s.advance(Duration::mins(2));
    assert_eq!(s.sim().objects(Kind::Deployment).count(), 0, "nothing brings the claims back");
    assert_eq!(s.sim().objects(Kind::Pod).count(), 0);
    assert_eq!(s.execute("kubectl get deployment web").stderr, "Error from server (NotFound): deployments.apps \"web\" not found\n");
}

#[test]
fn a_snapshot_restored_after_a_wipe_brings_the_claims_back_and_the_cluster_converges() {
    let mut s = session(6);
    let out = run(&mut s, "sim etcd snapshot");
    assert!(out.stdout.starts_with("snapshot saved at revision "), "{}", out.stdout);
    run(&mut s, "sim etcd wipe");
    s.advance(Duration::secs(10));
    let revision = s.sim().api().revision();
    assert!(run(&mut s, "sim etcd restore").stdout.starts_with("etcd restored from the snapshot of revision "));
    assert!(s.sim().api().revision() > revision, "the revision only goes up");
    assert_eq!(s.sim().objects(Kind::Deployment).count(), 1);
    s.advance(Duration::mins(1));
    assert_eq!(running_pods(s.sim()).len(), 3);
    let running = running_containers(s.sim(), "node-1").len() + running_containers(s.sim(), "node-2").len();
    assert_eq!(running, 3, "the kubelets run the restored pods again");
    let web = s.sim().api().get(&ObjectKey::new(Kind::Deployment, "default", "web")).unwrap().clone();
    assert_eq!(web.as_deployment().unwrap().status.available_replicas, 3);
}

#[test]
fn with_every_watch_event_to_the_controller_manager_dropped_a_re_list_still_converges() {
    let mut s = session(7);
    run(&mut s, "sim watch drop 100 kube-controller-manager");
    let victim = pod_on(s.sim(), "node-2").metadata.name;
    run(&mut s, &format!("kubectl delete pod {victim}"));
    s.advance(Duration::mins(1));
    assert_eq!(pods(s.sim()).len(), 2, "the ReplicaSet controller never heard of the delete");
    assert!(s.sim().watch_events_dropped() > 0);
    run(&mut s, "sim watch drop 0");
    assert!(s.sim().watch_faults().is_empty());
    // Turning the fault off brings nothing back: the missed event stays missed, and the resync
    // (which only re-delivers the cache anyway) is 12–24 h away.
    s.advance(Duration::mins(11));
    assert_eq!(pods(s.sim()).len(), 2);
    // What converges it is a re-list: the severed watch's client must list again, the informer
    // finds the pod missing, and the level-triggered controller closes the gap at once.
    let out = run(&mut s, "sim watch sever kube-controller-manager");
    assert_eq!(out.stdout, "severed 22 watches of kube-controller-manager; each client re-lists\n");
    s.advance(Duration::secs(10));
    assert_eq!(running_pods(s.sim()).len(), 3);
    assert_invariants(s.sim());
}

#[test]
fn a_severed_watch_makes_its_client_re_list_and_act_on_what_it_missed() {
    let mut s = session(8);
    run(&mut s, "sim watch drop 100 kube-controller-manager");
    run(&mut s, "kubectl scale deployment web --replicas=1");
    s.advance(Duration::secs(30));
    assert_eq!(pods(s.sim()).len(), 3, "the Deployment controller never heard of the new replica count");
    run(&mut s, "sim watch drop 0");
    run(&mut s, "sim watch sever kube-controller-manager");
    s.advance(Duration::secs(15));
    assert_eq!(running_pods(s.sim()).len(), 1);
}

#[test]
fn delayed_watch_events_slow_the_loop_down_by_the_delay() {
    let mut s = session(9);
    run(&mut s, "sim watch delay 5s kube-controller-manager");
    run(&mut s, "kubectl scale deployment web --replicas=4");
    let rs_replicas = |sim: &Sim| sim.objects(Kind::ReplicaSet).filter_map(|o| o.as_replica_set()?.spec.replicas).sum::<i32>();
    s.advance(Duration::secs(4));
    assert_eq!(rs_replicas(s.sim()), 3, "the Deployment's change is still on its way");
    s.advance(Duration::secs(2));
    assert_eq!(rs_replicas(s.sim()), 4, "the Deployment controller heard and scaled the ReplicaSet");
    assert_eq!(pods(s.sim()).len(), 3, "whose change is now on its way, 5 s late too");
    s.advance(Duration::secs(5));
    assert_eq!(pods(s.sim()).len(), 4);
    run(&mut s, "sim watch delay 0s kube-controller-manager");
    assert!(s.sim().watch_faults().is_empty());
}

#[test]
fn a_stopped_kubelet_stops_renewing_its_lease_while_its_containers_run_on() {
    let mut s = session(10);
    run(&mut s, "sim stop kubelet-node-1");
    let renewed = lease_renewed_at(s.sim(), "node-1");
    let other = lease_renewed_at(s.sim(), "node-2");
    s.advance(Duration::mins(1));
    assert_eq!(lease_renewed_at(s.sim(), "node-1"), renewed, "renewTime stops advancing");
    assert!(lease_renewed_at(s.sim(), "node-2") >= other + Duration::secs(50));
    assert!(!running_containers(s.sim(), "node-1").is_empty(), "the containers do not need the kubelet");
    let started = s.sim().now();
    run(&mut s, "sim start kubelet-node-1");
    s.advance(Duration::secs(11));
    assert!(lease_renewed_at(s.sim(), "node-1") > started);
    assert!(running_pods(s.sim()).iter().all(|p| p.status.container_statuses[0].restart_count == 0), "nothing restarted");
}

#[test]
fn a_partitioned_node_keeps_its_containers_running_and_reconciles_when_it_returns() {
    let mut s = session(11);
    let victim = pod_on(s.sim(), "node-1").metadata.name.to_string();
    assert_eq!(run(&mut s, "sim node partition node-1").stdout, "node/node-1 partitioned from kube-apiserver\n");
    assert_eq!(s.sim().node_fault("node-1"), Some(NodeFault::Partitioned));
    let renewed = lease_renewed_at(s.sim(), "node-1");
    run(&mut s, &format!("kubectl delete pod {victim}"));
    s.advance(Duration::mins(2));
    assert_eq!(lease_renewed_at(s.sim(), "node-1"), renewed, "its renewals time out");
    assert!(running_containers(s.sim(), "node-1").contains(&victim), "nobody told the node to stop it");
    let stuck = s.sim().api().get(&ObjectKey::new(Kind::Pod, "default", &victim)).expect("still there, Terminating").clone();
    assert!(stuck.meta().is_deleting());
    let active = pods(s.sim()).into_iter().filter(|p| !p.metadata.is_deleting()).count();
    assert_eq!(active, 3, "the ReplicaSet replaced the terminating pod (wherever the scheduler put it)");
    assert!(s.sim().is_running(&ComponentId::Kubelet("node-1".into())), "the kubelet runs on and keeps trying");

    assert_eq!(run(&mut s, "sim node recover node-1").stdout, "node/node-1 reconnected\n");
    s.advance(Duration::secs(40));
    assert!(!running_containers(s.sim(), "node-1").contains(&victim), "killed once the kubelet heard of the delete");
    assert!(s.sim().api().get(&ObjectKey::new(Kind::Pod, "default", &victim)).is_none(), "and the delete finished");
    assert!(lease_renewed_at(s.sim(), "node-1") > renewed);
    assert_eq!(running_pods(s.sim()).len(), 3);
    assert_invariants(s.sim());
}

#[test]
fn a_powered_off_node_loses_its_containers_and_restarts_them_when_power_returns() {
    let mut s = session(12);
    let on_node: Vec<String> =
        pods(s.sim()).into_iter().filter(|p| p.node_name() == Some("node-2")).map(|p| p.metadata.name.to_string()).collect();
    assert!(!on_node.is_empty());
    assert_eq!(run(&mut s, "sim node fail node-2").stdout, "node/node-2 powered off\n");
    assert!(!s.sim().is_running(&ComponentId::Kubelet("node-2".into())));
    let states: Vec<ContainerRuntimeState> = machine(s.sim(), "node-2").running_containers().into_iter().map(|(_, _, st)| st).collect();
    assert!(states.iter().all(|st| matches!(st, ContainerRuntimeState::Exited { exit_code: 255, reason, .. } if reason == "Unknown")));
    let renewed = lease_renewed_at(s.sim(), "node-2");
    s.advance(Duration::mins(1));
    assert_eq!(lease_renewed_at(s.sim(), "node-2"), renewed);
    let err = s.execute("sim start kubelet-node-2");
    assert_eq!(err.stderr, "error: node \"node-2\" is powered off; bring it back with: sim node recover node-2\n");

    assert_eq!(run(&mut s, "sim node recover node-2").stdout, "node/node-2 powered on\n");
    s.advance(Duration::secs(30));
    for name in &on_node {
        let pod = s.sim().api().get(&ObjectKey::new(Kind::Pod, "default", name)).unwrap().as_pod().unwrap().clone();
        let c = &pod.status.container_statuses[0];
        assert_eq!(pod.status.phase, Some(PodPhase::Running), "{name}");
        assert_eq!(c.restart_count, 1, "{name} restarted in place");
        let last = c.last_state.terminated.as_ref().expect("lastState.terminated");
        assert_eq!((last.exit_code, last.reason.as_deref()), (255, Some("Unknown")));
    }
    assert!(lease_renewed_at(s.sim(), "node-2") > renewed);
    assert_invariants(s.sim());
}

#[test]
fn a_crashing_container_goes_into_crash_loop_back_off_10s_20s_40s_with_back_off_events() {
    let mut s = session(13);
    let pod = pod_on(s.sim(), "node-1");
    let name = pod.metadata.name.clone();
    let out = run(&mut s, &format!("sim crash {name} --code 3"));
    assert_eq!(out.stdout, format!("pod/{name} on node-1: its containers will exit with code 3 0ms after each start\n"));
    // Watch the container's starts as the API sees them.
    let mut starts: Vec<Time> = Vec::new();
    let until = s.sim().now() + Duration::mins(4);
    while s.sim().now() < until {
        s.advance(Duration::millis(250));
        let p = s.sim().api().get(&ObjectKey::new(Kind::Pod, "default", &name)).unwrap().as_pod().unwrap().clone();
        if let Some(t) = p.status.container_statuses[0].state.running.as_ref().and_then(|r| r.started_at) {
            if starts.last() != Some(&t) {
                starts.push(t);
            }
        }
        if let Some(t) = p.status.container_statuses[0].last_state.terminated.as_ref().and_then(|t| t.started_at) {
            if !starts.contains(&t) {
                starts.push(t);
                starts.sort();
            }
        }
    }
    assert!(starts.len() >= 5, "{starts:?}");
    let gaps: Vec<u64> = starts.windows(2).map(|w| w[1].since(w[0]).0).collect();
    // The first restart is immediate; then the back-off doubles (plus the relist and the pod
    // worker's 10–15 s retry that notices it passed).
    for (gap, backoff) in gaps[1..].iter().zip([10, 20, 40]) {
        let b = backoff * 1000;
        assert!(*gap >= b && *gap <= b + 16_000, "back-off {backoff}s: gap {gap} ms in {gaps:?}");
    }
    let p = s.sim().api().get(&ObjectKey::new(Kind::Pod, "default", &name)).unwrap().as_pod().unwrap().clone();
    let c = &p.status.container_statuses[0];
    assert!(c.restart_count >= 4);
    let status = run(&mut s, "sim status").stdout;
    assert!(status.contains(&format!("  pod/{name} on node-1: exits with code 3 0ms after each start\n")), "{status}");
    assert_eq!(c.last_state.terminated.as_ref().map(|t| t.exit_code), Some(3));
    let back_off = events(s.sim(), "BackOff");
    let e = back_off.iter().find(|e| e.involved_object.name == name).expect("a BackOff event");
    assert_eq!(e.message, format!("Back-off restarting failed container nginx in pod {name}_default({})", p.metadata.uid));
    assert_eq!(e.type_, "Warning");
    let get = run(&mut s, &format!("kubectl get pod {name}")).stdout;
    assert!(get.contains("CrashLoopBackOff") || get.contains("Error"), "{get}");
}

#[test]
fn fault_verbs_reject_bad_input_with_clear_errors_and_change_nothing() {
    let mut s = session(14);
    let rev = s.sim().api().revision();
    for (line, want) in [
        (
            "sim stop kube-proxy",
            "error: unknown component \"kube-proxy\"; known components: etcd, kube-apiserver, kube-controller-manager, kube-scheduler, kubelet-node-1, kubelet-node-2, kube-proxy-node-1, kube-proxy-node-2\n",
        ),
        ("sim stop kubelet-node-9", "error: unknown component \"kubelet-node-9\"; known components: etcd, kube-apiserver, kube-controller-manager, kube-scheduler, kubelet-node-1, kubelet-node-2, kube-proxy-node-1, kube-proxy-node-2\n"),
        ("sim start kube-scheduler", "error: kube-scheduler is already running\n"),
        ("sim stop", "error: sim stop takes one component: kube-apiserver, etcd, kube-controller-manager, kube-controller-manager/CONTROLLER, kube-scheduler, kubelet-NODE, kube-proxy-NODE or operator/NAME\n"),
        ("sim stop kube-controller-manager/nosuch", "error: unknown controller \"nosuch\" in kube-controller-manager; known controllers: deployment-controller, replicaset-controller, garbage-collector-controller, node-lifecycle-controller, taint-eviction-controller, namespace-controller, endpointslice-controller, endpoints-controller, pod-garbage-collector-controller, job-controller, ttl-after-finished-controller, daemonset-controller, disruption-controller, replicationcontroller-controller, horizontal-pod-autoscaler-controller, cronjob-controller, statefulset-controller, persistentvolume-binder-controller, persistentvolumeclaim-protection-controller\n"),
        ("sim start kube-controller-manager/job-controller", "error: kube-controller-manager/job-controller is already running\n"),
        ("sim node fail node-9", "Error from server (NotFound): nodes \"node-9\" not found\n"),
        ("sim node recover node-1", "error: node \"node-1\" has no fault to recover from\n"),
        ("sim watch drop 101", "error: invalid percentage \"101\": must be a whole number from 0 to 100\n"),
        ("sim watch drop lots kube-scheduler", "error: invalid percentage \"lots\": must be a whole number from 0 to 100\n"),
        ("sim watch drop 10 etcd", "error: unknown watch client \"etcd\"; watch clients: kube-controller-manager, kube-scheduler, kubelet-node-1, kubelet-node-2, kube-proxy-node-1, kube-proxy-node-2\n"),
        ("sim watch delay soon", "error: invalid duration \"soon\": expected a number with a unit, like 500ms, 30s, 5m or 1h\n"),
        ("sim watch flood", "error: unknown sim watch command \"flood\"\nKnown sim watch commands: delay, drop, sever\n"),
        ("sim etcd restore", "error: no etcd snapshot to restore; take one first with: sim etcd snapshot\n"),
        ("sim etcd melt", "error: unknown sim etcd command \"melt\"\nKnown sim etcd commands: restore, snapshot, wipe\n"),
        ("sim crash nothing", "Error from server (NotFound): pods \"nothing\" not found\n"),
        ("sim crash", "error: sim crash takes exactly one POD, got 0\n"),
    ] {
        let out = s.execute(line);
        assert_eq!((out.stderr.as_str(), out.ok), (want, false), "{line}");
    }
    let pod = pod_on(s.sim(), "node-1").metadata.name;
    let out = s.execute(&format!("sim crash {pod} --code 300"));
    assert_eq!(out.stderr, "error: invalid argument \"300\" for \"--code\" flag: an exit code is from 0 to 255\n");
    let out = s.execute(&format!("sim crash {pod} --after soon"));
    assert!(out.stderr.starts_with("error: invalid argument \"soon\" for \"--after\" flag: invalid duration"), "{}", out.stderr);
    assert!(!s.sim().has_faults());
    assert_eq!(s.sim().api().revision(), rev);
    assert!(run(&mut s, "sim status").stdout.lines().all(|l| !l.contains("Stopped")));
}

#[test]
fn sim_status_shows_stopped_components_and_the_faults_in_force() {
    let mut s = session(15);
    run(&mut s, "sim stop kube-scheduler");
    run(&mut s, "sim node partition node-2");
    run(&mut s, "sim watch drop 30 kube-controller-manager");
    run(&mut s, "sim watch delay 2s");
    let status = run(&mut s, "sim status").stdout;
    assert!(status.lines().any(|l| l.starts_with("kube-scheduler ") && l.contains("Stopped")), "{status}");
    let faults = status.split("Faults:\n").nth(1).expect("a Faults section");
    assert_eq!(
        faults,
        "  node/node-2 partitioned\n  watch events to every component: delayed 2s\n  watch events to kube-controller-manager: 30% dropped\n  watch events to kube-controller-manager: delayed 2s\n"
    );
    run(&mut s, "sim watch drop 0");
    run(&mut s, "sim watch delay 0s");
    run(&mut s, "sim node recover node-2");
    run(&mut s, "sim start kube-scheduler");
    assert!(!s.sim().has_faults());
    assert!(!run(&mut s, "sim status").stdout.contains("Faults:"));
}

#[test]
fn a_restarted_api_server_makes_clients_behind_its_new_watch_cache_re_list() {
    let mut s = session(16);
    run(&mut s, "sim restart kube-apiserver");
    assert!(s.sim().is_running(&ComponentId::ApiServer));
    s.advance(Duration::secs(5));
    assert!(s.sim().open_watches(None) > 0, "the clients are back");
    run(&mut s, "kubectl scale deployment web --replicas=2");
    s.advance(Duration::secs(10));
    assert_eq!(running_pods(s.sim()).len(), 2);
    assert_invariants(s.sim());
}

#[test]
fn a_restarted_controller_manager_acts_on_the_state_it_finds_not_on_the_events_it_missed() {
    let mut s = session(17);
    run(&mut s, "sim stop kube-controller-manager");
    for n in [5, 2, 4] {
        run(&mut s, &format!("kubectl scale deployment web --replicas={n}"));
        s.advance(Duration::secs(5));
    }
    let before: Vec<String> = events(s.sim(), "ScalingReplicaSet").into_iter().map(|e| e.message.to_string()).collect();
    run(&mut s, "sim restart kube-controller-manager");
    s.advance(Duration::secs(15));
    let after: Vec<String> =
        events(s.sim(), "ScalingReplicaSet").into_iter().map(|e| e.message.to_string()).filter(|m| !before.contains(m)).collect();
    assert_eq!(after.len(), 1, "one decision from the state it re-listed: {after:?}");
    assert!(after[0].starts_with("Scaled up replica set web-") && after[0].ends_with(" from 3 to 4"), "{after:?}");
    assert_eq!(running_pods(s.sim()).len(), 4);
}

/// The invariant bounding the garbage collector's lag holds the collector to what it can see:
/// a ReplicaSet whose Deployment is deleted while the collector is switched off is no
/// violation, and once it runs again the collector takes it well within the bound.
#[test]
fn an_orphan_made_while_the_collector_is_stopped_is_collected_once_it_runs() {
    let mut s = session(5);
    run(&mut s, "sim stop kube-controller-manager/garbage-collector-controller");
    let rs = s.sim().objects(Kind::ReplicaSet).next().expect("web's ReplicaSet").key();
    run(&mut s, "kubectl delete deployment web");
    s.advance(Duration::mins(3));
    assert!(s.sim().api().get(&rs).is_some(), "nobody collects it while the collector is off");
    assert_invariants(s.sim());
    run(&mut s, "sim start kube-controller-manager/garbage-collector-controller");
    s.advance(Duration::secs(30));
    assert!(s.sim().api().get(&rs).is_none(), "collected once the collector runs");
    assert_invariants(s.sim());
}
