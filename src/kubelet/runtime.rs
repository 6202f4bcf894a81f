//! The node's container runtime (containerd): sandboxes, containers, the image store and the
//! pod IPs its CNI plugin handed out.
//!
//! This state lives on the machine (`sim::Machine` owns the `Runtime`), not in the kubelet
//! process: containers keep running and images stay cached when the kubelet stops, and a
//! restarted kubelet finds them again by listing the runtime. The kubelet reaches it only through
//! the machine its `Ctx` lends it for a call; faults reach it through the `Sim`. So it is kept apart from the kubelet's in-memory state, which `start`
//! throws away. A container's own fate (a crash after N seconds, its exit after a stop signal) is
//! scheduled here and happens whether or not a kubelet is watching.

use super::images;
use super::prober::ProbeType;
use crate::model::{ObjectKey, Time};
use crate::vec_map::VecMap;
use std::collections::{BTreeMap, BTreeSet};

/// What the runtime says about one container.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ContainerRuntimeState {
    /// Created, not started yet.
    Created,
    Running {
        started_at: Time,
    },
    Exited {
        exit_code: i32,
        reason: String,
        started_at: Option<Time>,
        finished_at: Time,
    },
}

impl ContainerRuntimeState {
    pub fn is_running(&self) -> bool {
        matches!(self, ContainerRuntimeState::Running { .. })
    }
    pub fn is_exited(&self) -> bool {
        matches!(self, ContainerRuntimeState::Exited { .. })
    }
}

/// containerd's reason for an exit code (`Completed` for 0, `Error` otherwise).
pub fn exit_reason(exit_code: i32) -> &'static str {
    if exit_code == 0 {
        "Completed"
    } else {
        "Error"
    }
}

/// An exit the container will make on its own (a crash) or after a stop signal.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PlannedExit {
    pub at: Time,
    pub exit_code: i32,
}

/// One container instance.
#[derive(Clone, Debug, PartialEq)]
pub struct RuntimeContainer {
    /// 64 hex digits; `containerd://<id>` in the pod status.
    pub id: String,
    /// The fully qualified image (`docker.io/library/nginx:1.14.2`).
    pub image: String,
    pub image_id: String,
    pub state: ContainerRuntimeState,
    /// How many instances of this container ran before this one.
    pub restart_count: i32,
    pub planned_exit: Option<PlannedExit>,
}

/// A container name's current instance and the one before it (the pod status's `lastState`).
#[derive(Clone, Debug, PartialEq)]
pub struct ContainerSlot {
    pub current: RuntimeContainer,
    pub previous: Option<RuntimeContainer>,
}

/// A pod sandbox: the pause container holding the pod's network namespace and IP.
#[derive(Clone, Debug, PartialEq)]
pub struct Sandbox {
    pub pod: ObjectKey,
    pub uid: String,
    pub ip: String,
    host_octet: u32,
    /// False once `StopPodSandbox` tore the network down.
    pub ready: bool,
    pub created_at: Time,
    /// By container name. A sorted vector, not a B-tree: a pod has one or a few containers, and a
    /// B-tree leaf holds room for eleven slots, which at thousands of pods per machine was the
    /// kubelet's biggest allocation.
    pub containers: VecMap<String, ContainerSlot>,
}

/// An image in the node's image store.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CachedImage {
    pub name: String,
    pub image_id: String,
    pub size_bytes: u64,
    pub pulled_at: Time,
}

/// A fault injected into a pod's application (`sim crash`): every instance of its containers
/// exits `after` its start with `exit_code`. It belongs to the machine, like the containers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CrashPlan {
    pub after: crate::model::Duration,
    pub exit_code: i32,
}

/// The exit code and reason containerd reports for a container whose task vanished with the
/// machine (power loss): it never saw the exit, so the code is 255 and the reason `Unknown`.
pub const LOST_EXIT_CODE: i32 = 255;
pub const LOST_REASON: &str = "Unknown";

