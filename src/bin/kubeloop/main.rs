//! The native `kubeloop` command line: a thin shell over the library's command language.
//!
//! `kubeloop run SCENARIO` plays a scenario and prints the cluster's events the way
//! `kubectl get events --watch` shows them (or the message trace with `--trace`), then the final
//! state; `kubeloop shell [SCENARIO]` reads command lines from standard input and prints what
//! each prints, for scripts and tests; `kubeloop serve [SCENARIO]` serves the simulation's
//! Kubernetes API over HTTP for the real kubectl (`serve/`). No argument-parsing crate.

mod lesson;
mod operator_host;
#[cfg(not(target_arch = "wasm32"))]
mod serve;

// The command line is native, but `cargo test --target wasm32-unknown-unknown` (the page's browser
// tests) builds every binary of the package too, and the HTTP crates are native only: on wasm32,
// `serve` and `sim --server` are a stub that says so.
#[cfg(target_arch = "wasm32")]
mod serve {
    #[allow(dead_code)] // the native Config's fields, set by `serve` and read by nothing here
    pub struct Config {
        pub address: String,
        pub speed: f64,
        pub kubeconfig: Option<String>,
        pub www: Option<std::path::PathBuf>,
    }

    pub mod www {
        pub fn page_dir(_: Option<&str>) -> Result<Option<std::path::PathBuf>, String> {
            Ok(None)
        }
    }

    pub fn serve(_: kubeloop::command::Session, _: Config) -> Result<(), String> {
        Err("kubeloop serve runs natively only".into())
    }

    pub mod remote {
        pub fn default_server() -> String {
            String::new()
        }

        pub fn send(_: &str, _: &str) -> Result<String, String> {
            Err("kubeloop sim --server runs natively only".into())
        }
    }
}

use kubeloop::command::{self, CommandOutput, Scenario, Session};
use kubeloop::model::{Duration, Time};
use std::io::{BufRead, IsTerminal, Write};
use std::process::ExitCode;

// mimalloc spends far fewer instructions per allocation than the system allocator, and the
// simulation allocates for every message; native only (the page's wasm32 build keeps its own).
#[cfg(not(target_arch = "wasm32"))]
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

const USAGE: &str = "Usage:
  kubeloop run SCENARIO [--seed N] [--until DURATION] [--trace text|json] [--operator FILE]...
  kubeloop shell [SCENARIO] [--seed N] [--operator FILE]...
  kubeloop serve [SCENARIO] [--seed N] [--address HOST:PORT] [--speed X] [--kubeconfig PATH] [--operator FILE]... [--www DIR]
  kubeloop sim [--server URL] VERB...
  kubeloop lesson LESSON [--seed N] [--operator FILE]
  kubeloop scenarios
  kubeloop --help | --version

SCENARIO is a built-in name (see `kubeloop scenarios`) or the path of a scenario YAML file.

run    plays the scenario's timeline and prints the cluster's events as `kubectl get events
       --watch` does, then `kubectl get nodes`, `deployments` and `pods`. Without --until it runs
       until the timeline is done and the cluster has settled (at most 5m more). --trace prints
       every message between components instead: one line each (text) or one JSON object each.
shell  reads command lines (kubectl commands or sim verbs) from standard input and prints each
       one's output; errors go to standard error. The exit status is the last command's.
serve  runs the simulation against the wall clock (--speed 1 by default; 0 pauses it) and serves
       its Kubernetes API over HTTP at --address (127.0.0.1:6443 by default; port 0 picks a free
       one), for the real kubectl: `kubectl -s http://ADDRESS get pods`. --kubeconfig writes a
       kubeconfig whose context `kubeloop` points there. No authentication: another address than
       loopback is served with a warning. It also serves the page (--www DIR, default dist/ when
       there is one) at /kubeloop/?cluster=/: the stage attached to this cluster. Ctrl-C stops it.
--operator runs a Python operator written with kopf's decorators and the `kubernetes` client
       (python3 runs it; the scenario file's `operators:` list does the same) as the loop
       operator/NAME, NAME from the file's name: `sim stop operator/NAME` stops it.
lesson plays a built-in lesson (or a lesson file) in the terminal: its text, predictions read
       from standard input, its actions, simulated time moved on until its checks pass.
       --operator FILE is the operator a lesson's operator step runs (lesson 11: your
       website.py); without it, the lesson's finished one.
