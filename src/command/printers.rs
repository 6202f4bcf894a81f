//! What `kubectl get` prints for each kind: its columns, and each cell computed exactly as the
//! API server's table convertor computes it (pkg/printers/internalversion/printers.go).
//!
//! Every function here is pure: objects and the current simulated time in, strings out. STATUS
//! of a pod is the best-known example of why this matters: it is not the phase, but a reason
//! picked from container states and the deletion timestamp, in a fixed order.

use crate::model::*;
use serde_json::Value;

/// The age of a timestamp as kubectl shows it (`translateTimestampSince`).
pub fn age(ts: Option<Time>, now: Time) -> String {
    match ts {
        Some(t) => human_duration(now.since(t)),
        None => "<unknown>".into(),
    }
}

/// The columns of `kubectl get` for a kind, each with its priority as the API server's Table
/// gives it: 0 always printed, 1 only with `-o wide`. The one list of columns: the console's
/// `headers` and the Table that `kubeloop serve` answers for `as=Table` both read it.
pub fn columns(kind: Kind) -> Vec<(&'static str, u8)> {
    let (base, extra): (&[&str], &[&str]) = match kind {
        Kind::Pod => (&["NAME", "READY", "STATUS", "RESTARTS", "AGE"], &["IP", "NODE", "NOMINATED NODE", "READINESS GATES"]),
        Kind::Node => (
            &["NAME", "STATUS", "ROLES", "AGE", "VERSION"],
            &["INTERNAL-IP", "EXTERNAL-IP", "OS-IMAGE", "KERNEL-VERSION", "CONTAINER-RUNTIME"],
        ),
        Kind::Deployment => (&["NAME", "READY", "UP-TO-DATE", "AVAILABLE", "AGE"], &["CONTAINERS", "IMAGES", "SELECTOR"]),
        Kind::ReplicaSet => (&["NAME", "DESIRED", "CURRENT", "READY", "AGE"], &["CONTAINERS", "IMAGES", "SELECTOR"]),
        // printEvent: the wide columns sit between the others, so each has its own priority.
        Kind::Event => {
            return [
                ("LAST SEEN", 0),
                ("TYPE", 0),
                ("REASON", 0),
                ("OBJECT", 0),
                ("SUBOBJECT", 1),
                ("SOURCE", 1),
                ("MESSAGE", 0),
                ("FIRST SEEN", 1),
                ("COUNT", 1),
                ("NAME", 1),
            ]
            .to_vec()
        }
        Kind::Lease => (&["NAME", "HOLDER", "AGE"], &[]),
        Kind::Namespace => (&["NAME", "STATUS", "AGE"], &[]),
        Kind::ConfigMap => (&["NAME", "DATA", "AGE"], &[]),
        Kind::Secret => (&["NAME", "TYPE", "DATA", "AGE"], &[]),
        Kind::Service => (&["NAME", "TYPE", "CLUSTER-IP", "EXTERNAL-IP", "PORT(S)", "AGE"], &["SELECTOR"]),
        Kind::EndpointSlice => (&["NAME", "ADDRESSTYPE", "PORTS", "ENDPOINTS", "AGE"], &[]),
        Kind::Endpoints => (&["NAME", "ENDPOINTS", "AGE"], &[]),
        Kind::ReplicationController => (&["NAME", "DESIRED", "CURRENT", "READY", "AGE"], &["CONTAINERS", "IMAGES", "SELECTOR"]),
        Kind::HorizontalPodAutoscaler => (&["NAME", "REFERENCE", "TARGETS", "MINPODS", "MAXPODS", "REPLICAS", "AGE"], &[]),
        Kind::PodDisruptionBudget => (&["NAME", "MIN AVAILABLE", "MAX UNAVAILABLE", "ALLOWED DISRUPTIONS", "AGE"], &[]),
        Kind::Job => (&["NAME", "STATUS", "COMPLETIONS", "DURATION", "AGE"], &["CONTAINERS", "IMAGES", "SELECTOR"]),
        Kind::CronJob => {
            (&["NAME", "SCHEDULE", "TIMEZONE", "SUSPEND", "ACTIVE", "LAST SCHEDULE", "AGE"], &["CONTAINERS", "IMAGES", "SELECTOR"])
        }
        Kind::DaemonSet => (
            &["NAME", "DESIRED", "CURRENT", "READY", "UP-TO-DATE", "AVAILABLE", "NODE SELECTOR", "AGE"],
            &["CONTAINERS", "IMAGES", "SELECTOR"],
        ),
        Kind::StatefulSet => (&["NAME", "READY", "AGE"], &["CONTAINERS", "IMAGES"]),
        Kind::ControllerRevision => (&["NAME", "CONTROLLER", "REVISION", "AGE"], &[]),
        Kind::PersistentVolumeClaim => {
            (&["NAME", "STATUS", "VOLUME", "CAPACITY", "ACCESS MODES", "STORAGECLASS", "VOLUMEATTRIBUTESCLASS", "AGE"], &["VOLUMEMODE"])
        }
        Kind::PersistentVolume => (
            &[
                "NAME",
                "CAPACITY",
                "ACCESS MODES",
                "RECLAIM POLICY",
                "STATUS",
                "CLAIM",
                "STORAGECLASS",
                "VOLUMEATTRIBUTESCLASS",
                "REASON",
                "AGE",
            ],
            &["VOLUMEMODE"],
        ),
        Kind::StorageClass => (&["NAME", "PROVISIONER", "RECLAIMPOLICY", "VOLUMEBINDINGMODE", "ALLOWVOLUMEEXPANSION", "AGE"], &[]),
        // The table apiextensions-apiserver's own printer gives definitions.
        Kind::CustomResourceDefinition => (&["NAME", "CREATED AT"], &[]),
        // A custom resource without printer columns of its own; one with them is printed from its
        // definition (`api::crd::Definition::columns`).
        Kind::CustomObject => (&["NAME", "AGE"], &[]),
    };
    base.iter().map(|h| (*h, 0)).chain(extra.iter().map(|h| (*h, 1))).collect()
}

