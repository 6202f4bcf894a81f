//! Guided lessons as data: a scenario to start from and steps that explain, act, ask the learner
//! to predict, and check what really happened.
//!
//! Course authors write lessons as YAML (`lessons/*.yaml` are built in; the page also loads one
//! from text), so a lesson is data checked by [`Lesson::parse`] and played by [`run::LessonRun`]
//! against any [`run::Driver`] — a command [`crate::command::Session`] natively, the page's
//! engine in the browser. Nothing here knows about a browser or a clock: time is the simulation's.
//!
//! ```yaml
//! name: desired-state
//! title: Desired state is a claim
//! scenario: default            # a built-in scenario
//! seed: 1
//! files: {web.yaml: "..."}     # virtual files for `kubectl apply -f web.yaml`
//! steps:
//!   - text: What the learner reads.
//!     setup: sim stop kube-scheduler     # run first, not shown (a hidden fault); a step with a
//!                                        # question keeps a `sim stop` concealed until answered
//!                                        # (`LessonView::conceal_components`)
//!     action: kubectl scale deployment/web --replicas=5   # run for the learner, shown
//!     task: Delete one pod yourself.     # or: something the learner must do; the check tells
//!     question:                          # asked before the action runs (ask: after = once the check passes)
//!       prompt: How many pods will there be?
//!       choices: ["3", "5", "8"]         # none: the learner types a number
//!       answer: "5"                      # a stated answer, or measure: {pods: {selector: app=web}} (at: 1s)
//!       explain: Why, in a sentence or two.
//!     check: {deployment: {name: web, readyReplicas: 5}, within: 60s}
//! ```
//!
//! Malformed files get an error naming the field and, for a step, the line it starts on.

pub mod check;
pub mod fields;
pub mod run;

pub use check::{Check, Condition, ConditionStatus, Measure};
pub use run::{Driver, LessonRun, LessonView};

use crate::command::parse;
use crate::model::{parse_f64, Duration};
use fields::{shown, Fields};
use serde_json::Value;
use std::collections::BTreeMap;

/// The built-in lessons, in the order of the course: each name with its title (the file's own
/// `title:`, which a test compares) for the page's picker.
const BUILTIN: [(&str, &str); 11] = [
    ("desired-state", "Desired state is a claim"),
    ("worked-example", "A pod is killed, hop by hop"),
    ("level-vs-edge", "Level-triggered beats edge-triggered"),
    ("controller-restart", "The controller manager restarts mid-incident"),
    ("which-loop", "Which loop stopped turning?"),
    ("rolling-update", "A rolling update, step by step"),
    ("node-dies", "A node dies"),
    ("service-loop", "A Service is a loop"),
    ("many-names", "One pattern, many names"),
    ("which-controller", "Which controller stopped?"),
    ("write-your-own-loop", "Write your own loop"),
];

/// Their texts, in the same order. Natively only: the page fetches a built-in lesson's file from
/// its own build ([`Lesson::builtin_url`], which Trunk copies into `dist/lessons/`) when one
/// starts, so the course's words are not part of the first load — the page's wasm splitter moves
/// code to the lazy module, never data, and include_str! text is data.
#[cfg(not(target_arch = "wasm32"))]
const TEXTS: [&str; 11] = [
    include_str!("../../lessons/desired-state.yaml"),
    include_str!("../../lessons/worked-example.yaml"),
    include_str!("../../lessons/level-vs-edge.yaml"),
    include_str!("../../lessons/controller-restart.yaml"),
    include_str!("../../lessons/which-loop.yaml"),
    include_str!("../../lessons/rolling-update.yaml"),
    include_str!("../../lessons/node-dies.yaml"),
    include_str!("../../lessons/service-loop.yaml"),
    include_str!("../../lessons/many-names.yaml"),
    include_str!("../../lessons/which-controller.yaml"),
    include_str!("../../lessons/write-your-own-loop.yaml"),
];

/// When a question is asked.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ask {
    /// Before the step's action runs: a prediction. The simulation waits for the answer.
    Before,
    /// Once the step's check has passed: a diagnosis of what the learner has just seen.
    After,
}

