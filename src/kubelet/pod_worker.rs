//! One pod's life on the node, as the kubelet's pod worker drives it (pkg/kubelet/pod_workers.go
//! and kuberuntime's `SyncPod`), as a state machine on simulated timers.
//!
//! A sync first reports the status as things stand, then acts: a sandbox if there is none, then
//! each container that is not running — back-off check, image (present, pulled, or failing),
//! create, start — one after the other, as `SyncPod` does. The status that follows from those
//! actions is reported by the *next* sync, which the PLEG triggers when its 1 s relist sees the
//! runtime change: that is why a pod turns Running up to a second after "Started container".
//! A failed sync (back-off, pull error) is retried 10–15 s later. Deletion stops the containers
//! (bounded by the grace period), tears the sandbox down, writes the terminal status, then
//! deletes the pod for good with grace 0 and a UID precondition.

use super::container_model::Program;
use super::images;
use super::runtime::{ContainerRuntimeState, PlannedExit, Runtime};
use super::status::{equal_by_kubelet, generate, merge_for_write, restarts, StatusInputs, WaitingReason};
use super::timings::{go_duration, Backoff, KubeletTimings};
use super::{addressing, runtime, runtime_mut, Kubelet, Pending};
use crate::api::{defaults, ApiRequest, DeleteRequest};
use crate::model::image_ref;
use crate::model::*;
use crate::runtime::events::EventSpec;
use crate::runtime::fasthash::FastMap;
use crate::runtime::Ctx;
use std::collections::VecDeque;
use std::rc::Rc;

/// Makes a pod's containers exit after running this long (`30s`, `2m`).
pub const ANNOTATION_CRASH_AFTER: &str = "kubeloop.dev/crash-after";
/// The exit code of that exit (default 1).
pub const ANNOTATION_EXIT_CODE: &str = "kubeloop.dev/exit-code";
/// The containers ignore SIGTERM and are killed when the grace period ends (exit 137).
pub const ANNOTATION_IGNORE_SIGTERM: &str = "kubeloop.dev/ignore-sigterm";

/// Where a pod worker is.
#[derive(Clone, Debug, PartialEq)]
pub enum WorkerPhase {
    /// In sync; waits for the next change.
    Idle,
    /// Waiting for the reflectors of the ConfigMaps and Secrets its volumes name to sync; the
    /// timer is the volume reconciler's next pass.
    Mounting,
    /// The last sync failed (back-off, pull error); the timer is the retry.
    BackingOff,
    Syncing(SyncRun),
    /// Stop signals sent; the timer is when the last container will have exited.
    Terminating,
    /// Containers stopped; the timer is when the sandbox and volumes are gone.
    TearingDown,
    /// The final status and the delete are with the status manager.
    Finalizing,
    /// Terminal by its restart policy: nothing more until it is deleted.
    Finished,
}

/// One `SyncPod` in progress.
#[derive(Clone, Debug, PartialEq)]
pub struct SyncRun {
    /// When the sandbox being created is ready, if one is.
    pub sandbox_ready_at: Option<Time>,
    /// Containers (spec indexes) still to start, in order.
    pub to_start: VecDeque<usize>,
    pub current: Option<ContainerStart>,
    /// A container could not be started (back-off or pull error): the sync returns an error.
    pub failed: bool,
    /// The runtime changed (sandbox, container started): the PLEG will notice.
    pub changed_runtime: bool,
}

#[derive(Clone, Debug, PartialEq)]
pub struct ContainerStart {
    pub index: usize,
    pub step: StartStep,
}

#[derive(Clone, Debug, PartialEq)]
pub enum StartStep {
    /// "Pulling" was recorded; waiting for the serialized puller. `since` counts the waiting.
    AwaitingPull {
        since: Time,
    },
    Pulling {
        since: Time,
        began: Time,
        until: Time,
        error: Option<String>,
    },
    Creating {
        until: Time,
    },
    Starting {
        until: Time,
    },
}

#[derive(Clone, Debug)]
pub struct PodWorker {
    pub key: ObjectKey,
    pub uid: String,
    pub pod: Rc<Object>,
    pub phase: WorkerPhase,
    pub timer: Option<Time>,
    /// The pod is gone from the API server (force-deleted): kill locally, write nothing.
    pub removed: bool,
    /// The PLEG saw a change while a sync was running: sync again after it.
    pub pleg_pending: bool,
}

impl PodWorker {
    /// Work in progress that `sim settle` must wait for (back-off waits do not count).
    pub fn is_busy(&self) -> bool {
        self.pleg_pending
            || matches!(
                self.phase,
                WorkerPhase::Syncing(_)
                    | WorkerPhase::Mounting
                    | WorkerPhase::Terminating
                    | WorkerPhase::TearingDown
                    | WorkerPhase::Finalizing
            )
    }
    fn is_terminating(&self) -> bool {
        matches!(self.phase, WorkerPhase::Terminating | WorkerPhase::TearingDown | WorkerPhase::Finalizing)
    }
    fn pod(&self) -> Option<&Pod> {
        self.pod.as_pod()
    }
    fn name(&self) -> &str {
        &self.key.name
    }
}

/// `format.Pod`: `NAME_NAMESPACE(UID)`, as kubelet messages name a pod.
pub fn format_pod(pod: &Pod) -> String {
    format!("{}_{}({})", pod.metadata.name, pod.metadata.namespace, pod.metadata.uid)
}

/// The exit a pod's annotations plan for a container started at `started`.
fn planned_crash(pod: &Pod, started: Time, now: Time) -> Option<PlannedExit> {
    let after = Duration::parse(pod.metadata.annotations.get(ANNOTATION_CRASH_AFTER)?).ok()?;
    let exit_code = pod.metadata.annotations.get(ANNOTATION_EXIT_CODE).and_then(|c| c.trim().parse().ok()).unwrap_or(1);
    Some(PlannedExit { at: (started + after).max(now), exit_code })
}

/// Whether a container (by its runtime state) must be started by a sync.
fn needs_start(state: Option<&ContainerRuntimeState>, restart_policy: &str) -> bool {
    match state {
        None | Some(ContainerRuntimeState::Created) => true,
        Some(ContainerRuntimeState::Running { .. }) => false,
        Some(ContainerRuntimeState::Exited { exit_code, .. }) => restarts(restart_policy, *exit_code),
    }
}

/// Whether any of the pod's containers runs on the machine now.
fn has_running_containers(runtime: &Runtime, uid: &str) -> bool {
    runtime.sandbox(uid).is_some_and(|s| s.containers.values().any(|c| c.current.state.is_running()))
}

