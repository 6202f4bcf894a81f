//! Tests that drive one kubelet directly: a `Ctx` per call, the real API server answering its
//! requests after a fixed 2 ms, and its watch notifications delivered 2 ms after each write.

use super::pod_worker::ANNOTATION_IGNORE_SIGTERM;
use super::*;
use crate::api::{ApiRequest, ApiServer, DeleteRequest, Handled};
use crate::rng::Rng;
use crate::runtime::Effect;
use crate::sim::machine::Machine;
use std::collections::BTreeMap;

const HOP: Duration = Duration::millis(2);

enum Delivery {
    Response(RequestId, ApiResult),
    Watch(WatchId, WatchEvent),
}

struct Harness {
    k: Kubelet,
    /// The node's machine, lent to the kubelet for each call as the Sim lends it.
    machine: Machine,
    api: ApiServer,
    rng: Rng,
    counter: u64,
    now: Time,
    seq: u64,
    queue: BTreeMap<(Time, u64), Delivery>,
    /// Every request the kubelet sent, with when.
    sent: Vec<(Time, ApiRequest)>,
    running: bool,
}

impl Harness {
    fn new(k: Kubelet) -> Self {
        let mut h = Harness {
            machine: Machine::new(k.config()),
            k,
            api: ApiServer::new(),
            rng: Rng::new(42),
            counter: 0,
            now: Time(0),
            seq: 0,
            queue: BTreeMap::new(),
            sent: Vec::new(),
            running: false,
        };
        h.start();
        h
    }

    fn node1() -> Self {
        Self::new(Kubelet::new(NodeConfig::new("node-1")))
    }

    /// Exact timings: no jitter anywhere, so durations can be asserted to the millisecond.
    fn exact() -> Self {
        let t = KubeletTimings { jitter: 0.0, image_pull_jitter: 0.0, ..Default::default() };
        Self::new(Kubelet::with_timings(NodeConfig::new("node-1"), t))
    }

    fn call(&mut self, f: impl FnOnce(&mut Kubelet, &mut Ctx)) {
        let mut ctx = Ctx::new(self.now, &mut self.rng, &mut self.counter).on_machine(&mut self.machine);
        f(&mut self.k, &mut ctx);
        for effect in ctx.into_effects() {
            match effect {
                Effect::Request { id, request } => {
                    // (Works whether the effect carries the request boxed or not.)
                    let request: ApiRequest = ApiRequest::clone(&request);
                    self.sent.push((self.now, request.clone()));
                    let handled = self.api.handle(self.now, &mut self.rng, request);
                    self.push(self.now + HOP, Delivery::Response(id, handled.result.clone()));
                    self.notify(handled);
                }
                Effect::CloseWatch(w) => self.api.close_watch(w),
                Effect::ProgramRules(_) | Effect::AwaitSharedChange => {}
            }
        }
    }

    fn push(&mut self, at: Time, d: Delivery) {
        self.seq += 1;
        self.queue.insert((at, self.seq), d);
    }

    fn notify(&mut self, handled: Handled) {
        for (w, e) in handled.notifications {
            self.push(self.now + HOP, Delivery::Watch(w, e));
        }
    }

    fn start(&mut self) {
        self.running = true;
        self.call(|k, ctx| k.start(ctx));
    }

    /// The kubelet process dies: nothing more reaches it, its watches end.
    fn stop(&mut self) {
        self.running = false;
        for w in self.api.open_watch_ids() {
            self.api.close_watch(w);
        }
        self.queue.clear();
    }

    fn run_until(&mut self, until: Time) {
        for _ in 0..1_000_000 {
            let queued = self.queue.keys().next().map(|(t, _)| *t);
            // The kubelet's own timers, and its machine's next container event (as the Sim wakes it).
            let wake = if self.running { self.k.next_wakeup().into_iter().chain(self.machine.runtime().next_event()).min() } else { None };
            let next = [queued, wake].into_iter().flatten().min();
            let Some(t) = next.filter(|t| *t <= until) else {
                break;
            };
            self.now = self.now.max(t);
            if queued == Some(t) {
                let key = *self.queue.keys().next().expect("queued");
                let delivery = self.queue.remove(&key).expect("queued");
                if !self.running {
                    continue;
                }
                match delivery {
                    Delivery::Response(id, r) => self.call(|k, ctx| k.handle_response(ctx, id, r)),
                    Delivery::Watch(w, e) => {
                        if self.api.is_watch_open(w) {
                            self.call(|k, ctx| k.handle_watch_event(ctx, w, e));
                        }
                    }
                }
            } else {
                self.call(|k, ctx| k.poll(ctx));
            }
        }
        self.now = self.now.max(until);
    }

    fn advance(&mut self, d: Duration) {
        self.run_until(self.now + d);
    }

    /// A request from someone else (kubectl, the scheduler), served now.
    fn user(&mut self, request: ApiRequest) -> ApiResult {
        let handled = self.api.handle(self.now, &mut self.rng, request);
        let result = handled.result.clone();
        self.notify(handled);
        result
    }

    /// Creates a pod and binds it to node-1, as the scheduler would.
    fn bind_pod(&mut self, name: &str, image: &str, annotations: &[(&str, &str)]) -> Pod {
        let mut pod = Pod::default();
        pod.metadata.name = name.into();
        pod.metadata.namespace = "default".into();
        pod.metadata.annotations = annotations.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        pod.spec.containers = vec![Container { name: "nginx".into(), image: image.into(), ..Default::default() }].into();
        self.user(ApiRequest::Create(Object::Pod(pod))).expect("pod created");
        let key = ObjectKey::new(Kind::Pod, "default", name);
        self.user(ApiRequest::Bind { pod: key, node: "node-1".into() }).expect("pod bound");
        self.pod(name)
    }

