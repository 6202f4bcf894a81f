//! The page's engine: one command [`Session`] and the view trackers, moved on by animation
//! frames and by the controls, producing a [`Snapshot`] for the page to render.
//!
//! It exists to keep every decision about *when* out of the page's components, and in the
//! library where native tests reach it: how much simulated time a frame covers at the chosen
//! speed, how much wall time the simulation may take in one frame (the budget; past it the
//! simulation falls behind rather than the page), when fast-forward stops, and which parts of the
//! picture changed. Nothing here names a browser type or reads a clock: the wall time of a frame
//! and a way to read the wall clock for the budget are handed in by the page
//! ([`Engine::frame`]).
//!
//! Every control that changes the cluster is a command line run through the session
//! ([`Engine::run`]); the clock controls (play, pause, step, fast-forward, speed) only decide
//! how the page's own clock drives the simulation.
//!
//! The concerns live in their own files: [`clock`] (the page's clock, fast-forward, step),
//! [`governor`] (a large cluster's frame budget), [`snapshot`] (what the page renders, shared by
//! `Rc`, and the throttling of a large cluster's redraws), [`console`] (the console's
//! transcript), [`host`] (the outbox for an embedding host and the messages it sends), and
//! [`lesson`] (the lesson runner's side of the engine). This file holds the [`Engine`], the
//! [`Action`]s the page sends it, and loading and restarting runs.

pub mod attach;
pub mod clock;
pub mod console;
pub mod governor;
pub mod host;
pub mod lesson;
pub mod snapshot;
pub mod story;

pub use attach::{AttachedView, Request};
pub use clock::{sim_time, speed_label, Mode, FAST_FORWARD_LIMIT, MAX_FRAME_MS};
pub use console::{ConsoleKind, ConsoleLine};
pub use snapshot::{HintsShown, Offscreen, Selection, ShareView, Snapshot, LARGE_CLUSTER_PODS};

use crate::command::{CommandOutput, Session};
use crate::lesson::LessonRun;
use crate::model::Kind;
use crate::sim::Message;
use crate::view::cluster::ClusterTracker;
use crate::view::events::{EventFilter, EventLog};
use crate::view::flow::{hops, FlowLayout, Hop};
use crate::view::gap::GapHistory;
use crate::view::hints::HintTracker;
use crate::view::page::{self, PageParams, Recorded};
use crate::view::share::{self, TraceFile};
use clock::Clock;
use console::Transcript;
use host::Outbox;
use snapshot::Throttle;
use std::collections::{BTreeSet, VecDeque};
use std::rc::Rc;
use story::StoryMode;

/// Hops shown at once; a frame with more new messages than [`SINGLE_HOPS`] folds them.
const HOPS_SHOWN: usize = 24;
/// Hops shown at once past teaching scale. Every token is anchored to two boxes and moved by
/// an animation of its `left`/`top`, so each one costs Chromium a style and layout pass over it
/// in every frame (about a quarter of a millisecond per token on the 2-core machine, measured
/// at 100 nodes / 3,000 pods: 24 tokens were a third of a steady frame). A large cluster's
/// messages come folded (each frame has far more than [`SINGLE_HOPS`]) and its flow is redrawn
/// only a few times a second, when the newest hops replace the ones still on their way; the
/// newest eight still show each kind of traffic of the latest frames.
const LARGE_HOPS_SHOWN: usize = 8;
const SINGLE_HOPS: usize = 12;
/// Event rows shown.
const EVENT_ROWS: usize = 60;
/// Command lines kept in the log.
const COMMANDS_KEPT: usize = 8;
/// Error lines kept in the banner (the newest).
const ERRORS_KEPT: usize = 4;

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
    ToggleStory,
    /// Unfolds a loop (`PROCESS/LOOP`) on the stage and keeps it so, or folds it back if it was
    /// (`view::focus`: a learner's pin).
    Pin(String),
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

/// One command the page ran, with what it printed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CommandEntry {
    pub seq: u64,
    pub line: String,
    pub output: String,
    pub ok: bool,
}

