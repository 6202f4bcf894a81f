//! Validation with the API server's own messages (pkg/apis/*/validation).
//!
//! Only what kubeloop's objects can get wrong is checked, but every message is the one a real
//! cluster gives, because learners paste them into search engines.

use super::errors::FieldError;
use crate::model::*;

const DNS1123_SUBDOMAIN_MSG: &str = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
const DNS1123_LABEL_MSG: &str = "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')";

pub fn is_dns1123_label(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 63
        && s.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        && !s.starts_with('-')
        && !s.ends_with('-')
}

pub fn is_dns1123_subdomain(s: &str) -> bool {
    !s.is_empty() && s.len() <= 253 && s.split('.').all(is_dns1123_label)
}

/// The message for a name that is not a valid subdomain, as `metadata.name` errors print it.
pub fn subdomain_error(field: &str, value: &str) -> FieldError {
    FieldError::invalid(field, format!("{value:?}"), DNS1123_SUBDOMAIN_MSG)
}

pub fn validate(object: &Object) -> Vec<FieldError> {
    let mut errs = validate_meta(object);
    match object {
        Object::Pod(p) => {
            validate_pod_spec(&p.spec, "spec", &mut errs);
            validate_containers_only_for_pod(&p.spec, &mut errs);
        }
        Object::ReplicaSet(rs) => {
            validate_replicas(rs.spec.replicas, &mut errs);
            validate_selector_and_template(&rs.spec.selector, &rs.spec.template, "deployment", &mut errs);
        }
        Object::Deployment(d) => validate_deployment(d, &mut errs),
        Object::DaemonSet(ds) => validate_daemon_set(ds, &mut errs),
        Object::StatefulSet(sts) => validate_stateful_set(sts, &mut errs),
        Object::PersistentVolumeClaim(pvc) => super::storage::validate_claim(pvc, &mut errs),
        Object::PersistentVolume(pv) => super::storage::validate_volume(pv, &mut errs),
        Object::Namespace(ns) if !ns.metadata.name.is_empty() && !is_dns1123_label(&ns.metadata.name) => {
            // ValidateNamespaceName: a label, not a subdomain (the subdomain error was pushed).
            errs.retain(|e| e.field != "metadata.name");
            errs.push(FieldError::invalid("metadata.name", format!("{:?}", ns.metadata.name), DNS1123_LABEL_MSG));
        }
        Object::ConfigMap(cm) => validate_config_map(cm, &mut errs),
        Object::Secret(secret) => validate_secret(secret, &mut errs),
        Object::PodDisruptionBudget(pdb) => validate_pod_disruption_budget(pdb, &mut errs),
        Object::ReplicationController(rc) => validate_replication_controller(rc, &mut errs),
        Object::HorizontalPodAutoscaler(hpa) => validate_horizontal_pod_autoscaler(hpa, &mut errs),
        Object::Service(svc) => super::service::validate_service(svc, &mut errs),
        Object::Job(job) => super::job::validate_job(job, &mut errs),
        Object::CronJob(cj) => super::cronjob::validate_cron_job(cj, &mut errs),
        // Kinds validated by their metadata alone.
        _ => {}
    }
    errs
}

fn validate_meta(object: &Object) -> Vec<FieldError> {
    let meta = object.meta();
    let mut errs = Vec::new();
    if meta.name.is_empty() {
        errs.push(FieldError::required_why("metadata.name", "name or generateName is required"));
    } else if !is_dns1123_subdomain(&meta.name) {
        errs.push(subdomain_error("metadata.name", &meta.name));
    }
    for (k, v) in &meta.labels {
        if !valid_label_value(v) {
            errs.push(FieldError::invalid(
                "metadata.labels",
                format!("{v:?}"),
                "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')",
            ));
        }
        if k.is_empty() {
            errs.push(FieldError::invalid("metadata.labels", "\"\"", "name part must be non-empty"));
        }
    }
    errs
}

/// The total size a ConfigMap's or Secret's data may have (`MaxSecretSize`, 1 MiB).
const MAX_DATA_SIZE: usize = 1024 * 1024;

/// `IsConfigMapKey`: why `key` cannot be a ConfigMap or Secret key, if it cannot.
pub(crate) fn config_key_errors(key: &str) -> Vec<&'static str> {
    let mut why = Vec::new();
    if key.len() > 253 {
        why.push("must be no more than 253 characters");
    }
    if key.is_empty() || !key.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_' || b == b'.') {
        why.push("a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')");
    }
    if key == "." {
        why.push("must not be '.'");
    } else if key == ".." {
        why.push("must not be '..'");
    } else if key.starts_with("..") {
        why.push("must not start with '..'");
    }
    why
}

fn validate_keys<'a>(field: &str, keys: impl Iterator<Item = &'a String>, errs: &mut Vec<FieldError>) {
    for key in keys {
        for why in config_key_errors(key) {
            errs.push(FieldError::invalid(&format!("{field}[{key}]"), format!("{key:?}"), why));
        }
    }
}

/// `ValidateConfigMap`: keys, no key in both maps, at most 1 MiB in all.
fn validate_config_map(cm: &ConfigMap, errs: &mut Vec<FieldError>) {
    validate_keys("data", cm.data.keys(), errs);
    validate_keys("binaryData", cm.binary_data.keys(), errs);
    for key in cm.binary_data.keys().filter(|k| cm.data.contains_key(*k)) {
        errs.push(FieldError::invalid(&format!("data[{key}]"), format!("{key:?}"), "duplicate of key present in binaryData"));
    }
    let size: usize = cm.data.iter().map(|(k, v)| k.len() + v.len()).sum::<usize>()
        + cm.binary_data.iter().map(|(k, v)| k.len() + v.len()).sum::<usize>();
    if size > MAX_DATA_SIZE {
        errs.push(FieldError { field: "[]".into(), detail: format!("Too long: must have at most {MAX_DATA_SIZE} bytes") });
    }
}

/// `ValidateSecret`: keys, size, and the keys a typed Secret must carry.
fn validate_secret(secret: &Secret, errs: &mut Vec<FieldError>) {
    validate_keys("data", secret.data.keys(), errs);
    let size: usize = secret.data.iter().map(|(k, v)| k.len() + v.len()).sum();
    if size > MAX_DATA_SIZE {
        errs.push(FieldError { field: "data".into(), detail: format!("Too long: must have at most {MAX_DATA_SIZE} bytes") });
    }
    let required: &[&str] = match secret.type_.as_str() {
        "kubernetes.io/tls" => &["tls.crt", "tls.key"],
        "kubernetes.io/dockerconfigjson" => &[".dockerconfigjson"],
        "kubernetes.io/dockercfg" => &[".dockercfg"],
        "kubernetes.io/ssh-auth" => &["ssh-privatekey"],
        _ => &[],
    };
    for key in required.iter().filter(|k| !secret.data.contains_key(**k)) {
        errs.push(FieldError::required(&format!("data[{key}]")));
    }
}

