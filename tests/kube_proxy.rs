//! kube-proxy as a loop: each node's kube-proxy watches Services and EndpointSlices and writes
//! the node's routing table; connections are routed by the table the *sending* node holds. One
//! test per upstream behaviour (pkg/proxy/iptables, pkg/util/async's bounded-frequency runner):
//! the table follows the ready endpoints, syncs at most once per minSyncPeriod (1 s), stays
//! stale while kube-proxy is stopped and heals when it starts, falls back to serving terminating
//! endpoints, rejects a Service with none, and is gone when the node powers off. The invariants
//! are checked after every step.

use kubeloop::api::{ApiRequest, DeleteRequest};
use kubeloop::command::{CommandOutput, Scenario, Session};
use kubeloop::model::*;
use kubeloop::sim::traffic::{Outcome, Source};
use kubeloop::sim::{ComponentId, Sim};

const SVC: &str =
    "apiVersion: v1\nkind: Service\nmetadata: {name: web}\nspec:\n  selector: {app: web}\n  ports: [{port: 80, targetPort: 80}]\n";
const NOBODY: &str = "apiVersion: v1\nkind: Service\nmetadata: {name: nobody}\nspec:\n  selector: {app: nobody}\n  ports: [{port: 80}]\n";
const SLOW: &str = "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: slow}\nspec:\n  replicas: 2\n  selector: {matchLabels: {app: slow}}\n  template:\n    metadata: {labels: {app: slow}}\n    spec:\n      terminationGracePeriodSeconds: 60\n      containers:\n      - name: sh\n        image: busybox:1.36\n        command: [sh, -c, sleep 3600]\n";
const NODES: [&str; 2] = ["node-1", "node-2"];

fn object(yaml: &str) -> Object {
    Object::from_json(yaml_serde::from_str(yaml).unwrap()).unwrap()
}

/// The default scenario (two nodes, Deployment `web` of three pods labelled `app: web`) with
/// Service `web` in front of it, settled.
fn session() -> Session {
    let mut s = Session::new(Scenario::builtin("default").expect("default scenario"), Some(3)).expect("starts");
    s.sim_mut().check_invariants_every_step();
    s.sim_mut().submit(ApiRequest::Create(object(SVC))).unwrap();
    s.sim_mut().settle(Duration::mins(2)).unwrap();
    s
}

/// From now on the kube-proxies share one Service and EndpointSlice watch, as they do past
/// `SHARED_PROXY_WATCH_NODES` nodes: their watches end and re-open shared.
fn share_watches(sim: &mut Sim) {
    sim.share_kube_proxy_watches(Some(true));
    for node in NODES {
        sim.sever_watches(Some(&ComponentId::KubeProxy(node.into())));
    }
    sim.settle(Duration::mins(1)).unwrap();
    assert_eq!(sim.kube_proxies_sharing_watches(), NODES, "both kube-proxies read the shared cache");
}

/// `session()` with the kube-proxies sharing their watches.
fn shared_session() -> Session {
    let mut s = session();
    share_watches(s.sim_mut());
    s
}

fn run(s: &mut Session, line: &str) -> CommandOutput {
    let out = s.execute(line);
    assert!(out.ok, "{line}: {}", out.stderr);
    out
}

/// The endpoint addresses node `node`'s table routes `default/NAME` to, in table order.
fn table(sim: &Sim, node: &str, name: &str) -> Option<Vec<String>> {
    let rules = sim.machine(node)?.rules().for_service(&format!("default/{name}"), Some(80))?.clone();
    Some(rules.endpoints.iter().map(|e| e.address()).collect())
}

/// The ready pods' `IP:80`, sorted as kube-proxy writes them.
fn ready_addresses(sim: &Sim) -> Vec<String> {
    let mut out: Vec<String> = sim
        .objects(Kind::Pod)
        .filter_map(|o| o.as_pod())
        .filter(|p| p.is_ready() && p.metadata.deletion_timestamp.is_none())
        .filter_map(|p| p.status.pod_ip.clone())
        .map(|ip| format!("{ip}:80"))
        .collect();
    out.sort();
    out
}

fn pod_named(sim: &Sim, ip: &str) -> ObjectKey {
    let pod =
        sim.objects(Kind::Pod).filter_map(|o| o.as_pod()).find(|p| p.status.pod_ip.as_deref() == Some(ip)).expect("a pod with that IP");
    ObjectKey::of(Kind::Pod, &pod.metadata)
}

