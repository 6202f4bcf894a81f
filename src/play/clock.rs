//! The page's clock: how an animation frame's wall time becomes simulated time.
//!
//! It exists because the page, not the simulation, owns time: each frame covers the wall time
//! since the last one times the speed (a long frame, after a hidden tab, counts as at most
//! [`MAX_FRAME_MS`]), whole milliseconds are simulated and the fraction is carried to the next
//! frame, and the simulation may take only a budget of wall time per frame: past it, it falls
//! behind (lagging) rather than the page dropping frames. Fast-forward runs until every loop is
//! idle or gives up at [`FAST_FORWARD_LIMIT`]; Step runs to the next delivery that sends a
//! message. A lesson can hold the clock (a prediction is open) or stop it where it must look.
//!
//! The wall clock is never read here: the frame's time stamp and a function reading the wall
//! clock (for the budget only) are handed in, so tests drive it with fake clocks.

use super::governor::FrameGovernor;
use super::Engine;
use crate::lesson::LessonRun;
use crate::model::{Duration, Time};

/// Wall milliseconds the simulation may use in one frame while playing; past it the simulation
/// falls behind the clock rather than the page dropping frames. One delivery is never cut short,
/// so a frame can overrun by the cost of one step.
pub const PLAY_BUDGET_MS: f64 = 4.0;
/// The most a large cluster's simulation may take per frame. Its drawing is spread over frames
/// but still costs most of one, so the budget it gets is governed by [`FrameGovernor`].
pub const LARGE_PLAY_BUDGET_MS: f64 = 4.0;
/// The least a large cluster's simulation gets per frame, however late the frames are, so it
/// always moves.
const LARGE_MIN_BUDGET_MS: f64 = 1.0;
/// While fast-forwarding: most of a frame, leaving room to draw.
pub const FAST_FORWARD_BUDGET_MS: f64 = 10.0;
/// Fast-forward gives up after this much simulated time without settling (`sim settle`'s default).
pub const FAST_FORWARD_LIMIT: Duration = Duration::mins(5);
/// A frame after a long pause (a hidden tab) counts as at most this long.
pub const MAX_FRAME_MS: f64 = 100.0;
/// Step gives up looking for a message after this many deliveries.
const STEP_LIMIT: usize = 10_000;

/// How the page's clock drives the simulation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    Paused,
    Playing,
    FastForward,
}

impl Mode {
    /// The word in the app root's `data-mode`, which tests and course scripts wait on.
    pub fn name(self) -> &'static str {
        match self {
            Mode::Paused => "paused",
            Mode::Playing => "playing",
            Mode::FastForward => "fast-forward",
        }
    }

    /// What the toolbar says the clock is doing.
    pub fn status(self, lagging: bool) -> &'static str {
        match self {
            Mode::Playing if lagging => "playing (the simulation is behind the clock)",
            Mode::Playing => "playing",
            Mode::Paused => "paused",
            Mode::FastForward => "fast-forwarding",
        }
    }
}

/// A speed as the speed menu offers it: `0.25×`, `1×`, `100×`.
pub fn speed_label(s: f64) -> String {
    if s < 1.0 {
        format!("{s}×")
    } else {
        format!("{}×", s as u64)
    }
}

/// Simulated time as the page prints it (`1m30.25s`).
pub fn sim_time(t: Time) -> String {
    crate::command::sim_verbs::format_sim_time(Duration(t.0))
}

/// The clock's state between frames.
#[derive(Debug)]
pub(crate) struct Clock {
    pub(crate) mode: Mode,
    pub(crate) speed: f64,
    /// Simulated milliseconds owed to the clock but not yet whole.
    carry: f64,
    last_frame: Option<f64>,
    pub(crate) fast_forward_until: Time,
    pub(crate) lagging: bool,
    /// The large cluster's simulation budget, following how late the frames are.
    governor: FrameGovernor,
}

