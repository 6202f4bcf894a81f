//! Operators a learner writes in Python with kopf's shape, run as one more loop of the
//! simulation: its own informers, work queue and reconcile, its requests through the simulated
//! kube-apiserver with its validation, admission and latency, stopped and started like any
//! process (`sim stop|start|restart operator/NAME`).
//!
//! The simulation talks to the Python side through one protocol (JSON messages: what changed
//! in, requests out — `python/host.py` describes them) behind the `Interpreter` trait, which the
//! shell supplies: the native command line runs the machine's `python3` as a subprocess; the
//! page will run Pyodide. The core never spawns a process or reads a clock: a handler call
//! starts at one simulated instant with the simulation's time and a seed for its randomness,
//! and each of its API requests is sent as any component's is — the handler waits (its
//! interpreter suspended) until the answer arrives after its round trip, so the same scenario,
//! seed and code give the same trace.
//!
//! kopf's bookkeeping (causes, diff base, progress, retries, results, finalizer, Events) is
//! `kopf.rs`; the client's requests become `ApiRequest`s in `requests.rs`; the loop itself is
//! `reactor.rs`.

pub mod examples;
pub mod kopf;
pub mod reactor;
pub mod requests;

use crate::api::crd::Definitions;
use crate::model::Duration;
use kopf::Reason;
use requests::Resource;
use serde_json::Value;

pub use reactor::Operator;

/// The Python runtime the interpreter loads before the learner's file: the protocol loop
/// (`host.py`, run as the main program) and the modules it installs as `kopf` and `kubernetes`.
pub const PYTHON_HOST: &str = include_str!("python/host.py");
/// The page's host (`python/host_page.py`): the same protocol, one message per call and no
/// blocking read, a handler call replayed from its start as its answers arrive. It imports
/// `PYTHON_HOST` as a module, sent in the `load` message's `host` field.
pub const PYTHON_HOST_PAGE: &str = include_str!("python/host_page.py");
pub const PYTHON_MODULES: [(&str, &str); 2] =
    [("kopf", include_str!("python/kopf.py")), ("kubernetes", include_str!("python/kubernetes.py"))];

/// Python lines a handler call may run before it is stopped (`sys.settrace` counts them, so
/// the cut falls at the same line every time): far more than a handler that reads, compares
/// and writes needs, and a small fraction of a second of a runaway loop.
pub const STEP_BUDGET: u64 = 100_000;

/// What runs an operator's Python: the shell's (a `python3` subprocess natively).
pub trait Interpreter {
    /// Starts the operator's code afresh — a new interpreter, the runtime installed, the file
    /// run, its handlers registered — and returns the `ready` message (or the file's error).
    /// Called again when the operator process restarts: module state does not survive it.
    fn load(&mut self) -> Result<Value, String>;
    /// Sends one message and returns the interpreter's reply.
    fn exchange(&mut self, message: &Value) -> Result<Value, String>;
}

/// kopf's `errors=` of a handler: what an arbitrary exception means.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ErrorsMode {
    Temporary,
    Permanent,
    Ignored,
}

/// A label or annotation filter of a handler (`labels={'app': 'web', 'x': kopf.PRESENT}`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Filter {
    Equals(String),
    Present,
    Absent,
}

/// One registered handler.
#[derive(Clone, Debug)]
pub struct HandlerSpec {
    pub id: String,
    pub reason: Reason,
    pub resource: Resource,
    pub interval: Option<Duration>,
    pub initial_delay: Duration,
    /// A delete handler that needs no finalizer (`optional=True`).
    pub optional: bool,
    pub retries: Option<u32>,
    /// Seconds before a handler that raised is retried.
    pub backoff: f64,
    pub errors: ErrorsMode,
    pub labels: Vec<(String, Filter)>,
    pub annotations: Vec<(String, Filter)>,
}

impl HandlerSpec {
    /// kopf's name for it in messages: `Handler 'label_pod'`, `Timer 'tick'`.
    pub fn title(&self) -> String {
        let noun = if self.reason == Reason::Timer { "Timer" } else { "Handler" };
        format!("{noun} '{}'", self.id)
    }
    /// Whether the object's labels and annotations pass the handler's filters.
    pub fn selects(&self, body: &Value) -> bool {
        let passes = |filters: &[(String, Filter)], field: &str| {
            let map = body.pointer(&format!("/metadata/{field}"));
            filters.iter().all(|(k, f)| {
                let value = map.and_then(|m| m.get(k)).and_then(Value::as_str);
                match f {
                    Filter::Equals(v) => value == Some(v.as_str()),
                    Filter::Present => value.is_some(),
                    Filter::Absent => value.is_none(),
                }
            })
        };
        passes(&self.labels, "labels") && passes(&self.annotations, "annotations")
    }
}

fn seconds(value: &Value, field: &str, id: &str) -> Result<Option<Duration>, String> {
    match value.get(field) {
        None | Some(Value::Null) => Ok(None),
        Some(v) => match v.as_f64() {
            Some(s) if s.is_finite() && s >= 0.0 => Ok(Some(Duration((s * 1000.0).round() as u64))),
            _ => Err(format!("handler {id:?}: {field} must be a number of seconds, got {v}")),
        },
    }
}

