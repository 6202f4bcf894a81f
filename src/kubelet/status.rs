//! The pod status a kubelet reports (`generateAPIPodStatus`) and the status manager that writes
//! it only when it changed.
//!
//! The status is computed from what the runtime says (sandbox, containers) and from why the last
//! sync could not start a container (the reason cache: `ErrImagePull`, `CrashLoopBackOff`), never
//! from what the kubelet meant to do. Phase, conditions and container states follow
//! pkg/kubelet/kubelet_pods.go and pkg/kubelet/status/generate.go; conditions the kubelet does not
//! own (a node lifecycle controller's, a disruption target) are carried over untouched.

use super::prober::Gates;
use super::runtime::{ContainerRuntimeState, ContainerSlot, RuntimeContainer, Sandbox};
use super::timings::whole_seconds;
use crate::model::*;
use crate::runtime::fasthash::FastMap;
use crate::runtime::RequestId;
use std::collections::BTreeSet;

pub const POD_SCHEDULED: &str = "PodScheduled";
pub const POD_READY_TO_START_CONTAINERS: &str = "PodReadyToStartContainers";
pub const INITIALIZED: &str = "Initialized";
pub const READY: &str = "Ready";
pub const CONTAINERS_READY: &str = "ContainersReady";

/// `kubetypes.PodConditionsByKubelet` (with `PodReadyToStartContainers`, on by default).
const KUBELET_CONDITIONS: [&str; 5] = [POD_SCHEDULED, READY, INITIALIZED, CONTAINERS_READY, POD_READY_TO_START_CONTAINERS];

/// Why the last sync did not start a container: the waiting reason and message it shows.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WaitingReason {
    pub reason: String,
    pub message: String,
}

/// Everything the status is computed from.
pub struct StatusInputs<'a> {
    /// The pod as the API server has it (spec, and conditions others own).
    pub pod: &'a Pod,
    pub sandbox: Option<&'a Sandbox>,
    /// The reason cache for this pod, by container name.
    pub reasons: Option<&'a FastMap<String, WaitingReason>>,
    /// The status the kubelet last set (or the API's, if it set none since it started).
    pub old: &'a PodStatus,
    /// The pod's containers are stopped for good (it was deleted): report a terminal phase.
    pub terminal: bool,
    pub host_ip: &'a str,
    pub now: Time,
    /// The prober's gates for a running container (name, instance ID): `None` when the pod
    /// has no probes, and every running container is started and ready.
    pub gates: Option<&'a GatesFn<'a>>,
}

/// The prober's answer for a container name and instance ID.
pub type GatesFn<'a> = dyn Fn(&str, &str) -> Gates + 'a;

/// `generateAPIPodStatus`.
pub fn generate(i: &StatusInputs) -> PodStatus {
    let now = whole_seconds(i.now);
    let deleting = i.pod.metadata.is_deleting() || i.terminal;
    let restart_policy = i.pod.spec.restart_policy.as_deref().unwrap_or("Always");
    let mut statuses: Vec<ContainerStatus> = i
        .pod
        .spec
        .containers
        .iter()
        .map(|c| {
            let slot = i.sandbox.and_then(|s| s.containers.get(&c.name));
            let reason = i.reasons.and_then(|r| r.get(&c.name));
            let mut cs = container_status(c, slot, reason, !deleting, restart_policy);
            if let (Some(gates), true) = (i.gates, cs.state.running.is_some()) {
                let g = gates(&c.name, &cs.container_id);
                (cs.started, cs.ready) = (Some(g.started), g.ready);
            }
            cs
        })
        .collect();
    if i.terminal {
        mark_unknown_containers(&mut statuses);
    }
    let mut phase = pod_phase(&statuses, restart_policy, i.terminal);
    let old_phase = i.old.phase.unwrap_or(PodPhase::Pending);
    let api_phase = i.pod.status.phase.unwrap_or(PodPhase::Pending);
    // Pods never leave a terminal phase, and a terminated pod always gets one (TerminatePod).
    if !is_terminal(phase) {
        if is_terminal(old_phase) {
            phase = old_phase;
        } else if is_terminal(api_phase) {
            phase = api_phase;
        } else if i.terminal {
            phase = PodPhase::Failed;
        }
    }
    let sandbox_ready = i.sandbox.is_some_and(|s| s.ready);
    let conditions = conditions(i.pod, i.old, &statuses, phase, sandbox_ready, now);
    let (reason, message) = if phase == old_phase { (i.old.reason.clone(), i.old.message.clone()) } else { (None, None) };
    PodStatus {
        phase: Some(phase),
        conditions,
        message,
        reason,
        host_ip: Some(i.host_ip.to_string()),
        host_ips: PodIP::list(Some(i.host_ip)),
        // Pod IPs are never taken back once reported, even after the sandbox is gone.
        pod_ip: i.sandbox.map(|s| s.ip.clone()).or_else(|| i.old.pod_ip.clone()),
        pod_ips: PodIP::list(i.sandbox.map(|s| s.ip.as_str()).or(i.old.pod_ip.as_deref())),
        start_time: i.old.start_time.or(Some(now)),
        container_statuses: statuses,
        nominated_node_name: i.pod.status.nominated_node_name.clone(),
    }
}

