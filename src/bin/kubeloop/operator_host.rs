//! The native interpreter for operators: the machine's `python3` as a subprocess speaking the
//! operator protocol (`kubeloop::operator`, JSON lines on its stdin and stdout).
//!
//! The runtime (kopf's and the `kubernetes` client's shapes) travels from the binary in the
//! first message, so nothing outside the repository is installed or read but the learner's
//! file. The interpreter runs with `PYTHONHASHSEED=0`, so set and dict-of-set orders do not
//! change from run to run; time and randomness inside handlers come from the simulation.
// The wasm32 build of the command line (for the browser tests) adds no operator.
#![cfg_attr(target_arch = "wasm32", allow(dead_code))]

use kubeloop::operator::{Interpreter, PYTHON_HOST, PYTHON_HOST_PAGE, PYTHON_MODULES};
use serde_json::{json, Value};
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};

/// The Python to run: `$KUBELOOP_PYTHON`, else `python3` on the PATH.
fn python() -> String {
    std::env::var("KUBELOOP_PYTHON").ok().filter(|p| !p.is_empty()).unwrap_or_else(|| "python3".into())
}

pub struct PythonInterpreter {
    path: String,
    source: String,
    process: Option<(Child, ChildStdin, BufReader<ChildStdout>)>,
    /// Runs the page's replaying host (`host_page.py`) instead of `host.py`: for the tests that
    /// hold the page's way of suspending a handler to the native one.
    replaying: bool,
}

impl PythonInterpreter {
    /// An interpreter for the operator in `path` (read now: a missing file is an error here).
    pub fn for_file(path: &str) -> Result<Self, String> {
        let source = std::fs::read_to_string(path).map_err(|e| format!("--operator {path}: {e}"))?;
        Ok(PythonInterpreter { path: path.to_string(), source, process: None, replaying: false })
    }

    /// The same, running the page's host: each handler call replayed from its start as its
    /// answers arrive, instead of waiting inside a request. Only tests/operators.rs (which
    /// includes this file) runs it, to hold the page's host to the native one.
    #[allow(dead_code)]
    pub fn replaying_for_file(path: &str) -> Result<Self, String> {
        let mut interpreter = Self::for_file(path)?;
        interpreter.replaying = true;
        Ok(interpreter)
    }

    /// An interpreter for an operator's source text (a lesson's), named `path` in its errors.
    pub fn for_source(path: &str, source: &str) -> Self {
        PythonInterpreter { path: path.to_string(), source: source.to_string(), process: None, replaying: false }
    }

    fn stop(&mut self) {
        if let Some((mut child, stdin, _)) = self.process.take() {
            drop(stdin);
            // Our own child, by its handle: a handler stuck in a loop does not read its stdin.
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    fn spawn(&mut self) -> Result<(), String> {
        let python = python();
        let mut child = Command::new(&python)
            .args(["-u", "-c", if self.replaying { PYTHON_HOST_PAGE } else { PYTHON_HOST }])
            .env("PYTHONHASHSEED", "0")
            .env("PYTHONDONTWRITEBYTECODE", "1")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .map_err(|e| match e.kind() {
                std::io::ErrorKind::NotFound => format!(
                    "--operator {} needs Python 3 to run it, and {python:?} was not found on the PATH (install python3, or set KUBELOOP_PYTHON)",
                    self.path
                ),
                _ => format!("--operator {}: could not start {python:?}: {e}", self.path),
            })?;
        let stdin = child.stdin.take().ok_or("python3's stdin is not piped")?;
        let stdout = BufReader::new(child.stdout.take().ok_or("python3's stdout is not piped")?);
        self.process = Some((child, stdin, stdout));
        Ok(())
    }

    fn send(&mut self, message: &Value) -> Result<Value, String> {
        let path = self.path.clone();
        let Some((child, stdin, stdout)) = self.process.as_mut() else {
            return Err(format!("operator {path}: python3 is not running"));
        };
        let mut line = message.to_string();
        line.push('\n');
        let gone = |child: &mut Child| match child.try_wait() {
            Ok(Some(status)) => format!("operator {path}: python3 exited ({status})"),
            _ => format!("operator {path}: python3 stopped answering"),
        };
        if stdin.write_all(line.as_bytes()).and_then(|()| stdin.flush()).is_err() {
            return Err(gone(child));
        }
        let mut reply = String::new();
        match stdout.read_line(&mut reply) {
            Ok(n) if n > 0 => {
                serde_json::from_str(&reply).map_err(|e| format!("operator {path}: unreadable reply from python3 ({e}): {reply}"))
            }
            _ => Err(gone(child)),
        }
    }
}

impl Interpreter for PythonInterpreter {
    fn load(&mut self) -> Result<Value, String> {
        self.stop();
        self.spawn()?;
        let modules: serde_json::Map<String, Value> = PYTHON_MODULES.iter().map(|(n, s)| (n.to_string(), Value::from(*s))).collect();
        let reply = self.send(&json!({"op": "load", "modules": modules, "path": self.path, "source": self.source, "host": PYTHON_HOST}))?;
        if reply.get("op").and_then(Value::as_str) == Some("failed") {
            self.stop();
        }
        Ok(reply)
    }

    fn exchange(&mut self, message: &Value) -> Result<Value, String> {
        self.send(message)
    }
}

impl Drop for PythonInterpreter {
    fn drop(&mut self) {
        self.stop();
    }
}

/// The operator's name from its file: `label_pods.py` runs as `operator/label-pods`.
pub fn name_for(path: &str) -> String {
    let stem = std::path::Path::new(path).file_stem().and_then(|s| s.to_str()).unwrap_or("operator");
    let name: String = stem.chars().map(|c| if c.is_ascii_alphanumeric() { c.to_ascii_lowercase() } else { '-' }).collect();
    let name = name.trim_matches('-').to_string();
    if name.is_empty() {
        "operator".into()
    } else {
        name
    }
}

/// Starts the operator in `path` in the session's simulation (natively: wasm32 builds of the
/// command line, for the browser tests, have no processes to run). A file that does not load is
/// an error that names it, and nothing is added.
#[cfg(not(target_arch = "wasm32"))]
pub fn add(session: &mut kubeloop::command::Session, path: &str) -> Result<String, String> {
    let interpreter = PythonInterpreter::for_file(path)?;
    let name = name_for(path);
    session.sim_mut().add_operator(&name, Box::new(interpreter)).map_err(|e| {
        if e.starts_with("--operator") || e.starts_with("operator ") {
            e
        } else {
            format!("--operator {path}: {e}")
        }
    })?;
    Ok(name)
}

#[cfg(target_arch = "wasm32")]
pub fn add(_: &mut kubeloop::command::Session, path: &str) -> Result<String, String> {
    Err(format!("--operator {path}: operators run natively only"))
}
