//! Playing a lesson: which step the learner is on, whether the simulation waits for an answer,
//! what the check sees, and how the answers were graded.
//!
//! [`LessonRun`] is a state machine over a [`Driver`] (anything that runs command lines on a
//! simulation). It never moves simulated time itself: the driver does (the page's clock, or a
//! test's `advance`) and calls [`LessonRun::poll`] as it goes. [`LessonRun::next_deadline`] says
//! when the lesson must look again (a measurement due at `at`, a check's `within`), so a fast
//! clock can stop exactly there.
//!
//! A step goes: setup (hidden) → question, if asked before (the clock should wait: see
//! [`LessonRun::waiting_for_answer`]) → action → check → question, if asked after → passed.
//! A check that has not passed by its `within` fails the step; the learner may still go on.

use super::{Answer, Ask, Condition, ConditionStatus, Lesson, LessonOperator, Step};
use crate::command::{CommandOutput, Session};
use crate::model::{parse_f64, Duration, Time};
use crate::sim::Sim;
use std::rc::Rc;

/// What a lesson needs from whoever owns the simulation.
pub trait Driver {
    /// Runs one command line; `shown` says whether the learner should see it in their console.
    fn run_line(&mut self, line: &str, shown: bool) -> CommandOutput;
    fn sim(&self) -> &Sim;
    /// Makes `text` readable by `kubectl apply -f path`.
    fn add_file(&mut self, path: &str, text: &str);
    /// Starts the lesson's operator as `operator/NAME` (a step's `operator: start`). The core
    /// cannot run Python: the shell supplies the interpreter (natively a `python3` subprocess
    /// running the solution, in the page its runtime running the learner's code). A driver with
    /// none refuses, saying so, and the step is refused rather than passed.
    fn start_operator(&mut self, operator: &LessonOperator) -> Result<(), String>;
}

impl Driver for Session {
    fn run_line(&mut self, line: &str, _shown: bool) -> CommandOutput {
        let mut out = self.execute(line);
        out.push(self.take_stream());
        out
    }
    fn sim(&self) -> &Sim {
        Session::sim(self)
    }
    fn add_file(&mut self, path: &str, text: &str) {
        Session::add_file(self, path, text)
    }
    fn start_operator(&mut self, operator: &LessonOperator) -> Result<(), String> {
        self.start_lesson_operator(operator)
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    /// The question comes first; the action waits for the answer.
    Predict,
    /// The action has run; the check is watched.
    Running,
    /// The check passed; a diagnosis question waits for its answer.
    Diagnose,
    /// The step is done (check passed, question graded).
    Passed,
    /// The check did not pass within its time.
    TimedOut,
    /// The step needs the lesson's operator and it could not start (nothing here runs Python,
    /// or its file did not load): the step is not checked, and the lesson stops here.
    Refused,
    /// Past the last step.
    Finished,
}

/// A graded answer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Graded {
    pub given: String,
    /// None until a measured answer has been read.
    pub actual: Option<String>,
    pub correct: Option<bool>,
}

/// The tally the lesson ends with.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Score {
    pub answers_right: u32,
    pub questions: u32,
    pub checks_passed: u32,
    pub checks: u32,
}

/// Everything the page shows about the lesson, as plain data.
#[derive(Clone, Debug, PartialEq)]
pub struct LessonView {
    pub name: String,
    pub title: String,
    pub index: usize,
    pub steps: usize,
    pub step_title: String,
    pub text: String,
    pub task: Option<String>,
    /// The step's action as it ran (placeholders such as `{{pod app=web}}` filled in); empty
    /// until it has run.
    pub action: Vec<String>,
    pub phase: Phase,
    pub prompt: Option<String>,
    pub choices: Vec<String>,
    /// Whether the question is open for an answer now.
    pub asking: bool,
    pub graded: Option<Graded>,
    pub explain: String,
    pub checks: Vec<ConditionStatus>,
    pub within: Option<String>,
    pub score: Score,
    /// The step's hidden setup stopped a component and its question is not yet answered: the
    /// page must not show which component is stopped (its switch, its stopped state), or it
    /// would give the answer away. The symptoms in the cluster stay visible.
    pub conceal_components: bool,
    /// While the step runs: the simulated time it has waited so far and how long it waits at
    /// most (its check's `after`, else its `within`), so the panel can show it moving.
    pub waited: Option<Waited>,
    /// Why the step is refused (`Phase::Refused`).
    pub refused: Option<String>,
    /// The operator the lesson has the learner write (`operator/NAME`'s NAME), if any.
    pub operator: Option<String>,
}

