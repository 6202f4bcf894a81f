//! The kubelet's probe manager (pkg/kubelet/prober): one worker per container and probe kind,
//! each on its own ticker, whose results gate the container's `started` and `ready` and, for a
//! failed liveness or startup probe, make the pod worker kill the container.
//!
//! It follows worker.go's `doProbe`: the worker reads the container from the status manager's
//! cached status (so it sees a new container only once a sync reported it), starts each new
//! container at the kind's initial value (readiness Failure, liveness Success, startup Unknown),
//! waits out `initialDelaySeconds` (whole seconds since `startedAt`), holds liveness and
//! readiness off until the startup probe succeeded, counts equal results in a row against the
//! thresholds, and after a liveness or startup failure holds until it sees a new container ID.
//! A worker created while the kubelet is younger than one period first sleeps a random fraction
//! of it (upstream's guard against probe bursts after a restart); otherwise it probes at once.
//! Every failed probe records `Warning Unhealthy` "<Kind> probe failed: <output>". What the
//! probe finds is what `container_model` says the container's program does, unless a
//! `sim fail-probe` fault on the machine says otherwise.
//!
//! Probe workers are process state: a restarted kubelet makes new ones, as upstream's does.

use super::container_model::{self, Program};
use super::runtime::ContainerRuntimeState;
use super::{runtime, Kubelet};
use crate::model::*;
use crate::runtime::Ctx;
use std::collections::{BTreeMap, BTreeSet};

/// The three kinds of probe, in the order a container declares them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ProbeType {
    Liveness,
    Readiness,
    Startup,
}

impl ProbeType {
    pub const ALL: [ProbeType; 3] = [ProbeType::Liveness, ProbeType::Readiness, ProbeType::Startup];

    /// `probeType.String()`, as events begin with it.
    pub fn word(self) -> &'static str {
        match self {
            ProbeType::Liveness => "Liveness",
            ProbeType::Readiness => "Readiness",
            ProbeType::Startup => "Startup",
        }
    }

    pub fn parse(text: &str) -> Option<ProbeType> {
        ProbeType::ALL.into_iter().find(|k| k.word().eq_ignore_ascii_case(text))
    }

    fn of(self, c: &Container) -> Option<&Probe> {
        match self {
            ProbeType::Liveness => c.liveness_probe.as_ref(),
            ProbeType::Readiness => c.readiness_probe.as_ref(),
            ProbeType::Startup => c.startup_probe.as_ref(),
        }
    }

    /// worker.go's `initialValue`.
    fn initial(self) -> ProbeResult {
        match self {
            ProbeType::Liveness => ProbeResult::Success,
            ProbeType::Readiness => ProbeResult::Failure,
            ProbeType::Startup => ProbeResult::Unknown,
        }
    }
}

/// `results.Result`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ProbeResult {
    Unknown,
    Success,
    Failure,
}

/// One probe worker.
#[derive(Clone, Debug)]
pub(crate) struct Worker {
    container: Container,
    spec: Probe,
    next_tick: Time,
    /// The container ID (`containerd://…`) the result belongs to.
    container_id: String,
    result: ProbeResult,
    last_result: ProbeResult,
    result_run: i32,
    on_hold: bool,
    /// The pod worker has already asked this container to stop for failing this probe.
    pub(crate) killed: bool,
}

impl Worker {
    fn period(&self) -> Duration {
        Duration::secs(self.spec.period_seconds.max(1) as u64)
    }
    /// The result for the container instance `id`, if the worker has seen it.
    fn result_for(&self, id: &str) -> Option<ProbeResult> {
        (self.container_id == id).then_some(self.result)
    }
}

type Key = (String, String, ProbeType);

/// A container's gates as the prober sees them (`UpdatePodStatus`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Gates {
    pub started: bool,
    pub ready: bool,
}

/// The probe manager: workers by (pod UID, container, kind), and their tickers by time.
#[derive(Debug, Default)]
pub(crate) struct ProbeManager {
    workers: BTreeMap<Key, Worker>,
    timers: BTreeSet<(Time, Key)>,
    /// When this kubelet process started (the jitter applies only in its first period).
    pub(crate) started_at: Time,
}

impl ProbeManager {
    /// `AddPod`: a worker per probe of each container, unless it has one.
    pub(crate) fn add_pod(&mut self, ctx: &mut Ctx, pod: &Pod) {
        for c in pod.spec.containers.iter() {
            for kind in ProbeType::ALL {
                let Some(spec) = kind.of(c) else { continue };
                let key = (pod.metadata.uid.to_string(), c.name.clone(), kind);
                if self.workers.contains_key(&key) {
                    continue;
                }
                let period = Duration::secs(spec.period_seconds.max(1) as u64);
                let young = ctx.now.since(self.started_at) < period;
                let first = if young { ctx.now + Duration((ctx.rng.unit() * period.0 as f64) as u64) } else { ctx.now };
                let worker = Worker {
                    container: c.clone(),
                    spec: spec.clone(),
                    next_tick: first,
                    container_id: String::new(),
                    result: kind.initial(),
                    last_result: ProbeResult::Unknown,
                    result_run: 0,
                    on_hold: false,
                    killed: false,
                };
                self.timers.insert((first, key.clone()));
                self.workers.insert(key, worker);
            }
        }
    }

