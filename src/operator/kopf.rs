//! kopf's reactor, as data: which cause a change is, what a handler's outcome writes back, and
//! the Events kopf posts — decided here, in the simulation, so every interpreter behaves alike.
//!
//! As kopf does it: the object's *essence* (everything but status and system metadata, with
//! labels and annotations, without kopf's own and kubectl's last-applied annotation) is kept in
//! the `kopf.zalando.org/last-handled-configuration` annotation once a cause is handled; no
//! annotation is a creation, a different essence an update. A handler's progress while it is
//! retried is an annotation `kopf.zalando.org/<handler id>` (`retries`, `delayed`, `success`,
//! `failure`), purged when the cause is done. Delete handlers need the finalizer
//! `kopf.zalando.org/KopfFinalizerMarker` (so do timers), added before anything else and removed
//! after them. Explicit `kopf.event()`s are posted as Events from `kopf`; log lines — kopf's own
//! ("Handler 'x' succeeded.") and the handlers' — only with `settings.posting.loggers`, as
//! Events with reason `Logging` and a type by level (kopf's default since 1.44 posts none).

use crate::model::Time;
use serde_json::{json, Map, Value};

pub const PREFIX: &str = "kopf.zalando.org";
pub const LAST_HANDLED: &str = "kopf.zalando.org/last-handled-configuration";
pub const FINALIZER: &str = "kopf.zalando.org/KopfFinalizerMarker";
const LAST_APPLIED: &str = "kubectl.kubernetes.io/last-applied-configuration";
/// kopf's `settings.execution.default_backoff`: seconds before a handler that raised is retried.
pub const DEFAULT_BACKOFF_SECS: f64 = 60.0;
/// The default of `kopf.TemporaryError(delay=…)`.
pub const DEFAULT_DELAY_SECS: f64 = 60.0;

/// The reasons kopf calls handlers for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Reason {
    Create,
    Update,
    Delete,
    Resume,
    Timer,
}

impl Reason {
    pub fn parse(text: &str) -> Option<Reason> {
        Some(match text {
            "create" => Reason::Create,
            "update" => Reason::Update,
            "delete" => Reason::Delete,
            "resume" => Reason::Resume,
            "timer" => Reason::Timer,
            _ => return None,
        })
    }
    pub fn as_str(self) -> &'static str {
        match self {
            Reason::Create => "create",
            Reason::Update => "update",
            Reason::Delete => "delete",
            Reason::Resume => "resume",
            Reason::Timer => "timer",
        }
    }
    /// kopf's `TITLES`, for "Creation is processed: …".
    pub fn title(self) -> &'static str {
        match self {
            Reason::Create => "creation",
            Reason::Update => "updating",
            Reason::Delete => "deletion",
            Reason::Resume => "resuming",
            Reason::Timer => "timer",
        }
    }
}

/// The essence of an object (kopf's `DiffBaseStorage.build`).
pub fn essence(body: &Value) -> Value {
    let mut essence = body.as_object().cloned().unwrap_or_default();
    for field in ["apiVersion", "kind", "metadata", "status"] {
        essence.remove(field);
    }
    let meta = body.get("metadata");
    let mut kept = Map::new();
    if let Some(labels) = meta.and_then(|m| m.get("labels")).filter(|l| l.as_object().is_some_and(|o| !o.is_empty())) {
        kept.insert("labels".into(), labels.clone());
    }
    if let Some(annotations) = meta.and_then(|m| m.get("annotations")).and_then(Value::as_object) {
        let own = |k: &str| k.split_once('/').is_some_and(|(p, n)| p == PREFIX || p.ends_with(".kopf.zalando.org") || n == "kopf-managed");
        let rest: Map<String, Value> =
            annotations.iter().filter(|(k, _)| !own(k) && k.as_str() != LAST_APPLIED).map(|(k, v)| (k.clone(), v.clone())).collect();
        if !rest.is_empty() {
            kept.insert("annotations".into(), Value::Object(rest));
        }
    }
    if !kept.is_empty() {
        essence.insert("metadata".into(), Value::Object(kept));
    }
    Value::Object(essence)
}

/// The annotation's text for an essence: compact JSON and a newline, as kopf stores it.
pub fn encode_essence(essence: &Value) -> String {
    format!("{essence}\n")
}

