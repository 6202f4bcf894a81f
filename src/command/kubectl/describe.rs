//! `kubectl describe`: the long form of an object, laid out by kubectl's describers
//! (k8s.io/kubectl/pkg/describe) line for line, with the object's Events at the end.
//!
//! The layout comes from writing the same tab-separated lines through the same tabwriter
//! (minwidth 0, padding 2) that kubectl uses, including where it flushes: a line without a tab
//! ends an alignment block, and the Events table is always aligned on its own. Only fields that
//! kubeloop models appear; everything else a real describe prints for them is computed the same
//! way (QoS class, "Non-terminated Pods", "Allocated resources", replica set lists).

use super::{flags, namespace};
use crate::command::parse::{FlagKind, FlagSpec, Flags};
use crate::command::printers::{age, node_roles, selector_string};
use crate::command::resources::{self, Selection};
use crate::command::table::PrefixWriter;
use crate::command::{CommandOutput, Session};
use crate::model::*;
use crate::sim::Sim;
use std::rc::Rc;

const FLAGS: &[FlagSpec] = &[
    FlagSpec::new("selector", Some('l'), FlagKind::String),
    FlagSpec::new("all-namespaces", Some('A'), FlagKind::Bool),
    FlagSpec::new("show-events", None, FlagKind::Bool),
];

/// The annotation kubectl apply keeps, which describe never shows.
pub const LAST_APPLIED: &str = "kubectl.kubernetes.io/last-applied-configuration";

pub fn run(session: &mut Session, args: &[String]) -> CommandOutput {
    let (positional, f) = match flags("describe", args, FLAGS) {
        Ok(v) => v,
        Err(e) => return e,
    };
    if positional.is_empty() {
        return CommandOutput::err(
            "You must specify the type of resource to describe. Use \"kubectl api-resources\" for a complete list of supported resources.\n\nerror: Required resource not specified.\nSee 'kubectl describe -h' for help and examples",
        );
    }
    let ns = namespace(&f);
    let selection = match resources::select(&positional) {
        Ok(s) => s,
        Err(e) => {
            // Not a built-in type: a resource a CustomResourceDefinition serves, if discovery has it.
            let typed = positional[0].split('/').next().unwrap_or_default();
            return match session.sim().api().definitions().resolve(typed).cloned() {
                Some(d) if !positional[0].contains(',') => describe_custom(session, &d, &positional, &f, &ns),
                _ => CommandOutput::err(e),
            };
        }
    };
    let query = super::get::Query {
        namespace: if f.bool("all-namespaces") { None } else { Some(ns.clone()) },
        labels: match f.str("selector").map(crate::command::selector::parse_label_selector).transpose() {
            Ok(v) => v,
            Err(e) => return CommandOutput::err(e),
        },
        fields: Default::default(),
    };
    let show_events = f.bool_or("show-events", true);
    let sim = session.sim();
    let mut out = CommandOutput::empty();
    let mut texts = Vec::new();
    let mut describe_all = |objects: Vec<Rc<Object>>, out: &mut CommandOutput| {
        for o in objects {
            match describe(sim, &o, show_events) {
                Ok(t) => texts.push(t),
                Err(e) => out.fail(&e),
            }
        }
    };
    match selection {
        Selection::Kinds(kinds) => {
            for kind in kinds {
                let objects = super::get::list(sim, kind, &query);
                describe_all(objects, &mut out);
            }
            if texts.is_empty() && out.ok {
                out.note(&format!("No resources found in {ns} namespace."));
            }
        }
        Selection::Named(named) => {
            let missing = |kind: Kind, name: &str| sim.api().get(&ObjectKey::new(kind, &ns, name)).is_none();
            // Two words naming no object: kubectl describes every object whose name begins with
            // the second instead (`DescribeMatchingResources`), each followed by a newline; the
            // second word of `TYPE/NAME TYPE/NAME` (with its slash) begins no name.
            if positional.len() == 2 && named.iter().any(|(k, n)| missing(*k, n)) {
                let kind = named[0].0;
                let prefix = positional[1].as_str();
                let found: Vec<Rc<Object>> =
                    super::get::list(sim, kind, &query).into_iter().filter(|o| o.meta().name.starts_with(prefix)).collect();
                if found.is_empty() {
                    for (kind, name) in named.iter().filter(|(k, n)| missing(*k, n)) {
                        out.fail(&crate::api::ApiError::not_found(*kind, name).kubectl_message());
                    }
                    return out;
                }
                describe_all(found, &mut out);
                out.stdout = texts.iter().map(|t| format!("{t}\n")).collect::<String>() + &out.stdout;
                return out;
            }
            for (kind, name) in named {
                match sim.api().get(&ObjectKey::new(kind, &ns, &name)).cloned() {
                    Some(o) => describe_all(vec![o], &mut out),
                    None => out.fail(&crate::api::ApiError::not_found(kind, &name).kubectl_message()),
                }
            }
        }
    }
    out.stdout = texts.join("\n\n") + &out.stdout;
    out
}

/// `kubectl describe` of a custom resource: the objects named (`TYPE NAME...` or `TYPE/NAME`;
/// a name no object has matches every object it begins, as kubectl falls back to), or every
/// object in the namespace, through the generic describer.
#[inline(never)]
fn describe_custom(session: &Session, d: &crate::api::crd::Definition, positional: &[String], f: &Flags, ns: &str) -> CommandOutput {
    let labels = match f.str("selector").map(crate::command::selector::parse_label_selector).transpose() {
        Ok(v) => v,
        Err(e) => return CommandOutput::err(e),
    };
    let all = f.bool("all-namespaces");
    let sim = session.sim();
    let ns = if d.namespaced { ns } else { "" };
    let request = crate::api::ListRequest {
        kind: Some(Kind::CustomObject),
        resource: d.name.clone(),
        namespace: (d.namespaced && !all).then(|| ns.to_string()),
        labels,
        ..Default::default()
    };
    let listed = || match sim.api().list(&request) {
        crate::api::ApiResponse::List { items, .. } => items,
        _ => Vec::new(),
    };
    let names: Vec<String> = match positional[0].split_once('/') {
        Some((_, name)) => std::iter::once(name.to_string())
            .chain(positional[1..].iter().map(|p| p.split_once('/').map_or(p.clone(), |(_, n)| n.to_string())))
            .collect(),
        None => positional[1..].to_vec(),
    };
    let mut out = CommandOutput::empty();
    let show_events = f.bool_or("show-events", true);
    let text = |o: &Rc<Object>| super::generic::describe(o, show_events.then(|| events_for(sim, o)).as_deref(), sim.now());
    let mut objects = Vec::new();
    if names.is_empty() {
        objects = listed();
        if objects.is_empty() {
            out.note(&if all || !d.namespaced {
                "No resources found".to_string()
            } else {
                format!("No resources found in {ns} namespace.")
            });
        }
    }
    for name in &names {
        match sim.api().get(&ObjectKey::custom(&d.name, ns, name)) {
            Some(o) => objects.push(o.clone()),
            // Two words naming no object: kubectl describes every object whose name begins with
            // the second instead (`DescribeMatchingResources`), each followed by a newline; the
            // second word of `TYPE/NAME TYPE/NAME` (with its slash) begins no name.
            None if positional.len() == 2 => {
                let prefix = positional[1].as_str();
                let found: Vec<Rc<Object>> = listed().into_iter().filter(|o| o.meta().name.starts_with(prefix)).collect();
                if found.is_empty() {
                    out = CommandOutput::empty();
                    for name in &names {
                        if sim.api().get(&ObjectKey::custom(&d.name, ns, name)).is_none() {
                            out.fail(&crate::api::ApiError::not_found_named(&d.name, name).kubectl_message());
                        }
                    }
                    return out;
                }
                out.stdout = found.iter().map(|o| text(o) + "\n").collect();
                return out;
            }
            None => out.fail(&crate::api::ApiError::not_found_named(&d.name, name).kubectl_message()),
        }
    }
    let texts: Vec<String> = objects.iter().map(text).collect();
    out.stdout = texts.join("\n\n") + &out.stdout;
    out
}

/// The description of one object.
pub fn describe(sim: &Sim, o: &Object, show_events: bool) -> Result<String, String> {
    let events = if show_events { Some(events_for(sim, o)) } else { None };
    let now = sim.now();
    match o {
        Object::Pod(p) => Ok(describe_pod(p, events.as_deref(), now)),
        Object::Node(n) => Ok(describe_node(sim, n, events.as_deref(), now)),
        Object::Deployment(d) => Ok(describe_deployment(sim, d, events.as_deref(), now)),
        Object::ReplicaSet(rs) => Ok(describe_replica_set(sim, rs, events.as_deref(), now)),
        Object::DaemonSet(ds) => Ok(describe_daemon_set(sim, ds, events.as_deref(), now)),
        Object::Namespace(ns) => Ok(describe_namespace(ns)),
        Object::ConfigMap(cm) => Ok(describe_config_map(cm, events.as_deref(), now)),
        Object::Secret(secret) => Ok(describe_secret(secret)),
        Object::Service(svc) => Ok(describe_service(sim, svc, events.as_deref(), now)),
        Object::Endpoints(ep) => Ok(describe_endpoints(ep, events.as_deref(), now)),
        Object::PodDisruptionBudget(pdb) => Ok(describe_pod_disruption_budget(pdb, events.as_deref(), now)),
        Object::HorizontalPodAutoscaler(hpa) => Ok(describe_horizontal_pod_autoscaler(hpa, events.as_deref(), now)),
        // describeReplicationController prints what describeReplicaSet does.
        Object::ReplicationController(rc) => Ok(describe_replica_set(sim, &rc.as_replica_set(), events.as_deref(), now)),
        Object::EndpointSlice(slice) => Ok(describe_endpoint_slice(slice, events.as_deref(), now)),
        Object::Job(job) => Ok(describe_job(job, events.as_deref(), now)),
        Object::CronJob(cj) => Ok(describe_cron_job(cj, events.as_deref(), now)),
        Object::StatefulSet(sts) => Ok(describe_stateful_set(sim, sts, events.as_deref(), now)),
        Object::PersistentVolumeClaim(pvc) => Ok(describe_persistent_volume_claim(sim, pvc, events.as_deref(), now)),
        Object::PersistentVolume(pv) => Ok(describe_persistent_volume(pv, events.as_deref(), now)),
        Object::StorageClass(sc) => Ok(describe_storage_class(sc, events.as_deref(), now)),
        // Kinds without a describer of their own (custom resources, CustomResourceDefinitions,
        // Leases …): kubectl's generic describer, from the object's JSON.
        _ => Ok(super::generic::describe(o, events.as_deref(), now)),
    }
}