fn is_terminal(p: PodPhase) -> bool {
    matches!(p, PodPhase::Succeeded | PodPhase::Failed)
}

/// `ShouldContainerBeRestarted` for an exited container under the pod's restart policy.
pub fn restarts(restart_policy: &str, exit_code: i32) -> bool {
    match restart_policy {
        "Never" => false,
        "OnFailure" => exit_code != 0,
        _ => true,
    }
}

fn waiting(reason: &str, message: Option<&str>) -> ContainerState {
    ContainerState {
        waiting: Some(ContainerStateWaiting { reason: Some(reason.into()), message: message.map(Name::from) }),
        ..Default::default()
    }
}

fn terminated_state(c: &RuntimeContainer) -> Option<ContainerState> {
    match &c.state {
        ContainerRuntimeState::Exited { exit_code, reason, started_at, finished_at } => Some(ContainerState {
            terminated: Some(ContainerStateTerminated {
                exit_code: *exit_code,
                reason: Some(reason.as_str().into()),
                message: None,
                started_at: started_at.map(whole_seconds),
                finished_at: Some(whole_seconds(*finished_at)),
            }),
            ..Default::default()
        }),
        _ => None,
    }
}

/// One container's status (`convertToAPIContainerStatuses`).
fn container_status(
    spec: &Container,
    slot: Option<&ContainerSlot>,
    reason: Option<&WaitingReason>,
    may_restart: bool,
    restart_policy: &str,
) -> ContainerStatus {
    let mut cs = ContainerStatus {
        name: spec.name.as_str().into(),
        state: waiting("ContainerCreating", None),
        last_state: ContainerState::default(),
        ready: false,
        restart_count: 0,
        image: spec.image.as_str().into(),
        image_id: Default::default(),
        container_id: Default::default(),
        started: Some(false),
    };
    let needs_start = match slot.map(|s| &s.current.state) {
        None | Some(ContainerRuntimeState::Created) => may_restart,
        Some(ContainerRuntimeState::Running { .. }) => false,
        Some(ContainerRuntimeState::Exited { exit_code, .. }) => may_restart && restarts(restart_policy, *exit_code),
    };
    if let Some(slot) = slot {
        let c = &slot.current;
        cs.image = c.image.as_str().into();
        cs.image_id = c.image_id.as_str().into();
        cs.container_id = format!("containerd://{}", c.id).into();
        cs.restart_count = c.restart_count;
        match &c.state {
            ContainerRuntimeState::Created => {}
            ContainerRuntimeState::Running { started_at } => {
                // Ready and started once running, unless the prober's gates say otherwise.
                cs.state = ContainerState {
                    running: Some(ContainerStateRunning { started_at: Some(whole_seconds(*started_at)) }),
                    ..Default::default()
                };
                cs.ready = true;
                cs.started = Some(true);
            }
            ContainerRuntimeState::Exited { .. } => cs.state = terminated_state(c).unwrap_or_default(),
        }
        if let Some(last) = slot.previous.as_ref().and_then(terminated_state) {
            cs.last_state = last;
        }
    }
    if let Some(r) = reason.filter(|_| needs_start) {
        if cs.state.terminated.is_some() {
            cs.last_state = std::mem::take(&mut cs.state);
        }
        cs.state = waiting(&r.reason, Some(&r.message));
    }
    cs
}

