//! Sharing what a learner did: a permalink that replays it, a trace file to export and import,
//! and the kubectl lines to paste into a real cluster.
//!
//! The simulation is deterministic, so a run is fully described by its scenario, its seed, and
//! the command lines run with the simulated time of each: replaying them gives the same cluster
//! and the same trace hash. The trace file adds that hash (so an import can prove it reproduced
//! the run) and the recent messages (for reading; an import does not need them).

use super::page::{percent_encode, Recorded};
use crate::command::Session;
use crate::model::Time;
use crate::sim::Message;
use serde::{Deserialize, Serialize};

/// The query string (`?scenario=...&seed=...&cmd=...&at=...`) that reproduces a run.
pub fn permalink_query(scenario: &str, seed: u64, commands: &[Recorded], at: u64) -> String {
    let mut query = format!("?scenario={}&seed={seed}", percent_encode(scenario));
    for c in commands {
        query.push_str(&format!("&cmd={}%3A{}", c.at, percent_encode(&c.command)));
    }
    query.push_str(&format!("&at={at}"));
    query
}

/// Runs `commands` in order, each at its simulated time, then runs the clock to `at`. A command
/// dated before the clock is refused with an error; a command that does not parse or fails is
/// reported with its own (kubectl's) error and where it came from. Either way the rest still
/// run: a failed command changes nothing, so the rest replay as they did the first time.
pub fn replay(session: &mut Session, commands: &[Recorded], at: Option<u64>) -> Vec<String> {
    let mut errors = Vec::new();
    for c in commands {
        let now = session.sim().now();
        if c.at < now.0 {
            errors.push(format!("error: cannot replay {:?} at {} ms: the simulation is already at {} ms", c.command, c.at, now.0));
            continue;
        }
        session.advance_to(Time(c.at));
        let out = session.execute(&c.command);
        session.take_stream();
        if !out.ok {
            errors.push(failed(&out, c));
        }
    }
    if let Some(at) = at.filter(|at| *at > session.sim().now().0) {
        session.advance_to(Time(at));
    }
    errors
}

/// A replayed command's failure: kubectl's first error line, then which `cmd=` it was.
fn failed(out: &crate::command::CommandOutput, c: &Recorded) -> String {
    let why = out.stderr.lines().find(|l| !l.trim().is_empty()).unwrap_or("error: the command failed");
    format!("{why} (replaying {:?} at {} ms)", c.command, c.at)
}

/// A run as a JSON file: what it was, what was done, where it got, and its trace.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TraceFile {
    /// `kubeloop-trace/v1`.
    pub format: String,
    pub scenario: String,
    pub seed: u64,
    pub commands: Vec<Recorded>,
    /// Simulated milliseconds at export.
    pub at: u64,
    /// The FNV-1a hash of every message up to `at`, 16 hex digits.
    pub trace_hash: String,
    pub message_count: u64,
    /// The most recent messages, oldest first (for reading; not needed to import).
    #[serde(default, skip_deserializing)]
    pub messages: Vec<Message>,
}

pub const TRACE_FORMAT: &str = "kubeloop-trace/v1";

impl TraceFile {
    /// The file for the run in `session`.
    pub fn of(session: &Session, scenario: &str, commands: &[Recorded]) -> TraceFile {
        let sim = session.sim();
        TraceFile {
            format: TRACE_FORMAT.into(),
            scenario: scenario.into(),
            seed: sim.seed(),
            commands: commands.to_vec(),
            at: sim.now().0,
            trace_hash: hash_text(sim.trace().hash()),
            message_count: sim.trace().count(),
            messages: sim.trace().recent().cloned().collect(),
        }
    }

    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).unwrap_or_default()
    }

    /// Reads a trace file; the error says what is wrong with it.
    pub fn parse(json: &str) -> Result<TraceFile, String> {
        let file: TraceFile = serde_json::from_str(json).map_err(|e| format!("error: this is not a kubeloop trace file: {e}"))?;
        if file.format != TRACE_FORMAT {
            return Err(format!("error: unsupported trace format {:?}; this page reads {TRACE_FORMAT}", file.format));
        }
        Ok(file)
    }

    /// Whether `session` is the run this file describes.
    pub fn matches(&self, session: &Session) -> Result<(), String> {
        let hash = hash_text(session.sim().trace().hash());
        if hash == self.trace_hash {
            Ok(())
        } else {
            Err(format!("error: the replay differs from the trace file (trace hash {hash}, file says {})", self.trace_hash))
        }
    }
}