/// What ensuring a container's image came to.
enum ImageOutcome {
    Present,
    Pull,
    Failed,
}

impl Kubelet {
    /// The exit a container started at `started` will make: the pod's annotations, else a crash
    /// injected on the machine (`sim crash`).
    fn crash_for(ctx: &Ctx, pod: &Pod, uid: &str, started: Time) -> Option<PlannedExit> {
        let now = ctx.now;
        planned_crash(pod, started, now).or_else(|| {
            let plan = runtime(ctx).crash_plan(uid)?;
            Some(PlannedExit { at: (started + plan.after).max(now), exit_code: plan.exit_code })
        })
    }

    // ----- the worker map: take a worker out, work on it, put it back -----

    pub(super) fn take_worker(&mut self, uid: &str) -> Option<PodWorker> {
        let w = self.proc.workers.remove(uid)?;
        if let Some(t) = w.timer {
            self.proc.timers.remove(&(t, w.uid.clone()));
        }
        Some(w)
    }

    pub(super) fn put_worker(&mut self, w: PodWorker) {
        if let Some(t) = w.timer {
            self.proc.timers.insert((t, w.uid.clone()));
        }
        if w.is_busy() {
            if !self.proc.busy.contains(&w.uid) {
                self.proc.busy.insert(w.uid.clone());
            }
        } else {
            self.proc.busy.remove(&w.uid);
        }
        self.proc.workers.insert(w.uid.clone(), w);
    }

    /// Forgets a pod entirely: its worker, status, back-offs, and its containers on the node.
    fn forget_pod(&mut self, ctx: &mut Ctx, uid: &str) {
        self.proc.busy.remove(uid);
        self.proc.statuses.forget(uid);
        self.proc.probes.remove_pod(uid);
        self.proc.reasons.remove(uid);
        self.proc.pleg_dirty.remove(uid);
        self.proc.mount_failures.remove(uid);
        self.proc.crash_backoff.retain(|(u, _), _| u != uid);
        self.proc.image_backoff.retain(|(u, _), _| u != uid);
        self.proc.pull_errors.retain(|(u, _), _| u != uid);
        self.cancel_pull(ctx, uid);
        runtime_mut(ctx).remove_sandbox(uid);
    }

    // ----- what the API server says about pods -----

    /// A pod bound to this node appeared or changed.
    pub(super) fn pod_changed(&mut self, ctx: &mut Ctx, object: Rc<Object>) {
        let Some(pod) = object.as_pod() else { return };
        if pod.node_name() != Some(self.config.name.as_str()) {
            return;
        }
        let uid = pod.metadata.uid.clone();
        match self.take_worker(&uid) {
            Some(mut w) => {
                let before = w.pod.clone();
                w.pod = object.clone();
                if pod.metadata.is_deleting() && !w.is_terminating() {
                    self.begin_termination(ctx, &mut w);
                } else if before.meta().annotations != pod.metadata.annotations {
                    self.replan_crashes(ctx, &w);
                }
                self.reconcile_status(ctx, pod);
                self.put_worker(w);
            }
            None => {
                self.remove_other_incarnations(ctx, &object);
                let key = object.key();
                let finished = pod.is_terminal() && runtime(ctx).sandbox(&uid).is_none();
                let phase = if finished { WorkerPhase::Finished } else { WorkerPhase::Idle };
                let mut w =
                    PodWorker { key, uid: uid.to_string(), pod: object.clone(), phase, timer: None, removed: false, pleg_pending: false };
                if !finished {
                    self.proc.configs.register_pod(ctx, pod);
                    self.proc.probes.add_pod(ctx, pod);
                    if pod.metadata.is_deleting() {
                        self.begin_termination(ctx, &mut w);
                    } else {
                        self.sync_pod(ctx, &mut w);
                    }
                }
                self.put_worker(w);
            }
        }
    }

    /// The same name under another UID (a StatefulSet's pod made again while this kubelet
    /// missed the delete, or etcd restored to another incarnation): the informer, keyed by name,
    /// saw an update, but the pod it had is gone. The kubelet keys pods by UID and kills the old
    /// one, as its periodic `HandlePodCleanups` would.
    fn remove_other_incarnations(&mut self, ctx: &mut Ctx, object: &Rc<Object>) {
        let (key, uid) = (object.key(), object.meta().uid.clone());
        let mut stale: Vec<Rc<Object>> =
            self.proc.workers.values().filter(|w| w.key == key && w.uid != uid.as_str()).map(|w| w.pod.clone()).collect();
        crate::sort::sort_by(&mut stale, |a, b| a.meta().uid.cmp(&b.meta().uid));
        for old in stale {
            self.pod_removed(ctx, old);
        }
    }

    /// A pod left the API server (deleted for good, or force-deleted under the kubelet).
    pub(super) fn pod_removed(&mut self, ctx: &mut Ctx, object: Rc<Object>) {
        let uid = object.meta().uid.clone();
        let mut w = match self.take_worker(&uid) {
            Some(w) => w,
            None if runtime(ctx).sandbox(&uid).is_some() => {
                let key = object.key();
                PodWorker {
                    key,
                    uid: uid.to_string(),
                    pod: object,
                    phase: WorkerPhase::Idle,
                    timer: None,
                    removed: true,
                    pleg_pending: false,
                }
            }
            None => return,
        };
        w.removed = true;
        self.proc.statuses.forget(&uid);
        match w.phase {
            WorkerPhase::Terminating | WorkerPhase::TearingDown => self.put_worker(w),
            _ if has_running_containers(runtime(ctx), &uid) => {
                self.begin_termination(ctx, &mut w);
                self.put_worker(w);
            }
            _ => {
                let what = if w.phase == WorkerPhase::Finalizing { "deleted" } else { "removed" };
                self.note(ctx.now, format!("{}: {what}", w.name()));
                self.forget_pod(ctx, &uid);
            }
        }
    }

    /// After a (re)start: containers of pods the API server no longer has are killed
    /// (`HandlePodCleanups`), with their events, as a restarted kubelet does.
    pub(super) fn kill_orphans(&mut self, ctx: &mut Ctx) {
        for uid in runtime(ctx).sandbox_uids() {
            if self.proc.workers.contains_key(&uid) {
                continue;
            }
            let Some(sandbox) = runtime(ctx).sandbox(&uid) else {
                continue;
            };
            let containers = sandbox
                .containers
                .iter()
                .map(|(name, slot)| Container { name: name.clone(), image: slot.current.image.clone(), ..Default::default() })
                .collect::<Vec<_>>();
            let pod = Pod {
                metadata: ObjectMeta {
                    name: sandbox.pod.name.clone(),
                    namespace: sandbox.pod.namespace.clone(),
                    uid: uid.as_str().into(),
                    ..Default::default()
                },
                spec: PodSpec { containers: containers.into(), node_name: Some(self.config.name.clone()), ..Default::default() }.into(),
                ..Default::default()
            };
            self.pod_removed(ctx, Rc::new(Object::Pod(pod)));
        }
    }

