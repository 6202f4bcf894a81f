//! The `sim` verbs: what a person does to the simulation rather than to the cluster.
//!
//! `sim advance`, `sim settle`, `sim time`, `sim status`, `sim node add`, `sim seed`, and the
//! faults: `sim stop|start|restart COMPONENT`, `sim node fail|partition|recover NODE`,
//! `sim watch drop|delay|sever`, `sim etcd snapshot|restore|wipe`, `sim crash POD`,
//! `sim fail-probe|pass-probe POD KIND`, `sim traffic` / `sim rules` (in `sim_traffic`) and
//! `sim load` (in `sim_load`). Each verb is
//! one arm of the match in [`run`]; the faults themselves live in `crate::sim::faults`, and this
//! module only parses, checks and reports. Every error changes nothing.

use super::kubectl::flags;
use super::parse::{FlagKind, FlagSpec};
use super::table::render_table;
use super::{CommandOutput, Session};
use crate::kubelet::prober::ProbeType;
use crate::model::{human_duration, Duration, Quantity, QUANTITY_FORMAT_ERROR};
use crate::sim::{ComponentId, NodeConfig, NodeFault, CONTROLLER_PREFIX};

/// The verbs `sim` knows, as listed in its errors and help.
pub const VERBS: &[&str] = &[
    "advance",
    "crash",
    "etcd",
    "fail-probe",
    "help",
    "load",
    "mode",
    "node",
    "pass-probe",
    "restart",
    "rules",
    "seed",
    "settle",
    "start",
    "status",
    "stop",
    "time",
    "traffic",
    "watch",
];

/// How long `sim settle` runs at most when no limit is given.
pub const DEFAULT_SETTLE_LIMIT: Duration = Duration::mins(5);

pub fn run(session: &mut Session, args: &[String]) -> CommandOutput {
    let Some(verb) = args.first() else {
        return CommandOutput::out(help());
    };
    let rest = &args[1..];
    match verb.as_str() {
        "advance" => advance(session, rest),
        "settle" => settle(session, rest),
        "time" => no_args("time", rest).unwrap_or_else(|| time(session)),
        "status" => no_args("status", rest).unwrap_or_else(|| status(session)),
        "node" => node(session, rest),
        "seed" => seed(session, rest),
        "stop" | "start" | "restart" => lifecycle(session, verb, rest),
        "watch" => watch(session, rest),
        "etcd" => etcd(session, rest),
        "crash" => crash(session, rest),
        "fail-probe" | "pass-probe" => probe_fault(session, verb, rest),
        "mode" => super::sim_mode::run(session, rest),
        "traffic" => super::sim_traffic::traffic(session, rest),
        "rules" => super::sim_traffic::rules(session, rest),
        "load" => super::sim_load::load(session, rest),
        "help" | "--help" | "-h" => CommandOutput::out(help()),
        other => CommandOutput::err(format!("error: unknown sim command {other:?}\nKnown sim commands: {}", VERBS.join(", "))),
    }
}

fn help() -> String {
    super::help_text().split("sim:\n").nth(1).map(|s| format!("sim:\n{s}")).unwrap_or_default()
}

fn no_args(verb: &str, rest: &[String]) -> Option<CommandOutput> {
    (!rest.is_empty()).then(|| CommandOutput::err(format!("error: sim {verb} takes no arguments, got {:?}", rest.join(" "))))
}

/// Simulated time as people read it: `500ms`, `45s`, `1m30.25s`, `2h5m`.
pub fn format_sim_time(d: Duration) -> String {
    let ms = d.0;
    if ms < 1000 {
        return format!("{ms}ms");
    }
    let (h, m, s, frac) = (ms / 3_600_000, ms / 60_000 % 60, ms / 1000 % 60, ms % 1000);
    let mut out = String::new();
    if h > 0 {
        out.push_str(&format!("{h}h"));
    }
    if m > 0 {
        out.push_str(&format!("{m}m"));
    }
    if s > 0 || frac > 0 {
        if frac > 0 {
            let f = format!("{frac:03}");
            out.push_str(&format!("{s}.{}s", f.trim_end_matches('0')));
        } else {
            out.push_str(&format!("{s}s"));
        }
    }
    out
}