    fn pod(&self, name: &str) -> Pod {
        self.api.get(&ObjectKey::new(Kind::Pod, "default", name)).and_then(|o| o.as_pod().cloned()).expect("pod exists")
    }

    fn pod_gone(&self, name: &str) -> bool {
        self.api.get(&ObjectKey::new(Kind::Pod, "default", name)).is_none()
    }

    /// (time, reason, message) of every event the kubelet recorded about `pod`, in order.
    fn events(&self, pod: &str) -> Vec<(Time, String, String)> {
        self.sent
            .iter()
            .filter_map(|(t, r)| match r {
                ApiRequest::Create(Object::Event(e)) | ApiRequest::Update(Object::Event(e)) if e.involved_object.name == pod => {
                    Some((*t, e.reason.to_string(), e.message.to_string()))
                }
                _ => None,
            })
            .collect()
    }

    fn reasons(&self, pod: &str) -> Vec<String> {
        self.events(pod).into_iter().map(|(_, r, _)| r).collect()
    }

    fn event_time(&self, pod: &str, reason: &str) -> Time {
        self.events(pod).into_iter().find(|(_, r, _)| r == reason).map(|(t, _, _)| t).expect("event recorded")
    }

    /// Status writes for a pod, in order: (time, status).
    fn status_writes(&self, pod: &str) -> Vec<(Time, PodStatus)> {
        self.sent
            .iter()
            .filter_map(|(t, r)| match r {
                ApiRequest::UpdateStatus(Object::Pod(p)) if p.metadata.name == pod => Some((*t, p.status.clone())),
                _ => None,
            })
            .collect()
    }

    /// Advances until the pod's API status satisfies `f`, at most `limit`; returns when.
    fn wait_for(&mut self, name: &str, limit: Duration, f: impl Fn(&Pod) -> bool) -> Time {
        let deadline = self.now + limit;
        while self.now < deadline {
            if self.api.get(&ObjectKey::new(Kind::Pod, "default", name)).and_then(|o| o.as_pod()).is_some_and(&f) {
                return self.now;
            }
            self.advance(Duration::millis(10));
        }
        panic!("pod {name} never reached the expected state within {limit}");
    }
}

fn waiting_reason(p: &Pod) -> Option<String> {
    p.status.container_statuses.first()?.state.waiting.as_ref()?.reason.as_deref().map(str::to_string)
}
fn is_running(p: &Pod) -> bool {
    p.status.phase == Some(PodPhase::Running) && p.status.container_statuses.first().is_some_and(|c| c.state.running.is_some())
}
fn condition<'a>(p: &'a Pod, t: &str) -> &'a PodCondition {
    p.condition(t).expect("condition present")
}

#[test]
fn registration_creates_the_node_with_labels_capacity_conditions_and_addresses() {
    let mut h = Harness::node1();
    h.advance(Duration::millis(100));
    assert!(h.k.is_registered());
    let node = h.api.get(&ObjectKey::new(Kind::Node, "", "node-1")).and_then(|o| o.as_node().cloned()).expect("node registered");
    let label = |k: &str| node.metadata.labels.get(k).map(String::as_str);
    assert_eq!(label("kubernetes.io/hostname"), Some("node-1"));
    assert_eq!(label("kubernetes.io/os"), Some("linux"));
    assert_eq!(label("kubernetes.io/arch"), Some("amd64"));
    assert_eq!(label("topology.kubernetes.io/zone"), Some("zone-a"));
    let q = |m: &BTreeMap<String, Quantity>, k: &str| m.get(k).map(|q| q.0.clone());
    for m in [&node.status.capacity, &node.status.allocatable] {
        assert_eq!((q(m, "cpu"), q(m, "memory"), q(m, "pods")), (Some("4".into()), Some("8Gi".into()), Some("110".into())));
    }
    let conds: Vec<(&str, &str, &str)> =
        node.status.conditions.iter().map(|c| (c.type_.as_str(), c.status.as_str(), c.reason.as_deref().unwrap_or_default())).collect();
    assert_eq!(
        conds,
        vec![
            ("MemoryPressure", "False", "KubeletHasSufficientMemory"),
            ("DiskPressure", "False", "KubeletHasNoDiskPressure"),
            ("PIDPressure", "False", "KubeletHasSufficientPID"),
            ("Ready", "True", "KubeletReady"),
        ]
    );
    assert_eq!(node.condition("Ready").and_then(|c| c.message.as_deref()), Some("kubelet is posting ready status"));
    assert_eq!(node.status.node_info.kubelet_version, "v1.32.0");
    assert_eq!(node.status.addresses[0].type_, "InternalIP");
    assert_eq!(node.status.addresses[0].address, "172.18.0.2");
    assert_eq!(node.spec.pod_cidr.as_deref(), Some("10.244.1.0/24"));
    assert_eq!(node.allocatable().milli_cpu, 4000);
}

