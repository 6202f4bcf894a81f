//! The lesson runner's side of the engine: starting a lesson (built in, or fetched by the page),
//! running its commands as the learner would see them, handing it the learner's answers, and
//! telling a host about each step that passed.
//!
//! It exists because [`LessonRun`] never moves time or runs commands itself: it is played by a
//! [`Driver`], and on the page that driver is the [`Engine`] — its commands are echoed in the
//! console and logged for the permalink like typed ones, and its clock waits while a prediction
//! is open ([`Engine::frame`]). The words the lesson panel shows for a phase live here too, so
//! the panel only renders.

use super::console::ConsoleKind;
use super::{start, Engine, Snapshot};
use crate::command::CommandOutput;
use crate::lesson::run::Phase;
use crate::lesson::{Driver, Lesson, LessonRun, LessonView};
use crate::view::embed::OutMessage;
use std::collections::BTreeMap;
use std::rc::Rc;

/// A built-in lesson as the page gets it: parsed from the text built in (natively), or the
/// URL of its file in the page's build, fetched as a lesson file by URL is (in the browser,
/// where the lessons' words stay out of the first load).
#[derive(Debug)]
pub enum NamedLesson {
    Parsed(Box<Lesson>),
    Fetch(String),
}

/// The lesson `?lesson=NAME` names (a built-in one), or an error naming the lessons there are.
pub fn lesson_named(name: &str) -> Result<NamedLesson, String> {
    if let Some(lesson) = Lesson::builtin(name) {
        return Ok(NamedLesson::Parsed(Box::new(lesson)));
    }
    Lesson::builtin_url(name).map(NamedLesson::Fetch).ok_or_else(|| {
        format!("error: unknown lesson {name:?} in parameter \"lesson\"; the built-in lessons are {}", Lesson::builtin_names().join(", "))
    })
}

/// A fetched lesson file waiting for the example files it names (`examples:`, its operator's
/// files), which the page fetches from its own build one by one.
#[derive(Debug)]
pub(crate) struct PendingLesson {
    url: String,
    text: String,
    /// Each example's URL and name.
    asked: Vec<(String, String)>,
    /// URLs not handed to the page yet (the next one last).
    to_fetch: Vec<String>,
    files: BTreeMap<String, String>,
    /// The first example that could not be fetched, and why.
    failed: Option<(String, String)>,
}

impl PendingLesson {
    fn arrived(&mut self, url: &str, text: Result<String, String>) {
        let Some((_, name)) = self.asked.iter().find(|(u, _)| u == url) else { return };
        match text {
            Ok(text) => {
                self.files.insert(name.clone(), text);
            }
            Err(e) => {
                self.failed.get_or_insert((url.to_string(), e));
                // Whatever else arrives, the lesson cannot start without this one.
                self.files.insert(name.clone(), String::new());
            }
        }
    }

    fn waiting(&self) -> bool {
        self.files.len() < self.asked.len()
    }

    fn lesson(self) -> Result<Lesson, String> {
        let url = &self.url;
        if let Some((file, e)) = &self.failed {
            return Err(format!("error: cannot load lesson {url:?}: its example file {file:?}: {e}"));
        }
        Lesson::parse_with(&self.text, &|name| self.files.get(name).cloned()).map_err(|e| format!("error: lesson {url:?}: {e}"))
    }
}

/// The phase's word in the lesson panel's `data-phase`, which tests and course scripts read.
pub fn phase_name(phase: Phase) -> &'static str {
    match phase {
        Phase::Predict => "predict",
        Phase::Running => "running",
        Phase::Diagnose => "diagnose",
        Phase::Passed => "passed",
        Phase::TimedOut => "timed-out",
        Phase::Refused => "refused",
        Phase::Finished => "finished",
    }
}