/// Column headers of `kubectl get` for a kind: the priority-0 columns, and with `-o wide` all.
pub fn headers(kind: Kind, wide: bool) -> Vec<&'static str> {
    columns(kind).into_iter().filter(|(_, priority)| wide || *priority == 0).map(|(name, _)| name).collect()
}

/// A row's cells at a priority: the wide row with the cells of hidden columns left out. What
/// kubectl does with a server's Table, so the console and a real kubectl print the same cells.
pub fn row_for(object: &Object, now: Time, wide: bool) -> Vec<String> {
    let columns = columns(object.kind());
    row(object, now, true).into_iter().zip(columns).filter(|(_, (_, priority))| wide || *priority == 0).map(|(cell, _)| cell).collect()
}

/// The cells of one row of `kubectl get` for any object.
pub fn row(object: &Object, now: Time, wide: bool) -> Vec<String> {
    match object {
        Object::Pod(p) => pod_row(p, now, wide),
        Object::Node(n) => node_row(n, now, wide),
        Object::Deployment(d) => deployment_row(d, now, wide),
        Object::ReplicaSet(rs) => replica_set_row(rs, now, wide),
        Object::Event(e) => event_row(e, now, wide),
        Object::Lease(l) => {
            vec![l.metadata.name.to_string(), l.spec.holder_identity.clone().unwrap_or_default(), age(l.metadata.creation_timestamp, now)]
        }
        Object::Namespace(ns) => vec![ns.metadata.name.to_string(), ns.phase().to_string(), age(ns.metadata.creation_timestamp, now)],
        Object::ConfigMap(cm) => vec![cm.metadata.name.to_string(), cm.len().to_string(), age(cm.metadata.creation_timestamp, now)],
        Object::Secret(s) => {
            vec![s.metadata.name.to_string(), s.type_.clone(), s.data.len().to_string(), age(s.metadata.creation_timestamp, now)]
        }
        Object::Service(svc) => service_row(svc, now, wide),
        Object::EndpointSlice(slice) => vec![
            slice.metadata.name.to_string(),
            slice.address_type.clone(),
            endpoint_slice_ports(&slice.ports),
            endpoint_slice_addresses(&slice.endpoints),
            age(slice.metadata.creation_timestamp, now),
        ],
        Object::Endpoints(ep) => vec![ep.metadata.name.to_string(), endpoints_list(ep, None), age(ep.metadata.creation_timestamp, now)],
        Object::Job(job) => job_row(job, now, wide),
        Object::DaemonSet(ds) => daemon_set_row(ds, now, wide),
        Object::StatefulSet(sts) => stateful_set_row(sts, now, wide),
        Object::ControllerRevision(cr) => controller_revision_row(cr, now),
        Object::PersistentVolumeClaim(pvc) => persistent_volume_claim_row(pvc, now, wide),
        Object::PersistentVolume(pv) => persistent_volume_row(pv, now, wide),
        Object::StorageClass(sc) => storage_class_row(sc, now),
        Object::CustomResourceDefinition(crd) => {
            vec![crd.metadata.name.to_string(), crd.metadata.creation_timestamp.map(|t| t.rfc3339()).unwrap_or_default()]
        }
        Object::CustomObject(o) => vec![o.metadata.name.to_string(), age(o.metadata.creation_timestamp, now)],
        Object::PodDisruptionBudget(pdb) => pod_disruption_budget_row(pdb, now),
        Object::HorizontalPodAutoscaler(hpa) => horizontal_pod_autoscaler_row(hpa, now),
        Object::CronJob(cj) => cron_job_row(cj, now, wide),
        // printReplicationController: the same cells as a ReplicaSet's.
        Object::ReplicationController(rc) => replica_set_row(&rc.as_replica_set(), now, wide),
    }
}

/// `printHorizontalPodAutoscaler`: the target as `Kind/name`, each metric as `cpu: current/target`.
fn horizontal_pod_autoscaler_row(hpa: &HorizontalPodAutoscaler, now: Time) -> Vec<String> {
    let spec = &hpa.spec;
    vec![
        hpa.metadata.name.to_string(),
        format!("{}/{}", spec.scale_target_ref.kind, spec.scale_target_ref.name),
        hpa_targets(hpa),
        spec.min_replicas.map_or_else(|| "<unset>".to_string(), |m| m.to_string()),
        spec.max_replicas.to_string(),
        hpa.status.current_replicas.to_string(),
        age(hpa.metadata.creation_timestamp, now),
    ]
}

/// `formatHPAMetrics`: `<unknown>` until the controller has measured.
pub fn hpa_targets(hpa: &HorizontalPodAutoscaler) -> String {
    if hpa.spec.metrics.is_empty() {
        return "<none>".into();
    }
    let cells: Vec<String> = hpa
        .spec
        .metrics
        .iter()
        .enumerate()
        .map(|(i, metric)| match &metric.resource {
            Some(resource) => {
                let current =
                    hpa.status.current_metrics.get(i).and_then(|m| m.resource.as_ref()).and_then(|r| r.current.average_utilization);
                let current = current.map_or_else(|| "<unknown>".to_string(), |u| format!("{u}%"));
                let target = resource.target.average_utilization.map_or_else(|| "<auto>".to_string(), |u| format!("{u}%"));
                format!("{}: {current}/{target}", resource.name)
            }
            None => "<unknown>/<unknown>".to_string(),
        })
        .collect();
    cells.join(", ")
}

