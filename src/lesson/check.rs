//! The check language: a few declarative conditions over the cluster that tell a lesson when the
//! outcome it asked for has happened.
//!
//! A check is a mapping of conditions, all of which must hold, and an optional deadline in
//! simulated time:
//!
//! ```yaml
//! check:
//!   pods: {selector: app=web, status: Running, count: 3}
//!   event: {reason: Scheduled, since-step: true}
//!   deployment: {name: web, readyReplicas: 5}
//!   node: {name: node-2, ready: Unknown}
//!   component: {name: kube-scheduler, state: stopped}
//!   after: 30s            # at least this long since the step began
//!   within: 60s           # fail the step if not all true by then
//! ```
//!
//! Conditions read what a GET would return (the API server's store), never a component's private
//! cache: a learner checks a cluster with kubectl, and so does a lesson. Each condition also says
//! what it sees now, so the page can show progress ("2 of 3 pods Running").

use super::fields::{shown, Fields};
use crate::command::printers::pod_status;
use crate::command::selector::parse_label_selector;
use crate::model::{Duration, Kind, LabelSelector, Time};
use crate::sim::{ComponentId, Sim};
use serde_json::Value;

/// How many objects a query must match: `count: 3`, or `min`/`max`. Neither means "at least one".
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Count {
    pub min: Option<i64>,
    pub max: Option<i64>,
}

impl Count {
    fn parse(f: &Fields) -> Result<Count, String> {
        let exact = f.int("count")?;
        let (min, max) = (f.int("min")?, f.int("max")?);
        if exact.is_some() && (min.is_some() || max.is_some()) {
            return Err(format!("{}: give count, or min and max, not both", f.path));
        }
        Ok(match exact {
            Some(n) => Count { min: Some(n), max: Some(n) },
            None if min.is_none() && max.is_none() => Count { min: Some(1), max: None },
            None => Count { min, max },
        })
    }

    pub fn holds(&self, n: i64) -> bool {
        self.min.is_none_or(|m| n >= m) && self.max.is_none_or(|m| n <= m)
    }

    fn describe(&self) -> String {
        match (self.min, self.max) {
            (Some(a), Some(b)) if a == b => format!("exactly {a}"),
            (Some(a), Some(b)) => format!("{a} to {b}"),
            (Some(1), None) => "at least one".into(),
            (Some(a), None) => format!("at least {a}"),
            (None, Some(b)) => format!("at most {b}"),
            (None, None) => "any number of".into(),
        }
    }
}

/// Pods in a namespace, by label selector, kubectl STATUS and node.
#[derive(Clone, Debug, PartialEq)]
pub struct PodQuery {
    pub namespace: String,
    pub selector_text: String,
    pub selector: LabelSelector,
    /// The STATUS column as `kubectl get pods` prints it (Running, Pending, Terminating, ...).
    pub status: Option<String>,
    pub node: Option<String>,
    pub not_node: Option<String>,
}

impl PodQuery {
    pub(crate) fn parse(f: &Fields) -> Result<PodQuery, String> {
        let selector_text = f.string("selector")?.unwrap_or_default();
        let selector =
            parse_label_selector(&selector_text).map_err(|e| format!("{}: {}", f.at("selector"), e.trim_start_matches("error: ")))?;
        Ok(PodQuery {
            namespace: f.string("namespace")?.unwrap_or_else(|| "default".into()),
            selector_text,
            selector,
            status: f.string("status")?,
            node: f.string("node")?,
            not_node: f.string("notNode")?,
        })
    }

    /// Pods matching `selector` with STATUS `status`, in `default`.
    pub fn from_selector(selector: &str, status: &str) -> Result<PodQuery, String> {
        Ok(PodQuery {
            namespace: "default".into(),
            selector_text: selector.to_string(),
            selector: parse_label_selector(selector).map_err(|e| e.trim_start_matches("error: ").to_string())?,
            status: Some(status.to_string()),
            node: None,
            not_node: None,
        })
    }

