//! The kubelet's probes as the documentation's "Configure Liveness, Readiness and Startup
//! Probes" page shows them, one test per upstream behaviour, with its numbers and messages:
//! manifests of our own using what `content/en/examples/pods/probe/*.yaml` use.

use kubeloop::api::ApiRequest;
use kubeloop::model::*;
use kubeloop::sim::{NodeConfig, Sim};

fn object(yaml: &str) -> Object {
    Object::from_json(yaml_serde::from_str(yaml).unwrap()).unwrap()
}

/// A one-node cluster with `yaml` created; returns it once the pod was created.
fn run(yaml: &str) -> Sim {
    let mut sim = Sim::new(5);
    sim.check_invariants_every_step();
    sim.add_node(NodeConfig::new("node-1")).unwrap();
    sim.settle(Duration::secs(30)).unwrap();
    sim.submit(ApiRequest::Create(object(yaml))).unwrap();
    sim
}

fn pod(sim: &Sim, name: &str) -> Pod {
    sim.api().get(&ObjectKey::new(Kind::Pod, "default", name)).and_then(|o| o.as_pod().cloned()).expect("the pod exists")
}

fn events(sim: &Sim, reason: &str) -> Vec<Event> {
    let mut out: Vec<Event> = sim.objects(Kind::Event).filter_map(|o| o.as_event().cloned()).filter(|e| e.reason == reason).collect();
    out.sort_by_key(|e| (e.first_timestamp, e.metadata.name.clone()));
    out
}

/// Steps the simulation 100 ms at a time until `what` holds, at most `limit`; when it held.
fn until(sim: &mut Sim, limit: Duration, what: impl Fn(&Sim) -> bool) -> Time {
    let end = sim.now() + limit;
    while sim.now() < end {
        if what(sim) {
            return sim.now();
        }
        sim.advance(Duration(100));
    }
    panic!("not within {limit:?}");
}

fn started_at(p: &Pod) -> Option<Time> {
    p.status.container_statuses.first().and_then(|c| c.state.running.as_ref()).and_then(|r| r.started_at)
}

const EXEC_LIVENESS: &str = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: liveness-exec\n  labels: {test: liveness}\nspec:\n  containers:\n  - name: liveness\n    image: registry.k8s.io/busybox:1.27.2\n    args:\n    - /bin/sh\n    - -c\n    - touch /tmp/healthy; sleep 30; rm -f /tmp/healthy; sleep 600\n    livenessProbe:\n      exec:\n        command: [cat, /tmp/healthy]\n      initialDelaySeconds: 5\n      periodSeconds: 5\n";

#[test]
fn exec_liveness_fails_three_times_after_the_file_is_removed_and_the_container_is_killed_and_restarted() {
    let mut sim = run(EXEC_LIVENESS);
    let started = until(&mut sim, Duration::mins(1), |s| started_at(&pod(s, "liveness-exec")).is_some());
    let container_started = started_at(&pod(&sim, "liveness-exec")).unwrap();
    let killing = until(&mut sim, Duration::mins(2), |s| !events(s, "Killing").is_empty());
    // The file goes at 30 s; probes every 5 s fail three times: the third lands 40–45 s in
    // (plus up to a second for the PLEG to report the start).
    let after = killing.since(container_started).0;
    assert!((40_000..=46_500).contains(&after), "killed {after} ms after the start");
    let unhealthy = events(&sim, "Unhealthy");
    assert_eq!(unhealthy.len(), 1, "one aggregated event");
    assert_eq!(unhealthy[0].count, 3);
    assert_eq!(unhealthy[0].type_, "Warning");
    assert_eq!(unhealthy[0].message.trim(), "Liveness probe failed: cat: can't open '/tmp/healthy': No such file or directory");
    assert_eq!(unhealthy[0].involved_object.field_path, "spec.containers{liveness}");
    let kill = &events(&sim, "Killing")[0];
    assert_eq!(kill.message, "Container liveness failed liveness probe, will be restarted");
    assert_eq!(pod(&sim, "liveness-exec").restarts(), 0, "sh ignores SIGTERM: the kill waits for the 30 s grace period");
    let restarted = until(&mut sim, Duration::mins(1), |s| pod(s, "liveness-exec").restarts() == 1);
    assert!((30_000..=32_500).contains(&restarted.since(killing).0), "restarted {:?} after the kill", restarted.since(killing));
    let p = pod(&sim, "liveness-exec");
    let last = p.status.container_statuses[0].last_state.terminated.clone().unwrap();
    assert_eq!((last.exit_code, last.reason.as_deref()), (137, Some("Error")));
    assert!(started < restarted);
}