impl Clock {
    pub(crate) fn new() -> Clock {
        Clock {
            mode: Mode::Playing,
            speed: 1.0,
            carry: 0.0,
            last_frame: None,
            fast_forward_until: Time(0),
            lagging: false,
            governor: FrameGovernor::new(LARGE_MIN_BUDGET_MS, LARGE_PLAY_BUDGET_MS),
        }
    }

    /// The wall milliseconds the frame at `ts` covers: none for the first, at most
    /// [`MAX_FRAME_MS`], never negative.
    fn frame_dt(&mut self, ts: f64) -> f64 {
        let dt = self.last_frame.map(|last| (ts - last).clamp(0.0, MAX_FRAME_MS)).unwrap_or(0.0);
        self.last_frame = Some(ts);
        dt
    }

    /// The whole simulated milliseconds `dt` wall milliseconds are worth at this speed; the
    /// fraction is carried to the next frame.
    fn owed(&mut self, dt: f64) -> Duration {
        self.carry += dt * self.speed;
        let whole = self.carry.floor();
        self.carry -= whole;
        Duration(whole as u64)
    }

    /// Forgets the fraction owed: after falling behind, or in a new run.
    pub(crate) fn drop_carry(&mut self) {
        self.carry = 0.0;
    }
}

impl Engine {
    /// One animation frame at wall time `ts` (ms). `clock` reads the wall clock for the budget.
    /// Returns a new snapshot when anything on the page changed.
    pub fn frame(&mut self, ts: f64, clock: &dyn Fn() -> f64) -> Option<std::rc::Rc<super::Snapshot>> {
        if self.attach.is_some() {
            let attach_frame: fn(&mut Self, f64) -> Option<std::rc::Rc<super::Snapshot>> = super::out_of_line(Self::attach_frame);
            return attach_frame(self, ts);
        }
        let dt = self.clock.frame_dt(ts);
        let started = clock();
        let large = self.is_large();
        // A prediction is open: the simulation waits for the learner's answer.
        if self.lesson.as_ref().is_some_and(LessonRun::waiting_for_answer) {
            return None;
        }
        match self.clock.mode {
            Mode::Paused => return None,
            // Story mode holds the clock at a beat for its dwell: the frame's time is dropped.
            Mode::Playing => {
                if self.story_holds(ts) {
                    self.clock.drop_carry();
                    self.clock.lagging = false;
                } else {
                    self.play(dt, started, large, clock);
                }
            }
            Mode::FastForward => {
                self.fast_forward(started + FAST_FORWARD_BUDGET_MS, clock);
                self.story_skip();
                self.skip_hops();
            }
        }
        self.throttle.frame(started, large, self.clock.mode, &mut self.cluster);
        self.publish()
    }

    /// Plays the time `dt` is worth, within the frame's budget.
    fn play(&mut self, dt: f64, started: f64, large: bool, clock: &dyn Fn() -> f64) {
        let mut target = self.session.sim().now() + self.clock.owed(dt);
        // Stop where the lesson must look (a measurement, a check's deadline).
        if let Some(deadline) = self.lesson.as_ref().and_then(LessonRun::next_deadline) {
            target = target.min(deadline.max(self.session.sim().now()));
        }
        let budget = if large { self.clock.governor.budget(dt) } else { PLAY_BUDGET_MS };
        self.clock.lagging = !self.run_until(target, started + budget, clock);
        if self.clock.lagging {
            self.clock.drop_carry();
        }
    }

    /// Runs every delivery due up to `target`, unless the wall clock passes `deadline` first.
    /// Returns whether it got there.
    fn run_until(&mut self, target: Time, deadline: f64, clock: &dyn Fn() -> f64) -> bool {
        let large = self.is_large();
        let mut steps = 0u32;
        loop {
            match self.session.sim().next_time() {
                Some(t) if t <= target => {
                    self.session.advance_to(t);
                    steps += 1;
                    // A meaningful hop: story mode stops the clock here, and the rest of the
                    // frame's time is dropped (the next target is counted from now).
                    if self.story_beat() {
                        return true;
                    }
                    // Every step at large scale, where one delivery (a ReplicaSet sync over
                    // 3,000 pods) can take milliseconds; reading the clock costs far less.
                    if (large || steps.is_multiple_of(2)) && clock() > deadline {
                        return false;
                    }
                }
                _ => {
                    self.session.advance_to(target);
                    return true;
                }
            }
        }
    }