    /// The crash annotations changed: running containers get the new planned exit.
    fn replan_crashes(&mut self, ctx: &mut Ctx, w: &PodWorker) {
        let Some(pod) = w.pod() else { return };
        let Some(sandbox) = runtime(ctx).sandbox(&w.uid) else {
            return;
        };
        let running: Vec<(String, Time)> = sandbox
            .containers
            .iter()
            .filter_map(|(name, slot)| match slot.current.state {
                ContainerRuntimeState::Running { started_at } => Some((name.clone(), started_at)),
                _ => None,
            })
            .collect();
        for (name, started) in running {
            if let Some(exit) = Self::crash_for(ctx, pod, &w.uid, started) {
                runtime_mut(ctx).plan_exit(&w.uid, &name, exit);
            }
        }
    }

    // ----- syncing -----

    /// `SyncPod`: report the status as it stands, then start what is not running.
    pub(super) fn sync_pod(&mut self, ctx: &mut Ctx, w: &mut PodWorker) {
        if w.removed || w.pod().is_some_and(|p| p.metadata.is_deleting()) {
            if !w.is_terminating() {
                self.begin_termination(ctx, w);
            }
            return;
        }
        if let WorkerPhase::Syncing(_) = w.phase {
            w.pleg_pending = true;
            return;
        }
        if w.is_terminating() || w.phase == WorkerPhase::Finished {
            return;
        }
        self.proc.turns += 1;
        w.timer = None;
        self.note_crash_backoffs(ctx, w);
        let status = self.generate_status(ctx, w, false);
        let terminal = matches!(status.phase, Some(PodPhase::Succeeded | PodPhase::Failed));
        self.set_status(ctx, w, status);
        if terminal {
            w.phase = WorkerPhase::Finished;
            return;
        }
        self.proc.probes.trigger_unready(&w.uid, ctx.now);
        self.kill_unhealthy(ctx, w);
        let object = w.pod.clone();
        let Some(pod) = object.as_pod() else { return };
        if !pod.spec.volumes.is_empty() && !runtime(ctx).has_volumes(&w.uid) && !self.mount_volumes(ctx, w, pod) {
            return;
        }
        let policy = pod.spec.restart_policy.as_deref().unwrap_or("Always");
        let sandbox = runtime(ctx).sandbox(&w.uid).filter(|s| s.ready);
        let to_start: VecDeque<usize> = pod
            .spec
            .containers
            .iter()
            .enumerate()
            .filter(|(_, c)| needs_start(sandbox.and_then(|s| s.containers.get(&c.name)).map(|slot| &slot.current.state), policy))
            .map(|(i, _)| i)
            .collect();
        let sandbox_ready_at = sandbox.is_none().then(|| ctx.now + self.timings.draw(ctx.rng, self.timings.sandbox));
        if sandbox_ready_at.is_none() && to_start.is_empty() {
            w.phase = WorkerPhase::Idle;
            return;
        }
        w.phase = WorkerPhase::Syncing(SyncRun { sandbox_ready_at, to_start, current: None, failed: false, changed_runtime: false });
        self.advance_sync(ctx, w);
    }

    /// Runs the sync's steps that are due, up to the next one that takes time.
    pub(super) fn advance_sync(&mut self, ctx: &mut Ctx, w: &mut PodWorker) {
        let object = w.pod.clone();
        let Some(pod) = object.as_pod() else { return };
        // Each turn either finishes a step or returns; the bound only guards against a bug.
        for _ in 0..(4 * pod.spec.containers.len() + 8) {
            let WorkerPhase::Syncing(run) = &mut w.phase else {
                return;
            };
            if let Some(at) = run.sandbox_ready_at {
                if at > ctx.now {
                    w.timer = Some(at);
                    return;
                }
                let now = ctx.now;
                runtime_mut(ctx).create_sandbox(w.key.clone(), &w.uid, now);
                run.sandbox_ready_at = None;
                run.changed_runtime = true;
            }
            let Some(current) = run.current.clone() else {
                match run.to_start.pop_front() {
                    Some(index) => {
                        let step = self.begin_container(ctx, pod, &w.uid, index);
                        let WorkerPhase::Syncing(run) = &mut w.phase else {
                            return;
                        };
                        run.failed |= step.is_none();
                        run.current = step.map(|step| ContainerStart { index, step });
                    }
                    None => return self.finish_sync(ctx, w),
                }
                continue;
            };
            let Some(container) = pod.spec.containers.get(current.index) else {
                run.current = None;
                continue;
            };
            let finished_ok = matches!(current.step, StartStep::Starting { .. });
            let created = matches!(current.step, StartStep::Creating { .. });
            let next = match current.step {
                StartStep::AwaitingPull { .. } => {
                    w.timer = None;
                    return;
                }
                StartStep::Pulling { until, .. } | StartStep::Creating { until } | StartStep::Starting { until } if until > ctx.now => {
                    w.timer = Some(until);
                    return;
                }
                StartStep::Pulling { since, began, error, .. } => self.complete_pull(ctx, pod, &w.uid, container, since, began, error),
                StartStep::Creating { .. } => {
                    let id = container_id(ctx);
                    runtime_mut(ctx).create_container(&w.uid, &container.name, &container.image, id);
                    self.container_event(ctx, pod, &container.name, "Normal", "Created", format!("Created container: {}", container.name));
                    Some(StartStep::Starting { until: ctx.now + self.timings.draw(ctx.rng, self.timings.container_start) })
                }
                StartStep::Starting { .. } => {
                    let crash = Self::crash_for(ctx, pod, &w.uid, ctx.now);
                    // The program's own end (a script that finishes) or the injected crash, whichever is first.
                    let mounted = runtime(ctx).mounted_files(&w.uid, &container.name).cloned().unwrap_or_default();
                    let own = Program::of(container)
                        .draw_work(ctx.rng)
                        .own_exit_with(&mounted)
                        .map(|(after, exit_code)| PlannedExit { at: ctx.now + after, exit_code });
                    let exit = [crash, own].into_iter().flatten().min_by_key(|e| e.at);
                    let now = ctx.now;
                    runtime_mut(ctx).start_container(&w.uid, &container.name, now, exit);
                    self.container_event(ctx, pod, &container.name, "Normal", "Started", format!("Started container {}", container.name));
                    if let Some(r) = self.proc.reasons.get_mut(&w.uid) {
                        r.remove(&container.name);
                    }
                    self.note(ctx.now, format!("{}: started {}", pod.metadata.name, container.name));
                    None
                }
            };
            let WorkerPhase::Syncing(run) = &mut w.phase else {
                return;
            };
            run.changed_runtime |= created || finished_ok;
            run.failed |= next.is_none() && !finished_ok;
            run.current = next.map(|step| ContainerStart { index: current.index, step });
        }
    }

