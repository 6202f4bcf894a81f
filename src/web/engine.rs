//! The page's engine: one command [`Session`] and the view trackers, moved on by animation
//! frames and by the controls, producing a [`Snapshot`] for Yew to render.
//!
//! It exists to keep every decision about *when* out of the components: how much simulated time
//! a frame covers at the chosen speed, how much wall time the simulation may take in one frame
//! (the budget; past it the simulation falls behind rather than the page), when fast-forward
//! stops, and which parts of the picture changed. Snapshots share unchanged parts by `Rc`, and a
//! frame in which nothing changed produces no snapshot at all, so Yew renders only what moved.
//!
//! Every control that changes the cluster is a command line run through the session
//! ([`Engine::run`]); the clock controls (play, pause, step, fast-forward, speed) only decide
//! how the page's own clock drives the simulation.
//!
//! For embedding, the engine also keeps what a host needs: the page parameters it started from,
//! the log of command lines with their simulated times (replayed by permalinks and trace files),
//! and an outbox of [`OutMessage`]s (events, command results, errors, lesson steps through
//! [`Engine::emit`]) that the app posts to the host.

use crate::console::{ConsoleKind, ConsoleLine};
use crate::governor::FrameGovernor;
use kubeloop::command::{CommandOutput, Session};
use kubeloop::lesson::{Driver, LessonRun, LessonView};
use kubeloop::model::{Duration, Time};
use kubeloop::sim::Message;
use kubeloop::view::cluster::{ClusterTracker, ClusterView, PodView};
use kubeloop::view::embed::{EventFeed, InMessage, OutMessage};
use kubeloop::view::events::{EventFilter, EventLog, EventTable};
use kubeloop::view::explain::{explain, Explanation};
use kubeloop::view::flow::{hops, FlowLayout, Hop};
use kubeloop::view::gap::{GapChart, GapHistory, GapView, MIN_SPAN_MS, WINDOW_MS};
use kubeloop::view::hints::{Hint, HintTracker};
use kubeloop::view::loops::{components, ComponentView};
use kubeloop::view::page::{self, PageParams, Recorded};
use kubeloop::view::share::{self, TraceFile};
use kubeloop::view::story::Caption;
use std::collections::VecDeque;
use std::rc::Rc;

/// Wall milliseconds the simulation may use in one frame while playing; past it the simulation
/// falls behind the clock rather than the page dropping frames. One delivery is never cut short,
/// so a frame can overrun by the cost of one step.
pub const PLAY_BUDGET_MS: f64 = 4.0;
/// The most a large cluster's simulation may take per frame. Its drawing is spread over frames
/// but still costs most of one, so the budget it gets is governed by [`FrameGovernor`](crate::governor::FrameGovernor).
pub const LARGE_PLAY_BUDGET_MS: f64 = 4.0;
/// The least a large cluster's simulation gets per frame, however late the frames are, so it
/// always moves.
const LARGE_MIN_BUDGET_MS: f64 = 1.0;
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
/// While fast-forwarding: most of a frame, leaving room to draw.
pub const FAST_FORWARD_BUDGET_MS: f64 = 10.0;
/// Fast-forward gives up after this much simulated time without settling (`sim settle`'s default).
pub const FAST_FORWARD_LIMIT: Duration = Duration::mins(5);
/// A frame after a long pause (a hidden tab) counts as at most this long.
const MAX_FRAME_MS: f64 = 100.0;
/// Hops shown at once; a frame with more new messages than [`SINGLE_HOPS`] folds them.
const HOPS_SHOWN: usize = 24;
const SINGLE_HOPS: usize = 12;
/// Event rows shown.
const EVENT_ROWS: usize = 60;
/// Command lines kept in the log.
const COMMANDS_KEPT: usize = 8;
/// Step gives up looking for a message after this many deliveries.
const STEP_LIMIT: usize = 10_000;
/// Error lines kept in the banner (the newest).
const ERRORS_KEPT: usize = 4;

/// How the page's clock drives the simulation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    Paused,
    Playing,
    FastForward,
}

/// What the page can be asked to do.
#[derive(Clone, Debug, PartialEq)]
pub enum Action {
    Play,
    Pause,
    Step,
    FastForward,
    Speed(f64),
    Select(String, String),
    Deselect,
    Kill,
    Scale(i64),
    AddNode,
    Reset,
    Seed(u64),
    FilterObject(String),
    FilterComponent(String),
    /// Any command line, as if typed in the console (component switches, node faults).
    Command(String),
    /// Opens or closes the "what is wrong?" panel.
    ToggleHints,
    /// Turns story mode (paced, captioned playback of the meaningful hops) on or off.
    #[allow(dead_code)] // until the toolbar's story toggle sends it
    ToggleStory,
    /// A line typed in the console.
    Console(String),
    /// Ctrl-C in the console: end every open watch.
    Interrupt,
    /// The editor's Apply: `kubectl apply -f manifest.yaml` with this text.
    ApplyManifest(String),
    /// The learner's answer to the lesson's open question.
    LessonAnswer(String),
    /// The lesson's Next button.
    LessonNext,
    /// Opens the share panel (computing its permalink, kubectl lines and trace) or closes it.
    Share,
    /// Imports a trace file's JSON text.
    ImportTrace(String),
    /// Dismisses the error banner.
    DismissErrors,
}