pub(crate) fn valid_label_value(v: &str) -> bool {
    v.is_empty()
        || (v.len() <= 63
            && v.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_' || b == b'.')
            && v.as_bytes()[0].is_ascii_alphanumeric()
            && v.as_bytes()[v.len() - 1].is_ascii_alphanumeric())
}

fn validate_replicas(replicas: Option<i32>, errs: &mut Vec<FieldError>) {
    if let Some(r) = replicas.filter(|r| *r < 0) {
        errs.push(FieldError::invalid("spec.replicas", r, "must be greater than or equal to 0"));
    }
}

/// Go's `%#v` of a `map[string]string`, which the selector-mismatch message embeds.
pub(super) fn go_map_literal(labels: &StringMap) -> String {
    let parts: Vec<String> = labels.iter().map(|(k, v)| format!("{k:?}:{v:?}")).collect();
    format!("map[string]string{{{}}}", parts.join(", "))
}

/// The selector and template checks the workloads share. `workload` is the word the empty
/// selector's message names (the ReplicaSet's validation says "deployment", as upstream's does).
fn validate_selector_and_template(selector: &LabelSelector, template: &PodTemplateSpec, workload: &str, errs: &mut Vec<FieldError>) {
    validate_selector_against_template(selector, template, workload, errs);
    validate_pod_spec(&template.spec, "spec.template.spec", errs);
    if let Some(policy) = template.spec.restart_policy.as_deref().filter(|p| *p != "Always") {
        errs.push(FieldError::unsupported("spec.template.spec.restartPolicy", policy, &["Always"]));
    }
}

/// `ValidateLabelSelector` and the template's labels matching it: an empty selector, a bad
/// operator, or labels the selector does not match.
fn validate_selector_against_template(selector: &LabelSelector, template: &PodTemplateSpec, workload: &str, errs: &mut Vec<FieldError>) {
    if selector.is_empty() {
        errs.push(FieldError::required("spec.selector"));
        if selector.match_labels.is_empty() && selector.match_expressions.is_empty() {
            errs.push(FieldError::invalid(
                "spec.selector",
                "v1.LabelSelector{MatchLabels:map[string]string(nil), MatchExpressions:[]v1.LabelSelectorRequirement(nil)}",
                &format!("empty selector is invalid for {workload}"),
            ));
        }
    } else {
        for (i, req) in selector.match_expressions.iter().enumerate() {
            if !["In", "NotIn", "Exists", "DoesNotExist"].contains(&req.operator.as_str()) {
                errs.push(FieldError::invalid(
                    &format!("spec.selector.matchExpressions[{i}].operator"),
                    format!("{:?}", req.operator),
                    "not a valid selector operator",
                ));
            }
        }
        if !selector.matches(&template.metadata.labels) {
            errs.push(FieldError::invalid(
                "spec.template.metadata.labels",
                go_map_literal(&template.metadata.labels),
                "`selector` does not match template `labels`",
            ));
        }
    }
}

/// `<path>.containers[<i>]`, written out only when an error names it (every pod write is
/// validated, and almost none has an error).
struct ContainerPath<'a>(&'a str, usize);

impl std::fmt::Display for ContainerPath<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}.containers[{}]", self.0, self.1)
    }
}

/// `validateContainersOnlyForPod`: what a pod's containers must satisfy that a template's need not.
fn validate_containers_only_for_pod(spec: &PodSpec, errs: &mut Vec<FieldError>) {
    for (i, c) in spec.containers.iter().enumerate() {
        if c.image.trim() != c.image.as_str() {
            let field = format!("{}.image", ContainerPath("spec", i));
            errs.push(FieldError::invalid(&field, format!("{:?}", c.image), "must not have leading or trailing whitespace"));
        }
    }
}

pub(super) fn validate_pod_spec(spec: &PodSpec, path: &str, errs: &mut Vec<FieldError>) {
    let volumes = validate_volumes(&spec.volumes, path, errs);
    if spec.containers.is_empty() {
        errs.push(FieldError::required(&format!("{path}.containers")));
    }
    let mut seen = std::collections::BTreeSet::new();
    for (i, c) in spec.containers.iter().enumerate() {
        let at = ContainerPath(path, i);
        if c.name.is_empty() {
            errs.push(FieldError::required(&format!("{at}.name")));
        } else if !is_dns1123_label(&c.name) {
            errs.push(FieldError::invalid(&format!("{at}.name"), format!("{:?}", c.name), DNS1123_LABEL_MSG));
        } else if !seen.insert(c.name.as_str()) {
            errs.push(FieldError { field: format!("{at}.name"), detail: format!("Duplicate value: {:?}", c.name) });
        }
        // Only an empty image is refused here: a template may hold " " (some tools use it as a
        // placeholder), and the kubelet, not the API server, judges whether a name parses.
        if c.image.is_empty() {
            errs.push(FieldError::required(&format!("{at}.image")));
        }
        if let Some(p) = c.image_pull_policy.as_deref().filter(|p| !["Always", "IfNotPresent", "Never"].contains(p)) {
            errs.push(FieldError::unsupported(&format!("{at}.imagePullPolicy"), p, &["Always", "IfNotPresent", "Never"]));
        }
        validate_env(c, &at, errs);
        validate_volume_mounts(c, &at, &volumes, errs);
        validate_probes(c, &at, errs);
        for (name, q) in &c.resources.requests {
            if q.milli_value().is_some_and(|v| v < 0) {
                errs.push(FieldError::invalid(
                    &format!("{at}.resources.requests[{name}]"),
                    format!("{:?}", q.0),
                    "must be greater than or equal to 0",
                ));
            }
            if let Some(limit) = c.resources.limits.get(name) {
                if q.milli_value() > limit.milli_value() {
                    errs.push(FieldError::invalid(
                        &format!("{at}.resources.requests"),
                        format!("{:?}", q.0),
                        &format!("must be less than or equal to {name} limit of {}", limit.0),
                    ));
                }
            }
        }
    }
    if let Some(p) = spec.restart_policy.as_deref().filter(|p| !["Always", "OnFailure", "Never"].contains(p)) {
        errs.push(FieldError::unsupported(&format!("{path}.restartPolicy"), p, &["Always", "OnFailure", "Never"]));
    }
    if let Some(g) = spec.termination_grace_period_seconds.filter(|g| *g < 0) {
        errs.push(FieldError::invalid(&format!("{path}.terminationGracePeriodSeconds"), g, "must be greater than or equal to 0"));
    }
    for (i, t) in spec.tolerations.iter().enumerate() {
        let op = t.operator.as_deref().unwrap_or("Equal");
        if !["Equal", "Exists"].contains(&op) {
            errs.push(FieldError::unsupported(&format!("{path}.tolerations[{i}].operator"), op, &["Equal", "Exists"]));
        }
        if !t.effect.is_empty() && !["NoSchedule", "PreferNoSchedule", "NoExecute"].contains(&t.effect.as_str()) {
            errs.push(FieldError::unsupported(
                &format!("{path}.tolerations[{i}].effect"),
                &t.effect,
                &["NoSchedule", "PreferNoSchedule", "NoExecute"],
            ));
        }
    }
}

