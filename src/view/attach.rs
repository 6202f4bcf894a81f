//! The stage attached to a real Kubernetes API (`?cluster=/`): what the page asks the API for,
//! how it reads the answers, and which loop made each change it sees.
//!
//! It exists because a cluster the page does not run tells it only what any client sees: the
//! objects, their changes in a watch, and Events. Nothing says "kube-scheduler bound this pod";
//! the page infers it from what changed (a pod's `spec.nodeName` set), and confirms it from
//! what the loops report about themselves: an Event's reporter (`default-scheduler`'s
//! Scheduled, `replicaset-controller`'s SuccessfulCreate, a node's kubelet's Pulled, Created
//! and Started) or the newest `managedFields` manager when the server writes them. Each caption
//! says which: `(event Scheduled)`, `(managedFields: kubelet)`, or `(inferred: …)`.
//!
//! Everything here is plain data and pure functions, so native tests check it; the engine's
//! side (requests, the queue of observed changes, pacing) is `play::attach`.

use crate::command::printers::{pod_ready, pod_status};
use crate::model::{Event, Kind, Object, ObjectKey, Pod};
use crate::view::loops::ComponentView;
use crate::view::stage::short_pod;
use crate::view::story::Caption;
use serde_json::Value;
use std::collections::VecDeque;

/// The kinds the stage reads from the cluster, in the order they are listed: the nodes first,
/// so pods have somewhere to be drawn.
pub const KINDS: [Kind; 7] = [Kind::Node, Kind::Pod, Kind::ReplicaSet, Kind::Deployment, Kind::Service, Kind::EndpointSlice, Kind::Event];

/// `/api/v1/pods`, `/apis/apps/v1/replicasets` below `base` (the API's root on this origin: `/`).
pub fn collection_path(base: &str, kind: Kind) -> String {
    let root = base.trim_end_matches('/');
    let version = kind.api_version();
    let prefix = if version.contains('/') { "apis" } else { "api" };
    format!("{root}/{prefix}/{version}/{}", kind.plural())
}

/// An object's path: `/api/v1/namespaces/default/pods/web-x`.
pub fn object_path(base: &str, kind: Kind, namespace: &str, name: &str) -> String {
    let root = base.trim_end_matches('/');
    let version = kind.api_version();
    let prefix = if version.contains('/') { "apis" } else { "api" };
    if namespace.is_empty() {
        format!("{root}/{prefix}/{version}/{}/{name}", kind.plural())
    } else {
        format!("{root}/{prefix}/{version}/namespaces/{namespace}/{}/{name}", kind.plural())
    }
}

/// The watch of `kind` from `resource_version`, with bookmarks (so a quiet watch still moves on).
pub fn watch_url(base: &str, kind: Kind, resource_version: &str) -> String {
    format!("{}?watch=1&resourceVersion={resource_version}&allowWatchBookmarks=true", collection_path(base, kind))
}

/// What a watch event or list item did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ChangeType {
    Added,
    Modified,
    Deleted,
}

/// The newest `managedFields` entry of an object: who wrote it last, by the server's account.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct Manager {
    pub manager: String,
    pub subresource: String,
}

/// One change seen on the cluster.
#[derive(Clone, Debug, PartialEq)]
pub struct Observed {
    pub change: ChangeType,
    pub object: Object,
    /// The cluster's own resourceVersion of the object (the store keeps its own numbering).
    pub resource_version: String,
    pub manager: Option<Manager>,
}

/// One line of a watch stream.
#[derive(Clone, Debug, PartialEq)]
pub enum WatchLine {
    /// Boxed: an object is large, and the other lines are a word.
    Change(Box<Observed>),
    /// A BOOKMARK: nothing changed, the watch is at this resourceVersion.
    Bookmark(String),
    /// `410 Gone` (the resourceVersion was compacted): list again.
    Gone,
    /// Any other ERROR event: its message.
    Failed(String),
}