/// `printPodDisruptionBudget`: the budget as written (`N/A` for the bound not set) and the
/// evictions its status allows now.
fn pod_disruption_budget_row(pdb: &PodDisruptionBudget, now: Time) -> Vec<String> {
    let bound = |v: &Option<IntOrString>| v.as_ref().map_or_else(|| "N/A".to_string(), ToString::to_string);
    vec![
        pdb.metadata.name.to_string(),
        bound(&pdb.spec.min_available),
        bound(&pdb.spec.max_unavailable),
        pdb.status.disruptions_allowed.to_string(),
        age(pdb.metadata.creation_timestamp, now),
    ]
}

/// `printJob`: STATUS from the conditions in a fixed order, COMPLETIONS as succeeded of the
/// completions wanted (`N/1 of P` for a work queue Job), DURATION from the start to the
/// completion, or to now while it runs.
fn job_row(job: &Job, now: Time, wide: bool) -> Vec<String> {
    let mut cells = vec![
        job.metadata.name.to_string(),
        job_status(job).to_string(),
        job_completions(job),
        job_duration(&job.status, now),
        age(job.metadata.creation_timestamp, now),
    ];
    if wide {
        let (c, i) = containers_and_images(&job.spec.template.spec);
        cells.extend([c, i, job.spec.selector.as_ref().map_or_else(|| "<none>".into(), selector_string)]);
    }
    cells
}

/// `printCronJob`: the schedule as written, `<none>` for no time zone or no schedule yet, and
/// SUSPEND as `printBoolPtr` shows a pointer.
fn cron_job_row(cj: &CronJob, now: Time, wide: bool) -> Vec<String> {
    let spec = &cj.spec;
    let suspend = match spec.suspend {
        Some(true) => "True",
        Some(false) => "False",
        None => "<unset>",
    };
    let mut cells = vec![
        cj.metadata.name.to_string(),
        spec.schedule.clone(),
        spec.time_zone.clone().unwrap_or_else(|| "<none>".into()),
        suspend.to_string(),
        cj.status.active.len().to_string(),
        cj.status.last_schedule_time.map_or_else(|| "<none>".into(), |t| age(Some(t), now)),
        age(cj.metadata.creation_timestamp, now),
    ];
    if wide {
        let job = &spec.job_template.spec;
        let (c, i) = containers_and_images(&job.template.spec);
        cells.extend([c, i, job.selector.as_ref().map_or_else(|| "<none>".into(), selector_string)]);
    }
    cells
}

/// The STATUS column of a Job.
pub fn job_status(job: &Job) -> &'static str {
    let has = |t: &str| job.status.has_true(t);
    if has("Complete") {
        "Complete"
    } else if has("Failed") {
        "Failed"
    } else if job.metadata.is_deleting() {
        "Terminating"
    } else if has("Suspended") {
        "Suspended"
    } else if has("FailureTarget") {
        "FailureTarget"
    } else if has("SuccessCriteriaMet") {
        "SuccessCriteriaMet"
    } else {
        "Running"
    }
}

/// The COMPLETIONS column of a Job.
pub fn job_completions(job: &Job) -> String {
    let succeeded = job.status.succeeded;
    match (job.spec.completions, job.spec.parallelism.unwrap_or(0)) {
        (Some(c), _) => format!("{succeeded}/{c}"),
        (None, p) if p > 1 => format!("{succeeded}/1 of {p}"),
        (None, _) => format!("{succeeded}/1"),
    }
}

/// The DURATION column of a Job (empty before it starts).
pub fn job_duration(status: &JobStatus, now: Time) -> String {
    match (status.start_time, status.completion_time) {
        (None, _) => String::new(),
        (Some(start), None) => human_duration(now.since(start)),
        (Some(start), Some(end)) => human_duration(end.since(start)),
    }
}

/// `printService`: CLUSTER-IP is the first of `clusterIPs` (`None` when headless), EXTERNAL-IP
/// depends on the type, PORT(S) is `port[:nodePort]/protocol` per port.
fn service_row(svc: &Service, now: Time, wide: bool) -> Vec<String> {
    let ports: Vec<String> = svc
        .spec
        .ports
        .iter()
        .map(|p| {
            let protocol = p.protocol.as_deref().unwrap_or("TCP");
            match p.node_port.filter(|n| *n > 0) {
                Some(node_port) => format!("{}:{node_port}/{protocol}", p.port),
                None => format!("{}/{protocol}", p.port),
            }
        })
        .collect();
    let ports = if ports.is_empty() { "<none>".to_string() } else { ports.join(",") };
    let mut cells = vec![
        svc.metadata.name.to_string(),
        svc.type_().to_string(),
        svc.spec.cluster_ips.first().cloned().unwrap_or_else(|| "<none>".into()),
        service_external_ip(svc),
        ports,
        age(svc.metadata.creation_timestamp, now),
    ];
    if wide {
        cells.push(format_labels(&svc.spec.selector));
    }
    cells
}

/// `getServiceExternalIP` without external IPs (not modelled): a load balancer's ingress, or
/// `<pending>` while no cloud provider has answered.
pub fn service_external_ip(svc: &Service) -> String {
    match svc.type_() {
        "ClusterIP" | "NodePort" => "<none>".into(),
        "LoadBalancer" => {
            let ingress: Vec<&str> = svc
                .status
                .load_balancer
                .ingress
                .iter()
                .map(|i| if i.ip.is_empty() { i.hostname.as_str() } else { i.ip.as_str() })
                .collect();
            if ingress.is_empty() {
                "<pending>".into()
            } else {
                ingress.join(",")
            }
        }
        "ExternalName" => svc.spec.external_name.clone().unwrap_or_default(),
        _ => "<unknown>".into(),
    }
}