    /// The first matching pod's name, in name order.
    pub fn first(&self, sim: &Sim) -> Option<String> {
        self.matching(sim).map(|p| p.metadata.name.to_string()).min()
    }

    fn matching<'a>(&'a self, sim: &'a Sim) -> impl Iterator<Item = &'a crate::model::Pod> + 'a {
        sim.objects(Kind::Pod)
            .filter_map(|o| o.as_pod())
            .filter(|p| p.metadata.namespace == self.namespace && self.selector.matches(&p.metadata.labels))
            .filter(|p| self.status.as_ref().is_none_or(|s| pod_status(p) == *s))
            .filter(|p| self.node.as_ref().is_none_or(|n| p.node_name() == Some(n.as_str())))
            .filter(|p| self.not_node.as_ref().is_none_or(|n| p.node_name() != Some(n.as_str())))
    }

    pub fn count(&self, sim: &Sim) -> i64 {
        self.matching(sim).count() as i64
    }

    fn describe(&self) -> String {
        let mut s = String::from("pods");
        if !self.selector_text.is_empty() {
            s.push_str(&format!(" with {}", self.selector_text));
        }
        if let Some(st) = &self.status {
            s.push_str(&format!(" {st}"));
        }
        if let Some(n) = &self.node {
            s.push_str(&format!(" on {n}"));
        }
        if let Some(n) = &self.not_node {
            s.push_str(&format!(" off {n}"));
        }
        s
    }
}

/// Events by reason (and optionally the object they are about), maybe only recent ones.
#[derive(Clone, Debug, PartialEq)]
pub struct EventQuery {
    pub reason: String,
    /// `pod/web-` matches events about any pod whose name starts with `web-`.
    pub object: Option<String>,
    pub since_step: bool,
}

impl EventQuery {
    pub(crate) fn parse(f: &Fields) -> Result<EventQuery, String> {
        Ok(EventQuery {
            reason: f.required_string("reason")?,
            object: f.string("object")?,
            since_step: f.boolean("since-step")?.unwrap_or(false),
        })
    }

    /// How many times it happened: aggregated events count each repetition.
    pub fn count(&self, sim: &Sim, step_start: Time) -> i64 {
        sim.objects(Kind::Event)
            .filter_map(|o| o.as_event())
            .filter(|e| e.reason == self.reason)
            .filter(|e| {
                self.object.as_ref().is_none_or(|o| {
                    let about = format!("{}/{}", e.involved_object.kind.to_ascii_lowercase(), e.involved_object.name);
                    about.starts_with(o.as_str())
                })
            })
            .filter(|e| !self.since_step || e.last_timestamp.or(e.first_timestamp).is_some_and(|t| t >= step_start))
            .map(|e| i64::from(e.count.max(1)))
            .sum()
    }

    fn describe(&self) -> String {
        let mut s = format!("{} events", self.reason);
        if let Some(o) = &self.object {
            s.push_str(&format!(" about {o}"));
        }
        if self.since_step {
            s.push_str(" since this step began");
        }
        s
    }
}

/// The endpoints a Service's EndpointSlices list, maybe only those in one state:
/// `endpoints: {service: web, state: ready}`.
#[derive(Clone, Debug, PartialEq)]
pub struct EndpointQuery {
    pub namespace: String,
    pub service: String,
    /// `ready`, `not ready` or `terminating` (`model::EndpointConditions::state`); none: all.
    pub state: Option<&'static str>,
}

/// The states an endpoint query may name.
const ENDPOINT_STATES: [&str; 3] = ["ready", "not ready", "terminating"];

