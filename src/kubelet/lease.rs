//! The kubelet's heartbeats: registering its Node, posting the node status, renewing its Lease.
//!
//! Two signals tell the control plane a node is alive (KEP-589): the Lease in `kube-node-lease`,
//! renewed every 10 s and cheap to write, and the node status, computed every 10 s but posted only
//! when it changed or every 5 minutes. A stopped kubelet stops both, which is what the node
//! lifecycle controller notices.

use super::timings::{whole_seconds, KubeletTimings};
use super::{addressing, Kubelet, Pending};
use crate::api::{ApiRequest, ApiResponse, ApiResult, Reason};
use crate::model::*;
use crate::runtime::Ctx;
use crate::sim::machine::NodeAddressing;
use std::collections::BTreeMap;
use std::rc::Rc;

pub const LEASE_NAMESPACE: &str = "kube-node-lease";
pub const KUBELET_VERSION: &str = "v1.32.0";
pub const CONTAINER_RUNTIME_VERSION: &str = "containerd://1.7.24";
pub const OS_IMAGE: &str = "Ubuntu 22.04.5 LTS";

/// The lease calls in flight, to route their answers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LeaseCall {
    Get,
    Create,
    Update,
}

/// Node registration (`registerWithAPIServer`).
#[derive(Debug, Default)]
pub struct Registration {
    pub registered: bool,
    pub in_flight: bool,
    pub retry_at: Option<Time>,
    pub backoff: Duration,
    pub node_uid: Option<String>,
}

/// The node lease controller (pkg/kubelet/nodelease via component-helpers/apimachinery/lease).
#[derive(Debug, Default)]
pub struct LeaseState {
    /// The lease as last written or read; renewals update it with its resourceVersion.
    pub latest: Option<Rc<Object>>,
    pub in_flight: bool,
    pub next_at: Option<Time>,
    pub backoff: Duration,
    pub renewals: u64,
}

/// The node status loop (`syncNodeStatus`).
#[derive(Debug, Default)]
pub struct NodeStatusState {
    pub next_at: Option<Time>,
    pub in_flight: bool,
    pub last_report_at: Option<Time>,
    pub last_reported: Option<NodeStatus>,
}

/// The four conditions a healthy kubelet reports, in the order real nodes list them.
const HEALTHY_CONDITIONS: [(&str, &str, &str, &str); 4] = [
    ("MemoryPressure", "False", "KubeletHasSufficientMemory", "kubelet has sufficient memory available"),
    ("DiskPressure", "False", "KubeletHasNoDiskPressure", "kubelet has no disk pressure"),
    ("PIDPressure", "False", "KubeletHasSufficientPID", "kubelet has sufficient PID available"),
    ("Ready", "True", "KubeletReady", "kubelet is posting ready status"),
];

/// A status without its heartbeat times, to tell a real change from a heartbeat.
fn without_heartbeats(s: &NodeStatus) -> NodeStatus {
    let mut s = s.clone();
    for c in &mut s.conditions {
        c.last_heartbeat_time = None;
    }
    s
}

impl Kubelet {
    /// The Node this kubelet registers, with its status as of `now`.
    pub(super) fn node_object(&self, addr: &NodeAddressing, previous: Option<&NodeStatus>, now: Time) -> Node {
        let name = self.config.name.clone();
        let mut labels: BTreeMap<String, String> = BTreeMap::new();
        labels.extend(
            [
                ("beta.kubernetes.io/arch", "amd64"),
                ("beta.kubernetes.io/os", "linux"),
                ("kubernetes.io/arch", "amd64"),
                ("kubernetes.io/hostname", name.as_str()),
                ("kubernetes.io/os", "linux"),
                ("topology.kubernetes.io/zone", self.config.zone.as_str()),
            ]
            .into_iter()
            .map(|(k, v)| (k.to_string(), v.to_string())),
        );
        let mut annotations = BTreeMap::new();
        annotations.insert("volumes.kubernetes.io/controller-managed-attach-detach".to_string(), "true".to_string());
        Node {
            metadata: ObjectMeta { name: name.into(), labels: labels.into(), annotations, ..Default::default() },
            // kube-controller-manager's node IPAM range allocator fills podCIDR(s) in a real
            // cluster just after registration, before the CNI is ready and the node can run a
            // pod; here the Sim hands each machine its /24 in registration order (NodeConfig's
            // `pod_cidr_index`) and the kubelet brings it along.
            spec: NodeSpec { pod_cidr: Some(addr.pod_cidr.clone()), pod_cidrs: vec![addr.pod_cidr.clone()], ..Default::default() },
            status: self.node_status(addr, previous, now),
        }
    }

