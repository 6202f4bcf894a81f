//! Services on the stage: the second loop of the lesson — "a Service is a loop that keeps a
//! routing table pointed at healthy Pods" — drawn as plainly as the first.
//!
//! Three pictures, each read from a different place, because that difference is the lesson:
//! - a Service's **endpoints**, as the EndpointSlice controller last wrote them to the API server
//!   (`ready`, `not ready`, `terminating`), so a killed pod or a failed readiness probe is seen to
//!   leave the list;
//! - each node's **table**, as its kube-proxy last programmed that machine (`sim::Machine`), so a
//!   stopped kube-proxy is seen to keep routing to a pod the endpoints no longer list;
//! - the **connections** `sim traffic` sends, each a dot from the sending node's kube-proxy to the
//!   pod its table picked, coloured by how it ended.
//!
//! All of it is plain data decided here and tested natively; the page only draws it.

use crate::model::{Kind, Service};
use crate::sim::traffic::{Connection, Outcome};
use crate::sim::Sim;
use crate::view::cluster::pod_suffix as short_pod;

/// At most this many Services are drawn (the rest are counted): the stage is a teaching picture.
pub const SERVICES_SHOWN: usize = 8;
/// At most this many endpoints are drawn per Service.
pub const ENDPOINTS_SHOWN: usize = 12;
/// Connections drawn as dots: those sent in the last this many simulated milliseconds…
pub const DOT_WINDOW_MS: u64 = 1500;
/// …and at most this many of them, the newest.
pub const DOTS_SHOWN: usize = 12;

/// One endpoint of a Service, as its EndpointSlices list it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EndpointView {
    /// The pod behind it (its `targetRef`), or the address when it names none.
    pub pod: String,
    pub address: String,
    /// `ready`, `not ready` or `terminating` (upstream's conditions, in words).
    pub state: &'static str,
}

impl EndpointView {
    /// The pod's random suffix (`web-…-x7k2p` → `x7k2p`), as the pod chips show it.
    pub fn short(&self) -> &str {
        short_pod(&self.pod)
    }
}

/// A running `sim traffic` flow, in words.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TrafficView {
    /// `5/s from every node`.
    pub source: String,
    pub answered: u64,
    pub failed: u64,
}

/// One Service as the stage draws it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ServiceView {
    pub namespace: String,
    pub name: String,
    /// `ClusterIP`, `NodePort`, `LoadBalancer` or `Headless`.
    pub kind: String,
    /// `10.96.0.12:80/TCP` (every port), `None` for a headless Service.
    pub address: String,
    /// The selector, as kubectl writes it (`app=web`).
    pub selector: String,
    pub endpoints: Vec<EndpointView>,
    /// Endpoints not drawn.
    pub more: usize,
    pub traffic: Option<TrafficView>,
}

impl ServiceView {
    /// `NAMESPACE/NAME`, as traffic and the rules name it.
    pub fn key(&self) -> String {
        format!("{}/{}", self.namespace, self.name)
    }
    /// How many endpoints are ready.
    pub fn ready(&self) -> usize {
        self.endpoints.iter().filter(|e| e.state == "ready").count()
    }
}

/// Every Service of the cluster that selects pods, in namespace and name order, at most
/// [`SERVICES_SHOWN`]; and how many more there are. Services without a selector (the
/// `kubernetes` Service, which points at kube-apiserver, or ExternalName) have no loop here.
pub fn services(sim: &Sim) -> (Vec<ServiceView>, usize) {
    let api = sim.api();
    let selecting: Vec<&Service> =
        api.items(Kind::Service, None).filter_map(|o| o.as_service()).filter(|s| !s.spec.selector.is_empty()).collect();
    let more = selecting.len().saturating_sub(SERVICES_SHOWN);
    let views = selecting.into_iter().take(SERVICES_SHOWN).map(|s| service_view(sim, s)).collect();
    (views, more)
}

fn service_view(sim: &Sim, s: &Service) -> ServiceView {
    let (namespace, name) = (s.metadata.namespace.to_string(), s.metadata.name.to_string());
    let mut endpoints = endpoints_of(sim, &namespace, &name);
    let more = endpoints.len().saturating_sub(ENDPOINTS_SHOWN);
    endpoints.truncate(ENDPOINTS_SHOWN);
    let key = format!("{namespace}/{name}");
    let traffic = sim.traffic_flows().find(|f| f.service_name() == key).map(|f| TrafficView {
        source: format!("{}/s from {}", f.rate, f.source),
        answered: f.answered,
        failed: f.refused + f.timed_out,
    });
    ServiceView {
        kind: if s.is_headless() { "Headless".into() } else { s.type_().to_string() },
        address: address(s),
        selector: s.spec.selector.iter().map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>().join(","),
        namespace,
        name,
        endpoints,
        more,
        traffic,
    }
}

