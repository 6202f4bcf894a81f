//! Pods consuming ConfigMaps and Secrets, as the documentation's "Configure a Pod to Use a
//! ConfigMap" and "Distribute Credentials Securely Using Secrets" pages show it, one test per
//! upstream behaviour with the kubelet's and the API server's own messages: manifests of our
//! own shaped like `pods/pod-single-configmap-env-variable.yaml`, `pods/pod-configmap-envFrom.yaml`,
//! `pods/pod-configmap-volume.yaml` and `pods/inject/secret-pod.yaml`.

use kubeloop::api::ApiRequest;
use kubeloop::model::*;
use kubeloop::sim::{NodeConfig, Sim};

fn object(yaml: &str) -> Object {
    Object::from_json(yaml_serde::from_str(yaml).unwrap()).unwrap()
}

/// A one-node cluster with `yaml` created.
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

fn waiting(sim: &Sim, name: &str) -> Option<(String, String)> {
    let p = pod(sim, name);
    let w = p.status.container_statuses.first()?.state.waiting.clone()?;
    Some((w.reason.unwrap_or_default().to_string(), w.message.unwrap_or_default().to_string()))
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

fn running(sim: &Sim, name: &str) -> bool {
    pod(sim, name).status.phase == Some(PodPhase::Running)
}

const SPECIAL_CONFIG: &str = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: special-config\n  namespace: default\ndata:\n  special.how: very\n  SPECIAL_TYPE: charm\n";

const ENV_POD: &str = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: dapi-test-pod\nspec:\n  containers:\n  - name: test-container\n    image: registry.k8s.io/busybox\n    command: [/bin/sh, -c, env; sleep 3600]\n    env:\n    - name: SPECIAL_LEVEL_KEY\n      valueFrom:\n        configMapKeyRef:\n          name: special-config\n          key: special.how\n";

#[test]
fn a_missing_config_map_leaves_the_container_in_create_container_config_error_until_a_resync_after_it_is_created() {
    let mut sim = run(ENV_POD);
    until(&mut sim, Duration::secs(30), |s| waiting(s, "dapi-test-pod").is_some_and(|(r, _)| r == "CreateContainerConfigError"));
    assert_eq!(waiting(&sim, "dapi-test-pod").unwrap().1, r#"configmap "special-config" not found"#);
    let failed = events(&sim, "Failed");
    assert_eq!(failed.len(), 1);
    assert_eq!(failed[0].type_, "Warning");
    assert_eq!(failed[0].message, r#"Error: configmap "special-config" not found"#);
    assert_eq!(failed[0].involved_object.field_path, "spec.containers{test-container}");
    // The pod worker retries a failed sync after 10–15 s: the event count grows, nothing starts.
    sim.advance(Duration::secs(30));
    assert!(events(&sim, "Failed")[0].count >= 2);
    assert!(!running(&sim, "dapi-test-pod"));
    sim.submit(ApiRequest::Create(object(SPECIAL_CONFIG))).unwrap();
    let created = sim.now();
    let healed = until(&mut sim, Duration::secs(30), |s| running(s, "dapi-test-pod"));
    // The next retry (at most 15 s away) starts it; the PLEG reports it within a second more.
    assert!(healed.since(created) <= Duration::secs(17), "running {:?} after the ConfigMap", healed.since(created));
}

#[test]
fn a_missing_key_is_named_with_the_config_maps_namespace_and_name() {
    let cm = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: special-config\n  namespace: default\ndata:\n  other: x\n";
    let mut sim = run(cm);
    sim.submit(ApiRequest::Create(object(ENV_POD))).unwrap();
    until(&mut sim, Duration::secs(30), |s| waiting(s, "dapi-test-pod").is_some_and(|(r, _)| r == "CreateContainerConfigError"));
    assert_eq!(waiting(&sim, "dapi-test-pod").unwrap().1, "couldn't find key special.how in ConfigMap default/special-config");
    assert_eq!(events(&sim, "Failed")[0].message, "Error: couldn't find key special.how in ConfigMap default/special-config");
}

#[test]
fn an_optional_reference_to_a_missing_config_map_is_skipped_and_the_container_starts() {
    let optional = ENV_POD.replace("key: special.how\n", "key: special.how\n          optional: true\n");
    let mut sim = run(&optional);
    until(&mut sim, Duration::secs(30), |s| running(s, "dapi-test-pod"));
    assert!(events(&sim, "Failed").is_empty());
}

const SECRET_POD: &str = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: env-single-secret\nspec:\n  containers:\n  - name: envars-test-container\n    image: nginx\n    env:\n    - name: SECRET_USERNAME\n      valueFrom:\n        secretKeyRef:\n          name: backend-user\n          key: backend-username\n";

#[test]
fn a_missing_secret_is_reported_as_secret_not_found_and_a_missing_key_with_the_secrets_name() {
    let mut sim = run(SECRET_POD);
    until(&mut sim, Duration::mins(1), |s| waiting(s, "env-single-secret").is_some_and(|(r, _)| r == "CreateContainerConfigError"));
    assert_eq!(waiting(&sim, "env-single-secret").unwrap().1, r#"secret "backend-user" not found"#);
    let secret = "apiVersion: v1\nkind: Secret\nmetadata:\n  name: backend-user\n  namespace: default\ndata:\n  other: YWRtaW4=\n";
    sim.submit(ApiRequest::Create(object(secret))).unwrap();
    until(&mut sim, Duration::secs(30), |s| waiting(s, "env-single-secret").is_some_and(|(_, m)| m.starts_with("couldn't")));
    assert_eq!(waiting(&sim, "env-single-secret").unwrap().1, "couldn't find key backend-username in Secret default/backend-user");
}

#[test]
fn env_from_a_missing_config_map_fails_the_same_way_and_heals() {
    let pod_yaml = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: dapi-test-pod\nspec:\n  containers:\n  - name: test-container\n    image: registry.k8s.io/busybox\n    command: [/bin/sh, -c, env; sleep 3600]\n    envFrom:\n    - configMapRef:\n        name: special-config\n";
    let mut sim = run(pod_yaml);
    until(&mut sim, Duration::secs(30), |s| waiting(s, "dapi-test-pod").is_some_and(|(r, _)| r == "CreateContainerConfigError"));
    assert_eq!(waiting(&sim, "dapi-test-pod").unwrap().1, r#"configmap "special-config" not found"#);
    sim.submit(ApiRequest::Create(object(SPECIAL_CONFIG))).unwrap();
    until(&mut sim, Duration::secs(30), |s| running(s, "dapi-test-pod"));
}

const VOLUME_POD: &str = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: dapi-test-pod\nspec:\n  containers:\n  - name: test-container\n    image: registry.k8s.io/busybox\n    command: [/bin/sh, -c, cat /etc/config/SPECIAL_TYPE && sleep 3600]\n    readinessProbe:\n      exec:\n        command: [cat, /etc/config/special.how]\n      periodSeconds: 2\n    volumeMounts:\n    - name: config-volume\n      mountPath: /etc/config\n  volumes:\n  - name: config-volume\n    configMap:\n      name: special-config\n";

#[test]
fn a_missing_config_map_volume_keeps_the_pod_container_creating_with_failed_mount_until_the_reconciler_retries() {
    let mut sim = run(VOLUME_POD);
    until(&mut sim, Duration::secs(10), |s| !events(s, "FailedMount").is_empty());
    let failed = &events(&sim, "FailedMount")[0];
    assert_eq!(failed.type_, "Warning");
    assert_eq!(failed.message, r#"MountVolume.SetUp failed for volume "config-volume" : configmap "special-config" not found"#);
    assert_eq!(failed.involved_object.field_path, "", "about the pod, not a container");
    sim.advance(Duration::secs(20));
    assert_eq!(waiting(&sim, "dapi-test-pod").map(|w| w.0).as_deref(), Some("ContainerCreating"));
    // 500 ms doubling: tries at about 0, 0.5, 1.5, 3.5, 7.5 and 15.5 s.
    let count = events(&sim, "FailedMount")[0].count;
    assert!((5..=7).contains(&count), "{count} tries in 20 s");
    sim.submit(ApiRequest::Create(object(SPECIAL_CONFIG))).unwrap();
    let created = sim.now();
    // The next try is at most 32 s after the last (31.5 s in); then sandbox, start and PLEG.
    let healed = until(&mut sim, Duration::secs(40), |s| running(s, "dapi-test-pod"));
    assert!(healed.since(created) <= Duration::secs(20), "running {:?} after the ConfigMap", healed.since(created));
    // The script reads a projected key (it keeps running) and the exec probe sees another.
    until(&mut sim, Duration::secs(10), |s| pod(s, "dapi-test-pod").is_ready());
    assert_eq!(pod(&sim, "dapi-test-pod").restarts(), 0);
}

#[test]
fn an_optional_config_map_volume_mounts_empty_and_a_secret_volume_needs_its_secret() {
    let optional = VOLUME_POD.replace("      name: special-config\n", "      name: special-config\n      optional: true\n");
    let mut sim = run(&optional);
    until(&mut sim, Duration::secs(30), |s| {
        pod(s, "dapi-test-pod").restarts() >= 1 || waiting(s, "dapi-test-pod").is_some_and(|w| w.0 == "CrashLoopBackOff")
    });
    assert!(events(&sim, "FailedMount").is_empty(), "nothing to fail: the script's cat does, on an empty directory");
    let secret_pod = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: secret-test-pod\nspec:\n  containers:\n  - name: test-container\n    image: nginx\n    volumeMounts:\n    - name: secret-volume\n      mountPath: /etc/secret-volume\n      readOnly: true\n  volumes:\n  - name: secret-volume\n    secret:\n      secretName: test-secret\n";
    sim.submit(ApiRequest::Create(object(secret_pod))).unwrap();
    until(&mut sim, Duration::secs(10), |s| events(s, "FailedMount").iter().any(|e| e.involved_object.name == "secret-test-pod"));
    let e = events(&sim, "FailedMount").into_iter().find(|e| e.involved_object.name == "secret-test-pod").unwrap();
    assert_eq!(e.message, r#"MountVolume.SetUp failed for volume "secret-volume" : secret "test-secret" not found"#);
}

#[test]
fn the_api_server_refuses_a_mount_of_no_volume_a_duplicate_volume_and_a_config_map_volume_without_a_name() {
    let mut sim = Sim::new(5);
    let refuse = |sim: &mut Sim, yaml: &str| sim.submit(ApiRequest::Create(object(yaml))).map(|_| ()).unwrap_err().to_string();
    let no_volume = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\nspec:\n  containers:\n  - name: c\n    image: nginx\n    volumeMounts:\n    - name: x\n      mountPath: /x\n";
    assert_eq!(refuse(&mut sim, no_volume), r#"Pod "p" is invalid: spec.containers[0].volumeMounts[0].name: Not found: "x""#);
    let duplicate = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\nspec:\n  containers:\n  - name: c\n    image: nginx\n  volumes:\n  - name: v\n    emptyDir: {}\n  - name: v\n    emptyDir: {}\n";
    assert_eq!(refuse(&mut sim, duplicate), r#"Pod "p" is invalid: spec.volumes[1].name: Duplicate value: "v""#);
    let unnamed = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\nspec:\n  containers:\n  - name: c\n    image: nginx\n  volumes:\n  - name: v\n    configMap: {}\n";
    assert_eq!(refuse(&mut sim, unnamed), r#"Pod "p" is invalid: spec.volumes[0].configMap.name: Required value"#);
    let no_key = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\nspec:\n  containers:\n  - name: c\n    image: nginx\n    env:\n    - name: A\n      valueFrom:\n        secretKeyRef: {name: s}\n";
    assert_eq!(refuse(&mut sim, no_key), r#"Pod "p" is invalid: spec.containers[0].env[0].valueFrom.secretKeyRef.key: Required value"#);
}
