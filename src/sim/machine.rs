//! The machines under the processes: what a node holds that outlives any one process on it.
//!
//! A `Machine` is a node's hardware and kernel, owned by the `Sim` (as turmoil and madsim own
//! their hosts): its place on the network (`NodeAddressing`), its container runtime (containerd's
//! sandboxes, containers, images and the pod IPs its CNI plugin handed out, `kubelet::runtime`)
//! and its Service routing table (the kernel's iptables rules, `net::NodeRules`). The node's
//! kubelet and kube-proxy are processes on it: the `Sim` hands them the machine through their
//! `Ctx` for each call, and takes it back. So stopping a process loses only the process's memory,
//! and every fault that hits a node — a power cut, a crashing application, a failing probe —
//! changes the machine, never a component.

use crate::kubelet::images;
use crate::kubelet::network::Answer;
use crate::kubelet::prober::ProbeType;
use crate::kubelet::runtime::{self, CachedImage, ContainerRuntimeState, CrashPlan, PlannedExit, Runtime};
use crate::model::{Kind, ObjectKey, PodSpec, Time};
use crate::net::NodeRules;
use crate::sim::NodeConfig;

/// Where a node sits on the network, derived from its name (and the range allocator's order) so
/// every run agrees.
#[derive(Clone, Debug, PartialEq)]
pub struct NodeAddressing {
    /// The number in the node's name (`node-3` → 3), or a stable hash for names without one.
    pub index: u32,
    /// `InternalIP`: 172.18.0.(index+1), as kind numbers its nodes.
    pub node_ip: String,
    /// The node's /24 of the cluster's pod network, 10.244.(index).0/24 as kubeadm's flannel
    /// layout gives, continuing through 10.0.0.0/8 for very large clusters.
    pub pod_cidr: String,
    pub pod_network: u32,
}

impl NodeAddressing {
    pub fn for_node(name: &str) -> Self {
        Self::with_cidr_index(name, None)
    }

    /// `cidr_index` is the node's place in registration order (the range allocator's); without
    /// one, the number in its name stands in.
    pub fn with_cidr_index(name: &str, cidr_index: Option<u32>) -> Self {
        let digits: String = name.chars().rev().take_while(|c| c.is_ascii_digit()).collect::<Vec<_>>().into_iter().rev().collect();
        let index = digits.parse::<u32>().ok().filter(|n| *n < 1 << 16).unwrap_or_else(|| 100 + (images::fnv1a(name) % 900) as u32);
        let node_ip = runtime::ipv4(u32::from_be_bytes([172, 18, 0, 1]).wrapping_add(index));
        let cidr = cidr_index.unwrap_or(index);
        let pod_network = u32::from_be_bytes([10, 0, 0, 0]) | (u32::from_be_bytes([0, 244, 0, 0]).wrapping_add(cidr << 8) & 0x00ff_ff00);
        NodeAddressing { index, node_ip, pod_cidr: format!("{}/24", runtime::ipv4(pod_network)), pod_network }
    }

    /// Whether `ip` is in this node's pod CIDR (a /24: the first three octets match).
    pub fn holds(&self, ip: &str) -> bool {
        match (ip.rsplit_once('.'), self.pod_cidr.rsplit_once('.')) {
            (Some((network, _)), Some((ours, _))) => network == ours,
            _ => false,
        }
    }
}

/// One node's machine.
#[derive(Debug)]
pub struct Machine {
    node: String,
    addressing: NodeAddressing,
    /// containerd: survives every kubelet restart, and a power cut leaves only what is on disk.
    pub(crate) runtime: Runtime,
    pub(crate) rules: NodeRules,
    /// When the machine last lost power, while it stays off.
    powered_off_at: Option<Time>,
}

impl Machine {
    /// The machine a node's config describes, with an empty runtime and no rules.
    pub fn new(config: &NodeConfig) -> Self {
        let addressing = NodeAddressing::with_cidr_index(&config.name, config.pod_cidr_index);
        let runtime = Runtime::new(addressing.pod_network);
        Machine { node: config.name.clone(), addressing, runtime, rules: NodeRules::default(), powered_off_at: None }
    }