/// `CLUSTER-IP:PORT/PROTOCOL` for every port, as a client would dial it.
fn address(s: &Service) -> String {
    if s.is_headless() {
        return "None".into();
    }
    let ip = s.spec.cluster_ip.as_deref().unwrap_or("<none>");
    let ports: Vec<String> = s.spec.ports.iter().map(|p| format!("{ip}:{}/{}", p.port, p.protocol.as_deref().unwrap_or("TCP"))).collect();
    if ports.is_empty() {
        ip.to_string()
    } else {
        ports.join(" ")
    }
}

/// The endpoints every EndpointSlice of the Service lists, by pod name, each once.
fn endpoints_of(sim: &Sim, namespace: &str, service: &str) -> Vec<EndpointView> {
    let mut out: Vec<EndpointView> = Vec::new();
    let slices = sim.api().items(Kind::EndpointSlice, Some(namespace)).filter_map(|o| o.as_endpoint_slice());
    for slice in slices.filter(|s| s.service_name() == Some(service)) {
        for e in &slice.endpoints {
            let address = e.addresses.first().cloned().unwrap_or_default();
            let pod = e.target_ref.as_ref().map(|r| r.name.to_string()).unwrap_or_else(|| address.clone());
            if out.iter().any(|o| o.pod == pod) {
                continue;
            }
            out.push(EndpointView { pod, address, state: e.conditions.state() });
        }
    }
    crate::sort::sort_by(&mut out, |a, b| crate::sort::natural_cmp(&a.pod, &b.pod));
    out
}

/// What a node's kube-proxy has programmed its machine with, in a line for its row on the
/// stage: each Service's pods as the table routes to them (`web → x7k2p abc12`), or a count
/// when there are many. Empty when the table holds nothing (a powered-off node, or a kube-proxy
/// that has not synced).
pub fn table_words(sim: &Sim, node: &str) -> String {
    let Some(machine) = sim.machine(node) else { return String::new() };
    let rules: Vec<_> = machine.rules().iter().filter(|r| !r.cluster_ip.is_empty() && r.service != "default/kubernetes").collect();
    if rules.len() > 2 {
        return format!("table: {} service ports", rules.len());
    }
    let lines: Vec<String> = rules
        .iter()
        .map(|r| {
            let service = r.service.rsplit_once('/').map_or(r.service.as_str(), |(_, n)| n);
            let pods: Vec<&str> = r.endpoints.iter().map(|e| e.pod.as_deref().map_or(e.ip.as_str(), short_pod)).collect();
            match pods.len() {
                0 => format!("{service} → reject (no endpoints)"),
                1..=4 => format!("{service} → {}", pods.join(" ")),
                n => format!("{service} → {} … {n} pods", pods[..3].join(" ")),
            }
        })
        .collect();
    if lines.is_empty() {
        String::new()
    } else {
        format!("table: {}", lines.join(" · "))
    }
}

/// One connection as a dot on the stage.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Dot {
    /// The connection's number, for the dot's element key.
    pub seq: u64,
    /// The node it left from (its kube-proxy's row is where the dot starts).
    pub from_node: String,
    /// `NAMESPACE/NAME` of the Service.
    pub service: String,
    /// The pod the node's table picked, if it picked one.
    pub to_pod: Option<String>,
    /// `answered`, `refused` or `timed-out`.
    pub outcome: &'static str,
    /// The hover title: what happened, in words.
    pub title: String,
}

/// The connections sent in the last [`DOT_WINDOW_MS`] of simulated time, newest [`DOTS_SHOWN`].
pub fn dots(sim: &Sim) -> Vec<Dot> {
    let since = sim.now().0.saturating_sub(DOT_WINDOW_MS);
    let recent: Vec<&Connection> = sim.recent_connections().filter(|c| c.at.0 >= since).collect();
    let skip = recent.len().saturating_sub(DOTS_SHOWN);
    recent.into_iter().skip(skip).map(dot).collect()
}