/// The events about an object, as `searchEvents` finds them: same name, namespace and UID (for
/// nodes, the kubelet's events carry the node's name as UID, so both are accepted).
fn events_for(sim: &Sim, o: &Object) -> Vec<Rc<Object>> {
    let m = o.meta();
    let kind = o.as_custom_object().map_or(o.kind().as_str(), |c| c.kind());
    let ns_filter = if o.kind().namespaced() { Some(m.namespace.as_str()) } else { None };
    let mut found: Vec<Rc<Object>> = sim
        .api()
        .items(Kind::Event, ns_filter)
        .filter(|e| {
            e.as_event().is_some_and(|e| {
                let r = &e.involved_object;
                r.name == m.name
                    && (o.kind() == Kind::Pod || r.kind == kind)
                    && (r.uid.is_empty() || r.uid == m.uid || (o.kind() == Kind::Node && r.uid == m.name))
            })
        })
        .cloned()
        .collect();
    // SortableEvents: by lastTimestamp (a stable sort keeps the store's order among equals).
    crate::sort::sort_by_key(&mut found, |e| e.as_event().and_then(|e| e.last_timestamp.or(e.first_timestamp)));
    found
}

const WEEKDAYS: [&str; 7] = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"];
const MONTHS: [&str; 12] = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];

/// Go's `time.RFC1123Z` (`Thu, 01 Jan 2026 00:00:00 +0000`); the zero time for an unset one.
pub fn rfc1123z(t: Option<Time>) -> String {
    let Some(t) = t else {
        return "Mon, 01 Jan 0001 00:00:00 +0000".into();
    };
    let text = t.rfc3339();
    let num = |r: std::ops::Range<usize>| text.get(r).and_then(|s| s.parse::<usize>().ok()).unwrap_or(0);
    let (year, month, day) = (num(0..4), num(5..7), num(8..10));
    let days = (EPOCH_UNIX_SECS + t.0 / 1000) / 86_400;
    let weekday = WEEKDAYS[((days + 4) % 7) as usize];
    let month = MONTHS.get(month.wrapping_sub(1)).copied().unwrap_or("Jan");
    format!("{weekday}, {day:02} {month} {year:04} {} +0000", text.get(11..19).unwrap_or("00:00:00"))
}

pub(super) fn labels_multiline(w: &mut PrefixWriter, title: &str, labels: &StringMap) {
    w.write(0, &format!("{title}:\t"));
    if labels.is_empty() {
        w.line("<none>");
        return;
    }
    for (i, (k, v)) in labels.iter().enumerate() {
        if i != 0 {
            w.write(0, "\t");
        }
        w.write(0, &format!("{k}={v}\n"));
    }
}

pub(super) fn annotations_multiline(w: &mut PrefixWriter, title: &str, annotations: &StringMap) {
    w.write(0, &format!("{title}:\t"));
    let keys: Vec<&String> = annotations.keys().filter(|k| *k != LAST_APPLIED).collect();
    if keys.is_empty() {
        w.line("<none>");
        return;
    }
    for (i, k) in keys.iter().enumerate() {
        if i != 0 {
            w.write(0, "\t");
        }
        let value = annotations[*k].trim_end_matches('\n');
        if value.len() + k.len() + 2 > 140 || value.contains('\n') {
            w.write(0, &format!("{k}:\n"));
            for line in value.split('\n') {
                let short = if line.len() > 138 { format!("{}...", &line[..floor_char_boundary(line, 138)]) } else { line.to_string() };
                w.write(0, &format!("\t  {short}\n"));
            }
        } else {
            w.write(0, &format!("{k}: {value}\n"));
        }
    }
}

