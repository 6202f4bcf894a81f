//! Operators written in Python with kopf's shape, run by the machine's `python3` through the
//! operator host protocol (`kubeloop::operator`, the native interpreter of `kubeloop run
//! --operator`): they converge as loops of the simulation, level-triggered across a deleted
//! child and a stopped operator; the same scenario, seed and code give the same trace hash; a
//! runaway handler is stopped within its budget and retried while the simulation goes on; a
//! file that does not load is a clear error and changes nothing.
//!
//! Needs `python3` (or `$KUBELOOP_PYTHON`); skipped without one, except in CI, where it fails.

#[path = "../src/bin/kubeloop/operator_host.rs"]
#[allow(dead_code)]
mod operator_host;

use kubeloop::command::{Scenario, Session};
use kubeloop::model::{Duration, Kind, ObjectKey, PodPhase};
use kubeloop::sim::ComponentId;
use operator_host::PythonInterpreter;
use std::process::Command;

fn python_available() -> bool {
    let python = std::env::var("KUBELOOP_PYTHON").ok().filter(|p| !p.is_empty()).unwrap_or_else(|| "python3".into());
    let found = Command::new(python).arg("--version").output().is_ok_and(|o| o.status.success());
    if !found {
        assert!(std::env::var_os("CI").is_none(), "python3 is needed for the operator tests in CI");
        eprintln!("skipped: no python3");
    }
    found
}

fn file(name: &str) -> String {
    format!("{}/tests/python/{name}", env!("CARGO_MANIFEST_DIR"))
}

/// The default scenario (two nodes, a Deployment `web` of 3) with the operator in `name`.
fn session_with(name: &str, seed: u64) -> Session {
    let mut session = Session::new(Scenario::builtin("default").unwrap(), Some(seed)).unwrap();
    let interpreter = PythonInterpreter::for_file(&file(name)).unwrap();
    let operator = operator_host::name_for(name);
    session.sim_mut().add_operator(&operator, Box::new(interpreter)).unwrap();
    session
}

fn run(session: &mut Session, line: &str) -> String {
    let out = session.execute(line);
    assert!(out.ok, "{line}: {}", out.stderr);
    out.stdout
}

fn advance(session: &mut Session, d: Duration) {
    let until = session.sim().now() + d;
    session.advance_to(until);
}

fn all_events(session: &mut Session) -> String {
    run(session, "kubectl get events -A")
}

#[test]
fn a_pod_labelling_operator_labels_every_pod_and_kopf_reports_each() {
    if !python_available() {
        return;
    }
    let mut s = session_with("label_pods.py", 1);
    advance(&mut s, Duration::secs(20));
    run(&mut s, "kubectl scale deployment web --replicas=5");
    advance(&mut s, Duration::secs(20));
    let pods: Vec<_> = s.sim().objects(Kind::Pod).cloned().collect();
    assert_eq!(pods.len(), 5);
    for pod in &pods {
        let labels = &pod.meta().labels;
        assert_eq!(labels.get("seen-by").map(|v| v.as_ref()), Some("kopf"), "{} is not labelled", pod.meta().name);
        // kopf's diff base: the essence it handled, labels included.
        let annotations = &pod.meta().annotations;
        assert!(annotations.get("kopf.zalando.org/last-handled-configuration").is_some_and(|a| a.contains("seen-by")), "{annotations:?}");
    }
    // kopf posts the handler's explicit kopf.info(); its log lines only with
    // settings.posting.loggers (off by default since kopf 1.44), which this file leaves off.
    let events = all_events(&mut s);
    assert_eq!(events.matches("labelled seen-by=kopf").count(), 5, "{events}");
    assert!(!events.contains("Handler 'label' succeeded."), "{events}");
    // The loop says what it did last, as the page's stage shows it.
    let last = s.sim().loops(&ComponentId::Operator("label-pods".into()))[0].last_action.clone();
    assert!(last.starts_with("Pod default/web-") && last.ends_with("Handler 'label' succeeded."), "{last}");
    // The operator is a component like the others, in the trace and in `sim status`.
    assert!(s.sim().trace().recent().any(|m| m.from == "operator/label-pods" && m.what.starts_with("update pod/")));
    assert!(run(&mut s, "sim status").contains("operator/label-pods"));
}