/// What the lesson panel's status line says.
pub fn status(v: &LessonView) -> String {
    match v.phase {
        Phase::Predict => "Answer the question to continue; the simulation waits for you.".into(),
        Phase::Running => match &v.within {
            Some(w) => format!("Waiting for the check (at most {w} of simulated time)."),
            None if v.checks.is_empty() => "Working…".into(),
            None => "Waiting for the check.".into(),
        },
        Phase::Diagnose => "Answer the question to finish this step.".into(),
        Phase::Passed => "Step complete.".into(),
        Phase::TimedOut => "The check did not pass in time. You can go on, or reset and try again.".into(),
        Phase::Refused => format!("This step cannot run here: {}.", v.refused.as_deref().unwrap_or("its operator did not start")),
        Phase::Finished => format!(
            "Answers right: {} of {}. Checks passed: {} of {}.",
            v.score.answers_right, v.score.questions, v.score.checks_passed, v.score.checks
        ),
    }
}

/// How far a running step has waited, in words beside its bar: `4.2s of at most 2m of simulated
/// time` (or `4.2s of simulated time so far` when nothing bounds the wait). None for a check
/// whose `after` row says it already. Not in the status line, which is a live region: words
/// that change every frame would be read out every frame.
pub fn waited_words(v: &LessonView) -> Option<String> {
    let w = v.waited.filter(|w| !w.after)?;
    let so_far = super::sim_time(crate::model::Time(w.so_far));
    // Joined, not `format!`ted: each `format!` costs the page's wasm its own argument tables.
    Some(match w.limit {
        Some(limit) => [&so_far, " of at most ", &super::sim_time(crate::model::Time(limit)), " of simulated time"].concat(),
        None => [&so_far, " of simulated time so far"].concat(),
    })
}

/// The feedback on a given answer: its class (`right`, `wrong`, or `waiting` for a measured
/// answer not read yet) and its words. None before an answer.
pub fn feedback(v: &LessonView) -> Option<(&'static str, String)> {
    let g = v.graded.as_ref()?;
    Some(match (g.correct, &g.actual) {
        (Some(true), _) => ("right", format!("Right: {}.", g.given)),
        (Some(false), Some(actual)) => ("wrong", format!("Not quite: you said {}, the answer is {actual}.", g.given)),
        _ => ("waiting", format!("You said {}. Watch what happens…", g.given)),
    })
}

impl Engine {
    /// Starts a lesson on the run it is given (its scenario already loaded).
    pub(crate) fn start_lesson(&mut self, lesson: Lesson) {
        self.lesson_steps_reported.clear();
        let mut run = LessonRun::new(lesson);
        let problems = run.start(self);
        self.lesson_problem = (!problems.is_empty()).then(|| problems.join("\n"));
        self.lesson = Some(run);
        self.observe();
    }

    /// A lesson file to fetch, then the example files it names: one URL at a time.
    pub fn take_lesson_fetch(&mut self) -> Option<String> {
        self.lesson_fetch.take().or_else(|| self.lesson_pending.as_mut()?.to_fetch.pop())
    }

    /// The text of a fetched lesson file, or of an example file it names (or why it could not be
    /// fetched). Once the lesson and its examples are in, it starts on its own scenario and seed;
    /// a bad file is reported and the page runs on.
    pub fn lesson_fetched(&mut self, url: &str, text: Result<String, String>) -> Option<Rc<Snapshot>> {
        if let Some(pending) = self.lesson_pending.as_mut().filter(|p| p.asked.iter().any(|(u, _)| u == url)) {
            pending.arrived(url, text);
            if pending.waiting() {
                return self.publish();
            }
            let pending = self.lesson_pending.take().expect("pending lesson");
            let lesson = pending.lesson();
            return self.lesson_ready(lesson);
        }
        let text = match text {
            Ok(text) => text,
            Err(e) => return self.lesson_ready(Err(format!("error: cannot load lesson {url:?}: {e}"))),
        };
        // The example files the lesson names, where they are not built in (in the page): fetched
        // from the page's own build before the lesson is parsed.
        let missing: Vec<String> = Lesson::examples_named(&text)
            .into_iter()
            .filter(|n| crate::operator::examples::LESSON_FILE_NAMES.contains(&n.as_str()))
            .filter(|n| crate::operator::examples::lesson_file(n).is_none())
            .collect();
        if missing.is_empty() {
            let lesson = Lesson::parse(&text).map_err(|e| format!("error: lesson {url:?}: {e}"));
            return self.lesson_ready(lesson);
        }
        let asked: Vec<(String, String)> = missing.into_iter().map(|n| (crate::operator::examples::url(&n), n)).collect();
        let to_fetch = asked.iter().rev().map(|(u, _)| u.clone()).collect();
        self.lesson_pending = Some(PendingLesson { url: url.to_string(), text, asked, to_fetch, files: BTreeMap::new(), failed: None });
        self.publish()
    }