fn floor_char_boundary(s: &str, mut i: usize) -> usize {
    while i > 0 && !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

fn tolerations_multiline(w: &mut PrefixWriter, title: &str, tolerations: &[Toleration]) {
    w.write(0, &format!("{title}:\t"));
    if tolerations.is_empty() {
        w.line("<none>");
        return;
    }
    let mut sorted = tolerations.to_vec();
    crate::sort::sort_by(&mut sorted, |a, b| a.key.cmp(&b.key));
    for (i, t) in sorted.iter().enumerate() {
        if i != 0 {
            w.write(0, "\t");
        }
        let mut text = t.key.clone();
        if !t.value.is_empty() {
            text.push_str(&format!("={}", t.value));
        }
        if !t.effect.is_empty() {
            text.push_str(&format!(":{}", t.effect));
        }
        if t.operator.as_deref() == Some("Exists") && t.value.is_empty() {
            text.push_str(if t.key.is_empty() && t.effect.is_empty() { "op=Exists" } else { " op=Exists" });
        }
        if let Some(s) = t.toleration_seconds {
            text.push_str(&format!(" for {s}s"));
        }
        w.write(0, &format!("{text}\n"));
    }
}

fn taints_multiline(w: &mut PrefixWriter, taints: &[Taint]) {
    w.write(0, "Taints:\t");
    if taints.is_empty() {
        w.line("<none>");
        return;
    }
    let mut sorted = taints.to_vec();
    crate::sort::sort_by(&mut sorted, |a, b| format!("{},{}", a.effect, a.key).cmp(&format!("{},{}", b.effect, b.key)));
    for (i, t) in sorted.iter().enumerate() {
        if i != 0 {
            w.write(0, "\t");
        }
        w.write(0, &format!("{t}\n"));
    }
}

/// `describeContainers`: for pods (with statuses) and pod templates (`space` = two spaces).
fn containers(w: &mut PrefixWriter, label: &str, spec: &PodSpec, statuses: Option<&[ContainerStatus]>, space: &str) {
    let none = if spec.containers.is_empty() { " <none>" } else { "" };
    w.write(0, &format!("{space}{label}:{none}\n"));
    let name_indent = if space.is_empty() { "" } else { " " };
    for c in spec.containers.iter() {
        let status = statuses.and_then(|s| s.iter().find(|s| s.name == c.name));
        w.write(1, &format!("{name_indent}{}:\n", c.name));
        if let Some(s) = status {
            w.write(2, &format!("Container ID:\t{}\n", s.container_id));
        }
        w.write(2, &format!("Image:\t{}\n", c.image));
        if let Some(s) = status {
            w.write(2, &format!("Image ID:\t{}\n", s.image_id));
        }
        let port_text = |host: bool| -> String {
            let parts: Vec<String> = c
                .ports
                .iter()
                .map(|p| {
                    let n = if host { p.host_port.unwrap_or(0) } else { p.container_port };
                    let mut s = format!("{n}/{}", p.protocol.as_deref().unwrap_or("TCP"));
                    if let Some(name) = p.name.as_deref().filter(|n| !n.is_empty()) {
                        s.push_str(&format!(" ({name})"));
                    }
                    s
                })
                .collect();
            parts.join(", ")
        };
        let ports = port_text(false);
        if ports.contains(',') {
            w.write(2, &format!("Ports:\t{ports}\n"));
        } else {
            w.write(2, &format!("Port:\t{}\n", if ports.is_empty() { "<none>" } else { &ports }));
        }
        let host_ports = port_text(true);
        if host_ports.contains(',') {
            w.write(2, &format!("Host Ports:\t{host_ports}\n"));
        } else {
            w.write(2, &format!("Host Port:\t{}\n", if host_ports.is_empty() { "<none>" } else { &host_ports }));
        }
        if !c.command.is_empty() {
            w.write(2, "Command:\n");
            for part in c.command.iter().flat_map(|s| s.split('\n')) {
                w.write(3, &format!("{part}\n"));
            }
        }
        if !c.args.is_empty() {
            w.write(2, "Args:\n");
            for part in c.args.iter().flat_map(|s| s.split('\n')) {
                w.write(3, &format!("{part}\n"));
            }
        }
        if let Some(s) = status {
            container_state(w, "State", &s.state);
            if s.last_state.terminated.is_some() {
                container_state(w, "Last State", &s.last_state);
            }
            w.write(2, &format!("Ready:\t{}\n", if s.ready { "True" } else { "False" }));
            w.write(2, &format!("Restart Count:\t{}\n", s.restart_count));
        }
        for (title, list) in [("Limits", &c.resources.limits), ("Requests", &c.resources.requests)] {
            if !list.is_empty() {
                w.write(2, &format!("{title}:\n"));
            }
            for (name, q) in list {
                w.write(3, &format!("{name}:\t{}\n", q.0));
            }
        }
        for (title, probe) in [("Liveness", &c.liveness_probe), ("Readiness", &c.readiness_probe), ("Startup", &c.startup_probe)] {
            if let Some(p) = probe {
                w.write(2, &format!("{title}:\t{}\n", describe_probe(p)));
            }
        }
        container_env(w, c);
        container_mounts(w, c);
    }
}

/// `describeContainerEnvFrom` (only with envFrom) and `describeContainerEnvVars`.
fn container_env(w: &mut PrefixWriter, c: &Container) {
    if !c.env_from.is_empty() {
        w.write(2, "Environment Variables from:\n");
        for e in &c.env_from {
            let (from, r) = match (&e.config_map_ref, &e.secret_ref) {
                (Some(r), _) => ("ConfigMap", Some(r)),
                (None, Some(r)) => ("Secret", Some(r)),
                (None, None) => ("", None),
            };
            let name = r.map(|r| r.name.as_str()).unwrap_or("");
            let optional = r.is_some_and(|r| r.optional == Some(true));
            if e.prefix.is_empty() {
                w.write(3, &format!("{name}\t{from}\tOptional: {optional}\n"));
            } else {
                w.write(3, &format!("{name}\t{from} with prefix '{}'\tOptional: {optional}\n", e.prefix));
            }
        }
    }
    if c.env.is_empty() {
        w.write(2, "Environment:\t<none>\n");
    } else {
        w.write(2, "Environment:\n");
    }
    for e in &c.env {
        let Some(from) = &e.value_from else {
            for (i, line) in e.value.split('\n').enumerate() {
                if i == 0 {
                    w.write(3, &format!("{}:\t{line}\n", e.name));
                } else {
                    w.write(3, &format!("\t{line}\n"));
                }
            }
            continue;
        };
        if let Some(k) = &from.secret_key_ref {
            let optional = k.optional == Some(true);
            w.write(3, &format!("{}:\t<set to the key '{}' in secret '{}'>\tOptional: {optional}\n", e.name, k.key, k.name));
        } else if let Some(k) = &from.config_map_key_ref {
            let optional = k.optional == Some(true);
            w.write(3, &format!("{}:\t<set to the key '{}' of config map '{}'>\tOptional: {optional}\n", e.name, k.key, k.name));
        }
    }
}

/// `describeContainerVolumes`: the mounts by path, `ro`/`rw` and the subPath.
fn container_mounts(w: &mut PrefixWriter, c: &Container) {
    if c.volume_mounts.is_empty() {
        w.write(2, "Mounts:\t<none>\n");
        return;
    }
    w.write(2, "Mounts:\n");
    let mut mounts: Vec<&VolumeMount> = c.volume_mounts.iter().collect();
    mounts.sort_by(|a, b| a.mount_path.cmp(&b.mount_path));
    for m in mounts {
        let mut flags = vec![if m.read_only { "ro".to_string() } else { "rw".to_string() }];
        if !m.sub_path.is_empty() {
            flags.push(format!("path={:?}", m.sub_path));
        }
        w.write(3, &format!("{} from {} ({})\n", m.mount_path, m.name, flags.join(",")));
    }
}

/// `describeVolumes` for the sources kubeloop models; a volume whose source it dropped is
/// `<unknown>`, as kubectl prints a source it does not know.
fn volumes(w: &mut PrefixWriter, volumes: &[Volume], space: &str) {
    if volumes.is_empty() {
        w.write(0, &format!("{space}Volumes:\t<none>\n"));
        return;
    }
    w.write(0, &format!("{space}Volumes:\n"));
    let indent = if space.is_empty() { "" } else { " " };
    for v in volumes {
        w.write(1, &format!("{indent}{}:\n", v.name));
        if let Some(e) = &v.empty_dir {
            let limit = e.size_limit.as_ref().filter(|q| q.milli_value().is_some_and(|m| m > 0)).map(|q| q.0.to_string());
            w.write(2, "Type:\tEmptyDir (a temporary directory that shares a pod's lifetime)\n");
            w.write(2, &format!("Medium:\t{}\n", e.medium));
            w.write(2, &format!("SizeLimit:\t{}\n", limit.as_deref().unwrap_or("<unset>")));
        } else if let Some(s) = &v.secret {
            w.write(2, "Type:\tSecret (a volume populated by a Secret)\n");
            w.write(2, &format!("SecretName:\t{}\n", s.secret_name));
            w.write(2, &format!("Optional:\t{}\n", s.optional == Some(true)));
        } else if let Some(cm) = &v.config_map {
            w.write(2, "Type:\tConfigMap (a volume populated by a ConfigMap)\n");
            w.write(2, &format!("Name:\t{}\n", cm.name));
            w.write(2, &format!("Optional:\t{}\n", cm.optional == Some(true)));
        } else if let Some(h) = &v.host_path {
            w.write(2, "Type:\tHostPath (bare host directory volume)\n");
            w.write(2, &format!("Path:\t{}\n", h.path));
            w.write(2, &format!("HostPathType:\t{}\n", h.type_.as_deref().unwrap_or("<none>")));
        } else if let Some(c) = &v.persistent_volume_claim {
            w.write(2, "Type:\tPersistentVolumeClaim (a reference to a PersistentVolumeClaim in the same namespace)\n");
            w.write(2, &format!("ClaimName:\t{}\n", c.claim_name));
            w.write(2, &format!("ReadOnly:\t{}\n", c.read_only));
        } else {
            w.write(1, "<unknown>\n");
        }
    }
}

/// `DescribeProbe`: the handler as kubectl prints it, then the timing.
fn describe_probe(p: &Probe) -> String {
    let attrs = format!(
        "delay={}s timeout={}s period={}s #success={} #failure={}",
        p.initial_delay_seconds, p.timeout_seconds, p.period_seconds, p.success_threshold, p.failure_threshold
    );
    if let Some(e) = &p.exec {
        // Go prints a []string as `[a b]`.
        return format!("exec [{}] {attrs}", e.command.join(" "));
    }
    if let Some(h) = &p.http_get {
        let scheme = h.scheme.as_deref().unwrap_or("").to_ascii_lowercase();
        return format!("http-get {scheme}://{}:{}{} {attrs}", h.host, h.port, h.path);
    }
    if let Some(t) = &p.tcp_socket {
        return format!("tcp-socket {}:{} {attrs}", t.host, t.port);
    }
    if let Some(g) = &p.grpc {
        return format!("grpc <pod>:{} {} {attrs}", g.port, g.service.as_deref().unwrap_or(""));
    }
    format!("unknown {attrs}")
}

fn container_state(w: &mut PrefixWriter, title: &str, state: &ContainerState) {
    if let Some(r) = &state.running {
        w.write(2, &format!("{title}:\tRunning\n"));
        w.write(3, &format!("Started:\t{}\n", rfc1123z(r.started_at)));
    } else if let Some(wt) = &state.waiting {
        w.write(2, &format!("{title}:\tWaiting\n"));
        if let Some(reason) = wt.reason.as_deref().filter(|r| !r.is_empty()) {
            w.write(3, &format!("Reason:\t{reason}\n"));
        }
    } else if let Some(t) = &state.terminated {
        w.write(2, &format!("{title}:\tTerminated\n"));
        if let Some(reason) = t.reason.as_deref().filter(|r| !r.is_empty()) {
            w.write(3, &format!("Reason:\t{reason}\n"));
        }
        if let Some(message) = t.message.as_deref().filter(|m| !m.is_empty()) {
            w.write(3, &format!("Message:\t{message}\n"));
        }
        w.write(3, &format!("Exit Code:\t{}\n", t.exit_code));
        w.write(3, &format!("Started:\t{}\n", rfc1123z(t.started_at)));
        w.write(3, &format!("Finished:\t{}\n", rfc1123z(t.finished_at)));
    } else {
        w.write(2, &format!("{title}:\tWaiting\n"));
    }
}

/// `DescribeEvents`: flushes what came before, then the Events table.
pub(super) fn events_table(w: &mut PrefixWriter, events: Option<&[Rc<Object>]>, now: Time) {
    let Some(events) = events else { return };
    if events.is_empty() {
        w.write(0, "Events:\t<none>\n");
        return;
    }
    w.flush();
    w.write(0, "Events:\n  Type\tReason\tAge\tFrom\tMessage\n");
    w.write(1, "----\t------\t----\t----\t-------\n");
    for e in events.iter().filter_map(|o| o.as_event()) {
        let first = age(e.first_timestamp, now);
        let interval = if e.count > 1 { format!("{} (x{} over {first})", age(e.last_timestamp, now), e.count) } else { first };
        let source = if e.source.component.is_empty() { e.reporting_component.as_str() } else { e.source.component.as_str() };
        // Only the message: kubectl 1.27 to 1.33 print no field path here (checked with each
        // against `kubeloop serve`).
        let message = e.message.trim();
        w.write(1, &format!("{}\t{}\t{interval}\t{source}\t{message}\n", e.type_, e.reason));
    }
}

fn controlled_by(meta: &ObjectMeta) -> Option<String> {
    meta.controller_ref().map(|r| format!("{}/{}", r.kind, r.name))
}

/// `qos.GetPodQOS`: BestEffort without requests or limits, Guaranteed when every container's
/// cpu and memory limits are set and requests (if any) equal them, else Burstable.
pub fn qos_class(spec: &PodSpec) -> &'static str {
    let any = spec
        .containers
        .iter()
        .any(|c| ["cpu", "memory"].iter().any(|r| c.resources.requests.contains_key(*r) || c.resources.limits.contains_key(*r)));
    if !any {
        return "BestEffort";
    }
    let guaranteed = spec.containers.iter().all(|c| {
        ["cpu", "memory"].iter().all(|r| {
            let value = |q: Option<&Quantity>| q.and_then(|q| q.milli_value());
            match (c.resources.limits.get(*r), c.resources.requests.get(*r)) {
                (Some(l), Some(q)) => value(Some(l)) == value(Some(q)),
                (Some(_), None) => true,
                (None, _) => false,
            }
        })
    });
    if guaranteed {
        "Guaranteed"
    } else {
        "Burstable"
    }
}

pub fn describe_pod(pod: &Pod, events: Option<&[Rc<Object>]>, now: Time) -> String {
    let mut w = PrefixWriter::new();
    let m = &pod.metadata;
    w.write(0, &format!("Name:\t{}\n", m.name));
    w.write(0, &format!("Namespace:\t{}\n", m.namespace));
    if let Some(p) = pod.spec.priority {
        w.write(0, &format!("Priority:\t{p}\n"));
    }
    w.write(0, "Service Account:\tdefault\n");
    match pod.node_name() {
        Some(node) => w.write(0, &format!("Node:\t{node}/{}\n", pod.status.host_ip.as_deref().unwrap_or(""))),
        None => w.write(0, "Node:\t<none>\n"),
    }
    if let Some(t) = pod.status.start_time {
        w.write(0, &format!("Start Time:\t{}\n", rfc1123z(Some(t))));
    }
    labels_multiline(&mut w, "Labels", &m.labels);
    annotations_multiline(&mut w, "Annotations", &m.annotations);
    if m.deletion_timestamp.is_some() && !pod.is_terminal() {
        w.write(0, &format!("Status:\tTerminating (lasts {})\n", age(m.deletion_timestamp, now)));
        w.write(0, &format!("Termination Grace Period:\t{}s\n", m.deletion_grace_period_seconds.unwrap_or(0)));
    } else {
        w.write(0, &format!("Status:\t{}\n", pod.status.phase.map(|p| p.as_str()).unwrap_or("")));
    }
    if let Some(r) = pod.status.reason.as_deref().filter(|r| !r.is_empty()) {
        w.write(0, &format!("Reason:\t{r}\n"));
    }
    if let Some(msg) = pod.status.message.as_deref().filter(|r| !r.is_empty()) {
        w.write(0, &format!("Message:\t{msg}\n"));
    }
    let ip = pod.status.pod_ip.clone().unwrap_or_default();
    w.write(0, &format!("IP:\t{ip}\n"));
    if ip.is_empty() {
        w.write(0, "IPs:\t<none>\n");
    } else {
        w.write(0, "IPs:\n");
        w.write(1, &format!("IP:\t{ip}\n"));
    }
    if let Some(c) = controlled_by(m) {
        w.write(0, &format!("Controlled By:\t{c}\n"));
    }
    if let Some(n) = pod.status.nominated_node_name.as_deref().filter(|n| !n.is_empty()) {
        w.write(0, &format!("NominatedNodeName:\t{n}\n"));
    }
    containers(&mut w, "Containers", &pod.spec, Some(&pod.status.container_statuses), "");
    if !pod.status.conditions.is_empty() {
        w.write(0, "Conditions:\n  Type\tStatus\n");
        for c in &pod.status.conditions {
            w.write(1, &format!("{} \t{} \n", c.type_, c.status));
        }
    }
    volumes(&mut w, &pod.spec.volumes, "");
    w.write(0, &format!("QoS Class:\t{}\n", qos_class(&pod.spec)));
    labels_multiline(&mut w, "Node-Selectors", &pod.spec.node_selector);
    tolerations_multiline(&mut w, "Tolerations", &pod.spec.tolerations);
    events_table(&mut w, events, now);
    w.finish()
}

