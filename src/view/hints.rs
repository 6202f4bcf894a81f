//! "What is wrong?": the symptoms a person could see with kubectl, each pointing at the loop that
//! would have closed its gap had it been turning.
//!
//! It exists for the troubleshooting exercises: when a workload will not come up, the skill is to
//! read the symptom and ask which loop stopped. The hints never peek at which component the
//! simulation has stopped (the room of loops already draws that); they read the cluster's state
//! as `kubectl get` shows it, and a symptom counts only once it has lasted a while, because a
//! healthy cluster opens small gaps all the time and closes them within a second.

use crate::model::{Kind, Pod, Service, Time};
use crate::sim::{ComponentId, Sim};
use crate::vec_map::VecMap;
use serde::Serialize;
use std::collections::BTreeMap;

/// How long a gap must stay open before it is a symptom. A turning loop closes the gaps it owns
/// well within this (the slowest, a ReplicaSet's slow start of 3,000 pods, takes a few seconds).
pub const PERSISTS_FOR_MS: u64 = 10_000;

/// Most hints shown at once: the oldest symptoms first.
pub const MAX_HINTS: usize = 6;

/// One symptom and the question it leads to.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Hint {
    /// Stable identity (`unscheduled`, `replicaset:default/web-6d4cf56db6`, `node:node-2`).
    pub key: String,
    /// What kubectl would show, in words.
    pub symptom: String,
    /// The component whose loop owns this gap (`kube-scheduler`, `kubelet-node-2`, …).
    pub suspect: String,
    /// The question that leads from the symptom to the loop.
    pub question: String,
    /// Simulated ms since the symptom first appeared.
    pub since: u64,
}

/// Remembers when each symptom first appeared, so only lasting ones become hints.
#[derive(Clone, Debug, Default)]
pub struct HintTracker {
    first_seen: VecMap<String, Time>,
}

/// A symptom found in one look at the cluster.
struct Symptom {
    key: String,
    symptom: String,
    suspect: String,
    question: String,
    /// Shown at once rather than after [`PERSISTS_FOR_MS`] (a refused connection is no gap).
    immediate: bool,
}

impl HintTracker {
    pub fn new() -> Self {
        Self::default()
    }

    /// Looks at the cluster now and returns the symptoms that have lasted, oldest first.
    pub fn observe(&mut self, sim: &Sim) -> Vec<Hint> {
        let now = sim.now();
        if self.first_seen.values().any(|t| *t > now) {
            // A new run (`sim seed`): time went back to zero.
            self.first_seen.clear();
        }
        let symptoms = symptoms(sim);
        self.first_seen.retain(|k, _| symptoms.iter().any(|s| &s.key == k));
        let mut hints: Vec<Hint> = symptoms
            .into_iter()
            .filter_map(|s| {
                let since = now.0 - self.first_seen.get_or_insert_with(s.key.clone(), || now).0;
                (s.immediate || since >= PERSISTS_FOR_MS).then_some(Hint {
                    key: s.key,
                    symptom: s.symptom,
                    suspect: s.suspect,
                    question: s.question,
                    since,
                })
            })
            .collect();
        // Keys name nodes (`unstarted:node-10`): equal ages list them in the order a person counts.
        crate::sort::sort_by(&mut hints, |a, b| b.since.cmp(&a.since).then_with(|| crate::sort::natural_cmp(&a.key, &b.key)));
        hints.truncate(MAX_HINTS);
        hints
    }
}

fn symptoms(sim: &Sim) -> Vec<Symptom> {
    let mut out = Vec::new();
    out.extend(unreachable_server(sim));
    out.extend(nodes_not_ready(sim));
    out.extend(pods_without_node(sim));
    out.extend(replica_set_gaps(sim));
    out.extend(daemon_set_gaps(sim));
    out.extend(deployments_not_observed(sim));
    out.extend(pods_stuck_on_nodes(sim, sim.now()));
    // Both Service symptoms compare against the same lists: read them once, and only when one
    // of them will look (each keeps its own bound on how much it reads).
    let services = routed_services(sim);
    let looks = sim.api().count(Kind::Pod) <= SERVICE_CHECKS_MAX || services.len() * sim.api().count(Kind::Node) <= SERVICE_CHECKS_MAX;
    let served: Vec<(&Service, Vec<String>)> =
        if looks { services.into_iter().map(|svc| (svc, ready_endpoints(sim, svc))).collect() } else { Vec::new() };
    out.extend(endpoints_behind(sim, &served));
    out.extend(stale_routes(sim, &served));
    out
}