fn delete(sim: &mut Sim, key: ObjectKey) {
    sim.submit(ApiRequest::Delete(DeleteRequest::new(key))).unwrap();
}

/// Advances in 10 ms steps until `done`, returning how long it took (at most `limit`).
fn until(sim: &mut Sim, limit: Duration, mut done: impl FnMut(&Sim) -> bool) -> Option<Duration> {
    let start = sim.now();
    while sim.now().since(start) < limit {
        if done(sim) {
            return Some(sim.now().since(start));
        }
        sim.advance(Duration::millis(10));
    }
    None
}

#[test]
fn every_node_routes_the_service_to_its_ready_endpoints() {
    let s = session();
    let sim = s.sim();
    let want = ready_addresses(sim);
    assert_eq!(want.len(), 3);
    let svc = sim.api().get(&ObjectKey::new(Kind::Service, "default", "web")).and_then(|o| o.as_service().cloned()).unwrap();
    for node in NODES {
        assert_eq!(table(sim, node, "web").as_deref(), Some(&want[..]), "{node}'s table");
        let rules = sim.machine(node).unwrap().rules().for_service("default/web", Some(80)).unwrap().clone();
        assert_eq!(Some(rules.cluster_ip.clone()), svc.spec.cluster_ip, "{node} matches the cluster IP");
        // upstream's chain name: KUBE-SVC- and 16 base32 characters of SHA-256.
        let chain = rules.chain();
        assert!(chain.starts_with("KUBE-SVC-") && chain.len() == 25, "{chain}");
        assert!(chain[9..].chars().all(|c| c.is_ascii_uppercase() || ('2'..='7').contains(&c)), "{chain}");
        // The kernel's statistic-mode probabilities make the choice uniform: 1/3, 1/2, then the rest.
        assert_eq!(rules.probability(0), Some(1.0 / 3.0));
        assert_eq!(rules.probability(1), Some(0.5));
        assert_eq!(rules.probability(2), None);
    }
}

/// Deletes a ready pod and checks that every node's table drops it within about a second, then
/// converges on the ready endpoints once its replacement is ready. Returns the settled session.
fn a_deleted_pod_leaves_every_table(mut s: Session) -> Session {
    let victim_ip = ready_addresses(s.sim())[0].trim_end_matches(":80").to_string();
    let victim = pod_named(s.sim(), &victim_ip);
    delete(s.sim_mut(), victim);
    let gone = |sim: &Sim| NODES.iter().all(|n| table(sim, n, "web").is_some_and(|t| !t.contains(&format!("{victim_ip}:80"))));
    let took = until(s.sim_mut(), Duration::secs(5), gone).expect("every node drops the deleted pod");
    // A watch hop to the EndpointSlice controller, its write, a hop to kube-proxy and at most
    // one minSyncPeriod (1 s) of waiting.
    assert!(took <= Duration::millis(1500), "took {took:?}");
    // The replacement joins once it is ready.
    s.sim_mut().settle(Duration::mins(2)).unwrap();
    let want = ready_addresses(s.sim());
    assert_eq!(want.len(), 3);
    for node in NODES {
        assert_eq!(table(s.sim(), node, "web").as_deref(), Some(&want[..]), "{node} converges");
    }
    s
}

#[test]
fn a_deleted_pod_leaves_every_table_within_about_a_second() {
    a_deleted_pod_leaves_every_table(session());
}

#[test]
fn syncs_are_at_least_min_sync_period_apart() {
    let mut s = session();
    // Changes arriving faster than once a second: delete the three pods 200 ms apart.
    let mut syncs: Vec<Time> = Vec::new();
    let record = |sim: &Sim, syncs: &mut Vec<Time>| {
        let at = sim.machine("node-1").unwrap().rules().synced_at().unwrap();
        if syncs.last() != Some(&at) {
            syncs.push(at);
        }
    };
    record(s.sim(), &mut syncs);
    for ip in ready_addresses(s.sim()) {
        let key = pod_named(s.sim(), ip.trim_end_matches(":80"));
        delete(s.sim_mut(), key);
        for _ in 0..20 {
            s.sim_mut().advance(Duration::millis(10));
            record(s.sim(), &mut syncs);
        }
    }
    for _ in 0..1000 {
        s.sim_mut().advance(Duration::millis(10));
        record(s.sim(), &mut syncs);
    }
    assert!(syncs.len() >= 3, "the changes were written: {syncs:?}");
    for pair in syncs.windows(2) {
        assert!(pair[1].since(pair[0]) >= Duration::secs(1), "two syncs within minSyncPeriod: {syncs:?}");
    }
}

