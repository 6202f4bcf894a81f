//! Faults a person injects to break one loop and watch what a real cluster shows: stopped
//! processes (kube-apiserver and etcd included), powered-off and partitioned nodes, lossy or slow
//! watches, etcd snapshots and disasters, and crashing containers.
//!
//! A fault never reaches into a component's memory. It changes what the network and the machines
//! (`Machine`, owned by the Sim) do — requests refused or timed out, watches ended, notifications
//! lost or late, containers gone, applications crashing or failing their probes — and the components' own retry paths (informers' 800 ms→30 s back-off, work-queue rate
//! limits, the kubelet's lease and status retries) do the rest, as they would in a real cluster.
//! Nothing here draws from the RNG or changes a delivery time unless a fault is active, so a run
//! without faults is the same trace as before faults existed.

use super::{ComponentId, Sim};
use crate::api::ApiError;
use crate::api::ApiRequest;
use crate::kubelet::prober::ProbeType;
use crate::kubelet::CrashPlan;
use crate::model::{Duration, Kind, ObjectKey};
use crate::store::Snapshot;
use crate::vec_map::{VecMap, VecSet};

/// How long kube-apiserver waits on an unreachable etcd before failing a request: etcd's own
/// request timeout (5 s plus two 1 s election timeouts), after which the API server passes on
/// `etcdserver: request timed out`.
/// How `sim` names one controller of kube-controller-manager, as `sim status` lists it.
pub const CONTROLLER_PREFIX: &str = "kube-controller-manager/";

pub const ETCD_REQUEST_TIMEOUT: Duration = Duration::secs(7);

/// How long a request from a partitioned node waits before its dial times out (the kubelet's
/// heartbeat client times out after its node status update frequency, 10 s).
pub const PARTITIONED_REQUEST_TIMEOUT: Duration = Duration::secs(10);

/// What is wrong with a node as a machine (its kubelet's process state is `Sim::is_running`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum NodeFault {
    /// Powered off: no kubelet, no containers; only what is on disk survives.
    PoweredOff,
    /// Cut off from the API server: its kubelet and containers run on, its requests time out.
    Partitioned,
}

impl NodeFault {
    pub fn as_str(self) -> &'static str {
        match self {
            NodeFault::PoweredOff => "powered off",
            NodeFault::Partitioned => "partitioned",
        }
    }
}

/// What happens to the watch notifications of one component (or all).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct WatchFault {
    /// Each notification is lost with this probability, in percent (0–100).
    pub drop_percent: u32,
    /// Added to every notification's latency.
    pub delay: Duration,
}

impl WatchFault {
    fn is_clear(&self) -> bool {
        self.drop_percent == 0 && self.delay == Duration::ZERO
    }
}

/// Every fault in force, and the etcd snapshot a person took.
#[derive(Debug, Default)]
pub(crate) struct Faults {
    pub api_server_down: bool,
    pub etcd_down: bool,
    pub nodes: VecMap<String, NodeFault>,
    /// By target: `None` is every component; a component's own entry wins over it.
    pub watch: VecMap<Option<ComponentId>, WatchFault>,
    pub snapshot: Option<Snapshot>,
    /// Watch notifications lost to `watch drop` so far.
    pub dropped: u64,
    /// A notification to kube-controller-manager was lost since it last listed: until it lists
    /// again, its loops cannot know what that notification said (the invariants allow for it).
    pub controller_manager_missed_events: bool,
    /// Watches severed by `sim watch sever`, by client and kind: the client's next watch of
    /// that kind is answered 410 Gone, so it re-lists.
    pub relist: VecSet<(ComponentId, Kind)>,
}

impl Faults {
    /// Whether any fault could refuse a request (`Sim::refusal` answers `None` otherwise).
    pub(crate) fn may_refuse(&self) -> bool {
        self.api_server_down || self.etcd_down || !self.nodes.is_empty() || !self.relist.is_empty()
    }
}

