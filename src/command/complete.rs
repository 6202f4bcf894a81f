//! Tab completion for the command language: what the word under the cursor could be.
//!
//! The page's console completes like a shell with kubectl's completion loaded: verbs first, then
//! resource types, then the names of objects that exist in the store (read like a GET, in the
//! namespace the line names), flags of the verb and their values, and the `sim` verbs with the
//! component and node names of this cluster. It lives in the library so it is tested natively
//! and always agrees with what [`super::Session::execute`] accepts.

use super::kubectl::examples::EXAMPLES;
use super::parse;
use super::resources;
use super::Session;
use crate::model::Kind;
use crate::sim::ComponentId;

/// The kubectl verbs kubeloop runs, in the order a learner meets them.
pub const KUBECTL_VERBS: &[&str] = &[
    "get",
    "describe",
    "apply",
    "create",
    "delete",
    "scale",
    "expose",
    "set",
    "rollout",
    "cordon",
    "uncordon",
    "drain",
    "taint",
    "api-resources",
    "version",
];

/// The `sim` verbs, including issue 5's failure verbs.
pub const SIM_VERBS: &[&str] = &[
    "advance",
    "settle",
    "time",
    "status",
    "node",
    "seed",
    "stop",
    "start",
    "restart",
    "watch",
    "mode",
    "etcd",
    "crash",
    "fail-probe",
    "pass-probe",
    "traffic",
    "rules",
    "help",
];

/// Resource types as kubectl's completion offers them (plural names), plus `all` for `get`.
const RESOURCE_TYPES: &[&str] = &["pods", "deployments", "replicasets", "nodes", "events", "leases"];

const ROLLOUT_SUBCOMMANDS: &[&str] = &["status", "history", "undo", "restart", "pause", "resume"];
const OUTPUT_FORMATS: &[&str] = &["wide", "yaml", "json", "name"];

/// The flags each verb takes (long forms, with `=` where a value follows).
fn flags(verb: &str) -> &'static [&'static str] {
    match verb {
        "get" => &[
            "--output=",
            "--selector=",
            "--field-selector=",
            "--all-namespaces",
            "--watch",
            "--watch-only",
            "--show-labels",
            "--label-columns=",
            "--sort-by=",
            "--no-headers",
            "--ignore-not-found",
            "--namespace=",
        ],
        "describe" => &["--selector=", "--all-namespaces", "--show-events", "--namespace="],
        "apply" => &["--filename=", "--dry-run=", "--output=", "--validate=", "--namespace="],
        "create" => &[
            "--filename=",
            "--dry-run=",
            "--output=",
            "--save-config",
            "--image=",
            "--replicas=",
            "--port=",
            "--schedule=",
            "--from=",
            "--namespace=",
        ],
        "delete" => &[
            "--filename=",
            "--selector=",
            "--all",
            "--grace-period=",
            "--force",
            "--now",
            "--wait=false",
            "--cascade=",
            "--output=",
            "--ignore-not-found",
            "--all-namespaces",
            "--namespace=",
        ],
        "scale" => &["--replicas=", "--current-replicas=", "--selector=", "--all", "--output=", "--namespace="],
        "expose" => &["--port=", "--target-port=", "--type=", "--name=", "--protocol=", "--namespace="],
        "set" => &["--all", "--selector=", "--namespace="],
        "rollout" => &["--watch", "--timeout=", "--to-revision=", "--namespace="],
        _ => &["--namespace="],
    }
}

/// Candidates for the word being typed at the end of `line` (the empty word after a space),
/// sorted and without duplicates. Each is a whole word that starts with what was typed.
pub fn complete(line: &str, session: &Session) -> Vec<String> {
    let (done, partial) = split_partial(line);
    let mut out: Vec<String> = candidates(&done, &partial, session).into_iter().filter(|c| c.starts_with(partial.as_str())).collect();
    crate::sort::sort(&mut out);
    out.dedup();
    out
}

/// The line completed as far as the candidates agree: the only candidate and a space, or
/// their longest common prefix. Returns the new line and the candidates (to list when several).
pub fn complete_line(line: &str, session: &Session) -> (String, Vec<String>) {
    let all = complete(line, session);
    let (_, partial) = split_partial(line);
    let stem = &line[..line.len() - partial.len()];
    match all.as_slice() {
        [] => (line.to_string(), all),
        [only] => {
            let space = if only.ends_with('=') || only.ends_with('/') { "" } else { " " };
            (format!("{stem}{only}{space}"), all)
        }
        [first, rest @ ..] => {
            let common = rest.iter().fold(first.as_str(), |acc, c| &acc[..common_prefix(acc, c)]);
            (format!("{stem}{common}"), all)
        }
    }
}