fn one_duration(verb: &str, rest: &[String], default: Option<Duration>) -> Result<Duration, CommandOutput> {
    match (rest, default) {
        ([], Some(d)) => Ok(d),
        ([], None) => Err(CommandOutput::err(format!("error: sim {verb} needs a duration, like 500ms, 30s or 5m"))),
        ([text], _) => Duration::parse(text).map_err(|e| CommandOutput::err(format!("error: {e}"))),
        _ => Err(CommandOutput::err(format!("error: sim {verb} takes one duration, got {:?}", rest.join(" ")))),
    }
}

fn advance(session: &mut Session, rest: &[String]) -> CommandOutput {
    let d = match one_duration("advance", rest, None) {
        Ok(d) => d,
        Err(e) => return e,
    };
    session.advance(d);
    CommandOutput::out(format!("advanced {} to {}", format_sim_time(d), format_sim_time(Duration(session.sim().now().0))))
}

fn settle(session: &mut Session, rest: &[String]) -> CommandOutput {
    let limit = match one_duration("settle", rest, Some(DEFAULT_SETTLE_LIMIT)) {
        Ok(d) => d,
        Err(e) => return e,
    };
    let now = |s: &Session| format_sim_time(Duration(s.sim().now().0));
    match session.settle(limit) {
        Ok(took) => CommandOutput::out(format!("settled after {} (time {})", format_sim_time(took), now(session))),
        Err(limit) => {
            // Like a timed-out `rollout status`: what happened on stdout, then the failure.
            let mut out = CommandOutput::out(format!("not settled after {} (time {})", format_sim_time(limit), now(session)));
            out.fail("error: timed out waiting for every loop to go idle; see sim status");
            out
        }
    }
}

fn time(session: &Session) -> CommandOutput {
    let now = session.sim().now();
    CommandOutput::out(format!("{} ({})", format_sim_time(Duration(now.0)), now.rfc3339_micro()))
}

fn status(session: &Session) -> CommandOutput {
    let sim = session.sim();
    let now = sim.now();
    let mut rows = Vec::new();
    let state_of = |id: &ComponentId| if sim.is_running(id) { "Running" } else { "Stopped" };
    if !sim.has_component(&ComponentId::ApiServer) {
        rows.push(vec!["kube-apiserver".into(), state_of(&ComponentId::ApiServer).into(), "-".into(), "0".into(), "<none>".into()]);
    }
    if !sim.has_component(&ComponentId::Etcd) {
        let api = sim.api();
        rows.push(vec![
            "etcd".into(),
            state_of(&ComponentId::Etcd).into(),
            "-".into(),
            "0".into(),
            format!("revision {}, {} keys", api.revision(), api.key_count()),
        ]);
    }
    for id in sim.component_ids() {
        let state = if sim.is_running(id) { "Running" } else { "Stopped" };
        let loops = sim.loops(id);
        if loops.is_empty() {
            rows.push(vec![id.to_string(), state.into(), "-".into(), "0".into(), "<none>".into()]);
        }
        for l in &loops {
            let name = if loops.len() > 1 { format!("{id}/{}", l.name) } else { id.to_string() };
            let phase = serde_json::to_value(l.phase).ok().and_then(|v| v.as_str().map(str::to_string)).unwrap_or_default();
            let last = match (&l.last_action, l.last_action_at) {
                (a, _) if a.is_empty() => "<none>".to_string(),
                (a, Some(t)) => format!("{} ago: {a}", human_duration(now.since(t))),
                (a, None) => a.clone(),
            };
            // A loop switched off inside a running process is stopped on its own.
            let state = if l.stopped { "Stopped" } else { state };
            rows.push(vec![name, state.into(), phase, l.queue_depth.to_string(), last]);
        }
    }
    let mut text = render_table(&["COMPONENT", "STATE", "PHASE", "QUEUE", "LAST-ACTION"], &rows, true);
    let faults = fault_lines(sim);
    if !faults.is_empty() {
        text.push_str("\nFaults:\n");
        for line in faults {
            text.push_str(&format!("  {line}\n"));
        }
    }
    CommandOutput::out(text)
}

