//! What the page renders for one moment, and how little of it is rebuilt.
//!
//! It exists because the page re-renders what it is handed: a [`Snapshot`] shares every part
//! that did not change with the last one by `Rc` (the components compare pointers first and skip
//! the part), and a frame in which nothing changed publishes no snapshot at all.
//!
//! Past teaching scale (more than [`LARGE_CLUSTER_PODS`] pods) the work is also spread over
//! frames ([`Throttle`]): a few node boxes are redrawn per frame, the room of loops, the flow,
//! the events and the gap chart a few times a second, the "what is wrong?" tracker once a
//! second, and a panel the browser skips as off screen not at all until it comes back.

use super::attach::AttachedView;
use super::clock::Mode;
use super::console::ConsoleLine;
use super::{CommandEntry, Engine};
use crate::lesson::LessonView;
use crate::view::cluster::{ClusterTracker, ClusterView, PodView};
use crate::view::events::{EventFilter, EventTable};
use crate::view::explain::{explain, Explanation};
use crate::view::flow::Hop;
use crate::view::gap::{GapChart, GapView, MIN_SPAN_MS, WINDOW_MS};
use crate::view::hints::Hint;
use crate::view::loops::{components, ComponentView};
use crate::view::services::{dots, services, Dot, ServiceView};
use crate::view::story::{Caption, Replacement};
use std::rc::Rc;

/// A cluster with more pods than this is large: compact pods, redrawing spread over frames.
pub const LARGE_CLUSTER_PODS: usize = 300;
/// In a large cluster, at most this many node boxes are redrawn per frame (taking turns).
const LARGE_BOXES_PER_FRAME: usize = 3;
/// In a large cluster, the room of loops, the flow and the event log are redrawn this often
/// (wall ms) rather than every frame.
const LARGE_PANELS_MS: f64 = 250.0;
/// In a large cluster, the "what is wrong?" tracker looks at every pod; it does so this often
/// (wall ms), open or closed, rather than with every redraw of the panels.
const LARGE_HINTS_MS: f64 = 1000.0;

/// What the share panel shows, computed when it opens.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ShareView {
    /// The absolute permalink.
    pub permalink: String,
    /// The kubectl lines of what was run.
    pub kubectl: String,
    /// The trace file's JSON text.
    pub trace: String,
    /// What the link and the file leave out, said beside them (empty when nothing is): the
    /// operators run from the Operator panel, whose code is in neither.
    pub omits: String,
}

/// The selected pod: its current picture (None once it is gone) and the scheduler's reasons.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Selection {
    pub namespace: String,
    pub name: String,
    pub pod: Option<PodView>,
    pub explanation: Option<Explanation>,
}

/// Everything the page renders, for one moment.
#[derive(Clone, Debug, PartialEq)]
pub struct Snapshot {
    pub time_ms: u64,
    pub seed: u64,
    pub scenario: String,
    pub mode: Mode,
    pub speed: f64,
    pub lagging: bool,
    pub note: String,
    pub errors: Rc<Vec<String>>,
    pub share: Option<Rc<ShareView>>,
    pub cluster: ClusterView,
    pub components: Rc<Vec<ComponentView>>,
    pub gap: Rc<GapView>,
    pub chart: Rc<GapChart>,
    pub events: Rc<EventTable>,
    pub filter: Rc<EventFilter>,
    pub hops: Rc<Vec<Hop>>,
    pub selection: Option<Rc<Selection>>,
    pub commands: Rc<Vec<CommandEntry>>,
    pub console: Rc<Vec<ConsoleLine>>,
    pub lesson: Option<Rc<LessonView>>,
    /// A lesson command that failed (the lesson's author's bug), shown in the lesson panel.
    pub lesson_problem: Option<String>,
    /// The "what is wrong?" panel: absent when an exercise turned it off (`?hints=off`), empty
    /// hints while it is closed.
    pub hints: Option<HintsShown>,
    /// Whether story mode is on.
    pub story: bool,
    /// The hop story mode is showing, in words.
    pub caption: Option<Rc<Caption>>,
    /// Killed pods and the pods their ReplicaSets made to replace them, oldest first: the
    /// stage draws a trail from one to the other.
    pub replacements: Rc<Vec<Replacement>>,
    /// The loops the learner unfolded by hand (`PROCESS/LOOP`).
    pub pins: Rc<Vec<String>>,
    /// The Services that select pods, with their endpoints and traffic (at most
    /// `view::services::SERVICES_SHOWN`), and how many more there are.
    pub services: Rc<(Vec<ServiceView>, usize)>,
    /// The newest `sim traffic` connections, drawn as dots (none past teaching scale).
    pub dots: Rc<Vec<Dot>>,
    /// Attached to a Kubernetes API (`?cluster=`): which, how it is read, what was told.
    pub attached: Option<Rc<AttachedView>>,
}

