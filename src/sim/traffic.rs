//! Traffic: clients sending requests to a Service, routed as a real node routes them.
//!
//! `sim traffic SERVICE` starts a flow of connections at a rate, from one node, from a pod (its
//! node), or from every node in turn. Each connection is routed by the *sending node's machine*:
//! the rules its kube-proxy last wrote (`net::NodeRules`), whatever kube-proxy knows now. The rules
//! pick a backend; the backend's node then answers or not (`kubelet::network::Answer`). So traffic
//! shows what the loops have done, including what they have not caught up with: a pod killed a
//! moment ago still gets connections until the EndpointSlice controller and this node's
//! kube-proxy have both turned, and a stopped kube-proxy's node keeps sending them there.
//!
//! What a client sees, as curl would say it: answered; `connection refused` (the service has no
//! endpoints and its rule rejects, or the pod's network is up but nothing listens); `connection
//! timed out` (the node has no rule for the service, or nothing holds the backend's address any
//! more, or its node is off). Nothing here draws from the RNG unless a flow runs.

use super::{Delivery, NodeFault, Sim};
use crate::api::ApiError;
use crate::kubelet::network::Answer;
use crate::model::{Duration, Kind, ObjectKey, Time};
use std::collections::{BTreeMap, VecDeque};

/// How many recent connections are kept for the page to draw.
pub const RECENT: usize = 256;
/// The most connections a flow sends per simulated second.
pub const MAX_RATE: u32 = 1000;

/// Where a flow's connections start.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Source {
    /// A client on every node, in turn.
    EveryNode,
    Node(String),
    /// A pod: its node's rules route it.
    Pod(ObjectKey),
}

impl std::fmt::Display for Source {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Source::EveryNode => f.write_str("every node"),
            Source::Node(n) => f.write_str(n),
            Source::Pod(k) => write!(f, "pod/{}", k.name),
        }
    }
}

/// How one connection ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    Answered,
    Refused,
    TimedOut,
}

impl Outcome {
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Answered => "answered",
            Outcome::Refused => "connection refused",
            Outcome::TimedOut => "connection timed out",
        }
    }
}

/// One connection, for the page's dots and for tests.
#[derive(Clone, Debug, PartialEq)]
pub struct Connection {
    /// Its number among every connection sent in this run (from 1).
    pub seq: u64,
    pub at: Time,
    /// The flow's service, `NAMESPACE/NAME`.
    pub service: String,
    pub from_node: String,
    /// The pod the rules picked (its name), if they picked one.
    pub backend: Option<String>,
    pub backend_ip: Option<String>,
    pub outcome: Outcome,
    /// Why, in words: "no endpoints", "stale rule: nothing at 10.244.1.5", …
    pub why: &'static str,
}

/// Counts per backend pod.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BackendCount {
    pub answered: u64,
    pub failed: u64,
}

/// One running flow.
#[derive(Clone, Debug, PartialEq)]
pub struct Flow {
    pub id: u64,
    pub service: ObjectKey,
    /// The service port (its number); `None`: the first.
    pub port: Option<i64>,
    pub source: Source,
    pub rate: u32,
    pub started_at: Time,
    pub sent: u64,
    pub answered: u64,
    pub refused: u64,
    pub timed_out: u64,
    pub by_backend: BTreeMap<String, BackendCount>,
    /// The next node of `EveryNode`'s turn.
    turn: usize,
}

impl Flow {
    fn every(&self) -> Duration {
        Duration((1000 / u64::from(self.rate.max(1))).max(1))
    }
    /// `NAMESPACE/NAME`.
    pub fn service_name(&self) -> String {
        format!("{}/{}", self.service.namespace, self.service.name)
    }
}

#[derive(Debug, Default)]
pub(crate) struct Traffic {
    flows: BTreeMap<u64, Flow>,
    next_id: u64,
    /// Connections sent so far, by every flow.
    sent: u64,
    recent: VecDeque<Connection>,
}

impl Sim {
    /// `sim traffic SERVICE`: starts (or replaces) the flow to `service` at `rate` connections per
    /// second. Errors, kubectl-shaped, change nothing.
    pub fn start_traffic(&mut self, service: ObjectKey, port: Option<i64>, source: Source, rate: u32) -> Result<&Flow, String> {
        let svc = self
            .api
            .get(&service)
            .and_then(|o| o.as_service())
            .ok_or_else(|| ApiError::not_found(Kind::Service, &service.name).kubectl_message())?;
        if let Some(p) = port {
            if !svc.spec.ports.iter().any(|sp| sp.port == p) {
                return Err(format!("error: service {:?} has no port {p}", service.name));
            }
        }
        if svc.spec.ports.is_empty() {
            return Err(format!("error: service {:?} has no ports", service.name));
        }
        if !(1..=MAX_RATE).contains(&rate) {
            return Err(format!("error: invalid argument \"{rate}\" for \"--rate\" flag: from 1 to {MAX_RATE} connections per second"));
        }
        match &source {
            Source::Node(n) if self.machine(n).is_none() => return Err(ApiError::not_found(Kind::Node, n).kubectl_message()),
            Source::Pod(k) => {
                let pod =
                    self.api.get(k).and_then(|o| o.as_pod()).ok_or_else(|| ApiError::not_found(Kind::Pod, &k.name).kubectl_message())?;
                if pod.node_name().is_none() {
                    return Err(format!("error: pod {:?} is not scheduled to a node yet", k.name));
                }
            }
            _ => {}
        }
        if self.machines.is_empty() {
            return Err("error: the cluster has no nodes to send traffic from".into());
        }
        self.stop_traffic(Some(&service));
        self.traffic.next_id += 1;
        let id = self.traffic.next_id;
        let flow = Flow {
            id,
            service,
            port,
            source,
            rate,
            started_at: self.now,
            sent: 0,
            answered: 0,
            refused: 0,
            timed_out: 0,
            by_backend: BTreeMap::new(),
            turn: 0,
        };
        let first = self.now + flow.every();
        self.traffic.flows.insert(id, flow);
        self.push(first, Delivery::Traffic(id));
        Ok(&self.traffic.flows[&id])
    }