sim    sends a sim verb (advance 30s, stop kube-scheduler, speed 2, pause, resume …) to a running
       serve at --server (default $KUBELOOP_SERVER, else http://127.0.0.1:6443). Installed as
       kubectl-sim, it is the kubectl plugin `kubectl sim VERB...`.
";

/// The most simulated time `run` spends settling after the timeline when no --until is given.
const SETTLE_AFTER_TIMELINE: Duration = Duration::mins(5);

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    // Installed as `kubectl-sim`, kubectl runs it for `kubectl sim VERB…`.
    let invoked_as = std::env::args().next().unwrap_or_default();
    if std::path::Path::new(&invoked_as).file_name().is_some_and(|n| n == "kubectl-sim") {
        return remote_sim(&args);
    }
    match args.first().map(String::as_str) {
        None | Some("--help" | "-h" | "help") => {
            out(USAGE);
            ExitCode::SUCCESS
        }
        Some("--version" | "-V" | "version") => {
            out(&format!("kubeloop {}\n", kubeloop::VERSION));
            ExitCode::SUCCESS
        }
        Some("scenarios") => {
            for name in Scenario::builtin_names() {
                let description = Scenario::builtin(name).map(|s| s.description).unwrap_or_default();
                out(&format!("{name:<16} {description}\n"));
            }
            ExitCode::SUCCESS
        }
        Some("run") => with_usage(run(&args[1..])),
        Some("shell") => with_usage(shell(&args[1..])),
        Some("serve") => with_usage(serve(&args[1..])),
        Some("lesson") => with_usage(lesson::lesson(&args[1..])),
        Some("sim") => remote_sim(&args[1..]),
        Some(other) => usage_error(&format!("unknown command {other:?}")),
    }
}

fn with_usage(result: Result<ExitCode, String>) -> ExitCode {
    result.unwrap_or_else(|e| usage_error(&e))
}

fn usage_error(message: &str) -> ExitCode {
    err(&format!("error: {message}\n\n{USAGE}"));
    ExitCode::from(2)
}

/// Options after the subcommand: one optional positional and `--name value` / `--name=value`.
struct Options {
    scenario: Option<String>,
    seed: Option<u64>,
    until: Option<Duration>,
    trace: Option<String>,
    address: Option<String>,
    speed: Option<f64>,
    kubeconfig: Option<String>,
    operators: Vec<String>,
    www: Option<String>,
}

fn options(args: &[String], allowed: &[&str]) -> Result<Options, String> {
    let mut o = Options {
        scenario: None,
        seed: None,
        until: None,
        trace: None,
        address: None,
        speed: None,
        kubeconfig: None,
        operators: Vec::new(),
        www: None,
    };
    let mut i = 0;
    while i < args.len() {
        let arg = &args[i];
        i += 1;
        let Some(flag) = arg.strip_prefix("--") else {
            if o.scenario.is_some() {
                return Err(format!("unexpected argument {arg:?}"));
            }
            o.scenario = Some(arg.clone());
            continue;
        };
        let (name, value) = match flag.split_once('=') {
            Some((n, v)) => (n.to_string(), v.to_string()),
            None => {
                let v = args.get(i).cloned().ok_or(format!("flag --{flag} needs a value"))?;
                i += 1;
                (flag.to_string(), v)
            }
        };
        if !allowed.contains(&name.as_str()) {
            return Err(format!("unknown flag --{name}"));
        }
        match name.as_str() {
            "seed" => o.seed = Some(value.parse().map_err(|_| format!("invalid --seed {value:?}: must be a whole number"))?),
            "until" => o.until = Some(Duration::parse(&value)?),
            "trace" if value == "text" || value == "json" => o.trace = Some(value),
            "trace" => return Err(format!("invalid --trace {value:?}: must be text or json")),
            "address" => o.address = Some(value),
            "speed" => match value.parse::<f64>() {
                Ok(x) if x.is_finite() && x >= 0.0 => o.speed = Some(x),
                _ => return Err(format!("invalid --speed {value:?}: must be a number, 0 or more")),
            },
            "kubeconfig" => o.kubeconfig = Some(value),
            "operator" => o.operators.push(value),
            "www" => o.www = Some(value),
            _ => unreachable!("only allowed flags reach here"),
        }
    }
    Ok(o)
}