impl EndpointQuery {
    fn parse(f: &Fields) -> Result<EndpointQuery, String> {
        let state = match f.string("state")? {
            None => None,
            Some(s) => Some(
                *ENDPOINT_STATES
                    .iter()
                    .find(|w| **w == s)
                    .ok_or_else(|| format!("{}: must be one of {}, got {s:?}", f.at("state"), ENDPOINT_STATES.join(", ")))?,
            ),
        };
        Ok(EndpointQuery {
            namespace: f.string("namespace")?.unwrap_or_else(|| "default".into()),
            service: f.required_string("service")?,
            state,
        })
    }

    /// How many endpoints match, each pod counted once however many slices list it.
    pub fn count(&self, sim: &Sim) -> i64 {
        let mut pods: Vec<String> = Vec::new();
        let slices = sim.api().items(Kind::EndpointSlice, Some(&self.namespace)).filter_map(|o| o.as_endpoint_slice());
        for slice in slices.filter(|s| s.service_name() == Some(self.service.as_str())) {
            for e in slice.endpoints.iter().filter(|e| self.state.is_none_or(|want| e.conditions.state() == want)) {
                let id = e.target_ref.as_ref().map(|r| r.name.to_string()).or_else(|| e.addresses.first().cloned()).unwrap_or_default();
                if !pods.contains(&id) {
                    pods.push(id);
                }
            }
        }
        pods.len() as i64
    }

    fn describe(&self) -> String {
        format!("{}endpoints of service {}", self.state.map(|s| format!("{s} ")).unwrap_or_default(), self.service)
    }
}

/// The pods that answered a Service's connections (`sim traffic`) lately:
/// `traffic: {service: web, window: 2s}`.
#[derive(Clone, Debug, PartialEq)]
pub struct TrafficQuery {
    pub namespace: String,
    pub service: String,
    /// How far back to look (2 s unless given).
    pub window: Duration,
}

impl TrafficQuery {
    fn parse(f: &Fields) -> Result<TrafficQuery, String> {
        Ok(TrafficQuery {
            namespace: f.string("namespace")?.unwrap_or_else(|| "default".into()),
            service: f.required_string("service")?,
            window: f.duration("window")?.unwrap_or(Duration::secs(2)),
        })
    }

    /// How many different pods answered a connection to the Service within the window.
    pub fn answering(&self, sim: &Sim) -> i64 {
        let service = format!("{}/{}", self.namespace, self.service);
        let since = sim.now().0.saturating_sub(self.window.0);
        let mut pods: Vec<&str> = sim
            .recent_connections()
            .filter(|c| c.at.0 >= since && c.service == service && c.outcome == crate::sim::traffic::Outcome::Answered)
            .filter_map(|c| c.backend.as_deref())
            .collect();
        pods.sort_unstable();
        pods.dedup();
        pods.len() as i64
    }
}

/// The fields of a Deployment's status a check may name, as they are spelled in the API.
pub const DEPLOYMENT_FIELDS: [&str; 5] = ["replicas", "readyReplicas", "updatedReplicas", "availableReplicas", "unavailableReplicas"];

#[derive(Clone, Debug, PartialEq)]
pub struct DeploymentQuery {
    pub namespace: String,
    pub name: String,
    /// (field, expected value) from [`DEPLOYMENT_FIELDS`].
    pub fields: Vec<(String, i64)>,
    /// The first container's image in the template.
    pub image: Option<String>,
    /// `complete: true`: what `kubectl rollout status` waits for.
    pub complete: bool,
}

impl DeploymentQuery {
    fn parse(f: &Fields) -> Result<DeploymentQuery, String> {
        let mut known: Vec<&str> = vec!["name", "namespace", "image", "complete"];
        known.extend(DEPLOYMENT_FIELDS);
        f.only(&known)?;
        let mut fields = Vec::new();
        for field in DEPLOYMENT_FIELDS {
            if let Some(n) = f.int(field)? {
                fields.push((field.to_string(), n));
            }
        }
        Ok(DeploymentQuery {
            namespace: f.string("namespace")?.unwrap_or_else(|| "default".into()),
            name: f.required_string("name")?,
            fields,
            image: f.string("image")?,
            complete: f.boolean("complete")?.unwrap_or(false),
        })
    }

