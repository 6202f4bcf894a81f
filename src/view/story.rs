//! Story mode: the meaningful hops of a run, said in words, so a learner can follow one change
//! from the claim to the container at a pace the eye can keep.
//!
//! After a Kill the replacement pod is created, bound and ContainerCreating within ~70 ms of
//! simulated time: at any speed nothing can be followed. Story mode picks, out of the message
//! trace, the hops that change what a learner sees ([`Story::observe`]), says each in words
//! ([`Caption`]) and holds the simulation at each long enough to read it ([`dwell_ms`]: by its
//! length, at least [`MIN_DWELL_MS`], divided by the page's speed; [`Story::holding`]). Between
//! beats the simulation runs at the chosen speed, so the real latencies become visible: during the ReplicaSet controller's beat the new pod already exists
//! and is still unscheduled.
//!
//! **Meaningful** (each a beat): a controller creating, deleting or scaling (the ReplicaSet and
//! DaemonSet and StatefulSet controllers' pod creates and deletes, the Deployment controller's ReplicaSet creates, scales
//! and deletes, the garbage collector's and the taint eviction controller's deletes, the node
//! lifecycle controller's taints and Ready=Unknown); kube-scheduler binding a pod or writing
//! `PodScheduled=False` (FailedScheduling); a kubelet taking on a pod bound to its node (the pod
//! arriving on its watch), its pod status writes that change kubectl's STATUS or READY
//! (ContainerCreating → Running, CrashLoopBackOff…), its final delete of a pod (Terminating →
//! gone), its Node registration and Node status writes that change kubectl's STATUS; every write
//! kubectl makes; and the Deployment status write that brings READY to the desired count (the
//! gap closing — the one counter write worth a caption, since it ends the chain the learner is
//! watching, where every other counter update would be a beat with nothing visible to show).
//!
//! **Noise** (never a beat): lease renewals, Event writes, responses, 409 conflicts and their
//! retries, reads and watches, and status-only writes that change nothing a learner sees
//! (ReplicaSet and Deployment status counters, a kubelet's heartbeat, a status write that leaves
//! STATUS and READY as they were).
//!
//! Who wrote an etcd write is read from the trace as it stands: kube-apiserver traces the
//! response to the writer right before the etcd hop (kubectl's request, for kubectl's own writes),
//! and the hop's `rev N` finds the [`crate::store::Change`] with the object before and after. Which
//! controller of kube-controller-manager wrote is inferred from what the write did (a pod create
//! is its owner's controller's — ReplicaSet or DaemonSet —, a ReplicaSet write the Deployment controller's, a delete whose
//! owner is gone the garbage collector's, a delete of a pod marked `DeletionByTaintManager` the
//! taint eviction controller's). The story only reads: it never changes the trace, its hash or
//! anything in the simulation.
//!
//! A pod deleted from under its ReplicaSet (by kubectl, or evicted) and the pod that ReplicaSet
//! creates next are linked as a [`Replacement`], for the page's trail and the events table
//! ([`crate::view::EventFilter::linked`]).
//!
//! # In the page's engine
//!
//! `play::story` drives it: `holding` before each playing frame's advance (with the frame's wall
//! time and the page's speed), `observe` after each delivery (the clock stops right after one
//! that made a beat), `skip` for what ran unpaced (fast-forward, a lesson's hidden setup, the
//! page's opening before the learner acts), `step` for Step, `caption` for the snapshot.
//!
//! At 1× the Kill chain (kubectl deletes → the ReplicaSet controller creates → kube-scheduler
//! binds → the kubelet starts it → Running) is eight beats, seven of them held before Running
//! (1.6 to 3.2 s each, by length), and about a second of simulated time: about 16 s of wall time
//! (`tests/story.rs`).

use crate::command::{printers, Session};
use crate::controllers::replica_set::is_pod_active;
use crate::model::{Duration, EndpointSlice, Kind, Node, Object, ObjectKey, Pod, Time};
use crate::sim::{Message, MessageKind, Sim};
use crate::store::{Change, ChangeType};
use serde::Serialize;

/// Reading time per character of a caption at 1×, in wall-clock milliseconds: about 22
/// characters a second, a subtitle's pace for short technical lines.
pub const MS_PER_CHAR: f64 = 45.0;
/// The least a beat holds at 1×: even `kubectl: delete pod web-…-x7k2p` needs a moment to be
/// found on the stage and read (a hop held 600 ms was gone before the eye got there).
pub const MIN_DWELL_MS: f64 = 1600.0;
/// The most a beat holds at 1×: a long caption (a scheduler's reason) is read in part, and a
/// longer hold would feel like a stall.
pub const MAX_DWELL_MS: f64 = 5000.0;

/// How long a caption holds the simulation at speed 1×, in wall-clock milliseconds: its reading
/// time by its length, within [`MIN_DWELL_MS`] and [`MAX_DWELL_MS`]. The page divides it by its
/// speed, so slowing the clock slows the story and hastening it hastens it.
pub fn dwell_ms(text: &str) -> f64 {
    (text.chars().count() as f64 * MS_PER_CHAR).clamp(MIN_DWELL_MS, MAX_DWELL_MS)
}

/// How long `caption` holds at 1×: its [`dwell_ms`], except that kubectl's own write holds the
/// least. It says back what the learner just did (the console echoes it, a lesson shows what it
/// ran), so it is recognised rather than read, and a step's clock should not stand still behind it.
pub fn hold_ms(caption: &Caption) -> f64 {
    if caption.component == "kubectl" {
        MIN_DWELL_MS
    } else {
        dwell_ms(&caption.text)
    }
}

/// Story mode is for teaching scale: past this many pods the page aggregates its flow instead
/// (the page's `LARGE_CLUSTER_PODS`).
pub const MAX_PODS: usize = 300;

/// How far a Step looks for the next meaningful hop, in simulated time: a settled cluster only
/// renews leases, and a Step should not run for hours looking.
pub const STEP_HORIZON: Duration = Duration::secs(60);

/// At most this many deliveries per Step (as the page's plain step).
const STEP_LIMIT: usize = 10_000;
/// Beats waiting to be shown: one command can write many objects at once (`apply -f`); older
/// ones are dropped past this.
const PENDING_KEPT: usize = 32;
/// Replacements and deleted pods remembered.
const LINKS_KEPT: usize = 64;
const KCM: &str = "kube-controller-manager";

/// The current hop in words, with who did it and what it touched.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Caption {
    /// The hop in words: `ReplicaSet controller: 2 of 3 → creating 1`.
    pub text: String,
    /// The component's `data-name` on the page: `kube-controller-manager/replicaset-controller`,
    /// `kube-scheduler`, `kubelet-node-2`.
    pub component: String,
    /// The object the hop is about, as kubectl names it: `pod/web-7d4b9c8f6-x7k2p`.
    pub object: String,
    /// The trace's sequence number of the hop, so the flow can mark it.
    pub seq: u64,
}

/// One meaningful hop: its caption and when it happened in simulated time.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Beat {
    pub caption: Caption,
    pub at: Time,
}

/// A pod deleted from under its ReplicaSet and the pod that ReplicaSet created next.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Replacement {
    pub namespace: String,
    pub replica_set: String,
    pub killed: String,
    pub replacement: String,
}

/// Whether story mode applies to `sim`: teaching scale, at most [`MAX_PODS`] pods.
pub fn applies(sim: &Sim) -> bool {
    applies_to(sim.api().count(Kind::Pod))
}

/// [`applies`] for a pod count already in hand (the cluster view's `pod_count`).
pub fn applies_to(pods: usize) -> bool {
    pods <= MAX_PODS
}

/// The beat on show and where its dwell is.
#[derive(Debug)]
struct Shown {
    beat: Beat,
    /// The wall time its dwell began; `None` until the first `holding` after it was queued.
    since: Option<f64>,
    /// Its dwell is over (or it was stepped to, which needs none).
    done: bool,
}

/// Who made the etcd write that follows in the trace.
#[derive(Debug)]
struct Writer {
    name: String,
    /// kubectl's verb (`delete`, `evict`…), read from its request.
    verb: Option<&'static str>,
}

/// What a beat says and which component says it.
struct Said {
    component: String,
    text: String,
}

/// Follows a run's trace and paces its meaningful hops. See the module documentation.
#[derive(Debug, Default)]
pub struct Story {
    /// The last trace message read.
    seq: u64,
    /// The run being followed: its seed and the time last seen (a new run starts over).
    seed: u64,
    now: Time,
    started: bool,
    writer: Option<Writer>,
    pending: Vec<Beat>,
    shown: Option<Shown>,
    /// Pods deleted from under their ReplicaSet, oldest first, waiting for their replacement
    /// (its name still empty).
    deleted: Vec<Replacement>,
    replacements: Vec<Replacement>,
    /// Whether the hops being read are told (paced) or only followed (skipped): a skipped hop's
    /// words are never shown, so the counts in them are not made (a ReplicaSet's count lists
    /// its namespace's pods, and a large cluster's story is skipped create after create).
    telling: bool,
}

