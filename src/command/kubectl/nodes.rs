//! The node maintenance commands: `cordon`, `uncordon`, `drain` and `taint`.
//!
//! They change a Node's `spec.unschedulable` and `spec.taints` as kubectl does (reading the node,
//! then writing it back), and `drain` evicts the node's pods through the eviction subresource,
//! printing kubectl's lines. In a blocking session `drain` waits, in simulated time, until the
//! evicted pods are gone, as kubectl waits for them; in the page it reports at once.

use super::{flags, submit, usage_error};
use crate::api::{ApiError, ApiRequest, DeleteRequest};
use crate::command::parse::{FlagKind, FlagSpec};
use crate::command::{CommandOutput, Session};
use crate::model::*;

const CORDON_FLAGS: &[FlagSpec] =
    &[FlagSpec::new("dry-run", None, FlagKind::String), FlagSpec::new("selector", Some('l'), FlagKind::String)];

const DRAIN_FLAGS: &[FlagSpec] = &[
    FlagSpec::new("ignore-daemonsets", None, FlagKind::Bool),
    FlagSpec::new("force", None, FlagKind::Bool),
    FlagSpec::new("grace-period", None, FlagKind::Int(64)),
    FlagSpec::new("delete-emptydir-data", None, FlagKind::Bool),
    FlagSpec::new("timeout", None, FlagKind::String),
    FlagSpec::new("disable-eviction", None, FlagKind::Bool),
    FlagSpec::new("dry-run", None, FlagKind::String),
    FlagSpec::new("selector", Some('l'), FlagKind::String),
];

const TAINT_FLAGS: &[FlagSpec] = &[
    FlagSpec::new("overwrite", None, FlagKind::Bool),
    FlagSpec::new("all", None, FlagKind::Bool),
    FlagSpec::new("dry-run", None, FlagKind::String),
    FlagSpec::new("selector", Some('l'), FlagKind::String),
];

const UNMANAGED_FATAL: &str = "cannot delete Pods that declare no controller (use --force to override)";
const UNMANAGED_WARNING: &str = "deleting Pods that declare no controller";

fn node_key(name: &str) -> ObjectKey {
    ObjectKey::new(Kind::Node, "", name)
}

/// The node as stored, or kubectl's NotFound.
fn read_node(session: &Session, name: &str) -> Result<Node, ApiError> {
    session.sim().api().get(&node_key(name)).and_then(|o| o.as_node().cloned()).ok_or_else(|| ApiError::not_found(Kind::Node, name))
}

/// Writes the node's spec back (kubectl patches; no other writer changes these fields).
fn write_node(session: &mut Session, mut node: Node) -> Result<(), ApiError> {
    node.metadata.resource_version = 0;
    submit(session, ApiRequest::Update(Object::Node(node))).map(|_| ())
}

/// Node names from `cordon NODE...` / `drain NODE`; `node/NAME` is accepted as kubectl does.
fn node_names(positional: &[String]) -> Vec<String> {
    positional.iter().map(|a| a.strip_prefix("node/").or_else(|| a.strip_prefix("nodes/")).unwrap_or(a).to_string()).collect()
}

/// Sets `spec.unschedulable`, printing "cordoned", "already cordoned" and the like.
fn set_unschedulable(session: &mut Session, name: &str, desired: bool, out: &mut CommandOutput) -> bool {
    let mut node = match read_node(session, name) {
        Ok(n) => n,
        Err(e) => {
            out.fail(&e.kubectl_message());
            return false;
        }
    };
    let verb = if desired { "cordon" } else { "uncordon" };
    if node.spec.unschedulable == desired {
        out.say(&format!("node/{name} already {verb}ed"));
        return true;
    }
    node.spec.unschedulable = desired;
    match write_node(session, node) {
        Ok(()) => {
            out.say(&format!("node/{name} {verb}ed"));
            true
        }
        Err(e) => {
            out.fail(&format!("error: unable to {verb} node {name:?}: {}", e.message));
            false
        }
    }
}

