//! kube-scheduler driven directly: a real `ApiServer` answers its requests at once and its
//! watches feed it, with no `Sim` and no latencies, so each test controls time exactly.

use super::*;
use crate::api::{ApiError, ApiResponse, ApiServer, DeleteRequest, Reason};
use crate::model::{Container, Event, NodeStatus, ObjectMeta, OwnerReference, Quantity, ResourceRequirements, Taint, Toleration};
use crate::runtime::Effect;
use std::collections::{BTreeSet, VecDeque};

enum Input {
    Response(RequestId, ApiResult),
    Watch(WatchId, WatchEvent),
}

struct Harness {
    api: ApiServer,
    sched: Scheduler,
    rng: Rng,
    next_request: u64,
    now: Time,
    watches: BTreeSet<WatchId>,
    inbox: VecDeque<Input>,
    /// Answer binds with this error instead of serving them.
    fail_binds: Option<ApiError>,
    /// Keep bind answers back (to look at the scheduler while binds are in flight).
    hold_binds: bool,
    held: Vec<Input>,
}

impl Harness {
    fn new() -> Self {
        Self::with(Scheduler::new())
    }

    fn with(sched: Scheduler) -> Self {
        let mut h = Harness {
            api: ApiServer::new(),
            sched,
            rng: Rng::new(7),
            next_request: 0,
            now: Time(0),
            watches: BTreeSet::new(),
            inbox: VecDeque::new(),
            fail_binds: None,
            hold_binds: false,
            held: Vec::new(),
        };
        h.call(|s, ctx| s.start(ctx));
        h.pump();
        h
    }

    fn call(&mut self, f: impl FnOnce(&mut Scheduler, &mut Ctx)) {
        let mut ctx = Ctx::new(self.now, &mut self.rng, &mut self.next_request);
        f(&mut self.sched, &mut ctx);
        for effect in ctx.into_effects() {
            match effect {
                Effect::Request { id, request } => self.serve(id, *request),
                Effect::CloseWatch(w) => self.api.close_watch(w),
                Effect::ProgramRules(_) | Effect::AwaitSharedChange => {}
            }
        }
    }

    fn serve(&mut self, id: RequestId, request: ApiRequest) {
        let is_bind = matches!(request, ApiRequest::Bind { .. });
        if is_bind {
            if let Some(error) = self.fail_binds.clone() {
                self.inbox.push_back(Input::Response(id, Err(error)));
                return;
            }
        }
        let handled = self.api.handle(self.now, &mut self.rng, request);
        if let Ok(ApiResponse::Watching(w)) = &handled.result {
            self.watches.insert(*w);
        }
        let response = Input::Response(id, handled.result);
        if is_bind && self.hold_binds {
            self.held.push(response);
        } else {
            self.inbox.push_back(response);
        }
        self.fan_out(handled.notifications);
    }

    fn fan_out(&mut self, notifications: Vec<(WatchId, WatchEvent)>) {
        for (w, e) in notifications {
            if self.watches.contains(&w) {
                self.inbox.push_back(Input::Watch(w, e));
            }
        }
    }

    /// Delivers everything in flight, polling whenever work is due now.
    fn pump(&mut self) {
        for _ in 0..10_000_000 {
            if let Some(input) = self.inbox.pop_front() {
                match input {
                    Input::Response(id, r) => self.call(|s, c| s.handle_response(c, id, r)),
                    Input::Watch(w, e) => self.call(|s, c| s.handle_watch_event(c, w, e)),
                }
            } else if self.sched.next_wakeup().is_some_and(|t| t <= self.now) {
                self.call(|s, c| s.poll(c));
            } else {
                return;
            }
        }
        panic!("the scheduler never went quiet");
    }

    fn release_binds(&mut self) {
        self.inbox.extend(self.held.drain(..));
        self.pump();
    }

    /// Runs every wake-up up to `t`, then sets the clock there.
    fn advance_to(&mut self, t: Time) {
        while let Some(w) = self.sched.next_wakeup().filter(|w| *w <= t) {
            self.now = self.now.max(w);
            self.call(|s, c| s.poll(c));
            self.pump();
        }
        self.now = t;
        self.pump();
    }

