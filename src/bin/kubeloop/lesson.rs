//! `kubeloop lesson NAME`: a lesson played in the terminal, as the page plays it — its text,
//! its predictions read from standard input, its actions run, simulated time moved on until its
//! checks pass. It exists so a lesson can be taken (and an author's lesson tried) without the
//! page, and so lesson 11's operator can be the learner's own file: `--operator FILE` is what
//! the lesson's operator step runs (natively a `python3` subprocess; without the flag, the
//! lesson's finished operator, saying so).

use super::operator_host::PythonInterpreter;
use super::{err, out, print_output};
use kubeloop::command::{Scenario, Session};
use kubeloop::lesson::run::Phase;
use kubeloop::lesson::{Lesson, LessonRun};
use kubeloop::model::Duration;
use std::io::BufRead;
use std::process::ExitCode;

/// How far a step may wait for its check, in simulated time, before the player gives up.
const STEP_LIMIT: Duration = Duration::mins(10);

fn load(name: &str) -> Result<Lesson, String> {
    if let Some(lesson) = Lesson::builtin(name) {
        return Ok(lesson);
    }
    match std::fs::read_to_string(name) {
        Ok(text) => Lesson::parse(&text).map_err(|e| format!("{name}: {e}")),
        Err(_) => Err(format!("unknown lesson {name:?}: not a built-in ({}) and not a readable file", Lesson::builtin_names().join(", "))),
    }
}

pub fn lesson(args: &[String]) -> Result<ExitCode, String> {
    let o = super::options(args, &["seed", "operator"])?;
    let name = o.scenario.ok_or_else(|| format!("lesson needs a LESSON: {}", Lesson::builtin_names().join(", ")))?;
    let lesson = load(&name)?;
    let scenario = Scenario::builtin(&lesson.scenario).ok_or_else(|| format!("lesson {name}: unknown scenario {:?}", lesson.scenario))?;
    let mut session = super::new_session(scenario, o.seed.or(lesson.seed))?;
    for (path, text) in &lesson.files {
        session.add_file(path, text);
    }
    let operator = match (o.operators.as_slice(), &lesson.operator) {
        ([], None) => None,
        ([], Some(op)) => {
            out(&format!("(the operator step runs the lesson's finished {}: give --operator FILE to run your own)\n", op.file));
            Some((op.file.clone(), op.solution.clone()))
        }
        ([path], Some(_)) => Some((path.clone(), std::fs::read_to_string(path).map_err(|e| format!("--operator {path}: {e}"))?)),
        ([_], None) => return Err(format!("lesson {name} runs no operator: --operator is for lessons that do")),
        _ => return Err("lesson takes one --operator FILE".into()),
    };
    if let Some((path, source)) = operator {
        session.set_operator_interpreter(move |_| {
            Ok(Box::new(PythonInterpreter::for_source(&path, &source)) as Box<dyn kubeloop::operator::Interpreter>)
        });
    }
    Ok(play(&mut session, LessonRun::new(lesson)))
}

fn problems(list: Vec<String>) {
    for p in list {
        err(&format!("error: {p}\n"));
    }
}

fn play(session: &mut Session, mut run: LessonRun) -> ExitCode {
    let stdin = std::io::stdin();
    let mut lines = stdin.lock().lines();
    let mut read = |prompt: &str| -> Option<String> {
        out(prompt);
        lines.next().and_then(Result::ok).map(|l| l.trim().to_string())
    };
    problems(run.start(session));
    let mut shown = usize::MAX;
    let mut began = session.sim().now();
    let mut typed = false;
    loop {
        let v = run.view();
        if v.index != shown && v.phase != Phase::Finished {
            shown = v.index;
            began = session.sim().now();
            typed = false;
            out(&format!("\n== Step {} of {}: {}\n{}\n", v.index + 1, v.steps, v.step_title, v.text.trim_end()));
            if let Some(task) = &v.task {
                out(&format!("Your task: {}\n", task.trim_end()));
            }
            for line in &v.action {
                out(&format!("$ {line}\n"));
            }
        }
        match v.phase {
            Phase::Finished => {
                let s = v.score;
                out(&format!(
                    "\nLesson complete. Answers right: {} of {}. Checks passed: {} of {}.\n",
                    s.answers_right, s.questions, s.checks_passed, s.checks
                ));
                return ExitCode::SUCCESS;
            }
            Phase::Refused => {
                err(&format!("error: this step cannot run: {}\n", v.refused.unwrap_or_default()));
                return ExitCode::FAILURE;
            }
            Phase::Predict | Phase::Diagnose => {
                let choices = if v.choices.is_empty() { "a number".to_string() } else { v.choices.join(" | ") };
                out(&format!("\n{}\n  ({choices})\n", v.prompt.unwrap_or_default()));
                let Some(answer) = read("answer> ") else { return ExitCode::FAILURE };
                match run.answer(session, &answer) {
                    Ok(p) => problems(p),
                    Err(e) => err(&format!("{e}\n")),
                }
                for line in &run.view().action {
                    out(&format!("$ {line}\n"));
                }
            }
            Phase::Passed | Phase::TimedOut => {
                if let Some(g) = &v.graded {
                    let verdict = if g.correct == Some(true) {
                        "Right".to_string()
                    } else {
                        format!("The answer: {}", g.actual.clone().unwrap_or_default())
                    };
                    out(&format!("{verdict}. {}\n", v.explain.trim_end()));
                }
                out(if v.phase == Phase::Passed { "Step complete.\n" } else { "The check did not pass in time.\n" });
                for c in &v.checks {
                    out(&format!("  {} {}: {}\n", if c.met { "ok " } else { "not" }, c.wants, c.sees));
                }
                match run.next(session) {
                    Ok(p) => problems(p),
                    Err(e) => err(&format!("{e}\n")),
                }
            }
            Phase::Running => {
                if v.task.is_some() && !typed {
                    typed = true;
                    out("Type commands (an empty line waits for the check):\n");
                    while let Some(line) = read("$ ").filter(|l| !l.is_empty()) {
                        let result = session.execute(&line);
                        print_output(&result);
                        print_output(&session.take_stream());
                    }
                }
                if session.sim().now() > began + STEP_LIMIT {
                    err(&format!("error: no progress within {}\n", kubeloop::command::sim_verbs::format_sim_time(STEP_LIMIT)));
                    return ExitCode::FAILURE;
                }
                let mut until = session.sim().now() + Duration::millis(100);
                if let Some(deadline) = run.next_deadline() {
                    until = until.min(deadline.max(session.sim().now()));
                }
                session.advance_to(until);
                let _ = session.take_stream();
                run.poll(session.sim());
            }
        }
    }
}
