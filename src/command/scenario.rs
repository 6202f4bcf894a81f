//! Scenarios: a cluster to start from and a script of what happens to it.
//!
//! A scenario file is YAML:
//!
//! ```yaml
//! name: rolling-update
//! seed: 7                      # optional; the command line's --seed wins
//! nodes:                       # a list of nodes...
//!   - {name: node-1, cpu: "4", memory: 8Gi, pods: 110, zone: zone-a}
//! # ...or a template:  nodes: {count: 100, namePrefix: node-, cpu: "4", memory: 8Gi, zones: [a, b]}
//! manifests: |                 # multi-document YAML (or a list of objects), applied at time 0
//!   apiVersion: apps/v1
//!   kind: Deployment
//!   ...
//! timeline:                    # commands of the command language, each at its simulated time
//!   - {at: 30s, run: kubectl set image deployment/web nginx=nginx:1.16.1}
//! operators: [label_pods.py]   # Python operator files (kopf's shape), relative to this file;
//!                              # the shell runs them (`kubeloop run --operator` does the same)
//! ```
//!
//! Starting one builds a fresh `Sim` with the seed, adds the nodes (each with its kubelet) and
//! applies the manifests as `kubectl apply` would, so a later `kubectl apply` of the same file
//! reports `unchanged`. The timeline is played by a [`super::Session`] as time advances.

use super::kubectl::apply::{self, DryRun, Manifest};
use super::yaml;
use super::Session;
use crate::model::{Duration, Quantity};
use crate::sim::{NodeConfig, Sim};
use serde_json::Value;

/// The built-in scenarios, by name.
const BUILTIN: &[(&str, &str)] = &[
    ("default", include_str!("../../scenarios/default.yaml")),
    ("dropped-events", include_str!("../../scenarios/dropped-events.yaml")),
    ("dropped-events-edge", include_str!("../../scenarios/dropped-events-edge.yaml")),
    ("rolling-update", include_str!("../../scenarios/rolling-update.yaml")),
    ("scale-up", include_str!("../../scenarios/scale-up.yaml")),
    ("service", include_str!("../../scenarios/service.yaml")),
];

/// One command of a timeline and when it runs (simulated time since the start).
#[derive(Clone, Debug, PartialEq)]
pub struct TimelineEntry {
    pub at: Duration,
    pub run: String,
}

#[derive(Clone, Debug)]
pub struct Scenario {
    pub name: String,
    pub description: String,
    pub seed: Option<u64>,
    pub nodes: Vec<NodeConfig>,
    /// The manifests, already decoded (a scenario that cannot load fails at parse time).
    pub manifests: Vec<Manifest>,
    /// Sorted by time; entries at the same time keep their order in the file.
    pub timeline: Vec<TimelineEntry>,
    /// Operator files (paths as written, relative to the scenario file): the library cannot
    /// run Python, so the shell that loaded the scenario starts them (`Sim::add_operator`).
    pub operators: Vec<String>,
}

/// `operators:`: a list of file paths.
fn parse_operators(value: Option<&Value>) -> Result<Vec<String>, String> {
    match value {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(Value::Array(items)) => items
            .iter()
            .enumerate()
            .map(|(i, v)| v.as_str().map(str::to_string).ok_or_else(|| format!("scenario: operators[{i}] must be a file path")))
            .collect(),
        Some(_) => Err("scenario: operators must be a list of file paths".into()),
    }
}

/// The most nodes a template may create (the scale envelope is 5,000).
pub const MAX_NODES: u64 = 50_000;

impl Scenario {
    /// An empty cluster: no nodes, no manifests, no timeline.
    pub fn empty() -> Scenario {
        Scenario {
            name: "empty".into(),
            description: String::new(),
            seed: None,
            nodes: Vec::new(),
            manifests: Vec::new(),
            timeline: Vec::new(),
            operators: Vec::new(),
        }
    }