    /// The node status the setters compute: capacity, conditions, addresses, node info.
    /// `addr` is the machine's: the address the node reports is the one its network holds.
    pub(super) fn node_status(&self, addr: &NodeAddressing, previous: Option<&NodeStatus>, now: Time) -> NodeStatus {
        let now = whole_seconds(now);
        let resources: BTreeMap<String, Quantity> = [
            ("cpu".to_string(), Quantity::new(self.config.cpu.clone())),
            ("memory".to_string(), Quantity::new(self.config.memory.clone())),
            ("pods".to_string(), Quantity::new(self.config.pods.to_string())),
        ]
        .into();
        let conditions = HEALTHY_CONDITIONS
            .iter()
            .map(|(type_, status, reason, message)| {
                let before = previous.and_then(|p| p.conditions.iter().find(|c| c.type_ == *type_));
                let since = match before {
                    Some(b) if b.status == *status => b.last_transition_time,
                    _ => Some(now),
                };
                NodeCondition {
                    type_: type_.to_string(),
                    status: status.to_string(),
                    last_heartbeat_time: Some(now),
                    last_transition_time: since,
                    reason: Some(reason.to_string()),
                    message: Some(message.to_string()),
                }
            })
            .collect();
        NodeStatus {
            capacity: resources.clone(),
            allocatable: resources,
            conditions,
            addresses: vec![
                NodeAddress { type_: "InternalIP".into(), address: addr.node_ip.clone() },
                NodeAddress { type_: "Hostname".into(), address: self.config.name.clone() },
            ],
            node_info: NodeSystemInfo {
                kubelet_version: KUBELET_VERSION.into(),
                container_runtime_version: CONTAINER_RUNTIME_VERSION.into(),
                os_image: OS_IMAGE.into(),
                architecture: "amd64".into(),
                operating_system: "linux".into(),
            }
            .into(),
        }
    }

    pub(super) fn register(&mut self, ctx: &mut Ctx) {
        let node = self.node_object(addressing(ctx), None, ctx.now);
        let id = ctx.send(ApiRequest::Create(Object::Node(node)));
        self.proc.requests.insert(id, Pending::Register);
        self.proc.registration.in_flight = true;
        self.proc.registration.retry_at = None;
    }

    fn registration_failed(&mut self, ctx: &mut Ctx) {
        let r = &mut self.proc.registration;
        r.in_flight = false;
        r.backoff = if r.backoff == Duration::ZERO { self.timings.register_retry_initial } else { r.backoff };
        r.retry_at = Some(ctx.now + r.backoff);
        r.backoff = Duration((r.backoff.0 * 2).min(self.timings.register_retry_max.0));
    }