    fn create(&mut self, object: Object) {
        let handled = self.api.handle(self.now, &mut self.rng, ApiRequest::Create(object));
        assert!(handled.result.is_ok(), "create failed: {:?}", handled.result.err());
        self.fan_out(handled.notifications);
        self.pump();
    }

    fn update(&mut self, object: Object) {
        let handled = self.api.handle(self.now, &mut self.rng, ApiRequest::Update(object));
        assert!(handled.result.is_ok(), "update failed: {:?}", handled.result.err());
        self.fan_out(handled.notifications);
        self.pump();
    }

    fn pod(&self, name: &str) -> Pod {
        self.api.get(&pod_key(name)).and_then(|o| o.as_pod().cloned()).expect("pod exists")
    }

    fn node_of(&self, name: &str) -> Option<String> {
        self.pod(name).spec.node_name.clone()
    }

    fn events(&self, reason: &str) -> Vec<Event> {
        self.api.items(Kind::Event, None).filter_map(|o| o.as_event().cloned()).filter(|e| e.reason == reason).collect()
    }

    fn decision(&self, pod: &str) -> &Decision {
        self.sched.last_decision(&pod_key(pod)).expect("a decision")
    }
}

fn pod_key(name: &str) -> ObjectKey {
    ObjectKey::new(Kind::Pod, "default", name)
}

fn node(name: &str, cpu: &str, zone: &str) -> Node {
    let mut n =
        Node { metadata: ObjectMeta { name: name.into(), ..Default::default() }, status: NodeStatus::default(), ..Default::default() };
    n.metadata.labels.insert("kubernetes.io/hostname".into(), name.into());
    n.metadata.labels.insert(plugins::LABEL_ZONE.into(), zone.into());
    for (k, v) in [("cpu", cpu), ("memory", "8Gi"), ("pods", "110")] {
        n.status.allocatable.insert(k.into(), Quantity::new(v));
        n.status.capacity.insert(k.into(), Quantity::new(v));
    }
    n
}

fn pod(name: &str, cpu: Option<&str>) -> Pod {
    let mut requests = std::collections::BTreeMap::new();
    if let Some(cpu) = cpu {
        requests.insert("cpu".to_string(), Quantity::new(cpu));
    }
    let mut p = Pod::default();
    p.metadata.name = name.into();
    p.metadata.namespace = "default".into();
    p.spec.containers = vec![Container {
        name: "nginx".into(),
        image: "nginx:1.14.2".into(),
        resources: ResourceRequirements { requests, ..Default::default() },
        ..Default::default()
    }]
    .into();
    p
}

fn owned(mut p: Pod, rs_uid: &str) -> Pod {
    p.metadata.owner_references = vec![OwnerReference {
        api_version: "apps/v1".into(),
        kind: "ReplicaSet".into(),
        name: "web-7d9f6c".into(),
        uid: rs_uid.into(),
        controller: Some(true),
        block_owner_deletion: Some(true),
    }]
    .into();
    p
}

fn pod_scheduled_condition(p: &Pod) -> Option<(String, Option<String>, Option<String>)> {
    p.condition("PodScheduled")
        .map(|c| (c.status.to_string(), c.reason.as_deref().map(str::to_string), c.message.as_deref().map(str::to_string)))
}

