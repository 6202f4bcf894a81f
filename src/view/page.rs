//! The page's own small decisions, kept here so they are tested natively: reading `?scenario=`
//! and `?seed=` from the address, the speeds offered, and the command line each control runs.
//!
//! Every control that changes the cluster becomes a command line run through the one
//! [`crate::command::Session`], exactly as if typed in the console: the page has no other way in.

use crate::command::Scenario;
use crate::sim::Sim;

/// The speeds offered: simulated time per wall-clock time.
pub const SPEEDS: [f64; 9] = [0.25, 0.5, 1.0, 2.0, 5.0, 10.0, 25.0, 50.0, 100.0];

/// The benchmark's cluster: 100 nodes and a Deployment of 3,000 replicas. The page offers it as
/// `?scenario=large`; the command layer's built-ins stay the teaching ones.
pub const LARGE_SCENARIO: &str = r#"name: large
description: 100 nodes and a Deployment "web" of 3,000 nginx replicas (the page's benchmark).
seed: 1
nodes: {count: 100, namePrefix: node-, cpu: "4", memory: 8Gi, pods: 110, zones: [zone-a, zone-b, zone-c]}
manifests: |
  apiVersion: apps/v1
  kind: Deployment
  metadata:
    name: web
    labels: {app: web}
  spec:
    replicas: 3000
    selector:
      matchLabels: {app: web}
    template:
      metadata:
        labels: {app: web}
      spec:
        containers:
        - name: nginx
          image: nginx:1.14.2
          ports: [{containerPort: 80}]
          resources:
            requests: {cpu: 100m, memory: 128Mi}
"#;

/// What the address asks for.
#[derive(Clone, Debug, PartialEq)]
pub struct PageParams {
    pub scenario: String,
    pub seed: Option<u64>,
}

impl Default for PageParams {
    fn default() -> Self {
        PageParams { scenario: "default".into(), seed: None }
    }
}

/// The names `?scenario=` accepts.
pub fn scenario_names() -> Vec<&'static str> {
    let mut names = Scenario::builtin_names();
    names.push("large");
    names
}

/// A scenario by the name the page accepts.
pub fn scenario(name: &str) -> Result<Scenario, String> {
    if name == "large" {
        return Scenario::parse(LARGE_SCENARIO);
    }
    Scenario::builtin(name).ok_or_else(|| format!("unknown scenario {name:?}; the page knows {}", scenario_names().join(", ")))
}

/// Reads `?scenario=NAME&seed=N` (other parameters are left to others). Errors say what was wrong.
pub fn parse_query(query: &str) -> Result<PageParams, String> {
    let mut params = PageParams::default();
    for pair in query.trim_start_matches('?').split('&').filter(|p| !p.is_empty()) {
        let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
        let value = percent_decode(value);
        match key {
            "scenario" => {
                if !scenario_names().contains(&value.as_str()) {
                    return Err(format!("unknown scenario {value:?} in the address; the page knows {}", scenario_names().join(", ")));
                }
                params.scenario = value;
            }
            "seed" => {
                let seed = value
                    .parse::<u64>()
                    .map_err(|_| format!("invalid seed {value:?} in the address: must be a whole number from 0 to 18446744073709551615"))?;
                params.seed = Some(seed);
            }
            _ => {}
        }
    }
    Ok(params)
}

/// `%XX` and `+` decoding for query values; malformed escapes are kept as they are.
fn percent_decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'+' => out.push(b' '),
            b'%' if i + 2 < bytes.len() => {
                match std::str::from_utf8(&bytes[i + 1..i + 3]).ok().and_then(|h| u8::from_str_radix(h, 16).ok()) {
                    Some(b) => {
                        out.push(b);
                        i += 2;
                    }
                    None => out.push(b'%'),
                }
            }
            b => out.push(b),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The nearest offered speed to `x` (for a speed from elsewhere).
pub fn nearest_speed(x: f64) -> f64 {
    SPEEDS.iter().copied().fold(1.0, |best, s| if (s - x).abs() < (best - x).abs() { s } else { best })
}

/// `kubectl scale deployment NAME --replicas=N` (with `-n` outside `default`).
pub fn scale_command(namespace: &str, deployment: &str, replicas: i64) -> String {
    format!("kubectl scale deployment {deployment} --replicas={replicas}{}", namespace_flag(namespace))
}

