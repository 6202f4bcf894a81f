//! The real kubectl's server-side apply against `kubeloop serve`, and the `managedFields` a
//! cluster records on every write: kubectl's own managers, the simulation's components writing
//! as a cluster's do, conflicts answered as kube-apiserver answers them and printed by kubectl
//! with its help text. Needs a kubectl, as `real_kubectl.rs` does (skipped without one, except
//! in CI).

#[path = "support/serve.rs"]
mod serve;

use serde_json::Value;
use serve::{kubectl_or_skip, Server};
use std::path::{Path, PathBuf};

const SHOP: &str = "apiVersion: apps/v1
kind: Deployment
metadata:
  name: shop
  labels:
    app: shop
    tier: front
spec:
  replicas: 2
  selector:
    matchLabels:
      app: shop
  template:
    metadata:
      labels:
        app: shop
    spec:
      containers:
      - name: nginx
        image: nginx:1.27
        ports:
        - containerPort: 80
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: shop-settings
data:
  mode: fast
  level: \"3\"
";

/// A manifest file for this test.
fn file(dir: &Path, name: &str, text: &str) -> String {
    let path = dir.join(name);
    std::fs::write(&path, text).expect("the manifest is written");
    path.to_string_lossy().into_owned()
}

fn kubectl_ok(kubectl: &PathBuf, server: &Server, args: &[&str]) -> String {
    let run = serve::run(kubectl, server, args);
    assert!(run.ok, "kubectl {args:?}: {}{}", run.stdout, run.stderr);
    run.stdout
}

/// An object as `kubectl get -o json --show-managed-fields` prints it.
fn object(kubectl: &PathBuf, server: &Server, what: &str) -> Value {
    let text = kubectl_ok(kubectl, server, &["get", what, "-o", "json", "--show-managed-fields"]);
    serde_json::from_str(&text).expect("kubectl prints JSON")
}

/// Each entry as `manager operation [subresource]`.
fn managers(object: &Value) -> Vec<String> {
    let entries = object["metadata"]["managedFields"].as_array().cloned().unwrap_or_default();
    entries
        .iter()
        .map(|e| {
            let sub = e["subresource"].as_str().map(|s| format!(" {s}")).unwrap_or_default();
            format!("{} {}{sub}", e["manager"].as_str().unwrap_or_default(), e["operation"].as_str().unwrap_or_default())
        })
        .collect()
}

/// The fieldsV1 of one manager's entry.
fn fields_of<'a>(object: &'a Value, manager: &str, operation: &str) -> &'a Value {
    let entries = object["metadata"]["managedFields"].as_array().expect("managedFields");
    let entry = entries.iter().find(|e| e["manager"] == manager && e["operation"] == operation);
    &entry.unwrap_or_else(|| panic!("no {manager} {operation} entry in {entries:?}"))["fieldsV1"]
}