const HTTP_LIVENESS: &str = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: liveness-http\n  labels: {test: liveness}\nspec:\n  containers:\n  - name: liveness\n    image: registry.k8s.io/e2e-test-images/agnhost:2.40\n    args: [liveness]\n    livenessProbe:\n      httpGet:\n        path: /healthz\n        port: 8080\n        httpHeaders:\n        - name: Custom-Header\n          value: Awesome\n      initialDelaySeconds: 3\n      periodSeconds: 3\n";

#[test]
fn http_liveness_fails_with_statuscode_500_after_10_seconds_and_the_container_restarts() {
    let mut sim = run(HTTP_LIVENESS);
    until(&mut sim, Duration::mins(1), |s| started_at(&pod(s, "liveness-http")).is_some());
    let container_started = started_at(&pod(&sim, "liveness-http")).unwrap();
    let killing = until(&mut sim, Duration::mins(1), |s| !events(s, "Killing").is_empty());
    // 200 until 10 s, then 500: three failures 3 s apart end 16–19 s in.
    let after = killing.since(container_started).0;
    assert!((16_000..=20_500).contains(&after), "killed {after} ms after the start");
    let unhealthy = &events(&sim, "Unhealthy")[0];
    assert_eq!((unhealthy.message.as_str(), unhealthy.count), ("Liveness probe failed: HTTP probe failed with statuscode: 500", 3));
    // agnhost, a Go program as PID 1, exits 2 on SIGTERM: the restart follows within seconds.
    until(&mut sim, Duration::secs(10), |s| pod(s, "liveness-http").restarts() == 1);
    let p = pod(&sim, "liveness-http");
    assert_eq!(p.status.container_statuses[0].last_state.terminated.as_ref().map(|t| t.exit_code), Some(2));
}

/// The documentation's older `http-liveness.yaml`: the liveness image under the registry's old
/// name, which still serves it.
const HTTP_LIVENESS_OLD_REGISTRY: &str = "apiVersion: v1\nkind: Pod\nmetadata:\n  labels:\n    test: liveness\n  name: liveness-http\nspec:\n  containers:\n  - name: liveness\n    image: k8s.gcr.io/liveness\n    args:\n    - /server\n    livenessProbe:\n      httpGet:\n        path: /healthz\n        port: 8080\n        httpHeaders:\n        - name: Custom-Header\n          value: Awesome\n      initialDelaySeconds: 3\n      periodSeconds: 3\n";

/// When each Unhealthy, Killing, Pulled and Started event of the first two minutes came, with
/// its message, and the restarts then.
fn liveness_story(yaml: &str) -> (Vec<(Time, String, String)>, i32) {
    let mut sim = run(yaml);
    sim.advance(Duration::mins(2));
    let mut seen: Vec<(Time, String, String)> = ["Unhealthy", "Killing", "Started"]
        .iter()
        .flat_map(|r| events(&sim, r))
        .map(|e| (e.first_timestamp.unwrap_or_default(), e.reason.to_string(), e.message.to_string()))
        .collect();
    seen.sort();
    (seen, pod(&sim, "liveness-http").restarts())
}

#[test]
fn k8s_gcr_io_liveness_is_the_same_image_as_registry_k8s_io_liveness_and_is_restarted_at_the_same_times() {
    let (old, old_restarts) = liveness_story(HTTP_LIVENESS_OLD_REGISTRY);
    let (new, new_restarts) = liveness_story(&HTTP_LIVENESS_OLD_REGISTRY.replace("k8s.gcr.io/liveness", "registry.k8s.io/liveness"));
    assert_eq!(old, new);
    assert_eq!(old_restarts, new_restarts);
    assert!(old_restarts >= 2, "restarted every time /healthz turns to 500: {old_restarts}");
    let reasons: Vec<&str> = old.iter().map(|(_, r, _)| r.as_str()).take(3).collect();
    assert_eq!(reasons, ["Started", "Unhealthy", "Killing"]);
    assert_eq!(old[1].2, "Liveness probe failed: HTTP probe failed with statuscode: 500");
    assert_eq!(old[2].2, "Container liveness failed liveness probe, will be restarted");
}

