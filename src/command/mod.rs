//! One command language for every way into the simulation: the native CLI, the page's console,
//! scenario timelines and tests all call [`Session::execute`] (or the free [`execute`]).
//!
//! A line is a kubectl command (the leading `kubectl` is optional) or a `sim` verb; blank lines
//! and `#` comments do nothing. kubectl's reads go straight to the API server's store (what a GET
//! returns); its writes go through [`Sim::submit`], so they are traced like any client's. Every
//! failure prints what real kubectl prints (`error: ...`, `Error from server (NotFound): ...`)
//! and leaves the cluster as it was; nothing panics, whatever the input.
//!
//! Time belongs to the simulation, not to commands: `kubectl delete` returns at once (as with
//! `--wait=false`) and `kubectl get -w` registers a watch whose lines appear as simulated time
//! passes. Only where a script needs to wait — `kubectl rollout status` in a blocking session —
//! does a command move the clock, and then by stepping the simulation, bounded by `--timeout`.
//!
//! A [`Session`] holds what outlives one line: the simulation, the scenario it was started from
//! (so `sim seed N` can rebuild it), the scenario's timeline still to play, open watches, the
//! virtual files `apply -f` reads, and the asynchronous output (watch lines, timeline commands)
//! that callers collect with [`Session::take_stream`].

pub mod complete;
pub mod kubectl;
pub mod parse;
pub mod printers;
pub mod resources;
pub mod scenario;
pub mod selector;
pub mod sim_load;
pub mod sim_mode;
pub mod sim_traffic;
pub mod sim_verbs;
pub mod table;
pub mod validate;
pub mod yaml;

pub use scenario::{Scenario, TimelineEntry};

use crate::model::{Duration, Time};
use crate::sim::Sim;
use std::collections::{BTreeMap, VecDeque};

/// What one command printed, and whether it succeeded (kubectl's exit status 0).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CommandOutput {
    pub stdout: String,
    pub stderr: String,
    pub ok: bool,
}

impl CommandOutput {
    /// A successful command that printed `text` (a newline is added if missing).
    pub fn out(text: impl Into<String>) -> Self {
        CommandOutput { stdout: with_newline(text.into()), stderr: String::new(), ok: true }
    }
    /// A failed command; `text` goes to stderr.
    pub fn err(text: impl Into<String>) -> Self {
        CommandOutput { stdout: String::new(), stderr: with_newline(text.into()), ok: false }
    }
    /// A successful command with nothing to say.
    pub fn empty() -> Self {
        CommandOutput { ok: true, ..Default::default() }
    }
    /// Appends another command's output; the result fails if either failed.
    pub fn push(&mut self, other: CommandOutput) {
        self.stdout.push_str(&other.stdout);
        self.stderr.push_str(&other.stderr);
        self.ok &= other.ok;
    }
    /// Adds a line to stdout.
    pub fn say(&mut self, text: &str) {
        self.stdout.push_str(&with_newline(text.to_string()));
    }
    /// Adds a line to stderr and marks the command failed.
    pub fn fail(&mut self, text: &str) {
        self.stderr.push_str(&with_newline(text.to_string()));
        self.ok = false;
    }
    /// Adds a line to stderr without failing (warnings, "No resources found").
    pub fn note(&mut self, text: &str) {
        self.stderr.push_str(&with_newline(text.to_string()));
    }
}

fn with_newline(mut s: String) -> String {
    if !s.is_empty() && !s.ends_with('\n') {
        s.push('\n');
    }
    s
}

/// Reads a file for `-f` natively (the page has none).
pub type FileReader = Box<dyn Fn(&str) -> Result<String, String>>;

/// Where `apply -f` finds files: text added by the page or a test, then (natively) the disk.
#[derive(Default)]
pub struct Files {
    map: BTreeMap<String, String>,
    reader: Option<FileReader>,
}

impl Files {
    /// The text of `path`: a virtual file, a built-in example from the Kubernetes documentation
    /// (by its `https://k8s.io/examples/...` address), or whatever the reader finds.
    pub fn read(&self, path: &str) -> Result<String, String> {
        if let Some(text) = self.map.get(path) {
            return Ok(text.clone());
        }
        if path.starts_with("http://") || path.starts_with("https://") {
            return kubectl::examples::by_url(path)
                .map(str::to_string)
                .ok_or_else(|| format!("error: unable to read URL {path:?}, server reported 404 Not Found, status code=404"));
        }
        match &self.reader {
            Some(read) => read(path),
            None => Err(format!("error: the path {path:?} does not exist")),
        }
    }
}