/// `kubectl cordon NODE...` (`desired` true) and `kubectl uncordon NODE...`.
pub fn run_cordon(session: &mut Session, args: &[String], desired: bool) -> CommandOutput {
    let command = if desired { "cordon" } else { "uncordon" };
    let (positional, _f) = match flags(command, args, CORDON_FLAGS) {
        Ok(v) => v,
        Err(e) => return e,
    };
    if positional.is_empty() {
        return usage_error(command, &format!("USAGE: {command} NODE [flags]"));
    }
    let mut out = CommandOutput::empty();
    for name in node_names(&positional) {
        set_unschedulable(session, &name, desired, &mut out);
    }
    out
}

/// What drain decided about one pod on the node (`makeFilters`; kubeloop has no DaemonSets,
/// mirror pods or emptyDir volumes, so only the controller check can object).
enum Verdict {
    Evict,
    /// Evicted with `UNMANAGED_WARNING` (`--force`).
    Warn,
    /// Refused with `UNMANAGED_FATAL`.
    Fatal,
}

fn drain_verdict(pod: &Pod, force: bool) -> Verdict {
    if pod.is_terminal() || pod.metadata.controller_ref().is_some() {
        return Verdict::Evict;
    }
    if force {
        Verdict::Warn
    } else {
        Verdict::Fatal
    }
}

/// `kubectl drain NODE`.
pub fn run_drain(session: &mut Session, args: &[String]) -> CommandOutput {
    let (positional, f) = match flags("drain", args, DRAIN_FLAGS) {
        Ok(v) => v,
        Err(e) => return e,
    };
    if positional.is_empty() {
        return usage_error("drain", "USAGE: drain NODE [flags]");
    }
    let timeout = match f.str("timeout").map(Duration::parse).transpose() {
        Ok(t) => t.filter(|d| *d != Duration::ZERO),
        Err(e) => {
            return CommandOutput::err(format!("error: invalid argument {:?} for \"--timeout\" flag: {e}", f.str("timeout").unwrap_or("")))
        }
    };
    let grace = f.int("grace-period").filter(|g| *g >= 0);
    let names = node_names(&positional);
    let mut out = CommandOutput::empty();
    for name in &names {
        if !set_unschedulable(session, name, true, &mut out) {
            return out;
        }
    }
    for (i, name) in names.iter().enumerate() {
        if let Err(error) = drain_node(session, name, f.bool("force"), grace, timeout, &mut out) {
            out.fail(&format!("error: unable to drain node {name:?}, aborting command...\n\n"));
            out.fail("There are pending nodes to be drained:");
            for pending in &names[i..] {
                out.fail(&format!(" {pending}"));
            }
            out.fail(&format!("error: {error}"));
            return out;
        }
        out.say(&format!("node/{name} drained"));
    }
    out
}

/// Evicts a node's pods and waits for them to go; the error text kubectl ends with, if any.
fn drain_node(
    session: &mut Session,
    name: &str,
    force: bool,
    grace: Option<i64>,
    timeout: Option<Duration>,
    out: &mut CommandOutput,
) -> Result<(), String> {
    let pods: Vec<Pod> =
        session.sim().objects(Kind::Pod).filter_map(|o| o.as_pod().cloned()).filter(|p| p.node_name() == Some(name)).collect();
    let mut fatal: Vec<String> = Vec::new();
    let mut warned: Vec<String> = Vec::new();
    let mut evict: Vec<Pod> = Vec::new();
    for pod in pods {
        let who = format!("{}/{}", pod.metadata.namespace, pod.metadata.name);
        match drain_verdict(&pod, force) {
            Verdict::Evict => evict.push(pod),
            Verdict::Warn => {
                warned.push(who);
                evict.push(pod);
            }
            Verdict::Fatal => fatal.push(who),
        }
    }
    if !fatal.is_empty() {
        return Err(format!("{UNMANAGED_FATAL}: {}", fatal.join(", ")));
    }
    if !warned.is_empty() {
        out.note(&format!("WARNING: {UNMANAGED_WARNING}: {}", warned.join(", ")));
    }
    let deadline = timeout.map(|t| session.sim().now() + t);
    let waiting = evict_pods(session, evict, grace, (deadline, timeout), out)?;
    wait_for_deletion(session, waiting, (deadline, timeout), name, out)
}