/// Past this many pods, or Service × node pairs, the Service symptoms are not looked for: the
/// panel reads the cluster once a second, and these comparisons grow with both.
const SERVICE_CHECKS_MAX: usize = 3_000;

/// The Services that select pods and have a cluster IP: the ones two loops keep.
fn routed_services(sim: &Sim) -> Vec<&Service> {
    sim.objects(Kind::Service)
        .filter_map(|o| o.as_service())
        .filter(|s| !s.spec.selector.is_empty() && !s.is_headless() && s.spec.cluster_ip.is_some())
        .collect()
}

/// The pods a Service's EndpointSlices list as ready, by name, sorted.
fn ready_endpoints(sim: &Sim, svc: &Service) -> Vec<String> {
    let name = svc.metadata.name.as_str();
    let mut pods: Vec<String> = sim
        .api()
        .items(Kind::EndpointSlice, Some(&svc.metadata.namespace))
        .filter_map(|o| o.as_endpoint_slice())
        .filter(|s| s.service_name() == Some(name))
        .flat_map(|s| s.endpoints.iter())
        .filter(|e| e.conditions.state() == "ready")
        .filter_map(|e| e.target_ref.as_ref().map(|r| r.name.to_string()))
        .collect();
    pods.sort();
    pods.dedup();
    pods
}

/// A Service whose endpoints do not list the ready pods its selector matches (or list others):
/// the EndpointSlice controller is not keeping up.
fn endpoints_behind(sim: &Sim, served: &[(&Service, Vec<String>)]) -> Vec<Symptom> {
    if sim.api().count(Kind::Pod) > SERVICE_CHECKS_MAX {
        return Vec::new();
    }
    let mut out = Vec::new();
    for (svc, listed) in served {
        let selects = |p: &Pod| svc.spec.selector.iter().all(|(k, v)| p.metadata.labels.get(k.as_str()) == Some(v));
        let mut ready: Vec<String> = sim
            .api()
            .items(Kind::Pod, Some(&svc.metadata.namespace))
            .filter_map(|o| o.as_pod())
            .filter(|p| selects(p) && p.is_ready() && !p.metadata.is_deleting())
            .map(|p| p.metadata.name.to_string())
            .collect();
        ready.sort();
        if *listed != ready {
            let name = &svc.metadata.name;
            out.push(Symptom {
                key: format!("endpoints:{}/{name}", svc.metadata.namespace),
                symptom: format!(
                    "Service {name} lists {} ready {}, but {} ready {} match its selector.",
                    listed.len(),
                    if listed.len() == 1 { "endpoint" } else { "endpoints" },
                    ready.len(),
                    pods_word(ready.len())
                ),
                suspect: "kube-controller-manager".into(),
                question: "Which loop keeps a Service's endpoints in step with the ready pods its selector matches?".into(),
                immediate: false,
            });
        }
    }
    out
}