#[test]
fn server_side_apply_creates_updates_prunes_and_conflicts_as_a_cluster_does() {
    let Some(kubectl) = kubectl_or_skip() else { return };
    let server = Server::start(&["--seed", "7", "--speed", "0"]);
    let dir = std::env::temp_dir().join(format!("kubeloop-ssa-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a directory for the manifests");

    // A multi-document file creates both objects.
    let shop = file(&dir, "shop.yaml", SHOP);
    let out = kubectl_ok(&kubectl, &server, &["apply", "--server-side", "-f", &shop]);
    assert_eq!(out, "deployment.apps/shop serverside-applied\nconfigmap/shop-settings serverside-applied\n");
    server.sim("advance 30s");

    // kubectl owns what it applied; the Deployment controller wrote the status; the ReplicaSet
    // controller created the pods and each node's kubelet writes their status.
    let d = object(&kubectl, &server, "deployment/shop");
    assert_eq!(managers(&d), ["kubectl Apply", "kube-controller-manager Update status"]);
    let applied = fields_of(&d, "kubectl", "Apply");
    assert_eq!(applied["f:spec"]["f:replicas"], serde_json::json!({}));
    assert_eq!(applied["f:spec"]["f:selector"], serde_json::json!({}), "a LabelSelector is atomic");
    let container = &applied["f:spec"]["f:template"]["f:spec"]["f:containers"]["k:{\"name\":\"nginx\"}"];
    assert!(container["."].is_object() && container["f:image"].is_object(), "{applied}");
    assert!(container["f:ports"]["k:{\"containerPort\":80,\"protocol\":\"TCP\"}"].is_object(), "{applied}");
    assert!(applied["f:spec"]["f:template"]["f:spec"].get("f:dnsPolicy").is_none(), "defaults are nobody's");
    let status = fields_of(&d, "kube-controller-manager", "Update");
    assert!(status["f:status"]["f:conditions"]["k:{\"type\":\"Available\"}"].is_object(), "{status}");
    let pods = object(&kubectl, &server, "pods");
    let shop_pods: Vec<&Value> =
        pods["items"].as_array().expect("items").iter().filter(|p| p["metadata"]["labels"]["app"] == "shop").collect();
    assert_eq!(shop_pods.len(), 2);
    for pod in shop_pods {
        // The binding goes past the field manager, as kube-apiserver's binding subresource does.
        assert_eq!(managers(pod), ["kube-controller-manager Update", "kubelet Update status"], "{pod}");
    }

    // Re-applied with a new image and without the `tier` label: the image changes, the label goes.
    let changed = SHOP.replace("nginx:1.27", "nginx:1.28").replace("    tier: front\n", "");
    let changed = file(&dir, "shop2.yaml", &changed);
    let out = kubectl_ok(&kubectl, &server, &["apply", "--server-side", "-f", &changed]);
    assert_eq!(out, "deployment.apps/shop serverside-applied\nconfigmap/shop-settings serverside-applied\n");
    let d = object(&kubectl, &server, "deployment/shop");
    assert_eq!(d["metadata"]["labels"], serde_json::json!({"app": "shop"}));
    assert_eq!(d["spec"]["template"]["spec"]["containers"][0]["image"], "nginx:1.28");
    assert!(fields_of(&d, "kubectl", "Apply")["f:metadata"]["f:labels"].get("f:tier").is_none());

    // kubectl scale takes .spec.replicas (kubectl 1.32 sends no fieldManager: the manager is its
    // User-Agent's `kubectl`, on the scale subresource); applying another count then conflicts.
    kubectl_ok(&kubectl, &server, &["scale", "deployment/shop", "--replicas=4"]);
    let d = object(&kubectl, &server, "deployment/shop");
    assert!(managers(&d).contains(&"kubectl Update scale".to_string()), "{:?}", managers(&d));
    let three = file(&dir, "shop3.yaml", &SHOP.replace("replicas: 2", "replicas: 3"));
    let run = serve::run(&kubectl, &server, &["apply", "--server-side", "-f", &three]);
    assert!(!run.ok);
    let conflict =
        "error: Apply failed with 1 conflict: conflict with \"kubectl\" with subresource \"scale\" using apps/v1: .spec.replicas\n\
                    Please review the fields above--they currently have other managers.";
    assert!(run.stderr.starts_with(conflict), "{}", run.stderr);
    assert!(run.stderr.contains("--force-conflicts"), "{}", run.stderr);
    assert_eq!(object(&kubectl, &server, "deployment/shop")["spec"]["replicas"], 4, "a refused apply changes nothing");
    // Forced, the field changes hands: the scale entry, left with nothing, goes.
    kubectl_ok(&kubectl, &server, &["apply", "--server-side", "--force-conflicts", "-f", &three]);
    let d = object(&kubectl, &server, "deployment/shop");
    assert_eq!(d["spec"]["replicas"], 3);
    assert!(!managers(&d).contains(&"kubectl Update scale".to_string()), "{:?}", managers(&d));

    // An apply that kube-apiserver's validation refuses changes nothing either.
    let bad = file(&dir, "bad.yaml", &SHOP.replace("replicas: 2", "replicas: -1"));
    let run = serve::run(&kubectl, &server, &["apply", "--server-side", "-f", &bad]);
    assert!(!run.ok && run.stderr.contains("spec.replicas"), "{}", run.stderr);
    assert_eq!(object(&kubectl, &server, "deployment/shop")["spec"]["replicas"], 3);
    let run = serve::run(&kubectl, &server, &["apply", "--server-side", "--field-manager=other", "--force-conflicts", "-f", &bad]);
    assert!(!run.ok, "{}", run.stdout);
    let d = object(&kubectl, &server, "deployment/shop");
    assert!(!managers(&d).iter().any(|m| m.starts_with("other ")), "{:?}", managers(&d));
}

#[test]
fn every_write_records_its_manager_as_a_cluster_does() {
    let Some(kubectl) = kubectl_or_skip() else { return };
    let server = Server::start(&["--seed", "7", "--speed", "0"]);
    let dir = std::env::temp_dir().join(format!("kubeloop-managers-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a directory for the manifests");

    // Client-side apply still works: the last-applied annotation, kubectl's own manager.
    let settings = file(&dir, "cm.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: csa\ndata:\n  a: \"1\"\n");
    assert_eq!(kubectl_ok(&kubectl, &server, &["apply", "-f", &settings]), "configmap/csa created\n");
    let cm = object(&kubectl, &server, "configmap/csa");
    assert!(cm["metadata"]["annotations"]["kubectl.kubernetes.io/last-applied-configuration"].is_string());
    assert_eq!(managers(&cm), ["kubectl-client-side-apply Update"]);
    let csa = fields_of(&cm, "kubectl-client-side-apply", "Update");
    assert_eq!(csa["f:data"], serde_json::json!({".": {}, "f:a": {}}), "{csa}");
    let again = file(&dir, "cm2.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: csa\ndata:\n  a: \"2\"\n");
    assert_eq!(kubectl_ok(&kubectl, &server, &["apply", "-f", &again]), "configmap/csa configured\n");
    assert_eq!(object(&kubectl, &server, "configmap/csa")["data"]["a"], "2");
    // kubectl label names itself.
    kubectl_ok(&kubectl, &server, &["label", "configmap/csa", "team=blue"]);
    let cm = object(&kubectl, &server, "configmap/csa");
    assert_eq!(fields_of(&cm, "kubectl-label", "Update")["f:metadata"]["f:labels"]["f:team"], serde_json::json!({}));

    // A pod no node fits: kube-scheduler records why, on the status subresource.
    let stuck = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: stuck\nspec:\n  nodeSelector:\n    disk: ssd\n  containers:\n  - name: c\n    image: nginx:1.27\n";
    let stuck = file(&dir, "stuck.yaml", stuck);
    kubectl_ok(&kubectl, &server, &["create", "-f", &stuck]);
    server.sim("advance 5s");
    let pod = object(&kubectl, &server, "pod/stuck");
    let mut got = managers(&pod);
    got.sort();
    assert_eq!(got, ["kube-scheduler Update status", "kubectl-create Update"]);
    let scheduled = fields_of(&pod, "kube-scheduler", "Update");
    assert!(scheduled["f:status"]["f:conditions"]["k:{\"type\":\"PodScheduled\"}"]["f:reason"].is_object(), "{scheduled}");

    // What existed before the server started is its creator's: the scenario's Deployment was
    // applied client-side by the console's kubectl, the namespace made by kube-apiserver.
    let web = object(&kubectl, &server, "deployment/web");
    assert_eq!(managers(&web), ["kubectl-client-side-apply Update", "kube-controller-manager Update status"]);
    assert_eq!(managers(&object(&kubectl, &server, "namespace/default")), ["kube-apiserver Update"]);
    // So a server-side apply of another replica count conflicts with client-side apply's, as on a
    // cluster where the Deployment was first applied client-side.
    let web = "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  replicas: 5\n  selector:\n    matchLabels:\n      app: web\n  template:\n    metadata:\n      labels:\n        app: web\n    spec:\n      containers:\n      - name: nginx\n        image: nginx:1.14.2\n";
    let web = file(&dir, "web.yaml", web);
    let run = serve::run(&kubectl, &server, &["apply", "--server-side", "-f", &web]);
    let conflict = "error: Apply failed with 1 conflict: conflict with \"kubectl-client-side-apply\" using apps/v1: .spec.replicas\n";
    assert!(!run.ok && run.stderr.starts_with(conflict), "{}", run.stderr);
    // Forced, it succeeds, and kubectl moves client-side apply's ownership to its own with a JSON
    // patch of managedFields (which the server takes), then applies again.
    let run = serve::run(&kubectl, &server, &["apply", "--server-side", "--force-conflicts", "-f", &web]);
    assert!(run.ok && run.stderr.is_empty(), "{}{}", run.stdout, run.stderr);
    let web = object(&kubectl, &server, "deployment/web");
    assert_eq!(managers(&web), ["kubectl Apply", "kubectl-last-applied Apply", "kube-controller-manager Update status"]);
    assert_eq!(web["spec"]["replicas"], 5);

    // Without --show-managed-fields kubectl hides them, as from any cluster.
    let plain = kubectl_ok(&kubectl, &server, &["get", "pod/stuck", "-o", "yaml"]);
    assert!(!plain.contains("managedFields"), "{plain}");
}

#[test]
fn an_apply_without_a_field_manager_is_refused_as_kube_apiserver_refuses_it() {
    let server = Server::start(&["--seed", "7", "--speed", "0"]);
    let body = br#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"x"},"data":{"a":"1"}}"#;
    let headers = [("Content-Type", "application/apply-patch+yaml")];
    let (code, text) = server.http("PATCH", "/api/v1/namespaces/default/configmaps/x", &headers, body);
    assert_eq!(code, 422, "{text}");
    let status: Value = serde_json::from_str(&text).expect("a Status");
    assert_eq!(status["message"], "PatchOptions.meta.k8s.io \"\" is invalid: fieldManager: Required value: is required for apply patch");
    // Nothing was created; with a manager the same request creates the object (201), and YAML
    // is read as well as JSON.
    let (code, _) = server.http("GET", "/api/v1/namespaces/default/configmaps/x", &[], b"");
    assert_eq!(code, 404);
    let yaml = b"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\ndata:\n  a: \"1\"\n";
    let (code, text) = server.http("PATCH", "/api/v1/namespaces/default/configmaps/x?fieldManager=tester", &headers, yaml);
    assert_eq!(code, 201, "{text}");
    let created: Value = serde_json::from_str(&text).expect("the object");
    assert_eq!(created["metadata"]["managedFields"][0]["manager"], "tester");
    assert_eq!(created["metadata"]["managedFields"][0]["operation"], "Apply");
    // A write may set managedFields: an empty list leaves them, `[{}]` strips them.
    let merge = [("Content-Type", "application/merge-patch+json")];
    let path = "/api/v1/namespaces/default/configmaps/x";
    let (_, text) = server.http("PATCH", path, &merge, br#"{"metadata":{"managedFields":[]}}"#);
    assert!(text.contains(r#""manager":"tester""#), "{text}");
    let (code, text) = server.http("PATCH", path, &merge, br#"{"metadata":{"managedFields":[{}]}}"#);
    assert_eq!(code, 200, "{text}");
    assert!(!text.contains("managedFields"), "{text}");
    let (_, text) = server.http("GET", path, &[], b"");
    assert!(!text.contains("managedFields"), "{text}");
    // A wrong version and managedFields in the patch are refused.
    let wrong = br#"{"apiVersion":"v2","kind":"ConfigMap","metadata":{"name":"x"}}"#;
    let (code, text) = server.http("PATCH", "/api/v1/namespaces/default/configmaps/x?fieldManager=tester", &headers, wrong);
    assert_eq!(code, 400, "{text}");
    assert!(text.contains("Incorrect version specified in apply patch. Specified patch version: v2, expected: v1"), "{text}");
    let with_fields = br#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"x","managedFields":[]}}"#;
    let (code, text) = server.http("PATCH", "/api/v1/namespaces/default/configmaps/x?fieldManager=tester", &headers, with_fields);
    assert_eq!((code, text.contains("metadata.managedFields must be nil")), (400, true), "{text}");
}

#[test]
fn the_consoles_kubectl_writes_with_the_real_kubectls_field_managers() {
    let Some(kubectl) = kubectl_or_skip() else { return };
    // scale-up's timeline runs the console's `kubectl scale deployment web --replicas=6` at 20 s;
    // the real kubectl runs the same command against the default scenario.
    let console = Server::start(&["scale-up", "--seed", "7", "--speed", "0"]);
    console.sim("advance 30s");
    let real = Server::start(&["--seed", "7", "--speed", "0"]);
    real.sim("advance 20s");
    kubectl_ok(&kubectl, &real, &["scale", "deployment/web", "--replicas=6"]);
    real.sim("advance 10s");
    let (by_console, by_real) = (object(&kubectl, &console, "deployment/web"), object(&kubectl, &real, "deployment/web"));
    assert_eq!(
        managers(&by_console),
        ["kubectl-client-side-apply Update", "kubectl Update scale", "kube-controller-manager Update status"]
    );
    assert_eq!(managers(&by_console), managers(&by_real));
    assert_eq!(fields_of(&by_console, "kubectl", "Update"), fields_of(&by_real, "kubectl", "Update"));
}