#[test]
fn pods_spread_across_two_equal_nodes() {
    let mut h = Harness::new();
    h.create(Object::Node(node("node-1", "4", "zone-a")));
    h.create(Object::Node(node("node-2", "4", "zone-a")));
    for i in 0..4 {
        h.create(Object::Pod(owned(pod(&format!("web-{i}"), None), "rs-1")));
    }
    let on_1 = (0..4).filter(|i| h.node_of(&format!("web-{i}")).as_deref() == Some("node-1")).count();
    let on_2 = (0..4).filter(|i| h.node_of(&format!("web-{i}")).as_deref() == Some("node-2")).count();
    assert_eq!((on_1, on_2), (2, 2));
    // The first pod saw two empty nodes: TaintToleration 100×3, PodTopologySpread 100×2,
    // LeastAllocated 97 (100m of 4 cores and 200Mi of 8Gi as non-zero defaults), and
    // BalancedAllocation skipped for a best-effort pod: 597 on both, a tie.
    let first = h.decision("web-0");
    for v in &first.nodes {
        let Verdict::Feasible(Some(s)) = &v.verdict else { panic!("both nodes feasible and scored") };
        assert_eq!(s.total, 597);
        assert_eq!(s.get(Plugin::NodeResourcesBalancedAllocation), None);
    }
    // The second pod prefers the empty node: spreading 100 vs 87, LeastAllocated 97 vs 95.
    let second = h.decision("web-1");
    let chosen = second.chosen.clone().expect("chosen");
    assert_eq!(second.chosen_score(), Some(597));
    let other = second.nodes.iter().find(|v| v.node != chosen).expect("other node");
    let Verdict::Feasible(Some(s)) = &other.verdict else { panic!("scored") };
    assert_eq!((s.get(Plugin::PodTopologySpread), s.get(Plugin::NodeResourcesFit), s.total), (Some(87), Some(95), 569));
    let scheduled = h.events("Scheduled");
    assert_eq!(scheduled.len(), 4);
    let e = scheduled.iter().find(|e| e.involved_object.name == "web-0").expect("event for web-0");
    assert_eq!(e.message, format!("Successfully assigned default/web-0 to {}", h.node_of("web-0").unwrap_or_default()));
    assert_eq!((e.source.component.as_str(), e.type_.as_str()), ("default-scheduler", "Normal"));
    let status = &h.sched.loops()[0];
    assert_eq!((status.phase, status.queue_depth, status.turns), (LoopPhase::Idle, 0, 4));
    assert!(status.last_action.starts_with("web-3 → node-"), "{}", status.last_action);
    assert!(!h.sched.is_busy());
}

#[test]
fn a_pod_bigger_than_every_node_fails_with_upstreams_message_and_condition() {
    let mut h = Harness::new();
    for i in 1..=3 {
        h.create(Object::Node(node(&format!("node-{i}"), "4", "zone-a")));
    }
    h.create(Object::Pod(pod("big", Some("8"))));
    let want =
        "0/3 nodes are available: 3 Insufficient cpu. preemption: 0/3 nodes are available: 3 No preemption victims found for incoming pod.";
    let failed = h.events("FailedScheduling");
    assert_eq!(failed.len(), 1);
    assert_eq!((failed[0].message.as_str(), failed[0].type_.as_str(), failed[0].count), (want, "Warning", 1));
    assert_eq!(pod_scheduled_condition(&h.pod("big")), Some(("False".into(), Some("Unschedulable".into()), Some(want.into()))));
    assert_eq!(h.sched.queue_lengths(), (0, 0, 1));
    assert!(!h.sched.is_busy(), "unschedulable pods alone are not work");
    assert_eq!(h.sched.loops()[0].last_action, "big: 0/3 nodes are available: 3 Insufficient cpu");
    // A heartbeat-like node update does not retry it; after 5 minutes it is retried anyway,
    // and the same failure bumps the event's count instead of writing a new event.
    let mut n1 = h.api.get(&ObjectKey::new(Kind::Node, "", "node-1")).and_then(|o| o.as_node().cloned()).expect("node-1");
    n1.metadata.annotations.insert("heartbeat".into(), "1".into());
    h.update(Object::Node(n1));
    assert_eq!(h.decision("big").attempt, 1);
    h.advance_to(Time(300_000));
    assert_eq!(h.decision("big").attempt, 1, "not before 5 minutes");
    h.advance_to(Time(330_000));
    assert_eq!(h.decision("big").attempt, 2, "retried at the 30 s flush after 5 minutes");
    let failed = h.events("FailedScheduling");
    assert_eq!(failed.len(), 1);
    assert_eq!(failed[0].count, 2);
}

#[test]
fn a_cordoned_node_is_skipped_with_its_reason() {
    let mut h = Harness::new();
    let mut cordoned = node("node-1", "4", "zone-a");
    cordoned.spec.unschedulable = true;
    h.create(Object::Node(cordoned));
    h.create(Object::Node(node("node-2", "4", "zone-a")));
    h.create(Object::Pod(pod("web", Some("1"))));
    assert_eq!(h.node_of("web").as_deref(), Some("node-2"));
    assert_eq!(h.decision("web").verdict("node-1"), Some(&Verdict::Rejected(FilterFailure::Unschedulable)));
    h.create(Object::Pod(pod("big", Some("3500m"))));
    assert_eq!(
        h.decision("big").message,
        "0/2 nodes are available: 1 Insufficient cpu, 1 node(s) were unschedulable. \
         preemption: 0/2 nodes are available: 1 No preemption victims found for incoming pod, 1 Preemption is not helpful for scheduling."
    );
    // Uncordoning retries it at once (the NodeUnschedulable hint), and it fits there.
    let mut n1 = h.api.get(&ObjectKey::new(Kind::Node, "", "node-1")).and_then(|o| o.as_node().cloned()).expect("node-1");
    n1.spec.unschedulable = false;
    h.update(Object::Node(n1));
    h.advance_to(Time(1000));
    assert_eq!(h.node_of("big").as_deref(), Some("node-1"));
}