/// A streaming command still running: `kubectl get -w`, `kubectl rollout status`.
pub(crate) enum Watch {
    Table(kubectl::get::TableWatch),
}

/// A console on one simulated cluster. See the module documentation.
pub struct Session {
    sim: Sim,
    scenario: Option<Scenario>,
    timeline: VecDeque<TimelineEntry>,
    watches: Vec<Watch>,
    files: Files,
    stream: CommandOutput,
    blocking: bool,
    /// What runs a lesson's operator: the shell's (`set_operator_interpreter`).
    operator_interpreter: Option<OperatorInterpreter>,
}

/// Makes the interpreter for a lesson's operator (the core cannot start one itself).
type OperatorInterpreter = Box<dyn FnMut(&crate::lesson::LessonOperator) -> Result<Box<dyn crate::operator::Interpreter>, String>>;

impl Session {
    /// Starts `scenario` with `seed` (or the scenario's own seed, or 1).
    pub fn new(scenario: Scenario, seed: Option<u64>) -> Result<Session, String> {
        let seed = seed.or(scenario.seed).unwrap_or(1);
        let sim = scenario.start(seed)?;
        let timeline = scenario.timeline.iter().cloned().collect();
        Ok(Session {
            sim,
            scenario: Some(scenario),
            timeline,
            watches: Vec::new(),
            files: Files::default(),
            stream: CommandOutput::empty(),
            blocking: true,
            operator_interpreter: None,
        })
    }

    /// A session over an existing simulation, with no scenario (`sim seed` is then unavailable).
    pub fn from_sim(sim: Sim) -> Session {
        Session {
            sim,
            scenario: None,
            timeline: VecDeque::new(),
            watches: Vec::new(),
            files: Files::default(),
            stream: CommandOutput::empty(),
            blocking: true,
            operator_interpreter: None,
        }
    }

    pub fn sim(&self) -> &Sim {
        &self.sim
    }
    pub fn sim_mut(&mut self) -> &mut Sim {
        &mut self.sim
    }
    pub fn into_sim(self) -> Sim {
        self.sim
    }
    pub fn scenario(&self) -> Option<&Scenario> {
        self.scenario.as_ref()
    }
    /// Timeline entries not yet played.
    pub fn timeline_remaining(&self) -> usize {
        self.timeline.len()
    }
    /// When the next timeline entry runs, if any is left.
    pub fn next_timeline_at(&self) -> Option<Time> {
        self.timeline.front().map(|e| Time(e.at.0))
    }

    /// Whether commands that wait in real kubectl (`rollout status`) may move the clock. True by
    /// default (scripts, tests, the CLI); the page turns it off and lets its own clock run.
    pub fn set_blocking(&mut self, blocking: bool) {
        self.blocking = blocking;
    }

    /// Makes `text` readable as `path` by `apply -f`, `create -f` and `delete -f`.
    pub fn add_file(&mut self, path: &str, text: &str) {
        self.files.map.insert(path.to_string(), text.to_string());
    }

    /// Lets lessons start their operator: `make` gives the interpreter that runs it (natively a
    /// `python3` subprocess with the lesson's solution; in the page, its Python runtime with the
    /// learner's code). Without one, a lesson step that starts an operator is refused.
    pub fn set_operator_interpreter(
        &mut self,
        make: impl FnMut(&crate::lesson::LessonOperator) -> Result<Box<dyn crate::operator::Interpreter>, String> + 'static,
    ) {
        self.operator_interpreter = Some(Box::new(make));
    }

    /// Starts a lesson's operator as `operator/NAME`, with the interpreter the shell supplies;
    /// an error (nothing to run Python here, a file that does not load) changes nothing.
    pub fn start_lesson_operator(&mut self, operator: &crate::lesson::LessonOperator) -> Result<(), String> {
        let refused = || {
            format!(
                "this step runs the operator operator/{} ({}), and nothing here can run Python operators yet",
                operator.name, operator.file
            )
        };
        let Some(make) = self.operator_interpreter.as_mut() else { return Err(refused()) };
        let interpreter = make(operator)?;
        // One the learner already runs under that name (the page's Operator panel) gives way.
        self.sim.replace_operator(&operator.name, interpreter)
    }

    /// Lets `-f` read real files (the native CLI passes `std::fs::read_to_string`).
    pub fn set_file_reader(&mut self, reader: impl Fn(&str) -> Result<String, String> + 'static) {
        self.files.reader = Some(Box::new(reader));
    }

