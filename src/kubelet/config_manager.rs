//! The ConfigMaps and Secrets the kubelet's pods consume: where the kubelet learns them, and
//! what a container's environment and volumes come to.
//!
//! Upstream the kubelet never lists every ConfigMap or Secret in the cluster: its watch-based
//! managers (pkg/kubelet/util/manager/watch_based_manager.go) start one reflector per object a
//! pod on the node references (`RegisterPod`, from `VisitPodConfigmapNames` and
//! `VisitPodSecretNames`: env, envFrom, volumes), each a list and watch with the field selector
//! `metadata.name=NAME`. This does the same through `Informer`, so the kubelet reads nothing the
//! API server did not send it, and a pod that references nothing adds no request at all. The
//! reflectors live as long as the process (upstream drops one when its last pod goes; a
//! simulation keeps so few that keeping them costs nothing, and a restart forgets them).
//!
//! Nothing here pushes a pod sync when a referenced object appears: upstream neither does. The
//! pod heals when its worker syncs again — after the sync-error back-off for a container's
//! environment, after the volume reconciler's exponential back-off for a mount.

use crate::api::{ApiResult, FieldFilter, WatchEvent, WatchId};
use crate::model::*;
use crate::runtime::informer::Informer;
use crate::runtime::{Ctx, RequestId};
use std::collections::{BTreeMap, BTreeSet};
use std::rc::Rc;

/// One reflector per referenced (kind, name), across namespaces: the cache is keyed by
/// namespace too, so a lookup finds only the pod's own namespace's object.
#[derive(Debug, Default)]
pub(crate) struct ConfigManager {
    reflectors: BTreeMap<(Kind, String), Informer>,
}

/// A lookup of a referenced object as the kubelet sees it: `Ok(None)` when it does not exist,
/// `Err` with upstream's message when the reflector has not synced yet.
pub(crate) type Lookup<'a> = dyn Fn(Kind, &str) -> Result<Option<Rc<Object>>, String> + 'a;

/// The (kind, name) pairs a pod references, in a fixed order.
pub(crate) fn referenced(pod: &Pod) -> BTreeSet<(Kind, String)> {
    let mut refs = BTreeSet::new();
    for c in pod.spec.containers.iter() {
        for e in &c.env_from {
            if let Some(r) = &e.config_map_ref {
                refs.insert((Kind::ConfigMap, r.name.clone()));
            }
            if let Some(r) = &e.secret_ref {
                refs.insert((Kind::Secret, r.name.clone()));
            }
        }
        for e in c.env.iter().filter_map(|e| e.value_from.as_ref()) {
            if let Some(r) = &e.config_map_key_ref {
                refs.insert((Kind::ConfigMap, r.name.clone()));
            }
            if let Some(r) = &e.secret_key_ref {
                refs.insert((Kind::Secret, r.name.clone()));
            }
        }
    }
    for v in &pod.spec.volumes {
        if let Some(cm) = &v.config_map {
            refs.insert((Kind::ConfigMap, cm.name.clone()));
        }
        if let Some(s) = &v.secret {
            refs.insert((Kind::Secret, s.secret_name.clone()));
        }
    }
    refs.retain(|(_, name)| !name.is_empty());
    refs
}

impl ConfigManager {
    /// `RegisterPod`: a reflector for each object the pod references that none watches yet.
    pub(crate) fn register_pod(&mut self, ctx: &mut Ctx, pod: &Pod) {
        for (kind, name) in referenced(pod) {
            if let std::collections::btree_map::Entry::Vacant(slot) = self.reflectors.entry((kind, name.clone())) {
                slot.insert(Informer::new(kind, FieldFilter::Name(name))).start(ctx);
            }
        }
    }

    /// Whether every reflector the pod's volumes need has its first list.
    pub(crate) fn synced_for(&self, pod: &Pod) -> bool {
        referenced(pod).iter().all(|key| self.reflectors.get(key).is_some_and(Informer::has_synced))
    }

    /// The object as the kubelet's cache has it (`GetObject`).
    pub(crate) fn get(&self, kind: Kind, namespace: &str, name: &str) -> Result<Option<Rc<Object>>, String> {
        let Some(reflector) = self.reflectors.get(&(kind, name.to_string())) else {
            return Ok(None);
        };
        if !reflector.has_synced() {
            // watch_based_manager.go: `fmt.Errorf("failed to sync %s cache: %v", ...)`.
            return Err(format!("failed to sync {} cache: timed out waiting for the condition", resource(kind)));
        }
        Ok(reflector.store().get(&ObjectKey::new(kind, namespace, name)).cloned())
    }