/// `DescribePodTemplate` written without alignment, as `rollout history --revision` prints it.
pub fn pod_template_raw(t: &PodTemplateSpec) -> String {
    let mut w = PrefixWriter::raw();
    pod_template(&mut w, t);
    w.finish()
}

/// `DescribePodTemplate`, shared by deployments and replica sets.
fn pod_template(w: &mut PrefixWriter, t: &PodTemplateSpec) {
    w.write(0, "Pod Template:\n");
    labels_multiline(w, "  Labels", &t.metadata.labels);
    if !t.metadata.annotations.is_empty() {
        annotations_multiline(w, "  Annotations", &t.metadata.annotations);
    }
    containers(w, "Containers", &t.spec, None, "  ");
    volumes(w, &t.spec.volumes, "  ");
    labels_multiline(w, "  Node-Selectors", &t.spec.node_selector);
    tolerations_multiline(w, "  Tolerations", &t.spec.tolerations);
}

/// The replica sets a deployment controls, split as kubectl's deployment util splits them:
/// the new one (oldest with the deployment's template, ignoring pod-template-hash) and the rest.
pub fn deployment_replica_sets(sim: &Sim, d: &Deployment) -> (Vec<Rc<Object>>, Option<Rc<Object>>) {
    let mut owned: Vec<Rc<Object>> = sim
        .api()
        .items(Kind::ReplicaSet, Some(&d.metadata.namespace))
        .filter(|o| o.meta().controller_ref().is_some_and(|r| r.uid == d.metadata.uid))
        .cloned()
        .collect();
    crate::sort::sort_by(&mut owned, |a, b| {
        (a.meta().creation_timestamp, &a.meta().name).cmp(&(b.meta().creation_timestamp, &b.meta().name))
    });
    let new_index = owned.iter().position(|o| o.as_replica_set().is_some_and(|rs| equal_ignore_hash(&rs.spec.template, &d.spec.template)));
    let new = new_index.map(|i| owned.remove(i));
    (owned, new)
}

/// Two pod templates are the same revision if they differ only in `pod-template-hash`.
pub fn equal_ignore_hash(a: &PodTemplateSpec, b: &PodTemplateSpec) -> bool {
    let strip = |t: &PodTemplateSpec| {
        let mut t = t.clone();
        t.metadata.labels.remove("pod-template-hash");
        t
    };
    strip(a) == strip(b)
}

fn replica_sets_line(list: &[Rc<Object>]) -> String {
    let parts: Vec<String> = list
        .iter()
        .filter_map(|o| o.as_replica_set())
        .map(|rs| format!("{} ({}/{} replicas created)", rs.metadata.name, rs.status.replicas, rs.spec.replicas.unwrap_or(1)))
        .collect();
    if parts.is_empty() {
        "<none>".into()
    } else {
        parts.join(", ")
    }
}

pub fn describe_deployment(sim: &Sim, d: &Deployment, events: Option<&[Rc<Object>]>, now: Time) -> String {
    let mut w = PrefixWriter::new();
    let m = &d.metadata;
    w.write(0, &format!("Name:\t{}\n", m.name));
    w.write(0, &format!("Namespace:\t{}\n", m.namespace));
    w.write(0, &format!("CreationTimestamp:\t{}\n", rfc1123z(m.creation_timestamp)));
    labels_multiline(&mut w, "Labels", &m.labels);
    annotations_multiline(&mut w, "Annotations", &m.annotations);
    w.write(0, &format!("Selector:\t{}\n", selector_string(&d.spec.selector)));
    let s = &d.status;
    w.write(
        0,
        &format!(
            "Replicas:\t{} desired | {} updated | {} total | {} available | {} unavailable\n",
            d.spec.replicas.unwrap_or(1),
            s.updated_replicas,
            s.replicas,
            s.available_replicas,
            s.unavailable_replicas
        ),
    );
    w.write(0, &format!("StrategyType:\t{}\n", d.spec.strategy.type_.as_deref().unwrap_or("")));
    w.write(0, &format!("MinReadySeconds:\t{}\n", d.spec.min_ready_seconds));
    if let Some(ru) = &d.spec.strategy.rolling_update {
        let show = |v: &Option<IntOrString>| v.as_ref().map(ToString::to_string).unwrap_or_else(|| "0".into());
        w.write(0, &format!("RollingUpdateStrategy:\t{} max unavailable, {} max surge\n", show(&ru.max_unavailable), show(&ru.max_surge)));
    }
    pod_template(&mut w, &d.spec.template);
    if !s.conditions.is_empty() {
        w.write(0, "Conditions:\n  Type\tStatus\tReason\n");
        w.write(1, "----\t------\t------\n");
        for c in &s.conditions {
            w.write(1, &format!("{} \t{}\t{}\n", c.type_, c.status, c.reason.as_deref().unwrap_or("")));
        }
    }
    let (old, new) = deployment_replica_sets(sim, d);
    if !old.is_empty() || new.is_some() {
        w.write(0, &format!("OldReplicaSets:\t{}\n", replica_sets_line(&old)));
        w.write(0, &format!("NewReplicaSet:\t{}\n", replica_sets_line(&new.into_iter().collect::<Vec<_>>())));
    }
    events_table(&mut w, events, now);
    w.finish()
}

pub fn describe_replica_set(sim: &Sim, rs: &ReplicaSet, events: Option<&[Rc<Object>]>, now: Time) -> String {
    let mut w = PrefixWriter::new();
    let m = &rs.metadata;
    w.write(0, &format!("Name:\t{}\n", m.name));
    w.write(0, &format!("Namespace:\t{}\n", m.namespace));
    w.write(0, &format!("Selector:\t{}\n", selector_string(&rs.spec.selector)));
    labels_multiline(&mut w, "Labels", &m.labels);
    annotations_multiline(&mut w, "Annotations", &m.annotations);
    if let Some(c) = controlled_by(m) {
        w.write(0, &format!("Controlled By:\t{c}\n"));
    }
    w.write(0, &format!("Replicas:\t{} current / {} desired\n", rs.status.replicas, rs.spec.replicas.unwrap_or(1)));
    pods_status(&mut w, sim, m, &rs.spec.selector);
    pod_template(&mut w, &rs.spec.template);
    events_table(&mut w, events, now);
    w.finish()
}

/// `getPodStatusForController`: the phases of the pods the controller owns that its selector
/// matches, as the `Pods Status:` line.
fn pods_status(w: &mut PrefixWriter, sim: &Sim, owner: &ObjectMeta, selector: &LabelSelector) {
    let (mut running, mut waiting, mut succeeded, mut failed) = (0, 0, 0, 0);
    for o in sim.api().items(Kind::Pod, Some(&owner.namespace)) {
        let Some(p) = o.as_pod() else { continue };
        if !selector.matches(&p.metadata.labels) || p.metadata.controller_ref().is_none_or(|r| r.uid != owner.uid) {
            continue;
        }
        match p.phase() {
            PodPhase::Running => running += 1,
            PodPhase::Pending => waiting += 1,
            PodPhase::Succeeded => succeeded += 1,
            PodPhase::Failed => failed += 1,
            PodPhase::Unknown => {}
        }
    }
    w.write(0, &format!("Pods Status:\t{running} Running / {waiting} Waiting / {succeeded} Succeeded / {failed} Failed\n"));
}

/// `describeDaemonSet`: the node counts of the status, the pods' phases and the template.
pub fn describe_daemon_set(sim: &Sim, ds: &DaemonSet, events: Option<&[Rc<Object>]>, now: Time) -> String {
    let mut w = PrefixWriter::new();
    let (m, st) = (&ds.metadata, &ds.status);
    w.write(0, &format!("Name:\t{}\n", m.name));
    w.write(0, &format!("Namespace:\t{}\n", m.namespace));
    w.write(0, &format!("Selector:\t{}\n", selector_string(&ds.spec.selector)));
    w.write(0, &format!("Node-Selector:\t{}\n", crate::command::printers::format_labels(&ds.spec.template.spec.node_selector)));
    labels_multiline(&mut w, "Labels", &m.labels);
    annotations_multiline(&mut w, "Annotations", &m.annotations);
    w.write(0, &format!("Desired Number of Nodes Scheduled: {}\n", st.desired_number_scheduled));
    w.write(0, &format!("Current Number of Nodes Scheduled: {}\n", st.current_number_scheduled));
    w.write(0, &format!("Number of Nodes Scheduled with Up-to-date Pods: {}\n", st.updated_number_scheduled));
    w.write(0, &format!("Number of Nodes Scheduled with Available Pods: {}\n", st.number_available));
    w.write(0, &format!("Number of Nodes Misscheduled: {}\n", st.number_misscheduled));
    pods_status(&mut w, sim, m, &ds.spec.selector);
    pod_template(&mut w, &ds.spec.template);
    events_table(&mut w, events, now);
    w.finish()
}

/// `describeStatefulSet`: desired and total replicas, the update strategy with its partition,
/// the pods' phases, the template and the volume claim templates.
pub fn describe_stateful_set(sim: &Sim, sts: &StatefulSet, events: Option<&[Rc<Object>]>, now: Time) -> String {
    let mut w = PrefixWriter::new();
    let m = &sts.metadata;
    w.write(0, &format!("Name:\t{}\n", m.name));
    w.write(0, &format!("Namespace:\t{}\n", m.namespace));
    w.write(0, &format!("CreationTimestamp:\t{}\n", rfc1123z(m.creation_timestamp)));
    w.write(0, &format!("Selector:\t{}\n", selector_string(&sts.spec.selector)));
    labels_multiline(&mut w, "Labels", &m.labels);
    annotations_multiline(&mut w, "Annotations", &m.annotations);
    w.write(0, &format!("Replicas:\t{} desired | {} total\n", sts.replicas(), sts.status.replicas));
    w.write(0, &format!("Update Strategy:\t{}\n", sts.spec.update_strategy.type_.as_deref().unwrap_or("")));
    if let Some(partition) = sts.spec.update_strategy.rolling_update.as_ref().and_then(|r| r.partition) {
        w.write(1, &format!("Partition:\t{partition}\n"));
    }
    pods_status(&mut w, sim, m, &sts.spec.selector);
    pod_template(&mut w, &sts.spec.template);
    volume_claim_templates(&mut w, &sts.spec.volume_claim_templates);
    events_table(&mut w, events, now);
    w.finish()
}