    fn remove(&mut self, key: &Key) {
        if let Some(w) = self.workers.remove(key) {
            self.timers.remove(&(w.next_tick, key.clone()));
        }
    }

    /// The pod's workers, found by a range of the ordered map rather than a scan of all.
    fn of_pod<'a>(&'a self, uid: &str) -> impl Iterator<Item = (&'a Key, &'a Worker)> + 'a {
        let uid = uid.to_string();
        let from = (uid.clone(), String::new(), ProbeType::Liveness);
        self.workers.range(from..).take_while(move |(k, _)| k.0 == uid)
    }

    /// `RemovePod`.
    pub(crate) fn remove_pod(&mut self, uid: &str) {
        let keys: Vec<Key> = self.of_pod(uid).map(|(k, _)| k.clone()).collect();
        keys.iter().for_each(|k| self.remove(k));
    }

    /// `StopLivenessAndStartup`: a terminating pod is not restarted for failing them.
    pub(crate) fn stop_liveness_and_startup(&mut self, uid: &str) {
        let keys: Vec<Key> = self.of_pod(uid).filter(|(k, _)| k.2 != ProbeType::Readiness).map(|(k, _)| k.clone()).collect();
        keys.iter().for_each(|k| self.remove(k));
    }

    pub(crate) fn next_wakeup(&self) -> Option<Time> {
        self.timers.first().map(|(t, _)| *t)
    }

    /// The workers whose tick is due by `now`, taken off their timers.
    fn due(&mut self, now: Time) -> Vec<Key> {
        let mut out = Vec::new();
        while let Some((t, key)) = self.timers.first().cloned() {
            if t > now {
                break;
            }
            self.timers.pop_first();
            out.push(key);
        }
        out
    }

    /// `UpdatePodStatus`'s manual trigger: a readiness worker whose container is not ready yet
    /// probes now rather than at its next tick.
    pub(crate) fn trigger_unready(&mut self, uid: &str, now: Time) {
        if self.workers.is_empty() {
            return;
        }
        let keys: Vec<Key> = self
            .of_pod(uid)
            .filter(|(k, w)| k.2 == ProbeType::Readiness && w.result != ProbeResult::Success && w.next_tick > now)
            .map(|(k, _)| k.clone())
            .collect();
        for key in keys {
            if let Some(w) = self.workers.get_mut(&key) {
                self.timers.remove(&(w.next_tick, key.clone()));
                // The ticker keeps its phase: the trigger is an extra run, not a reset.
                self.timers.insert((now, key));
            }
        }
    }

    /// `isContainerStarted` and the readiness part of `UpdatePodStatus`, for the running
    /// container instance `id` of `container`.
    pub(crate) fn gates(&self, uid: &str, container: &str, id: &str) -> Gates {
        let result = |kind| self.workers.get(&(uid.to_string(), container.to_string(), kind)).map(|w| w.result_for(id));
        let started = match result(ProbeType::Startup) {
            None => true,
            Some(r) => r == Some(ProbeResult::Success),
        };
        let ready = started
            && match result(ProbeType::Readiness) {
                None => true,
                Some(r) => r == Some(ProbeResult::Success),
            };
        Gates { started, ready }
    }

    /// The liveness or startup probe that failed for the running instance `id`, if one did
    /// and no kill was asked for yet.
    pub(crate) fn failed_for_restart(&mut self, uid: &str, container: &str, id: &str) -> Option<(ProbeType, Option<i64>)> {
        for kind in [ProbeType::Liveness, ProbeType::Startup] {
            let Some(w) = self.workers.get_mut(&(uid.to_string(), container.to_string(), kind)) else { continue };
            if !w.killed && w.result_for(id) == Some(ProbeResult::Failure) {
                w.killed = true;
                return Some((kind, w.spec.termination_grace_period_seconds));
            }
        }
        None
    }
}

/// What one probe found: success or failure with its output, or an error (result thrown away).
type Outcome = Result<(bool, String), String>;