    /// Output produced since the last call outside any command's own answer: lines of open
    /// watches and the commands the scenario's timeline ran (each echoed as `$ command`).
    /// Callers print a command's own output first, then this.
    pub fn take_stream(&mut self) -> CommandOutput {
        std::mem::replace(&mut self.stream, CommandOutput::empty())
    }

    /// Ends every open watch (Ctrl-C in a terminal).
    pub fn stop_watches(&mut self) {
        self.watches.clear();
    }

    /// Runs one line. Open watches then report what the command changed, into the stream.
    pub fn execute(&mut self, line: &str) -> CommandOutput {
        let words = match parse::split(line) {
            Ok(w) => w,
            Err(e) => return CommandOutput::err(e),
        };
        let Some(first) = words.words.first() else {
            return CommandOutput::empty();
        };
        let out = match first.as_str() {
            "sim" => sim_verbs::run(self, &words.words[1..]),
            "help" | "--help" | "-h" => CommandOutput::out(help_text()),
            _ => {
                let args = if first == "kubectl" { &words.words[1..] } else { &words.words[..] };
                // A stopped kube-apiserver or etcd answers before any subcommand runs.
                match sim_verbs::refused_kubectl(&self.sim, args) {
                    Some(refused) => refused,
                    None => self.run_kubectl(args, words.stdin),
                }
            }
        };
        self.poll_watches();
        out
    }

    /// Runs a kubectl command; natively, its writes are the real kubectl's (its field manager),
    /// for a shell that records who wrote what (`sim::WriteObserver`).
    fn run_kubectl(&mut self, args: &[String], stdin: Option<String>) -> CommandOutput {
        #[cfg(not(target_arch = "wasm32"))]
        self.sim.set_console_writer(kubectl::field_manager(args));
        let out = kubectl::run(self, args, stdin);
        #[cfg(not(target_arch = "wasm32"))]
        self.sim.set_console_writer(None);
        out
    }

    /// Moves simulated time to `until`, running every timeline entry due on the way at its time
    /// and collecting watch output as things change.
    pub fn advance_to(&mut self, until: Time) {
        loop {
            self.play_due_timeline();
            let next_entry = self.timeline.front().map(|e| Time(e.at.0)).filter(|t| *t <= until);
            let bound = next_entry.unwrap_or(until);
            match self.sim.next_time() {
                Some(t) if t <= bound => {
                    self.sim.step();
                    self.poll_watches();
                }
                _ => {
                    self.sim.run_until(bound);
                    self.poll_watches();
                    if next_entry.is_none() {
                        return;
                    }
                }
            }
        }
    }

    pub fn advance(&mut self, d: Duration) {
        let until = self.sim.now() + d;
        self.advance_to(until);
    }

    /// Runs until no component has work (`Sim::is_settled`), for at most `limit`, playing due
    /// timeline entries. Ok(how long it took) or Err(limit).
    pub fn settle(&mut self, limit: Duration) -> Result<Duration, Duration> {
        let start = self.sim.now();
        let deadline = start + limit;
        loop {
            self.play_due_timeline();
            if self.sim.is_settled() {
                return Ok(self.sim.now().since(start));
            }
            let next_entry = self.timeline.front().map(|e| Time(e.at.0));
            match self.sim.next_time() {
                Some(t) if t <= deadline => match next_entry {
                    Some(e) if e < t => self.sim.run_until(e),
                    _ => {
                        self.sim.step();
                        self.poll_watches();
                    }
                },
                _ => {
                    self.sim.run_until(deadline);
                    self.play_due_timeline();
                    self.poll_watches();
                    return Err(limit);
                }
            }
        }
    }

    /// Runs the timeline entries whose time has come, echoing each into the stream.
    fn play_due_timeline(&mut self) {
        while self.timeline.front().is_some_and(|e| Time(e.at.0) <= self.sim.now()) {
            let Some(entry) = self.timeline.pop_front() else { break };
            self.poll_watches();
            // The command's own answer comes right after its echo; what its watches saw follows.
            let before = self.take_stream();
            let out = self.execute(&entry.run);
            let during = self.take_stream();
            self.stream = before;
            self.stream.say(&format!("$ {}", entry.run));
            self.stream.push(out);
            self.stream.stdout.push_str(&during.stdout);
            self.stream.stderr.push_str(&during.stderr);
            self.stream.ok = true;
        }
    }

    /// Appends what every open watch has to say about changes since it last looked.
    pub(crate) fn poll_watches(&mut self) {
        if self.watches.is_empty() {
            return;
        }
        let mut text = String::new();
        for w in &mut self.watches {
            match w {
                Watch::Table(t) => t.poll(&self.sim, &mut text),
            }
        }
        self.stream.stdout.push_str(&text);
    }