/// How long kubectl waits before asking again for an eviction a disruption budget refused.
const EVICTION_RETRY: Duration = Duration::secs(5);
/// How long a blocking session goes on retrying without `--timeout` (see `evict_pods`).
const UNBOUNDED_RETRY_LIMIT: Duration = Duration::mins(60);

/// `evictPods`: asks for each pod's eviction, again every 5 s for those a PodDisruptionBudget
/// refuses (429), until each is granted or the global timeout passes. The pods granted, to wait
/// for; pods that went meanwhile are reported as kubectl's waiters report them.
fn evict_pods(
    session: &mut Session,
    mut evicting: Vec<Pod>,
    grace: Option<i64>,
    (deadline, timeout): (Option<Time>, Option<Duration>),
    out: &mut CommandOutput,
) -> Result<Vec<(ObjectKey, String)>, String> {
    // Without --timeout kubectl retries until interrupted; a blocking session stops after
    // this long so that a scenario or a test cannot hang.
    let give_up = session.sim().now() + UNBOUNDED_RETRY_LIMIT;
    let mut waiting: Vec<(ObjectKey, String)> = Vec::new();
    loop {
        let mut refused = Vec::new();
        for pod in evicting {
            let (ns, name) = (pod.metadata.namespace.as_str(), pod.metadata.name.as_str());
            out.say(&format!("evicting pod {ns}/{name}"));
            let key = ObjectKey::of(Kind::Pod, &pod.metadata);
            let request = DeleteRequest { grace_period_seconds: grace, ..DeleteRequest::new(key.clone()) };
            match submit(session, ApiRequest::Evict(request)) {
                Ok(_) => waiting.push((key, pod.metadata.uid.to_string())),
                Err(e) if e.reason == crate::api::Reason::NotFound => {}
                Err(e) if e.reason == crate::api::Reason::TooManyRequests => {
                    out.note(&format!("error when evicting pods/{name:?} -n {ns:?} (will retry after 5s): {}", e.message));
                    refused.push(pod);
                }
                Err(e) => return Err(format!("error when evicting pods/{name:?} -n {ns:?}: {}", e.message)),
            }
        }
        let Some(first) = refused.first() else { return Ok(waiting) };
        if !session.blocking() {
            // The page answers at once and cannot sleep between attempts.
            out.note("(kubeloop: the page does not wait to retry; run the drain again once the budget allows it)");
            return Err(format!(
                "error when evicting pods/{:?} -n {:?}: {}",
                first.metadata.name.as_str(),
                first.metadata.namespace.as_str(),
                crate::api::VIOLATES_BUDGET
            ));
        }
        let retry_at = session.sim().now() + EVICTION_RETRY;
        if let Some(d) = deadline.filter(|d| retry_at > *d) {
            session.advance_to(d);
            let (ns, name) = (first.metadata.namespace.as_str(), first.metadata.name.as_str());
            return Err(format!(
                "error when evicting pods/{name:?} -n {ns:?}: global timeout reached: {}",
                go_duration(timeout.unwrap_or(Duration::ZERO))
            ));
        }
        if deadline.is_none() && retry_at > give_up {
            out.note("(kubeloop: stopped retrying after an hour of simulated time; kubectl would go on until interrupted — set --timeout)");
            return Err(format!(
                "error when evicting pods/{:?} -n {:?}: {}",
                first.metadata.name.as_str(),
                first.metadata.namespace.as_str(),
                crate::api::VIOLATES_BUDGET
            ));
        }
        session.advance_to(retry_at);
        report_gone(session, &mut waiting, out);
        evicting = refused;
    }
}