    pub fn builtin_names() -> Vec<&'static str> {
        BUILTIN.iter().map(|(n, _)| *n).collect()
    }

    /// A built-in scenario. They are checked by tests, so this never fails for a listed name.
    pub fn builtin(name: &str) -> Option<Scenario> {
        let (_, text) = BUILTIN.iter().find(|(n, _)| *n == name)?;
        Scenario::parse(text).ok()
    }

    /// Parses a scenario file. Errors name the field at fault.
    pub fn parse(text: &str) -> Result<Scenario, String> {
        let docs = yaml::documents(text).map_err(|e| format!("scenario: invalid YAML: {e}"))?;
        let [doc] = &docs[..] else {
            return Err(format!("scenario: expected one YAML document, found {}", docs.len()));
        };
        let Value::Object(map) = doc else {
            return Err("scenario: expected a mapping at the top level".into());
        };
        for key in map.keys() {
            if !["name", "description", "seed", "nodes", "manifests", "timeline", "operators"].contains(&key.as_str()) {
                return Err(format!(
                    "scenario: unknown field {key:?} (expected name, description, seed, nodes, manifests, timeline, operators)"
                ));
            }
        }
        let text_field = |k: &str| -> Result<String, String> {
            match map.get(k) {
                None | Some(Value::Null) => Ok(String::new()),
                Some(Value::String(s)) => Ok(s.clone()),
                Some(_) => Err(format!("scenario: {k} must be a string")),
            }
        };
        let name = text_field("name")?;
        if name.is_empty() {
            return Err("scenario: name is required".into());
        }
        let seed = match map.get("seed") {
            None | Some(Value::Null) => None,
            Some(v) => Some(v.as_u64().ok_or("scenario: seed must be a non-negative integer")?),
        };
        Ok(Scenario {
            name,
            description: text_field("description")?,
            seed,
            nodes: parse_nodes(map.get("nodes"))?,
            manifests: parse_manifests(map.get("manifests"))?,
            timeline: parse_timeline(map.get("timeline"))?,
            operators: parse_operators(map.get("operators"))?,
        })
    }

    /// A built-in name, or else the text of a scenario file.
    pub fn from_name_or_text(name: &str, text: Option<&str>) -> Result<Scenario, String> {
        if let Some(s) = Scenario::builtin(name) {
            return Ok(s);
        }
        match text {
            Some(t) => Scenario::parse(t),
            None => Err(format!("unknown scenario {name:?}: not a built-in ({}) and not a file", Scenario::builtin_names().join(", "))),
        }
    }

    /// A fresh cluster: `Sim::new(seed)`, the nodes, then the manifests applied at time zero.
    pub fn start(&self, seed: u64) -> Result<Sim, String> {
        let mut sim = Sim::new(seed);
        for node in &self.nodes {
            sim.add_node(node.clone()).map_err(|e| format!("scenario {}: {e}", self.name))?;
        }
        if self.manifests.is_empty() {
            return Ok(sim);
        }
        let mut session = Session::from_sim(sim);
        for m in &self.manifests {
            let mut m = m.clone();
            if m.object.kind().namespaced() && m.object.meta().namespace.is_empty() {
                m.object.meta_mut().namespace = "default".into();
                if let Some(meta) = m.raw.get_mut("metadata").and_then(Value::as_object_mut) {
                    meta.insert("namespace".into(), Value::String("default".into()));
                }
            }
            apply::apply_one(&mut session, m, DryRun::None).map_err(|e| format!("scenario {}: {e}", self.name))?;
        }
        Ok(session.into_sim())
    }
}

fn parse_nodes(v: Option<&Value>) -> Result<Vec<NodeConfig>, String> {
    match v {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(Value::Array(items)) => {
            let mut nodes = Vec::new();
            for (i, item) in items.iter().enumerate() {
                let Value::Object(m) = item else {
                    return Err(format!("scenario: nodes[{i}] must be a mapping"));
                };
                let name = m.get("name").and_then(Value::as_str).ok_or(format!("scenario: nodes[{i}].name is required"))?;
                nodes.push(node_config(name, m, &format!("nodes[{i}]"), None)?);
            }
            let mut names: Vec<&str> = nodes.iter().map(|n| n.name.as_str()).collect();
            crate::sort::sort(&mut names);
            if let Some(w) = names.windows(2).find(|w| w[0] == w[1]) {
                return Err(format!("scenario: node {:?} is listed twice", w[0]));
            }
            Ok(nodes)
        }
        Some(Value::Object(m)) => {
            let count = m.get("count").and_then(Value::as_u64).ok_or("scenario: nodes.count must be a non-negative integer")?;
            if count > MAX_NODES {
                return Err(format!("scenario: nodes.count {count} is more than the {MAX_NODES} kubeloop supports"));
            }
            let prefix = match m.get("namePrefix") {
                None => "node-".to_string(),
                Some(Value::String(p)) => p.clone(),
                Some(_) => return Err("scenario: nodes.namePrefix must be a string".into()),
            };
            let zones: Vec<String> = match m.get("zones") {
                None => Vec::new(),
                Some(Value::Array(z)) => z
                    .iter()
                    .map(|z| z.as_str().map(str::to_string).ok_or("scenario: nodes.zones must be strings"))
                    .collect::<Result<_, _>>()?,
                Some(_) => return Err("scenario: nodes.zones must be a list".into()),
            };
            (1..=count)
                .map(|i| {
                    let zone = (!zones.is_empty()).then(|| zones[((i - 1) % zones.len() as u64) as usize].clone());
                    node_config(&format!("{prefix}{i}"), m, "nodes", zone)
                })
                .collect()
        }
        Some(_) => Err("scenario: nodes must be a list of nodes or a template with a count".into()),
    }
}

