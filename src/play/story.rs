//! Story mode's side of the engine: the page's clock holds at each meaningful hop for a dwell
//! of wall time, Step goes to the next meaningful hop, and the snapshot carries the hop in words.
//!
//! It exists because a Kill's whole chain (the ReplicaSet controller creates, kube-scheduler
//! binds, the kubelet starts the container) takes about 70 ms of simulated time, too fast to
//! follow at any speed. [`crate::view::story::Story`] decides which hops are meaningful and how
//! long each holds; this file only asks it at the right moments: after every delivery while
//! playing, before each frame's advance, on Step, and when the page is redrawn. Story mode is
//! *in force* while it is switched on and the cluster is at teaching scale (past
//! [`super::LARGE_CLUSTER_PODS`] pods the flow aggregates instead, as without it).
//!
//! It never changes what the simulation does, only when the page's clock moves: the trace and
//! its hash are the same with story mode on or off.

use super::Engine;
use crate::view::story::{Replacement, Story};

/// Story mode's state: the switch and the story being followed.
#[derive(Debug)]
pub(crate) struct StoryMode {
    pub(crate) on: bool,
    pub(crate) story: Story,
}

impl StoryMode {
    pub(crate) fn new() -> StoryMode {
        StoryMode { on: true, story: Story::new() }
    }
}

/// The replicas every Deployment claims (a missing `replicas` is one, as its default).
fn claimed_replicas(sim: &crate::sim::Sim) -> usize {
    sim.objects(crate::model::Kind::Deployment)
        .filter_map(|o| o.as_deployment())
        .map(|d| d.spec.replicas.unwrap_or(1).max(0) as usize)
        .sum()
}

impl Engine {
    /// Whether story mode paces the clock now: switched on, at teaching scale — both the pods
    /// there are and the replicas the Deployments claim. A cluster on its way to thousands of
    /// pods would otherwise tell its first few hundred creates one by one.
    pub fn story_in_force(&self) -> bool {
        self.story.on && !self.is_large() && claimed_replicas(self.session.sim()) <= super::LARGE_CLUSTER_PODS
    }

    /// Whether a beat holds the clock at the frame's wall time `ts`.
    pub(crate) fn story_holds(&mut self, ts: f64) -> bool {
        self.story_in_force() && self.story.story.holding(ts)
    }

    /// After one delivery while playing: whether it made a meaningful hop, where the clock stops.
    pub(crate) fn story_beat(&mut self) -> bool {
        self.story_in_force() && self.story.story.observe(self.session.sim()).is_some()
    }

    /// Catches the story up with the trace: paced while in force (a console command's writes
    /// become beats here), read without pacing otherwise, so replacements are still linked.
    pub(crate) fn story_catch_up(&mut self) {
        if self.story_in_force() {
            self.story.story.observe(self.session.sim());
        } else {
            self.story.story.skip(self.session.sim());
        }
    }

    /// Reads what fast-forward ran without pacing it: no beats pile up behind it.
    pub(crate) fn story_skip(&mut self) {
        self.story.story.skip(self.session.sim());
    }

    /// Step in story mode: to the next meaningful hop. Whether story mode took the step (when
    /// not in force the plain step runs instead).
    pub(crate) fn story_step(&mut self) -> bool {
        if !self.story_in_force() {
            return false;
        }
        if self.story.story.step(&mut self.session).is_none() {
            self.note =
                format!("no meaningful hop in the next {}", super::clock::sim_time(crate::model::Time(crate::view::story::STEP_HORIZON.0)));
        }
        true
    }

    /// The story switch: turned on, the story starts from the present.
    pub(crate) fn toggle_story(&mut self) {
        self.story.on = !self.story.on;
        if self.story.on {
            self.story_skip();
        }
    }

    /// A new run: the story starts over.
    pub(crate) fn story_restarted(&mut self) {
        self.story.story = Story::new();
    }

    /// The pod linked to the selected one by a replacement (its replacement, or the pod it
    /// replaced), for the events table's marks.
    pub(crate) fn story_linked(&self) -> Option<(String, String)> {
        let (ns, name) = self.selected.as_ref()?;
        self.story.story.linked(ns, name)
    }