/// Prints "pod/NAME evicted" for each waited-for pod that is gone (or replaced by a pod of the
/// same name) and stops waiting for it.
fn report_gone(session: &Session, waiting: &mut Vec<(ObjectKey, String)>, out: &mut CommandOutput) {
    waiting.retain(|(key, uid)| {
        let gone = session.sim().api().get(key).is_none_or(|o| o.meta().uid != *uid);
        if gone {
            out.say(&format!("pod/{} evicted", key.name));
        }
        !gone
    });
}

/// `waitForDelete`: prints "pod/NAME evicted" as each pod disappears (or is replaced by a pod of
/// the same name). Only a blocking session moves the clock; the page is told at once.
fn wait_for_deletion(
    session: &mut Session,
    mut waiting: Vec<(ObjectKey, String)>,
    (deadline, timeout): (Option<Time>, Option<Duration>),
    node: &str,
    out: &mut CommandOutput,
) -> Result<(), String> {
    if !session.blocking() {
        for (key, _) in waiting {
            out.say(&format!("pod/{} evicted", key.name));
        }
        return Ok(());
    }
    loop {
        report_gone(session, &mut waiting, out);
        if waiting.is_empty() {
            return Ok(());
        }
        let next = session.sim().next_time();
        match (next, deadline) {
            (Some(t), Some(d)) if t > d => return Err(timed_out(session, d, timeout, node, &waiting, out)),
            (Some(t), _) => session.advance_to(t),
            (None, Some(d)) => return Err(timed_out(session, d, timeout, node, &waiting, out)),
            (None, None) => return Err("drain did not complete: nothing left to wait for".into()),
        }
    }
}

fn timed_out(
    session: &mut Session,
    deadline: Time,
    timeout: Option<Duration>,
    node: &str,
    waiting: &[(ObjectKey, String)],
    out: &mut CommandOutput,
) -> String {
    session.advance_to(deadline);
    let error = format!("drain did not complete within {}", go_duration(timeout.unwrap_or(Duration::ZERO)));
    out.fail(&format!("There are pending pods in node {node:?} when an error occurred: {error}"));
    for (key, _) in waiting {
        out.fail(&format!("pod/{}", key.name));
    }
    error
}

/// Go's `time.Duration.String` for whole seconds and minutes (`30s`, `1m0s`, `1h0m0s`).
fn go_duration(d: Duration) -> String {
    let ms = d.as_millis();
    if !ms.is_multiple_of(1000) {
        return format!("{}s", ms as f64 / 1000.0);
    }
    let s = ms / 1000;
    match (s / 3600, (s % 3600) / 60, s % 60) {
        (0, 0, sec) => format!("{sec}s"),
        (0, m, sec) => format!("{m}m{sec}s"),
        (h, m, sec) => format!("{h}h{m}m{sec}s"),
    }
}

/// One taint argument, parsed as `parseTaint` does.
fn parse_taint(spec: &str) -> Result<Taint, String> {
    let invalid = || format!("invalid taint spec: {spec}");
    let parts: Vec<&str> = spec.split(':').collect();
    let (key, value, effect) = match parts.as_slice() {
        [key] => (*key, "", ""),
        [kv, effect] => {
            if !["NoSchedule", "PreferNoSchedule", "NoExecute"].contains(effect) {
                return Err(format!("invalid taint effect: {effect}, unsupported taint effect"));
            }
            let kv: Vec<&str> = kv.split('=').collect();
            match kv.as_slice() {
                [key] => (*key, "", *effect),
                [key, value] => (*key, *value, *effect),
                _ => return Err(invalid()),
            }
        }
        _ => return Err(invalid()),
    };
    if let Some(why) = qualified_name_error(key) {
        return Err(format!("{}, {why}", invalid()));
    }
    Ok(Taint { key: key.into(), value: value.into(), effect: effect.into(), time_added: None })
}