impl Sim {
    /// What is wrong with this node's machine, if anything.
    pub fn node_fault(&self, node: &str) -> Option<NodeFault> {
        self.faults.nodes.get(node).copied()
    }
    /// Every faulty node, by name.
    pub fn node_faults(&self) -> &VecMap<String, NodeFault> {
        &self.faults.nodes
    }
    /// The watch faults in force, by target (`None`: every component).
    pub fn watch_faults(&self) -> &VecMap<Option<ComponentId>, WatchFault> {
        &self.faults.watch
    }
    /// How many watch notifications `watch drop` has lost so far.
    pub fn watch_events_dropped(&self) -> u64 {
        self.faults.dropped
    }
    /// The snapshot `sim etcd snapshot` took, if any.
    pub fn etcd_snapshot(&self) -> Option<&Snapshot> {
        self.faults.snapshot.as_ref()
    }
    /// The crashes `sim crash` injected, by node and pod.
    pub fn injected_crashes(&self) -> Vec<(String, ObjectKey, CrashPlan)> {
        let machines = self.machines().filter(|m| self.has_component(&ComponentId::Kubelet(m.node().to_string())));
        machines.flat_map(|m| m.injected_crashes().into_iter().map(move |(pod, plan)| (m.node().to_string(), pod, plan))).collect()
    }

    /// Whether any fault is in force (stopped components not counted).
    pub fn has_faults(&self) -> bool {
        self.faults.api_server_down || self.faults.etcd_down || !self.faults.nodes.is_empty() || !self.faults.watch.is_empty()
    }

    /// The watch fault that applies to notifications for `owner`.
    pub(super) fn watch_fault_for(&self, owner: &ComponentId) -> Option<WatchFault> {
        if self.faults.watch.is_empty() {
            return None;
        }
        self.faults.watch.get(&Some(owner.clone())).or_else(|| self.faults.watch.get(&None)).copied()
    }

    pub(super) fn is_partitioned(&self, id: &ComponentId) -> bool {
        match id {
            ComponentId::Kubelet(node) | ComponentId::KubeProxy(node) if !self.faults.nodes.is_empty() => {
                self.node_fault(node) == Some(NodeFault::Partitioned)
            }
            _ => false,
        }
    }

    /// Why a request from `from` gets no real answer, and how long the client waits to learn it.
    pub(super) fn refusal(&mut self, from: &ComponentId, request: &ApiRequest) -> Option<(ApiError, Duration)> {
        if !self.faults.may_refuse() {
            return None;
        }
        let watch = match request {
            ApiRequest::Watch(w) => Some(w),
            _ => None,
        };
        if self.is_partitioned(from) {
            return Some((ApiError::network_timeout(), PARTITIONED_REQUEST_TIMEOUT));
        }
        if self.faults.api_server_down {
            // Nothing listens on the port: the refusal comes straight back.
            return Some((ApiError::connection_refused(), Duration(self.jitter(self.latencies.response.0))));
        }
        // With etcd gone the API server still serves new watches from its watch cache.
        if self.faults.etcd_down && watch.is_none() {
            return Some((ApiError::etcd_timeout(), ETCD_REQUEST_TIMEOUT));
        }
        let w = watch?;
        if self.faults.relist.remove(&(from.clone(), w.kind)) {
            let message = format!("too old resource version: {} ({})", w.resource_version, self.api.revision());
            return Some((ApiError::gone(message), Duration(self.jitter(self.latencies.response.0))));
        }
        None
    }

    /// A component `sim stop|start|restart` can name, or the error listing those it can.
    fn known_component(&self, name: &str) -> Result<ComponentId, String> {
        let id = ComponentId::parse(name).filter(|id| match id {
            ComponentId::ApiServer | ComponentId::Etcd => true,
            ComponentId::User => false,
            other => self.has_component(other),
        });
        id.ok_or_else(|| format!("unknown component {name:?}; known components: {}", self.stoppable().join(", ")))
    }