#[test]
fn taints_repel_pods_that_do_not_tolerate_them() {
    let mut h = Harness::new();
    let mut gpu = node("gpu-1", "4", "zone-a");
    gpu.spec.taints = vec![Taint { key: "dedicated".into(), value: "gpu".into(), effect: "NoSchedule".into(), time_added: None }];
    h.create(Object::Node(gpu));
    h.create(Object::Pod(pod("plain", None)));
    assert_eq!(h.node_of("plain"), None);
    assert_eq!(
        h.decision("plain").message,
        "0/1 nodes are available: 1 node(s) had untolerated taint {dedicated: gpu}. preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling."
    );
    let mut tolerant = pod("trainer", None);
    tolerant.spec.tolerations.push(Toleration {
        key: "dedicated".into(),
        operator: Some("Equal".into()),
        value: "gpu".into(),
        effect: "NoSchedule".into(),
        toleration_seconds: None,
    });
    h.create(Object::Pod(tolerant));
    assert_eq!(h.node_of("trainer").as_deref(), Some("gpu-1"));
    // A new untainted node is an event TaintToleration's hint accepts: the plain pod moves.
    h.create(Object::Node(node("node-2", "4", "zone-a")));
    h.advance_to(Time(1000));
    assert_eq!(h.node_of("plain").as_deref(), Some("node-2"));
}

#[test]
fn prefer_no_schedule_taints_lower_the_score_but_do_not_filter() {
    let mut h = Harness::new();
    let mut soft = node("node-1", "4", "zone-a");
    soft.spec.taints = vec![Taint { key: "spot".into(), value: String::new(), effect: "PreferNoSchedule".into(), time_added: None }];
    h.create(Object::Node(soft));
    h.create(Object::Node(node("node-2", "4", "zone-a")));
    h.create(Object::Pod(pod("web", Some("100m"))));
    assert_eq!(h.node_of("web").as_deref(), Some("node-2"));
    let Some(Verdict::Feasible(Some(s))) = h.decision("web").verdict("node-1") else { panic!("node-1 feasible") };
    assert_eq!(s.get(Plugin::TaintToleration), Some(0));
}

#[test]
fn node_selector_picks_matching_nodes_only() {
    let mut h = Harness::new();
    let mut ssd = node("node-ssd", "4", "zone-a");
    ssd.metadata.labels.insert("disktype".into(), "ssd".into());
    h.create(Object::Node(ssd));
    h.create(Object::Node(node("node-hdd", "4", "zone-a")));
    let mut p = pod("db", None);
    p.spec.node_selector.insert("disktype".into(), "ssd".into());
    h.create(Object::Pod(p));
    assert_eq!(h.node_of("db").as_deref(), Some("node-ssd"));
    assert_eq!(h.decision("db").verdict("node-hdd"), Some(&Verdict::Rejected(FilterFailure::NodeAffinity)));
    let mut q = pod("nvme", None);
    q.spec.node_selector.insert("disktype".into(), "nvme".into());
    h.create(Object::Pod(q));
    assert_eq!(
        h.decision("nvme").message,
        "0/2 nodes are available: 2 node(s) didn't match Pod's node affinity/selector. \
         preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling."
    );
}

