//! A property test over many seeds and random fault schedules, drawn from a seeded RNG and
//! played through the `sim` verbs and kubectl, as a person would type them.
//!
//! For every seed: the default scenario (Deployment `web` of three replicas on two nodes) with a
//! DaemonSet `agent` added (one pod per node) goes through a schedule of faults — stopped and restarted processes (kube-apiserver and etcd
//! included), failed, partitioned and recovered nodes, dropped, delayed and severed watches,
//! etcd snapshots, restores and wipes — mixed with the person's own changes (scaling, deleting
//! pods). The invariants are checked after every step. Then every fault stops: each process is
//! started, each node recovered, watch faults cleared, and every watch severed once, standing in
//! for the reflector's 5–10 min watch timeout, which kubeloop does not model: without it a
//! notification lost to `watch drop` would never be re-delivered. From then on the declared
//! state must be reached within [`CONVERGENCE_BOUND`] of simulated time: the Deployment as last
//! declared, the StatefulSet's two pods, and the DaemonSet with an available pod on each node (both gone, after a wipe
//! without a later restore), exactly that many pods Running and available, and no container
//! running that no pod claims.
//!
//! A StatefulSet `db` (two replicas, OrderedReady) runs too: once the faults stop, `db-0` and
//! `db-1` must be Running and ready and its status must say so (or it is gone, after a wipe).
//!
//! Alongside the Deployment runs a Job (`batch`: four completions, two at a time, each pod a
//! 5 s script): whatever the faults did to it, once they stop it must be Complete, with every
//! pod counted (no tracking finalizer left) and none still active — or gone, after a wipe.
//!
//! And a CronJob (`tick`, every minute, `Forbid`, each Job's pod a `date`): once the faults
//! stop, its controller must have caught up — a Job for a schedule time no older than
//! [`CRON_CATCH_UP`] recorded in `lastScheduleTime` — with `status.active` naming only Jobs
//! that exist and have not finished, at most one of them (Forbid), and the history limits (3
//! succeeded, 1 failed) kept; or it is gone, after a wipe.
//!
//! Crashing containers (`sim crash`) are left out: a crash loop never converges, by design.

use kubeloop::command::{Scenario, Session};
use kubeloop::model::*;
use kubeloop::rng::Rng;
use kubeloop::sim::{ComponentId, Sim};
use std::collections::BTreeSet;

/// How long after the last fault the declared state must be reached: an informer that backed
/// off to its 30 s cap, then a kubelet's 10–15 s pod-sync retry, an image pull (2–4 s) and the
/// PLEG relist after it, with room to spare (60 seeds take at most 28 s).
const CONVERGENCE_BOUND: Duration = Duration::secs(90);
const SEEDS: u64 = 60;
const ACTIONS: usize = 16;

const COMPONENTS: &[&str] = &["kube-apiserver", "etcd", "kube-controller-manager", "kube-scheduler", "kubelet-node-1", "kubelet-node-2"];
const NODES: &[&str] = &["node-1", "node-2"];
const WATCH_TARGETS: &[&str] = &["", "kube-controller-manager", "kube-scheduler", "kubelet-node-1", "kubelet-node-2"];

/// What the person has declared: the Deployment's replica count (and, with it, the DaemonSet),
/// or none after a wipe; whether the Job is there; whether the CronJob is.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Declared(Option<i32>, bool, bool);

/// How far behind the clock the CronJob's last schedule time may be once converged: a minute
/// between schedule times, plus an informer's 30 s re-list back-off and the Job's creation.
const CRON_CATCH_UP: Duration = Duration::secs(100);

/// The CronJob that runs through every schedule.
const CRON_JOB: &str = "apiVersion: batch/v1\nkind: CronJob\nmetadata: {name: tick}\nspec:\n  schedule: '* * * * *'\n  concurrencyPolicy: Forbid\n  jobTemplate:\n    spec:\n      template:\n        spec:\n          restartPolicy: Never\n          containers:\n          - {name: c, image: busybox, command: [date]}\n";

