//! Defaulting and admission: what the API server fills in before it stores an object.
//!
//! Mirrors pkg/apis/apps/v1/defaults.go, pkg/apis/core/v1/defaults.go and the
//! DefaultTolerationSeconds admission plugin, so `-o yaml` of a stored object shows the same
//! fields a real cluster would add.

use crate::model::*;

/// `DefaultTolerationSeconds` admission: 300 s for the not-ready and unreachable taints.
pub const DEFAULT_TOLERATION_SECONDS: i64 = 300;
pub const TAINT_NOT_READY: &str = "node.kubernetes.io/not-ready";
pub const TAINT_UNREACHABLE: &str = "node.kubernetes.io/unreachable";
pub const DEFAULT_TERMINATION_GRACE_SECONDS: i64 = 30;

pub fn default_object(object: &mut Object) {
    match object {
        Object::Pod(pod) => {
            default_pod_spec(&mut pod.spec);
            admit_default_tolerations(&mut pod.spec);
        }
        Object::Deployment(d) => default_deployment(d),
        Object::ReplicaSet(rs) => {
            rs.spec.replicas.get_or_insert(1);
            default_template(&mut rs.spec.template);
        }
        Object::Service(svc) => super::service::default_service(svc),
        // Kinds without defaults of their own.
        _ => {}
    }
}

pub fn default_deployment(d: &mut Deployment) {
    let spec = &mut d.spec;
    spec.replicas.get_or_insert(1);
    let strategy = spec.strategy.type_.get_or_insert_with(|| "RollingUpdate".into());
    if strategy == "RollingUpdate" {
        let ru = spec.strategy.rolling_update.get_or_insert_with(Default::default);
        ru.max_unavailable.get_or_insert(IntOrString::String("25%".into()));
        ru.max_surge.get_or_insert(IntOrString::String("25%".into()));
    }
    spec.revision_history_limit.get_or_insert(10);
    spec.progress_deadline_seconds.get_or_insert(600);
    default_template(&mut spec.template);
}

/// A template's pod spec defaults, without copying a shared template that lacks none.
fn default_template(template: &mut Shared<PodTemplateSpec>) {
    if lacks_defaults(&template.spec) {
        default_pod_spec(&mut template.spec);
    }
}

/// Fills in the pod spec's defaults. A spec shared with other versions is copied only when a
/// default is missing: every update is defaulted again, and almost always nothing is missing.
pub fn default_pod_spec(spec: &mut Shared<PodSpec>) {
    if !lacks_defaults(spec) {
        return;
    }
    let spec: &mut PodSpec = spec;
    spec.restart_policy.get_or_insert_with(|| "Always".into());
    spec.termination_grace_period_seconds.get_or_insert(DEFAULT_TERMINATION_GRACE_SECONDS);
    spec.scheduler_name.get_or_insert_with(|| "default-scheduler".into());
    for c in spec.containers.iter_mut() {
        c.image_pull_policy.get_or_insert_with(|| default_pull_policy(&c.image).into());
        for p in &mut c.ports {
            p.protocol.get_or_insert_with(|| "TCP".into());
        }
    }
}

/// Whether `default_pod_spec` would fill anything in.
fn lacks_defaults(spec: &PodSpec) -> bool {
    spec.restart_policy.is_none()
        || spec.termination_grace_period_seconds.is_none()
        || spec.scheduler_name.is_none()
        || spec.containers.iter().any(|c| c.image_pull_policy.is_none() || c.ports.iter().any(|p| p.protocol.is_none()))
}

/// `Always` for `:latest` or an untagged image, else `IfNotPresent`.
pub fn default_pull_policy(image: &str) -> &'static str {
    // Upstream reads the tag with the kubelet's parser and ignores its error: a name that does not
    // parse has no tag, so it is not `latest`.
    if crate::model::image_ref::invalid_reference(image).is_some() {
        return "IfNotPresent";
    }
    let last = image.rsplit('/').next().unwrap_or(image);
    let tag = last.split_once('@').map(|_| "digest").or_else(|| last.split_once(':').map(|(_, t)| t));
    match tag {
        None | Some("latest") => "Always",
        _ => "IfNotPresent",
    }
}

fn admit_default_tolerations(spec: &mut Shared<PodSpec>) {
    for key in [TAINT_NOT_READY, TAINT_UNREACHABLE] {
        let covered =
            spec.tolerations.iter().any(|t| (t.key == key || t.key.is_empty()) && (t.effect == "NoExecute" || t.effect.is_empty()));
        if !covered {
            spec.tolerations.push(Toleration {
                key: key.into(),
                operator: Some("Exists".into()),
                effect: "NoExecute".into(),
                toleration_seconds: Some(DEFAULT_TOLERATION_SECONDS),
                value: String::new(),
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deployment_defaults_match_apps_v1() {
        let mut d = Deployment::default();
        default_deployment(&mut d);
        assert_eq!(d.spec.replicas, Some(1));
        assert_eq!(d.spec.strategy.type_.as_deref(), Some("RollingUpdate"));
        let ru = d.spec.strategy.rolling_update.unwrap();
        assert_eq!(ru.max_surge, Some(IntOrString::String("25%".into())));
        assert_eq!(ru.max_unavailable, Some(IntOrString::String("25%".into())));
        assert_eq!(d.spec.revision_history_limit, Some(10));
        assert_eq!(d.spec.progress_deadline_seconds, Some(600));
    }

    #[test]
    fn default_toleration_seconds_admission_adds_300s_no_execute_tolerations() {
        let mut pod = Object::Pod(Pod::default());
        default_object(&mut pod);
        let tolerations = &pod.as_pod().unwrap().spec.tolerations;
        assert_eq!(tolerations.len(), 2);
        assert!(tolerations.iter().all(|t| t.effect == "NoExecute" && t.toleration_seconds == Some(300)));
        assert_eq!(tolerations[1].key, TAINT_UNREACHABLE);
    }

    #[test]
    fn pull_policy_depends_on_the_tag() {
        assert_eq!(default_pull_policy("nginx"), "Always");
        assert_eq!(default_pull_policy("Nginx"), "IfNotPresent", "a name that does not parse has no tag");
        assert_eq!(default_pull_policy("nginx:latest"), "Always");
        assert_eq!(default_pull_policy("nginx:1.14.2"), "IfNotPresent");
        assert_eq!(default_pull_policy("registry:5000/nginx"), "Always");
    }

    #[test]
    fn a_defaulted_spec_is_left_shared_and_a_missing_default_unshares_it() {
        let mut pod = Object::Pod(Pod::default());
        default_object(&mut pod);
        let Object::Pod(first) = &pod else { unreachable!() };
        let mut again = Object::Pod(first.clone());
        default_object(&mut again);
        let Object::Pod(second) = &again else { unreachable!() };
        assert!(Shared::ptr_eq(&first.spec, &second.spec));
        let mut bare = Object::Pod(Pod { spec: first.spec.clone(), ..Default::default() });
        if let Object::Pod(p) = &mut bare {
            p.spec.restart_policy = None;
        }
        default_object(&mut bare);
        assert_eq!(bare.as_pod().map(|p| p.spec.restart_policy.as_deref()), Some(Some("Always")));
        assert_eq!(bare.as_pod().map(|p| *p.spec == *first.spec), Some(true));
    }
}