/// `describePersistentVolumeClaim`: class, phase, volume, size and modes once bound, and the
/// pods that mount it (`Used By`).
pub fn describe_persistent_volume_claim(sim: &Sim, pvc: &PersistentVolumeClaim, events: Option<&[Rc<Object>]>, now: Time) -> String {
    let mut w = PrefixWriter::new();
    let m = &pvc.metadata;
    w.write(0, &format!("Name:\t{}\n", m.name));
    w.write(0, &format!("Namespace:\t{}\n", m.namespace));
    w.write(0, &format!("StorageClass:\t{}\n", pvc.spec.storage_class_name.as_deref().unwrap_or("")));
    let status = if m.is_deleting() { format!("Terminating (lasts {})", age(m.deletion_timestamp, now)) } else { pvc.phase().to_string() };
    w.write(0, &format!("Status:\t{status}\n"));
    w.write(0, &format!("Volume:\t{}\n", pvc.spec.volume_name));
    labels_multiline(&mut w, "Labels", &m.labels);
    annotations_multiline(&mut w, "Annotations", &m.annotations);
    w.write(0, &format!("Finalizers:\t[{}]\n", m.finalizers.join(" ")));
    let capacity = pvc.status.capacity.get("storage").map(|q| q.0.clone()).unwrap_or_default();
    w.write(0, &format!("Capacity:\t{capacity}\n"));
    w.write(0, &format!("Access Modes:\t{}\n", access_modes_string(&pvc.status.access_modes)));
    w.write(0, &format!("VolumeMode:\t{}\n", pvc.spec.volume_mode.as_deref().unwrap_or("")));
    let users: Vec<String> = sim
        .api()
        .items(Kind::Pod, Some(&m.namespace))
        .filter_map(|o| o.as_pod())
        .filter(|p| p.spec.volumes.iter().any(|v| v.persistent_volume_claim.as_ref().is_some_and(|c| c.claim_name == m.name.as_str())))
        .map(|p| p.metadata.name.to_string())
        .collect();
    let used_by = if users.is_empty() { "<none>".to_string() } else { users.join("\n\t") };
    w.write(0, &format!("Used By:\t{used_by}\n"));
    events_table(&mut w, events, now);
    w.finish()
}

/// `describePersistentVolume`: class, phase, claim, reclaim policy, modes, size and source.
pub fn describe_persistent_volume(pv: &PersistentVolume, events: Option<&[Rc<Object>]>, now: Time) -> String {
    let mut w = PrefixWriter::new();
    let m = &pv.metadata;
    w.write(0, &format!("Name:\t{}\n", m.name));
    labels_multiline(&mut w, "Labels", &m.labels);
    annotations_multiline(&mut w, "Annotations", &m.annotations);
    w.write(0, &format!("Finalizers:\t[{}]\n", m.finalizers.join(" ")));
    w.write(0, &format!("StorageClass:\t{}\n", pv.spec.storage_class_name));
    w.write(0, &format!("Status:\t{}\n", pv.phase()));
    let claim = pv.spec.claim_ref.as_ref().map(|c| format!("{}/{}", c.namespace, c.name)).unwrap_or_default();
    w.write(0, &format!("Claim:\t{claim}\n"));
    w.write(0, &format!("Reclaim Policy:\t{}\n", pv.spec.persistent_volume_reclaim_policy.as_deref().unwrap_or("")));
    w.write(0, &format!("Access Modes:\t{}\n", access_modes_string(&pv.spec.access_modes)));
    w.write(0, &format!("VolumeMode:\t{}\n", pv.spec.volume_mode.as_deref().unwrap_or("")));
    w.write(0, &format!("Capacity:\t{}\n", pv.spec.capacity.get("storage").map(|q| q.0.clone()).unwrap_or_default()));
    w.write(0, "Node Affinity:\t<none>\n");
    w.write(0, "Message:\t\n");
    w.write(0, "Source:\n");
    if let Some(h) = &pv.spec.host_path {
        w.write(2, "Type:\tHostPath (bare host directory volume)\n");
        w.write(2, &format!("Path:\t{}\n", h.path));
        w.write(2, &format!("HostPathType:\t{}\n", h.type_.as_deref().unwrap_or("")));
    }
    events_table(&mut w, events, now);
    w.finish()
}

/// `describeStorageClass`.
pub fn describe_storage_class(sc: &StorageClass, events: Option<&[Rc<Object>]>, now: Time) -> String {
    let mut w = PrefixWriter::new();
    w.write(0, &format!("Name:\t{}\n", sc.metadata.name));
    w.write(0, &format!("IsDefaultClass:\t{}\n", if sc.is_default() { "Yes" } else { "No" }));
    let annotations: Vec<String> = sc.metadata.annotations.iter().map(|(k, v)| format!("{k}={v}")).collect();
    w.write(0, &format!("Annotations:\t{}\n", if annotations.is_empty() { "<none>".to_string() } else { annotations.join(",") }));
    w.write(0, &format!("Provisioner:\t{}\n", sc.provisioner));
    w.write(0, "Parameters:\t<none>\n");
    let expansion = sc.allow_volume_expansion.map_or_else(|| "<unset>".to_string(), |b| b.to_string());
    w.write(0, &format!("AllowVolumeExpansion:\t{expansion}\n"));
    w.write(0, "MountOptions:\t<none>\n");
    w.write(0, &format!("ReclaimPolicy:\t{}\n", sc.reclaim_policy.as_deref().unwrap_or("Delete")));
    w.write(0, &format!("VolumeBindingMode:\t{}\n", sc.volume_binding_mode.as_deref().unwrap_or("Immediate")));
    events_table(&mut w, events, now);
    w.finish()
}

/// `describeVolumeClaimTemplates`: each template's class, labels, size and access modes (a Go
/// slice, as kubectl prints it).
fn volume_claim_templates(w: &mut PrefixWriter, templates: &[PersistentVolumeClaim]) {
    if templates.is_empty() {
        w.write(0, "Volume Claims:\t<none>\n");
        return;
    }
    w.write(0, "Volume Claims:\n");
    for pvc in templates {
        w.write(1, &format!("Name:\t{}\n", pvc.metadata.name));
        w.write(1, &format!("StorageClass:\t{}\n", pvc.spec.storage_class_name.as_deref().unwrap_or("")));
        for (title, map) in [("Labels", &*pvc.metadata.labels), ("Annotations", &pvc.metadata.annotations)] {
            let text = if map.is_empty() {
                "<none>".to_string()
            } else {
                map.iter().map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>().join("\n  \t")
            };
            w.write(1, &format!("{title}:\t{text}\n"));
        }
        let capacity = pvc.request().map_or_else(|| "<default>".to_string(), |q| q.0.clone());
        w.write(1, &format!("Capacity:\t{capacity}\n"));
        w.write(1, &format!("Access Modes:\t[{}]\n", pvc.spec.access_modes.join(" ")));
    }
}

/// `describeJob`: the spec's knobs, the start and end, the pod counts the controller wrote.
pub fn describe_job(job: &Job, events: Option<&[Rc<Object>]>, now: Time) -> String {
    let mut w = PrefixWriter::new();
    let (m, spec, st) = (&job.metadata, &job.spec, &job.status);
    w.write(0, &format!("Name:\t{}\n", m.name));
    w.write(0, &format!("Namespace:\t{}\n", m.namespace));
    let selector = spec.selector.as_ref().map(selector_string).filter(|s| s != "<none>").unwrap_or_default();
    w.write(0, &format!("Selector:\t{selector}\n"));
    labels_multiline(&mut w, "Labels", &m.labels);
    annotations_multiline(&mut w, "Annotations", &m.annotations);
    if let Some(c) = controlled_by(m) {
        w.write(0, &format!("Controlled By:\t{c}\n"));
    }
    if let Some(p) = spec.parallelism {
        w.write(0, &format!("Parallelism:\t{p}\n"));
    }
    match spec.completions {
        Some(c) => w.write(0, &format!("Completions:\t{c}\n")),
        None => w.write(0, "Completions:\t<unset>\n"),
    }
    if let Some(mode) = &spec.completion_mode {
        w.write(0, &format!("Completion Mode:\t{mode}\n"));
    }
    if let Some(s) = spec.suspend {
        w.write(0, &format!("Suspend:\t{s}\n"));
    }
    if let Some(b) = spec.backoff_limit {
        w.write(0, &format!("Backoff Limit:\t{b}\n"));
    }
    if let Some(ttl) = spec.ttl_seconds_after_finished {
        w.write(0, &format!("TTL Seconds After Finished:\t{ttl}\n"));
    }
    if st.start_time.is_some() {
        w.write(0, &format!("Start Time:\t{}\n", rfc1123z(st.start_time)));
    }
    if st.completion_time.is_some() {
        w.write(0, &format!("Completed At:\t{}\n", rfc1123z(st.completion_time)));
    }
    if let (Some(start), Some(end)) = (st.start_time, st.completion_time) {
        w.write(0, &format!("Duration:\t{}\n", human_duration(end.since(start))));
    }
    if let Some(d) = spec.active_deadline_seconds {
        w.write(0, &format!("Active Deadline Seconds:\t{d}s\n"));
    }
    match st.ready {
        Some(ready) => w.write(
            0,
            &format!("Pods Statuses:\t{} Active ({ready} Ready) / {} Succeeded / {} Failed\n", st.active, st.succeeded, st.failed),
        ),
        None => w.write(0, &format!("Pods Statuses:\t{} Active / {} Succeeded / {} Failed\n", st.active, st.succeeded, st.failed)),
    }
    if spec.is_indexed() {
        let done = st.completed_indexes.as_deref().filter(|s| !s.is_empty()).unwrap_or("<none>");
        w.write(0, &format!("Completed Indexes:\t{done}\n"));
    }
    pod_template(&mut w, &spec.template);
    events_table(&mut w, events, now);
    w.finish()
}