fn common_prefix(a: &str, b: &str) -> usize {
    a.char_indices().zip(b.chars()).find(|((_, x), y)| x != y).map(|((i, _), _)| i).unwrap_or(a.len().min(b.len()))
}

/// The finished words and the one being typed. A line that does not tokenise (an open quote)
/// completes nothing beyond its last whitespace-separated word.
fn split_partial(line: &str) -> (Vec<String>, String) {
    let ends_in_space = line.ends_with(char::is_whitespace) || line.is_empty();
    let words = parse::split(line).map(|w| w.words).unwrap_or_else(|_| line.split_whitespace().map(str::to_string).collect());
    if ends_in_space {
        return (words, String::new());
    }
    let mut words = words;
    let partial = words.pop().unwrap_or_default();
    (words, partial)
}

fn strings(items: &[&str]) -> Vec<String> {
    items.iter().map(|s| s.to_string()).collect()
}

fn candidates(done: &[String], partial: &str, session: &Session) -> Vec<String> {
    let Some(first) = done.first() else {
        let mut top = strings(KUBECTL_VERBS);
        top.extend(strings(&["kubectl", "sim", "help"]));
        return top;
    };
    match first.as_str() {
        "sim" => sim_candidates(&done[1..], session),
        "kubectl" => kubectl_candidates(&done[1..], partial, session),
        "help" => Vec::new(),
        _ => kubectl_candidates(done, partial, session),
    }
}

/// The namespace the line names with `-n`/`--namespace`, or `default`.
fn namespace_of(words: &[String]) -> String {
    for (i, w) in words.iter().enumerate() {
        if w == "-n" || w == "--namespace" {
            if let Some(ns) = words.get(i + 1) {
                return ns.clone();
            }
        }
        if let Some(ns) = w.strip_prefix("--namespace=").or_else(|| w.strip_prefix("-n=")) {
            return ns.to_string();
        }
    }
    "default".into()
}

/// The names of objects of `kind` in `namespace` (all names for cluster-scoped kinds).
fn names(session: &Session, kind: Kind, namespace: &str) -> Vec<String> {
    session
        .sim()
        .objects(kind)
        .filter(|o| !kind.namespaced() || o.meta().namespace == namespace)
        .map(|o| o.meta().name.to_string())
        .collect()
}

/// Words that are not flags or flag values.
fn positionals(words: &[String]) -> Vec<&String> {
    let mut out = Vec::new();
    let mut skip = false;
    for w in words {
        if skip {
            skip = false;
            continue;
        }
        if w.starts_with('-') {
            // A short or long flag written without `=` takes the next word as its value.
            skip = !w.contains('=') && FLAGS_WITH_VALUES.contains(&w.as_str());
            continue;
        }
        out.push(w);
    }
    out
}

const FLAGS_WITH_VALUES: &[&str] = &[
    "-n",
    "--namespace",
    "-o",
    "--output",
    "-l",
    "--selector",
    "-f",
    "--filename",
    "--field-selector",
    "--replicas",
    "--grace-period",
    "--timeout",
    "--image",
    "-L",
    "--label-columns",
    "--sort-by",
    "--dry-run",
    "--cascade",
];

fn kubectl_candidates(words: &[String], partial: &str, session: &Session) -> Vec<String> {
    let Some(verb) = words.first() else { return strings(KUBECTL_VERBS) };
    let rest = &words[1..];
    // A flag's value.
    match rest.last().map(String::as_str) {
        Some("-o" | "--output") => return strings(OUTPUT_FORMATS),
        Some("-n" | "--namespace") => return names(session, Kind::Namespace, ""),
        Some("-f" | "--filename") => return files(session),
        Some("--dry-run") => return strings(&["client", "server", "none"]),
        _ => {}
    }
    if let Some(value) = partial.strip_prefix("--output=").or_else(|| partial.strip_prefix("-o=")) {
        let flag = &partial[..partial.len() - value.len()];
        return OUTPUT_FORMATS.iter().map(|f| format!("{flag}{f}")).collect();
    }
    if partial.starts_with('-') {
        return strings(flags(verb));
    }
    let ns = namespace_of(rest);
    let args = positionals(rest);
    // `TYPE/NAME`: names of that type.
    if let Some((typed, _)) = partial.split_once('/') {
        return match resources::resolve(typed) {
            Ok(kind) => names(session, kind, &ns).into_iter().map(|n| format!("{typed}/{n}")).collect(),
            Err(_) => Vec::new(),
        };
    }
    match verb.as_str() {
        "get" | "describe" | "delete" => match args.first() {
            None => {
                let mut types = strings(RESOURCE_TYPES);
                if verb == "get" {
                    types.push("all".into());
                }
                types
            }
            Some(typed) => match resources::resolve(typed) {
                Ok(kind) => names(session, kind, &ns),
                Err(_) => Vec::new(),
            },
        },
        "scale" => match args.first() {
            None => names(session, Kind::Deployment, &ns)
                .into_iter()
                .map(|n| format!("deployment/{n}"))
                .chain(names(session, Kind::ReplicaSet, &ns).into_iter().map(|n| format!("replicaset/{n}")))
                .chain(names(session, Kind::StatefulSet, &ns).into_iter().map(|n| format!("statefulset/{n}")))
                .collect(),
            Some(_) => strings(&["--replicas="]),
        },
        "set" => match args.len() {
            0 => strings(&["image"]),
            1 => names(session, Kind::Deployment, &ns).into_iter().map(|n| format!("deployment/{n}")).collect(),
            _ => container_images(session, &ns, args.get(1).map(|s| s.as_str()).unwrap_or_default()),
        },
        "rollout" => match args.len() {
            0 => strings(ROLLOUT_SUBCOMMANDS),
            1 => names(session, Kind::Deployment, &ns)
                .into_iter()
                .map(|n| format!("deployment/{n}"))
                .chain(names(session, Kind::StatefulSet, &ns).into_iter().map(|n| format!("statefulset/{n}")))
                .collect(),
            _ => Vec::new(),
        },
        "create" => match args.first() {
            None => strings(&["deployment", "-f"]),
            _ => Vec::new(),
        },
        "apply" => strings(&["-f"]),
        "cordon" | "uncordon" | "drain" => match args.first() {
            None => names(session, Kind::Node, ""),
            Some(_) => Vec::new(),
        },
        "taint" => match args.len() {
            0 => strings(&["nodes"]),
            1 => names(session, Kind::Node, ""),
            _ => Vec::new(),
        },
        _ => Vec::new(),
    }
}