    pub(crate) fn handle_response(&mut self, ctx: &mut Ctx, id: RequestId, result: ApiResult) -> Result<(), ApiResult> {
        match self.reflectors.values_mut().find(|r| r.owns_request(id)) {
            Some(r) => {
                r.handle_response(ctx, id, result);
                Ok(())
            }
            None => Err(result),
        }
    }

    /// Whether the event was for one of these reflectors.
    pub(crate) fn handle_watch_event(&mut self, watch: WatchId, event: WatchEvent) -> bool {
        match self.reflectors.values_mut().find(|r| r.owns_watch(watch)) {
            Some(r) => {
                r.handle_watch_event(event);
                true
            }
            None => false,
        }
    }

    pub(crate) fn handle_watch_closed(&mut self, now: Time, watch: WatchId) {
        for r in self.reflectors.values_mut() {
            r.handle_watch_closed(now, watch);
        }
    }

    pub(crate) fn poll(&mut self, ctx: &mut Ctx) {
        for r in self.reflectors.values_mut() {
            r.poll(ctx);
        }
    }

    pub(crate) fn next_wakeup(&self) -> Option<Time> {
        self.reflectors.values().filter_map(Informer::next_wakeup).min()
    }
}

/// The resource word upstream's errors use (`corev1.Resource("configmap")`).
fn resource(kind: Kind) -> &'static str {
    if kind == Kind::Secret {
        "secret"
    } else {
        "configmap"
    }
}

/// `apierrors.NewNotFound(corev1.Resource("configmap"), name)` as the managers return it.
fn not_found(kind: Kind, name: &str) -> String {
    format!("{} {name:?} not found", resource(kind))
}

/// A ConfigMap's or Secret's entries as text (a Secret's bytes decoded, lossily if not UTF-8).
fn entries(object: &Object) -> BTreeMap<String, String> {
    match object {
        Object::ConfigMap(cm) => cm.data.iter().map(|(k, v)| (k.clone(), v.clone())).collect(),
        Object::Secret(s) => s.data.iter().map(|(k, v)| (k.clone(), String::from_utf8_lossy(&v.decode()).into_owned())).collect(),
        _ => BTreeMap::new(),
    }
}

/// The keys a volume of this object projects (a ConfigMap's `binaryData` too).
fn keys(object: &Object) -> BTreeSet<String> {
    match object {
        Object::ConfigMap(cm) => cm.data.keys().chain(cm.binary_data.keys()).cloned().collect(),
        Object::Secret(s) => s.data.keys().cloned().collect(),
        _ => BTreeSet::new(),
    }
}

/// `makeEnvironmentVariables` (pkg/kubelet/kubelet_pods.go) for what kubeloop models: `envFrom`
/// first, then `env`, a later name replacing an earlier one. An `optional` reference to a
/// missing object or key is skipped; anything else missing is the error the container is left
/// waiting with (`CreateContainerConfigError`). `$(VAR)` references are not expanded.
pub(crate) fn make_environment(pod: &Pod, container: &Container, lookup: &Lookup) -> Result<BTreeMap<String, String>, String> {
    let ns = pod.metadata.namespace.as_str();
    let mut env = BTreeMap::new();
    for from in &container.env_from {
        let (kind, r) = match (&from.config_map_ref, &from.secret_ref) {
            (Some(r), _) => (Kind::ConfigMap, r),
            (None, Some(r)) => (Kind::Secret, r),
            (None, None) => continue,
        };
        let optional = r.optional == Some(true);
        match lookup(kind, &r.name)? {
            Some(object) => env.extend(entries(&object).into_iter().map(|(k, v)| (format!("{}{k}", from.prefix), v))),
            None if optional => continue,
            None => return Err(not_found(kind, &r.name)),
        }
    }
    for var in &container.env {
        let Some(from) = &var.value_from else {
            env.insert(var.name.clone(), var.value.clone());
            continue;
        };
        let (kind, word, selector) = match (&from.config_map_key_ref, &from.secret_key_ref) {
            (Some(s), _) => (Kind::ConfigMap, "ConfigMap", s),
            (None, Some(s)) => (Kind::Secret, "Secret", s),
            // fieldRef / resourceFieldRef: not modelled, the variable is left out.
            (None, None) => continue,
        };
        let optional = selector.optional == Some(true);
        let Some(object) = lookup(kind, &selector.name)? else {
            if optional {
                continue;
            }
            return Err(not_found(kind, &selector.name));
        };
        match entries(&object).remove(&selector.key) {
            Some(value) => {
                env.insert(var.name.clone(), value);
            }
            None if optional => {}
            None => return Err(format!("couldn't find key {} in {word} {ns}/{}", selector.key, selector.name)),
        }
    }
    Ok(env)
}