impl Kubelet {
    /// Runs the probes that are due; a result that changed makes the pod sync.
    pub(super) fn run_probes(&mut self, ctx: &mut Ctx) {
        let mut changed: Vec<String> = Vec::new();
        for key in self.proc.probes.due(ctx.now) {
            let Some(mut w) = self.proc.probes.workers.remove(&key) else { continue };
            let before = (w.container_id.clone(), w.result);
            let keep = self.do_probe(ctx, &key, &mut w);
            if (w.container_id.clone(), w.result) != before && !changed.contains(&key.0) {
                changed.push(key.0.clone());
            }
            if keep {
                let period = w.period();
                while w.next_tick <= ctx.now {
                    w.next_tick = w.next_tick + period;
                }
                self.proc.probes.timers.insert((w.next_tick, key.clone()));
                self.proc.probes.workers.insert(key, w);
            }
        }
        for uid in changed {
            self.probe_sync(ctx, &uid);
        }
    }

    /// `handleProbeSync`: the pod worker syncs, so the status shows the new result and a
    /// failed liveness probe's container is killed.
    fn probe_sync(&mut self, ctx: &mut Ctx, uid: &str) {
        let Some(mut w) = self.take_worker(uid) else { return };
        self.sync_pod(ctx, &mut w);
        self.put_worker(w);
    }

    /// worker.go's `doProbe`; false when the worker should stop.
    fn do_probe(&mut self, ctx: &mut Ctx, key: &Key, w: &mut Worker) -> bool {
        let (uid, name, kind) = (key.0.as_str(), key.1.as_str(), key.2);
        let Some(status) = self.proc.statuses.cached(uid) else { return true };
        if matches!(status.phase, Some(PodPhase::Succeeded | PodPhase::Failed)) {
            return false;
        }
        let Some(c) = status.container_statuses.iter().find(|c| c.name == name && !c.container_id.is_empty()) else {
            return true;
        };
        if w.container_id != c.container_id.as_str() {
            w.container_id = c.container_id.to_string();
            w.result = kind.initial();
            w.on_hold = false;
            w.killed = false;
        }
        if w.on_hold {
            return true;
        }
        let pod = self.proc.workers.get(uid).and_then(|p| p.pod.as_pod().cloned());
        let Some(running) = c.state.running.as_ref() else {
            w.result = ProbeResult::Failure;
            let never = pod.as_ref().is_some_and(|p| p.spec.restart_policy.as_deref() == Some("Never"));
            return c.state.terminated.is_none() || !never;
        };
        if pod.as_ref().is_some_and(|p| p.metadata.is_deleting()) && kind != ProbeType::Readiness {
            w.result = ProbeResult::Success;
            return false;
        }
        let since_start = running.started_at.map(|t| ctx.now.since(t).0 / 1000).unwrap_or(0);
        if since_start < w.spec.initial_delay_seconds.max(0) as u64 {
            return true;
        }
        let started = c.started == Some(true);
        if started == (kind == ProbeType::Startup) {
            return true;
        }
        let pod_ip = status.pod_ip.clone().unwrap_or_default();
        let outcome = Self::probe_outcome(ctx, uid, kind, w, &pod_ip);
        let result = match outcome {
            Err(err) => {
                // prober.go records the error; the worker throws the result away.
                if let Some(pod) = &pod {
                    let message = format!("{} probe errored and resulted in unknown state: {err}", kind.word());
                    self.container_event(ctx, pod, name, "Warning", "Unhealthy", message);
                }
                return true;
            }
            Ok((true, _)) => ProbeResult::Success,
            Ok((false, output)) => {
                if let Some(pod) = &pod {
                    let message = format!("{} probe failed: {output}", kind.word());
                    self.container_event(ctx, pod, name, "Warning", "Unhealthy", message);
                }
                ProbeResult::Failure
            }
        };
        if w.last_result == result {
            w.result_run += 1;
        } else {
            w.last_result = result;
            w.result_run = 1;
        }
        let threshold = if result == ProbeResult::Failure { w.spec.failure_threshold } else { w.spec.success_threshold };
        if w.result_run < threshold {
            return true;
        }
        w.result = result;
        if kind != ProbeType::Readiness && result == ProbeResult::Failure {
            w.on_hold = true;
            w.result_run = 0;
        }
        true
    }