    /// The names of every process a person can stop, in order.
    pub fn stoppable(&self) -> Vec<String> {
        let mut names = vec![ComponentId::Etcd.to_string(), ComponentId::ApiServer.to_string()];
        names.extend(self.component_ids().map(ToString::to_string));
        names
    }

    /// `sim stop|start|restart kube-controller-manager/CONTROLLER`: one loop of the process is
    /// switched off or on (restart: off if on, then on), and its qualified name is returned.
    /// kube-controller-manager itself keeps running; the setting outlives its restarts.
    pub fn switch_controller(&mut self, qualified: &str, verb: &str) -> Result<String, String> {
        let name = qualified.strip_prefix(CONTROLLER_PREFIX).unwrap_or(qualified);
        let stopped = self.controller_manager().is_some_and(|m| m.is_stopped(name));
        let switched = self.update_controller_manager(|m| match verb {
            "stop" => m.set_stopped(name, true).map(str::to_string),
            "start" => m.set_stopped(name, false).map(str::to_string),
            _ => {
                if !stopped {
                    m.set_stopped(name, true)?;
                }
                m.set_stopped(name, false).map(str::to_string)
            }
        });
        switched.unwrap_or_else(|| Err("this cluster has no kube-controller-manager".into())).map(|n| format!("{CONTROLLER_PREFIX}{n}"))
    }

    /// `sim stop COMPONENT`: the process stops. Errors (kubectl-shaped, without `error: `)
    /// change nothing.
    pub fn stop(&mut self, name: &str) -> Result<ComponentId, String> {
        let id = self.known_component(name)?;
        if !self.is_running(&id) {
            return Err(format!("{id} is already stopped"));
        }
        match &id {
            ComponentId::ApiServer => {
                self.faults.api_server_down = true;
                // Every connection ends with the process; clients retry against a closed port.
                self.sever_watches(None);
            }
            ComponentId::Etcd => self.faults.etcd_down = true,
            other => {
                self.stop_component(other);
            }
        }
        Ok(id)
    }

    /// `sim start COMPONENT`: the process starts from nothing.
    pub fn start(&mut self, name: &str) -> Result<ComponentId, String> {
        let id = self.known_component(name)?;
        if self.is_running(&id) {
            return Err(format!("{id} is already running"));
        }
        self.start_stopped(&id)?;
        Ok(id)
    }

    /// `sim restart COMPONENT`: stop (if running), then start at once.
    pub fn restart(&mut self, name: &str) -> Result<ComponentId, String> {
        let id = self.known_component(name)?;
        if let ComponentId::Kubelet(node) | ComponentId::KubeProxy(node) = &id {
            self.check_powered(node)?;
        }
        if self.is_running(&id) {
            self.stop(name)?;
        }
        self.start_stopped(&id)?;
        Ok(id)
    }

    fn start_stopped(&mut self, id: &ComponentId) -> Result<(), String> {
        match id {
            ComponentId::ApiServer => {
                self.faults.api_server_down = false;
                self.api.restart_watch_cache();
            }
            ComponentId::Etcd => self.faults.etcd_down = false,
            ComponentId::Kubelet(node) | ComponentId::KubeProxy(node) => {
                self.check_powered(node)?;
                self.start_component(id);
            }
            other => {
                self.start_component(other);
            }
        }
        Ok(())
    }

    fn check_powered(&self, node: &str) -> Result<(), String> {
        match self.node_fault(node) {
            Some(NodeFault::PoweredOff) => Err(format!("node {node:?} is powered off; bring it back with: sim node recover {node}")),
            _ => Ok(()),
        }
    }

    fn known_node(&self, node: &str) -> Result<ComponentId, String> {
        let id = ComponentId::Kubelet(node.to_string());
        if self.has_component(&id) {
            Ok(id)
        } else {
            Err(format!("nodes {node:?} not found"))
        }
    }