    fn deployment<'a>(&self, sim: &'a Sim) -> Option<&'a crate::model::Deployment> {
        sim.objects(Kind::Deployment)
            .filter_map(|o| o.as_deployment())
            .find(|d| d.metadata.namespace == self.namespace && d.metadata.name == self.name)
    }

    /// The value of a status field now.
    pub fn field(&self, sim: &Sim, field: &str) -> Option<i64> {
        let s = &self.deployment(sim)?.status;
        Some(i64::from(match field {
            "replicas" => s.replicas,
            "readyReplicas" => s.ready_replicas,
            "updatedReplicas" => s.updated_replicas,
            "availableReplicas" => s.available_replicas,
            "unavailableReplicas" => s.unavailable_replicas,
            _ => return None,
        }))
    }

    fn evaluate(&self, sim: &Sim) -> (bool, String) {
        let Some(d) = self.deployment(sim) else {
            return (false, format!("deployment {} not found", self.name));
        };
        let mut ok = true;
        let mut seen = Vec::new();
        for (field, want) in &self.fields {
            let have = self.field(sim, field).unwrap_or(0);
            ok &= have == *want;
            seen.push(format!("{field} {have}"));
        }
        if let Some(want) = &self.image {
            let have = d.spec.template.spec.containers.first().map(|c| c.image.clone()).unwrap_or_default();
            ok &= have == *want;
            seen.push(format!("image {have}"));
        }
        if self.complete {
            let want = i64::from(d.spec.replicas.unwrap_or(1));
            let s = &d.status;
            let done = s.observed_generation >= d.metadata.generation
                && i64::from(s.updated_replicas) == want
                && i64::from(s.replicas) == want
                && i64::from(s.available_replicas) == want;
            ok &= done;
            seen.push(if done {
                "rollout complete".into()
            } else {
                format!("{} of {want} updated and available", s.updated_replicas.min(s.available_replicas))
            });
        }
        (ok, seen.join(", "))
    }

    fn describe(&self) -> String {
        let mut parts: Vec<String> = self.fields.iter().map(|(f, n)| format!("{f} {n}")).collect();
        if let Some(i) = &self.image {
            parts.push(format!("image {i}"));
        }
        if self.complete {
            parts.push("rollout complete".into());
        }
        format!("deployment {}: {}", self.name, parts.join(", "))
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct NodeQuery {
    pub name: String,
    /// The Ready condition's status: True, False or Unknown.
    pub ready: Option<String>,
    /// A taint key the node must carry (`node.kubernetes.io/unreachable`).
    pub taint: Option<String>,
}

impl NodeQuery {
    fn parse(f: &Fields) -> Result<NodeQuery, String> {
        f.only(&["name", "ready", "taint"])?;
        let ready = f.string("ready")?;
        if let Some(r) = &ready {
            if !["True", "False", "Unknown"].contains(&r.as_str()) {
                return Err(format!("{}: must be True, False or Unknown, got {r:?}", f.at("ready")));
            }
        }
        Ok(NodeQuery { name: f.required_string("name")?, ready, taint: f.string("taint")? })
    }

    fn evaluate(&self, sim: &Sim) -> (bool, String) {
        let Some(node) = sim.objects(Kind::Node).filter_map(|o| o.as_node()).find(|n| n.metadata.name == self.name) else {
            return (false, format!("node {} not found", self.name));
        };
        let ready =
            node.status.conditions.iter().find(|c| c.type_ == "Ready").map(|c| c.status.clone()).unwrap_or_else(|| "Unknown".into());
        let mut ok = self.ready.as_ref().is_none_or(|r| *r == ready);
        let mut seen = format!("Ready={ready}");
        if let Some(key) = &self.taint {
            let has = node.spec.taints.iter().any(|t| t.key == *key);
            ok &= has;
            seen.push_str(if has { ", tainted" } else { ", not tainted" });
        }
        (ok, seen)
    }
}

/// One thing that must be true.
#[derive(Clone, Debug, PartialEq)]
pub enum Condition {
    Pods(PodQuery, Count),
    Event(EventQuery, Count),
    Deployment(DeploymentQuery),
    Node(NodeQuery),
    Endpoints(EndpointQuery, Count),
    /// A process is running (true) or stopped (false).
    Component(String, bool),
    /// At least this much simulated time since the step began.
    After(Duration),
}

/// What a condition is and whether it holds now, for the page.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConditionStatus {
    pub wants: String,
    pub sees: String,
    pub met: bool,
}