/// `kubectl delete pod NAME`: the same DELETE the Kill button sends.
pub fn kill_command(namespace: &str, pod: &str) -> String {
    format!("kubectl delete pod {pod}{}", namespace_flag(namespace))
}

fn namespace_flag(namespace: &str) -> String {
    if namespace.is_empty() || namespace == "default" {
        String::new()
    } else {
        format!(" -n {namespace}")
    }
}

/// `sim node add node-N` with the first free N after the nodes that exist or are starting.
pub fn add_node_command(sim: &Sim) -> String {
    let taken = |name: &str| {
        sim.has_component(&crate::sim::ComponentId::Kubelet(name.to_string()))
            || sim.api().get(&crate::model::ObjectKey::new(crate::model::Kind::Node, "", name)).is_some()
    };
    let n = (1..).find(|n| !taken(&format!("node-{n}"))).unwrap_or(1);
    format!("sim node add node-{n}")
}

/// `sim seed N`: restarts the scenario with seed N (also what Reset runs, with the current seed).
pub fn seed_command(seed: u64) -> String {
    format!("sim seed {seed}")
}

/// The component switch in the room of loops: `sim stop NAME` while it runs, `sim start NAME`
/// while it is stopped.
pub fn switch_command(component: &str, running: bool) -> String {
    format!("sim {} {component}", if running { "stop" } else { "start" })
}

/// A node's fault buttons: `sim node fail|partition|recover NAME`.
pub const NODE_FAULTS: [&str; 3] = ["fail", "partition", "recover"];

/// `sim node VERB NAME` for one of [`NODE_FAULTS`].
pub fn node_fault_command(verb: &str, node: &str) -> String {
    format!("sim node {verb} {node}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::command::Session;

    #[test]
    fn the_address_picks_scenario_and_seed_and_bad_values_say_why() {
        assert_eq!(parse_query(""), Ok(PageParams::default()));
        assert_eq!(parse_query("?scenario=large&seed=42"), Ok(PageParams { scenario: "large".into(), seed: Some(42) }));
        assert_eq!(parse_query("?speed=10&scenario=rolling%2Dupdate"), Ok(PageParams { scenario: "rolling-update".into(), seed: None }));
        assert_eq!(
            parse_query("?scenario=nope"),
            Err("unknown scenario \"nope\" in the address; the page knows default, rolling-update, scale-up, large".into())
        );
        assert_eq!(
            parse_query("?seed=-1"),
            Err("invalid seed \"-1\" in the address: must be a whole number from 0 to 18446744073709551615".into())
        );
        assert!(parse_query("?seed=%ZZ&x").unwrap_err().contains("\"%ZZ\""));
        assert!(parse_query("?seed=%").is_err());
    }

    #[test]
    fn every_scenario_the_page_names_loads() {
        for name in scenario_names() {
            let s = scenario(name).unwrap_or_else(|e| panic!("{name}: {e}"));
            assert_eq!(s.name, name);
        }
        let large = scenario("large").unwrap();
        assert_eq!(large.nodes.len(), 100);
        assert!(scenario("huge").unwrap_err().starts_with("unknown scenario \"huge\""));
    }

    #[test]
    fn controls_become_command_lines_that_the_session_accepts() {
        let mut s = Session::new(scenario("default").unwrap(), Some(1)).unwrap();
        assert_eq!(scale_command("default", "web", 5), "kubectl scale deployment web --replicas=5");
        assert_eq!(kill_command("team-a", "web-1"), "kubectl delete pod web-1 -n team-a");
        assert_eq!(add_node_command(s.sim()), "sim node add node-3");
        assert!(s.execute(&scale_command("default", "web", 5)).ok);
        assert!(s.execute(&add_node_command(s.sim())).ok);
        assert_eq!(add_node_command(s.sim()), "sim node add node-4");
        assert_eq!(s.execute(&seed_command(9)).stdout, "scenario \"default\" restarted with seed 9\n");
        assert_eq!(switch_command("kube-scheduler", true), "sim stop kube-scheduler");
        assert_eq!(switch_command("kubelet-node-1", false), "sim start kubelet-node-1");
        assert_eq!(node_fault_command("partition", "node-2"), "sim node partition node-2");
        assert_eq!(nearest_speed(7.0), 5.0);
        assert_eq!(nearest_speed(1000.0), 100.0);
        assert_eq!(nearest_speed(0.0), 0.25);
    }
}