/// `describeCronJob`: the schedule and policies, the Job template (`describeJobTemplate`),
/// the last schedule time and the active Jobs.
pub fn describe_cron_job(cj: &CronJob, events: Option<&[Rc<Object>]>, now: Time) -> String {
    let mut w = PrefixWriter::new();
    let (m, spec) = (&cj.metadata, &cj.spec);
    w.write(0, &format!("Name:\t{}\n", m.name));
    w.write(0, &format!("Namespace:\t{}\n", m.namespace));
    labels_multiline(&mut w, "Labels", &m.labels);
    annotations_multiline(&mut w, "Annotations", &m.annotations);
    w.write(0, &format!("Schedule:\t{}\n", spec.schedule));
    w.write(0, &format!("Concurrency Policy:\t{}\n", spec.concurrency_policy));
    let suspend = spec.suspend.map_or("<unset>", |s| if s { "True" } else { "False" });
    w.write(0, &format!("Suspend:\t{suspend}\n"));
    let unset = |v: Option<String>| v.unwrap_or_else(|| "<unset>".into());
    w.write(0, &format!("Successful Job History Limit:\t{}\n", unset(spec.successful_jobs_history_limit.map(|v| v.to_string()))));
    w.write(0, &format!("Failed Job History Limit:\t{}\n", unset(spec.failed_jobs_history_limit.map(|v| v.to_string()))));
    w.write(0, &format!("Starting Deadline Seconds:\t{}\n", unset(spec.starting_deadline_seconds.map(|v| format!("{v}s")))));
    let job = &spec.job_template.spec;
    w.write(0, &format!("Selector:\t{}\n", unset(job.selector.as_ref().map(selector_string))));
    w.write(0, &format!("Parallelism:\t{}\n", unset(job.parallelism.map(|v| v.to_string()))));
    w.write(0, &format!("Completions:\t{}\n", unset(job.completions.map(|v| v.to_string()))));
    if let Some(d) = job.active_deadline_seconds {
        w.write(0, &format!("Active Deadline Seconds:\t{d}s\n"));
    }
    pod_template(&mut w, &job.template);
    let last = cj.status.last_schedule_time.map(|t| rfc1123z(Some(t)));
    w.write(0, &format!("Last Schedule Time:\t{}\n", unset(last)));
    let active: Vec<&str> = cj.status.active.iter().map(|r| r.name.as_str()).collect();
    let active = if active.is_empty() { "<none>".to_string() } else { active.join(", ") };
    w.write(0, &format!("Active Jobs:\t{active}\n"));
    events_table(&mut w, events, now);
    w.finish()
}

/// `describeService`, with the endpoints read from the Service's EndpointSlices as kubectl does.
pub fn describe_service(sim: &Sim, svc: &Service, events: Option<&[Rc<Object>]>, now: Time) -> String {
    let mut w = PrefixWriter::new();
    let m = &svc.metadata;
    let slices: Vec<&EndpointSlice> = sim
        .api()
        .items(Kind::EndpointSlice, Some(&m.namespace))
        .filter_map(|o| o.as_endpoint_slice())
        .filter(|s| s.metadata.labels.get("kubernetes.io/service-name").map(String::as_str) == Some(&*m.name))
        .collect();
    w.write(0, &format!("Name:\t{}\n", m.name));
    w.write(0, &format!("Namespace:\t{}\n", m.namespace));
    labels_multiline(&mut w, "Labels", &m.labels);
    annotations_multiline(&mut w, "Annotations", &m.annotations);
    w.write(0, &format!("Selector:\t{}\n", crate::command::printers::format_labels(&svc.spec.selector)));
    w.write(0, &format!("Type:\t{}\n", svc.type_()));
    if let Some(policy) = &svc.spec.ip_family_policy {
        w.write(0, &format!("IP Family Policy:\t{policy}\n"));
    }
    let families = if svc.spec.ip_families.is_empty() { "<none>".to_string() } else { svc.spec.ip_families.join(",") };
    w.write(0, &format!("IP Families:\t{families}\n"));
    w.write(0, &format!("IP:\t{}\n", svc.spec.cluster_ip.as_deref().unwrap_or("")));
    let ips = if svc.spec.cluster_ips.is_empty() { "<none>".to_string() } else { svc.spec.cluster_ips.join(",") };
    w.write(0, &format!("IPs:\t{ips}\n"));
    if let Some(name) = svc.spec.external_name.as_deref().filter(|n| !n.is_empty()) {
        w.write(0, &format!("External Name:\t{name}\n"));
    }
    for p in &svc.spec.ports {
        let name = if p.name.is_empty() { "<unset>" } else { &p.name };
        let protocol = p.protocol.as_deref().unwrap_or("TCP");
        w.write(0, &format!("Port:\t{name}\t{}/{protocol}\n", p.port));
        let target = p.target_port.as_ref().map(|t| t.to_string()).unwrap_or_default();
        w.write(0, &format!("TargetPort:\t{target}/{protocol}\n"));
        if let Some(node_port) = p.node_port.filter(|n| *n != 0) {
            w.write(0, &format!("NodePort:\t{name}\t{node_port}/{protocol}\n"));
        }
        w.write(0, &format!("Endpoints:\t{}\n", format_endpoint_slices(&slices, Some(&p.name))));
    }
    w.write(0, &format!("Session Affinity:\t{}\n", svc.spec.session_affinity.as_deref().unwrap_or("None")));
    if let Some(policy) = &svc.spec.external_traffic_policy {
        w.write(0, &format!("External Traffic Policy:\t{policy}\n"));
    }
    if let Some(policy) = &svc.spec.internal_traffic_policy {
        w.write(0, &format!("Internal Traffic Policy:\t{policy}\n"));
    }
    events_table(&mut w, events, now);
    w.finish()
}

/// `formatEndpointSlices`: `ip:port` of the ready endpoints for the named port, the first three
/// then `+ N more...`; `<none>` without slices. (As upstream, "more" is decided before an endpoint
/// is found not ready.)
pub fn format_endpoint_slices(slices: &[&EndpointSlice], port_name: Option<&str>) -> String {
    if slices.is_empty() {
        return "<none>".into();
    }
    const MAX: usize = 3;
    let (mut list, mut more, mut count) = (Vec::new(), false, 0usize);
    let mut visit = |e: &Endpoint, port: Option<i64>, list: &mut Vec<String>| {
        if list.len() == MAX {
            more = true;
        }
        if e.conditions.ready == Some(false) {
            return;
        }
        if !more {
            let addr = e.addresses.first().cloned().unwrap_or_default();
            list.push(port.map_or(addr.clone(), |p| format!("{addr}:{p}")));
        }
        count += 1;
    };
    for s in slices {
        if s.ports.is_empty() {
            s.endpoints.iter().for_each(|e| visit(e, None, &mut list));
            continue;
        }
        for p in s.ports.iter().filter(|p| port_name.is_none_or(|n| p.name.as_deref().unwrap_or("") == n)) {
            s.endpoints.iter().for_each(|e| visit(e, Some(p.port.unwrap_or(0)), &mut list));
        }
    }
    let joined = list.join(",");
    if more {
        format!("{joined} + {} more...", count - MAX)
    } else {
        joined
    }
}

/// `describeEndpoints`: each subset's ready and not-ready addresses and its ports.
pub fn describe_endpoints(ep: &Endpoints, events: Option<&[Rc<Object>]>, now: Time) -> String {
    let mut w = PrefixWriter::new();
    let m = &ep.metadata;
    w.write(0, &format!("Name:\t{}\n", m.name));
    w.write(0, &format!("Namespace:\t{}\n", m.namespace));
    labels_multiline(&mut w, "Labels", &m.labels);
    annotations_multiline(&mut w, "Annotations", &m.annotations);
    w.write(0, "Subsets:\n");
    let ips = |list: &[EndpointAddress]| {
        if list.is_empty() {
            "<none>".to_string()
        } else {
            list.iter().map(|a| a.ip.as_str()).collect::<Vec<_>>().join(",")
        }
    };
    for ss in &ep.subsets {
        w.write(1, &format!("Addresses:\t{}\n", ips(&ss.addresses)));
        w.write(1, &format!("NotReadyAddresses:\t{}\n", ips(&ss.not_ready_addresses)));
        ports_table(&mut w, 1, &ss.ports, "<none>");
        w.write(0, "\n");
    }
    events_table(&mut w, events, now);
    w.finish()
}

/// The `Ports:` table an Endpoints subset and an EndpointSlice both print (Name, Port,
/// Protocol; an unnamed or unset value as `<unset>`), at `level`, or `Ports: EMPTY` without ports.
fn ports_table(w: &mut PrefixWriter, level: usize, ports: &[EndpointPort], empty: &str) {
    if ports.is_empty() {
        w.write(level, &format!("Ports: {empty}\n"));
        return;
    }
    w.write(level, "Ports:\n");
    w.write(level + 1, "Name\tPort\tProtocol\n");
    w.write(level + 1, "----\t----\t--------\n");
    for p in ports {
        let name = p.name.as_deref().filter(|n| !n.is_empty()).unwrap_or("<unset>");
        let port = p.port.map_or_else(|| "<unset>".to_string(), |n| n.to_string());
        w.write(level + 1, &format!("{name}\t{port}\t{}\n", p.protocol.as_deref().unwrap_or("TCP")));
    }
}

/// `describeEndpointSliceV1`: the address type, the ports, and each endpoint with its
/// addresses, its ready condition, its pod, node and zone. (kubeloop's endpoints carry no
/// hostname: only a StatefulSet's pods would have one.)
pub fn describe_endpoint_slice(slice: &EndpointSlice, events: Option<&[Rc<Object>]>, now: Time) -> String {
    let mut w = PrefixWriter::new();
    let m = &slice.metadata;
    w.write(0, &format!("Name:\t{}\n", m.name));
    w.write(0, &format!("Namespace:\t{}\n", m.namespace));
    labels_multiline(&mut w, "Labels", &m.labels);
    annotations_multiline(&mut w, "Annotations", &m.annotations);
    w.write(0, &format!("AddressType:\t{}\n", slice.address_type));
    ports_table(&mut w, 0, &slice.ports, "<unset>");
    if slice.endpoints.is_empty() {
        w.write(0, "Endpoints: <none>\n");
    } else {
        w.write(0, "Endpoints:\n");
        let unset = |v: Option<&str>| v.unwrap_or("<unset>").to_string();
        for e in &slice.endpoints {
            let addresses = if e.addresses.is_empty() { "<none>".to_string() } else { e.addresses.join(", ") };
            w.write(1, &format!("- Addresses:\t{addresses}\n"));
            w.write(2, "Conditions:\n");
            w.write(3, &format!("Ready:\t{}\n", unset(e.conditions.ready.map(|r| if r { "true" } else { "false" }))));
            w.write(2, "Hostname:\t<unset>\n");
            if let Some(r) = &e.target_ref {
                w.write(2, &format!("TargetRef:\t{}/{}\n", r.kind, r.name));
            }
            w.write(2, &format!("NodeName:\t{}\n", unset(e.node_name.as_deref())));
            w.write(2, &format!("Zone:\t{}\n", unset(e.zone.as_deref())));
        }
    }
    events_table(&mut w, events, now);
    w.finish()
}

