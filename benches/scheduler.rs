//! kube-scheduler alone at scale (a bench target, not a timed test).
//!
//! The whole simulation spends most of a large run elsewhere (API server, controllers, kubelets),
//! so its wall time says little about the scheduler. Here a real `ApiServer` answers the
//! scheduler's requests at once and its watches feed it, with nothing else running: every pod is
//! created up front and the scheduler places them all. It prints the wall time and a digest of
//! every decision (pod → node, and the chosen node's score), so a change that should only make
//! the scheduler faster can be checked not to have changed a single choice.
//!
//! `cargo bench --bench scheduler -- NODES PODS` (default 1,000 nodes, 30,000 pods).

use kubeloop::api::{ApiRequest, ApiResponse, ApiResult, ApiServer, WatchEvent, WatchId};
use kubeloop::model::{Container, Kind, Node, Object, ObjectKey, ObjectMeta, OwnerReference, Pod, Quantity, ResourceRequirements, Time};
use kubeloop::rng::Rng;
use kubeloop::runtime::{Component, Ctx, Effect, RequestId};
use kubeloop::scheduler::Scheduler;
use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::time::Instant;

#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

enum Input {
    Response(RequestId, ApiResult),
    Watch(WatchId, WatchEvent),
}

/// The API server and the scheduler, wired directly.
struct Bench {
    api: ApiServer,
    sched: Scheduler,
    rng: Rng,
    next_request: u64,
    now: Time,
    watches: BTreeSet<WatchId>,
    inbox: VecDeque<Input>,
}

impl Bench {
    fn new() -> Self {
        let mut b = Bench {
            api: ApiServer::new(),
            sched: Scheduler::new(),
            rng: Rng::new(7),
            next_request: 0,
            now: Time(0),
            watches: BTreeSet::new(),
            inbox: VecDeque::new(),
        };
        b.call(|s, ctx| s.start(ctx));
        b.pump();
        b
    }

    fn call(&mut self, f: impl FnOnce(&mut Scheduler, &mut Ctx)) {
        let mut ctx = Ctx::new(self.now, &mut self.rng, &mut self.next_request);
        f(&mut self.sched, &mut ctx);
        for effect in ctx.into_effects() {
            match effect {
                Effect::Request { id, request } => self.serve(id, *request),
                Effect::CloseWatch(w) => self.api.close_watch(w),
                // The scheduler never programs a node's routing table.
                Effect::ProgramRules(_) | Effect::AwaitSharedChange => {}
            }
        }
    }

    fn serve(&mut self, id: RequestId, request: ApiRequest) {
        let handled = self.api.handle(self.now, &mut self.rng, request);
        if let Ok(ApiResponse::Watching(w)) = &handled.result {
            self.watches.insert(*w);
        }
        self.inbox.push_back(Input::Response(id, handled.result));
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
        loop {
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
    }

    fn create(&mut self, object: Object) {
        let handled = self.api.handle(self.now, &mut self.rng, ApiRequest::Create(object));
        if let Err(e) = handled.result {
            panic!("create failed: {e:?}");
        }
        self.fan_out(handled.notifications);
    }
}

fn node(i: usize) -> Object {
    let name = format!("node-{i:05}");
    let mut n = Node { metadata: ObjectMeta { name: name.as_str().into(), ..Default::default() }, ..Default::default() };
    n.metadata.labels.insert("kubernetes.io/hostname".into(), name);
    n.metadata.labels.insert("topology.kubernetes.io/zone".into(), format!("zone-{}", i % 3));
    for (k, v) in [("cpu", "32"), ("memory", "128Gi"), ("pods", "110")] {
        n.status.allocatable.insert(k.into(), Quantity::new(v));
        n.status.capacity.insert(k.into(), Quantity::new(v));
    }
    Object::Node(n)
}

/// Pods of Deployments of 100 replicas; every seventh asks for nothing (best-effort).
fn pod(i: usize) -> Object {
    let mut requests = BTreeMap::new();
    if !i.is_multiple_of(7) {
        requests.insert("cpu".to_string(), Quantity::new(if i.is_multiple_of(2) { "100m" } else { "250m" }));
        requests.insert("memory".to_string(), Quantity::new("128Mi"));
    }
    let mut p = Pod::default();
    p.metadata.name = format!("web-{i}").into();
    p.metadata.namespace = "default".into();
    p.metadata.owner_references = vec![OwnerReference {
        api_version: "apps/v1".into(),
        kind: "ReplicaSet".into(),
        name: format!("web-{}", i / 100),
        uid: format!("rs-uid-{}", i / 100),
        controller: Some(true),
        block_owner_deletion: Some(true),
    }]
    .into();
    p.spec.containers = vec![Container {
        name: "nginx".into(),
        image: "nginx:1.14.2".into(),
        resources: ResourceRequirements { requests, ..Default::default() },
        ..Default::default()
    }]
    .into();
    Object::Pod(p)
}

/// FNV-1a over every pod's node and its decision's chosen score.
fn digest(b: &Bench, pods: usize) -> u64 {
    let mut h: u64 = 0xcbf29ce484222325;
    let mut eat = |bytes: &[u8]| {
        for x in bytes {
            h = (h ^ *x as u64).wrapping_mul(0x100000001b3);
        }
    };
    for i in 0..pods {
        let key = ObjectKey::new(Kind::Pod, "default", &format!("web-{i}"));
        let node = b.api.get(&key).and_then(|o| o.as_pod().and_then(|p| p.spec.node_name.clone())).unwrap_or_default();
        eat(node.as_bytes());
        let score = b.sched.last_record(&key).and_then(|r| r.chosen_score()).unwrap_or(-1);
        eat(&score.to_le_bytes());
    }
    h
}

fn main() {
    let args: Vec<usize> = std::env::args().skip(1).filter_map(|a| a.parse().ok()).collect();
    let nodes = args.first().copied().unwrap_or(1000);
    let pods = args.get(1).copied().unwrap_or(30_000);
    let mut b = Bench::new();
    for i in 0..nodes {
        b.create(node(i));
    }
    b.pump();
    for i in 0..pods {
        b.create(pod(i));
    }
    let started = Instant::now();
    b.pump();
    let wall = started.elapsed().as_secs_f64();
    let turns = b.sched.loops().first().map_or(0, |l| l.turns);
    println!("{nodes} nodes / {pods} pods: {wall:.2} s wall for {turns} scheduling cycles, digest {:016x}", digest(&b, pods));
    std::mem::forget(b);
}