/// The faults in force, one line each, for `sim status`.
fn fault_lines(sim: &crate::sim::Sim) -> Vec<String> {
    let mut lines = Vec::new();
    for (node, fault) in sim.node_faults() {
        lines.push(format!("node/{node} {}", fault.as_str()));
    }
    for (target, f) in sim.watch_faults() {
        let who = target.as_ref().map(ToString::to_string).unwrap_or_else(|| "every component".into());
        if f.drop_percent > 0 {
            lines.push(format!("watch events to {who}: {}% dropped", f.drop_percent));
        }
        if f.delay > Duration::ZERO {
            lines.push(format!("watch events to {who}: delayed {}", format_sim_time(f.delay)));
        }
    }
    for (node, pod, plan) in sim.injected_crashes() {
        lines.push(format!(
            "pod/{} on {node}: exits with code {} {} after each start",
            pod.name,
            plan.exit_code,
            format_sim_time(plan.after)
        ));
    }
    if sim.watch_events_dropped() > 0 {
        lines.push(format!("watch events dropped so far: {}", sim.watch_events_dropped()));
    }
    if let Some(s) = sim.etcd_snapshot() {
        lines.push(format!("etcd snapshot kept: revision {}, {} keys", s.revision, s.len()));
    }
    lines
}

fn one_name<'a>(usage: &str, rest: &'a [String]) -> Result<&'a str, CommandOutput> {
    match rest {
        [name] => Ok(name),
        [] => Err(CommandOutput::err(format!("error: {usage}"))),
        _ => Err(CommandOutput::err(format!("error: {usage}, got {:?}", rest.join(" ")))),
    }
}

/// `sim stop|start|restart COMPONENT`.
fn lifecycle(session: &mut Session, verb: &str, rest: &[String]) -> CommandOutput {
    let usage = format!(
        "sim {verb} takes one component: kube-apiserver, etcd, kube-controller-manager, kube-controller-manager/CONTROLLER, kube-scheduler, kubelet-NODE, kube-proxy-NODE or operator/NAME"
    );
    let name = match one_name(&usage, rest) {
        Ok(n) => n,
        Err(e) => return e,
    };
    let sim = session.sim_mut();
    if name.starts_with(CONTROLLER_PREFIX) {
        return match sim.switch_controller(name, verb) {
            Ok(qualified) => CommandOutput::out(format!("{qualified} {verb}{}", if verb == "stop" { "ped" } else { "ed" })),
            Err(e) => CommandOutput::err(format!("error: {e}")),
        };
    }
    let (result, done) = match verb {
        "stop" => (sim.stop(name), "stopped"),
        "start" => (sim.start(name), "started"),
        _ => (sim.restart(name), "restarted"),
    };
    match result {
        Ok(id) => CommandOutput::out(format!("{id} {done}")),
        Err(e) => CommandOutput::err(format!("error: {e}")),
    }
}

/// `sim node fail|partition|recover NODE`.
fn node_fault(session: &mut Session, verb: &str, rest: &[String]) -> CommandOutput {
    let name = match one_name(&format!("sim node {verb} takes one node name"), rest) {
        Ok(n) => n,
        Err(e) => return e,
    };
    let sim = session.sim_mut();
    let result = match verb {
        "fail" => sim.node_fail(name).map(|()| format!("node/{name} powered off")),
        "partition" => sim.node_partition(name).map(|()| format!("node/{name} partitioned from kube-apiserver")),
        _ => sim.node_recover(name).map(|fault| match fault {
            NodeFault::PoweredOff => format!("node/{name} powered on"),
            NodeFault::Partitioned => format!("node/{name} reconnected"),
        }),
    };
    match result {
        Ok(text) => CommandOutput::out(text),
        Err(e) if e.ends_with("not found") => CommandOutput::err(format!("Error from server (NotFound): {e}")),
        Err(e) => CommandOutput::err(format!("error: {e}")),
    }
}

const WATCH_USAGE: &str = "sim watch needs a command: drop PERCENT [COMPONENT], delay DURATION [COMPONENT] or sever [COMPONENT]";