impl Story {
    /// A story that starts at the beginning of the run it is first shown.
    pub fn new() -> Self {
        Self::default()
    }

    /// Reads the hops since the last call. Every meaningful one is queued as a beat; the first
    /// of them is returned, so the engine can stop right after the delivery that made it.
    pub fn observe(&mut self, sim: &Sim) -> Option<Beat> {
        self.read(sim, true)
    }

    /// Reads the hops since the last call without pacing them (fast-forward, story mode off):
    /// replacements are still linked, nothing is queued, queued beats are dropped and the
    /// caption on show is taken down.
    pub fn skip(&mut self, sim: &Sim) {
        self.read(sim, false);
        self.pending.clear();
        // What it said is over: the hops read here went by untold, so a caption left up would
        // describe a moment long past (after Fast-forward, "kubectl: create deployment web"
        // over a settled cluster).
        self.shown = None;
    }

    /// Whether the simulation must wait at wall time `wall_ms` at speed `speed`: a beat is on
    /// show and its dwell ([`hold_ms`] / `speed`) has not run out. A queued beat's dwell starts
    /// at the first call that sees it; a change of speed applies to the beat on show at once.
    pub fn holding(&mut self, wall_ms: f64, speed: f64) -> bool {
        loop {
            if let Some(s) = &mut self.shown {
                if !s.done {
                    let since = *s.since.get_or_insert(wall_ms);
                    if wall_ms < since + hold_ms(&s.beat.caption) / speed.max(f64::EPSILON) {
                        return true;
                    }
                    s.done = true;
                }
            }
            if !self.promote() {
                return false;
            }
        }
    }

    /// The caption of the beat on show (the last one stays up after its dwell).
    pub fn caption(&self) -> Option<&Caption> {
        self.shown.as_ref().map(|s| &s.beat.caption)
    }

    /// Shows the next beat at once, without a dwell (Step): the one just queued, else the next
    /// one waiting. `None` when none waits (the engine then moves the simulation on).
    pub fn show_next(&mut self) -> Option<Beat> {
        if let Some(s) = &mut self.shown {
            let fresh = !s.done && s.since.is_none();
            s.done = true;
            if fresh {
                return Some(s.beat.clone());
            }
        }
        if !self.promote() {
            return None;
        }
        let s = self.shown.as_mut()?;
        s.done = true;
        Some(s.beat.clone())
    }

    /// Step in story mode: shows the next meaningful hop, moving the session delivery by
    /// delivery until one happens, at most [`STEP_HORIZON`] of simulated time ahead. `None` if
    /// none happened by then (the clock stays at the last delivery it ran).
    pub fn step(&mut self, session: &mut Session) -> Option<Beat> {
        self.observe(session.sim());
        if let Some(beat) = self.show_next() {
            return Some(beat);
        }
        let horizon = session.sim().now() + STEP_HORIZON;
        for _ in 0..STEP_LIMIT {
            let t = session.sim().next_time().filter(|t| *t <= horizon)?;
            session.advance_to(t);
            if self.observe(session.sim()).is_some() {
                return self.show_next();
            }
        }
        None
    }

    /// Every replacement seen, oldest first (at most the last 64).
    pub fn replacements(&self) -> impl Iterator<Item = &Replacement> {
        self.replacements.iter()
    }

    /// The pod linked to pod `namespace/name` by a replacement: its replacement, or the pod it
    /// replaced. For the events table's [`crate::view::EventFilter::linked`].
    pub fn linked(&self, namespace: &str, name: &str) -> Option<(String, String)> {
        self.replacements.iter().rev().filter(|r| r.namespace == namespace).find_map(|r| {
            let other = if r.killed == name {
                &r.replacement
            } else if r.replacement == name {
                &r.killed
            } else {
                return None;
            };
            Some((r.namespace.clone(), other.clone()))
        })
    }

    /// Moves the next waiting beat on show if the one shown is done. Whether one was moved.
    fn promote(&mut self) -> bool {
        if self.shown.as_ref().is_some_and(|s| !s.done) {
            return false;
        }
        match (!self.pending.is_empty()).then(|| self.pending.remove(0)) {
            Some(beat) => {
                self.shown = Some(Shown { beat, since: None, done: false });
                true
            }
            None => false,
        }
    }

    fn queue(&mut self, beat: Beat) {
        if self.pending.len() == PENDING_KEPT {
            self.pending.remove(0);
        }
        self.pending.push(beat);
        self.promote();
    }

    fn read(&mut self, sim: &Sim, pace: bool) -> Option<Beat> {
        let trace = sim.trace();
        // `sim seed` replaced the simulation: its time and trace start again.
        if self.started && (sim.seed() != self.seed || sim.now() < self.now || trace.count() < self.seq) {
            *self = Story::default();
        }
        self.started = true;
        self.seed = sim.seed();
        self.now = sim.now();
        self.telling = pace;
        let mut first = None;
        for m in trace.since(self.seq) {
            // A hop the ring dropped before it was read: the next etcd write's writer is unknown.
            if m.seq != self.seq + 1 {
                self.writer = None;
            }
            self.seq = m.seq;
            if let Some(beat) = self.hop(sim, m) {
                if pace {
                    first.get_or_insert_with(|| beat.clone());
                    self.queue(beat);
                }
            }
        }
        self.seq = self.seq.max(trace.count());
        first
    }

    /// One hop of the trace: a beat if it is meaningful.
    fn hop(&mut self, sim: &Sim, m: &Message) -> Option<Beat> {
        let writer = self.writer.take();
        let (said, object) = match m.kind {
            MessageKind::Request => {
                if m.from == "kubectl" {
                    self.writer = Some(Writer { name: m.from.clone(), verb: verb(&m.what) });
                }
                return None;
            }
            MessageKind::Response => {
                self.writer = Some(Writer { name: m.to.clone(), verb: None });
                return None;
            }
            MessageKind::EtcdWrite => {
                let rev = m.what.strip_prefix("rev ")?.parse::<u64>().ok()?;
                let change = sim.api().changes_since(rev.checked_sub(1)?).ok()?.next().filter(|c| c.revision == rev)?;
                let object = &change.object;
                let said = self.written(sim, &writer?, change)?;
                (said, [object.kind().lower(), "/", &object.meta().name].concat())
            }
            MessageKind::Watch => {
                let (said, name) = taken_on(sim, m)?;
                (said, ["pod/", name].concat())
            }
        };
        let caption = Caption { text: said.text, component: said.component, object, seq: m.seq };
        Some(Beat { caption, at: m.sent })
    }

    fn written(&mut self, sim: &Sim, writer: &Writer, change: &Change) -> Option<Said> {
        match &*change.object {
            Object::Pod(pod) => self.pod_written(sim, writer, change, pod),
            Object::ReplicaSet(rs) => replica_set_written(sim, writer, change, rs),
            Object::Deployment(d) => deployment_written(writer, change, d),
            Object::Node(node) => node_written(writer, change, node),
            Object::EndpointSlice(slice) => endpoint_slice_written(writer, change, slice),
            Object::Job(job) => scheduled_job_written(writer, change, job),
            _ => None,
        }
    }

    fn pod_written(&mut self, sim: &Sim, writer: &Writer, change: &Change, pod: &Pod) -> Option<Said> {
        let name = short_name(&pod.metadata.name);
        let prev = change.prev.as_deref().and_then(Object::as_pod);
        match change.type_ {
            ChangeType::Added if writer.name == KCM && job_of(pod).is_some() => {
                let job = job_of(pod).unwrap_or_default();
                said(controller(JOB), JOB_WORDS, &["create pod ", &name, " for job/", job])
            }
            ChangeType::Added if writer.name == KCM && daemon_set_owner(pod).is_some() => created_by_daemon_set(pod),
            ChangeType::Added if writer.name == KCM && stateful_set_owner(pod).is_some() => {
                let owner = stateful_set_owner(pod).map(|o| o.name.as_str()).unwrap_or_default();
                said(controller(STS), STS_WORDS, &["statefulset/", owner, ": create pod ", &pod.metadata.name])
            }
            ChangeType::Added if writer.name == KCM => self.created_by_replica_set(sim, pod, change.revision),
            ChangeType::Added => plain(writer, "create pod ", &name),
            // The last step of a graceful deletion: the kubelet stopped the containers.
            ChangeType::Deleted if prev.is_some_and(|p| p.metadata.is_deleting()) && is_kubelet(writer) => {
                said_by(writer, &[&name, " removed"])
            }
            ChangeType::Deleted if prev.is_some_and(|p| p.metadata.is_deleting()) => plain(writer, "delete pod ", &name),
            ChangeType::Deleted => self.deleted(sim, writer, pod, change.revision),
            ChangeType::Modified => {
                let prev = prev?;
                if !prev.metadata.is_deleting() && pod.metadata.is_deleting() {
                    return self.deleted(sim, writer, pod, change.revision);
                }
                if let (None, Some(node)) = (&prev.spec.node_name, &pod.spec.node_name) {
                    return said_by(writer, &["bind ", &name, " → ", node]);
                }
                status_written(writer, prev, pod, &name)
            }
        }
    }