/// A Ready node whose routing rules for a Service disagree with the Service's ready endpoints:
/// its kube-proxy has not rewritten them. (The rules are what `sim rules NODE` prints.)
fn stale_routes(sim: &Sim, served: &[(&Service, Vec<String>)]) -> Vec<Symptom> {
    let nodes: Vec<&str> = sim
        .objects(Kind::Node)
        .filter_map(|o| o.as_node())
        .filter(|n| n.condition("Ready").is_some_and(|c| c.status == "True"))
        .map(|n| n.metadata.name.as_str())
        .collect();
    if served.len() * nodes.len() > SERVICE_CHECKS_MAX {
        return Vec::new();
    }
    let mut out = Vec::new();
    for (svc, wanted) in served {
        if wanted.is_empty() {
            continue;
        }
        let key = format!("{}/{}", svc.metadata.namespace, svc.metadata.name);
        for node in &nodes {
            let Some(machine) = sim.machine(node) else { continue };
            let routed: Vec<String> = machine
                .rules()
                .for_service(&key, None)
                .map(|r| r.endpoints.iter().filter_map(|e| e.pod.clone()).collect())
                .unwrap_or_default();
            let stale: Vec<&str> = routed.iter().filter(|p| !wanted.contains(p)).map(String::as_str).collect();
            let missing: Vec<&str> = wanted.iter().filter(|p| !routed.contains(p)).map(String::as_str).collect();
            let name = &svc.metadata.name;
            let symptom = match (stale.is_empty(), missing.is_empty()) {
                (true, true) => continue,
                (false, _) => format!(
                    "Connections to Service {name} from {node} still go to {}, which its endpoints no longer list.",
                    stale.join(", ")
                ),
                (true, false) => format!("Connections to Service {name} from {node} never reach {}, listed as ready.", missing.join(", ")),
            };
            out.push(Symptom {
                key: format!("routes:{node}:{key}"),
                symptom,
                suspect: format!("kube-proxy-{node}"),
                question: format!("The Service's endpoints are right. Which loop on {node} turns them into that node's routing rules?"),
                immediate: false,
            });
        }
    }
    out
}

/// kubectl itself fails: the front door or the memory behind it is gone.
fn unreachable_server(sim: &Sim) -> Vec<Symptom> {
    let down = |id: &ComponentId| !sim.is_running(id);
    let mut out = Vec::new();
    if down(&ComponentId::ApiServer) {
        out.push(Symptom {
            key: "apiserver".into(),
            symptom: "kubectl cannot connect to the server at all.".into(),
            suspect: "kube-apiserver".into(),
            question: "Every component talks only to kube-apiserver. Is it running?".into(),
            immediate: true,
        });
    } else if down(&ComponentId::Etcd) {
        out.push(Symptom {
            key: "etcd".into(),
            symptom: "kubectl reaches the server, but every request fails with a storage error.".into(),
            suspect: "etcd".into(),
            question: "kube-apiserver keeps nothing itself. Where does it store every object?".into(),
            immediate: true,
        });
    }
    out
}

fn nodes_not_ready(sim: &Sim) -> Vec<Symptom> {
    sim.objects(Kind::Node)
        .filter_map(|o| o.as_node())
        .filter(|n| n.ready_status() != "True")
        .map(|n| {
            let name = &n.metadata.name;
            let state = if n.ready_status() == "Unknown" { "Unknown" } else { "NotReady" };
            let message = n.condition("Ready").and_then(|c| c.message.as_deref()).map(|m| m.trim().to_string()).filter(|m| !m.is_empty());
            Symptom {
                key: format!("node:{name}"),
                symptom: match message {
                    Some(m) => format!("Node {name} is {state}: {m}"),
                    None => format!("Node {name} is {state}."),
                },
                suspect: format!("kubelet-{name}"),
                question: format!("Who renews {name}'s lease and reports its status? Is that loop still turning?"),
                immediate: false,
            }
        })
        .collect()
}