/// `listWithMoreString`: the first three, then `+ N more...`; `<unset>` when there is none.
fn list_with_more(list: Vec<String>, count: usize) -> String {
    const MAX: usize = 3;
    let joined = list.join(",");
    if count > MAX {
        format!("{joined} + {} more...", count - MAX)
    } else if joined.is_empty() {
        "<unset>".into()
    } else {
        joined
    }
}

/// `formatDiscoveryPorts`: each port's number (or its name, or `*`).
pub fn endpoint_slice_ports(ports: &[EndpointPort]) -> String {
    let list = ports
        .iter()
        .take(3)
        .map(|p| match (p.port, &p.name) {
            (Some(n), _) => n.to_string(),
            (None, Some(name)) => name.clone(),
            (None, None) => "*".into(),
        })
        .collect();
    list_with_more(list, ports.len())
}

/// `formatDiscoveryEndpoints`: every address of every endpoint, ready or not.
pub fn endpoint_slice_addresses(endpoints: &[Endpoint]) -> String {
    let all: Vec<&String> = endpoints.iter().flat_map(|e| &e.addresses).collect();
    list_with_more(all.iter().take(3).map(|a| a.to_string()).collect(), all.len())
}

/// `formatEndpoints`: `ip:port` of the ready addresses per port (only the ports named in `ports`
/// when given), the first three then `+ N more...`; `<none>` without subsets.
pub fn endpoints_list(ep: &Endpoints, ports: Option<&str>) -> String {
    if ep.subsets.is_empty() {
        return "<none>".into();
    }
    let mut list = Vec::new();
    let mut count = 0;
    for ss in &ep.subsets {
        if ss.ports.is_empty() {
            count += ss.addresses.len();
            list.extend(ss.addresses.iter().map(|a| a.ip.clone()));
            continue;
        }
        for port in ss.ports.iter().filter(|p| ports.is_none_or(|want| p.name.as_deref().unwrap_or("") == want)) {
            count += ss.addresses.len();
            list.extend(ss.addresses.iter().map(|a| format!("{}:{}", a.ip, port.port.unwrap_or(0))));
        }
    }
    list.truncate(3);
    let joined = list.join(",");
    if count > 3 {
        format!("{joined} + {} more...", count - 3)
    } else {
        joined
    }
}

/// `printPod`'s STATUS: the phase, overridden by the pod's reason, then by container states
/// (the first container in spec order wins, as the loop runs backwards), then by deletion.
pub fn pod_status(pod: &Pod) -> String {
    let mut reason = pod.phase().as_str().to_string();
    if let Some(r) = pod.status.reason.as_deref().filter(|r| !r.is_empty()) {
        reason = r.to_string();
    }
    if pod.condition("PodScheduled").is_some_and(|c| c.reason.as_deref() == Some("SchedulingGated")) {
        reason = "SchedulingGated".into();
    }
    let mut has_running = false;
    for cs in pod.status.container_statuses.iter().rev() {
        let st = &cs.state;
        if let Some(w) = st.waiting.as_ref().and_then(|w| w.reason.as_deref()).filter(|r| !r.is_empty()) {
            reason = w.to_string();
        } else if let Some(t) = &st.terminated {
            reason = match t.reason.as_deref().filter(|r| !r.is_empty()) {
                Some(r) => r.to_string(),
                None => format!("ExitCode:{}", t.exit_code),
            };
        } else if cs.ready && st.running.is_some() {
            has_running = true;
        }
    }
    if reason == "Completed" && has_running {
        reason = if pod.condition("Ready").is_some_and(|c| c.status == "True") { "Running".into() } else { "NotReady".into() };
    }
    if pod.metadata.deletion_timestamp.is_some() {
        if pod.status.reason.as_deref() == Some("NodeLost") {
            reason = "Unknown".into();
        } else if !pod.is_terminal() {
            reason = "Terminating".into();
        }
    }
    reason
}

/// READY `n/m`: containers that are ready and running, out of the spec's containers.
pub fn pod_ready(pod: &Pod) -> String {
    let ready = pod.status.container_statuses.iter().filter(|c| c.ready && c.state.running.is_some()).count();
    format!("{ready}/{}", pod.spec.containers.len())
}

/// RESTARTS: the sum of restart counts, with `(5m ago)` from the latest last-termination.
pub fn pod_restarts(pod: &Pod, now: Time) -> String {
    let restarts: i64 = pod.status.container_statuses.iter().map(|c| i64::from(c.restart_count)).sum();
    let last = pod.status.container_statuses.iter().filter_map(|c| c.last_state.terminated.as_ref()?.finished_at).max();
    match last {
        Some(t) if restarts != 0 => format!("{restarts} ({} ago)", age(Some(t), now)),
        _ => restarts.to_string(),
    }
}

fn pod_row(pod: &Pod, now: Time, wide: bool) -> Vec<String> {
    let mut cells = vec![
        pod.metadata.name.to_string(),
        pod_ready(pod),
        pod_status(pod),
        pod_restarts(pod, now),
        age(pod.metadata.creation_timestamp, now),
    ];
    if wide {
        let none = |v: Option<&str>| v.filter(|s| !s.is_empty()).unwrap_or("<none>").to_string();
        cells.push(none(pod.status.pod_ip.as_deref()));
        cells.push(none(pod.node_name()));
        cells.push(none(pod.status.nominated_node_name.as_deref()));
        cells.push("<none>".into());
    }
    cells
}