#[test]
fn a_restarted_kubelet_finds_its_node_and_posts_its_status_instead() {
    let mut h = Harness::node1();
    h.advance(Duration::secs(1));
    let uid = h.api.get(&ObjectKey::new(Kind::Node, "", "node-1")).map(|o| o.meta().uid.clone()).expect("node");
    h.stop();
    h.advance(Duration::secs(60));
    h.sent.clear();
    h.start();
    h.advance(Duration::millis(100));
    assert!(h.k.is_registered());
    let verbs: Vec<&str> = h.sent.iter().filter(|(_, r)| r.target() == "node/node-1").map(|(_, r)| r.verb()).collect();
    assert_eq!(verbs, vec!["create", "get", "update-status"], "AlreadyExists, then read it and post its status");
    let node = h.api.get(&ObjectKey::new(Kind::Node, "", "node-1")).and_then(|o| o.as_node().cloned()).expect("node");
    assert_eq!(node.metadata.uid, uid, "the same Node object");
    let ready = node.condition("Ready").expect("ready");
    assert_eq!(ready.last_heartbeat_time, Some(Time(61_000)));
    assert_eq!(ready.last_transition_time, Some(Time(0)), "Ready stayed True: no transition");
}

#[test]
fn the_lease_is_renewed_every_10s_with_a_40s_duration() {
    let mut h = Harness::node1();
    h.advance(Duration::secs(65));
    let lease = h.api.get(&ObjectKey::new(Kind::Lease, "kube-node-lease", "node-1")).and_then(|o| o.as_lease().cloned()).expect("lease");
    assert_eq!(lease.spec.holder_identity.as_deref(), Some("node-1"));
    assert_eq!(lease.spec.lease_duration_seconds, Some(40));
    assert_eq!(lease.metadata.owner_references.first().map(|o| o.kind.as_str()), Some("Node"));
    let writes: Vec<Time> = h
        .sent
        .iter()
        .filter(|(_, r)| matches!(r, ApiRequest::Create(Object::Lease(_)) | ApiRequest::Update(Object::Lease(_))))
        .map(|(t, _)| *t)
        .collect();
    assert_eq!(writes.len(), 7, "created at registration, renewed 6 times in 65 s: {writes:?}");
    for pair in writes.windows(2) {
        let gap = pair[1].since(pair[0]).0;
        assert!((10_000..=10_400).contains(&gap), "renewal every 10 s (+4% jitter), got {gap} ms");
    }
    let renewed = lease.spec.renew_time.map(|m| m.0).expect("renewTime");
    assert_eq!(renewed, *writes.last().expect("writes"));
    assert!(!h.k.is_busy(), "heartbeats are not work");
}

#[test]
fn node_status_is_posted_only_on_change_or_every_5_minutes() {
    let mut h = Harness::node1();
    h.advance(Duration::mins(11));
    let posts: Vec<Time> = h.sent.iter().filter(|(_, r)| matches!(r, ApiRequest::UpdateStatus(Object::Node(_)))).map(|(t, _)| *t).collect();
    assert_eq!(posts.len(), 2, "nothing changed: one report per 5 minutes: {posts:?}");
    assert!(posts[0].0 >= 300_000 && posts[0].0 < 311_000, "{posts:?}");
    // Someone marks the node NotReady (as the node lifecycle controller would): the next
    // 10 s tick sees the difference and posts Ready=True again.
    let key = ObjectKey::new(Kind::Node, "", "node-1");
    let mut node = h.api.get(&key).and_then(|o| o.as_node().cloned()).expect("node");
    for c in node.status.conditions.iter_mut().filter(|c| c.type_ == "Ready") {
        c.status = "Unknown".into();
        c.reason = Some("NodeStatusUnknown".into());
    }
    node.metadata.resource_version = 0;
    h.user(ApiRequest::UpdateStatus(Object::Node(node))).expect("updated");
    let before = h.sent.len();
    h.advance(Duration::millis(10_500));
    let again = h.sent[before..].iter().filter(|(_, r)| matches!(r, ApiRequest::UpdateStatus(Object::Node(_)))).count();
    assert_eq!(again, 1);
    let node = h.api.get(&key).and_then(|o| o.as_node().cloned()).expect("node");
    assert_eq!(node.ready_status(), "True");
}

#[test]
fn a_new_image_is_pulled_then_the_container_created_and_started_in_order() {
    let mut h = Harness::exact();
    h.advance(Duration::millis(50));
    h.bind_pod("web-abc12", "nginx:1.14.2", &[]);
    let bound_at = h.now;
    h.advance(Duration::secs(5));
    let events = h.events("web-abc12");
    let got: Vec<(&str, &str)> = events.iter().map(|(_, r, m)| (r.as_str(), m.as_str())).collect();
    let size = images::size_bytes("docker.io/library/nginx:1.14.2");
    let pulled = format!("Successfully pulled image \"nginx:1.14.2\" in 2.5s (2.5s including waiting). Image size: {size} bytes.");
    assert_eq!(
        got,
        vec![
            ("Pulling", "Pulling image \"nginx:1.14.2\""),
            ("Pulled", pulled.as_str()),
            ("Created", "Created container: nginx"),
            ("Started", "Started container nginx"),
        ]
    );
    // Watch delivery 2 ms, sandbox 400 ms, pull 2.5 s, create 50 ms, start 100 ms.
    let at = |i: usize| events[i].0.since(bound_at).0;
    assert_eq!((at(0), at(1), at(2), at(3)), (402, 2902, 2952, 3052));
    let Some(ApiRequest::Create(Object::Event(e))) =
        h.sent.iter().map(|(_, r)| r).find(|r| matches!(r, ApiRequest::Create(Object::Event(_))))
    else {
        panic!("an event was created")
    };
    assert_eq!((e.source.component.as_str(), e.source.host.as_str()), ("kubelet", "node-1"));
    assert_eq!(e.involved_object.field_path, "spec.containers{nginx}");
    assert_eq!((e.involved_object.kind.as_str(), e.type_.as_str()), ("Pod", "Normal"));
    assert_eq!(h.machine.image_cache().iter().map(|i| i.name.as_str()).collect::<Vec<_>>(), vec!["docker.io/library/nginx:1.14.2"]);
}

