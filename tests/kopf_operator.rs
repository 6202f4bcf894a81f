//! A real operator framework against `kubeloop serve`: kopf runs `tests/python/label_pods.py`,
//! which labels every pod it sees `seen-by: kopf`, and every pod of the default scenario's
//! Deployment gets the label — the ones there when kopf starts, and the replacement for one that
//! `kubectl delete pod` took away. kopf scans discovery, lists and watches pods, PATCHes them
//! with merge patches and POSTs a core/v1 Event about each pod it labelled: the test shows the server
//! answers all of that as kube-apiserver would, or kopf would not get its work done.
//!
//! Needs kopf: `$KUBELOOP_KOPF`, or the venv `scripts/setup.sh` installs into `target/kopf-venv`;
//! skipped without one, except in CI, where it fails.

#[path = "support/serve.rs"]
mod serve;

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// How long kopf may take (wall time) to label what it should; it takes about a second.
const PATIENCE: Duration = Duration::from_secs(60);

fn kopf() -> Option<PathBuf> {
    if let Some(k) = std::env::var_os("KUBELOOP_KOPF").filter(|k| !k.is_empty()) {
        return Some(PathBuf::from(k));
    }
    let venv = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/kopf-venv/bin/kopf");
    venv.is_file().then_some(venv)
}

/// The running operator, killed when dropped (so also when an assertion fails); its log is kept
/// in a file for the failure message.
struct Operator {
    child: Child,
    log: PathBuf,
}

impl Operator {
    fn start(kopf: &Path, kubeconfig: &Path, log: PathBuf) -> Operator {
        Self::start_file(kopf, kubeconfig, log, "label_pods.py")
    }