    /// Starts a parsed lesson on its own scenario and seed, or reports why it cannot.
    fn lesson_ready(&mut self, lesson: Result<Lesson, String>) -> Option<Rc<Snapshot>> {
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
        self.throttle.panels_due = true;
        self.publish()
    }

    /// Runs a lesson method that may run commands through the engine; its errors are shown.
    pub(crate) fn with_lesson(&mut self, f: impl FnOnce(&mut LessonRun, &mut Engine) -> Result<Vec<String>, String>) {
        let Some(mut run) = self.lesson.take() else { return };
        match f(&mut run, self) {
            Ok(problems) if problems.is_empty() => {}
            Ok(problems) => self.lesson_problem = Some(problems.join("\n")),
            Err(e) => self.console.push(ConsoleKind::Error, &e),
        }
        self.lesson = Some(run);
    }

    /// Tells the host once about each lesson step that has passed.
    pub(crate) fn report_lesson_steps(&mut self) {
        // Runs every frame: read the phase and step first, build the message only once per step.
        let Some(run) = &self.lesson else { return };
        let step = run.index();
        if run.phase() != Phase::Passed || self.lesson_steps_reported.contains(&step) {
            return;
        }
        let lesson = run.lesson();
        let (name, title) = (lesson.name.clone(), lesson.steps.get(step).map(|s| s.title.clone()).unwrap_or_default());
        self.lesson_steps_reported.insert(step);
        let time_ms = self.session.sim().now().0;
        self.emit(OutMessage::StepCompleted { lesson: name, step, title, time_ms });
    }
}

/// The lesson runs its commands through the engine: shown ones are logged and echoed in the
/// console like typed ones; hidden ones (a lesson's secret fault) run silently.
impl Driver for Engine {
    fn run_line(&mut self, line: &str, shown: bool) -> CommandOutput {
        if shown {
            self.console.echo(line);
            let out = self.run_logged(line);
            self.console.output(&out);
            return out;
        }
        let mut out = self.session.execute(line);
        out.push(self.session.take_stream());
        if out.ok && line.starts_with("sim seed") {
            self.restarted();
        }
        // A hidden command is the lesson's secret (and `sim settle` a whole boot at once): the
        // story never tells it, and the step starts from the present.
        self.story_skip();
        out
    }
    fn sim(&self) -> &crate::sim::Sim {
        self.session.sim()
    }
    fn add_file(&mut self, path: &str, text: &str) {
        self.session.add_file(path, text);
    }
    /// Through the session: the page's Python runtime, once it gives the session an
    /// interpreter; until then the step is refused, saying so.
    fn start_operator(&mut self, operator: &crate::lesson::LessonOperator) -> Result<(), String> {
        self.session.start_lesson_operator(operator)
    }
}

#[cfg(test)]
mod tests {
    use super::super::{test_engine, Action, Mode};
    use super::*;

    fn still() -> f64 {
        0.0
    }

    /// Fast-forwards until the clock stops (settled, or at the limit), as a learner pressing
    /// the button and waiting would.
    fn fast_forward(e: &mut Engine) {
        e.act(Action::FastForward);
        let mut ts = 0.0;
        while e.snapshot().mode == Mode::FastForward {
            assert!(ts < 1e6, "fast-forward never stopped");
            e.frame(ts, &still);
            ts += 16.0;
        }
    }

    fn lesson(e: &Engine) -> Rc<LessonView> {
        e.snapshot().lesson.clone().expect("a lesson")
    }