    /// `computePodActions` for a container that failed its liveness or startup probe: kill it
    /// (`Killing` "Container NAME failed liveness probe, will be restarted") with the probe's
    /// grace period, else the pod's. The exit follows the program's way with SIGTERM; the
    /// restart follows at the sync the PLEG brings, with the usual back-off.
    fn kill_unhealthy(&mut self, ctx: &mut Ctx, w: &PodWorker) {
        let Some(pod) = w.pod() else { return };
        let Some(sandbox) = runtime(ctx).sandbox(&w.uid) else { return };
        let running: Vec<(String, String)> = sandbox
            .containers
            .iter()
            .filter(|(_, slot)| slot.current.state.is_running())
            .map(|(name, slot)| (name.clone(), format!("containerd://{}", slot.current.id)))
            .collect();
        for (name, id) in running {
            let Some((kind, probe_grace)) = self.proc.probes.failed_for_restart(&w.uid, &name, &id) else { continue };
            let word = kind.word().to_ascii_lowercase();
            self.container_event(ctx, pod, &name, "Normal", "Killing", format!("Container {name} failed {word} probe, will be restarted"));
            let grace_secs =
                probe_grace.or(pod.spec.termination_grace_period_seconds).unwrap_or(defaults::DEFAULT_TERMINATION_GRACE_SECONDS);
            let grace = Duration::secs(grace_secs.max(0) as u64).max(self.timings.minimum_grace);
            let program = pod.spec.containers.iter().find(|c| c.name == name).map(Program::of);
            let (after, exit_code) = self.stop_after(ctx, program.and_then(|p| p.on_sigterm()), grace);
            let at = ctx.now + after;
            runtime_mut(ctx).plan_exit(&w.uid, &name, PlannedExit { at, exit_code });
            self.note(ctx.now, format!("{}: killing {name}, failed {word} probe", pod.metadata.name));
        }
    }

    /// When a container sent SIGTERM exits, and with what status: its own answer (`on_sigterm`)
    /// after the runtime's stop time, or, if it ignores the signal, SIGKILL (137) when the grace
    /// period ends.
    fn stop_after(&self, ctx: &mut Ctx, on_sigterm: Option<i32>, grace: Duration) -> (Duration, i32) {
        match on_sigterm {
            Some(code) => (self.timings.draw(ctx.rng, self.timings.container_stop).min(grace), code),
            None => (grace, 137),
        }
    }

    /// The sync ended: the PLEG will bring the next one if the runtime changed; a failed sync
    /// is retried after the pod worker's back-off.
    fn finish_sync(&mut self, ctx: &mut Ctx, w: &mut PodWorker) {
        let WorkerPhase::Syncing(run) = std::mem::replace(&mut w.phase, WorkerPhase::Idle) else {
            return;
        };
        w.timer = None;
        if run.changed_runtime || w.pleg_pending {
            w.pleg_pending = false;
            self.mark_pleg_dirty(&w.uid, ctx.now);
        } else if run.failed {
            w.phase = WorkerPhase::BackingOff;
            w.timer = Some(ctx.now + KubeletTimings::jitter_up(ctx.rng, self.timings.sync_error_backoff, 0.5));
        }
    }

    /// The first instant steps of starting one container: the restart back-off, then the image.
    /// `None` when it cannot start this time.
    fn begin_container(&mut self, ctx: &mut Ctx, pod: &Pod, uid: &str, index: usize) -> Option<StartStep> {
        let container = pod.spec.containers.get(index)?;
        let exited_at =
            runtime(ctx).sandbox(uid).and_then(|s| s.containers.get(&container.name)).and_then(|slot| match slot.current.state {
                ContainerRuntimeState::Exited { finished_at, .. } => Some(finished_at),
                _ => None,
            });
        if let Some(finished_at) = exited_at {
            if !self.restart_allowed(ctx, pod, uid, &container.name, finished_at) {
                return None;
            }
        }
        match self.ensure_image(ctx, pod, uid, container) {
            ImageOutcome::Present => {
                if !self.container_config(ctx, pod, uid, container) {
                    return None;
                }
                Some(StartStep::Creating { until: ctx.now + self.timings.draw(ctx.rng, self.timings.container_create) })
            }
            ImageOutcome::Failed => None,
            ImageOutcome::Pull => {
                let since = ctx.now;
                if self.request_pull(uid) {
                    Some(self.pull_step(ctx, pod, &container.image, since))
                } else {
                    Some(StartStep::AwaitingPull { since })
                }
            }
        }
    }

    /// `generateContainerConfig`'s environment (`makeEnvironmentVariables`), after the image and
    /// before the create, as `startContainer` orders them. An error leaves the container Waiting
    /// with `CreateContainerConfigError` and records `Failed` "Error: MESSAGE"; the sync fails
    /// and the pod worker retries it after its 10–15 s back-off, which is how the pod heals once
    /// the ConfigMap or Secret exists (nothing syncs the pod when it appears).
    fn container_config(&mut self, ctx: &mut Ctx, pod: &Pod, uid: &str, container: &Container) -> bool {
        if container.env.is_empty() && container.env_from.is_empty() {
            return true;
        }
        let configs = &self.proc.configs;
        let ns = pod.metadata.namespace.as_str();
        let lookup = |kind: Kind, name: &str| configs.get(kind, ns, name);
        let Err(message) = super::config_manager::make_environment(pod, container, &lookup) else {
            return true;
        };
        let name = container.name.as_str();
        self.container_event(ctx, pod, name, "Warning", "Failed", format!("Error: {message}"));
        self.set_reason(uid, name, "CreateContainerConfigError", message);
        self.note(ctx.now, format!("{}: cannot configure {name}", pod.metadata.name));
        false
    }