    /// A pod create by kube-controller-manager: its ReplicaSet closing the gap. The counts are
    /// the ReplicaSet's as it decided: the active pods before this one, out of its replicas.
    fn created_by_replica_set(&mut self, sim: &Sim, pod: &Pod, rev: u64) -> Option<Said> {
        let Some((rs, desired, active)) = owning_replica_set(sim, pod, rev, self.telling) else {
            return said(controller(RS), RS_WORDS, &["create pod ", &short_name(&pod.metadata.name)]);
        };
        let before = active.saturating_sub(1);
        let namespace = &pod.metadata.namespace;
        if let Some(i) = self.deleted.iter().position(|d| d.namespace == namespace.as_str() && d.replica_set == rs) {
            let mut link = self.deleted.remove(i);
            link.replacement = pod.metadata.name.to_string();
            keep_last(&mut self.replacements, link);
        }
        let (before_words, desired_words) = (before.to_string(), desired.to_string());
        said(
            controller(RS),
            RS_WORDS,
            &[&before_words, " of ", &desired_words, " → creating ", &desired.saturating_sub(before).to_string()],
        )
    }

    /// A pod whose deletion began (or that was deleted at once): who asked, and, when it was
    /// not its ReplicaSet, a replacement to wait for.
    fn deleted(&mut self, sim: &Sim, writer: &Writer, pod: &Pod, rev: u64) -> Option<Said> {
        let name = short_name(&pod.metadata.name);
        let owner = pod.metadata.controller_ref().filter(|r| r.kind == "ReplicaSet");
        let replica_set = owning_replica_set(sim, pod, rev, self.telling);
        if writer.name == KCM {
            if let Some(job) = job_of(pod) {
                // A Job's pod goes by its Job's decision, or by the collector once the Job is gone.
                let key = ObjectKey::new(Kind::Job, &pod.metadata.namespace, job);
                if sim.api().get(&key).is_some() {
                    return said(controller(JOB), JOB_WORDS, &["delete pod ", &name]);
                }
                return said(controller(GC), GC_WORDS, &["delete pod ", &name, " (job/", job, " is gone)"]);
            }
            if let (Some(owner), None) = (owner, &replica_set) {
                return said(controller(GC), GC_WORDS, &["delete pod ", &name, " (replicaset/", &owner.name, " is gone)"]);
            }
            let daemon_set = daemon_set_owner(pod);
            if let Some(owner) = daemon_set.filter(|o| !owner_alive(sim, pod, Kind::DaemonSet, o, rev)) {
                return said(controller(GC), GC_WORDS, &["delete pod ", &name, " (daemonset/", &owner.name, " is gone)"]);
            }
            let stateful_set = stateful_set_owner(pod);
            if let Some(owner) = stateful_set.filter(|o| !owner_alive(sim, pod, Kind::StatefulSet, o, rev)) {
                return said(controller(GC), GC_WORDS, &["delete pod ", &name, " (statefulset/", &owner.name, " is gone)"]);
            }
            if pod.condition("DisruptionTarget").is_some_and(|c| c.reason.as_deref() == Some("DeletionByTaintManager")) {
                self.remember_deleted(pod, replica_set.as_ref());
                let node = pod.spec.node_name.as_deref().unwrap_or_default();
                let words = "taint eviction controller";
                return said(
                    controller("taint-eviction-controller"),
                    words,
                    &["delete pod ", &name, " (node ", node, " is tainted NoExecute)"],
                );
            }
            if let Some(owner) = daemon_set {
                let node = pod.spec.node_name.as_deref().unwrap_or("no node");
                return said(controller(DS), DS_WORDS, &["daemonset/", &owner.name, ": delete pod ", &name, " on ", node]);
            }
            if let Some(owner) = stateful_set {
                // A StatefulSet's pods keep their names: the whole name says which ordinal goes.
                return said(controller(STS), STS_WORDS, &["statefulset/", &owner.name, ": delete pod ", &pod.metadata.name]);
            }
            if let Some((_, desired, active)) = replica_set {
                // This pod is no longer active: the ReplicaSet had one more.
                let before = active + 1;
                let (before_words, desired_words) = (before.to_string(), desired.to_string());
                let n = before.saturating_sub(desired).to_string();
                return said(controller(RS), RS_WORDS, &[&before_words, " of ", &desired_words, " → deleting ", &n]);
            }
            return said(KCM.to_string(), KCM, &["delete pod ", &name]);
        }
        self.remember_deleted(pod, replica_set.as_ref());
        plain(writer, if writer.verb == Some("evict") { "evict pod " } else { "delete pod " }, &name)
    }

    fn remember_deleted(&mut self, pod: &Pod, replica_set: Option<&(String, usize, usize)>) {
        let Some((rs, _, _)) = replica_set else { return };
        let link = Replacement {
            namespace: pod.metadata.namespace.to_string(),
            replica_set: rs.clone(),
            killed: pod.metadata.name.to_string(),
            replacement: String::new(),
        };
        keep_last(&mut self.deleted, link);
    }
}

/// The DaemonSet that controls `pod`, by its owner reference.
fn daemon_set_owner(pod: &Pod) -> Option<&crate::model::OwnerReference> {
    pod.metadata.controller_ref().filter(|r| r.kind == "DaemonSet")
}

/// The StatefulSet that controls `pod`, by its owner reference.
fn stateful_set_owner(pod: &Pod) -> Option<&crate::model::OwnerReference> {
    pod.metadata.controller_ref().filter(|r| r.kind == "StatefulSet")
}

/// Whether the owner `owner` names existed, with its UID, at revision `rev`.
fn owner_alive(sim: &Sim, pod: &Pod, kind: Kind, owner: &crate::model::OwnerReference, rev: u64) -> bool {
    let key = ObjectKey::new(kind, &pod.metadata.namespace, &owner.name);
    object_at(sim, &key, rev).is_some_and(|o| o.meta().uid.as_str() == owner.uid)
}

/// A pod create by the DaemonSet controller: one pod for the node it is pinned to (a DaemonSet
/// has no replica count to close, so the caption names the node instead).
fn created_by_daemon_set(pod: &Pod) -> Option<Said> {
    let owner = daemon_set_owner(pod)?;
    let node = crate::controllers::daemon_set::util::target_node_name(pod).unwrap_or("no node");
    said(controller(DS), DS_WORDS, &["daemonset/", &owner.name, ": create pod ", &short_name(&pod.metadata.name), " for ", node])
}

/// Appends to a bounded list, dropping its oldest entry when full.
fn keep_last<T>(list: &mut Vec<T>, item: T) {
    if list.len() == LINKS_KEPT {
        list.remove(0);
    }
    list.push(item);
}

const RS: &str = "replicaset-controller";
const DS: &str = "daemonset-controller";
const DS_WORDS: &str = "DaemonSet controller";
const STS: &str = "statefulset-controller";
const STS_WORDS: &str = "StatefulSet controller";
const RS_WORDS: &str = "ReplicaSet controller";
const DEPLOYMENT: &str = "deployment-controller";
const DEPLOYMENT_WORDS: &str = "Deployment controller";
const JOB: &str = "job-controller";
const JOB_WORDS: &str = "Job controller";

/// The name of the Job that controls `pod`, if a Job does: its pods are not a ReplicaSet's.
fn job_of(pod: &Pod) -> Option<&str> {
    pod.metadata.controller_ref().filter(|r| r.kind == "Job").map(|r| r.name.as_str())
}

const CRON: &str = "cronjob-controller";
const CRON_WORDS: &str = "CronJob controller";

/// A Job the CronJob controller creates at a scheduled time: the schedule's hop, before the
/// Job controller's (`CronJob controller: cronjob/hello: create job hello-29453761`).
fn scheduled_job_written(writer: &Writer, change: &Change, job: &crate::model::Job) -> Option<Said> {
    let owner = job.metadata.controller_ref().filter(|r| r.kind == "CronJob")?;
    if writer.name != KCM || change.type_ != ChangeType::Added {
        return None;
    }
    said(controller(CRON), CRON_WORDS, &["cronjob/", &owner.name, ": create job ", &job.metadata.name])
}

const GC: &str = "garbage-collector-controller";
const GC_WORDS: &str = "garbage collector";
const ES: &str = "endpointslice-controller";
const ES_WORDS: &str = "EndpointSlice controller";