    #[test]
    fn a_fetched_lesson_waits_for_the_example_files_it_names() {
        let text = Lesson::builtin_text("write-your-own-loop").unwrap();
        let names = Lesson::examples_named(text);
        assert!(names.contains(&"website-crd.yaml".to_string()) && names.contains(&"website_start.py".to_string()), "{names:?}");
        let asked: Vec<(String, String)> = names.iter().map(|n| (crate::operator::examples::url(n), n.clone())).collect();
        let pending = |asked: &[(String, String)]| PendingLesson {
            url: "lessons/write-your-own-loop.yaml".into(),
            text: text.into(),
            asked: asked.to_vec(),
            to_fetch: Vec::new(),
            files: BTreeMap::new(),
            failed: None,
        };
        let mut p = pending(&asked);
        for (i, (url, name)) in asked.iter().enumerate() {
            assert!(p.waiting(), "still waiting before file {i}");
            p.arrived(url, Ok(crate::operator::examples::lesson_file(name).unwrap().to_string()));
        }
        assert!(!p.waiting());
        assert_eq!(p.lesson(), Lesson::parse(text), "the same lesson as from the built-in files");
        let mut p = pending(&asked);
        for (url, _) in &asked {
            p.arrived(url, Err("404 Not Found".into()));
        }
        let e = p.lesson().unwrap_err();
        assert_eq!(
            e,
            format!("error: cannot load lesson \"lessons/write-your-own-loop.yaml\": its example file {:?}: 404 Not Found", asked[0].0)
        );
    }

    #[test]
    fn an_unknown_lesson_names_the_built_in_ones() {
        let e = lesson_named("nope").unwrap_err();
        assert!(e.starts_with("error: unknown lesson \"nope\" in parameter \"lesson\"; the built-in lessons are "), "{e}");
        assert!(e.contains("worked-example") && e.contains("desired-state"), "{e}");
        let (params, errors) = crate::view::page::parse_query("?lesson=nope");
        let engine = Engine::new(params, errors);
        assert_eq!(engine.snapshot().errors.as_slice(), [e]);
        assert!(engine.snapshot().lesson.is_none());
    }

    #[test]
    fn a_lesson_waiting_for_an_answer_holds_the_clock() {
        let mut e = test_engine("?lesson=worked-example");
        fast_forward(&mut e);
        assert_eq!(lesson(&e).phase, Phase::Passed, "three pods run");
        e.act(Action::LessonNext);
        let v = lesson(&e);
        assert_eq!((v.index, v.phase), (1, Phase::Predict));
        assert_eq!(status(&v), "Answer the question to continue; the simulation waits for you.");
        let (at, hash) = (e.session.sim().now(), e.session.sim().trace().hash());
        e.act(Action::Play);
        for ts in 0..20 {
            assert!(e.frame(f64::from(ts) * 50.0, &still).is_none(), "nothing moves while the question is open");
        }
        assert_eq!((e.session.sim().now(), e.session.sim().trace().hash()), (at, hash));
        e.act(Action::LessonAnswer("3".into()));
        assert_eq!(lesson(&e).phase, Phase::Running, "the answer lets the action run");
        e.frame(1000.0, &still);
        assert!(e.session.sim().now() > at, "and the clock runs again");
    }