/// What the share panel shows, computed when it opens.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ShareView {
    /// The absolute permalink.
    pub permalink: String,
    /// The kubectl lines of what was run.
    pub kubectl: String,
    /// The trace file's JSON text.
    pub trace: String,
}

/// One command the page ran, with what it printed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CommandEntry {
    pub seq: u64,
    pub line: String,
    pub output: String,
    pub ok: bool,
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
    pub layout: Rc<FlowLayout>,
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
}

/// The hint panel's state.
#[derive(Clone, Debug, PartialEq)]
pub struct HintsShown {
    pub open: bool,
    pub hints: Rc<Vec<Hint>>,
}

/// `old` again when `new` equals it, so the page sees the same pointer and skips it.
fn keep<T: PartialEq>(old: &Rc<T>, new: T) -> Rc<T> {
    if **old == new {
        old.clone()
    } else {
        Rc::new(new)
    }
}

pub struct Engine {
    session: Session,
    scenario: String,
    errors: Vec<String>,
    params: PageParams,
    /// The command lines run in this run, with their simulated times.
    log: Vec<Recorded>,
    outbox: Vec<OutMessage>,
    feed: EventFeed,
    /// Whether a host hears the outbox; a standalone page builds no messages for no one.
    host_listens: bool,
    /// A scenario URL the app should fetch, and whether its replay is the address's.
    fetch: Option<String>,
    replay_pending: bool,
    /// A trace file being imported: checked once its replay is done.
    verify: Option<TraceFile>,
    /// The address of the page itself (for permalinks), without a query.
    page_base: String,
    share: Option<Rc<ShareView>>,
    cluster: ClusterTracker,
    events: EventLog,
    events_dirty: bool,
    gap: GapHistory,
    flow_seq: u64,
    hops: VecDeque<Hop>,
    hops_dirty: bool,
    mode: Mode,
    speed: f64,
    /// Simulated milliseconds owed to the clock but not yet whole.
    carry: f64,
    last_frame: Option<f64>,
    fast_forward_until: Time,
    lagging: bool,
    /// Wall time of the last redraw of every panel, for throttling a large cluster.
    last_redraw: f64,
    /// Whether this frame redraws the room of loops, the flow and the event log.
    panels_due: bool,
    /// Wall time the hint tracker last looked, and whether this frame skips it (large cluster).
    last_hints: f64,
    hints_skip: bool,
    /// The large cluster's simulation budget, following how late the frames are.
    governor: FrameGovernor,
    /// The panels the app last saw off screen, and whether this frame leaves them as they are
    /// (large cluster): nobody sees them, and they are redrawn when they come into view.
    offscreen: Offscreen,
    skip_offscreen: bool,
    note: String,
    selected: Option<(String, String)>,
    filter: EventFilter,
    commands: VecDeque<CommandEntry>,
    command_seq: u64,
    /// `None` when the address turned hints off.
    hints: Option<HintTracker>,
    hints_open: bool,
    console: VecDeque<ConsoleLine>,
    console_seq: u64,
    lesson: Option<LessonRun>,
    lesson_problem: Option<String>,
    /// `?lesson=URL`, for the app to fetch.
    lesson_fetch: Option<String>,
    /// The steps of the lesson the host has been told have passed.
    lesson_steps_reported: std::collections::BTreeSet<usize>,
    /// Story mode: on by default.
    story: bool,
    snapshot: Rc<Snapshot>,
}

/// Console lines kept.
const CONSOLE_LINES: usize = 400;