#[test]
fn assuming_prevents_overcommit_of_pods_decided_back_to_back() {
    let mut h = Harness::new();
    h.create(Object::Node(node("node-1", "4", "zone-a")));
    h.hold_binds = true;
    // Both pods arrive before the scheduler runs, so one poll decides both, before any bind
    // is answered or any watch confirms the first.
    for name in ["a", "b"] {
        let handled = h.api.handle(h.now, &mut h.rng, ApiRequest::Create(Object::Pod(pod(name, Some("3")))));
        h.fan_out(handled.notifications);
    }
    h.pump();
    assert_eq!(h.sched.binds_in_flight(), 1);
    assert_eq!(h.decision("b").message.split(". ").next(), Some("0/1 nodes are available: 1 Insufficient cpu"));
    assert_eq!(h.sched.loops()[0].phase, LoopPhase::Act, "a bind is in flight");
    assert!(h.sched.is_busy());
    assert_eq!(h.sched.node_info("node-1").map(|n| (n.requested.milli_cpu, n.pod_count)), Some((3000, 1)));
    h.release_binds();
    assert_eq!(h.node_of("a").as_deref(), Some("node-1"));
    assert_eq!(h.sched.loops()[0].phase, LoopPhase::Idle);
    // Deleting the bound pod frees the cpu and retries the other (NodeResourcesFit's hint).
    let handled = h.api.handle(
        h.now,
        &mut h.rng,
        ApiRequest::Delete(crate::api::DeleteRequest { key: pod_key("a"), uid: None, grace_period_seconds: Some(0) }),
    );
    assert!(handled.result.is_ok());
    h.fan_out(handled.notifications);
    h.pump();
    h.advance_to(Time(2000));
    assert_eq!(h.node_of("b").as_deref(), Some("node-1"));
}

#[test]
fn percentage_of_nodes_to_score_limits_the_search_and_rotates_the_start() {
    let mut h = Harness::new();
    for i in 0..1000 {
        h.create(Object::Node(node(&format!("node-{i:04}"), "4", "zone-a")));
    }
    h.create(Object::Pod(pod("p1", Some("100m"))));
    let d = h.decision("p1");
    assert_eq!((d.nodes_in_cluster, d.feasible_wanted, d.nodes.len(), d.feasible_count()), (1000, 420, 420, 420));
    assert_eq!(&*d.nodes[0].node, "node-0000");
    h.create(Object::Pod(pod("p2", Some("100m"))));
    assert_eq!(&*h.decision("p2").nodes[0].node, "node-0420", "the next search starts where the last stopped");
}

#[test]
fn with_no_nodes_a_pod_backs_off_one_two_four_eight_then_ten_seconds() {
    let mut h = Harness::new();
    h.create(Object::Pod(pod("web", None)));
    let mut attempts_at = vec![h.decision("web").at.0];
    for _ in 0..6 {
        let next = h.sched.next_wakeup().expect("a retry is due");
        h.advance_to(next);
        attempts_at.push(h.decision("web").at.0);
    }
    assert_eq!(attempts_at, [0, 1000, 3000, 7000, 15_000, 25_000, 35_000]);
    let failed = h.events("FailedScheduling");
    assert_eq!((failed.len(), failed[0].message.as_str(), failed[0].count), (1, "no nodes available to schedule pods", 7));
    assert_eq!(pod_scheduled_condition(&h.pod("web")).and_then(|c| c.1), Some("Unschedulable".into()));
    assert!(h.sched.is_busy(), "a pod in backoffQ is work");
    h.create(Object::Node(node("node-1", "4", "zone-a")));
    h.advance_to(Time(45_000));
    assert_eq!(h.node_of("web").as_deref(), Some("node-1"));
}

#[test]
fn a_failed_bind_is_forgotten_and_retried_after_backoff() {
    let mut h = Harness::new();
    h.create(Object::Node(node("node-1", "4", "zone-a")));
    h.fail_binds = Some(ApiError::new(Reason::InternalError, "etcdserver: request timed out"));
    h.create(Object::Pod(pod("web", Some("1"))));
    assert_eq!(h.sched.node_info("node-1").map(|n| n.pod_count), Some(0), "the assumption is undone");
    let failed = h.events("FailedScheduling");
    assert_eq!(failed[0].message, "running Bind plugin \"DefaultBinder\": etcdserver: request timed out");
    assert_eq!(pod_scheduled_condition(&h.pod("web")).and_then(|c| c.1), Some("SchedulerError".into()));
    assert_eq!(h.sched.queue_lengths(), (0, 1, 0));
    h.fail_binds = None;
    h.advance_to(Time(999));
    assert_eq!(h.node_of("web"), None);
    h.advance_to(Time(1000));
    assert_eq!(h.node_of("web").as_deref(), Some("node-1"));
}