    #[test]
    fn after_fast_forward_a_measured_answer_is_read_and_the_step_passes() {
        // The bug: the cluster settles within the second before the measurement is due, so
        // fast-forward stopped as settled with the answer still "Watch what happens…", and every
        // later fast-forward stopped at once, there, for ever.
        let mut e = test_engine("?lesson=worked-example");
        fast_forward(&mut e);
        e.act(Action::LessonNext);
        let s = e.act(Action::LessonAnswer("3".into())).expect("the answer shows");
        let v = s.lesson.clone().expect("a lesson");
        assert_eq!(feedback(&v).map(|f| f.0), Some("waiting"), "{:?}", v.graded);
        assert_eq!(feedback(&v).map(|f| f.1), Some("You said 3. Watch what happens…".to_string()));
        let deleted_at = e.session.sim().now();
        fast_forward(&mut e);
        let v = lesson(&e);
        assert_eq!(v.graded.as_ref().and_then(|g| g.actual.clone()), Some("3".into()), "measured one second in");
        assert_eq!(feedback(&v).map(|f| f.0), Some("right"));
        assert_eq!(v.phase, Phase::Passed, "{:?}", v.checks);
        assert!(e.session.sim().now() >= deleted_at + crate::model::Duration::secs(1));
        assert!(e.snapshot().note.starts_with("settled at "), "{}", e.snapshot().note);
        let out = e.take_outbox();
        let steps: Vec<usize> =
            out.iter().filter_map(|m| if let OutMessage::StepCompleted { step, .. } = m { Some(*step) } else { None }).collect();
        assert_eq!(steps, [0, 1], "the host heard of each step once");
    }

    #[test]
    fn lesson_11_is_refused_at_its_operator_step_where_nothing_runs_python() {
        // The page's engine with no interpreter for operators: the steps before the operator
        // play; the one that starts it is refused, saying why, and the lesson does not go on.
        let mut e = test_engine("?lesson=write-your-own-loop");
        fast_forward(&mut e);
        assert_eq!(lesson(&e).phase, Phase::Passed, "the definition is applied");
        e.act(Action::LessonNext);
        e.act(Action::LessonAnswer("0".into()));
        fast_forward(&mut e);
        assert_eq!(lesson(&e).phase, Phase::Passed, "the claim sat unread");
        e.act(Action::LessonNext);
        let v = lesson(&e);
        assert_eq!((v.index, v.phase), (2, Phase::Refused));
        assert_eq!(
            status(&v),
            "This step cannot run here: this step runs the operator operator/website (website.py), and nothing here can run Python operators yet."
        );
        assert!(e.snapshot().lesson.as_ref().is_some_and(|l| l.refused.is_some()));
        e.act(Action::LessonNext);
        assert_eq!(lesson(&e).index, 2, "a refused step is not passed over");
        // The page's Python loads: the step is tried again, and goes on with the operator the
        // maker gives (here one that registers the Website handlers and succeeds at once).
        struct Loaded;
        impl crate::operator::Interpreter for Loaded {
            fn load(&mut self) -> Result<serde_json::Value, String> {
                Ok(
                    serde_json::json!({"op": "ready", "handlers": [{"id": "create", "reason": "create", "group": "lessons.kubeloop.dev", "version": "v1", "name": "websites"}]}),
                )
            }
            fn exchange(&mut self, _: &serde_json::Value) -> Result<serde_json::Value, String> {
                Ok(serde_json::json!({"op": "done", "outcome": "success"}))
            }
        }
        let asked = Rc::new(std::cell::RefCell::new(Vec::new()));
        let seen = asked.clone();
        e.set_operator_maker(Rc::new(move |op: &crate::lesson::LessonOperator| {
            seen.borrow_mut().push(op.name.clone());
            Ok(Box::new(Loaded) as Box<dyn crate::operator::Interpreter>)
        }));
        e.retry_lesson_operator();
        let v = lesson(&e);
        assert_eq!((v.index, v.refused.as_deref()), (2, None));
        assert_ne!(v.phase, Phase::Refused);
        assert_eq!(v.operator.as_deref(), Some("website"));
        assert_eq!(*asked.borrow(), ["website"]);
        assert!(e.snapshot().components.iter().any(|c| c.name == "operator/website"), "the operator is a loop on the stage");
    }