/// Node roles from `node-role.kubernetes.io/ROLE` and `kubernetes.io/role` labels.
pub fn node_roles(node: &Node) -> Vec<String> {
    let mut roles = std::collections::BTreeSet::new();
    for (k, v) in &node.metadata.labels {
        if let Some(role) = k.strip_prefix("node-role.kubernetes.io/").filter(|r| !r.is_empty()) {
            roles.insert(role.to_string());
        } else if k == "kubernetes.io/role" && !v.is_empty() {
            roles.insert(v.clone());
        }
    }
    roles.into_iter().collect()
}

/// `Ready`, `NotReady` (for False and Unknown alike), `Unknown` when never reported, plus
/// `SchedulingDisabled` when cordoned.
pub fn node_status(node: &Node) -> String {
    let mut status = match node.condition("Ready") {
        Some(c) if c.status == "True" => vec!["Ready"],
        Some(_) => vec!["NotReady"],
        None => vec!["Unknown"],
    };
    if node.spec.unschedulable {
        status.push("SchedulingDisabled");
    }
    status.join(",")
}

fn node_row(node: &Node, now: Time, wide: bool) -> Vec<String> {
    let roles = node_roles(node);
    let mut cells = vec![
        node.metadata.name.to_string(),
        node_status(node),
        if roles.is_empty() { "<none>".into() } else { roles.join(",") },
        age(node.metadata.creation_timestamp, now),
        node.status.node_info.kubelet_version.clone(),
    ];
    if wide {
        let address = |t: &str| node.status.addresses.iter().find(|a| a.type_ == t).map(|a| a.address.clone()).unwrap_or("<none>".into());
        let known = |v: &str| if v.is_empty() { "<unknown>".to_string() } else { v.to_string() };
        cells.push(address("InternalIP"));
        cells.push(address("ExternalIP"));
        cells.push(known(&node.status.node_info.os_image));
        cells.push("<unknown>".into());
        cells.push(known(&node.status.node_info.container_runtime_version));
    }
    cells
}

/// `layoutContainerCells`: container names and images, comma-joined.
fn containers_and_images(spec: &PodSpec) -> (String, String) {
    let names: Vec<&str> = spec.containers.iter().map(|c| c.name.as_str()).collect();
    let images: Vec<&str> = spec.containers.iter().map(|c| c.image.as_str()).collect();
    (names.join(","), images.join(","))
}

/// `metav1.LabelSelectorAsSelector(...).String()`: requirements sorted by key.
pub fn selector_string(s: &LabelSelector) -> String {
    let mut parts: Vec<(String, String)> = s.match_labels.iter().map(|(k, v)| (k.clone(), format!("{k}={v}"))).collect();
    for r in &s.match_expressions {
        let mut values = r.values.clone();
        crate::sort::sort(&mut values);
        let text = match r.operator.as_str() {
            "In" => format!("{} in ({})", r.key, values.join(",")),
            "NotIn" => format!("{} notin ({})", r.key, values.join(",")),
            "Exists" => r.key.clone(),
            _ => format!("!{}", r.key),
        };
        parts.push((r.key.clone(), text));
    }
    crate::sort::sort(&mut parts);
    if parts.is_empty() {
        return "<none>".into();
    }
    parts.into_iter().map(|(_, t)| t).collect::<Vec<_>>().join(",")
}

fn deployment_row(d: &Deployment, now: Time, wide: bool) -> Vec<String> {
    let desired = d.spec.replicas.unwrap_or(1);
    let mut cells = vec![
        d.metadata.name.to_string(),
        format!("{}/{desired}", d.status.ready_replicas),
        d.status.updated_replicas.to_string(),
        d.status.available_replicas.to_string(),
        age(d.metadata.creation_timestamp, now),
    ];
    if wide {
        let (c, i) = containers_and_images(&d.spec.template.spec);
        cells.extend([c, i, selector_string(&d.spec.selector)]);
    }
    cells
}

fn replica_set_row(rs: &ReplicaSet, now: Time, wide: bool) -> Vec<String> {
    let mut cells = vec![
        rs.metadata.name.to_string(),
        rs.spec.replicas.unwrap_or(1).to_string(),
        rs.status.replicas.to_string(),
        rs.status.ready_replicas.to_string(),
        age(rs.metadata.creation_timestamp, now),
    ];
    if wide {
        let (c, i) = containers_and_images(&rs.spec.template.spec);
        cells.extend([c, i, selector_string(&rs.spec.selector)]);
    }
    cells
}

/// `printPersistentVolumeClaim`: capacity and access modes only once bound (from the status).
fn persistent_volume_claim_row(pvc: &PersistentVolumeClaim, now: Time, wide: bool) -> Vec<String> {
    let bound = pvc.phase() == "Bound";
    let capacity = if bound { pvc.status.capacity.get("storage").map(|q| q.0.clone()).unwrap_or_default() } else { String::new() };
    let modes = if bound { access_modes_string(&pvc.status.access_modes) } else { String::new() };
    let phase = if pvc.metadata.is_deleting() { "Terminating" } else { pvc.phase() };
    let mut cells = vec![
        pvc.metadata.name.to_string(),
        phase.to_string(),
        pvc.spec.volume_name.clone(),
        capacity,
        modes,
        pvc.spec.storage_class_name.clone().unwrap_or_default(),
        "<unset>".to_string(),
        age(pvc.metadata.creation_timestamp, now),
    ];
    if wide {
        cells.push(pvc.spec.volume_mode.clone().unwrap_or_else(|| "<unset>".into()));
    }
    cells
}