    /// Replaces the simulation with the scenario started afresh with `seed`.
    pub(crate) fn reseed(&mut self, seed: u64) -> Result<String, String> {
        let Some(scenario) = &self.scenario else {
            return Err("error: sim seed needs a session started from a scenario (kubeloop shell SCENARIO, or the page)".into());
        };
        let sim = scenario.start(seed)?;
        let name = scenario.name.clone();
        self.timeline = scenario.timeline.iter().cloned().collect();
        self.sim = sim;
        self.watches.clear();
        Ok(name)
    }

    pub(crate) fn files(&self) -> &Files {
        &self.files
    }
    pub(crate) fn blocking(&self) -> bool {
        self.blocking
    }
    pub(crate) fn add_watch(&mut self, w: Watch) {
        self.watches.push(w);
    }
}

/// Runs one line against `sim` without a session: no scenario (so no `sim seed`), no virtual
/// files, and a watch lasts only for the line. Same output as [`Session::execute`] otherwise.
pub fn execute(sim: &mut Sim, line: &str) -> CommandOutput {
    let owned = std::mem::replace(sim, Sim::empty(0));
    let mut session = Session::from_sim(owned);
    let mut out = session.execute(line);
    let stream = session.take_stream();
    *sim = session.into_sim();
    out.stdout.push_str(&stream.stdout);
    out.stderr.push_str(&stream.stderr);
    out
}

/// `kubeloop help`: what the console understands.
pub fn help_text() -> String {
    "kubeloop speaks kubectl and a few simulation verbs. One command per line; `#` starts a comment.\n\
     \n\
     kubectl (the word `kubectl` is optional):\n  \
       get, describe, apply -f, create -f, create deployment, delete, scale, set image,\n  \
       rollout status|history|undo, api-resources, version\n\
     \n\
     sim:\n  \
       sim advance DURATION       move simulated time (500ms, 30s, 5m)\n  \
       sim settle [LIMIT]         run until every loop is idle (default limit 5m)\n  \
       sim time                   print simulated time\n  \
       sim status                 each component's loop: phase, queue, last action\n  \
       sim node add NAME [--cpu 4] [--memory 8Gi] [--pods 110] [--zone Z]\n  \
       sim seed N                 restart the scenario with another seed\n\
     \n\
     sim faults:\n  \
       sim stop|start|restart COMPONENT\n                             \
       kube-apiserver, etcd, kube-controller-manager, kube-scheduler, kubelet-NODE, kube-proxy-NODE\n  \
       sim node fail NODE         power the node off: kubelet and containers gone\n  \
       sim node partition NODE    cut the node off from kube-apiserver; containers keep running\n  \
       sim node recover NODE      power on, or reconnect\n  \
       sim watch drop PERCENT [COMPONENT]   lose that share of watch events (0: off)\n  \
       sim watch delay DURATION [COMPONENT] deliver watch events that much later (0s: off)\n  \
       sim watch sever [COMPONENT]          end watches: each client must re-list\n  \
       sim etcd snapshot|restore|wipe       back up etcd, restore the backup, lose everything\n  \
       sim crash POD [--after 0s] [--code 1]  the pod's containers exit after each start\n  \
       sim fail-probe POD KIND              the pod's KIND (liveness, readiness, startup) probes fail\n  \
       sim pass-probe POD KIND              its KIND probes pass again\n  \
       sim mode level|edge [CONTROLLER]     reconcile the whole state, or act on events only\n\
     \n\
     sim traffic:\n  \
       sim traffic SERVICE [--rate 10] [--from NODE|pod/NAME] [--port P]\n                             \
       send connections to the service, routed by each node's kube-proxy rules\n  \
       sim traffic                where the connections went, pod by pod\n  \
       sim traffic stop [SERVICE] stop sending\n  \
       sim rules NODE             the Service rules kube-proxy wrote on the node (iptables-save)\n\
     \n\
     sim load:\n  \
       sim load deployment/NAME --cpu 300%  a CPU demand of three pods' requests, shared by its pods\n  \
       sim load                   the loads set\n"
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blank_lines_and_comments_do_nothing() {
        let mut sim = Sim::new(1);
        for line in ["", "   ", "# a comment", "  # indented"] {
            assert_eq!(execute(&mut sim, line), CommandOutput::empty());
        }
    }

    #[test]
    fn output_helpers_end_lines() {
        assert_eq!(CommandOutput::out("x").stdout, "x\n");
        let e = CommandOutput::err("error: boom");
        assert_eq!((e.stderr.as_str(), e.ok), ("error: boom\n", false));
    }
}