    /// `sim traffic stop [SERVICE]`: ends that flow (or every flow). Returns how many ended.
    pub fn stop_traffic(&mut self, service: Option<&ObjectKey>) -> usize {
        let before = self.traffic.flows.len();
        self.traffic.flows.retain(|_, f| service.is_some_and(|s| *s != f.service));
        before - self.traffic.flows.len()
    }

    pub fn traffic_flows(&self) -> impl Iterator<Item = &Flow> {
        self.traffic.flows.values()
    }

    /// The last connections, oldest first.
    pub fn recent_connections(&self) -> impl Iterator<Item = &Connection> {
        self.traffic.recent.iter()
    }

    /// A flow's next connection is due.
    pub(super) fn send_traffic(&mut self, id: u64) {
        let Some(flow) = self.traffic.flows.get(&id) else { return };
        let (every, source, service, port, turn) = (flow.every(), flow.source.clone(), flow.service.clone(), flow.port, flow.turn);
        self.push(self.now + every, Delivery::Traffic(id));
        let Some((from_node, next_turn)) = self.source_node(&source, turn) else { return };
        let connection = self.connect(&from_node, &service, port);
        let flow = self.traffic.flows.get_mut(&id).expect("looked up above");
        flow.turn = next_turn;
        flow.sent += 1;
        match connection.outcome {
            Outcome::Answered => flow.answered += 1,
            Outcome::Refused => flow.refused += 1,
            Outcome::TimedOut => flow.timed_out += 1,
        }
        if let Some(pod) = &connection.backend {
            let count = flow.by_backend.entry(pod.clone()).or_default();
            if connection.outcome == Outcome::Answered {
                count.answered += 1;
            } else {
                count.failed += 1;
            }
        }
        if self.traffic.recent.len() == RECENT {
            self.traffic.recent.pop_front();
        }
        self.traffic.recent.push_back(connection);
    }

    /// The node this connection leaves from, and the next turn; `None` if no powered node can
    /// send (a powered-off client sends nothing).
    fn source_node(&self, source: &Source, turn: usize) -> Option<(String, usize)> {
        let powered = |n: &str| self.node_fault(n) != Some(NodeFault::PoweredOff);
        match source {
            Source::Node(n) => powered(n).then(|| (n.clone(), turn)),
            Source::Pod(k) => {
                let node = self.api.get(k)?.as_pod()?.node_name()?.to_string();
                powered(&node).then_some((node, turn))
            }
            Source::EveryNode => {
                let mut nodes: Vec<&String> = self.machine_of.keys().collect();
                crate::sort::sort_by(&mut nodes, |a, b| crate::sort::natural_cmp(a, b));
                (0..nodes.len()).map(|i| (turn + i) % nodes.len()).find(|&i| powered(nodes[i])).map(|i| (nodes[i].clone(), i + 1))
            }
        }
    }

    /// One connection from `from_node` to `service`, routed by that node's rules.
    fn connect(&mut self, from_node: &str, service: &ObjectKey, port: Option<i64>) -> Connection {
        let name = format!("{}/{}", service.namespace, service.name);
        self.traffic.sent += 1;
        let mut c = Connection {
            seq: self.traffic.sent,
            at: self.now,
            service: name.clone(),
            from_node: from_node.to_string(),
            backend: None,
            backend_ip: None,
            outcome: Outcome::TimedOut,
            why: "",
        };
        let rules = self.machine(from_node).and_then(|m| m.rules.for_service(&name, port)).cloned();
        let Some(rules) = rules else {
            c.why = "no rule for the service on this node";
            return c;
        };
        let Some(endpoint) = rules.pick(self.rng.unit()).cloned() else {
            (c.outcome, c.why) = (Outcome::Refused, "the service has no endpoints");
            return c;
        };
        c.backend = endpoint.pod.clone();
        c.backend_ip = Some(endpoint.ip.clone());
        let Some(node) = self.node_holding(&endpoint.ip) else {
            c.why = "nothing holds the address";
            return c;
        };
        if self.node_fault(&node) == Some(NodeFault::PoweredOff) {
            c.why = "the backend's node is off";
            return c;
        }
        // The machine answers, not its kubelet: a stopped kubelet's containers still listen.
        let Some(machine) = self.machine(&node) else { return c };
        let api = &self.api;
        let answer =
            machine.answer_connection(self.now, &endpoint.ip, endpoint.port, |k| api.get(k).and_then(|o| o.as_pod()).map(|p| &*p.spec));
        (c.outcome, c.why) = match answer {
            Answer::Accepted(_) => (Outcome::Answered, "answered"),
            Answer::Refused(_) => (Outcome::Refused, "nothing listens on the port"),
            Answer::NoHost => (Outcome::TimedOut, "nothing holds the address"),
        };
        c
    }

    /// The node whose pod CIDR holds `ip`.
    fn node_holding(&self, ip: &str) -> Option<String> {
        self.machines().find(|m| m.addressing().holds(ip)).map(|m| m.node().to_string())
    }
}
