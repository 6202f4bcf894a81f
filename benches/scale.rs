//! Scale benchmarks for the simulation core (a bench target, not a timed test).
//!
//! `cargo bench --bench scale` prints a Markdown table; `scripts/bench.sh` runs it and writes the
//! table into README.md. Measured:
//! - simulated seconds per wall second at teaching scale (2 nodes / 3 pods) and at
//!   100 nodes / 3,000 pods, once the cluster is steady (heartbeats, leases, status reports);
//! - wall time from nothing to every pod Running for 1,000 nodes / 30,000 pods and for
//!   5,000 nodes / 150,000 pods (the official scalability envelope).
//!
//! `cargo bench --bench scale -- quick` skips the 5,000-node run.

use kubeloop::api::ApiRequest;
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

/// A cluster of `nodes` nodes with `pods` replicas spread over Deployments of up to 1,000.
fn cluster(nodes: usize, pods: usize) -> Sim {
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
        left -= replicas;
        n += 1;
    }
    sim
}

fn running(sim: &Sim) -> usize {
    sim.objects(Kind::Pod).filter(|p| p.as_pod().is_some_and(|p| p.phase() == PodPhase::Running)).count()
}

/// Wall seconds and simulated seconds until all `pods` are Running (checked every simulated second).
fn time_to_running(nodes: usize, pods: usize) -> (f64, f64, bool) {
    let started = Instant::now();
    let mut sim = cluster(nodes, pods);
    let limit = Duration::mins(30);
    let begin = sim.now();
    let mut done = false;
    while sim.now().since(begin) < limit {
        sim.advance(Duration::secs(1));
        if running(&sim) >= pods {
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

/// Simulated seconds per wall second over `span` of steady state.
fn speed(nodes: usize, pods: usize, span: Duration) -> f64 {
    let mut sim = cluster(nodes, pods);
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
    // `-- run NODES PODS`: one time-to-Running measurement, for profiling.
    if let Some(i) = args.iter().position(|a| a == "run") {
        let num = |j: usize| args.get(i + j).and_then(|v| v.parse().ok()).unwrap_or(100);
        let (wall, simulated, done) = time_to_running(num(1), num(2));
        let peak = peak_memory().map(|m| format!(", peak memory {m}")).unwrap_or_default();
        println!("{} nodes / {} pods: {wall:.1} s wall, {simulated:.0} s simulated, all Running: {done}{peak}", num(1), num(2));
        return;
    }
    // `-- row NODES PODS`: one time-to-Running table row (what `in_fresh_process` starts).
    if let Some(i) = args.iter().position(|a| a == "row") {
        let num = |j: usize| args.get(i + j).and_then(|v| v.parse().ok()).unwrap_or(100);
        println!("{}", running_row(num(1), num(2)));
        return;
    }
    let quick = args.iter().any(|a| a == "quick");
    println!("| measurement | result |");
    println!("|---|---|");
    let s = speed(2, 3, Duration::mins(60));
    println!("| simulated seconds per wall second, 2 nodes / 3 pods (steady) | {s:.0}× real time |");
    let s = speed(100, 3000, Duration::mins(10));
    println!("| simulated seconds per wall second, 100 nodes / 3,000 pods (steady) | {s:.0}× real time |");
    let mut sizes = vec![(1000, 30_000)];
    if !quick {
        sizes.push((5000, 150_000));
    }
    for (nodes, pods) in sizes {
        println!("{}", in_fresh_process(nodes, pods).unwrap_or_else(|| running_row(nodes, pods)));
    }
}

/// The table row for one time-to-Running measurement, taken in this process.
fn running_row(nodes: usize, pods: usize) -> String {
    let (wall, simulated, done) = time_to_running(nodes, pods);
    let verdict = if done { "all Running" } else { "NOT all Running within 30 simulated minutes" };
    let peak = peak_memory().map(|m| format!(", peak memory {m}")).unwrap_or_default();
    format!("| {nodes} nodes / {pods} pods: wall time from nothing to {verdict} | {wall:.1} s ({simulated:.0} s simulated{peak}) |")
}

/// The row measured by a fresh copy of this benchmark (`-- row NODES PODS`), so that "from
/// nothing" holds for the heap too: run after the smaller measurements in one process, the
/// 5,000-node run was a fifth slower here (55–65 s in four runs, 40–51 s in seven alone),
/// probably because the allocator then reuses freed memory that is no longer in huge pages.
/// Each row's peak memory is then its own run's. `None` if the copy cannot be started.
fn in_fresh_process(nodes: usize, pods: usize) -> Option<String> {
    let exe = std::env::current_exe().ok()?;
    let out = std::process::Command::new(exe).args(["row", &nodes.to_string(), &pods.to_string()]).output().ok()?;
    let row = String::from_utf8(out.stdout).ok()?;
    (out.status.success() && row.starts_with('|')).then(|| row.trim().to_string())
}