impl Condition {
    pub fn evaluate(&self, sim: &Sim, step_start: Time) -> ConditionStatus {
        let (met, sees) = match self {
            Condition::Pods(q, c) => {
                let n = q.count(sim);
                (c.holds(n), format!("{n} now"))
            }
            Condition::Event(q, c) => {
                let n = q.count(sim, step_start);
                (c.holds(n), format!("{n} seen"))
            }
            Condition::Deployment(q) => q.evaluate(sim),
            Condition::Node(q) => q.evaluate(sim),
            Condition::Endpoints(q, c) => {
                let n = q.count(sim);
                (c.holds(n), format!("{n} now"))
            }
            Condition::Component(name, running) => {
                let is = ComponentId::parse(name).is_some_and(|id| sim.is_running(&id));
                (is == *running, if is { "running".into() } else { "stopped".into() })
            }
            Condition::After(d) => {
                let elapsed = sim.now().since(step_start);
                (elapsed >= *d, format!("{} so far", crate::command::sim_verbs::format_sim_time(elapsed)))
            }
        };
        ConditionStatus { wants: self.describe(), sees, met }
    }

    pub fn describe(&self) -> String {
        match self {
            Condition::Pods(q, c) => format!("{} {}", c.describe(), q.describe()),
            Condition::Event(q, c) => format!("{} {}", c.describe(), q.describe()),
            Condition::Deployment(q) => q.describe(),
            Condition::Endpoints(q, c) => format!("{} {}", c.describe(), q.describe()),
            Condition::Node(q) => {
                let mut s = format!("node {}", q.name);
                if let Some(r) = &q.ready {
                    s.push_str(&format!(" Ready={r}"));
                }
                if let Some(t) = &q.taint {
                    s.push_str(&format!(" with taint {t}"));
                }
                s
            }
            Condition::Component(name, running) => format!("{name} {}", if *running { "running" } else { "stopped" }),
            Condition::After(d) => format!("{} of simulated time", crate::command::sim_verbs::format_sim_time(*d)),
        }
    }
}

/// All conditions, and how long they may take.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct Check {
    pub conditions: Vec<Condition>,
    pub within: Option<Duration>,
}

/// The names a check's conditions use.
pub const CHECK_FIELDS: [&str; 8] = ["pods", "event", "deployment", "node", "endpoints", "component", "after", "within"];