    /// The volume manager's `WaitForAttachAndMount`, before the sandbox: every configMap and
    /// secret volume set up from the kubelet's cache. False when the sync must wait: for the
    /// reflectors' first list (a reconciler pass, 100 ms, later), or after a failed set-up,
    /// with a `FailedMount` Warning, until the reconciler's next try. Its back-off is the
    /// operation executor's (nestedpendingoperations.go: 500 ms doubling on each failure to
    /// 2 min 2 s), so a pod heals at the first try after its ConfigMap or Secret appears.
    fn mount_volumes(&mut self, ctx: &mut Ctx, w: &mut PodWorker, pod: &Pod) -> bool {
        if !self.proc.configs.synced_for(pod) {
            w.phase = WorkerPhase::Mounting;
            w.timer = Some(ctx.now + self.timings.volume_reconciler_period);
            return false;
        }
        let configs = &self.proc.configs;
        let ns = pod.metadata.namespace.as_str();
        let lookup = |kind: Kind, name: &str| configs.get(kind, ns, name);
        match super::config_manager::set_up_volumes(pod, &lookup) {
            Ok(files) => {
                runtime_mut(ctx).set_volumes(&w.uid, files);
                self.proc.mount_failures.remove(&w.uid);
                true
            }
            Err(failure) => {
                let failures = self.proc.mount_failures.entry(w.uid.clone()).or_default();
                *failures += 1;
                let n = (*failures - 1).min(16);
                let delay = Duration(self.timings.mount_backoff_initial.0.saturating_mul(1 << n)).min(self.timings.mount_backoff_max);
                self.pod_event(ctx, pod, "Warning", "FailedMount", failure.message());
                self.note(ctx.now, format!("{}: cannot mount {}", pod.metadata.name, failure.volume));
                w.phase = WorkerPhase::BackingOff;
                w.timer = Some(ctx.now + delay);
                false
            }
        }
    }

    fn crash_backoff(&self) -> Backoff {
        Backoff { initial: self.timings.crash_backoff_initial, max: self.timings.crash_backoff_max }
    }

    /// The delay a container that exited at `finished_at` is still backing off for, if it is.
    fn crash_backoff_delay(&self, uid: &str, name: &str, finished_at: Time, now: Time) -> Option<Duration> {
        let backoff = self.crash_backoff();
        let entry = self.proc.crash_backoff.get(&(uid.to_string(), name.to_string())).copied();
        backoff.in_backoff_since(entry.as_ref(), finished_at, now).then(|| entry.map_or(backoff.initial, |e| e.delay))
    }

    /// `doBackOff`'s waiting reason: "back-off 10s restarting failed container=NAME pod=NAME_NS(UID)".
    fn set_crash_backoff_reason(&mut self, pod: &Pod, name: &str, delay: Duration) {
        let message = format!("back-off {} restarting failed container={name} pod={}", go_duration(delay), format_pod(pod));
        self.set_reason(&pod.metadata.uid, name, "CrashLoopBackOff", message);
    }

    /// The back-off the sync is about to find, written into the reason cache *before* the status
    /// is generated, so that the sync the PLEG brings after a crash reports CrashLoopBackOff at
    /// once (with the exit in `lastState`), as a kubelet does within a relist or two of the exit.
    /// Without it the reason only reached the status at the pod worker's next sync, 10–15 s on,
    /// and kubectl showed the crashed container as Error all that time. The BackOff event and the
    /// decision itself stay with `restart_allowed`, where `SyncPod` makes them.
    fn note_crash_backoffs(&mut self, ctx: &Ctx, w: &PodWorker) {
        let Some(pod) = w.pod() else { return };
        let Some(sandbox) = runtime(ctx).sandbox(&w.uid) else { return };
        let policy = pod.spec.restart_policy.as_deref().unwrap_or("Always");
        let backing_off: Vec<(String, Duration)> = pod
            .spec
            .containers
            .iter()
            .filter_map(|c| match sandbox.containers.get(&c.name)?.current.state {
                ContainerRuntimeState::Exited { exit_code, finished_at, .. } if restarts(policy, exit_code) => {
                    self.crash_backoff_delay(&w.uid, &c.name, finished_at, ctx.now).map(|d| (c.name.clone(), d))
                }
                _ => None,
            })
            .collect();
        for (name, delay) in backing_off {
            self.set_crash_backoff_reason(pod, &name, delay);
        }
    }

    /// `doBackOff`: a container that exited may restart only once its back-off has passed.
    fn restart_allowed(&mut self, ctx: &mut Ctx, pod: &Pod, uid: &str, name: &str, finished_at: Time) -> bool {
        if let Some(delay) = self.crash_backoff_delay(uid, name, finished_at, ctx.now) {
            let who = format_pod(pod);
            self.container_event(ctx, pod, name, "Warning", "BackOff", format!("Back-off restarting failed container {name} in pod {who}"));
            self.set_crash_backoff_reason(pod, name, delay);
            self.note(ctx.now, format!("{}: back-off {} restarting {name}", pod.metadata.name, go_duration(delay)));
            return false;
        }
        let key = (uid.to_string(), name.to_string());
        let entry = self.proc.crash_backoff.get(&key).copied();
        self.proc.crash_backoff.insert(key, self.crash_backoff().next(entry, finished_at, ctx.now));
        true
    }

    /// `EnsureImageExists`: present, to be pulled, or failing (a name that does not parse,
    /// never-pull, pull back-off).
    fn ensure_image(&mut self, ctx: &mut Ctx, pod: &Pod, uid: &str, container: &Container) -> ImageOutcome {
        let image = container.image.as_str();
        if let Some(why) = image_ref::invalid_reference(image) {
            self.invalid_image_name(ctx, pod, uid, container, &why);
            return ImageOutcome::Failed;
        }
        let policy = container.image_pull_policy.clone().unwrap_or_else(|| defaults::default_pull_policy(image).to_string());
        let present = runtime(ctx).has_image(image);
        let should_pull = match policy.as_str() {
            "Never" => false,
            "Always" => true,
            _ => !present,
        };
        let name = container.name.as_str();
        if !should_pull {
            if present {
                self.container_event(ctx, pod, name, "Normal", "Pulled", format!("Container image {image:?} already present on machine"));
                return ImageOutcome::Present;
            }
            let message = format!("Container image {image:?} is not present with pull policy of Never");
            self.container_event(ctx, pod, name, "Warning", "ErrImageNeverPull", message.clone());
            self.container_event(ctx, pod, name, "Warning", "Failed", "Error: ErrImageNeverPull".to_string());
            self.set_reason(uid, name, "ErrImageNeverPull", message);
            return ImageOutcome::Failed;
        }
        let backoff = Backoff { initial: self.timings.image_backoff_initial, max: self.timings.image_backoff_max };
        let key = (uid.to_string(), image.to_string());
        if backoff.in_backoff_since_update(self.proc.image_backoff.get(&key), ctx.now) {
            self.container_event(ctx, pod, name, "Normal", "BackOff", format!("Back-off pulling image {image:?}"));
            self.container_event(ctx, pod, name, "Warning", "Failed", "Error: ImagePullBackOff".to_string());
            let mut message = format!("Back-off pulling image {image:?}");
            if let Some(previous) = self.proc.pull_errors.get(&key) {
                message = format!("{message}: {previous}");
            }
            self.set_reason(uid, name, "ImagePullBackOff", message);
            self.note(ctx.now, format!("{}: back-off pulling {image}", pod.metadata.name));
            return ImageOutcome::Failed;
        }
        self.container_event(ctx, pod, name, "Normal", "Pulling", format!("Pulling image {image:?}"));
        self.note(ctx.now, format!("{}: pulling image {image}", pod.metadata.name));
        ImageOutcome::Pull
    }