#[test]
fn a_cached_image_is_already_present_and_the_pod_runs_within_about_a_second() {
    let mut h = Harness::node1();
    h.machine.preload_image("nginx:1.14.2");
    h.advance(Duration::millis(50));
    h.bind_pod("web-abc12", "nginx:1.14.2", &[]);
    let bound_at = h.now;
    let running_at = h.wait_for("web-abc12", Duration::secs(5), is_running);
    assert_eq!(h.reasons("web-abc12"), vec!["Pulled", "Created", "Started"]);
    assert_eq!(h.events("web-abc12")[0].2, "Container image \"nginx:1.14.2\" already present on machine");
    let started = h.event_time("web-abc12", "Started").since(bound_at).0;
    assert!((300..=800).contains(&started), "sandbox ~400 ms, create ~50, start ~100: {started} ms");
    let running = running_at.since(bound_at).0;
    assert!(running > started && running <= started + 1_020, "Running at the next PLEG relist: {started} → {running} ms");
}

#[test]
fn status_goes_from_container_creating_to_running_with_the_exact_conditions() {
    let mut h = Harness::exact();
    h.advance(Duration::millis(50));
    let created = h.bind_pod("web-abc12", "nginx:1.14.2", &[]);
    let scheduled_at = condition(&created, "PodScheduled").last_transition_time;
    h.advance(Duration::millis(100));
    let p = h.pod("web-abc12");
    assert_eq!(p.status.phase, Some(PodPhase::Pending));
    assert_eq!(waiting_reason(&p).as_deref(), Some("ContainerCreating"));
    let types: Vec<(&str, &str)> = p.status.conditions.iter().map(|c| (c.type_.as_str(), c.status.as_str())).collect();
    assert_eq!(
        types,
        vec![
            ("PodReadyToStartContainers", "False"),
            ("Initialized", "True"),
            ("Ready", "False"),
            ("ContainersReady", "False"),
            ("PodScheduled", "True")
        ]
    );
    let ready = condition(&p, "Ready");
    assert_eq!(ready.reason.as_deref(), Some("ContainersNotReady"));
    assert_eq!(ready.message.as_deref(), Some("containers with unready status: [nginx]"));
    assert_eq!(condition(&p, "PodScheduled").last_transition_time, scheduled_at, "PodScheduled kept from the binding");
    assert_eq!(p.status.host_ip.as_deref(), Some("172.18.0.2"));
    assert_eq!(p.status.pod_ip, None, "no sandbox yet");
    assert!(p.status.start_time.is_some());
    assert_eq!(p.status.container_statuses[0].image, "nginx:1.14.2");

    let running_at = h.wait_for("web-abc12", Duration::secs(10), is_running);
    let started_at = h.event_time("web-abc12", "Started");
    let delay = running_at.since(started_at).0;
    assert!(delay <= 1_010, "the PLEG relist reports it within a second: {delay} ms");
    let p = h.pod("web-abc12");
    let all_true = p.status.conditions.iter().all(|c| c.status == "True" && c.reason.is_none() && c.message.is_none());
    assert!(all_true, "{:?}", p.status.conditions);
    assert_eq!(p.status.pod_ip.as_deref(), Some("10.244.1.2"));
    let c = &p.status.container_statuses[0];
    assert!(c.ready && c.started == Some(true) && c.restart_count == 0);
    assert_eq!(c.image, "docker.io/library/nginx:1.14.2");
    assert!(c.image_id.starts_with("docker.io/library/nginx@sha256:"));
    assert!(c.container_id.starts_with("containerd://") && c.container_id.len() == 13 + 64);
    let started = c.state.running.as_ref().and_then(|r| r.started_at).expect("startedAt");
    assert_eq!(started, Time(started_at.0 / 1000 * 1000), "whole seconds, as metav1.Time");
    let ready_since = condition(&p, "Ready").last_transition_time.expect("ready time");
    assert_eq!(ready_since, Time(running_at.0.saturating_sub(2) / 1000 * 1000), "what minReadySeconds counts from");
    // Exactly two writes: Pending at the first sync, Running after the relist.
    let writes = h.status_writes("web-abc12");
    let phases: Vec<Option<PodPhase>> = writes.iter().map(|(_, s)| s.phase).collect();
    assert_eq!(phases, vec![Some(PodPhase::Pending), Some(PodPhase::Running)]);
    h.advance(Duration::secs(30));
    assert_eq!(h.status_writes("web-abc12").len(), 2, "nothing changed, nothing written");
    assert!(!h.k.is_busy());
}

#[test]
fn serialized_pulls_make_the_second_pod_wait_and_say_so() {
    let mut h = Harness::exact();
    h.advance(Duration::millis(50));
    h.bind_pod("web-a", "nginx:1.14.2", &[]);
    h.bind_pod("web-b", "nginx:1.14.2", &[]);
    h.advance(Duration::secs(6));
    let size = images::size_bytes("docker.io/library/nginx:1.14.2");
    let pulled = |p: &str| h.events(p).into_iter().find(|(_, r, _)| r == "Pulled").map(|(_, _, m)| m).expect("pulled");
    let mut messages = vec![pulled("web-a"), pulled("web-b")];
    messages.sort();
    // One pulled for real; the other waited its turn, then only fetched the manifest of an
    // image that was by then present.
    assert_eq!(
        messages,
        vec![
            format!("Successfully pulled image \"nginx:1.14.2\" in 2.5s (2.5s including waiting). Image size: {size} bytes."),
            format!("Successfully pulled image \"nginx:1.14.2\" in 500ms (3s including waiting). Image size: {size} bytes."),
        ]
    );
    assert!(is_running(&h.pod("web-a")) && is_running(&h.pod("web-b")));
    assert_ne!(h.pod("web-a").status.pod_ip, h.pod("web-b").status.pod_ip);
}