/// `describeNamespace`: its phase, the conditions the namespace controller writes while it
/// empties a deleted namespace, and (none being modelled) no quota or limit range.
pub fn describe_namespace(ns: &Namespace) -> String {
    let mut w = PrefixWriter::new();
    let m = &ns.metadata;
    w.write(0, &format!("Name:\t{}\n", m.name));
    labels_multiline(&mut w, "Labels", &m.labels);
    annotations_multiline(&mut w, "Annotations", &m.annotations);
    w.write(0, &format!("Status:\t{}\n", ns.phase()));
    if !ns.status.conditions.is_empty() {
        w.write(0, "Conditions:\n");
        w.write(1, "Type\tStatus\tLastTransitionTime\tReason\tMessage\n");
        w.write(1, "----\t------\t------------------\t------\t-------\n");
        for c in &ns.status.conditions {
            let (reason, message) = (c.reason.as_deref().unwrap_or(""), c.message.as_deref().unwrap_or(""));
            w.write(1, &format!("{}\t{}\t{}\t{reason}\t{message}\n", c.type_, c.status, rfc1123z(c.last_transition_time)));
        }
    }
    w.write(0, "\nNo resource quota.\n");
    w.write(0, "\nNo LimitRange resource.\n");
    w.finish()
}

/// `describeHorizontalPodAutoscalerV2`: the target, each metric as current / target, the bounds,
/// the target's replicas and the controller's conditions.
pub fn describe_horizontal_pod_autoscaler(hpa: &HorizontalPodAutoscaler, events: Option<&[Rc<Object>]>, now: Time) -> String {
    let mut w = PrefixWriter::new();
    let m = &hpa.metadata;
    let (spec, status) = (&hpa.spec, &hpa.status);
    w.write(0, &format!("Name:\t{}\n", m.name));
    w.write(0, &format!("Namespace:\t{}\n", m.namespace));
    labels_multiline(&mut w, "Labels", &m.labels);
    annotations_multiline(&mut w, "Annotations", &m.annotations);
    w.write(0, &format!("CreationTimestamp:\t{}\n", rfc1123z(m.creation_timestamp)));
    w.write(0, &format!("Reference:\t{}/{}\n", spec.scale_target_ref.kind, spec.scale_target_ref.name));
    w.write(0, "Metrics:\t( current / target )\n");
    for (i, metric) in spec.metrics.iter().enumerate() {
        let Some(resource) = &metric.resource else {
            w.write(1, &format!("{} metric:\t<unknown> / <unknown>\n", metric.type_));
            continue;
        };
        let current = status.current_metrics.get(i).and_then(|c| c.resource.as_ref()).map(|r| &r.current);
        let now_text = match current {
            Some(c) => format!("{}% ({})", c.average_utilization.unwrap_or(0), c.average_value.as_deref().unwrap_or("0")),
            None => "<unknown>".into(),
        };
        let target = resource.target.average_utilization.map_or_else(|| "<auto>".to_string(), |u| format!("{u}%"));
        w.write(1, &format!("resource {} on pods  (as a percentage of request):\t{now_text} / {target}\n", resource.name));
    }
    w.write(0, &format!("Min replicas:\t{}\n", spec.min_replicas.unwrap_or(1)));
    w.write(0, &format!("Max replicas:\t{}\n", spec.max_replicas));
    w.write(
        0,
        &format!("{} pods:\t{} current / {} desired\n", spec.scale_target_ref.kind, status.current_replicas, status.desired_replicas),
    );
    if !status.conditions.is_empty() {
        w.write(0, "Conditions:\n");
        w.write(1, "Type\tStatus\tReason\tMessage\n");
        w.write(1, "----\t------\t------\t-------\n");
        for c in &status.conditions {
            w.write(1, &format!("{}\t{}\t{}\t{}\n", c.type_, c.status, c.reason, c.message));
        }
    }
    events_table(&mut w, events, now);
    w.finish()
}

/// `describePodDisruptionBudgetV1`: the bound as written, the selector, and the status the
/// disruption controller keeps.
pub fn describe_pod_disruption_budget(pdb: &PodDisruptionBudget, events: Option<&[Rc<Object>]>, now: Time) -> String {
    let mut w = PrefixWriter::new();
    let m = &pdb.metadata;
    w.write(0, &format!("Name:\t{}\n", m.name));
    w.write(0, &format!("Namespace:\t{}\n", m.namespace));
    if let Some(min) = &pdb.spec.min_available {
        w.write(0, &format!("Min available:\t{min}\n"));
    } else if let Some(max) = &pdb.spec.max_unavailable {
        w.write(0, &format!("Max unavailable:\t{max}\n"));
    }
    let selector = pdb.spec.selector.as_ref().map(LabelSelector::to_query).unwrap_or_default();
    w.write(0, &format!("Selector:\t{selector}\n"));
    w.write(0, "Status:\n");
    let status = &pdb.status;
    w.write(2, &format!("Allowed disruptions:\t{}\n", status.disruptions_allowed));
    w.write(2, &format!("Current:\t{}\n", status.current_healthy));
    w.write(2, &format!("Desired:\t{}\n", status.desired_healthy));
    w.write(2, &format!("Total:\t{}\n", status.expected_pods));
    events_table(&mut w, events, now);
    w.finish()
}

/// `describeConfigMap`: each value in full, binary values by size, then the events.
pub fn describe_config_map(cm: &ConfigMap, events: Option<&[Rc<Object>]>, now: Time) -> String {
    let mut w = PrefixWriter::new();
    let m = &cm.metadata;
    w.write(0, &format!("Name:\t{}\n", m.name));
    w.write(0, &format!("Namespace:\t{}\n", m.namespace));
    labels_multiline(&mut w, "Labels", &m.labels);
    annotations_multiline(&mut w, "Annotations", &m.annotations);
    w.write(0, "\nData\n====\n");
    for (k, v) in &cm.data {
        w.write(0, &format!("{k}:\n----\n"));
        w.write(0, &format!("{v}\n"));
        w.write(0, "\n");
    }
    w.write(0, "\nBinaryData\n====\n");
    for (k, v) in &cm.binary_data {
        w.write(0, &format!("{k}: {} bytes\n", v.len()));
    }
    w.write(0, "\n");
    events_table(&mut w, events, now);
    w.finish()
}

/// `describeSecret`: the type, and each value's size only (never its content).
pub fn describe_secret(secret: &Secret) -> String {
    let mut w = PrefixWriter::new();
    let m = &secret.metadata;
    w.write(0, &format!("Name:\t{}\n", m.name));
    w.write(0, &format!("Namespace:\t{}\n", m.namespace));
    labels_multiline(&mut w, "Labels", &m.labels);
    annotations_multiline(&mut w, "Annotations", &m.annotations);
    w.write(0, &format!("\nType:\t{}\n", secret.type_));
    w.write(0, "\nData\n====\n");
    for (k, v) in &secret.data {
        w.write(0, &format!("{k}:\t{} bytes\n", v.len()));
    }
    w.finish()
}

/// A quantity sum as `Quantity.String()` prints it: millicores for cpu, binary or decimal
/// suffixes for bytes.
fn format_cpu(milli: i64) -> String {
    format_millicores(milli)
}

fn format_memory(bytes: i64) -> String {
    if bytes == 0 {
        return "0".into();
    }
    // A sum keeps its operands' format in Kubernetes; without them, the shortest exact form
    // (`384Mi`, `15P`) reads the same way.
    let binary = format_bytes(bytes);
    let decimal = [
        ("E", 1_000_000_000_000_000_000i64),
        ("P", 1_000_000_000_000_000),
        ("T", 1_000_000_000_000),
        ("G", 1_000_000_000),
        ("M", 1_000_000),
        ("k", 1000),
    ]
    .iter()
    .find(|(_, size)| bytes % size == 0)
    .map(|(suffix, size)| format!("{}{suffix}", bytes / size))
    .unwrap_or_else(|| bytes.to_string());
    if decimal.len() < binary.len() {
        decimal
    } else {
        binary
    }
}

/// Requests or limits of all containers: (millicores, bytes), saturating so that absurd
/// quantities cannot overflow.
fn pod_totals(p: &Pod, limits: bool) -> (i64, i64) {
    p.spec.containers.iter().fold((0i64, 0i64), |(cpu, mem), c| {
        let list = if limits { &c.resources.limits } else { &c.resources.requests };
        let get = |name: &str, milli: bool| list.get(name).and_then(|q| if milli { q.milli_value() } else { q.value() }).unwrap_or(0);
        (cpu.saturating_add(get("cpu", true)), mem.saturating_add(get("memory", false)))
    })
}

fn percent(part: i64, whole: i64) -> i64 {
    if whole == 0 {
        0
    } else {
        (part as f64 / whole as f64 * 100.0) as i64
    }
}