/// `validation.IsQualifiedName`, for the cases people type.
fn qualified_name_error(key: &str) -> Option<String> {
    const NAME_MSG: &str = "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";
    let name = key.rsplit_once('/').map_or(key, |(_, n)| n);
    if name.is_empty() {
        return Some(format!("name part must be non-empty; {NAME_MSG}"));
    }
    let edge_ok = |c: Option<char>| c.is_some_and(|c| c.is_ascii_alphanumeric());
    let body_ok = name.chars().all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c));
    if !body_ok || !edge_ok(name.chars().next()) || !edge_ok(name.chars().last()) || name.len() > 63 {
        return Some(NAME_MSG.to_string());
    }
    None
}

/// The changes a `kubectl taint` line asks for.
struct TaintChanges {
    add: Vec<Taint>,
    remove: Vec<Taint>,
}

/// `parseTaints`.
fn parse_taints(specs: &[String]) -> Result<TaintChanges, String> {
    let mut changes = TaintChanges { add: Vec::new(), remove: Vec::new() };
    // A list, not a set: a command names a few taints, and a set of pairs would be its own B-tree code.
    let mut seen: Vec<(String, String)> = Vec::new();
    for spec in specs {
        if let Some(stripped) = spec.strip_suffix('-') {
            let t = parse_taint(stripped)?;
            changes.remove.push(Taint { value: String::new(), ..t });
            continue;
        }
        let t = parse_taint(spec)?;
        if t.effect.is_empty() {
            return Err(format!("invalid taint spec: {spec}"));
        }
        let pair = (t.key.clone(), t.effect.clone());
        if seen.contains(&pair) {
            return Err(format!("duplicated taints with the same key and effect: {}", go_taint(&t)));
        }
        seen.push(pair);
        changes.add.push(t);
    }
    Ok(changes)
}

/// How Go's `%v` prints a Taint struct.
fn go_taint(t: &Taint) -> String {
    format!("{{{} {} {} <nil>}}", t.key, t.value, t.effect)
}

/// `reorganizeTaints`: the new list and the word kubectl prints.
fn reorganize(node: &Node, overwrite: bool, changes: &TaintChanges) -> Result<(&'static str, Vec<Taint>), String> {
    let mut taints = changes.add.clone();
    for old in &node.spec.taints {
        if !taints.iter().any(|t| t.key == old.key && t.effect == old.effect) {
            taints.push(old.clone());
        }
    }
    let added = node.spec.taints.len() != taints.len();
    let mut errors: Vec<String> = Vec::new();
    let mut deleted = false;
    for r in &changes.remove {
        let before = taints.len();
        taints.retain(|t| !(t.key == r.key && (r.effect.is_empty() || t.effect == r.effect)));
        deleted = taints.len() != before;
        if !deleted {
            // `Taint.ToString`: no trailing colon when the effect is empty.
            let shown = if r.effect.is_empty() { r.key.clone() } else { r.to_string() };
            errors.push(format!("taint {shown:?} not found"));
        }
    }
    if !errors.is_empty() {
        return Err(if errors.len() == 1 { errors.remove(0) } else { format!("[{}]", errors.join(", ")) });
    }
    let word = if (added && deleted) || overwrite {
        "modified"
    } else if added {
        "tainted"
    } else {
        "untainted"
    };
    Ok((word, taints))
}