impl Snapshot {
    /// The picture before the first look at a run.
    pub(crate) fn empty(seed: u64, scenario: &str) -> Snapshot {
        Snapshot {
            time_ms: 0,
            seed,
            scenario: scenario.to_string(),
            mode: Mode::Playing,
            speed: 1.0,
            lagging: false,
            note: String::new(),
            errors: Rc::default(),
            share: None,
            cluster: ClusterView::default(),
            components: Rc::default(),
            gap: Rc::default(),
            chart: Rc::default(),
            events: Rc::default(),
            filter: Rc::default(),
            hops: Rc::default(),
            selection: None,
            commands: Rc::default(),
            hints: None,
            console: Rc::default(),
            lesson: None,
            lesson_problem: None,
            story: true,
            caption: None,
            replacements: Rc::default(),
            pins: Rc::default(),
            services: Rc::default(),
            dots: Rc::default(),
            attached: None,
        }
    }

    /// Whether the cluster is past teaching scale (the page draws it compactly).
    pub fn is_large(&self) -> bool {
        self.cluster.pod_count > LARGE_CLUSTER_PODS
    }
}

/// The hint panel's state.
#[derive(Clone, Debug, PartialEq)]
pub struct HintsShown {
    pub open: bool,
    pub hints: Rc<Vec<Hint>>,
}

/// Which of the panels below the cluster the browser skips as off screen.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Offscreen {
    pub loops: bool,
    pub flow: bool,
    pub events: bool,
}

/// When a large cluster's panels are redrawn.
#[derive(Debug)]
pub(crate) struct Throttle {
    /// Wall time of the last redraw of every panel.
    last_redraw: f64,
    /// Whether this frame redraws the room of loops, the flow and the event log.
    pub(crate) panels_due: bool,
    /// Wall time the hint tracker last looked, and whether this frame skips it (large cluster).
    last_hints: f64,
    hints_skip: bool,
    /// The panels the app last saw off screen, and whether this frame leaves them as they are
    /// (large cluster): nobody sees them, and they are redrawn when they come into view.
    offscreen: Offscreen,
    skip_offscreen: bool,
}

impl Throttle {
    pub(crate) fn new() -> Throttle {
        Throttle {
            last_redraw: f64::NEG_INFINITY,
            panels_due: true,
            last_hints: f64::NEG_INFINITY,
            hints_skip: false,
            offscreen: Offscreen::default(),
            skip_offscreen: false,
        }
    }

    /// Decides what the frame that began at wall time `started` redraws. A large cluster changes
    /// somewhere in every frame: its node boxes are redrawn a few per frame, and the panels that
    /// would redraw wholesale a few times a second.
    pub(crate) fn frame(&mut self, started: f64, large: bool, mode: Mode, cluster: &mut ClusterTracker) {
        cluster.set_max_boxes_per_update(if large { LARGE_BOXES_PER_FRAME } else { 0 });
        self.panels_due = !large || mode == Mode::Paused || started - self.last_redraw >= LARGE_PANELS_MS;
        if self.panels_due {
            self.last_redraw = started;
        }
        self.skip_offscreen = large;
        self.hints_skip = large && mode != Mode::Paused && started - self.last_hints < LARGE_HINTS_MS;
        if self.panels_due && !self.hints_skip {
            self.last_hints = started;
        }
    }

    /// Only a frame decides to skip the hints and the panels off screen; anything else that
    /// publishes redraws them.
    fn published(&mut self) {
        self.hints_skip = false;
        self.skip_offscreen = false;
    }

    /// Whether a panel that is `hidden` (off screen) is rebuilt this time.
    fn shown(&self, hidden: bool) -> bool {
        self.panels_due && !(self.skip_offscreen && hidden)
    }
}