fn start_cron_job(s: &mut Session) {
    let cj = Object::from_json(yaml_serde::from_str(CRON_JOB).expect("yaml")).expect("a CronJob");
    s.sim_mut().submit(kubeloop::api::ApiRequest::Create(cj)).expect("the CronJob is created");
}

/// Whether a pod belongs to one of the CronJob's Jobs.
fn is_cron_jobs(p: &Pod) -> bool {
    p.metadata.controller_ref().is_some_and(|r| r.kind == "Job" && r.name.starts_with("tick-"))
}

/// The CronJob as declared: caught up, its active list true, its history within the limits.
fn cron_job_converged(sim: &Sim, declared: Declared) -> Result<(), String> {
    let cj = sim.objects(Kind::CronJob).find_map(|o| o.as_cron_job().cloned());
    let jobs: Vec<Job> =
        sim.objects(Kind::Job).filter_map(|o| o.as_job().cloned()).filter(|j| j.metadata.name.starts_with("tick-")).collect();
    let cj = match (declared.2, cj) {
        (false, None) => return Ok(()),
        (true, Some(cj)) => cj,
        (_, found) => return Err(format!("declared cron job {}, found {}", declared.2, found.is_some())),
    };
    let caught_up = Time(sim.now().as_millis().saturating_sub(CRON_CATCH_UP.as_millis()));
    if cj.status.last_schedule_time.is_none_or(|t| t < caught_up) {
        return Err(format!("cron job behind: last schedule {:?} at {:?}", cj.status.last_schedule_time, sim.now()));
    }
    if cj.status.active.len() > 1 {
        return Err(format!("Forbid, yet {} active", cj.status.active.len()));
    }
    for r in &cj.status.active {
        if !jobs.iter().any(|j| j.metadata.uid == r.uid && !j.status.is_finished()) {
            return Err(format!("status.active names {} which is gone or finished", r.name));
        }
    }
    let count = |c: &str| jobs.iter().filter(|j| j.status.has_true(c)).count();
    if count("Complete") > 3 || count("Failed") > 1 {
        return Err(format!("history kept {} complete and {} failed Jobs", count("Complete"), count("Failed")));
    }
    Ok(())
}

/// The Job that runs through every schedule: its backoff limit is high because the person's
/// pod deletions count as failures, and the schedule is about faults, not about the limit.
const JOB: &str = "apiVersion: batch/v1\nkind: Job\nmetadata: {name: batch}\nspec:\n  completions: 4\n  parallelism: 2\n  backoffLimit: 100\n  template:\n    spec:\n      restartPolicy: Never\n      containers:\n      - {name: c, image: busybox, command: [sh, -c, sleep 5]}\n";

fn start_job(s: &mut Session) {
    let job = Object::from_json(yaml_serde::from_str(JOB).expect("yaml")).expect("a Job");
    s.sim_mut().submit(kubeloop::api::ApiRequest::Create(job)).expect("the Job is created");
}

fn is_jobs(p: &Pod) -> bool {
    p.metadata.controller_ref().is_some_and(|r| r.kind == "Job" && r.name == "batch")
}

/// The Job as declared: Complete with every pod counted, or gone.
fn job_converged(sim: &Sim, declared: Declared, pods: &[Pod]) -> Result<(), String> {
    let job = sim.objects(Kind::Job).filter_map(|o| o.as_job().cloned()).find(|j| j.metadata.name == "batch");
    let job_pods: Vec<&Pod> = pods.iter().filter(|p| is_jobs(p)).collect();
    match (declared.1, job) {
        (false, None) => {}
        (true, Some(j)) if j.status.has_true("Complete") && j.status.succeeded >= 4 => {}
        (true, Some(j)) => return Err(format!("job not complete: {:?}", j.status)),
        (_, found) => return Err(format!("declared job {}, found {}", declared.1, found.is_some())),
    }
    if let Some(p) = job_pods.iter().find(|p| !p.metadata.finalizers.is_empty() || !p.is_terminal()) {
        return Err(format!("job pod {} still {:?} with {:?}", p.metadata.name, p.status.phase, p.metadata.finalizers));
    }
    Ok(())
}