impl Check {
    pub fn parse(v: &Value, path: &str) -> Result<Check, String> {
        let f = Fields::of(v, path)?;
        f.only(&CHECK_FIELDS)?;
        let mut conditions = Vec::new();
        // In the order of CHECK_FIELDS, so progress always lists them the same way.
        for key in CHECK_FIELDS {
            let Some(value) = f.get(key) else { continue };
            let at = f.at(key);
            match key {
                "pods" => {
                    let q = Fields::of(value, &at)?;
                    q.only(&["selector", "namespace", "status", "node", "notNode", "count", "min", "max"])?;
                    conditions.push(Condition::Pods(PodQuery::parse(&q)?, Count::parse(&q)?));
                }
                "event" => {
                    let q = Fields::of(value, &at)?;
                    q.only(&["reason", "object", "since-step", "count", "min", "max"])?;
                    conditions.push(Condition::Event(EventQuery::parse(&q)?, Count::parse(&q)?));
                }
                "deployment" => conditions.push(Condition::Deployment(DeploymentQuery::parse(&Fields::of(value, &at)?)?)),
                "node" => conditions.push(Condition::Node(NodeQuery::parse(&Fields::of(value, &at)?)?)),
                "endpoints" => {
                    let q = Fields::of(value, &at)?;
                    q.only(&["service", "namespace", "state", "count", "min", "max"])?;
                    conditions.push(Condition::Endpoints(EndpointQuery::parse(&q)?, Count::parse(&q)?));
                }
                "component" => {
                    let q = Fields::of(value, &at)?;
                    q.only(&["name", "state"])?;
                    let name = q.required_string("name")?;
                    if ComponentId::parse(&name).is_none_or(|id| id == ComponentId::User) {
                        return Err(format!(
                            "{}: unknown component {name:?} (expected kube-apiserver, etcd, kube-controller-manager, kube-scheduler, kubelet-NODE, kube-proxy-NODE or operator/NAME)",
                            q.at("name")
                        ));
                    }
                    let running = match q.required_string("state")?.as_str() {
                        "running" => true,
                        "stopped" => false,
                        other => return Err(format!("{}: must be running or stopped, got {other:?}", q.at("state"))),
                    };
                    conditions.push(Condition::Component(name, running));
                }
                "after" => conditions.push(Condition::After(f.duration("after")?.unwrap_or_default())),
                _ => {}
            }
        }
        if conditions.is_empty() {
            return Err(format!(
                "{path}: a check needs at least one of pods, event, deployment, node, endpoints, component, after (got {})",
                shown(v)
            ));
        }
        Ok(Check { conditions, within: f.duration("within")? })
    }

    pub fn evaluate(&self, sim: &Sim, step_start: Time) -> Vec<ConditionStatus> {
        self.conditions.iter().map(|c| c.evaluate(sim, step_start)).collect()
    }
}

/// What a measured answer may read.
const MEASURES: [&str; 5] = ["pods", "events", "deployment", "endpoints", "traffic"];

/// A number read from the cluster, to grade a prediction against what really happened.
#[derive(Clone, Debug, PartialEq)]
pub enum Measure {
    Pods(PodQuery),
    Events(EventQuery),
    Deployment(DeploymentQuery, String),
    Endpoints(EndpointQuery),
    /// How many different pods answered the Service's traffic lately.
    Traffic(TrafficQuery),
}

impl Measure {
    pub fn parse(v: &Value, path: &str) -> Result<Measure, String> {
        let f = Fields::of(v, path)?;
        f.only(&MEASURES)?;
        if f.map.len() != 1 {
            return Err(format!("{path}: name exactly one of {}", MEASURES.join(", ")));
        }
        if let Some(e) = f.get("endpoints") {
            let q = Fields::of(e, &f.at("endpoints"))?;
            q.only(&["service", "namespace", "state"])?;
            return Ok(Measure::Endpoints(EndpointQuery::parse(&q)?));
        }
        if let Some(t) = f.get("traffic") {
            let q = Fields::of(t, &f.at("traffic"))?;
            q.only(&["service", "namespace", "window"])?;
            return Ok(Measure::Traffic(TrafficQuery::parse(&q)?));
        }
        if let Some(p) = f.get("pods") {
            let q = Fields::of(p, &f.at("pods"))?;
            q.only(&["selector", "namespace", "status", "node", "notNode"])?;
            return Ok(Measure::Pods(PodQuery::parse(&q)?));
        }
        if let Some(e) = f.get("events") {
            let q = Fields::of(e, &f.at("events"))?;
            q.only(&["reason", "object", "since-step"])?;
            return Ok(Measure::Events(EventQuery::parse(&q)?));
        }
        let d = f.get("deployment").ok_or_else(|| format!("{path}: name exactly one of {}", MEASURES.join(", ")))?;
        let q = Fields::of(d, &f.at("deployment"))?;
        q.only(&["name", "namespace", "field"])?;
        let field = q.required_string("field")?;
        if !DEPLOYMENT_FIELDS.contains(&field.as_str()) {
            return Err(format!("{}: must be one of {}, got {field:?}", q.at("field"), DEPLOYMENT_FIELDS.join(", ")));
        }
        let query = DeploymentQuery {
            namespace: q.string("namespace")?.unwrap_or_else(|| "default".into()),
            name: q.required_string("name")?,
            fields: Vec::new(),
            image: None,
            complete: false,
        };
        Ok(Measure::Deployment(query, field))
    }