/// A volume that could not be set up: its name and the mounter's error.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct MountFailure {
    pub volume: String,
    pub error: String,
}

impl MountFailure {
    /// The FailedMount event's message, as the operation generator words it.
    pub(crate) fn message(&self) -> String {
        format!("MountVolume.SetUp failed for volume {:?} : {}", self.volume, self.error)
    }
}

/// The files each container sees through its volume mounts, by container name.
pub(crate) type MountedFiles = BTreeMap<String, BTreeSet<String>>;

/// `SetUpAt` of each configMap and secret volume (pkg/volume/configmap, pkg/volume/secret), in
/// the pod's order: the first that fails is the error. A missing object fails unless the volume
/// is `optional` (then it is an empty directory); `items` naming a missing key fail the same
/// way (`MakePayload`). emptyDir, hostPath (a simulated node has no files of its own) and
/// unmodelled volumes mount as empty directories.
pub(crate) fn set_up_volumes(pod: &Pod, lookup: &Lookup) -> Result<MountedFiles, MountFailure> {
    let mut contents: BTreeMap<&str, BTreeSet<String>> = BTreeMap::new();
    for v in &pod.spec.volumes {
        let fail = |error: String| MountFailure { volume: v.name.clone(), error };
        let (kind, name, items, optional) = match (&v.config_map, &v.secret) {
            (Some(cm), _) => (Kind::ConfigMap, &cm.name, &cm.items, cm.optional == Some(true)),
            (None, Some(s)) => (Kind::Secret, &s.secret_name, &s.items, s.optional == Some(true)),
            (None, None) => {
                contents.insert(&v.name, BTreeSet::new());
                continue;
            }
        };
        let object = lookup(kind, name).map_err(fail)?;
        let have = match object {
            Some(o) => keys(&o),
            None if optional => BTreeSet::new(),
            None => return Err(fail(not_found(kind, name))),
        };
        let files: BTreeSet<String> = if items.is_empty() {
            have
        } else {
            let mut files = BTreeSet::new();
            for item in items {
                if have.contains(&item.key) {
                    files.insert(item.path.clone());
                } else if !optional {
                    let error = if kind == Kind::Secret {
                        format!("references non-existent secret key: {}", item.key)
                    } else {
                        format!("configmap references non-existent config key: {}", item.key)
                    };
                    return Err(fail(error));
                }
            }
            files
        };
        contents.insert(&v.name, files);
    }
    let mut mounted = MountedFiles::new();
    for c in pod.spec.containers.iter() {
        let seen = mounted.entry(c.name.clone()).or_default();
        for m in &c.volume_mounts {
            let Some(files) = contents.get(m.name.as_str()) else { continue };
            let root = m.mount_path.trim_end_matches('/');
            if m.sub_path.is_empty() {
                seen.extend(files.iter().map(|f| format!("{root}/{f}")));
            } else if files.contains(&m.sub_path) {
                // A subPath of one projected file mounts that file at mountPath itself.
                seen.insert(root.to_string());
            } else {
                let prefix = format!("{}/", m.sub_path.trim_end_matches('/'));
                seen.extend(files.iter().filter_map(|f| f.strip_prefix(&prefix)).map(|f| format!("{root}/{f}")));
            }
        }
    }
    Ok(mounted)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pod(yaml_containers: Vec<Container>, volumes: Vec<Volume>) -> Pod {
        let mut p = Pod::default();
        p.metadata.name = "p".into();
        p.metadata.namespace = "default".into();
        p.spec = PodSpec { containers: yaml_containers.into(), volumes, ..Default::default() }.into();
        p
    }

    fn config_map(name: &str, data: &[(&str, &str)]) -> Rc<Object> {
        let mut cm = ConfigMap::default();
        cm.metadata.name = name.into();
        cm.metadata.namespace = "default".into();
        cm.data = data.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        Rc::new(Object::ConfigMap(cm))
    }

    fn key_ref(name: &str, key: &str, optional: Option<bool>) -> Option<KeySelector> {
        Some(KeySelector { name: name.into(), key: key.into(), optional })
    }

    #[test]
    fn env_reads_keys_env_from_reads_all_and_env_wins() {
        let special = config_map("special-config", &[("special.how", "very"), ("SPECIAL_TYPE", "charm")]);
        let lookup = |kind: Kind, name: &str| Ok((kind == Kind::ConfigMap && name == "special-config").then(|| special.clone()));
        let p = pod(vec![], vec![]);
        let c = &pod(
            vec![Container {
                env_from: vec![EnvFromSource {
                    prefix: "CM_".into(),
                    config_map_ref: Some(EnvSourceRef { name: "special-config".into(), optional: None }),
                    secret_ref: None,
                }],
                env: vec![
                    EnvVar {
                        name: "SPECIAL_LEVEL_KEY".into(),
                        value: String::new(),
                        value_from: Some(EnvVarSource {
                            config_map_key_ref: key_ref("special-config", "special.how", None),
                            secret_key_ref: None,
                        }),
                    },
                    EnvVar { name: "CM_SPECIAL_TYPE".into(), value: "plain".into(), value_from: None },
                ],
                ..Default::default()
            }],
            vec![],
        )
        .spec
        .containers[0];
        let env = make_environment(&p, c, &lookup).unwrap_or_default();
        assert_eq!(env.get("SPECIAL_LEVEL_KEY").map(String::as_str), Some("very"));
        assert_eq!(env.get("CM_special.how").map(String::as_str), Some("very"));
        assert_eq!(env.get("CM_SPECIAL_TYPE").map(String::as_str), Some("plain"));
    }

    #[test]
    fn missing_objects_and_keys_fail_with_the_kubelets_messages_unless_optional() {
        let present = config_map("present", &[("a", "1")]);
        let lookup = |kind: Kind, name: &str| Ok((kind == Kind::ConfigMap && name == "present").then(|| present.clone()));
        let p = pod(vec![], vec![]);
        let with = |from: EnvVarSource| Container {
            name: "c".into(),
            env: vec![EnvVar { name: "V".into(), value: String::new(), value_from: Some(from) }],
            ..Default::default()
        };
        let cm = |name: &str, key: &str, optional| EnvVarSource { config_map_key_ref: key_ref(name, key, optional), secret_key_ref: None };
        let secret = |name: &str, key: &str| EnvVarSource { config_map_key_ref: None, secret_key_ref: key_ref(name, key, None) };
        assert_eq!(make_environment(&p, &with(cm("absent", "a", None)), &lookup), Err(r#"configmap "absent" not found"#.into()));
        assert_eq!(make_environment(&p, &with(secret("absent", "a")), &lookup), Err(r#"secret "absent" not found"#.into()));
        assert_eq!(
            make_environment(&p, &with(cm("present", "b", None)), &lookup),
            Err("couldn't find key b in ConfigMap default/present".into())
        );
        assert_eq!(make_environment(&p, &with(cm("absent", "a", Some(true))), &lookup), Ok(BTreeMap::new()));
        assert_eq!(make_environment(&p, &with(cm("present", "b", Some(true))), &lookup), Ok(BTreeMap::new()));
    }

    #[test]
    fn volumes_project_keys_or_items_under_the_mount_path() {
        let cm = config_map("special-config", &[("SPECIAL_LEVEL", "very"), ("SPECIAL_TYPE", "charm")]);
        let lookup = |_: Kind, name: &str| Ok((name == "special-config").then(|| cm.clone()));
        let volume = |items: Vec<KeyToPath>, name: &str| Volume {
            name: "config-volume".into(),
            config_map: Some(ConfigMapVolumeSource { name: name.into(), items, ..Default::default() }),
            ..Default::default()
        };
        let c = Container {
            name: "c".into(),
            volume_mounts: vec![VolumeMount { name: "config-volume".into(), mount_path: "/etc/config".into(), ..Default::default() }],
            ..Default::default()
        };
        let all = set_up_volumes(&pod(vec![c.clone()], vec![volume(vec![], "special-config")]), &lookup).unwrap_or_default();
        assert_eq!(all["c"], ["/etc/config/SPECIAL_LEVEL".to_string(), "/etc/config/SPECIAL_TYPE".to_string()].into());
        let item = KeyToPath { key: "SPECIAL_LEVEL".into(), path: "keys".into(), mode: None };
        let some = set_up_volumes(&pod(vec![c.clone()], vec![volume(vec![item], "special-config")]), &lookup).unwrap_or_default();
        assert_eq!(some["c"], ["/etc/config/keys".to_string()].into());
        let missing = set_up_volumes(&pod(vec![c.clone()], vec![volume(vec![], "nope")]), &lookup);
        assert_eq!(
            missing.map_err(|f| f.message()),
            Err(r#"MountVolume.SetUp failed for volume "config-volume" : configmap "nope" not found"#.into())
        );
        let bad_item = KeyToPath { key: "NOPE".into(), path: "x".into(), mode: None };
        let missing_key = set_up_volumes(&pod(vec![c], vec![volume(vec![bad_item], "special-config")]), &lookup);
        assert_eq!(missing_key.map_err(|f| f.error), Err("configmap references non-existent config key: NOPE".into()));
    }
}