impl Engine {
    /// Starts the scenario `params` names (or the default, with the error shown), applies the
    /// speed and autoplay, and replays the permalink's commands. `errors` are the parameters'
    /// own, shown in the banner. A scenario URL is left in [`Engine::take_fetch`] for the app.
    pub fn new(params: PageParams, errors: Vec<String>) -> Engine {
        let mut errors = errors;
        let mut params = params;
        // A lesson names its own scenario and seed (an explicit ?seed= still wins).
        // A lesson file by URL is fetched by the app and started when it arrives.
        let lesson_url = params.lesson.clone().filter(|l| page::is_scenario_url(l));
        let lesson =
            params.lesson.as_deref().filter(|_| lesson_url.is_none()).and_then(|name| match crate::lesson_view::lesson_named(name) {
                Ok(lesson) => Some(lesson),
                Err(e) => {
                    errors.push(e);
                    None
                }
            });
        if let Some(lesson) = &lesson {
            params.scenario = lesson.scenario.clone();
            params.seed = params.seed.or(lesson.seed);
        }
        let builtin = if params.scenario_is_url() { "default".to_string() } else { params.scenario.clone() };
        let session = start(&builtin, params.seed).unwrap_or_else(|e| {
            errors.push(e);
            start("default", None).unwrap_or_else(|_| Session::from_sim(kubeloop::sim::Sim::new(1)))
        });
        let mut engine = Engine::with_session(session, builtin, None);
        engine.errors = errors;
        engine.speed = params.speed;
        if !params.autoplay || params.at.is_some() {
            engine.mode = Mode::Paused;
        }
        if params.scenario_is_url() {
            engine.fetch = Some(params.scenario.clone());
            engine.replay_pending = true;
        }
        engine.params = params;
        // An exercise leaves the "what is wrong?" panel out of `panels=` to keep its answer hidden.
        if !engine.params.shows_panel("hints") {
            engine.hints = None;
        }
        if let Some(lesson) = lesson {
            engine.start_lesson(lesson);
        }
        engine.lesson_fetch = lesson_url;
        if !engine.replay_pending {
            engine.replay_params();
        }
        engine.snapshot = engine.build();
        engine
    }

    /// Runs the address's commands and moves to its time.
    fn replay_params(&mut self) {
        let commands = self.params.commands.clone();
        let errors = share::replay(&mut self.session, &commands, self.params.at);
        self.log = commands;
        for e in errors {
            self.report(e);
        }
        if let Some(file) = self.verify.take() {
            match file.matches(&self.session) {
                Ok(()) => self.note = format!("trace imported: same state, trace hash {}", file.trace_hash),
                Err(e) => self.report(e),
            }
        }
        self.observe();
    }

    /// The parameters the page started from.
    pub fn params(&self) -> &PageParams {
        &self.params
    }

    /// Sets the page's own address (no query), used for permalinks.
    pub fn set_page_base(&mut self, base: String) {
        self.page_base = base;
    }

    /// Queues a message for the host (the lesson engine reports completed steps here).
    pub fn emit(&mut self, message: OutMessage) {
        self.outbox.push(message);
    }

    /// Tells the host once about each lesson step that has passed.
    fn report_lesson_steps(&mut self) {
        // Runs every frame: read the phase and step first, build the message only once per step.
        let Some(run) = &self.lesson else { return };
        let step = run.index();
        if run.phase() != kubeloop::lesson::run::Phase::Passed || self.lesson_steps_reported.contains(&step) {
            return;
        }
        let lesson = run.lesson();
        let (name, title) = (lesson.name.clone(), lesson.steps.get(step).map(|s| s.title.clone()).unwrap_or_default());
        self.lesson_steps_reported.insert(step);
        let time_ms = self.session.sim().now().0;
        self.emit(OutMessage::StepCompleted { lesson: name, step, title, time_ms });
    }

    /// Tells the engine whether a host hears its outbox (see [`Engine::take_outbox`]).
    pub fn set_host_listens(&mut self, listens: bool) {
        self.host_listens = listens;
    }

    /// The messages for the host since the last call, cluster events included. With no host
    /// listening it drops them and moves the event feed on without building a message per Event
    /// (thousands while a large cluster converges).
    pub fn take_outbox(&mut self) -> Vec<OutMessage> {
        if !self.host_listens {
            self.outbox.clear();
            self.feed.skip(self.session.sim());
            return Vec::new();
        }
        let mut out = std::mem::take(&mut self.outbox);
        out.extend(self.feed.poll(self.session.sim()));
        out
    }

    /// Starts a lesson on the run it is given (its scenario already loaded).
    fn start_lesson(&mut self, lesson: kubeloop::lesson::Lesson) {
        self.lesson_steps_reported.clear();
        let mut run = LessonRun::new(lesson);
        let problems = run.start(self);
        self.lesson_problem = (!problems.is_empty()).then(|| problems.join("\n"));
        self.lesson = Some(run);
        self.observe();
    }

    /// A lesson URL to fetch, once.
    pub fn take_lesson_fetch(&mut self) -> Option<String> {
        self.lesson_fetch.take()
    }