/// Reads one object of `kind` from the wire (a list's items carry no `kind`).
pub fn read_object(kind: Kind, value: &Value) -> Result<Observed, String> {
    let mut clamped = value.clone();
    clamp_times(&mut clamped);
    // A list's items carry no kind: the list's is theirs. (Through `from_json`, the one caller of
    // the decoders, so the page holds them once.)
    if let Value::Object(fields) = &mut clamped {
        fields.insert("kind".into(), Value::String(kind.as_str().into()));
        fields.insert("apiVersion".into(), Value::String(kind.api_version().into()));
    }
    let object = Object::from_json(clamped)?;
    let meta = value.get("metadata");
    let resource_version = meta.and_then(|m| m.get("resourceVersion")).and_then(Value::as_str).unwrap_or_default().to_string();
    Ok(Observed { change: ChangeType::Added, object, resource_version, manager: meta.and_then(newest_manager) })
}

/// The simulation's time starts at its epoch (2026-01-01T00:00:00Z) and cannot name an earlier
/// instant, so a real cluster's older timestamps are read as the epoch: such an object's age is
/// understated, and it is still drawn.
fn clamp_times(value: &mut Value) {
    match value {
        Value::String(text) => {
            let year = text.get(..4).and_then(|y| y.parse::<u32>().ok());
            if text.len() >= 20 && text.as_bytes().get(10) == Some(&b'T') && year.is_some_and(|y| y < 2026) {
                *text = "2026-01-01T00:00:00Z".to_string();
            }
        }
        Value::Array(items) => items.iter_mut().for_each(clamp_times),
        Value::Object(fields) => fields.values_mut().for_each(clamp_times),
        _ => {}
    }
}

/// The `managedFields` entry with the latest `time` (the last written on a tie).
fn newest_manager(meta: &Value) -> Option<Manager> {
    let entries = meta.get("managedFields")?.as_array()?;
    let text = |e: &Value, k: &str| e.get(k).and_then(Value::as_str).unwrap_or_default().to_string();
    let newest = entries.iter().enumerate().max_by_key(|(i, e)| (text(e, "time"), *i))?.1;
    Some(Manager { manager: text(newest, "manager"), subresource: text(newest, "subresource") }).filter(|m| !m.manager.is_empty())
}

/// A list's objects and its resourceVersion, the watch's starting point.
pub fn read_list(kind: Kind, body: &str) -> Result<(Vec<Observed>, String), String> {
    let value: Value = serde_json::from_str(body).map_err(|e| format!("the list of {} is not JSON: {e}", kind.plural()))?;
    let rv = value.pointer("/metadata/resourceVersion").and_then(Value::as_str).unwrap_or_default().to_string();
    let items = value.get("items").and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default();
    let objects = items.iter().map(|item| read_object(kind, item)).collect::<Result<Vec<_>, _>>()?;
    Ok((objects, rv))
}

/// Reads one line of a watch of `kind`.
pub fn read_watch_line(kind: Kind, line: &str) -> Result<WatchLine, String> {
    let value: Value = serde_json::from_str(line).map_err(|e| format!("a watch line of {} is not JSON: {e}", kind.plural()))?;
    let object = value.get("object").cloned().unwrap_or(Value::Null);
    let change = match value.get("type").and_then(Value::as_str).unwrap_or_default() {
        "ADDED" => ChangeType::Added,
        "MODIFIED" => ChangeType::Modified,
        "DELETED" => ChangeType::Deleted,
        "BOOKMARK" => {
            let rv = object.pointer("/metadata/resourceVersion").and_then(Value::as_str).unwrap_or_default();
            return Ok(WatchLine::Bookmark(rv.to_string()));
        }
        "ERROR" => {
            let code = object.get("code").and_then(Value::as_u64).unwrap_or(0);
            let message = object.get("message").and_then(Value::as_str).unwrap_or_default();
            return Ok(if code == 410 { WatchLine::Gone } else { WatchLine::Failed(message.to_string()) });
        }
        other => return Err(format!("a watch event of unknown type {other:?}")),
    };
    let mut seen = read_object(kind, &object)?;
    seen.change = change;
    Ok(WatchLine::Change(Box::new(seen)))
}