/// Pods with no node and no word from the scheduler about why.
fn pods_without_node(sim: &Sim) -> Vec<Symptom> {
    let mut waiting = 0usize;
    let mut unschedulable: Option<String> = None;
    for pod in sim.objects(Kind::Pod).filter_map(|o| o.as_pod()) {
        if pod.node_name().is_some() || pod.metadata.is_deleting() || pod.is_terminal() {
            continue;
        }
        match pod.condition("PodScheduled").filter(|c| c.status == "False") {
            Some(c) => unschedulable = unschedulable.or_else(|| Some(c.message.as_deref().unwrap_or_default().to_string())),
            None => waiting += 1,
        }
    }
    let mut out = Vec::new();
    if waiting > 0 {
        out.push(Symptom {
            key: "unscheduled".into(),
            symptom: format!("{waiting} {} Pending with no node, and no FailedScheduling event says why.", pods_word(waiting)),
            suspect: "kube-scheduler".into(),
            question: "Which loop gives every new pod a node, or says why it cannot? Is it turning?".into(),
            immediate: false,
        });
    }
    if let Some(message) = unschedulable {
        out.push(Symptom {
            key: "unschedulable".into(),
            symptom: format!("The scheduler tried and failed: {}", message.trim()),
            suspect: "kube-scheduler".into(),
            question: "The scheduler is turning; what would give it a node that fits (capacity, taints, selectors)?".into(),
            immediate: false,
        });
    }
    out
}

/// DaemonSets with a node that should run their pod and has none. Read from the nodes and pods,
/// not from the DaemonSet's status: a stopped controller also stops writing its status.
fn daemon_set_gaps(sim: &Sim) -> Vec<Symptom> {
    use crate::controllers::daemon_set::util::{node_should_run, spec_with_daemon_tolerations, target_node_name};
    let nodes: Vec<&crate::model::Node> = sim.objects(Kind::Node).filter_map(|o| o.as_node()).collect();
    let mut out = Vec::new();
    for ds in sim.objects(Kind::DaemonSet).filter_map(|o| o.as_daemon_set()).filter(|ds| !ds.metadata.is_deleting()) {
        let tolerations = spec_with_daemon_tolerations(&ds.spec.template.spec).tolerations;
        let covered: std::collections::BTreeSet<&str> = sim
            .objects(Kind::Pod)
            .filter_map(|o| o.as_pod())
            .filter(|p| !p.metadata.is_deleting() && !p.is_terminal())
            .filter(|p| p.metadata.controller_ref().is_some_and(|r| r.uid == ds.metadata.uid.as_str()))
            .filter_map(target_node_name)
            .collect();
        let want: Vec<&str> = nodes.iter().filter(|n| node_should_run(n, ds, &tolerations).0).map(|n| n.metadata.name.as_str()).collect();
        let missing = want.iter().filter(|n| !covered.contains(*n)).count();
        if missing == 0 {
            continue;
        }
        out.push(Symptom {
            key: format!("daemonset:{}/{}", ds.metadata.namespace, ds.metadata.name),
            symptom: format!("DaemonSet {} should run on {} nodes; {missing} of them have no pod.", ds.metadata.name, want.len()),
            suspect: "kube-controller-manager".into(),
            question: "Which controller puts a DaemonSet's pod on each node? Is its loop turning?".into(),
            immediate: false,
        });
    }
    out
}

/// ReplicaSets whose claim and the pods they own disagree.
fn replica_set_gaps(sim: &Sim) -> Vec<Symptom> {
    let mut owned: BTreeMap<&str, i32> = BTreeMap::new();
    for pod in sim.objects(Kind::Pod).filter_map(|o| o.as_pod()) {
        if pod.metadata.is_deleting() || pod.is_terminal() {
            continue;
        }
        if let Some(owner) = pod.metadata.controller_ref().filter(|r| r.kind == "ReplicaSet") {
            *owned.entry(owner.uid.as_str()).or_default() += 1;
        }
    }
    sim.objects(Kind::ReplicaSet)
        .filter_map(|o| o.as_replica_set())
        .filter(|rs| !rs.metadata.is_deleting())
        .filter_map(|rs| {
            let want = rs.spec.replicas.unwrap_or(1);
            let have = owned.get(rs.metadata.uid.as_str()).copied().unwrap_or(0);
            (want != have).then(|| Symptom {
                key: format!("replicaset:{}/{}", rs.metadata.namespace, rs.metadata.name),
                symptom: format!("ReplicaSet {} wants {want} {}; {have} exist.", rs.metadata.name, pods_word(want.max(0) as usize)),
                suspect: "kube-controller-manager".into(),
                question: "Which controller creates and deletes a ReplicaSet's pods? Is its loop turning?".into(),
                immediate: false,
            })
        })
        .collect()
}