const TCP_LIVENESS_READINESS: &str = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: goproxy\n  labels:\n    app.kubernetes.io/name: goproxy\nspec:\n  containers:\n  - name: goproxy\n    image: registry.k8s.io/goproxy:0.1\n    ports:\n    - containerPort: 8080\n    readinessProbe:\n      tcpSocket:\n        port: 8080\n      initialDelaySeconds: 15\n      periodSeconds: 10\n    livenessProbe:\n      tcpSocket:\n        port: 8080\n      initialDelaySeconds: 15\n      periodSeconds: 10\n";

#[test]
fn a_readiness_probe_keeps_the_pod_unready_until_its_initial_delay_has_passed() {
    let mut sim = run(TCP_LIVENESS_READINESS);
    until(&mut sim, Duration::mins(1), |s| pod(s, "goproxy").phase() == PodPhase::Running);
    let p = pod(&sim, "goproxy");
    let container_started = started_at(&p).unwrap();
    assert!(!p.is_ready(), "readiness starts at Failure");
    assert_eq!(p.condition("ContainersReady").map(|c| c.status.as_str()), Some("False"));
    assert_eq!(p.status.container_statuses[0].started, Some(true), "no startup probe: started once running");
    let ready = until(&mut sim, Duration::mins(1), |s| pod(s, "goproxy").is_ready());
    // Not before 15 s; at the first tick (10 s apart) after it, plus the status write.
    let after = ready.since(container_started).0;
    assert!((15_000..=27_000).contains(&after), "ready {after} ms after the start");
    assert!(pod(&sim, "goproxy").status.container_statuses[0].ready);
    sim.advance(Duration::mins(2));
    assert!(events(&sim, "Unhealthy").is_empty() && pod(&sim, "goproxy").restarts() == 0, "goproxy listens on 8080");
}

#[test]
fn a_failing_tcp_readiness_probe_reports_connection_refused_at_the_pod_ip_and_never_restarts() {
    let mut sim = run(&TCP_LIVENESS_READINESS
        .replace("containerPort: 8080", "containerPort: 9090")
        .replace("    livenessProbe:\n      tcpSocket:\n        port: 8080\n      initialDelaySeconds: 15\n      periodSeconds: 10\n", ""));
    sim.advance(Duration::mins(2));
    let p = pod(&sim, "goproxy");
    let ip = p.status.pod_ip.clone().unwrap();
    let unhealthy = &events(&sim, "Unhealthy")[0];
    assert_eq!(unhealthy.message.as_str(), format!("Readiness probe failed: dial tcp {ip}:8080: connect: connection refused"));
    assert!(!p.is_ready() && p.restarts() == 0 && events(&sim, "Killing").is_empty());
}

const GRPC_LIVENESS: &str = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: etcd-with-grpc\nspec:\n  containers:\n  - name: etcd\n    image: registry.k8s.io/etcd:3.5.1-0\n    command: [/usr/local/bin/etcd, --data-dir, /var/lib/etcd, --listen-client-urls, 'http://0.0.0.0:2379', --advertise-client-urls, 'http://127.0.0.1:2379', --log-level, debug]\n    ports:\n    - containerPort: 2379\n    livenessProbe:\n      grpc:\n        port: 2379\n      initialDelaySeconds: 10\n";

#[test]
fn grpc_liveness_of_etcd_passes_and_fails_only_when_made_to() {
    let mut sim = run(GRPC_LIVENESS);
    sim.advance(Duration::mins(2));
    assert!(events(&sim, "Unhealthy").is_empty());
    assert!(pod(&sim, "etcd-with-grpc").is_ready());
    let key = ObjectKey::new(Kind::Pod, "default", "etcd-with-grpc");
    sim.set_probe_fault(&key, kubeloop::kubelet::prober::ProbeType::Liveness, true).unwrap();
    // Three failures at the default 10 s period.
    until(&mut sim, Duration::secs(35), |s| !events(s, "Killing").is_empty());
    let unhealthy = &events(&sim, "Unhealthy")[0];
    assert_eq!(unhealthy.message.as_str(), "Liveness probe failed: service unhealthy (responded with \"NOT_SERVING\")");
    assert_eq!(unhealthy.count, 3);
}