/// What kubectl prints for a refused request: `Error from server (Reason): message`. A
/// `metav1.Status` body says both; any other body (a proxy's refusal: kubectl proxy
/// `--reject-methods` answers `403` with `Forbidden` as plain text) is read as client-go reads
/// an unexpected answer: the reason from the code, the text (trimmed) as the message, and what
/// was asked in brackets — `Error from server (Forbidden): Forbidden (delete pods web-x)`.
pub fn server_error(code: u16, content_type: &str, body: &str, verb: &str, resource: &str, name: &str) -> String {
    if let Ok(status) = serde_json::from_str::<Value>(body) {
        if status.get("kind").and_then(Value::as_str) == Some("Status") {
            let reason = status.get("reason").and_then(Value::as_str).unwrap_or("Unknown");
            let message = status.get("message").and_then(Value::as_str).unwrap_or_default();
            return format!("Error from server ({reason}): {message}");
        }
    }
    let reason = match code {
        400 => "BadRequest",
        401 => "Unauthorized",
        403 => "Forbidden",
        404 => "NotFound",
        405 => "MethodNotAllowed",
        409 => "Conflict",
        422 => "Invalid",
        429 => "TooManyRequests",
        500 => "InternalError",
        503 => "ServiceUnavailable",
        504 => "Timeout",
        _ => "Unknown",
    };
    let text = content_type.starts_with("text/plain");
    let message = if text { body.trim().to_string() } else { "unknown".to_string() };
    format!("Error from server ({reason}): {message} ({verb} {resource} {name})")
}

/// One Event as attribution reads it.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Heard {
    namespace: String,
    /// The involved object's name.
    object: String,
    reason: String,
    message: String,
    /// `reportingComponent`, else `source.component`.
    reporter: String,
    /// `source.host`, else `reportingInstance`.
    host: String,
}

/// Events heard lately (as they arrive, before the stage shows them), newest last: what the
/// loops said about themselves.
#[derive(Clone, Debug, Default)]
pub struct Hearsay {
    heard: VecDeque<Heard>,
}

/// Events remembered for attribution.
const HEARD_KEPT: usize = 1000;

impl Hearsay {
    pub fn hear(&mut self, event: &Event) {
        let pick = |a: &str, b: &str| if a.is_empty() { b.to_string() } else { a.to_string() };
        self.heard.push_back(Heard {
            namespace: event.involved_object.namespace.to_string(),
            object: event.involved_object.name.to_string(),
            reason: event.reason.to_string(),
            message: event.message.to_string(),
            reporter: pick(&event.reporting_component, &event.source.component),
            host: pick(&event.source.host, &event.reporting_instance),
        });
        if self.heard.len() > HEARD_KEPT {
            self.heard.pop_front();
        }
    }

    /// The newest Event of `reason` about `namespace/object`.
    fn about(&self, namespace: &str, object: &str, reasons: &[&str]) -> Option<&Heard> {
        self.heard.iter().rev().find(|h| h.namespace == namespace && h.object == object && reasons.contains(&h.reason.as_str()))
    }

    /// The ReplicaSet controller's `SuccessfulCreate` naming pod `name` (`Created pod: NAME`).
    fn created(&self, namespace: &str, name: &str) -> Option<&Heard> {
        self.heard
            .iter()
            .rev()
            .find(|h| h.namespace == namespace && h.reason == "SuccessfulCreate" && h.message.strip_prefix("Created pod: ") == Some(name))
    }
}

/// The page's name for a reporter: `default-scheduler` is kube-scheduler's box, a controller's
/// is its row in kube-controller-manager, a kubelet's is its node's box.
pub fn reporter_box(reporter: &str, host: &str) -> Option<String> {
    match reporter {
        "default-scheduler" => Some("kube-scheduler".into()),
        "kubelet" if !host.is_empty() => Some(format!("kubelet-{host}")),
        r if r.ends_with("-controller") => Some(format!("kube-controller-manager/{r}")),
        _ => None,
    }
}

/// How a caption knows who acted.
fn basis(event: Option<&Heard>, manager: Option<&Manager>, expected_manager: &str, inferred: &str) -> String {
    match (event, manager) {
        (Some(h), _) => format!("event {}", h.reason),
        (None, Some(m)) if m.manager == expected_manager => format!("managedFields: {}", m.manager),
        _ => format!("inferred: {inferred}"),
    }
}

fn caption(component: String, text: String, object: String) -> Caption {
    Caption { text, component, object, seq: 0 }
}