    /// `sim node fail NODE`: the machine loses power. Its processes die with it (its kubelet
    /// stops renewing the lease), its containers and the kernel's rules are gone; the Node and
    /// its pods stay in the API as they were last reported.
    pub fn node_fail(&mut self, node: &str) -> Result<(), String> {
        let id = self.known_node(node)?;
        self.check_powered(node)?;
        self.stop_component(&id);
        let proxy = ComponentId::KubeProxy(node.to_string());
        self.stop_component(&proxy);
        let now = self.now;
        if let Some(m) = self.machine_mut(node) {
            m.power_off(now);
        }
        self.faults.nodes.insert(node.to_string(), NodeFault::PoweredOff);
        Ok(())
    }

    /// `sim node partition NODE`: the node can no longer reach kube-apiserver. Its watches end
    /// and every request it sends times out; its kubelet keeps trying and its containers keep
    /// running.
    pub fn node_partition(&mut self, node: &str) -> Result<(), String> {
        let id = self.known_node(node)?;
        match self.node_fault(node) {
            Some(NodeFault::PoweredOff) => return Err(format!("node {node:?} is powered off")),
            Some(NodeFault::Partitioned) => return Err(format!("node {node:?} is already partitioned")),
            None => {}
        }
        self.faults.nodes.insert(node.to_string(), NodeFault::Partitioned);
        self.sever_watches(Some(&id));
        self.sever_watches(Some(&ComponentId::KubeProxy(node.to_string())));
        Ok(())
    }

    /// `sim node recover NODE`: power comes back (the kubelet boots, re-lists and reconciles its
    /// pods) or the network heals (the kubelet's next retry gets through). Returns the fault it
    /// recovered from.
    pub fn node_recover(&mut self, node: &str) -> Result<NodeFault, String> {
        let id = self.known_node(node)?;
        let fault = self.faults.nodes.remove(node).ok_or_else(|| format!("node {node:?} has no fault to recover from"))?;
        if fault == NodeFault::PoweredOff {
            if let Some(m) = self.machine_mut(node) {
                m.power_on();
            }
            self.start_component(&id);
            self.start_component(&ComponentId::KubeProxy(node.to_string()));
        }
        Ok(fault)
    }

    /// A component watch faults can name: a watch client (not kube-apiserver, etcd or kubectl).
    pub fn watch_client(&self, name: &str) -> Result<ComponentId, String> {
        ComponentId::parse(name).filter(|id| self.has_component(id)).ok_or_else(|| {
            let names: Vec<String> = self.component_ids().map(ToString::to_string).collect();
            format!("unknown watch client {name:?}; watch clients: {}", names.join(", "))
        })
    }

    /// `sim watch drop PERCENT [COMPONENT]`: each notification to the target is lost with that
    /// probability (drawn from the seeded RNG); 0 turns it off. Without a target it applies to
    /// every component and replaces their own settings.
    pub fn set_watch_drop(&mut self, target: Option<ComponentId>, percent: u32) {
        self.update_watch_fault(target, |f| f.drop_percent = percent.min(100));
    }

    /// `sim watch delay DURATION [COMPONENT]`: every notification to the target arrives that much
    /// later (in order); 0 turns it off.
    pub fn set_watch_delay(&mut self, target: Option<ComponentId>, delay: Duration) {
        self.update_watch_fault(target, |f| f.delay = delay);
    }

    fn update_watch_fault(&mut self, target: Option<ComponentId>, set: impl Fn(&mut WatchFault)) {
        if target.is_none() {
            for f in self.faults.watch.values_mut() {
                set(f);
            }
        }
        let entry = self.faults.watch.get_or_insert_with(target, WatchFault::default);
        set(entry);
        self.faults.watch.retain(|_, f| !f.is_clear());
        // A fault is per client: a kube-proxy it covers stops reading the shared cache.
        self.unshare_faulted_kube_proxies();
    }

