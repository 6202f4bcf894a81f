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
//!
//! The story is told from the learner's first action, not from the run's start. Until then it is
//! *quiet*: it follows the trace without pacing it, and the page's caption is an opening one
//! ([`INTRO`]) saying what is on screen and what to try first. A boot told hop by hop at reading
//! pace would be twenty captions (about 45 s) before the learner could do anything, and a
//! lesson's setup (`sim seed 1`, `sim settle`: a whole boot in one command) told afterwards was a
//! replay of the past while the clock stood still. The first command the page runs (a Kill, the
//! replicas box, the console, a lesson's shown action) ends the quiet; a lesson's hidden setup
//! and any command that moves the clock itself (`sim settle`) are never told.

use super::Engine;
use crate::view::story::{Caption, Replacement, Story};

/// Story mode's state: the switch, the story being followed, and whether it is still quiet.
#[derive(Debug)]
pub(crate) struct StoryMode {
    pub(crate) on: bool,
    pub(crate) story: Story,
    /// Nothing has been done in this run yet: the story follows without telling, and the
    /// caption is the opening one.
    pub(crate) quiet: bool,
    /// [`INTRO`] as a caption that names no component and no object (it spotlights nothing).
    intro: Caption,
}

impl StoryMode {
    pub(crate) fn new() -> StoryMode {
        StoryMode { on: true, story: Story::new(), quiet: true, intro: Caption { text: INTRO.to_string(), ..Caption::default() } }
    }
}