/// Deployments whose latest spec no controller has looked at.
fn deployments_not_observed(sim: &Sim) -> Vec<Symptom> {
    sim.objects(Kind::Deployment)
        .filter_map(|o| o.as_deployment())
        .filter(|d| d.status.observed_generation < d.metadata.generation)
        .map(|d| Symptom {
            key: format!("deployment:{}/{}", d.metadata.namespace, d.metadata.name),
            symptom: format!(
                "Deployment {} is at generation {} but its status observed only {}.",
                d.metadata.name, d.metadata.generation, d.status.observed_generation
            ),
            suspect: "kube-controller-manager".into(),
            question: "Which controller reads a Deployment's spec and writes its status?".into(),
            immediate: false,
        })
        .collect()
}

/// Pods bound to a node that its kubelet has not touched, or whose deletion it never finished.
fn pods_stuck_on_nodes(sim: &Sim, now: Time) -> Vec<Symptom> {
    let mut untouched: BTreeMap<&str, usize> = BTreeMap::new();
    let mut not_gone: BTreeMap<&str, usize> = BTreeMap::new();
    for pod in sim.objects(Kind::Pod).filter_map(|o| o.as_pod()) {
        let Some(node) = pod.node_name() else { continue };
        match pod.metadata.deletion_timestamp {
            Some(deadline) if now > deadline => *not_gone.entry(node).or_default() += 1,
            Some(_) => {}
            None if pod.status.container_statuses.is_empty() && !pod.is_terminal() => *untouched.entry(node).or_default() += 1,
            None => {}
        }
    }
    let mut out = Vec::new();
    for (node, n) in untouched {
        out.push(Symptom {
            key: format!("unstarted:{node}"),
            symptom: format!(
                "{n} {} bound to {node} but nothing on {node} has started {}.",
                pods_word(n),
                if n == 1 { "it" } else { "them" }
            ),
            suspect: format!("kubelet-{node}"),
            question: format!("The scheduler's work is done. Which loop on {node} starts the containers?"),
            immediate: false,
        });
    }
    for (node, n) in not_gone {
        out.push(Symptom {
            key: format!("terminating:{node}"),
            symptom: format!("{n} {} on {node} stay Terminating past their grace period.", pods_word(n)),
            suspect: format!("kubelet-{node}"),
            question: format!("Deleting a pod only asks. Which loop on {node} stops the containers and confirms?"),
            immediate: false,
        });
    }
    out
}