#[test]
fn a_stopped_kube_proxy_leaves_its_node_routing_to_a_gone_pod_until_it_starts() {
    let mut s = session();
    run(&mut s, "sim stop kube-proxy-node-1");
    let victim_ip = ready_addresses(s.sim())[0].trim_end_matches(":80").to_string();
    let victim = pod_named(s.sim(), &victim_ip);
    let stale = table(s.sim(), "node-1", "web").unwrap();
    delete(s.sim_mut(), victim);
    s.sim_mut().settle(Duration::mins(2)).unwrap();
    let want = ready_addresses(s.sim());
    assert!(!want.contains(&format!("{victim_ip}:80")));
    assert_eq!(table(s.sim(), "node-2", "web").as_deref(), Some(&want[..]), "node-2's kube-proxy follows");
    assert_eq!(table(s.sim(), "node-1", "web"), Some(stale), "node-1's table is what it was");

    // Connections from node-1 still go to the gone pod's address, and time out there.
    let service = ObjectKey::new(Kind::Service, "default", "web");
    s.sim_mut().start_traffic(service.clone(), None, Source::Node("node-1".into()), 100).unwrap();
    s.sim_mut().advance(Duration::secs(10));
    let lost = s.sim().recent_connections().filter(|c| c.backend_ip.as_deref() == Some(victim_ip.as_str())).count();
    assert!(lost > 0, "some connections went to the gone pod");
    assert!(s
        .sim()
        .recent_connections()
        .filter(|c| c.backend_ip.as_deref() == Some(victim_ip.as_str()))
        .all(|c| c.outcome == Outcome::TimedOut));

    // Started again, its first sync is a full one and the table heals.
    run(&mut s, "sim start kube-proxy-node-1");
    let healed = until(s.sim_mut(), Duration::secs(5), |sim| table(sim, "node-1", "web").as_deref() == Some(&want[..]));
    assert!(healed.is_some(), "node-1's table converges once kube-proxy runs");
    s.sim_mut().stop_traffic(None);
}

#[test]
fn traffic_spreads_evenly_over_the_ready_endpoints() {
    let mut s = session();
    let service = ObjectKey::new(Kind::Service, "default", "web");
    s.sim_mut().start_traffic(service, None, Source::EveryNode, 100).unwrap();
    s.sim_mut().advance(Duration::secs(30));
    let flow = s.sim().traffic_flows().next().unwrap().clone();
    assert!(flow.sent >= 2900, "sent {}", flow.sent);
    assert_eq!(flow.answered, flow.sent, "every connection answered: {flow:?}");
    assert_eq!(flow.by_backend.len(), 3);
    for (pod, count) in &flow.by_backend {
        let share = count.answered as f64 / flow.sent as f64;
        assert!((0.25..0.42).contains(&share), "{pod} got {share:.2} of the connections");
    }
}

#[test]
fn a_service_with_no_endpoints_is_rejected() {
    let mut s = session();
    s.sim_mut().submit(ApiRequest::Create(object(NOBODY))).unwrap();
    s.sim_mut().settle(Duration::mins(1)).unwrap();
    assert_eq!(table(s.sim(), "node-1", "nobody"), Some(vec![]), "the Service is in the table with no endpoints");
    let rules = run(&mut s, "sim rules node-1").stdout;
    assert!(rules.contains("\"default/nobody has no endpoints\"") && rules.contains("-j REJECT"), "{rules}");
    s.sim_mut().start_traffic(ObjectKey::new(Kind::Service, "default", "nobody"), None, Source::EveryNode, 10).unwrap();
    s.sim_mut().advance(Duration::secs(5));
    let flow = s.sim().traffic_flows().next().unwrap().clone();
    assert!(flow.sent > 0);
    assert_eq!((flow.refused, flow.answered), (flow.sent, 0), "{flow:?}");
}

