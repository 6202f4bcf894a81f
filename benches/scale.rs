//! Scale benchmarks for the simulation core (a bench target, not a timed test).
//!
//! `cargo bench --bench scale` prints a Markdown table; `scripts/bench.sh` runs it and writes the
//! table into README.md. Measured:
//! - simulated seconds per wall second at teaching scale (2 nodes / 3 pods; and the `service`
//!   scenario: the same behind a Service, with readiness probes and traffic) and at
//!   100 nodes / 3,000 pods, once the cluster is steady (heartbeats, leases, status reports);
//! - wall time from nothing to every pod Running for 1,000 nodes / 30,000 pods and for
//!   5,000 nodes / 150,000 pods (the official scalability envelope).
//!
//! - the same two with a ClusterIP Service in front of every Deployment, until every pod is
//!   Running and listed as a ready endpoint (the EndpointSlice controller's loop, and every node's
//!   kube-proxy watching every Service and EndpointSlice).
//!
//! `cargo bench --bench scale -- quick` skips the 5,000-node runs; `-- run NODES PODS [services]`
//! measures one.

use kubeloop::api::ApiRequest;
use kubeloop::command::{Scenario, Session};
use kubeloop::model::{Duration, Kind, Object, PodPhase};
use kubeloop::sim::{NodeConfig, Sim};
use std::time::Instant;

// The native `kubeloop` binary's allocator, so the numbers are what the command line gets.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn deployment(name: &str, replicas: usize) -> Object {
    let yaml = format!(
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {{name: {name}}}\nspec:\n  replicas: {replicas}\n  selector: {{matchLabels: {{app: {name}}}}}\n  template:\n    metadata: {{labels: {{app: {name}}}}}\n    spec:\n      containers:\n      - name: nginx\n        image: nginx:1.14.2\n        resources: {{requests: {{cpu: 10m, memory: 16Mi}}}}\n"
    );
    Object::from_json(yaml_serde::from_str(&yaml).expect("bench manifest is YAML")).expect("bench manifest is a Deployment")
}

/// The Service in front of Deployment `name`: its pods' port 80.
fn service(name: &str) -> Object {
    let yaml = format!("apiVersion: v1\nkind: Service\nmetadata: {{name: {name}}}\nspec:\n  selector: {{app: {name}}}\n  ports:\n  - port: 80\n    targetPort: 80\n");
    Object::from_json(yaml_serde::from_str(&yaml).expect("bench manifest is YAML")).expect("bench manifest is a Service")
}

/// A cluster of `nodes` nodes with `pods` replicas spread over Deployments of up to 100, each
/// with a Service in front of it when `services`.
fn cluster(nodes: usize, pods: usize, services: bool) -> Sim {
    let mut sim = Sim::new(42);
    sim.set_trace_capacity(0);
    for i in 0..nodes {
        let mut node = NodeConfig::new(&format!("node-{i}"));
        node.zone = format!("zone-{}", i % 3);
        sim.add_node(node).expect("unique node names");
    }
    let mut left = pods;
    let mut n = 0;
    while left > 0 {
        let replicas = left.min(100);
        sim.submit(ApiRequest::Create(deployment(&format!("app-{n}"), replicas))).expect("valid deployment");
        if services {
            sim.submit(ApiRequest::Create(service(&format!("app-{n}")))).expect("valid service");
        }
        left -= replicas;
        n += 1;
    }
    sim
}

fn running(sim: &Sim) -> usize {
    sim.objects(Kind::Pod).filter(|p| p.as_pod().is_some_and(|p| p.phase() == PodPhase::Running)).count()
}

/// The ready endpoints listed in every EndpointSlice.
fn ready_endpoints(sim: &Sim) -> usize {
    sim.objects(Kind::EndpointSlice)
        .filter_map(|o| o.as_endpoint_slice())
        .map(|s| s.endpoints.iter().filter(|e| e.conditions.ready == Some(true)).count())
        .sum()
}

/// Wall seconds and simulated seconds until all `pods` are Running — and, with `services`, listed
/// as ready endpoints — checked every simulated second.
fn time_to_running(nodes: usize, pods: usize, services: bool) -> (f64, f64, bool) {
    let started = Instant::now();
    let mut sim = cluster(nodes, pods, services);
    let limit = Duration::mins(30);
    let begin = sim.now();
    let mut done = false;
    while sim.now().since(begin) < limit {
        sim.advance(Duration::secs(1));
        if running(&sim) >= pods && (!services || ready_endpoints(&sim) >= pods) {
            done = true;
            break;
        }
    }
    let wall = started.elapsed().as_secs_f64();
    let simulated = sim.now().since(begin).as_secs_f64();
    // Tearing it down is not part of bringing it up, so it is dropped after the clock stopped —
    // but dropped, so the next (larger) run's peak memory is its own and not the sum of both.
    drop(sim);
    (wall, simulated, done)
}