/// The page's opening caption: what is on screen and the first thing to try. One line at
/// 1440 px and on a projector, two or three on a phone: the stage has to fit around it.
pub(crate) const INTRO: &str = "A Kubernetes cluster: loops above, nodes and pods below. Select a pod and kill it.";

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

    /// Whether a beat holds the clock at the frame's wall time `ts` (its dwell is divided by the
    /// page's speed: the speed menu slows or hastens the story as it does the clock).
    pub(crate) fn story_holds(&mut self, ts: f64) -> bool {
        self.story_in_force() && self.story.story.holding(ts, self.clock.speed)
    }

    /// Whether the story is telling: in force and no longer quiet.
    fn story_telling(&self) -> bool {
        self.story_in_force() && !self.story.quiet
    }

    /// After one delivery while playing: whether it made a meaningful hop, where the clock stops.
    pub(crate) fn story_beat(&mut self) -> bool {
        self.story_telling() && self.story.story.observe(self.session.sim()).is_some()
    }

    /// The caption on show: the hop being told, or, while quiet outside a lesson (whose panel
    /// says what to do), the opening caption.
    pub(crate) fn story_caption(&self) -> Option<&Caption> {
        if self.story.quiet {
            return self.lesson.is_none().then_some(&self.story.intro);
        }
        self.story.story.caption()
    }

    /// A command is about to run on the learner's behalf: the story is told from here on. What
    /// ran before it untold (the opening's boot, a lesson's hidden setup) is read first, so it is
    /// not told after.
    pub(crate) fn story_listen(&mut self) {
        if std::mem::take(&mut self.story.quiet) {
            self.story_skip();
        }
    }

    /// Catches the story up with the trace: paced while telling (a console command's writes
    /// become beats here), read without pacing otherwise, so replacements are still linked.
    pub(crate) fn story_catch_up(&mut self) {
        if self.story_telling() {
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
        // Step is an action too: the learner wants the next hop told.
        self.story_listen();
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

    /// A new run: the story starts over, quiet, under the opening caption.
    pub(crate) fn story_restarted(&mut self) {
        self.story.story = Story::new();
        self.story.quiet = true;
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

    /// What a learner saw after a Kill, frame by frame.
    struct Watched {
        /// The captions in the order they came (each once per change): component, text and
        /// the wall ms it stayed on screen.
        shown: Vec<(String, String, f64)>,
        /// Wall ms the replacement was in the pending area (unscheduled).
        pending_ms: f64,
        /// Wall ms from the Kill to the replacement Running, if it got there.
        wall_to_running: Option<f64>,
        replacement: String,
        bound_to: String,
    }

    impl Watched {
        fn components(&self) -> Vec<String> {
            self.shown.iter().map(|(c, _, _)| c.clone()).collect()
        }

        /// The first caption of `component`: its place and how long it was on screen.
        fn first(&self, component: &str) -> (usize, f64) {
            let i = self.shown.iter().position(|(c, _, _)| c == component);
            let i = i.unwrap_or_else(|| panic!("no caption from {component}: {:#?}", self.shown));
            (i, self.shown[i].2)
        }
    }

    /// Kills a pod, then plays 60 Hz frames for up to `limit_ms` of wall time.
    fn kill_and_watch(e: &mut Engine, limit_ms: f64) -> Watched {
        let (ns, name) = victim(&e.snapshot());
        e.act(Action::Select(ns, name.clone()));
        e.act(Action::Kill);
        let mut seen =
            Watched { shown: Vec::new(), pending_ms: 0.0, wall_to_running: None, replacement: String::new(), bound_to: String::new() };
        let mut ts = 100_000.0;
        let start = ts;
        while ts - start < limit_ms {
            e.frame(ts, &still);
            let s = e.snapshot();
            if let Some(c) = &s.caption {
                match seen.shown.last_mut() {
                    Some(last) if last.0 == c.component && last.1 == c.text => last.2 += FRAME_MS,
                    _ => seen.shown.push((c.component.clone(), c.text.clone(), FRAME_MS)),
                }
            }
            let replacement = e.story.story.replacements().find(|r| r.killed == name).cloned();
            if let Some(r) = &replacement {
                if s.cluster.unscheduled.iter().any(|p| p.name == r.replacement) {
                    seen.pending_ms += FRAME_MS;
                }
            }
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

    /// The key hops of a kill, each on screen long enough to read.
    const READ_MS: f64 = 1500.0;

    #[test]
    fn after_a_kill_story_mode_tells_the_replicaset_controller_then_the_scheduler_then_the_kubelet() {
        let mut e = settled(true);
        assert!(e.story_in_force());
        let seen = kill_and_watch(&mut e, 30_000.0);
        assert!(!seen.replacement.is_empty() && !seen.bound_to.is_empty(), "a replacement was bound: {:?}", seen.shown);
        let (rs, rs_ms) = seen.first("kube-controller-manager/replicaset-controller");
        let (scheduler, scheduler_ms) = seen.first("kube-scheduler");
        let (kubelet, kubelet_ms) = seen.first(&format!("kubelet-{}", seen.bound_to));
        assert!(rs < scheduler && scheduler < kubelet, "in the order the chain runs: {:?}", seen.components());
        for (who, ms) in [("ReplicaSet controller", rs_ms), ("kube-scheduler", scheduler_ms), ("kubelet", kubelet_ms)] {
            assert!(ms >= READ_MS, "{who}'s caption on screen {ms} ms: {:#?}", seen.shown);
        }
        assert!(seen.pending_ms >= READ_MS, "the new pod waits unscheduled while its creation is told: {} ms", seen.pending_ms);
        let wall = seen.wall_to_running.expect("the replacement runs within 30 s of wall time");
        assert!(wall < 30_000.0, "the whole chain still ends within 30 s: {wall} ms");
    }

    #[test]
    fn the_speed_menu_slows_and_hastens_the_story() {
        let watch = |speed: f64| {
            let mut e = settled(true);
            e.act(Action::Speed(speed));
            kill_and_watch(&mut e, 120_000.0)
        };
        let (slow, normal, fast) = (watch(0.5), watch(1.0), watch(5.0));
        let rs = |w: &Watched| w.first("kube-controller-manager/replicaset-controller").1;
        assert!(rs(&slow) >= 1.9 * rs(&normal), "at 0.5× a caption stays twice as long: {} vs {}", rs(&slow), rs(&normal));
        assert!(rs(&fast) <= rs(&normal) / 4.0, "at 5× a fifth: {} vs {}", rs(&fast), rs(&normal));
        let (slow, fast) = (slow.wall_to_running.unwrap(), fast.wall_to_running.unwrap());
        assert!(fast < normal.wall_to_running.unwrap() && normal.wall_to_running.unwrap() < slow, "{fast} {slow}");
        assert_eq!(normal.components(), watch(1.0).components(), "the same story at the same speed");
    }

    /// Plays 60 Hz frames at 1× from `ts` for `ms` of wall time; the wall time reached.
    fn play_for(e: &mut Engine, ts: f64, ms: f64) -> f64 {
        let mut t = ts;
        while t < ts + ms {
            e.frame(t, &still);
            t += FRAME_MS;
        }
        t
    }

    #[test]
    fn the_page_opens_on_a_caption_saying_what_is_there_and_what_to_try_first() {
        let mut e = story_engine("?scenario=default&seed=1");
        let intro = e.snapshot().caption.clone().expect("a caption from the first picture on");
        assert_eq!(intro.text, INTRO);
        assert!(INTRO.len() <= 90, "one line at 1440 px: {} characters", INTRO.len());
        assert_eq!((intro.component.as_str(), intro.object.as_str()), ("", ""), "it spotlights nothing");
        // The boot runs at the chosen speed under it, unheld: three pods run within seconds.
        let ts = play_for(&mut e, 0.0, 6_000.0);
        let s = e.snapshot();
        assert_eq!(s.caption.as_deref(), Some(&*intro), "still the opening caption");
        let running = s.cluster.nodes.iter().flat_map(|n| n.pods.iter()).filter(|p| p.status == "Running").count();
        assert_eq!(running, 3, "the boot was not held at each hop");
        assert!(e.session.sim().now() >= Time(5_500), "{:?}", e.session.sim().now());
        // The first action ends it: from here the story is told, its own hop first.
        let (ns, name) = victim(&s);
        e.act(Action::Select(ns, name.clone()));
        e.act(Action::Kill);
        let told = e.snapshot().caption.clone().expect("the kill is told");
        assert_eq!(told.text, format!("kubectl: delete pod {}", crate::view::story::short_name(&name)));
        play_for(&mut e, ts, 3_000.0);
        assert!(e.snapshot().caption.as_ref().is_some_and(|c| c.component == "kube-controller-manager/replicaset-controller"));
    }

    #[test]
    fn a_reset_opens_on_the_caption_again() {
        let mut e = settled(true);
        e.act(Action::Console("kubectl get pods".into()));
        assert_ne!(e.snapshot().caption.as_ref().map(|c| c.component.as_str()), Some(""), "the console ended the opening");
        e.act(Action::Reset);
        let c = e.snapshot().caption.clone().expect("a new run opens on the caption");
        assert_eq!((c.component.as_str(), c.text.as_str()), ("", INTRO));
    }

    #[test]
    fn a_command_that_moves_the_clock_itself_is_not_told_after_it() {
        let mut e = story_engine("?scenario=default&seed=1");
        e.act(Action::Console("kubectl get pods".into()));
        e.act(Action::Console("sim settle".into()));
        assert!(e.session.sim().objects(crate::model::Kind::Pod).count() > 0, "the boot ran in the command");
        assert!(!e.story_holds(0.0), "no backlog of the boot is held");
        let caption = e.snapshot().caption.clone();
        assert!(caption.is_none(), "nothing is told of what ran in the command: {caption:?}");
    }

    #[test]
    fn with_story_mode_off_the_same_chain_runs_unheld_and_uncaptioned_to_the_same_trace() {
        let (mut on, mut off) = (settled(true), settled(false));
        assert_eq!(on.session.sim().now(), off.session.sim().now(), "both settled at the same moment");
        let seen_on = kill_and_watch(&mut on, 30_000.0);
        let seen_off = kill_and_watch(&mut off, 30_000.0);
        assert!(seen_off.shown.is_empty(), "no caption with story mode off: {:?}", seen_off.shown);
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