#[test]
fn graceful_deletion_stops_the_container_writes_a_terminal_status_then_deletes_with_grace_0_and_the_uid() {
    let mut h = Harness::exact();
    h.machine.preload_image("nginx:1.14.2");
    h.advance(Duration::millis(50));
    let pod = h.bind_pod("web-abc12", "nginx:1.14.2", &[]);
    h.wait_for("web-abc12", Duration::secs(5), is_running);
    let key = ObjectKey::new(Kind::Pod, "default", "web-abc12");
    h.user(ApiRequest::Delete(DeleteRequest::new(key.clone()))).expect("graceful delete");
    assert!(h.pod("web-abc12").metadata.deletion_timestamp.is_some(), "Terminating: kubectl shows it from deletionTimestamp");
    let deleted_at = h.now;
    h.advance(Duration::secs(3));
    assert!(h.pod_gone("web-abc12"));
    let (killing_at, _, message) = h.events("web-abc12").into_iter().find(|(_, r, _)| r == "Killing").expect("Killing");
    assert_eq!(message, "Stopping container nginx");
    assert_eq!(killing_at.since(deleted_at).0, 2, "the kubelet hears of it one watch hop later");
    let (final_at, terminal) = h.status_writes("web-abc12").pop().expect("final status");
    assert_eq!(final_at.since(killing_at).0, 200 + 300, "stop 200 ms, teardown 300 ms");
    assert_eq!(terminal.phase, Some(PodPhase::Succeeded));
    let t = terminal.container_statuses[0].state.terminated.as_ref().expect("terminated");
    assert_eq!((t.exit_code, t.reason.as_deref()), (0, Some("Completed")));
    let ready = terminal.conditions.iter().find(|c| c.type_ == "Ready").expect("ready");
    assert_eq!((ready.status.as_str(), ready.reason.as_deref()), ("False", Some("PodCompleted")));
    let delete = h.sent.iter().rev().find_map(|(t, r)| match r {
        ApiRequest::Delete(d) => Some((*t, d.clone())),
        _ => None,
    });
    let (delete_at, d) = delete.expect("the kubelet deleted the pod");
    assert_eq!(d, DeleteRequest { key, uid: Some(pod.metadata.uid.to_string()), grace_period_seconds: Some(0) });
    assert_eq!(delete_at.since(final_at), HOP, "right after the status write is acknowledged");
    assert!(h.machine.running_containers().is_empty(), "the container is gone from the node");
    assert!(!h.k.is_busy());
}

#[test]
fn a_container_ignoring_sigterm_is_killed_when_the_grace_period_ends() {
    let mut h = Harness::exact();
    h.machine.preload_image("nginx:1.14.2");
    h.advance(Duration::millis(50));
    h.bind_pod("web-abc12", "nginx:1.14.2", &[(ANNOTATION_IGNORE_SIGTERM, "true")]);
    h.wait_for("web-abc12", Duration::secs(5), is_running);
    let key = ObjectKey::new(Kind::Pod, "default", "web-abc12");
    let request = DeleteRequest { key, uid: None, grace_period_seconds: Some(5) };
    h.user(ApiRequest::Delete(request)).expect("delete");
    h.advance(Duration::millis(4_900));
    assert!(!h.pod_gone("web-abc12"), "still terminating within its 5 s grace period");
    h.advance(Duration::secs(1));
    assert!(h.pod_gone("web-abc12"));
    let (_, terminal) = h.status_writes("web-abc12").pop().expect("final status");
    let t = terminal.container_statuses[0].state.terminated.as_ref().expect("terminated");
    assert_eq!((t.exit_code, t.reason.as_deref()), (137, Some("Error")));
    assert_eq!(terminal.phase, Some(PodPhase::Failed));
}

#[test]
fn a_force_deleted_pods_containers_are_killed_without_status_writes() {
    let mut h = Harness::exact();
    h.machine.preload_image("nginx:1.14.2");
    h.advance(Duration::millis(50));
    h.bind_pod("web-abc12", "nginx:1.14.2", &[]);
    h.wait_for("web-abc12", Duration::secs(5), is_running);
    let writes = h.status_writes("web-abc12").len();
    let key = ObjectKey::new(Kind::Pod, "default", "web-abc12");
    // A terminal pod is deleted at once: make it Failed first, as an eviction would.
    let mut p = h.pod("web-abc12");
    p.status.phase = Some(PodPhase::Failed);
    p.metadata.resource_version = 0;
    h.user(ApiRequest::UpdateStatus(Object::Pod(p))).expect("status");
    h.user(ApiRequest::Delete(DeleteRequest::new(key))).expect("delete");
    assert!(h.pod_gone("web-abc12"));
    assert_eq!(h.machine.running_containers().len(), 1, "still running until the kubelet hears of it");
    h.advance(Duration::secs(2));
    assert!(h.machine.running_containers().is_empty());
    assert_eq!(h.reasons("web-abc12").last().map(String::as_str), Some("Killing"));
    assert_eq!(h.status_writes("web-abc12").len(), writes, "no status writes for a pod that is gone");
    assert!(!h.sent.iter().any(|(_, r)| matches!(r, ApiRequest::Delete(_))));
}