/// `kubectl taint nodes NAME KEY=VALUE:EFFECT... [KEY:EFFECT-]`.
pub fn run_taint(session: &mut Session, args: &[String]) -> CommandOutput {
    let (positional, f) = match flags("taint", args, TAINT_FLAGS) {
        Ok(v) => v,
        Err(e) => return e,
    };
    let mut resources: Vec<String> = Vec::new();
    let mut specs: Vec<String> = Vec::new();
    for arg in &positional {
        let is_taint = arg.contains('=') || arg.contains(':') || arg.ends_with('-');
        match (is_taint, specs.is_empty()) {
            (true, _) => specs.push(arg.clone()),
            (false, true) => resources.push(arg.clone()),
            (false, false) => return CommandOutput::err(format!("error: all resources must be specified before taint changes: {arg}")),
        }
    }
    if resources.is_empty() {
        return CommandOutput::err("error: one or more resources must be specified as <resource> <name>");
    }
    if specs.is_empty() {
        return CommandOutput::err("error: at least one taint update is required");
    }
    let changes = match parse_taints(&specs) {
        Ok(c) => c,
        Err(e) => return usage_error("taint", &e),
    };
    match crate::command::resources::resolve(&resources[0]) {
        Ok(Kind::Node) => {}
        Ok(_) => {
            return CommandOutput::err(format!(
                "error: invalid resource type {}, only node types are supported",
                resources[0].to_lowercase()
            ))
        }
        Err(e) => return CommandOutput::err(e),
    }
    if let Some(conflict) = conflicting(&changes) {
        return CommandOutput::err(format!("error: can not both modify and remove the following taint(s) in the same command: {conflict}"));
    }
    let names: Vec<String> = if f.bool("all") {
        session.sim().objects(Kind::Node).map(|o| o.meta().name.to_string()).collect()
    } else if resources.len() < 2 {
        return CommandOutput::err("error: at least one resource name must be specified since 'all' parameter is not set");
    } else {
        resources[1..].to_vec()
    };
    let mut out = CommandOutput::empty();
    for name in names {
        taint_node(session, &name, f.bool("overwrite"), &changes, &mut out);
    }
    out
}

fn conflicting(changes: &TaintChanges) -> Option<String> {
    let conflicts: Vec<String> = changes
        .add
        .iter()
        .flat_map(|a| changes.remove.iter().filter(move |r| r.key == a.key && (r.effect.is_empty() || r.effect == a.effect)))
        .map(|r| format!("{{\"{}\":\"{}\"}}", r.key, r.effect))
        .collect();
    (!conflicts.is_empty()).then(|| conflicts.join(", "))
}