/// The EndpointSlice controller changing where a Service's traffic may go: a beat when an
/// endpoint was added, dropped or changed state, never for a rewrite of the same list.
/// `web: 2 ready (545db not ready)`.
fn endpoint_slice_written(writer: &Writer, change: &Change, slice: &EndpointSlice) -> Option<Said> {
    if writer.name != KCM {
        return None;
    }
    let states = |s: &EndpointSlice| -> Vec<(String, &'static str)> {
        s.endpoints
            .iter()
            .map(|e| (e.target_ref.as_ref().map_or_else(|| e.addresses.join(","), |r| short_name(&r.name)), e.conditions.state()))
            .collect()
    };
    let now = states(slice);
    let before = change.prev.as_deref().and_then(Object::as_endpoint_slice).map(states).unwrap_or_default();
    let mut changed: Vec<String> =
        now.iter().filter(|e| !before.contains(e)).map(|(pod, state)| [pod.as_str(), " ", state].concat()).collect();
    changed.extend(before.iter().filter(|(pod, _)| !now.iter().any(|(p, _)| p == pod)).map(|(pod, _)| [pod.as_str(), " removed"].concat()));
    if changed.is_empty() {
        return None;
    }
    let ready = now.iter().filter(|(_, state)| *state == "ready").count().to_string();
    said(controller(ES), ES_WORDS, &[slice.service_name()?, ": ", &ready, " ready (", &changed.join(", "), ")"])
}

/// kubectl's verb in a request's text (`delete pod/default/web-1`).
fn verb(what: &str) -> Option<&'static str> {
    Some(match what.split(' ').next()? {
        "create" => "create",
        "update" => "update",
        "update-status" => "update-status",
        "delete" => "delete",
        "evict" => "evict",
        "bind" => "bind",
        _ => return None,
    })
}

/// A controller of kube-controller-manager, as the page names its row.
fn controller(name: &str) -> String {
    [KCM, "/", name].concat()
}

/// `node-2` for `kubelet-node-2`.
fn node_of_kubelet(component: &str) -> Option<&str> {
    component.strip_prefix("kubelet-").filter(|n| !n.is_empty())
}

fn is_kubelet(writer: &Writer) -> bool {
    node_of_kubelet(&writer.name).is_some()
}

/// A caption: `who: ` and the pieces, joined without the formatting machinery (every `format!`
/// costs the page's wasm its own argument tables).
fn said(component: String, who: &str, pieces: &[&str]) -> Option<Said> {
    let mut text = String::from(who);
    text.push_str(": ");
    for piece in pieces {
        text.push_str(piece);
    }
    Some(Said { component, text })
}

/// [`said`] by the writer itself, named as captions name it: `kubelet node-2`, `kube-scheduler`,
/// `kubectl`.
fn said_by(writer: &Writer, pieces: &[&str]) -> Option<Said> {
    match node_of_kubelet(&writer.name) {
        Some(node) => said(writer.name.clone(), &["kubelet ", node].concat(), pieces),
        None => said(writer.name.clone(), &writer.name, pieces),
    }
}

/// `kubectl: delete pod web-…-x7k2p`: a write said as the writer's verb and the object.
fn plain(writer: &Writer, verb_and_kind: &str, name: &str) -> Option<Said> {
    said_by(writer, &[verb_and_kind, &short_name(name)])
}

/// A pod's name with its pod-template hash elided, as a caption says it: `web-…-x7k2p` for
/// `web-7d4b9c8f6-x7k2p`. Other names are kept whole.
pub fn short_name(name: &str) -> String {
    let mut parts = name.rsplitn(3, '-');
    let (Some(suffix), Some(hash), Some(prefix)) = (parts.next(), parts.next(), parts.next()) else { return name.to_string() };
    let alnum = |s: &str| s.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit());
    if suffix.len() == 5 && (6..=10).contains(&hash.len()) && alnum(suffix) && alnum(hash) && !prefix.is_empty() {
        [prefix, "-…-", suffix].concat()
    } else {
        name.to_string()
    }
}

/// The ReplicaSet that controls `pod`, as it was at revision `rev` (if it existed then, with
/// the same UID): its name, replicas and active pods. Read as of the write, not as of now, so
/// writes that landed since (the next create of the same sync) do not shift the counts. Without
/// `count` the active pods are not counted (0): for hops that are followed, not told.
fn owning_replica_set(sim: &Sim, pod: &Pod, rev: u64, count: bool) -> Option<(String, usize, usize)> {
    let owner = pod.metadata.controller_ref().filter(|r| r.kind == "ReplicaSet")?;
    let api = sim.api();
    let key = ObjectKey::new(Kind::ReplicaSet, &pod.metadata.namespace, &owner.name);
    let rs = object_at(sim, &key, rev)?;
    let rs = rs.as_replica_set().filter(|rs| rs.metadata.uid.as_str() == owner.uid)?;
    let desired = rs.spec.replicas.unwrap_or(1).max(0) as usize;
    if !count {
        return Some((owner.name.clone(), desired, 0));
    }
    let owned_active = |o: &Object| {
        let pod = o.as_pod();
        i64::from(pod.is_some_and(|p| p.metadata.controller_ref().is_some_and(|r| r.uid == owner.uid) && is_pod_active(p)))
    };
    let mut active: i64 = api.items(Kind::Pod, Some(&pod.metadata.namespace)).map(|o| owned_active(o)).sum();
    // Undo what changed since: each later change's effect on the count.
    for c in api.changes_since(rev).into_iter().flatten() {
        if c.type_ != ChangeType::Deleted {
            active -= owned_active(&c.object);
        }
        if let Some(prev) = &c.prev {
            active += owned_active(prev);
        }
    }
    Some((owner.name.clone(), desired, active.max(0) as usize))
}

/// The object under `key` as it was at revision `rev`: before the first change after it, or as
/// it is now if none came since.
fn object_at(sim: &Sim, key: &ObjectKey, rev: u64) -> Option<std::rc::Rc<Object>> {
    let api = sim.api();
    for c in api.changes_since(rev).into_iter().flatten() {
        let meta = c.object.meta();
        if c.object.kind() == key.kind && meta.name == key.name && (!key.kind.namespaced() || meta.namespace == key.namespace) {
            return c.prev.clone();
        }
    }
    api.get(key).cloned()
}

/// A pod write that neither binds nor deletes: kubectl's own, or a status write that is a beat
/// when kubectl's STATUS or READY changed, or kube-scheduler reported it cannot place the pod.
fn status_written(writer: &Writer, prev: &Pod, pod: &Pod, name: &str) -> Option<Said> {
    if writer.name == "kubectl" {
        // Every kubectl write is a beat (`kubectl label pod …`).
        return plain(writer, "update pod ", name);
    }
    if writer.name == "kube-scheduler" {
        let unschedulable = |p: &Pod| p.condition("PodScheduled").filter(|c| c.status == "False").and_then(|c| c.message.clone());
        let message = unschedulable(pod).filter(|m| unschedulable(prev).as_ref() != Some(m))?;
        return said_by(writer, &["no node for ", name, ": ", &message]);
    }
    let (status, ready) = (printers::pod_status(pod), printers::pod_ready(pod));
    if status != printers::pod_status(prev) {
        return said_by(writer, &[name, " ", &status]);
    }
    if ready != printers::pod_ready(prev) {
        return said_by(writer, &[name, " ", &status, ", ", &ready, " ready"]);
    }
    None
}

fn replica_set_written(sim: &Sim, writer: &Writer, change: &Change, rs: &crate::model::ReplicaSet) -> Option<Said> {
    let name = rs.metadata.name.as_str();
    let replicas = |r: &crate::model::ReplicaSet| r.spec.replicas.unwrap_or(1).to_string();
    let prev = change.prev.as_deref().and_then(Object::as_replica_set);
    let deleting = change.type_ == ChangeType::Deleted || (prev.is_some_and(|p| !p.metadata.is_deleting()) && rs.metadata.is_deleting());
    let scaled = prev.map(replicas).filter(|p| *p != replicas(rs));
    if writer.name != KCM {
        return match (change.type_, scaled) {
            (ChangeType::Added, _) => plain(writer, "create replicaset ", name),
            _ if deleting => plain(writer, "delete replicaset ", name),
            (_, Some(from)) => said_by(writer, &["scale replicaset ", name, " ", &from, " → ", &replicas(rs)]),
            _ => plain(writer, "update replicaset ", name),
        };
    }
    if change.type_ == ChangeType::Added {
        let n = rs.spec.replicas.unwrap_or(1);
        let count = [n.to_string().as_str(), if n == 1 { " replica" } else { " replicas" }].concat();
        return said(controller(DEPLOYMENT), DEPLOYMENT_WORDS, &["create replicaset ", name, " with ", &count]);
    }
    if deleting {
        let owner = rs.metadata.controller_ref().filter(|r| r.kind == "Deployment");
        let key = owner.map(|o| ObjectKey::new(Kind::Deployment, &rs.metadata.namespace, &o.name));
        let owner_here = key.and_then(|k| sim.api().get(&k)).is_some_and(|d| owner.is_some_and(|o| d.meta().uid.as_str() == o.uid));
        return match owner {
            Some(o) if !owner_here => said(controller(GC), GC_WORDS, &["delete replicaset ", name, " (deployment/", &o.name, " is gone)"]),
            _ => said(controller(DEPLOYMENT), DEPLOYMENT_WORDS, &["delete old replicaset ", name]),
        };
    }
    let from = scaled?;
    said(controller(DEPLOYMENT), DEPLOYMENT_WORDS, &["scale replicaset ", name, " ", &from, " → ", &replicas(rs)])
}