    pub(super) fn on_register(&mut self, ctx: &mut Ctx, step: Pending, result: ApiResult) {
        match (step, result) {
            (Pending::Register | Pending::RegisterStatus, Ok(ApiResponse::Object(node))) => self.registered(ctx, &node),
            (Pending::Register, Err(e)) if e.reason == Reason::AlreadyExists => {
                // Restarted on a node that exists: read it, then post a fresh status over it.
                let id = ctx.send(ApiRequest::Get(ObjectKey::new(Kind::Node, "", &self.config.name)));
                self.proc.requests.insert(id, Pending::RegisterGet);
            }
            (Pending::RegisterGet, Ok(ApiResponse::Object(existing))) => {
                let Some(node) = existing.as_node() else {
                    return self.registration_failed(ctx);
                };
                self.proc.registration.node_uid = Some(node.metadata.uid.to_string());
                let mut update = node.clone();
                update.metadata.resource_version = 0;
                update.status = self.node_status(addressing(ctx), Some(&node.status), ctx.now);
                let id = ctx.send(ApiRequest::UpdateStatus(Object::Node(update)));
                self.proc.requests.insert(id, Pending::RegisterStatus);
            }
            (Pending::RegisterGet, Err(e)) if e.reason == Reason::NotFound => self.register(ctx),
            _ => self.registration_failed(ctx),
        }
    }

    fn registered(&mut self, ctx: &mut Ctx, node: &Rc<Object>) {
        let r = &mut self.proc.registration;
        r.registered = true;
        r.in_flight = false;
        r.retry_at = None;
        r.backoff = Duration::ZERO;
        r.node_uid = Some(node.meta().uid.to_string());
        if let Some(n) = node.as_node() {
            self.proc.node_status.last_reported = Some(n.status.clone());
        }
        self.proc.node_status.last_report_at = Some(ctx.now);
        self.proc.node_status.next_at = Some(ctx.now + self.heartbeat_period(ctx, self.timings.node_status_update_frequency));
        self.proc.lease.next_at = Some(ctx.now);
        self.note(ctx.now, format!("registered node {}", self.config.name));
    }

    fn heartbeat_period(&self, ctx: &mut Ctx, period: Duration) -> Duration {
        KubeletTimings::jitter_up(ctx.rng, period, 0.04)
    }

    /// `tryUpdateNodeStatus`: post the status if it changed or the report is due.
    pub(super) fn node_status_tick(&mut self, ctx: &mut Ctx) {
        self.proc.node_status.next_at = Some(ctx.now + self.heartbeat_period(ctx, self.timings.node_status_update_frequency));
        if self.proc.node_status.in_flight {
            return;
        }
        let key = ObjectKey::new(Kind::Node, "", &self.config.name);
        let current: Option<NodeStatus> = self.proc.node.get(&key).and_then(|o| o.as_node()).map(|n| n.status.clone());
        let old = current.or_else(|| self.proc.node_status.last_reported.clone());
        let new = self.node_status(addressing(ctx), old.as_ref(), ctx.now);
        let changed = old.as_ref().is_none_or(|o| without_heartbeats(o) != without_heartbeats(&new));
        let due = self.proc.node_status.last_report_at.is_none_or(|t| ctx.now.since(t) >= self.timings.node_status_report_frequency);
        if !changed && !due {
            return;
        }
        let node = Node {
            metadata: ObjectMeta { name: self.config.name.as_str().into(), ..Default::default() },
            spec: NodeSpec::default(),
            status: new.clone(),
        };
        let id = ctx.send(ApiRequest::UpdateStatus(Object::Node(node)));
        self.proc.requests.insert(id, Pending::NodeStatus(Box::new(new)));
        self.proc.node_status.in_flight = true;
    }

    pub(super) fn on_node_status(&mut self, ctx: &mut Ctx, sent: NodeStatus, result: ApiResult) {
        self.proc.node_status.in_flight = false;
        if result.is_ok() {
            self.proc.node_status.last_reported = Some(sent);
            self.proc.node_status.last_report_at = Some(ctx.now);
        }
    }

    fn lease_key(&self) -> ObjectKey {
        ObjectKey::new(Kind::Lease, LEASE_NAMESPACE, &self.config.name)
    }