/// The essence last handled, from the object's annotation.
pub fn last_handled(body: &Value) -> Option<Value> {
    let text = body.pointer("/metadata/annotations")?.get(LAST_HANDLED)?.as_str()?;
    serde_json::from_str(text.trim_end()).ok()
}

/// kopf's `diff`: `[op, [path…], old, new]` items, lists compared whole, keys in sorted order.
pub fn diff(old: &Value, new: &Value) -> Vec<Value> {
    let mut out = Vec::new();
    diff_into(old, new, &mut Vec::new(), &mut out);
    out
}

fn diff_into(a: &Value, b: &Value, path: &mut Vec<String>, out: &mut Vec<Value>) {
    match (a, b) {
        _ if a == b => {}
        (Value::Null, _) => out.push(json!(["add", path, Value::Null, b])),
        (_, Value::Null) => out.push(json!(["remove", path, a, Value::Null])),
        (Value::Object(x), Value::Object(y)) => {
            let mut keys: Vec<&String> = x.keys().chain(y.keys()).collect();
            keys.sort();
            keys.dedup();
            for key in keys {
                path.push(key.clone());
                diff_into(x.get(key).unwrap_or(&Value::Null), y.get(key).unwrap_or(&Value::Null), path, out);
                path.pop();
            }
        }
        _ => out.push(json!(["change", path, a, b])),
    }
}

/// A handler's progress record (kopf's `ProgressRecord`), in its annotation while a cause is
/// under way.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Progress {
    pub started: Option<String>,
    pub delayed: Option<String>,
    pub purpose: Option<String>,
    pub retries: u32,
    pub success: bool,
    pub failure: bool,
    pub message: Option<String>,
}

impl Progress {
    pub fn annotation(handler_id: &str) -> String {
        // kopf replaces what an annotation name cannot hold.
        let name: String = handler_id.chars().map(|c| if c.is_ascii_alphanumeric() || "-_.".contains(c) { c } else { '.' }).collect();
        format!("{PREFIX}/{name}")
    }
    pub fn read(body: &Value, handler_id: &str) -> Option<Progress> {
        let text = body.pointer("/metadata/annotations")?.get(Self::annotation(handler_id))?.as_str()?;
        let v: Value = serde_json::from_str(text).ok()?;
        let s = |k: &str| v.get(k).and_then(Value::as_str).map(str::to_string);
        Some(Progress {
            started: s("started"),
            delayed: s("delayed"),
            purpose: s("purpose"),
            retries: v.get("retries").and_then(Value::as_u64).unwrap_or(0) as u32,
            success: v.get("success").and_then(Value::as_bool).unwrap_or(false),
            failure: v.get("failure").and_then(Value::as_bool).unwrap_or(false),
            message: s("message"),
        })
    }
    /// The record as kopf writes it: compact JSON, absent fields left out.
    pub fn encode(&self) -> String {
        let mut m = Map::new();
        let mut put = |k: &str, v: Option<Value>| {
            if let Some(v) = v {
                m.insert(k.into(), v);
            }
        };
        put("started", self.started.clone().map(Value::from));
        put("delayed", self.delayed.clone().map(Value::from));
        put("purpose", self.purpose.clone().map(Value::from));
        put("retries", Some(Value::from(self.retries)));
        put("success", Some(Value::from(self.success)));
        put("failure", Some(Value::from(self.failure)));
        put("message", self.message.clone().map(Value::from));
        Value::Object(m).to_string()
    }
    /// When the record says to try again, if delayed.
    pub fn delayed_until(&self) -> Option<Time> {
        self.delayed.as_deref().and_then(parse_iso)
    }
}

/// kopf's timestamps: ISO 8601 with microseconds and the UTC offset written out.
pub fn iso(t: Time) -> String {
    t.rfc3339_micro().replace('Z', "+00:00")
}

fn parse_iso(text: &str) -> Option<Time> {
    Time::parse_rfc3339(text)
}

/// One log line of a handler or of kopf itself.
#[derive(Clone, Debug, PartialEq)]
pub struct LogLine {
    pub level: String,
    pub message: String,
}