fn hash_text(hash: u64) -> String {
    format!("{hash:016x}")
}

/// The kubectl lines the learner ran, as a shell script for a real cluster; `sim` verbs, which
/// no real cluster has, are kept as comments.
pub fn as_kubectl(scenario: &str, seed: u64, commands: &[Recorded]) -> String {
    let mut out = format!("# kubeloop: scenario {scenario}, seed {seed}\n");
    for c in commands {
        let line = c.command.trim();
        if line.starts_with("kubectl ") {
            out.push_str(line);
        } else {
            out.push_str(&format!("# {line}  (simulator only)"));
        }
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Duration, Kind};
    use crate::view::page::{parse_query, scenario};

    /// A run with a scale, a pod killed and a node added, and what it recorded.
    fn a_run() -> (Session, Vec<Recorded>) {
        let mut session = Session::new(scenario("default").unwrap(), Some(4)).unwrap();
        let mut log = Vec::new();
        let mut run = |session: &mut Session, line: &str| {
            log.push(Recorded { at: session.sim().now().0, command: line.to_string() });
            session.execute(line);
        };
        session.advance(Duration::millis(12_345));
        run(&mut session, "kubectl scale deployment web --replicas=5");
        session.advance(Duration::millis(9_001));
        let pod = session.sim().objects(Kind::Pod).map(|p| p.meta().name.clone()).next().unwrap();
        run(&mut session, &format!("kubectl delete pod {pod}"));
        session.advance(Duration::millis(3_000));
        run(&mut session, "sim node add node-3");
        session.advance(Duration::millis(20_000));
        (session, log)
    }

    #[test]
    fn a_permalink_replays_to_the_same_state_and_trace() {
        let (original, log) = a_run();
        let query = permalink_query("default", 4, &log, original.sim().now().0);
        assert!(
            query.starts_with("?scenario=default&seed=4&cmd=12345%3Akubectl%20scale%20deployment%20web%20--replicas%3D5&cmd=21346%3A"),
            "{query}"
        );
        assert!(query.ends_with("&at=44346"), "{query}");
        let (params, errors) = parse_query(&query);
        assert_eq!(errors, Vec::<String>::new());
        assert_eq!(params.commands, log);
        let mut copy = Session::new(scenario(&params.scenario).unwrap(), params.seed).unwrap();
        assert_eq!(replay(&mut copy, &params.commands, params.at), Vec::<String>::new());
        assert_eq!(copy.sim().now(), original.sim().now());
        assert_eq!(copy.sim().trace().hash(), original.sim().trace().hash());
        assert_eq!(copy.sim().trace().count(), original.sim().trace().count());
        let names = |s: &Session| s.sim().objects(Kind::Pod).map(|p| p.meta().name.clone()).collect::<Vec<_>>();
        assert_eq!(names(&copy), names(&original));
    }

    #[test]
    fn a_command_dated_in_the_past_is_refused_and_the_rest_replay() {
        let mut session = Session::new(scenario("default").unwrap(), Some(1)).unwrap();
        let commands = vec![
            Recorded { at: 5_000, command: "kubectl scale deployment web --replicas=4".into() },
            Recorded { at: 1_000, command: "kubectl scale deployment web --replicas=9".into() },
        ];
        assert_eq!(
            replay(&mut session, &commands, Some(8_000)),
            vec!["error: cannot replay \"kubectl scale deployment web --replicas=9\" at 1000 ms: the simulation is already at 5000 ms"]
        );
        assert_eq!(session.sim().now(), Time(8_000));
    }

    #[test]
    fn a_command_that_does_not_parse_or_fails_is_reported_and_the_rest_replay() {
        let query = "?seed=1&cmd=1000%3Akubectl%20scael%20deployment%20web&cmd=2000%3Akubectl%20scale%20deployment%20nope%20--replicas%3D2&cmd=2500%3Asim%20node%20add%20%22node-9&cmd=3000%3Akubectl%20scale%20deployment%20web%20--replicas%3D4&at=30000";
        let (params, errors) = parse_query(query);
        assert_eq!(errors, Vec::<String>::new(), "every cmd= has a time and a line");
        let mut session = Session::new(scenario("default").unwrap(), params.seed).unwrap();
        let errors = replay(&mut session, &params.commands, params.at);
        assert_eq!(errors.len(), 3, "{errors:#?}");
        assert!(errors[0].starts_with("error: unknown command \"scael\" for \"kubectl\""), "{}", errors[0]);
        assert!(errors[0].ends_with("(replaying \"kubectl scael deployment web\" at 1000 ms)"), "{}", errors[0]);
        assert_eq!(
            errors[1],
            "error: no objects passed to scale deployments.apps \"nope\" not found (replaying \"kubectl scale deployment nope --replicas=2\" at 2000 ms)"
        );
        assert!(errors[2].ends_with("(replaying \"sim node add \\\"node-9\" at 2500 ms)"), "{}", errors[2]);
        // The good command after them still ran, at its time, and the clock reached `at`.
        assert_eq!(session.sim().now(), Time(30_000));
        let d = session.sim().objects(Kind::Deployment).find_map(|o| o.as_deployment().and_then(|d| d.spec.replicas));
        assert_eq!(d, Some(4));
    }

    #[test]
    fn a_trace_file_exports_imports_and_proves_the_replay() {
        let (original, log) = a_run();
        let file = TraceFile::of(&original, "default", &log);
        assert_eq!(file.trace_hash.len(), 16);
        assert!(!file.messages.is_empty());
        let json = file.to_json();
        assert!(json.contains("\"format\": \"kubeloop-trace/v1\"") && json.contains("\"traceHash\""), "{json}");
        let back = TraceFile::parse(&json).unwrap();
        assert_eq!((back.seed, back.at, &back.commands, &back.trace_hash), (4, file.at, &log, &file.trace_hash));
        let mut copy = Session::new(scenario(&back.scenario).unwrap(), Some(back.seed)).unwrap();
        replay(&mut copy, &back.commands, Some(back.at));
        assert_eq!(back.matches(&copy), Ok(()));
        let fresh = Session::new(scenario("default").unwrap(), Some(4)).unwrap();
        assert!(back.matches(&fresh).unwrap_err().starts_with("error: the replay differs from the trace file (trace hash "));
        assert!(TraceFile::parse("{}").unwrap_err().starts_with("error: this is not a kubeloop trace file: missing field"));
        assert_eq!(
            TraceFile::parse(&json.replace("kubeloop-trace/v1", "v0")),
            Err("error: unsupported trace format \"v0\"; this page reads kubeloop-trace/v1".into())
        );
    }

    #[test]
    fn copy_as_kubectl_keeps_kubectl_and_comments_out_sim_verbs() {
        let (_, log) = a_run();
        let text = as_kubectl("default", 4, &log);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0], "# kubeloop: scenario default, seed 4");
        assert_eq!(lines[1], "kubectl scale deployment web --replicas=5");
        assert!(lines[2].starts_with("kubectl delete pod web-"));
        assert_eq!(lines[3], "# sim node add node-3  (simulator only)");
    }
}
