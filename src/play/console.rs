//! The console's transcript: the lines a terminal on the page's one session shows (echoed
//! commands, their output and errors, and what open watches print as time passes), capped so a
//! long watch cannot grow the page without bound.
//!
//! It exists so that what the console shows is decided next to the session that produced it,
//! where native tests reach it; the page's `Console` component keeps only what a terminal's
//! input keeps (the line being typed, the history, the last Tab's candidates) and renders these
//! lines.

use super::Engine;
use crate::command::CommandOutput;
use std::collections::VecDeque;
use std::rc::Rc;

/// Console lines kept.
pub const CONSOLE_LINES: usize = 400;

/// What a line of the transcript is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ConsoleKind {
    /// An echoed command (`$ kubectl get pods`).
    Input,
    Output,
    Error,
}

impl ConsoleKind {
    /// The line's class in the page's style sheet.
    pub fn class(self) -> &'static str {
        match self {
            ConsoleKind::Input => "input",
            ConsoleKind::Output => "output",
            ConsoleKind::Error => "error",
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConsoleLine {
    /// Numbers the lines ever written, so the page keys them and sees a new one at the end.
    pub seq: u64,
    pub kind: ConsoleKind,
    pub text: String,
}

/// The newest [`CONSOLE_LINES`] lines.
#[derive(Debug, Default)]
pub(crate) struct Transcript {
    lines: VecDeque<ConsoleLine>,
    seq: u64,
}

impl Transcript {
    pub(crate) fn new() -> Transcript {
        Transcript::default()
    }

    pub(crate) fn push(&mut self, kind: ConsoleKind, text: &str) {
        self.seq += 1;
        self.lines.push_back(ConsoleLine { seq: self.seq, kind, text: text.to_string() });
        while self.lines.len() > CONSOLE_LINES {
            self.lines.pop_front();
        }
    }

    /// A command line as the terminal echoes it.
    pub(crate) fn echo(&mut self, line: &str) {
        self.push(ConsoleKind::Input, &format!("$ {line}"));
    }

    /// What a command printed: its output, then its errors, a line each.
    pub(crate) fn output(&mut self, out: &CommandOutput) {
        for l in out.stdout.lines() {
            self.push(ConsoleKind::Output, l);
        }
        for l in out.stderr.lines() {
            self.push(ConsoleKind::Error, l);
        }
    }

    /// The lines for a snapshot: `old` again when no line was written since.
    pub(crate) fn shared(&self, old: &Rc<Vec<ConsoleLine>>) -> Rc<Vec<ConsoleLine>> {
        if old.last().map(|l| l.seq) == self.lines.back().map(|l| l.seq) {
            old.clone()
        } else {
            Rc::new(self.lines.iter().cloned().collect())
        }
    }
}

/// What `sim status` says while a lesson asks which loop stopped.
/// Short lines: the console does not wrap (kubectl's tables must not), and it is narrow.
pub const SIM_STATUS_CONCEALED: &str = "error: sim status is hidden until you answer.
A real cluster has no list of stopped loops:
find it from the symptoms, with
  kubectl get pods -o wide
  kubectl describe pod NAME
  kubectl get events";

/// Whether a console line is `sim status` (with or without arguments, however spaced).
fn is_sim_status(line: &str) -> bool {
    let mut words = line.split_whitespace();
    words.next() == Some("sim") && words.next() == Some("status")
}

/// Where ↑/↓ go in a history of `len` lines from `at` (None = the line being typed). Returns
/// the new position.
pub fn walk_history(len: usize, at: Option<usize>, up: bool) -> Option<usize> {
    match (at, up) {
        (_, _) if len == 0 => None,
        (None, true) => Some(len - 1),
        (Some(i), true) => Some(i.saturating_sub(1)),
        (None, false) => None,
        (Some(i), false) if i + 1 < len => Some(i + 1),
        (Some(_), false) => None,
    }
}

impl Engine {
    /// A console line: echoed, run, its output and what its watches say at once shown below it.
    pub(crate) fn console_run(&mut self, line: &str) {
        self.console.echo(line);
        if line.trim().is_empty() {
            return;
        }
        if is_sim_status(line) && self.lesson.as_ref().is_some_and(|run| run.conceals_components()) {
            // The lesson asks which loop stopped: the simulator's own list would simply say.
            self.console.output(&CommandOutput::err(SIM_STATUS_CONCEALED));
            return;
        }
        let out = self.run_logged(line);
        self.console.output(&out);
    }
}

#[cfg(test)]
mod tests {
    use super::super::{test_engine, Action};
    use super::*;

    #[test]
    fn the_transcript_keeps_the_newest_lines_numbered_in_order() {
        let mut t = Transcript::new();
        for i in 0..CONSOLE_LINES + 50 {
            t.push(ConsoleKind::Output, &i.to_string());
        }
        let lines = t.shared(&Rc::default());
        assert_eq!(lines.len(), CONSOLE_LINES);
        assert_eq!((lines[0].text.as_str(), lines[0].seq), ("50", 51), "the oldest fifty are gone");
        assert_eq!(lines.last().map(|l| l.seq), Some(450));
        assert!(Rc::ptr_eq(&t.shared(&lines), &lines), "nothing written since: the same lines");
        t.push(ConsoleKind::Error, "x");
        assert!(!Rc::ptr_eq(&t.shared(&lines), &lines));
    }

    #[test]
    fn a_console_line_is_echoed_then_its_output_follows() {
        let mut e = test_engine("?scenario=default&seed=1");
        let s = e.act(Action::Console("kubectl get deployments".into())).expect("the console changed");
        let texts: Vec<(ConsoleKind, &str)> = s.console.iter().map(|l| (l.kind, l.text.as_str())).collect();
        assert_eq!(texts[0], (ConsoleKind::Input, "$ kubectl get deployments"));
        assert!(texts[1].1.starts_with("NAME ") && texts[1].0 == ConsoleKind::Output, "{texts:?}");
        assert!(texts[2].1.starts_with("web "), "{texts:?}");
        // An empty line is echoed and runs nothing.
        let s = e.act(Action::Console("  ".into())).expect("echoed");
        assert_eq!(s.console.last().map(|l| l.text.as_str()), Some("$   "));
        assert_eq!(s.commands.len(), 1, "only the first line ran");
        let s = e.act(Action::Interrupt).expect("^C is echoed");
        assert_eq!(s.console.last().map(|l| (l.kind, l.text.as_str())), Some((ConsoleKind::Input, "^C")));
    }

    #[test]
    fn a_watch_prints_into_the_console_as_time_passes() {
        let mut e = test_engine("?scenario=default&seed=1");
        e.act(Action::Console("kubectl get pods -w".into()));
        let before = e.snapshot().console.len();
        e.frame(0.0, &|| 0.0);
        for ts in 1..100 {
            e.frame(f64::from(ts) * 100.0, &|| 0.0);
        }
        let s = e.snapshot();
        assert!(s.console.len() > before, "the watch printed as the pods changed");
        assert!(s.console.iter().skip(before).any(|l| l.text.contains("Running")), "{:?}", s.console);
    }

    #[test]
    fn a_kill_from_the_stage_shows_in_the_consoles_watch() {
        let mut e = test_engine("?scenario=default&seed=1");
        e.act(Action::Console("kubectl get pods -w".into()));
        for ts in 0..10 {
            e.frame(f64::from(ts) * 100.0, &|| 0.0);
        }
        let victim = e.session.sim().objects(crate::model::Kind::Pod).next().map(|o| o.meta().name.to_string()).expect("a pod");
        e.act(Action::Select("default".into(), victim.clone()));
        let before = e.snapshot().console.len();
        e.act(Action::Kill);
        let s = e.snapshot();
        let printed: Vec<&str> = s.console.iter().skip(before).map(|l| l.text.as_str()).collect();
        assert!(printed.iter().any(|l| l.starts_with(&victim) && l.contains("Terminating")), "{printed:?}");
    }

    #[test]
    fn history_walks_up_to_the_oldest_and_down_back_to_the_line_being_typed() {
        assert_eq!(walk_history(0, None, true), None);
        assert_eq!(walk_history(3, None, true), Some(2));
        assert_eq!(walk_history(3, Some(0), true), Some(0), "the oldest stays");
        assert_eq!(walk_history(3, Some(1), false), Some(2));
        assert_eq!(walk_history(3, Some(2), false), None, "past the newest: the line being typed");
        assert_eq!(walk_history(3, None, false), None);
        assert_eq!([ConsoleKind::Input.class(), ConsoleKind::Output.class(), ConsoleKind::Error.class()], ["input", "output", "error"]);
    }
}