/// A re-list that finds a new, unbound pod in place of a bound one of the same name (a
/// StatefulSet's pod made again while the watch lost the delete and the create) gives one
/// update from bound to pending: the new pod is queued and scheduled, not only the old one
/// dropped from the cache (fault schedule seed 27 left db-0 Pending for good).
#[test]
fn a_pending_pod_relisted_in_place_of_a_bound_one_is_scheduled() {
    let mut h = Harness::new();
    h.create(Object::Node(node("node-1", "4", "zone-a")));
    h.create(Object::Pod(pod("db-0", Some("1"))));
    assert_eq!(h.node_of("db-0").as_deref(), Some("node-1"));
    let old = h.api.get(&pod_key("db-0")).expect("bound").clone();
    // The old pod goes and a new one takes its name, with nothing sent to the scheduler.
    let delete = DeleteRequest { key: pod_key("db-0"), uid: None, grace_period_seconds: Some(0) };
    assert!(h.api.handle(h.now, &mut h.rng, ApiRequest::Delete(delete)).result.is_ok());
    assert!(h.api.handle(h.now, &mut h.rng, ApiRequest::Create(Object::Pod(pod("db-0", Some("1"))))).result.is_ok());
    let new = h.api.get(&pod_key("db-0")).expect("made again").clone();
    assert_ne!(old.meta().uid, new.meta().uid);
    h.call(|s, c| s.on_pod_delta(c.now, &Delta::Updated { old, new }));
    h.pump();
    assert_eq!(h.node_of("db-0").as_deref(), Some("node-1"), "the new incarnation is scheduled");
    assert_eq!(h.sched.node_info("node-1").map(|n| n.pod_count), Some(1));
}

#[test]
fn restart_forgets_everything_and_relists() {
    let mut h = Harness::new();
    h.create(Object::Node(node("node-1", "2", "zone-a")));
    h.create(Object::Pod(pod("a", Some("1500m"))));
    h.create(Object::Pod(pod("b", Some("1"))));
    assert_eq!(h.sched.queue_lengths(), (0, 0, 1));
    h.call(|s, c| s.start(c));
    assert_eq!((h.sched.queue_lengths(), h.sched.loops()[0].turns), ((0, 0, 0), 0));
    assert!(h.sched.last_decision(&pod_key("a")).is_none());
    h.pump();
    // Re-listed: a is in the cache again, so b still does not fit.
    assert_eq!(h.sched.node_info("node-1").map(|n| n.requested.milli_cpu), Some(1500));
    assert_eq!(h.node_of("b"), None);
    assert_eq!(h.decision("b").attempt, 1);
}

#[test]
fn other_schedulers_pods_and_terminal_pods_are_left_alone() {
    let mut h = Harness::new();
    h.create(Object::Node(node("node-1", "1", "zone-a")));
    let mut custom = pod("custom", None);
    custom.spec.scheduler_name = Some("my-scheduler".into());
    h.create(Object::Pod(custom));
    assert_eq!(h.node_of("custom"), None);
    assert!(h.sched.last_decision(&pod_key("custom")).is_none());
    h.create(Object::Pod(pod("job", Some("1"))));
    assert_eq!(h.node_of("job").as_deref(), Some("node-1"));
    h.create(Object::Pod(pod("next", Some("1"))));
    assert_eq!(h.node_of("next"), None);
    // The job finishes: Succeeded pods do not count, and the waiting pod gets its cpu.
    let mut done = h.pod("job");
    done.status.phase = Some(crate::model::PodPhase::Succeeded);
    let handled = h.api.handle(h.now, &mut h.rng, ApiRequest::UpdateStatus(Object::Pod(done)));
    h.fan_out(handled.notifications);
    h.pump();
    h.advance_to(Time(1000));
    assert_eq!(h.node_of("next").as_deref(), Some("node-1"));
}

#[test]
fn decisions_are_bounded() {
    let config = SchedulerConfig { decisions_kept: 3, ..Default::default() };
    let mut h = Harness::with(Scheduler::with_config(config));
    h.create(Object::Node(node("node-1", "4", "zone-a")));
    for i in 0..5 {
        h.create(Object::Pod(pod(&format!("p{i}"), None)));
    }
    let kept: Vec<String> = h.sched.decisions().map(|d| d.pod.name.to_string()).collect();
    assert_eq!(kept, ["p2", "p3", "p4"]);
}