/// The status manager's `TerminatePod`: a container with no final state — one never started
/// (a pod deleted while its image was still pulling) or lost — is reported as terminated with
/// `ContainerStatusUnknown` and exit code 137, "because we do not know whether the container was
/// successful". Upstream skips this only for a pod whose init containers never finished
/// (`hasPodInitialized`); pods here have no init containers, so it always applies. Without it,
/// the final status of a pod deleted mid-creation kept `waiting: ContainerCreating` under a
/// terminal phase, and kubectl (which prints Terminating only for a non-terminal phase) showed
/// the going pod as ContainerCreating again.
fn mark_unknown_containers(statuses: &mut [ContainerStatus]) {
    for s in statuses.iter_mut().filter(|s| s.state.terminated.is_none()) {
        s.state = ContainerState {
            terminated: Some(ContainerStateTerminated {
                exit_code: 137,
                reason: Some("ContainerStatusUnknown".into()),
                message: Some("The container could not be located when the pod was terminated".into()),
                started_at: None,
                finished_at: None,
            }),
            ..Default::default()
        };
        s.ready = false;
        s.started = Some(false);
    }
}

/// `getPhase` for a pod without init containers.
pub fn pod_phase(statuses: &[ContainerStatus], restart_policy: &str, terminal: bool) -> PodPhase {
    let (mut running, mut waiting, mut stopped, mut succeeded) = (0, 0, 0, 0);
    for s in statuses {
        if s.state.running.is_some() {
            running += 1;
        } else if let Some(t) = &s.state.terminated {
            stopped += 1;
            if t.exit_code == 0 {
                succeeded += 1;
            }
        } else if s.last_state.terminated.is_some() {
            stopped += 1;
        } else {
            waiting += 1;
        }
    }
    if waiting > 0 {
        return PodPhase::Pending;
    }
    if running > 0 {
        return PodPhase::Running;
    }
    if stopped == 0 {
        return PodPhase::Pending;
    }
    if terminal {
        return if stopped == succeeded { PodPhase::Succeeded } else { PodPhase::Failed };
    }
    match restart_policy {
        "Always" => PodPhase::Running,
        _ if stopped == succeeded => PodPhase::Succeeded,
        "Never" => PodPhase::Failed,
        _ => PodPhase::Running,
    }
}

/// The kubelet's conditions after everyone else's, in the order a real pod lists them.
fn conditions(
    pod: &Pod,
    old: &PodStatus,
    statuses: &[ContainerStatus],
    phase: PodPhase,
    sandbox_ready: bool,
    now: Time,
) -> Vec<PodCondition> {
    // Sized exactly: the status is kept per pod, and a collected filter plus five pushes would
    // round its room up to eight conditions.
    let others = |c: &&PodCondition| !KUBELET_CONDITIONS.contains(&c.type_.as_str());
    let mut out: Vec<PodCondition> = Vec::with_capacity(pod.status.conditions.iter().filter(others).count() + 5);
    out.extend(pod.status.conditions.iter().filter(others).cloned());
    let truth = |b: bool| if b { "True" } else { "False" };
    let containers_ready = containers_ready(pod, statuses, phase);
    let initialized_reason = (phase == PodPhase::Succeeded).then_some("PodCompleted");
    let fresh = [
        (POD_READY_TO_START_CONTAINERS, truth(sandbox_ready), None, None),
        (INITIALIZED, "True", initialized_reason, None),
        (READY, containers_ready.0, containers_ready.1, containers_ready.2.as_deref()),
        (CONTAINERS_READY, containers_ready.0, containers_ready.1, containers_ready.2.as_deref()),
        (POD_SCHEDULED, "True", None, None),
    ];
    for (type_, status, reason, message) in fresh {
        let before = old.conditions.iter().find(|c| c.type_ == type_).or_else(|| pod.condition(type_));
        let since = match before {
            Some(b) if b.status == status => b.last_transition_time,
            _ => Some(now),
        };
        out.push(PodCondition {
            type_: type_.into(),
            status: status.into(),
            last_probe_time: None,
            last_transition_time: since,
            reason: reason.map(Name::from),
            message: message.map(Name::from),
        });
    }
    out
}