/// How far a running step has got in simulated time, in milliseconds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Waited {
    pub so_far: u64,
    pub limit: Option<u64>,
    /// The limit is the check's `after` (its row already says how long so far).
    pub after: bool,
}

pub struct LessonRun {
    lesson: Rc<Lesson>,
    index: usize,
    phase: Phase,
    /// When the step's action ran (the check's and measurement's zero).
    started: Time,
    check_met: bool,
    graded: Option<Graded>,
    measured: Option<i64>,
    checks: Vec<ConditionStatus>,
    score: Score,
    /// The step's action lines as they ran, placeholders filled in.
    ran: Vec<String>,
    /// The simulated time the run was last polled at.
    seen: Time,
    /// Why the step on show is refused.
    refused: Option<String>,
}

/// A short description of a command's failure, for the driver's error.
fn first_line(out: &CommandOutput) -> String {
    out.stderr.lines().next().unwrap_or("").to_string()
}

impl LessonRun {
    /// Ready to play; call [`LessonRun::start`] with the driver to begin the first step.
    pub fn new(lesson: Lesson) -> LessonRun {
        LessonRun {
            lesson: Rc::new(lesson),
            index: 0,
            phase: Phase::Running,
            started: Time(0),
            check_met: false,
            graded: None,
            measured: None,
            checks: Vec::new(),
            score: Score::default(),
            ran: Vec::new(),
            seen: Time(0),
            refused: None,
        }
    }

    pub fn lesson(&self) -> &Lesson {
        &self.lesson
    }
    pub fn index(&self) -> usize {
        self.index
    }
    pub fn phase(&self) -> Phase {
        self.phase
    }

    /// Whether the step on show stopped a component it asks about and its question is not yet
    /// answered: the page hides every component's running state (switches, stopped looks, and
    /// `sim status` in the console) so that the learner finds the stopped loop from symptoms.
    pub fn conceals_components(&self) -> bool {
        self.step().is_some_and(|s| s.question.is_some() && stops_a_component(s)) && self.graded.is_none()
    }
    pub fn score(&self) -> Score {
        self.score
    }
    pub fn graded(&self) -> Option<&Graded> {
        self.graded.as_ref()
    }

    fn step(&self) -> Option<&Step> {
        self.lesson.steps.get(self.index)
    }

    /// Adds the lesson's files and begins the first step. Returns the errors of commands that
    /// failed (a lesson's own command failing is the author's bug, shown rather than hidden).
    pub fn start(&mut self, d: &mut dyn Driver) -> Vec<String> {
        for (path, text) in &self.lesson.files {
            d.add_file(path, text);
        }
        self.begin(d)
    }

    /// Whether the simulation should wait: a prediction is open.
    pub fn waiting_for_answer(&self) -> bool {
        self.phase == Phase::Predict
    }

    fn begin(&mut self, d: &mut dyn Driver) -> Vec<String> {
        self.check_met = false;
        self.graded = None;
        self.measured = None;
        self.checks.clear();
        self.ran.clear();
        self.refused = None;
        let Some(step) = self.step().cloned() else {
            self.phase = Phase::Finished;
            return Vec::new();
        };
        let mut errors = run_all(d, &step.setup, false).1;
        if step.starts_operator {
            let started = match &self.lesson.operator {
                Some(operator) => d.start_operator(operator),
                None => Err("the lesson names no operator".into()),
            };
            if let Err(e) = started {
                self.phase = Phase::Refused;
                errors.push(e.clone());
                self.refused = Some(e);
                return errors;
            }
        }
        errors.extend(self.proceed(d, &step));
        errors
    }