/// 500 nodes in 3 zones and 5,000 pods of 10 ReplicaSets: every pod placed, no node over its
/// cpu, and each ReplicaSet spread evenly across zones. Quick in a debug build because each
/// cycle touches only `numFeasibleNodesToFind` (230) nodes with O(1) work per node.
#[test]
fn five_thousand_pods_on_five_hundred_nodes() {
    let mut h = Harness::new();
    for i in 0..500 {
        h.create(Object::Node(node(&format!("node-{i:03}"), "4", ["zone-a", "zone-b", "zone-c"][i % 3])));
    }
    for i in 0..5000 {
        h.create(Object::Pod(owned(pod(&format!("web-{i}"), Some("250m")), &format!("rs-{}", i % 10))));
    }
    let bound: Vec<Pod> = h.api.items(Kind::Pod, None).filter_map(|o| o.as_pod().cloned()).filter(|p| p.node_name().is_some()).collect();
    assert_eq!(bound.len(), 5000);
    for i in 0..500 {
        let info = h.sched.node_info(&format!("node-{i:03}")).expect("node");
        assert!(info.requested.milli_cpu <= 4000 && info.pod_count <= 16, "node-{i:03} over-committed");
    }
    let zone_of = |node: &str| node[5..].parse::<usize>().map(|i| i % 3).unwrap_or(9);
    let mut per_zone = [0usize; 3];
    for p in bound.iter().filter(|p| p.metadata.owner_references[0].uid == "rs-0") {
        per_zone[zone_of(p.node_name().unwrap_or_default())] += 1;
    }
    assert!(per_zone.iter().all(|n| (160..=174).contains(n)), "rs-0 per zone: {per_zone:?}");
    assert_eq!(h.sched.loops()[0].turns, 5000);
}

/// Wired into the simulation with its latencies and real kubelets: a ReplicaSet's pods are
/// created by the controller manager, spread over both nodes by the scheduler, started by the
/// kubelets, and the cluster settles.
#[test]
fn in_the_simulation_a_replica_set_is_scheduled_and_the_cluster_settles() {
    use crate::sim::{ComponentId, NodeConfig, Sim};
    let mut sim = Sim::new(42);
    sim.check_invariants_every_step();
    if !sim.has_component(&ComponentId::Scheduler) {
        sim.add_component(ComponentId::Scheduler, Scheduler::new());
    }
    for name in ["node-1", "node-2"] {
        assert_eq!(sim.add_node(NodeConfig::new(name)), Ok(()));
    }
    assert!(sim.settle(Duration::secs(30)).is_ok(), "the nodes register");
    let manifest = "apiVersion: apps/v1
kind: ReplicaSet
metadata: {name: web}
spec:
  replicas: 3
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - {name: nginx, image: 'nginx:1.14.2', resources: {requests: {cpu: 100m, memory: 128Mi}}}
";
    let rs = Object::from_json(yaml_serde::from_str(manifest).expect("yaml")).expect("object");
    assert!(sim.submit(ApiRequest::Create(rs)).is_ok());
    assert!(sim.settle(Duration::mins(1)).is_ok(), "settles");
    let pods: Vec<Pod> = sim.objects(Kind::Pod).filter_map(|p| p.as_pod().cloned()).collect();
    assert!(pods.iter().all(|p| p.phase() == crate::model::PodPhase::Running), "all Running");
    let nodes: Vec<String> = pods.iter().filter_map(|p| p.node_name().map(str::to_string)).collect();
    assert_eq!(nodes.len(), 3);
    assert!(nodes.contains(&"node-1".to_string()) && nodes.contains(&"node-2".to_string()), "spread over both nodes: {nodes:?}");
    let scheduled = sim.objects(Kind::Event).filter_map(|e| e.as_event()).filter(|e| e.reason == "Scheduled").count();
    assert_eq!(scheduled, 3);
    assert!(sim.violations().is_empty(), "{:?}", sim.violations());
    let status = &sim.loops(&ComponentId::Scheduler)[0];
    assert_eq!((status.name.as_str(), status.phase, status.queue_depth, status.turns), ("kube-scheduler", LoopPhase::Idle, 0, 3));
}