fn filters(value: Option<&Value>) -> Vec<(String, Filter)> {
    let Some(map) = value.and_then(Value::as_object) else { return Vec::new() };
    map.iter()
        .map(|(k, v)| {
            let f = match v.as_str().unwrap_or_default() {
                "*present*" => Filter::Present,
                "*absent*" => Filter::Absent,
                other => Filter::Equals(other.to_string()),
            };
            (k.clone(), f)
        })
        .collect()
}

/// The handlers a `ready` message registers, each resource resolved among the built-in kinds
/// and `definitions` (the established CustomResourceDefinitions) — a plural in a group nothing
/// built in has is a custom resource still to come, watched as kopf waits for it; an unknown
/// resource otherwise, or an unknown option, is the file's error.
pub fn registration(ready: &Value, definitions: &Definitions) -> Result<Vec<HandlerSpec>, String> {
    match ready.get("op").and_then(Value::as_str) {
        Some("ready") => {}
        Some("failed") => return Err(ready.get("error").and_then(Value::as_str).unwrap_or("the operator failed to load").to_string()),
        _ => return Err(format!("the operator's interpreter answered {ready} instead of ready")),
    }
    let list = ready.get("handlers").and_then(Value::as_array).cloned().unwrap_or_default();
    let mut handlers = Vec::new();
    for h in &list {
        let id = h.get("id").and_then(Value::as_str).unwrap_or_default().to_string();
        let reason_text = h.get("reason").and_then(Value::as_str).unwrap_or_default();
        let reason = Reason::parse(reason_text).ok_or_else(|| format!("handler {id:?}: unknown reason {reason_text:?}"))?;
        let text = |f: &str| h.get(f).and_then(Value::as_str).filter(|s| !s.is_empty());
        let name = text("name").ok_or_else(|| format!("handler {id:?} names no resource"))?;
        let resource = requests::resolve(text("group"), text("version"), name, definitions).map_err(|e| format!("handler {id:?}: {e}"))?;
        let interval = seconds(h, "interval", &id)?;
        if reason == Reason::Timer && interval.is_none_or(|d| d == Duration::ZERO) {
            return Err(format!("timer {id:?} needs an interval of more than 0 seconds"));
        }
        let errors = match h.get("errors").and_then(Value::as_str) {
            None | Some("temporary") => ErrorsMode::Temporary,
            Some("permanent") => ErrorsMode::Permanent,
            Some("ignored") => ErrorsMode::Ignored,
            Some(other) => return Err(format!("handler {id:?}: unknown errors mode {other:?}")),
        };
        handlers.push(HandlerSpec {
            id: id.clone(),
            reason,
            resource,
            interval,
            initial_delay: seconds(h, "initial_delay", &id)?.unwrap_or(Duration::ZERO),
            optional: h.get("optional").and_then(Value::as_bool).unwrap_or(false),
            retries: h.get("retries").and_then(Value::as_u64).map(|r| r as u32),
            backoff: h.get("backoff").and_then(Value::as_f64).unwrap_or(kopf::DEFAULT_BACKOFF_SECS),
            errors,
            labels: filters(h.get("labels")),
            annotations: filters(h.get("annotations")),
        });
    }
    if handlers.is_empty() {
        return Err("the operator registers no handlers (no @kopf.on.* or @kopf.timer in the file)".into());
    }
    Ok(handlers)
}

/// kopf's `settings.posting`, as the file's startup handlers left it: kopf posts explicit
/// `kopf.event()`s, and its own and the handlers' log lines only with `posting.loggers`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Posting {
    pub enabled: bool,
    pub loggers: bool,
    /// Python's logging level: 20 INFO, 30 WARNING, 40 ERROR.
    pub level: u64,
}

impl Posting {
    pub fn from_ready(ready: &Value) -> Posting {
        let p = ready.get("posting");
        let flag = |k: &str, d: bool| p.and_then(|p| p.get(k)).and_then(Value::as_bool).unwrap_or(d);
        Posting {
            enabled: flag("enabled", true),
            loggers: flag("loggers", false),
            level: p.and_then(|p| p.get("level")).and_then(Value::as_u64).unwrap_or(20),
        }
    }
    /// Whether a log line of this level becomes an Event.
    pub fn posts_line(&self, level: &str) -> bool {
        let number = match level {
            "debug" => 10,
            "info" => 20,
            "warning" => 30,
            "error" => 40,
            _ => 50,
        };
        self.enabled && self.loggers && number >= self.level
    }
}

/// An operator's name as `operator/NAME` takes it: a DNS label, as a Deployment's would be.
pub fn check_name(name: &str) -> Result<(), String> {
    let ok = !name.is_empty()
        && name.len() <= 63
        && name.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        && !name.starts_with('-')
        && !name.ends_with('-');
    if ok {
        Ok(())
    } else {
        Err(format!("invalid operator name {name:?}: a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character"))
    }
}