    /// A step under way, its setup done (and its operator started): its prediction, or its action.
    fn proceed(&mut self, d: &mut dyn Driver, step: &Step) -> Vec<String> {
        let mut errors = Vec::new();
        if step.question.as_ref().is_some_and(|q| q.ask == Ask::Before) {
            self.phase = Phase::Predict;
            self.started = d.sim().now();
        } else {
            errors.extend(self.act(d, step));
        }
        self.poll(d.sim());
        errors
    }

    /// Starts a refused step's operator again — the page's Python has finished loading, say —
    /// and, if it starts, goes on with the step as if it had started at once (its setup is not
    /// run twice). A step that is not refused is left alone; a new refusal replaces the old.
    pub fn retry_operator(&mut self, d: &mut dyn Driver) -> Vec<String> {
        if self.phase != Phase::Refused {
            return Vec::new();
        }
        let (Some(step), Some(operator)) = (self.step().cloned(), self.lesson.operator.clone()) else { return Vec::new() };
        if let Err(e) = d.start_operator(&operator) {
            self.refused = Some(e);
            return Vec::new();
        }
        self.refused = None;
        self.proceed(d, &step)
    }

    fn act(&mut self, d: &mut dyn Driver, step: &Step) -> Vec<String> {
        let (ran, errors) = run_all(d, &step.action, true);
        self.ran = ran;
        self.phase = Phase::Running;
        self.started = d.sim().now();
        errors
    }

    /// The learner's answer to the open question. A prediction's answer lets the action run; a
    /// diagnosis is graded at once. Errors (no question open, not a choice, not a number) change
    /// nothing.
    pub fn answer(&mut self, d: &mut dyn Driver, given: &str) -> Result<Vec<String>, String> {
        let Some(step) = self.step().cloned() else { return Err("the lesson is over".into()) };
        let Some(q) = &step.question else { return Err("this step asks nothing".into()) };
        let open = matches!((self.phase, q.ask), (Phase::Predict, Ask::Before) | (Phase::Diagnose, Ask::After));
        if !open {
            return Err("this question is not open now".into());
        }
        let given = given.trim();
        if q.choices.is_empty() {
            parse_f64(given).ok_or_else(|| format!("{given:?} is not a number"))?;
        } else if !q.choices.iter().any(|c| c == given) {
            return Err(format!("{given:?} is not one of the choices"));
        }
        self.graded = Some(Graded { given: given.to_string(), actual: None, correct: None });
        self.score.questions += 1;
        let errors = if self.phase == Phase::Predict { self.act(d, &step) } else { Vec::new() };
        self.grade(d.sim());
        self.poll(d.sim());
        Ok(errors)
    }

    /// Reads a measured answer when due and grades the given answer once both are known.
    fn grade(&mut self, sim: &Sim) {
        let Some(q) = self.step().and_then(|s| s.question.clone()) else { return };
        let actual = match &q.answer {
            Answer::Stated(a) => Some(a.clone()),
            Answer::Measured { measure, at } => {
                let due = match at {
                    Some(at) => self.phase != Phase::Predict && sim.now() >= self.started + *at,
                    None => self.check_met,
                };
                if self.measured.is_none() && due {
                    self.measured = Some(measure.read(sim, self.started));
                }
                self.measured.map(|n| n.to_string())
            }
        };
        let Some(g) = &mut self.graded else { return };
        if g.correct.is_some() {
            return;
        }
        if let Some(actual) = actual {
            let correct = match (parse_f64(&g.given), parse_f64(&actual)) {
                (Some(a), Some(b)) => (a - b).abs() <= q.tolerance,
                _ => g.given == actual,
            };
            g.actual = Some(actual);
            g.correct = Some(correct);
            if correct {
                self.score.answers_right += 1;
            }
        }
    }

    /// Looks at the cluster: progress of the check, measurements due, pass or time-out.
    /// Returns whether anything the page shows changed.
    pub fn poll(&mut self, sim: &Sim) -> bool {
        self.seen = sim.now();
        let before = (self.phase, self.checks.clone(), self.graded.clone());
        self.observe(sim);
        before != (self.phase, self.checks.clone(), self.graded.clone())
    }