/// What a question is graded against.
#[derive(Clone, Debug, PartialEq)]
pub enum Answer {
    /// The author's answer: a choice's text, or a number.
    Stated(String),
    /// What the cluster shows: read when the check passes, or `at` after the step began.
    Measured { measure: Measure, at: Option<Duration> },
}

#[derive(Clone, Debug, PartialEq)]
pub struct Question {
    pub prompt: String,
    /// Multiple choice; empty means the learner types a number.
    pub choices: Vec<String>,
    pub answer: Answer,
    pub ask: Ask,
    /// How far a typed number may be from the answer and still count.
    pub tolerance: f64,
    pub explain: String,
}

#[derive(Clone, Debug, PartialEq, Default)]
pub struct Step {
    pub title: String,
    pub text: String,
    /// The step starts the lesson's operator (`operator: start`), after its setup and before
    /// its question and action.
    pub starts_operator: bool,
    pub setup: Vec<String>,
    pub action: Vec<String>,
    pub task: Option<String>,
    pub question: Option<Question>,
    pub check: Option<Check>,
}

/// The operator a lesson has the learner write: run as `operator/NAME` from the step that
/// starts it. Its texts are built in (`examples/operators/`), so the lesson carries them.
#[derive(Clone, Debug, PartialEq)]
pub struct LessonOperator {
    pub name: String,
    /// The learner's file name, as the editor shows it.
    pub file: String,
    /// What the learner starts from.
    pub start: String,
    /// A finished operator: what the native check runs.
    pub solution: String,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Lesson {
    pub name: String,
    pub title: String,
    pub summary: String,
    pub scenario: String,
    pub seed: Option<u64>,
    /// Virtual files for `kubectl apply -f`: the lesson's `files:` and its `examples:`.
    pub files: BTreeMap<String, String>,
    pub operator: Option<LessonOperator>,
    pub steps: Vec<Step>,
}

impl Lesson {
    pub fn builtin_names() -> Vec<&'static str> {
        BUILTIN.iter().map(|(n, _)| *n).collect()
    }

