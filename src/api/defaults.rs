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
        Object::Namespace(ns) => {
            // SetDefaults_Namespace: every namespace is labelled with its own name.
            let name = ns.metadata.name.to_string();
            ns.metadata.labels.insert("kubernetes.io/metadata.name".into(), name);
        }
        Object::Secret(secret) => default_secret(secret),
        Object::ReplicaSet(rs) => {
            rs.spec.replicas.get_or_insert(1);
            default_template(&mut rs.spec.template);
        }
        Object::Service(svc) => super::service::default_service(svc),
        Object::ReplicationController(rc) => default_replication_controller(rc),
        Object::HorizontalPodAutoscaler(hpa) => default_horizontal_pod_autoscaler(hpa),
        Object::CronJob(cj) => super::cronjob::default_cron_job(cj),
        Object::Job(job) => super::job::default_job(job),
        Object::DaemonSet(ds) => default_daemon_set(ds),
        Object::StatefulSet(sts) => default_stateful_set(sts),
        Object::PersistentVolumeClaim(_) | Object::PersistentVolume(_) | Object::StorageClass(_) => super::storage::default_storage(object),
        // Kinds without defaults of their own.
        _ => {}
    }
}

/// A Secret's type defaults to Opaque, and the write-only `stringData` is merged into `data`
/// (its keys win), as the secret strategy does before storing.
fn default_secret(secret: &mut Secret) {
    if secret.type_.is_empty() {
        secret.type_ = "Opaque".into();
    }
    for (k, v) in std::mem::take(&mut secret.string_data) {
        secret.data.insert(k, Bytes::encode(v.as_bytes()));
    }
}

/// `SetDefaults_ReplicationController`: an empty selector, and empty labels, become the
/// template's labels; one replica unless told otherwise.
fn default_replication_controller(rc: &mut ReplicationController) {
    if let Some(template) = rc.spec.template.as_mut() {
        let labels = &template.metadata.labels;
        if rc.spec.selector.is_empty() {
            rc.spec.selector = (**labels).clone();
        }
        if rc.metadata.labels.is_empty() {
            rc.metadata.labels = labels.clone();
        }
        default_template(template);
    }
    rc.spec.replicas.get_or_insert(1);
}

/// `SetDefaults_HorizontalPodAutoscaler` (autoscaling/v2): at least one replica, CPU at 80% of
/// requests when no metric is named, and a `behavior` given in part completed with the rules
/// the controller would otherwise apply (absent, it stays absent: the controller's older rules
/// then apply, as upstream).
fn default_horizontal_pod_autoscaler(hpa: &mut HorizontalPodAutoscaler) {
    let spec = &mut hpa.spec;
    spec.min_replicas.get_or_insert(1);
    if spec.metrics.is_empty() {
        let target = MetricTarget { type_: "Utilization".into(), average_utilization: Some(DEFAULT_CPU_UTILIZATION) };
        spec.metrics.push(MetricSpec { type_: "Resource".into(), resource: Some(ResourceMetricSource { name: "cpu".into(), target }) });
    }
    if let Some(behavior) = spec.behavior.as_mut() {
        let up = ScalingRules {
            stabilization_window_seconds: Some(0),
            select_policy: Some("Max".into()),
            policies: vec![
                ScalingPolicy { type_: "Pods".into(), value: 4, period_seconds: 15 },
                ScalingPolicy { type_: "Percent".into(), value: 100, period_seconds: 15 },
            ],
        };
        let down = ScalingRules {
            stabilization_window_seconds: None,
            select_policy: Some("Max".into()),
            policies: vec![ScalingPolicy { type_: "Percent".into(), value: 100, period_seconds: 15 }],
        };
        behavior.scale_up = Some(complete_rules(behavior.scale_up.take(), up));
        behavior.scale_down = Some(complete_rules(behavior.scale_down.take(), down));
    }
}