/// `ValidateVolumes`: each volume named once with a valid label, and its source valid. Returns
/// the names of the volumes without errors, which is what a volumeMount may name. A volume whose
/// only source kubeloop does not model (decoding dropped it, and kubectl warned) is accepted
/// with no source, so those manifests keep applying as they did.
fn validate_volumes<'a>(volumes: &'a [Volume], path: &str, errs: &mut Vec<FieldError>) -> std::collections::BTreeSet<&'a str> {
    let mut names = std::collections::BTreeSet::new();
    for (i, v) in volumes.iter().enumerate() {
        let at = format!("{path}.volumes[{i}]");
        let mut el = Vec::new();
        let mut sources = 0;
        if let Some(cm) = &v.config_map {
            sources += 1;
            let at = format!("{at}.configMap");
            if cm.name.is_empty() {
                el.push(FieldError::required(&format!("{at}.name")));
            }
            validate_projection(cm.default_mode, &cm.items, &at, &mut el);
        }
        if let Some(secret) = &v.secret {
            sources += 1;
            let at = format!("{at}.secret");
            if sources > 1 {
                el.push(FieldError::forbidden(&at, "may not specify more than 1 volume type"));
            } else {
                if secret.secret_name.is_empty() {
                    el.push(FieldError::required(&format!("{at}.secretName")));
                }
                validate_projection(secret.default_mode, &secret.items, &at, &mut el);
            }
        }
        if v.empty_dir.is_some() {
            sources += 1;
            if sources > 1 {
                el.push(FieldError::forbidden(&format!("{at}.emptyDir"), "may not specify more than 1 volume type"));
            }
        }
        if let Some(host) = &v.host_path {
            sources += 1;
            let at = format!("{at}.hostPath");
            if sources > 1 {
                el.push(FieldError::forbidden(&at, "may not specify more than 1 volume type"));
            } else {
                validate_host_path(host, &at, &mut el);
            }
        }
        if let Some(claim) = &v.persistent_volume_claim {
            sources += 1;
            let at = format!("{at}.persistentVolumeClaim");
            if sources > 1 {
                el.push(FieldError::forbidden(&at, "may not specify more than 1 volume type"));
            } else if claim.claim_name.is_empty() {
                el.push(FieldError::required(&format!("{at}.claimName")));
            }
        }
        if v.name.is_empty() {
            el.push(FieldError::required(&format!("{at}.name")));
        } else if !is_dns1123_label(&v.name) {
            el.push(FieldError::invalid(&format!("{at}.name"), format!("{:?}", v.name), DNS1123_LABEL_MSG));
        }
        if names.contains(v.name.as_str()) {
            el.push(FieldError { field: format!("{at}.name"), detail: format!("Duplicate value: {:?}", v.name) });
        }
        if el.is_empty() {
            names.insert(v.name.as_str());
        }
        errs.extend(el);
    }
    names
}

/// `fileModeErrorMsg`, for `defaultMode` and `items[].mode`.
const FILE_MODE_MSG: &str = "must be a number between 0 and 0777 (octal), both inclusive";

/// A configMap or secret volume's `defaultMode` and `items` (`validateKeyToPath`).
fn validate_projection(default_mode: Option<i32>, items: &[KeyToPath], at: &str, errs: &mut Vec<FieldError>) {
    if let Some(mode) = default_mode.filter(|m| !(0..=0o777).contains(m)) {
        errs.push(FieldError::invalid(&format!("{at}.defaultMode"), mode, FILE_MODE_MSG));
    }
    for (i, item) in items.iter().enumerate() {
        let at = format!("{at}.items[{i}]");
        if item.key.is_empty() {
            errs.push(FieldError::required(&format!("{at}.key")));
        }
        if item.path.is_empty() {
            errs.push(FieldError::required(&format!("{at}.path")));
        } else if item.path.starts_with('/') {
            errs.push(FieldError::invalid(&format!("{at}.path"), format!("{:?}", item.path), "must be a relative path"));
        } else if item.path.split('/').any(|p| p == "..") {
            errs.push(FieldError::invalid(&format!("{at}.path"), format!("{:?}", item.path), "must not contain '..'"));
        }
        if let Some(mode) = item.mode.filter(|m| !(0..=0o777).contains(m)) {
            errs.push(FieldError::invalid(&format!("{at}.mode"), mode, FILE_MODE_MSG));
        }
    }
}