    /// `applyDefaultImageTag` failed: nothing is pulled, and the sync fails. No image back-off
    /// follows (none was pulled), so the pod worker's own 10–15 s retry parses it again, and
    /// records the event again, until the spec changes.
    fn invalid_image_name(&mut self, ctx: &mut Ctx, pod: &Pod, uid: &str, container: &Container, why: &str) {
        let (image, name) = (container.image.as_str(), container.name.as_str());
        let message = format!("Failed to apply default image tag {image:?}: couldn't parse image name {image:?}: {why}");
        self.container_event(ctx, pod, name, "Warning", "InspectFailed", message.clone());
        self.container_event(ctx, pod, name, "Warning", "Failed", "Error: InvalidImageName".to_string());
        self.set_reason(uid, name, "InvalidImageName", message);
        self.note(ctx.now, format!("{}: invalid image name {image}", pod.metadata.name));
    }

    /// The pull as the runtime will do it: fast if the image arrived meanwhile, slow if not,
    /// failing if the registry will refuse it.
    fn pull_step(&mut self, ctx: &mut Ctx, pod: &Pod, image: &str, since: Time) -> StartStep {
        let error = images::pull_failure(pod, image);
        let t = &self.timings;
        let took = if error.is_some() {
            t.draw(ctx.rng, t.image_pull_failure)
        } else if runtime(ctx).has_image(image) {
            t.draw(ctx.rng, t.image_repull)
        } else {
            Duration(ctx.rng.jitter(t.image_pull.0, t.image_pull_jitter))
        };
        StartStep::Pulling { since, began: ctx.now, until: ctx.now + took, error }
    }

    /// A pull ended: the image is stored and reported, or the failure recorded and backed off.
    #[allow(clippy::too_many_arguments)]
    fn complete_pull(
        &mut self,
        ctx: &mut Ctx,
        pod: &Pod,
        uid: &str,
        container: &Container,
        since: Time,
        began: Time,
        error: Option<String>,
    ) -> Option<StartStep> {
        let image = container.image.as_str();
        let name = container.name.as_str();
        let key = (uid.to_string(), image.to_string());
        if error.is_none() {
            // Stored before the next queued pull starts, which then finds it present.
            let now = ctx.now;
            runtime_mut(ctx).add_image(image, now);
        }
        self.release_puller(ctx, uid);
        if let Some(err) = error {
            self.container_event(ctx, pod, name, "Warning", "Failed", format!("Failed to pull image {image:?}: {err}"));
            let backoff = Backoff { initial: self.timings.image_backoff_initial, max: self.timings.image_backoff_max };
            let next = backoff.next(self.proc.image_backoff.get(&key).copied(), ctx.now, ctx.now);
            self.proc.image_backoff.insert(key.clone(), next);
            self.proc.pull_errors.insert(key, format!("ErrImagePull: {err}"));
            self.container_event(ctx, pod, name, "Warning", "Failed", "Error: ErrImagePull".to_string());
            self.set_reason(uid, name, "ErrImagePull", err);
            self.note(ctx.now, format!("{}: failed to pull {image}", pod.metadata.name));
            return None;
        }
        self.proc.image_backoff.remove(&key);
        self.proc.pull_errors.remove(&key);
        let size = images::size_bytes(&images::normalize(image));
        let pulled = go_duration(ctx.now.since(began));
        let waited = go_duration(ctx.now.since(since));
        let message = format!("Successfully pulled image {image:?} in {pulled} ({waited} including waiting). Image size: {size} bytes.");
        self.container_event(ctx, pod, name, "Normal", "Pulled", message);
        if !self.container_config(ctx, pod, uid, container) {
            return None;
        }
        Some(StartStep::Creating { until: ctx.now + self.timings.draw(ctx.rng, self.timings.container_create) })
    }

    // ----- the serialized image puller -----

    /// Asks for the puller; true if this pod may pull now, false if it queued.
    fn request_pull(&mut self, uid: &str) -> bool {
        if !self.timings.serialize_image_pulls {
            return true;
        }
        if self.proc.pulling.is_none() {
            self.proc.pulling = Some(uid.to_string());
            return true;
        }
        if !self.proc.pull_queue.iter().any(|u| u == uid) {
            self.proc.pull_queue.push_back(uid.to_string());
        }
        false
    }

    /// A pull ended (or was abandoned): the next queued pod starts its pull.
    fn release_puller(&mut self, ctx: &mut Ctx, uid: &str) {
        if self.proc.pulling.as_deref() != Some(uid) {
            return;
        }
        self.proc.pulling = None;
        while let Some(next) = self.proc.pull_queue.pop_front() {
            if self.start_queued_pull(ctx, &next) {
                self.proc.pulling = Some(next);
                return;
            }
        }
    }

    /// Moves a queued pod's pull from waiting to pulling; false if it no longer waits.
    fn start_queued_pull(&mut self, ctx: &mut Ctx, uid: &str) -> bool {
        let Some(mut w) = self.take_worker(uid) else {
            return false;
        };
        let object = w.pod.clone();
        let waiting = match (&w.phase, object.as_pod()) {
            (
                WorkerPhase::Syncing(SyncRun { current: Some(ContainerStart { index, step: StartStep::AwaitingPull { since } }), .. }),
                Some(pod),
            ) => pod.spec.containers.get(*index).map(|c| (pod, *index, *since, c.image.clone())),
            _ => None,
        };
        let Some((pod, index, since, image)) = waiting else {
            self.put_worker(w);
            return false;
        };
        let step = self.pull_step(ctx, pod, &image, since);
        if let StartStep::Pulling { until, .. } = step {
            w.timer = Some(until);
        }
        if let WorkerPhase::Syncing(run) = &mut w.phase {
            run.current = Some(ContainerStart { index, step });
        }
        self.put_worker(w);
        true
    }