impl LogLine {
    pub fn info(message: impl Into<String>) -> Self {
        LogLine { level: "info".into(), message: message.into() }
    }
    pub fn error(message: impl Into<String>) -> Self {
        LogLine { level: "error".into(), message: message.into() }
    }
    /// kopf's posting: the Event type for the log level (Normal, Warning, Error, Fatal).
    pub fn event_type(&self) -> &'static str {
        match self.level.as_str() {
            "info" => "Normal",
            "warning" => "Warning",
            "error" => "Error",
            _ => "Fatal",
        }
    }
}

/// The Event kopf posts for a log line on an object (`kopf._cogs.clients.events.post_event`).
pub fn event_body(object: &Value, line: &LogLine, now: Time) -> Value {
    let meta = object.get("metadata").cloned().unwrap_or_default();
    let reference = json!({
        "apiVersion": object.get("apiVersion"), "kind": object.get("kind"), "name": meta.get("name"),
        "uid": meta.get("uid"), "namespace": meta.get("namespace"),
    });
    posted_event(&reference, line.event_type(), "Logging", &line.message, now)
}

/// An Event as kopf posts one (`kopf.event`, `kopf.info`… and its log lines) about the object
/// `reference` names.
pub fn posted_event(reference: &Value, type_: &str, reason: &str, message: &str, now: Time) -> Value {
    let namespace = reference.get("namespace").and_then(Value::as_str).filter(|n| !n.is_empty()).unwrap_or("default");
    let mut message = message.to_string();
    if message.chars().count() > 1024 {
        let chars: Vec<char> = message.chars().collect();
        let head: String = chars[..510].iter().collect();
        let tail: String = chars[chars.len() - 511..].iter().collect();
        message = format!("{head}...{tail}");
    }
    let stamp = now.rfc3339();
    json!({
        "apiVersion": "v1", "kind": "Event",
        "metadata": {"namespace": namespace, "generateName": "kopf-event-"},
        "action": "Action?", "type": type_, "reason": reason, "message": message,
        "reportingComponent": "kopf", "reportingInstance": "dev", "source": {"component": "kopf"},
        "involvedObject": {
            "apiVersion": reference.get("apiVersion"), "kind": reference.get("kind"), "name": reference.get("name"),
            "uid": reference.get("uid"), "namespace": namespace,
        },
        "firstTimestamp": stamp, "lastTimestamp": stamp, "eventTime": now.rfc3339_micro(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_essence_keeps_spec_and_users_labels_and_annotations_only() {
        let body = json!({
            "apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "x", "uid": "u", "resourceVersion": "5", "labels": {"a": "1"},
                "annotations": {"kopf.zalando.org/last-handled-configuration": "{}", "note": "n",
                    "kubectl.kubernetes.io/last-applied-configuration": "{}"}},
            "data": {"k": "v"}, "status": {"x": 1}
        });
        assert_eq!(essence(&body), json!({"data": {"k": "v"}, "metadata": {"labels": {"a": "1"}, "annotations": {"note": "n"}}}));
    }

    #[test]
    fn the_diff_names_each_changed_leaf_and_compares_lists_whole() {
        let old = json!({"spec": {"replicas": 1, "image": "a", "ports": [1]}});
        let new = json!({"spec": {"replicas": 2, "ports": [1, 2], "extra": true}});
        assert_eq!(
            diff(&old, &new),
            vec![
                json!(["add", ["spec", "extra"], null, true]),
                json!(["remove", ["spec", "image"], "a", null]),
                json!(["change", ["spec", "ports"], [1], [1, 2]]),
                json!(["change", ["spec", "replicas"], 1, 2]),
            ]
        );
    }

    #[test]
    fn progress_records_and_timestamps_read_back_as_written() {
        let at = Time(65_250);
        assert_eq!(iso(at), "2026-01-01T00:01:05.250000+00:00");
        assert_eq!(parse_iso(&iso(at)), Some(at));
        let record = Progress { started: Some(iso(Time(0))), delayed: Some(iso(at)), retries: 2, ..Default::default() };
        let body = json!({"metadata": {"annotations": {"kopf.zalando.org/fn": record.encode()}}});
        assert_eq!(Progress::read(&body, "fn"), Some(record.clone()));
        assert_eq!(record.delayed_until(), Some(at));
    }
}