/// `NAME=IMAGE` for each container of the Deployment `deployment/NAME`: what `set image` takes.
fn container_images(session: &Session, ns: &str, target: &str) -> Vec<String> {
    let name = target.rsplit('/').next().unwrap_or(target);
    session
        .sim()
        .objects(Kind::Deployment)
        .filter_map(|o| o.as_deployment())
        .filter(|d| d.metadata.namespace == ns && d.metadata.name == name)
        .flat_map(|d| d.spec.template.spec.containers.iter().map(|c| format!("{}=", c.name)))
        .collect()
}

/// Files `-f` can read: the session's own, then the documentation's examples by address.
fn files(session: &Session) -> Vec<String> {
    let mut out: Vec<String> = session.files().map.keys().cloned().collect();
    out.extend(EXAMPLES.iter().map(|(path, _)| format!("https://k8s.io/examples/{path}")));
    out
}

/// Every process `sim stop` can name: the API server and etcd (served by the simulation itself,
/// not in its component map) and each running component.
fn component_names(session: &Session) -> Vec<String> {
    let mut out = vec![ComponentId::ApiServer.to_string(), ComponentId::Etcd.to_string()];
    out.extend(session.sim().component_ids().filter(|id| **id != ComponentId::User).map(|id| id.to_string()));
    out
}

/// What `sim stop|start|restart` can name: every process, and each loop of
/// kube-controller-manager on its own.
fn switchable_names(session: &Session) -> Vec<String> {
    let mut out = component_names(session);
    if let Some(manager) = session.sim().controller_manager() {
        out.extend(manager.controller_names().map(|n| format!("{}{n}", crate::sim::CONTROLLER_PREFIX)));
    }
    out
}

fn node_names(session: &Session) -> Vec<String> {
    names(session, Kind::Node, "")
}