    fn observe(&mut self, sim: &Sim) {
        let Some(step) = self.step().cloned() else { return };
        if matches!(self.phase, Phase::Predict | Phase::Finished | Phase::TimedOut | Phase::Refused) {
            return;
        }
        if let Some(check) = &step.check {
            if !self.check_met {
                self.checks = check.evaluate(sim, self.started);
                if self.checks.iter().all(|c| c.met) {
                    self.check_met = true;
                    self.score.checks += 1;
                    self.score.checks_passed += 1;
                } else if check.within.is_some_and(|w| sim.now() > self.started + w) {
                    self.score.checks += 1;
                    self.phase = Phase::TimedOut;
                    return;
                }
            }
        } else {
            self.check_met = true;
        }
        self.grade(sim);
        if !self.check_met || self.phase == Phase::Passed {
            return;
        }
        let waiting_measure = self.graded.as_ref().is_some_and(|g| g.correct.is_none());
        match step.question.as_ref().map(|q| q.ask) {
            Some(Ask::After) if self.graded.is_none() => self.phase = Phase::Diagnose,
            _ if waiting_measure => {}
            _ => self.phase = Phase::Passed,
        }
    }

    /// When the lesson must look at the cluster next, if a time matters: a measurement's `at`,
    /// or the end of the check's `within`.
    pub fn next_deadline(&self) -> Option<Time> {
        if !matches!(self.phase, Phase::Running) {
            return None;
        }
        let step = self.step()?;
        let measure_at = match step.question.as_ref().map(|q| &q.answer) {
            Some(Answer::Measured { at: Some(at), .. }) if self.measured.is_none() => Some(self.started + *at),
            _ => None,
        };
        let within = step.check.as_ref().and_then(|c| c.within).filter(|_| !self.check_met).map(|w| self.started + w + Duration(1));
        [measure_at, within].into_iter().flatten().min()
    }

    /// Whether the learner may go on: the step passed or timed out, or it only had text.
    pub fn can_advance(&self) -> bool {
        matches!(self.phase, Phase::Passed | Phase::TimedOut)
    }

    /// Goes to the next step (the learner pressed Next). Returns the errors of its commands.
    pub fn next(&mut self, d: &mut dyn Driver) -> Result<Vec<String>, String> {
        if !self.can_advance() {
            return Err("finish this step first".into());
        }
        self.index += 1;
        Ok(self.begin(d))
    }

    pub fn view(&self) -> LessonView {
        let step = self.step();
        let q = step.and_then(|s| s.question.as_ref());
        LessonView {
            name: self.lesson.name.clone(),
            title: self.lesson.title.clone(),
            index: self.index,
            steps: self.lesson.steps.len(),
            step_title: step.map(|s| s.title.clone()).unwrap_or_default(),
            text: step.map(|s| s.text.clone()).unwrap_or_else(|| self.finished_text()),
            task: step.and_then(|s| s.task.clone()),
            action: self.ran.clone(),
            phase: self.phase,
            prompt: q.map(|q| q.prompt.clone()),
            choices: q.map(|q| q.choices.clone()).unwrap_or_default(),
            asking: matches!(self.phase, Phase::Predict | Phase::Diagnose),
            graded: self.graded.clone(),
            explain: if self.graded.as_ref().is_some_and(|g| g.correct.is_some()) {
                q.map(|q| q.explain.clone()).unwrap_or_default()
            } else {
                String::new()
            },
            checks: self.checks.clone(),
            within: step.and_then(|s| s.check.as_ref()).and_then(|c| c.within).map(crate::command::sim_verbs::format_sim_time),
            score: self.score,
            conceal_components: self.conceals_components(),
            waited: self.waited(),
            refused: self.refused.clone(),
            operator: self.lesson.operator.as_ref().map(|o| o.name.clone()),
        }
    }

    /// How far the running step has waited, for [`LessonView::waited`].
    fn waited(&self) -> Option<Waited> {
        let check = self.step()?.check.as_ref()?;
        if self.phase != Phase::Running {
            return None;
        }
        let after = check.conditions.iter().find_map(|c| if let Condition::After(d) = c { Some(d.0) } else { None });
        let so_far = self.seen.since(self.started).0;
        Some(Waited { so_far, limit: after.or(check.within.map(|w| w.0)), after: after.is_some() })
    }