const SITE: &str = "apiVersion: v1
kind: ConfigMap
metadata:
  name: shop
  labels: {kubeloop.dev/site: \"yes\"}
data:
  image: nginx:1.14.2
  replicas: \"2\"
";

fn deployment(s: &Session) -> Option<(i32, String)> {
    let d = s.sim().api().get(&ObjectKey::new(Kind::Deployment, "default", "shop"))?.clone();
    let d = d.as_deployment()?.clone();
    Some((d.spec.replicas.unwrap_or(1), d.spec.template.spec.containers[0].image.to_string()))
}

fn ready_shop_pods(s: &Session) -> usize {
    s.sim()
        .objects(Kind::Pod)
        .filter(|p| p.meta().name.starts_with("shop-") && p.meta().deletion_timestamp.is_none())
        .filter(|p| p.as_pod().is_some_and(|p| p.status.phase == Some(PodPhase::Running)))
        .count()
}

#[test]
fn a_deployment_keeping_operator_converges_again_after_a_deletion_and_a_stop() {
    if !python_available() {
        return;
    }
    let mut s = session_with("keep_deployment.py", 3);
    s.set_file_reader(|_| Ok(SITE.to_string()));
    run(&mut s, "kubectl apply -f site.yaml");
    advance(&mut s, Duration::secs(30));
    assert_eq!(deployment(&s), Some((2, "nginx:1.14.2".into())));
    assert_eq!(ready_shop_pods(&s), 2);
    // Owned by the ConfigMap, as kopf.adopt makes it.
    let owner = s.sim().api().get(&ObjectKey::new(Kind::Deployment, "default", "shop")).unwrap().meta().owner_references[0].clone();
    assert_eq!((owner.kind.as_ref(), owner.name.as_ref(), owner.controller), ("ConfigMap", "shop", Some(true)));

    // Deleted by hand: the timer's next look puts it back.
    run(&mut s, "kubectl delete deployment shop");
    assert_eq!(deployment(&s), None);
    advance(&mut s, Duration::secs(30));
    assert_eq!(deployment(&s), Some((2, "nginx:1.14.2".into())));
    assert_eq!(all_events(&mut s).matches("created deployment shop").count(), 2, "created again by the timer");

    // Stopped while the claim changes: nothing happens; started, it closes the gap.
    run(&mut s, "sim stop operator/keep-deployment");
    let changed = SITE.replace("nginx:1.14.2", "nginx:1.16.1").replace("\"2\"", "\"3\"");
    s.set_file_reader(move |_| Ok(changed.clone()));
    run(&mut s, "kubectl apply -f site.yaml");
    advance(&mut s, Duration::secs(30));
    assert_eq!(deployment(&s), Some((2, "nginx:1.14.2".into())));
    run(&mut s, "sim start operator/keep-deployment");
    advance(&mut s, Duration::secs(60));
    assert_eq!(deployment(&s), Some((3, "nginx:1.16.1".into())));
    assert_eq!(ready_shop_pods(&s), 3);
    let cm = s.sim().api().get(&ObjectKey::new(Kind::ConfigMap, "default", "shop")).unwrap().clone();
    assert!(cm.meta().annotations.get("kopf.zalando.org/last-handled-configuration").is_some_and(|a| a.contains("nginx:1.16.1")));
    let events = all_events(&mut s);
    assert!(events.contains("Updating is processed: 1 succeeded; 0 failed."), "{events}");
    assert!(events.contains("updated deployment shop"), "{events}");

    // A restart loses nothing either: the file is loaded again, its resume handler looks, and
    // the claim still holds.
    run(&mut s, "sim restart operator/keep-deployment");
    advance(&mut s, Duration::secs(30));
    assert_eq!(deployment(&s), Some((3, "nginx:1.16.1".into())));
    assert!(all_events(&mut s).contains("Resuming is processed: 1 succeeded; 0 failed."));
    assert!(s.sim().violations().is_empty(), "{:?}", s.sim().violations());

    // Deleting the claim: kopf's finalizer (its timer needs one) holds it until the operator,
    // with no delete handler to call, takes the finalizer off.
    run(&mut s, "kubectl delete configmap shop --wait=false");
    let cm = s.sim().api().get(&ObjectKey::new(Kind::ConfigMap, "default", "shop")).unwrap().clone();
    assert!(cm.meta().deletion_timestamp.is_some(), "held by kopf's finalizer");
    advance(&mut s, Duration::secs(5));
    assert!(s.sim().api().get(&ObjectKey::new(Kind::ConfigMap, "default", "shop")).is_none());
}

#[test]
fn a_timer_runs_only_on_the_objects_its_filters_select() {
    if !python_available() {
        return;
    }
    // keep_deployment.py's timer selects ConfigMaps labelled kubeloop.dev/site: an unlabelled
    // one gets no Deployment, however long the timer's interval passes.
    let mut s = session_with("keep_deployment.py", 4);
    run(&mut s, "kubectl create configmap plain --from-literal=image=nginx");
    advance(&mut s, Duration::secs(35));
    assert!(s.sim().api().get(&ObjectKey::new(Kind::Deployment, "default", "plain")).is_none(), "{}", all_events(&mut s));
}

/// The trace hash of the keep-deployment run to a fixed time.
fn traced_run(seed: u64) -> u64 {
    let s = session_with("keep_deployment.py", seed);
    keep_deployment_trace(s)
}

fn keep_deployment_trace(mut s: Session) -> u64 {
    s.set_file_reader(|_| Ok(SITE.to_string()));
    run(&mut s, "kubectl apply -f site.yaml");
    advance(&mut s, Duration::secs(15));
    run(&mut s, "kubectl delete deployment shop");
    advance(&mut s, Duration::secs(30));
    s.sim().trace().hash()
}

#[test]
fn the_same_scenario_seed_and_code_give_the_same_trace() {
    if !python_available() {
        return;
    }
    let first = traced_run(11);
    assert_eq!(first, traced_run(11));
    assert_ne!(first, traced_run(12), "the seed reaches the trace");
}

/// The default scenario with the operator in `name` run by the page's host (`host_page.py`,
/// each handler call replayed from its start as its answers arrive), under the machine's python3.
fn replaying_session_with(name: &str, seed: u64) -> Session {
    let mut session = Session::new(Scenario::builtin("default").unwrap(), Some(seed)).unwrap();
    let interpreter = PythonInterpreter::replaying_for_file(&file(name)).unwrap();
    session.sim_mut().add_operator(&operator_host::name_for(name), Box::new(interpreter)).unwrap();
    session
}

/// The runaway operator's run: every kind of failing handler, to past the first retry.
fn runaway_trace(mut s: Session) -> (u64, String) {
    for label in ["loop", "recurse", "raise", "temporary", "permanent"] {
        let text = runaway(label);
        s.set_file_reader(move |_| Ok(text.clone()));
        run(&mut s, "kubectl apply -f cm.yaml");
    }
    advance(&mut s, Duration::secs(80));
    (s.sim().trace().hash(), all_events(&mut s))
}

#[test]
fn the_pages_replaying_host_gives_the_native_hosts_trace() {
    if !python_available() {
        return;
    }
    // Handlers with requests (read, create, patch; a 404 and a 409 answered): suspended
    // natively, replayed in the page's host; the same requests, outcomes and trace.
    let native = keep_deployment_trace(session_with("keep_deployment.py", 11));
    assert_eq!(native, keep_deployment_trace(replaying_session_with("keep_deployment.py", 11)));
    let labelled = |mut s: Session| {
        advance(&mut s, Duration::secs(20));
        run(&mut s, "kubectl scale deployment web --replicas=5");
        advance(&mut s, Duration::secs(20));
        s.sim().trace().hash()
    };
    assert_eq!(labelled(session_with("label_pods.py", 3)), labelled(replaying_session_with("label_pods.py", 3)));
    // A runaway loop and recursion are cut at the same line; errors are reported alike.
    let (native, native_events) = runaway_trace(session_with("runaway.py", 5));
    let (page, page_events) = runaway_trace(replaying_session_with("runaway.py", 5));
    assert!(native_events.contains("ran past its budget"), "{native_events}");
    assert_eq!(native_events, page_events);
    assert_eq!(native, page);
}

#[test]
fn a_handler_whose_replay_differs_fails_saying_why() {
    if !python_available() {
        return;
    }
    // A handler that counts its runs in a module variable asks for another object on its
    // replay: the page's host cannot repeat it, and says so as the handler's failure.
    let mut s = replaying_session_with("replay_drift.py", 2);
    let text = runaway("drift");
    s.set_file_reader(move |_| Ok(text.clone()));
    run(&mut s, "kubectl apply -f cm.yaml");
    advance(&mut s, Duration::secs(10));
    let events = all_events(&mut s);
    assert!(events.contains("Handler 'drift' failed with an exception"), "{events}");
    assert!(events.contains("state that changes between runs"), "{events}");
    // Natively the same file runs: nothing is replayed.
    let mut s = session_with("replay_drift.py", 2);
    let text = runaway("drift");
    s.set_file_reader(move |_| Ok(text.clone()));
    run(&mut s, "kubectl apply -f cm.yaml");
    advance(&mut s, Duration::secs(10));
    assert!(all_events(&mut s).contains("Handler 'drift' succeeded."));
}

/// The trace hash the page must reach with the same scenario, seed and operator (printed for
/// tests/e2e/operator.test.mjs, which runs the template in the page and compares): the default
/// scenario, seed 3, label_pods.py as `operator/label-pods` from time 0, 30 seconds on.
#[test]
fn native_trace_hash_for_the_page() {
    if !python_available() {
        return;
    }
    let mut s = session_with("label_pods.py", 3);
    advance(&mut s, Duration::secs(30));
    let hash = s.sim().trace().hash();
    let mut page = replaying_session_with("label_pods.py", 3);
    advance(&mut page, Duration::secs(30));
    assert_eq!(page.sim().trace().hash(), hash, "the page's host agrees");
    println!("native trace hash: {hash:016x}");
    // keep_deployment.py: handler calls with requests (read, 404, create; the timer's reads),
    // each answer replayed in the page's host. SITE applied at time 0, 30 seconds on.
    let mut s = session_with("keep_deployment.py", 3);
    s.set_file_reader(|_| Ok(SITE.to_string()));
    run(&mut s, "kubectl apply -f manifest.yaml");
    advance(&mut s, Duration::secs(30));
    println!("native trace hash with a site: {:016x}", s.sim().trace().hash());
}

fn runaway(label: &str) -> String {
    format!("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {label}\n  labels: {{runaway: {label}}}\n")
}

#[test]
fn runaway_handlers_are_stopped_within_their_budget_and_retried() {
    if !python_available() {
        return;
    }
    let mut s = session_with("runaway.py", 5);
    for label in ["loop", "recurse", "raise", "temporary", "permanent", "hog"] {
        let text = runaway(label);
        s.set_file_reader(move |_| Ok(text.clone()));
        run(&mut s, "kubectl apply -f cm.yaml");
    }
    let started = std::time::Instant::now();
    advance(&mut s, Duration::secs(20));
    let events = all_events(&mut s);
    let budget = kubeloop::operator::STEP_BUDGET;
    assert!(
        events.contains(&format!(
            "Handler 'spin' failed with an exception and will try again in 60 seconds: the handler ran past its budget of {budget} Python lines"
        )),
        "{events}"
    );
    assert!(
        events.contains("Handler 'dive' failed with an exception and will try again in 60 seconds: maximum recursion depth exceeded"),
        "{events}"
    );
    assert!(events.contains("Handler 'fail' failed with an exception and will try again in 60 seconds: no such thing"), "{events}");
    assert!(events.contains("Handler 'later' failed temporarily: not yet"), "{events}");
    assert!(events.contains("Handler 'never' failed permanently: give up"), "{events}");
    assert!(events.contains("Handler 'hog' failed with an exception and will try again in 60 seconds: MemoryError()"), "{events}");
    // The cluster went on meanwhile: the Deployment's pods all run.
    assert_eq!(s.sim().objects(Kind::Pod).filter(|p| p.as_pod().is_some_and(|p| p.status.phase == Some(PodPhase::Running))).count(), 3);
    // kopf's progress on the object: one retry so far, and when the next is due.
    let spin = s.sim().api().get(&ObjectKey::new(Kind::ConfigMap, "default", "loop")).unwrap().clone();
    let progress = spin.meta().annotations.get("kopf.zalando.org/spin").map(|a| a.to_string()).unwrap_or_default();
    assert!(progress.contains("\"retries\":1") && progress.contains("\"delayed\":\"2026-01-01T00:01:"), "{progress}");

    // Retried after the back-off: the loop is stopped again; the temporary error succeeds on its third try.
    advance(&mut s, Duration::secs(70));
    let later_events = all_events(&mut s);
    assert!(later_events.contains("Handler 'later' succeeded."), "{later_events}");
    let spins = later_events.lines().filter(|l| l.contains("Handler 'spin' failed with an exception")).count();
    assert_eq!(spins, 2, "kopf posts an Event per failed attempt: {later_events}");
    let later = s.sim().api().get(&ObjectKey::new(Kind::ConfigMap, "default", "temporary")).unwrap().clone();
    assert!(
        !later.meta().annotations.contains_key("kopf.zalando.org/later"),
        "progress is purged once done: {:?}",
        later.meta().annotations
    );
    // A permanent failure is not retried: its record says so.
    let never = s.sim().api().get(&ObjectKey::new(Kind::ConfigMap, "default", "permanent")).unwrap().clone();
    assert!(never.meta().annotations.contains_key("kopf.zalando.org/last-handled-configuration"), "done, though failed");
    assert!(started.elapsed() < std::time::Duration::from_secs(60), "the budget cut each runaway call short");
}

#[test]
fn files_that_do_not_load_are_clear_errors_and_change_nothing() {
    if !python_available() {
        return;
    }
    let cases = [
        ("bad_syntax.py", "SyntaxError"),
        ("bad_import.py", "No module named 'not_a_module_anywhere'"),
        ("bad_resource.py", "the server doesn't have a resource type \"apps/v1/websites\""),
        ("bad_daemon.py", "kopf.daemon is not supported by kubeloop's operator host"),
    ];
    for (name, expected) in cases {
        let mut s = Session::new(Scenario::builtin("default").unwrap(), Some(1)).unwrap();
        let before = s.sim().trace().hash();
        let interpreter = PythonInterpreter::for_file(&file(name)).unwrap();
        let err = s.sim_mut().add_operator("bad", Box::new(interpreter)).unwrap_err();
        assert!(err.contains(expected), "{name}: {err}");
        assert!(!s.sim().has_component(&ComponentId::Operator("bad".into())));
        assert_eq!(s.sim().trace().hash(), before);
    }
    // The syntax error names the file and line, as Python prints it.
    let interpreter = PythonInterpreter::for_file(&file("bad_syntax.py")).unwrap();
    let mut s = Session::new(Scenario::builtin("default").unwrap(), Some(1)).unwrap();
    let err = s.sim_mut().add_operator("bad", Box::new(interpreter)).unwrap_err();
    assert!(err.contains("bad_syntax.py\", line 4"), "{err}");
}

#[test]
fn the_command_line_runs_an_operator_and_says_clearly_when_python_is_missing() {
    if !python_available() {
        return;
    }
    let kubeloop = env!("CARGO_BIN_EXE_kubeloop");
    let out = Command::new(kubeloop).args(["run", "default", "--until", "20s", "--operator", &file("label_pods.py")]).output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(stdout.matches("labelled seen-by=kopf").count(), 3, "{stdout}");

    let out = Command::new(kubeloop)
        .args(["run", "default", "--until", "1s", "--operator", &file("label_pods.py")])
        .env("KUBELOOP_PYTHON", "/nonexistent/python3")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(stderr.contains("needs Python 3 to run it, and \"/nonexistent/python3\" was not found"), "{stderr}");

    let out = Command::new(kubeloop).args(["run", "default", "--operator", &file("bad_syntax.py")]).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success() && stderr.contains("SyntaxError"), "{stderr}");
    assert!(out.stdout.is_empty(), "nothing ran");
}