fn node_config(name: &str, m: &serde_json::Map<String, Value>, at: &str, zone: Option<String>) -> Result<NodeConfig, String> {
    if !crate::api::validation::is_dns1123_subdomain(name) {
        return Err(format!("scenario: {at}: node name {name:?} is not a lowercase RFC 1123 subdomain"));
    }
    let mut config = NodeConfig::new(name);
    let quantity = |k: &str| -> Result<Option<String>, String> {
        match m.get(k) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.clone())),
            Some(Value::Number(n)) => Ok(Some(n.to_string())),
            Some(_) => Err(format!("scenario: {at}.{k} must be a quantity like \"4\" or \"8Gi\"")),
        }
    };
    for (k, slot) in [("cpu", &mut config.cpu), ("memory", &mut config.memory)] {
        if let Some(q) = quantity(k)? {
            if !Quantity::new(q.clone()).is_valid() {
                return Err(format!("scenario: {at}.{k}: {}", crate::model::QUANTITY_FORMAT_ERROR));
            }
            *slot = q;
        }
    }
    if let Some(p) = m.get("pods") {
        config.pods = p.as_i64().filter(|p| *p > 0).ok_or(format!("scenario: {at}.pods must be a positive integer"))?;
    }
    match (m.get("zone"), zone) {
        (Some(Value::String(z)), _) => config.zone = z.clone(),
        (Some(_), _) => return Err(format!("scenario: {at}.zone must be a string")),
        (None, Some(z)) => config.zone = z,
        (None, None) => {}
    }
    Ok(config)
}

fn parse_manifests(v: Option<&Value>) -> Result<Vec<Manifest>, String> {
    let text = match v {
        None | Some(Value::Null) => return Ok(Vec::new()),
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(items)) => {
            let mut all = String::new();
            for item in items {
                match item {
                    Value::String(s) => all.push_str(s),
                    other => all.push_str(&serde_json::to_string(other).unwrap_or_default()),
                }
                all.push_str("\n---\n");
            }
            all
        }
        Some(_) => return Err("scenario: manifests must be multi-document YAML text or a list of objects".into()),
    };
    apply::load(&[("scenario manifests".to_string(), text)], &Default::default()).map_err(|e| format!("scenario: {e}"))
}