/// `printPersistentVolume`: the claim as `namespace/name`.
fn persistent_volume_row(pv: &PersistentVolume, now: Time, wide: bool) -> Vec<String> {
    let claim = pv.spec.claim_ref.as_ref().map(|c| format!("{}/{}", c.namespace, c.name)).unwrap_or_default();
    let phase = if pv.metadata.is_deleting() { "Terminating" } else { pv.phase() };
    let mut cells = vec![
        pv.metadata.name.to_string(),
        pv.spec.capacity.get("storage").map(|q| q.0.clone()).unwrap_or_default(),
        access_modes_string(&pv.spec.access_modes),
        pv.spec.persistent_volume_reclaim_policy.clone().unwrap_or_default(),
        phase.to_string(),
        claim,
        pv.spec.storage_class_name.clone(),
        "<unset>".to_string(),
        String::new(),
        age(pv.metadata.creation_timestamp, now),
    ];
    if wide {
        cells.push(pv.spec.volume_mode.clone().unwrap_or_else(|| "<unset>".into()));
    }
    cells
}

/// `printStorageClass`: the default class's name carries ` (default)`.
fn storage_class_row(sc: &StorageClass, now: Time) -> Vec<String> {
    let name = if sc.is_default() { format!("{} (default)", sc.metadata.name) } else { sc.metadata.name.to_string() };
    vec![
        name,
        sc.provisioner.clone(),
        sc.reclaim_policy.clone().unwrap_or_else(|| "Delete".into()),
        sc.volume_binding_mode.clone().unwrap_or_else(|| "Immediate".into()),
        sc.allow_volume_expansion.unwrap_or(false).to_string(),
        age(sc.metadata.creation_timestamp, now),
    ]
}

/// `printControllerRevision`: the controller as `kind.group/name` (`statefulset.apps/web`).
fn controller_revision_row(cr: &ControllerRevision, now: Time) -> Vec<String> {
    let controller = cr.metadata.controller_ref().map_or_else(
        || "<none>".to_string(),
        |r| {
            let group = r.api_version.rsplit_once('/').map(|(g, _)| format!(".{g}")).unwrap_or_default();
            format!("{}{group}/{}", r.kind.to_ascii_lowercase(), r.name)
        },
    );
    vec![cr.metadata.name.to_string(), controller, cr.revision.to_string(), age(cr.metadata.creation_timestamp, now)]
}

/// `printStatefulSet`: ready of desired, and the template's containers when wide.
fn stateful_set_row(sts: &StatefulSet, now: Time, wide: bool) -> Vec<String> {
    let mut cells = vec![
        sts.metadata.name.to_string(),
        format!("{}/{}", sts.status.ready_replicas, sts.replicas()),
        age(sts.metadata.creation_timestamp, now),
    ];
    if wide {
        let (c, i) = containers_and_images(&sts.spec.template.spec);
        cells.extend([c, i]);
    }
    cells
}

/// `printDaemonSet`: the counts of the status, and the template's nodeSelector as labels.
fn daemon_set_row(ds: &DaemonSet, now: Time, wide: bool) -> Vec<String> {
    let st = &ds.status;
    let mut cells = vec![
        ds.metadata.name.to_string(),
        st.desired_number_scheduled.to_string(),
        st.current_number_scheduled.to_string(),
        st.number_ready.to_string(),
        st.updated_number_scheduled.to_string(),
        st.number_available.to_string(),
        format_labels(&ds.spec.template.spec.node_selector),
        age(ds.metadata.creation_timestamp, now),
    ];
    if wide {
        let (c, i) = containers_and_images(&ds.spec.template.spec);
        cells.extend([c, i, selector_string(&ds.spec.selector)]);
    }
    cells
}

/// `kind/name` of an event's object, lower-cased as kubectl prints it.
pub fn event_object(e: &Event) -> String {
    let kind = e.involved_object.kind.to_ascii_lowercase();
    if e.involved_object.name.is_empty() {
        kind
    } else {
        format!("{kind}/{}", e.involved_object.name)
    }
}

/// `formatEventSource`: `component, host`, or the component alone.
pub fn event_source(e: &Event) -> String {
    let component = if e.source.component.is_empty() { e.reporting_component.as_str() } else { e.source.component.as_str() };
    let host = if e.source.host.is_empty() { e.reporting_instance.as_str() } else { e.source.host.as_str() };
    if host.is_empty() {
        component.to_string()
    } else {
        format!("{component}, {host}")
    }
}

fn event_row(e: &Event, now: Time, wide: bool) -> Vec<String> {
    let first = age(e.first_timestamp, now);
    let last = if e.last_timestamp.is_some() { age(e.last_timestamp, now) } else { first.clone() };
    let message = e.message.trim().to_string();
    if !wide {
        return vec![last, e.type_.to_string(), e.reason.to_string(), event_object(e), message];
    }
    vec![
        last,
        e.type_.to_string(),
        e.reason.to_string(),
        event_object(e),
        e.involved_object.field_path.to_string(),
        event_source(e),
        message,
        first,
        e.count.max(1).to_string(),
        e.metadata.name.to_string(),
    ]
}

/// `labels.FormatLabels`: `k=v,k2=v2` sorted, or `<none>`.
pub fn format_labels(labels: &StringMap) -> String {
    if labels.is_empty() {
        return "<none>".into();
    }
    labels.iter().map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>().join(",")
}

/// `-o json`: Go's `json.MarshalIndent(obj, "", "    ")` over an unstructured object, so keys
/// are sorted and `<`, `>`, `&` are escaped as Go escapes them.
pub fn json_text(value: &Value) -> String {
    let mut buf = Vec::new();
    let formatter = serde_json::ser::PrettyFormatter::with_indent(b"    ");
    let mut ser = serde_json::Serializer::with_formatter(&mut buf, formatter);
    let text = match serde::Serialize::serialize(value, &mut ser) {
        Ok(()) => String::from_utf8(buf).unwrap_or_default(),
        Err(e) => format!("{{\"error\": {:?}}}", e.to_string()),
    };
    let mut out = text.replace('<', "\\u003c").replace('>', "\\u003e").replace('&', "\\u0026");
    out.push('\n');
    out
}