/// The DaemonSet each seed adds to the default scenario before its faults.
const DAEMON_SET: &str = "kubectl create -f - <<EOF
apiVersion: apps/v1
kind: DaemonSet
metadata: {name: agent}
spec:
  selector: {matchLabels: {app: agent}}
  template:
    metadata: {labels: {app: agent}}
    spec:
      containers: [{name: agent, image: busybox, command: [sleep, '3600'], resources: {requests: {cpu: 50m, memory: 32Mi}}}]
EOF";

/// The StatefulSet each seed adds: two pods made one after the other.
const STATEFUL_SET: &str = "kubectl create -f - <<EOF
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: db}
spec:
  serviceName: db
  replicas: 2
  selector: {matchLabels: {app: db}}
  template:
    metadata: {labels: {app: db}}
    spec:
      containers: [{name: db, image: busybox, command: [sleep, '3600'], resources: {requests: {cpu: 50m, memory: 32Mi}}}]
EOF";

/// How many pods the StatefulSet declares.
const STATEFUL_REPLICAS: usize = 2;

fn pick<'a>(rng: &mut Rng, from: &[&'a str]) -> &'a str {
    from[rng.below(from.len() as u64) as usize]
}

/// One random action, as a command line.
fn draw_action(rng: &mut Rng, sim: &Sim) -> String {
    match rng.below(100) {
        0..=11 => format!("sim stop {}", pick(rng, COMPONENTS)),
        12..=25 => format!("sim start {}", pick(rng, COMPONENTS)),
        26..=31 => format!("sim restart {}", pick(rng, COMPONENTS)),
        32..=37 => format!("sim node fail {}", pick(rng, NODES)),
        38..=43 => format!("sim node partition {}", pick(rng, NODES)),
        44..=53 => format!("sim node recover {}", pick(rng, NODES)),
        54..=59 => format!("sim watch drop {} {}", 10 * rng.below(11), pick(rng, WATCH_TARGETS)),
        60..=63 => format!("sim watch delay {}ms {}", 500 * rng.below(7), pick(rng, WATCH_TARGETS)),
        64..=68 => format!("sim watch sever {}", pick(rng, WATCH_TARGETS)),
        69..=73 => "sim etcd snapshot".to_string(),
        74..=77 => "sim etcd restore".to_string(),
        78 => "sim etcd wipe".to_string(),
        79..=89 => format!("kubectl scale deployment web --replicas={}", 1 + rng.below(6)),
        _ => {
            let names: Vec<String> = sim.objects(Kind::Pod).map(|o| o.meta().name.to_string()).collect();
            match names.len() {
                0 => "sim advance 1s".to_string(),
                n => format!("kubectl delete pod {}", names[rng.below(n as u64) as usize]),
            }
        }
    }
}

/// Plays one line and updates what is declared by what succeeded.
fn play(s: &mut Session, line: &str, declared: &mut Declared, snapshot: &mut Option<Declared>) {
    let revision = s.sim().api().etcd.revision();
    let out = s.execute(line);
    if !out.ok {
        if line.starts_with("sim ") {
            assert_eq!(s.sim().api().etcd.revision(), revision, "a failed {line:?} changed etcd: {}", out.stderr);
        }
        return;
    }
    if line == "sim etcd snapshot" {
        *snapshot = Some(*declared);
    } else if line == "sim etcd restore" {
        *declared = snapshot.expect("restore succeeds only with a snapshot");
    } else if line == "sim etcd wipe" {
        *declared = Declared(None, false, false);
    } else if let Some(n) = line.strip_prefix("kubectl scale deployment web --replicas=") {
        declared.0 = Some(n.parse().expect("a number"));
    }
}

/// Ends every fault: starts what is stopped, recovers every node, clears the watch faults and
/// severs every watch once (the stand-in for the reflector's watch timeout).
fn heal(s: &mut Session) {
    for c in COMPONENTS {
        let node = c.strip_prefix("kubelet-");
        if let Some(node) = node {
            if s.sim().node_fault(node).is_some() {
                assert!(s.execute(&format!("sim node recover {node}")).ok);
            }
        }
        if !s.sim().is_running(&ComponentId::parse(c).expect("a component")) {
            let out = s.execute(&format!("sim start {c}"));
            assert!(out.ok, "{c}: {}", out.stderr);
        }
    }
    for line in ["sim watch drop 0", "sim watch delay 0s", "sim watch sever"] {
        assert!(s.execute(line).ok);
    }
    assert!(!s.sim().has_faults());
}