pub struct Engine {
    session: Session,
    scenario: String,
    errors: Vec<String>,
    params: PageParams,
    /// The command lines run in this run, with their simulated times.
    log: Vec<Recorded>,
    /// What the host hears.
    outbox: Outbox,
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
    clock: Clock,
    /// When a large cluster's panels are redrawn, and which are skipped.
    throttle: Throttle,
    note: String,
    selected: Option<(String, String)>,
    /// The loops the learner unfolded by hand (`Action::Pin`).
    pins: Vec<String>,
    filter: EventFilter,
    commands: VecDeque<CommandEntry>,
    command_seq: u64,
    /// `None` when the address turned hints off.
    hints: Option<HintTracker>,
    hints_open: bool,
    console: Transcript,
    lesson: Option<LessonRun>,
    lesson_problem: Option<String>,
    /// `?lesson=URL`, for the app to fetch.
    lesson_fetch: Option<String>,
    /// A fetched lesson waiting for its example files.
    lesson_pending: Option<lesson::PendingLesson>,
    /// What runs a lesson's operator here (the page's Python, once its panel has opened),
    /// handed to every session the engine runs.
    operator_maker: Option<OperatorMaker>,
    /// The steps of the lesson the host has been told have passed.
    lesson_steps_reported: BTreeSet<usize>,
    /// Story mode: on by default.
    story: StoryMode,
    /// Attached to a Kubernetes API (`?cluster=`): the cluster drawn is observed, not run.
    attach: Option<Box<attach::Attach>>,
    snapshot: Rc<Snapshot>,
}