    fn fast_forward(&mut self, deadline: f64, clock: &dyn Fn() -> f64) {
        let mut steps = 0u32;
        // Asking whether the cluster is settled looks at every queued delivery: cheap at
        // teaching scale, where it is asked after every step so the clock stops right there.
        let settle_every = if self.is_large() { 64 } else { 1 };
        loop {
            if steps.is_multiple_of(settle_every) && self.session.sim().is_settled() {
                // The loops are idle, but a lesson still has to measure the learner's answer:
                // nothing changes until then, so go there and look, as Play would. Stopping
                // here would leave the answer waiting, and the next fast-forward would stop
                // here again.
                if let Some(at) = self.measurement_due() {
                    self.session.advance_to(at);
                    self.poll_lesson();
                    steps += 1;
                    continue;
                }
                // Likewise the scenario's timeline: a command still to run at a later time (a
                // scenario starting traffic once its pods are up) is part of what happens.
                if let Some(at) = self.session.next_timeline_at().filter(|at| *at <= self.clock.fast_forward_until) {
                    self.session.advance_to(at);
                    steps += 1;
                    continue;
                }
                self.clock.mode = Mode::Paused;
                self.note = format!("settled at {}", sim_time(self.session.sim().now()));
                return;
            }
            if steps > 0 && steps.is_multiple_of(4) && clock() > deadline {
                return;
            }
            match self.session.sim().next_time() {
                Some(t) if t <= self.clock.fast_forward_until => {
                    // A lesson's measurement or deadline falls before the next delivery: look there.
                    if let Some(d) = self.lesson.as_ref().and_then(LessonRun::next_deadline).filter(|d| *d < t) {
                        self.session.advance_to(d);
                        self.poll_lesson();
                    }
                    self.session.advance_to(t)
                }
                _ => {
                    self.session.advance_to(self.clock.fast_forward_until);
                    self.clock.mode = Mode::Paused;
                    self.note = format!("not settled after {} of fast-forward", sim_time(Time(FAST_FORWARD_LIMIT.0)));
                    return;
                }
            }
            steps += 1;
        }
    }

    /// When the open lesson's graded answer is still waiting for its measurement, the time it
    /// must look next (within this fast-forward's limit and after now).
    fn measurement_due(&self) -> Option<Time> {
        let run = self.lesson.as_ref()?;
        let waiting = run.graded().is_some_and(|g| g.correct.is_none());
        let now = self.session.sim().now();
        run.next_deadline().filter(|at| waiting && *at > now && *at <= self.clock.fast_forward_until)
    }

    fn poll_lesson(&mut self) {
        if let Some(run) = &mut self.lesson {
            run.poll(self.session.sim());
        }
    }