/// A built-in scenario by name, or a scenario file.
fn load_scenario(name: &str) -> Result<Scenario, String> {
    if let Some(s) = Scenario::builtin(name) {
        return Ok(s);
    }
    match std::fs::read_to_string(name) {
        Ok(text) => Scenario::parse(&text).map_err(|e| format!("{name}: {e}")),
        Err(_) => {
            Err(format!("unknown scenario {name:?}: not a built-in ({}) and not a readable file", Scenario::builtin_names().join(", ")))
        }
    }
}

fn new_session(scenario: Scenario, seed: Option<u64>) -> Result<Session, String> {
    let mut session = Session::new(scenario, seed)?;
    session.set_file_reader(|path| std::fs::read_to_string(path).map_err(|_| format!("error: the path {path:?} does not exist")));
    Ok(session)
}

/// Starts the scenario file's operators (paths relative to the file) and the command line's.
fn start_operators(session: &mut Session, scenario_path: Option<&str>, from_scenario: &[String], flags: &[String]) -> Result<(), String> {
    let dir = scenario_path.and_then(|p| std::path::Path::new(p).parent().map(std::path::Path::to_path_buf)).unwrap_or_default();
    let scenario_files = from_scenario.iter().map(|f| dir.join(f).to_string_lossy().into_owned());
    for path in scenario_files.chain(flags.iter().cloned()) {
        operator_host::add(session, &path)?;
    }
    Ok(())
}

/// The scenario's file path when SCENARIO names a file rather than a built-in.
fn scenario_file(name: &str) -> Option<&str> {
    Scenario::builtin(name).is_none().then_some(name)
}

/// Writes to stdout; a closed pipe (`kubeloop run x | head`) ends the program quietly instead
/// of panicking as `print!` would.
fn out(text: &str) {
    let mut stdout = std::io::stdout().lock();
    if stdout.write_all(text.as_bytes()).and_then(|()| stdout.flush()).is_err() {
        std::process::exit(0);
    }
}

fn err(text: &str) {
    let _ = std::io::stderr().lock().write_all(text.as_bytes());
}

fn print_output(output: &CommandOutput) {
    out(&output.stdout);
    err(&output.stderr);
}