/// `GenerateContainersReadyCondition`: status, reason and message (Ready copies it).
fn containers_ready(pod: &Pod, statuses: &[ContainerStatus], phase: PodPhase) -> (&'static str, Option<&'static str>, Option<String>) {
    match phase {
        PodPhase::Succeeded => return ("False", Some("PodCompleted"), None),
        PodPhase::Failed => return ("False", Some("PodFailed"), None),
        _ => {}
    }
    let unready: Vec<&str> = pod
        .spec
        .containers
        .iter()
        .filter(|c| statuses.iter().find(|s| s.name == c.name).is_none_or(|s| !s.ready))
        .map(|c| c.name.as_str())
        .collect();
    if unready.is_empty() {
        ("True", None, None)
    } else {
        // Go prints a []string as `[a b]`.
        ("False", Some("ContainersNotReady"), Some(format!("containers with unready status: [{}]", unready.join(" "))))
    }
}

fn kubelet_owned(c: &PodCondition) -> bool {
    KUBELET_CONDITIONS.contains(&c.type_.as_str())
}

/// `mergePodStatus`: the kubelet's status, with the conditions others own taken from the API
/// server's copy, so a write never drops a condition someone else set meanwhile.
pub fn merge_for_write(api: &PodStatus, ours: &PodStatus) -> PodStatus {
    // Built field by field (no `..`), so the conditions are copied once and a new status field
    // cannot be left out unnoticed.
    PodStatus {
        phase: ours.phase,
        conditions: merged_conditions(&api.conditions, &ours.conditions),
        message: ours.message.clone(),
        reason: ours.reason.clone(),
        host_ip: ours.host_ip.clone(),
        host_ips: ours.host_ips.clone(),
        pod_ip: ours.pod_ip.clone(),
        pod_ips: ours.pod_ips.clone(),
        start_time: ours.start_time,
        container_statuses: ours.container_statuses.clone(),
        nominated_node_name: ours.nominated_node_name.clone(),
    }
}

/// The API server's conditions the kubelet does not own, then the kubelet's own, in a vector of
/// exactly their number: this status is kept in every version of every pod, and a collected
/// filter would round its room up to eight conditions.
fn merged_conditions(api: &[PodCondition], ours: &[PodCondition]) -> Vec<PodCondition> {
    let theirs = |c: &&PodCondition| !kubelet_owned(c);
    let mine = |c: &&PodCondition| kubelet_owned(c);
    let mut merged = Vec::with_capacity(api.iter().filter(theirs).count() + ours.iter().filter(mine).count());
    merged.extend(api.iter().filter(theirs).chain(ours.iter().filter(mine)).cloned());
    merged
}

/// `isPodStatusByKubeletEqual`: equal in everything the kubelet owns.
pub fn equal_by_kubelet(a: &PodStatus, b: &PodStatus) -> bool {
    let owned = |s: &PodStatus| {
        let mut s = s.clone();
        s.conditions.retain(kubelet_owned);
        s
    };
    owned(a) == owned(b)
}

/// What the status manager knows about one pod.
#[derive(Clone, Debug)]
pub struct StatusEntry {
    pub key: ObjectKey,
    /// The status the kubelet last set.
    pub status: PodStatus,
    /// It differs from what the API server has, as far as the kubelet knows.
    pub dirty: bool,
    pub writing: Option<RequestId>,
    /// Delete the pod once its final status is written (`canBeDeleted`).
    pub delete_when_written: bool,
    pub deleting: Option<RequestId>,
    pub retry_at: Option<Time>,
    /// The resourceVersion of the pod after the kubelet's last acknowledged write: older
    /// watch events are echoes, not someone else's change.
    pub acked_version: u64,
}

impl StatusEntry {
    pub fn is_busy(&self) -> bool {
        self.dirty || self.writing.is_some() || self.deleting.is_some() || self.delete_when_written
    }
}