#[test]
fn terminating_endpoints_serve_when_none_is_ready() {
    let mut s = session();
    // A shell as PID 1 ignores SIGTERM, so deleted pods run (and serve) for their whole grace
    // period; scaled to zero there is no ready endpoint left, and kube-proxy falls back to the
    // serving terminating ones (upstream's ProxyTerminatingEndpoints).
    s.sim_mut().submit(ApiRequest::Create(object(SLOW))).unwrap();
    s.sim_mut().submit(ApiRequest::Create(object(&SVC.replace("web", "slow")))).unwrap();
    s.sim_mut().settle(Duration::mins(2)).unwrap();
    let before = table(s.sim(), "node-2", "slow").unwrap();
    assert_eq!(before.len(), 2, "{before:?}");
    run(&mut s, "kubectl scale deployment slow --replicas=0");
    s.sim_mut().advance(Duration::secs(5));
    let rules = s.sim().machine("node-2").unwrap().rules().for_service("default/slow", Some(80)).unwrap().clone();
    assert!(rules.terminating_fallback, "{rules:?}");
    let got: Vec<String> = rules.endpoints.iter().map(|e| e.address()).collect();
    assert_eq!(got, before, "the terminating pods still serve");
    // Once they are gone, the Service has no endpoints.
    s.sim_mut().settle(Duration::mins(3)).unwrap();
    assert_eq!(table(s.sim(), "node-2", "slow"), Some(vec![]));
}

#[test]
fn a_powered_off_node_has_no_table() {
    let mut s = session();
    assert!(s.sim().machine("node-1").unwrap().rules().iter().count() >= 2, "kubernetes and web");
    run(&mut s, "sim node fail node-1");
    assert_eq!(s.sim().machine("node-1").unwrap().rules().iter().count(), 0);
    run(&mut s, "sim node recover node-1");
    let back = until(s.sim_mut(), Duration::secs(30), |sim| table(sim, "node-1", "web").is_some());
    assert!(back.is_some(), "kube-proxy rewrites the table after power on");
}

/// Deployment `ready`: four nginx pods behind a readiness probe every second.
const READY: &str = "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: ready}\nspec:\n  replicas: 4\n  selector: {matchLabels: {app: ready}}\n  template:\n    metadata: {labels: {app: ready}}\n    spec:\n      containers:\n      - name: nginx\n        image: nginx:1.14.2\n        readinessProbe:\n          httpGet: {path: /, port: 80}\n          periodSeconds: 1\n          failureThreshold: 1\n";

/// The bound on how long a running kube-proxy's table may differ from the ready endpoints after
/// the API server's pods change: a pod watch hop to the EndpointSlice controller (milliseconds;
/// its batch period defaults to 0), its slice write, a watch hop to kube-proxy, then at most one
/// minSyncPeriod (1 s) before the bounded-frequency runner writes. 1 s plus 500 ms for the hops
/// and the controller's queue.
const CONVERGENCE: Duration = Duration::millis(1500);

/// A small deterministic generator for the test's own choices (the simulation keeps its own).
struct Lcg(u64);
impl Lcg {
    fn below(&mut self, n: usize) -> usize {
        self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        ((self.0 >> 33) as usize) % n
    }
}

/// The ready pods of `ready` as `(name, IP:80)`, and the deleting ones' IPs.
fn ready_pods(sim: &Sim) -> (Vec<(String, String)>, Vec<String>) {
    let mut ready = Vec::new();
    let mut deleting = Vec::new();
    for p in sim.objects(Kind::Pod).filter_map(|o| o.as_pod()) {
        if p.metadata.labels.get("app").map(|v| v.as_str()) != Some("ready") {
            continue;
        }
        let Some(ip) = p.status.pod_ip.clone() else { continue };
        if p.metadata.deletion_timestamp.is_some() {
            deleting.push(ip);
        } else if p.is_ready() {
            ready.push((p.metadata.name.to_string(), format!("{ip}:80")));
        }
    }
    ready.sort_by(|a, b| a.1.cmp(&b.1));
    (ready, deleting)
}