    /// A built-in lesson's title, without its text.
    pub fn builtin_title(name: &str) -> Option<&'static str> {
        BUILTIN.iter().find(|(n, _)| *n == name).map(|(_, t)| *t)
    }

    /// Where the page's build keeps a built-in lesson's file, relative to the page.
    pub fn builtin_url(name: &str) -> Option<String> {
        Lesson::builtin_title(name).map(|_| format!("lessons/{name}.yaml"))
    }

    /// A built-in lesson. Every one is parsed by a test, so a listed name always loads
    /// (natively; in the browser the text is fetched from [`Lesson::builtin_url`]).
    pub fn builtin(name: &str) -> Option<Lesson> {
        Lesson::parse(Lesson::builtin_text(name)?).ok()
    }

    /// The text of a built-in lesson, for authors to start from (natively).
    pub fn builtin_text(name: &str) -> Option<&'static str> {
        #[cfg(not(target_arch = "wasm32"))]
        {
            let at = BUILTIN.iter().position(|(n, _)| *n == name)?;
            Some(TEXTS[at])
        }
        #[cfg(target_arch = "wasm32")]
        {
            let _ = name;
            None
        }
    }

    /// Parses a lesson file. Errors start with `lesson` (or the lesson's name) and name the field.
    /// The example files it names are the built-in ones (natively).
    pub fn parse(text: &str) -> Result<Lesson, String> {
        Lesson::parse_with(text, &|name| crate::operator::examples::lesson_file(name).map(str::to_string))
    }

    /// The example files a lesson's text names (`examples:`, and its operator's `start` and
    /// `solution`), in order and without repeats, for a host that fetches them before
    /// [`Lesson::parse_with`]. Empty for text that does not parse: parsing says why.
    pub fn examples_named(text: &str) -> Vec<String> {
        let Ok(docs) = crate::command::yaml::documents(text) else { return Vec::new() };
        let Some(doc) = docs.first() else { return Vec::new() };
        let mut names: Vec<String> = Vec::new();
        let listed = doc.get("examples").and_then(Value::as_array).into_iter().flatten();
        let operator = ["start", "solution"].into_iter().filter_map(|f| doc.get("operator").and_then(|o| o.get(f)));
        for name in listed.chain(operator).filter_map(Value::as_str) {
            if !names.iter().any(|n| n == name) {
                names.push(name.to_string());
            }
        }
        names
    }

    /// [`Lesson::parse`] with the example files from `example` (by name).
    pub fn parse_with(text: &str, example: &dyn Fn(&str) -> Option<String>) -> Result<Lesson, String> {
        let docs = crate::command::yaml::documents(text).map_err(|e| format!("lesson: invalid YAML: {e}"))?;
        let [doc] = &docs[..] else {
            return Err(format!("lesson: expected one YAML document, found {}", docs.len()));
        };
        let f = Fields::of(doc, "")?;
        f.only(&["name", "title", "summary", "scenario", "seed", "files", "examples", "operator", "steps"])?;
        let name = f.required_string("name").map_err(|e| format!("lesson: {e}"))?;
        let prefix = |e: String| format!("lesson {name}: {e}");
        let seed = match f.get("seed") {
            None => None,
            Some(v) => Some(v.as_u64().ok_or_else(|| prefix(format!("seed: must be a whole number, got {}", shown(v))))?),
        };
        let scenario = f.string("scenario").map_err(prefix)?.unwrap_or_else(|| "default".into());
        let mut files = parse_files(&f).map_err(prefix)?;
        for name_of in f.lines("examples").map_err(prefix)? {
            let text = example(&name_of).ok_or_else(|| prefix(unknown_example("examples", &name_of)))?;
            files.insert(name_of, text);
        }
        let operator = f.get("operator").map(|o| parse_operator(o, "operator", example)).transpose().map_err(prefix)?;
        let steps = match f.get("steps") {
            Some(Value::Array(items)) if !items.is_empty() => items
                .iter()
                .enumerate()
                .map(|(i, item)| {
                    parse_step(item, &format!("steps[{i}]")).map_err(|e| match step_line(text, i) {
                        Some(line) => format!("lesson {name}: line {line}: {e}"),
                        None => prefix(e),
                    })
                })
                .collect::<Result<Vec<_>, _>>()?,
            Some(Value::Array(_)) | None => return Err(prefix("steps: a lesson needs at least one step".into())),
            Some(other) => return Err(prefix(format!("steps: must be a list of steps, got {}", shown(other)))),
        };
        if operator.is_none() {
            if let Some(i) = steps.iter().position(|s| s.starts_operator) {
                return Err(prefix(format!(
                    "steps[{i}].operator: the lesson names no operator (a top-level operator: {{name, file, start, solution}})"
                )));
            }
        }
        Ok(Lesson {
            title: f.string("title").map_err(prefix)?.unwrap_or_else(|| name.clone()),
            summary: f.string("summary").map_err(prefix)?.unwrap_or_default(),
            name,
            scenario,
            seed,
            files,
            operator,
            steps,
        })
    }
}

fn unknown_example(field: &str, name: &str) -> String {
    let known = crate::operator::examples::LESSON_FILE_NAMES;
    format!("{field}: {name:?} is not one of the built-in example files ({})", known.join(", "))
}

/// `operator: {name, file, start, solution}`: `start` and `solution` name built-in example files.
fn parse_operator(v: &Value, path: &str, example: &dyn Fn(&str) -> Option<String>) -> Result<LessonOperator, String> {
    let f = Fields::of(v, path)?;
    f.only(&["name", "file", "start", "solution"])?;
    let name = f.required_string("name")?;
    crate::operator::check_name(&name).map_err(|e| format!("{}: {e}", f.at("name")))?;
    let example = |field: &str| -> Result<String, String> {
        let file = f.required_string(field)?;
        example(&file).ok_or_else(|| unknown_example(&f.at(field), &file))
    };
    Ok(LessonOperator { file: f.required_string("file")?, start: example("start")?, solution: example("solution")?, name })
}