    /// The text of a fetched lesson file (or why it could not be fetched): on its own scenario
    /// and seed the lesson starts; a bad file is reported and the page runs on.
    pub fn lesson_fetched(&mut self, url: &str, text: Result<String, String>) -> Option<Rc<Snapshot>> {
        let lesson = text
            .map_err(|e| format!("error: cannot load lesson {url:?}: {e}"))
            .and_then(|t| kubeloop::lesson::Lesson::parse(&t).map_err(|e| format!("error: lesson {url:?}: {e}")));
        let started = lesson.and_then(|lesson| {
            let seed = self.params.seed.or(lesson.seed);
            start(&lesson.scenario, seed).map(|session| (lesson, session))
        });
        match started {
            Ok((lesson, session)) => {
                let scenario = lesson.scenario.clone();
                self.replace(session, scenario);
                self.start_lesson(lesson);
            }
            Err(e) => self.report(e),
        }
        self.panels_due = true;
        self.publish()
    }

    /// A scenario URL to fetch, once.
    pub fn take_fetch(&mut self) -> Option<String> {
        self.fetch.take()
    }

    /// Shows an error in the banner and tells the host.
    pub fn report(&mut self, message: String) {
        self.outbox.push(OutMessage::Error { message: message.clone() });
        self.errors.push(message);
        let extra = self.errors.len().saturating_sub(ERRORS_KEPT);
        self.errors.drain(..extra);
    }

    /// A message from the host (already checked for its origin), as JSON text.
    pub fn receive(&mut self, json: &str) -> Option<Rc<Snapshot>> {
        match kubeloop::view::embed::parse_message(json) {
            Ok(InMessage::Command(line)) => {
                self.run(&line);
            }
            Ok(InMessage::Scenario(name)) => return self.load_scenario(&name),
            Ok(InMessage::Speed(s)) => return self.act(Action::Speed(s)),
            Ok(InMessage::Play) => return self.act(Action::Play),
            Ok(InMessage::Pause) => return self.act(Action::Pause),
            Ok(InMessage::Reset) => return self.act(Action::Reset),
            Err(e) => self.report(e),
        }
        self.panels_due = true;
        self.publish()
    }

    /// A new snapshot if anything changed (after an error was reported from outside).
    pub fn refresh(&mut self) -> Option<Rc<Snapshot>> {
        self.panels_due = true;
        self.publish()
    }

    /// Loads a scenario by built-in name, or asks the app to fetch its URL.
    pub fn load_scenario(&mut self, name: &str) -> Option<Rc<Snapshot>> {
        if page::is_scenario_url(name) {
            self.fetch = Some(name.to_string());
            self.replay_pending = false;
            return None;
        }
        match start(name, None) {
            Ok(session) => self.replace(session, name.to_string()),
            Err(e) => self.report(e),
        }
        self.publish()
    }

    /// The text of a fetched scenario file (or why it could not be fetched).
    pub fn fetched(&mut self, url: &str, text: Result<String, String>) -> Option<Rc<Snapshot>> {
        let session = text
            .map_err(|e| format!("error: cannot load scenario {url:?}: {e}"))
            .and_then(|t| kubeloop::command::Scenario::parse(&t).map_err(|e| format!("error: scenario {url:?}: {e}")))
            .and_then(|s| Session::new(s, if self.replay_pending { self.params.seed } else { None }));
        match session {
            Ok(session) => {
                self.replace(session, url.to_string());
                if std::mem::take(&mut self.replay_pending) {
                    self.replay_params();
                }
            }
            Err(e) => {
                self.replay_pending = false;
                self.report(e);
            }
        }
        self.panels_due = true;
        self.publish()
    }

    /// Swaps in a new run.
    fn replace(&mut self, mut session: Session, scenario: String) {
        session.set_blocking(false);
        self.session = session;
        self.scenario = scenario;
        self.log.clear();
        self.restarted();
    }

    /// The permalink's query, the kubectl lines and the trace file of the run so far.
    fn share_view(&self) -> ShareView {
        let sim = self.session.sim();
        let query = share::permalink_query(&self.scenario, sim.seed(), &self.log, sim.now().0);
        ShareView {
            permalink: format!("{}{query}", self.page_base),
            kubectl: share::as_kubectl(&self.scenario, sim.seed(), &self.log),
            trace: TraceFile::of(&self.session, &self.scenario, &self.log).to_json(),
        }
    }

    /// Replays a trace file's run and checks it reached the same trace hash.
    fn import_trace(&mut self, json: &str) {
        let file = match TraceFile::parse(json) {
            Ok(f) => f,
            Err(e) => return self.report(e),
        };
        self.params.commands = file.commands.clone();
        self.params.at = Some(file.at);
        self.params.seed = Some(file.seed);
        self.mode = Mode::Paused;
        self.share = None;
        if page::is_scenario_url(&file.scenario) {
            self.fetch = Some(file.scenario.clone());
            self.replay_pending = true;
            self.verify = Some(file);
            return;
        }
        match start(&file.scenario, Some(file.seed)) {
            Ok(session) => {
                self.replace(session, file.scenario.clone());
                self.verify = Some(file);
                self.replay_params();
            }
            Err(e) => self.report(e),
        }
    }