    /// `sim watch sever [COMPONENT]`: ends the target's watches so that each client must re-list:
    /// its re-watch lands where its revision is unknown (another API server's watch cache, say)
    /// and is answered 410 Gone. A re-list repairs a cache however it went wrong — which is what
    /// makes a level-triggered controller converge after lost events. Returns how many ended.
    pub fn sever_watches_to_relist(&mut self, of: Option<&ComponentId>) -> usize {
        let severed: Vec<(ComponentId, Kind)> = self
            .watch_owner
            .iter()
            .map(|(w, o)| (w, &self.components[*o].id))
            .filter(|(_, o)| of.is_none_or(|x| x == *o))
            .filter_map(|(w, o)| Some((o.clone(), self.api.watches.spec(*w)?.0)))
            .collect();
        let n = severed.len();
        if of.is_none_or(|c| *c == ComponentId::ControllerManager) && severed.iter().any(|(c, _)| *c == ComponentId::ControllerManager) {
            // Every watch of it ends in 410 Gone: each of its informers lists again.
            self.faults.controller_manager_missed_events = false;
        }
        self.faults.relist.extend(severed);
        let outside = if of.is_none() { self.sever_external_watches(true) } else { 0 };
        self.sever_watches(of);
        n + outside
    }

    /// How many watches `sever_watches(of)` would end now.
    pub fn open_watches(&self, of: Option<&ComponentId>) -> usize {
        self.watch_owner.values().filter(|o| of.is_none_or(|x| *x == self.components[**o].id)).count()
    }

    /// `sim etcd snapshot`: keeps a copy of etcd (`etcdctl snapshot save`). Returns it.
    pub fn etcd_snapshot_save(&mut self) -> &Snapshot {
        self.faults.snapshot.insert(self.api.etcd.snapshot())
    }

    /// `sim etcd restore`: etcd goes back to the snapshot, at a higher revision. kube-apiserver
    /// must start over on it: every watch ends, and clients re-watch from revisions that are now
    /// compacted, so they re-list and see the restored state.
    pub fn etcd_restore(&mut self) -> Result<u64, String> {
        let snapshot = self.faults.snapshot.clone().ok_or("no etcd snapshot to restore; take one first with: sim etcd snapshot")?;
        self.api.etcd.restore(&snapshot);
        self.after_etcd_replaced();
        Ok(snapshot.revision)
    }

    /// `sim etcd wipe`: etcd's data is lost. Every claim is gone; what runs on the nodes keeps
    /// running until each kubelet re-lists and finds its pods gone, and then kills them.
    /// Returns how many keys were lost.
    pub fn etcd_wipe(&mut self) -> usize {
        let lost = self.api.key_count();
        self.api.etcd.wipe();
        self.after_etcd_replaced();
        lost
    }

    fn after_etcd_replaced(&mut self) {
        self.api.reindex();
        // The restarted kube-apiserver creates whichever system namespaces etcd no longer has, and
        // its bootstrap controller the `kubernetes` Service.
        self.api.ensure_system_namespaces(self.now, &mut self.rng);
        self.api.bootstrap();
        self.api.restart_watch_cache();
        self.compact_to = self.api.revision();
        self.invariants.forget_history();
        self.sever_watches(None);
    }

    /// `sim crash POD`: the pod's containers exit with `exit_code` `after` each start (a running
    /// one: `after` from now); its kubelet restarts them by the pod's restartPolicy, with
    /// CrashLoopBackOff. The fault lives on the node until the pod is removed from it. Returns
    /// the node. Errors as kubectl prints them.
    pub fn crash_pod(&mut self, key: &ObjectKey, after: Duration, exit_code: i32) -> Result<String, String> {
        let pod = self.api.get(key).and_then(|o| o.as_pod()).ok_or_else(|| ApiError::not_found(Kind::Pod, &key.name).kubectl_message())?;
        let uid = pod.metadata.uid.clone();
        let node =
            pod.node_name().map(str::to_string).ok_or_else(|| format!("error: pod {:?} is not scheduled to a node yet", key.name))?;
        let id = ComponentId::Kubelet(node.clone());
        if !self.has_component(&id) {
            return Err(format!("error: pod {:?} is bound to node {node:?}, which has no kubelet", key.name));
        }
        let plan = CrashPlan { after, exit_code };
        let now = self.now;
        if let Some(m) = self.machine_mut(&node) {
            m.inject_crash(now, &uid, plan);
        }
        // The planned exit is the machine's next event: a running kubelet must wake for it.
        self.reschedule(&id);
        Ok(node)
    }