    /// kopf running `tests/python/FILE`.
    fn start_file(kopf: &Path, kubeconfig: &Path, log: PathBuf, file: &str) -> Operator {
        Self::start_path(kopf, kubeconfig, log, &PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/python").join(file))
    }

    /// kopf running the operator in `script`.
    fn start_path(kopf: &Path, kubeconfig: &Path, log: PathBuf, script: &Path) -> Operator {
        let file = std::fs::File::create(&log).expect("the log file");
        let child = Command::new(kopf)
            .args(["run", "--standalone", "--all-namespaces", "--verbose"])
            .arg(script)
            .env("KUBECONFIG", kubeconfig)
            .env_remove("KUBERNETES_SERVICE_HOST")
            .stdin(Stdio::null())
            .stdout(file.try_clone().expect("the log file"))
            .stderr(file)
            .spawn()
            .expect("kopf starts");
        Operator { child, log }
    }

    fn log(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// Fails the test at once if kopf has stopped (it gave up on something the server said).
    fn assert_running(&mut self) {
        if let Ok(Some(status)) = self.child.try_wait() {
            panic!("kopf stopped ({status}); its log:\n{}", self.log());
        }
    }
}

impl Drop for Operator {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The Deployment's pods that are not going away: name and whether kopf labelled them.
fn web_pods(server: &serve::Server) -> Vec<(String, bool)> {
    let (code, body) = server.http("GET", "/api/v1/namespaces/default/pods?labelSelector=app%3Dweb", &[], b"");
    assert_eq!(code, 200, "{body}");
    let list: Value = serde_json::from_str(&body).unwrap_or_else(|e| panic!("{e}: {body}"));
    let items = list["items"].as_array().cloned().unwrap_or_default();
    items
        .iter()
        .filter(|pod| pod["metadata"]["deletionTimestamp"].is_null())
        .map(|pod| {
            let name = pod["metadata"]["name"].as_str().unwrap_or_default().to_string();
            (name, pod["metadata"]["labels"]["seen-by"] == "kopf")
        })
        .collect()
}

/// Waits (bounded) until there are `count` pods of the Deployment, all labelled by kopf.
fn wait_all_labelled(server: &serve::Server, operator: &mut Operator, count: usize) -> Vec<String> {
    let deadline = Instant::now() + PATIENCE;
    loop {
        let pods = web_pods(server);
        if pods.len() == count && pods.iter().all(|(_, seen)| *seen) {
            return pods.into_iter().map(|(name, _)| name).collect();
        }
        operator.assert_running();
        assert!(Instant::now() < deadline, "after {PATIENCE:?} the pods are {pods:?}; kopf's log:\n{}", operator.log());
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// Waits (bounded) until kopf's Event `Labelled` about this pod is on the server.
fn wait_labelled_event(server: &serve::Server, operator: &mut Operator, pod: &str) {
    let deadline = Instant::now() + PATIENCE;
    loop {
        let (code, body) = server.http("GET", "/api/v1/namespaces/default/events?fieldSelector=reason%3DLabelled", &[], b"");
        assert_eq!(code, 200, "{body}");
        let list: Value = serde_json::from_str(&body).unwrap_or_else(|e| panic!("{e}: {body}"));
        let events = list["items"].as_array().cloned().unwrap_or_default();
        let about_pod = |e: &&Value| e["involvedObject"]["kind"] == "Pod" && e["involvedObject"]["name"] == pod;
        if let Some(event) = events.iter().find(about_pod) {
            assert_eq!(event["source"]["component"], "kopf", "{event}");
            assert_eq!(event["type"], "Normal", "{event}");
            // Kept as kopf wrote them, as kube-apiserver keeps them.
            assert!(event["eventTime"].is_string() && event["action"].is_string(), "{event}");
            return;
        }
        operator.assert_running();
        assert!(Instant::now() < deadline, "after {PATIENCE:?} no Labelled event about {pod} in {body}; kopf's log:\n{}", operator.log());
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// `kubectl delete pod NAME` with the real kubectl where there is one (without waiting for the
/// paused clock to finish the grace period), else the same DELETE request it sends.
fn delete_pod(server: &serve::Server, name: &str) {
    match serve::kubectl() {
        Some(kubectl) => {
            let run = serve::run(&kubectl, server, &["delete", "pod", name, "--wait=false"]);
            assert!(run.ok && run.stdout.contains(&format!("pod \"{name}\" deleted")), "{}{}", run.stdout, run.stderr);
        }
        None => {
            let (code, body) = server.http("DELETE", &format!("/api/v1/namespaces/default/pods/{name}"), &[], b"");
            assert_eq!(code, 200, "{body}");
        }
    }
}

#[test]
fn a_kopf_operator_labels_every_pod_of_the_deployment_and_its_replacement() {
    let Some(kopf) = kopf() else {
        assert!(std::env::var_os("CI").is_none(), "CI needs kopf: run scripts/setup.sh or set $KUBELOOP_KOPF");
        eprintln!("skipped: no kopf (run scripts/setup.sh)");
        return;
    };
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("kopf-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a directory for the kubeconfig and kopf's log");
    let kubeconfig = dir.join("kubeconfig");
    // Paused: simulated time moves only when the test says (`sim advance`), so nothing of the
    // cluster depends on how fast kopf or this machine is.
    let server = serve::Server::start(&["--seed", "7", "--speed", "0", "--kubeconfig", kubeconfig.to_str().expect("a UTF-8 path")]);
    server.sim("advance 30s");
    assert_eq!(web_pods(&server).len(), 3, "the Deployment's pods are running before kopf starts");

    let mut operator = Operator::start(&kopf, &kubeconfig, dir.join("kopf.log"));
    let before = wait_all_labelled(&server, &mut operator, 3);

    delete_pod(&server, &before[0]);
    // The ReplicaSet controller replaces the terminating pod; kopf labels the new one.
    server.sim("advance 5s");
    let after = wait_all_labelled(&server, &mut operator, 3);
    assert!(!after.contains(&before[0]), "the deleted pod {} is replaced: {after:?}", before[0]);
    let replacement = after.iter().find(|n| !before.contains(n)).expect("a new pod");
    // kopf's Events (POSTed with its own times, `…+00:00` offsets) were accepted and are served.
    wait_labelled_event(&server, &mut operator, replacement);
    for pod in &before {
        wait_labelled_event(&server, &mut operator, pod);
    }
}

/// The `shop` Deployment's replicas, image and owner kind, if it exists.
fn shop(server: &serve::Server) -> Option<(i64, String, String)> {
    let (code, body) = server.http("GET", "/apis/apps/v1/namespaces/default/deployments/shop", &[], b"");
    if code == 404 {
        return None;
    }
    assert_eq!(code, 200, "{body}");
    let d: Value = serde_json::from_str(&body).unwrap_or_else(|e| panic!("{e}: {body}"));
    if !d["metadata"]["deletionTimestamp"].is_null() {
        return None;
    }
    let image = d["spec"]["template"]["spec"]["containers"][0]["image"].as_str().unwrap_or_default().to_string();
    let owner = d["metadata"]["ownerReferences"][0]["kind"].as_str().unwrap_or_default().to_string();
    Some((d["spec"]["replicas"].as_i64().unwrap_or(-1), image, owner))
}

/// Waits (bounded, in wall time: kopf's timers run on its own clock) until `shop` is `want`.
fn wait_shop(server: &serve::Server, operator: &mut Operator, want: (i64, &str)) {
    let deadline = Instant::now() + PATIENCE;
    loop {
        let now = shop(server);
        if now.as_ref().is_some_and(|(r, i, o)| *r == want.0 && i == want.1 && o == "ConfigMap") {
            return;
        }
        operator.assert_running();
        assert!(Instant::now() < deadline, "after {PATIENCE:?} the Deployment is {now:?}, not {want:?}; kopf's log:\n{}", operator.log());
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// The operator tests/operators.rs runs through kubeloop's own host, unchanged under real kopf:
/// a ConfigMap's claim kept as a Deployment, again after the Deployment is deleted by hand and
/// after kopf is killed while the claim changes and started again.
#[test]
fn the_deployment_keeping_operator_runs_unchanged_under_kopf() {
    let Some(kopf) = kopf() else {
        assert!(std::env::var_os("CI").is_none(), "CI needs kopf: run scripts/setup.sh or set $KUBELOOP_KOPF");
        eprintln!("skipped: no kopf (run scripts/setup.sh)");
        return;
    };
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("kopf-keep-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a directory for the kubeconfig and kopf's log");
    let kubeconfig = dir.join("kubeconfig");
    let server = serve::Server::start(&["--seed", "7", "--speed", "0", "--kubeconfig", kubeconfig.to_str().expect("a UTF-8 path")]);
    server.sim("advance 30s");
    let site = br#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"shop","labels":{"kubeloop.dev/site":"yes"}},"data":{"image":"nginx:1.14.2","replicas":"2"}}"#;
    let (code, body) = server.http("POST", "/api/v1/namespaces/default/configmaps", &[("Content-Type", "application/json")], site);
    assert_eq!(code, 201, "{body}");

    let mut operator = Operator::start_file(&kopf, &kubeconfig, dir.join("kopf-1.log"), "keep_deployment.py");
    wait_shop(&server, &mut operator, (2, "nginx:1.14.2"));

    let (code, body) = server.http("DELETE", "/apis/apps/v1/namespaces/default/deployments/shop", &[], b"");
    assert_eq!(code, 200, "{body}");
    server.sim("advance 1s");
    wait_shop(&server, &mut operator, (2, "nginx:1.14.2"));

    drop(operator);
    let change = br#"{"data":{"image":"nginx:1.16.1","replicas":"3"}}"#;
    let (code, body) =
        server.http("PATCH", "/api/v1/namespaces/default/configmaps/shop", &[("Content-Type", "application/merge-patch+json")], change);
    assert_eq!(code, 200, "{body}");
    server.sim("advance 5s");
    assert_eq!(shop(&server).map(|(r, i, _)| (r, i)), Some((2, "nginx:1.14.2".to_string())), "nothing acts while kopf is down");
    let mut operator = Operator::start_file(&kopf, &kubeconfig, dir.join("kopf-2.log"), "keep_deployment.py");
    wait_shop(&server, &mut operator, (3, "nginx:1.16.1"));
}

// ---- examples/operators, unchanged under real kopf ----

/// A server for one example, paused, 30 simulated seconds in (the default scenario's pods
/// running), with its kubeconfig and a directory for kopf's logs; None without kopf.
fn example_server(tag: &str) -> Option<(PathBuf, PathBuf, serve::Server)> {
    let Some(kopf) = kopf() else {
        assert!(std::env::var_os("CI").is_none(), "CI needs kopf: run scripts/setup.sh or set $KUBELOOP_KOPF");
        eprintln!("skipped: no kopf (run scripts/setup.sh)");
        return None;
    };
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("kopf-{tag}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a directory for the kubeconfig and kopf's logs");
    let kubeconfig = dir.join("kubeconfig");
    let server = serve::Server::start(&["--seed", "7", "--speed", "0", "--kubeconfig", kubeconfig.to_str().expect("a UTF-8 path")]);
    server.sim("advance 30s");
    Some((kopf, dir, server))
}

fn example(file: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("examples/operators").join(file)
}

/// An example's YAML manifest as the JSON body of a request.
fn manifest(file: &str) -> Vec<u8> {
    let text = std::fs::read_to_string(example(file)).expect("the example");
    let value: Value = yaml_serde::from_str(&text).unwrap_or_else(|e| panic!("{file}: {e}"));
    value.to_string().into_bytes()
}

fn request(server: &serve::Server, method: &str, path: &str, body: &[u8], want: u16) -> Value {
    let content = if method == "PATCH" { "application/merge-patch+json" } else { "application/json" };
    let (code, text) = server.http(method, path, &[("Content-Type", content)], body);
    assert_eq!(code, want, "{method} {path}: {text}");
    serde_json::from_str(&text).unwrap_or(Value::Null)
}

/// The object at `path` unless it is missing or going.
fn live(server: &serve::Server, path: &str) -> Option<Value> {
    let (code, body) = server.http("GET", path, &[], b"");
    if code == 404 {
        return None;
    }
    assert_eq!(code, 200, "GET {path}: {body}");
    let object: Value = serde_json::from_str(&body).unwrap_or_else(|e| panic!("{e}: {body}"));
    object["metadata"]["deletionTimestamp"].is_null().then_some(object)
}

/// Waits (bounded, in wall time: kopf's timers run on its own clock) until `state()` is `Ok`.
/// Each look moves the paused simulation on by `step`: a custom resource's watch events, the
/// controllers that act in between (the garbage collector) all take simulated time.
fn converge(server: &serve::Server, operator: &mut Operator, step: &str, mut state: impl FnMut() -> Result<(), String>) {
    let deadline = Instant::now() + PATIENCE;
    loop {
        let seen = match state() {
            Ok(()) => return,
            Err(seen) => seen,
        };
        operator.assert_running();
        assert!(Instant::now() < deadline, "after {PATIENCE:?}: {seen}; kopf's log:\n{}", operator.log());
        server.sim(&format!("advance {step}"));
        std::thread::sleep(Duration::from_millis(200));
    }
}

const SHOP_DEPLOYMENT: &str = "/apis/apps/v1/namespaces/default/deployments/shop";
const SHOP_SERVICE: &str = "/api/v1/namespaces/default/services/shop";
const SHOP: &str = "/apis/lessons.kubeloop.dev/v1/namespaces/default/websites/shop";

/// The Website `shop` is served as (replicas, image) by a Deployment and a Service it owns.
fn website_served(server: &serve::Server, replicas: i64, image: &str) -> Result<(), String> {
    let d = live(server, SHOP_DEPLOYMENT).ok_or("no Deployment shop")?;
    let s = live(server, SHOP_SERVICE).ok_or("no Service shop")?;
    let have = (d["spec"]["replicas"].as_i64(), d["spec"]["template"]["spec"]["containers"][0]["image"].as_str());
    let owners = (d["metadata"]["ownerReferences"][0]["kind"].as_str(), s["metadata"]["ownerReferences"][0]["kind"].as_str());
    if have == (Some(replicas), Some(image)) && owners == (Some("Website"), Some("Website")) {
        Ok(())
    } else {
        Err(format!("the Deployment is {have:?} and the owners {owners:?}, not ({replicas}, {image}) owned by the Website"))
    }
}

/// Lesson 11's operator under real kopf: a Website becomes a Deployment and a Service; a
/// Deployment deleted by hand comes back; a Website changed while kopf is down is served once
/// kopf is started again; the Website deleted, the garbage collector removes both children.
#[test]
fn the_website_operator_runs_unchanged_under_kopf() {
    let Some((kopf, dir, server)) = example_server("website") else { return };
    request(&server, "POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", &manifest("website-crd.yaml"), 201);
    request(&server, "POST", "/apis/lessons.kubeloop.dev/v1/namespaces/default/websites", &manifest("shop.yaml"), 201);
    let mut operator = Operator::start_path(&kopf, &server_config(&dir), dir.join("kopf-1.log"), &example("website.py"));
    converge(&server, &mut operator, "100ms", || website_served(&server, 2, "nginx:1.14.2"));
    // kopf stored the handler's result under status.<handler id>, through the status subresource.
    converge(&server, &mut operator, "100ms", || {
        let site = live(&server, SHOP).ok_or("no Website")?;
        site["status"]["reconcile"].as_str().map(|_| ()).ok_or(format!("status is {}", site["status"]))
    });

    request(&server, "DELETE", SHOP_DEPLOYMENT, b"", 200);
    converge(&server, &mut operator, "100ms", || website_served(&server, 2, "nginx:1.14.2"));

    drop(operator);
    request(&server, "PATCH", SHOP, br#"{"spec":{"image":"nginx:1.16.1","replicas":3}}"#, 200);
    server.sim("advance 5s");
    assert!(website_served(&server, 2, "nginx:1.14.2").is_ok(), "nothing acts on the change while kopf is down");
    let mut operator = Operator::start_path(&kopf, &server_config(&dir), dir.join("kopf-2.log"), &example("website.py"));
    converge(&server, &mut operator, "100ms", || website_served(&server, 3, "nginx:1.16.1"));

    request(&server, "DELETE", SHOP, b"", 200);
    converge(&server, &mut operator, "1s", || match (live(&server, SHOP), live(&server, SHOP_DEPLOYMENT), live(&server, SHOP_SERVICE)) {
        (None, None, None) => Ok(()),
        seen => Err(format!("Website, Deployment, Service still there: {:?}", (seen.0.is_some(), seen.1.is_some(), seen.2.is_some()))),
    });
}

fn server_config(dir: &Path) -> PathBuf {
    dir.join("kubeconfig")
}

const SETTINGS_COPY: &str = "/api/v1/namespaces/default/configmaps/settings-copy";

fn copy_holds(server: &serve::Server, want: Value) -> Result<(), String> {
    let copy = live(server, SETTINGS_COPY).ok_or("no settings-copy")?;
    let owner = copy["metadata"]["ownerReferences"][0]["name"].as_str();
    if copy["data"] == want && owner == Some("settings") {
        Ok(())
    } else {
        Err(format!("settings-copy holds {} (owner {owner:?}), not {want}", copy["data"]))
    }
}

/// The config copier under real kopf: the copy is made, made again after it is deleted, and
/// follows a change (a key removed, one added) made while kopf was down.
#[test]
fn the_config_copier_runs_unchanged_under_kopf() {
    let Some((kopf, dir, server)) = example_server("copy") else { return };
    let settings = br#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"settings","annotations":{"kubeloop.dev/copy":"yes"}},"data":{"a":"1","b":"2"}}"#;
    request(&server, "POST", "/api/v1/namespaces/default/configmaps", settings, 201);
    let mut operator = Operator::start_path(&kopf, &server_config(&dir), dir.join("kopf-1.log"), &example("config_copy.py"));
    converge(&server, &mut operator, "100ms", || copy_holds(&server, serde_json::json!({"a": "1", "b": "2"})));

    request(&server, "DELETE", SETTINGS_COPY, b"", 200);
    converge(&server, &mut operator, "100ms", || copy_holds(&server, serde_json::json!({"a": "1", "b": "2"})));

    drop(operator);
    request(&server, "PATCH", "/api/v1/namespaces/default/configmaps/settings", br#"{"data":{"b":null,"c":"3"}}"#, 200);
    server.sim("advance 5s");
    assert!(copy_holds(&server, serde_json::json!({"a": "1", "b": "2"})).is_ok(), "nothing copies while kopf is down");
    let mut operator = Operator::start_path(&kopf, &server_config(&dir), dir.join("kopf-2.log"), &example("config_copy.py"));
    converge(&server, &mut operator, "100ms", || copy_holds(&server, serde_json::json!({"a": "1", "c": "3"})));
}

/// `scheduled_scaling.py`'s rule, for the wall clock kopf reads: 1 replica from 00:00 UTC, 2
/// from 12:00 (the schedule the test writes).
fn scheduled_now() -> i64 {
    let seconds = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).expect("after 1970").as_secs();
    if (seconds / 60) % (24 * 60) < 12 * 60 {
        1
    } else {
        2
    }
}

const WEB: &str = "/apis/apps/v1/namespaces/default/deployments/web";
const SCHEDULE: &str = r#"{"metadata":{"annotations":{"kubeloop.dev/scale-schedule":"00:00=1 12:00=2"}}}"#;

fn on_schedule(server: &serve::Server) -> Result<(), String> {
    let web = live(server, WEB).ok_or("no Deployment web")?;
    let (have, want) = (web["spec"]["replicas"].as_i64(), scheduled_now());
    if have == Some(want) {
        Ok(())
    } else {
        Err(format!("web has {have:?} replicas, the schedule says {want}"))
    }
}

/// The scheduled scaler under real kopf: the annotated Deployment is scaled to the schedule's
/// replicas for the time of day, again after it is scaled by hand while kopf is down, and a
/// Deployment deleted and created again is put on its schedule too.
#[test]
fn the_scheduled_scaler_runs_unchanged_under_kopf() {
    let Some((kopf, dir, server)) = example_server("schedule") else { return };
    request(&server, "PATCH", WEB, SCHEDULE.as_bytes(), 200);
    let mut operator = Operator::start_path(&kopf, &server_config(&dir), dir.join("kopf-1.log"), &example("scheduled_scaling.py"));
    converge(&server, &mut operator, "100ms", || on_schedule(&server));

    drop(operator);
    request(&server, "PATCH", WEB, br#"{"spec":{"replicas":5}}"#, 200);
    let mut operator = Operator::start_path(&kopf, &server_config(&dir), dir.join("kopf-2.log"), &example("scheduled_scaling.py"));
    converge(&server, &mut operator, "100ms", || on_schedule(&server));

    // Deleted (kopf takes its finalizer off, then it goes) and created again by hand.
    let mut web = live(&server, WEB).expect("web");
    request(&server, "DELETE", WEB, b"", 200);
    converge(&server, &mut operator, "1s", || match server.http("GET", WEB, &[], b"") {
        (404, _) => Ok(()),
        (_, body) => Err(format!("web is still there: {body}")),
    });
    let meta = web["metadata"].take();
    web["metadata"] =
        serde_json::json!({"name": "web", "labels": meta["labels"], "annotations": {"kubeloop.dev/scale-schedule": "00:00=1 12:00=2"}});
    web["spec"]["replicas"] = 5.into();
    web.as_object_mut().expect("an object").remove("status");
    request(&server, "POST", "/apis/apps/v1/namespaces/default/deployments", web.to_string().as_bytes(), 201);
    converge(&server, &mut operator, "100ms", || on_schedule(&server));
}

/// The learner's starting file runs under real kopf too: its handlers run (their result is
/// stored) and, the comparison not written yet, nothing is made.
#[test]
fn the_website_operators_starting_file_runs_under_kopf() {
    let Some((kopf, dir, server)) = example_server("website-start") else { return };
    request(&server, "POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", &manifest("website-crd.yaml"), 201);
    request(&server, "POST", "/apis/lessons.kubeloop.dev/v1/namespaces/default/websites", &manifest("shop.yaml"), 201);
    let mut operator = Operator::start_path(&kopf, &server_config(&dir), dir.join("kopf.log"), &example("website_start.py"));
    converge(&server, &mut operator, "100ms", || {
        let site = live(&server, SHOP).ok_or("no Website")?;
        (site["status"]["reconcile"] == "in sync").then_some(()).ok_or(format!("status is {}", site["status"]))
    });
    assert!(live(&server, SHOP_DEPLOYMENT).is_none() && live(&server, SHOP_SERVICE).is_none(), "nothing is made");
}