    /// Every replacement seen, oldest first, for the stage's trail.
    pub(crate) fn story_replacements(&self) -> Vec<Replacement> {
        self.story.story.replacements().cloned().collect()
    }
}

#[cfg(test)]
mod tests {
    use super::super::{story_engine, Action, Mode, Snapshot};
    use super::*;
    use crate::model::{Duration, Time};

    /// A wall clock that never moves: the budget never runs out.
    fn still() -> f64 {
        0.0
    }

    /// One 60 Hz frame.
    const FRAME_MS: f64 = 1000.0 / 60.0;

    /// An engine on the default scenario, settled by fast-forward, playing at 1× again.
    fn settled(story: bool) -> Engine {
        let mut e = story_engine("?scenario=default&seed=1");
        if !story {
            e.act(Action::ToggleStory);
        }
        e.act(Action::FastForward);
        let mut ts = 0.0;
        while e.snapshot().mode == Mode::FastForward {
            e.frame(ts, &still);
            ts += FRAME_MS;
        }
        e.act(Action::Play);
        e
    }

    /// The pod to kill: the first one on a node.
    fn victim(s: &Snapshot) -> (String, String) {
        let pod = s.cluster.nodes.iter().flat_map(|n| n.pods.iter()).next().expect("a running pod");
        (pod.namespace.clone(), pod.name.clone())
    }

    /// What a learner saw after a Kill, frame by frame at 1×.
    struct Watched {
        /// The captions' components in the order they came (each once per change).
        components: Vec<String>,
        /// The replacement was seen unscheduled while the ReplicaSet controller's caption showed.
        pending_during_replicaset_beat: bool,
        /// Wall ms from the Kill to the replacement Running, if it got there.
        wall_to_running: Option<f64>,
        replacement: String,
        bound_to: String,
    }

    /// Kills a pod, then plays 60 Hz frames for up to `limit_ms` of wall time.
    fn kill_and_watch(e: &mut Engine, limit_ms: f64) -> Watched {
        let (ns, name) = victim(&e.snapshot());
        e.act(Action::Select(ns, name.clone()));
        e.act(Action::Kill);
        let mut seen = Watched {
            components: Vec::new(),
            pending_during_replicaset_beat: false,
            wall_to_running: None,
            replacement: String::new(),
            bound_to: String::new(),
        };
        let mut ts = 100_000.0;
        let start = ts;
        while ts - start < limit_ms {
            e.frame(ts, &still);
            let s = e.snapshot();
            if let Some(c) = &s.caption {
                if seen.components.last() != Some(&c.component) {
                    seen.components.push(c.component.clone());
                }
                if c.component == "kube-controller-manager/replicaset-controller" {
                    seen.pending_during_replicaset_beat |= s.cluster.unscheduled.iter().any(|p| p.name != name);
                }
            }
            let replacement = e.story.story.replacements().find(|r| r.killed == name).cloned();
            if let Some(p) = replacement.and_then(|r| s.cluster.pod(&r.namespace, &r.replacement).cloned()) {
                seen.replacement = p.name.clone();
                seen.bound_to = p.node.clone();
                if p.status == "Running" && p.is_ready {
                    seen.wall_to_running = Some(ts - start);
                    break;
                }
            }
            ts += FRAME_MS;
        }
        seen
    }

    #[test]
    fn after_a_kill_story_mode_tells_the_replicaset_controller_then_the_scheduler_then_the_kubelet() {
        let mut e = settled(true);
        assert!(e.story_in_force());
        let seen = kill_and_watch(&mut e, 30_000.0);
        let at =
            |c: &str| seen.components.iter().position(|x| x == c).unwrap_or_else(|| panic!("no caption from {c}: {:?}", seen.components));
        assert!(!seen.replacement.is_empty() && !seen.bound_to.is_empty(), "a replacement was bound: {:?}", seen.components);
        let (rs, scheduler, kubelet) =
            (at("kube-controller-manager/replicaset-controller"), at("kube-scheduler"), at(&format!("kubelet-{}", seen.bound_to)));
        assert!(rs < scheduler && scheduler < kubelet, "in the order the chain runs: {:?}", seen.components);
        assert!(seen.pending_during_replicaset_beat, "the new pod waits unscheduled while its creation is told");
        let wall = seen.wall_to_running.expect("the replacement runs within 30 s of wall time");
        // Each beat holds for its dwell: the chain can be followed, and still ends well within 30 s.
        assert!(wall >= 3.0 * DWELL, "held at each hop: {wall} ms");
        assert!(wall < 30_000.0, "{wall} ms");
    }