/// `sim watch drop PERCENT [COMPONENT]`, `sim watch delay DURATION [COMPONENT]`, `sim watch sever [COMPONENT]`.
fn watch(session: &mut Session, rest: &[String]) -> CommandOutput {
    let (verb, args) = match rest.split_first() {
        Some((v, a)) => (v.as_str(), a),
        None => return CommandOutput::err(format!("error: {WATCH_USAGE}")),
    };
    let (value, target) = match (verb, args) {
        ("sever", t) if t.len() <= 1 => (None, t.first()),
        ("drop" | "delay", [v]) => (Some(v), None),
        ("drop" | "delay", [v, t]) => (Some(v), Some(t)),
        ("drop" | "delay" | "sever", _) => {
            return CommandOutput::err(format!("error: {WATCH_USAGE}, got {:?}", rest.join(" ")));
        }
        (other, _) => {
            return CommandOutput::err(format!("error: unknown sim watch command {other:?}\nKnown sim watch commands: delay, drop, sever"));
        }
    };
    let sim = session.sim_mut();
    let target = match target.map(|t| sim.watch_client(t)).transpose() {
        Ok(t) => t,
        Err(e) => return CommandOutput::err(format!("error: {e}")),
    };
    let who = target.as_ref().map(ToString::to_string).unwrap_or_else(|| "every component".into());
    match (verb, value) {
        ("drop", Some(v)) => match parse_percent(v) {
            Ok(p) => {
                sim.set_watch_drop(target, p);
                match p {
                    0 => CommandOutput::out(format!("watch events to {who}: no longer dropped")),
                    p => CommandOutput::out(format!("watch events to {who}: {p}% dropped")),
                }
            }
            Err(e) => e,
        },
        ("delay", Some(v)) => match Duration::parse(v) {
            Ok(d) => {
                sim.set_watch_delay(target, d);
                match d {
                    Duration::ZERO => CommandOutput::out(format!("watch events to {who}: no longer delayed")),
                    d => CommandOutput::out(format!("watch events to {who}: delayed {}", format_sim_time(d))),
                }
            }
            Err(e) => CommandOutput::err(format!("error: {e}")),
        },
        _ => {
            let n = sim.sever_watches_to_relist(target.as_ref());
            let plural = if n == 1 { "" } else { "es" };
            CommandOutput::out(format!("severed {n} watch{plural} of {who}; each client re-lists"))
        }
    }
}

/// `30`, `30%`: a whole number of percent from 0 to 100.
fn parse_percent(text: &str) -> Result<u32, CommandOutput> {
    text.strip_suffix('%')
        .unwrap_or(text)
        .parse::<u32>()
        .ok()
        .filter(|p| *p <= 100)
        .ok_or_else(|| CommandOutput::err(format!("error: invalid percentage {text:?}: must be a whole number from 0 to 100")))
}

/// `sim etcd snapshot|restore|wipe`.
fn etcd(session: &mut Session, rest: &[String]) -> CommandOutput {
    let verb = match rest {
        [v] => v.as_str(),
        _ => return CommandOutput::err("error: sim etcd needs one command: snapshot, restore or wipe"),
    };
    let sim = session.sim_mut();
    match verb {
        "snapshot" => {
            let s = sim.etcd_snapshot_save();
            CommandOutput::out(format!("snapshot saved at revision {} ({} keys)", s.revision, s.len()))
        }
        "restore" => match sim.etcd_restore() {
            Ok(from) => CommandOutput::out(format!(
                "etcd restored from the snapshot of revision {from} ({} keys); revision is now {}",
                sim.api().key_count(),
                sim.api().revision()
            )),
            Err(e) => CommandOutput::err(format!("error: {e}")),
        },
        "wipe" => {
            let lost = sim.etcd_wipe();
            CommandOutput::out(format!("etcd wiped: {lost} keys lost; revision is now {}", sim.api().revision()))
        }
        other => CommandOutput::err(format!("error: unknown sim etcd command {other:?}\nKnown sim etcd commands: restore, snapshot, wipe")),
    }
}

const CRASH_FLAGS: &[FlagSpec] = &[FlagSpec::new("after", None, FlagKind::String), FlagSpec::new("code", None, FlagKind::Int(32))];