/// Simulated seconds per wall second over `span` of the built-in `service` scenario once steady:
/// teaching scale with a Service in front of the Deployment, a readiness probe on every pod and
/// `sim traffic` sending 4 connections a second (the picture lesson 8 draws).
fn speed_served(span: Duration) -> f64 {
    let mut s = Session::new(Scenario::builtin("service").expect("built-in"), Some(1)).expect("starts");
    s.advance(Duration::secs(10));
    assert!(s.sim().traffic_flows().next().is_some(), "the scenario's traffic runs");
    let started = Instant::now();
    s.advance(span);
    span.as_secs_f64() / started.elapsed().as_secs_f64().max(1e-9)
}

/// Simulated seconds per wall second over `span` of steady state.
fn speed(nodes: usize, pods: usize, span: Duration) -> f64 {
    let mut sim = cluster(nodes, pods, false);
    let _ = sim.settle(Duration::mins(10));
    let started = Instant::now();
    sim.advance(span);
    span.as_secs_f64() / started.elapsed().as_secs_f64().max(1e-9)
}

/// The peak resident memory of this process so far (`VmHWM`), where the OS reports it.
#[cfg(target_os = "linux")]
fn peak_memory() -> Option<String> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let kb: u64 = status.lines().find_map(|l| l.strip_prefix("VmHWM:"))?.trim().trim_end_matches("kB").trim().parse().ok()?;
    Some(format!("{:.1} GB", kb as f64 / 1_048_576.0))
}

#[cfg(not(target_os = "linux"))]
fn peak_memory() -> Option<String> {
    None
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let services = args.iter().any(|a| a == "services");
    // `-- run NODES PODS [services]`: one time-to-Running measurement, for profiling.
    if let Some(i) = args.iter().position(|a| a == "run") {
        let num = |j: usize| args.get(i + j).and_then(|v| v.parse().ok()).unwrap_or(100);
        let (wall, simulated, done) = time_to_running(num(1), num(2), services);
        let peak = peak_memory().map(|m| format!(", peak memory {m}")).unwrap_or_default();
        println!(
            "{} nodes / {} pods (Services: {services}): {wall:.1} s wall, {simulated:.0} s simulated, done: {done}{peak}",
            num(1),
            num(2)
        );
        return;
    }
    // `-- row NODES PODS [services]`: one time-to-Running table row (what `in_fresh_process` starts).
    if let Some(i) = args.iter().position(|a| a == "row") {
        let num = |j: usize| args.get(i + j).and_then(|v| v.parse().ok()).unwrap_or(100);
        println!("{}", running_row(num(1), num(2), services));
        return;
    }
    let quick = args.iter().any(|a| a == "quick");
    println!("| measurement | result |");
    println!("|---|---|");
    let s = speed(2, 3, Duration::mins(60));
    println!("| simulated seconds per wall second, 2 nodes / 3 pods (steady) | {s:.0}× real time |");
    let s = speed_served(Duration::mins(60));
    println!("| simulated seconds per wall second, 2 nodes / 3 pods behind a Service, 4 connections/s (steady) | {s:.0}× real time |");
    let s = speed(100, 3000, Duration::mins(10));
    println!("| simulated seconds per wall second, 100 nodes / 3,000 pods (steady) | {s:.0}× real time |");
    let mut sizes = vec![(1000, 30_000)];
    if !quick {
        sizes.push((5000, 150_000));
    }
    for services in [false, true] {
        for &(nodes, pods) in &sizes {
            println!("{}", in_fresh_process(nodes, pods, services).unwrap_or_else(|| running_row(nodes, pods, services)));
        }
    }
}

/// The table row for one time-to-Running measurement, taken in this process.
fn running_row(nodes: usize, pods: usize, services: bool) -> String {
    let (wall, simulated, done) = time_to_running(nodes, pods, services);
    let verdict = match (done, services) {
        (true, false) => "all Running",
        (true, true) => "all Running and listed as endpoints",
        (false, _) => "NOT done within 30 simulated minutes",
    };
    let with = if services { " with a Service per Deployment" } else { "" };
    let peak = peak_memory().map(|m| format!(", peak memory {m}")).unwrap_or_default();
    format!("| {nodes} nodes / {pods} pods{with}: wall time from nothing to {verdict} | {wall:.1} s ({simulated:.0} s simulated{peak}) |")
}

/// The row measured by a fresh copy of this benchmark (`-- row NODES PODS`), so that "from
/// nothing" holds for the heap too: run after the smaller measurements in one process, the
/// 5,000-node run was a fifth slower here (55–65 s in four runs, 40–51 s in seven alone),
/// probably because the allocator then reuses freed memory that is no longer in huge pages.
/// Each row's peak memory is then its own run's. `None` if the copy cannot be started.
fn in_fresh_process(nodes: usize, pods: usize, services: bool) -> Option<String> {
    let exe = std::env::current_exe().ok()?;
    let mut args = vec!["row".to_string(), nodes.to_string(), pods.to_string()];
    if services {
        args.push("services".into());
    }
    let out = std::process::Command::new(exe).args(&args).output().ok()?;
    let row = String::from_utf8(out.stdout).ok()?;
    (out.status.success() && row.starts_with('|')).then(|| row.trim().to_string())
}