#[test]
fn property_running_kube_proxies_converge_to_the_ready_endpoints_and_never_route_to_long_deleted_pods() {
    // Each seed with private watches, as at teaching scale, and with shared ones, as past it.
    for (seed, shared) in (1..=6u64).flat_map(|seed| [(seed, false), (seed, true)]) {
        let mut s = Session::new(Scenario::builtin("default").expect("default scenario"), Some(seed)).expect("starts");
        s.sim_mut().check_invariants_every_step();
        if shared {
            share_watches(s.sim_mut());
        }
        s.sim_mut().submit(ApiRequest::Create(object(READY))).unwrap();
        s.sim_mut().submit(ApiRequest::Create(object(&SVC.replace("web", "ready")))).unwrap();
        s.sim_mut().settle(Duration::mins(2)).unwrap();
        let service = ObjectKey::new(Kind::Service, "default", "ready");
        s.sim_mut().start_traffic(service, None, Source::EveryNode, 50).unwrap();

        let mut rng = Lcg(seed);
        let mut proxy_running = [true, true];
        let mut proxy_started = [s.sim().now(); 2];
        let mut last_ready = ready_pods(s.sim()).0;
        let mut ready_changed = s.sim().now();
        let mut deleted_at: std::collections::BTreeMap<String, Time> = Default::default();
        let mut checked_until = s.sim().now();
        let mut actions = Vec::new();
        for tick in 0..9000u32 {
            if tick % 300 == 150 {
                let (ready, _) = ready_pods(s.sim());
                let line = match rng.below(4) {
                    0 if !ready.is_empty() => format!("kubectl delete pod {}", ready[rng.below(ready.len())].0),
                    1 if !ready.is_empty() => format!("sim fail-probe {} readiness", ready[rng.below(ready.len())].0),
                    2 => {
                        let pods: Vec<String> = s
                            .sim()
                            .objects(Kind::Pod)
                            .filter_map(|o| o.as_pod())
                            .filter(|p| p.metadata.name.starts_with("ready-"))
                            .map(|p| p.metadata.name.to_string())
                            .collect();
                        format!("sim pass-probe {} readiness", pods[rng.below(pods.len())])
                    }
                    _ => {
                        let n = rng.below(2);
                        proxy_running[n] = !proxy_running[n];
                        if proxy_running[n] {
                            proxy_started[n] = s.sim().now();
                        }
                        format!("sim {} kube-proxy-{}", if proxy_running[n] { "start" } else { "stop" }, NODES[n])
                    }
                };
                let out = s.execute(&line);
                assert!(out.ok, "seed {seed}: {line}: {}", out.stderr);
                actions.push(format!("{:?} {line}", s.sim().now()));
            }
            s.sim_mut().advance(Duration::millis(10));
            let now = s.sim().now();
            let (ready, deleting) = ready_pods(s.sim());
            if ready != last_ready {
                last_ready = ready.clone();
                ready_changed = now;
            }
            for ip in deleting {
                deleted_at.entry(ip).or_insert(now);
            }
            // An IP handed to a new ready pod is no longer a deleted pod's.
            for (_, addr) in &ready {
                deleted_at.remove(addr.trim_end_matches(":80"));
            }
            let want: Vec<String> = ready.iter().map(|(_, a)| a.clone()).collect();
            for (n, node) in NODES.iter().enumerate() {
                let since = ready_changed.max(proxy_started[n]);
                if !proxy_running[n] || want.is_empty() || now.since(since) <= CONVERGENCE {
                    continue;
                }
                let got = table(s.sim(), node, "ready").unwrap_or_default();
                assert_eq!(
                    got,
                    want,
                    "seed {seed} (shared: {shared}): {node}'s table {:?} after the change at {since:?}; actions: {actions:#?}",
                    now.since(since)
                );
            }
            for c in s.sim().recent_connections().filter(|c| c.at > checked_until) {
                let n = NODES.iter().position(|x| *x == c.from_node).expect("a known node");
                let Some(ip) = &c.backend_ip else { continue };
                let Some(&gone) = deleted_at.get(ip) else { continue };
                let since = gone.max(proxy_started[n]);
                assert!(
                    !proxy_running[n] || c.at.since(since) <= CONVERGENCE,
                    "seed {seed} (shared: {shared}): {} sent to {ip}, deleted at {gone:?}, at {:?}; actions: {actions:#?}",
                    c.from_node,
                    c.at
                );
            }
            checked_until = now;
        }
        assert!(actions.len() >= 25, "seed {seed}: the run acted: {actions:?}");
    }
}

#[test]
fn with_shared_watches_every_node_still_follows_within_about_a_second() {
    let s = a_deleted_pod_leaves_every_table(shared_session());
    // Both nodes hold the same revision of the shared table, not two copies.
    let tables: Vec<_> = NODES.iter().map(|n| s.sim().machine(n).unwrap().rules().table().clone()).collect();
    assert!(std::rc::Rc::ptr_eq(&tables[0], &tables[1]));
    assert_eq!(s.sim().kube_proxies_sharing_watches(), NODES);
}