    fn with_session(mut session: Session, scenario: String, error: Option<String>) -> Engine {
        let errors: Vec<String> = error.into_iter().collect();
        // The page owns the clock: a command that would wait (rollout status) must not move it.
        session.set_blocking(false);
        let layout = Rc::new(FlowLayout::new(&[]));
        let snapshot = Rc::new(Snapshot {
            time_ms: 0,
            seed: session.sim().seed(),
            scenario: scenario.clone(),
            mode: Mode::Playing,
            speed: 1.0,
            lagging: false,
            note: String::new(),
            errors: Rc::new(errors.clone()),
            share: None,
            cluster: ClusterView::default(),
            components: Rc::default(),
            gap: Rc::default(),
            chart: Rc::default(),
            events: Rc::default(),
            filter: Rc::default(),
            layout,
            hops: Rc::default(),
            selection: None,
            commands: Rc::default(),
            hints: None,
            console: Rc::default(),
            lesson: None,
            lesson_problem: None,
            story: true,
            caption: None,
        });
        let mut engine = Engine {
            session,
            scenario,
            errors,
            params: PageParams::default(),
            log: Vec::new(),
            outbox: Vec::new(),
            feed: EventFeed::new(),
            host_listens: true,
            fetch: None,
            replay_pending: false,
            verify: None,
            page_base: String::new(),
            share: None,
            cluster: ClusterTracker::new(),
            events: EventLog::new(),
            events_dirty: true,
            gap: GapHistory::new("default", "web"),
            flow_seq: 0,
            hops: VecDeque::new(),
            hops_dirty: true,
            mode: Mode::Playing,
            speed: 1.0,
            carry: 0.0,
            last_frame: None,
            fast_forward_until: Time(0),
            lagging: false,
            last_redraw: f64::NEG_INFINITY,
            panels_due: true,
            last_hints: f64::NEG_INFINITY,
            hints_skip: false,
            governor: FrameGovernor::new(LARGE_MIN_BUDGET_MS, LARGE_PLAY_BUDGET_MS),
            offscreen: Offscreen::default(),
            skip_offscreen: false,
            note: String::new(),
            selected: None,
            filter: EventFilter { limit: EVENT_ROWS, ..Default::default() },
            commands: VecDeque::new(),
            command_seq: 0,
            hints: Some(HintTracker::new()),
            hints_open: false,
            console: VecDeque::new(),
            console_seq: 0,
            lesson: None,
            lesson_problem: None,
            lesson_fetch: None,
            lesson_steps_reported: Default::default(),
            story: true,
            snapshot,
        };
        engine.pick_deployment();
        engine.observe();
        engine.snapshot = engine.build();
        engine
    }

    pub fn snapshot(&self) -> Rc<Snapshot> {
        self.snapshot.clone()
    }

    /// One animation frame at wall time `ts` (ms). `clock` reads the wall clock for the budget.
    /// Returns a new snapshot when anything on the page changed.
    pub fn frame(&mut self, ts: f64, clock: &dyn Fn() -> f64) -> Option<Rc<Snapshot>> {
        let dt = self.last_frame.map(|last| (ts - last).clamp(0.0, MAX_FRAME_MS)).unwrap_or(0.0);
        self.last_frame = Some(ts);
        let started = clock();
        let large = self.is_large();
        // A prediction is open: the simulation waits for the learner's answer.
        if self.lesson.as_ref().is_some_and(LessonRun::waiting_for_answer) {
            return None;
        }
        match self.mode {
            Mode::Paused => return None,
            Mode::Playing => {
                self.carry += dt * self.speed;
                let whole = self.carry.floor();
                self.carry -= whole;
                let mut target = self.session.sim().now() + Duration(whole as u64);
                // Stop where the lesson must look (a measurement, a check's deadline).
                if let Some(deadline) = self.lesson.as_ref().and_then(LessonRun::next_deadline) {
                    target = target.min(deadline.max(self.session.sim().now()));
                }
                let budget = if large { self.governor.budget(dt) } else { PLAY_BUDGET_MS };
                self.lagging = !self.run_until(target, started + budget, clock);
                if self.lagging {
                    self.carry = 0.0;
                }
            }
            Mode::FastForward => self.fast_forward(started + FAST_FORWARD_BUDGET_MS, clock),
        }
        // A large cluster changes somewhere in every frame: its node boxes are redrawn a few per
        // frame, and the panels that would redraw wholesale a few times a second.
        self.cluster.set_max_boxes_per_update(if large { LARGE_BOXES_PER_FRAME } else { 0 });
        self.panels_due = !large || self.mode == Mode::Paused || started - self.last_redraw >= LARGE_PANELS_MS;
        if self.panels_due {
            self.last_redraw = started;
        }
        self.skip_offscreen = large;
        self.hints_skip = large && self.mode != Mode::Paused && started - self.last_hints < LARGE_HINTS_MS;
        if self.panels_due && !self.hints_skip {
            self.last_hints = started;
        }
        self.publish()
    }