#[test]
fn a_crashing_container_restarts_in_place_with_back_off_10s_20s_40s_up_to_300s() {
    let mut h = Harness::node1();
    h.machine.preload_image("nginx:1.14.2");
    h.advance(Duration::millis(50));
    h.bind_pod("web-abc12", "nginx:1.14.2", &[(ANNOTATION_CRASH_AFTER, "5s"), (ANNOTATION_EXIT_CODE, "2")]);
    let uid = h.pod("web-abc12").metadata.uid;
    h.advance(Duration::mins(25));
    let p = h.pod("web-abc12");
    let starts: Vec<Time> = h.events("web-abc12").into_iter().filter(|(_, r, _)| r == "Started").map(|(t, _, _)| t).collect();
    assert!(starts.len() >= 9, "{} starts", starts.len());
    // Each instance runs 5 s; the gap after it is the back-off (plus the relist and the pod
    // worker's 10–15 s resync that notices it passed).
    let gaps: Vec<u64> = starts.windows(2).map(|w| w[1].since(w[0]).0 - 5_000).collect();
    assert!(gaps[0] < 1_500, "the first restart is immediate: {gaps:?}");
    for (gap, backoff) in gaps[1..].iter().zip([10, 20, 40, 80, 160, 300, 300]) {
        let b = backoff * 1000;
        assert!(*gap >= b && *gap <= b + 16_000, "back-off {backoff}s: gap {gap} ms in {gaps:?}");
    }
    let messages: Vec<String> = h
        .status_writes("web-abc12")
        .into_iter()
        .filter_map(|(_, s)| s.container_statuses[0].state.waiting.clone())
        .filter(|w| w.reason.as_deref() == Some("CrashLoopBackOff"))
        .filter_map(|w| w.message.map(String::from))
        .collect();
    for d in ["20s", "40s", "1m20s", "2m40s", "5m0s"] {
        let want = format!("back-off {d} restarting failed container=nginx pod=web-abc12_default({uid})");
        assert!(messages.contains(&want), "{want} in {messages:?}");
    }
    let backoff = h.events("web-abc12").into_iter().find(|(_, r, _)| r == "BackOff").map(|(_, _, m)| m);
    assert_eq!(backoff, Some(format!("Back-off restarting failed container nginx in pod web-abc12_default({uid})")));
    let c = &p.status.container_statuses[0];
    assert_eq!(c.restart_count as usize, starts.len() - 1);
    let last = c.last_state.terminated.as_ref().expect("lastState terminated");
    assert_eq!((last.exit_code, last.reason.as_deref()), (2, Some("Error")));
    assert_eq!(p.status.phase, Some(PodPhase::Running), "restartPolicy Always keeps the phase Running");
    assert_eq!(h.k.node_name(), "node-1");
}

#[test]
fn a_missing_image_tag_gives_err_image_pull_then_image_pull_back_off() {
    let mut h = Harness::exact();
    h.advance(Duration::millis(50));
    h.bind_pod("web-abc12", "nginx:doesnotexist", &[]);
    h.advance(Duration::millis(2_300));
    let not_found = "rpc error: code = NotFound desc = failed to pull and unpack image \"docker.io/library/nginx:doesnotexist\": failed to resolve reference \"docker.io/library/nginx:doesnotexist\": docker.io/library/nginx:doesnotexist: not found";
    let events = h.events("web-abc12");
    let got: Vec<(&str, &str)> = events.iter().map(|(_, r, m)| (r.as_str(), m.as_str())).collect();
    let failed = format!("Failed to pull image \"nginx:doesnotexist\": {not_found}");
    assert_eq!(
        got,
        vec![
            ("Pulling", "Pulling image \"nginx:doesnotexist\""),
            ("Failed", failed.as_str()),
            ("Failed", "Error: ErrImagePull"),
            ("BackOff", "Back-off pulling image \"nginx:doesnotexist\""),
            ("Failed", "Error: ImagePullBackOff"),
        ]
    );
    let p = h.pod("web-abc12");
    let w = p.status.container_statuses[0].state.waiting.clone().expect("waiting");
    assert_eq!((w.reason.as_deref(), w.message.as_deref()), (Some("ErrImagePull"), Some(not_found)));
    assert_eq!(p.status.phase, Some(PodPhase::Pending));
    assert_eq!(condition(&p, "PodReadyToStartContainers").status, "True", "the sandbox is up");
    h.advance(Duration::secs(15));
    let w = h.pod("web-abc12").status.container_statuses[0].state.waiting.clone().expect("waiting");
    assert_eq!(w.reason.as_deref(), Some("ImagePullBackOff"));
    assert_eq!(w.message, Some(format!("Back-off pulling image \"nginx:doesnotexist\": ErrImagePull: {not_found}").into()));
    // The pull is tried again once the 10 s back-off passed, then after 20 s, 40 s…
    h.advance(Duration::mins(3));
    let pulls: Vec<Time> = h.events("web-abc12").into_iter().filter(|(_, r, _)| r == "Pulling").map(|(t, _, _)| t).collect();
    let gaps: Vec<u64> = pulls.windows(2).map(|w| w[1].since(w[0]).0 / 1000).collect();
    assert!(gaps.len() >= 3, "{gaps:?}");
    for (gap, backoff) in gaps.iter().zip([10, 20, 40, 80]) {
        assert!(*gap >= backoff && *gap <= backoff + 16, "pull back-off {backoff}s: {gaps:?}");
    }
    assert!(!h.k.is_busy(), "waiting out a back-off is not work");
}