    /// The text once the lesson is over. The score is not repeated here: the view's `score`
    /// carries it, and the page shows it once, as the status line.
    fn finished_text(&self) -> String {
        "Lesson complete.".into()
    }
}

/// Whether a step's hidden setup stops a component (`sim stop NAME`): the fault the learner is
/// asked to find.
fn stops_a_component(step: &Step) -> bool {
    step.setup.iter().any(|line| {
        let mut words = line.split_whitespace();
        words.next() == Some("sim") && words.next() == Some("stop") && words.next().is_some()
    })
}

/// Runs `lines`, returning each line as it ran (placeholders filled in) and `line: error` for
/// each that failed. A line whose placeholder cannot be filled does not run.
fn run_all(d: &mut dyn Driver, lines: &[String], shown: bool) -> (Vec<String>, Vec<String>) {
    let (mut ran, mut errors) = (Vec::new(), Vec::new());
    for line in lines {
        let line = match expand(line, d.sim()) {
            Ok(l) => l,
            Err(e) => {
                errors.push(format!("{line}: {e}"));
                continue;
            }
        };
        let out = d.run_line(&line, shown);
        if !out.ok {
            errors.push(format!("{line}: {}", first_line(&out)));
        }
        ran.push(line);
    }
    (ran, errors)
}

/// Fills `{{pod SELECTOR}}` with the name of the first Running pod (by name) the selector
/// matches in `default`: pod names are random, and a lesson must still say "delete one pod".
pub fn expand(line: &str, sim: &Sim) -> Result<String, String> {
    let mut out = String::new();
    let mut rest = line;
    while let Some(open) = rest.find("{{") {
        out.push_str(&rest[..open]);
        let after = &rest[open + 2..];
        let close = after.find("}}").ok_or("unclosed {{ in the command")?;
        let inner = after[..close].trim();
        let selector = inner
            .strip_prefix("pod")
            .map(str::trim)
            .ok_or_else(|| format!("unknown placeholder {{{{{inner}}}}} (expected {{{{pod SELECTOR}}}})"))?;
        let query = super::check::PodQuery::from_selector(selector, "Running")?;
        let name = query.first(sim).ok_or_else(|| format!("no Running pod matches {selector:?}"))?;
        out.push_str(&name);
        rest = &after[close + 2..];
    }
    out.push_str(rest);
    Ok(out)
}