/// Whether the cluster is as declared; otherwise what differs.
fn converged(sim: &Sim, declared: Declared) -> Result<(), String> {
    let deployments: Vec<Deployment> = sim.objects(Kind::Deployment).filter_map(|o| o.as_deployment().cloned()).collect();
    let all: Vec<Pod> = sim.objects(Kind::Pod).filter_map(|o| o.as_pod().cloned()).collect();
    job_converged(sim, declared, &all)?;
    cron_job_converged(sim, declared)?;
    // A CronJob's pod may be running its `date` at any instant: its containers are its own.
    let cron_running: BTreeSet<ObjectKey> =
        all.iter().filter(|p| is_cron_jobs(p) && !p.is_terminal()).map(|p| ObjectKey::of(Kind::Pod, &p.metadata)).collect();
    let pods: Vec<Pod> = all.into_iter().filter(|p| !is_jobs(p) && !is_cron_jobs(p)).collect();
    let daemon_sets: Vec<DaemonSet> = sim.objects(Kind::DaemonSet).filter_map(|o| o.as_daemon_set().cloned()).collect();
    let want = declared.0.map_or(0, |n| n as usize + NODES.len() + STATEFUL_REPLICAS);
    let stateful_sets: Vec<StatefulSet> = sim.objects(Kind::StatefulSet).filter_map(|o| o.as_stateful_set().cloned()).collect();
    match (declared.0, stateful_sets.as_slice()) {
        (None, []) => {}
        (Some(_), [sts]) => {
            let n = STATEFUL_REPLICAS as i32;
            if sts.status.ready_replicas != n || sts.status.replicas != n || sts.status.observed_generation != sts.metadata.generation {
                return Err(format!("stateful set status {:?}", sts.status));
            }
            for ordinal in 0..STATEFUL_REPLICAS {
                let name = format!("db-{ordinal}");
                if !pods.iter().any(|p| p.metadata.name == name.as_str() && !p.metadata.is_deleting()) {
                    return Err(format!("no pod {name}"));
                }
            }
        }
        (_, found) => return Err(format!("declared {declared:?}, found {} stateful sets", found.len())),
    }
    match (declared.0, daemon_sets.as_slice()) {
        (None, []) => {}
        (Some(_), [ds]) => {
            let on_nodes = NODES.len() as i32;
            if ds.status.desired_number_scheduled != on_nodes || ds.status.number_available != on_nodes {
                return Err(format!("daemon set status {:?}", ds.status));
            }
        }
        (_, found) => return Err(format!("declared {declared:?}, found {} daemon sets", found.len())),
    }
    match (declared.0, deployments.as_slice()) {
        (None, []) => {}
        (Some(n), [d]) if d.spec.replicas == Some(n) => {
            if d.status.available_replicas != n || d.status.replicas != n {
                return Err(format!("deployment status {:?}", d.status));
            }
        }
        (_, found) => return Err(format!("declared {declared:?}, found {} deployments", found.len())),
    }
    let ready = pods
        .iter()
        .filter(|p| {
            p.status.phase == Some(PodPhase::Running) && !p.metadata.is_deleting() && p.status.container_statuses.iter().all(|c| c.ready)
        })
        .count();
    if pods.len() != want || ready != want {
        return Err(format!("{} pods, {ready} ready, want {want}", pods.len()));
    }
    let claimed: BTreeSet<String> = pods.iter().map(|p| p.metadata.uid.to_string()).collect();
    for node in NODES {
        let machine = sim.machine(node).ok_or("no machine")?;
        let running: Vec<_> =
            machine.running_containers().into_iter().filter(|(pod, _, st)| st.is_running() && !cron_running.contains(pod)).collect();
        let claimed_here = pods.iter().filter(|p| p.node_name() == Some(node)).count();
        if running.len() != claimed_here {
            return Err(format!("{node} runs {} containers for {claimed_here} pods", running.len()));
        }
    }
    let _ = claimed;
    Ok(())
}