/// `ValidateEnv` and `ValidateEnvFrom` for what kubeloop models: names, and one source each.
fn validate_env(c: &Container, at: &ContainerPath, errs: &mut Vec<FieldError>) {
    for (i, e) in c.env.iter().enumerate() {
        let path = format!("{at}.env[{i}]");
        if e.name.is_empty() {
            errs.push(FieldError::required(&format!("{path}.name")));
        }
        let Some(from) = &e.value_from else { continue };
        let path = format!("{path}.valueFrom");
        let refs = [("configMapKeyRef", &from.config_map_key_ref), ("secretKeyRef", &from.secret_key_ref)];
        let mut sources = 0;
        for (name, selector) in refs {
            let Some(selector) = selector else { continue };
            sources += 1;
            if selector.name.is_empty() {
                errs.push(FieldError::required(&format!("{path}.{name}.name")));
            }
            if selector.key.is_empty() {
                errs.push(FieldError::required(&format!("{path}.{name}.key")));
            } else {
                for why in config_key_errors(&selector.key) {
                    errs.push(FieldError::invalid(&format!("{path}.{name}.key"), format!("{:?}", selector.key), why));
                }
            }
        }
        // No source left means `fieldRef` or `resourceFieldRef`, which decoding dropped: not an error here.
        if !e.value.is_empty() && sources != 0 {
            errs.push(FieldError::invalid(&path, "\"\"", "may not be specified when `value` is not empty"));
        } else if sources > 1 {
            errs.push(FieldError::invalid(&path, "\"\"", "may not have more than one field specified at a time"));
        }
    }
    for (i, e) in c.env_from.iter().enumerate() {
        let path = format!("{at}.envFrom[{i}]");
        let refs = [("configMapRef", &e.config_map_ref), ("secretRef", &e.secret_ref)];
        let mut sources = 0;
        for (name, r) in refs {
            let Some(r) = r else { continue };
            sources += 1;
            if r.name.is_empty() {
                errs.push(FieldError::required(&format!("{path}.{name}.name")));
            } else if !is_dns1123_subdomain(&r.name) {
                errs.push(FieldError::invalid(&format!("{path}.{name}.name"), format!("{:?}", r.name), DNS1123_SUBDOMAIN_MSG));
            }
        }
        if sources == 0 {
            errs.push(FieldError::invalid(&path, "\"\"", "must specify one of: `configMapRef` or `secretRef`"));
        } else if sources > 1 {
            errs.push(FieldError::invalid(&path, "\"\"", "may not have more than one field specified at a time"));
        }
    }
}

/// `ValidateVolumeMounts`: each mount names a (valid) volume of the pod, at a path of its own.
fn validate_volume_mounts(c: &Container, at: &ContainerPath, volumes: &std::collections::BTreeSet<&str>, errs: &mut Vec<FieldError>) {
    let mut paths = std::collections::BTreeSet::new();
    for (i, m) in c.volume_mounts.iter().enumerate() {
        let path = format!("{at}.volumeMounts[{i}]");
        if m.name.is_empty() {
            errs.push(FieldError::required(&format!("{path}.name")));
        }
        if !volumes.contains(m.name.as_str()) {
            errs.push(FieldError { field: format!("{path}.name"), detail: format!("Not found: {:?}", m.name) });
        }
        if m.mount_path.is_empty() {
            errs.push(FieldError::required(&format!("{path}.mountPath")));
        }
        if !paths.insert(m.mount_path.as_str()) {
            errs.push(FieldError::invalid(&format!("{path}.mountPath"), format!("{:?}", m.mount_path), "must be unique"));
        }
        if m.sub_path.starts_with('/') {
            errs.push(FieldError::invalid(&format!("{path}.subPath"), format!("{:?}", m.sub_path), "must be a relative path"));
        } else if m.sub_path.split('/').any(|p| p == "..") {
            errs.push(FieldError::invalid(&format!("{path}.subPath"), format!("{:?}", m.sub_path), "must not contain '..'"));
        }
    }
}

/// `validateLivenessProbe`, `validateReadinessProbe`, `validateStartupProbe`.
fn validate_probes(c: &Container, at: &ContainerPath, errs: &mut Vec<FieldError>) {
    let probes = [("livenessProbe", &c.liveness_probe), ("readinessProbe", &c.readiness_probe), ("startupProbe", &c.startup_probe)];
    for (name, probe) in probes {
        let Some(p) = probe else { continue };
        let path = format!("{at}.{name}");
        validate_probe(p, &path, errs);
        if name != "readinessProbe" && p.success_threshold != 1 {
            errs.push(FieldError::invalid(&format!("{path}.successThreshold"), p.success_threshold, "must be 1"));
        }
        if let Some(g) = p.termination_grace_period_seconds.filter(|_| name == "readinessProbe") {
            errs.push(FieldError::invalid(&format!("{path}.terminationGracePeriodSeconds"), g, "must not be set for readinessProbes"));
        }
    }
}

/// `validateProbe`: exactly one handler, each valid, and no negative number.
fn validate_probe(p: &Probe, path: &str, errs: &mut Vec<FieldError>) {
    let mut handlers = 0;
    let mut handler = |present: bool, name: &str, errs: &mut Vec<FieldError>| {
        if !present {
            return false;
        }
        handlers += 1;
        if handlers > 1 {
            errs.push(FieldError::forbidden(&format!("{path}.{name}"), "may not specify more than 1 handler type"));
            return false;
        }
        true
    };
    if handler(p.exec.is_some(), "exec", errs) && p.exec.as_ref().is_some_and(|e| e.command.is_empty()) {
        errs.push(FieldError::required(&format!("{path}.exec.command")));
    }
    if handler(p.http_get.is_some(), "httpGet", errs) {
        if let Some(h) = &p.http_get {
            if h.path.is_empty() {
                errs.push(FieldError::required(&format!("{path}.httpGet.path")));
            }
            validate_port_num_or_name(&h.port, &format!("{path}.httpGet.port"), errs);
            if let Some(s) = h.scheme.as_deref().filter(|s| !["HTTP", "HTTPS"].contains(s)) {
                errs.push(FieldError::unsupported(&format!("{path}.httpGet.scheme"), s, &["HTTP", "HTTPS"]));
            }
        }
    }
    if handler(p.tcp_socket.is_some(), "tcpSocket", errs) {
        if let Some(t) = &p.tcp_socket {
            validate_port_num_or_name(&t.port, &format!("{path}.tcpSocket.port"), errs);
        }
    }
    if handler(p.grpc.is_some(), "grpc", errs) {
        if let Some(g) = &p.grpc {
            validate_port_num_or_name(&IntOrString::Int(g.port.into()), &format!("{path}.grpc.port"), errs);
        }
    }
    if handlers == 0 {
        errs.push(FieldError::required_why(path, "must specify a handler type"));
    }
    let numbers = [
        ("initialDelaySeconds", p.initial_delay_seconds),
        ("timeoutSeconds", p.timeout_seconds),
        ("periodSeconds", p.period_seconds),
        ("successThreshold", p.success_threshold),
        ("failureThreshold", p.failure_threshold),
    ];
    for (name, v) in numbers.into_iter().filter(|(_, v)| *v < 0) {
        errs.push(FieldError::invalid(&format!("{path}.{name}"), v, "must be greater than or equal to 0"));
    }
    if let Some(g) = p.termination_grace_period_seconds.filter(|g| *g <= 0) {
        errs.push(FieldError::invalid(&format!("{path}.terminationGracePeriodSeconds"), g, "must be greater than 0"));
    }
}