pub fn describe_node(sim: &Sim, n: &Node, events: Option<&[Rc<Object>]>, now: Time) -> String {
    let mut w = PrefixWriter::new();
    let m = &n.metadata;
    w.write(0, &format!("Name:\t{}\n", m.name));
    let roles = node_roles(n);
    w.write(0, &format!("Roles:\t{}\n", if roles.is_empty() { "<none>".to_string() } else { roles.join(",") }));
    labels_multiline(&mut w, "Labels", &m.labels);
    annotations_multiline(&mut w, "Annotations", &m.annotations);
    w.write(0, &format!("CreationTimestamp:\t{}\n", rfc1123z(m.creation_timestamp)));
    taints_multiline(&mut w, &n.spec.taints);
    w.write(0, &format!("Unschedulable:\t{}\n", n.spec.unschedulable));
    match sim.api().get(&ObjectKey::new(Kind::Lease, "kube-node-lease", &m.name)).and_then(|o| o.as_lease()) {
        Some(lease) => {
            w.write(0, "Lease:\n");
            w.write(1, &format!("HolderIdentity:\t{}\n", lease.spec.holder_identity.as_deref().unwrap_or("<unset>")));
            w.write(1, "AcquireTime:\t<unset>\n");
            let renew = lease.spec.renew_time.map(|t| rfc1123z(Some(t.0))).unwrap_or_else(|| "<unset>".into());
            w.write(1, &format!("RenewTime:\t{renew}\n"));
        }
        None => w.write(0, &format!("Lease:\tFailed to get lease: leases.coordination.k8s.io {:?} not found\n", m.name)),
    }
    if !n.status.conditions.is_empty() {
        w.write(0, "Conditions:\n  Type\tStatus\tLastHeartbeatTime\tLastTransitionTime\tReason\tMessage\n");
        w.write(1, "----\t------\t-----------------\t------------------\t------\t-------\n");
        for c in &n.status.conditions {
            w.write(
                1,
                &format!(
                    "{} \t{} \t{} \t{} \t{} \t{}\n",
                    c.type_,
                    c.status,
                    rfc1123z(c.last_heartbeat_time),
                    rfc1123z(c.last_transition_time),
                    c.reason.as_deref().unwrap_or(""),
                    c.message.as_deref().unwrap_or("")
                ),
            );
        }
    }
    w.write(0, "Addresses:\n");
    for a in &n.status.addresses {
        w.write(1, &format!("{}:\t{}\n", a.type_, a.address));
    }
    for (title, list) in [("Capacity", &n.status.capacity), ("Allocatable", &n.status.allocatable)] {
        if !list.is_empty() {
            w.write(0, &format!("{title}:\n"));
            for (name, q) in list {
                w.write(0, &format!("  {name}:\t{}\n", q.0));
            }
        }
    }
    let info = &n.status.node_info;
    w.write(0, "System Info:\n");
    for (k, v) in [
        ("Machine ID", ""),
        ("System UUID", ""),
        ("Boot ID", ""),
        ("Kernel Version", ""),
        ("OS Image", info.os_image.as_str()),
        ("Operating System", info.operating_system.as_str()),
        ("Architecture", info.architecture.as_str()),
        ("Container Runtime Version", info.container_runtime_version.as_str()),
        ("Kubelet Version", info.kubelet_version.as_str()),
        // Deprecated and left empty by kubelets since 1.31; kubectl 1.27 to 1.33 still print it.
        ("Kube-Proxy Version", ""),
    ] {
        w.write(0, &format!("  {k}:\t{v}\n"));
    }
    if let Some(cidr) = n.spec.pod_cidr.as_deref().filter(|c| !c.is_empty()) {
        w.write(0, &format!("PodCIDR:\t{cidr}\n"));
        w.write(0, &format!("PodCIDRs:\t{cidr}\n"));
    }
    let pods: Vec<Rc<Object>> = match sim.api().list(&crate::api::ListRequest {
        kind: Some(Kind::Pod),
        field: crate::api::FieldFilter::NodeName(m.name.to_string()),
        ..Default::default()
    }) {
        crate::api::ApiResponse::List { items, .. } => items.into_iter().filter(|o| o.as_pod().is_some_and(|p| !p.is_terminal())).collect(),
        _ => Vec::new(),
    };
    let alloc = if n.status.allocatable.is_empty() {
        let get = |name: &str, milli: bool| {
            n.status.capacity.get(name).and_then(|q| if milli { q.milli_value() } else { q.value() }).unwrap_or(0)
        };
        Allocatable { milli_cpu: get("cpu", true), memory: get("memory", false), pods: get("pods", false) }
    } else {
        n.allocatable()
    };
    w.write(0, &format!("Non-terminated Pods:\t({} in total)\n", pods.len()));
    w.write(1, "Namespace\tName\t\tCPU Requests\tCPU Limits\tMemory Requests\tMemory Limits\tAge\n");
    w.write(1, "---------\t----\t\t------------\t----------\t---------------\t-------------\t---\n");
    let (mut req_cpu, mut req_mem, mut lim_cpu, mut lim_mem) = (0i64, 0i64, 0i64, 0i64);
    for p in pods.iter().filter_map(|o| o.as_pod()) {
        let (rc, rm) = pod_totals(p, false);
        let (lc, lm) = pod_totals(p, true);
        req_cpu = rc.saturating_add(req_cpu);
        req_mem = rm.saturating_add(req_mem);
        lim_cpu = lc.saturating_add(lim_cpu);
        lim_mem = lm.saturating_add(lim_mem);
        w.write(
            1,
            &format!(
                "{}\t{}\t\t{} ({}%)\t{} ({}%)\t{} ({}%)\t{} ({}%)\t{}\n",
                p.metadata.namespace,
                p.metadata.name,
                format_cpu(rc),
                percent(rc, alloc.milli_cpu),
                format_cpu(lc),
                percent(lc, alloc.milli_cpu),
                format_memory(rm),
                percent(rm, alloc.memory),
                format_memory(lm),
                percent(lm, alloc.memory),
                age(p.metadata.creation_timestamp, now)
            ),
        );
    }
    w.write(0, "Allocated resources:\n  (Total limits may be over 100 percent, i.e., overcommitted.)\n");
    w.write(1, "Resource\tRequests\tLimits\n");
    w.write(1, "--------\t--------\t------\n");
    w.write(
        1,
        &format!(
            "cpu\t{} ({}%)\t{} ({}%)\n",
            format_cpu(req_cpu),
            percent(req_cpu, alloc.milli_cpu),
            format_cpu(lim_cpu),
            percent(lim_cpu, alloc.milli_cpu)
        ),
    );
    w.write(
        1,
        &format!(
            "memory\t{} ({}%)\t{} ({}%)\n",
            format_memory(req_mem),
            percent(req_mem, alloc.memory),
            format_memory(lim_mem),
            percent(lim_mem, alloc.memory)
        ),
    );
    w.write(1, "ephemeral-storage\t0 (0%)\t0 (0%)\n");
    events_table(&mut w, events, now);
    w.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamps_print_in_rfc1123z() {
        assert_eq!(rfc1123z(Some(Time(0))), "Thu, 01 Jan 2026 00:00:00 +0000");
        assert_eq!(rfc1123z(Some(Time(86_400_000 * 59 + 3_723_000))), "Sun, 01 Mar 2026 01:02:03 +0000");
        assert_eq!(rfc1123z(None), "Mon, 01 Jan 0001 00:00:00 +0000");
    }

    #[test]
    fn memory_sums_print_in_their_shortest_exact_form() {
        assert_eq!(format_memory(384 << 20), "384Mi");
        assert_eq!(format_memory(15_000_000_000_000_000), "15P");
        assert_eq!(format_memory(1_000_000_000), "1G");
        assert_eq!(format_memory(1500), "1500");
        assert_eq!(format_memory(0), "0");
    }

    #[test]
    fn qos_classes_follow_requests_and_limits() {
        let mut spec = PodSpec {
            containers: vec![Container { name: "a".into(), image: "x".into(), ..Default::default() }].into(),
            ..Default::default()
        };
        assert_eq!(qos_class(&spec), "BestEffort");
        spec.containers[0].resources.requests.insert("cpu".into(), Quantity::new("100m"));
        assert_eq!(qos_class(&spec), "Burstable");
        spec.containers[0].resources.limits.insert("cpu".into(), Quantity::new("0.1"));
        spec.containers[0].resources.limits.insert("memory".into(), Quantity::new("128Mi"));
        assert_eq!(qos_class(&spec), "Guaranteed");
    }

    #[test]
    fn the_events_table_counts_repeats_and_names_sub_objects() {
        let event = |reason: &str, type_: &str, count: i32, first: u64, last: u64, field_path: &str, component: &str, message: &str| {
            Rc::new(Object::Event(Event {
                involved_object: ObjectReference {
                    kind: "Pod".into(),
                    name: "web-1".into(),
                    field_path: field_path.into(),
                    ..Default::default()
                },
                reason: reason.into(),
                message: message.into(),
                source: EventSource { component: component.into(), host: String::new() }.into(),
                first_timestamp: Some(Time(first)),
                last_timestamp: Some(Time(last)),
                count,
                type_: type_.into(),
                ..Default::default()
            }))
        };
        let events = vec![
            event("Scheduled", "Normal", 1, 0, 0, "", "default-scheduler", "Successfully assigned default/web-1 to node-1"),
            event(
                "BackOff",
                "Warning",
                3,
                10_000,
                50_000,
                "spec.containers{nginx}",
                "kubelet",
                "Back-off restarting failed container nginx",
            ),
        ];
        let mut w = PrefixWriter::new();
        w.write(0, "Tolerations:\t<none>\n");
        events_table(&mut w, Some(&events), Time(70_000));
        assert_eq!(
            w.finish(),
            "Tolerations:  <none>\n\
             Events:\n\
             \x20 Type     Reason     Age                From               Message\n\
             \x20 ----     ------     ----               ----               -------\n\
             \x20 Normal   Scheduled  70s                default-scheduler  Successfully assigned default/web-1 to node-1\n\
             \x20 Warning  BackOff    20s (x3 over 60s)  kubelet            Back-off restarting failed container nginx\n"
        );
    }

    #[test]
    fn a_pod_describes_with_kubectls_layout() {
        let pod = Pod {
            metadata: ObjectMeta {
                name: "web-1".into(),
                namespace: "default".into(),
                labels: StringMap::from([("app".to_string(), "web".to_string()), ("pod-template-hash".to_string(), "abc".to_string())])
                    .into(),
                creation_timestamp: Some(Time(0)),
                ..Default::default()
            },
            spec: PodSpec {
                containers: vec![Container {
                    name: "nginx".into(),
                    image: "nginx:1.14.2".into(),
                    ports: vec![ContainerPort { container_port: 80, protocol: Some("TCP".into()), ..Default::default() }],
                    resources: ResourceRequirements {
                        requests: [("cpu".to_string(), Quantity::new("100m"))].into(),
                        limits: Default::default(),
                    },
                    ..Default::default()
                }]
                .into(),
                ..Default::default()
            }
            .into(),
            status: PodStatus { phase: Some(PodPhase::Pending), ..Default::default() },
        };
        let text = describe_pod(&pod, Some(&[]), Time(5000));
        assert_eq!(
            text,
            "Name:             web-1\n\
             Namespace:        default\n\
             Service Account:  default\n\
             Node:             <none>\n\
             Labels:           app=web\n\
             \x20                 pod-template-hash=abc\n\
             Annotations:      <none>\n\
             Status:           Pending\n\
             IP:               \n\
             IPs:              <none>\n\
             Containers:\n\
             \x20 nginx:\n\
             \x20   Image:      nginx:1.14.2\n\
             \x20   Port:       80/TCP\n\
             \x20   Host Port:  0/TCP\n\
             \x20   Requests:\n\
             \x20     cpu:        100m\n\
             \x20   Environment:  <none>\n\
             \x20   Mounts:       <none>\n\
             Volumes:          <none>\n\
             QoS Class:        Burstable\n\
             Node-Selectors:   <none>\n\
             Tolerations:      <none>\n\
             Events:           <none>\n"
        );
    }
}