/// `content/en/examples/pods/probe/grpc-liveness.yaml` as the website has it today: a YAML flow
/// mapping with trailing commas after a `---`.
const GRPC_LIVENESS_DOCUMENT: &str = r#"---
{
  apiVersion: "v1",
  kind: "Pod",
  metadata: {
    name: "etcd-with-grpc",
  },
  spec: {
    containers: [{
      name: "etcd",
      image: "registry.k8s.io/etcd:3.5.1-0",
      command: [
        "/usr/local/bin/etcd",
        "--data-dir",
        "/var/lib/etcd",
        "--listen-client-urls",
        "http://0.0.0.0:2379",
        "--advertise-client-urls",
        "http://127.0.0.1:2379",
        "--log-level",
        "debug",
      ],
      ports: [{
        containerPort: 2379,
      }],
      livenessProbe: {
        grpc: {
          port: 2379,
        },
        initialDelaySeconds: 10,
      },
    }],
  },
}
"#;

#[test]
fn the_documentations_grpc_liveness_file_is_accepted_by_kubectl_apply_and_its_probe_runs() {
    let scenario = kubeloop::command::scenario::Scenario::builtin("default").unwrap();
    let mut session = kubeloop::command::Session::new(scenario, None).unwrap();
    session.add_file("grpc-liveness.yaml", GRPC_LIVENESS_DOCUMENT);
    let out = session.execute("kubectl apply -f grpc-liveness.yaml");
    assert_eq!((out.stdout.as_str(), out.stderr.as_str()), ("pod/etcd-with-grpc created\n", ""));
    session.advance(Duration::mins(1));
    let out = session.execute("kubectl describe pod etcd-with-grpc");
    assert!(
        out.stdout.contains("    Liveness:       grpc <pod>:2379  delay=10s timeout=1s period=10s #success=1 #failure=3\n"),
        "{}",
        out.stdout
    );
    let pod = pod(session.sim(), "etcd-with-grpc");
    assert!(pod.is_ready() && pod.restarts() == 0, "etcd answers SERVING");
    // validateHandler: a second handler is refused on the later one, in upstream's order.
    let both = GRPC_LIVENESS_DOCUMENT
        .replace("name: \"etcd-with-grpc\"", "name: \"two\"")
        .replace("initialDelaySeconds: 10,", "initialDelaySeconds: 10, httpGet: {path: /healthz, port: 2379},");
    session.add_file("two.yaml", &both);
    let out = session.execute("kubectl apply -f two.yaml");
    assert!(
        out.stderr.contains("spec.containers[0].livenessProbe.grpc: Forbidden: may not specify more than 1 handler type"),
        "{}",
        out.stderr
    );
}

#[test]
fn a_startup_probe_holds_liveness_off_until_it_succeeds() {
    // The startup probe waits 20 s; the liveness probe, failing from the first run, must not run before.
    let yaml = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: slow\nspec:\n  containers:\n  - name: app\n    image: registry.k8s.io/busybox:1.27.2\n    command: [sh, -c, 'sleep 20; touch /tmp/started; sleep 3600']\n    startupProbe:\n      exec:\n        command: [cat, /tmp/started]\n      failureThreshold: 30\n      periodSeconds: 2\n    livenessProbe:\n      exec:\n        command: [cat, /tmp/alive]\n      periodSeconds: 2\n";
    let mut sim = run(yaml);
    until(&mut sim, Duration::mins(1), |s| started_at(&pod(s, "slow")).is_some());
    let p = pod(&sim, "slow");
    assert_eq!((p.status.container_statuses[0].started, p.is_ready()), (Some(false), false));
    let started = until(&mut sim, Duration::mins(1), |s| pod(s, "slow").status.container_statuses[0].started == Some(true));
    let after = started.since(started_at(&pod(&sim, "slow")).unwrap()).0;
    assert!((20_000..=23_500).contains(&after), "started {after} ms in");
    let startup_failures = events(&sim, "Unhealthy");
    assert!(startup_failures.iter().all(|e| e.message.starts_with("Startup probe failed: cat: can't open '/tmp/started'")));
    assert!(events(&sim, "Killing").is_empty(), "liveness has not run while the startup probe had not succeeded");
    let killing = until(&mut sim, Duration::secs(10), |s| !events(s, "Killing").is_empty());
    assert!(killing.since(started).0 <= 7_000);
    assert_eq!(events(&sim, "Killing")[0].message, "Container app failed liveness probe, will be restarted");
}