/// `validateHostPathVolumeSource`: a path without `..` steps, and a known type.
fn validate_host_path(host: &HostPathVolumeSource, at: &str, errs: &mut Vec<FieldError>) {
    const TYPES: [&str; 8] = ["", "BlockDevice", "CharDevice", "Directory", "DirectoryOrCreate", "File", "FileOrCreate", "Socket"];
    if host.path.is_empty() {
        errs.push(FieldError::required(&format!("{at}.path")));
    } else if host.path.split('/').any(|step| step == "..") {
        errs.push(FieldError::invalid(&format!("{at}.path"), format!("{:?}", host.path), "must not contain '..'"));
    }
    if let Some(t) = host.type_.as_deref().filter(|t| !TYPES.contains(t)) {
        errs.push(FieldError::unsupported(&format!("{at}.type"), t, &TYPES));
    }
}

/// `ValidatePortNumOrName`: 1–65535, or an IANA service name (`IsValidPortName`).
fn validate_port_num_or_name(port: &IntOrString, path: &str, errs: &mut Vec<FieldError>) {
    match port {
        IntOrString::Int(n) if !(1..=65535).contains(n) => {
            errs.push(FieldError::invalid(path, n, "must be between 1 and 65535, inclusive"));
        }
        IntOrString::Int(_) => {}
        IntOrString::String(s) if s.is_empty() => errs.push(FieldError::required(path)),
        IntOrString::String(s) => {
            for why in port_name_errors(s) {
                errs.push(FieldError::invalid(path, format!("{s:?}"), why));
            }
        }
    }
}

/// `IsValidPortName`'s messages, in its order.
fn port_name_errors(s: &str) -> Vec<&'static str> {
    let mut out = Vec::new();
    if s.len() > 15 {
        out.push("must be no more than 15 characters");
    }
    if !s.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-') {
        out.push("must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)");
    }
    if !s.bytes().any(|b| b.is_ascii_lowercase()) {
        out.push("must contain at least one letter (a-z)");
    }
    if s.contains("--") {
        out.push("must not contain consecutive hyphens");
    }
    if s.starts_with('-') || s.ends_with('-') {
        out.push("must not begin or end with a hyphen");
    }
    out
}

fn validate_deployment(d: &Deployment, errs: &mut Vec<FieldError>) {
    validate_replicas(d.spec.replicas, errs);
    validate_selector_and_template(&d.spec.selector, &d.spec.template, "deployment", errs);
    match d.spec.strategy.type_.as_deref() {
        Some("Recreate") => {
            if d.spec.strategy.rolling_update.is_some() {
                errs.push(FieldError::forbidden("spec.strategy.rollingUpdate", "may not be specified when strategy `type` is 'Recreate'"));
            }
        }
        Some("RollingUpdate") | None => validate_rolling_update(d, errs),
        Some(other) => errs.push(FieldError::unsupported("spec.strategy.type", other, &["Recreate", "RollingUpdate"])),
    }
    if let Some(limit) = d.spec.revision_history_limit.filter(|l| *l < 0) {
        errs.push(FieldError::invalid("spec.revisionHistoryLimit", limit, "must be greater than or equal to 0"));
    }
    if let Some(p) = d.spec.progress_deadline_seconds {
        if p <= d.spec.min_ready_seconds {
            errs.push(FieldError::invalid("spec.progressDeadlineSeconds", p, "must be greater than minReadySeconds"));
        }
    }
    if d.spec.min_ready_seconds < 0 {
        errs.push(FieldError::invalid("spec.minReadySeconds", d.spec.min_ready_seconds, "must be greater than or equal to 0"));
    }
}

fn validate_rolling_update(d: &Deployment, errs: &mut Vec<FieldError>) {
    let Some(ru) = &d.spec.strategy.rolling_update else { return };
    let mut values = [("maxUnavailable", &ru.max_unavailable), ("maxSurge", &ru.max_surge)].map(|(name, v)| {
        let field = format!("spec.strategy.rollingUpdate.{name}");
        int_or_percent(&field, v, name == "maxUnavailable", errs)
    });
    if let [Some(0), Some(0)] = &mut values {
        errs.push(FieldError::invalid("spec.strategy.rollingUpdate.maxUnavailable", 0, "may not be 0 when `maxSurge` is 0"));
    }
}

/// `ValidateHorizontalPodAutoscalerSpec`: a named target, 1 ≤ minReplicas ≤ maxReplicas, and
/// resource targets that say what to aim for.
fn validate_horizontal_pod_autoscaler(hpa: &HorizontalPodAutoscaler, errs: &mut Vec<FieldError>) {
    let spec = &hpa.spec;
    if let Some(min) = spec.min_replicas.filter(|m| *m < 1) {
        errs.push(FieldError::invalid("spec.minReplicas", min, "must be greater than or equal to 1"));
    }
    if spec.max_replicas < 1 {
        errs.push(FieldError::invalid("spec.maxReplicas", spec.max_replicas, "must be greater than 0"));
    }
    if spec.min_replicas.is_some_and(|min| spec.max_replicas < min) {
        errs.push(FieldError::invalid("spec.maxReplicas", spec.max_replicas, "must be greater than or equal to `minReplicas`"));
    }
    if spec.scale_target_ref.kind.is_empty() {
        errs.push(FieldError::required("spec.scaleTargetRef.kind"));
    }
    if spec.scale_target_ref.name.is_empty() {
        errs.push(FieldError::required("spec.scaleTargetRef.name"));
    }
    for (i, metric) in spec.metrics.iter().enumerate() {
        let Some(resource) = &metric.resource else { continue };
        let field = format!("spec.metrics[{i}].resource.target.averageUtilization");
        match resource.target.average_utilization {
            Some(u) if u < 1 => errs.push(FieldError::invalid(&field, u, "must be greater than 0")),
            Some(_) => {}
            None => errs.push(FieldError::required_why(&field, "must set either a target raw value or a target utilization")),
        }
    }
}