#[test]
fn an_image_name_that_does_not_parse_is_never_pulled_and_waits_as_invalid_image_name() {
    let mut h = Harness::exact();
    h.advance(Duration::millis(50));
    h.bind_pod("web-abc12", "Nginx:1.14.2", &[]);
    h.advance(Duration::millis(2_300));
    let message = "Failed to apply default image tag \"Nginx:1.14.2\": couldn't parse image name \"Nginx:1.14.2\": invalid reference format: repository name (library/Nginx) must be lowercase";
    let events = h.events("web-abc12");
    let got: Vec<(&str, &str)> = events.iter().map(|(_, r, m)| (r.as_str(), m.as_str())).collect();
    // Once at the first sync, again at the sync the new sandbox brings (the PLEG's), and so on.
    assert!(
        got.len() >= 2 && got.chunks(2).all(|pair| pair == [("InspectFailed", message), ("Failed", "Error: InvalidImageName")]),
        "{got:?}"
    );
    let p = h.pod("web-abc12");
    let w = p.status.container_statuses[0].state.waiting.clone().expect("waiting");
    assert_eq!((w.reason.as_deref(), w.message.as_deref()), (Some("InvalidImageName"), Some(message)));
    assert_eq!(p.status.phase, Some(PodPhase::Pending));
    assert!(h.machine.runtime().images().next().is_none(), "nothing was pulled");
    // No image back-off (nothing was pulled): the pod worker retries every 10–15 s, each time
    // with the same event, and the waiting reason never turns into ImagePullBackOff.
    h.advance(Duration::mins(2));
    let tries: Vec<Time> = h.events("web-abc12").into_iter().filter(|(_, r, _)| r == "InspectFailed").map(|(t, _, _)| t).collect();
    let gaps: Vec<u64> = tries.windows(2).skip(1).map(|w| w[1].since(w[0]).0).collect();
    assert!(gaps.len() >= 7, "{gaps:?}");
    assert!(gaps.iter().all(|g| (10_000..=16_000).contains(g)), "the sync error back-off, not a doubling pull back-off: {gaps:?}");
    assert!(h.reasons("web-abc12").iter().all(|r| r == "InspectFailed" || r == "Failed"), "never Pulling or Pulled");
    assert_eq!(waiting_reason(&h.pod("web-abc12")).as_deref(), Some("InvalidImageName"));
    assert!(!h.k.is_busy(), "waiting to retry is not work");
}

#[test]
fn a_restarted_kubelet_keeps_the_running_containers_and_changes_nothing() {
    let mut h = Harness::node1();
    h.machine.preload_image("nginx:1.14.2");
    h.advance(Duration::millis(50));
    h.bind_pod("web-abc12", "nginx:1.14.2", &[]);
    h.wait_for("web-abc12", Duration::secs(5), is_running);
    let before = h.pod("web-abc12");
    h.stop();
    h.advance(Duration::secs(30));
    assert_eq!(h.machine.running_containers().len(), 1, "containers outlive the kubelet process");
    h.sent.clear();
    h.start();
    h.advance(Duration::secs(5));
    assert!(h.events("web-abc12").is_empty(), "no new container, no events");
    assert!(h.status_writes("web-abc12").is_empty(), "the status was already right");
    assert_eq!(h.pod("web-abc12").status, before.status);
    assert!(matches!(h.machine.running_containers()[0].2, ContainerRuntimeState::Running { .. }));
}

#[test]
fn a_crash_while_the_kubelet_is_down_is_found_and_restarted_when_it_comes_back() {
    let mut h = Harness::node1();
    h.machine.preload_image("nginx:1.14.2");
    h.advance(Duration::millis(50));
    h.bind_pod("web-abc12", "nginx:1.14.2", &[(ANNOTATION_CRASH_AFTER, "20s")]);
    h.wait_for("web-abc12", Duration::secs(5), is_running);
    h.stop();
    h.advance(Duration::secs(60));
    let seen = h.machine.containers_at(h.now);
    assert!(matches!(seen[0].2, ContainerRuntimeState::Exited { exit_code: 1, .. }), "it crashed with nobody watching");
    assert_eq!(h.pod("web-abc12").status.container_statuses[0].restart_count, 0, "and nobody reported it");
    h.start();
    h.wait_for("web-abc12", Duration::secs(5), |p| is_running(p) && p.status.container_statuses[0].restart_count == 1);
}

#[test]
fn containers_nobody_claims_are_killed_when_the_kubelet_relists() {
    let mut h = Harness::node1();
    h.machine.preload_image("nginx:1.14.2");
    h.advance(Duration::millis(50));
    h.bind_pod("web-abc12", "nginx:1.14.2", &[]);
    h.wait_for("web-abc12", Duration::secs(5), is_running);
    h.stop();
    // The claims vanish while the kubelet is down (etcd wiped, or a force delete).
    let key = ObjectKey::new(Kind::Pod, "default", "web-abc12");
    let mut p = h.pod("web-abc12");
    p.status.phase = Some(PodPhase::Failed);
    p.metadata.resource_version = 0;
    h.user(ApiRequest::UpdateStatus(Object::Pod(p))).expect("status");
    h.user(ApiRequest::Delete(DeleteRequest::new(key))).expect("deleted");
    h.advance(Duration::secs(10));
    assert_eq!(h.machine.running_containers().len(), 1, "still running on a stopped kubelet's node");
    h.start();
    h.advance(Duration::secs(2));
    assert!(h.machine.running_containers().is_empty());
    assert_eq!(h.reasons("web-abc12").last().map(String::as_str), Some("Killing"));
}