fn deployment_written(writer: &Writer, change: &Change, d: &crate::model::Deployment) -> Option<Said> {
    let name = d.metadata.name.as_str();
    let replicas = |d: &crate::model::Deployment| d.spec.replicas.unwrap_or(1);
    let prev = change.prev.as_deref().and_then(Object::as_deployment);
    let deleting = change.type_ == ChangeType::Deleted || (prev.is_some_and(|p| !p.metadata.is_deleting()) && d.metadata.is_deleting());
    if writer.name == KCM {
        // The gap closing: READY reaches the desired count.
        let (prev, want) = (prev?, replicas(d));
        let closed = d.status.ready_replicas == want && prev.status.ready_replicas != want && !deleting;
        let want = want.to_string();
        return closed.then(|| said(controller(DEPLOYMENT), DEPLOYMENT_WORDS, &[name, " ", &want, "/", &want, " ready"]))?;
    }
    let Some(p) = prev.filter(|_| change.type_ == ChangeType::Modified && !deleting) else {
        return plain(writer, if change.type_ == ChangeType::Added { "create deployment " } else { "delete deployment " }, name);
    };
    if replicas(p) != replicas(d) {
        return said_by(writer, &["scale deployment ", name, " ", &replicas(p).to_string(), " → ", &replicas(d).to_string()]);
    }
    // The write's effect in kubectl's words: an undo or an apply that changes the image sets it
    // as `set image` does.
    let images = |d: &crate::model::Deployment| {
        let images: Vec<String> = d.spec.template.spec.containers.iter().map(|c| [c.name.as_str(), "=", &c.image].concat()).collect();
        images.join(" ")
    };
    if images(p) != images(d) {
        return said_by(writer, &["set image deployment ", name, " ", &images(d)]);
    }
    if p.spec.template != d.spec.template {
        return said_by(writer, &["update deployment ", name, "'s pod template"]);
    }
    plain(writer, "update deployment ", name)
}

/// A Node write: registration, cordon, taints and the Ready condition, each said as a verb on
/// the node (`taint node node-1 node.kubernetes.io/unreachable:NoExecute`); heartbeats are noise.
fn node_written(writer: &Writer, change: &Change, node: &Node) -> Option<Said> {
    let name = node.metadata.name.as_str();
    let (component, who) = match node_of_kubelet(&writer.name) {
        // Taints and Unknown conditions are the node lifecycle controller's.
        _ if writer.name == KCM => (controller("node-lifecycle-controller"), "node lifecycle controller".to_string()),
        Some(n) => (writer.name.clone(), ["kubelet ", n].concat()),
        None => (writer.name.clone(), writer.name.clone()),
    };
    let prev = change.prev.as_deref().and_then(Object::as_node);
    let Some(prev) = prev.filter(|_| change.type_ == ChangeType::Modified) else {
        let verb = if change.type_ == ChangeType::Added { "register node " } else { "delete node " };
        return said(component, &who, &[verb, name]);
    };
    let mut parts: Vec<String> = Vec::new();
    if prev.spec.unschedulable != node.spec.unschedulable {
        parts.push([if node.spec.unschedulable { "cordon" } else { "uncordon" }, " node ", name].concat());
    }
    // kubectl's own forms: `key=value:Effect` added, `key:Effect-` removed.
    let mut taints: Vec<String> = node.spec.taints.iter().filter(|t| !prev.spec.taints.contains(t)).map(|t| t.to_string()).collect();
    taints.extend(prev.spec.taints.iter().filter(|t| !node.spec.taints.contains(t)).map(|t| t.to_string() + "-"));
    if !taints.is_empty() {
        parts.push(["taint node ", name, " ", &taints.join(" ")].concat());
    }
    let ready = |n: &Node| n.condition("Ready").map(|c| c.status.clone()).unwrap_or_default();
    if ready(prev) != ready(node) {
        let why = node.condition("Ready").and_then(|c| c.message.as_deref()).map(|m| [" (", m, ")"].concat()).unwrap_or_default();
        parts.push(["node ", name, " Ready=", &ready(node), &why].concat());
    }
    if parts.is_empty() {
        // A heartbeat, unless kubectl wrote it (`kubectl label node …`).
        return (writer.name == "kubectl").then(|| said(component, &who, &["update node ", name]))?;
    }
    said(component, &who, &[&parts.join(", ")])
}