fn pods_word(n: usize) -> &'static str {
    if n == 1 {
        "pod"
    } else {
        "pods"
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::command::{Scenario, Session};
    use crate::model::Duration;

    fn settled() -> Session {
        let scenario = Scenario::builtin("default").expect("the default scenario");
        let mut s = Session::new(scenario, Some(7)).expect("starts");
        assert!(s.execute("sim settle").ok);
        s
    }

    #[test]
    fn hints_of_the_same_age_name_nodes_in_counting_order() {
        let mut s = settled();
        assert!(s.execute("sim node add node-10").ok);
        assert!(s.execute("sim settle").ok);
        let mut tracker = HintTracker::new();
        assert!(s.execute("sim node fail node-10").ok && s.execute("sim node fail node-2").ok);
        let mut keys = Vec::new();
        for _ in 0..30 {
            s.advance(Duration::secs(5));
            keys = tracker.observe(s.sim()).into_iter().map(|h| h.key).filter(|k| k.starts_with("node:")).collect();
        }
        assert_eq!(keys, ["node:node-2", "node:node-10"]);
    }

    #[test]
    fn a_healthy_cluster_shows_no_hints() {
        let mut s = settled();
        let mut tracker = HintTracker::new();
        s.advance(Duration::secs(30));
        assert_eq!(tracker.observe(s.sim()), vec![]);
    }

    #[test]
    fn a_stopped_scheduler_shows_pending_pods_only_once_the_gap_lasts() {
        let mut s = settled();
        let mut tracker = HintTracker::new();
        assert!(s.sim_mut().stop_component(&ComponentId::Scheduler));
        assert!(s.execute("kubectl scale deployment web --replicas=5").ok);
        s.advance(Duration::secs(2));
        assert!(tracker.observe(s.sim()).is_empty(), "a young gap is not yet a symptom");
        s.advance(Duration::secs(10));
        let hints = tracker.observe(s.sim());
        let h = hints.iter().find(|h| h.key == "unscheduled").expect("the pending pods are a symptom");
        assert_eq!(h.suspect, "kube-scheduler");
        assert_eq!(h.symptom, "2 pods Pending with no node, and no FailedScheduling event says why.");
        assert!(h.since >= PERSISTS_FOR_MS, "{}", h.since);
        assert!(hints.iter().all(|h| h.suspect == "kube-scheduler"), "{hints:?}");
        // Started again, the scheduler binds them and the symptom goes.
        assert!(s.sim_mut().start_component(&ComponentId::Scheduler));
        s.advance(Duration::secs(15));
        assert!(tracker.observe(s.sim()).iter().all(|h| h.key != "unscheduled"));
    }

    #[test]
    fn a_stopped_controller_manager_shows_the_replica_set_gap() {
        let mut s = settled();
        let mut tracker = HintTracker::new();
        assert!(s.sim_mut().stop_component(&ComponentId::ControllerManager));
        let victim = s.sim().objects(Kind::Pod).next().map(|o| o.meta().name.clone()).expect("a pod");
        assert!(s.execute(&format!("kubectl delete pod {victim}")).ok);
        tracker.observe(s.sim());
        s.advance(Duration::secs(40));
        let hints = tracker.observe(s.sim());
        let h = hints.iter().find(|h| h.key.starts_with("replicaset:default/web-")).expect("the ReplicaSet's gap");
        assert_eq!(h.suspect, "kube-controller-manager");
        assert!(h.symptom.ends_with("wants 3 pods; 2 exist."), "{}", h.symptom);
    }

    #[test]
    fn a_stopped_controller_manager_shows_the_daemon_set_gap_on_a_new_node() {
        let mut s = settled();
        let mut tracker = HintTracker::new();
        let ds = "kubectl create -f - <<EOF\napiVersion: apps/v1\nkind: DaemonSet\nmetadata: {name: agent}\nspec:\n  selector: {matchLabels: {app: agent}}\n  template:\n    metadata: {labels: {app: agent}}\n    spec: {containers: [{name: a, image: busybox}]}\nEOF";
        assert!(s.execute(ds).ok && s.execute("sim settle").ok);
        assert!(s.sim_mut().stop_component(&ComponentId::ControllerManager));
        assert!(s.execute("sim node add node-3").ok);
        // The kubelet registers its Node a moment after it starts; the gap opens then.
        s.advance(Duration::secs(5));
        tracker.observe(s.sim());
        s.advance(Duration::secs(30));
        let hints = tracker.observe(s.sim());
        let h = hints.iter().find(|h| h.key == "daemonset:default/agent").expect("the DaemonSet's gap");
        assert_eq!(h.symptom, "DaemonSet agent should run on 3 nodes; 1 of them have no pod.");
        assert!(s.sim_mut().start_component(&ComponentId::ControllerManager));
        s.advance(Duration::secs(30));
        assert!(tracker.observe(s.sim()).iter().all(|h| h.key != "daemonset:default/agent"));
    }

    #[test]
    fn a_stopped_api_server_or_etcd_is_named_at_once() {
        let mut s = settled();
        let mut tracker = HintTracker::new();
        assert!(s.execute("sim stop etcd").ok);
        assert_eq!(tracker.observe(s.sim()).iter().map(|h| h.suspect.as_str()).collect::<Vec<_>>(), ["etcd"]);
        assert!(s.execute("sim stop kube-apiserver").ok);
        assert_eq!(tracker.observe(s.sim()).iter().map(|h| h.suspect.as_str()).collect::<Vec<_>>(), ["kube-apiserver"]);
    }

    #[test]
    fn a_stopped_kubelet_leaves_new_pods_untouched_on_its_node() {
        let mut s = settled();
        let mut tracker = HintTracker::new();
        assert!(s.sim_mut().stop_component(&ComponentId::Kubelet("node-1".into())));
        assert!(s.execute("kubectl scale deployment web --replicas=8").ok);
        s.advance(Duration::secs(5));
        tracker.observe(s.sim());
        s.advance(Duration::secs(15));
        let hints = tracker.observe(s.sim());
        let h = hints.iter().find(|h| h.key == "unstarted:node-1").expect("pods bound to the dead kubelet's node");
        assert_eq!(h.suspect, "kubelet-node-1");
        assert!(hints.iter().all(|h| h.key != "unstarted:node-2"), "{hints:?}");
    }

    /// The default cluster with web behind a Service, settled.
    fn served() -> Session {
        let mut s = settled();
        assert!(s.execute("kubectl expose deployment web --port=80").ok);
        assert!(s.execute("sim settle").ok);
        s
    }

    #[test]
    fn a_healthy_service_shows_no_hint() {
        let mut s = served();
        let mut tracker = HintTracker::new();
        s.advance(Duration::secs(30));
        assert_eq!(tracker.observe(s.sim()), vec![]);
        // A pod deleted while every loop turns: the gaps close well within the 10 s.
        assert!(s.execute("kubectl delete pod -l app=web --wait=false").ok);
        for _ in 0..30 {
            s.advance(Duration::secs(1));
            assert_eq!(tracker.observe(s.sim()), vec![]);
        }
    }

    #[test]
    fn a_stopped_kube_proxy_leaves_its_nodes_routes_stale_and_is_the_suspect() {
        let mut s = served();
        let mut tracker = HintTracker::new();
        assert!(s.execute("sim stop kube-proxy-node-1").ok);
        assert!(s.execute("kubectl delete pod -l app=web --wait=false").ok);
        let mut hints = Vec::new();
        for _ in 0..20 {
            s.advance(Duration::secs(1));
            hints = tracker.observe(s.sim());
        }
        let routes: Vec<&Hint> = hints.iter().filter(|h| h.key.starts_with("routes:")).collect();
        assert_eq!(routes.len(), 1, "{hints:?}");
        assert_eq!(routes[0].key, "routes:node-1:default/web");
        assert_eq!(routes[0].suspect, "kube-proxy-node-1");
        assert!(routes[0].symptom.starts_with("Connections to Service web from node-1 still go to web-"), "{}", routes[0].symptom);
        assert!(hints.iter().all(|h| !h.key.starts_with("endpoints:")), "the endpoints are right: {hints:?}");
    }

    #[test]
    fn a_stopped_controller_manager_leaves_the_endpoints_behind_the_pods() {
        // The service scenario's pods have a readiness probe, so failing it unreadies one.
        let mut s = Session::new(Scenario::builtin("service").unwrap(), Some(1)).unwrap();
        assert!(s.execute("sim settle").ok);
        let mut tracker = HintTracker::new();
        let pod = s.sim().objects(Kind::Pod).next().unwrap().meta().name.to_string();
        assert!(s.execute("sim stop kube-controller-manager").ok);
        assert!(s.execute(&format!("sim fail-probe {pod} readiness")).ok);
        let mut hints = Vec::new();
        for _ in 0..30 {
            s.advance(Duration::secs(1));
            hints = tracker.observe(s.sim());
        }
        let behind = hints.iter().find(|h| h.key == "endpoints:default/web").expect("the endpoints lag the pods");
        assert_eq!(behind.suspect, "kube-controller-manager");
        assert_eq!(behind.symptom, "Service web lists 3 ready endpoints, but 2 ready pods match its selector.");
        assert!(hints.iter().all(|h| !h.key.starts_with("routes:")), "the tables follow the endpoints: {hints:?}");
    }
}