/// Plays a lesson to its end natively, as a learner who always picks `choose(step, question)`
/// would: for tests and for authors checking their lessons. Advances simulated time in `tick`s
/// while a step runs, up to `limit` per step. Returns the score and every command error.
/// `tasks(step)` are the lines the learner types when a step with a task begins.
pub fn play(
    session: &mut Session,
    lesson: Lesson,
    tick: Duration,
    limit: Duration,
    choose: &dyn Fn(usize, &super::Question) -> String,
    tasks: &dyn Fn(usize) -> Vec<String>,
) -> (Score, Vec<String>) {
    let mut run = LessonRun::new(lesson);
    let mut errors = run.start(session);
    while run.phase() != Phase::Finished {
        let step_began = session.sim().now();
        let mut typed = false;
        loop {
            if !typed && run.phase() == Phase::Running && run.step().is_some_and(|s| s.task.is_some()) {
                typed = true;
                for line in tasks(run.index()) {
                    let out = session.run_line(&line, true);
                    if !out.ok {
                        errors.push(format!("step {}: {line}: {}", run.index(), first_line(&out)));
                    }
                }
            }
            if let (Some(q), true) = (run.step().and_then(|s| s.question.clone()), run.view().asking) {
                let choice = choose(run.index(), &q);
                if let Err(e) = run.answer(session, &choice) {
                    errors.push(format!("step {}: answer {choice:?}: {e}", run.index()));
                    return (run.score(), errors);
                }
            }
            if run.can_advance() {
                break;
            }
            if run.phase() == Phase::Refused {
                errors.push(format!("step {}: refused: {}", run.index(), run.view().refused.unwrap_or_default()));
                return (run.score(), errors);
            }
            if session.sim().now() > step_began + limit {
                errors.push(format!("step {}: no progress within {}", run.index(), crate::command::sim_verbs::format_sim_time(limit)));
                return (run.score(), errors);
            }
            let mut until = session.sim().now() + tick;
            if let Some(deadline) = run.next_deadline() {
                until = until.min(deadline.max(session.sim().now()));
            }
            session.advance_to(until);
            let _ = session.take_stream();
            run.poll(session.sim());
        }
        if run.phase() == Phase::TimedOut {
            errors.push(format!("step {}: check timed out: {:?}", run.index(), run.view().checks));
        }
        match run.next(session) {
            Ok(e) => errors.extend(e),
            Err(e) => errors.push(e),
        }
    }
    (run.score(), errors)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::command::Scenario;

    fn session() -> Session {
        Session::new(Scenario::builtin("default").unwrap(), Some(1)).unwrap()
    }

    const LESSON: &str = r#"
name: t
steps:
  - text: Wait for the cluster.
    check: {pods: {selector: app=web, status: Running, count: 3}, within: 2m}
  - text: Scale.
    question: {prompt: How many?, choices: ["3", "5"], answer: "5", explain: Because.}
    action: kubectl scale deployment/web --replicas=5
    check: {deployment: {name: web, readyReplicas: 5}, within: 2m}
  - text: Delete one.
    action: kubectl delete pod {{pod app=web}} --wait=false
    question: {prompt: Pods one second later?, measure: {pods: {selector: app=web}}, at: 1s}
    check: {pods: {selector: app=web, status: Running, count: 5}, within: 2m}
"#;

    #[test]
    fn a_prediction_holds_the_action_until_answered_and_is_graded() {
        let mut s = session();
        let mut run = LessonRun::new(Lesson::parse(LESSON).unwrap());
        assert_eq!(run.start(&mut s), Vec::<String>::new());
        assert_eq!(run.phase(), Phase::Running);
        assert!(!run.can_advance());
        s.settle(Duration::mins(2)).unwrap();
        assert!(run.poll(s.sim()));
        assert_eq!(run.phase(), Phase::Passed);
        assert_eq!(run.next(&mut s), Ok(vec![]));
        assert!(run.waiting_for_answer());
        assert_eq!(run.view().prompt.as_deref(), Some("How many?"));
        assert_eq!(run.answer(&mut s, "4"), Err("\"4\" is not one of the choices".into()));
        // Nothing ran before the answer.
        assert_eq!(s.sim().objects(crate::model::Kind::Pod).count(), 3);
        assert_eq!(run.answer(&mut s, "5"), Ok(vec![]));
        let g = run.graded().unwrap();
        assert_eq!((g.correct, g.actual.as_deref()), (Some(true), Some("5")));
        assert_eq!(run.view().explain, "Because.");
        s.settle(Duration::mins(2)).unwrap();
        run.poll(s.sim());
        assert_eq!(run.phase(), Phase::Passed);
        assert_eq!(run.score(), Score { answers_right: 1, questions: 1, checks_passed: 2, checks: 2 });
    }

    #[test]
    fn a_measured_answer_is_read_at_its_time() {
        let mut s = session();
        let lesson = Lesson::parse(LESSON).unwrap();
        let choose = |i: usize, _: &super::super::Question| if i == 1 { "5".to_string() } else { "6".to_string() };
        let (score, errors) = play(&mut s, lesson, Duration::millis(100), Duration::mins(3), &choose, &|_| vec![]);
        assert_eq!(errors, Vec::<String>::new());
        // One second after the delete the terminating pods still exist beside their replacements.
        assert_eq!(score, Score { answers_right: 1, questions: 2, checks_passed: 3, checks: 3 });
    }

    #[test]
    fn a_check_that_never_passes_times_out() {
        let mut s = session();
        let text = "name: t\nsteps:\n  - text: x\n    check: {pods: {selector: app=web, count: 9}, within: 10s}\n";
        let mut run = LessonRun::new(Lesson::parse(text).unwrap());
        run.start(&mut s);
        assert_eq!(run.next_deadline(), Some(Time(10_001)));
        s.advance(Duration::secs(11));
        run.poll(s.sim());
        assert_eq!(run.phase(), Phase::TimedOut);
        assert_eq!(run.score().checks, 1);
        assert_eq!(run.next(&mut s), Ok(vec![]));
        assert_eq!(run.phase(), Phase::Finished);
        assert_eq!(run.view().text, "Lesson complete.", "the score is the status line's, not repeated in the text");
        assert_eq!(run.view().score, Score { answers_right: 0, questions: 0, checks_passed: 0, checks: 1 });
    }

    #[test]
    fn a_failing_command_is_reported() {
        let mut s = session();
        let text = "name: t\nsteps:\n  - text: x\n    action: kubectl scale deployment/nope --replicas=1\n";
        let mut run = LessonRun::new(Lesson::parse(text).unwrap());
        let errors = run.start(&mut s);
        assert_eq!(
            errors,
            vec!["kubectl scale deployment/nope --replicas=1: error: no objects passed to scale deployments.apps \"nope\" not found"]
        );
        assert_eq!(run.phase(), Phase::Passed);
    }

    #[test]
    fn the_view_shows_the_action_as_it_ran_with_the_pod_named() {
        let mut s = session();
        s.settle(Duration::mins(2)).unwrap();
        let text = "name: t\nsteps:\n  - text: x\n    action: kubectl delete pod {{pod app=web}} --wait=false\n";
        let running: Vec<String> = s.sim().objects(crate::model::Kind::Pod).map(|o| o.meta().name.to_string()).collect();
        let mut run = LessonRun::new(Lesson::parse(text).unwrap());
        assert_eq!(run.start(&mut s), Vec::<String>::new());
        let action = run.view().action;
        let name =
            action[0].strip_prefix("kubectl delete pod ").and_then(|r| r.strip_suffix(" --wait=false")).expect("the line as written");
        assert!(running.iter().any(|p| p == name), "{name} is one of the pods: {running:?}");
        let pod = s.sim().objects(crate::model::Kind::Pod).find(|o| o.meta().name.as_str() == name).expect("still terminating");
        assert!(pod.meta().is_deleting(), "and it is the pod that was deleted");
    }

    #[test]
    fn a_prediction_shows_no_action_before_it_ran() {
        let mut s = session();
        let mut run = LessonRun::new(Lesson::parse(LESSON).unwrap());
        run.start(&mut s);
        s.settle(Duration::mins(2)).unwrap();
        run.poll(s.sim());
        run.next(&mut s).unwrap();
        assert_eq!(run.phase(), Phase::Predict);
        assert_eq!(run.view().action, Vec::<String>::new(), "nothing ran yet");
        run.answer(&mut s, "5").unwrap();
        assert_eq!(run.view().action, vec!["kubectl scale deployment/web --replicas=5".to_string()]);
    }

    #[test]
    fn a_stopped_component_is_concealed_until_its_question_is_answered() {
        let mut s = session();
        let text = r#"
name: t
steps:
  - text: Look.
  - text: Which?
    setup: sim stop kube-scheduler
    action: kubectl scale deployment/web --replicas=5
    check: {after: 5s}
    question: {ask: after, prompt: Which loop?, choices: [kube-scheduler, etcd], answer: kube-scheduler}
  - text: A stop nobody asks about.
    setup: sim stop kube-controller-manager
"#;
        let mut run = LessonRun::new(Lesson::parse(text).unwrap());
        run.start(&mut s);
        assert!(!run.view().conceal_components, "no hidden fault in step 1");
        run.next(&mut s).unwrap();
        assert!(run.view().conceal_components, "while the check runs, before the question opens");
        s.advance(Duration::secs(6));
        run.poll(s.sim());
        assert_eq!(run.phase(), Phase::Diagnose);
        assert!(run.view().conceal_components, "while the question is open");
        run.answer(&mut s, "kube-scheduler").unwrap();
        assert!(!run.view().conceal_components, "answered: the stopped scheduler may be shown");
        run.next(&mut s).unwrap();
        assert!(!run.view().conceal_components, "a stop with no question hides nothing");
    }
}