    /// `sim fail-probe POD KIND` / `sim pass-probe POD KIND`: the pod's application fails (or
    /// passes again) its probes of that kind, from the next probe on: an httpGet is answered
    /// 500, a tcpSocket refused, a gRPC health check NOT_SERVING, an exec command exits 1. The
    /// fault lives on the node until the pod is removed from it. Returns the node.
    pub fn set_probe_fault(&mut self, key: &ObjectKey, kind: ProbeType, failing: bool) -> Result<String, String> {
        let pod = self.api.get(key).and_then(|o| o.as_pod()).ok_or_else(|| ApiError::not_found(Kind::Pod, &key.name).kubectl_message())?;
        let uid = pod.metadata.uid.clone();
        let node =
            pod.node_name().map(str::to_string).ok_or_else(|| format!("error: pod {:?} is not scheduled to a node yet", key.name))?;
        let kubelet = self.has_component(&ComponentId::Kubelet(node.clone()));
        match self.machine_mut(&node) {
            Some(m) if kubelet => {
                m.set_probe_fault(&uid, kind, failing);
                Ok(node)
            }
            _ => Err(format!("error: pod {:?} is bound to node {node:?}, which has no kubelet", key.name)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::FieldFilter;
    use crate::api::{Reason, WatchRequest};
    use crate::sim::NodeConfig;

    fn cluster() -> Sim {
        let mut sim = Sim::new(3);
        sim.add_node(NodeConfig::new("node-1")).unwrap();
        sim.settle(Duration::secs(30)).unwrap();
        sim
    }

    fn watch(kind: Kind) -> ApiRequest {
        ApiRequest::Watch(WatchRequest { kind, resource: Default::default(), field: FieldFilter::All, resource_version: 0, labels: None })
    }

    #[test]
    fn a_components_own_watch_fault_wins_and_an_all_components_setting_replaces_them() {
        let mut sim = cluster();
        let kcm = ComponentId::ControllerManager;
        sim.set_watch_drop(None, 30);
        sim.set_watch_drop(Some(kcm.clone()), 50);
        sim.set_watch_delay(Some(kcm.clone()), Duration::secs(2));
        assert_eq!(sim.watch_fault_for(&kcm), Some(WatchFault { drop_percent: 50, delay: Duration::secs(2) }));
        assert_eq!(sim.watch_fault_for(&ComponentId::Scheduler), Some(WatchFault { drop_percent: 30, delay: Duration::ZERO }));
        sim.set_watch_drop(None, 0);
        assert_eq!(sim.watch_fault_for(&kcm), Some(WatchFault { drop_percent: 0, delay: Duration::secs(2) }), "the delay stays");
        assert_eq!(sim.watch_fault_for(&ComponentId::Scheduler), None);
        sim.set_watch_delay(None, Duration::ZERO);
        assert!(sim.watch_faults().is_empty());
    }

    #[test]
    fn a_stopped_api_server_refuses_at_once_and_a_stopped_etcd_times_out_but_still_serves_watches() {
        let mut sim = cluster();
        sim.latencies.jitter = 0.0;
        let kcm = ComponentId::ControllerManager;
        sim.stop("kube-apiserver").unwrap();
        let (err, wait) = sim.refusal(&kcm, &watch(Kind::Pod)).expect("refused");
        assert_eq!((err.reason, wait), (Reason::ConnectionRefused, Duration::millis(2)));
        sim.start("kube-apiserver").unwrap();
        sim.stop("etcd").unwrap();
        assert!(sim.refusal(&kcm, &watch(Kind::Pod)).is_none(), "served from the watch cache");
        let (err, wait) = sim.refusal(&kcm, &ApiRequest::Get(ObjectKey::new(Kind::Node, "", "node-1"))).expect("fails");
        assert_eq!((err.message.as_str(), wait), ("etcdserver: request timed out", ETCD_REQUEST_TIMEOUT));
        sim.node_partition("node-1").unwrap();
        let kubelet = ComponentId::Kubelet("node-1".into());
        assert_eq!(
            sim.refusal(&kubelet, &watch(Kind::Pod)).map(|(e, w)| (e.reason, w)),
            Some((Reason::NetworkTimeout, PARTITIONED_REQUEST_TIMEOUT))
        );
    }

    #[test]
    fn lifecycle_errors_name_the_problem_and_change_nothing() {
        let mut sim = cluster();
        assert_eq!(sim.start("etcd").unwrap_err(), "etcd is already running");
        assert!(sim.stop("kubectl").unwrap_err().starts_with("unknown component \"kubectl\"; known components: etcd, kube-apiserver,"));
        sim.stop("kube-scheduler").unwrap();
        assert_eq!(sim.stop("kube-scheduler").unwrap_err(), "kube-scheduler is already stopped");
        assert_eq!(sim.restart("kube-scheduler"), Ok(ComponentId::Scheduler), "restart starts a stopped process");
        sim.node_fail("node-1").unwrap();
        assert_eq!(sim.node_partition("node-1").unwrap_err(), "node \"node-1\" is powered off");
        assert_eq!(
            sim.restart("kubelet-node-1").unwrap_err(),
            "node \"node-1\" is powered off; bring it back with: sim node recover node-1"
        );
        assert!(!sim.is_running(&ComponentId::Kubelet("node-1".into())));
        let loops = sim.loops(&ComponentId::Kubelet("node-1".into()));
        assert_eq!((loops[0].last_action.as_str(), loops[0].queue_depth), ("node-1 powered off", 0), "the cut took its memory");
        assert!(sim.machine("node-1").and_then(|m| m.powered_off_at()).is_some());
        assert_eq!(sim.node_recover("node-1"), Ok(NodeFault::PoweredOff));
        assert!(sim.machine("node-1").and_then(|m| m.powered_off_at()).is_none());
        assert!(sim.is_running(&ComponentId::Kubelet("node-1".into())));
        assert!(!sim.has_faults());
    }

    #[test]
    fn a_severed_watch_is_answered_gone_once_so_its_client_re_lists() {
        let mut sim = cluster();
        let kcm = ComponentId::ControllerManager;
        // One per kind its controllers watch: pods, ReplicaSets, Deployments, nodes, leases,
        // Services, EndpointSlices, Jobs, DaemonSets, ReplicationControllers, StatefulSets,
        // ControllerRevisions, PersistentVolumeClaims, PersistentVolumes, StorageClasses,
        // Endpoints, Namespaces, PodDisruptionBudgets, HorizontalPodAutoscalers, CronJobs,
        // ConfigMaps and Secrets (the garbage collector watches every kind that can own or be
        // owned; custom resources once a definition exists).
        assert_eq!(sim.sever_watches_to_relist(Some(&kcm)), 22);
        assert_eq!(sim.open_watches(Some(&kcm)), 0);
        let (err, _) = sim.refusal(&kcm, &watch(Kind::Pod)).expect("gone");
        assert_eq!(err.reason, Reason::Gone);
        assert!(sim.refusal(&kcm, &watch(Kind::Pod)).is_none(), "only once");
        sim.advance(Duration::secs(5));
        assert_eq!(sim.open_watches(Some(&kcm)), 22, "re-listed and watching again");
    }
}