fn parse_files(f: &Fields) -> Result<BTreeMap<String, String>, String> {
    let Some(v) = f.get("files") else { return Ok(BTreeMap::new()) };
    let files = Fields::of(v, "files")?;
    let mut out = BTreeMap::new();
    for key in files.map.keys() {
        out.insert(key.clone(), files.required_string(key)?);
    }
    Ok(out)
}

fn parse_step(v: &Value, path: &str) -> Result<Step, String> {
    let f = Fields::of(v, path)?;
    f.only(&["title", "text", "operator", "setup", "action", "task", "question", "check"])?;
    let starts_operator = match f.string("operator")?.as_deref() {
        None => false,
        Some("start") => true,
        Some(other) => {
            return Err(format!(
                "{}: must be start, got {other:?} (stop and restart it with `sim stop|restart operator/NAME` lines)",
                f.at("operator")
            ))
        }
    };
    let setup = f.lines("setup")?;
    let action = f.lines("action")?;
    for (key, lines) in [("setup", &setup), ("action", &action)] {
        for (i, line) in lines.iter().enumerate() {
            parse::split(line).map_err(|e| format!("{}[{i}]: {}", f.at(key), e.trim_start_matches("error: ")))?;
        }
    }
    let question = f.get("question").map(|q| parse_question(q, &f.at("question"))).transpose()?;
    let check = f.get("check").map(|c| Check::parse(c, &f.at("check"))).transpose()?;
    let task = f.string("task")?;
    if task.is_some() && check.is_none() {
        return Err(format!("{}: a task needs a check that tells when it is done", f.at("task")));
    }
    if question.as_ref().is_some_and(|q| q.ask == Ask::After) && check.is_none() {
        return Err(format!("{}: a question asked after the check needs a check", f.at("question")));
    }
    Ok(Step {
        title: f.string("title")?.unwrap_or_default(),
        text: f.required_string("text")?,
        starts_operator,
        setup,
        action,
        task,
        question,
        check,
    })
}

fn parse_question(v: &Value, path: &str) -> Result<Question, String> {
    let f = Fields::of(v, path)?;
    f.only(&["prompt", "choices", "answer", "measure", "at", "ask", "tolerance", "explain"])?;
    let choices = match f.get("choices") {
        None => Vec::new(),
        Some(Value::Array(items)) => items
            .iter()
            .enumerate()
            .map(|(i, c)| match c {
                Value::String(s) => Ok(s.clone()),
                Value::Number(n) => Ok(n.to_string()),
                other => Err(format!("{}[{i}]: must be text, got {}", f.at("choices"), shown(other))),
            })
            .collect::<Result<_, _>>()?,
        Some(other) => return Err(format!("{}: must be a list, got {}", f.at("choices"), shown(other))),
    };
    if choices.len() == 1 {
        return Err(format!("{}: give at least two choices, or none for a number", f.at("choices")));
    }
    let answer = match (f.string("answer")?, f.get("measure")) {
        (Some(_), Some(_)) => return Err(format!("{path}: give answer or measure, not both")),
        (None, None) => return Err(format!("{path}: needs an answer or a measure to grade against")),
        (Some(a), None) => {
            if !choices.is_empty() && !choices.contains(&a) {
                return Err(format!("{}: {a:?} is not one of the choices ({})", f.at("answer"), choices.join(", ")));
            }
            if choices.is_empty() && parse_f64(&a).is_none() {
                return Err(format!("{}: without choices the answer must be a number, got {a:?}", f.at("answer")));
            }
            Answer::Stated(a)
        }
        (None, Some(m)) => Answer::Measured { measure: Measure::parse(m, &f.at("measure"))?, at: f.duration("at")? },
    };
    if f.get("at").is_some() && matches!(answer, Answer::Stated(_)) {
        return Err(format!("{}: only a measured answer is read at a time", f.at("at")));
    }
    let ask = match f.string("ask")?.as_deref() {
        None | Some("before") => Ask::Before,
        Some("after") => Ask::After,
        Some(other) => return Err(format!("{}: must be before or after, got {other:?}", f.at("ask"))),
    };
    Ok(Question {
        prompt: f.required_string("prompt")?,
        choices,
        answer,
        ask,
        tolerance: f.number("tolerance")?.unwrap_or(0.0).abs(),
        explain: f.string("explain")?.unwrap_or_default(),
    })
}