/// The status manager's cache: one entry per pod the kubelet set a status for.
#[derive(Debug, Default)]
pub struct StatusManager {
    pub entries: FastMap<String, StatusEntry>,
    /// Pods whose status is not yet where it should be (for `is_busy` without a scan).
    pub unsynced: BTreeSet<String>,
    /// Failed writes to try again, by time.
    pub retries: BTreeSet<(Time, String)>,
}

impl StatusManager {
    pub fn cached(&self, uid: &str) -> Option<&PodStatus> {
        self.entries.get(uid).map(|e| &e.status)
    }

    /// `SetPodStatus`: records a freshly generated status; true if it needs writing.
    pub fn set(&mut self, uid: &str, key: &ObjectKey, status: PodStatus, api_status: &PodStatus) -> bool {
        // Looked up before inserting: a pod's every sync passes here, and only its first needs
        // the UID copied into a new entry.
        if !self.entries.contains_key(uid) {
            let entry = StatusEntry {
                key: key.clone(),
                status: api_status.clone(),
                dirty: false,
                writing: None,
                delete_when_written: false,
                deleting: None,
                retry_at: None,
                acked_version: 0,
            };
            self.entries.insert(uid.to_string(), entry);
        }
        let Some(entry) = self.entries.get_mut(uid) else { return false };
        if entry.status != status {
            entry.status = status;
            entry.dirty = true;
        }
        let dirty = entry.dirty;
        self.refresh(uid);
        dirty
    }

    pub fn refresh(&mut self, uid: &str) {
        match self.entries.get(uid) {
            Some(e) if e.is_busy() => {
                if !self.unsynced.contains(uid) {
                    self.unsynced.insert(uid.to_string());
                }
            }
            _ => {
                self.unsynced.remove(uid);
            }
        }
    }

    pub fn forget(&mut self, uid: &str) {
        if let Some(e) = self.entries.remove(uid) {
            if let Some(t) = e.retry_at {
                self.retries.remove(&(t, uid.to_string()));
            }
        }
        self.unsynced.remove(uid);
    }

    pub fn schedule_retry(&mut self, uid: &str, at: Time) {
        let Some(e) = self.entries.get_mut(uid) else {
            return;
        };
        if let Some(old) = e.retry_at.replace(at) {
            self.retries.remove(&(old, uid.to_string()));
        }
        self.retries.insert((at, uid.to_string()));
    }

    /// Pops the retries due by `now`.
    pub fn due_retries(&mut self, now: Time) -> Vec<String> {
        let mut out = Vec::new();
        while let Some((t, uid)) = self.retries.first().cloned() {
            if t > now {
                break;
            }
            self.retries.pop_first();
            if let Some(e) = self.entries.get_mut(&uid) {
                e.retry_at = None;
            }
            out.push(uid);
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn nginx_pod() -> Pod {
        let mut pod = Pod::default();
        pod.metadata.name = "web-abc12".into();
        pod.metadata.namespace = "default".into();
        pod.spec.containers = vec![Container { name: "nginx".into(), image: "nginx:1.14.2".into(), ..Default::default() }].into();
        pod.spec.restart_policy = Some("Always".into());
        pod.status.phase = Some(PodPhase::Pending);
        pod.status.conditions = vec![PodCondition {
            type_: POD_SCHEDULED.into(),
            status: "True".into(),
            last_transition_time: Some(Time(1234)),
            ..Default::default()
        }];
        pod
    }

    fn cond<'a>(s: &'a PodStatus, t: &str) -> &'a PodCondition {
        s.conditions.iter().find(|c| c.type_ == t).unwrap()
    }