/// The scale envelope: 5,000 nodes and 150,000 pods. Too slow for a debug build; run it in an
/// optimised one: `cargo test --release --lib scheduler::tests::scale -- --ignored`.
#[test]
#[ignore]
fn scale_five_thousand_nodes_and_150_000_pods() {
    let mut h = Harness::new();
    for i in 0..5000 {
        h.create(Object::Node(node(&format!("node-{i:04}"), "32", ["zone-a", "zone-b", "zone-c"][i % 3])));
    }
    for i in 0..150_000 {
        h.create(Object::Pod(owned(pod(&format!("web-{i}"), Some("100m")), &format!("rs-{}", i % 500))));
    }
    assert_eq!(h.sched.loops()[0].turns, 150_000);
    assert_eq!(h.sched.queue_lengths(), (0, 0, 0));
    let most = (0..5000).filter_map(|i| h.sched.node_info(&format!("node-{i:04}"))).map(|n| n.pod_count).max();
    assert!(most.is_some_and(|m| m <= 110), "max pods per node {most:?}");
}

#[test]
fn the_loop_shows_observe_compare_act_and_idle() {
    let mut h = Harness::new();
    h.create(Object::Node(node("node-1", "4", "zone-a")));
    assert_eq!(h.sched.loops()[0].phase, LoopPhase::Idle);
    h.hold_binds = true;
    let handled = h.api.handle(h.now, &mut h.rng, ApiRequest::Create(Object::Pod(pod("web", None))));
    let ours: Vec<(WatchId, WatchEvent)> = handled.notifications.into_iter().filter(|(w, _)| h.watches.contains(w)).collect();
    for (w, e) in ours {
        h.call(|s, c| s.handle_watch_event(c, w, e));
    }
    assert_eq!(h.sched.loops()[0].phase, LoopPhase::Observe);
    assert_eq!(h.sched.next_wakeup(), Some(h.now), "the informer event asks for a turn now");
    h.call(|s, c| s.poll(c));
    assert_eq!((h.sched.loops()[0].phase, h.sched.is_busy()), (LoopPhase::Act, true));
    h.release_binds();
    assert_eq!((h.sched.loops()[0].phase, h.sched.is_busy()), (LoopPhase::Idle, false));
    assert_eq!(h.sched.loops()[0].last_action, "web → node-1 (the only feasible node)");
}

/// `selectHost` over verdicts (`select_best` on their totals), so a test can
/// name the winner by its verdict.
fn select_host(rng: &mut Rng, nodes: &[NodeVerdict], feasible: &[(usize, u32)]) -> Option<(usize, u32)> {
    let total = |index: usize| match nodes.get(index).map(|v| &v.verdict) {
        Some(Verdict::Feasible(Some(s))) => s.total,
        _ => 0,
    };
    let totals: Vec<i64> = feasible.iter().map(|(index, _)| total(*index)).collect();
    select_best(rng, &totals).and_then(|i| feasible.get(i).copied())
}

#[test]
fn ties_are_broken_at_random_from_the_seed() {
    let scores = NodeScores::new([Some(100), None, Some(50), None, None]);
    let nodes: Vec<NodeVerdict> =
        ["a", "b", "c"].iter().map(|n| NodeVerdict { node: Rc::from(*n), verdict: Verdict::Feasible(Some(scores)) }).collect();
    let feasible = [(0, 0), (1, 1), (2, 2)];
    let mut rng = Rng::new(1);
    let mut wins = [0; 3];
    for _ in 0..3000 {
        if let Some((i, _)) = select_host(&mut rng, &nodes, &feasible) {
            wins[i] += 1;
        }
    }
    assert!(wins.iter().all(|w| (900..1100).contains(w)), "each tied node about a third of the time: {wins:?}");
    let again: Vec<Option<(usize, u32)>> = (0..2).map(|_| select_host(&mut Rng::new(9), &nodes, &feasible)).collect();
    assert_eq!(again[0], again[1], "the same seed picks the same node");
    let better =
        NodeVerdict { node: Rc::from("d"), verdict: Verdict::Feasible(Some(NodeScores::new([Some(100), None, Some(51), None, None]))) };
    let mut with_best = nodes.clone();
    with_best.push(better);
    assert_eq!(select_host(&mut rng, &with_best, &[(0, 0), (1, 1), (3, 3), (2, 2)]), Some((3, 3)));
}