/// `ValidateReplicationControllerSpec`: a selector (a plain label map) the template's labels
/// satisfy, a template, and pods that always restart.
fn validate_replication_controller(rc: &ReplicationController, errs: &mut Vec<FieldError>) {
    if rc.spec.min_ready_seconds < 0 {
        errs.push(FieldError::invalid("spec.minReadySeconds", rc.spec.min_ready_seconds, "must be greater than or equal to 0"));
    }
    if rc.spec.selector.is_empty() {
        errs.push(FieldError::required("spec.selector"));
    }
    validate_replicas(rc.spec.replicas, errs);
    let Some(template) = &rc.spec.template else {
        errs.push(FieldError::required("spec.template"));
        return;
    };
    let labels = &template.metadata.labels;
    if !rc.spec.selector.is_empty() && !rc.spec.selector.iter().all(|(k, v)| labels.get(k) == Some(v)) {
        errs.push(FieldError::invalid(
            "spec.template.metadata.labels",
            go_map_literal(labels),
            "`selector` does not match template `labels`",
        ));
    }
    validate_pod_spec(&template.spec, "spec.template.spec", errs);
    if let Some(policy) = template.spec.restart_policy.as_deref().filter(|p| *p != "Always") {
        errs.push(FieldError::unsupported("spec.template.spec.restartPolicy", policy, &["Always"]));
    }
}

/// `ValidatePodDisruptionBudgetSpec`: one bound at most, each a non-negative number or a
/// percentage up to 100%, a known unhealthy-pod policy and well-formed selector operators.
fn validate_pod_disruption_budget(pdb: &PodDisruptionBudget, errs: &mut Vec<FieldError>) {
    let spec = &pdb.spec;
    if spec.min_available.is_some() && spec.max_unavailable.is_some() {
        // The API server prints the spec with Go's %#v, pointers and all.
        let pointer = |set: bool, ty: &str| if set { format!("(*{ty})(0xc000a14f60)") } else { format!("(*{ty})(nil)") };
        let value = format!(
            "policy.PodDisruptionBudgetSpec{{MinAvailable:{}, Selector:{}, MaxUnavailable:{}, UnhealthyPodEvictionPolicy:{}}}",
            pointer(true, "intstr.IntOrString"),
            pointer(spec.selector.is_some(), "v1.LabelSelector"),
            pointer(true, "intstr.IntOrString"),
            pointer(spec.unhealthy_pod_eviction_policy.is_some(), "policy.UnhealthyPodEvictionPolicyType"),
        );
        errs.push(FieldError::invalid("spec", value, "minAvailable and maxUnavailable cannot be both set"));
    }
    int_or_percent("spec.minAvailable", &spec.min_available, true, errs);
    int_or_percent("spec.maxUnavailable", &spec.max_unavailable, true, errs);
    if let Some(selector) = &spec.selector {
        for (i, req) in selector.match_expressions.iter().enumerate() {
            if !["In", "NotIn", "Exists", "DoesNotExist"].contains(&req.operator.as_str()) {
                let field = format!("spec.selector.matchExpressions[{i}].operator");
                errs.push(FieldError::invalid(&field, format!("{:?}", req.operator), "not a valid selector operator"));
            }
        }
    }
    if let Some(policy) = spec.unhealthy_pod_eviction_policy.as_deref() {
        if ![IF_HEALTHY_BUDGET, ALWAYS_ALLOW].contains(&policy) {
            errs.push(FieldError::unsupported("spec.unhealthyPodEvictionPolicy", policy, &[ALWAYS_ALLOW, IF_HEALTHY_BUDGET]));
        }
    }
}

/// `ValidateDaemonSetSpec` (after the pod template's own checks): minReadySeconds,
/// revisionHistoryLimit and the update strategy.
fn validate_daemon_set(ds: &DaemonSet, errs: &mut Vec<FieldError>) {
    validate_selector_and_template(&ds.spec.selector, &ds.spec.template, "daemonset", errs);
    if ds.spec.min_ready_seconds < 0 {
        errs.push(FieldError::invalid("spec.minReadySeconds", ds.spec.min_ready_seconds, "must be greater than or equal to 0"));
    }
    let strategy = &ds.spec.update_strategy;
    match strategy.type_.as_deref() {
        Some("OnDelete") => {}
        Some("RollingUpdate") | None => match &strategy.rolling_update {
            None => errs.push(FieldError::required("spec.updateStrategy.rollingUpdate")),
            Some(ru) => validate_rolling_update_daemon_set(ru, errs),
        },
        Some(other) => errs.push(FieldError::unsupported("spec.updateStrategy", other, &["RollingUpdate", "OnDelete"])),
    }
    if let Some(limit) = ds.spec.revision_history_limit.filter(|l| *l < 0) {
        errs.push(FieldError::invalid("spec.revisionHistoryLimit", limit, "must be greater than or equal to 0"));
    }
}

/// `ValidateStatefulSetSpec`: the pod management policy, the update strategy (a partition only
/// with RollingUpdate, never negative), the counts, and the selector and template the workloads
/// share.
fn validate_stateful_set(sts: &StatefulSet, errs: &mut Vec<FieldError>) {
    let spec = &sts.spec;
    match spec.pod_management_policy.as_deref() {
        None | Some("") => errs.push(FieldError::required("spec.podManagementPolicy")),
        Some("OrderedReady" | "Parallel") => {}
        Some(other) => {
            errs.push(FieldError::invalid("spec.podManagementPolicy", format!("{other:?}"), "must be 'OrderedReady' or 'Parallel'"))
        }
    }
    let strategy = &spec.update_strategy;
    match strategy.type_.as_deref() {
        None | Some("") => errs.push(FieldError::required("spec.updateStrategy")),
        Some("OnDelete") if strategy.rolling_update.is_some() => {
            let partition = strategy.rolling_update.as_ref().and_then(|r| r.partition).unwrap_or(0);
            let value =
                format!("apps.RollingUpdateStatefulSetStrategy{{Partition:{partition}, MaxUnavailable:(*intstr.IntOrString)(nil)}}");
            errs.push(FieldError::invalid("spec.updateStrategy.rollingUpdate", value, "only allowed for updateStrategy 'RollingUpdate'"));
        }
        Some("OnDelete" | "RollingUpdate") => {}
        Some(other) => {
            let value = format!("apps.StatefulSetUpdateStrategy{{Type:{other:?}}}");
            errs.push(FieldError::invalid("spec.updateStrategy", value, "must be 'RollingUpdate' or 'OnDelete'"));
        }
    }
    if let Some(p) = strategy.rolling_update.as_ref().and_then(|r| r.partition).filter(|p| *p < 0) {
        errs.push(FieldError::invalid("spec.updateStrategy.rollingUpdate.partition", p, "must be greater than or equal to 0"));
    }
    if let Some(limit) = spec.revision_history_limit.filter(|l| *l < 0) {
        errs.push(FieldError::invalid("spec.revisionHistoryLimit", limit, "must be greater than or equal to 0"));
    }
    validate_replicas(spec.replicas, errs);
    if spec.min_ready_seconds < 0 {
        errs.push(FieldError::invalid("spec.minReadySeconds", spec.min_ready_seconds, "must be greater than or equal to 0"));
    }
    validate_stateful_set_template(&spec.selector, &spec.template, errs);
    for (i, claim) in spec.volume_claim_templates.iter().enumerate() {
        super::storage::validate_claim_spec(&claim.spec, &format!("spec.volumeClaimTemplates[{i}].spec"), errs);
    }
}