/// `old` again when `new` equals it, so the page sees the same pointer and skips it.
fn keep<T: PartialEq>(old: &Rc<T>, new: T) -> Rc<T> {
    if **old == new {
        old.clone()
    } else {
        Rc::new(new)
    }
}

impl Engine {
    /// Tells the engine which panels the browser skips as off screen. At large scale their
    /// redraws wait until they come into view, and the next frame redraws one that does.
    pub fn set_offscreen(&mut self, offscreen: Offscreen) {
        let old = self.throttle.offscreen;
        if (old.loops && !offscreen.loops) || (old.flow && !offscreen.flow) || (old.events && !offscreen.events) {
            self.throttle.last_redraw = f64::NEG_INFINITY;
        }
        self.throttle.offscreen = offscreen;
    }

    /// Whether the cluster is past teaching scale.
    pub fn is_large(&self) -> bool {
        self.cluster.view().pod_count > LARGE_CLUSTER_PODS
    }

    /// Observes, then returns a new snapshot if it differs from the last.
    pub(crate) fn publish(&mut self) -> Option<Rc<Snapshot>> {
        self.observe();
        let mut next = self.build();
        if self.attach.is_some() {
            let dress: fn(&Engine, Rc<Snapshot>) -> Rc<Snapshot> = super::out_of_line(Engine::attach_dress);
            next = dress(self, next);
        }
        self.throttle.published();
        if *next == *self.snapshot {
            return None;
        }
        self.snapshot = next;
        Some(self.snapshot.clone())
    }