    pub fn read(&self, sim: &Sim, step_start: Time) -> i64 {
        match self {
            Measure::Pods(q) => q.count(sim),
            Measure::Events(q) => q.count(sim, step_start),
            Measure::Deployment(q, field) => q.field(sim, field).unwrap_or(0),
            Measure::Endpoints(q) => q.count(sim),
            Measure::Traffic(q) => q.answering(sim),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::command::{Scenario, Session};
    use serde_json::json;

    fn settled_default() -> Session {
        let mut s = Session::new(Scenario::builtin("default").unwrap(), Some(1)).unwrap();
        s.settle(Duration::mins(2)).unwrap();
        s
    }

    #[test]
    fn checks_read_the_cluster() {
        let s = settled_default();
        let check = Check::parse(
            &json!({
                "pods": {"selector": "app=web", "status": "Running", "count": 3},
                "event": {"reason": "Scheduled", "count": 3},
                "deployment": {"name": "web", "readyReplicas": 3, "image": "nginx:1.14.2", "complete": true},
                "node": {"name": "node-1", "ready": "True"},
                "component": {"name": "kube-scheduler", "state": "running"},
                "within": "60s"
            }),
            "check",
        )
        .unwrap();
        assert_eq!(check.within, Some(Duration::secs(60)));
        let status = check.evaluate(s.sim(), Time(0));
        assert!(status.iter().all(|c| c.met), "{status:?}");
        assert_eq!(status[0].wants, "exactly 3 pods with app=web Running");
        assert_eq!(status[0].sees, "3 now");
        assert_eq!(status[2].sees, "readyReplicas 3, image nginx:1.14.2, rollout complete");
        // Events from before the step began do not count for since-step.
        let recent = Check::parse(&json!({"event": {"reason": "Scheduled", "since-step": true}}), "check").unwrap();
        let later = s.sim().now() + Duration::secs(1);
        assert!(!recent.evaluate(s.sim(), later)[0].met);
    }

    #[test]
    fn malformed_checks_name_the_field() {
        let cases = [
            (json!({}), "check: a check needs at least one of pods, event, deployment, node, endpoints, component, after (got a mapping)"),
            (json!({"pod": {}}), "check: unknown field \"pod\" (expected one of: pods, event, deployment, node, endpoints, component, after, within)"),
            (json!({"pods": {"count": "three"}}), "check.pods.count: must be a whole number, got \"three\""),
            (json!({"pods": {"selector": "app in (web"}}), "check.pods.selector: unable to parse requirement: found '', expected: ',', ')'"),
            (json!({"event": {"since-step": true}}), "check.event.reason: is required"),
            (json!({"component": {"name": "kube-proxy", "state": "stopped"}}), "check.component.name: unknown component \"kube-proxy\" (expected kube-apiserver, etcd, kube-controller-manager, kube-scheduler, kubelet-NODE, kube-proxy-NODE or operator/NAME)"),
            (json!({"endpoints": {"service": "web", "state": "up"}}), "check.endpoints.state: must be one of ready, not ready, terminating, got \"up\""),
            (json!({"endpoints": {"state": "ready"}}), "check.endpoints.service: is required"),
            (json!({"component": {"name": "etcd", "state": "asleep"}}), "check.component.state: must be running or stopped, got \"asleep\""),
            (json!({"node": {"name": "n", "ready": "yes"}}), "check.node.ready: must be True, False or Unknown, got \"yes\""),
            (json!({"deployment": {"name": "web", "ready": 3}}), "check.deployment: unknown field \"ready\" (expected one of: name, namespace, image, complete, replicas, readyReplicas, updatedReplicas, availableReplicas, unavailableReplicas)"),
            (json!({"pods": {"count": 1, "min": 1}}), "check.pods: give count, or min and max, not both"),
            (json!("yes"), "check: must be a mapping, got \"yes\""),
        ];
        for (v, want) in cases {
            let got = Check::parse(&v, "check").err();
            assert_eq!(got.as_deref(), Some(want), "{v}");
        }
    }

    #[test]
    fn endpoints_and_traffic_are_read_from_the_slices_and_the_connections() {
        let mut s = settled_default();
        assert!(s.execute("kubectl expose deployment web --port=80").ok);
        s.advance(Duration::secs(2));
        let ready = Measure::parse(&json!({"endpoints": {"service": "web", "state": "ready"}}), "m").unwrap();
        let answering = Measure::parse(&json!({"traffic": {"service": "web", "window": "3s"}}), "m").unwrap();
        assert_eq!(ready.read(s.sim(), Time(0)), 3);
        assert_eq!(answering.read(s.sim(), Time(0)), 0, "no traffic yet");
        assert!(s.execute("sim traffic web --rate 50").ok);
        s.advance(Duration::secs(3));
        assert_eq!(answering.read(s.sim(), Time(0)), 3);
        // A pod being deleted stays listed, terminating, and stops being answered from.
        let victim = s.sim().api().items(Kind::Pod, Some("default")).next().unwrap().meta().name.to_string();
        assert!(s.execute(&format!("kubectl delete pod {victim} --wait=false")).ok);
        s.advance(Duration::millis(100));
        let terminating = Check::parse(&json!({"endpoints": {"service": "web", "state": "terminating", "count": 1}}), "c").unwrap();
        let status = terminating.evaluate(s.sim(), Time(0));
        assert!(status[0].met, "{status:?}");
        assert_eq!(status[0].wants, "exactly 1 terminating endpoints of service web");
        s.advance(Duration::secs(4));
        assert!(s
            .sim()
            .recent_connections()
            .filter(|c| c.at.0 + 3000 >= s.sim().now().0)
            .all(|c| c.backend.as_deref() != Some(victim.as_str())));
        assert!(Measure::parse(&json!({"traffic": {}}), "m").unwrap_err().ends_with("service: is required"));
        assert_eq!(
            Measure::parse(&json!({"pods": {}, "traffic": {}}), "m").unwrap_err(),
            "m: name exactly one of pods, events, deployment, endpoints, traffic"
        );
    }

    #[test]
    fn measures_count_pods_and_read_status() {
        let s = settled_default();
        let m = Measure::parse(&json!({"pods": {"selector": "app=web"}}), "m").unwrap();
        assert_eq!(m.read(s.sim(), Time(0)), 3);
        let d = Measure::parse(&json!({"deployment": {"name": "web", "field": "availableReplicas"}}), "m").unwrap();
        assert_eq!(d.read(s.sim(), Time(0)), 3);
        assert_eq!(
            Measure::parse(&json!({"deployment": {"name": "web", "field": "ready"}}), "m").unwrap_err(),
            "m.deployment.field: must be one of replicas, readyReplicas, updatedReplicas, availableReplicas, unavailableReplicas, got \"ready\""
        );
    }

    #[test]
    fn counts() {
        assert!(Count { min: Some(3), max: Some(3) }.holds(3));
        assert!(!Count { min: Some(3), max: Some(3) }.holds(4));
        assert!(Count { min: None, max: Some(4) }.holds(0));
    }
}