/// `ValidatePodTemplateSpecForStatefulSet` and what follows it: the selector must match the
/// template's labels, pods always restart and have no deadline. Upstream leaves the template's
/// pod spec itself unchecked (its volume mounts may name `volumeClaimTemplates`, which are not
/// volumes of the template), so the pod's own validation speaks when the controller creates it.
fn validate_stateful_set_template(selector: &LabelSelector, template: &PodTemplateSpec, errs: &mut Vec<FieldError>) {
    validate_selector_against_template(selector, template, "statefulset", errs);
    if let Some(policy) = template.spec.restart_policy.as_deref().filter(|p| *p != "Always") {
        errs.push(FieldError::unsupported("spec.template.spec.restartPolicy", policy, &["Always"]));
    }
}

/// `ValidateRollingUpdateDaemonSet`: both values non-negative and at most 100%, and exactly one
/// of them non-zero (a DaemonSet either surges or goes unavailable, never both).
fn validate_rolling_update_daemon_set(ru: &RollingUpdateDaemonSet, errs: &mut Vec<FieldError>) {
    const AT: &str = "spec.updateStrategy.rollingUpdate";
    let unavailable = int_or_percent(&format!("{AT}.maxUnavailable"), &ru.max_unavailable, true, errs);
    let surge = int_or_percent(&format!("{AT}.maxSurge"), &ru.max_surge, true, errs);
    match (unavailable, surge) {
        (Some(u), Some(s)) if u != 0 && s != 0 => {
            let value = match &ru.max_surge {
                Some(IntOrString::String(text)) => format!("{text:?}"),
                _ => s.to_string(),
            };
            errs.push(FieldError::invalid(&format!("{AT}.maxSurge"), value, "may not be set when maxUnavailable is non-zero"));
        }
        (Some(0), Some(0)) => errs.push(FieldError::required_why(&format!("{AT}.maxUnavailable"), "cannot be 0 when maxSurge is 0")),
        _ => {}
    }
}