fn taint_node(session: &mut Session, name: &str, overwrite: bool, changes: &TaintChanges, out: &mut CommandOutput) {
    let mut node = match read_node(session, name) {
        Ok(n) => n,
        Err(e) => return out.fail(&e.kubectl_message()),
    };
    if !overwrite {
        let exists: Vec<&str> = changes
            .add
            .iter()
            .filter(|a| node.spec.taints.iter().any(|t| t.key == a.key && t.effect == a.effect))
            .map(|a| a.key.as_str())
            .collect();
        if !exists.is_empty() {
            return out.fail(&format!(
                "error: node {name} already has {} taint(s) with same effect(s) and --overwrite is false",
                exists.join(",")
            ));
        }
    }
    let (word, taints) = match reorganize(&node, overwrite, changes) {
        Ok(v) => v,
        Err(e) => return out.fail(&format!("error: {e}")),
    };
    node.spec.taints = taints;
    match write_node(session, node) {
        Ok(()) => out.say(&format!("node/{name} {word}")),
        Err(e) => out.fail(&e.kubectl_message()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn taint_specs_parse_as_kubectl_parses_them() {
        let t = parse_taint("dedicated=gpu:NoSchedule").expect("valid");
        assert_eq!((t.key.as_str(), t.value.as_str(), t.effect.as_str()), ("dedicated", "gpu", "NoSchedule"));
        assert_eq!(parse_taint("dedicated:Sometimes").unwrap_err(), "invalid taint effect: Sometimes, unsupported taint effect");
        assert_eq!(parse_taint("a=b=c:NoSchedule").unwrap_err(), "invalid taint spec: a=b=c:NoSchedule");
        assert!(parse_taint(":NoSchedule").unwrap_err().starts_with("invalid taint spec: :NoSchedule, name part must be non-empty"));
        let specs = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        // Without an effect the whole word is the key, and "=" is not allowed in one.
        let no_effect = parse_taints(&specs(&["dedicated=gpu"])).err().unwrap_or_default();
        assert!(
            no_effect.starts_with("invalid taint spec: dedicated=gpu, name part must consist of alphanumeric characters"),
            "{no_effect}"
        );
        assert_eq!(
            parse_taints(&specs(&["a=1:NoSchedule", "a=2:NoSchedule"])).err().as_deref(),
            Some("duplicated taints with the same key and effect: {a 2 NoSchedule <nil>}")
        );
        let c = parse_taints(&specs(&["dedicated:NoSchedule-", "gpu-"])).expect("removals");
        assert_eq!(c.remove.len(), 2);
        assert_eq!(c.remove[1].effect, "");
    }

    #[test]
    fn reorganizing_taints_names_the_operation() {
        let mut node = Node::default();
        let specs = |v: &[&str]| parse_taints(&v.iter().map(|s| s.to_string()).collect::<Vec<_>>()).expect("valid");
        let (word, taints) = reorganize(&node, false, &specs(&["dedicated=gpu:NoSchedule"])).expect("ok");
        assert_eq!((word, taints.len()), ("tainted", 1));
        node.spec.taints = taints;
        let (word, taints) = reorganize(&node, false, &specs(&["dedicated:NoSchedule-"])).expect("ok");
        assert_eq!((word, taints.len()), ("untainted", 0));
        assert_eq!(reorganize(&node, false, &specs(&["other-"])).unwrap_err(), "taint \"other\" not found");
        assert_eq!(reorganize(&node, true, &specs(&["dedicated=cpu:NoSchedule"])).expect("ok").0, "modified");
    }

    #[test]
    fn a_drain_whose_pods_cannot_finish_times_out_with_kubectls_report() {
        use crate::command::Scenario;
        use crate::sim::ComponentId;
        let mut s = Session::new(Scenario::builtin("default").expect("scenario"), Some(1)).expect("session");
        s.settle(Duration::mins(2)).expect("settled");
        let on_node_1: Vec<String> = s
            .sim()
            .objects(Kind::Pod)
            .filter_map(|o| o.as_pod())
            .filter(|p| p.node_name() == Some("node-1"))
            .map(|p| p.metadata.name.to_string())
            .collect();
        assert!(!on_node_1.is_empty());
        // A stopped kubelet never finishes the graceful deletions.
        s.sim_mut().stop_component(&ComponentId::Kubelet("node-1".into()));
        let start = s.sim().now();
        let out = s.execute("kubectl drain node-1 --timeout 10s");
        assert!(!out.ok);
        assert_eq!(s.sim().now().since(start), Duration::secs(10), "the clock moved to the timeout");
        let mut expected_out = String::from("node/node-1 cordoned\n");
        for p in &on_node_1 {
            expected_out.push_str(&format!("evicting pod default/{p}\n"));
        }
        assert_eq!(out.stdout, expected_out);
        let mut expected_err =
            String::from("There are pending pods in node \"node-1\" when an error occurred: drain did not complete within 10s\n");
        for p in &on_node_1 {
            expected_err.push_str(&format!("pod/{p}\n"));
        }
        expected_err.push_str(
            "error: unable to drain node \"node-1\", aborting command...\n\nThere are pending nodes to be drained:\n node-1\nerror: drain did not complete within 10s\n",
        );
        assert_eq!(out.stderr, expected_err);
    }

    #[test]
    fn go_durations_print_like_go() {
        assert_eq!(go_duration(Duration::secs(30)), "30s");
        assert_eq!(go_duration(Duration::secs(60)), "1m0s");
        assert_eq!(go_duration(Duration::secs(3725)), "1h2m5s");
    }
}