/// `GenerateHPAScale{Up,Down}Rules`: each field given wins over the default.
fn complete_rules(given: Option<ScalingRules>, mut rules: ScalingRules) -> ScalingRules {
    let Some(given) = given else { return rules };
    if given.stabilization_window_seconds.is_some() {
        rules.stabilization_window_seconds = given.stabilization_window_seconds;
    }
    if given.select_policy.is_some() {
        rules.select_policy = given.select_policy;
    }
    if !given.policies.is_empty() {
        rules.policies = given.policies;
    }
    rules
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

/// `SetDefaults_DaemonSet`: RollingUpdate with maxUnavailable 1 and maxSurge 0, and ten
/// revisions of history.
pub fn default_daemon_set(ds: &mut DaemonSet) {
    let spec = &mut ds.spec;
    let strategy = spec.update_strategy.type_.get_or_insert_with(|| "RollingUpdate".into());
    if strategy == "RollingUpdate" {
        let ru = spec.update_strategy.rolling_update.get_or_insert_with(Default::default);
        ru.max_unavailable.get_or_insert(IntOrString::Int(1));
        ru.max_surge.get_or_insert(IntOrString::Int(0));
    }
    spec.revision_history_limit.get_or_insert(10);
    default_template(&mut spec.template);
}

/// `SetDefaults_StatefulSet`: OrderedReady pod management, RollingUpdate with partition 0 (a
/// RollingUpdate written without `rollingUpdate` gets one only when the type was also left
/// out, as upstream's), one replica and ten revisions of history.
pub fn default_stateful_set(sts: &mut StatefulSet) {
    let spec = &mut sts.spec;
    spec.pod_management_policy.get_or_insert_with(|| "OrderedReady".into());
    if spec.update_strategy.type_.is_none() {
        spec.update_strategy.type_ = Some("RollingUpdate".into());
        spec.update_strategy.rolling_update.get_or_insert_with(Default::default);
    }
    if spec.update_strategy.type_.as_deref() == Some("RollingUpdate") {
        if let Some(ru) = &mut spec.update_strategy.rolling_update {
            ru.partition.get_or_insert(0);
        }
    }
    spec.replicas.get_or_insert(1);
    spec.revision_history_limit.get_or_insert(10);
    default_template(&mut spec.template);
    // The claim templates get a claim's defaults, status included (`phase: Pending`).
    for claim in &mut spec.volume_claim_templates {
        claim.spec.volume_mode.get_or_insert_with(|| "Filesystem".into());
        claim.status.phase.get_or_insert_with(|| "Pending".into());
    }
}

/// A template's pod spec defaults, without copying a shared template that lacks none.
pub(super) fn default_template(template: &mut Shared<PodTemplateSpec>) {
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
    // `SetDefaults_HostPathVolumeSource`: no type is the empty type (mount without a check).
    for host in spec.volumes.iter_mut().filter_map(|v| v.host_path.as_mut()) {
        host.type_.get_or_insert_with(String::new);
    }
    for c in spec.containers.iter_mut() {
        c.image_pull_policy.get_or_insert_with(|| default_pull_policy(&c.image).into());
        for p in &mut c.ports {
            p.protocol.get_or_insert_with(|| "TCP".into());
        }
        for probe in [&mut c.liveness_probe, &mut c.readiness_probe, &mut c.startup_probe].into_iter().flatten() {
            default_probe(probe);
        }
    }
}

/// `SetDefaults_Probe`, `SetDefaults_HTTPGetAction`, `SetDefaults_GRPCAction`: Go's zero (absent
/// or an explicit 0) becomes the default, so `periodSeconds: 0` reads back as 10.
fn default_probe(p: &mut Probe) {
    for (field, default) in
        [(&mut p.timeout_seconds, 1), (&mut p.period_seconds, 10), (&mut p.success_threshold, 1), (&mut p.failure_threshold, 3)]
    {
        if *field == 0 {
            *field = default;
        }
    }
    if let Some(h) = &mut p.http_get {
        if h.path.is_empty() {
            h.path = "/".into();
        }
        h.scheme.get_or_insert_with(|| "HTTP".into());
    }
    if let Some(g) = &mut p.grpc {
        g.service.get_or_insert_with(String::new);
    }
}

/// Whether a probe lacks one of the defaults `default_probe` fills in.
fn probe_lacks_defaults(p: &Probe) -> bool {
    [p.timeout_seconds, p.period_seconds, p.success_threshold, p.failure_threshold].contains(&0)
        || p.http_get.as_ref().is_some_and(|h| h.path.is_empty() || h.scheme.is_none())
        || p.grpc.as_ref().is_some_and(|g| g.service.is_none())
}

/// Whether `default_pod_spec` would fill anything in.
fn lacks_defaults(spec: &PodSpec) -> bool {
    spec.restart_policy.is_none()
        || spec.termination_grace_period_seconds.is_none()
        || spec.scheduler_name.is_none()
        || spec.volumes.iter().any(|v| v.host_path.as_ref().is_some_and(|h| h.type_.is_none()))
        || spec.containers.iter().any(|c| {
            c.image_pull_policy.is_none()
                || c.ports.iter().any(|p| p.protocol.is_none())
                || [&c.liveness_probe, &c.readiness_probe, &c.startup_probe].into_iter().flatten().any(probe_lacks_defaults)
        })
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

    #[test]
    fn probe_defaults_follow_set_defaults_probe() {
        let probe = Probe { http_get: Some(HttpGetAction { port: IntOrString::Int(8080), ..Default::default() }), ..Default::default() };
        let container = Container { name: "c".into(), image: "nginx".into(), liveness_probe: Some(probe), ..Default::default() };
        let mut spec: Shared<PodSpec> = PodSpec { containers: vec![container].into(), ..Default::default() }.into();
        default_pod_spec(&mut spec);
        let p = spec.containers[0].liveness_probe.clone().unwrap();
        assert_eq!(
            (p.initial_delay_seconds, p.timeout_seconds, p.period_seconds, p.success_threshold, p.failure_threshold),
            (0, 1, 10, 1, 3)
        );
        let h = p.http_get.unwrap();
        assert_eq!((h.path.as_str(), h.scheme.as_deref()), ("/", Some("HTTP")));
        assert!(!lacks_defaults(&spec));
    }
}