fn parse_timeline(v: Option<&Value>) -> Result<Vec<TimelineEntry>, String> {
    let items = match v {
        None | Some(Value::Null) => return Ok(Vec::new()),
        Some(Value::Array(items)) => items,
        Some(_) => return Err("scenario: timeline must be a list of {at, run}".into()),
    };
    let mut entries = Vec::new();
    for (i, item) in items.iter().enumerate() {
        let Value::Object(m) = item else {
            return Err(format!("scenario: timeline[{i}] must be a mapping with at and run"));
        };
        let at = match m.get("at") {
            Some(Value::String(s)) => Duration::parse(s).map_err(|e| format!("scenario: timeline[{i}].at: {e}"))?,
            Some(Value::Number(n)) if n.as_u64() == Some(0) => Duration::ZERO,
            _ => return Err(format!("scenario: timeline[{i}].at must be a duration like 30s")),
        };
        let run = m.get("run").and_then(Value::as_str).ok_or(format!("scenario: timeline[{i}].run must be a command"))?;
        super::parse::split(run).map_err(|e| format!("scenario: timeline[{i}].run: {e}"))?;
        entries.push(TimelineEntry { at, run: run.to_string() });
    }
    crate::sort::sort_by_key(&mut entries, |e| e.at);
    Ok(entries)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Kind, ObjectKey};

    #[test]
    fn every_builtin_scenario_parses_and_starts() {
        for name in Scenario::builtin_names() {
            let s = Scenario::parse(BUILTIN.iter().find(|(n, _)| *n == name).unwrap().1).unwrap_or_else(|e| panic!("{name}: {e}"));
            let mut sim = s.start(1).unwrap_or_else(|e| panic!("{name}: {e}"));
            // A kubelet registers its Node over the API, so give it a moment of simulated time.
            sim.advance(Duration::secs(5));
            assert_eq!(sim.api().count(Kind::Node), s.nodes.len(), "{name}");
        }
    }

    #[test]
    fn the_default_scenario_is_the_documentation_deployment_on_two_nodes() {
        let s = Scenario::builtin("default").unwrap();
        assert_eq!(
            s.nodes.iter().map(|n| (n.name.as_str(), n.cpu.as_str(), n.memory.as_str())).collect::<Vec<_>>(),
            [("node-1", "4", "8Gi"), ("node-2", "4", "8Gi")]
        );
        let sim = s.start(1).unwrap();
        let web = sim.api().get(&ObjectKey::new(Kind::Deployment, "default", "web")).unwrap().as_deployment().unwrap().clone();
        assert_eq!(web.spec.replicas, Some(3));
        let c = &web.spec.template.spec.containers[0];
        assert_eq!((c.name.as_str(), c.image.as_str()), ("nginx", "nginx:1.14.2"));
        assert_eq!(c.resources.requests.get("cpu").map(|q| q.0.as_str()), Some("100m"));
        assert_eq!(c.resources.requests.get("memory").map(|q| q.0.as_str()), Some("128Mi"));
    }

    #[test]
    fn a_node_template_expands_round_robin_over_zones() {
        let s = Scenario::parse("name: big\nnodes: {count: 3, namePrefix: n-, cpu: 8, memory: 16Gi, zones: [a, b]}\n").unwrap();
        let got: Vec<(String, String, String)> = s.nodes.iter().map(|n| (n.name.clone(), n.cpu.clone(), n.zone.clone())).collect();
        assert_eq!(
            got,
            [("n-1".into(), "8".into(), "a".into()), ("n-2".into(), "8".into(), "b".into()), ("n-3".into(), "8".into(), "a".into())]
        );
    }

    #[test]
    fn timelines_sort_by_time_and_keep_file_order_at_equal_times() {
        let s = Scenario::parse(
            "name: t\ntimeline:\n- {at: 1m, run: sim time}\n- {at: 30s, run: kubectl get pods}\n- {at: 30s, run: kubectl get nodes}\n",
        )
        .unwrap();
        let runs: Vec<&str> = s.timeline.iter().map(|e| e.run.as_str()).collect();
        assert_eq!(runs, ["kubectl get pods", "kubectl get nodes", "sim time"]);
    }

    #[test]
    fn malformed_scenarios_name_the_field_at_fault() {
        for (text, want) in [
            ("name: x\nnodez: []\n", "unknown field \"nodez\""),
            ("nodes: []\n", "name is required"),
            ("name: x\nnodes: [{name: Node_1}]\n", "nodes[0]: node name \"Node_1\""),
            ("name: x\nnodes: [{name: a, cpu: lots}]\n", "nodes[0].cpu: quantities must match"),
            ("name: x\nnodes: [{name: a}, {name: a}]\n", "node \"a\" is listed twice"),
            ("name: x\ntimeline: [{at: soon, run: x}]\n", "timeline[0].at: invalid duration"),
            ("name: x\ntimeline: [{at: 1s}]\n", "timeline[0].run must be a command"),
            ("name: x\nmanifests: 'apiVersion: v1'\n", "Object 'Kind' is missing"),
            ("name: x\nnodes: {count: 999999}\n", "more than the 50000"),
            ("- a\n", "expected a mapping"),
        ] {
            let err = Scenario::parse(text).unwrap_err();
            assert!(err.contains(want), "{text:?}: {err}");
        }
    }
}