/// `sim crash POD [--after DURATION] [--code N] [-n NAMESPACE]`.
fn crash(session: &mut Session, args: &[String]) -> CommandOutput {
    let (positional, f) = match flags("sim crash", args, CRASH_FLAGS) {
        Ok(v) => v,
        Err(e) => return CommandOutput::err(e.stderr.replace("See 'kubectl sim crash --help' for usage.\n", "")),
    };
    let [name] = &positional[..] else {
        return CommandOutput::err(format!("error: sim crash takes exactly one POD, got {}", positional.len()));
    };
    let after = match f.str("after").map(|v| (v, Duration::parse(v))) {
        None => Duration::ZERO,
        Some((_, Ok(d))) => d,
        Some((v, Err(e))) => return CommandOutput::err(format!("error: invalid argument {v:?} for \"--after\" flag: {e}")),
    };
    let code = f.int("code").unwrap_or(1);
    if !(0..=255).contains(&code) {
        return CommandOutput::err(format!("error: invalid argument \"{code}\" for \"--code\" flag: an exit code is from 0 to 255"));
    }
    let ns = super::kubectl::namespace(&f);
    let key = crate::model::ObjectKey::new(crate::model::Kind::Pod, &ns, name);
    match session.sim_mut().crash_pod(&key, after, code as i32) {
        Ok(node) => CommandOutput::out(format!(
            "pod/{name} on {node}: its containers will exit with code {code} {} after each start",
            format_sim_time(after)
        )),
        Err(e) => CommandOutput::err(e),
    }
}

/// `sim fail-probe POD KIND` and `sim pass-probe POD KIND`: the pod's application fails its
/// probes of that kind from the next one on, or passes them again.
fn probe_fault(session: &mut Session, verb: &str, args: &[String]) -> CommandOutput {
    let (positional, f) = match flags(&format!("sim {verb}"), args, &[]) {
        Ok(v) => v,
        Err(e) => return CommandOutput::err(e.stderr.replace(&format!("See 'kubectl sim {verb} --help' for usage.\n"), "")),
    };
    let [name, kind] = &positional[..] else {
        return CommandOutput::err(format!(
            "error: sim {verb} takes a POD and a probe kind (liveness, readiness or startup): sim {verb} POD readiness"
        ));
    };
    let Some(probe) = ProbeType::parse(kind) else {
        return CommandOutput::err(format!("error: unknown probe kind {kind:?}: expected liveness, readiness or startup"));
    };
    let ns = super::kubectl::namespace(&f);
    let key = crate::model::ObjectKey::new(crate::model::Kind::Pod, &ns, name);
    let failing = verb == "fail-probe";
    match session.sim_mut().set_probe_fault(&key, probe, failing) {
        Ok(node) => {
            let what = if failing { "fails" } else { "passes" };
            CommandOutput::out(format!(
                "pod/{name} on {node}: its application {what} its {} probes from the next one on",
                kind.to_ascii_lowercase()
            ))
        }
        Err(e) => CommandOutput::err(e),
    }
}

const NODE_ADD_FLAGS: &[FlagSpec] = &[
    FlagSpec::new("cpu", None, FlagKind::String),
    FlagSpec::new("memory", None, FlagKind::String),
    FlagSpec::new("pods", None, FlagKind::Int(32)),
    FlagSpec::new("zone", None, FlagKind::String),
];

fn node(session: &mut Session, rest: &[String]) -> CommandOutput {
    match rest.first().map(String::as_str) {
        Some("add") => node_add(session, &rest[1..]),
        Some(verb @ ("fail" | "partition" | "recover")) => node_fault(session, verb, &rest[1..]),
        Some(other) => {
            CommandOutput::err(format!("error: unknown sim node command {other:?}\nKnown sim node commands: add, fail, partition, recover"))
        }
        None => CommandOutput::err("error: sim node needs a command: sim node add NAME [--cpu 4] [--memory 8Gi] [--pods 110] [--zone Z]"),
    }
}

fn node_add(session: &mut Session, args: &[String]) -> CommandOutput {
    let (positional, f) = match flags("sim node add", args, NODE_ADD_FLAGS) {
        Ok(v) => v,
        Err(e) => return CommandOutput::err(e.stderr.replace("See 'kubectl sim node add --help' for usage.\n", "")),
    };
    let [name] = &positional[..] else {
        return CommandOutput::err(format!("error: sim node add takes exactly one NAME, got {}", positional.len()));
    };
    if !crate::api::validation::is_dns1123_subdomain(name) {
        return CommandOutput::err(format!(
            "error: invalid node name {name:?}: {}",
            crate::api::validation::subdomain_error("metadata.name", name).detail
        ));
    }
    let mut config = NodeConfig::new(name);
    for (flag, slot) in [("cpu", &mut config.cpu), ("memory", &mut config.memory)] {
        if let Some(v) = f.str(flag) {
            if !Quantity::new(v).is_valid() || Quantity::new(v).milli_value().is_some_and(|m| m <= 0) {
                return CommandOutput::err(format!("error: invalid argument {v:?} for \"--{flag}\" flag: {QUANTITY_FORMAT_ERROR}"));
            }
            *slot = v.to_string();
        }
    }
    if let Some(p) = f.int("pods") {
        if p <= 0 {
            return CommandOutput::err(format!("error: invalid argument \"{p}\" for \"--pods\" flag: must be a positive number of pods"));
        }
        config.pods = p;
    }
    if let Some(z) = f.str("zone") {
        config.zone = z.to_string();
    }
    match session.sim_mut().add_node(config) {
        Ok(()) => CommandOutput::out(format!("node/{name} added")),
        Err(e) => CommandOutput::err(format!("error: {e}")),
    }
}