    /// A pod stops waiting for the puller, or gives it up mid-pull.
    fn cancel_pull(&mut self, ctx: &mut Ctx, uid: &str) {
        self.proc.pull_queue.retain(|u| u != uid);
        self.release_puller(ctx, uid);
    }

    // ----- termination -----

    /// `SyncTerminatingPod`: Killing events, stop signals, bounded by the grace period.
    pub(super) fn begin_termination(&mut self, ctx: &mut Ctx, w: &mut PodWorker) {
        self.cancel_pull(ctx, &w.uid);
        self.proc.probes.stop_liveness_and_startup(&w.uid);
        runtime_mut(ctx).remove_unstarted(&w.uid);
        let object = w.pod.clone();
        let pod = object.as_pod();
        let grace_secs = pod
            .and_then(|p| p.metadata.deletion_grace_period_seconds.or(p.spec.termination_grace_period_seconds))
            .unwrap_or(defaults::DEFAULT_TERMINATION_GRACE_SECONDS)
            .max(0) as u64;
        let grace = Duration::secs(grace_secs).max(self.timings.minimum_grace);
        let ignores_sigterm = pod.is_some_and(|p| p.metadata.annotations.get(ANNOTATION_IGNORE_SIGTERM).is_some_and(|v| v == "true"));
        let running: Vec<String> = runtime(ctx)
            .sandbox(&w.uid)
            .map(|s| s.containers.iter().filter(|(_, slot)| slot.current.state.is_running()).map(|(n, _)| n.clone()).collect())
            .unwrap_or_default();
        let mut last_exit = ctx.now;
        for name in &running {
            if let Some(pod) = pod {
                self.container_event(ctx, pod, name, "Normal", "Killing", format!("Stopping container {name}"));
            }
            // The process's own answer to SIGTERM (a shell as PID 1 ignores it and is killed at
            // the end of the grace period, as on a real node); the annotation forces that.
            let program = pod.and_then(|p| p.spec.containers.iter().find(|c| &c.name == name)).map(Program::of);
            let on_sigterm = if ignores_sigterm { None } else { program.map_or(Some(0), |p| p.on_sigterm()) };
            let (after, exit_code) = self.stop_after(ctx, on_sigterm, grace);
            let at = ctx.now + after;
            runtime_mut(ctx).plan_exit(&w.uid, name, PlannedExit { at, exit_code });
            last_exit = last_exit.max(ctx.now + after);
        }
        w.pleg_pending = false;
        self.proc.pleg_dirty.remove(&w.uid);
        if running.is_empty() {
            w.phase = WorkerPhase::Terminating;
            w.timer = None;
            self.containers_stopped(ctx, w);
        } else {
            self.note(ctx.now, format!("{}: stopping {}", w.name(), running.join(", ")));
            w.phase = WorkerPhase::Terminating;
            w.timer = Some(last_exit);
        }
    }

    /// Every container has exited: tear the sandbox down.
    pub(super) fn containers_stopped(&mut self, ctx: &mut Ctx, w: &mut PodWorker) {
        if has_running_containers(runtime(ctx), &w.uid) {
            // A planned exit is still ahead (it cannot be later than the grace period).
            w.timer = runtime(ctx).next_event().map(|t| t.max(ctx.now));
            return;
        }
        w.phase = WorkerPhase::TearingDown;
        w.timer = Some(ctx.now + self.timings.draw(ctx.rng, self.timings.sandbox_teardown));
    }

    /// `SyncTerminatedPod` and the status manager: the terminal status, then the delete.
    pub(super) fn finalize(&mut self, ctx: &mut Ctx, mut w: PodWorker) {
        runtime_mut(ctx).stop_sandbox(&w.uid);
        w.timer = None;
        if w.removed {
            self.note(ctx.now, format!("{}: removed", w.name()));
            self.forget_pod(ctx, &w.uid);
            return;
        }
        let status = self.generate_status(ctx, &w, true);
        w.phase = WorkerPhase::Finalizing;
        let Some(pod) = w.pod.as_pod() else { return };
        self.proc.statuses.set(&w.uid, &w.key, status, &pod.status);
        if let Some(e) = self.proc.statuses.entries.get_mut(&w.uid) {
            e.delete_when_written = true;
        }
        let uid = w.uid.clone();
        self.put_worker(w);
        self.flush_status(ctx, &uid);
    }

    /// The delete went through (or the pod was already gone): nothing is left of it here.
    pub(super) fn deleted(&mut self, ctx: &mut Ctx, uid: &str) {
        if let Some(w) = self.take_worker(uid) {
            self.note(ctx.now, format!("{}: deleted", w.name()));
        }
        self.forget_pod(ctx, uid);
    }

    // ----- timers -----

    /// A worker's timer fired.
    pub(super) fn drive(&mut self, ctx: &mut Ctx, uid: &str) {
        let Some(mut w) = self.take_worker(uid) else {
            return;
        };
        w.timer = None;
        match w.phase {
            WorkerPhase::Syncing(_) => self.advance_sync(ctx, &mut w),
            WorkerPhase::BackingOff | WorkerPhase::Mounting => self.sync_pod(ctx, &mut w),
            WorkerPhase::Terminating => self.containers_stopped(ctx, &mut w),
            WorkerPhase::TearingDown => return self.finalize(ctx, w),
            WorkerPhase::Idle | WorkerPhase::Finalizing | WorkerPhase::Finished => {}
        }
        self.put_worker(w);
    }

    /// The PLEG relist found these pods changed: sync each (or note it for after its sync).
    pub(super) fn relist(&mut self, ctx: &mut Ctx) {
        self.proc.pleg_next = None;
        let dirty = std::mem::take(&mut self.proc.pleg_dirty);
        for uid in dirty {
            let Some(mut w) = self.take_worker(&uid) else {
                continue;
            };
            match w.phase {
                WorkerPhase::Syncing(_) => w.pleg_pending = true,
                WorkerPhase::Terminating | WorkerPhase::TearingDown | WorkerPhase::Finalizing | WorkerPhase::Finished => {}
                WorkerPhase::Idle | WorkerPhase::BackingOff | WorkerPhase::Mounting => self.sync_pod(ctx, &mut w),
            }
            self.put_worker(w);
        }
    }

    /// A pod's runtime changed at `now`: the next relist will see it.
    pub(super) fn mark_pleg_dirty(&mut self, uid: &str, now: Time) {
        if !self.proc.pleg_dirty.contains(uid) {
            self.proc.pleg_dirty.insert(uid.to_string());
        }
        if self.proc.pleg_next.is_none() {
            self.proc.pleg_next = Some(self.next_relist_after(now));
        }
    }