#[derive(Clone, Debug)]
pub struct Runtime {
    // The maps by pod UID or image name hold boxed values: a B-tree is compiled once per
    // key/value layout, and maps from a String to one pointer share that code (issue 4).
    sandboxes: BTreeMap<String, Box<Sandbox>>,
    /// Injected crashes by pod UID.
    crash_plans: BTreeMap<String, Box<CrashPlan>>,
    /// `sim fail-probe`: by pod UID, the probe kinds its application now fails.
    probe_faults: BTreeMap<String, Box<[bool; 3]>>,
    images: BTreeMap<String, Box<CachedImage>>,
    /// The files each pod's containers see through their volume mounts, by pod UID: set up
    /// before the sandbox, kept on the machine (under /var/lib/kubelet/pods) until the pod goes.
    volumes: BTreeMap<String, Box<super::config_manager::MountedFiles>>,
    /// Planned exits by time; an entry is stale when its container no longer plans that exit.
    exits: BTreeSet<(Time, String, String)>,
    /// The node's pod CIDR network address (a /24), for host-local IPAM.
    pod_network: u32,
    /// host-local hands out addresses round-robin after the last one it reserved.
    last_host: u32,
    used_hosts: BTreeSet<u32>,
}

/// The first and last host addresses host-local gives out in a /24 (.1 is the bridge gateway).
const FIRST_HOST: u32 = 2;
const LAST_HOST: u32 = 254;

impl Runtime {
    pub fn new(pod_network: u32) -> Self {
        Runtime {
            sandboxes: BTreeMap::new(),
            crash_plans: BTreeMap::new(),
            probe_faults: BTreeMap::new(),
            images: BTreeMap::new(),
            volumes: BTreeMap::new(),
            exits: BTreeSet::new(),
            pod_network,
            last_host: FIRST_HOST - 1,
            used_hosts: BTreeSet::new(),
        }
    }

    pub fn sandbox(&self, uid: &str) -> Option<&Sandbox> {
        self.sandboxes.get(uid).map(Box::as_ref)
    }
    pub fn sandboxes(&self) -> impl Iterator<Item = &Sandbox> {
        self.sandboxes.values().map(Box::as_ref)
    }
    pub fn sandbox_uids(&self) -> Vec<String> {
        self.sandboxes.keys().cloned().collect()
    }

    /// `RunPodSandbox` with CNI ADD: a new sandbox with the next free pod IP.
    pub fn create_sandbox(&mut self, pod: ObjectKey, uid: &str, now: Time) -> String {
        if let Some(existing) = self.sandboxes.get_mut(uid) {
            if !existing.ready {
                // Set up again after the machine lost it (power loss): its address is taken again.
                existing.ready = true;
                self.used_hosts.insert(existing.host_octet);
            }
            return existing.ip.clone();
        }
        let host = self.allocate_host();
        let ip = ipv4(self.pod_network + host);
        let sandbox = Sandbox {
            pod,
            uid: uid.to_string(),
            ip: ip.clone(),
            host_octet: host,
            ready: true,
            created_at: now,
            containers: VecMap::new(),
        };
        self.sandboxes.insert(uid.to_string(), Box::new(sandbox));
        ip
    }

    /// host-local's round robin: the next address after the last one handed out that is free.
    /// When all 253 are taken (more pods than a /24 holds) it reuses the next one rather than fail.
    fn allocate_host(&mut self) -> u32 {
        let span = LAST_HOST - FIRST_HOST + 1;
        let mut candidate = self.last_host;
        for _ in 0..span {
            candidate = if candidate >= LAST_HOST { FIRST_HOST } else { candidate + 1 };
            if !self.used_hosts.contains(&candidate) {
                break;
            }
        }
        self.last_host = candidate;
        self.used_hosts.insert(candidate);
        candidate
    }

    /// `StopPodSandbox`: the network is torn down and the IP released; the record stays until
    /// the pod is gone, so its exited containers can still be reported.
    pub fn stop_sandbox(&mut self, uid: &str) {
        if let Some(s) = self.sandboxes.get_mut(uid) {
            if s.ready {
                s.ready = false;
                self.used_hosts.remove(&s.host_octet);
            }
        }
    }