#[test]
fn a_delete_handler_holds_the_object_with_kopfs_finalizer_until_it_succeeds() {
    if !python_available() {
        return;
    }
    let mut s = session_with("finalize.py", 2);
    s.set_file_reader(|_| Ok("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: note\n  labels: {finalize: \"yes\"}\n".into()));
    run(&mut s, "kubectl apply -f note.yaml");
    advance(&mut s, Duration::secs(5));
    let key = ObjectKey::new(Kind::ConfigMap, "default", "note");
    let note = s.sim().api().get(&key).unwrap().clone();
    assert_eq!(note.meta().finalizers.iter().map(|f| f.to_string()).collect::<Vec<_>>(), ["kopf.zalando.org/KopfFinalizerMarker"]);
    run(&mut s, "kubectl delete configmap note --wait=false");
    advance(&mut s, Duration::secs(5));
    assert!(s.sim().api().get(&key).is_none(), "the finalizer came off once the delete handler succeeded");
    let gone = s.sim().api().get(&ObjectKey::new(Kind::ConfigMap, "default", "note-gone")).expect("the delete handler's write").clone();
    assert!(gone.to_json().to_string().contains("\"was\":\"note\""));
    let events = all_events(&mut s);
    assert!(
        events.contains("Handler 'goodbye' succeeded.") && events.contains("Deletion is processed: 1 succeeded; 0 failed."),
        "{events}"
    );
    assert_eq!(events.matches("Handler 'hello' succeeded.").count(), 1, "each handler once: {events}");
}