    #[test]
    fn a_pod_without_a_sandbox_is_pending_with_container_creating() {
        let pod = nginx_pod();
        let s = generate(&StatusInputs {
            pod: &pod,
            sandbox: None,
            reasons: None,
            old: &pod.status,
            terminal: false,
            host_ip: "172.18.0.2",
            now: Time(5_678),
            gates: None,
        });
        assert_eq!(s.phase, Some(PodPhase::Pending));
        let order: Vec<&str> = s.conditions.iter().map(|c| c.type_.as_str()).collect();
        assert_eq!(order, vec!["PodReadyToStartContainers", "Initialized", "Ready", "ContainersReady", "PodScheduled"]);
        assert_eq!(cond(&s, POD_READY_TO_START_CONTAINERS).status, "False");
        assert_eq!(cond(&s, INITIALIZED).status, "True");
        let ready = cond(&s, READY);
        assert_eq!((ready.status.as_str(), ready.reason.as_deref()), ("False", Some("ContainersNotReady")));
        assert_eq!(ready.message.as_deref(), Some("containers with unready status: [nginx]"));
        assert_eq!(ready.last_transition_time, Some(Time(5_000)), "truncated to whole seconds");
        assert_eq!(cond(&s, POD_SCHEDULED).last_transition_time, Some(Time(1234)), "kept from the binding");
        let c = &s.container_statuses[0];
        assert_eq!(c.state.waiting.as_ref().and_then(|w| w.reason.as_deref()), Some("ContainerCreating"));
        assert_eq!((c.image.as_str(), c.ready, c.started), ("nginx:1.14.2", false, Some(false)));
        assert_eq!((s.host_ip.as_deref(), s.pod_ip.as_deref(), s.start_time), (Some("172.18.0.2"), None, Some(Time(5_000))));
    }

    #[test]
    fn phases_follow_get_phase() {
        let running =
            ContainerStatus { state: ContainerState { running: Some(Default::default()), ..Default::default() }, ..Default::default() };
        let exited = |code| ContainerStatus {
            state: ContainerState {
                terminated: Some(ContainerStateTerminated { exit_code: code, ..Default::default() }),
                ..Default::default()
            },
            ..Default::default()
        };
        assert_eq!(pod_phase(std::slice::from_ref(&running), "Always", false), PodPhase::Running);
        assert_eq!(pod_phase(&[exited(1)], "Always", false), PodPhase::Running);
        assert_eq!(pod_phase(&[exited(0)], "Never", false), PodPhase::Succeeded);
        assert_eq!(pod_phase(&[exited(1)], "Never", false), PodPhase::Failed);
        assert_eq!(pod_phase(&[exited(1)], "OnFailure", false), PodPhase::Running);
        assert_eq!(pod_phase(&[exited(0)], "Always", true), PodPhase::Succeeded);
        assert_eq!(pod_phase(&[exited(0), exited(137)], "Always", true), PodPhase::Failed);
        // A container with no state at all is unknown: the pod is still Pending.
        assert_eq!(pod_phase(&[running, ContainerStatus::default()], "Always", false), PodPhase::Pending);
    }

    #[test]
    fn a_write_keeps_conditions_others_own_and_reconciles_only_what_the_kubelet_owns() {
        let mut ours = nginx_pod().status;
        ours.conditions.push(PodCondition { type_: READY.into(), status: "True".into(), ..Default::default() });
        let mut api = ours.clone();
        let target = PodCondition { type_: "DisruptionTarget".into(), status: "True".into(), ..Default::default() };
        api.conditions.insert(0, target.clone());
        assert!(equal_by_kubelet(&api, &ours), "a condition the kubelet does not own is not its business");
        let merged = merge_for_write(&api, &ours);
        assert_eq!(merged.conditions[0], target);
        assert_eq!(merged.conditions.len(), 3);
        // The node lifecycle controller marks the pod not ready: the kubelet owns Ready.
        for c in api.conditions.iter_mut().filter(|c| c.type_ == READY) {
            c.status = "False".into();
        }
        assert!(!equal_by_kubelet(&api, &ours));
    }

    #[test]
    fn the_status_manager_writes_only_changes() {
        let pod = nginx_pod();
        let key = ObjectKey::new(Kind::Pod, "default", "web-abc12");
        let mut m = StatusManager::default();
        assert!(!m.set("u", &key, pod.status.clone(), &pod.status), "same as the API: nothing to write");
        let mut changed = pod.status.clone();
        changed.phase = Some(PodPhase::Running);
        assert!(m.set("u", &key, changed.clone(), &pod.status));
        assert!(m.unsynced.contains("u"));
        m.entries.get_mut("u").unwrap().dirty = false;
        m.refresh("u");
        assert!(!m.set("u", &key, changed, &pod.status));
        assert!(m.unsynced.is_empty());
    }
}