    /// Tells the engine which panels the browser skips as off screen. At large scale their
    /// redraws wait until they come into view, and the next frame redraws one that does.
    pub fn set_offscreen(&mut self, offscreen: Offscreen) {
        let old = self.offscreen;
        if (old.loops && !offscreen.loops) || (old.flow && !offscreen.flow) || (old.events && !offscreen.events) {
            self.last_redraw = f64::NEG_INFINITY;
        }
        self.offscreen = offscreen;
    }

    /// Whether the cluster is past teaching scale.
    pub fn is_large(&self) -> bool {
        self.cluster.view().pod_count > LARGE_CLUSTER_PODS
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
                self.mode = Mode::Paused;
                self.note = format!("settled at {}", sim_time(self.session.sim().now()));
                return;
            }
            if steps > 0 && steps.is_multiple_of(4) && clock() > deadline {
                return;
            }
            match self.session.sim().next_time() {
                Some(t) if t <= self.fast_forward_until => {
                    // A lesson's measurement or deadline falls before the next delivery: look there.
                    if let Some(d) = self.lesson.as_ref().and_then(LessonRun::next_deadline).filter(|d| *d < t) {
                        self.session.advance_to(d);
                        if let Some(run) = &mut self.lesson {
                            run.poll(self.session.sim());
                        }
                    }
                    self.session.advance_to(t)
                }
                _ => {
                    self.session.advance_to(self.fast_forward_until);
                    self.mode = Mode::Paused;
                    self.note = format!("not settled after {} of fast-forward", sim_time(Time(FAST_FORWARD_LIMIT.0)));
                    return;
                }
            }
            steps += 1;
        }
    }

    /// Moves to the next delivery that sends a message (a delivery that only wakes a component
    /// with nothing to do shows nothing).
    fn step(&mut self) {
        let before = self.session.sim().trace().count();
        for _ in 0..STEP_LIMIT {
            let Some(t) = self.session.sim().next_time() else { break };
            self.session.advance_to(t);
            if self.session.sim().trace().count() != before {
                break;
            }
        }
    }

    /// Does what a control asks. Returns the new snapshot if anything changed.
    pub fn act(&mut self, action: Action) -> Option<Rc<Snapshot>> {
        self.panels_due = true;
        match action {
            Action::Play => {
                self.mode = Mode::Playing;
                self.note.clear();
            }
            Action::Pause => self.mode = Mode::Paused,
            Action::Step => {
                self.mode = Mode::Paused;
                self.note.clear();
                self.step();
            }
            Action::FastForward => {
                self.mode = Mode::FastForward;
                self.note = "fast-forwarding until every loop is idle".into();
                self.fast_forward_until = self.session.sim().now() + FAST_FORWARD_LIMIT;
            }
            Action::Speed(s) => self.speed = page::nearest_speed(s),
            Action::Select(ns, name) => {
                self.selected = Some((ns, name));
                self.events_dirty = true;
            }
            Action::Deselect => {
                self.selected = None;
                self.events_dirty = true;
            }
            Action::Kill => {
                if let Some((ns, name)) = self.selected.clone() {
                    self.run(&page::kill_command(&ns, &name));
                }
            }
            Action::Scale(n) => {
                let (ns, name) = (self.gap.namespace().to_string(), self.gap.name().to_string());
                self.run(&page::scale_command(&ns, &name, n.max(0)));
            }
            Action::AddNode => {
                let line = page::add_node_command(self.session.sim());
                self.run(&line);
            }
            Action::Reset => {
                let line = page::seed_command(self.session.sim().seed());
                self.run(&line);
            }
            Action::Seed(seed) => {
                self.run(&page::seed_command(seed));
            }
            Action::FilterObject(text) => {
                self.filter.object = text;
                self.events_dirty = true;
            }
            Action::FilterComponent(c) => {
                self.filter.component = c;
                self.events_dirty = true;
            }
            Action::Command(line) => {
                self.run(&line);
            }
            Action::ToggleHints => self.hints_open = !self.hints_open,
            Action::ToggleStory => self.story = !self.story,
            Action::Share => self.share = if self.share.is_some() { None } else { Some(Rc::new(self.share_view())) },
            Action::ImportTrace(json) => self.import_trace(&json),
            Action::DismissErrors => self.errors.clear(),
            Action::Console(line) => self.console_run(&line),
            Action::Interrupt => {
                self.session.stop_watches();
                self.console_push(ConsoleKind::Input, "^C");
            }
            Action::ApplyManifest(text) => {
                self.session.add_file(kubeloop::command::validate::EDITOR_FILE, &text);
                let line = format!("kubectl apply -f {}", kubeloop::command::validate::EDITOR_FILE);
                self.console_run(&line);
            }
            Action::LessonAnswer(text) => self.with_lesson(|run, engine| run.answer(engine, &text)),
            Action::LessonNext => self.with_lesson(|run, engine| run.next(engine)),
        }
        self.publish()
    }

    /// Tab in the console: the line completed as far as is certain, and the candidates.
    pub fn complete(&self, line: &str) -> (String, Vec<String>) {
        kubeloop::command::complete::complete_line(line, &self.session)
    }

    /// The editor's validate-as-you-type: a server dry run of `text`.
    pub fn validate(&mut self, text: &str) -> Result<String, String> {
        self.session.validate_manifest(text)
    }

    /// Runs a lesson method that may run commands through the engine; its errors are shown.
    fn with_lesson(&mut self, f: impl FnOnce(&mut LessonRun, &mut Engine) -> Result<Vec<String>, String>) {
        let Some(mut run) = self.lesson.take() else { return };
        match f(&mut run, self) {
            Ok(problems) if problems.is_empty() => {}
            Ok(problems) => self.lesson_problem = Some(problems.join("\n")),
            Err(e) => self.console_push(ConsoleKind::Error, &e),
        }
        self.lesson = Some(run);
    }

    /// A console line: echoed, run, its output and what its watches say at once shown below it.
    fn console_run(&mut self, line: &str) {
        self.console_push(ConsoleKind::Input, &format!("$ {line}"));
        if line.trim().is_empty() {
            return;
        }
        let out = self.run_logged(line);
        self.console_output(&out);
    }

    fn console_output(&mut self, out: &CommandOutput) {
        let (stdout, stderr) = (out.stdout.clone(), out.stderr.clone());
        for l in stdout.lines() {
            self.console_push(ConsoleKind::Output, l);
        }
        for l in stderr.lines() {
            self.console_push(ConsoleKind::Error, l);
        }
    }

    fn console_push(&mut self, kind: ConsoleKind, text: &str) {
        self.console_seq += 1;
        self.console.push_back(ConsoleLine { seq: self.console_seq, kind, text: text.to_string() });
        while self.console.len() > CONSOLE_LINES {
            self.console.pop_front();
        }
    }

    /// Runs one command line through the session, as the console would, and logs it.
    pub fn run(&mut self, line: &str) -> bool {
        self.run_logged(line).ok
    }

    /// [`Engine::run`], returning everything the command printed (its own output, then its
    /// watches').
    fn run_logged(&mut self, line: &str) -> CommandOutput {
        let at = self.session.sim().now().0;
        let out = self.session.execute(line);
        let stream = self.session.take_stream();
        let mut output = out.stdout.clone();
        output.push_str(&out.stderr);
        output.push_str(&stream.stdout);
        output.push_str(&stream.stderr);
        self.command_seq += 1;
        self.commands.push_front(CommandEntry {
            seq: self.command_seq,
            line: line.to_string(),
            output: output.trim_end().to_string(),
            ok: out.ok,
        });
        self.commands.truncate(COMMANDS_KEPT);
        self.outbox.push(OutMessage::Command { command: line.to_string(), ok: out.ok, output: output.trim_end().to_string(), time_ms: at });
        if out.ok && line.trim_start().starts_with("sim seed") {
            // A new run: the permalink starts from its seed, with no commands yet.
            self.log.clear();
            self.restarted();
        } else {
            self.log.push(Recorded { at, command: line.to_string() });
        }
        let mut all = out;
        all.stdout.push_str(&stream.stdout);
        all.stderr.push_str(&stream.stderr);
        all
    }

    /// After `sim seed`: a new run, so every tracker starts over.
    fn restarted(&mut self) {
        self.cluster.reset();
        self.events.reset();
        self.gap.clear();
        self.hops.clear();
        self.flow_seq = 0;
        self.selected = None;
        self.note.clear();
        self.carry = 0.0;
        self.events_dirty = true;
        self.hops_dirty = true;
        self.pick_deployment();
    }

    /// The Deployment the gap panel follows: `web` if there is one, else the first.
    fn pick_deployment(&mut self) {
        let sim = self.session.sim();
        let mut all = sim.objects(kubeloop::model::Kind::Deployment).map(|o| (o.meta().namespace.clone(), o.meta().name.clone()));
        let first = all.next();
        let web = sim.objects(kubeloop::model::Kind::Deployment).map(|o| o.meta()).find(|m| m.name == "web");
        let (ns, name) = web.map(|m| (m.namespace.clone(), m.name.clone())).or(first).unwrap_or(("default".into(), "web".into()));
        if (ns.as_str(), name.as_str()) != (self.gap.namespace(), self.gap.name()) {
            self.gap = GapHistory::new(&ns, &name);
        }
    }

    /// Catches the trackers up with the simulation.
    fn observe(&mut self) {
        // Watch lines (`kubectl get -w`) and timeline commands that arrived as time passed.
        let stream = self.session.take_stream();
        if !stream.stdout.is_empty() || !stream.stderr.is_empty() {
            self.console_output(&stream);
        }
        if let Some(run) = &mut self.lesson {
            run.poll(self.session.sim());
        }
        self.report_lesson_steps();
        let sim = self.session.sim();
        self.cluster.update(sim);
        self.events_dirty |= self.events.update(sim);
        self.gap.observe(sim);
        let new: Vec<&Message> = sim.trace().since(self.flow_seq).collect();
        if let Some(last) = new.last() {
            self.flow_seq = last.seq;
            let layout = FlowLayout::new(&self.node_names());
            for hop in hops(&layout, new, SINGLE_HOPS) {
                self.hops.push_back(hop);
            }
            while self.hops.len() > HOPS_SHOWN {
                self.hops.pop_front();
            }
            self.hops_dirty = true;
        }
    }

    fn node_names(&self) -> Vec<String> {
        self.session.sim().component_ids().filter_map(|id| id.to_string().strip_prefix("kubelet-").map(str::to_string)).collect()
    }

    /// Observes, then returns a new snapshot if it differs from the last.
    fn publish(&mut self) -> Option<Rc<Snapshot>> {
        self.observe();
        let next = self.build();
        // Only a frame decides to skip the hints and the panels off screen; anything else that
        // publishes redraws them.
        self.hints_skip = false;
        self.skip_offscreen = false;
        if *next == *self.snapshot {
            return None;
        }
        self.snapshot = next;
        Some(self.snapshot.clone())
    }

    fn build(&mut self) -> Rc<Snapshot> {
        let sim = self.session.sim();
        let now = sim.now();
        let old = self.snapshot.clone();
        let panels = self.panels_due;
        let hints_due = panels && !self.hints_skip;
        let shown = |hidden: bool| panels && !(self.skip_offscreen && hidden);
        let off = self.offscreen;
        // Ages in the event log move once a second of simulated time.
        let events = if shown(off.events) && (self.events_dirty || old.time_ms / 1000 != now.0 / 1000) {
            self.events_dirty = false;
            let mut filter = self.filter.clone();
            filter.pod = self.selected.clone();
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
        Rc::new(Snapshot {
            time_ms: now.0,
            seed: sim.seed(),
            scenario: self.scenario.clone(),
            mode: self.mode,
            speed: self.speed,
            lagging: self.lagging && self.mode == Mode::Playing,
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
            layout: if shown(off.flow) { keep(&old.layout, FlowLayout::new(&self.node_names())) } else { old.layout.clone() },
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
            console: if old.console.last().map(|l| l.seq) == self.console.back().map(|l| l.seq) {
                old.console.clone()
            } else {
                Rc::new(self.console.iter().cloned().collect())
            },
            lesson: self.lesson.as_ref().map(|run| {
                let view = run.view();
                match &old.lesson {
                    Some(o) if **o == view => o.clone(),
                    _ => Rc::new(view),
                }
            }),
            lesson_problem: self.lesson_problem.clone(),
            story: self.story,
            caption: None,
        })
    }
}