/// Who made `seen` and what it did, in a caption: `prev` is the object as the stage had it.
/// None for changes that are not a step of a story (an Event, a status counter, a first list).
pub fn attribute(prev: Option<&Object>, seen: &Observed, heard: &Hearsay) -> Option<Caption> {
    match &seen.object {
        Object::Pod(pod) => pod_caption(prev.and_then(Object::as_pod), pod, seen, heard),
        Object::ReplicaSet(rs) => {
            let before = prev.and_then(Object::as_replica_set).map(|p| p.spec.replicas.unwrap_or(1));
            let after = rs.spec.replicas.unwrap_or(1);
            let owner = rs.metadata.controller_ref().filter(|o| o.kind == "Deployment")?;
            let name = rs.metadata.name.to_string();
            let object = format!("replicaset/{name}");
            let how = basis(None, seen.manager.as_ref(), "kube-controller-manager", &format!("owned by Deployment {}", owner.name));
            let text = match (seen.change, before) {
                (ChangeType::Added, None) => format!("Deployment controller: create replicaset {name} with {after} replicas ({how})"),
                (ChangeType::Modified, Some(b)) if b != after => {
                    format!("Deployment controller: scale replicaset {name} {b} → {after} ({how})")
                }
                _ => return None,
            };
            Some(caption("kube-controller-manager/deployment-controller".into(), text, object))
        }
        Object::Deployment(d) => {
            let before = prev.and_then(Object::as_deployment).map(|p| p.spec.replicas.unwrap_or(1))?;
            let after = d.spec.replicas.unwrap_or(1);
            (seen.change == ChangeType::Modified && before != after).then(|| {
                let name = d.metadata.name.to_string();
                let who = seen.manager.as_ref().map(|m| format!("managedFields: {}", m.manager));
                let how = who.unwrap_or_else(|| "inferred: the API does not say who".into());
                caption(
                    "kube-apiserver".into(),
                    format!("a client: scale deployment {name} {before} → {after} ({how})"),
                    format!("deployment/{name}"),
                )
            })
        }
        Object::Node(n) if seen.change == ChangeType::Added && prev.is_none() => {
            let name = n.metadata.name.to_string();
            let text = format!("kubelet {name}: registered node {name} (inferred: kubelets register their Node)");
            Some(caption(format!("kubelet-{name}"), text, format!("node/{name}")))
        }
        Object::EndpointSlice(slice) => {
            let ready = |s: &crate::model::EndpointSlice| s.endpoints.iter().filter(|e| e.conditions.ready == Some(true)).count();
            let before = prev.and_then(Object::as_endpoint_slice).map(ready);
            let after = ready(slice);
            let service = slice.metadata.labels.iter().find(|(k, _)| &***k == "kubernetes.io/service-name").map(|(_, v)| v.to_string())?;
            (before.is_some_and(|b| b != after) && seen.change == ChangeType::Modified).then(|| {
                let text = format!("EndpointSlice controller: {service}: {after} ready (inferred: the slice's managed-by label)");
                caption("kube-controller-manager/endpointslice-controller".into(), text, format!("endpointslice/{}", slice.metadata.name))
            })
        }
        _ => None,
    }
}

fn pod_caption(prev: Option<&Pod>, pod: &Pod, seen: &Observed, heard: &Hearsay) -> Option<Caption> {
    let (ns, name) = (pod.metadata.namespace.as_str(), pod.metadata.name.as_str());
    let short = short_pod(name);
    let object = format!("pod/{name}");
    let node = pod.spec.node_name.clone().unwrap_or_default();
    let kubelet = |text: String| caption(format!("kubelet-{node}"), text, object.clone());
    if seen.change == ChangeType::Deleted {
        return Some(if node.is_empty() {
            caption("kube-apiserver".into(), format!("pod {short} deleted (inferred: it was never bound)"), object.clone())
        } else {
            kubelet(format!("kubelet {node}: {short} removed (inferred: its kubelet's final delete)"))
        });
    }
    let Some(prev) = prev else {
        if !node.is_empty() || seen.change != ChangeType::Added {
            return None;
        }
        return Some(match pod.metadata.controller_ref().filter(|o| o.kind == "ReplicaSet") {
            Some(owner) => {
                let event = heard.created(ns, name);
                let how = basis(event, seen.manager.as_ref(), "kube-controller-manager", &format!("owned by ReplicaSet {}", owner.name));
                let component = event.and_then(|h| reporter_box(&h.reporter, &h.host));
                let text = format!("ReplicaSet controller: create pod {short} for replicaset {} ({how})", owner.name);
                caption(component.unwrap_or_else(|| "kube-controller-manager/replicaset-controller".into()), text, object)
            }
            None => caption("kube-apiserver".into(), format!("a client: create pod {short} (inferred: no owner)"), object),
        });
    };
    let was_bound = prev.spec.node_name.as_deref().is_some_and(|n| !n.is_empty());
    if !was_bound && !node.is_empty() {
        let event = heard.about(ns, name, &["Scheduled"]);
        let how = basis(event, seen.manager.as_ref(), "kube-scheduler", "spec.nodeName set");
        let text = format!("kube-scheduler: bind {short} → {node} ({how})");
        let component = event.and_then(|h| reporter_box(&h.reporter, &h.host)).unwrap_or_else(|| "kube-scheduler".into());
        return Some(caption(component, text, object));
    }
    if pod.metadata.deletion_timestamp.is_some() && prev.metadata.deletion_timestamp.is_none() {
        let grace = pod.metadata.deletion_grace_period_seconds.map(|g| format!(", grace {g} s")).unwrap_or_default();
        let text = format!("a client: delete pod {short}{grace}: Terminating (inferred: the API does not say who)");
        return Some(caption("kube-apiserver".into(), text, object));
    }
    let (status, ready) = (pod_status(pod), pod_ready(pod));
    if node.is_empty() || (status == pod_status(prev) && ready == pod_ready(prev)) {
        return None;
    }
    let event = heard.about(ns, name, &["Started", "Created", "Pulled", "Pulling", "Killing", "BackOff", "Unhealthy"]);
    let event = event.filter(|h| h.reporter == "kubelet" && h.host == node);
    let how = basis(event, seen.manager.as_ref(), "kubelet", "its node's kubelet writes its status");
    Some(kubelet(format!("kubelet {node}: {short} {status} {ready} ({how})")))
}