fn dot(c: &Connection) -> Dot {
    let outcome = match c.outcome {
        Outcome::Answered => "answered",
        Outcome::Refused => "refused",
        Outcome::TimedOut => "timed-out",
    };
    let service = c.service.rsplit_once('/').map_or(c.service.as_str(), |(_, n)| n);
    let title = match (&c.backend, c.outcome) {
        (Some(pod), Outcome::Answered) => format!("{} → {service} → {pod}: answered", c.from_node),
        (Some(pod), _) => format!("{} → {service} → {pod}: {} ({})", c.from_node, c.outcome.as_str(), c.why),
        (None, _) => format!("{} → {service}: {} ({})", c.from_node, c.outcome.as_str(), c.why),
    };
    Dot { seq: c.seq, from_node: c.from_node.clone(), service: c.service.clone(), to_pod: c.backend.clone(), outcome, title }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::command::{Scenario, Session};
    use crate::model::Duration;

    /// The default cluster with a Service in front of web, settled, with traffic from every node.
    fn served() -> Session {
        let mut s = Session::new(Scenario::builtin("default").unwrap(), Some(1)).unwrap();
        assert!(s.execute("kubectl expose deployment web --port=80").ok);
        s.settle(Duration::mins(2)).unwrap();
        assert!(s.execute("sim traffic web --rate 10").ok);
        s.advance(Duration::secs(3));
        s
    }

    fn pods(s: &Session) -> Vec<String> {
        s.sim().api().items(Kind::Pod, Some("default")).map(|o| o.meta().name.to_string()).collect()
    }

    #[test]
    fn a_service_lists_its_ready_pods_and_leaves_out_the_kubernetes_service() {
        let s = served();
        let (views, more) = services(s.sim());
        assert_eq!(more, 0);
        assert_eq!(views.iter().map(|v| v.name.as_str()).collect::<Vec<_>>(), ["web"], "kubernetes has no selector");
        let web = &views[0];
        assert_eq!((web.kind.as_str(), web.selector.as_str()), ("ClusterIP", "app=web"));
        assert!(web.address.starts_with("10.") && web.address.ends_with(":80/TCP"), "{}", web.address);
        let mut listed: Vec<String> = web.endpoints.iter().map(|e| e.pod.clone()).collect();
        listed.sort();
        let mut running = pods(&s);
        running.sort();
        assert_eq!(listed, running);
        assert_eq!(web.ready(), 3);
        let t = web.traffic.as_ref().expect("a flow runs");
        assert_eq!(t.source, "10/s from every node");
        assert!(t.answered >= 20 && t.failed == 0, "{t:?}");
    }

    #[test]
    fn a_deleted_pod_is_terminating_then_gone_and_the_tables_follow() {
        let mut s = served();
        let victim = pods(&s)[0].clone();
        assert!(table_words(s.sim(), "node-1").contains(short_pod(&victim)) || table_words(s.sim(), "node-2").contains(short_pod(&victim)));
        assert!(s.execute(&format!("kubectl delete pod {victim} --wait=false")).ok);
        s.advance(Duration::millis(200));
        let (views, _) = services(s.sim());
        let gone = views[0].endpoints.iter().find(|e| e.pod == victim).map(|e| e.state);
        assert!(matches!(gone, Some("terminating") | None), "{gone:?}");
        s.advance(Duration::secs(5));
        for node in ["node-1", "node-2"] {
            let words = table_words(s.sim(), node);
            assert!(words.starts_with("table: web → ") && !words.contains(short_pod(&victim)), "{node}: {words}");
        }
        let recent = dots(s.sim());
        assert!(!recent.is_empty() && recent.iter().all(|d| d.to_pod.as_deref() != Some(victim.as_str())), "{recent:?}");
    }

    #[test]
    fn a_stopped_kube_proxy_keeps_its_table_and_its_dots_still_reach_the_deleted_pod() {
        let mut s = served();
        assert!(s.execute("sim stop kube-proxy-node-1").ok);
        let on_table: Vec<String> = pods(&s).into_iter().filter(|p| table_words(s.sim(), "node-1").contains(short_pod(p))).collect();
        let victim = on_table.first().expect("node-1's table routes to some pod").clone();
        assert!(s.execute(&format!("kubectl delete pod {victim} --grace-period=0 --force")).ok);
        s.advance(Duration::secs(5));
        assert!(table_words(s.sim(), "node-1").contains(short_pod(&victim)), "stale on node-1");
        assert!(!table_words(s.sim(), "node-2").contains(short_pod(&victim)), "node-2's kube-proxy turned");
        let failed: Vec<Dot> = (0..20)
            .flat_map(|_| {
                s.advance(Duration::millis(500));
                dots(s.sim())
            })
            .filter(|d| d.to_pod.as_deref() == Some(victim.as_str()))
            .collect();
        assert!(!failed.is_empty(), "node-1 still sends some connections to the gone pod");
        assert!(failed.iter().all(|d| d.from_node == "node-1" && d.outcome == "timed-out"), "{failed:?}");
        assert!(failed[0].title.contains("connection timed out"), "{}", failed[0].title);
    }

    #[test]
    fn dots_are_the_newest_connections_of_the_window() {
        let s = served();
        let d = dots(s.sim());
        assert_eq!(d.len(), DOTS_SHOWN, "10/s for 1.5 s is 15 connections: the newest 12 are drawn");
        assert!(d.windows(2).all(|w| w[0].seq < w[1].seq));
        assert!(d.iter().all(|d| d.outcome == "answered" && d.service == "default/web" && d.to_pod.is_some()));
        assert!(d[0].title.ends_with(": answered") && d[0].title.contains(" → web → "), "{}", d[0].title);
    }

    #[test]
    fn a_cluster_without_services_draws_none() {
        let s = Session::new(Scenario::builtin("default").unwrap(), Some(1)).unwrap();
        assert_eq!(services(s.sim()), (vec![], 0));
        assert_eq!(table_words(s.sim(), "node-1"), "");
        assert!(dots(s.sim()).is_empty());
    }
}