#[test]
fn with_shared_watches_a_watch_fault_leaves_a_stale_table_on_its_own_node_only() {
    let mut s = shared_session();
    run(&mut s, "sim watch drop 100 kube-proxy-node-1");
    // The fault is node-1's alone: its kube-proxy went back to watches of its own.
    assert_eq!(s.sim().kube_proxies_sharing_watches(), ["node-2"]);
    s.sim_mut().advance(Duration::secs(2));
    let stale = table(s.sim(), "node-1", "web").unwrap();
    let victim_ip = ready_addresses(s.sim())[0].trim_end_matches(":80").to_string();
    let victim = pod_named(s.sim(), &victim_ip);
    delete(s.sim_mut(), victim);
    s.sim_mut().settle(Duration::mins(2)).unwrap();
    let want = ready_addresses(s.sim());
    assert!(!want.contains(&format!("{victim_ip}:80")));
    assert_eq!(table(s.sim(), "node-2", "web").as_deref(), Some(&want[..]), "node-2 reads the shared cache and follows");
    assert_eq!(table(s.sim(), "node-1", "web"), Some(stale), "node-1 heard nothing and kept its table");
    assert!(s.sim().watch_events_dropped() > 0);

    // A delay aimed at node-2 holds node-2 back by that much, and node-1 no longer matters to it.
    run(&mut s, "sim watch delay 3s kube-proxy-node-2");
    assert!(s.sim().kube_proxies_sharing_watches().is_empty());
    // Long enough for its own watches to have listed and be open (their start is jittered):
    // a list that came after the delete would read it at once, undelayed.
    s.sim_mut().advance(Duration::secs(10));
    let before = table(s.sim(), "node-2", "web").unwrap();
    let ip = ready_addresses(s.sim())[0].trim_end_matches(":80").to_string();
    let key = pod_named(s.sim(), &ip);
    delete(s.sim_mut(), key);
    s.sim_mut().advance(Duration::millis(2500));
    assert_eq!(table(s.sim(), "node-2", "web"), Some(before), "not yet: its notifications are 3 s late");
    let caught_up =
        until(s.sim_mut(), Duration::secs(5), |sim| table(sim, "node-2", "web").is_some_and(|t| !t.contains(&format!("{ip}:80"))));
    assert!(caught_up.is_some(), "node-2 follows, late");
}

#[test]
fn with_shared_watches_a_stopped_kube_proxy_leaves_its_node_stale_and_heals_when_started() {
    let mut s = shared_session();
    run(&mut s, "sim stop kube-proxy-node-1");
    let stale = table(s.sim(), "node-1", "web").unwrap();
    let victim_ip = ready_addresses(s.sim())[0].trim_end_matches(":80").to_string();
    let victim = pod_named(s.sim(), &victim_ip);
    delete(s.sim_mut(), victim);
    s.sim_mut().settle(Duration::mins(2)).unwrap();
    let want = ready_addresses(s.sim());
    assert_eq!(table(s.sim(), "node-2", "web").as_deref(), Some(&want[..]));
    assert_eq!(table(s.sim(), "node-1", "web"), Some(stale));
    run(&mut s, "sim start kube-proxy-node-1");
    let healed = until(s.sim_mut(), Duration::secs(5), |sim| table(sim, "node-1", "web").as_deref() == Some(&want[..]));
    assert!(healed.is_some(), "node-1's table converges once kube-proxy runs");
    s.sim_mut().settle(Duration::mins(1)).unwrap();
    assert_eq!(s.sim().kube_proxies_sharing_watches(), NODES, "and it shares again");
}

#[test]
fn below_the_threshold_nothing_is_shared() {
    let s = session();
    assert!(s.sim().kube_proxies_sharing_watches().is_empty(), "teaching scale: every kube-proxy watches on its own");
}

/// A cluster of `nodes` nodes with Service `web` (and its Deployment of three) created before
/// any kube-proxy has listed, settled.
fn cluster_with_web(nodes: usize) -> Sim {
    let mut sim = Sim::new(5);
    for i in 0..nodes {
        sim.add_node(kubeloop::sim::NodeConfig::new(&format!("node-{i}"))).unwrap();
    }
    let deployment = SLOW.replace("slow", "web").replace("replicas: 2", "replicas: 3");
    sim.submit(ApiRequest::Create(object(&deployment))).unwrap();
    sim.submit(ApiRequest::Create(object(SVC))).unwrap();
    sim.settle(Duration::mins(2)).unwrap();
    sim
}