    /// Removes the sandbox and its containers (container garbage collection of a deleted pod).
    pub fn remove_sandbox(&mut self, uid: &str) -> bool {
        self.stop_sandbox(uid);
        self.crash_plans.remove(uid);
        self.probe_faults.remove(uid);
        self.volumes.remove(uid);
        self.sandboxes.remove(uid).is_some()
    }

    /// `CreateContainer`: a new instance replaces the previous one, which becomes `previous`.
    pub fn create_container(&mut self, uid: &str, name: &str, image: &str, id: String) -> bool {
        if !self.sandboxes.contains_key(uid) {
            return false;
        }
        let normalized = images::normalize(image);
        // The id is a pure function of the name: reuse the one computed when it was pulled.
        let image_id = match self.images.get(&normalized) {
            Some(cached) => cached.image_id.clone(),
            None => images::image_id(&normalized),
        };
        let Some(sandbox) = self.sandboxes.get_mut(uid) else {
            return false;
        };
        let fresh = |restart_count| RuntimeContainer {
            id,
            image: normalized,
            image_id,
            state: ContainerRuntimeState::Created,
            restart_count,
            planned_exit: None,
        };
        match sandbox.containers.remove(name) {
            Some(slot) if slot.current.state.is_exited() => {
                let count = slot.current.restart_count + 1;
                sandbox.containers.insert(name.to_string(), ContainerSlot { current: fresh(count), previous: Some(slot.current) });
            }
            Some(slot) => {
                // A created container that never started is replaced without counting a restart.
                let count = slot.current.restart_count;
                sandbox.containers.insert(name.to_string(), ContainerSlot { current: fresh(count), previous: slot.previous });
            }
            None => {
                sandbox.containers.insert(name.to_string(), ContainerSlot { current: fresh(0), previous: None });
            }
        }
        true
    }

    /// `StartContainer`, with the exit it will make on its own, if any.
    pub fn start_container(&mut self, uid: &str, name: &str, now: Time, exit: Option<PlannedExit>) -> bool {
        let Some(slot) = self.sandboxes.get_mut(uid).and_then(|s| s.containers.get_mut(name)) else {
            return false;
        };
        slot.current.state = ContainerRuntimeState::Running { started_at: now };
        slot.current.planned_exit = None;
        if let Some(exit) = exit {
            self.plan_exit(uid, name, exit);
        }
        true
    }

    /// Schedules a running container's exit, unless it already plans an earlier one.
    pub fn plan_exit(&mut self, uid: &str, name: &str, exit: PlannedExit) {
        let Some(slot) = self.sandboxes.get_mut(uid).and_then(|s| s.containers.get_mut(name)) else {
            return;
        };
        if !slot.current.state.is_running() || slot.current.planned_exit.is_some_and(|p| p.at <= exit.at) {
            return;
        }
        slot.current.planned_exit = Some(exit);
        self.exits.insert((exit.at, uid.to_string(), name.to_string()));
    }

    /// Removes a container that was created but never started (its pod is being killed).
    pub fn remove_unstarted(&mut self, uid: &str) {
        if let Some(s) = self.sandboxes.get_mut(uid) {
            s.containers.retain(|_, slot| slot.current.state != ContainerRuntimeState::Created || slot.previous.is_some());
        }
    }

    /// Applies every planned exit due by `now`, in time order; returns the pods that changed.
    pub fn advance(&mut self, now: Time) -> Vec<String> {
        let mut changed = Vec::new();
        while let Some((at, uid, name)) = self.exits.first().cloned() {
            if at > now {
                break;
            }
            self.exits.pop_first();
            let Some(slot) = self.sandboxes.get_mut(&uid).and_then(|s| s.containers.get_mut(&name)) else {
                continue;
            };
            let c = &mut slot.current;
            match (c.planned_exit, &c.state) {
                (Some(plan), ContainerRuntimeState::Running { started_at }) if plan.at == at => {
                    c.state = ContainerRuntimeState::Exited {
                        exit_code: plan.exit_code,
                        reason: exit_reason(plan.exit_code).to_string(),
                        started_at: Some(*started_at),
                        finished_at: at,
                    };
                    c.planned_exit = None;
                    if changed.last() != Some(&uid) {
                        changed.push(uid);
                    }
                }
                _ => {}
            }
        }
        changed
    }