    /// Relists happen every period from a per-process offset: the first one after `t`.
    fn next_relist_after(&self, t: Time) -> Time {
        let period = self.timings.pleg_relist_period.0.max(1);
        let offset = self.proc.pleg_offset;
        if t.0 < offset {
            return Time(offset);
        }
        Time(offset + ((t.0 - offset) / period + 1) * period)
    }

    // ----- status and events -----

    /// The pod's status from the runtime on the machine lent for this call, as of `ctx.now`.
    pub(super) fn generate_status(&self, ctx: &Ctx, w: &PodWorker, terminal: bool) -> PodStatus {
        let Some(pod) = w.pod() else {
            return PodStatus::default();
        };
        let old = self.proc.statuses.cached(&w.uid).unwrap_or(&pod.status);
        let probes = &self.proc.probes;
        let gates = |container: &str, id: &str| probes.gates(&w.uid, container, id);
        let probed =
            pod.spec.containers.iter().any(|c| c.liveness_probe.is_some() || c.readiness_probe.is_some() || c.startup_probe.is_some());
        generate(&StatusInputs {
            pod,
            sandbox: runtime(ctx).sandbox(&w.uid),
            reasons: self.proc.reasons.get(&w.uid),
            old,
            terminal,
            host_ip: &addressing(ctx).node_ip,
            now: ctx.now,
            gates: probed.then_some(&gates as &super::status::GatesFn),
        })
    }

    fn set_status(&mut self, ctx: &mut Ctx, w: &PodWorker, status: PodStatus) {
        let Some(pod) = w.pod() else { return };
        let before = self.proc.statuses.cached(&w.uid).unwrap_or(&pod.status).phase;
        let phase = status.phase;
        if self.proc.statuses.set(&w.uid, &w.key, status, &pod.status) {
            if phase != before {
                let shown = phase.map(PodPhase::as_str).unwrap_or("Pending");
                self.note(ctx.now, format!("{}: status {shown}", w.name()));
            }
            self.flush_status(ctx, &w.uid);
        }
    }

    /// Sends the pod's pending status write, or its delete once the final status is written.
    pub(super) fn flush_status(&mut self, ctx: &mut Ctx, uid: &str) {
        let Some(e) = self.proc.statuses.entries.get_mut(uid) else {
            return;
        };
        if e.writing.is_some() || e.deleting.is_some() {
            return;
        }
        if e.dirty {
            let current = self.proc.pods.get(&e.key).filter(|o| o.meta().uid == uid).and_then(|o| o.as_pod());
            let Some(current) = current else {
                // The pod is gone from the API server: there is nothing to write to.
                self.proc.statuses.forget(uid);
                return;
            };
            // The stored pod with the merged status; its old status is not copied only to be dropped.
            let mut pod =
                Pod { metadata: current.metadata.clone(), spec: current.spec.clone(), status: merge_for_write(&current.status, &e.status) };
            pod.metadata.resource_version = 0;
            let id = ctx.send(ApiRequest::UpdateStatus(Object::Pod(pod)));
            e.writing = Some(id);
            e.dirty = false;
            self.proc.requests.insert(id, Pending::PodStatus(uid.to_string()));
        } else if e.delete_when_written {
            let request = DeleteRequest { key: e.key.clone(), uid: Some(uid.to_string()), grace_period_seconds: Some(0) };
            let id = ctx.send(ApiRequest::Delete(request));
            e.deleting = Some(id);
            self.proc.requests.insert(id, Pending::PodDelete(uid.to_string()));
        }
        self.proc.statuses.refresh(uid);
    }

    /// `needsReconcile`: the API server's copy differs from what the kubelet last wrote in a
    /// part the kubelet owns (someone marked the pod not ready): write it again at the status
    /// manager's next batch, within 10 s. A version older than the one acknowledged is a copy
    /// etcd was restored to, and is compared like any other.
    fn reconcile_status(&mut self, ctx: &mut Ctx, pod: &Pod) {
        let uid = pod.metadata.uid.as_str();
        let Some(e) = self.proc.statuses.entries.get_mut(uid) else { return };
        let settled = !e.dirty && e.writing.is_none() && e.deleting.is_none() && !e.delete_when_written;
        if !settled || pod.metadata.resource_version == e.acked_version || equal_by_kubelet(&pod.status, &e.status) {
            return;
        }
        e.dirty = true;
        let period = self.timings.status_retry.0.max(1);
        let batch = Time((ctx.now.0 / period + 1) * period);
        self.proc.statuses.schedule_retry(uid, batch);
        self.proc.statuses.refresh(uid);
    }

    fn set_reason(&mut self, uid: &str, container: &str, reason: &str, message: String) {
        let reasons: &mut FastMap<String, WaitingReason> = self.proc.reasons.entry(uid.to_string()).or_default();
        reasons.insert(container.to_string(), WaitingReason { reason: reason.to_string(), message });
    }

    /// Records an event about the pod itself (no field path), as the volume manager does.
    fn pod_event(&mut self, ctx: &mut Ctx, pod: &Pod, type_: &'static str, reason: &str, message: String) {
        let involved = ObjectReference {
            kind: "Pod".into(),
            namespace: pod.metadata.namespace.clone(),
            name: pod.metadata.name.clone(),
            uid: pod.metadata.uid.clone(),
            api_version: "v1".into(),
            ..Default::default()
        };
        let spec = EventSpec { involved, type_, reason: reason.into(), message: message.into() };
        self.proc.recorder.send(spec, ctx);
    }

    /// Records an event about one of the pod's containers (`spec.containers{NAME}`).
    pub(super) fn container_event(
        &mut self,
        ctx: &mut Ctx,
        pod: &Pod,
        container: &str,
        type_: &'static str,
        reason: &str,
        message: String,
    ) {
        let involved = ObjectReference {
            kind: "Pod".into(),
            namespace: pod.metadata.namespace.clone(),
            name: pod.metadata.name.clone(),
            uid: pod.metadata.uid.clone(),
            api_version: "v1".into(),
            field_path: format!("spec.containers{{{container}}}").into(),
        };
        let spec = EventSpec { involved, type_, reason: reason.into(), message: message.into() };
        self.proc.recorder.send(spec, ctx);
    }
}

/// A containerd container id: 64 hex digits from the seeded RNG.
fn container_id(ctx: &mut Ctx) -> String {
    (0..4).map(|_| format!("{:016x}", ctx.rng.next_u64())).collect()
}
