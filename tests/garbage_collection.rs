//! The garbage collector honours owners of every kind, as kube-controller-manager's does (it
//! watches every resource that can be listed, watched and deleted): a dependent of any kind is
//! collected once every owner it names is gone — a Deployment owned by a ConfigMap, a ConfigMap
//! and a Secret owned by a custom object, a Service owned by a Deployment — and kept while one
//! still exists, or while its owner is one that only shares the name (another UID is another
//! owner, and the old one is gone).

use kubeloop::command::scenario::Scenario;
use kubeloop::command::Session;
use kubeloop::model::{Duration, Kind, ObjectKey};

fn session() -> Session {
    let mut s = Session::new(Scenario::builtin("default").unwrap(), Some(3)).unwrap();
    s.settle(Duration::mins(1)).unwrap();
    s
}

fn run(s: &mut Session, line: &str) {
    let out = s.execute(line);
    assert!(out.ok, "{line}: {}", out.stderr);
}

fn apply(s: &mut Session, name: &str, yaml: &str) {
    s.add_file(name, yaml);
    run(s, &format!("kubectl apply -f {name}"));
}

fn uid(s: &Session, key: &ObjectKey) -> String {
    s.sim().api().get(key).unwrap_or_else(|| panic!("{key} exists")).meta().uid.to_string()
}

fn exists(s: &Session, key: &ObjectKey) -> bool {
    s.sim().api().get(key).is_some()
}

/// `ownerReferences:` naming one owner.
fn owned(api_version: &str, kind: &str, name: &str, uid: &str) -> String {
    format!("  ownerReferences:\n  - {{apiVersion: {api_version}, kind: {kind}, name: {name}, uid: {uid}}}\n")
}

fn deployment(name: &str, owners: &str) -> String {
    format!(
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: {name}\n{owners}spec:\n  replicas: 1\n  selector: {{matchLabels: {{app: {name}}}}}\n  template:\n    metadata: {{labels: {{app: {name}}}}}\n    spec:\n      containers: [{{name: web, image: nginx}}]\n"
    )
}

#[test]
fn a_deployment_owned_by_a_config_map_goes_with_it() {
    let mut s = session();
    apply(&mut s, "cm.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings}\ndata: {a: b}\n");
    let cm = ObjectKey::new(Kind::ConfigMap, "default", "settings");
    let owners = owned("v1", "ConfigMap", "settings", &uid(&s, &cm));
    apply(&mut s, "d.yaml", &deployment("configured", &owners));
    s.settle(Duration::mins(2)).unwrap();
    let d = ObjectKey::new(Kind::Deployment, "default", "configured");
    assert!(exists(&s, &d), "an owner that exists keeps its dependent");
    let pods = |s: &Session| s.sim().objects(Kind::Pod).filter(|p| p.meta().name.starts_with("configured-")).count();
    assert_eq!(pods(&s), 1);
    run(&mut s, "kubectl delete configmap settings");
    s.settle(Duration::mins(2)).unwrap();
    assert!(!exists(&s, &d), "the Deployment went with its ConfigMap");
    assert_eq!(pods(&s), 0, "and so did its ReplicaSet's pods");
}

#[test]
fn a_service_owned_by_a_deployment_and_a_secret_owned_by_a_service_go_in_turn() {
    let mut s = session();
    let web = ObjectKey::new(Kind::Deployment, "default", "web");
    let owners = owned("apps/v1", "Deployment", "web", &uid(&s, &web));
    apply(
        &mut s,
        "svc.yaml",
        &format!(
            "apiVersion: v1\nkind: Service\nmetadata:\n  name: front\n{owners}spec:\n  selector: {{app: web}}\n  ports: [{{port: 80}}]\n"
        ),
    );
    let svc = ObjectKey::new(Kind::Service, "default", "front");
    let owners = owned("v1", "Service", "front", &uid(&s, &svc));
    apply(&mut s, "secret.yaml", &format!("apiVersion: v1\nkind: Secret\nmetadata:\n  name: token\n{owners}stringData: {{a: b}}\n"));
    let secret = ObjectKey::new(Kind::Secret, "default", "token");
    s.settle(Duration::mins(1)).unwrap();
    assert!(exists(&s, &svc) && exists(&s, &secret));
    run(&mut s, "kubectl delete deployment web");
    s.settle(Duration::mins(2)).unwrap();
    assert!(!exists(&s, &svc), "the Service went with its Deployment");
    assert!(!exists(&s, &secret), "and the Secret with its Service");
}

#[test]
fn a_dependent_is_kept_while_any_owner_exists_and_a_namesake_is_not_its_owner() {
    let mut s = session();
    apply(
        &mut s,
        "cms.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: one}\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: two}\n",
    );
    let (one, two) = (ObjectKey::new(Kind::ConfigMap, "default", "one"), ObjectKey::new(Kind::ConfigMap, "default", "two"));
    let owners = format!(
        "  ownerReferences:\n  - {{apiVersion: v1, kind: ConfigMap, name: one, uid: {}}}\n  - {{apiVersion: v1, kind: ConfigMap, name: two, uid: {}}}\n",
        uid(&s, &one),
        uid(&s, &two)
    );
    apply(&mut s, "d.yaml", &deployment("shared", &owners));
    let d = ObjectKey::new(Kind::Deployment, "default", "shared");
    run(&mut s, "kubectl delete configmap one");
    s.settle(Duration::mins(2)).unwrap();
    assert!(exists(&s, &d), "one owner is left");
    // `two` deleted and made again: the same name, another UID, so not the owner named.
    run(&mut s, "kubectl delete configmap two");
    apply(&mut s, "two.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: two}\n");
    s.settle(Duration::mins(2)).unwrap();
    assert!(!exists(&s, &d), "both owners named are gone");
}