/// `ValidatePositiveIntOrPercent` (and, with `at_most_100`, `IsNotMoreThan100Percent`): the
/// value as a number (a percentage without its sign), or `None` after pushing its error.
fn int_or_percent(field: &str, v: &Option<IntOrString>, at_most_100: bool, errs: &mut Vec<FieldError>) -> Option<i64> {
    match v {
        None => Some(0),
        Some(IntOrString::Int(n)) if *n < 0 => {
            errs.push(FieldError::invalid(field, n, "must be greater than or equal to 0"));
            None
        }
        Some(IntOrString::Int(n)) => Some(*n),
        Some(IntOrString::String(s)) => match s.strip_suffix('%').and_then(|n| n.parse::<i64>().ok()) {
            Some(p) if p < 0 => {
                errs.push(FieldError::invalid(field, format!("{s:?}"), "must be greater than or equal to 0"));
                None
            }
            Some(p) if p > 100 && at_most_100 => {
                errs.push(FieldError::invalid(field, format!("{s:?}"), "must not be greater than 100%"));
                None
            }
            Some(p) => Some(p),
            None => {
                errs.push(FieldError::invalid(field, format!("{s:?}"), "a valid percent string must be a numeric string followed by an ending '%' (e.g. '1%',  or '93%', regex used for validation is '[0-9]+%')"));
                None
            }
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn deployment(yaml: &str) -> Object {
        Object::from_json(yaml_serde::from_str(yaml).unwrap()).unwrap()
    }

    const GOOD: &str = "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec:\n  replicas: 3\n  selector: {matchLabels: {app: web}}\n  template:\n    metadata: {labels: {app: web}}\n    spec: {containers: [{name: nginx, image: nginx:1.14.2}]}\n";

    const DAEMON_SET: &str = "apiVersion: apps/v1\nkind: DaemonSet\nmetadata: {name: agent}\nspec:\n  selector: {matchLabels: {app: agent}}\n  template:\n    metadata: {labels: {app: agent}}\n    spec:\n      containers: [{name: a, image: busybox, volumeMounts: [{name: logs, mountPath: /var/log}]}]\n      volumes: [{name: logs, hostPath: {path: /var/log}}]\n";

    fn daemon_set(yaml: &str) -> Object {
        let mut o = deployment(yaml);
        if let Object::DaemonSet(ds) = &mut o {
            super::super::defaults::default_daemon_set(ds);
        }
        o
    }

    fn messages(o: &Object) -> Vec<String> {
        validate(o).iter().map(ToString::to_string).collect()
    }

    #[test]
    fn a_daemon_set_with_a_host_path_volume_is_valid_and_its_mistakes_get_the_real_messages() {
        assert_eq!(messages(&daemon_set(DAEMON_SET)), Vec::<String>::new());
        let bad_path = DAEMON_SET.replace("path: /var/log}", "path: /var/../etc, type: Folder}");
        assert_eq!(
            messages(&daemon_set(&bad_path)),
            [
                "spec.template.spec.volumes[0].hostPath.path: Invalid value: \"/var/../etc\": must not contain '..'",
                "spec.template.spec.volumes[0].hostPath.type: Unsupported value: \"Folder\": supported values: \"\", \"BlockDevice\", \"CharDevice\", \"Directory\", \"DirectoryOrCreate\", \"File\", \"FileOrCreate\", \"Socket\"",
                // A volume with errors is not one a mount may name, as upstream counts them.
                "spec.template.spec.containers[0].volumeMounts[0].name: Not found: \"logs\"",
            ]
        );
        let empty = DAEMON_SET.replace("selector: {matchLabels: {app: agent}}", "selector: {}");
        assert_eq!(
            messages(&daemon_set(&empty))[1],
            "spec.selector: Invalid value: v1.LabelSelector{MatchLabels:map[string]string(nil), MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: empty selector is invalid for daemonset"
        );
        let both = DAEMON_SET.replace("  template:", "  updateStrategy: {rollingUpdate: {maxSurge: 1}}\n  template:");
        assert_eq!(
            messages(&daemon_set(&both)),
            ["spec.updateStrategy.rollingUpdate.maxSurge: Invalid value: 1: may not be set when maxUnavailable is non-zero"]
        );
        let neither = DAEMON_SET.replace("  template:", "  updateStrategy: {rollingUpdate: {maxUnavailable: 0}}\n  template:");
        assert_eq!(
            messages(&daemon_set(&neither)),
            ["spec.updateStrategy.rollingUpdate.maxUnavailable: Required value: cannot be 0 when maxSurge is 0"]
        );
        let strategy = DAEMON_SET.replace("  template:", "  updateStrategy: {type: Recreate}\n  template:");
        assert_eq!(
            messages(&daemon_set(&strategy)),
            ["spec.updateStrategy: Unsupported value: \"Recreate\": supported values: \"RollingUpdate\", \"OnDelete\""]
        );
    }

    #[test]
    fn a_documentation_deployment_is_valid() {
        assert_eq!(validate(&deployment(GOOD)), vec![]);
    }

    #[test]
    fn negative_replicas_are_rejected_with_the_real_message() {
        let errs = validate(&deployment(&GOOD.replace("replicas: 3", "replicas: -1")));
        assert_eq!(errs[0].to_string(), "spec.replicas: Invalid value: -1: must be greater than or equal to 0");
    }

    #[test]
    fn an_uppercase_name_is_not_a_subdomain() {
        let errs = validate(&deployment(&GOOD.replace("name: web}", "name: Web}")));
        assert!(errs[0].to_string().starts_with("metadata.name: Invalid value: \"Web\": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character"));
    }

    #[test]
    fn a_selector_that_misses_the_template_labels_is_rejected() {
        let errs = validate(&deployment(&GOOD.replace("labels: {app: web}", "labels: {app: x}")));
        assert_eq!(
            errs[0].to_string(),
            "spec.template.metadata.labels: Invalid value: map[string]string{\"app\":\"x\"}: `selector` does not match template `labels`"
        );
    }

    #[test]
    fn max_surge_and_max_unavailable_cannot_both_be_zero() {
        let yaml = GOOD.replace("  replicas: 3\n", "  replicas: 3\n  strategy: {rollingUpdate: {maxSurge: 0, maxUnavailable: 0}}\n");
        let errs = validate(&deployment(&yaml));
        assert_eq!(errs[0].to_string(), "spec.strategy.rollingUpdate.maxUnavailable: Invalid value: 0: may not be 0 when `maxSurge` is 0");
    }

    #[test]
    fn only_an_empty_image_is_refused_and_whitespace_only_in_a_pod() {
        let errs = validate(&deployment(&GOOD.replace("image: nginx:1.14.2", "image: ''")));
        assert_eq!(errs[0].to_string(), "spec.template.spec.containers[0].image: Required value");
        assert_eq!(validate(&deployment(&GOOD.replace("image: nginx:1.14.2", "image: ' '"))), vec![], "a template may hold \" \"");
        assert_eq!(validate(&deployment(&GOOD.replace("image: nginx:1.14.2", "image: Nginx"))), vec![], "the kubelet judges the name");
        let pod = "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {containers: [{name: c, image: ' nginx'}]}\n";
        let errs = validate(&deployment(pod));
        assert_eq!(errs.len(), 1);
        assert_eq!(
            errs[0].to_string(),
            "spec.containers[0].image: Invalid value: \" nginx\": must not have leading or trailing whitespace"
        );
        assert_eq!(validate(&deployment(&pod.replace("' nginx'", "Nginx"))), vec![]);
    }

    fn probed(probe: &str) -> Vec<String> {
        let pod =
            format!("apiVersion: v1\nkind: Pod\nmetadata: {{name: p}}\nspec: {{containers: [{{name: c, image: busybox, {probe}}}]}}\n");
        let mut object = deployment(&pod);
        crate::api::defaults::default_object(&mut object);
        validate(&object).iter().map(ToString::to_string).collect()
    }

    #[test]
    fn a_probe_needs_exactly_one_handler_as_validate_handler_says() {
        assert_eq!(probed("livenessProbe: {exec: {command: [cat, /tmp/healthy]}}"), Vec::<String>::new());
        assert_eq!(
            probed("livenessProbe: {periodSeconds: 5}"),
            ["spec.containers[0].livenessProbe: Required value: must specify a handler type"]
        );
        assert_eq!(
            probed("readinessProbe: {exec: {command: [x]}, tcpSocket: {port: 80}}"),
            ["spec.containers[0].readinessProbe.tcpSocket: Forbidden: may not specify more than 1 handler type"]
        );
        assert_eq!(probed("startupProbe: {exec: {}}"), ["spec.containers[0].startupProbe.exec.command: Required value"]);
    }

    #[test]
    fn liveness_and_startup_probes_need_a_success_threshold_of_1() {
        assert_eq!(
            probed("livenessProbe: {tcpSocket: {port: 8080}, successThreshold: 2}"),
            ["spec.containers[0].livenessProbe.successThreshold: Invalid value: 2: must be 1"]
        );
        assert_eq!(probed("readinessProbe: {tcpSocket: {port: 8080}, successThreshold: 2}"), Vec::<String>::new());
        assert_eq!(
            probed("startupProbe: {grpc: {port: 0}, periodSeconds: -1}"),
            [
                "spec.containers[0].startupProbe.grpc.port: Invalid value: 0: must be between 1 and 65535, inclusive",
                "spec.containers[0].startupProbe.periodSeconds: Invalid value: -1: must be greater than or equal to 0",
            ]
        );
        assert_eq!(
            probed("readinessProbe: {httpGet: {port: Http, scheme: FTP}, terminationGracePeriodSeconds: 5}"),
            [
                "spec.containers[0].readinessProbe.httpGet.port: Invalid value: \"Http\": must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)",
                "spec.containers[0].readinessProbe.httpGet.scheme: Unsupported value: \"FTP\": supported values: \"HTTP\", \"HTTPS\"",
                "spec.containers[0].readinessProbe.terminationGracePeriodSeconds: Invalid value: 5: must not be set for readinessProbes",
            ]
        );
    }
}