/// One seed: the schedule, the healing, the convergence. Returns how long convergence took.
fn run_seed(seed: u64) -> Result<Duration, String> {
    let mut s = Session::new(Scenario::builtin("default").ok_or("no default scenario")?, Some(seed))?;
    s.sim_mut().check_every_step = true;
    let created = s.execute(DAEMON_SET);
    if !created.ok {
        return Err(format!("the DaemonSet was refused: {}", created.stderr));
    }
    let created = s.execute(STATEFUL_SET);
    if !created.ok {
        return Err(format!("the StatefulSet was refused: {}", created.stderr));
    }
    s.settle(Duration::mins(2)).map_err(|_| "the scenario did not settle")?;
    start_job(&mut s);
    let mut rng = Rng::new(seed ^ 0x5eed_fa17);
    start_cron_job(&mut s);
    let mut declared = Declared(Some(3), true, true);
    let mut snapshot = None;
    let mut played = Vec::new();
    for _ in 0..ACTIONS {
        let line = draw_action(&mut rng, s.sim());
        play(&mut s, &line, &mut declared, &mut snapshot);
        played.push(line);
        s.advance(Duration::millis(rng.below(40_000)));
        if let Some(v) = s.sim().violations().first() {
            return Err(format!("invariant broken after {played:?}: {v}"));
        }
    }
    heal(&mut s);
    let healed = s.sim().now();
    let deadline = healed + CONVERGENCE_BOUND;
    loop {
        match converged(s.sim(), declared) {
            Ok(()) => break,
            Err(why) if s.sim().now() >= deadline => {
                let seen: String = [
                    "kubectl get pods -o wide",
                    "kubectl get rs",
                    "kubectl get jobs",
                    "kubectl get ds",
                    "kubectl get cronjobs",
                    "kubectl get sts",
                    "sim status",
                ]
                .iter()
                .map(|l| s.execute(l).stdout)
                .collect();
                return Err(format!("not converged {CONVERGENCE_BOUND} after the faults stopped: {why}\nschedule: {played:?}\n{seen}"));
            }
            Err(_) => s.advance(Duration::secs(1)),
        }
    }
    let took = s.sim().now().since(healed);
    if let Some(v) = s.sim().violations().first() {
        return Err(format!("invariant broken: {v}\nschedule: {played:?}"));
    }
    Ok(took)
}

#[test]
fn after_random_faults_stop_the_declared_state_returns_within_the_bound() {
    let mut slowest = Duration::ZERO;
    let mut failures = Vec::new();
    for seed in 1..=SEEDS {
        match run_seed(seed) {
            Ok(took) => slowest = slowest.max(took),
            Err(e) => failures.push(format!("seed {seed}: {e}")),
        }
    }
    assert!(failures.is_empty(), "{} of {SEEDS} seeds failed:\n{}", failures.len(), failures.join("\n\n"));
    eprintln!("slowest convergence over {SEEDS} seeds: {slowest:?}");
    assert!(slowest <= CONVERGENCE_BOUND, "slowest {slowest:?}");
}

#[test]
fn the_same_seed_plays_the_same_schedule_to_the_same_trace() {
    let trace = |seed| {
        let mut s = Session::new(Scenario::builtin("default").unwrap(), Some(seed)).unwrap();
        let mut rng = Rng::new(seed);
        start_job(&mut s);
        start_cron_job(&mut s);
        let (mut declared, mut snapshot) = (Declared(Some(3), true, true), None);
        for _ in 0..ACTIONS {
            let line = draw_action(&mut rng, s.sim());
            play(&mut s, &line, &mut declared, &mut snapshot);
            s.advance(Duration::millis(rng.below(40_000)));
        }
        (s.sim().trace().hash(), s.sim().trace().count())
    };
    assert_eq!(trace(3), trace(3));
}