/// The line (1-based) where step `index` starts: the `index`-th item of the top-level `steps:`
/// list. A best effort over the text (the YAML reader keeps no positions); None if not found.
fn step_line(text: &str, index: usize) -> Option<usize> {
    let lines: Vec<&str> = text.lines().collect();
    let start = lines.iter().position(|l| l.trim_end() == "steps:")?;
    let mut indent = None;
    let mut seen = 0;
    for (i, line) in lines.iter().enumerate().skip(start + 1) {
        let trimmed = line.trim_start();
        if trimmed.is_empty() || trimmed.starts_with('#') {
            continue;
        }
        let here = line.len() - trimmed.len();
        if here == 0 && !trimmed.starts_with('-') {
            return None;
        }
        if trimmed.starts_with("- ") || trimmed == "-" {
            let want = *indent.get_or_insert(here);
            if here == want {
                if seen == index {
                    return Some(i + 1);
                }
                seen += 1;
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_builtin_lesson_parses_and_names_a_builtin_scenario() {
        assert_eq!(Lesson::builtin_names().len(), 11);
        for name in Lesson::builtin_names() {
            let text = Lesson::builtin_text(name).unwrap();
            let lesson = Lesson::parse(text).unwrap_or_else(|e| panic!("{name}: {e}"));
            assert_eq!(lesson.name, name);
            assert_eq!(Some(lesson.title.as_str()), Lesson::builtin_title(name), "{name}: the table's title is the file's");
            assert!(crate::command::Scenario::builtin(&lesson.scenario).is_some(), "{name}: scenario {}", lesson.scenario);
            assert!(!lesson.steps.is_empty());
        }
    }

    fn err(text: &str) -> String {
        Lesson::parse(text).unwrap_err()
    }

    #[test]
    fn malformed_lessons_say_where() {
        assert!(err("name: [").starts_with("lesson: invalid YAML: "), "{}", err("name: ["));
        assert_eq!(err("title: x\nsteps: [{text: a}]"), "lesson: name: is required");
        assert_eq!(err("name: x\nsteps: []"), "lesson x: steps: a lesson needs at least one step");
        assert_eq!(
            err("name: x\nstep: []"),
            "lesson: unknown field \"step\" (expected one of: name, title, summary, scenario, seed, files, examples, operator, steps)"
        );
        assert_eq!(err("name: x\nseed: -1\nsteps: [{text: a}]"), "lesson x: seed: must be a whole number, got -1");
        let text = "name: x\nsteps:\n  - text: fine\n  - text: second\n    check:\n      pods: {count: many}\n";
        assert_eq!(err(text), "lesson x: line 4: steps[1].check.pods.count: must be a whole number, got \"many\"");
        let text = "name: x\nsteps:\n  - text: a\n    action: kubectl get pods 'unterminated\n";
        assert_eq!(err(text), "lesson x: line 3: steps[0].action[0]: unterminated ' quote");
        let q = "name: x\nsteps:\n  - text: a\n    question: {prompt: p, choices: [a, b], answer: c}\n";
        assert_eq!(err(q), "lesson x: line 3: steps[0].question.answer: \"c\" is not one of the choices (a, b)");
        let q = "name: x\nsteps:\n  - text: a\n    question: {prompt: p}\n";
        assert_eq!(err(q), "lesson x: line 3: steps[0].question: needs an answer or a measure to grade against");
        let q = "name: x\nsteps:\n  - text: a\n    question: {prompt: p, answer: lots}\n";
        assert_eq!(err(q), "lesson x: line 3: steps[0].question.answer: without choices the answer must be a number, got \"lots\"");
        let t = "name: x\nsteps:\n  - text: a\n    task: do it\n";
        assert_eq!(err(t), "lesson x: line 3: steps[0].task: a task needs a check that tells when it is done");
        assert_eq!(err("name: x\nsteps:\n  - action: x\n"), "lesson x: line 3: steps[0].text: is required");
        assert_eq!(err("name: x\nsteps: 3\n"), "lesson x: steps: must be a list of steps, got 3");
        assert_eq!(err("- a\n- b\n"), "lesson: must be a mapping, got a list");
        assert_eq!(err("a: 1\n---\nb: 2\n"), "lesson: expected one YAML document, found 2");
    }

    #[test]
    fn a_lessons_operator_and_examples_are_built_in_files() {
        let lesson = Lesson::builtin("write-your-own-loop").unwrap();
        let operator = lesson.operator.as_ref().expect("lesson 11 names its operator");
        assert_eq!((operator.name.as_str(), operator.file.as_str()), ("website", "website.py"));
        assert!(operator.start.contains("YOUR PART") && !operator.solution.contains("YOUR PART"));
        assert!(lesson.files["website-crd.yaml"].contains("kind: CustomResourceDefinition"));
        assert_eq!(lesson.steps.iter().filter(|s| s.starts_operator).count(), 1);
        let with = |extra: &str, step: &str| format!("name: x\n{extra}steps:\n  - text: a\n{step}");
        assert_eq!(
            err(&with("examples: [nope.yaml]\n", "")),
            "lesson x: examples: \"nope.yaml\" is not one of the built-in example files (website-crd.yaml, shop.yaml, shop-v2.yaml, website.py, website_start.py)"
        );
        assert_eq!(
            err(&with("", "    operator: start\n")),
            "lesson x: steps[0].operator: the lesson names no operator (a top-level operator: {name, file, start, solution})"
        );
        let op = "operator: {name: site, file: s.py, start: website_start.py, solution: website.py}\n";
        assert_eq!(
            err(&with(op, "    operator: stop\n")),
            "lesson x: line 4: steps[0].operator: must be start, got \"stop\" (stop and restart it with `sim stop|restart operator/NAME` lines)"
        );
        assert_eq!(
            err(&with("operator: {name: Site, file: s.py, start: website_start.py, solution: website.py}\n", "")),
            "lesson x: operator.name: invalid operator name \"Site\": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character"
        );
        assert_eq!(
            err(&with("operator: {name: site, file: s.py, start: mine.py, solution: website.py}\n", "")),
            "lesson x: operator.start: \"mine.py\" is not one of the built-in example files (website-crd.yaml, shop.yaml, shop-v2.yaml, website.py, website_start.py)"
        );
        assert!(Lesson::parse(&with(op, "    operator: start\n")).unwrap().steps[0].starts_operator);
    }

    #[test]
    fn mangled_lessons_never_panic() {
        // Every prefix of a lesson (a file cut short), and lines swapped for odd values.
        let text = Lesson::builtin_text("rolling-update").unwrap();
        for cut in (0..text.len()).step_by(7).filter(|c| text.is_char_boundary(*c)) {
            let _ = Lesson::parse(&text[..cut]);
        }
        let odd = ["count: -1", "within: forever", "- 3", "check: []", "question: {}", "steps: {}", "  - {text: [1]}", "answer: [x]"];
        let lines: Vec<&str> = Lesson::builtin_text("which-loop").unwrap().lines().collect();
        for (i, replacement) in (0..lines.len()).flat_map(|i| odd.iter().map(move |o| (i, *o))) {
            let mut mangled = lines.clone();
            mangled[i] = replacement;
            let _ = Lesson::parse(&mangled.join("\n"));
        }
    }

    #[test]
    fn step_lines_follow_the_list() {
        let text = "name: x\n# c\nsteps:\n\n  - text: a\n    check:\n      - nested\n  - text: b\n";
        assert_eq!(step_line(text, 0), Some(5));
        assert_eq!(step_line(text, 1), Some(8));
        assert_eq!(step_line(text, 2), None);
    }
}