/// A kubelet hearing of a pod newly bound to its node: the start of its work on it.
fn taken_on<'m>(sim: &Sim, m: &'m Message) -> Option<(Said, &'m str)> {
    let node = node_of_kubelet(&m.to)?;
    let (namespace, name) = m.what.strip_prefix("ADDED pod/")?.split_once('/')?;
    let pod = sim.api().get(&ObjectKey::new(Kind::Pod, namespace, name))?.as_pod()?;
    if pod.spec.node_name.as_deref() != Some(node) || pod.metadata.is_deleting() {
        return None;
    }
    // The node's image store is the machine's.
    let machine = sim.machine(node);
    // As the kubelet's `EnsureImageExists` decides, from the pull policy (defaulted by tag).
    let pull = pod.spec.containers.iter().find(|c| {
        match c.image_pull_policy.as_deref().unwrap_or_else(|| crate::api::defaults::default_pull_policy(&c.image)) {
            "Always" => true,
            "Never" => false,
            _ => !machine.is_some_and(|m| m.has_image(&c.image)),
        }
    });
    let short = short_name(name);
    let who = ["kubelet ", node].concat();
    let said = match pull {
        Some(c) => said(m.to.clone(), &who, &["pulling ", &c.image, " for ", &short]),
        None => {
            let images: Vec<&str> = pod.spec.containers.iter().map(|c| c.image.as_str()).collect();
            said(m.to.clone(), &who, &["starting ", &short, " (", &images.join(", "), " already on the node)"])
        }
    }?;
    Some((said, name))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::command::Scenario;

    fn session() -> Session {
        let mut s = Session::new(Scenario::builtin("default").unwrap(), Some(1)).unwrap();
        s.settle(Duration::mins(2)).unwrap();
        s
    }

    /// Runs `line`, then every delivery for `d`, and returns the captions of the beats.
    pub(super) fn captions_after(s: &mut Session, story: &mut Story, line: &str, d: Duration) -> Vec<Caption> {
        story.skip(s.sim());
        assert!(s.execute(line).ok, "{line}");
        let mut all = Vec::new();
        let mut look = |story: &mut Story, sim: &Sim| {
            story.observe(sim);
            while let Some(b) = story.show_next() {
                all.push(b.caption);
            }
        };
        look(story, s.sim());
        let until = s.sim().now() + d;
        while let Some(t) = s.sim().next_time().filter(|t| *t <= until) {
            s.advance_to(t);
            look(story, s.sim());
        }
        all
    }

    fn node_of(s: &Session, pod: &str) -> String {
        let pod = s.sim().api().get(&ObjectKey::new(Kind::Pod, "default", pod)).and_then(|p| p.as_pod().cloned());
        pod.and_then(|p| p.spec.node_name.clone()).expect("a bound pod")
    }

    #[test]
    fn short_names_elide_the_pod_template_hash_only() {
        assert_eq!(short_name("web-7d4b9c8f6-x7k2p"), "web-…-x7k2p");
        assert_eq!(short_name("my-app-97f4f98bc-8ddvj"), "my-app-…-8ddvj");
        for whole in ["web", "node-1", "web-97f4f98bc", "web-1-2", "web-ABCDEFG-x7k2p", "-97f4f98bc-8ddvj"] {
            assert_eq!(short_name(whole), whole);
        }
    }

    #[test]
    fn daemon_pods_are_told_as_the_daemon_set_controllers_not_a_replica_sets() {
        let mut s = session();
        let mut story = Story::new();
        let apply = "kubectl create -f - <<EOF\napiVersion: apps/v1\nkind: DaemonSet\nmetadata: {name: agent}\nspec:\n  selector: {matchLabels: {app: agent}}\n  template:\n    metadata: {labels: {app: agent}}\n    spec: {containers: [{name: a, image: busybox}]}\nEOF";
        let captions = captions_after(&mut s, &mut story, apply, Duration::secs(10));
        let creates: Vec<&Caption> = captions.iter().filter(|c| c.text.contains("create pod")).collect();
        assert_eq!(creates.len(), 2, "{captions:#?}");
        for c in &creates {
            assert!(c.text.starts_with("DaemonSet controller: daemonset/agent: create pod agent-"), "{}", c.text);
            assert_eq!(c.component, "kube-controller-manager/daemonset-controller");
        }
        assert!(creates[0].text.ends_with(" for node-1") || creates[0].text.ends_with(" for node-2"), "{}", creates[0].text);
        assert!(!captions.iter().any(|c| c.text.contains("ReplicaSet")), "{captions:#?}");
        let captions = captions_after(&mut s, &mut story, "kubectl delete ds agent", Duration::secs(10));
        assert!(captions.iter().any(|c| c.text.contains("(daemonset/agent is gone)")), "{captions:#?}");
    }

    #[test]
    fn stateful_pods_are_told_as_the_stateful_set_controllers_by_their_whole_names() {
        let mut s = session();
        let mut story = Story::new();
        let apply = "kubectl create -f - <<EOF\napiVersion: apps/v1\nkind: StatefulSet\nmetadata: {name: db}\nspec:\n  serviceName: db\n  replicas: 2\n  selector: {matchLabels: {app: db}}\n  template:\n    metadata: {labels: {app: db}}\n    spec: {containers: [{name: a, image: busybox}]}\nEOF";
        let captions = captions_after(&mut s, &mut story, apply, Duration::secs(30));
        let creates: Vec<&str> = captions.iter().filter(|c| c.text.contains("create pod")).map(|c| c.text.as_str()).collect();
        assert_eq!(
            creates,
            ["StatefulSet controller: statefulset/db: create pod db-0", "StatefulSet controller: statefulset/db: create pod db-1"],
            "{captions:#?}"
        );
        assert!(!captions.iter().any(|c| c.text.contains("ReplicaSet")), "{captions:#?}");
        let captions = captions_after(&mut s, &mut story, "kubectl scale sts db --replicas=1", Duration::secs(30));
        assert!(captions.iter().any(|c| c.text == "StatefulSet controller: statefulset/db: delete pod db-1"), "{captions:#?}");
    }

    #[test]
    fn story_mode_applies_at_teaching_scale_only() {
        let s = session();
        assert!(applies(s.sim()));
        assert!(applies_to(MAX_PODS) && !applies_to(MAX_PODS + 1));
    }

    #[test]
    fn a_beat_holds_for_its_dwell_then_lets_go_and_the_next_waits_its_turn() {
        let beat = |n: u64| Beat { caption: Caption { text: format!("hop {n}"), seq: n, ..Default::default() }, at: Time(n) };
        let mut story = Story::new();
        assert!(!story.holding(0.0, 1.0) && story.caption().is_none());
        story.queue(beat(1));
        story.queue(beat(2));
        assert_eq!(story.caption().map(|c| c.seq), Some(1), "on show as soon as it is queued");
        let dwell = MIN_DWELL_MS;
        assert_eq!(dwell_ms("hop 1"), dwell, "a short caption holds the least");
        assert!(story.holding(100.0, 1.0), "the dwell starts at the first holding");
        assert!(story.holding(100.0 + dwell - 1.0, 1.0));
        assert!(story.holding(100.0 + dwell, 1.0), "the second beat takes over");
        assert_eq!(story.caption().map(|c| c.seq), Some(2));
        assert!(story.holding(100.0 + 2.0 * dwell - 1.0, 1.0));
        assert!(!story.holding(100.0 + 2.0 * dwell, 1.0));
        assert_eq!(story.caption().map(|c| c.seq), Some(2), "the last caption stays up");
        assert!(!story.holding(1e9, 1.0));
        story.queue(beat(3));
        assert_eq!(story.show_next().map(|b| b.caption.seq), Some(3), "a stepped beat is shown at once");
        assert!(!story.holding(1e9 + 1.0, 1.0), "and needs no dwell");
        assert_eq!(story.show_next(), None);
    }

    #[test]
    fn a_caption_holds_by_its_length_and_the_pages_speed() {
        let (short, long) = ("kubectl: delete pod web-…-x7k2p", "kube-scheduler: no node for web-…-x7k2p: ".to_string() + &"x".repeat(300));
        assert_eq!(dwell_ms(short), MIN_DWELL_MS, "a short line is held the least, still long enough to find and read");
        let line = "kubelet node-2: starting web-…-w2c6p (nginx:1.14.2 already on the node)";
        assert_eq!(dwell_ms(line), line.chars().count() as f64 * MS_PER_CHAR, "counted in characters, not bytes");
        assert!(dwell_ms(line) > 3000.0 && dwell_ms(line) < MAX_DWELL_MS);
        assert_eq!(dwell_ms(&long), MAX_DWELL_MS, "a long line is cut off at the most");
        let held = |speed: f64| {
            let mut story = Story::new();
            story.queue(Beat { caption: Caption { text: line.into(), ..Default::default() }, at: Time(0) });
            let mut wall = 0.0;
            while story.holding(wall, speed) {
                wall += 10.0;
            }
            wall
        };
        let at_1 = held(1.0);
        assert!((at_1 - dwell_ms(line)).abs() <= 10.0, "{at_1}");
        assert!((held(0.25) - 4.0 * at_1).abs() <= 50.0, "slowed 4×, read 4× as long");
        assert!((held(10.0) - at_1 / 10.0).abs() <= 10.0, "hastened 10×, a tenth");
        // A change of speed applies to the beat on show.
        let mut story = Story::new();
        story.queue(Beat { caption: Caption { text: line.into(), ..Default::default() }, at: Time(0) });
        assert!(story.holding(0.0, 1.0));
        assert!(!story.holding(dwell_ms(line) / 2.0, 2.0), "at twice the speed, half the dwell is all of it");
        // kubectl's own write says back what the learner did: it holds the least, however long.
        let mut mine = Caption { text: "kubectl: set image deployment web nginx=nginx:1.16.1".into(), ..Default::default() };
        assert!(dwell_ms(&mine.text) > MIN_DWELL_MS && hold_ms(&mine) == dwell_ms(&mine.text));
        mine.component = "kubectl".into();
        assert_eq!(hold_ms(&mine), MIN_DWELL_MS);
    }

    #[test]
    fn noise_never_makes_a_beat() {
        let mut s = session();
        let mut story = Story::new();
        story.skip(s.sim());
        let start = s.sim().trace().count();
        // A settled cluster only renews leases and posts node status.
        s.advance(Duration::secs(40));
        assert!(s.sim().trace().count() > start + 10, "leases were renewed");
        assert_eq!(story.observe(s.sim()), None);
        assert_eq!(story.caption(), None);
    }

    #[test]
    fn a_kill_reads_as_delete_create_bind_start_run() {
        let mut s = session();
        let mut story = Story::new();
        let victim = s.sim().objects(Kind::Pod).next().unwrap().meta().name.to_string();
        let old = node_of(&s, &victim);
        let captions = captions_after(&mut s, &mut story, &format!("kubectl delete pod {victim}"), Duration::secs(10));
        let texts: Vec<String> = captions.iter().map(|c| c.text.clone()).collect();
        let replacement = captions[1].object.strip_prefix("pod/").unwrap().to_string();
        assert_eq!(story.replacements().cloned().collect::<Vec<_>>().len(), 1);
        let link = story.replacements().next().unwrap();
        assert_eq!((link.killed.as_str(), link.replacement.as_str()), (victim.as_str(), replacement.as_str()));
        assert_eq!(story.linked("default", &victim), Some(("default".into(), replacement.clone())));
        assert_eq!(story.linked("default", &replacement), Some(("default".into(), victim.clone())));
        let new = node_of(&s, &replacement);
        let (v, r) = (short_name(&victim), short_name(&replacement));
        assert_eq!(
            texts,
            [
                format!("kubectl: delete pod {v}"),
                "ReplicaSet controller: 2 of 3 → creating 1".into(),
                format!("kube-scheduler: bind {r} → {new}"),
                format!("kubelet {new}: starting {r} (nginx:1.14.2 already on the node)"),
                format!("kubelet {new}: {r} ContainerCreating"),
                // The kubelet reports the stopped containers (the phase is terminal), then
                // finishes the graceful deletion.
                format!("kubelet {old}: {v} Completed"),
                format!("kubelet {old}: {v} removed"),
                format!("kubelet {new}: {r} Running"),
                "Deployment controller: web 3/3 ready".into(),
            ]
        );
        let components: Vec<&str> = captions.iter().map(|c| c.component.as_str()).collect();
        let (old, new) = (format!("kubelet-{old}"), format!("kubelet-{new}"));
        assert_eq!(
            components,
            [
                "kubectl",
                "kube-controller-manager/replicaset-controller",
                "kube-scheduler",
                &new,
                &new,
                &old,
                &old,
                &new,
                "kube-controller-manager/deployment-controller"
            ]
        );
        let objects: Vec<&str> = captions.iter().map(|c| c.object.as_str()).collect();
        let (vp, rp) = (format!("pod/{victim}"), format!("pod/{replacement}"));
        assert_eq!(objects, [&vp, &rp, &rp, &rp, &rp, &vp, &vp, &rp, "deployment/web"]);
    }

    #[test]
    fn scaling_up_reads_as_the_deployment_then_the_replicaset_closing_the_gap() {
        let mut s = session();
        let mut story = Story::new();
        let captions = captions_after(&mut s, &mut story, "kubectl scale deployment web --replicas=5", Duration::secs(10));
        let texts: Vec<&str> = captions.iter().map(|c| c.text.as_str()).collect();
        let rs = s.sim().objects(Kind::ReplicaSet).next().unwrap().meta().name.to_string();
        assert_eq!(
            texts[..4],
            [
                "kubectl: scale deployment web 3 → 5",
                &format!("Deployment controller: scale replicaset {rs} 3 → 5"),
                "ReplicaSet controller: 3 of 5 → creating 2",
                "ReplicaSet controller: 4 of 5 → creating 1"
            ],
            "{texts:#?}"
        );
        assert_eq!(captions[0].object, "deployment/web");
        assert_eq!(captions[1].object, format!("replicaset/{rs}"));
        assert_eq!(texts.iter().filter(|t| t.starts_with("kube-scheduler: bind")).count(), 2, "{texts:#?}");
        assert_eq!(texts.iter().filter(|t| t.ends_with(" Running")).count(), 2, "{texts:#?}");
        assert_eq!(texts.last(), Some(&"Deployment controller: web 5/5 ready"));
        assert_eq!(story.replacements().count(), 0, "nothing was killed");
    }

    #[test]
    fn a_jobs_pod_is_told_as_the_job_controllers_never_a_replica_sets() {
        let mut s = session();
        let mut story = Story::new();
        let captions = captions_after(&mut s, &mut story, "kubectl create job hello --image=busybox -- echo hi", Duration::secs(20));
        let texts: Vec<&str> = captions.iter().map(|c| c.text.as_str()).collect();
        let created = captions.iter().find(|c| c.text.starts_with("Job controller: create pod ")).expect("the Job controller's create");
        assert_eq!(created.component, "kube-controller-manager/job-controller");
        assert!(created.text.ends_with(" for job/hello"), "{texts:#?}");
        assert!(!texts.iter().any(|t| t.starts_with("ReplicaSet controller")), "{texts:#?}");
        assert!(texts.iter().any(|t| t.ends_with(" Completed")), "the pod's run to completion is a beat: {texts:#?}");
    }

    /// A CronJob's scheduled time is a beat of its own controller, then the Job's pod is the
    /// Job controller's: two loops, one after the other.
    #[test]
    fn a_scheduled_job_is_told_as_the_cron_job_controllers_and_its_pod_as_the_job_controllers() {
        let mut s = session();
        let mut story = Story::new();
        let create = "kubectl create cronjob hello --image=busybox --schedule=\"* * * * *\" -- date";
        let captions = captions_after(&mut s, &mut story, create, Duration::secs(70));
        let texts: Vec<&str> = captions.iter().map(|c| c.text.as_str()).collect();
        let scheduled = captions
            .iter()
            .position(|c| c.text == "CronJob controller: cronjob/hello: create job hello-29453761")
            .unwrap_or_else(|| panic!("{texts:#?}"));
        assert_eq!(captions[scheduled].component, "kube-controller-manager/cronjob-controller");
        let pod =
            captions.iter().position(|c| c.text.starts_with("Job controller: create pod ") && c.text.ends_with(" for job/hello-29453761"));
        let pod = pod.expect("the Job's pod");
        assert!(scheduled < pod, "{texts:#?}");
    }

    #[test]
    fn scaling_down_says_which_controller_deletes() {
        let mut s = session();
        let mut story = Story::new();
        let captions = captions_after(&mut s, &mut story, "kubectl scale deployment web --replicas=1", Duration::secs(40));
        let texts: Vec<&str> = captions.iter().map(|c| c.text.as_str()).collect();
        assert_eq!(texts[2..4], ["ReplicaSet controller: 3 of 1 → deleting 2", "ReplicaSet controller: 2 of 1 → deleting 1"], "{texts:#?}");
        assert_eq!(texts.iter().filter(|t| t.ends_with(" removed")).count(), 2, "{texts:#?}");
        assert_eq!(story.replacements().count(), 0);
    }

    #[test]
    fn deleting_the_deployment_is_the_garbage_collectors_work() {
        let mut s = session();
        let mut story = Story::new();
        let captions = captions_after(&mut s, &mut story, "kubectl delete deployment web", Duration::secs(40));
        let texts: Vec<&str> = captions.iter().map(|c| c.text.as_str()).collect();
        assert_eq!(texts[0], "kubectl: delete deployment web");
        assert!(
            texts[1].starts_with("garbage collector: delete replicaset web-") && texts[1].ends_with("(deployment/web is gone)"),
            "{texts:#?}"
        );
        let gc_pods = captions.iter().filter(|c| c.text.starts_with("garbage collector: delete pod")).count();
        assert_eq!(gc_pods, 3, "{texts:#?}");
        assert!(captions
            .iter()
            .filter(|c| c.text.starts_with("garbage collector"))
            .all(|c| c.component.ends_with("/garbage-collector-controller")));
    }

    /// A settled session with one of its pods just deleted, and a story that starts there.
    fn after_a_kill() -> (Session, Story) {
        let mut s = session();
        let mut story = Story::new();
        story.skip(s.sim());
        let victim = s.sim().objects(Kind::Pod).next().unwrap().meta().name.to_string();
        assert!(s.execute(&format!("kubectl delete pod {victim}")).ok);
        (s, story)
    }

    #[test]
    fn step_goes_to_the_next_meaningful_hop() {
        let (mut s, mut story) = after_a_kill();
        let first = story.step(&mut s).unwrap();
        assert!(first.caption.text.starts_with("kubectl: delete pod"), "{first:?}");
        let before = s.sim().trace().count();
        let second = story.step(&mut s).unwrap();
        assert_eq!(second.caption.text, "ReplicaSet controller: 2 of 3 → creating 1");
        assert!(s.sim().trace().count() > before + 2, "it passed the hops between");
        assert_eq!(s.sim().now(), second.at, "and stopped at the hop");
        let third = story.step(&mut s).unwrap();
        assert!(third.caption.text.starts_with("kube-scheduler: bind"), "{third:?}");
        assert_eq!(story.caption(), Some(&third.caption));
        assert!(!story.holding(0.0, 1.0), "a stepped beat needs no dwell");
    }

    #[test]
    fn fast_forward_takes_the_caption_down() {
        let (mut s, mut story) = after_a_kill();
        assert!(story.step(&mut s).is_some());
        assert!(story.caption().is_some());
        s.settle(Duration::mins(1)).unwrap();
        story.skip(s.sim());
        assert_eq!(story.caption(), None, "a caption of a moment that went by untold is not left up");
    }

    #[test]
    fn step_on_a_settled_cluster_stops_at_its_horizon() {
        let mut s = session();
        let mut story = Story::new();
        story.skip(s.sim());
        let start = s.sim().now();
        assert_eq!(story.step(&mut s), None);
        assert!(s.sim().now() <= start + STEP_HORIZON && s.sim().now() > start);
    }

    #[test]
    fn a_new_run_starts_the_story_over() {
        let mut s = session();
        let mut story = Story::new();
        story.skip(s.sim());
        assert!(s.execute("sim seed 7").ok);
        s.settle(Duration::mins(2)).unwrap();
        let mut texts = Vec::new();
        story.skip(s.sim());
        // Its boot is read again from the start: the pods and their links are the new run's.
        assert_eq!(story.replacements().count(), 0);
        let mut fresh = Story::new();
        fresh.observe(s.sim());
        while let Some(b) = fresh.show_next() {
            texts.push(b.caption.text);
        }
        assert!(texts.iter().any(|t| t.starts_with("ReplicaSet controller: 0 of 3 → creating 3")), "{texts:#?}");
        assert!(texts.iter().any(|t| t.starts_with("kubelet node-1: register node node-1")), "{texts:#?}");
    }

    fn pods_on(s: &Session, node: &str) -> Vec<String> {
        let pods = s.sim().objects(Kind::Pod).filter_map(|o| o.as_pod());
        pods.filter(|p| p.spec.node_name.as_deref() == Some(node)).map(|p| p.metadata.name.to_string()).collect()
    }

    #[test]
    fn a_failed_node_reads_as_unknown_taints_evictions_and_replacements() {
        let mut s = session();
        let mut story = Story::new();
        let lost = pods_on(&s, "node-1");
        assert!(!lost.is_empty());
        let captions = captions_after(&mut s, &mut story, "sim node fail node-1", Duration::secs(420));
        let texts: Vec<&str> = captions.iter().map(|c| c.text.as_str()).collect();
        assert_eq!(
            texts[..3],
            [
                "node lifecycle controller: node node-1 Ready=Unknown (Kubelet stopped posting node status.)",
                "node lifecycle controller: taint node node-1 node.kubernetes.io/unreachable:NoSchedule",
                "node lifecycle controller: taint node node-1 node.kubernetes.io/unreachable:NoExecute",
            ],
            "{texts:#?}"
        );
        assert!(captions[..3]
            .iter()
            .all(|c| c.component == "kube-controller-manager/node-lifecycle-controller" && c.object == "node/node-1"));
        // The taint eviction controller's workers take the pods in no particular order.
        let mut evicted: Vec<&str> = captions
            .iter()
            .filter(|c| c.component == "kube-controller-manager/taint-eviction-controller")
            .map(|c| c.object.strip_prefix("pod/").unwrap())
            .collect();
        evicted.sort();
        assert_eq!(evicted, lost, "{texts:#?}");
        assert!(texts.contains(
            &format!("taint eviction controller: delete pod {} (node node-1 is tainted NoExecute)", short_name(&lost[0])).as_str()
        ));
        let links: Vec<&Replacement> = story.replacements().collect();
        let mut killed: Vec<&str> = links.iter().map(|r| r.killed.as_str()).collect();
        killed.sort();
        assert_eq!(killed, lost);
        let created: Vec<&str> = captions
            .iter()
            .filter(|c| c.component.ends_with("/replicaset-controller"))
            .map(|c| c.object.strip_prefix("pod/").unwrap())
            .collect();
        assert_eq!(links.iter().map(|r| r.replacement.as_str()).collect::<Vec<_>>(), created);
    }

    #[test]
    fn a_crash_loop_reads_as_error_then_back_off_while_it_restarts() {
        let mut s = session();
        let mut story = Story::new();
        let victim = s.sim().objects(Kind::Pod).next().unwrap().meta().name.to_string();
        let node = node_of(&s, &victim);
        let captions = captions_after(&mut s, &mut story, &format!("sim crash {victim}"), Duration::secs(60));
        let texts: Vec<&str> = captions.iter().map(|c| c.text.as_str()).collect();
        // The first exit is restarted at once (Error); from the second on, the sync the exit
        // brings reports the back-off, so STATUS stays CrashLoopBackOff while the restarts count.
        assert_eq!(texts.len(), 2, "{texts:#?}");
        for (c, status) in captions.iter().zip(["Error", "CrashLoopBackOff"]) {
            assert_eq!(c.text, format!("kubelet {node}: {} {status}", short_name(&victim)), "{texts:#?}");
            assert_eq!((c.component.clone(), c.object.clone()), (format!("kubelet-{node}"), format!("pod/{victim}")));
        }
        let pod = s.sim().api().get(&ObjectKey::new(Kind::Pod, "default", &victim)).and_then(|p| p.as_pod().cloned());
        assert!(pod.is_some_and(|p| p.restarts() >= 3), "restarted again and again");
    }

    #[test]
    fn cordoning_is_kubectls_and_its_taint_the_node_lifecycle_controllers() {
        let mut s = session();
        let mut story = Story::new();
        let captions = captions_after(&mut s, &mut story, "kubectl cordon node-1", Duration::secs(5));
        let said: Vec<(&str, &str)> = captions.iter().map(|c| (c.component.as_str(), c.text.as_str())).collect();
        assert_eq!(
            said,
            [
                ("kubectl", "kubectl: cordon node node-1"),
                (
                    "kube-controller-manager/node-lifecycle-controller",
                    "node lifecycle controller: taint node node-1 node.kubernetes.io/unschedulable:NoSchedule"
                ),
            ]
        );
    }

    #[test]
    fn a_pod_no_node_can_take_is_said_once_with_the_schedulers_reason() {
        let mut s = session();
        let mut story = Story::new();
        let captions = captions_after(&mut s, &mut story, "kubectl scale deployment web --replicas=90", Duration::secs(60));
        let failed: Vec<&Caption> = captions.iter().filter(|c| c.text.contains(": no node for ")).collect();
        let pending: Vec<String> = s
            .sim()
            .objects(Kind::Pod)
            .filter_map(|o| o.as_pod())
            .filter(|p| p.spec.node_name.is_none())
            .map(|p| format!("pod/{}", p.metadata.name))
            .collect();
        assert!(!pending.is_empty(), "more pods than the nodes hold");
        let mut said: Vec<String> = failed.iter().map(|c| c.object.clone()).collect();
        said.sort();
        assert_eq!(said, pending, "each said once");
        let first = &failed[0].object["pod/".len()..];
        let pod = s.sim().api().get(&ObjectKey::new(Kind::Pod, "default", first)).unwrap();
        let message = pod.as_pod().unwrap().condition("PodScheduled").unwrap().message.clone().unwrap();
        assert!(message.starts_with("0/2 nodes are available: "), "{message}");
        assert_eq!(failed[0].text, format!("kube-scheduler: no node for {}: {message}", short_name(first)));
        assert!(failed.iter().all(|c| c.component == "kube-scheduler"));
    }

    #[test]
    fn a_rollout_reads_as_a_new_replicaset_pulling_its_image_and_the_old_one_scaled_away() {
        let mut s = session();
        let mut story = Story::new();
        let old = s.sim().objects(Kind::ReplicaSet).next().unwrap().meta().name.to_string();
        let captions = captions_after(&mut s, &mut story, "kubectl set image deployment/web nginx=nginx:1.16.1", Duration::secs(60));
        let texts: Vec<&str> = captions.iter().map(|c| c.text.as_str()).collect();
        let new = s.sim().objects(Kind::ReplicaSet).map(|o| o.meta().name.to_string()).find(|n| *n != old).unwrap();
        assert_eq!(
            texts[..3],
            [
                "kubectl: set image deployment web nginx=nginx:1.16.1",
                &format!("Deployment controller: create replicaset {new} with 1 replica"),
                "ReplicaSet controller: 0 of 1 → creating 1",
            ],
            "{texts:#?}"
        );
        assert!(texts.iter().any(|t| t.contains(": pulling nginx:1.16.1 for web-…-")), "{texts:#?}");
        let scaled: Vec<&str> = texts.iter().copied().filter(|t| t.starts_with("Deployment controller: scale")).collect();
        assert_eq!(scaled.last(), Some(&format!("Deployment controller: scale replicaset {old} 1 → 0").as_str()), "{texts:#?}");
    }

    #[test]
    fn a_drain_reads_as_kubectl_cordoning_and_evicting_and_each_evicted_pod_is_replaced() {
        let mut s = session();
        let mut story = Story::new();
        let evicted = pods_on(&s, "node-1");
        let captions = captions_after(&mut s, &mut story, "kubectl drain node-1", Duration::secs(60));
        let texts: Vec<&str> = captions.iter().map(|c| c.text.as_str()).collect();
        assert_eq!(texts[0], "kubectl: cordon node node-1", "{texts:#?}");
        let evictions: Vec<String> = evicted.iter().map(|p| format!("kubectl: evict pod {}", short_name(p))).collect();
        assert_eq!(texts[1..=evicted.len()], evictions, "{texts:#?}");
        let killed: Vec<&str> = story.replacements().map(|r| r.killed.as_str()).collect();
        assert_eq!(killed, evicted);
        assert!(story.replacements().all(|r| node_of(&s, &r.replacement) == "node-2"), "cordoned: all land on node-2");
    }

    #[test]
    fn tainting_a_node_is_said_in_kubectls_form() {
        let mut s = session();
        let mut story = Story::new();
        let added = captions_after(&mut s, &mut story, "kubectl taint nodes node-2 dedicated=web:NoSchedule", Duration::secs(5));
        assert_eq!(added.iter().map(|c| c.text.as_str()).collect::<Vec<_>>(), ["kubectl: taint node node-2 dedicated=web:NoSchedule"]);
        let removed = captions_after(&mut s, &mut story, "kubectl taint nodes node-2 dedicated=web:NoSchedule-", Duration::secs(5));
        assert_eq!(removed.iter().map(|c| c.text.as_str()).collect::<Vec<_>>(), ["kubectl: taint node node-2 dedicated=web:NoSchedule-"]);
        assert_eq!(removed[0].object, "node/node-2");
    }

    #[test]
    fn the_endpointslice_controller_is_told_when_a_pods_readiness_changes_where_traffic_goes() {
        let mut s = Session::new(Scenario::builtin("service").unwrap(), Some(1)).unwrap();
        s.settle(Duration::mins(2)).unwrap();
        let mut story = Story::new();
        let target = s.sim().objects(Kind::Pod).next().unwrap().meta().name.to_string();
        let t = short_name(&target);
        let captions = captions_after(&mut s, &mut story, &format!("sim fail-probe {target} readiness"), Duration::secs(10));
        let told: Vec<(&str, &str)> = captions.iter().map(|c| (c.component.as_str(), c.text.as_str())).collect();
        let slice = told.iter().find(|(c, _)| *c == "kube-controller-manager/endpointslice-controller").expect("a beat for the slice");
        assert_eq!(slice.1, format!("EndpointSlice controller: web: 2 ready ({t} not ready)"));
        let ready = told.iter().position(|(_, text)| text.contains("0/1 ready")).expect("the kubelet's readiness write is told");
        let endpoint = told.iter().position(|(c, _)| c.ends_with("endpointslice-controller")).unwrap();
        assert!(ready < endpoint, "the kubelet first, then the controller: {told:?}");
        assert_eq!(captions[endpoint].object.split('/').next(), Some("endpointslice"));
        // Traffic and kube-proxy's syncs are not beats; an unchanged rewrite is none either.
        assert_eq!(told.iter().filter(|(c, _)| c.ends_with("endpointslice-controller")).count(), 1, "{told:?}");
    }
}