#[test]
fn from_fifty_nodes_on_kube_proxies_share_their_watches_and_every_node_still_routes() {
    let below = cluster_with_web(kubeloop::sim::SHARED_PROXY_WATCH_NODES as usize - 1);
    assert!(below.kube_proxies_sharing_watches().is_empty());

    let mut sim = cluster_with_web(kubeloop::sim::SHARED_PROXY_WATCH_NODES as usize);
    assert_eq!(sim.kube_proxies_sharing_watches().len(), 50);
    // Each kube-proxy listed the Service while its watches were on offer (so kept nothing) and
    // wrote its first table from the shared cache.
    let want = ready_addresses(&sim);
    assert_eq!(want.len(), 3);
    for i in 0..50 {
        assert_eq!(table(&sim, &format!("node-{i}"), "web").as_deref(), Some(&want[..]), "node-{i}");
    }
    let first = sim.machine("node-0").unwrap().rules().table().clone();
    assert!((1..50).all(|i| std::rc::Rc::ptr_eq(&first, sim.machine(&format!("node-{i}")).unwrap().rules().table())));

    // A change is one notification to the shared cache, not fifty.
    sim.set_trace_capacity(100_000);
    let before = sim.trace().count();
    let key = pod_named(&sim, want[0].trim_end_matches(":80"));
    delete(&mut sim, key);
    let gone = |sim: &Sim| (0..50).all(|i| table(sim, &format!("node-{i}"), "web").is_some_and(|t| !t.contains(&want[0])));
    assert!(until(&mut sim, Duration::secs(5), gone).expect("every node drops it") <= Duration::millis(1500));
    let slice_hops: Vec<&str> = sim
        .trace()
        .since(before)
        .filter(|m| m.what.contains("endpointslice/") && m.to.starts_with("kube-proxy"))
        .map(|m| m.to.as_str())
        .collect();
    assert!(!slice_hops.is_empty() && slice_hops.iter().all(|to| *to == "kube-proxy"), "{slice_hops:?}");
}

#[test]
fn with_shared_watches_a_partitioned_node_keeps_its_stale_table_and_heals_on_its_own() {
    let mut s = shared_session();
    run(&mut s, "sim node partition node-1");
    assert_eq!(s.sim().kube_proxies_sharing_watches(), ["node-2"]);
    let stale = table(s.sim(), "node-1", "web").unwrap();
    let victim_ip = ready_addresses(s.sim())[0].trim_end_matches(":80").to_string();
    let victim = pod_named(s.sim(), &victim_ip);
    delete(s.sim_mut(), victim);
    s.sim_mut().advance(Duration::secs(20));
    let want = ready_addresses(s.sim());
    assert_eq!(table(s.sim(), "node-2", "web").as_deref(), Some(&want[..]));
    assert_eq!(table(s.sim(), "node-1", "web"), Some(stale), "cut off, node-1's kube-proxy hears nothing");
    run(&mut s, "sim node recover node-1");
    let healed = until(s.sim_mut(), Duration::mins(1), |sim| table(sim, "node-1", "web").as_deref() == Some(&want[..]));
    assert!(healed.is_some(), "reconnected, it lists again and follows");
    s.sim_mut().settle(Duration::mins(1)).unwrap();
    assert_eq!(s.sim().kube_proxies_sharing_watches(), NODES, "and shares again");
}

#[test]
fn with_shared_watches_an_etcd_restore_takes_every_table_back_to_the_snapshot() {
    let mut s = shared_session();
    run(&mut s, "sim etcd snapshot");
    run(&mut s, "kubectl scale deployment web --replicas=5");
    s.sim_mut().settle(Duration::mins(1)).unwrap();
    assert_eq!(table(s.sim(), "node-2", "web").unwrap().len(), 5);
    run(&mut s, "sim etcd restore");
    s.sim_mut().settle(Duration::mins(3)).unwrap();
    // The shared cache was re-listed from the restored etcd: every node follows the slice the
    // EndpointSlice controller then writes for the restored world.
    let want = ready_addresses(s.sim());
    assert_eq!(want.len(), 3, "the restored Deployment wants three");
    for node in NODES {
        assert_eq!(table(s.sim(), node, "web").as_deref(), Some(&want[..]), "{node}");
    }
    assert_eq!(s.sim().kube_proxies_sharing_watches(), NODES);
}