impl Engine {
    /// Starts the scenario `params` names (or the default, with the error shown), applies the
    /// speed and autoplay, and replays the permalink's commands. `errors` are the parameters'
    /// own, shown in the banner. A scenario URL is left in [`Engine::take_fetch`] for the app.
    pub fn new(params: PageParams, errors: Vec<String>) -> Engine {
        if let Some(base) = params.cluster.clone() {
            let attached: fn(&str) -> Engine = out_of_line(Engine::attached);
            let mut engine = attached(&base);
            (engine.errors, engine.params) = (errors, params);
            let built = engine.build();
            let dress: fn(&Engine, Rc<Snapshot>) -> Rc<Snapshot> = out_of_line(Engine::attach_dress);
            engine.snapshot = dress(&engine, built);
            return engine;
        }
        let mut errors = errors;
        let mut params = params;
        // A lesson names its own scenario and seed (an explicit ?seed= still wins).
        // A lesson file by URL is fetched by the app and started when it arrives.
        let mut lesson_url = params.lesson.clone().filter(|l| page::is_scenario_url(l));
        let lesson = params.lesson.as_deref().filter(|_| lesson_url.is_none()).and_then(|name| match lesson::lesson_named(name) {
            Ok(lesson::NamedLesson::Parsed(lesson)) => Some(*lesson),
            Ok(lesson::NamedLesson::Fetch(url)) => {
                lesson_url = Some(url);
                None
            }
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
            start("default", None).unwrap_or_else(|_| Session::from_sim(crate::sim::Sim::new(1)))
        });
        let mut engine = Engine::with_session(session, builtin);
        engine.errors = errors;
        engine.clock.speed = params.speed;
        if !params.autoplay || params.at.is_some() {
            engine.clock.mode = Mode::Paused;
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

    fn with_session(mut session: Session, scenario: String) -> Engine {
        // The page owns the clock: a command that would wait (rollout status) must not move it.
        session.set_blocking(false);
        let snapshot = Rc::new(Snapshot::empty(session.sim().seed(), &scenario));
        let mut engine = Engine {
            session,
            scenario,
            errors: Vec::new(),
            params: PageParams::default(),
            log: Vec::new(),
            outbox: Outbox::new(),
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
            clock: Clock::new(),
            throttle: Throttle::new(),
            note: String::new(),
            selected: None,
            pins: Vec::new(),
            filter: EventFilter { limit: EVENT_ROWS, ..Default::default() },
            commands: VecDeque::new(),
            command_seq: 0,
            hints: Some(HintTracker::new()),
            hints_open: false,
            console: Transcript::new(),
            lesson: None,
            lesson_problem: None,
            lesson_fetch: None,
            lesson_pending: None,
            operator_maker: None,
            lesson_steps_reported: BTreeSet::new(),
            story: StoryMode::new(),
            attach: None,
            snapshot,
        };
        engine.pick_deployment();
        engine.observe();
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
    /// The page's (or widget's) address without a query: what the page's own files are
    /// fetched beside (the Operator panel's Python).
    pub fn page_base(&self) -> &str {
        &self.page_base
    }

    pub fn set_page_base(&mut self, base: String) {
        self.page_base = base;
    }

    /// Shows an error in the banner and tells the host.
    pub fn report(&mut self, message: String) {
        self.outbox.push(crate::view::embed::OutMessage::Error { message: message.clone() });
        self.errors.push(message);
        let extra = self.errors.len().saturating_sub(ERRORS_KEPT);
        self.errors.drain(..extra);
    }

    /// A new snapshot if anything changed (after an error was reported from outside).
    pub fn refresh(&mut self) -> Option<Rc<Snapshot>> {
        self.throttle.panels_due = true;
        self.publish()
    }

    /// A scenario URL to fetch, once.
    pub fn take_fetch(&mut self) -> Option<String> {
        self.fetch.take()
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
            .and_then(|t| crate::command::Scenario::parse(&t).map_err(|e| format!("error: scenario {url:?}: {e}")))
            .and_then(|s| refuse_operators(url, s))
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
        self.throttle.panels_due = true;
        self.publish()
    }

    /// Runs the learner's operator `operator/NAME` with new code (the Operator panel's Run): the
    /// running one of that name, if any, is replaced and the new one lists afresh. The error
    /// (code that does not load, a bad name) changes nothing.
    pub fn run_operator(
        &mut self,
        name: &str,
        interpreter: Box<dyn crate::operator::Interpreter>,
    ) -> (Result<(), String>, Option<Rc<Snapshot>>) {
        let result = self.session.sim_mut().replace_operator(name, interpreter);
        self.throttle.panels_due = true;
        (result, self.publish())
    }

    /// What runs a lesson's operator from now on, in this run and every later one; a lesson
    /// step refused for want of it can then be tried again ([`Engine::retry_lesson_operator`]).
    pub fn set_operator_maker(&mut self, maker: OperatorMaker) {
        self.operator_maker = Some(maker);
        self.equip_session();
    }

    fn equip_session(&mut self) {
        if let Some(maker) = self.operator_maker.clone() {
            self.session.set_operator_interpreter(move |operator| maker(operator));
        }
    }

    /// Starts the lesson's operator again if its step was refused (the page's Python has
    /// loaded): the step goes on.
    pub fn retry_lesson_operator(&mut self) -> Option<Rc<Snapshot>> {
        self.with_lesson(|run, e| Ok(run.retry_operator(e)));
        self.throttle.panels_due = true;
        self.publish()
    }

    /// Swaps in a new run.
    fn replace(&mut self, mut session: Session, scenario: String) {
        session.set_blocking(false);
        self.session = session;
        self.equip_session();
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
            omits: {
                let names: Vec<String> = sim.operators().map(|o| format!("operator/{}", o.operator_name())).collect();
                if names.is_empty() {
                    String::new()
                } else {
                    format!("Not included: {} — its code is not in the link or the file; a replay runs without it, so run it again from the Operator panel.", names.join(", "))
                }
            },
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
        self.clock.mode = Mode::Paused;
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

    pub fn snapshot(&self) -> Rc<Snapshot> {
        self.snapshot.clone()
    }

    /// Does what a control asks. Returns the new snapshot if anything changed.
    pub fn act(&mut self, action: Action) -> Option<Rc<Snapshot>> {
        self.throttle.panels_due = true;
        if self.attach.is_some() {
            let attach_act: fn(&mut Engine, &Action) -> Option<Option<Rc<Snapshot>>> = out_of_line(Engine::attach_act);
            if let Some(done) = attach_act(self, &action) {
                return done;
            }
        }
        match action {
            Action::Play => {
                self.clock.mode = Mode::Playing;
                self.note.clear();
            }
            Action::Pause => self.clock.mode = Mode::Paused,
            Action::Step => {
                self.clock.mode = Mode::Paused;
                self.note.clear();
                if !self.story_step() {
                    self.step();
                }
            }
            Action::FastForward => {
                self.clock.mode = Mode::FastForward;
                self.note = "fast-forwarding until every loop is idle".into();
                self.clock.fast_forward_until = self.session.sim().now() + FAST_FORWARD_LIMIT;
            }
            Action::Speed(s) => self.clock.speed = page::nearest_speed(s),
            Action::Select(ns, name) => {
                self.selected = Some((ns, name));
                self.events_dirty = true;
            }
            Action::Deselect => {
                self.selected = None;
                self.events_dirty = true;
            }
            Action::Pin(name) => match self.pins.iter().position(|p| *p == name) {
                Some(i) => drop(self.pins.remove(i)),
                None => self.pins.push(name),
            },
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
            Action::ToggleStory => self.toggle_story(),
            Action::Share => self.share = if self.share.is_some() { None } else { Some(Rc::new(self.share_view())) },
            Action::ImportTrace(json) => self.import_trace(&json),
            Action::DismissErrors => self.errors.clear(),
            Action::Console(line) => self.console_run(&line),
            Action::Interrupt => {
                self.session.stop_watches();
                self.console.push(ConsoleKind::Input, "^C");
            }
            Action::ApplyManifest(text) => {
                self.session.add_file(crate::command::validate::EDITOR_FILE, &text);
                let line = format!("kubectl apply -f {}", crate::command::validate::EDITOR_FILE);
                self.console_run(&line);
            }
            Action::LessonAnswer(text) => self.with_lesson(|run, engine| run.answer(engine, &text)),
            Action::LessonNext => self.with_lesson(|run, engine| run.next(engine)),
        }
        self.publish()
    }

    /// Tab in the console: the line completed as far as is certain, and the candidates.
    pub fn complete(&self, line: &str) -> (String, Vec<String>) {
        crate::command::complete::complete_line(line, &self.session)
    }

    /// The editor's validate-as-you-type: a server dry run of `text`.
    pub fn validate(&mut self, text: &str) -> Result<String, String> {
        self.session.validate_manifest(text)
    }

    /// Runs one command line through the session, as the console would, and logs it. It comes
    /// from the page's controls (Kill, the replicas box) or a host, not from the console, so what
    /// it made the console's open watches print (`kubectl get pods -w`: the killed pod's
    /// Terminating line) goes to the console, as a terminal's running watch shows it.
    pub fn run(&mut self, line: &str) -> bool {
        let (out, watched) = self.run_and_log(line);
        if !watched.stdout.is_empty() || !watched.stderr.is_empty() {
            self.console.output(&watched);
        }
        out.ok
    }

    /// [`Engine::run`], returning everything the command printed (its own output, then its
    /// watches').
    fn run_logged(&mut self, line: &str) -> CommandOutput {
        self.run_and_log(line).0
    }

    /// Runs and logs `line`: everything it printed, and of that what its watches printed.
    fn run_and_log(&mut self, line: &str) -> (CommandOutput, CommandOutput) {
        self.story_listen();
        let at = self.session.sim().now().0;
        let out = self.session.execute(line);
        // A command that moved the clock itself (`sim settle`, `sim advance`) ran unpaced, as
        // fast-forward does: its hops are not told after it.
        if self.session.sim().now().0 > at {
            self.story_skip();
        }
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
        self.outbox.push(crate::view::embed::OutMessage::Command {
            command: line.to_string(),
            ok: out.ok,
            output: output.trim_end().to_string(),
            time_ms: at,
        });
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
        (all, stream)
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
        self.clock.drop_carry();
        self.events_dirty = true;
        self.hops_dirty = true;
        self.story_restarted();
        self.pick_deployment();
    }

    /// The Deployment the gap panel follows: `web` if there is one, else the first.
    fn pick_deployment(&mut self) {
        let sim = self.session.sim();
        let mut all = sim.objects(Kind::Deployment).map(|o| (o.meta().namespace.clone(), o.meta().name.clone()));
        let first = all.next();
        let web = sim.objects(Kind::Deployment).map(|o| o.meta()).find(|m| m.name == "web");
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
            self.console.output(&stream);
        }
        if let Some(run) = &mut self.lesson {
            run.poll(self.session.sim());
        }
        self.report_lesson_steps();
        let sim = self.session.sim();
        self.cluster.update(sim);
        self.events_dirty |= self.events.update(sim);
        self.gap.observe(sim);
        self.story_catch_up();
        let sim = self.session.sim();
        let new: Vec<&Message> = sim.trace().since(self.flow_seq).collect();
        if let Some(last) = new.last() {
            self.flow_seq = last.seq;
            let layout = FlowLayout::new(&self.node_names()).with_operators(sim.operators().map(|o| o.operator_name()));
            for hop in hops(&layout, new, SINGLE_HOPS) {
                self.hops.push_back(hop);
            }
            let shown = if self.is_large() { LARGE_HOPS_SHOWN } else { HOPS_SHOWN };
            while self.hops.len() > shown {
                self.hops.pop_front();
            }
            self.hops_dirty = true;
        }
    }

    /// Fast-forward runs unpaced: what it sent is not drawn as tokens (a burst of folded
    /// tokens over the stage would show nothing that can be followed, and cover the boxes); the
    /// flow goes on from the present. The events table still lists what happened.
    fn skip_hops(&mut self) {
        if let Some(last) = self.session.sim().trace().since(self.flow_seq).last() {
            self.flow_seq = last.seq;
        }
        if !self.hops.is_empty() {
            self.hops.clear();
            self.hops_dirty = true;
        }
    }

    fn node_names(&self) -> Vec<String> {
        self.session.sim().component_ids().filter_map(|id| id.to_string().strip_prefix("kubelet-").map(str::to_string)).collect()
    }
}

/// `f`, through a value the optimisers cannot see through. For the attached page's entry
/// points, called from functions every page runs at start: wasm-opt inlines a function that has
/// one caller whatever its size (`#[inline(never)]` does not reach it), which would put the
/// attachment's code in those functions and so in the first load. Called through a pointer it
/// stays a function of its own (in the table), which the wasm split moves to the lazy module.
pub fn out_of_line<F: Copy>(f: F) -> F {
    std::hint::black_box(f)
}

/// Makes the interpreter for a lesson's operator (the page's Python).
pub type OperatorMaker = Rc<dyn Fn(&crate::lesson::LessonOperator) -> Result<Box<dyn crate::operator::Interpreter>, String>>;

/// A scenario file's `operators:` name Python files beside it, which the page cannot read: it
/// says so rather than run the scenario without them (its Operator panel runs one by hand).
fn refuse_operators(url: &str, scenario: crate::command::Scenario) -> Result<crate::command::Scenario, String> {
    if scenario.operators.is_empty() {
        return Ok(scenario);
    }
    Err(format!(
        "error: scenario {url:?}: operators: {} — the page does not load a scenario's operator files; run the scenario without them and the operator from the Operator panel, or natively with `kubeloop run`",
        scenario.operators.join(", ")
    ))
}

/// A session for a scenario the page knows by name.
fn start(name: &str, seed: Option<u64>) -> Result<Session, String> {
    page::scenario(name).and_then(|s| Session::new(s, seed))
}

/// An engine on a built-in scenario and seed, as the page would start it from `?scenario=…&seed=…`,
/// with story mode off: the tests of every other concern count simulated time frame by frame,
/// which story mode's holds would change (its own tests use [`story_engine`]).
#[cfg(test)]
pub(crate) fn test_engine(query: &str) -> Engine {
    let mut e = story_engine(query);
    e.act(Action::ToggleStory);
    assert!(!e.story.on);
    e
}

/// [`test_engine`] with story mode on, as the page starts.
#[cfg(test)]
pub(crate) fn story_engine(query: &str) -> Engine {
    let (params, errors) = page::parse_query(query);
    assert_eq!(errors, Vec::<String>::new(), "{query}");
    Engine::new(params, errors)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_scenario_files_operators_are_refused_saying_why() {
        let mut e = test_engine("?scenario=default");
        let before = e.session.sim().seed();
        let text = "name: with-operator\nseed: 4\noperators: [label_pods.py]\n";
        let next = e.fetched("https://example.test/s.yaml", Ok(text.into())).expect("the error shows");
        assert!(next.errors.iter().any(|m| m.contains("operators: label_pods.py") && m.contains("Operator panel")), "{:?}", next.errors);
        assert_eq!(e.session.sim().seed(), before, "the run is unchanged");
    }

    #[test]
    fn an_operator_run_from_the_page_is_a_loop_and_runs_again_with_new_code() {
        struct Ready(&'static str);
        impl crate::operator::Interpreter for Ready {
            fn load(&mut self) -> Result<serde_json::Value, String> {
                Ok(serde_json::json!({"op": "ready", "handlers": [{"id": self.0, "reason": "create", "name": "configmaps"}]}))
            }
            fn exchange(&mut self, _: &serde_json::Value) -> Result<serde_json::Value, String> {
                Ok(serde_json::json!({"op": "done", "outcome": "success"}))
            }
        }
        let mut e = test_engine("?scenario=default");
        let (ok, shown) = e.run_operator("mine", Box::new(Ready("first")));
        assert_eq!(ok, Ok(()));
        let shown = shown.expect("the stage shows it");
        assert!(shown.components.iter().any(|c| c.name == "operator/mine" && c.state == "running"), "{:?}", shown.components);
        let (again, _) = e.run_operator("mine", Box::new(Ready("second")));
        assert_eq!(again, Ok(()), "running again replaces it");
        let handlers: Vec<String> =
            e.session.sim().operators().flat_map(|o| o.handlers().map(|h| h.1.to_string()).collect::<Vec<_>>()).collect();
        assert_eq!(handlers, vec!["second".to_string()]);
        e.act(Action::Share);
        assert!(
            e.snapshot().share.as_ref().is_some_and(|v| v.omits.contains("operator/mine")),
            "the share panel says the operator is not in the link"
        );
        e.act(Action::Share);
        let (bad, _) = e.run_operator("Bad Name", Box::new(Ready("x")));
        assert!(bad.is_err());
        e.act(Action::Console("sim stop operator/mine".into()));
        let s = e.snapshot();
        assert!(s.components.iter().any(|c| c.name == "operator/mine" && c.state == "stopped"), "{:?}", s.components);
    }

    #[test]
    fn sim_seed_through_the_engine_restarts_the_trackers() {
        let mut e = test_engine("?scenario=default&seed=1");
        e.act(Action::Select("default".into(), "web-x".into()));
        e.act(Action::Speed(100.0));
        for ts in 0..40 {
            e.frame(f64::from(ts) * 16.0, &|| 0.0);
        }
        let before = e.snapshot();
        assert!(before.time_ms > 0 && !before.hops.is_empty() && !before.cluster.nodes.is_empty(), "the run moved");
        assert!(before.cluster.pod_count >= 3 && !before.events.rows.is_empty(), "{:?}", before.cluster.pod_count);
        assert!(before.selection.is_some());
        e.act(Action::FastForward);
        e.frame(700.0, &|| 0.0);
        assert!(!e.snapshot().note.is_empty(), "fast-forward left a note");
        let next = e.act(Action::Console("sim seed 7".into())).expect("a new run shows");
        assert_eq!((next.seed, next.time_ms), (7, 0));
        assert!(next.selection.is_none(), "the selection belonged to the old run");
        // The flow starts over: only the new run's first messages, numbered from its start.
        let last_seq = |s: &Snapshot| s.hops.last().map(|h| h.seq).unwrap_or(0);
        assert!(last_seq(&next) <= e.session.sim().trace().count(), "{:?}", next.hops);
        assert!(last_seq(&next) < last_seq(&before), "no hop of the old run is left: {:?}", next.hops);
        assert_eq!(next.cluster.pod_count, 0, "no pod of the old run is left");
        assert!(next.events.rows.is_empty(), "no event of the old run is left");
        assert_eq!(next.note, "", "the fast-forward's note was the old run's");
        assert!(e.log.is_empty(), "the permalink starts from the new seed with no commands");
    }

    #[test]
    fn a_permalinks_commands_replay_to_the_same_trace_hash() {
        let mut e = test_engine("?scenario=default&seed=3");
        e.act(Action::Speed(10.0));
        for ts in 0..40 {
            e.frame(f64::from(ts) * 100.0, &|| 0.0);
        }
        e.act(Action::Scale(5));
        e.act(Action::Console("kubectl delete pod -l app=web --wait=false".into()));
        for ts in 40..80 {
            e.frame(f64::from(ts) * 100.0, &|| 0.0);
        }
        e.set_page_base("https://example.test/kubeloop/".into());
        let share = e.act(Action::Share).and_then(|s| s.share.clone()).expect("the share panel opens");
        let (prefix, query) = share.permalink.split_once('?').expect("a query");
        assert_eq!(prefix, "https://example.test/kubeloop/");
        let replayed = test_engine(&format!("?{query}"));
        let hash = |e: &Engine| e.session.sim().trace().hash();
        assert_eq!(replayed.session.sim().now(), e.session.sim().now());
        assert_eq!(hash(&replayed), hash(&e), "the permalink reaches the same trace");
        assert_eq!(replayed.snapshot().mode, Mode::Paused, "a permalink with a time opens paused");
        assert_eq!(replayed.log, e.log);
    }

    #[test]
    fn bad_commands_print_kubectls_error_and_change_nothing() {
        let mut e = test_engine("?scenario=default&seed=1");
        let hash = e.session.sim().trace().hash();
        let s = e.act(Action::Console("kubectl scale deployment nope --replicas=2".into())).expect("the console shows the error");
        let last: Vec<_> = s.console.iter().rev().take(2).map(|l| (l.kind, l.text.as_str())).collect();
        assert_eq!(last[1], (ConsoleKind::Input, "$ kubectl scale deployment nope --replicas=2"));
        assert_eq!(last[0], (ConsoleKind::Error, "error: no objects passed to scale deployments.apps \"nope\" not found"));
        assert_eq!(e.session.sim().trace().hash(), hash, "nothing reached the cluster");
        assert!(!s.commands[0].ok);
    }
}