    /// What the probe finds in the container, as `runProbe` and the exec, http, tcp and grpc
    /// probers report it.
    fn probe_outcome(ctx: &Ctx, uid: &str, kind: ProbeType, w: &Worker, pod_ip: &str) -> Outcome {
        let (now, runtime) = (ctx.now, runtime(ctx));
        let program = Program::of(&w.container);
        // `sim fail-probe` is the application's fault, kept on the machine.
        let forced = runtime.probe_fault(uid, kind);
        let started_at = runtime
            .sandbox(uid)
            .and_then(|s| s.containers.get(&w.container.name))
            .and_then(|slot| match slot.current.state {
                ContainerRuntimeState::Running { started_at } => Some(started_at),
                _ => None,
            })
            .unwrap_or(now);
        let elapsed = now.since(started_at);
        let spec = &w.spec;
        let refused = |host: &str, port: i64| format!("dial tcp {host}:{port}: connect: connection refused");
        if let Some(e) = &spec.exec {
            let mounted = runtime.mounted_files(uid, &w.container.name).cloned().unwrap_or_default();
            let r = container_model::exec(&e.command, &program.files_at_with(elapsed, &mounted));
            return Ok((r.exit_code == 0 && !forced, r.output));
        }
        if let Some(h) = &spec.http_get {
            let port = resolve_port(&h.port, &w.container)?;
            let host = if h.host.is_empty() { pod_ip } else { h.host.as_str() };
            let scheme = h.scheme.as_deref().unwrap_or("HTTP").to_ascii_lowercase();
            let url = format!("{scheme}://{host}:{port}{}", h.path);
            return Ok(match program.http_status(port, &h.path, elapsed).map(|code| if forced { 500 } else { code }) {
                None => (false, format!("Get {url:?}: {}", refused(host, port))),
                Some(code) if (200..400).contains(&code) => (true, String::new()),
                Some(code) => (false, format!("HTTP probe failed with statuscode: {code}")),
            });
        }
        if let Some(t) = &spec.tcp_socket {
            let port = resolve_port(&t.port, &w.container)?;
            let host = if t.host.is_empty() { pod_ip } else { t.host.as_str() };
            let open = program.listens(port) && !forced;
            return Ok((open, if open { String::new() } else { refused(host, port) }));
        }
        if let Some(g) = &spec.grpc {
            let addr = format!("{pod_ip}:{}", g.port);
            return Ok(match program.grpc_serving(g.port.into()) {
                Some(true) if !forced => (true, "service healthy".into()),
                Some(_) => (false, "service unhealthy (responded with \"NOT_SERVING\")".into()),
                None => {
                    let within = super::timings::go_duration(Duration::secs(spec.timeout_seconds.max(1) as u64));
                    (false, format!("timeout: failed to connect service {addr:?} within {within}: context deadline exceeded"))
                }
            });
        }
        Err("missing probe handler".into())
    }
}

/// `probe.ResolveContainerPort`: a number, or the container port of that name.
fn resolve_port(port: &IntOrString, c: &Container) -> Result<i64, String> {
    let n = match port {
        IntOrString::Int(n) => *n,
        IntOrString::String(name) => match c.ports.iter().find(|p| p.name.as_deref() == Some(name.as_str())) {
            Some(p) => p.container_port,
            // "Last ditch effort - maybe it was an int stored as string?"
            None => name.parse().map_err(|_| format!("strconv.Atoi: parsing {name:?}: invalid syntax"))?,
        },
    };
    if n > 0 && n < 65536 {
        Ok(n)
    } else {
        Err(format!("invalid port number: {n}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with_ports() -> Container {
        let port = ContainerPort { container_port: 8080, name: Some("http".into()), ..Default::default() };
        Container { name: "app".into(), ports: vec![port], ..Default::default() }
    }

    #[test]
    fn ports_resolve_by_number_by_name_or_by_a_number_in_a_string() {
        let c = with_ports();
        assert_eq!(resolve_port(&IntOrString::Int(80), &c), Ok(80));
        assert_eq!(resolve_port(&IntOrString::String("http".into()), &c), Ok(8080));
        assert_eq!(resolve_port(&IntOrString::String("9090".into()), &c), Ok(9090));
        assert_eq!(resolve_port(&IntOrString::String("grpc".into()), &c), Err("strconv.Atoi: parsing \"grpc\": invalid syntax".into()));
        assert_eq!(resolve_port(&IntOrString::Int(70000), &c), Err("invalid port number: 70000".into()));
    }

    #[test]
    fn gates_belong_to_one_container_instance() {
        let mut m = ProbeManager::default();
        let key = ("u".to_string(), "app".to_string(), ProbeType::Readiness);
        let spec = Probe { period_seconds: 10, ..Default::default() };
        let worker = Worker {
            container: with_ports(),
            spec,
            next_tick: Time(0),
            container_id: "containerd://a".into(),
            result: ProbeResult::Success,
            last_result: ProbeResult::Success,
            result_run: 1,
            on_hold: false,
            killed: false,
        };
        m.workers.insert(key, worker);
        assert_eq!(m.gates("u", "app", "containerd://a"), Gates { started: true, ready: true });
        assert_eq!(m.gates("u", "app", "containerd://b"), Gates { started: true, ready: false }, "a new instance is not ready yet");
        assert_eq!(m.gates("u", "other", "containerd://a"), Gates { started: true, ready: true }, "no probe: ready when running");
        assert_eq!(ProbeType::parse("READINESS"), Some(ProbeType::Readiness));
        m.remove_pod("u");
        assert!(m.workers.is_empty());
    }
}