    /// The machine loses power: every running container's task is gone (exit 255, `Unknown`),
    /// every sandbox's network with it. The records stay on disk, as containerd's do, so the
    /// kubelet that boots later finds exited containers and restarts them.
    pub fn power_off(&mut self, now: Time) {
        for sandbox in self.sandboxes.values_mut() {
            for slot in sandbox.containers.values_mut() {
                let c = &mut slot.current;
                if let ContainerRuntimeState::Running { started_at } = c.state {
                    c.state = ContainerRuntimeState::Exited {
                        exit_code: LOST_EXIT_CODE,
                        reason: LOST_REASON.to_string(),
                        started_at: Some(started_at),
                        finished_at: now,
                    };
                }
                c.planned_exit = None;
            }
            sandbox.ready = false;
        }
        self.used_hosts.clear();
        self.exits.clear();
    }

    /// Makes every instance of the pod's containers exit `plan.after` its start, from now on.
    pub fn set_crash_plan(&mut self, uid: &str, plan: CrashPlan) {
        self.crash_plans.insert(uid.to_string(), Box::new(plan));
    }
    pub fn crash_plan(&self, uid: &str) -> Option<CrashPlan> {
        self.crash_plans.get(uid).map(|plan| **plan)
    }
    /// Every injected crash, by pod UID.
    pub fn crash_plans(&self) -> impl Iterator<Item = (&String, &CrashPlan)> {
        self.crash_plans.iter().map(|(uid, plan)| (uid, plan.as_ref()))
    }

    /// `sim fail-probe` / `sim pass-probe`: the pod's application fails (or passes again) the
    /// probes of this kind, on the machine, until the pod is removed from it.
    pub fn set_probe_fault(&mut self, uid: &str, kind: ProbeType, failing: bool) {
        let kinds = self.probe_faults.entry(uid.to_string()).or_default();
        kinds[kind as usize] = failing;
        if kinds.iter().all(|k| !k) {
            self.probe_faults.remove(uid);
        }
    }
    pub fn probe_fault(&self, uid: &str, kind: ProbeType) -> bool {
        self.probe_faults.get(uid).is_some_and(|kinds| kinds[kind as usize])
    }
    /// Every probe fault, by pod UID: the kinds that fail.
    pub fn probe_faults(&self) -> impl Iterator<Item = (&String, Vec<ProbeType>)> {
        self.probe_faults.iter().map(|(uid, kinds)| (uid, ProbeType::ALL.into_iter().filter(|k| kinds[*k as usize]).collect()))
    }

    /// The pod's volumes are set up, with these files for each container.
    pub fn set_volumes(&mut self, uid: &str, files: super::config_manager::MountedFiles) {
        self.volumes.insert(uid.to_string(), Box::new(files));
    }
    pub fn has_volumes(&self, uid: &str) -> bool {
        self.volumes.contains_key(uid)
    }
    /// The files a container sees through its volume mounts (none before they are set up).
    pub fn mounted_files(&self, uid: &str, container: &str) -> Option<&BTreeSet<String>> {
        self.volumes.get(uid).and_then(|v| v.get(container))
    }

    /// When the next planned exit happens.
    pub fn next_event(&self) -> Option<Time> {
        self.exits.first().map(|(t, _, _)| *t)
    }

    pub fn has_image(&self, image: &str) -> bool {
        self.images.contains_key(&images::normalize(image))
    }
    pub fn add_image(&mut self, image: &str, now: Time) {
        let name = images::normalize(image);
        // Already present: keep it as it is (first pull time), without hashing its id again.
        if let std::collections::btree_map::Entry::Vacant(slot) = self.images.entry(name) {
            let name = slot.key().clone();
            slot.insert(Box::new(CachedImage {
                image_id: images::image_id(&name),
                size_bytes: images::size_bytes(&name),
                pulled_at: now,
                name,
            }));
        }
    }
    pub fn images(&self) -> impl Iterator<Item = &CachedImage> {
        self.images.values().map(Box::as_ref)
    }