/// The loops as a cluster shows them from outside: kube-apiserver (the API this page reads),
/// kube-controller-manager, kube-scheduler and a kubelet per node, each with the last change
/// attributed to it. No queue, no dial, no phase: a real cluster does not expose them.
/// `acted` is each box's last caption, newest last; `nodes` the Nodes listed.
pub fn components(cluster: &str, nodes: &[String], acted: &[(String, String, u64)]) -> Vec<ComponentView> {
    let last = |prefix: &str| {
        acted.iter().rev().find(|(who, _, _)| who == prefix || who.starts_with(&format!("{prefix}/"))).map(|(_, text, _)| text.clone())
    };
    let view = |name: &str, role: &str, detail: String| ComponentView {
        name: name.to_string(),
        role: role.to_string(),
        state: "observed".to_string(),
        detail,
        loops: Vec::new(),
    };
    let mut out = vec![
        view("kube-apiserver", "apiserver", format!("the API at {cluster}, listed and watched by this page")),
        view("kube-controller-manager", "controller-manager", last("kube-controller-manager").unwrap_or_default()),
        view("kube-scheduler", "scheduler", last("kube-scheduler").unwrap_or_default()),
    ];
    for node in nodes {
        let name = format!("kubelet-{node}");
        out.push(view(&name, "kubelet", last(&name).unwrap_or_default()));
    }
    out
}