    #[test]
    fn desired_state_plays_to_its_end_by_fast_forward_alone() {
        let mut e = test_engine("?lesson=desired-state");
        for step in 0..10 {
            let v = lesson(&e);
            if v.phase == Phase::Finished {
                break;
            }
            if v.asking {
                let choice = v.choices.first().cloned().unwrap_or_else(|| "3".into());
                e.act(Action::LessonAnswer(choice));
            }
            if v.task.is_some() {
                e.act(Action::Console("kubectl scale deployment/web --replicas=2".into()));
            }
            fast_forward(&mut e);
            let v = lesson(&e);
            assert!(matches!(v.phase, Phase::Passed | Phase::Finished), "step {step} stuck in {:?}: {:?}", v.phase, feedback(&v));
            e.act(Action::LessonNext);
        }
        let v = lesson(&e);
        assert_eq!(v.phase, Phase::Finished);
        assert_eq!(
            status(&v),
            format!(
                "Answers right: {} of {}. Checks passed: {} of {}.",
                v.score.answers_right, v.score.questions, v.score.checks, v.score.checks
            )
        );
        assert_eq!(v.score.checks_passed, v.score.checks);
    }

    #[test]
    fn the_lessons_action_is_echoed_and_logged_like_a_typed_command() {
        let mut e = test_engine("?lesson=desired-state");
        fast_forward(&mut e);
        e.act(Action::LessonNext);
        e.act(Action::LessonAnswer("3".into()));
        let s = e.snapshot();
        assert!(s.console.iter().any(|l| l.text == "$ kubectl scale deployment/web --replicas=5"), "{:?}", s.console);
        assert_eq!(s.commands[0].line, "kubectl scale deployment/web --replicas=5");
        assert_eq!(e.log.last().map(|r| r.command.as_str()), Some("kubectl scale deployment/web --replicas=5"));
    }

    #[test]
    fn sim_status_is_hidden_while_the_lesson_asks_which_loop_stopped() {
        let mut e = test_engine("?lesson=which-loop");
        let status_output = |e: &mut Engine| {
            let before = e.snapshot().console.last().map_or(0, |l| l.seq);
            e.act(Action::Console("sim  status".into()));
            let s = e.snapshot();
            s.console.iter().filter(|l| l.seq > before).map(|l| l.text.clone()).collect::<Vec<_>>().join("\n")
        };
        // Before any case, nothing is hidden: the list is there.
        assert!(status_output(&mut e).contains("kube-scheduler"), "shown before a case");
        fast_forward(&mut e);
        e.act(Action::LessonNext);
        assert!(lesson(&e).conceal_components, "case 1 runs with kube-scheduler stopped");
        let logged = e.log.len();
        let hidden = status_output(&mut e);
        assert!(hidden.contains(super::super::console::SIM_STATUS_CONCEALED), "{hidden}");
        assert!(!hidden.contains("Stopped"), "{hidden}");
        assert_eq!(e.log.len(), logged, "a hidden command does not run");
        // Played until the check is due (a cluster with its scheduler stopped is already still,
        // so fast-forward would stop at once).
        e.act(Action::Play);
        let mut ts = 0.0;
        while !lesson(&e).asking {
            assert!(ts < 100_000.0, "the question never opened: {:?}", lesson(&e).phase);
            e.frame(ts, &still);
            ts += 100.0;
        }
        let v = lesson(&e);
        assert!(v.conceal_components && v.asking, "the question is open: {:?}", v.phase);
        assert!(status_output(&mut e).contains(super::super::console::SIM_STATUS_CONCEALED), "still hidden");
        e.act(Action::LessonAnswer("kube-scheduler".into()));
        let shown = status_output(&mut e);
        assert!(shown.lines().any(|l| l.starts_with("kube-scheduler") && l.contains("Stopped")), "answered: {shown}");
    }

    /// The component a step's hidden setup stops (`sim stop NAME`).
    fn stopped_by(e: &Engine) -> String {
        let run = e.lesson.as_ref().expect("a lesson");
        let setup = &run.lesson().steps[run.index()].setup;
        let line = setup.iter().find(|l| l.starts_with("sim stop ")).expect("the case stops a component");
        line["sim stop ".len()..].trim().to_string()
    }

    #[test]
    fn a_which_loop_case_starts_in_the_present_and_never_tells_of_its_stopped_component() {
        for name in ["which-loop", "which-controller"] {
            cases_start_in_the_present(name);
        }
    }