fn run(args: &[String]) -> Result<ExitCode, String> {
    let o = options(args, &["seed", "until", "trace", "operator"])?;
    let name = o.scenario.ok_or("run needs a SCENARIO")?;
    let scenario = load_scenario(&name)?;
    let operators = scenario.operators.clone();
    let mut session = new_session(scenario, o.seed)?;
    if let Err(e) = start_operators(&mut session, scenario_file(&name), &operators, &o.operators) {
        // The file's own error (its traceback), not the usage: the command line was right.
        err(&format!("error: {e}\n"));
        return Ok(ExitCode::FAILURE);
    }
    let json = o.trace.as_deref() == Some("json");
    let tracing = o.trace.is_some();
    if tracing {
        session.sim_mut().set_trace_capacity(1 << 20);
    } else {
        let initial = session.execute("kubectl get events --watch");
        print_output(&initial);
    }
    let mut last_seq = 0;
    let mut flush = |session: &mut Session| {
        let stream = session.take_stream();
        if json {
            // Timeline commands and their output stay off stdout, which carries only JSON.
            err(&stream.stdout);
            err(&stream.stderr);
        } else {
            print_output(&stream);
        }
        if tracing {
            let trace = session.sim().trace();
            let mut text = String::new();
            for m in trace.since(last_seq) {
                if json {
                    let line = serde_json::json!({
                        "seq": m.seq, "sentMs": m.sent.0, "arrivesMs": m.arrives.0, "from": m.from, "to": m.to,
                        "kind": m.kind, "what": m.what, "object": m.object,
                    });
                    text.push_str(&line.to_string());
                    text.push('\n');
                } else {
                    let sent = command::sim_verbs::format_sim_time(Duration(m.sent.0));
                    text.push_str(&format!("{sent:>10}  {} -> {}  {}\n", m.from, m.to, m.what));
                }
                last_seq = m.seq;
            }
            out(&text);
        }
    };
    match o.until {
        Some(until) => drive(&mut session, Time(until.0), &mut flush),
        None => {
            while let Some(at) = session.next_timeline_at() {
                let until = at.max(session.sim().now());
                drive(&mut session, until, &mut flush);
            }
            let deadline = session.sim().now() + SETTLE_AFTER_TIMELINE;
            while !session.sim().is_settled() && session.sim().now() < deadline {
                let step_to = session.sim().next_time().unwrap_or(deadline).min(deadline);
                drive(&mut session, step_to, &mut flush);
            }
        }
    }
    flush(&mut session);
    session.stop_watches();
    if !json {
        for line in ["kubectl get nodes", "kubectl get deployments", "kubectl get pods"] {
            out(&format!("\n$ {line}\n"));
            print_output(&session.execute(line));
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// Advances to `until` one simulated instant at a time, printing as it goes.
fn drive(session: &mut Session, until: Time, flush: &mut impl FnMut(&mut Session)) {
    loop {
        let next = session.sim().next_time().filter(|t| *t <= until);
        let target = next.unwrap_or(until);
        session.advance_to(target);
        flush(session);
        if next.is_none() || session.sim().now() >= until {
            break;
        }
    }
}

/// `sim [--server URL] VERB…`: the verb to a running `kubeloop serve`.
fn remote_sim(args: &[String]) -> ExitCode {
    let (server, words) = match args {
        [flag, url, rest @ ..] if flag == "--server" => (url.clone(), rest),
        [flag, rest @ ..] if flag.starts_with("--server=") => (flag["--server=".len()..].to_string(), rest),
        rest => (serve::remote::default_server(), rest),
    };
    if words.is_empty() {
        return usage_error("sim needs a VERB (see `sim help` in `kubeloop shell`)");
    }
    match serve::remote::send(&server, &words.join(" ")) {
        Ok(text) => {
            out(&text);
            ExitCode::SUCCESS
        }
        Err(text) => {
            err(&text);
            if !text.ends_with('\n') {
                err("\n");
            }
            ExitCode::FAILURE
        }
    }
}

fn serve(args: &[String]) -> Result<ExitCode, String> {
    let o = options(args, &["seed", "address", "speed", "kubeconfig", "operator", "www"])?;
    let scenario = match &o.scenario {
        Some(name) => load_scenario(name)?,
        None => Scenario::builtin("default").ok_or("the default scenario is missing")?,
    };
    let operators = scenario.operators.clone();
    let mut session = new_session(scenario, o.seed)?;
    if let Err(e) = start_operators(&mut session, o.scenario.as_deref().and_then(scenario_file), &operators, &o.operators) {
        err(&format!("error: {e}\n"));
        return Ok(ExitCode::FAILURE);
    }
    let config = serve::Config {
        address: o.address.unwrap_or_else(|| "127.0.0.1:6443".into()),
        speed: o.speed.unwrap_or(1.0),
        kubeconfig: o.kubeconfig,
        www: serve::www::page_dir(o.www.as_deref())?,
    };
    serve::serve(session, config)?;
    Ok(ExitCode::SUCCESS)
}

fn shell(args: &[String]) -> Result<ExitCode, String> {
    let o = options(args, &["seed", "operator"])?;
    let scenario = match &o.scenario {
        Some(name) => load_scenario(name)?,
        None => Scenario::builtin("default").ok_or("the default scenario is missing")?,
    };
    let operators = scenario.operators.clone();
    let mut session = new_session(scenario, o.seed)?;
    if let Err(e) = start_operators(&mut session, o.scenario.as_deref().and_then(scenario_file), &operators, &o.operators) {
        err(&format!("error: {e}\n"));
        return Ok(ExitCode::FAILURE);
    }
    let interactive = std::io::stdin().is_terminal();
    let mut status = ExitCode::SUCCESS;
    let mut buffer = String::new();
    let stdin = std::io::stdin();
    let mut lines = stdin.lock().lines();
    loop {
        if interactive {
            err(if buffer.is_empty() { "$ " } else { "> " });
        }
        let Some(Ok(line)) = lines.next() else { break };
        if !buffer.is_empty() {
            buffer.push('\n');
        }
        buffer.push_str(&line);
        if command::parse::needs_more_lines(&buffer) {
            continue;
        }
        let out = session.execute(&buffer);
        buffer.clear();
        print_output(&out);
        print_output(&session.take_stream());
        status = if out.ok { ExitCode::SUCCESS } else { ExitCode::FAILURE };
    }
    if !buffer.is_empty() {
        let out = session.execute(&buffer);
        print_output(&out);
        print_output(&session.take_stream());
        status = if out.ok { ExitCode::SUCCESS } else { ExitCode::FAILURE };
    }
    Ok(status)
}