    /// Every container the runtime knows, with its pod: what is really on this machine.
    pub fn containers(&self) -> impl Iterator<Item = (&Sandbox, &str, &RuntimeContainer)> {
        self.sandboxes
            .values()
            .map(Box::as_ref)
            .flat_map(|s| s.containers.iter().map(move |(name, slot)| (s, name.as_str(), &slot.current)))
    }
}

/// Dotted-quad text of an IPv4 address.
pub fn ipv4(addr: u32) -> String {
    let [a, b, c, d] = addr.to_be_bytes();
    format!("{a}.{b}.{c}.{d}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Kind;

    fn key(name: &str) -> ObjectKey {
        ObjectKey::new(Kind::Pod, "default", name)
    }

    #[test]
    fn power_loss_ends_every_task_with_255_and_frees_the_addresses() {
        let mut rt = Runtime::new(u32::from_be_bytes([10, 244, 1, 0]));
        rt.create_sandbox(key("a"), "u1", Time(0));
        rt.create_container("u1", "nginx", "nginx", "c1".into());
        rt.start_container("u1", "nginx", Time(10), Some(PlannedExit { at: Time(5000), exit_code: 1 }));
        rt.power_off(Time(1000));
        let (_, _, c) = rt.containers().next().unwrap();
        assert_eq!(
            c.state,
            ContainerRuntimeState::Exited { exit_code: 255, reason: "Unknown".into(), started_at: Some(Time(10)), finished_at: Time(1000) }
        );
        assert_eq!(rt.next_event(), None, "a dead machine plans nothing");
        assert!(!rt.sandbox("u1").unwrap().ready);
        assert_eq!(rt.create_sandbox(key("a"), "u1", Time(2000)), "10.244.1.2", "set up again with its address");
        assert_eq!(rt.create_sandbox(key("b"), "u2", Time(2000)), "10.244.1.3", "which is taken again");
    }

    #[test]
    fn pod_ips_come_round_robin_from_the_nodes_slash_24() {
        let net = u32::from_be_bytes([10, 244, 1, 0]);
        let mut rt = Runtime::new(net);
        assert_eq!(rt.create_sandbox(key("a"), "u1", Time(0)), "10.244.1.2");
        assert_eq!(rt.create_sandbox(key("b"), "u2", Time(0)), "10.244.1.3");
        rt.remove_sandbox("u1");
        // Round robin: the freed .2 is not reused before the range wraps.
        assert_eq!(rt.create_sandbox(key("c"), "u3", Time(0)), "10.244.1.4");
    }

    #[test]
    fn a_planned_crash_happens_on_time_and_a_restart_counts() {
        let mut rt = Runtime::new(u32::from_be_bytes([10, 244, 1, 0]));
        rt.create_sandbox(key("a"), "u", Time(0));
        assert!(rt.create_container("u", "nginx", "nginx:1.14.2", "c1".into()));
        rt.start_container("u", "nginx", Time(100), Some(PlannedExit { at: Time(30_100), exit_code: 1 }));
        assert_eq!(rt.next_event(), Some(Time(30_100)));
        assert!(rt.advance(Time(30_099)).is_empty());
        assert_eq!(rt.advance(Time(40_000)), vec!["u".to_string()]);
        let slot = &rt.sandbox("u").unwrap().containers.get("nginx").unwrap();
        assert_eq!(
            slot.current.state,
            ContainerRuntimeState::Exited { exit_code: 1, reason: "Error".into(), started_at: Some(Time(100)), finished_at: Time(30_100) }
        );
        rt.create_container("u", "nginx", "nginx:1.14.2", "c2".into());
        let slot = &rt.sandbox("u").unwrap().containers.get("nginx").unwrap();
        assert_eq!(slot.current.restart_count, 1);
        assert_eq!(slot.previous.as_ref().map(|p| p.id.as_str()), Some("c1"));
        assert_eq!(slot.current.image, "docker.io/library/nginx:1.14.2");
    }
}