    /// Plays each case of lesson `name` (a step whose hidden setup stops a component) at 1× with
    /// story mode on, as the page starts, answering each right.
    fn cases_start_in_the_present(name: &str) {
        let mut e = super::super::story_engine(&format!("?lesson={name}"));
        assert!(e.snapshot().caption.is_none(), "a lesson's panel says what to do: no opening caption");
        fast_forward(&mut e);
        let mut ts = 0.0;
        let steps = e.lesson.as_ref().unwrap().lesson().steps.clone();
        let cases = steps.iter().skip(1).take_while(|s| s.setup.iter().any(|l| l.starts_with("sim stop "))).count();
        assert!(cases >= 5, "{name}: {cases} cases");
        for (case, step) in steps.iter().enumerate().skip(1).take(cases) {
            assert!(lesson(&e).phase == Phase::Passed, "{name} case {case}: {:?}", lesson(&e).phase);
            e.act(Action::Play);
            e.act(Action::LessonNext);
            let stopped = stopped_by(&e);
            let v = lesson(&e);
            assert_eq!(v.index, case);
            assert!(!v.asking, "the answer buttons wait for the check");
            let start = e.session.sim().now();
            let caption = e.snapshot().caption.clone();
            // Nothing of the setup's boot is replayed: at most the case's own action is told.
            assert!(caption.as_ref().is_none_or(|c| c.component == "kubectl"), "{name} case {case} opened on {caption:?}");
            let (mut moved_at, case_ts) = (None, ts);
            while !lesson(&e).asking {
                assert!(ts < 1e7, "{name} case {case}: the question never opened");
                e.frame(ts, &still);
                ts += 1000.0 / 60.0;
                if moved_at.is_none() && e.session.sim().now() > start {
                    moved_at = Some(ts);
                }
                if let Some(c) = &e.snapshot().caption {
                    assert!(!c.component.starts_with(&stopped), "{name} case {case} told of {stopped}, which it stopped: {c:?}");
                }
                let v = lesson(&e);
                if v.phase == Phase::Running {
                    let w = v.waited.expect("a running case says how long it has waited");
                    assert_eq!(w.so_far, e.session.sim().now().since(start).0);
                    assert!(w.limit.is_some(), "{w:?}");
                    assert_eq!(waited_words(&v).is_none(), w.after, "an after: check's row says how long so far");
                }
            }
            let moved = moved_at.expect("the clock moved") - case_ts;
            assert!(moved <= 2000.0, "{name} case {case}: the clock stood still for {moved} ms of wall time");
            let answer = match &step.question.as_ref().unwrap().answer {
                crate::lesson::Answer::Stated(a) => a.clone(),
                other => panic!("{other:?}"),
            };
            e.act(Action::LessonAnswer(answer));
        }
    }

    #[test]
    fn a_step_waiting_for_its_check_says_how_long_it_has_waited() {
        let mut e = super::super::story_engine("?lesson=desired-state");
        assert!(e.snapshot().caption.is_none(), "no caption of the boot in a lesson");
        let v = lesson(&e);
        assert_eq!(waited_words(&v).as_deref(), Some("0ms of at most 2m of simulated time"));
        let mut ts = 0.0;
        while e.session.sim().now() < crate::model::Time(1_500) {
            e.frame(ts, &still);
            ts += 1000.0 / 60.0;
        }
        assert!(ts < 2_000.0, "the boot is not held: {ts} ms of wall time for 1.5 s");
        let v = lesson(&e);
        let now = e.session.sim().now();
        assert_eq!(waited_words(&v), Some(format!("{} of at most 2m of simulated time", super::super::sim_time(now))));
        assert_eq!(status(&v), "Waiting for the check (at most 2m of simulated time).", "the live status line stays still");
    }

    #[test]
    fn phase_names() {
        let all = [Phase::Predict, Phase::Running, Phase::Diagnose, Phase::Passed, Phase::TimedOut, Phase::Refused, Phase::Finished];
        assert_eq!(all.map(phase_name), ["predict", "running", "diagnose", "passed", "timed-out", "refused", "finished"]);
    }
}