/// An object as `-o json|yaml` show it: `Object::to_json`, minus the empty `name` the model
/// writes into pod templates' metadata (a real API server omits empty strings there).
pub fn object_json(o: &Object) -> Value {
    let mut v = o.to_json();
    // A pod template's metadata (a CronJob's one level down, in its Job template).
    for path in ["/spec/template/metadata", "/spec/jobTemplate/spec/template/metadata"] {
        if let Some(Value::Object(meta)) = v.pointer_mut(path) {
            if meta.get("name").is_some_and(|n| n == "") {
                meta.remove("name");
            }
        }
    }
    v
}

/// The `List` kubectl wraps several objects in for `-o json` and `-o yaml`.
pub fn list_value(items: Vec<Value>) -> Value {
    serde_json::json!({"apiVersion": "v1", "items": items, "kind": "List", "metadata": {"resourceVersion": ""}})
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::command::table::render_table;

    /// The server's Table (every column, with priorities) and the console's rows are one
    /// printer: for every kind, the wide row has a cell per column and the row without `-o wide`
    /// is the wide row's priority-0 cells, which is what kubectl prints from a Table.
    #[test]
    fn every_row_is_its_wide_row_without_the_wide_columns() {
        for kind in Kind::ALL {
            let mut object = Object::empty(kind);
            object.meta_mut().name = "x".into();
            object.meta_mut().creation_timestamp = Some(Time(0));
            let now = Time(90_000);
            assert_eq!(row(&object, now, true).len(), columns(kind).len(), "{kind:?}");
            assert_eq!(row_for(&object, now, false), row(&object, now, false), "{kind:?}");
            assert_eq!(row(&object, now, false).len(), headers(kind, false).len(), "{kind:?}");
        }
    }

    fn pod(name: &str) -> Pod {
        Pod {
            metadata: ObjectMeta {
                name: name.into(),
                namespace: "default".into(),
                creation_timestamp: Some(Time(0)),
                ..Default::default()
            },
            spec: PodSpec {
                containers: vec![Container { name: "nginx".into(), image: "nginx:1.14.2".into(), ..Default::default() }].into(),
                ..Default::default()
            }
            .into(),
            status: PodStatus { phase: Some(PodPhase::Pending), ..Default::default() },
        }
    }

    fn waiting(reason: &str) -> ContainerStatus {
        ContainerStatus {
            name: "nginx".into(),
            state: ContainerState {
                waiting: Some(ContainerStateWaiting { reason: Some(reason.into()), message: None }),
                ..Default::default()
            },
            ..Default::default()
        }
    }

    fn running(ready: bool, restarts: i32) -> ContainerStatus {
        ContainerStatus {
            name: "nginx".into(),
            state: ContainerState { running: Some(ContainerStateRunning { started_at: Some(Time(1000)) }), ..Default::default() },
            ready,
            restart_count: restarts,
            ..Default::default()
        }
    }

    #[test]
    fn pod_status_is_the_phase_until_a_container_has_a_reason() {
        let mut p = pod("web-1");
        assert_eq!(pod_status(&p), "Pending");
        p.status.container_statuses = vec![waiting("ContainerCreating")];
        assert_eq!(pod_status(&p), "ContainerCreating");
        p.status.phase = Some(PodPhase::Running);
        p.status.container_statuses = vec![waiting("CrashLoopBackOff")];
        assert_eq!(pod_status(&p), "CrashLoopBackOff");
        p.status.container_statuses = vec![running(true, 0)];
        assert_eq!(pod_status(&p), "Running");
        p.metadata.deletion_timestamp = Some(Time(5000));
        assert_eq!(pod_status(&p), "Terminating");
        p.status.reason = Some("NodeLost".into());
        assert_eq!(pod_status(&p), "Unknown");
    }

    #[test]
    fn terminated_containers_show_their_reason_or_exit_code() {
        let mut p = pod("job-1");
        p.status.phase = Some(PodPhase::Failed);
        let mut cs = running(false, 0);
        cs.state =
            ContainerState { terminated: Some(ContainerStateTerminated { exit_code: 137, ..Default::default() }), ..Default::default() };
        p.status.container_statuses = vec![cs.clone()];
        assert_eq!(pod_status(&p), "ExitCode:137");
        cs.state.terminated.as_mut().unwrap().reason = Some("Error".into());
        p.status.container_statuses = vec![cs];
        p.metadata.deletion_timestamp = Some(Time(1));
        assert_eq!(pod_status(&p), "Error", "terminal pods never show Terminating");
    }

    #[test]
    fn restarts_show_how_long_ago_the_last_one_was() {
        let mut p = pod("web-1");
        let mut cs = running(true, 3);
        cs.last_state = ContainerState {
            terminated: Some(ContainerStateTerminated {
                exit_code: 1,
                reason: Some("Error".into()),
                finished_at: Some(Time(60_000)),
                ..Default::default()
            }),
            ..Default::default()
        };
        p.status.container_statuses = vec![cs];
        assert_eq!(pod_restarts(&p, Time(150_000)), "3 (90s ago)");
        assert_eq!(pod_restarts(&pod("x"), Time(0)), "0");
        assert_eq!(pod_ready(&p), "1/1");
    }

    #[test]
    fn a_pod_table_prints_as_kubectl_prints_it() {
        let mut a = pod("web-7d9f6c5b4-abcde");
        a.status.phase = Some(PodPhase::Running);
        a.status.container_statuses = vec![running(true, 0)];
        a.spec.node_name = Some("node-1".into());
        a.status.pod_ip = Some("10.244.1.2".into());
        let mut b = pod("web-7d9f6c5b4-fghjk");
        b.metadata.creation_timestamp = Some(Time(140_000));
        b.status.container_statuses = vec![waiting("ContainerCreating")];
        let now = Time(150_000);
        let rows: Vec<Vec<String>> = [&a, &b].iter().map(|p| pod_row(p, now, false)).collect();
        assert_eq!(
            render_table(&headers(Kind::Pod, false), &rows, true),
            "NAME                  READY   STATUS              RESTARTS   AGE\n\
             web-7d9f6c5b4-abcde   1/1     Running             0          2m30s\n\
             web-7d9f6c5b4-fghjk   0/1     ContainerCreating   0          10s\n"
        );
        let wide: Vec<Vec<String>> = [&a, &b].iter().map(|p| pod_row(p, now, true)).collect();
        assert_eq!(
            render_table(&headers(Kind::Pod, true), &wide, true),
            "NAME                  READY   STATUS              RESTARTS   AGE     IP           NODE     NOMINATED NODE   READINESS GATES\n\
             web-7d9f6c5b4-abcde   1/1     Running             0          2m30s   10.244.1.2   node-1   <none>           <none>\n\
             web-7d9f6c5b4-fghjk   0/1     ContainerCreating   0          10s     <none>       <none>   <none>           <none>\n"
        );
    }

    #[test]
    fn node_status_and_roles_follow_kubectl() {
        let mut n = Node {
            metadata: ObjectMeta { name: "node-1".into(), creation_timestamp: Some(Time(0)), ..Default::default() },
            ..Default::default()
        };
        assert_eq!(node_status(&n), "Unknown");
        n.status.conditions = vec![NodeCondition { type_: "Ready".into(), status: "Unknown".into(), ..Default::default() }];
        assert_eq!(node_status(&n), "NotReady");
        n.status.conditions[0].status = "True".into();
        n.spec.unschedulable = true;
        assert_eq!(node_status(&n), "Ready,SchedulingDisabled");
        n.status.node_info.kubelet_version = "v1.32.0".into();
        n.metadata.labels.insert("node-role.kubernetes.io/control-plane".into(), String::new());
        assert_eq!(node_row(&n, Time(3_600_000), false), ["node-1", "Ready,SchedulingDisabled", "control-plane", "60m", "v1.32.0"]);
    }

    #[test]
    fn deployment_and_replica_set_rows_count_replicas() {
        let mut d = Deployment::default();
        d.metadata.name = "web".into();
        d.metadata.creation_timestamp = Some(Time(0));
        d.spec.replicas = Some(3);
        d.spec.selector.match_labels.insert("app".into(), "web".into());
        d.spec.template.spec.containers =
            vec![Container { name: "nginx".into(), image: "nginx:1.14.2".into(), ..Default::default() }].into();
        d.status = DeploymentStatus { ready_replicas: 2, updated_replicas: 3, available_replicas: 2, ..Default::default() };
        assert_eq!(deployment_row(&d, Time(45_000), true), ["web", "2/3", "3", "2", "45s", "nginx", "nginx:1.14.2", "app=web"]);
        let rs = ReplicaSet {
            metadata: ObjectMeta { name: "web-7d9f6c5b4".into(), creation_timestamp: Some(Time(0)), ..Default::default() },
            spec: ReplicaSetSpec { replicas: Some(3), ..Default::default() },
            status: ReplicaSetStatus { replicas: 3, ready_replicas: 1, ..Default::default() },
        };
        assert_eq!(replica_set_row(&rs, Time(400_000), false), ["web-7d9f6c5b4", "3", "3", "1", "6m40s"]);
    }

    #[test]
    fn event_rows_name_the_object_by_lower_case_kind() {
        let e = Event {
            metadata: ObjectMeta { name: "web-abc.18a".into(), ..Default::default() },
            involved_object: ObjectReference { kind: "Pod".into(), name: "web-abc".into(), ..Default::default() },
            reason: "Scheduled".into(),
            message: "Successfully assigned default/web-abc to node-1 ".into(),
            source: EventSource { component: "default-scheduler".into(), host: String::new() }.into(),
            first_timestamp: Some(Time(0)),
            last_timestamp: Some(Time(2000)),
            count: 1,
            type_: "Normal".into(),
            ..Default::default()
        };
        assert_eq!(
            event_row(&e, Time(10_000), false),
            ["8s", "Normal", "Scheduled", "pod/web-abc", "Successfully assigned default/web-abc to node-1"]
        );
        let wide = event_row(&e, Time(10_000), true);
        assert_eq!(wide[5], "default-scheduler");
        assert_eq!(wide[7..], ["10s", "1", "web-abc.18a"]);
    }

    #[test]
    fn selectors_print_sorted_by_key() {
        let s = LabelSelector {
            match_labels: [("tier".to_string(), "web".to_string())].into(),
            match_expressions: vec![LabelSelectorRequirement {
                key: "app".into(),
                operator: "In".into(),
                values: vec!["b".into(), "a".into()],
            }],
        };
        assert_eq!(selector_string(&s), "app in (a,b),tier=web");
    }

    #[test]
    fn json_output_is_go_shaped() {
        let v = serde_json::json!({"kind": "Pod", "apiVersion": "v1", "metadata": {"annotations": {"x": "<none> & more"}}, "spec": {}});
        assert_eq!(
            json_text(&v),
            "{\n    \"apiVersion\": \"v1\",\n    \"kind\": \"Pod\",\n    \"metadata\": {\n        \"annotations\": {\n            \"x\": \"\\u003cnone\\u003e \\u0026 more\"\n        }\n    },\n    \"spec\": {}\n}\n"
        );
    }
}