#[test]
fn a_scenario_files_operators_run_and_replay_to_the_same_trace() {
    if !python_available() {
        return;
    }
    let dir = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("operators-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::copy(file("label_pods.py"), dir.join("label_pods.py")).unwrap();
    let scenario = dir.join("labelled.yaml");
    let default = Scenario::builtin("default").unwrap();
    let text = format!(
        "name: labelled\nnodes:\n{}manifests: |\n  apiVersion: apps/v1\n  kind: Deployment\n  metadata: {{name: web}}\n  spec:\n    replicas: 2\n    selector: {{matchLabels: {{app: web}}}}\n    template:\n      metadata: {{labels: {{app: web}}}}\n      spec: {{containers: [{{name: nginx, image: nginx:1.14.2}}]}}\noperators: [label_pods.py]\n",
        default.nodes.iter().map(|n| format!("  - {{name: {}}}\n", n.name)).collect::<String>()
    );
    std::fs::write(&scenario, text).unwrap();
    let trace = || {
        let out = Command::new(env!("CARGO_BIN_EXE_kubeloop"))
            .args(["run", scenario.to_str().unwrap(), "--until", "20s", "--trace", "json", "--seed", "4"])
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8(out.stdout).unwrap()
    };
    let first = trace();
    assert!(first.contains("\"from\":\"operator/label-pods\""), "the operator's requests are in the trace");
    // The handler runs once per pod (its kopf.info() once each); kopf then writes each pod twice:
    // the label with the diff base taken before the handler, and again the diff base with the
    // label, when the next look finds the essence changed by its own patch (as kopf does).
    assert_eq!(first.matches("\"what\":\"create event/default/kopf-event-*\"").count(), 2, "{first}");
    assert_eq!(first.matches("\"what\":\"update pod/default/web-").count(), 4);
    assert_eq!(first, trace(), "the same scenario, seed and code give the same trace");
}

#[test]
fn watch_faults_act_on_the_operators_informers_as_on_any_client() {
    if !python_available() {
        return;
    }
    let mut s = session_with("label_pods.py", 6);
    advance(&mut s, Duration::secs(10));
    // Every event to it lost: the new pod goes unlabelled, as a controller's would go unseen.
    run(&mut s, "sim watch drop 100 operator/label-pods");
    run(&mut s, "kubectl scale deployment web --replicas=4");
    advance(&mut s, Duration::secs(10));
    let unlabelled = |s: &Session| s.sim().objects(Kind::Pod).filter(|p| !p.meta().labels.contains_key("seen-by")).count();
    assert_eq!(unlabelled(&s), 1);
    // Severed, it lists again and closes the gap: level-triggered.
    run(&mut s, "sim watch drop 0 operator/label-pods");
    run(&mut s, "sim watch sever operator/label-pods");
    advance(&mut s, Duration::secs(10));
    assert_eq!(unlabelled(&s), 0);
    let lists = s.sim().trace().recent().filter(|m| m.from == "operator/label-pods" && m.what == "list pods").count();
    assert_eq!(lists, 2, "the start's list and the re-list after the severed watch");
}

#[test]
fn the_operator_is_on_the_stage_as_one_more_loop() {
    if !python_available() {
        return;
    }
    let mut s = session_with("label_pods.py", 8);
    advance(&mut s, Duration::secs(1));
    let components = kubeloop::view::loops::components(s.sim());
    let plane: Vec<&str> = kubeloop::view::stage::plane(&components).into_iter().map(|c| c.name.as_str()).collect();
    assert!(plane.contains(&"operator/label-pods"), "{plane:?}");
    let operator = components.iter().find(|c| c.name == "operator/label-pods").unwrap();
    assert_eq!((operator.role.as_str(), operator.state.as_str()), ("operator", "running"));
    assert!(operator.loops[0].last_action.contains("Handler 'label' succeeded."), "{:?}", operator.loops);
    // Its messages name it as the box's anchor does, so tokens fly from and to its box.
    assert_eq!(kubeloop::view::stage::anchor("operator/label-pods"), "--c-operator_label-pods");
    assert!(
        s.sim().trace().recent().any(|m| m.from == "operator/label-pods")
            && s.sim().trace().recent().any(|m| m.to == "operator/label-pods")
    );
}

// ---- examples/operators through kubeloop's own host ----

fn example(name: &str) -> String {
    format!("{}/examples/operators/{name}", env!("CARGO_MANIFEST_DIR"))
}

/// The default scenario with `kubectl apply -f FILE` reading examples/operators/ and the
/// example operator in `file` added once `setup` has run (a custom resource's definition must
/// be served before an operator that watches it is added).
fn example_session(file: &str, seed: u64, setup: &[&str]) -> Session {
    let mut s = Session::new(Scenario::builtin("default").unwrap(), Some(seed)).unwrap();
    s.set_file_reader(|path| std::fs::read_to_string(example(path)).map_err(|e| format!("{path}: {e}")));
    for line in setup {
        run(&mut s, line);
    }
    let interpreter = PythonInterpreter::for_file(&example(file)).unwrap();
    s.sim_mut().add_operator(&operator_host::name_for(file), Box::new(interpreter)).unwrap();
    s
}

const WEBSITES: &str = "websites.lessons.kubeloop.dev";

fn website_children(s: &Session) -> (Option<(i32, String, String)>, Option<String>) {
    let d = s.sim().api().get(&ObjectKey::new(Kind::Deployment, "default", "shop")).filter(|o| !o.meta().is_deleting()).map(|o| {
        let owner = o.meta().owner_references.first().map(|r| r.kind.to_string()).unwrap_or_default();
        let d = o.as_deployment().unwrap();
        (d.spec.replicas.unwrap_or(1), d.spec.template.spec.containers[0].image.to_string(), owner)
    });
    let svc = s
        .sim()
        .api()
        .get(&ObjectKey::new(Kind::Service, "default", "shop"))
        .filter(|o| !o.meta().is_deleting())
        .map(|o| o.meta().owner_references.first().map(|r| r.kind.to_string()).unwrap_or_default());
    (d, svc)
}

fn served(replicas: i32, image: &str) -> (Option<(i32, String, String)>, Option<String>) {
    (Some((replicas, image.to_string(), "Website".to_string())), Some("Website".to_string()))
}

#[test]
fn the_website_operator_keeps_a_deployment_and_a_service_for_each_website() {
    if !python_available() {
        return;
    }
    let mut s = example_session("website.py", 2, &["kubectl apply -f website-crd.yaml"]);
    run(&mut s, "kubectl apply -f shop.yaml");
    advance(&mut s, Duration::secs(30));
    assert_eq!(website_children(&s), served(2, "nginx:1.14.2"));
    assert_eq!(ready_shop_pods(&s), 2);
    let site = s.sim().api().get(&ObjectKey::custom(WEBSITES, "default", "shop")).unwrap().to_json();
    // The handler's result, under status.<id> (the timer's first look, at once, made the children).
    assert_eq!(site["status"]["reconcile"], "in sync");
    assert!(run(&mut s, "kubectl get websites").contains("nginx:1.14.2"), "printer columns");
    let last = s.sim().loops(&ComponentId::Operator("website".into()))[0].last_action.clone();
    assert!(last.starts_with("Website default/shop: "), "{last}");

    // Deleted by hand: the timer's next look (every 5 s) puts it back.
    run(&mut s, "kubectl delete deployment shop");
    assert_eq!(website_children(&s).0, None);
    advance(&mut s, Duration::secs(10));
    assert_eq!(website_children(&s), served(2, "nginx:1.14.2"));

    // Stopped while the Website changes: nothing happens; started, it converges.
    run(&mut s, "sim stop operator/website");
    run(&mut s, "kubectl apply -f shop-v2.yaml");
    advance(&mut s, Duration::secs(20));
    assert_eq!(website_children(&s), served(2, "nginx:1.14.2"));
    run(&mut s, "sim start operator/website");
    advance(&mut s, Duration::secs(30));
    assert_eq!(website_children(&s), served(3, "nginx:1.16.1"));
    assert_eq!(ready_shop_pods(&s), 3);

    // The Website deleted: kopf takes its finalizer off, the garbage collector the children.
    run(&mut s, "kubectl delete website shop");
    advance(&mut s, Duration::secs(30));
    assert!(s.sim().api().get(&ObjectKey::custom(WEBSITES, "default", "shop")).is_none());
    assert_eq!(website_children(&s), (None, None));
    assert_eq!(s.sim().objects(Kind::Pod).filter(|p| p.meta().name.starts_with("shop-") && !p.meta().is_deleting()).count(), 0);
    assert!(s.sim().violations().is_empty(), "{:?}", s.sim().violations());
}

#[test]
fn the_website_operators_starting_file_loads_and_leaves_the_gap_open() {
    if !python_available() {
        return;
    }
    let mut s = example_session("website_start.py", 2, &["kubectl apply -f website-crd.yaml"]);
    run(&mut s, "kubectl apply -f shop.yaml");
    advance(&mut s, Duration::secs(30));
    assert_eq!(website_children(&s), (None, None), "nothing is made until the learner writes the comparison");
    let site = s.sim().api().get(&ObjectKey::custom(WEBSITES, "default", "shop")).unwrap().to_json();
    assert_eq!(site["status"]["reconcile"], "in sync", "its handlers run");
}

#[test]
fn an_operator_started_before_its_resources_definition_serves_it_once_it_comes() {
    if !python_available() {
        return;
    }
    // As kopf waits for a resource whose definition is not there yet.
    let mut s = example_session("website.py", 2, &[]);
    advance(&mut s, Duration::secs(5));
    run(&mut s, "kubectl apply -f website-crd.yaml");
    run(&mut s, "kubectl apply -f shop.yaml");
    advance(&mut s, Duration::secs(30));
    assert_eq!(website_children(&s), served(2, "nginx:1.14.2"));
}

fn copy_data(s: &Session) -> Option<String> {
    let copy = s.sim().api().get(&ObjectKey::new(Kind::ConfigMap, "default", "settings-copy"))?.to_json();
    Some(format!("{} owned by {}", copy["data"], copy["metadata"]["ownerReferences"][0]["name"]))
}

const SETTINGS: &str = "apiVersion: v1
kind: ConfigMap
metadata:
  name: settings
  annotations: {kubeloop.dev/copy: \"yes\"}
data: {a: \"1\", b: \"2\"}
";

#[test]
fn the_config_copier_keeps_a_copy_of_each_annotated_config_map() {
    if !python_available() {
        return;
    }
    let mut s = example_session("config_copy.py", 4, &[]);
    s.add_file("settings.yaml", SETTINGS);
    run(&mut s, "kubectl apply -f settings.yaml");
    advance(&mut s, Duration::secs(5));
    assert_eq!(copy_data(&s).as_deref(), Some(r#"{"a":"1","b":"2"} owned by "settings""#));
    let copies = s.sim().objects(Kind::ConfigMap).filter(|c| c.meta().name.contains("-copy")).count();
    assert_eq!(copies, 1, "the timer runs only where its filter selects: no copy of the copy");
    let copy = s.sim().api().get(&ObjectKey::new(Kind::ConfigMap, "default", "settings-copy")).unwrap().clone();
    assert!(
        copy.meta().annotations.is_empty(),
        "as in kopf, an object no handler selects keeps no diff base: {:?}",
        copy.meta().annotations
    );
    run(&mut s, "kubectl delete configmap settings-copy");
    advance(&mut s, Duration::secs(10));
    assert_eq!(copy_data(&s).as_deref(), Some(r#"{"a":"1","b":"2"} owned by "settings""#));
    s.add_file("settings.yaml", &SETTINGS.replace("b: \"2\"", "c: \"3\""));
    run(&mut s, "kubectl apply -f settings.yaml");
    advance(&mut s, Duration::secs(5));
    assert_eq!(copy_data(&s).as_deref(), Some(r#"{"a":"1","c":"3"} owned by "settings""#));
    // (Deleting the original does not remove the copy yet: kubeloop's garbage collector does
    // not follow owner references to ConfigMaps' dependents.)
}

const NIGHTLY: &str = "apiVersion: apps/v1
kind: Deployment
metadata:
  name: nightly
  annotations: {kubeloop.dev/scale-schedule: \"00:00=1 00:01=4\"}
spec:
  replicas: 2
  selector: {matchLabels: {app: nightly}}
  template:
    metadata: {labels: {app: nightly}}
    spec: {containers: [{name: web, image: nginx:1.14.2}]}
";

fn nightly_replicas(s: &Session) -> i32 {
    let d = s.sim().api().get(&ObjectKey::new(Kind::Deployment, "default", "nightly")).unwrap().clone();
    d.as_deployment().unwrap().spec.replicas.unwrap_or(1)
}

#[test]
fn the_scheduled_scaler_follows_the_simulations_clock() {
    if !python_available() {
        return;
    }
    // The simulation starts at 2026-01-01 00:00 UTC: 1 replica for the first minute, then 4.
    let mut s = example_session("scheduled_scaling.py", 6, &[]);
    s.add_file("nightly.yaml", NIGHTLY);
    run(&mut s, "kubectl apply -f nightly.yaml");
    advance(&mut s, Duration::secs(20));
    assert_eq!(nightly_replicas(&s), 1);
    run(&mut s, "kubectl scale deployment nightly --replicas=2");
    advance(&mut s, Duration::secs(10));
    assert_eq!(nightly_replicas(&s), 1, "scaled by hand, put back on schedule at the next look");
    advance(&mut s, Duration::secs(40));
    assert_eq!(nightly_replicas(&s), 4, "past 00:01");
    // The Deployment that is not annotated is left alone.
    let web = s.sim().api().get(&ObjectKey::new(Kind::Deployment, "default", "web")).unwrap().clone();
    assert_eq!(web.as_deployment().unwrap().spec.replicas, Some(3));
}

/// The trace hash of an example's run to a fixed time.
fn example_trace(file: &str, seed: u64, setup: &[&str], lines: &[&str]) -> u64 {
    let mut s = example_session(file, seed, setup);
    s.add_file("settings.yaml", SETTINGS);
    s.add_file("nightly.yaml", NIGHTLY);
    for line in lines {
        run(&mut s, line);
        advance(&mut s, Duration::secs(12));
    }
    s.sim().trace().hash()
}

#[test]
fn each_example_gives_the_same_trace_for_the_same_seed() {
    if !python_available() {
        return;
    }
    let crd: &[&str] = &["kubectl apply -f website-crd.yaml"];
    let cases: [(&str, &[&str], &[&str]); 3] = [
        ("website.py", crd, &["kubectl apply -f shop.yaml", "kubectl delete deployment shop", "kubectl apply -f shop-v2.yaml"]),
        ("config_copy.py", &[], &["kubectl apply -f settings.yaml", "kubectl delete configmap settings-copy"]),
        ("scheduled_scaling.py", &[], &["kubectl apply -f nightly.yaml", "sim advance 60s"]),
    ];
    for (file, setup, lines) in cases {
        let first = example_trace(file, 21, setup, lines);
        assert_eq!(first, example_trace(file, 21, setup, lines), "{file}");
        assert_ne!(first, example_trace(file, 22, setup, lines), "{file}: the seed reaches the trace");
    }
}

/// `kubeloop lesson NAME`, as a learner in a terminal takes it: lesson 11 with the learner's
/// own operator file, answers typed on standard input.
#[test]
fn the_command_line_plays_lesson_11_with_the_learners_operator() {
    if !python_available() {
        return;
    }
    use std::io::Write;
    let kubeloop = env!("CARGO_BIN_EXE_kubeloop");
    let play = |operator: &str| {
        let mut child = Command::new(kubeloop)
            .args(["lesson", "write-your-own-loop", "--operator", &example(operator)])
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let answers = "0\n\n2\n2\nIt makes the Deployment match the Website\n0\n";
        child.stdin.take().unwrap().write_all(answers.as_bytes()).unwrap();
        child.wait_with_output().unwrap()
    };
    let out = play("website.py");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}{}", String::from_utf8_lossy(&out.stderr));
    assert!(stdout.contains("== Step 7 of 7: Delete the claim") && stdout.contains("$ sim stop operator/website"), "{stdout}");
    assert!(stdout.ends_with("Lesson complete. Answers right: 5 of 5. Checks passed: 6 of 6.\n"), "{stdout}");
    // The starting file, not completed: the operator step's check does not pass.
    let out = play("website_start.py");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("The check did not pass in time.\n  not deployment shop"), "{stdout}");

    let out = Command::new(kubeloop).args(["lesson", "nope"]).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success() && stderr.contains("unknown lesson \"nope\": not a built-in (desired-state,"), "{stderr}");
}