fn seed(session: &mut Session, rest: &[String]) -> CommandOutput {
    let [text] = rest else {
        return CommandOutput::err("error: sim seed takes one number, like sim seed 42");
    };
    let Ok(seed) = text.parse::<u64>() else {
        return CommandOutput::err(format!("error: invalid seed {text:?}: must be a whole number from 0 to 18446744073709551615"));
    };
    match session.reseed(seed) {
        Ok(name) => CommandOutput::out(format!("scenario {name:?} restarted with seed {seed}")),
        Err(e) => CommandOutput::err(e),
    }
}

/// kubectl commands that never reach the server (or reach only its discovery endpoints, which
/// work without etcd).
const CLIENT_ONLY: &[&str] = &["completion", "config", "help", "kustomize", "options", "plugin"];

/// What kubectl prints when the control plane cannot serve `args` (a kubectl line without the
/// word `kubectl`): kube-apiserver stopped refuses the connection; etcd stopped makes every
/// request that needs it fail with etcd's timeout. None when the command can run.
pub(crate) fn refused_kubectl(sim: &crate::sim::Sim, args: &[String]) -> Option<CommandOutput> {
    let error = sim.control_plane_refusal()?;
    if args.iter().any(|a| a == "-h" || a == "--help") {
        return None;
    }
    let command = subcommand(args)?;
    if CLIENT_ONLY.contains(&command) || !command.chars().all(|c| c.is_ascii_lowercase() || c == '-') {
        return None;
    }
    if command == "create" && creates_by_generator(args) {
        // A generator builds its object without asking the server anything (a client dry run
        // never does), and prints a failed POST in its own words (kubectl/create.rs).
        return None;
    }
    let discovery_only = matches!(command, "version" | "api-resources" | "api-versions");
    if command == "version" && args.iter().any(|a| a == "--client" || a == "--client=true") {
        return None;
    }
    // Discovery is served without etcd.
    if !error.is_transport() && discovery_only {
        return None;
    }
    let mut out = CommandOutput::empty();
    if command == "version" {
        // The client half is printed before the server is asked.
        out.say(&format!("Client Version: {}\nKustomize Version: v5.5.0", super::kubectl::KUBE_VERSION));
    }
    out.fail(&error.kubectl_message());
    Some(out)
}

/// Whether a `kubectl create` line names one of the generators kubeloop models (`create job
/// NAME …`) rather than `create -f`.
fn creates_by_generator(args: &[String]) -> bool {
    let Some(at) = args.iter().position(|a| a == "create") else { return false };
    // The word right after `create`, as `kubectl::apply::run_create` dispatches it.
    args.get(at + 1).is_some_and(|g| super::kubectl::create::GENERATORS.contains(&g.as_str()))
}