fn sim_candidates(words: &[String], session: &Session) -> Vec<String> {
    let Some(verb) = words.first() else { return strings(SIM_VERBS) };
    let args = &words[1..];
    match (verb.as_str(), args) {
        ("stop" | "start" | "restart", []) => switchable_names(session),
        ("node", []) => strings(&["add", "fail", "partition", "recover"]),
        ("node", [sub]) if sub != "add" => node_names(session),
        ("watch", []) => strings(&["drop", "delay", "sever"]),
        ("watch", [sub]) if sub == "sever" => component_names(session),
        ("watch", [_, _]) => component_names(session),
        ("mode", []) => strings(&["level", "edge"]),
        ("etcd", []) => strings(&["snapshot", "restore", "wipe"]),
        ("crash", []) => names(session, Kind::Pod, "default"),
        ("crash", [_, ..]) => strings(&["--after", "--code"]),
        ("fail-probe" | "pass-probe", []) => names(session, Kind::Pod, "default"),
        ("fail-probe" | "pass-probe", [_]) => strings(&["liveness", "readiness", "startup"]),
        ("advance" | "settle", []) => strings(&["1s", "10s", "30s", "1m", "5m"]),
        _ => Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::command::Scenario;
    use crate::model::Duration;

    fn session() -> Session {
        let mut s = Session::new(Scenario::builtin("default").unwrap(), Some(1)).unwrap();
        s.settle(Duration::mins(2)).unwrap();
        s
    }

    fn c(line: &str) -> Vec<String> {
        complete(line, &session())
    }

    #[test]
    fn verbs_first() {
        assert_eq!(c("sc"), vec!["scale"]);
        assert_eq!(c("kubectl ro"), vec!["rollout"]);
        assert_eq!(c("s"), vec!["scale", "set", "sim"]);
        assert_eq!(c("sim st"), vec!["start", "status", "stop"]);
    }

    #[test]
    fn resource_types_then_names_from_the_store() {
        assert_eq!(c("kubectl get d"), vec!["deployments"]);
        assert_eq!(c("get deploy "), vec!["web"]);
        assert_eq!(c("kubectl describe deployment/w"), vec!["deployment/web"]);
        assert_eq!(c("get nodes "), vec!["node-1", "node-2"]);
        let pods = c("kubectl delete pod web-");
        assert_eq!(pods.len(), 3, "{pods:?}");
        assert!(pods.iter().all(|p| p.starts_with("web-")));
        // Another namespace has no web Deployment.
        assert_eq!(c("get deploy -n kube-system "), Vec::<String>::new());
        assert_eq!(c("scale "), vec!["deployment/web", "replicaset/web-97f4f98bc"]);
        assert_eq!(c("kubectl set image deployment/web "), vec!["nginx="]);
        assert_eq!(c("rollout undo "), vec!["deployment/web"]);
        assert_eq!(c("kubectl dr"), vec!["drain"]);
        assert_eq!(c("cordon "), vec!["node-1", "node-2"]);
        assert_eq!(c("taint "), vec!["nodes"]);
        assert_eq!(c("taint nodes node-"), vec!["node-1", "node-2"]);
    }

    #[test]
    fn flags_and_their_values() {
        assert_eq!(c("get pods --w"), vec!["--watch", "--watch-only"]);
        assert_eq!(c("get pods -o "), vec!["json", "name", "wide", "yaml"]);
        assert_eq!(c("get pods --output=w"), vec!["--output=wide"]);
        assert_eq!(c("get pods -n kube-"), vec!["kube-node-lease", "kube-public", "kube-system"]);
        assert_eq!(c("apply -f https://k8s.io/examples/pods/"), vec!["https://k8s.io/examples/pods/simple-pod.yaml"]);
        assert_eq!(c("delete pod x --wa"), vec!["--wait=false"]);
    }

    #[test]
    fn sim_verbs_and_components() {
        let stoppable = c("sim stop ");
        assert_eq!(
            stoppable.iter().filter(|n| !n.contains('/')).collect::<Vec<_>>(),
            vec![
                "etcd",
                "kube-apiserver",
                "kube-controller-manager",
                "kube-proxy-node-1",
                "kube-proxy-node-2",
                "kube-scheduler",
                "kubelet-node-1",
                "kubelet-node-2"
            ]
        );
        assert!(stoppable.contains(&"kube-controller-manager/job-controller".to_string()), "{stoppable:?}");
        assert_eq!(
            c("sim start kube-controller-manager/re"),
            vec!["kube-controller-manager/replicaset-controller", "kube-controller-manager/replicationcontroller-controller"]
        );
        assert_eq!(c("sim watch drop 50 kube-c"), vec!["kube-controller-manager"], "a watch belongs to a process");
        assert_eq!(c("sim restart kubelet"), vec!["kubelet-node-1", "kubelet-node-2"]);
        assert_eq!(c("sim node fail "), vec!["node-1", "node-2"]);
        assert_eq!(c("sim watch drop 50 kube-s"), vec!["kube-scheduler"]);
        assert_eq!(c("sim mode "), vec!["edge", "level"]);
        assert_eq!(c("sim etcd "), vec!["restore", "snapshot", "wipe"]);
    }

    #[test]
    fn complete_line_extends_to_what_is_certain() {
        let s = session();
        assert_eq!(complete_line("kubectl get dep", &s).0, "kubectl get deployments ");
        assert_eq!(complete_line("get pods -o=", &s).0, "get pods -o=");
        assert_eq!(complete_line("sim stop kube-", &s).0, "sim stop kube-");
        assert_eq!(complete_line("sim stop kube-c", &s).0, "sim stop kube-controller-manager", "or one of its loops");
        assert_eq!(complete_line("describe deployment/", &s).0, "describe deployment/web ");
        assert_eq!(complete_line("get pods web-", &s).1.len(), 3);
        assert_eq!(complete_line("nothing matches", &s), ("nothing matches".to_string(), vec![]));
        // Never panics on odd input.
        for line in ["'", "\"open", "get pods -o", "  ", "sim node", "kubectl -n"] {
            let _ = complete_line(line, &s);
        }
    }
}