    /// The node this machine is.
    pub fn node(&self) -> &str {
        &self.node
    }
    pub fn addressing(&self) -> &NodeAddressing {
        &self.addressing
    }
    /// The routing table kube-proxy last wrote here.
    pub fn rules(&self) -> &NodeRules {
        &self.rules
    }
    /// The container runtime, as its processes and the views read it.
    pub fn runtime(&self) -> &Runtime {
        &self.runtime
    }

    /// What really runs on this node, by pod: every container the runtime holds, whether or
    /// not any pod in the API server still claims it.
    pub fn running_containers(&self) -> Vec<(ObjectKey, String, ContainerRuntimeState)> {
        self.runtime.containers().map(|(s, name, c)| (s.pod.clone(), name.to_string(), c.state.clone())).collect()
    }

    /// The same, as of `now`: exits the runtime has planned by then (a crash while the kubelet
    /// was stopped, which nobody has asked the runtime about yet) are shown as having happened.
    pub fn containers_at(&self, now: Time) -> Vec<(ObjectKey, String, ContainerRuntimeState)> {
        self.runtime
            .containers()
            .map(|(s, name, c)| {
                let state = match (c.planned_exit, &c.state) {
                    (Some(plan), ContainerRuntimeState::Running { started_at }) if plan.at <= now => ContainerRuntimeState::Exited {
                        exit_code: plan.exit_code,
                        reason: runtime::exit_reason(plan.exit_code).to_string(),
                        started_at: Some(*started_at),
                        finished_at: plan.at,
                    },
                    (_, state) => state.clone(),
                };
                (s.pod.clone(), name.to_string(), state)
            })
            .collect()
    }

    /// Whether `image` is in this node's store (by its normalised name, as a pull decides).
    pub fn has_image(&self, image: &str) -> bool {
        self.runtime.has_image(image)
    }

    /// The images in this node's store.
    pub fn image_cache(&self) -> Vec<CachedImage> {
        self.runtime.images().cloned().collect()
    }

    /// Puts an image in the store before anything runs (a node image with it pre-pulled).
    pub fn preload_image(&mut self, image: &str) {
        self.runtime.add_image(image, Time(0));
    }

    /// When the machine lost power, if it is off.
    pub fn powered_off_at(&self) -> Option<Time> {
        self.powered_off_at
    }

    /// The machine loses power (`sim node fail`): every container is gone, and the kernel's
    /// rules with them. What stays is on disk: images and the exited containers' records.
    pub(crate) fn power_off(&mut self, now: Time) {
        self.runtime.power_off(now);
        self.rules.flush();
        self.powered_off_at = Some(now);
    }

    /// Power comes back: the machine boots with what its disk kept.
    pub(crate) fn power_on(&mut self) {
        self.powered_off_at = None;
    }

    /// `sim crash`: the pod's application fails `plan.after` each start, with `plan.exit_code`;
    /// a container running now fails `plan.after` from now. The plan lives on the machine until
    /// the pod's sandbox is removed.
    pub(crate) fn inject_crash(&mut self, now: Time, uid: &str, plan: CrashPlan) {
        self.runtime.set_crash_plan(uid, plan);
        let running: Vec<String> = self
            .runtime
            .sandbox(uid)
            .map(|s| s.containers.iter().filter(|(_, slot)| slot.current.state.is_running()).map(|(n, _)| n.clone()).collect())
            .unwrap_or_default();
        for name in running {
            self.runtime.plan_exit(uid, &name, PlannedExit { at: now + plan.after, exit_code: plan.exit_code });
        }
    }

    /// `sim fail-probe` / `sim pass-probe`: the pod's application fails (or passes) its probes
    /// of `kind` from now on.
    pub(crate) fn set_probe_fault(&mut self, uid: &str, kind: ProbeType, failing: bool) {
        self.runtime.set_probe_fault(uid, kind, failing);
    }