/// The key a change is stored under.
pub fn key_of(seen: &Observed) -> ObjectKey {
    seen.object.key()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn pod(node: Option<&str>, phase: &str, deleting: bool) -> Value {
        let mut p = json!({
            "apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": "web-97f4f98bc-abcde", "namespace": "default", "resourceVersion": "41",
                "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web-97f4f98bc", "uid": "u", "controller": true}]},
            "spec": {"containers": [{"name": "nginx", "image": "nginx:1.14.2"}]},
            "status": {"phase": phase}
        });
        if let Some(n) = node {
            p["spec"]["nodeName"] = json!(n);
        }
        if phase == "Running" {
            p["status"]["containerStatuses"] = json!([{"name": "nginx", "ready": true, "restartCount": 0, "image": "nginx:1.14.2", "imageID": "", "state": {"running": {"startedAt": "2026-01-01T00:00:03Z"}}}]);
            p["status"]["conditions"] = json!([{"type": "Ready", "status": "True"}]);
        }
        if deleting {
            p["metadata"]["deletionTimestamp"] = json!("2026-01-01T00:01:00Z");
            p["metadata"]["deletionGracePeriodSeconds"] = json!(30);
        }
        p
    }

    fn line(kind: &str, object: &Value) -> String {
        json!({"type": kind, "object": object}).to_string()
    }

    fn change(l: &str) -> Observed {
        match read_watch_line(Kind::Pod, l).expect("a watch line") {
            WatchLine::Change(o) => *o,
            other => panic!("{other:?}"),
        }
    }

    fn event(reason: &str, object: &str, message: &str, reporter: &str, host: &str) -> Event {
        let e = json!({"apiVersion": "v1", "kind": "Event", "metadata": {"name": "e", "namespace": "default"},
            "involvedObject": {"kind": "Pod", "name": object, "namespace": "default"}, "reason": reason, "message": message,
            "source": {"component": reporter, "host": host}});
        Object::from_json(e).expect("an event").as_event().cloned().expect("an event")
    }

    #[test]
    fn urls_follow_the_api_groups_below_the_base() {
        assert_eq!(collection_path("/", Kind::Pod), "/api/v1/pods");
        assert_eq!(collection_path("/k8s/", Kind::ReplicaSet), "/k8s/apis/apps/v1/replicasets");
        assert_eq!(collection_path("/", Kind::EndpointSlice), "/apis/discovery.k8s.io/v1/endpointslices");
        assert_eq!(watch_url("/", Kind::Event, "77"), "/api/v1/events?watch=1&resourceVersion=77&allowWatchBookmarks=true");
        assert_eq!(object_path("/", Kind::Pod, "default", "web-x"), "/api/v1/namespaces/default/pods/web-x");
        assert_eq!(object_path("/", Kind::Node, "", "node-1"), "/api/v1/nodes/node-1");
    }

    #[test]
    fn lists_and_watch_lines_are_read_with_the_clusters_resource_versions() {
        let mut item = pod(None, "Pending", false);
        item.as_object_mut().unwrap().remove("kind");
        let body = json!({"kind": "PodList", "apiVersion": "v1", "metadata": {"resourceVersion": "75"}, "items": [item]}).to_string();
        let (items, rv) = read_list(Kind::Pod, &body).expect("a list");
        assert_eq!((rv.as_str(), items.len(), items[0].resource_version.as_str()), ("75", 1, "41"));
        assert_eq!(
            read_watch_line(
                Kind::Pod,
                r#"{"type":"BOOKMARK","object":{"kind":"Pod","apiVersion":"v1","metadata":{"resourceVersion":"90"}}}"#
            ),
            Ok(WatchLine::Bookmark("90".into()))
        );
        let gone = r#"{"type":"ERROR","object":{"kind":"Status","apiVersion":"v1","status":"Failure","message":"too old resource version: 1 (75)","reason":"Expired","code":410}}"#;
        assert_eq!(read_watch_line(Kind::Pod, gone), Ok(WatchLine::Gone));
        assert!(read_watch_line(Kind::Pod, "{not json").is_err());
        assert!(read_watch_line(Kind::Pod, r#"{"type":"SOMETHING","object":{}}"#).is_err());
    }

    #[test]
    fn a_clusters_times_before_the_simulations_epoch_are_read_as_the_epoch() {
        let mut p = pod(None, "Pending", false);
        p["metadata"]["creationTimestamp"] = json!("2024-05-01T10:00:00Z");
        let seen = change(&line("ADDED", &p));
        assert_eq!(seen.object.meta().creation_timestamp, Some(crate::model::Time(0)));
    }

    #[test]
    fn the_newest_managed_fields_entry_names_the_writer() {
        let mut p = pod(Some("node-1"), "Running", false);
        p["metadata"]["managedFields"] = json!([
            {"manager": "kube-controller-manager", "operation": "Update", "time": "2026-01-01T00:00:00Z"},
            {"manager": "kubelet", "operation": "Update", "subresource": "status", "time": "2026-01-01T00:00:03Z"}
        ]);
        let seen = change(&line("MODIFIED", &p));
        assert_eq!(seen.manager, Some(Manager { manager: "kubelet".into(), subresource: "status".into() }));
    }

    #[test]
    fn a_replacements_chain_is_told_loop_by_loop_with_what_each_is_known_from() {
        let mut heard = Hearsay::default();
        let created = change(&line("ADDED", &pod(None, "Pending", false)));
        let c = attribute(None, &created, &heard).expect("a create is a step");
        assert_eq!(c.component, "kube-controller-manager/replicaset-controller");
        assert_eq!(
            c.text,
            "ReplicaSet controller: create pod web-…-abcde for replicaset web-97f4f98bc (inferred: owned by ReplicaSet web-97f4f98bc)"
        );
        heard.hear(&event("SuccessfulCreate", "web-97f4f98bc", "Created pod: web-97f4f98bc-abcde", "replicaset-controller", ""));
        let c = attribute(None, &created, &heard).expect("a create is a step");
        assert!(c.text.ends_with("(event SuccessfulCreate)"), "{}", c.text);

        let bound = change(&line("MODIFIED", &pod(Some("node-2"), "Pending", false)));
        let c = attribute(Some(&created.object), &bound, &heard).expect("a bind is a step");
        assert_eq!((c.component.as_str(), c.object.as_str()), ("kube-scheduler", "pod/web-97f4f98bc-abcde"));
        assert_eq!(c.text, "kube-scheduler: bind web-…-abcde → node-2 (inferred: spec.nodeName set)");
        heard.hear(&event("Scheduled", "web-97f4f98bc-abcde", "Successfully assigned", "default-scheduler", ""));
        assert!(attribute(Some(&created.object), &bound, &heard).unwrap().text.ends_with("(event Scheduled)"));

        let running = change(&line("MODIFIED", &pod(Some("node-2"), "Running", false)));
        let c = attribute(Some(&bound.object), &running, &heard).expect("Running is a step");
        assert_eq!(c.component, "kubelet-node-2");
        assert!(c.text.starts_with("kubelet node-2: web-…-abcde Running 1/1 (inferred: "), "{}", c.text);
        // Another node's kubelet's word does not count for this one.
        heard.hear(&event("Started", "web-97f4f98bc-abcde", "Started container nginx", "kubelet", "node-1"));
        assert!(attribute(Some(&bound.object), &running, &heard).unwrap().text.contains("inferred"));
        heard.hear(&event("Started", "web-97f4f98bc-abcde", "Started container nginx", "kubelet", "node-2"));
        assert!(attribute(Some(&bound.object), &running, &heard).unwrap().text.ends_with("(event Started)"));
        // The same status again says nothing.
        assert_eq!(attribute(Some(&running.object), &running, &heard), None);

        let going = change(&line("MODIFIED", &pod(Some("node-2"), "Running", true)));
        let c = attribute(Some(&running.object), &going, &heard).expect("a delete is a step");
        assert!(c.text.starts_with("a client: delete pod web-…-abcde, grace 30 s: Terminating (inferred"), "{}", c.text);
        let gone = change(&line("DELETED", &pod(Some("node-2"), "Running", true)));
        assert_eq!(attribute(Some(&going.object), &gone, &heard).unwrap().component, "kubelet-node-2");
    }

    #[test]
    fn a_proxys_refusal_and_a_servers_status_read_as_kubectl_prints_them() {
        assert_eq!(
            server_error(403, "text/plain; charset=utf-8", "Forbidden\n", "delete", "pods", "web-x"),
            "Error from server (Forbidden): Forbidden (delete pods web-x)"
        );
        assert_eq!(
            server_error(502, "text/html", "<h1>bad</h1>", "patch", "deployments", "web"),
            "Error from server (Unknown): unknown (patch deployments web)"
        );
        let status =
            r#"{"kind":"Status","apiVersion":"v1","status":"Failure","message":"pods \"nope\" not found","reason":"NotFound","code":404}"#;
        assert_eq!(
            server_error(404, "application/json", status, "delete", "pods", "nope"),
            "Error from server (NotFound): pods \"nope\" not found"
        );
    }

    #[test]
    fn the_boxes_carry_the_last_change_attributed_to_them_and_no_loop_internals() {
        let acted = vec![
            ("kube-controller-manager/replicaset-controller".to_string(), "ReplicaSet controller: create pod x".to_string(), 1),
            ("kubelet-node-1".to_string(), "kubelet node-1: x Running".to_string(), 2),
        ];
        let c = components("/", &["node-1".into(), "node-2".into()], &acted);
        let names: Vec<&str> = c.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["kube-apiserver", "kube-controller-manager", "kube-scheduler", "kubelet-node-1", "kubelet-node-2"]);
        assert_eq!(c[1].detail, "ReplicaSet controller: create pod x");
        assert_eq!(c[3].detail, "kubelet node-1: x Running");
        assert!(c.iter().all(|c| c.loops.is_empty() && c.state == "observed"));
    }
}