/// Which of the panels below the cluster the browser skips as off screen.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Offscreen {
    pub loops: bool,
    pub flow: bool,
    pub events: bool,
}

/// Simulated time as the page prints it (`1m30.25s`).
pub fn sim_time(t: Time) -> String {
    kubeloop::command::sim_verbs::format_sim_time(Duration(t.0))
}

/// A session for a scenario the page knows by name.
fn start(name: &str, seed: Option<u64>) -> Result<Session, String> {
    page::scenario(name).and_then(|s| Session::new(s, seed))
}

/// The lesson runs its commands through the engine: shown ones are logged and echoed in the
/// console like typed ones; hidden ones (a lesson's secret fault) run silently.
impl Driver for Engine {
    fn run_line(&mut self, line: &str, shown: bool) -> CommandOutput {
        if shown {
            self.console_push(ConsoleKind::Input, &format!("$ {line}"));
            let out = self.run_logged(line);
            self.console_output(&out);
            return out;
        }
        let mut out = self.session.execute(line);
        out.push(self.session.take_stream());
        if out.ok && line.starts_with("sim seed") {
            self.restarted();
        }
        out
    }
    fn sim(&self) -> &kubeloop::sim::Sim {
        self.session.sim()
    }
    fn add_file(&mut self, path: &str, text: &str) {
        self.session.add_file(path, text);
    }
}