#[test]
fn loops_report_the_phase_the_queue_and_the_last_action_in_words() {
    let mut h = Harness::exact();
    h.advance(Duration::millis(50));
    h.bind_pod("web-abc12", "nginx:1.14.2", &[]);
    h.advance(Duration::secs(1));
    let l = &h.k.loops()[0];
    assert_eq!(l.name, "kubelet-node-1");
    assert_eq!((l.phase, l.queue_depth), (LoopPhase::Act, 1));
    assert_eq!(l.last_action, "web-abc12: pulling image nginx:1.14.2");
    assert!(h.k.is_busy());
    h.advance(Duration::secs(5));
    let l = &h.k.loops()[0];
    assert_eq!((l.phase, l.queue_depth), (LoopPhase::Idle, 0));
    assert_eq!(l.last_action, "web-abc12: status Running");
    assert_eq!(l.turns, 2, "the first sync and the one the relist brought");
    assert!(!h.k.is_busy());
    let named = h.machine.running_containers();
    assert_eq!(named[0].0, ObjectKey::new(Kind::Pod, "default", "web-abc12"));
    assert_eq!(named[0].1, "nginx");
}

#[test]
fn a_pod_marked_not_ready_by_someone_else_is_reported_ready_again_within_10s() {
    let mut h = Harness::node1();
    h.machine.preload_image("nginx:1.14.2");
    h.advance(Duration::millis(50));
    h.bind_pod("web-abc12", "nginx:1.14.2", &[]);
    h.wait_for("web-abc12", Duration::secs(5), is_running);
    h.advance(Duration::secs(3));
    // The node lifecycle controller's MarkPodsNotReady, plus a condition only it owns.
    let mut p = h.pod("web-abc12");
    for c in p.status.conditions.iter_mut().filter(|c| c.type_ == "Ready") {
        c.status = "False".into();
    }
    p.status.conditions.push(PodCondition { type_: "DisruptionTarget".into(), status: "True".into(), ..Default::default() });
    p.metadata.resource_version = 0;
    h.user(ApiRequest::UpdateStatus(Object::Pod(p))).expect("marked not ready");
    let marked_at = h.now;
    let fixed_at = h.wait_for("web-abc12", Duration::secs(11), |p| p.is_ready());
    assert!(fixed_at.since(marked_at) <= Duration::secs(10), "the status manager's next 10 s batch");
    let p = h.pod("web-abc12");
    assert!(p.condition("DisruptionTarget").is_some(), "a condition the kubelet does not own is kept");
    h.advance(Duration::secs(30));
    let writes = h.status_writes("web-abc12").len();
    h.advance(Duration::secs(30));
    assert_eq!(h.status_writes("web-abc12").len(), writes, "its own echoes do not trigger writes");
}

/// Through the real simulation: its latencies, its wake-ups, `settle`, stop and start.
#[test]
fn in_the_simulation_pods_run_settle_and_survive_a_kubelet_restart() {
    use crate::sim::{ComponentId, Sim};
    let mut sim = Sim::empty(7);
    for name in ["node-1", "node-2"] {
        sim.add_component(ComponentId::Kubelet(name.into()), Kubelet::new(NodeConfig::new(name)));
    }
    assert!(sim.settle(Duration::secs(5)).is_ok(), "registration settles");
    assert_eq!(sim.objects(Kind::Node).count(), 2);
    for (name, node) in [("web-a", "node-1"), ("web-b", "node-1"), ("web-c", "node-2")] {
        let mut pod = Pod::default();
        pod.metadata.name = name.into();
        pod.metadata.namespace = "default".into();
        pod.spec.containers = vec![Container { name: "nginx".into(), image: "nginx:1.14.2".into(), ..Default::default() }].into();
        sim.submit(ApiRequest::Create(Object::Pod(pod))).expect("created");
        sim.submit(ApiRequest::Bind { pod: ObjectKey::new(Kind::Pod, "default", name), node: node.into() }).expect("bound");
    }
    let took = sim.settle(Duration::secs(30)).expect("settles");
    assert!(took > Duration::secs(2) && took < Duration::secs(8), "pulls of ~2.5 s, serialized on node-1: {took}");
    let running = sim.objects(Kind::Pod).filter(|o| o.as_pod().is_some_and(|p| p.phase() == PodPhase::Running && p.is_ready())).count();
    assert_eq!(running, 3);
    let id = ComponentId::Kubelet("node-1".into());
    let loops = sim.loops(&id);
    assert_eq!((loops[0].name.as_str(), loops[0].phase, loops[0].queue_depth), ("kubelet-node-1", LoopPhase::Idle, 0));

    sim.stop_component(&id);
    sim.advance(Duration::secs(30));
    let machine = sim.machine("node-1").expect("the node's machine");
    assert_eq!(machine.running_containers().len(), 2, "containers outlive the kubelet");
    sim.start_component(&id);
    sim.settle(Duration::secs(10)).expect("settles after the restart");
    let machine = sim.machine("node-1").expect("the node's machine");
    assert_eq!(machine.running_containers().len(), 2, "and are found again, not restarted");
    let restarts: i32 = sim.objects(Kind::Pod).filter_map(|o| o.as_pod().map(Pod::restarts)).sum();
    assert_eq!(restarts, 0);

    sim.submit(ApiRequest::Delete(DeleteRequest::new(ObjectKey::new(Kind::Pod, "default", "web-a")))).expect("deleted");
    sim.settle(Duration::secs(40)).expect("the deletion completes");
    assert!(sim.api().get(&ObjectKey::new(Kind::Pod, "default", "web-a")).is_none());
    let machine = sim.machine("node-1").expect("the node's machine");
    assert_eq!(machine.running_containers().len(), 1);
}