    /// The probe faults on this node, by pod UID.
    pub fn probe_faults(&self) -> Vec<(String, Vec<ProbeType>)> {
        self.runtime.probe_faults().map(|(uid, kinds)| (uid.clone(), kinds)).collect()
    }

    /// The crashes `sim crash` injected on this node, by pod (name from its sandbox when it has
    /// one, else its UID as the name).
    pub fn injected_crashes(&self) -> Vec<(ObjectKey, CrashPlan)> {
        self.runtime
            .crash_plans()
            .map(|(uid, plan)| {
                let key = self.runtime.sandbox(uid).map(|s| s.pod.clone()).unwrap_or_else(|| ObjectKey::new(Kind::Pod, "", uid));
                (key, *plan)
            })
            .collect()
    }

    /// What a connection to `ip:port` meets on this machine at `now` (`kubelet::network`).
    pub fn answer_connection<'a>(&self, now: Time, ip: &str, port: i64, spec_of: impl Fn(&ObjectKey) -> Option<&'a PodSpec>) -> Answer {
        self.runtime.answer_connection(now, ip, port, spec_of)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Duration;

    fn machine_with_nginx(uid: &str) -> Machine {
        let mut m = Machine::new(&NodeConfig::new("node-1"));
        m.runtime.create_sandbox(ObjectKey::new(Kind::Pod, "default", "web"), uid, Time(0));
        m.runtime.create_container(uid, "nginx", "nginx", "c1".into());
        m.runtime.start_container(uid, "nginx", Time(10), None);
        m
    }

    #[test]
    fn node_addresses_follow_the_node_number() {
        let a = NodeAddressing::for_node("node-1");
        assert_eq!((a.node_ip.as_str(), a.pod_cidr.as_str()), ("172.18.0.2", "10.244.1.0/24"));
        let b = NodeAddressing::for_node("node-300");
        assert_eq!((b.node_ip.as_str(), b.pod_cidr.as_str()), ("172.18.1.45", "10.245.44.0/24"));
        let c = NodeAddressing::for_node("worker");
        assert_eq!(c, NodeAddressing::for_node("worker"), "stable without a number");
        assert!(a.holds("10.244.1.7") && !a.holds("10.244.10.7") && !a.holds("nonsense"));
    }

    #[test]
    fn the_range_allocators_order_gives_the_pod_cidr() {
        let config = NodeConfig { pod_cidr_index: Some(0), ..NodeConfig::new("node-1") };
        let m = Machine::new(&config);
        assert_eq!((m.node(), m.addressing().pod_cidr.as_str()), ("node-1", "10.244.0.0/24"));
        assert_eq!(m.addressing().node_ip, "172.18.0.2", "the node IP still follows the name");
    }

    #[test]
    fn a_power_cut_ends_the_containers_and_is_remembered_until_power_comes_back() {
        let mut m = machine_with_nginx("u1");
        m.power_off(Time(500));
        assert_eq!(m.powered_off_at(), Some(Time(500)));
        assert!(m.running_containers().iter().all(|(_, _, st)| matches!(st, ContainerRuntimeState::Exited { exit_code: 255, .. })));
        assert!(m.rules().iter().next().is_none(), "no kernel rules survive the power cut");
        m.power_on();
        assert_eq!(m.powered_off_at(), None);
    }

    #[test]
    fn an_injected_crash_plans_the_running_containers_exit_and_stays_for_the_next_start() {
        let mut m = machine_with_nginx("u1");
        let plan = CrashPlan { after: Duration::secs(5), exit_code: 3 };
        m.inject_crash(Time(1000), "u1", plan);
        assert_eq!(m.runtime().next_event(), Some(Time(6000)), "what wakes the node's kubelet");
        assert_eq!(m.injected_crashes(), vec![(ObjectKey::new(Kind::Pod, "default", "web"), plan)]);
        let seen = m.containers_at(Time(6000));
        assert!(matches!(seen[0].2, ContainerRuntimeState::Exited { exit_code: 3, .. }), "due exits show before anyone asks");
        assert!(m.running_containers()[0].2.is_running(), "the runtime itself catches up only when asked");
    }
}