    /// The lease as this kubelet writes it: held by the node, renewed now, owned by the Node.
    fn renewed_lease(&self, base: Option<&Lease>, now: Time) -> Lease {
        let mut lease = base.cloned().unwrap_or_else(|| Lease {
            metadata: ObjectMeta { name: self.config.name.as_str().into(), namespace: LEASE_NAMESPACE.into(), ..Default::default() },
            spec: LeaseSpec::default(),
        });
        lease.spec.holder_identity = Some(self.config.name.clone());
        lease.spec.lease_duration_seconds = Some(self.timings.lease_duration_seconds);
        lease.spec.renew_time = Some(MicroTime(now));
        // Owned by the Node as it exists now (`setNodeOwnerFunc`): none while it is not seen,
        // added on a later renewal once it is.
        let node_key = ObjectKey::new(Kind::Node, "", &self.config.name);
        let node_uid = self.proc.node.get(&node_key).map(|n| n.meta().uid.clone());
        if lease.metadata.owner_references.is_empty() {
            if let Some(uid) = &node_uid {
                lease.metadata.owner_references = vec![OwnerReference {
                    api_version: "v1".into(),
                    kind: "Node".into(),
                    name: self.config.name.clone(),
                    uid: uid.to_string(),
                    controller: None,
                    block_owner_deletion: None,
                }]
                .into();
            }
        }
        lease
    }

    pub(super) fn lease_tick(&mut self, ctx: &mut Ctx) {
        self.proc.lease.next_at = Some(ctx.now + self.heartbeat_period(ctx, self.timings.lease_renew_interval));
        if !self.proc.lease.in_flight {
            self.lease_call(ctx, if self.proc.lease.latest.is_some() { LeaseCall::Update } else { LeaseCall::Get });
        }
    }

    fn lease_call(&mut self, ctx: &mut Ctx, call: LeaseCall) {
        let request = match call {
            LeaseCall::Get => ApiRequest::Get(self.lease_key()),
            LeaseCall::Create => ApiRequest::Create(Object::Lease(self.renewed_lease(None, ctx.now))),
            LeaseCall::Update => {
                let base = self.proc.lease.latest.as_ref().and_then(|o| o.as_lease());
                ApiRequest::Update(Object::Lease(self.renewed_lease(base, ctx.now)))
            }
        };
        let id = ctx.send(request);
        self.proc.requests.insert(id, Pending::Lease(call));
        self.proc.lease.in_flight = true;
    }

    pub(super) fn on_lease(&mut self, ctx: &mut Ctx, call: LeaseCall, result: ApiResult) {
        self.proc.lease.in_flight = false;
        let reason = result.as_ref().err().map(|e| e.reason);
        match (call, result) {
            (LeaseCall::Get, Ok(ApiResponse::Object(o))) => {
                self.proc.lease.latest = Some(o);
                self.lease_call(ctx, LeaseCall::Update);
            }
            (_, Ok(ApiResponse::Object(o))) => {
                self.proc.lease.latest = Some(o);
                self.proc.lease.backoff = Duration::ZERO;
                self.proc.lease.renewals += 1;
            }
            (LeaseCall::Get | LeaseCall::Update, Err(_)) if reason == Some(Reason::NotFound) => {
                self.proc.lease.latest = None;
                self.lease_call(ctx, LeaseCall::Create);
            }
            (LeaseCall::Create | LeaseCall::Update, Err(_)) if matches!(reason, Some(Reason::AlreadyExists | Reason::Conflict)) => {
                self.proc.lease.latest = None;
                self.lease_call(ctx, LeaseCall::Get);
            }
            _ => self.lease_retry_later(ctx),
        }
    }

    /// `backoffEnsureLease`: 200 ms doubling, never longer than the renew interval.
    fn lease_retry_later(&mut self, ctx: &mut Ctx) {
        let l = &mut self.proc.lease;
        l.backoff = if l.backoff == Duration::ZERO { self.timings.lease_retry_initial } else { l.backoff };
        let at = ctx.now + l.backoff;
        l.backoff = Duration((l.backoff.0 * 2).min(self.timings.lease_renew_interval.0));
        l.next_at = Some(l.next_at.map_or(at, |t| t.min(at)));
    }
}