    /// Moves to the next delivery that sends a message (a delivery that only wakes a component
    /// with nothing to do shows nothing).
    pub(crate) fn step(&mut self) {
        let before = self.session.sim().trace().count();
        for _ in 0..STEP_LIMIT {
            let Some(t) = self.session.sim().next_time() else { break };
            self.session.advance_to(t);
            if self.session.sim().trace().count() != before {
                break;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::{test_engine, Action};
    use super::*;
    use std::cell::Cell;

    /// A wall clock that never moves: the budget never runs out.
    fn still() -> f64 {
        0.0
    }

    fn now(e: &Engine) -> u64 {
        e.session.sim().now().0
    }

    #[test]
    fn a_frame_covers_its_wall_time_times_the_speed_and_carries_the_fraction() {
        let mut e = test_engine("?scenario=default&seed=1&speed=0.25");
        e.frame(1000.0, &still);
        assert_eq!(now(&e), 0, "the first frame only starts the clock");
        // 0.25 × 10 ms = 2.5 ms: two whole, half carried; the next frame's 2.5 + 0.5 makes three.
        e.frame(1010.0, &still);
        assert_eq!(now(&e), 2);
        e.frame(1020.0, &still);
        assert_eq!(now(&e), 5, "the carried half is not lost");
        e.act(Action::Speed(10.0));
        e.frame(1036.0, &still);
        assert_eq!(now(&e), 165, "16 wall ms at 10× are 160 simulated ms");
        assert!(!e.snapshot().lagging);
    }

    #[test]
    fn a_long_frame_counts_as_at_most_max_frame_ms_and_a_clock_going_back_as_none() {
        let mut e = test_engine("?scenario=default&seed=1");
        e.frame(0.0, &still);
        e.frame(60_000.0, &still);
        assert_eq!(now(&e), MAX_FRAME_MS as u64, "a minute in a hidden tab is one long frame");
        e.frame(50_000.0, &still);
        assert_eq!(now(&e), MAX_FRAME_MS as u64, "an earlier time stamp covers nothing");
    }

    #[test]
    fn paused_frames_advance_nothing_and_publish_nothing() {
        let mut e = test_engine("?scenario=default&seed=1&autoplay=false");
        assert_eq!(e.snapshot().mode, Mode::Paused);
        let hash = e.session.sim().trace().hash();
        for ts in 0..10 {
            assert!(e.frame(f64::from(ts) * 16.0, &still).is_none());
        }
        assert_eq!((now(&e), e.session.sim().trace().hash()), (0, hash));
        // Play carries on from the last frame, not from when the pause began.
        e.act(Action::Play);
        e.frame(160.0, &still);
        assert_eq!(now(&e), 16);
    }

    #[test]
    fn a_frame_whose_budget_runs_out_lags_and_forgets_its_carry() {
        let mut e = test_engine("?scenario=default&seed=1&speed=0.5");
        e.frame(0.0, &still);
        e.frame(11.0, &still);
        assert_eq!(now(&e), 5, "half a millisecond carried");
        // Each reading of this clock is 3 ms later: the 4 ms budget is gone after two readings.
        let wall = Cell::new(0.0);
        let busy = || {
            wall.set(wall.get() + 3.0);
            wall.get()
        };
        e.act(Action::Speed(100.0));
        let s = e.frame(111.0, &busy).expect("the clock moved");
        assert!(s.lagging, "the simulation fell behind the clock");
        assert!(now(&e) < 5 + 10_000, "it did not get to where the clock is: {}", now(&e));
        assert_eq!(e.clock.carry, 0.0, "what it owed is forgiven, not paid later");
        let behind = now(&e);
        let s = e.frame(112.0, &still).expect("the clock moved");
        assert!(!s.lagging, "a frame within budget catches up");
        assert_eq!(now(&e), behind + 100, "one wall ms at 100×, with nothing owed from before");
    }

    #[test]
    fn fast_forward_plays_the_scenarios_timeline_before_it_stops() {
        // The service scenario starts its traffic at 5 s, after its pods may already be idle.
        let mut e = test_engine("?scenario=service&seed=1");
        e.act(Action::FastForward);
        let mut ts = 0.0;
        while e.snapshot().mode == Mode::FastForward && ts < 20_000.0 {
            e.frame(ts, &still);
            ts += 16.0;
        }
        assert_eq!(e.snapshot().mode, Mode::Paused);
        assert_eq!(e.session.timeline_remaining(), 0, "the timeline ran");
        assert!(e.snapshot().time_ms >= 5_000);
    }

    #[test]
    fn fast_forward_settles_and_pauses_with_a_note() {
        let mut e = test_engine("?scenario=default&seed=1");
        e.act(Action::FastForward);
        assert_eq!(e.snapshot().note, "fast-forwarding until every loop is idle");
        let mut ts = 0.0;
        while e.snapshot().mode == Mode::FastForward && ts < 10_000.0 {
            e.frame(ts, &still);
            ts += 16.0;
        }
        let s = e.snapshot();
        assert_eq!(s.mode, Mode::Paused);
        assert!(e.session.sim().is_settled());
        assert_eq!(s.note, format!("settled at {}", sim_time(Time(s.time_ms))));
        assert!(s.time_ms > 0 && s.time_ms < FAST_FORWARD_LIMIT.0, "{}", s.time_ms);
        assert_eq!(s.cluster.pod_count, 3, "web's three pods are there");
        assert!(s.hops.is_empty(), "what fast-forward ran is not drawn as tokens: {:?}", s.hops.len());
        // Played again, what happens from here on travels as tokens.
        assert!(e.run("kubectl scale deployment web --replicas=4"));
        e.act(Action::Play);
        for _ in 0..30 {
            e.frame(ts, &still);
            ts += 16.0;
        }
        assert!(!e.snapshot().hops.is_empty(), "the scale's hops are drawn");
    }

    #[test]
    fn fast_forward_gives_up_at_its_limit_with_a_note() {
        let mut e = test_engine("?scenario=default&seed=1");
        // With kube-apiserver down every client retries for ever, so nothing settles.
        assert!(e.run("sim stop kube-apiserver"));
        e.act(Action::FastForward);
        let from = now(&e);
        let mut ts = 0.0;
        while e.snapshot().mode == Mode::FastForward && ts < 100_000.0 {
            e.frame(ts, &still);
            ts += 16.0;
        }
        let s = e.snapshot();
        assert_eq!(s.mode, Mode::Paused);
        assert_eq!(now(&e), from + FAST_FORWARD_LIMIT.0, "it stops exactly at the limit");
        assert_eq!(s.note, "not settled after 5m of fast-forward");
    }

    #[test]
    fn fast_forward_spreads_over_frames_when_the_wall_clock_runs_out() {
        let mut e = test_engine("?scenario=default&seed=1");
        e.act(Action::FastForward);
        let wall = Cell::new(0.0);
        let busy = || {
            wall.set(wall.get() + FAST_FORWARD_BUDGET_MS);
            wall.get()
        };
        e.frame(0.0, &busy);
        assert_eq!(e.snapshot().mode, Mode::FastForward, "one frame's budget is not enough to settle");
        assert!(now(&e) > 0);
    }

    #[test]
    fn step_moves_exactly_to_the_next_delivery_that_sends_a_message() {
        let mut e = test_engine("?scenario=default&seed=1");
        let mut twin = test_engine("?scenario=default&seed=1");
        for _ in 0..5 {
            let before = e.session.sim().trace().count();
            e.act(Action::Step);
            assert_eq!(e.snapshot().mode, Mode::Paused);
            assert!(e.session.sim().trace().count() > before, "a message was sent");
            // The twin, one delivery at a time, stops at the first that traced anything.
            loop {
                let t = twin.session.sim().next_time().expect("a delivery");
                twin.session.advance_to(t);
                if twin.session.sim().trace().count() != before {
                    break;
                }
            }
            assert_eq!(now(&e), now(&twin), "Step stopped at the same delivery");
            assert_eq!(e.session.sim().trace().hash(), twin.session.sim().trace().hash());
        }
    }

    #[test]
    fn mode_names_statuses_and_speed_labels() {
        assert_eq!([Mode::Paused.name(), Mode::Playing.name(), Mode::FastForward.name()], ["paused", "playing", "fast-forward"]);
        assert_eq!(Mode::Playing.status(true), "playing (the simulation is behind the clock)");
        assert_eq!(Mode::Paused.status(true), "paused", "only a playing clock lags");
        let labels: Vec<String> = crate::view::page::SPEEDS.iter().map(|s| speed_label(*s)).collect();
        assert_eq!(labels, ["0.25×", "0.5×", "1×", "2×", "5×", "10×", "25×", "50×", "100×"]);
        assert_eq!(sim_time(Time(90_250)), "1m30.25s");
    }
}