    const DWELL: f64 = crate::view::story::DWELL_MS;

    #[test]
    fn with_story_mode_off_the_same_chain_runs_unheld_and_uncaptioned_to_the_same_trace() {
        let (mut on, mut off) = (settled(true), settled(false));
        assert_eq!(on.session.sim().now(), off.session.sim().now(), "both settled at the same moment");
        let seen_on = kill_and_watch(&mut on, 30_000.0);
        let seen_off = kill_and_watch(&mut off, 30_000.0);
        assert!(seen_off.components.is_empty(), "no caption with story mode off: {:?}", seen_off.components);
        let (held, unheld) = (seen_on.wall_to_running.unwrap(), seen_off.wall_to_running.unwrap());
        assert!(unheld < held, "story mode slowed the chain: {unheld} vs {held} ms");
        // Story mode moves only the page's clock, never the simulation: at one simulated
        // moment both runs have traced the same messages.
        let t = Time(on.session.sim().now().0.max(off.session.sim().now().0)) + Duration::secs(5);
        on.session.advance_to(t);
        off.session.advance_to(t);
        assert_eq!(on.session.sim().trace().hash(), off.session.sim().trace().hash());
        assert_eq!(seen_on.replacement, seen_off.replacement);
    }

    #[test]
    fn step_in_story_mode_goes_to_the_next_meaningful_hop() {
        let mut e = settled(true);
        let (ns, name) = victim(&e.snapshot());
        e.act(Action::Select(ns, name));
        e.act(Action::Pause);
        e.act(Action::Kill);
        let mut told = Vec::new();
        for _ in 0..12 {
            let before = e.session.sim().trace().count();
            e.act(Action::Step);
            let caption = e.snapshot().caption.clone().expect("each step shows a hop in words");
            if told.last() != Some(&caption.text) {
                told.push(caption.text.clone());
            }
            assert!(e.session.sim().trace().count() >= before);
        }
        assert!(told.len() >= 4, "every step told something new: {told:?}");
        assert!(told.iter().any(|t| t.starts_with("ReplicaSet controller")), "{told:?}");
        assert!(told.iter().any(|t| t.starts_with("kube-scheduler")), "{told:?}");
        assert_eq!(e.snapshot().mode, Mode::Paused);
    }

    #[test]
    fn the_replacement_is_linked_to_the_killed_pod_for_the_events_table() {
        let mut e = settled(true);
        let seen = kill_and_watch(&mut e, 30_000.0);
        let killed = e.selected.clone().expect("still selected").1;
        let linked = e.story_linked().expect("the killed pod is linked to its replacement");
        assert_eq!(linked.1, seen.replacement);
        assert_ne!(killed, seen.replacement);
        assert!(e.story_replacements().iter().any(|r| r.killed == killed && r.replacement == seen.replacement));
    }

    #[test]
    fn a_claim_past_teaching_scale_is_not_told_pod_by_pod() {
        let mut e = settled(true);
        assert!(e.story_in_force());
        e.act(Action::Console(format!("kubectl scale deployment web --replicas={}", super::super::LARGE_CLUSTER_PODS + 1)));
        assert!(!e.story_in_force(), "the claim is large though its pods are not yet");
        assert!(e.snapshot().caption.is_none());
    }

    #[test]
    fn story_mode_switched_off_holds_nothing_and_shows_no_caption() {
        let mut e = settled(true);
        e.act(Action::ToggleStory);
        assert!(!e.story_in_force() && !e.snapshot().story);
        assert!(e.snapshot().caption.is_none());
        e.act(Action::ToggleStory);
        assert!(e.story_in_force() && e.snapshot().story);
        assert!(!e.story_holds(0.0), "turned on again, it starts from the present: nothing old is held");
    }
}