#[test]
fn readiness_follows_sim_fail_probe_and_pass_probe_on_demand() {
    let yaml = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: web\nspec:\n  containers:\n  - name: nginx\n    image: nginx:1.14.2\n    ports:\n    - {name: http, containerPort: 80}\n    readinessProbe:\n      httpGet: {path: /, port: http}\n      periodSeconds: 5\n";
    let mut sim = run(yaml);
    until(&mut sim, Duration::mins(1), |s| pod(s, "web").is_ready());
    let key = ObjectKey::new(Kind::Pod, "default", "web");
    let readiness = kubeloop::kubelet::prober::ProbeType::Readiness;
    sim.set_probe_fault(&key, readiness, true).unwrap();
    // Three failures 5 s apart.
    let unready = until(&mut sim, Duration::secs(20), |s| !pod(s, "web").is_ready());
    let p = pod(&sim, "web");
    assert_eq!(p.condition("Ready").and_then(|c| c.reason.as_deref()), Some("ContainersNotReady"));
    assert_eq!(events(&sim, "Unhealthy")[0].message, "Readiness probe failed: HTTP probe failed with statuscode: 500");
    assert_eq!(p.restarts(), 0, "readiness never restarts a container");
    sim.set_probe_fault(&key, readiness, false).unwrap();
    let ready = until(&mut sim, Duration::secs(10), |s| pod(s, "web").is_ready());
    assert!(ready.since(unready).0 <= 6_000);
}

#[test]
fn a_script_that_ends_makes_the_container_exit_with_its_code_and_restart_by_policy() {
    let yaml = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: once\nspec:\n  restartPolicy: OnFailure\n  containers:\n  - name: job\n    image: busybox:1.36\n    command: [sh, -c, 'echo working; sleep 5; exit 3']\n";
    let mut sim = run(yaml);
    until(&mut sim, Duration::mins(1), |s| pod(s, "once").restarts() == 1);
    let p = pod(&sim, "once");
    let last = p.status.container_statuses[0].last_state.terminated.clone().unwrap();
    assert_eq!((last.exit_code, last.reason.as_deref()), (3, Some("Error")));
    let done = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: done\nspec:\n  restartPolicy: OnFailure\n  containers:\n  - name: job\n    image: busybox:1.36\n    command: [sh, -c, 'sleep 5 && exit 0']\n";
    sim.submit(ApiRequest::Create(object(done))).unwrap();
    until(&mut sim, Duration::mins(1), |s| pod(s, "done").phase() == PodPhase::Succeeded);
}

#[test]
fn probe_defaults_are_applied_at_admission() {
    let sim = run(EXEC_LIVENESS);
    let p = pod(&sim, "liveness-exec");
    let probe = p.spec.containers[0].liveness_probe.clone().unwrap();
    assert_eq!(
        (probe.initial_delay_seconds, probe.timeout_seconds, probe.period_seconds, probe.success_threshold, probe.failure_threshold),
        (5, 1, 5, 1, 3)
    );
}

#[test]
fn a_named_port_the_container_does_not_declare_makes_the_probe_error_not_fail() {
    let yaml = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: web\nspec:\n  containers:\n  - name: nginx\n    image: nginx:1.14.2\n    ports:\n    - containerPort: 80\n    readinessProbe:\n      httpGet: {path: /, port: http}\n";
    let mut sim = run(yaml);
    sim.advance(Duration::mins(1));
    let unhealthy = &events(&sim, "Unhealthy")[0];
    assert_eq!(
        unhealthy.message.as_str(),
        "Readiness probe errored and resulted in unknown state: strconv.Atoi: parsing \"http\": invalid syntax"
    );
    let p = pod(&sim, "web");
    assert!(p.phase() == PodPhase::Running && !p.is_ready());
}