/// The subcommand of a kubectl line, skipping a namespace flag written before it.
fn subcommand(args: &[String]) -> Option<&str> {
    let mut i = 0;
    while let Some(a) = args.get(i) {
        match a.as_str() {
            "-n" | "--namespace" => i += 2,
            a if a.starts_with('-') => i += 1,
            a => return Some(a),
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::command::Scenario;

    fn session() -> Session {
        Session::new(Scenario::builtin("default").unwrap(), Some(1)).unwrap()
    }

    #[test]
    fn with_the_api_server_stopped_a_create_generator_still_checks_its_own_arguments() {
        let mut s = session();
        assert!(s.execute("sim stop kube-apiserver").ok);
        for generator in crate::command::kubectl::create::GENERATORS {
            let out = s.execute(&format!("kubectl create {generator}"));
            assert!(!out.ok, "{generator}");
            assert!(!out.stderr.contains("The connection to the server"), "{generator} reached the server: {}", out.stderr);
            assert!(out.stderr.contains("required"), "{generator}: {}", out.stderr);
        }
        // `create -f` asks the server to map its kinds first.
        assert!(s.execute("kubectl create -f x.yaml").stderr.contains("The connection to the server"));
    }

    #[test]
    fn simulated_time_prints_compactly() {
        assert_eq!(format_sim_time(Duration(0)), "0ms");
        assert_eq!(format_sim_time(Duration(500)), "500ms");
        assert_eq!(format_sim_time(Duration(45_000)), "45s");
        assert_eq!(format_sim_time(Duration(90_250)), "1m30.25s");
        assert_eq!(format_sim_time(Duration(3_600_000)), "1h");
        assert_eq!(format_sim_time(Duration(3_723_004)), "1h2m3.004s");
    }

    #[test]
    fn advance_moves_the_clock_and_says_so() {
        let mut s = session();
        let out = s.execute("sim advance 1m30s");
        assert_eq!(out, CommandOutput::out("advanced 1m30s to 1m30s"));
        assert_eq!(s.execute("sim time").stdout, "1m30s (2026-01-01T00:01:30.000000Z)\n");
    }

    #[test]
    fn bad_verbs_and_arguments_get_clear_errors_and_change_nothing() {
        let mut s = session();
        let rev = s.sim().api().revision();
        for (line, want) in [
            ("sim fly", "error: unknown sim command \"fly\"\nKnown sim commands: advance, crash, etcd, fail-probe, help, load, mode, node, pass-probe, restart, rules, seed, settle, start, status, stop, time, traffic, watch\n"),
            ("sim advance", "error: sim advance needs a duration, like 500ms, 30s or 5m\n"),
            ("sim advance soon", "error: invalid duration \"soon\": expected a number with a unit, like 500ms, 30s, 5m or 1h\n"),
            ("sim node remove x", "error: unknown sim node command \"remove\"\nKnown sim node commands: add, fail, partition, recover\n"),
            ("sim node add node-1", "error: node \"node-1\" already exists\n"),
            ("sim node add n3 --cpu lots", "error: invalid argument \"lots\" for \"--cpu\" flag: quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'\n"),
            ("sim node add n3 --gpus 1", "error: unknown flag: --gpus\n"),
            ("sim seed x", "error: invalid seed \"x\": must be a whole number from 0 to 18446744073709551615\n"),
            ("sim fail-probe web-1", "error: sim fail-probe takes a POD and a probe kind (liveness, readiness or startup): sim fail-probe POD readiness\n"),
            ("sim pass-probe web-1 sometimes", "error: unknown probe kind \"sometimes\": expected liveness, readiness or startup\n"),
            ("sim fail-probe nope liveness", "Error from server (NotFound): pods \"nope\" not found\n"),
        ] {
            let out = s.execute(line);
            assert_eq!((out.stderr.as_str(), out.ok), (want, false), "{line}");
        }
        assert_eq!(s.sim().api().revision(), rev);
        assert_eq!(s.sim().now().0, 0);
    }

    #[test]
    fn node_add_registers_a_node() {
        let mut s = session();
        assert_eq!(s.execute("sim node add node-3 --cpu 8 --memory 16Gi --zone zone-c"), CommandOutput::out("node/node-3 added"));
        s.execute("sim advance 5s");
        assert_eq!(s.sim().api().count(crate::model::Kind::Node), 3);
    }

    #[test]
    fn seed_restarts_the_scenario() {
        let mut s = session();
        s.execute("sim advance 10s");
        s.execute("kubectl scale deployment web --replicas=5");
        assert_eq!(s.execute("sim seed 7"), CommandOutput::out("scenario \"default\" restarted with seed 7"));
        assert_eq!(s.sim().seed(), 7);
        assert_eq!(s.sim().now().0, 0);
        let web = s.sim().api().get(&crate::model::ObjectKey::new(crate::model::Kind::Deployment, "default", "web")).unwrap().clone();
        assert_eq!(web.as_deployment().unwrap().spec.replicas, Some(3));
        let mut bare = Session::from_sim(crate::sim::Sim::new(1));
        assert!(bare.execute("sim seed 2").stderr.starts_with("error: sim seed needs a session started from a scenario"));
    }
}