    pub(crate) fn build(&mut self) -> Rc<Snapshot> {
        let sim = self.session.sim();
        let now = sim.now();
        let old = self.snapshot.clone();
        let panels = self.throttle.panels_due;
        let hints_due = panels && !self.throttle.hints_skip;
        let off = self.throttle.offscreen;
        let throttle = &self.throttle;
        let shown = |hidden: bool| throttle.shown(hidden);
        // Ages in the event log move once a second of simulated time.
        let events = if shown(off.events) && (self.events_dirty || old.time_ms / 1000 != now.0 / 1000) {
            self.events_dirty = false;
            let mut filter = self.filter.clone();
            filter.pod = self.selected.clone();
            filter.linked = self.story_linked();
            keep(&old.events, self.events.table(&filter, now))
        } else {
            old.events.clone()
        };
        let hops = if shown(off.flow) && self.hops_dirty {
            self.hops_dirty = false;
            keep(&old.hops, self.hops.iter().cloned().collect())
        } else {
            old.hops.clone()
        };
        let selection = self.selected.as_ref().map(|(ns, name)| {
            let pod = self.cluster.view().pod(ns, name).cloned();
            let new = Selection { namespace: ns.clone(), name: name.clone(), pod, explanation: explain(sim, ns, name) };
            match &old.selection {
                Some(o) if **o == new => o.clone(),
                _ => Rc::new(new),
            }
        });
        // The chart's right edge moves in steps of 1/240 of its window (or of its shortest span).
        let step = if now.0 < WINDOW_MS { MIN_SPAN_MS / 240 } else { WINDOW_MS / 240 };
        let chart_now = now.0 / step * step;
        let large = self.cluster.view().pod_count > LARGE_CLUSTER_PODS;
        Rc::new(Snapshot {
            time_ms: now.0,
            seed: sim.seed(),
            scenario: self.scenario.clone(),
            mode: self.clock.mode,
            speed: self.clock.speed,
            lagging: self.clock.lagging && self.clock.mode == Mode::Playing,
            note: self.note.clone(),
            errors: keep(&old.errors, self.errors.clone()),
            share: self.share.clone(),
            cluster: self.cluster.view().clone(),
            components: if shown(off.loops) { keep(&old.components, components(sim)) } else { old.components.clone() },
            gap: keep(&old.gap, self.gap.view().clone()),
            // A large cluster redraws its chart with the panels, not every frame.
            chart: if panels { keep(&old.chart, self.gap.chart(chart_now, 240, 64)) } else { old.chart.clone() },
            events,
            filter: keep(&old.filter, self.filter.clone()),
            hops,
            selection,
            commands: keep(&old.commands, self.commands.iter().cloned().collect()),
            hints: self.hints.as_mut().map(|tracker| {
                let old_hints = old.hints.as_ref().map(|h| h.hints.clone()).unwrap_or_default();
                // Watched while closed too, so a symptom's age is right when the panel opens.
                let hints = match (self.hints_open, hints_due) {
                    (open, true) => {
                        let seen = tracker.observe(sim);
                        if open {
                            keep(&old_hints, seen)
                        } else {
                            Rc::default()
                        }
                    }
                    (true, false) => old_hints,
                    (false, false) => Rc::default(),
                };
                HintsShown { open: self.hints_open, hints }
            }),
            console: self.console.shared(&old.console),
            lesson: self.lesson.as_ref().map(|run| {
                let view = run.view();
                match &old.lesson {
                    Some(o) if **o == view => o.clone(),
                    _ => Rc::new(view),
                }
            }),
            lesson_problem: self.lesson_problem.clone(),
            story: self.story.on,
            caption: match (self.story_in_force(), self.story_caption()) {
                (true, Some(caption)) => Some(match &old.caption {
                    Some(o) if **o == *caption => o.clone(),
                    _ => Rc::new(caption.clone()),
                }),
                _ => None,
            },
            replacements: keep(&old.replacements, self.story_replacements()),
            pins: keep(&old.pins, self.pins.clone()),
            // A large cluster reads its Services with the panels; draws no dots.
            services: if panels { keep(&old.services, services(sim)) } else { old.services.clone() },
            dots: if large { Rc::default() } else { keep(&old.dots, dots(sim)) },
            // An attached page's parts are put in by `play::attach` (`attach_dress`).
            attached: None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::super::{test_engine, Action};
    use super::*;

    fn still() -> f64 {
        0.0
    }

    #[test]
    fn an_unchanged_frame_publishes_nothing_and_unchanged_parts_keep_their_rc() {
        let mut e = test_engine("?scenario=default&seed=1");
        e.act(Action::FastForward);
        let mut ts = 0.0;
        while e.snapshot().mode == Mode::FastForward {
            e.frame(ts, &still);
            ts += 16.0;
        }
        let settled = e.snapshot();
        assert!(e.frame(ts, &still).is_none(), "paused and settled: nothing to draw");
        assert!(e.refresh().is_none(), "a redraw of an unchanged picture publishes nothing");
        assert!(Rc::ptr_eq(&settled, &e.snapshot()));
        // Play one millisecond: the clock moves, the settled cluster's parts stay the same Rcs.
        e.act(Action::Play);
        e.frame(ts + 1.0, &still);
        let next = e.frame(ts + 2.0, &still).expect("the clock moved");
        assert_eq!(next.time_ms, settled.time_ms + 2);
        assert!(Rc::ptr_eq(&next.components, &settled.components), "the loops are idle");
        assert!(Rc::ptr_eq(&next.gap, &settled.gap) && Rc::ptr_eq(&next.events, &settled.events));
        assert!(Rc::ptr_eq(&next.hops, &settled.hops) && Rc::ptr_eq(&next.console, &settled.console));
        assert!(Rc::ptr_eq(&next.commands, &settled.commands) && Rc::ptr_eq(&next.errors, &settled.errors));
        assert!(next.cluster.nodes.iter().zip(&settled.cluster.nodes).all(|(a, b)| Rc::ptr_eq(a, b)), "no node box changed");
        // A change shows up as a new Rc for what changed only.
        let after = e.act(Action::Console("kubectl get pods".into())).expect("the console changed");
        assert!(!Rc::ptr_eq(&after.console, &next.console) && !Rc::ptr_eq(&after.commands, &next.commands));
        assert!(Rc::ptr_eq(&after.gap, &next.gap));
    }

    #[test]
    fn a_large_cluster_redraws_its_panels_a_few_times_a_second_and_skips_those_off_screen() {
        let mut e = test_engine("?scenario=default&seed=1&speed=100");
        assert!(e.run("kubectl scale deployment web --replicas=400"));
        assert!(e.run("sim settle"));
        e.refresh();
        assert!(e.is_large() && e.snapshot().is_large(), "{} pods", e.snapshot().cluster.pod_count);
        e.frame(0.0, &still);
        let first = e.frame(16.0, &still).expect("the clock moved");
        // 16 ms later: the panels wait for 250 ms to pass since they were last redrawn.
        assert!(e.throttle.last_redraw == 0.0);
        assert!(e.run("kubectl scale deployment web --replicas=401"));
        let second = e.frame(32.0, &|| 32.0).expect("the clock moved");
        assert!(Rc::ptr_eq(&second.components, &first.components), "not yet");
        let third = e.frame(300.0, &|| 300.0).expect("the clock moved");
        assert!(!Rc::ptr_eq(&third.components, &first.components), "redrawn after 250 ms");
        // Off screen, the loops are left as they are, and redrawn as soon as they come back.
        e.set_offscreen(Offscreen { loops: true, ..Default::default() });
        assert!(e.run("kubectl scale deployment web --replicas=402"));
        let hidden = e.frame(600.0, &|| 600.0).expect("the clock moved");
        assert!(Rc::ptr_eq(&hidden.components, &third.components), "nobody sees them");
        e.set_offscreen(Offscreen::default());
        let back = e.frame(616.0, &|| 616.0).expect("the clock moved");
        assert!(!Rc::ptr_eq(&back.components, &hidden.components), "redrawn on the next frame");
    }

    #[test]
    fn a_large_cluster_draws_at_most_eight_tokens_and_a_small_one_up_to_twenty_four() {
        // Each token costs the browser style and layout in every frame it moves (issue 14's
        // frame budget at 3,000 pods), so past teaching scale the flow keeps the newest few.
        let most = |e: &mut Engine, from: f64| {
            let mut most = 0;
            for i in 0..60 {
                let ts = from + f64::from(i) * 16.0;
                e.frame(ts, &|| ts);
                most = most.max(e.snapshot().hops.len());
            }
            most
        };
        let mut small = test_engine("?scenario=default&seed=1&speed=100");
        assert!(small.run("kubectl scale deployment web --replicas=40"));
        assert!(!small.is_large());
        assert!(most(&mut small, 0.0) > super::super::LARGE_HOPS_SHOWN, "a small cluster keeps its longer trail");
        let mut large = test_engine("?scenario=default&seed=1&speed=100");
        assert!(large.run("kubectl scale deployment web --replicas=400"));
        assert!(large.run("sim settle"));
        large.refresh();
        assert!(large.is_large());
        assert!(large.run("kubectl scale deployment web --replicas=500"));
        let drawn = most(&mut large, 0.0);
        assert!(drawn > 0 && drawn <= super::super::LARGE_HOPS_SHOWN, "{drawn} tokens");
    }

    #[test]
    fn a_service_and_its_traffic_reach_the_snapshot_and_stay_shared_while_unchanged() {
        let mut e = test_engine("?scenario=default&seed=1");
        assert!(e.run("kubectl expose deployment web --port=80"));
        assert!(e.run("sim settle"));
        assert!(e.run("sim traffic web --rate 20"));
        let mut ts = 0.0;
        for _ in 0..120 {
            e.frame(ts, &still);
            ts += 16.0;
        }
        let s = e.snapshot();
        let (services, more) = &*s.services;
        assert_eq!((services.len(), *more), (1, 0));
        assert_eq!((services[0].name.as_str(), services[0].ready()), ("web", 3));
        assert!(!s.dots.is_empty() && s.dots.iter().all(|d| d.service == "default/web"), "{:?}", s.dots);
        let proxy = s.components.iter().find(|c| c.name == "kube-proxy-node-1").expect("a kube-proxy per node");
        assert!(proxy.detail.starts_with("table: web → "), "{}", proxy.detail);
        // Paused, nothing moves: the next picture keeps the same Services.
        e.act(Action::Pause);
        let paused = e.refresh().unwrap_or_else(|| e.snapshot());
        assert!(Rc::ptr_eq(&paused.services, &e.snapshot().services));
        assert!(e.run("sim traffic stop"));
        let stopped = e.refresh().unwrap_or_else(|| e.snapshot());
        assert!(stopped.services.0[0].traffic.is_none(), "the flow ended");
    }

    #[test]
    fn a_pin_is_kept_until_pinned_again() {
        let mut e = test_engine("");
        let pin = "kube-controller-manager/job-controller".to_string();
        let pinned = e.act(Action::Pin(pin.clone())).expect("the page changes");
        assert_eq!(pinned.pins.as_slice(), std::slice::from_ref(&pin));
        let unpinned = e.act(Action::Pin(pin)).expect("and back");
        assert!(unpinned.pins.is_empty());
    }
}
